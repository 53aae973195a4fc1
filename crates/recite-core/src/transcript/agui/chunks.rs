//! CHUNK expansion, as the 1.0 reference client's `transformChunks` does it.
//!
//! Chunk streams are kept per *owner* (one lane for the parent run, one per `subagentRunId`), so
//! a subagent's chunks neither close nor continue the parent's. A `TEXT_MESSAGE_CHUNK` opens a
//! message in its lane (synthesized `TEXT_MESSAGE_START`, role defaulting to `assistant`)
//! unless the lane's open message has the same id, and carries its delta as a
//! `TEXT_MESSAGE_CONTENT`; `TOOL_CALL_CHUNK` and `REASONING_MESSAGE_CHUNK` work alike. A lane is
//! closed with a synthesized `*_END` by an id change in it, by an event of its owner of the kinds
//! the client closes on, by `SUBAGENT_FINISHED`/`_ERROR` of its subagent, and every lane by
//! `RUN_*` and `MESSAGES_SNAPSHOT`. recite also closes them at the end of a stream (the client
//! drops them silently), which adds events only after the last one a client sees. `RAW`,
//! `ACTIVITY_*`, `REASONING_ENCRYPTED_VALUE`, `SUBAGENT_STARTED` and unknown types pass through.
//! Deprecated `THINKING_*` events close lanes as the `REASONING_*` events the client translates
//! them to. Expanding here, before anything else, makes event indices the ones a client sees.

use serde_json::{Map, Value};

use super::Event;
use super::wire::Raw;

/// The event types before which the client closes the open chunk stream of the event's owner.
const CLOSING_OWN: &[&str] = &[
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "TOOL_CALL_START",
    "TOOL_CALL_ARGS",
    "TOOL_CALL_END",
    "TOOL_CALL_RESULT",
    "STATE_SNAPSHOT",
    "STATE_DELTA",
    "CUSTOM",
    "STEP_STARTED",
    "STEP_FINISHED",
    "REASONING_START",
    "REASONING_MESSAGE_START",
    "REASONING_MESSAGE_CONTENT",
    "REASONING_MESSAGE_END",
    "REASONING_END",
];

/// The event types before which the client closes every open chunk stream.
const CLOSING_ALL: &[&str] = &["RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "MESSAGES_SNAPSHOT"];

/// The `REASONING_*` type the 1.0 client translates a deprecated `THINKING_*` type to.
pub fn translated(kind: &str) -> &str {
    match kind {
        "THINKING_START" => "REASONING_START",
        "THINKING_END" => "REASONING_END",
        "THINKING_TEXT_MESSAGE_START" => "REASONING_MESSAGE_START",
        "THINKING_TEXT_MESSAGE_CONTENT" => "REASONING_MESSAGE_CONTENT",
        "THINKING_TEXT_MESSAGE_END" => "REASONING_MESSAGE_END",
        other => other,
    }
}

/// The events after expansion.
#[derive(Debug, Default)]
pub struct Expanded {
    /// Every event, indexed in order.
    pub events: Vec<Event>,
    /// The stream (fixture) of each event, parallel to `events`.
    pub streams: Vec<usize>,
    /// Chunks the client would reject (a first chunk without its id, a chunk that disagrees
    /// with its stream's opener, a chunk that could belong to several lanes): the event index of
    /// the chunk, kept as it was, and why.
    pub errors: Vec<(usize, String)>,
}

/// The three kinds of chunk stream.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
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

    /// The chunk's type and the entity in words, for messages.
    fn words(self) -> (&'static str, &'static str) {
        match self {
            Kind::Text => ("TEXT_MESSAGE_CHUNK", "text message"),
            Kind::Tool => ("TOOL_CALL_CHUNK", "tool call"),
            Kind::Reasoning => ("REASONING_MESSAGE_CHUNK", "reasoning message"),
        }
    }
}

