// Subscription checkout: the widget makes a subscription token and a
// subscription (tokenType "subscription", subscriptionPeriod) instead of a
// charge, and follows its first charge as a payment's, 3-D Secure challenge
// included. The demo storefront sells its coffee subscription that way (the
// order page shows the subscription and its payments, read by the shop's
// server); a merchant page hears univapay:subscription-created and gets
// univapaySubscriptionId in its form; the link form sends the shopper back
// with the subscription's id. Every outcome is checked through the API with
// the store's secret token.

import { describe, test } from "node:test";
import assert from "node:assert/strict";

import {
  CARD_CHALLENGE,
  CARD_OK,
  CHALLENGE_CODE,
  EXPIRY,
  alertText,
  fillCard,
  screenshot,
  useSuite,
  waitForLog,
  waitWidgetReady,
  widgetFrame,
} from "./harness.mjs";

const s = useSuite();

// Stripe's generic decline, declined by the sandbox (306).
const CARD_GENERIC_DECLINE = "4000000000000002";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ORDER_PAGE = /\/orders\/KS-[^/?]+(\?.*)?$/;

/** The subscription and its charges, through the API with the secret. */
async function subscription(id) {
  const store = s.gw.credentials.store_id;
  const sub = await s.gw.api("GET", `/stores/${store}/subscriptions/${id}`);
  const charges = await s.gw.api("GET", `/stores/${store}/subscriptions/${id}/charges`);
  return { sub, charges: charges.items };
}

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

/** Home → the subscription's card → its page → the widget, ready. */
async function openSubscription(page, { shots = false } = {}) {
  const demo = s.gw.demoEndpoint;
  await page.goto(`${demo}/`);
  const card = page.locator("#subscription");
  assert.match(await card.textContent(), /¥1,980 \/ month/);
  await Promise.all([page.waitForURL(`${demo}/subscribe`), card.locator("a[href='/subscribe']").click()]);
  await page.waitForSelector("#pay-subscription:not([disabled])");
  if (shots) await screenshot(page, "60-demo-subscribe");
  await page.click("#pay-subscription");
  const { frame } = await widgetFrame(page, s.gw.endpoint);
  await waitWidgetReady(frame);
  assert.equal((await frame.textContent(".kw-amount")).trim(), "¥1,980 / month");
  assert.equal((await frame.textContent("#kw-pay-label")).trim(), "Subscribe: ¥1,980 / month");
  return frame;
}

/** On the order page: the subscription, active, its first payment paid; the API agrees. */
async function assertSubscribed(page, { shot, threeDS = false } = {}) {
  const id = (await page.textContent("#sub-id")).trim();
  assert.match(id, UUID);
  assert.equal((await page.textContent("#sub-status")).trim(), "Active");
  const first = page.locator("#sub-payments tbody tr").first();
  assert.match(await first.textContent(), /¥1,980[\s\S]*Paid/);
  if (shot) await screenshot(page, shot, { fullPage: true });
  const { sub, charges } = await subscription(id);
  assert.equal(sub.status, "current");
  assert.equal(sub.amount, 1980);
  assert.equal(sub.period, "monthly");
  assert.match(sub.metadata.order_id, /^KS-/);
  assert.equal(charges.length, 1);
  assert.equal(charges[0].status, "successful");
  assert.equal(charges[0].requested_amount, 1980);
  if (threeDS) assert.equal(charges[0].three_ds?.status, "successful", JSON.stringify(charges[0].three_ds));
  return id;
}

describe("demo storefront subscription", () => {
  test("subscribe with a card: the order page shows the subscription and its first payment, paid", async () => {
    const { page, seen } = await s.newPage({ viewport: { width: 1200, height: 900 } });
    const frame = await openSubscription(page, { shots: true });
    await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
    await screenshot(page, "61-demo-subscribe-filled");
    await Promise.all([page.waitForURL(ORDER_PAGE, { timeout: 20_000 }), frame.click("#kw-pay")]);
    const id = await assertSubscribed(page, { shot: "62-demo-subscription-order" });

    await page.goto(`${s.gw.demoEndpoint}/orders`);
    const row = page.locator("table.orders tbody tr").filter({ hasText: "/ month" });
    assert.ok((await row.count()) >= 1, "the order is listed");
    assert.match(await row.first().textContent(), /Active/);
    assert.deepEqual(seen.errors, [], "uncaught errors on the storefront");
    assert.ok(id);
  });

  test(`3-D Secure on the first charge (${CARD_CHALLENGE}) is the in-modal challenge`, async () => {
    const { page, seen } = await s.newPage({ viewport: { width: 1200, height: 900 } });
    const frame = await openSubscription(page);
    await fillCard(frame, { number: CARD_CHALLENGE, exp: EXPIRY });
    await frame.click("#kw-pay");
    const acs = await challengeFrame(frame);
    assert.ok(acs.url().startsWith(`${s.gw.endpoint}/sandbox/3ds/`), acs.url());
    assert.equal(await frame.isHidden("#kw-form"), true, "the card form gives way to the challenge");
    assert.ok(page.url().startsWith(s.gw.demoEndpoint), "the storefront's page did not move");
    await screenshot(page, "63-demo-subscribe-3ds");
    await acs.locator("input[name=code]").fill(CHALLENGE_CODE);
    await Promise.all([
      page.waitForURL(ORDER_PAGE, { timeout: 20_000 }),
      acs.locator("form:has(input[name=code]) button[type=submit]").click(),
    ]);
    await assertSubscribed(page, { threeDS: true });
    assert.deepEqual(seen.errors, [], "uncaught errors on the storefront");
  });

  test(`a declined card (${CARD_GENERIC_DECLINE}) shows the error in the form, and another card subscribes`, async () => {
    const { page, seen } = await s.newPage({ viewport: { width: 1200, height: 900 } });
    const frame = await openSubscription(page);
    await fillCard(frame, { number: CARD_GENERIC_DECLINE, exp: EXPIRY });
    await frame.click("#kw-pay");
    await frame.waitForFunction(() => !document.getElementById("kw-alert").hidden, null, { timeout: 15_000 });
    assert.match(await alertText(frame), /declined/i);
    assert.equal(await frame.isHidden("#kw-form"), false, "the form stays for another try");
    assert.ok(page.url().endsWith("/subscribe"), "no order for a declined card");
    await frame.waitForSelector("#kw-pay:not([disabled])");
    await screenshot(page, "64-demo-subscribe-declined");

    await fillCard(frame, { number: CARD_OK, exp: undefined, cvc: undefined, name: undefined, email: undefined });
    await Promise.all([page.waitForURL(ORDER_PAGE, { timeout: 20_000 }), frame.click("#kw-pay")]);
    await assertSubscribed(page);
    assert.deepEqual(seen.errors, [], "uncaught errors on the storefront");
  });
});

