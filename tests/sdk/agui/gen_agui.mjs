#!/usr/bin/env node
// Writes AG-UI 1.0 runs with the TypeScript SDK: every event is checked against @ag-ui/core's
// own schema (`EventSchema.parse`) and written with @ag-ui/encoder's `EventEncoder`, in three
// framings (SSE as the encoder writes it, a JSON array and JSON lines of the encoder's
// payloads). Also writes the legacy THINKING_* run (1.0 has no type for those events; the
// encoder writes them as they are) and the stream-rule cases: each `bad-*` stream breaks one
// ordering rule of the 1.0 client's verifyEvents, each `ok-*` stream is a valid shape a
// stricter reader might refuse. EXPECT_JSON records where the client must reject each one.
//
//   node gen_agui.mjs OUT_DIR STREAMS_DIR EXPECT_JSON
//
// Run through gen.sh, which installs the pinned packages; scenario.json holds the data the
// Python generator shares.

import { createRequire } from "node:module";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const cacheRoot =
  process.env.RECITE_SDK_CACHE ??
  path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "recite-sdk");
const require = createRequire(path.join(cacheRoot, "agui-js", "package.json"));
const { EventSchema } = require("@ag-ui/core/schemas");
const { EventEncoder } = require("@ag-ui/encoder");

const DATA = JSON.parse(readFileSync(path.join(here, "scenario.json"), "utf8"));
const CIT = DATA.citationMediaType;
const T0 = 1776420000000;
const encoder = new EventEncoder();

/** Collects events, stamping each with a deterministic timestamp and checking its schema. */
function run({ legacy = false } = {}) {
  const events = [];
  const e = (type, fields = {}) => {
    const event = { type, timestamp: T0 + 137 * events.length, ...fields };
    // THINKING_* left the 1.0 schema; everything else must be a valid 1.0 event.
    events.push(legacy && type.startsWith("THINKING_") ? event : EventSchema.parse(event));
  };
  e.events = events;
  return e;
}

const kindDataParts = (claim) =>
  JSON.stringify([
    { kind: "data", data: claim.result },
    { kind: "data", data: claim.citation, metadata: { mimeType: CIT } },
  ]);
const b64 = (v) => Buffer.from(JSON.stringify(v)).toString("base64");

