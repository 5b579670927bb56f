// The widget's plain-JavaScript card rules (static/cardrules.js) against
// what the Go rules answer (the vectors wasm/card and wasm/widget/field
// write from Go). Used by cardrules.test.mjs in Node, and by the fallback
// browser test inside the real frame, in Chromium.

import { readFileSync } from "node:fs";
import vm from "node:vm";

const ROOT = new URL("../../../", import.meta.url);

export const RULES_FILE = new URL("static/cardrules.js", ROOT);
export const CARD_VECTORS = new URL("wasm/card/testdata/vectors.json", ROOT);
export const FIELD_VECTORS = new URL("wasm/widget/field/testdata/vectors.json", ROOT);

/**
 * Runs static/cardrules.js as a browser would, as a classic script in a
 * global of its own (no DOM), and returns the KessaiCard it defines.
 */
export function loadCardRules(source = readFileSync(RULES_FILE, "utf8")) {
  const sandbox = vm.createContext({});
  vm.runInContext(source, sandbox, { filename: "static/cardrules.js" });
  return sandbox.KessaiCard;
}

export function loadVectors() {
  return {
    card: JSON.parse(readFileSync(CARD_VECTORS, "utf8")),
    field: JSON.parse(readFileSync(FIELD_VECTORS, "utf8")),
  };
}

/**
 * Checks KessaiCard `K` (by default the global one, as in the widget frame)
 * against the vectors. Self-contained, with one argument, so that it can be
 * sent to a page as it is: frame.evaluate(checkVectors, { card, field }).
 *
 * runes: "dense" checks every code point of the rune ranges up to 4,096
 * long and every 31st (and the last) of the longer ones, which are
 * unassigned planes, private use and the big CJK and Hangul blocks, each
 * one class to Go; "sparse" checks the ends and the middle of each range.
 *
 * Returns { counts: {section: checks}, failures: {section: [text]},
 * newer: code points where the engine's newer Unicode tables classify a
 * character Go's tables do not know }.
 */
