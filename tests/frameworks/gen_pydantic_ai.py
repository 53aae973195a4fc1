"""Pydantic AI over AG-UI (its own AGUIAdapter) and over A2A (fasta2a's agent_to_a2a, the
replacement for Pydantic AI 1's Agent.to_a2a), driven in process through httpx's ASGI transport.

The model is Pydantic AI's FunctionModel with a scripted stream function: a tool call, then
the answer. Over AG-UI the tool returns a Pydantic model {result, citation} (correct, misquote,
wrong-base) or a dict (wrong-number); the AG-UI adapter serialises either to a JSON string.
fasta2a never puts tool calls or tool returns on the wire (its worker keeps only the model's
text parts), so over A2A the result and its citation travel as the agent's structured output:
the output type is the same Pydantic model, which fasta2a writes as one data Part
`{"result": <output>}` of the task's `result` artifact, beside the answer text.

Four scenarios more, over AG-UI only (common.SCENARIOS): the tool returns the W6 funnel as a
Pydantic model, and the scripted model's text meets the agent's own machinery:
  rejected-retried   an output validator raises ModelRetry on the first answer (47%); the
                     adapter writes CUSTOM pydantic_ai_model_response_rejected after it, and the
                     retry (44.2%) streams as a new message and is accepted
  retries-exhausted  every answer is rejected; the output retry budget (1) runs out and the run
                     ends in RUN_ERROR
  interrupt          the tool requires approval (requires_approval=True, output type
                     [str, DeferredToolRequests]): text, the tool call, then RUN_FINISHED with
                     outcome {type: interrupt, interrupts: [...]}
  resumed            the next run on the thread, posted as an AG-UI client would after the
                     interrupt: the messages so far (the assistant's text and tool call, read
                     from the interrupt's stream) and `resume` approving the interrupt; the tool
                     runs and the model answers. Each POST is its own response, so each run is
                     its own file.
"""

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel
from pydantic_ai import Agent, DeferredToolRequests, ModelRetry
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402


class CitedResult(BaseModel):
    """A tool result with its Upperhand citation beside it."""

    result: dict[str, Any]
    citation: dict[str, Any]


def after_tool(messages: list[ModelMessage]) -> bool:
    last = messages[-1]
    return isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts)


def model(run: str, structured: bool) -> FunctionModel:
    answer = common.RUNS[run]["answer"]

    async def stream(messages: list[ModelMessage], info: AgentInfo):
        if not after_tool(messages):
            yield {0: DeltaToolCall(name=common.TOOL_NAME, json_args=json.dumps({"wave": "W6"}), tool_call_id="call_funnel_1")}
            return
        for i, word in enumerate(answer.split(" ")):
            yield word if i == 0 else " " + word
        if structured:
            output = info.output_tools[0].name
            yield {1: DeltaToolCall(name=output, json_args=json.dumps(common.payload(run)), tool_call_id="call_output_1")}

    return FunctionModel(stream_function=stream, model_name=f"scripted-{run}")


def agent(run: str, structured: bool) -> Agent:
    a = Agent(model(run, structured), name="versant", output_type=CitedResult if structured else str)

    @a.tool_plain(name=common.TOOL_NAME, description=common.TOOL_DESCRIPTION)
    def versant_funnel(wave: str) -> Any:
        p = common.payload(run)
        return p if run == "wrong-number" else CitedResult(**p)

    return a


async def agui(run: str) -> bytes:
    a = agent(run, structured=False)

    async def endpoint(request: Request):
        return await AGUIAdapter.dispatch_request(request, agent=a)

    app = Starlette(routes=[Route("/agent", endpoint, methods=["POST"])])
    return await common.post_run(app, "/agent", run)


async def a2a(run: str) -> tuple[bytes, bytes]:
    from fasta2a.pydantic_ai import agent_to_a2a

    app = agent_to_a2a(agent(run, structured=True), name="versant", url="http://agent")
    message = {
        "role": "user",
        "kind": "message",
        "messageId": f"user-{run}",
        "parts": [{"kind": "text", "text": common.QUESTION}],
    }
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://agent", timeout=30) as client:
            req = {"jsonrpc": "2.0", "id": 1, "method": "message/stream", "params": {"message": message}}
            r = await client.post("/", json=req, headers={"accept": "text/event-stream"})
            r.raise_for_status()
            stream = r.content
            task_id = None
            for line in stream.decode().splitlines():
                if line.startswith("data:"):
                    for ev in json.loads(line[5:])["result"].values():
                        task_id = task_id or ev.get("taskId") or ev.get("id")
            for _ in range(50):
                g = await client.post("/", json={"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": task_id}})
                if json.loads(g.content)["result"]["status"]["state"] in ("completed", "failed"):
                    break
                await asyncio.sleep(0.05)
            return stream, g.content


