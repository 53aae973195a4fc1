//! MOCA Citations over AG-UI 0.6.0: checks the `moca.citations` `CUSTOM` events of an AG-UI log
//! against the spec's event (§2) and service (§3) rules.
//!
//! Each finding's rule names the section it enforces, so a report can link to it:
//!
//! | rule | level | what |
//! |---|---|---|
//! | `moca/§2-version` | NOTE (unknown version), MUST (none) | `value.version` is 1 |
//! | `moca/§2-event-shape` | MUST | `value` is an object, `citations` an array of `{record, marker?}` |
//! | `moca/§2-message-id` | MUST | `messageId` names an assistant message of this run |
//! | `moca/§2-computed-at` | MUST | `computedAt` is RFC 3339 with an offset |
//! | `moca/§2-one-per-message` | SHOULD | one event per assistant message |
//! | `moca/§2-record-shape` | MUST | each record has `package`, `node`, `trust` and a key |
//! | `moca/record-schema` | MUST | each record is valid against the user's schema |
//! | `moca/§3-placement` | MUST | after the message's `TEXT_MESSAGE_END`, before `RUN_FINISHED` |
//! | `moca/§3-returned-in-run` | MUST | the Reader returned the node in this run |
//! | `moca/§3-unchanged` | MUST | the record is the Reader's, `text` aside |
//! | `moca/§3-cited-in-answer` | MUST | the answer refers to it (marker or node reference) |
//! | `moca/§3-order` | MUST | listed in order of first mention |
//! | `moca/§3-unique` | MUST | one entry per `node.ref` and `span` |
//! | `moca/§3-empty-event` | SHOULD | an event, possibly empty, for each assistant answer |
//!
//! The SHOULD of §3 is only checked in a run that has at least one `moca.citations` event: a run
//! without any is a service that does not speak MOCA, which is no fault.
//!
//! Records are compared with what the Reader returned in the same run: every citation record
//! (an object with `package`, `node` and `trust` objects) found anywhere in the JSON of the run's
//! `TOOL_CALL_RESULT` contents.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::Value;

use crate::input::{Finding, Level, Locator};
use crate::transcript::Document;
use crate::transcript::agui::Event;

mod record;
mod runs;

pub use record::{first_mention, key, references, shape_errors, span};

/// The `CUSTOM` event name this spec defines.
pub const EVENT_NAME: &str = "moca.citations";

/// The only event version this checker knows.
pub const VERSION: u64 = 1;

/// What [`check`] found.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct MocaReport {
    /// Rule breaches (and the NOTE for an event of an unknown version).
    pub findings: Vec<Finding>,
    /// Every `moca.citations` event, for the report.
    pub events: Vec<MocaEvent>,
}

/// One `moca.citations` event, as the HTML report shows it.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct MocaEvent {
    /// Index of the event in the log.
    pub event_index: usize,
    /// 1-based line of the event, for line-based logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// `value.messageId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// `value.computedAt`, as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub computed_at: Option<String>,
    /// True when the event was ignored for its unknown version (a client must ignore it too).
    pub ignored: bool,
    /// The citations, in the event's order.
    pub citations: Vec<MocaCitation>,
}

/// One entry of `value.citations`.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct MocaCitation {
    /// `marker`, when the service uses markers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker: Option<String>,
    /// The citation record, as sent (data from the package: never render it as markup).
    pub record: Value,
    /// The key a client records it by: `node.ref`, or `node.id` and `package.digest` separated
    /// by a space; `None` when the record has neither.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// True when no finding is about this entry (event-level findings such as placement are
    /// not counted: they are about the event, not the record); false for the entries of an
    /// event ignored for its version, which were not checked.
    pub passed: bool,
    /// Whether the Reader returned this node in the run: `Some(true)` unchanged (`text` aside),
    /// `Some(false)` changed, `None` not returned or not checked. For the answer audit.
    #[serde(skip)]
    pub returned: Option<bool>,
    /// The `text` of the record the Reader returned, when it returned one with a text.
    #[serde(skip)]
    pub reader_text: Option<String>,
}

