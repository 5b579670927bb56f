// Konbini payments and bank transfers through univapay-node, unchanged:
// tokens of every store the SDK's ConvenienceStore lists and of every
// BankTransferBrand, read back as the SDK types them; charges polled to
// awaiting, their issuer tokens (sdk.charges.getIssuerToken) and payment
// deadlines (sdk.charges.expiry, GET …/expiry/latest); the shopper's part
// played by the sandbox's test helpers (POST …/test_helpers/pay, deposit,
// expire), which the SDK has no call for, as the bank transfer's ledger
// (GET …/bank_transfer_ledgers) and the deadline's extension (POST
// …/expiry) have none; the webhooks (charge_updated, charge_finished,
// bank_transfer_status_updated, refund_finished, cancel_finished) at a receiver of this
// file's; cancels and refunds; and the refusals as the SDK surfaces them.
//
// In the scale-out modes every token and charge is made through the
// process that seeded the demo account (creator()) and everything else
// goes through the other, which the SDK's endpoint names (gw.sdk, gw.endpoint):
// reads, test helpers, cancels, refunds. So a test helper that arrives
// while the charge is still pending waits for another process's worker,
// and the webhooks come from whichever process did the work. On one
// process both are the same.

import { describe, test } from "node:test";
import assert from "node:assert/strict";

import { BankTransferBrand, ConvenienceStore } from "univapay-node";

import { expectAPIError, useGateway, useWebhookReceiver, webhookSignatureValid } from "./harness.mjs";

const gw = useGateway({ env: { KESSAI_POLL_WAIT: "250ms" } });
const receiver = useWebhookReceiver();

const HOOK_AUTH = "Bearer konbini-transfer-hook";
const TRIGGERS = ["charge_updated", "charge_finished", "bank_transfer_status_updated", "refund_finished", "cancel_finished"];
const hook = {};

const storeId = () => gw.credentials.store_id;
const HOUR = 3600_000;
const DAY = 24 * HOUR;

/** The SDK tokens and charges are made with: the first process's. */
let creatorSDK;
function creator() {
  creatorSDK ??= gw.endpoints.length > 1 ? gw.makeSDK({ endpoint: gw.endpoints[0] }) : gw.sdk;
  return creatorSDK;
}

/**
 * A request with the SDK's own auth header to the process the SDK reads
 * from, for routes univapay-node has no method for. Resolves to [status,
 * parsed body].
 */
async function call(method, path, body) {
  const res = await fetch(`${gw.endpoint}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${gw.credentials.secret}.${gw.credentials.jwt}`,
      Accept: "application/json",
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/, `${method} ${path}: ${res.status} ${text}`);
  return [res.status, JSON.parse(text)];
}

/** A test helper of the charge id; resolves to the charge it answers. */
async function helper(id, action, body = {}) {
  const [status, ch] = await call("POST", `/stores/${storeId()}/charges/${id}/test_helpers/${action}`, body);
  assert.equal(status, 200, `test_helpers/${action}: ${status} ${JSON.stringify(ch)}`);
  return ch;
}

/** The bank transfer's ledger, as GET answers it (newest first unless asc). */
async function ledger(id, query = "") {
  const [status, page] = await call("GET", `/stores/${storeId()}/charges/${id}/bank_transfer_ledgers${query}`);
  assert.equal(status, 200, `ledger: ${status} ${JSON.stringify(page)}`);
  return page;
}

const konbiniToken = (data, extra = {}) =>
  creator().transactionTokens.create({
    paymentType: "konbini",
    type: "one_time",
    email: "buyer@example.jp",
    ...extra,
    data: {
      customerName: "山田 太郎",
      convenienceStore: ConvenienceStore.SEVEN_ELEVEN,
      phoneNumber: { countryCode: "81", localNumber: "090-1234-5678" },
      ...data,
    },
  });

const transferToken = (data, extra = {}) =>
  creator().transactionTokens.create({
    paymentType: "bank_transfer",
    type: "one_time",
    email: "buyer@example.jp",
    ...extra,
    data: { brand: BankTransferBrand.AOZORA_BANK, ...data },
  });

const createCharge = (tokenId, params = {}) =>
  creator().charges.create({ transactionTokenId: tokenId, amount: 1000, currency: "JPY", ...params });

const pollCharge = (id, cond) =>
  gw.sdk.charges.poll(storeId(), id, undefined, undefined, { timeout: 15_000, interval: 50, successCondition: cond });

const isAwaiting = (ch) => ch.status === "awaiting";
const hasEnded = (ch) => !["pending", "awaiting"].includes(ch.status);

