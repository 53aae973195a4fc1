//! recite as an MCP tool server, on the official MCP Rust SDK (`rmcp`): over standard input
//! and output (`recite mcp`) and over streamable HTTP at `/mcp` of `recite serve`.
//!
//! Tools, each with its input schema (from these types) and structured output:
//! `verify_citation` and `check_transcript` answer with the JSON report (its schema,
//! docs/report.schema.json, is their output schema), `list_catalog` and `list_extractors` with
//! the data layer and the registered functions. A request the service cannot settle (too
//! large, busy, past its time limit, a claim that does not parse) is a tool error saying why,
//! not a protocol error, so the calling model reads it.
//!
//! Resources, for a host that lets its user attach context rather than call a tool:
//! `recite://catalog` and `recite://extractors` (what `list_catalog` and `list_extractors`
//! answer), and, where there is a ledger (`recite serve`), `recite://cases` (the newest saved
//! cases) and each case as `recite://cases/{id}` (a template; the newest are listed too), the
//! case as `GET /v1/cases/{id}` answers it, its JSON report included.

use std::sync::{Arc, OnceLock};

use tokio::sync::Mutex;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, JsonObject, ListResourceTemplatesResult,
    ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use recite_core::report::ReportFormat;

use crate::TextOrJson;
use crate::extract::BodyLimits;
use crate::ledger::{self, Ledger};
use crate::{Problem, Service};

/// The tools and resources, over the process's one service (and its ledger, when it has one).
#[derive(Clone)]
pub struct Tools {
    svc: Arc<Service>,
    cases: Option<Cases>,
}

/// The settled cases MCP reads: the ledger, and the base of their permalinks.
#[derive(Clone)]
pub struct Cases {
    /// The workbench's ledger.
    pub ledger: Arc<Ledger>,
    /// The URL the workbench is reached at (`--public-url`, else the address).
    pub base: String,
}

/// How many of the newest cases `resources/list` names, and `recite://cases` lists.
const CASES_LISTED: usize = 100;

/// `verify_citation`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyParams {
    /// The Upperhand citation: the data of an application/vnd.upperhand.citations+json Part
    /// (study, period, base {name, n}, weight, source {table, column, function}).
    pub citation: Value,
    /// The tool result the citation accompanies: its numeric leaves are the claimed numbers (a
    /// leaf named after a measure, e.g. "Considered", is compared with it; n or base_n with
    /// base n).
    #[serde(default)]
    pub result: Option<Value>,
    /// Claimed numbers as `[MEASURE=]VALUE` (e.g. "Considered=44%", "0.44"); they replace the
    /// numbers of `result`. Each keeps its shown precision: 44% is a whole percent (±0.5pp).
    #[serde(default)]
    pub claims: Vec<String>,
}

/// `check_transcript`'s arguments: the transcript as JSON, or as text in any format
/// `recite check` reads.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckParams {
    /// The transcript as a JSON value: an A2A Task, Message or JSON-RPC response, an array of
    /// AG-UI events, or {result, citation} pairs.
    #[serde(default)]
    pub transcript: Option<Value>,
    /// The transcript as text: SSE, JSON lines, or JSON (use this for streams and logs).
    #[serde(default)]
    pub text: Option<String>,
    /// The name the report gives the input (default `-`).
    #[serde(default)]
    pub name: Option<String>,
}

/// `list_catalog` and `list_extractors` take nothing.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// `list_catalog`'s output: the data layer's studies (each as `recite catalog show --format json`
/// writes it, without the server's file locations), how many could not be read, and where the
/// layer came from.
fn catalog_schema() -> Arc<JsonObject> {
    static SCHEMA: OnceLock<Arc<JsonObject>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            object(json!({
                "type": "object",
                "properties": {
                    "studies": { "type": "array", "items": { "type": "object" } },
                    "unusable_studies": { "type": "integer", "minimum": 0 },
                    "data_layer": {
                        "type": "object",
                        "properties": { "source": { "type": "string" } },
                        "required": ["source"]
                    }
                },
                "required": ["studies", "unusable_studies", "data_layer"]
            }))
        })
        .clone()
}