/// Checks every `moca.citations` event of an AG-UI document. `record_schema`, when given (for
/// instance `citation-record.schema.json`), is applied to every cited record.
pub fn check(doc: &Document, record_schema: Option<&jsonschema::Validator>) -> MocaReport {
    let runs = runs::split(&doc.events);
    let mut checker = Checker { doc, runs: &runs, schema: record_schema, report: MocaReport::default() };
    // Per run: message ids that have an event (any version), for the SHOULD check.
    let mut covered: HashMap<usize, HashSet<String>> = HashMap::new();
    for event in doc.events.iter().filter(|e| is_moca_event(e)) {
        let Some(run) = runs::run_of(&runs, event.index) else { continue };
        let named = event.body.pointer("/value/messageId").and_then(Value::as_str);
        let ids = covered.entry(run).or_default();
        if let Some(id) = named
            && !ids.insert(id.to_string())
        {
            checker.finding(event, "moca/§2-one-per-message", Level::Should, "/value/messageId",
                format!("a second moca.citations event for message {id}: a service sends one per assistant message"));
        }
        checker.event(event, run);
    }
    for (run_index, ids) in &covered {
        checker.missing_events(*run_index, ids);
    }
    let mut report = checker.report;
    report.findings.sort_by_key(|f| f.locator.event_index);
    report
}

/// A `CUSTOM` event named `moca.citations`.
pub fn is_moca_event(event: &Event) -> bool {
    event.kind == "CUSTOM" && event.str_field("name") == Some(EVENT_NAME)
}

/// Check state.
struct Checker<'a> {
    doc: &'a Document,
    runs: &'a [runs::Run],
    schema: Option<&'a jsonschema::Validator>,
    report: MocaReport,
}

