//! The 1.0 reference client's stream rules (`verifyEvents` in `@ag-ui/client` 1.0.0), applied
//! after CHUNK expansion, with the client's messages word for word.
//!
//! What the client checks: the run lifecycle (first event, nothing after `RUN_ERROR` or
//! `RUN_FINISHED` but a new run); text messages, tool calls, reasoning spans and reasoning
//! messages opened and closed per id; steps per *owner* (the parent run or a subagent) and
//! name; `SUBAGENT_STARTED`/`_FINISHED`/`_ERROR` lifecycle (ids unique per run, a parent
//! subagent started first); every continuation agreeing with the owner (`subagentRunId`) of
//! its opener, owners kept for the whole run and seeded from `MESSAGES_SNAPSHOT` and the
//! `RUN_STARTED` input; and `RUN_FINISHED` only when no step, text message, reasoning message
//! or span, tool call or subagent is open. An explicit `null` reads as the field left out.
//!
//! Deprecated `THINKING_*` events are read as the client's `CompatibilityBoundary` translates
//! them: each `THINKING_START` opens a reasoning span with a fresh id and `THINKING_END` closes
//! it; each `THINKING_TEXT_MESSAGE_START` opens a reasoning message with a fresh id that
//! `_CONTENT` continues and `_END` closes (a fresh, never-opened id when none is open).
//!
//! The client stops at the first breach; recite reports every breach and goes on, so after a
//! breach the state is updated the way that causes the fewest knock-on reports: an event after
//! the run ended is reported and otherwise ignored, an unexpected `RUN_STARTED` starts a new
//! run, a close whose owner disagrees still closes, and a `RUN_FINISHED` with open parts still
//! ends the run. Each fixture is its own stream and starts from a fresh state.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::Event;
use super::chunks::translated;

/// The owner of an entity: `None` is the parent run, `Some(id)` the subagent `id`.
type Owner = Option<String>;

/// A set that remembers insertion order, so lists in messages read as the client prints them.
#[derive(Default)]
struct Ordered(Vec<String>);

impl Ordered {
    fn has(&self, id: &str) -> bool {
        self.0.iter().any(|x| x == id)
    }
    fn add(&mut self, id: &str) {
        if !self.has(id) {
            self.0.push(id.to_string());
        }
    }
    fn delete(&mut self, id: &str) -> bool {
        let before = self.0.len();
        self.0.retain(|x| x != id);
        self.0.len() < before
    }
    fn list(&self) -> String {
        self.0.join(", ")
    }
}

/// Verifier state for one stream.
#[derive(Default)]
struct State {
    first_seen: bool,
    run_started: bool,
    run_finished: bool,
    run_error: bool,
    messages: Ordered,
    tool_calls: Ordered,
    reasoning_spans: Ordered,
    reasoning_messages: Ordered,
    /// Owners per entity kind, kept for the whole run (a continuation may follow the close).
    message_owners: HashMap<String, Owner>,
    tool_call_owners: HashMap<String, Owner>,
    activity_owners: HashMap<String, Owner>,
    reasoning_owners: HashMap<String, Owner>,
    /// Open steps per owner, owners in the order first seen.
    steps: Vec<(Owner, Ordered)>,
    subagents: Ordered,
    closed_subagents: HashSet<String>,
    /// The ids the THINKING_* translation gave the latest span and message.
    thinking_span: Option<String>,
    thinking_message: Option<String>,
    thinking_ids: usize,
}

impl State {
    /// A new run after the previous one ended: everything but the first-event flag and the
    /// THINKING translation (the client's middleware keeps that per connection) starts afresh.
    fn new_run(&mut self) {
        let thinking = (self.thinking_span.take(), self.thinking_message.take(), self.thinking_ids);
        *self = State { first_seen: true, run_started: true, ..State::default() };
        (self.thinking_span, self.thinking_message, self.thinking_ids) = thinking;
    }

    fn steps_of(&mut self, owner: &Owner) -> &mut Ordered {
        if let Some(at) = self.steps.iter().position(|(o, _)| o == owner) {
            return &mut self.steps[at].1;
        }
        self.steps.push((owner.clone(), Ordered::default()));
        &mut self.steps.last_mut().expect("just pushed").1
    }

