//! The conversation and its claims, rebuilt from the events.
//!
//! One [`Turn`] per text message (its role, its deltas joined, its id) and one `tool` turn per
//! `TOOL_CALL_RESULT`; the Upperhand citations of a tool result become [`Item`]s of that tool
//! turn. A `CUSTOM` event named `upperhand.citations` (or any `CUSTOM` whose value has a
//! `result` and a citation) yields items too. Messages that only a `MESSAGES_SNAPSHOT` carries
//! (a saved thread replayed without its stream) are read from the snapshot. The shared state
//! (`STATE_SNAPSHOT`, `STATE_DELTA`; [`super::state`]) is followed and the citations it holds
//! are items too.
//!
//! One tool result is one claim however often the stream repeats it: LangGraph, LlamaIndex and
//! CrewAI repeat each tool message in every `MESSAGES_SNAPSHOT` under a new message id, which
//! the streamed `TOOL_CALL_RESULT` shares only its `toolCallId` with. A tool result is known by
//! its `toolCallId` and what it holds (its citations and result), never by its message id
//! alone; a snapshot's other messages by their role and text. A (result, citation) the state
//! holds is one claim however many states show it, and none when a tool result already made
//! the same claim in that stream.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::Event;
use super::state::{State, StateError};
use super::upperhand::{self, Split};
use crate::input::Shown;
use crate::json::canonical;
use crate::transcript::{Finding, Item, Level, Locator, Turn};

/// Rule of a finding about the shared state: a `STATE_DELTA` that cannot be applied, a state
/// event without its state, or a state too large to follow.
pub const RULE_STATE: &str = "ag-ui/state";

/// The CUSTOM event name that carries Upperhand citations.
pub const UPPERHAND_EVENT: &str = "upperhand.citations";

/// The CUSTOM event Pydantic AI (2.78) writes after a model response its output validator
/// rejected: `value.message_id` names the streamed message the user was not given as the answer.
pub const REJECTED_EVENT: &str = "pydantic_ai_model_response_rejected";

/// What [`build`] produces.
#[derive(Debug, Default)]
pub struct Built {
    /// The conversation.
    pub turns: Vec<Turn>,
    /// The claims.
    pub items: Vec<Item>,
    /// `upperhand/conformance` and `ag-ui/state` findings.
    pub findings: Vec<Finding>,
    /// The events whose citations were read: made items, or repeated items already made.
    pub read: HashSet<usize>,
}

/// Walks the events once; `streams` gives each event's stream (fixture), as
/// [`super::chunks::Expanded::streams`] does.
pub fn build(file: &str, events: &[Event], streams: &[usize]) -> Built {
    let mut b = Builder {
        file,
        out: Built::default(),
        by_message: HashMap::new(),
        parents: HashMap::new(),
        seen: HashSet::new(),
        stream: 0,
        turn_texts: HashSet::new(),
        texts_upto: 0,
        turn_streams: Vec::new(),
        results: HashMap::new(),
        by_call: HashMap::new(),
        claims: HashSet::new(),
        state: State::default(),
        from_state: Vec::new(),
        state_keys: HashSet::new(),
        run_start: 0,
    };
    for event in events {
        let stream = streams.get(event.index).copied().unwrap_or_default();
        if stream != b.stream {
            b.end_stream();
            b.stream = stream;
        }
        match event.kind.as_str() {
            "TEXT_MESSAGE_START" => {
                let role = event.str_field("role").unwrap_or("assistant");
                b.open_turn(role, event.str_field("messageId"), "");
            }
            "TEXT_MESSAGE_CONTENT" => {
                let delta = event.str_field("delta").unwrap_or_default();
                match event.str_field("messageId").and_then(|id| b.by_message.get(id)) {
                    Some(&turn) => b.out.turns[turn].text.push_str(delta),
                    None => {
                        b.open_turn("assistant", event.str_field("messageId"), delta);
                    }
                }
            }
            "TOOL_CALL_START" => {
                if let (Some(call), Some(parent)) =
                    (event.str_field("toolCallId"), event.str_field("parentMessageId"))
                {
                    b.parents.insert(call.to_string(), parent.to_string());
                }
            }
            "RUN_STARTED" => {
                b.run_start = b.out.turns.len();
                b.run_input(event);
                if let Some(state) = event.body.pointer("/input/state").filter(|s| s.is_object())
                    && let Err(message) = b.state.seed(state)
                {
                    let locator = b.locator(event, None, "/input/state");
                    b.out.findings.push(Finding::new(locator, RULE_STATE, Level::Must, message.to_string()));
                }
            }
            "TOOL_CALL_RESULT" => b.tool_result(event),
            // The run's text the user was not shown as an answer: an error ends the run, an
            // interrupt pauses it for the user (the resumed run answers).
            "RUN_ERROR" => b.set_aside_run(Shown::Errored),
            "RUN_FINISHED" if interrupted(event) => b.set_aside_run(Shown::Interrupted),
            "CUSTOM" if event.str_field("name") == Some(REJECTED_EVENT) => b.rejected(event),
            "CUSTOM" => b.custom(event),
            "MESSAGES_SNAPSHOT" => b.snapshot(event),
            "STATE_SNAPSHOT" | "STATE_DELTA" => b.state(event),
            _ => {}
        }
    }
    b.end_stream();
    b.out
}

