//! JSON hidden in strings, as agent frameworks write tool output: a result that is JSON text
//! inside a JSON string (ADK's `{"result": "<json text>"}`), JSON encoded twice, two or more
//! documents joined in one string (LangGraph's joined text blocks, `{…}{…}`), and the Python
//! repr of a dict (`{'Considered': '44%', 'n': 4654}`, what LlamaIndex writes for a returned
//! dict). Every reader decodes such strings here, so a citation hidden in one is found the same
//! way in A2A, AG-UI and plain input.
//!
//! Only strings that look like JSON are touched (a `{` then a quote or `}`, a `[` then a value,
//! or a JSON string literal), and what looks like JSON but cannot be read is never dropped: it
//! is a [`Problem`] naming where. Decoding is bounded: strings nested at most [`MAX_DEPTH`]
//! deep, and no string longer than [`MAX_TEXT`] bytes is decoded.

use serde_json::{Map, Number, Value};

use super::frame::{Framing, frame};
use crate::input::Level;
use crate::json::push_token;

/// Rule of the findings made here: JSON text in a string that could not be read (MUST), or
/// that was read in a form Upperhand does not name (joined documents, a Python repr: NOTE).
pub const RULE_EMBEDDED: &str = "input/embedded-json";
/// How many strings deep JSON inside strings is decoded (`"{\"result\": \"{…}\"}"` is 2).
pub const MAX_DEPTH: usize = 8;
/// The longest string decoded as JSON, in bytes; a longer one is a finding, not read.
pub const MAX_TEXT: usize = 16 << 20;
/// How deep a Python literal may nest (as serde_json's own recursion limit).
const MAX_NESTING: usize = 128;

/// Something about a string that held (or looked like it held) JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Where the string is: a JSON pointer from the value given to [`decode`]; tokens past a
    /// decoded string go into the JSON that string holds.
    pub pointer: String,
    /// MUST when it could not be read, NOTE when it was read in an unusual form.
    pub level: Level,
    /// What, in words.
    pub message: String,
}

/// `value` with every string that holds JSON replaced by the JSON it holds, recursively, and
/// what could not be read. `pointer` is where `value` stands, for the problems.
pub fn decode(value: &Value, pointer: &str) -> (Value, Vec<Problem>) {
    decode_owned(value.clone(), pointer)
}

/// [`decode`] of a value the caller gives up: decoded where it lies, not copied first.
pub fn decode_owned(mut value: Value, pointer: &str) -> (Value, Vec<Problem>) {
    let mut problems = Vec::new();
    decode_in_place(&mut value, &mut pointer.to_string(), 0, &mut problems);
    (value, problems)
}

/// What a string read as JSON held.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The JSON it holds, its own strings decoded; `None` when it looked like JSON but could
    /// not be read (a MUST problem says why).
    pub value: Option<Value>,
    /// What could not be read, or was read in an unusual form.
    pub problems: Vec<Problem>,
}

/// Reads a string that is meant to hold JSON (a tool result's `content`, a text Part): the JSON
/// it is, when it parses as it stands (`44`, `{…}`), with the strings inside decoded; else, when
/// it [looks like JSON](looks_like_json), joined documents, JSON encoded twice or a Python repr;
/// `None` for prose.
pub fn decode_text_at(text: &str, pointer: &str) -> Option<Decoded> {
    let mut problems = Vec::new();
    if let Ok(mut value) = serde_json::from_str::<Value>(text.trim()) {
        decode_in_place(&mut value, &mut pointer.to_string(), 1, &mut problems);
        return Some(Decoded { value: Some(value), problems });
    }
    if !looks_like_json(text) {
        return None;
    }
    let value = decode_text(text, pointer, 0, &mut problems);
    Some(Decoded { value, problems })
}

/// True when `text` looks like JSON (or a Python literal) a producer put in a string: an object
/// whose first member starts with a quote (or an empty one), an array whose first element
/// starts a value, or a JSON string literal. `{name}`, `[DONE]` and prose are not.
pub fn looks_like_json(text: &str) -> bool {
    let t = text.trim();
    if let Some(body) = t.strip_prefix('{') {
        // Not `{name}`: an object's first member starts with a quote. The end is not required,
        // so JSON cut short is reported rather than taken for prose.
        return body.trim_start().starts_with(['"', '\'', '}']);
    }
    if let Some(body) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        // Not `[DONE]` or `[1] Smith et al.`: closed, and the first element starts a value.
        let first = body.trim_start();
        return first.is_empty()
            || first.starts_with(['{', '[', '"', '\'', '(', '-'])
            || first.starts_with(|c: char| c.is_ascii_digit())
            || ["true", "false", "null", "True", "False", "None"].iter().any(|w| first.starts_with(w));
    }
    // JSON encoded again as a JSON string: `"{\"n\": 1}"`, however many times.
    t.len() >= 2
        && t.starts_with('"')
        && t.ends_with('"')
        && t[1..].trim_start_matches(['\\', '"']).starts_with(['{', '['])
}

