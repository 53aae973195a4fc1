//! Finding Upperhand citations inside a tool result's JSON, and what they accompany.
//!
//! AG-UI has no Part type, so producers carry the citation Part however their framework lets
//! them: as an object with a media type (`mediaType`, `mimeType`, …) of
//! `application/vnd.upperhand.citations+json` wrapping `data`, under a `citation`/`citations`
//! key, or as a bare object of the citation's shape ([`crate::json::looks_like_citation`], the
//! same test the A2A reader applies). [`split`] takes the citations out and returns the rest of
//! the content, which is the result they accompany. MOCA citation records (`package`, `node`, `trust`) are neither
//! Upperhand citations nor quantitative claims, and are left alone.

use serde_json::{Map, Value};

use crate::json::{
    declared_media_type, decode_base64_json, escape_token, is_citation_media_type, is_moca_record,
    looks_like_citation,
};

/// A citation found in a value.
#[derive(Debug, Clone)]
pub struct Found {
    /// JSON pointer to the citation, from the event's root.
    pub pointer: String,
    /// The citation itself.
    pub citation: Value,
    /// True when recognised by key or shape rather than by media type.
    pub by_shape: bool,
}

/// A value with its citations taken out.
#[derive(Debug, Default)]
pub struct Split {
    /// The citations, in document order.
    pub citations: Vec<Found>,
    /// What remains (`None` when nothing does).
    pub rest: Option<Value>,
}

/// Parses a tool result's `content` (a JSON string, or in AG-UI 1.0 an array of content parts
/// whose text parts may hold JSON) and splits it. `None` when the content is not JSON at all.
pub fn split_content(content: &Value, pointer: &str) -> Option<Split> {
    match content {
        Value::String(text) => {
            let parsed = serde_json::from_str::<Value>(text.trim()).ok()?;
            Some(split(&parsed, pointer))
        }
        Value::Array(parts) => {
            let mut out = Split::default();
            let mut rest = Vec::new();
            for (i, part) in parts.iter().enumerate() {
                let here = format!("{pointer}/{i}");
                let text_json = (part.get("type").and_then(Value::as_str) == Some("text"))
                    .then(|| part.get("text").and_then(Value::as_str))
                    .flatten()
                    .and_then(|t| serde_json::from_str::<Value>(t.trim()).ok());
                let piece = match (text_json, source_citation(part)) {
                    (Some(parsed), _) => split(&parsed, &format!("{here}/text")),
                    (None, Some(citation)) => Split {
                        citations: vec![Found {
                            pointer: format!("{here}/source/value"),
                            citation,
                            by_shape: false,
                        }],
                        rest: None,
                    },
                    (None, None) => split(part, &here),
                };
                out.citations.extend(piece.citations);
                rest.extend(piece.rest);
            }
            out.rest = collapse(rest, parts.len());
            Some(out)
        }
        _ => None,
    }
}

/// A 1.0 content part whose `source` is inline data of the citation media type: its `value` is
/// base64 (JSON text is taken as it is).
fn source_citation(part: &Value) -> Option<Value> {
    let source = part.get("source")?;
    let value = source.get("value").and_then(Value::as_str)?;
    declared_media_type(source)
        .is_some_and(is_citation_media_type)
        .then(|| decode_base64_json(value).ok())
        .flatten()
}

/// Takes the citations out of a value.
pub fn split(value: &Value, pointer: &str) -> Split {
    match value {
        Value::Object(map) => {
            if declared_media_type(value).is_some_and(is_citation_media_type) {
                return Split { citations: unwrap_data(map, pointer), rest: None };
            }
            if looks_like_citation(value) {
                let found = Found { pointer: pointer.to_string(), citation: value.clone(), by_shape: true };
                return Split { citations: vec![found], rest: None };
            }
            if is_moca_record(value) {
                return Split { citations: Vec::new(), rest: Some(value.clone()) };
            }
            let mut out = Split::default();
            let mut rest = Map::new();
            for (key, member) in map {
                let here = format!("{pointer}/{}", escape_token(key));
                let piece = if key == "citation" || key == "citations" {
                    by_key(member, &here)
                } else {
                    split(member, &here)
                };
                out.citations.extend(piece.citations);
                if let Some(r) = piece.rest {
                    rest.insert(key.clone(), r);
                }
            }
            let removed = rest.len() < map.len();
            out.rest = (!(removed && rest.is_empty())).then_some(Value::Object(rest));
            out
        }
        Value::Array(items) => {
            let mut out = Split::default();
            let mut rest = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let piece = split(item, &format!("{pointer}/{i}"));
                out.citations.extend(piece.citations);
                rest.extend(piece.rest);
            }
            out.rest = collapse(rest, items.len());
            out
        }
        other => Split { citations: Vec::new(), rest: Some(other.clone()) },
    }
}

/// Rebuilds an array's remainder: gone when all went, the one element when only it is left.
fn collapse(mut rest: Vec<Value>, before: usize) -> Option<Value> {
    match (rest.len(), rest.len() < before) {
        (0, true) => None,
        (1, true) => rest.pop(),
        _ => Some(Value::Array(rest)),
    }
}

/// The value of a `citation`/`citations` key: each object in it is a citation (unless it is a
/// MOCA record); anything else stays in the result.
fn by_key(member: &Value, pointer: &str) -> Split {
    let one = |v: &Value, p: String| -> Option<Found> {
        let map = v.as_object()?;
        if is_moca_record(v) {
            return None;
        }
        if declared_media_type(v).is_some_and(is_citation_media_type) {
            return unwrap_data(map, &p).into_iter().next();
        }
        Some(Found { pointer: p, citation: v.clone(), by_shape: true })
    };
    match member {
        Value::Object(_) => match one(member, pointer.to_string()) {
            Some(found) => Split { citations: vec![found], rest: None },
            None => Split { citations: Vec::new(), rest: Some(member.clone()) },
        },
        Value::Array(items) => {
            let mut out = Split::default();
            let mut rest = Vec::new();
            for (i, item) in items.iter().enumerate() {
                match one(item, format!("{pointer}/{i}")) {
                    Some(found) => out.citations.push(found),
                    None => rest.push(item.clone()),
                }
            }
            out.rest = (!rest.is_empty()).then_some(Value::Array(rest));
            out
        }
        other => Split { citations: Vec::new(), rest: Some(other.clone()) },
    }
}

/// The citations in a media-typed wrapper's `data` (an object, or an array of them).
fn unwrap_data(map: &Map<String, Value>, pointer: &str) -> Vec<Found> {
    let found =
        |citation: &Value, pointer: String| Found { pointer, citation: citation.clone(), by_shape: false };
    match map.get("data") {
        Some(Value::Array(items)) => {
            items.iter().enumerate().map(|(i, c)| found(c, format!("{pointer}/data/{i}"))).collect()
        }
        Some(data) => vec![found(data, format!("{pointer}/data"))],
        // Bytes: the citation as base64 (an A2A `raw` Part relayed as is).
        None => match map.get("raw").and_then(Value::as_str).map(decode_base64_json) {
            Some(Ok(citation)) => vec![found(&citation, format!("{pointer}/raw"))],
            _ => Vec::new(),
        },
    }
}
