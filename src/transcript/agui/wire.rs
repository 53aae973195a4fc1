//! From text to raw AG-UI event values, each with the line it starts on.
//!
//! Four wire forms are accepted: SSE (`data:` lines, a payload possibly split over several
//! `data:` lines, a blank line ending each event, `:` comments), JSON lines (or any sequence of
//! JSON values), one JSON array of events, and `{name, description, stream}` fixtures (alone, in
//! an array, or one per line; `events` is accepted for `stream`). Everything that cannot be read
//! becomes a [`Malformed`] and the rest is still read, because a log cut short by a crashed agent
//! is exactly the log someone wants checked.

use serde_json::Value;

/// An event value as found on the wire, before CHUNK expansion.
#[derive(Debug, Clone)]
pub struct Raw {
    /// 1-based line where the event starts.
    pub line: Option<usize>,
    /// The event object (always an object with a string `type`).
    pub value: Value,
    /// Which stream the event belongs to: fixtures are separate streams (each verified from a
    /// fresh state); every other form is one stream, numbered 0.
    pub stream: usize,
}

/// Something on the wire that is not an AG-UI event.
#[derive(Debug, Clone)]
pub struct Malformed {
    /// 1-based line where it starts.
    pub line: Option<usize>,
    /// JSON pointer within the value, when the value parsed but an element of it is wrong.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

/// The result of [`decode`].
#[derive(Debug, Default)]
pub struct Decoded {
    /// The events, in wire order.
    pub values: Vec<Raw>,
    /// What could not be read.
    pub malformed: Vec<Malformed>,
    /// How many fixtures were seen (fixture n's events are stream n).
    fixtures: usize,
}

/// Reads the events of a log, whatever its wire form.
pub fn decode(text: &str) -> Decoded {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Decoded::default();
    if is_sse(text) {
        decode_sse(text, &mut out);
    } else if text.trim_start().starts_with('[') {
        decode_array(text, &mut out);
    } else {
        decode_values(text, &mut out);
    }
    out
}

/// True when the first line that is neither blank nor an SSE comment is an SSE field.
fn is_sse(text: &str) -> bool {
    text.lines()
        .map(str::trim_end)
        .find(|l| !l.is_empty() && !l.starts_with(':'))
        .is_some_and(|l| ["data:", "event:", "id:", "retry:"].iter().any(|f| l.starts_with(f)) || l == "data")
}

/// SSE as the HTML living standard parses it: `data` fields are joined with newlines and a
/// blank line dispatches the event; `event`, `id` and `retry` fields and comments are ignored.
/// A last event not followed by a blank line is still read (saved captures often lack it).
fn decode_sse(text: &str, out: &mut Decoded) {
    let mut data: Vec<&str> = Vec::new();
    let mut start = 0;
    for (i, line) in text.lines().enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            dispatch_sse(&data, start, out);
            data.clear();
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        if field == "data" {
            if data.is_empty() {
                start = i + 1;
            }
            data.push(value);
        }
    }
    dispatch_sse(&data, start, out);
}

/// Parses one SSE payload. `[DONE]`, the end marker some producers send, is skipped.
fn dispatch_sse(data: &[&str], line: usize, out: &mut Decoded) {
    if data.is_empty() {
        return;
    }
    let payload = data.join("\n");
    let trimmed = payload.trim();
    if trimmed.is_empty() || trimmed == "[DONE]" {
        return;
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(value) => unpack(&value, &LineMap::fixed(line), &mut 0, "", 0, out),
        Err(e) => out.malformed.push(Malformed {
            line: Some(line),
            pointer: String::new(),
            message: format!("SSE event is not JSON: {e}"),
        }),
    }
}

/// A JSON array (of events or of fixtures). When it does not parse as a whole, each element is
/// parsed alone, so one broken or truncated element costs only itself.
fn decode_array(text: &str, out: &mut Decoded) {
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let lines = LineMap::of(text, 1);
        unpack(&value, &lines, &mut 0, "", 0, out);
        return;
    }
    let open = text.find('[').unwrap_or(0);
    let mut counter = LineCounter::default();
    for (n, (start, end)) in split_array(text, open + 1).into_iter().enumerate() {
        let slice = &text[start..end];
        let line = counter.at(text, start);
        match serde_json::from_str::<Value>(slice) {
            Ok(value) => {
                let lines = LineMap::of(slice, line);
                unpack(&value, &lines, &mut 0, &format!("/{n}"), 0, out);
            }
            Err(e) => out.malformed.push(Malformed {
                line: Some(line),
                pointer: format!("/{n}"),
                message: format!("array element is not JSON: {e}"),
            }),
        }
    }
}

