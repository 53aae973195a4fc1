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
    /// Digits after the decimal point that the text shows, never fewer than its plain decimal
    /// spelling shows (`4.4e3` shows 0, as `4400` does; never negative).
    pub decimals: i32,
    /// Written with a `%` sign.
    pub percent: bool,
    /// The key it was found under, or the measure named on the command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// JSON pointer to it within the claimed result (empty for command-line claims).
    pub pointer: String,
    /// Why a number found in the result cannot be compared (out of range, exponent too large,
    /// too long, or text whose value is ambiguous, `"4.595"`). Such a number never helps a claim
    /// pass: its claim is INVALID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
    /// A string in a result that is no number in any convention (`"NaN"`, `"0x2C"`, `"44%%"`):
    /// a claim only when it stands under a measure's name, which it then makes INVALID
    /// ([`claimed`]); anywhere else (`"brand": "Versant"`) it is no claim at all.
    #[serde(skip)]
    pub word: bool,
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
        // On the plain spelling as it was read: `"4,595"` states 4595, and `"4.595"` read by
        // the comma convention (no decimals shown) too.
        let mut w = written(&self.text).ok()?;
        w.read_as(self.decimals != 0);
        exact_count(&w.plain())
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
    /// Not number syntax at all (`W6`, `1.2.3`, `18-74`): not a claim.
    Syntax,
    /// Number syntax that cannot be represented or compared, or whose value the text leaves
    /// open (`"4.595"` in prose that shows no convention), with why.
    Unreadable(String),
}

/// Which mark is the decimal point where a number's text alone leaves it open: a lone `.` or
/// `,` before exactly three digits (`4.595`, `4,595`). Every other spelling says it itself
/// (`44.2`, `44,0`, `4,595.5`, `1.234.567`), whatever the convention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DecimalMark {
    /// `4.595` is four and a bit and `4,595` four thousand: the C locale, what programs write.
    /// The convention of JSON strings in results and of command-line values unless declared.
    #[default]
    Dot,
    /// `4,595` is four and a bit and `4.595` four thousand, as much of Europe writes.
    Comma,
}

impl std::str::FromStr for DecimalMark {
    type Err = UnknownDecimalMark;
    fn from_str(s: &str) -> Result<Self, UnknownDecimalMark> {
        match s.trim().to_ascii_lowercase().as_str() {
            "dot" | "." => Ok(DecimalMark::Dot),
            "comma" | "," => Ok(DecimalMark::Comma),
            other => Err(UnknownDecimalMark(other.to_string())),
        }
    }
}

/// A decimal mark that is neither `dot` nor `comma` (as given, trimmed and lower-cased).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("decimal mark {0:?}: expected \"dot\" or \"comma\"")]
pub struct UnknownDecimalMark(pub String);

/// A number whose decimal mark the text leaves open: `whole.three` read either way.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "ambiguous: {sign}{whole}.{three} (a decimal point) or {sign}{whole}{three} (a dot \
     grouping thousands, as much of Europe writes it), and the text shows no convention \
     of its own; recite does not guess"
)]
pub struct AmbiguousMark {
    /// `-` or nothing.
    pub sign: &'static str,
    /// The digits before the mark.
    pub whole: String,
    /// The three digits after it.
    pub three: String,
}

/// A `--claim` argument that is not a claimed number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimArgError {
    /// Number syntax that cannot be read (why).
    #[error("--claim {arg:?}: {why}")]
    Unreadable {
        /// The argument.
        arg: String,
        /// Why it cannot be read.
        why: String,
    },
    /// Not a number at all.
    #[error("--claim {arg:?}: expected a number such as 44%, 0.44 or Considered=44%")]
    Syntax {
        /// The argument.
        arg: String,
    },
}

impl std::fmt::Display for DecimalMark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DecimalMark::Dot => "dot",
            DecimalMark::Comma => "comma",
        })
    }
}