/** A charge of a fresh token, polled to awaiting through the other process. */
async function awaitingCharge(token, params) {
  const created = await createCharge(token.id, params);
  assert.equal(created.status, "pending");
  const ch = await pollCharge(created.id, (c) => c.status !== "pending");
  assert.equal(ch.status, "awaiting", `charge ${created.id} went ${ch.status}: ${JSON.stringify(ch.error)}`);
  return ch;
}

/** The first delivery to this file's webhook of event whose data matches cond, checked as a delivery. */
async function webhook(event, cond, what) {
  const d = await receiver.delivered((x) => x.path === "/hook" && x.body.event === event && cond(x.body.data), `${event} ${what}`);
  assert.equal(d.headers.authorization, HOOK_AUTH);
  assert.deepEqual(Object.keys(d.body).sort(), ["created_on", "data", "event", "id"]);
  assert.ok(!Number.isNaN(Date.parse(d.body.created_on)), `created_on ${d.body.created_on}`);
  assert.ok(webhookSignatureValid(hook.secret, d.headers, d.raw), `bad signature on ${d.raw}`);
  return d.body;
}

/** What the SDK handed back, as plain JSON (it builds some objects without a prototype). */
const plain = (v) => JSON.parse(JSON.stringify(v));

const japanDate = (t) => new Date(Date.parse(t) + 9 * HOUR).toISOString().slice(0, 10);

describe("a webhook for what this file announces", () => {
  test("sdk.webHooks.create: charge_updated, charge_finished, bank_transfer_status_updated, refund_finished, cancel_finished", async (t) => {
    t.diagnostic(`tokens and charges made through ${gw.endpoints[0]}, the rest through ${gw.endpoint}`);
    const made = await gw.sdk.webHooks.create({ triggers: TRIGGERS, url: `${receiver.base}/hook`, authToken: HOOK_AUTH }, undefined, storeId());
    assert.deepEqual(made.triggers, TRIGGERS);
    Object.assign(hook, made);
  });
});

