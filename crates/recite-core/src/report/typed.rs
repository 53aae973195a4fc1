//! The typed JSON writer: a value written in the JSON report's form straight from its Rust type,
//! the same bytes as building its `serde_json::Value`, rounding it ([`round_floats`]), capping
//! it ([`cap_json`]) and printing that, without the value in between.
//!
//! A claim's value took about a fifth of a warm run: its tree of maps and strings, a formatted
//! and re-parsed copy of every float, then the pretty text copied again to indent it. Here a
//! [`serde_json::ser::Formatter`] does all three as the serializer writes: it rounds each float
//! to the digits its key calls for, cuts each string at [`MAX_ECHO_CHARS`] characters, and
//! indents every line to the depth the value sits at in the report.
//!
//! What it cannot write as the value path would, it refuses ([`pretty`] and [`compact`] return
//! `None`) and the caller takes the value path: a key long enough to be cut (two cut keys can
//! become one key there), a float in a key, an `f32` or a raw value. The reports never hold one
//! but for a hostile input's keys.
//!
//! [`round_floats`]: super::json::round_floats
//! [`cap_json`]: super::escape::cap_json

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter};

use super::escape::MAX_ECHO_CHARS;
use super::round::{DIFFERENCES, SIGNIFICANT, SIGNIFICANT_DIFFERENCES, round_significant};

/// `value` as the JSON report prints it at a depth whose lines are indented by `indent` spaces
/// (the first line not indented): `pretty_at(&part_value(value), indent)`, or `None` when only
/// the value path can write it.
pub fn pretty(value: &impl Serialize, indent: usize) -> Option<String> {
    write(value, Some(indent))
}

/// `value` as one line of JSON in the report's form: `serde_json::to_string(&part_value(value))`,
/// or `None` when only the value path can write it.
pub fn compact(value: &impl Serialize) -> Option<String> {
    write(value, None)
}

/// [`pretty`] appended to `out`; `false`, with `out` as it was, when only the value path can
/// write it. Many values rendered into one buffer take no buffer of their own each.
pub fn pretty_into(value: &impl Serialize, indent: usize, out: &mut Vec<u8>) -> bool {
    let start = out.len();
    let mut ser = serde_json::Serializer::with_formatter(&mut *out, ReportFormatter::new(Some(indent)));
    if value.serialize(&mut ser).is_err() {
        out.truncate(start);
        return false;
    }
    true
}

fn write(value: &impl Serialize, indent: Option<usize>) -> Option<String> {
    let mut out = Vec::with_capacity(4096);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, ReportFormatter::new(indent));
    // The formatter refuses with an error, which ends the serialization.
    value.serialize(&mut ser).ok()?;
    // Every byte written came from a `&str` or is ASCII, and a string is only cut at a char
    // boundary.
    Some(String::from_utf8(out).expect("the formatter writes UTF-8"))
}

/// A string being written: how much of it has been seen, and whether it was cut.
#[derive(Default)]
struct Text {
    chars: usize,
    bytes: usize,
    cut: bool,
}

/// An object key being written: its length and first bytes, enough to tell a key in
/// [`DIFFERENCES`].
#[derive(Default, Clone, Copy)]
struct Key {
    len: usize,
    head: [u8; 16],
}

impl Key {
    fn push(&mut self, bytes: &[u8]) {
        let at = self.len.min(self.head.len());
        let take = bytes.len().min(self.head.len() - at);
        self.head[at..at + take].copy_from_slice(&bytes[..take]);
        self.len += bytes.len();
    }

    fn is(&self, name: &str) -> bool {
        self.len == name.len() && self.len <= self.head.len() && &self.head[..self.len] == name.as_bytes()
    }
}

/// The formatter: serde_json's pretty (or compact) layout, plus the report's rounding and cap.
struct ReportFormatter {
    /// Spaces before every line after the first; `None`: compact.
    indent: Option<usize>,
    /// Whether the innermost open container has a value yet.
    has_value: bool,
    /// The significant digits of each open array or object's values (its length: the depth).
    digits: Vec<usize>,
    /// The significant digits of the value about to be written.
    next: usize,
    /// The key being written, while one is.
    key: Option<Key>,
    /// The string value being written, while one is.
    text: Option<Text>,
}

