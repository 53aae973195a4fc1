"""Writes AG-UI 1.0 runs with the Python SDK (`ag-ui-protocol`): its own event models and its
`EventEncoder`, in three framings (SSE as the encoder writes it, a JSON array and JSON lines of
the encoder's payloads).

    python gen_agui.py OUT_DIR

Run through gen.sh, which installs the pinned SDK into a cache venv. The runs mirror the ones
gen_agui.mjs writes with the TypeScript SDK; scenario.json holds the data both share.
"""

import base64
import json
import sys
from importlib.metadata import version
from pathlib import Path

from ag_ui.core import (
    ActivityDeltaEvent,
    ActivitySnapshotEvent,
    AssistantMessage,
    CustomEvent,
    DocumentPart,
    FunctionCall,
    Interrupt,
    MessagesSnapshotEvent,
    RawEvent,
    ReasoningEncryptedValueEvent,
    ReasoningEndEvent,
    ReasoningMessageChunkEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    ResumeEntry,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentFinishedSuccessOutcome,
    SubagentFinishedSuspendedOutcome,
    SubagentStartedEvent,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TextPart,
    ToolCall,
    ToolCallArgsEvent,
    ToolCallChunkEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    ToolMessage,
    UserMessage,
)
from ag_ui.core import ActivityMessage, ReasoningMessage
from ag_ui._generated.models import AddOperation, DataSource, ReplaceOperation
from ag_ui.encoder import EventEncoder

HERE = Path(__file__).resolve().parent
DATA = json.loads((HERE / "scenario.json").read_text())
CIT = DATA["citationMediaType"]
T0 = 1776420000000


class Run:
    """Collects events, stamping each with a deterministic timestamp."""

    def __init__(self):
        self.events = []

    def __call__(self, event):
        event.timestamp = T0 + 137 * len(self.events)
        self.events.append(event)


def kind_data_parts(claim):
    """A tool result as recite reads it today: A2A-style data Parts in a JSON string."""
    return json.dumps(
        [
            {"kind": "data", "data": claim["result"]},
            {"kind": "data", "data": claim["citation"], "metadata": {"mimeType": CIT}},
        ]
    )


def b64(value):
    return base64.b64encode(json.dumps(value).encode()).decode()


