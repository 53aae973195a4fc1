//! `POST /v1/probe` (issue 50; docs/probe.md): `recite probe` from the service and the
//! workbench. The agent's card is fetched and each skill called as the command line does
//! ([`crate::probe::Client`], the same plan and rule from recite-core's `probe`), then the replies
//! are settled as one case and saved in the ledger: its inputs are the replies as received, its
//! report the probe's (the card first, with its findings, then each call's transcript).
//!
//! Within the bounds of `POST /v1/check` (a turn of `--concurrency`, `--time-limit` from the
//! request to the saved case, every card and reply at most `--max-input-size`, all of them
//! together too), and only towards agents the server's `--probe-allow` patterns name: none by
//! default, so the service is no open proxy. The URL asked for, every interface the card names
//! and every redirect are checked against them; nothing of the request is sent on (no header,
//! no token), and a redirect elsewhere is not followed.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Value, json};

use recite_core::input::Finding;
use recite_core::probe::{self as plan, Agent, CardInput, Decorated, PlanOptions};

use super::{Desk, Settled, finish, new_case, turn};
use crate::extract::{Payload, json_response};
use crate::ledger::NewInput;
use crate::probe::{AllowList, Client, ClientOptions, ProbeNetError, file_part};
use crate::problem::{Problem, Stopped};

/// The card's name in the report.
const CARD_FILE: &str = "agent-card.json";

/// The most skill calls one probe makes (as `recite probe --max-calls`' default).
pub const MAX_CALLS: usize = 20;

/// `POST /v1/probe`'s body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Asked {
    /// The agent's base URL, or its card's.
    url: String,
    /// Prompts, as `recite probe --prompts` lines: `{skill, text | parts}`.
    #[serde(default)]
    prompts: Vec<Value>,
    /// Send the skills' own examples from the card (default true).
    #[serde(default = "yes")]
    examples: bool,
    /// Stream when the card offers it (default true).
    #[serde(default = "yes")]
    stream: bool,
    /// At most this many calls (at most [`MAX_CALLS`]).
    max_calls: Option<usize>,
}

fn yes() -> bool {
    true
}

fn refused(location: &str, detail: String) -> Problem {
    Problem { status: 403, title: "not allowed", detail, location: Some(location.into()), retry_after: None }
}

/// The agent answered with nothing recite can call or read (502).
fn bad_gateway(detail: String) -> Problem {
    Problem { status: 502, title: "bad gateway", detail, location: None, retry_after: None }
}

/// What the calls brought back, ready to settle.
struct Probed {
    card: CardInput,
    extra: HashMap<String, Vec<Finding>>,
    replies: Vec<NewInput>,
    calls: usize,
}