/// `list_extractors`' output: the registered extractors, each with its measures.
fn extractors_schema() -> Arc<JsonObject> {
    static SCHEMA: OnceLock<Arc<JsonObject>> = OnceLock::new();
    SCHEMA.get_or_init(|| object(json!({
        "type": "object",
        "properties": {
            "extractors": {
                "type": "array",
                "items": { "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] }
            }
        },
        "required": ["extractors"]
    }))).clone()
}

/// A JSON object as rmcp takes a schema.
fn object(v: Value) -> Arc<JsonObject> {
    Arc::new(match v {
        Value::Object(o) => o,
        _ => JsonObject::new(),
    })
}

/// The JSON report's schema, the output schema of the tools that answer with a report.
fn report_schema() -> Arc<JsonObject> {
    static SCHEMA: OnceLock<Arc<JsonObject>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let v: Value =
                serde_json::from_str(&recite_core::report::json::schema()).unwrap_or_else(|_| json!({}));
            Arc::new(match v {
                Value::Object(o) => o,
                _ => JsonObject::new(),
            })
        })
        .clone()
}

/// A tool error saying why, for the model to read.
fn failed(why: impl std::fmt::Display) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(why.to_string())])
}

/// The report text as structured output (and, as the SDK does, as text for older clients).
fn report_result(text: &str) -> CallToolResult {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => CallToolResult::structured(v),
        Err(e) => failed(Problem::internal(format!("the report is not JSON: {e}"))),
    }
}

#[tool_router]
impl Tools {
    /// The tools over `svc`, and the resources of `cases` when given.
    pub fn new(svc: Arc<Service>, cases: Option<Cases>) -> Tools {
        Tools { svc, cases }
    }

    #[tool(
        name = "verify_citation",
        description = "Re-run one Upperhand citation over recite's data layer and settle it: REPRODUCED, \
                       DISCREPANT, BASE_MISMATCH, UNVERIFIABLE or INVALID, with every measure claimed vs \
                       recomputed, base n, standard error and interval, and what the claim most likely \
                       computed instead. The answer is recite's JSON report (the one `recite verify \
                       --format json` writes).",
        output_schema = report_schema()
    )]
    async fn verify_citation(&self, params: Parameters<VerifyParams>) -> Result<CallToolResult, ErrorData> {
        let p = params.0;
        let mut pair = serde_json::Map::new();
        pair.insert("citation".into(), p.citation);
        if let Some(r) = p.result {
            pair.insert("result".into(), r);
        }
        let body = match serde_json::to_vec(&Value::Object(pair)) {
            Ok(b) => b,
            Err(e) => return Ok(failed(e)),
        };
        Ok(match self.svc.verify(body, p.claims, TextOrJson::Json).await {
            Ok(v) => report_result(&v.text),
            Err(p) => failed(p),
        })
    }

    #[tool(
        name = "check_transcript",
        description = "Settle every cited number in an agent transcript (A2A v0.3/v1.0 Task, Message, \
                       JSON-RPC or SSE; AG-UI event logs; JSON lines of {result, citation}) in one pass \
                       over the data, with Upperhand conformance and MOCA findings and the numbers of \
                       the agent's answer traced to their citations. Give the transcript as `transcript` \
                       (JSON) or `text`. The answer is recite's JSON report.",
        output_schema = report_schema()
    )]
    async fn check_transcript(&self, params: Parameters<CheckParams>) -> Result<CallToolResult, ErrorData> {
        let p = params.0;
        let body = match (p.transcript, p.text) {
            (Some(v), None) => match serde_json::to_vec(&v) {
                Ok(b) => b,
                Err(e) => return Ok(failed(e)),
            },
            (None, Some(t)) => t.into_bytes(),
            _ => return Ok(failed("give the transcript as exactly one of `transcript` (JSON) or `text`")),
        };
        let name = p.name.unwrap_or_else(|| "-".into());
        if name.is_empty() || name.chars().count() > 256 || name.chars().any(char::is_control) {
            return Ok(failed("a name is 1 to 256 characters, none of them control characters"));
        }
        let report = match self.svc.check(body, name, ReportFormat::Json).await {
            Ok(r) => r,
            Err(p) => return Ok(failed(p)),
        };
        Ok(match report.collect().await {
            Ok(bytes) => report_result(&String::from_utf8_lossy(&bytes)),
            Err(p) => failed(p),
        })
    }

    #[tool(
        name = "list_catalog",
        description = "The data layer recite re-runs citations on: every study with its tables, columns \
                       (labels, codes), periods, bases and weights. The names a citation must use.",
        output_schema = catalog_schema()
    )]
    async fn list_catalog(&self, _params: Parameters<NoParams>) -> Result<CallToolResult, ErrorData> {
        Ok(CallToolResult::structured(self.svc.catalog_json()))
    }

    #[tool(
        name = "list_extractors",
        description = "The registered extractor functions (a citation's source.function) and the measures \
                       each computes.",
        output_schema = extractors_schema()
    )]
    async fn list_extractors(&self, _params: Parameters<NoParams>) -> Result<CallToolResult, ErrorData> {
        Ok(CallToolResult::structured(self.svc.extractors_json()))
    }
}

