"""LlamaIndex behind llama-index-protocols-ag-ui (get_ag_ui_workflow_router: its AGUIChatWorkflow
on a FastAPI router), driven in process through httpx's ASGI transport.

The model is llama-index-core's MockFunctionCallingLLM with a scripted response generator: a
tool call block, then the answer. The tool is a FunctionTool; LlamaIndex turns what it returns
into the tool message with str(), so
  correct, misquote, wrong-base  a dict {"result", "citation"}: the tool message is its Python
                                 repr ({'result': {...}, 'citation': {...}})
  wrong-number                   a JSON string of {"result", "citation"}
"""

import asyncio
import json
import sys
from pathlib import Path

from fastapi import FastAPI
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools import FunctionTool
from llama_index.protocols.ag_ui.router import get_ag_ui_workflow_router

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402


def llm(run: str) -> MockFunctionCallingLLM:
    answer = common.RUNS[run]["answer"]

    def respond(messages, **kwargs) -> ChatMessage:
        if any(m.role == MessageRole.TOOL for m in messages):
            return ChatMessage(role=MessageRole.ASSISTANT, content=answer)
        call = ToolCallBlock(tool_call_id="call_funnel_1", tool_name=common.TOOL_NAME, tool_kwargs={"wave": "W6"})
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[call])

    return MockFunctionCallingLLM(response_generator=respond)


def tool(run: str) -> FunctionTool:
    def versant_funnel(wave: str):
        """The Versant brand funnel among adults aware of the brand, with its Upperhand citation."""
        p = common.payload(run)
        return json.dumps(p) if run == "wrong-number" else p

    return FunctionTool.from_defaults(fn=versant_funnel, name=common.TOOL_NAME, description=common.TOOL_DESCRIPTION)


async def one(run: str) -> bytes:
    app = FastAPI()
    app.include_router(get_ag_ui_workflow_router(llm=llm(run), backend_tools=[tool(run)]), prefix="/agent")
    return await common.post_run(app, "/agent/run", run)


def main(out: Path) -> None:
    files = {}
    for run in common.RUNS:
        name = f"{run}.sse"
        common.save(out, name, asyncio.run(one(run)))
        shape = (
            "a JSON string {result, citation} as the tool message content"
            if run == "wrong-number"
            else "a dict {result, citation}: the tool message content is its Python repr"
        )
        files[name] = {"run": run, "protocol": "ag-ui", "shape": f"{shape}, in TOOL_CALL_RESULT and in every MESSAGES_SNAPSHOT under new message ids"}
    vers = common.versions("llama-index-protocols-ag-ui", "llama-index-core", "ag-ui-protocol", "fastapi")
    common.write_versions(out, "LlamaIndex (llama-index-protocols-ag-ui)", vers, files)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
