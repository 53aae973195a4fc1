//! Finding the numbers an answer states, and leaving alone the numbers that are not claims.
//!
//! The rules (docs/answers.md) are deliberately conservative: a number is only taken as a
//! statistical claim when it looks like one (a percentage, a decimal, a count with separators or
//! `n =`, a signed value, a whole number of 10 or more). Dates, years, times, waves (`W6`), list
//! numbers, identifiers, bare ranges (`18-74`), bounds (`under 100`), code spans and quoted
//! questions are skipped: a false alarm costs a reader's trust.

use serde::Serialize;

use crate::claim::DecimalMark;

/// What kind of number a stated number is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A percentage (`44%`, `44.2 percent`, `44 per cent`).
    Percent,
    /// A difference in percentage points (`+2.3 pts`).
    Points,
    /// A relative change in percent of its starting value: a percentage after a change word
    /// (`rose 12%`, `down 12 percent`, `a 12% drop`, `12% higher than`), or a fraction word after
    /// one (`fell by a fifth`).
    Relative,
    /// A count of respondents (`n = 3,241`, `4,654 respondents`).
    Count,
    /// Any other number (`-25.1`, `0.442`).
    Number,
}

/// One number stated in an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Stated {
    /// The number as written, unit included (`44.2%`, `n = 3,241` gives `3,241`).
    pub text: String,
    /// Byte offset of the number's first character in the answer text.
    pub start: usize,
    /// Byte offset just past its last character (unit included).
    pub end: usize,
    /// Its value in the units written (44.2 for `44.2%`).
    pub value: f64,
    /// Digits shown after the decimal point.
    pub decimals: i32,
    /// What kind of number.
    pub kind: Kind,
    /// Index of the sentence it stands in.
    pub sentence: usize,
    /// Both ends of the range it is an end of (`42–46%`), in the units written.
    pub range: Option<(f64, f64)>,
    /// For a relative change: 1 up (`rose`, `higher`), -1 down (`fell`, `lower`), 0 either
    /// (`changed`); 0 for every other kind.
    pub direction: i8,
    /// How far from its value it still agrees, in the units written, when that is not half a
    /// unit of its last digit: a fraction word (`a fifth`) agrees within a tenth of itself.
    pub tolerance: Option<f64>,
}

impl Stated {
    /// Half a unit of the last shown digit, in the units written (or the number's own
    /// [`Stated::tolerance`]).
    pub fn half_unit(&self) -> f64 {
        self.tolerance.unwrap_or(0.5 * 10f64.powi(-self.decimals))
    }
}

/// A raw number token before the exclusion rules.
#[derive(Debug, Clone)]
struct Token {
    start: usize,
    /// End with the unit.
    end: usize,
    value: f64,
    decimals: i32,
    separators: bool,
    signed: bool,
    unit: Option<Kind>,
}

const MONTHS: &[&str] = &[
    "jan",
    "january",
    "feb",
    "february",
    "mar",
    "march",
    "apr",
    "april",
    "may",
    "jun",
    "june",
    "jul",
    "july",
    "aug",
    "august",
    "sep",
    "sept",
    "september",
    "oct",
    "october",
    "nov",
    "november",
    "dec",
    "december",
];

/// Words before a number that make it a bound or a threshold, not a stated result.
const BOUNDS: &[&str] = &["under", "over", "below", "above", "than", "least", "most", "exceeds", "exceed"];

/// Words that name a whole number after them as an identifier, not a quantity: `respondent
/// 10482`, `case 17`, `ID 4021` (a count of them comes before the word: `4,654 respondents`).
const IDENTIFIERS: &[&str] = &[
    "respondent",
    "id",
    "case",
    "record",
    "row",
    "interview",
    "participant",
    "panelist",
    "panellist",
    "serial",
    "ticket",
    "household",
];

/// Words before a percentage (`rose 12%`, `fell by 12%`) or after one (`a 12% increase`, `12%
/// higher`) that make it a relative change, rising.
const RISE_WORDS: &[&str] = &[
    "rose",
    "rise",
    "rises",
    "risen",
    "rising",
    "grew",
    "grow",
    "grows",
    "grown",
    "growing",
    "increased",
    "increase",
    "increases",
    "increasing",
    "up",
    "climbed",
    "climb",
    "climbs",
    "jumped",
    "jump",
    "jumps",
    "gained",
    "gain",
    "gains",
    "higher",
    "surged",
    "improved",
    "growth",
    "uplift",
    "lift",
];

/// The same, falling (`fell 12%`, `down 12 percent`, `a 12% drop`, `12% lower than`).
const FALL_WORDS: &[&str] = &[
    "fell",
    "fall",
    "falls",
    "fallen",
    "falling",
    "dropped",
    "drop",
    "drops",
    "declined",
    "decline",
    "declines",
    "decreased",
    "decrease",
    "decreases",
    "down",
    "slipped",
    "slip",
    "slips",
    "shrank",
    "shrunk",
    "dipped",
    "dip",
    "dips",
    "slid",
    "slumped",
    "lower",
    "reduction",
    "eased",
    "contracted",
];

/// The same, either way (`changed 12%`, `a 12% swing`).
const CHANGE_WORDS: &[&str] =
    &["changed", "change", "changes", "moved", "shifted", "swung", "swing", "differs", "difference"];

