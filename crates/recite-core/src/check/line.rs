//! The typed line reader: one JSON line of the common shape — one `{result, citation}` pair
//! whose citation has only the fields the spec names, each valid — read straight into the
//! claim's [`Item`] and its parsed [`Citation`], with no `serde_json::Value` of the line, no
//! ordered maps but the result's, and no second walk over the citation.
//!
//! It reads only what the general path (the framing layer's record, [`transcript::plain`],
//! [`citation::parse`]) would read to the same item and citation with no finding and no
//! problem. Anything else — another key, a citation problem, a string that holds JSON, a result
//! an A2A reader would claim, a duplicate key, JSON that does not parse — is left to the general
//! path ([`read`] gives `None`), which says what was wrong and where, as before.

use serde::Deserialize;
use serde_json::{Number, Value};

use crate::citation::{self, Base, Citation, MAX_NAME_LEN, Source};
use crate::claim;
use crate::transcript::{Item, Locator, embedded::looks_like_json, is_plain_result};

/// A line's value: exactly `result` and `citation` (serde refuses any other key and a key
/// given twice, which sends the line to the general path).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Pair {
    /// `null` and absent read as `None` (the general path drops a `null` result too).
    result: Option<Value>,
    citation: Option<Fields>,
}

/// A citation with only the spec's fields (an agent's own fields go to the general path,
/// which keeps them).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    study: String,
    period: String,
    fielded: Option<String>,
    base: BaseFields,
    weight: Option<String>,
    source: SourceFields,
    warnings: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BaseFields {
    name: String,
    /// Kept as written (`arbitrary_precision`): `4210.0` is decided on its digits.
    n: Number,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SourceFields {
    table: String,
    column: String,
    function: String,
}

/// The claim of one line of `file` (1-based `line`, its text without the line break), read
/// typed; `None` when the line is not of the common shape and must be read the general way.
pub(super) fn read(file: &str, line: usize, text: &str) -> Option<(Item, Citation)> {
    let Pair { result: Some(result), citation: Some(c) } = serde_json::from_str::<Pair>(text).ok()? else {
        return None;
    };
    // The general path decodes JSON held in strings, and reads a line whose result is an A2A
    // Task or Message as A2A.
    if holds_json(&result) || !is_plain_result(&result) {
        return None;
    }
    let citation = valid(c)?;
    let locator = Locator { line: Some(line), ..Locator::at(file, "/citation") };
    Some((Item { locator, result: Some(result), citation: None, by_shape: false }, citation))
}

/// The citation [`citation::parse`] would give for these fields, when it would give one.
fn valid(c: Fields) -> Option<Citation> {
    let name = |s: &str| !s.trim().is_empty() && s.len() <= MAX_NAME_LEN && !looks_like_json(s);
    let text = |s: &str| s.len() <= MAX_NAME_LEN && !looks_like_json(s);
    let names = [&c.study, &c.period, &c.base.name, &c.source.table, &c.source.column, &c.source.function];
    let fine = names.iter().all(|s| name(s))
        && c.fielded.as_deref().is_none_or(|f| text(f) && citation::check_iso8601(f).is_ok())
        && c.weight.as_deref().is_none_or(text)
        && c.warnings.iter().flatten().all(|w| text(w));
    if !fine {
        return None;
    }
    let n = claim::exact_count(c.base.n.as_str()).filter(|&n| n > 0)?;
    Some(Citation {
        study: c.study,
        period: c.period,
        fielded: c.fielded,
        base: Base { name: c.base.name, n },
        weight: c.weight.filter(|w| !w.eq_ignore_ascii_case("unweighted")),
        source: Source { table: c.source.table, column: c.source.column, function: c.source.function },
        warnings: c.warnings.unwrap_or_default(),
        extra: serde_json::Map::new(),
    })
}

/// True when a string of `v` looks like JSON (the general path would decode it).
fn holds_json(v: &Value) -> bool {
    match v {
        Value::String(s) => looks_like_json(s),
        Value::Array(a) => a.iter().any(holds_json),
        Value::Object(o) => o.values().any(holds_json),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{Framed, Framing, Record, plain};

    /// The general path's reading of one line: the plain reader's items (citations parsed)
    /// and findings, or `None` when the line is not a plain record.
    fn general(text: &str) -> Option<(Vec<(Item, crate::check::Parsed)>, usize)> {
        let value: Value = serde_json::from_str(text).ok()?;
        if !crate::transcript::is_plain_record(&value) {
            return None;
        }
        let record =
            Record { value, line: Some(7), pointer: String::new(), object_lines: Vec::new(), first_line: 7 };
        let framed = Framed { framing: Framing::Sequence, records: vec![record], findings: Vec::new() };
        let d = plain::read_framed("f.jsonl", framed);
        let items = d
            .items
            .into_iter()
            .map(|mut i| {
                let p = i.citation.take().map(|c| citation::parse(&c));
                (i, p)
            })
            .collect();
        Some((items, d.findings.len()))
    }

    const CIT: &str = r#"{"study":"Versant Mega Tracker","period":"W1 (November 2025)","base":{"name":"All adults 18-74","n":19888},"source":{"table":"versant_flat","column":"q20r12","function":"extractNPS"},"weight":"main_weight","fielded":"2025-11-03/2025-11-20"}"#;

    fn line(result: &str, citation: &str) -> String {
        format!(r#"{{"result":{result},"citation":{citation}}}"#)
    }

    /// Every line the typed reader reads, it reads as the general path does; what it leaves
    /// is left to the general path.
    #[test]
    fn the_typed_reading_is_the_general_one() {
        let result = r#"{"label":"Likelihood to recommend: Ostrel","passives":"27.7%","n":19888}"#;
        let typed = [
            line(result, CIT),
            line(r#""44%""#, CIT),
            line(r#"[{"a":"1%"},2.50]"#, CIT),
            line(result, &CIT.replace(r#""n":19888"#, r#""n":19888.0"#)),
            line(result, &CIT.replace(r#""n":19888"#, r#""n":1.9888e4"#)),
            line(result, &CIT.replace("main_weight", "Unweighted")),
            line(result, &CIT.replace("Versant", r#"Vers\u0061nt \"Mega\""#)),
            line(result, &CIT.replace(r#","fielded":"2025-11-03/2025-11-20""#, r#","fielded":null"#)),
            line(result, &CIT.replace(r#""weight":"main_weight","#, r#""warnings":["few","[x]"],"#)),
            format!(r#"{{"citation":{CIT},"r\u0065sult":{result}}}"#),
        ];
        for text in &typed {
            let (item, cit) = read("f.jsonl", 7, text).unwrap_or_else(|| panic!("not typed: {text}"));
            let (mut items, findings) = general(text).unwrap();
            assert_eq!((items.len(), findings), (1, 0), "{text}");
            let (want, parsed) = items.remove(0);
            assert_eq!(item.locator, want.locator, "{text}");
            assert_eq!(item.result, want.result, "{text}");
            assert_eq!(item.by_shape, want.by_shape, "{text}");
            assert_eq!(Some(Ok(cit)), parsed, "{text}");
        }
        let left = [
            line(result, &CIT.replace(r#""n":19888"#, r#""n":0"#)),
            line(result, &CIT.replace(r#""n":19888"#, r#""n":19888.5"#)),
            line(result, &CIT.replace(r#""n":19888"#, r#""n":"19888""#)),
            line(result, &CIT.replace("2025-11-20", "2025-10-20")),
            line(result, &CIT.replace("Versant Mega Tracker", " ")),
            line(result, &CIT.replace("main_weight", r#"{\"n\": 1}"#)),
            line(r#"{"text":"{\"Considered\": \"44%\"}"}"#, CIT),
            line(r#"{"kind":"message","parts":[]}"#, CIT),
            line(result, &CIT.replace(r#""weight""#, r#""agentNote":"kept","weight""#)),
            line(result, &CIT.replace(r#""n":19888}"#, r#""n":19888,"extra":1}"#)),
            line("null", CIT),
            line(result, "null"),
            format!(r#"{{"result":{result},"citations":[{CIT}]}}"#),
            format!(r#"{{"result":{result},"result":{result},"citation":{CIT}}}"#),
            format!(r#"{{"result":{result},"citation":{CIT},"jsonrpc":"2.0"}}"#),
            format!(r#"{{"result":{result},"citation":{CIT}}} x"#),
        ];
        for text in &left {
            assert!(read("f.jsonl", 7, text).is_none(), "typed: {text}");
        }
    }
}
