"""Writes A2A fixtures with the Python SDK (a2a-sdk): its own server, types and serialisers.

Run by gen.sh inside a throwaway venv. The SDK's Starlette app (DefaultRequestHandler,
InMemoryTaskStore, JSON-RPC and REST routes with the v0.3 compatibility adapter enabled) is
driven in process through httpx's ASGI transport: no network. Every response body is written
as the server sent it; the client log is the SDK client's own StreamResponse objects, each
written with protobuf's MessageToJson, one after another.

Ids come from counters and timestamps are fixed (TaskUpdater.update_status takes one). One
thing is normalised after generation: protobuf's Struct is a map, and the Python runtime (upb)
iterates it in an order that changes from run to run, so the keys of every object inside a
`data` value are put back in the order the agent wrote them (agent_data.json). The rewrite is
checked to change nothing but that order (see `normalise`). So a rerun writes the same bytes.

The push runs register a webhook with the request itself (v1.0 `taskPushNotificationConfig`,
v0.3 `pushNotificationConfig` through the v0.3 adapter) on a server whose card declares push
notifications, with the SDK's InMemoryPushNotificationConfigStore and
BasePushNotificationSender (an httpx client of its own); a listener on a loopback port keeps
each body the sender POSTed, in order. The SDK has no v0.3 push serialiser: a v0.3
registration gets the same v1.0 StreamResponse bodies.
"""

import asyncio
import base64
import itertools
import json
import sys
import threading
import time

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version
from pathlib import Path

import httpx

from google.protobuf import json_format, struct_pb2
from starlette.applications import Starlette

from a2a.client import ClientConfig, ClientFactory
from a2a.compat.v0_3 import a2a_v0_3_pb2 as v03_pb
from a2a.compat.v0_3 import types as v03
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.agent_execution.simple_request_context_builder import (
    SimpleRequestContextBuilder,
)
from a2a.server.id_generator import IDGenerator, IDGeneratorContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import a2a_pb2 as pb
from a2a.utils import constants


HERE = Path(__file__).resolve().parent
AGENT = json.loads((HERE / 'agent_data.json').read_text())
CITATIONS = 'application/vnd.upperhand.citations+json'
BASE = 'http://agent.test'
SDK = 'a2a-sdk'


class Names(IDGenerator):
    """Deterministic ids from a list of names: prefix-name, in turn."""

    def __init__(self, prefix: str, names: list[str]) -> None:
        self.names = iter(f'{prefix}-{n}' for n in names)

    def generate(self, context: IDGeneratorContext) -> str:
        return next(self.names)


class Counter(IDGenerator):
    """Deterministic ids: prefix-1, prefix-2, …"""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.n = itertools.count(1)

    def generate(self, context: IDGeneratorContext) -> str:
        return f'{self.prefix}-{next(self.n)}'


def value(obj) -> struct_pb2.Value:
    """A JSON value as google.protobuf.Value (how the SDK carries a data Part)."""
    return json_format.ParseDict(obj, struct_pb2.Value())


def data_part(obj, media_type: str | None = None) -> pb.Part:
    part = pb.Part(data=value(obj))
    if media_type:
        part.media_type = media_type
    return part


def text_part(text: str) -> pb.Part:
    return pb.Part(text=text)


