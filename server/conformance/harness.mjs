// Shared harness for the conformance suite: starts one real Kessai gateway per
// test file and hands out univapay-node SDK clients pointed at it.
//
// Typical use in a *.test.mjs file:
//
//   import { useGateway } from "./harness.mjs";
//   const gw = useGateway(); // registers before/after/afterEach hooks
//   test("…", async () => { await gw.sdk.merchants.me(); });
//
// Everything on `gw` is filled in by the `before` hook, so read it inside
// tests, not at module top level.

import { execFile, spawn } from "node:child_process";
import { createWriteStream, existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { Agent as HTTPAgent, createServer as createHTTPServer, request as httpRequest } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, afterEach, before } from "node:test";
import assert from "node:assert/strict";

// univapay-node 4.0.130 is a dual package: `import` resolves to dist/esm,
// whose default export is the full SDK class (resources such as charges,
// stores, … hung off one instance).
import SDK from "univapay-node";

import { startRecorder } from "./traffic.mjs";

export { SDK };

// The SDK falls back to these when an option is missing (a client built
// without jwt/secret on purpose, for the missing-auth case). Clearing them
// keeps a developer's real UnivaPay credentials out of the suite.
for (const name of ["UNIVAPAY_ENDPOINT", "UNIVAPAY_APPLICATION_JWT", "UNIVAPAY_SECRET", "UNIVAPAY_APP_ID"]) {
  delete process.env[name];
}

const BINARY = process.env.KESSAI_BIN || fileURLToPath(new URL("../../bin/kessai", import.meta.url));
const READY_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 15_000;
const LOG_TAIL_LINES = 40;

// KESSAI_CONFORMANCE_TRAFFIC=<dir>: the SDK talks to each gateway through a
// recording proxy (traffic.mjs) that appends every exchange to a .jsonl
// file in dir, for TestOpenAPIConformanceTraffic (`make conformance`).
const TRAFFIC_DIR = process.env.KESSAI_CONFORMANCE_TRAFFIC || "";

// Headers through which univapay-node silently swaps its JWT (extractJWT in
// src/api/utils/JWT.ts): the gateway must never send them.
export const JWT_REFRESH_HEADERS = ["authorization", "x-refresh-authorization", "x-amzn-remapped-authorization"];

/** Asks the kernel for a free port, then releases it for the gateway. */
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

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts a gateway on a fresh data dir and waits until it is ready.
 *
 * options.demo: also start the demo storefront on its own free port.
 * options.env:  extra environment (e.g. KESSAI_REDIS_URL) for areas that
 *               need it; every other inherited KESSAI_* variable is dropped
 *               so a developer's shell cannot change what the suite tests.
 *
 * With KESSAI_CONFORMANCE_SCALEOUT=1 (`make conformance-scaleout`) it starts
 * two gateway processes instead, on one fresh PostgreSQL schema and one
 * Redis prefix, with the same keys and separate data dirs: the credentials
 * come from the first (which seeded the demo account), the SDK talks to the
 * second, and both say the second's address is the public URL, as processes
 * behind one load balancer do. So every token or charge may be processed by
 * either worker, and a long poll on the second is woken by a change the
 * first commits. With KESSAI_CONFORMANCE_SCALEOUT=alternate the SDK talks
 * instead to a proxy in this process that sends each request to the other
 * process than the last, as a round-robin load balancer does, so that what
 * one request wrote the next reads through the other process.
 *
 * With KESSAI_CONFORMANCE_TRAFFIC=<dir> the SDK's endpoint (sdkEndpoint) is
 * a recording proxy in front of what it would talk to otherwise (the
 * gateway, the second process, or the balancer); endpoint stays the
 * gateway's own address, the one it puts in the URLs it returns.
 */
export async function startGateway({ demo = false, env = {} } = {}) {
  if (!existsSync(BINARY)) {
    throw new Error(`gateway binary not found at ${BINARY}: run \`make build\` (or \`go build -o bin/kessai ./server\`) first`);
  }
  if (SCALEOUT) return startScaleout({ demo, env });
  const gateway = await launch({ demo, env });
  if (!gateway.credentials) {
    await gateway.stop();
    throw new Error("the gateway wrote no demo-credentials.json on its first start");
  }
  return client(gateway, [gateway], async () => {});
}

