//! The data layer: studies declared in `study.toml` files (see `docs/catalog.md`).
//!
//! Every name a citation uses is looked up here. Look-ups return the catalog's own entry, so
//! what reaches the engine is always a declared name, never the citation's text. Names people
//! write (study, period, base) match case- and space-insensitively; identifiers (table, column,
//! weight) match exactly, with case-insensitive matches offered as suggestions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub mod show;

/// Every study found under a data root.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// The folder the studies were loaded from.
    pub root: PathBuf,
    /// The studies, sorted by name.
    pub studies: Vec<Study>,
    /// The `study.toml` files that could not be used: each fails only the claims on it.
    pub broken: Vec<Broken>,
}

/// A `study.toml` that cannot be used (unreadable, not TOML, not a study, not a regular file).
#[derive(Debug, Clone)]
pub struct Broken {
    /// The file.
    pub file: PathBuf,
    /// The study name and aliases it declares, when they can be read at all.
    pub names: Vec<String>,
    /// Why it cannot be used.
    pub error: String,
}

/// Most bytes a `study.toml` may have.
pub const MAX_STUDY_BYTES: u64 = 16 << 20;
/// Most breakdown cells a study may declare (each is counted for every claim on the study).
pub const MAX_CELLS: usize = 256;

/// A failed study look-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StudyError {
    /// No study has that name or alias.
    NotFound {
        /// The look-up that failed.
        missing: NotFound,
        /// `study.toml` files whose names could not be read (the study may be one of them).
        unreadable: Vec<PathBuf>,
    },
    /// The name (folded) belongs to more than one study: never resolved to one of them.
    Ambiguous {
        /// The name asked for.
        asked: String,
        /// Each candidate: its declared name and file.
        candidates: Vec<(String, PathBuf)>,
    },
    /// The name belongs to a study whose file cannot be used.
    Broken {
        /// The name asked for.
        asked: String,
        /// The file.
        file: PathBuf,
        /// Why it cannot be used.
        error: String,
    },
}

impl std::fmt::Display for StudyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StudyError::NotFound { missing, unreadable } => {
                write!(f, "{missing}")?;
                if !unreadable.is_empty() {
                    let files: Vec<String> = unreadable.iter().map(|p| p.display().to_string()).collect();
                    write!(f, " ({} study file(s) could not be read: {})", files.len(), files.join(", "))?;
                }
                Ok(())
            }
            StudyError::Ambiguous { asked, candidates } => {
                let list: Vec<String> =
                    candidates.iter().map(|(n, p)| format!("{n:?} ({})", p.display())).collect();
                write!(f, "study {:?} is ambiguous: it names {}", shorten(asked), list.join(" and "))
            }
            StudyError::Broken { asked, file, error } => {
                write!(f, "study {:?} cannot be used: {}: {error}", shorten(asked), file.display())
            }
        }
    }
}

impl std::error::Error for StudyError {}

/// Why [`Catalog::load`] read no catalog: the data folder itself is missing or unreadable (a
/// study file that cannot be used is kept in [`Catalog::broken`] instead).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The folder does not exist.
    #[error("data folder {} does not exist (set --data DIR or RECITE_DATA)", .0.display())]
    NoFolder(PathBuf),
    /// The folder cannot be listed.
    #[error("reading data folder {}", folder.display())]
    ReadFolder {
        /// The data folder.
        folder: PathBuf,
        /// Why it cannot be listed.
        source: std::io::Error,
    },
}

/// Why [`Study::load`] read no study.
#[derive(Debug, thiserror::Error)]
pub enum StudyLoadError {
    /// The file cannot be read.
    #[error("reading {}", file.display())]
    Read {
        /// The `study.toml`.
        file: PathBuf,
        /// Why it cannot be read.
        source: std::io::Error,
    },
    /// The file is not a valid `study.toml`.
    #[error("{}: {source}", file.display())]
    Parse {
        /// The `study.toml`.
        file: PathBuf,
        /// What is wrong in it.
        source: StudyParseError,
    },
}

/// A `study.toml` that does not parse, or declares a connection it cannot use.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StudyParseError {
    /// TOML's message, naming the entry and line.
    #[error("{0}")]
    Toml(toml::de::Error),
    /// A table's connection or a `[connections]` entry that cannot be used.
    #[error("{0}")]
    Connection(#[from] ConnectionError),
}

/// A PostgreSQL connection declared wrongly in `study.toml` (docs/catalog.md, "PostgreSQL
/// tables"). No message echoes a location that may hold a password.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConnectionError {
    /// A table names a connection `[connections]` does not declare.
    #[error("table {table:?} names connection {connection:?}, which [connections] does not declare (declared: {})",
        if declared.is_empty() { "none".to_string() } else { declared.join(", ") })]
    Undeclared {
        /// The table.
        table: String,
        /// The connection it names.
        connection: String,
        /// The connections declared.
        declared: Vec<String>,
    },
    /// A table's `postgres://` path holds a password.
    #[error(
        "table {table:?}: its path holds a password, which study.toml must never hold: name an \
             environment variable holding the DSN in [connections] (docs/catalog.md, \
             \"PostgreSQL tables\")"
    )]
    PasswordInPath {
        /// The table.
        table: String,
    },
    /// A connection's `dsn_env` is not an environment variable's name.
    #[error(
        "connection {connection:?}: dsn_env {dsn_env:?} is not an environment variable's name (letters, digits, _)"
    )]
    BadVariable {
        /// The connection.
        connection: String,
        /// What it gives as the variable's name.
        dsn_env: String,
    },
}

/// A replicate weight declaration (`[tables.replicates]`) that cannot be applied to a table.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplicateError {
    /// No column of the table matches the declared pattern.
    #[error("no column matches the replicate weight pattern {pattern:?}")]
    NoColumn {
        /// The pattern (shortened).
        pattern: String,
    },
    /// Fay's method without its ρ.
    #[error("Fay replicates need `rho` (0 ≤ ρ < 1) or `scale`")]
    FayWithoutRho,
    /// The scale is not a positive number.
    #[error("the replicate scale {0} is not a positive number")]
    Scale(f64),
    /// JKn without its per-replicate multipliers.
    #[error("JKn replicates need `rscales`, (nₕ−1)/nₕ for each replicate")]
    JknWithoutRscales,
    /// As many rscales as columns are needed.
    #[error("{rscales} rscales declared for {columns} replicate weight columns")]
    RscalesCount {
        /// rscales declared.
        rscales: usize,
        /// Replicate weight columns matched.
        columns: usize,
    },
    /// An rscale is negative or not a number.
    #[error("every rscale must be a number ≥ 0")]
    Rscale,
    /// The declared df is below 1 or not a number.
    #[error("the replicate df {0} is not a number ≥ 1")]
    Df(f64),
}