    fn fresh_thinking_id(&mut self) -> String {
        self.thinking_ids += 1;
        format!("thinking-{}", self.thinking_ids)
    }

    /// The id the client's translation gives a THINKING_* event.
    fn thinking_id(&mut self, kind: &str) -> Option<String> {
        Some(match kind {
            "THINKING_START" => {
                let id = self.fresh_thinking_id();
                self.thinking_span = Some(id.clone());
                id
            }
            "THINKING_TEXT_MESSAGE_START" => {
                let id = self.fresh_thinking_id();
                self.thinking_message = Some(id.clone());
                id
            }
            "THINKING_TEXT_MESSAGE_CONTENT" => match self.thinking_message.clone() {
                Some(id) => id,
                None => self.fresh_thinking_id(),
            },
            "THINKING_TEXT_MESSAGE_END" => match self.thinking_message.take() {
                Some(id) => id,
                None => self.fresh_thinking_id(),
            },
            "THINKING_END" => match self.thinking_span.take() {
                Some(id) => id,
                None => self.fresh_thinking_id(),
            },
            _ => return None,
        })
    }
}

/// Every breach of the stream rules: the event index and the client's reason.
pub fn verify(events: &[Event], streams: &[usize]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut state = State::default();
    let mut current = None;
    for (event, &stream) in events.iter().zip(streams) {
        if current != Some(stream) {
            state = State::default();
            current = Some(stream);
        }
        if let Err(breach) = step(&mut state, event) {
            out.push((event.index, breach.to_string()));
        }
    }
    out
}

/// An event as the verifier reads it: its type after the THINKING_* translation, its body, and
/// the reasoning id the translation gave it.
struct Read<'a> {
    kind: &'a str,
    body: &'a Value,
    /// The reasoning id a THINKING_* event was given.
    thinking_id: Option<String>,
}

impl Read<'_> {
    /// A string field, `undefined` (as the client would print it) when absent.
    fn id(&self, key: &str) -> String {
        if key == "messageId"
            && let Some(id) = &self.thinking_id
        {
            return id.clone();
        }
        self.body.get(key).and_then(Value::as_str).unwrap_or("undefined").to_string()
    }

    /// The owner tag: `None` when absent (a non-string tag reads as absent).
    fn tag(&self) -> Owner {
        self.body.get("subagentRunId").and_then(Value::as_str).map(str::to_string)
    }
}

/// Who an owner is, in the client's words.
fn who(owner: &Owner) -> &str {
    owner.as_deref().unwrap_or("(the parent agent)")
}

/// A continuation's tag must not disagree with its opener's owner; an absent tag never does.
fn tag_error(
    kind: &str,
    tag: &Owner,
    owner: Option<&Owner>,
    entity: &'static str,
    id: &str,
) -> Result<(), Breach> {
    match (tag, owner) {
        (Some(t), Some(o)) if Some(t) != o.as_ref() => Err(Breach::OtherOpener {
            kind: kind.to_string(),
            tag: t.clone(),
            entity,
            id: id.to_string(),
            owner: who(o).to_string(),
        }),
        _ => Ok(()),
    }
}

/// Applies one event; `Err` with the client's message on a breach.
fn step(s: &mut State, event: &Event) -> Result<(), Breach> {
    let thinking_id = s.thinking_id(&event.kind);
    let e = Read { kind: translated(&event.kind), body: &event.body, thinking_id };
    let kind = e.kind;
    if s.run_error && kind != "RUN_STARTED" {
        return Err(Breach::AfterRunError { kind: kind.to_string() });
    }
    if s.run_finished && kind != "RUN_ERROR" && kind != "RUN_STARTED" {
        return Err(Breach::AfterRunFinished { kind: kind.to_string() });
    }
    if !s.first_seen {
        s.first_seen = true;
        if kind != "RUN_STARTED" && kind != "RUN_ERROR" {
            let _ = apply(s, &e);
            return Err(Breach::FirstNotRunStarted);
        }
    } else if kind == "RUN_STARTED" {
        let active = s.run_started && !s.run_finished && !s.run_error;
        s.new_run();
        if active {
            return Err(Breach::RunStillActive);
        }
    }
    fields(&e)?;
    apply(s, &e)
}

