// The widget with its WebAssembly blocked (every request for widget.wasm
// fails, as a network or server failure would): the frame runs the card
// fields on its plain JavaScript (static/cardrules.js, a port of wasm/card)
// and the core flows still work — the modal pays, the keyboard-only path
// with a decline and a retry, the hosted link form — showing what the
// WebAssembly shows for the same input. With static/cardrules.js blocked
// instead, the fields wait for the WebAssembly's rules and then behave the
// same.

import { test } from "node:test";
import assert from "node:assert/strict";

import { checkVectors, loadVectors } from "./lib/cardvectors.mjs";
import {
  CARD_DECLINED,
  CARD_OK,
  EXPIRY,
  alertText,
  blockWasm,
  fillCard,
  screenshot,
  useSuite,
  waitForLog,
  waitWidgetFallback,
  waitWidgetReady,
  widgetFrame,
} from "./harness.mjs";

const s = useSuite();

/**
 * The merchant's modal page with the widget open; the WebAssembly blocked
 * unless wasm, static/cardrules.js blocked unless rules.
 */
async function openModal({ wasm, rules = true, query = {} }) {
  const p = await s.newPage();
  const blocked = wasm ? null : await blockWasm(p.context);
  if (!rules) await p.context.route(/\/static\/cardrules\.js(\?|$)/, (route) => route.abort("failed"));
  await p.page.goto(s.url("/modal", query));
  await p.page.click("#pay");
  const { frame } = await widgetFrame(p.page, s.gw.endpoint);
  if (wasm) await waitWidgetReady(frame);
  else await waitWidgetFallback(frame);
  if (blocked) assert.ok(blocked.hits >= 1, "the frame asked for the WebAssembly and was refused");
  return { ...p, frame, blocked };
}

// What a shopper may put in the fields, one field at a time, each left
// (blurred) before the next: the mistakes the old fallback judged
// differently from Go among them.
const STEPS = [
  ["number", "4242 4242 4242 4241"], // Luhn
  ["number", "4242 4242 42"], // incomplete
  ["number", "4242x4242 4242 4242"], // a stray letter, dropped while typing
  ["number", "5555 5555 5555 4444 123"], // Mastercard stops at 16
  ["number", "30569309025904"], // Diners Club: 4-6-4
  ["number", "3782 822463 10005"], // American Express: a 4-digit code follows
  ["cvc", "123"], // too short for American Express
  ["number", "4000 0200 0000 0000"], // Visa: now the code is complete
  ["cvc", "1234"], // a Visa code has 3 digits, the 4th is refused
  ["exp", "13"], // no month 13: 01 / 3
  ["exp", "12/2020"], // expired
  ["exp", "00/30"], // no month 0
  ["exp", "１２／３０"], // full-width, from a Japanese input method
  ["name", "Taro２"], // a full-width digit is no letter
  ["name", "𠀋".repeat(40)], // 40 characters in 80 UTF-16 units
  ["name", "A".repeat(65)], // 65 characters
  ["name", "\ufeffTaro"], // U+FEFF is no space to Go
  ["name", "Mary-Jane O’Neil"],
];

/**
 * Plays STEPS, then submits the emptied form; returns what the shopper saw
 * at each step. All in the frame, in one round trip: each step focuses the
 * field, selects what is there and inserts the text as typing or a paste
 * does (an "insertText" input event; maxlength applies), then leaves it.
 */
function playSteps(frame) {
  return frame.evaluate((steps) => {
    const snapshot = (label) => {
      const out = { label, brand: document.querySelector(".kw-field--number").dataset.brand, cvcMax: document.getElementById("kw-cvc").maxLength };
      for (const f of ["number", "exp", "cvc", "name"]) {
        const el = document.getElementById(`kw-${f}`);
        out[f] = { value: el.value, error: document.getElementById(`kw-${f}-err`).textContent, invalid: el.getAttribute("aria-invalid") === "true" };
      }
      return out;
    };
    const put = (el, text) => {
      el.focus();
      el.select();
      if (text) document.execCommand("insertText", false, text);
      else if (el.value) document.execCommand("delete");
    };
    const seen = [];
    for (const [field, text] of steps) {
      const el = document.getElementById(`kw-${field}`);
      put(el, text);
      el.blur();
      seen.push(snapshot(`${field} ${JSON.stringify(text)}`));
    }
    for (const field of ["number", "exp", "cvc", "name", "email"]) {
      const el = document.getElementById(`kw-${field}`);
      if (el) put(el, "");
    }
    document.getElementById("kw-pay").click();
    const done = snapshot("submitted empty");
    done.focused = document.activeElement?.id;
    seen.push(done);
    return seen;
  }, STEPS);
}