/// A period that pins its claims to a version twice over.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("period {period:?} declares both delta_version and as_of: keep one")]
pub struct PinConflict {
    /// The period's name.
    pub period: String,
}

/// A catalog filter too large to parse safely ([`check_filter_size`]); worded to follow "its
/// filter".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterSizeError {
    /// More than [`MAX_FILTER_BYTES`].
    #[error("is too large: {bytes} bytes (at most {MAX_FILTER_BYTES})")]
    TooLarge {
        /// Its length.
        bytes: usize,
    },
    /// SQL's tokenizer rejects it.
    #[error("does not plan: {0}")]
    Tokens(String),
    /// More than [`MAX_FILTER_DEPTH`] operators and nesting levels.
    #[error(
        "is too deep: {operators} operators and {nesting} nesting levels (at most {MAX_FILTER_DEPTH} \
         together; use IN (…) for a long list of values)"
    )]
    TooDeep {
        /// Operators counted.
        operators: usize,
        /// The deepest nesting of brackets.
        nesting: usize,
    },
}

/// One `study.toml`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Study {
    /// Name, aliases and description.
    pub study: StudyHeader,
    /// Small-base thresholds.
    #[serde(default)]
    pub thresholds: Thresholds,
    /// The tables of the study.
    #[serde(default)]
    pub tables: Vec<Table>,
    /// Database connections tables may be read through (`[connections.NAME]`), by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub connections: BTreeMap<String, Connection>,
    /// The declared periods (waves, date ranges, versions).
    #[serde(default)]
    pub periods: Vec<Period>,
    /// The declared bases (populations).
    #[serde(default)]
    pub bases: Vec<BaseDef>,
    /// Breakdowns whose cells are audited for small bases.
    #[serde(default)]
    pub breakdowns: Vec<Breakdown>,
    /// How the weights were made; free-form, shown by `catalog show`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weighting: Option<toml::Table>,
    /// The `study.toml` this came from.
    #[serde(skip)]
    pub file: PathBuf,
    /// Filters (SQL) past the size limits, with why: measured once, when the study is parsed.
    #[serde(skip)]
    oversized: BTreeMap<String, String>,
}

/// `[study]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StudyHeader {
    /// The name citations use.
    pub name: String,
    /// Other accepted names.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// One line on what the study is.
    #[serde(default)]
    pub description: String,
}

/// `[connections.NAME]`: a database server's address, kept out of `study.toml`: the name of an
/// environment variable holding its DSN (`postgres://user:password@host:5432/db`), so no
/// password is ever written in the catalog.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Connection {
    /// The environment variable holding the DSN.
    pub dsn_env: String,
}

/// The location of a table read through a `[connections]` entry: `postgres-env://VAR/TABLE`,
/// the variable's name in place of the DSN it holds (a location is printed; a DSN may hold a
/// password).
pub const CONNECTION_SCHEME: &str = "postgres-env";

/// `[thresholds]`: small-base warnings on the unweighted count.
#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    /// Under this, a base is "low" (default 100).
    #[serde(default = "default_low")]
    pub low: u64,
    /// Under this, a base is "very low" (default 50).
    #[serde(default = "default_very_low")]
    pub very_low: u64,
}

fn default_low() -> u64 {
    100
}
fn default_very_low() -> u64 {
    50
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds { low: default_low(), very_low: default_very_low() }
    }
}

/// `[[tables]]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    /// The name citations use in `source.table`.
    pub name: String,
    /// File path or glob, relative to the `study.toml`; or a URL on object storage (`s3://…`,
    /// `gs://…`, `az://…`, `http(s)://…`), taken as it is ([`url_scheme`]).
    pub path: String,
    /// The `[connections]` entry the table is read through; `path` is then the table's name on
    /// that server (`schema.table` or `table`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<String>,
    /// The only columns a citation may name as its weight.
    #[serde(default)]
    pub weights: Vec<String>,
    /// A sampling design, when the data has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub design: Option<Design>,
    /// Replicate weights, when the data carries them: weighted estimates then take their SEs
    /// from the replicates, as R's `svrepdesign`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicates: Option<Replicates>,
    /// Column metadata: labels, value labels, missing codes.
    #[serde(default)]
    pub columns: BTreeMap<String, Column>,
    /// How a CSV file is written, when not comma-separated with a header row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csv: Option<CsvFormat>,
    /// For an SPSS table, the keys `study.toml` writes for each column (the rest may come from
    /// the file's dictionary); empty otherwise.
    #[serde(skip)]
    pub declared_keys: BTreeMap<String, Vec<String>>,
    /// Question → its columns in natural order, built on first use: a question may have
    /// thousands of columns, and every wrong claim and cited number asks for its siblings.
    /// [`Table::columns_changed`] drops it when `columns` is edited after parsing.
    #[serde(skip)]
    questions: std::sync::OnceLock<BTreeMap<String, Vec<String>>>,
}

/// A number as a SQL literal or label: integers without a fraction.
pub fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 { format!("{}", v as i64) } else { format!("{v}") }
}

/// Whether a table path names an SPSS file (`.sav` or `.zsav`, any case).
pub fn is_sav(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("sav") || e.eq_ignore_ascii_case("zsav"))
}

/// `csv = { delimiter = ";", header = false }`: how a table's CSV file is written.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CsvFormat {
    /// The field separator: one ASCII character (default `,`; `\t` for tabs).
    #[serde(default = "default_delimiter")]
    pub delimiter: String,
    /// Whether the first line names the columns (default true; without it they are
    /// `column_1`, `column_2`, …).
    #[serde(default = "default_header")]
    pub header: bool,
    /// The decimal mark of numbers: `.` (default) or `,` (European exports: `0,44`,
    /// `1.234,5`, where `.` groups thousands).
    #[serde(default = "default_decimal")]
    pub decimal: String,
    /// The file's character encoding, by its WHATWG label (default `utf-8`; `windows-1252`,
    /// `latin1`, `utf-16` with a byte-order mark, …).
    #[serde(default = "default_encoding")]
    pub encoding: String,
}

impl CsvFormat {
    /// Whether the file must be converted (to UTF-8, `.` decimals) before the CSV reader sees it.
    pub fn needs_transcoding(&self) -> bool {
        self.decimal != "." || !matches!(self.encoding.to_ascii_lowercase().as_str(), "utf-8" | "utf8")
    }
}