/** Two processes on one shared schema and Redis prefix (see startGateway). */
async function startScaleout({ demo, env }) {
  const shared = await sharedBackends();
  const port = await freePort();
  const balancerPort = SCALEOUT === "alternate" ? await freePort() : null;
  const endpoint = `http://127.0.0.1:${balancerPort ?? port}`;
  const common = {
    KESSAI_DATABASE_URL: shared.databaseURL,
    KESSAI_REDIS_URL: shared.redisURL,
    KESSAI_REDIS_PREFIX: shared.redisPrefix,
    // Every process on one database must seal cards and sign tokens alike.
    KESSAI_SIGNING_KEY: randomBytes(32).toString("hex"),
    KESSAI_CARD_KEY: randomBytes(32).toString("hex"),
    KESSAI_PUBLIC_URL: endpoint,
    ...env,
  };
  const started = [];
  try {
    // The first seeds the demo account (and runs the storefront, if asked);
    // the second, started once the schema is migrated and seeded, finds them.
    started.push(await launch({ demo, env: common, label: "gateway 1" }));
    if (!started[0].credentials) throw new Error("gateway 1 seeded the schema but wrote no demo-credentials.json");
    started.push(await launch({ port, env: common, label: "gateway 2" }));
  } catch (err) {
    await Promise.allSettled(started.map((g) => g.stop()));
    await shared.release();
    throw err;
  }
  const [first, second] = started;
  if (balancerPort !== null) {
    const balancer = await roundRobin(balancerPort, started);
    const release = async () => {
      await balancer.close();
      await shared.release();
    };
    return client({ ...second, endpoint, port: balancerPort, credentials: first.credentials, demoEndpoint: first.demoEndpoint }, started, release);
  }
  return client({ ...second, credentials: first.credentials, demoEndpoint: first.demoEndpoint }, started, shared.release);
}

/**
 * A load balancer on port that forwards each request to the next of
 * targets in turn, headers (Host included) and bodies as they come, and
 * answers with the target's answer as it streams.
 */
async function roundRobin(port, targets) {
  let next = 0;
  const agent = new HTTPAgent({ keepAlive: true });
  const server = createHTTPServer((req, res) => {
    const target = targets[next++ % targets.length];
    const upstream = httpRequest(
      { host: "127.0.0.1", port: target.port, method: req.method, path: req.url, headers: req.headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    upstream.on("error", (err) => {
      if (!res.headersSent) res.writeHead(502, { "Content-Type": "text/plain" });
      res.end(`round-robin balancer: ${target.label}: ${err.message}`);
    });
    req.pipe(upstream);
  });
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        agent.destroy();
        server.close(resolve);
      }),
  };
}

/**
 * Starts one gateway process on a fresh data dir and waits until it
 * answers GET /heartbeat. stop() sends SIGTERM and resolves to the
 * process's { code, signal } and, when it did not exit 0, its log's tail.
 */