/// Reads a number as a person or an agent writes it in text: the one parser for every number
/// written as text in recite (result strings, `--claim`, and the answer audit's numbers), so two
/// parts of recite never disagree about the same text. Its `key` is `None` and its `pointer`
/// empty; the claim's `text` is `text` as given.
///
/// `mark` is the convention the text is read by where its spelling leaves the decimal mark
/// open (a lone `.` or `,` before exactly three digits): `Some` for a program's output (a JSON
/// string, a command-line value: [`DecimalMark::Dot`] unless declared otherwise) or prose whose
/// other numbers show its convention; `None` for prose that shows none, where `4,595` is read
/// as thousands (as English prose writes counts) and `4.595` is unreadable, except before a `%`
/// where only the decimal reading is a share (`4.595%`).
///
/// Read (docs/semantics.md, "Numbers written as text"):
/// - plain numbers `44`, `0.440`, `-3.5`, `+32`, `.5`, `4.4e-1`, and both minus signs (`-` and
///   U+2212 `−`), in any script's decimal digits (`٤٤%` is 44%; Unicode's `Nd` digits, the
///   Arabic decimal and thousands separators and percent signs);
/// - thousands groups of exactly three digits separated by `,`, a space, U+00A0, U+202F or
///   U+2009 (`4,595`, `4 595`, `9 189`), or by `.` when there are two or more
///   (`1.234.567`); with a decimal mark after them (`4,595.5`, `4.595,5`, `4 595,5`);
/// - a decimal comma where it can only be one: before other than three digits (`44,0`,
///   `0,595`, `1234,5`);
/// - a `%` after the number (`44%`, `44.0 %`), a currency sign `$`, `€` or `£` before it
///   (`$4,595`, `-$5`, `$-5`) or `€`/`$`/`£` after it (`4 595 €`).
///
/// Errors:
/// - [`NotANumber::Syntax`] for text that is not one number (`W6`, `1.2.3`, `1,2,3`, `18-74`,
///   `NaN`, `0x2C`, `44%%`, `4 654 respondents`, `2.3pp`: a difference in points is not a
///   level recite compares);
/// - [`NotANumber::Unreadable`] for one number recite will not guess at (`4.595` with no
///   convention, above) and numbers too long, too large, too small or with too many decimals.
///
/// A claim's tolerance comes from the decimals the text shows, never fewer than its plain
/// decimal spelling shows: `4.4e3` shows none (±0.5), as `4400` would.
pub fn read_written(text: &str, mark: Option<DecimalMark>) -> Result<Claimed, NotANumber> {
    read_text(text, None, String::new(), Some(mark))
}

/// True when `text` is written as one number (readable or not, see [`read_written`]): such a
/// string makes its result quantitative.
pub fn states_number(text: &str) -> bool {
    !matches!(written(text), Err(NotANumber::Syntax))
}

/// Parses a number as a program writes it (see [`read_written`], the dot as the decimal
/// point), with the key and pointer it was found under; `None` when it is not a readable number.
pub fn parse_number(text: &str, key: Option<String>, pointer: String) -> Option<Claimed> {
    read_number(text, key, pointer).ok()
}

/// Like [`parse_number`], but says whether a failure was number syntax it cannot represent.
pub fn read_number(text: &str, key: Option<String>, pointer: String) -> Result<Claimed, NotANumber> {
    read_text(text, key, pointer, Some(Some(DecimalMark::Dot)))
}

/// A lone mark before exactly three digits, which the text alone does not settle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    /// `4.595`: taken apart as a decimal point.
    Dot,
    /// `4,595`: taken apart as a thousands separator.
    Comma,
}

/// A written number taken apart, in plain ASCII.
#[derive(Debug)]
struct Written {
    /// `-`, `+` or nothing.
    sign: &'static str,
    /// The integer digits, group separators removed.
    int: String,
    /// The digits after the decimal mark.
    frac: String,
    /// Whether a decimal mark was written (`5.` has one, with no digits).
    point: bool,
    /// The exponent as written (`-1` for `e-1`).
    exponent: Option<String>,
    /// Written with `%`.
    percent: bool,
    /// A lone `.` or `,` before exactly three digits: its reading depends on the convention.
    open: Option<Open>,
}

