// The PHP SDK conformance suite: starts a real gateway (bin/kessai, as the
// rest of this folder does) and runs run.php, which drives it with the
// published UnivaPay PHP SDK. Each SDK operation run.php reports becomes a
// test here, so the spec reporter lists them all with their results.
//
// PHP and the SDK are not packages this repository can install: without a
// php binary, or without KESSAI_PHP_SDK_DIR naming a folder that holds the
// SDK and its two libraries (README.md), the suite says so in one line and
// is skipped.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const php = process.env.KESSAI_PHP || "php";
const sdkDir = process.env.KESSAI_PHP_SDK_DIR || "";
const packages = ["univapay-php-sdk/src/Univapay", "requests/src", "money/src"];

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
    // for the gateway's full default wait.
    const gw = await startGateway({ env: { KESSAI_POLL_WAIT: "250ms" } });
    try {
      const lines = [];
      const stderr = [];
      const code = await new Promise((resolve, reject) => {
        const child = spawn(php, [join(here, "run.php")], {
          env: {
            PATH: process.env.PATH,
            HOME: process.env.HOME,
            KESSAI_PHP_SDK_DIR: sdkDir,
            KESSAI_ENDPOINT: gw.endpoint,
            KESSAI_JWT: gw.credentials.jwt,
            KESSAI_SECRET: gw.credentials.secret,
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
      await gw.stop();
    }
  });
}
