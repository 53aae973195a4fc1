//! The JSON report: the reference form, byte-identical for the same inputs.
//!
//! Sums of floating-point numbers computed in parallel can differ in their last bits from run
//! to run, so every non-integer number is written rounded to 12 significant digits: far more
//! than any claim shows, and stable.

use serde_json::{Number, Value};

use super::Report;

/// Significant digits kept for non-integer numbers.
pub const SIGNIFICANT: usize = 12;

/// The report as pretty JSON, with a final newline.
pub fn render(report: &Report) -> String {
    let mut v = serde_json::to_value(report).expect("a report always serializes");
    round_floats(&mut v);
    let mut s = serde_json::to_string_pretty(&v).expect("a value always serializes");
    s.push('\n');
    s
}

/// Rounds every non-integer number to [`SIGNIFICANT`] digits, in place.
pub fn round_floats(v: &mut Value) {
    match v {
        Value::Number(n) => {
            let text = n.to_string();
            if text.contains(['.', 'e', 'E'])
                && let Some(f) = n.as_f64()
            {
                let rounded: f64 = format!("{f:.prec$e}", prec = SIGNIFICANT - 1).parse().unwrap_or(f);
                if let Some(r) = Number::from_f64(rounded) {
                    *n = r;
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(round_floats),
        Value::Object(o) => o.values_mut().for_each(round_floats),
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