impl Written {
    /// The number in plain ASCII (`-4595.5`, `4.4e3`), which `f64` and [`exact_count`] read.
    fn plain(&self) -> String {
        let mut s = format!("{}{}", self.sign, self.int);
        if self.point || !self.frac.is_empty() {
            s.push('.');
            s.push_str(&self.frac);
        }
        if let Some(e) = &self.exponent {
            s.push('e');
            s.push_str(e);
        }
        s
    }

    /// Settles an open mark by the convention `mark` (`None`: prose that shows none), or says
    /// why it stays open.
    fn settle(mut self, mark: Option<DecimalMark>) -> Result<Written, AmbiguousMark> {
        let Some(open) = self.open else { return Ok(self) };
        let decimal = match (open, mark) {
            (_, Some(DecimalMark::Dot)) => open == Open::Dot,
            (_, Some(DecimalMark::Comma)) => open == Open::Comma,
            // English prose groups counts with commas (`n = 4,654`).
            (Open::Comma, None) => false,
            (Open::Dot, None) => {
                let (whole, three) = self.halves();
                // `4.595%`: 4595% is no share, so only the decimal reading is one.
                let share = format!("{whole}.{three}").parse::<f64>().is_ok_and(|v| v <= 100.0);
                if !(self.percent && share) {
                    let sign = if self.sign == "-" { "-" } else { "" };
                    return Err(AmbiguousMark { sign, whole: whole.to_string(), three: three.to_string() });
                }
                true
            }
        };
        self.read_as(decimal);
        Ok(self)
    }

    /// The digits before and after an open mark.
    fn halves(&self) -> (String, String) {
        match self.open {
            Some(Open::Comma) => {
                let cut = self.int.len() - 3;
                (self.int[..cut].to_string(), self.int[cut..].to_string())
            }
            _ => (self.int.clone(), self.frac.clone()),
        }
    }

    /// Closes an open mark as a decimal mark or as a thousands separator.
    fn read_as(&mut self, decimal: bool) {
        if self.open.is_none() {
            return;
        }
        let (whole, three) = self.halves();
        (self.int, self.frac, self.point) =
            if decimal { (whole, three, true) } else { (format!("{whole}{three}"), String::new(), false) };
        self.open = None;
    }
}

const MINUS: char = '\u{2212}';
const CURRENCIES: [char; 3] = ['$', '€', '£'];
/// The spaces that group thousands: space, no-break, narrow no-break and thin space.
const GROUP_SPACES: [char; 4] = [' ', '\u{a0}', '\u{202f}', '\u{2009}'];

/// The first code point of each run of ten decimal digits (Unicode category `Nd`, 0 to 9 in
/// order), ASCII's first; generated from Python's `unicodedata` (Unicode 14.0).
const DIGIT_ZEROS: [u32; 66] = [
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6, 0xE50,
    0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40,
    0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x10D30, 0x11066,
    0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950,
    0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6,
    0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
];

/// The ASCII digit a decimal digit of any script stands for.
fn ascii_digit(c: char) -> Option<char> {
    let c = c as u32;
    let i = DIGIT_ZEROS.partition_point(|&z| z <= c).checked_sub(1)?;
    let d = c - DIGIT_ZEROS[i];
    (d < 10).then(|| char::from(b'0' + d as u8))
}

/// `text` with every decimal digit in ASCII and the Arabic decimal separator, thousands
/// separator and percent signs (and the full-width percent) as `.`, `,` and `%`; borrowed when
/// it is ASCII already.
fn ascii_numerals(text: &str) -> std::borrow::Cow<'_, str> {
    if text.is_ascii() {
        return text.into();
    }
    text.chars()
        .map(|c| match c {
            '\u{66b}' => '.',
            '\u{66c}' => ',',
            '\u{66a}' | '\u{ff05}' => '%',
            c if !c.is_ascii() => ascii_digit(c).unwrap_or(c),
            c => c,
        })
        .collect::<String>()
        .into()
}

/// The white space allowed around a number, its sign, currency and `%`.
fn trim_spaces(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || GROUP_SPACES.contains(&c))
}