/// A sequence of JSON values (JSON lines, or concatenated values). After a value that does not
/// parse, reading resumes at the next line that starts a value at column 0, so a malformed line
/// of a JSON lines log costs only that line.
fn decode_values(text: &str, out: &mut Decoded) {
    let mut lines = LineCounter::default();
    let mut pos = 0;
    while pos < text.len() {
        pos += text[pos..].len() - text[pos..].trim_start().len();
        if pos >= text.len() {
            break;
        }
        let line = lines.at(text, pos);
        let mut values = serde_json::Deserializer::from_str(&text[pos..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(value)) => {
                let end = pos + values.byte_offset();
                unpack(&value, &LineMap::of(&text[pos..end], line), &mut 0, "", 0, out);
                pos = end;
            }
            Some(Err(e)) => {
                out.malformed.push(Malformed {
                    line: Some(line),
                    pointer: String::new(),
                    message: format!("line is not JSON: {e}"),
                });
                pos = next_value_line(text, pos);
            }
            None => break,
        }
    }
}

/// Line numbers of increasing byte offsets, counted once.
#[derive(Default)]
struct LineCounter {
    pos: usize,
    line: usize,
}

impl LineCounter {
    fn at(&mut self, text: &str, pos: usize) -> usize {
        self.line += text.as_bytes()[self.pos..pos].iter().filter(|&&b| b == b'\n').count();
        self.pos = pos;
        self.line + 1
    }
}

/// The byte offset of the next line after `pos` that begins with `{` or `[`, or the end.
fn next_value_line(text: &str, pos: usize) -> usize {
    let mut at = pos;
    while let Some(nl) = text[at..].find('\n') {
        at += nl + 1;
        if text[at..].starts_with('{') || text[at..].starts_with('[') {
            return at;
        }
    }
    text.len()
}

/// Turns a parsed value into events: an event object, an array of events or fixtures, or a
/// fixture `{name, stream: [...]}`. `cursor` counts the objects of the value visited so far, in
/// document order, to find each event's line in `lines`.
fn unpack(
    value: &Value,
    lines: &LineMap,
    cursor: &mut usize,
    pointer: &str,
    stream: usize,
    out: &mut Decoded,
) {
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                unpack(item, lines, cursor, &format!("{pointer}/{i}"), stream, out);
            }
        }
        Value::Object(map) if is_fixture(value) => {
            *cursor += 1;
            out.fixtures += 1;
            let own = out.fixtures;
            let events = fixture_key(value);
            for (key, member) in map {
                if Some(key.as_str()) == events {
                    unpack(member, lines, cursor, &format!("{pointer}/{key}"), own, out);
                } else {
                    *cursor += count_objects(member);
                }
            }
        }
        Value::Object(map) if map.get("type").is_some_and(Value::is_string) => {
            out.values.push(Raw { line: Some(lines.get(*cursor)), value: value.clone(), stream });
            *cursor += count_objects(value);
        }
        other => {
            let line = lines.get(*cursor);
            *cursor += count_objects(other);
            out.malformed.push(Malformed {
                line: Some(line),
                pointer: pointer.to_string(),
                message: "not an AG-UI event: no string `type`".to_string(),
            });
        }
    }
}

/// A fixture: an object with a `stream` (or `events`) array and no `type` of its own.
fn is_fixture(value: &Value) -> bool {
    value.get("type").is_none() && fixture_key(value).is_some()
}

/// The key of a fixture's event array.
fn fixture_key(value: &Value) -> Option<&'static str> {
    ["stream", "events"].into_iter().find(|k| value.get(*k).is_some_and(Value::is_array))
}

/// How many objects a value holds, itself included.
fn count_objects(value: &Value) -> usize {
    match value {
        Value::Object(map) => 1 + map.values().map(count_objects).sum::<usize>(),
        Value::Array(items) => items.iter().map(count_objects).sum(),
        _ => 0,
    }
}

/// The line of each `{` of a JSON text, in order (or one line for everything, for SSE payloads
/// whose lines are not the file's lines).
struct LineMap {
    fixed: usize,
    lines: Vec<usize>,
}

impl LineMap {
    fn fixed(line: usize) -> Self {
        Self { fixed: line, lines: Vec::new() }
    }

    /// Scans `text` (which starts on line `first`) for object openings outside strings.
    fn of(text: &str, first: usize) -> Self {
        let mut lines = Vec::new();
        let (mut line, mut in_string, mut escaped) = (first, false, false);
        for b in text.bytes() {
            match b {
                b'\n' => line += 1,
                _ if in_string => match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                },
                b'"' => in_string = true,
                b'{' => lines.push(line),
                _ => {}
            }
        }
        Self { fixed: first, lines }
    }

    fn get(&self, i: usize) -> usize {
        self.lines.get(i).copied().unwrap_or(self.fixed)
    }
}

/// The byte ranges of the top-level elements of an array whose body starts at `from`, found by
/// bracket depth outside strings. An element left open at the end of the text runs to the end.
fn split_array(text: &str, from: usize) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut start: Option<usize> = None;
    for (i, &b) in bytes.iter().enumerate().skip(from) {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
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
                    b'"' => in_string = true,
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
