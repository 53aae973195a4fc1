//! `recite verify`: re-execute one citation and settle it.

const USAGE: &str = "\
Examples:
  recite verify examples/citations/versant-w6-considered.json
  recite verify citation.json --claim Considered=44%
  recite verify citation.json --claim 0.44 --claim Aware=67%
  recite verify citation.json --result tool-result.json --format json
  cat citation.json | recite verify -

CITATION is an Upperhand citation (the data of an application/vnd.upperhand.citations+json
Part), or an object {\"citation\": …, \"result\": …} pairing it with the tool result it
accompanies, read as `recite check` reads it (other keys beside them are allowed; a UTF-8
byte-order mark is skipped). The claimed numbers are the numeric leaves of the result (a leaf named after a
measure, e.g. \"Considered\", is compared with that measure; n/base_n with base n), or those
given with --claim. Each keeps its text: 44% claims a whole percent (±0.5pp), 0.440 three
decimals (±0.0005). Shares may be claimed as fractions or percents. base n must match exactly.

Verdicts: REPRODUCED, DISCREPANT, BASE_MISMATCH, UNVERIFIABLE (an unknown name, a missing
file or column), INVALID (the citation breaks the spec).
Exit status: 0 reproduced, 1 not reproduced, 2 usage or I/O error.";

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use serde_json::Value;

use recite::citation::Problem;
use recite::claim::{self, Claimed};
use recite::report::{self, ClaimReport, Input, Report};
use recite::settle::pipeline::{self, Claim, Options};
use recite::settle::{Settlement, Verdict};
use recite::stats::{DfRule, Interval};
use recite::transcript::{self, Format, Locator, plain};

use super::{Color, DataArgs};

/// Re-execute one citation and settle it: recomputed numbers, base, sampling error, verdict.
#[derive(Debug, clap::Args)]
#[command(after_help = USAGE)]
pub struct Args {
    /// The citation file (JSON), or - for standard input.
    #[arg(value_name = "CITATION")]
    citation: String,
    /// A claimed number: VALUE (matched to the measure it reproduces, else the nearest) or
    /// MEASURE=VALUE. Repeatable. Replaces the numbers of the citation file's result.
    #[arg(long, value_name = "[MEASURE=]VALUE")]
    claim: Vec<String>,
    /// A JSON file holding the tool result the citation accompanies; its numeric leaves are the
    /// claimed numbers.
    #[arg(long, value_name = "RESULT.json", conflicts_with = "claim")]
    result: Option<PathBuf>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = VerifyFormat::Text)]
    format: VerifyFormat,
    /// Interval method for shares and conversions.
    #[arg(long, value_enum, default_value_t = Interval::Logit)]
    interval: Interval,
    /// Degrees of freedom with a declared design: the PSUs and strata holding each measure's
    /// domain (as R's `degf(subset(design, …))`), or every PSU of the table.
    #[arg(long, value_enum, default_value_t = DfRule::Domain)]
    df: DfRule,
    /// Do not look for what a claim not reproduced most likely computed instead (unweighted,
    /// adjacent period, sibling column, other base…); saves one scan per such table.
    #[arg(long)]
    no_explain: bool,
    /// Write the report to FILE (atomically) instead of standard output. FILE may not be the
    /// citation or result file, a folder, a FIFO or a device.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// When to colour the text report.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    cache: super::cache::CacheArgs,
}

/// The report formats of `verify`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum VerifyFormat {
    /// For a person at a terminal.
    Text,
    /// The JSON report (same shape as `recite check --format json`).
    Json,
}

/// Runs `recite verify`.
pub fn run(a: Args) -> Result<ExitCode> {
    let mut read = vec![a.citation.as_str()];
    if let Some(r) = &a.result {
        read.extend(r.to_str());
    }
    let identities = super::files::identities(read);
    if let Some(o) = &a.output {
        super::files::check_output(o, &identities)?;
    }
    let bytes = super::read_input(&a.citation)?;
    let mut claimed: Vec<Claimed> = Vec::new();
    for c in &a.claim {
        claimed.push(claim::parse_arg(c).map_err(anyhow::Error::msg)?);
    }
    if let Some(path) = &a.result {
        let bytes = super::read_input(&path.to_string_lossy())?;
        let text =
            String::from_utf8(bytes).map_err(|e| anyhow::anyhow!("{}: not UTF-8: {e}", path.display()))?;
        let v: Value = serde_json::from_str(transcript::strip_bom(&text))
            .map_err(|e| anyhow::anyhow!("{}: not valid JSON: {e}", path.display()))?;
        claimed = claim::leaves(&v);
    }
    let data_layer = a.data.data_layer();
    let catalog = a.data.catalog()?;
    let registry = a.data.registry()?;
    let mut stats = Default::default();
    let parsed = match std::str::from_utf8(&bytes) {
        Err(e) => Err(format!("not UTF-8: {e}")),
        Ok(text) => serde_json::from_str::<Value>(transcript::strip_bom(text))
            .map_err(|e| format!("not valid JSON: {e}"))
            .and_then(|v| split_pair(&a.citation, v)),
    };
    let settlement = match parsed {
        Err(message) => Settlement::invalid(vec![Problem { pointer: String::new(), message }]),
        Ok((citation, result)) => {
            if a.claim.is_empty() && a.result.is_none() {
                claimed = result.as_ref().map(claim::leaves).unwrap_or_default();
            }
            let engine = a.cache.engine()?;
            let claims = [Claim { citation, numbers: claimed }];
            let (mut s, st) = pipeline::try_settle_all(
                &claims,
                &catalog,
                &registry,
                &engine,
                Options { interval: a.interval, df: a.df, explain: !a.no_explain },
            )?;
            stats = st;
            s.pop().unwrap_or_else(|| Settlement::unverifiable(vec!["nothing was settled".into()]))
        }
    };
    let verdict = settlement.verdict;
    let text = match a.format {
        VerifyFormat::Text => {
            let style = report::text::Style { color: a.color.enabled() && a.output.is_none() };
            let e = report::escape::for_terminal;
            format!(
                "recite verify {}\n\n{}\n{}\n",
                e(&a.citation),
                report::text::settlement(&settlement, style),
                e(&data_layer.line())
            )
        }
        VerifyFormat::Json => {
            let input = Input {
                answers: Vec::new(),
                file: a.citation.clone(),
                format: Some(Format::Plain),
                claims: vec![ClaimReport {
                    locator: Locator { file: a.citation.clone(), ..Locator::default() },
                    settlement,
                }],
                findings: Vec::new(),
                moca: Vec::new(),
                turns: Vec::new(),
            };
            let mut report = Report::new(vec![input], stats);
            report.data_layer = Some(data_layer);
            report::json::render(&report)
        }
    };
    super::write_report(a.output.as_deref(), &text, &identities)?;
    if verdict == Verdict::Reproduced { Ok(ExitCode::SUCCESS) } else { Ok(ExitCode::from(1)) }
}

/// The citation and result of `v`: a pair read as `check` reads it ([`plain::read_value`]), or
/// a bare citation. `Err` (settled INVALID) when the pair cites nothing, or more than one
/// citation (verify settles one; `check` settles them all).
fn split_pair(file: &str, v: Value) -> Result<(Value, Option<Value>), String> {
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
        0 => Err("no citation: the object has no \"citation\" beside its result".to_string()),
        n => Err(format!("{n} citations: verify settles one (recite check settles them all)")),
    }
}
