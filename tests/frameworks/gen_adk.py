"""Google ADK over AG-UI (ag-ui-adk's ADKAgent behind add_adk_fastapi_endpoint) and over A2A
(ADK's own export, google.adk.a2a.utils.agent_to_a2a.to_a2a, on a2a-sdk), driven in process
through httpx's ASGI transport.

The model is a BaseLlm subclass with a script: a function call, then the answer. ADK tools
return a dict; anything else ADK wraps as {"result": <value>}. The tool returns
  correct, misquote  a dict {"result", "citation"}
  wrong-number       a JSON string of {"result", "citation"} (ADK sends {"result": "<json text>"})
  wrong-base         over AG-UI: {result, citation} written to the session state
                     (tool_context.state["funnel"], which ag-ui-adk streams as STATE_DELTA /
                     STATE_SNAPSHOT), the function response saying only where it went; over
                     A2A: a dict, as correct

and, over A2A, each run again as `a2a-state-<run>-*`: the tool writes [{result, citation}] to the
session state (tool_context.state["figures"]) and returns only where it went. ADK's A2A export
puts the event's actions in its metadata, so the state change reaches the stream as
statusUpdate.metadata.adk_actions.stateDelta.figures of the function response's status update
(ProtoJSON: 4654.0), in no Part; the task (GetTask) does not keep it.
"""

import asyncio
import json
import sys
import uuid
from pathlib import Path
from typing import AsyncGenerator

import httpx
from fastapi import FastAPI
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools import ToolContext
from google.genai import types

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402


class ScriptedLlm(BaseLlm):
    """A model that calls the funnel tool once, then answers with the run's sentence."""

    answer: str = ""

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1] if llm_request.contents else None
        answered = last is not None and any(p.function_response for p in (last.parts or []))
        if not answered:
            call = types.FunctionCall(name=common.TOOL_NAME, args={"wave": "W6"}, id="call_funnel_1")
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))
            return
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=self.answer)]))


def agent(run: str, via_state: bool, state_only: bool = False) -> LlmAgent:
    def versant_funnel(wave: str, tool_context: ToolContext):
        """The Versant brand funnel among adults aware of the brand, with its Upperhand citation."""
        p = common.payload(run)
        if state_only:
            tool_context.state["figures"] = [p]
            return {"status": "The funnel is in the session state (figures)."}
        if run == "wrong-number":
            return json.dumps(p)
        if run == "wrong-base" and via_state:
            tool_context.state["funnel"] = p
            return {"status": "The funnel is in the session state (funnel)."}
        return p

    return LlmAgent(
        name="versant",
        model=ScriptedLlm(model="scripted", answer=common.RUNS[run]["answer"]),
        instruction="Answer from the versant_funnel tool.",
        tools=[versant_funnel],
    )


async def agui(run: str) -> bytes:
    from ag_ui_adk import ADKAgent, add_adk_fastapi_endpoint

    app = FastAPI()
    add_adk_fastapi_endpoint(app, ADKAgent(adk_agent=agent(run, via_state=True), app_name="versant", user_id="analyst"), path="/agent")
    return await common.post_run(app, "/agent", run)


async def a2a(run: str, state_only: bool = False) -> tuple[bytes, bytes]:
    from google.adk.a2a.utils.agent_to_a2a import to_a2a

    app = to_a2a(agent(run, via_state=False, state_only=state_only), host="agent", port=80)
    v10 = {"A2A-Version": "1.0"}
    message = {
        "messageId": f"user-{run}",
        "role": "ROLE_USER",
        "parts": [{"text": common.QUESTION}],
    }
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://agent", timeout=60) as client:
            req = {"jsonrpc": "2.0", "id": "stream-1", "method": "SendStreamingMessage", "params": {"message": message}}
            r = await client.post("/", json=req, headers={**v10, "accept": "text/event-stream"})
            r.raise_for_status()
            stream = r.content
            task_id = None
            for line in stream.decode().splitlines():
                if line.startswith("data:"):
                    for ev in json.loads(line[5:]).get("result", {}).values():
                        if isinstance(ev, dict):
                            task_id = task_id or ev.get("taskId") or ev.get("id")
            g = await client.post("/", json={"jsonrpc": "2.0", "id": "get-1", "method": "GetTask", "params": {"id": task_id}}, headers=v10)
            return stream, g.content


