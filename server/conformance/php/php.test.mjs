// The PHP SDK conformance suite: starts a real gateway (bin/kessai, as the
// rest of this folder does) and runs run.php, which drives it with the
// published UnivaPay PHP SDK. Each SDK operation run.php reports becomes a
// test here, so the spec reporter lists them all with their results. It
// also runs the webhook receiver whose deliveries run.php parses last.
//
// PHP and the SDK are not packages this repository can install: without a
// php binary, or without KESSAI_PHP_SDK_DIR naming a folder that holds the
// SDK and its two libraries (README.md), the suite says so in one line and
// is skipped.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const php = process.env.KESSAI_PHP || "php";
const sdkDir = process.env.KESSAI_PHP_SDK_DIR || "";
const packages = ["univapay-php-sdk/src/Univapay", "requests/src", "money/src"];

// Every event the gateway sends (UnivaPay's store-level event names that
// Kessai has), for the webhook run.php's deliveries go to.
const EVENTS = [
  "token_created",
  "token_updated",
  "token_cvv_auth_updated",
  "token_three_ds_updated",
  "recurring_token_deleted",
  "charge_updated",
  "charge_finished",
  "refund_finished",
  "cancel_finished",
  "subscription_created",
  "subscription_payment",
  "subscription_failure",
  "subscription_canceled",
  "subscription_suspended",
  "subscription_completed",
  "bank_transfer_status_updated",
];

/**
 * The webhook's receiver, a node http server on 127.0.0.1: POST /hook
 * keeps a delivery (its headers and raw body) and answers 200; GET /bodies
 * answers them all, once settled() says every delivery the gateway has
 * made or is making has come (run.php asks at its end, to parse each with
 * the PHP SDK).
 */
