//! `recite check`: verify every cited number in transcripts, in one pass over the data.

const USAGE: &str = "\
Examples:
  recite check examples/transcripts/
  recite check run.sse agent.json --format html --output report.html
  recite check 'logs/**/*.jsonl' --format junit --output recite.xml
  recite check transcript.json --format json --timings
  cat run.sse | recite check -
  recite check transcripts/ --engine ballista://sched.internal:50050   on a cluster (docs/cluster.md)
  recite check run.sse --rerun-of saved.json --pinned      on the Delta versions saved.json read
  recite check run.sse --rerun-of saved.json               on the latest: what moved, and why

Inputs are files, folders (read recursively: .json .jsonl .ndjson .sse .txt .log), globs, or -
for standard input. Only regular files are read: a FIFO, socket or device, a symbolic link loop,
an input read whole over --max-input-size (JSON lines of plain claims stream whatever their
size, a line over it refused with its number) or one that cannot be read is a finding for itself
alone.
Each input reports at most its first 100 findings, then one that counts the rest. The format of each is detected from its content: A2A v0.3 and v1.0 (Task,
Message, JSON-RPC responses, SSE streams), AG-UI event logs (SSE, JSON lines, JSON arrays,
{name, stream} fixtures), or plain JSON / JSON lines of {result, citation}.

Every claim on one table is computed in one scan of that table, tables in parallel. AG-UI logs
are also checked against the AG-UI stream rules and the MOCA citations rules (moca.citations
events). An unreadable file or a malformed item is a finding; the rest of the batch still runs.

Exit status: 0 when nothing counts as a failure, 1 when something does (see --fail-on),
2 on usage or I/O errors (such as no input at all), 5 when nothing was checked at all: no claim,
no moca.citations event and no number in an agent's answer in any input (--allow-empty makes
that 0, as pytest's exit 5 for \"no tests collected\").";

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use recite::check;
use recite::report;

use super::choices::{FailOnList, FormatArg as Format, ListParser};
use super::fail_on::FailOn;
use super::files;
use super::{DataArgs, Progress, ReportArgs, ReportOutput, SettleArgs};

/// Verify every cited number in transcripts: A2A, AG-UI, JSON lines; text, JSON, JSON lines,
/// Markdown, HTML or JUnit report.
#[derive(Debug, clap::Args)]
#[command(after_help = USAGE)]
pub struct Args {
    /// Files, folders, globs, or - for standard input.
    #[arg(value_name = "FILE", required = true)]
    inputs: Vec<String>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    report: ReportArgs,
    /// Inputs read whole (a transcript, a JSON document) larger than this are not read (a
    /// finding says so); JSON lines of plain claims stream whatever their size, each line at
    /// most this long. Bytes, or with KiB, MiB, GiB.
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = files::parse_size)]
    max_input_size: u64,
    /// What makes the exit status 1: verdicts, finding levels and answer statuses, in a
    /// comma-separated list (repeatable).
    #[arg(long, value_name = "LIST", value_parser = ListParser, default_value = recite::fail_on::DEFAULT)]
    fail_on: Vec<FailOnList>,
    /// Exit 0, not 5, when the inputs held nothing to check (no claim, no moca.citations event,
    /// no number in an agent's answer).
    #[arg(long)]
    allow_empty: bool,
    /// Add how long each phase took to the report (JSON: `timings`; breaks byte-identity).
    #[arg(long)]
    timings: bool,
    #[command(flatten)]
    settle: SettleArgs,
    /// Recompute each claimed measure on every period of its study (at most the 24 nearest the
    /// cited one) whatever the format: the JSON report then carries each claim's `series`. The
    /// HTML report does this unasked, to chart it.
    #[arg(long, conflicts_with = "no_series")]
    series: bool,
    /// Leave the chart of each claimed measure across the periods of its study out of the HTML
    /// report; saves reading the other periods' rows.
    #[arg(long)]
    no_series: bool,
    /// A JSON Schema (e.g. citation-record.schema.json) every MOCA citation record must pass.
    #[arg(long, value_name = "FILE")]
    record_schema: Option<PathBuf>,
    /// Report only the answer-text audit: every number of each agent answer and its status.
    #[arg(long)]
    answers_only: bool,
    /// Claims settled and written per chunk (memory; the report is the same for any).
    #[arg(long, value_name = "N", default_value_t = check::DEFAULT_CHUNK, hide = true)]
    chunk: usize,
    /// How grouped scans reduce their rows: `in-process` or `plan` (for benchmarks and tests;
    /// the report is the same byte for byte).
    #[arg(long, value_name = "HOW", env = "RECITE_REDUCTION", hide = true)]
    reduction: Option<recite::engine::Reduction>,
    #[command(flatten)]
    as_of: super::AsOfArgs,
    #[command(flatten)]
    rerun: super::RerunArgs,
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    cache: super::cache::CacheArgs,
    #[command(flatten)]
    engine: super::EngineArgs,
}