impl Checker<'_> {
    fn finding(&mut self, event: &Event, rule: &str, level: Level, pointer: &str, message: String) {
        let message_id = event.body.pointer("/value/messageId").and_then(Value::as_str).map(str::to_string);
        self.report.findings.push(Finding {
            locator: Locator {
                file: self.doc.file.clone(),
                line: event.line,
                event_index: Some(event.index),
                message_id,
                pointer: pointer.to_string(),
                ..Locator::default()
            },
            rule: rule.to_string(),
            level,
            message,
        });
    }

    /// All the rules for one event.
    fn event(&mut self, event: &Event, run_index: usize) {
        let runs = self.runs;
        let run = &runs[run_index];
        let mut shown = MocaEvent { event_index: event.index, line: event.line, ..MocaEvent::default() };
        let Some(value) = event.body.get("value").filter(|v| v.is_object()) else {
            self.finding(
                event,
                "moca/§2-event-shape",
                Level::Must,
                "/value",
                "the event's `value` is not an object".into(),
            );
            self.report.events.push(shown);
            return;
        };
        shown.message_id = value.get("messageId").and_then(Value::as_str).map(str::to_string);
        shown.computed_at = value.get("computedAt").and_then(Value::as_str).map(str::to_string);
        let entries = value.get("citations").and_then(Value::as_array).cloned().unwrap_or_default();
        if !self.version(event, value) {
            shown.ignored = true;
            shown.citations = entries.iter().map(|e| shown_citation(e, false)).collect();
            self.report.events.push(shown);
            return;
        }
        let message = self.message(event, value, run);
        self.computed_at(event, value);
        if let Some(message) = &message {
            self.placement(event, message, run.finished);
        }
        if !value.get("citations").is_some_and(Value::is_array) {
            self.finding(
                event,
                "moca/§2-event-shape",
                Level::Must,
                "/value/citations",
                "`citations` is not an array".into(),
            );
        }
        let answer = message.as_ref().map(|m| m.text.as_str());
        shown.citations = self.citations(event, &entries, run_index, answer);
        self.report.events.push(shown);
    }

    /// §2 version: true when the event is to be checked further.
    fn version(&mut self, event: &Event, value: &Value) -> bool {
        match value.get("version") {
            None => {
                self.finding(
                    event,
                    "moca/§2-version",
                    Level::Must,
                    "/value/version",
                    "the event has no `version` (1)".into(),
                );
                true
            }
            Some(v) if v.as_u64() == Some(VERSION) || v.as_f64() == Some(VERSION as f64) => true,
            Some(v) => {
                self.finding(
                    event,
                    "moca/§2-version",
                    Level::Note,
                    "/value/version",
                    format!("ignored (unknown version {v})"),
                );
                false
            }
        }
    }

    /// §2 messageId: the assistant message of this run the event is for.
    fn message(&mut self, event: &Event, value: &Value, run: &runs::Run) -> Option<runs::Message> {
        let Some(id) = value.get("messageId").and_then(Value::as_str) else {
            self.finding(
                event,
                "moca/§2-message-id",
                Level::Must,
                "/value/messageId",
                "the event has no string `messageId`".into(),
            );
            return None;
        };
        match run.messages.get(id) {
            Some(m) if m.role == "assistant" => Some(m.clone()),
            Some(m) => {
                let why = format!("messageId {id} names a {} message, not an assistant message", m.role);
                self.finding(event, "moca/§2-message-id", Level::Must, "/value/messageId", why);
                None
            }
            None => {
                let why = format!(
                    "messageId {id} names no message of this run (no TEXT_MESSAGE_START with that id)"
                );
                self.finding(event, "moca/§2-message-id", Level::Must, "/value/messageId", why);
                None
            }
        }
    }

    /// §2 computedAt: RFC 3339 with an offset.
    fn computed_at(&mut self, event: &Event, value: &Value) {
        let Some(at) = value.get("computedAt") else { return };
        let ok = at.as_str().is_some_and(|s| chrono::DateTime::parse_from_rfc3339(s).is_ok());
        if !ok {
            let why = format!("computedAt {at} is not an RFC 3339 date-time with an offset");
            self.finding(event, "moca/§2-computed-at", Level::Must, "/value/computedAt", why);
        }
    }

    /// §3 placement: after the message's end, before the run's end.
    fn placement(&mut self, event: &Event, message: &runs::Message, finished: Option<usize>) {
        let why = match (message.end, finished) {
            (None, _) => {
                Some("sent for a message that never ended (no TEXT_MESSAGE_END in this run)".to_string())
            }
            (Some(end), _) if event.index < end => {
                Some(format!("sent before the message's TEXT_MESSAGE_END (event {end})"))
            }
            (_, Some(fin)) if event.index > fin => {
                Some(format!("sent after the run's RUN_FINISHED (event {fin})"))
            }
            _ => None,
        };
        if let Some(why) = why {
            self.finding(event, "moca/§3-placement", Level::Must, "", why);
        }
    }

    /// The per-citation rules; returns the entries as the report shows them.
    fn citations(
        &mut self,
        event: &Event,
        entries: &[Value],
        run_index: usize,
        answer: Option<&str>,
    ) -> Vec<MocaCitation> {
        let mut shown = Vec::new();
        let mut seen: HashSet<(String, String)> = HashSet::new();
        let mut latest: Option<(usize, String)> = None;
        for (i, entry) in entries.iter().enumerate() {
            let base = format!("/value/citations/{i}");
            let before = self.report.findings.len();
            let marker = entry.get("marker");
            if marker.is_some_and(|m| !m.is_string() && !m.is_null()) {
                self.finding(
                    event,
                    "moca/§2-event-shape",
                    Level::Must,
                    &format!("{base}/marker"),
                    "`marker` is not a string".into(),
                );
            }
            let marker = marker.and_then(Value::as_str);
            let label = marker.map_or_else(|| format!("citation {i}"), |m| format!("citation {m}"));
            let Some(rec) = entry.get("record") else {
                self.finding(
                    event,
                    "moca/§2-record-shape",
                    Level::Must,
                    &base,
                    format!("{label} has no `record`"),
                );
                shown.push(shown_citation(entry, false));
                continue;
            };
            let record_ptr = format!("{base}/record");
            let shape = shape_errors(rec);
            if !shape.is_empty() {
                self.finding(
                    event,
                    "moca/§2-record-shape",
                    Level::Must,
                    &record_ptr,
                    format!("{label}: {}", shape.join("; ")),
                );
            }
            self.schema(event, rec, &record_ptr, &label);
            let (returned, reader_text) = if shape.is_empty() {
                self.returned(event, rec, run_index, &record_ptr, &label)
            } else {
                (None, None)
            };
            let key = key(rec);
            if let Some(answer) = answer {
                match first_mention(answer, marker, rec) {
                    None => {
                        let refs = references(rec);
                        let why = format!(
                            "{label} is never referred to in the answer (neither its marker nor {})",
                            refs.join(" nor ")
                        );
                        self.finding(event, "moca/§3-cited-in-answer", Level::Must, &base, why);
                    }
                    Some(at) => {
                        if let Some((prev, prev_label)) = &latest
                            && at < *prev
                        {
                            let why =
                                format!("{label} is first mentioned before {prev_label} but listed after it");
                            self.finding(event, "moca/§3-order", Level::Must, &base, why);
                        }
                        if latest.as_ref().is_none_or(|(p, _)| at >= *p) {
                            latest = Some((at, label.clone()));
                        }
                    }
                }
            }
            if let Some(k) = &key
                && !seen.insert((k.clone(), span(rec)))
            {
                let why = format!("{label} repeats node {k} with the same span");
                self.finding(event, "moca/§3-unique", Level::Must, &base, why);
            }
            let passed = self.report.findings.len() == before;
            shown.push(MocaCitation {
                marker: marker.map(str::to_string),
                record: rec.clone(),
                key,
                passed,
                returned,
                reader_text,
            });
        }
        shown
    }

    /// The user's schema, when given.
    fn schema(&mut self, event: &Event, rec: &Value, pointer: &str, label: &str) {
        let Some(validator) = self.schema else { return };
        let errors: Vec<String> = validator
            .iter_errors(rec)
            .map(|e| {
                let at = e.instance_path().as_str();
                format!("{}: {e}", if at.is_empty() { "/" } else { at })
            })
            .collect();
        if !errors.is_empty() {
            let why = format!("{label} is not valid against the record schema: {}", errors.join("; "));
            self.finding(event, "moca/record-schema", Level::Must, pointer, why);
        }
    }

    /// §3 only nodes the Reader returned in this run, unchanged. Returns whether it was returned
    /// unchanged (`None`: not returned), and the text of the Reader's record.
    fn returned(
        &mut self,
        event: &Event,
        rec: &Value,
        run_index: usize,
        pointer: &str,
        label: &str,
    ) -> (Option<bool>, Option<String>) {
        let candidates: Vec<&Value> = self.runs[run_index]
            .records
            .iter()
            .map(|(_, r)| r)
            .filter(|r| record::same_node(rec, r))
            .collect();
        let k = key(rec).unwrap_or_default();
        if candidates.is_empty() {
            let elsewhere = self.runs.iter().enumerate().find(|(i, run)| {
                *i != run_index && run.records.iter().any(|(_, r)| record::same_node(rec, r))
            });
            let why = match elsewhere {
                Some((_, run)) => format!(
                    "{label} cites {k}, which the Reader returned in another run (the run starting at event {}), not in this one",
                    run.first
                ),
                None => format!("{label} cites {k}, which the Reader did not return in this run"),
            };
            self.finding(event, "moca/§3-returned-in-run", Level::Must, pointer, why);
            return (None, None);
        }
        let Some((best, reader)) =
            candidates.iter().map(|r| (record::changes(rec, r), *r)).min_by_key(|(c, _)| c.len())
        else {
            return (None, None);
        };
        let reader_text = reader.get("text").and_then(Value::as_str).map(str::to_string);
        if !best.is_empty() {
            let at: Vec<String> = best.iter().map(|p| format!("{pointer}{p}")).collect();
            let why = format!("{label} differs from the record the Reader returned at {}", at.join(", "));
            self.finding(event, "moca/§3-unchanged", Level::Must, &at[0], why);
        }
        (Some(best.is_empty()), reader_text)
    }

    /// §3 SHOULD: an event for each assistant message with content, in a run that has any.
    fn missing_events(&mut self, run_index: usize, covered: &HashSet<String>) {
        let runs = self.runs;
        let run = &runs[run_index];
        for id in &run.order {
            let m = &run.messages[id];
            if m.role != "assistant" || m.text.trim().is_empty() || covered.contains(id) {
                continue;
            }
            let Some(start) = self.doc.events.get(m.start) else { continue };
            self.report.findings.push(Finding {
                locator: Locator {
                    file: self.doc.file.clone(),
                    line: start.line,
                    event_index: Some(start.index),
                    message_id: Some(id.clone()),
                    ..Locator::default()
                },
                rule: "moca/§3-empty-event".to_string(),
                level: Level::Should,
                message: format!("assistant message {id} has no moca.citations event (send one with an empty list when it cites nothing)"),
            });
        }
    }
}

/// An entry as shown, unchecked.
fn shown_citation(entry: &Value, passed: bool) -> MocaCitation {
    let record = entry.get("record").cloned().unwrap_or(Value::Null);
    MocaCitation {
        marker: entry.get("marker").and_then(Value::as_str).map(str::to_string),
        key: key(&record),
        record,
        passed,
        returned: None,
        reader_text: None,
    }
}