/// Decodes the strings of `v` in place; `depth` strings have been decoded to reach it.
/// `pointer` is where `v` stands, and is as it was on return.
fn decode_in_place(v: &mut Value, pointer: &mut String, depth: usize, problems: &mut Vec<Problem>) {
    let at = pointer.len();
    match v {
        Value::String(s) if looks_like_json(s) => {
            if let Some(decoded) = decode_text(s, pointer, depth, problems) {
                *v = decoded;
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                push_token(pointer, i);
                decode_in_place(item, pointer, depth, problems);
                pointer.truncate(at);
            }
        }
        Value::Object(map) => {
            for (k, item) in map.iter_mut() {
                push_token(pointer, k);
                decode_in_place(item, pointer, depth, problems);
                pointer.truncate(at);
            }
        }
        _ => {}
    }
}

/// The value a JSON-looking string holds (itself decoded), or `None` with a problem.
fn decode_text(text: &str, pointer: &str, depth: usize, problems: &mut Vec<Problem>) -> Option<Value> {
    let mut problem = |level: Level, message: String| {
        problems.push(Problem { pointer: pointer.to_string(), level, message });
    };
    if depth >= MAX_DEPTH {
        problem(Level::Must, format!("JSON nested in strings more than {MAX_DEPTH} deep: not read further"));
        return None;
    }
    if text.len() > MAX_TEXT {
        let message = format!(
            "a string of {} bytes that looks like JSON is longer than {MAX_TEXT}: not read",
            text.len()
        );
        problem(Level::Must, message);
        return None;
    }
    let framed = frame("", text);
    // Whole documents only: an array the framing recovered element by element is not JSON.
    let whole = framed.records.iter().all(|r| r.pointer.is_empty());
    let mut value = if framed.findings.is_empty() && whole && framed.framing != Framing::Sse {
        let mut values: Vec<Value> = framed.records.into_iter().map(|r| r.value).collect();
        if values.len() > 1 {
            let message =
                format!("{} JSON documents joined in one string: read as a list of them", values.len());
            problem(Level::Note, message);
            Value::Array(values)
        } else {
            values.pop()?
        }
    } else {
        match python_literal(text) {
            Ok(v) => {
                let message =
                    "a Python literal (single quotes, True/False/None), not JSON: read as the JSON it spells";
                problem(Level::Note, message.into());
                v
            }
            Err(why) => {
                let json =
                    framed.findings.first().map_or_else(|| "not JSON".to_string(), |f| f.message.clone());
                let message = format!(
                    "a string that looks like JSON cannot be read: {json}; nor as a Python literal: {why}"
                );
                problem(Level::Must, message);
                return None;
            }
        }
    };
    decode_in_place(&mut value, &mut pointer.to_string(), depth + 1, problems);
    Some(value)
}

/// Reads a Python literal as `repr` writes one: dicts, lists, tuples, strings in either quote,
/// numbers, `True`, `False`, `None`. Anything else (`Decimal('4.4')`, `nan`, a set) is an error.
pub fn python_literal(text: &str) -> Result<Value, LiteralError> {
    let mut p = Py { s: text.as_bytes(), text, i: 0 };
    let v = p.value(0)?;
    p.space();
    if p.i < p.s.len() {
        return Err(LiteralError::Unexpected { found: p.rest_char(), at: p.i });
    }
    Ok(v)
}

