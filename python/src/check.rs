//! `recite.check`: every cited number of transcripts re-run in one pass over the data, as
//! `recite check` runs it; the report kept whole for Python (frames, JSON, text, HTML, JUnit).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde_json::{Value, json};

use recite_core::check::{self as batch, CheckError, Ran};
use recite_core::fail_on::{self, FailOn};
use recite_core::files;
use recite_core::report::stream::Writer;
use recite_core::report::{self, Input, Report as Whole};
use recite_core::scan::ScanStats;
use recite_core::settle::session::Options;
use recite_engine::engine::Engine;

use crate::collect::Collect;
use crate::errors::{Error, Kind};
use crate::frame::{Column, Kind::*, col};
use crate::inputs::{self, Given, Inputs};
use crate::{frame, layer, settle, worker};

/// What a batch reads and how it settles, kept so the report can be written again with the
/// series the HTML report charts.
#[derive(Clone)]
struct Plan {
    inputs: Arc<Inputs>,
    data: Option<PathBuf>,
    extractors: Option<PathBuf>,
    settle: Options,
    max_input_size: u64,
}

impl Plan {
    /// Runs the batch into `w` (on the calling thread: callers run it on the worker).
    fn run(&self, w: &mut dyn Writer) -> Result<Ran, Error> {
        let layer = layer::open(self.data.as_deref(), self.extractors.as_deref())?;
        let max = self.max_input_size;
        let read = move |p: &str| files::read_file(p, max);
        let quiet = |_: &str| {};
        let opts = batch::Options {
            settle: self.settle,
            chunk: batch::DEFAULT_CHUNK,
            max_input_size: max,
            held_bytes: batch::HELD_BYTES,
            read: &read,
            record_schema: None,
            data_layer: Some(layer.data_layer.clone()),
            timings: false,
            progress: &quiet,
        };
        let engine = Engine::new();
        batch::run(&self.inputs.sources, &layer.catalog, &layer.registry, &engine, &opts, w).map_err(|e| {
            match e {
                CheckError::Engine(e) => Error::new(Kind::Engine, e.to_string()),
                CheckError::Write(e) => Error::new(Kind::Engine, format!("keeping the report: {e}")),
            }
        })
    }
}

/// Checks every cited number of `inputs` (each a name and, for a document given as an object,
/// its bytes; without bytes the name is a file, folder or glob).
#[pyfunction]
#[pyo3(signature = (inputs, *, data=None, extractors=None, interval="logit", df="domain", explain=true,
    series=false, decimal_mark="dot", max_input_size=files::DEFAULT_MAX_INPUT_SIZE))]