describe("konbini tokens of every store the SDK lists", () => {
  const stores = Object.values(ConvenienceStore);
  // Periods in each form the SDKs send (PHP's days, hours, weeks) or none,
  // and time shifts in the Node SDK's (with milliseconds) and Ruby's forms.
  const periods = ["P7D", "P30D", "PT240H", "P2W", undefined];
  const shifts = ["23:59:59+09:00", undefined, "09:00:00.000+09:00"];
  const tokens = {};

  test("the SDK lists the ten stores Kessai takes", () => {
    assert.deepEqual(stores.sort(), [
      "circle_k",
      "daily_yamazaki",
      "family_mart",
      "lawson",
      "mini_stop",
      "pay_easy",
      "seico_mart",
      "seven_eleven",
      "sunkus",
      "yamazaki_daily_store",
    ]);
  });

  test("sdk.transactionTokens.create makes one of each; the period comes back in hours, the number without hyphens", async () => {
    for (const [i, store] of stores.entries()) {
      const period = periods[i % periods.length];
      const shift = shifts[i % shifts.length];
      const tok = await konbiniToken(
        {
          customerName: `ヤマダ タロウ ${i}`,
          convenienceStore: store,
          phoneNumber: { countryCode: "81", localNumber: i % 2 ? "03-1234-5678" : "090 1234 5678" },
          ...(period && { expirationPeriod: period }),
          ...(shift && { expirationTimeShift: shift }),
        },
        { metadata: { order_id: `konbini-${i}` } },
      );
      assert.match(tok.id, /^[0-9a-f-]{36}$/);
      assert.equal(tok.paymentType, "konbini");
      assert.equal(tok.type, "one_time");
      assert.equal(tok.mode, "test");
      assert.equal(tok.active, true);
      assert.equal(tok.email, "buyer@example.jp");
      assert.deepEqual(plain(tok.metadata), { order_id: `konbini-${i}` });
      const hours = { P7D: 168, P30D: 720, PT240H: 240, P2W: 336 }[period] ?? 720;
      assert.deepEqual(plain(tok.data), {
        customerName: `ヤマダ タロウ ${i}`,
        convenienceStore: store,
        expirationPeriod: `PT${hours}H`,
        // The shift as the SDKs send it, without milliseconds; null when none.
        expirationTimeShift: shift ? shift.replace(".000", "") : null,
        // The country code an integer, as UnivaPay answers it.
        phoneNumber: { countryCode: 81, localNumber: i % 2 ? "0312345678" : "09012345678" },
      });
      tokens[store] = { tok, period: hours * HOUR, shift };
    }
  });

  test("sdk.transactionTokens.get (the other process) answers each as it was made", async () => {
    for (const { tok } of Object.values(tokens)) {
      const got = await gw.sdk.transactionTokens.get(storeId(), tok.id);
      assert.deepEqual(plain(got), plain(tok));
    }
  });

  test("sdk.transactionTokens.list with paymentType konbini lists them all, and nothing else", async () => {
    const list = await gw.sdk.transactionTokens.list({ paymentType: "konbini", limit: 100 }, undefined, storeId());
    const ids = list.items.map((t) => t.id);
    for (const { tok } of Object.values(tokens)) assert.ok(ids.includes(tok.id), `${tok.id} not listed`);
    assert.deepEqual([...new Set(list.items.map((t) => t.paymentType))], ["konbini"]);
  });

  test("a charge of each: awaiting with its deadline as captureAt, sdk.charges.expiry the same, the issuer token the store's slip", async () => {
    for (const [i, store] of stores.entries()) {
      const { tok, period, shift } = tokens[store];
      const ch = await awaitingCharge(tok, { amount: 1000 + i, metadata: { slip: store } });
      assert.equal(ch.transactionTokenId, tok.id);
      assert.equal(ch.requestedAmount, 1000 + i);
      assert.equal(ch.requestedCurrency, "JPY");
      assert.equal(ch.chargedAmount, null);
      assert.equal(ch.error, null);

      // The deadline: the token's period from now, moved to the shift's
      // time of day (in Japan) on that day, or on the next when that time
      // has passed by the period's end: never less than the period.
      const deadline = Date.parse(ch.captureAt);
      const from = Date.parse(ch.createdOn) + period;
      if (shift) {
        const [hh, mm, ss] = shift.slice(0, 8).split(":").map(Number);
        const jst = new Date(deadline + 9 * HOUR);
        assert.deepEqual([jst.getUTCHours(), jst.getUTCMinutes(), jst.getUTCSeconds()], [hh, mm, ss], `deadline ${ch.captureAt}`);
        assert.ok(deadline >= from && deadline < from + 24 * HOUR + 60_000, `deadline ${ch.captureAt} for ${ch.createdOn}`);
      } else {
        assert.ok(deadline >= from && deadline < from + 60_000, `deadline ${ch.captureAt}, ${period / HOUR} h after ${ch.createdOn}`);
      }

      const expiry = await gw.sdk.charges.expiry(ch.id, undefined, undefined, storeId());
      assert.deepEqual(Object.keys(expiry).sort(), ["chargeId", "createdOn", "expirationDate", "extensionCount", "id", "storeId", "updatedOn"]);
      assert.equal(expiry.chargeId, ch.id);
      assert.equal(expiry.storeId, storeId());
      assert.equal(expiry.extensionCount, 0);
      assert.equal(Date.parse(expiry.expirationDate), deadline);

      const it = await gw.sdk.charges.getIssuerToken(storeId(), ch.id);
      assert.match(it.issuerToken, new RegExp(`^${gw.endpoint}/sandbox/pay/[A-Z2-7]{26}$`));
      assert.equal(it.callMethod, "http_get");
      assert.equal(it.paymentType, "konbini");
      // The SDK camel-cases the payload's keys.
      const { paymentNumber, confirmationNumber, expirationDate, ...rest } = plain(it.payload);
      assert.deepEqual(rest, {
        resourceId: ch.id,
        resourceType: "charge",
        amount: String(1000 + i),
        currency: "JPY",
        convenienceStore: store,
        customerName: tok.data.customerName,
      });
      assert.equal(Date.parse(expirationDate), Math.floor(deadline / 1000) * 1000);
      assert.match(paymentNumber, /^\d{11,13}$/);
      // Seven-Eleven's counter asks for the slip number alone.
      if (store === "seven_eleven") assert.equal(confirmationNumber, undefined);
      else assert.match(confirmationNumber, /^\d{5,6}$/);
      tokens[store].charge = ch;
    }
  });

  test("charge_updated announced each one awaiting", async () => {
    for (const { charge } of Object.values(tokens)) {
      const ev = await webhook("charge_updated", (d) => d.id === charge.id && d.status === "awaiting", `of ${charge.id}`);
      assert.equal(ev.data.capture_at, (await call("GET", `/stores/${storeId()}/charges/${charge.id}`))[1].capture_at);
    }
  });

  test("paid at the counter (test_helpers/pay): successful, charge_finished; no refund (REFUND_NOT_ALLOWED) nor cancel", async () => {
    const { charge } = tokens.seven_eleven;
    const answered = await helper(charge.id, "pay");
    assert.equal(answered.id, charge.id);
    assert.equal(answered.status, "successful");
    const ch = await pollCharge(charge.id, hasEnded);
    assert.equal(ch.status, "successful");
    assert.equal(ch.chargedAmount, charge.requestedAmount);
    assert.equal(ch.chargedCurrency, "JPY");
    assert.equal(ch.error, null);

    const ev = await webhook("charge_finished", (d) => d.id === charge.id, "of the paid charge");
    assert.equal(ev.data.status, "successful");
    assert.equal(ev.data.charged_amount, charge.requestedAmount);
    assert.deepEqual(ev.data.metadata, { slip: "seven_eleven" });

    await expectAPIError(gw.sdk.refunds.create(storeId(), charge.id, { amount: 100, currency: "JPY", reason: "customer_request" }), {
      code: "REFUND_NOT_ALLOWED",
      httpCode: 400,
    });
    await expectAPIError(gw.sdk.refunds.create(storeId(), charge.id, { amount: charge.requestedAmount, currency: "JPY" }), {
      code: "REFUND_NOT_ALLOWED",
      httpCode: 400,
    });
    await expectAPIError(gw.sdk.cancels.create(storeId(), charge.id, {}), { code: "CANCEL_NOT_ALLOWED", httpCode: 400 });
    // Paid, the slip is gone.
    await expectAPIError(gw.sdk.charges.getIssuerToken(storeId(), charge.id), { code: "VALIDATION_ERROR", httpCode: 400, field: "status" });
    assert.equal((await gw.sdk.charges.get(storeId(), charge.id)).status, "successful");
  });

  test("the deadline passes (test_helpers/expire): failed with 327 CONFIRMATION_PERIOD_EXPIRED, charge_finished", async () => {
    const { charge } = tokens.family_mart;
    const answered = await helper(charge.id, "expire");
    assert.equal(answered.status, "failed");
    const ch = await pollCharge(charge.id, hasEnded);
    assert.equal(ch.status, "failed");
    assert.equal(ch.error.code, 327);
    assert.equal(ch.chargedAmount, null);
    const ev = await webhook("charge_finished", (d) => d.id === charge.id, "of the expired charge");
    assert.equal(ev.data.status, "failed");
    assert.equal(ev.data.error.code, 327);
    // Too late to pay: the charge stays failed.
    const [status, body] = await call("POST", `/stores/${storeId()}/charges/${charge.id}/test_helpers/pay`, {});
    assert.equal(status, 400);
    assert.deepEqual(body.errors, [{ field: "status", reason: "INVALID_CHARGE_STATUS" }]);
    assert.equal((await gw.sdk.charges.get(storeId(), charge.id)).status, "failed");
  });

  test("sdk.cancels.create while awaiting: canceled, cancel_finished and charge_finished", async () => {
    const { charge } = tokens.lawson;
    const cancel = await gw.sdk.cancels.create(storeId(), charge.id, { metadata: { why: "out of stock" } });
    assert.equal(cancel.chargeId, charge.id);
    const ch = await pollCharge(charge.id, hasEnded);
    assert.equal(ch.status, "canceled");
    assert.equal(ch.chargedAmount, null);
    const ev = await webhook("charge_finished", (d) => d.id === charge.id, "of the canceled charge");
    assert.equal(ev.data.status, "canceled");
    await webhook("cancel_finished", (d) => d.charge_id === charge.id, "of the canceled charge");
    // Canceled, it can no longer be paid nor read as a slip.
    const [status, body] = await call("POST", `/stores/${storeId()}/charges/${charge.id}/test_helpers/pay`, {});
    assert.equal(status, 400);
    assert.deepEqual(body.errors, [{ field: "status", reason: "INVALID_CHARGE_STATUS" }]);
    assert.equal((await gw.sdk.charges.get(storeId(), charge.id)).status, "canceled");
    await expectAPIError(gw.sdk.charges.getIssuerToken(storeId(), charge.id), { code: "VALIDATION_ERROR", httpCode: 400, field: "status" });
  });

  test("the token is spent: a second charge of it is refused", async () => {
    const { tok } = tokens.mini_stop;
    await expectAPIError(createCharge(tok.id), { code: "TRANSACTION_ALREADY_PROCESSED", httpCode: 400 });
  });
});

