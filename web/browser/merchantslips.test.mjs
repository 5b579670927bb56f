// Konbini payments and bank transfers on the merchant's side: the demo
// storefront's order paid by bank transfer, awaiting its payment with the
// instructions, then paid by the gateway's notifications after simulated
// deposits (the sandbox's test helpers); a konbini order left to expire;
// and the console's pages of both (the instructions, the deadline and its
// extension, the deposits and the ledger, the test helpers, the store
// settings), in English and Japanese and on a phone, with a screenshot of
// each ("slips-*").
//
// The shopper's choice of konbini or bank transfer is the widget's (its
// paymentTypes, which the demo passes); these tests make the token and the
// charge through the API as the widget does, with the order's reference in
// the metadata, and hand the page's order form the charge's id as the
// widget's onSuccess does, so that they test the shop and not the widget.

import { test } from "node:test";
import assert from "node:assert/strict";

import { screenshot, useSuite } from "./harness.mjs";
import { SCREENSHOT_DIR } from "./lib/browser.mjs";

const s = useSuite();

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const store = () => s.gw.credentials.store_id;
const consoleURL = (path) => `${s.gw.endpoint}/console/${path.replace(/^\//, "")}`;
const text = async (page, selector) => ((await page.textContent(selector)) ?? "").replace(/\s+/g, " ").trim();
const PHONE = { width: 390, height: 844 };

/** A screenshot (full page), after checking that nothing is wider than the screen. */
async function shot(page, name, { root = "main" } = {}) {
  const wide = await page.evaluate((root) => {
    const out = [];
    const scrolls = (el) => {
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) if (getComputedStyle(a).overflowX !== "visible") return true;
      return false;
    };
    for (const el of document.querySelectorAll(`${root} *`)) {
      if (scrolls(el)) continue; // inside a box that scrolls
      const r = el.getBoundingClientRect();
      if (r.width && r.right > document.documentElement.clientWidth + 1) out.push(`${el.tagName.toLowerCase()}.${el.className} ends at ${Math.round(r.right)}px`);
    }
    return { page: document.documentElement.scrollWidth - document.documentElement.clientWidth, elements: out.slice(0, 5) };
  }, root);
  assert.ok(wide.page <= 0 && wide.elements.length === 0, `${name}: wider than the screen by ${wide.page}px: ${wide.elements.join(", ")}`);
  await screenshot(page, name, { fullPage: true });
}

/** No uncaught error and no console error (a CSP violation is one). */
function assertClean(seen) {
  assert.deepEqual(seen.errors, [], "uncaught errors");
  assert.deepEqual(seen.console.filter((m) => m.type === "error"), [], "console errors (CSP violations included)");
}

/**
 * A token and a charge as the widget makes them when the shopper chooses
 * konbini (at `konbini`, a store) or a bank transfer (konbini undefined);
 * resolves to the charge once it awaits the shopper.
 */
async function slipCharge(amount, { konbini, orderId } = {}) {
  const token = await s.gw.api(
    "POST",
    "/tokens",
    konbini
      ? { payment_type: "konbini", type: "one_time", email: "shopper@example.com",
          data: { customer_name: "山田 太郎", convenience_store: konbini, phone_number: { country_code: 81, local_number: "090-1234-5678" } } }
      : { payment_type: "bank_transfer", type: "one_time", email: "shopper@example.com", data: { brand: "bank_test_brand" } },
  );
  const created = await s.gw.api("POST", "/charges", {
    transaction_token_id: token.id, amount, currency: "JPY", ...(orderId && { metadata: { order_id: orderId } }),
  });
  const charge = await s.gw.charge(created.id);
  assert.equal(charge.status, "awaiting", JSON.stringify(charge));
  return charge;
}

/** The sandbox's test helper: what the shopper does away from the shop. */
const helper = (charge, action, body) => s.gw.api("POST", `/stores/${store()}/charges/${charge.id}/test_helpers/${action}`, body);

/** Home → two products → checkout; resolves to { ref, total }. */
async function toCheckout(page, products = 2) {
  const demo = s.gw.demoEndpoint;
  await page.goto(`${demo}/`);
  for (let i = 0; i < products; i++) {
    const item = page.locator("li.product").nth(i);
    await Promise.all([page.waitForNavigation(), item.locator("button[type=submit]").click()]);
  }
  await page.goto(`${demo}/checkout`);
  const root = page.locator("#checkout");
  assert.equal(await root.getAttribute("data-payment-types"), "card,pay_pay_online,konbini,bank_transfer", "the pop-up offers konbini and bank transfer");
  return { ref: await root.getAttribute("data-order"), total: Number(await root.getAttribute("data-amount")) };
}