fn default_decimal() -> String {
    ".".into()
}
fn default_encoding() -> String {
    "utf-8".into()
}

fn default_delimiter() -> String {
    ",".into()
}
fn default_header() -> bool {
    true
}

/// A stratified cluster design (PSUs sampled with replacement within strata).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Design {
    /// The stratum column.
    pub strata: String,
    /// The primary sampling unit column (numbered within stratum or globally).
    pub psu: String,
}

/// `[tables.replicates]`: replicate weight columns and how R's `svrepdesign` combines them:
/// V = scale · Σᵣ rscaleᵣ (θᵣ − θ̄)², θ̄ the replicates' mean (or θ̂ with `mse`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Replicates {
    /// The replicate weight columns: a name pattern where `*` stands for any characters (e.g.
    /// `repwt_*`), matched in the table's column order. Each holds the replicate's full weight
    /// (the sampling weight times the replicate's factor, R's "analysis" weights).
    pub columns: String,
    /// How the replicates were made.
    pub method: ReplicateMethod,
    /// The variance's multiplier; by default the method's: JK1 (R−1)/R, JKn 1, BRR 1/R,
    /// Fay 1/(R(1−ρ)²), bootstrap 1/(R−1), for R replicates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// One multiplier per replicate (JKn: (nₕ−1)/nₕ of the replicate's stratum); 1 by default.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rscales: Vec<f64>,
    /// Fay's ρ (the default scale of Fay needs it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rho: Option<f64>,
    /// Deviations from the full-sample estimate rather than from the replicates' mean (R's
    /// `mse = TRUE`).
    #[serde(default)]
    pub mse: bool,
    /// Degrees of freedom of intervals on the whole sample: R's `degf()` of the design (the rank
    /// of the replicate weights − 1). Without it recite computes that rank, as R does; a
    /// subgroup's df is always the rank of its rows' replicate weights − 1 (`engine::gram`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub df: Option<f64>,
}

/// How replicate weights were made (R's `svrepdesign(type = …)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub enum ReplicateMethod {
    /// Delete-one jackknife, one stratum.
    JK1,
    /// Stratified delete-one jackknife.
    JKn,
    /// Balanced repeated replication.
    BRR,
    /// Fay's modified BRR.
    Fay,
    /// Bootstrap.
    #[serde(rename = "bootstrap")]
    Bootstrap,
}

/// Replicate weights resolved for a table (R's `svrepdesign`): the columns and how replicate
/// estimates combine into a variance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replication {
    /// How the replicates were made.
    pub method: ReplicateMethod,
    /// The replicate weight columns, in order.
    pub columns: Vec<String>,
    /// The variance's multiplier.
    pub scale: f64,
    /// One multiplier per replicate.
    pub rscales: Vec<f64>,
    /// Deviations from the full-sample estimate rather than the replicates' mean.
    pub mse: bool,
    /// The design's degrees of freedom as the catalog declares them (R's `degf()` of the whole
    /// design); when absent, the rank of the base's replicate weights − 1, as R computes it.
    pub df: Option<f64>,
}

impl Replicates {
    /// The replication of a table with these columns (its schema's names, in order): the
    /// matching columns, and the scale, rscales and df with the method's defaults.
    pub fn resolve<'a>(&self, names: impl Iterator<Item = &'a str>) -> Result<Replication, ReplicateError> {
        let columns: Vec<String> =
            names.filter(|n| pattern_matches(&self.columns, n)).map(str::to_string).collect();
        if columns.is_empty() {
            return Err(ReplicateError::NoColumn { pattern: shorten(&self.columns) });
        }
        let r = columns.len() as f64;
        let scale = match (self.scale, self.method) {
            (Some(s), _) => s,
            (None, ReplicateMethod::JK1) => (r - 1.0) / r,
            (None, ReplicateMethod::JKn) => 1.0,
            (None, ReplicateMethod::BRR) => 1.0 / r,
            (None, ReplicateMethod::Fay) => match self.rho {
                Some(rho) if (0.0..1.0).contains(&rho) => 1.0 / (r * (1.0 - rho).powi(2)),
                _ => return Err(ReplicateError::FayWithoutRho),
            },
            (None, ReplicateMethod::Bootstrap) => 1.0 / (r - 1.0),
        };
        if !(scale.is_finite() && scale > 0.0) {
            return Err(ReplicateError::Scale(scale));
        }
        let rscales = match self.rscales.len() {
            0 if self.method == ReplicateMethod::JKn => {
                return Err(ReplicateError::JknWithoutRscales);
            }
            0 => vec![1.0; columns.len()],
            k if k != columns.len() => {
                return Err(ReplicateError::RscalesCount { rscales: k, columns: columns.len() });
            }
            _ => self.rscales.clone(),
        };
        if rscales.iter().any(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(ReplicateError::Rscale);
        }
        if let Some(df) = self.df
            && !(df.is_finite() && df >= 1.0)
        {
            return Err(ReplicateError::Df(df));
        }
        Ok(Replication { method: self.method, columns, scale, rscales, mse: self.mse, df: self.df })
    }
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters.
fn pattern_matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return name == pattern;
    }
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

/// `[tables.columns.NAME]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Column {
    /// What the column holds, in words.
    #[serde(default)]
    pub label: String,
    /// The question the column belongs to; columns of one question are siblings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// Value labels, code → label (TOML keys are strings).
    #[serde(default)]
    pub values: BTreeMap<String, String>,
    /// Codes that mean no answer: excluded from the base, like nulls.
    #[serde(default)]
    pub missing: Vec<f64>,
    /// Ranges of codes `[low, high]` (both included) that mean no answer, as SPSS declares
    /// user-missing ranges.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_ranges: Vec<[f64; 2]>,
    /// The code set that `extractShare` counts.
    #[serde(default)]
    pub share: Vec<f64>,
    /// The answer scale `[min, max]`, when the labels do not span it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<[f64; 2]>,
    /// The rows the question is asked of, when routing asks it of fewer than everyone
    /// (satisfaction asked only of purchasers): the population of the rows that answer it,
    /// whatever the cited base is named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub universe: Option<Universe>,
}

/// `universe = { name = "…", filter = "…" }` of a column: who the question is asked of. The
/// answer audit reads a sentence's population against the base *and* this
/// (`Among purchasers, 69% are satisfied` under a base of all adults), and `catalog check`
/// proves on every row that the column holds no answer outside the filter.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Universe {
    /// Who, in words (`Purchasers of the brand`): the words the audit reads.
    pub name: String,
    /// Other names of the same people.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// SQL filter selecting them (trusted: written by the data-layer owner), on other columns.
    pub filter: String,
}