/// Words skipped between a change word and its percentage (`fell by about 12%`).
const CHANGE_HEDGES: &[&str] =
    &["by", "about", "around", "roughly", "nearly", "almost", "some", "approximately", "just", "a", "an"];

/// Fraction words read after a change word and `by` (`fell by a fifth`), as a percent.
const FRACTIONS: &[(&str, f64)] = &[
    ("a half", 50.0),
    ("half", 50.0),
    ("a third", 100.0 / 3.0),
    ("one third", 100.0 / 3.0),
    ("a quarter", 25.0),
    ("one quarter", 25.0),
    ("a fifth", 20.0),
    ("one fifth", 20.0),
    ("a tenth", 10.0),
    ("one tenth", 10.0),
    ("two thirds", 200.0 / 3.0),
    ("two-thirds", 200.0 / 3.0),
    ("three quarters", 75.0),
    ("three-quarters", 75.0),
];

/// The direction of a change word (`rose` 1, `fell` -1, `changed` 0), if it is one.
fn change_word(w: &str) -> Option<i8> {
    if RISE_WORDS.contains(&w) {
        Some(1)
    } else if FALL_WORDS.contains(&w) {
        Some(-1)
    } else if CHANGE_WORDS.contains(&w) {
        Some(0)
    } else {
        None
    }
}

/// The words (letters) before byte `at`, nearest first, at most `n`, within 60 bytes and not
/// across punctuation other than spaces, `(`, `~` and `≈`.
fn words_before(text: &str, at: usize, n: usize) -> Vec<String> {
    let from = (0..=at.saturating_sub(60)).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    let head = &text[from..at];
    let mut out = Vec::new();
    let mut word = String::new();
    for c in head.chars().rev() {
        if c.is_alphabetic() || c == '-' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            out.push(word.chars().rev().collect::<String>().to_lowercase());
            word.clear();
            if out.len() == n {
                return out;
            }
        }
        if !(c.is_whitespace() || matches!(c, '(' | '~' | '≈')) {
            return out;
        }
    }
    if !word.is_empty() && from == 0 {
        out.push(word.chars().rev().collect::<String>().to_lowercase());
    }
    out
}

/// The direction of the change word before byte `at` (hedges and `by` skipped: `fell by
/// about`), if one stands there.
fn change_before(text: &str, at: usize) -> Option<i8> {
    let words = words_before(text, at, 6);
    let k = words.iter().position(|w| !CHANGE_HEDGES.contains(&w.as_str()))?;
    // `make up 25%`, `makes up`, `made up`: a part of a whole, a level, not a rise.
    if words[k] == "up"
        && words.get(k + 1).is_some_and(|w| matches!(w.as_str(), "make" | "makes" | "made" | "making"))
    {
        return None;
    }
    change_word(&words[k])
}

/// Whether a percentage at `t` states a relative change (docs/answers.md, "Relative changes"):
/// a change word before it (`rose 12%`, `down by 12 percent`) or a change noun or comparative
/// after it (`a 12% increase`, `12% lower than`). `rose to 12%` and `up from 12%` are levels.
fn relative(text: &str, t: &Token) -> Option<i8> {
    change_before(text, t.start).or_else(|| change_word(&word_after(text, t.end)))
}

/// Fraction words after a change word (`fell by a fifth`): relative changes, each agreeing
/// within a tenth of itself.
fn fraction_changes(text: &str, skipped: &[(usize, usize)]) -> Vec<(usize, usize, f64, i8)> {
    let mut out = Vec::new();
    for (p, _) in text.match_indices("by ") {
        if prev_char(text, p).is_some_and(char::is_alphanumeric) || in_spans(skipped, p) {
            continue;
        }
        let at = p + 3;
        let rest = &text[at..];
        for (phrase, value) in FRACTIONS {
            let n = phrase.len();
            let hit = rest.get(..n).is_some_and(|r| r.eq_ignore_ascii_case(phrase))
                && !rest[n..].starts_with(|c: char| c.is_alphanumeric());
            if !hit {
                continue;
            }
            if let Some(dir) = words_before(text, p, 3)
                .iter()
                .find(|w| !CHANGE_HEDGES.contains(&w.as_str()))
                .and_then(|w| change_word(w))
            {
                out.push((at, at + n, *value, dir));
            }
            break;
        }
    }
    out
}

/// Words after a number that make it a count of respondents.
const COUNT_WORDS: &[&str] = &["respondents", "people", "adults", "interviews", "completes", "cases"];

/// The sentences of `text`: byte ranges, split after `.`, `!`, `?` followed by white space (or
/// by a closing bracket or quote and white space: `(n = 4,595.) Among…`), and at line breaks.
pub fn sentences(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (k, &(i, c)) in chars.iter().enumerate() {
        let next = chars.get(k + 1).map(|x| x.1);
        let end_here = c == '\n' || (matches!(c, '.' | '!' | '?') && next.is_none_or(char::is_whitespace));
        // `(n = 4,595 respondents.) Among men…`: a closing bracket or quote after the stop ends
        // the sentence with it.
        let closed = matches!(c, '.' | '!' | '?')
            && next.is_some_and(|n| matches!(n, ')' | '"' | '”' | '’' | '\''))
            && chars.get(k + 2).is_none_or(|x| x.1.is_whitespace());
        if closed {
            continue;
        }
        let end_here = end_here
            || (matches!(c, ')' | '"' | '”' | '’' | '\'')
                && k > 0
                && matches!(chars[k - 1].1, '.' | '!' | '?')
                && next.is_none_or(char::is_whitespace));
        if end_here {
            let end = i + c.len_utf8();
            if !text[start..end].trim().is_empty() {
                out.push((start, end));
            }
            start = end;
        }
    }
    if !text[start..].trim().is_empty() {
        out.push((start, text.len()));
    }
    out
}

