//! The JSON lines report (`--format jsonl`), for pipelines: one line per settled claim, written
//! as soon as it is settled; after each input's claims one line for the input (its findings,
//! MOCA events and answer audit); last, one summary line. Every line is one JSON object whose
//! `record` says which of the three it is (schema: `docs/report-lines.schema.json`). Numbers are
//! rounded as in the JSON report, and each line's fields are the JSON report's.

use std::collections::BTreeMap;
use std::io::{self, Write};

use rayon::prelude::*;
use serde::Serialize;
use serde_json::{Map, Value};

use super::json::{answer_value, claim_value, part_value};
use super::stream::{self, Closing, InputHead, InputTail};
use super::{ClaimReport, DataLayer, Summary};
use crate::answers::Answer;
use crate::input::{Finding, Format};
use crate::moca::MocaEvent;
use crate::settle::ScanStats;

/// One line of the JSON lines report (the shape its schema is generated from).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum Line {
    /// One claim and its settlement, as in the JSON report's `inputs[].claims[]`; its input is
    /// `locator.file`.
    Claim(Box<ClaimReport>),
    /// An input, after its claims: what the JSON report says of it besides the claims.
    Input(InputLine),
    /// The last line: the JSON report's opening fields.
    Summary(SummaryLine),
}

/// The `input` line.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct InputLine {
    /// The file as named (`-` for standard input).
    pub file: String,
    /// The detected format; none when the file could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Format>,
    /// How many claim lines came before this line for this input.
    pub claims: usize,
    /// Findings that are not about one claim's numbers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// The MOCA `moca.citations` events of an AG-UI log, as checked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moca: Vec<MocaEvent>,
    /// The agent answers, every stated number traced to the cited results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<Answer>,
    /// What the input held and how much of it was checked.
    pub coverage: super::Coverage,
}

/// The `summary` line.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SummaryLine {
    /// The shape version (the JSON report's).
    pub report_version: u32,
    /// The recite version that wrote it.
    pub recite: String,
    /// The data layer that answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_layer: Option<DataLayer>,
    /// Counts by verdict, and of findings.
    pub summary: Summary,
    /// What the run read.
    pub stats: ScanStats,
    /// Phase timings in milliseconds, only with `--timings`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings: Option<BTreeMap<String, f64>>,
}

/// The JSON lines report, written as it goes.
pub struct Writer {
    out: Box<dyn Write>,
    file: String,
    format: Option<Format>,
    claims: usize,
}

impl Writer {
    /// A JSON lines report to `out`.
    pub fn new(out: Box<dyn Write>) -> Writer {
        Writer { out, file: String::new(), format: None, claims: 0 }
    }

    fn line(&mut self, record: &str, fields: Value) -> io::Result<()> {
        self.out.write_all(line_text(record, fields).as_bytes())
    }
}

/// One line: `record` first, then the fields.
fn line_text(record: &str, fields: Value) -> String {
    let mut m = Map::new();
    m.insert("record".into(), Value::String(record.into()));
    if let Value::Object(f) = fields {
        m.extend(f);
    }
    let mut s = serde_json::to_string(&Value::Object(m)).expect("a value always serializes");
    s.push('\n');
    s
}

/// A claim's line: written by the typed writer (the value path's bytes, a test), which is taken
/// for what the writer leaves to it.
fn claim_line(c: &ClaimReport) -> String {
    #[derive(Serialize)]
    struct Tagged<'a> {
        record: &'static str,
        #[serde(flatten)]
        claim: &'a ClaimReport,
    }
    match super::typed::compact(&Tagged { record: "claim", claim: c }) {
        Some(mut s) => {
            s.push('\n');
            s
        }
        None => line_text("claim", claim_value(c)),
    }
}

impl stream::Writer for Writer {
    fn begin_input(&mut self, head: InputHead<'_>) -> io::Result<()> {
        self.file = head.file.to_string();
        self.format = head.format;
        self.claims = 0;
        Ok(())
    }

    fn claim(&mut self, c: &ClaimReport) -> io::Result<()> {
        self.claims += 1;
        self.out.write_all(claim_line(c).as_bytes())
    }

    fn claims(&mut self, cs: &[ClaimReport]) -> io::Result<()> {
        let lines: Vec<String> = cs.par_iter().map(claim_line).collect();
        self.claims += cs.len();
        lines.iter().try_for_each(|l| self.out.write_all(l.as_bytes()))
    }

    fn end_input(&mut self, tail: InputTail<'_>) -> io::Result<()> {
        let mut m = Map::new();
        m.insert("file".into(), part_value(&self.file));
        if let Some(f) = self.format {
            m.insert("format".into(), part_value(&f));
        }
        m.insert("claims".into(), Value::from(self.claims));
        if !tail.findings.is_empty() {
            m.insert("findings".into(), part_value(&tail.findings));
        }
        if !tail.moca.is_empty() {
            m.insert("moca".into(), part_value(&tail.moca));
        }
        if tail.answers.is_empty() {
            m.insert("coverage".into(), part_value(&tail.coverage));
            return self.line("input", Value::Object(m));
        }
        // The line with its answers and coverage spliced in, one answer's value at a time: the
        // same bytes as the whole line's value, without holding every answer's at once.
        let mut head = line_text("input", Value::Object(m));
        head.truncate(head.len() - "}\n".len());
        self.out.write_all(head.as_bytes())?;
        self.out.write_all(b",\"answers\":[")?;
        for (i, a) in tail.answers.iter().enumerate() {
            if i > 0 {
                self.out.write_all(b",")?;
            }
            serde_json::to_writer(&mut self.out, &answer_value(a))?;
        }
        self.out.write_all(b"],\"coverage\":")?;
        serde_json::to_writer(&mut self.out, &part_value(&tail.coverage))?;
        self.out.write_all(b"}\n")
    }

    fn finish(&mut self, c: Closing<'_>) -> io::Result<()> {
        let mut v = part_value(&super::json::Opening::of(c));
        if let Value::Object(m) = &mut v {
            m.remove("inputs");
        }
        self.line("summary", v)?;
        self.out.flush()
    }
}

/// The JSON Schema of one line of the JSON lines report, generated from [`Line`].
pub fn schema() -> String {
    let schema = schemars::schema_for!(Line);
    let mut s = serde_json::to_string_pretty(&schema).expect("a schema always serializes");
    s.push('\n');
    s
}
