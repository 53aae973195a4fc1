//! One citation, settled in full (`recite verify`): read the citation file as `check` reads a
//! pair, take the claimed numbers from its result or from the caller, run the whole path once.
//!
//! A citation file that cannot be read as one citation settles INVALID (it is data, not an
//! error); only an internal engine failure is an error of the run.

use serde_json::Value;

use crate::catalog::Catalog;
use crate::citation::Problem;
use crate::claim::{self, Claimed, DecimalMark};
use crate::extractor::Registry;
use crate::input::{Format, Locator};
use crate::report::{self, ClaimReport, DataLayer, Input, Report};
use crate::scan::{EngineError, Scan, ScanStats};
use crate::settle::Settlement;
use crate::settle::pipeline::{self, Claim, Options};
use crate::transcript::{self, plain};

/// A JSON file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// Its bytes are not UTF-8.
    NotUtf8(String),
    /// Its text is not JSON.
    NotJson(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::NotUtf8(e) => write!(f, "not UTF-8: {e}"),
            ReadError::NotJson(e) => write!(f, "not valid JSON: {e}"),
        }
    }
}

impl std::error::Error for ReadError {}

/// `bytes` as one JSON value (a UTF-8 byte-order mark is skipped).
pub fn read_json(bytes: &[u8]) -> Result<Value, ReadError> {
    let text = std::str::from_utf8(bytes).map_err(|e| ReadError::NotUtf8(e.to_string()))?;
    serde_json::from_str(transcript::strip_bom(text)).map_err(|e| ReadError::NotJson(e.to_string()))
}

/// Claimed numbers given apart from the citation file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimedError {
    /// A claimed number (`[MEASURE=]VALUE`) that does not parse.
    Claim(claim::ClaimArgError),
    /// The tool result file cannot be read.
    Result(ReadError),
}

impl std::fmt::Display for ClaimedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClaimedError::Claim(e) => std::fmt::Display::fmt(e, f),
            ClaimedError::Result(e) => std::fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for ClaimedError {}

/// The claimed numbers given apart from the citation file: `claims` (each `[MEASURE=]VALUE`),
/// else the values of a tool `result` file's bytes, each read by the convention `mark` where
/// its text leaves the decimal mark open; `None` when neither is given, so the numbers of the
/// result paired with the citation count.
pub fn claimed(
    claims: &[String],
    result: Option<&[u8]>,
    mark: DecimalMark,
) -> Result<Option<Vec<Claimed>>, ClaimedError> {
    if let Some(bytes) = result {
        let v = read_json(bytes).map_err(ClaimedError::Result)?;
        return Ok(Some(claim::claimed(&v, mark)));
    }
    if claims.is_empty() {
        return Ok(None);
    }
    let parsed = claims.iter().map(|c| claim::parse_arg(c, mark)).collect::<Result<_, _>>();
    parsed.map(Some).map_err(ClaimedError::Claim)
}

/// Settles the citation in `bytes` (from `file`, for messages). `claimed` replaces the numbers
/// of the result paired with it in the file, when given.
pub fn verify(
    file: &str,
    bytes: &[u8],
    claimed: Option<Vec<Claimed>>,
    catalog: &Catalog,
    registry: &Registry,
    engine: &dyn Scan,
    options: Options,
) -> Result<(Settlement, ScanStats), EngineError> {
    let parsed = read_json(bytes)
        .map_err(|e| e.to_string())
        .and_then(|v| split_pair(file, v).map_err(|e| e.to_string()));
    let (citation, result) = match parsed {
        Err(message) => {
            let problems = vec![Problem { pointer: String::new(), message }];
            return Ok((Settlement::invalid(problems), ScanStats::default()));
        }
        Ok(pair) => pair,
    };
    let mark = options.decimal_mark;
    let numbers =
        claimed.unwrap_or_else(|| result.as_ref().map(|r| claim::claimed(r, mark)).unwrap_or_default());
    let claims = [Claim { citation, numbers }];
    let (mut s, stats) = pipeline::try_settle_all(&claims, catalog, registry, engine, options)?;
    let settlement = s.pop().unwrap_or_else(|| Settlement::unverifiable(vec!["nothing was settled".into()]));
    Ok((settlement, stats))
}

/// The text report of one verified citation: the file, the settlement in full, and which data
/// layer answered.
pub fn text(
    file: &str,
    settlement: &Settlement,
    style: report::text::Style,
    data_layer: &DataLayer,
) -> String {
    let e = report::escape::for_terminal;
    format!(
        "recite verify {}\n\n{}\n{}\n",
        e(file),
        report::text::settlement(settlement, style),
        e(&data_layer.line())
    )
}

/// The report of one verified citation: one input, `file`, holding its one claim (the JSON
/// report `recite check --format json` writes, in the same shape).
pub fn report(file: &str, settlement: Settlement, stats: ScanStats, data_layer: DataLayer) -> Report {
    // The numbers claimed: those compared with a measure, and those that could not be.
    let numbers =
        settlement.measures.iter().map(|m| m.claims.len()).sum::<usize>() + settlement.not_compared.len();
    let coverage = report::Coverage::of_claim(
        report::ClaimParts { result: numbers > 0, citation: true, numbers },
        &settlement,
    );
    let input = Input {
        coverage,
        answers: Vec::new(),
        file: file.to_string(),
        format: Some(Format::Plain),
        claims: vec![ClaimReport {
            locator: Locator { file: file.to_string(), ..Locator::default() },
            settlement,
        }],
        findings: Vec::new(),
        moca: Vec::new(),
        turns: Vec::new(),
    };
    let mut report = Report::new(vec![input], stats);
    report.data_layer = Some(data_layer);
    report
}

/// The citation and result of `v`: a pair read as `check` reads it ([`plain::read_value`]), or
/// a bare citation. `Err` (settled INVALID) when the pair cites nothing, or more than one
/// citation (verify settles one; `check` settles them all).
fn split_pair(file: &str, v: Value) -> Result<(Value, Option<Value>), NotOnePair> {
    if !plain::is_pair(&v) {
        return Ok((v, None));
    }
    let doc = plain::read_value(file, &v);
    let mut cited: Vec<_> = doc.items.into_iter().filter(|i| i.citation.is_some()).collect();
    match cited.len() {
        1 => {
            let item = cited.remove(0);
            Ok((item.citation.unwrap_or(Value::Null), item.result))
        }
        0 => Err(NotOnePair::NoCitation),
        n => Err(NotOnePair::Several(n)),
    }
}

/// A pair of result and citations that does not hold exactly one citation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum NotOnePair {
    /// No citation beside the result.
    #[error("no citation: the object has no \"citation\" beside its result")]
    NoCitation,
    /// More than one: verify settles one.
    #[error("{0} citations: verify settles one (recite check settles them all)")]
    Several(usize),
}
