//! Citations hidden in strings, as agent frameworks write them, in every reader: JSON inside a
//! string inside an object (ADK), JSON encoded twice, documents joined in one string (LangGraph),
//! a Python repr (LlamaIndex), ADK's A2A export wrapping the citation Part in its
//! `function_response`, and `{result, citation}` in one data Part (`fasta2a`). What looks like
//! JSON but cannot be read is a finding naming where, never silence.

use recite::transcript::{self, Document, Level, a2a};
use serde_json::{Value, json};

use crate::support::{code, fixture, recite, report};

fn load(path: &str) -> Document {
    transcript::read(path, &fixture(path))
}

fn studies(doc: &Document) -> Vec<&str> {
    doc.items.iter().map(|i| i.citation.as_ref().and_then(|c| c["study"].as_str()).unwrap_or("-")).collect()
}

fn embedded(doc: &Document) -> Vec<(Level, &str)> {
    doc.findings
        .iter()
        .filter(|f| f.rule == "input/embedded-json")
        .map(|f| (f.level, f.locator.pointer.as_str()))
        .collect()
}

fn musts(doc: &Document) -> Vec<String> {
    doc.findings
        .iter()
        .filter(|f| f.level == Level::Must)
        .map(|f| format!("{}: {}", f.rule, f.message))
        .collect()
}

const STUDY: &str = "Versant Mega Tracker";

#[test]
fn agui_tool_results_with_json_in_strings_are_read() {
    let doc = load("agui/json-in-strings.jsonl");
    // ADK's `{"result": "<json>"}`, joined documents, JSON encoded twice, a Python repr.
    assert_eq!(studies(&doc), [STUDY; 4], "{:#?}", doc.items);
    for item in &doc.items {
        let result = item.result.as_ref().expect("a result beside each citation").to_string();
        assert!(result.contains("\"Considered\":\"44%\""), "{result}");
        assert!(!result.contains("study"), "the citation is taken out of the result: {result}");
    }
    // Joined documents and the Python repr are NOTEs; the string cut short is a MUST at its event.
    let found = embedded(&doc);
    assert_eq!(found, [(Level::Note, "/content"), (Level::Note, "/content"), (Level::Must, "/content")]);
    let cut =
        doc.findings.iter().find(|f| f.rule == "input/embedded-json" && f.level == Level::Must).unwrap();
    assert_eq!(cut.locator.event_index, Some(23), "the fifth tool result");
    assert!(cut.message.contains("cannot be read"), "{}", cut.message);
}

