// A wallet payment nobody finishes: the gateway (KESSAI_WALLET_EXPIRY=3s
// here) ends it, and the modal waiting on it says so. A suite of its own,
// for the gateway's short expiry.

import { test } from "node:test";
import assert from "node:assert/strict";

import { alertText, screenshot, useSuite, waitForLog, widgetFrame } from "./harness.mjs";

const s = useSuite({ env: { KESSAI_WALLET_EXPIRY: "3s" } });

test("a PayPay payment left unpaid expires; the form says the time ran out and offers the wallets again", async () => {
  const { page, seen } = await s.newPage();
  await page.goto(s.url("/modal", { amount: 1300, paymentTypes: "pay_pay_online" }));
  await page.click("#pay");
  const { frame } = await widgetFrame(page, s.gw.endpoint);
  await frame.waitForSelector(".kw-wallet:not([disabled])", { timeout: 15_000 });
  // Wallets only: no card form.
  assert.equal(await frame.isHidden("#kw-form"), true);
  await frame.click(".kw-wallet[data-brand=pay_pay_online]");
  // The wallet's step may come and go within the 3 s on a busy machine:
  // what counts is how the payment ends.
  const err = await waitForLog(page, "onError", { timeout: 30_000 });
  assert.equal(err.value.code, 327, JSON.stringify(err.value));
  assert.equal(err.value.fatal, false);
  await frame.waitForSelector("#kw-methods:not([hidden])");
  assert.match(await alertText(frame), /time to pay has run out/);
  assert.equal(await frame.isEnabled(".kw-wallet[data-brand=pay_pay_online]"), true, "the wallet can be chosen again");
  await screenshot(page, "42-modal-paypay-expired");
  const charge = await s.gw.charge(err.value.chargeId);
  assert.equal(charge.status, "failed");
  assert.equal(charge.error?.code, 327);
  assert.deepEqual(seen.errors, [], "uncaught errors");
});
