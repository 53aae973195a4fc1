//! The shared state of an AG-UI run: `STATE_SNAPSHOT` replaces it, `STATE_DELTA` patches it
//! (RFC 6902, applied with the `json-patch` crate as the reference client applies it with
//! `fast-json-patch`), and the Upperhand citations it holds are claims like a tool result's.
//!
//! A delta is applied whole or not at all: one failed operation leaves the state as it was (as
//! RFC 6902 §5 says and the client does) and is a finding at the delta's event. The state is
//! read after every event that changed it, so a citation shown only for a while is still read;
//! the same (result, citation) shown in many states is one claim ([`super::turns`] keeps the
//! first). `copy` is the one operation that can make the state larger than the log (a delta of
//! copies doubles it at each step), so the values copied in one stream are bounded; reading the
//! state after each change is bounded too, and past either bound the state is not followed and
//! a finding says from which event.

use std::borrow::Cow;

use serde_json::Value;

use super::upperhand::{self, Split};
use crate::json::{declared_media_type, is_citation_media_type, looks_like_citation, pointer_push};

/// Values (JSON nodes) `copy` operations may copy in one stream, in all.
pub const MAX_COPIED: usize = 1 << 18;

/// Values (JSON nodes) read while following one stream's state, in all: the state is copied and
/// read after each change, so a large state patched many times costs its size each time.
pub const MAX_WORK: usize = 1 << 25;

/// Bytes of a string in the state that is tried as embedded JSON (a tool message's content).
const MAX_EMBEDDED: usize = 1 << 20;

/// One stream's state, as followed so far: an empty object at first, as the reference client
/// starts from.
#[derive(Debug)]
pub struct State {
    value: Value,
    copied: usize,
    work: usize,
    /// Set once a bound was passed: the state is no longer followed.
    stopped: bool,
}

impl Default for State {
    fn default() -> Self {
        State { value: Value::Object(serde_json::Map::new()), copied: 0, work: 0, stopped: false }
    }
}

impl State {
    /// A run's input state (`RUN_STARTED`'s `input.state`): what the run's deltas patch. Not read
    /// for claims here: it is the thread's state from earlier runs.
    pub fn seed(&mut self, state: &Value) -> Result<(), StateError> {
        if self.stopped {
            return Ok(());
        }
        self.charge(nodes(state))?;
        self.value = state.clone();
        Ok(())
    }

    /// The state now.
    #[cfg(test)]
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// True once a bound was passed (the finding was given when it was).
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// `STATE_SNAPSHOT`: the state becomes `snapshot`.
    pub fn snapshot(&mut self, snapshot: &Value) -> Result<(), StateError> {
        if self.stopped {
            return Ok(());
        }
        self.charge(nodes(snapshot))?;
        self.value = snapshot.clone();
        Ok(())
    }

    /// `STATE_DELTA`: applies `delta`, an array of RFC 6902 operations, whole or not at all.
    /// The error says which operation failed and why; the state is then unchanged.
    pub fn delta(&mut self, delta: &Value) -> Result<(), StateError> {
        if self.stopped {
            return Ok(());
        }
        let ops: Vec<json_patch::PatchOperation> = match delta {
            Value::Array(_) => {
                serde_json::from_value(delta.clone()).map_err(|e| StateError::NotAPatch(e.to_string()))?
            }
            other => return Err(StateError::NotAnArray(crate::json::type_name(other))),
        };
        self.charge(nodes(&self.value))?;
        let mut next = self.value.clone();
        for (i, op) in ops.iter().enumerate() {
            if let json_patch::PatchOperation::Copy(copy) = op {
                let size = next.pointer(copy.from.as_str()).map_or(0, nodes);
                self.copied = self.copied.saturating_add(size);
                if self.copied > MAX_COPIED {
                    self.stopped = true;
                    return Err(StateError::CopiedTooMuch { operation: i });
                }
            }
            if let Err(e) = json_patch::patch(&mut next, std::slice::from_ref(op)) {
                return Err(StateError::OperationFailed {
                    operation: i,
                    op: op_name(op),
                    path: e.path.to_string(),
                    why: e.kind.to_string(),
                });
            }
        }
        self.value = next;
        Ok(())
    }

    /// The citations the state holds now, each with the result beside it (see [`units`]).
    pub fn read(&mut self, pointer: &str) -> Result<Vec<Split>, StateError> {
        if self.stopped {
            return Ok(Vec::new());
        }
        self.charge(nodes(&self.value))?;
        let mut out = Vec::new();
        units(&self.value, pointer, &mut out);
        Ok(out)
    }

