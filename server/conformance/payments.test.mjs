// Card payments through univapay-node: token → charge → poll → get,
// refunds, capture and cancel, pagination, the transaction history, and the
// sandbox cards of the README's Sandbox section. One gateway for the whole
// file; tests run in order.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";

import { expectAPIError, useGateway } from "./harness.mjs";

const gw = useGateway();

// The README's Sandbox section.
const CARD_SUCCESS = "4000020000000000"; // success
const CARD_4242 = "4242424242424242"; // success; its refunds fail with 329
const CARD_DECLINED = "4111111111111111"; // charge fails, 306 CARD_REJECTED

const storeId = () => gw.credentials.store_id;
const authHeader = () => `Bearer ${gw.credentials.secret}.${gw.credentials.jwt}`;

/** A one-time card token made through the SDK (row 2). */
async function cardToken(cardNumber = CARD_SUCCESS, extra = {}) {
  return gw.sdk.transactionTokens.create({
    paymentType: "card",
    type: "one_time",
    email: "buyer@example.com",
    data: { cardholder: "TARO YAMADA", cardNumber, expMonth: 12, expYear: new Date().getFullYear() + 3, cvv: "123" },
    ...extra,
  });
}

/** Token + charge through the SDK (rows 2 and 4). */
async function charge(cardNumber = CARD_SUCCESS, params = {}) {
  const token = await cardToken(cardNumber);
  const created = await gw.sdk.charges.create({ transactionTokenId: token.id, amount: 1000, currency: "JPY", ...params });
  return { token, created };
}

/** sdk.charges.poll with a custom condition; fails rather than waiting 10 minutes. */
const pollCharge = (id, successCondition) =>
  gw.sdk.charges.poll(storeId(), id, undefined, undefined, { timeout: 20_000, ...(successCondition && { successCondition }) });

/** GET with the SDK's own auth header, for routes univapay-node has no method for. */
async function rawGet(path) {
  const res = await fetch(`${gw.endpoint}${path}`, { headers: { Authorization: authHeader(), Accept: "application/json" } });
  const text = await res.text();
  assert.equal(res.status, 200, `GET ${path}: ${res.status} ${text}`);
  assert.ok((res.headers.get("content-type") ?? "").includes("application/json"), `GET ${path}: not JSON`);
  return JSON.parse(text);
}

// Shared between tests of the main flow (they run in order).
const flow = {};

