// Writes A2A fixtures with the JS SDK (@a2a-js/sdk): its Express handlers, types and encoders.
//
// Run by gen.sh with NODE_PATH-free resolution: the node_modules folder lives in the cache
// (gen.sh passes it as argv[3] and this file imports the SDK from there). The SDK's
// DefaultRequestHandler with an InMemoryTaskStore is served by its jsonRpcHandler and
// restHandler (legacyCompat enabled, so the same app speaks v0.3) on a loopback port; the
// bodies are written exactly as the server sent them, except for the task and context ids,
// which the SDK draws at random and which are renamed after generation (see `normalise`).
// Timestamps are the agent's own (fixed). The agent's claims are in agent_data.json.
//
// The push runs register a webhook with the request (v0.3 `pushNotificationConfig`, v1.0
// `taskPushNotificationConfig`) on a server whose card declares push notifications and whose
// sender is the SDK's `createLegacyAwarePushNotificationSender` (so a v0.3 registration gets
// v0.3 bodies); a listener on another loopback port keeps each body the SDK POSTed, in order.

import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const [out, nodeModules] = process.argv.slice(2);
const need = (spec) => import(pathToFileURL(createRequire(join(nodeModules, 'x.js')).resolve(spec)).href);

const sdk = await need('@a2a-js/sdk');
const server = await need('@a2a-js/sdk/server');
const expressSdk = await need('@a2a-js/sdk/server/express');
const clientSdk = await need('@a2a-js/sdk/client');
const compatServer = await need('@a2a-js/sdk/compat/v0_3/server');
const express = (await need('express')).default;

const { Part, Message, Task, StreamResponse, Role, TaskState } = sdk;
const { DefaultRequestHandler, InMemoryTaskStore, InMemoryPushNotificationStore, AgentEvent } = server;
const { jsonRpcHandler, restHandler, UserBuilder } = expressSdk;

const AGENT = JSON.parse(readFileSync(join(here, 'agent_data.json'), 'utf8'));
const CITATIONS = 'application/vnd.upperhand.citations+json';
const QUESTION = "What does Versant's funnel look like in W6, and W5's consideration?";

/** A typed SDK object: the type's defaults (its own fromJSON of {}) with these fields set. */
const make = (Type, fields) => ({ ...Type.fromJSON({}), ...fields });

const text = (t) => make(Part, { content: { $case: 'text', value: t } });
const data = (v, mediaType = '') => make(Part, { content: { $case: 'data', value: v }, mediaType });

/** Timestamps the agent stamps on its status updates. */
function clock() {
  let s = 10;
  return () => `2026-05-04T09:12:${String(s++).padStart(2, '0')}Z`;
}

/** The same agent as gen_py.py: one result and its citation per artifact, the wrong claim last. */
class CitingAgent {
  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const ts = clock();
    const names = ['status', 'answer'];
    const agentMessage = (parts) =>
      make(Message, { messageId: `${taskId}-${names.shift()}`, taskId, contextId, role: Role.ROLE_AGENT, parts });
    const status = (state, message) =>
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: make(sdk.TaskStatus, { state, message, timestamp: ts() }), metadata: undefined }));
    const artifact = (artifactId, name, parts, append, lastChunk) =>
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: make(sdk.Artifact, { artifactId, name, parts }),
          append,
          lastChunk,
          metadata: undefined,
        }),
      );
    bus.publish(
      AgentEvent.task(
        make(Task, {
          id: taskId,
          contextId,
          status: make(sdk.TaskStatus, { state: TaskState.TASK_STATE_SUBMITTED, timestamp: ts() }),
          history: [ctx.userMessage],
        }),
      ),
    );
    status(TaskState.TASK_STATE_WORKING, agentMessage([text('Running extractFunnel on versant_flat for W5 and W6.')]));
    const a = AGENT;
    artifact('versant-funnel-w6', 'Versant funnel, W6',
      [text('Versant brand funnel, W6 (April 2026).'), data(a.funnel_w6, 'application/json')], false, false);
    artifact('versant-funnel-w6', '', [data(a.citation_w6, CITATIONS)], true, true);
    artifact('versant-strings-w6', 'Versant considered, W6 (as text)',
      [data(a.strings_w6), data(a.citation_w6, a.odd_media_type)], false, true);
    artifact('versant-whole-w6', 'Versant considered, W6 (whole percent)',
      [data(a.whole_w6), data(a.citation_w6, CITATIONS)], false, true);
    artifact('versant-scalar-w6', 'Versant considered, W6 (bare number)',
      [data(a.scalar_w6), data(a.citation_w6, CITATIONS)], false, true);
    artifact('versant-considered-w5', 'Versant considered, W5',
      [data(a.considered_w5, 'application/json'), data([a.citation_w5], CITATIONS)], false, true);
    const raw = make(Part, {
      content: { $case: 'raw', value: Buffer.from(JSON.stringify(a.citation_corvana_w6)) },
      mediaType: CITATIONS,
      filename: 'citation.json',
    });
    artifact('corvana-funnel-w6', 'Corvana funnel, W6', [data(a.funnel_corvana_w6, 'application/json'), raw], false, true);
    status(
      TaskState.TASK_STATE_COMPLETED,
      agentMessage([
        text('Consideration among aware adults is 47% in W6; the funnels are attached.'),
        data(a.wrong_w6, 'application/json'),
        data(a.citation_w6, CITATIONS),
      ]),
    );
    bus.finished();
  }

  async cancelTask() {
    throw new Error('not cancellable');
  }
}

