"""The official Python clients against recite's service (tests/it/serve.rs runs this).

    clients.py mcp-stdio RECITE DATA CITATION TRANSCRIPT   MCP over stdio (`RECITE mcp --data DATA`)
    clients.py mcp-http URL CITATION TRANSCRIPT [MODE]     MCP over streamable HTTP at URL (…/mcp)
    clients.py mcp-resources URL MODE [CASE]               MCP resources: list, templates, read
    clients.py mcp-sessions URL MAX                        MCP sessions: MAX open, one more refused
    clients.py a2a BASE CITATION TRANSCRIPT                A2A: card, send, get, stream (JSON-RPC, REST)

CITATION is a citation file (a citation, or {citation, result}); TRANSCRIPT a transcript file.
MODE is the MCP client's `mode`: `legacy` (the 2025-11-25 handshake, a session), `2026-07-28`
(the stateless protocol, no session) or `auto` (the default: discover, else the handshake).
CASE is the id of a case saved in the server's ledger.
Prints one JSON object of what the clients received; the Rust test compares it with the
command line's reports for the same files. Clients: `mcp` (the official MCP Python SDK) and
`a2a-sdk` (the official A2A Python SDK), pinned in requirements.txt.
"""

import asyncio
import json
import sys
from pathlib import Path


def tool_out(result):
    """A CallToolResult as plain data."""
    return {
        'is_error': bool(result.is_error),
        'structured': result.structured_content,
        'text': [c.text for c in result.content if getattr(c, 'type', None) == 'text'],
    }


async def mcp_session(client, citation, transcript):
    tools = await client.list_tools()
    out = {
        'tools': [
            {
                'name': t.name,
                'input_schema': t.input_schema,
                'has_output_schema': t.output_schema is not None,
            }
            for t in tools.tools
        ]
    }
    cited = json.loads(citation)
    args = cited if isinstance(cited, dict) and 'citation' in cited else {'citation': cited}
    args = {k: v for k, v in args.items() if k in ('citation', 'result')}
    out['verify'] = tool_out(await client.call_tool('verify_citation', args))
    out['verify_claim'] = tool_out(
        await client.call_tool('verify_citation', {'citation': args['citation'], 'claims': ['Considered=99%']})
    )
    out['check'] = tool_out(await client.call_tool('check_transcript', {'text': transcript}))
    out['catalog'] = tool_out(await client.call_tool('list_catalog', {}))
    out['extractors'] = tool_out(await client.call_tool('list_extractors', {}))
    out['bad'] = tool_out(await client.call_tool('check_transcript', {}))
    # Over the server's --max-input-size (1 MiB, as the Rust tests start it): a tool error on
    # every transport, not a transport failure.
    out['oversize'] = tool_out(await client.call_tool('check_transcript', {'text': 'x' * (1536 << 10)}))
    return out


async def mcp_stdio(recite, data, citation, transcript):
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=recite, args=['mcp', '--data', data, '--max-input-size', '1MiB'])
    async with Client(params) as client:
        out = await mcp_session(client, citation, transcript)
        # The resources over stdio: the catalog and the extractors; no ledger, so no cases.
        out['protocol_version'] = client.protocol_version
        out['resources'] = [str(r.uri) for r in (await client.list_resources()).resources]
        out['templates'] = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        out['read_catalog'] = resource_text(await client.read_resource('recite://catalog'))
        try:
            out['read_cases'] = resource_text(await client.read_resource('recite://cases'))
        except Exception as e:  # noqa: BLE001 - the test reads what failed
            out['read_cases'] = {'error': mcp_failure(e)}
        return out


class Warnings:
    """The MCP client's own warnings (a failed session termination says so there)."""

    def __init__(self):
        import logging

        self.lines = []
        handler = logging.Handler(logging.WARNING)
        handler.emit = lambda record: self.lines.append(record.getMessage())
        logging.getLogger('mcp').addHandler(handler)