/// What the client checks of an event's fields before its type's rules. An explicit `null` on
/// an optional field reads as the field left out (producers write it; see the `explicit-null`
/// tolerance in docs/readers.md), so only values that are present are judged.
fn fields(e: &Read) -> Result<(), Breach> {
    let kind = e.kind;
    if kind.starts_with("SUBAGENT_")
        && let Some(outcome) = e.body.get("outcome").filter(|o| !o.is_null())
    {
        let ty = outcome.get("type").filter(|t| !t.is_null());
        if !matches!(ty.and_then(Value::as_str), Some("success" | "suspended")) {
            let shown = match ty {
                Some(Value::String(t)) => t.clone(),
                Some(other) => other.to_string(),
                None => "undefined".to_string(),
            };
            return Err(Breach::Outcome { kind: kind.to_string(), shown });
        }
        if let Some(Value::Array(ids)) = outcome.get("interruptIds")
            && ids.iter().any(|id| !id.is_string())
        {
            return Err(Breach::InterruptIds { kind: kind.to_string() });
        }
    }
    Ok(())
}

/// Owners seeded from replayed history (`MESSAGES_SNAPSHOT`, authoritative; the `RUN_STARTED`
/// input echo, only for ids not yet known): each message under the bucket its role streams
/// through, and an assistant message's tool calls under the message's owner.
fn seed_owners(s: &mut State, messages: Option<&Value>, authoritative: bool) {
    let Some(messages) = messages.and_then(Value::as_array) else { return };
    for m in messages {
        let Some(id) = m.get("id").and_then(Value::as_str) else { continue };
        let owner: Owner = m.get("subagentRunId").and_then(Value::as_str).map(str::to_string);
        let bucket = match m.get("role").and_then(Value::as_str) {
            Some("reasoning") => &mut s.reasoning_owners,
            Some("activity") => &mut s.activity_owners,
            _ => &mut s.message_owners,
        };
        if authoritative || !bucket.contains_key(id) {
            bucket.insert(id.to_string(), owner.clone());
        }
        for call in m.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
            if let Some(call) = call.get("id").and_then(Value::as_str)
                && (authoritative || !s.tool_call_owners.contains_key(call))
            {
                s.tool_call_owners.insert(call.to_string(), owner.clone());
            }
        }
    }
}