def versant_run():
    """Every 1.0 event type in one run, with three Upperhand claims (one wrong) and a subagent."""
    e = Run()
    thread, run = "thr_versant_0412", "run_sdk_py_01"
    question = UserMessage(id="msg_user_01", content=[TextPart(text=DATA["question"])])
    e(RunStartedEvent(thread_id=thread, run_id=run, protocol_version="1.0",
                      input=RunAgentInput(thread_id=thread, run_id=run, state={}, messages=[question],
                                          tools=[], context=[], forwarded_props={})))
    e(StepStartedEvent(step_name="plan"))
    e(ReasoningStartEvent(message_id="rs_01"))
    e(ReasoningMessageStartEvent(message_id="rs_01_m", role="reasoning"))
    e(ReasoningMessageContentEvent(message_id="rs_01_m", delta="Three W6 figures: funnel among aware, "))
    e(ReasoningMessageContentEvent(message_id="rs_01_m", delta="consideration among all adults, NPS."))
    e(ReasoningMessageEndEvent(message_id="rs_01_m"))
    e(ReasoningEncryptedValueEvent(subtype="message", entity_id="rs_01_m", encrypted_value="gAAAAB-opaque"))
    e(ReasoningEndEvent(message_id="rs_01"))
    e(TextMessageStartEvent(message_id="msg_plan_01", role="assistant"))
    e(TextMessageContentEvent(message_id="msg_plan_01", delta="I'll pull three W6 (April 2026) figures for Versant "))
    e(TextMessageContentEvent(message_id="msg_plan_01", delta="from the Mega Tracker, weighted by main_weight."))
    e(TextMessageEndEvent(message_id="msg_plan_01"))
    e(StepFinishedEvent(step_name="plan"))
    e(StateSnapshotEvent(snapshot={"study": "Versant Mega Tracker", "queries": []}))
    e(StepStartedEvent(step_name="query"))
    e(ActivitySnapshotEvent(message_id="act_plan_01", activity_type="PLAN",
                            content={"steps": [{"label": "funnel", "done": False}, {"label": "nps", "done": False}]}))

    # A tool call in full events; its result carries the citation as data Parts in a string.
    e(ToolCallStartEvent(tool_call_id="call_funnel_w6", tool_call_name="extract_funnel", parent_message_id="msg_plan_01"))
    e(ToolCallArgsEvent(tool_call_id="call_funnel_w6", delta='{"column":"s14r5",'))
    e(ToolCallArgsEvent(tool_call_id="call_funnel_w6", delta='"base":"Adults 18-74, aware of brand"}'))
    e(ToolCallEndEvent(tool_call_id="call_funnel_w6"))
    e(ToolCallResultEvent(message_id="msg_tool_01", tool_call_id="call_funnel_w6", role="tool",
                          content=kind_data_parts(DATA["funnel"])))

    # A tool call in chunks; its result is a 1.0 content-part array with the citation as a
    # base64 document part.
    e(ToolCallChunkEvent(tool_call_id="call_consider_all_w6", tool_call_name="extract_funnel",
                         parent_message_id="msg_plan_01", delta='{"column":"s14r5",'))
    e(ToolCallChunkEvent(delta='"base":"All adults 18-74"}'))
    claim = DATA["consideredAll"]
    e(ToolCallResultEvent(message_id="msg_tool_02", tool_call_id="call_consider_all_w6", role="tool", content=[
        TextPart(text=json.dumps(claim["result"])),
        DocumentPart(id="cite_consider_all_w6", source=DataSource(value=b64(claim["citation"]), mime_type=CIT)),
    ]))
    e(StateDeltaEvent(delta=[AddOperation(path="/queries/-", value={"column": "s14r5", "period": "W6 (April 2026)"})]))
    e(ActivityDeltaEvent(message_id="act_plan_01", activity_type="PLAN",
                         patch=[ReplaceOperation(path="/steps/0/done", value=True)]))

    # The wrong claim: W5's consideration beside the W6 citation.
    e(ToolCallStartEvent(tool_call_id="call_consider_recheck", tool_call_name="extract_funnel", parent_message_id="msg_plan_01"))
    e(ToolCallArgsEvent(tool_call_id="call_consider_recheck", delta='{"column":"s14r5","base":"All adults 18-74"}'))
    e(ToolCallEndEvent(tool_call_id="call_consider_recheck"))
    e(ToolCallResultEvent(message_id="msg_tool_03", tool_call_id="call_consider_recheck", role="tool",
                          content=kind_data_parts(DATA["consideredWrong"])))

    # The same wrong claim in 1.0 content parts, its citation a base64 document part.
    wrong = DATA["consideredWrong"]
    e(ToolCallStartEvent(tool_call_id="call_consider_recheck_2", tool_call_name="extract_funnel", parent_message_id="msg_plan_01"))
    e(ToolCallArgsEvent(tool_call_id="call_consider_recheck_2", delta='{"column":"s14r5","base":"All adults 18-74"}'))
    e(ToolCallEndEvent(tool_call_id="call_consider_recheck_2"))
    e(ToolCallResultEvent(message_id="msg_tool_03b", tool_call_id="call_consider_recheck_2", role="tool", content=[
        TextPart(text=json.dumps(wrong["result"])),
        DocumentPart(source=DataSource(value=b64(wrong["citation"]), mime_type=CIT)),
    ]))

    # A subagent runs the NPS query, with a step of the same name as the parent's open one.
    e(ToolCallStartEvent(tool_call_id="call_delegate_nps", tool_call_name="delegate", parent_message_id="msg_plan_01"))
    e(ToolCallArgsEvent(tool_call_id="call_delegate_nps", delta='{"agent":"nps-analyst"}'))
    e(ToolCallEndEvent(tool_call_id="call_delegate_nps"))
    sub = "sub_nps_01"
    e(SubagentStartedEvent(subagent_run_id=sub, name="nps-analyst", description="Runs NPS queries",
                           parent_tool_call_id="call_delegate_nps", parent_message_id="msg_plan_01"))
    e(StepStartedEvent(step_name="query", subagent_run_id=sub))
    e(TextMessageChunkEvent(message_id="msg_sub_01", role="assistant", delta="Querying q20r5 ", subagent_run_id=sub))
    e(TextMessageChunkEvent(delta="for W6.", subagent_run_id=sub))
    e(ReasoningMessageChunkEvent(message_id="rs_sub_01", delta="NPS is promoters minus detractors.", subagent_run_id=sub))
    e(ToolCallStartEvent(tool_call_id="call_nps_w6", tool_call_name="extract_nps", parent_message_id="msg_sub_01",
                         subagent_run_id=sub))
    e(ToolCallArgsEvent(tool_call_id="call_nps_w6", delta='{"column":"q20r5","base":"All adults 18-74"}', subagent_run_id=sub))
    e(ToolCallEndEvent(tool_call_id="call_nps_w6", subagent_run_id=sub))
    e(ToolCallResultEvent(message_id="msg_tool_04", tool_call_id="call_nps_w6", role="tool", subagent_run_id=sub,
                          content=kind_data_parts(DATA["nps"])))
    e(StepFinishedEvent(step_name="query", subagent_run_id=sub))
    e(SubagentFinishedEvent(subagent_run_id=sub, outcome=SubagentFinishedSuccessOutcome(), result={"NPS": -25.1}))
    e(ToolCallResultEvent(message_id="msg_tool_05", tool_call_id="call_delegate_nps", role="tool",
                          content="nps-analyst finished"))
    e(StepFinishedEvent(step_name="query"))

    e(StepStartedEvent(step_name="answer"))
    e(TextMessageChunkEvent(message_id="msg_answer_01", role="assistant",
                            delta="Among adults 18-74 aware of Versant in W6 (n = 4,654), 69.4% are familiar, "))
    e(TextMessageChunkEvent(delta="44.2% have considered it, 26.8% purchased and 13.2% are loyal. "))
    e(TextMessageChunkEvent(delta="Across all adults 18-74 (n = 6,250), 29.8% have considered Versant; its NPS is -25.1."))
    e(StepFinishedEvent(step_name="answer"))
    e(MessagesSnapshotEvent(messages=[
        question,
        AssistantMessage(id="msg_plan_01", content="I'll pull three W6 (April 2026) figures.", tool_calls=[
            ToolCall(id="call_funnel_w6", function=FunctionCall(name="extract_funnel", arguments='{"column":"s14r5"}')),
        ]),
        ToolMessage(id="msg_tool_05", tool_call_id="call_delegate_nps", content=[TextPart(text="nps-analyst finished")]),
        ReasoningMessage(id="rs_01_m", content="Three W6 figures."),
        ActivityMessage(id="act_plan_01", activity_type="PLAN", content={"steps": []}),
    ]))
    e(RawEvent(source="openai.responses", event={"type": "response.completed", "id": "resp_01"}))
    e(CustomEvent(name="versant.summary", value={"wave": "W6", "figures": 3}))
    e(RunFinishedEvent(thread_id=thread, run_id=run, outcome=RunFinishedSuccessOutcome(),
                       result={"answer": "msg_answer_01"}))
    return e.events


