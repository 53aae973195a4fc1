//! Transcript readers (A2A v0.3 / v1.0, plain) and the Agent Card check, against the fixtures in
//! `tests/fixtures/{a2a,plain,cards}`: which items are found, how they pair, where they point.

use recite::card::{card_report, check_card};
use recite::transcript::{
    Document, Format, Item, Level, is_quantitative, looks_like_citation, pointer_push, read, read_bytes,
};
use serde_json::Value;

use crate::support::{self, fixture_bytes};

fn load(path: &str) -> Document {
    let bytes = fixture_bytes(path);
    read(path, std::str::from_utf8(&bytes).expect("fixture is UTF-8"))
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).expect("test JSON")
}

const VF: &str =
    r#"{"brand":"Versant","wave":"W6","funnel":{"Aware":1.0,"Familiar":0.71,"Considered":0.44}}"#;
const CF: &str =
    r#"{"brand":"Corvana","wave":"W6","funnel":{"Aware":1.0,"Familiar":0.66,"Considered":0.38}}"#;

/// The cited column, which tells the Versant (`s14r5`) and Corvana (`s14r4`) citations apart.
fn column(item: &Item) -> &str {
    item.citation.as_ref().and_then(|c| c["source"]["column"].as_str()).unwrap_or("-")
}

fn pointers(doc: &Document) -> Vec<&str> {
    doc.items.iter().map(|i| i.locator.pointer.as_str()).collect()
}

fn rules(doc: &Document) -> Vec<(&str, Level)> {
    doc.findings.iter().map(|f| (f.rule.as_str(), f.level)).collect()
}

fn turn_items(doc: &Document) -> Vec<(&str, Vec<usize>)> {
    doc.turns.iter().map(|t| (t.role.as_str(), t.items.clone())).collect()
}

// ---------------------------------------------------------------------------------------------
// A2A v0.3
// ---------------------------------------------------------------------------------------------

#[test]
fn v03_task_pairs_history_and_artifacts() {
    let doc = load("a2a/v03-task.json");
    assert_eq!(doc.format, Format::A2aV03);
    assert_eq!(
        pointers(&doc),
        [
            "/history/1/parts/2/data",
            "/artifacts/0/parts/3/data",
            "/artifacts/0/parts/4/data",
            "/artifacts/1/parts/2/data"
        ]
    );
    let [a1, versant, corvana, conversion] = &doc.items[..] else { panic!("{:#?}", doc.items) };

    assert_eq!(a1.result, Some(json(VF)));
    assert_eq!(column(a1), "s14r5");
    assert_eq!(a1.locator.message_id.as_deref(), Some("msg-a1"));
    assert_eq!(a1.locator.task_id.as_deref(), Some("task-7f3a"));
    assert_eq!(a1.locator.part_index, Some(2));
    assert!(!a1.by_shape);

    // Two citations, two results in one artifact: paired in order.
    assert_eq!((versant.result.clone(), column(versant)), (Some(json(VF)), "s14r5"));
    assert_eq!((corvana.result.clone(), column(corvana)), (Some(json(CF)), "s14r4"));
    assert_eq!(versant.locator.artifact_id.as_deref(), Some("art-funnels"));
    assert_eq!(corvana.locator.part_index, Some(4));

    // One citation, two results: one item whose result is both.
    let both = json(
        r#"[{"step":"Aware → Familiar","conversion":0.71},{"step":"Familiar → Considered","conversion":0.62}]"#,
    );
    assert_eq!(conversion.result, Some(both));
    assert_eq!(conversion.citation.as_ref().unwrap()["warnings"][0], "Base under 100 in the 65-74 cell");

    assert_eq!(rules(&doc), [("upperhand/pairing", Level::Note)]);
    assert_eq!(doc.findings[0].locator.pointer, "/artifacts/0/parts/3/data");

    // History, then the status message (also in history: once), then artifacts.
    assert_eq!(
        turn_items(&doc),
        [
            ("user", vec![]),
            ("agent", vec![0]),
            ("user", vec![]),
            ("agent", vec![]),
            ("agent", vec![1, 2]),
            ("agent", vec![3])
        ]
    );
    assert!(doc.turns[1].text.starts_with("Among adults 18-74 aware of Versant"));
    assert_eq!(doc.turns[3].message_id.as_deref(), Some("msg-a2"));
    assert_eq!(doc.turns[4].text, "Versant vs Corvana, W6 (April 2026)");
}

