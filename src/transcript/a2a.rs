//! A2A reader, v0.3 and v1.0 (ProtoJSON) alike.
//!
//! Reading happens in two passes, because a stream only says what an artifact holds once its
//! last chunk has arrived:
//!
//! 1. **collect**: walk every record (Task, Message, JSON-RPC response or request, v0.3
//!    `status-update`/`artifact-update`, v1.0 `{task}`/`{message}`/`{statusUpdate}`/
//!    `{artifactUpdate}`) into *containers* — messages and artifacts, in conversation order.
//!    A message seen twice (history and `status.message`, or a final Task after a stream) is
//!    kept once; an artifact chunk with `append: true` extends the artifact with its id.
//! 2. **pair**: within each container, citation Parts accompany its quantitative data Parts
//!    (Upperhand: "a Part of this media type in the same result"); ADK `function_response`
//!    tool results pair with the citations inside them first.
//!
//! Both versions are read by the same code: every field is looked up under its v0.3/v1.0
//! camelCase name and its snake_case spelling, and Parts are recognised by `kind` or by which
//! content field they carry, so a file mixing conventions still reads.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{Document, Finding, Format, Framed, Item, Level, Locator, RULE_CONFORMANCE, RULE_PAIRING, Turn};
use crate::json::{
    self, declared_media_type, is_citation_media_type, is_json_media_type, is_quantitative,
    looks_like_citation, pointer_push,
};

/// Rule of a [`Finding`] for an A2A object of the wrong structure (e.g. `parts` not an array).
pub const RULE_A2A_MALFORMED: &str = "a2a/malformed";
/// Rule of a [`Finding`] for a JSON-RPC error response.
pub const RULE_JSONRPC_ERROR: &str = "a2a/jsonrpc-error";
/// Rule of the NOTE given when a citation was recognised by its shape, not its media type.
pub const RULE_MEDIA_TYPE: &str = "upperhand/media-type";
/// Rule of the NOTE given for a record that is JSON but no A2A object recite knows.
pub const RULE_A2A_UNRECOGNISED: &str = "a2a/unrecognised";

/// Reads `text` as A2A whatever it looks like; the version is still detected from content.
pub fn read(file: &str, text: &str) -> Document {
    let framed = super::frame(file, text);
    let format = version(framed.records.iter().map(|r| &r.value));
    read_framed(file, format, framed)
}

/// Reads already framed input as A2A of the given version (`format` is only recorded: both
/// versions are read by the same code).
pub(crate) fn read_framed(file: &str, format: Format, framed: Framed) -> Document {
    let mut doc = Document::new(file, format);
    doc.findings = framed.findings;
    let mut c = Collector::new(file);
    for r in &framed.records {
        c.record(&r.value, &r.pointer, r.line);
    }
    doc.findings.append(&mut c.findings);
    let doubles =
        json::prints_doubles(c.containers.iter().flat_map(|c| &c.parts).filter_map(|p| p.value.get("data")));
    for container in &c.containers {
        read_container(&mut doc, container);
    }
    if doubles {
        whole_doubles_as_written(&mut doc);
    }
    doc
}

/// Rule of the NOTE given when whole numbers written as doubles were read as integers.
pub const RULE_DOUBLES: &str = "a2a/protojson-doubles";

/// The producer printed every whole number as a double (`44.0`, `9189.0`), as ProtoJSON does
/// with `google.protobuf.Value`, which has no integers: read them as the integers the agent
/// wrote, so `44.0` claims a whole percent (±0.5) and `"n": 4654.0` is the base n 4654.
fn whole_doubles_as_written(doc: &mut Document) {
    let mut changed = false;
    for item in &mut doc.items {
        for v in item.result.iter_mut().chain(item.citation.iter_mut()) {
            let before = v.clone();
            json::whole_doubles_to_integers(v);
            changed |= *v != before;
        }
    }
    if changed {
        let message = "every whole number in this file's data Parts is written as a double (44.0), as \
                       ProtoJSON writes google.protobuf.Value: read as the integers the agent wrote";
        let at = Locator::at(&doc.file, "");
        doc.findings.push(Finding::new(at, RULE_DOUBLES, Level::Note, message));
    }
}

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

