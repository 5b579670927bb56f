// The demo storefront (KESSAI_DEMO_ADDR, its own origin): add a product,
// check out, and the order shows paid, which the shop only does after
// checking the charge server-side. The modal is the main path; inline, HTML
// mode and the hosted link form are the storefront's other tabs.

import { test } from "node:test";
import assert from "node:assert/strict";

import { CARD_OK, EXPIRY, fillCard, screenshot, useSuite, waitWidgetReady, widgetFrame } from "./harness.mjs";

const s = useSuite();

/** Home → add the first product → cart → checkout. Resolves to the total. */
async function toCheckout(page, { shots = false } = {}) {
  const demo = s.gw.demoEndpoint;
  await page.goto(`${demo}/`);
  if (shots) await screenshot(page, "16-demo-home", { fullPage: true });
  const firstProduct = page.locator("li.product").first();
  await Promise.all([page.waitForNavigation(), firstProduct.locator("button[type=submit]").click()]);
  await page.goto(`${demo}/cart`);
  assert.equal(await page.locator("li.cart-line").count(), 1, "one line in the cart");
  if (shots) await screenshot(page, "17-demo-cart");
  await Promise.all([page.waitForURL(`${demo}/checkout`), page.click("a[href='/checkout']")]);
  const total = Number(await page.getAttribute("#checkout", "data-amount"));
  assert.ok(total > 0, "the checkout page knows the total");
  return total;
}

/** On the order page: "Paid", and the API agrees. */
async function assertPaid(page, total, { shot } = {}) {
  const status = page.locator(".facts .status");
  await status.waitFor();
  assert.equal((await status.textContent()).trim(), "Paid");
  assert.match((await status.getAttribute("class")) ?? "", /status-successful/);
  if (shot) await screenshot(page, shot);
  const chargeId = (await page.locator(".facts code.id").textContent()).trim();
  const charge = await s.gw.charge(chargeId);
  assert.equal(charge.status, "successful");
  assert.equal(charge.requested_amount, total);
  return chargeId;
}

const ORDER_PAGE = /\/orders\/(?!return)[^/?]+(\?.*)?$/;

test("demo storefront: add a product, pay with the modal, the order shows paid", async () => {
  const { page, seen } = await s.newPage({ viewport: { width: 1200, height: 900 } });
  const total = await toCheckout(page, { shots: true });
  await page.waitForSelector("#pay-modal:not([disabled])");
  await screenshot(page, "18-demo-checkout");
  await page.click("#pay-modal");
  const { frame } = await widgetFrame(page, s.gw.endpoint);
  await waitWidgetReady(frame);
  await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
  await screenshot(page, "19-demo-modal-filled");
  await Promise.all([page.waitForURL(ORDER_PAGE, { timeout: 20_000 }), frame.click("#kw-pay")]);
  const chargeId = await assertPaid(page, total, { shot: "20-demo-order-paid" });

  await page.goto(`${s.gw.demoEndpoint}/orders`);
  const row = page.locator("table.orders tbody tr").filter({ hasText: chargeId });
  assert.equal(await row.count(), 1, "the order is listed");
  assert.match(await row.textContent(), /Paid/);
  await screenshot(page, "21-demo-orders");
  assert.deepEqual(seen.errors, [], "uncaught errors on the storefront");
});

test("demo storefront: inline tab", async () => {
  const { page, seen } = await s.newPage({ viewport: { width: 1200, height: 900 } });
  const total = await toCheckout(page);
  await page.click("label[for=m-inline]");
  const { frame } = await widgetFrame(page, s.gw.endpoint, { scope: "#inline-frame" });
  await waitWidgetReady(frame);
  await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
  await page.waitForSelector("#pay-inline:not([disabled])");
  await screenshot(page, "22-demo-inline-filled");
  await Promise.all([page.waitForURL(ORDER_PAGE, { timeout: 20_000 }), page.click("#pay-inline")]);
  await assertPaid(page, total);
  assert.deepEqual(seen.errors, [], "uncaught errors on the storefront");
});

test("demo storefront: HTML-mode tab", async () => {
  const { page, seen } = await s.newPage({ viewport: { width: 1200, height: 900 } });
  const total = await toCheckout(page);
  await page.click("label[for=m-html]");
  const button = page.locator("#panel-html form span[data-app-id] button");
  await button.click();
  const { frame } = await widgetFrame(page, s.gw.endpoint);
  await waitWidgetReady(frame);
  await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
  await Promise.all([page.waitForURL(ORDER_PAGE, { timeout: 20_000 }), frame.click("#kw-pay")]);
  await assertPaid(page, total);
  assert.deepEqual(seen.errors, [], "uncaught errors on the storefront");
});

test("demo storefront: hosted link form tab", async () => {
  const { page, seen } = await s.newPage({ viewport: { width: 1200, height: 900 } });
  const total = await toCheckout(page);
  await page.click("label[for=m-hosted]");
  await Promise.all([page.waitForURL(`${s.gw.endpoint}/forms/**`), page.click("#panel-hosted a.btn")]);
  const { frame } = await widgetFrame(page, s.gw.endpoint, { scope: "#lf-frame" });
  await waitWidgetReady(frame);
  await page.waitForSelector("#lf-pay:not([disabled])");
  await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
  await Promise.all([page.waitForURL(ORDER_PAGE, { timeout: 20_000 }), page.click("#lf-pay")]);
  await assertPaid(page, total, { shot: "23-demo-hosted-paid" });
  assert.deepEqual(seen.errors, [], "uncaught errors");
});
