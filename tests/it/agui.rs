//! The AG-UI reader: wire forms, CHUNK expansion, the reference verifier's stream rules, and
//! Upperhand citations carried in tool results (`tests/fixtures/agui/`).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use recite::transcript::{Document, Format, Level, agui};
use serde_json::{Value, json};

use crate::support;

fn fixture(name: &str) -> String {
    support::fixture(&format!("agui/{name}"))
}

fn load(name: &str) -> Document {
    agui::read(name, &fixture(name))
}

fn kinds(doc: &Document) -> Vec<&str> {
    doc.events.iter().map(|e| e.kind.as_str()).collect()
}

/// The (rule, event index) of every finding.
fn findings(doc: &Document) -> Vec<(&str, Option<usize>)> {
    doc.findings.iter().map(|f| (f.rule.as_str(), f.locator.event_index)).collect()
}

/// A JSON lines log from event values.
fn log(events: &[serde_json::Value]) -> String {
    events.iter().map(|e| e.to_string() + "\n").collect()
}

fn run_started() -> serde_json::Value {
    json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})
}

fn run_finished() -> serde_json::Value {
    json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})
}

fn text(kind: &str, id: &str) -> serde_json::Value {
    match kind {
        "CONTENT" => json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": "x"}),
        _ => json!({"type": format!("TEXT_MESSAGE_{kind}"), "messageId": id}),
    }
}

fn tool(kind: &str, id: &str) -> serde_json::Value {
    match kind {
        "START" => json!({"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": "f"}),
        "ARGS" => json!({"type": "TOOL_CALL_ARGS", "toolCallId": id, "delta": "{}"}),
        _ => json!({"type": "TOOL_CALL_END", "toolCallId": id}),
    }
}

fn step(kind: &str, name: &str) -> serde_json::Value {
    json!({"type": format!("STEP_{kind}"), "stepName": name})
}

/// Asserts that exactly the given events break the stream rules.
fn stream_breaches(events: &[serde_json::Value], at: &[usize]) {
    let doc = agui::read("inline.jsonl", &log(events));
    let want: Vec<_> = at.iter().map(|&i| ("ag-ui/stream", Some(i))).collect();
    assert_eq!(findings(&doc), want, "{:#?}", doc.findings);
    assert!(doc.findings.iter().all(|f| f.level == Level::Must));
}

#[test]
fn sse_with_multiline_payloads_comments_and_crlf() {
    let doc = load("sse-multiline.sse");
    assert_eq!(doc.format, Format::Agui);
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
    assert_eq!(
        kinds(&doc),
        ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"]
    );
    let lines: Vec<_> = doc.events.iter().map(|e| e.line).collect();
    assert_eq!(lines, [Some(2), Some(6), Some(12), Some(15), Some(18)]);
    assert_eq!(doc.turns.len(), 1);
    assert_eq!(doc.turns[0].text, "Hello\nworld");
    assert_eq!(doc.turns[0].role, "assistant");
    assert_eq!(doc.turns[0].message_id.as_deref(), Some("m1"));
}

#[test]
fn chunks_expand_as_the_reference_client_does() {
    let doc = load("chunks.jsonl");
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
    assert_eq!(
        kinds(&doc),
        [
            "RUN_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "TOOL_CALL_RESULT",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED",
        ]
    );
    let indices: Vec<_> = doc.events.iter().map(|e| e.index).collect();
    assert_eq!(indices, (0..17).collect::<Vec<_>>());
    assert!(doc.events[1].synthesized && !doc.events[9].synthesized);
    assert_eq!(doc.events[1].body["role"], "assistant");
    assert_eq!(doc.events[5].body["toolCallName"], "get_funnel");
    assert_eq!(doc.events[5].body["parentMessageId"], "m1");
    assert_eq!(doc.events[12].body["messageId"], "m2");
    // Synthesized events carry the line of the chunk they come from.
    assert_eq!(doc.events[3].line, Some(3));
    let texts: Vec<_> = doc.turns.iter().map(|t| (t.role.as_str(), t.text.as_str())).collect();
    assert_eq!(
        texts,
        [
            ("assistant", "Let me check."),
            ("tool", "{\"ok\":true}"),
            ("assistant", "Done"),
            ("assistant", "Another")
        ]
    );
}

#[test]
fn first_chunk_without_its_id_is_a_stream_breach() {
    let events = [
        run_started(),
        json!({"type": "TEXT_MESSAGE_CHUNK", "delta": "orphan"}),
        json!({"type": "TOOL_CALL_CHUNK", "toolCallId": "c1", "delta": "{}"}),
        run_finished(),
    ];
    stream_breaches(&events, &[1, 2]);
}

#[test]
fn json_array_with_lines() {
    let doc = load("array.json");
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
    assert_eq!(doc.events.len(), 5);
    let lines: Vec<_> = doc.events.iter().map(|e| e.line.unwrap()).collect();
    assert_eq!(lines, [2, 7, 13, 18, 22]);
    assert_eq!(doc.turns[0].text, "Hi {there} \"quoted\"");
}

#[test]
fn fixtures_are_separate_streams() {
    for name in ["fixtures.json", "fixture-single.json"] {
        let doc = load(name);
        assert!(doc.findings.is_empty(), "{name}: {:#?}", doc.findings);
        assert!(agui::looks_like_agui(&fixture(name)));
    }
    let doc = load("fixtures.json");
    assert_eq!(doc.events.len(), 9);
    assert_eq!(doc.events[5].kind, "RUN_STARTED");
    assert_eq!(doc.events[5].line, Some(35));
    assert_eq!(doc.turns[0].role, "assistant");
}

#[test]
fn fixture_with_events_key_and_missing_required_fields() {
    let text = json!({"name": "saved", "events": [
        run_started(),
        json!({"type": "TOOL_CALL_RESULT", "toolCallId": "c1", "content": "{}"}),
        run_finished()
    ]})
    .to_string();
    let doc = agui::read("saved.json", &text);
    assert_eq!(doc.events.len(), 3);
    assert_eq!(findings(&doc), [("input/malformed", Some(1))], "{:#?}", doc.findings);
    assert!(doc.findings[0].message.contains("messageId"));
}

