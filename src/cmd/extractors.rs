//! `recite extractors`: list the registered extractor functions and what they compute.

const USAGE: &str = "\
Extractors are declared as data in extractors/*.toml (bundled) and in --extractors DIR.
Each is a list of measures over the base rows: share(pred), mean, ratio(num, den),
difference(a, b) × scale, count, total. See docs/extractors.md to write your own.";

use std::process::ExitCode;

use anyhow::Result;

use super::DataArgs;
use recite::extractor::Each;

/// List the registered extractor functions and what they compute.
#[derive(Debug, clap::Args)]
#[command(after_help = USAGE)]
pub struct Args {
    #[command(flatten)]
    data: DataArgs,
}

/// Runs `recite extractors`.
pub fn run(a: Args) -> Result<ExitCode> {
    let reg = a.data.registry()?;
    let mut out = String::new();
    for e in &reg.extractors {
        out.push_str(&format!("{}\n  {}\n", e.name, e.summary));
        for m in &e.measures {
            let each = match m.each {
                Some(Each::Code) => " (for each labelled code)",
                Some(Each::Stage) => " (for each stage above the lowest)",
                Some(Each::Step) => " (for each pair of adjacent stages)",
                None => "",
            };
            let what = if let Some(p) = &m.share {
                format!("share where {p}")
            } else if let Some([n, d]) = &m.ratio {
                format!("ratio of {n} to {d}")
            } else if let Some([x, y]) = &m.difference {
                format!("{} × ({x} − {y})", m.scale.unwrap_or(1.0))
            } else if m.mean.is_some() {
                "weighted mean of x".into()
            } else if m.total.is_some() {
                "weighted total of x".into()
            } else {
                "weighted count".into()
            };
            out.push_str(&format!("    {:<28} {what}{each}\n", m.name));
        }
        out.push_str(&format!("  from {}\n\n", e.file));
    }
    super::write_output(None, &out)?;
    Ok(ExitCode::SUCCESS)
}
