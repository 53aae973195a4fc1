//! `recite probe` against A2A agents nobody here wrote: servers of the official Python SDK
//! (`a2a-sdk`, `tests/probe/agent.py`: its card, routes, bodies and SSE framing, a scripted skill
//! returning the Versant W6 funnel) in four variants, and `recite serve`'s own agent (the
//! official Rust SDK's server). The SDK comes from the clients' virtualenv of
//! `tests/serve/install.sh`; without it these tests are skipped with a message, unless
//! `RECITE_REQUIRE_SERVE_CLIENTS=1` makes that a failure.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::serve::Server;
use crate::support::{code, recite, root, stderr};

/// An agent server of `tests/probe/` on loopback, killed when dropped.
pub(crate) struct Agent {
    child: Child,
    pub(crate) url: String,
}

impl Agent {
    /// Runs `python tests/probe/SCRIPT ARGS` and reads the port it prints once it listens.
    pub(crate) fn spawn(python: &Path, script: &str, args: &[&str]) -> Agent {
        let mut child = Command::new(python)
            .arg(root().join("tests/probe").join(script))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("start tests/probe/{script}: {e}"));
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("the agent's port");
        let Ok(port) = line.trim().parse::<u16>() else {
            let _ = child.kill();
            panic!("tests/probe/{script} printed {line:?}, not its port")
        };
        Agent { child, url: format!("http://127.0.0.1:{port}") }
    }

    /// Starts the agent answering as `variant`, its card listing `binding` first; `None` when
    /// the SDK is not installed (skipped).
    pub(crate) fn start(test: &str, variant: &str, binding: &str) -> Option<Agent> {
        Agent::start_card(test, variant, binding, "1.0")
    }

    /// [`Agent::start`] with a card of A2A `version` (`0.3`: the SDK's v0.3 conversion of its
    /// card, so calls go through its v0.3 compatibility adapter).
    fn start_card(test: &str, variant: &str, binding: &str, version: &str) -> Option<Agent> {
        let python = clients_python(test)?;
        Some(Agent::spawn(&python, "agent.py", &[variant, binding, version]))
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The clients' virtualenv's python (the official A2A SDK with its HTTP server), or `None`
/// after a SKIPPED line.
fn clients_python(test: &str) -> Option<PathBuf> {
    let venv = std::env::var_os("RECITE_SERVE_VENV").map(PathBuf::from).unwrap_or_else(|| {
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache"));
        cache.join("recite-serve-clients")
    });
    let python = venv.join("bin/python");
    if python.is_file() {
        return Some(python);
    }
    let why = format!("{} is not installed (run tests/serve/install.sh)", python.display());
    let required =
        std::env::var_os("RECITE_REQUIRE_SERVE_CLIENTS").is_some_and(|v| !v.is_empty() && v != "0");
    assert!(!required, "RECITE_REQUIRE_SERVE_CLIENTS is set but {why}");
    crate::support::say_skipped(test, &why);
    None
}

/// `recite probe URL ARGS --format json --save DIR`: exit code, report, the folder.
pub(crate) fn probe(url: &str, args: &[&str]) -> (i32, Value, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().to_str().unwrap().to_string();
    let mut all = vec!["probe", url, "--format", "json", "--save", &save];
    all.extend_from_slice(args);
    let out = recite(&all);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("probe wrote no JSON report ({e}): {}", stderr(&out)));
    (code(&out), report, dir)
}

/// Every finding of the report as (rule, level, message).
pub(crate) fn findings(report: &Value) -> Vec<(String, String, String)> {
    let inputs = report["inputs"].as_array().unwrap();
    inputs
        .iter()
        .flat_map(|i| i["findings"].as_array().cloned().unwrap_or_default())
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            (s("rule"), s("level"), s("message"))
        })
        .collect()
}

pub(crate) fn verdicts(report: &Value) -> Vec<String> {
    let inputs = report["inputs"].as_array().unwrap();
    inputs
        .iter()
        .flat_map(|i| i["claims"].as_array().cloned().unwrap_or_default())
        .map(|c| c["verdict"].as_str().unwrap().to_string())
        .collect()
}

pub(crate) fn musts(report: &Value) -> Vec<(String, String, String)> {
    findings(report).into_iter().filter(|(_, l, _)| l == "MUST").collect()
}

#[test]
fn an_sdk_agent_that_cites_passes_and_its_saved_stream_resettles_the_same() {
    let Some(agent) = Agent::start("probe::conforming", "conforming", "JSONRPC") else { return };
    let (status, report, dir) = probe(&agent.url, &[]);
    assert_eq!(status, 0, "{report:#}");
    assert_eq!(verdicts(&report), ["REPRODUCED"], "{report:#}");
    assert!(musts(&report).is_empty(), "{:?}", musts(&report));
    let inputs = report["inputs"].as_array().unwrap();
    // The card first, then the one call, streamed (the card offers streaming): an SSE file.
    assert!(inputs[0]["file"].as_str().unwrap().ends_with("agent-card.json"), "{}", inputs[0]["file"]);
    let sse = inputs[1]["file"].as_str().unwrap();
    assert!(sse.ends_with("01-funnel.sse"), "{sse}");
    let said = findings(&report);
    assert!(
        said.iter().any(|(r, _, m)| r == "probe/skill"
            && m.contains("skill funnel (example 1)")
            && m.ends_with(": conforming")),
        "{said:?}"
    );
    // The saved transcript is the stream as the SDK sent it; `recite check` settles it alike.
    let text = std::fs::read_to_string(dir.path().join("01-funnel.sse")).unwrap();
    assert!(text.starts_with("data: {\"result\": {\"task\""), "{text}");
    let again = recite(&["check", sse, "--format", "json"]);
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["inputs"][0]["claims"], inputs[1]["claims"]);
}

