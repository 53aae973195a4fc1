//! How the JSON report rounds its floats: the digits it keeps and the rounding itself, shared by
//! the value path ([`super::json`]) and the typed writer ([`super::typed`]), so neither imports
//! the other for it.

/// Significant digits kept for non-integer numbers.
pub const SIGNIFICANT: usize = 12;

/// Significant digits kept for the fields in [`DIFFERENCES`].
pub const SIGNIFICANT_DIFFERENCES: usize = 6;

/// Fields that are differences of nearly equal numbers (how far a claim is off, in the measure's
/// units and in standard errors).
pub const DIFFERENCES: [&str; 2] = ["difference", "z"];

/// `f` rounded to `digits` significant digits (through its decimal form, so the double written
/// is the one nearest that decimal).
pub fn round_significant(f: f64, digits: usize) -> f64 {
    use std::fmt::Write;
    // Formatted on the stack: every float of a report passes here, and a heap string each was
    // a tenth of writing one.
    let mut text = StackText::default();
    if write!(text, "{f:.prec$e}", prec = digits - 1).is_err() {
        return format!("{f:.prec$e}", prec = digits - 1).parse().unwrap_or(f);
    }
    text.as_str().parse().unwrap_or(f)
}

/// A short text on the stack: writing fails past its 64 bytes.
struct StackText {
    bytes: [u8; 64],
    len: usize,
}

impl Default for StackText {
    fn default() -> StackText {
        StackText { bytes: [0; 64], len: 0 }
    }
}

impl StackText {
    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

impl std::fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        self.bytes.get_mut(self.len..end).ok_or(std::fmt::Error)?.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_on_the_stack_gives_the_bits_of_rounding_through_a_string() {
        let by_string =
            |f: f64, digits: usize| -> f64 { format!("{f:.prec$e}", prec = digits - 1).parse().unwrap_or(f) };
        let mut values =
            vec![0.0, -0.0, 1.0, 0.5, 44.2, 0.1 + 0.2, 1e-320, f64::MIN_POSITIVE, f64::MAX, f64::MIN];
        values.extend([
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            123_456_789_012_345.68,
            9.999_999_999_995,
        ]);
        let mut x = 0.123_456_789_012_345_6_f64;
        for _ in 0..2000 {
            x = (x * 7.3 + 0.11).fract() * 10f64.powi((x * 1000.0) as i32 % 600 - 300);
            values.push(x);
            values.push(-x);
        }
        for f in values {
            for digits in [SIGNIFICANT, SIGNIFICANT_DIFFERENCES, 1, 17] {
                let (a, b) = (round_significant(f, digits), by_string(f, digits));
                assert!(
                    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                    "{f:e} at {digits}: {a:e} vs {b:e}"
                );
            }
        }
    }
}
