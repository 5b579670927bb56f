// `make budgets`: what the widget costs a shopper, measured and printed (a
// report, not a test: nothing here fails on a number).
//
//   sizes    the loader (checkout.js, and checkout-html.js for the HTML
//            mode) as the gateway serves it, raw and gzipped; static/build/widget.wasm
//            raw, gzip and brotli; the Go runtime's floor (an empty js/wasm
//            program built the same way, `make wasm-floor`, path in
//            $WASM_FLOOR) in the same run; the frame's other files; and what
//            the gateway actually sends for each.
//   timings  headless Chromium, a merchant page on its own origin under a
//            strict CSP: from inserting the loader's <script> tag to the
//            loader running, to the frame's first (contentful) paint, to the
//            frame's script being ready, and to the WebAssembly being ready
//            (static/widget.js sets data-wasm="ready" and fires
//            "kessai:wasm-ready" once wasm/widget runs, and marks it with
//            performance.mark("kessai:wasm-ready")). Median of N runs on a
//            cold cache (a new browser context each run) and on a warm one
//            (the same context, page reloaded), and cold on an emulated
//            slow 4G connection (1.6 Mbit/s down, 150 ms round trip).
//
// Environment: WASM_FLOOR (the floor .wasm), BUDGET_RUNS (default 5),
// KESSAI_BIN, KESSAI_CHROMIUM.

import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { constants, brotliCompressSync, gzipSync } from "node:zlib";

import { launchBrowser, newPage } from "./lib/browser.mjs";
import { startGateway } from "./lib/gateway.mjs";
import { startMerchant } from "./lib/merchant.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const RUNS = Math.max(1, Number(process.env.BUDGET_RUNS) || 5);
const FLOOR = process.env.WASM_FLOOR || "";
// "Slow 4G": 1.6 Mbit/s down, 750 kbit/s up, 150 ms round trip.
const SLOW = { offline: false, latency: 150, downloadThroughput: 1.6e6 / 8, uploadThroughput: 750e3 / 8 };

const kib = (n) => (n == null ? "—" : `${(n / 1024).toFixed(1)} KiB`);
const ms = (n) => (n == null || Number.isNaN(n) ? "—" : `${Math.round(n)} ms`);
const median = (xs) => {
  const v = xs.filter((x) => typeof x === "number" && !Number.isNaN(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};

function sizes(path, { text, buf }) {
  if (!buf && (!path || !existsSync(path))) return null;
  buf = buf || readFileSync(path);
  return {
    raw: buf.length,
    gzip: gzipSync(buf, { level: 9 }).length,
    br: brotliCompressSync(buf, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 11,
        [constants.BROTLI_PARAM_MODE]: text ? constants.BROTLI_MODE_TEXT : constants.BROTLI_MODE_GENERIC,
        [constants.BROTLI_PARAM_SIZE_HINT]: buf.length,
      },
    }).length,
  };
}

function table(headers, rows) {
  const cells = [headers, ...rows].map((r) => r.map((c) => String(c ?? "—")));
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return [line(cells[0]), widths.map((w) => "-".repeat(w)).join("  "), ...cells.slice(1).map(line)].join("\n");
}

/** What the gateway sends for a static file with Accept-Encoding br/gzip. */
async function served(gateway, path, { waitForBrotli = false } = {}) {
  const until = Date.now() + 60_000;
  for (;;) {
    const res = await fetch(`${gateway}${path}`, { headers: { "Accept-Encoding": "br, gzip" } });
    if (!res.ok) return null;
    const body = new Uint8Array(await res.arrayBuffer()); // fetch decodes; count the wire bytes instead
    const wire = Number(res.headers.get("content-length")) || null;
    const enc = res.headers.get("content-encoding") || "identity";
    if (!waitForBrotli || enc === "br" || Date.now() > until) return { enc, wire, decoded: body.length, cache: res.headers.get("cache-control") };
    await new Promise((r) => setTimeout(r, 250));
  }
}