describe("rows 2–5: token → charge → poll → get", () => {
  test("sdk.transactionTokens.create makes a one-time card token", async () => {
    const token = await cardToken(CARD_SUCCESS);
    // Row 2.
    assert.equal(token.storeId, storeId());
    assert.equal(token.paymentType, "card");
    assert.equal(token.type, "one_time");
    assert.equal(token.active, true);
    assert.equal(token.mode, "test");
    assert.equal(token.email, "buyer@example.com");
    assert.equal(token.data.card.lastFour, "0000");
    assert.equal(token.data.card.brand, "visa");
    assert.equal(typeof token.data.cvvAuthorize, "object");
    assert.equal(JSON.stringify(token).includes(CARD_SUCCESS), false, "the full card number came back");
    flow.token = token;
  });

  test("sdk.transactionTokens.get(storeId, tokenId) returns the same token", async () => {
    // Row 3.
    const got = await gw.sdk.transactionTokens.get(storeId(), flow.token.id);
    assert.equal(got.id, flow.token.id);
    assert.equal(got.type, "one_time");
    assert.equal(got.data.card.lastFour, "0000");
    assert.equal(got.data.card.cardBin, flow.token.data.card.cardBin);
  });

  test("sdk.charges.create answers a pending (or final) charge", async () => {
    // Row 4.
    const ch = await gw.sdk.charges.create({ transactionTokenId: flow.token.id, amount: 1000, currency: "JPY" });
    assert.equal(ch.storeId, storeId());
    assert.equal(ch.transactionTokenId, flow.token.id);
    assert.equal(ch.transactionTokenType, "one_time");
    assert.equal(ch.requestedAmount, 1000);
    assert.equal(ch.requestedCurrency, "JPY");
    assert.equal(ch.mode, "test");
    assert.equal(ch.error, null);
    assert.ok(["pending", "successful"].includes(ch.status), `status ${ch.status}`);
    if (ch.status === "pending") {
      assert.equal(ch.chargedAmount, null);
    }
    flow.charge = ch;
  });

  test("sdk.charges.poll(storeId, chargeId) resolves with the successful charge", async () => {
    // Row 5.
    const ch = await pollCharge(flow.charge.id);
    assert.equal(ch.id, flow.charge.id);
    assert.equal(ch.status, "successful");
    assert.equal(ch.chargedAmount, 1000);
    assert.equal(ch.chargedCurrency, "JPY");
    assert.equal(ch.error, null);
  });

  test("sdk.charges.get (store path) and GET /charges/{id} (seed path) answer the same charge", async () => {
    const viaSDK = await gw.sdk.charges.get(storeId(), flow.charge.id);
    assert.equal(viaSDK.status, "successful");
    const raw = await rawGet(`/charges/${flow.charge.id}`);
    assert.equal(raw.id, flow.charge.id);
    assert.equal(raw.store_id, storeId());
    assert.equal(raw.status, "successful");
    assert.equal(raw.charged_amount, 1000);
    // The same object, byte for byte apart from key casing.
    const rawStore = await rawGet(`/stores/${storeId()}/charges/${flow.charge.id}`);
    assert.deepEqual(raw, rawStore);
  });

  test("reusing the one-time token → 400 TRANSACTION_ALREADY_PROCESSED", async () => {
    // Row 4.
    await expectAPIError(
      gw.sdk.charges.create({ transactionTokenId: flow.token.id, amount: 1000, currency: "JPY" }),
      { code: "TRANSACTION_ALREADY_PROCESSED", httpCode: 400 },
    );
  });

  test("a 4242 card charge succeeds too", async () => {
    const { token, created } = await charge(CARD_4242, { amount: 2000 });
    assert.equal(token.data.card.lastFour, "4242");
    const ch = await pollCharge(created.id);
    assert.equal(ch.status, "successful");
    assert.equal(ch.chargedAmount, 2000);
    flow.charge4242 = ch;
  });

  test("the 4111 card is declined: charge failed with error.code 306", async () => {
    const { created } = await charge(CARD_DECLINED);
    const ch = await pollCharge(created.id);
    assert.equal(ch.status, "failed");
    assert.equal(ch.error?.code, 306, `error ${JSON.stringify(ch.error)}`);
    assert.equal(ch.chargedAmount, null);
    flow.declined = ch;
  });
});

describe("row 7: refunds", () => {
  test("partial refund → sdk.refunds.poll → successful", async () => {
    const { id: chargeId } = flow.charge;
    const rf = await gw.sdk.refunds.create(storeId(), chargeId, { amount: 400, currency: "JPY", reason: "customer_request" });
    assert.equal(rf.chargeId, chargeId);
    assert.equal(rf.storeId, storeId());
    assert.equal(rf.amount, 400);
    assert.equal(rf.currency, "JPY");
    assert.equal(rf.reason, "customer_request");
    assert.equal(rf.mode, "test");
    assert.ok(["pending", "successful"].includes(rf.status), `status ${rf.status}`);
    const done = await gw.sdk.refunds.poll(storeId(), chargeId, rf.id, undefined, undefined, { timeout: 20_000 });
    assert.equal(done.id, rf.id);
    assert.equal(done.status, "successful");
    flow.refund = done;
  });

  test("a second partial refund up to the rest is allowed", async () => {
    const { id: chargeId } = flow.charge;
    const rf = await gw.sdk.refunds.create(storeId(), chargeId, { amount: 100, currency: "JPY", reason: "customer_request" });
    const done = await gw.sdk.refunds.poll(storeId(), chargeId, rf.id, undefined, undefined, { timeout: 20_000 });
    assert.equal(done.status, "successful");
    flow.refund2 = done;
  });

  test("sdk.refunds.list lists both refunds", async () => {
    const list = await gw.sdk.refunds.list(storeId(), flow.charge.id);
    assert.equal(list.hasMore, false);
    const ids = list.items.map((r) => r.id).sort();
    assert.deepEqual(ids, [flow.refund.id, flow.refund2.id].sort());
    for (const r of list.items) {
      assert.equal(r.chargeId, flow.charge.id);
      assert.equal(r.status, "successful");
    }
  });

  test("refunding more than is left → 400 REFUND_EXCEEDS_CHARGE_AMOUNT", async () => {
    // 1000 charged, 500 refunded: 501 is one too many.
    await expectAPIError(
      gw.sdk.refunds.create(storeId(), flow.charge.id, { amount: 501, currency: "JPY", reason: "customer_request" }),
      { code: "REFUND_EXCEEDS_CHARGE_AMOUNT", httpCode: 400 },
    );
  });

  test("refunding a failed charge → 400 CANNOT_REFUND_UNSUCCESSFUL_CHARGE", async () => {
    await expectAPIError(
      gw.sdk.refunds.create(storeId(), flow.declined.id, { amount: 100, currency: "JPY", reason: "customer_request" }),
      { code: "CANNOT_REFUND_UNSUCCESSFUL_CHARGE", httpCode: 400 },
    );
  });

  test("a refund of a 4242 charge fails with 329", async () => {
    // The sandbox: "a refund of it fails with 329 REFUND_FAILED".
    const { id: chargeId } = flow.charge4242;
    const rf = await gw.sdk.refunds.create(storeId(), chargeId, { amount: 500, currency: "JPY", reason: "customer_request" });
    const done = await gw.sdk.refunds.poll(storeId(), chargeId, rf.id, undefined, undefined, { timeout: 20_000 });
    assert.equal(done.status, "failed");
    assert.equal(done.error?.code, 329, `error ${JSON.stringify(done.error)}`);
  });
});

