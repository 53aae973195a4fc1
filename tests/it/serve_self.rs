//! recite passes the rules it checks others by: the Task its A2A agent answers, stored as a
//! transcript exactly as it came over JSON-RPC, is checked by `recite check` with no finding at
//! all (whole numbers come as integers, not as the SDK's doubles: `wholes.rs`), and so is its
//! SSE stream; every recomputed number's citation re-runs to REPRODUCED, and no number recite
//! states in it is uncited, misquoted or misattributed. (Its Agent Card passing `recite card` is in
//! `serve_agents.rs`.)

use serde_json::{Value, json};

use crate::serve::{CITATIONS, Server, TRANSCRIPTS, cli, read};

/// `method` (`SendMessage`, `SendStreamingMessage`) over JSON-RPC with one Part, as an A2A
/// client sends it; the raw response body (JSON, or the SSE stream), its Task completed.
fn call(s: &Server, method: &str, part: Value) -> Vec<u8> {
    let req = json!({
        "jsonrpc": "2.0", "id": 1, "method": method,
        "params": { "message": { "messageId": "m-1", "role": "ROLE_USER", "parts": [part] } },
    });
    let r = s.request(
        "POST",
        "/a2a/jsonrpc",
        &[("content-type", "application/json"), ("a2a-version", "1.0")],
        &serde_json::to_vec(&req).unwrap(),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let text = String::from_utf8_lossy(&r.body);
    assert!(text.contains("\"TASK_STATE_COMPLETED\""), "{method}: the task did not complete: {text}");
    r.body
}

fn send(s: &Server, part: Value) -> Vec<u8> {
    call(s, "SendMessage", part)
}

fn stream(s: &Server, part: Value) -> Vec<u8> {
    call(s, "SendStreamingMessage", part)
}

/// `recite check -` on `transcript`: asserts recite finds nothing wrong with what it said.
fn passes_its_own_check(what: &str, transcript: &[u8]) {
    let report: Value = serde_json::from_slice(&cli(&["check", "-", "--format", "json"], transcript))
        .unwrap_or_else(|e| panic!("{what}: the check wrote no JSON report: {e}"));
    let summary = &report["summary"];
    // No finding at all, not even the NOTE `a2a/protojson-doubles`: the A2A SDK (a2a-server-lf)
    // prints data Parts through protobuf's Value (`4654.0`), and the server writes them back as
    // the integers recite put there.
    let findings: Vec<&Value> = report["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| i["findings"].as_array().into_iter().flatten())
        .collect();
    assert!(findings.is_empty(), "{what}: {report:#}");
    assert_eq!(summary["unreadable_inputs"], 0, "{what}: {report:#}");
    let claims = summary["claims"].as_u64().unwrap();
    assert!(claims > 0, "{what}: recite's answer carries no citation: {report:#}");
    assert_eq!(summary["verdicts"]["REPRODUCED"].as_u64(), Some(claims), "{what}: {report:#}");
    for doubt in ["UNCITED", "MISQUOTED", "MISATTRIBUTED", "ATTRIBUTION_UNSURE", "TRACED_TO_DISCREPANT"] {
        // (No `answer_numbers` at all when no text of the task states a number.)
        let n = summary["answer_numbers"][doubt].as_u64().unwrap_or(0);
        assert_eq!(n, 0, "{what}: {doubt} in recite's own answer: {report:#}");
    }
}

#[test]
fn serve_own_a2a_tasks_pass_recite_check_with_no_finding() {
    let s = Server::start(&[]);
    for path in CITATIONS {
        let citation: Value = serde_json::from_slice(&read(path)).unwrap();
        // A `{citation, result}` pair, as a data Part shaped so.
        let task = send(&s, json!({ "data": citation }));
        passes_its_own_check(path, &task);
    }
    // The stream, as an SSE transcript (its events hold the same numbers).
    let citation: Value = serde_json::from_slice(&read(CITATIONS[0])).unwrap();
    let events = stream(&s, json!({ "data": citation }));
    assert!(!String::from_utf8_lossy(&events).contains(".0,"), "a whole double is left in the stream");
    passes_its_own_check("the SSE stream", &events);
    let transcript = read(TRANSCRIPTS[0]);
    let file = json!({
        "raw": base64(&transcript), "filename": "a2a-v03-task.json", "mediaType": "application/json",
    });
    passes_its_own_check(TRANSCRIPTS[0], &send(&s, file));
}

/// Standard base64, as ProtoJSON writes bytes.
fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
