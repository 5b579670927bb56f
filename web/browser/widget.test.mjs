// The card widget on a merchant's page (a third origin, under a strict CSP):
// modal, a declined card and a retry, inline with submit(), the HTML mode,
// keyboard-only completion and the Japanese locale. Every payment is
// checked through the API with the store's secret token.

import { describe, test } from "node:test";
import assert from "node:assert/strict";

import {
  CARD_DECLINED,
  CARD_OK,
  EXPIRY,
  alertText,
  fillCard,
  merchantLog,
  screenshot,
  useSuite,
  waitForLog,
  waitWidgetReady,
  widgetFrame,
} from "./harness.mjs";

const s = useSuite();

/** The charge as the API has it (secret token, from Node). */
async function apiCharge(id) {
  assert.match(id ?? "", /^[0-9a-f-]{36}$/, `not a charge id: ${id}`);
  return s.gw.charge(id);
}

/** No CSP violation, no uncaught error, no console error on the merchant page. */
function assertCleanPage(seen, { allowConsoleErrors = [] } = {}) {
  assert.deepEqual(seen.csp, [], `CSP violations on the merchant page: ${JSON.stringify(seen.csp)}`);
  assert.deepEqual(seen.errors, [], "uncaught errors");
  const errors = seen.console.filter((m) => m.type === "error" && !allowConsoleErrors.some((re) => re.test(m.text)));
  assert.deepEqual(errors, [], "console errors");
}

/** The top of the iframe element in the page (after the opening animation). */
async function frameTop(page, handle) {
  await page.waitForFunction(() => document.querySelector("[role=dialog]")?.getAnimations({ subtree: true }).every((a) => a.playState !== "running") ?? true);
  return Math.round((await handle.boundingBox()).y);
}

/**
 * The lines an element's text is laid out on, as the shopper sees them
 * (characters grouped by the top of their box).
 */
async function textLines(frame, selector) {
  return frame.evaluate((sel) => {
    const el = document.querySelector(sel);
    const out = [];
    let top = null;
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      for (let i = 0; i < n.length; i++) {
        const r = document.createRange();
        r.setStart(n, i);
        r.setEnd(n, i + 1);
        const box = r.getClientRects()[0];
        if (!box || !box.width) continue;
        if (top === null || Math.abs(box.top - top) > box.height / 2) {
          out.push("");
          top = box.top;
        }
        out[out.length - 1] += n.data[i];
      }
    }
    return out.map((l) => l.trim()).filter(Boolean);
  }, selector);
}

/** Japanese lines: none starts with closing punctuation; no lone word, split word or split card number. */
function assertJapaneseLines(lines, what) {
  for (const l of lines) {
    assert.ok(!/^[。、）」』ー]/.test(l), `${what}: a line starts with punctuation: ${JSON.stringify(lines)}`);
    assert.ok([...l].length >= 4, `${what}: a (nearly) lone word on a line: ${JSON.stringify(lines)}`);
  }
  for (let i = 1; i < lines.length; i++) {
    assert.ok(!(/\d$/.test(lines[i - 1]) && /^\d/.test(lines[i])), `${what}: a number split over two lines: ${JSON.stringify(lines)}`);
  }
  const all = lines.join("");
  for (const word of ["お問い合わせ", "お試し", "カード会社", "承認", "セキュリティコード", "有効期限", "テストカード"]) {
    if (all.includes(word)) assert.ok(lines.some((l) => l.includes(word)), `${what}: ${word} is split over two lines: ${JSON.stringify(lines)}`);
  }
}

