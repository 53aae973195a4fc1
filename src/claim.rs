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
    /// Its value in the units written (44 for `44%`); 0 when `unreadable`.
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
    /// Why a number found in the result cannot be compared (out of range, exponent too large,
    /// too long). Such a number never helps a claim pass: its claim is INVALID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

/// The longest number text read as a claim; longer is `unreadable` (no agent writes 100 digits,
/// and an attacker's megabyte of digits should not be echoed or parsed).
pub const MAX_NUMBER_TEXT: usize = 100;
/// The largest exponent magnitude read (`1e308` is near f64's end; a claim never needs more).
const MAX_EXPONENT: i64 = 300;

impl Claimed {
    /// Half a unit of the last shown digit, in the units written.
    pub fn half_unit(&self) -> f64 {
        0.5 * 10f64.powi(-self.decimals)
    }

    /// Why this number was listed as not compared: it cannot be read, or it names no measure.
    pub fn why_not_compared(&self) -> &str {
        self.unreadable.as_deref().unwrap_or("names no measure")
    }

    /// The whole number this text states exactly (`4654`, `4654.0`, `4.654e3`), or `None` when
    /// it has a fractional part however small (`4654.0000000000001`), a sign, or is unreadable.
    pub fn as_count(&self) -> Option<u64> {
        if self.unreadable.is_some() || self.percent {
            return None;
        }
        exact_count(&self.text)
    }
}

/// The whole, non-negative number a JSON number's text states exactly, decided on the digits,
/// not on a rounded `f64` (`4654.0000000000001` is not 4654). At most 2^53.
pub fn exact_count(text: &str) -> Option<u64> {
    let t = text.trim().strip_prefix('+').unwrap_or(text.trim());
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i64>().ok()?),
        None => (t, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty() || !(int.bytes().chain(frac.bytes())).all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !(-40..=20).contains(&exponent) {
        return None;
    }
    // digits × 10^(exponent − frac.len()), exactly.
    let digits: String = format!("{int}{frac}");
    let shift = exponent - frac.len() as i64;
    let digits = digits.trim_start_matches('0');
    let (whole, dropped) = if shift >= 0 {
        (format!("{digits}{}", "0".repeat(shift as usize)), "")
    } else {
        let cut = digits.len().saturating_sub((-shift) as usize);
        (digits[..cut].to_string(), &digits[cut..])
    };
    if dropped.bytes().any(|b| b != b'0') {
        return None;
    }
    let whole = whole.trim_start_matches('0');
    if whole.is_empty() {
        return Some(0);
    }
    let n: u64 = whole.parse().ok()?;
    (n <= 1 << 53).then_some(n)
}

/// How a text fails to be a claimed number.
#[derive(Debug, Clone, PartialEq)]
pub enum NotANumber {
    /// Not number syntax at all (`W6`, `4,210`): not a claim.
    Syntax,
    /// Number syntax that cannot be represented or compared, with why.
    Unreadable(String),
}

/// Parses a number as written: `44`, `0.440`, `-3.5`, `+32`, `4.4e-1`, `44%`, `44.0 %`.
pub fn parse_number(text: &str, key: Option<String>, pointer: String) -> Option<Claimed> {
    read_number(text, key, pointer).ok()
}

/// Like [`parse_number`], but says whether a failure was number syntax it cannot represent.
pub fn read_number(text: &str, key: Option<String>, pointer: String) -> Result<Claimed, NotANumber> {
    let t = text.trim();
    let (body, percent) = match t.strip_suffix('%') {
        Some(b) => (b.trim_end(), true),
        None => (t, false),
    };
    let unsigned = body.strip_prefix(['+', '-']).unwrap_or(body);
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits_ok = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let exponent_ok = |e: &str| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && digits_ok(e)
    };
    if int.is_empty() && frac.is_empty()
        || !digits_ok(int)
        || !digits_ok(frac)
        || !exponent.is_none_or(exponent_ok)
    {
        return Err(NotANumber::Syntax);
    }
    let unreadable = |why: String| NotANumber::Unreadable(why);
    if t.len() > MAX_NUMBER_TEXT {
        return Err(unreadable(format!(
            "a number of {} characters is longer than {MAX_NUMBER_TEXT}",
            t.len()
        )));
    }
    // Bounded before any arithmetic: `0.44e-2147483648` must not overflow the decimals count.
    let exponent: i64 = match exponent {
        None => 0,
        Some(e) => match e.parse::<i64>() {
            Ok(e) if e.abs() <= MAX_EXPONENT => e,
            _ => return Err(unreadable(format!("exponent {e} is beyond ±{MAX_EXPONENT}"))),
        },
    };
    let value: f64 = body.parse().map_err(|_| unreadable("not a representable number".into()))?;
    if !value.is_finite() {
        return Err(unreadable("out of the range of a 64-bit float".into()));
    }
    let nonzero = int.bytes().chain(frac.bytes()).any(|b| b != b'0');
    if nonzero && (value == 0.0 || value.abs() < f64::MIN_POSITIVE) {
        return Err(unreadable("too small to represent (underflows to 0)".into()));
    }
    let decimals = frac.len() as i64 - exponent;
    if decimals.abs() > MAX_EXPONENT {
        return Err(unreadable(format!("shows {decimals} decimals, beyond ±{MAX_EXPONENT}")));
    }
    Ok(Claimed {
        text: text.to_string(),
        value,
        decimals: decimals as i32,
        percent,
        key,
        pointer,
        unreadable: None,
    })
}