/// A tool result read for a call: its remainder, its citations (canonical JSON) and its turn.
type ReadResult = (String, Vec<String>, usize);

/// Walk state.
struct Builder<'a> {
    file: &'a str,
    out: Built,
    /// Message id → index of its (latest) turn.
    by_message: HashMap<String, usize>,
    /// Tool call id → the message that made the call.
    parents: HashMap<String, String>,
    /// Message ids already seen in the stream (so a snapshot does not repeat them).
    seen: HashSet<String>,
    /// The stream (fixture) of the events being read.
    stream: usize,
    /// (stream, role, text) of the turns up to `texts_upto`, so a snapshot that replays a
    /// message under a new id does not repeat it.
    turn_texts: HashSet<(usize, String, String)>,
    texts_upto: usize,
    /// The stream of each turn.
    turn_streams: Vec<usize>,
    /// Keys of the tool results read (stream, call id, what they hold) → their turn.
    results: HashMap<String, usize>,
    /// (stream, call id) → what each result read for that call held: its remainder, its
    /// citations (canonical JSON) and its turn, so a copy that dropped citations is known.
    by_call: HashMap<(usize, String), Vec<ReadResult>>,
    /// Keys of the claims made from the events ([`claim_key`]), per stream.
    claims: HashSet<String>,
    /// The stream's shared state.
    state: State,
    /// Claims the stream's state holds, first sighting first, made at the end of the stream
    /// unless an event made the same claim; each with the number of turns there were when the
    /// state first showed it, to place it in that exchange ([`Self::state_turn`]).
    from_state: Vec<(String, Item, usize)>,
    /// The keys in `from_state`.
    state_keys: HashSet<String>,
    /// The first turn of the run being read (turns before it belong to earlier runs).
    run_start: usize,
}