def scenario_agent(name: str) -> Agent:
    """The agent of a scenario: its model streams `before_tool` (if any) with the tool call, then
    each of `responses` in turn, one per request after the tool's return; an output validator
    rejects the answer the scenario rejects."""
    sc = common.SCENARIOS[name]
    approval = name in ("interrupt", "resumed")

    async def stream(messages: list[ModelMessage], info: AgentInfo):
        returned = next((i for i, m in enumerate(messages) if isinstance(m, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in m.parts)), None)
        if returned is None:
            if sc["before_tool"]:
                for i, word in enumerate(sc["before_tool"].split(" ")):
                    yield word if i == 0 else " " + word
            yield {0: DeltaToolCall(name=common.TOOL_NAME, json_args=json.dumps({"wave": "W6"}), tool_call_id="call_funnel_1")}
            return
        answer = sc["responses"][sum(1 for m in messages[returned:] if isinstance(m, ModelResponse))]
        for i, word in enumerate(answer.split(" ")):
            yield word if i == 0 else " " + word

    a = Agent(
        FunctionModel(stream_function=stream, model_name=f"scripted-{name}"),
        name="versant",
        output_type=[str, DeferredToolRequests] if approval else str,
        retries={"output": 1},
    )

    @a.tool_plain(name=common.TOOL_NAME, description=common.TOOL_DESCRIPTION, requires_approval=approval)
    def versant_funnel(wave: str) -> Any:
        return CitedResult(**common.payload("correct"))

    @a.output_validator
    def not_w5(output: str) -> str:
        if output == common.REJECTED_ANSWER:
            raise ModelRetry("47% is W5's consideration; quote the W6 funnel the tool returned.")
        return output

    return a


async def post(a: Agent, body: dict) -> bytes:
    async def endpoint(request: Request):
        return await AGUIAdapter.dispatch_request(request, agent=a)

    app = Starlette(routes=[Route("/agent", endpoint, methods=["POST"])])
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent", timeout=120) as client:
        r = await client.post("/agent", json=body, headers={"accept": "text/event-stream"})
        r.raise_for_status()
        return r.content


def resume_input(first: dict, stream: bytes) -> dict:
    """The RunAgentInput an AG-UI client posts after the interrupt: the thread's messages as the
    interrupted run left them (the user's question; the assistant's text and its tool call, read
    from the stream) and a `resume` entry approving each interrupt of its RUN_FINISHED."""
    events = [json.loads(line[5:]) for line in stream.decode().splitlines() if line.startswith("data:")]
    text: dict[str, str] = {}
    calls: dict[str, dict] = {}
    for e in events:
        if e["type"] == "TEXT_MESSAGE_START":
            text[e["messageId"]] = ""
        elif e["type"] == "TEXT_MESSAGE_CONTENT":
            text[e["messageId"]] += e["delta"]
        elif e["type"] == "TOOL_CALL_START":
            calls[e["toolCallId"]] = {"parent": e.get("parentMessageId"), "name": e["toolCallName"], "args": ""}
        elif e["type"] == "TOOL_CALL_ARGS":
            calls[e["toolCallId"]]["args"] += e["delta"]
    (message_id,) = text
    assistant = {
        "id": message_id,
        "role": "assistant",
        "content": text[message_id],
        "toolCalls": [
            {"id": cid, "type": "function", "function": {"name": c["name"], "arguments": c["args"]}}
            for cid, c in calls.items() if c["parent"] == message_id
        ],
    }
    outcome = events[-1]["outcome"]
    assert events[-1]["type"] == "RUN_FINISHED" and outcome["type"] == "interrupt", events[-1]
    return {
        **first,
        "runId": "run-resumed",
        "messages": first["messages"] + [assistant],
        "resume": [{"interruptId": i["id"], "status": "resolved", "payload": {"approved": True}} for i in outcome["interrupts"]],
    }


async def scenarios() -> dict[str, bytes]:
    out = {}
    for name in ("rejected-retried", "retries-exhausted"):
        out[name] = await post(scenario_agent(name), common.run_input(name))
    first = common.run_input("interrupt")
    out["interrupt"] = await post(scenario_agent("interrupt"), first)
    out["resumed"] = await post(scenario_agent("resumed"), resume_input(first, out["interrupt"]))
    return out


SCENARIO_SHAPES = {
    "rejected-retried": "Pydantic model {result, citation}: TOOL_CALL_RESULT.content is one JSON string {result, citation}. The first answer (47%) streams as TEXT_MESSAGE_*, then CUSTOM pydantic_ai_model_response_rejected {message_id: <that message>, run_step, attempt, outcome: retried, cause: model_retry}; the retry streams as a new TEXT_MESSAGE_* (44.2%), then RUN_FINISHED outcome success",
    "retries-exhausted": "Pydantic model {result, citation}: TOOL_CALL_RESULT.content is one JSON string {result, citation}. Two answers (47%), each TEXT_MESSAGE_* followed by CUSTOM pydantic_ai_model_response_rejected (outcome retried, cause model_retry), then RUN_ERROR \"Exceeded maximum output retries (1)\" and no RUN_FINISHED",
    "interrupt": "no tool result: text (TEXT_MESSAGE_*), the tool call (TOOL_CALL_START/ARGS/END, parentMessageId that message), then RUN_FINISHED outcome {type: interrupt, interrupts: [{id: int-call_funnel_1, reason: tool_call, message, toolCallId: call_funnel_1, responseSchema}]}",
    "resumed": "the run resuming the interrupt (same threadId; its input: the user's question, the assistant's text with toolCalls [call_funnel_1], resume [{interruptId: int-call_funnel_1, status: resolved, payload: {approved: true}}]): RUN_STARTED (no input echoed), TOOL_CALL_RESULT for call_funnel_1 (no TOOL_CALL_START in this run: the call was streamed by the interrupted run), content one JSON string {result, citation} of a Pydantic model, then the answer (TEXT_MESSAGE_*) and RUN_FINISHED outcome success",
}


