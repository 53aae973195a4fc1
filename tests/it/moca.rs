//! MOCA Citations over AG-UI 0.6.0: one conforming log, then one log per rule that breaks only
//! that rule (`tests/fixtures/moca/`).

use std::collections::BTreeSet;

use recite::moca::{self, MocaReport};
use recite::transcript::{Document, Level, agui};

use crate::support;

fn fixture(name: &str) -> String {
    support::fixture(&format!("moca/{name}"))
}

fn load(name: &str) -> Document {
    agui::read(name, &fixture(name))
}

fn check(name: &str) -> (Document, MocaReport) {
    let doc = load(name);
    let report = moca::check(&doc, None);
    (doc, report)
}

/// The (rule, event index) pairs of a report.
fn fired(report: &MocaReport) -> BTreeSet<(String, usize)> {
    report
        .findings
        .iter()
        .map(|f| (f.rule.clone(), f.locator.event_index.expect("every MOCA finding has an event index")))
        .collect()
}

/// Asserts the log reads cleanly and exactly `rule` fires, at `index`, with `level`.
fn only(name: &str, rule: &str, index: usize, level: Level) -> MocaReport {
    let (doc, report) = check(name);
    assert!(doc.findings.is_empty(), "{name}: reader findings {:#?}", doc.findings);
    let want: BTreeSet<_> = [(rule.to_string(), index)].into();
    assert_eq!(fired(&report), want, "{name}: {:#?}", report.findings);
    assert!(report.findings.iter().all(|f| f.level == level), "{name}: {:#?}", report.findings);
    report
}

#[test]
fn conforming_log_has_no_findings_at_all() {
    let (doc, report) = check("conforming.jsonl");
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    assert_eq!(report.events.len(), 1);
    let event = &report.events[0];
    assert_eq!(event.event_index, 9);
    assert_eq!(event.message_id.as_deref(), Some("msg-answer-1"));
    assert_eq!(event.computed_at.as_deref(), Some("2026-09-28T10:15:00Z"));
    assert!(!event.ignored);
    let markers: Vec<_> = event.citations.iter().map(|c| c.marker.clone().unwrap()).collect();
    assert_eq!(markers, ["[1]", "[2]"]);
    assert!(event.citations.iter().all(|c| c.passed));
    assert_eq!(
        event.citations[0].key.as_deref(),
        Some("https://example.com/moca/support-kb@4.2.0#refund-window.md")
    );
}

#[test]
fn example_copy_is_the_conforming_log() {
    let example = format!("{}/examples/moca/conforming.jsonl", env!("CARGO_MANIFEST_DIR"));
    assert_eq!(std::fs::read_to_string(example).unwrap(), fixture("conforming.jsonl"));
}

#[test]
fn answer_by_node_reference_and_empty_list_conform() {
    for name in ["conforming-refs.jsonl", "conforming-empty.jsonl"] {
        let (doc, report) = check(name);
        assert!(doc.findings.is_empty(), "{name}: {:#?}", doc.findings);
        assert!(report.findings.is_empty(), "{name}: {:#?}", report.findings);
    }
}