/** What the widget's onSuccess does on the demo's checkout page: the shop's own order form, with the charge's id. */
async function placeOrder(page, charge) {
  await Promise.all([
    page.waitForURL(/\/orders\/KC-[^/?]+\?thanks=1$/, { timeout: 20_000 }),
    page.evaluate((id) => {
      const f = document.getElementById("order-form");
      f.elements.chargeId.value = id;
      f.elements.method.value = "modal";
      f.submit();
    }, charge.id),
  ]);
}

/**
 * Waits until the demo's order list (which only the shop's own records
 * fill: it asks the gateway nothing) shows the order with status.
 */
async function listedAs(ref, status, { timeoutMs = 15_000 } = {}) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const html = await (await fetch(`${s.gw.demoEndpoint}/orders`, { headers: { "Accept-Language": "en" } })).text();
    const row = html.split("<tr>").find((r) => r.includes(`/orders/${ref}"`)) ?? "";
    if (row.includes(`status-${status}"`)) return row;
    if (Date.now() > until) assert.fail(`order ${ref} is not listed as ${status} within ${timeoutMs} ms: ${row.replace(/\s+/g, " ")}`);
    await sleep(200);
  }
}

test("demo storefront: an order paid by bank transfer awaits its payment with the instructions, and the gateway's notifications pay it after the deposits", async () => {
  const { page, seen } = await s.newPage({ viewport: { width: 1200, height: 900 } });
  const { ref, total } = await toCheckout(page);
  const charge = await slipCharge(total, { orderId: ref });
  await placeOrder(page, charge);

  assert.equal(await page.getAttribute("#order-state", "data-status"), "awaiting");
  assert.equal(await text(page, "h1"), "Thank you! Now please pay");
  assert.equal(await text(page, ".facts .status"), "Awaiting payment");
  const it = await s.gw.api("GET", `/stores/${store()}/charges/${charge.id}/issuer_token`);
  assert.equal(await text(page, "#slip-account-number"), it.payload.account_number);
  assert.equal(await page.getAttribute("#slip-link", "href"), it.issuer_token, "the instructions are the charge's issuer token");
  assert.match(await text(page, "#pay-slip"), new RegExp(it.payload.bank_name));
  await shot(page, "slips-demo-bank-awaiting");

  // A short deposit: the order still awaits the rest, and says how much.
  await helper(charge, "deposit", { amount: 2000 });
  await listedAs(ref, "awaiting");
  await page.reload();
  const short = `¥${(total - 2000).toLocaleString("en")}`;
  assert.match(await text(page, "#transfer-state"), new RegExp(`¥2,000 of ¥${total.toLocaleString("en")} received.*${short}`));
  await shot(page, "slips-demo-bank-partial");

  // The rest: the gateway's charge_finished pays the order, which the list
  // shows without the order's page asking the gateway.
  await helper(charge, "deposit", { amount: total - 2000 });
  const row = await listedAs(ref, "successful");
  assert.match(row, /Bank transfer/);
  await page.goto(`${s.gw.demoEndpoint}/orders`);
  await shot(page, "slips-demo-orders");
  await page.goto(`${s.gw.demoEndpoint}/orders/${ref}`);
  assert.equal(await text(page, ".facts .status"), "Paid");
  assert.equal(await page.$("#pay-slip"), null, "a paid order shows no instructions");
  await shot(page, "slips-demo-bank-paid");
  assert.equal((await s.gw.charge(charge.id)).status, "successful");
  assertClean(seen);
});

test("demo storefront: a konbini order in Japanese and on a phone; its deadline passes and the order expires", async () => {
  const { page, seen } = await s.newPage({ locale: "ja-JP", viewport: PHONE });
  await page.goto(`${s.gw.demoEndpoint}/lang/ja`);
  const { ref, total } = await toCheckout(page, 1);
  const charge = await slipCharge(total, { konbini: "family_mart", orderId: ref });
  await placeOrder(page, charge);
  assert.equal(await page.getAttribute("html", "lang"), "ja");
  assert.equal(await text(page, ".facts .status"), "お支払い待ち");
  const it = await s.gw.api("GET", `/stores/${store()}/charges/${charge.id}/issuer_token`);
  assert.equal(await text(page, "#slip-payment-number"), it.payload.payment_number);
  assert.equal(await text(page, "#slip-confirmation"), it.payload.confirmation_number);
  assert.match(await text(page, "#pay-slip"), /ファミリーマート/);
  await shot(page, "slips-demo-konbini-awaiting-ja-phone");

  // Printed, the slip is what is left: no header, no buttons.
  await page.emulateMedia({ media: "print" });
  assert.equal(await page.isVisible(".site-header"), false, "the header is not printed");
  assert.equal(await page.isVisible("#slip-payment-number"), true, "the payment number is printed");
  await screenshot(page, "slips-demo-konbini-print", { fullPage: true });
  await page.emulateMedia({ media: "screen" });

  await helper(charge, "expire");
  await listedAs(ref, "expired");
  await page.reload();
  assert.equal(await text(page, "h1"), "お支払い期限が過ぎました");
  await shot(page, "slips-demo-konbini-expired-ja-phone");
  assertClean(seen);
});

