//! Subcommands and what they share: where the data layer and the extractors are
//! ([`DataArgs`]), how claims are settled ([`SettleArgs`]), where and how a report is written
//! ([`ReportArgs`], [`OutputArgs`]), and how to read an input. Each command file is its usage,
//! its arguments and a short `run` over a library function.
//!
//! Exit codes everywhere: 0 when every claim is reproduced (or the check passed), 1 when any is
//! not, 2 on usage or I/O errors.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};

use recite::catalog::Catalog;
use recite::claim::DecimalMark;
use recite::engine::{Engine, EngineUrl};
use recite::extractor::Registry;
use recite::report::DataLayer;
use recite::settle::pipeline::Options;

use choices::{DfArg, IntervalArg};

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

pub mod cache;
pub mod card;
pub mod catalog;
pub mod check;
pub mod choices;
pub mod cluster;
pub mod extractors;
// `--fail-on` and the input and output files are the library's (recite-core), so other
// front ends (the Python package) apply the same rules.
pub use recite::{fail_on, files};
pub mod generate;
#[cfg(feature = "agents")]
pub mod mcp;
#[cfg(feature = "agents")]
pub mod probe;
#[cfg(feature = "serve")]
pub mod serve;
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
    #[command(subcommand)]
    Cache(cache::Command),
    #[command(subcommand)]
    Cluster(cluster::Command),
    #[cfg(feature = "serve")]
    Serve(serve::Args),
    /// The HTTP API and the workbench (not in this build: it needs the `serve` feature).
    #[cfg(not(feature = "serve"))]
    Serve(LeftOut),
    #[cfg(feature = "agents")]
    Mcp(mcp::Args),
    /// The MCP tools over stdio (not in this build: it needs the `agents` feature).
    #[cfg(not(feature = "agents"))]
    Mcp(LeftOut),
    #[cfg(feature = "agents")]
    Probe(probe::Args),
    /// Probes a live A2A agent (not in this build: it needs the `agents` feature).
    #[cfg(not(feature = "agents"))]
    Probe(LeftOut),
}

/// The arguments of a command this build leaves out with its cargo feature: taken as they come,
/// so the error names the feature rather than an argument the command would have known.
#[cfg(any(not(feature = "serve"), not(feature = "agents")))]
#[derive(Debug, Args)]
pub struct LeftOut {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    _args: Vec<String>,
}

/// The error of a command this build leaves out: which feature brings it, and the command that
/// builds it.
#[cfg(any(not(feature = "serve"), not(feature = "agents")))]
fn left_out(command: &str, feature: &str) -> Result<ExitCode> {
    anyhow::bail!(
        "recite {command}: this recite was built without the `{feature}` cargo feature; run it with \
         `cargo run --features {feature} -- {command} …`, or build it with \
         `cargo build --release --features {feature}`"
    )
}

/// Where the data layer and extractors are; shared by every subcommand that needs them.
#[derive(Debug, Clone, Args)]
pub struct DataArgs {
    /// Folder of studies (one `study.toml` per sub-folder). Default: $RECITE_DATA, else
    /// ./datasets, else the datasets bundled with this build. Reports say which one answered.
    #[arg(long, value_name = "DIR", global = true)]
    pub data: Option<PathBuf>,
    /// Folder of extra extractor declarations (`*.toml`), added to the bundled ones.
    #[arg(long, value_name = "DIR", env = "RECITE_EXTRACTORS", global = true)]
    pub extractors: Option<PathBuf>,
}

/// The datasets bundled with this build.
fn bundled_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets")
}

impl DataArgs {
    /// The data layer to use and how it was chosen: `--data`, else `RECITE_DATA`, else a
    /// `./datasets` in the working directory, else the bundled datasets
    /// ([`DataLayer::choose`]).
    pub fn data_layer(&self) -> DataLayer {
        DataLayer::choose(self.data.as_deref(), bundled_data())
    }

    /// Loads the catalog, after saying on stderr when the data layer shadows another.
    pub fn catalog(&self) -> Result<Catalog> {
        let layer = self.data_layer();
        if let Some(w) = &layer.warning {
            warn(&format!("warning: {w}"));
        }
        Ok(recite::sav::load_layer(&layer)?)
    }

    /// Loads the extractor registry.
    pub fn registry(&self) -> Result<Registry> {
        Ok(Registry::load(self.extractors.as_deref())?)
    }
}

