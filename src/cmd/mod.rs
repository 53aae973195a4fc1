//! Subcommands and what they share: where the data layer and the extractors are, and how to
//! read an input.
//!
//! Exit codes everywhere: 0 when every claim is reproduced (or the check passed), 1 when any is
//! not, 2 on usage or I/O errors.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};

use recite::catalog::Catalog;
use recite::extractor::Registry;

/// `say!(out, …)`: a line into a report being built (written once, with [`write_output`]).
macro_rules! say {
    ($o:expr) => {{
        $o.push('\n');
    }};
    ($o:expr, $($t:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($o, $($t)*);
    }};
}

pub mod card;
pub mod catalog;
pub mod check;
pub mod extractors;
pub mod generate;
pub mod verify;

const QUICKSTART: &str = "\
Start here:
  recite verify examples/citations/versant-w6-considered.json    one citation, in full
  recite check examples/transcripts/                              every claim in transcripts
  recite catalog show Versant                                     what the data layer declares
  recite extractors                                               the registered functions

Each command's --help has more examples. Semantics: docs/semantics.md.";

/// Re-executes the citations AI agents attach to numbers, and settles disputes about them.
///
/// An Upperhand citation names a study, period, base, weight and a re-run hook
/// (table, column, function). recite looks each name up in the declared data layer
/// (`datasets/*/study.toml`), runs the registered extractor over the data with its weights,
/// and compares with the claimed numbers and base n.
#[derive(Debug, Parser)]
#[command(name = "recite", version, max_term_width = 100, after_help = QUICKSTART)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Verify(verify::Args),
    Check(check::Args),
    Card(card::Args),
    #[command(subcommand)]
    Catalog(catalog::Command),
    Extractors(extractors::Args),
    #[command(subcommand)]
    Generate(generate::Command),
}

/// Where the data layer and extractors are; shared by every subcommand that needs them.
#[derive(Debug, Clone, Args)]
pub struct DataArgs {
    /// Folder of studies (one `study.toml` per sub-folder). Default: ./datasets, else the
    /// datasets bundled with this build.
    #[arg(long, value_name = "DIR", env = "RECITE_DATA", global = true)]
    pub data: Option<PathBuf>,
    /// Folder of extra extractor declarations (`*.toml`), added to the bundled ones.
    #[arg(long, value_name = "DIR", env = "RECITE_EXTRACTORS", global = true)]
    pub extractors: Option<PathBuf>,
}

impl DataArgs {
    /// The data folder to use.
    pub fn data_dir(&self) -> PathBuf {
        if let Some(d) = &self.data {
            return d.clone();
        }
        let here = Path::new("datasets");
        if here.join("versant").is_dir() || here.join("nhanes2").is_dir() {
            return here.to_path_buf();
        }
        Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets")
    }

    /// Loads the catalog.
    pub fn catalog(&self) -> Result<Catalog> {
        Catalog::load(&self.data_dir())
    }

    /// Loads the extractor registry.
    pub fn registry(&self) -> Result<Registry> {
        Registry::load(self.extractors.as_deref())
    }
}

/// Colour choice, shared by report-writing subcommands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Color {
    /// Colour on a terminal when NO_COLOR is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

impl Color {
    /// Whether to colour output going to stdout.
    pub fn enabled(self) -> bool {
        use std::io::IsTerminal;
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal(),
        }
    }
}

/// Reads a file, or standard input for `-`.
pub fn read_input(path: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    if path == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf).context("reading standard input")?;
        Ok(buf)
    } else {
        std::fs::read(path).with_context(|| format!("reading {path}"))
    }
}

/// Writes `text` to `--output FILE` atomically (a temporary file renamed into place, so a
/// failure never leaves half a report), or to stdout.
pub fn write_output(output: Option<&Path>, text: &str) -> Result<()> {
    use std::io::Write;
    match output {
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
                // A reader that stopped early (`| head`) is not an error of ours.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                other => other.context("writing to standard output"),
            }
        }
        Some(path) => {
            let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let tmp = dir.join(format!(
                ".{}.{}.tmp",
                path.file_name().and_then(|n| n.to_str()).unwrap_or("report"),
                std::process::id()
            ));
            std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
            std::fs::rename(&tmp, path).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                anyhow::anyhow!("moving the report into {}: {e}", path.display())
            })
        }
    }
}

/// Runs the command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Verify(a) => verify::run(a),
        Command::Check(a) => check::run(a),
        Command::Card(a) => card::run(a),
        Command::Catalog(c) => catalog::run(c),
        Command::Extractors(a) => extractors::run(a),
        Command::Generate(a) => generate::run(a),
    }
}