class CitingAgent(AgentExecutor):
    """An analyst agent that answers with results and Upperhand citation Parts.

    Every artifact holds one result and the citation it rests on; the final status message
    carries the wrong claim of issue 9 (W5's 47% beside a W6 citation).
    """

    async def execute(self, context: RequestContext, event_queue) -> None:
        task_id, context_id = context.task_id, context.context_id
        ts = iter(f'2026-05-04T09:12:{s:02d}Z' for s in range(10, 60))
        status_ts = pb.TaskStatus(state=pb.TaskState.TASK_STATE_SUBMITTED)
        status_ts.timestamp.FromJsonString(next(ts))
        await event_queue.enqueue_event(
            pb.Task(
                id=task_id,
                context_id=context_id,
                status=status_ts,
                history=[context.message],
            )
        )
        up = TaskUpdater(
            event_queue,
            task_id,
            context_id,
            message_id_generator=Names(task_id, ['status', 'answer']),
        )
        await up.update_status(
            pb.TaskState.TASK_STATE_WORKING,
            message=up.new_agent_message(
                [text_part('Running extractFunnel on versant_flat for W5 and W6.')]
            ),
            timestamp=next(ts),
        )
        a = AGENT
        # A funnel streamed in two chunks: the result, then (append, lastChunk) its citation.
        await up.add_artifact(
            [
                text_part('Versant brand funnel, W6 (April 2026).'),
                data_part(a['funnel_w6'], 'application/json'),
            ],
            artifact_id='versant-funnel-w6',
            name='Versant funnel, W6',
            append=False,
            last_chunk=False,
        )
        await up.add_artifact(
            [data_part(a['citation_w6'], CITATIONS)],
            artifact_id='versant-funnel-w6',
            append=True,
            last_chunk=True,
        )
        # Numbers as strings; the citation's media type in odd case with a parameter.
        await up.add_artifact(
            [
                data_part(a['strings_w6']),
                data_part(a['citation_w6'], a['odd_media_type']),
            ],
            artifact_id='versant-strings-w6',
            name='Versant considered, W6 (as text)',
            last_chunk=True,
        )
        # Whole numbers: google.protobuf.Value is double-only, so 44 and 4654 go out as 44.0.
        await up.add_artifact(
            [data_part(a['whole_w6']), data_part(a['citation_w6'], CITATIONS)],
            artifact_id='versant-whole-w6',
            name='Versant considered, W6 (whole percent)',
            last_chunk=True,
        )
        # A non-object result (a bare number) and, next, a citation sent as a list.
        await up.add_artifact(
            [data_part(a['scalar_w6']), data_part(a['citation_w6'], CITATIONS)],
            artifact_id='versant-scalar-w6',
            name='Versant considered, W6 (bare number)',
            last_chunk=True,
        )
        await up.add_artifact(
            [
                data_part(a['considered_w5'], 'application/json'),
                data_part([a['citation_w5']], CITATIONS),
            ],
            artifact_id='versant-considered-w5',
            name='Versant considered, W5',
            last_chunk=True,
        )
        # The citation as bytes: a v1.0 raw Part (base64 in JSON) with the citations media type.
        raw = pb.Part(
            raw=json.dumps(a['citation_corvana_w6']).encode(),
            media_type=CITATIONS,
            filename='citation.json',
        )
        await up.add_artifact(
            [data_part(a['funnel_corvana_w6'], 'application/json'), raw],
            artifact_id='corvana-funnel-w6',
            name='Corvana funnel, W6',
            last_chunk=True,
        )
        final = up.new_agent_message(
            [
                text_part(
                    'Consideration among aware adults is 47% in W6; the funnels are attached.'
                ),
                data_part(a['wrong_w6'], 'application/json'),
                data_part(a['citation_w6'], CITATIONS),
            ]
        )
        await up.update_status(
            pb.TaskState.TASK_STATE_COMPLETED, message=final, timestamp=next(ts)
        )

    async def cancel(self, context: RequestContext, event_queue) -> None:
        raise NotImplementedError


def agent_card(push: bool = False) -> pb.AgentCard:
    card = pb.AgentCard(
        name='Versant insights analyst',
        description='Brand-tracker numbers with Upperhand citations.',
        version='1.0.0',
        default_input_modes=['text/plain'],
        default_output_modes=['application/json', CITATIONS],
        capabilities=pb.AgentCapabilities(streaming=True, push_notifications=push or None),
        skills=[
            pb.AgentSkill(
                id='funnel',
                name='Brand funnel',
                description='Funnel shares for a brand and wave, with citations.',
                tags=['brand-tracker'],
            )
        ],
    )
    for binding in ('JSONRPC', 'HTTP+JSON'):
        card.supported_interfaces.append(
            pb.AgentInterface(
                url=BASE + ('/rpc' if binding == 'JSONRPC' else ''),
                protocol_binding=binding,
                protocol_version='1.0',
            )
        )
    return card