function agentCard(base, push = false) {
  const iface = (url, protocolBinding, protocolVersion) => ({ url, protocolBinding, protocolVersion, tenant: '' });
  return sdk.AgentCard.fromJSON({
    name: 'Versant insights analyst',
    description: 'Brand-tracker numbers with Upperhand citations.',
    version: '1.0.0',
    supportedInterfaces: [
      iface(`${base}/rpc`, 'JSONRPC', '1.0'),
      iface(`${base}/rest`, 'HTTP+JSON', '1.0'),
      iface(`${base}/rpc`, 'JSONRPC', '0.3'),
      iface(`${base}/rest`, 'HTTP+JSON', '0.3'),
    ],
    capabilities: push ? { streaming: true, pushNotifications: true } : { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['application/json', CITATIONS],
    skills: [{ id: 'funnel', name: 'Brand funnel', description: 'Funnel shares for a brand and wave, with citations.', tags: ['brand-tracker'] }],
  });
}

/** A fresh server on a loopback port; with `push`, its card declares push notifications and the
 * SDK's wire-version-aware sender POSTs them (v0.3 bodies for a v0.3 registration). */
async function start({ push = false } = {}) {
  const app = express();
  const srv = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${srv.address().port}`;
  const store = push ? new InMemoryPushNotificationStore() : undefined;
  const sender = push ? compatServer.createLegacyAwarePushNotificationSender(store) : undefined;
  const handler = new DefaultRequestHandler(agentCard(base, push), new InMemoryTaskStore(), new CitingAgent(), undefined, store, sender);
  const legacyCompat = { enabled: true };
  app.use(express.json());
  app.use('/rpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat }));
  app.use('/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat }));
  return { base, card: agentCard(base, push), close: () => new Promise((r) => srv.close(r)) };
}

/** A webhook on a loopback port: keeps every POSTed body (its bytes, as received) in order. */
async function webhook(token) {
  const bodies = [];
  let waiting = null;
  const srv = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const problem =
        req.method !== 'POST' ? `method ${req.method}` :
        req.headers['x-a2a-notification-token'] !== token ? `token ${req.headers['x-a2a-notification-token']}` : null;
      bodies.push({ body, contentType: req.headers['content-type'], problem });
      res.writeHead(200).end();
      if (waiting) waiting();
    });
  });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${srv.address().port}/notify`,
    bodies,
    /** Waits until `done(bodies)` holds, or fails after `ms`. */
    until: (done, ms = 10000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`webhook: gave up after ${ms} ms with ${bodies.length} bodies`)), ms);
        const check = () => {
          if (done(bodies)) {
            clearTimeout(timer);
            waiting = null;
            resolve(bodies);
          }
        };
        waiting = check;
        check();
      }),
    /** Waits `ms` more so a late duplicate would be seen, then closes. */
    close: async (ms = 300) => {
      await new Promise((r) => setTimeout(r, ms));
      await new Promise((r) => srv.close(r));
    },
  };
}

const V10 = { 'A2A-Version': '1.0', 'Content-Type': 'application/json' };
const V03 = { 'Content-Type': 'application/json' };

function userMessage(run) {
  return make(Message, { messageId: `${run}-user-1`, role: Role.ROLE_USER, parts: [text(QUESTION)] });
}
const sendRequest = (run) => sdk.SendMessageRequest.toJSON(make(sdk.SendMessageRequest, { message: userMessage(run) }));
const v03Params = (run) => ({ message: { kind: 'message', messageId: `${run}-user-1`, role: 'user', parts: [{ kind: 'text', text: QUESTION }] } });
const rpc = (method, params, id) => ({ jsonrpc: '2.0', id, method, params });

