// Driving the widget frame (templates/widget.html, static/widget.js,
// wasm/widget) from a test, and reading what the merchant's script was told.

/** The widget's iframe element under `scope` (a selector) and its Frame. */
export async function widgetFrame(page, gateway, { scope = "", timeout = 15_000 } = {}) {
  const sel = `${scope ? scope + " " : ""}iframe[src^="${gateway}/widget/frame"]`;
  const handle = await page.waitForSelector(sel, { state: "attached", timeout });
  let frame = await handle.contentFrame();
  const until = Date.now() + timeout;
  while ((!frame || !frame.url().startsWith(`${gateway}/widget/frame`)) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    frame = await handle.contentFrame();
  }
  if (!frame) throw new Error(`no frame behind ${sel}`);
  return { handle, frame };
}

/**
 * Waits until the frame's script runs (the pay button is enabled) and the
 * fields follow the WebAssembly's card rules (data-wasm="ready" on <html>).
 */
export async function waitWidgetReady(frame, { wasm = true, timeout = 15_000 } = {}) {
  await frame.waitForSelector("#kw-number", { timeout });
  await frame.waitForFunction(() => document.documentElement.classList.contains("js"), null, { timeout });
  if (wasm) {
    await frame.waitForFunction(() => document.documentElement.dataset.wasm === "ready" && !!window.kessaiWasm, null, { timeout });
  }
}

/**
 * Makes every request for the widget's WebAssembly in `context` fail, as a
 * network or a server failure would; the frame must then carry on with its
 * plain JavaScript. Returns { hits }: how many requests were refused.
 */
export async function blockWasm(context) {
  const blocked = { hits: 0 };
  await context.route(/\/static\/build\/widget\.wasm(\?|$)/, (route) => {
    blocked.hits++;
    return route.abort("failed");
  });
  return blocked;
}

/**
 * Waits until the frame's script runs and has given up on the WebAssembly
 * (data-wasm="failed"): the fields are the plain JavaScript's, with the card
 * rules of static/cardrules.js.
 */
export async function waitWidgetFallback(frame, { timeout = 15_000 } = {}) {
  await waitWidgetReady(frame, { wasm: false, timeout });
  await frame.waitForFunction(() => document.documentElement.dataset.wasm === "failed", null, { timeout });
  const state = await frame.evaluate(() => ({ wasm: !!window.kessaiWasm, rules: typeof window.KessaiCard?.numberState }));
  if (state.wasm || state.rules !== "function") throw new Error(`not the fallback: ${JSON.stringify(state)}`);
}

/** Fills the card fields (and the e-mail when the frame asks for it). */
export async function fillCard(frame, { number, exp, cvc = "123", name = "TARO YAMADA", email = "buyer@example.com" }) {
  if (email && (await frame.locator("#kw-email").count())) await frame.locator("#kw-email").fill(email);
  if (number !== undefined) await frame.locator("#kw-number").fill(number);
  if (exp !== undefined) await frame.locator("#kw-exp").fill(exp);
  if (cvc !== undefined) await frame.locator("#kw-cvc").fill(cvc);
  if (name !== undefined) await frame.locator("#kw-name").fill(name);
}

/** What the merchant's script recorded (public/merchant.js). */
export async function merchantLog(page) {
  return page.evaluate(() => window.merchantLog || []);
}

/** Waits for the merchant log to hold an entry of `kind`; returns it. */
export async function waitForLog(page, kind, { timeout = 15_000 } = {}) {
  const until = Date.now() + timeout;
  for (;;) {
    const log = await merchantLog(page);
    const hit = log.find((e) => e.kind === kind);
    if (hit) return hit;
    if (Date.now() > until) throw new Error(`no "${kind}" in the merchant log within ${timeout} ms: ${JSON.stringify(log)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The text of the frame's alert, or "" when it is hidden. */
export async function alertText(frame) {
  return frame.evaluate(() => {
    const a = document.getElementById("kw-alert");
    return a && !a.hidden ? a.textContent.trim() : "";
  });
}
