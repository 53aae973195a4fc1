//! The HTTP side of `recite serve`: the API (`/v1/…`) and the health checks, and with the
//! feature `agents` the MCP endpoint (`/mcp`) and the A2A agent (`/a2a/…`, its card at
//! `/.well-known/agent-card.json`), on one listener. Errors are `application/problem+json` (RFC 9457) with a `location` member naming
//! the part of the request that was wrong. Only the method, path, status and time of a request
//! are logged, never its body or query.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::StreamExt as _;
use serde_json::json;

use recite_core::report::ReportFormat;

use super::signin::{self, Guard};
use super::{Problem, Result, Service};
use crate::TextOrJson;

/// The media type of errors.
const PROBLEM: &str = "application/problem+json";

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut body = json!({
            "type": "about:blank",
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
        });
        if let Some(at) = &self.location {
            body["location"] = json!(at);
        }
        let mut r = (status, [(header::CONTENT_TYPE, PROBLEM)], format!("{body:#}\n")).into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        if self.status == 401 {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        r
    }
}

/// The query string's parameters, decoded; each must be one of `allowed`.
pub(super) fn query(uri: &Uri, allowed: &[&str]) -> Result<Vec<(String, String)>, Problem> {
    let mut out = Vec::new();
    for pair in uri.query().unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let k = decode(k)
            .ok_or_else(|| Problem::bad_request("query", "a parameter is not valid percent-encoded UTF-8"))?;
        let at = format!("query.{k}");
        if !allowed.contains(&k.as_str()) {
            let known = allowed.join(", ");
            return Err(Problem::bad_request(
                &at,
                format!("unknown parameter {k:?}; this endpoint takes {known}"),
            ));
        }
        let v = decode(v).ok_or_else(|| Problem::bad_request(&at, "not valid percent-encoded UTF-8"))?;
        out.push((k, v));
    }
    Ok(out)
}

/// The value of `key` in an `application/x-www-form-urlencoded` body, decoded.
pub(super) fn decode_form(body: &str, key: &str) -> Option<String> {
    body.split('&')
        .filter_map(|p| p.split_once('='))
        .find(|(k, _)| decode(k).as_deref() == Some(key))
        .and_then(|(_, v)| decode(v))
}

/// `application/x-www-form-urlencoded` decoding (`+` is a space).
fn decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// The one value of parameter `k`, if given (twice is an error).
pub(super) fn single<'a>(q: &'a [(String, String)], k: &str) -> Result<Option<&'a str>, Problem> {
    let mut it = q.iter().filter(|(n, _)| n == k);
    let first = it.next().map(|(_, v)| v.as_str());
    if it.next().is_some() {
        return Err(Problem::bad_request(&format!("query.{k}"), format!("{k} is given more than once")));
    }
    Ok(first)
}

/// Reads the whole body within the time limit (408 past it: a caller that sends a body slowly
/// or never finishes it cannot hold a connection for ever), at most `max` bytes (413 beyond),
/// 400 when it is cut short.
pub(super) async fn read_body_within(body: Body, max: u64, limit: Duration) -> Result<Vec<u8>, Problem> {
    match tokio::time::timeout(limit, read_body(body, max)).await {
        Ok(read) => read,
        Err(_) => Err(Problem {
            status: 408,
            title: "request timeout",
            detail: format!("the body did not arrive within {} s (--time-limit)", limit.as_secs()),
            location: Some("body".into()),
            retry_after: None,
        }),
    }
}

/// Reads the whole body, at most `max` bytes: 413 beyond, 400 when it is cut short.
async fn read_body(body: Body, max: u64) -> Result<Vec<u8>, Problem> {
    let mut stream = body.into_data_stream();
    let mut all = Vec::new();
    while let Some(piece) = stream.next().await {
        let piece =
            piece.map_err(|e| Problem::bad_request("body", format!("the body could not be read: {e}")))?;
        if (all.len() + piece.len()) as u64 > max {
            return Err(Problem::too_large(max));
        }
        all.extend_from_slice(&piece);
    }
    Ok(all)
}

/// Refuses a body declared larger than the limit before reading any of it.
pub(super) fn check_length(req: &Request, max: u64) -> Result<(), Problem> {
    let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok());
    match declared.map(str::parse::<u64>) {
        Some(Ok(n)) if n > max => Err(Problem::too_large(max)),
        Some(Err(_)) => Err(Problem::bad_request("header.content-length", "not a number")),
        _ => Ok(()),
    }
}