/// The per-type rules.
fn apply(s: &mut State, e: &Read) -> Result<(), Breach> {
    let kind = e.kind;
    let tag = e.tag();
    match kind {
        "TEXT_MESSAGE_START" => {
            let id = e.id("messageId");
            if s.messages.has(&id) {
                return Err(Breach::InProgress {
                    kind: "TEXT_MESSAGE_START",
                    noun: "text message",
                    id,
                    end: "TEXT_MESSAGE_END",
                });
            }
            let existing = s.message_owners.get(&id);
            tag_error(kind, &tag, existing, "message", &id)?;
            if existing.is_none() {
                s.message_owners.insert(id.clone(), tag);
            }
            s.messages.add(&id);
        }
        "TEXT_MESSAGE_CONTENT" | "TEXT_MESSAGE_END" => {
            let id = e.id("messageId");
            if !s.messages.has(&id) {
                return Err(not_started(kind, "TEXT_MESSAGE_END", "text message", "TEXT_MESSAGE_START", &id));
            }
            if kind == "TEXT_MESSAGE_END" {
                s.messages.delete(&id);
            }
            tag_error(kind, &tag, s.message_owners.get(&id), "message", &id)?;
        }
        "TOOL_CALL_START" => tool_call_start(s, e, tag)?,
        "TOOL_CALL_ARGS" | "TOOL_CALL_END" => {
            let id = e.id("toolCallId");
            if !s.tool_calls.has(&id) {
                return Err(not_started(kind, "TOOL_CALL_END", "tool call", "TOOL_CALL_START", &id));
            }
            if kind == "TOOL_CALL_END" {
                s.tool_calls.delete(&id);
            }
            tag_error(kind, &tag, s.tool_call_owners.get(&id), "tool call", &id)?;
        }
        "STEP_STARTED" => {
            let name = e.id("stepName");
            let steps = s.steps_of(&tag);
            if steps.has(&name) {
                let whose = tag.as_ref().map(|t| format!(" in subagent '{t}'")).unwrap_or_default();
                return Err(Breach::StepActive { name, whose });
            }
            steps.add(&name);
        }
        "STEP_FINISHED" => {
            let name = e.id("stepName");
            if !s.steps_of(&tag).delete(&name) {
                let other = s.steps.iter().find(|(o, names)| *o != tag && names.has(&name));
                let attributed = |o: &Owner| match o {
                    Some(id) => format!("subagent '{id}'"),
                    None => "the parent agent".to_string(),
                };
                return Err(match other {
                    Some((o, _)) => {
                        Breach::StepElsewhere { name, by: attributed(&tag), under: attributed(o) }
                    }
                    None => Breach::StepNotStarted { name },
                });
            }
        }
        "ACTIVITY_SNAPSHOT" => {
            let id = e.id("messageId");
            let replacing = e.body.get("replace").and_then(Value::as_bool) != Some(false);
            if !s.activity_owners.contains_key(&id) || replacing {
                s.activity_owners.insert(id, tag);
            }
        }
        "ACTIVITY_DELTA" => {
            let id = e.id("messageId");
            tag_error(kind, &tag, s.activity_owners.get(&id), "activity", &id)?;
        }
        "TOOL_CALL_RESULT" => {
            if let Some(id) = e.body.get("messageId").and_then(Value::as_str) {
                s.message_owners.insert(id.to_string(), tag);
            }
        }
        "REASONING_START" | "REASONING_MESSAGE_START" => {
            let id = e.id("messageId");
            let span = kind == "REASONING_START";
            let open = if span { &s.reasoning_spans } else { &s.reasoning_messages };
            if open.has(&id) {
                return Err(if span {
                    Breach::InProgress {
                        kind: "REASONING_START",
                        noun: "reasoning span",
                        id,
                        end: "REASONING_END",
                    }
                } else {
                    Breach::InProgress {
                        kind: "REASONING_MESSAGE_START",
                        noun: "reasoning message",
                        id,
                        end: "REASONING_MESSAGE_END",
                    }
                });
            }
            let existing = s.reasoning_owners.get(&id);
            tag_error(kind, &tag, existing, "reasoning message", &id)?;
            if existing.is_none() {
                s.reasoning_owners.insert(id.clone(), tag);
            }
            if span { s.reasoning_spans.add(&id) } else { s.reasoning_messages.add(&id) }
        }
        "REASONING_MESSAGE_CONTENT" | "REASONING_MESSAGE_END" | "REASONING_END" => {
            let id = e.id("messageId");
            let span = kind == "REASONING_END";
            let open = if span { &mut s.reasoning_spans } else { &mut s.reasoning_messages };
            if !open.has(&id) {
                return Err(if span {
                    not_started(kind, kind, "reasoning span", "REASONING_START", &id)
                } else {
                    not_started(kind, "", "reasoning message", "REASONING_MESSAGE_START", &id)
                });
            }
            if kind != "REASONING_MESSAGE_CONTENT" {
                open.delete(&id);
            }
            tag_error(kind, &tag, s.reasoning_owners.get(&id), "reasoning message", &id)?;
        }
        "REASONING_ENCRYPTED_VALUE" => {
            let id = e.id("entityId");
            let (owner, entity) = match e.body.get("subtype").and_then(Value::as_str) {
                Some("tool-call") => (s.tool_call_owners.get(&id), "tool call"),
                Some("message") => {
                    (s.message_owners.get(&id).or_else(|| s.reasoning_owners.get(&id)), "message")
                }
                _ => (s.reasoning_owners.get(&id), "reasoning message"),
            };
            tag_error(kind, &tag, owner, entity, &id)?;
        }
        "SUBAGENT_STARTED" => subagent_started(s, e)?,
        "SUBAGENT_FINISHED" | "SUBAGENT_ERROR" => {
            let Some(id) = e.body.get("subagentRunId").and_then(Value::as_str) else {
                return Err(Breach::NoSubagentRunId { kind: kind.to_string() });
            };
            if kind == "SUBAGENT_ERROR" && !e.body.get("message").is_some_and(Value::is_string) {
                return Err(Breach::SubagentErrorWithoutMessage);
            }
            if !s.subagents.delete(id) {
                return Err(Breach::SubagentNotActive { kind: kind.to_string(), id: id.to_string() });
            }
            s.closed_subagents.insert(id.to_string());
        }
        "MESSAGES_SNAPSHOT" => seed_owners(s, e.body.get("messages"), true),
        "RUN_STARTED" => {
            s.run_started = true;
            seed_owners(s, e.body.pointer("/input/messages"), false);
        }
        "RUN_FINISHED" => return finish(s),
        "RUN_ERROR" => s.run_error = true,
        _ => {}
    }
    Ok(())
}

