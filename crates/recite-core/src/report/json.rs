//! The JSON report: the reference form, byte-identical for the same inputs.
//!
//! Sums of floating-point numbers computed in parallel can differ in their last bits from run
//! to run, so every non-integer number is written rounded to 12 significant digits: far more
//! than any claim shows, and stable. A claim's `difference` and `z` are kept to 6: they are small
//! differences of nearly equal numbers, so the last-bit noise of the recomputed value is ~1000
//! times larger relative to them, and at 12 digits it showed (e.g. `-0.0489473880926` in one run,
//! `…927` in the next).

use std::io::{self, Write};

use rayon::prelude::*;
use serde_json::{Number, Value};

use super::round::{DIFFERENCES, SIGNIFICANT, SIGNIFICANT_DIFFERENCES, round_significant};
use super::stream::{self, Closing, InputHead, InputTail, Output, SpoolBehind};
use super::{ClaimReport, DataLayer, Report};

/// The report as pretty JSON, with a final newline: [`Writer`] over a report in memory.
pub fn render(report: &Report) -> String {
    stream::render_whole(report, Writer::new)
}

/// The report as pretty JSON built as one value, the form [`Writer`] must equal byte for byte
/// (kept as the reference for that test; a run never builds it).
pub fn render_value(report: &Report) -> String {
    let mut v = serde_json::to_value(report).expect("a report always serializes");
    round_floats(&mut v);
    cap_strings(&mut v);
    let mut s = serde_json::to_string_pretty(&v).expect("a value always serializes");
    s.push('\n');
    s
}

/// Caps the strings from the inputs in place: each at [`MAX_ECHO_CHARS`] characters, but an
/// answer's text (`inputs[].answers[].text`) at [`MAX_TURN_CHARS`], as the HTML report shows a
/// turn, so its numbers' byte offsets hold for any answer shorter than that.
///
/// [`MAX_ECHO_CHARS`]: super::escape::MAX_ECHO_CHARS
/// [`MAX_TURN_CHARS`]: super::escape::MAX_TURN_CHARS
pub fn cap_strings(v: &mut Value) {
    use super::escape::{MAX_TURN_CHARS, cap_at, cap_json};
    let mut texts = Vec::new();
    for_answer_texts(v, |t| texts.push(std::mem::take(t)));
    cap_json(v);
    let mut texts = texts.into_iter();
    for_answer_texts(v, |t| {
        if let Some(Value::String(s)) = texts.next() {
            *t = Value::String(cap_at(&s, MAX_TURN_CHARS).into_owned());
        }
    });
}

/// Calls `f` on every `inputs[].answers[].text`, in order.
fn for_answer_texts(v: &mut Value, mut f: impl FnMut(&mut Value)) {
    let inputs = v.get_mut("inputs").and_then(Value::as_array_mut).into_iter().flatten();
    for answer in inputs.filter_map(|i| i.get_mut("answers")?.as_array_mut()).flatten() {
        if let Some(t) = answer.get_mut("text") {
            f(t);
        }
    }
}

/// Rounds every non-integer number to [`SIGNIFICANT`] digits ([`SIGNIFICANT_DIFFERENCES`] for
/// the fields in [`DIFFERENCES`]), in place.
///
/// [`SIGNIFICANT`]: super::round::SIGNIFICANT
/// [`SIGNIFICANT_DIFFERENCES`]: super::round::SIGNIFICANT_DIFFERENCES
/// [`DIFFERENCES`]: super::round::DIFFERENCES
pub fn round_floats(v: &mut Value) {
    round_to(v, SIGNIFICANT)
}

fn round_to(v: &mut Value, digits: usize) {
    match v {
        Value::Number(n) => {
            let text = n.to_string();
            if text.contains(['.', 'e', 'E'])
                && let Some(f) = n.as_f64()
                && let Some(r) = Number::from_f64(round_significant(f, digits))
            {
                *n = r;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| round_to(x, digits)),
        Value::Object(o) => o.iter_mut().for_each(|(k, x)| {
            round_to(x, if DIFFERENCES.contains(&k.as_str()) { SIGNIFICANT_DIFFERENCES } else { digits })
        }),
        _ => {}
    }
}

/// A value as pretty JSON whose lines after the first are indented by `indent` spaces, to sit
/// at that depth of a larger pretty document.
pub(crate) fn pretty_at(v: &Value, indent: usize) -> String {
    let s = serde_json::to_string_pretty(v).expect("a value always serializes");
    if !s.contains('\n') {
        return s;
    }
    let pad = " ".repeat(indent);
    let mut o = String::with_capacity(s.len() + s.len() / 8);
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            o.push('\n');
            o.push_str(&pad);
        }
        o.push_str(line);
    }
    o
}