impl Column {
    /// Labelled codes in ascending order, missing codes left out. Keys that are not numbers
    /// are reported by `catalog check`.
    pub fn codes(&self) -> Vec<(f64, String)> {
        let mut codes: Vec<(f64, String)> = self
            .values
            .iter()
            .filter_map(|(k, v)| k.trim().parse::<f64>().ok().map(|c| (c, v.clone())))
            .filter(|(c, _)| !self.is_missing(*c))
            .collect();
        codes.sort_by(|a, b| a.0.total_cmp(&b.0));
        codes
    }

    /// Whether a code means no answer (a missing code, or inside a missing range).
    pub fn is_missing(&self, code: f64) -> bool {
        self.missing.contains(&code) || self.missing_ranges.iter().any(|[lo, hi]| *lo <= code && code <= *hi)
    }

    /// The label of a code, if declared.
    pub fn label_of(&self, code: f64) -> Option<&str> {
        self.values.iter().find(|(k, _)| k.trim().parse::<f64>().ok() == Some(code)).map(|(_, v)| v.as_str())
    }

    /// The answer scale: declared, or spanned by the labelled codes.
    pub fn scale(&self) -> Option<[f64; 2]> {
        self.scale.or_else(|| {
            let codes = self.codes();
            Some([codes.first()?.0, codes.last()?.0])
        })
    }
}

/// `[[periods]]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Period {
    /// The name citations use in `period`.
    pub name: String,
    /// Other accepted names (e.g. `W6`).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// SQL filter selecting the period's rows (trusted: written by the data-layer owner).
    pub filter: String,
    /// When it was fielded (ISO-8601 date or interval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fielded: Option<String>,
    /// For a versioned table (Delta Lake): the version its claims are re-run on
    /// (`delta_version = 12`), unless the citation or `--as-of` says otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_version: Option<u64>,
    /// For a versioned table: the moment its claims are re-run as of (RFC 3339): the latest
    /// version committed then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
}

impl Period {
    /// The version the period pins its claims to, if any; both keys at once is an error.
    pub fn pin(&self) -> Result<Option<crate::version::Pin>, PinConflict> {
        use crate::version::Pin;
        match (self.delta_version, &self.as_of) {
            (Some(_), Some(_)) => Err(PinConflict { period: self.name.clone() }),
            (Some(v), None) => Ok(Some(Pin::Version(v))),
            (None, Some(t)) => Ok(Some(Pin::AsOf(t.clone()))),
            (None, None) => Ok(None),
        }
    }
}

/// `[[bases]]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BaseDef {
    /// The name citations use in `base.name`.
    pub name: String,
    /// Other accepted names.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// SQL filter; `{column}` stands for the cited column (quoted).
    pub filter: String,
}

/// `[[breakdowns]]`: cells audited for small bases.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Breakdown {
    /// E.g. `age band`.
    pub name: String,
    /// The cells.
    pub cells: Vec<Cell>,
}

/// One cell of a breakdown.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Cell {
    /// E.g. `65-74`.
    pub name: String,
    /// SQL filter selecting the cell.
    pub filter: String,
}

/// A failed look-up: what was asked, what kind of thing, and the nearest declared names
/// (the JSON report's `unknown_names[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct NotFound {
    /// `study`, `period`, `table`, `column`, `weight`, `base`, `function`, `measure`.
    pub what: &'static str,
    /// The name asked for (shortened for display).
    pub asked: String,
    /// Where it was looked for, e.g. `study "Versant Mega Tracker"`.
    pub scope: String,
    /// Declared names nearest to it, best first (did you mean …?).
    pub suggestions: Vec<String>,
    /// How many names are declared there.
    #[serde(skip)]
    pub declared: usize,
}

impl std::fmt::Display for NotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown {} {:?}", self.what, self.asked)?;
        if !self.scope.is_empty() {
            write!(f, " in {}", self.scope)?;
        }
        match self.suggestions.as_slice() {
            [] if self.declared == 0 => write!(f, " (none is declared)"),
            [] => Ok(()),
            [one] => write!(f, "; did you mean {one:?}?"),
            many => {
                let quoted: Vec<String> = many.iter().map(|s| format!("{s:?}")).collect();
                write!(f, "; did you mean one of {}?", quoted.join(", "))
            }
        }
    }
}

/// Shortens a name for messages, so a 10 MB string never floods a report.
pub fn shorten(s: &str) -> String {
    const MAX: usize = 80;
    if s.len() <= MAX {
        s.to_string()
    } else {
        format!("{}… ({} bytes)", &s[..s.floor_char_boundary(MAX)], s.len())
    }
}

/// Names folded for human matching: lower case, runs of spaces and punctuation as one space.
pub fn fold_human(s: &str) -> String {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The declared names nearest to `asked`, best first (at most 3).
pub fn suggest<'a>(asked: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    // Distances on long strings are costly and meaningless: nothing declared is that long.
    if asked.len() > 200 {
        return Vec::new();
    }
    let a = asked.to_lowercase();
    let mut scored: Vec<(f64, String)> = names
        .into_iter()
        .map(|n| {
            let score = strsim::jaro_winkler(&a, &n.to_lowercase());
            let bonus =
                if n.to_lowercase().contains(&a) || a.contains(&n.to_lowercase()) { 0.1 } else { 0.0 };
            (score + bonus, n.to_string())
        })
        .filter(|(s, _)| *s >= 0.75)
        .collect();
    scored.sort_by(|x, y| y.0.total_cmp(&x.0).then_with(|| x.1.cmp(&y.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, n)| n).collect()
}

fn not_found<'a>(
    what: &'static str,
    asked: &str,
    scope: String,
    names: impl IntoIterator<Item = &'a str> + Clone,
) -> NotFound {
    NotFound {
        what,
        asked: shorten(asked),
        scope,
        declared: names.clone().into_iter().count(),
        suggestions: suggest(asked, names),
    }
}

