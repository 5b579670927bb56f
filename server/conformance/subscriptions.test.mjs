// Subscriptions through univapay-node (creation, its first
// charge and its events): a subscription token → sdk.subscriptions.create →
// pollSubscriptionWithFirstCharge (the first charge, made at once) → the
// subscription's charges and scheduled payments → suspend, unsuspend,
// update → delete; the refusals as the SDK surfaces them; ISO 8601 cycles
// and fixed plans; sdk.subscriptions.simulation (POST …/simulate_plan);
// lists with status filters; a first charge under 3-D Secure, its
// challenge answered through the sandbox's scripted endpoint (POST
// {page}/act, as wallets.test.mjs does); a subscription made from a
// browser, as the widget makes one; and the subscription events delivered
// to a webhook (data.id = the subscription's id, what the shop plugins
// read).
//
// sdk.on("request") keeps the body of every request the SDK sends, so a
// test can check what went over the wire as well as what came back.

import { describe, test, beforeEach } from "node:test";
import assert from "node:assert/strict";

import { expectAPIError, useGateway, useWebhookReceiver, webhookSignatureValid as signatureValid } from "./harness.mjs";

// Short long-polls: a subscription whose first charge awaits its 3-D
// Secure challenge stays unverified, and the SDK's polls of it would
// otherwise each be held for the gateway's full default wait.
const gw = useGateway({ env: { KESSAI_POLL_WAIT: "250ms" } });

// The README's Sandbox section.
const CARD_SUCCESS = "4000020000000000"; // enrolled; challenged only when forced
const CARD_DECLINED = "4111111111111111"; // charge fails, 306
const CHALLENGE_CODE = "123456";
const ZONE = "Asia/Tokyo"; // the zone a subscription's due dates are days of when none is given

const storeId = () => gw.credentials.store_id;
const expYear = new Date().getFullYear() + 3;

/** A card token of the given type (row 2) made with sdk, by default the harness's. */
const cardToken = (type, cardNumber = CARD_SUCCESS, sdk = gw.sdk) =>
  sdk.transactionTokens.create({
    paymentType: "card",
    type,
    email: "subscriber@example.com",
    data: { cardholder: "TARO YAMADA", cardNumber, expMonth: 12, expYear, cvv: "123" },
  });

/** A subscription of 1000 JPY a month on a fresh subscription token, with params over those. */
async function subscribe(params = {}, cardNumber = CARD_SUCCESS) {
  const token = await cardToken("subscription", cardNumber);
  const sub = await gw.sdk.subscriptions.create({ transactionTokenId: token.id, amount: 1000, currency: "JPY", period: "monthly", ...params });
  return { token, sub };
}

/** sdk.subscriptions.poll until cond holds; fails rather than waiting 10 minutes. */
const pollSubscription = (id, cond) =>
  gw.sdk.subscriptions.poll(storeId(), id, undefined, undefined, { timeout: 10_000, interval: 50, ...(cond && { successCondition: cond }) });

/** sdk.charges.poll until cond holds. */
const pollCharge = (id, cond) =>
  gw.sdk.charges.poll(storeId(), id, undefined, undefined, { timeout: 10_000, interval: 50, ...(cond && { successCondition: cond }) });

/**
 * pollSubscriptionWithFirstCharge, bounded: the SDK's own helper polls
 * for up to 10 minutes, which would hide a hang as a test timeout.
 */
function pollWithFirstCharge(id, sdk = gw.sdk) {
  return Promise.race([
    sdk.subscriptions.pollSubscriptionWithFirstCharge(storeId(), id),
    new Promise((_, reject) => setTimeout(() => reject(new Error("pollSubscriptionWithFirstCharge did not resolve in 20 s")), 20_000).unref()),
  ]);
}

