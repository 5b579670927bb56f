// Headless Debian Chromium through playwright-core (never a downloaded
// browser), and a page instrumented to see what the merchant's page sees:
// its console, its requests, the postMessage events its window receives,
// CSP violations and uncaught errors.

import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const CHROMIUM = process.env.KESSAI_CHROMIUM || "/usr/bin/chromium";

// Without the background-networking flags Chromium keeps trying hosts this
// machine cannot reach.
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export const SCREENSHOT_DIR = fileURLToPath(new URL("../screenshots/", import.meta.url));

/**
 * Launches Chromium. Each launch gets a new, empty profile (playwright's
 * launch() makes a temporary user-data-dir and removes it on close), and
 * each context made from it is a fresh incognito-like profile on top.
 */
export async function launchBrowser() {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 30_000 });
}

/**
 * A new context and page. Everything the merchant's origin sees is
 * collected on the returned `seen`:
 *   console:   every console message of any frame { type, text, url }
 *   requests:  every request of any frame { url, method, postData, headers,
 *              frameUrl, frameOrigin, navigation, mainFrame }
 *   messages:  postMessage events received by windows of the merchant's origin
 *              { origin, data } (data as JSON, as the window got it)
 *   csp:       CSP violations in merchant frames
 *   errors:    uncaught exceptions in any frame
 */
export async function newPage(browser, { merchantOrigin, locale = "en-US", viewport = { width: 1000, height: 900 } } = {}) {
  const context = await browser.newContext({ locale, viewport, deviceScaleFactor: 1 });
  const seen = { console: [], requests: [], messages: [], csp: [], errors: [] };
  const originOf = (u) => {
    try {
      return new URL(u).origin;
    } catch {
      return "";
    }
  };

  // Runs in every frame before its own scripts; instruments only frames of
  // the merchant's origin, which report to Node at once through a binding
  // (so that nothing is lost when a form submission navigates away).
  await context.exposeBinding("__merchantRecord", ({ frame }, kind, item) => {
    if (originOf(frame.url()) !== merchantOrigin) return; // only merchant frames report
    if (kind === "message") seen.messages.push(item);
    else if (kind === "csp") seen.csp.push(item);
  });
  await context.addInitScript((origin) => {
    if (location.origin !== origin) return;
    const record = window.__merchantRecord;
    const asJSON = (v) => {
      try {
        return JSON.stringify(v, (k, x) => (typeof x === "bigint" ? String(x) : x instanceof Node ? `[${x.nodeName}]` : x));
      } catch (e) {
        return `[unserialisable ${Object.prototype.toString.call(v)}: ${String(v)}]`;
      }
    };
    window.addEventListener(
      "message",
      (ev) => {
        record("message", { origin: ev.origin, data: asJSON(ev.data), page: location.pathname });
      },
      true,
    );
    document.addEventListener("securitypolicyviolation", (ev) => {
      record("csp", { directive: ev.violatedDirective, blocked: ev.blockedURI, source: ev.sourceFile, line: ev.lineNumber, sample: ev.sample, page: location.pathname });
    });
  }, merchantOrigin);

  const page = await context.newPage();
  page.on("console", (msg) => {
    seen.console.push({ type: msg.type(), text: msg.text(), url: msg.location()?.url ?? "" });
  });
  page.on("pageerror", (err) => seen.errors.push(String(err?.stack || err)));
  page.on("request", (req) => {
    let frameUrl = "";
    let mainFrame = false;
    try {
      frameUrl = req.frame().url();
      mainFrame = req.frame() === page.mainFrame();
    } catch {
      // a service worker's, or a detached frame's
    }
    seen.requests.push({
      url: req.url(),
      method: req.method(),
      postData: req.postData() ?? "",
      headers: req.headers(),
      frameUrl,
      frameOrigin: originOf(frameUrl),
      navigation: req.isNavigationRequest(),
      mainFrame,
    });
  });

  return { context, page, seen };
}

/**
 * A screenshot to web/browser/screenshots/{name}.png: the viewport (what a
 * shopper sees; a full-page capture would show the page below a fixed
 * modal overlay uncovered), or the whole page with { fullPage: true }.
 */
export async function screenshot(page, name, { fullPage = false } = {}) {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const path = `${SCREENSHOT_DIR}${name}.png`;
  await page.screenshot({ path, fullPage, animations: "disabled" });
  return path;
}

/** Strings containing a card number: its digits with or without separators. */
export function cardNumberFinder(number) {
  const digits = number.replace(/\D/g, "");
  // Between digits: nothing, or spaces / dashes / dots / "+" / "%20" / "\u00a0".
  const sep = "(?:[\\s\\-.+\\u00a0]|%20|%2B|\\\\u00a0)*";
  const re = new RegExp(digits.split("").join(sep));
  return (text) => typeof text === "string" && re.test(text);
}