impl Builder<'_> {
    fn open_turn(&mut self, role: &str, id: Option<&str>, text: &str) -> usize {
        self.insert_turn(self.out.turns.len(), role, id, text)
    }

    /// Opens a turn at `at` (before the turn now there: a snapshot replays history the stream
    /// did not show), moving every turn index kept so far.
    fn insert_turn(&mut self, at: usize, role: &str, id: Option<&str>, text: &str) -> usize {
        if at < self.out.turns.len() {
            let shift = |t: &mut usize| {
                if *t >= at {
                    *t += 1;
                }
            };
            self.by_message.values_mut().for_each(shift);
            self.results.values_mut().for_each(shift);
            self.by_call.values_mut().flatten().for_each(|(_, _, t)| shift(t));
            // A count of turns: those at `at` or later now start one further on.
            self.from_state.iter_mut().for_each(|(_, _, n)| {
                if *n > at {
                    *n += 1;
                }
            });
            if self.texts_upto > at {
                self.texts_upto += 1;
            }
            if self.run_start > at {
                self.run_start += 1;
            }
        }
        self.turn_streams.insert(at, self.stream);
        self.out.turns.insert(
            at,
            Turn {
                role: role.to_string(),
                text: text.to_string(),
                items: Vec::new(),
                message_id: id.map(str::to_string),
                shown: Shown::Answer,
            },
        );
        if let Some(id) = id {
            self.by_message.insert(id.to_string(), at);
            self.seen.insert(id.to_string());
        }
        at
    }

    fn locator(&self, event: &Event, message_id: Option<String>, pointer: &str) -> Locator {
        Locator {
            file: self.file.to_string(),
            line: event.line,
            event_index: Some(event.index),
            message_id,
            pointer: pointer.to_string(),
            ..Locator::default()
        }
    }

    /// The user's messages a run starts with (`input.messages`), so the report shows the
    /// question before the answer. Messages already seen are not repeated.
    fn run_input(&mut self, event: &Event) {
        let Some(messages) = event.body.pointer("/input/messages").and_then(Value::as_array) else { return };
        for m in messages {
            let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
            let id = m.get("id").and_then(Value::as_str);
            if role != "user" || id.is_some_and(|id| self.seen.contains(id)) {
                continue;
            }
            let text = m.get("content").map(content_text).unwrap_or_default();
            self.open_turn(role, id, &text);
        }
    }

    fn tool_result(&mut self, event: &Event) {
        let content = event.body.get("content").cloned().unwrap_or(Value::Null);
        let id = event.str_field("messageId");
        let call = event.str_field("toolCallId");
        let split = upperhand::split_content(&content, "/content");
        if let Some(original) = self.repeat_of(call, &content, split.as_ref()) {
            self.repeated(event, id, split.as_ref(), original);
            return;
        }
        let turn = self.open_turn("tool", id, &content_text(&content));
        self.note_result(call, &content, split.as_ref(), turn);
        let owner = call.and_then(|call| self.parents.get(call).cloned()).or_else(|| id.map(str::to_string));
        if let Some(split) = split {
            self.add_items(event, turn, owner, split, "/content");
        }
    }

    /// The key of a tool result: its stream, `toolCallId` and what it holds.
    fn result_key(&self, call: Option<&str>, content: &Value, split: Option<&Split>) -> String {
        let held = match split {
            Some(split) => split_key(split),
            None => canonical(content),
        };
        format!("{}\u{0}{}\u{0}{held}", self.stream, call.unwrap_or_default())
    }

    /// The turn of the tool result this one repeats, if it does: the same `toolCallId` and
    /// contents met before in the stream, or (ag-ui-langgraph's `MESSAGES_SNAPSHOT` keeps only
    /// a tool message's first text block) the same call and remainder with some of its
    /// citations dropped. `None` the first time: the result is read.
    fn repeat_of(&self, call: Option<&str>, content: &Value, split: Option<&Split>) -> Option<usize> {
        if let Some(&turn) = self.results.get(&self.result_key(call, content, split)) {
            return Some(turn);
        }
        let (call, split) = (call?, split?);
        let rest = split.rest.as_ref().map(canonical).unwrap_or_default();
        let cited: Vec<String> = split.citations.iter().map(|f| canonical(&f.citation)).collect();
        self.by_call.get(&(self.stream, call.to_string()))?.iter().find_map(|(r, c, turn)| {
            (*r == rest && cited.iter().all(|x| c.contains(x)) && cited.len() < c.len()).then_some(*turn)
        })
    }

    /// Notes a tool result read into `turn`, so its repeats are known ([`Self::repeat_of`]).
    fn note_result(&mut self, call: Option<&str>, content: &Value, split: Option<&Split>, turn: usize) {
        let key = self.result_key(call, content, split);
        self.results.insert(key, turn);
        if let Some(call) = call {
            let (rest, cited) = match split {
                Some(split) => (
                    split.rest.as_ref().map(canonical).unwrap_or_default(),
                    split.citations.iter().map(|f| canonical(&f.citation)).collect(),
                ),
                None => (canonical(content), Vec::new()),
            };
            self.by_call.entry((self.stream, call.to_string())).or_default().push((rest, cited, turn));
        }
    }

    /// A repeated tool result: its message id is known from now on (as the original's turn),
    /// and its citations were read.
    fn repeated(&mut self, event: &Event, id: Option<&str>, split: Option<&Split>, original: usize) {
        if let Some(id) = id {
            self.seen.insert(id.to_string());
            self.by_message.entry(id.to_string()).or_insert(original);
        }
        if split.is_some_and(|s| !s.citations.is_empty()) {
            self.out.read.insert(event.index);
        }
    }

    /// Marks the agent's text of the run being read, not already set aside, as `shown`.
    fn set_aside_run(&mut self, shown: Shown) {
        let stream = self.stream;
        for t in self.run_start..self.out.turns.len() {
            let turn = &mut self.out.turns[t];
            if self.turn_streams.get(t) == Some(&stream) && is_agent(&turn.role) && turn.shown.is_answer() {
                turn.shown = shown;
            }
        }
    }

    /// Pydantic AI's rejected response: the message it names is retracted.
    fn rejected(&mut self, event: &Event) {
        let id = event.body.pointer("/value/message_id").and_then(Value::as_str);
        if let Some(&turn) = id.and_then(|id| self.by_message.get(id)) {
            self.out.turns[turn].shown = Shown::Retracted;
        }
    }

    fn custom(&mut self, event: &Event) {
        let Some(value) = event.body.get("value") else { return };
        let named = event.str_field("name") == Some(UPPERHAND_EVENT);
        if !named && value.get("result").is_none() {
            return;
        }
        let split = upperhand::split(value, "/value");
        if split.citations.is_empty() {
            return;
        }
        let named_message = ["messageId", "toolCallId"]
            .iter()
            .find_map(|k| value.get(*k).and_then(Value::as_str))
            .and_then(|id| self.by_message.get(id).copied());
        let turn = named_message.or(self.out.turns.len().checked_sub(1));
        let owner = value.get("messageId").and_then(Value::as_str).map(str::to_string);
        let mut split = split;
        if let Some(Value::Object(rest)) = &split.rest {
            let keys = ["messageId", "toolCallId", "version"];
            let kept: serde_json::Map<_, _> = rest
                .iter()
                .filter(|(k, _)| !keys.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            split.rest = match kept.get("result") {
                Some(result) if kept.len() == 1 => Some(result.clone()),
                _ if kept.is_empty() => None,
                _ => Some(Value::Object(kept)),
            };
        }
        self.attach(event, turn, owner, split);
    }

    fn snapshot(&mut self, event: &Event) {
        let Some(messages) = event.body.get("messages").and_then(Value::as_array) else { return };
        self.index_texts();
        // A message the stream did not show, before one it did, is history the snapshot
        // replays (CrewAI's user message): its turn goes before that one's, so it does not
        // start an exchange after the tool results it asked for. `next[i]`: the first message
        // after `i` with a turn already.
        let mut next = vec![None; messages.len()];
        for i in (0..messages.len().saturating_sub(1)).rev() {
            next[i] = if self.anchor(&messages[i + 1]).is_some() { Some(i + 1) } else { next[i + 1] };
        }
        for (i, message) in messages.iter().enumerate() {
            let at = next[i].and_then(|j| self.anchor(&messages[j])).unwrap_or(self.out.turns.len());
            let id = message.get("id").and_then(Value::as_str);
            if id.is_some_and(|id| self.seen.contains(id)) {
                if message.get("role").and_then(Value::as_str) == Some("tool") {
                    self.out.read.insert(event.index);
                }
                continue;
            }
            let role = message.get("role").and_then(Value::as_str).unwrap_or("assistant");
            let content = message.get("content").cloned().unwrap_or(Value::Null);
            let pointer = format!("/messages/{i}/content");
            if role == "tool" {
                let call = ["toolCallId", "tool_call_id"]
                    .iter()
                    .find_map(|k| message.get(*k).and_then(Value::as_str));
                let split = upperhand::split_content(&content, &pointer);
                if let Some(original) = self.repeat_of(call, &content, split.as_ref()) {
                    self.repeated(event, id, split.as_ref(), original);
                    continue;
                }
                let turn = self.insert_turn(at, role, id, &content_text(&content));
                self.note_result(call, &content, split.as_ref(), turn);
                if let Some(split) = split {
                    self.add_items(event, turn, id.map(str::to_string), split, &pointer);
                }
                continue;
            }
            let text = content_text(&content);
            if self.turn_texts.contains(&(self.stream, role.to_string(), text.clone())) {
                // The same message replayed under a new id (LlamaIndex mints ids per snapshot).
                if let Some(id) = id {
                    self.seen.insert(id.to_string());
                }
                continue;
            }
            self.insert_turn(at, role, id, &text);
        }
    }

    /// The turn of this stream a snapshot message already has: by its id, or a tool message's
    /// by its call (a copy under a new id).
    fn anchor(&self, message: &Value) -> Option<usize> {
        let by_id = message.get("id").and_then(Value::as_str).and_then(|id| self.by_message.get(id).copied());
        let by_call = || {
            let call = ["toolCallId", "tool_call_id"]
                .iter()
                .find_map(|k| message.get(*k).and_then(Value::as_str))?;
            (message.get("role").and_then(Value::as_str) == Some("tool"))
                .then(|| self.by_call.get(&(self.stream, call.to_string()))?.first().map(|(_, _, t)| *t))
                .flatten()
        };
        by_id.or_else(by_call).filter(|&t| self.turn_streams.get(t) == Some(&self.stream))
    }

    /// Adds the turns opened since the last call to `turn_texts`.
    fn index_texts(&mut self) {
        for (turn, stream) in self.out.turns.iter().zip(&self.turn_streams).skip(self.texts_upto) {
            self.turn_texts.insert((*stream, turn.role.clone(), turn.text.clone()));
        }
        self.texts_upto = self.out.turns.len();
    }

    /// `STATE_SNAPSHOT` / `STATE_DELTA`: the state changes, and the citations it then holds are
    /// noted (made items at the end of the stream, see [`Self::end_stream`]).
    fn state(&mut self, event: &Event) {
        let was_stopped = self.state.stopped();
        let (changed, pointer) = if event.kind == "STATE_SNAPSHOT" {
            match event.body.get("snapshot") {
                Some(snapshot) => (self.state.snapshot(snapshot), "/snapshot"),
                None => (Err(StateError::NoSnapshot), ""),
            }
        } else {
            match event.body.get("delta") {
                Some(delta) if delta.is_array() => (self.state.delta(delta), "state:"),
                // An input/malformed finding already (`missing_field`): the state is unchanged.
                _ => return,
            }
        };
        let read = changed.and_then(|()| self.state.read(pointer));
        let units = match read {
            Ok(units) => units,
            Err(message) => {
                if !was_stopped {
                    let locator = self.locator(event, None, "");
                    self.out.findings.push(Finding::new(
                        locator,
                        RULE_STATE,
                        Level::Must,
                        message.to_string(),
                    ));
                }
                return;
            }
        };
        for split in units {
            if split.citations.is_empty() {
                continue;
            }
            self.out.read.insert(event.index);
            let result = split.rest.filter(|r| !is_empty(r));
            for found in split.citations {
                let item = Item {
                    locator: self.locator(event, None, &found.pointer),
                    result: result.clone(),
                    citation: Some(found.citation),
                    by_shape: found.by_shape,
                };
                let key = claim_key(self.stream, &item);
                if self.state_keys.insert(key.clone()) {
                    self.from_state.push((key, item, self.out.turns.len()));
                }
            }
        }
    }

    /// The end of a stream: the claims its state held that no event made become items (in the
    /// order first shown, each in the turn of its exchange: [`Self::state_turn`]), and the state
    /// starts afresh for the next stream.
    fn end_stream(&mut self) {
        for (key, item, before) in std::mem::take(&mut self.from_state) {
            if !self.claims.contains(&key) {
                let turn = self.state_turn(before);
                self.push_item(turn, item);
            }
        }
        self.state_keys.clear();
        self.state = State::default();
    }

    /// The turn a claim of the state goes in, when the state first showed it after `before`
    /// turns: the turn before (a tool result, the agent's message), or when that is the user's
    /// (or there is none) the first agent or tool turn after it, so the claim is in the exchange
    /// (run) the state event was in and the answer that follows is traced to it. `None` when the
    /// stream has no such turn.
    fn state_turn(&self, before: usize) -> Option<usize> {
        let ours = |t: &usize| self.turn_streams.get(*t) == Some(&self.stream);
        let is_user = |t: usize| self.out.turns[t].role.eq_ignore_ascii_case("user");
        if let Some(last) = before.checked_sub(1).filter(ours)
            && !is_user(last)
        {
            return Some(last);
        }
        (before..self.out.turns.len()).take_while(ours).find(|&t| !is_user(t))
    }

    /// Items for a tool result; a quantitative result without a citation is a finding.
    fn add_items(
        &mut self,
        event: &Event,
        turn: usize,
        owner: Option<String>,
        mut split: Split,
        pointer: &str,
    ) {
        for p in std::mem::take(&mut split.unread) {
            let locator = self.locator(event, owner.clone(), &p.pointer);
            let rule = crate::transcript::embedded::RULE_EMBEDDED.to_string();
            self.out.findings.push(Finding { locator, rule, level: p.level, message: p.message });
        }
        if split.citations.is_empty() {
            let Some(rest) = split.rest.filter(crate::json::is_quantitative) else { return };
            let locator = self.locator(event, owner, pointer);
            self.out.findings.push(Finding {
                locator: locator.clone(),
                rule: "upperhand/conformance".to_string(),
                level: Level::Must,
                message: format!(
                    "tool result states numbers but carries no Upperhand citation ({})",
                    crate::transcript::CITATION_MEDIA_TYPE
                ),
            });
            self.push_item(Some(turn), Item { locator, result: Some(rest), citation: None, by_shape: false });
            return;
        }
        self.attach(event, Some(turn), owner, split);
    }

    fn attach(&mut self, event: &Event, turn: Option<usize>, owner: Option<String>, split: Split) {
        let result = split.rest.filter(|r| !is_empty(r));
        for found in split.citations {
            let item = Item {
                locator: self.locator(event, owner.clone(), &found.pointer),
                result: result.clone(),
                citation: Some(found.citation),
                by_shape: found.by_shape,
            };
            self.push_item(turn, item);
        }
    }

    fn push_item(&mut self, turn: Option<usize>, item: Item) {
        if let Some(at) = item.locator.event_index {
            self.out.read.insert(at);
        }
        self.claims.insert(claim_key(self.stream, &item));
        let index = self.out.items.len();
        self.out.items.push(item);
        if let Some(turn) = turn {
            self.out.turns[turn].items.push(index);
        }
    }
}

