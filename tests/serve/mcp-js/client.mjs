#!/usr/bin/env node
// The official MCP TypeScript SDK's client (@modelcontextprotocol/sdk) against `recite serve`'s
// MCP endpoint: a second client, independent of the Python one (tests/serve/clients.py).
//
//   node tests/serve/mcp-js/client.mjs URL CITATION [CASE]
//
// URL is the endpoint (http://HOST:PORT/mcp); CITATION a citation file ({citation, result} or a
// bare citation); CASE the id of a case saved in the server's ledger. Over streamable HTTP with
// the SDK's own handshake (protocol 2025-11-25: the SDK speaks no later one), it lists the tools,
// calls each (the SDK validates structured results against the tool's output schema and throws
// when they do not match), lists the resources and their templates, reads the catalog, the
// extractors and the case, and ends the session (DELETE; the SDK throws on a failure). Prints
// one JSON object; any error an SDK call threw, by step, under `errors`.
//
// The package comes from the cache install.sh fills: $RECITE_SDK_CACHE/mcp-js, by default
// ${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk/mcp-js. Exit 3 when it is not installed.

import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const cacheRoot =
  process.env.RECITE_SDK_CACHE ??
  path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "recite-sdk");
const jsDir = path.join(cacheRoot, "mcp-js");
// The package's `./*` export maps package.json into dist/: read it, and import the entry
// points, by their place in the tree.
const sdkDir = path.join(jsDir, "node_modules", "@modelcontextprotocol", "sdk");
let Client, StreamableHTTPClientTransport, version;
try {
  version = JSON.parse(readFileSync(path.join(sdkDir, "package.json"), "utf8")).version;
  ({ Client } = await import(path.join(sdkDir, "dist/esm/client/index.js")));
  ({ StreamableHTTPClientTransport } = await import(path.join(sdkDir, "dist/esm/client/streamableHttp.js")));
} catch (e) {
  process.stderr.write(`@modelcontextprotocol/sdk is not installed in ${jsDir} (tests/serve/mcp-js/install.sh): ${e}\n`);
  process.exit(3);
}

const [url, citationFile, caseId] = process.argv.slice(2);
const cited = JSON.parse(readFileSync(citationFile, "utf8"));
const citation = cited && typeof cited === "object" && "citation" in cited ? cited.citation : cited;
const result = cited && typeof cited === "object" && "result" in cited ? cited.result : undefined;

const out = { sdk: version, errors: {} };
const step = async (name, f) => {
  try {
    return await f();
  } catch (e) {
    out.errors[name] = `${e?.name ?? "Error"}: ${e?.message ?? e}`;
    return undefined;
  }
};

const transport = new StreamableHTTPClientTransport(new URL(url));
const client = new Client({ name: "recite-test-mcp-js", version: "1.0.0" });
await step("connect", () => client.connect(transport));
out.protocol_version = transport.protocolVersion ?? null;
out.session = Boolean(transport.sessionId);
out.capabilities = client.getServerCapabilities() ?? null;

const tools = await step("listTools", () => client.listTools());
out.tools = (tools?.tools ?? []).map((t) => ({ name: t.name, has_output_schema: Boolean(t.outputSchema) }));
const call = async (name, args) => {
  const r = await step(`callTool:${name}`, () => client.callTool({ name, arguments: args }));
  return r ? { is_error: Boolean(r.isError), structured: r.structuredContent ?? null } : null;
};
out.verify = await call("verify_citation", result === undefined ? { citation } : { citation, result });
out.catalog = await call("list_catalog", {});
out.extractors = await call("list_extractors", {});

const listed = await step("listResources", () => client.listResources());
out.resources = (listed?.resources ?? []).map((r) => ({ uri: r.uri, name: r.name, mime_type: r.mimeType ?? null }));
const templates = await step("listResourceTemplates", () => client.listResourceTemplates());
out.templates = (templates?.resourceTemplates ?? []).map((t) => ({ uri_template: t.uriTemplate, name: t.name }));
out.read = {};
for (const uri of ["recite://catalog", "recite://extractors", ...(caseId ? [`recite://cases/${caseId}`] : [])]) {
  const r = await step(`readResource:${uri}`, () => client.readResource({ uri }));
  out.read[uri] = r ? r.contents.map((c) => ({ uri: c.uri, mime_type: c.mimeType ?? null, text: c.text ?? null })) : null;
}
out.missing = await client.readResource({ uri: "recite://nothing" }).then(
  () => null,
  (e) => ({ code: e?.code ?? null, message: String(e?.message ?? e) }),
);

await step("terminateSession", () => transport.terminateSession());
out.session_after_termination = Boolean(transport.sessionId);
await step("close", () => client.close());
process.stdout.write(JSON.stringify(out) + "\n");
