// Foundation endpoints through univapay-node: heartbeat, checkout info and
// errors, plus /me and /stores, and the header rules every later area
// depends on: the SDK adopts any JWT it finds in a response's Authorization
// or X-REFRESH-AUTHORIZATION header, and it needs JSON answers (errors
// included) labelled application/json.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";

import { JWT_REFRESH_HEADERS, expectAPIError, useGateway } from "./harness.mjs";

const gw = useGateway();

describe("setup", () => {
  test("demo-credentials.json points at this gateway", () => {
    const c = gw.credentials;
    assert.equal(c.api_url, gw.endpoint);
    for (const key of ["merchant_id", "store_id", "jwt", "secret", "console_email", "console_password"]) {
      assert.equal(typeof c[key], "string", `${key} missing`);
      assert.ok(c[key].length > 0, `${key} empty`);
    }
  });

  test("the SDK accepts the app token and sees store_id and mode=test in it", () => {
    // RestAPI decodes (not verifies) the JWT and camel-cases its claims.
    const claims = gw.sdk.api.jwt;
    assert.equal(claims.sub, "app_token");
    assert.equal(claims.storeId, gw.credentials.store_id);
    assert.equal(claims.merchantId, gw.credentials.merchant_id);
    assert.equal(claims.mode, "test");
  });
});

describe("row 0: heartbeat", () => {
  test("sdk.api.ping() resolves", async () => {
    await gw.sdk.api.ping();
  });
});

describe("merchant and stores", () => {
  test("sdk.merchants.me() returns the demo merchant, camelCased", async () => {
    const me = await gw.sdk.merchants.me();
    assert.equal(me.id, gw.credentials.merchant_id);
    assert.equal(typeof me.name, "string");
    assert.equal(typeof me.createdOn, "string");
    assert.ok(!Number.isNaN(Date.parse(me.createdOn)), `createdOn not a timestamp: ${me.createdOn}`);
    assert.equal(me.created_on, undefined, "snake_case key leaked through: the SDK only camelCases what it receives");
  });

  test("sdk.stores.list() returns {items, hasMore, totalHits} with the demo store", async () => {
    const list = await gw.sdk.stores.list();
    assert.ok(Array.isArray(list.items), "items is not an array");
    assert.equal(typeof list.hasMore, "boolean");
    assert.equal(typeof list.totalHits, "number");
    assert.ok(list.totalHits >= list.items.length);
    const store = list.items.find((s) => s.id === gw.credentials.store_id);
    assert.ok(store, `demo store ${gw.credentials.store_id} not listed`);
    assert.equal(store.merchantId, gw.credentials.merchant_id);
    assert.equal(typeof store.name, "string");
    assert.equal(typeof store.createdOn, "string");
  });

  test("sdk.stores.get(storeId) returns the demo store", async () => {
    const store = await gw.sdk.stores.get(gw.credentials.store_id);
    assert.equal(store.id, gw.credentials.store_id);
    assert.equal(store.merchantId, gw.credentials.merchant_id);
    assert.equal(typeof store.name, "string");
    assert.equal(typeof store.createdOn, "string");
  });
});

describe("row 1: checkout info", () => {
  test("sdk.checkoutInfo.get() describes a test-mode store that takes cards", async () => {
    const info = await gw.sdk.checkoutInfo.get();
    assert.equal(info.mode, "test");
    assert.equal(typeof info.name, "string");
    assert.ok(info.name.length > 0);
    assert.ok(Array.isArray(info.supportedBrands) && info.supportedBrands.length > 0, "supportedBrands empty");
    assert.ok(
      info.supportedBrands.some((b) => b.paymentType === "card"),
      `no card brand in ${JSON.stringify(info.supportedBrands)}`,
    );
    for (const b of info.supportedBrands) {
      assert.equal(typeof b.brand, "string", `brand without a name: ${JSON.stringify(b)}`);
    }
    assert.equal(typeof info.theme?.colors, "object", "theme.colors missing");
    assert.ok(info.theme.colors !== null);
    assert.equal(info.cardConfiguration?.enabled, true, "cardConfiguration.enabled should be true");
  });
});

describe("row 11: errors", () => {
  test("no Authorization header → 401 AUTH_HEADER_MISSING", async () => {
    // Without jwt/secret the SDK sends no Authorization header at all.
    const anonymous = gw.makeSDK({ jwt: undefined, secret: undefined });
    await expectAPIError(anonymous.merchants.me(), { code: "AUTH_HEADER_MISSING", httpCode: 401 });
  });

  test("a garbage secret → 401 INVALID_APP_TOKEN", async () => {
    const bad = gw.makeSDK({ secret: "not-the-secret" });
    await expectAPIError(bad.merchants.me(), { code: "INVALID_APP_TOKEN", httpCode: 401 });
  });

  test("limit: 500 → 400 VALIDATION_ERROR naming field limit", async () => {
    await expectAPIError(gw.sdk.stores.list({ limit: 500 }), { code: "VALIDATION_ERROR", httpCode: 400, field: "limit" });
  });

  test("unknown store id → 404 NOT_FOUND", async () => {
    await expectAPIError(gw.sdk.stores.get(randomUUID()), { code: "NOT_FOUND", httpCode: 404 });
  });
});

// Runs last in the file: audits every exchange the tests above made,
// errors included.
describe("headers on every exchange", () => {
  test("requests carried the SDK's auth and accept headers", () => {
    assert.ok(gw.requests.length > 0, "no requests recorded");
    const expected = `Bearer ${gw.credentials.secret}.${gw.credentials.jwt}`;
    const authed = gw.requests.filter((r) => r.headers.get("authorization") === expected);
    assert.ok(authed.length > 0, "no request used Bearer {secret}.{jwt}");
    for (const r of gw.requests) {
      assert.equal(r.headers.get("accept"), "application/json", `${r.method} ${r.url}`);
    }
  });

  test("no response tries to replace the SDK's JWT", () => {
    assert.ok(gw.responses.length > 0, "no responses recorded");
    for (const res of gw.responses) {
      for (const h of JWT_REFRESH_HEADERS) {
        assert.equal(res.headers.get(h), null, `${res.status} ${res.url} carries ${h}`);
      }
    }
    assert.deepEqual(gw.jwtUpdates, [], "handleUpdateJWT was called");
  });

  test("the gateway's pages carry x-request-id too", async () => {
    for (const path of ["/static/checkout.js", "/client/checkout.js", "/forms/x"]) {
      const res = await fetch(gw.endpoint + path);
      await res.arrayBuffer();
      assert.ok(res.headers.get("x-request-id"), `${path}: no x-request-id`);
    }
  });

  test("every response is JSON and carries x-request-id", () => {
    for (const res of gw.responses) {
      const type = res.headers.get("content-type") ?? "";
      assert.ok(type.includes("application/json"), `${res.status} ${res.url}: content-type ${JSON.stringify(type)}`);
      assert.ok(res.headers.get("x-request-id"), `${res.status} ${res.url}: no x-request-id`);
    }
  });
});