/// What the numbers of a line are about beyond the line's own text: for a row of a Markdown
/// table, its table's header line (a cell's column header and the row's first cell name its
/// subject); for a bullet, the lead-in line ending in `:` before the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineSubject {
    /// A table row under this header line.
    Table(usize, usize),
    /// A bullet under this lead-in line.
    Bullet(usize, usize),
}

/// Lines longer than this are never table rows, bullets or lead-ins: the cost of reading a
/// cell's header stays bounded whatever the answer.
pub const MAX_SUBJECT_LINE: usize = 4096;

/// The lines of `text` whose numbers have a subject beyond the line ([`LineSubject`]), in order,
/// each as its byte span (without the line break); one pass over the text.
pub fn line_subjects(text: &str) -> Vec<((usize, usize), LineSubject)> {
    let mut out = Vec::new();
    // The table being read: its header line, and how many of its lines were seen.
    let mut table: Option<((usize, usize), usize, bool)> = None;
    let mut lead: Option<(usize, usize)> = None;
    let mut at = 0;
    for raw in text.split_inclusive('\n') {
        let line = (at, at + raw.trim_end_matches(['\n', '\r']).len());
        at += raw.len();
        let body = &text[line.0..line.1];
        let trimmed = body.trim();
        let short = body.len() <= MAX_SUBJECT_LINE;
        if short && trimmed.starts_with('|') {
            table = match table {
                None => Some((line, 1, false)),
                Some((header, 1, _)) => {
                    // The second line must be the delimiter row (`|---|:--:|`).
                    let delimiter = trimmed.contains('-')
                        && trimmed.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'));
                    Some((header, 2, delimiter))
                }
                Some((header, n, true)) => {
                    out.push((line, LineSubject::Table(header.0, header.1)));
                    Some((header, n + 1, true))
                }
                Some(t) => Some(t),
            };
            continue;
        }
        table = None;
        if trimmed.is_empty() {
            continue;
        }
        let bullet = ["- ", "* ", "+ ", "• "].iter().any(|b| trimmed.starts_with(*b)) || {
            let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
            digits > 0 && (trimmed[digits..].starts_with(". ") || trimmed[digits..].starts_with(") "))
        };
        match (bullet, lead) {
            (true, Some(l)) if short => out.push((line, LineSubject::Bullet(l.0, l.1))),
            (true, _) => {}
            (false, _) => lead = (short && trimmed.ends_with(':')).then_some(line),
        }
    }
    out
}

/// The subject text of the number at byte `at` in `text` (lower case, at most 300 bytes of
/// each part), when its line has one in `subjects` ([`line_subjects`]): the column header of its
/// cell and its row's first cell, or the bullets' lead-in line.
pub fn subject_of(text: &str, subjects: &[((usize, usize), LineSubject)], at: usize) -> Option<String> {
    let k = subjects.partition_point(|&((a, _), _)| a <= at);
    let &((a, b), subject) = subjects.get(k.checked_sub(1)?)?;
    if at >= b {
        return None;
    }
    let clip = |s: &str| {
        let s = s.trim();
        let end = (0..=s.len().min(300)).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        s[..end].to_lowercase()
    };
    match subject {
        LineSubject::Bullet(la, lb) => Some(clip(&text[la..lb])),
        LineSubject::Table(ha, hb) => {
            // The cell: how many pipes stand before the number on its row.
            let column = text[a..at].matches('|').count();
            let header = text[ha..hb].split('|').nth(column).map(clip).unwrap_or_default();
            let row = if column > 1 {
                text[a..b].split('|').nth(1).map(clip).unwrap_or_default()
            } else {
                String::new()
            };
            Some(format!("{header} | {row}"))
        }
    }
}