/// Takes a written number apart (see [`read_written`]), its decimal mark perhaps still open.
fn written(text: &str) -> Result<Written, NotANumber> {
    let ascii = ascii_numerals(text);
    let mut t = trim_spaces(&ascii);
    let percent = match t.strip_suffix('%') {
        Some(b) => {
            t = trim_spaces(b);
            true
        }
        None => false,
    };
    let mut sign = "";
    let mut currency = false;
    for _ in 0..2 {
        if sign.is_empty()
            && let Some(c) = t.chars().next().filter(|&c| matches!(c, '+' | '-' | MINUS))
        {
            sign = if c == '+' { "+" } else { "-" };
            t = &t[c.len_utf8()..];
        } else if !currency && let Some(c) = t.chars().next().filter(|c| CURRENCIES.contains(c)) {
            currency = true;
            t = trim_spaces(&t[c.len_utf8()..]);
        }
    }
    if !currency && let Some(c) = t.chars().next_back().filter(|c| CURRENCIES.contains(c)) {
        currency = true;
        t = trim_spaces(&t[..t.len() - c.len_utf8()]);
    }
    if currency && percent {
        return Err(NotANumber::Syntax);
    }
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if let Some(e) = exponent {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        if e.is_empty() || !digits(e) {
            return Err(NotANumber::Syntax);
        }
    }
    let exponent = exponent.map(|e| e.strip_prefix('+').unwrap_or(e).to_string());
    // Plain: digits, at most one `.`.
    if mantissa.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && mantissa.bytes().filter(|&b| b == b'.').count() <= 1
    {
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if int.is_empty() && frac.is_empty() {
            return Err(NotANumber::Syntax);
        }
        // `4.595`: a decimal point, or one group of thousands.
        let open =
            (exponent.is_none() && frac.len() == 3 && (1..=3).contains(&int.len()) && !int.starts_with('0'))
                .then_some(Open::Dot);
        return Ok(Written {
            sign,
            int: int.to_string(),
            frac: frac.to_string(),
            point: mantissa.contains('.'),
            exponent,
            percent,
            open,
        });
    }
    if exponent.is_some() {
        return Err(NotANumber::Syntax); // no groups in exponent form
    }
    grouped(mantissa, sign, percent)
}

/// The class of a mark between digit runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    Comma,
    Dot,
    Space,
}

/// A mantissa with group separators or a decimal comma: `4,595`, `4 595,5`, `1.234.567`, `44,0`.
fn grouped(mantissa: &str, sign: &'static str, percent: bool) -> Result<Written, NotANumber> {
    let mut runs: Vec<&str> = Vec::new();
    let mut marks: Vec<Mark> = Vec::new();
    let mut start = 0;
    for (i, c) in mantissa.char_indices() {
        let mark = match c {
            '0'..='9' => continue,
            ',' => Mark::Comma,
            '.' => Mark::Dot,
            c if GROUP_SPACES.contains(&c) => Mark::Space,
            _ => return Err(NotANumber::Syntax),
        };
        runs.push(&mantissa[start..i]);
        marks.push(mark);
        start = i + c.len_utf8();
    }
    runs.push(&mantissa[start..]);
    if runs.iter().any(|r| r.is_empty()) {
        return Err(NotANumber::Syntax); // `,5`, `4,,595`, `4,595,`
    }
    let lead_ok = |r: &str| r.len() <= 3 && !r.starts_with('0');
    let groups_ok = |runs: &[&str]| lead_ok(runs[0]) && runs[1..].iter().all(|r| r.len() == 3);
    let number = |int: &[&str], frac: &str, open: Option<Open>| Written {
        sign,
        int: int.concat(),
        frac: frac.to_string(),
        point: !frac.is_empty(),
        exponent: None,
        percent,
        open,
    };
    let last = *marks.last().expect("a mark, or the mantissa was plain");
    let kinds = |m: Mark| marks.iter().filter(|&&k| k == m).count();
    let (group, decimal) = if marks.iter().all(|&m| m == last) {
        (last, None)
    } else {
        // Two kinds: the last mark, written once, is the decimal mark; the others group.
        let group = marks[0];
        let others_group = marks[..marks.len() - 1].iter().all(|&m| m == group);
        if last == Mark::Space || kinds(last) != 1 || !others_group {
            return Err(NotANumber::Syntax);
        }
        (group, Some(last))
    };
    let lone_comma = group == Mark::Comma && marks.len() == 1;
    match decimal {
        Some(_) => {
            let int = &runs[..runs.len() - 1];
            if !groups_ok(int) {
                return Err(NotANumber::Syntax);
            }
            Ok(number(int, runs[runs.len() - 1], None))
        }
        // `4,595`: one group of thousands, or a decimal comma.
        None if lone_comma && groups_ok(&runs) => Ok(number(&runs, "", Some(Open::Comma))),
        // `44,0`, `0,595`, `1234,5`: no group of thousands is written so; a decimal comma.
        None if lone_comma => Ok(number(&runs[..1], runs[1], None)),
        None if groups_ok(&runs) && (group != Mark::Dot || marks.len() >= 2) => Ok(number(&runs, "", None)),
        None => Err(NotANumber::Syntax),
    }
}

