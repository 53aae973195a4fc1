//! Readers: turn an input file into [`Item`]s, each a claimed result with the citation that
//! accompanies it and a [`Locator`] a person can follow.
//!
//! The format is detected from content ([`detect`]), never from the file name. Readers know
//! nothing of the catalog or the engine: they only find and pair things. One malformed part of a
//! file becomes a [`Finding`]; the rest of the file is still read.
//!
//! [`read`] first *frames* the text ([`frame`]: SSE `data:` events, one JSON document, or JSON
//! lines), then picks the reader from what the values look like: [`agui`] for AG-UI events
//! (it frames the text itself), [`a2a`] for A2A v0.3 / v1.0 objects, [`plain`] for
//! `{result, citation}` pairs and bare citations. [`read_bytes`] adds the UTF-8 check.

use serde::Serialize;
use serde_json::Value;

pub mod a2a;
pub mod agui;
pub mod plain;

/// The media type of an Upperhand citation Part.
pub const CITATION_MEDIA_TYPE: &str = "application/vnd.upperhand.citations+json";

/// Where something was found in an input.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Locator {
    /// The input file (`-` for standard input).
    pub file: String,
    /// 1-based line in the file, when the format is line-based (JSON lines, SSE), or where
    /// unreadable input was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// 1-based column (in bytes) within `line`, for input that could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    /// The A2A task id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The A2A message id, or the AG-UI message id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// The A2A artifact id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<String>,
    /// Index of the Part within its message or artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part_index: Option<usize>,
    /// Index of the event in an AG-UI log (0-based, after CHUNK expansion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_index: Option<usize>,
    /// JSON pointer to the citation (or the offending value) within the document or line.
    pub pointer: String,
}

impl std::fmt::Display for Locator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        if let Some(t) = &self.task_id {
            write!(f, " task {t}")?;
        }
        if let Some(m) = &self.message_id {
            write!(f, " message {m}")?;
        }
        if let Some(a) = &self.artifact_id {
            write!(f, " artifact {a}")?;
        }
        if let Some(p) = self.part_index {
            write!(f, " part {p}")?;
        }
        if let Some(e) = self.event_index {
            write!(f, " event {e}")?;
        }
        if !self.pointer.is_empty() {
            write!(f, " {}", self.pointer)?;
        }
        Ok(())
    }
}

/// One claim to settle: a citation and the result it accompanies.
#[derive(Debug, Clone, Default)]
pub struct Item {
    /// Where the citation was found.
    pub locator: Locator,
    /// The quantitative result the citation accompanies (its numeric leaves are the claim);
    /// `None` when the citation came alone.
    pub result: Option<Value>,
    /// The citation Part's data; `None` for a quantitative result without a citation.
    pub citation: Option<Value>,
    /// True when the citation was recognised by its shape, not by its media type.
    pub by_shape: bool,
}

/// How serious a finding is, in the words of the specifications.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    /// The input breaks a MUST of its specification, or cannot be read.
    Must,
    /// The input breaks a SHOULD.
    Should,
    /// Worth knowing; breaks nothing.
    Note,
}

/// Something wrong with an input that is not about one claim's numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Finding {
    /// Where.
    pub locator: Locator,
    /// The rule broken, e.g. `upperhand/conformance`, `ag-ui/stream`, `moca/§3-placement`.
    pub rule: String,
    /// MUST, SHOULD or NOTE.
    pub level: Level,
    /// What was wrong, in words.
    pub message: String,
}

/// A turn of the conversation, kept so the HTML report can show the claims in place.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Turn {
    /// `user`, `agent`/`assistant`, `tool`.
    pub role: String,
    /// The turn's text (text Parts joined, or the assistant message's content).
    pub text: String,
    /// Indices into [`Document::items`] of the claims made in this turn.
    pub items: Vec<usize>,
    /// The message id, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
}

/// The input formats recite reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// A2A v0.3 (Parts discriminated by `kind`).
    A2aV03,
    /// A2A v1.0 (ProtoJSON).
    A2aV10,
    /// An AG-UI event log.
    Agui,
    /// Plain JSON or JSON lines of `{result, citation}`, or a bare citation.
    Plain,
}

/// One input file, read.
#[derive(Debug, Clone)]
pub struct Document {
    /// The file name as given (`-` for standard input).
    pub file: String,
    /// The detected format.
    pub format: Format,
    /// The claims found, in document order.
    pub items: Vec<Item>,
    /// What was wrong with the input apart from the claims' numbers (conformance, malformed
    /// parts, stream rules, MOCA rules).
    pub findings: Vec<Finding>,
    /// The conversation, for the HTML report.
    pub turns: Vec<Turn>,
    /// The AG-UI events, when the input is an AG-UI log (for the MOCA checks and the report).
    pub events: Vec<agui::Event>,
}

