#!/usr/bin/env node
// The official A2A JavaScript SDK (@a2a-js/sdk, A2A protocol v1.0) against `recite serve`: a
// second client, independent of the Python one (tests/serve/clients.py).
//
//   node tests/serve/a2a-js/client.mjs BASE CITATION TRANSCRIPT...
//
// BASE is where the server listens (http://HOST:PORT); the token, when the server wants one, is
// read from $RECITE_A2A_TOKEN (not an argument: others can read a command line). For each
// binding the card offers that the SDK speaks (JSON-RPC, HTTP+JSON), chosen through the SDK's
// card resolver and client factory: send a message carrying CITATION as a data Part, get the
// task back by id, stream a message carrying each TRANSCRIPT as a file Part, get that task
// too, stream a prose message (which the agent rejects), and the citation with its claim as a
// sentence (which it settles). Prints one JSON object: per
// binding, the states seen, the report data Parts (in artifact order) and the raw events as the
// SDK's ProtoJSON; any error an SDK call threw, by step, under `errors`.
//
// The packages come from the cache install.sh fills: $RECITE_SDK_CACHE/a2a-js, by default
// ${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk/a2a-js. Exit 3 when they are not installed.

import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const REPORT = "application/vnd.recite.report+json";
const CITATION = "application/vnd.upperhand.citations+json";
const BINDINGS = ["JSONRPC", "HTTP+JSON"];
// Per call: a settled transcript takes seconds, a cold data layer longer.
const TIMEOUT_MS = 300_000;

const cacheRoot =
  process.env.RECITE_SDK_CACHE ??
  path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "recite-sdk");
const jsDir = path.join(cacheRoot, "a2a-js");
const require = createRequire(path.join(jsDir, "package.json"));
let sdk, client, version;
try {
  sdk = require("@a2a-js/sdk");
  client = require("@a2a-js/sdk/client");
  // The package's exports do not include its package.json: read it beside the entry point.
  const main = require.resolve("@a2a-js/sdk");
  version = JSON.parse(readFileSync(path.join(main.slice(0, main.lastIndexOf("/dist/")), "package.json"), "utf8")).version;
} catch (e) {
  console.error(`client.mjs: @a2a-js/sdk is not installed in ${jsDir} (run tests/serve/a2a-js/install.sh): ${e.message}`);
  process.exit(3);
}
const { AgentCard, Role, StreamResponse, Task, Message, taskStateToJSON } = sdk;
const {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  createAuthenticatingFetchWithRetry,
} = client;

const [base, citationPath, ...transcriptPaths] = process.argv.slice(2);
if (!base || !citationPath || transcriptPaths.length === 0) {
  console.error("usage: client.mjs BASE CITATION TRANSCRIPT...");
  process.exit(2);
}

// The bearer token on every request, through the SDK's own authenticating fetch.
const token = process.env.RECITE_A2A_TOKEN;
const fetchImpl = token
  ? createAuthenticatingFetchWithRetry(fetch, {
      headers: async () => ({ Authorization: `Bearer ${token}` }),
      shouldRetryWithHeaders: async () => undefined,
    })
  : fetch;

/** A Part as the SDK types it (the oneof as `{$case, value}`). */
const part = (content, mediaType, filename = "") => ({ content, mediaType, filename, metadata: undefined });

