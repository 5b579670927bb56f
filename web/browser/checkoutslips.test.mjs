// Konbini payments and bank transfers, paid away from the screen: chosen in
// the widget beside the card (paymentTypes), their forms checked as the API
// checks them (the phone number by the WebAssembly's rule, the API's field
// errors shown next to their fields), then the token, the charge, and once
// it awaits the shopper its instructions in the modal, which stays open on
// them after onSuccess (status "awaiting") until the shopper closes it; and
// the same through the hosted link form, which ends on a page with the
// instructions. Every screen at desktop width and at 375 px; every
// number shown checked against what the API answers with the secret token.

import { describe, test } from "node:test";
import assert from "node:assert/strict";

import { loadVectors } from "./lib/cardvectors.mjs";
import { alertText, merchantLog, screenshot, useSuite, waitForLog, widgetFrame } from "./harness.mjs";

const s = useSuite();

/**
 * Waits until the frame's script runs and its fields follow the
 * WebAssembly (the harness's waitWidgetReady wants a card form, which a
 * frame of konbini payments alone does not have).
 */
async function ready(frame, { timeout = 15_000 } = {}) {
  await frame.waitForFunction(
    () => document.documentElement.classList.contains("js") && document.documentElement.dataset.wasm === "ready" && !!window.kessaiWasm,
    null,
    { timeout },
  );
}

/** The shop's modal page with the query, opened, the widget ready. */
async function openModal(query = {}, pageOpts = {}) {
  const p = await s.newPage(pageOpts);
  await p.page.goto(s.url("/modal", query));
  await p.page.click("#pay");
  const { handle, frame } = await widgetFrame(p.page, s.gw.endpoint);
  await ready(frame);
  return { ...p, handle, frame };
}

const PHONE = { width: 375, height: 812 };
const ALL = "card,konbini,bank_transfer";

/** Chooses a method in the frame's switch by its visible name, as a shopper clicks it. */
async function choose(frame, type) {
  await frame.click(`.kw-switch-option:has(input[value=${type}])`);
  await frame.waitForSelector(`.kw-panel[data-method=${type}]:not([hidden])`);
}

/** What the frame shows of the instructions: [label, value] rows, title, link. */
async function shownSlip(frame) {
  return frame.evaluate(() => ({
    title: document.getElementById("kw-slip-title").textContent,
    text: document.getElementById("kw-slip-text").textContent,
    rows: [...document.querySelectorAll("#kw-slip-list .kw-slip-row")].map((r) => [
      r.querySelector("dt").textContent,
      r.querySelector(".kw-slip-value").textContent,
      r.querySelector(".kw-slip-sub")?.textContent ?? "",
      !!r.querySelector(".kw-copy"),
    ]),
    link: document.getElementById("kw-slip-open").href,
    focused: document.activeElement?.id ?? "",
  }));
}

/** The charge's instructions as the API gives them to the store's server. */
async function issuerToken(chargeId) {
  return s.gw.api("GET", `/stores/${s.gw.credentials.store_id}/charges/${chargeId}/issuer_token`);
}

/** A deadline as a date and time in Japan, as the pages write it. */
function japanTime(iso, lang) {
  const j = new Date(Date.parse(iso) + 9 * 3600_000);
  const hm = `${String(j.getUTCHours()).padStart(2, "0")}:${String(j.getUTCMinutes()).padStart(2, "0")}`;
  const wd = lang === "ja" ? "日月火水木金土"[j.getUTCDay()] : ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][j.getUTCDay()];
  if (lang === "ja") return `${j.getUTCFullYear()}年${j.getUTCMonth() + 1}月${j.getUTCDate()}日（${wd}）${hm}（日本時間）`;
  const mon = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(" ")[j.getUTCMonth()];
  return `${wd} ${j.getUTCDate()} ${mon} ${j.getUTCFullYear()}, ${hm} (Japan time)`;
}