/// Rule of a [`Finding`] for input that cannot be read (bad UTF-8, malformed JSON, empty file).
pub const RULE_MALFORMED: &str = "input/malformed";
/// Rule of a [`Finding`] for well-formed JSON of no shape recite knows.
pub const RULE_UNRECOGNISED: &str = "input/unrecognised";
/// Rule of a [`Finding`] for a quantitative result without a citation, or a citation without a
/// result (Upperhand Citations v1, "Conformance (probed)").
pub const RULE_CONFORMANCE: &str = "upperhand/conformance";
/// Rule of the finding that stands for an input's findings past the first [`MAX_FINDINGS`].
pub const RULE_FINDINGS_CAPPED: &str = "input/findings-capped";
/// Findings reported per input; the rest are counted in one `input/findings-capped` finding
/// (a 1 MB binary file would otherwise make a finding per byte).
pub const MAX_FINDINGS: usize = 100;

/// Keeps the first [`MAX_FINDINGS`] of `findings` and replaces the rest with one finding that
/// counts them, at the most serious level among them (so `--fail-on` sees what was cut). Such
/// summaries already made (by [`read_bytes`]) are kept as they are.
pub fn cap_findings(findings: &mut Vec<Finding>, file: &str) {
    if findings.len() <= MAX_FINDINGS {
        return;
    }
    let (summaries, rest): (Vec<Finding>, Vec<Finding>) =
        findings.split_off(MAX_FINDINGS).into_iter().partition(|f| f.rule == RULE_FINDINGS_CAPPED);
    findings.extend(summaries);
    if rest.is_empty() {
        return;
    }
    let level = rest.iter().map(|f| f.level).min().unwrap_or(Level::Note);
    let count = |l: Level| rest.iter().filter(|f| f.level == l).count();
    let message = format!(
        "{} more finding(s) not shown ({} MUST, {} SHOULD, {} NOTE): only the first {MAX_FINDINGS} of an input are",
        rest.len(),
        count(Level::Must),
        count(Level::Should),
        count(Level::Note)
    );
    findings.push(Finding::new(Locator::at(file, ""), RULE_FINDINGS_CAPPED, level, message));
}

/// `text` without a leading UTF-8 byte-order mark, which every reader (and `verify`) accepts.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Rule of the NOTE given when several citations were paired with several results by order (or
/// share one result), since nothing in the input says which goes with which.
pub const RULE_PAIRING: &str = "upperhand/pairing";

impl Locator {
    /// A locator in `file` at JSON pointer `pointer`, everything else unknown.
    pub fn at(file: &str, pointer: impl Into<String>) -> Self {
        Locator { file: file.to_string(), pointer: pointer.into(), ..Locator::default() }
    }

    /// The same locator on 1-based `line` (`None` leaves it unknown).
    pub fn on_line(mut self, line: Option<usize>) -> Self {
        self.line = line;
        self
    }
}

impl Finding {
    /// A finding; saves spelling out the struct at every call site.
    pub fn new(locator: Locator, rule: &str, level: Level, message: impl Into<String>) -> Self {
        Finding { locator, rule: rule.to_string(), level, message: message.into() }
    }
}

impl Document {
    /// An empty document of `format` for `file`.
    pub fn new(file: &str, format: Format) -> Self {
        Document {
            file: file.to_string(),
            format,
            items: Vec::new(),
            findings: Vec::new(),
            turns: Vec::new(),
            events: Vec::new(),
        }
    }
}

/// True when any leaf of `v`, at any depth, is a JSON number: such a value states a number, so
/// Upperhand requires a citation beside it. Numeric strings (`"44%"`) are not numbers.
pub fn is_quantitative(v: &Value) -> bool {
    match v {
        Value::Number(_) => true,
        Value::Array(a) => a.iter().any(is_quantitative),
        Value::Object(o) => o.values().any(is_quantitative),
        _ => false,
    }
}

/// True when `v` has the shape of an Upperhand citation: an object whose `source` is an object
/// naming at least one of `table`, `column`, `function`, and which has a `study` or a `base`.
///
/// Deliberately lenient (one of the three source fields is enough) so that an incomplete
/// citation is still found, and then reported by validation rather than silently skipped.
pub fn looks_like_citation(v: &Value) -> bool {
    let Some(o) = v.as_object() else { return false };
    let source_ok = o
        .get("source")
        .and_then(Value::as_object)
        .is_some_and(|s| ["table", "column", "function"].iter().any(|k| s.contains_key(*k)));
    source_ok && (o.contains_key("study") || o.contains_key("base"))
}

/// True when `media_type` is the citations media type, ignoring case and parameters
/// (`application/vnd.upperhand.citations+json; charset=utf-8` counts).
pub fn is_citation_media_type(media_type: &str) -> bool {
    let essence = media_type.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case(CITATION_MEDIA_TYPE)
}

