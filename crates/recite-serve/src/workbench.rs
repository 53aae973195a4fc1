//! The analyst's workbench (docs/workbench.md): cases settled from the browser or the API and
//! kept in the [`ledger`]. A case is settled as `POST /v1/check` settles a
//! transcript, in one run that writes both the JSON and the HTML report (the HTML renderer is
//! the report's own, so a case's page and its export are what `recite check --format html`
//! writes); it is saved with its inputs' SHA-256 digests and the data layer's fingerprint, and
//! can be re-run later, which says what moved.
//!
//! The pages are plain HTML, CSS and JavaScript compiled into the binary (no build step, no
//! remote asset; their Content-Security-Policy allows this server only). Every value a request
//! brings reaches SQL as a bound parameter; a case id is checked for its shape before any
//! look-up.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{FromRef, Path as UrlPath, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use recite_core::report::stream::{self, Closing, InputHead, InputTail, Tee};
use recite_core::report::{self, ClaimReport};
use recite_core::saved::{OnSaved, SavedVersions, moved, same_rulings};
use recite_core::settle::Verdict;

use crate::Service;
use crate::extract::{self, BodyLimits, Boundary, Pairs, Params, Payload, Query, json_response};
use crate::headers;
use crate::ledger::{self, ClaimRow, Filter, Ledger, NewCase, NewInput, NewRerun};
use crate::problem::{Problem, Stopped};

#[cfg(feature = "agents")]
mod probe;
mod whatif;

const INDEX: &str = include_str!("workbench/index.html");
const CASE: &str = include_str!("workbench/case.html");
const GONE: &str = include_str!("workbench/gone.html");
const CSS: &str = include_str!("workbench/workbench.css");
const JS: &str = include_str!("workbench/workbench.js");
/// The pages' icon, served from here: a `data:` icon is refused by the sign-in form's policy.
const FAVICON: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\"><rect width=\"16\" height=\"16\" rx=\"3\" fill=\"#1d2330\"/><path d=\"M4 11l3 3 5-9\" stroke=\"#fff\" stroke-width=\"2\" fill=\"none\"/></svg>";

/// The longest note an analyst may keep on a case, in characters.
const NOTE_MAX: usize = 10_000;

/// The pages' policy: this server's scripts, styles, frames and requests only.
const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
connect-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// A stored report shown in the case page's frame: no script, framed by this server only.
const REPORT_CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'";

/// Cases a list answers by default, and at most.
const LIST_DEFAULT: usize = 100;
const LIST_MAX: usize = 1000;

/// The longest search term.
const TERM_MAX: usize = 256;

/// The workbench's state: the service that settles, the ledger that keeps, and what the data
/// layer's files hashed to (by their metadata, so an unchanged file is not read twice).
pub struct Desk {
    svc: Arc<Service>,
    ledger: Arc<Ledger>,
    hashed: Mutex<HashMap<PathBuf, (String, u64, String)>>,
    base: String,
}

/// The pages' style and script: the same for everyone, so outside the token's guard (the
/// sign-in form is styled by them).
pub fn assets() -> Router {
    let assets = Router::new()
        .route("/assets/workbench.css", get(|| async { asset("text/css; charset=utf-8", CSS) }))
        .route("/assets/workbench.js", get(|| async { asset("text/javascript; charset=utf-8", JS) }))
        .route("/assets/favicon.svg", get(|| async { asset("image/svg+xml", FAVICON) }))
        // Sign-out forgets the session cookie; a server without a token has none to forget.
        .route("/signout", post(sign_out));
    headers::pages(assets, PAGE_CSP)
}

/// The workbench's routes over `svc` and `ledger`; permalinks start with `base`.
pub fn routes(svc: Arc<Service>, ledger: Arc<Ledger>, base: &str) -> Router {
    let desk = Arc::new(Desk { svc, ledger, hashed: Mutex::default(), base: base.to_string() });
    let api = Router::new()
        .route("/v1/cases", post(create).get(list))
        .route("/v1/cases/{id}", get(case_json).delete(delete_case))
        .route("/v1/cases/{id}/note", axum::routing::put(put_note))
        .route("/v1/cases/{id}/report", get(case_report_json))
        .route("/v1/cases/{id}/inputs/{n}", get(case_input))
        .route("/v1/cases/{id}/rerun", post(rerun))
        .route("/v1/cases/{id}/alternatives", get(whatif::alternatives))
        .route("/v1/cases/{id}/whatif", post(whatif::run));
    #[cfg(feature = "agents")]
    let api = api.route("/v1/probe", post(probe::start));
    let pages = Router::new()
        .route("/", get(|h: axum::http::HeaderMap| async move { page(with_sign_out(INDEX, &h)) }))
        .route("/cases/{id}", get(case_page));
    // A stored report is shown framed by this server's page, and runs no script.
    let reports = Router::new()
        .route("/cases/{id}/report", get(case_report_html))
        .route("/cases/{id}/export", get(case_export))
        .route("/cases/{id}/reruns/{n}/report", get(rerun_report_html));
    api.merge(headers::pages(pages, PAGE_CSP)).merge(headers::pages(reports, REPORT_CSP)).with_state(desk)
}

fn page(html: String) -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response()
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

/// A case's inputs are read as `POST /v1/check` reads them.
impl FromRef<Arc<Desk>> for BodyLimits {
    fn from_ref(desk: &Arc<Desk>) -> BodyLimits {
        BodyLimits::from_ref(&desk.svc)
    }
}

fn no_case(id: &str) -> Problem {
    let shown: String = id.chars().take(64).collect();
    Problem {
        status: 404,
        title: "not found",
        detail: format!("no case {shown:?} in the ledger"),
        location: Some("path".into()),
        retry_after: None,
    }
}