/** Nothing overflows the frame sideways (a phone-sized screen). */
async function assertNoOverflow(frame, what) {
  const wide = await frame.evaluate(() => {
    const w = document.documentElement.clientWidth;
    return [...document.querySelectorAll("#kw *")]
      .filter((el) => el.getClientRects().length && el.getBoundingClientRect().right > w + 0.5)
      .map((el) => `${el.tagName}.${el.className} ${Math.round(el.getBoundingClientRect().right)} > ${w}`);
  });
  assert.deepEqual(wide, [], `${what}: wider than the frame`);
}

function assertClean(seen) {
  assert.deepEqual(seen.csp, [], `CSP violations on the merchant page: ${JSON.stringify(seen.csp)}`);
  assert.deepEqual(seen.errors, [], "uncaught errors");
}

describe("konbini in the modal", () => {
  test("the form is checked as the API checks it; paid at FamilyMart, the modal shows the numbers and stays open", async () => {
    const { page, frame, seen, context } = await openModal({ amount: 3200, paymentTypes: ALL });
    for (const origin of [s.gw.endpoint, s.merchant.origin]) await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
    // The switch offers the three forms, the card's first.
    const offered = await frame.$$eval(".kw-switch-input", (els) => els.map((e) => [e.value, e.checked]));
    assert.deepEqual(offered, [["card", true], ["konbini", false], ["bank_transfer", false]]);
    await screenshot(page, "60-modal-methods-card");

    await choose(frame, "konbini");
    assert.equal(await frame.isHidden("#kw-panel-card"), true, "the card form gives way");
    assert.equal((await frame.textContent("#kw-pay-label")).trim(), "Pay ¥3,200 at a store");
    assert.equal((await frame.textContent("#kw-email-label")).trim(), "Email (optional)");
    assert.equal(await frame.getAttribute("#kw-email", "aria-required"), null, "the e-mail is optional here");
    const stores = await frame.$$eval("#kw-store option", (els) => els.map((e) => [e.value, e.textContent]));
    assert.equal(stores.length, 11, JSON.stringify(stores));
    assert.deepEqual(stores[1], ["seven_eleven", "7-Eleven"]);
    assert.deepEqual(stores.at(-1), ["yamazaki_daily_store", "Yamazaki Daily Store"]);
    await screenshot(page, "61-modal-konbini-form");

    // Submitted empty: each field says what it needs, announced, and the
    // first takes the focus; nothing is sent.
    const tokensBefore = seen.requests.filter((r) => r.url.endsWith("/tokens")).length;
    await frame.click("#kw-pay");
    await frame.waitForSelector("#kw-store[aria-invalid=true]");
    assert.equal(await frame.textContent("#kw-store-err"), "Choose a convenience store.");
    assert.equal(await frame.textContent("#kw-cname-err"), "Enter your name.");
    assert.equal(await frame.textContent("#kw-phone-err"), "Enter your phone number.");
    assert.equal(await frame.getAttribute("#kw-phone-err", "aria-live"), "polite");
    assert.equal(await frame.evaluate(() => document.activeElement.id), "kw-store");
    assert.equal(seen.requests.filter((r) => r.url.endsWith("/tokens")).length, tokensBefore, "nothing sent");

    // A foreign number, then too short a one: the API's reasons, said here.
    await frame.selectOption("#kw-store", "family_mart");
    await frame.fill("#kw-cname", "山田 太郎");
    await frame.fill("#kw-phone", "+1 415 555 0100");
    await frame.press("#kw-phone", "Tab");
    assert.equal(await frame.textContent("#kw-phone-err"), "Enter a Japanese phone number.");
    await frame.fill("#kw-phone", "090-1234");
    await frame.press("#kw-phone", "Tab");
    assert.match(await frame.textContent("#kw-phone-err"), /10 or 11 digits/);
    await screenshot(page, "62-modal-konbini-errors");
    // Typed with a Japanese keyboard: full-width digits and ー.
    await frame.fill("#kw-phone", "０９０ー１２３４ー５６７８");
    assert.equal(await frame.textContent("#kw-phone-err"), "", "the error goes as the number becomes right");

    await frame.click("#kw-pay");
    await frame.waitForSelector("#kw-slip:not([hidden])", { timeout: 20_000 });
    const ok = await waitForLog(page, "onSuccess", { timeout: 20_000 });
    assert.equal(ok.value.status, "awaiting");
    assert.equal(ok.value.response.status, "awaiting");
    const charge = await s.gw.charge(ok.value.chargeId);
    assert.equal(charge.status, "awaiting");
    assert.equal(charge.requested_amount, 3200);
    const token = await s.gw.api("GET", `/stores/${s.gw.credentials.store_id}/tokens/${charge.transaction_token_id}`);
    assert.equal(token.payment_type, "konbini");
    assert.deepEqual(token.data.phone_number, { country_code: 81, local_number: "09012345678" });
    assert.equal(token.data.customer_name, "山田 太郎");
    assert.equal(token.data.convenience_store, "family_mart");

    // What the modal shows is what the store's server reads.
    const it = await issuerToken(charge.id);
    const shown = await shownSlip(frame);
    assert.equal(shown.title, "Pay at FamilyMart");
    assert.deepEqual(shown.rows, [
      ["Pay at", "FamilyMart", "", false],
      ["Payment number", it.payload.payment_number, "", true],
      ["Confirmation number", it.payload.confirmation_number, "", true],
      ["Amount", "¥3,200", "", false],
      ["Pay by", japanTime(it.payload.expiration_date, "en"), "", false],
    ]);
    assert.equal(shown.link, it.issuer_token);
    assert.equal(shown.focused, "kw-slip", "the instructions take the focus");
    assert.equal(await frame.getAttribute("#kw-slip-open", "target"), "_blank");
    await screenshot(page, "63-modal-konbini-instructions");

    // The copy buttons put the number on the clipboard and say so.
    await frame.click("#kw-slip-list .kw-slip-row:nth-child(2) .kw-copy");
    await frame.waitForFunction(() => document.getElementById("kw-copied").textContent === "Copied");
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), it.payload.payment_number);
    assert.equal(
      await frame.getAttribute("#kw-slip-list .kw-slip-row:nth-child(2) .kw-copy", "aria-label"),
      "Copy the payment number",
    );

    // Still open well after the 1.6 s a paid card's modal waits.
    await page.waitForTimeout(2500);
    assert.ok(await page.$("iframe[src*='/widget/frame']"), "the modal stayed open");
    assert.equal((await merchantLog(page)).some((e) => e.kind === "closed"), false);
    await frame.click("#kw-slip-done");
    await waitForLog(page, "closed");
    await page.waitForSelector("iframe[src*='/widget/frame']", { state: "detached" });
    assertClean(seen);
  });

  test("on a phone, in Japanese: Seven-Eleven's slip number alone, nothing wider than the screen", async () => {
    const { page, frame, seen } = await openModal({ amount: 1980, paymentTypes: ALL, locale: "ja" }, { viewport: PHONE, locale: "ja-JP" });
    await choose(frame, "konbini");
    assert.equal((await frame.textContent("#kw-pay-label")).trim(), "¥1,980 をコンビニで支払う");
    await frame.selectOption("#kw-store", "seven_eleven");
    await frame.fill("#kw-cname", "佐藤 花子");
    await frame.fill("#kw-phone", "03-1234-5678");
    await assertNoOverflow(frame, "the konbini form");
    await screenshot(page, "64-modal-konbini-form-ja-375");
    await frame.click("#kw-pay");
    await frame.waitForSelector("#kw-slip:not([hidden])", { timeout: 20_000 });
    const ok = await waitForLog(page, "onSuccess", { timeout: 20_000 });
    const it = await issuerToken(ok.value.chargeId);
    const shown = await shownSlip(frame);
    assert.equal(shown.title, "セブン-イレブンでお支払いください");
    assert.deepEqual(
      shown.rows.map((r) => r.slice(0, 2)),
      [
        ["お支払い先", "セブン-イレブン"],
        ["お支払い番号", it.payload.payment_number],
        ["お支払い金額", "¥1,980"],
        ["お支払い期限", japanTime(it.payload.expiration_date, "ja")],
      ],
      "no confirmation number at Seven-Eleven",
    );
    await assertNoOverflow(frame, "the instructions");
    await screenshot(page, "65-modal-konbini-instructions-ja-375");
    // Escape closes it too.
    await frame.press("#kw-slip", "Escape");
    await waitForLog(page, "closed");
    assertClean(seen);
  });

  test("the API's field errors show next to their fields", async () => {
    const { page, frame, context } = await openModal({ amount: 1200, paymentTypes: "konbini" });
    // Only the konbini form: no switch, no card.
    assert.equal(await frame.$("#kw-switch"), null);
    assert.equal(await frame.$("#kw-number"), null);
    // The API refuses the number and the name (as it would a number of
    // another country after a change of its rule): the frame says so on
    // the fields, not in a banner.
    await context.route(`${s.gw.endpoint}/tokens`, (route) =>
      route.fulfill({
        status: 400,
        contentType: "application/json",
        body: JSON.stringify({
          status: "error",
          code: "VALIDATION_ERROR",
          errors: [
            { field: "phone_number", reason: "ONLY_JAPANESE_PHONE_NUMBER_ALLOWED" },
            { field: "customer_name", reason: "INVALID_FORMAT_LENGTH" },
          ],
        }),
      }),
    );
    await frame.selectOption("#kw-store", "lawson");
    await frame.fill("#kw-cname", "Taro Yamada");
    await frame.fill("#kw-phone", "09012345678");
    await frame.click("#kw-pay");
    const err = await waitForLog(page, "onError");
    assert.equal(err.value.code, "VALIDATION_ERROR");
    assert.equal(await frame.textContent("#kw-phone-err"), "Enter a Japanese phone number.");
    assert.equal(await frame.getAttribute("#kw-phone", "aria-invalid"), "true");
    assert.match(await frame.textContent("#kw-cname-err"), /up to 60 characters/);
    assert.equal(await alertText(frame), "", "no banner for a field's problem");
    assert.equal(await frame.evaluate(() => document.activeElement.id), "kw-cname", "the first field in error has the focus");
    assert.equal(await frame.isDisabled("#kw-pay"), false, "the shopper may correct and pay again");
  });

  test("the WebAssembly's phone rule answers every vector as Go does, inside Chromium", async () => {
    const { frame } = await openModal({ paymentTypes: ALL });
    const { field } = loadVectors();
    const wrong = await frame.evaluate((vectors) => {
      const out = [];
      for (const v of vectors) {
        for (const [name, K] of [["wasm", window.kessaiWasm], ["js", window.KessaiCard]]) {
          const p = K.japanesePhone(v.in);
          if (p.local !== v.local || p.state !== v.state) out.push(`${name} ${JSON.stringify(v.in)}: ${p.local}|${p.state}`);
        }
      }
      return out;
    }, field.phone);
    assert.ok(field.phone.length > 100);
    assert.deepEqual(wrong.slice(0, 20), []);
  });
});