def app(run: str, push_client: httpx.AsyncClient | None = None) -> Starlette:
    """A fresh server; task and context ids are numbered per run.

    With `push_client`, the card declares push notifications and the SDK's
    BasePushNotificationSender POSTs them through that client.
    """
    push = {}
    if push_client is not None:
        store = InMemoryPushNotificationConfigStore()
        push = {'push_config_store': store, 'push_sender': BasePushNotificationSender(push_client, store)}
    card = agent_card(push=push_client is not None)
    handler = DefaultRequestHandler(
        agent_executor=CitingAgent(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        request_context_builder=SimpleRequestContextBuilder(
            task_id_generator=Counter(f'{run}-task'),
            context_id_generator=Counter(f'{run}-ctx'),
        ),
        **push,
    )
    routes = []
    routes += create_agent_card_routes(card)
    routes += create_jsonrpc_routes(handler, '/rpc', enable_v0_3_compat=True)
    routes += create_rest_routes(handler, enable_v0_3_compat=True)
    return Starlette(routes=routes)


def user_message(run: str) -> pb.Message:
    return pb.Message(
        message_id=f'{run}-user-1',
        role=pb.Role.ROLE_USER,
        parts=[text_part("What does Versant's funnel look like in W6, and W5's consideration?")],
    )


def user_message_v03(run: str) -> v03.Message:
    return v03.Message(
        message_id=f'{run}-user-1',
        role=v03.Role.user,
        parts=[
            v03.Part(
                root=v03.TextPart(
                    text="What does Versant's funnel look like in W6, and W5's consideration?"
                )
            )
        ],
    )


V10 = {constants.VERSION_HEADER: constants.PROTOCOL_VERSION_1_0}


def rpc(method: str, params, rid: str) -> dict:
    return {'jsonrpc': '2.0', 'id': rid, 'method': method, 'params': params}


def send_request(run: str, blocking: bool = True) -> dict:
    req = pb.SendMessageRequest(message=user_message(run))
    req.configuration.return_immediately = not blocking
    return json_format.MessageToDict(req)


def v03_params(run: str) -> dict:
    p = v03.MessageSendParams(message=user_message_v03(run))
    return p.model_dump(mode='json', by_alias=True, exclude_none=True)


def v03_rest_request(run: str) -> dict:
    """The v0.3 REST body: the v0.3 proto's SendMessageRequest in ProtoJSON."""
    req = v03_pb.SendMessageRequest(
        request=v03_pb.Message(
            message_id=f'{run}-user-1',
            role=v03_pb.Role.ROLE_USER,
            content=[
                v03_pb.Part(
                    text="What does Versant's funnel look like in W6, and W5's consideration?"
                )
            ],
        )
    )
    return json_format.MessageToDict(req)


def _key_orders(v, out: dict) -> dict:
    """The key order of every object the agent writes, by its key set."""
    if isinstance(v, dict):
        out.setdefault(frozenset(v), list(v))
        for x in v.values():
            _key_orders(x, out)
    elif isinstance(v, list):
        for x in v:
            _key_orders(x, out)
    return out


KEY_ORDERS = _key_orders(AGENT, {})


def _reorder(v, inside_data: bool = False):
    if isinstance(v, list):
        return [_reorder(x, inside_data) for x in v]
    if not isinstance(v, dict):
        return v
    items = list(v.items())
    if inside_data:
        order = KEY_ORDERS.get(frozenset(v)) or sorted(v)
        items = [(k, v[k]) for k in order]
    return {k: _reorder(x, inside_data or k == 'data') for k, x in items}


STYLES = [
    {'separators': (',', ':'), 'ensure_ascii': False},
    {'separators': (',', ':'), 'ensure_ascii': True},
    {'separators': (', ', ': '), 'ensure_ascii': False},
    {'separators': (', ', ': '), 'ensure_ascii': True},
    {'indent': 2, 'ensure_ascii': False},
    {'indent': 2, 'ensure_ascii': True},
]


def normalise(doc: str) -> str:
    """One JSON document with the keys inside `data` values in the agent's order.

    The document is re-written in the style (separators, indent, escaping) that reproduces it
    byte for byte as it is, so the only change is the key order.
    """
    value = json.loads(doc)
    for style in STYLES:
        if json.dumps(value, **style) == doc:
            return json.dumps(_reorder(value), **style)
    sys.exit(f'cannot reproduce the serialiser style of: {doc[:200]}')


def normalise_body(body: bytes) -> bytes:
    """A JSON body, or an SSE stream whose `data:` lines are JSON."""
    text = body.decode()
    if text.lstrip().startswith('{') or text.lstrip().startswith('['):
        return normalise(text).encode()
    lines = text.splitlines(keepends=True)
    out = []
    for line in lines:
        content = line.rstrip('\r\n')
        if content.startswith('data: '):
            line = 'data: ' + normalise(content[6:]) + line[len(content):]
        out.append(line)
    return ''.join(out).encode()


class Writer:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.files: dict[str, dict] = {}

    def write(self, name: str, body: bytes, binding: str, note: str, raw: bool = False) -> None:
        if not body.strip():
            sys.exit(f'{name}: the server sent an empty body')
        (self.out / name).write_bytes(body if raw else normalise_body(body))
        self.files[name] = {'sdk': SDK, 'binding': binding, 'note': note}
        print(f'  wrote {name} ({len(body)} bytes)')


def check(r: httpx.Response, what: str) -> bytes:
    if r.status_code != 200:
        sys.exit(f'{what}: HTTP {r.status_code}: {r.text[:500]}')
    if b'"error"' in r.content[:200] and b'"jsonrpc"' in r.content[:200]:
        sys.exit(f'{what}: JSON-RPC error: {r.text[:500]}')
    return r.content


async def client_for(run: str):
    transport = httpx.ASGITransport(app=app(run))
    return httpx.AsyncClient(transport=transport, base_url=BASE)


async def gen_jsonrpc(w: Writer) -> None:
    run = 'py-jsonrpc'
    async with await client_for(run) as c:
        r = await c.post('/rpc', json=rpc('SendMessage', send_request(run), 'send-1'), headers=V10)
        body = check(r, 'SendMessage')
        w.write('py-jsonrpc-send-message.json', body, 'jsonrpc', 'SendMessage response (blocking)')
        task_id = json.loads(body)['result']['task']['id']
        r = await c.post(
            '/rpc', json=rpc('GetTask', {'id': task_id}, 'get-1'), headers=V10
        )
        w.write('py-jsonrpc-get-task.json', check(r, 'GetTask'), 'jsonrpc', 'GetTask response')
    run = 'py-sse'
    async with await client_for(run) as c:
        r = await c.post(
            '/rpc',
            json=rpc('SendStreamingMessage', send_request(run), 'stream-1'),
            headers={**V10, 'Accept': 'text/event-stream'},
        )
        w.write('py-jsonrpc-stream.sse', check(r, 'SendStreamingMessage'), 'sse', 'SendStreamingMessage SSE stream')


async def gen_rest(w: Writer) -> None:
    run = 'py-rest'
    async with await client_for(run) as c:
        r = await c.post('/message:send', json=send_request(run), headers=V10)
        body = check(r, 'REST message:send')
        w.write('py-rest-send-message.json', body, 'rest', 'POST /message:send response')
        task_id = json.loads(body)['task']['id']
        r = await c.get(f'/tasks/{task_id}', headers=V10)
        w.write('py-rest-get-task.json', check(r, 'REST GET task'), 'rest', 'GET /tasks/{id} response')
    run = 'py-rest-sse'
    async with await client_for(run) as c:
        r = await c.post(
            '/message:stream',
            json=send_request(run),
            headers={**V10, 'Accept': 'text/event-stream'},
        )
        w.write('py-rest-stream.sse', check(r, 'REST message:stream'), 'rest', 'POST /message:stream SSE stream')


async def gen_v03(w: Writer) -> None:
    # No A2A-Version header: the SDK reads that as 0.3 and answers through its v0.3 adapter.
    run = 'py-v03'
    async with await client_for(run) as c:
        r = await c.post('/rpc', json=rpc('message/send', v03_params(run), 'send-1'))
        body = check(r, 'message/send')
        w.write('py-v03-jsonrpc-message-send.json', body, 'v03-adapter', 'v0.3 message/send through the compat adapter')
        task_id = json.loads(body)['result']['id']
        r = await c.post('/rpc', json=rpc('tasks/get', {'id': task_id}, 'get-1'))
        w.write('py-v03-jsonrpc-tasks-get.json', check(r, 'tasks/get'), 'v03-adapter', 'v0.3 tasks/get through the compat adapter')
    run = 'py-v03-sse'
    async with await client_for(run) as c:
        r = await c.post(
            '/rpc',
            json=rpc('message/stream', v03_params(run), 'stream-1'),
            headers={'Accept': 'text/event-stream'},
        )
        w.write('py-v03-jsonrpc-stream.sse', check(r, 'message/stream'), 'v03-adapter', 'v0.3 message/stream SSE through the compat adapter')
    run = 'py-v03-rest'
    async with await client_for(run) as c:
        r = await c.post('/v1/message:send', json=v03_rest_request(run))
        w.write('py-v03-rest-message-send.json', check(r, 'v0.3 REST message:send'), 'v03-adapter', 'v0.3 REST POST /v1/message:send through the compat adapter')


class Webhook:
    """A listener on a loopback port: keeps every POSTed body (its bytes) and headers, in order."""

    def __init__(self, token: str) -> None:
        self.bodies: list[tuple[bytes, dict]] = []
        self.token = token
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
                hook.bodies.append((body, dict(self.headers)))
                self.send_response(200)
                self.send_header('Content-Length', '0')
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.url = f'http://127.0.0.1:{self.server.server_address[1]}/notify'
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    async def until_completed(self, seconds: float = 10) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if any(b'TASK_STATE_COMPLETED' in b for b, _ in self.bodies):
                await asyncio.sleep(0.3)  # a late duplicate would show
                return
            await asyncio.sleep(0.05)
        sys.exit(f'webhook: gave up with {len(self.bodies)} bodies')

    def log(self, what: str) -> bytes:
        """The bodies as JSON lines, each checked to be one line of JSON with the token."""
        lines = []
        for i, (body, headers) in enumerate(self.bodies, 1):
            if headers.get('X-A2A-Notification-Token') != self.token:
                sys.exit(f'{what}: notification {i}: token {headers.get("X-A2A-Notification-Token")}')
            if b'\n' in body:
                sys.exit(f'{what}: notification {i} is not one line')
            lines.append(normalise(body.decode()))
        return ('\n'.join(lines) + '\n').encode()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


async def gen_push(w: Writer) -> None:
    """Push notifications: the webhook registered with the request, so every event is POSTed."""
    for run, name, v03_run in (
        ('py-push', 'py-push-notifications.jsonl', False),
        ('py-v03-push', 'py-v03-push-notifications.jsonl', True),
    ):
        hook = Webhook(f'{run}-token')
        config = {'id': f'{run}-config', 'url': hook.url, 'token': f'{run}-token'}
        async with httpx.AsyncClient() as push_client:
            transport = httpx.ASGITransport(app=app(run, push_client))
            async with httpx.AsyncClient(transport=transport, base_url=BASE) as c:
                if v03_run:
                    params = {**v03_params(run), 'configuration': {'blocking': True, 'pushNotificationConfig': config}}
                    r = await c.post('/rpc', json=rpc('message/send', params, 'send-1'))
                    check(r, 'message/send (push)')
                else:
                    req = pb.SendMessageRequest(message=user_message(run))
                    req.configuration.task_push_notification_config.CopyFrom(pb.TaskPushNotificationConfig(**config))
                    r = await c.post('/rpc', json=rpc('SendMessage', json_format.MessageToDict(req), 'send-1'), headers=V10)
                    check(r, 'SendMessage (push)')
                await hook.until_completed()
        hook.close()
        types = sorted({h.get('Content-Type') for _, h in hook.bodies})
        n = len(hook.bodies)
        if v03_run:
            note = (
                'v0.3 message/send with pushNotificationConfig through the compat adapter: the '
                f'{n} bodies BasePushNotificationSender POSTed to the webhook, in order, one per line '
                f'(Content-Type {", ".join(types)}); a2a-sdk has no v0.3 push serialiser, so they are '
                'v1.0 StreamResponses (MessageToDict)'
            )
        else:
            note = (
                f'v1.0 push notifications (SendMessage with taskPushNotificationConfig): the {n} '
                'StreamResponse bodies BasePushNotificationSender POSTed to the webhook (MessageToDict), '
                f'in order, one per line (Content-Type {", ".join(types)})'
            )
        w.write(name, hook.log(run), 'push', note, raw=True)


async def gen_client_log(w: Writer) -> None:
    """The SDK client's own events, each logged with MessageToJson (pretty, concatenated)."""
    run = 'py-client'
    http = await client_for(run)
    factory = ClientFactory(ClientConfig(streaming=True, httpx_client=http))
    client = factory.create(agent_card())
    out = []
    async for event in client.send_message(
        pb.SendMessageRequest(message=user_message(run))
    ):
        out.append(normalise(json_format.MessageToJson(event)))
    await client.close()
    await http.aclose()
    body = '\n'.join(out).encode() + b'\n'
    w.write('py-client-log.json', body, 'client-log', 'Client.send_message stream events, MessageToJson each, concatenated', raw=True)


async def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    w = Writer(out)
    await gen_jsonrpc(w)
    await gen_rest(w)
    await gen_v03(w)
    await gen_push(w)
    await gen_client_log(w)
    versions = {
        'a2a-sdk': version('a2a-sdk'),
        'protobuf': version('protobuf'),
        'starlette': version('starlette'),
        'sse-starlette': version('sse-starlette'),
        'httpx': version('httpx'),
        'python': sys.version.split()[0],
    }
    (out / 'versions-py.json').write_text(
        json.dumps({'versions': versions, 'files': w.files}, indent=2) + '\n'
    )


if __name__ == '__main__':
    asyncio.run(main())
