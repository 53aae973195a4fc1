//! `recite catalog check`, `show` and `init`: prove ([`recite::prove::prove()`]), list
//! ([`recite::catalog::show`]) and start the data layer.

const USAGE: &str = "\
Examples:
  recite catalog check                  prove every study under ./datasets
  recite catalog check --data my/data   … under another folder
  recite catalog show                   list the studies
  recite catalog show Versant           tables, columns, labels, periods, bases, weights
  recite catalog init survey.sav --output data/survey
                                        a starter study.toml from a data file, to confirm

The data layer is one study.toml per folder: see docs/catalog.md.";

use std::process::ExitCode;

use anyhow::Result;

use recite::catalog;
use recite::engine::Engine;

use super::DataArgs;

/// Prove or list the declared data layer (studies, tables, periods, bases, weights).
#[derive(Debug, clap::Subcommand)]
#[command(after_help = USAGE)]
pub enum Command {
    /// Load every study and prove it: files exist, declared columns and weights exist with the
    /// right types, every filter (period, base, breakdown cell) and weight runs on the data
    /// within the size limits, no name belongs to two studies. Exit 1 on any error.
    Check {
        #[command(flatten)]
        data: DataArgs,
        #[command(flatten)]
        engine: super::EngineArgs,
    },
    /// Write a starter study.toml from data files (.sav/.zsav, .parquet, .csv, .arrow): every
    /// column with its labels, codes and missing codes; a guessed wave column (a period per
    /// value) and weights, marked GUESS; an "All respondents" base; DECIDE comments where a
    /// human must choose. `recite catalog check` passes on it as written.
    Init {
        /// The data files: one table each.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<std::path::PathBuf>,
        /// The folder to write study.toml into (created if missing). `--out` is the older
        /// spelling.
        #[arg(long = "output", short, alias = "out", value_name = "DIR")]
        out: std::path::PathBuf,
        /// The study's name (default: the SPSS file label, else the file name).
        #[arg(long)]
        name: Option<String>,
        /// Replace an existing study.toml.
        #[arg(long)]
        force: bool,
    },
    /// List the studies, or one study in full.
    Show {
        /// A study name or alias.
        study: Option<String>,
        #[command(flatten)]
        data: DataArgs,
    },
}

/// Runs `recite catalog …`.
pub fn run(c: Command) -> Result<ExitCode> {
    match c {
        Command::Check { data, engine } => {
            let proof = recite::prove::prove(&data.catalog()?, &engine.engine()?);
            super::write_output(None, &recite::objstore::redact(&proof.render()))?;
            Ok(if proof.is_empty() || proof.errors() > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
        }
        Command::Show { study, data } => {
            let cat = data.catalog()?;
            let text = match study {
                None => catalog::show::summary(&cat),
                Some(name) => catalog::show::describe(cat.study(&name).map_err(|e| anyhow::anyhow!("{e}"))?),
            };
            super::write_output(None, &recite::objstore::redact(&text))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Init { files, out, name, force } => init(&files, &out, name.as_deref(), force),
    }
}

fn init(
    files: &[std::path::PathBuf],
    out: &std::path::Path,
    name: Option<&str>,
    force: bool,
) -> Result<ExitCode> {
    use anyhow::Context;
    let target = out.join("study.toml");
    if target.exists() && !force {
        anyhow::bail!("{} already exists: pass --force to replace it", target.display());
    }
    let text = recite::starter::starter(files, out, name, &Engine::new()).map_err(anyhow::Error::msg)?;
    // What is written must be what `catalog check` reads: parsed back before it is renamed
    // into place, so init never leaves a catalog that does not load.
    if text.len() as u64 > catalog::MAX_STUDY_BYTES {
        anyhow::bail!(
            "the starter catalog for these files would be {} bytes, over the {} a study.toml may have: \
             nothing written (start from fewer files, or write study.toml by hand)",
            text.len(),
            catalog::MAX_STUDY_BYTES
        );
    }
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    if let Err(e) = catalog::Study::parse(&text, &target) {
        anyhow::bail!(
            "the starter catalog does not parse back ({e}): nothing written to {}; this is a recite bug, \
             please report it with the file's column names",
            target.display()
        );
    }
    let inputs: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    super::files::write_atomically_as(
        &target,
        "the catalog",
        &text,
        &super::files::identities(inputs.iter().map(String::as_str)),
    )?;
    super::warn(&format!(
        "wrote {}: confirm the GUESS lines, settle the DECIDE ones, then run `recite catalog check --data {}`",
        target.display(),
        out.display()
    ));
    Ok(ExitCode::SUCCESS)
}
