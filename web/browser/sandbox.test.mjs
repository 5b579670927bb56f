// The sandbox's approval pages on the gateway's origin (web/sandboxpages/approval.go):
// each wallet's payment screen and the 3-D Secure challenge, in English and
// Japanese, on a desktop and a phone, clicked through Pay / Fail / Cancel /
// Let it expire and a wrong and a right code. Every outcome is checked
// through the API with the store's secret token. Charges are made from Node
// as a merchant's server makes them; the browser is the shopper's.

import { describe, test } from "node:test";
import assert from "node:assert/strict";

import { screenshot, useSuite } from "./harness.mjs";

const s = useSuite();

const ONLINE = ["pay_pay_online", "alipay_online", "alipay_plus_online", "we_chat_online", "d_barai_online"];
const MERCHANT_QR = ["pay_pay_merchant", "alipay_merchant_qr", "we_chat_mpm", "rakuten_pay_merchant", "d_barai_merchant"];
const CHALLENGE_CARD = "4000002760003184";
const PHONE = { width: 390, height: 844 };

/**
 * A charge awaiting its shopper in a wallet; resolves to { id, url } with
 * the wallet page's URL (the issuer token, or for a merchant QR brand the
 * page its QR code's PNG is of).
 */
async function walletCharge(brand, { amount = 1800, redirect } = {}) {
  const qr = MERCHANT_QR.includes(brand);
  const token = await s.gw.api("POST", "/tokens", {
    payment_type: qr ? "qr_merchant" : "online",
    type: "one_time",
    email: "shopper@example.com",
    ip_address: "203.0.113.7",
    data: qr ? { brand } : { brand, call_method: "web" },
  });
  const charge = await s.gw.api("POST", "/charges", {
    transaction_token_id: token.id,
    amount,
    currency: "JPY",
    ...(redirect && { redirect: { endpoint: redirect } }),
  });
  const awaiting = await s.gw.charge(charge.id);
  assert.equal(awaiting.status, "awaiting", `${brand} charge`);
  const path = `/stores/${s.gw.credentials.store_id}/charges/${charge.id}`;
  if (qr) {
    const code = await s.gw.api("GET", `${path}/qr`);
    assert.equal(code.ready, true);
    assert.match(code.qr_image_url, /\/sandbox\/wallet\/[A-Z2-7]{26}\/qr\.png$/);
    return { id: charge.id, url: code.qr_image_url.replace(/\/qr\.png$/, "") };
  }
  const it = await s.gw.api("GET", `${path}/issuer_token`);
  assert.equal(it.call_method, "web");
  return { id: charge.id, url: it.issuer_token };
}

/** A ¥3,000 charge on the challenge card awaiting its 3-D Secure challenge. */
async function challengeCharge({ redirect, redirectId } = {}) {
  const token = await s.gw.api("POST", "/tokens", {
    payment_type: "card",
    type: "one_time",
    email: "shopper@example.com",
    data: { cardholder: "TARO YAMADA", card_number: CHALLENGE_CARD, exp_month: 12, exp_year: new Date().getFullYear() + 3, cvv: "123" },
  });
  const charge = await s.gw.api("POST", "/charges", {
    transaction_token_id: token.id,
    amount: 3000,
    currency: "JPY",
    three_ds: { mode: "normal", ...(redirect && { redirect_endpoint: redirect }), ...(redirectId && { redirect_id: redirectId }) },
  });
  const awaiting = await s.gw.charge(charge.id);
  assert.equal(awaiting.status, "awaiting");
  const it = await s.gw.api("GET", `/stores/${s.gw.credentials.store_id}/charges/${charge.id}/three_ds/issuer_token`);
  assert.equal(it.call_method, "http_post");
  return { id: charge.id, url: it.issuer_token, payload: it.payload };
}

