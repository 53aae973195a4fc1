//! Plain reader: `{"result": …, "citation": …}` pairs (or `"citations": […]`), arrays of them,
//! JSON lines of them, and bare citations.
//!
//! This is the format a person writes by hand to check one claim, so it is read literally: the
//! result is whatever is under `result`, and a citation given alone is checked alone, without a
//! conformance finding (the user left the result out on purpose).

use serde_json::Value;

use super::{
    Document, Finding, Format, Framed, Item, Level, Locator, RULE_CONFORMANCE, RULE_PAIRING,
    RULE_UNRECOGNISED, embedded, is_quantitative, looks_like_citation, pointer_push,
};

/// Reads `text` as plain pairs, whatever it looks like.
pub fn read(file: &str, text: &str) -> Document {
    read_framed(file, super::frame(file, text))
}

/// Reads one JSON value as plain input, literally (what `recite verify` reads when the value
/// is a pair: see [`is_pair`]).
pub fn read_value(file: &str, v: &Value) -> Document {
    let mut doc = Document::new(file, Format::Plain);
    decoded(&mut doc, v.clone(), "", None);
    doc
}

/// True when `v` is a `{result, citation}` / `{result, citations}` object (other keys, such as a
/// tool's own `source`, are allowed beside them).
pub fn is_pair(v: &Value) -> bool {
    v.as_object().is_some_and(|o| ["result", "citation", "citations"].iter().any(|k| o.contains_key(*k)))
}

/// Reads already framed input as plain pairs. Each record's value is taken apart, not copied:
/// its result and citation become the item's (a million JSON lines copied each line twice).
pub(crate) fn read_framed(file: &str, framed: Framed) -> Document {
    let mut doc = Document::new(file, Format::Plain);
    doc.findings = framed.findings;
    for r in framed.records {
        decoded(&mut doc, r.value, &r.pointer, r.line);
    }
    doc
}

/// Reads one value after decoding the JSON hidden in its strings (a result or a citation sent
/// as JSON text, JSON encoded twice, a Python repr): see [`super::embedded`].
fn decoded(doc: &mut Document, v: Value, ptr: &str, line: Option<usize>) {
    let (v, problems) = embedded::decode_owned(v, ptr);
    for p in problems {
        let at = Locator::at(&doc.file, &p.pointer).on_line(line);
        doc.findings.push(Finding::new(at, embedded::RULE_EMBEDDED, p.level, p.message));
    }
    value(doc, v, ptr, line);
}

fn value(doc: &mut Document, v: Value, ptr: &str, line: Option<usize>) {
    let at = Locator::at(&doc.file, ptr).on_line(line);
    if let Value::Array(a) = v {
        for (i, x) in a.into_iter().enumerate() {
            value(doc, x, &pointer_push(ptr, i), line);
        }
    } else if v.is_object() && is_pair(&v) {
        pair(doc, v, at);
    } else if v.is_object() && looks_like_citation(&v) {
        doc.items.push(Item { locator: at, result: None, citation: Some(v), by_shape: false });
    } else {
        let message = "neither a {result, citation} pair nor a citation; skipped";
        doc.findings.push(Finding::new(at, RULE_UNRECOGNISED, Level::Must, message));
    }
}

/// One `{result, citation}` / `{result, citations}` object, taken apart.
fn pair(doc: &mut Document, v: Value, at: Locator) {
    let Value::Object(mut o) = v else { return };
    let result = o.remove("result").filter(|r| !r.is_null());
    let mut cits: Vec<(Value, String)> = Vec::new();
    for key in ["citation", "citations"] {
        let kp = pointer_push(&at.pointer, key);
        match o.remove(key) {
            Some(Value::Array(list)) => {
                cits.extend(list.into_iter().enumerate().map(|(i, c)| (c, pointer_push(&kp, i))))
            }
            Some(Value::Null) | None => {}
            Some(c) => cits.push((c, kp)),
        }
    }
    let item = |pointer: String, result: Option<Value>, citation: Option<Value>| Item {
        locator: Locator { pointer, ..at.clone() },
        result,
        citation,
        by_shape: false,
    };
    match (cits.len(), result) {
        (0, Some(r)) if is_quantitative(&r) => {
            let pointer = pointer_push(&at.pointer, "result");
            let message = "a quantitative result with no citation";
            let locator = Locator { pointer: pointer.clone(), ..at.clone() };
            doc.findings.push(Finding::new(locator, RULE_CONFORMANCE, Level::Must, message));
            doc.items.push(item(pointer, Some(r), None));
        }
        (0, _) => {}
        (1, r) => {
            let (c, p) = cits.remove(0);
            doc.items.push(item(p, r, Some(c)));
        }
        (n, Some(Value::Array(rs))) if rs.len() == n => {
            let message = format!("{n} citations and a result array of {n}: paired in order");
            doc.findings.push(Finding::new(at.clone(), RULE_PAIRING, Level::Note, message));
            for ((c, p), r) in cits.into_iter().zip(rs) {
                doc.items.push(item(p, Some(r), Some(c)));
            }
        }
        (n, r) => {
            if r.is_some() {
                let message = format!("{n} citations share one result: each is checked against all of it");
                doc.findings.push(Finding::new(at.clone(), RULE_PAIRING, Level::Note, message));
            }
            for (c, p) in cits {
                doc.items.push(item(p, r.clone(), Some(c)));
            }
        }
    }
}
