// Payments the shopper approves away from the card form, on the sandbox's
// pages (the gateway's /sandbox/3ds/… and /sandbox/wallet/…): a 3-D Secure
// challenge inside the modal (completed, failed and retried), PayPay paid on
// the wallet page in a second tab while the modal waits, a wallet payment
// refused there, the hosted link form's challenge in the whole tab ending on
// the merchant's success URL, and PayPay on the demo storefront. Every
// outcome is checked through the API with the store's secret token.

import { describe, test } from "node:test";
import assert from "node:assert/strict";

import {
  CARD_CHALLENGE,
  CARD_CHALLENGE_DECLINED,
  CARD_OK,
  CHALLENGE_CODE,
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

/** The issuer's challenge page inside the widget frame, once it shows. */
async function challengeFrame(frame) {
  await frame.waitForSelector("#kw-3ds:not([hidden])", { timeout: 15_000 });
  const handle = await frame.waitForSelector("#kw-acs");
  const until = Date.now() + 15_000;
  for (;;) {
    const acs = await handle.contentFrame();
    if (acs && acs.url().includes("/sandbox/3ds/")) {
      await acs.waitForSelector("input[name=code]");
      return acs;
    }
    if (Date.now() > until) throw new Error(`no challenge page in the frame: ${acs?.url()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Types a one-time code on the challenge page and submits it. */
async function answer(acs, code) {
  await acs.locator("input[name=code]").fill(code);
  await Promise.all([acs.waitForNavigation(), acs.locator("form:has(input[name=code]) button[type=submit]").click()]);
}

/** No CSP violation, no uncaught error on the merchant page. */
function assertClean(seen) {
  assert.deepEqual(seen.csp, [], `CSP violations on the merchant page: ${JSON.stringify(seen.csp)}`);
  assert.deepEqual(seen.errors, [], "uncaught errors");
}

describe("3-D Secure in the modal", () => {
  test(`a challenge card (${CARD_CHALLENGE}) completed with ${CHALLENGE_CODE} ends in a successful charge`, async () => {
    const { page, frame, seen } = await s.openModal({ amount: 2600 });
    await fillCard(frame, { number: CARD_CHALLENGE, exp: EXPIRY });
    await frame.click("#kw-pay");
    const acs = await challengeFrame(frame);
    // The issuer's page is inside the frame, on the gateway's origin; the
    // merchant's page stays where it was.
    assert.ok(acs.url().startsWith(`${s.gw.endpoint}/sandbox/3ds/`), acs.url());
    assert.equal(await frame.isHidden("#kw-form"), true, "the card form gives way to the challenge");
    assert.ok(page.url().startsWith(s.merchant.origin), "the merchant's page did not move");
    await screenshot(page, "30-modal-3ds-challenge");

    await answer(acs, CHALLENGE_CODE);
    const ok = await waitForLog(page, "onSuccess", { timeout: 20_000 });
    await frame.waitForSelector("#kw-done:not([hidden])");
    await screenshot(page, "31-modal-3ds-done");
    const charge = await s.gw.charge(ok.value.chargeId);
    assert.equal(charge.status, "successful");
    assert.equal(charge.requested_amount, 2600);
    assert.equal(charge.three_ds?.status, "successful", JSON.stringify(charge.three_ds));
    assert.equal(charge.three_ds?.mode, "normal");
    assertClean(seen);
  });

  test("three wrong codes fail the payment; the error shows in the form and another card pays", async () => {
    const { page, frame, seen } = await s.openModal({ amount: 2700 });
    await fillCard(frame, { number: CARD_CHALLENGE, exp: EXPIRY });
    await frame.click("#kw-pay");
    const acs = await challengeFrame(frame);
    for (const code of ["111111", "222222"]) {
      await answer(acs, code);
      await acs.waitForSelector("input[name=code]"); // the challenge again, with fewer tries
    }
    await screenshot(page, "32-modal-3ds-wrong-code");
    await answer(acs, "333333");
    const err = await waitForLog(page, "onError", { timeout: 20_000 });
    assert.equal(err.value.code, 358, JSON.stringify(err.value));
    assert.equal(err.value.fatal, false);
    await frame.waitForSelector("#kw-form:not([hidden])");
    assert.equal(await frame.isHidden("#kw-3ds"), true, "the challenge is gone");
    assert.match(await alertText(frame), /3-D Secure/);
    await screenshot(page, "33-modal-3ds-failed");
    const failed = await s.gw.charge(err.value.chargeId);
    assert.equal(failed.status, "failed");
    assert.equal(failed.error?.code, 358);

    // Retry with a card that needs no challenge: the same modal pays.
    await fillCard(frame, { number: CARD_OK, exp: undefined, cvc: undefined, name: undefined, email: undefined });
    await frame.click("#kw-pay");
    const ok = await waitForLog(page, "onSuccess", { timeout: 20_000 });
    assert.equal(await alertText(frame), "", "the 3-D Secure message is cleared");
    const charge = await s.gw.charge(ok.value.chargeId);
    assert.equal(charge.status, "successful");
    assert.equal(charge.requested_amount, 2700);
    assertClean(seen);
  });

  test(`a card declined after its challenge (${CARD_CHALLENGE_DECLINED}) says it was declined`, async () => {
    const { page, frame } = await s.openModal({ amount: 2800 });
    await fillCard(frame, { number: CARD_CHALLENGE_DECLINED, exp: EXPIRY });
    await frame.click("#kw-pay");
    await answer(await challengeFrame(frame), CHALLENGE_CODE);
    const err = await waitForLog(page, "onError", { timeout: 20_000 });
    assert.equal(err.value.code, 359, JSON.stringify(err.value));
    await frame.waitForSelector("#kw-form:not([hidden])");
    assert.match(await alertText(frame), /declined/i);
  });
});

/** Opens the modal offering PayPay and chooses it; returns what the wallet step shows. */
async function choosePayPay(query = {}) {
  const m = await s.openModal({ paymentTypes: "card,pay_pay_online", ...query });
  await m.frame.click(".kw-wallet[data-brand=pay_pay_online]");
  await m.frame.waitForSelector("#kw-wallet:not([hidden])", { timeout: 15_000 });
  const link = await m.frame.getAttribute("#kw-open", "href");
  assert.ok(link.startsWith(`${s.gw.endpoint}/sandbox/wallet/`), link);
  assert.equal(await m.frame.getAttribute("#kw-open", "target"), "_blank");
  assert.match((await m.frame.getAttribute("#kw-open", "rel")) ?? "", /noopener/);
  assert.equal(await m.frame.getAttribute("#kw-qr", "src"), `${link}/qr.png`);
  await m.frame.waitForFunction(() => {
    const img = document.getElementById("kw-qr");
    return img.complete && img.naturalWidth > 0;
  });
  return { ...m, link };
}

/** The wallet page at link, in a second tab of the same browser. */
async function walletTab(context, link) {
  const tab = await context.newPage();
  await tab.goto(link);
  await tab.waitForSelector("button[value=pay]");
  return tab;
}

describe("wallets in the modal", () => {
  test("PayPay: the modal shows the QR code and a link; paid in a second tab, onSuccess has the charge", async () => {
    const { page, frame, context, link, seen } = await choosePayPay({ amount: 3100 });
    assert.match(await frame.textContent("#kw-wallet-title"), /PayPay/);
    await screenshot(page, "34-modal-paypay-qr");

    const tab = await walletTab(context, link);
    await screenshot(tab, "35-paypay-page");
    await tab.click("button[value=pay]");
    const ok = await waitForLog(page, "onSuccess", { timeout: 20_000 });
    await frame.waitForSelector("#kw-done:not([hidden])");
    await screenshot(page, "36-modal-paypay-paid");
    const r = ok.value;
    assert.equal(r.status, "successful");
    assert.equal(r.response.id, r.chargeId);
    const charge = await s.gw.charge(r.chargeId);
    assert.equal(charge.status, "successful");
    assert.equal(charge.requested_amount, 3100);
    const token = await s.gw.api("GET", `/stores/${s.gw.credentials.store_id}/tokens/${r.tokenId}`);
    assert.equal(token.payment_type, "online");
    assert.equal(token.data?.brand, "pay_pay_online");
    assertClean(seen);
  });

  test("refused on the wallet page: the reason shows in the form, and choosing again starts a new payment", async () => {
    const { page, frame, context, link } = await choosePayPay({ amount: 3200 });
    const tab = await walletTab(context, link);
    await tab.click("button[value=fail]");
    const err = await waitForLog(page, "onError", { timeout: 20_000 });
    assert.equal(err.value.code, 340, JSON.stringify(err.value));
    await frame.waitForSelector("#kw-methods:not([hidden])");
    assert.match(await alertText(frame), /declined in the app/);
    assert.equal(await frame.isHidden("#kw-wallet"), true);
    await screenshot(page, "37-modal-paypay-refused");
    assert.equal((await s.gw.charge(err.value.chargeId)).error?.code, 340);

    // Choose again: a new token and charge, a new page.
    await frame.click(".kw-wallet[data-brand=pay_pay_online]");
    await frame.waitForSelector("#kw-wallet:not([hidden])", { timeout: 15_000 });
    const again = await frame.getAttribute("#kw-open", "href");
    assert.notEqual(again, link, "the second payment has a page of its own");
    const tab2 = await walletTab(context, again);
    await tab2.click("button[value=pay]");
    const ok = await waitForLog(page, "onSuccess", { timeout: 20_000 });
    assert.notEqual(ok.value.chargeId, err.value.chargeId);
    assert.equal((await s.gw.charge(ok.value.chargeId)).status, "successful");
  });

  test('"Let it expire" on the wallet page: the payment ran out of time, said in the form', async () => {
    const { page, frame, context, link } = await choosePayPay({ amount: 3300 });
    const tab = await walletTab(context, link);
    await tab.click("button[value=expire]");
    const err = await waitForLog(page, "onError", { timeout: 20_000 });
    assert.equal(err.value.code, 327, JSON.stringify(err.value));
    assert.match(await alertText(frame), /time to pay has run out/);
  });

  test("choosing another way to pay cancels the wallet page's payment; the card then pays", async () => {
    const { page, frame, context, link } = await choosePayPay({ amount: 3400 });
    await frame.click("#kw-back");
    await frame.waitForSelector("#kw-form:not([hidden])");
    assert.equal(await frame.isHidden("#kw-wallet"), true);
    // The page left behind can no longer take the money.
    const tab = await context.newPage();
    await tab.goto(link);
    await tab.waitForFunction(() => !document.querySelector("button[value=pay]"), null, { timeout: 10_000 });
    await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
    await frame.click("#kw-pay");
    const ok = await waitForLog(page, "onSuccess", { timeout: 20_000 });
    assert.equal((await s.gw.charge(ok.value.chargeId)).status, "successful");
    assert.ok(!(await merchantLog(page)).some((e) => e.kind === "onError"), "no error was reported");
  });
});

describe("hosted link form", () => {
  test("3-D Secure in the whole tab ends on the merchant's success URL, verified through the API", async () => {
    const { page, seen } = await s.newPage();
    const u = new URL("/forms/tds", s.gw.endpoint);
    for (const [k, v] of Object.entries({
      appId: s.appId,
      amount: "3500",
      currency: "JPY",
      order_id: "ORDER-3DS",
      successRedirectUrl: `${s.merchant.origin}/done?shop=3ds`,
      failureRedirectUrl: `${s.merchant.origin}/failed`,
      autoRedirect: "true",
    }))
      u.searchParams.set(k, v);
    await page.goto(u.href);
    const { frame } = await widgetFrame(page, s.gw.endpoint, { scope: "#lf-frame" });
    await waitWidgetReady(frame);
    await fillCard(frame, { number: CARD_CHALLENGE, exp: EXPIRY });
    await page.waitForSelector("#lf-pay:not([disabled])");
    await Promise.all([page.waitForURL(`${s.gw.endpoint}/sandbox/3ds/**`, { timeout: 20_000 }), page.click("#lf-pay")]);
    await page.waitForSelector("input[name=code]");
    await screenshot(page, "38-linkform-3ds-page");
    await page.locator("input[name=code]").fill(CHALLENGE_CODE);
    await Promise.all([
      page.waitForURL(`${s.merchant.origin}/done**`, { timeout: 20_000 }),
      page.locator("form:has(input[name=code]) button[type=submit]").click(),
    ]);
    await page.waitForSelector("#returned");
    await screenshot(page, "39-linkform-3ds-returned");
    const back = new URL(page.url());
    assert.equal(back.searchParams.get("shop"), "3ds");
    const chargeId = back.searchParams.get("univapayChargeId");
    const charge = await s.gw.charge(chargeId);
    assert.equal(charge.status, "successful");
    assert.equal(charge.requested_amount, 3500);
    assert.equal(charge.metadata?.order_id, "ORDER-3DS");
    assert.equal(charge.three_ds?.status, "successful");
    assert.equal(charge.transaction_token_id, back.searchParams.get("univapayTokenId"));
    assert.deepEqual(seen.errors, [], "uncaught errors");
  });
});

describe("hosted link form with PayPay", () => {
  test("the form shows the QR code and a link; paid in a second tab, the form ends on the success URL", async () => {
    const { page, context, seen } = await s.newPage();
    const u = new URL("/forms/wallet", s.gw.endpoint);
    for (const [k, v] of Object.entries({
      appId: s.appId,
      amount: "3600",
      currency: "JPY",
      order_id: "ORDER-PAYPAY",
      paymentTypes: "card,pay_pay_online",
      successRedirectUrl: `${s.merchant.origin}/done?shop=paypay`,
      autoRedirect: "true",
    }))
      u.searchParams.set(k, v);
    await page.goto(u.href);
    const { frame } = await widgetFrame(page, s.gw.endpoint, { scope: "#lf-frame" });
    await frame.click(".kw-wallet[data-brand=pay_pay_online]");
    await frame.waitForSelector("#kw-wallet:not([hidden])", { timeout: 15_000 });
    await screenshot(page, "43-linkform-paypay-qr");
    const tab = await walletTab(context, await frame.getAttribute("#kw-open", "href"));
    await Promise.all([page.waitForURL(`${s.merchant.origin}/done**`, { timeout: 20_000 }), tab.click("button[value=pay]")]);
    const back = new URL(page.url());
    assert.equal(back.searchParams.get("shop"), "paypay");
    const charge = await s.gw.charge(back.searchParams.get("univapayChargeId"));
    assert.equal(charge.status, "successful");
    assert.equal(charge.requested_amount, 3600);
    assert.equal(charge.metadata?.order_id, "ORDER-PAYPAY");
    assert.deepEqual(seen.errors, [], "uncaught errors");
  });
});

describe("demo storefront", () => {
  test("PayPay in the modal: the order shows paid once the shop's server has checked the charge", async () => {
    const { page, context, seen } = await s.newPage({ viewport: { width: 1200, height: 900 } });
    const demo = s.gw.demoEndpoint;
    await page.goto(`${demo}/`);
    await Promise.all([page.waitForNavigation(), page.locator("li.product").first().locator("button[type=submit]").click()]);
    await page.goto(`${demo}/checkout`);
    const total = Number(await page.getAttribute("#checkout", "data-amount"));
    await page.waitForSelector("#pay-modal:not([disabled])");
    await page.click("#pay-modal");
    const { frame } = await widgetFrame(page, s.gw.endpoint);
    await waitWidgetReady(frame);
    await frame.click(".kw-wallet[data-brand=pay_pay_online]");
    await frame.waitForSelector("#kw-wallet:not([hidden])", { timeout: 15_000 });
    await screenshot(page, "40-demo-paypay-qr");
    const tab = await walletTab(context, await frame.getAttribute("#kw-open", "href"));
    await Promise.all([page.waitForURL(/\/orders\/(?!return)[^/?]+(\?.*)?$/, { timeout: 20_000 }), tab.click("button[value=pay]")]);
    const status = page.locator(".facts .status");
    await status.waitFor();
    assert.equal((await status.textContent()).trim(), "Paid");
    await screenshot(page, "41-demo-paypay-paid");
    const chargeId = (await page.locator(".facts code.id").textContent()).trim();
    const charge = await s.gw.charge(chargeId);
    assert.equal(charge.status, "successful");
    assert.equal(charge.requested_amount, total);
    assert.deepEqual(seen.errors, [], "uncaught errors on the storefront");
  });
});