/** The charge once the worker has finished with it (it leaves awaiting). */
async function settled(id) {
  const until = Date.now() + 10_000;
  for (;;) {
    const c = await s.gw.charge(id);
    if (!["pending", "awaiting", "authorized"].includes(c.status) || Date.now() > until) return c;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** No uncaught error and no CSP report on the gateway's pages. */
function assertClean(seen) {
  assert.deepEqual(seen.errors, [], "uncaught errors");
  const csp = seen.console.filter((m) => /Content Security Policy|Refused to/i.test(m.text));
  assert.deepEqual(csp, [], "CSP violations");
}

/** A page in lang (its browser's language), at the desktop size or a phone's. */
function shopperPage(lang, viewport) {
  return s.newPage({ locale: lang === "ja" ? "ja-JP" : "en-US", ...(viewport && { viewport }) });
}

describe("wallet pages", () => {
  for (const lang of ["en", "ja"]) {
    test(`every online wallet's look (${lang})`, async () => {
      const { page, seen } = await shopperPage(lang);
      for (const brand of ONLINE) {
        const { url } = await walletCharge(brand);
        const res = await page.goto(url);
        assert.equal(res.status(), 200);
        assert.equal(await page.getAttribute("html", "lang"), lang);
        await page.waitForSelector("#sb-pay");
        const qr = await page.$eval(".sb-qr-img", (img) => ({ ok: img.complete && img.naturalWidth > 100, w: img.naturalWidth }));
        assert.ok(qr.ok, `${brand}: the QR code did not load (${qr.w})`);
        // The bar wears the wallet's colour, not the page's default.
        const bar = await page.$eval(".sb-bar", (el) => getComputedStyle(el).backgroundImage);
        assert.match(bar, /gradient/);
        assert.match(await page.textContent(".sb-amount"), /¥1,800/);
        const labels = await page.$$eval("form.sb-act button", (bs) => bs.map((b) => b.textContent.trim()));
        assert.deepEqual(labels, lang === "ja" ? ["支払う", "失敗させる", "キャンセル", "期限切れにする"] : ["Pay", "Fail", "Cancel", "Let it expire"]);
        await screenshot(page, `60-sandbox-wallet-${brand}-${lang}`, { fullPage: true });
      }
      assertClean(seen);
    });
  }

  test("merchant-presented QR brands look as their wallets", async () => {
    const { page, seen } = await shopperPage("en");
    for (const brand of MERCHANT_QR) {
      const { url } = await walletCharge(brand);
      await page.goto(url);
      await page.waitForSelector("#sb-pay");
      await screenshot(page, `60-sandbox-wallet-${brand}-en`, { fullPage: true });
    }
    assertClean(seen);
  });

  const actions = [
    { button: "#sb-pay", name: "paid", status: "successful", code: undefined, en: "Payment complete", ja: "お支払いが完了しました" },
    { button: "#sb-fail", name: "failed", status: "failed", code: 340, en: "Payment refused", ja: "お支払いが拒否されました" },
    { button: "#sb-cancel", name: "canceled", status: "canceled", code: 345, en: "Payment canceled", ja: "お支払いをキャンセルしました" },
    { button: "#sb-expire", name: "expired", status: "failed", code: 327, en: "Payment expired", ja: "お支払いの期限が切れました" },
  ];
  for (const lang of ["en", "ja"]) {
    for (const a of actions) {
      test(`${a.button.slice(4)} on the wallet page (${lang}): the charge is ${a.status}${a.code ? ` (${a.code})` : ""}`, async () => {
        const { page, seen } = await shopperPage(lang);
        const { id, url } = await walletCharge(lang === "ja" ? "d_barai_online" : "pay_pay_online");
        await page.goto(url);
        const [act] = await Promise.all([page.waitForRequest((r) => r.url().endsWith("/act")), page.click(a.button)]);
        await page.waitForSelector("#sb-result-title");
        assert.equal((await page.textContent("#sb-result-title")).trim(), a[lang]);
        await screenshot(page, `61-sandbox-wallet-${a.name}-${lang}`, { fullPage: true });
        // The page's own post, as Chromium sends it: under the page's
        // no-referrer policy its Origin is "null" (or the gateway's).
        const sent = await act.allHeaders();
        assert.equal(sent.origin, "null", `Origin ${sent.origin}`);
        assert.equal(sent["sec-fetch-site"], "same-origin");
        const charge = await settled(id);
        assert.equal(charge.status, a.status);
        assert.equal(charge.error?.code, a.code);
        assertClean(seen);
      });
    }
  }

  test("a wallet page on a phone", async () => {
    const { page, seen } = await shopperPage("ja", PHONE);
    const { url } = await walletCharge("pay_pay_online");
    await page.goto(url);
    await page.waitForSelector("#sb-pay");
    // Nothing wider than the screen.
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= PHONE.width, `the page is ${width}px wide`);
    await screenshot(page, "62-sandbox-wallet-phone-ja", { fullPage: true });
    assertClean(seen);
  });

  test("the desktop tab follows a payment made on the phone that scanned its code", async () => {
    const { page, seen } = await shopperPage("en");
    const { id, url } = await walletCharge("alipay_online");
    await page.goto(url);
    await page.waitForSelector("#sb-pay");
    const before = await page.textContent("#sb-time-left");
    await page.waitForFunction((t) => document.getElementById("sb-time-left").textContent !== t, before, { timeout: 5_000 });
    // The phone: another browser on the page's address, paying there.
    const phone = await shopperPage("en", PHONE);
    await phone.page.goto(url);
    await phone.page.click("#sb-pay");
    await phone.page.waitForSelector("#sb-result-title");
    await screenshot(phone.page, "63-sandbox-wallet-phone-paid", { fullPage: true });
    // The desktop tab reloads into the outcome by itself.
    await page.waitForSelector("#sb-result-title", { timeout: 10_000 });
    assert.equal((await page.textContent("#sb-result-title")).trim(), "Payment complete");
    await screenshot(page, "63-sandbox-wallet-desktop-followed", { fullPage: true });
    assert.equal((await settled(id)).status, "successful");
    assertClean(seen);
  });

  test("the JSON endpoint for scripts, and the merchant's redirect endpoint", async () => {
    const { id, url } = await walletCharge("we_chat_online", { redirect: `${s.merchant.origin}/done?order=A-77` });
    const res = await fetch(`${url}/act`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ action: "fail" }) });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: "failed", resource_id: id, resource_type: "charge" });
    const { page } = await shopperPage("en");
    // The ended page sends the shopper back to the shop with the ids.
    await page.goto(url);
    await page.waitForURL(`${s.merchant.origin}/done**`);
    const back = new URL(page.url());
    assert.equal(back.searchParams.get("order"), "A-77");
    assert.equal(back.searchParams.get("resource_id"), id);
    assert.equal(back.searchParams.get("resource_type"), "charge");
    assert.equal((await settled(id)).error?.code, 340);
  });
});

