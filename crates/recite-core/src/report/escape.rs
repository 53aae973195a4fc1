//! What every report format does to strings that come from its inputs: caps their length and
//! makes control and bidi characters visible. One place, so no format can forget one.
//!
//! - **Length.** A string from an input (a key, an id, a name, a message echoing them) is shown
//!   at most [`MAX_ECHO_CHARS`] characters, then `… (N bytes)`; a conversation turn in the HTML
//!   report at most [`MAX_TURN_CHARS`]. A 10 MB key cannot make a 30 MB report.
//! - **Controls.** C0 controls (except tab, and newline where a format keeps lines), DEL, C1
//!   controls and the bidi controls (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069) are shown
//!   as `\u{…}`: a transcript cannot send escape sequences to a terminal, nor reorder the text
//!   a reader sees.

use std::borrow::Cow;

/// Characters of one input string shown in a report before it is cut.
pub const MAX_ECHO_CHARS: usize = 1000;

/// Characters of one conversation turn shown in the HTML report before it is cut.
pub const MAX_TURN_CHARS: usize = 65_536;

/// `s` cut to [`MAX_ECHO_CHARS`] characters, saying how long it was.
pub fn cap(s: &str) -> Cow<'_, str> {
    cap_at(s, MAX_ECHO_CHARS)
}

/// `s` cut to `max` characters, then `… (N bytes)` with the whole string's length.
pub fn cap_at(s: &str, max: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => Cow::Borrowed(s),
        Some((end, _)) => Cow::Owned(format!("{}… ({} bytes)", &s[..end], s.len())),
    }
}

/// True for the bidi controls that reorder displayed text: ALM (U+061C), LRM/RLM (U+200E/F),
/// the embeddings and overrides (U+202A–U+202E) and the isolates (U+2066–U+2069).
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// True for characters a report never writes as they are: C0 controls but tab and newline, DEL,
/// C1 controls, and bidi controls.
pub fn is_hidden(c: char) -> bool {
    (c.is_control() && c != '\t' && c != '\n') || is_bidi_control(c)
}

/// `s` with every [`is_hidden`] character shown as `\u{…}`; newlines kept.
pub fn visible(s: &str) -> Cow<'_, str> {
    escape_where(s, is_hidden)
}

/// `s` on one line: as [`visible`], newlines shown as `\u{a}` too (a string cannot start a line
/// of its own in a line-based report).
pub fn visible_line(s: &str) -> Cow<'_, str> {
    escape_where(s, |c| c == '\n' || is_hidden(c))
}

/// The input string `s` as a text report line shows it: capped, on one line, controls visible.
pub fn for_terminal(s: &str) -> String {
    visible_line(&cap(s)).into_owned()
}

fn escape_where(s: &str, hide: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(&hide) {
        return Cow::Borrowed(s);
    }
    let mut o = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if hide(c) {
            o.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            o.push(c);
        }
    }
    Cow::Owned(o)
}

/// `s` as inert Markdown text: capped, controls visible, on one line, and every character that
/// could start markup (links, images, emphasis, code, HTML, table cells, headings) escaped.
pub fn markdown(s: &str) -> String {
    let s = visible_line(&cap(s)).into_owned();
    let mut o = String::with_capacity(s.len() + 16);
    for (i, c) in s.chars().enumerate() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '!' | '|' | '#' | '~' | '{' | '}' | '+'
            | '$' | '^' | ':' => {
                o.push('\\');
                o.push(c);
            }
            '-' | '.' if i == 0 => {
                o.push('\\');
                o.push(c);
            }
            c => o.push(c),
        }
    }
    o
}

/// Input text as HTML text: capped ([`MAX_ECHO_CHARS`]), controls and bidi controls shown
/// as `\u{…}`, escaped.
pub fn html(s: &str) -> Cow<'static, str> {
    Cow::Owned(html_escape::encode_text(&visible(&cap(s))).into_owned())
}

/// Escapes text for XML attributes and content, capped ([`cap`]); replaces
/// characters XML 1.0 cannot carry with U+FFFD.
pub fn xml(s: &str) -> String {
    let s = cap(s);
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\t' | '\n' | '\r' => o.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => o.push('\u{FFFD}'),
            c => o.push(c),
        }
    }
    o
}

/// Caps every string (and object key) of a JSON value in place: the JSON report's form of
/// [`cap`].
pub fn cap_json(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            if let Cow::Owned(c) = cap(s) {
                *s = c;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(cap_json),
        Value::Object(o) => {
            if o.keys().any(|k| matches!(cap(k), Cow::Owned(_))) {
                let old = std::mem::take(o);
                for (k, mut x) in old {
                    cap_json(&mut x);
                    o.insert(cap(&k).into_owned(), x);
                }
            } else {
                o.values_mut().for_each(cap_json);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_cuts_long_strings_and_says_how_long() {
        assert_eq!(cap("short"), "short");
        let long = "é".repeat(MAX_ECHO_CHARS + 5);
        let c = cap(&long);
        assert!(c.starts_with(&"é".repeat(MAX_ECHO_CHARS)));
        assert!(c.ends_with(&format!("… ({} bytes)", long.len())), "{c}");
        assert_eq!(cap_at("abcdef", 3), "abc… (6 bytes)");
        assert_eq!(cap_at("abc", 3), "abc");
    }

    #[test]
    fn controls_and_bidi_are_shown_escaped() {
        assert_eq!(visible("a\u{1b}[2Jb\tc\nd"), "a\\u{1b}[2Jb\tc\nd");
        assert_eq!(visible_line("a\nb\rc"), "a\\u{a}b\\u{d}c");
        assert_eq!(
            visible("\u{7f}\u{9b}\u{202e}\u{2066}\u{200f}\u{61c}"),
            "\\u{7f}\\u{9b}\\u{202e}\\u{2066}\\u{200f}\\u{61c}"
        );
        assert_eq!(visible("plain – text ✓"), "plain – text ✓");
    }

    #[test]
    fn markdown_is_inert() {
        let m = markdown("![x](https://e.example/b.png) [l](u) <img src=x> | `c` *e* # h");
        for active in ["![", "](", "<img", "[l]", " | ", "`c`", "*e*"] {
            assert!(!m.contains(active), "{active} in {m}");
        }
        assert_eq!(markdown("- item"), "\\- item");
        assert_eq!(markdown("W6 (April 2026)"), "W6 \\(April 2026\\)");
    }

    #[test]
    fn json_strings_and_keys_are_capped() {
        let big = "k".repeat(MAX_ECHO_CHARS * 3);
        let mut v = serde_json::json!({"a": [big.clone()], big.clone(): 1});
        cap_json(&mut v);
        let s = v.to_string();
        assert!(s.len() < MAX_ECHO_CHARS * 3, "{}", s.len());
        assert_eq!(s.matches("bytes)").count(), 2);
    }
}