// ---------------------------------------------------------------------------------------------
// Shapes and field access
// ---------------------------------------------------------------------------------------------

/// The first of `names` present in `v`, with the name found (for pointers). Names are given
/// camelCase first, then snake_case, since ProtoJSON parsers accept both.
fn field<'a>(v: &'a Value, names: &[&'static str]) -> Option<(&'static str, &'a Value)> {
    names.iter().find_map(|n| v.get(*n).map(|x| (*n, x)))
}

/// A string field (ids); numbers are accepted as their text.
fn str_field(v: &Value, names: &[&'static str]) -> Option<String> {
    match field(v, names)?.1 {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

const TASK_ID: &[&str] = &["taskId", "task_id"];
const MESSAGE_ID: &[&str] = &["messageId", "message_id"];
const ARTIFACT_ID: &[&str] = &["artifactId", "artifact_id"];
const STATUS_UPDATE: &[&str] = &["statusUpdate", "status_update"];
const ARTIFACT_UPDATE: &[&str] = &["artifactUpdate", "artifact_update"];
/// A Message's Parts: `parts`, or `content` in the v0.3 gRPC/REST binding.
const PARTS: &[&str] = &["parts", "content"];

fn kind(v: &Value) -> Option<&str> {
    v.get("kind").and_then(Value::as_str)
}

fn is_task(v: &Value) -> bool {
    kind(v) == Some("task") || (v.get("id").is_some() && v.get("status").is_some_and(Value::is_object))
}

fn is_message(v: &Value) -> bool {
    kind(v) == Some("message")
        || (field(v, PARTS).is_some() && (v.get("role").is_some() || field(v, MESSAGE_ID).is_some()))
}

fn is_artifact(v: &Value) -> bool {
    v.get("parts").is_some() && field(v, ARTIFACT_ID).is_some()
}

fn is_status_update(v: &Value) -> bool {
    kind(v) == Some("status-update") || (field(v, TASK_ID).is_some() && v.get("status").is_some())
}

fn is_artifact_update(v: &Value) -> bool {
    kind(v) == Some("artifact-update") || v.get("artifact").is_some_and(Value::is_object)
}

/// The v1.0 one-of wrappers of `SendMessageResponse` and `StreamResponse`.
fn wrapped(v: &Value) -> Option<(&'static str, &Value)> {
    field(v, &["task", "message"])
        .or_else(|| field(v, STATUS_UPDATE))
        .or_else(|| field(v, ARTIFACT_UPDATE))
        .filter(|(_, x)| x.is_object())
}

fn is_a2a_payload(v: &Value) -> bool {
    if !v.is_object() {
        return false;
    }
    if let Some((_, inner)) = wrapped(v) {
        return is_task(inner) || is_message(inner) || is_status_update(inner) || is_artifact_update(inner);
    }
    is_task(v) || is_message(v) || is_artifact(v) || is_status_update(v) || is_artifact_update(v)
}

fn type_name(v: &Value) -> &'static str {
    json::type_name(v)
}

/// `user` or `agent` from either version's spelling (and ProtoJSON's integer enum values);
/// other roles are kept in lower case. A message without a role counts as the agent's, so its
/// numbers are still checked.
fn role(v: Option<&Value>) -> String {
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

// ---------------------------------------------------------------------------------------------
// Pass 1: collect messages and artifacts
// ---------------------------------------------------------------------------------------------

/// A message or an artifact: the unit within which citations pair with results.
struct Container {
    is_artifact: bool,
    role: String,
    task_id: Option<String>,
    /// The message id or the artifact id.
    id: Option<String>,
    parts: Vec<PartAt>,
}

/// A Part, with where it was read (chunks of one artifact may come from several lines).
struct PartAt {
    value: Value,
    pointer: String,
    line: Option<usize>,
}

struct Collector<'f> {
    file: &'f str,
    containers: Vec<Container>,
    findings: Vec<Finding>,
    messages: HashMap<String, usize>,
    artifacts: HashMap<(Option<String>, String), usize>,
}

impl<'f> Collector<'f> {
    fn new(file: &'f str) -> Self {
        Collector {
            file,
            containers: Vec::new(),
            findings: Vec::new(),
            messages: HashMap::new(),
            artifacts: HashMap::new(),
        }
    }

    fn finding(&mut self, ptr: &str, line: Option<usize>, rule: &str, level: Level, message: String) {
        let at = Locator::at(self.file, ptr).on_line(line);
        self.findings.push(Finding::new(at, rule, level, message));
    }

    fn malformed(&mut self, ptr: &str, line: Option<usize>, message: String) {
        self.finding(ptr, line, RULE_A2A_MALFORMED, Level::Must, message);
    }

    /// One top-level value: a JSON-RPC envelope, a bare A2A object, or an array of them.
    fn record(&mut self, v: &Value, ptr: &str, line: Option<usize>) {
        let Some(o) = v.as_object() else {
            if let Some(a) = v.as_array() {
                for (i, x) in a.iter().enumerate() {
                    self.record(x, &pointer_push(ptr, i), line);
                }
            } else {
                let message = format!("{} is not an A2A object; skipped", type_name(v));
                self.finding(ptr, line, RULE_A2A_UNRECOGNISED, Level::Note, message);
            }
            return;
        };
        if let Some(err) = o.get("error").filter(|_| !o.contains_key("result")) {
            self.jsonrpc_error(err, &pointer_push(ptr, "error"), line);
        } else if o.contains_key("method") && o.contains_key("params") {
            self.request(v, ptr, line);
        } else if let Some(result) = o.get("result") {
            self.payload(result, &pointer_push(ptr, "result"), line);
        } else {
            self.payload(v, ptr, line);
        }
    }

    fn jsonrpc_error(&mut self, err: &Value, ptr: &str, line: Option<usize>) {
        let code = err.get("code").map(|c| c.to_string()).unwrap_or_else(|| "(no code)".into());
        let text = err.get("message").and_then(Value::as_str).unwrap_or("(no message)");
        let mut message = format!("JSON-RPC error {code}: {text}");
        if let Some(data) = err.get("data") {
            message.push_str(&format!(" ({data})"));
        }
        self.finding(ptr, line, RULE_JSONRPC_ERROR, Level::Must, message);
    }

    /// A logged request: the message a client sent is a user turn.
    fn request(&mut self, v: &Value, ptr: &str, line: Option<usize>) {
        let params_ptr = pointer_push(ptr, "params");
        if let Some(m) = v["params"].get("message").filter(|m| m.is_object()) {
            self.message(m, &pointer_push(&params_ptr, "message"), line, None);
        }
    }

    /// A response's `result`, a stream event, or a bare object.
    fn payload(&mut self, v: &Value, ptr: &str, line: Option<usize>) {
        if let Some(a) = v.as_array() {
            for (i, x) in a.iter().enumerate() {
                self.payload(x, &pointer_push(ptr, i), line);
            }
            return;
        }
        if let Some((name, inner)) = wrapped(v) {
            let inner_ptr = pointer_push(ptr, name);
            return match name {
                "task" => self.task(inner, &inner_ptr, line),
                "message" => self.message(inner, &inner_ptr, line, None),
                "statusUpdate" | "status_update" => self.status_update(inner, &inner_ptr, line),
                _ => self.artifact_update(inner, &inner_ptr, line),
            };
        }
        if let Some(tasks) = v.get("tasks").and_then(Value::as_array) {
            // ListTasks / tasks/list
            for (i, t) in tasks.iter().enumerate() {
                self.task(t, &pointer_push(&pointer_push(ptr, "tasks"), i), line);
            }
        } else if is_task(v) {
            self.task(v, ptr, line);
        } else if is_message(v) {
            self.message(v, ptr, line, None);
        } else if is_artifact_update(v) {
            self.artifact_update(v, ptr, line);
        } else if is_status_update(v) {
            self.status_update(v, ptr, line);
        } else if is_artifact(v) {
            self.artifact(v, ptr, line, None, false);
        } else {
            let message = format!("{} that is no A2A Task, Message or event; skipped", type_name(v));
            self.finding(ptr, line, RULE_A2A_UNRECOGNISED, Level::Note, message);
        }
    }

    /// A Task: its history, then its status message, then its artifacts.
    fn task(&mut self, t: &Value, ptr: &str, line: Option<usize>) {
        let task_id = str_field(t, &["id"]);
        match t.get("history") {
            Some(Value::Array(history)) => {
                for (i, m) in history.iter().enumerate() {
                    let p = pointer_push(&pointer_push(ptr, "history"), i);
                    self.message(m, &p, line, task_id.as_deref());
                }
            }
            Some(Value::Null) | None => {}
            Some(other) => {
                let message = format!("a Task's history must be an array, found {}", type_name(other));
                self.malformed(&pointer_push(ptr, "history"), line, message);
            }
        }
        if let Some(m) = t.get("status").and_then(|s| s.get("message")).filter(|m| m.is_object()) {
            let p = pointer_push(&pointer_push(ptr, "status"), "message");
            self.message(m, &p, line, task_id.as_deref());
        }
        match t.get("artifacts") {
            Some(Value::Array(artifacts)) => {
                for (i, a) in artifacts.iter().enumerate() {
                    let p = pointer_push(&pointer_push(ptr, "artifacts"), i);
                    self.artifact(a, &p, line, task_id.as_deref(), false);
                }
            }
            Some(Value::Null) | None => {}
            Some(other) => {
                let message = format!("a Task's artifacts must be an array, found {}", type_name(other));
                self.malformed(&pointer_push(ptr, "artifacts"), line, message);
            }
        }
    }

    fn status_update(&mut self, u: &Value, ptr: &str, line: Option<usize>) {
        let task_id = str_field(u, TASK_ID);
        if let Some(m) = u.get("status").and_then(|s| s.get("message")).filter(|m| m.is_object()) {
            let p = pointer_push(&pointer_push(ptr, "status"), "message");
            self.message(m, &p, line, task_id.as_deref());
        }
    }

    fn artifact_update(&mut self, u: &Value, ptr: &str, line: Option<usize>) {
        let task_id = str_field(u, TASK_ID);
        let append = u.get("append").and_then(Value::as_bool).unwrap_or(false);
        match u.get("artifact") {
            Some(a) if a.is_object() => {
                self.artifact(a, &pointer_push(ptr, "artifact"), line, task_id.as_deref(), append)
            }
            other => {
                let found = other.map_or("nothing", type_name);
                let message = format!("an artifact-update event needs an artifact object, found {found}");
                self.malformed(ptr, line, message);
            }
        }
    }

    fn message(&mut self, m: &Value, ptr: &str, line: Option<usize>, task_id: Option<&str>) {
        if !m.is_object() {
            self.malformed(ptr, line, format!("a Message must be an object, found {}", type_name(m)));
            return;
        }
        let id = str_field(m, MESSAGE_ID);
        if id.as_ref().is_some_and(|id| self.messages.contains_key(id)) {
            return; // the same message again (history and status, or a Task after a stream)
        }
        let parts = self.parts(m, ptr, line, "Message");
        let container = Container {
            is_artifact: false,
            role: role(m.get("role")),
            task_id: str_field(m, TASK_ID).or_else(|| task_id.map(str::to_string)),
            id: id.clone(),
            parts,
        };
        if let Some(id) = id {
            self.messages.insert(id, self.containers.len());
        }
        self.containers.push(container);
    }

    /// An artifact. A chunk with `append: true` extends the artifact with its id; without it,
    /// content equal to what was already read is a repeat (a final Task after a stream) and
    /// anything else replaces it, as A2A clients do.
    fn artifact(&mut self, a: &Value, ptr: &str, line: Option<usize>, task_id: Option<&str>, append: bool) {
        if !a.is_object() {
            self.malformed(ptr, line, format!("an Artifact must be an object, found {}", type_name(a)));
            return;
        }
        let id = str_field(a, ARTIFACT_ID);
        let parts = self.parts(a, ptr, line, "Artifact");
        let key = id.clone().map(|id| (task_id.map(str::to_string), id));
        if let Some(&at) = key.as_ref().and_then(|k| self.artifacts.get(k)) {
            let existing = &mut self.containers[at].parts;
            if append {
                existing.extend(parts);
            } else if !existing.iter().map(|p| &p.value).eq(parts.iter().map(|p| &p.value)) {
                *existing = parts;
            }
            return;
        }
        if let Some(key) = key {
            self.artifacts.insert(key, self.containers.len());
        }
        let task_id = task_id.map(str::to_string);
        self.containers.push(Container { is_artifact: true, role: "agent".into(), task_id, id, parts });
    }

    fn parts(&mut self, owner: &Value, ptr: &str, line: Option<usize>, what: &str) -> Vec<PartAt> {
        let (name, parts) = field(owner, PARTS).map_or(("parts", None), |(n, p)| (n, Some(p)));
        let parts_ptr = pointer_push(ptr, name);
        match parts {
            Some(Value::Array(parts)) => parts
                .iter()
                .enumerate()
                .map(|(i, p)| PartAt { value: p.clone(), pointer: pointer_push(&parts_ptr, i), line })
                .collect(),
            Some(other) => {
                let message = format!("a {what}'s parts must be an array, found {}", type_name(other));
                self.malformed(&parts_ptr, line, message);
                Vec::new()
            }
            None => {
                self.malformed(ptr, line, format!("a {what} needs parts, found none"));
                Vec::new()
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Pass 2: classify Parts and pair citations with results
// ---------------------------------------------------------------------------------------------

/// What one Part is, for pairing.
enum Kind {
    Text(String),
    /// Citation objects with their pointers, and whether they were recognised by shape.
    Citations(Vec<(Value, String)>, bool),
    /// A data Part's data.
    Data(Value, String),
    /// An ADK `function_response` data Part's data.
    ToolResult(Value, String),
    /// Files, ADK function calls, and Parts already reported as malformed.
    Ignored,
}

/// A citation or a result found in a container, with where it was found.
struct Found {
    value: Value,
    pointer: String,
    part: usize,
    line: Option<usize>,
    by_shape: bool,
}

/// ADK's tool Part type, `metadata.adk_type` (or `type` in older versions and other ports).
fn tool_type(part: &Value) -> Option<&str> {
    field(part.get("metadata")?, &["adk_type", "type"]).and_then(|(_, v)| v.as_str())
}

fn classify(p: &PartAt, at: &Locator, findings: &mut Vec<Finding>) -> Kind {
    let mut malformed = |pointer: String, message: String| {
        let at = Locator { pointer, line: p.line, ..at.clone() };
        findings.push(Finding::new(at, RULE_A2A_MALFORMED, Level::Must, message));
        Kind::Ignored
    };
    let part = &p.value;
    if !part.is_object() {
        return malformed(p.pointer.clone(), format!("a Part must be an object, found {}", type_name(part)));
    }
    let kind = kind(part);
    let mt = declared_media_type(part).or_else(|| part.get("file").and_then(declared_media_type));
    let cites = mt.is_some_and(is_citation_media_type);
    if let Some(text) = part.get("text") {
        return match text.as_str() {
            Some(t) if cites => citations_in_text(t, &pointer_push(&p.pointer, "text"), at, p.line, findings),
            Some(t) => Kind::Text(t.to_string()),
            None => malformed(
                pointer_push(&p.pointer, "text"),
                format!("a text Part's text must be a string, found {}", type_name(text)),
            ),
        };
    }
    if let Some((bytes, ptr)) = base64_content(part, &p.pointer).filter(|_| cites) {
        return citations_in_base64(bytes, &ptr, at, p.line, findings);
    }
    let Some(data) = part.get("data") else {
        return match kind {
            Some("file") | None if ["file", "raw", "url"].iter().any(|k| part.get(*k).is_some()) => {
                Kind::Ignored
            }
            Some(k) => malformed(p.pointer.clone(), format!("a {k} Part without its content")),
            None => malformed(p.pointer.clone(), "a Part needs one of text, raw, url or data".into()),
        };
    };
    let mut data_ptr = pointer_push(&p.pointer, "data");
    if kind == Some("data") && !(data.is_object() || data.is_array()) {
        return malformed(
            data_ptr,
            format!("a v0.3 data Part's data must be an object, found {}", type_name(data)),
        );
    }
    // The v0.3 gRPC/REST binding writes a DataPart message: `{"data": {"data": {…}}}`.
    let data = match data.get("data") {
        Some(inner)
            if kind.is_none() && inner.is_object() && data.as_object().is_some_and(|o| o.len() == 1) =>
        {
            data_ptr = pointer_push(&data_ptr, "data");
            inner
        }
        _ => data,
    };
    // The SDKs' v0.3 adapters wrap a data value that is not an object as `{"value": …}`.
    let compat = part.pointer("/metadata/data_part_compat").and_then(Value::as_bool) == Some(true);
    let data = match data.get("value") {
        Some(inner) if compat && data.as_object().is_some_and(|o| o.len() == 1) => {
            data_ptr = pointer_push(&data_ptr, "value");
            inner
        }
        _ => data,
    };
    if cites {
        return citations_in_data(data, &data_ptr, at, p.line, findings);
    }
    match tool_type(part) {
        Some("function_response") => return Kind::ToolResult(data.clone(), data_ptr),
        Some("function_call") => return Kind::Ignored,
        _ => {}
    }
    if mt.is_none_or(is_json_media_type) {
        if looks_like_citation(data) {
            return Kind::Citations(vec![(data.clone(), data_ptr)], true);
        }
        if let Some(list) = data.as_array().filter(|a| !a.is_empty() && a.iter().all(looks_like_citation)) {
            let cits =
                list.iter().enumerate().map(|(i, c)| (c.clone(), pointer_push(&data_ptr, i))).collect();
            return Kind::Citations(cits, true);
        }
    }
    Kind::Data(data.clone(), data_ptr)
}

/// The citations of a Part typed as citations: an object, or an array of them (`data` may be
/// an array in v1.0 and in some v0.3 extensions).
fn citations_in_data(
    data: &Value,
    ptr: &str,
    at: &Locator,
    line: Option<usize>,
    findings: &mut Vec<Finding>,
) -> Kind {
    let mut bad = |pointer: String, found: &Value| {
        let at = Locator { pointer, line, ..at.clone() };
        let message = format!("a citation must be a JSON object, found {}", type_name(found));
        findings.push(Finding::new(at, RULE_CONFORMANCE, Level::Must, message));
    };
    match data {
        Value::Object(_) => Kind::Citations(vec![(data.clone(), ptr.to_string())], false),
        Value::Array(list) => {
            let mut cits = Vec::new();
            for (i, c) in list.iter().enumerate() {
                if c.is_object() {
                    cits.push((c.clone(), pointer_push(ptr, i)));
                } else {
                    bad(pointer_push(ptr, i), c);
                }
            }
            Kind::Citations(cits, false)
        }
        Value::String(s) => citations_in_text(s, ptr, at, line, findings),
        other => {
            bad(ptr.to_string(), other);
            Kind::Ignored
        }
    }
}

/// The base64 content of a Part, with its pointer: a v1.0 `raw` Part, or a v0.3 file Part's
/// `file.bytes` (`fileWithBytes` in the v0.3 gRPC/REST binding).
fn base64_content<'a>(part: &'a Value, ptr: &str) -> Option<(&'a str, String)> {
    if let Some(raw) = part.get("raw").and_then(Value::as_str) {
        return Some((raw, pointer_push(ptr, "raw")));
    }
    let (name, bytes) = field(part.get("file")?, &["bytes", "fileWithBytes", "file_with_bytes"])?;
    Some((bytes.as_str()?, pointer_push(&pointer_push(ptr, "file"), name)))
}

/// Citations sent as bytes (base64): decoded and read as JSON.
fn citations_in_base64(
    text: &str,
    ptr: &str,
    at: &Locator,
    line: Option<usize>,
    findings: &mut Vec<Finding>,
) -> Kind {
    match json::decode_base64_json(text) {
        Ok(v) => match citations_in_data(&v, ptr, at, line, findings) {
            // Pointers inside the bytes cannot be expressed: point at the bytes.
            Kind::Citations(c, s) => {
                Kind::Citations(c.into_iter().map(|(v, _)| (v, ptr.to_string())).collect(), s)
            }
            k => k,
        },
        Err(why) => {
            let at = Locator { pointer: ptr.to_string(), line, ..at.clone() };
            let message = format!("a citation Part's bytes must be base64 of a JSON object: {why}");
            findings.push(Finding::new(at, RULE_CONFORMANCE, Level::Must, message));
            Kind::Ignored
        }
    }
}

/// A citation sent as JSON text (a text Part with the citations media type, or `data` a
/// string): read it, and say the Part should have carried JSON.
fn citations_in_text(
    text: &str,
    ptr: &str,
    at: &Locator,
    line: Option<usize>,
    findings: &mut Vec<Finding>,
) -> Kind {
    let at = Locator { pointer: ptr.to_string(), line, ..at.clone() };
    match serde_json::from_str::<Value>(text) {
        Ok(v) if v.is_object() || v.is_array() => {
            let message = "the citation was sent as JSON text, not as JSON data; read anyway";
            findings.push(Finding::new(at.clone(), RULE_CONFORMANCE, Level::Note, message));
            // Pointers inside a string cannot be expressed: point at the string.
            match citations_in_data(&v, ptr, &at, line, findings) {
                Kind::Citations(c, s) => {
                    Kind::Citations(c.into_iter().map(|(v, _)| (v, ptr.to_string())).collect(), s)
                }
                k => k,
            }
        }
        _ => {
            let message = "a citation Part must carry a JSON object, found text that is not one";
            findings.push(Finding::new(at, RULE_CONFORMANCE, Level::Must, message));
            Kind::Ignored
        }
    }
}

/// A value with its JSON pointer.
type Located = (Value, String);
/// A citation with its JSON pointer and whether it was recognised by shape.
type Cited = (Value, String, bool);

/// Splits an ADK tool response into the citations inside it and the result they accompany:
/// `response.citation`, `response.citations[]`, and any citation-shaped value (or array of
/// them) under another key are citations; the rest of the response is the result (the
/// citation's own numbers, such as base.n, are not claims).
fn split_tool_response(data: &Value, ptr: &str) -> (Vec<Cited>, Option<Located>) {
    let (resp, rptr) = match data.get("response") {
        Some(r) => (r, pointer_push(ptr, "response")),
        None => (data, ptr.to_string()),
    };
    if looks_like_citation(resp) {
        return (vec![(resp.clone(), rptr, true)], None);
    }
    let Some(obj) = resp.as_object() else {
        return (Vec::new(), is_quantitative(resp).then(|| (resp.clone(), rptr)));
    };
    let mut cits = Vec::new();
    let mut rest = Map::new();
    for (k, v) in obj {
        let named = k == "citation" || k == "citations";
        let kp = pointer_push(&rptr, k);
        if looks_like_citation(v) || (named && v.is_object()) {
            cits.push((v.clone(), kp, !named));
        } else if let Some(list) = v.as_array().filter(|a| {
            !a.is_empty() && a.iter().all(|c| if named { c.is_object() } else { looks_like_citation(c) })
        }) {
            cits.extend(list.iter().enumerate().map(|(i, c)| (c.clone(), pointer_push(&kp, i), !named)));
        } else {
            rest.insert(k.clone(), v.clone());
        }
    }
    let rest = Value::Object(rest);
    (cits, is_quantitative(&rest).then_some((rest, rptr)))
}

/// Classifies a container's Parts, pairs its citations with its results, and records its turn.
/// User messages make no claims: only tool results in them (ADK may file those under the user
/// role) are read.
fn read_container(doc: &mut Document, c: &Container) {
    let base = Locator {
        file: doc.file.clone(),
        task_id: c.task_id.clone(),
        message_id: if c.is_artifact { None } else { c.id.clone() },
        artifact_id: if c.is_artifact { c.id.clone() } else { None },
        ..Locator::default()
    };
    let claims = c.role != "user";
    let what = if c.is_artifact { "artifact" } else { "message" };
    let (mut texts, mut cits, mut results, mut items) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, p) in c.parts.iter().enumerate() {
        let found = |value: Value, pointer: String, by_shape: bool| Found {
            value,
            pointer,
            part: i,
            line: p.line,
            by_shape,
        };
        match classify(p, &base, &mut doc.findings) {
            Kind::Text(t) => texts.push(t),
            Kind::Citations(list, by_shape) if claims => {
                cits.extend(list.into_iter().map(|(v, ptr)| found(v, ptr, by_shape)));
            }
            Kind::Data(d, ptr) if claims && is_quantitative(&d) => results.push(found(d, ptr, false)),
            Kind::ToolResult(d, ptr) => {
                let (tool_cits, result) = split_tool_response(&d, &ptr);
                let result = result.map(|(v, ptr)| found(v, ptr, false));
                if tool_cits.is_empty() {
                    results.extend(result);
                } else {
                    let tool_cits = tool_cits.into_iter().map(|(v, ptr, s)| found(v, ptr, s)).collect();
                    items.extend(pair(doc, &base, tool_cits, result.into_iter().collect(), "tool result"));
                }
            }
            _ => {}
        }
    }
    items.extend(pair(doc, &base, cits, results, what));
    items.sort_unstable();
    if !texts.is_empty() || !items.is_empty() {
        let message_id = base.message_id.clone();
        doc.turns.push(Turn { role: c.role.clone(), text: texts.join("\n"), items, message_id });
    }
}

/// Pairs the citations of one container with its quantitative results, pushing Items and
/// findings; returns the indices of the Items pushed.
///
/// One citation takes every result (several become one array result). Several citations pair
/// with the results in order, with a NOTE saying so. What is left unpaired is pushed anyway
/// (so reports count it) with a conformance finding.
fn pair(doc: &mut Document, base: &Locator, cits: Vec<Found>, results: Vec<Found>, what: &str) -> Vec<usize> {
    let start = doc.items.len();
    for c in cits.iter().filter(|c| c.by_shape) {
        let message = format!(
            "citation recognised by its shape: the Part does not declare the media type {}",
            super::CITATION_MEDIA_TYPE
        );
        doc.findings.push(Finding::new(locate(base, c), RULE_MEDIA_TYPE, Level::Note, message));
    }
    if cits.len() == 1 {
        let mut cits = cits;
        let c = cits.remove(0);
        let result = match results.len() {
            0 => None,
            1 => results.into_iter().next().map(|r| r.value),
            _ => Some(Value::Array(results.into_iter().map(|r| r.value).collect())),
        };
        push(doc, base, Some(c), result.map(|v| (v, None)), what);
    } else {
        if cits.len() > 1 && !results.is_empty() {
            let message = format!(
                "{} citations and {} quantitative results in one {what}: paired in order",
                cits.len(),
                results.len()
            );
            let at = locate(base, &cits[0]);
            doc.findings.push(Finding::new(at, RULE_PAIRING, Level::Note, message));
        }
        let mut results = results.into_iter();
        for c in cits {
            let r = results.next().map(|r| (r.value, None));
            push(doc, base, Some(c), r, what);
        }
        for r in results {
            let at = locate(base, &r);
            push(doc, base, None, Some((r.value, Some(at))), what);
        }
    }
    (start..doc.items.len()).collect()
}

fn locate(base: &Locator, f: &Found) -> Locator {
    Locator { line: f.line, part_index: Some(f.part), pointer: f.pointer.clone(), ..base.clone() }
}

/// Pushes one Item (and the conformance finding when one side is missing). `result` carries
/// the result's own locator when there is no citation to locate the Item by.
fn push(
    doc: &mut Document,
    base: &Locator,
    cit: Option<Found>,
    result: Option<(Value, Option<Locator>)>,
    what: &str,
) {
    let (locator, citation, by_shape) = match (&cit, &result) {
        (Some(c), _) => (locate(base, c), Some(c.value.clone()), c.by_shape),
        (None, Some((_, Some(at)))) => (at.clone(), None, false),
        (None, _) => (base.clone(), None, false),
    };
    let message = match (&citation, &result) {
        (Some(_), None) => Some(format!("a citation with no quantitative result in the same {what}")),
        (None, Some(_)) => Some(format!(
            "a quantitative result with no citation Part ({}) in the same {what}",
            super::CITATION_MEDIA_TYPE
        )),
        _ => None,
    };
    if let Some(message) = message {
        doc.findings.push(Finding::new(locator.clone(), RULE_CONFORMANCE, Level::Must, message));
    }
    doc.items.push(Item { locator, result: result.map(|(v, _)| v), citation, by_shape });
}