describe("pages in another site's hands", () => {
  test("a form on the merchant's page posting to a wallet page's /act is refused, even with the page's token", async () => {
    const { page } = await shopperPage("en");
    const { id, url } = await walletCharge("pay_pay_online");
    // The token, as if it had leaked: the gateway gave it to the page.
    const html = await (await fetch(url)).text();
    const csrf = html.match(/name="csrf" value="([^"]+)"/)[1];
    await page.goto(`${s.merchant.origin}/blank`);
    const [res] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/act")),
      page.evaluate(
        ({ action, csrf }) => {
          const f = document.createElement("form");
          f.method = "post";
          f.action = action;
          for (const [k, v] of Object.entries({ csrf, action: "pay" })) {
            const i = document.createElement("input");
            i.type = "hidden";
            i.name = k;
            i.value = v;
            f.append(i);
          }
          document.body.append(f);
          f.submit();
        },
        { action: `${url}/act`, csrf },
      ),
    ]);
    assert.equal(res.status(), 403);
    await page.waitForSelector(".sb-error");
    await screenshot(page, "69-sandbox-cross-site-refused");
    assert.equal((await s.gw.charge(id)).status, "awaiting");
  });

  test("the challenge in a frame on the merchant's page works without cookies", async () => {
    const { page, context, seen } = await shopperPage("en");
    const { id, url } = await challengeCharge();
    await page.goto(`${s.merchant.origin}/blank`);
    await page.evaluate((src) => {
      const f = document.createElement("iframe");
      f.src = src;
      f.title = "3-D Secure";
      f.width = "480";
      f.height = "820";
      document.body.append(f);
    }, url);
    const handle = await page.waitForSelector("iframe[title='3-D Secure']");
    const frame = await handle.contentFrame();
    await frame.waitForSelector("#sb-code");
    await frame.fill("#sb-code", "123456");
    await Promise.all([frame.waitForNavigation(), frame.click("#sb-submit")]);
    await frame.waitForSelector("#sb-result-title");
    assert.equal((await frame.textContent("#sb-result-title")).trim(), "Verification complete");
    await screenshot(page, "69-sandbox-3ds-framed-passed", { fullPage: true });
    assert.deepEqual(await context.cookies(), [], "the pages set a cookie");
    assert.equal((await settled(id)).status, "successful");
    assert.deepEqual(seen.csp, [], "CSP violations on the merchant's page");
  });
});