function versantRun() {
  const e = run();
  const thread = "thr_versant_0412";
  const runId = "run_sdk_js_01";
  const question = { id: "msg_user_01", role: "user", content: [{ type: "text", text: DATA.question }] };
  e("RUN_STARTED", {
    threadId: thread, runId, protocolVersion: "1.0",
    input: { threadId: thread, runId, state: {}, messages: [question], tools: [], context: [], forwardedProps: {} },
  });
  e("STEP_STARTED", { stepName: "plan" });
  e("REASONING_START", { messageId: "rs_01" });
  e("REASONING_MESSAGE_START", { messageId: "rs_01_m", role: "reasoning" });
  e("REASONING_MESSAGE_CONTENT", { messageId: "rs_01_m", delta: "Three W6 figures: funnel among aware, " });
  e("REASONING_MESSAGE_CONTENT", { messageId: "rs_01_m", delta: "consideration among all adults, NPS." });
  e("REASONING_MESSAGE_END", { messageId: "rs_01_m" });
  e("REASONING_ENCRYPTED_VALUE", { subtype: "message", entityId: "rs_01_m", encryptedValue: "gAAAAB-opaque" });
  e("REASONING_END", { messageId: "rs_01" });
  e("TEXT_MESSAGE_START", { messageId: "msg_plan_01", role: "assistant" });
  e("TEXT_MESSAGE_CONTENT", { messageId: "msg_plan_01", delta: "I'll pull three W6 (April 2026) figures for Versant " });
  e("TEXT_MESSAGE_CONTENT", { messageId: "msg_plan_01", delta: "from the Mega Tracker, weighted by main_weight." });
  e("TEXT_MESSAGE_END", { messageId: "msg_plan_01" });
  e("STEP_FINISHED", { stepName: "plan" });
  e("STATE_SNAPSHOT", { snapshot: { study: "Versant Mega Tracker", queries: [] } });
  e("STEP_STARTED", { stepName: "query" });
  e("ACTIVITY_SNAPSHOT", {
    messageId: "act_plan_01", activityType: "PLAN",
    content: { steps: [{ label: "funnel", done: false }, { label: "nps", done: false }] },
  });

  // A tool call in full events; its result carries the citation as data Parts in a string.
  e("TOOL_CALL_START", { toolCallId: "call_funnel_w6", toolCallName: "extract_funnel", parentMessageId: "msg_plan_01" });
  e("TOOL_CALL_ARGS", { toolCallId: "call_funnel_w6", delta: '{"column":"s14r5",' });
  e("TOOL_CALL_ARGS", { toolCallId: "call_funnel_w6", delta: '"base":"Adults 18-74, aware of brand"}' });
  e("TOOL_CALL_END", { toolCallId: "call_funnel_w6" });
  e("TOOL_CALL_RESULT", { messageId: "msg_tool_01", toolCallId: "call_funnel_w6", role: "tool", content: kindDataParts(DATA.funnel) });

  // A tool call in chunks; its result is a 1.0 content-part array with the citation as a
  // base64 document part.
  e("TOOL_CALL_CHUNK", {
    toolCallId: "call_consider_all_w6", toolCallName: "extract_funnel", parentMessageId: "msg_plan_01",
    delta: '{"column":"s14r5",',
  });
  e("TOOL_CALL_CHUNK", { delta: '"base":"All adults 18-74"}' });
  const claim = DATA.consideredAll;
  e("TOOL_CALL_RESULT", {
    messageId: "msg_tool_02", toolCallId: "call_consider_all_w6", role: "tool",
    content: [
      { type: "text", text: JSON.stringify(claim.result) },
      { type: "document", id: "cite_consider_all_w6", source: { type: "data", value: b64(claim.citation), mimeType: CIT } },
    ],
  });
  e("STATE_DELTA", { delta: [{ op: "add", path: "/queries/-", value: { column: "s14r5", period: "W6 (April 2026)" } }] });
  e("ACTIVITY_DELTA", { messageId: "act_plan_01", activityType: "PLAN", patch: [{ op: "replace", path: "/steps/0/done", value: true }] });

  // The wrong claim: W5's consideration beside the W6 citation.
  e("TOOL_CALL_START", { toolCallId: "call_consider_recheck", toolCallName: "extract_funnel", parentMessageId: "msg_plan_01" });
  e("TOOL_CALL_ARGS", { toolCallId: "call_consider_recheck", delta: '{"column":"s14r5","base":"All adults 18-74"}' });
  e("TOOL_CALL_END", { toolCallId: "call_consider_recheck" });
  e("TOOL_CALL_RESULT", { messageId: "msg_tool_03", toolCallId: "call_consider_recheck", role: "tool", content: kindDataParts(DATA.consideredWrong) });

  // The same wrong claim in 1.0 content parts, its citation a base64 document part.
  const wrong = DATA.consideredWrong;
  e("TOOL_CALL_START", { toolCallId: "call_consider_recheck_2", toolCallName: "extract_funnel", parentMessageId: "msg_plan_01" });
  e("TOOL_CALL_ARGS", { toolCallId: "call_consider_recheck_2", delta: '{"column":"s14r5","base":"All adults 18-74"}' });
  e("TOOL_CALL_END", { toolCallId: "call_consider_recheck_2" });
  e("TOOL_CALL_RESULT", {
    messageId: "msg_tool_03b", toolCallId: "call_consider_recheck_2", role: "tool",
    content: [
      { type: "text", text: JSON.stringify(wrong.result) },
      { type: "document", source: { type: "data", value: b64(wrong.citation), mimeType: CIT } },
    ],
  });

  // A subagent runs the NPS query, with a step of the same name as the parent's open one.
  e("TOOL_CALL_START", { toolCallId: "call_delegate_nps", toolCallName: "delegate", parentMessageId: "msg_plan_01" });
  e("TOOL_CALL_ARGS", { toolCallId: "call_delegate_nps", delta: '{"agent":"nps-analyst"}' });
  e("TOOL_CALL_END", { toolCallId: "call_delegate_nps" });
  const sub = "sub_nps_01";
  e("SUBAGENT_STARTED", {
    subagentRunId: sub, name: "nps-analyst", description: "Runs NPS queries",
    parentToolCallId: "call_delegate_nps", parentMessageId: "msg_plan_01",
  });
  e("STEP_STARTED", { stepName: "query", subagentRunId: sub });
  e("TEXT_MESSAGE_CHUNK", { messageId: "msg_sub_01", role: "assistant", delta: "Querying q20r5 ", subagentRunId: sub });
  e("TEXT_MESSAGE_CHUNK", { delta: "for W6.", subagentRunId: sub });
  e("REASONING_MESSAGE_CHUNK", { messageId: "rs_sub_01", delta: "NPS is promoters minus detractors.", subagentRunId: sub });
  e("TOOL_CALL_START", { toolCallId: "call_nps_w6", toolCallName: "extract_nps", parentMessageId: "msg_sub_01", subagentRunId: sub });
  e("TOOL_CALL_ARGS", { toolCallId: "call_nps_w6", delta: '{"column":"q20r5","base":"All adults 18-74"}', subagentRunId: sub });
  e("TOOL_CALL_END", { toolCallId: "call_nps_w6", subagentRunId: sub });
  e("TOOL_CALL_RESULT", { messageId: "msg_tool_04", toolCallId: "call_nps_w6", role: "tool", subagentRunId: sub, content: kindDataParts(DATA.nps) });
  e("STEP_FINISHED", { stepName: "query", subagentRunId: sub });
  e("SUBAGENT_FINISHED", { subagentRunId: sub, outcome: { type: "success" }, result: { NPS: -25.1 } });
  e("TOOL_CALL_RESULT", { messageId: "msg_tool_05", toolCallId: "call_delegate_nps", role: "tool", content: "nps-analyst finished" });
  e("STEP_FINISHED", { stepName: "query" });

  e("STEP_STARTED", { stepName: "answer" });
  e("TEXT_MESSAGE_CHUNK", {
    messageId: "msg_answer_01", role: "assistant",
    delta: "Among adults 18-74 aware of Versant in W6 (n = 4,654), 69.4% are familiar, ",
  });
  e("TEXT_MESSAGE_CHUNK", { delta: "44.2% have considered it, 26.8% purchased and 13.2% are loyal. " });
  e("TEXT_MESSAGE_CHUNK", { delta: "Across all adults 18-74 (n = 6,250), 29.8% have considered Versant; its NPS is -25.1." });
  e("STEP_FINISHED", { stepName: "answer" });
  e("MESSAGES_SNAPSHOT", {
    messages: [
      question,
      {
        id: "msg_plan_01", role: "assistant", content: "I'll pull three W6 (April 2026) figures.",
        toolCalls: [{ id: "call_funnel_w6", type: "function", function: { name: "extract_funnel", arguments: '{"column":"s14r5"}' } }],
      },
      { id: "msg_tool_05", role: "tool", toolCallId: "call_delegate_nps", content: [{ type: "text", text: "nps-analyst finished" }] },
      { id: "rs_01_m", role: "reasoning", content: "Three W6 figures." },
      { id: "act_plan_01", role: "activity", activityType: "PLAN", content: { steps: [] } },
    ],
  });
  e("RAW", { source: "openai.responses", event: { type: "response.completed", id: "resp_01" } });
  e("CUSTOM", { name: "versant.summary", value: { wave: "W6", figures: 3 } });
  e("RUN_FINISHED", { threadId: thread, runId, outcome: { type: "success" }, result: { answer: "msg_answer_01" } });
  return e.events;
}