impl Catalog {
    /// Loads every `study.toml` in `root` and in its immediate sub-folders. Only a missing or
    /// unreadable `root` is an error; a study file that cannot be used is kept in
    /// [`Catalog::broken`] and fails only the claims on it.
    pub fn load(root: &Path) -> Result<Catalog, LoadError> {
        if !root.is_dir() {
            return Err(LoadError::NoFolder(root.to_path_buf()));
        }
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
            .map_err(|source| LoadError::ReadFolder { folder: root.to_path_buf(), source })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        let mut catalog = Catalog { root: root.to_path_buf(), ..Catalog::default() };
        for dir in std::iter::once(root.to_path_buf()).chain(dirs) {
            let file = dir.join("study.toml");
            // Only a regular file is read: a FIFO or device would block or never end.
            let meta = std::fs::metadata(&file);
            let regular = meta.as_ref().is_ok_and(|m| m.is_file() && m.len() <= MAX_STUDY_BYTES);
            let found = match meta {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => Err(format!("cannot be read: {e}")),
                Ok(m) if !m.is_file() => Err("is not a regular file".to_string()),
                Ok(m) if m.len() > MAX_STUDY_BYTES => {
                    Err(format!("is too large: {} bytes (at most {MAX_STUDY_BYTES})", m.len()))
                }
                Ok(_) => std::fs::read_to_string(&file)
                    .map_err(|e| format!("cannot be read: {e}"))
                    .and_then(|text| Study::parse(&text, &file).map_err(|e| e.to_string())),
            };
            match found {
                Ok(study) => catalog.studies.push(study),
                Err(error) => {
                    let names = if regular { declared_names(&file) } else { Vec::new() };
                    catalog.broken.push(Broken { file, names, error });
                }
            }
        }
        catalog.studies.sort_by(|a, b| a.study.name.cmp(&b.study.name));
        Ok(catalog)
    }

    /// Every name (folded) that belongs to more than one study, with the owners' names and
    /// files: `catalog check` fails on these, and a citation naming one is UNVERIFIABLE.
    pub fn ambiguities(&self) -> Vec<(String, Vec<(String, PathBuf)>)> {
        let mut owners: BTreeMap<String, Vec<(String, PathBuf)>> = BTreeMap::new();
        let entries = self
            .studies
            .iter()
            .map(|s| (s.study.name.clone(), s.file.clone(), s.names().cloned().collect::<Vec<_>>()))
            .chain(
                self.broken
                    .iter()
                    .filter_map(|b| Some((b.names.first()?.clone(), b.file.clone(), b.names.clone()))),
            );
        for (name, file, names) in entries {
            let mut keys: Vec<String> = names.iter().map(|n| fold_human(n)).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                owners.entry(k).or_default().push((name.clone(), file.clone()));
            }
        }
        owners.into_iter().filter(|(_, o)| o.len() > 1).collect()
    }

    /// The study a citation names, by name or alias. A name that more than one study answers
    /// to is never resolved to one of them; a name of a broken study says why it is broken.
    pub fn study(&self, name: &str) -> Result<&Study, StudyError> {
        let f = fold_human(name);
        let studies: Vec<&Study> =
            self.studies.iter().filter(|s| s.names().any(|n| fold_human(n) == f)).collect();
        let broken: Vec<&Broken> =
            self.broken.iter().filter(|b| b.names.iter().any(|n| fold_human(n) == f)).collect();
        match (studies.as_slice(), broken.as_slice()) {
            ([one], []) => Ok(*one),
            ([], [b]) => Err(StudyError::Broken {
                asked: name.to_string(),
                file: b.file.clone(),
                error: b.error.clone(),
            }),
            ([], []) => Err(StudyError::NotFound {
                missing: not_found(
                    "study",
                    name,
                    format!("data folder {}", self.root.display()),
                    self.studies
                        .iter()
                        .flat_map(|s| std::iter::once(&s.study.name).chain(&s.study.aliases))
                        .map(String::as_str),
                ),
                unreadable: self
                    .broken
                    .iter()
                    .filter(|b| b.names.is_empty())
                    .map(|b| b.file.clone())
                    .collect(),
            }),
            _ => Err(StudyError::Ambiguous {
                asked: name.to_string(),
                candidates: studies
                    .iter()
                    .map(|s| (s.study.name.clone(), s.file.clone()))
                    .chain(broken.iter().map(|b| (b.names[0].clone(), b.file.clone())))
                    .collect(),
            }),
        }
    }
}

/// The study name and aliases a `study.toml` declares, read as loosely as possible (for a file
/// that is not a valid study): empty when even that fails.
fn declared_names(file: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(file) else { return Vec::new() };
    let Ok(table) = toml::from_str::<toml::Table>(&text) else { return Vec::new() };
    let Some(header) = table.get("study").and_then(|s| s.as_table()) else { return Vec::new() };
    let Some(name) = header.get("name").and_then(|n| n.as_str()) else { return Vec::new() };
    let aliases = header.get("aliases").and_then(|a| a.as_array()).into_iter().flatten();
    std::iter::once(name.to_string()).chain(aliases.filter_map(|a| a.as_str().map(String::from))).collect()
}

impl Study {
    /// Reads and parses one `study.toml`; errors name the file and the entry.
    pub fn load(file: &Path) -> Result<Study, StudyLoadError> {
        let text = std::fs::read_to_string(file)
            .map_err(|source| StudyLoadError::Read { file: file.to_path_buf(), source })?;
        Study::parse(&text, file).map_err(|source| StudyLoadError::Parse { file: file.to_path_buf(), source })
    }

    /// Parses the text of a `study.toml`; errors name the entry and line, not the file.
    pub fn parse(text: &str, file: &Path) -> Result<Study, StudyParseError> {
        let mut study: Study = toml::from_str(text).map_err(StudyParseError::Toml)?;
        study.file = file.to_path_buf();
        let filters = study.periods.iter().map(|p| &p.filter).chain(study.bases.iter().map(|b| &b.filter));
        let cells = study.cells().map(|(_, c)| &c.filter);
        study.oversized = filters
            .chain(cells)
            .filter_map(|f| check_filter_size(f).err().map(|e| (f.clone(), e.to_string())))
            .collect();
        study.check_connections()?;
        study.record_declared_keys(text);
        Ok(study)
    }

    /// Every table's `connection` is declared, and no table location holds a password (a
    /// password belongs in the environment, through a `[connections]` entry).
    fn check_connections(&self) -> Result<(), ConnectionError> {
        for t in &self.tables {
            if let Some(name) = &t.connection
                && !self.connections.contains_key(name)
            {
                return Err(ConnectionError::Undeclared {
                    table: t.name.clone(),
                    connection: name.clone(),
                    declared: self.connections.keys().cloned().collect(),
                });
            }
            if url_scheme(&t.path).is_some_and(|s| s == "postgres" || s == "postgresql")
                && location_has_password(&t.path)
            {
                return Err(ConnectionError::PasswordInPath { table: t.name.clone() });
            }
        }
        for (name, c) in &self.connections {
            let valid = !c.dsn_env.is_empty()
                && c.dsn_env.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !c.dsn_env.as_bytes()[0].is_ascii_digit();
            if !valid {
                return Err(ConnectionError::BadVariable {
                    connection: name.clone(),
                    dsn_env: c.dsn_env.clone(),
                });
            }
        }
        Ok(())
    }