describe("on a phone, in English", () => {
  test("the switch, a konbini form in error and the bank form fit a 375 px screen", async () => {
    const { page, frame, seen } = await openModal({ amount: 2500, paymentTypes: ALL }, { viewport: PHONE });
    await assertNoOverflow(frame, "the card form with the switch");
    await screenshot(page, "80-modal-methods-card-375");
    await choose(frame, "konbini");
    await frame.fill("#kw-phone", "+44 20 7946 0958");
    await frame.click("#kw-pay");
    await frame.waitForSelector("#kw-store[aria-invalid=true]");
    assert.equal(await frame.textContent("#kw-phone-err"), "Enter a Japanese phone number.");
    await assertNoOverflow(frame, "the konbini form in error");
    await screenshot(page, "81-modal-konbini-errors-375");
    await choose(frame, "bank_transfer");
    assert.equal(await frame.isHidden("#kw-panel-konbini"), true);
    await assertNoOverflow(frame, "the bank form");
    await screenshot(page, "82-modal-bank-form-375");
    assertClean(seen);
  });

  test("keyboard only: the switch moves with the arrow keys, the konbini form is filled and paid", async () => {
    const { page, frame, seen } = await openModal({ amount: 1500, paymentTypes: ALL }, { viewport: PHONE });
    await frame.focus(".kw-switch-input[value=card]");
    await page.keyboard.press("ArrowRight");
    await frame.waitForSelector("#kw-panel-konbini:not([hidden])");
    assert.equal(await frame.evaluate(() => document.activeElement.value), "konbini");
    await page.keyboard.press("Tab");
    assert.equal(await frame.evaluate(() => document.activeElement.id), "kw-store", "from the switch to the form's first field");
    await page.keyboard.press("ArrowDown"); // a closed select moves to its next option
    await page.keyboard.press("Tab");
    await page.keyboard.type("Hanako Sato");
    await page.keyboard.press("Tab");
    await page.keyboard.type("09011112222");
    await page.keyboard.press("Tab");
    assert.equal(await frame.evaluate(() => document.activeElement.id), "kw-email");
    await page.keyboard.press("Tab");
    assert.equal(await frame.evaluate(() => document.activeElement.id), "kw-pay");
    await page.keyboard.press("Enter");
    await frame.waitForSelector("#kw-slip:not([hidden])", { timeout: 20_000 });
    const ok = await waitForLog(page, "onSuccess", { timeout: 20_000 });
    const token = await s.gw.api("GET", `/stores/${s.gw.credentials.store_id}/tokens/${ok.value.tokenId}`);
    assert.equal(token.data.convenience_store, "seven_eleven");
    assert.equal(token.data.customer_name, "Hanako Sato");
    assertClean(seen);
  });

  test("a shop that offers konbini alone: no switch, the stores it names", async () => {
    const { page, frame } = await openModal({ amount: 900, paymentTypes: "seven_eleven,lawson,family_mart" }, { viewport: PHONE });
    assert.equal(await frame.$("#kw-switch"), null);
    const stores = await frame.$$eval("#kw-store option", (els) => els.map((e) => e.value));
    assert.deepEqual(stores, ["", "seven_eleven", "family_mart", "lawson"], "in the API's order");
    assert.equal((await frame.textContent("#kw-pay-label")).trim(), "Pay ¥900 at a store");
    await screenshot(page, "83-modal-konbini-only-375");
  });
});

