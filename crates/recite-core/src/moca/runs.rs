//! The runs of an AG-UI log, and what each run holds that the MOCA rules look at: its text
//! messages (role, text, where they start and end), where it finished, and the citation records
//! its Reader returned in `TOOL_CALL_RESULT` content.
//!
//! A run is the events from one `RUN_STARTED` to the next (events before the first
//! `RUN_STARTED` form a run of their own). Events a producer sent after `RUN_FINISHED` stay in
//! that run, so that a citation event sent too late is checked against the run it belongs to.

use std::collections::HashMap;

use serde_json::Value;

use crate::transcript::agui::Event;

/// A text message of a run.
#[derive(Debug, Clone)]
pub struct Message {
    /// Index of its `TEXT_MESSAGE_START`.
    pub start: usize,
    /// Index of its (last) `TEXT_MESSAGE_END`.
    pub end: Option<usize>,
    /// Its role (`assistant` when the start event has none).
    pub role: String,
    /// Its deltas, joined.
    pub text: String,
}

/// One run.
#[derive(Debug, Default)]
pub struct Run {
    /// Index of the first event of the run.
    pub first: usize,
    /// Index of its `RUN_FINISHED`, if it has one.
    pub finished: Option<usize>,
    /// Its text messages by id.
    pub messages: HashMap<String, Message>,
    /// Message ids in the order they started.
    pub order: Vec<String>,
    /// Citation records its `TOOL_CALL_RESULT`s carried: (event index, record).
    pub records: Vec<(usize, Value)>,
}

/// Splits the events into runs.
pub fn split(events: &[Event]) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for event in events {
        if runs.is_empty() || event.kind == "RUN_STARTED" {
            runs.push(Run { first: event.index, ..Run::default() });
        }
        let run = runs.last_mut().expect("a run was just pushed");
        let id = event.str_field("messageId").map(str::to_string);
        match (event.kind.as_str(), id) {
            ("TEXT_MESSAGE_START", Some(id)) => {
                let role = event.str_field("role").unwrap_or("assistant").to_string();
                let message = Message { start: event.index, end: None, role, text: String::new() };
                if run.messages.insert(id.clone(), message).is_none() {
                    run.order.push(id);
                }
            }
            ("TEXT_MESSAGE_CONTENT", Some(id)) => {
                if let Some(m) = run.messages.get_mut(&id) {
                    m.text.push_str(event.str_field("delta").unwrap_or_default());
                }
            }
            ("TEXT_MESSAGE_END", Some(id)) => {
                if let Some(m) = run.messages.get_mut(&id) {
                    m.end = Some(event.index);
                }
            }
            ("RUN_FINISHED", _) if run.finished.is_none() => run.finished = Some(event.index),
            ("TOOL_CALL_RESULT", _) => {
                for value in parse_content(event.body.get("content")) {
                    collect_records(&value, event.index, &mut run.records);
                }
            }
            _ => {}
        }
    }
    runs
}

/// The run an event index belongs to.
pub fn run_of(runs: &[Run], index: usize) -> Option<usize> {
    runs.iter().rposition(|r| r.first <= index)
}

/// The JSON in a tool result's content: the string parsed, or each content part (its text
/// parsed when it is JSON).
fn parse_content(content: Option<&Value>) -> Vec<Value> {
    match content {
        Some(Value::String(text)) => serde_json::from_str(text.trim()).ok().into_iter().collect(),
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|part| {
                part.get("text")
                    .and_then(Value::as_str)
                    .and_then(|t| serde_json::from_str(t.trim()).ok())
                    .unwrap_or_else(|| part.clone())
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Every citation record (an object with `package`, `node` and `trust` objects) in a value.
fn collect_records(value: &Value, index: usize, out: &mut Vec<(usize, Value)>) {
    match value {
        Value::Object(map) => {
            if super::record::is_record(value) {
                out.push((index, value.clone()));
            } else {
                map.values().for_each(|v| collect_records(v, index, out));
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_records(v, index, out)),
        _ => {}
    }
}