/// The resources' URIs.
const CATALOG: &str = "recite://catalog";
const EXTRACTORS: &str = "recite://extractors";
const CASES: &str = "recite://cases";
const CASE_PREFIX: &str = "recite://cases/";

/// A JSON resource's contents.
fn json_contents(uri: &str, v: &Value) -> ReadResourceResponse {
    let text = format!("{v:#}");
    ReadResourceResult::new(vec![ResourceContents::text(text, uri).with_mime_type("application/json")]).into()
}

impl Tools {
    /// Ledger work, off the async threads; a failure is the protocol's internal error.
    async fn ledger<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Ledger) -> Result<T, ledger::LedgerError> + Send + 'static,
    ) -> Result<Option<T>, ErrorData> {
        let Some(cases) = &self.cases else { return Ok(None) };
        let l = cases.ledger.clone();
        match tokio::task::spawn_blocking(move || f(&l)).await {
            Ok(Ok(v)) => Ok(Some(v)),
            Ok(Err(e)) => Err(ErrorData::internal_error(e.to_string(), None)),
            Err(e) => Err(ErrorData::internal_error(format!("the ledger task failed: {e}"), None)),
        }
    }

    /// The newest cases, as `GET /v1/cases` lists them.
    async fn newest(&self) -> Result<Option<Vec<Value>>, ErrorData> {
        self.ledger(|l| l.list(&ledger::Filter { limit: CASES_LISTED, ..ledger::Filter::default() })).await
    }
}

#[tool_handler(name = "recite")]
impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_resources().enable_tools().build())
            .with_server_info(Implementation::new("recite", env!("CARGO_PKG_VERSION")))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let json = "application/json";
        let mut listed = vec![
            Resource::new(CATALOG, "catalog")
                .with_title("The data layer")
                .with_description(
                    "Every study recite re-runs citations on, with its tables, columns (labels, codes), \
                     periods, bases and weights: the names a citation must use.",
                )
                .with_mime_type(json),
            Resource::new(EXTRACTORS, "extractors")
                .with_title("The extractors")
                .with_description(
                    "The registered extractor functions (a citation's source.function) and their measures.",
                )
                .with_mime_type(json),
        ];
        if let Some(cases) = self.newest().await? {
            listed.push(
                Resource::new(CASES, "cases")
                    .with_title("Settled cases")
                    .with_description(format!(
                        "The newest {CASES_LISTED} cases saved in the workbench's ledger, each with its verdicts."
                    ))
                    .with_mime_type(json),
            );
            for c in cases {
                let Some(id) = c["id"].as_str() else { continue };
                let inputs: Vec<&str> =
                    c["inputs"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
                listed.push(
                    Resource::new(format!("{CASE_PREFIX}{id}"), format!("case {id}"))
                        .with_description(format!(
                            "Case of {} ({} claims, {}), saved {}: its inputs, data layer, verdicts, re-runs and JSON report.",
                            inputs.join(", "),
                            c["claims"],
                            c["verdict"].as_str().unwrap_or("no verdict"),
                            c["created"].as_str().unwrap_or("?"),
                        ))
                        .with_mime_type(json),
                );
            }
        }
        Ok(ListResourcesResult::with_all_items(listed))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let mut templates = Vec::new();
        if self.cases.is_some() {
            templates.push(
                ResourceTemplate::new(format!("{CASE_PREFIX}{{id}}"), "case")
                    .with_title("A settled case")
                    .with_description(
                        "A case saved in the workbench's ledger, by its id (as `POST /v1/cases` and \
                         recite://cases give it): its inputs' digests, data layer, verdicts, re-runs and JSON report.",
                    )
                    .with_mime_type("application/json"),
            );
        }
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let missing = |why: &str| {
            let shown: String = uri.chars().take(200).collect();
            ErrorData::resource_not_found(
                format!("no resource {shown}: {why}"),
                Some(json!({ "uri": shown })),
            )
        };
        match uri.as_str() {
            CATALOG => return Ok(json_contents(&uri, &self.svc.catalog_json())),
            EXTRACTORS => return Ok(json_contents(&uri, &self.svc.extractors_json())),
            CASES => {
                let Some(cases) = self.newest().await? else {
                    return Err(missing("this server keeps no ledger (cases are saved by `recite serve`)"));
                };
                return Ok(json_contents(&uri, &json!({ "count": cases.len(), "cases": cases })));
            }
            _ => {}
        }
        let Some(id) = uri.strip_prefix(CASE_PREFIX).filter(|id| ledger::is_id(id)).map(str::to_string)
        else {
            return Err(missing(
                "recite's resources are recite://catalog, recite://extractors, recite://cases and recite://cases/{id}",
            ));
        };
        let key = id.clone();
        let Some(found) = self.ledger(move |l| l.get(&key)).await? else {
            return Err(missing("this server keeps no ledger (cases are saved by `recite serve`)"));
        };
        let Some(case) = found else { return Err(missing("no such case in the ledger")) };
        let mut v = case.meta;
        if let Some(c) = &self.cases {
            v["permalink"] = json!(format!("{}/cases/{id}", c.base));
        }
        v["report"] = serde_json::from_str(&case.report_json).unwrap_or(Value::Null);
        Ok(json_contents(&uri, &v))
    }
}

