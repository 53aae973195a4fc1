//! `recite.verify`: one citation re-run and settled in full, as `recite verify` settles it.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde_json::Value;

use recite_core::files;
use recite_core::report::{self, DataLayer};
use recite_core::scan::ScanStats;
use recite_core::settle::Settlement as Settled;
use recite_core::verify as one;
use recite_engine::engine::Engine;

use crate::errors::{Error, Kind};
use crate::frame::{Column, Kind::*, col};
use crate::{frame, layer, settle, worker};

/// Re-runs one citation (`citation`, the bytes of a citation file or of a `{citation, result}`
/// pair, named `name` in the report) and settles it. The claimed numbers are `claims`
/// (`[MEASURE=]VALUE` each), else the numeric leaves of `result` (a tool result's JSON bytes),
/// else those of the result paired with the citation. `path`, when given instead of bytes, is
/// read as `recite verify` reads its file.
#[pyfunction]
#[pyo3(signature = (name, citation=None, path=None, *, result=None, result_name=None, claims=None, data=None,
    extractors=None, interval="logit", df="domain", explain=true, series=false, decimal_mark="dot"))]
#[allow(clippy::too_many_arguments)]
pub fn verify(
    py: Python<'_>,
    name: String,
    citation: Option<Bound<'_, PyBytes>>,
    path: Option<String>,
    result: Option<Bound<'_, PyBytes>>,
    result_name: Option<String>,
    claims: Option<Vec<String>>,
    data: Option<PathBuf>,
    extractors: Option<PathBuf>,
    interval: &str,
    df: &str,
    explain: bool,
    series: bool,
    decimal_mark: &str,
) -> PyResult<Settlement> {
    let options = settle::options(settle::Spelled { interval, df, explain, series, decimal_mark })?;
    let bytes = match (citation, path) {
        (Some(b), _) => b.as_bytes().to_vec(),
        (None, Some(p)) => files::read_one(&p, files::DEFAULT_MAX_INPUT_SIZE)
            .map_err(|e| Error::from_error(Kind::Citation, &e).at(p.clone()))?,
        (None, None) => return Err(Error::new(Kind::Usage, "verify: no citation given").into()),
    };
    let result = result.map(|r| r.as_bytes().to_vec());
    let result_name = result_name.unwrap_or_else(|| "result".into());
    let claims = claims.unwrap_or_default();
    let claimed = one::claimed(&claims, result.as_deref(), options.decimal_mark).map_err(|e| match e {
        one::ClaimedError::Result(e) => {
            Error::new(Kind::Citation, format!("{result_name}: {e}")).at(result_name)
        }
        e => Error::new(Kind::Citation, e.to_string()).at("claims"),
    })?;
    let file = name.clone();
    let settled = worker::run(py, move || -> Result<_, Error> {
        let layer = layer::open(data.as_deref(), extractors.as_deref())?;
        let engine = Engine::new();
        let (settlement, stats) =
            one::verify(&file, &bytes, claimed, &layer.catalog, &layer.registry, &engine, options)
                .map_err(|e| Error::new(Kind::Engine, e.to_string()))?;
        Ok((settlement, stats, layer.data_layer))
    })?;
    let (settlement, stats, data_layer) = settled?;
    Ok(Settlement { file: name, settlement, stats, data_layer })
}

/// One citation, settled: the verdict, the measures and base recomputed, why, and the report.
#[pyclass(frozen, module = "recite._recite")]
pub struct Settlement {
    file: String,
    settlement: Settled,
    stats: ScanStats,
    data_layer: DataLayer,
}