/// Runs ledger work off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ledger::LedgerError> + Send + 'static,
) -> Result<T, Problem> {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Problem::internal(e.to_string())),
        Err(e) => Err(Problem::internal(format!("the ledger task failed: {e}"))),
    }
}

/// The id in a path, when it has the shape of one.
fn checked(id: &str) -> Result<String, Problem> {
    if ledger::is_id(id) { Ok(id.to_string()) } else { Err(no_case(id)) }
}

/// The case `id` names (its shape checked first), or 404.
async fn load(desk: &Arc<Desk>, id: &str) -> Result<(String, ledger::Case), Problem> {
    let id = checked(id)?;
    let (d, key) = (desk.clone(), id.clone());
    let case = blocking(move || d.ledger.get(&key)).await?.ok_or_else(|| no_case(&id))?;
    Ok((id, case))
}

/// `POST /v1/cases[?name=NAME][&progress=1]`: the body is one transcript, or
/// `multipart/form-data` with one transcript a part, as `POST /v1/check` takes them; it is settled, saved, and answered 201 with the case's id and permalink. With
/// `progress=1` the answer is JSON lines as the claims settle ([`progress`]), the case last.
async fn create(
    State(desk): State<Arc<Desk>>,
    Query(q): Query<CreateQuery>,
    boundary: Boundary,
    Payload(body): Payload,
) -> Result<Response, Problem> {
    let (live, svc) = (q.progress, desk.svc.clone());
    // Several files dropped at once are one case: a multipart body, one input a part.
    let inputs: Vec<NewInput> = extract::inputs(body, q.name, boundary)
        .await?
        .into_iter()
        .map(|(name, bytes)| NewInput { name, bytes })
        .collect();
    let (permit, deadline, until) = turn(&svc).await?;
    let (lines, received) = tokio::sync::mpsc::channel::<String>(PROGRESS_LINES);
    let sent = live.then(|| lines.clone());
    let d = desk.clone();
    let job = tokio::task::spawn_blocking(move || -> Result<Result<_, Problem>, Stopped> {
        let _turn = permit;
        let settled = d.settle(&inputs, until, sent.map(Progress::new))?;
        // Not a transcript: refused, and nothing of it kept.
        if let Some(p) = refused(&settled.json) {
            return Ok(Err(p));
        }
        let (fingerprint, files) = d.fingerprint();
        let report: Value = serde_json::from_str(&settled.json).unwrap_or(Value::Null);
        let data_versions = d.data_versions(&report);
        let case = new_case(settled, inputs, fingerprint, files, data_versions);
        // Past the time limit the caller has been told it failed: nothing is saved then.
        if std::time::Instant::now() >= until {
            return Err(Stopped::TimedOut);
        }
        let summary = json!({ "claims": case.claims, "verdict": case.verdict, "verdicts": case.verdicts });
        let (id, created) = d.ledger.save(&case).map_err(|e| Stopped::Failed(e.to_string()))?;
        Ok(Ok((id, created, summary)))
    });
    let made = move |(id, created, summary): (String, String, Value)| {
        json!({
            "id": id,
            "created": created,
            "permalink": format!("{}/cases/{id}", desk.base),
            "url": format!("/cases/{id}"),
            "json": format!("/v1/cases/{id}"),
            "export": format!("/cases/{id}/export"),
            "summary": summary,
        })
    };
    if live {
        // The case (or the problem) is the last line; the stream ends when the job's sender and
        // this one are gone.
        tokio::spawn(async move {
            let last = match finish(&svc, deadline, job).await.and_then(|r| r) {
                Ok(done) => json!({ "case": made(done) }),
                Err(p) => json!({ "error": {
                    "status": p.status, "title": p.title, "detail": p.detail, "location": p.location,
                } }),
            };
            let _ = lines.send(format!("{last}\n")).await;
        });
        let stream = futures::stream::unfold(received, |mut rx| async move {
            rx.recv().await.map(|line| (Ok::<_, std::io::Error>(axum::body::Bytes::from(line)), rx))
        });
        let mut r = Response::new(axum::body::Body::from_stream(stream));
        r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/jsonl"));
        return Ok(r);
    }
    drop(lines);
    let body = made(finish(&svc, deadline, job).await??);
    let id = body["id"].as_str().unwrap_or_default().to_string();
    let mut r = json_response(&body);
    *r.status_mut() = StatusCode::CREATED;
    if let Ok(v) = HeaderValue::from_str(&format!("/cases/{id}")) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    Ok(r)
}

/// `POST /v1/cases`'s query: the input's name, and whether to tell each claim as it settles.
struct CreateQuery {
    name: String,
    progress: bool,
}

impl Params for CreateQuery {
    const ALLOWED: &'static [&'static str] = &["name", "progress"];

    fn read(q: &Pairs) -> Result<Self, Problem> {
        let name = extract::input_name(q)?;
        let progress = match q.single("progress")? {
            None | Some("0") => false,
            Some("1") => true,
            Some(_) => return Err(Problem::bad_request("query.progress", "1 (claims as they settle) or 0")),
        };
        Ok(CreateQuery { name, progress })
    }
}

/// Progress lines buffered for a slow reader; past them the check waits for it (within the
/// time limit).
const PROGRESS_LINES: usize = 64;

/// A report writer that tells a `progress=1` caller each claim as it settles: one JSON line
/// `{"settled": N, "input": FILE, "locator": …, "verdict": …}`. A caller gone away stops the
/// telling, never the case: it is settled and saved all the same.
struct Progress {
    tx: Option<tokio::sync::mpsc::Sender<String>>,
    settled: usize,
    input: String,
}

impl Progress {
    fn new(tx: tokio::sync::mpsc::Sender<String>) -> Progress {
        Progress { tx: Some(tx), settled: 0, input: String::new() }
    }

    fn send(&mut self, v: Value) {
        if let Some(tx) = &self.tx
            && tx.blocking_send(format!("{v}\n")).is_err()
        {
            self.tx = None;
        }
    }
}

