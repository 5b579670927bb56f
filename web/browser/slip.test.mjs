// The sandbox's instructions page of konbini payments and bank transfers
// (web/sandboxpages/slip.go), which the issuer token of an awaiting charge
// points to: in English and Japanese, on a desktop and a 375 px phone,
// printed, its numbers copied; paid at the counter, a deposit short then
// the rest, a refused amount, the deadline let pass, a cancel by the
// merchant and a test helper's deposit followed by a page left open.
// Charges are made from Node as a merchant's server makes them and checked
// through the API; the browser is the shopper's.

import { describe, test } from "node:test";
import assert from "node:assert/strict";

import { screenshot, useSuite } from "./harness.mjs";

const s = useSuite();

const PHONE = { width: 375, height: 812 };

const chargePath = (id) => `/stores/${s.gw.credentials.store_id}/charges/${id}`;

/**
 * A charge of amount yen on a token of body, awaiting its shopper; resolves
 * to { id, url, payload } with the instructions page's URL.
 */
async function slipCharge(body, amount) {
  const token = await s.gw.api("POST", "/tokens", { type: "one_time", email: "shopper@example.com", ...body });
  const charge = await s.gw.api("POST", "/charges", { transaction_token_id: token.id, amount, currency: "JPY" });
  const awaiting = await s.gw.charge(charge.id);
  assert.equal(awaiting.status, "awaiting", `${body.payment_type} charge`);
  const it = await s.gw.api("GET", `${chargePath(charge.id)}/issuer_token`);
  assert.equal(it.call_method, "http_get");
  assert.match(it.issuer_token, /\/sandbox\/pay\/[A-Z2-7]{26}$/);
  return { id: charge.id, url: it.issuer_token, payload: it.payload };
}

const konbiniCharge = (store, amount = 1980) =>
  slipCharge(
    {
      payment_type: "konbini",
      data: { customer_name: "山田 太郎", convenience_store: store, phone_number: { country_code: 81, local_number: "090-1234-5678" } },
    },
    amount,
  );

const bankCharge = (amount = 12000) => slipCharge({ payment_type: "bank_transfer", data: { brand: "aozora_bank" } }, amount);