/// A chunk the reference client (`@ag-ui/client`) stops on, in its words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChunkError {
    /// A chunk naming a subagent other than the one whose stream it continues.
    #[error(
        "Cannot continue {entity} '{id}': chunk subagentRunId '{tag}' does not match the open stream's subagent '{owner}'."
    )]
    OtherSubagent {
        /// "text message", "tool call", "reasoning message".
        entity: &'static str,
        /// The stream's id.
        id: String,
        /// The chunk's subagentRunId.
        tag: String,
        /// The open stream's owner.
        owner: String,
    },
    /// A chunk with no id and no subagent while several lanes have a stream open.
    #[error(
        "Ambiguous {chunk_type}: it carries neither a {id_field} nor a subagentRunId, but {lanes} lanes have an open {entity}. Attribute the chunk to the subagent it belongs to."
    )]
    Ambiguous {
        /// The chunk's event type.
        chunk_type: &'static str,
        /// `messageId` or `toolCallId`.
        id_field: &'static str,
        /// Lanes with a stream open.
        lanes: usize,
        /// "text message", "tool call", "reasoning message".
        entity: &'static str,
    },
    /// A chunk whose field disagrees with the stream's opener.
    #[error(
        "Cannot continue {entity} '{id}': chunk {field} '{incoming}' does not match the open stream's {field} {established}."
    )]
    OtherField {
        /// "text message", "tool call", "reasoning message".
        entity: &'static str,
        /// The stream's id.
        id: String,
        /// The field.
        field: &'static str,
        /// The chunk's value.
        incoming: String,
        /// The opener's, quoted, or `(absent)`.
        established: String,
    },
    /// The first chunk of a stream without its id.
    #[error("First {chunk_type} must have a {id_field}")]
    NoId {
        /// The chunk's event type.
        chunk_type: &'static str,
        /// `messageId` or `toolCallId`.
        id_field: &'static str,
    },
    /// The first tool call chunk without its name.
    #[error("First TOOL_CALL_CHUNK must have a toolCallName")]
    NoToolName,
}

/// An open chunk stream: its kind, id, and the opener's fields later chunks must agree with.
#[derive(Debug, Clone)]
struct Pending {
    kind: Kind,
    id: String,
    /// `role`/`name` of a text message, `toolCallName`/`parentMessageId` of a tool call.
    fields: Vec<(&'static str, Option<String>)>,
    /// The opener's `subagentRunId`.
    tag: Option<Value>,
}

/// Expands CHUNK events into start/content/end events.
pub fn expand(raws: &[Raw]) -> Expanded {
    let mut state = State::default();
    for raw in raws {
        if state.stream != Some(raw.stream) {
            state.close_all(raw.line);
            state.stream = Some(raw.stream);
        }
        let kind = raw.value.get("type").and_then(Value::as_str).unwrap_or_default();
        if let Some(chunk) = Kind::of(kind) {
            let before = state.out.events.len();
            if let Err(message) = state.chunk(chunk, raw) {
                // The client stops here; recite reports it, keeps the chunk as it was, goes on.
                state.out.events.truncate(before);
                state.out.errors.push((state.out.events.len(), message.to_string()));
                state.push(raw.value.clone(), raw.line, false);
            }
            continue;
        }
        let kind = translated(kind);
        if CLOSING_ALL.contains(&kind) {
            state.close_all(raw.line);
        } else if CLOSING_OWN.contains(&kind) {
            state.close(&owner(&raw.value), raw.line);
        } else if matches!(kind, "SUBAGENT_FINISHED" | "SUBAGENT_ERROR")
            && let Some(Value::String(id)) = raw.value.get("subagentRunId")
        {
            state.close(&Some(id.clone()), raw.line);
        }
        state.push(raw.value.clone(), raw.line, false);
    }
    let last_line = raws.last().and_then(|r| r.line);
    state.close_all(last_line);
    state.out
}

/// The owner an event names: its `subagentRunId`, `None` (the parent run) when absent or null.
fn owner(event: &Value) -> Option<String> {
    event.get("subagentRunId").and_then(Value::as_str).map(str::to_string)
}

/// A string field; an explicit `null` reads as absent.
fn text_field(event: &Value, key: &str) -> Option<String> {
    event.get(key).and_then(Value::as_str).map(str::to_string)
}

/// A field that is present and not `null`.
fn present<'a>(event: &'a Value, key: &str) -> Option<&'a Value> {
    event.get(key).filter(|v| !v.is_null())
}

