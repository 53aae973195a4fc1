"""An agent of Google's ADK served by ADK's own A2A export (`to_a2a`, on a2a-sdk), for
`recite probe` to call.

    python adk_agent.py VARIANT

Its model is a BaseLlm subclass with a script (call the `versant_funnel` tool, then say it is
done); the tool returns the Versant W6 funnel (tests/sdk/a2a/agent_data.json, true of the
bundled data). ADK puts a tool's return value on the wire as it puts every function response:
a data Part `{id, name, response}` with metadata `adk_type: function_response` in the status
update's message, the dict the tool returned under `response`. Its part converter never sets a
data Part's media type (`_compat.make_data_part`); a Part of the citations media type could only
be a bytes-backed file Part (a genai `inline_data` blob), so the citation travels where ADK puts
tool output, beside the result in the same data Part, as the framework corpus records it.
VARIANT is what the tool returns:
  conforming  {result, citation} (REPRODUCED on the bundled data);
  uncited     the result alone (the "Conformance (probed)" rule's MUST);
  discrepant  {result: {"Considered": "47%"}, citation} (W5's value: DISCREPANT);
  string-n    {result, citation} with base.n written as the string "4654" (required fields);
  undeclared  as conforming, but the card is the one ADK builds (defaultOutputModes
              ["text/plain"]: the media type is declared nowhere, the card's SHOULD).
Every other variant's card is ADK's own with the citations media type added to
defaultOutputModes and passed back through to_a2a(agent_card=...).

uvicorn serves the app on a loopback port the OS picks; the port is printed on standard output,
one line, once the server listens.
"""

import asyncio
import warnings
import json
import socket
import sys
from pathlib import Path
from typing import AsyncGenerator

import uvicorn
from google.adk.a2a.utils.agent_card_builder import AgentCardBuilder
from google.adk.a2a.utils.agent_to_a2a import to_a2a
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

HERE = Path(__file__).resolve().parent
AGENT = json.loads((HERE.parent / 'sdk' / 'a2a' / 'agent_data.json').read_text())
CITATIONS = 'application/vnd.upperhand.citations+json'
VARIANTS = ('conforming', 'uncited', 'discrepant', 'string-n', 'undeclared')


def tool_result(variant: str) -> dict:
    citation = dict(AGENT['citation_w6'])
    if variant == 'uncited':
        return AGENT['funnel_w6']
    if variant == 'string-n':
        citation['base'] = dict(citation['base'], n=str(citation['base']['n']))
    result = AGENT['wrong_w6'] if variant == 'discrepant' else AGENT['funnel_w6']
    return {'result': result, 'citation': citation}


class ScriptedLlm(BaseLlm):
    """Calls the funnel tool once, then says it is done (no number in its text)."""

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1] if llm_request.contents else None
        if last is None or not any(p.function_response for p in (last.parts or [])):
            call = types.FunctionCall(name='versant_funnel', args={'wave': 'W6'}, id='call_funnel_1')
            yield LlmResponse(content=types.Content(role='model', parts=[types.Part(function_call=call)]))
            return
        yield LlmResponse(content=types.Content(role='model', parts=[types.Part(text='Done: the Versant funnel for W6.')]))


def agent(variant: str) -> LlmAgent:
    def versant_funnel(wave: str) -> dict:
        """The Versant brand funnel among adults aware of the brand, with its Upperhand citation."""
        return tool_result(variant)

    return LlmAgent(
        name='versant',
        description='Brand-tracker numbers with Upperhand citations.',
        model=ScriptedLlm(model='scripted'),
        instruction='Answer from the versant_funnel tool.',
        tools=[versant_funnel],
    )


def main() -> None:
    warnings.simplefilter('ignore')  # ADK's [EXPERIMENTAL] notices on every A2A class
    variant = sys.argv[1] if len(sys.argv) > 1 else ''
    if variant not in VARIANTS:
        sys.exit(f'usage: adk_agent.py {"|".join(VARIANTS)}')
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    the_agent = agent(variant)
    card = None
    if variant != 'undeclared':
        card = asyncio.run(AgentCardBuilder(agent=the_agent, rpc_url=f'http://127.0.0.1:{port}/').build())
        card.default_output_modes.append(CITATIONS)
    app = to_a2a(the_agent, host='127.0.0.1', port=port, agent_card=card)
    server = uvicorn.Server(uvicorn.Config(app, log_level='warning'))

    async def serve() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.02)
        print(port, flush=True)
        await task

    asyncio.run(serve())


if __name__ == '__main__':
    main()