function mocaRun() {
  const m = DATA.moca;
  const e = run();
  const thread = "thread-7";
  const runId = "run-sdk-js-moca";
  e("RUN_STARTED", {
    threadId: thread, runId,
    input: { threadId: thread, runId, messages: [{ id: "msg-user-1", role: "user", content: m.question }], tools: [], context: [], state: {}, forwardedProps: {} },
  });
  e("TOOL_CALL_START", { toolCallId: "call-1", toolCallName: "moca_search" });
  e("TOOL_CALL_ARGS", { toolCallId: "call-1", delta: m.searchArgs });
  e("TOOL_CALL_END", { toolCallId: "call-1" });
  e("TOOL_CALL_RESULT", { messageId: "msg-tool-1", toolCallId: "call-1", role: "tool", content: JSON.stringify(m.searchResult) });
  e("TEXT_MESSAGE_START", { messageId: "msg-answer-1", role: "assistant" });
  for (const delta of m.answer) e("TEXT_MESSAGE_CONTENT", { messageId: "msg-answer-1", delta });
  e("TEXT_MESSAGE_END", { messageId: "msg-answer-1" });
  e("CUSTOM", { name: "moca.citations", value: { version: 1, messageId: "msg-answer-1", computedAt: m.computedAt, citations: m.citations } });
  e("RUN_FINISHED", { threadId: thread, runId });
  return e.events;
}

