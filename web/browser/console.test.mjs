// The merchant console (/console/) in the browser: sign-in, a wrong
// password and the throttle, a password reset through the local mailbox
// and its daily limit, a refund made in the console and seen through the
// API, an app token minted in the console and used on the merchant's
// page then revoked, a store setting seen in GET /checkout_info, the
// Japanese pages and a phone-sized screen, with a screenshot of each page
// ("console-*").
//
// Every sign-in of this file counts against the gateway's throttle
// (server/payment/console.go signInKeys): the demo account from 127.0.0.1
// gets 5 attempts, then about 2 a minute. So the file signs in once and
// gives that session's cookie to the pages that need it (signedInPage),
// signs in again only where a test is about signing in, and runs the
// throttle test last.

import { test } from "node:test";
import assert from "node:assert/strict";

import { CARD_OK, EXPIRY, screenshot, useSuite, waitWidgetReady, widgetFrame } from "./harness.mjs";

const s = useSuite();

// The signed-in session's cookies (set by the first test; the reset test
// ends every session).
let sessionCookies = null;
// The console user's current password (the reset test changes it).
let password = null;

const consoleURL = (path) => `${s.gw.endpoint}/console/${path.replace(/^\//, "")}`;
const store = () => s.gw.credentials.store_id;
const email = () => s.gw.credentials.console_email;

/** No uncaught error and no console error (a CSP violation is one) but the HTTP statuses the test asked for. */
function assertClean(seen) {
  assert.deepEqual(seen.errors, [], "uncaught errors");
  const errors = seen.console.filter((m) => m.type === "error" && !/Failed to load resource: the server responded with a status of (401|404|400|429)/.test(m.text));
  assert.deepEqual(errors, [], "console errors (CSP violations included)");
}

/**
 * Clicks `selector` (a form's button) and waits for the page the form
 * leads to (after a redirect, the page it redirects to); resolves to the
 * response of the POST itself: a 303, or the page with its status.
 */
async function submit(page, selector) {
  const [final] = await Promise.all([page.waitForNavigation(), page.click(selector)]);
  let first = final.request();
  while (first.redirectedFrom()) first = first.redirectedFrom();
  const post = await first.response();
  assert.equal(first.method(), "POST", `${selector} did not post a form`);
  return post;
}

/** Signs in on the sign-in page the page is on; resolves to the POST's response. */
async function signIn(page, { user = email(), pass = password } = {}) {
  await page.fill("input[name=email]", user);
  await page.fill("input[name=password]", pass);
  return submit(page, "form[action='/console/signin'] button");
}

/** A page whose context has the signed-in session's cookie. */
async function signedInPage(opts = {}) {
  assert.ok(sessionCookies, "no session: the sign-in test did not pass");
  const p = await s.newPage(opts);
  await p.context.addCookies(sessionCookies);
  return p;
}

/** Opens a console page; fails unless it answers `status`. */
async function open(page, path, { status = 200 } = {}) {
  const res = await page.goto(path.startsWith("http") ? path : consoleURL(path));
  assert.equal(res.status(), status, `GET ${path}: HTTP ${res.status()}`);
  return res;
}

/**
 * A screenshot of a console page (web/browser/screenshots/{name}.png),
 * after checking that nothing on it is wider than the screen.
 */
async function shot(page, name, opts = { fullPage: true }) {
  const wide = await page.evaluate(() => {
    const out = [];
    const scrolls = (el) => {
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) if (getComputedStyle(a).overflowX !== "visible") return true;
      return false;
    };
    for (const el of document.querySelectorAll("main *")) {
      if (scrolls(el)) continue; // inside a box that scrolls (a wide table on a phone)
      const r = el.getBoundingClientRect();
      const name = `${el.tagName.toLowerCase()}${el.className ? "." + el.className : ""}`;
      if (r.width && r.right > document.documentElement.clientWidth + 1) out.push(`${name} ends at ${Math.round(r.right)}px`);
      else if (getComputedStyle(el).overflowX === "visible" && el.scrollWidth > el.clientWidth + 1 && el.clientWidth) out.push(`${name}'s content overflows it by ${el.scrollWidth - el.clientWidth}px`);
    }
    return { page: document.documentElement.scrollWidth - document.documentElement.clientWidth, elements: out.slice(0, 5) };
  });
  assert.ok(wide.page <= 0 && wide.elements.length === 0, `${name}: wider than the screen by ${wide.page}px: ${wide.elements.join(", ")}`);
  await screenshot(page, name, opts);
}