describe("from a browser (the app token without its secret), as a checkout page pays", () => {
  test("a konbini token and charge; its issuer token, for the charge it made; the test helpers need the secret", async () => {
    const browser = gw.makeSDK({ secret: undefined, origin: gw.endpoint });
    const tok = await browser.transactionTokens.create({
      paymentType: "konbini",
      type: "one_time",
      data: { customerName: "佐藤 花子", convenienceStore: ConvenienceStore.LAWSON, phoneNumber: { countryCode: "81", localNumber: "08011112222" } },
    });
    assert.equal(tok.data.convenienceStore, "lawson");
    const created = await browser.charges.create({ transactionTokenId: tok.id, amount: 3300, currency: "JPY" });
    const ch = await browser.charges.poll(storeId(), created.id, undefined, undefined, {
      timeout: 15_000,
      interval: 50,
      successCondition: (c) => c.status !== "pending",
    });
    assert.equal(ch.status, "awaiting");
    const it = await browser.charges.getIssuerToken(storeId(), ch.id);
    assert.equal(it.paymentType, "konbini");
    assert.equal(it.payload.convenienceStore, "lawson");
    assert.deepEqual(plain(it), plain(await gw.sdk.charges.getIssuerToken(storeId(), ch.id)));
    assert.deepEqual(plain(await browser.charges.expiry(ch.id, undefined, undefined, storeId())), plain(await gw.sdk.charges.expiry(ch.id, undefined, undefined, storeId())));

    // Not a charge the browser made: its slip is the merchant's to hand out.
    const other = await awaitingCharge(await konbiniToken({}));
    await expectAPIError(browser.charges.getIssuerToken(storeId(), other.id), { code: "INVALID_PERMISSIONS", httpCode: 403 });
    const res = await fetch(`${gw.endpoint}/stores/${storeId()}/charges/${ch.id}/test_helpers/pay`, {
      method: "POST",
      headers: { Authorization: `Bearer ${gw.credentials.jwt}`, Origin: gw.endpoint, "Content-Type": "application/json" },
      body: "{}",
    });
    assert.equal(res.status, 403, await res.text());
    assert.equal((await gw.sdk.charges.get(storeId(), ch.id)).status, "awaiting");
  });
});

