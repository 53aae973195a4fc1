//! From framed JSON values to raw AG-UI event values, each with the line it starts on.
//!
//! The text is split by the shared framing layer ([`crate::transcript::frame`]: SSE, JSON lines
//! or concatenated documents, one JSON array, an array cut short); this stage unpacks what each
//! value holds: an event, an array of events, or `{name, description, stream}` fixtures (alone,
//! in an array, or one per line; `events` is accepted for `stream`). A value that is no event
//! becomes a [`Malformed`] and the rest is still read, because a log cut short by a crashed
//! agent is exactly the log someone wants checked.

use serde_json::Value;

use crate::json::pointer_push;
use crate::transcript::Record;

/// An event value as found on the wire, before CHUNK expansion.
#[derive(Debug, Clone)]
pub struct Raw {
    /// 1-based line where the event starts.
    pub line: Option<usize>,
    /// The event object (always an object with a string `type`).
    pub value: Value,
    /// Which stream the event belongs to: fixtures are separate streams (each verified from a
    /// fresh state); every other form is one stream, numbered 0.
    pub stream: usize,
}

/// Something on the wire that is not an AG-UI event.
#[derive(Debug, Clone)]
pub struct Malformed {
    /// 1-based line where it starts.
    pub line: Option<usize>,
    /// JSON pointer within the value, when the value parsed but an element of it is wrong.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

/// The result of [`unpack`].
#[derive(Debug, Default)]
pub struct Decoded {
    /// The events, in wire order.
    pub values: Vec<Raw>,
    /// What is not an event.
    pub malformed: Vec<Malformed>,
    /// How many fixtures were seen (fixture n's events are stream n).
    fixtures: usize,
}

/// The events of framed records.
pub fn unpack(records: &[Record]) -> Decoded {
    let mut out = Decoded::default();
    for record in records {
        let mut cursor = 0;
        walk(&record.value, record, &mut cursor, &record.pointer, 0, &mut out);
    }
    out
}

/// Turns a value into events: an event object, an array of events or fixtures, or a fixture
/// `{name, stream: [...]}`. `cursor` counts the objects of the record visited so far, in
/// document order, to find each event's line.
fn walk(value: &Value, record: &Record, cursor: &mut usize, pointer: &str, stream: usize, out: &mut Decoded) {
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, record, cursor, &pointer_push(pointer, i), stream, out);
            }
        }
        Value::Object(map) if is_fixture(value) => {
            *cursor += 1;
            out.fixtures += 1;
            let own = out.fixtures;
            let events = fixture_key(value);
            for (key, member) in map {
                if Some(key.as_str()) == events {
                    walk(member, record, cursor, &pointer_push(pointer, key), own, out);
                } else {
                    *cursor += count_objects(member);
                }
            }
        }
        Value::Object(map) if map.get("type").is_some_and(Value::is_string) => {
            out.values.push(Raw { line: Some(record.object_line(*cursor)), value: value.clone(), stream });
            *cursor += count_objects(value);
        }
        other => {
            let line = record.object_line(*cursor);
            *cursor += count_objects(other);
            out.malformed.push(Malformed {
                line: Some(line),
                pointer: pointer.to_string(),
                message: "not an AG-UI event: no string `type`".to_string(),
            });
        }
    }
}

/// A fixture: an object with a `stream` (or `events`) array and no `type` of its own.
fn is_fixture(value: &Value) -> bool {
    value.get("type").is_none() && fixture_key(value).is_some()
}

/// The key of a fixture's event array.
fn fixture_key(value: &Value) -> Option<&'static str> {
    ["stream", "events"].into_iter().find(|k| value.get(*k).is_some_and(Value::is_array))
}

/// How many objects a value holds, itself included.
fn count_objects(value: &Value) -> usize {
    match value {
        Value::Object(map) => 1 + map.values().map(count_objects).sum::<usize>(),
        Value::Array(items) => items.iter().map(count_objects).sum(),
        _ => 0,
    }
}
