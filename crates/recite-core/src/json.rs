//! The JSON toolkit every reader shares, so that each question about a value is answered one
//! way: JSON pointers, which values state numbers, which objects are citations, media types,
//! base64 payloads, and the whole numbers a double-only producer writes as `44.0`.
//!
//! It sits below every other module (it knows nothing of citations' meaning, catalogs or
//! reports), so the citation parser and the MOCA checks use it too.

use base64::Engine as _;
use serde_json::{Number, Value};

/// The media type of an Upperhand citation Part.
pub const CITATION_MEDIA_TYPE: &str = "application/vnd.upperhand.citations+json";

/// The media type of recite's report in a data Part: the JSON report `recite verify` / `recite
/// check --format json` writes (docs/report.schema.json), as recite's A2A agent answers it.
pub const REPORT_MEDIA_TYPE: &str = "application/vnd.recite.report+json";

/// True when `v` is shaped as recite's JSON report: an object with `report_version`, a
/// `summary` object and an `inputs` array. A data Part of [`REPORT_MEDIA_TYPE`] so shaped is a
/// settlement of other results' citations, not a quantitative result of its own: the numbers it
/// recomputes travel cited in Parts of their own.
pub fn is_recite_report(v: &Value) -> bool {
    v.get("report_version").is_some()
        && v.get("summary").is_some_and(Value::is_object)
        && v.get("inputs").is_some_and(Value::is_array)
}

/// A reference token escaped as RFC 6901 requires (`~` → `~0`, `/` → `~1`).
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// `base` with one more reference token, escaped.
pub fn pointer_push(base: &str, token: impl std::fmt::Display) -> String {
    let mut pointer = String::with_capacity(base.len() + 16);
    pointer.push_str(base);
    push_token(&mut pointer, token);
    pointer
}

/// Appends one more reference token, escaped, to `pointer` in place (a walk over a document
/// pushes and truncates one buffer instead of making a string per node).
pub fn push_token(pointer: &mut String, token: impl std::fmt::Display) {
    use std::fmt::Write;
    pointer.push('/');
    let start = pointer.len();
    let _ = write!(pointer, "{token}");
    if pointer[start..].contains(['~', '/']) {
        let escaped = escape_token(&pointer[start..]);
        pointer.truncate(start);
        pointer.push_str(&escaped);
    }
}

/// `a number`, `an object`, …: a value's JSON type in words, for messages.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// True when `s` is written as one number, by the claim parser's rules
/// ([`crate::claim::read_written`]): `44`, `-3.5`, `+32`, `.5`, `4.4e-1`, `44%`, `44.0 %`,
/// `4,595`, `9 189`, `$12`, `−3`, with white space around it allowed. A number the claim parser
/// cannot represent or will not guess at (`1e400`, `"4.595"`) is still a number the agent stated,
/// and must reach the claim (to be reported as not compared) rather than make its result look
/// non-quantitative.
pub fn is_numeric_text(s: &str) -> bool {
    crate::claim::states_number(s)
}

/// True when a leaf of `v`, at any depth, states a number: a JSON number or a numeric string
/// (`"44%"`, `"0.440"`, see [`is_numeric_text`]). Such a value is a quantitative result, so
/// Upperhand requires a citation beside it. MOCA citation records are not results: their numbers
/// (trust scores, offsets) are not claims.
pub fn is_quantitative(v: &Value) -> bool {
    match v {
        Value::Number(_) => true,
        Value::String(s) => is_numeric_text(s),
        Value::Array(a) => a.iter().any(is_quantitative),
        Value::Object(o) => !is_moca_record(v) && o.values().any(is_quantitative),
        _ => false,
    }
}

/// True when `v` has the shape of an Upperhand citation: an object whose `source` is an object
/// naming at least one of `table`, `column`, `function`, and which has a `study` or a `base`.
///
/// Deliberately lenient (one of the three source fields is enough) so that an incomplete
/// citation is still found, and then reported by validation rather than silently taken for a
/// result.
pub fn looks_like_citation(v: &Value) -> bool {
    let Some(o) = v.as_object() else { return false };
    let source_ok = o
        .get("source")
        .and_then(Value::as_object)
        .is_some_and(|s| ["table", "column", "function"].iter().any(|k| s.contains_key(*k)));
    source_ok && (o.contains_key("study") || o.contains_key("base"))
}

/// A MOCA citation record: `package`, `node` and `trust` objects.
pub fn is_moca_record(v: &Value) -> bool {
    ["package", "node", "trust"].iter().all(|k| v.get(*k).is_some_and(Value::is_object))
}

/// The spellings under which producers declare a media type.
const MEDIA_TYPE_KEYS: &[&str] = &["mediaType", "media_type", "mimeType", "mime_type", "contentType"];