/// `POST /v1/probe` with `{"url": …, "prompts"?: […], "examples"?: bool, "stream"?: bool,
/// "max_calls"?: N}`: 201 with the case (as `POST /v1/cases` answers), its summary and the
/// probe's (`calls`, `answered`).
pub(super) async fn start(
    State(desk): State<Arc<Desk>>,
    Payload(body): Payload,
) -> Result<Response, Problem> {
    let svc = desk.svc.clone();
    let allow = svc.probe_allow.clone();
    if allow.is_empty() {
        return Err(refused(
            "body.url",
            "this server probes no agent: start it with --probe-allow HOST[:PORT] for each agent it may call"
                .into(),
        ));
    }
    let asked: Asked = serde_json::from_slice(&body).map_err(|e| {
        Problem::bad_request(
            "body",
            format!("{{\"url\": …, \"prompts\"?: […], \"examples\"?, \"stream\"?, \"max_calls\"?}}: {e}"),
        )
    })?;
    allow.check(&asked.url).map_err(|e| refused("body.url", e.to_string()))?;
    let lines: Vec<String> = asked.prompts.iter().map(Value::to_string).collect();
    let prompts = plan::read_prompts(&lines.join("\n"))
        .map_err(|e| Problem::bad_request("body.prompts", e.to_string()))?;
    let max_calls = match asked.max_calls {
        None => MAX_CALLS,
        Some(n @ 1..=MAX_CALLS) => n,
        Some(_) => return Err(Problem::bad_request("body.max_calls", format!("from 1 to {MAX_CALLS}"))),
    };
    let (permit, deadline, until) = turn(&svc).await?;
    let options = PlanOptions { examples: asked.examples, max_calls };
    let calling = call(&svc, allow, &asked, &prompts, options);
    let probed = tokio::time::timeout_at(deadline, calling)
        .await
        .map_err(|_| Problem::time_limit(svc.time_limit()))??;
    let (d, calls, answered) = (desk.clone(), probed.calls, probed.replies.len());
    let job = tokio::task::spawn_blocking(move || -> Result<_, Stopped> {
        let _turn = permit;
        let Probed { card, extra, replies, .. } = probed;
        let settled = d.settle_probe(card, extra, &replies, until)?;
        let (fingerprint, files) = d.fingerprint();
        // What each table was read at, kept with the case as for any other (issue 48).
        let report: serde_json::Value =
            serde_json::from_str(&settled.json).unwrap_or(serde_json::Value::Null);
        let data_versions = d.data_versions(&report);
        let case = new_case(settled, replies, fingerprint, files, data_versions);
        if std::time::Instant::now() >= until {
            return Err(Stopped::TimedOut);
        }
        let summary = json!({ "claims": case.claims, "verdict": case.verdict, "verdicts": case.verdicts });
        let (id, created) = d.ledger.save(&case).map_err(|e| Stopped::Failed(e.to_string()))?;
        Ok((id, created, summary))
    });
    let (id, created, summary) = finish(&svc, deadline, job).await?;
    let body = json!({
        "id": id,
        "created": created,
        "permalink": format!("{}/cases/{id}", desk.base),
        "url": format!("/cases/{id}"),
        "json": format!("/v1/cases/{id}"),
        "export": format!("/cases/{id}/export"),
        "summary": summary,
        "probe": { "calls": calls, "answered": answered },
    });
    let mut r = json_response(&body);
    *r.status_mut() = StatusCode::CREATED;
    if let Ok(v) = HeaderValue::from_str(&format!("/cases/{id}")) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    Ok(r)
}

/// Fetches the card and makes the calls, as `recite probe` does, within the allow-list.
async fn call(
    svc: &crate::Service,
    allow: AllowList,
    asked: &Asked,
    prompts: &[plan::Prompt],
    options: PlanOptions,
) -> Result<Probed, Problem> {
    let o = ClientOptions {
        headers: Vec::new(),
        bearer: None,
        timeout: svc.time_limit(),
        max_reply: svc.max_input,
        allow: Some(allow.clone()),
    };
    let client = Client::new(o).map_err(|e| Problem::internal(e.to_string()))?;
    let (card_url, card_bytes) = client.card(&asked.url).await.map_err(|e| match e {
        ProbeNetError::NotAllowed(_) | ProbeNetError::NotHttp(_) => refused("body.url", e.to_string()),
        other => bad_gateway(other.to_string()),
    })?;
    let card_json: Value = serde_json::from_slice(&card_bytes).map_err(|e| {
        bad_gateway(format!("the Agent Card at {} is not JSON: {e}", recite_core::redact::redact(&card_url)))
    })?;
    let agent = Agent::from_card(&card_json, &card_url).map_err(|e| bad_gateway(e.to_string()))?;
    // The card chooses where the calls go: there too, only where the server may call.
    allow
        .check(&agent.endpoint.url)
        .map_err(|e| refused("body.url", format!("the Agent Card's interface {e}")))?;
    let (calls, mut card_findings) = plan::plan(&agent, prompts, options, CARD_FILE);
    if calls.is_empty() {
        return Err(Problem {
            status: 422,
            title: "nothing to call",
            detail: plan::ProbeError::NothingToCall.to_string(),
            location: Some("body.prompts".into()),
            retry_after: None,
        });
    }
    let streaming = agent.streaming && asked.stream;
    let (mut extra, mut replies, mut held) = (HashMap::new(), Vec::new(), card_bytes.len() as u64);
    for (i, c) in calls.iter().enumerate() {
        let req = plan::request(&agent.endpoint, streaming, c, &format!("recite-probe-{}", i + 1));
        match client.call(&req).await {
            Err(why) => card_findings.push(plan::call_failed(CARD_FILE, c, &why)),
            Ok(reply) => {
                held += reply.body.len() as u64;
                if held > svc.max_input {
                    return Err(bad_gateway(format!(
                        "the agent's card and replies together are over {} bytes (--max-input-size)",
                        svc.max_input
                    )));
                }
                let ext = if reply.sse { "sse" } else { "json" };
                let name = format!("{:02}-{}.{ext}", i + 1, file_part(&c.skill));
                let doc = recite_core::transcript::read_bytes(&name, &reply.body);
                let mut found = Vec::new();
                if let Some(status) = &reply.failed {
                    found.push(plan::call_failed(&name, c, status));
                }
                found.extend(plan::conformance(&doc, c));
                extra.insert(name.clone(), found);
                replies.push(NewInput { name, bytes: reply.body });
            }
        }
    }
    let card = CardInput::new(CARD_FILE, &card_json, card_findings);
    Ok(Probed { card, extra, replies, calls: calls.len() })
}