/// The open chunk streams, one lane per owner in the order opened, and what has been produced.
#[derive(Default)]
struct State {
    out: Expanded,
    stream: Option<usize>,
    lanes: Vec<(Option<String>, Pending)>,
}

impl State {
    fn push(&mut self, body: Value, line: Option<usize>, synthesized: bool) {
        let kind = body.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
        self.out.events.push(Event { index: self.out.events.len(), line, kind, body, synthesized });
        self.out.streams.push(self.stream.unwrap_or_default());
    }

    /// Closes the open chunk stream of `lane`, if any, with a synthesized end event.
    fn close(&mut self, lane: &Option<String>, line: Option<usize>) {
        let Some(at) = self.lanes.iter().position(|(owner, _)| owner == lane) else { return };
        let (_, pending) = self.lanes.remove(at);
        let (id_field, [_, _, end]) = pending.kind.names();
        let mut fields = vec![("type", Value::from(end)), (id_field, Value::from(pending.id))];
        if let Some(tag) = pending.tag {
            fields.push(("subagentRunId", tag));
        }
        self.push(object(fields), line, true);
    }

    fn close_all(&mut self, line: Option<usize>) {
        while let Some((owner, _)) = self.lanes.first() {
            let owner = owner.clone();
            self.close(&owner, line);
        }
    }

    fn lane(&self, owner: &Option<String>) -> Option<&Pending> {
        self.lanes.iter().find(|(o, _)| o == owner).map(|(_, p)| p)
    }

    /// The lane a chunk belongs to, as the client's `resolveLane` finds it.
    fn resolve_lane(
        &self,
        kind: Kind,
        id: Option<&str>,
        tag: Option<String>,
    ) -> Result<Option<String>, ChunkError> {
        let (chunk_type, entity) = kind.words();
        if let Some(id) = id {
            let holder = self.lanes.iter().find(|(_, p)| p.kind == kind && p.id == id);
            return match holder {
                Some((owner, _)) if tag.is_some() && tag != *owner => Err(ChunkError::OtherSubagent {
                    entity,
                    id: id.to_string(),
                    tag: tag.unwrap_or_default(),
                    owner: owner.as_deref().unwrap_or("(the parent agent)").to_string(),
                }),
                Some((owner, _)) => Ok(owner.clone()),
                None => Ok(tag),
            };
        }
        if tag.is_some() {
            return Ok(tag);
        }
        if self.lane(&None).is_some_and(|p| p.kind == kind) {
            return Ok(None);
        }
        let candidates: Vec<_> = self.lanes.iter().filter(|(_, p)| p.kind == kind).collect();
        match candidates.as_slice() {
            [] => Ok(None),
            [(owner, _)] => Ok(owner.clone()),
            many => {
                Err(ChunkError::Ambiguous { chunk_type, id_field: kind.names().0, lanes: many.len(), entity })
            }
        }
    }

