//! Reports: text, JSON, JSON lines, Markdown, HTML or JUnit, each a [`stream::Writer`] fed
//! claim by claim as a run settles them; a [`Report`] value is what a small run (`verify`,
//! tests) holds whole and feeds through the same writers.
//!
//! The report knows settlements and findings, nothing of how they were computed. JSON is the
//! reference form: stable field names, a committed JSON Schema (`docs/report.schema.json`,
//! generated from these types), byte-identical for the same inputs.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::input::{Finding, Format, Locator, Turn};
use crate::moca::MocaEvent;
use crate::settle::{ScanStats, Settlement, Verdict};

pub mod answers;
pub mod answers_only;
pub mod chart;
mod direct;
pub mod escape;
pub mod html;
pub mod json;
pub mod jsonl;
pub mod junit;
pub mod markdown;
pub mod round;
pub mod stream;
pub mod text;
pub mod typed;

/// Σw as the text and HTML reports show it: one decimal from 1 up (as always), and below 1 at
/// least four significant digits, so weights normalised to sum to 1 never show 0.0.
pub fn weight_total(v: f64) -> String {
    if v > 0.0 && v < 1e-4 {
        format!("{v:.3e}")
    } else if v > 0.0 && v < 1.0 {
        let decimals = (3.0 - v.log10().floor()) as usize;
        format!("{v:.decimals$}")
    } else {
        format!("{v:.1}")
    }
}

/// The version of the JSON report's shape; bumped on any incompatible change.
pub const REPORT_VERSION: u32 = 2;

/// Everything one run settled.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Report {
    /// The shape version of this report.
    pub report_version: u32,
    /// The recite version that wrote it.
    pub recite: String,
    /// The data layer that answered: where it is and how it was chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_layer: Option<DataLayer>,
    /// Counts by verdict, and of findings.
    pub summary: Summary,
    /// What the run read.
    pub stats: ScanStats,
    /// Phase timings in milliseconds, only with `--timings` (they would break byte-identity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings: Option<BTreeMap<String, f64>>,
    /// One entry per input, in the order given.
    pub inputs: Vec<Input>,
}

/// The data layer a run used, and how it was chosen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DataLayer {
    /// The folder of studies, as used.
    pub path: String,
    /// How it was chosen.
    pub source: DataSource,
    /// Set when this layer hides another one (a working-directory `./datasets` over the bundled
    /// data layer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// Where the data layer came from, in the order they are looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DataSource {
    /// `--data DIR`.
    Flag,
    /// The `RECITE_DATA` environment variable.
    Environment,
    /// `./datasets` in the working directory.
    WorkingDirectory,
    /// The datasets bundled with this build.
    Bundled,
}

impl DataSource {
    /// How it is said in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            DataSource::Flag => "--data",
            DataSource::Environment => "RECITE_DATA",
            DataSource::WorkingDirectory => "./datasets in the working directory",
            DataSource::Bundled => "bundled",
        }
    }
}

impl DataLayer {
    /// The data layer to use and how it was chosen: `flag` (`--data`), else `RECITE_DATA`, else
    /// a `./datasets` in the working directory, else `bundled` (the datasets bundled with the
    /// build). A working-directory layer that is not the bundled one carries a warning: it
    /// shadows the bundled layer.
    pub fn choose(flag: Option<&std::path::Path>, bundled: std::path::PathBuf) -> DataLayer {
        use std::path::{Path, PathBuf};
        let env = std::env::var_os("RECITE_DATA").filter(|v| !v.is_empty());
        let (path, source) = if let Some(d) = flag {
            (d.to_path_buf(), DataSource::Flag)
        } else if let Some(d) = env {
            (PathBuf::from(d), DataSource::Environment)
        } else {
            let here = Path::new("datasets");
            if here.join("versant").is_dir() || here.join("nhanes2").is_dir() {
                let here_abs = here.canonicalize().unwrap_or_else(|_| here.to_path_buf());
                match bundled.canonicalize() {
                    Ok(b) if b == here_abs => (bundled, DataSource::Bundled),
                    Ok(b) => {
                        let warning = format!(
                            "the data layer ./datasets in the working directory ({}) shadows the bundled one ({}); \
                             pass --data to choose",
                            here_abs.display(),
                            b.display()
                        );
                        return DataLayer {
                            path: here_abs.display().to_string(),
                            source: DataSource::WorkingDirectory,
                            warning: Some(warning),
                        };
                    }
                    Err(_) => (here_abs, DataSource::WorkingDirectory),
                }
            } else {
                (bundled, DataSource::Bundled)
            }
        };
        DataLayer { path: path.display().to_string(), source, warning: None }
    }