fn tool_call_start(s: &mut State, e: &Read, tag: Owner) -> Result<(), Breach> {
    let id = e.id("toolCallId");
    if s.tool_calls.has(&id) {
        return Err(Breach::InProgress {
            kind: "TOOL_CALL_START",
            noun: "tool call",
            id,
            end: "TOOL_CALL_END",
        });
    }
    // A tool call belongs to the message that carries it: an untagged call inherits its owner.
    let parent = e.body.get("parentMessageId").and_then(Value::as_str);
    let inherited = parent.and_then(|p| s.message_owners.get(p)).cloned();
    if let (Some(parent), Some(parent_owner), Some(t)) = (parent, &inherited, &tag)
        && Some(t) != parent_owner.as_ref()
    {
        return Err(Breach::OtherParentOwner {
            tag: t.clone(),
            parent: parent.to_string(),
            owner: who(parent_owner).to_string(),
        });
    }
    let existing = s.tool_call_owners.get(&id).cloned();
    if let Some(existing) = &existing {
        tag_error("TOOL_CALL_START", &tag, Some(existing), "tool call", &id)?;
        if tag.is_none()
            && let Some(inherited) = &inherited
            && inherited != existing
        {
            return Err(Breach::OwnedUnlikeParent {
                id,
                owner: who(existing).to_string(),
                parent: parent.unwrap_or("undefined").to_string(),
                parent_owner: who(inherited).to_string(),
            });
        }
    }
    s.tool_calls.add(&id);
    if existing.is_none() {
        let owner = if tag.is_some() { tag } else { inherited.unwrap_or_default() };
        s.tool_call_owners.insert(id, owner);
    }
    Ok(())
}

fn subagent_started(s: &mut State, e: &Read) -> Result<(), Breach> {
    let Some(id) = e.body.get("subagentRunId").and_then(Value::as_str) else {
        return Err(Breach::NoSubagentRunId { kind: "SUBAGENT_STARTED".to_string() });
    };
    if !e.body.get("name").is_some_and(Value::is_string) {
        return Err(Breach::SubagentWithoutName);
    }
    if s.subagents.has(id) {
        return Err(Breach::SubagentActive { id: id.to_string() });
    }
    if s.closed_subagents.contains(id) {
        return Err(Breach::SubagentReused { id: id.to_string() });
    }
    if let Some(parent) = e.body.get("parentSubagentRunId").and_then(Value::as_str)
        && !s.subagents.has(parent)
        && !s.closed_subagents.contains(parent)
    {
        return Err(Breach::ParentNotStarted { parent: parent.to_string() });
    }
    s.subagents.add(id);
    Ok(())
}

/// `RUN_FINISHED`: nothing may be open (the client names the first kind it finds open). The run
/// ends either way.
fn finish(s: &mut State) -> Result<(), Breach> {
    let steps: Vec<String> = s
        .steps
        .iter()
        .flat_map(|(owner, names)| {
            names.0.iter().map(move |name| match owner {
                Some(o) => format!("{name} (subagent '{o}')"),
                None => name.clone(),
            })
        })
        .collect();
    let open = if !steps.is_empty() {
        Some(format!("steps are still active: {}", steps.join(", ")))
    } else {
        [
            ("text messages", &s.messages),
            ("reasoning messages", &s.reasoning_messages),
            ("reasoning spans", &s.reasoning_spans),
            ("tool calls", &s.tool_calls),
            ("subagents", &s.subagents),
        ]
        .into_iter()
        .find(|(_, set)| !set.0.is_empty())
        .map(|(what, set)| format!("{what} are still active: {}", set.list()))
    };
    let (first_seen, thinking) =
        (s.first_seen, (s.thinking_span.take(), s.thinking_message.take(), s.thinking_ids));
    *s = State { first_seen, run_started: true, run_finished: true, ..State::default() };
    (s.thinking_span, s.thinking_message, s.thinking_ids) = thinking;
    match open {
        Some(what) => Err(Breach::StillOpen { what }),
        None => Ok(()),
    }
}