/// The media type an object declares: its own `mediaType` (or another spelling of it), else the
/// same under its `metadata` (A2A v0.3's convention).
pub fn declared_media_type(v: &Value) -> Option<&str> {
    fn own(o: &Value) -> Option<&str> {
        MEDIA_TYPE_KEYS.iter().find_map(|k| o.get(*k).and_then(Value::as_str))
    }
    own(v).or_else(|| own(v.get("metadata")?))
}

/// True when two media types are the same: compared by their essence (type/subtype), ignoring
/// case, parameters (`; charset=utf-8`) and white space, as RFC 9110 says.
pub fn same_media_type(a: &str, b: &str) -> bool {
    let essence = |m: &str| m.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence(a) == essence(b)
}

/// True when `media_type` is the citations media type.
pub fn is_citation_media_type(media_type: &str) -> bool {
    same_media_type(media_type, CITATION_MEDIA_TYPE)
}

/// True when `media_type` is plain JSON (`application/json`), which says nothing more.
pub fn is_json_media_type(media_type: &str) -> bool {
    same_media_type(media_type, "application/json")
}

/// Decodes base64 (standard or URL-safe alphabet, padded or not, white space ignored).
pub fn decode_base64(text: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bare = compact.trim_end_matches('=');
    STANDARD_NO_PAD.decode(bare).or_else(|_| URL_SAFE_NO_PAD.decode(bare)).ok()
}

/// The JSON carried as base64 text (a v1.0 `raw` Part, a v0.3 file's `bytes`, an AG-UI
/// document part's inline `source.value`). Text that is already JSON is taken as it is.
pub fn decode_base64_json(text: &str) -> Result<Value, Base64JsonError> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        return serde_json::from_str(text).map_err(|e| Base64JsonError::NotJson(e.to_string()));
    }
    let bytes = decode_base64(text).ok_or(Base64JsonError::NotBase64)?;
    let utf8 = std::str::from_utf8(&bytes).map_err(|_| Base64JsonError::NotUtf8)?;
    serde_json::from_str(utf8.strip_prefix('\u{feff}').unwrap_or(utf8))
        .map_err(|e| Base64JsonError::DecodedNotJson(e.to_string()))
}

/// Why text meant to carry JSON (as itself or as base64) does not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Base64JsonError {
    /// Text that looks like JSON but does not parse (serde_json's words).
    #[error("not JSON: {0}")]
    NotJson(String),
    /// Neither JSON nor base64.
    #[error("not base64")]
    NotBase64,
    /// base64 of bytes that are not UTF-8.
    #[error("base64 of bytes that are not UTF-8 text")]
    NotUtf8,
    /// base64 of text that does not parse as JSON (serde_json's words).
    #[error("base64 of text that is not JSON: {0}")]
    DecodedNotJson(String),
}

/// True when `text` is a whole number written as a double, `44.0` or `-3.0`.
fn is_whole_double(text: &str) -> bool {
    let t = text.strip_prefix('-').unwrap_or(text);
    t.strip_suffix(".0").is_some_and(|int| !int.is_empty() && int.bytes().all(|b| b.is_ascii_digit()))
}

/// True when `text` is a bare integer literal, `44` or `-3`.
fn is_integer_literal(text: &str) -> bool {
    let t = text.strip_prefix('-').unwrap_or(text);
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
}

/// How a set of values writes its whole numbers: (written `N.0`, written `N`).
pub fn whole_number_spellings<'a>(values: impl IntoIterator<Item = &'a Value>) -> (usize, usize) {
    fn walk(v: &Value, counts: &mut (usize, usize)) {
        match v {
            Value::Number(n) => {
                let text = n.to_string();
                if is_whole_double(&text) {
                    counts.0 += 1;
                } else if is_integer_literal(&text) {
                    counts.1 += 1;
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, counts)),
            Value::Object(o) => o.values().for_each(|x| walk(x, counts)),
            _ => {}
        }
    }
    let mut counts = (0, 0);
    values.into_iter().for_each(|v| walk(v, &mut counts));
    counts
}

/// True when values written by one producer look printed from doubles: a citation's `base.n`
/// (an integer by nature) is written `N.0`, and no whole number anywhere is written as a bare
/// integer. Such a producer (ProtoJSON's `google.protobuf.Value`, which has only doubles) cannot
/// write `44`, so its `44.0` says nothing about precision.
pub fn prints_doubles<'a>(values: impl IntoIterator<Item = &'a Value> + Clone) -> bool {
    fn base_n_as_double(v: &Value) -> bool {
        match v {
            Value::Object(o) => {
                let n = o.get("base").and_then(|b| b.get("n")).and_then(Value::as_number);
                n.is_some_and(|n| is_whole_double(&n.to_string())) || o.values().any(base_n_as_double)
            }
            Value::Array(a) => a.iter().any(base_n_as_double),
            _ => false,
        }
    }
    let (_, integers) = whole_number_spellings(values.clone());
    integers == 0 && values.into_iter().any(base_n_as_double)
}