/// Reads `text` (see [`read_written`]) with the key and pointer it stood under. `convention`
/// is `None` for a JSON number's text, which is never open (`4.595` in JSON is a decimal), and
/// else the decimal mark it is read by (`Some(None)`: prose that shows none).
fn read_text(
    text: &str,
    key: Option<String>,
    pointer: String,
    convention: Option<Option<DecimalMark>>,
) -> Result<Claimed, NotANumber> {
    let w = written(text)?;
    let unreadable = |why: String| NotANumber::Unreadable(why);
    let t = text.trim();
    if t.len() > MAX_NUMBER_TEXT {
        return Err(unreadable(format!(
            "a number of {} characters is longer than {MAX_NUMBER_TEXT}",
            t.len()
        )));
    }
    let w = w.settle(convention.unwrap_or(Some(DecimalMark::Dot))).map_err(|e| unreadable(e.to_string()))?;
    claim_of(&w, text, key, pointer)
}

/// The claim a taken-apart number makes: its value and the decimals it shows.
fn claim_of(w: &Written, text: &str, key: Option<String>, pointer: String) -> Result<Claimed, NotANumber> {
    let unreadable = |why: String| NotANumber::Unreadable(why);
    // Bounded before any arithmetic: `0.44e-2147483648` must not overflow the decimals count.
    let exponent: i64 = match &w.exponent {
        None => 0,
        Some(e) => match e.parse::<i64>() {
            Ok(e) if e.abs() <= MAX_EXPONENT => e,
            _ => return Err(unreadable(format!("exponent {e} is beyond ±{MAX_EXPONENT}"))),
        },
    };
    let value: f64 = w.plain().parse().map_err(|_| unreadable("not a representable number".into()))?;
    if !value.is_finite() {
        return Err(unreadable("out of the range of a 64-bit float".into()));
    }
    let nonzero = w.int.bytes().chain(w.frac.bytes()).any(|b| b != b'0');
    if nonzero && (value == 0.0 || value.abs() < f64::MIN_POSITIVE) {
        return Err(unreadable("too small to represent (underflows to 0)".into()));
    }
    // Never fewer decimals than the plain spelling shows: `0e9`, `4e1` and `4.4e3` are whole
    // numbers (±0.5), as `0`, `40` and `4400` are; exponent form cannot widen the tolerance.
    let decimals = (w.frac.len() as i64 - exponent).max(0);
    if decimals > MAX_EXPONENT {
        return Err(unreadable(format!("shows {decimals} decimals, beyond ±{MAX_EXPONENT}")));
    }
    Ok(Claimed {
        text: text.to_string(),
        value,
        decimals: decimals as i32,
        percent: w.percent,
        key,
        pointer,
        unreadable: None,
        word: false,
    })
}

/// Every number among a result's leaves: JSON numbers, and strings that are a number or a
/// percentage (read by the dot convention, as programs write). Each keeps the key it stood
/// under (array elements take their parent's key). A JSON number (or numeric string) that
/// cannot be represented is kept, marked `unreadable`.
pub fn leaves(result: &Value) -> Vec<Claimed> {
    claimed(result, DecimalMark::Dot).into_iter().filter(|c| !c.word).collect()
}