/// `base` with one more reference token, escaped as RFC 6901 requires (`~` → `~0`, `/` → `~1`).
pub fn pointer_push(base: &str, token: impl std::fmt::Display) -> String {
    let token = token.to_string().replace('~', "~0").replace('/', "~1");
    format!("{base}/{token}")
}

/// Reads one input file: detects its format from the content and hands it to that reader.
///
/// Never panics and never fails: what cannot be read becomes a [`Finding`] (rule
/// `input/malformed`, level MUST) and the rest of the file is still read.
pub fn read(file: &str, text: &str) -> Document {
    let text = strip_bom(text);
    let framed = frame(file, text);
    match detect_framed(&framed, text) {
        // The AG-UI reader frames the text itself (and reports what it cannot read).
        Format::Agui => read_agui(file, text),
        Format::Plain => plain::read_framed(file, framed),
        version => a2a::read_framed(file, version, framed),
    }
}

/// Reads an input given as bytes. Invalid UTF-8 becomes one `input/malformed` finding per bad
/// sequence (line and byte column; past [`MAX_FINDINGS`] only counted); the bytes are then
/// decoded lossily and read as usual, so the rest of the file still counts.
pub fn read_bytes(file: &str, bytes: &[u8]) -> Document {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return read(file, text);
    }
    let mut findings = Vec::new();
    let mut uncounted = 0usize;
    let (mut line, mut column) = (1usize, 1usize);
    for chunk in bytes.utf8_chunks() {
        for b in chunk.valid().bytes() {
            if b == b'\n' {
                line += 1;
                column = 1;
            } else {
                column += 1;
            }
        }
        let bad = chunk.invalid();
        if !bad.is_empty() && findings.len() >= MAX_FINDINGS {
            uncounted += 1; // counted, not kept: memory stays bounded
            column += bad.len();
        } else if !bad.is_empty() {
            let hex: Vec<String> = bad.iter().map(|b| format!("{b:#04x}")).collect();
            let mut at = Locator::at(file, "").on_line(Some(line));
            at.column = Some(column);
            let message = format!("invalid UTF-8 ({}); read as U+FFFD", hex.join(" "));
            findings.push(Finding::new(at, RULE_MALFORMED, Level::Must, message));
            column += bad.len();
        }
    }
    let text = String::from_utf8_lossy(bytes);
    let mut doc = read(file, &text);
    if uncounted > 0 {
        let message = format!("{uncounted} more invalid UTF-8 sequence(s), not listed");
        findings.push(Finding::new(Locator::at(file, ""), RULE_FINDINGS_CAPPED, Level::Must, message));
    }
    findings.append(&mut doc.findings);
    doc.findings = findings;
    doc
}

/// Detects the format of `text` from its content alone.
pub fn detect(text: &str) -> Format {
    detect_framed(&frame("", text), text)
}

/// The AG-UI reader, behind one function so the dispatch above never changes when it does.
fn read_agui(file: &str, text: &str) -> Document {
    agui::read(file, text)
}

/// How the JSON values of an input are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// Nothing but white space.
    Empty,
    /// One JSON document.
    Json,
    /// One JSON value per line.
    JsonLines,
    /// Server-sent events: `data:` lines, an event per blank-line-separated block.
    Sse,
}

/// One JSON value of an input.
#[derive(Debug, Clone)]
pub struct Record {
    /// The value.
    pub value: Value,
    /// 1-based line where it starts, for JSON lines and SSE (`None` for one JSON document).
    pub line: Option<usize>,
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

/// Splits `text` into JSON values: SSE when the first non-blank line is an SSE field, else one
/// JSON document when the whole parses, else JSON lines when most lines parse on their own.
/// Each value that does not parse becomes a finding and the others are kept.
pub fn frame(file: &str, text: &str) -> Framed {
    let first = text.lines().map(str::trim_start).find(|l| !l.is_empty());
    let Some(first) = first else {
        let at = Locator { line: Some(1), column: Some(1), ..Locator::at(file, "") };
        let finding = Finding::new(at, RULE_MALFORMED, Level::Must, "empty input: nothing to read");
        return Framed { framing: Framing::Empty, records: Vec::new(), findings: vec![finding] };
    };
    if is_sse_field(first) {
        return frame_sse(file, text);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value) => {
            Framed { framing: Framing::Json, records: vec![Record { value, line: None }], findings: vec![] }
        }
        Err(_) if looks_like_json_lines(text) => frame_json_lines(file, text),
        Err(e) => Framed {
            framing: Framing::Json,
            records: Vec::new(),
            findings: vec![json_error(file, &e, e.line(), e.column())],
        },
    }
}

