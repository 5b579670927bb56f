// Isolation: the card number exists in the widget frame (gateway origin)
// and in its own request to the gateway, nowhere the merchant's page can
// see. For each way of embedding (modal with a decline and a retry, inline,
// HTML mode), after a payment, none of these hold the number, with or
// without spaces:
//   - the DOM of every frame of the merchant's origin (outerHTML, input
//     values), its title, cookies and web storage;
//   - every console message (of any frame);
//   - every request made by any frame other than the gateway's widget
//     frame, including the iframe's own navigation URL, and every request
//     the merchant's server received;
//   - every postMessage event delivered to a window of the merchant's
//     origin (recorded by a listener added before any page script).
// A positive control checks that the detector does find the number where
// it must be: in the frame's POST /tokens and in its input.

import { describe, test } from "node:test";
import assert from "node:assert/strict";

import { cardNumberFinder, screenshot } from "./lib/browser.mjs";
import {
  CARD_DECLINED,
  CARD_OK,
  EXPIRY,
  fillCard,
  useSuite,
  waitForLog,
  waitWidgetReady,
  widgetFrame,
} from "./harness.mjs";

const s = useSuite();
const CARDS = [CARD_OK, CARD_DECLINED];

/**
 * A new page (opened by open: s.newPage, or s.openModal for the modal);
 * what the merchant's server receives from here on is checked too.
 */
async function start(open = () => s.newPage()) {
  const since = { requests: s.merchant.requests.length, submissions: s.merchant.submissions.length };
  return { ...(await open()), since };
}

/** Everything the merchant's origin holds, as strings, labelled. */
async function merchantView(page, merchantOrigin) {
  const out = [];
  for (const frame of page.frames()) {
    let origin = "";
    try {
      origin = new URL(frame.url()).origin;
    } catch {
      continue;
    }
    if (origin !== merchantOrigin) continue;
    const v = await frame.evaluate(() => {
      const values = Array.from(document.querySelectorAll("input, textarea, select")).map((el) => `${el.name}=${el.value}`);
      const storage = (st) => {
        try {
          return Object.keys(st).map((k) => `${k}=${st.getItem(k)}`).join("\n");
        } catch {
          return "";
        }
      };
      return {
        html: document.documentElement.outerHTML,
        values: values.join("\n"),
        title: document.title,
        cookie: document.cookie,
        local: storage(localStorage),
        session: storage(sessionStorage),
        url: location.href,
        log: JSON.stringify(window.merchantLog || []),
      };
    });
    for (const [k, text] of Object.entries(v)) out.push({ where: `${frame.url()} ${k}`, text });
  }
  assert.ok(out.length > 0, "no frame of the merchant's origin was found");
  return out;
}

/** Runs the checks; `done` is the page after the payment. */
async function assertIsolated(p, { label, sawTokenPost = true }) {
  const { page, seen } = p;
  const gateway = s.gw.endpoint;
  const merchantOrigin = s.merchant.origin;
  const haystack = [];
  if (!page.isClosed() && new URL(page.url()).origin === merchantOrigin) haystack.push(...(await merchantView(page, merchantOrigin)));
  for (const m of seen.console) haystack.push({ where: `console.${m.type} (${m.url})`, text: m.text });
  let tokenPosts = 0;
  for (const r of seen.requests) {
    const own = r.frameOrigin === gateway && new URL(r.url).origin === gateway && !r.navigation;
    if (own) {
      if (r.method === "POST" && new URL(r.url).pathname === "/tokens") {
        tokenPosts++;
        // Positive control: the detector finds the number where it must be.
        assert.ok(
          CARDS.some((c) => cardNumberFinder(c)(r.postData)),
          `${label}: the detector did not find the card number in the frame's POST /tokens`,
        );
      }
      continue;
    }
    haystack.push({ where: `request ${r.method} ${r.url} (frame ${r.frameUrl})`, text: `${r.url}\n${r.postData}\n${JSON.stringify(r.headers)}` });
  }
  if (sawTokenPost) assert.ok(tokenPosts > 0, `${label}: no POST /tokens was seen; the check saw nothing`);
  for (const m of seen.messages) haystack.push({ where: `postMessage from ${m.origin} to ${m.page}`, text: m.data });
  assert.ok(seen.messages.length > 0, `${label}: no postMessage was recorded; the listener is not working`);
  for (const r of s.merchant.requests.slice(p.since.requests)) haystack.push({ where: `merchant server got ${r.method} ${r.url}`, text: r.url });
  for (const sub of s.merchant.submissions.slice(p.since.submissions)) haystack.push({ where: "merchant server form body", text: sub.raw });

  for (const card of CARDS) {
    const has = cardNumberFinder(card);
    const leaks = haystack.filter((h) => has(h.text)).map((h) => h.where);
    assert.deepEqual(leaks, [], `${label}: card number ${card} seen by the merchant's page in: ${leaks.join("; ")}`);
  }
  assert.deepEqual(seen.csp, [], `${label}: CSP violations on the merchant page`);
  return { checked: haystack.length, messages: seen.messages.length };
}