/// The reference client's error for a content or end event whose start was never seen (its
/// wording differs between the end event and the content events).
fn not_started(kind: &str, end: &str, noun: &'static str, start: &'static str, id: &str) -> Breach {
    let (kind, id) = (kind.to_string(), id.to_string());
    if kind == end {
        Breach::EndNotStarted { kind, noun, id, start }
    } else {
        Breach::ContentNotStarted { kind, noun, id, start }
    }
}

/// An event the reference client (`@ag-ui/client`'s `verifyEvents`) refuses, in its words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Breach {
    /// A continuation whose subagentRunId disagrees with its opener's owner.
    #[error(
        "Cannot send '{kind}': subagentRunId '{tag}' does not match the {entity} '{id}' opener's subagent '{owner}'."
    )]
    OtherOpener {
        /// The event type.
        kind: String,
        /// Its subagentRunId.
        tag: String,
        /// What it continues ("message", "tool call"…).
        entity: &'static str,
        /// The id it continues.
        id: String,
        /// The opener's owner, in the client's words.
        owner: String,
    },
    /// An event after RUN_ERROR.
    #[error(
        "Cannot send event type '{kind}': The run has already errored with 'RUN_ERROR'. No further events can be sent."
    )]
    AfterRunError {
        /// The event type.
        kind: String,
    },
    /// An event after RUN_FINISHED other than a new run or an error.
    #[error(
        "Cannot send event type '{kind}': The run has already finished with 'RUN_FINISHED'. Start a new run with 'RUN_STARTED'."
    )]
    AfterRunFinished {
        /// The event type.
        kind: String,
    },
    /// A stream that does not open with RUN_STARTED (or RUN_ERROR).
    #[error("First event must be 'RUN_STARTED'")]
    FirstNotRunStarted,
    /// RUN_STARTED while a run is active.
    #[error(
        "Cannot send 'RUN_STARTED' while a run is still active. The previous run must be finished with 'RUN_FINISHED' before starting a new run."
    )]
    RunStillActive,
    /// A subagent outcome that is neither success nor suspended.
    #[error(
        "Cannot send '{kind}' with outcome type '{shown}'. The outcome is either {{ type: \"success\" }} or {{ type: \"suspended\" }}."
    )]
    Outcome {
        /// The event type.
        kind: String,
        /// The outcome's type as the client shows it.
        shown: String,
    },
    /// A non-string interrupt id.
    #[error(
        "Cannot send '{kind}' with a non-string entry in 'outcome.interruptIds'. Interrupt ids are strings."
    )]
    InterruptIds {
        /// The event type.
        kind: String,
    },
    /// A start for an id already open.
    #[error(
        "Cannot send '{kind}' event: A {noun} with ID '{id}' is already in progress. Complete it with '{end}' first."
    )]
    InProgress {
        /// The start event type.
        kind: &'static str,
        /// What it starts.
        noun: &'static str,
        /// The id.
        id: String,
        /// The event that ends it.
        end: &'static str,
    },
    /// An end event for an id never started.
    #[error(
        "Cannot send '{kind}' event: No active {noun} found with ID '{id}'. A '{start}' event must be sent first."
    )]
    EndNotStarted {
        /// The event type.
        kind: String,
        /// What it ends.
        noun: &'static str,
        /// The id.
        id: String,
        /// The event that starts it.
        start: &'static str,
    },
    /// A content event for an id never started.
    #[error(
        "Cannot send '{kind}' event: No active {noun} found with ID '{id}'. Start a {noun} with '{start}' first."
    )]
    ContentNotStarted {
        /// The event type.
        kind: String,
        /// What it continues.
        noun: &'static str,
        /// The id.
        id: String,
        /// The event that starts it.
        start: &'static str,
    },
    /// STEP_STARTED for a step already active (`whose`: ` in subagent '…'` or nothing).
    #[error("Step \"{name}\" is already active for 'STEP_STARTED'{whose}")]
    StepActive {
        /// The step's name.
        name: String,
        /// Whose lane, as the client adds it.
        whose: String,
    },
    /// STEP_FINISHED by another owner than the one that started it.
    #[error(
        "Cannot send 'STEP_FINISHED' for step \"{name}\" attributed to {by}: that step is open under {under}. A step must be finished by whoever started it."
    )]
    StepElsewhere {
        /// The step's name.
        name: String,
        /// The finishing event's owner.
        by: String,
        /// The owner it is open under.
        under: String,
    },
    /// STEP_FINISHED for a step never started.
    #[error("Cannot send 'STEP_FINISHED' for step \"{name}\" that was not started")]
    StepNotStarted {
        /// The step's name.
        name: String,
    },
    /// A SUBAGENT_* event without its subagentRunId.
    #[error("Cannot send '{kind}' without a 'subagentRunId'.")]
    NoSubagentRunId {
        /// The event type.
        kind: String,
    },
    /// SUBAGENT_ERROR without its message.
    #[error("Cannot send 'SUBAGENT_ERROR' without a 'message'.")]
    SubagentErrorWithoutMessage,
    /// A SUBAGENT_FINISHED or _ERROR for a subagent not active.
    #[error(
        "Cannot send '{kind}': no active subagent found with ID '{id}'. A 'SUBAGENT_STARTED' event must be sent first."
    )]
    SubagentNotActive {
        /// The event type.
        kind: String,
        /// The subagentRunId.
        id: String,
    },
    /// A tool call whose subagentRunId disagrees with its parent message's owner.
    #[error(
        "Cannot send 'TOOL_CALL_START': subagentRunId '{tag}' does not match its parent message '{parent}' owner '{owner}'. A tool call belongs to the message that carries it."
    )]
    OtherParentOwner {
        /// The call's subagentRunId.
        tag: String,
        /// The parent message's id.
        parent: String,
        /// Its owner, in the client's words.
        owner: String,
    },
    /// A tool call owned otherwise than the message that carries it.
    #[error(
        "Cannot send 'TOOL_CALL_START': tool call '{id}' is owned by '{owner}' but its parent message '{parent}' is owned by '{parent_owner}'. A tool call belongs to the message that carries it."
    )]
    OwnedUnlikeParent {
        /// The tool call's id.
        id: String,
        /// Its owner.
        owner: String,
        /// The parent message's id (`undefined` when none).
        parent: String,
        /// The parent's owner.
        parent_owner: String,
    },
    /// SUBAGENT_STARTED without a name.
    #[error("Cannot send 'SUBAGENT_STARTED' without a 'name'.")]
    SubagentWithoutName,
    /// SUBAGENT_STARTED for a subagent already active.
    #[error(
        "Cannot send 'SUBAGENT_STARTED': subagent '{id}' is already active. Finish it with 'SUBAGENT_FINISHED' first."
    )]
    SubagentActive {
        /// The subagentRunId.
        id: String,
    },
    /// SUBAGENT_STARTED reusing a finished subagent's id.
    #[error(
        "Cannot send 'SUBAGENT_STARTED': subagent '{id}' has already finished in this run. Subagent IDs are per-invocation and cannot be reused."
    )]
    SubagentReused {
        /// The subagentRunId.
        id: String,
    },
    /// SUBAGENT_STARTED under a parent never started.
    #[error(
        "Cannot send 'SUBAGENT_STARTED': parentSubagentRunId '{parent}' has not been started in this run."
    )]
    ParentNotStarted {
        /// The parentSubagentRunId.
        parent: String,
    },
    /// RUN_FINISHED while something is open (`what`: which, as the client lists them).
    #[error("Cannot send 'RUN_FINISHED' while {what}")]
    StillOpen {
        /// What is still open.
        what: String,
    },
}