describe("beside a wallet", () => {
  test("the wallet's button above, then the forms", async () => {
    const { page, frame } = await openModal({ amount: 3000, paymentTypes: "pay_pay_online,konbini,bank_transfer" });
    assert.equal((await frame.textContent(".kw-or")).trim(), "Or pay another way");
    const offered = await frame.$$eval(".kw-switch-input", (els) => els.map((e) => e.value));
    assert.deepEqual(offered, ["konbini", "bank_transfer"]);
    await screenshot(page, "85-modal-wallet-konbini");
  });
});

describe("bank transfer in the modal", () => {
  test("to the sandbox's bank: the account, the amount and the deadline, each to copy", async () => {
    const { page, frame, seen } = await openModal({ amount: 5400, paymentTypes: ALL });
    await choose(frame, "bank_transfer");
    assert.equal((await frame.textContent("#kw-pay-label")).trim(), "Pay ¥5,400 by bank transfer");
    // Test mode: the real bank and the sandbox's; the first chosen.
    const banks = await frame.$$eval("#kw-bank input", (els) => els.map((e) => [e.value, e.checked]));
    assert.deepEqual(banks, [["aozora_bank", true], ["bank_test_brand", false]]);
    await frame.click("label.kw-choice:has(input[value=bank_test_brand])");
    await screenshot(page, "66-modal-bank-form");
    await frame.click("#kw-pay");
    await frame.waitForSelector("#kw-slip:not([hidden])", { timeout: 20_000 });
    const ok = await waitForLog(page, "onSuccess", { timeout: 20_000 });
    assert.equal(ok.value.status, "awaiting");
    const token = await s.gw.api("GET", `/stores/${s.gw.credentials.store_id}/tokens/${ok.value.tokenId}`);
    assert.equal(token.payment_type, "bank_transfer");
    assert.equal(token.data.brand, "bank_test_brand");
    const it = await issuerToken(ok.value.chargeId);
    assert.equal(it.account_number, token.data.account_number);
    const shown = await shownSlip(frame);
    assert.equal(shown.title, "Transfer ¥5,400");
    assert.deepEqual(shown.rows, [
      ["Bank", it.payload.bank_name, `code ${it.payload.bank_code}`, false],
      ["Branch", it.payload.branch_name, `code ${it.payload.branch_code}`, false],
      ["Account type", "Ordinary", "", false],
      ["Account number", token.data.account_number, "", true],
      ["Account holder", token.data.account_holder_name, "", true],
      ["Amount", "¥5,400", "", true],
      ["Pay by", japanTime(it.payload.expiration_date, "en"), "", false],
    ]);
    await screenshot(page, "67-modal-bank-instructions");
    assertClean(seen);
  });

  test("on a phone, in Japanese", async () => {
    const { page, frame, seen } = await openModal({ amount: 12000, paymentTypes: ALL, locale: "ja" }, { viewport: PHONE, locale: "ja-JP" });
    await choose(frame, "bank_transfer");
    await assertNoOverflow(frame, "the bank form");
    await screenshot(page, "68-modal-bank-form-ja-375");
    await frame.click("#kw-pay");
    await frame.waitForSelector("#kw-slip:not([hidden])", { timeout: 20_000 });
    const ok = await waitForLog(page, "onSuccess", { timeout: 20_000 });
    const it = await issuerToken(ok.value.chargeId);
    const shown = await shownSlip(frame);
    assert.equal(shown.title, "¥12,000 をお振込みください");
    assert.deepEqual(shown.rows.map((r) => r[0]), ["銀行名", "支店名", "口座種別", "口座番号", "口座名義", "お支払い金額", "お支払い期限"]);
    assert.equal(shown.rows[0][1], "GMOあおぞらネット銀行");
    assert.equal(shown.rows[2][1], "普通");
    assert.equal(shown.rows[3][1], it.payload.account_number);
    assert.equal(shown.rows[6][1], japanTime(it.payload.expiration_date, "ja"));
    await assertNoOverflow(frame, "the instructions");
    await screenshot(page, "69-modal-bank-instructions-ja-375");
    // Keyboard: Tab stays inside the modal, through the copy buttons, the
    // link and the close button.
    const stops = [];
    for (let i = 0; i < 8; i++) {
      await page.keyboard.press("Tab");
      stops.push(await frame.evaluate(() => document.activeElement?.className || document.activeElement?.id || ""));
    }
    assert.ok(stops.includes("kw-copy") && stops.includes("kw-slip-open") && stops.some((c) => /kw-slip-done/.test(c)), stops.join(", "));
    assertClean(seen);
  });
});