/// `POST /v1/verify[?format=json|text][&claim=[MEASURE=]VALUE…]`: the body is what
/// `recite verify -` reads; the answer is its report. `Recite-Verdict` carries the verdict.
async fn verify(State(svc): State<Arc<Service>>, req: Request) -> Result<Response, Problem> {
    let q = query(req.uri(), &["format", "claim"])?;
    let format = match single(&q, "format")? {
        None | Some("json") => TextOrJson::Json,
        Some("text") => TextOrJson::Text,
        Some(other) => {
            return Err(Problem::bad_request(
                "query.format",
                format!("{other:?}: verify writes json or text"),
            ));
        }
    };
    let claims: Vec<String> = q.iter().filter(|(k, _)| k == "claim").map(|(_, v)| v.clone()).collect();
    check_length(&req, svc.max_input)?;
    let body = read_body_within(req.into_body(), svc.max_input, svc.time_limit()).await?;
    let v = svc.verify(body, claims, format).await?;
    let verdict = serde_json::to_value(v.verdict).ok().and_then(|v| v.as_str().map(str::to_string));
    let mut r = ([(header::CONTENT_TYPE, content_type_verify(format))], v.text).into_response();
    if let Some(h) = verdict.and_then(|s| HeaderValue::from_str(&s).ok()) {
        r.headers_mut().insert("recite-verdict", h);
    }
    Ok(r)
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
async fn check(State(svc): State<Arc<Service>>, req: Request) -> Result<Response, Problem> {
    let q = query(req.uri(), &["format", "name"])?;
    let format = match single(&q, "format")? {
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
    let name = input_name(&q)?;
    let boundary = multipart_boundary(&req)?;
    check_length(&req, svc.max_input)?;
    let body = read_body_within(req.into_body(), svc.max_input, svc.time_limit()).await?;
    let inputs = match boundary {
        None => vec![(name, body)],
        Some(boundary) => parts(body, boundary).await?,
    };
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

/// The boundary of a `multipart/…` body, `None` for any other body.
pub(super) fn multipart_boundary(req: &Request) -> Result<Option<String>, Problem> {
    match req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) {
        Some(ct) if ct.trim_start().to_ascii_lowercase().starts_with("multipart/") => Ok(Some(
            multer::parse_boundary(ct)
                .map_err(|e| Problem::bad_request("header.content-type", format!("{ct:?}: {e}")))?,
        )),
        _ => Ok(None),
    }
}

/// What a name in a report may be (`?name=`, a part's file name).
const NAME_RULE: &str = "a name is 1 to 256 characters, none of them control characters";

fn good_name(name: &str) -> bool {
    !name.is_empty() && name.chars().count() <= 256 && !name.chars().any(char::is_control)
}

/// Most parts a multipart body may have: each is an input of the report.
const MAX_PARTS: usize = 1024;

/// The inputs of a `multipart/form-data` body, one a part, in order: each named by its file
/// name (else its field name, else `part N`). The body is already read within the size limit.
pub(super) async fn parts(body: Vec<u8>, boundary: String) -> Result<Vec<(String, Vec<u8>)>, Problem> {
    let stream = futures::stream::once(async move { Ok::<Bytes, std::io::Error>(Bytes::from(body)) });
    let mut form = multer::Multipart::new(stream, boundary);
    let mut out = Vec::new();
    loop {
        let at = format!("body.part[{}]", out.len());
        let field = match form.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => return Err(Problem::bad_request(&at, format!("not a multipart part: {e}"))),
        };
        if out.len() == MAX_PARTS {
            return Err(Problem::bad_request(&at, format!("a check takes at most {MAX_PARTS} parts")));
        }
        let name = field
            .file_name()
            .or(field.name())
            .filter(|n| !n.is_empty())
            .map_or_else(|| format!("part {}", out.len() + 1), str::to_string);
        if !good_name(&name) {
            return Err(Problem::bad_request(&at, NAME_RULE));
        }
        let bytes = field.bytes().await.map_err(|e| Problem::bad_request(&at, format!("{name}: {e}")))?;
        out.push((name, bytes.to_vec()));
    }
    if out.is_empty() {
        return Err(Problem::bad_request(
            "body",
            "the multipart body has no part: send one transcript a part",
        ));
    }
    Ok(out)
}

/// The input's name in the report: `name`, default `-`; 1 to 256 characters, no control
/// characters.
pub(super) fn input_name(q: &[(String, String)]) -> Result<String, Problem> {
    let name = single(q, "name")?.unwrap_or("-").to_string();
    if !good_name(&name) {
        return Err(Problem::bad_request("query.name", NAME_RULE));
    }
    Ok(name)
}

/// `GET /v1/catalog`.
async fn catalog(State(svc): State<Arc<Service>>) -> Response {
    json_response(&svc.catalog_json())
}

/// `GET /v1/extractors`.
async fn extractors(State(svc): State<Arc<Service>>) -> Response {
    json_response(&svc.extractors_json())
}

pub(super) fn json_response(v: &serde_json::Value) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], format!("{v:#}\n")).into_response()
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

/// One line on standard error per request: method, path, status and milliseconds; never the
/// query or the body.
async fn log(req: Request, next: Next) -> Response {
    let (method, path) = (req.method().clone(), req.uri().path().to_string());
    let t = std::time::Instant::now();
    let r = next.run(req).await;
    let path: String =
        if path.chars().count() > 200 { path.chars().take(200).chain(['…']).collect() } else { path };
    crate::warn(&format!(
        "recite serve: {method} {path} {} {} ms",
        r.status().as_u16(),
        t.elapsed().as_millis()
    ));
    r
}

/// The whole application: the API and health checks, and the agents' routes (MCP and A2A,
/// feature `agents`), protected by the token when there is one (the health checks and the
/// Agent Card, among `public`, are not); every request, to any of them, first passes the
/// site's `Host` and `Origin` checks ([`Site`](super::site::Site)).
pub fn app(
    svc: Arc<Service>,
    site: Arc<super::site::Site>,
    guard: Option<Arc<Guard>>,
    agents: Router,
    public: Router,
) -> Router {
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
        .layer(middleware::from_fn(log))
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

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn query_values_decode() {
        assert_eq!(decode("Considered%3D44%25").as_deref(), Some("Considered=44%"));
        assert_eq!(decode("a+b").as_deref(), Some("a b"));
        assert_eq!(decode("%zz"), None);
        assert_eq!(decode("%4"), None);
        assert_eq!(decode("%ff"), None);
    }
}
