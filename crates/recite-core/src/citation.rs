//! An Upperhand Citations v1 Part: parsed from JSON and validated against the spec.
//!
//! Parsing is done by hand over [`serde_json::Value`] rather than with a derive, because every
//! problem must be reported with the JSON pointer of the offending field, all of them at once,
//! and because the spec lets agents add fields of their own (kept, and ignored by the checks).

use serde::Serialize;
use serde_json::{Map, Value};

/// Longest name recite accepts in a citation field; longer ones are refused before any look-up.
pub const MAX_NAME_LEN: usize = 1024;

/// A validated Upperhand citation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Citation {
    /// Dataset name, matching the agent's data-source declaration.
    pub study: String,
    /// Human-readable snapshot id (wave, date range, version).
    pub period: String,
    /// ISO-8601 date or interval the data was collected, as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fielded: Option<String>,
    /// The population the number is computed over.
    pub base: Base,
    /// Weight column name, or `None` for unweighted (absent or `"unweighted"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<String>,
    /// The re-run hook.
    pub source: Source,
    /// Caveats the claim carried.
    pub warnings: Vec<String>,
    /// Fields the spec does not define, kept as they came (the spec allows them).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

/// `base {name, n}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Base {
    /// The base's name, looked up in the catalog.
    pub name: String,
    /// The claimed unweighted count.
    pub n: u64,
}

/// `source {table, column, function}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Source {
    /// Table name in the study's data layer.
    pub table: String,
    /// Column name in that table.
    pub column: String,
    /// Registered extractor function.
    pub function: String,
}

/// One way a citation breaks the spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Problem {
    /// JSON pointer into the citation (`""` is the citation itself).
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() { "(citation)" } else { &self.pointer };
        write!(f, "{at}: {}", self.message)
    }
}

/// Parses and validates a citation Part's data. Returns every problem found, not just the first.
pub fn parse(v: &Value) -> Result<Citation, Vec<Problem>> {
    let mut problems = Vec::new();
    let Some(obj) = v.as_object() else {
        return Err(vec![problem("", format!("a citation is a JSON object, not {}", kind(v)))]);
    };
    let study = required_string(obj, "study", "", &mut problems);
    let period = required_string(obj, "period", "", &mut problems);
    let fielded = optional_string(obj, "fielded", &mut problems);
    if let Some(f) = &fielded
        && let Err(why) = check_iso8601(f)
    {
        problems.push(problem("/fielded", why.to_string()));
    }
    let base = match obj.get("base") {
        None => {
            problems.push(problem("/base", "required field `base` {name, n} is missing".into()));
            None
        }
        Some(Value::Object(b)) => {
            let name = required_string(b, "name", "/base", &mut problems);
            let n = match b.get("n") {
                None => {
                    problems.push(problem("/base/n", "required field `base.n` is missing".into()));
                    None
                }
                Some(n) => match positive_integer(n) {
                    Ok(n) => Some(n),
                    Err(why) => {
                        problems.push(problem("/base/n", why.to_string()));
                        None
                    }
                },
            };
            name.zip(n).map(|(name, n)| Base { name, n })
        }
        Some(other) => {
            problems
                .push(problem("/base", format!("`base` must be an object {{name, n}}, not {}", kind(other))));
            None
        }
    };
    let weight =
        optional_string(obj, "weight", &mut problems).filter(|w| !w.eq_ignore_ascii_case("unweighted"));
    let source = match obj.get("source") {
        None => {
            problems.push(problem(
                "/source",
                "required field `source` {table, column, function} is missing".into(),
            ));
            None
        }
        Some(Value::Object(s)) => {
            let table = required_string(s, "table", "/source", &mut problems);
            let column = required_string(s, "column", "/source", &mut problems);
            let function = required_string(s, "function", "/source", &mut problems);
            match (table, column, function) {
                (Some(table), Some(column), Some(function)) => Some(Source { table, column, function }),
                _ => None,
            }
        }
        Some(other) => {
            problems.push(problem(
                "/source",
                format!("`source` must be an object {{table, column, function}}, not {}", kind(other)),
            ));
            None
        }
    };
    let mut warnings = Vec::new();
    match obj.get("warnings") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, w) in items.iter().enumerate() {
                match w.as_str() {
                    Some(s) if s.len() <= MAX_NAME_LEN => warnings.push(s.to_string()),
                    Some(_) => problems.push(problem(&format!("/warnings/{i}"), too_long())),
                    None => problems.push(problem(
                        &format!("/warnings/{i}"),
                        format!("a warning must be a string, not {}", kind(w)),
                    )),
                }
            }
        }
        Some(other) => problems.push(problem(
            "/warnings",
            format!("`warnings` must be an array of strings, not {}", kind(other)),
        )),
    }
    let known = ["study", "period", "fielded", "base", "weight", "source", "warnings"];
    let extra: Map<String, Value> = obj
        .iter()
        .filter(|(k, _)| !known.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !problems.is_empty() {
        return Err(problems);
    }
    match (study, period, base, source) {
        (Some(study), Some(period), Some(base), Some(source)) => {
            Ok(Citation { study, period, fielded, base, weight, source, warnings, extra })
        }
        // Unreachable in practice: a missing piece always pushed a problem above.
        _ => Err(vec![problem("", "the citation is incomplete".into())]),
    }
}

