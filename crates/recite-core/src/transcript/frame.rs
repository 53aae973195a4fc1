//! The framing layer: from text to JSON values, each with the line it starts on, for every
//! reader. One place decides how an input is laid out, so an A2A stream, an AG-UI log and a
//! plain file are split the same way:
//!
//! - **SSE**, when the first line that is neither blank nor a comment is an SSE field: `data`
//!   fields joined with newlines, a blank line ending each event, comments and `event`/`id`/
//!   `retry` fields ignored, `[DONE]` skipped, lines ended by CRLF, LF or a lone CR (the SSE
//!   specification allows all three);
//! - **one JSON document**;
//! - **a sequence of JSON values**: JSON lines, or documents written one after another (a client
//!   logging each event, `{…}{…}` or pretty-printed across lines);
//! - **a JSON array cut short**: each element read alone.
//!
//! What cannot be read becomes an `input/malformed` finding with its line and column, and
//! reading goes on: after a value that does not parse, at the next line that starts with `{` or
//! `[`, so a bad line of a JSON lines log costs only that line.

use serde_json::Value;

use super::{Finding, Level, Locator, RULE_MALFORMED};

/// How the JSON values of an input are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// Nothing but white space.
    Empty,
    /// One JSON document (or a JSON array that was cut short, read element by element).
    Json,
    /// Several JSON values one after another: JSON lines or concatenated documents.
    Sequence,
    /// Server-sent events.
    Sse,
}

/// One JSON value of an input.
#[derive(Debug, Clone)]
pub struct Record {
    /// The value.
    pub value: Value,
    /// 1-based line where it starts; `None` for the one value of a whole JSON document, whose
    /// places are given by JSON pointers alone.
    pub line: Option<usize>,
    /// JSON pointer of the value within the file: empty, or `/i` for an element of an array
    /// that was read element by element.
    pub pointer: String,
    /// The line of each object of the value, in document order (`{` by `{`), so a reader can
    /// say where a nested object starts. Empty for SSE payloads, whose lines are not the file's.
    pub object_lines: Vec<usize>,
    /// The line every object of the value is given when `object_lines` does not say.
    pub first_line: usize,
}

impl Record {
    /// The line of the `i`-th object of the value, in document order.
    pub fn object_line(&self, i: usize) -> usize {
        self.object_lines.get(i).copied().unwrap_or(self.first_line)
    }
}

/// An input split into JSON values, with what could not be read.
#[derive(Debug, Clone)]
pub struct Framed {
    /// How the values were laid out.
    pub framing: Framing,
    /// The values that could be read, in file order.
    pub records: Vec<Record>,
    /// `input/malformed` findings: the empty file, lines or events that are not JSON.
    pub findings: Vec<Finding>,
}

/// Splits `text` into JSON values (see the module documentation).
pub fn frame(file: &str, text: &str) -> Framed {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines = Lines::new(text);
    let mut out = Framed { framing: Framing::Json, records: Vec::new(), findings: Vec::new() };
    if text.trim().is_empty() {
        let at = Locator { line: Some(1), column: Some(1), ..Locator::at(file, "") };
        out.findings.push(Finding::new(at, RULE_MALFORMED, Level::Must, "empty input: nothing to read"));
        out.framing = Framing::Empty;
    } else if is_sse(text) {
        out.framing = Framing::Sse;
        frame_sse(file, text, &lines, &mut out);
    } else {
        frame_json(file, text, &lines, &mut out);
    }
    out
}

/// True when the first line that is neither blank nor an SSE comment is an SSE field.
pub fn is_sse(text: &str) -> bool {
    split_lines(text)
        .map(|(_, l)| l.trim_start())
        .find(|l| !l.trim_end().is_empty() && !l.starts_with(':'))
        .is_some_and(|l| {
            ["data:", "event:", "id:", "retry:"].iter().any(|f| l.starts_with(f)) || l.trim_end() == "data"
        })
}