#[test]
fn an_sdk_agent_over_http_json_without_streaming_passes() {
    let Some(agent) = Agent::start("probe::http_json", "conforming", "HTTP+JSON") else { return };
    let (status, report, dir) = probe(&agent.url, &["--no-stream"]);
    assert_eq!(status, 0, "{report:#}");
    assert_eq!(verdicts(&report), ["REPRODUCED"]);
    let body = std::fs::read_to_string(dir.path().join("01-funnel.json")).unwrap();
    assert!(body.starts_with("{\"task\":"), "an HTTP+JSON reply is the bare {{task}}: {body}");
}

#[test]
fn an_sdk_agent_without_the_citation_part_fails_with_the_conformance_must() {
    let Some(agent) = Agent::start("probe::uncited", "uncited", "JSONRPC") else { return };
    let (status, report, _dir) = probe(&agent.url, &[]);
    assert_eq!(status, 1, "{report:#}");
    let m = musts(&report);
    assert!(m.iter().any(|(r, _, _)| r == "upperhand/conformance"), "{m:?}");
    let said = findings(&report);
    assert!(said.iter().any(|(r, _, m)| r == "probe/skill" && m.ends_with("NOT conforming")), "{said:?}");
}

#[test]
fn an_sdk_agent_citing_a_wrong_number_fails_discrepant() {
    let Some(agent) = Agent::start("probe::discrepant", "discrepant", "JSONRPC") else { return };
    let (status, report, _dir) = probe(&agent.url, &[]);
    assert_eq!(status, 1, "{report:#}");
    assert_eq!(verdicts(&report), ["DISCREPANT"], "{report:#}");
    assert!(musts(&report).is_empty(), "a cited wrong number conforms; it is wrong: {:?}", musts(&report));
}

#[test]
fn an_sdk_agent_whose_base_n_is_a_string_breaks_the_required_fields() {
    let Some(agent) = Agent::start("probe::string_n", "string-n", "JSONRPC") else { return };
    let (status, report, _dir) = probe(&agent.url, &[]);
    assert_eq!(status, 1, "{report:#}");
    assert_eq!(verdicts(&report), ["INVALID"], "{report:#}");
    let m = musts(&report);
    assert!(
        m.iter().any(|(r, _, m)| r == "upperhand/conformance"
            && m.contains("Required fields present; base.n is a positive integer")
            && m.contains("/base/n")),
        "{m:?}"
    );
}

#[test]
fn an_sdk_agent_whose_card_omits_the_media_type_passes_with_the_cards_should() {
    let Some(agent) = Agent::start("probe::undeclared", "undeclared", "JSONRPC") else { return };
    let (status, report, _dir) = probe(&agent.url, &[]);
    assert_eq!(status, 0, "a SHOULD does not fail under the default --fail-on: {report:#}");
    assert_eq!(verdicts(&report), ["REPRODUCED"], "{report:#}");
    let said = findings(&report);
    assert!(said.iter().any(|(r, l, _)| r == "upperhand/card-output-modes" && l == "SHOULD"), "{said:?}");
    assert!(said.iter().any(|(r, _, m)| r == "probe/skill" && m.ends_with(": conforming")), "{said:?}");
}

#[test]
fn a_v03_card_is_called_through_the_sdks_v03_adapter_and_passes() {
    let Some(agent) = Agent::start_card("probe::v03", "conforming", "JSONRPC", "0.3") else { return };
    let (status, report, dir) = probe(&agent.url, &[]);
    assert_eq!(status, 0, "{report:#}");
    assert_eq!(verdicts(&report), ["REPRODUCED"], "{report:#}");
    assert_eq!(report["inputs"][0]["format"], "a2a-v03");
    let text = std::fs::read_to_string(dir.path().join("01-funnel.sse")).unwrap();
    assert!(text.contains("\"kind\":\"status-update\""), "a v0.3 stream: {text}");
    // The adapter drops the citation Part's media type: recognised by its shape, said so.
    let said = findings(&report);
    assert!(said.iter().any(|(r, l, _)| r == "upperhand/media-type" && l == "NOTE"), "{said:?}");
}