fn problem(pointer: &str, message: String) -> Problem {
    Problem { pointer: pointer.to_string(), message }
}

fn too_long() -> String {
    format!("longer than {MAX_NAME_LEN} bytes; no data layer names things like that")
}

/// The JSON type of a value, in words, for messages.
pub fn kind(v: &Value) -> &'static str {
    crate::json::type_name(v)
}

fn required_string(
    obj: &Map<String, Value>,
    key: &str,
    at: &str,
    problems: &mut Vec<Problem>,
) -> Option<String> {
    // Made only for a problem: every claim's citation passes here five times.
    let pointer = || format!("{at}/{}", crate::json::escape_token(key));
    match obj.get(key) {
        None => {
            let field =
                if at.is_empty() { key.to_string() } else { format!("{}.{key}", &at[1..].replace('/', ".")) };
            problems.push(problem(&pointer(), format!("required field `{field}` is missing")));
            None
        }
        Some(Value::String(s)) if s.trim().is_empty() => {
            problems.push(problem(&pointer(), "must not be empty".into()));
            None
        }
        Some(Value::String(s)) if s.len() > MAX_NAME_LEN => {
            problems.push(problem(&pointer(), too_long()));
            None
        }
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            problems.push(problem(&pointer(), format!("must be a string, not {}", kind(other))));
            None
        }
    }
}

fn optional_string(obj: &Map<String, Value>, key: &str, problems: &mut Vec<Problem>) -> Option<String> {
    match obj.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.len() > MAX_NAME_LEN => {
            problems.push(problem(&format!("/{key}"), too_long()));
            None
        }
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            problems.push(problem(&format!("/{key}"), format!("must be a string, not {}", kind(other))));
            None
        }
    }
}

/// `base.n` must be a JSON number with an integral value greater than zero. A string such as
/// `"4210"` is refused: the spec says integer, and agents that quote numbers should be told.
fn positive_integer(v: &Value) -> Result<u64, NotPositiveInteger> {
    let Value::Number(n) = v else {
        return Err(NotPositiveInteger::NotANumber { kind: kind(v), shown: short(v) });
    };
    // Decided on the digits, not a rounded f64: `4210.0` and `4.21e3` are the integer 4210 (as
    // in JSON Schema), `4210.0000000000001` is not, however close its f64.
    match crate::claim::exact_count(&n.to_string()) {
        Some(0) => Err(NotPositiveInteger::Zero),
        Some(u) => Ok(u),
        None => Err(NotPositiveInteger::NotWhole { shown: short(v) }),
    }
}

/// A `base.n` that is not a positive integer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotPositiveInteger {
    /// Not a JSON number (a string, an object…).
    #[error("`base.n` must be a positive integer, not {kind} ({shown})")]
    NotANumber {
        /// The JSON kind it is.
        kind: &'static str,
        /// The value, shortened.
        shown: String,
    },
    /// Zero.
    #[error("`base.n` must be a positive integer, not 0")]
    Zero,
    /// A number that is not a whole one, or too large.
    #[error("`base.n` must be a positive integer, not {shown}")]
    NotWhole {
        /// The value, shortened.
        shown: String,
    },
}

/// A `fielded` that is not an ISO-8601 date or interval.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadFielded {
    /// Not a date, date-time, duration or interval of them.
    #[error("`fielded` must be an ISO-8601 date or interval (e.g. 2026-04-02/2026-04-19), not {0:?}")]
    NotIso8601(String),
    /// An interval whose end is before its start.
    #[error("`fielded` interval {0:?} ends before it starts")]
    Backwards(String),
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 40 { format!("{}…", &s[..s.floor_char_boundary(40)]) } else { s }
}

/// Checks an ISO-8601 date, date-time or interval (`start/end`, `start/duration`,
/// `duration/end`) as the spec's `fielded` allows. Intervals must not run backwards.
pub fn check_iso8601(s: &str) -> Result<(), BadFielded> {
    let bad = || BadFielded::NotIso8601(s.to_string());
    match s.split_once('/') {
        None => parse_instant(s).map(|_| ()).ok_or_else(bad),
        Some((a, b)) => {
            let (a_dur, b_dur) = (a.starts_with('P'), b.starts_with('P'));
            match (a_dur, b_dur) {
                (false, false) => {
                    let start = parse_instant(a).ok_or_else(bad)?;
                    let end = parse_instant(b).ok_or_else(bad)?;
                    if end < start {
                        return Err(BadFielded::Backwards(s.to_string()));
                    }
                    Ok(())
                }
                (false, true) if parse_instant(a).is_some() && is_duration(b) => Ok(()),
                (true, false) if is_duration(a) && parse_instant(b).is_some() => Ok(()),
                _ => Err(bad()),
            }
        }
    }
}