async function launch({ demo = false, env = {}, port, label = "gateway" }) {
  const dataDir = await mkdtemp(join(tmpdir(), "kessai-conformance-"));
  port ??= await freePort();
  const demoPort = demo ? await freePort() : null;
  const endpoint = `http://127.0.0.1:${port}`;
  const stderrPath = join(dataDir, "gateway.stderr.log");
  const stdoutPath = join(dataDir, "gateway.stdout.log");

  const childEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("KESSAI_")));
  Object.assign(childEnv, {
    KESSAI_ADDR: `127.0.0.1:${port}`,
    KESSAI_DEMO_ADDR: demo ? `127.0.0.1:${demoPort}` : "",
    KESSAI_DATA_DIR: dataDir,
    ...env,
  });

  // Logs go to files in the data dir (not pipes we must keep draining); the
  // stderr file is what failing tests print the tail of.
  const stderrFile = createWriteStream(stderrPath);
  const stdoutFile = createWriteStream(stdoutPath);
  await Promise.all([stderrFile, stdoutFile].map((s) => new Promise((r) => s.once("open", r))));
  const child = spawn(BINARY, [], { env: childEnv, stdio: ["ignore", stdoutFile, stderrFile] });

  let exited = null; // { code, signal } once the process is gone
  const exitPromise = new Promise((resolve) => {
    child.once("exit", (code, signal) => {
      exited = { code, signal };
      resolve(exited);
    });
    child.once("error", (err) => {
      exited = { code: null, signal: null, error: err };
      resolve(exited);
    });
  });
  // A crashed or interrupted test run must not leave a gateway holding a port.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);

  const logTail = async (lines = LOG_TAIL_LINES) => {
    const text = await readFile(stderrPath, "utf8").catch(() => "");
    return text.trimEnd().split("\n").slice(-lines).join("\n");
  };

  const cleanup = async () => {
    process.removeListener("exit", killOnExit);
    stderrFile.close();
    stdoutFile.close();
    if (!process.env.KESSAI_CONFORMANCE_KEEP) {
      await rm(dataDir, { recursive: true, force: true });
    }
  };

  // Readiness per the operating contract: GET /heartbeat answers 200.
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (exited) {
      const tail = await logTail();
      await cleanup();
      const why = exited.error ? exited.error.message : `code ${exited.code}, signal ${exited.signal}`;
      throw new Error(`${label} exited before it was ready (${why}); stderr:\n${tail}`);
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
      throw new Error(`${label} not ready within ${READY_TIMEOUT_MS} ms at ${endpoint}; stderr:\n${tail}`);
    }
    await sleep(50);
  }

  // Only the process that seeded the database has demo credentials: one
  // that finds a shared database seeded by another starts without them.
  const credentials = await readFile(join(dataDir, "demo-credentials.json"), "utf8").then(JSON.parse, (err) => {
    if (err.code === "ENOENT") return null;
    throw err;
  });

  /** SIGTERM, then the contract: drain and exit 0. */
  const stop = async () => {
    if (!exited) child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    const result = await exitPromise;
    clearTimeout(timer);
    const tail = result.code === 0 ? "" : await logTail();
    await cleanup();
    return { label, code: result.code, signal: result.signal, tail };
  };

  return {
    label,
    endpoint,
    port,
    demoEndpoint: demo ? `http://127.0.0.1:${demoPort}` : null,
    dataDir,
    credentials,
    logTail,
    stop,
    pid: child.pid,
  };
}

/**
 * What tests get: SDK clients for target (the process the SDK talks to)
 * with its credentials, and a stop() that stops every process, then
 * releases what they shared. With KESSAI_CONFORMANCE_TRAFFIC the clients
 * talk to target through a recording proxy, closed after the processes
 * stopped.
 */
async function client(target, processes, release) {
  const { endpoint, credentials } = target;

  let sdkEndpoint = endpoint;
  let traffic = null;
  if (TRAFFIC_DIR) {
    const { hostname, port } = new URL(endpoint);
    let recorder;
    try {
      recorder = await startRecorder({ dir: TRAFFIC_DIR, target: { host: hostname, port: Number(port) } });
    } catch (err) {
      await Promise.allSettled(processes.map((p) => p.stop()));
      await release();
      throw err;
    }
    sdkEndpoint = recorder.endpoint;
    traffic = recorder.file;
    const releaseShared = release;
    release = async () => {
      await recorder.close();
      await releaseShared();
    };
  }

  // Every request/response any SDK from this harness made, so tests can
  // audit headers across the whole file: no response may hand the SDK a JWT
  // to adopt, and every JSON answer must say application/json.
  const requests = [];
  const responses = [];
  // Calls to the SDK's handleUpdateJWT: non-empty means the gateway made
  // the SDK replace its credentials.
  const jwtUpdates = [];

  /** A new SDK client for this gateway; overrides go to the SDK constructor. */
  const makeSDK = (overrides = {}) => {
    const sdk = new SDK({
      endpoint: sdkEndpoint,
      jwt: credentials.jwt,
      secret: credentials.secret,
      handleUpdateJWT: (jwt) => jwtUpdates.push(jwt),
      ...overrides,
    });
    sdk.on("request", (req) => requests.push(req));
    sdk.on("response", (res) => responses.push(res));
    return sdk;
  };

  /** Every process's stderr tail, each under its name when there are two. */
  const logTail = async (lines = LOG_TAIL_LINES) => {
    if (processes.length === 1) return processes[0].logTail(lines);
    const tails = await Promise.all(processes.map(async (p) => `[${p.label}, ${p.endpoint}]\n${await p.logTail(lines)}`));
    return tails.join("\n");
  };

  /** Stops every process; each must exit 0 on SIGTERM. */
  const stop = async () => {
    const results = await Promise.all(processes.map((p) => p.stop()));
    await release();
    for (const r of results) {
      assert.deepEqual(
        { code: r.code, signal: r.signal },
        { code: 0, signal: null },
        `${r.label} did not exit 0 on SIGTERM; stderr:\n${r.tail}`,
      );
    }
  };

  return {
    endpoint,
    sdkEndpoint,
    traffic,
    port: target.port,
    demoEndpoint: target.demoEndpoint,
    dataDir: target.dataDir,
    credentials,
    sdk: makeSDK(),
    makeSDK,
    requests,
    responses,
    jwtUpdates,
    logTail,
    stop,
    pid: target.pid,
    pids: processes.map((p) => p.pid),
    // Each process's own address, the one that seeded the demo account
    // first: a test may make something through one and read it through
    // another.
    endpoints: processes.map((p) => p.endpoint),
  };
}

