// The widget's plain-JavaScript card rules (static/cardrules.js), which
// run until the Go WebAssembly is ready and whenever it cannot run, held to
// the Go rules: every vector wasm/card and wasm/widget/field write from Go
// must get the same answer here. No browser: the script runs in Node as a
// classic script in a global of its own, as a page would run it.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import vm from "node:vm";

import { RULES_FILE, checkVectors, loadCardRules, loadVectors } from "./lib/cardvectors.mjs";

const K = loadCardRules();
const { card, field } = loadVectors();
const result = checkVectors({ K, card, field, runes: "dense" });

// How many checks each section must make: a vectors file that lost a
// section, or a checker that skips one, fails here rather than passing
// with nothing checked.
const expected = {
  brands: card.brands.length * 44,
  numbers: card.numbers.length * 6,
  formatCaret: card.formatCaret.length,
  digitIndex: card.digitIndex.length,
  cvv: card.cvv.reduce((n, v) => n + Object.keys(v.states).length, 0),
  cardholder: card.cardholder.length,
  expiry: card.expiry.length * (1 + card.nows.length),
  validExpiry: card.validExpiry.length,
  normalizeYear: card.normalizeYear.length,
  formatExpiry: field.formatExpiry.length * 2,
  caretAfterDigits: field.caretAfterDigits.length,
  messageKey: field.messageKey.length,
  phone: field.phone.length,
  fieldBrands: field.brands.length * 43,
};

describe("the JavaScript card rules answer as the Go rules on every vector", () => {
  for (const [section, n] of Object.entries(expected)) {
    test(`${section} (${n} checks)`, () => {
      assert.ok(n > 0, `no ${section} vectors`);
      assert.equal(result.counts[section], n, `${section}: checks made`);
      const f = result.failures[section] || [];
      assert.deepEqual(f.slice(0, 25), [], `${f.length} of ${n} ${section} checks disagree with Go`);
    });
  }

  test("every code point, in a number, a name, an expiry and a security code", (t) => {
    const ranges = card.runeRanges;
    assert.ok(ranges.length > 1000 && ranges[0][0] === 0 && ranges.at(-1)[1] === 0x10ffff, "the ranges cover Unicode");
    assert.ok(result.counts.runes > 90_000, `${result.counts.runes} code points checked`);
    const f = result.failures.runes || [];
    assert.deepEqual(f.slice(0, 25), [], `${f.length} code points are treated differently from Go`);
    // Characters encoded after Go's Unicode version may be letters here
    // (the engine's tables are newer) and not to Go: the server refuses
    // what the widget let through, and says so on the field.
    t.diagnostic(`Go knows Unicode ${card.unicode}; ${result.newer} newer code points checked may differ`);
  });
});

/** The Go answer for an input of a section, which must be among the vectors. */
function vector(section, input, list = card[section]) {
  const v = list.find((x) => x.in === input);
  assert.ok(v, `${JSON.stringify(input)} is not among the ${section} vectors`);
  return v;
}

