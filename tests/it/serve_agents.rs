//! `recite serve` (feature `agents`) and `recite mcp` called by the official SDK clients: the
//! MCP Python SDK over stdio and streamable HTTP, the A2A Python SDK over JSON-RPC and
//! HTTP+JSON (send, get, stream). Their reports are compared with what `recite verify -` /
//! `recite check -` print, as JSON values (the SDKs re-encode what they carry: protobuf's Value
//! holds doubles).
//!
//! The Python clients come from `tests/serve/install.sh` (a cached virtualenv); without it these
//! tests are skipped with a message, unless `RECITE_REQUIRE_SERVE_CLIENTS=1` makes that a
//! failure. A second, independent A2A client is the official JavaScript SDK (`@a2a-js/sdk`,
//! protocol v1.0) under node, from `tests/serve/a2a-js/install.sh` (a cached `node_modules`);
//! a second MCP client is the official TypeScript SDK (`@modelcontextprotocol/sdk`), from
//! `tests/serve/mcp-js/install.sh`; without them their tests are skipped, unless
//! `RECITE_REQUIRE_NODE=1`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::serve::{CITATIONS, Server, TRANSCRIPTS, cli, read};
use crate::support::{command, root, run};

/// The clients' virtualenv's python, or `None` (after a SKIPPED line) when it is not installed
/// and `RECITE_REQUIRE_SERVE_CLIENTS` is not set.
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

