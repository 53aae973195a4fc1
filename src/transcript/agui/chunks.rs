//! CHUNK expansion, as the reference TypeScript client's `transformChunks` does it.
//!
//! A `TEXT_MESSAGE_CHUNK` opens a message (synthesized `TEXT_MESSAGE_START`, role defaulting to
//! `assistant`) unless one is open with the same id, and carries its delta as a
//! `TEXT_MESSAGE_CONTENT`; `TOOL_CALL_CHUNK` and `REASONING_MESSAGE_CHUNK` work alike. The open
//! chunk stream is closed with a synthesized `*_END` by an id change, by any event of the kinds
//! the client closes on, and (as PROTOCOLS.md says) by the end of the stream. `RAW`,
//! `ACTIVITY_*`, `REASONING_ENCRYPTED_VALUE` and unknown types pass through without closing.
//! Expanding here, before anything else, makes event indices the ones a client sees.

use serde_json::{Map, Value};

use super::Event;
use super::wire::Raw;

/// The event types before which the client closes an open chunk stream.
const CLOSING: &[&str] = &[
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "TOOL_CALL_START",
    "TOOL_CALL_ARGS",
    "TOOL_CALL_END",
    "TOOL_CALL_RESULT",
    "STATE_SNAPSHOT",
    "STATE_DELTA",
    "MESSAGES_SNAPSHOT",
    "CUSTOM",
    "RUN_STARTED",
    "RUN_FINISHED",
    "RUN_ERROR",
    "STEP_STARTED",
    "STEP_FINISHED",
    "THINKING_START",
    "THINKING_END",
    "THINKING_TEXT_MESSAGE_START",
    "THINKING_TEXT_MESSAGE_CONTENT",
    "THINKING_TEXT_MESSAGE_END",
    "REASONING_START",
    "REASONING_MESSAGE_START",
    "REASONING_MESSAGE_CONTENT",
    "REASONING_MESSAGE_END",
    "REASONING_END",
];

/// The events after expansion.
#[derive(Debug, Default)]
pub struct Expanded {
    /// Every event, indexed in order.
    pub events: Vec<Event>,
    /// The stream (fixture) of each event, parallel to `events`.
    pub streams: Vec<usize>,
    /// Chunks the client would reject (a first chunk without its id): the event index of the
    /// chunk, kept as it was, and why.
    pub errors: Vec<(usize, String)>,
}

/// The three kinds of chunk stream.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Tool,
    Reasoning,
}

impl Kind {
    fn of(event_type: &str) -> Option<Self> {
        match event_type {
            "TEXT_MESSAGE_CHUNK" => Some(Kind::Text),
            "TOOL_CALL_CHUNK" => Some(Kind::Tool),
            "REASONING_MESSAGE_CHUNK" => Some(Kind::Reasoning),
            _ => None,
        }
    }

    /// The id field, and the types of the start, content and end events.
    fn names(self) -> (&'static str, [&'static str; 3]) {
        match self {
            Kind::Text => ("messageId", ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]),
            Kind::Tool => ("toolCallId", ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]),
            Kind::Reasoning => (
                "messageId",
                ["REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END"],
            ),
        }
    }
}

/// Expands CHUNK events into start/content/end events.
pub fn expand(raws: &[Raw]) -> Expanded {
    let mut state = State::default();
    for raw in raws {
        if state.stream != Some(raw.stream) {
            state.close(raw.line);
            state.stream = Some(raw.stream);
        }
        let kind = raw.value.get("type").and_then(Value::as_str).unwrap_or_default();
        if let Some(chunk) = Kind::of(kind) {
            state.chunk(chunk, raw);
        } else {
            if CLOSING.contains(&kind) {
                state.close(raw.line);
            }
            state.push(raw.value.clone(), raw.line, false);
        }
    }
    let last_line = raws.last().and_then(|r| r.line);
    state.close(last_line);
    state.out
}

/// The open chunk stream and what has been produced.
#[derive(Default)]
struct State {
    out: Expanded,
    stream: Option<usize>,
    open: Option<(Kind, String)>,
}

impl State {
    fn push(&mut self, body: Value, line: Option<usize>, synthesized: bool) {
        let kind = body.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
        self.out.events.push(Event { index: self.out.events.len(), line, kind, body, synthesized });
        self.out.streams.push(self.stream.unwrap_or_default());
    }

    /// Closes the open chunk stream, if any, with a synthesized end event.
    fn close(&mut self, line: Option<usize>) {
        if let Some((kind, id)) = self.open.take() {
            let (id_field, [_, _, end]) = kind.names();
            let body = object(&[("type", end.into()), (id_field, id.into())]);
            self.push(body, line, true);
        }
    }

    fn chunk(&mut self, kind: Kind, raw: &Raw) {
        let (id_field, [start, content, _]) = kind.names();
        let body = &raw.value;
        let field = |key: &str| body.get(key).and_then(Value::as_str).map(str::to_string);
        let id = field(id_field);
        let same =
            matches!(&self.open, Some((k, open)) if *k == kind && id.as_ref().is_none_or(|i| i == open));
        if !same {
            self.close(raw.line);
            let Some(id) = id else {
                let name = body["type"].as_str().unwrap_or_default();
                let message = format!("First {name} must have a {id_field}");
                self.out.errors.push((self.out.events.len(), message));
                self.push(body.clone(), raw.line, false);
                return;
            };
            if kind == Kind::Tool && field("toolCallName").is_none() {
                let message = "First TOOL_CALL_CHUNK must have a toolCallName".to_string();
                self.out.errors.push((self.out.events.len(), message));
                self.push(body.clone(), raw.line, false);
                return;
            }
            let mut fields = vec![("type", Value::from(start)), (id_field, Value::from(id.clone()))];
            match kind {
                Kind::Text => {
                    let role = field("role").unwrap_or_else(|| "assistant".to_string());
                    fields.push(("role", role.into()));
                    if let Some(name) = field("name") {
                        fields.push(("name", name.into()));
                    }
                }
                Kind::Tool => {
                    fields.push(("toolCallName", field("toolCallName").into()));
                    if let Some(parent) = field("parentMessageId") {
                        fields.push(("parentMessageId", parent.into()));
                    }
                }
                Kind::Reasoning => {}
            }
            self.push(with_metadata(object(&fields), body), raw.line, true);
            self.open = Some((kind, id));
        }
        let open_id = self.open.as_ref().map(|(_, id)| id.clone()).unwrap_or_default();
        let before = self.out.events.len();
        if let Some(delta) = field("delta") {
            let fields =
                [("type", content.into()), (id_field, open_id.clone().into()), ("delta", delta.into())];
            self.push(with_metadata(object(&fields), body), raw.line, true);
        }
        if same && self.out.events.len() == before && body.get("metadata").is_some() {
            let fields = [("type", content.into()), (id_field, open_id.into()), ("delta", "".into())];
            self.push(with_metadata(object(&fields), body), raw.line, true);
        }
    }
}

/// An object from key/value pairs, in order.
fn object(fields: &[(&str, Value)]) -> Value {
    Value::Object(fields.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<Map<_, _>>())
}

/// Copies a chunk's `metadata` onto an event synthesized from it, as the client does.
fn with_metadata(mut event: Value, chunk: &Value) -> Value {
    if let (Some(meta), Value::Object(map)) = (chunk.get("metadata"), &mut event)
        && !meta.is_null()
    {
        map.insert("metadata".to_string(), meta.clone());
    }
    event
}