function interruptRun() {
  const e = run();
  const thread = "thr_export_01";
  const empty = { tools: [], context: [], state: {}, forwardedProps: {} };
  e("RUN_STARTED", {
    threadId: thread, runId: "run_export_01",
    input: { threadId: thread, runId: "run_export_01", messages: [{ id: "msg_user_x", role: "user", content: "Export the W6 funnel." }], ...empty },
  });
  e("TEXT_MESSAGE_START", { messageId: "msg_x1" });
  e("TEXT_MESSAGE_CONTENT", { messageId: "msg_x1", delta: "Exporting needs your approval." });
  e("TEXT_MESSAGE_END", { messageId: "msg_x1" });
  e("TOOL_CALL_START", { toolCallId: "call_export", toolCallName: "export_table", parentMessageId: "msg_x1" });
  e("TOOL_CALL_ARGS", { toolCallId: "call_export", delta: '{"table":"versant_flat"}' });
  e("TOOL_CALL_END", { toolCallId: "call_export" });
  e("SUBAGENT_STARTED", { subagentRunId: "sub_export", name: "exporter", parentToolCallId: "call_export" });
  e("SUBAGENT_FINISHED", { subagentRunId: "sub_export", outcome: { type: "suspended", interruptIds: ["int_approve_01"] } });
  e("RUN_FINISHED", {
    threadId: thread, runId: "run_export_01",
    outcome: {
      type: "interrupt",
      interrupts: [{
        id: "int_approve_01", reason: "approval", message: "Export versant_flat?", toolCallId: "call_export",
        subagentRunId: "sub_export", responseSchema: { type: "object", properties: { ok: { type: "boolean" } } },
      }],
    },
  });
  e("RUN_STARTED", {
    threadId: thread, runId: "run_export_02", parentRunId: "run_export_01",
    input: { threadId: thread, runId: "run_export_02", messages: [], ...empty, resume: [{ interruptId: "int_approve_01", status: "resolved", payload: { ok: true } }] },
  });
  e("TOOL_CALL_RESULT", { messageId: "msg_tool_x", toolCallId: "call_export", role: "tool", content: "exported 6250 rows" });
  e("RUN_FINISHED", { threadId: thread, runId: "run_export_02", outcome: { type: "success" } });
  return e.events;
}

function errorRun() {
  const e = run();
  e("RUN_STARTED", { threadId: "thr_err_01", runId: "run_err_01" });
  e("STEP_STARTED", { stepName: "query" });
  e("SUBAGENT_STARTED", { subagentRunId: "sub_q", name: "querier" });
  e("TEXT_MESSAGE_START", { messageId: "msg_q1", subagentRunId: "sub_q" });
  e("TEXT_MESSAGE_CONTENT", { messageId: "msg_q1", delta: "Running the query.", subagentRunId: "sub_q" });
  e("TEXT_MESSAGE_END", { messageId: "msg_q1", subagentRunId: "sub_q" });
  e("SUBAGENT_ERROR", { subagentRunId: "sub_q", message: "table versant_flat not found", code: "NOT_FOUND" });
  e("RUN_ERROR", { message: "the query subagent failed", code: "SUBAGENT_ERROR" });
  return e.events;
}