impl Desk {
    /// Settles the replies as `recite probe` reports them: the card first, each call's findings
    /// with its transcript; the JSON and the HTML report from one run, stopped at a write past
    /// `until`.
    fn settle_probe(
        &self,
        card: CardInput,
        extra: HashMap<String, Vec<Finding>>,
        replies: &[NewInput],
        until: std::time::Instant,
    ) -> Result<Settled, Stopped> {
        let (json, html, mut tee) = self.case_reports(until);
        let named: Vec<(&str, &[u8])> =
            replies.iter().map(|i| (i.name.as_str(), i.bytes.as_slice())).collect();
        {
            let mut w = Decorated::new(&mut tee, card, extra);
            self.svc.check_onto(&named, &mut w, true)?;
        }
        drop(tee);
        Ok(Settled { json: json.text()?, html: html.text()? })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::Router;
    use axum::body::Body;
    use axum::http::Request;
    use recite_core::report;
    use tower::ServiceExt as _;

    use super::*;
    use crate::ledger::Ledger;

    #[test]
    fn the_body_is_read_strictly() {
        let a: Asked = serde_json::from_str(r#"{"url": "http://127.0.0.1:9/"}"#).unwrap();
        assert!(a.examples && a.stream && a.prompts.is_empty() && a.max_calls.is_none());
        let unknown = serde_json::from_str::<Asked>(r#"{"url": "http://x/", "header": "Authorization: t"}"#);
        assert!(unknown.is_err(), "no header or token is taken from a request");
    }

    /// The workbench's routes over an empty data layer, allowed to probe `allow`, on a ledger
    /// in a temporary folder. Built outside the runtime (the engine has its own).
    fn workbench(allow: &[String]) -> (Router, tempfile::TempDir) {
        let backend = crate::Backend {
            catalog: Default::default(),
            registry: Default::default(),
            engine: recite_engine::engine::Engine::new(),
            layer: report::DataLayer { path: ".".into(), source: report::DataSource::Flag, warning: None },
            settle: Default::default(),
        };
        let limits = crate::Limits {
            max_input_size: 1 << 20,
            concurrency: 1,
            queue: 0,
            time_limit: Duration::from_secs(20),
            warm_bytes: 0,
        };
        let svc = crate::Service::new(backend, limits).probing(AllowList::parse(allow).unwrap());
        let dir = tempfile::tempdir().unwrap();
        let ledger = Arc::new(Ledger::open(&dir.path().join("ledger.sqlite3")).unwrap());
        (super::super::routes(Arc::new(svc), ledger, "http://127.0.0.1:8787"), dir)
    }

    /// `POST /v1/probe` with `body`: status and JSON answer. (Given a clone: the service, and the
    /// engine's runtime in it, must be dropped outside the test's runtime.)
    async fn post(app: Router, body: Value) -> (u16, Value) {
        let req = Request::post("/v1/probe")
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap();
        let r = app.oneshot(req).await.unwrap();
        let status = r.status().as_u16();
        let bytes = axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap();
        (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
    }

    /// A loopback server answering every request with `status`, `headers` and `body`: its port.
    async fn fixed(status: u16, headers: Vec<(&'static str, String)>, body: String) -> u16 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let answer = move || {
            let (headers, body) = (headers.clone(), body.clone());
            async move {
                let mut r = axum::response::Response::new(Body::from(body));
                *r.status_mut() = StatusCode::from_u16(status).unwrap();
                for (k, v) in headers {
                    r.headers_mut().insert(k, HeaderValue::from_str(&v).unwrap());
                }
                r
            }
        };
        let app = Router::new().fallback(answer);
        tokio::spawn(async move { axum::serve(listener, app).await });
        port
    }

    #[test]
    fn without_probe_allow_nothing_is_probed() {
        let (app, _dir) = workbench(&[]);
        let (status, p) = runtime().block_on(post(app.clone(), json!({ "url": "http://127.0.0.1:9/" })));
        assert_eq!(status, 403, "{p}");
        assert_eq!(p["location"], "body.url");
        assert!(p["detail"].as_str().unwrap().contains("--probe-allow"), "{p}");
    }

    #[test]
    fn only_the_allowed_host_and_port_are_probed() {
        let rt = runtime();
        for url in
            ["http://127.0.0.1:10/", "http://localhost:9/", "https://127.0.0.1:9/", "http://10.0.0.1:9/"]
        {
            let (app, _dir) = workbench(&["127.0.0.1:9".to_string()]);
            let (status, p) = rt.block_on(post(app.clone(), json!({ "url": url })));
            assert_eq!(status, 403, "{url}: {p}");
            assert!(p["detail"].as_str().unwrap().contains("--probe-allow"), "{p}");
        }
        let (app, _dir) = workbench(&["127.0.0.1:9".to_string()]);
        let (status, p) =
            rt.block_on(post(app.clone(), json!({ "url": "http://127.0.0.1:9/", "max_calls": 0 })));
        assert_eq!((status, p["location"].as_str()), (400, Some("body.max_calls")), "{p}");
        let (app, _dir) = workbench(&["127.0.0.1:9".to_string()]);
        let (status, p) =
            rt.block_on(post(app.clone(), json!({ "url": "http://127.0.0.1:9/", "token": "x" })));
        assert_eq!((status, p["location"].as_str()), (400, Some("body")), "{p}");
    }

    #[test]
    fn an_allowed_agent_that_does_not_answer_is_a_bad_gateway() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let (app, _dir) = workbench(&[format!("127.0.0.1:{port}")]);
        let (status, p) =
            runtime().block_on(post(app.clone(), json!({ "url": format!("http://127.0.0.1:{port}") })));
        assert_eq!(status, 502, "{p}");
        assert!(p["detail"].as_str().unwrap().contains("cannot fetch the Agent Card"), "{p}");
    }

    #[test]
    fn a_redirect_to_a_host_not_allowed_is_not_followed() {
        let rt = runtime();
        let elsewhere = rt.block_on(fixed(200, vec![], "{}".into()));
        let to = format!("http://127.0.0.1:{elsewhere}/.well-known/agent-card.json");
        let redirector = rt.block_on(fixed(302, vec![("location", to)], String::new()));
        let (app, _dir) = workbench(&[format!("127.0.0.1:{redirector}")]);
        let (status, p) =
            rt.block_on(post(app.clone(), json!({ "url": format!("http://127.0.0.1:{redirector}") })));
        assert_eq!(status, 502, "{p}");
        assert!(p["detail"].as_str().unwrap().contains("was not followed"), "{p}");
    }

    #[test]
    fn a_card_naming_an_interface_elsewhere_is_refused_before_any_call() {
        let rt = runtime();
        let card = json!({
            "name": "elsewhere",
            "supportedInterfaces": [{ "url": "http://169.254.169.254/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0" }],
            "capabilities": {},
            "defaultOutputModes": ["application/json"],
            "skills": [{ "id": "s", "name": "s", "description": "s", "tags": [], "examples": ["hi"] }],
        });
        let headers = vec![("content-type", "application/json".to_string())];
        let agent = rt.block_on(fixed(200, headers, card.to_string()));
        let (app, _dir) = workbench(&[format!("127.0.0.1:{agent}")]);
        let (status, p) =
            rt.block_on(post(app.clone(), json!({ "url": format!("http://127.0.0.1:{agent}") })));
        assert_eq!(status, 403, "{p}");
        assert!(p["detail"].as_str().unwrap().contains("169.254.169.254"), "{p}");
    }
}