/// Where scans run; shared by every command that runs the engine on the data layer.
#[derive(Debug, Clone, Args)]
pub struct EngineArgs {
    /// `local` (DataFusion in this process), or `ballista://HOST:PORT`: the scheduler of an
    /// Apache Ballista cluster that runs the scans (a build with the `ballista` feature;
    /// docs/cluster.md). Empty means local.
    #[arg(long, value_name = "ENGINE", env = "RECITE_ENGINE", default_value = "local", value_parser = parse_engine)]
    pub engine: EngineUrl,
    /// On a cluster engine, the longest one scan may take, in seconds (1 to 86400, a day): a
    /// scheduler that does not answer, has no executor or loses the one running the scan makes
    /// the table's claims UNVERIFIABLE naming the scheduler, after at most this long. The local
    /// engine has none.
    #[arg(
        long,
        value_name = "SECONDS",
        env = "RECITE_ENGINE_TIMEOUT",
        default_value_t = recite::engine::remote::DEFAULT_ENGINE_TIMEOUT_SECONDS,
        value_parser = parse_engine_timeout
    )]
    pub engine_timeout: u64,
}

/// An `--engine-timeout` in seconds, within [`recite::engine::remote::MAX_ENGINE_TIMEOUT_SECONDS`].
fn parse_engine_timeout(value: &str) -> std::result::Result<u64, String> {
    let max = recite::engine::remote::MAX_ENGINE_TIMEOUT_SECONDS;
    let range = format!(
        "a whole number of seconds from 1 to {max} (a day): 0 would fail every scan before it starts, \
         and a deadline past a day bounds nothing a claim batch waits for"
    );
    match value.trim().parse::<u64>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        Ok(n) => Err(format!("{n} is out of range: {range}")),
        Err(_) => Err(format!("{value:?} is not {range}")),
    }
}

/// An `--engine` value; empty (an unset-looking `RECITE_ENGINE=`) is local.
fn parse_engine(value: &str) -> std::result::Result<EngineUrl, String> {
    if value.trim().is_empty() {
        return Ok(EngineUrl::Local);
    }
    value.parse().map_err(|e: recite::engine::EngineUrlError| e.to_string())
}

/// On a cluster engine, where each table's scans ran (standard error: the report is the same
/// wherever they ran).
pub fn tell_placements(engine: &Engine) {
    for (table, place) in engine.placements() {
        eprintln!("recite: table {table}: scanned {place}");
    }
}

impl EngineArgs {
    /// The engine: this process's, or a session on the named cluster (whose scheduler must
    /// answer).
    pub fn engine(&self) -> Result<Engine> {
        Engine::connect_within(&self.engine, std::time::Duration::from_secs(self.engine_timeout))
            .map_err(|e| anyhow::anyhow!("{e}"))
    }
}

/// Which version of each versioned table claims are re-run on; shared by `check` and `verify`.
#[derive(Debug, Clone, Args)]
pub struct AsOfArgs {
    /// Re-run every claim on a Delta Lake table on the latest version committed at or before
    /// TIMESTAMP (RFC 3339, e.g. 2026-04-20T00:00:00Z), over a period's or a citation's pin.
    /// Tables of plain files are read as they are, with a note. Default: the pin, else the
    /// latest version; every report says which version it ran on.
    #[arg(long, value_name = "TIMESTAMP")]
    pub as_of: Option<String>,
}

impl AsOfArgs {
    /// The engine, reading versioned tables as of the moment asked for, if any.
    pub fn apply(&self, engine: Engine) -> Engine {
        match &self.as_of {
            Some(moment) => engine.with_as_of(moment.clone()),
            None => engine,
        }
    }
}

/// Re-running a saved report: on the versions it read, or on the data as it is now, and what
/// moved against it (`check`).
#[derive(Debug, Clone, Args)]
pub struct RerunArgs {
    /// A saved JSON report of the same inputs (`recite check … --format json`): this run is
    /// compared with it claim by claim, and what moved (data versions, verdicts and why, base
    /// n, recomputed values) is said on standard error. Without --pinned, on the data as it is.
    #[arg(long, value_name = "REPORT")]
    pub rerun_of: Option<PathBuf>,
    /// With --rerun-of: re-run each Delta table whose claims read its latest on the version the
    /// saved report read (pinned claims keep their pins), which must reproduce the ruling bit
    /// for bit.
    #[arg(long, requires = "rerun_of")]
    pub pinned: bool,
}