async def mcp_http(url, citation, transcript, mode='auto'):
    from mcp import Client

    warnings = Warnings()
    async with Client(url, mode=mode) as client:
        out = await mcp_session(client, citation, transcript)
        out['protocol_version'] = client.protocol_version
    out['warnings'] = warnings.lines
    return out


def mcp_failure(e):
    """What an MCP call raised: the JSON-RPC error's code and message, found inside the task
    groups' exception groups the client may wrap it in."""
    from mcp.shared.exceptions import MCPError

    if isinstance(e, MCPError):
        return {'code': e.error.code, 'message': e.error.message}
    for inner in getattr(e, 'exceptions', ()):
        found = mcp_failure(inner)
        if found.get('code') is not None:
            return found
    return {'code': None, 'message': f'{type(e).__name__}: {e}'}


def resource_text(result):
    """A ReadResourceResult's contents as (uri, mime type, text) rows."""
    return [
        {'uri': str(c.uri), 'mime_type': c.mime_type, 'text': getattr(c, 'text', None)} for c in result.contents
    ]


async def mcp_resources(url, mode, case=None):
    from mcp import Client

    out = {}
    async with Client(url, mode=mode) as client:
        out['protocol_version'] = client.protocol_version
        out['resources_capability'] = client.server_capabilities.resources is not None
        listed = await client.list_resources()
        out['resources'] = [
            {'uri': str(r.uri), 'name': r.name, 'mime_type': r.mime_type, 'description': r.description}
            for r in listed.resources
        ]
        templates = await client.list_resource_templates()
        out['templates'] = [
            {'uri_template': t.uri_template, 'name': t.name, 'mime_type': t.mime_type}
            for t in templates.resource_templates
        ]
        uris = ['recite://catalog', 'recite://extractors', 'recite://cases']
        if case:
            uris.append(f'recite://cases/{case}')
        out['read'] = {}
        for uri in uris:
            try:
                out['read'][uri] = resource_text(await client.read_resource(uri))
            except Exception as e:  # noqa: BLE001 - the test reads what failed
                out['read'][uri] = {'error': mcp_failure(e)}
        for uri in ('recite://cases/000000000000000000000000', 'recite://nothing', 'file:///etc/passwd'):
            try:
                out['read'][uri] = resource_text(await client.read_resource(uri))
            except Exception as e:  # noqa: BLE001
                out['read'][uri] = {'error': mcp_failure(e)}
    return out


async def mcp_sessions(url, most):
    """MOST clients of the 2025-11-25 protocol hold a session each; one more is refused; a
    client of the stateless 2026-07-28 protocol is served all the same; once one session is
    ended (DELETE), a new one opens."""
    from contextlib import AsyncExitStack

    from mcp import Client

    warnings = Warnings()
    out = {}
    async with AsyncExitStack() as stack:
        held = []
        for _ in range(most - 1):
            held.append(await stack.enter_async_context(Client(url, mode='legacy')))
        # The last one is ended by hand below (the innermost: the client's task groups close in
        # the order they opened).
        last = Client(url, mode='legacy')
        await last.__aenter__()
        out['held'] = [c.protocol_version for c in [*held, last]]
        try:
            async with Client(url, mode='legacy') as extra:
                await extra.list_tools()
            out['refused'] = None
        except Exception as e:  # noqa: BLE001 - the test reads what failed
            out['refused'] = mcp_failure(e)
        async with Client(url, mode='2026-07-28') as stateless:
            out['stateless_tools'] = len((await stateless.list_tools()).tools)
        # One session ends: its client sends DELETE on the way out.
        await last.__aexit__(None, None, None)
        async with Client(url, mode='legacy') as again:
            out['after_one_ended'] = len((await again.list_tools()).tools)
        # Still usable: the held sessions were not disturbed.
        out['held_still_work'] = [len((await c.list_tools()).tools) for c in held]
    out['warnings'] = warnings.lines
    return out