describe("modal", () => {
  test("4000 0200 0000 0000 ends in a successful charge, verified through the API", async () => {
    const { page, frame, seen, handle } = await s.openModal();
    const top0 = await frameTop(page, handle);
    const log0 = await merchantLog(page);
    assert.deepEqual(log0.find((e) => e.kind === "loader")?.value, { same: true }, "UnivapayCheckout is KessaiCheckout");
    assert.ok(log0.some((e) => e.kind === "opened"), "opened() was called");
    await screenshot(page, "01-modal-empty");

    await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
    // The WebAssembly formats as the customer types and shows the brand.
    assert.equal(await frame.inputValue("#kw-number"), "4000 0200 0000 0000");
    assert.match(await frame.inputValue("#kw-exp"), /^12 \/ \d\d$/);
    assert.equal(await frame.getAttribute(".kw-field--number", "data-brand"), "visa");
    await screenshot(page, "02-modal-filled");

    await frame.click("#kw-pay");
    const success = await waitForLog(page, "onSuccess");
    await frame.waitForSelector("#kw-done:not([hidden])");
    await screenshot(page, "03-modal-success");
    // The dialog stays where it was (top-anchored) although it got shorter,
    // and says what happened with nothing left to do: it closes by itself.
    assert.equal(await frameTop(page, handle), top0, "the modal moved when its content changed");
    assert.equal((await frame.textContent("#kw-done-title")).trim(), "Payment complete");
    assert.doesNotMatch(await frame.textContent("#kw-done"), /close|window/i);
    const r = success.value;
    assert.equal(r.status, "successful");
    assert.ok(r.chargeId && r.tokenId, `ids in onSuccess: ${JSON.stringify(r)}`);
    assert.equal(r.response.id, r.chargeId, "result.response is the charge (EC-CUBE reads result.response.id)");

    const log = await merchantLog(page);
    assert.equal(log.find((e) => e.kind === "onTokenCreated")?.value, r.tokenId, "onTokenCreated got the token id");
    assert.ok(log.some((e) => e.kind === "event:success"), "univapay:success was dispatched");
    assert.ok(log.some((e) => e.kind === "event:token-created"), "univapay:token-created was dispatched");

    const charge = await apiCharge(r.chargeId);
    assert.equal(charge.status, "successful");
    assert.equal(charge.charged_amount ?? charge.requested_amount, 1000);
    assert.equal(charge.transaction_token_id, r.tokenId);
    assert.equal(charge.metadata?.order_id, "test-modal", "the merchant's metadata reached the charge");

    // The modal closes itself after a success, and says so.
    await waitForLog(page, "closed", { timeout: 5_000 });
    await page.waitForSelector(`iframe[src^="${s.gw.endpoint}/widget/frame"]`, { state: "detached", timeout: 2_000 });
    assertCleanPage(seen);
  });

  test("a declined card shows the error in the frame; a retry with a good card succeeds", async () => {
    const { page, frame, seen } = await s.openModal({ amount: 1200 });
    await fillCard(frame, { number: CARD_DECLINED, exp: EXPIRY });
    await frame.click("#kw-pay");
    const err = await waitForLog(page, "onError");
    await frame.waitForFunction(() => !document.getElementById("kw-alert").hidden);
    const msg = await alertText(frame);
    assert.match(msg, /declined/i, `the alert: ${msg}`);
    assert.equal(err.value.fatal, false, `onError: ${JSON.stringify(err.value)}`);
    await screenshot(page, "04-modal-declined");

    // Still open, form still there, nothing closed.
    assert.equal(await page.locator(`iframe[src^="${s.gw.endpoint}/widget/frame"]`).count(), 1, "the widget stayed open");
    assert.ok(!(await merchantLog(page)).some((e) => e.kind === "closed"), "closed() was not called");
    assert.equal(await frame.isVisible("#kw-form"), true);
    if (err.value.chargeId) {
      const failed = await apiCharge(err.value.chargeId);
      assert.equal(failed.status, "failed");
    }

    await fillCard(frame, { number: CARD_OK, exp: undefined, cvc: undefined, name: undefined, email: undefined });
    await frame.click("#kw-pay");
    const ok = await waitForLog(page, "onSuccess");
    await frame.waitForSelector("#kw-done:not([hidden])");
    assert.equal(await alertText(frame), "", "the decline message is cleared");
    const charge = await apiCharge(ok.value.chargeId);
    assert.equal(charge.status, "successful");
    assert.equal(charge.requested_amount, 1200);
    assertCleanPage(seen);
  });
});