/// The JSON-RPC error code of an `initialize` refused because every session is taken: one of
/// the codes JSON-RPC 2.0 leaves to the server (-32000 to -32099); MCP defines none for it.
pub const SESSIONS_FULL: i64 = -32000;

/// The streamable-HTTP endpoint, to mount at `/mcp` (a session per client of the 2025-11-25
/// protocol, none for 2026-07-28), and what closes its sessions when the server stops.
/// rmcp's own `Host` check is off: the server's, before every route ([`super::site`]), is the
/// one, so `/mcp` answers the same names as the rest (`--public-url`'s host, `--allowed-host`).
///
/// An input over the service's limit is a tool error, as over stdio: the transport takes a body
/// of up to twice the limit and a little more (a transcript sent as a JSON string is escaped,
/// so its envelope is larger than it), and the tool refuses the input itself. Only a body past
/// that is refused by the transport: at once when its declared length is, with the JSON-RPC
/// error object.
///
/// Sessions are bounded by `sessions`; a client's `DELETE /mcp` that ends its session is
/// answered 204 No Content, not rmcp's 202 (docs/service.md says why).
pub fn http(
    svc: Arc<Service>,
    cases: Option<Cases>,
    sessions: crate::McpSessions,
) -> (axum::Router, impl FnOnce() + Send + 'static) {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
    let envelope = svc.max_input.saturating_mul(2).saturating_add(64 * 1024);
    let limits = BodyLimits { max: envelope };
    let config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(usize::try_from(envelope).unwrap_or(usize::MAX))
        .disable_allowed_hosts();
    let stop = config.cancellation_token.clone();
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(sessions.idle);
    let manager = Arc::new(manager);
    let gate = Arc::new(Gate { manager: manager.clone(), max: sessions.max.max(1), opening: Mutex::new(()) });
    let service =
        StreamableHttpService::new(move || Ok(Tools::new(svc.clone(), cases.clone())), manager, config);
    let router = axum::Router::new().nest_service("/mcp", service).layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            well_formed(req, next, limits, gate.clone())
        },
    ));
    (router, move || stop.cancel())
}

/// What bounds the sessions: rmcp's session manager (whose map is the count), the cap, and a
/// lock held while one `initialize` opens a session, so two at once cannot both take the last.
struct Gate {
    manager: Arc<rmcp::transport::streamable_http_server::session::local::LocalSessionManager>,
    max: usize,
    opening: Mutex<()>,
}

/// A session-ending `DELETE /mcp` answered 204 No Content rather than rmcp's 202 Accepted: the
/// session is gone when rmcp answers (its `close_session` has run), and the MCP specification
/// names no success status, so the one both official clients take is used. The Python SDK
/// (mcp 2.3) takes only 200 and 204 and logs "Session termination failed: 202" otherwise
/// (modelcontextprotocol/python-sdk issue 3546, open; the spec's gap is
/// modelcontextprotocol/conformance issue 429); the TypeScript SDK takes any 2xx.
fn ended(mut r: axum::response::Response) -> axum::response::Response {
    if r.status() == axum::http::StatusCode::ACCEPTED {
        *r.status_mut() = axum::http::StatusCode::NO_CONTENT;
        r.headers_mut().remove(axum::http::header::CONTENT_TYPE);
        r.headers_mut().remove(axum::http::header::CONTENT_LENGTH);
        *r.body_mut() = axum::body::Body::empty();
    }
    r
}