/// A saved report to re-run against ([`RerunArgs`]): where it is, its JSON, and the versions
/// its claims read.
pub struct Saved {
    pub path: PathBuf,
    pub report: serde_json::Value,
    pub versions: recite::saved::SavedVersions,
    pub pinned: bool,
}

impl RerunArgs {
    /// The saved report, read, when one was given.
    pub fn saved(&self) -> Result<Option<Saved>> {
        let Some(path) = &self.rerun_of else { return Ok(None) };
        let text = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        let report: serde_json::Value = serde_json::from_slice(&text).with_context(|| {
            format!("{} is not a JSON report (recite check --format json)", path.display())
        })?;
        if !report["inputs"].is_array() {
            anyhow::bail!("{} is not a JSON report of recite check (it has no inputs)", path.display());
        }
        let versions = recite::saved::SavedVersions::of_report(&report);
        Ok(Some(Saved { path: path.clone(), report, versions, pinned: self.pinned }))
    }
}

impl Saved {
    /// Says on standard error how this run's JSON report compares with the saved one.
    pub fn tell(&self, now: &serde_json::Value) {
        let on = if self.pinned { "on the versions it read" } else { "on the data as it is now" };
        let shown = self.path.display();
        if self.pinned {
            for (study, table, v) in self.versions.iter() {
                eprintln!("recite: {study} / {table}: re-run on Delta version {v}, the version {shown} read");
            }
        }
        if recite::saved::same_rulings(&self.report, now) {
            eprintln!("recite: re-run of {shown} {on}: the ruling reproduced, bit for bit");
            return;
        }
        eprintln!("recite: re-run of {shown} {on}: what moved");
        let moved = recite::saved::moved(&self.report, now);
        for m in moved.as_array().into_iter().flatten() {
            let text =
                |v: &serde_json::Value| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
            let claim = m["claim"].as_u64().map(|n| format!("claim {n}: ")).unwrap_or_default();
            match m["what"].as_str() {
                Some("verdict") => eprintln!(
                    "  {claim}verdict {} -> {}, because {}",
                    text(&m["before"]),
                    text(&m["after"]),
                    text(&m["why"])
                ),
                Some("file") => eprintln!(
                    "  file {}: {} -> {}",
                    text(&m["file"]),
                    recite::saved::file_words(&m["before"]),
                    recite::saved::file_words(&m["after"])
                ),
                Some("recomputed") => eprintln!(
                    "  {claim}{} recomputed {} -> {}",
                    text(&m["measure"]),
                    text(&m["before"]),
                    text(&m["after"])
                ),
                Some(what) => eprintln!("  {claim}{what} {} -> {}", text(&m["before"]), text(&m["after"])),
                None => {}
            }
        }
    }
}

/// A report's bytes kept in memory as they are written (a run's JSON report, compared with a
/// saved one after the run).
#[derive(Clone, Default)]
pub struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Captured {
    pub fn json(&self) -> serde_json::Value {
        let bytes = self.0.lock().unwrap_or_else(|e| e.into_inner());
        serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null)
    }
}

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// How claims are settled; shared by `check` and `verify`.
#[derive(Debug, Clone, Args)]
pub struct SettleArgs {
    /// Interval method for shares and conversions.
    #[arg(long, value_enum, default_value_t = IntervalArg::Logit)]
    pub interval: IntervalArg,
    /// Degrees of freedom with a declared design: the PSUs and strata holding each measure's
    /// domain (as R's `degf(subset(design, …))`), or every PSU of the table.
    #[arg(long, value_enum, default_value_t = DfArg::Domain)]
    pub df: DfArg,
    /// Do not look for what a claim not reproduced most likely computed instead (unweighted,
    /// adjacent period, sibling column, other base…); saves one scan per such table.
    #[arg(long)]
    pub no_explain: bool,
    /// The decimal mark of numbers written as strings in tool results and of `--claim` values,
    /// where their text leaves it open (`"44.249"`, `"4,595"`): `dot` (the C locale, as programs
    /// write: 44.249 and 4595) or `comma` (as much of Europe writes: 44249 and 4.595). A
    /// spelling that shows its mark (`44.2`, `44,0`, `4.595,5`, `1.234.567`) reads the same
    /// either way; an answer's prose is read by the convention its own numbers show.
    #[arg(long, value_name = "MARK", default_value_t = DecimalMark::Dot)]
    pub decimal_mark: DecimalMark,
}