/// Rewrites every number written `N.0` as the integer `N`, in place: what the agent wrote
/// before a double-only serializer added the `.0`.
pub fn whole_doubles_to_integers(v: &mut Value) {
    match v {
        Value::Number(n) => {
            let text = n.to_string();
            if is_whole_double(&text)
                && let Ok(int) = text[..text.len() - 2].parse::<Number>()
            {
                *n = int;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(whole_doubles_to_integers),
        Value::Object(o) => o.values_mut().for_each(whole_doubles_to_integers),
        _ => {}
    }
}

/// `v` as compact JSON with every object's keys sorted, so two spellings of one value are equal.
pub fn canonical(v: &Value) -> String {
    fn write(v: &Value, out: &mut String) {
        match v {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    write(&map[k.as_str()], out);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(x, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(v, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numeric_text_follows_the_claim_grammar() {
        for yes in [
            "44",
            "44%",
            " 0.440 ",
            "+32",
            "-3.5",
            ".5",
            "4.4e-1",
            "44.0 %",
            "1e400",
            "0.44e-2147483648",
            "1,234",
            "4.595",
            "\u{2212}3",
        ] {
            assert!(is_numeric_text(yes), "{yes}");
        }
        for no in ["", "%", ".", "W6", "2026-04-02", "1.2.3", "44 percent", "e5", "4e", "--3", "NaN"] {
            assert!(!is_numeric_text(no), "{no}");
        }
    }

    #[test]
    fn numeric_strings_make_a_result_quantitative() {
        assert!(is_quantitative(&json!({"Considered": "47%"})));
        assert!(is_quantitative(&json!([{"x": "0.440"}])));
        assert!(!is_quantitative(&json!({"brand": "Versant", "wave": "W6"})));
        let moca = json!({"package": {}, "node": {}, "trust": {"score": 0.9}});
        assert!(!is_quantitative(&moca));
    }

    #[test]
    fn media_types_compare_by_essence() {
        assert!(is_citation_media_type("Application/VND.upperhand.citations+JSON ; charset=utf-8"));
        assert!(!is_citation_media_type("application/json"));
        assert!(is_json_media_type("application/json;charset=UTF-8"));
        let part = json!({"data": {}, "metadata": {"mimeType": "application/json"}});
        assert_eq!(declared_media_type(&part), Some("application/json"));
    }

    #[test]
    fn base64_json_in_every_alphabet() {
        let want = json!({"study": "S"});
        for text in
            ["eyJzdHVkeSI6ICJTIn0=", "eyJzdHVkeSI6ICJTIn0", "eyJzd\nHVkeSI6ICJTIn0=", "{\"study\": \"S\"}"]
        {
            assert_eq!(decode_base64_json(text).as_ref(), Ok(&want), "{text}");
        }
        assert!(decode_base64_json("!!").is_err());
    }

    #[test]
    fn whole_doubles_become_integers() {
        let mut v = json!({"n": 9189.0, "Considered": 44.0, "share": 0.44, "neg": -3.0, "list": [1.0, 1.5]});
        whole_doubles_to_integers(&mut v);
        assert_eq!(v.to_string(), r#"{"n":9189,"Considered":44,"share":0.44,"neg":-3,"list":[1,1.5]}"#);
        let cit = json!({"study": "S", "base": {"name": "b", "n": 4654.0}});
        assert!(prints_doubles([&json!({"a": 44.0, "b": 0.5}), &cit]));
        assert!(prints_doubles([&json!({"value": [cit.clone()]})]));
        assert!(!prints_doubles([&json!({"a": 44.0, "n": 4654}), &cit]));
        // Without a base n written as a double, a `1.0` may be meant.
        assert!(!prints_doubles([&json!({"Aware": 1.0, "b": 0.5})]));
    }

    #[test]
    fn pointer_tokens_are_escaped() {
        assert_eq!(pointer_push("/a", "b/c~d"), "/a/b~1c~0d");
        assert_eq!(pointer_push("", 3), "/3");
        // In place, one buffer pushed and truncated as a walk does.
        let mut p = String::from("/x");
        push_token(&mut p, "a~/b");
        assert_eq!(p, "/x/a~0~1b");
        p.truncate(2);
        push_token(&mut p, 12);
        push_token(&mut p, "");
        assert_eq!(p, "/x/12/");
    }
}