    /// Notes, for each SPSS table, the keys `study.toml` writes for each of its columns: the
    /// engine fills the others from the file's dictionary (`sav::adopt_dictionaries`), which
    /// needs the declaration as written, not as parsed with its defaults.
    fn record_declared_keys(&mut self, text: &str) {
        if !self.tables.iter().any(|t| is_sav(Path::new(&t.path))) {
            return;
        }
        let raw: toml::Table = toml::from_str(text).unwrap_or_default();
        let raw_tables = raw.get("tables").and_then(|t| t.as_array()).cloned().unwrap_or_default();
        for (i, t) in self.tables.iter_mut().enumerate() {
            if !is_sav(Path::new(&t.path)) {
                continue;
            }
            t.declared_keys = raw_tables
                .get(i)
                .and_then(|t| t.get("columns"))
                .and_then(|c| c.as_table())
                .map(|cols| {
                    cols.iter()
                        .map(|(name, c)| {
                            let keys = c.as_table().map(|c| c.keys().cloned().collect()).unwrap_or_default();
                            (name.clone(), keys)
                        })
                        .collect()
                })
                .unwrap_or_default();
        }
    }

    /// Why a filter of this study is past the size limits ([`check_filter_size`]), if it is.
    pub fn oversized(&self, filter: &str) -> Option<&str> {
        self.oversized.get(filter).map(String::as_str)
    }

    /// Every breakdown cell, with its breakdown, in declared order.
    pub fn cells(&self) -> impl Iterator<Item = (&Breakdown, &Cell)> {
        self.breakdowns.iter().flat_map(|b| b.cells.iter().map(move |c| (b, c)))
    }

    /// Why the study declares more breakdown cells than are audited ([`MAX_CELLS`]), if it
    /// does: `declares 300 breakdown cells; at most 256 are supported`.
    pub fn too_many_cells(&self) -> Option<String> {
        let n = self.cells().count();
        (n > MAX_CELLS).then(|| format!("declares {n} breakdown cells; at most {MAX_CELLS} are supported"))
    }

    /// The study's name and its aliases.
    pub fn names(&self) -> impl Iterator<Item = &String> {
        std::iter::once(&self.study.name).chain(&self.study.aliases)
    }

    /// The folder relative paths are resolved against.
    pub fn dir(&self) -> &Path {
        self.file.parent().unwrap_or(Path::new("."))
    }

    fn scope(&self) -> String {
        format!("study {:?}", self.study.name)
    }

    /// The table a citation names.
    pub fn table(&self, name: &str) -> Result<&Table, NotFound> {
        self.tables.iter().find(|t| t.name == name).ok_or_else(|| {
            not_found("table", name, self.scope(), self.tables.iter().map(|t| t.name.as_str()))
        })
    }

    /// The period a citation names, by name or alias.
    pub fn period(&self, name: &str) -> Result<&Period, NotFound> {
        let f = fold_human(name);
        self.periods
            .iter()
            .find(|p| fold_human(&p.name) == f || p.aliases.iter().any(|a| fold_human(a) == f))
            .ok_or_else(|| {
                not_found("period", name, self.scope(), self.periods.iter().map(|p| p.name.as_str()))
            })
    }

    /// The base a citation names, by name or alias.
    pub fn base(&self, name: &str) -> Result<&BaseDef, NotFound> {
        let f = fold_human(name);
        self.bases
            .iter()
            .find(|b| fold_human(&b.name) == f || b.aliases.iter().any(|a| fold_human(a) == f))
            .ok_or_else(|| not_found("base", name, self.scope(), self.bases.iter().map(|b| b.name.as_str())))
    }

    /// The period before and after `period`, in declared order.
    pub fn neighbours(&self, period: &Period) -> (Option<&Period>, Option<&Period>) {
        let i = self.periods.iter().position(|p| p.name == period.name);
        match i {
            Some(i) => (i.checked_sub(1).map(|j| &self.periods[j]), self.periods.get(i + 1)),
            None => (None, None),
        }
    }
}

impl Table {
    /// The weight a citation names: only declared weights are accepted.
    pub fn weight(&self, name: &str) -> Result<&str, NotFound> {
        self.weights.iter().find(|w| *w == name).map(String::as_str).ok_or_else(|| {
            not_found(
                "weight",
                name,
                format!("table {:?}", self.name),
                self.weights.iter().map(String::as_str),
            )
        })
    }

    /// The table's files: the path resolved against the study folder (a glob stays a glob); a
    /// URL (`s3://…`) is the location itself, never joined onto the folder.
    pub fn location(&self, study: &Study) -> PathBuf {
        if let Some(name) = &self.connection {
            // Checked when the study is parsed: the entry exists.
            let var = study.connections.get(name).map(|c| c.dsn_env.as_str()).unwrap_or_default();
            return PathBuf::from(format!("{CONNECTION_SCHEME}://{var}/{}", self.path));
        }
        if url_scheme(&self.path).is_some() {
            return PathBuf::from(&self.path);
        }
        study.dir().join(&self.path)
    }

    /// The metadata of a column (default when undeclared).
    pub fn column_meta(&self, name: &str) -> Column {
        self.columns.get(name).cloned().unwrap_or_default()
    }

    /// Columns of the same question as `column`, in natural order (`s14r10` after `s14r9`),
    /// `column` left out.
    pub fn siblings(&self, column: &str) -> Vec<&str> {
        self.nearest_siblings(column, usize::MAX).0
    }

