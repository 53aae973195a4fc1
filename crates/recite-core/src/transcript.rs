//! Readers: turn an input file into [`Item`]s, each a claimed result with the citation that
//! accompanies it and a [`Locator`] a person can follow.
//!
//! The format is detected from content ([`detect`]), never from the file name. Readers know
//! nothing of the catalog or the engine: they only find and pair things. One malformed part of a
//! file becomes a [`Finding`]; the rest of the file is still read.
//!
//! [`read`] first *frames* the text ([`mod@frame`]: SSE events, one JSON document, JSON lines or
//! concatenated documents, an array cut short), then picks the reader from what the values look
//! like: [`agui`] for AG-UI events, [`a2a`] for A2A v0.3 / v1.0 objects, [`plain`] for
//! `{result, citation}` pairs and bare citations. Every reader asks the JSON questions (is this
//! quantitative, is this a citation, which media type) through [`crate::json`], so they answer
//! them alike, and decode JSON hidden in strings through [`embedded`]. [`read_bytes`] adds the
//! UTF-8 check.

use std::collections::HashSet;

use serde_json::Value;

pub mod a2a;
pub mod agui;
pub mod embedded;
pub mod frame;
pub mod plain;

pub use crate::json::{
    CITATION_MEDIA_TYPE, is_citation_media_type, is_quantitative, looks_like_citation, pointer_push,
};
pub use frame::{Framed, Framing, Record, frame};
// The data the readers produce lives in `crate::input`; re-exported so `transcript::Finding`
// and the like keep working.
pub use crate::input::{Finding, Format, Level, Locator, Turn};

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
/// Rule of a finding for something citation-shaped (the citations media type, or a `source`
/// naming a table, column or function) that recite saw but could not read or pair.
pub const RULE_UNREAD: &str = "upperhand/unread";
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
    let count = |l: Level| rest.iter().filter(|f| f.level == l).count();
    findings.push(findings_not_shown(file, [count(Level::Must), count(Level::Should), count(Level::Note)]));
}

/// The finding that stands for an input's findings past the first [`MAX_FINDINGS`], from how
/// many there were at each level (MUST, SHOULD, NOTE); its level is the most serious of them.
pub fn findings_not_shown(file: &str, [must, should, note]: [usize; 3]) -> Finding {
    let level = if must > 0 {
        Level::Must
    } else if should > 0 {
        Level::Should
    } else {
        Level::Note
    };
    let message = format!(
        "{} more finding(s) not shown ({must} MUST, {should} SHOULD, {note} NOTE): only the first {MAX_FINDINGS} of an input are",
        must + should + note
    );
    Finding::new(Locator::at(file, ""), RULE_FINDINGS_CAPPED, level, message)
}

/// `text` without a leading UTF-8 byte-order mark, which every reader (and `verify`) accepts.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Rule of the NOTE given when several citations were paired with several results by order (or
/// share one result), since nothing in the input says which goes with which.
pub const RULE_PAIRING: &str = "upperhand/pairing";

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

/// Reads one input file: detects its format from the content and hands it to that reader.
///
/// Never panics and never fails: what cannot be read becomes a [`Finding`] (rule
/// `input/malformed`, level MUST) and the rest of the file is still read.
///
/// An input that yields no claim and no finding although it holds something citation-shaped
/// ([`mentions_citation`]) gets one `upperhand/unread` finding: what recite cannot read never
/// disappears.
pub fn read(file: &str, text: &str) -> Document {
    let text = strip_bom(text);
    let framed = frame(file, text);
    let format = detect_framed(&framed, text);
    // The AG-UI reader does this per event; the others are checked per record (line) here.
    let starts: Vec<usize> = framed.records.iter().filter_map(|r| r.line).collect();
    // Each record that mentions a citation, with the citations it holds (canonical JSON).
    let cited: Vec<(usize, Vec<String>)> = match format {
        Format::Agui => Vec::new(),
        _ => framed
            .records
            .iter()
            .filter(|r| mentions_citation(&r.value))
            .filter_map(|r| Some((r.line?, citations_in(&r.value))))
            .collect(),
    };
    let mut doc = match format {
        Format::Agui => agui::read_framed(file, framed),
        Format::Plain => plain::read_framed(file, framed),
        version => a2a::read_framed(file, version, framed),
    };
    unread_records(&mut doc, &starts, &cited);
    if doc.items.is_empty() && doc.findings.is_empty() && text_mentions_citation(text) {
        let message = "the input holds a citation (the citations media type, or a `source` naming a table, \
                       column or function) but recite found no claim in it: nothing was checked";
        doc.findings.push(Finding::new(Locator::at(file, ""), RULE_UNREAD, Level::Must, message));
    }
    doc
}