const text = async (page, selector) => ((await page.textContent(selector)) ?? "").replace(/\s+/g, " ").trim();

/** GET /checkout_info as the merchant's page would ask it, with an app token (no secret). */
async function checkoutInfo(jwt) {
  const res = await fetch(`${s.gw.endpoint}/checkout_info`, {
    headers: { Authorization: `Bearer ${jwt}`, Origin: s.merchant.origin, Accept: "application/json" },
  });
  return { status: res.status, body: await res.json().catch(() => undefined) };
}

/** A successful JPY charge made through the API with the store's secret (a card token, then the charge). */
async function apiCharge(amount = 1000) {
  const token = await s.gw.api("POST", "/tokens", {
    payment_type: "card",
    type: "one_time",
    email: "buyer@example.com",
    data: { cardholder: "TARO YAMADA", card_number: CARD_OK, exp_month: 12, exp_year: 2000 + Number(EXPIRY.slice(2)), cvv: "123" },
  });
  const created = await s.gw.api("POST", "/charges", { transaction_token_id: token.id, amount, currency: "JPY" });
  const charge = await s.gw.charge(created.id);
  assert.equal(charge.status, "successful", JSON.stringify(charge));
  return charge;
}

test("sign-in: a wrong password is refused on the sign-in page; the right one opens the dashboard; test and live", async () => {
  password = s.gw.credentials.console_password;
  const { page, context, seen } = await s.newPage();
  // The dashboard sends a browser without a session to sign in, and back.
  await open(page, "/");
  assert.equal(new URL(page.url()).pathname, "/console/signin");
  assert.equal(new URL(page.url()).searchParams.get("next"), "/console/");
  assert.equal(await text(page, "h1"), "Sign in");
  await shot(page, "console-signin");

  const wrong = await signIn(page, { pass: `${password}x` });
  assert.equal(wrong.status(), 401);
  assert.equal(new URL(page.url()).pathname, "/console/signin");
  assert.equal(await text(page, ".cs-errors"), "The e-mail address or the password is wrong.");
  assert.equal(await page.inputValue("input[name=email]"), email(), "the address is kept");
  assert.equal(await page.inputValue("input[name=password]"), "", "the password is not");
  await shot(page, "console-signin-wrong");

  const right = await signIn(page);
  assert.equal(right.status(), 303);
  await page.waitForURL(consoleURL("/"));
  assert.equal(await text(page, "h1"), "Dashboard");
  assert.equal(await page.getAttribute(".cs-nav a[href='/console/']", "aria-current"), "page");
  assert.match(await text(page, ".cs-testbar"), /Test mode/);
  assert.equal(await page.getAttribute(".cs-signout button", "title"), `Signed in as ${email()}`);
  sessionCookies = await context.cookies();
  const cookie = sessionCookies.find((c) => c.name === "kessai_console");
  assert.ok(cookie?.httpOnly && cookie.path === "/console/", `the console cookie: ${JSON.stringify(cookie)}`);
  await shot(page, "console-dashboard-test");

  // Live mode: marked in red, no test bar; then back to test (the mode is
  // the session's, shared by every page of this file).
  await submit(page, ".cs-mode button[name=mode][value=live]");
  await page.waitForURL(consoleURL("/"));
  assert.equal(await text(page, ".cs-badge"), "Live");
  assert.ok(await page.$("body.cs-live"), "live mode is marked");
  assert.equal(await page.$(".cs-testbar"), null, "no test bar in live mode");
  await shot(page, "console-dashboard-live");
  await submit(page, ".cs-mode button[name=mode][value=test]");
  assert.equal(await text(page, ".cs-badge"), "Test");
  assertClean(seen);
});