def moca_run():
    """A MOCA answer: a knowledge-base search, the answer, then its `moca.citations` event."""
    m = DATA["moca"]
    e = Run()
    thread, run = "thread-7", "run-sdk-py-moca"
    e(RunStartedEvent(thread_id=thread, run_id=run, input=RunAgentInput(
        thread_id=thread, run_id=run, messages=[UserMessage(id="msg-user-1", content=m["question"])],
        tools=[], context=[], state={}, forwarded_props={})))
    e(ToolCallStartEvent(tool_call_id="call-1", tool_call_name="moca_search"))
    e(ToolCallArgsEvent(tool_call_id="call-1", delta=m["searchArgs"]))
    e(ToolCallEndEvent(tool_call_id="call-1"))
    e(ToolCallResultEvent(message_id="msg-tool-1", tool_call_id="call-1", role="tool",
                          content=json.dumps(m["searchResult"])))
    e(TextMessageStartEvent(message_id="msg-answer-1", role="assistant"))
    for delta in m["answer"]:
        e(TextMessageContentEvent(message_id="msg-answer-1", delta=delta))
    e(TextMessageEndEvent(message_id="msg-answer-1"))
    e(CustomEvent(name="moca.citations", value={"version": 1, "messageId": "msg-answer-1",
                                                 "computedAt": m["computedAt"], "citations": m["citations"]}))
    e(RunFinishedEvent(thread_id=thread, run_id=run))
    return e.events