/// A calendar date (`YYYY-MM-DD`, `YYYY-MM`, `YYYY`) or an RFC 3339 date-time, as a sortable
/// timestamp (seconds).
fn parse_instant(s: &str) -> Option<i64> {
    use chrono::NaiveDate;
    // `YYYY-MM-DD`, what citations carry, read without chrono's format parser (which each of a
    // million claims went through three times); any other text takes the general path.
    let b = s.as_bytes();
    if b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && [0, 1, 2, 3, 5, 6, 8, 9].iter().all(|&i| b[i].is_ascii_digit())
    {
        let digits = |r: std::ops::Range<usize>| b[r].iter().fold(0u32, |n, d| n * 10 + u32::from(d - b'0'));
        let date = NaiveDate::from_ymd_opt(i32::try_from(digits(0..4)).ok()?, digits(5..7), digits(8..10))?;
        return Some(date.and_hms_opt(0, 0, 0)?.and_utc().timestamp());
    }
    if let Ok(dt) = chrono::DateTime::parse_from_rfc3339(s) {
        return Some(dt.timestamp());
    }
    if let Ok(dt) = chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S") {
        return Some(dt.and_utc().timestamp());
    }
    let date = match s.len() {
        10 => NaiveDate::parse_from_str(s, "%Y-%m-%d").ok(),
        7 => NaiveDate::parse_from_str(&format!("{s}-01"), "%Y-%m-%d").ok(),
        4 if s.bytes().all(|b| b.is_ascii_digit()) => NaiveDate::from_ymd_opt(s.parse().ok()?, 1, 1),
        _ => None,
    }?;
    Some(date.and_hms_opt(0, 0, 0)?.and_utc().timestamp())
}

/// `PnYnMnWnDTnHnMnS`, at least one component.
fn is_duration(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('P') else { return false };
    let (date, time) = rest.split_once('T').unwrap_or((rest, ""));
    let ok = |part: &str, units: &str| {
        let mut seen = 0;
        let mut digits = 0;
        let mut last = 0;
        for c in part.chars() {
            if c.is_ascii_digit() {
                digits += 1;
            } else if let Some(pos) = units.find(c) {
                if digits == 0 || pos < last {
                    return None;
                }
                last = pos + 1;
                digits = 0;
                seen += 1;
            } else {
                return None;
            }
        }
        (digits == 0).then_some(seen)
    };
    match (ok(date, "YMWD"), ok(time, "HMS")) {
        (Some(a), Some(b)) => a + b > 0 && (rest.contains('T') <= (b > 0)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec_example() -> Value {
        json!({
            "study": "Versant Mega Tracker",
            "period": "W6 (April 2026)",
            "fielded": "2026-04-02/2026-04-19",
            "base": { "name": "Adults 18-74, aware of brand", "n": 4210 },
            "weight": "main_weight",
            "source": { "table": "versant_flat", "column": "s14r5", "function": "extractFunnel" },
            "warnings": ["Base under 100 in the 65-74 cell"],
            "agentNote": "kept"
        })
    }

    #[test]
    fn the_spec_example_parses_and_keeps_unknown_fields() {
        let c = parse(&spec_example()).unwrap();
        assert_eq!(c.base.n, 4210);
        assert_eq!(c.source.function, "extractFunnel");
        assert_eq!(c.extra.get("agentNote"), Some(&json!("kept")));
    }

    #[test]
    fn base_n_must_be_a_positive_integer() {
        for bad in [json!(0), json!(-3), json!(4210.5), json!("4210"), json!(null)] {
            let mut v = spec_example();
            v["base"]["n"] = bad.clone();
            let problems = parse(&v).unwrap_err();
            assert_eq!(problems.len(), 1, "{bad}");
            assert_eq!(problems[0].pointer, "/base/n", "{bad}");
        }
    }

    #[test]
    fn every_problem_is_listed_with_its_pointer() {
        let v = json!({"period": 6, "base": {"name": "x"}, "source": {"table": "t", "column": 5}});
        let pointers: Vec<String> = parse(&v).unwrap_err().into_iter().map(|p| p.pointer).collect();
        assert_eq!(pointers, ["/study", "/period", "/base/n", "/source/column", "/source/function"]);
    }

    #[test]
    fn fielded_dates_and_intervals() {
        for ok in
            ["2026-04-02", "2026-04", "2026", "2026-04-02/2026-04-19", "2026-04-02/P17D", "P2W/2026-04-19"]
        {
            assert!(check_iso8601(ok).is_ok(), "{ok}");
        }
        for bad in [
            "April 2026",
            "2026-13-01",
            "2026-04-19/2026-04-02",
            "2026-04-02/",
            "P/2026-04-02",
            "2026-04-02/PT",
        ] {
            assert!(check_iso8601(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_plain_date_reads_as_chrono_reads_it() {
        let chrono_reads = |s: &str| {
            let d = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()?;
            Some(d.and_hms_opt(0, 0, 0)?.and_utc().timestamp())
        };
        for s in
            ["2026-04-02", "2024-02-29", "2025-02-29", "2026-13-01", "2026-00-10", "2026-04-31", "0000-01-01"]
        {
            assert_eq!(parse_instant(s), chrono_reads(s), "{s}");
        }
    }
}