#[test]
fn a_fixture_that_breaks_the_rules_is_checked_alone() {
    let text = json!([
        {"name": "a", "stream": [run_started(), text("START", "m1")]},
        {"name": "b", "stream": [text("START", "m1"), run_finished()]}
    ])
    .to_string();
    let doc = agui::read("fx.json", &text);
    // Fixture a ends with m1 open (no rule at the end of a stream, and it does not leak into b);
    // fixture b starts without RUN_STARTED, then finishes with its own m1 open.
    let want = [("ag-ui/stream", Some(2)), ("ag-ui/stream", Some(3))];
    assert_eq!(findings(&doc), want, "{:#?}", doc.findings);
    assert!(doc.findings[0].message.contains("First event must be 'RUN_STARTED'"));
}

#[test]
fn malformed_lines_are_findings_and_the_rest_is_read() {
    let doc = load("malformed.jsonl");
    let malformed: Vec<_> = doc
        .findings
        .iter()
        .filter(|f| f.rule == "input/malformed")
        .map(|f| (f.locator.line, f.level))
        .collect();
    assert_eq!(malformed, [(Some(3), Level::Must), (Some(5), Level::Must), (Some(7), Level::Must)]);
    assert_eq!(
        kinds(&doc),
        ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]
    );
    assert_eq!(doc.turns[0].text, "kept");
    assert!(doc.findings.iter().all(|f| f.rule == "input/malformed"), "{:#?}", doc.findings);
}