impl stream::Writer for Progress {
    fn begin_input(&mut self, head: InputHead<'_>) -> std::io::Result<()> {
        self.input = head.file.to_string();
        Ok(())
    }
    fn claim(&mut self, c: &ClaimReport) -> std::io::Result<()> {
        self.settled += 1;
        let line = json!({
            "settled": self.settled,
            "input": self.input,
            "locator": c.locator,
            "verdict": c.settlement.verdict,
        });
        self.send(line);
        Ok(())
    }
    fn end_input(&mut self, _: InputTail<'_>) -> std::io::Result<()> {
        Ok(())
    }
    fn finish(&mut self, closing: Closing<'_>) -> std::io::Result<()> {
        let line = json!({ "settled": self.settled, "summary": closing.summary, "saving": true });
        self.send(line);
        Ok(())
    }
}

/// A turn to settle, and its deadline: as the runtime's instant (to wait for the job) and as
/// the clock's (for the blocking work itself).
async fn turn(
    svc: &Service,
) -> Result<(tokio::sync::OwnedSemaphorePermit, tokio::time::Instant, std::time::Instant), Problem> {
    let (permit, deadline) = svc.admit().await?;
    let until = std::time::Instant::now() + deadline.saturating_duration_since(tokio::time::Instant::now());
    Ok((permit, deadline, until))
}

/// Waits for a settling job within the operation's deadline.
async fn finish<T>(
    svc: &Service,
    deadline: tokio::time::Instant,
    job: tokio::task::JoinHandle<Result<T, Stopped>>,
) -> Result<T, Problem> {
    match tokio::time::timeout_at(deadline, job).await {
        Err(_) => Err(Problem::time_limit(svc.time_limit())),
        Ok(Err(e)) => Err(Problem::internal(format!("the check failed: {e}"))),
        Ok(Ok(Err(stopped))) => Err(stopped.problem(svc.time_limit())),
        Ok(Ok(Ok(v))) => Ok(v),
    }
}

/// `GET /v1/cases`'s query: the search, each term at most [`TERM_MAX`] characters.
impl Params for Filter {
    const ALLOWED: &'static [&'static str] = &["study", "period", "measure", "verdict", "limit"];

    fn read(q: &Pairs) -> Result<Self, Problem> {
        let term = |k: &str| -> Result<Option<String>, Problem> {
            match q.single(k)? {
                None | Some("") => Ok(None),
                Some(v) if v.chars().count() > TERM_MAX || v.chars().any(char::is_control) => {
                    Err(Problem::bad_request(
                        &format!("query.{k}"),
                        format!("at most {TERM_MAX} characters, no control characters"),
                    ))
                }
                Some(v) => Ok(Some(v.to_string())),
            }
        };
        let verdict = match q.single("verdict")? {
            None | Some("") => None,
            Some(v) => match Verdict::ALL.iter().find(|x| x.as_str().eq_ignore_ascii_case(v)) {
                Some(x) => Some(x.as_str().to_string()),
                None => {
                    let names: Vec<&str> = Verdict::ALL.iter().map(|v| v.as_str()).collect();
                    return Err(Problem::bad_request(
                        "query.verdict",
                        format!("{v:?} is not a verdict; one of {}", names.join(", ")),
                    ));
                }
            },
        };
        let limit = match q.single("limit")? {
            None => LIST_DEFAULT,
            Some(v) => match v.parse::<usize>() {
                Ok(n) if (1..=LIST_MAX).contains(&n) => n,
                _ => {
                    return Err(Problem::bad_request(
                        "query.limit",
                        format!("a whole number from 1 to {LIST_MAX}"),
                    ));
                }
            },
        };
        Ok(Filter {
            study: term("study")?,
            period: term("period")?,
            measure: term("measure")?,
            verdict,
            limit,
        })
    }
}

/// `GET /v1/cases[?study=&period=&measure=&verdict=&limit=]`: the saved cases, newest first,
/// each with its verdict counts; the filters must all hold for one claim of a case.
async fn list(State(desk): State<Arc<Desk>>, Query(f): Query<Filter>) -> Result<Response, Problem> {
    let d = desk.clone();
    let cases = blocking(move || d.ledger.list(&f)).await?;
    let mut totals: serde_json::Map<String, Value> =
        Verdict::ALL.iter().map(|v| (v.as_str().to_string(), json!(0))).collect();
    for c in &cases {
        for (v, n) in c["verdicts"].as_object().into_iter().flatten() {
            let sum = totals.get(v).and_then(Value::as_u64).unwrap_or(0) + n.as_u64().unwrap_or(0);
            totals.insert(v.clone(), json!(sum));
        }
    }
    Ok(json_response(&json!({ "count": cases.len(), "verdicts": totals, "cases": cases })))
}

/// `GET /v1/cases/{id}`: the case: its inputs' digests, the data layer and its fingerprint,
/// the verdicts, the re-runs, and the JSON report.
async fn case_json(State(desk): State<Arc<Desk>>, UrlPath(id): UrlPath<String>) -> Result<Response, Problem> {
    let (id, case) = load(&desk, &id).await?;
    let mut v = case.meta;
    v["permalink"] = json!(format!("{}/cases/{id}", desk.base));
    v["report"] = serde_json::from_str(&case.report_json).unwrap_or(Value::Null);
    Ok(json_response(&v))
}