// ---- sizes ------------------------------------------------------------
const files = [
  ["checkout.js (loader)", `${ROOT}static/checkout.js`, "/static/checkout.js", true],
  ["checkout-html.js (loader, HTML mode)", `${ROOT}static/checkout-html.js`, "/static/checkout-html.js", true],
  ["widget.wasm", `${ROOT}static/build/widget.wasm`, "/static/build/widget.wasm", false],
  ["floor.wasm (empty Go)", FLOOR, null, false],
  ["wasm_exec.js", `${ROOT}static/build/wasm_exec.js`, "/static/build/wasm_exec.js", true],
  ["widget.js (frame)", `${ROOT}static/widget.js`, "/static/widget.js", true],
  ["cardrules.js (frame, card rules)", `${ROOT}static/cardrules.js`, "/static/cardrules.js", true],
  ["widget.css (frame)", `${ROOT}static/widget.css`, "/static/widget.css", true],
];
const measured = files.map(([name, path, url, text]) => ({ name, path, url, text, s: sizes(path, { text }) }));

const gw = await startGateway();
const merchant = await startMerchant({ gateway: gw.endpoint });
let browser;
try {
  for (const m of measured) {
    if (!m.url) continue;
    m.served = await served(gw.endpoint, m.url, { waitForBrotli: m.url.endsWith(".wasm") });
    // The sizes are those of what the gateway sends (the loader goes out
    // compacted, with its texts written in), not of the file on disk.
    const res = await fetch(`${gw.endpoint}${m.url}`, { headers: { "Accept-Encoding": "identity" } });
    if (res.ok) m.s = sizes(null, { text: m.text, buf: Buffer.from(await res.arrayBuffer()) });
  }

  console.log(`\nKessai widget budgets (${new Date().toISOString()}, ${process.version}, ${RUNS} runs)\n`);
  console.log("Sizes of what the gateway serves (gzip -9, brotli q11 by node:zlib; 'served' = what it sends for Accept-Encoding: br, gzip)\n");
  console.log(
    table(
      ["file", "raw", "gzip", "brotli", "served"],
      measured.map((m) => [
        m.name,
        m.s ? kib(m.s.raw) : "missing",
        m.s && kib(m.s.gzip),
        m.s && kib(m.s.br),
        m.served ? `${kib(m.served.wire ?? m.served.decoded)} ${m.served.enc}` : "",
      ]),
    ),
  );
  const wasm = measured.find((m) => m.name === "widget.wasm").s;
  const floor = measured.find((m) => m.name.startsWith("floor.wasm")).s;
  if (wasm && floor) {
    console.log(
      `\nwidget.wasm above the Go floor: raw +${kib(wasm.raw - floor.raw)}, gzip +${kib(wasm.gzip - floor.gzip)}, brotli +${kib(wasm.br - floor.br)}` +
        ` (the floor is ${Math.round((100 * floor.br) / wasm.br)}% of the brotli size; the widget is ${(wasm.br / floor.br).toFixed(3)}× the floor)`,
    );
  } else if (!floor) {
    console.log(`\nfloor.wasm not found (WASM_FLOOR=${FLOOR || "unset"}): run \`make budgets\`, which builds it`);
  }

  // ---- timings --------------------------------------------------------
  const { jwt } = await gw.mintAppToken([`127.0.0.1:${merchant.port}`]);
  merchant.setAppId(jwt);
  browser = await launchBrowser();

  /** One measurement on `page`, already showing /blank. */
  const measure = async (page) => {
    const t = await page.evaluate(
      ({ gateway, appId }) =>
        new Promise((resolve, reject) => {
          const abs = () => performance.timeOrigin + performance.now();
          const out = { t0: abs() };
          const s = document.createElement("script");
          s.src = `${gateway}/static/checkout.js`;
          s.onload = () => {
            out.loader = abs();
            try {
              window.KessaiCheckout.create({
                appId,
                checkout: "payment",
                amount: 1000,
                currency: "JPY",
                inline: true,
                container: document.getElementById("slot"),
              }).open();
              out.mounted = abs();
              resolve(out);
            } catch (e) {
              reject(e);
            }
          };
          s.onerror = () => reject(new Error("checkout.js did not load"));
          document.head.appendChild(s);
        }),
      { gateway: gw.endpoint, appId: jwt },
    );
    const handle = await page.waitForSelector(`#slot iframe`, { state: "attached" });
    let frame = await handle.contentFrame();
    await frame.waitForFunction(() => document.documentElement.dataset.wasm === "ready", null, { timeout: 30_000, polling: 10 });
    await frame.waitForFunction(() => performance.getEntriesByName("first-contentful-paint").length > 0, null, { timeout: 10_000 }).catch(() => {});
    const f = await frame.evaluate(() => {
      const at = (e) => (e ? performance.timeOrigin + e.startTime : null);
      const paint = (n) => at(performance.getEntriesByName(n, "paint")[0]);
      const mark = (n) => at(performance.getEntriesByName(n, "mark")[0]);
      const nav = performance.getEntriesByType("navigation")[0];
      return {
        origin: performance.timeOrigin,
        responseEnd: nav ? performance.timeOrigin + nav.responseEnd : null,
        fp: paint("first-paint"),
        fcp: paint("first-contentful-paint"),
        frameReady: mark("kessai:frame-ready"),
        wasmReady: mark("kessai:wasm-ready"),
      };
    });
    const rel = (x) => (x == null ? null : x - t.t0);
    return {
      loader: rel(t.loader),
      frameNav: rel(f.origin),
      frameHTML: rel(f.responseEnd),
      fp: rel(f.fp),
      fcp: rel(f.fcp),
      frameReady: rel(f.frameReady),
      wasmReady: rel(f.wasmReady),
    };
  };

  const cold = [];
  const warm = [];
  const slow = [];
  for (let i = 0; i < RUNS; i++) {
    const { context, page } = await newPage(browser, { merchantOrigin: merchant.origin });
    await page.goto(`${merchant.origin}/blank`);
    cold.push(await measure(page));
    await page.goto(`${merchant.origin}/blank`);
    warm.push(await measure(page));
    await context.close();
  }
  // A phone on a slow connection: Chromium's network emulation, applied
  // after the merchant's page has loaded (only the widget is slowed).
  for (let i = 0; i < RUNS; i++) {
    const { context, page } = await newPage(browser, { merchantOrigin: merchant.origin });
    await page.goto(`${merchant.origin}/blank`);
    const cdp = await context.newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.emulateNetworkConditions", SLOW);
    slow.push(await measure(page));
    await context.close();
  }

  const rows = [
    ["loader script ran (onload)", "loader"],
    ["frame navigation started", "frameNav"],
    ["frame HTML received", "frameHTML"],
    ["frame first paint", "fp"],
    ["frame first contentful paint", "fcp"],
    ["frame script ready (kessai:frame-ready)", "frameReady"],
    ["WebAssembly ready (kessai:wasm-ready)", "wasmReady"],
  ];
  console.log(`\nTimes from inserting <script src=".../checkout.js"> (headless Chromium, median of ${RUNS}; min–max)\n`);
  const span = (xs, k) => {
    const v = xs.map((x) => x[k]).filter((x) => x != null);
    return v.length ? `${Math.round(Math.min(...v))}–${Math.round(Math.max(...v))}` : "—";
  };
  console.log(
    table(
      ["milestone", "cold cache", "range", "warm cache", "range", "slow 4G, cold", "range"],
      rows.map(([label, k]) => [
        label,
        ms(median(cold.map((x) => x[k]))),
        span(cold, k),
        ms(median(warm.map((x) => x[k]))),
        span(warm, k),
        ms(median(slow.map((x) => x[k]))),
        span(slow, k),
      ]),
    ),
  );
  console.log(
    "\ncold/warm: loopback, no network latency. slow 4G: Chromium's network emulation (1.6 Mbit/s, 150 ms RTT) for the widget's requests, cold cache." +
      "\nThe fields work as plain HTML from first paint; the WebAssembly's card rules then take over formatting and validation.\n",
  );
} finally {
  await browser?.close().catch(() => {});
  await merchant.close().catch(() => {});
  await gw.stop();
}
