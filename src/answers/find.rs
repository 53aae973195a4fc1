//! Finding the numbers an answer states, and leaving alone the numbers that are not claims.
//!
//! The rules (docs/answers.md) are deliberately conservative: a number is only taken as a
//! statistical claim when it looks like one (a percentage, a decimal, a count with separators or
//! `n =`, a signed value, a whole number of 10 or more). Dates, years, times, waves (`W6`), list
//! numbers, identifiers, bare ranges (`18-74`), bounds (`under 100`), code spans and quoted
//! questions are skipped: a false alarm costs a reader's trust.

use serde::Serialize;

/// What kind of number a stated number is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A percentage (`44%`, `44.2 percent`, `44 per cent`).
    Percent,
    /// A difference in percentage points (`+2.3 pts`).
    Points,
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
}

impl Stated {
    /// Half a unit of the last shown digit, in the units written.
    pub fn half_unit(&self) -> f64 {
        0.5 * 10f64.powi(-self.decimals)
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

/// Words after a number that make it a count of respondents.
const COUNT_WORDS: &[&str] = &["respondents", "people", "adults", "interviews", "completes", "cases"];

/// The sentences of `text`: byte ranges, split after `.`, `!`, `?` followed by white space, and
/// at line breaks.
pub fn sentences(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (k, &(i, c)) in chars.iter().enumerate() {
        let next = chars.get(k + 1).map(|x| x.1);
        let end_here = c == '\n' || (matches!(c, '.' | '!' | '?') && next.is_none_or(char::is_whitespace));
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

/// Byte ranges not read for numbers: code spans and fences, and quoted questions.
fn skipped_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    // Fenced blocks first, then inline code.
    let mut rest = 0;
    while let Some(open) = text[rest..].find("```") {
        let open = rest + open;
        let close = text[open + 3..].find("```").map(|c| open + 3 + c + 3).unwrap_or(text.len());
        spans.push((open, close));
        rest = close;
        if rest >= text.len() {
            break;
        }
    }
    let mut i = 0;
    let bytes = text.as_bytes();
    while i < bytes.len() {
        if bytes[i] == b'`' && !spans.iter().any(|&(a, b)| i >= a && i < b) {
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
    spans
}

fn prev_char(text: &str, at: usize) -> Option<char> {
    text[..at].chars().next_back()
}

fn next_char(text: &str, at: usize) -> Option<char> {
    text[at..].chars().next()
}

/// The word (letters) just before byte `at`, skipping spaces and `(`.
fn word_before(text: &str, at: usize) -> String {
    let head = text[..at].trim_end_matches([' ', '\u{a0}', '(', '~', '≈']);
    let word: String = head.chars().rev().take_while(|c| c.is_alphabetic()).collect();
    word.chars().rev().collect::<String>().to_lowercase()
}

/// The word (letters) just after byte `at`, skipping spaces.
fn word_after(text: &str, at: usize) -> String {
    let tail = text[at..].trim_start_matches([' ', '\u{a0}']);
    tail.chars().take_while(|c| c.is_alphabetic()).collect::<String>().to_lowercase()
}

/// Reads the digits of a number at byte `at` (a digit): integer part with thousands groups
/// (`,`, space, no-break or narrow no-break space followed by exactly three digits), decimals.
fn read_digits(text: &str, at: usize) -> (usize, String, i32, bool) {
    let b = text.as_bytes();
    let mut i = at;
    let mut digits = String::new();
    while i < b.len() && b[i].is_ascii_digit() {
        digits.push(b[i] as char);
        i += 1;
    }
    let mut separators = false;
    if digits.len() <= 3 {
        loop {
            let sep_len = match next_char(text, i) {
                Some(',') | Some(' ') => 1,
                Some('\u{a0}') => 2,
                Some('\u{202f}') => 3,
                _ => 0,
            };
            if sep_len == 0 {
                break;
            }
            let j = i + sep_len;
            let three = j + 3 <= b.len() && b[j..j + 3].iter().all(u8::is_ascii_digit);
            let fourth = j + 3 < b.len() && b[j + 3].is_ascii_digit();
            // `4,654` yes; `1,2` and `44, 31` no; `4 654.5` keeps going.
            if !three || fourth || (b[i] == b' ' && separators_ambiguous(text, j + 3)) {
                break;
            }
            digits.push_str(&text[j..j + 3]);
            separators = true;
            i = j + 3;
        }
    }
    let mut decimals = 0;
    if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
        digits.push('.');
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            digits.push(b[i] as char);
            decimals += 1;
            i += 1;
        }
    }
    (i, digits, decimals, separators)
}

/// A space-grouped number (`4 654`) must not swallow a following year or unit-less number in
/// running text: only accept it when what follows the group is not another digit group.
fn separators_ambiguous(text: &str, after: usize) -> bool {
    text[after..].starts_with(|c: char| c.is_ascii_digit())
}

/// Reads the unit after a number ending at `at`: `%`, `percent`, `per cent`, `pts`, `pt`, `pp`,
/// `points`, `percentage points`. Returns the unit and where it ends.
fn read_unit(text: &str, at: usize) -> (Option<Kind>, usize) {
    let rest = &text[at..];
    let trimmed = rest.trim_start_matches([' ', '\u{a0}', '\u{202f}']);
    let skipped = rest.len() - trimmed.len();
    if trimmed.starts_with('%') && skipped <= 1 {
        return (Some(Kind::Percent), at + skipped + 1);
    }
    if skipped == 0 && !rest.is_empty() && !rest.starts_with(|c: char| c.is_alphabetic()) {
        return (None, at);
    }
    let lower = trimmed.to_lowercase();
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

fn tokens(text: &str) -> Vec<Token> {
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
        let mut negative = false;
        if let Some(p) = prev_char(text, i).filter(|p| matches!(p, '+' | '-' | '−')) {
            let before = prev_char(text, i - p.len_utf8());
            if before.is_none_or(|c| !c.is_alphanumeric() && c != '-') {
                signed = true;
                negative = p != '+';
                start = i - p.len_utf8();
            }
        }
        let (digits_end, digits, decimals, separators) = read_digits(text, i);
        let (unit, end) = read_unit(text, digits_end);
        let value: f64 = digits.parse().unwrap_or(f64::NAN);
        out.push(Token {
            start,
            end,
            value: if negative { -value } else { value },
            decimals,
            separators,
            signed,
            unit,
        });
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
        match (toks[k].unit, toks[k + 1].unit) {
            (None, None) => {
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
    for (k, t) in toks.iter().enumerate() {
        if in_bare_range[k] || skipped.iter().any(|&(a, b)| t.start >= a && t.start < b) {
            continue;
        }
        if !keep(text, t) {
            continue;
        }
        let count_before = {
            let head = text[..t.start].trim_end_matches([' ', '\u{a0}']);
            let head = head.strip_suffix(['=', ':']).unwrap_or(head).trim_end();
            let w = word_before(head, head.len());
            (w == "n" || w == "base") && t.unit.is_none() && t.decimals == 0
        };
        let count_after = t.unit.is_none()
            && t.decimals == 0
            && (t.separators || t.value >= 10.0)
            && COUNT_WORDS.contains(&word_after(text, t.end).as_str());
        let kind = match t.unit {
            Some(u) => u,
            None if count_before || count_after => Kind::Count,
            None => Kind::Number,
        };
        // Bare small whole numbers (`3 brands`, `top 5`) are not results unless a count.
        if kind == Kind::Number && t.decimals == 0 && !t.separators && !t.signed && t.value.abs() < 10.0 {
            continue;
        }
        let sentence = sentences.iter().position(|&(a, b)| t.start >= a && t.start < b).unwrap_or(0);
        out.push(Stated {
            text: text[t.start..t.end].to_string(),
            start: t.start,
            end: t.end,
            value: t.value,
            decimals: t.decimals,
            kind,
            sentence,
            range: range[k],
        });
    }
    out
}

/// Whether a token is kept as a stated number (the exclusion rules of docs/answers.md).
fn keep(text: &str, t: &Token) -> bool {
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
    let line_start = text[..t.start].rfind('\n').map_or(0, |p| p + 1);
    let opens_line = text[line_start..t.start].trim_start_matches(['-', '*', ' ', '\t', '>']).is_empty();
    if opens_line && plain_whole && text[t.end..].starts_with(['.', ')']) {
        return false;
    }
    // Bounds and thresholds: `under 100`, `more than 40%`, `at least 30`.
    if BOUNDS.contains(&word_before(text, t.start).as_str()) {
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
    fn answers_leave_dates_waves_lists_times_code_and_questions_alone() {
        let s = "1. In W6 (17 April 2026) at 10:30, see `share = 0.44` and s14r5.\n\
                 2) You asked \"is it above 40% in 2025?\" The 65-74 cell has a base under 100, 3 brands.";
        assert_eq!(texts(s), Vec::<(String, Kind)>::new());
    }
}