describe("bank-transfer tokens of every BankTransferBrand", () => {
  test("sdk.transactionTokens.create opens a virtual account in the store's name; get answers the same", async () => {
    const store = await gw.sdk.stores.get(storeId());
    const brands = Object.values(BankTransferBrand);
    assert.deepEqual(brands.sort(), ["aozora_bank", "bank_test_brand"]);
    const numbers = new Set();
    for (const [i, brand] of brands.entries()) {
      const data = i === 0 ? { brand, expirationPeriod: "P3D", expirationTimeShift: "15:00:00+09:00" } : { brand };
      const tok = await transferToken(data, { metadata: { order_id: `transfer-${brand}` } });
      assert.equal(tok.paymentType, "bank_transfer");
      assert.equal(tok.type, "one_time");
      assert.equal(tok.mode, "test");
      const d = plain(tok.data);
      assert.deepEqual(Object.keys(d).sort(), [
        "accountHolderName",
        "accountId",
        "accountNumber",
        "bankCode",
        "bankName",
        "branchCode",
        "branchName",
        "brand",
        "expirationPeriod",
        "expirationTimeShift",
      ]);
      assert.equal(d.brand, brand);
      // A bank transfer's period: 7 days unless the token says.
      assert.equal(d.expirationPeriod, i === 0 ? "PT72H" : "PT168H");
      assert.equal(d.expirationTimeShift, i === 0 ? "15:00:00+09:00" : null);
      assert.match(d.bankCode, /^\d{4}$/);
      assert.ok(d.bankName.length > 0);
      assert.match(d.branchCode, /^\d{3}$/);
      assert.ok(d.branchName.length > 0);
      assert.match(d.accountNumber, /^\d{7}$/);
      assert.equal(d.accountHolderName, store.name);
      assert.match(d.accountId, /^[0-9a-f-]{36}$/);
      numbers.add(d.accountId);
      assert.deepEqual(plain(await gw.sdk.transactionTokens.get(storeId(), tok.id)), plain(tok));
    }
    assert.equal(numbers.size, brands.length, "two tokens share an account");
  });
});