async function startReceiver(settled) {
  const deliveries = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", async () => {
      if (req.method === "POST" && req.url === "/hook") {
        const h = req.headers;
        deliveries.push({
          headers: Object.fromEntries(
            ["authorization", "content-type", "webhook-id", "webhook-timestamp", "webhook-signature"].map((k) => [k, h[k] ?? ""]),
          ),
          body: Buffer.concat(chunks).toString("utf8"),
        });
        res.writeHead(200).end();
        return;
      }
      if (req.method === "GET" && req.url === "/bodies") {
        const why = await settled(() => deliveries.length).catch((err) => String(err));
        res.writeHead(why ? 504 : 200, { "Content-Type": "application/json" }).end(JSON.stringify(why ? { error: why } : deliveries));
        return;
      }
      res.writeHead(404).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

/**
 * A settled(count) for startReceiver: resolves to "" once the webhook's
 * delivery log has no delivery pending and the receiver holds (count()) as
 * many as it lists (up to 8 s), or to why not.
 */
function logSettled(gw, hookId) {
  const auth = `Bearer ${gw.credentials.secret}.${gw.credentials.jwt}`;
  const log = async () => {
    const items = [];
    for (let cursor = ""; ; ) {
      const res = await fetch(
        `${gw.endpoint}/stores/${gw.credentials.store_id}/webhooks/${hookId}/events?limit=100${cursor && `&cursor=${cursor}`}`,
        { headers: { Authorization: auth, Accept: "application/json" } },
      );
      const page = await res.json();
      if (res.status !== 200) throw new Error(`the delivery log: ${res.status} ${JSON.stringify(page)}`);
      items.push(...page.items);
      if (!page.has_more || page.items.length === 0) return items;
      cursor = page.items[page.items.length - 1].id;
    }
  };
  return async (received) => {
    const deadline = Date.now() + 8_000;
    for (;;) {
      const items = await log();
      const pending = items.filter((e) => e.status === "pending").length;
      if (pending === 0 && received() >= items.length) return "";
      if (Date.now() > deadline) return `${pending} of ${items.length} deliveries pending, ${received()} received`;
      await new Promise((r) => setTimeout(r, 100));
    }
  };
}

// Why the suite cannot run here, or "" when it can.
function whySkip() {
  const probe = spawnSync(php, ["-r", "echo extension_loaded('curl') || ini_get('allow_url_fopen') ? 'ok' : 'no';"], {
    encoding: "utf8",
  });
  if (probe.error) return `no PHP (${php}): apt-get install php-cli php-curl php-mbstring php-bcmath`;
  if (probe.stdout.trim() !== "ok") return `PHP (${php}) has neither curl nor allow_url_fopen, so Requests cannot connect`;
  if (!sdkDir) return "KESSAI_PHP_SDK_DIR is not set (the SDK is fetched by hand: server/conformance/php/README.md)";
  for (const p of packages) {
    if (!existsSync(join(sdkDir, p))) return `${join(sdkDir, p)} not found (server/conformance/php/README.md)`;
  }
  return "";
}

const skip = whySkip();

if (skip) {
  test(`PHP SDK conformance: skipped, ${skip}`, { skip: true }, () => {});
} else {
  // Imported only when the suite runs: it needs bin/kessai.
  const { startGateway } = await import("../harness.mjs");

  test("PHP SDK conformance (univapay-php-sdk 6.7.6)", { timeout: 10 * 60_000 }, async (t) => {
    // Short long-polls: an awaiting charge is still in flight, so each
    // awaitResult that finds one already awaiting would otherwise be held
    // for the gateway's full default wait. The acquirer takes a moment, as
    // a real one does, so that what the SDK awaits is still under way when
    // it asks (the plugins' cancel() then awaitResult(5), most of all).
    const gw = await startGateway({ env: { KESSAI_POLL_WAIT: "250ms", KESSAI_SANDBOX_LATENCY: "150ms" } });
    let receiver;
    try {
      // A webhook for every event, to a receiver of this file's: run.php
      // parses each delivered body with UnivapayClient::parseWebhookData.
      // The PHP SDK cannot make one (it has no webhook resource), so the
      // Node SDK does, as a merchant's console would.
      let settled = async () => "the webhook is not made yet";
      receiver = await startReceiver((count) => settled(count));
      const authToken = `Bearer ${randomUUID()}`;
      const hook = await gw.sdk.webHooks.create({ triggers: EVENTS, url: `${receiver.url}/hook`, authToken }, undefined, gw.credentials.store_id);
      settled = logSettled(gw, hook.id);
      const lines = [];
      const stderr = [];
      const code = await new Promise((resolve, reject) => {
        const child = spawn(php, [join(here, "run.php")], {
          env: {
            PATH: process.env.PATH,
            HOME: process.env.HOME,
            KESSAI_PHP_SDK_DIR: sdkDir,
            // The SDK goes through the recording proxy when there is one
            // (KESSAI_CONFORMANCE_TRAFFIC); the links the gateway answers
            // with start with its own URL.
            KESSAI_ENDPOINT: gw.sdkEndpoint,
            KESSAI_GATEWAY_URL: gw.endpoint,
            KESSAI_JWT: gw.credentials.jwt,
            KESSAI_SECRET: gw.credentials.secret,
            KESSAI_WEBHOOK_INBOX: receiver.url,
            KESSAI_WEBHOOK_AUTH: authToken,
            KESSAI_WEBHOOK_SECRET: hook.secret,
          },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let buf = "";
        child.stdout.setEncoding("utf8");
        child.stdout.on("data", (chunk) => {
          buf += chunk;
          for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
            lines.push(buf.slice(0, i));
            buf = buf.slice(i + 1);
          }
        });
        child.stderr.setEncoding("utf8");
        child.stderr.on("data", (chunk) => stderr.push(chunk));
        child.once("error", reject);
        child.once("close", (c) => {
          if (buf) lines.push(buf);
          resolve(c);
        });
      });

      const counts = { pass: 0, fail: 0, "n/a": 0 };
      for (const line of lines) {
        let r;
        try {
          r = JSON.parse(line);
        } catch {
          await t.test(`run.php printed something that is not a result: ${line.slice(0, 200)}`, () => assert.fail(line));
          continue;
        }
        counts[r.result] = (counts[r.result] ?? 0) + 1;
        if (r.result === "n/a") {
          await t.test(r.op, { skip: `not applicable: ${r.detail}` }, () => {});
        } else {
          await t.test(r.op, () => {
            if (r.result !== "pass") assert.fail(`${r.result}: ${r.detail}`);
          });
        }
      }
      t.diagnostic(`PHP SDK operations: ${counts.pass} pass, ${counts.fail} fail, ${counts["n/a"]} not applicable`);
      assert.equal(code, counts.fail > 0 ? 1 : 0, `run.php exited ${code}; stderr:\n${stderr.join("")}`);
      assert.ok(counts.pass > 0, "run.php reported no operation");
    } finally {
      await receiver?.close();
      await gw.stop();
    }
  });
}