describe("slow network", () => {
  test("the server-rendered form shows before widget.js has run", async () => {
    const { page, context } = await s.newPage();
    let release;
    const held = new Promise((r) => (release = r));
    await context.route(/\/static\/widget\.js/, async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(s.url("/modal"));
    await page.click("#pay");
    const { handle, frame } = await widgetFrame(page, s.gw.endpoint);
    await frame.waitForSelector("#kw-number", { state: "visible" });
    await page.waitForTimeout(300);
    // No script has run in the frame, yet the form is on screen.
    assert.equal(await frame.evaluate(() => document.documentElement.classList.contains("js")), false, "widget.js ran already");
    const shown = await handle.evaluate((f) => {
      const cs = getComputedStyle(f);
      const r = f.getBoundingClientRect();
      return { opacity: cs.opacity, visibility: cs.visibility, top: document.elementFromPoint(r.left + r.width / 2, r.top + 100) === f };
    });
    assert.deepEqual(shown, { opacity: "1", visibility: "visible", top: true }, "the frame is not shown before ready");
    await screenshot(page, "28-modal-before-script");
    release();
    await waitWidgetReady(frame);
    await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
    await frame.click("#kw-pay");
    await waitForLog(page, "onSuccess");
  });
});

describe("inline", () => {
  test("KessaiCheckout.submit(iframe) resolves with the charge id", async () => {
    const { page, seen } = await s.newPage();
    await page.goto(s.url("/inline", { amount: 1500 }));
    const { frame, handle } = await widgetFrame(page, s.gw.endpoint, { scope: "#card-element" });
    await waitWidgetReady(frame);
    assert.equal(await handle.getAttribute("name"), "univapay-checkout-connector");
    assert.equal(await frame.isHidden("#kw-pay"), true, "inline frames have no pay button of their own");
    // The fields line up with the host page's content: no inset.
    const inset = await frame.evaluate(() =>
      ["kw-email", "kw-number", "kw-name"].map((id) => {
        const r = document.getElementById(id).getBoundingClientRect();
        return [id, Math.round(r.left), Math.round(document.documentElement.clientWidth - r.right)];
      }),
    );
    for (const [id, left, right] of inset) assert.deepEqual([left, right], [0, 0], `#${id} is inset ${left}/${right} px in the inline frame`);
    await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
    await screenshot(page, "05-inline-filled");
    await page.click("#pay");
    const resolved = await waitForLog(page, "submit-resolved");
    const r = resolved.value;
    assert.ok(r.charge, `submit() resolved with ${JSON.stringify(r)}`);
    assert.equal(r.charge, r.chargeId);
    await frame.waitForSelector("#kw-done:not([hidden])");
    await screenshot(page, "06-inline-success");
    const charge = await apiCharge(r.charge);
    assert.equal(charge.status, "successful");
    assert.equal(charge.requested_amount, 1500);
    // The frame grew to fit its content (the loader applies "resize").
    const h = await handle.evaluate((f) => f.getBoundingClientRect().height);
    const content = await frame.evaluate(() => Math.ceil(document.getElementById("kw").getBoundingClientRect().height));
    assert.ok(Math.abs(h - content) <= 2, `iframe height ${h} vs content ${content}`);
    assertCleanPage(seen);
  });
});

describe("HTML mode", () => {
  test("hidden inputs univapayTokenId / univapayChargeId are appended and the form auto-submits", async () => {
    const { page, seen } = await s.newPage();
    const before = s.merchant.submissions.length;
    await page.goto(s.url("/html", { amount: 1800 }));
    const button = page.locator("form#order span[data-app-id] button");
    await button.waitFor();
    await screenshot(page, "07-html-button");
    await button.click();
    const { frame } = await widgetFrame(page, s.gw.endpoint);
    await waitWidgetReady(frame);
    await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
    await Promise.all([page.waitForURL(`${s.merchant.origin}/submit`, { timeout: 20_000 }), frame.click("#kw-pay")]);
    await page.waitForSelector("#received");
    assert.equal(s.merchant.submissions.length, before + 1, "one form submission reached the shop");
    const { fields } = s.merchant.submissions.at(-1);
    assert.equal(fields.orderRef, "A-1003", "the merchant's own fields are submitted too");
    assert.match(fields.univapayTokenId ?? "", /^[0-9a-f-]{36}$/, JSON.stringify(fields));
    assert.match(fields.univapayChargeId ?? "", /^[0-9a-f-]{36}$/, JSON.stringify(fields));
    const charge = await apiCharge(fields.univapayChargeId);
    assert.equal(charge.status, "successful");
    assert.equal(charge.requested_amount, 1800);
    assert.equal(charge.transaction_token_id, fields.univapayTokenId);
    assertCleanPage(seen);
  });
});

describe("keyboard", () => {
  test("keyboard only: Tab, typing and Enter complete a payment", async () => {
    const { page, seen } = await s.newPage();
    await page.goto(s.url("/modal", { amount: 2100 }));
    // Tab to the shop's button, Enter opens the widget.
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.id), "pay", "the first Tab lands on the pay button");
    await page.keyboard.press("Enter");
    const { frame } = await widgetFrame(page, s.gw.endpoint);
    await waitWidgetReady(frame);
    // The loader moves focus into the frame, to the first empty field.
    const active = () => frame.evaluate(() => document.activeElement?.id || document.activeElement?.tagName);
    await frame.waitForFunction(() => document.hasFocus() && document.activeElement?.id?.startsWith("kw-"), null, { timeout: 5_000 });

    const steps = [
      ["kw-email", "buyer@example.com"],
      ["kw-number", CARD_OK],
      ["kw-exp", EXPIRY],
      ["kw-cvc", "123"],
      ["kw-name", "TARO YAMADA"],
    ];
    for (const [id, text] of steps) {
      if (id === "kw-email" && !(await frame.locator("#kw-email").count())) continue;
      // Fields may move focus on by themselves when full; Tab only if not.
      for (let i = 0; i < 3 && (await active()) !== id; i++) await page.keyboard.press("Tab");
      assert.equal(await active(), id, `focus reaches #${id} by keyboard`);
      await page.keyboard.type(text, { delay: 5 });
    }
    await screenshot(page, "08-keyboard-filled");
    await page.keyboard.press("Enter");
    const ok = await waitForLog(page, "onSuccess");
    const charge = await apiCharge(ok.value.chargeId);
    assert.equal(charge.status, "successful");
    assert.equal(charge.requested_amount, 2100);
    // Focus returns to the shop's button when the modal closes.
    await waitForLog(page, "closed", { timeout: 5_000 });
    assert.equal(await page.evaluate(() => document.activeElement?.id), "pay", "focus goes back to the opener");
    assertCleanPage(seen);
  });

  test("Escape closes the modal and Tab stays inside it", async () => {
    const { page, frame } = await s.openModal();
    const ids = [];
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press("Tab");
      ids.push(await frame.evaluate(() => (document.hasFocus() ? document.activeElement?.id || document.activeElement?.tagName : "(outside)")));
    }
    assert.ok(!ids.includes("(outside)"), `focus left the frame: ${ids.join(", ")}`);
    await page.keyboard.press("Escape");
    await waitForLog(page, "closed", { timeout: 5_000 });
  });
});