#[test]
fn v03_message_send_citation_by_shape() {
    let doc = load("a2a/v03-message-send.json");
    assert_eq!(doc.format, Format::A2aV03);
    assert_eq!(pointers(&doc), ["/result/parts/2/data"]);
    let item = &doc.items[0];
    assert!(item.by_shape);
    assert_eq!(item.result, Some(json(r#"{"brand":"Versant","wave":"W6","considered":0.44}"#)));
    assert_eq!(item.locator.message_id.as_deref(), Some("msg-9c1"));
    assert_eq!(rules(&doc), [("upperhand/media-type", Level::Note)]);
    assert_eq!(turn_items(&doc), [("agent", vec![0])]);
}

#[test]
fn v03_stream_appends_artifact_chunks() {
    let doc = load("a2a/v03-stream.sse");
    assert_eq!(doc.format, Format::A2aV03);
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
    assert_eq!(pointers(&doc), ["/result/artifact/parts/0/data"]);
    let item = &doc.items[0];
    // The citation came in the second chunk (line 9) and pairs with the first chunk's data.
    assert_eq!(item.locator.line, Some(9));
    assert_eq!(item.locator.part_index, Some(1));
    assert_eq!(item.locator.artifact_id.as_deref(), Some("art-vf"));
    assert_eq!(item.locator.task_id.as_deref(), Some("task-5d21"));
    assert_eq!(item.result, Some(json(VF)));
    assert_eq!(turn_items(&doc), [("user", vec![]), ("agent", vec![]), ("agent", vec![0])]);
    assert_eq!(doc.turns[1].text, "Running extractFunnel on versant_flat.s14r5 …");
}

#[test]
fn adk_function_responses() {
    let doc = load("a2a/adk-function-response.json");
    assert_eq!(doc.format, Format::A2aV03);
    assert_eq!(
        pointers(&doc),
        [
            "/result/history/2/parts/0/data/response/citation",
            "/result/history/3/parts/1/data/response/citations/0",
            "/result/history/4/parts/0/data/response/provenance",
            "/result/history/5/parts/1/data",
            "/result/history/6/parts/0/data/response",
        ]
    );
    let [a2, a3, a4, a5, a6] = &doc.items[..] else { panic!() };
    // The citation inside the response is not part of the claimed result.
    assert_eq!(a2.result, Some(json(VF)));
    assert_eq!(a3.result, Some(json(CF)));
    assert_eq!(column(a3), "s14r4");
    assert_eq!(a3.locator.part_index, Some(1), "after the function_call Part (old `type` key)");
    assert!(a4.by_shape && !a2.by_shape && !a3.by_shape);
    assert_eq!(a4.result.as_ref().unwrap()["steps"][1]["conversion"], json("0.62"));
    // A tool response without a citation of its own pairs with a citation Part of its message.
    assert_eq!(a5.result, Some(json(r#"{"brand":"Versant","considered":0.44}"#)));
    assert!(a5.citation.is_some());
    // A tool response with no citation anywhere: the item is kept, and found wanting.
    assert_eq!(
        (a6.citation.clone(), a6.result.clone()),
        (None, Some(json(r#"{"brand":"Versant","nps":31}"#)))
    );
    assert_eq!(rules(&doc), [("upperhand/media-type", Level::Note), ("upperhand/conformance", Level::Must)]);
    assert_eq!(doc.findings[1].locator.message_id.as_deref(), Some("adk-a6"));
    // The function_call-only message makes no turn.
    let ids: Vec<_> = doc.turns.iter().map(|t| t.message_id.as_deref().unwrap()).collect();
    assert_eq!(ids, ["adk-u1", "adk-a2", "adk-a3", "adk-a4", "adk-a5", "adk-a6", "adk-a7"]);
}

// ---------------------------------------------------------------------------------------------
// A2A v1.0
// ---------------------------------------------------------------------------------------------

#[test]
fn v10_send_message_task() {
    let doc = load("a2a/v10-send-message.json");
    assert_eq!(doc.format, Format::A2aV10);
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
    assert_eq!(pointers(&doc), ["/result/task/artifacts/0/parts/2/data"]);
    let at = &doc.items[0].locator;
    assert_eq!(
        (at.task_id.as_deref(), at.artifact_id.as_deref(), at.part_index),
        (Some("task-v10-01"), Some("art-funnel"), Some(2))
    );
    assert_eq!(doc.items[0].result, Some(json(VF)));
    assert_eq!(turn_items(&doc), [("user", vec![]), ("agent", vec![0])]);
}

#[test]
fn v10_get_task_conformance() {
    let doc = load("a2a/v10-get-task.json");
    assert_eq!(doc.format, Format::A2aV10);
    assert_eq!(
        pointers(&doc),
        [
            "/result/artifacts/0/parts/1/data",
            "/result/artifacts/1/parts/1/data",
            "/result/artifacts/2/parts/2/data/0",
            "/result/artifacts/2/parts/2/data/1",
        ]
    );
    let [nps, note, versant, corvana] = &doc.items[..] else { panic!() };
    assert_eq!(
        (nps.citation.is_none(), nps.result.clone()),
        (true, Some(json(r#"{"brand":"Versant","nps":31}"#)))
    );
    assert_eq!((note.citation.is_some(), note.result.is_none()), (true, true));
    assert_eq!((versant.result.clone(), column(versant)), (Some(json(VF)), "s14r5"));
    assert_eq!((corvana.result.clone(), column(corvana)), (Some(json(CF)), "s14r4"));
    assert_eq!(
        rules(&doc),
        [
            ("upperhand/conformance", Level::Must),
            ("upperhand/conformance", Level::Must),
            ("upperhand/pairing", Level::Note)
        ]
    );
    assert_eq!(doc.findings[0].locator.artifact_id.as_deref(), Some("art-nps"));
    assert_eq!(doc.findings[1].locator.artifact_id.as_deref(), Some("art-note"));
}

#[test]
fn v10_stream_with_multiline_event() {
    let doc = load("a2a/v10-stream.sse");
    assert_eq!(doc.format, Format::A2aV10);
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
    assert_eq!(pointers(&doc), ["/result/artifactUpdate/artifact/parts/0/data"]);
    let item = &doc.items[0];
    assert_eq!((item.locator.line, item.locator.part_index), (Some(8), Some(2)));
    assert_eq!(item.locator.artifact_id.as_deref(), Some("art-s1"));
    assert_eq!(item.result, Some(json(VF)));
    assert_eq!(
        turn_items(&doc),
        [("user", vec![]), ("agent", vec![]), ("agent", vec![0]), ("agent", vec![])]
    );
    assert_eq!(doc.turns[1].text, "Computing the funnel…");
    assert_eq!(doc.turns[3].message_id.as_deref(), Some("m-sa2"));
}

#[test]
fn v10_snake_case_json_lines() {
    let doc = load("a2a/v10-snake-case.jsonl");
    assert_eq!(doc.format, Format::A2aV10);
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
    assert_eq!(
        pointers(&doc),
        ["/result/message/parts/2/data", "/result/artifact_update/artifact/parts/1/data"]
    );
    let [m, a] = &doc.items[..] else { panic!() };
    assert_eq!(
        (m.locator.line, m.locator.message_id.as_deref(), m.locator.task_id.as_deref()),
        (Some(1), Some("m-snake"), Some("t-snake"))
    );
    assert_eq!(
        (a.locator.line, a.locator.artifact_id.as_deref(), a.locator.task_id.as_deref()),
        (Some(2), Some("a-snake"), Some("t-snake"))
    );
    assert_eq!((m.result.clone(), a.result.clone()), (Some(json(VF)), Some(json(CF))));
    assert_eq!(doc.turns[0].role, "agent", "role 2 is ROLE_AGENT");
}

// ---------------------------------------------------------------------------------------------
// Malformed input
// ---------------------------------------------------------------------------------------------

#[test]
fn truncated_sse_keeps_earlier_events() {
    let doc = load("a2a/truncated.sse");
    assert_eq!(doc.format, Format::A2aV10);
    assert_eq!(rules(&doc), [("input/malformed", Level::Must), ("upperhand/conformance", Level::Must)]);
    let cut = &doc.findings[0].locator;
    assert_eq!(cut.line, Some(5));
    let last_line_len =
        String::from_utf8(fixture_bytes("a2a/truncated.sse")).unwrap().lines().nth(4).unwrap().len();
    assert_eq!(cut.column, Some(last_line_len));
    assert!(doc.findings[0].message.contains("cut short"), "{}", doc.findings[0].message);
    // The data chunk before the cut is read; its citation never arrived.
    assert_eq!(pointers(&doc), ["/result/artifactUpdate/artifact/parts/0/data"]);
    assert_eq!((doc.items[0].locator.line, doc.items[0].citation.is_none()), (Some(3), true));
    assert_eq!(doc.turns[0].role, "user");
}

#[test]
fn wrong_part_types_are_findings() {
    let doc = load("a2a/wrong-types.json");
    assert_eq!(doc.format, Format::A2aV03);
    assert_eq!(rules(&doc), [("a2a/malformed", Level::Must), ("a2a/malformed", Level::Must)]);
    assert_eq!(doc.findings[0].locator.pointer, "/history/1/parts");
    assert_eq!(doc.findings[1].locator.pointer, "/artifacts/0/parts/1/data");
    assert_eq!(doc.findings[1].locator.part_index, None);
    assert_eq!(doc.findings[1].locator.artifact_id.as_deref(), Some("art-str"));
    // The rest of the task is still read.
    assert_eq!(pointers(&doc), ["/artifacts/1/parts/1/data"]);
    assert_eq!(doc.items[0].result, Some(json(VF)));
}

#[test]
fn jsonrpc_error_is_a_finding() {
    let doc = load("a2a/jsonrpc-error.json");
    assert!(matches!(doc.format, Format::A2aV03 | Format::A2aV10));
    assert!(doc.items.is_empty());
    assert_eq!(rules(&doc), [("a2a/jsonrpc-error", Level::Must)]);
    let f = &doc.findings[0];
    assert_eq!(f.locator.pointer, "/error");
    assert!(f.message.contains("-32001") && f.message.contains("Task not found"), "{}", f.message);
}

#[test]
fn invalid_utf8_is_reported_and_the_rest_read() {
    let bytes = fixture_bytes("plain/invalid-utf8.jsonl");
    let doc = read_bytes("plain/invalid-utf8.jsonl", &bytes);
    assert_eq!(doc.format, Format::Plain);
    assert_eq!(rules(&doc), [("input/malformed", Level::Must)]);
    let bad = bytes.iter().position(|b| *b == 0xe9).unwrap();
    let line_start = bytes[..bad].iter().rposition(|b| *b == b'\n').unwrap() + 1;
    assert_eq!(doc.findings[0].locator.line, Some(2));
    assert_eq!(doc.findings[0].locator.column, Some(bad - line_start + 1));
    assert!(doc.findings[0].message.contains("0xe9"));
    assert_eq!(doc.items.len(), 2);
    assert_eq!(doc.items[1].result.as_ref().unwrap()["brand"], "Versant\u{fffd}");
}

#[test]
fn empty_input_is_malformed() {
    for text in ["", "  \n\n\t\n"] {
        let doc = read("empty.json", text);
        assert_eq!(rules(&doc), [("input/malformed", Level::Must)]);
        assert_eq!((doc.findings[0].locator.line, doc.findings[0].locator.column), (Some(1), Some(1)));
        assert!(doc.items.is_empty());
    }
    let doc = load("plain/empty.json");
    assert_eq!(rules(&doc), [("input/malformed", Level::Must)]);
}

#[test]
fn malformed_json_document_has_line_and_column() {
    let doc = read("cut.json", "{\n  \"result\": {\"considered\": 0.44},\n  \"citation\": {\"study\": \n");
    assert_eq!(rules(&doc), [("input/malformed", Level::Must)]);
    // Where the text stops.
    assert_eq!(doc.findings[0].locator.line, Some(3));
    let doc = read("bad.json", "{\"result\": [1, 2,, 3]}");
    assert_eq!((doc.findings[0].locator.line, doc.findings[0].locator.column), (Some(1), Some(18)));
    assert_eq!(doc.findings[0].locator.to_string(), "bad.json:1:18");
}

#[test]
fn bad_sse_event_in_the_middle() {
    let text = format!(
        "data: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"kind\":\"message\",\"messageId\":\"m1\",\"role\":\"agent\",\"parts\":[{{\"kind\":\"data\",\"data\":{VF}}}]}}}}\n\n\
         data: {{not json}}\n\n\
         data: [DONE]\n\n"
    );
    let doc = read("s.sse", &text);
    assert_eq!(doc.format, Format::A2aV03);
    assert_eq!(rules(&doc), [("input/malformed", Level::Must), ("upperhand/conformance", Level::Must)]);
    assert_eq!((doc.findings[0].locator.line, doc.findings[0].locator.column), (Some(3), Some(8)));
    assert_eq!(doc.items[0].result, Some(json(VF)));
}

// ---------------------------------------------------------------------------------------------
// Plain
// ---------------------------------------------------------------------------------------------

#[test]
fn plain_json_lines() {
    let doc = load("plain/pairs.jsonl");
    assert_eq!(doc.format, Format::Plain);
    assert_eq!(pointers(&doc), ["/citation", "/citations/0", "/citations/1", "", "/result"]);
    let lines: Vec<_> = doc.items.iter().map(|i| i.locator.line.unwrap()).collect();
    assert_eq!(lines, [1, 2, 2, 3, 4]);
    let [pair, v, c, bare, alone] = &doc.items[..] else { panic!() };
    assert_eq!((pair.result.clone(), column(pair)), (Some(json(VF)), "s14r5"));
    assert_eq!(v.result, c.result, "two citations share one result");
    assert_eq!((column(v), column(c)), ("s14r5", "s14r4"));
    assert_eq!((bare.result.is_none(), bare.citation.is_some()), (true, true));
    assert_eq!((alone.result.is_some(), alone.citation.is_none()), (true, true));
    // A bare citation is on purpose: no conformance finding for it.
    assert_eq!(rules(&doc), [("upperhand/pairing", Level::Note), ("upperhand/conformance", Level::Must)]);
    assert_eq!(doc.findings[1].locator.line, Some(4));
}

#[test]
fn plain_json_array() {
    let doc = load("plain/pairs.json");
    assert_eq!(doc.format, Format::Plain);
    assert_eq!(pointers(&doc), ["/0/citation", "/1/citation", "/2/citations/0", "/2/citations/1"]);
    assert_eq!(doc.items[1].result, None);
    assert_eq!(doc.items[2].result, Some(json(r#"{"Considered":0.44}"#)));
    assert_eq!(doc.items[3].result, Some(json(r#"{"Considered":0.38}"#)));
    assert_eq!(rules(&doc), [("upperhand/pairing", Level::Note)]);
    assert!(doc.items.iter().all(|i| i.locator.line.is_none() && !i.by_shape));
}

#[test]
fn plain_bad_line_does_not_lose_the_others() {
    let doc = load("plain/bad-line.jsonl");
    assert_eq!(rules(&doc), [("input/malformed", Level::Must)]);
    assert_eq!(doc.findings[0].locator.line, Some(2));
    let lines: Vec<_> = doc.items.iter().map(|i| i.locator.line.unwrap()).collect();
    assert_eq!(lines, [1, 3]);
}

#[test]
fn plain_unrecognised_object() {
    let doc = read("x.json", r#"[{"claim": "44%"}, {"result": "no numbers here"}]"#);
    assert_eq!(rules(&doc), [("input/unrecognised", Level::Must)]);
    assert_eq!(doc.findings[0].locator.pointer, "/0");
    assert!(doc.items.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Detection and helpers
// ---------------------------------------------------------------------------------------------

#[test]
fn format_comes_from_content_not_name() {
    let text = String::from_utf8(fixture_bytes("a2a/v03-task.json")).unwrap();
    assert_eq!(read("looks-plain.jsonl", &text).format, Format::A2aV03);
    let text = String::from_utf8(fixture_bytes("plain/pairs.jsonl")).unwrap();
    assert_eq!(read("a2a-stream.sse", &text).format, Format::Plain);
    assert_eq!(
        recite::transcript::detect(&String::from_utf8(fixture_bytes("a2a/v10-stream.sse")).unwrap()),
        Format::A2aV10
    );
}

#[test]
fn pointers_escape_tilde_and_slash() {
    assert_eq!(pointer_push("", "a/b~c"), "/a~1b~0c");
    let cit = r#"{"study":"Versant Mega Tracker","base":{"name":"Adults 18-74, aware of brand","n":4210},"source":{"table":"versant_flat","column":"s14r5","function":"extractFunnel"}}"#;
    let text = format!(
        r#"{{"kind":"message","messageId":"m","role":"agent","parts":[{{"kind":"data","metadata":{{"adk_type":"function_response"}},"data":{{"id":"c1","name":"f","response":{{"considered":0.44,"cite~v1/main":{cit}}}}}}}]}}"#
    );
    let doc = read("m.json", &text);
    assert_eq!(pointers(&doc), ["/parts/0/data/response/cite~0v1~1main"]);
    assert!(doc.items[0].by_shape);
}

#[test]
fn quantitative_and_citation_shapes() {
    assert!(is_quantitative(&json(r#"{"a":[{"b":"x"},{"c":0}]}"#)));
    assert!(is_quantitative(&json("0.44")));
    // Numeric strings state numbers as much as JSON numbers do.
    assert!(is_quantitative(&json(r#"{"a":["44%", true, null]}"#)));
    assert!(!is_quantitative(&json(r#"{"a":["W6", "2026-04-02", true, null]}"#)));
    assert!(looks_like_citation(&json(r#"{"study":"S","source":{"function":"extractFunnel"}}"#)));
    assert!(looks_like_citation(&json(r#"{"base":{"n":1},"source":{"table":"t"}}"#)));
    assert!(!looks_like_citation(&json(r#"{"study":"S","source":"versant_flat"}"#)));
    assert!(!looks_like_citation(&json(r#"{"source":{"table":"t","column":"c","function":"f"}}"#)));
}

// ---------------------------------------------------------------------------------------------
// Agent Cards
// ---------------------------------------------------------------------------------------------

fn card(path: &str) -> Value {
    serde_json::from_slice(&fixture_bytes(path)).unwrap()
}

#[test]
fn card_v03_declares_everything() {
    let report = card_report("cards/v03-card.json", &card("cards/v03-card.json"));
    assert_eq!(report.version, "0.3");
    assert_eq!(report.media_type_declared, ["/defaultOutputModes"]);
    assert_eq!(report.extension_declared.as_deref(), Some("/capabilities/extensions/0"));
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
}

#[test]
fn card_v10_skill_output_modes_and_required_extension() {
    let report = card_report("cards/v10-card.json", &card("cards/v10-card.json"));
    assert_eq!(report.version, "1.0");
    assert_eq!(report.media_type_declared, ["/skills/0/outputModes"]);
    let found: Vec<_> =
        report.findings.iter().map(|f| (f.rule.as_str(), f.level, f.locator.pointer.as_str())).collect();
    assert_eq!(
        found,
        [
            ("upperhand/card-output-modes", Level::Note, "/defaultOutputModes"),
            ("upperhand/card-extension", Level::Must, "/capabilities/extensions/0/required"),
        ]
    );
}

#[test]
fn card_without_citations() {
    let findings = check_card("cards/v03-no-citations.json", &card("cards/v03-no-citations.json"));
    let found: Vec<_> = findings.iter().map(|f| (f.rule.as_str(), f.level)).collect();
    assert_eq!(found, [("upperhand/card-output-modes", Level::Should)]);
    let report = card_report("x", &card("cards/v03-no-citations.json"));
    assert_eq!(report.extension_declared, None);
}

// ---------------------------------------------------------------------------------------------
// Robustness
// ---------------------------------------------------------------------------------------------

/// Every prefix of every fixture (a file cut anywhere, even inside a UTF-8 sequence) reads
/// without a panic, and whatever cannot be read is reported.
#[test]
fn any_prefix_reads_without_panic() {
    let files = [
        "a2a/v03-task.json",
        "a2a/v03-stream.sse",
        "a2a/v10-stream.sse",
        "a2a/v10-snake-case.jsonl",
        "a2a/adk-function-response.json",
        "a2a/wrong-types.json",
        "plain/pairs.jsonl",
        "plain/invalid-utf8.jsonl",
    ];
    // Every prefix, the whole file included: a step between cuts would leave most untried.
    for path in files {
        let bytes = fixture_bytes(path);
        for cut in 0..=bytes.len() {
            let doc = read_bytes(path, &bytes[..cut]);
            if cut == 0 {
                assert_eq!(rules(&doc), [("input/malformed", Level::Must)]);
            }
        }
    }
}

#[test]
fn odd_roots() {
    for text in ["42", "\"text\"", "null", "true"] {
        let doc = read("odd.json", text);
        assert_eq!(doc.format, Format::Plain);
        assert_eq!(rules(&doc), [("input/unrecognised", Level::Must)], "{text}");
    }
    let doc = read("empty-array.json", "[]");
    assert!(doc.items.is_empty() && doc.findings.is_empty());
}

#[test]
fn bare_citation_is_checked_alone() {
    let text = String::from_utf8(fixture_bytes("plain/pairs.jsonl")).unwrap();
    let bare = text.lines().nth(2).unwrap();
    let doc = read("citation.json", bare);
    assert_eq!(doc.format, Format::Plain);
    assert_eq!(pointers(&doc), [""]);
    assert_eq!((doc.items[0].result.is_none(), doc.findings.is_empty()), (true, true));
}

#[test]
fn agui_logs_go_to_the_agui_reader() {
    let text = "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t1\",\"runId\":\"r1\"}\n\n\
                data: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t1\",\"runId\":\"r1\"}\n\n";
    assert_eq!(read("run.sse", text).format, Format::Agui);
    let array = r#"[{"type":"RUN_STARTED","threadId":"t1","runId":"r1"},{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}]"#;
    assert_eq!(read("run.json", array).format, Format::Agui);
}

#[test]
fn example_transcripts_read_cleanly() {
    let dir = format!("{}/examples/transcripts", env!("CARGO_MANIFEST_DIR"));
    for (name, format, items) in
        [("a2a-v03-task.json", Format::A2aV03, 3), ("a2a-v10-stream.sse", Format::A2aV10, 2)]
    {
        let text = std::fs::read_to_string(format!("{dir}/{name}")).unwrap();
        let doc = read(name, &text);
        assert_eq!(doc.format, format, "{name}");
        assert_eq!(doc.items.len(), items, "{name}");
        assert!(
            doc.items.iter().all(|i| i.citation.is_some() && i.result.is_some() && !i.by_shape),
            "{name}"
        );
        assert!(doc.findings.is_empty(), "{name}: {:#?}", doc.findings);
    }
}

// ---------------------------------------------------------------------------------------------
// What the official SDKs write: numeric strings, ProtoJSON doubles, the v0.3 adapters, client
// logs, citations as bytes, media types with parameters, SSE line endings
// ---------------------------------------------------------------------------------------------

const CITATIONS: &str = "application/vnd.upperhand.citations+json";

/// The W6 citation of Versant's Considered share (44% in the bundled data; W5's was 47%).
fn w6_considered(n: Value) -> Value {
    serde_json::json!({
        "study": "Versant Mega Tracker",
        "period": "W6 (April 2026)",
        "base": {"name": "Adults 18-74, aware of brand", "n": n},
        "weight": "main_weight",
        "source": {"table": "versant_flat", "column": "s14r5", "function": "extractFunnel"}
    })
}

fn b64(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// A v1.0 Task with one artifact of the given Parts.
fn v10_task(parts: Value) -> Value {
    serde_json::json!({
        "id": "task-1", "contextId": "ctx-1",
        "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [{"artifactId": "art-1", "parts": parts}]
    })
}

/// The wrong-string claim (`{"Considered": "47%"}` beside a W6 citation) in every format the
/// SDKs write, by name. `result` is the claimed result, so the same transcripts carry a control.
fn every_format(result: &Value) -> Vec<(&'static str, String)> {
    use serde_json::json;
    let cit = w6_considered(json!(4654));
    let v10_parts = json!([{"data": result}, {"data": cit, "mediaType": CITATIONS}]);
    let task = v10_task(v10_parts.clone());
    let v03_message = json!({
        "kind": "message", "messageId": "m-1", "role": "agent",
        "parts": [
            {"kind": "data", "data": result},
            {"kind": "data", "data": cit, "metadata": {"mimeType": CITATIONS}}
        ]
    });
    // The Python SDK's v0.3 adapter: no media type, doubles, a list wrapped as {"value": …}.
    let v03_adapter = json!({
        "jsonrpc": "2.0", "id": 1,
        "result": {
            "kind": "message", "messageId": "m-2", "role": "agent",
            "parts": [
                {"kind": "data", "data": result},
                {"kind": "data", "data": {"value": [w6_considered(json!(4654.0))]},
                 "metadata": {"data_part_compat": true}}
            ]
        }
    });
    let update = |append: bool, parts: Value| {
        json!({"jsonrpc": "2.0", "id": 7, "result": {"artifactUpdate": {
            "taskId": "task-1", "contextId": "ctx-1", "append": append, "lastChunk": append,
            "artifact": {"artifactId": "art-1", "parts": parts}}}})
    };
    let sse_lines = [
        update(false, json!([{"data": result}])),
        update(true, json!([{"data": cit, "mediaType": CITATIONS}])),
    ];
    let sse = |eol: &str| sse_lines.iter().map(|e| format!("data: {e}{eol}{eol}")).collect::<String>();
    let stream_responses = [
        json!({"task": {"id": "task-1", "contextId": "ctx-1", "status": {"state": "TASK_STATE_WORKING"}}}),
        json!({"artifactUpdate": {"taskId": "task-1", "artifact": {"artifactId": "art-1", "parts": v10_parts}}}),
        json!({"statusUpdate": {"taskId": "task-1", "status": {"state": "TASK_STATE_COMPLETED"}}}),
    ];
    let raw = json!([{"data": result}, {"raw": b64(&cit.to_string()), "mediaType": CITATIONS}]);
    let mut content = result.clone();
    content["citation"] = cit.clone();
    let tool_result = json!({"type": "TOOL_CALL_RESULT", "messageId": "t-1", "toolCallId": "c-1",
        "content": content.to_string()});
    let agui = [
        json!({"type": "RUN_STARTED", "threadId": "th", "runId": "r"}),
        json!({"type": "TOOL_CALL_START", "toolCallId": "c-1", "toolCallName": "get_funnel"}),
        json!({"type": "TOOL_CALL_END", "toolCallId": "c-1"}),
        tool_result,
        json!({"type": "RUN_FINISHED", "threadId": "th", "runId": "r"}),
    ];
    vec![
        ("v0.3 JSON-RPC message/send", json!({"jsonrpc": "2.0", "id": 1, "result": v03_message}).to_string()),
        ("v0.3 SDK adapter", serde_json::to_string_pretty(&v03_adapter).unwrap()),
        (
            "v1.0 JSON-RPC SendMessage",
            json!({"jsonrpc": "2.0", "id": 1, "result": {"task": task}}).to_string(),
        ),
        ("v1.0 REST GetTask", serde_json::to_string_pretty(&task).unwrap()),
        ("v1.0 SSE, LF", sse("\n")),
        ("v1.0 SSE, CRLF", sse("\r\n")),
        ("v1.0 SSE, CR", sse("\r")),
        ("v1.0 JSON lines", stream_responses.iter().map(|r| format!("{r}\n")).collect()),
        (
            "v1.0 client log (MessageToJson, one after another)",
            stream_responses.iter().map(|r| serde_json::to_string_pretty(r).unwrap()).collect(),
        ),
        ("v1.0 raw Part", v10_task(raw).to_string()),
        (
            "v0.3 gRPC/REST binding",
            json!({"task": {"id": "t", "status": {"state": "TASK_STATE_COMPLETED", "message": {
                "messageId": "m", "role": "ROLE_AGENT",
                "content": [{"text": "47%"}, {"data": {"data": result}}, {"data": {"data": cit}}]}}}})
            .to_string(),
        ),
        ("AG-UI JSON lines", agui.iter().map(|e| format!("{e}\n")).collect()),
        ("AG-UI SSE, CR", agui.iter().map(|e| format!("data: {e}\r\r")).collect()),
    ]
}

/// The wrong-string claim in the format whose name starts with `name`.
fn format_named(name: &str) -> String {
    let all = every_format(&serde_json::json!({"Considered": "47%"}));
    all.into_iter().find(|(n, _)| n.starts_with(name)).expect("a format of that name").1
}

/// `recite check - --format json` over `text`: the verdict of each claim.
fn verdicts_of(text: &str) -> Vec<String> {
    let report =
        support::report(&support::recite_stdin(&["check", "-", "--format", "json"], text.as_bytes()));
    report["inputs"][0]["claims"]
        .as_array()
        .unwrap_or_else(|| panic!("no claims: {report:#}"))
        .iter()
        .map(|c| c["verdict"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn wrong_numeric_string_is_discrepant_in_every_format() {
    for (format, text) in every_format(&serde_json::json!({"Considered": "47%"})) {
        assert_eq!(verdicts_of(&text), ["DISCREPANT"], "{format}:\n{text}");
    }
}

#[test]
fn right_numeric_string_is_reproduced_in_every_format() {
    for (format, text) in every_format(&serde_json::json!({"Considered": "44%"})) {
        assert_eq!(verdicts_of(&text), ["REPRODUCED"], "{format}:\n{text}");
    }
}

#[test]
fn numeric_string_part_is_a_result_the_reader_pairs() {
    for (format, text) in every_format(&serde_json::json!({"Considered": "47%"})) {
        let doc = read("sdk", &text);
        assert_eq!(doc.items.len(), 1, "{format}: {:#?}", doc.items);
        let item = &doc.items[0];
        assert_eq!(item.result.as_ref().map(|r| &r["Considered"]), Some(&json(r#""47%""#)), "{format}");
        assert_eq!(column(item), "s14r5", "{format}");
        let musts: Vec<_> = doc.findings.iter().filter(|f| f.level == Level::Must).collect();
        assert!(musts.is_empty(), "{format}: {musts:#?}");
    }
}

#[test]
fn numeric_strings_alone_need_a_citation() {
    let text = r#"{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":{"Considered":"0.440"}}]}"#;
    let doc = read("m.json", text);
    assert_eq!(rules(&doc), [("upperhand/conformance", Level::Must)]);
    assert_eq!(doc.items[0].result, Some(json(r#"{"Considered":"0.440"}"#)));
}

#[test]
fn protojson_whole_doubles_read_as_integers() {
    let cit = w6_considered(serde_json::json!(4654.0));
    let parts = serde_json::json!([{"data": {"Considered": 44.0, "n": 4654.0, "share": 0.44}}, {"data": cit, "mediaType": CITATIONS}]);
    let doc = read("t.json", &v10_task(parts).to_string());
    let item = &doc.items[0];
    assert_eq!(item.result, Some(json(r#"{"Considered":44,"n":4654,"share":0.44}"#)));
    assert_eq!(item.citation.as_ref().unwrap()["base"]["n"].to_string(), "4654");
    assert_eq!(rules(&doc), [("a2a/protojson-doubles", Level::Note)]);
    // 44.0 from such a producer is the whole percent 44 (W6 is 44.2%, within ±0.5, not ±0.05).
    let whole = serde_json::json!([{"data": {"Considered": 44.0}}, {"data": w6_considered(serde_json::json!(4654.0)), "mediaType": CITATIONS}]);
    assert_eq!(verdicts_of(&v10_task(whole).to_string()), ["REPRODUCED"]);
    // A producer that writes integers as integers meant its `.0`.
    let parts = serde_json::json!([{"data": {"Aware": 1.0}}, {"data": w6_considered(serde_json::json!(4654)), "mediaType": CITATIONS}]);
    let doc = read("t.json", &v10_task(parts).to_string());
    assert_eq!(doc.items[0].result, Some(json(r#"{"Aware":1.0}"#)));
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
}

#[test]
fn v03_adapter_compat_wrapper_is_unwrapped() {
    let text = format_named("v0.3 SDK adapter");
    let doc = read("adapter.json", &text);
    assert_eq!(doc.format, Format::A2aV03);
    assert_eq!(pointers(&doc), ["/result/parts/1/data/value/0"]);
    assert!(doc.items[0].by_shape, "the adapter drops the media type");
    assert_eq!(doc.items[0].citation.as_ref().unwrap()["base"]["n"].to_string(), "4654");
    // The JS SDK's v0.3 REST binding keeps the wrapper and drops the marker.
    let rest = serde_json::json!({"messageId": "m", "role": "ROLE_AGENT", "content": [
        {"data": {"data": {"Considered": 0.467}}},
        {"data": {"data": {"value": [w6_considered(serde_json::json!(4654))]}}}]});
    let doc = read("rest.json", &rest.to_string());
    assert_eq!(pointers(&doc), ["/content/1/data/data/value/0"]);
    assert_eq!(doc.items[0].result, Some(json(r#"{"Considered":0.467}"#)));
    // A wrapped scalar is a result like any other.
    let text = r#"{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"data","data":{"value":0.44},"metadata":{"data_part_compat":true}}]}"#;
    let doc = read("m.json", text);
    assert_eq!(doc.items[0].result, Some(json("0.44")));
}

#[test]
fn concatenated_documents_are_read() {
    let text = format_named("v1.0 client log");
    assert!(text.contains("}{"), "documents written one after another");
    let doc = read("client.log", &text);
    assert_eq!(doc.format, Format::A2aV10);
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
    // The document starts on the line where the one before it ends (`}{`).
    let starts = text.lines().position(|l| l.contains("artifactUpdate")).unwrap();
    assert_eq!(doc.items[0].locator.line, Some(starts));
}

#[test]
fn citations_as_base64_bytes() {
    let cit = w6_considered(serde_json::json!(4654));
    // v1.0 raw Part, and the v0.3 adapter's file Part with bytes.
    let raw = serde_json::json!([{"data": {"Considered": 0.44}}, {"raw": b64(&cit.to_string()), "mediaType": CITATIONS}]);
    let doc = read("raw.json", &v10_task(raw).to_string());
    assert_eq!(pointers(&doc), ["/artifacts/0/parts/1/raw"]);
    assert_eq!(doc.items[0].citation, Some(cit.clone()));
    let file = format!(
        r#"{{"kind":"message","messageId":"m","role":"agent","parts":[{{"kind":"data","data":{{"Considered":0.44}}}},{{"kind":"file","file":{{"bytes":"{}","mimeType":"{CITATIONS}"}}}}]}}"#,
        b64(&cit.to_string())
    );
    let doc = read("file.json", &file);
    assert_eq!(pointers(&doc), ["/parts/1/file/bytes"]);
    assert_eq!(doc.items[0].citation, Some(cit));
    // The v0.3 gRPC/REST binding's FilePart.
    let rest = format!(
        r#"{{"messageId":"m","role":"ROLE_AGENT","content":[{{"data":{{"data":{{"Considered":0.44}}}}}},{{"file":{{"fileWithBytes":"{}","mimeType":"{CITATIONS}"}}}}]}}"#,
        b64(&w6_considered(serde_json::json!(4654)).to_string())
    );
    let doc = read("rest.json", &rest);
    assert_eq!(pointers(&doc), ["/content/1/file/fileWithBytes"]);
    assert_eq!(doc.items[0].result, Some(json(r#"{"Considered":0.44}"#)));
    // Bytes that are not base64 JSON are a finding, not a silent skip.
    let bad = serde_json::json!([{"data": {"Considered": 0.44}}, {"raw": "@@@", "mediaType": CITATIONS}]);
    let doc = read("bad.json", &v10_task(bad).to_string());
    assert!(doc.findings.iter().any(|f| f.locator.pointer.ends_with("/raw") && f.level == Level::Must));
}

#[test]
fn media_types_match_without_case_or_parameters() {
    let cit = w6_considered(serde_json::json!(4654));
    for mt in [
        CITATIONS,
        "Application/VND.Upperhand.Citations+JSON",
        "application/vnd.upperhand.citations+json; charset=utf-8",
    ] {
        // A citation object that only its media type says is one.
        let odd = serde_json::json!({"citation": cit});
        let parts = serde_json::json!([{"data": {"Considered": 0.44}}, {"data": odd, "mediaType": mt}]);
        let doc = read("t.json", &v10_task(parts).to_string());
        assert_eq!((doc.items.len(), doc.items[0].by_shape), (1, false), "{mt}");
        let v03 = serde_json::json!({"kind": "message", "messageId": "m", "role": "agent", "parts": [
            {"kind": "data", "data": {"Considered": 0.44}},
            {"kind": "data", "data": cit, "metadata": {"mimeType": mt}}]});
        let doc = read("m.json", &v03.to_string());
        assert!(doc.findings.is_empty() && !doc.items[0].by_shape, "{mt}: {:#?}", doc.findings);
    }
}

/// Every input file under `tests/fixtures/` and `examples/` (the extensions `recite check`
/// reads in a folder), relative to the crate root, sorted.
fn every_fixture() -> Vec<String> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| ["json", "jsonl", "ndjson", "sse", "txt", "log"].contains(&e))
            {
                out.push(path);
            }
        }
    }
    let root = support::root();
    let mut paths = Vec::new();
    walk(&root.join("tests/fixtures"), &mut paths);
    walk(&root.join("examples"), &mut paths);
    let mut files: Vec<String> =
        paths.iter().map(|p| p.strip_prefix(root).unwrap().display().to_string()).collect();
    files.sort();
    files
}

/// True when `v` holds something citation-shaped, JSON inside strings included: the citations
/// media type, or a `source` object naming a table, column or function.
fn holds_citation(v: &Value) -> bool {
    match v {
        Value::String(s) => {
            s.to_ascii_lowercase().contains(recite::transcript::CITATION_MEDIA_TYPE)
                || serde_json::from_str::<Value>(s)
                    .is_ok_and(|inner| inner.is_object() && holds_citation(&inner))
        }
        Value::Array(a) => a.iter().any(holds_citation),
        Value::Object(o) => {
            o.get("source")
                .and_then(Value::as_object)
                .is_some_and(|s| ["table", "column", "function"].iter().any(|k| s.contains_key(*k)))
                || o.values().any(holds_citation)
        }
        _ => false,
    }
}

#[test]
fn no_fixture_holding_a_citation_yields_no_claim_and_no_finding() {
    let files = every_fixture();
    assert!(files.len() > 100, "the walk found the fixtures: {files:?}");
    let mut holding = 0;
    let mut silent = Vec::new();
    for file in &files {
        let bytes = std::fs::read(support::root().join(file)).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        let values = recite::transcript::frame(file, &text).records;
        let cites = text.to_ascii_lowercase().contains(recite::transcript::CITATION_MEDIA_TYPE)
            || values.iter().any(|r| holds_citation(&r.value));
        if !cites {
            continue;
        }
        holding += 1;
        let doc = read_bytes(file, &bytes);
        if doc.items.is_empty() && doc.findings.is_empty() {
            silent.push(file.clone());
        }
    }
    assert!(holding > 50, "{holding} fixtures hold a citation");
    assert!(
        silent.is_empty(),
        "read with no claim and no finding, though they hold a citation:\n{}",
        silent.join("\n")
    );
}

#[test]
fn a_citation_in_no_shape_a_reader_knows_is_reported_not_dropped() {
    // A JSON-RPC notification of no known method carrying a citation: recite finds no claim, so
    // the input gets an `upperhand/unread` finding, or another finding for what it is.
    let text = r#"{"jsonrpc": "2.0", "method": "x/notify", "params": {"attachment": {"mediaType": "application/vnd.upperhand.citations+json", "bytes": "e30="}}}"#;
    let doc = read("odd.json", text);
    assert!(doc.items.is_empty());
    assert!(!doc.findings.is_empty(), "the citation disappeared without a word");
}

#[test]
fn a_record_whose_citation_no_reader_reads_is_reported_at_its_line() {
    // Line 1 pairs a result with its citation; line 2 carries one in the message's metadata,
    // where no reader looks: a MUST `upperhand/unread` finding at line 2, not silence.
    let doc = load("a2a/citation-in-metadata.jsonl");
    assert_eq!(doc.items.len(), 1);
    assert_eq!(doc.items[0].locator.line, Some(1));
    let unread: Vec<_> = doc.findings.iter().map(|f| (f.rule.as_str(), f.level, f.locator.line)).collect();
    assert_eq!(unread, [("upperhand/unread", Level::Must, Some(2))], "{:#?}", doc.findings);
}

#[test]
fn a_record_that_only_repeats_a_settled_citation_is_a_copy_not_unread() {
    // As above, but line 2's citation is line 1's, settled there: a copy (a push notification or
    // `tasks/get` repeating a streamed task), not a citation nobody read. It was a false MUST
    // `upperhand/unread`, failing a CI gate although nothing was missed.
    let doc = load("a2a/citation-copied-in-metadata.jsonl");
    assert_eq!(doc.items.len(), 1);
    assert!(doc.findings.iter().all(|f| f.rule != "upperhand/unread"), "{:#?}", doc.findings);
}

#[test]
fn a_recite_report_part_is_a_settlement_not_an_uncited_result() {
    // A v1.0 task whose artifact holds a verifier's report (recite's media type and shape) and
    // nothing else: not a quantitative result needing a citation beside it.
    let report = serde_json::json!({
        "report_version": "1", "summary": {"claims": 1, "verdicts": {"REPRODUCED": 1}},
        "inputs": [{"file": "-", "claims": [{"recomputed": 0.4425, "base": {"n": 4654}}]}],
    });
    let task = |media: &str, data: &Value| {
        serde_json::json!({"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "a", "name": "settlement", "parts": [{"data": data, "mediaType": media}]}]}})
        .to_string()
    };
    let read = |text: String| recite::transcript::read("task.json", &text);
    let doc = read(task("application/vnd.recite.report+json", &report));
    assert!(doc.findings.is_empty() && doc.items.is_empty(), "{:#?}", doc.findings);
    // The same numbers under another media type, or a look-alike without the report's shape,
    // are results like any other: uncited, a MUST finding.
    for (media, data) in [
        ("application/json", report.clone()),
        ("application/vnd.recite.report+json", serde_json::json!({"Considered": "44%", "n": 4654})),
    ] {
        let doc = read(task(media, &data));
        assert_eq!(rules(&doc), [("upperhand/conformance", Level::Must)], "{media}: {data}");
    }
}
