//! MOCA citation records: their key, span, shape, how an answer refers to them, and how two
//! copies of one differ.
//!
//! The shape follows `schemas/v1/citation-record.schema.json` of the MOCA specification
//! (openmoca/moca-spec, Reader contract §7): `package {id, version, digest, signed, signers?}`,
//! `node {id, ref, path, type, title?, …}`, `trust {status, declaredVerified, attestedReviews,
//! stale, inForce, superseded, contested, …}`, optional `span {start, end}`, `text`, `evidence`.
//! `node.ref` is `<package id>@<version>#<path>`. Only what the AG-UI binding relies on is
//! checked structurally here; the whole schema is applied when the user supplies it.

use serde_json::Value;

/// An object with `package`, `node` and `trust` objects.
pub fn is_record(value: &Value) -> bool {
    ["package", "node", "trust"].iter().all(|k| value.get(*k).is_some_and(Value::is_object))
}

/// A string at a JSON pointer.
fn text<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value.pointer(pointer).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The key a client records a citation by (client rule §4): `node.ref`, or else `node.id` with
/// `package.digest` written `<node.id> <package.digest>`.
pub fn key(record: &Value) -> Option<String> {
    if let Some(r) = text(record, "/node/ref") {
        return Some(r.to_string());
    }
    Some(format!("{} {}", text(record, "/node/id")?, text(record, "/package/digest")?))
}

/// True when two records are about the same node of the same package: equal `node.ref`s when
/// both have one, else equal `node.id` and `package.digest`.
pub fn same_node(a: &Value, b: &Value) -> bool {
    match (text(a, "/node/ref"), text(b, "/node/ref")) {
        (Some(x), Some(y)) => x == y,
        _ => {
            let id = |r: &Value| {
                (text(r, "/node/id").map(str::to_string), text(r, "/package/digest").map(str::to_string))
            };
            let (ia, ib) = (id(a), id(b));
            ia.0.is_some() && ia.1.is_some() && ia == ib
        }
    }
}

/// The span a record covers (`span`, or `node.span`), written so that key order does not
/// matter; empty for the whole node.
pub fn span(record: &Value) -> String {
    let span = record.get("span").or_else(|| record.pointer("/node/span"));
    match span {
        None | Some(Value::Null) => String::new(),
        Some(s) => match (s.get("start"), s.get("end")) {
            (Some(a), Some(b)) => format!("{a}-{b}"),
            _ => s.to_string(),
        },
    }
}

/// What makes a record unusable as a citation record, in words (empty when it is one).
pub fn shape_errors(record: &Value) -> Vec<String> {
    if !record.is_object() {
        return vec!["the record is not an object".to_string()];
    }
    let mut out: Vec<String> = ["package", "node", "trust"]
        .iter()
        .filter(|k| !record.get(**k).is_some_and(Value::is_object))
        .map(|k| format!("no `{k}` object"))
        .collect();
    if out.is_empty() && key(record).is_none() {
        out.push("the node has neither `ref` nor `id` with `package.digest`".to_string());
    }
    out
}

/// The versioned node references an answer may use for a record: `node.ref`, and
/// `<package.id>@<package.version>#<node.path>` built from its parts.
pub fn references(record: &Value) -> Vec<String> {
    let mut out: Vec<String> = text(record, "/node/ref").map(str::to_string).into_iter().collect();
    if let (Some(id), Some(v), Some(p)) =
        (text(record, "/package/id"), text(record, "/package/version"), text(record, "/node/path"))
    {
        let built = format!("{id}@{v}#{p}");
        if !out.contains(&built) {
            out.push(built);
        }
    }
    out
}

/// Where the answer first refers to a citation: the earliest byte offset of its marker or of a
/// node reference for its record.
pub fn first_mention(answer: &str, marker: Option<&str>, record: &Value) -> Option<usize> {
    marker
        .filter(|m| !m.is_empty())
        .map(str::to_string)
        .into_iter()
        .chain(references(record))
        .filter_map(|needle| answer.find(&needle))
        .min()
}

/// The JSON pointers at which a cited record differs from the Reader's record. Leaving out the
/// top-level `text` is the one change allowed (service rule §3).
pub fn changes(cited: &Value, reader: &Value) -> Vec<String> {
    let mut reader = reader.clone();
    if let (Some(c), Value::Object(r)) = (cited.as_object(), &mut reader)
        && !c.contains_key("text")
    {
        r.shift_remove("text");
    }
    let mut out = Vec::new();
    diff(cited, &reader, "", &mut out);
    out
}

fn diff(a: &Value, b: &Value, pointer: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (key, yv) in y {
                let here = format!("{pointer}/{}", crate::json::escape_token(key));
                match x.get(key) {
                    Some(xv) => diff(xv, yv, &here, out),
                    None => out.push(here),
                }
            }
            for key in x.keys().filter(|k| !y.contains_key(*k)) {
                out.push(format!("{pointer}/{}", crate::json::escape_token(key)));
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (xv, yv)) in x.iter().zip(y).enumerate() {
                diff(xv, yv, &format!("{pointer}/{i}"), out);
            }
        }
        (Value::Number(x), Value::Number(y)) => {
            if x != y && x.as_f64() != y.as_f64() {
                out.push(pointer.to_string());
            }
        }
        _ if a == b => {}
        _ => out.push(pointer.to_string()),
    }
}