    fn charge(&mut self, work: usize) -> Result<(), StateError> {
        self.work = self.work.saturating_add(work);
        if self.work > MAX_WORK {
            self.stopped = true;
            return Err(StateError::ReadTooMuch);
        }
        Ok(())
    }
}

/// Why a state change was not followed: each is a finding on the event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// `STATE_SNAPSHOT` without its `snapshot`.
    #[error("STATE_SNAPSHOT event without a `snapshot`")]
    NoSnapshot,
    /// A `delta` array that is not a JSON Patch (serde's words).
    #[error("`delta` is not an RFC 6902 JSON Patch ({0}); the state is kept as it was")]
    NotAPatch(String),
    /// A `delta` that is no array (its JSON type).
    #[error("`delta` is {0}, not an array of RFC 6902 operations; the state is kept as it was")]
    NotAnArray(&'static str),
    /// Copies past [`MAX_COPIED`] values.
    #[error(
        "operation {operation} copies the state past {MAX_COPIED} values copied in this stream: \
         the state is not followed from here, and what it holds later is not read"
    )]
    CopiedTooMuch {
        /// The operation's index in the delta.
        operation: usize,
    },
    /// An operation that does not apply.
    #[error(
        "operation {operation} ({op}) failed at path '{path}': {why}; the whole delta is not applied (RFC 6902 §5) \
         and the state is kept as it was"
    )]
    OperationFailed {
        /// The operation's index in the delta.
        operation: usize,
        /// Its name (`add`, `remove`…).
        op: &'static str,
        /// The JSON pointer it failed at.
        path: String,
        /// Why (json-patch's words).
        why: String,
    },
    /// Reading past [`MAX_WORK`] values.
    #[error(
        "the state was read past {MAX_WORK} values in this stream (a large state changed many \
         times): it is not followed from here, and what it holds later is not read"
    )]
    ReadTooMuch,
}

/// The operation's name, as RFC 6902 spells it.
fn op_name(op: &json_patch::PatchOperation) -> &'static str {
    use json_patch::PatchOperation::*;
    match op {
        Add(_) => "add",
        Remove(_) => "remove",
        Replace(_) => "replace",
        Move(_) => "move",
        Copy(_) => "copy",
        Test(_) => "test",
    }
}

/// The number of JSON values in `v`, itself included.
pub fn nodes(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(nodes).sum::<usize>(),
        Value::Object(o) => 1 + o.values().map(nodes).sum::<usize>(),
        _ => 1,
    }
}

/// True when `v` is a citation on its own: an object of the citation media type, or of a
/// citation's shape.
fn is_citation(v: &Value) -> bool {
    v.is_object() && (declared_media_type(v).is_some_and(is_citation_media_type) || looks_like_citation(v))
}

/// True when `v` holds a citation anywhere, JSON inside strings included.
fn contains_citation(v: &Value) -> bool {
    match v {
        _ if is_citation(v) => true,
        Value::Object(o) => o.values().any(contains_citation),
        Value::Array(a) => a.iter().any(contains_citation),
        Value::String(s) => embedded(s).is_some_and(|inner| contains_citation(&inner)),
        _ => false,
    }
}

/// The JSON a string of the state holds, if it holds JSON (and is not too long to try).
fn embedded(s: &str) -> Option<Value> {
    let t = s.trim();
    if t.len() <= MAX_EMBEDDED && t.starts_with(['{', '[']) { serde_json::from_str(t).ok() } else { None }
}

/// The JSON a content block `{"type": "text", "text": "<json>"}` holds.
fn text_block_json(m: &Value) -> Option<Value> {
    (m.get("type").and_then(Value::as_str) == Some("text"))
        .then(|| m.get("text").and_then(Value::as_str).and_then(embedded))
        .flatten()
}

/// True when member `m` (under `key`, for an object's) is a citation of its container: a
/// citation, or anything under a `citation`/`citations` key, or an array of citations.
fn direct(key: Option<&str>, m: &Value) -> bool {
    is_citation(m)
        || (matches!(key, Some("citation" | "citations")) && (m.is_object() || m.is_array()))
        || m.as_array().is_some_and(|a| a.iter().any(is_citation))
}

