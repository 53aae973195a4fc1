//! Pass 2: what each Part is. Text; citations (by media type, by shape, as JSON text or as
//! base64 bytes); a data Part's value (the SDK v0.3 adapters' `{"value": …}` wrapper undone); an
//! ADK tool result, split into its citations and its result.

use serde_json::{Map, Value};

use super::RULE_A2A_MALFORMED;
use super::detect::{field, kind, type_name};
use super::walk::PartAt;
use crate::json::{
    self, declared_media_type, is_citation_media_type, is_json_media_type, is_quantitative,
    looks_like_citation, pointer_push,
};
use crate::transcript::agui::upperhand;
use crate::transcript::{Finding, Level, Locator, RULE_CONFORMANCE, embedded};

/// What one Part is, for pairing.
pub(super) enum Kind {
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

/// ADK's tool Part type, `metadata.adk_type` (or `type` in older versions and other ports).
fn tool_type(part: &Value) -> Option<&str> {
    field(part.get("metadata")?, &["adk_type", "type"]).and_then(|(_, v)| v.as_str())
}

pub(super) fn classify(p: &PartAt, at: &Locator, findings: &mut Vec<Finding>) -> Kind {
    let mut malformed = |pointer: String, message: String| {
        let at = Locator { pointer, line: p.line, ..at.clone() };
        findings.push(Finding::new(at, RULE_A2A_MALFORMED, Level::Must, message));
        Kind::Ignored
    };
    let part = &p.value;
    if p.in_metadata {
        // Metadata is data already, JSON hidden in its strings decoded as in a data Part.
        let (decoded, problems) = embedded::decode(part, &p.pointer);
        report(problems, at, p.line, findings);
        return Kind::Data(decoded, p.pointer.clone());
    }
    if !part.is_object() {
        return malformed(p.pointer.clone(), format!("a Part must be an object, found {}", type_name(part)));
    }
    let kind = kind(part);
    let mt = declared_media_type(part).or_else(|| part.get("file").and_then(declared_media_type));
    let cites = mt.is_some_and(is_citation_media_type);
    if let Some(text) = part.get("text") {
        return match text.as_str() {
            Some(t) if cites => citations_in_text(t, &pointer_push(&p.pointer, "text"), at, p.line, findings),
            Some(t) => text_part(t, &pointer_push(&p.pointer, "text"), at, p.line, findings),
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
    // Some bindings (the JS SDK's v0.3 REST) keep the wrapper but drop the marker: a wrapped
    // citation, or list of them, is unwrapped all the same.
    let citations = |v: &Value| {
        looks_like_citation(v)
            || v.as_array().is_some_and(|a| !a.is_empty() && a.iter().all(looks_like_citation))
    };
    let data = match data.get("value") {
        Some(inner) if (compat || citations(inner)) && data.as_object().is_some_and(|o| o.len() == 1) => {
            data_ptr = pointer_push(&data_ptr, "value");
            inner
        }
        _ => data,
    };
    if cites {
        return citations_in_data(data, &data_ptr, at, p.line, findings);
    }
    // A verifier's settlement (recite's own report) re-runs other results' citations; the
    // numbers it recomputes come cited in Parts of their own, so it is not a result to cite.
    if mt == Some(crate::json::REPORT_MEDIA_TYPE) && crate::json::is_recite_report(data) {
        return Kind::Ignored;
    }
    // JSON hidden in strings (ADK's `{"result": "<json text>"}`, a string `data`): decoded.
    let (decoded, problems) = embedded::decode(data, &data_ptr);
    report(problems, at, p.line, findings);
    let data = &decoded;
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

/// A text Part: prose, or JSON a framework wrote as text (a tool result serialised into a text
/// Part, documents joined, a Python repr), which is then read as a data Part's data would be.
fn text_part(text: &str, ptr: &str, at: &Locator, line: Option<usize>, findings: &mut Vec<Finding>) -> Kind {
    let Some(decoded) = embedded::decode_text_at(text, ptr) else { return Kind::Text(text.to_string()) };
    report(decoded.problems, at, line, findings);
    match decoded.value {
        Some(v) if v.is_object() || v.is_array() => Kind::Data(v, ptr.to_string()),
        _ => Kind::Text(text.to_string()),
    }
}

/// The findings for strings that held JSON recite could not read (or read in an unusual form).
fn report(problems: Vec<embedded::Problem>, at: &Locator, line: Option<usize>, findings: &mut Vec<Finding>) {
    for p in problems {
        let at = Locator { pointer: p.pointer, line, ..at.clone() };
        findings.push(Finding::new(at, embedded::RULE_EMBEDDED, p.level, p.message));
    }
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
pub(super) type Located = (Value, String);
/// A citation with its JSON pointer and whether it was recognised by shape.
pub(super) type Cited = (Value, String, bool);

/// Splits an ADK tool response into the citations inside it and the result they accompany:
/// `response.citation`, `response.citations[]` (a media-typed wrapper `{"mediaType", "data"}`
/// unwrapped, as ADK's A2A export writes the citation Part), and any citation-shaped value (or
/// array of them) under another key are citations; the rest of the response is the result (the
/// citation's own numbers, such as base.n, are not claims). `response.result` alone (ADK's
/// wrapper for a tool's non-dict return) is looked into.
pub(super) fn split_tool_response(data: &Value, ptr: &str) -> (Vec<Cited>, Option<Located>) {
    let (mut resp, mut rptr) = match data.get("response") {
        Some(r) => (r, pointer_push(ptr, "response")),
        None => (data, ptr.to_string()),
    };
    // ADK wraps a tool's non-dict return as `{"result": …}`: a JSON string, decoded by now.
    if let Some(inner) =
        resp.get("result").filter(|r| r.is_object() && resp.as_object().is_some_and(|o| o.len() == 1))
    {
        resp = inner;
        rptr = pointer_push(&rptr, "result");
    }
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
        if named {
            // As the AG-UI reader reads the same key: a media-typed wrapper
            // `{"mediaType": …, "data": {…}}` (ADK's A2A export) is unwrapped.
            let split = upperhand::by_key(v, &kp);
            cits.extend(split.citations.into_iter().map(|f| (f.citation, f.pointer, false)));
            if let Some(r) = split.rest {
                rest.insert(k.clone(), r);
            }
        } else if looks_like_citation(v) {
            cits.push((v.clone(), kp, true));
        } else if let Some(list) = v.as_array().filter(|a| !a.is_empty() && a.iter().all(looks_like_citation))
        {
            cits.extend(list.iter().enumerate().map(|(i, c)| (c.clone(), pointer_push(&kp, i), true)));
        } else {
            rest.insert(k.clone(), v.clone());
        }
    }
    let rest = Value::Object(rest);
    (cits, is_quantitative(&rest).then_some((rest, rptr)))
}