/// Every number among a result's leaves: JSON numbers, and strings that are a number or a
/// percentage. Each keeps the key it stood under (array elements take their parent's key).
/// A JSON number (or numeric string) that cannot be represented is kept, marked `unreadable`.
pub fn leaves(result: &Value) -> Vec<Claimed> {
    let mut out = Vec::new();
    walk(result, None, String::new(), &mut out);
    out
}

fn unreadable_leaf(text: &str, key: Option<&str>, pointer: String, why: String) -> Claimed {
    let shown = if text.len() > 40 {
        format!("{}… ({} bytes)", &text[..text.floor_char_boundary(40)], text.len())
    } else {
        text.to_string()
    };
    Claimed {
        text: shown,
        value: 0.0,
        decimals: 0,
        percent: false,
        key: key.map(str::to_string),
        pointer,
        unreadable: Some(why),
    }
}

fn walk(v: &Value, key: Option<&str>, pointer: String, out: &mut Vec<Claimed>) {
    match v {
        Value::Number(n) => {
            let text = n.to_string();
            match read_number(&text, key.map(str::to_string), pointer.clone()) {
                Ok(c) => out.push(c),
                // A JSON number is a number whatever its syntax says.
                Err(NotANumber::Unreadable(why)) => out.push(unreadable_leaf(&text, key, pointer, why)),
                Err(NotANumber::Syntax) => {
                    out.push(unreadable_leaf(&text, key, pointer, "not a number recite can read".into()))
                }
            }
        }
        Value::String(s) => match read_number(s, key.map(str::to_string), pointer.clone()) {
            Ok(c) => out.push(c),
            Err(NotANumber::Unreadable(why)) => out.push(unreadable_leaf(s, key, pointer, why)),
            Err(NotANumber::Syntax) => {}
        },
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, key, format!("{pointer}/{i}"), out);
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                walk(item, Some(k), crate::json::pointer_push(&pointer, k), out);
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
    match read_number(text, key, String::new()) {
        Ok(c) => Ok(c),
        Err(NotANumber::Unreadable(why)) => Err(format!("--claim {arg:?}: {why}")),
        Err(NotANumber::Syntax) => {
            Err(format!("--claim {arg:?}: expected a number such as 44%, 0.44 or Considered=44%"))
        }
    }
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

    fn unreadable(s: &str) -> String {
        match read_number(s, None, String::new()) {
            Err(NotANumber::Unreadable(why)) => why,
            other => panic!("{s}: expected unreadable, got {other:?}"),
        }
    }

    #[test]
    fn odd_numbers_huge_exponents_are_unreadable_not_overflowed() {
        // i32::MIN as an exponent once overflowed the decimals count (a wrapped tolerance).
        assert!(unreadable("0.44e-2147483648").contains("exponent"));
        assert!(unreadable("0.44e2147483648").contains("exponent"));
        assert!(unreadable("1e-99999999999999999999").contains("exponent"));
        assert!(unreadable("44e301%").contains("exponent"));
    }

    #[test]
    fn odd_numbers_out_of_range_are_unreadable() {
        assert!(unreadable("1e299000").contains("exponent"));
        assert!(unreadable(&"9".repeat(310)).contains("longer"));
        assert!(unreadable("1.5e-300").contains("decimals"));
        assert!(unreadable("0.0000000001e-299").contains("underflows"));
        // The edges that are still numbers.
        assert_eq!(p("1e300").value, 1e300);
        assert_eq!(p("-0").value, 0.0);
    }

    #[test]
    fn odd_numbers_in_results_are_kept_as_unreadable() {
        let v: Value = serde_json::from_str(
            r#"{"Considered": 1e400, "Familiar": 0.44e-2147483648, "label": "W6", "n": "1e999%"}"#,
        )
        .unwrap();
        let got: Vec<(String, bool)> =
            leaves(&v).into_iter().map(|c| (c.pointer, c.unreadable.is_some())).collect();
        assert_eq!(got, [("/Considered".into(), true), ("/Familiar".into(), true), ("/n".into(), true)]);
    }

    #[test]
    fn counts_are_exact_on_the_digits() {
        for (text, n) in
            [("4654", 4654), ("4654.0", 4654), ("4.654e3", 4654), ("+12", 12), ("0", 0), ("0.0e5", 0)]
        {
            assert_eq!(exact_count(text), Some(n), "{text}");
        }
        for text in ["4654.0000000000001", "4654.5", "-3", "4.6545e3", "1e30", "x", "", "9007199254740993"] {
            assert_eq!(exact_count(text), None, "{text}");
        }
    }
}
