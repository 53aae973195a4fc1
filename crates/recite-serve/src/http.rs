//! The HTTP side of `recite serve`: the API (`/v1/…`) and the health checks, and with the
//! feature `agents` the MCP endpoint (`/mcp`) and the A2A agent (`/a2a/…`, its card at
//! `/.well-known/agent-card.json`), on one listener. Errors are [`Problem`]s, with a `location`
//! member naming the part of the request that was wrong. Only the method, path, status and
//! time of a request are logged, never its body or query ([`super::access`]).

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::StreamExt as _;

use recite_core::report::ReportFormat;

use crate::extract::{self, Boundary, Pairs, Params, Payload, Query, json_response};
use crate::problem::Problem;
use crate::signin::{self, Guard};
use crate::{Result, Service, TextOrJson};

/// `POST /v1/verify[?format=json|text][&claim=[MEASURE=]VALUE…]`: the body is what
/// `recite verify -` reads; the answer is its report. `Recite-Verdict` carries the verdict.
async fn verify(
    State(svc): State<Arc<Service>>,
    Query(q): Query<VerifyQuery>,
    Payload(body): Payload,
) -> Result<Response, Problem> {
    let format = q.format;
    let v = svc.verify(body, q.claims, format).await?;
    let verdict = serde_json::to_value(v.verdict).ok().and_then(|v| v.as_str().map(str::to_string));
    let mut r = ([(header::CONTENT_TYPE, content_type_verify(format))], v.text).into_response();
    if let Some(h) = verdict.and_then(|s| HeaderValue::from_str(&s).ok()) {
        r.headers_mut().insert("recite-verdict", h);
    }
    Ok(r)
}

/// `POST /v1/verify`'s query: the report's format, and claimed numbers replacing the result's.
struct VerifyQuery {
    format: TextOrJson,
    claims: Vec<String>,
}

impl Params for VerifyQuery {
    const ALLOWED: &'static [&'static str] = &["format", "claim"];

    fn read(q: &Pairs) -> Result<Self, Problem> {
        let format = match q.single("format")? {
            None | Some("json") => TextOrJson::Json,
            Some("text") => TextOrJson::Text,
            Some(other) => {
                return Err(Problem::bad_request(
                    "query.format",
                    format!("{other:?}: verify writes json or text"),
                ));
            }
        };
        Ok(VerifyQuery { format, claims: q.all("claim") })
    }
}

fn content_type_verify(f: TextOrJson) -> &'static str {
    match f {
        TextOrJson::Json => "application/json",
        TextOrJson::Text => "text/plain; charset=utf-8",
    }
}

/// The media type of a report format.
pub fn content_type(f: ReportFormat) -> &'static str {
    match f {
        ReportFormat::Text => "text/plain; charset=utf-8",
        ReportFormat::Json => "application/json",
        ReportFormat::Jsonl => "application/jsonl",
        ReportFormat::Markdown => "text/markdown; charset=utf-8",
        ReportFormat::Html => "text/html; charset=utf-8",
        ReportFormat::Junit => "application/xml",
    }
}

/// `POST /v1/check[?format=json|jsonl|html|markdown|junit|text][&name=NAME]`: the body is one
/// transcript in any format `recite check` reads, or `multipart/form-data` with one transcript a
/// part (named by its file name, in order, as `recite check a b …` names its files); the answer
/// is the report of
/// `recite check - --format FORMAT`, written as the claims settle (NAME, default `-`, is the
/// input's name in the report, nothing more). A check stopped part-way (time limit) ends the
/// response abruptly rather than cleanly, so a cut report is never taken for a whole one.
async fn check(
    State(svc): State<Arc<Service>>,
    Query(q): Query<CheckQuery>,
    boundary: Boundary,
    Payload(body): Payload,
) -> Result<Response, Problem> {
    let format = q.format;
    let inputs = extract::inputs(body, q.name, boundary).await?;
    let mut report = svc.check_many(inputs, format).await?;
    // The first piece decides the status: a check that fails before writing anything is a
    // problem, not an empty report.
    let first = match report.next().await {
        Some(Err(p)) => return Err(p),
        Some(Ok(b)) => Some(b),
        None => None,
    };
    let rest = futures::stream::unfold(report, |mut r| async move {
        match r.next().await {
            None => None,
            Some(Ok(b)) => Some((Ok(b), r)),
            Some(Err(p)) => Some((Err(std::io::Error::other(p.to_string())), r)),
        }
    });
    let head = futures::stream::iter(first.map(Ok::<Bytes, std::io::Error>));
    let body = Body::from_stream(head.chain(rest));
    Ok(([(header::CONTENT_TYPE, content_type(format))], body).into_response())
}

/// `POST /v1/check`'s query: the report's format and the input's name.
struct CheckQuery {
    format: ReportFormat,
    name: String,
}

impl Params for CheckQuery {
    const ALLOWED: &'static [&'static str] = &["format", "name"];

    fn read(q: &Pairs) -> Result<Self, Problem> {
        let format = match q.single("format")? {
            None | Some("json") => ReportFormat::Json,
            Some("jsonl") => ReportFormat::Jsonl,
            Some("html") => ReportFormat::Html,
            Some("markdown") => ReportFormat::Markdown,
            Some("junit") => ReportFormat::Junit,
            Some("text") => ReportFormat::Text,
            Some(other) => {
                return Err(Problem::bad_request(
                    "query.format",
                    format!("{other:?}: check writes json, jsonl, html, markdown, junit or text"),
                ));
            }
        };
        Ok(CheckQuery { format, name: extract::input_name(q)? })
    }
}

