//! Claimed numbers, kept as the text the agent wrote.
//!
//! `0.440` claims three decimals and `44` a whole percent: the text sets the tolerance, so a
//! number is never parsed to `f64` and forgotten. serde_json is built with
//! `arbitrary_precision`, which keeps each JSON number's original text.

use serde::Serialize;
use serde_json::Value;

/// One number an agent claimed.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Claimed {
    /// The text as written, e.g. `0.440`, `44%`, `+32`.
    pub text: String,
    /// Its value in the units written (44 for `44%`).
    pub value: f64,
    /// Digits after the decimal point that the text shows (negative for `4.4e3`-style).
    pub decimals: i32,
    /// Written with a `%` sign.
    pub percent: bool,
    /// The key it was found under, or the measure named on the command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// JSON pointer to it within the claimed result (empty for command-line claims).
    pub pointer: String,
}

impl Claimed {
    /// Half a unit of the last shown digit, in the units written.
    pub fn half_unit(&self) -> f64 {
        0.5 * 10f64.powi(-self.decimals)
    }
}

/// Parses a number as written: `44`, `0.440`, `-3.5`, `+32`, `4.4e-1`, `44%`, `44.0 %`.
pub fn parse_number(text: &str, key: Option<String>, pointer: String) -> Option<Claimed> {
    let t = text.trim();
    let (body, percent) = match t.strip_suffix('%') {
        Some(b) => (b.trim_end(), true),
        None => (t, false),
    };
    let unsigned = body.strip_prefix(['+', '-']).unwrap_or(body);
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], unsigned[i + 1..].parse::<i32>().ok()?),
        None => (unsigned, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits_ok = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() && frac.is_empty() || !digits_ok(int) || !digits_ok(frac) {
        return None;
    }
    let value: f64 = body.parse().ok()?;
    if !value.is_finite() {
        return None;
    }
    let decimals = frac.len() as i32 - exponent;
    Some(Claimed { text: text.to_string(), value, decimals, percent, key, pointer })
}

/// Every number among a result's leaves: JSON numbers, and strings that are a number or a
/// percentage. Each keeps the key it stood under (array elements take their parent's key).
pub fn leaves(result: &Value) -> Vec<Claimed> {
    let mut out = Vec::new();
    walk(result, None, String::new(), &mut out);
    out
}

fn walk(v: &Value, key: Option<&str>, pointer: String, out: &mut Vec<Claimed>) {
    match v {
        Value::Number(n) => {
            if let Some(c) = parse_number(&n.to_string(), key.map(str::to_string), pointer) {
                out.push(c);
            }
        }
        Value::String(s) if s.len() < 64 => {
            if let Some(c) = parse_number(s, key.map(str::to_string), pointer) {
                out.push(c);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, key, format!("{pointer}/{i}"), out);
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                let escaped = k.replace('~', "~0").replace('/', "~1");
                walk(item, Some(k), format!("{pointer}/{escaped}"), out);
            }
        }
        _ => {}
    }
}

/// Parses a `--claim` argument: `VALUE` or `MEASURE=VALUE`.
pub fn parse_arg(arg: &str) -> Result<Claimed, String> {
    let (key, text) = match arg.rsplit_once('=') {
        Some((k, v)) => (Some(k.trim().to_string()), v.trim()),
        None => (None, arg.trim()),
    };
    parse_number(text, key, String::new())
        .ok_or_else(|| format!("--claim {arg:?}: expected a number such as 44%, 0.44 or Considered=44%"))
}

/// A name folded for matching keys to measures: lower case, letters and digits only.
pub fn fold(name: &str) -> String {
    name.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Claimed {
        parse_number(s, None, String::new()).unwrap()
    }

    #[test]
    fn shown_precision_sets_half_a_unit() {
        assert_eq!(p("44").half_unit(), 0.5);
        assert_eq!(p("0.440").half_unit(), 0.0005);
        assert!((p("44.0%").half_unit() - 0.05).abs() < 1e-15);
        assert_eq!(p("4.4e3").half_unit(), 50.0);
        assert!(p("44%").percent);
        assert_eq!(p("+32").value, 32.0);
    }

    #[test]
    fn non_numbers_are_not_claims() {
        for s in ["W6", "", "%", "1.2.3", "NaN", "inf", "4,210", "0x10"] {
            assert!(parse_number(s, None, String::new()).is_none(), "{s}");
        }
    }

    #[test]
    fn leaves_keep_text_keys_and_pointers() {
        let v: Value =
            serde_json::from_str(r#"{"brand":"Versant","funnel":{"Aware":1.000,"a/b":"44%"},"n":[4210]}"#)
                .unwrap();
        let got: Vec<(String, Option<String>, String)> =
            leaves(&v).into_iter().map(|c| (c.text, c.key, c.pointer)).collect();
        assert_eq!(
            got,
            [
                ("1.000".into(), Some("Aware".into()), "/funnel/Aware".into()),
                ("44%".into(), Some("a/b".into()), "/funnel/a~1b".into()),
                ("4210".into(), Some("n".into()), "/n/0".into()),
            ]
        );
    }
}