impl SettleArgs {
    /// The settlement options these flags ask for.
    pub fn options(&self) -> Options {
        // Series only where a report draws them (`check --format html`).
        Options {
            interval: self.interval.into(),
            df: self.df.into(),
            explain: !self.no_explain,
            series: false,
            decimal_mark: self.decimal_mark,
        }
    }
}

/// Where output goes: `--output FILE`, else standard output. Shared by every command that
/// writes a report or a file of results.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Write to FILE (atomically) instead of standard output. FILE may not be one of the
    /// inputs, a folder, a FIFO or a device.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

impl OutputArgs {
    /// The file to write, if not standard output.
    pub fn path(&self) -> Option<&Path> {
        self.output.as_deref()
    }

    /// Fails (before any work) when the output file would be one of `inputs` or cannot be
    /// written there.
    pub fn check(&self, inputs: &[(u64, u64)]) -> Result<()> {
        match self.path() {
            Some(o) => Ok(files::check_output(o, inputs)?),
            None => Ok(()),
        }
    }

    /// Writes `text` there (see [`write_report`]).
    pub fn write(&self, text: &str, inputs: &[(u64, u64)]) -> Result<()> {
        write_report(self.path(), text, inputs)
    }
}

/// How a report is written: where, and whether in colour; shared by `check` and `verify`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub to: OutputArgs,
    /// When to colour the text report.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub color: Color,
}

impl ReportArgs {
    /// Whether to colour the text report: never into a file.
    pub fn colored(&self) -> bool {
        self.color.enabled() && self.to.path().is_none()
    }
}

/// A report for a person or for a program; the formats of `verify` and `card`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TextOrJson {
    /// For a person at a terminal.
    Text,
    /// JSON: for `verify`, the report `recite check --format json` writes; for `card`, the
    /// card's declarations and findings.
    Json,
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

/// Reads a file, or standard input for `-`: only a regular file, at most
/// [`files::DEFAULT_MAX_INPUT_SIZE`] bytes.
pub fn read_input(path: &str) -> Result<Vec<u8>> {
    Ok(files::read_one(path, files::DEFAULT_MAX_INPUT_SIZE)?)
}

/// A line on stderr. Never fails: a closed or broken stderr is not a reason to stop (nor to
/// panic, as `eprintln!` would).
pub fn warn(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Writes `text` to `--output FILE` atomically, or to stdout (see [`write_report`]).
pub fn write_output(output: Option<&Path>, text: &str) -> Result<()> {
    write_report(output, text, &[])
}

/// Writes `text` to `--output FILE` atomically (a temporary file created exclusively and renamed
/// into place, so a failure never leaves half a report; never over one of `inputs`, a folder, a
/// FIFO or a device), or to stdout.
pub fn write_report(output: Option<&Path>, text: &str, inputs: &[(u64, u64)]) -> Result<()> {
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
        Some(path) => Ok(files::write_atomically(path, text, inputs)?),
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
        Command::Cache(c) => cache::run(c),
        Command::Cluster(c) => cluster::run(c),
        #[cfg(feature = "serve")]
        Command::Serve(a) => serve::run(a),
        #[cfg(not(feature = "serve"))]
        Command::Serve(_) => left_out("serve", "serve"),
        #[cfg(feature = "agents")]
        Command::Mcp(a) => mcp::run(a),
        #[cfg(feature = "agents")]
        Command::Probe(a) => probe::run(a),
        #[cfg(not(feature = "agents"))]
        Command::Mcp(_) => left_out("mcp", "agents"),
        #[cfg(not(feature = "agents"))]
        Command::Probe(_) => left_out("probe", "agents"),
    }
}

