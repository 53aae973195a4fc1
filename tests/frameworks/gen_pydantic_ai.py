"""Pydantic AI over AG-UI (its own AGUIAdapter) and over A2A (fasta2a's agent_to_a2a, the
replacement for Pydantic AI 1's Agent.to_a2a), driven in process through httpx's ASGI transport.

The model is Pydantic AI's FunctionModel with a scripted stream function: a tool call, then
the answer. Over AG-UI the tool returns a Pydantic model {result, citation} (correct, misquote,
wrong-base) or a dict (wrong-number); the AG-UI adapter serialises either to a JSON string.
fasta2a never puts tool calls or tool returns on the wire (its worker keeps only the model's
text parts), so over A2A the result and its citation travel as the agent's structured output:
the output type is the same Pydantic model, which fasta2a writes as one data Part
`{"result": <output>}` of the task's `result` artifact, beside the answer text.
"""

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
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
    vers = common.versions("pydantic-ai-slim", "fasta2a", "ag-ui-protocol", "starlette", "httpx")
    common.write_versions(out, "Pydantic AI (AG-UI adapter, fasta2a)", vers, files)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