/// `GET /v1/cases/{id}/report`: the JSON report as it was written.
async fn case_report_json(
    State(desk): State<Arc<Desk>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, Problem> {
    let (_, case) = load(&desk, &id).await?;
    Ok(([(header::CONTENT_TYPE, "application/json")], case.report_json).into_response())
}

/// `GET /v1/cases/{id}/inputs/{n}`: input `n`'s bytes, as received.
async fn case_input(
    State(desk): State<Arc<Desk>>,
    UrlPath((id, n)): UrlPath<(String, String)>,
) -> Result<Response, Problem> {
    let id = checked(&id)?;
    let n: i64 = n.parse().map_err(|_| no_case(&id))?;
    let d = desk.clone();
    let key = id.clone();
    let (_, bytes) = blocking(move || d.ledger.input(&key, n)).await?.ok_or_else(|| no_case(&id))?;
    Ok(([(header::CONTENT_TYPE, "application/octet-stream")], bytes).into_response())
}

/// `GET /cases/{id}`: the case's page (its report in a frame, the case's facts beside it).
async fn case_page(
    State(desk): State<Arc<Desk>>,
    UrlPath(id): UrlPath<String>,
    h: axum::http::HeaderMap,
) -> Result<Response, Problem> {
    let id = checked(&id)?;
    let (d, key) = (desk.clone(), id.clone());
    // The id is 24 hex digits (checked): nothing in it needs escaping.
    if blocking(move || d.ledger.get(&key)).await?.is_none() {
        // A permalink of a deleted case (or one never saved) says so, as a page.
        let mut r = page(with_sign_out(GONE, &h).replace("{{id}}", &id));
        *r.status_mut() = StatusCode::NOT_FOUND;
        return Ok(r);
    }
    Ok(page(with_sign_out(CASE, &h).replace("{{id}}", &id)))
}

/// A page with its sign-out button when the browser came with a session cookie (a server
/// started with `--token-file`), without it otherwise.
fn with_sign_out(html: &str, h: &axum::http::HeaderMap) -> String {
    let signed_in = h
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .any(|c| c.trim().starts_with(SESSION_COOKIE_PREFIX));
    let button = if signed_in {
        "<form class=\"signout\" method=\"post\" action=\"/signout\"><button type=\"submit\" class=\"secondary\">Sign out</button></form>"
    } else {
        ""
    };
    html.replace("{{signout}}", button)
}

/// The session cookie `/signin` sets (crate::signin), as a `name=` prefix.
const SESSION_COOKIE_PREFIX: &str = "recite_session=";

/// `POST /signout`: the session cookie expired at once, and back to the index (which asks for
/// the token again on a server that has one).
async fn sign_out() -> Response {
    let mut r = axum::response::Redirect::to("/").into_response();
    r.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_static("recite_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict"),
    );
    r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// `DELETE /v1/cases/{id}`: the case, its inputs, search rows and re-runs, gone; `{deleted}`.
async fn delete_case(
    State(desk): State<Arc<Desk>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, Problem> {
    let id = checked(&id)?;
    let (d, key) = (desk.clone(), id.clone());
    if !blocking(move || d.ledger.delete(&key)).await? {
        return Err(no_case(&id));
    }
    Ok(json_response(&json!({ "deleted": id })))
}

/// `PUT /v1/cases/{id}/note` with `{"note": TEXT}`: the analyst's note on the case (their
/// ruling in words), at most [`NOTE_MAX`] characters; an empty note removes it.
async fn put_note(
    State(desk): State<Arc<Desk>>,
    UrlPath(id): UrlPath<String>,
    Payload(body): Payload,
) -> Result<Response, Problem> {
    let id = checked(&id)?;
    let asked: Value =
        serde_json::from_slice(&body).map_err(|e| Problem::bad_request("body", format!("not JSON: {e}")))?;
    let Some(note) = asked.get("note").and_then(Value::as_str) else {
        return Err(Problem::bad_request("body.note", "the note, a string"));
    };
    let note = note.trim().to_string();
    if note.chars().count() > NOTE_MAX || note.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Err(Problem::bad_request(
            "body.note",
            format!("at most {NOTE_MAX} characters, no control characters but line breaks and tabs"),
        ));
    }
    let (d, key, kept) = (desk.clone(), id.clone(), note.clone());
    if !blocking(move || d.ledger.set_note(&key, &kept)).await? {
        return Err(no_case(&id));
    }
    Ok(json_response(&json!({ "id": id, "note": note })))
}

/// A case's inputs that are not transcripts or citations: an input with no claim whose every
/// finding is a MUST that it is malformed, empty or unrecognised. The problem says what the
/// reader said, where; such a case is refused, never saved.
fn refused(report_json: &str) -> Option<Problem> {
    let report: Value = serde_json::from_str(report_json).ok()?;
    let junk = |rule: &str| rule.ends_with("/malformed") || rule == "input/unrecognised";
    let inputs = report["inputs"].as_array()?;
    let (mut said, mut location) = (Vec::new(), None);
    for (n, i) in inputs.iter().enumerate() {
        let findings = i["findings"].as_array().map(Vec::as_slice).unwrap_or_default();
        let no_claims = i["claims"].as_array().is_none_or(Vec::is_empty);
        let all_junk =
            findings.iter().all(|f| f["level"] == "MUST" && junk(f["rule"].as_str().unwrap_or_default()));
        if !no_claims || findings.is_empty() || !all_junk {
            continue;
        }
        let f = &findings[0];
        let at = &f["locator"];
        let mut place = at["file"].as_str().unwrap_or("the input").to_string();
        if let Some(line) = at["line"].as_u64() {
            place.push_str(&format!(", line {line}"));
            if let Some(col) = at["column"].as_u64() {
                place.push_str(&format!(", column {col}"));
            }
        }
        if let Some(p) = at["pointer"].as_str().filter(|p| !p.is_empty()) {
            place.push_str(&format!(", at {p}"));
        }
        said.push(format!("{place}: {}", f["message"].as_str().unwrap_or("not readable")));
        // Where in the request, as the rest of the API says it: the body, or its part.
        location
            .get_or_insert_with(|| if inputs.len() > 1 { format!("body.part[{n}]") } else { "body".into() });
    }
    if said.is_empty() {
        return None;
    }
    Some(Problem {
        status: 422,
        title: "not a transcript",
        detail: format!(
            "{}; nothing was saved (recite reads A2A tasks and streams, AG-UI event logs and {{result, citation}} JSON)",
            said.join("; ")
        ),
        location,
        retry_after: None,
    })
}

/// `GET /cases/{id}/report`: the stored HTML report, for the case page's frame.
async fn case_report_html(
    State(desk): State<Arc<Desk>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, Problem> {
    let (_, case) = load(&desk, &id).await?;
    Ok(report_page(case.report_html))
}

fn report_page(html: String) -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response()
}

/// `GET /cases/{id}/export`: the self-contained HTML report, as a download.
async fn case_export(
    State(desk): State<Arc<Desk>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, Problem> {
    let (id, case) = load(&desk, &id).await?;
    let permalink = format!("{}/cases/{id}", desk.base);
    let mut r = report_page(exported(&case.report_html, &case.meta, &permalink));
    let disposition = format!("attachment; filename=\"recite-case-{id}.html\"");
    if let Ok(v) = HeaderValue::from_str(&disposition) {
        r.headers_mut().insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(r)
}

/// The exported report: the stored one with the case's facts first in its `<main>` (id,
/// permalink, when it was saved, by which recite, on which data, and the analyst's note), so a
/// ruling mailed to a colleague can be found again in the ledger. Everything is escaped; the
/// rest of the report is the stored bytes.
fn exported(html: &str, meta: &Value, permalink: &str) -> String {
    let esc = |v: &Value| escaped(v.as_str().unwrap_or_default());
    let layer = &meta["data_layer"];
    let data = format!(
        "{} ({}), fingerprint {}",
        esc(&layer["path"]),
        esc(&layer["source"]),
        esc(&meta["fingerprint"])
    );
    let mut facts = format!(
        "<section class=\"input case-facts\" id=\"case-facts\"><h2>Case {id}</h2><table>\
<tr><th scope=\"row\">Case</th><td><code data-case-id>{id}</code></td></tr>\
<tr><th scope=\"row\">Permalink</th><td data-permalink>{link}</td></tr>\
<tr><th scope=\"row\">Saved</th><td><time datetime=\"{created}\" title=\"{created}\">{saved}</time></td></tr>\
<tr><th scope=\"row\">recite</th><td>{recite}</td></tr>\
<tr><th scope=\"row\">Data</th><td>{data}</td></tr>",
        id = esc(&meta["id"]),
        link = escaped(permalink),
        created = esc(&meta["created"]),
        saved = escaped(&human_time(meta["created"].as_str().unwrap_or_default())),
        recite = esc(&meta["recite"]),
    );
    if let Some(note) = meta["note"].as_str().filter(|n| !n.is_empty()) {
        let note = escaped(note);
        facts.push_str(&format!(
            "<tr><th scope=\"row\">Analyst's note</th><td class=\"text\" data-note>{note}</td></tr>"
        ));
    }
    facts.push_str("</table></section>\n");
    match html.find("<main>\n") {
        Some(at) => {
            let at = at + "<main>\n".len();
            format!("{}{facts}{}", &html[..at], &html[at..])
        }
        None => html.to_string(),
    }
}

/// A stored RFC 3339 time as people read it (`7 Dec 2026, 15:43 UTC`), as the pages show it.
fn human_time(rfc3339: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .map(|t| t.with_timezone(&chrono::Utc).format("%-d %b %Y, %H:%M UTC").to_string())
        .unwrap_or_else(|_| rfc3339.to_string())
}

/// Text as HTML text (the note keeps its line breaks: the report's `.text` pre-wraps them).
fn escaped(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// `GET /cases/{id}/reruns/{n}/report`: a re-run's HTML report.
async fn rerun_report_html(
    State(desk): State<Arc<Desk>>,
    UrlPath((id, n)): UrlPath<(String, String)>,
) -> Result<Response, Problem> {
    let id = checked(&id)?;
    let n: i64 = n.parse().map_err(|_| no_case(&id))?;
    let d = desk.clone();
    let key = id.clone();
    let html = blocking(move || d.ledger.rerun_html(&key, n)).await?.ok_or_else(|| no_case(&id))?;
    Ok(report_page(html))
}

/// `POST /v1/cases/{id}/rerun[?on=latest|pinned]`: settles the case's inputs again, saves the
/// re-run beside the case, and answers what moved against the saved report, and whether the
/// data layer's fingerprint changed. `on=latest` (the default) reads every table as it is now;
/// `on=pinned` reads each versioned table at the version the ruling read ([`SavedVersions`]),
/// which must reproduce it bit for bit (`reproduced`).
async fn rerun(
    State(desk): State<Arc<Desk>>,
    UrlPath(id): UrlPath<String>,
    Query(q): Query<RerunQuery>,
) -> Result<Response, Problem> {
    let id = checked(&id)?;
    let svc = desk.svc.clone();
    let (permit, deadline, until) = turn(&svc).await?;
    let d = desk.clone();
    let key = id.clone();
    let job = tokio::task::spawn_blocking(move || -> Result<_, Stopped> {
        let _turn = permit;
        let Some(saved) = d.ledger.get(&key).map_err(|e| e.to_string())? else {
            return Ok(None);
        };
        let inputs = d.ledger.inputs(&key).map_err(|e| e.to_string())?;
        let before: Value = serde_json::from_str(&saved.report_json).unwrap_or(Value::Null);
        let versions = SavedVersions::of_report(&before);
        let settled = d.settle_on(&inputs, until, q.pinned.then_some(&versions))?;
        let (fingerprint, files) = d.fingerprint();
        let after: Value = serde_json::from_str(&settled.json).unwrap_or(Value::Null);
        let moved = moved(&before, &after);
        let saved_print = saved.meta["fingerprint"].as_str().unwrap_or_default().to_string();
        let files_changed = files_changed(&saved.meta["data_files"], &files);
        if std::time::Instant::now() >= until {
            return Err(Stopped::TimedOut);
        }
        let data_versions = d.data_versions(&after);
        let r = NewRerun {
            recite: env!("CARGO_PKG_VERSION").to_string(),
            fingerprint: fingerprint.clone(),
            data_files: files,
            report_json: settled.json,
            report_html: settled.html,
            moved: moved.clone(),
            on: q.on().to_string(),
            data_versions: data_versions.clone(),
        };
        let Some((n, created)) = d.ledger.save_rerun(&key, &r).map_err(|e| e.to_string())? else {
            return Ok(None);
        };
        let pinned: Vec<Value> =
            versions.iter().map(|(s, t, v)| json!({ "study": s, "table": t, "version": v })).collect();
        Ok(Some(json!({
            "id": key,
            "rerun": n,
            "created": created,
            "on": q.on(),
            "pinned": pinned,
            "reproduced": same_rulings(&before, &after),
            "data_versions_before": saved.meta["data_versions"],
            "data_versions": data_versions,
            "data_layer_changed": saved_print != fingerprint,
            "saved_fingerprint": saved_print,
            "fingerprint": fingerprint,
            "files_changed": files_changed,
            "moved": moved,
            "verdicts_before": before["summary"]["verdicts"],
            "verdicts_after": after["summary"]["verdicts"],
            "report": format!("/cases/{key}/reruns/{n}/report"),
        })))
    });
    let answer = finish(&svc, deadline, job).await?.ok_or_else(|| no_case(&id))?;
    Ok(json_response(&answer))
}

/// `POST /v1/cases/{id}/rerun`'s query: which data the re-run reads.
struct RerunQuery {
    /// The versions the ruling read (`on=pinned`), rather than the latest.
    pinned: bool,
}

impl RerunQuery {
    fn on(&self) -> &'static str {
        if self.pinned { "pinned" } else { "latest" }
    }
}

impl Params for RerunQuery {
    const ALLOWED: &'static [&'static str] = &["on"];

    fn read(q: &Pairs) -> Result<Self, Problem> {
        match q.single("on")? {
            None | Some("latest") => Ok(RerunQuery { pinned: false }),
            Some("pinned") => Ok(RerunQuery { pinned: true }),
            Some(_) => Err(Problem::bad_request(
                "query.on",
                "latest (the data as it is now) or pinned (the versions the ruling read)",
            )),
        }
    }
}

/// A case's two reports, from one run.
struct Settled {
    json: String,
    html: String,
}

impl Desk {
    /// Settles `inputs` as `recite check` would, writing the JSON and the HTML report at once;
    /// stops at a write past `until`.
    fn settle(
        &self,
        inputs: &[NewInput],
        until: std::time::Instant,
        progress: Option<Progress>,
    ) -> Result<Settled, Stopped> {
        self.settle_with(inputs, until, progress, None)
    }

    /// [`Desk::settle`] without progress, on the versions a ruling read when `saved` is given.
    fn settle_on(
        &self,
        inputs: &[NewInput],
        until: std::time::Instant,
        saved: Option<&SavedVersions>,
    ) -> Result<Settled, Stopped> {
        self.settle_with(inputs, until, None, saved)
    }

    /// The two reports a case keeps, written in one pass: the JSON and the HTML buffers (each
    /// refusing writes past `until`) and the writer that feeds both.
    fn case_reports(&self, until: std::time::Instant) -> (Buffer, Buffer, Tee) {
        let (json, html) = (Buffer::new(until), Buffer::new(until));
        let layer = Some(self.svc.layer.clone());
        let tee = Tee(vec![
            report::writer(
                report::ReportFormat::Json,
                report::WriterOptions { layer: layer.clone(), ..Default::default() },
                Box::new(json.clone()),
            ),
            report::writer(
                report::ReportFormat::Html,
                report::WriterOptions { layer, ..Default::default() },
                Box::new(html.clone()),
            ),
        ]);
        (json, html, tee)
    }

    fn settle_with(
        &self,
        inputs: &[NewInput],
        until: std::time::Instant,
        progress: Option<Progress>,
        saved: Option<&SavedVersions>,
    ) -> Result<Settled, Stopped> {
        let (json, html, mut tee) = self.case_reports(until);
        if let Some(p) = progress {
            tee.0.push(Box::new(p));
        }
        let named: Vec<(&str, &[u8])> =
            inputs.iter().map(|i| (i.name.as_str(), i.bytes.as_slice())).collect();
        match saved {
            Some(saved) => {
                let on = OnSaved { scan: &self.svc.engine, saved };
                self.svc.check_on(&named, &mut tee, true, &on)?;
            }
            None => self.svc.check_onto(&named, &mut tee, true)?,
        }
        drop(tee);
        Ok(Settled { json: json.text()?, html: html.text()? })
    }

    /// What each table a report's claims read was at (issue 48), one entry per study, table
    /// and version: a versioned table's `data_version` as the report gives it (Delta: the
    /// version and its commit time; PostgreSQL: "unversioned" and the server's snapshot), and
    /// for a table of local files their SHA-256 digests (names relative to the data layer, as
    /// in the fingerprint); a table on object storage by its location.
    fn data_versions(&self, report: &Value) -> Value {
        let root = Path::new(&self.svc.layer.path);
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let mut out: Vec<Value> = Vec::new();
        for c in claims(report) {
            let (Some(study), Some(table)) = (c["rerun"]["study"].as_str(), c["rerun"]["table"].as_str())
            else {
                continue;
            };
            let v = &c["rerun"]["data_version"];
            let entry = if v.is_object() {
                let mut e = json!({ "study": study, "table": table });
                for k in ["format", "version", "committed", "chosen", "snapshot"] {
                    if !v[k].is_null() {
                        e[k] = v[k].clone();
                    }
                }
                e
            } else {
                let found = self
                    .svc
                    .catalog
                    .studies
                    .iter()
                    .find(|s| s.study.name == study)
                    .and_then(|s| s.tables.iter().find(|t| t.name == table).map(|t| (s, t)));
                let Some((s, t)) = found else { continue };
                if recite_core::catalog::url_scheme(&t.path).is_some() {
                    let location = recite_engine::objstore::redact(&t.path).into_owned();
                    json!({ "study": study, "table": table, "format": "object", "location": location })
                } else {
                    let mut files: Vec<Value> = files_of(&t.location(s))
                        .into_iter()
                        .map(|f| {
                            let full = f.canonicalize().unwrap_or(f);
                            let name = full.strip_prefix(&root).unwrap_or(&full).display().to_string();
                            let sha = self.hash(&full).map(|(_, sha)| sha);
                            json!({ "name": name, "sha256": sha })
                        })
                        .collect();
                    files.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
                    json!({ "study": study, "table": table, "format": "files", "files": files })
                }
            };
            if !out.contains(&entry) {
                out.push(entry);
            }
        }
        Value::Array(out)
    }

    /// The data layer's fingerprint (`sha256:…` over every study file and every local table
    /// file: name, size, SHA-256) and the files it covers. A table on object storage counts by
    /// its location only (its bytes are not fetched for this).
    fn fingerprint(&self) -> (String, Value) {
        let catalog = &self.svc.catalog;
        let root = Path::new(&self.svc.layer.path);
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let mut files: Vec<PathBuf> = Vec::new();
        let mut remote: Vec<String> = Vec::new();
        for s in &catalog.studies {
            files.push(s.file.clone());
            for t in &s.tables {
                if recite_core::catalog::url_scheme(&t.path).is_some() {
                    remote.push(recite_engine::objstore::redact(&t.path).into_owned());
                } else {
                    files.extend(files_of(&t.location(s)));
                }
            }
        }
        files.extend(catalog.broken.iter().map(|b| b.file.clone()));
        let mut entries: Vec<(String, Value)> = Vec::new();
        for f in files {
            let full = f.canonicalize().unwrap_or(f);
            let name = full.strip_prefix(&root).unwrap_or(&full).display().to_string();
            let (size, sha) = match self.hash(&full) {
                Some((size, sha)) => (json!(size), json!(sha)),
                None => (Value::Null, Value::Null),
            };
            entries.push((name.clone(), json!({ "name": name, "size": size, "sha256": sha })));
        }
        for url in remote {
            entries.push((url.clone(), json!({ "name": url, "size": null, "sha256": null, "remote": true })));
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries.dedup_by(|a, b| a.0 == b.0);
        let mut text = String::from("recite data layer 1\n");
        for (_, e) in &entries {
            text.push_str(&format!("{}\t{}\t{}\n", e["sha256"], e["size"], e["name"]));
        }
        let digest = format!("sha256:{}", ledger::sha256_hex(text.as_bytes()));
        (digest, Value::Array(entries.into_iter().map(|(_, e)| e).collect()))
    }

    /// A file's size and SHA-256, read again only when its metadata changed.
    fn hash(&self, path: &Path) -> Option<(u64, String)> {
        use std::os::unix::fs::MetadataExt as _;
        let m = std::fs::metadata(path).ok()?;
        let key = format!(
            "{} {}.{} {}.{} {} {}",
            m.len(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
            m.ino(),
            m.dev()
        );
        let mut memo = self.hashed.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((k, size, sha)) = memo.get(path)
            && *k == key
        {
            return Some((*size, sha.clone()));
        }
        drop(memo);
        let sha = sha256_file(path)?;
        memo = self.hashed.lock().unwrap_or_else(|e| e.into_inner());
        memo.insert(path.to_path_buf(), (key, m.len(), sha.clone()));
        Some((m.len(), sha))
    }
}

/// A file's SHA-256, read in pieces.
fn sha256_file(path: &Path) -> Option<String> {
    use sha2::Digest as _;
    use std::io::Read as _;
    let mut f = std::fs::File::open(path).ok()?;
    let mut h = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match f.read(&mut buf).ok()? {
            0 => break,
            n => h.update(&buf[..n]),
        }
    }
    Some(ledger::hex(&h.finalize()))
}

/// The files a table location names: a file, every file under a folder, or a glob's matches.
fn files_of(location: &Path) -> Vec<PathBuf> {
    let text = location.to_string_lossy();
    if text.contains(['*', '?', '[']) {
        return glob::glob(&text)
            .map(|g| g.filter_map(Result::ok).filter(|p| p.is_file()).collect())
            .unwrap_or_default();
    }
    if location.is_dir() {
        let mut found = Vec::new();
        let mut stack = vec![location.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    found.push(p);
                }
            }
        }
        return found;
    }
    // A missing file is named all the same: its absence is part of the fingerprint.
    vec![location.to_path_buf()]
}

/// The case to save from a run: its search rows, verdicts and data layer read off the JSON
/// report.
fn new_case(
    s: Settled,
    inputs: Vec<NewInput>,
    fingerprint: String,
    data_files: Value,
    data_versions: Value,
) -> NewCase {
    let report: Value = serde_json::from_str(&s.json).unwrap_or(Value::Null);
    let rows = claim_rows(&report);
    let claims = report["summary"]["claims"].as_u64().unwrap_or(0) as usize;
    NewCase {
        recite: env!("CARGO_PKG_VERSION").to_string(),
        data_layer: report["data_layer"].clone(),
        fingerprint,
        data_files,
        data_versions,
        claims,
        verdict: most_serious(&rows),
        verdicts: report["summary"]["verdicts"].clone(),
        report_json: s.json,
        report_html: s.html,
        inputs,
        rows,
    }
}

/// Every claim of a report as search rows: one per measure it states a number for (one with
/// no measure when it states none), with its study, period and verdict.
fn claim_rows(report: &Value) -> Vec<ClaimRow> {
    let mut rows = Vec::new();
    for (n, c) in claims(report).into_iter().enumerate() {
        let text = |v: &Value| v.as_str().map(str::to_string);
        let (study, period) = (text(&c["rerun"]["study"]), text(&c["rerun"]["period"]));
        let verdict = text(&c["verdict"]).unwrap_or_default();
        let measures: Vec<String> = c["measures"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["claims"].as_array().is_some_and(|a| !a.is_empty()))
            .filter_map(|m| text(&m["name"]))
            .collect();
        if measures.is_empty() {
            rows.push(ClaimRow { n, study, period, measure: None, verdict });
        } else {
            for m in measures {
                rows.push(ClaimRow {
                    n,
                    study: study.clone(),
                    period: period.clone(),
                    measure: Some(m),
                    verdict: verdict.clone(),
                });
            }
        }
    }
    rows
}

/// Every claim of a JSON report, in order over its inputs.
fn claims(report: &Value) -> Vec<&Value> {
    report["inputs"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|i| i["claims"].as_array().into_iter().flatten())
        .collect()
}

/// The most serious verdict among the rows (verdicts are ordered most serious first).
fn most_serious(rows: &[ClaimRow]) -> Option<String> {
    let rank = |v: &str| Verdict::ALL.iter().position(|x| x.as_str() == v).unwrap_or(Verdict::ALL.len());
    rows.iter().map(|r| r.verdict.as_str()).min_by_key(|v| rank(v)).map(str::to_string)
}

/// The data files added, removed or changed between two fingerprints' file lists.
fn files_changed(before: &Value, after: &Value) -> Value {
    let index = |v: &Value| -> HashMap<String, Value> {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|f| (f["name"].as_str().unwrap_or_default().to_string(), f["sha256"].clone()))
            .collect()
    };
    let (b, a) = (index(before), index(after));
    let mut out: Vec<Value> = Vec::new();
    for (name, sha) in &a {
        match b.get(name) {
            None => out.push(json!({ "name": name, "change": "added" })),
            Some(old) if old != sha => out.push(json!({ "name": name, "change": "changed" })),
            _ => {}
        }
    }
    for name in b.keys().filter(|n| !a.contains_key(*n)) {
        out.push(json!({ "name": name, "change": "removed" }));
    }
    out.sort_by(|x, y| x["name"].as_str().cmp(&y["name"].as_str()));
    Value::Array(out)
}