/// Reads a JSON Schema file (`--record-schema`) into a validator.
pub fn json_schema(p: &Path) -> Result<jsonschema::Validator> {
    let bytes = read_input(&p.to_string_lossy())?;
    let text = String::from_utf8(bytes).with_context(|| format!("{}: not UTF-8", p.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not valid JSON", p.display()))?;
    jsonschema::validator_for(&v)
        .map_err(|e| anyhow::anyhow!("{}: not a usable JSON Schema: {e}", p.display()))
}

/// A progress line on stderr, shown only on a terminal and only once a run passes a second.
pub struct Progress {
    bar: std::sync::Mutex<Option<indicatif::ProgressBar>>,
    started: std::time::Instant,
}

impl Default for Progress {
    fn default() -> Self {
        Progress::new()
    }
}

impl Progress {
    /// No line yet.
    pub fn new() -> Progress {
        Progress { bar: std::sync::Mutex::new(None), started: std::time::Instant::now() }
    }

    /// What the run is doing now.
    pub fn phase(&self, msg: &str) {
        use std::io::IsTerminal;
        use std::time::Duration;
        let mut bar = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        if bar.is_none() && self.started.elapsed() > Duration::from_secs(1) && std::io::stderr().is_terminal()
        {
            let b = indicatif::ProgressBar::new_spinner();
            b.enable_steady_tick(Duration::from_millis(120));
            *bar = Some(b);
        }
        if let Some(b) = &*bar {
            b.set_message(msg.to_string());
        }
    }

    /// Clears the line.
    pub fn finish(self) {
        if let Some(b) = self.bar.into_inner().unwrap_or_else(|e| e.into_inner()) {
            b.finish_and_clear();
        }
    }
}

/// Where a streamed report goes: standard output as it is written, `--output FILE` through a
/// temporary file in the same folder, renamed over FILE once complete (see
/// [`files::write_atomically`]), or straight into a character device or FIFO (`-o /dev/null`).
pub struct ReportOutput {
    file: Option<(PathBuf, tempfile::NamedTempFile)>,
    stream: Option<(PathBuf, std::fs::File)>,
}

impl ReportOutput {
    /// Checks `output` (not an input, a folder, a socket…) and opens the temporary file, or
    /// the device or FIFO it names.
    pub fn open(output: Option<&Path>, inputs: &[(u64, u64)]) -> Result<ReportOutput> {
        let Some(path) = output else { return Ok(ReportOutput { file: None, stream: None }) };
        files::check_output(path, inputs)?;
        if files::is_stream(path) {
            let f = files::open_stream(path, "the report")?;
            return Ok(ReportOutput { file: None, stream: Some((path.to_path_buf(), f)) });
        }
        let tmp = files::temporary_beside(path)?;
        Ok(ReportOutput { file: Some((path.to_path_buf(), tmp)), stream: None })
    }

    /// A buffered writer to it.
    pub fn writer(&self) -> Result<Box<dyn std::io::Write>> {
        if let Some((path, f)) = &self.stream {
            let f =
                f.try_clone().with_context(|| format!("cannot write the report to {}", path.display()))?;
            return Ok(Box::new(std::io::BufWriter::with_capacity(1 << 16, f)));
        }
        Ok(match &self.file {
            None => Box::new(std::io::BufWriter::with_capacity(1 << 16, Stdout { broken: false })),
            Some((path, tmp)) => Box::new(std::io::BufWriter::with_capacity(
                1 << 16,
                tmp.reopen().with_context(|| format!("cannot write the report to {}", path.display()))?,
            )),
        })
    }

    /// [`writer`](ReportOutput::writer) as a report output: the temporary file is kept as a
    /// file, so a JSON body spooled past memory moves to it in the kernel.
    pub fn output(&self) -> Result<recite::report::stream::Output> {
        match &self.file {
            Some((path, tmp)) => Ok(recite::report::stream::Output::file(
                tmp.reopen().with_context(|| format!("cannot write the report to {}", path.display()))?,
            )),
            None => Ok(recite::report::stream::Output::Other(self.writer()?)),
        }
    }

    /// Renames the complete report over `--output FILE` (checked again first).
    pub fn commit(self, inputs: &[(u64, u64)]) -> Result<()> {
        match self.file {
            None => Ok(()),
            Some((path, tmp)) => Ok(files::persist(tmp, &path, inputs)?),
        }
    }
}

/// Standard output that goes quiet once its reader has gone (`| head`): not an error of ours.
struct Stdout {
    broken: bool,
}

impl std::io::Write for Stdout {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if !self.broken {
            match std::io::stdout().lock().write_all(b) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => self.broken = true,
                other => other?,
            }
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match std::io::stdout().lock().flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        }
    }
}