STATE_SHAPES = {
    "stream": (
        "the tool wrote [{result, citation}] to the session state (state key figures): the status update of the "
        "function response's event carries it as statusUpdate.metadata.adk_actions.stateDelta.figures[0] = "
        "{result, citation} (ProtoJSON doubles: n 4654.0), in no Part; the function response Part says only "
        "{\"status\": \"The funnel is in the session state (figures).\"}"
    ),
    "task": (
        "the tool wrote [{result, citation}] to the session state only: the task keeps no state delta (its history "
        "has the function response Part {\"status\": ...}; its metadata is the last event's, adk_actions.stateDelta {}), "
        "so it holds no citation"
    ),
}

# What google-adk's installed source says of the metadata the a2a-state-* files rely on (2.13.0).
EVENTS = {
    "statusUpdate.metadata.adk_actions": (
        "google/adk/a2a/executor/config.py: the default event_converter is the legacy "
        "converters/event_converter.py convert_event_to_a2a_events; its _create_status_update_event sets "
        "metadata=_get_context_metadata(event, invocation_context), which holds adk_app_name, adk_user_id, "
        "adk_session_id, adk_invocation_id, adk_author, adk_event_id and, for each optional field present, "
        "adk_<field> = _serialize_metadata_value(value): event.actions.model_dump(mode='json', exclude_none=True, "
        "by_alias=True), so adk_actions = {stateDelta, artifactDelta, requestedAuthConfigs, "
        "requestedToolConfirmations, ...} in camelCase, stateDelta being the state keys the tool wrote "
        "(ADK_METADATA_KEY_PREFIX 'adk_', converters/utils.py). The event's function_response Part is in the same "
        "status update's message. ADK's own A2A client drops a peer's stateDelta "
        "(converters/to_adk_event.py _warn_if_peer_state_delta)"
    ),
}


def main(out: Path) -> None:
    files = {}
    for run in common.RUNS:
        name = f"agui-{run}.sse"
        common.save(out, name, asyncio.run(agui(run)))
        shape = {
            "wrong-number": "a JSON string: TOOL_CALL_RESULT.content is {\"result\": \"<JSON text of {result, citation}>\"}",
            "wrong-base": "state: {result, citation} under state key funnel (STATE_DELTA / STATE_SNAPSHOT); the tool result says where",
        }.get(run, "a dict: TOOL_CALL_RESULT.content is one JSON string {result, citation}")
        files[name] = {"run": run, "protocol": "ag-ui", "shape": shape}
        stream, task = asyncio.run(a2a(run))
        for kind, data, what in (("stream", stream, "SendStreamingMessage SSE"), ("task", task, "GetTask response")):
            name = f"a2a-{run}-{kind}.{'sse' if kind == 'stream' else 'json'}"
            common.save(out, name, data)
            wrapped = "a JSON string under response.result" if run == "wrong-number" else "{result, citation} under response"
            files[name] = {
                "run": run,
                "protocol": "a2a-v1.0",
                "shape": f"{what}: the function response as a data Part {{id, name, response}} with metadata adk_type function_response, {wrapped}",
            }
        stream, task = asyncio.run(a2a(run, state_only=True))
        for kind, data, what in (("stream", stream, "SendStreamingMessage SSE"), ("task", task, "GetTask response")):
            name = f"a2a-state-{run}-{kind}.{'sse' if kind == 'stream' else 'json'}"
            common.save(out, name, data)
            files[name] = {"run": run, "protocol": "a2a-v1.0", "shape": f"{what}: {STATE_SHAPES[kind]}"}
    vers = common.versions("google-adk", "ag_ui_adk", "a2a-sdk", "ag-ui-protocol", "google-genai", "starlette")
    common.write_versions(out, "Google ADK (ag-ui-adk, ADK A2A export)", vers, files, EVENTS)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