/// What a split tool result holds, as a key: its remainder and its citations.
fn split_key(split: &Split) -> String {
    let mut key = split.rest.as_ref().map(canonical).unwrap_or_default();
    for found in &split.citations {
        key.push('\u{1}');
        key.push_str(&canonical(&found.citation));
    }
    key
}

/// The claim an item makes, as a key: its stream, result and citation (not where it was). The
/// result is taken without the one-key wrappers a framework puts around a value it repeats
/// (`{"result": …}` in a tool message, `{"funnel": {…}}` as Strands' `state_from_result` keys
/// it in the state): one tool call, one claim.
fn claim_key(stream: usize, item: &Item) -> String {
    let part = |v: Option<&Value>| v.map(canonical).unwrap_or_default();
    format!("{stream}\u{0}{}\u{0}{}", part(item.result.as_ref().map(unwrapped)), part(item.citation.as_ref()))
}

/// `v` without one-key objects around an object (`{"result": {…}}` is `{…}`); a one-key object
/// around a number (`{"Considered": 0.442}`) is kept, its key naming the measure.
fn unwrapped(mut v: &Value) -> &Value {
    while let Value::Object(o) = v
        && o.len() == 1
        && let Some(inner) = o.values().next().filter(|x| x.is_object())
    {
        v = inner;
    }
    v
}

/// Whether a `RUN_FINISHED` pauses the run for the user: AG-UI 1.0's `outcome: {type:
/// "interrupt", interrupts: [...]}` (and the draft's `outcome: "interrupt"`).
fn interrupted(event: &Event) -> bool {
    match event.body.get("outcome") {
        Some(Value::String(s)) => s == "interrupt",
        Some(o) => o.get("type").and_then(Value::as_str) == Some("interrupt"),
        None => false,
    }
}

/// An agent's role (`assistant`, `agent`, `model`): text the user may be shown as an answer.
fn is_agent(role: &str) -> bool {
    ["assistant", "agent", "model"].iter().any(|r| role.eq_ignore_ascii_case(r))
}

/// A value with nothing in it.
fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(map) => map.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

/// The text of a message's content: the string itself, or its text parts joined.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}
