"""A Pydantic AI agent served by fasta2a (the A2A server Pydantic AI's `to_a2a` became), for
`recite probe` to call.

    python fasta2a_agent.py VARIANT

Its model is Pydantic AI's FunctionModel with a scripted stream: call the `versant_funnel` tool,
then give the tool's return as the agent's structured output (`CitedResult`). The tool returns
the Versant W6 funnel (tests/sdk/a2a/agent_data.json, true of the bundled data) and its
Upperhand citation.

fasta2a never puts tool calls or returns on the wire: its AgentWorker writes the run's output as
the task's `result` artifact, by default one data Part `{"result": <output>}`. The worker is
meant to be specialised there (`build_artifacts` is its hook), and fasta2a's Part has a
`media_type`: this agent's worker writes the output as two Parts of the same artifact, the
result (`application/json`) and the citation (`application/vnd.upperhand.citations+json`), as
the spec asks. The app is fasta2a's FastA2A, built as `agent_to_a2a` builds it, with the card's
`defaultOutputModes` given (agent_to_a2a does not pass them on). VARIANT:
  conforming  the result and its citation Part (REPRODUCED on the bundled data);
  uncited     the result alone (the "Conformance (probed)" rule's MUST);
  discrepant  {"Considered": "47%"} beside the citation (W5's value: DISCREPANT);
  string-n    the citation with base.n written as the string "4654" (required fields);
  undeclared  as conforming, the card's output modes fasta2a's default (["application/json"]):
              the media type is declared nowhere (the card's SHOULD).

uvicorn serves the app on a loopback port the OS picks; the port is printed on standard output,
one line, once the server listens.
"""

import asyncio
import json
import socket
import sys
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import uvicorn
from fasta2a import FastA2A
from fasta2a.broker import InMemoryBroker
from fasta2a.pydantic_ai import AgentWorker
from fasta2a.pydantic_ai._bridge import worker_lifespan
from fasta2a.schema import Artifact, Part, Skill
from fasta2a.storage import InMemoryStorage
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

HERE = Path(__file__).resolve().parent
AGENT = json.loads((HERE.parent / 'sdk' / 'a2a' / 'agent_data.json').read_text())
CITATIONS = 'application/vnd.upperhand.citations+json'
VARIANTS = ('conforming', 'uncited', 'discrepant', 'string-n', 'undeclared')


class CitedResult(BaseModel):
    """A result with the Upperhand citation that says where it comes from (none when uncited)."""

    result: dict[str, Any]
    citation: dict[str, Any] | None = None


def tool_result(variant: str) -> dict:
    if variant == 'uncited':
        return {'result': AGENT['funnel_w6']}
    citation = dict(AGENT['citation_w6'])
    if variant == 'string-n':
        citation['base'] = dict(citation['base'], n=str(citation['base']['n']))
    result = AGENT['wrong_w6'] if variant == 'discrepant' else AGENT['funnel_w6']
    return {'result': result, 'citation': citation}


def model() -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo):
        returned = [
            p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)
        ]
        if not returned:
            yield {0: DeltaToolCall(name='versant_funnel', json_args=json.dumps({'wave': 'W6'}), tool_call_id='call_funnel_1')}
            return
        output = info.output_tools[0].name
        args = json.dumps(returned[-1].content)
        yield {0: DeltaToolCall(name=output, json_args=args, tool_call_id='call_output_1')}

    return FunctionModel(stream_function=stream, model_name='scripted')


def agent(variant: str) -> Agent:
    a = Agent(model(), name='versant', output_type=CitedResult)

    @a.tool_plain
    def versant_funnel(wave: str) -> dict:
        """The Versant brand funnel among adults aware of the brand, with its Upperhand citation."""
        return tool_result(variant)

    return a


class CitingWorker(AgentWorker):
    """fasta2a's worker for a Pydantic AI agent, writing a CitedResult as the result's Part and,
    beside it in the same artifact, the citation as a Part of the citations media type."""

    def build_artifacts(self, result: CitedResult) -> list[Artifact]:
        parts = [Part(data=result.result, media_type='application/json')]
        if result.citation is not None:
            parts.append(Part(data=result.citation, media_type=CITATIONS))
        return [Artifact(artifact_id=str(uuid.uuid4()), name='result', parts=parts)]


def app(variant: str, url: str) -> FastA2A:
    storage, broker = InMemoryStorage(), InMemoryBroker()
    the_agent = agent(variant)
    worker = CitingWorker(agent=the_agent, broker=broker, storage=storage)
    outputs = ['application/json'] if variant == 'undeclared' else ['application/json', CITATIONS]
    skill = Skill(
        id='funnel',
        name='Brand funnel',
        description='Funnel shares for a brand and wave, with citations.',
        tags=['brand-tracker'],
        examples=['What is the Versant funnel in W6?'],
        input_modes=['text/plain'],
        output_modes=outputs,
    )
    return FastA2A(
        storage=storage,
        broker=broker,
        name='Versant insights analyst (' + variant + ')',
        url=url,
        description='Brand-tracker numbers with Upperhand citations.',
        skills=[skill],
        default_output_modes=outputs,
        lifespan=partial(worker_lifespan, worker=worker, agent=the_agent),
    )


def main() -> None:
    variant = sys.argv[1] if len(sys.argv) > 1 else ''
    if variant not in VARIANTS:
        sys.exit(f'usage: fasta2a_agent.py {"|".join(VARIANTS)}')
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app(variant, f'http://127.0.0.1:{port}/'), log_level='warning'))

    async def serve() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.02)
        print(port, flush=True)
        await task

    asyncio.run(serve())


if __name__ == '__main__':
    main()
