#!/usr/bin/env node
// Writes the AG-UI entries of tests/fixtures/sdk/manifest.json: what each SDK-written run must
// settle to, claim by claim. Entries for other files (the A2A corpus) are kept as they are.
//
//   node manifest.mjs REPO_ROOT
//
// A claim is located by the index of its TOOL_CALL_RESULT in the expanded event list (chunks
// expanded as @ag-ui/client 1.0 expands them), which is where recite's locator points.

import { createRequire } from "node:module";
import { readFileSync, writeFileSync, existsSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const cacheRoot =
  process.env.RECITE_SDK_CACHE ??
  path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "recite-sdk");
const require = createRequire(path.join(cacheRoot, "agui-js", "package.json"));
const client = require("@ag-ui/client");
const { from } = require("rxjs");
const { map, toArray } = require("rxjs/operators");
process.env.SUPPRESS_TRANSFORMATION_WARNINGS ??= "1";

// What each run must settle to, by the tool call whose result carries the claim.
const CLAIMS = {
  "versant-run": [
    {
      tool_call_id: "call_funnel_w6", period: "W6 (April 2026)", column: "s14r5", verdict: "REPRODUCED",
      why: "funnel among aware adults (n 4654) as A2A-style data Parts in a JSON string, as recite reads AG-UI today",
    },
    {
      tool_call_id: "call_consider_all_w6", period: "W6 (April 2026)", column: "s14r5", verdict: "REPRODUCED",
      why: "\"29.8%\" considered among all adults (n 6250), a numeric string in a 1.0 text part; the tool call streamed as TOOL_CALL_CHUNKs; the citation a 1.0 document part, base64 in source.value",
    },
    {
      tool_call_id: "call_consider_recheck", period: "W6 (April 2026)", column: "s14r5", verdict: "DISCREPANT",
      why: "{\"Considered\": \"47%\"} is W5's value beside the W6 citation (44.2%): a wrong number must never pass",
    },
    {
      tool_call_id: "call_consider_recheck_2", period: "W6 (April 2026)", column: "s14r5", verdict: "DISCREPANT",
      why: "the same wrong claim in 1.0 content parts, its citation a base64 document part",
    },
    {
      tool_call_id: "call_nps_w6", period: "W6 (April 2026)", column: "q20r5", verdict: "REPRODUCED",
      why: "NPS from a subagent (events tagged subagentRunId, a text chunk stream in the subagent's lane, a step named like the parent's open one)",
    },
  ],
  "moca-run": [],
  "interrupt-run": [],
  "error-run": [],
  "thinking-legacy": [],
};

const FRAMINGS = { ".sse": "sse", ".json": "json-array", ".jsonl": "json-lines" };

/** The wire events of a corpus file (the encoder's payloads, one per frame or line). */
function wireEvents(text, ext) {
  if (ext === ".json") return JSON.parse(text);
  if (ext === ".jsonl") return text.trim().split("\n").map((l) => JSON.parse(l));
  return text.split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => JSON.parse(f.slice(6)));
}

/** The events as the client expands them (chunks, THINKING_*), synchronously. */
function expanded(events) {
  let out;
  const boundary = new client.CompatibilityBoundary();
  from(events)
    .pipe(map((e) => boundary["transformEvent"](e)), client.transformChunks(), toArray())
    .subscribe((all) => (out = all));
  return out;
}

const root = process.argv[2];
if (!root) {
  console.error("usage: node manifest.mjs REPO_ROOT");
  process.exit(2);
}
const corpus = path.join(root, "tests/fixtures/sdk/agui");
const versions = JSON.parse(readFileSync(path.join(corpus, "versions.json"), "utf8"));
const SDKS = {
  py: { sdk: "ag-ui-protocol", sdk_version: versions.py["ag-ui-protocol"], written_by: "ag_ui.core event models, ag_ui.encoder.EventEncoder" },
  js: { sdk: "@ag-ui/encoder", sdk_version: versions.js["@ag-ui/encoder"], written_by: "@ag-ui/core EventSchema.parse, @ag-ui/encoder EventEncoder" },
};

const entries = [];
for (const dir of ["py", "js"]) {
  for (const name of readdirSync(path.join(corpus, dir)).sort()) {
    const ext = path.extname(name);
    const run = path.basename(name, ext);
    const claims = CLAIMS[run];
    if (claims === undefined) throw new Error(`${dir}/${name}: no expected settlement in manifest.mjs`);
    const file = `tests/fixtures/sdk/agui/${dir}/${name}`;
    const events = expanded(wireEvents(readFileSync(path.join(root, file), "utf8"), ext));
    const verdicts = {};
    const located = claims.map(({ tool_call_id, ...rest }) => {
      const at = events.findIndex((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === tool_call_id);
      if (at < 0) throw new Error(`${file}: no TOOL_CALL_RESULT for ${tool_call_id}`);
      verdicts[rest.verdict] = (verdicts[rest.verdict] ?? 0) + 1;
      return { at: { event_index: at }, tool_call_id, ...rest };
    });
    entries.push({
      file,
      ...SDKS[dir],
      binding: "ag-ui-encoder",
      framing: FRAMINGS[ext],
      protocol: "ag-ui-1.0",
      verdicts,
      claims: located,
    });
  }
}

// The stream-rule cases hold no claims; each states the reference client's verdict instead.
const streamVerdicts = JSON.parse(readFileSync(path.join(path.dirname(new URL(import.meta.url).pathname), "streams.json"), "utf8"));
for (const name of readdirSync(path.join(corpus, "streams")).sort()) {
  const stream = streamVerdicts[name];
  if (stream === undefined) throw new Error(`streams/${name}: not in streams.json`);
  entries.push({
    file: `tests/fixtures/sdk/agui/streams/${name}`,
    ...SDKS.js,
    binding: "ag-ui-encoder",
    framing: "sse",
    protocol: "ag-ui-1.0",
    stream,
    verdicts: {},
    claims: [],
  });
}

const manifestPath = path.join(root, "tests/fixtures/sdk/manifest.json");
const kept = existsSync(manifestPath)
  ? JSON.parse(readFileSync(manifestPath, "utf8")).filter((e) => !e.file.startsWith("tests/fixtures/sdk/agui/"))
  : [];
writeFileSync(manifestPath, JSON.stringify([...kept, ...entries], null, 2) + "\n");
console.log(`${entries.length} AG-UI entries in ${path.relative(root, manifestPath)}`);
