"""LangGraph behind ag-ui-langgraph: a StateGraph (model node, ToolNode) served by
add_langgraph_fastapi_endpoint, driven in process through httpx's ASGI transport.

The model is langchain-core's GenericFakeChatModel, scripted: first a tool call, then the
answer. The tool returns its output three ways, as LangGraph tools do:
  correct, misquote  a content-block list: the result and the citation Part as two text blocks
                     (ag-ui-langgraph joins them into one string: two JSON documents back to back)
  wrong-number       a dict {"result", "citation"} (LangChain serialises it as one JSON string)
  wrong-base         a Command updating the graph state: {"result", "citation"} under the state
                     key `funnel` (STATE_SNAPSHOT), the ToolMessage saying only where it went
"""

import asyncio
import itertools
import json
import sys
from pathlib import Path
from typing import Annotated, Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

SHAPES = {
    "correct": "content-block list: TOOL_CALL_RESULT.content is the result and the citation Part joined ({...}{...}); repeated in MESSAGES_SNAPSHOT",
    "misquote": "content-block list: TOOL_CALL_RESULT.content is the result and the citation Part joined ({...}{...}); repeated in MESSAGES_SNAPSHOT",
    "wrong-number": "dict: TOOL_CALL_RESULT.content is one JSON string {result, citation}; repeated in MESSAGES_SNAPSHOT",
    "wrong-base": "state update: {result, citation} under STATE_SNAPSHOT.snapshot.funnel; the tool message is text",
}


class State(MessagesState):
    funnel: dict[str, Any]


class ScriptedModel(GenericFakeChatModel):
    """GenericFakeChatModel that accepts bound tools and streams a scripted tool call as one
    chunk (its own `_stream` streams text only and drops tool calls)."""

    def bind_tools(self, tools, **kwargs):
        return self

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):
        message = next(self.messages)
        if not message.tool_calls:
            self.messages = itertools.chain([message], self.messages)
            yield from super()._stream(messages, stop=stop, run_manager=run_manager, **kwargs)
            return
        chunks = [
            {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i, "type": "tool_call_chunk"}
            for i, c in enumerate(message.tool_calls)
        ]
        chunk = ChatGenerationChunk(message=AIMessageChunk(content="", id="ai-tool-call", tool_call_chunks=chunks, chunk_position="last"))
        if run_manager:
            run_manager.on_llm_new_token("", chunk=chunk)
        yield chunk


def make_tool(run: str):
    @tool(common.TOOL_NAME, description=common.TOOL_DESCRIPTION)
    def versant_funnel(wave: str, tool_call_id: Annotated[str, InjectedToolCallId]):
        p = common.payload(run)
        if run in ("correct", "misquote"):
            return [
                {"type": "text", "text": json.dumps(p["result"])},
                {"type": "text", "text": json.dumps(common.citation_part(run))},
            ]
        if run == "wrong-base":
            return Command(update={
                "funnel": p,
                "messages": [ToolMessage("The funnel is in the shared state (funnel).", tool_call_id=tool_call_id)],
            })
        return p

    return versant_funnel


def graph(run: str, checkpointer=True):
    tools = [make_tool(run)]
    model = ScriptedModel(messages=iter([
        AIMessage(content="", tool_calls=[{"name": common.TOOL_NAME, "args": {"wave": "W6"}, "id": "call_funnel_1"}]),
        AIMessage(content=common.RUNS[run]["answer"], id="ai-answer"),
    ]))

    def agent(state: State):
        return {"messages": [model.bind_tools(tools).invoke(state["messages"])]}

    g = StateGraph(State)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode(tools))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    # The LangGraph API server (gen_langgraph_js.mjs) brings its own persistence.
    return g.compile(checkpointer=MemorySaver() if checkpointer else None)


async def one(run: str) -> bytes:
    # Imported here: langgraph_server/graphs.py imports graph() into the API server, which needs neither.
    from ag_ui_langgraph import LangGraphAgent, add_langgraph_fastapi_endpoint
    from fastapi import FastAPI

    app = FastAPI()
    add_langgraph_fastapi_endpoint(app, LangGraphAgent(name="versant", graph=graph(run)), "/agent")
    return await common.post_run(app, "/agent", run)


def main(out: Path) -> None:
    files = {}
    for run in common.RUNS:
        data = asyncio.run(one(run))
        name = f"{run}.sse"
        common.save(out, name, data)
        files[name] = {"run": run, "protocol": "ag-ui", "shape": SHAPES[run]}
    vers = common.versions("ag-ui-langgraph", "langgraph", "langchain-core", "ag-ui-protocol", "fastapi")
    common.write_versions(out, "LangGraph (ag-ui-langgraph)", vers, files)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