// The console: one sign-in for the file (the throttle allows five).
let sessionCookies = null;

async function signedInPage(opts = {}) {
  if (!sessionCookies) {
    const { page, context } = await s.newPage();
    await page.goto(consoleURL("/signin"));
    await page.fill("input[name=email]", s.gw.credentials.console_email);
    await page.fill("input[name=password]", s.gw.credentials.console_password);
    await Promise.all([page.waitForURL(consoleURL("/")), page.click("form[action='/console/signin'] button")]);
    sessionCookies = await context.cookies();
  }
  const p = await s.newPage(opts);
  await p.context.addCookies(sessionCookies);
  return p;
}

/** Clicks a form's button and waits for the page it leads to; resolves to the POST's response. */
async function submit(page, selector) {
  const [final] = await Promise.all([page.waitForNavigation(), page.click(selector)]);
  let first = final.request();
  while (first.redirectedFrom()) first = first.redirectedFrom();
  assert.equal(first.method(), "POST", `${selector} did not post a form`);
  return first.response();
}

const CONFIRM = "form:has(input[name=confirm][value=yes]) button";

test("console: a konbini charge's instructions and deadline, extended behind the confirmation, then paid at the counter (test helper)", async () => {
  const charge = await slipCharge(1500, { konbini: "seven_eleven" });
  const path = `/stores/${store()}/charges/${charge.id}`;
  const { page, seen } = await signedInPage({ viewport: { width: 1200, height: 900 } });
  await page.goto(consoleURL("/charges"));
  const row = page.locator("tr").filter({ has: page.locator(`a[href='/console${path}']`) });
  assert.match(await row.textContent(), /Konbini \(convenience store\)/);
  await shot(page, "slips-console-charges");

  await page.goto(consoleURL(path));
  const it = await s.gw.api("GET", `/stores/${store()}/charges/${charge.id}/issuer_token`);
  assert.equal(await text(page, "#fact-payment-type"), "Konbini (convenience store)");
  assert.equal(await text(page, "#slip-store"), "7-Eleven");
  assert.equal(await text(page, "#slip-payment-number"), it.payload.payment_number);
  assert.equal(await text(page, "#slip-confirmation"), "—", "7-Eleven has no confirmation number");
  assert.equal(await page.getAttribute("#slip-url", "href"), it.issuer_token);
  assert.equal(await text(page, "#slip-extensions"), "0 of 3");
  await shot(page, "slips-console-konbini");

  await page.fill("#extend-form input[name=days]", "3");
  assert.equal((await submit(page, "#extend-form button")).status(), 200);
  assert.match(await text(page, "main"), /Extend the payment deadline\?.*3 days later/);
  const before = await s.gw.api("GET", `/stores/${store()}/charges/${charge.id}/expiry/latest`);
  assert.equal(before.extension_count, 0, "extended before the confirmation");
  await shot(page, "slips-console-konbini-extend-confirm");
  assert.equal((await submit(page, CONFIRM)).status(), 303);
  const after = await s.gw.api("GET", `/stores/${store()}/charges/${charge.id}/expiry/latest`);
  assert.equal(after.extension_count, 1);
  assert.equal(Date.parse(after.expiration_date) - Date.parse(before.expiration_date), 3 * 24 * 3600 * 1000);
  assert.equal(await text(page, "#slip-extensions"), "1 of 3");
  await shot(page, "slips-console-konbini-extended");

  // Paid at the counter.
  await submit(page, "#pay-form button");
  await shot(page, "slips-console-konbini-pay-confirm");
  await submit(page, CONFIRM);
  assert.match(await text(page, "h1"), /Successful/);
  assert.equal((await s.gw.charge(charge.id)).status, "successful");
  await shot(page, "slips-console-konbini-paid");
  assertClean(seen);
});