/// An `upperhand/unread` finding for each record (starting on a line in `cited`) that holds
/// something citation-shaped but made no claim and no finding: no line of it (up to the next
/// record's, in `starts`) is any item's or finding's. A record whose every citation is one an
/// item of the document was settled from (a push notification or a `tasks/get` repeating a
/// streamed task) is a copy, not unread: the claim was made once, where it was first read.
fn unread_records(doc: &mut Document, starts: &[usize], cited: &[(usize, Vec<String>)]) {
    if cited.is_empty() {
        return;
    }
    let settled: HashSet<String> =
        doc.items.iter().filter_map(|i| Some(crate::json::canonical(i.citation.as_ref()?))).collect();
    let mut said: Vec<usize> = doc
        .items
        .iter()
        .map(|i| &i.locator)
        .chain(doc.findings.iter().map(|f| &f.locator))
        .filter_map(|l| l.line)
        .collect();
    said.sort_unstable();
    for (line, citations) in cited {
        let line = *line;
        if !citations.is_empty() && citations.iter().all(|c| settled.contains(c)) {
            continue;
        }
        // Records come in document order, so `starts` is sorted.
        let end = starts.get(starts.partition_point(|&s| s <= line)).copied().unwrap_or(usize::MAX);
        let at = said.partition_point(|&l| l < line);
        if said.get(at).is_some_and(|&l| l < end) {
            continue;
        }
        let message = "this record holds a citation (the citations media type, or a `source` naming a table, \
                       column or function) that recite could not read or pair with a result: nothing in it was checked";
        doc.findings.push(Finding::new(
            Locator::at(&doc.file, "").on_line(Some(line)),
            RULE_UNREAD,
            Level::Must,
            message,
        ));
    }
}

/// The citation-shaped objects in `v` ([`crate::json::looks_like_citation`]), JSON inside
/// strings included, each as canonical JSON.
pub(crate) fn citations_in(v: &Value) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(_) if crate::json::looks_like_citation(v) => out.push(crate::json::canonical(v)),
            Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::String(s) if s.len() <= MAX_EMBEDDED_JSON && s.trim_start().starts_with(['{', '[']) => {
                if let Ok(inner) = serde_json::from_str::<Value>(s.trim()) {
                    walk(&inner, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, &mut out);
    out
}

/// Bytes of a JSON string [`mentions_citation`] reads as embedded JSON.
const MAX_EMBEDDED_JSON: usize = 1 << 20;

/// True when `v` holds something citation-shaped at any depth, JSON inside strings included:
/// a string naming the citations media type, or an object whose `source` is an object naming a
/// `table`, `column` or `function`.
pub fn mentions_citation(v: &Value) -> bool {
    match v {
        Value::String(s) => {
            contains_media_type(s)
                || (s.len() <= MAX_EMBEDDED_JSON
                    && s.trim_start().starts_with(['{', '['])
                    && serde_json::from_str::<Value>(s.trim()).is_ok_and(|inner| mentions_citation(&inner)))
        }
        Value::Array(a) => a.iter().any(mentions_citation),
        Value::Object(o) => {
            o.get("source")
                .and_then(Value::as_object)
                .is_some_and(|s| ["table", "column", "function"].iter().any(|k| s.contains_key(*k)))
                || o.values().any(mentions_citation)
        }
        _ => false,
    }
}

/// True when `text` names the citations media type, in any case.
fn contains_media_type(text: &str) -> bool {
    text.to_ascii_lowercase().contains(CITATION_MEDIA_TYPE)
}

/// True when a whole input holds something citation-shaped: the media type anywhere in its
/// text, or a value of its ([`mentions_citation`]).
fn text_mentions_citation(text: &str) -> bool {
    contains_media_type(text) || frame("", text).records.iter().any(|r| mentions_citation(&r.value))
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

/// True when the plain reader, not the AG-UI or A2A one, would read an input made of values
/// like `v` (see [`detect`]).
pub fn is_plain_record(v: &Value) -> bool {
    !looks_like_agui(v) && !a2a::looks_like_a2a(v)
}

/// True when a line that is exactly `{"result": result, "citation": {…}}` is a plain record
/// ([`is_plain_record`]): no AG-UI or A2A key beside the two, so only a result that is an A2A
/// Task, Message or update would make it A2A.
pub(crate) fn is_plain_result(result: &Value) -> bool {
    !a2a::is_a2a_payload(result)
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