/// Runs `recite check`.
pub fn run(a: Args) -> Result<ExitCode> {
    let fail: Vec<FailOn> = a.fail_on.into_iter().flat_map(|l| l.0).collect();
    let sources = files::expand_inputs(&a.inputs)?;
    let identities = files::identities(sources.iter().map(files::Source::path));
    let out = ReportOutput::open(a.report.to.path(), &identities)?;
    let (catalog, registry) = (a.data.catalog()?, a.data.registry()?);
    let record_schema = a.record_schema.as_deref().map(super::json_schema).transpose()?;
    let stdin = files::StdinSpool::new(&sources, a.max_input_size)?;
    let (progress, max) = (Progress::new(), a.max_input_size);
    let opts = check::Options {
        settle: recite::settle::Options {
            series: a.series || (a.format == Format::Html && !a.answers_only && !a.no_series),
            ..a.settle.options()
        },
        chunk: a.chunk,
        max_input_size: max,
        held_bytes: check::HELD_BYTES,
        read: &|p| files::read_file(p, max),
        record_schema: record_schema.as_ref(),
        data_layer: Some(a.data.data_layer()),
        timings: a.timings,
        progress: &|m| progress.phase(m),
    };
    let (color, layer) = (a.report.colored(), opts.data_layer.clone());
    let options = report::WriterOptions { answers_only: a.answers_only, color, layer: layer.clone() };
    let mut w = report::writer_to(a.format.into(), options, out.output()?);
    // A re-run of a saved report writes its JSON beside the report asked for, to compare.
    let saved = a.rerun.saved()?;
    let captured = saved.as_ref().map(|_| super::Captured::default());
    if let Some(c) = &captured {
        let json = report::WriterOptions { layer, ..Default::default() };
        w = Box::new(report::stream::Tee(vec![
            w,
            report::writer(report::ReportFormat::Json, json, Box::new(c.clone())),
        ]));
    }
    let mut engine = a.as_of.apply(a.cache.engine(&a.engine)?);
    if let Some(r) = a.reduction {
        engine = engine.with_reduction(r);
    }
    let on_saved = saved
        .as_ref()
        .filter(|s| s.pinned)
        .map(|s| recite::saved::OnSaved { scan: &engine, saved: &s.versions });
    let scan: &dyn recite::scan::Scan = match &on_saved {
        Some(on) => on,
        None => &engine,
    };
    let ran = check::run(&stdin.sources(&sources), &catalog, &registry, scan, &opts, w.as_mut())?;
    super::tell_placements(&engine);
    drop(w);
    if let (Some(saved), Some(c)) = (&saved, &captured) {
        saved.tell(&c.json());
    }
    out.commit(&identities)?;
    progress.finish();
    Ok(if FailOn::any_in(&fail, &ran) {
        ExitCode::from(1)
    } else if ran.checked_nothing() && !a.allow_empty {
        eprintln!(
            "recite: nothing was checked (no claim, no moca.citations event, no answer number): exit 5; --allow-empty allows it"
        );
        ExitCode::from(EXIT_NOTHING_CHECKED)
    } else {
        ExitCode::SUCCESS
    })
}

/// The exit status of a run that checked nothing (pytest's "no tests collected").
pub const EXIT_NOTHING_CHECKED: u8 = 5;