// The scale-out mode's shared back ends (see startGateway).
// "1": the SDK talks to the second process; "alternate": to both in turn.
const SCALEOUT = ["1", "alternate"].includes(process.env.KESSAI_CONFORMANCE_SCALEOUT) ? process.env.KESSAI_CONFORMANCE_SCALEOUT : "";
const TEST_DATABASE_URL = process.env.KESSAI_TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test?sslmode=disable";
const TEST_REDIS_URL = process.env.KESSAI_TEST_REDIS_URL || "redis://127.0.0.1:6379/0";
const BACKEND_TIMEOUT_MS = 10_000;

/** A URL fit to print: its password replaced. */
function redacted(raw) {
  try {
    const u = new URL(raw);
    if (u.password) u.password = "xxxxx";
    return u.toString();
  } catch {
    return "(an unparsable URL)";
  }
}

/** Runs a command, resolving to its stdout; rejects with its stderr's first line. */
function run(file, args) {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: BACKEND_TIMEOUT_MS, maxBuffer: 64 << 20, env: { ...process.env, PGCONNECT_TIMEOUT: "5" } }, (err, stdout, stderr) => {
      if (err) {
        const line = `${stderr}`.trim().split("\n")[0] || err.message.split("\n")[0];
        reject(new Error(line.startsWith(`${file}:`) ? line : `${file}: ${line}`));
      } else {
        resolve(`${stdout}`);
      }
    });
  });
}

const psql = (sql) => run("psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", TEST_DATABASE_URL, "-c", sql]);
const redisCLI = (...args) => run("redis-cli", ["--no-auth-warning", "-u", TEST_REDIS_URL, ...args]);

/**
 * Checks that the scale-out mode's PostgreSQL and Redis answer, failing
 * with one message that says what is down and how to start it.
 */
export async function scaleoutReachable() {
  const down = [];
  await psql("SELECT 1").catch((err) => down.push(`PostgreSQL at ${redacted(TEST_DATABASE_URL)} (KESSAI_TEST_DATABASE_URL): ${err.message}`));
  await redisCLI("PING").then(
    (out) => out.trim() === "PONG" || down.push(`Redis at ${redacted(TEST_REDIS_URL)} (KESSAI_TEST_REDIS_URL) answered ${JSON.stringify(out.trim())} to PING`),
    (err) => down.push(`Redis at ${redacted(TEST_REDIS_URL)} (KESSAI_TEST_REDIS_URL): ${err.message}`),
  );
  if (down.length > 0) {
    throw new Error(`the scale-out conformance suite cannot reach ${down.join("; and ")}. .ci/ensure-deps starts PostgreSQL and Redis on this machine.`);
  }
}

/**
 * A fresh schema and Redis prefix, and release(), which drops the schema
 * and deletes the prefix's keys once the processes are stopped.
 */
async function sharedBackends() {
  const id = randomBytes(8).toString("hex");
  const schema = `kessai_conf_${id}`;
  const redisPrefix = `kessai-conf-${id}:`;
  try {
    await psql(`CREATE SCHEMA ${schema}`);
  } catch {
    await scaleoutReachable();
    throw new Error(`could not create schema ${schema} in ${redacted(TEST_DATABASE_URL)}`);
  }
  const u = new URL(TEST_DATABASE_URL);
  u.searchParams.set("search_path", schema);
  const release = async () => {
    if (process.env.KESSAI_CONFORMANCE_KEEP) return;
    await psql(`DROP SCHEMA ${schema} CASCADE`);
    const keys = (await redisCLI("--scan", "--pattern", `${redisPrefix}*`)).split("\n").filter(Boolean);
    for (let i = 0; i < keys.length; i += 500) {
      await redisCLI("DEL", ...keys.slice(i, i + 500));
    }
  };
  return { databaseURL: u.toString(), redisURL: TEST_REDIS_URL, redisPrefix, release };
}

