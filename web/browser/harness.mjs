// The browser suite's harness. One call in a *.test.mjs file:
//
//   import { useSuite } from "./harness.mjs";
//   const s = useSuite();   // registers before/after hooks
//   test("…", async () => { const { page } = await s.newPage(); … });
//   const { page, frame } = await s.openModal({ amount: 1000 });  // the shop's modal, widget ready
//
// The `before` hook starts a real gateway (bin/kessai: `make build` first;
// nothing is built here) with its demo storefront, the merchant's test shop
// on a third origin with an app token minted for it, and headless Debian
// Chromium. Everything on `s` is filled in then, so read it inside tests.

import assert from "node:assert/strict";
import { after, afterEach, before } from "node:test";

import { launchBrowser, newPage, screenshot } from "./lib/browser.mjs";
import { startGateway } from "./lib/gateway.mjs";
import { startMerchant } from "./lib/merchant.mjs";
import { waitWidgetReady, widgetFrame } from "./lib/widget.mjs";

export { screenshot };
export * from "./lib/widget.mjs";

// The README's Sandbox table.
export const CARD_OK = "4000020000000000";
export const CARD_DECLINED = "4111111111111111";
export const EXPIRY = `12${String((new Date().getFullYear() + 3) % 100).padStart(2, "0")}`;
// 3-D Secure: a challenge, then success; a challenge, then a decline (359).
export const CARD_CHALLENGE = "4000002760003184";
export const CARD_CHALLENGE_DECLINED = "4000008400001629";
// The sandbox challenge's one-time code.
export const CHALLENGE_CODE = "123456";

/** opts.env: the gateway's environment (KESSAI_WALLET_EXPIRY, …). */
export function useSuite(opts = {}) {
  const s = {};
  const contexts = [];
  before(
    async () => {
      const started = Date.now();
      s.gw = await startGateway({ env: opts.env });
      s.merchant = await startMerchant({ gateway: s.gw.endpoint });
      const minted = await s.gw.mintAppToken([`127.0.0.1:${s.merchant.port}`, `localhost:${s.merchant.port}`]);
      s.appId = minted.jwt;
      s.appIdVia = minted.via;
      s.merchant.setAppId(s.appId);
      s.browser = await launchBrowser();
      s.startupMs = Date.now() - started;
    },
    { timeout: 60_000 },
  );

  afterEach(async (t) => {
    for (const c of contexts.splice(0)) await c.close().catch(() => {});
    if (t.passed || !s.gw) return;
    process.stderr.write(`\n--- gateway stderr (tail) after failed test "${t.name}" ---\n${await s.gw.logTail()}\n---\n`);
  });

  after(
    async () => {
      await s.browser?.close().catch(() => {});
      await s.merchant?.close().catch(() => {});
      if (s.gw) {
        const r = await s.gw.stop();
        assert.deepEqual({ code: r.code, signal: r.signal }, { code: 0, signal: null }, "the gateway did not exit 0 on SIGTERM");
      }
    },
    { timeout: 30_000 },
  );

  /** A fresh context and page instrumented for the merchant's origin. */
  s.newPage = async (opts = {}) => {
    const p = await newPage(s.browser, { merchantOrigin: s.merchant.origin, ...opts });
    contexts.push(p.context);
    return p;
  };
  /** The merchant shop URL of a page ("/modal", "/inline", …) with query. */
  s.url = (path, query = {}) => {
    const u = new URL(path, s.merchant.origin);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.set(k, v);
    return u.href;
  };
  /**
   * Opens the merchant's modal page (query: its parameters) in a fresh page
   * and the widget on it; returns the page's fields with the widget's
   * iframe element (handle) and frame, once the widget is ready.
   */
  s.openModal = async (query = {}, pageOpts = {}) => {
    const p = await s.newPage(pageOpts);
    await p.page.goto(s.url("/modal", query));
    await p.page.click("#pay");
    const { handle, frame } = await widgetFrame(p.page, s.gw.endpoint);
    await waitWidgetReady(frame);
    return { ...p, handle, frame };
  };
  return s;
}