/// The lines of `text`, each with its byte offset, ended by CRLF, LF or a lone CR.
fn split_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = text.as_bytes();
    let mut pos = 0;
    std::iter::from_fn(move || {
        if pos >= bytes.len() {
            return None;
        }
        let start = pos;
        let end =
            bytes[start..].iter().position(|&b| b == b'\n' || b == b'\r').map_or(bytes.len(), |i| start + i);
        pos = match bytes.get(end) {
            Some(b'\r') if bytes.get(end + 1) == Some(&b'\n') => end + 2,
            Some(_) => end + 1,
            None => end,
        };
        Some((start, &text[start..end]))
    })
}

/// Line numbers of byte offsets, counting CRLF, LF and a lone CR as one line break each.
struct Lines {
    /// Byte offset of the start of each line.
    starts: Vec<usize>,
}

impl Lines {
    fn new(text: &str) -> Self {
        let mut starts: Vec<usize> = split_lines(text).map(|(start, _)| start).collect();
        // After a final line break, the end of the text is on a line of its own.
        if text.ends_with(['\n', '\r']) {
            starts.push(text.len());
        }
        Lines { starts }
    }

    /// 1-based line and 1-based byte column of `offset`.
    fn position(&self, offset: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        (line, offset - self.starts.get(line - 1).copied().unwrap_or(0) + 1)
    }

    fn line(&self, offset: usize) -> usize {
        self.position(offset).0
    }
}

/// The line of each `{` of `text` outside strings, in order; `text` starts at `offset`.
fn object_lines(text: &str, offset: usize, lines: &Lines) -> Vec<usize> {
    let mut strings = Strings::default();
    let mut out = Vec::new();
    for (i, b) in text.bytes().enumerate() {
        if !strings.step(b) && b == b'{' {
            out.push(lines.line(offset + i));
        }
    }
    out
}

/// Where a byte-by-byte scan of JSON stands with respect to strings (escapes included).
#[derive(Default)]
struct Strings {
    inside: bool,
    escaped: bool,
}

impl Strings {
    /// Takes the next byte; true when it belongs to a string, its quotes included.
    fn step(&mut self, b: u8) -> bool {
        if self.inside {
            match (self.escaped, b) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b'"') => self.inside = false,
                _ => {}
            }
            true
        } else {
            self.inside = b == b'"';
            self.inside
        }
    }
}

/// The byte offset within `text` of serde's 1-based `line`/`column` (serde counts `\n` only).
fn serde_offset(text: &str, line: usize, column: usize) -> usize {
    let mut offset = 0;
    for _ in 1..line {
        match text[offset..].find('\n') {
            Some(nl) => offset += nl + 1,
            None => return text.len(),
        }
    }
    (offset + column.saturating_sub(1)).min(text.len())
}

/// An `input/malformed` finding for a JSON error at byte `offset` of the file.
fn json_error(file: &str, e: &serde_json::Error, (line, column): (usize, usize)) -> Finding {
    let at = Locator { line: Some(line), column: Some(column.max(1)), ..Locator::at(file, "") };
    let what = if e.is_eof() { "JSON cut short" } else { "malformed JSON" };
    // serde's own position is relative to the value; the locator has the file's.
    let text = e.to_string();
    let text = text.rsplit_once(" at line ").map_or(text.as_str(), |(message, _)| message);
    Finding::new(at, RULE_MALFORMED, Level::Must, format!("{what}: {text}"))
}