/** Renames the SDK's random task and context ids (UUIDs) to `<run>-task-1`, `<run>-ctx-1`. */
function normalise(body, run, ids) {
  const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
  return body.replace(uuid, (u) => {
    if (!ids.has(u)) {
      // The SDK writes a task's `id` before its `contextId`, so the first UUID is the task's.
      if (ids.size === 2) throw new Error(`${run}: a third random id ${u}; only the task and context ids are expected`);
      ids.set(u, `${run}-${ids.size === 0 ? 'task' : 'ctx'}-1`);
    }
    return ids.get(u);
  });
}

const files = {};
function write(name, body, binding, note) {
  if (!body.trim()) throw new Error(`${name}: empty body`);
  writeFileSync(join(out, name), body);
  files[name] = { sdk: '@a2a-js/sdk', binding, note };
  console.log(`  wrote ${name} (${body.length} bytes)`);
}

async function post(url, body, headers, what) {
  const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const t = await r.text();
  if (!r.ok || /^\{"jsonrpc":"2.0","id":[^,]*,"error"/.test(t)) throw new Error(`${what}: HTTP ${r.status}: ${t.slice(0, 500)}`);
  return t;
}

async function get(url, headers, what) {
  const r = await fetch(url, { headers });
  const t = await r.text();
  if (!r.ok) throw new Error(`${what}: HTTP ${r.status}: ${t.slice(0, 500)}`);
  return t;
}

/** The task id in a body whose first UUID is the task id (the SDK writes `id` first). */
const firstUuid = (t) => t.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/)[0];

async function run(name, fn, options) {
  const s = await start(options);
  const ids = new Map();
  try {
    await fn(s, (body) => normalise(body, name, ids));
  } finally {
    await s.close();
  }
}

mkdirSync(out, { recursive: true });