describe("row 8: auth-only charges, capture and cancel", () => {
  test("capture:false → authorized → sdk.captures.create → successful", async () => {
    const { created } = await charge(CARD_SUCCESS, { amount: 3000, capture: false });
    const authorized = await pollCharge(created.id);
    assert.equal(authorized.status, "authorized");
    await gw.sdk.captures.create(storeId(), created.id, { amount: 3000, currency: "JPY" });
    const ch = await pollCharge(created.id, ({ status }) => status !== "pending" && status !== "authorized");
    assert.equal(ch.status, "successful");
    assert.equal(ch.chargedAmount, 3000);
    flow.captured = ch;
  });

  test("a second capture → 400 ALREADY_CAPTURED", async () => {
    await expectAPIError(gw.sdk.captures.create(storeId(), flow.captured.id, { amount: 3000, currency: "JPY" }), {
      code: "ALREADY_CAPTURED",
      httpCode: 400,
    });
  });

  test("capture:false → authorized → sdk.cancels.create → sdk.cancels.poll → charge canceled", async () => {
    const { created } = await charge(CARD_SUCCESS, { amount: 1500, capture: false });
    const authorized = await pollCharge(created.id);
    assert.equal(authorized.status, "authorized");
    const cn = await gw.sdk.cancels.create(storeId(), created.id, {});
    assert.equal(cn.chargeId, created.id);
    assert.equal(cn.storeId, storeId());
    assert.equal(cn.mode, "test");
    assert.ok(["pending", "successful"].includes(cn.status), `status ${cn.status}`);
    const done = await gw.sdk.cancels.poll(storeId(), created.id, cn.id, undefined, undefined, { timeout: 20_000 });
    assert.equal(done.id, cn.id);
    assert.equal(done.status, "successful");
    const ch = await gw.sdk.charges.get(storeId(), created.id);
    assert.equal(ch.status, "canceled");
    flow.canceled = ch;
  });
});