/** The charge once the worker has finished with it (it leaves awaiting). */
async function settled(id) {
  const until = Date.now() + 10_000;
  for (;;) {
    const c = await s.gw.charge(id);
    if (!["pending", "awaiting"].includes(c.status) || Date.now() > until) return c;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** No uncaught error and no CSP report on the gateway's pages. */
function assertClean(seen) {
  assert.deepEqual(seen.errors, [], "uncaught errors");
  const csp = seen.console.filter((m) => /Content Security Policy|Refused to/i.test(m.text));
  assert.deepEqual(csp, [], "CSP violations");
}

function shopperPage(lang, viewport) {
  return s.newPage({ locale: lang === "ja" ? "ja-JP" : "en-US", ...(viewport && { viewport }) });
}

/** Nothing on the page is wider than the screen. */
async function assertFits(page, width) {
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(wide <= width, `the page is ${wide}px wide on a ${width}px screen`);
}

const text = async (page, sel) => (await page.textContent(sel)).replace(/\s+/g, " ").trim();

describe("konbini", () => {
  for (const lang of ["en", "ja"]) {
    test(`the instructions of a FamilyMart payment (${lang}), desktop and phone`, async () => {
      const { url, payload } = await konbiniCharge("family_mart");
      for (const [size, viewport] of [["desktop", undefined], ["phone", PHONE]]) {
        const { page, seen } = await shopperPage(lang, viewport);
        const res = await page.goto(url);
        assert.equal(res.status(), 200);
        assert.equal(await page.getAttribute("html", "lang"), lang);
        assert.equal(await text(page, "#sb-payment-number"), payload.payment_number);
        assert.equal(await text(page, "#sb-confirmation-number"), payload.confirmation_number);
        assert.equal(await text(page, "#sb-amount"), "¥1,980");
        assert.match(await text(page, "#sb-deadline"), lang === "ja" ? /^\d{4}年\d{1,2}月\d{1,2}日（.）\d\d:\d\d（日本時間）$/ : /Japan time \(UTC\+9\)$/);
        assert.match(await text(page, ".sb-bar-name"), lang === "ja" ? /ファミリーマート/ : /FamilyMart/);
        assert.match(await text(page, "main"), /山田 太郎/);
        // The steps of the store's terminal, and the sandbox's buttons set apart.
        assert.equal(await page.locator(".sb-steps li").count(), 4);
        assert.match(await text(page, ".sb-sim-badge"), lang === "ja" ? /テストモード限定/ : /Test mode only/);
        assert.ok(await page.isVisible(".sb-copy"), "the copy buttons are shown once the script runs");
        if (viewport) await assertFits(page, viewport.width);
        await screenshot(page, `80-slip-konbini-${size}-${lang}`, { fullPage: true });
        assertClean(seen);
      }
    });
  }

  test("Seven-Eleven has no confirmation number; Pay-easy is paid at an ATM", async () => {
    const { page, seen } = await shopperPage("ja", PHONE);
    const seven = await konbiniCharge("seven_eleven");
    await page.goto(seven.url);
    assert.equal(await text(page, "#sb-payment-number"), seven.payload.payment_number);
    assert.equal(await page.locator("#sb-confirmation-number").count(), 0);
    assert.match(await text(page, ".sb-rows"), /払込票番号/);
    await assertFits(page, PHONE.width);
    await screenshot(page, "80-slip-konbini-seven-eleven-phone-ja", { fullPage: true });
    const payEasy = await konbiniCharge("pay_easy");
    await page.goto(payEasy.url);
    assert.match(await text(page, "h1"), /Pay-easy（ペイジー）/);
    assert.match(await text(page, ".sb-steps"), /ATM/);
    await screenshot(page, "80-slip-konbini-pay-easy-phone-ja", { fullPage: true });
    assertClean(seen);
  });

  for (const lang of ["en", "ja"]) {
    test(`"Pay at the counter" (${lang}): the page says paid, and the charge is successful`, async () => {
      const { page, seen } = await shopperPage(lang);
      const { id, url } = await konbiniCharge("lawson");
      await page.goto(url);
      const [act] = await Promise.all([page.waitForResponse((r) => r.url().endsWith("/act")), page.click("#sb-pay")]);
      // POST-redirect-GET: back on the page's own address.
      assert.equal(act.status(), 303);
      await page.waitForSelector("#sb-result-title");
      assert.equal(new URL(page.url()).pathname, new URL(url).pathname);
      assert.equal(await text(page, "#sb-result-title"), lang === "ja" ? "お支払いを確認しました" : "Payment received");
      assert.equal(await text(page, "#sb-state"), lang === "ja" ? "お支払い済み" : "Paid");
      assert.equal(await page.locator("form").count(), 0, "an ended page has no buttons");
      await screenshot(page, `81-slip-konbini-paid-${lang}`, { fullPage: true });
      const charge = await settled(id);
      assert.equal(charge.status, "successful");
      // A reload does not post again.
      await page.reload();
      assert.equal(await text(page, "#sb-result-title"), lang === "ja" ? "お支払いを確認しました" : "Payment received");
      assertClean(seen);
    });
  }

  test('"Let the deadline pass" (ja, phone): expired, the charge failed with 327', async () => {
    const { page, seen } = await shopperPage("ja", PHONE);
    const { id, url } = await konbiniCharge("mini_stop");
    await page.goto(url);
    await page.click("#sb-expire");
    await page.waitForSelector("#sb-result-title");
    assert.equal(await text(page, "#sb-result-title"), "お支払い期限が過ぎました");
    await assertFits(page, PHONE.width);
    await screenshot(page, "82-slip-konbini-expired-phone-ja", { fullPage: true });
    const charge = await settled(id);
    assert.equal(charge.status, "failed");
    assert.equal(charge.error?.code, 327);
    assertClean(seen);
  });

  test("a payment the merchant cancels: the page left open says so", async () => {
    const { page, seen } = await shopperPage("en");
    const { id, url } = await konbiniCharge("seico_mart");
    await page.goto(url);
    await s.gw.api("POST", `${chargePath(id)}/cancels`, {});
    await page.waitForSelector("#sb-result-title", { timeout: 15_000 });
    assert.equal(await text(page, "#sb-result-title"), "This payment was canceled");
    await screenshot(page, "83-slip-konbini-canceled-en", { fullPage: true });
    assert.equal((await s.gw.charge(id)).status, "canceled");
    assertClean(seen);
  });

  test("the numbers copied to the clipboard", async () => {
    const { page, context, seen } = await shopperPage("en");
    const { url, payload } = await konbiniCharge("lawson");
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(url).origin });
    await page.goto(url);
    await page.click("button[data-copy='sb-payment-number']");
    await page.waitForFunction(() => document.getElementById("sb-copied").textContent !== "");
    assert.equal(await text(page, "#sb-copied"), `Copied: ${payload.payment_number}`);
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), payload.payment_number);
    await page.click("button[data-copy='sb-confirmation-number']");
    await page.waitForFunction((n) => document.getElementById("sb-copied").textContent.endsWith(n), payload.confirmation_number);
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), payload.confirmation_number);
    assertClean(seen);
  });

  test("printed: the instructions alone, black on white, no buttons", async () => {
    const { page, seen } = await shopperPage("ja");
    const { url, payload } = await konbiniCharge("family_mart");
    await page.goto(url);
    await page.emulateMedia({ media: "print" });
    for (const sel of [".sb-sim", ".sb-copy", ".sb-langs", "#sb-print", "button"]) {
      const shown = await page.$$eval(sel, (els) => els.filter((el) => getComputedStyle(el).display !== "none").length);
      assert.equal(shown, 0, `${sel} is printed`);
    }
    const look = await page.evaluate(() => {
      const c = (el) => getComputedStyle(el);
      return {
        body: c(document.body).backgroundColor,
        bar: c(document.querySelector(".sb-bar")).backgroundImage,
        number: c(document.getElementById("sb-payment-number")).color,
        amount: c(document.getElementById("sb-amount")).color,
        text: c(document.querySelector(".sb-steps li")).color,
      };
    });
    assert.deepEqual(look, { body: "rgb(255, 255, 255)", bar: "none", number: "rgb(0, 0, 0)", amount: "rgb(0, 0, 0)", text: "rgb(0, 0, 0)" });
    assert.equal(await text(page, "#sb-payment-number"), payload.payment_number);
    await screenshot(page, "84-slip-konbini-print-ja", { fullPage: true });
    await page.emulateMedia({ media: "screen" });
    assertClean(seen);
  });
});

