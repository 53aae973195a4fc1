//! Pass 0: what an A2A value is. Whether a value is A2A at all, which version a file speaks, and
//! the shapes (Task, Message, Artifact, stream events, v1.0 wrappers) and field spellings
//! (camelCase and snake_case) every later pass looks things up by.

use serde_json::Value;

use crate::json;
use crate::transcript::Format;

/// True when `v` is an A2A object: a JSON-RPC message, a Task, Message, Artifact or stream
/// event of either version (bare, under `result`, or wrapped v1.0 style), or an array of them.
pub fn looks_like_a2a(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.iter().any(looks_like_a2a),
        Value::Object(o) => {
            o.contains_key("jsonrpc") || o.get("result").is_some_and(is_a2a_payload) || is_a2a_payload(v)
        }
        _ => false,
    }
}

/// The A2A version of `values`, by majority of version-specific spellings: v0.3 `kind`, lower
/// case roles and states, `message/send`-style methods; v1.0 `ROLE_*`, `TASK_STATE_*`,
/// `mediaType`, `statusUpdate`/`artifactUpdate` wrappers, `SendMessage`-style methods.
/// A tie (e.g. a lone JSON-RPC error) reads as v1.0, the current version.
pub fn version<'a>(values: impl IntoIterator<Item = &'a Value>) -> Format {
    let mut votes = (0usize, 0usize);
    for v in values {
        count_versions(v, &mut votes);
    }
    if votes.0 > votes.1 { Format::A2aV03 } else { Format::A2aV10 }
}

const V03_KINDS: &[&str] = &["task", "message", "status-update", "artifact-update", "text", "data", "file"];
const V03_STATES: &[&str] = &[
    "submitted",
    "working",
    "input-required",
    "completed",
    "canceled",
    "failed",
    "rejected",
    "auth-required",
    "unknown",
];
const V10_KEYS: &[&str] =
    &["statusUpdate", "artifactUpdate", "status_update", "artifact_update", "mediaType", "media_type"];

fn count_versions(v: &Value, votes: &mut (usize, usize)) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| count_versions(x, votes)),
        Value::Object(o) => {
            let s = |k: &str| o.get(k).and_then(Value::as_str);
            if s("kind").is_some_and(|k| V03_KINDS.contains(&k)) {
                votes.0 += 1;
            }
            match s("role") {
                Some("user" | "agent") => votes.0 += 1,
                Some(r) if r.starts_with("ROLE_") => votes.1 += 1,
                _ => {}
            }
            match s("state") {
                Some(st) if st.starts_with("TASK_STATE_") => votes.1 += 1,
                Some(st) if V03_STATES.contains(&st) => votes.0 += 1,
                _ => {}
            }
            match s("method") {
                Some(m) if m.contains('/') => votes.0 += 1,
                Some(m) if m.starts_with(|c: char| c.is_ascii_uppercase()) => votes.1 += 1,
                _ => {}
            }
            votes.1 += V10_KEYS.iter().filter(|k| o.contains_key(**k)).count();
            for (k, x) in o {
                // Payloads are the agent's own JSON: their keys say nothing of the protocol.
                if k != "data" && k != "metadata" {
                    count_versions(x, votes);
                }
            }
        }
        _ => {}
    }
}

/// The first of `names` present in `v`, with the name found (for pointers). Names are given
/// camelCase first, then snake_case, since ProtoJSON parsers accept both.
pub(super) fn field<'a>(v: &'a Value, names: &[&'static str]) -> Option<(&'static str, &'a Value)> {
    names.iter().find_map(|n| v.get(*n).map(|x| (*n, x)))
}

/// A string field (ids); numbers are accepted as their text.
pub(super) fn str_field(v: &Value, names: &[&'static str]) -> Option<String> {
    match field(v, names)?.1 {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

pub(super) const TASK_ID: &[&str] = &["taskId", "task_id"];
pub(super) const MESSAGE_ID: &[&str] = &["messageId", "message_id"];
pub(super) const ARTIFACT_ID: &[&str] = &["artifactId", "artifact_id"];
pub(super) const STATUS_UPDATE: &[&str] = &["statusUpdate", "status_update"];
pub(super) const ARTIFACT_UPDATE: &[&str] = &["artifactUpdate", "artifact_update"];
/// A Message's Parts: `parts`, or `content` in the v0.3 gRPC/REST binding.
pub(super) const PARTS: &[&str] = &["parts", "content"];

pub(super) fn kind(v: &Value) -> Option<&str> {
    v.get("kind").and_then(Value::as_str)
}

pub(super) fn is_task(v: &Value) -> bool {
    kind(v) == Some("task") || (v.get("id").is_some() && v.get("status").is_some_and(Value::is_object))
}

pub(super) fn is_message(v: &Value) -> bool {
    kind(v) == Some("message")
        || (field(v, PARTS).is_some() && (v.get("role").is_some() || field(v, MESSAGE_ID).is_some()))
}

pub(super) fn is_artifact(v: &Value) -> bool {
    v.get("parts").is_some() && field(v, ARTIFACT_ID).is_some()
}

pub(super) fn is_status_update(v: &Value) -> bool {
    kind(v) == Some("status-update") || (field(v, TASK_ID).is_some() && v.get("status").is_some())
}

pub(super) fn is_artifact_update(v: &Value) -> bool {
    kind(v) == Some("artifact-update") || v.get("artifact").is_some_and(Value::is_object)
}

/// The v1.0 one-of wrappers of `SendMessageResponse` and `StreamResponse`.
pub(super) fn wrapped(v: &Value) -> Option<(&'static str, &Value)> {
    field(v, &["task", "message"])
        .or_else(|| field(v, STATUS_UPDATE))
        .or_else(|| field(v, ARTIFACT_UPDATE))
        .filter(|(_, x)| x.is_object())
}

pub(crate) fn is_a2a_payload(v: &Value) -> bool {
    if !v.is_object() {
        return false;
    }
    if let Some((_, inner)) = wrapped(v) {
        return is_task(inner) || is_message(inner) || is_status_update(inner) || is_artifact_update(inner);
    }
    is_task(v) || is_message(v) || is_artifact(v) || is_status_update(v) || is_artifact_update(v)
}

pub(super) fn type_name(v: &Value) -> &'static str {
    json::type_name(v)
}

/// `user` or `agent` from either version's spelling (and ProtoJSON's integer enum values);
/// other roles are kept in lower case. A message without a role counts as the agent's, so its
/// numbers are still checked.
pub(super) fn role(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => match s.as_str() {
            "user" | "ROLE_USER" => "user".into(),
            "agent" | "ROLE_AGENT" => "agent".into(),
            other => other.trim_start_matches("ROLE_").to_ascii_lowercase(),
        },
        Some(Value::Number(n)) if n.to_string() == "1" => "user".into(),
        _ => "agent".into(),
    }
}
