//! Pass 1: walk every record into *containers*, the messages and artifacts within which
//! citations pair with results, in conversation order.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::RULE_A2A_MALFORMED;
use super::detect::{
    ARTIFACT_ID, MESSAGE_ID, PARTS, TASK_ID, field, is_artifact, is_artifact_update, is_message,
    is_status_update, is_task, role, str_field, type_name, wrapped,
};
use super::{RULE_A2A_UNRECOGNISED, RULE_JSONRPC_ERROR};
use crate::json::pointer_push;
use crate::transcript::{Finding, Level, Locator};

/// A message or an artifact: the unit within which citations pair with results.
pub(super) struct Container {
    pub(super) is_artifact: bool,
    pub(super) role: String,
    pub(super) task_id: Option<String>,
    /// The message id or the artifact id.
    pub(super) id: Option<String>,
    pub(super) parts: Vec<PartAt>,
}

/// A Part, with where it was read (chunks of one artifact may come from several lines).
pub(super) struct PartAt {
    pub(super) value: Value,
    pub(super) pointer: String,
    pub(super) line: Option<usize>,
    /// Not a Part: an object's `metadata` that holds a citation (ADK's A2A export streams its
    /// session state there, `adk_actions.stateDelta`), read as a data Part's data would be.
    pub(super) in_metadata: bool,
}

pub(super) struct Collector<'f> {
    pub(super) file: &'f str,
    pub(super) containers: Vec<Container>,
    pub(super) findings: Vec<Finding>,
    pub(super) messages: HashMap<String, usize>,
    pub(super) artifacts: HashMap<(Option<String>, String), usize>,
    /// The citations read from metadata so far (canonical JSON): a state repeated in a later
    /// event's metadata (or a Task's) is the same claim, read once.
    metadata_seen: HashSet<String>,
}

impl<'f> Collector<'f> {
    pub(super) fn new(file: &'f str) -> Self {
        Collector {
            file,
            containers: Vec::new(),
            findings: Vec::new(),
            messages: HashMap::new(),
            artifacts: HashMap::new(),
            metadata_seen: HashSet::new(),
        }
    }

    /// The citations an object's `metadata` holds (ADK's session state in a status update), as
    /// a container of their own holding the metadata as data: read as a data Part's would be.
    /// Metadata whose citations were all read before (the same state repeated) is skipped.
    fn metadata(&mut self, owner: &Value, ptr: &str, line: Option<usize>, task_id: Option<&str>) {
        let Some(meta) = owner.get("metadata").filter(|m| m.is_object()) else { return };
        if !crate::transcript::mentions_citation(meta) {
            return;
        }
        let cited = crate::transcript::citations_in(meta);
        if !cited.is_empty() && cited.iter().all(|c| self.metadata_seen.contains(c)) {
            return;
        }
        self.metadata_seen.extend(cited);
        let part =
            PartAt { value: meta.clone(), pointer: pointer_push(ptr, "metadata"), line, in_metadata: true };
        let task_id = str_field(owner, TASK_ID).or_else(|| task_id.map(str::to_string));
        self.containers.push(Container {
            is_artifact: false,
            role: "agent".into(),
            task_id,
            id: None,
            parts: vec![part],
        });
    }

    fn finding(&mut self, ptr: &str, line: Option<usize>, rule: &str, level: Level, message: String) {
        let at = Locator::at(self.file, ptr).on_line(line);
        self.findings.push(Finding::new(at, rule, level, message));
    }

    fn malformed(&mut self, ptr: &str, line: Option<usize>, message: String) {
        self.finding(ptr, line, RULE_A2A_MALFORMED, Level::Must, message);
    }

    /// One top-level value: a JSON-RPC envelope, a bare A2A object, or an array of them.
    pub(super) fn record(&mut self, v: &Value, ptr: &str, line: Option<usize>) {
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
        self.metadata(t, ptr, line, task_id.as_deref());
    }

    fn status_update(&mut self, u: &Value, ptr: &str, line: Option<usize>) {
        let task_id = str_field(u, TASK_ID);
        if let Some(m) = u.get("status").and_then(|s| s.get("message")).filter(|m| m.is_object()) {
            let p = pointer_push(&pointer_push(ptr, "status"), "message");
            self.message(m, &p, line, task_id.as_deref());
        }
        self.metadata(u, ptr, line, task_id.as_deref());
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
        if let Some(&at) = id.as_ref().and_then(|id| self.messages.get(id)) {
            let seen = self.containers[at].parts.iter().map(|p| &p.value);
            let same = match field(m, PARTS) {
                Some((_, Value::Array(parts))) => seen.eq(parts.iter()),
                _ => seen.len() == 0,
            };
            if same {
                return; // the same message again (history and status, or a Task after a stream)
            }
            // The same id with other content: read it too, so no number a reader was shown goes
            // unaudited (taking either copy alone could hide the one the user saw).
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
                .map(|(i, p)| PartAt {
                    value: p.clone(),
                    pointer: pointer_push(&parts_ptr, i),
                    line,
                    in_metadata: false,
                })
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