test("with the WebAssembly blocked the fields format, judge and word every step as the WebAssembly does", async () => {
  const [withWasm, fallback] = await Promise.all([openModal({ wasm: true }), openModal({ wasm: false })]);
  const expected = await playSteps(withWasm.frame);
  const got = await playSteps(fallback.frame);
  assert.equal(got.length, STEPS.length + 1);
  for (let i = 0; i < expected.length; i++) assert.deepEqual(got[i], expected[i], `step ${expected[i].label}`);
  assert.equal(got.at(-1).focused, "kw-email", "the first field in error takes the focus");
  assert.notEqual(got.at(-1).number.error, "", "an empty number is reported on submit");

  // The steps mean something: they met most messages, and the rules the
  // old fallback got wrong.
  const errors = new Set(got.flatMap((g) => ["number", "exp", "cvc", "name"].map((f) => g[f].error)).filter(Boolean));
  assert.ok(errors.size >= 9, `only ${errors.size} distinct messages: ${[...errors].join(" | ")}`);
  const step = (label) => got.find((g) => g.label === label);
  assert.equal(step(`cvc "1234"`).cvc.value, "123", "a Visa code stops at 3 digits");
  assert.equal(step(`number "30569309025904"`).number.value, "3056 930902 5904");
  assert.equal(step(`number "5555 5555 5555 4444 123"`).number.value, "5555 5555 5555 4444");
  assert.equal(step(`name ${JSON.stringify("𠀋".repeat(40))}`).name.error, "", "40 characters are a name");
  assert.notEqual(step(`name "Taro２"`).name.error, "");
  assert.deepEqual(fallback.seen.errors, [], "uncaught errors");
  await screenshot(fallback.page, "29-fallback-submitted-empty");

  // And the rules themselves, in this browser's engine, on every vector.
  const { card, field } = loadVectors();
  const r = await fallback.frame.evaluate(checkVectors, { card, field, runes: "sparse" });
  assert.deepEqual(r.failures, {}, "the card rules disagree with Go in Chromium");
  assert.ok(r.counts.numbers > 1000 && r.counts.runes > 3000, JSON.stringify(r.counts));
});

test("with the card rules blocked, the fields follow the WebAssembly alone, step for step as they follow the card rules", async () => {
  const [wasmOnly, fallback] = await Promise.all([openModal({ wasm: true, rules: false }), openModal({ wasm: false })]);
  assert.equal(await wasmOnly.frame.evaluate(() => typeof window.KessaiCard), "undefined");
  const expected = await playSteps(fallback.frame);
  const got = await playSteps(wasmOnly.frame);
  assert.equal(got.length, STEPS.length + 1);
  for (let i = 0; i < expected.length; i++) assert.deepEqual(got[i], expected[i], `step ${expected[i].label}`);
  assert.deepEqual(wasmOnly.seen.errors, [], "uncaught errors");
});