/// The units of `v` that pair a citation with its result, by the tool results' rules: the
/// smallest object (or array) holding a citation as a direct member is split as one tool result
/// is (its citations, and the rest of it as their result); a citation alone is its own unit.
/// A member that holds citations deeper down is not part of its container's unit: it is read
/// for units of its own. Strings that hold JSON (a tool message's content kept in the state)
/// are read too.
pub fn units(v: &Value, pointer: &str, out: &mut Vec<Split>) {
    if is_citation(v) {
        out.push(upperhand::split(v, pointer));
        return;
    }
    match v {
        Value::Object(o) => {
            if !o.iter().any(|(k, m)| direct(Some(k), m)) {
                o.iter().for_each(|(k, m)| units(m, &pointer_push(pointer, k), out));
                return;
            }
            let mut unit = serde_json::Map::new();
            for (k, m) in o {
                if !direct(Some(k), m) && contains_citation(m) {
                    units(m, &pointer_push(pointer, k), out);
                } else {
                    unit.insert(k.clone(), m.clone());
                }
            }
            out.push(upperhand::split(&Value::Object(unit), pointer));
        }
        Value::Array(a) => {
            // A message's content blocks (LangGraph keeps a tool's `{result}` and `{citation}`
            // as two text blocks) are read as the JSON their texts hold, so the citation in one
            // block pairs with the result in the other as the joined `TOOL_CALL_RESULT` does.
            let a: Vec<(Cow<Value>, String)> = a
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    let here = pointer_push(pointer, i);
                    match text_block_json(m) {
                        Some(parsed) => (Cow::Owned(parsed), pointer_push(&here, "text")),
                        None => (Cow::Borrowed(m), here),
                    }
                })
                .collect();
            if !a.iter().any(|(m, _)| direct(None, m)) {
                a.iter().for_each(|(m, here)| units(m, here, out));
                return;
            }
            // Each element kept split at its own index, so pointers stay those of the state.
            let mut unit = Split::default();
            let mut rest = Vec::new();
            for (m, here) in &a {
                if !direct(None, m) && contains_citation(m) {
                    units(m, here, out);
                    continue;
                }
                let piece = upperhand::split(m, here);
                unit.citations.extend(piece.citations);
                rest.extend(piece.rest);
            }
            unit.rest = match rest.len() {
                0 => None,
                1 => rest.pop(),
                _ => Some(Value::Array(rest)),
            };
            out.push(unit);
        }
        Value::String(s) => {
            if let Some(parsed) = embedded(s) {
                units(&parsed, pointer, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn citation() -> Value {
        json!({"study": "S", "base": {"name": "b", "n": 10}, "source": {"table": "t", "column": "c", "function": "f"}})
    }

    #[test]
    fn a_delta_is_applied_whole_or_not_at_all() {
        let mut s = State::default();
        s.snapshot(&json!({"a": 1})).unwrap();
        let bad = json!([{"op": "replace", "path": "/a", "value": 2}, {"op": "remove", "path": "/missing"}]);
        let err = s.delta(&bad).unwrap_err().to_string();
        assert!(err.contains("operation 1 (remove)"), "{err}");
        assert_eq!(s.value(), &json!({"a": 1}));
        s.delta(&json!([{"op": "add", "path": "/b", "value": [1]}])).unwrap();
        assert_eq!(s.value(), &json!({"a": 1, "b": [1]}));
        assert!(s.delta(&json!({"op": "add"})).unwrap_err().to_string().contains("not an array"));
        assert!(
            s.delta(&json!([{"op": "frobnicate", "path": "/a"}]))
                .unwrap_err()
                .to_string()
                .contains("not an RFC 6902")
        );
    }

    #[test]
    fn doubling_copies_stop_being_followed() {
        let mut s = State::default();
        s.snapshot(&json!({"a": [0, 0, 0, 0]})).unwrap();
        let copies: Vec<Value> =
            (0..40).map(|_| json!({"op": "copy", "from": "/a", "path": "/a/0"})).collect();
        let err = s.delta(&Value::Array(copies)).unwrap_err().to_string();
        assert!(err.contains("not followed"), "{err}");
        assert!(s.stopped());
    }

    #[test]
    fn units_pair_a_citation_with_the_object_around_it() {
        let state = json!({
            "counter": 3,
            "results": [
                {"Considered": "44%", "citation": citation()},
                {"content": serde_json::to_string(&json!({"Aware": 0.5, "citation": citation()})).unwrap()},
            ],
            "bare": citation(),
        });
        let mut out = Vec::new();
        units(&state, "/snapshot", &mut out);
        // The bare citation is the root's; the results, which hold their own, are not its result.
        assert_eq!(out.len(), 3);
        assert_eq!(out[2].rest, Some(json!({"counter": 3})));
        assert_eq!(out[2].citations[0].pointer, "/snapshot/bare");
        assert_eq!(out[0].rest, Some(json!({"Considered": "44%"})));
        assert_eq!(out[0].citations[0].pointer, "/snapshot/results/0/citation");
        assert_eq!(out[1].rest, Some(json!({"Aware": 0.5})));
    }
}
