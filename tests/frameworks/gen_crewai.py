"""CrewAI behind ag-ui-crewai (add_crewai_flow_fastapi_endpoint), driven in process through
httpx's ASGI transport.

The Flow's start method runs a CrewAI Agent with one BaseTool; the Agent's model is a BaseLLM
subclass (CrewAI's interface for custom models) answering from a script in CrewAI's ReAct text
format: an Action for the tool, then the Final Answer. ag-ui-crewai reports the completed
backend tool call (ToolUsageFinishedEvent) as TOOL_CALL_START/ARGS/END/RESULT and repeats it in
MESSAGES_SNAPSHOT. The tool returns
  correct, misquote, wrong-base  a dict {"result", "citation"}
  wrong-number                   a JSON string of {"result", "citation"}
"""

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch of the cost map

from crewai import Agent  # noqa: E402
from crewai.flow.flow import Flow, start  # noqa: E402
from crewai.llms.base_llm import BaseLLM  # noqa: E402
from crewai.tools import BaseTool  # noqa: E402
from fastapi import FastAPI  # noqa: E402
from pydantic import BaseModel  # noqa: E402

from ag_ui_crewai import CopilotKitState, add_crewai_flow_fastapi_endpoint  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402


class ScriptedLLM(BaseLLM):
    """Answers in CrewAI's ReAct format: the tool's Action first, the Final Answer once the
    Observation is in the conversation."""

    answer: str = ""

    def call(self, messages, tools=None, callbacks=None, available_functions=None, from_task=None, from_agent=None, response_model=None):
        text = messages if isinstance(messages, str) else "\n".join(str(m.get("content", "")) for m in messages)
        if "extractFunnel" not in text:
            return f'Thought: I need the W6 funnel.\nAction: {common.TOOL_NAME}\nAction Input: {{"wave": "W6"}}'
        return f"Thought: I now know the final answer\nFinal Answer: {self.answer}"

    def supports_function_calling(self) -> bool:
        return False

    def supports_stop_words(self) -> bool:
        return False

    def get_context_window_size(self) -> int:
        return 8192


class FunnelArgs(BaseModel):
    wave: str


def make_tool(run: str) -> BaseTool:
    class FunnelTool(BaseTool):
        name: str = common.TOOL_NAME
        description: str = common.TOOL_DESCRIPTION
        args_schema: type[BaseModel] = FunnelArgs

        def _run(self, wave: str) -> Any:
            p = common.payload(run)
            return json.dumps(p) if run == "wrong-number" else p

    return FunnelTool()


def flow(run: str) -> Flow:
    class VersantFlow(Flow[CopilotKitState]):
        @start()
        async def chat(self):
            analyst = Agent(
                role="Versant analyst",
                goal="Answer questions about the Versant funnel from the versant_funnel tool",
                backstory="An analyst of the Versant Mega Tracker.",
                llm=ScriptedLLM(model="scripted", answer=common.RUNS[run]["answer"]),
                tools=[make_tool(run)],
                verbose=False,
            )
            result = await analyst.kickoff_async(common.QUESTION)
            self.state.messages.append({"role": "assistant", "content": result.raw, "id": f"answer-{run}"})

    return VersantFlow()


async def one(run: str) -> bytes:
    app = FastAPI()
    add_crewai_flow_fastapi_endpoint(app, flow(run), "/flow")
    return await common.post_run(app, "/flow", run)


def main(out: Path) -> None:
    files = {}
    for run in common.RUNS:
        name = f"{run}.sse"
        common.save(out, name, asyncio.run(one(run)))
        shape = "a JSON string {result, citation}" if run == "wrong-number" else "a dict {result, citation}"
        files[name] = {"run": run, "protocol": "ag-ui", "shape": f"{shape} as TOOL_CALL_RESULT.content, repeated in MESSAGES_SNAPSHOT"}
    vers = common.versions("ag-ui-crewai", "crewai", "ag-ui-protocol", "fastapi")
    common.write_versions(out, "CrewAI (ag-ui-crewai)", vers, files)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