    /// One line for a report: `data layer: PATH (how chosen)`.
    pub fn line(&self) -> String {
        format!("data layer: {} ({})", self.path, self.source.as_str())
    }
}

/// Counts.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Summary {
    /// Claims settled.
    pub claims: usize,
    /// Claims per verdict (every verdict present, zeros included).
    pub verdicts: BTreeMap<Verdict, usize>,
    /// Findings over all inputs (conformance, stream, MOCA rules).
    pub findings: usize,
    /// Inputs that could not be read at all.
    pub unreadable_inputs: usize,
    /// Numbers stated in agent answers, per status (every status, when any answer was audited).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub answer_numbers: BTreeMap<crate::answers::Status, usize>,
    /// What the inputs held and how much of it was checked, over all inputs.
    pub coverage: Coverage,
}

/// What an input (or a run) held and how much of it was checked: "checked 3 of 5 cited
/// numbers" at a glance.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Coverage {
    /// Results found (quantitative tool results, cited or not).
    pub results: usize,
    /// Citations found.
    pub citations: usize,
    /// Claims with both a result and its citation.
    pub paired: usize,
    /// Numbers the results state.
    pub numbers: usize,
    /// Of those, the numbers beside a citation.
    pub cited_numbers: usize,
    /// Of those, the numbers compared with the data (a measure or the base n re-run): a number
    /// of a claim that is INVALID or UNVERIFIABLE, or that names no measure, is not.
    pub compared: usize,
}

/// What one claim's input holds, as [`Coverage::of_claim`] counts it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClaimParts {
    /// It has a tool result.
    pub result: bool,
    /// It has a citation.
    pub citation: bool,
    /// How many numbers its result states.
    pub numbers: usize,
}

impl Coverage {
    /// Adds another's counts.
    pub fn add(&mut self, o: &Coverage) {
        self.results += o.results;
        self.citations += o.citations;
        self.paired += o.paired;
        self.numbers += o.numbers;
        self.cited_numbers += o.cited_numbers;
        self.compared += o.compared;
    }

    /// One claim's counts: what its input holds (`parts`) and its settlement (which says which
    /// numbers were compared).
    pub fn of_claim(parts: ClaimParts, s: &Settlement) -> Coverage {
        let ClaimParts { result, citation, numbers } = parts;
        let rerun = matches!(s.verdict, Verdict::Reproduced | Verdict::Discrepant | Verdict::BaseMismatch);
        let cited_numbers = if citation { numbers } else { 0 };
        Coverage {
            results: usize::from(result),
            citations: usize::from(citation),
            paired: usize::from(result && citation),
            numbers,
            cited_numbers,
            compared: if rerun { cited_numbers.saturating_sub(s.not_compared.len()) } else { 0 },
        }
    }

    /// In words: `checked 3 of 5 cited numbers (2 results, 2 citations, 2 paired; 6 numbers)`.
    pub fn line(&self) -> String {
        let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        format!(
            "checked {} of {} ({}, {}, {} paired; {} stated)",
            self.compared,
            plural(self.cited_numbers, "cited number", "cited numbers"),
            plural(self.results, "result", "results"),
            plural(self.citations, "citation", "citations"),
            self.paired,
            plural(self.numbers, "number", "numbers"),
        )
    }
}

/// One input file.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Input {
    /// The file as named (`-` for standard input).
    pub file: String,
    /// The detected format; none when the file could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Format>,
    /// The claims, in document order.
    pub claims: Vec<ClaimReport>,
    /// Findings that are not about one claim's numbers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// The MOCA `moca.citations` events of an AG-UI log, as checked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moca: Vec<MocaEvent>,
    /// The agent answers, every stated number traced to the cited results (docs/answers.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<crate::answers::Answer>,
    /// What the input held and how much of it was checked.
    pub coverage: Coverage,
    /// The conversation (HTML report only; left out of JSON).
    #[serde(skip)]
    pub turns: Vec<Turn>,
}

/// One claim and its settlement.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ClaimReport {
    /// Where it was found.
    pub locator: Locator,
    /// The settlement.
    #[serde(flatten)]
    pub settlement: Settlement,
}