#[test]
fn truncated_array_keeps_its_complete_elements() {
    let doc = load("truncated-array.json");
    assert_eq!(kinds(&doc), ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"]);
    assert_eq!(findings(&doc), [("input/malformed", None)]);
    // Where the text stops, inside the element that begins on line 16.
    assert_eq!(doc.findings[0].locator.line, Some(17));
    assert_eq!(doc.turns[0].text, "partial");
}

#[test]
fn unknown_types_are_kept_and_ignored() {
    let doc = load("unknown-types.jsonl");
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
    assert_eq!(doc.events[1].kind, "FANCY_NEW_THING");
    assert_eq!(doc.events[1].body["payload"]["x"], 1);
    // The reasoning chunk expands, and REASONING_END closes it.
    assert_eq!(
        kinds(&doc)[3..8],
        [
            "REASONING_START",
            "REASONING_MESSAGE_START",
            "REASONING_MESSAGE_CONTENT",
            "REASONING_MESSAGE_END",
            "REASONING_END"
        ]
    );
    assert_eq!(doc.turns.len(), 1);
    assert_eq!(doc.turns[0].role, "assistant");
}

#[test]
fn events_must_be_objects_with_a_type_and_their_ids() {
    let text = log(&[
        run_started(),
        json!({"type": "TEXT_MESSAGE_CONTENT", "delta": "no id"}),
        json!(["not", "an", "event"]),
        run_finished(),
    ]);
    let doc = agui::read("x.jsonl", &text);
    let got: Vec<_> = doc.findings.iter().map(|f| (f.rule.as_str(), f.locator.line)).collect();
    assert_eq!(
        got,
        [
            ("input/malformed", Some(2)),
            ("ag-ui/stream", Some(2)),
            ("input/malformed", Some(3)),
            ("input/malformed", Some(3)),
            ("input/malformed", Some(3)),
        ],
        "{:#?}",
        doc.findings
    );
}

#[test]
fn rule_1_first_event_is_run_started_or_run_error() {
    stream_breaches(&[text("START", "m1"), text("END", "m1"), run_started(), run_finished()], &[0]);
    stream_breaches(&[json!({"type": "RUN_ERROR", "message": "boom"})], &[]);
}

#[test]
fn rule_2_after_run_error_only_run_started() {
    let error = json!({"type": "RUN_ERROR", "message": "boom", "code": null});
    stream_breaches(&[run_started(), error.clone(), text("START", "m1")], &[2]);
    stream_breaches(&[run_started(), error, run_started(), run_finished()], &[]);
}

#[test]
fn rule_3_after_run_finished_only_a_new_run_or_run_error() {
    let custom = json!({"type": "CUSTOM", "name": "x", "value": 1});
    stream_breaches(&[run_started(), run_finished(), custom], &[2]);
    let error = json!({"type": "RUN_ERROR", "message": "late"});
    stream_breaches(&[run_started(), run_finished(), error], &[]);
}

#[test]
fn rule_4_run_started_while_active() {
    stream_breaches(&[run_started(), text("START", "m1"), run_started(), run_finished()], &[2]);
}

#[test]
fn several_runs_are_separate() {
    let events = [
        run_started(),
        text("START", "m1"),
        text("END", "m1"),
        run_finished(),
        run_started(),
        text("START", "m1"),
        text("CONTENT", "m1"),
        text("END", "m1"),
        run_finished(),
    ];
    stream_breaches(&events, &[]);
}

#[test]
fn rule_5_text_messages_per_id() {
    stream_breaches(&[run_started(), text("START", "m1"), text("START", "m1")], &[2]);
    stream_breaches(&[run_started(), text("CONTENT", "m1")], &[1]);
    stream_breaches(&[run_started(), text("END", "m1")], &[1]);
    // Interleaved messages are fine.
    let events = [
        run_started(),
        text("START", "a"),
        text("START", "b"),
        text("CONTENT", "a"),
        text("END", "b"),
        text("END", "a"),
        run_finished(),
    ];
    stream_breaches(&events, &[]);
}

#[test]
fn rule_6_tool_calls_per_id() {
    stream_breaches(&[run_started(), tool("START", "c"), tool("START", "c")], &[2]);
    stream_breaches(&[run_started(), tool("ARGS", "c")], &[1]);
    stream_breaches(&[run_started(), tool("END", "c")], &[1]);
}

#[test]
fn rule_7_steps() {
    stream_breaches(&[run_started(), step("STARTED", "s"), step("STARTED", "s")], &[2]);
    stream_breaches(&[run_started(), step("FINISHED", "s")], &[1]);
}

#[test]
fn rule_8_run_finished_with_open_parts() {
    stream_breaches(&[run_started(), text("START", "m1"), run_finished()], &[2]);
    stream_breaches(&[run_started(), tool("START", "c"), run_finished()], &[2]);
    stream_breaches(&[run_started(), step("STARTED", "s"), run_finished()], &[2]);
}

#[test]
fn rule_9_everything_else_passes_unchecked() {
    let events = [
        run_started(),
        json!({"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "never-started", "content": "ok"}),
        json!({"type": "STATE_DELTA", "delta": []}),
        json!({"type": "MESSAGES_SNAPSHOT", "messages": []}),
        json!({"type": "CUSTOM", "name": "x", "value": null}),
        run_finished(),
    ];
    stream_breaches(&events, &[]);
}

#[test]
fn upperhand_citations_in_tool_results() {
    let doc = load("upperhand.jsonl");
    let rules: Vec<_> = findings(&doc);
    assert_eq!(rules, [("upperhand/conformance", Some(24))], "{:#?}", doc.findings);
    let got: Vec<_> = doc
        .items
        .iter()
        .map(|i| (i.locator.event_index.unwrap(), i.locator.pointer.as_str(), i.citation.is_some()))
        .collect();
    assert_eq!(
        got,
        [
            (7, "/content/1/data", true),
            (11, "/content/citation", true),
            (15, "/content/1", true),
            (19, "/content/1/text/data", true),
            (20, "/value/citation", true),
            (24, "/content", false),
        ]
    );
    let results: Vec<_> = doc.items.iter().map(|i| i.result.clone().unwrap()).collect();
    assert_eq!(
        results[0],
        json!({"kind": "data", "data": {"funnel": {"familiar": 0.71, "considered": 0.44, "purchased": 0.23}}})
    );
    assert_eq!(results[1], json!({"result": {"familiar": 0.71}}));
    assert_eq!(results[2], json!({"considered": 0.44}));
    assert_eq!(results[3], json!({"purchased": 0.23}));
    assert_eq!(results[4], json!({"loyal": 0.12}));
    assert_eq!(results[5], json!({"familiar": 0.71, "n": 4210}));
    let citation = doc.items[0].citation.as_ref().unwrap();
    assert_eq!(citation["source"]["function"], "extractFunnel");
    assert_eq!(citation["base"]["n"], 4210);
    assert!(!doc.items[0].by_shape && doc.items[2].by_shape);
    // The item's message is the one that made the tool call; the line is the result's.
    assert_eq!(doc.items[0].locator.message_id.as_deref(), Some("m0"));
    assert_eq!(doc.items[0].locator.line, Some(8));
    // Items belong to the tool turn of their result.
    let tool_turn = doc.turns.iter().find(|t| t.message_id.as_deref() == Some("tool-1")).unwrap();
    assert_eq!(tool_turn.role, "tool");
    assert_eq!(tool_turn.items, [0]);
}

#[test]
fn sniff() {
    for name in [
        "sse-multiline.sse",
        "chunks.jsonl",
        "array.json",
        "fixtures.json",
        "malformed.jsonl",
        "truncated-array.json",
        "upperhand.jsonl",
    ] {
        assert!(agui::looks_like_agui(&fixture(name)), "{name}");
    }
    assert!(agui::looks_like_agui(r#"{"name": "empty", "stream": []}"#));
    let a2a = r#"{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t","status":{"state":"completed"}}}"#;
    assert!(!agui::looks_like_agui(a2a));
    assert!(!agui::looks_like_agui(r#"{"result": {"share": 0.44}, "citation": {"study": "x"}}"#));
    assert!(!agui::looks_like_agui("data: {\"type\": \"message\"}\n\n"));
}

#[test]
fn example_run_reads_cleanly_with_cited_items() {
    let path = format!("{}/examples/transcripts/agui-run.sse", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    assert!(agui::looks_like_agui(&text));
    let doc = agui::read("agui-run.sse", &text);
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
    assert!(!doc.items.is_empty());
    for item in &doc.items {
        let c = item.citation.as_ref().expect("every claim is cited");
        assert_eq!(c["study"], "Versant Mega Tracker");
        assert_eq!(c["source"]["table"], "versant_flat");
        assert!(item.result.is_some());
    }
    assert!(doc.turns.iter().any(|t| t.role == "assistant" && t.text.contains("%")));
}

// ---------------------------------------------------------------------------------------------
// The 1.0 reference client (`@ag-ui/client` 1.0.0 `verifyEvents` and `transformChunks`)
// ---------------------------------------------------------------------------------------------

/// The stream-rule messages of a log.
fn stream_messages(events: &[serde_json::Value]) -> Vec<(usize, String)> {
    let doc = agui::read("inline.jsonl", &log(events));
    doc.findings
        .iter()
        .filter(|f| f.rule == "ag-ui/stream")
        .map(|f| (f.locator.event_index.unwrap(), f.message.clone()))
        .collect()
}

fn tagged(mut event: serde_json::Value, subagent: &str) -> serde_json::Value {
    event["subagentRunId"] = json!(subagent);
    event
}

fn subagent(kind: &str, id: &str) -> serde_json::Value {
    match kind {
        "STARTED" => json!({"type": "SUBAGENT_STARTED", "subagentRunId": id, "name": "researcher"}),
        "ERROR" => json!({"type": "SUBAGENT_ERROR", "subagentRunId": id, "message": "boom"}),
        _ => json!({"type": format!("SUBAGENT_{kind}"), "subagentRunId": id}),
    }
}

fn reasoning(kind: &str, id: &str) -> serde_json::Value {
    match kind {
        "MESSAGE_CONTENT" => json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": id, "delta": "hm"}),
        _ => json!({"type": format!("REASONING_{kind}"), "messageId": id}),
    }
}

#[test]
fn steps_are_kept_per_owner() {
    // Parent and subagent may both have a step "tools" open.
    let events = [
        run_started(),
        step("STARTED", "tools"),
        subagent("STARTED", "s1"),
        tagged(step("STARTED", "tools"), "s1"),
        tagged(step("FINISHED", "tools"), "s1"),
        subagent("FINISHED", "s1"),
        step("FINISHED", "tools"),
        run_finished(),
    ];
    stream_breaches(&events, &[]);
    // A subagent closing the parent's step is named as such.
    let events = [run_started(), step("STARTED", "tools"), tagged(step("FINISHED", "tools"), "s1")];
    let got = stream_messages(&events);
    assert_eq!(got.len(), 1);
    assert!(
        got[0].1.contains("attributed to subagent 's1': that step is open under the parent agent"),
        "{got:?}"
    );
    // And RUN_FINISHED names the owner of a step left open.
    let got = stream_messages(&[run_started(), tagged(step("STARTED", "tools"), "s1"), run_finished()]);
    assert_eq!(
        got,
        [(2, "Cannot send 'RUN_FINISHED' while steps are still active: tools (subagent 's1')".to_string())]
    );
}

#[test]
fn subagent_lifecycle() {
    stream_breaches(&[run_started(), subagent("STARTED", "s1"), subagent("STARTED", "s1")], &[2]);
    stream_breaches(&[run_started(), subagent("FINISHED", "s1")], &[1]);
    stream_breaches(
        &[run_started(), subagent("STARTED", "s1"), subagent("ERROR", "s1"), run_finished()],
        &[],
    );
    // Ids are per invocation: no restart within the run.
    let events =
        [run_started(), subagent("STARTED", "s1"), subagent("FINISHED", "s1"), subagent("STARTED", "s1")];
    stream_breaches(&events, &[3]);
    // A parent subagent must have been started.
    let mut child = subagent("STARTED", "s2");
    child["parentSubagentRunId"] = json!("s0");
    stream_breaches(&[run_started(), child], &[1]);
    // Required fields.
    stream_breaches(&[run_started(), json!({"type": "SUBAGENT_STARTED", "subagentRunId": "s1"})], &[1]);
    stream_breaches(&[run_started(), json!({"type": "SUBAGENT_ERROR", "subagentRunId": "s1"})], &[1]);
    // An explicit null reads as the field left out (the `explicit-null` tolerance).
    let mut started = text("START", "m1");
    started["subagentRunId"] = serde_json::Value::Null;
    stream_breaches(&[run_started(), started, tagged(text("END", "m1"), "s1")], &[2]);
}

#[test]
fn continuations_agree_with_their_openers_owner() {
    // A subagent's content on the parent's message.
    let events = [run_started(), text("START", "m1"), tagged(text("CONTENT", "m1"), "s1")];
    let got = stream_messages(&events);
    assert_eq!(
        got,
        [(2, "Cannot send 'TEXT_MESSAGE_CONTENT': subagentRunId 's1' does not match the message 'm1' opener's subagent '(the parent agent)'.".to_string())]
    );
    // A tool call tagged for another owner than its parent message.
    let mut call = tagged(tool("START", "c1"), "s2");
    call["parentMessageId"] = json!("m1");
    stream_breaches(&[run_started(), tagged(text("START", "m1"), "s1"), call], &[2]);
    // Owners seeded from a MESSAGES_SNAPSHOT.
    let snapshot = json!({"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "m9", "role": "assistant", "subagentRunId": "s1"}]});
    stream_breaches(&[run_started(), snapshot, tagged(text("START", "m9"), "s2")], &[2]);
}

#[test]
fn reasoning_spans_and_messages_open_and_close() {
    let fine = [
        run_started(),
        reasoning("START", "r1"),
        reasoning("MESSAGE_START", "r1"),
        reasoning("MESSAGE_CONTENT", "r1"),
        reasoning("MESSAGE_END", "r1"),
        reasoning("END", "r1"),
        run_finished(),
    ];
    stream_breaches(&fine, &[]);
    stream_breaches(&[run_started(), reasoning("START", "r1"), reasoning("START", "r1")], &[2]);
    stream_breaches(&[run_started(), reasoning("MESSAGE_CONTENT", "r1")], &[1]);
    stream_breaches(&[run_started(), reasoning("END", "r1")], &[1]);
    stream_breaches(&[run_started(), reasoning("MESSAGE_END", "r1")], &[1]);
}

#[test]
fn run_finished_while_reasoning_or_a_subagent_is_open() {
    let got = stream_messages(&[run_started(), reasoning("MESSAGE_START", "r1"), run_finished()]);
    assert_eq!(
        got,
        [(2, "Cannot send 'RUN_FINISHED' while reasoning messages are still active: r1".to_string())]
    );
    let got = stream_messages(&[run_started(), reasoning("START", "r1"), run_finished()]);
    assert_eq!(
        got,
        [(2, "Cannot send 'RUN_FINISHED' while reasoning spans are still active: r1".to_string())]
    );
    let got = stream_messages(&[run_started(), subagent("STARTED", "s1"), run_finished()]);
    assert_eq!(got, [(2, "Cannot send 'RUN_FINISHED' while subagents are still active: s1".to_string())]);
}

#[test]
fn thinking_events_read_as_the_client_translates_them() {
    let thinking = |kind: &str| json!({"type": format!("THINKING_{kind}")});
    // The usual shape passes.
    let events = [
        run_started(),
        thinking("START"),
        thinking("TEXT_MESSAGE_START"),
        json!({"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "hm"}),
        thinking("TEXT_MESSAGE_END"),
        thinking("END"),
        run_finished(),
    ];
    stream_breaches(&events, &[]);
    // Each THINKING_START opens a new span, so two in a row are no breach, but the run cannot
    // finish with the first still open.
    stream_breaches(
        &[run_started(), thinking("START"), thinking("START"), thinking("END"), run_finished()],
        &[4],
    );
    // An end or content with nothing open names a fresh id, which is not open.
    stream_breaches(&[run_started(), thinking("END")], &[1]);
    stream_breaches(&[run_started(), thinking("TEXT_MESSAGE_END"), thinking("TEXT_MESSAGE_END")], &[1, 2]);
    // A message needs no open span.
    stream_breaches(
        &[run_started(), thinking("TEXT_MESSAGE_START"), thinking("TEXT_MESSAGE_END"), run_finished()],
        &[],
    );
}

#[test]
fn chunk_streams_are_kept_per_owner() {
    let chunk =
        |id: &str, delta: &str| json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": id, "delta": delta});
    let events = [
        run_started(),
        chunk("m1", "parent "),
        // A subagent's events do not close the parent's open chunk stream …
        subagent("STARTED", "s1"),
        tagged(chunk("m2", "child"), "s1"),
        tagged(step("STARTED", "x"), "s1"),
        // … so the parent's next chunk (no id) continues m1.
        json!({"type": "TEXT_MESSAGE_CHUNK", "delta": "again"}),
        tagged(step("FINISHED", "x"), "s1"),
        subagent("FINISHED", "s1"),
        run_finished(),
    ];
    let doc = agui::read("lanes.jsonl", &log(&events));
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
    let texts: Vec<_> = doc.turns.iter().map(|t| (t.message_id.as_deref(), t.text.as_str())).collect();
    assert_eq!(texts, [(Some("m1"), "parent again"), (Some("m2"), "child")]);
    // The subagent's lane is closed by its own step, the parent's by RUN_FINISHED.
    let ends: Vec<_> = doc
        .events
        .iter()
        .filter(|e| e.kind == "TEXT_MESSAGE_END")
        .map(|e| (e.str_field("messageId").unwrap(), e.str_field("subagentRunId")))
        .collect();
    assert_eq!(ends, [("m2", Some("s1")), ("m1", None)]);
    // An id-less chunk with two subagent lanes open is ambiguous.
    let events = [
        run_started(),
        tagged(chunk("a", "x"), "s1"),
        tagged(chunk("b", "y"), "s2"),
        json!({"type": "TEXT_MESSAGE_CHUNK", "delta": "whose?"}),
    ];
    let got = stream_messages(&events);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].1.starts_with("Ambiguous TEXT_MESSAGE_CHUNK"), "{got:?}");
}

#[test]
fn chunk_must_agree_with_its_opener() {
    let events = [
        run_started(),
        json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "role": "assistant", "delta": "a"}),
        json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "role": "user", "delta": "b"}),
    ];
    let got = stream_messages(&events);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].1.contains("chunk role 'user' does not match the open stream's role 'assistant'"),
        "{got:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Upperhand citations in 1.0 content parts
// ---------------------------------------------------------------------------------------------

fn citation() -> serde_json::Value {
    json!({
        "study": "Versant Mega Tracker",
        "period": "W6 (April 2026)",
        "base": {"name": "Adults 18-74, aware of brand", "n": 4654},
        "weight": "main_weight",
        "source": {"table": "versant_flat", "column": "s14r5", "function": "extractFunnel"}
    })
}

fn tool_run(content: serde_json::Value) -> String {
    log(&[
        run_started(),
        tool("START", "c1"),
        tool("END", "c1"),
        json!({"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "c1", "content": content}),
        run_finished(),
    ])
}

#[test]
fn document_part_with_base64_citation() {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(citation().to_string());
    for mime in [
        "application/vnd.upperhand.citations+json",
        "Application/Vnd.Upperhand.Citations+Json; charset=utf-8",
    ] {
        let content = json!([
            {"type": "text", "text": "{\"Considered\": \"44%\"}"},
            {"type": "document", "source": {"type": "data", "value": encoded, "mimeType": mime}}
        ]);
        let doc = agui::read("doc.jsonl", &tool_run(content));
        assert!(doc.findings.is_empty(), "{mime}: {:#?}", doc.findings);
        assert_eq!(doc.items.len(), 1, "{mime}");
        assert_eq!(doc.items[0].citation, Some(citation()));
        assert_eq!(doc.items[0].result, Some(json!({"Considered": "44%"})));
        assert_eq!(doc.items[0].locator.pointer, "/content/1/source/value");
    }
}

#[test]
fn media_typed_wrapper_with_parameters() {
    let wrapper =
        json!({"mediaType": "APPLICATION/vnd.upperhand.citations+json;charset=utf-8", "data": citation()});
    let content = json!({"Considered": 0.44, "cite": wrapper}).to_string();
    let doc = agui::read("wrap.jsonl", &tool_run(json!(content)));
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
    assert_eq!((doc.items.len(), doc.items[0].by_shape), (1, false));
}

#[test]
fn numeric_string_result_without_citation_is_a_conformance_finding() {
    let doc = agui::read("bare.jsonl", &tool_run(json!("{\"Considered\": \"47%\"}")));
    assert_eq!(findings(&doc), [("upperhand/conformance", Some(3))], "{:#?}", doc.findings);
    assert_eq!(doc.items[0].result, Some(json!({"Considered": "47%"})));
}

#[test]
fn sse_with_cr_only_line_endings_loses_nothing() {
    let crlf = fixture("sse-multiline.sse").replace("\r\n", "\n");
    for eol in ["\r", "\r\n"] {
        let doc = agui::read("cr.sse", &crlf.replace('\n', eol));
        assert!(doc.findings.is_empty(), "{eol:?}: {:#?}", doc.findings);
        assert_eq!(doc.events.len(), 5, "{eol:?}");
        assert_eq!(doc.turns[0].text, "Hello\nworld", "{eol:?}");
    }
    let doc = agui::read(
        "cr.sse",
        &tool_run(json!("{}")).lines().map(|l| format!("data: {l}\r\r")).collect::<String>(),
    );
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
    assert_eq!(doc.events.len(), 5);
}

// The AG-UI 1.0 reference client, event by event

/// Where recite deliberately reads more than the 1.0 reference client, by the name
/// `tests/sdk/agui/verify.mjs` gives each tolerance (docs/moca.md, "Checked against the reference
/// client").
const TOLERANCES: &[(&str, &str)] = &[
    ("sse-crlf", "SSE allows CRLF and CR line ends; the client's parser splits events on \\n\\n only"),
    (
        "explicit-null",
        "producers write null for absent optional fields; the client rejects it bar a few legacy fields",
    ),
    (
        "damaged-lines",
        "a line that is not JSON is an input/malformed finding and the rest is read; the client stops",
    ),
    (
        "unreadable-to-client",
        "recite keeps the complete elements of a truncated JSON array; the client reads nothing of it",
    ),
];

/// Fixtures whose stream findings disagree with the reference client. Empty since the AG-UI
/// reader applies the 1.0 rules (issue 9, part 2); a file listed here must disagree.
const PENDING_1_0_RULES: &[&str] = &[];

/// The reference client's verdicts (`verify.mjs` output, one JSON object per file), or why
/// they could not be had.
fn reference_client_verdicts(files: &[String]) -> Result<Vec<Value>, String> {
    let root = env!("CARGO_MANIFEST_DIR");
    let node = Command::new("node").arg("--version").output();
    if !node.is_ok_and(|o| o.status.success()) {
        return Err("node is not installed (Debian's `nodejs`)".into());
    }
    let out = Command::new("node")
        .arg(format!("{root}/tests/sdk/agui/verify.mjs"))
        .args(files)
        .current_dir(root)
        .output()
        .expect("node runs");
    if out.status.code() == Some(3) {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    assert!(out.status.success(), "verify.mjs failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    Ok(text.lines().map(|l| serde_json::from_str(l).expect("verify.mjs prints JSON lines")).collect())
}

/// Every AG-UI fixture: the SDK-written corpus and the hand-written reader fixtures.
fn agui_fixture_files() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().unwrap().to_str().unwrap();
            if path.is_dir() {
                walk(&path, out);
            } else if name.ends_with(".sse") || name.ends_with(".jsonl") || name.ends_with(".json") {
                // Sidecars of the corpus, not runs.
                if name != "versions.json" {
                    out.push(path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().to_str().unwrap().into());
                }
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    walk(&root.join("tests/fixtures/sdk/agui"), &mut files);
    walk(&root.join("tests/fixtures/agui"), &mut files);
    files.iter().map(|f| f.trim_start_matches('/').to_string()).collect()
}

/// `recite check FILES --format json`: each input's findings, by file.
fn recite_findings(files: &[String]) -> BTreeMap<String, Vec<Value>> {
    let mut args = vec!["check"];
    args.extend(files.iter().map(String::as_str));
    args.extend_from_slice(&["--format", "json"]);
    let report = support::report(&support::recite(&args));
    let inputs = report["inputs"].as_array().expect("inputs");
    inputs
        .iter()
        .map(|i| {
            let file = i["file"].as_str().unwrap().to_string();
            (file, i["findings"].as_array().cloned().unwrap_or_default())
        })
        .collect()
}

/// How one stream's verdicts differ, or `None` when recite agrees with the client. `stream` is
/// the client's verdict on one stream (from `offset`, up to `end`), `findings` recite's.
fn disagreement(stream: &Value, end: Option<u64>, findings: &[Value]) -> Option<String> {
    let offset = stream["offset"].as_u64().unwrap();
    let here = |f: &&Value| {
        f["level"] == "MUST"
            && f["locator"]["event_index"].as_u64().is_some_and(|i| i >= offset && end.is_none_or(|e| i < e))
    };
    let first_stream = findings.iter().filter(here).find(|f| f["rule"] == "ag-ui/stream");
    let said = |f: Option<&Value>| match f {
        None => "no ag-ui/stream finding".to_string(),
        Some(f) => format!("{} at event {}: {}", f["rule"], f["locator"]["event_index"], f["message"]),
    };
    if stream["verdict"] == "accepted" {
        return first_stream.map(|f| format!("the client accepts; recite says {}", said(Some(f))));
    }
    let index = stream["index"].as_u64().unwrap();
    let client = format!(
        "the client rejects event {index} ({}, {} stage): {}",
        stream["type"], stream["stage"], stream["message"]
    );
    // A schema error in one event (the client's enforcement stage) may be recite's
    // input/malformed finding instead of a stream finding, as long as none comes earlier.
    let schema = stream["stage"] == "enforce" || stream["stage"] == "boundary";
    let first = if schema {
        findings.iter().filter(here).find(|f| f["rule"] == "ag-ui/stream" || f["rule"] == "input/malformed")
    } else {
        first_stream
    };
    let agrees = first.is_some_and(|f| f["locator"]["event_index"].as_u64() == Some(index))
        && first_stream.is_none_or(|f| f["locator"]["event_index"].as_u64() >= Some(index));
    (!agrees).then(|| format!("{client}; recite says {}", said(first.or(first_stream))))
}

#[test]
fn stream_findings_agree_with_the_reference_client_event_by_event() {
    let files = agui_fixture_files();
    for corpus in ["sdk/agui/py/", "sdk/agui/js/", "sdk/agui/streams/", "fixtures/agui/"] {
        assert!(files.iter().any(|f| f.contains(corpus)), "no fixture in {corpus}: {files:?}");
    }
    let verdicts = match reference_client_verdicts(&files) {
        Ok(v) => v,
        Err(why) => {
            let required = std::env::var_os("RECITE_REQUIRE_NODE").is_some_and(|v| !v.is_empty());
            assert!(!required, "RECITE_REQUIRE_NODE is set but {why}");
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED stream_findings_agree_with_the_reference_client_event_by_event: {why}"
            );
            return;
        }
    };
    let findings = recite_findings(&files);
    let named: Vec<&str> = TOLERANCES.iter().map(|t| t.0).collect();
    let mut disagreements = Vec::new();
    let mut agreeing_pending = Vec::new();
    for (file, verdict) in files.iter().zip(&verdicts) {
        // With one of recite's tolerances applied, the client's verdict is the one to match.
        let expected = match verdict.get("lenient") {
            Some(lenient) => {
                for t in lenient["applied"].as_array().unwrap() {
                    assert!(
                        named.contains(&t.as_str().unwrap()),
                        "{file}: tolerance {t} is not named in TOLERANCES"
                    );
                }
                lenient
            }
            None => verdict,
        };
        if expected["verdict"] == "unreadable" {
            // Named: unreadable-to-client.
            continue;
        }
        let empty = Vec::new();
        let recite = findings.get(file).unwrap_or(&empty);
        let streams = expected["streams"].as_array().unwrap();
        let mut wrong = Vec::new();
        for (i, stream) in streams.iter().enumerate() {
            let end = streams.get(i + 1).map(|s| s["offset"].as_u64().unwrap());
            wrong.extend(disagreement(stream, end, recite));
        }
        let pending = PENDING_1_0_RULES.contains(&file.as_str());
        match (wrong.is_empty(), pending) {
            (false, false) => disagreements.push(format!("{file}: {}", wrong.join("; "))),
            (true, true) => agreeing_pending.push(file.clone()),
            _ => {}
        }
    }
    assert!(
        disagreements.is_empty(),
        "recite's ag-ui/stream findings disagree with @ag-ui/client 1.0 on {} file(s):\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
    assert!(
        agreeing_pending.is_empty(),
        "these now agree with the reference client; delete them from PENDING_1_0_RULES:\n{}",
        agreeing_pending.join("\n")
    );
}

/// The `Considered` claimed by each item's result, in item order.
fn considered(doc: &Document) -> Vec<String> {
    doc.items
        .iter()
        .map(|i| {
            let r = i.result.as_ref().expect("a result");
            let v = r.get("result").unwrap_or(r);
            v["Considered"].as_str().unwrap_or_default().to_string()
        })
        .collect()
}

/// The turns of `role`, as (message id, text).
fn turns_of<'a>(doc: &'a Document, role: &str) -> Vec<(Option<&'a str>, &'a str)> {
    doc.turns.iter().filter(|t| t.role == role).map(|t| (t.message_id.as_deref(), t.text.as_str())).collect()
}

#[test]
fn langgraph_tool_result_repeated_in_snapshots_and_state_is_one_claim() {
    // Streamed once, repeated under the ToolMessage's own id in two MESSAGES_SNAPSHOTs and once
    // more in the state's messages: one claim, at the streamed event.
    let doc = load("langgraph-repeated.jsonl");
    assert_eq!(considered(&doc), ["44%"], "{:#?}", doc.items);
    assert_eq!(doc.items[0].locator.event_index, Some(7), "the streamed TOOL_CALL_RESULT");
    assert_eq!(turns_of(&doc, "tool").len(), 1, "{:#?}", doc.turns);
    assert_eq!(turns_of(&doc, "assistant").iter().filter(|t| t.1.contains("44%")).count(), 1);
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
}

#[test]
fn llamaindex_snapshots_minting_new_ids_repeat_no_claim_and_no_answer() {
    let doc = load("llamaindex-snapshots.jsonl");
    assert_eq!(considered(&doc), ["44%"], "{:#?}", doc.items);
    assert_eq!(turns_of(&doc, "tool").len(), 1, "{:#?}", doc.turns);
    assert_eq!(turns_of(&doc, "user").len(), 1, "{:#?}", doc.turns);
    let answers: Vec<_> = turns_of(&doc, "assistant").into_iter().filter(|t| !t.1.is_empty()).collect();
    assert_eq!(answers, [(Some("r-2"), "44% of aware adults considered Versant in W6.")]);
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
}

#[test]
fn crewai_repeats_are_one_claim_each_but_two_calls_stay_two() {
    // Two calls return the same numbers: two claims (their toolCallIds differ); each is
    // repeated in the snapshots under new message ids: no more claims.
    let doc = load("crewai-repeated.jsonl");
    assert_eq!(considered(&doc), ["47%", "47%"], "{:#?}", doc.items);
    let at: Vec<_> = doc.items.iter().map(|i| i.locator.event_index).collect();
    assert_eq!(at, [Some(4), Some(9)]);
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
}

#[test]
fn state_snapshot_and_delta_citations_are_claims_each_shown_value_once() {
    // The right claim is in three states (after a delta, after another, in the last snapshot):
    // one claim, where it was first shown. The wrong one was shown, then removed: still read.
    let doc = load("state-snapshot-delta.jsonl");
    assert_eq!(considered(&doc), ["44%", "47%"], "{:#?}", doc.items);
    let at: Vec<_> = doc.items.iter().map(|i| (i.locator.event_index, i.locator.pointer.as_str())).collect();
    assert_eq!(at, [(Some(2), "state:/results/0/citation/data"), (Some(3), "state:/results/1/citation")]);
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
}

#[test]
fn a_state_delta_that_fails_is_a_finding_at_its_event_and_changes_nothing() {
    let doc = load("state-bad-delta.jsonl");
    // The failed `test` kept the wrong claim out of the state; the last delta still applied.
    assert_eq!(considered(&doc), ["44%"], "{:#?}", doc.items);
    assert_eq!(
        findings(&doc),
        [("ag-ui/state", Some(2)), ("ag-ui/state", Some(3)), ("input/malformed", Some(4))]
    );
    assert!(doc.findings[0].message.contains("operation 0 (test)"), "{}", doc.findings[0].message);
    assert!(doc.findings.iter().all(|f| f.level == Level::Must));
}

#[test]
fn a_state_copied_past_its_bound_is_a_finding_not_a_hang() {
    let copies: Vec<Value> = (0..64).map(|_| json!({"op": "copy", "from": "/a", "path": "/a/0"})).collect();
    let text = log(&[
        run_started(),
        json!({"type": "STATE_SNAPSHOT", "snapshot": {"a": [1, 2, 3, 4]}}),
        json!({"type": "STATE_DELTA", "delta": copies}),
        json!({"type": "STATE_SNAPSHOT", "snapshot": {"result": {"Considered": "44%"}, "citation": citation()}}),
        run_finished(),
    ]);
    let doc = agui::read("copies.jsonl", &text);
    assert_eq!(
        findings(&doc),
        [("ag-ui/state", Some(2)), ("upperhand/unread", Some(3))],
        "{:#?}",
        doc.findings
    );
    assert!(doc.items.is_empty());
}

#[test]
fn a_citation_no_reader_reads_is_reported_where_it_was() {
    let doc = load("unread-citation.jsonl");
    assert!(doc.items.is_empty());
    assert_eq!(findings(&doc), [("upperhand/unread", Some(1))], "{:#?}", doc.findings);
    assert_eq!(doc.findings[0].level, Level::Must);
    assert_eq!(doc.findings[0].locator.message_id.as_deref(), Some("act-1"));
}

#[test]
fn state_claims_settle_and_are_counted_in_the_report() {
    let out =
        support::recite(&["check", "tests/fixtures/agui/state-snapshot-delta.jsonl", "--format", "json"]);
    let report = support::report(&out);
    assert_eq!(support::code(&out), 1, "the wrong claim is DISCREPANT");
    let verdicts: Vec<&str> = report["inputs"][0]["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["REPRODUCED", "DISCREPANT"]);
    let coverage = &report["inputs"][0]["coverage"];
    assert_eq!(coverage["results"], 2, "{coverage}");
    assert_eq!(coverage["citations"], 2);
    assert_eq!(coverage["paired"], 2);
    assert_eq!(coverage["compared"], 2, "{coverage}");
    assert_eq!(report["summary"]["coverage"], *coverage);
}

#[test]
fn state_deltas_patch_the_runs_input_state_or_an_empty_one() {
    // No snapshot: a delta patches `{}`, as the client starts from, or the run's `input.state`.
    let text = log(&[
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "input": {"state": {"results": []}}}),
        json!({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/results/-", "value": {"result": {"Considered": "44%"}, "citation": citation()}}]}),
        json!({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/lastQuery", "value": "W6"}]}),
        run_finished(),
    ]);
    let doc = agui::read("seeded.jsonl", &text);
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
    assert_eq!(considered(&doc), ["44%"]);
    assert_eq!(doc.items[0].locator.pointer, "state:/results/0/citation");
}

#[test]
fn a_snapshot_copy_with_its_keys_reordered_is_still_the_same_tool_result() {
    // Python and JavaScript serialisers do not agree on key order; a repeat is the same value.
    let streamed = json!({"Considered": "44%", "citation": citation()}).to_string();
    let mut reordered = serde_json::Map::new();
    reordered.insert("citation".into(), citation());
    reordered.insert("Considered".into(), json!("44%"));
    let text = log(&[
        run_started(),
        json!({"type": "TOOL_CALL_RESULT", "messageId": "r1", "toolCallId": "c1", "content": streamed}),
        json!({"type": "MESSAGES_SNAPSHOT", "messages": [
            {"id": "s1", "role": "tool", "toolCallId": "c1", "content": Value::Object(reordered).to_string()}
        ]}),
        run_finished(),
    ]);
    let doc = agui::read("reordered.jsonl", &text);
    assert_eq!(considered(&doc), ["44%"], "{:#?}", doc.items);
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
}

// ---------------------------------------------------------------------------------------------
// Framework-relayed events, LangGraph content blocks, where state claims and replays go
// ---------------------------------------------------------------------------------------------

#[test]
fn relayed_copies_of_a_claimed_citation_are_repeats_but_a_citation_only_relayed_is_unread() {
    let mut w5 = citation();
    w5["period"] = json!("W5 (March 2026)");
    // LangGraph's own event relays the tool output as JSON text, its keys in another order.
    let mut reordered = serde_json::Map::new();
    reordered.insert("citation".into(), citation());
    reordered.insert("Considered".into(), json!("44%"));
    let text = log(&[
        run_started(),
        tool("START", "c1"),
        json!({"type": "TOOL_CALL_END", "toolCallId": "c1", "rawEvent": {"output": {"citation": citation()}}}),
        json!({"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "c1",
               "content": json!({"Considered": "44%", "citation": citation()}).to_string()}),
        json!({"type": "RAW", "event": {"event": "on_tool_end", "data": {"output": Value::Object(reordered).to_string()}}}),
        json!({"type": "RAW", "event": {"event": "on_chain_stream", "data": {"chunk": {"citation": w5}}}}),
        run_finished(),
    ]);
    let doc = agui::read("relayed.jsonl", &text);
    assert_eq!(considered(&doc), ["44%"], "{:#?}", doc.items);
    assert_eq!(findings(&doc), [("upperhand/unread", Some(5))], "{:#?}", doc.findings);
    assert!(doc.findings[0].message.contains("relayed"), "{}", doc.findings[0].message);
}

#[test]
fn langgraph_text_blocks_in_state_and_an_uncited_snapshot_copy_are_the_tool_results_one_claim() {
    let result = json!({"brand": "Versant", "stages": {"Considered": 0.442}}).to_string();
    let wrapper =
        json!({"mediaType": "application/vnd.upperhand.citations+json", "data": citation()}).to_string();
    let blocks = json!([{"type": "text", "text": result}, {"type": "text", "text": wrapper}]);
    let text = log(&[
        run_started(),
        tool("START", "c1"),
        tool("END", "c1"),
        // The content blocks joined with no separator: two documents back to back.
        json!({"type": "TOOL_CALL_RESULT", "messageId": "c1", "toolCallId": "c1", "content": format!("{result}{wrapper}")}),
        json!({"type": "STATE_SNAPSHOT", "snapshot": {"messages": [
            {"type": "tool", "id": "m9", "tool_call_id": "c1", "content": blocks}
        ]}}),
        // ag-ui-langgraph's snapshot keeps the first block only: the result without its citation.
        json!({"type": "MESSAGES_SNAPSHOT", "messages": [
            {"id": "m9", "role": "tool", "toolCallId": "c1", "content": result}
        ]}),
        run_finished(),
    ]);
    let doc = agui::read("langgraph-blocks.jsonl", &text);
    assert_eq!(doc.items.len(), 1, "{:#?}", doc.items);
    assert_eq!(doc.items[0].result, Some(json!({"brand": "Versant", "stages": {"Considered": 0.442}})));
    let musts: Vec<_> = doc.findings.iter().filter(|f| f.level == Level::Must).collect();
    assert!(musts.is_empty(), "{musts:#?}");
}

#[test]
fn a_claim_of_the_state_is_in_the_exchange_its_state_event_was_in() {
    let text = log(&[
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r",
               "input": {"messages": [{"id": "u1", "role": "user", "content": "W6 consideration?"}]}}),
        tool("START", "c1"),
        tool("END", "c1"),
        json!({"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "c1", "content": "In the state (funnel)."}),
        json!({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/funnel", "value": {"result": {"Considered": "44%"}, "citation": citation()}}]}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "44% considered it."}),
        text("END", "a1"),
        run_finished(),
    ]);
    let doc = agui::read("state-turn.jsonl", &text);
    assert_eq!(considered(&doc), ["44%"]);
    let roles: Vec<&str> = doc.turns.iter().map(|t| t.role.as_str()).collect();
    assert_eq!(roles, ["user", "tool", "assistant"]);
    // In the tool turn, after the question and before the answer: the answer is traced to it.
    assert_eq!(doc.turns[1].items, [0], "{:#?}", doc.turns);
}

#[test]
fn a_question_only_the_snapshot_replays_goes_before_the_tool_result_it_asked_for() {
    // CrewAI: the streamed tool result, then a snapshot with the question and the answer.
    let text = log(&[
        run_started(),
        tool("START", "c1"),
        tool("END", "c1"),
        json!({"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "c1",
               "content": json!({"result": {"Considered": "44%"}, "citation": citation()}).to_string()}),
        json!({"type": "MESSAGES_SNAPSHOT", "messages": [
            {"id": "u1", "role": "user", "content": "W6 consideration?"},
            {"id": "a0", "role": "assistant", "toolCalls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"id": "t1", "role": "tool", "toolCallId": "c1", "content": json!({"result": {"Considered": "44%"}, "citation": citation()}).to_string()},
            {"id": "a1", "role": "assistant", "content": "44% considered it."}
        ]}),
        run_finished(),
    ]);
    let doc = agui::read("replayed-question.jsonl", &text);
    let roles: Vec<&str> = doc.turns.iter().map(|t| t.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"], "{:#?}", doc.turns);
    assert_eq!(doc.turns[2].items, [0]);
    assert_eq!(doc.turns[3].text, "44% considered it.");
}