/** The deprecated THINKING_* events, which the 1.0 client translates to REASONING_*. */
function thinkingLegacyRun() {
  const e = run({ legacy: true });
  e("RUN_STARTED", { threadId: "thr_think_01", runId: "run_think_01" });
  e("THINKING_START", { title: "Planning the queries" });
  e("THINKING_TEXT_MESSAGE_START", {});
  e("THINKING_TEXT_MESSAGE_CONTENT", { delta: "Funnel first, " });
  e("THINKING_TEXT_MESSAGE_CONTENT", { delta: "then NPS." });
  e("THINKING_TEXT_MESSAGE_END", {});
  e("THINKING_END", {});
  e("TEXT_MESSAGE_START", { messageId: "msg_t1", role: "assistant" });
  e("TEXT_MESSAGE_CONTENT", { messageId: "msg_t1", delta: "Done planning." });
  e("TEXT_MESSAGE_END", { messageId: "msg_t1" });
  e("RUN_FINISHED", { threadId: "thr_think_01", runId: "run_think_01" });
  return e.events;
}

// Stream-rule cases. Each is built from small parts; `at` is the 0-based index, in the
// expanded event list (chunks expanded as the client does), of the event the client must
// reject, or null when it must accept the stream.
const RS = ["RUN_STARTED", { threadId: "t", runId: "r" }];
const RF = ["RUN_FINISHED", { threadId: "t", runId: "r" }];
const ts = (id, extra = {}) => ["TEXT_MESSAGE_START", { messageId: id, ...extra }];
const tc = (id, extra = {}) => ["TEXT_MESSAGE_CONTENT", { messageId: id, delta: "x", ...extra }];
const te = (id, extra = {}) => ["TEXT_MESSAGE_END", { messageId: id, ...extra }];
const ks = (id, extra = {}) => ["TOOL_CALL_START", { toolCallId: id, toolCallName: "f", ...extra }];
const ka = (id) => ["TOOL_CALL_ARGS", { toolCallId: id, delta: "{}" }];
const ke = (id) => ["TOOL_CALL_END", { toolCallId: id }];
const ss = (name, extra = {}) => ["STEP_STARTED", { stepName: name, ...extra }];
const sf = (name, extra = {}) => ["STEP_FINISHED", { stepName: name, ...extra }];
const rs = (id) => ["REASONING_START", { messageId: id }];
const re = (id) => ["REASONING_END", { messageId: id }];
const rms = (id) => ["REASONING_MESSAGE_START", { messageId: id, role: "reasoning" }];
const rmc = (id) => ["REASONING_MESSAGE_CONTENT", { messageId: id, delta: "hm" }];
const rme = (id) => ["REASONING_MESSAGE_END", { messageId: id }];
const sas = (id, extra = {}) => ["SUBAGENT_STARTED", { subagentRunId: id, name: "helper", ...extra }];
const saf = (id) => ["SUBAGENT_FINISHED", { subagentRunId: id }];
const chunk = (fields) => ["TEXT_MESSAGE_CHUNK", fields];

