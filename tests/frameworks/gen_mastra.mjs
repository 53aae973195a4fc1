#!/usr/bin/env node
// Mastra behind @ag-ui/mastra: a Mastra Agent with one tool, wrapped as an AG-UI agent by
// MastraAgent, its events encoded by @ag-ui/encoder's EventEncoder as an HTTP handler writes
// them (SSE). The model is the AI SDK's MockLanguageModelV3 (`ai/test`), scripted: a tool call,
// then the answer's text. The tool returns
//   correct, misquote  an object {result, citation}
//   wrong-number       a JSON string of {result, citation}
//   wrong-base         an object {result, citation: [citation Part]} (the citation list form)
//
//   node gen_mastra.mjs OUT_DIR NODE_MODULES
import { createRequire } from "node:module";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const [out, nodeModules] = process.argv.slice(2);
const require = createRequire(path.join(nodeModules, "package.json"));
const here = path.dirname(new URL(import.meta.url).pathname);
const repo = path.resolve(here, "../..");
const scenario = JSON.parse(readFileSync(path.join(repo, "tests/sdk/agui/scenario.json"), "utf8"));
const runs = JSON.parse(readFileSync(path.join(here, "runs.json"), "utf8"));

const { Agent } = require("@mastra/core/agent");
const { createTool } = require("@mastra/core/tools");
const { MockLanguageModelV3, simulateReadableStream } = require("ai/test");
const { MastraAgent } = require("@ag-ui/mastra");
const { EventEncoder } = require("@ag-ui/encoder");
const { z } = require("zod");

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 10, text: 10, reasoning: undefined },
};

function model(answer) {
  return new MockLanguageModelV3({
    doStream: async ({ prompt }) => {
      const answered = prompt.some((m) => m.role === "tool");
      const chunks = answered
        ? [
            { type: "stream-start", warnings: [] },
            { type: "text-start", id: "answer" },
            ...answer.split(" ").map((w, i) => ({ type: "text-delta", id: "answer", delta: i ? " " + w : w })),
            { type: "text-end", id: "answer" },
            { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
          ]
        : [
            { type: "stream-start", warnings: [] },
            { type: "tool-call", toolCallId: "call_funnel_1", toolName: runs.tool, input: JSON.stringify({ wave: "W6" }) },
            { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage },
          ];
      return { stream: simulateReadableStream({ chunks, initialDelayInMs: null, chunkDelayInMs: null }) };
    },
  });
}

function agent(run) {
  const r = runs.runs[run];
  const tool = createTool({
    id: runs.tool,
    description: runs.description,
    inputSchema: z.object({ wave: z.string() }),
    execute: async () => {
      const payload = { result: r.result, citation: r.citation };
      if (run === "wrong-number") return JSON.stringify(payload);
      if (run === "wrong-base") return { result: r.result, citation: [{ mediaType: scenario.citationMediaType, data: r.citation }] };
      return payload;
    },
  });
  return new Agent({
    id: "versant",
    name: "versant",
    instructions: "Answer from the versant_funnel tool.",
    model: model(r.answer),
    tools: { [runs.tool]: tool },
  });
}

async function one(run) {
  const ag = new MastraAgent({ agent: agent(run), resourceId: "analyst" });
  const encoder = new EventEncoder({ accept: "text/event-stream" });
  const input = {
    threadId: `thread-${run}`,
    runId: `run-${run}`,
    state: {},
    messages: [{ id: "user-1", role: "user", content: runs.question }],
    tools: [],
    context: [],
    forwardedProps: {},
  };
  let body = "";
  await new Promise((resolve, reject) => {
    ag.run(input).subscribe({ next: (e) => (body += encoder.encode(e)), error: reject, complete: resolve });
  });
  return body;
}

const shapes = {
  correct: "an object {result, citation}: TOOL_CALL_RESULT.content is one JSON string",
  misquote: "an object {result, citation}: TOOL_CALL_RESULT.content is one JSON string",
  "wrong-number": "a JSON string {result, citation}: TOOL_CALL_RESULT.content is that string JSON-encoded again",
  "wrong-base": "an object {result, citation: [citation Part]}: TOOL_CALL_RESULT.content is one JSON string",
};

mkdirSync(out, { recursive: true });
const files = {};
for (const run of Object.keys(runs.runs)) {
  const data = await one(run);
  writeFileSync(path.join(out, `${run}.sse`), data);
  console.error(`  mastra/${run}.sse: ${Buffer.byteLength(data)} bytes`);
  files[`${run}.sse`] = { run, protocol: "ag-ui", shape: shapes[run] };
}
const v = (p) => require(`${p}/package.json`).version;
const versions = {
  "@ag-ui/mastra": v("@ag-ui/mastra"),
  "@mastra/core": v("@mastra/core"),
  ai: v("ai"),
  "@ag-ui/encoder": v("@ag-ui/encoder"),
  "@ag-ui/core": v("@ag-ui/core"),
  node: process.versions.node,
};
writeFileSync(path.join(out, "versions.json"), JSON.stringify({ framework: "Mastra (@ag-ui/mastra)", versions, files }, null, 2) + "\n");