    /// At most `k` columns of the same question as `column`, the nearest to it in natural order
    /// first taken (an agent that read the wrong column of a grid most likely read a neighbour),
    /// returned in natural order; and how many siblings there are in all.
    pub fn nearest_siblings(&self, column: &str, k: usize) -> (Vec<&str>, usize) {
        let Some(q) = self.columns.get(column).and_then(|c| c.question.as_deref()) else {
            return (Vec::new(), 0);
        };
        let questions = self.questions.get_or_init(|| {
            let mut by: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for (name, c) in &self.columns {
                if let Some(q) = &c.question {
                    by.entry(q.clone()).or_default().push(name.clone());
                }
            }
            for names in by.values_mut() {
                names.sort_by_cached_key(|n| natural_key(n));
            }
            by
        });
        let Some(all) = questions.get(q) else { return (Vec::new(), 0) };
        let total = all.len().saturating_sub(1);
        let at = all.iter().position(|n| n == column).unwrap_or(0);
        // A window of k around the column, shifted inward at either end.
        let lo = at.saturating_sub(k / 2).min(all.len().saturating_sub(k.saturating_add(1)));
        let hi = lo.saturating_add(k).saturating_add(1).min(all.len());
        let out = all[lo..hi].iter().filter(|n| *n != column).map(String::as_str).take(k).collect();
        (out, total)
    }

    /// Drops what was derived from `columns` (call after editing them: adopting an SPSS
    /// dictionary).
    pub fn columns_changed(&mut self) {
        self.questions = std::sync::OnceLock::new();
    }
}

/// The scheme of a table location written as a URL (`s3` of `s3://bucket/key`), lowercased;
/// `None` for a path on disk (a Windows drive letter has no `//` after its colon).
pub fn url_scheme(location: &str) -> Option<String> {
    let (scheme, rest) = location.split_once("://")?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    (valid && !rest.is_empty()).then(|| scheme.to_ascii_lowercase())
}

/// Whether a database URL (`postgres://user:password@host/db`) holds a password: a `:` in the
/// part before the host's `@`.
pub fn location_has_password(location: &str) -> bool {
    let Some((_, rest)) = location.split_once("://") else { return false };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    authority.rsplit_once('@').is_some_and(|(user, _)| user.contains(':'))
}

/// A sort key that orders embedded numbers by value.
pub fn natural_key(s: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut num: Option<u64> = None;
    for c in s.chars() {
        if let Some(d) = c.to_digit(10) {
            num = Some(num.unwrap_or(0).saturating_mul(10).saturating_add(d as u64));
        } else {
            if let Some(n) = num.take() {
                out.push((std::mem::take(&mut text), n));
            }
            text.push(c);
        }
    }
    out.push((text, num.unwrap_or(0)));
    out
}

/// Most bytes a catalog filter may have.
pub const MAX_FILTER_BYTES: usize = 64 * 1024;
/// Most operators plus nesting levels a catalog filter may have. Planning and evaluating an
/// expression recurses on its depth (here and in DataFusion), so an unbounded filter could
/// overflow the stack; 256 leaves a wide margin on the engine's threads and in a debug build.
pub const MAX_FILTER_DEPTH: usize = 256;

/// Checks a catalog filter's size before anything parses it into a tree: at most
/// [`MAX_FILTER_BYTES`], and at most [`MAX_FILTER_DEPTH`] operators and nesting levels (a bound
/// on the depth of its expression tree, counted on its tokens, so nothing recursive runs first).
pub fn check_filter_size(sql: &str) -> Result<(), FilterSizeError> {
    use sqlparser::dialect::GenericDialect;
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, Tokenizer};
    if sql.len() > MAX_FILTER_BYTES {
        return Err(FilterSizeError::TooLarge { bytes: sql.len() });
    }
    let tokens = Tokenizer::new(&GenericDialect {}, sql)
        .tokenize()
        .map_err(|e| FilterSizeError::Tokens(e.to_string()))?;
    let (mut ops, mut nesting, mut deepest) = (0usize, 0usize, 0usize);
    for t in &tokens {
        match t {
            Token::LParen | Token::LBracket | Token::LBrace => {
                nesting += 1;
                deepest = deepest.max(nesting);
            }
            Token::RParen | Token::RBracket | Token::RBrace => nesting = nesting.saturating_sub(1),
            Token::Whitespace(_) | Token::Comma | Token::Period | Token::EOF | Token::Number(..) => {}
            Token::Word(w)
                if w.quote_style.is_some()
                    || matches!(
                        w.keyword,
                        Keyword::NoKeyword | Keyword::TRUE | Keyword::FALSE | Keyword::NULL
                    ) => {}
            Token::Word(_) => ops += 1,
            t if t.to_string().starts_with(['\'', '"']) => {}
            _ => ops += 1,
        }
    }
    let depth = ops + deepest;
    if depth > MAX_FILTER_DEPTH {
        return Err(FilterSizeError::TooDeep { operators: ops, nesting: deepest });
    }
    Ok(())
}

