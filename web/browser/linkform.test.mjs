// The hosted link form (GET /forms/{id}, UnivaPay's link form): a first-party page
// on the gateway's origin using the same frame, which sends the shopper
// back to the merchant's URL with the ids appended.

import { test } from "node:test";
import assert from "node:assert/strict";

import { CARD_DECLINED, CARD_OK, EXPIRY, alertText, fillCard, screenshot, useSuite, waitWidgetReady, widgetFrame } from "./harness.mjs";

const s = useSuite();

function formURL(params) {
  const u = new URL("/forms/test", s.gw.endpoint);
  for (const [k, v] of Object.entries({ appId: s.appId, currency: "JPY", ...params })) u.searchParams.set(k, v);
  return u.href;
}

test("link form with autoRedirect: pay, land on the merchant's /done with univapayChargeId, verified through the API", async () => {
  const { page, seen } = await s.newPage();
  const url = formURL({
    amount: "3300",
    order_id: "ORDER-77",
    successRedirectUrl: `${s.merchant.origin}/done?shop=1`,
    failureRedirectUrl: `${s.merchant.origin}/failed`,
    autoRedirect: "true",
  });
  const res = await page.goto(url);
  assert.equal(res.status(), 200);
  const { frame } = await widgetFrame(page, s.gw.endpoint, { scope: "#lf-frame" });
  await waitWidgetReady(frame);
  await page.waitForSelector("#lf-pay:not([disabled])");
  await screenshot(page, "11-linkform-empty");

  // A decline first: the error is shown and the shopper stays on the form.
  await fillCard(frame, { number: CARD_DECLINED, exp: EXPIRY });
  await page.click("#lf-pay");
  await frame.waitForFunction(() => !document.getElementById("kw-alert").hidden, null, { timeout: 15_000 });
  assert.match(await alertText(frame), /declined/i);
  assert.ok(page.url().startsWith(s.gw.endpoint), "still on the link form after a decline");
  await page.waitForSelector("#lf-pay:not([disabled])", { timeout: 5_000 });
  await screenshot(page, "12-linkform-declined");

  await fillCard(frame, { number: CARD_OK, exp: undefined, cvc: undefined, name: undefined, email: undefined });
  await screenshot(page, "13-linkform-filled");
  await Promise.all([page.waitForURL(`${s.merchant.origin}/done**`, { timeout: 20_000 }), page.click("#lf-pay")]);
  await page.waitForSelector("#returned");
  await screenshot(page, "14-linkform-returned");

  const back = new URL(page.url());
  assert.equal(back.searchParams.get("shop"), "1", "the merchant's own query is kept");
  const chargeId = back.searchParams.get("univapayChargeId");
  const tokenId = back.searchParams.get("univapayTokenId");
  assert.match(chargeId ?? "", /^[0-9a-f-]{36}$/, page.url());
  assert.match(tokenId ?? "", /^[0-9a-f-]{36}$/, page.url());
  assert.equal(s.merchant.returns.at(-1)?.query.univapayChargeId, chargeId, "the shop's server saw the id");

  const charge = await s.gw.charge(chargeId);
  assert.equal(charge.status, "successful");
  assert.equal(charge.requested_amount, 3300);
  assert.equal(charge.transaction_token_id, tokenId);
  assert.equal(charge.metadata?.order_id, "ORDER-77");
  assert.equal(charge.metadata?.["univapay-form-id"], "test");
  assert.deepEqual(seen.errors, [], "uncaught errors");
});

test("link form in Japanese", async () => {
  const { page } = await s.newPage({ locale: "ja-JP" });
  await page.goto(formURL({ amount: "1000", successRedirectUrl: `${s.merchant.origin}/done` }));
  const { frame } = await widgetFrame(page, s.gw.endpoint, { scope: "#lf-frame" });
  await waitWidgetReady(frame);
  assert.equal(await page.getAttribute("html", "lang"), "ja");
  assert.equal(await frame.getAttribute("html", "lang"), "ja");
  assert.equal((await frame.textContent("label[for=kw-number]")).trim(), "カード番号");
  await screenshot(page, "15-linkform-ja");
});

test("a redirect URL outside the token's domains is refused (no open redirect)", async () => {
  for (const bad of ["https://evil.example/done", `http://127.0.0.2:${s.merchant.port}/done`, "javascript:alert(1)"]) {
    const res = await fetch(formURL({ amount: "1000", successRedirectUrl: bad }), { redirect: "manual" });
    const body = await res.text();
    assert.equal(res.status, 400, `${bad}: ${res.status}`);
    assert.ok(!body.includes("kw-number") && !body.includes("lf-checkout"), `${bad}: the form was rendered`);
  }
});
