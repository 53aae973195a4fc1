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
use crate::transcript::embedded::{self, Problem};

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
    /// Strings in the content that looked like JSON and could not be read, or were read in an
    /// unusual form ([`embedded`]), each to become a finding.
    pub unread: Vec<Problem>,
}

/// Parses a tool result's `content` (a JSON string, or in AG-UI 1.0 an array of content parts
/// whose text parts may hold JSON) and splits it. JSON hidden in strings is decoded first
/// ([`embedded`]: JSON inside a string inside the content, JSON encoded twice, joined documents,
/// a Python repr), and what looks like JSON but cannot be read is in [`Split::unread`]. `None`
/// when the content is not JSON at all.
pub fn split_content(content: &Value, pointer: &str) -> Option<Split> {
    match content {
        Value::String(text) => {
            let decoded = embedded::decode_text_at(text, pointer)?;
            let mut out = match &decoded.value {
                Some(parsed) => split(parsed, pointer),
                None => Split::default(),
            };
            out.unread = decoded.problems;
            Some(out)
        }
        Value::Array(parts) => {
            let mut out = Split::default();
            let mut rest = Vec::new();
            for (i, part) in parts.iter().enumerate() {
                let here = format!("{pointer}/{i}");
                let text_json = (part.get("type").and_then(Value::as_str) == Some("text"))
                    .then(|| part.get("text").and_then(Value::as_str))
                    .flatten()
                    .and_then(|t| embedded::decode_text_at(t, &format!("{here}/text")));
                let piece = match (text_json, source_citation(part)) {
                    (Some(decoded), _) => {
                        out.unread.extend(decoded.problems);
                        match decoded.value {
                            Some(parsed) => split(&parsed, &format!("{here}/text")),
                            None => Split { rest: Some(part.clone()), ..Split::default() },
                        }
                    }
                    (None, Some(citation)) => Split {
                        citations: vec![Found {
                            pointer: format!("{here}/source/value"),
                            citation,
                            by_shape: false,
                        }],
                        ..Split::default()
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
                return Split { citations: unwrap_data(map, pointer), ..Split::default() };
            }
            if looks_like_citation(value) {
                let found = Found { pointer: pointer.to_string(), citation: value.clone(), by_shape: true };
                return Split { citations: vec![found], ..Split::default() };
            }
            if is_moca_record(value) {
                return Split { rest: Some(value.clone()), ..Split::default() };
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
        other => Split { rest: Some(other.clone()), ..Split::default() },
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
/// MOCA record), a media-typed wrapper `{"mediaType": …, "data": {…}}` unwrapped; anything else
/// stays in the result. The A2A reader splits ADK tool responses with it too.
pub(crate) fn by_key(member: &Value, pointer: &str) -> Split {
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
            Some(found) => Split { citations: vec![found], ..Split::default() },
            None => Split { rest: Some(member.clone()), ..Split::default() },
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
        other => Split { rest: Some(other.clone()), ..Split::default() },
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
