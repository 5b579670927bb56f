// Starts one real Kessai gateway (bin/kessai, built by `make build`) on a
// free loopback port, with the demo storefront on a second free port and a
// fresh data directory, and talks to its API from Node with the demo
// store's secret token. The approach is server/conformance/harness.mjs's,
// without the SDK: the browser suite needs only a few raw API calls.

import { execFile, spawn } from "node:child_process";
import { createWriteStream, existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export const BINARY = process.env.KESSAI_BIN || fileURLToPath(new URL("../../../bin/kessai", import.meta.url));
const READY_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 15_000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Asks the kernel for a free loopback port, then releases it. */
export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** The environment of the gateway and of `kessai apptoken`: no inherited KESSAI_*. */
function gatewayEnv(extra) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("KESSAI_")));
  return Object.assign(env, extra);
}

/**
 * Starts a gateway with the demo storefront and waits for GET /heartbeat.
 * Resolves to { endpoint, demoEndpoint, dataDir, credentials, api, … }.
 */
export async function startGateway({ env = {} } = {}) {
  if (!existsSync(BINARY)) {
    throw new Error(`gateway binary not found at ${BINARY}: run \`make build\` first`);
  }
  const dataDir = await mkdtemp(join(tmpdir(), "kessai-browser-"));
  const port = await freePort();
  const demoPort = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const demoEndpoint = `http://127.0.0.1:${demoPort}`;
  const stderrPath = join(dataDir, "gateway.stderr.log");
  const stdoutPath = join(dataDir, "gateway.stdout.log");
  // The console's local mailbox is on, as make run has it: the console
  // suite follows a reset link from it.
  const baseEnv = {
    KESSAI_ADDR: `127.0.0.1:${port}`, KESSAI_DEMO_ADDR: `127.0.0.1:${demoPort}`, KESSAI_DATA_DIR: dataDir,
    KESSAI_DEV_MAILBOX: "true", ...env,
  };
  const childEnv = gatewayEnv(baseEnv);

  const stderrFile = createWriteStream(stderrPath);
  const stdoutFile = createWriteStream(stdoutPath);
  await Promise.all([stderrFile, stdoutFile].map((s) => new Promise((r) => s.once("open", r))));
  const child = spawn(BINARY, [], { env: childEnv, stdio: ["ignore", stdoutFile, stderrFile] });

  let exited = null;
  const exitPromise = new Promise((resolve) => {
    child.once("exit", (code, signal) => resolve((exited = { code, signal })));
    child.once("error", (error) => resolve((exited = { code: null, signal: null, error })));
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);

  const logTail = async (lines = 40) => {
    const text = await readFile(stderrPath, "utf8").catch(() => "");
    return text.trimEnd().split("\n").slice(-lines).join("\n");
  };
  const cleanup = async () => {
    process.removeListener("exit", killOnExit);
    stderrFile.close();
    stdoutFile.close();
    if (!process.env.KESSAI_BROWSER_KEEP) await rm(dataDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (exited) {
      const tail = await logTail();
      await cleanup();
      throw new Error(`gateway exited before it was ready (${exited.error?.message ?? `code ${exited.code}`}); stderr:\n${tail}`);
    }
    try {
      const res = await fetch(`${endpoint}/heartbeat`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      await exitPromise;
      const tail = await logTail();
      await cleanup();
      throw new Error(`gateway not ready within ${READY_TIMEOUT_MS} ms at ${endpoint}; stderr:\n${tail}`);
    }
    await sleep(50);
  }
  // The demo storefront shares the process; make sure it answers too.
  for (;;) {
    try {
      const res = await fetch(`${demoEndpoint}/`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`demo storefront not answering at ${demoEndpoint}`);
      await sleep(50);
    }
  }

  const credentials = JSON.parse(await readFile(join(dataDir, "demo-credentials.json"), "utf8"));
  const secretAuth = `Bearer ${credentials.secret}.${credentials.jwt}`;

  /** A JSON API call with the demo store's secret token. */
  const api = async (method, path, body) => {
    const res = await fetch(`${endpoint}${path}`, {
      method,
      headers: { Authorization: secretAuth, Accept: "application/json", ...(body && { "Content-Type": "application/json" }) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const err = new Error(`${method} ${path}: HTTP ${res.status} ${text}`);
      err.status = res.status;
      err.body = json ?? text;
      throw err;
    }
    return json;
  };

  /** GET /stores/{s}/charges/{id}, polled until the charge leaves "pending". */
  const charge = async (id, { timeoutMs = 10_000 } = {}) => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const c = await api("GET", `/stores/${credentials.store_id}/charges/${id}`);
      if (c.status !== "pending" || Date.now() > until) return c;
      await sleep(200);
    }
  };

  /**
   * An app token (no secret) for browser origins: first with
   * `kessai apptoken create` against the same data directory while the
   * gateway runs (SQLite in WAL mode allows it), else through the API.
   * Resolves to { jwt, via }.
   */
  const mintAppToken = async (domains) => {
    const args = ["apptoken", "create", "--store", credentials.store_id, "--mode", "test", "--data-dir", dataDir];
    for (const d of domains) args.push("--domain", d);
    try {
      const { stdout } = await promisify(execFile)(BINARY, args, { env: childEnv, timeout: 15_000 });
      const out = JSON.parse(stdout);
      if (out.jwt) return { jwt: out.jwt, via: "cli" };
    } catch (err) {
      process.stderr.write(`kessai apptoken create failed (${err.message.split("\n")[0]}); using the API\n`);
    }
    const created = await api("POST", `/stores/${credentials.store_id}/app_jwts`, { mode: "test", domains });
    return { jwt: created.jwt ?? created.token, via: "api" };
  };

  const stop = async () => {
    if (!exited) child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    const result = await exitPromise;
    clearTimeout(timer);
    await cleanup();
    return result;
  };

  return { endpoint, demoEndpoint, port, demoPort, dataDir, credentials, api, charge, mintAppToken, logTail, stop };
}