impl ReportFormatter {
    fn new(indent: Option<usize>) -> ReportFormatter {
        ReportFormatter {
            indent,
            has_value: false,
            digits: Vec::with_capacity(16),
            next: SIGNIFICANT,
            key: None,
            text: None,
        }
    }

    fn newline<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        const SPACES: &[u8] = &[b' '; 128];
        let Some(pad) = self.indent else { return Ok(()) };
        w.write_all(b"\n")?;
        let mut n = pad + 2 * self.digits.len();
        while n > 0 {
            let k = n.min(SPACES.len());
            w.write_all(&SPACES[..k])?;
            n -= k;
        }
        Ok(())
    }

    /// Opens an array or object with its bracket; its values inherit the digits of the value
    /// it is.
    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.has_value = false;
        self.digits.push(self.next);
        w.write_all(bracket)
    }

    /// Closes an array or object: its closing bracket on a line of its own if it held a value.
    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.digits.pop();
        if self.has_value {
            self.newline(w)?;
        }
        w.write_all(bracket)
    }

    /// Starts an array element or an object key: the separator, then its line.
    fn element<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        self.newline(w)
    }

    fn inherited(&self) -> usize {
        self.digits.last().copied().unwrap_or(SIGNIFICANT)
    }
}

/// The error that hands a value to the value path.
fn refuse() -> io::Error {
    io::Error::other("left to the value path")
}

impl Formatter for ReportFormatter {
    fn write_f32<W: ?Sized + Write>(&mut self, _w: &mut W, _value: f32) -> io::Result<()> {
        Err(refuse())
    }

