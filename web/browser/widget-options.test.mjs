// Options of UnivaPay's widget the shop plugins pass: phoneNumber (the JS
// API) and data-phone-number (HTML mode) reach the card token as its
// billing phone number; data-inline-item-style styles the fields of an
// inline form, as WooCommerce's checkout puts it on its page, without
// letting a value load anything. Tokens are read back through the API with
// the store's secret.

import { describe, test } from "node:test";
import assert from "node:assert/strict";

import { CARD_OK, EXPIRY, fillCard, screenshot, useSuite, waitForLog, waitWidgetReady, widgetFrame } from "./harness.mjs";

const s = useSuite();

/** The token as the API has it. */
async function apiToken(id) {
  assert.match(id ?? "", /^[0-9a-f-]{36}$/, `not a token id: ${id}`);
  return s.gw.api("GET", `/stores/${s.gw.credentials.store_id}/tokens/${id}`);
}

describe("phoneNumber", () => {
  test("the JS API's phoneNumber is the token's billing phone number", async () => {
    const { page, frame } = await s.openModal({ amount: 1300, phoneNumber: "+81 90-1234-5678" });
    await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
    await frame.click("#kw-pay");
    const ok = await waitForLog(page, "onSuccess");
    const token = await apiToken(ok.value.tokenId);
    assert.deepEqual(token.data.billing.phone_number, { country_code: 81, local_number: "90-1234-5678" });
    const charge = await s.gw.charge(ok.value.chargeId);
    assert.equal(charge.status, "successful");
  });

  test("a phoneNumber no token takes is left off, and the payment goes on", async () => {
    const { page, frame } = await s.openModal({ amount: 1350, phoneNumber: "090.1234.5678" });
    await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
    await frame.click("#kw-pay");
    const ok = await waitForLog(page, "onSuccess");
    const token = await apiToken(ok.value.tokenId);
    assert.equal(token.data.billing.phone_number ?? null, null, JSON.stringify(token.data.billing));
  });
});

describe("HTML mode, inline, as WooCommerce puts it", () => {
  test("data-phone-number reaches the token and data-inline-item-style styles each field", async () => {
    const { page, seen } = await s.newPage();
    const before = s.merchant.submissions.length;
    const style = "padding: 0 2px; border-bottom: 3px solid rgb(255, 0, 0); background: url(https://evil.example/x); background-color: url(x)";
    await page.goto(
      s.url("/html", { amount: 1700, inline: "true", email: "buyer@example.com", phoneNumber: "090-1234-5678", inlineItemStyle: style }),
    );
    const { frame, handle } = await widgetFrame(page, s.gw.endpoint, { scope: "form#order" });
    await waitWidgetReady(frame);
    assert.equal(await handle.getAttribute("name"), "univapay-checkout-connector");
    const fields = await frame.evaluate(() =>
      [...document.querySelectorAll(".kw-field")].map((el) => {
        const cs = getComputedStyle(el);
        return {
          field: el.dataset.field,
          padding: [cs.paddingTop, cs.paddingRight, cs.paddingBottom, cs.paddingLeft].join(" "),
          borderBottom: `${cs.borderBottomWidth} ${cs.borderBottomStyle} ${cs.borderBottomColor}`,
          background: cs.backgroundImage,
          attr: el.getAttribute("style"),
        };
      }),
    );
    assert.ok(fields.length >= 4, `fields: ${JSON.stringify(fields)}`);
    for (const f of fields) {
      assert.equal(f.padding, "0px 2px 0px 2px", `${f.field}: ${JSON.stringify(f)}`);
      assert.equal(f.borderBottom, "3px solid rgb(255, 0, 0)", `${f.field}: ${JSON.stringify(f)}`);
      assert.equal(f.background, "none", `${f.field}: the url() was applied`);
      assert.doesNotMatch(f.attr ?? "", /url|evil/, `${f.field}: style ${f.attr}`);
    }
    await screenshot(page, "50-html-inline-item-style");
    await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
    await Promise.all([page.waitForURL(`${s.merchant.origin}/submit`, { timeout: 20_000 }), page.click("#place")]);
    await page.waitForSelector("#received");
    assert.equal(s.merchant.submissions.length, before + 1, "one form submission reached the shop");
    const { fields: sent } = s.merchant.submissions.at(-1);
    const token = await apiToken(sent.univapayTokenId);
    assert.deepEqual(token.data.billing.phone_number, { country_code: 81, local_number: "090-1234-5678" });
    assert.equal(token.email, "buyer@example.com");
    const charge = await s.gw.charge(sent.univapayChargeId);
    assert.equal(charge.status, "successful");
    assert.equal(charge.requested_amount, 1700);
    assert.deepEqual(seen.csp, [], `CSP violations: ${JSON.stringify(seen.csp)}`);
    assert.deepEqual(seen.errors, [], "uncaught errors");
    assert.deepEqual(seen.requests.filter((r) => new URL(r.url).hostname === "evil.example").map((r) => r.url), [], "the url() was fetched");
  });
});