#[test]
fn conforming_records_pass_a_user_schema() {
    let schema: serde_json::Value = serde_json::from_str(&fixture("record-schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let doc = load("conforming.jsonl");
    let report = moca::check(&doc, Some(&validator));
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
}

#[test]
fn hallucinated_node_ref() {
    let report = only("hallucinated-ref.jsonl", "moca/§3-returned-in-run", 9, Level::Must);
    assert!(report.findings[0].message.contains("refund-fees.md"));
    assert_eq!(report.findings[0].locator.pointer, "/value/citations/1/record");
    let passed: Vec<_> = report.events[0].citations.iter().map(|c| c.passed).collect();
    assert_eq!(passed, [true, false]);
}

#[test]
fn node_returned_only_in_a_previous_run() {
    let report = only("previous-run.jsonl", "moca/§3-returned-in-run", 20, Level::Must);
    assert!(report.findings[0].message.contains("another run"), "{}", report.findings[0].message);
}

#[test]
fn changed_trust_flags() {
    let report = only("changed-trust.jsonl", "moca/§3-unchanged", 9, Level::Must);
    let message = &report.findings[0].message;
    assert!(message.contains("/value/citations/1/record/trust/stale"), "{message}");
    assert!(message.contains("/value/citations/1/record/trust/superseded"), "{message}");
}

#[test]
fn event_after_run_finished() {
    let (doc, report) = check("after-run-finished.jsonl");
    let want: BTreeSet<_> = [("moca/§3-placement".to_string(), 10)].into();
    assert_eq!(fired(&report), want, "{:#?}", report.findings);
    // The AG-UI stream rules forbid any event after RUN_FINISHED as well.
    let stream: Vec<_> = doc.findings.iter().map(|f| (f.rule.as_str(), f.locator.event_index)).collect();
    assert_eq!(stream, [("ag-ui/stream", Some(10))]);
}

#[test]
fn event_before_text_message_end() {
    only("before-message-end.jsonl", "moca/§3-placement", 8, Level::Must);
}

#[test]
fn citations_out_of_order() {
    only("wrong-order.jsonl", "moca/§3-order", 9, Level::Must);
}

#[test]
fn duplicate_node_and_span() {
    let report = only("duplicate.jsonl", "moca/§3-unique", 9, Level::Must);
    assert_eq!(report.findings[0].locator.pointer, "/value/citations/1");
}

#[test]
fn unknown_version_is_a_note_and_otherwise_ignored() {
    let report = only("version-2.jsonl", "moca/§2-version", 9, Level::Note);
    assert!(report.findings[0].message.contains("ignored (unknown version 2)"));
    assert!(report.events[0].ignored);
}

#[test]
fn unknown_message_id() {
    let report = only("unknown-message-id.jsonl", "moca/§2-message-id", 10, Level::Must);
    assert_eq!(report.findings[0].locator.message_id.as_deref(), Some("msg-ghost"));
}

#[test]
fn computed_at_without_offset() {
    only("bad-computed-at.jsonl", "moca/§2-computed-at", 9, Level::Must);
}

#[test]
fn record_without_trust() {
    let report = only("missing-trust.jsonl", "moca/§2-record-shape", 9, Level::Must);
    assert!(report.findings[0].message.contains("trust"));
}

#[test]
fn citation_the_answer_never_refers_to() {
    only("never-referred.jsonl", "moca/§3-cited-in-answer", 9, Level::Must);
}

#[test]
fn assistant_message_without_an_event() {
    let report = only("missing-event.jsonl", "moca/§3-empty-event", 1, Level::Should);
    assert_eq!(report.findings[0].locator.message_id.as_deref(), Some("msg-plan-1"));
}

#[test]
fn record_schema_violation() {
    let schema: serde_json::Value = serde_json::from_str(&fixture("record-schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let doc = load("schema-violation.jsonl");
    assert!(doc.findings.is_empty(), "{:#?}", doc.findings);
    assert!(moca::check(&doc, None).findings.is_empty());
    let report = moca::check(&doc, Some(&validator));
    let want: BTreeSet<_> = [("moca/record-schema".to_string(), 9)].into();
    assert_eq!(fired(&report), want, "{:#?}", report.findings);
    assert_eq!(report.findings.len(), 2, "one per record: {:#?}", report.findings);
    assert!(report.findings.iter().all(|f| f.message.contains("/package/digest")));
}

#[test]
fn no_moca_events_no_findings() {
    let text = fixture("conforming.jsonl")
        .lines()
        .filter(|l| !l.contains("moca.citations"))
        .collect::<Vec<_>>()
        .join("\n");
    let doc = agui::read("no-moca.jsonl", &text);
    let report = moca::check(&doc, None);
    assert!(report.findings.is_empty() && report.events.is_empty(), "{:#?}", report.findings);
}