/** Calls read until cond holds of its answer (10 s at most). */
async function eventually(read, cond, what) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const got = await read();
    if (cond(got)) return got;
    if (Date.now() > deadline) assert.fail(`${what} never came: ${JSON.stringify(got)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The day it is now in zone, YYYY-MM-DD. */
const today = (zone = ZONE) => new Intl.DateTimeFormat("en-CA", { timeZone: zone }).format(new Date());

/**
 * d (YYYY-MM-DD) moved by months, one at a time (a day past a month's end
 * is its last: Jan 31 → Feb 28 → Mar 28, as due dates without
 * preserve_end_of_month go), then by days.
 */
function addDate(d, { months = 0, days = 0 }) {
  let [y, m, day] = d.split("-").map(Number);
  for (let i = 0; i < months; i++) {
    [y, m] = m === 12 ? [y + 1, 1] : [y, m + 1];
    day = Math.min(day, new Date(Date.UTC(y, m, 0)).getUTCDate());
  }
  return new Date(Date.UTC(y, m - 1, day) + days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * What the SDK handed back, as plain JSON: it parses a payload it leaves
 * unformatted (metadata) into objects without a prototype, which
 * deepEqual tells apart from literals.
 */
const plain = (v) => JSON.parse(JSON.stringify(v));

/**
 * The requests the harness's SDK sends, with their bodies: sdk.on("request")
 * hands over each fetch Request before it is sent, so its clone can still
 * be read. Attached before the first test (the gateway's before hook
 * makes gw.sdk).
 */
const sent = [];
let listening = false;
beforeEach(() => {
  if (listening) return;
  listening = true;
  gw.sdk.on("request", (req) => {
    const url = new URL(req.url);
    const entry = { method: req.method, path: url.pathname, query: url.search, body: undefined };
    sent.push(entry);
    req
      .clone()
      .text()
      .then((text) => {
        entry.body = text ? JSON.parse(text) : undefined;
      });
  });
});

/** The last request the SDK sent with this method to a path matching re. */
async function lastSent(method, re) {
  await new Promise((r) => setImmediate(r)); // the body's read
  const found = sent.findLast((e) => e.method === method && re.test(e.path));
  assert.ok(found, `no ${method} ${re} was sent: ${JSON.stringify(sent.map((e) => `${e.method} ${e.path}`))}`);
  return found;
}

// ---- a webhook receiver on 127.0.0.1 (test mode delivers to local addresses)

const receiver = useWebhookReceiver();
const delivered = receiver.delivered;

// ---- the flow of row 9

describe("row 9: subscription token → subscription → first charge → payments → suspend, unsuspend, update → cancel", () => {
  const flow = {};

  test("a webhook for the subscription events (§7)", async () => {
    flow.hook = await gw.sdk.webHooks.create(
      {
        triggers: ["subscription_created", "subscription_payment", "subscription_suspended", "subscription_canceled"],
        url: `${receiver.base}/subscriptions`,
        authToken: "Bearer subscriptions-hook",
      },
      undefined,
      storeId(),
    );
    assert.deepEqual(flow.hook.triggers, ["subscription_created", "subscription_payment", "subscription_suspended", "subscription_canceled"]);
  });

  test("sdk.transactionTokens.create makes a subscription token", async () => {
    const token = await cardToken("subscription");
    assert.equal(token.type, "subscription");
    assert.equal(token.paymentType, "card");
    assert.equal(token.active, true);
    flow.token = token;
  });

  test("sdk.subscriptions.create sends the snake_case body and answers the subscription (§3.7)", async () => {
    const sub = await gw.sdk.subscriptions.create({
      transactionTokenId: flow.token.id,
      amount: 1000,
      currency: "JPY",
      period: "monthly",
      metadata: { order_id: "sub-1", plan: "basic" },
    });
    const req = await lastSent("POST", /^\/subscriptions$/);
    assert.deepEqual(req.body, {
      transaction_token_id: flow.token.id,
      amount: 1000,
      currency: "JPY",
      period: "monthly",
      metadata: { order_id: "sub-1", plan: "basic" },
    });

    assert.match(sub.id, /^[0-9a-f-]{36}$/);
    assert.equal(sub.storeId, storeId());
    assert.equal(sub.transactionTokenId, flow.token.id);
    assert.equal(sub.amount, 1000);
    assert.equal(sub.amountFormatted, 1000);
    assert.equal(sub.currency, "JPY");
    assert.equal(sub.period, "monthly");
    assert.equal(sub.mode, "test");
    // Its first charge is made at once: unverified until it ends (§6:
    // subscriptions.poll waits for the status to leave unverified).
    assert.ok(["unverified", "current"].includes(sub.status), `status ${sub.status}`);
    assert.deepEqual(plain(sub.metadata), { order_id: "sub-1", plan: "basic" });
    assert.ok(!Number.isNaN(Date.parse(sub.createdOn)), `createdOn ${sub.createdOn}`);
    // schedule_settings with zone_id is in every subscription (the PHP SDK
    // requires it, §10.3).
    assert.equal(sub.scheduleSettings.zoneId, ZONE);
    assert.equal(sub.scheduleSettings.startOn ?? today(), today());
    // The payment made now.
    assert.equal(sub.nextPayment.dueDate, today());
    assert.equal(sub.nextPayment.amount, 1000);
    assert.equal(sub.nextPayment.currency, "JPY");
    assert.equal(sub.nextPayment.zoneId, ZONE);
    assert.equal(typeof sub.nextPayment.isPaid, "boolean");
    assert.equal(sub.nextPayment.isLastPayment, false);
    flow.sub = sub;
  });

  test("sdk.subscriptions.pollSubscriptionWithFirstCharge resolves current, with its first charge successful", async () => {
    const { subscription, charge } = await pollWithFirstCharge(flow.sub.id);
    assert.equal(subscription.id, flow.sub.id);
    assert.equal(subscription.status, "current");
    assert.ok(charge, "no first charge");
    assert.equal(charge.status, "successful");
    assert.equal(charge.subscriptionId, flow.sub.id);
    assert.equal(charge.transactionTokenId, flow.token.id);
    assert.equal(charge.transactionTokenType, "subscription");
    assert.equal(charge.requestedAmount, 1000);
    assert.equal(charge.chargedAmount, 1000);
    assert.equal(charge.chargedCurrency, "JPY");
    assert.equal(charge.storeId, storeId());
    flow.charge = charge;
  });

  test("sdk.subscriptions.charges lists the first charge (subscription_id set, transaction_token_type subscription)", async () => {
    const list = await gw.sdk.subscriptions.charges(storeId(), flow.sub.id);
    assert.equal(list.hasMore, false);
    assert.deepEqual(
      list.items.map((c) => c.id),
      [flow.charge.id],
    );
    const [ch] = list.items;
    assert.equal(ch.subscriptionId, flow.sub.id);
    assert.equal(ch.transactionTokenType, "subscription");
    assert.equal(ch.status, "successful");
    // The same charge as sdk.charges.get answers.
    assert.deepEqual(plain(await gw.sdk.charges.get(storeId(), ch.id)), plain(ch));
  });

  test("sdk.subscriptions.payments.list: the first payment paid today, the next one a month on", async () => {
    const list = await gw.sdk.subscriptions.payments.list(storeId(), flow.sub.id);
    assert.equal(list.hasMore, false);
    assert.equal(list.items.length, 2, JSON.stringify(list.items));
    const paid = list.items.find((p) => p.isPaid);
    const next = list.items.find((p) => !p.isPaid);
    assert.ok(paid && next, JSON.stringify(list.items));
    assert.equal(paid.dueDate, today());
    assert.equal(paid.amount, 1000);
    assert.equal(paid.amountFormatted, 1000);
    assert.equal(paid.currency, "JPY");
    assert.equal(paid.zoneId, ZONE);
    assert.equal(paid.isLastPayment, false);
    assert.ok(!Number.isNaN(Date.parse(paid.createdOn)), `createdOn ${paid.createdOn}`);
    assert.equal(next.dueDate, addDate(today(), { months: 1 }));
    assert.equal(next.amount, 1000);
    assert.equal(next.isLastPayment, false);
    // Newest first, as every list (§6).
    assert.deepEqual(
      list.items.map((p) => p.id),
      [next.id, paid.id],
    );
    // The subscription's next_payment is the unpaid one.
    const sub = await gw.sdk.subscriptions.get(storeId(), flow.sub.id);
    assert.equal(sub.nextPayment.id, next.id);
    assert.equal(sub.nextPayment.dueDate, next.dueDate);
    flow.paid = paid;
    flow.next = next;
  });

  test("sdk.subscriptions.payments.get answers one payment; payments.listCharges its charge", async () => {
    const got = await gw.sdk.subscriptions.payments.get(storeId(), flow.sub.id, flow.paid.id);
    assert.deepEqual(plain(got), plain(flow.paid));
    const charges = await gw.sdk.subscriptions.payments.listCharges(storeId(), flow.sub.id, flow.paid.id);
    assert.deepEqual(
      charges.items.map((c) => c.id),
      [flow.charge.id],
    );
    const none = await gw.sdk.subscriptions.payments.listCharges(storeId(), flow.sub.id, flow.next.id);
    assert.deepEqual(none.items, []);
  });

  test("sdk.subscriptions.suspend answers it suspended", async () => {
    const sub = await gw.sdk.subscriptions.suspend(storeId(), flow.sub.id);
    const req = await lastSent("PATCH", /\/subscriptions\/[^/]+\/suspend$/);
    assert.equal(req.path, `/stores/${storeId()}/subscriptions/${flow.sub.id}/suspend`);
    assert.equal(sub.id, flow.sub.id);
    assert.equal(sub.status, "suspended");
    assert.equal((await gw.sdk.subscriptions.get(storeId(), flow.sub.id)).status, "suspended");
    // A suspended subscription is listed as one.
    const suspended = await gw.sdk.subscriptions.list({ status: "suspended" });
    assert.ok(suspended.items.some((s) => s.id === flow.sub.id), "not listed as suspended");
    assert.ok(suspended.items.every((s) => s.status === "suspended"));
  });

  test("sdk.subscriptions.unsuspend answers it current again", async () => {
    const sub = await gw.sdk.subscriptions.unsuspend(storeId(), flow.sub.id);
    assert.equal(sub.id, flow.sub.id);
    assert.equal(sub.status, "current");
    // Nothing fell due while it was suspended: the next payment stands.
    assert.equal(sub.nextPayment.id, flow.next.id);
    assert.equal(sub.nextPayment.dueDate, flow.next.dueDate);
  });

  test("sdk.subscriptions.update changes metadata and amount", async () => {
    const sub = await gw.sdk.subscriptions.update(storeId(), flow.sub.id, { metadata: { plan: "gold" }, amount: 1500 });
    const req = await lastSent("PATCH", new RegExp(`/subscriptions/${flow.sub.id}$`));
    assert.deepEqual(req.body, { metadata: { plan: "gold" }, amount: 1500 });
    assert.equal(sub.id, flow.sub.id);
    assert.equal(sub.amount, 1500);
    assert.equal(sub.amountFormatted, 1500);
    assert.equal(sub.status, "current");
    // Metadata is merged, as a charge's is.
    assert.deepEqual(plain(sub.metadata), { order_id: "sub-1", plan: "gold" });
    const got = await gw.sdk.subscriptions.get(storeId(), flow.sub.id);
    assert.equal(got.amount, 1500);
    assert.deepEqual(plain(got.metadata), { order_id: "sub-1", plan: "gold" });
  });

  test("sdk.subscriptions.list: the subscription, on the token's store and on the store's path; status filters", async () => {
    const all = await gw.sdk.subscriptions.list();
    const item = all.items.find((s) => s.id === flow.sub.id);
    assert.ok(item, "not listed");
    assert.equal(item.status, "current");
    assert.equal(item.amount, 1500);
    assert.equal(item.scheduleSettings.zoneId, ZONE);
    const onStore = await gw.sdk.subscriptions.list(undefined, undefined, storeId());
    assert.deepEqual(
      onStore.items.map((s) => s.id),
      all.items.map((s) => s.id),
    );
    const current = await gw.sdk.subscriptions.list({ status: "current" });
    assert.ok(current.items.some((s) => s.id === flow.sub.id));
    assert.ok(current.items.every((s) => s.status === "current"));
    const suspended = await gw.sdk.subscriptions.list({ status: "suspended" }, undefined, storeId());
    assert.ok(!suspended.items.some((s) => s.id === flow.sub.id), "a current subscription listed as suspended");
    // statuses[] (the SDK's bracket arrays).
    const either = await gw.sdk.subscriptions.list({ statuses: ["suspended", "current"] });
    const req = await lastSent("GET", /^\/subscriptions$/);
    assert.equal(decodeURIComponent(req.query), "?statuses[]=suspended&statuses[]=current");
    assert.ok(either.items.some((s) => s.id === flow.sub.id));
    assert.ok(either.items.every((s) => ["suspended", "current"].includes(s.status)));
    // A page of one.
    const page = await gw.sdk.subscriptions.list({ limit: 1 });
    assert.equal(page.items.length, 1);
  });

  test("sdk.subscriptions.delete resolves; the subscription is canceled", async () => {
    await gw.sdk.subscriptions.delete(storeId(), flow.sub.id);
    const req = await lastSent("DELETE", /\/subscriptions\//);
    assert.equal(req.path, `/stores/${storeId()}/subscriptions/${flow.sub.id}`);
    const sub = await gw.sdk.subscriptions.get(storeId(), flow.sub.id);
    assert.equal(sub.status, "canceled");
    assert.equal(sub.id, flow.sub.id);
    // Its charges stay.
    const charges = await gw.sdk.subscriptions.charges(storeId(), flow.sub.id);
    assert.deepEqual(
      charges.items.map((c) => c.id),
      [flow.charge.id],
    );
  });

  test("a canceled subscription cannot be changed (CANNOT_CHANGE_CANCELED_SUBSCRIPTION)", async () => {
    for (const call of [
      () => gw.sdk.subscriptions.delete(storeId(), flow.sub.id),
      () => gw.sdk.subscriptions.suspend(storeId(), flow.sub.id),
      () => gw.sdk.subscriptions.update(storeId(), flow.sub.id, { metadata: { plan: "late" } }),
    ]) {
      await expectAPIError(call(), { code: "CANNOT_CHANGE_CANCELED_SUBSCRIPTION", httpCode: 400 });
    }
  });

  test("the webhook heard subscription_created, subscription_payment, _suspended and _canceled, data.id the subscription", async () => {
    const mine = (event) => (d) => d.path === "/subscriptions" && d.body.event === event && d.body.data?.id === flow.sub.id;
    const created = await delivered(mine("subscription_created"), "subscription_created");
    const payment = await delivered(mine("subscription_payment"), "subscription_payment");
    const suspended = await delivered(mine("subscription_suspended"), "subscription_suspended");
    const canceled = await delivered(mine("subscription_canceled"), "subscription_canceled");
    for (const d of [created, payment, suspended, canceled]) {
      assert.equal(d.headers.authorization, "Bearer subscriptions-hook");
      assert.deepEqual(Object.keys(d.body).sort(), ["created_on", "data", "event", "id"]);
      assert.ok(signatureValid(flow.hook.secret, d.headers, d.raw), `bad signature on ${d.body.event}`);
      // The data is a subscription as GET answers it (snake_case).
      assert.equal(d.body.data.store_id, storeId());
      assert.equal(d.body.data.transaction_token_id, flow.token.id);
      assert.equal(d.body.data.schedule_settings.zone_id, ZONE);
    }
    // What EC-CUBE reads of a payment: the subscription's id and amount.
    assert.equal(payment.body.data.amount, 1000);
    assert.equal(payment.body.data.currency, "JPY");
    assert.equal(payment.body.data.status, "current");
    assert.equal(suspended.body.data.status, "suspended");
    assert.equal(canceled.body.data.status, "canceled");
    // The last event's data is the subscription as GET answers it now.
    const raw = await fetch(`${gw.endpoint}/stores/${storeId()}/subscriptions/${flow.sub.id}`, {
      headers: { Authorization: `Bearer ${gw.credentials.secret}.${gw.credentials.jwt}`, Accept: "application/json" },
    });
    assert.deepEqual(canceled.body.data, await raw.json());
  });
});

describe("refusals", () => {
  test("a one-time token: 400 NOT_SUBSCRIPTION_TOKEN", async () => {
    const token = await cardToken("one_time");
    await expectAPIError(gw.sdk.subscriptions.create({ transactionTokenId: token.id, amount: 1000, currency: "JPY", period: "monthly" }), {
      code: "NOT_SUBSCRIPTION_TOKEN",
      httpCode: 400,
    });
  });

  test("a recurring token: 400 NOT_SUBSCRIPTION_TOKEN", async () => {
    const token = await cardToken("recurring");
    await expectAPIError(gw.sdk.subscriptions.create({ transactionTokenId: token.id, amount: 1000, currency: "JPY", period: "monthly" }), {
      code: "NOT_SUBSCRIPTION_TOKEN",
      httpCode: 400,
    });
  });

  test("a subscription token's second subscription: 400 TRANSACTION_ALREADY_PROCESSED", async () => {
    const { token } = await subscribe();
    await expectAPIError(gw.sdk.subscriptions.create({ transactionTokenId: token.id, amount: 1000, currency: "JPY", period: "monthly" }), {
      code: "TRANSACTION_ALREADY_PROCESSED",
      httpCode: 400,
    });
  });

  test("an unknown period or cycle: VALIDATION_ERROR naming the field", async () => {
    const token = await cardToken("subscription");
    const base = { transactionTokenId: token.id, amount: 1000, currency: "JPY" };
    await expectAPIError(gw.sdk.subscriptions.create({ ...base, period: "fortnightly" }), { code: "VALIDATION_ERROR", httpCode: 400, field: "period" });
    await expectAPIError(gw.sdk.subscriptions.create({ ...base, cyclicalPeriod: "10 days" }), {
      code: "VALIDATION_ERROR",
      httpCode: 400,
      field: "cyclical_period",
    });
  });

  test("a declined first charge: the subscription is unpaid, the charge failed with 306", async () => {
    const { sub } = await subscribe({}, CARD_DECLINED);
    const { subscription, charge } = await pollWithFirstCharge(sub.id);
    assert.equal(subscription.status, "unpaid");
    assert.equal(charge.status, "failed");
    assert.equal(charge.error?.code, 306, `error ${JSON.stringify(charge.error)}`);
    assert.equal(charge.subscriptionId, sub.id);
    const unpaid = await gw.sdk.subscriptions.list({ status: "unpaid" });
    assert.ok(unpaid.items.some((s) => s.id === sub.id), "not listed as unpaid");
  });

  test("an unknown subscription: 404 NOT_FOUND", async () => {
    await expectAPIError(gw.sdk.subscriptions.get(storeId(), "01900000-0000-7000-8000-000000000000"), { code: "NOT_FOUND", httpCode: 404 });
  });
});

describe("cycles, plans and simulations", () => {
  test('cyclicalPeriod "P10D": sent as cyclical_period, echoed; the next payment ten days on', async () => {
    const { sub } = await subscribe({ period: undefined, cyclicalPeriod: "P10D" });
    const req = await lastSent("POST", /^\/subscriptions$/);
    assert.equal(req.body.cyclical_period, "P10D");
    assert.equal("period" in req.body, false);
    assert.equal(sub.cyclicalPeriod, "P10D");
    assert.equal(sub.period ?? null, null);
    const { subscription } = await pollWithFirstCharge(sub.id);
    assert.equal(subscription.status, "current");
    assert.equal(subscription.cyclicalPeriod, "P10D");
    assert.equal(subscription.nextPayment.dueDate, addDate(today(), { days: 10 }));
    assert.equal(subscription.nextPayment.isPaid, false);
  });

  test("a fixed_cycles plan of 3: cyclesLeft counts down; the last payment says so", async () => {
    const { sub } = await subscribe({ subscriptionPlan: { planType: "fixed_cycles", fixedCycles: 3 } });
    const req = await lastSent("POST", /^\/subscriptions$/);
    assert.deepEqual(req.body.subscription_plan, { plan_type: "fixed_cycles", fixed_cycles: 3 });
    assert.equal(sub.subscriptionPlan.planType, "fixed_cycles");
    assert.equal(sub.subscriptionPlan.fixedCycles, 3);
    const { subscription } = await pollWithFirstCharge(sub.id);
    assert.equal(subscription.status, "current");
    // One paid, two to go, 2000 yen of them.
    assert.equal(subscription.cyclesLeft, 2);
    assert.equal(subscription.amountLeft, 2000);
    assert.equal(subscription.amountLeftFormatted, 2000);
    assert.equal(subscription.nextPayment.isLastPayment, false);
    // The last payment of the plan, once the second is marked paid.
    const second = await gw.sdk.subscriptions.payments.update(storeId(), sub.id, subscription.nextPayment.id, { isPaid: true });
    assert.equal(second.isPaid, true);
    const after = await gw.sdk.subscriptions.get(storeId(), sub.id);
    assert.equal(after.cyclesLeft, 1);
    assert.equal(after.nextPayment.isLastPayment, true);
    assert.equal(after.nextPayment.dueDate, addDate(today(), { months: 2 }));
  });

  test("a fixed_cycle_amount plan: the last payment takes what is left", async () => {
    const { sub } = await subscribe({ subscriptionPlan: { planType: "fixed_cycle_amount", fixedCycleAmount: 2500 } });
    assert.equal(sub.subscriptionPlan.planType, "fixed_cycle_amount");
    assert.equal(sub.subscriptionPlan.fixedCycleAmount, 2500);
    const { subscription } = await pollWithFirstCharge(sub.id);
    assert.equal(subscription.amountLeft, 1500);
    assert.equal(subscription.cyclesLeft, 2);
  });

  test("sdk.subscriptions.simulation (POST /subscriptions/simulate_plan) answers the payments as an array", async () => {
    const payments = await gw.sdk.subscriptions.simulation({
      paymentType: "card",
      amount: 1000,
      currency: "JPY",
      period: "monthly",
      installmentPlan: { planType: "fixed_cycles", fixedCycles: 3 },
    });
    const req = await lastSent("POST", /simulate_plan$/);
    assert.equal(req.path, "/subscriptions/simulate_plan");
    assert.deepEqual(req.body.installment_plan, { plan_type: "fixed_cycles", fixed_cycles: 3 });
    assert.ok(Array.isArray(payments), `not an array: ${JSON.stringify(payments)}`);
    assert.deepEqual(
      payments.map((p) => [p.dueDate, p.amount, p.currency, p.isPaid, p.isLastPayment, p.zoneId]),
      [
        [today(), 1000, "JPY", false, false, ZONE],
        [addDate(today(), { months: 1 }), 1000, "JPY", false, false, ZONE],
        [addDate(today(), { months: 2 }), 1000, "JPY", false, true, ZONE],
      ],
    );
  });

  test("sdk.subscriptions.simulation on the store's path, with an initial amount and a zone", async () => {
    const payments = await gw.sdk.subscriptions.simulation(
      {
        paymentType: "card",
        amount: 1000,
        initialAmount: 3000,
        currency: "JPY",
        cyclicalPeriod: "P1W",
        scheduleSettings: { zoneId: "Europe/Paris" },
      },
      undefined,
      storeId(),
    );
    assert.equal((await lastSent("POST", /simulate_plan$/)).path, `/stores/${storeId()}/subscriptions/simulate_plan`);
    // Unlimited: the first twelve.
    assert.equal(payments.length, 12);
    const first = today("Europe/Paris");
    assert.deepEqual(
      payments.slice(0, 3).map((p) => [p.dueDate, p.amount, p.zoneId]),
      [
        [first, 3000, "Europe/Paris"],
        [addDate(first, { days: 7 }), 1000, "Europe/Paris"],
        [addDate(first, { days: 14 }), 1000, "Europe/Paris"],
      ],
    );
    assert.ok(payments.every((p) => p.isLastPayment === false));
  });
});

describe("initial amounts, later starts, and changes", () => {
  test("initialAmount 3000: the first charge is 3000, the recurring payments start a month on", async () => {
    const { sub } = await subscribe({ initialAmount: 3000 });
    assert.equal(sub.initialAmount, 3000);
    assert.equal(sub.initialAmountFormatted, 3000);
    assert.equal(sub.nextPayment.amount, 3000);
    assert.equal(sub.nextPayment.dueDate, today());
    const { subscription, charge } = await pollWithFirstCharge(sub.id);
    assert.equal(charge.status, "successful");
    assert.equal(charge.chargedAmount, 3000);
    assert.equal(subscription.status, "current");
    assert.equal(subscription.nextPayment.amount, 1000);
    assert.equal(subscription.nextPayment.dueDate, addDate(today(), { months: 1 }));
    // start_on is the day the recurring payments start (as UnivaPay's own
    // answers have it beside an initial amount).
    assert.equal(subscription.scheduleSettings.startOn, addDate(today(), { months: 1 }));
    // schedule_settings as read may be sent back whole.
    const same = await gw.sdk.subscriptions.update(storeId(), sub.id, { scheduleSettings: subscription.scheduleSettings });
    const req = await lastSent("PATCH", new RegExp(`/subscriptions/${sub.id}$`));
    assert.equal(req.body.schedule_settings.start_on, subscription.scheduleSettings.startOn);
    assert.deepEqual(plain(same.scheduleSettings), plain(subscription.scheduleSettings));
  });

  test("initialAmount 0 (a free first period): pollSubscriptionWithFirstCharge resolves without a charge", async () => {
    // The SDK polls for a first charge unless initial_amount is falsy and
    // schedule_settings.start_on is in the future (hasImmediateCharge in
    // resources/Subscriptions.js): start_on must say when the paid cycles
    // start, or it waits ten minutes for a charge that never comes.
    const { sub } = await subscribe({ initialAmount: 0 });
    assert.equal(sub.initialAmount, 0);
    assert.equal(sub.status, "current");
    assert.equal(sub.scheduleSettings.startOn, addDate(today(), { months: 1 }));
    const { subscription, charge } = await pollWithFirstCharge(sub.id);
    assert.equal(subscription.status, "current");
    assert.equal(charge ?? null, null);
    assert.equal(subscription.nextPayment.amount, 1000);
    assert.equal(subscription.nextPayment.dueDate, addDate(today(), { months: 1 }));
    assert.deepEqual((await gw.sdk.subscriptions.charges(storeId(), sub.id)).items, []);
  });

  test("scheduleSettings.startOn ten days ahead: no charge now; the first payment due then", async () => {
    const startOn = addDate(today(), { days: 10 });
    const { sub } = await subscribe({ scheduleSettings: { startOn, zoneId: ZONE } });
    const req = await lastSent("POST", /^\/subscriptions$/);
    assert.deepEqual(req.body.schedule_settings, { start_on: startOn, zone_id: ZONE });
    assert.equal(sub.status, "current");
    assert.equal(sub.scheduleSettings.startOn, startOn);
    assert.equal(sub.nextPayment.dueDate, startOn);
    assert.equal(sub.nextPayment.isPaid, false);
    const { subscription, charge } = await pollWithFirstCharge(sub.id);
    assert.equal(subscription.status, "current");
    assert.equal(charge ?? null, null);
  });

  test("sdk.subscriptions.updateToken moves the subscription to another subscription token", async () => {
    const { sub } = await subscribe();
    await pollWithFirstCharge(sub.id);
    const other = await cardToken("subscription");
    const moved = await gw.sdk.subscriptions.updateToken(storeId(), sub.id, { transactionTokenId: other.id });
    const req = await lastSent("PATCH", /\/token$/);
    assert.equal(req.path, `/stores/${storeId()}/subscriptions/${sub.id}/token`);
    assert.deepEqual(req.body, { transaction_token_id: other.id });
    assert.equal(moved.transactionTokenId, other.id);
    assert.equal(moved.status, "current");
  });

  test("suspend on_next_payment: still current, its next payment set to suspend it", async () => {
    const { sub } = await subscribe();
    await pollWithFirstCharge(sub.id);
    const later = await gw.sdk.subscriptions.suspend(storeId(), sub.id, { scheduleSettings: { terminationMode: "on_next_payment" } });
    const req = await lastSent("PATCH", /\/suspend$/);
    assert.deepEqual(req.body, { schedule_settings: { termination_mode: "on_next_payment" } });
    assert.equal(later.status, "current");
    assert.equal(later.nextPayment.terminateWithStatus, "suspended");
    // unsuspend withdraws it.
    const kept = await gw.sdk.subscriptions.unsuspend(storeId(), sub.id);
    assert.equal(kept.status, "current");
    assert.equal(kept.nextPayment.terminateWithStatus ?? null, null);
  });

  test("delete on_next_payment (sent in the query, as univapay-node sends a DELETE's data): current until then", async () => {
    const { sub } = await subscribe();
    await pollWithFirstCharge(sub.id);
    await gw.sdk.subscriptions.delete(storeId(), sub.id, { scheduleSettings: { terminationMode: "on_next_payment" } });
    const req = await lastSent("DELETE", /\/subscriptions\//);
    assert.equal(decodeURIComponent(req.query), "?schedule_settings.termination_mode=on_next_payment");
    const got = await gw.sdk.subscriptions.get(storeId(), sub.id);
    assert.equal(got.status, "current");
    assert.equal(got.nextPayment.terminateWithStatus, "canceled");
  });

  test("update status suspended, then unpaid to resume (the reference's PATCH)", async () => {
    const { sub } = await subscribe();
    await pollWithFirstCharge(sub.id);
    assert.equal((await gw.sdk.subscriptions.update(storeId(), sub.id, { status: "suspended" })).status, "suspended");
    assert.equal((await gw.sdk.subscriptions.update(storeId(), sub.id, { status: "unpaid" })).status, "current");
  });

  test("sdk.subscriptions.payments.update moves the next payment's due date", async () => {
    const { sub } = await subscribe();
    const { subscription } = await pollWithFirstCharge(sub.id);
    const dueDate = addDate(today(), { days: 40 });
    const moved = await gw.sdk.subscriptions.payments.update(storeId(), sub.id, subscription.nextPayment.id, { dueDate });
    const req = await lastSent("PATCH", /\/payments\//);
    assert.deepEqual(req.body, { due_date: dueDate });
    assert.equal(moved.id, subscription.nextPayment.id);
    assert.equal(moved.dueDate, dueDate);
    assert.equal((await gw.sdk.subscriptions.get(storeId(), sub.id)).nextPayment.dueDate, dueDate);
  });

  test("metadata as a stringified JSON object (SubscriptionCreateParams allows it) is the object", async () => {
    const { sub } = await subscribe({ metadata: JSON.stringify({ order_id: "as-string", n: 3 }) });
    const req = await lastSent("POST", /^\/subscriptions$/);
    assert.equal(typeof req.body.metadata, "string");
    assert.deepEqual(plain(sub.metadata), { order_id: "as-string", n: 3 });
    const updated = await gw.sdk.subscriptions.update(storeId(), sub.id, { metadata: JSON.stringify({ n: 4 }) });
    assert.deepEqual(plain(updated.metadata), { order_id: "as-string", n: 4 });
  });

  test("sdk.subscriptions.list({search}) finds a subscription by its metadata and its token's e-mail", async () => {
    const { sub } = await subscribe({ metadata: { order_id: "searchable-order-77" } });
    const byMeta = await gw.sdk.subscriptions.list({ search: "searchable-order-77" });
    assert.deepEqual(
      byMeta.items.map((s) => s.id),
      [sub.id],
    );
    const byEmail = await gw.sdk.subscriptions.list({ search: "subscriber@example.com", limit: 100 });
    assert.ok(byEmail.items.some((s) => s.id === sub.id));
  });

  test("the next payment moved to today is charged by the scheduler: a second charge, a third payment", async () => {
    const { sub } = await subscribe({ metadata: { order_id: "sub-recurring" } });
    const { subscription, charge: first } = await pollWithFirstCharge(sub.id);
    await gw.sdk.subscriptions.payments.update(storeId(), sub.id, subscription.nextPayment.id, { dueDate: today() });
    const charges = await eventually(
      () => gw.sdk.subscriptions.charges(storeId(), sub.id),
      ({ items }) => items.length === 2 && items.every((c) => c.status !== "pending"),
      "the second charge",
    );
    const [second] = charges.items; // newest first
    assert.notEqual(second.id, first.id);
    assert.equal(second.status, "successful");
    assert.equal(second.chargedAmount, 1000);
    assert.equal(second.subscriptionId, sub.id);
    assert.equal(second.transactionTokenType, "subscription");
    // The subscription's metadata rides on each of its charges.
    assert.deepEqual(plain(second.metadata), { order_id: "sub-recurring" });
    const payments = await gw.sdk.subscriptions.payments.list(storeId(), sub.id);
    assert.deepEqual(
      payments.items.map((p) => p.isPaid),
      [false, true, true],
    );
    // The third is due a month after the second's place on the schedule.
    assert.equal(payments.items[0].dueDate, addDate(today(), { months: 2 }));
    const after = await gw.sdk.subscriptions.get(storeId(), sub.id);
    assert.equal(after.status, "current");
    assert.equal(after.nextPayment.id, payments.items[0].id);
  });

  test("sdk.subscriptions.list pages with cursor, newest first; asc reverses it", async () => {
    const walk = async (params) => {
      const ids = [];
      let cursor;
      for (let guard = 0; guard < 50; guard++) {
        const page = await gw.sdk.subscriptions.list({ limit: 10, ...params, ...(cursor && { cursor }) });
        assert.ok(page.items.length <= 10);
        ids.push(...page.items.map((s) => s.id));
        if (!page.hasMore) return ids;
        cursor = page.items.at(-1).id;
      }
      assert.fail("more than 50 pages");
    };
    const desc = await walk({});
    assert.ok(desc.length > 10, `only ${desc.length} subscriptions`);
    assert.equal(new Set(desc).size, desc.length, "a subscription on two pages");
    const asc = await walk({ cursorDirection: "asc" });
    assert.deepEqual(asc, [...desc].reverse());
  });

  test("firstChargeAuthorizationOnly with firstChargeCaptureAfter P3D: the first charge is authorized", async () => {
    const { sub } = await subscribe({ firstChargeAuthorizationOnly: true, firstChargeCaptureAfter: "P3D" });
    const req = await lastSent("POST", /^\/subscriptions$/);
    assert.equal(req.body.first_charge_authorization_only, true);
    assert.equal(req.body.first_charge_capture_after, "P3D");
    assert.equal(sub.firstChargeAuthorizationOnly, true);
    assert.equal(sub.firstChargeCaptureAfter, "P3D");
    const { charge } = await pollWithFirstCharge(sub.id);
    assert.equal(charge.status, "authorized");
    assert.ok(charge.captureAt, "no capture_at");
  });
});

describe("3-D Secure on the first charge", () => {
  test('threeDs {mode:"force"}: the first charge awaits its challenge; answered, the subscription is current', async () => {
    const { sub } = await subscribe({ threeDs: { mode: "force", redirectEndpoint: "https://shop.example/3ds/done", redirectId: "sub-3ds-1" } });
    const req = await lastSent("POST", /^\/subscriptions$/);
    assert.deepEqual(req.body.three_ds, { mode: "force", redirect_endpoint: "https://shop.example/3ds/done", redirect_id: "sub-3ds-1" });
    assert.equal(sub.threeDs.mode, "force");
    assert.equal(sub.threeDs.redirectEndpoint, "https://shop.example/3ds/done");

    // The widget's way: the subscription's first charge, polled to awaiting.
    const { items } = await gw.sdk.subscriptions.charges(storeId(), sub.id);
    assert.equal(items.length, 1);
    const ch = await pollCharge(items[0].id, (c) => c.status !== "pending");
    assert.equal(ch.status, "awaiting");
    assert.equal(ch.threeDs.mode, "force");
    assert.equal(ch.threeDs.redirectEndpoint, "https://shop.example/3ds/done");
    assert.equal(ch.subscriptionId, sub.id);
    // The subscription waits on it.
    assert.equal((await gw.sdk.subscriptions.get(storeId(), sub.id)).status, "unverified");

    const it = await gw.sdk.charges.threeDsIssuerToken(storeId(), ch.id);
    assert.equal(it.callMethod, "http_post");
    assert.equal(it.paymentType, "card");
    assert.deepEqual(plain(it.payload), { resource_id: ch.id, resource_type: "charge" });
    assert.match(it.issuerToken, new RegExp(`^${gw.endpoint}/sandbox/3ds/[A-Z2-7]{26}$`));

    const res = await fetch(`${it.issuerToken}/act`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ action: "answer", code: CHALLENGE_CODE }),
    });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).status, "successful");

    const done = await pollCharge(ch.id, (c) => !["pending", "awaiting"].includes(c.status));
    assert.equal(done.status, "successful");
    assert.equal(done.threeDs.status, "successful");
    const current = await pollSubscription(sub.id);
    assert.equal(current.status, "current");
  });
});

describe("from a browser, as the widget makes one", () => {
  test("a browser token makes the token and the subscription, and waits on its first charge; lists need the secret", async () => {
    const browser = gw.makeSDK({ secret: undefined, origin: gw.endpoint });
    const token = await cardToken("subscription", CARD_SUCCESS, browser);
    const sub = await browser.subscriptions.create({ transactionTokenId: token.id, amount: 1200, currency: "JPY", period: "monthly" });
    assert.equal(sub.transactionTokenId, token.id);
    const { subscription, charge } = await pollWithFirstCharge(sub.id, browser);
    assert.equal(subscription.status, "current");
    assert.equal(charge.status, "successful");
    assert.equal(charge.chargedAmount, 1200);
    await expectAPIError(browser.subscriptions.list(), { code: "INVALID_PERMISSIONS", httpCode: 403 });
    await expectAPIError(browser.subscriptions.delete(storeId(), sub.id), { code: "INVALID_PERMISSIONS", httpCode: 403 });
    assert.equal((await gw.sdk.subscriptions.get(storeId(), sub.id)).status, "current");
  });
});
