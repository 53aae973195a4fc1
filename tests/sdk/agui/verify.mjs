#!/usr/bin/env node
// Runs the AG-UI 1.0 reference client's own inbound event pipeline over saved AG-UI runs and
// prints one JSON line per file: accepted, or where and why the client rejects the stream.
//
//   node tests/sdk/agui/verify.mjs FILE...
//
// The pipeline is the one `AbstractAgent.runAgent` builds in @ag-ui/client 1.0.0
// (src/agent/agent.ts): the always-on `CompatibilityBoundary` middleware (THINKING_* ->
// REASONING_*, legacy nulls dropped), `enforceEvents` (unrecognised events dropped, the zod
// schema of each known event), `transformChunks` (CHUNK expansion per owner lane) and
// `verifyEvents`. SSE files are framed by the client's own `parseSSEStream`, as `HttpAgent`
// does; JSON arrays, JSON lines and `{"name", "stream": [...]}` fixtures have no reader in the
// client, so they are split here the way recite splits them, and each fixture is one stream.
//
// `index` is the position of the rejected event in the expanded event list recite numbers its
// findings by: chunks expanded as the client expands them, an event the client drops as
// unrecognised still counted in place. For an event the client rejects before verification (a
// chunk without its id, a schema error) it is the position that event's first expanded event
// would take. `source_index` is the event's position among the events on the wire.
//
// The packages come from the cache install.sh fills: $RECITE_SDK_CACHE/agui-js, by default
// ${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk/agui-js.

import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

// The client's transform and compatibility warnings go to stderr; the verdict is what counts.
process.env.SUPPRESS_TRANSFORMATION_WARNINGS ??= "1";

const cacheRoot =
  process.env.RECITE_SDK_CACHE ??
  path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "recite-sdk");
const jsDir = path.join(cacheRoot, "agui-js");
const require = createRequire(path.join(jsDir, "package.json"));
let client, core, rxjs, clientVersion;
try {
  client = require("@ag-ui/client");
  core = require("@ag-ui/core");
  rxjs = require("rxjs");
  clientVersion = require("@ag-ui/client/package.json").version;
} catch (e) {
  console.error(`verify.mjs: @ag-ui/client is not installed in ${jsDir} (run tests/sdk/agui/install.sh): ${e.message}`);
  process.exit(3);
}
const { from, Subject } = rxjs;
const { map, tap, catchError } = require("rxjs/operators");

/** Tags an error with the first stage it passed through, so the report says who rejected. */
const stage = (name) => catchError((err) => {
  if (err && typeof err === "object" && err.aguiStage === undefined) err.aguiStage = name;
  throw err;
});

/** The wire events of an SSE file, framed by the client's parser. */
function sseEvents(bytes) {
  return new Promise((resolve) => {
    const events = [];
    // The parser subscribes to its source at once, so the bytes go in after we listen.
    const http = new Subject();
    client.parseSSEStream(http).subscribe({
      next: (e) => events.push(e),
      error: (err) => resolve({ events, error: err }),
      complete: () => resolve({ events }),
    });
    http.next({ type: "headers", status: 200, headers: new Headers({ "content-type": "text/event-stream" }) });
    http.next({ type: "data", data: new Uint8Array(bytes) });
    http.complete();
  });
}

/**
 * Splits a file into streams of wire events, or says why it cannot. `lenient` applies the
 * tolerances recite has on purpose, each named in `applied` when it changed anything.
 */
async function streamsOf(file, bytes, lenient, applied) {
  let text = bytes.toString("utf8");
  const trimmed = text.replace(/^\uFEFF/, "").trimStart();
  const looksSse = /\.sse$/i.test(file) || /^(data:|:|event:|id:|retry:)/m.test(trimmed.split("\n", 1)[0]);
  if (looksSse) {
    // SSE allows CRLF and CR line ends; the client's parser splits on "\n\n" only.
    if (lenient && text.includes("\r")) {
      text = text.replace(/\r\n?/g, "\n");
      bytes = Buffer.from(text, "utf8");
      applied.add("sse-crlf");
    }
    const { events, error } = await sseEvents(bytes);
    if (error) return { framing: "sse", error: `SSE frame ${events.length}: ${error.message}`, after: events.length };
    return { framing: "sse", streams: [events] };
  }
  let doc;
  let whole = true;
  try {
    doc = JSON.parse(trimmed);
  } catch (e) {
    whole = false;
    if (trimmed.startsWith("[")) return { framing: "json-array", error: e.message, after: 0 };
  }
  if (whole) {
    const fixtureStream = (v) =>
      v && typeof v === "object" && !Array.isArray(v) && !("type" in v)
        ? (Array.isArray(v.stream) ? v.stream : Array.isArray(v.events) ? v.events : undefined)
        : undefined;
    if (Array.isArray(doc)) {
      const fixtures = doc.map(fixtureStream);
      if (doc.length > 0 && fixtures.every((s) => s !== undefined)) return { framing: "fixtures", streams: fixtures };
      return { framing: "json-array", streams: [doc] };
    }
    const single = fixtureStream(doc);
    if (single !== undefined) return { framing: "fixtures", streams: [single] };
    return { framing: "json", streams: [[doc]] };
  }
  const events = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    try {
      events.push(JSON.parse(line));
    } catch (e) {
      // recite reports a line that is not JSON (input/malformed) and reads on.
      if (lenient) {
        applied.add("damaged-lines");
        continue;
      }
      return { framing: "json-lines", error: `line ${i + 1}: ${e.message}`, after: events.length };
    }
  }
  return { framing: "json-lines", streams: [events] };
}

