//! The JSON report: the reference form, byte-identical for the same inputs.
//!
//! Sums of floating-point numbers computed in parallel can differ in their last bits from run
//! to run, so every non-integer number is written rounded to 12 significant digits: far more
//! than any claim shows, and stable. A claim's `difference` and `z` are kept to 6: they are small
//! differences of nearly equal numbers, so the last-bit noise of the recomputed value is ~1000
//! times larger relative to them, and at 12 digits it showed (e.g. `-0.0489473880926` in one run,
//! `…927` in the next).

use serde_json::{Number, Value};

use super::Report;

/// Significant digits kept for non-integer numbers.
pub const SIGNIFICANT: usize = 12;

/// Significant digits kept for the fields in [`DIFFERENCES`].
pub const SIGNIFICANT_DIFFERENCES: usize = 6;

/// Fields that are differences of nearly equal numbers (how far a claim is off, in the measure's
/// units and in standard errors).
pub const DIFFERENCES: [&str; 2] = ["difference", "z"];

/// The report as pretty JSON, with a final newline.
pub fn render(report: &Report) -> String {
    let mut v = serde_json::to_value(report).expect("a report always serializes");
    round_floats(&mut v);
    // Strings from the inputs are echoed at most MAX_ECHO_CHARS characters.
    super::escape::cap_json(&mut v);
    let mut s = serde_json::to_string_pretty(&v).expect("a value always serializes");
    s.push('\n');
    s
}

/// Rounds every non-integer number to [`SIGNIFICANT`] digits ([`SIGNIFICANT_DIFFERENCES`] for
/// the fields in [`DIFFERENCES`]), in place.
pub fn round_floats(v: &mut Value) {
    round_to(v, SIGNIFICANT)
}

fn round_to(v: &mut Value, digits: usize) {
    match v {
        Value::Number(n) => {
            let text = n.to_string();
            if text.contains(['.', 'e', 'E'])
                && let Some(f) = n.as_f64()
            {
                let rounded: f64 = format!("{f:.prec$e}", prec = digits - 1).parse().unwrap_or(f);
                if let Some(r) = Number::from_f64(rounded) {
                    *n = r;
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| round_to(x, digits)),
        Value::Object(o) => o.iter_mut().for_each(|(k, x)| {
            round_to(x, if DIFFERENCES.contains(&k.as_str()) { SIGNIFICANT_DIFFERENCES } else { digits })
        }),
        _ => {}
    }
}

/// The JSON Schema of the report, generated from the Rust types.
pub fn schema() -> String {
    let schema = schemars::schema_for!(Report);
    let mut s = serde_json::to_string_pretty(&schema).expect("a schema always serializes");
    s.push('\n');
    s
}
