"""AWS Strands behind ag-ui-strands (StrandsAgent, add_strands_fastapi_endpoint), driven in
process through httpx's ASGI transport.

The model is a strands.models.Model subclass that streams Strands' own stream events from a
script: a toolUse block, then the answer's text. The tool returns
  correct, misquote  a ToolResult whose content is two json blocks: the result, the citation Part
  wrong-number       a dict {"result", "citation"} (Strands serialises it as one text block of JSON)
  wrong-base         a Pydantic model {result, citation} (model_dump_json into one text block)
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


def agent(run: str) -> Agent:
    @tool(name=common.TOOL_NAME, description=common.TOOL_DESCRIPTION)
    def versant_funnel(wave: str):
        p = common.payload(run)
        if run in ("correct", "misquote"):
            return {"status": "success", "content": [{"json": p["result"]}, {"json": common.citation_part(run)}]}
        if run == "wrong-base":
            return CitedResult(**p)
        return p

    return Agent(model=ScriptedModel(common.RUNS[run]["answer"]), tools=[versant_funnel], callback_handler=None)


async def one(run: str) -> bytes:
    app = FastAPI()
    add_strands_fastapi_endpoint(app, StrandsAgent(agent(run), name="versant"), "/agent")
    return await common.post_run(app, "/agent", run)


SHAPES = {
    "correct": "ToolResult content blocks [{json: result}, {json: citation Part}]",
    "misquote": "ToolResult content blocks [{json: result}, {json: citation Part}]",
    "wrong-number": "dict {result, citation}, serialised by Strands as one text block of JSON",
    "wrong-base": "Pydantic model {result, citation}, serialised by Strands as one text block of JSON",
}


def main(out: Path) -> None:
    files = {}
    for run in common.RUNS:
        name = f"{run}.sse"
        common.save(out, name, asyncio.run(one(run)))
        files[name] = {"run": run, "protocol": "ag-ui", "shape": SHAPES[run]}
    vers = common.versions("ag_ui_strands", "strands-agents", "ag-ui-protocol", "fastapi")
    common.write_versions(out, "AWS Strands (ag-ui-strands)", vers, files)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
