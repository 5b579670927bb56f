// The traffic recorder of the conformance suite (KESSAI_CONFORMANCE_TRAFFIC):
// a proxy on 127.0.0.1 that the harness puts between the SDK and the
// gateway. It forwards each request as it comes and streams each answer
// back as it comes, and appends one JSON line per exchange to a file that
// TestOpenAPIConformanceTraffic (server/api, run by `make conformance` with
// KESSAI_OPENAPI_TRAFFIC) checks against the gateway's OpenAPI document:
//
//   {"method","url","request_headers","request_body","status",
//    "response_headers","response_body","truncated"}
//
// Headers are recorded the way Go's http.Header holds them: canonical keys
// ("Content-Type"), arrays of values, no Host (net/http keeps it in
// Request.Host) and no Transfer-Encoding (net/http moves it out too).
//
// The files hold what the SDK sends, card numbers included: those are the
// sandbox's public test cards (4242…, 4000…), never real ones, and the
// files go to the temp dir `make conformance` makes and deletes after the
// Go test read them.

import { appendFileSync, mkdirSync } from "node:fs";
import { Agent as HTTPAgent, createServer as createHTTPServer, request as httpRequest } from "node:http";
import { basename, join } from "node:path";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";

/** What of a response body is recorded at most; the rest is forwarded only. */
export const MAX_RECORDED_BODY = 1 << 20;

// One name per test file (node --test runs each in its own process, whose
// argv[1] is the file), so each file's gateways write their own file.
const FILE_ID =
  basename(process.argv[1] ?? "gateway")
    .replace(/(\.test)?\.[cm]?js$/, "")
    .replace(/[^A-Za-z0-9._-]/g, "_") || "gateway";
let recorders = 0;

/** The .jsonl path of this process's next recorder in dir. */
function trafficFile(dir) {
  recorders += 1;
  // A file with two gateways (e.g. one with a slow sandbox) gets a second file.
  const id = recorders === 1 ? FILE_ID : `${FILE_ID}.${recorders}`;
  return join(dir, `${id}-${process.pid}.jsonl`);
}

/** net/http's CanonicalMIMEHeaderKey: "x-request-id" → "X-Request-Id". */
export function canonicalHeaderKey(key) {
  // Like Go, leave a key with a byte outside the token set as it is.
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(key)) return key;
  return key.toLowerCase().replace(/(^|-)([a-z])/g, (_, dash, c) => dash + c.toUpperCase());
}

/** rawHeaders ([name, value, name, value, …]) as a Go http.Header. */
function goHeader(raw, drop) {
  const out = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = canonicalHeaderKey(raw[i]);
    if (drop.includes(key)) continue;
    (out[key] ??= []).push(raw[i + 1]);
  }
  return out;
}

/** A recorded body as text, undoing a Content-Encoding when it is whole. */
function bodyText(buf, encoding, whole) {
  if (whole && encoding) {
    try {
      const e = encoding.trim().toLowerCase();
      if (e === "gzip" || e === "x-gzip") buf = gunzipSync(buf);
      else if (e === "deflate") buf = inflateSync(buf);
      else if (e === "br") buf = brotliDecompressSync(buf);
    } catch {
      // left as it came
    }
  }
  return buf.toString("utf8");
}

/**
 * Starts a recording proxy on a free port of 127.0.0.1 in front of
 * target ({ host, port }), writing to a new .jsonl file in dir. Resolves to
 * { endpoint, file, close() }. close() ends the proxy's connections; call it
 * after the gateway stopped, so nothing in flight is cut.
 *
 * The proxy changes one thing on the way: Host becomes the target's
 * host:port, what the client would have sent had it talked to the target
 * itself, so the gateway (or balancer) sees what it sees without the proxy.
 * It adds no X-Forwarded-For; the gateway sees the proxy's loopback address,
 * as it saw the SDK's.
 */
export async function startRecorder({ dir, target }) {
  mkdirSync(dir, { recursive: true });
  const file = trafficFile(dir);
  const authority = `${target.host}:${target.port}`;
  const agent = new HTTPAgent({ keepAlive: true });

  const server = createHTTPServer((req, res) => {
    const requestChunks = [];
    const responseChunks = [];
    let responseBytes = 0;
    let cut = false;
    let answer = null;

    const headers = { ...req.headers, host: authority };
    const upstream = httpRequest({ host: target.host, port: target.port, method: req.method, path: req.url, headers, agent }, (a) => {
      answer = a;
      // Status, reason and headers (rawHeaders: names, order and repeats
      // as sent), then the body chunk by chunk as the gateway flushes it:
      // flushHeaders() hands the head to the client at once, so a stream
      // that says nothing yet is open for the client as it is for us.
      res.writeHead(a.statusCode, a.statusMessage, a.rawHeaders);
      res.flushHeaders();
      a.on("data", (chunk) => {
        if (responseBytes + chunk.length > MAX_RECORDED_BODY) {
          if (responseBytes < MAX_RECORDED_BODY) responseChunks.push(chunk.subarray(0, MAX_RECORDED_BODY - responseBytes));
          responseBytes = MAX_RECORDED_BODY;
          cut = true;
        } else {
          responseChunks.push(chunk);
          responseBytes += chunk.length;
        }
      });
      a.pipe(res);
      // The gateway went away mid-answer: so does the client's answer.
      a.on("aborted", () => res.destroy());
      a.on("error", () => res.destroy());
    });
    upstream.on("error", (err) => {
      if (res.headersSent || res.destroyed) {
        res.destroy();
        return;
      }
      res.writeHead(502, { "Content-Type": "text/plain" });
      res.end(`conformance traffic recorder: ${authority}: ${err.message}`);
    });

    req.on("data", (chunk) => requestChunks.push(chunk));
    req.on("error", () => upstream.destroy());
    req.pipe(upstream);

    res.on("close", () => {
      // The client went away (an aborted fetch, a closed event stream)
      // before the answer ended: the gateway must see that too.
      if (!res.writableFinished) upstream.destroy();
      if (!answer) return; // the gateway never answered: nothing of its to record
      const type = answer.headers["content-type"] ?? "";
      const truncated = cut || !answer.complete || /^\s*text\/event-stream/i.test(type);
      const exchange = {
        method: req.method,
        url: req.url,
        request_headers: goHeader(req.rawHeaders, ["Host", "Transfer-Encoding"]),
        request_body: Buffer.concat(requestChunks).toString("utf8"),
        status: answer.statusCode,
        response_headers: goHeader(answer.rawHeaders, ["Transfer-Encoding"]),
        response_body: bodyText(Buffer.concat(responseChunks), answer.headers["content-encoding"], !truncated),
        truncated,
      };
      // One write per line, in a file only this process writes.
      appendFileSync(file, `${JSON.stringify(exchange)}\n`);
    });
  });

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  return {
    endpoint: `http://127.0.0.1:${server.address().port}`,
    file,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        agent.destroy();
        server.close(resolve);
      }),
  };
}