describe("the fallback's old disagreements with Go are among the vectors", () => {
  test("Visa takes a 3-digit security code, not 4; American Express 4", () => {
    for (const [cvv, brand, want] of [
      ["1234", "visa", "INVALID_CVV"],
      ["123", "visa", ""],
      ["1234", "american_express", ""],
      ["123", "american_express", "INCOMPLETE_CVV"],
      ["1234", "unknown", ""],
    ]) {
      assert.equal(vector("cvv", cvv).states[brand], want, `Go: ${cvv} for ${brand}`);
      assert.equal(K.cvvState(cvv, brand), want, `${cvv} for ${brand}`);
    }
    assert.equal(K.cvvMax(K.detectBrand("4242")), 3, "the Visa field stops at 3 digits");
  });

  test("a name is counted in characters, not UTF-16 units", () => {
    const wide = "𠀋"; // one character, two UTF-16 units
    for (const [name, want] of [
      [wide.repeat(33), ""],
      [wide.repeat(64), ""],
      [wide.repeat(65), "INVALID_FORMAT"],
      ["A".repeat(64), ""],
      ["A".repeat(65), "INVALID_FORMAT"],
      ["e\u0301".repeat(32), ""],
    ]) {
      assert.equal(vector("cardholder", name).state, want, `Go: ${name.length} units`);
      assert.equal(K.cardholderState(name), want, `${[...name].length} characters in ${name.length} units`);
    }
  });

  test("full-width digits are digits in numbers and codes, and not letters in names", () => {
    assert.equal(vector("numbers", "４２４２４２４２４２４２４２４２").state, "");
    assert.equal(K.numberState("４２４２４２４２４２４２４２４２"), "");
    assert.equal(K.cvvState("１２３", "visa"), "");
    assert.equal(vector("cardholder", "Taro２").state, "INVALID_FORMAT");
    assert.equal(K.cardholderState("Taro２"), "INVALID_FORMAT");
    // Other scripts' digits are neither card digits nor letters.
    assert.equal(K.numberState("٤٢٤٢٤٢٤٢٤٢٤٢٤٢٤٢"), vector("numbers", "٤٢٤٢٤٢٤٢٤٢٤٢٤٢٤٢").state);
    assert.equal(K.numberState("٤٢٤٢٤٢٤٢٤٢٤٢٤٢٤٢"), "INVALID_CARD_NUMBER");
  });

  test("a letter in a number makes it invalid rather than being dropped", () => {
    assert.equal(vector("numbers", "4242 4242 4242 4242x").state, "INVALID_CARD_NUMBER");
    assert.equal(K.numberState("4242 4242 4242 4242x"), "INVALID_CARD_NUMBER");
  });

  test("white space is Go's: U+0085 is space, U+FEFF is not", () => {
    assert.equal(vector("cardholder", "\u0085Taro\u0085").state, "");
    assert.equal(K.cardholderState("\u0085Taro\u0085"), "");
    assert.equal(vector("cardholder", "\ufeffTaro").state, "INVALID_FORMAT");
    assert.equal(K.cardholderState("\ufeffTaro"), "INVALID_FORMAT");
    assert.equal(K.cvvState("\ufeff123", "visa"), vector("cvv", "\ufeff123").states.visa);
  });
});

describe("what only JavaScript strings can hold", () => {
  test("a lone surrogate is U+FFFD, as Go receives it", () => {
    for (const s of ["\ud800", "\udc00", "Taro\ud83d", "\ude00Taro", "4242\ud8004242"]) {
      const fffd = s.replace(/[\ud800-\udfff]/g, "\ufffd");
      assert.equal(K.cardholderState(s), K.cardholderState(fffd), `cardholder ${JSON.stringify(s)}`);
      assert.equal(K.numberState(s), K.numberState(fffd), `number ${JSON.stringify(s)}`);
      assert.equal(K.expiryState(s, new Date()), K.expiryState(fffd, new Date()), `expiry ${JSON.stringify(s)}`);
      assert.equal(K.cvvState(s, "visa"), K.cvvState(fffd, "visa"), `cvv ${JSON.stringify(s)}`);
      for (let c = 0; c <= s.length; c++) assert.equal(K.digitIndex(s, c), K.digitIndex(fffd, c), `digitIndex ${JSON.stringify(s)} ${c}`);
    }
    assert.equal(K.cardholderState("Taro\ud83d"), "INVALID_FORMAT");
  });

  test("a megabyte pasted into each field is answered at once", () => {
    const big = 1 << 20;
    const started = performance.now();
    assert.equal(K.numberState("4".repeat(big)), "INVALID_CARD_NUMBER");
    const formatted = K.format("4".repeat(big));
    assert.ok(formatted.startsWith("4444 4444 4444 4444 444 4444 ") && !formatted.endsWith(" "), "grouped");
    assert.equal(K.digits(formatted).length, big, "no digit lost");
    assert.equal(K.clamp("4".repeat(big)), "4".repeat(19));
    assert.equal(K.cardholderState("A".repeat(big)), "INVALID_FORMAT");
    assert.equal(K.cardholderState(" ".repeat(big) + "A" + " ".repeat(big)), "");
    assert.equal(K.expiryState("1/".repeat(big / 2), new Date()), "INVALID_CARD_EXPIRATION");
    assert.equal(K.cvvState("1".repeat(big), "visa"), "INVALID_CVV");
    assert.equal(K.formatExpiry("1".repeat(big), false), "11 / 11");
    const ms = performance.now() - started;
    // Linear work takes well under a second; a rule that went quadratic
    // would take hours.
    assert.ok(ms < 10_000, `took ${Math.round(ms)} ms`);
  });
});

test("the script needs no DOM and defines KessaiCard only", () => {
  const sandbox = vm.createContext({});
  vm.runInContext(readFileSync(RULES_FILE, "utf8"), sandbox);
  assert.deepEqual(Object.keys(sandbox), ["KessaiCard"]);
  assert.equal(typeof sandbox.KessaiCard.numberState, "function");
});