/// `Settlement.measures`: one row per measure of the extractor (`o`, an element of the claim's
/// `measures`) and claim made about it (`i`, of its `claims`); a measure no number claims has one
/// row, its claim columns null.
const MEASURES: [Column; 20] = [
    col("measure", Text, "/o/name"),
    col("unit", Text, "/o/unit"),
    col("recomputed", Float, "/o/estimate/value"),
    col("se", Float, "/o/estimate/se"),
    col("ci_low", Float, "/o/estimate/ci_low"),
    col("ci_high", Float, "/o/estimate/ci_high"),
    col("df", Float, "/o/estimate/df"),
    col("deff", Float, "/o/estimate/deff"),
    col("sample", Text, "/o/estimate/sample"),
    col("claimed", Text, "/i/claimed/text"),
    col("claimed_value", Float, "/i/claimed/value"),
    col("claimed_key", Text, "/i/claimed/key"),
    col("claimed_pointer", Text, "/i/claimed/pointer"),
    col("recomputed_as_claimed", Float, "/i/shown"),
    col("tolerance", Float, "/i/tolerance"),
    col("difference", Float, "/i/difference"),
    col("z", Float, "/i/z"),
    col("gap", Text, "/i/gap"),
    col("percent", Bool, "/i/percent"),
    col("matched", Bool, "/i/matched"),
];

/// `Settlement.series`: each claimed measure (`o`, of the claim's `series`) across the periods of
/// its study (`i`, of its `points`); computed with `series=True`.
const SERIES: [Column; 8] = [
    col("measure", Text, "/o/measure"),
    col("unit", Text, "/o/unit"),
    col("period", Text, "/i/period"),
    col("cited", Bool, "/i/cited"),
    col("value", Float, "/i/value"),
    col("ci_low", Float, "/i/ci_low"),
    col("ci_high", Float, "/i/ci_high"),
    col("n", Int, "/i/n"),
];

impl Settlement {
    /// The one-claim report, as `recite verify --format json` writes it.
    fn report(&self) -> report::Report {
        one::report(&self.file, self.settlement.clone(), self.stats.clone(), self.data_layer.clone())
    }

    /// The claim as the JSON report writes it (rounded).
    fn claim(&self) -> Value {
        report::json::part_value(&self.settlement)
    }
}

#[pymethods]
impl Settlement {
    /// REPRODUCED, DISCREPANT, BASE_MISMATCH, UNVERIFIABLE or INVALID.
    #[getter]
    fn verdict(&self) -> &'static str {
        self.settlement.verdict.as_str()
    }

    /// Why, in words, most important first.
    #[getter]
    fn reasons(&self) -> Vec<String> {
        self.settlement.reasons.clone()
    }

    /// The report as `recite verify --format json` writes it (JSON text).
    fn json(&self) -> String {
        report::json::render(&self.report())
    }

    /// The report's `data_layer` alone (JSON text): where the data was read, and the warning
    /// when it hides another layer.
    fn data_layer_json(&self) -> String {
        report::json::part_value(&self.data_layer).to_string()
    }

    /// The settled claim alone as the JSON report writes it (JSON text).
    fn claim_json(&self) -> String {
        self.claim().to_string()
    }

    /// The text `recite verify` prints.
    fn text(&self) -> String {
        one::text(&self.file, &self.settlement, report::text::Style { color: false }, &self.data_layer)
    }

    /// The HTML report of this one claim (`recite check --format html` over its file).
    fn html(&self) -> String {
        report::html::render(&self.report())
    }

    /// The measures frame (Arrow).
    fn measures_table(&self, py: Python<'_>) -> PyResult<Py<pyo3_arrow::PyTable>> {
        frame::table(py, &MEASURES, &frame::nested_rows(&self.claim(), "measures", "claims"))
    }

    /// The series frame (Arrow): empty unless settled with `series=True`.
    fn series_table(&self, py: Python<'_>) -> PyResult<Py<pyo3_arrow::PyTable>> {
        let rows: Vec<Value> = frame::nested_rows(&self.claim(), "series", "points")
            .into_iter()
            .filter(|r| !r["i"].is_null())
            .collect();
        frame::table(py, &SERIES, &rows)
    }
}