/// Why a string is not a Python literal recite reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LiteralError {
    /// Text after the literal.
    #[error("unexpected {found:?} at byte {at}")]
    Unexpected {
        /// The first character after it.
        found: char,
        /// Its byte offset.
        at: usize,
    },
    /// Nested past the deepest nesting read (128).
    #[error("nested more than {MAX_NESTING} deep")]
    TooDeep,
    /// The text ends where a value should start.
    #[error("cut short")]
    CutShort,
    /// A dict key that is neither a string nor a number (the key as JSON).
    #[error("a dict key that is not a string or number: {0}")]
    Key(String),
    /// A punctuation mark missing.
    #[error("expected {what} at byte {at}")]
    Expected {
        /// What was expected, quoted in backticks.
        what: &'static str,
        /// The byte offset.
        at: usize,
    },
    /// A word that is no literal (`nan`, `Decimal(…)`).
    #[error("{found:?} at byte {at} is no literal")]
    NoLiteral {
        /// Its first character.
        found: char,
        /// Its byte offset.
        at: usize,
    },
    /// A number JSON cannot write (as written).
    #[error("{0:?} is not a number JSON can write")]
    Number(String),
    /// A string without its closing quote.
    #[error("a string cut short")]
    StringCutShort,
    /// A line break in a quoted string.
    #[error("a line break inside a quoted string")]
    LineBreak,
    /// `\x` or `\u` without its digits.
    #[error("a \\x or \\u escape cut short")]
    EscapeCutShort,
    /// Hex digits that are no character.
    #[error("a bad escape \\{0}")]
    BadEscape(String),
    /// An escape Python has but recite does not read.
    #[error("an escape \\{0} recite does not read")]
    UnknownEscape(char),
}

struct Py<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