describe("the merchant's page never sees the card number", () => {
  test("positive control: the detector finds spaced, plain and URL-encoded numbers", () => {
    const has = cardNumberFinder(CARD_OK);
    for (const t of ["4000020000000000", "4000 0200 0000 0000", "x4000-0200-0000-0000y", "4000%200200%200000%200000", '"card_number":"4000020000000000"']) {
      assert.ok(has(t), t);
    }
    for (const t of ["400002000000000", "4000 0200 0000 0001", "0000"]) assert.ok(!has(t), t);
  });

  test("negative control: a number planted in the DOM, the console, a message or a request is caught", async () => {
    const plants = {
      dom: () => (document.body.appendChild(document.createElement("p")).textContent = "4000 0200 0000 0000"),
      console: () => console.log("card", "4000020000000000"),
      message: () => window.postMessage({ n: "4000 0200 0000 0000" }, location.origin),
      request: () => fetch("/favicon.ico?n=4000+0200+0000+0000"),
    };
    for (const [channel, plant] of Object.entries(plants)) {
      const p = await start();
      await p.page.goto(s.url("/blank"));
      await p.page.evaluate(plant);
      await p.page.evaluate(() => window.postMessage("harmless", location.origin)); // so that messages is not empty
      await p.page.waitForTimeout(100);
      await assert.rejects(assertIsolated(p, { label: channel, sawTokenPost: false }), /card number 4000020000000000/, `${channel} leak not caught`);
    }
  });

  test("modal: a decline, then a payment", async () => {
    const p = await start(() => s.openModal({ amount: 4100 }));
    const { page, frame } = p;
    // Typed key by key, as a shopper would (every keystroke is an event).
    await frame.locator("#kw-email").pressSequentially("buyer@example.com");
    await frame.locator("#kw-number").pressSequentially(CARD_DECLINED);
    await fillCard(frame, { exp: EXPIRY, email: undefined });
    // While the card is typed and the modal open, the merchant's DOM is clean.
    for (const h of await merchantView(page, s.merchant.origin)) {
      assert.ok(!cardNumberFinder(CARD_DECLINED)(h.text), `the typed number is in the merchant's ${h.where}`);
    }
    await frame.click("#kw-pay");
    await waitForLog(page, "onError");
    // Positive control in the frame: the number is there, formatted.
    assert.ok(cardNumberFinder(CARD_DECLINED)(await frame.inputValue("#kw-number")));
    await frame.locator("#kw-number").fill("");
    await frame.locator("#kw-number").pressSequentially(CARD_OK);
    await frame.click("#kw-pay");
    await waitForLog(page, "onSuccess");
    await waitForLog(page, "closed", { timeout: 5_000 });
    const r = await assertIsolated(p, { label: "modal" });
    assert.ok(r.messages >= 4, `only ${r.messages} messages recorded`);
  });

  test("inline: submit()", async () => {
    const p = await start();
    await p.page.goto(s.url("/inline", { amount: 4200 }));
    const { frame } = await widgetFrame(p.page, s.gw.endpoint, { scope: "#card-element" });
    await waitWidgetReady(frame);
    await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
    await p.page.click("#pay");
    await waitForLog(p.page, "submit-resolved");
    await assertIsolated(p, { label: "inline" });
  });

  test("HTML mode: hidden inputs and auto-submit", async () => {
    const p = await start();
    await p.page.goto(s.url("/html", { amount: 4300 }));
    await p.page.locator("form#order span[data-app-id] button").click();
    const { frame } = await widgetFrame(p.page, s.gw.endpoint);
    await waitWidgetReady(frame);
    await fillCard(frame, { number: CARD_OK, exp: EXPIRY });
    await Promise.all([p.page.waitForURL(`${s.merchant.origin}/submit`, { timeout: 20_000 }), frame.click("#kw-pay")]);
    await p.page.waitForSelector("#received");
    await assertIsolated(p, { label: "HTML mode" });
  });
});

