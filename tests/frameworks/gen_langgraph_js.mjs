#!/usr/bin/env node
// LangGraph behind @ag-ui/langgraph (npm): its LangGraphAgent is a client of a LangGraph API
// server, so gen.sh starts one on loopback (`langgraph dev --no-reload`, the in-memory server
// of langgraph-cli[inmem]) serving langgraph_server/graphs.py: the same scripted graphs as
// gen_langgraph.py, one graph per run. The agent's events are encoded by @ag-ui/encoder as an
// HTTP handler writes them (SSE).
//
//   node gen_langgraph_js.mjs OUT_DIR NODE_MODULES DEPLOYMENT_URL SERVER_VERSIONS_JSON
import { createRequire } from "node:module";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createHash } from "node:crypto";

const [out, nodeModules, deploymentUrl, serverVersions] = process.argv.slice(2);
const require = createRequire(path.join(nodeModules, "package.json"));
const here = path.dirname(new URL(import.meta.url).pathname);
const runs = JSON.parse(readFileSync(path.join(here, "runs.json"), "utf8"));
const { LangGraphAgent } = require("@ag-ui/langgraph");
const { EventEncoder } = require("@ag-ui/encoder");

/** A fixed UUID per run: the server takes only UUIDs for thread ids. */
function uuidFor(name) {
  const h = createHash("sha256").update(name).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

async function one(run) {
  const agent = new LangGraphAgent({ deploymentUrl, graphId: run });
  const encoder = new EventEncoder({ accept: "text/event-stream" });
  const input = {
    threadId: uuidFor(`thread-${run}`),
    runId: `run-${run}`,
    state: {},
    messages: [{ id: "user-1", role: "user", content: runs.question }],
    tools: [],
    context: [],
    forwardedProps: {},
  };
  let body = "";
  await new Promise((resolve, reject) => {
    agent.run(input).subscribe({ next: (e) => (body += encoder.encode(e)), error: reject, complete: resolve });
  });
  return body;
}

const shapes = JSON.parse(readFileSync(path.join(here, "langgraph_server", "shapes.json"), "utf8"));
mkdirSync(out, { recursive: true });
const files = {};
for (const run of Object.keys(runs.runs)) {
  const data = await one(run);
  writeFileSync(path.join(out, `${run}.sse`), data);
  console.error(`  langgraph-js/${run}.sse: ${Buffer.byteLength(data)} bytes`);
  files[`${run}.sse`] = { run, protocol: "ag-ui", shape: shapes[run] };
}
const v = (p) => require(`${p}/package.json`).version;
const versions = {
  "@ag-ui/langgraph": v("@ag-ui/langgraph"),
  "@langchain/langgraph-sdk": v("@langchain/langgraph-sdk"),
  "@ag-ui/encoder": v("@ag-ui/encoder"),
  ...JSON.parse(serverVersions || "{}"),
  node: process.versions.node,
};
const framework = "LangGraph (@ag-ui/langgraph, LangGraph API server)";
writeFileSync(path.join(out, "versions.json"), JSON.stringify({ framework, versions, files }, null, 2) + "\n");
