//! `recite generate`: make the synthetic Versant Mega Tracker at any size.

const USAGE: &str = "\
Examples:
  recite generate versant --output datasets/versant                the bundled 50,000 rows
  recite generate versant --rows 1000000 --extra-questions 160 --output /tmp/versant-1m
  recite generate claims --data /tmp/versant-1m --count 10000 --wrong 0.1 --output claims.jsonl

`versant` writes versant_flat.parquet (zstd, several row groups) and its study.toml. The same
spec and seed always give the same file: rows are a pure function of (seed, row index), drawn
from a documented SplitMix64, and weights are raked (iterative proportional fitting) per wave.

`claims` writes JSON lines of {result, citation} over a study: funnel, recommendation and
satisfaction columns, every period, two bases, several extractors; the true values computed by
recite, a known share made wrong.";

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;

use recite::claimset::{ClaimSpec, generate};
use recite::synth::{DEFAULT_SEED, FILE_NAME, VersantSpec, write_versant};

/// Generate data and claim sets: the Versant tracker at any size, claims over it.
#[derive(Debug, clap::Subcommand)]
#[command(after_help = USAGE)]
pub enum Command {
    /// The synthetic Versant Mega Tracker (Parquet + study.toml) at any size.
    Versant(VersantArgs),
    /// A claim set (JSON lines of {result, citation}) with a known share of wrong claims.
    Claims(ClaimArgs),
}

/// `recite generate claims`.
#[derive(Debug, clap::Args)]
pub struct ClaimArgs {
    /// The study to cite (name or alias).
    #[arg(long, default_value = "Versant Mega Tracker")]
    study: String,
    /// How many claims.
    #[arg(long, default_value_t = 1000)]
    count: usize,
    /// Share of claims made wrong on purpose (0 to 1).
    #[arg(long, default_value_t = 0.1)]
    wrong: f64,
    /// The seed.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    #[command(flatten)]
    output: super::OutputArgs,
    #[command(flatten)]
    data: super::DataArgs,
    #[command(flatten)]
    engine: super::EngineArgs,
}

/// `recite generate versant`.
#[derive(Debug, clap::Args)]
pub struct VersantArgs {
    /// Output folder (created if missing). `--out` is the older spelling.
    #[arg(long = "output", short, alias = "out", value_name = "DIR")]
    out: PathBuf,
    /// Respondents (rows), split evenly across waves.
    #[arg(long, default_value_t = 50_000)]
    rows: usize,
    /// Monthly waves from November 2025.
    #[arg(long, default_value_t = 8)]
    waves: usize,
    /// Brands (brand 5 is Versant).
    #[arg(long, default_value_t = 12)]
    brands: usize,
    /// Extra attitude columns q40r1… (agreement 1-5), for wide tables.
    #[arg(long, default_value_t = 0)]
    extra_questions: usize,
    /// Rows per Parquet row group.
    #[arg(long, default_value_t = 10_000)]
    row_group_size: usize,
    /// The seed.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
}

/// Runs `recite generate …`.
pub fn run(c: Command) -> Result<ExitCode> {
    match c {
        Command::Versant(a) => versant(a),
        Command::Claims(a) => claims(a),
    }
}

fn claims(a: ClaimArgs) -> Result<ExitCode> {
    if !(0.0..=1.0).contains(&a.wrong) {
        anyhow::bail!("--wrong must be between 0 and 1, not {}", a.wrong);
    }
    let catalog = a.data.catalog()?;
    let registry = a.data.registry()?;
    let engine = a.engine.engine()?;
    let spec = ClaimSpec { study: a.study, count: a.count, wrong: a.wrong, seed: a.seed };
    let made = generate(&spec, &catalog, &registry, &engine)?;
    let mut text = String::new();
    for c in &made {
        text.push_str(&serde_json::to_string(&c.line)?);
        text.push('\n');
    }
    a.output.write(&text, &[])?;
    let wrong = made.iter().filter(|c| c.wrong).count();
    super::warn(&format!("{} claims, {wrong} made wrong", made.len()));
    Ok(ExitCode::SUCCESS)
}

fn versant(a: VersantArgs) -> Result<ExitCode> {
    let spec = VersantSpec {
        respondents: a.rows,
        waves: a.waves,
        brands: a.brands,
        seed: a.seed,
        extra_questions: a.extra_questions,
        row_group_size: a.row_group_size,
    };
    let started = Instant::now();
    write_versant(&spec, &a.out)?;
    let path = a.out.join(FILE_NAME);
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    super::warn(&format!(
        "wrote {} ({bytes} bytes) and study.toml in {:.1?}",
        path.display(),
        started.elapsed()
    ));
    Ok(ExitCode::SUCCESS)
}