impl Py<'_> {
    fn space(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn rest_char(&self) -> char {
        self.text[self.i..].chars().next().unwrap_or(' ')
    }

    fn eat(&mut self, b: u8) -> bool {
        self.space();
        let hit = self.s.get(self.i) == Some(&b);
        if hit {
            self.i += 1;
        }
        hit
    }

    fn value(&mut self, nesting: usize) -> Result<Value, LiteralError> {
        if nesting > MAX_NESTING {
            return Err(LiteralError::TooDeep);
        }
        self.space();
        let Some(&b) = self.s.get(self.i) else { return Err(LiteralError::CutShort) };
        match b {
            b'{' => {
                self.i += 1;
                let mut map = Map::new();
                while !self.eat(b'}') {
                    let key = match self.value(nesting + 1)? {
                        Value::String(k) => k,
                        Value::Number(n) => n.to_string(),
                        other => return Err(LiteralError::Key(other.to_string())),
                    };
                    if !self.eat(b':') {
                        return Err(LiteralError::Expected { what: "`:`", at: self.i });
                    }
                    let v = self.value(nesting + 1)?;
                    map.insert(key, v);
                    if !self.eat(b',') && !self.eat(b'}') {
                        return Err(LiteralError::Expected { what: "`,` or `}`", at: self.i });
                    } else if self.s.get(self.i - 1) == Some(&b'}') {
                        break;
                    }
                }
                Ok(Value::Object(map))
            }
            b'[' | b'(' => {
                let close = if b == b'[' { b']' } else { b')' };
                self.i += 1;
                let mut items = Vec::new();
                while !self.eat(close) {
                    items.push(self.value(nesting + 1)?);
                    if !self.eat(b',') && !self.eat(close) {
                        let what = if close == b']' { "`,` or `]`" } else { "`,` or `)`" };
                        return Err(LiteralError::Expected { what, at: self.i });
                    } else if self.s.get(self.i - 1) == Some(&close) {
                        break;
                    }
                }
                Ok(Value::Array(items))
            }
            b'\'' | b'"' => self.string(b).map(Value::String),
            b'-' | b'+' | b'.' | b'0'..=b'9' => self.number(),
            _ => {
                for (word, v) in
                    [("True", Value::Bool(true)), ("False", Value::Bool(false)), ("None", Value::Null)]
                {
                    if self.text[self.i..].starts_with(word)
                        && !self
                            .s
                            .get(self.i + word.len())
                            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
                    {
                        self.i += word.len();
                        return Ok(v);
                    }
                }
                Err(LiteralError::NoLiteral { found: self.rest_char(), at: self.i })
            }
        }
    }

    fn number(&mut self) -> Result<Value, LiteralError> {
        let start = self.i;
        while self.i < self.s.len()
            && matches!(self.s[self.i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
        {
            self.i += 1;
        }
        let raw = &self.text[start..self.i];
        let t = raw.strip_prefix('+').unwrap_or(raw);
        // Python writes `1.` and `.5` never in a repr, but `1e-05` yes: JSON's grammar covers it.
        t.parse::<Number>().map(Value::Number).map_err(|_| LiteralError::Number(raw.to_string()))
    }

    fn string(&mut self, quote: u8) -> Result<String, LiteralError> {
        self.i += 1;
        let mut out = String::new();
        loop {
            let rest = &self.text[self.i..];
            let Some(c) = rest.chars().next() else { return Err(LiteralError::StringCutShort) };
            self.i += c.len_utf8();
            match c {
                c if c as u32 == quote as u32 => return Ok(out),
                '\n' => return Err(LiteralError::LineBreak),
                '\\' => {
                    let Some(e) = self.text[self.i..].chars().next() else {
                        return Err(LiteralError::StringCutShort);
                    };
                    self.i += e.len_utf8();
                    let hex = |p: &mut Self, n: usize| -> Result<char, LiteralError> {
                        let digits = p.text.get(p.i..p.i + n).ok_or(LiteralError::EscapeCutShort)?;
                        p.i += n;
                        u32::from_str_radix(digits, 16)
                            .ok()
                            .and_then(char::from_u32)
                            .ok_or_else(|| LiteralError::BadEscape(digits.to_string()))
                    };
                    out.push(match e {
                        '\\' | '\'' | '"' => e,
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        '0' => '\0',
                        'x' => hex(self, 2)?,
                        'u' => hex(self, 4)?,
                        'U' => hex(self, 8)?,
                        other => return Err(LiteralError::UnknownEscape(other)),
                    });
                }
                c => out.push(c),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decoded(v: Value) -> (Value, Vec<(String, Level)>) {
        let (out, problems) = decode(&v, "/content");
        (out, problems.into_iter().map(|p| (p.pointer, p.level)).collect())
    }

    #[test]
    fn json_inside_a_string_inside_an_object_is_decoded() {
        let inner = json!({"Considered": "44%", "citation": {"study": "S"}}).to_string();
        let (out, problems) = decoded(json!({"result": inner}));
        assert_eq!(out, json!({"result": {"Considered": "44%", "citation": {"study": "S"}}}));
        assert!(problems.is_empty());
    }

    #[test]
    fn json_encoded_twice_is_decoded() {
        let once = json!({"n": 4654}).to_string();
        let twice = Value::String(once).to_string();
        let (out, problems) = decoded(Value::String(twice));
        assert_eq!(out, json!({"n": 4654}));
        assert!(problems.is_empty());
    }

    #[test]
    fn joined_documents_in_one_string_are_split() {
        let (out, problems) = decoded(json!("{\"Considered\": \"44%\"}{\"study\": \"S\"}\n{\"x\": 1}"));
        assert_eq!(out, json!([{"Considered": "44%"}, {"study": "S"}, {"x": 1}]));
        assert_eq!(problems, [("/content".to_string(), Level::Note)]);
    }

    #[test]
    fn python_repr_of_a_dict_is_read_when_plainly_a_literal() {
        let text = "{'Considered': '44%', 'n': 4654, 'ok': True, 'none': None, 'list': [1, 2.5, (3,)], \"q\": 'it\\'s'}";
        let (out, problems) = decoded(json!(text));
        assert_eq!(
            out,
            json!({"Considered": "44%", "n": 4654, "ok": true, "none": null, "list": [1, 2.5, [3]], "q": "it's"})
        );
        assert_eq!(problems, [("/content".to_string(), Level::Note)]);
    }

    #[test]
    fn json_looking_text_that_cannot_be_read_is_a_finding() {
        for text in ["{'share': Decimal('0.44')}", "{\"a\": 1", "{'a': nan}", "[1, 2,, 3]"] {
            let (out, problems) = decoded(json!({"result": text}));
            assert_eq!(out, json!({"result": text}), "{text}");
            assert_eq!(problems, [("/content/result".to_string(), Level::Must)], "{text}");
        }
    }

    #[test]
    fn prose_and_placeholders_are_left_alone() {
        for text in ["{name}", "[DONE]", "The answer is 44%.", "44%", "\"", "[see below]"] {
            let (out, problems) = decoded(json!(text));
            assert_eq!(out, json!(text));
            assert!(problems.is_empty(), "{text}");
        }
    }

    #[test]
    fn nesting_in_strings_is_bounded() {
        let mut v = json!({"n": 1});
        for _ in 0..MAX_DEPTH + 2 {
            v = Value::String(v.to_string());
        }
        let (_, problems) = decoded(v);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].1 == Level::Must);
    }
}