/// One claim as the report writes it: rounded and capped, a value of its own.
pub fn claim_value(c: &ClaimReport) -> Value {
    let mut v = serde_json::to_value(c).expect("a claim always serializes");
    round_floats(&mut v);
    super::escape::cap_json(&mut v);
    v
}

/// An input's answers as the report writes them: rounded, capped, each text at
/// [`MAX_TURN_CHARS`](super::escape::MAX_TURN_CHARS). The reports write them one at a time
/// ([`answer_value`], [`write_answers`]): this whole value took about 2.5 KB a stated number.
pub fn answers_value(answers: &[crate::answers::Answer]) -> Value {
    Value::Array(answers.iter().map(answer_value).collect())
}

/// One answer as the report writes it (an element of [`answers_value`]).
pub fn answer_value(answer: &crate::answers::Answer) -> Value {
    let mut v = serde_json::json!({ "inputs": [{ "answers": [answer] }] });
    round_floats(&mut v);
    cap_strings(&mut v);
    v["inputs"][0]["answers"][0].take()
}

/// Writes `pretty_at(&answers_value(answers), indent)` (non-empty `answers`), building one
/// answer's value at a time, so memory holds one answer's, not the input's.
pub fn write_answers(
    out: &mut dyn Write,
    answers: &[crate::answers::Answer],
    indent: usize,
) -> io::Result<()> {
    let pad = " ".repeat(indent + 2);
    for (i, a) in answers.iter().enumerate() {
        out.write_all(if i == 0 { b"[\n" } else { b",\n" })?;
        out.write_all(pad.as_bytes())?;
        out.write_all(pretty_at(&answer_value(a), indent + 2).as_bytes())?;
    }
    if answers.is_empty() {
        return out.write_all(b"[]");
    }
    write!(out, "\n{}]", &pad[..indent])
}

/// Any other part of the report, rounded and capped.
pub fn part_value(x: &impl serde::Serialize) -> Value {
    let mut v = serde_json::to_value(x).expect("a report part always serializes");
    round_floats(&mut v);
    super::escape::cap_json(&mut v);
    v
}

/// The JSON report, written input by input: the inputs go to a spool, and once the summary is
/// known the opening is written, then the spooled inputs.
pub struct Writer {
    out: Output,
    body: SpoolBehind,
    inputs: usize,
    claims: usize,
}

impl Writer {
    /// A JSON report to `out`.
    pub fn new(out: Box<dyn Write>) -> Writer {
        Writer::to(Output::Other(out))
    }

    /// A JSON report to `out`: into a file, a body past memory moves in the kernel.
    pub fn to(out: Output) -> Writer {
        Writer { out, body: SpoolBehind::new(), inputs: 0, claims: 0 }
    }
}

impl Writer {
    /// Writes one claim rendered by [`claim_text`], after its separator.
    fn rendered(&mut self, text: &[u8]) -> io::Result<()> {
        self.body.write_all(separator(self.claims).as_bytes())?;
        self.claims += 1;
        self.body.write_all(text)
    }
}

/// What goes before an input's claim number `i` (from 0): the key opening its claims, or a comma.
fn separator(i: usize) -> &'static str {
    if i == 0 { ",\n      \"claims\": [\n        " } else { ",\n        " }
}

/// One claim as it sits in the report's `claims` array: written by the typed writer, the
/// value path's bytes (a test), which is taken for what the writer leaves to it.
fn claim_text(c: &ClaimReport) -> String {
    super::typed::pretty(c, 8).unwrap_or_else(|| pretty_at(&claim_value(c), 8))
}

/// [`claim_text`] appended to `out`.
fn claim_into(c: &ClaimReport, out: &mut Vec<u8>) {
    if !super::typed::pretty_into(c, 8, out) {
        out.extend_from_slice(pretty_at(&claim_value(c), 8).as_bytes());
    }
}

/// Claims rendered per buffer by [`stream::Writer::claims`].
const CLAIMS_PER_BUFFER: usize = 256;

impl stream::Writer for Writer {
    fn begin_input(&mut self, head: InputHead<'_>) -> io::Result<()> {
        if self.inputs > 0 {
            self.body.write_all(b",\n")?;
        }
        self.inputs += 1;
        self.claims = 0;
        write!(self.body, "    {{\n      \"file\": {}", pretty_at(&part_value(&head.file), 6))?;
        if let Some(f) = head.format {
            write!(self.body, ",\n      \"format\": {}", pretty_at(&part_value(&f), 6))?;
        }
        Ok(())
    }