async def a2a(base, citation, transcript):
    import httpx
    from google.protobuf import json_format, struct_pb2
    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
    from a2a.types import a2a_pb2 as pb

    def dump(msg):
        return json_format.MessageToDict(msg)

    def data_part(obj, media_type):
        return pb.Part(data=json_format.ParseDict(obj, struct_pb2.Value()), media_type=media_type)

    out = {}
    async with httpx.AsyncClient(timeout=120) as http:
        card = await A2ACardResolver(http, base).get_agent_card()
        out['card'] = dump(card)
        cited = json.loads(citation)
        for binding in ('JSONRPC', 'HTTP+JSON'):
            factory = ClientFactory(
                ClientConfig(streaming=False, httpx_client=http, supported_protocol_bindings=[binding])
            )
            client = factory.create(card)
            message = pb.Message(
                message_id=f'verify-{binding}',
                role=pb.Role.ROLE_USER,
                parts=[data_part(cited, 'application/vnd.upperhand.citations+json')],
            )
            events = [dump(e) async for e in client.send_message(pb.SendMessageRequest(message=message))]
            task_id = next((e['task']['id'] for e in events if 'task' in e), None)
            got = await client.get_task(pb.GetTaskRequest(id=task_id)) if task_id else None
            out[f'send:{binding}'] = events
            out[f'get:{binding}'] = dump(got) if got else None
            await client.close()

            streaming = ClientFactory(
                ClientConfig(streaming=True, httpx_client=http, supported_protocol_bindings=[binding])
            ).create(card)
            message = pb.Message(
                message_id=f'check-{binding}',
                role=pb.Role.ROLE_USER,
                parts=[pb.Part(raw=transcript.encode(), media_type='application/json', filename='-')],
            )
            out[f'stream:{binding}'] = [
                dump(e) async for e in streaming.send_message(pb.SendMessageRequest(message=message))
            ]
            prose = pb.Message(
                message_id=f'prose-{binding}', role=pb.Role.ROLE_USER, parts=[pb.Part(text='is 44% right?')]
            )
            out[f'prose:{binding}'] = [
                dump(e) async for e in streaming.send_message(pb.SendMessageRequest(message=prose))
            ]
            # The claim as a sentence beside its citation: the sentence's numbers are settled.
            bare = cited['citation'] if isinstance(cited, dict) and 'citation' in cited else cited
            for label, sentence in (
                ('said44', '44% of aware adults considered Versant in W6'),
                ('said47', '47% of aware adults considered Versant in W6'),
            ):
                said = pb.Message(
                    message_id=f'{label}-{binding}',
                    role=pb.Role.ROLE_USER,
                    parts=[data_part(bare, 'application/vnd.upperhand.citations+json'), pb.Part(text=sentence)],
                )
                out[f'{label}:{binding}'] = [
                    dump(e) async for e in streaming.send_message(pb.SendMessageRequest(message=said))
                ]
            await streaming.close()
    return out


def main():
    mode, *args = sys.argv[1:]
    if mode == 'mcp-stdio':
        recite, data, citation, transcript = args
        out = asyncio.run(mcp_stdio(recite, data, Path(citation).read_text(), Path(transcript).read_text()))
    elif mode == 'mcp-http':
        url, citation, transcript, *how = args
        out = asyncio.run(mcp_http(url, Path(citation).read_text(), Path(transcript).read_text(), *how))
    elif mode == 'mcp-resources':
        out = asyncio.run(mcp_resources(*args))
    elif mode == 'mcp-sessions':
        url, most = args
        out = asyncio.run(mcp_sessions(url, int(most)))
    elif mode == 'a2a':
        base, citation, transcript = args
        out = asyncio.run(a2a(base, Path(citation).read_text(), Path(transcript).read_text()))
    else:
        sys.exit(f'clients.py: unknown mode {mode!r}')
    json.dump(out, sys.stdout)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