export function checkVectors({ card, field, runes = "dense", K = globalThis.KessaiCard }) {
  const counts = {};
  const failures = {};
  let newer = 0;
  const show = (v) => {
    const s = JSON.stringify(v);
    return s.length > 90 ? `${s.slice(0, 60)}…(${s.length} chars)` : s;
  };
  const check = (section, what, got, want) => {
    counts[section] = (counts[section] || 0) + 1;
    if (got === want) return;
    (failures[section] ||= []).push(`${what}: got ${show(got)}, want ${show(want)}`);
  };
  const nows = card.nows.map(([y, m, d]) => new Date(y, m - 1, d, 12));

  for (const b of card.brands) {
    for (let n = 0; n <= 40; n++) check("brands", `validLength(${b.brand}, ${n})`, K.validLength(b.brand, n), b.lengths.includes(n));
    check("brands", `minLength(${b.brand})`, K.minLength(b.brand), b.min);
    check("brands", `maxLength(${b.brand})`, K.maxLength(b.brand), b.max);
    check("brands", `cvvLength(${b.brand})`, K.cvvLength(b.brand), b.cvv);
  }
  for (const v of card.numbers) {
    const i = show(v.in);
    check("numbers", `digits(${i})`, K.digits(v.in), v.digits);
    check("numbers", `luhn(${i})`, K.luhn(v.in), v.luhn);
    check("numbers", `detectBrand(${i})`, K.detectBrand(v.in), v.brand);
    check("numbers", `numberState(${i})`, K.numberState(v.in), v.state);
    check("numbers", `clamp(${i})`, K.clamp(v.in), v.clamp);
    check("numbers", `format(${i})`, K.format(v.in), v.format);
  }
  for (const v of card.formatCaret) {
    check("formatCaret", `formatCaret(${show(v.number)}, ${v.index})`, K.formatCaret(v.number, v.index), v.want);
  }
  for (const v of card.digitIndex) {
    check("digitIndex", `digitIndex(${show(v.in)}, ${v.caret})`, K.digitIndex(v.in, v.caret), v.want);
  }
  for (const v of card.cvv) {
    for (const [brand, want] of Object.entries(v.states)) check("cvv", `cvvState(${show(v.in)}, ${brand})`, K.cvvState(v.in, brand), want);
  }
  for (const v of card.cardholder) {
    check("cardholder", `cardholderState(${show(v.in)})`, K.cardholderState(v.in), v.state);
  }
  for (const v of card.expiry) {
    const p = K.parseExpiry(v.in);
    check("expiry", `parseExpiry(${show(v.in)})`, p ? `${p.month}/${p.year}` : "0/0", `${v.month}/${v.year}`);
    v.states.forEach((want, k) => check("expiry", `expiryState(${show(v.in)}) on ${card.nows[k].join("-")}`, K.expiryState(v.in, nows[k]), want));
  }
  for (const v of card.validExpiry) {
    check("validExpiry", `validExpiry(${v.month}, ${v.year}) on ${card.nows[v.now].join("-")}`, K.validExpiry(v.month, v.year, nows[v.now]), v.want);
  }
  for (const v of card.normalizeYear) check("normalizeYear", `normalizeYear(${v.in})`, K.normalizeYear(v.in), v.want);

  // Every code point, as a number's last character, a name, a name's
  // middle, an expiry's separator and a security code's first character.
  const classOf = (c) => ({
    digit: K.digits(c),
    inNumber: K.numberState("4242424242424242" + c),
    name: K.cardholderState(c),
    inside: K.cardholderState("A" + c + "A"),
    inExpiry: K.expiryState("12" + c + "30", nows[0]),
    leadCVV: K.cvvState(c + "123", "visa"),
  });
  const keys = ["digit", "inNumber", "name", "inside", "inExpiry", "leadCVV"];
  for (const [lo, hi, k] of card.runeRanges) {
    const want = card.runeClasses[k];
    const step = runes === "dense" ? (hi - lo < 4096 ? 1 : 31) : Math.max(1, Math.floor((hi - lo) / 2));
    const points = [];
    for (let r = lo; r < hi; r += step) points.push(r);
    points.push(hi);
    for (const r of points) {
      const got = classOf(String.fromCodePoint(r));
      counts.runes = (counts.runes || 0) + 1;
      const diff = keys.filter((key) => got[key] !== want[key]);
      if (!diff.length) continue;
      if (!want.assigned) {
        newer++; // a character from after Go's Unicode version
        continue;
      }
      (failures.runes ||= []).push(`U+${r.toString(16).toUpperCase().padStart(4, "0")}: ${diff.map((key) => `${key} got ${show(got[key])}, want ${show(want[key])}`).join("; ")}`);
    }
  }

  for (const v of field.formatExpiry) {
    check("formatExpiry", `formatExpiry(${show(v.in)}, false)`, K.formatExpiry(v.in, false), v.typing);
    check("formatExpiry", `formatExpiry(${show(v.in)}, true)`, K.formatExpiry(v.in, true), v.deleting);
  }
  for (const v of field.caretAfterDigits) {
    check("caretAfterDigits", `caretAfterDigits(${show(v.in)}, ${v.k})`, K.caretAfterDigits(v.in, v.k), v.want);
  }
  for (const v of field.messageKey) {
    check("messageKey", `messageKey(${v.field}, ${show(v.state)})`, K.messageKey(v.field, v.state), v.want);
  }
  for (const v of field.phone) {
    const p = K.japanesePhone(v.in);
    check("phone", `japanesePhone(${show(v.in)})`, `${p.local}|${p.state}`, `${v.local}|${v.state}`);
  }
  for (const b of field.brands) {
    check("fieldBrands", `cvvMax(${b.brand})`, K.cvvMax(b.brand), b.cvvMax);
    check("fieldBrands", `known(${b.brand})`, K.known(b.brand), b.known);
    for (let n = 0; n <= 40; n++) check("fieldBrands", `autoAdvance(${b.brand}, ${n})`, K.autoAdvance(b.brand, n), b.advance.includes(n));
  }
  return { counts, failures, newer };
}