test("with the WebAssembly blocked, keyboard only: typing is formatted and moves on, a decline, then a payment", async () => {
  const { page, frame, seen } = await openModal({ wasm: false, query: { amount: 2200 } });
  const active = () => frame.evaluate(() => document.activeElement?.id);
  if (await frame.locator("#kw-email").count()) {
    await frame.locator("#kw-email").focus();
    await page.keyboard.type("buyer@example.com");
  }
  await frame.locator("#kw-number").focus();
  await page.keyboard.type(CARD_DECLINED, { delay: 5 });
  assert.equal(await frame.inputValue("#kw-number"), "4111 1111 1111 1111");
  assert.equal(await frame.getAttribute(".kw-field--number", "data-brand"), "visa");
  assert.equal(await active(), "kw-exp", "a complete number moves on to the expiry");
  await page.keyboard.type(EXPIRY, { delay: 5 });
  assert.match(await frame.inputValue("#kw-exp"), /^12 \/ \d\d$/);
  assert.equal(await active(), "kw-cvc", "a complete expiry moves on to the code");
  await page.keyboard.type("123", { delay: 5 });
  assert.equal(await active(), "kw-name", "a complete Visa code (3 digits) moves on to the name");
  await page.keyboard.type("TARO YAMADA", { delay: 5 });
  await page.keyboard.press("Enter");
  const err = await waitForLog(page, "onError");
  await frame.waitForFunction(() => !document.getElementById("kw-alert").hidden);
  assert.match(await alertText(frame), /declined/i);
  assert.equal(err.value.fatal, false);

  // The card number is selected after a decline: typing replaces it.
  await frame.waitForFunction(() => document.activeElement?.id === "kw-number");
  await page.keyboard.type(CARD_OK, { delay: 5 });
  assert.equal(await frame.inputValue("#kw-number"), "4000 0200 0000 0000");
  await frame.locator("#kw-name").focus();
  await page.keyboard.press("Enter");
  const ok = await waitForLog(page, "onSuccess");
  const charge = await s.gw.charge(ok.value.chargeId);
  assert.equal(charge.status, "successful");
  assert.equal(charge.requested_amount, 2200);
  assert.deepEqual(seen.errors, [], "uncaught errors");
});

test("with the WebAssembly blocked, the hosted link form pays and returns to the shop", async () => {
  const { page, context, seen } = await s.newPage();
  const blocked = await blockWasm(context);
  const u = new URL("/forms/test", s.gw.endpoint);
  for (const [k, v] of Object.entries({ appId: s.appId, currency: "JPY", amount: "3400", successRedirectUrl: `${s.merchant.origin}/done`, autoRedirect: "true" })) {
    u.searchParams.set(k, v);
  }
  await page.goto(u.href);
  const { frame } = await widgetFrame(page, s.gw.endpoint, { scope: "#lf-frame" });
  await waitWidgetFallback(frame);
  assert.ok(blocked.hits >= 1, "the WebAssembly was asked for and refused");
  await page.waitForSelector("#lf-pay:not([disabled])");

  // A mistake is caught before anything is sent, in the same words.
  await fillCard(frame, { number: "4000 0200 0000 0001", exp: EXPIRY });
  await page.click("#lf-pay");
  await frame.waitForFunction(() => document.getElementById("kw-number-err").textContent !== "");
  assert.equal(await frame.textContent("#kw-number-err"), "The card number is not valid.");
  assert.ok(!seen.requests.some((r) => r.url.endsWith("/tokens")), "nothing was sent");

  await fillCard(frame, { number: CARD_OK, exp: undefined, cvc: undefined, name: undefined, email: undefined });
  await Promise.all([page.waitForURL(`${s.merchant.origin}/done**`, { timeout: 20_000 }), page.click("#lf-pay")]);
  const chargeId = new URL(page.url()).searchParams.get("univapayChargeId");
  const charge = await s.gw.charge(chargeId);
  assert.equal(charge.status, "successful");
  assert.equal(charge.requested_amount, 3400);
  assert.deepEqual(seen.errors, [], "uncaught errors");
});

test("without the WebAssembly and the card rules the frame says the connection failed and sends nothing", async () => {
  const { page, context, seen } = await s.newPage();
  await blockWasm(context);
  await context.route(/\/static\/cardrules\.js(\?|$)/, (route) => route.abort("failed"));
  await page.goto(s.url("/modal"));
  await page.click("#pay");
  const { frame } = await widgetFrame(page, s.gw.endpoint);
  await waitWidgetReady(frame, { wasm: false });
  await frame.waitForFunction(() => document.documentElement.dataset.wasm === "failed");
  assert.equal(await frame.evaluate(() => typeof window.KessaiCard), "undefined");
  await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
  await frame.click("#kw-pay");
  const err = await waitForLog(page, "onError");
  assert.equal(err.value.code, "NETWORK_ERROR");
  assert.equal(err.value.fatal, false);
  assert.notEqual(await alertText(frame), "");
  assert.equal(await alertText(frame), err.value.error?.message);
  assert.ok(!seen.requests.some((r) => r.url.endsWith("/tokens")), "no token was asked for");
});