#[test]
fn a_v03_http_json_agent_without_the_citation_part_fails() {
    let Some(agent) = Agent::start_card("probe::v03_rest", "uncited", "HTTP+JSON", "0.3") else { return };
    let (status, report, _dir) = probe(&agent.url, &["--no-stream"]);
    assert_eq!(status, 1, "{report:#}");
    let m = musts(&report);
    assert!(m.iter().any(|(r, _, _)| r == "upperhand/conformance"), "{m:?}");
    assert!(!m.iter().any(|(r, _, _)| r == "probe/call"), "the v0.3 REST call itself succeeds: {m:?}");
}

#[test]
fn an_unreachable_agent_is_a_usage_error_naming_it() {
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}");
    let out = recite(&["probe", &url, "--timeout", "5"]);
    assert_eq!(code(&out), 2);
    let said = stderr(&out);
    assert!(said.contains(&format!("cannot fetch the Agent Card of {url}")), "{said}");
    assert!(said.to_lowercase().contains("refused"), "{said}");
}

#[test]
fn recite_serves_own_agent_is_probed_with_a_citation_prompt() {
    let ledger = tempfile::tempdir().unwrap();
    let ledger = ledger.path().join("ledger.sqlite3");
    let server = Server::start(&["--ledger", ledger.to_str().unwrap()]);
    let citation =
        std::fs::read_to_string(root().join("examples/citations/versant-w6-considered.json")).unwrap();
    let citation: Value = serde_json::from_str(&citation).unwrap();
    let line = serde_json::json!({
        "skill": "verify",
        "parts": [{"data": citation, "mediaType": "application/vnd.upperhand.citations+json"}],
    });
    let dir = tempfile::tempdir().unwrap();
    let prompts = dir.path().join("prompts.jsonl");
    std::fs::write(&prompts, format!("{line}\n")).unwrap();
    let (status, report, _saved) =
        probe(&server.url(), &["--no-examples", "--prompts", prompts.to_str().unwrap(), "--allow-empty"]);
    let said = findings(&report);
    assert!(musts(&report).is_empty(), "{said:?}");
    assert!(
        said.iter().any(|(r, _, m)| r == "probe/skill" && m.contains("skill verify (prompt 1)")),
        "{said:?}"
    );
    assert_eq!(status, 0, "{report:#}");
}

#[test]
fn recite_serve_probes_an_allowed_sdk_agent_and_keeps_the_case() {
    let Some(agent) = Agent::start("probe::serve", "conforming", "JSONRPC") else { return };
    let port = agent.url.rsplit(':').next().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite3");
    let ledger = ledger.to_str().unwrap();
    let server = Server::start(&["--ledger", ledger, "--probe-allow", &format!("127.0.0.1:{port}")]);
    let json = [("content-type", "application/json")];
    let asked = serde_json::json!({ "url": agent.url }).to_string();
    let r = server.request("POST", "/v1/probe", &json, asked.as_bytes());
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let case = r.json();
    assert_eq!(case["probe"], serde_json::json!({ "calls": 1, "answered": 1 }), "{case:#}");
    assert_eq!(case["summary"]["verdicts"]["REPRODUCED"], 1, "{case:#}");
    let id = case["id"].as_str().unwrap();

    // The case's report is the probe's: the card first, then the call, with its NOTE.
    let report = server.request("GET", &format!("/v1/cases/{id}/report"), &[], b"").json();
    assert_eq!(report["inputs"][0]["file"], "agent-card.json", "{report:#}");
    assert_eq!(report["inputs"][1]["file"], "01-funnel.sse", "{report:#}");
    assert_eq!(verdicts(&report), ["REPRODUCED"]);
    let said = findings(&report);
    assert!(said.iter().any(|(r, _, m)| r == "probe/skill" && m.ends_with(": conforming")), "{said:?}");

    // Its input is the stream as the SDK sent it: `recite check` settles it to the same claims.
    let saved = server.request("GET", &format!("/v1/cases/{id}/inputs/0"), &[], b"");
    assert_eq!(saved.status, 200);
    assert!(
        saved.body.starts_with(b"data: {\"result\": {\"task\""),
        "{}",
        String::from_utf8_lossy(&saved.body)
    );
    let file = dir.path().join("01-funnel.sse");
    std::fs::write(&file, &saved.body).unwrap();
    let again = recite(&["check", file.to_str().unwrap(), "--format", "json"]);
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    // The same claims, but for the file's name and the series the workbench's HTML report adds.
    let bare = |claims: &Value| -> Vec<Value> {
        let mut claims = claims.as_array().unwrap().clone();
        for c in &mut claims {
            let c = c.as_object_mut().unwrap();
            c.remove("series");
            c["locator"].as_object_mut().unwrap().remove("file");
        }
        claims
    };
    assert_eq!(bare(&again["inputs"][0]["claims"]), bare(&report["inputs"][1]["claims"]));

    // Another port of the same host is not allowed, nor is the same port by another name.
    for url in
        [format!("http://127.0.0.1:{}", port.parse::<u16>().unwrap() ^ 1), format!("http://localhost:{port}")]
    {
        let asked = serde_json::json!({ "url": url }).to_string();
        let r = server.request("POST", "/v1/probe", &json, asked.as_bytes());
        crate::serve::problem(&r, 403, Some("body.url"));
    }
}