#[allow(clippy::too_many_arguments)]
pub fn check(
    py: Python<'_>,
    inputs: Vec<(String, Option<Bound<'_, PyBytes>>)>,
    data: Option<PathBuf>,
    extractors: Option<PathBuf>,
    interval: &str,
    df: &str,
    explain: bool,
    series: bool,
    decimal_mark: &str,
    max_input_size: u64,
) -> PyResult<Report> {
    let settle = settle::options(settle::Spelled { interval, df, explain, series, decimal_mark })?;
    let given: Vec<Given> = inputs.into_iter().map(|(n, b)| (n, b.map(|b| b.as_bytes().to_vec()))).collect();
    let inputs = inputs::gather(given, max_input_size)?;
    if inputs.sources.is_empty() {
        return Err(Error::new(Kind::Input, "check: no input given").into());
    }
    let plan = Plan { inputs, data, extractors, settle, max_input_size };
    let job = plan.clone();
    let (ran, report) = worker::run(py, move || -> Result<_, Error> {
        let mut collect = Collect::default();
        let ran = job.run(&mut collect)?;
        Ok((ran, collect.report()))
    })??;
    Ok(Report { plan, ran, report, html: std::sync::OnceLock::new() })
}

/// Every item `fail_on=` takes, as `--fail-on` spells them.
#[pyfunction]
pub fn fail_on_items() -> Vec<String> {
    FailOn::ALL.iter().map(|v| v.name().to_string()).collect()
}

/// What `fail_on=` fails on: the command line's default when none.
fn fail_list(fail_on: Option<&str>) -> Result<Vec<FailOn>, Error> {
    fail_on::parse_list(fail_on.unwrap_or(fail_on::DEFAULT))
        .map_err(|e| Error::new(Kind::Usage, format!("fail_on: {e}")))
}

/// A checked batch: what `recite check` reports, kept whole.
#[pyclass(frozen, module = "recite._recite")]
pub struct Report {
    plan: Plan,
    ran: Ran,
    report: Whole,
    html: std::sync::OnceLock<String>,
}

/// `Report.claims`: one row per claim (`c`: the claim as the JSON report writes it, in
/// `inputs[].claims[]`; `h`: its headline number, the first not reproduced, else the first).
const CLAIMS: [Column; 33] = [
    col("input", Int, "/input"),
    col("file", Text, "/c/locator/file"),
    col("format", Text, "/format"),
    col("line", Int, "/c/locator/line"),
    col("task_id", Text, "/c/locator/task_id"),
    col("message_id", Text, "/c/locator/message_id"),
    col("artifact_id", Text, "/c/locator/artifact_id"),
    col("part_index", Int, "/c/locator/part_index"),
    col("event_index", Int, "/c/locator/event_index"),
    col("pointer", Text, "/c/locator/pointer"),
    col("verdict", Text, "/c/verdict"),
    col("reasons", Texts, "/c/reasons"),
    col("study", Text, "/c/rerun/study"),
    col("period", Text, "/c/rerun/period"),
    col("table", Text, "/c/rerun/table"),
    col("column", Text, "/c/rerun/column"),
    col("function", Text, "/c/rerun/function"),
    col("weight", Text, "/c/rerun/weight"),
    col("base", Text, "/c/rerun/base"),
    col("claimed_n", Int, "/c/base/claimed_n"),
    col("n", Int, "/c/base/n"),
    col("weighted_n", Float, "/c/base/weighted"),
    col("effective_n", Float, "/c/base/effective"),
    col("base_matched", Bool, "/c/base/matched"),
    col("measure", Text, "/h/m/name"),
    col("claimed", Text, "/h/c/claimed/text"),
    col("recomputed", Float, "/h/m/estimate/value"),
    col("recomputed_as_claimed", Float, "/h/c/shown"),
    col("difference", Float, "/h/c/difference"),
    col("z", Float, "/h/c/z"),
    col("gap", Text, "/h/c/gap"),
    col("matched", Bool, "/h/c/matched"),
    col("explanation", Text, "/c/explanations/0/message"),
];

/// `Report.answers`: one row per number stated in an agent's answer (`a`: the answer, in
/// `inputs[].answers[]`; `n`: the number, of its `numbers`; `sentence`: the sentence holding it).
const ANSWERS: [Column; 18] = [
    col("input", Int, "/input"),
    col("file", Text, "/file"),
    col("turn", Int, "/a/turn"),
    col("role", Text, "/a/role"),
    col("message_id", Text, "/a/message_id"),
    col("text", Text, "/n/text"),
    col("start", Int, "/n/start"),
    col("end", Int, "/n/end"),
    col("kind", Text, "/n/kind"),
    col("status", Text, "/n/status"),
    col("claim", Int, "/n/claim"),
    col("measure", Text, "/n/measure"),
    col("claimed", Text, "/n/claimed"),
    col("recomputed", Text, "/n/recomputed"),
    col("ambiguous", Bool, "/n/ambiguous"),
    col("why", Text, "/n/why"),
    col("sentence_index", Int, "/n/sentence"),
    col("sentence", Text, "/sentence"),
];

/// `Report.findings`: one row per finding (`f`, in `inputs[].findings[]`).
const FINDINGS: [Column; 9] = [
    col("input", Int, "/input"),
    col("file", Text, "/f/locator/file"),
    col("level", Text, "/f/level"),
    col("rule", Text, "/f/rule"),
    col("message", Text, "/f/message"),
    col("line", Int, "/f/locator/line"),
    col("event_index", Int, "/f/locator/event_index"),
    col("message_id", Text, "/f/locator/message_id"),
    col("pointer", Text, "/f/locator/pointer"),
];

/// `Report.inputs`: one row per input (`i`, in `inputs[]`), with its coverage.
const INPUTS: [Column; 10] = [
    col("input", Int, "/input"),
    col("file", Text, "/i/file"),
    col("format", Text, "/i/format"),
    col("claims", Int, "/claims"),
    col("results", Int, "/i/coverage/results"),
    col("citations", Int, "/i/coverage/citations"),
    col("paired", Int, "/i/coverage/paired"),
    col("numbers", Int, "/i/coverage/numbers"),
    col("cited_numbers", Int, "/i/coverage/cited_numbers"),
    col("compared", Int, "/i/coverage/compared"),
];

/// A claim's headline number: the first not reproduced, else the first compared.
fn headline(claim: &Value) -> Value {
    let rows = frame::nested_rows(claim, "measures", "claims");
    let compared: Vec<&Value> = rows.iter().filter(|r| !r["i"].is_null()).collect();
    let pick = compared.iter().find(|r| r["i"]["matched"] == json!(false)).or(compared.first());
    pick.map(|r| json!({"m": r["o"], "c": r["i"]})).unwrap_or(Value::Null)
}

/// What an input counts toward `--fail-on`: its verdicts, finding levels and answer statuses.
fn ran_of(input: &Input) -> Ran {
    let summary = Whole::new(vec![input.clone()], ScanStats::default()).summary;
    let mut levels = BTreeMap::new();
    input.findings.iter().for_each(|f| *levels.entry(f.level).or_insert(0) += 1);
    Ran { summary, levels, moca_events: input.moca.len() }
}

#[pymethods]
impl Report {
    /// The report as `recite check --format json` writes it (JSON text).
    fn json(&self) -> String {
        report::json::render(&self.report)
    }

    /// The report's `summary` alone, as the JSON report writes it (JSON text): what
    /// `Report.summary` reads without rendering and parsing the whole report.
    fn summary_json(&self) -> String {
        report::json::part_value(&self.report.summary).to_string()
    }

    /// The report's `data_layer` alone (JSON text, `null` when none): where the data was read
    /// and the warning when it hides another layer.
    fn data_layer_json(&self) -> String {
        report::json::part_value(&self.report.data_layer).to_string()
    }

    /// The text report `recite check` prints; with `fail_on`, only the inputs holding something
    /// it fails on.
    #[pyo3(signature = (fail_on=None))]
    fn text(&self, fail_on: Option<&str>) -> PyResult<String> {
        let style = report::text::Style { color: false };
        let Some(fail_on) = fail_on else { return Ok(report::text::render(&self.report, style)) };
        let list = fail_list(Some(fail_on))?;
        let failing: Vec<Input> =
            self.report.inputs.iter().filter(|i| FailOn::any_in(&list, &ran_of(i))).cloned().collect();
        let mut only = Whole::new(failing, self.report.stats.clone());
        only.data_layer = self.report.data_layer.clone();
        Ok(report::text::render(&only, style))
    }

    /// The JUnit XML report (`recite check --format junit`).
    fn junit(&self) -> String {
        report::junit::render(&self.report)
    }

    /// The HTML report (`recite check --format html`): the batch is run again with each claimed
    /// measure's series, which the page charts, unless it was checked with `series=True`.
    fn html(&self, py: Python<'_>) -> PyResult<String> {
        if let Some(h) = self.html.get() {
            return Ok(h.clone());
        }
        let page = if self.plan.settle.series {
            report::html::render(&self.report)
        } else {
            let mut plan = self.plan.clone();
            plan.settle.series = true;
            worker::run(py, move || -> Result<_, Error> {
                let mut collect = Collect::default();
                plan.run(&mut collect)?;
                Ok(report::html::render(&collect.report()))
            })??
        };
        Ok(self.html.get_or_init(|| page).clone())
    }

    /// 1 when anything counts toward `fail_on` (default: the command line's), else 5 when
    /// nothing at all was checked (unless `allow_empty`), else 0: `recite check`'s exit status.
    #[pyo3(signature = (fail_on=None, allow_empty=false))]
    fn exit_code(&self, fail_on: Option<&str>, allow_empty: bool) -> PyResult<i32> {
        let list = fail_list(fail_on)?;
        Ok(if FailOn::any_in(&list, &self.ran) {
            1
        } else if self.ran.checked_nothing() && !allow_empty {
            5
        } else {
            0
        })
    }

    /// Whether anything counts toward `fail_on` (default: the command line's).
    #[pyo3(signature = (fail_on=None))]
    fn fails(&self, fail_on: Option<&str>) -> PyResult<bool> {
        Ok(FailOn::any_in(&fail_list(fail_on)?, &self.ran))
    }

    /// True when no claim, no MOCA event and no answer number was found in any input.
    fn checked_nothing(&self) -> bool {
        self.ran.checked_nothing()
    }

    /// The claims frame (Arrow).
    fn claims_table(&self, py: Python<'_>) -> PyResult<Py<pyo3_arrow::PyTable>> {
        let mut rows = Vec::new();
        for (n, input) in self.report.inputs.iter().enumerate() {
            for c in &input.claims {
                let claim = report::json::claim_value(c);
                let h = headline(&claim);
                rows.push(json!({"input": n, "format": input.format, "c": claim, "h": h}));
            }
        }
        frame::table(py, &CLAIMS, &rows)
    }

    /// The answers frame (Arrow).
    fn answers_table(&self, py: Python<'_>) -> PyResult<Py<pyo3_arrow::PyTable>> {
        let mut rows = Vec::new();
        for (n, input) in self.report.inputs.iter().enumerate() {
            for answer in &input.answers {
                let a = report::json::answer_value(answer);
                for number in &answer.numbers {
                    let sentence =
                        answer.sentences.get(number.sentence).and_then(|s| answer.text.get(s.start..s.end));
                    let number = report::json::part_value(number);
                    rows.push(
                        json!({"input": n, "file": input.file, "a": a, "n": number, "sentence": sentence}),
                    );
                }
            }
        }
        frame::table(py, &ANSWERS, &rows)
    }

    /// The findings frame (Arrow).
    fn findings_table(&self, py: Python<'_>) -> PyResult<Py<pyo3_arrow::PyTable>> {
        let mut rows = Vec::new();
        for (n, input) in self.report.inputs.iter().enumerate() {
            for f in &input.findings {
                rows.push(json!({"input": n, "f": report::json::part_value(f)}));
            }
        }
        frame::table(py, &FINDINGS, &rows)
    }

    /// The inputs frame (Arrow).
    fn inputs_table(&self, py: Python<'_>) -> PyResult<Py<pyo3_arrow::PyTable>> {
        let rows: Vec<Value> = (self.report.inputs.iter().enumerate())
            .map(|(n, i)| {
                let coverage = report::json::part_value(&i.coverage);
                json!({"input": n, "claims": i.claims.len(), "i": {"file": i.file, "format": i.format, "coverage": coverage}})
            })
            .collect();
        frame::table(py, &INPUTS, &rows)
    }
}