const STREAMS = {
  // Run lifecycle.
  "bad-first-event-not-run-started": { at: 0, events: [ts("m1"), te("m1"), RS, RF] },
  "bad-event-after-run-finished": { at: 2, events: [RS, RF, ts("m1")] },
  "bad-custom-after-run-finished": { at: 2, events: [RS, RF, ["CUSTOM", { name: "late", value: 1 }]] },
  "bad-event-after-run-error": { at: 2, events: [RS, ["RUN_ERROR", { message: "boom" }], ts("m1")] },
  "bad-run-started-while-active": { at: 2, events: [RS, ts("m1"), RS, RF] },
  "ok-two-runs-in-one-stream": { at: null, events: [RS, ts("m1"), te("m1"), RF, RS, ts("m1"), tc("m1"), te("m1"), RF] },
  "ok-new-run-after-run-error": { at: null, events: [RS, ["RUN_ERROR", { message: "boom" }], RS, RF] },
  // Text messages.
  "bad-text-content-without-start": { at: 1, events: [RS, tc("m1"), RF] },
  "bad-text-end-without-start": { at: 1, events: [RS, te("m1"), RF] },
  "bad-text-start-twice": { at: 2, events: [RS, ts("m1"), ts("m1"), te("m1"), RF] },
  "bad-run-finished-text-open": { at: 2, events: [RS, ts("m1"), RF] },
  "ok-interleaved-text-messages": { at: null, events: [RS, ts("a"), ts("b"), tc("a"), te("b"), te("a"), RF] },
  // Tool calls.
  "bad-tool-args-without-start": { at: 1, events: [RS, ka("c1"), RF] },
  "bad-tool-start-twice": { at: 2, events: [RS, ks("c1"), ks("c1"), ke("c1"), RF] },
  "bad-run-finished-tool-call-open": { at: 3, events: [RS, ks("c1"), ka("c1"), RF] },
  // Steps, kept per owner.
  "bad-step-started-twice": { at: 2, events: [RS, ss("s"), ss("s"), sf("s"), RF] },
  "bad-step-finished-not-started": { at: 1, events: [RS, sf("s"), RF] },
  "bad-run-finished-step-open": { at: 4, events: [RS, ss("outer"), ss("inner"), sf("inner"), RF] },
  "bad-step-finished-by-other-owner": {
    at: 3, events: [RS, ss("tools"), sas("s1"), sf("tools", { subagentRunId: "s1" }), sf("tools"), saf("s1"), RF],
  },
  "ok-same-step-name-parent-and-subagent": {
    at: null, events: [RS, ss("tools"), sas("s1"), ss("tools", { subagentRunId: "s1" }), sf("tools", { subagentRunId: "s1" }), saf("s1"), sf("tools"), RF],
  },
  // Reasoning.
  "bad-reasoning-content-without-start": { at: 2, events: [RS, rs("r1"), rmc("m1"), re("r1"), RF] },
  "bad-reasoning-end-without-start": { at: 1, events: [RS, re("r1"), RF] },
  "bad-reasoning-message-start-twice": { at: 3, events: [RS, rs("r1"), rms("m1"), rms("m1"), rme("m1"), re("r1"), RF] },
  "bad-run-finished-reasoning-message-open": { at: 4, events: [RS, rs("r1"), rms("m1"), rmc("m1"), RF] },
  "bad-run-finished-reasoning-span-open": { at: 5, events: [RS, rs("r1"), rms("m1"), rmc("m1"), rme("m1"), RF] },
  "ok-reasoning-span-and-message-share-an-id": { at: null, events: [RS, rs("r1"), rms("r1"), rmc("r1"), rme("r1"), re("r1"), RF] },
  // Subagents.
  "bad-run-finished-subagent-open": { at: 2, events: [RS, sas("s1"), RF] },
  "bad-subagent-finished-not-started": { at: 1, events: [RS, saf("s1"), RF] },
  "bad-subagent-started-twice": { at: 2, events: [RS, sas("s1"), sas("s1"), saf("s1"), RF] },
  "bad-subagent-id-reused": { at: 3, events: [RS, sas("s1"), saf("s1"), sas("s1"), saf("s1"), RF] },
  "bad-subagent-parent-not-started": { at: 1, events: [RS, sas("s2", { parentSubagentRunId: "s1" }), saf("s2"), RF] },
  "bad-text-continued-by-other-owner": { at: 3, events: [RS, sas("s1"), ts("m1"), tc("m1", { subagentRunId: "s1" }), te("m1"), saf("s1"), RF] },
  "bad-tool-call-owner-differs-from-parent-message": {
    at: 4, events: [RS, sas("s1"), ts("m1"), te("m1"), ks("c1", { parentMessageId: "m1", subagentRunId: "s1" }), ke("c1"), saf("s1"), RF],
  },
  "bad-activity-delta-by-other-owner": {
    at: 3,
    events: [
      RS, sas("s1"),
      ["ACTIVITY_SNAPSHOT", { messageId: "a1", activityType: "PLAN", content: { n: 1 } }],
      ["ACTIVITY_DELTA", { messageId: "a1", activityType: "PLAN", patch: [], subagentRunId: "s1" }],
      saf("s1"), RF,
    ],
  },
  "ok-subagent-tags-without-lifecycle": { at: null, events: [RS, ts("m1", { subagentRunId: "s9" }), tc("m1", { subagentRunId: "s9" }), te("m1"), RF] },
  // Chunk streams, one per owner lane.
  "bad-text-chunk-first-without-id": { at: 1, events: [RS, chunk({ delta: "orphan" }), RF] },
  "bad-tool-chunk-first-without-name": { at: 1, events: [RS, ["TOOL_CALL_CHUNK", { toolCallId: "c1", delta: "{}" }], RF] },
  "bad-chunk-then-explicit-end": { at: 4, events: [RS, chunk({ messageId: "m1", delta: "hi" }), te("m1"), RF] },
  "bad-chunk-ambiguous-lane": {
    at: 7,
    events: [
      RS, sas("s1"), sas("s2"),
      chunk({ messageId: "m1", delta: "a", subagentRunId: "s1" }),
      chunk({ messageId: "m2", delta: "b", subagentRunId: "s2" }),
      chunk({ delta: "which?" }),
      saf("s1"), saf("s2"), RF,
    ],
  },
  "ok-chunk-lanes-per-owner": {
    at: null,
    events: [
      RS, sas("s1"),
      chunk({ messageId: "m1", delta: "parent " }),
      chunk({ messageId: "m2", delta: "child ", subagentRunId: "s1" }),
      chunk({ delta: "more parent" }),
      chunk({ delta: "more child", subagentRunId: "s1" }),
      saf("s1"), RF,
    ],
  },
  "ok-chunk-closed-by-run-finished": { at: null, events: [RS, chunk({ messageId: "m1", delta: "hi" }), RF] },
  "ok-reasoning-chunk-closed-by-reasoning-end": {
    at: null, events: [RS, rs("r1"), ["REASONING_MESSAGE_CHUNK", { messageId: "m1", delta: "hm" }], re("r1"), RF],
  },
  // THINKING_* as the 1.0 client translates it.
  "bad-thinking-content-without-start": {
    at: 1, legacy: true, events: [RS, ["THINKING_TEXT_MESSAGE_CONTENT", { delta: "orphan" }], RF],
  },
  "bad-run-finished-thinking-open": {
    at: 2, legacy: true, events: [RS, ["THINKING_START", {}], RF],
  },
};

