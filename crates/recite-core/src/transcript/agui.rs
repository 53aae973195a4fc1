//! AG-UI event logs: SSE captures, JSON lines, JSON arrays and `{name, description, stream}`
//! fixtures, AG-UI 0.x and 1.0.
//!
//! Reading happens in four small stages, one submodule each, so that each can be tested and
//! replaced alone:
//!
//! 1. the shared framing layer ([`mod@crate::transcript::frame`]) turns the text into JSON values,
//!    and `wire` unpacks the events (and fixtures) they hold, with the line each starts on;
//! 2. `chunks` expands `TEXT_MESSAGE_CHUNK`, `TOOL_CALL_CHUNK` and `REASONING_MESSAGE_CHUNK`
//!    exactly as the reference TypeScript client does, so event indices match what a client sees;
//! 3. `verify` applies the reference client's `verifyEvents` rules (`ag-ui/stream`);
//! 4. `turns` rebuilds the conversation, follows the shared state (`state`: `STATE_SNAPSHOT`,
//!    RFC 6902 `STATE_DELTA`) and pairs Upperhand citations with the tool results they
//!    accompany (`upperhand`), each repeated tool result once;
//! 5. an event that holds something citation-shaped (the citations media type, or a `source`
//!    naming a table, column or function) that none of this read is a finding
//!    (`upperhand/unread`), so nothing recite sees is passed over in silence.
//!
//! MOCA `moca.citations` events are kept in [`Document::events`] and checked by
//! [`crate::moca`], which needs the whole run.

use serde::Serialize;
use serde_json::Value;

use super::{Document, Finding, Format, Framed, Level, Locator, RULE_MALFORMED};

mod chunks;
mod state;
mod turns;
pub(crate) mod upperhand;
mod verify;
mod wire;

/// One AG-UI event, as read from a log.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Event {
    /// 0-based index in the log after CHUNK expansion.
    pub index: usize,
    /// 1-based line where the event starts, for line-based logs.
    pub line: Option<usize>,
    /// The event's `type`.
    pub kind: String,
    /// The whole event object.
    pub body: serde_json::Value,
    /// True when the event was synthesized by CHUNK expansion (a `*_START`, `*_CONTENT`/`ARGS`
    /// or `*_END` the producer never sent as such); `line` is then the chunk's line.
    pub synthesized: bool,
}

impl Event {
    /// A string field of the event; an explicit `null` reads as absent.
    pub fn str_field(&self, key: &str) -> Option<&str> {
        self.body.get(key).and_then(Value::as_str)
    }
}

/// The event types AG-UI defines (0.x and 1.0, including the deprecated `THINKING_*` forms).
/// `SUBAGENT_*` (1.0) is matched by prefix in [`is_agui_type`].
pub const EVENT_TYPES: &[&str] = &[
    "RUN_STARTED",
    "RUN_FINISHED",
    "RUN_ERROR",
    "STEP_STARTED",
    "STEP_FINISHED",
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "TEXT_MESSAGE_CHUNK",
    "TOOL_CALL_START",
    "TOOL_CALL_ARGS",
    "TOOL_CALL_END",
    "TOOL_CALL_CHUNK",
    "TOOL_CALL_RESULT",
    "STATE_SNAPSHOT",
    "STATE_DELTA",
    "MESSAGES_SNAPSHOT",
    "ACTIVITY_SNAPSHOT",
    "ACTIVITY_DELTA",
    "REASONING_START",
    "REASONING_END",
    "REASONING_MESSAGE_START",
    "REASONING_MESSAGE_CONTENT",
    "REASONING_MESSAGE_END",
    "REASONING_MESSAGE_CHUNK",
    "REASONING_ENCRYPTED_VALUE",
    "THINKING_START",
    "THINKING_END",
    "THINKING_TEXT_MESSAGE_START",
    "THINKING_TEXT_MESSAGE_CONTENT",
    "THINKING_TEXT_MESSAGE_END",
    "RAW",
    "CUSTOM",
];