describe("3-D Secure challenge", () => {
  for (const lang of ["en", "ja"]) {
    test(`a wrong code, then the right one (${lang}): the charge is authorised and captured`, async () => {
      const { page, seen } = await shopperPage(lang);
      const { id, url, payload } = await challengeCharge();
      // The merchant's page posts the payload to the issuer token's URL,
      // as the 3-D Secure issuer token says (http_post, a form).
      await page.setContent(
        `<form method="post" action="${url}"><input name="resource_id" value="${payload.resource_id}"><input name="resource_type" value="${payload.resource_type}"></form>`,
      );
      await Promise.all([page.waitForURL(url), page.$eval("form", (f) => f.submit())]);
      await page.waitForSelector("#sb-code");
      assert.equal(await page.getAttribute("html", "lang"), lang);
      assert.equal(await page.getAttribute("#sb-code", "autocomplete"), "one-time-code");
      assert.match(await page.textContent(".sb-card-no"), /3184/);
      assert.ok(!(await page.content()).includes(CHALLENGE_CARD.slice(0, 12)), "more of the card than the last four");
      await screenshot(page, `64-sandbox-3ds-${lang}`, { fullPage: true });

      await page.fill("#sb-code", "111111");
      await Promise.all([page.waitForNavigation(), page.click("#sb-submit")]);
      assert.match(await page.textContent("#sb-wrong"), lang === "ja" ? /残り 2 回/ : /Tries left: 2/);
      await screenshot(page, `65-sandbox-3ds-wrong-code-${lang}`, { fullPage: true });

      await page.fill("#sb-code", "123456");
      await Promise.all([page.waitForNavigation(), page.click("#sb-submit")]);
      await page.waitForSelector("#sb-result-title");
      assert.equal((await page.textContent("#sb-result-title")).trim(), lang === "ja" ? "本人認証が完了しました" : "Verification complete");
      await screenshot(page, `66-sandbox-3ds-passed-${lang}`, { fullPage: true });
      const charge = await settled(id);
      assert.equal(charge.status, "successful");
      assert.equal(charge.three_ds?.status, "successful");
      assertClean(seen);
    });
  }

  test("three wrong codes fail the charge (358)", async () => {
    const { page, seen } = await shopperPage("en");
    const { id, url } = await challengeCharge();
    await page.goto(url);
    for (const left of [2, 1]) {
      await page.fill("#sb-code", "000000");
      await Promise.all([page.waitForNavigation(), page.click("#sb-submit")]);
      assert.match(await page.textContent("#sb-wrong"), new RegExp(`Tries left: ${left}`));
    }
    await page.fill("#sb-code", "000000");
    await Promise.all([page.waitForNavigation(), page.click("#sb-submit")]);
    assert.equal((await page.textContent("#sb-result-title")).trim(), "Verification failed");
    await screenshot(page, "66-sandbox-3ds-failed-en", { fullPage: true });
    const charge = await settled(id);
    assert.equal(charge.status, "failed");
    assert.equal(charge.error?.code, 358);
    assertClean(seen);
  });

  test("Cancel on a phone, back to the shop with the ids", async () => {
    const { page, seen } = await shopperPage("ja", PHONE);
    const { id, url } = await challengeCharge({ redirect: `${s.merchant.origin}/done`, redirectId: "order-42" });
    await page.goto(url);
    await page.waitForSelector("#sb-code");
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= PHONE.width, `the page is ${width}px wide`);
    await screenshot(page, "67-sandbox-3ds-phone-ja", { fullPage: true });
    await Promise.all([page.waitForURL(`${s.merchant.origin}/done**`), page.click("#sb-cancel")]);
    const back = new URL(page.url());
    assert.equal(back.searchParams.get("resource_id"), id);
    assert.equal(back.searchParams.get("resource_type"), "charge");
    assert.equal(back.searchParams.get("redirect_id"), "order-42");
    await screenshot(page, "68-sandbox-3ds-canceled-redirected");
    const charge = await settled(id);
    assert.equal(charge.status, "failed");
    assert.equal(charge.error?.code, 358);
    assertClean(seen);
  });

  test("Cancel without a redirect endpoint shows the outcome", async () => {
    const { page, seen } = await shopperPage("en");
    const { url } = await challengeCharge();
    await page.goto(url);
    await Promise.all([page.waitForNavigation(), page.click("#sb-cancel")]);
    assert.equal((await page.textContent("#sb-result-title")).trim(), "Verification canceled");
    await screenshot(page, "66-sandbox-3ds-canceled-en", { fullPage: true });
    assertClean(seen);
  });
});
