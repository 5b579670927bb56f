// Webhooks through univapay-node (registration, signing, delivery):
// sdk.webHooks.create/list/get/update/delete on a store, and on the token's
// own store without one in the path; the refusals as the SDK surfaces them
// (409 WEBHOOK_URL_EXISTS, RESOURCE_LIMIT_REACHED past 20 active webhooks,
// VALIDATION_ERROR); and the deliveries themselves, to a receiver this file
// runs on 127.0.0.1 (test mode may deliver to local addresses): a charge
// made through the SDK is announced as charge_finished, with the webhook's
// auth_token verbatim as Authorization, the charge as GET answers it, and
// a Standard Webhooks signature checked with the harness's webhookSignatureValid.

import { describe, test } from "node:test";
import assert from "node:assert/strict";

import { expectAPIError, useGateway, useWebhookReceiver, webhookSignatureValid as verifySignature } from "./harness.mjs";

// Short long-polls, and room for the twenty-odd webhook creations of the
// quota test in a row on one exact path (its default burst is 10).
const gw = useGateway({ env: { KESSAI_POLL_WAIT: "250ms", KESSAI_RATE_EXACT_BURST: "50" } });

const CARD_SUCCESS = "4000020000000000";
const CARD_DECLINED = "4111111111111111";

const storeId = () => gw.credentials.store_id;
const authHeader = () => `Bearer ${gw.credentials.secret}.${gw.credentials.jwt}`;
const expYear = new Date().getFullYear() + 3;