/// True for an event type AG-UI defines.
pub fn is_agui_type(kind: &str) -> bool {
    EVENT_TYPES.contains(&kind) || kind.starts_with("SUBAGENT_")
}

/// How much of a file the sniff looks at: enough for the first events of any log.
const SNIFF_BYTES: usize = 64 * 1024;

/// A cheap content sniff: true when the text's first 64 KiB hold a `"type"` whose value is an
/// AG-UI event type, or a `{name, stream: [...]}` fixture. It does not parse the file, so a
/// truncated or partly malformed log is still recognised.
pub fn looks_like_agui(text: &str) -> bool {
    let mut end = text.len().min(SNIFF_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    let mut rest = head;
    while let Some(at) = rest.find("\"type\"") {
        rest = &rest[at + 6..];
        if let Some(value) = string_after_colon(rest)
            && is_agui_type(value)
        {
            return true;
        }
    }
    let trimmed = head.trim_start_matches('\u{feff}').trim_start();
    (trimmed.starts_with('{') || trimmed.starts_with('['))
        && head.contains("\"name\"")
        && head.match_indices("\"stream\"").any(|(at, _)| {
            head[at + 8..].trim_start().strip_prefix(':').is_some_and(|r| r.trim_start().starts_with('['))
        })
}

/// The string literal after `: ` in `rest` (no escapes needed: event types are plain words).
fn string_after_colon(rest: &str) -> Option<&str> {
    let rest = rest.trim_start().strip_prefix(':')?.trim_start().strip_prefix('"')?;
    rest.find('"').map(|end| &rest[..end])
}

/// Reads an AG-UI log. Never fails: a malformed line or event becomes an `input/malformed`
/// finding and reading goes on; stream-rule breaches are `ag-ui/stream` findings; tool results
/// that state numbers without an Upperhand citation are `upperhand/conformance` findings.
pub fn read(file: &str, text: &str) -> Document {
    read_framed(file, crate::transcript::frame(file, text))
}

/// Reads an already framed AG-UI log.
pub(crate) fn read_framed(file: &str, framed: Framed) -> Document {
    let mut findings = framed.findings;
    let decoded = wire::unpack(&framed.records);
    for bad in &decoded.malformed {
        findings.push(malformed(file, bad.line, None, &bad.pointer, &bad.message));
    }
    let expanded = chunks::expand(&decoded.values);
    for event in &expanded.events {
        if let Some(message) = missing_field(event) {
            findings.push(malformed(file, event.line, Some(event.index), "", &message));
        }
    }
    for (index, message) in &expanded.errors {
        findings.push(stream_finding(file, &expanded.events[*index], message.clone()));
    }
    for (index, message) in verify::verify(&expanded.events, &expanded.streams) {
        findings.push(stream_finding(file, &expanded.events[index], message));
    }
    let mut built = turns::build(file, &expanded.events, &expanded.streams);
    findings.append(&mut built.findings);
    let unread = unread(file, &expanded, &built, &findings);
    findings.extend(unread);
    findings.sort_by_key(|f| {
        let at = |n: Option<usize>| n.unwrap_or(usize::MAX);
        (at(f.locator.line), at(f.locator.event_index))
    });
    Document {
        file: file.to_string(),
        format: Format::Agui,
        items: built.items,
        findings,
        turns: built.turns,
        events: expanded.events,
    }
}

/// A finding for each event that holds something citation-shaped none of the readers read:
/// not made a claim (nor repeated one), not already reported as malformed or unconforming.
/// MOCA events are the MOCA checks' ([`crate::moca`]).
///
/// What a framework relays of its own events (a `RAW` event, the `rawEvent` field of any
/// event: ag-ui-langgraph relays every LangChain callback) is not read for claims: it repeats
/// what the AG-UI events carry, in the framework's own shapes. A citation in it that a claim of
/// the same stream makes (compared as canonical JSON, after the same decoding of JSON in
/// strings) is a repeat; any other citation-shaped thing in it is unread, as elsewhere.
fn unread(
    file: &str,
    expanded: &chunks::Expanded,
    built: &turns::Built,
    findings: &[Finding],
) -> Vec<Finding> {
    use std::collections::HashSet;
    let (events, streams) = (&expanded.events, &expanded.streams);
    let stream_of = |index: usize| streams.get(index).copied().unwrap_or_default();
    let reported: HashSet<usize> =
        findings.iter().filter(|f| f.rule != "ag-ui/stream").filter_map(|f| f.locator.event_index).collect();
    let claimed: HashSet<(usize, String)> = built
        .items
        .iter()
        .filter_map(|i| {
            Some((stream_of(i.locator.event_index?), crate::json::canonical(i.citation.as_ref()?)))
        })
        .collect();
    let repeats = |relayed: &Value, stream: usize| {
        relayed_citations(relayed)
            .is_some_and(|found| found.into_iter().all(|c| claimed.contains(&(stream, c))))
    };
    // Some(true) when only what the event relays holds the unread citation.
    let unread_in = |e: &Event| -> Option<bool> {
        let mentions = crate::transcript::mentions_citation;
        if e.kind == "RAW" {
            return (mentions(&e.body) && !repeats(&e.body, stream_of(e.index))).then_some(true);
        }
        let Value::Object(body) = &e.body else { return mentions(&e.body).then_some(false) };
        if body.iter().any(|(k, v)| k != "rawEvent" && mentions(v)) {
            return Some(false);
        }
        body.get("rawEvent").filter(|r| mentions(r) && !repeats(r, stream_of(e.index))).map(|_| true)
    };
    events
        .iter()
        .filter(|e| !built.read.contains(&e.index) && !reported.contains(&e.index))
        .filter(|e| !(e.kind == "CUSTOM" && e.str_field("name").is_some_and(|n| n.starts_with("moca"))))
        .filter_map(|e| unread_in(e).map(|relayed| (e, relayed)))
        .map(|(e, relayed)| Finding {
            locator: Locator {
                file: file.to_string(),
                line: e.line,
                event_index: Some(e.index),
                message_id: e.str_field("messageId").map(str::to_string),
                ..Locator::default()
            },
            rule: crate::transcript::RULE_UNREAD.to_string(),
            // A run's input replays the thread so far: its citations were earlier runs' claims.
            level: if e.kind == "RUN_STARTED" { Level::Note } else { Level::Must },
            message: if e.kind == "RUN_STARTED" {
                "the run's input (the thread so far) holds a citation from an earlier run: it is checked where \
                 that run's log is, not here"
                    .to_string()
            } else if relayed {
                format!(
                    "this {} event relays the framework's own event, which holds a citation (the citations media \
                     type, or a `source` naming a table, column or function) that no claim of this stream makes: \
                     recite does not read relayed payloads, so nothing in it was checked",
                    e.kind
                )
            } else {
                format!(
                    "this {} event holds a citation (the citations media type, or a `source` naming a table, \
                     column or function) that recite could not read or pair with a result: nothing in it was checked",
                    e.kind
                )
            },
        })
        .collect()
}

/// The citations (canonical JSON) a framework's relayed event holds, JSON in strings decoded
/// ([`crate::transcript::embedded`]): each media-typed wrapper's data, each object whose
/// `source` names a table, column or function. `None` when something citation-shaped in it is
/// none of these (then it cannot be a repeat). An empty list never counts as a repeat either:
/// the caller only asks about values that mention a citation.
fn relayed_citations(v: &Value) -> Option<Vec<String>> {
    use crate::json::{declared_media_type, decode_base64_json, is_citation_media_type};
    fn walk(v: &Value, out: &mut Vec<String>) -> bool {
        match v {
            Value::Object(o) if declared_media_type(v).is_some_and(is_citation_media_type) => {
                match o.get("data") {
                    Some(Value::Array(items)) if items.iter().all(Value::is_object) => {
                        out.extend(items.iter().map(crate::json::canonical));
                        true
                    }
                    Some(data @ Value::Object(_)) => {
                        out.push(crate::json::canonical(data));
                        true
                    }
                    Some(_) => false,
                    None => match o.get("raw").and_then(Value::as_str).map(decode_base64_json) {
                        Some(Ok(citation)) => walk(&citation, out) && !out.is_empty(),
                        _ => false,
                    },
                }
            }
            Value::Object(o) => {
                let names_source = o
                    .get("source")
                    .and_then(Value::as_object)
                    .is_some_and(|s| ["table", "column", "function"].iter().any(|k| s.contains_key(*k)));
                if names_source {
                    out.push(crate::json::canonical(v));
                    return true;
                }
                o.values().all(|m| walk(m, out))
            }
            Value::Array(items) => items.iter().all(|m| walk(m, out)),
            Value::String(_) => !crate::transcript::mentions_citation(v),
            _ => true,
        }
    }
    let (decoded, _) = crate::transcript::embedded::decode(v, "");
    let mut out = Vec::new();
    (walk(&decoded, &mut out) && !out.is_empty()).then_some(out)
}

/// An `input/malformed` finding.
fn malformed(
    file: &str,
    line: Option<usize>,
    event_index: Option<usize>,
    pointer: &str,
    message: &str,
) -> Finding {
    Finding {
        locator: Locator {
            file: file.to_string(),
            line,
            event_index,
            pointer: pointer.to_string(),
            ..Locator::default()
        },
        rule: RULE_MALFORMED.to_string(),
        level: Level::Must,
        message: message.to_string(),
    }
}

/// An `ag-ui/stream` finding at an event.
fn stream_finding(file: &str, event: &Event, message: String) -> Finding {
    Finding {
        locator: Locator {
            file: file.to_string(),
            line: event.line,
            event_index: Some(event.index),
            message_id: event.str_field("messageId").map(str::to_string),
            ..Locator::default()
        },
        rule: "ag-ui/stream".to_string(),
        level: Level::Must,
        message,
    }
}

/// The first required field a known event lacks (or has with the wrong type), in words. Only
/// the fields the verifier, the turns and the MOCA checks rely on are required here; unknown
/// types and synthesized events are never checked.
fn missing_field(event: &Event) -> Option<String> {
    if event.synthesized {
        return None;
    }
    let required: &[&str] = match event.kind.as_str() {
        "TEXT_MESSAGE_START" | "TEXT_MESSAGE_END" => &["messageId"],
        "TEXT_MESSAGE_CONTENT" => &["messageId", "delta"],
        "TOOL_CALL_START" => &["toolCallId", "toolCallName"],
        "TOOL_CALL_ARGS" => &["toolCallId", "delta"],
        "TOOL_CALL_END" => &["toolCallId"],
        "TOOL_CALL_RESULT" => &["messageId", "toolCallId"],
        "RUN_STARTED" | "RUN_FINISHED" => &["threadId", "runId"],
        "RUN_ERROR" => &["message"],
        "STEP_STARTED" | "STEP_FINISHED" => &["stepName"],
        "CUSTOM" => &["name"],
        _ => &[],
    };
    let lacking = required.iter().find(|key| event.str_field(key).is_none());
    if let Some(key) = lacking {
        return Some(format!("{} event without a string `{key}`", event.kind));
    }
    if event.kind == "STATE_DELTA" && !event.body.get("delta").is_some_and(Value::is_array) {
        return Some("STATE_DELTA event without an array `delta`".into());
    }
    if event.kind == "TOOL_CALL_RESULT" {
        let content = event.body.get("content");
        if !matches!(content, Some(Value::String(_) | Value::Array(_))) {
            return Some("TOOL_CALL_RESULT event without a string or array `content`".into());
        }
    }
    None
}