/**
 * Registers hooks in the current scope (file or describe) that run one
 * gateway for all its tests, and returns an object that the `before` hook
 * fills with the startGateway() result.
 */
export function useGateway(options) {
  const gw = {};
  before(async () => {
    Object.assign(gw, await startGateway(options));
  }, { timeout: (SCALEOUT ? 2 : 1) * READY_TIMEOUT_MS + 10_000 });

  afterEach(async (t) => {
    if (t.passed || !gw.logTail) return;
    const tail = await gw.logTail();
    process.stderr.write(`\n--- gateway stderr (last ${LOG_TAIL_LINES} lines) after failed test "${t.name}" ---\n${tail}\n---\n`);
  });

  after(async () => {
    if (gw.stop) await gw.stop();
  }, { timeout: STOP_TIMEOUT_MS + (SCALEOUT ? 3 * BACKEND_TIMEOUT_MS : 5_000) });

  return gw;
}

/**
 * Asserts that an SDK call rejects with the given API error, as univapay-node
 * surfaces it: err.errorResponse = { status, httpCode, code, errors }.
 * `field`, if given, must be named by one of errors[].field.
 * Resolves to the errorResponse for further checks.
 */
export async function expectAPIError(promise, { code, httpCode, field }) {
  let errorResponse;
  await assert.rejects(promise, (err) => {
    assert.ok(err.errorResponse, `expected an SDK ResponseError, got ${err?.stack || err}`);
    errorResponse = err.errorResponse;
    return true;
  });
  const got = { code: errorResponse.code, httpCode: errorResponse.httpCode };
  const want = { code, httpCode: httpCode ?? errorResponse.httpCode };
  assert.deepEqual(got, want, `unexpected error response ${JSON.stringify(errorResponse)}`);
  if (field !== undefined) {
    const fields = (Array.isArray(errorResponse.errors) ? errorResponse.errors : []).map((e) => e.field);
    assert.ok(fields.includes(field), `no error names field "${field}": ${JSON.stringify(errorResponse.errors)}`);
  }
  return errorResponse;
}

/**
 * Registers hooks in the current scope that run a webhook receiver on
 * 127.0.0.1 (test mode delivers to local addresses): it keeps every
 * delivery (path, method, headers, raw and parsed body) and answers 200.
 * receiver.base is its URL once the `before` hook ran;
 * receiver.delivered(cond, what) resolves to the first delivery matching
 * cond, waiting up to 10 s for it.
 */
export function useWebhookReceiver() {
  const receiver = { deliveries: [], waiters: [] };
  before(async () => {
    receiver.server = createHTTPServer((req, res) => {
      const chunks = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        receiver.deliveries.push({ path: req.url, method: req.method, headers: req.headers, raw, body: JSON.parse(raw) });
        for (const w of receiver.waiters.splice(0)) w();
        res.writeHead(200, { "Content-Type": "text/plain" }).end("ok");
      });
    });
    await new Promise((resolve) => receiver.server.listen(0, "127.0.0.1", resolve));
    receiver.base = `http://127.0.0.1:${receiver.server.address().port}`;
  });
  after(() => new Promise((resolve) => receiver.server.close(resolve)));

  receiver.delivered = async (cond, what) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const found = receiver.deliveries.find(cond);
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) {
        assert.fail(`no ${what} arrived; got ${JSON.stringify(receiver.deliveries.map((d) => [d.path, d.body.event, d.body.data?.id]))}`);
      }
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 500));
        receiver.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  };
  return receiver;
}

/**
 * Standard Webhooks: webhook-signature holds space-separated "v1,<base64>"
 * signatures; one must be the base64 HMAC-SHA256 of
 * "<webhook-id>.<webhook-timestamp>.<raw body>" under the secret's key
 * (the base64 after "whsec_").
 */
export function webhookSignatureValid(secret, headers, raw) {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(`${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${raw}`).digest();
  return (headers["webhook-signature"] ?? "").split(" ").some((sig) => {
    const [version, b64] = sig.split(",");
    const got = Buffer.from(b64 ?? "", "base64");
    return version === "v1" && got.length === expected.length && timingSafeEqual(got, expected);
  });
}