/** GET with the SDK's own auth header, for routes univapay-node has no method for. */
async function rawGet(path) {
  const res = await fetch(`${gw.endpoint}${path}`, { headers: { Authorization: authHeader(), Accept: "application/json" } });
  const text = await res.text();
  assert.equal(res.status, 200, `GET ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

const receiver = useWebhookReceiver();
const delivered = receiver.delivered;

const cardToken = (cardNumber) =>
  gw.sdk.transactionTokens.create({
    paymentType: "card",
    type: "one_time",
    email: "buyer@example.com",
    data: { cardholder: "TARO YAMADA", cardNumber, expMonth: 12, expYear, cvv: "123" },
  });

const pollCharge = (id) =>
  gw.sdk.charges.poll(storeId(), id, undefined, undefined, {
    timeout: 10_000,
    interval: 50,
    successCondition: (ch) => !["pending", "awaiting"].includes(ch.status),
  });

describe("sdk.webHooks: create, list, get, update, delete (§2.5, §3.8)", () => {
  const flow = {};

  test("sdk.webHooks.create answers the webhook, with its signing secret this once", async () => {
    const hook = await gw.sdk.webHooks.create(
      { triggers: ["charge_finished", "refund_finished"], url: `${receiver.base}/crud`, authToken: "Bearer crud-token" },
      undefined,
      storeId(),
    );
    assert.match(hook.id, /^[0-9a-f-]{36}$/);
    assert.equal(hook.merchantId, gw.credentials.merchant_id);
    assert.equal(hook.storeId, storeId());
    assert.deepEqual(hook.triggers, ["charge_finished", "refund_finished"]);
    assert.equal(hook.url, `${receiver.base}/crud`);
    assert.equal(hook.authToken, "Bearer crud-token");
    assert.equal(hook.active, true);
    assert.equal(hook.isIntegration, false);
    assert.ok(!Number.isNaN(Date.parse(hook.createdOn)), `createdOn ${hook.createdOn}`);
    assert.ok(!Number.isNaN(Date.parse(hook.updatedOn)), `updatedOn ${hook.updatedOn}`);
    // Kessai's addition: the Standard Webhooks signing secret.
    assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]{32}$/);
    flow.hook = hook;
  });

  test("sdk.webHooks.get answers it without the secret", async () => {
    const got = await gw.sdk.webHooks.get(flow.hook.id, undefined, undefined, storeId());
    const { secret, ...rest } = flow.hook;
    assert.equal(got.secret, undefined);
    assert.deepEqual({ ...got }, rest);
  });

  test("sdk.webHooks.list lists it, on the store and without one in the path", async () => {
    const list = await gw.sdk.webHooks.list(undefined, undefined, storeId());
    assert.equal(list.hasMore, false);
    const item = list.items.find((w) => w.id === flow.hook.id);
    assert.ok(item, "not listed");
    assert.equal(item.secret, undefined);
    assert.equal(item.url, flow.hook.url);
    // GET /webhooks with a store's token: the token's own store.
    const own = await gw.sdk.webHooks.list();
    assert.deepEqual(
      own.items.map((w) => w.id),
      list.items.map((w) => w.id),
    );
    // …paged as the SDK asks.
    const page = await gw.sdk.webHooks.list({ limit: 1 }, undefined, storeId());
    assert.equal(page.items.length, 1);
  });

  test("sdk.webHooks.update changes triggers, auth token and state", async () => {
    const updated = await gw.sdk.webHooks.update(
      flow.hook.id,
      { triggers: ["cancel_finished"], authToken: "Bearer changed", active: false },
      undefined,
      storeId(),
    );
    assert.equal(updated.id, flow.hook.id);
    assert.deepEqual(updated.triggers, ["cancel_finished"]);
    assert.equal(updated.authToken, "Bearer changed");
    assert.equal(updated.active, false);
    assert.equal(updated.url, flow.hook.url);
    assert.equal(updated.secret, undefined);
    const again = await gw.sdk.webHooks.update(flow.hook.id, { active: true }, undefined, storeId());
    assert.equal(again.active, true);
    assert.deepEqual(again.triggers, ["cancel_finished"]);
  });

  test("the same URL again: 409 WEBHOOK_URL_EXISTS", async () => {
    await expectAPIError(
      gw.sdk.webHooks.create({ triggers: ["charge_finished"], url: flow.hook.url }, undefined, storeId()),
      { code: "WEBHOOK_URL_EXISTS", httpCode: 409 },
    );
  });

  test("no triggers, an unknown trigger or no URL: VALIDATION_ERROR", async () => {
    await expectAPIError(gw.sdk.webHooks.create({ triggers: [], url: `${receiver.base}/v1` }, undefined, storeId()), {
      code: "VALIDATION_ERROR",
      httpCode: 400,
      field: "triggers",
    });
    await expectAPIError(gw.sdk.webHooks.create({ triggers: ["no_such_event"], url: `${receiver.base}/v2` }, undefined, storeId()), {
      code: "VALIDATION_ERROR",
      httpCode: 400,
      field: "triggers",
    });
    await expectAPIError(gw.sdk.webHooks.create({ triggers: ["charge_finished"], url: "not a url" }, undefined, storeId()), {
      code: "VALIDATION_ERROR",
      httpCode: 400,
      field: "url",
    });
  });

  test("sdk.webHooks.delete resolves; the webhook is gone (404)", async () => {
    await gw.sdk.webHooks.delete(flow.hook.id, undefined, undefined, storeId());
    await expectAPIError(gw.sdk.webHooks.get(flow.hook.id, undefined, undefined, storeId()), { code: "NOT_FOUND", httpCode: 404 });
    await expectAPIError(gw.sdk.webHooks.delete(flow.hook.id, undefined, undefined, storeId()), { code: "NOT_FOUND", httpCode: 404 });
  });

  test("past 20 active webhooks: RESOURCE_LIMIT_REACHED; an inactive one frees its place", async () => {
    const made = [];
    try {
      for (let i = 0; i < 20; i++) {
        made.push(await gw.sdk.webHooks.create({ triggers: ["charge_finished"], url: `${receiver.base}/limit/${i}` }, undefined, storeId()));
      }
      await expectAPIError(gw.sdk.webHooks.create({ triggers: ["charge_finished"], url: `${receiver.base}/limit/20` }, undefined, storeId()), {
        code: "RESOURCE_LIMIT_REACHED",
        httpCode: 400,
      });
      // An inactive webhook does not count: deactivating one lets another in.
      await gw.sdk.webHooks.update(made[0].id, { active: false }, undefined, storeId());
      made.push(await gw.sdk.webHooks.create({ triggers: ["charge_finished"], url: `${receiver.base}/limit/20` }, undefined, storeId()));
      // …and it cannot come back while the others fill the quota.
      await expectAPIError(gw.sdk.webHooks.update(made[0].id, { active: true }, undefined, storeId()), {
        code: "RESOURCE_LIMIT_REACHED",
        httpCode: 400,
      });
    } finally {
      for (const w of made) await gw.sdk.webHooks.delete(w.id, undefined, undefined, storeId());
    }
    assert.equal((await gw.sdk.webHooks.list(undefined, undefined, storeId())).items.length, 0);
  });
});

describe("deliveries (§7): a charge made through the SDK arrives as charge_finished", () => {
  const flow = {};

  test("a webhook for charge_finished to the receiver", async () => {
    flow.hook = await gw.sdk.webHooks.create(
      { triggers: ["charge_finished"], url: `${receiver.base}/deliveries`, authToken: "Bearer 0f6c2b5e-webhook" },
      undefined,
      storeId(),
    );
    assert.match(flow.hook.secret, /^whsec_/);
  });

  test("sdk.charges.create, polled to successful: charge_finished arrives, signed, Authorization verbatim", async () => {
    const token = await cardToken(CARD_SUCCESS);
    const created = await gw.sdk.charges.create({ transactionTokenId: token.id, amount: 1234, currency: "JPY", metadata: { order_id: "wh-1" } });
    const ch = await pollCharge(created.id);
    assert.equal(ch.status, "successful");

    const d = await delivered((x) => x.path === "/deliveries" && x.body.data?.id === ch.id, "charge_finished");
    assert.equal(d.method, "POST");
    // The auth token as given, not "Bearer Bearer …" nor the app token.
    assert.equal(d.headers.authorization, "Bearer 0f6c2b5e-webhook");
    assert.match(d.headers["content-type"], /^application\/json/);
    // The envelope: {"id","event","data","created_on"}.
    assert.deepEqual(Object.keys(d.body).sort(), ["created_on", "data", "event", "id"]);
    assert.equal(d.body.event, "charge_finished");
    assert.ok(!Number.isNaN(Date.parse(d.body.created_on)));
    // Standard Webhooks headers.
    assert.equal(d.headers["webhook-id"], d.body.id);
    const age = Date.now() / 1000 - Number(d.headers["webhook-timestamp"]);
    assert.ok(age > -5 && age < 60, `webhook-timestamp ${d.headers["webhook-timestamp"]} is ${age} s old`);
    assert.ok(verifySignature(flow.hook.secret, d.headers, d.raw), `bad signature ${d.headers["webhook-signature"]}`);
    assert.ok(!verifySignature(flow.hook.secret, d.headers, d.raw + " "), "a changed body passes");
    assert.ok(!verifySignature(`whsec_${Buffer.alloc(24).toString("base64")}`, d.headers, d.raw), "another secret passes");
    // The data is the charge as GET answers it.
    assert.deepEqual(d.body.data, await rawGet(`/stores/${storeId()}/charges/${ch.id}`));
    assert.equal(d.body.data.status, "successful");
    assert.equal(d.body.data.requested_amount, 1234);
    assert.deepEqual(d.body.data.metadata, { order_id: "wh-1" });
    flow.charge = ch;
    flow.delivery = d;
  });

  test("a declined charge arrives as charge_finished, failed; no event the webhook did not ask for", async () => {
    const token = await cardToken(CARD_DECLINED);
    const ch = await pollCharge((await gw.sdk.charges.create({ transactionTokenId: token.id, amount: 1250, currency: "JPY" })).id);
    assert.equal(ch.status, "failed");
    const d = await delivered((x) => x.path === "/deliveries" && x.body.data?.id === ch.id, "charge_finished (failed)");
    assert.equal(d.body.event, "charge_finished");
    assert.equal(d.body.data.status, "failed");
    assert.ok(verifySignature(flow.hook.secret, d.headers, d.raw));
    const events = new Set(receiver.deliveries.filter((x) => x.path === "/deliveries").map((x) => x.body.event));
    assert.deepEqual([...events], ["charge_finished"]);
  });

  test("the delivery log (GET …/webhooks/{id}/events) shows it delivered", async () => {
    const log = await rawGet(`/stores/${storeId()}/webhooks/${flow.hook.id}/events`);
    const line = log.items.find((e) => e.id === flow.delivery.body.id);
    assert.ok(line, `not in the log: ${JSON.stringify(log.items.map((e) => e.id))}`);
    assert.equal(line.webhook_id, flow.hook.id);
    assert.equal(line.event, "charge_finished");
    assert.equal(line.successful, true);
    assert.deepEqual(line.data, flow.delivery.body.data);
  });

  test("a webhook deleted hears nothing more", async () => {
    await gw.sdk.webHooks.delete(flow.hook.id, undefined, undefined, storeId());
    const before = receiver.deliveries.length;
    const token = await cardToken(CARD_SUCCESS);
    const ch = await pollCharge((await gw.sdk.charges.create({ transactionTokenId: token.id, amount: 1260, currency: "JPY" })).id);
    assert.equal(ch.status, "successful");
    // A webhook still listening elsewhere does hear this charge, so its
    // delivery bounds the wait.
    const other = await gw.sdk.webHooks.create({ triggers: ["charge_finished"], url: `${receiver.base}/other` }, undefined, storeId());
    const token2 = await cardToken(CARD_SUCCESS);
    const ch2 = await pollCharge((await gw.sdk.charges.create({ transactionTokenId: token2.id, amount: 1270, currency: "JPY" })).id);
    await delivered((x) => x.path === "/other" && x.body.data?.id === ch2.id, "the other webhook's delivery");
    assert.equal(
      receiver.deliveries.slice(before).filter((x) => x.path === "/deliveries").length,
      0,
      "the deleted webhook got a delivery",
    );
    await gw.sdk.webHooks.delete(other.id, undefined, undefined, storeId());
  });
});