describe("what a shop asks for and what the store allows", () => {
  test("in another currency than yen, or authorised only, the card alone is offered", async () => {
    for (const query of [{ currency: "USD" }, { capture: "false" }]) {
      const { frame } = await openModal({ amount: 1000, paymentTypes: ALL, ...query });
      assert.equal(await frame.$("#kw-switch"), null, JSON.stringify(query));
      assert.equal(await frame.$("#kw-store"), null);
    }
  });

  test("checkout token: just the token, no charge", async () => {
    const { page, frame } = await openModal({ checkout: "token", amount: undefined, paymentTypes: "konbini" });
    assert.equal((await frame.textContent("#kw-pay-label")).trim(), "Continue");
    await frame.selectOption("#kw-store", "lawson");
    await frame.fill("#kw-cname", "Taro Yamada");
    await frame.fill("#kw-phone", "080-1111-2222");
    await frame.click("#kw-pay");
    const ok = await waitForLog(page, "onSuccess", { timeout: 20_000 });
    assert.equal(ok.value.chargeId, null);
    await frame.waitForSelector("#kw-done:not([hidden])");
    assert.equal((await frame.textContent("#kw-done-title")).trim(), "Payment details received");
    await screenshot(page, "84-modal-konbini-token-saved");
    const token = await s.gw.api("GET", `/stores/${s.gw.credentials.store_id}/tokens/${ok.value.tokenId}`);
    assert.equal(token.payment_type, "konbini");
    assert.equal(token.type, "one_time");
  });
});