    fn claim(&mut self, c: &ClaimReport) -> io::Result<()> {
        self.rendered(claim_text(c).as_bytes())
    }

    fn claims(&mut self, cs: &[ClaimReport]) -> io::Result<()> {
        // A buffer per run of claims, not per claim: a fresh 4 KB buffer for each claim sent
        // glibc's allocator through its consolidation of the small blocks freed meanwhile. Each
        // buffer holds its claims' separators too, so it goes to the body as it is.
        let first = self.claims;
        let rendered: Vec<Vec<u8>> = cs
            .par_chunks(CLAIMS_PER_BUFFER)
            .enumerate()
            .map(|(k, run)| {
                let mut out = Vec::with_capacity(run.len() * 4096);
                for (j, c) in run.iter().enumerate() {
                    out.extend_from_slice(separator(first + k * CLAIMS_PER_BUFFER + j).as_bytes());
                    claim_into(c, &mut out);
                }
                out
            })
            .collect();
        self.claims += cs.len();
        rendered.into_iter().try_for_each(|out| self.body.hand(out))
    }

    fn owned_claims(&mut self, cs: Vec<ClaimReport>) -> io::Result<()> {
        self.claims(&cs)?;
        // Freed on the pool, beside the next chunk's work: tens of allocations a claim, freed
        // one by one on this thread, were a serial stretch of every chunk.
        rayon::spawn(move || drop(cs));
        Ok(())
    }

    fn end_input(&mut self, tail: InputTail<'_>) -> io::Result<()> {
        self.body.write_all(if self.claims == 0 { b",\n      \"claims\": []" } else { b"\n      ]" })?;
        if !tail.findings.is_empty() {
            write!(self.body, ",\n      \"findings\": {}", pretty_at(&part_value(&tail.findings), 6))?;
        }
        if !tail.moca.is_empty() {
            write!(self.body, ",\n      \"moca\": {}", pretty_at(&part_value(&tail.moca), 6))?;
        }
        if !tail.answers.is_empty() {
            self.body.write_all(b",\n      \"answers\": ")?;
            write_answers(&mut self.body, tail.answers, 6)?;
        }
        write!(self.body, ",\n      \"coverage\": {}", pretty_at(&part_value(&tail.coverage), 6))?;
        self.body.write_all(b"\n    }")
    }

    fn finish(&mut self, c: Closing<'_>) -> io::Result<()> {
        let opening = Opening::of(c);
        let mut v = serde_json::to_value(&opening).expect("a report always serializes");
        round_floats(&mut v);
        cap_strings(&mut v);
        let mut head = serde_json::to_string_pretty(&v).expect("a value always serializes");
        if self.inputs > 0 {
            // The opening ends `"inputs": []\n}`: the spooled inputs go between the brackets.
            head.truncate(head.len() - "]\n}".len());
            self.out.write_all(head.as_bytes())?;
            self.out.write_all(b"\n")?;
            std::mem::take(&mut self.body).into_spool()?.drain_into(&mut self.out)?;
            self.out.write_all(b"\n  ]\n}\n")?;
        } else {
            self.out.write_all(head.as_bytes())?;
            self.out.write_all(b"\n")?;
        }
        self.out.flush()
    }
}

/// The report's fields before its inputs, in the report's order (inputs left empty).
#[derive(serde::Serialize)]
pub(crate) struct Opening<'a> {
    report_version: u32,
    recite: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    data_layer: Option<&'a DataLayer>,
    summary: &'a super::Summary,
    stats: &'a crate::settle::ScanStats,
    #[serde(skip_serializing_if = "Option::is_none")]
    timings: Option<&'a std::collections::BTreeMap<String, f64>>,
    inputs: [(); 0],
}

impl<'a> Opening<'a> {
    pub(crate) fn of(c: Closing<'a>) -> Opening<'a> {
        Opening {
            report_version: super::REPORT_VERSION,
            recite: env!("CARGO_PKG_VERSION"),
            data_layer: c.data_layer,
            summary: c.summary,
            stats: c.stats,
            timings: c.timings,
            inputs: [],
        }
    }
}

/// The JSON Schema of the report, generated from the Rust types.
pub fn schema() -> String {
    let schema = schemars::schema_for!(Report);
    let mut s = serde_json::to_string_pretty(&schema).expect("a schema always serializes");
    s.push('\n');
    s
}