describe("bank transfer: short, then exact", () => {
  const flow = {};

  test("a deposit short of the amount, sent at once (to the other process, when two): insufficient, still awaiting", async () => {
    flow.token = await transferToken({ brand: BankTransferBrand.TEST }, { metadata: { order_id: "bt-exact" } });
    const created = await createCharge(flow.token.id, { metadata: { order_id: "bt-exact-charge" } });
    assert.equal(created.status, "pending");
    // The helper waits for the charge to be opened by a worker, whichever
    // process's.
    const answered = await helper(created.id, "deposit", { amount: 400 });
    assert.equal(answered.status, "awaiting");
    const ch = await pollCharge(created.id, isAwaiting);
    assert.equal(ch.chargedAmount, null);
    flow.charge = ch;

    const ev = await webhook("bank_transfer_status_updated", (d) => d.charge_id === ch.id && d.payment_status === "insufficient", "(insufficient)");
    const { id, created_on, updated_on, latest_deposit_date, ...data } = ev.data;
    assert.match(id, /^[0-9a-f-]{36}$/);
    for (const t of [created_on, updated_on, latest_deposit_date]) assert.ok(!Number.isNaN(Date.parse(t)), t);
    assert.deepEqual(data, {
      charge_id: ch.id,
      store_id: storeId(),
      payment_status: "insufficient",
      latest_deposit_amount: 400,
      balance: 400,
      deposited: 400,
      currency: "JPY",
      amount: 1000,
      amount_difference: -600,
      token_metadata: { order_id: "bt-exact" },
      charge_metadata: { order_id: "bt-exact-charge" },
      mode: "test",
    });
    flow.statusID = id;
  });

  test("sdk.charges.getIssuerToken: the account to wire to, in the payload and at the top", async () => {
    const it = plain(await gw.sdk.charges.getIssuerToken(storeId(), flow.charge.id));
    const d = flow.token.data;
    const account = {
      accountId: d.accountId,
      bankCode: d.bankCode,
      bankName: d.bankName,
      branchCode: d.branchCode,
      branchName: d.branchName,
      accountType: "ordinary",
      accountNumber: d.accountNumber,
      accountHolderName: d.accountHolderName,
    };
    const { expirationDate, ...payload } = it.payload;
    assert.deepEqual(payload, { resourceId: flow.charge.id, resourceType: "charge", amount: "1000", currency: "JPY", ...account });
    assert.equal(Date.parse(expirationDate), Math.floor(Date.parse(flow.charge.captureAt) / 1000) * 1000);
    assert.deepEqual(it, { issuerToken: it.issuerToken, callMethod: "http_get", payload: it.payload, paymentType: "bank_transfer", ...account });
    assert.match(it.issuerToken, new RegExp(`^${gw.endpoint}/sandbox/pay/[A-Z2-7]{26}$`));
  });

  test("the ledger (GET …/bank_transfer_ledgers): the one deposit", async () => {
    const page = await ledger(flow.charge.id);
    assert.equal(page.has_more, false);
    assert.equal(page.total_hits, 1);
    const [e] = page.items;
    const { id, transaction_timestamp, created_on, transaction_date, ...rest } = e;
    assert.match(id, /^[0-9a-f-]{36}$/);
    assert.equal(transaction_date, japanDate(transaction_timestamp));
    assert.deepEqual(rest, {
      charge_id: flow.charge.id,
      bank_ledger_type: "deposit",
      amount: 400,
      amount_formatted: 400,
      balance: 400,
      deposited: 400,
      currency: "JPY",
      payment_status: "insufficient",
      virtual_bank_account_holder_name: flow.token.data.accountHolderName,
      virtual_bank_account_number: flow.token.data.accountNumber,
      virtual_account_id: flow.token.data.accountId,
      mode: "test",
    });
  });

  test("the deadline extended by 2 days (POST …/expiry); sdk.charges.expiry counts it", async () => {
    const before = await gw.sdk.charges.expiry(flow.charge.id, undefined, undefined, storeId());
    assert.equal(before.extensionCount, 0);
    const [status, extended] = await call("POST", `/stores/${storeId()}/charges/${flow.charge.id}/expiry`, { expiration_period: "P2D" });
    assert.equal(status, 200, JSON.stringify(extended));
    assert.equal(extended.extension_count, 1);
    assert.equal(Date.parse(extended.expiration_date), Date.parse(before.expirationDate) + 2 * DAY);
    // Read through the SDK on the process that did not extend it.
    const after = await creator().charges.expiry(flow.charge.id, undefined, undefined, storeId());
    // The latest expiry is the extension's.
    assert.equal(after.id, extended.id);
    assert.equal(after.chargeId, flow.charge.id);
    assert.equal(after.extensionCount, 1);
    assert.equal(Date.parse(after.expirationDate), Date.parse(before.expirationDate) + 2 * DAY);
    assert.equal(Date.parse((await gw.sdk.charges.get(storeId(), flow.charge.id)).captureAt), Date.parse(after.expirationDate));
  });

  test("the rest deposited: exact, the charge successful; the ledger shows the payment on top", async () => {
    const answered = await helper(flow.charge.id, "deposit", { amount: 600 });
    assert.equal(answered.status, "successful");
    const ch = await pollCharge(flow.charge.id, hasEnded);
    assert.equal(ch.status, "successful");
    assert.equal(ch.chargedAmount, 1000);

    const ev = await webhook("bank_transfer_status_updated", (d) => d.charge_id === ch.id && d.payment_status === "exact", "(exact)");
    assert.equal(ev.data.id, flow.statusID, "the transfer's status has one id");
    assert.equal(ev.data.latest_deposit_amount, 600);
    assert.equal(ev.data.deposited, 1000);
    assert.equal(ev.data.balance, 0);
    assert.equal(ev.data.amount_difference, 0);
    const fin = await webhook("charge_finished", (d) => d.id === ch.id, "of the paid transfer");
    assert.equal(fin.data.status, "successful");

    const page = await ledger(ch.id);
    assert.equal(page.total_hits, 3);
    assert.deepEqual(
      page.items.map((e) => [e.bank_ledger_type, e.amount, e.balance, e.deposited, e.payment_status]),
      [
        ["payment", 1000, 0, 1000, "exact"],
        ["deposit", 600, 1000, 1000, "exact"],
        ["deposit", 400, 400, 400, "insufficient"],
      ],
    );
    const asc = await ledger(ch.id, "?cursor_direction=asc");
    assert.deepEqual(
      asc.items.map((e) => e.id),
      page.items.map((e) => e.id).reverse(),
    );
    const first = await ledger(ch.id, "?limit=1");
    assert.equal(first.items.length, 1);
    assert.equal(first.has_more, true);
    assert.equal(first.items[0].id, page.items[0].id);
  });

  test("nothing over the amount to refund: REFUND_NOT_ALLOWED", async () => {
    await expectAPIError(gw.sdk.refunds.create(storeId(), flow.charge.id, { amount: 1, currency: "JPY" }), {
      code: "REFUND_NOT_ALLOWED",
      httpCode: 400,
    });
  });
});