test("Japanese: the sign-in page for a Japanese browser, the dashboard through the language link", async () => {
  // Accept-Language: ja, no session.
  const ja = await s.newPage({ locale: "ja-JP" });
  await open(ja.page, "/signin");
  assert.equal(await ja.page.getAttribute("html", "lang"), "ja");
  assert.equal(await text(ja.page, "h1"), "ログイン");
  assert.equal(await text(ja.page, "form[action='/console/signin'] button"), "ログイン");
  assert.equal(await text(ja.page, "a[href='/console/reset']"), "パスワードをお忘れですか？");
  await shot(ja.page, "console-ja-signin");
  assertClean(ja.seen);

  // An English browser, signed in, follows the header's 日本語 link.
  const { page, seen } = await signedInPage();
  await open(page, "/");
  assert.equal(await text(page, "h1"), "Dashboard");
  await Promise.all([page.waitForURL(/lang=ja/), page.click("a.cs-lang")]);
  assert.equal(await page.getAttribute("html", "lang"), "ja");
  assert.equal(await text(page, "h1"), "ダッシュボード");
  assert.match(await text(page, ".cs-testbar"), /テストモード/);
  assert.equal(await text(page, ".cs-nav a[href='/console/charges']"), "決済");
  await shot(page, "console-ja-dashboard");
  // The choice is remembered, and the link goes back to English.
  await open(page, "/account");
  assert.equal(await text(page, "h1"), "アカウント");
  await Promise.all([page.waitForURL(/lang=en/), page.click("a.cs-lang")]);
  assert.equal(await text(page, "h1"), "Account");
  assertClean(seen);
});

test("a charge made through the API is refunded in part in the console (after a confirmation page); the API lists the refund", async () => {
  const charge = await apiCharge(1000);
  const { page, seen } = await signedInPage();
  await open(page, "/charges");
  const link = `a[href='/console/stores/${store()}/charges/${charge.id}']`;
  await page.waitForSelector(link);
  await shot(page, "console-charges");
  await Promise.all([page.waitForURL(`**/charges/${charge.id}`), page.click(link)]);
  assert.match(await text(page, "main"), /successful/i);
  await shot(page, "console-charge");

  const form = `form[action='/console/stores/${store()}/charges/${charge.id}/refund']`;
  await page.fill(`${form} input[name=amount]`, "300");
  await page.selectOption(`${form} select[name=reason]`, "customer_request");
  await page.fill(`${form} input[name=message]`, "partial refund from the console test");
  const asked = await submit(page, `${form} button`);
  // Nothing is refunded before the confirmation.
  assert.equal(asked.status(), 200);
  assert.ok(await page.$("form input[name=confirm][value=yes]"), "a confirmation page");
  assert.match(await text(page, "main"), /¥300/);
  assert.deepEqual((await s.gw.api("GET", `/stores/${store()}/charges/${charge.id}/refunds`)).items, [], "refunded before the confirmation");
  await shot(page, "console-refund-confirm");

  const done = await submit(page, "form:has(input[name=confirm][value=yes]) button");
  assert.equal(done.status(), 303);
  await page.waitForURL(`**/charges/${charge.id}`);
  assert.ok(await page.$(".cs-notice"), "a notice after the refund");

  const refunds = (await s.gw.api("GET", `/stores/${store()}/charges/${charge.id}/refunds`)).items;
  assert.equal(refunds.length, 1, JSON.stringify(refunds));
  assert.equal(refunds[0].amount, 300);
  assert.equal(refunds[0].currency, "JPY");
  assert.equal(refunds[0].reason, "customer_request");
  assert.equal(refunds[0].message, "partial refund from the console test");
  // The charge page lists it too.
  assert.match(await text(page, "tr.cs-refund"), new RegExp(`¥300 .*${refunds[0].id}`));
  await shot(page, "console-charge-refunded");
  assertClean(seen);
});