/// Byte ranges not read for numbers: code spans and fences, and quoted questions; sorted and
/// merged, so that a position is looked up by binary search ([`in_spans`]).
fn skipped_spans(text: &str) -> Vec<(usize, usize)> {
    let mut fences = Vec::new();
    // Fenced blocks first, then inline code.
    let mut rest = 0;
    while let Some(open) = text[rest..].find("```") {
        let open = rest + open;
        let close = text[open + 3..].find("```").map(|c| open + 3 + c + 3).unwrap_or(text.len());
        fences.push((open, close));
        rest = close;
        if rest >= text.len() {
            break;
        }
    }
    let mut spans = fences.clone();
    let mut i = 0;
    let mut fence = 0;
    let bytes = text.as_bytes();
    while i < bytes.len() {
        // Fences are in order and `i` only grows: skip the ones already behind.
        while fence < fences.len() && fences[fence].1 <= i {
            fence += 1;
        }
        let in_fence = fences.get(fence).is_some_and(|&(a, b)| i >= a && i < b);
        if bytes[i] == b'`' && !in_fence {
            let close = text[i + 1..].find('`').map(|c| i + 1 + c + 1).unwrap_or(text.len());
            spans.push((i, close));
            i = close;
        } else {
            i += 1;
        }
    }
    for (open, close) in [('"', '"'), ('\u{201C}', '\u{201D}')] {
        let mut from = 0;
        while let Some(a) = text[from..].find(open) {
            let a = from + a;
            let after = a + open.len_utf8();
            let Some(b) = text[after..].find(close) else { break };
            let b = after + b + close.len_utf8();
            if text[a..b].contains('?') {
                spans.push((a, b));
            }
            from = b;
        }
    }
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (a, b) in spans {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

/// Whether byte `at` falls in one of `spans` (sorted, disjoint).
fn in_spans(spans: &[(usize, usize)], at: usize) -> bool {
    let k = spans.partition_point(|&(a, _)| a <= at);
    k > 0 && at < spans[k - 1].1
}

/// The index of the span of `spans` (sorted, disjoint) holding byte `at`, if any.
pub fn span_of(spans: &[(usize, usize)], at: usize) -> Option<usize> {
    let k = spans.partition_point(|&(a, _)| a <= at);
    k.checked_sub(1).filter(|&i| at < spans[i].1)
}

fn prev_char(text: &str, at: usize) -> Option<char> {
    text[..at].chars().next_back()
}

fn next_char(text: &str, at: usize) -> Option<char> {
    text[at..].chars().next()
}

/// The word (letters) just before byte `at`, skipping spaces and `(`.
fn word_before(text: &str, at: usize) -> String {
    let head = text[..at].trim_end_matches([' ', '\u{a0}', '\u{202f}', '\u{2009}', '(', '~', '≈']);
    let word: String = head.chars().rev().take_while(|c| c.is_alphabetic()).collect();
    word.chars().rev().collect::<String>().to_lowercase()
}

/// The word (letters) just after byte `at`, skipping spaces.
fn word_after(text: &str, at: usize) -> String {
    let tail = text[at..].trim_start_matches(SPACES);
    tail.chars().take_while(|c| c.is_alphabetic()).collect::<String>().to_lowercase()
}

/// The spaces skipped between a number and its unit or a neighbouring word.
const SPACES: [char; 4] = [' ', '\u{a0}', '\u{202f}', '\u{2009}'];

/// Reads the digits of a number at byte `at` (a digit): integer part with thousands groups (a
/// `,` or a space followed by exactly three digits; by the comma convention a
/// `.` groups and a `,` is the decimal mark instead), decimals. Returns where the digits end
/// and whether group separators were read.
fn read_digits(text: &str, at: usize, mark: Option<DecimalMark>) -> (usize, bool) {
    let comma = mark == Some(DecimalMark::Comma);
    let (point, group) = if comma { (b',', '.') } else { (b'.', ',') };
    let b = text.as_bytes();
    let mut i = at;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut separators = false;
    if i - at <= 3 {
        while let Some(sep) = next_char(text, i).filter(|&c| c == group || SPACES.contains(&c)) {
            let j = i + sep.len_utf8();
            let three = j + 3 <= b.len() && b[j..j + 3].iter().all(u8::is_ascii_digit);
            let fourth = j + 3 < b.len() && b[j + 3].is_ascii_digit();
            // `4,654` and `4 654` yes; `1,2`, `44, 31` and `44 2026` no; `4 654.5` keeps going.
            if !three || fourth {
                break;
            }
            separators = true;
            i = j + 3;
        }
    }
    if i + 1 < b.len() && b[i] == point && b[i + 1].is_ascii_digit() {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    } else if !comma && !separators && b.get(i) == Some(&b',') {
        // `44,2 %` whatever the text shows: a comma before one or two digits and a percent
        // sign can only be a decimal comma.
        let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        let after = text[i + 1 + digits..].trim_start_matches(SPACES);
        if (1..=2).contains(&digits) && after.starts_with('%') {
            i += 1 + digits;
        }
    }
    (i, separators)
}

/// The decimal mark a text's own numbers show (docs/answers.md, "Decimal marks"): a number
/// that can be read only one way (`44.2` and `1,234,567` show the dot; `44,2`, `4.595,5` and
/// `1.234.567` the comma). `None` when no number shows one, or numbers show both.
pub fn evident_mark(text: &str) -> Option<DecimalMark> {
    let (mut dot, mut comma) = (false, false);
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() || i > 0 && matches!(b[i - 1], b'.' | b',' | b'0'..=b'9') {
            i += 1;
            continue;
        }
        // A run of digits, dots and commas that starts and ends with a digit.
        let mut end = i;
        let mut j = i;
        while j < b.len() && matches!(b[j], b'.' | b',' | b'0'..=b'9') {
            if b[j].is_ascii_digit() {
                end = j + 1;
            }
            j += 1;
        }
        let run = &text[i..end];
        i = j;
        let parts: Vec<&str> = run.split(['.', ',']).collect();
        let marks: Vec<u8> = run.bytes().filter(|c| matches!(c, b'.' | b',')).collect();
        let Some(&last) = marks.last() else { continue };
        let groups = |ps: &[&str]| {
            !ps.is_empty() && (1..=3).contains(&ps[0].len()) && ps[1..].iter().all(|p| p.len() == 3)
        };
        let shows = if marks.iter().any(|&m| m != last) {
            // `4,595.5`, `4.595,5`: the last mark is the decimal one, the others group.
            let others_group = marks[..marks.len() - 1].iter().all(|&m| m == marks[0]);
            (others_group && groups(&parts[..parts.len() - 1])).then_some(last)
        } else if marks.len() >= 2 {
            // `1,234,567`, `1.234.567`: groups, so the decimal mark is the other one.
            groups(&parts).then_some(if last == b'.' { b',' } else { b'.' })
        } else if parts[1].len() != 3 {
            // `44.2`, `44,2`: no group is written so.
            Some(last)
        } else {
            None
        };
        match shows {
            Some(b'.') => dot = true,
            Some(_) => comma = true,
            None => {}
        }
    }
    match (dot, comma) {
        (true, false) => Some(DecimalMark::Dot),
        (false, true) => Some(DecimalMark::Comma),
        _ => None,
    }
}

/// A found number's text (an optional sign `+`, `-` or `−`, digits with group separators, an
/// optional decimal part; no unit) as its value and the digits shown after the decimal point,
/// read by the convention `mark` the text shows (`None`: it shows none).
///
/// The one place the answer audit turns number text into a value, through the readers' own
/// parser ([`crate::claim::read_written`]), so the audit and the readers never disagree about
/// the same text. `None` when the text is not a number, or is one whose value is ambiguous
/// (`4.595` in a text that shows no convention): such a number matches nothing, so it can
/// never be TRACED. `percent` says a `%` (or "percent") follows, which the parser weighs in a
/// dot's reading (`4.595%` is a decimal).
pub fn number_value(text: &str, percent: bool, mark: Option<DecimalMark>) -> Option<(f64, i32)> {
    let n = if percent {
        crate::claim::read_written(&format!("{text}%"), mark).ok()?
    } else {
        crate::claim::read_written(text, mark).ok()?
    };
    Some((n.value, n.decimals))
}

/// Reads the unit after a number ending at `at`: `%`, `percent`, `per cent`, `pts`, `pt`, `pp`,
/// `points`, `percentage points`. Returns the unit and where it ends.
fn read_unit(text: &str, at: usize) -> (Option<Kind>, usize) {
    let rest = &text[at..];
    let trimmed = rest.trim_start_matches(SPACES);
    let skipped = rest.len() - trimmed.len();
    if trimmed.starts_with('%') && skipped <= 1 {
        return (Some(Kind::Percent), at + skipped + 1);
    }
    if skipped == 0 && !rest.is_empty() && !rest.starts_with(|c: char| c.is_alphabetic()) {
        return (None, at);
    }
    // Only the few characters a unit can take: lower-casing the rest of the text per number
    // made finding quadratic.
    let lower = trimmed.chars().take(24).collect::<String>().to_lowercase();
    let word_end =
        |w: &str| lower.starts_with(w) && !lower[w.len()..].starts_with(|c: char| c.is_alphabetic());
    for (w, kind) in [
        ("percentage points", Kind::Points),
        ("percentage point", Kind::Points),
        ("per cent", Kind::Percent),
        ("percent", Kind::Percent),
        ("points", Kind::Points),
        ("point", Kind::Points),
        ("pts", Kind::Points),
        ("pt", Kind::Points),
        ("pp", Kind::Points),
    ] {
        if word_end(w) {
            return (Some(kind), at + skipped + w.len());
        }
    }
    (None, at)
}

/// Whether the number at `at` follows `n =`, `n:`, `N` or `base`: a count.
fn names_a_count(text: &str, at: usize) -> bool {
    let head = text[..at].trim_end_matches(SPACES);
    let head = head.strip_suffix(['=', ':']).unwrap_or(head).trim_end();
    let w = word_before(head, head.len());
    w == "n" || w == "base"
}

fn tokens(text: &str) -> Vec<Token> {
    let mark = evident_mark(text);
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let mut start = i;
        let mut signed = false;
        if let Some(p) = prev_char(text, i).filter(|p| matches!(p, '+' | '-' | '−')) {
            let before = prev_char(text, i - p.len_utf8());
            if before.is_none_or(|c| !c.is_alphanumeric() && c != '-') {
                signed = true;
                start = i - p.len_utf8();
            }
        }
        let (digits_end, separators) = read_digits(text, i, mark);
        let (unit, end) = read_unit(text, digits_end);
        let written = &text[start..digits_end];
        let (value, decimals) = number_value(written, matches!(unit, Some(Kind::Percent)), mark)
            .or_else(|| {
                // `n = 4.654` in a text that shows no convention: a count has no fraction, so
                // only the thousands reading is one.
                let count = unit.is_none()
                    && (names_a_count(text, start)
                        || COUNT_WORDS.contains(&word_after(text, digits_end).as_str()));
                count
                    .then(|| number_value(written, false, Some(DecimalMark::Comma)))
                    .flatten()
                    .filter(|(_, d)| *d == 0)
            })
            .unwrap_or((f64::NAN, 0));
        out.push(Token { start, end, value, decimals, separators, signed, unit });
        i = digits_end.max(i + 1);
    }
    out
}