#[test]
fn adk_a2a_export_unwraps_the_citation_part_inside_its_function_response() {
    let doc = load("a2a/adk-a2a-export.json");
    assert!(musts(&doc).is_empty(), "{:#?}", doc.findings);
    assert_eq!(studies(&doc), [STUDY, STUDY], "the citation, not its {{mediaType, data}} wrapper");
    // ProtoJSON doubles read as the integers the agent wrote.
    assert_eq!(doc.items[0].result, Some(json!({"Considered": 44, "n": 4654})));
    assert_eq!(doc.items[0].citation.as_ref().unwrap()["base"]["n"], 4654);
    assert_eq!(doc.items[0].locator.pointer, "/result/history/2/parts/0/data/response/citation/data");
    // A tool that returned JSON text: `{"result": "<json>"}` is decoded and looked into.
    assert_eq!(doc.items[1].result, Some(json!({"Considered": "44%"})));

    let out = recite(&["check", "tests/fixtures/a2a/adk-a2a-export.json", "--format", "json"]);
    let json = report(&out);
    let verdicts: Vec<&str> = json["inputs"][0]["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["REPRODUCED", "REPRODUCED"], "{json:#}");
    assert_eq!(code(&out), 0);
}

#[test]
fn result_and_citation_in_one_a2a_part_are_paired_within_it_with_a_note() {
    let doc = load("a2a/fasta2a-data-part.json");
    assert!(musts(&doc).is_empty(), "{:#?}", doc.findings);
    // One data Part, and one text Part holding the same JSON.
    assert_eq!(studies(&doc), [STUDY, STUDY]);
    for item in &doc.items {
        assert_eq!(item.result, Some(json!({"Considered": "44%"})));
    }
    let notes: Vec<&str> = doc
        .findings
        .iter()
        .filter(|f| f.rule == "upperhand/conformance" && f.level == Level::Note)
        .map(|f| f.locator.pointer.as_str())
        .collect();
    assert_eq!(notes, ["/result/artifacts/0/parts/0/data", "/result/artifacts/1/parts/0/text"]);
}

#[test]
fn a2a_string_data_holding_json_is_decoded() {
    let citation = json!({"study": STUDY, "base": {"name": "b", "n": 4654},
        "source": {"table": "versant_flat", "column": "s14r5", "function": "extractFunnel"}});
    let message = json!({"message": {"messageId": "m1", "role": "ROLE_AGENT", "parts": [
        {"data": json!({"Considered": "44%"}).to_string(), "mediaType": "application/json"},
        {"data": citation.to_string(), "mediaType": "application/vnd.upperhand.citations+json"},
    ]}});
    let doc = a2a::read("inline.json", &message.to_string());
    assert_eq!(studies(&doc), [STUDY]);
    assert_eq!(doc.items[0].result, Some(json!({"Considered": "44%"})));
}

#[test]
fn plain_pairs_with_json_text_are_decoded_and_broken_text_is_a_finding() {
    let citation = json!({"study": STUDY, "base": {"name": "b", "n": 4654},
        "source": {"table": "versant_flat", "column": "s14r5", "function": "extractFunnel"}});
    let text = [
        json!({"result": json!({"Considered": "44%"}).to_string(), "citation": citation.to_string()}),
        json!({"result": "{\"Considered\": \"44%\", ", "citation": citation}),
    ]
    .map(|v| v.to_string())
    .join("\n");
    let doc = transcript::read("pairs.jsonl", &text);
    assert_eq!(studies(&doc), [STUDY, STUDY]);
    assert_eq!(doc.items[0].result, Some(json!({"Considered": "44%"})));
    assert_eq!(doc.items[0].citation, Some(citation));
    assert_eq!(embedded(&doc), [(Level::Must, "/result")]);
    assert_eq!(doc.findings[0].locator.line, Some(2));
    // The broken result is kept as the string it is: never a pass on its numbers.
    assert_eq!(doc.items[1].result, Some(Value::String("{\"Considered\": \"44%\", ".into())));
}

#[test]
fn a2a_data_part_holding_a_result_and_its_citation_side_by_side_pairs_as_one() {
    let citation = json!({"study": STUDY, "base": {"name": "b", "n": 4654},
        "source": {"table": "versant_flat", "column": "s14r5", "function": "extractFunnel"}});
    let pairs = json!([{"result": {"Considered": "44%"}, "citation": citation}, {"result": {"Familiar": "71%"}, "citation": citation}]);
    let side_by_side = json!([{"Considered": "44%"}, citation]);
    let message = |data: &Value| {
        json!({"kind": "message", "messageId": "m1", "role": "agent", "parts": [{"kind": "data", "data": data}]})
            .to_string()
    };
    // `[result, citation]` is one pair; `[{result, citation}, …]` pairs element by element.
    let doc = a2a::read("side.json", &message(&side_by_side));
    assert!(musts(&doc).is_empty(), "{:#?}", doc.findings);
    assert_eq!(studies(&doc), [STUDY]);
    assert_eq!(doc.items[0].result, Some(json!({"Considered": "44%"})));
    let doc = a2a::read("pairs.json", &message(&pairs));
    assert!(musts(&doc).is_empty(), "{:#?}", doc.findings);
    let results: Vec<_> = doc.items.iter().map(|i| i.result.clone().unwrap()).collect();
    assert_eq!(results, [json!({"Considered": "44%"}), json!({"Familiar": "71%"})]);
}