    fn chunk(&mut self, kind: Kind, raw: &Raw) -> Result<(), ChunkError> {
        let (id_field, [start, content, _]) = kind.names();
        let (chunk_type, entity) = kind.words();
        let body = &raw.value;
        let id = text_field(body, id_field);
        let raw_tag = present(body, "subagentRunId").cloned();
        let lane = self.resolve_lane(kind, id.as_deref(), owner(body))?;
        let continuing =
            self.lane(&lane).filter(|p| p.kind == kind && id.as_ref().is_none_or(|i| *i == p.id));
        let mut produced = false;
        let (open_id, open_tag) = if let Some(open) = continuing {
            for (field, established) in &open.fields {
                if let Some(incoming) = text_field(body, field)
                    && Some(&incoming) != established.as_ref()
                {
                    let established =
                        established.as_ref().map_or("(absent)".to_string(), |e| format!("'{e}'"));
                    return Err(ChunkError::OtherField {
                        entity,
                        id: open.id.clone(),
                        field,
                        incoming,
                        established,
                    });
                }
            }
            (open.id.clone(), open.tag.clone())
        } else {
            let Some(id) = id else {
                return Err(ChunkError::NoId { chunk_type, id_field });
            };
            if kind == Kind::Tool && text_field(body, "toolCallName").is_none() {
                return Err(ChunkError::NoToolName);
            }
            self.close(&lane, raw.line);
            let mut event = vec![("type", Value::from(start)), (id_field, Value::from(id.clone()))];
            let mut fields = Vec::new();
            match kind {
                Kind::Text => {
                    let role = text_field(body, "role").unwrap_or_else(|| "assistant".to_string());
                    event.push(("role", role.clone().into()));
                    fields.push(("role", Some(role)));
                    let name = text_field(body, "name");
                    if let Some(name) = &name {
                        event.push(("name", name.clone().into()));
                    }
                    fields.push(("name", name));
                }
                Kind::Tool => {
                    let name = text_field(body, "toolCallName");
                    event.push(("toolCallName", name.clone().into()));
                    fields.push(("toolCallName", name));
                    let parent = text_field(body, "parentMessageId");
                    if let Some(parent) = &parent {
                        event.push(("parentMessageId", parent.clone().into()));
                    }
                    fields.push(("parentMessageId", parent));
                }
                Kind::Reasoning => event.push(("role", "reasoning".into())),
            }
            if let Some(tag) = &raw_tag {
                event.push(("subagentRunId", tag.clone()));
            }
            self.push(with_origin(object(event), body, false), raw.line, true);
            produced = true;
            self.lanes.push((lane, Pending { kind, id: id.clone(), fields, tag: raw_tag.clone() }));
            (id, raw_tag.clone())
        };
        // A chunk's own tag wins over the opener's for the event it becomes.
        let tag = raw_tag.or(open_tag);
        let with_tag = |mut event: Vec<(&'static str, Value)>| {
            if let Some(tag) = &tag {
                event.push(("subagentRunId", tag.clone()));
            }
            event
        };
        let delta = present(body, "delta").cloned();
        if delta.is_some() || present(body, "rawEvent").is_some() {
            let event = with_tag(vec![
                ("type", content.into()),
                (id_field, open_id.clone().into()),
                ("delta", delta.unwrap_or_else(|| "".into())),
            ]);
            self.push(with_origin(object(event), body, true), raw.line, true);
        } else if !produced && present(body, "metadata").is_some() {
            let event =
                with_tag(vec![("type", content.into()), (id_field, open_id.into()), ("delta", "".into())]);
            self.push(with_origin(object(event), body, true), raw.line, true);
        }
        Ok(())
    }
}

/// An object from key/value pairs, in order.
fn object(fields: Vec<(&str, Value)>) -> Value {
    Value::Object(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect::<Map<_, _>>())
}

/// Copies a chunk's `metadata` (and, for content events, its `rawEvent`) onto an event
/// synthesized from it, as the client does.
fn with_origin(mut event: Value, chunk: &Value, raw_event: bool) -> Value {
    if let Value::Object(map) = &mut event {
        if let Some(meta) = present(chunk, "metadata") {
            map.insert("metadata".to_string(), meta.clone());
        }
        if raw_event && let Some(raw) = present(chunk, "rawEvent") {
            map.insert("rawEvent".to_string(), raw.clone());
        }
    }
    event
}