describe("bank transfer", () => {
  for (const lang of ["en", "ja"]) {
    test(`the account to transfer to (${lang}), desktop and phone`, async () => {
      const { url, payload } = await bankCharge();
      for (const [size, viewport] of [["desktop", undefined], ["phone", PHONE]]) {
        const { page, seen } = await shopperPage(lang, viewport);
        await page.goto(url);
        assert.equal(await text(page, "#sb-account-number"), payload.account_number);
        assert.equal(await text(page, "#sb-account-holder"), payload.account_holder_name);
        assert.equal(await text(page, "#sb-amount"), "¥12,000");
        const rows = await text(page, ".sb-rows");
        for (const want of [payload.bank_name, payload.branch_name, payload.bank_code, payload.branch_code, lang === "ja" ? "普通" : "Ordinary"]) {
          assert.ok(rows.includes(want), `the account lacks ${want}: ${rows}`);
        }
        assert.match(await text(page, "#sb-payment-status"), lang === "ja" ? /未入金/ : /No transfer received yet/);
        assert.equal(await page.inputValue("#sb-deposit-amount"), "12000");
        if (viewport) await assertFits(page, viewport.width);
        await screenshot(page, `85-slip-bank-${size}-${lang}`, { fullPage: true });
        assertClean(seen);
      }
    });
  }

  test("a deposit short of the amount, a refused amount, then the rest (phone)", async () => {
    const { page, seen } = await shopperPage("en", PHONE);
    const { id, url } = await bankCharge(12000);
    await page.goto(url);
    await page.fill("#sb-deposit-amount", "5,000");
    await page.click("#sb-deposit");
    await page.waitForSelector("#sb-total");
    assert.equal(await text(page, "#sb-payment-status"), "Part paid: ¥7,000 still due");
    assert.equal(await text(page, "#sb-deposited"), "¥5,000");
    // The big figure is now what is left to transfer.
    assert.equal(await text(page, "#sb-amount"), "¥7,000");
    assert.equal(await text(page, "#sb-total"), "of ¥12,000");
    assert.equal(await page.inputValue("#sb-deposit-amount"), "7000");
    await assertFits(page, PHONE.width);
    await screenshot(page, "86-slip-bank-partial-phone-en", { fullPage: true });
    assert.equal((await s.gw.charge(id)).status, "awaiting");

    await page.fill("#sb-deposit-amount", "seven thousand");
    const [refused] = await Promise.all([page.waitForResponse((r) => r.url().endsWith("/act")), page.click("#sb-deposit")]);
    assert.equal(refused.status(), 400);
    await page.waitForSelector("#sb-amount-error");
    assert.equal(await text(page, "#sb-amount-error"), "Enter the amount as a whole number of yen, such as 1200.");
    assert.equal(await page.inputValue("#sb-deposit-amount"), "seven thousand");
    assert.equal(await page.getAttribute("#sb-deposit-amount", "aria-invalid"), "true");
    await assertFits(page, PHONE.width);
    await screenshot(page, "87-slip-bank-bad-amount-phone-en", { fullPage: true });

    await page.fill("#sb-deposit-amount", "7000");
    await page.click("#sb-deposit");
    await page.waitForSelector("#sb-result-title");
    assert.equal(await text(page, "#sb-result-title"), "Payment received");
    assert.equal(await text(page, "#sb-payment-status"), "Paid in full");
    await screenshot(page, "88-slip-bank-paid-phone-en", { fullPage: true });
    const charge = await settled(id);
    assert.equal(charge.status, "successful");
    const ledger = await s.gw.api("GET", `${chargePath(id)}/bank_transfer_ledgers?cursor_direction=asc`);
    assert.deepEqual(
      ledger.items.map((e) => [e.bank_ledger_type, e.amount, e.payment_status]),
      [
        ["deposit", 5000, "insufficient"],
        ["deposit", 7000, "exact"],
        ["payment", 12000, "exact"],
      ],
    );
    assertClean(seen);
  });

  test("a page left open follows a deposit made through the API's test helper (ja, desktop)", async () => {
    const { page, seen } = await shopperPage("ja");
    const { id, url } = await bankCharge(3000);
    await page.goto(url);
    await s.gw.api("POST", `${chargePath(id)}/test_helpers/deposit`, { amount: 1000 });
    await page.waitForFunction(() => document.body.dataset.deposited === "1000", null, { timeout: 15_000 });
    assert.equal(await text(page, "#sb-payment-status"), "一部入金済み（残り ¥2,000）");
    await screenshot(page, "89-slip-bank-partial-ja", { fullPage: true });
    await page.click("#sb-expire");
    await page.waitForSelector("#sb-result-title");
    assert.equal(await text(page, "#sb-result-title"), "お支払い期限が過ぎました");
    await screenshot(page, "89-slip-bank-expired-ja", { fullPage: true });
    const charge = await settled(id);
    assert.equal(charge.status, "failed");
    assert.equal(charge.error?.code, 327);
    assertClean(seen);
  });
});