test("console: a bank transfer's account, deposits and ledger, deposits simulated behind the confirmation until it is paid; in Japanese and on a phone", async () => {
  const charge = await slipCharge(5000);
  const path = `/stores/${store()}/charges/${charge.id}`;
  const { page, seen } = await signedInPage({ viewport: { width: 1200, height: 900 } });
  await page.goto(consoleURL(path));
  const it = await s.gw.api("GET", `/stores/${store()}/charges/${charge.id}/issuer_token`);
  assert.equal(await text(page, "#slip-account-number"), it.account_number ?? it.payload.account_number);
  assert.match(await text(page, "#transfer-progress"), /¥0 of ¥5,000 received Nothing received/);
  await shot(page, "slips-console-bank");

  await page.fill("#deposit-form input[name=amount]", "2000");
  await submit(page, "#deposit-form button");
  assert.match(await text(page, "main"), /Simulate a deposit\?.*¥2,000/);
  await shot(page, "slips-console-bank-deposit-confirm");
  await submit(page, CONFIRM);
  assert.match(await text(page, "#transfer-progress"), /¥2,000 of ¥5,000 received Short/);
  assert.equal(await page.locator("#ledger tbody tr").count(), 1);
  await shot(page, "slips-console-bank-partial");

  await page.fill("#deposit-form input[name=amount]", "3000");
  await submit(page, "#deposit-form button");
  await submit(page, CONFIRM);
  assert.match(await text(page, "#transfer-progress"), /¥5,000 of ¥5,000 received Exact/);
  assert.equal(await page.locator("#ledger tbody tr").count(), 3, "two deposits and the payment");
  const ledger = await s.gw.api("GET", `/stores/${store()}/charges/${charge.id}/bank_transfer_ledgers?cursor_direction=asc`);
  assert.deepEqual(ledger.items.map((l) => [l.bank_ledger_type, l.amount]), [["deposit", 2000], ["deposit", 3000], ["payment", 5000]]);
  await shot(page, "slips-console-bank-paid");

  const ja = await signedInPage({ locale: "ja-JP", viewport: PHONE });
  await ja.page.goto(consoleURL(`${path}?lang=ja`));
  assert.match(await text(ja.page, "#transfer-progress"), /¥5,000 \/ ¥5,000 を受領 全額入金/);
  await shot(ja.page, "slips-console-bank-paid-ja-phone");
  await ja.page.locator("#slip").screenshot({ path: `${SCREENSHOT_DIR}slips-console-bank-slip-ja-phone.png` });
  assertClean(seen);
  assertClean(ja.seen);
});

test("console: an awaiting bank transfer canceled behind the confirmation", async () => {
  const charge = await slipCharge(3000);
  const path = `/stores/${store()}/charges/${charge.id}`;
  const { page, seen } = await signedInPage({ viewport: { width: 1200, height: 900 } });
  await page.goto(consoleURL(path));
  await submit(page, `form[action='/console${path}/cancel'] button`);
  assert.match(await text(page, "main"), /The customer can no longer pay/);
  await shot(page, "slips-console-bank-cancel-confirm");
  await submit(page, CONFIRM);
  assert.equal((await s.gw.charge(charge.id)).status, "canceled");
  await shot(page, "slips-console-bank-canceled");
  assertClean(seen);
});

test("console: store settings turn konbini off and choose the exact match-amount rule; checkout_info says so", async () => {
  const { page, seen } = await signedInPage({ viewport: { width: 1200, height: 900 } });
  await page.goto(consoleURL(`/stores/${store()}/settings`));
  assert.ok(await page.isChecked("input[name=konbini_enabled]"));
  assert.ok(await page.isChecked("input[name=match_amount][value=minimum]"));
  await page.locator("#slip-settings").scrollIntoViewIfNeeded();
  await shot(page, "slips-console-settings");

  await page.uncheck("input[name=konbini_enabled]");
  await page.check("input[name=match_amount][value=exact]");
  assert.equal((await submit(page, `form[action='/console/stores/${store()}/settings'] button`)).status(), 303);
  assert.equal(await page.isChecked("input[name=konbini_enabled]"), false);
  assert.ok(await page.isChecked("input[name=match_amount][value=exact]"));
  const info = await s.gw.api("GET", "/checkout_info");
  assert.equal(info.convenience_configuration.enabled, false, JSON.stringify(info.convenience_configuration));
  assert.equal(info.bank_transfer_configuration.match_amount, "exact", JSON.stringify(info.bank_transfer_configuration));

  const ja = await signedInPage({ locale: "ja-JP", viewport: PHONE });
  await ja.page.goto(consoleURL(`/stores/${store()}/settings?lang=ja`));
  assert.match(await text(ja.page, "#slip-settings"), /コンビニ決済を受け付ける.*完全一致/);
  await shot(ja.page, "slips-console-settings-ja-phone");

  // Back as it was, for the other tests of the file.
  await page.check("input[name=konbini_enabled]");
  await page.check("input[name=match_amount][value=minimum]");
  await submit(page, `form[action='/console/stores/${store()}/settings'] button`);
  assertClean(seen);
  assertClean(ja.seen);
});