impl Report {
    /// A report over inputs, with the summary computed.
    pub fn new(inputs: Vec<Input>, stats: ScanStats) -> Report {
        let mut summary =
            Summary { verdicts: Verdict::ALL.iter().map(|v| (*v, 0)).collect(), ..Summary::default() };
        for input in &inputs {
            summary.claims += input.claims.len();
            summary.findings += input.findings.len();
            summary.coverage.add(&input.coverage);
            if input.format.is_none() {
                summary.unreadable_inputs += 1;
            }
            for c in &input.claims {
                *summary.verdicts.entry(c.settlement.verdict).or_default() += 1;
            }
            for n in input.answers.iter().flat_map(|a| &a.numbers) {
                if summary.answer_numbers.is_empty() {
                    summary.answer_numbers = crate::answers::Status::ALL.iter().map(|s| (*s, 0)).collect();
                }
                *summary.answer_numbers.entry(n.status).or_default() += 1;
            }
        }
        Report {
            report_version: REPORT_VERSION,
            recite: env!("CARGO_PKG_VERSION").to_string(),
            data_layer: None,
            summary,
            stats,
            timings: None,
            inputs,
        }
    }

    /// Every claim, with its input.
    pub fn claims(&self) -> impl Iterator<Item = (&Input, &ClaimReport)> {
        self.inputs.iter().flat_map(|i| i.claims.iter().map(move |c| (i, c)))
    }
}

/// The formats of a report (`recite check --format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// Grouped by input, one line per claim, details for claims not reproduced.
    Text,
    /// The reference report (schema: docs/report.schema.json).
    Json,
    /// A line per claim as it is settled, a line per input, a summary line last (for
    /// pipelines; schema: docs/report-lines.schema.json).
    Jsonl,
    /// For pasting into a ticket.
    Markdown,
    /// One self-contained page: the conversation with a verdict beside every cited number.
    Html,
    /// One testcase per claim, for CI systems.
    Junit,
}

/// How a report is written beyond its format: what [`writer`] takes, each field named, so no
/// caller passes a row of booleans.
#[derive(Debug, Clone, Default)]
pub struct WriterOptions {
    /// The answer-text audit alone (`recite check --answers-only`).
    pub answers_only: bool,
    /// ANSI colour in the text report.
    pub color: bool,
    /// The data layer the JUnit report names.
    pub layer: Option<DataLayer>,
}

/// The streaming writer of a report in `format` onto `out`, as `options` say.
pub fn writer(
    format: ReportFormat,
    options: WriterOptions,
    out: Box<dyn std::io::Write>,
) -> Box<dyn stream::Writer> {
    let WriterOptions { answers_only, color, layer } = options;
    match format {
        _ if answers_only => Box::new(answers_only::Writer::new(out, format == ReportFormat::Json)),
        ReportFormat::Text => Box::new(text::Writer::new(out, text::Style { color })),
        ReportFormat::Json => Box::new(json::Writer::new(out)),
        ReportFormat::Jsonl => Box::new(jsonl::Writer::new(out)),
        ReportFormat::Markdown => Box::new(markdown::Writer::new(out)),
        ReportFormat::Html => Box::new(html::Writer::new(out)),
        ReportFormat::Junit => Box::new(junit::Writer::new(out, layer)),
    }
}

/// [`writer`] onto a report [`Output`](stream::Output): the JSON report keeps a file output as
/// a file, so its body moves there in the kernel; the other formats take it as any writer.
pub fn writer_to(
    format: ReportFormat,
    options: WriterOptions,
    out: stream::Output,
) -> Box<dyn stream::Writer> {
    match out {
        out if format == ReportFormat::Json && !options.answers_only => Box::new(json::Writer::to(out)),
        stream::Output::Other(w) => writer(format, options, w),
        out => writer(format, options, Box::new(out)),
    }
}

#[cfg(test)]
mod tests {
    use super::weight_total;

    #[test]
    fn weight_totals_below_one_keep_four_significant_digits() {
        // From 1 up, one decimal as before (the bundled reports do not move).
        assert_eq!(weight_total(4654.04), "4654.0");
        assert_eq!(weight_total(1.0), "1.0");
        assert_eq!(weight_total(0.0), "0.0");
        // Below 1, never 0.0 for a positive total.
        assert_eq!(weight_total(0.5), "0.5000");
        assert_eq!(weight_total(0.046_547), "0.04655");
        assert_eq!(weight_total(0.000_465_47), "0.0004655");
        assert_eq!(weight_total(4.6547e-7), "4.655e-7");
        assert_eq!(weight_total(4.6547e-13), "4.655e-13");
    }
}
