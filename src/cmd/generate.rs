//! `recite generate`: make the synthetic Versant Mega Tracker at any size.

const USAGE: &str = "\
Examples:
  recite generate --out datasets/versant                       the bundled 50,000 rows
  recite generate --rows 1000000 --extra-questions 150 --out /tmp/versant-1m
  recite generate --rows 5000000 --row-group-size 250000 --out /tmp/versant-5m

Writes versant_flat.parquet (zstd, several row groups) and its study.toml. The same spec and
seed always give the same file: rows are a pure function of (seed, row index), drawn from a
documented SplitMix64, and weights are raked (iterative proportional fitting) per wave.";

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;

use recite::synth::{DEFAULT_SEED, FILE_NAME, VersantSpec, write_versant};

/// Generate the synthetic Versant Mega Tracker (Parquet + study.toml) at any size.
#[derive(Debug, clap::Args)]
#[command(after_help = USAGE)]
pub struct Args {
    /// Output folder (created if missing).
    #[arg(long, value_name = "DIR")]
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

/// Runs `recite generate`.
pub fn run(a: Args) -> Result<ExitCode> {
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
    eprintln!("wrote {} ({bytes} bytes) and study.toml in {:.1?}", path.display(), started.elapsed());
    Ok(ExitCode::SUCCESS)
}
