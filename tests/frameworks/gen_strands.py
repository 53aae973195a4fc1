"""AWS Strands behind ag-ui-strands (StrandsAgent, add_strands_fastapi_endpoint), driven in
process through httpx's ASGI transport.

The model is a strands.models.Model subclass that streams Strands' own stream events from a
script: a toolUse block, then the answer's text. The tool returns
  correct, misquote  a ToolResult whose content is two json blocks: the result, the citation Part
  wrong-number       a dict {"result", "citation"} (Strands serialises it as one text block of JSON)
  wrong-base         a Pydantic model {result, citation} (model_dump_json into one text block)

The same four runs again as `state-<run>.sse`, with ag-ui-strands' `state_from_result` tool
behaviour (StrandsAgentConfig(tool_behaviors={tool: ToolBehavior(state_from_result=...)})): the
tool returns a dict {result, citation} (one text block of JSON, as wrong-number above), and the
hook returns {"funnel": <the tool's result as the adapter parsed it>}, which the adapter writes as
a STATE_SNAPSHOT right after the tool's TOOL_CALL_RESULT and MESSAGES_SNAPSHOT, and again in
the STATE_SNAPSHOT closing the run: the same tool result and citation, repeated in the state.
"""

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel
from strands import Agent, tool
from strands.models.model import Model

from ag_ui_strands import StrandsAgent, add_strands_fastapi_endpoint
from ag_ui_strands.config import StrandsAgentConfig, ToolBehavior, ToolResultContext

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402


class CitedResult(BaseModel):
    """A tool result with its Upperhand citation beside it."""

    result: dict[str, Any]
    citation: dict[str, Any]


class ScriptedModel(Model):
    """Streams a toolUse on the first turn and the answer once the tool has answered."""

    def __init__(self, answer: str):
        self.answer = answer
        self.config: dict = {"model_id": "scripted"}

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> Any:
        return self.config

    async def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):
        raise NotImplementedError("not scripted")
        yield  # pragma: no cover

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
        last = messages[-1]
        answered = any("toolResult" in block for block in last.get("content", []))
        yield {"messageStart": {"role": "assistant"}}
        if not answered:
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "call_funnel_1", "name": common.TOOL_NAME}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"wave": "W6"})}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
            return
        for i, word in enumerate(self.answer.split(" ")):
            yield {"contentBlockDelta": {"delta": {"text": word if i == 0 else " " + word}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


def agent(run: str, state: bool = False) -> Agent:
    @tool(name=common.TOOL_NAME, description=common.TOOL_DESCRIPTION)
    def versant_funnel(wave: str):
        p = common.payload(run)
        if state:
            return p
        if run in ("correct", "misquote"):
            return {"status": "success", "content": [{"json": p["result"]}, {"json": common.citation_part(run)}]}
        if run == "wrong-base":
            return CitedResult(**p)
        return p

    return Agent(model=ScriptedModel(common.RUNS[run]["answer"]), tools=[versant_funnel], callback_handler=None)


def funnel_state(ctx: ToolResultContext) -> dict:
    """ag-ui-strands' state_from_result hook: the tool's result (as the adapter parsed it) under
    the state key `funnel`."""
    return {"funnel": ctx.result_data}


async def one(run: str, state: bool = False) -> bytes:
    app = FastAPI()
    config = StrandsAgentConfig(tool_behaviors={common.TOOL_NAME: ToolBehavior(state_from_result=funnel_state)}) if state else None
    add_strands_fastapi_endpoint(app, StrandsAgent(agent(run, state), name="versant", config=config), "/agent")
    return await common.post_run(app, "/agent", run)


SHAPES = {
    "correct": "ToolResult content blocks [{json: result}, {json: citation Part}]",
    "misquote": "ToolResult content blocks [{json: result}, {json: citation Part}]",
    "wrong-number": "dict {result, citation}, serialised by Strands as one text block of JSON",
    "wrong-base": "Pydantic model {result, citation}, serialised by Strands as one text block of JSON",
}


STATE_SHAPE = (
    "dict {result, citation}, serialised by Strands as one text block of JSON (TOOL_CALL_RESULT.content, and the "
    "tool message of MESSAGES_SNAPSHOT); state_from_result repeats it as "
    "STATE_SNAPSHOT.snapshot.funnel = {result, citation} right after the tool result, and the run's closing STATE_SNAPSHOT "
    "(the whole state) repeats it again"
)


# What ag_ui_strands' installed source says of the state the state-* files repeat (1.0.2).
EVENTS = {
    "STATE_SNAPSHOT from state_from_result": (
        "ag_ui_strands/config.py ToolBehavior.state_from_result: Callable[[ToolResultContext], StatePayload | None]; "
        "ag_ui_strands/agent.py, after the tool's TOOL_CALL_RESULT (and its MESSAGES_SNAPSHOT): `snapshot = await "
        "maybe_await(behavior.state_from_result(result_context)); if snapshot: current_state.update(snapshot); yield "
        "StateSnapshotEvent(snapshot=snapshot)`, ToolResultContext.result_data being _extract_tool_result_data(content) "
        "(a text block's JSON parsed, json blocks unwrapped); before RUN_FINISHED the adapter writes "
        "StateSnapshotEvent(snapshot=current_state), which holds it again"
    ),
}


def main(out: Path) -> None:
    files = {}
    for run in common.RUNS:
        name = f"{run}.sse"
        common.save(out, name, asyncio.run(one(run)))
        files[name] = {"run": run, "protocol": "ag-ui", "shape": SHAPES[run]}
        name = f"state-{run}.sse"
        common.save(out, name, asyncio.run(one(run, state=True)))
        files[name] = {"run": run, "protocol": "ag-ui", "shape": STATE_SHAPE}
    vers = common.versions("ag_ui_strands", "strands-agents", "ag-ui-protocol", "fastapi")
    common.write_versions(out, "AWS Strands (ag-ui-strands)", vers, files, EVENTS)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
