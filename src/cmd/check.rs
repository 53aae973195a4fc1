//! `recite check`: verify every cited number in transcripts, in one pass over the data.

const USAGE: &str = "\
Examples:
  recite check examples/transcripts/
  recite check run.sse agent.json --format html --output report.html
  recite check 'logs/**/*.jsonl' --format junit --output recite.xml
  recite check transcript.json --format json --timings
  cat run.sse | recite check -

Inputs are files, folders (read recursively: .json .jsonl .ndjson .sse .txt .log), globs, or -
for standard input. Only regular files are read: a FIFO, socket or device, a symbolic link loop,
a file over --max-input-size or one that cannot be read is a finding for itself alone.
Each input reports at most its first 100 findings, then one that counts the rest. The format of each is detected from its content: A2A v0.3 and v1.0 (Task,
Message, JSON-RPC responses, SSE streams), AG-UI event logs (SSE, JSON lines, JSON arrays,
{name, stream} fixtures), or plain JSON / JSON lines of {result, citation}.

Every claim on one table is computed in one scan of that table, tables in parallel. AG-UI logs
are also checked against the AG-UI stream rules and the MOCA citations rules (moca.citations
events). An unreadable file or a malformed item is a finding; the rest of the batch still runs.

Exit status: 0 when nothing counts as a failure, 1 when something does (see --fail-on),
2 on usage or I/O errors (such as no input at all).";

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rayon::prelude::*;

use recite::answers;
use recite::claim;
use recite::report::{self, ClaimReport, Input, Report};
use recite::settle::Settlement;
use recite::settle::pipeline::{self, Claim};
use recite::transcript::{self, Document, Finding, Level, Locator, RULE_CONFORMANCE};

use super::fail_on::{FailOn, FailOnList, ListParser};
use super::files::{self, Source};
use super::{DataArgs, ReportArgs, SettleArgs};

/// Verify every cited number in transcripts: A2A, AG-UI, JSON lines; text, JSON, Markdown,
/// HTML or JUnit report.
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
    /// Inputs larger than this are not read (a finding says so). Bytes, or with KiB, MiB, GiB.
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = files::parse_size)]
    max_input_size: u64,
    /// What makes the exit status 1: verdicts, finding levels and answer statuses, in a
    /// comma-separated list (repeatable).
    #[arg(
        long,
        value_name = "LIST",
        value_parser = ListParser,
        default_value = "invalid,unverifiable,discrepant,base-mismatch,must"
    )]
    fail_on: Vec<FailOnList>,
    /// Add how long each phase took to the report (JSON: `timings`; breaks byte-identity).
    #[arg(long)]
    timings: bool,
    #[command(flatten)]
    settle: SettleArgs,
    /// A JSON Schema (e.g. citation-record.schema.json) every MOCA citation record must pass.
    #[arg(long, value_name = "FILE")]
    record_schema: Option<PathBuf>,
    /// Report only the answer-text audit: every number of each agent answer and its status.
    #[arg(long)]
    answers_only: bool,
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    cache: super::cache::CacheArgs,
}

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Grouped by input, one line per claim, details for claims not reproduced.
    Text,
    /// The reference report (schema: docs/report.schema.json).
    Json,
    /// For pasting into a ticket.
    Markdown,
    /// One self-contained page: the conversation with a verdict beside every cited number.
    Html,
    /// One testcase per claim, for CI systems.
    Junit,
}

/// A progress line on stderr, shown only on a terminal and only once a run passes a second.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    started: Instant,
}

impl Progress {
    fn new() -> Progress {
        Progress { bar: None, started: Instant::now() }
    }

    fn phase(&mut self, msg: &str) {
        use std::io::IsTerminal;
        if self.bar.is_none()
            && self.started.elapsed() > Duration::from_secs(1)
            && std::io::stderr().is_terminal()
        {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(120));
            self.bar = Some(bar);
        }
        if let Some(b) = &self.bar {
            b.set_message(msg.to_string());
        }
    }

    fn finish(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}

