// Rate-limit headers through univapay-node (README, "Rate limits and other
// limits"): every read
// carries the standard class's four headers, every token or charge creation
// the charge class's two, and no response carries both classes'. The raw
// responses come from the SDK's own "response" event.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";

import { expectAPIError, useGateway } from "./harness.mjs";

const gw = useGateway();

const STANDARD = [
  "x-remaining-requests-route",
  "x-requests-per-minute-route",
  "x-remaining-requests-exact",
  "x-requests-per-minute-exact",
];
const CHARGE = ["x-remaining-requests", "x-requests-per-minute"];

const storeId = () => gw.credentials.store_id;

/** Runs fn with a fresh SDK client and returns its result and the raw responses it got. */
async function observe(fn) {
  const sdk = gw.makeSDK();
  const responses = [];
  sdk.on("response", (res) => responses.push(res));
  let result;
  let error;
  try {
    result = await fn(sdk);
  } catch (err) {
    error = err;
  }
  assert.ok(responses.length > 0, "the SDK emitted no response");
  return { result, error, responses };
}

/** A remaining-requests header: a whole number from 0 to max. */
function remaining(res, name, max) {
  const v = res.headers.get(name);
  assert.match(v ?? "", /^\d+$/, `${res.status} ${res.url}: ${name} = ${v}`);
  const n = Number(v);
  assert.ok(n >= 0 && n <= max, `${res.status} ${res.url}: ${name} = ${n}, want 0..${max}`);
  return n;
}

/** The standard class's four headers, never the charge class's. */
function assertStandard(res) {
  for (const h of CHARGE) {
    assert.equal(res.headers.get(h), null, `${res.status} ${res.url}: a standard response carries ${h}`);
  }
  assert.equal(res.headers.get("x-requests-per-minute-route"), "1200", `${res.url}`);
  assert.equal(res.headers.get("x-requests-per-minute-exact"), "120", `${res.url}`);
  // The request itself was counted: at most burst − 1 remain.
  remaining(res, "x-remaining-requests-route", 29);
  remaining(res, "x-remaining-requests-exact", 9);
}

/** The charge class's two headers, never the standard class's. */
function assertCharge(res) {
  for (const h of STANDARD) {
    assert.equal(res.headers.get(h), null, `${res.status} ${res.url}: a charge-class response carries ${h}`);
  }
  assert.equal(res.headers.get("x-requests-per-minute"), "3000", `${res.url}`);
  remaining(res, "x-remaining-requests", 99);
}

const card = () => ({
  cardholder: "TARO YAMADA",
  cardNumber: "4000020000000000",
  expMonth: 12,
  expYear: new Date().getFullYear() + 3,
  cvv: "123",
});

const shared = {};

describe("rate-limit headers", () => {
  test("sdk.merchants.me() and sdk.stores.get() carry the four standard headers", async () => {
    for (const read of [(sdk) => sdk.merchants.me(), (sdk) => sdk.stores.get(storeId())]) {
      const { error, responses } = await observe(read);
      assert.equal(error, undefined, `${error?.stack}`);
      assert.equal(responses.length, 1);
      assert.equal(responses[0].status, 200);
      assertStandard(responses[0]);
    }
  });

  test("sdk.transactionTokens.create() carries the two charge headers", async () => {
    const { result, error, responses } = await observe((sdk) =>
      sdk.transactionTokens.create({ paymentType: "card", type: "one_time", email: "buyer@example.com", data: card() }),
    );
    assert.equal(error, undefined, `${error?.stack}`);
    assert.equal(responses.length, 1);
    assert.equal(responses[0].status, 201);
    assertCharge(responses[0]);
    shared.token = result;
  });

  test("sdk.charges.create() carries the two charge headers", async () => {
    const { result, error, responses } = await observe((sdk) =>
      sdk.charges.create({ transactionTokenId: shared.token.id, amount: 1000, currency: "JPY" }),
    );
    assert.equal(error, undefined, `${error?.stack}`);
    assert.equal(responses.length, 1);
    assert.equal(responses[0].status, 201);
    assertCharge(responses[0]);
    shared.charge = result;
  });

  test("sdk.charges.get() of that charge carries the four standard headers", async () => {
    const { result, error, responses } = await observe((sdk) => sdk.charges.get(storeId(), shared.charge.id));
    assert.equal(error, undefined, `${error?.stack}`);
    assert.equal(result.id, shared.charge.id);
    assert.equal(responses.length, 1);
    assertStandard(responses[0]);
  });

  test("errors carry their class's headers too", async () => {
    const read = await observe((sdk) => expectAPIError(sdk.charges.get(storeId(), randomUUID()), { code: "NOT_FOUND", httpCode: 404 }));
    assert.equal(read.error, undefined, `${read.error?.stack}`);
    assertStandard(read.responses[0]);

    const create = await observe((sdk) =>
      expectAPIError(sdk.charges.create({ transactionTokenId: shared.token.id, amount: 1000, currency: "JPY" }), {
        code: "TRANSACTION_ALREADY_PROCESSED",
        httpCode: 400,
      }),
    );
    assert.equal(create.error, undefined, `${create.error?.stack}`);
    assertCharge(create.responses[0]);
  });

  test("no response of this file carried both classes' headers", () => {
    assert.ok(gw.responses.length > 0);
    for (const res of gw.responses) {
      const std = STANDARD.filter((h) => res.headers.get(h) !== null);
      const chg = CHARGE.filter((h) => res.headers.get(h) !== null);
      assert.ok(
        (std.length === 4 && chg.length === 0) || (std.length === 0 && chg.length === 2),
        `${res.status} ${res.url}: standard headers ${std}, charge headers ${chg}`,
      );
    }
  });
});