/// Every value a result claims, to settle: its numbers as [`leaves`] finds them, read by the
/// convention `mark`, and each string that is no number in any convention, as a
/// [`Claimed::word`] (it makes a claim INVALID where it stands under a measure's name).
pub fn claimed(result: &Value, mark: DecimalMark) -> Vec<Claimed> {
    let mut out = Vec::new();
    walk(result, None, String::new(), mark, &mut out);
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
        word: false,
    }
}

fn walk(v: &Value, key: Option<&str>, pointer: String, mark: DecimalMark, out: &mut Vec<Claimed>) {
    match v {
        Value::Number(n) => {
            let text = n.to_string();
            match read_text(&text, key.map(str::to_string), pointer.clone(), None) {
                Ok(c) => out.push(c),
                // A JSON number is a number whatever its syntax says.
                Err(NotANumber::Unreadable(why)) => out.push(unreadable_leaf(&text, key, pointer, why)),
                Err(NotANumber::Syntax) => {
                    out.push(unreadable_leaf(&text, key, pointer, "not a number recite can read".into()))
                }
            }
        }
        Value::String(s) => match read_text(s, key.map(str::to_string), pointer.clone(), Some(Some(mark))) {
            Ok(c) => out.push(c),
            Err(NotANumber::Unreadable(why)) => out.push(unreadable_leaf(s, key, pointer, why)),
            Err(NotANumber::Syntax) => out.push(Claimed {
                word: true,
                ..unreadable_leaf(s, key, pointer, "not a number in any convention".into())
            }),
        },
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, key, format!("{pointer}/{i}"), mark, out);
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                // RFC 6901 escaping, here rather than through `json` (which asks this module what a
                // number is, so the dependency points one way).
                let token = k.replace('~', "~0").replace('/', "~1");
                walk(item, Some(k), format!("{pointer}/{token}"), mark, out);
            }
        }
        _ => {}
    }
}

/// Parses a `--claim` argument, `VALUE` or `MEASURE=VALUE`, by the convention `mark` (the dot
/// unless declared: a command line is a program's input).
pub fn parse_arg(arg: &str, mark: DecimalMark) -> Result<Claimed, ClaimArgError> {
    let (key, text) = match arg.rsplit_once('=') {
        Some((k, v)) => (Some(k.trim().to_string()), v.trim()),
        None => (None, arg.trim()),
    };
    match read_text(text, key, String::new(), Some(Some(mark))) {
        Ok(c) => Ok(c),
        Err(NotANumber::Unreadable(why)) => Err(ClaimArgError::Unreadable { arg: arg.to_string(), why }),
        Err(NotANumber::Syntax) => Err(ClaimArgError::Syntax { arg: arg.to_string() }),
    }
}

/// A name folded for matching keys to measures: lower case, letters and digits only.
pub fn fold(name: &str) -> String {
    folded(name).collect()
}

/// Whether `name` folds to `folded` ([`fold`]), without making its folded string.
pub fn folds_to(name: &str, folded: &str) -> bool {
    self::folded(name).eq(folded.chars())
}

