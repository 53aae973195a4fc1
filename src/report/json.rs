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
    cap_strings(&mut v);
    let mut s = serde_json::to_string_pretty(&v).expect("a value always serializes");
    s.push('\n');
    s
}

/// Caps the strings from the inputs in place: each at [`MAX_ECHO_CHARS`] characters, but an
/// answer's text (`inputs[].answers[].text`) at [`MAX_TURN_CHARS`], as the HTML report shows a
/// turn, so its numbers' byte offsets hold for any answer shorter than that.
///
/// [`MAX_ECHO_CHARS`]: super::escape::MAX_ECHO_CHARS
/// [`MAX_TURN_CHARS`]: super::escape::MAX_TURN_CHARS
pub fn cap_strings(v: &mut Value) {
    use super::escape::{MAX_TURN_CHARS, cap_at, cap_json};
    let mut texts = Vec::new();
    for_answer_texts(v, |t| texts.push(std::mem::take(t)));
    cap_json(v);
    let mut texts = texts.into_iter();
    for_answer_texts(v, |t| {
        if let Some(Value::String(s)) = texts.next() {
            *t = Value::String(cap_at(&s, MAX_TURN_CHARS).into_owned());
        }
    });
}

/// Calls `f` on every `inputs[].answers[].text`, in order.
fn for_answer_texts(v: &mut Value, mut f: impl FnMut(&mut Value)) {
    let inputs = v.get_mut("inputs").and_then(Value::as_array_mut).into_iter().flatten();
    for answer in inputs.filter_map(|i| i.get_mut("answers")?.as_array_mut()).flatten() {
        if let Some(t) = answer.get_mut("text") {
            f(t);
        }
    }
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