/// The JSON-RPC 2.0 specification's error object (`id` null: the request's was not read).
fn refuse(status: axum::http::StatusCode, code: i64, message: String) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    let body = json!({ "jsonrpc": "2.0", "error": { "code": code, "message": message }, "id": null });
    (status, [(axum::http::header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// A POST whose body is not JSON-RPC gets the JSON-RPC 2.0 specification's error object
/// (`-32700` parse error, `-32600` invalid request, `id` null) with 400, as MCP's streamable
/// HTTP transport asks; rmcp alone answers 415 and plain text. A body declared over `limits`
/// is refused before it is read, one that does not arrive within them when it stops; anything
/// well-formed goes on.
///
/// An `initialize` (a message opening a session, sent without `Mcp-Session-Id`) when every
/// session is taken is refused: 503 with `Retry-After` and the JSON-RPC error object
/// [`SESSIONS_FULL`] carrying the request's id, which the official clients raise as the
/// server's error.
async fn well_formed(
    req: axum::extract::Request,
    next: axum::middleware::Next,
    limits: BodyLimits,
    gate: Arc<Gate>,
) -> axum::response::Response {
    use axum::http::StatusCode;
    use axum::response::IntoResponse as _;
    if req.method() == axum::http::Method::DELETE {
        return ended(next.run(req).await);
    }
    if req.method() != axum::http::Method::POST {
        return next.run(req).await;
    }
    let declared = req.headers().get(axum::http::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok());
    let too_large = |max: u64| {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            -32600,
            format!("Invalid Request: the body is over {max} bytes, twice --max-input-size and more"),
        )
    };
    if declared.and_then(|d| d.parse::<u64>().ok()).is_some_and(|n| n > limits.max) {
        return too_large(limits.max);
    }
    let (parts, body) = req.into_parts();
    let bytes = match crate::extract::read_within(body, limits).await {
        Ok(b) => b,
        Err(p) if p.status == 413 => return too_large(limits.max),
        Err(p) => {
            let status = StatusCode::from_u16(p.status).unwrap_or(StatusCode::BAD_REQUEST);
            return refuse(status, -32600, format!("Invalid Request: {}", p.detail));
        }
    };
    let v: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                -32700,
                format!("Parse error: the body is not JSON ({e})"),
            );
        }
    };
    // A message, or a batch of them: objects of JSON-RPC 2.0.
    let messages: Vec<&Value> = match &v {
        Value::Array(a) => a.iter().collect(),
        one => vec![one],
    };
    if messages.is_empty() || messages.iter().any(|m| m.get("jsonrpc").and_then(Value::as_str) != Some("2.0"))
    {
        return refuse(
            StatusCode::BAD_REQUEST,
            -32600,
            "Invalid Request: not a JSON-RPC 2.0 message (`\"jsonrpc\": \"2.0\"`)".into(),
        );
    }
    let opens = !parts.headers.contains_key("mcp-session-id")
        && messages.iter().any(|m| m.get("method").and_then(Value::as_str) == Some("initialize"));
    let req = axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes));
    if !opens {
        return next.run(req).await;
    }
    // rmcp answers an `initialize` once the session is in its map: held until then, the lock
    // makes the count and the opening one step.
    let _opening = gate.opening.lock().await;
    let open = gate.manager.sessions.read().await.len();
    if open >= gate.max {
        let id = messages.iter().find_map(|m| m.get("id")).cloned().unwrap_or(Value::Null);
        let body = json!({
            "jsonrpc": "2.0",
            "error": {
                "code": SESSIONS_FULL,
                "message": format!(
                    "Server busy: {open} MCP sessions are open, the most this server keeps \
                     (--max-mcp-sessions); try again later, or end sessions no longer used (DELETE /mcp)"
                ),
            },
            "id": id,
        });
        let headers =
            [(axum::http::header::CONTENT_TYPE, "application/json"), (axum::http::header::RETRY_AFTER, "1")];
        return (StatusCode::SERVICE_UNAVAILABLE, headers, body.to_string()).into_response();
    }
    next.run(req).await
}

/// Serves the tools over standard input and output until the client closes them.
pub async fn stdio(svc: Arc<Service>) -> super::Result<()> {
    use rmcp::ServiceExt as _;
    let mcp = |e: &dyn std::fmt::Display| super::ServeError::Mcp(e.to_string());
    let running = Tools::new(svc, None).serve(rmcp::transport::stdio()).await.map_err(|e| mcp(&e))?;
    running.waiting().await.map_err(|e| mcp(&e))?;
    Ok(())
}