    fn write_f64<W: ?Sized + Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        if self.key.is_some() {
            return Err(refuse());
        }
        CompactFormatter.write_f64(w, round_significant(value, self.next))
    }

    fn write_number_str<W: ?Sized + Write>(&mut self, w: &mut W, value: &str) -> io::Result<()> {
        // The value path's rule for a number kept as written (`arbitrary_precision`): one
        // written with a point or an exponent that is a finite double is rounded; any other is
        // kept as written (integers, `1e400`).
        if value.contains(['.', 'e', 'E'])
            && let Some(f) = value.parse::<f64>().ok().filter(|f| f.is_finite())
        {
            return self.write_f64(w, f);
        }
        w.write_all(value.as_bytes())
    }

    fn begin_string<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if self.key.is_none() {
            self.text = Some(Text::default());
        }
        w.write_all(b"\"")
    }

    fn end_string<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if let Some(t) = self.text.take()
            && t.cut
        {
            write!(w, "… ({} bytes)", t.bytes)?;
        }
        w.write_all(b"\"")
    }

    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, fragment: &str) -> io::Result<()> {
        if let Some(key) = &mut self.key {
            key.push(fragment.as_bytes());
            if key.len > MAX_ECHO_CHARS {
                // Perhaps a key the value path cuts (bytes ≥ chars): it may merge two keys.
                return Err(refuse());
            }
            return w.write_all(fragment.as_bytes());
        }
        let Some(t) = &mut self.text else { return w.write_all(fragment.as_bytes()) };
        t.bytes += fragment.len();
        if t.cut {
            return Ok(());
        }
        let room = MAX_ECHO_CHARS - t.chars;
        match fragment.char_indices().nth(room) {
            None => {
                t.chars += fragment.chars().count();
                w.write_all(fragment.as_bytes())
            }
            Some((end, _)) => {
                t.chars = MAX_ECHO_CHARS;
                t.cut = true;
                w.write_all(&fragment.as_bytes()[..end])
            }
        }
    }

    fn write_char_escape<W: ?Sized + Write>(&mut self, w: &mut W, escape: CharEscape) -> io::Result<()> {
        if let Some(key) = &mut self.key {
            key.push(&[0]); // an escaped character: no key in DIFFERENCES has one
            if key.len > MAX_ECHO_CHARS {
                return Err(refuse());
            }
        } else if let Some(t) = &mut self.text {
            // Every escaped character is one ASCII byte.
            t.bytes += 1;
            if t.cut || t.chars == MAX_ECHO_CHARS {
                t.cut = true;
                return Ok(());
            }
            t.chars += 1;
        }
        CompactFormatter.write_char_escape(w, escape)
    }

    fn write_raw_fragment<W: ?Sized + Write>(&mut self, _w: &mut W, _fragment: &str) -> io::Result<()> {
        Err(refuse())
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.next = self.inherited();
        self.element(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.key = Some(Key::default());
        self.element(w, first)
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        let key = self.key.take().unwrap_or_default();
        let difference = DIFFERENCES.iter().any(|d| key.is(d));
        self.next = if difference { SIGNIFICANT_DIFFERENCES } else { self.inherited() };
        Ok(())
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(if self.indent.is_some() { b": " } else { b":" })
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::json::{part_value, pretty_at};
    use super::*;

    /// The value path's text, the reference every report was reviewed in.
    fn by_value(v: &Value, indent: Option<usize>) -> String {
        let v = part_value(v);
        match indent {
            Some(i) => pretty_at(&v, i),
            None => serde_json::to_string(&v).unwrap(),
        }
    }

    fn same(v: &Value) {
        for indent in [Some(0), Some(8), None] {
            let typed = write(v, indent).expect("written");
            assert!(typed == by_value(v, indent), "{indent:?}\n{typed}\n{}", by_value(v, indent));
        }
    }

    #[derive(Serialize)]
    struct Row {
        name: String,
        share: f64,
        difference: f64,
        missing: Option<f64>,
        nan: f64,
        n: u64,
        big: u128,
        list: Vec<f64>,
        #[serde(flatten)]
        facts: Facts,
    }

    #[derive(Serialize)]
    struct Facts {
        sum_w: f64,
        z: Vec<f64>,
    }

    #[test]
    fn typed_values_are_written_as_their_rounded_capped_values() {
        let row = Row {
            name: "Considered \"W6\"\n\tbase".into(),
            share: 0.1 + 0.2,
            difference: -0.048_947_388_092_612_34,
            missing: None,
            nan: f64::NAN,
            n: u64::MAX,
            big: u128::MAX,
            list: vec![1.0 / 3.0, 44.0, 1e-300, 1.7976931348623157e308, -0.0, 2e21],
            facts: Facts { sum_w: 4_250.712_345_678_912, z: vec![1.23456789, -7.0 / 3.0] },
        };
        let v = serde_json::to_value(&row).unwrap();
        for indent in [Some(0), Some(8), None] {
            let typed = write(&row, indent).unwrap();
            assert!(typed == by_value(&v, indent), "{typed}\n{}", by_value(&v, indent));
        }
        // Rounded as its key says: 12 digits, 6 under `difference` and `z` at any depth.
        let text = compact(&row).unwrap();
        assert!(text.contains("\"share\":0.3,") && text.contains("\"difference\":-0.0489474"), "{text}");
        assert!(text.contains("\"z\":[1.23457,-2.33333]") && text.contains("\"nan\":null"), "{text}");
    }

    #[test]
    fn numbers_kept_as_written_follow_the_value_path() {
        let v: Value = serde_json::from_str(
            r#"{"a": 0.12345678901234567890, "b": 12345678901234567890123, "c": 1e400, "d": -1E-7,
                "difference": {"x": [0.123456789, {"z": 1.5, "y": 0.987654321987}]},
                "e": [], "f": {}, "g": [[], {}], "h": 44.0}"#,
        )
        .unwrap();
        same(&v);
    }

    #[test]
    fn strings_are_cut_where_the_value_path_cuts_them() {
        let n = MAX_ECHO_CHARS;
        let mut cases = vec![
            "é".repeat(n),
            "é".repeat(n + 1),
            "x".repeat(n - 1) + "\"",
            "x".repeat(n) + "\"",
            "x".repeat(n - 1) + "\n\n" + &"y".repeat(5),
            "\u{1}".repeat(n + 3),
            format!("{}ab\\cd{}", "ü".repeat(n - 3), "z".repeat(40)),
        ];
        cases.push(cases.concat());
        for s in cases {
            same(&json!({ "s": s, "in": [s, {"k": s}] }));
        }
    }

    #[test]
    fn a_key_the_value_path_would_cut_is_left_to_it() {
        let long = "k".repeat(MAX_ECHO_CHARS + 1);
        let v = json!({ long: 1 });
        assert_eq!(compact(&v), None);
        assert_eq!(pretty(&v, 8), None);
        assert!(compact(&json!({ "k".repeat(MAX_ECHO_CHARS): 1 })).is_some());
    }
}