test("an app token minted in the console for the shop's origin runs the widget on the shop's page; revoked in the console, the API refuses it", async () => {
  const { page, seen } = await signedInPage();
  await open(page, "/stores");
  assert.match(await text(page, "main table"), /Kessai Demo Store/);
  await shot(page, "console-stores");
  await Promise.all([page.waitForURL(`**/stores/${store()}/app_tokens`), page.click(`a[href='/console/stores/${store()}/app_tokens']`)]);
  await shot(page, "console-app-tokens");

  const domains = [`127.0.0.1:${s.merchant.port}`, `localhost:${s.merchant.port}`];
  await page.fill("textarea[name=domains]", domains.join("\n"));
  const created = await submit(page, `form[action='/console/stores/${store()}/app_tokens'] button`);
  assert.equal(created.status(), 200);
  const secrets = await page.$$eval("pre.cs-secret", (els) => els.map((e) => e.textContent.trim()));
  const jwt = secrets.find((t) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(t));
  assert.ok(jwt, `no JWT on the page: ${JSON.stringify(secrets)}`);
  const claims = JSON.parse(Buffer.from(jwt.split(".")[1], "base64url").toString());
  assert.deepEqual(claims.domains, domains);
  assert.equal(claims.mode, "test");
  await shot(page, "console-app-token-created");

  // The shop's page with the new token: the widget opens and is ready.
  const shop = await s.newPage();
  await shop.page.goto(s.url("/modal", { appId: jwt }));
  await shop.page.click("#pay");
  const { frame } = await widgetFrame(shop.page, s.gw.endpoint);
  await waitWidgetReady(frame);
  const info = await checkoutInfo(jwt);
  assert.equal(info.status, 200, JSON.stringify(info.body));
  assert.equal(info.body.name, "Kessai Demo Store");

  // Revoked (after a confirmation), the token opens nothing.
  await open(page, `/stores/${store()}/app_tokens`);
  const row = `tr:has(code[title='${claims.jti}'])`;
  await page.waitForSelector(row);
  const asked = await submit(page, `${row} form[action$='/revoke'] button`);
  assert.equal(asked.status(), 200);
  assert.ok(await page.$("form input[name=confirm][value=yes]"), "a confirmation page");
  assert.equal((await checkoutInfo(jwt)).status, 200, "revoked before the confirmation");
  await submit(page, "form:has(input[name=confirm][value=yes]) button");
  await page.waitForURL(`**/stores/${store()}/app_tokens`);
  assert.ok(await page.$(".cs-notice"), "a notice after the revocation");
  assert.equal(await page.$(`${row} form[action$='/revoke']`), null, "no revoke button on a revoked token");
  const refused = await checkoutInfo(jwt);
  assert.ok(refused.status === 401 || refused.status === 403, `checkout_info with a revoked token: HTTP ${refused.status} ${JSON.stringify(refused.body)}`);
  assertClean(seen);
});

test("store settings saved in the console show in GET /checkout_info; the settings page's test charge", async () => {
  const before = await checkoutInfo(s.appId);
  assert.equal(before.status, 200, JSON.stringify(before.body));
  assert.equal(before.body.card_configuration.three_ds_required, false);
  assert.deepEqual(before.body.card_configuration.forbidden_card_brands, []);

  const { page, seen } = await signedInPage();
  await open(page, `/stores/${store()}/settings`);
  await shot(page, "console-settings");
  const form = `form[action='/console/stores/${store()}/settings']`;
  await page.check(`${form} input[name=three_ds_required]`);
  await page.check(`${form} input[name=forbidden_card_brands][value=diners_club]`);
  await page.fill(`${form} input[name='theme.main_color']`, "#0a7d55");
  const saved = await submit(page, `${form} button`);
  assert.equal(saved.status(), 303);
  await page.waitForURL(`**/stores/${store()}/settings`);
  assert.ok(await page.$(".cs-notice"), "a notice after saving");
  assert.equal(await page.isChecked(`${form} input[name=three_ds_required]`), true);

  const after = await checkoutInfo(s.appId);
  assert.equal(after.body.card_configuration.three_ds_required, true);
  assert.deepEqual(after.body.card_configuration.forbidden_card_brands, ["diners_club"]);
  assert.equal(after.body.theme.colors.main_color, "#0a7d55");

  // Back as they were, for the tests after this one.
  await page.uncheck(`${form} input[name=three_ds_required]`);
  await page.uncheck(`${form} input[name=forbidden_card_brands][value=diners_club]`);
  await page.fill(`${form} input[name='theme.main_color']`, before.body.theme.colors.main_color);
  assert.equal((await submit(page, `${form} button`)).status(), 303);
  const restored = await checkoutInfo(s.appId);
  assert.deepEqual(restored.body.card_configuration, before.body.card_configuration);
  assert.deepEqual(restored.body.theme, before.body.theme);

  // The page's test charge: made as a server would, shown on its page.
  const charge = `form[action='/console/stores/${store()}/test_charge']`;
  await page.fill(`${charge} input[name=amount]`, "1234");
  await page.selectOption(`${charge} select[name=card]`, "success");
  assert.equal((await submit(page, `${charge} button`)).status(), 303);
  await page.waitForURL(/\/charges\/[0-9a-f-]{36}$/);
  const id = page.url().split("/").pop();
  const made = await s.gw.charge(id);
  assert.equal(made.status, "successful", JSON.stringify(made));
  assert.equal(made.requested_amount, 1234);
  assert.match(await text(page, "main"), /¥1,234/);
  assertClean(seen);
});