describe("HTML mode", () => {
  test("the form goes to the shop once the shopper has closed the instructions, with the charge's id", async () => {
    const { page, seen } = await s.newPage();
    const before = s.merchant.submissions.length;
    await page.goto(s.url("/html", { amount: 2200, paymentTypes: "konbini" }));
    await page.locator("form#order span[data-app-id] button").click();
    const { frame } = await widgetFrame(page, s.gw.endpoint);
    await ready(frame);
    await frame.selectOption("#kw-store", "mini_stop");
    await frame.fill("#kw-cname", "Taro Yamada");
    await frame.fill("#kw-phone", "070-1234-5678");
    await frame.click("#kw-pay");
    await frame.waitForSelector("#kw-slip:not([hidden])", { timeout: 20_000 });
    // The ids are in the form, which waits for the shopper.
    await page.waitForFunction(() => !!document.querySelector("input[name=univapayChargeId]")?.value);
    await page.waitForTimeout(2000);
    assert.equal(s.merchant.submissions.length, before, "not submitted while the instructions are on screen");
    await Promise.all([page.waitForURL(`${s.merchant.origin}/submit`, { timeout: 20_000 }), frame.click("#kw-slip-done")]);
    const { fields } = s.merchant.submissions.at(-1);
    assert.equal(fields.orderRef, "A-1003");
    const charge = await s.gw.charge(fields.univapayChargeId);
    assert.equal(charge.status, "awaiting");
    assert.equal(charge.transaction_token_id, fields.univapayTokenId);
    assertClean(seen);
  });
});