function write(dir, name, events, framings = ["sse", "json", "jsonl"]) {
  const frames = events.map((ev) => encoder.encode(ev));
  const payloads = frames.map((f) => f.slice("data: ".length, -2)); // the encoder's JSON, unframed
  if (framings.includes("sse")) writeFileSync(path.join(dir, `${name}.sse`), frames.join(""));
  if (framings.includes("jsonl")) writeFileSync(path.join(dir, `${name}.jsonl`), payloads.map((p) => p + "\n").join(""));
  if (framings.includes("json")) writeFileSync(path.join(dir, `${name}.json`), "[\n" + payloads.join(",\n") + "\n]\n");
}

const [outDir, streamsDir, expectPath] = process.argv.slice(2);
if (!outDir || !streamsDir || !expectPath) {
  console.error("usage: node gen_agui.mjs OUT_DIR STREAMS_DIR EXPECT_JSON");
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
mkdirSync(streamsDir, { recursive: true });
write(outDir, "versant-run", versantRun());
write(outDir, "moca-run", mocaRun());
write(outDir, "interrupt-run", interruptRun());
write(outDir, "error-run", errorRun());
write(outDir, "thinking-legacy", thinkingLegacyRun());
const expect = {};
for (const [name, { at, legacy, events }] of Object.entries(STREAMS)) {
  const e = run({ legacy });
  for (const [type, fields] of events) e(type, fields);
  write(streamsDir, name, e.events, ["sse"]);
  expect[`${name}.sse`] = at === null ? { verdict: "accepted" } : { verdict: "rejected", index: at };
}
writeFileSync(expectPath, JSON.stringify(expect, null, 2) + "\n");
const v = (p) => require(`${p}/package.json`).version;
console.log(JSON.stringify({
  "@ag-ui/core": v("@ag-ui/core"), "@ag-ui/encoder": v("@ag-ui/encoder"), "@ag-ui/client": v("@ag-ui/client"),
  node: process.versions.node,
}));