/// Runs `recite check`.
pub fn run(a: Args) -> Result<ExitCode> {
    let fail: Vec<FailOn> = a.fail_on.into_iter().flat_map(|l| l.0).collect();
    let sources = files::expand_inputs(&a.inputs)?;
    let identities = files::identities(sources.iter().map(Source::path));
    a.report.to.check(&identities)?;
    let data_layer = a.data.data_layer();
    let catalog = a.data.catalog()?;
    let registry = a.data.registry()?;
    let record_schema = match &a.record_schema {
        None => None,
        Some(p) => {
            let bytes = super::read_input(&p.to_string_lossy())?;
            let text = String::from_utf8(bytes).with_context(|| format!("{}: not UTF-8", p.display()))?;
            let v: serde_json::Value =
                serde_json::from_str(&text).with_context(|| format!("{}: not valid JSON", p.display()))?;
            Some(
                jsonschema::validator_for(&v)
                    .map_err(|e| anyhow::anyhow!("{}: not a usable JSON Schema: {e}", p.display()))?,
            )
        }
    };
    let mut progress = Progress::new();
    let mut timings = BTreeMap::new();
    let t0 = Instant::now();
    progress.phase(&format!("reading {} input(s)", sources.len()));
    let max = a.max_input_size;
    let stdin = if sources.iter().any(|s| s.path() == "-") { Some(files::read_stdin(max)) } else { None };
    let docs: Vec<(String, Result<Document, files::Refusal>)> = sources
        .par_iter()
        .map(|s| match s {
            Source::Refused { path, rule, message } => (path.clone(), Err((*rule, message.clone()))),
            Source::File(f) => {
                let bytes = if f == "-" {
                    stdin.clone().unwrap_or_else(|| Ok(Vec::new()))
                } else {
                    files::read_file(f, max)
                };
                (f.clone(), bytes.map(|b| transcript::read_bytes(f, &b)))
            }
        })
        .collect();
    timings.insert("read_ms".to_string(), ms(t0));
    let t1 = Instant::now();
    progress.phase("checking AG-UI streams and MOCA citations");
    let mocas: Vec<Option<recite::moca::MocaReport>> = docs
        .par_iter()
        .map(|(_, d)| match d {
            Ok(d) if d.format == transcript::Format::Agui => {
                Some(recite::moca::check(d, record_schema.as_ref()))
            }
            _ => None,
        })
        .collect();
    timings.insert("moca_ms".to_string(), ms(t1));
    // Every item of every document becomes one claim to settle, in document order.
    let mut claims = Vec::new();
    let mut owners = Vec::new();
    for (di, (_, d)) in docs.iter().enumerate() {
        let Ok(d) = d else { continue };
        for (ii, item) in d.items.iter().enumerate() {
            if let Some(c) = &item.citation {
                claims.push(Claim {
                    citation: c.clone(),
                    numbers: item.result.as_ref().map(claim::leaves).unwrap_or_default(),
                });
                owners.push((di, ii));
            }
        }
    }
    let t2 = Instant::now();
    progress.phase(&format!("settling {} claim(s)", claims.len()));
    let engine = a.cache.engine()?;
    let (settlements, stats) =
        pipeline::try_settle_all(&claims, &catalog, &registry, &engine, a.settle.options())?;
    timings.insert("settle_ms".to_string(), ms(t2));
    let t3 = Instant::now();
    let mut by_item: BTreeMap<(usize, usize), Settlement> = owners.into_iter().zip(settlements).collect();
    let inputs: Vec<Input> = docs
        .into_iter()
        .zip(mocas)
        .enumerate()
        .map(|(di, ((file, d), moca))| match d {
            Err((rule, message)) => Input {
                file: file.clone(),
                format: None,
                claims: Vec::new(),
                findings: vec![Finding::new(Locator::at(&file, ""), rule, Level::Must, message)],
                moca: Vec::new(),
                answers: Vec::new(),
                turns: Vec::new(),
            },
            Ok(d) => {
                let claims: Vec<ClaimReport> = d
                    .items
                    .iter()
                    .enumerate()
                    .map(|(ii, item)| ClaimReport {
                        locator: item.locator.clone(),
                        settlement: by_item.remove(&(di, ii)).unwrap_or_else(uncited),
                    })
                    .collect();
                let answers = audit_answers(&d, &claims, moca.as_ref());
                let mut findings = d.findings;
                let mut moca_events = Vec::new();
                if let Some(m) = moca {
                    findings.extend(m.findings);
                    moca_events = m.events;
                }
                transcript::cap_findings(&mut findings, &file);
                Input {
                    file,
                    format: Some(d.format),
                    claims,
                    findings,
                    moca: moca_events,
                    answers,
                    turns: d.turns,
                }
            }
        })
        .collect();
    let mut report = Report::new(inputs, stats);
    report.data_layer = Some(data_layer);
    if a.timings {
        timings.insert("report_ms".to_string(), ms(t3));
        timings.insert("total_ms".to_string(), ms(t0));
        report.timings = Some(timings);
    }
    progress.phase("writing the report");
    let text = match a.format {
        _ if a.answers_only => answers_only(&report, a.format),
        Format::Text => report::text::render(&report, report::text::Style { color: a.report.colored() }),
        Format::Json => report::json::render(&report),
        Format::Markdown => report::markdown::render(&report),
        Format::Html => report::html::render(&report),
        Format::Junit => report::junit::render(&report),
    };
    a.report.to.write(&text, &identities)?;
    progress.finish();
    let failed = FailOn::any(&fail, &report);
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The answer-text audit of one document: its agent turns' numbers traced to its claims.
/// An assistant message that `moca.citations` events cite records for is also traced to the
/// numbers of those records.
fn audit_answers(
    d: &Document,
    claims: &[ClaimReport],
    moca: Option<&recite::moca::MocaReport>,
) -> Vec<recite::answers::Answer> {
    let sources: Vec<Vec<answers::Source>> = d
        .items
        .iter()
        .zip(claims)
        .enumerate()
        .map(|(i, (item, c))| {
            let leaves = item.result.as_ref().map(claim::leaves).unwrap_or_default();
            let n = item
                .citation
                .as_ref()
                .and_then(|c| c.pointer("/base/n"))
                // An INVALID citation may state n as a string: the answer may still repeat it.
                .and_then(|v| v.as_u64().or_else(|| v.as_str().and_then(claim::exact_count)));
            answers::sources(i, &c.settlement, &leaves, n)
        })
        .collect();
    let mut cited: std::collections::HashMap<String, Vec<answers::Source>> = Default::default();
    for ev in moca.iter().flat_map(|m| &m.events) {
        if let Some(id) = &ev.message_id {
            cited.entry(id.clone()).or_default().extend(answers::record_sources(ev));
        }
    }
    answers::audit_cited(&d.turns, &sources, &cited)
}

/// The answer audit alone: the text section, or just the answers as JSON.
fn answers_only(report: &Report, format: Format) -> String {
    if format == Format::Json {
        let answers: Vec<serde_json::Value> =
            report.inputs.iter().map(|i| serde_json::json!({"file": i.file, "answers": i.answers})).collect();
        let mut v = serde_json::json!({"answer_numbers": report.summary.answer_numbers, "inputs": answers});
        report::json::cap_strings(&mut v);
        return serde_json::to_string_pretty(&v).unwrap_or_default() + "\n";
    }
    let mut o = String::new();
    for input in &report.inputs {
        o.push_str(&report::escape::for_terminal(&input.file));
        o.push('\n');
        if input.answers.is_empty() {
            o.push_str("  no agent answer states a number\n");
        }
        answers::render::text(&mut o, &input.answers);
    }
    o
}

/// The settlement of a quantitative result that came without a citation.
fn uncited() -> Settlement {
    Settlement::invalid(vec![recite::citation::Problem {
        pointer: String::new(),
        message: format!(
            "a quantitative result without a citation Part ({RULE_CONFORMANCE}): nothing to re-run"
        ),
    }])
}

fn ms(t: Instant) -> f64 {
    (t.elapsed().as_secs_f64() * 1000.0 * 10.0).round() / 10.0
}