/// The numbers `text` states, in order, with the non-claims left out (docs/answers.md).
pub fn find(text: &str) -> Vec<Stated> {
    let skipped = skipped_spans(text);
    let sentences = sentences(text);
    let mut toks = tokens(text);
    let n = toks.len();
    // Ranges: `42–46%` gives both ends the unit; a range with no unit (`18-74`, a date) is not
    // a claim at all.
    let mut in_bare_range = vec![false; n];
    let mut range: Vec<Option<(f64, f64)>> = vec![None; n];
    // Ends of a range or of a change (`from 47% to 44%`, `30.6–27%`): levels, never relative
    // changes, whatever word stands before them.
    let mut paired = vec![false; n];
    for k in 0..n.saturating_sub(1) {
        let between = &text[toks[k].end..toks[k + 1].start];
        // `W5 to 44%` is no range: an end glued to a letter is a wave or a code.
        let glued = |t: &Token| prev_char(text, t.start).is_some_and(char::is_alphabetic);
        let joined = !between.contains('\n')
            && matches!(between.trim(), "-" | "–" | "—" | "‑" | "to")
            && !glued(&toks[k])
            && !glued(&toks[k + 1]);
        if !joined {
            continue;
        }
        paired[k] = true;
        paired[k + 1] = true;
        // Only whole unsigned ends make a bare range (`18-74`, dates); `from −20.1 to −25.1`
        // states two values.
        let plain = |t: &Token| t.decimals == 0 && !t.signed;
        match (toks[k].unit, toks[k + 1].unit) {
            (None, None) if plain(&toks[k]) && plain(&toks[k + 1]) => {
                in_bare_range[k] = true;
                in_bare_range[k + 1] = true;
                continue;
            }
            (None, Some(u)) => toks[k].unit = Some(u),
            _ => {}
        }
        // `from 30.6% to 27%`, `47–44%`: a change, two values sharing the unit, not a range.
        let before = text[..toks[k].start].trim_end();
        let from = before.len() >= 4
            && before.is_char_boundary(before.len() - 4)
            && before[before.len() - 4..].eq_ignore_ascii_case("from")
            && prev_char(before, before.len() - 4).is_none_or(|c| !c.is_alphanumeric());
        let (a, b) = (toks[k].value, toks[k + 1].value);
        if from || a > b {
            continue;
        }
        range[k] = Some((a, b));
        range[k + 1] = range[k];
    }
    let mut out = Vec::new();
    let (mut line_start, mut scanned) = (0, 0);
    for (k, t) in toks.iter().enumerate() {
        if in_bare_range[k] || in_spans(&skipped, t.start) {
            continue;
        }
        // Tokens come in order: the last line break before this one is found incrementally.
        if let Some(p) = text[scanned..t.start].rfind('\n') {
            line_start = scanned + p + 1;
        }
        scanned = t.start.max(scanned);
        if !keep(text, t, line_start) {
            continue;
        }
        let sentence = span_of(&sentences, t.start).unwrap_or(0);
        // `1.4 times Corvana's`: a ratio of two cited values, read as the relative change it
        // states (+40%), agreeing within half a unit of its last digit.
        if t.unit.is_none() && !t.signed && t.decimals >= 1 && word_after(text, t.end) == "times" {
            let (value, direction) =
                if t.value >= 1.0 { ((t.value - 1.0) * 100.0, 1) } else { ((1.0 - t.value) * 100.0, -1) };
            out.push(Stated {
                text: text[t.start..t.end].to_string(),
                start: t.start,
                end: t.end,
                value,
                decimals: (t.decimals - 2).max(0),
                kind: Kind::Relative,
                sentence,
                range: None,
                direction,
                tolerance: Some(50.0 * 10f64.powi(-t.decimals)),
            });
            continue;
        }
        let count_before = names_a_count(text, t.start) && t.unit.is_none() && t.decimals == 0;
        let count_after = t.unit.is_none()
            && t.decimals == 0
            && (t.separators || t.value >= 10.0)
            && COUNT_WORDS.contains(&word_after(text, t.end).as_str());
        let kind = match t.unit {
            Some(Kind::Percent) if !paired[k] => match relative(text, t) {
                Some(_) => Kind::Relative,
                None => Kind::Percent,
            },
            Some(u) => u,
            None if count_before || count_after => Kind::Count,
            None => Kind::Number,
        };
        // Bare small whole numbers (`3 brands`, `top 5`) are not results unless a count.
        if kind == Kind::Number && t.decimals == 0 && !t.separators && !t.signed && t.value.abs() < 10.0 {
            continue;
        }
        // A relative change's direction: the change word's, or its own sign (`-12%`).
        let direction = match kind {
            Kind::Relative if t.signed && t.value != 0.0 => t.value.signum() as i8,
            Kind::Relative => relative(text, t).unwrap_or(0),
            _ => 0,
        };
        out.push(Stated {
            text: text[t.start..t.end].to_string(),
            start: t.start,
            end: t.end,
            value: t.value,
            decimals: t.decimals,
            kind,
            sentence,
            range: range[k],
            direction,
            tolerance: None,
        });
    }
    let fractions = fraction_changes(text, &skipped);
    if !fractions.is_empty() {
        for (a, b, value, direction) in fractions {
            out.push(Stated {
                text: text[a..b].to_string(),
                start: a,
                end: b,
                value,
                decimals: 0,
                kind: Kind::Relative,
                sentence: span_of(&sentences, a).unwrap_or(0),
                range: None,
                direction,
                tolerance: Some(value / 10.0),
            });
        }
        out.sort_by_key(|s| s.start);
    }
    out
}