def interrupt_run():
    """A run that stops on an interrupt raised inside a subagent, then a run that resumes it."""
    e = Run()
    thread = "thr_export_01"
    e(RunStartedEvent(thread_id=thread, run_id="run_export_01", input=RunAgentInput(
        thread_id=thread, run_id="run_export_01", messages=[UserMessage(id="msg_user_x", content="Export the W6 funnel.")],
        tools=[], context=[], state={}, forwarded_props={})))
    e(TextMessageStartEvent(message_id="msg_x1"))
    e(TextMessageContentEvent(message_id="msg_x1", delta="Exporting needs your approval."))
    e(TextMessageEndEvent(message_id="msg_x1"))
    e(ToolCallStartEvent(tool_call_id="call_export", tool_call_name="export_table", parent_message_id="msg_x1"))
    e(ToolCallArgsEvent(tool_call_id="call_export", delta='{"table":"versant_flat"}'))
    e(ToolCallEndEvent(tool_call_id="call_export"))
    e(SubagentStartedEvent(subagent_run_id="sub_export", name="exporter", parent_tool_call_id="call_export"))
    e(SubagentFinishedEvent(subagent_run_id="sub_export",
                            outcome=SubagentFinishedSuspendedOutcome(interrupt_ids=["int_approve_01"])))
    e(RunFinishedEvent(thread_id=thread, run_id="run_export_01", outcome=RunFinishedInterruptOutcome(interrupts=[
        Interrupt(id="int_approve_01", reason="approval", message="Export versant_flat?", tool_call_id="call_export",
                  subagent_run_id="sub_export", response_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}}),
    ])))
    e(RunStartedEvent(thread_id=thread, run_id="run_export_02", parent_run_id="run_export_01", input=RunAgentInput(
        thread_id=thread, run_id="run_export_02", messages=[], tools=[], context=[], state={}, forwarded_props={},
        resume=[ResumeEntry(interrupt_id="int_approve_01", status="resolved", payload={"ok": True})])))
    e(ToolCallResultEvent(message_id="msg_tool_x", tool_call_id="call_export", role="tool", content="exported 6250 rows"))
    e(RunFinishedEvent(thread_id=thread, run_id="run_export_02", outcome=RunFinishedSuccessOutcome()))
    return e.events


def error_run():
    """A run that fails inside a subagent."""
    e = Run()
    thread, run = "thr_err_01", "run_err_01"
    e(RunStartedEvent(thread_id=thread, run_id=run))
    e(StepStartedEvent(step_name="query"))
    e(SubagentStartedEvent(subagent_run_id="sub_q", name="querier"))
    e(TextMessageStartEvent(message_id="msg_q1", subagent_run_id="sub_q"))
    e(TextMessageContentEvent(message_id="msg_q1", delta="Running the query.", subagent_run_id="sub_q"))
    e(TextMessageEndEvent(message_id="msg_q1", subagent_run_id="sub_q"))
    e(SubagentErrorEvent(subagent_run_id="sub_q", message="table versant_flat not found", code="NOT_FOUND"))
    e(RunErrorEvent(message="the query subagent failed", code="SUBAGENT_ERROR"))
    return e.events


def write(out: Path, name: str, events):
    encoder = EventEncoder()
    frames = [encoder.encode(ev) for ev in events]
    (out / f"{name}.sse").write_text("".join(frames))
    payloads = [f[len("data: "):-2] for f in frames]  # the encoder's JSON, unframed
    (out / f"{name}.jsonl").write_text("".join(p + "\n" for p in payloads))
    (out / f"{name}.json").write_text("[\n" + ",\n".join(payloads) + "\n]\n")


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, build in [("versant-run", versant_run), ("moca-run", moca_run),
                        ("interrupt-run", interrupt_run), ("error-run", error_run)]:
        write(out, name, build())
    print(json.dumps({"ag-ui-protocol": version("ag-ui-protocol"), "pydantic": version("pydantic"),
                      "python": sys.version.split()[0]}))


if __name__ == "__main__":
    main()