fn is_sse_field(line: &str) -> bool {
    line.starts_with(':') || ["data:", "event:", "id:", "retry:"].iter().any(|f| line.starts_with(f))
}

/// JSON lines when at least one line is a JSON object or array on its own and at least half of
/// the non-blank lines are: a pretty-printed document that does not parse has almost no such
/// lines, a JSON lines file with a few bad lines has mostly such lines.
fn looks_like_json_lines(text: &str) -> bool {
    let (mut lines, mut whole) = (0usize, 0usize);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        lines += 1;
        if serde_json::from_str::<Value>(line).is_ok_and(|v| v.is_object() || v.is_array()) {
            whole += 1;
        }
    }
    whole >= 1 && lines >= 2 && whole * 2 >= lines
}

fn frame_json_lines(file: &str, text: &str) -> Framed {
    let mut framed = Framed { framing: Framing::JsonLines, records: Vec::new(), findings: Vec::new() };
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(value) => framed.records.push(Record { value, line: Some(i + 1) }),
            Err(e) => framed.findings.push(json_error(file, &e, i + 1, e.column())),
        }
    }
    framed
}

/// One `data:` line of an SSE event: its 1-based file line, the byte length of the `data:` prefix
/// (so error columns point into the file), and its value.
struct DataLine<'a> {
    line: usize,
    prefix: usize,
    value: &'a str,
}

fn frame_sse(file: &str, text: &str) -> Framed {
    let mut framed = Framed { framing: Framing::Sse, records: Vec::new(), findings: Vec::new() };
    let mut event: Vec<DataLine> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            dispatch_sse(file, &mut event, &mut framed);
            continue;
        }
        let Some((field, value)) = raw.split_once(':') else { continue };
        if field != "data" {
            continue; // comments, event:, id:, retry:
        }
        let value_with_space = value.strip_prefix(' ').unwrap_or(value);
        let prefix = raw.len() - value_with_space.len();
        event.push(DataLine { line: i + 1, prefix, value: value_with_space });
    }
    dispatch_sse(file, &mut event, &mut framed);
    framed
}

fn dispatch_sse(file: &str, event: &mut Vec<DataLine>, framed: &mut Framed) {
    if event.is_empty() {
        return;
    }
    let payload: Vec<&str> = event.iter().map(|d| d.value).collect();
    let payload = payload.join("\n");
    let trimmed = payload.trim();
    if !trimmed.is_empty() && trimmed != "[DONE]" {
        match serde_json::from_str::<Value>(&payload) {
            Ok(value) => framed.records.push(Record { value, line: Some(event[0].line) }),
            Err(e) => {
                let at = &event[e.line().clamp(1, event.len()) - 1];
                framed.findings.push(json_error(file, &e, at.line, at.prefix + e.column()));
            }
        }
    }
    event.clear();
}

fn json_error(file: &str, e: &serde_json::Error, line: usize, column: usize) -> Finding {
    let at = Locator { line: Some(line), column: Some(column.max(1)), ..Locator::at(file, "") };
    let what = if e.is_eof() { "JSON cut short" } else { "malformed JSON" };
    Finding::new(at, RULE_MALFORMED, Level::Must, format!("{what}: {e}"))
}

/// The format of framed input: AG-UI when its values are mostly AG-UI events, else A2A (the
/// version by majority of version-specific spellings) when any value is A2A, else AG-UI when
/// the AG-UI reader's text sniff recognises what could not be parsed, else plain.
fn detect_framed(framed: &Framed, text: &str) -> Format {
    let (mut agui, mut a2a) = (0usize, 0usize);
    for r in &framed.records {
        if looks_like_agui(&r.value) {
            agui += 1;
        } else if a2a::looks_like_a2a(&r.value) {
            a2a += 1;
        }
    }
    if agui > 0 && agui >= a2a {
        Format::Agui
    } else if a2a > 0 {
        a2a::version(framed.records.iter().map(|r| &r.value))
    } else if framed.records.is_empty() && agui::looks_like_agui(text) {
        Format::Agui
    } else {
        Format::Plain
    }
}

/// True when `v` is an AG-UI event, an array of them, or a saved-run fixture
/// (`{"stream": [...]}` / `{"events": [...]}`).
fn looks_like_agui(v: &Value) -> bool {
    match v {
        // An array of events, or an array of `{name, stream}` fixtures.
        Value::Array(a) => a
            .first()
            .is_some_and(|first| is_agui_event(first) || (first.is_object() && looks_like_agui(first))),
        Value::Object(o) => {
            is_agui_event(v)
                || ["stream", "events"].iter().any(|k| {
                    o.get(*k).and_then(Value::as_array).and_then(|a| a.first()).is_some_and(is_agui_event)
                })
        }
        _ => false,
    }
}

fn is_agui_event(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str).is_some_and(agui::is_agui_type)
}