/// One JSON document, a sequence of values, or an array cut short.
fn frame_json(file: &str, text: &str, lines: &Lines, out: &mut Framed) {
    let record = |value: Value, start: usize, end: usize, line: Option<usize>, pointer: String| Record {
        value,
        line,
        pointer,
        object_lines: object_lines(&text[start..end], start, lines),
        first_line: lines.line(start),
    };
    let mut pos = 0;
    let mut first = true;
    loop {
        pos += text[pos..].len() - text[pos..].trim_start().len();
        if pos >= text.len() {
            break;
        }
        let mut values = serde_json::Deserializer::from_str(&text[pos..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(value)) => {
                let end = pos + values.byte_offset();
                out.records.push(record(value, pos, end, Some(lines.line(pos)), String::new()));
                pos = end;
            }
            Some(Err(_)) if first && text[pos..].starts_with('[') => {
                frame_broken_array(file, text, pos, lines, out);
                return;
            }
            Some(Err(e)) => {
                let next = next_value_line(text, pos);
                // Where the text stops at the latest (serde may point past a final line break).
                let at = (pos + serde_offset(&text[pos..], e.line(), e.column())).min(text.trim_end().len());
                // A value that ran on into the next value's line is a bad line of JSON lines:
                // say what is wrong with that line, not where the run-on broke.
                let line_end = pos + text[pos..].find(['\n', '\r']).unwrap_or(text.len() - pos);
                let finding = match serde_json::from_str::<Value>(&text[pos..line_end]) {
                    Err(own) if next < text.len() && next <= at => {
                        let own_at = pos + serde_offset(&text[pos..line_end], own.line(), own.column());
                        json_error(file, &own, lines.position(own_at))
                    }
                    _ => json_error(file, &e, lines.position(at)),
                };
                out.findings.push(finding);
                pos = next;
            }
            None => break,
        }
        first = false;
    }
    if out.records.len() > 1 || !out.findings.is_empty() {
        out.framing = Framing::Sequence;
    } else if let Some(only) = out.records.first_mut() {
        only.line = None; // one document: places are JSON pointers
    }
}

/// The byte offset of the next line after `pos` that begins with `{` or `[`, or the end.
fn next_value_line(text: &str, pos: usize) -> usize {
    split_lines(&text[pos..])
        .skip(1)
        .find(|(_, l)| l.starts_with('{') || l.starts_with('['))
        .map_or(text.len(), |(start, _)| pos + start)
}

/// A JSON array that does not parse as a whole: each top-level element is parsed alone, so one
/// broken or truncated element costs only itself.
fn frame_broken_array(file: &str, text: &str, open: usize, lines: &Lines, out: &mut Framed) {
    let mut last_failed = false;
    for (i, (start, end)) in split_array(text, open + 1).into_iter().enumerate() {
        let slice = &text[start..end];
        let parsed = serde_json::from_str::<Value>(slice);
        last_failed = parsed.is_err();
        match parsed {
            Ok(value) => out.records.push(Record {
                value,
                line: Some(lines.line(start)),
                pointer: format!("/{i}"),
                object_lines: object_lines(slice, start, lines),
                first_line: lines.line(start),
            }),
            Err(e) => {
                let at = start + serde_offset(slice, e.line(), e.column());
                let mut finding = json_error(file, &e, lines.position(at));
                finding.locator.pointer = format!("/{i}");
                out.findings.push(finding);
            }
        }
    }
    if !last_failed && !text[open..].trim_end().ends_with(']') {
        let at = lines.position(text.trim_end().len());
        let at = Locator { line: Some(at.0), column: Some(at.1), ..Locator::at(file, "") };
        let message = "JSON cut short: the array is not closed; its elements were read one by one";
        out.findings.push(Finding::new(at, RULE_MALFORMED, Level::Must, message));
    }
}

/// The byte ranges of the top-level elements of an array whose body starts at `from`, found by
/// bracket depth outside strings. An element left open at the end of the text runs to the end.
fn split_array(text: &str, from: usize) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let (mut depth, mut strings) = (0usize, Strings::default());
    let mut start: Option<usize> = None;
    for (i, &b) in bytes.iter().enumerate().skip(from) {
        if strings.inside {
            strings.step(b);
            continue;
        }
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b',' if depth == 0 => {
                if let Some(s) = start.take() {
                    out.push((s, i));
                }
            }
            b']' if depth == 0 => {
                if let Some(s) = start.take() {
                    out.push((s, i));
                }
                return out;
            }
            _ => {
                if start.is_none() {
                    start = Some(i);
                }
                match b {
                    b'"' => {
                        strings.step(b);
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
        }
    }
    if let Some(s) = start {
        out.push((s, text.len()));
    }
    out
}

/// One `data` line of an SSE event: its 1-based file line, the byte length of what precedes
/// its value (so error columns point into the file), and the value.
struct DataLine<'a> {
    line: usize,
    prefix: usize,
    value: &'a str,
}