/// `clients.py ARGS` with the venv's python: what the clients received.
fn clients(python: &Path, args: &[&str]) -> Value {
    let out = Command::new(python)
        .arg(root().join("tests/serve/clients.py"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run clients.py");
    assert!(
        out.status.success(),
        "clients.py {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).expect("clients.py prints JSON")
}

/// Equal as JSON, numbers by value (the SDKs re-encode them: protobuf's Value holds doubles).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn cli_json(args: &[&str], stdin: &[u8]) -> Value {
    serde_json::from_slice(&cli(args, stdin)).expect("the CLI wrote JSON")
}

/// What an MCP client received, checked against the command line.
fn check_mcp(got: &Value, citation: &str, transcript: &str) {
    let names: Vec<&str> =
        got["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    for t in ["verify_citation", "check_transcript", "list_catalog", "list_extractors"] {
        assert!(names.contains(&t), "tool {t} missing: {names:?}");
    }
    let tool = |n: &str| got["tools"].as_array().unwrap().iter().find(|t| t["name"] == n).unwrap().clone();
    assert!(tool("verify_citation")["input_schema"]["properties"]["citation"].is_object());
    assert!(tool("check_transcript")["input_schema"]["properties"]["text"].is_object());
    // Every tool declares its output schema (the SDK validates each structured result against it).
    for t in ["verify_citation", "check_transcript", "list_catalog", "list_extractors"] {
        assert_eq!(tool(t)["has_output_schema"], true, "{t}");
    }
    assert_eq!(got["extractors"]["is_error"], false, "{}", got["extractors"]);
    assert!(got["extractors"]["structured"]["extractors"].as_array().is_some_and(|e| !e.is_empty()));
    // An input over --max-input-size is a tool error saying so, over stdio and HTTP alike.
    assert_eq!(got["oversize"]["is_error"], true, "{}", got["oversize"]);
    let said = got["oversize"]["text"].to_string();
    assert!(said.contains("--max-input-size"), "{said}");
    let cbytes = read(citation);
    let want = cli_json(&["verify", "-", "--format", "json"], &cbytes);
    assert_eq!(got["verify"]["is_error"], false, "{}", got["verify"]);
    assert!(
        same(&got["verify"]["structured"], &want),
        "verify_citation: {}\nCLI: {want}",
        got["verify"]["structured"]
    );
    let bare: Value = serde_json::from_slice(&cbytes).unwrap();
    let bare = bare.get("citation").cloned().unwrap_or(bare);
    let pair = serde_json::to_vec(&serde_json::json!({ "citation": bare })).unwrap();
    let want = cli_json(&["verify", "-", "--format", "json", "--claim", "Considered=99%"], &pair);
    assert!(same(&got["verify_claim"]["structured"], &want), "verify_citation with claims");
    assert_eq!(want["summary"]["verdicts"]["DISCREPANT"], 1, "{want}");
    let want = cli_json(&["check", "-", "--format", "json"], &read(transcript));
    assert!(same(&got["check"]["structured"], &want), "check_transcript: {}", got["check"]["structured"]);
    let studies = got["catalog"]["structured"]["studies"].as_array().unwrap();
    assert!(studies.iter().any(|s| s["study"]["name"] == "Versant Mega Tracker"), "{}", got["catalog"]);
    assert_eq!(got["bad"]["is_error"], true, "{}", got["bad"]);
}

#[test]
fn serve_mcp_python_sdk_over_stdio_gets_the_cli_reports() {
    let Some(python) = clients_python("serve_mcp_python_sdk_over_stdio_gets_the_cli_reports") else { return };
    let data = root().join("datasets").display().to_string();
    let (citation, transcript) = (CITATIONS[0], TRANSCRIPTS[0]);
    let got = clients(&python, &["mcp-stdio", env!("CARGO_BIN_EXE_recite"), &data, citation, transcript]);
    check_mcp_with_data(&got, citation, transcript, &data);
    // Resources over stdio: the catalog (list_catalog's answer) and the extractors; `recite mcp`
    // keeps no ledger, so no cases, and reading them is "not found".
    assert_eq!(got["resources"], serde_json::json!(["recite://catalog", "recite://extractors"]));
    assert_eq!(got["templates"], serde_json::json!([]));
    let catalog = serde_json::json!({ "read": { "recite://catalog": got["read_catalog"].clone() } });
    assert!(same(&resource_json(&catalog["read"], "recite://catalog"), &got["catalog"]["structured"]));
    let not_found = if got["protocol_version"] == "2025-11-25" { -32002 } else { -32602 };
    assert_eq!(got["read_cases"]["error"]["code"], not_found, "{}", got["read_cases"]);
}

/// [`check_mcp`] for a server run with `--data DATA`: the reports name that layer as given.
fn check_mcp_with_data(got: &Value, citation: &str, transcript: &str, data: &str) {
    let mut got = got.clone();
    for k in ["verify", "verify_claim", "check"] {
        let layer = &mut got[k]["structured"]["data_layer"];
        assert_eq!(layer["path"], data, "{k}: {layer}");
        assert_eq!(layer["source"], "flag", "{k}: {layer}");
        // The CLI run below has no --data: what differs is only how the layer was chosen.
        *layer = cli_json(&["verify", "-", "--format", "json"], &read(citation))["data_layer"].clone();
    }
    check_mcp(&got, citation, transcript);
}

/// The MCP protocols the Python SDK speaks over streamable HTTP, as its `mode` and the version
/// it then reports: the 2025-11-25 handshake (a session), the stateless 2026-07-28 protocol (no
/// session), and `auto` (the SDK's default: it discovers the server's newest, 2026-07-28).
const MCP_MODES: [(&str, &str); 3] =
    [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28"), ("auto", "2026-07-28")];

#[test]
fn serve_mcp_python_sdk_over_streamable_http_gets_the_cli_reports() {
    let Some(python) = clients_python("serve_mcp_python_sdk_over_streamable_http_gets_the_cli_reports")
    else {
        return;
    };
    let s = Server::start(&["--max-input-size", "1MiB"]);
    for (mode, version) in MCP_MODES {
        let url = format!("{}/mcp", s.url());
        let got = clients(&python, &["mcp-http", &url, CITATIONS[0], TRANSCRIPTS[0], mode]);
        assert_eq!(got["protocol_version"], version, "mode {mode}");
        check_mcp(&got, CITATIONS[0], TRANSCRIPTS[0]);
        // Ending the session (DELETE /mcp, on the way out) draws no warning from the SDK: it
        // takes 200 and 204 only, and logged "Session termination failed: 202" for rmcp's 202.
        assert_eq!(got["warnings"], serde_json::json!([]), "mode {mode}");
    }
}

/// A case saved through the API, for the MCP resources to read: its id.
fn saved_case(s: &Server) -> String {
    let r = s.request("POST", "/v1/cases", &[("Content-Type", "application/json")], &read(TRANSCRIPTS[0]));
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    r.json()["id"].as_str().unwrap().to_string()
}

/// A resource's contents read by a client, as JSON (one content, `application/json`, its URI).
fn resource_json(read: &Value, uri: &str) -> Value {
    let contents = read[uri].as_array().unwrap_or_else(|| panic!("{uri}: {}", read[uri]));
    assert_eq!(contents.len(), 1, "{uri}: {contents:?}");
    assert_eq!(contents[0]["uri"], uri);
    assert_eq!(contents[0]["mime_type"], "application/json", "{uri}");
    serde_json::from_str(contents[0]["text"].as_str().unwrap()).unwrap()
}

#[test]
fn serve_mcp_resources_are_the_catalog_the_extractors_and_the_ledgers_cases() {
    let Some(python) =
        clients_python("serve_mcp_resources_are_the_catalog_the_extractors_and_the_ledgers_cases")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite3").display().to_string();
    let s = Server::start(&["--ledger", &ledger]);
    let id = saved_case(&s);
    let url = format!("{}/mcp", s.url());
    // What the HTTP API answers for the same things.
    let catalog = s.request("GET", "/v1/catalog", &[], b"").json();
    let extractors = s.request("GET", "/v1/extractors", &[], b"").json();
    let case = s.request("GET", &format!("/v1/cases/{id}"), &[], b"").json();
    assert!(case["report"]["summary"].is_object(), "{case}");
    let case_uri = format!("recite://cases/{id}");
    for (mode, version) in MCP_MODES {
        let got = clients(&python, &["mcp-resources", &url, mode, &id]);
        assert_eq!(got["protocol_version"], version, "mode {mode}");
        let uris: Vec<&str> =
            got["resources"].as_array().unwrap().iter().filter_map(|r| r["uri"].as_str()).collect();
        for uri in ["recite://catalog", "recite://extractors", "recite://cases", case_uri.as_str()] {
            assert!(uris.contains(&uri), "mode {mode}: {uri} is not listed: {uris:?}");
        }
        assert_eq!(
            got["templates"],
            serde_json::json!([{ "uri_template": "recite://cases/{id}", "name": "case", "mime_type": "application/json" }]),
            "mode {mode}"
        );
        let read = &got["read"];
        assert!(same(&resource_json(read, "recite://catalog"), &catalog), "mode {mode}: catalog");
        assert!(same(&resource_json(read, "recite://extractors"), &extractors), "mode {mode}: extractors");
        assert!(
            same(&resource_json(read, &case_uri), &case),
            "mode {mode}: the case is not GET /v1/cases/{id}'s"
        );
        let cases = resource_json(read, "recite://cases");
        assert_eq!(cases["count"], 1, "{cases}");
        assert_eq!(cases["cases"][0]["id"], id.as_str());
        // An unknown resource is the protocol's "not found": -32002 up to 2025-11-25, -32602
        // (invalid params) from 2026-07-28 (SEP-2164).
        let not_found = if version == "2025-11-25" { -32002 } else { -32602 };
        for uri in ["recite://cases/000000000000000000000000", "recite://nothing", "file:///etc/passwd"] {
            assert_eq!(read[uri]["error"]["code"], not_found, "mode {mode}: {uri}: {}", read[uri]);
        }
        assert!(!got.to_string().contains(&ledger), "mode {mode}: a server path in a resource: {got}");
    }
}

/// Whether the official MCP TypeScript SDK is installed where `tests/serve/mcp-js/install.sh`
/// puts it (and node runs); when not, a SKIPPED line, unless `RECITE_REQUIRE_NODE` makes that a
/// failure.
fn mcp_js_installed(test: &str) -> bool {
    sdk_installed(
        test,
        "mcp-js/node_modules/@modelcontextprotocol/sdk/package.json",
        "tests/serve/mcp-js/install.sh",
    )
}

#[test]
fn serve_mcp_js_sdk_calls_the_tools_reads_the_resources_and_ends_its_session() {
    if !mcp_js_installed("serve_mcp_js_sdk_calls_the_tools_reads_the_resources_and_ends_its_session") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite3").display().to_string();
    let s = Server::start(&["--ledger", &ledger]);
    let id = saved_case(&s);
    let url = format!("{}/mcp", s.url());
    let out = Command::new("node")
        .arg(root().join("tests/serve/mcp-js/client.mjs"))
        .args([url.as_str(), CITATIONS[0], &id])
        .current_dir(root())
        .output()
        .expect("run node");
    assert!(out.status.success(), "client.mjs failed: {}", String::from_utf8_lossy(&out.stderr));
    let got: Value = serde_json::from_slice(&out.stdout).expect("client.mjs prints JSON");
    // Every call went through: the SDK validated each tool's structured result against its
    // output schema, and took the answer to DELETE.
    assert_eq!(got["errors"], serde_json::json!({}), "{got}");
    // The TypeScript SDK (1.32) speaks up to 2025-11-25: a session, ended by the client.
    assert_eq!(got["protocol_version"], "2025-11-25", "{got}");
    assert_eq!(got["session"], true);
    assert_eq!(got["session_after_termination"], false);
    assert!(got["capabilities"]["resources"].is_object(), "{got}");
    for t in got["tools"].as_array().unwrap() {
        assert_eq!(t["has_output_schema"], true, "{t}");
    }
    assert_eq!(got["tools"].as_array().unwrap().len(), 4, "{got}");
    let want = cli_json(&["verify", "-", "--format", "json"], &read(CITATIONS[0]));
    assert_eq!(got["verify"]["is_error"], false);
    assert!(same(&got["verify"]["structured"], &want), "verify_citation: {}", got["verify"]);
    assert_eq!(got["catalog"]["is_error"], false);
    assert_eq!(got["extractors"]["is_error"], false);
    let catalog = s.request("GET", "/v1/catalog", &[], b"").json();
    assert!(same(&resource_json(&got["read"], "recite://catalog"), &catalog));
    let case = s.request("GET", &format!("/v1/cases/{id}"), &[], b"").json();
    assert!(same(&resource_json(&got["read"], &format!("recite://cases/{id}")), &case));
    assert_eq!(got["templates"][0]["uri_template"], "recite://cases/{id}");
    assert_eq!(got["missing"]["code"], -32002, "{got}");
}

/// One JSON-RPC message POSTed to `/mcp` (with a session id, when given), over plain HTTP.
fn mcp_post(s: &Server, session: Option<&str>, message: &Value) -> crate::serve::Response {
    let mut headers =
        vec![("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
    if let Some(id) = session {
        headers.push(("Mcp-Session-Id", id));
        headers.push(("MCP-Protocol-Version", "2025-11-25"));
    }
    s.request("POST", "/mcp", &headers, message.to_string().as_bytes())
}

/// An `initialize` of the 2025-11-25 protocol.
fn initialize() -> Value {
    serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }
    })
}

#[test]
fn serve_mcp_sessions_are_capped_refused_in_the_protocols_shape_and_closed_when_idle() {
    let Some(python) =
        clients_python("serve_mcp_sessions_are_capped_refused_in_the_protocols_shape_and_closed_when_idle")
    else {
        return;
    };
    // The official client: two sessions held, a third refused with the JSON-RPC error the
    // server sent (not a transport failure), the stateless protocol served all the same, and a
    // session ended by its client (DELETE, without a warning) makes room for a new one.
    let s = Server::start(&["--max-mcp-sessions", "2"]);
    let got = clients(&python, &["mcp-sessions", &format!("{}/mcp", s.url()), "2"]);
    assert_eq!(got["held"], serde_json::json!(["2025-11-25", "2025-11-25"]), "{got}");
    assert_eq!(got["refused"]["code"], -32000, "{got}");
    assert!(got["refused"]["message"].as_str().unwrap().contains("--max-mcp-sessions"), "{got}");
    assert_eq!(got["stateless_tools"], 4, "{got}");
    assert_eq!(got["after_one_ended"], 4, "{got}");
    assert_eq!(got["held_still_work"], serde_json::json!([4]), "{got}");
    assert_eq!(got["warnings"], serde_json::json!([]), "{got}");
    drop(s);

    // On the wire: 503 with Retry-After and the JSON-RPC error object carrying the request's
    // id; DELETE answered 204; an idle session closed after --mcp-session-idle, its room freed.
    let s = Server::start(&["--max-mcp-sessions", "2", "--mcp-session-idle", "2"]);
    let mut ids = Vec::new();
    for _ in 0..2 {
        let r = mcp_post(&s, None, &initialize());
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        ids.push(r.header("mcp-session-id").expect("a session id").to_string());
    }
    let full = mcp_post(&s, None, &initialize());
    assert_eq!(full.status, 503);
    assert_eq!(full.header("retry-after"), Some("1"));
    let e = full.json();
    assert_eq!(e["jsonrpc"], "2.0");
    assert_eq!(e["id"], 1);
    assert_eq!(e["error"]["code"], -32000, "{e}");
    let ended = s.request(
        "DELETE",
        "/mcp",
        &[("Mcp-Session-Id", &ids[0]), ("MCP-Protocol-Version", "2025-11-25")],
        b"",
    );
    assert_eq!(ended.status, 204, "{}", String::from_utf8_lossy(&ended.body));
    assert!(ended.body.is_empty());
    let r = mcp_post(&s, None, &initialize());
    assert_eq!(r.status, 200, "a session ended by DELETE still counts");
    // Nothing for longer than --mcp-session-idle: both sessions are closed, and their ids are
    // unknown (404, which tells a client to open a new one).
    std::thread::sleep(std::time::Duration::from_millis(3500));
    let ping = serde_json::json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" });
    assert_eq!(mcp_post(&s, Some(&ids[1]), &ping).status, 404, "an idle session was kept");
    for _ in 0..2 {
        assert_eq!(mcp_post(&s, None, &initialize()).status, 200, "idle sessions still count");
    }
}

/// The data Part of `mediaType` in an artifact named `name` of a Task (ProtoJSON).
fn artifact_part(task: &Value, name: &str, media: &str) -> Value {
    let a = task["artifacts"].as_array().unwrap_or_else(|| panic!("no artifacts: {task}"));
    let art = a.iter().find(|a| a["name"] == name).unwrap_or_else(|| panic!("no artifact {name}: {task}"));
    let part = art["parts"].as_array().unwrap().iter().find(|p| p["mediaType"] == media);
    part.unwrap_or_else(|| panic!("no {media} Part in {name}: {art}"))["data"].clone()
}

#[test]
fn serve_a2a_python_sdk_sends_streams_and_gets_tasks() {
    let Some(python) = clients_python("serve_a2a_python_sdk_sends_streams_and_gets_tasks") else { return };
    let s = Server::start(&[]);
    let (citation, transcript) = (CITATIONS[0], TRANSCRIPTS[0]);
    let got = clients(&python, &["a2a", &s.url(), citation, transcript]);
    let card = &got["card"];
    assert_eq!(card["name"], "recite");
    let skills: Vec<&str> =
        card["skills"].as_array().unwrap().iter().filter_map(|s| s["id"].as_str()).collect();
    assert_eq!(skills, ["verify-citation", "check-transcript"]);
    let verified = cli_json(&["verify", "-", "--format", "json"], &read(citation));
    let checked = cli_json(&["check", "-", "--format", "json"], &read(transcript));
    for binding in ["JSONRPC", "HTTP+JSON"] {
        let sent = got[format!("send:{binding}")].as_array().unwrap();
        let task = &sent.last().unwrap()["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{binding}: {task}");
        let report = artifact_part(task, "settlement", "application/vnd.recite.report+json");
        assert!(same(&report, &verified), "{binding}: the A2A report differs from recite verify -");
        let cit = artifact_part(task, "recomputed-1", "application/vnd.upperhand.citations+json");
        assert_eq!(cit["study"], "Versant Mega Tracker");
        assert_eq!(cit["base"]["n"].as_f64(), verified["inputs"][0]["claims"][0]["base"]["n"].as_f64());
        let fetched = &got[format!("get:{binding}")];
        assert!(same(&artifact_part(fetched, "settlement", "application/vnd.recite.report+json"), &verified));
        // Streamed: working, then the artifacts, then completed.
        let events = got[format!("stream:{binding}")].as_array().unwrap();
        assert!(events[0]["task"].is_object(), "{binding}: the stream must begin with the Task: {events:?}");
        let states: Vec<&str> =
            events.iter().filter_map(|e| e["statusUpdate"]["status"]["state"].as_str()).collect();
        assert!(states.contains(&"TASK_STATE_WORKING"), "{binding}: {events:?}");
        assert_eq!(states.last(), Some(&"TASK_STATE_COMPLETED"), "{binding}: {events:?}");
        let streamed = events
            .iter()
            .filter_map(|e| e.get("artifactUpdate"))
            .find(|a| a["artifact"]["name"] == "settlement")
            .unwrap_or_else(|| panic!("{binding}: no settlement artifact streamed: {events:?}"));
        let part = &streamed["artifact"]["parts"][0];
        assert!(
            same(&part["data"], &checked),
            "{binding}: the streamed check report differs from recite check -"
        );
        // Prose is not a citation: the task is rejected, saying what to send.
        let prose = got[format!("prose:{binding}")].as_array().unwrap();
        let last = prose
            .iter()
            .rev()
            .find_map(|e| e["statusUpdate"]["status"].as_object().or(e["task"]["status"].as_object()));
        assert_eq!(
            last.and_then(|s| s["state"].as_str()),
            Some("TASK_STATE_REJECTED"),
            "{binding}: {prose:?}"
        );
    }
    // A citation with its claim as a sentence: the sentence's number is settled against it
    // (issue 46, item 4), and the artifact says what it was read as.
    for binding in ["JSONRPC", "HTTP+JSON"] {
        for (label, claim, verdict) in
            [("said44", "Considered=44%", "REPRODUCED"), ("said47", "Considered=47%", "DISCREPANT")]
        {
            let events = got[format!("{label}:{binding}")].as_array().unwrap();
            let settled = events
                .iter()
                .filter_map(|e| e.get("artifactUpdate"))
                .find(|a| a["artifact"]["name"] == "settlement")
                .unwrap_or_else(|| panic!("{label} {binding}: no settlement: {events:?}"));
            let report = &settled["artifact"]["parts"][0]["data"];
            let claims = report["inputs"][0]["claims"].as_array().unwrap();
            assert_eq!(claims.len(), 1, "{label} {binding}: {report}");
            assert_eq!(claims[0]["verdict"], verdict, "{label} {binding}: {report}");
            assert_eq!(settled["artifact"]["metadata"]["prose"]["paired"][0]["claim"], claim, "{settled}");
        }
    }
    // recite's own answer re-runs: each recomputed artifact's citation, checked by recite, is
    // REPRODUCED.
    let task = &got["get:JSONRPC"];
    let recomputed: Vec<Value> = task["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["name"].as_str().is_some_and(|n| n.starts_with("recomputed-")))
        .cloned()
        .collect();
    assert!(!recomputed.is_empty());
    let only = serde_json::json!({ "id": task["id"], "contextId": task["contextId"], "status": task["status"], "artifacts": recomputed });
    let report = cli_json(
        &["check", "-", "--format", "json"],
        &serde_json::to_vec(&serde_json::json!({ "task": only })).unwrap(),
    );
    assert_eq!(report["summary"]["claims"], report["summary"]["verdicts"]["REPRODUCED"], "{report}");
    // The Python SDK re-encodes what it got (protobuf's Value holds doubles: `4654` comes back
    // `4654.0`), and recite notes that of the copy; nothing else. recite's own bytes are checked
    // with no finding at all in serve_self.rs.
    let findings = report["inputs"][0]["findings"].as_array().cloned().unwrap_or_default();
    assert!(
        findings.iter().all(|f| f["rule"] == "a2a/protojson-doubles" && f["level"] == "NOTE"),
        "{report}"
    );
}

#[test]
fn serve_agent_card_passes_recite_card_with_no_finding() {
    let s = Server::start(&[]);
    let r = s.request("GET", "/.well-known/agent-card.json", &[], b"");
    assert_eq!(r.status, 200);
    let card = r.json();
    assert_eq!(card["name"], "recite");
    let url = card["supportedInterfaces"][0]["url"].as_str().unwrap_or_default();
    assert_eq!(url, format!("{}/a2a/jsonrpc", s.url()), "{card}");
    let out = run(command(&["card", "-", "--format", "json"]), Some(&r.body));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["findings"].as_array().map(Vec::len).unwrap_or(0), 0, "{report}");
    assert!(report["extension_declared"].is_string(), "{report}");
}

/// Whether the official A2A JavaScript SDK is installed where `tests/serve/a2a-js/install.sh`
/// puts it (and node runs); when not, a SKIPPED line, unless `RECITE_REQUIRE_NODE` makes that a
/// failure.
fn a2a_js_installed(test: &str) -> bool {
    sdk_installed(test, "a2a-js/node_modules/@a2a-js/sdk/package.json", "tests/serve/a2a-js/install.sh")
}

/// Whether `file` is in the npm SDK cache (and node runs); when not, a SKIPPED line naming
/// `install`, unless `RECITE_REQUIRE_NODE` makes that a failure.
fn sdk_installed(test: &str, file: &str, install: &str) -> bool {
    let cache = std::env::var_os("RECITE_SDK_CACHE").map(PathBuf::from).unwrap_or_else(|| {
        let xdg = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()).map(PathBuf::from);
        xdg.unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache"))
            .join("recite-sdk")
    });
    let sdk = cache.join(file);
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    let why = if !node {
        "node is not installed (Debian's `nodejs`)".to_string()
    } else if !sdk.is_file() {
        format!("{} is not installed (run {install})", sdk.display())
    } else {
        return true;
    };
    let required = std::env::var_os("RECITE_REQUIRE_NODE").is_some_and(|v| !v.is_empty() && v != "0");
    assert!(!required, "RECITE_REQUIRE_NODE is set but {why}");
    crate::support::say_skipped(test, &why);
    false
}

#[test]
fn serve_a2a_js_sdk_sends_streams_and_gets_tasks_with_a_token() {
    if !a2a_js_installed("serve_a2a_js_sdk_sends_streams_and_gets_tasks_with_a_token") {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let token = "a2a-js-token-0123456789abcdef";
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{token}\n")).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let s = Server::start(&["--token-file", &file.display().to_string()]);
    // Two transcripts in one streamed message: one report artifact each, in order.
    let (citation, transcripts) = (CITATIONS[0], [TRANSCRIPTS[0], TRANSCRIPTS[1]]);
    let out = Command::new("node")
        .arg(root().join("tests/serve/a2a-js/client.mjs"))
        .arg(s.url())
        .arg(citation)
        .args(transcripts)
        .env("RECITE_A2A_TOKEN", token)
        .current_dir(root())
        .output()
        .expect("run node");
    assert!(
        out.status.success(),
        "client.mjs failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let got: Value = serde_json::from_slice(&out.stdout).expect("client.mjs prints JSON");
    assert_eq!(got["errors"], serde_json::json!({}), "the SDK's calls threw: {}", got["errors"]);
    let card = &got["card"];
    assert_eq!(card["name"], "recite");
    let skills: Vec<&str> =
        card["skills"].as_array().unwrap().iter().filter_map(|s| s["id"].as_str()).collect();
    assert_eq!(skills, ["verify-citation", "check-transcript"]);
    assert!(card["securitySchemes"]["bearer"].is_object(), "{card}");

    const REPORT: &str = "application/vnd.recite.report+json";
    let verified = cli_json(&["verify", "-", "--format", "json"], &read(citation));
    let checked: Vec<Value> =
        transcripts.iter().map(|t| cli_json(&["check", "-", "--format", "json"], &read(t))).collect();
    let settlements = |b: &Value| -> usize {
        b["artifacts"].as_array().unwrap().iter().filter(|a| *a == "settlement").count()
    };
    for binding in ["JSONRPC", "HTTP+JSON"] {
        let b = &got["bindings"][binding];
        assert_eq!(b["protocol"]["name"], binding, "the factory chose another binding: {}", b["protocol"]);
        assert_eq!(b["protocol"]["version"], "1.0", "{binding}: {}", b["protocol"]);

        // Sent: the completed task, its one report that of `recite verify -`.
        let sent = &b["send"];
        assert_eq!(sent["state"], "TASK_STATE_COMPLETED", "{binding}: {sent}");
        assert_eq!(sent["reports"].as_array().map(Vec::len), Some(1), "{binding}: {}", sent["artifacts"]);
        assert!(
            same(&sent["reports"][0], &verified),
            "{binding}: the A2A report differs from recite verify -"
        );
        // The same Part read from the SDK's own ProtoJSON of the task.
        assert!(same(&artifact_part(&sent["task"], "settlement", REPORT), &verified), "{binding}");
        assert_eq!(sent["citations"][0]["study"], "Versant Mega Tracker", "{binding}: {}", sent["citations"]);
        assert_eq!(
            sent["citations"][0]["base"]["n"].as_f64(),
            verified["inputs"][0]["claims"][0]["base"]["n"].as_f64()
        );

        // Got back by id.
        let fetched = &b["get"];
        assert_eq!(fetched["id"], sent["id"], "{binding}");
        assert_eq!(fetched["state"], "TASK_STATE_COMPLETED", "{binding}: {fetched}");
        assert!(same(&artifact_part(&fetched["task"], "settlement", REPORT), &verified), "{binding}");

        // Streamed: the Task first (A2A v1.0 §3.1.2), working, one report artifact per
        // transcript in order, then completed.
        let streamed = &b["stream"];
        assert!(streamed["events"][0]["task"].is_object(), "{binding}: {}", streamed["events"][0]);
        let states: Vec<&str> =
            streamed["states"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert!(states.contains(&"TASK_STATE_WORKING"), "{binding}: {states:?}");
        assert_eq!(states.last(), Some(&"TASK_STATE_COMPLETED"), "{binding}: {states:?}");
        assert_eq!(
            streamed["taskIds"].as_array().map(Vec::len),
            Some(1),
            "{binding}: {}",
            streamed["taskIds"]
        );
        assert_eq!(settlements(streamed), transcripts.len(), "{binding}: {}", streamed["artifacts"]);
        let reports = streamed["reports"].as_array().unwrap();
        assert_eq!(reports.len(), transcripts.len(), "{binding}: {}", streamed["artifacts"]);
        for ((report, want), path) in reports.iter().zip(&checked).zip(transcripts) {
            assert!(
                same(report, want),
                "{binding}: the streamed report of {path} differs from recite check -"
            );
        }
        // The streamed task, got by id, holds the same reports.
        let kept = &b["getStreamed"];
        assert_eq!(kept["id"], streamed["taskIds"][0], "{binding}");
        assert_eq!(kept["state"], "TASK_STATE_COMPLETED", "{binding}: {kept}");
        assert_eq!(settlements(kept), transcripts.len(), "{binding}: {}", kept["artifacts"]);
        let kept = kept["reports"].as_array().unwrap();
        assert!(
            kept.len() == checked.len() && kept.iter().zip(&checked).all(|(a, b)| same(a, b)),
            "{binding}: the stored task's reports differ from recite check -"
        );

        // Prose is not a citation: rejected.
        assert!(b["prose"]["events"][0]["task"].is_object(), "{binding}: {}", b["prose"]["events"][0]);
        let prose = b["prose"]["states"].as_array().unwrap();
        assert_eq!(prose.last().and_then(Value::as_str), Some("TASK_STATE_REJECTED"), "{binding}: {prose:?}");

        // The citation with its claim as a sentence: settled on the sentence's number.
        for (label, verdict) in [("said44", "REPRODUCED"), ("said47", "DISCREPANT")] {
            let said = &b[label];
            let states = said["states"].as_array().unwrap();
            assert_eq!(
                states.last().and_then(Value::as_str),
                Some("TASK_STATE_COMPLETED"),
                "{label} {binding}: {states:?}"
            );
            let report = &said["reports"][0];
            assert_eq!(report["inputs"][0]["claims"][0]["verdict"], verdict, "{label} {binding}: {report}");
        }
    }
}

/// A bounded load (tests/serve/load.py, the instrument of BENCHMARKS.md's service figures):
/// 240 requests, 32 at a time, mixing `/v1/verify`, `/v1/check` and the A2A agent's
/// `SendMessage`, against the default limits (4 at a time, a queue of 64: no caller is turned
/// away). Every answer is 200 and equal to the first answer to the same request: none lost,
/// none altered by the others running beside it.
#[test]
fn serve_under_mixed_load_loses_and_alters_nothing() {
    let Some(python) = clients_python("serve_under_mixed_load_loses_and_alters_nothing") else { return };
    let s = Server::start(&[]);
    let out = Command::new(python)
        .arg(root().join("tests/serve/load.py"))
        .args([s.url(), s.pid().to_string(), "240".into(), "32".into(), "--a2a".into()])
        .current_dir(root())
        .output()
        .expect("run load.py");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "load.py failed: {report}\n{}", String::from_utf8_lossy(&out.stderr));
    let figures: Value = serde_json::from_str(&report).expect("load.py prints JSON");
    assert_eq!(figures["answered"], 240, "{figures:#}");
    assert_eq!(figures["errors"], 0, "{figures:#}");
    assert_eq!(figures["kinds"], serde_json::json!(["/a2a/jsonrpc", "/v1/check", "/v1/verify"]));
}
