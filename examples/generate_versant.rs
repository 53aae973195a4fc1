//! Generates the Versant Mega Tracker (`versant_flat.parquet` + `study.toml`) and prints a summary.
//!
//! The committed dataset: `cargo run --example generate_versant -- --rows 50000 --out datasets/versant`

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::Parser;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::{ParquetReadOptions, SessionContext};
use recite::synth::{DEFAULT_SEED, FILE_NAME, TABLE_NAME, VersantSpec, write_versant};

/// Generate the synthetic Versant Mega Tracker.
#[derive(Parser)]
struct Args {
    /// Total respondents (rows), split evenly across waves.
    #[arg(long, default_value_t = 50_000)]
    rows: usize,
    /// Output folder (created if missing).
    #[arg(long, default_value = "datasets/versant")]
    out: PathBuf,
    /// Random seed.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Monthly waves from November 2025.
    #[arg(long, default_value_t = 8)]
    waves: usize,
    /// Brands (brand 5 is Versant).
    #[arg(long, default_value_t = 12)]
    brands: usize,
    /// Extra attitude columns q40r1… (for wide benchmark tables).
    #[arg(long, default_value_t = 0)]
    extra_questions: usize,
    /// Rows per Parquet row group.
    #[arg(long, default_value_t = 10_000)]
    row_group_size: usize,
    /// Skip the summary queries.
    #[arg(long)]
    quiet: bool,
}

fn main() -> Result<()> {
    let a = Args::parse();
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
    let bytes = std::fs::metadata(&path)?.len();
    println!("wrote {} ({bytes} bytes) in {:.1?}", path.display(), started.elapsed());
    if a.quiet {
        return Ok(());
    }

    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let ctx = SessionContext::new();
        ctx.register_parquet(TABLE_NAME, path.to_string_lossy().as_ref(), ParquetReadOptions::default())
            .await?;
        // Versant (s14r5): aware base, the 65-74 aware cell, and consideration among the aware.
        let sql = "SELECT wave, COUNT(*) AS n, \
             SUM(CASE WHEN s14r5 >= 1 THEN 1 ELSE 0 END) AS aware_n, \
             SUM(CASE WHEN s14r5 >= 1 AND age BETWEEN 65 AND 74 THEN 1 ELSE 0 END) AS aware_65_74_n, \
             SUM(CASE WHEN s14r5 >= 1 THEN main_weight END) / SUM(main_weight) AS aware_w, \
             SUM(CASE WHEN s14r5 >= 3 THEN main_weight END) \
               / SUM(CASE WHEN s14r5 >= 1 THEN main_weight END) AS considered_of_aware_w, \
             SUM(CASE WHEN s14r5 >= 3 THEN 1.0 END) \
               / SUM(CASE WHEN s14r5 >= 1 THEN 1.0 END) AS considered_of_aware_unw \
             FROM versant_flat WHERE age BETWEEN 18 AND 74 GROUP BY wave ORDER BY wave";
        let batches = ctx.sql(sql).await?.collect().await?;
        println!("{}", pretty_format_batches(&batches)?);
        anyhow::Ok(())
    })
}