/** A user message of these parts. */
const message = (messageId, parts) => ({
  messageId,
  contextId: "",
  taskId: "",
  role: Role.ROLE_USER,
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

const request = (m) => ({ tenant: "", message: m, configuration: undefined, metadata: undefined });
const options = () => ({ signal: AbortSignal.timeout(TIMEOUT_MS) });

/** What a list of artifacts holds: names in order, the report and citation data Parts. */
function contents(artifacts) {
  const out = { artifacts: [], reports: [], citations: [] };
  for (const a of artifacts ?? []) {
    out.artifacts.push(a.name);
    for (const p of a.parts ?? []) {
      if (p.content?.$case !== "data") continue;
      if (p.mediaType === REPORT) out.reports.push(p.content.value);
      if (p.mediaType === CITATION) out.citations.push(p.content.value);
    }
  }
  return out;
}

/** A Task as received: its id, state, what its artifacts hold, and the task as ProtoJSON. */
const task = (t) => ({
  id: t.id,
  contextId: t.contextId,
  state: taskStateToJSON(t.status?.state ?? 0),
  ...contents(t.artifacts),
  task: Task.toJSON(t),
});

/** The events of a stream: the states in order (task snapshots' and status updates'), the
 * artifacts streamed, and the events as ProtoJSON. */
async function stream(c, req) {
  const out = { states: [], artifacts: [], reports: [], citations: [], taskIds: [], events: [] };
  for await (const ev of c.sendMessageStream(req, options())) {
    out.events.push(StreamResponse.toJSON(ev));
    const { $case, value } = ev.payload ?? {};
    if ($case === "task") {
      out.states.push(taskStateToJSON(value.status?.state ?? 0));
      out.taskIds.push(value.id);
    } else if ($case === "statusUpdate") {
      out.states.push(taskStateToJSON(value.status?.state ?? 0));
      out.taskIds.push(value.taskId);
    } else if ($case === "artifactUpdate") {
      const got = contents([value.artifact]);
      out.artifacts.push(...got.artifacts);
      out.reports.push(...got.reports);
      out.citations.push(...got.citations);
      out.taskIds.push(value.taskId);
    } else if ($case === "message") {
      out.states.push("MESSAGE");
    }
  }
  out.taskIds = [...new Set(out.taskIds)];
  return out;
}

const out = { sdk: { name: "@a2a-js/sdk", version }, bindings: {}, errors: {} };
/** Runs one step; what it threw is recorded under `errors` and the run goes on. */
async function step(name, f) {
  try {
    return await f();
  } catch (e) {
    out.errors[name] = `${e?.name ?? "Error"}: ${e?.message ?? e}${e?.cause ? ` (cause: ${e.cause.message ?? e.cause})` : ""}`;
    return undefined;
  }
}

const cited = JSON.parse(readFileSync(citationPath, "utf8"));
const transcripts = transcriptPaths.map((p) => readFileSync(p));
const mediaOf = (p) => (p.endsWith(".sse") ? "text/event-stream" : p.endsWith(".jsonl") ? "application/jsonl" : "application/json");

const resolver = new DefaultAgentCardResolver({ fetchImpl });
const card = await step("card", () => resolver.resolve(base));
if (card) {
  out.card = AgentCard.toJSON(card);
  for (const binding of BINDINGS) {
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
        preferredTransports: [binding],
        cardResolver: resolver,
      }),
    );
    const c = await step(`client:${binding}`, () => factory.createFromAgentCard(card));
    if (!c) continue;
    const b = (out.bindings[binding] = {
      protocol: { name: c.transport.protocolName, version: c.transport.protocolVersion },
    });
    const sent = await step(`send:${binding}`, () =>
      c.sendMessage(request(message(`verify-${binding}`, [part({ $case: "data", value: cited }, CITATION)])), options()),
    );
    if (sent && "status" in sent) {
      b.send = task(sent);
      const got = await step(`get:${binding}`, () => c.getTask({ tenant: "", id: sent.id }, options()));
      if (got) b.get = task(got);
    } else if (sent) {
      b.send = { message: Message.toJSON(sent) };
    }
    const parts = transcripts.map((bytes, i) =>
      part({ $case: "raw", value: bytes }, mediaOf(transcriptPaths[i]), "-"),
    );
    b.stream = await step(`stream:${binding}`, () => stream(c, request(message(`check-${binding}`, parts))));
    const streamedId = b.stream?.taskIds?.[0];
    if (streamedId) {
      const got = await step(`get-streamed:${binding}`, () => c.getTask({ tenant: "", id: streamedId }, options()));
      if (got) b.getStreamed = task(got);
    }
    const prose = [part({ $case: "text", value: "is 44% right?" }, "text/plain")];
    b.prose = await step(`prose:${binding}`, () => stream(c, request(message(`prose-${binding}`, prose))));
    // The claim as a sentence beside its citation (a data Part): the sentence's numbers are
    // settled against the citation.
    const bare = cited && typeof cited === "object" && "citation" in cited ? cited.citation : cited;
    for (const [label, sentence] of [
      ["said44", "44% of aware adults considered Versant in W6"],
      ["said47", "47% of aware adults considered Versant in W6"],
    ]) {
      const said = [part({ $case: "data", value: bare }, CITATION), part({ $case: "text", value: sentence }, "text/plain")];
      b[label] = await step(`${label}:${binding}`, () => stream(c, request(message(`${label}-${binding}`, said))));
    }
  }
}
process.stdout.write(JSON.stringify(out) + "\n");
