// The merchant's test shop: a tiny node:http server on its own loopback
// origin (a port other than the gateway's and the demo storefront's) that
// serves pages embedding the widget with one script tag, as a merchant
// would, and records what reaches it: the HTML form's submitted fields, the
// link form's return URL, every request.
//
// Pages are served under a strict CSP (no inline script or style; scripts,
// styles and frames only from the shop itself and the gateway), so the
// loader is also checked to work where merchants lock their pages down.
// Their behaviour is in /merchant.js (public/merchant.js); what each page
// does comes from a JSON block and the query string.

import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

import { freePort } from "./gateway.mjs";

const MERCHANT_JS = fileURLToPath(new URL("../public/merchant.js", import.meta.url));
const MERCHANT_CSS = fileURLToPath(new URL("../public/merchant.css", import.meta.url));

const esc = (s) =>
  String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

/** JSON for a <script type="application/json"> block: nothing can close it. */
const jsonBlock = (v) => JSON.stringify(v).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026");

/**
 * Starts the shop. host is how the browser names it ("127.0.0.1" or
 * "localhost"; both are served, on the same port). Resolves to
 * { origin, port, submissions, returns, requests, setAppId(jwt), close() }.
 */
export async function startMerchant({ gateway, host = "127.0.0.1" }) {
  const port = await freePort();
  const origin = `http://${host}:${port}`;
  const state = { appId: "", submissions: [], returns: [], requests: [] };

  const page = (title, body, config, { scriptTag = true } = {}) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<link rel="stylesheet" href="/merchant.css">
<script type="application/json" id="merchant-config">${jsonBlock(config)}</script>
${scriptTag ? `<script src="${esc(gateway)}/static/checkout.js"></script>\n` : ""}<script src="/merchant.js" defer></script>
</head>
<body>
<header class="shop"><strong>Merchant test shop</strong> <span class="origin">${esc(origin)}</span></header>
<main>
<h1>${esc(title)}</h1>
${body}
<pre id="log" aria-live="polite"></pre>
</main>
</body>
</html>`;

  const csp = [
    "default-src 'self'",
    `script-src 'self' ${gateway}`,
    `style-src 'self' ${gateway}`,
    `img-src 'self' ${gateway} data:`,
    `frame-src ${gateway}`,
    `connect-src 'self' ${gateway}`,
    `form-action 'self' ${gateway}`,
    "base-uri 'none'",
    "object-src 'none'",
  ].join("; ");

  const send = (res, status, type, body, headers = {}) => {
    res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store", ...headers });
    res.end(body);
  };
  const html = (res, body) => send(res, 200, "text/html; charset=utf-8", body, { "Content-Security-Policy": csp });

  const readBody = (req) =>
    new Promise((resolve, reject) => {
      const chunks = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
      req.on("error", reject);
    });

  const server = createServer(async (req, res) => {
    const url = new URL(req.url, origin);
    const q = Object.fromEntries(url.searchParams);
    state.requests.push({ method: req.method, url: req.url });
    try {
      const appId = q.appId || state.appId; // ?appId= overrides, for tests of other tokens
      const common = {
        appId,
        gateway,
        checkout: q.checkout || "payment",
        amount: q.amount ? Number(q.amount) : 1000,
        currency: q.currency || "JPY",
        locale: q.locale || undefined,
        email: q.email || undefined,
        phoneNumber: q.phoneNumber || undefined,
        inlineItemStyle: q.inlineItemStyle || undefined,
        paymentTypes: q.paymentTypes ? q.paymentTypes.split(",") : undefined,
        // An authorisation alone (slips.test.mjs).
        capture: q.capture || undefined,
        // A subscription checkout (subscriptions.test.mjs).
        tokenType: q.tokenType || undefined,
        subscriptionPeriod: q.subscriptionPeriod || undefined,
      };
      switch (`${req.method} ${url.pathname}`) {
        case "GET /merchant.js":
          return send(res, 200, "text/javascript; charset=utf-8", await readFile(MERCHANT_JS));
        case "GET /merchant.css":
          return send(res, 200, "text/css; charset=utf-8", await readFile(MERCHANT_CSS));
        case "GET /favicon.ico":
          return send(res, 204, "image/x-icon", "");
        case "GET /modal":
          return html(
            res,
            page("Modal checkout", `<p>Order #1001, ¥${common.amount}.</p><button id="pay" type="button">Pay with card</button>`, {
              mode: "modal",
              ...common,
            }),
          );
        case "GET /inline":
          return html(
            res,
            page(
              "Inline checkout",
              `<p>Order #1002, ¥${common.amount}.</p><div id="card-element" class="card-element"></div><button id="pay" type="button">Pay</button>`,
              { mode: "inline", ...common },
            ),
          );
        case "GET /html": {
          // The HTML API: a span inside a form, no script of the merchant's.
          // With ?inline=true, WooCommerce's shape: the fields in the page
          // and the shop's own submit button.
          const attr = (name, v) => (v ? ` data-${name}="${esc(v)}"` : "");
          const body = `<form id="order" method="post" action="/submit">
<input type="hidden" name="orderRef" value="A-1003">
<span data-app-id="${esc(appId)}" data-checkout="payment" data-amount="${common.amount}" data-currency="${esc(common.currency.toLowerCase())}" data-auto-submit="true"${attr("locale", q.locale)}${attr("payment-types", q.paymentTypes)}${attr("token-type", q.tokenType)}${attr("subscription-period", q.subscriptionPeriod)}${attr("email", q.email)}${attr("phone-number", q.phoneNumber)}${attr("inline", q.inline)}${attr("inline-item-style", q.inlineItemStyle)}></span>
${q.inline ? `<button id="place" type="submit">Place order</button>` : ""}
</form>`;
          return html(res, page("HTML-mode checkout", body, { mode: "html", ...common }));
        }
        case "GET /blank":
          // For budgets.mjs: no loader yet; the measurement inserts it.
          return html(res, page("Blank", `<div id="slot"></div>`, { mode: "none", ...common }, { scriptTag: false }));
        case "POST /submit": {
          const text = await readBody(req);
          const fields = Object.fromEntries(new URLSearchParams(text));
          state.submissions.push({ fields, raw: text, contentType: req.headers["content-type"] });
          return html(res, page("Order received", `<p id="received">Received: ${esc(Object.keys(fields).join(", "))}</p>`, { mode: "none" }, { scriptTag: false }));
        }
        case "GET /done":
        case "GET /failed":
        case "GET /pending":
          state.returns.push({ path: url.pathname, query: q });
          return html(
            res,
            page(`Back at the shop (${url.pathname.slice(1)})`, `<p id="returned">${esc(JSON.stringify(q))}</p>`, { mode: "none" }, { scriptTag: false }),
          );
        default:
          return send(res, 404, "text/plain; charset=utf-8", "not found");
      }
    } catch (err) {
      send(res, 500, "text/plain; charset=utf-8", String(err?.stack || err));
    }
  });
  // Two listeners on the same port: 127.0.0.1 and ::1 (Chromium may try
  // either for "localhost").
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  const server6 = createServer((req, res) => server.emit("request", req, res));
  await new Promise((resolve) => {
    server6.once("error", () => resolve()); // no IPv6 loopback: fine
    server6.listen(port, "::1", resolve);
  });

  return {
    origin,
    port,
    host,
    submissions: state.submissions,
    returns: state.returns,
    requests: state.requests,
    setAppId: (jwt) => {
      state.appId = jwt;
    },
    close: async () => {
      server.closeAllConnections?.();
      server6.closeAllConnections?.();
      await Promise.all([new Promise((r) => server.close(r)), new Promise((r) => server6.close(() => r()))]);
    },
  };
}