test("the other pages: webhooks and a webhook, the account, a phone-sized dashboard in English and Japanese", async () => {
  const { page, seen } = await signedInPage();
  // The demo storefront registered a webhook at start.
  await open(page, `/stores/${store()}/webhooks`);
  const hook = await page.waitForSelector(`main table a[href^='/console/stores/${store()}/webhooks/']`);
  assert.match(await hook.textContent(), /\/webhooks\/kessai$/);
  await shot(page, "console-webhooks");
  await Promise.all([page.waitForURL(/\/webhooks\/[0-9a-f-]{36}$/), hook.click()]);
  assert.match(await text(page, "main"), /\/webhooks\/kessai/);
  await shot(page, "console-webhook");

  await open(page, "/account");
  assert.match(await text(page, "main"), new RegExp(email().replace(/[.]/g, "\\.")));
  await shot(page, "console-account");
  assertClean(seen);

  const phone = await signedInPage({ viewport: { width: 390, height: 844 } });
  await open(phone.page, "/");
  assert.equal(await text(phone.page, "h1"), "Dashboard");
  const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the phone-sized dashboard is ${overflow}px wider than the screen`);
  await shot(phone.page, "console-phone-dashboard");
  // In Japanese too, and the header's short labels keep to one line each.
  await open(phone.page, "/?lang=ja");
  assert.equal(await text(phone.page, "h1"), "ダッシュボード");
  const broken = await phone.page.$$eval(".cs-header .cs-badge, .cs-header .cs-link, .cs-header .cs-lang", (els) =>
    els
      .filter((el) => {
        const r = document.createRange();
        r.selectNodeContents(el);
        return new Set([...r.getClientRects()].filter((b) => b.width).map((b) => Math.round(b.top))).size > 1;
      })
      .map((el) => el.textContent.trim()),
  );
  assert.deepEqual(broken, [], "header labels broken over two lines");
  await shot(phone.page, "console-phone-ja-dashboard");
  assertClean(phone.seen);
});

test("a password reset through the local mailbox; the new password signs in, the old one no longer; sign-out; five requests a day", async () => {
  const { page, seen } = await s.newPage();
  await open(page, "/signin");
  await Promise.all([page.waitForURL(consoleURL("/reset")), page.click("a[href='/console/reset']")]);
  assert.equal(await text(page, "h1"), "Reset your password");
  await shot(page, "console-reset-request");

  const requestReset = async (address) => {
    await open(page, "/reset");
    await page.fill("input[name=email]", address);
    return submit(page, "form[action='/console/reset'] button");
  };
  const sent = await requestReset(email());
  assert.equal(sent.status(), 200);
  assert.equal(await text(page, "h1"), "Check your e-mail");
  const sentText = await text(page, "main");
  assert.match(sentText, new RegExp(email().replace(/[.]/g, "\\.")));
  await shot(page, "console-reset-sent");

  // The mail is sent away from the request: the mailbox shows it soon.
  await Promise.all([page.waitForURL(consoleURL("/mailbox")), page.click("a[href='/console/mailbox']")]);
  let link = null;
  for (const until = Date.now() + 10_000; !link && Date.now() < until; ) {
    const mails = await page.$$eval("article.cs-mail", (els) => els.map((e) => e.textContent));
    const mine = mails.find((m) => m.includes(email()) && m.includes("/console/reset/"));
    link = mine?.match(/https?:\/\/\S+\/console\/reset\/[\w-]+/)?.[0] ?? null;
    if (!link) {
      await page.waitForTimeout(200);
      await page.reload();
    }
  }
  assert.ok(link, `no reset mail for ${email()} in the local mailbox: ${await text(page, "main")}`);
  assert.equal(new URL(link).origin, s.gw.endpoint, "the link is the gateway's");
  assert.match(await text(page, "article.cs-mail"), /Reset your Kessai password/);
  await shot(page, "console-mailbox");

  await open(page, link);
  assert.equal(await text(page, "h1"), "Choose a new password");
  await shot(page, "console-reset");
  const newPassword = `reset-${Date.now().toString(36)}-Pw`;
  await page.fill("input[name=password]", newPassword);
  await page.fill("input[name=confirm]", newPassword);
  const reset = await submit(page, `form[action^='/console/reset/'] button`);
  assert.equal(reset.status(), 303);
  await page.waitForURL(consoleURL("/signin"));
  assert.equal(await text(page, ".cs-notice"), "Your password is set. Sign in with it.");
  const oldPassword = password;
  password = newPassword;

  // The link works once; the reset ended the session the other tests used.
  await open(page, link, { status: 404 });
  assert.match(await text(page, "main"), /no longer works/);
  const old = await signedInPage();
  await open(old.page, "/");
  assert.equal(new URL(old.page.url()).pathname, "/console/signin", "the session from before the reset still opens the dashboard");

  await open(page, "/signin");
  const refused = await signIn(page, { pass: oldPassword });
  assert.equal(refused.status(), 401, "the old password still signs in");
  const ok = await signIn(page);
  assert.equal(ok.status(), 303);
  await page.waitForURL(consoleURL("/"));
  assert.equal(await text(page, "h1"), "Dashboard");
  // Signing out ends the session: the dashboard asks to sign in again.
  assert.equal((await submit(page, ".cs-signout button")).status(), 303);
  await page.waitForURL(consoleURL("/signin"));
  assert.equal(await text(page, ".cs-notice"), "You are signed out.");
  await open(page, "/");
  assert.equal(new URL(page.url()).pathname, "/console/signin", "signed out, the dashboard still opens");

  // Five requests a day for an address: this one was the first; four more
  // get the same page, the sixth the limit.
  const fresh = await s.newPage();
  const requestFrom = async (p, address) => {
    await open(p, "/reset");
    await p.fill("input[name=email]", address);
    return submit(p, "form[action='/console/reset'] button");
  };
  for (let i = 2; i <= 5; i++) {
    const r = await requestFrom(fresh.page, email());
    assert.equal(r.status(), 200, `request ${i} of the day`);
    assert.equal(await text(fresh.page, "h1"), "Check your e-mail", `request ${i} of the day`);
  }
  const sixth = await requestFrom(fresh.page, email());
  assert.ok(sixth.status() >= 400, `the sixth request of the day: HTTP ${sixth.status()}`);
  assert.equal(await text(fresh.page, "h1"), "Reset your password");
  assert.match(await text(fresh.page, ".cs-errors"), /at most 5 a day/);
  await shot(fresh.page, "console-reset-limit");

  // An address with no account gets the very page a known one gets.
  const unknown = "nobody-here@kessai.test";
  const r = await requestFrom(fresh.page, unknown);
  assert.equal(r.status(), 200);
  assert.equal(await text(fresh.page, "main"), sentText.replace(email(), unknown));
  assertClean(seen);
  assertClean(fresh.seen);
});

test("throttle: after repeated wrong passwords the sign-in answers 429 with the wait, and refuses the right password too", async () => {
  const { page, seen } = await s.newPage();
  await open(page, "/signin");
  // The account from this address has had a few attempts already (the
  // tests above): at most 5 in a burst, then about 2 a minute.
  let throttled = null;
  for (let i = 0; i < 8 && !throttled; i++) {
    const r = await signIn(page, { pass: `wrong-${i}-password` });
    if (r.status() === 429) throttled = r;
    else assert.equal(r.status(), 401, `attempt ${i + 1}`);
  }
  assert.ok(throttled, "no 429 after 8 wrong passwords");
  const wait = Number(await throttled.headerValue("retry-after"));
  assert.ok(wait >= 1 && wait <= 60, `Retry-After: ${wait}`);
  assert.match(await text(page, ".cs-card"), new RegExp(`Too many attempts\\. Wait \\d+ seconds, then try again\\.`));
  await shot(page, "console-signin-throttled");

  const right = await signIn(page);
  assert.equal(right.status(), 429, "the right password while throttled");
  assert.equal(new URL(page.url()).pathname, "/console/signin");
  assert.match(await text(page, ".cs-card .cs-error-text"), /Wait \d+ seconds/);
  await open(page, "/");
  assert.equal(new URL(page.url()).pathname, "/console/signin", "no session while throttled");
  assertClean(seen);
});