await run('js-jsonrpc', async (s, norm) => {
  const send = await post(`${s.base}/rpc`, rpc('SendMessage', sendRequest('js-jsonrpc'), 'send-1'), V10, 'SendMessage');
  const taskId = JSON.parse(send).result.task.id;
  write('js-jsonrpc-send-message.json', norm(send), 'jsonrpc', 'SendMessage response (blocking)');
  const got = await post(`${s.base}/rpc`, rpc('GetTask', { id: taskId }, 'get-1'), V10, 'GetTask');
  write('js-jsonrpc-get-task.json', norm(got), 'jsonrpc', 'GetTask response');
});
await run('js-sse', async (s, norm) => {
  const body = await post(`${s.base}/rpc`, rpc('SendStreamingMessage', sendRequest('js-sse'), 'stream-1'),
    { ...V10, Accept: 'text/event-stream' }, 'SendStreamingMessage');
  write('js-jsonrpc-stream.sse', norm(body), 'sse', 'SendStreamingMessage SSE stream');
});
await run('js-rest', async (s, norm) => {
  const send = await post(`${s.base}/rest/message:send`, sendRequest('js-rest'), V10, 'REST message:send');
  write('js-rest-send-message.json', norm(send), 'rest', 'POST /message:send response');
  const got = await get(`${s.base}/rest/tasks/${firstUuid(send)}`, V10, 'REST GET task');
  write('js-rest-get-task.json', norm(got), 'rest', 'GET /tasks/{id} response');
});
await run('js-rest-sse', async (s, norm) => {
  const body = await post(`${s.base}/rest/message:stream`, sendRequest('js-rest-sse'), { ...V10, Accept: 'text/event-stream' }, 'REST message:stream');
  write('js-rest-stream.sse', norm(body), 'rest', 'POST /message:stream SSE stream');
});
// No A2A-Version header: the SDK reads that as 0.3 and answers through legacyCompat.
await run('js-v03', async (s, norm) => {
  const send = await post(`${s.base}/rpc`, rpc('message/send', v03Params('js-v03'), 'send-1'), V03, 'message/send');
  write('js-v03-jsonrpc-message-send.json', norm(send), 'v03-adapter', 'v0.3 message/send through legacyCompat');
  const got = await post(`${s.base}/rpc`, rpc('tasks/get', { id: JSON.parse(send).result.id }, 'get-1'), V03, 'tasks/get');
  write('js-v03-jsonrpc-tasks-get.json', norm(got), 'v03-adapter', 'v0.3 tasks/get through legacyCompat');
});
await run('js-v03-sse', async (s, norm) => {
  const body = await post(`${s.base}/rpc`, rpc('message/stream', v03Params('js-v03-sse'), 'stream-1'),
    { ...V03, Accept: 'text/event-stream' }, 'message/stream');
  write('js-v03-jsonrpc-stream.sse', norm(body), 'v03-adapter', 'v0.3 message/stream SSE through legacyCompat');
});
await run('js-v03-rest', async (s, norm) => {
  // The v0.3 REST binding speaks the v0.3 proto's JSON: the message under `message`, Parts under `content`.
  const body = { message: { messageId: 'js-v03-rest-user-1', role: 'ROLE_USER', content: [{ text: QUESTION }] } };
  const send = await post(`${s.base}/rest/v1/message:send`, body, V03, 'v0.3 REST message:send');
  write('js-v03-rest-message-send.json', norm(send), 'v03-adapter', 'v0.3 REST POST /v1/message:send through legacyCompat');
});
// Push notifications: the webhook is registered with the request itself, so every event of the
// task is POSTed. Each body is one line of JSON (the SDK's JSON.stringify), kept as JSON lines.
const pushLog = (hook, norm, what) => {
  for (const [i, b] of hook.bodies.entries()) {
    if (b.problem) throw new Error(`${what}: notification ${i + 1}: ${b.problem}`);
    if (b.body.includes('\n')) throw new Error(`${what}: notification ${i + 1} is not one line`);
    JSON.parse(b.body);
  }
  return norm(hook.bodies.map((b) => b.body).join('\n') + '\n');
};
await run('js-v03-push', async (s, norm) => {
  // v0.3 (no A2A-Version header): the compat serializer POSTs the whole v0.3 Task for every event.
  const hook = await webhook('js-v03-push-token');
  const params = {
    ...v03Params('js-v03-push'),
    configuration: { blocking: true, pushNotificationConfig: { id: 'js-v03-push-config', url: hook.url, token: 'js-v03-push-token' } },
  };
  await post(`${s.base}/rpc`, rpc('message/send', params, 'send-1'), V03, 'message/send (push)');
  await hook.until((bs) => bs.some((b) => JSON.parse(b.body).status?.state === 'completed'));
  await hook.close();
  const types = new Set(hook.bodies.map((b) => b.contentType));
  write('js-v03-push-notifications.jsonl', pushLog(hook, norm, 'v0.3 push'), 'v03-push',
    `v0.3 push notifications (message/send with pushNotificationConfig through legacyCompat, createLegacyAwarePushNotificationSender): the ${hook.bodies.length} bodies POSTed to the webhook, in order, one per line (Content-Type ${[...types].join(', ')}); each is the whole v0.3 Task so far, so every artifact and its citation recurs in each later body`);
}, { push: true });
await run('js-push', async (s, norm) => {
  // v1.0: the SDK's V1PushNotificationSerializer POSTs each event as a StreamResponse.
  const hook = await webhook('js-push-token');
  const request = make(sdk.SendMessageRequest, {
    message: userMessage('js-push'),
    configuration: make(sdk.SendMessageConfiguration, {
      taskPushNotificationConfig: make(sdk.TaskPushNotificationConfig, { id: 'js-push-config', url: hook.url, token: 'js-push-token' }),
    }),
  });
  await post(`${s.base}/rpc`, rpc('SendMessage', sdk.SendMessageRequest.toJSON(request), 'send-1'), V10, 'SendMessage (push)');
  await hook.until((bs) => bs.some((b) => JSON.parse(b.body).statusUpdate?.status?.state === 'TASK_STATE_COMPLETED'));
  await hook.close();
  const types = new Set(hook.bodies.map((b) => b.contentType));
  write('js-push-notifications.jsonl', pushLog(hook, norm, 'v1.0 push'), 'push',
    `v1.0 push notifications (SendMessage with taskPushNotificationConfig): the ${hook.bodies.length} StreamResponse bodies POSTed to the webhook, in order, one per line (Content-Type ${[...types].join(', ')})`);
}, { push: true });
await run('js-client', async (s, norm) => {
  // The SDK client's own stream, each event written with the SDK's StreamResponse.toJSON.
  const factory = new clientSdk.ClientFactory();
  const client = await factory.createFromAgentCard(s.card);
  const docs = [];
  for await (const ev of client.sendMessageStream(make(sdk.SendMessageRequest, { message: userMessage('js-client') }))) {
    docs.push(JSON.stringify(StreamResponse.toJSON(ev), null, 2));
  }
  write('js-client-log.json', norm(docs.join('\n') + '\n'), 'client-log', 'Client.sendMessageStream events, StreamResponse.toJSON each, concatenated');
});

const pkg = (name) => JSON.parse(readFileSync(join(nodeModules, name, 'package.json'), 'utf8')).version;
writeFileSync(
  join(out, 'versions-js.json'),
  JSON.stringify({ versions: { '@a2a-js/sdk': pkg('@a2a-js/sdk'), express: pkg('express'), node: process.versions.node }, files }, null, 2) + '\n',
);