/** Opens the hosted link form with the query and returns its page and frame. */
async function openLinkForm(query, pageOpts) {
  const p = await s.newPage(pageOpts);
  const u = new URL(`/forms/${query.id}`, s.gw.endpoint);
  for (const [k, v] of Object.entries(query)) if (k !== "id") u.searchParams.set(k, v);
  await p.page.goto(u.href);
  const { frame } = await widgetFrame(p.page, s.gw.endpoint, { scope: "#lf-frame" });
  await ready(frame);
  return { ...p, frame };
}

/** The instructions on the link form's result page. */
async function resultSlip(page) {
  return page.evaluate(() => ({
    title: document.querySelector("h1").textContent,
    rows: [...document.querySelectorAll(".lf-slip > div")].map((r) => [r.querySelector("dt").textContent, r.querySelector("dd").firstChild.textContent.trim()]),
    link: document.querySelector(".lf-slip ~ a.lf-btn")?.href ?? "",
    back: document.querySelector("a.lf-btn:not(.lf-btn-quiet)")?.href ?? "",
  }));
}

describe("hosted link form", () => {
  test("konbini: submitted, the form ends on the instructions, with the way back to the shop", async () => {
    const { page, frame, seen } = await openLinkForm({
      id: "konbini-order",
      appId: s.appId,
      amount: "4100",
      currency: "JPY",
      order_id: "ORDER-KONBINI",
      paymentTypes: "konbini,bank_transfer",
      successRedirectUrl: `${s.merchant.origin}/done?shop=konbini`,
      pendingRedirectUrl: `${s.merchant.origin}/done?shop=konbini-pending`,
      autoRedirect: "true",
    });
    assert.equal((await page.textContent("h1.lf-title")).trim(), "How would you like to pay?");
    await frame.selectOption("#kw-store", "lawson");
    await frame.fill("#kw-cname", "Taro Yamada");
    await frame.fill("#kw-phone", "080-1234-5678");
    await screenshot(page, "70-linkform-konbini-form", { fullPage: true });
    await page.setViewportSize(PHONE);
    await screenshot(page, "76-linkform-konbini-form-375", { fullPage: true });
    await page.setViewportSize({ width: 1000, height: 900 });
    await Promise.all([page.waitForURL(`${s.gw.endpoint}/forms/konbini-order/complete`, { timeout: 20_000 }), page.click("#lf-pay")]);
    // autoRedirect or not, the page stays: the shopper needs the numbers.
    await page.waitForTimeout(500);
    assert.ok(page.url().startsWith(s.gw.endpoint), page.url());
    const shown = await resultSlip(page);
    const back = new URL(shown.back);
    assert.equal(back.searchParams.get("shop"), "konbini-pending");
    const charge = await s.gw.charge(back.searchParams.get("univapayChargeId"));
    assert.equal(charge.status, "awaiting");
    assert.equal(charge.metadata?.order_id, "ORDER-KONBINI");
    const it = await issuerToken(charge.id);
    assert.equal(shown.title, "Pay at Lawson");
    assert.deepEqual(shown.rows, [
      ["Pay at", "Lawson"],
      ["Payment number", it.payload.payment_number],
      ["Confirmation number", it.payload.confirmation_number],
      ["Amount", "¥4,100"],
      ["Pay by", japanTime(it.payload.expiration_date, "en")],
    ]);
    assert.equal(shown.link, it.issuer_token);
    await screenshot(page, "71-linkform-konbini-instructions", { fullPage: true });
    await page.setViewportSize(PHONE);
    await screenshot(page, "72-linkform-konbini-instructions-375", { fullPage: true });
    assert.deepEqual(seen.errors, [], "uncaught errors");
  });

  test("bank transfer, in Japanese on a phone", async () => {
    const { page, frame, seen } = await openLinkForm(
      {
        id: "bank-order",
        appId: s.appId,
        amount: "8800",
        currency: "JPY",
        locale: "ja",
        paymentTypes: "card,bank_transfer",
        successRedirectUrl: `${s.merchant.origin}/done?shop=bank`,
      },
      { viewport: PHONE, locale: "ja-JP" },
    );
    await choose(frame, "bank_transfer");
    await frame.click("label.kw-choice:has(input[value=bank_test_brand])");
    await screenshot(page, "73-linkform-bank-form-ja-375", { fullPage: true });
    await page.setViewportSize({ width: 1200, height: 900 });
    await screenshot(page, "77-linkform-bank-form-ja", { fullPage: true });
    await page.setViewportSize(PHONE);
    await Promise.all([page.waitForURL(`${s.gw.endpoint}/forms/bank-order/complete`, { timeout: 20_000 }), page.click("#lf-pay")]);
    const shown = await resultSlip(page);
    assert.equal(shown.title, "¥8,800 をお振込みください");
    const back = new URL(shown.back);
    assert.equal(back.searchParams.get("shop"), "bank", "no pending URL: the success URL, with the ids");
    const it = await issuerToken(back.searchParams.get("univapayChargeId"));
    assert.deepEqual(shown.rows, [
      ["銀行名", it.payload.bank_name],
      ["支店名", it.payload.branch_name],
      ["口座種別", "普通"],
      ["口座番号", it.payload.account_number],
      ["口座名義", it.payload.account_holder_name],
      ["お支払い金額", "¥8,800"],
      ["お支払い期限", japanTime(it.payload.expiration_date, "ja")],
    ]);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
    assert.equal(wide, false, "the result page fits the phone");
    await screenshot(page, "74-linkform-bank-instructions-ja-375", { fullPage: true });
    await page.setViewportSize({ width: 1200, height: 900 });
    await screenshot(page, "75-linkform-bank-instructions-ja", { fullPage: true });
    assert.deepEqual(seen.errors, [], "uncaught errors");
  });
});