describe("mobile", () => {
  test("on a phone-sized screen the modal fits the width and inputs are at least 16px", async () => {
    const { page, frame, handle } = await s.openModal({}, { viewport: { width: 375, height: 667 } });
    const sizes = await frame.evaluate(() => Array.from(document.querySelectorAll("input:not([type=hidden])")).map((i) => [i.id, parseFloat(getComputedStyle(i).fontSize)]));
    for (const [id, px] of sizes) assert.ok(px >= 16, `#${id} is ${px}px (iOS zooms below 16px)`);
    await frameTop(page, handle);
    const box = await handle.boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= 375, `the frame overflows the screen: ${JSON.stringify(box)}`);
    // Full-width and full-height on a phone; the overlay scrolls when the form is taller.
    assert.deepEqual([box.x, box.y, box.width], [0, 0, 375], `not full-width: ${JSON.stringify(box)}`);
    assert.ok(box.height >= 667, `shorter than the screen: ${JSON.stringify(box)}`);
    assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector("[role=dialog]").parentElement).overflowY), "auto");
    await screenshot(page, "24-mobile-modal");
  });
});

describe("Japanese", () => {
  test('locale "ja": labels, field errors and a decline in Japanese', async () => {
    const { page, frame } = await s.openModal({ locale: "ja", amount: 2400 });
    assert.equal(await frame.getAttribute("html", "lang"), "ja");
    assert.equal((await frame.textContent("label[for=kw-number]")).trim(), "カード番号");
    assert.equal((await frame.textContent("label[for=kw-exp]")).trim(), "有効期限");
    assert.equal((await frame.textContent("label[for=kw-cvc]")).trim(), "セキュリティコード");
    assert.equal((await frame.textContent("label[for=kw-name]")).trim(), "カード名義人");
    assert.match(await frame.textContent("#kw-pay-label"), /支払う/);

    // A mistyped number (bad check digit), left: a Japanese message.
    await frame.locator("#kw-number").fill("4000020000000001");
    await frame.locator("#kw-exp").focus();
    await frame.waitForFunction(() => document.getElementById("kw-number-err").textContent !== "");
    assert.equal((await frame.textContent("#kw-number-err")).trim(), "カード番号が正しくありません");
    assert.equal(await frame.getAttribute("#kw-number", "aria-invalid"), "true");
    await screenshot(page, "09-ja-field-error");

    await fillCard(frame, { number: CARD_DECLINED, exp: EXPIRY });
    await frame.click("#kw-pay");
    await waitForLog(page, "onError");
    await frame.waitForFunction(() => !document.getElementById("kw-alert").hidden);
    assert.match(await alertText(frame), /カードが承認されませんでした/);
    assertJapaneseLines(await textLines(frame, "#kw-alert"), "the decline");
    assertJapaneseLines(await textLines(frame, ".kw-test"), "the test-mode hint");
    await screenshot(page, "10-ja-declined");

    await fillCard(frame, { number: CARD_OK, exp: undefined, cvc: undefined, name: undefined, email: undefined });
    await frame.click("#kw-pay");
    await frame.waitForSelector("#kw-done:not([hidden])");
    assert.equal((await frame.textContent("#kw-done-title")).trim(), "お支払いが完了しました");
    assert.doesNotMatch(await frame.textContent("#kw-done"), /閉じ/);
    await screenshot(page, "26-ja-success");
  });

  test("on a phone, Japanese messages break between phrases", async () => {
    const { page, frame } = await s.openModal({ locale: "ja", amount: 2500 }, { viewport: { width: 375, height: 667 } });
    const style = await frame.evaluate(() => {
      const cs = getComputedStyle(document.getElementById("kw-alert"));
      return [cs.lineBreak, cs.wordBreak];
    });
    assert.equal(style[0], "strict");
    assert.equal(style[1], "keep-all");
    await fillCard(frame, { number: CARD_DECLINED, exp: EXPIRY });
    await frame.click("#kw-pay");
    await waitForLog(page, "onError");
    await frame.waitForFunction(() => !document.getElementById("kw-alert").hidden);
    const lines = await textLines(frame, "#kw-alert");
    assertJapaneseLines(lines, "the decline");
    assertJapaneseLines(await textLines(frame, ".kw-test"), "the test-mode hint");
    await screenshot(page, "27-ja-mobile-declined");
  });
});