/// A report kept in memory, refusing writes past the time limit (which stops the check).
#[derive(Clone)]
struct Buffer {
    data: Arc<Mutex<Vec<u8>>>,
    until: std::time::Instant,
}

impl Buffer {
    fn new(until: std::time::Instant) -> Buffer {
        Buffer { data: Arc::default(), until }
    }

    fn text(&self) -> Result<String, String> {
        let bytes = std::mem::take(&mut *self.data.lock().unwrap_or_else(|e| e.into_inner()));
        String::from_utf8(bytes).map_err(|_| "a report was not UTF-8".to_string())
    }
}

impl std::io::Write for Buffer {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if std::time::Instant::now() >= self.until {
            return Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "the request's time limit passed"));
        }
        self.data.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(verdict: &str, value: f64, n: u64) -> Value {
        json!({ "summary": { "verdicts": { verdict: 1 } }, "inputs": [ { "claims": [ {
            "verdict": verdict,
            "rerun": { "study": "Versant Mega Tracker", "period": "W6 (April 2026)" },
            "base": { "n": n },
            "measures": [
                { "name": "Aware", "estimate": { "value": 1.0 } },
                { "name": "Considered", "estimate": { "value": value }, "claims": [ { "matched": true } ] }
            ]
        } ] } ] })
    }

    #[test]
    fn search_rows_name_the_claimed_measures() {
        let rows = claim_rows(&report("REPRODUCED", 0.44, 4654));
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].measure.as_deref(), Some("Considered"));
        assert_eq!(rows[0].period.as_deref(), Some("W6 (April 2026)"));
        let mixed = [
            ClaimRow { n: 0, study: None, period: None, measure: None, verdict: "REPRODUCED".into() },
            ClaimRow { n: 1, study: None, period: None, measure: None, verdict: "DISCREPANT".into() },
        ];
        assert_eq!(most_serious(&mixed).as_deref(), Some("DISCREPANT"));
    }

    #[test]
    fn junk_is_refused_and_a_transcript_without_claims_is_not() {
        let junk = json!({ "summary": { "claims": 0 }, "inputs": [ { "file": "notes.txt", "claims": [], "findings": [
            { "locator": { "file": "notes.txt", "line": 1, "column": 1, "pointer": "" },
              "rule": "input/malformed", "level": "MUST", "message": "malformed JSON: expected value" } ] } ] });
        let p = refused(&junk.to_string()).expect("refused");
        assert_eq!((p.status, p.location.as_deref()), (422, Some("body")));
        assert!(p.detail.starts_with("notes.txt, line 1, column 1: malformed JSON"), "{}", p.detail);
        // Read, with nothing to claim and nothing wrong: a case all the same.
        let quiet = json!({ "summary": { "claims": 0 }, "inputs": [ { "file": "t.json", "claims": [], "findings": [] } ] });
        assert!(refused(&quiet.to_string()).is_none());
        // A SHOULD finding is not the reader's refusal.
        let should = json!({ "inputs": [ { "file": "t.json", "claims": [], "findings": [
            { "locator": {}, "rule": "a2a/malformed", "level": "SHOULD", "message": "m" } ] } ] });
        assert!(refused(&should.to_string()).is_none());
        assert_eq!(human_time("2026-12-07T15:43:42.979Z"), "7 Dec 2026, 15:43 UTC");
    }
}
