//! The conversation and its claims, rebuilt from the events.
//!
//! One [`Turn`] per text message (its role, its deltas joined, its id) and one `tool` turn per
//! `TOOL_CALL_RESULT`; the Upperhand citations of a tool result become [`Item`]s of that tool
//! turn. A `CUSTOM` event named `upperhand.citations` (or any `CUSTOM` whose value has a
//! `result` and a citation) yields items too. Messages that only a `MESSAGES_SNAPSHOT` carries
//! (a saved thread replayed without its stream) are read from the snapshot.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::Event;
use super::upperhand::{self, Split};
use crate::transcript::{Finding, Item, Level, Locator, Turn};

/// The CUSTOM event name that carries Upperhand citations.
pub const UPPERHAND_EVENT: &str = "upperhand.citations";

/// What [`build`] produces.
#[derive(Debug, Default)]
pub struct Built {
    /// The conversation.
    pub turns: Vec<Turn>,
    /// The claims.
    pub items: Vec<Item>,
    /// `upperhand/conformance` findings.
    pub findings: Vec<Finding>,
}

/// Walks the events once.
pub fn build(file: &str, events: &[Event]) -> Built {
    let mut b = Builder {
        file,
        out: Built::default(),
        by_message: HashMap::new(),
        parents: HashMap::new(),
        seen: HashSet::new(),
    };
    for event in events {
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
            "RUN_STARTED" => b.run_input(event),
            "TOOL_CALL_RESULT" => b.tool_result(event),
            "CUSTOM" => b.custom(event),
            "MESSAGES_SNAPSHOT" => b.snapshot(event),
            _ => {}
        }
    }
    b.out
}

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
}

impl Builder<'_> {
    fn open_turn(&mut self, role: &str, id: Option<&str>, text: &str) -> usize {
        let index = self.out.turns.len();
        self.out.turns.push(Turn {
            role: role.to_string(),
            text: text.to_string(),
            items: Vec::new(),
            message_id: id.map(str::to_string),
        });
        if let Some(id) = id {
            self.by_message.insert(id.to_string(), index);
            self.seen.insert(id.to_string());
        }
        index
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
        let turn = self.open_turn("tool", id, &content_text(&content));
        let owner = event
            .str_field("toolCallId")
            .and_then(|call| self.parents.get(call).cloned())
            .or_else(|| id.map(str::to_string));
        if let Some(split) = upperhand::split_content(&content, "/content") {
            self.add_items(event, turn, owner, split, "/content");
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
        for (i, message) in messages.iter().enumerate() {
            let id = message.get("id").and_then(Value::as_str);
            if id.is_some_and(|id| self.seen.contains(id)) {
                continue;
            }
            let role = message.get("role").and_then(Value::as_str).unwrap_or("assistant");
            let content = message.get("content").cloned().unwrap_or(Value::Null);
            let turn = self.open_turn(role, id, &content_text(&content));
            if role == "tool" {
                let pointer = format!("/messages/{i}/content");
                if let Some(split) = upperhand::split_content(&content, &pointer) {
                    self.add_items(event, turn, id.map(str::to_string), split, &pointer);
                }
            }
        }
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
        let index = self.out.items.len();
        self.out.items.push(item);
        if let Some(turn) = turn {
            self.out.turns[turn].items.push(index);
        }
    }
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