# What pydantic-ai-slim's installed source says of the events the scenarios rely on (2.78.0).
EVENTS = {
    "CUSTOM pydantic_ai_model_response_rejected": (
        "pydantic_ai/ui/ag_ui/_utils.py MODEL_RESPONSE_REJECTED_EVENT_NAME; written by "
        "_event_stream.py AGUIEventStream.handle_model_response_rejected for each ModelResponseRejectedEvent, "
        "right after the rejected response's own events and before the next response's: "
        "value = {message_id, run_step, attempt, outcome, cause} (ui/_adapter.py model_response_rejected_payload): "
        "outcome 'retried' with cause (RetryFeedbackCause: 'validation_error' | 'no_output' | 'model_retry'; "
        "an output validator's ModelRetry is 'model_retry') when the model is asked again, 'replaced' without cause "
        "when a capability answered instead; message_id only when the rejected response streamed a message "
        "(`self._turn == 'response' and self._started_message_id == self.message_id`). It fires on every rejection, "
        "the one that uses up the output retry budget included (messages.py ModelResponseRejectedEvent), but not for "
        "an output tool's rejected result (its tool result event carries it)"
    ),
    "RUN_ERROR": (
        "_event_stream.py on_error: RunErrorEvent(message=str(error)); after_stream returns without RUN_FINISHED "
        "once a RUN_ERROR was written (\"RUN_ERROR is terminal whoever emits it\"); running out of output retries "
        "raises UnexpectedModelBehavior('Exceeded maximum output retries (N)') (_agent_graph.py)"
    ),
    "RUN_FINISHED outcome interrupt": (
        "_event_stream.py _build_outcome: when the run's output is DeferredToolRequests with approvals, "
        "RunFinishedInterruptOutcome(interrupts=[approval_to_interrupt(call, output) ...]) (ag-ui-protocol >= 0.1.19; "
        "the installed 1.0.0 has it); _interrupt.py approval_to_interrupt: {id: 'int-' + tool_call_id, reason: "
        "'tool_call', message: 'Approve <tool>(<args JSON>)?', toolCallId, responseSchema: {approved (boolean, "
        "required), editedArgs (object), reason (string)}}; otherwise {type: success}. A requires_approval tool needs "
        "DeferredToolRequests among the agent's output types (the adapter adds it only with frontend tools)"
    ),
    "resume": (
        "ui/ag_ui/_adapter.py AGUIAdapter.deferred_tool_results: RunAgentInput.resume[] -> DeferredToolResults("
        "approvals), each ResumeEntry {interruptId, status, payload} keyed by interruptId less 'int-', its payload "
        "validated as {approved: StrictBool, editedArgs?, reason?} (deny by default); the resuming run streams "
        "TOOL_CALL_RESULT for the approved call without a TOOL_CALL_START of its own, and RUN_STARTED carries no "
        "input"
    ),
}


def main(out: Path) -> None:
    files = {}
    for run in common.RUNS:
        name = f"agui-{run}.sse"
        common.save(out, name, asyncio.run(agui(run)))
        shape = "dict" if run == "wrong-number" else "Pydantic model {result, citation}"
        files[name] = {"run": run, "protocol": "ag-ui", "shape": f"{shape}: TOOL_CALL_RESULT.content is one JSON string {{result, citation}}"}
        stream, task = asyncio.run(a2a(run))
        for kind, data, what in (("stream", stream, "message/stream SSE"), ("task", task, "tasks/get response")):
            name = f"a2a-{run}-{kind}.{'sse' if kind == 'stream' else 'json'}"
            common.save(out, name, data)
            files[name] = {
                "run": run,
                "protocol": "a2a-v0.3",
                "shape": f"{what}: the structured output as one data Part {{\"result\": {{result, citation}}}} in the `result` artifact; the answer text streamed as chunks of the same artifact and in the task history",
            }
    for name, data in asyncio.run(scenarios()).items():
        fname = f"agui-{name}.sse"
        common.save(out, fname, data)
        files[fname] = {"run": name, "protocol": "ag-ui", "shape": SCENARIO_SHAPES[name]}
    vers = common.versions("pydantic-ai-slim", "fasta2a", "ag-ui-protocol", "starlette", "httpx")
    common.write_versions(out, "Pydantic AI (AG-UI adapter, fasta2a)", vers, files, EVENTS)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