describe("bank transfer: over the amount", () => {
  const flow = {};

  test("1500 wired for 1000: exceeded, the charge successful for what came in", async () => {
    const token = await transferToken({ brand: BankTransferBrand.AOZORA_BANK });
    const ch = await awaitingCharge(token);
    const answered = await helper(ch.id, "deposit", { amount: 1500 });
    assert.equal(answered.status, "successful");
    const done = await pollCharge(ch.id, hasEnded);
    assert.equal(done.status, "successful");
    assert.equal(done.requestedAmount, 1000);
    assert.equal(done.chargedAmount, 1500);
    const ev = await webhook("bank_transfer_status_updated", (d) => d.charge_id === ch.id, "(exceeded)");
    assert.equal(ev.data.payment_status, "exceeded");
    assert.equal(ev.data.amount_difference, 500);
    assert.equal(ev.data.deposited, 1500);
    assert.equal(ev.data.balance, 0);
    assert.deepEqual(
      (await ledger(ch.id)).items.map((e) => [e.bank_ledger_type, e.amount, e.balance, e.payment_status]),
      [
        ["payment", 1500, 0, "exceeded"],
        ["deposit", 1500, 1500, "exceeded"],
      ],
    );
    flow.charge = done;
  });

  test("the excess refunded (sdk.refunds.create, polled to successful, refund_finished); no more than that", async () => {
    await expectAPIError(gw.sdk.refunds.create(storeId(), flow.charge.id, { amount: 501, currency: "JPY" }), {
      code: "REFUND_NOT_ALLOWED",
      httpCode: 400,
    });
    const refund = await gw.sdk.refunds.create(storeId(), flow.charge.id, { amount: 500, currency: "JPY", reason: "customer_request" });
    assert.equal(refund.chargeId, flow.charge.id);
    assert.equal(refund.amount, 500);
    const done = await gw.sdk.refunds.poll(storeId(), flow.charge.id, refund.id, undefined, undefined, {
      timeout: 15_000,
      interval: 50,
      successCondition: (r) => r.status !== "pending",
    });
    assert.equal(done.status, "successful");
    const ev = await webhook("refund_finished", (d) => d.id === refund.id, "of the excess");
    assert.equal(ev.data.status, "successful");
    await expectAPIError(gw.sdk.refunds.create(storeId(), flow.charge.id, { amount: 1, currency: "JPY" }), {
      code: "REFUND_NOT_ALLOWED",
      httpCode: 400,
    });
  });
});

describe("bank transfer: the deadline passes, the merchant cancels", () => {
  test("test_helpers/expire: failed with 327; a deposit after the end is still recorded and announced", async () => {
    const token = await transferToken({ brand: BankTransferBrand.TEST });
    const ch = await awaitingCharge(token, { amount: 2000 });
    assert.equal((await helper(ch.id, "expire")).status, "failed");
    const done = await pollCharge(ch.id, hasEnded);
    assert.equal(done.status, "failed");
    assert.equal(done.error.code, 327);
    const fin = await webhook("charge_finished", (d) => d.id === ch.id, "of the expired transfer");
    assert.equal(fin.data.error.code, 327);

    const late = await helper(ch.id, "deposit", { amount: 2000 });
    assert.equal(late.status, "failed");
    const ev = await webhook("bank_transfer_status_updated", (d) => d.charge_id === ch.id, "(after the end)");
    assert.equal(ev.data.payment_status, "exact");
    assert.equal(ev.data.deposited, 2000);
    assert.deepEqual(
      (await ledger(ch.id)).items.map((e) => [e.bank_ledger_type, e.amount]),
      [["deposit", 2000]],
    );
    assert.equal((await gw.sdk.charges.get(storeId(), ch.id)).status, "failed");
  });

  test("sdk.cancels.create while awaiting: canceled", async () => {
    const token = await transferToken({ brand: BankTransferBrand.AOZORA_BANK });
    const ch = await awaitingCharge(token);
    await gw.sdk.cancels.create(storeId(), ch.id, {});
    const done = await pollCharge(ch.id, hasEnded);
    assert.equal(done.status, "canceled");
    const fin = await webhook("charge_finished", (d) => d.id === ch.id, "of the canceled transfer");
    assert.equal(fin.data.status, "canceled");
  });
});