/**
 * How many events recite numbers for a stream: the client's chunk expansion without
 * verification, unrecognised events kept. Only used to offset the next fixture in a file.
 */
function expandedLength(events) {
  let n = 0;
  const boundary = new client.CompatibilityBoundary();
  from(events)
    .pipe(map((e) => boundary["transformEvent"](e)), client.transformChunks())
    .subscribe({ next: () => n++, error: () => {} });
  return Math.max(n, events.length);
}

/** One line for an error; a zod error lists its issues by path. */
function messageOf(err) {
  if (Array.isArray(err?.issues)) {
    return "schema: " + err.issues.map((i) => `${i.path.length ? "/" + i.path.join("/") : "/"}: ${i.message}`).join("; ");
  }
  return String(err?.message ?? err).split("\n")[0];
}

/**
 * recite reads an explicit `null` on an optional field as the field left out; the client
 * rejects it (bar three legacy fields its CompatibilityBoundary drops). core's own
 * `omitOptionalNulls` is the tolerance.
 */
function omitNulls(event, applied) {
  const out = core.omitOptionalNulls(event, "Event");
  if (out !== event) applied.add("explicit-null");
  return out;
}

/** Runs one stream through the client's pipeline; resolves to its verdict. */
function verifyStream(events, offset, lenient, applied) {
  return new Promise((resolve) => {
    const boundary = new client.CompatibilityBoundary();
    let source = -1; // wire index of the event being processed
    const passedEnforce = new Set();
    const entered = []; // wire index of each event that reached verifyEvents
    const droppedBefore = (limit) => {
      let n = 0;
      for (let i = 0; i < limit; i++) if (!passedEnforce.has(i)) n++;
      return n;
    };
    from(events)
      .pipe(
        map((e, i) => ((source = i), lenient ? omitNulls(e, applied) : e)),
        map((e) => boundary["transformEvent"](e)),
        stage("boundary"),
        client.enforceEvents(),
        tap(() => passedEnforce.add(source)),
        stage("enforce"),
        client.transformChunks(),
        stage("transform"),
        tap(() => entered.push(source)),
        client.verifyEvents(),
        stage("verify"),
      )
      .subscribe({
        error: (err) => {
          const verify = err.aguiStage === "verify";
          // A verify rejection is the last event that reached it; anything earlier rejects the
          // wire event being processed, which takes the next position.
          const position = verify ? entered.length - 1 : entered.length;
          const wire = events[source];
          resolve({
            verdict: "rejected",
            index: offset + position + droppedBefore(source),
            source_index: source,
            stage: err.aguiStage ?? "unknown",
            type: wire && typeof wire === "object" ? wire.type ?? null : null,
            message: messageOf(err),
          });
        },
        complete: () => resolve({ verdict: "accepted", verified: entered.length }),
      });
  });
}

/** The client's verdict on a file, strict or with recite's tolerances. */
async function verdictOf(file, bytes, lenient) {
  const applied = new Set();
  const out = {};
  const split = await streamsOf(file, bytes, lenient, applied);
  out.framing = split.framing;
  if (split.error !== undefined) {
    return { ...out, verdict: "unreadable", message: split.error, events_read: split.after, applied };
  }
  const streams = [];
  let offset = 0;
  for (const events of split.streams) {
    const v = await verifyStream(events, offset, lenient, applied);
    streams.push({ offset, events: events.length, ...v });
    offset += expandedLength(events);
  }
  const first = streams.find((s) => s.verdict === "rejected");
  if (!first) return { ...out, verdict: "accepted", streams, applied };
  const { verdict, index, source_index, stage: st, type, message } = first;
  return { ...out, verdict, index, source_index, stage: st, type, message, streams, applied };
}

/**
 * The strict verdict; and, when one of recite's tolerances changes the input, the verdict
 * with them applied under `lenient` (what recite's own stream findings must agree with).
 */
async function verifyFile(file) {
  const head = { file, client: `@ag-ui/client@${clientVersion}` };
  let bytes;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    return { ...head, verdict: "unreadable", message: e.message };
  }
  const { applied: _none, ...strict } = await verdictOf(file, bytes, false);
  const { applied, ...lenient } = await verdictOf(file, bytes, true);
  const same = lenient.verdict === strict.verdict && lenient.index === strict.index;
  if (applied.size === 0 || same) return { ...head, ...strict };
  return { ...head, ...strict, lenient: { ...lenient, applied: [...applied] } };
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node verify.mjs FILE...");
  process.exit(2);
}
for (const file of files) console.log(JSON.stringify(await verifyFile(file)));
