"""An A2A agent served by the official Python SDK (a2a-sdk), for `recite probe` to call.

    python agent.py VARIANT [BINDING [CARD_VERSION]]

VARIANT is what its one skill, `funnel`, answers with: an artifact holding the Versant W6
funnel (tests/sdk/a2a/agent_data.json, over the bundled data) as a JSON data Part and, in the
same artifact,
  conforming  its Upperhand citation Part (REPRODUCED on the bundled data);
  uncited     no citation Part (the "Conformance (probed)" rule's MUST);
  discrepant  the citation, beside {"Considered": "47%"} (W5's value: DISCREPANT);
  string-n    the citation with base.n written as the string "4654" (required fields: MUST);
  undeclared  as conforming, but the card lists only application/json in defaultOutputModes
              (the media type declared nowhere: the card's SHOULD).
BINDING (JSONRPC by default, or HTTP+JSON) is the interface the card lists first. CARD_VERSION
1.0 (the default) serves the SDK's card; 0.3 serves the v0.3 card the SDK's own conversion
(`to_compat_agent_card`) makes of it, so a client calls the v0.3 compatibility adapter.

The SDK's own Starlette routes (card, JSON-RPC, REST, v0.3 compatibility on) run under uvicorn
on a loopback port the OS picks; the port is printed on standard output, one line, once the
server listens. Nothing here is recite's: the card, the bodies and the SSE framing are the SDK's.
"""

import asyncio
import json
import socket
import sys

from pathlib import Path

import uvicorn

from google.protobuf import json_format, struct_pb2
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from a2a.compat.v0_3.conversions import to_compat_agent_card
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2 as pb


HERE = Path(__file__).resolve().parent
AGENT = json.loads((HERE.parent / 'sdk' / 'a2a' / 'agent_data.json').read_text())
CITATIONS = 'application/vnd.upperhand.citations+json'
VARIANTS = ('conforming', 'uncited', 'discrepant', 'string-n', 'undeclared')


def data_part(obj, media_type: str) -> pb.Part:
    return pb.Part(data=json_format.ParseDict(obj, struct_pb2.Value()), media_type=media_type)


class FunnelAgent(AgentExecutor):
    """A scripted analyst: whatever it is asked, the Versant W6 funnel, as VARIANT says."""

    def __init__(self, variant: str) -> None:
        self.variant = variant

    async def execute(self, context: RequestContext, event_queue) -> None:
        await event_queue.enqueue_event(
            pb.Task(
                id=context.task_id,
                context_id=context.context_id,
                status=pb.TaskStatus(state=pb.TaskState.TASK_STATE_SUBMITTED),
                history=[context.message],
            )
        )
        up = TaskUpdater(event_queue, context.task_id, context.context_id)
        await up.start_work()
        citation = dict(AGENT['citation_w6'])
        result = AGENT['funnel_w6']
        if self.variant == 'discrepant':
            result = AGENT['wrong_w6']
        if self.variant == 'string-n':
            citation['base'] = dict(citation['base'], n=str(citation['base']['n']))
        parts = [pb.Part(text='Versant brand funnel, W6 (April 2026).'), data_part(result, 'application/json')]
        if self.variant != 'uncited':
            parts.append(data_part(citation, CITATIONS))
        await up.add_artifact(parts, artifact_id='versant-funnel-w6', name='Versant funnel, W6')
        await up.complete(up.new_agent_message([pb.Part(text='Done: the Versant funnel for W6.')]))

    async def cancel(self, context: RequestContext, event_queue) -> None:
        raise NotImplementedError


def card(base: str, binding: str, version: str) -> pb.AgentCard:
    c = pb.AgentCard(
        name='Versant insights analyst (' + sys.argv[1] + ')',
        description='Brand-tracker numbers with Upperhand citations.',
        version='1.0.0',
        default_input_modes=['text/plain'],
        default_output_modes=['application/json'] if sys.argv[1] == 'undeclared' else ['application/json', CITATIONS],
        capabilities=pb.AgentCapabilities(streaming=True),
        skills=[
            pb.AgentSkill(
                id='funnel',
                name='Brand funnel',
                description='Funnel shares for a brand and wave, with citations.',
                tags=['brand-tracker'],
                examples=['What is the Versant funnel in W6?'],
            )
        ],
    )
    order = ['JSONRPC', 'HTTP+JSON'] if binding == 'JSONRPC' else ['HTTP+JSON', 'JSONRPC']
    for b in order:
        url = base + ('/rpc' if b == 'JSONRPC' else '')
        c.supported_interfaces.append(pb.AgentInterface(url=url, protocol_binding=b, protocol_version=version))
    return c


def main() -> None:
    variant = sys.argv[1]
    binding = sys.argv[2] if len(sys.argv) > 2 else 'JSONRPC'
    card_version = sys.argv[3] if len(sys.argv) > 3 else '1.0'
    if variant not in VARIANTS or binding not in ('JSONRPC', 'HTTP+JSON') or card_version not in ('1.0', '0.3'):
        sys.exit(f'usage: agent.py {"|".join(VARIANTS)} [JSONRPC|HTTP+JSON [1.0|0.3]]')
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    the_card = card(f'http://127.0.0.1:{port}', binding, card_version)
    handler = DefaultRequestHandler(
        agent_executor=FunnelAgent(variant), task_store=InMemoryTaskStore(), agent_card=the_card
    )
    if card_version == '1.0':
        routes = create_agent_card_routes(the_card)
    else:
        v03 = to_compat_agent_card(the_card).model_dump(mode='json', by_alias=True, exclude_none=True)
        routes = [Route('/.well-known/agent-card.json', lambda request: JSONResponse(v03))]
    routes += create_jsonrpc_routes(handler, '/rpc', enable_v0_3_compat=True)
    routes += create_rest_routes(handler, enable_v0_3_compat=True)
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=routes), log_level='warning'))

    async def serve() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.02)
        print(port, flush=True)
        await task

    asyncio.run(serve())


if __name__ == '__main__':
    main()