describe("refusals as the SDK surfaces them", () => {
  test("a phone number outside Japan: VALIDATION_ERROR, ONLY_JAPANESE_PHONE_NUMBER_ALLOWED", async () => {
    for (const countryCode of ["1", "44", "886"]) {
      const err = await expectAPIError(konbiniToken({ phoneNumber: { countryCode, localNumber: "2025550123" } }), {
        code: "VALIDATION_ERROR",
        httpCode: 400,
        field: "phone_number",
      });
      assert.deepEqual(err.errors, [{ field: "phone_number", reason: "ONLY_JAPANESE_PHONE_NUMBER_ALLOWED" }]);
    }
  });

  test("a Japanese number that is not one, or none: VALIDATION_ERROR", async () => {
    const err = await expectAPIError(konbiniToken({ phoneNumber: { countryCode: "81", localNumber: "0120" } }), {
      code: "VALIDATION_ERROR",
      httpCode: 400,
    });
    assert.equal(err.errors[0].reason, "INVALID_PHONE_NUMBER");
    await expectAPIError(konbiniToken({ phoneNumber: undefined }), { code: "VALIDATION_ERROR", httpCode: 400, field: "phone_number" });
  });

  test("a konbini period under 7 or over 30 days: EXPIRATION_DATE_OUT_OF_BOUNDS", async () => {
    for (const expirationPeriod of ["P6D", "PT167H", "P31D", "P5W"]) {
      const err = await expectAPIError(konbiniToken({ expirationPeriod }), { code: "VALIDATION_ERROR", httpCode: 400, field: "expiration_period" });
      assert.equal(err.errors.find((e) => e.field === "expiration_period").reason, "EXPIRATION_DATE_OUT_OF_BOUNDS", expirationPeriod);
    }
  });

  test("a bank-transfer period under a day or over 30: EXPIRATION_DATE_OUT_OF_BOUNDS; an unknown bank: BRAND_NOT_DEFINED", async () => {
    for (const expirationPeriod of ["PT23H", "P31D"]) {
      const err = await expectAPIError(transferToken({ expirationPeriod }), { code: "VALIDATION_ERROR", httpCode: 400, field: "expiration_period" });
      assert.equal(err.errors.find((e) => e.field === "expiration_period").reason, "EXPIRATION_DATE_OUT_OF_BOUNDS", expirationPeriod);
    }
    const err = await expectAPIError(transferToken({ brand: "mizuho_bank" }), { code: "VALIDATION_ERROR", httpCode: 400, field: "brand" });
    assert.equal(err.errors[0].reason, "BRAND_NOT_DEFINED");
  });

  test("an unknown store, a recurring konbini token: VALIDATION_ERROR", async () => {
    await expectAPIError(konbiniToken({ convenienceStore: "am_pm" }), { code: "VALIDATION_ERROR", httpCode: 400, field: "convenience_store" });
    await expectAPIError(konbiniToken({}, { type: "recurring" }), { code: "VALIDATION_ERROR", httpCode: 400, field: "type" });
  });

  test("a charge in USD: CURRENCY_NOT_SUPPORTED, of either method", async () => {
    for (const token of [await konbiniToken({}), await transferToken({})]) {
      await expectAPIError(createCharge(token.id, { currency: "USD", amount: 1000 }), { code: "CURRENCY_NOT_SUPPORTED", httpCode: 400 });
    }
  });

  test("a charge authorised without capture: VALIDATION_ERROR on capture", async () => {
    const token = await konbiniToken({});
    const err = await expectAPIError(createCharge(token.id, { capture: false }), { code: "VALIDATION_ERROR", httpCode: 400, field: "capture" });
    assert.equal(err.errors[0].reason, "CAPTURE_ONLY_FOR_CARD_PAYMENT");
  });

  test("sdk.charges.expiry of a card charge: NOT_FOUND (it has no deadline)", async () => {
    const expYear = new Date().getFullYear() + 3;
    const card = await creator().transactionTokens.create({
      paymentType: "card",
      type: "one_time",
      email: "buyer@example.jp",
      data: { cardholder: "TARO YAMADA", cardNumber: "4000020000000000", expMonth: 12, expYear, cvv: "123" },
    });
    const ch = await pollCharge((await createCharge(card.id)).id, hasEnded);
    assert.equal(ch.status, "successful");
    await expectAPIError(gw.sdk.charges.expiry(ch.id, undefined, undefined, storeId()), { code: "NOT_FOUND", httpCode: 404 });
  });
});