/// The SQL identifier for a column: always quoted, quotes doubled, so no name can escape it.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A base filter with `{column}` replaced by the cited column's quoted identifier.
pub fn base_filter(base: &BaseDef, column: &str) -> String {
    base.filter.replace("{column}", &quote_ident(column))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_locations_are_told_from_paths() {
        assert_eq!(url_scheme("s3://bucket/versant.parquet").as_deref(), Some("s3"));
        assert_eq!(url_scheme("HTTPS://host/x.parquet").as_deref(), Some("https"));
        assert_eq!(url_scheme("versant_flat.parquet"), None);
        assert_eq!(url_scheme("C:\\data\\x.parquet"), None);
        assert_eq!(url_scheme("data/odd://name.parquet"), None);
        assert_eq!(url_scheme("s3://"), None);
        let study = Study::parse(
            "[study]\nname = \"S\"\n[[tables]]\nname = \"t\"\npath = \"gs://b/t.parquet\"\n",
            Path::new("/data/s/study.toml"),
        )
        .unwrap();
        assert_eq!(study.tables[0].location(&study), PathBuf::from("gs://b/t.parquet"), "never joined");
    }

    #[test]
    fn a_connection_names_its_variable_and_a_password_is_refused() {
        let parse =
            |t: &str| Study::parse(&format!("[study]\nname = \"S\"\n{t}"), Path::new("/d/s/study.toml"));
        let study = parse(
            "[connections.w]\ndsn_env = \"W_DSN\"\n[[tables]]\nname = \"t\"\nconnection = \"w\"\npath = \"public.t\"\n",
        )
        .unwrap();
        assert_eq!(study.tables[0].location(&study), PathBuf::from("postgres-env://W_DSN/public.t"));
        let e =
            parse("[[tables]]\nname = \"t\"\nconnection = \"nope\"\npath = \"t\"\n").unwrap_err().to_string();
        assert!(e.contains("names connection \"nope\", which [connections] does not declare"), "{e}");
        let e = parse("[[tables]]\nname = \"t\"\npath = \"postgres://u:hunter2@h/db?table=t\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("holds a password") && !e.contains("hunter2"), "{e}");
        assert!(parse("[[tables]]\nname = \"t\"\npath = \"postgres://u@h:5432/db?table=t\"\n").is_ok());
        let e = parse("[connections.w]\ndsn_env = \"W-DSN; rm\"\n").unwrap_err().to_string();
        assert!(e.contains("is not an environment variable's name"), "{e}");
    }

    /// A table whose question `q` has columns `c1..=cN` (and one column of another question).
    fn grid(n: usize) -> Table {
        let mut toml =
            String::from("[study]\nname = \"S\"\n[[tables]]\nname = \"t\"\npath = \"t.parquet\"\n");
        for i in (1..=n).rev() {
            toml.push_str(&format!("[tables.columns.c{i}]\nquestion = \"q\"\n"));
        }
        toml.push_str("[tables.columns.other]\nquestion = \"p\"\n");
        Study::parse(&toml, Path::new("/data/s/study.toml")).unwrap().tables.remove(0)
    }

    #[test]
    fn siblings_are_the_question_in_natural_order_and_the_nearest_are_a_window() {
        let t = grid(12);
        assert_eq!(t.siblings("c2"), ["c1", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "c10", "c11", "c12"]);
        assert_eq!(t.siblings("other"), Vec::<&str>::new(), "alone in its question");
        assert_eq!(t.nearest_siblings("c6", 4), (vec!["c4", "c5", "c7", "c8"], 11));
        // At either end the window shifts inward and still holds k.
        assert_eq!(t.nearest_siblings("c1", 3), (vec!["c2", "c3", "c4"], 11));
        assert_eq!(t.nearest_siblings("c12", 3), (vec!["c9", "c10", "c11"], 11));
        assert_eq!(t.nearest_siblings("c5", 100).0.len(), 11, "fewer than k: all of them");
        assert_eq!(t.nearest_siblings("nope", 3), (Vec::<&str>::new(), 0));
    }

    #[test]
    fn a_wide_question_gives_k_nearest_of_all() {
        // 20,000 columns of one question (a hostile catalog): each answer is k columns, the
        // total counted in full.
        let t = grid(20_000);
        let mut seen = 0;
        for i in (1..=20_000).step_by(97) {
            let (near, total) = t.nearest_siblings(&format!("c{i}"), 16);
            assert_eq!((near.len(), total), (16, 19_999));
            seen += 1;
        }
        assert!(seen > 200);
    }

    #[test]
    fn quoting_cannot_be_escaped() {
        assert_eq!(quote_ident(r#"s14r5"; DROP TABLE x; --"#), r#""s14r5""; DROP TABLE x; --""#);
    }

    #[test]
    fn suggestions_prefer_near_names() {
        let names = ["W5 (March 2026)", "W6 (April 2026)", "W7 (May 2026)"];
        assert_eq!(suggest("W6 (Apr 2026)", names)[0], "W6 (April 2026)");
        assert!(suggest(&"x".repeat(10_000_000), names).is_empty());
    }

    #[test]
    fn filter_size_is_bounded_before_parsing() {
        assert!(check_filter_size("age BETWEEN 18 AND 74 AND \"s14r5\" >= 1").is_ok());
        assert!(check_filter_size(&format!("wave IN ({})", vec!["1"; 5000].join(", "))).is_ok());
        let ors = vec!["wave = 1"; 1000].join(" OR ");
        let e = check_filter_size(&ors).unwrap_err().to_string();
        assert!(e.contains("too deep") && e.contains("256"), "{e}");
        let nested = format!("{}wave = 1{}", "(".repeat(300), ")".repeat(300));
        assert!(check_filter_size(&nested).unwrap_err().to_string().contains("300 nesting levels"));
        assert!(
            check_filter_size(&"x".repeat(MAX_FILTER_BYTES + 1)).unwrap_err().to_string().contains("bytes")
        );
    }

    #[test]
    fn replicate_declarations_take_r_svrepdesign_defaults() {
        let decl = |method, rho, rscales: Vec<f64>| Replicates {
            columns: "rep_*".into(),
            method,
            scale: None,
            rscales,
            rho,
            mse: false,
            df: None,
        };
        let names =
            |n: usize| (1..=n).map(|i| format!("rep_{i}")).chain(["pw".to_string(), "rep".to_string()]);
        let resolve = |d: &Replicates, n| {
            d.resolve(names(n).collect::<Vec<_>>().iter().map(String::as_str)).map_err(|e| e.to_string())
        };
        // R's as.svrepdesign prints: JK1 over 15 PSUs 0.9333333333333333; BRR and Fay (ρ = 0.3)
        // with 104 replicates 0.009615384615384616 and 0.0196232339089482.
        let jk1 = resolve(&decl(ReplicateMethod::JK1, None, vec![]), 15).unwrap();
        assert_eq!((jk1.columns.len(), jk1.scale, jk1.df), (15, 0.9333333333333333, None));
        assert_eq!(jk1.columns[9], "rep_10");
        assert_eq!(
            resolve(&decl(ReplicateMethod::BRR, None, vec![]), 104).unwrap().scale,
            0.009615384615384616
        );
        // svrepdesign(type = "bootstrap") with 50 columns: scale 1/49 = 0.02040816326530612,
        // rscales 1 (as.svrepdesign's own bootstrap weights carry another scale, declared).
        let boot = resolve(&decl(ReplicateMethod::Bootstrap, None, vec![]), 50).unwrap();
        assert_eq!((boot.scale, boot.rscales), (0.02040816326530612, vec![1.0; 50]));
        let fay = resolve(&decl(ReplicateMethod::Fay, Some(0.3), vec![]), 104).unwrap();
        assert!((fay.scale / 0.0196232339089482 - 1.0).abs() < 1e-15);
        assert!(resolve(&decl(ReplicateMethod::Fay, None, vec![]), 104).unwrap_err().contains("rho"));
        assert!(resolve(&decl(ReplicateMethod::JKn, None, vec![]), 4).unwrap_err().contains("rscales"));
        assert!(
            resolve(&decl(ReplicateMethod::JKn, None, vec![0.5; 3]), 4).unwrap_err().contains("3 rscales")
        );
        let none = Replicates { columns: "w*x".into(), ..decl(ReplicateMethod::JK1, None, vec![]) };
        assert!(resolve(&none, 4).unwrap_err().contains("no column matches"));
    }

    #[test]
    fn natural_order_of_columns() {
        let mut v = vec!["s14r10", "s14r2", "s14r1"];
        v.sort_by_key(|n| natural_key(n));
        assert_eq!(v, ["s14r1", "s14r2", "s14r10"]);
    }
}