describe("transaction history", () => {
  // univapay-node 4.0.130 has no transaction-history method (its Ledgers
  // resource is the transfer ledger), so this is a raw GET with the
  // SDK's Authorization header.
  test("GET /transaction_history lists every charge and refund with its status", async () => {
    const items = [];
    let cursor;
    for (;;) {
      const page = await rawGet(`/transaction_history?limit=100${cursor ? `&cursor=${cursor}` : ""}`);
      assert.ok(Array.isArray(page.items));
      assert.equal(typeof page.has_more, "boolean");
      items.push(...page.items);
      if (!page.has_more) break;
      cursor = page.items.at(-1).id;
    }
    const byId = new Map();
    for (const it of items) {
      assert.equal(byId.has(it.id), false, `ledger line ${it.id} listed twice`);
      byId.set(it.id, it);
    }
    const expect = (id, type, status, amount) => {
      const line = byId.get(id);
      assert.ok(line, `${type} ${id} missing from the history`);
      assert.equal(line.type, type);
      assert.equal(line.status, status);
      assert.equal(line.amount, amount);
      assert.equal(line.currency, "JPY");
      assert.equal(line.store_id, storeId());
    };
    expect(flow.charge.id, "charge", "successful", 1000);
    expect(flow.charge4242.id, "charge", "successful", 2000);
    expect(flow.declined.id, "charge", "failed", 1000);
    expect(flow.captured.id, "charge", "successful", 3000);
    expect(flow.canceled.id, "charge", "canceled", 1500);
    expect(flow.refund.id, "refund", "successful", 400);
    expect(flow.refund2.id, "refund", "successful", 100);
    assert.equal(byId.get(flow.refund.id).charge_id, flow.charge.id);

    // The store-scoped path and the type filter agree.
    const refunds = await rawGet(`/stores/${storeId()}/transaction_history?type=refund&limit=100`);
    assert.ok(refunds.items.length >= 2);
    assert.ok(refunds.items.every((it) => it.type === "refund"));
  });
});

describe("row 12: pagination over 25 charges", () => {
  const mine = []; // ids in creation order

  test("create 25 charges", async () => {
    const batch = randomUUID();
    for (let i = 0; i < 25; i++) {
      const { created } = await charge(CARD_SUCCESS, { amount: 100 + i, metadata: { batch, seq: i } });
      mine.push(created.id);
    }
    assert.equal(new Set(mine).size, 25);
  });

  /** Walks every page of one listing; returns the pages. */
  async function walk(list, params) {
    const pages = [];
    let cursor;
    for (let guard = 0; guard < 100; guard++) {
      const page = await list({ limit: 10, ...params, ...(cursor && { cursor }) });
      assert.ok(Array.isArray(page.items));
      assert.equal(typeof page.hasMore, "boolean");
      assert.ok(page.items.length <= 10, `page of ${page.items.length}`);
      if (cursor) {
        assert.ok(!page.items.some((c) => c.id === cursor), "the cursor item came back on the next page");
      }
      pages.push(page);
      if (!page.hasMore) return pages;
      assert.equal(page.items.length, 10, "a page with has_more must be full");
      cursor = page.items.at(-1).id;
    }
    assert.fail("more than 100 pages");
  }

  const listings = {
    "GET /charges": (p) => gw.sdk.charges.list(p),
    "GET /stores/{storeId}/charges": (p) => gw.sdk.charges.list(p, undefined, storeId()),
  };

  for (const [name, list] of Object.entries(listings)) {
    test(`${name}: {limit:10} then {cursor: lastId}, newest first, each charge once`, async () => {
      const first = await list({ limit: 10 });
      assert.equal(first.items.length, 10);
      assert.equal(first.hasMore, true);
      // The newest charge is the last one made.
      assert.equal(first.items[0].id, mine.at(-1));

      const pages = await walk(list, {});
      assert.deepEqual(pages[0].items.map((c) => c.id), first.items.map((c) => c.id));
      const all = pages.flatMap((p) => p.items);
      const ids = all.map((c) => c.id);
      assert.equal(new Set(ids).size, ids.length, "a charge appeared on two pages");
      // Every one of the 25 exactly once, newest first.
      const seen = ids.filter((id) => mine.includes(id));
      assert.deepEqual(seen, [...mine].reverse());
      // Newest first over everything listed.
      for (let i = 1; i < all.length; i++) {
        assert.ok(Date.parse(all[i - 1].createdOn) >= Date.parse(all[i].createdOn), `out of order at ${i}`);
      }
      // has_more is false only on the last page, and the pages add up.
      assert.ok(pages.slice(0, -1).every((p) => p.hasMore));
      assert.equal(pages.at(-1).hasMore, false);
      flow[name] = ids;
    });

    test(`${name}: {cursorDirection:"asc"}, oldest first, the same charges reversed`, async () => {
      const pages = await walk(list, { cursorDirection: "asc" });
      const ids = pages.flatMap((p) => p.items).map((c) => c.id);
      assert.equal(new Set(ids).size, ids.length, "a charge appeared on two pages");
      assert.deepEqual(ids, [...flow[name]].reverse());
      const seen = ids.filter((id) => mine.includes(id));
      assert.deepEqual(seen, mine);

      // asc from a cursor in the middle of my batch continues after it.
      const mid = mine[12];
      const next = await list({ limit: 10, cursorDirection: "asc", cursor: mid });
      assert.deepEqual(next.items.map((c) => c.id), mine.slice(13, 23));
      assert.equal(next.hasMore, true);
    });
  }

  test("every one of the 25 is processed", async () => {
    for (const id of mine) {
      const ch = await pollCharge(id);
      assert.equal(ch.status, "successful");
    }
  });
});