/// SSE as the HTML living standard parses it. A last event not followed by a blank line is
/// still read (saved captures often lack it).
fn frame_sse(file: &str, text: &str, lines: &Lines, out: &mut Framed) {
    let mut event: Vec<DataLine> = Vec::new();
    for (start, raw) in split_lines(text) {
        // A line of white space ends an event too (strictly it is an ignored field).
        if raw.trim().is_empty() {
            dispatch_sse(file, &mut event, out);
            continue;
        }
        if raw.starts_with(':') {
            continue;
        }
        let (field, value) = raw.split_once(':').unwrap_or((raw, ""));
        if field != "data" {
            continue; // event:, id:, retry:, and fields SSE ignores
        }
        let value = value.strip_prefix(' ').unwrap_or(value);
        event.push(DataLine { line: lines.line(start), prefix: raw.len() - value.len(), value });
    }
    dispatch_sse(file, &mut event, out);
}

/// Parses one SSE event's payload. `[DONE]`, the end marker some producers send, is skipped.
fn dispatch_sse(file: &str, event: &mut Vec<DataLine>, out: &mut Framed) {
    if event.is_empty() {
        return;
    }
    let payload = event.iter().map(|d| d.value).collect::<Vec<_>>().join("\n");
    let trimmed = payload.trim();
    if !trimmed.is_empty() && trimmed != "[DONE]" {
        match serde_json::from_str::<Value>(&payload) {
            Ok(value) => out.records.push(Record {
                value,
                line: Some(event[0].line),
                pointer: String::new(),
                object_lines: Vec::new(),
                first_line: event[0].line,
            }),
            Err(e) => {
                let at = &event[e.line().clamp(1, event.len()) - 1];
                out.findings.push(json_error(file, &e, (at.line, at.prefix + e.column())));
            }
        }
    }
    event.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(framed: &Framed) -> Vec<Option<usize>> {
        framed.records.iter().map(|r| r.line).collect()
    }

    #[test]
    fn sse_with_every_line_ending() {
        for eol in ["\n", "\r\n", "\r"] {
            let text = format!(
                ": hi{eol}data: {{\"a\":1}}{eol}{eol}event: x{eol}data: {{\"b\":{eol}data: 2}}{eol}{eol}"
            );
            let framed = frame("f", &text);
            assert_eq!(framed.framing, Framing::Sse, "{eol:?}");
            assert!(framed.findings.is_empty(), "{eol:?}: {:?}", framed.findings);
            assert_eq!(lines_of(&framed), [Some(2), Some(5)], "{eol:?}");
            assert_eq!(framed.records[1].value["b"], 2);
        }
    }

    #[test]
    fn concatenated_documents_are_a_sequence() {
        let text = "{\n  \"a\": 1\n}\n{\n  \"b\": {\"c\": 2}\n}{\"d\": 3}";
        let framed = frame("f", text);
        assert_eq!(framed.framing, Framing::Sequence);
        assert!(framed.findings.is_empty());
        assert_eq!(lines_of(&framed), [Some(1), Some(4), Some(6)]);
        assert_eq!(framed.records[1].object_lines, [4, 5]);
    }

    #[test]
    fn one_document_has_no_line() {
        let framed = frame("f", "\u{feff}{\"a\": [1, 2]}\n");
        assert_eq!((framed.framing, lines_of(&framed)), (Framing::Json, vec![None]));
    }

    #[test]
    fn bad_line_costs_only_itself() {
        let framed = frame("f", "{\"a\":1}\r\n{\"b\":\r\n{\"c\":3}\r\n");
        assert_eq!(lines_of(&framed), [Some(1), Some(3)]);
        let at = &framed.findings[0].locator;
        assert_eq!(at.line, Some(2));
    }

    #[test]
    fn array_cut_short_keeps_its_elements() {
        let framed = frame("f", "[\n{\"a\":1},\n{\"b\":2},\n{\"c\":");
        assert_eq!(framed.records.iter().map(|r| r.pointer.as_str()).collect::<Vec<_>>(), ["/0", "/1"]);
        assert_eq!(lines_of(&framed), [Some(2), Some(3)]);
        assert_eq!(framed.findings.len(), 1);
        let closed = frame("f", "[\n{\"a\":1},\n{\"b\":2}");
        assert_eq!((closed.records.len(), closed.findings.len()), (2, 1));
    }
}