fn folded(name: &str) -> impl Iterator<Item = char> + '_ {
    name.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase)
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
        // Exponent form shows no fewer decimals than the plain spelling (4400): a whole unit.
        assert_eq!(p("4.4e3").half_unit(), 0.5);
        assert_eq!(p("4.4e-1").half_unit(), 0.005);
        assert!(p("44%").percent);
        assert_eq!(p("+32").value, 32.0);
    }

    #[test]
    fn non_numbers_are_not_claims() {
        for s in [
            "W6",
            "",
            "%",
            "1.2.3",
            "NaN",
            "inf",
            "0x10",
            "1,2,3",
            "18-74",
            "2026-04-02",
            "4 654 respondents",
            "2.3pp",
            "$44%",
            "4,,595",
            "4,595,",
            "4,595 123",
            "--3",
            "$",
            "-",
            "10.0.0.1",
        ] {
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
    fn written_numbers_with_group_separators_are_read() {
        for (text, value, decimals) in [
            ("4,595", 4595.0, 0),
            ("4 595", 4595.0, 0),
            ("9\u{202f}189", 9189.0, 0),
            ("9\u{2009}189", 9189.0, 0),
            ("9\u{a0}189", 9189.0, 0),
            ("1,234,567", 1234567.0, 0),
            ("1.234.567", 1234567.0, 0),
            ("4,595.5", 4595.5, 1),
            ("4.595,5", 4595.5, 1),
            ("4 595,25", 4595.25, 2),
            ("4 595.123", 4595.123, 3),
            ("$4,595", 4595.0, 0),
            ("-$5", -5.0, 0),
            ("$-5", -5.0, 0),
            ("€ 12.5", 12.5, 1),
            ("4 595 €", 4595.0, 0),
            ("£3", 3.0, 0),
            ("\u{2212}3.5", -3.5, 1),
            ("\u{2212}1,234", -1234.0, 0),
            (" 44.0 % ", 44.0, 1),
        ] {
            let c = read_written(text, None).unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
            assert_eq!((c.value, c.decimals), (value, decimals), "{text:?}");
            assert_eq!(c.text, text);
        }
        assert!(read_written("44%", None).unwrap().percent);
        assert!(!read_written("$44", None).unwrap().percent);
    }

    #[test]
    fn written_counts_are_exact_on_their_plain_spelling() {
        let count = |t: &str| read_written(t, None).unwrap().as_count();
        assert_eq!(count("4,595"), Some(4595));
        assert_eq!(count("9\u{202f}189"), Some(9189));
        assert_eq!(count("4,654.0"), Some(4654));
        assert_eq!(count("\u{2212}4,654"), None);
        assert_eq!(count("4,654.5"), None);
    }

    fn prose(text: &str) -> Result<f64, NotANumber> {
        read_written(text, None).map(|c| c.value)
    }

    #[test]
    fn ambiguous_dot_before_three_digits_is_unreadable_only_in_prose_without_a_convention() {
        for text in ["4.595", "-44.200", "123.456", "1.000", "4.595 €", "$4.595", "123.456%"] {
            match prose(text) {
                Err(NotANumber::Unreadable(why)) => assert!(why.contains("ambiguous"), "{text}: {why}"),
                other => panic!("{text}: expected unreadable, got {other:?}"),
            }
        }
        // Not ambiguous: a leading 0, four digits before or after, other counts of decimals,
        // exponent form, several groups, a share below 100%, and a comma before other than
        // three digits (a decimal comma: no group is written so).
        for (text, value) in [
            ("0.595", 0.595),
            ("4654.000", 4654.0),
            ("4.5950", 4.595),
            ("44.59", 44.59),
            ("4.595e0", 4.595),
            ("4.595%", 4.595),
            ("1,234.567", 1234.567),
            ("44,2", 44.2),
            ("44,0%", 44.0),
            ("0,595", 0.595),
            ("1234,5", 1234.5),
        ] {
            assert_eq!(prose(text), Ok(value), "{text}");
        }
    }

    #[test]
    fn a_declared_convention_settles_a_lone_mark_before_three_digits() {
        let read = |t: &str, m| read_written(t, Some(m)).map(|c| (c.value, c.decimals));
        // The dot convention (programs, the command line): a decimal point, groups of commas.
        assert_eq!(read("44.249", DecimalMark::Dot), Ok((44.249, 3)));
        assert_eq!(read("87.182", DecimalMark::Dot), Ok((87.182, 3)));
        assert_eq!(read("-2.494", DecimalMark::Dot), Ok((-2.494, 3)));
        assert_eq!(read("4,595", DecimalMark::Dot), Ok((4595.0, 0)));
        // The comma convention: the other way round.
        assert_eq!(read("44,249", DecimalMark::Comma), Ok((44.249, 3)));
        assert_eq!(read("4.595", DecimalMark::Comma), Ok((4595.0, 0)));
        // What spells its own mark reads the same under either.
        for m in [DecimalMark::Dot, DecimalMark::Comma] {
            assert_eq!(read("44,0%", m), Ok((44.0, 1)), "{m}");
            assert_eq!(read("44.2", m), Ok((44.2, 1)), "{m}");
            assert_eq!(read("4.595,5", m), Ok((4595.5, 1)), "{m}");
            assert_eq!(read("1.234.567", m), Ok((1234567.0, 0)), "{m}");
        }
        // Counts: a base n read by its convention.
        assert_eq!(read_written("4.595", Some(DecimalMark::Comma)).unwrap().as_count(), Some(4595));
        assert_eq!(read_written("4,595", Some(DecimalMark::Comma)).unwrap().as_count(), None);
        assert_eq!(read_written("4,595", Some(DecimalMark::Dot)).unwrap().as_count(), Some(4595));
        assert_eq!(parse_arg("87.182", DecimalMark::Dot).map(|c| c.value), Ok(87.182));
        assert_eq!(parse_arg("Considered=44,249%", DecimalMark::Comma).map(|c| c.value), Ok(44.249));
    }

    #[test]
    fn decimal_digits_of_any_script_are_read() {
        for (text, value) in [
            ("\u{664}\u{664}%", 44.0),                     // Arabic-Indic ٤٤%
            ("\u{664}\u{664}\u{66b}\u{662}\u{66a}", 44.2), // ٤٤٫٢٪
            ("\u{6f4}\u{6f4}%", 44.0),                     // Extended Arabic-Indic
            ("\u{96a}\u{96a}.\u{968}%", 44.2),             // Devanagari
            ("\u{ff14}\u{ff14}\u{ff05}", 44.0),            // full-width ４４％
        ] {
            let c = read_written(text, Some(DecimalMark::Dot)).unwrap_or_else(|e| panic!("{text}: {e:?}"));
            assert_eq!(c.value, value, "{text}");
            assert!(c.percent, "{text}");
            assert_eq!(c.text, text, "the text is kept as written");
        }
        // Letters and other numerals are no digits.
        for text in ["\u{2163}", "\u{bd}", "x4"] {
            assert_eq!(read_written(text, Some(DecimalMark::Dot)), Err(NotANumber::Syntax), "{text}");
        }
    }

    #[test]
    fn strings_that_are_no_number_are_kept_as_words() {
        let v: Value = serde_json::from_str(
            r#"{"Considered": "0x2C", "Familiar": "NaN", "Aware": "44%%", "brand": "Versant", "n": 4654}"#,
        )
        .unwrap();
        let got: Vec<(String, bool, bool)> = claimed(&v, DecimalMark::Dot)
            .into_iter()
            .map(|c| (c.pointer, c.word, c.unreadable.is_some()))
            .collect();
        assert_eq!(
            got,
            [
                ("/Considered".into(), true, true),
                ("/Familiar".into(), true, true),
                ("/Aware".into(), true, true),
                ("/brand".into(), true, true),
                ("/n".into(), false, false),
            ]
        );
        // `leaves` are the numbers alone.
        assert_eq!(leaves(&v).len(), 1);
    }

    #[test]
    fn json_numbers_and_program_strings_read_the_dot_as_a_decimal_point() {
        let v: Value = serde_json::from_str(
            r#"{"mean": 4.595, "label": "4.595", "n": "4,595", "Considered": "44.249"}"#,
        )
        .unwrap();
        let got: Vec<(String, bool, f64)> =
            leaves(&v).into_iter().map(|c| (c.pointer, c.unreadable.is_some(), c.value)).collect();
        assert_eq!(
            got,
            [
                ("/mean".into(), false, 4.595),
                ("/label".into(), false, 4.595),
                ("/n".into(), false, 4595.0),
                ("/Considered".into(), false, 44.249)
            ]
        );
    }

    #[test]
    fn exponent_form_never_widens_the_tolerance() {
        // `0e9` once got ±500,000,000, `0e3` ±500 and `4e1` ±5: each passed against 44.2%.
        for text in ["0e9", "0e3", "4e1", "0E9%", "4.4e1"] {
            let c = p(text);
            assert!(c.half_unit() <= 0.5, "{text}: ±{}", c.half_unit());
            assert!(c.decimals >= 0, "{text}");
        }
        assert_eq!(p("4.42e1").half_unit(), 0.05);
        assert_eq!(p("4.4e-3").decimals, 4);
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