// With a slow acquirer the SDK's poll helpers really have to wait: the
// create calls answer `pending` and the long polls carry the change.
describe("with 300 ms of acquirer latency", () => {
  const slow = useGateway({ env: { KESSAI_SANDBOX_LATENCY: "300ms" } });
  const sid = () => slow.credentials.store_id;
  const opts = { timeout: 20_000 };

  test("charge, capture, refund and cancel each go through pending", async () => {
    const token = await slow.sdk.transactionTokens.create({
      paymentType: "card",
      type: "one_time",
      email: "buyer@example.com",
      data: { cardholder: "TARO YAMADA", cardNumber: CARD_SUCCESS, expMonth: 12, expYear: new Date().getFullYear() + 3, cvv: "123" },
    });
    const created = await slow.sdk.charges.create({ transactionTokenId: token.id, amount: 1000, currency: "JPY" });
    assert.equal(created.status, "pending");
    assert.equal(created.chargedAmount, null);
    const ch = await slow.sdk.charges.poll(sid(), created.id, undefined, undefined, opts);
    assert.equal(ch.status, "successful");
    assert.equal(ch.chargedAmount, 1000);

    const rf = await slow.sdk.refunds.create(sid(), created.id, { amount: 300, currency: "JPY", reason: "customer_request" });
    assert.equal(rf.status, "pending");
    const rfDone = await slow.sdk.refunds.poll(sid(), created.id, rf.id, undefined, undefined, opts);
    assert.equal(rfDone.status, "successful");

    const token2 = await slow.sdk.transactionTokens.create({
      paymentType: "card",
      type: "one_time",
      email: "buyer@example.com",
      data: { cardholder: "TARO YAMADA", cardNumber: CARD_SUCCESS, expMonth: 12, expYear: new Date().getFullYear() + 3, cvv: "123" },
    });
    const auth = await slow.sdk.charges.create({ transactionTokenId: token2.id, amount: 800, currency: "JPY", capture: false });
    assert.equal(auth.status, "pending");
    assert.equal((await slow.sdk.charges.poll(sid(), auth.id, undefined, undefined, opts)).status, "authorized");
    const cn = await slow.sdk.cancels.create(sid(), auth.id, {});
    assert.equal(cn.status, "pending");
    assert.equal((await slow.sdk.cancels.poll(sid(), auth.id, cn.id, undefined, undefined, opts)).status, "successful");
    assert.equal((await slow.sdk.charges.get(sid(), auth.id)).status, "canceled");

    const token3 = await slow.sdk.transactionTokens.create({
      paymentType: "card",
      type: "one_time",
      email: "buyer@example.com",
      data: { cardholder: "TARO YAMADA", cardNumber: CARD_SUCCESS, expMonth: 12, expYear: new Date().getFullYear() + 3, cvv: "123" },
    });
    const auth2 = await slow.sdk.charges.create({ transactionTokenId: token3.id, amount: 900, currency: "JPY", capture: false });
    assert.equal((await slow.sdk.charges.poll(sid(), auth2.id, undefined, undefined, opts)).status, "authorized");
    await slow.sdk.captures.create(sid(), auth2.id, { amount: 900, currency: "JPY" });
    // The capture is carried out by the worker: still authorized for now.
    assert.equal((await slow.sdk.charges.get(sid(), auth2.id)).status, "authorized");
    const captured = await slow.sdk.charges.poll(sid(), auth2.id, undefined, undefined, {
      ...opts,
      successCondition: ({ status }) => status !== "pending" && status !== "authorized",
    });
    assert.equal(captured.status, "successful");
    assert.equal(captured.chargedAmount, 900);
  });
});
