//! `recite verify`: re-execute one citation and settle it ([`recite::verify`]).

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
decimals (±0.0005), 4.4e3 a whole unit as 4400 does. Numbers written as text may group thousands
(4,595, 4 595), carry $, € or £, and use any script's digits (٤٤%); they follow the dot
convention, as programs write (44.249 is a decimal, 4,595 a count), unless --decimal-mark comma
says otherwise. A value under a measure's name that is no number (\"NaN\", \"0x2C\") makes the
claim INVALID. Shares may be claimed as fractions or percents. base n must match exactly.

Verdicts: REPRODUCED, DISCREPANT, BASE_MISMATCH, UNVERIFIABLE (an unknown name, a missing
file or column), INVALID (the citation breaks the spec).
Exit status: 0 reproduced, 1 not reproduced, 2 usage or I/O error.";

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, anyhow};

use recite::settle::Verdict;
use recite::{report, verify};

use super::{DataArgs, ReportArgs, SettleArgs, TextOrJson};

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
    /// Report format (JSON: the report `recite check --format json` writes).
    #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
    format: TextOrJson,
    #[command(flatten)]
    settle: SettleArgs,
    #[command(flatten)]
    as_of: super::AsOfArgs,
    #[command(flatten)]
    report: ReportArgs,
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    cache: super::cache::CacheArgs,
    #[command(flatten)]
    engine: super::EngineArgs,
}

/// Runs `recite verify`.
pub fn run(a: Args) -> Result<ExitCode> {
    let result = a.result.as_ref().map(|r| r.to_string_lossy().into_owned());
    let identities =
        super::files::identities([Some(a.citation.as_str()), result.as_deref()].into_iter().flatten());
    a.report.to.check(&identities)?;
    let bytes = super::read_input(&a.citation)?;
    let result_bytes = result.as_deref().map(super::read_input).transpose()?;
    let claimed =
        verify::claimed(&a.claim, result_bytes.as_deref(), a.settle.decimal_mark).map_err(|e| match e {
            verify::ClaimedError::Result(e) => anyhow!("{}: {e}", result.unwrap_or_default()),
            e => anyhow!("{e}"),
        })?;
    let (data_layer, catalog, registry) = (a.data.data_layer(), a.data.catalog()?, a.data.registry()?);
    let engine = a.as_of.apply(a.cache.engine(&a.engine)?);
    let (settlement, stats) =
        verify::verify(&a.citation, &bytes, claimed, &catalog, &registry, &engine, a.settle.options())?;
    super::tell_placements(&engine);
    let verdict = settlement.verdict;
    let text = match a.format {
        TextOrJson::Text => {
            let style = report::text::Style { color: a.report.colored() };
            verify::text(&a.citation, &settlement, style, &data_layer)
        }
        TextOrJson::Json => report::json::render(&verify::report(&a.citation, settlement, stats, data_layer)),
    };
    a.report.to.write(&text, &identities)?;
    Ok(if verdict == Verdict::Reproduced { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