describe("subscription checkout on a merchant's page", () => {
  test("modal: onSuccess has the subscription; univapay:subscription-created fires", async () => {
    const { page, frame } = await s.openModal({ amount: 980, tokenType: "subscription", subscriptionPeriod: "weekly" });
    assert.equal((await frame.textContent(".kw-amount")).trim(), "¥980 / week");
    await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
    await frame.click("#kw-pay");
    const ok = await waitForLog(page, "onSuccess", { timeout: 20_000 });
    const created = await waitForLog(page, "event:subscription-created");
    await frame.waitForSelector("#kw-done:not([hidden])");
    assert.equal((await frame.textContent("#kw-done-title")).trim(), "Subscription started");
    assert.match(ok.value.subscriptionId ?? "", UUID);
    assert.equal(ok.value.response.id, ok.value.subscriptionId, "result.response is the subscription");
    assert.equal(created.value.subscriptionId, ok.value.subscriptionId);
    const { sub, charges } = await subscription(ok.value.subscriptionId);
    assert.equal(sub.status, "current");
    assert.equal(sub.period, "weekly");
    assert.equal(sub.transaction_token_id, ok.value.tokenId);
    assert.equal(charges[0]?.id, ok.value.chargeId);
  });

  test("HTML mode: the form gets univapaySubscriptionId and univapayTokenId", async () => {
    const { page } = await s.newPage();
    await page.goto(s.url("/html", { amount: 1500, tokenType: "subscription", subscriptionPeriod: "monthly" }));
    await page.click("form span[data-app-id] button");
    const { frame } = await widgetFrame(page, s.gw.endpoint);
    await waitWidgetReady(frame);
    await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
    await Promise.all([page.waitForSelector("#received", { timeout: 20_000 }), frame.click("#kw-pay")]);
    const fields = s.merchant.submissions.at(-1).fields;
    assert.match(fields.univapaySubscriptionId ?? "", UUID, JSON.stringify(fields));
    assert.match(fields.univapayTokenId ?? "", UUID);
    const { sub } = await subscription(fields.univapaySubscriptionId);
    assert.equal(sub.status, "current");
    assert.equal(sub.amount, 1500);
    assert.equal(sub.metadata.subscription_period, undefined, "the terms are not metadata");
  });
});

test("link form: a monthly subscription returns with univapaySubscriptionId", async () => {
  const { page } = await s.newPage();
  const u = new URL("/forms/sub-test", s.gw.endpoint);
  for (const [k, v] of Object.entries({
    appId: s.appId, amount: "1980", currency: "JPY", tokenType: "subscription", subscriptionPeriod: "monthly",
    order_id: "SUB-1", successRedirectUrl: `${s.merchant.origin}/done`, failureRedirectUrl: `${s.merchant.origin}/failed`,
    autoRedirect: "true",
  })) u.searchParams.set(k, v);
  assert.equal((await page.goto(u.href)).status(), 200);
  assert.match(await page.textContent(".lf-amount"), /¥1,980 \/ month/);
  const { frame } = await widgetFrame(page, s.gw.endpoint, { scope: "#lf-frame" });
  await waitWidgetReady(frame);
  await page.waitForSelector("#lf-pay:not([disabled])");
  await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
  await screenshot(page, "65-linkform-subscription");
  await Promise.all([page.waitForURL(`${s.merchant.origin}/done**`, { timeout: 20_000 }), page.click("#lf-pay")]);
  const back = new URL(page.url());
  const id = back.searchParams.get("univapaySubscriptionId");
  assert.match(id ?? "", UUID, page.url());
  const { sub, charges } = await subscription(id);
  assert.equal(sub.status, "current");
  assert.equal(sub.metadata.order_id, "SUB-1");
  assert.equal(back.searchParams.get("univapayTokenId"), sub.transaction_token_id);
  assert.equal(back.searchParams.get("univapayChargeId"), charges[0].id);
});