/// `GET /v1/catalog`.
async fn catalog(State(svc): State<Arc<Service>>) -> Response {
    json_response(&svc.catalog_json())
}

/// `GET /v1/extractors`.
async fn extractors(State(svc): State<Arc<Service>>) -> Response {
    json_response(&svc.extractors_json())
}

/// `GET /readyz`: 200 while new work is taken, 503 once stopping.
async fn readyz(State(svc): State<Arc<Service>>) -> Response {
    if svc.ready() {
        (StatusCode::OK, "ready\n").into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "stopping\n").into_response()
    }
}

async fn not_found(uri: Uri) -> Problem {
    Problem {
        status: 404,
        title: "not found",
        detail: format!("no endpoint at {}", uri.path()),
        location: Some("path".into()),
        retry_after: None,
    }
}

async fn wrong_method(method: Method, uri: Uri) -> Problem {
    Problem {
        status: 405,
        title: "method not allowed",
        detail: format!("{method} is not allowed at {}", uri.path()),
        location: Some("method".into()),
        retry_after: None,
    }
}

/// The whole application: the API and health checks, and the agents' routes (MCP and A2A,
/// feature `agents`), protected by the token when there is one (the health checks and the
/// Agent Card, among `public`, are not); every request, to any of them, first passes the
/// site's `Host` and `Origin` checks ([`Site`](super::site::Site)), and its body must arrive
/// within the time limit (`extract::body_deadline`).
pub fn app(
    svc: Arc<Service>,
    site: Arc<super::site::Site>,
    guard: Option<Arc<Guard>>,
    agents: Router,
    public: Router,
) -> Router {
    let time_limit = svc.time_limit();
    let openapi = Arc::new(format!("{:#}\n", super::openapi::document(guard.is_some())));
    let describe = move || {
        let doc = openapi.clone();
        async move { ([(header::CONTENT_TYPE, "application/json")], doc.as_str().to_string()) }
    };
    let mut protected = Router::new()
        .route("/v1/openapi.json", get(describe))
        .route("/v1/verify", post(verify))
        .route("/v1/check", post(check))
        .route("/v1/catalog", get(catalog))
        .route("/v1/extractors", get(extractors))
        .with_state(svc.clone())
        .merge(agents);
    let mut public = public;
    if let Some(g) = guard {
        protected = protected.route_layer(middleware::from_fn_with_state(g.clone(), signin::authorize));
        public = public.merge(signin::routes(g));
    }
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .with_state(svc)
        .merge(public)
        .merge(protected)
        .fallback(not_found)
        .method_not_allowed_fallback(wrong_method)
        .layer(middleware::from_fn_with_state(site, super::site::check))
        .layer(middleware::map_request_with_state(time_limit, extract::body_deadline))
        .layer(super::access::trace())
}

/// Serves `app` on `listener` (connections bounded by `conns`) until SIGTERM, SIGINT or
/// SIGHUP, whose handlers are in place before the address is printed; then stops taking work
/// (`on_stop` closes the MCP sessions), closes the connections with no request in flight and
/// lets the requests in flight finish, for at most the time limit and a second more (a second
/// signal stops waiting).
pub async fn run(
    svc: Arc<Service>,
    listener: tokio::net::TcpListener,
    guarded: bool,
    app: Router,
    conns: super::conn::Options,
    on_stop: impl FnOnce(),
) -> Result<()> {
    let mut signals = Signals::install()?;
    let bound = listener.local_addr()?;
    crate::warn(&format!(
        "recite serve: listening on http://{bound} ({}; {})",
        if cfg!(feature = "agents") { "API /v1, MCP /mcp, A2A /a2a" } else { "API /v1" },
        if guarded { "bearer token required" } else { "no token: loopback only" }
    ));
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut server = tokio::spawn(super::conn::serve(listener, app, conns, stopped));
    let first = signals.next().await;
    crate::warn(&format!("recite serve: {first}: stopping, finishing the requests in flight"));
    svc.stop();
    on_stop();
    let _ = stop.send(true);
    let grace = svc.time_limit() + Duration::from_secs(1);
    tokio::select! {
        done = tokio::time::timeout(grace, &mut server) => match done {
            Ok(Ok(())) => crate::warn("recite serve: stopped"),
            Ok(Err(e)) => crate::warn(&format!("recite serve: stopped: {e}")),
            Err(_) => crate::warn("recite serve: stopped with requests still running past the time limit"),
        },
        second = signals.next() => {
            crate::warn(&format!("recite serve: {second} again: stopped without waiting for the requests in flight"));
        }
    }
    server.abort();
    Ok(())
}

/// The signals that stop the server: SIGTERM, SIGINT and SIGHUP, each drained alike.
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    /// Handles the three from now on (their default is to end the process at once).
    fn install() -> Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        let on = |kind: SignalKind, name: &str| {
            signal(kind).map_err(|e| std::io::Error::new(e.kind(), format!("cannot handle {name}: {e}")))
        };
        Ok(Signals {
            term: on(SignalKind::terminate(), "SIGTERM")?,
            int: on(SignalKind::interrupt(), "SIGINT")?,
            hup: on(SignalKind::hangup(), "SIGHUP")?,
        })
    }

    /// The next one to come, by name.
    async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
            _ = self.hup.recv() => "SIGHUP",
        }
    }
}