/// Whether a token is kept as a stated number (the exclusion rules of docs/answers.md).
fn keep(text: &str, t: &Token, line_start: usize) -> bool {
    if !t.value.is_finite() {
        return false;
    }
    let before = prev_char(text, t.start);
    let after = next_char(text, t.end);
    // Identifiers and waves: a letter, `_`, `#`, `/`, `.` or `:` touching the number.
    if before.is_some_and(|c| c.is_alphabetic() || matches!(c, '_' | '#' | '/' | '.' | ':' | '\\' | '@')) {
        return false;
    }
    // `U+2212`, `COVID-19`: a sign glued to a word is part of a name.
    if !t.signed
        && before.is_some_and(|c| matches!(c, '+' | '-' | '‑'))
        && prev_char(text, t.start - 1).is_some_and(char::is_alphabetic)
    {
        return false;
    }
    if t.unit.is_none() {
        // `3rd`, `6pm`, `2x`, `v2_1`, `12:30`, `3/4`, `2026-04-17`, `1.2.3`.
        if after.is_some_and(|c| c.is_alphabetic() || matches!(c, '_' | '/' | ':' | '-' | '‑'))
            && !text[t.end..].starts_with(": ")
        {
            return false;
        }
        if text[t.end..].starts_with('.') && text[t.end + 1..].starts_with(|c: char| c.is_ascii_digit()) {
            return false;
        }
    }
    let plain_whole = t.unit.is_none() && t.decimals == 0 && !t.separators && !t.signed;
    // Years.
    if plain_whole && (1900.0..=2100.0).contains(&t.value) {
        return false;
    }
    // Dates: a day next to a month name.
    if plain_whole && t.value <= 31.0 {
        let (wb, wa) = (word_before(text, t.start), word_after(text, t.end));
        if MONTHS.contains(&wb.as_str()) || MONTHS.contains(&wa.as_str()) {
            return false;
        }
    }
    // Times: `9 am`, `14 h`.
    if plain_whole && ["am", "pm", "h", "hrs", "o"].contains(&word_after(text, t.end).as_str()) {
        return false;
    }
    // List numbers: `1.` or `2)` opening a line.
    let opens_line = text[line_start..t.start].trim_start_matches(['-', '*', ' ', '\t', '>']).is_empty();
    if opens_line && plain_whole && text[t.end..].starts_with(['.', ')']) {
        return false;
    }
    // Bounds and thresholds: `under 100`, `more than 40%`, `at least 30`.
    if BOUNDS.contains(&word_before(text, t.start).as_str()) {
        return false;
    }
    // Identifiers: `respondent 10482`.
    if plain_whole && IDENTIFIERS.contains(&word_before(text, t.start).as_str()) {
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<(String, Kind)> {
        find(s).into_iter().map(|x| (x.text, x.kind)).collect()
    }

    #[test]
    fn answers_find_percentages_counts_and_signs() {
        let s = "Among adults 18-74 aware of Versant in W6 (April 2026; n = 4,654), 69.4% are familiar. \
                 Its NPS is -25.1 (22.6% promoters; n = 3,241 who rated it).";
        let got = texts(s);
        let want = [
            ("4,654", Kind::Count),
            ("69.4%", Kind::Percent),
            ("-25.1", Kind::Number),
            ("22.6%", Kind::Percent),
            ("3,241", Kind::Count),
        ];
        assert_eq!(got, want.iter().map(|(t, k)| (t.to_string(), *k)).collect::<Vec<_>>());
    }

    #[test]
    fn answers_find_units_ranges_points_and_unicode_minus() {
        let got = texts("44.2 percent, 44 per cent, 42–46%, up +2.3 pts, NPS −25.1, 4 654 respondents.");
        let t: Vec<&str> = got.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(t, ["44.2 percent", "44 per cent", "42", "46%", "+2.3 pts", "−25.1", "4 654"]);
        assert_eq!(got[2].1, Kind::Percent);
        assert_eq!(got[4].1, Kind::Points);
        assert_eq!(find("NPS −25.1")[0].value, -25.1);
        // A change is two values, not a range; they share the unit.
        for change in ["purchase from 30.6% to 27%", "purchase from 30.6 to 27%", "purchase fell 30.6–27%"]
        {
            let got = find(change);
            assert_eq!(got.len(), 2, "{change}");
            assert!(got.iter().all(|s| s.range.is_none() && s.kind == Kind::Percent), "{change}: {got:?}");
        }
        assert_eq!(find("between 42 to 46%")[0].range, Some((42.0, 46.0)));
    }

    #[test]
    fn answers_find_relative_changes_apart_from_points_and_levels() {
        let got = find("Purchase rose 12% and consideration fell by about 6.0 percent.");
        assert_eq!(
            got.iter().map(|s| (s.kind, s.direction)).collect::<Vec<_>>(),
            [(Kind::Relative, 1), (Kind::Relative, -1)]
        );
        let got = find("A 12% increase, 12% lower than Corvana, fell by a fifth, up 2.8 points.");
        let kinds: Vec<(&str, Kind, i8)> =
            got.iter().map(|s| (s.text.as_str(), s.kind, s.direction)).collect();
        assert_eq!(
            kinds,
            [
                ("12%", Kind::Relative, 1),
                ("12%", Kind::Relative, -1),
                ("a fifth", Kind::Relative, -1),
                ("2.8 points", Kind::Points, 0)
            ]
        );
        assert_eq!((got[2].value, got[2].half_unit()), (20.0, 2.0));
        // Levels: `rose to`, `up from`, a change's two ends, a plain share.
        for level in [
            "Purchase rose to 27%.",
            "Up from 44%.",
            "It fell from 47% to 44%.",
            "Purchase fell 30.6–27%.",
            "Consideration is 12%.",
        ] {
            assert!(find(level).iter().all(|s| s.kind == Kind::Percent), "{level}: {:?}", find(level));
        }
    }

    #[test]
    fn answers_sentence_ends_after_a_stop_and_a_closing_bracket() {
        // Before: one sentence, so the W6 of the second was read as the W5 count's period.
        let text = "(n = 4,595 respondents.) Among men, 44% would consider it in W6.";
        let got: Vec<&str> = sentences(text).into_iter().map(|(a, b)| text[a..b].trim()).collect();
        assert_eq!(got, ["(n = 4,595 respondents.)", "Among men, 44% would consider it in W6."]);
    }

    #[test]
    fn answers_leave_dates_waves_lists_times_code_and_questions_alone() {
        let s = "1. In W6 (17 April 2026) at 10:30, see `share = 0.44` and s14r5.\n\
                 2) You asked \"is it above 40% in 2025?\" The 65-74 cell has a base under 100, 3 brands.";
        assert_eq!(texts(s), Vec::<(String, Kind)>::new());
    }

    #[test]
    fn answers_leave_identifiers_alone() {
        let s = "Verbatims:\n- respondent 10482: \"too pricey\"\n- Respondent 2231 liked the app (case 17, ID 4021).";
        assert_eq!(texts(s), Vec::<(String, Kind)>::new());
        // A count of respondents is still a number.
        assert_eq!(texts("4,654 respondents answered.").len(), 1);
    }

    #[test]
    fn answers_read_numbers_by_the_convention_the_text_shows() {
        // No other number shows a convention: `87.182` is left unread (matches nothing).
        assert!(find("The mean is 87.182.").iter().all(|n| n.value.is_nan() || n.text != "87.182"));
        // `44.2%` shows the dot: `87.182` is a decimal.
        let got: Vec<f64> =
            find("Considered is 44.2%; the mean zinc is 87.182.").iter().map(|n| n.value).collect();
        assert_eq!(got, [44.2, 87.182]);
        // `1.234.567` and `44,2 %` show the comma: `4.654` is a count, `44,2 %` one number.
        let got: Vec<(String, f64)> =
            find("Von 1.234.567 Befragten sind 4.654 bekannt, 44,2 % würden kaufen.")
                .into_iter()
                .map(|n| (n.text, n.value))
                .collect();
        assert_eq!(
            got,
            [("1.234.567".to_string(), 1234567.0), ("4.654".into(), 4654.0), ("44,2 %".into(), 44.2)]
        );
        assert_eq!(evident_mark("44.2 and 44,2"), None, "both shown: none");
        assert_eq!(evident_mark("W6, 2026-04-17, 4,654"), None);
        // Both shown: `44,2 %` can only be a decimal comma, and a count (`n = 4.654`, `4.654
        // respondents`) has no fraction, so each is still read (they were `44` and `2 %`, and
        // nothing).
        let got: Vec<(String, f64)> = find("Consideration is 44,2 % in W6 and 46.7% in W5 (n = 4.654).")
            .into_iter()
            .map(|n| (n.text, n.value))
            .collect();
        assert_eq!(got, [("44,2 %".to_string(), 44.2), ("46.7%".into(), 46.7), ("4.654".into(), 4654.0)]);
        assert_eq!(find("The base was 4.654 respondents.")[0].value, 4654.0);
    }

    #[test]
    fn answers_read_make_up_as_a_level_and_times_as_a_ratio() {
        // `make up 25%` is a part of a whole, not a rise of 25%.
        let n = &find("Promoters make up 25% of familiar adults.")[0];
        assert_eq!((n.kind, n.value), (Kind::Percent, 25.0));
        // `1.4 times` is the relative change it states: 40% more, within half its last digit.
        let n = &find("Versant's consideration is 1.4 times Corvana's.")[0];
        assert_eq!((n.kind, n.direction), (Kind::Relative, 1));
        assert!(
            (n.value - 40.0).abs() < 1e-9 && n.tolerance.is_some_and(|t| (t - 5.0).abs() < 1e-9),
            "{n:?}"
        );
        // A whole number of times is no ratio of results (`3 times a week`).
        assert!(find("They shop 3 times a week.").is_empty());
    }
}