describe("only the token's domains can frame the widget", () => {
  test("the gateway answers with frame-ancestors for the token's domains, and refuses other origins", async () => {
    const frameURL = (origin) => {
      const u = new URL("/widget/frame", s.gw.endpoint);
      for (const [k, v] of Object.entries({ appId: s.appId, origin, instance: "t1", checkout: "payment", amount: "1000", currency: "JPY" })) u.searchParams.set(k, v);
      return u.href;
    };
    const ok = await fetch(frameURL(s.merchant.origin));
    await ok.arrayBuffer();
    assert.equal(ok.status, 200);
    const csp = ok.headers.get("content-security-policy") ?? "";
    const ancestors = /frame-ancestors ([^;]*)/.exec(csp)?.[1] ?? "";
    assert.ok(ancestors.split(/\s+/).includes(s.merchant.origin), `frame-ancestors ${ancestors}`);
    assert.ok(!/(^|\s)\*(\s|$)/.test(ancestors) && !ancestors.includes("http://*") && !ancestors.includes("https://*"), `frame-ancestors is too wide: ${ancestors}`);

    const bad = await fetch(frameURL("http://evil.example"));
    const body = await bad.text();
    assert.equal(bad.status, 403);
    assert.match(bad.headers.get("content-security-policy") ?? "", /frame-ancestors 'self'/);
    assert.ok(!body.includes('id="kw-number"'), "the card form was served for a foreign origin");
  });

  test("in the browser, a page on another origin gets no card form, even when it forges the origin parameter", async () => {
    // A token for 127.0.0.1:<port> only; the page is served as localhost:<port>.
    const { jwt: narrow } = await s.gw.mintAppToken([`127.0.0.1:${s.merchant.port}`]);
    const foreign = `http://localhost:${s.merchant.port}`;
    const { page, seen } = await s.newPage({ merchantOrigin: foreign });
    await page.goto(`${foreign}/blank?appId=${encodeURIComponent(narrow)}`);
    // (a) through the loader (it sends the page's true origin);
    // (b) a hand-made iframe claiming to be the allowed origin.
    await page.addScriptTag({ url: `${s.gw.endpoint}/static/checkout.js` });
    const forged = new URL("/widget/frame", s.gw.endpoint);
    for (const [k, v] of Object.entries({ appId: narrow, origin: s.merchant.origin, instance: "forged", checkout: "payment", amount: "1000", currency: "JPY" })) {
      forged.searchParams.set(k, v);
    }
    await page.evaluate(
      ({ appId, forged }) => {
        window.KessaiCheckout.create({ appId, checkout: "payment", amount: 1000, currency: "JPY", inline: true, container: "#slot" }).open();
        const f = document.createElement("iframe");
        f.id = "forged";
        f.src = forged;
        document.body.appendChild(f);
      },
      { appId: narrow, forged: forged.href },
    );
    await page.waitForTimeout(1500);
    for (const sel of ["#slot iframe", "#forged"]) {
      const frame = await (await page.$(sel)).contentFrame();
      const hasForm = frame ? await frame.evaluate(() => !!document.getElementById("kw-number")).catch(() => false) : false;
      assert.equal(hasForm, false, `${sel}: the card form was shown on ${foreign}`);
    }
    const refused = seen.console.filter((m) => /frame-ancestors/.test(m.text));
    assert.ok(refused.length >= 2, `Chromium did not report the frame-ancestors refusals: ${JSON.stringify(seen.console)}`);
  });

  test("a page whose origin the token does not allow hears FRAME_LOAD_FAILED within seconds, and the modal says so", async () => {
    // Chromium refuses the frame (frame-ancestors) and shows an error page in
    // it, which still fires "load"; the loader never gets "ready" and must
    // not wait for its 30 s backstop.
    const { jwt: narrow } = await s.gw.mintAppToken([`127.0.0.1:${s.merchant.port}`]);
    const foreign = `http://localhost:${s.merchant.port}`;
    const { page } = await s.newPage({ merchantOrigin: foreign });
    await page.goto(`${foreign}/blank?appId=${encodeURIComponent(narrow)}`);
    await page.addScriptTag({ url: `${s.gw.endpoint}/static/checkout.js` });
    const started = Date.now();
    await page.evaluate((appId) => {
      window.__kessaiError = null;
      window.KessaiCheckout.create({
        appId, checkout: "payment", amount: 1000, currency: "JPY",
        onError: (e) => { window.__kessaiError = { code: e.code, fatal: e.fatal, message: e.message }; },
      }).open();
    }, narrow);
    await page.waitForFunction(() => window.__kessaiError !== null, null, { timeout: 10_000 });
    const elapsed = Date.now() - started;
    const err = await page.evaluate(() => window.__kessaiError);
    assert.equal(err.code, "FRAME_LOAD_FAILED");
    assert.equal(err.fatal, true);
    assert.ok(elapsed < 5000, `onError came after ${elapsed} ms`);
    // The overlay shows the message (no spinner, no error page) and an OK
    // button that closes it.
    const note = page.locator('[role=dialog] [role=alert]');
    await note.waitFor({ timeout: 2_000 });
    assert.match(await note.textContent(), /could not be loaded/);
    assert.equal(await page.locator(`iframe[src^="${s.gw.endpoint}/widget/frame"]`).isVisible(), false, "the refused frame is hidden");
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "OK", "focus is on the OK button");
    await screenshot(page, "25-modal-frame-refused");
    await page.keyboard.press("Enter");
    await page.locator("[role=dialog]").waitFor({ state: "detached", timeout: 2_000 });
  });
});
