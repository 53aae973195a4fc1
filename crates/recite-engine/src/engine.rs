//! The engine: DataFusion, in process. Every estimate of every job on one table is computed in
//! ONE scan of that table, by one of two plans:
//!
//! - the grouped plan (`grouped`), when every cited column holds integer codes and there are
//!   at most `grouped::MAX_COLUMNS` of them: DataFusion evaluates each filter once per row as a
//!   boolean, and the flags and codes are packed into keys and reduced to the count, Σw and
//!   Σw² per code, period, base and cell, from which every sum is taken (in process, or as one
//!   DataFusion plan any executor runs: [`Reduction`]); its cost depends on the columns cited,
//!   not on the number of claims;
//! - otherwise the summed plan (`summed`): each needed sum one `SUM(CASE WHEN … THEN … END)`
//!   aggregate of a single aggregate plan (the CASE form measured fastest on DataFusion 55; see
//!   docs/design.md), identical aggregates from different jobs computed once.
//!
//! `tests/it/engine_plans.rs` proves the two plans agree.
//!
//! Names reach DataFusion only as column expressions built from the catalog (`ident`), values
//! only as literals. The SQL that is parsed is the catalog's own period, base and cell filters,
//! parsed as expressions (never statements) against the table's schema.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type, Schema};
use datafusion::common::DFSchema;
use datafusion::functions_aggregate::expr_fn::{count, max, sum};
use datafusion::logical_expr::{Expr, ExprSchemable};
use datafusion::prelude::{
    CsvReadOptions, ParquetReadOptions, SessionConfig, SessionContext, cast, ident, lit, when,
};
use rayon::prelude::*;

use crate::catalog::{self, Study};
use crate::resolve::{self, Rows, Schemas};
use crate::scan::Scan;
use grouped::Accumulated;
use recite_core::version::{Found, Pin};

/// How the grouped scan reduces the rows DataFusion reads to exact sums per group
/// (docs/design.md). Both give the same sums, so the same reports, byte for byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reduction {
    /// recite's own reducer, one task per partition of the scan's stream: only in this process.
    #[default]
    InProcess,
    /// One DataFusion plan of built-in functions (a cross join with the cited columns' indices
    /// and one `GROUP BY` of exact `Decimal256` sums), which any DataFusion executor runs,
    /// a Ballista cluster's too.
    Plan,
}

impl std::str::FromStr for Reduction {
    type Err = UnknownReduction;

    fn from_str(s: &str) -> Result<Reduction, UnknownReduction> {
        match s {
            "in-process" => Ok(Reduction::InProcess),
            "plan" => Ok(Reduction::Plan),
            other => Err(UnknownReduction(other.to_string())),
        }
    }
}

/// A name that is no [`Reduction`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown reduction {0:?} (in-process or plan)")]
pub struct UnknownReduction(pub String);

/// Why a job's grouped scan must be reduced in this process, whatever [`Reduction`] says, or
/// `None` when a plan can reduce it: the rank of a subgroup's replicate weights (R's `degf`,
/// `engine::gram`) is accumulated from the rows as they stream past, not from grouped sums.
/// Under [`Reduction::Plan`] such a table's scan is reduced in process; a cluster cannot run it.
pub fn needs_in_process(job: &Job) -> Option<String> {
    gram::wanted(job).then(|| {
        "the rank of its replicate weights (R's degf) is accumulated from the rows in process".to_string()
    })
}

/// The catalog name of the table a scan's jobs read.
fn table_of(jobs: &[&Job]) -> String {
    jobs.first().map(|j| j.rows.table.clone()).unwrap_or_default()
}

/// The jobs of one scan: a table's files and design, and which jobs read it.
type ScanGroup = ((PathBuf, Option<(String, String)>), Vec<usize>);
/// What one scan returns: each job's outcome by job index, what was read, and the base sums its
/// grouped scans accumulated.
type ScanResult<'a> = (Vec<(usize, Result<Outcome, EngineError>)>, ScanStats, Vec<Accumulated<'a>>);
/// Each job's outcome, in the order of the jobs.
type Outcomes = Vec<Result<Outcome, EngineError>>;
/// What a scan returns: each job's outcome in the order of the jobs, what was read, and the base
/// sums its grouped scans accumulated, which the cache keeps ([`Engine::run_cached`]).
type Scanned<'a> = (Outcomes, ScanStats, Vec<Accumulated<'a>>);

/// Why a whole scan failed: a fault that fails every job of the table (or the run), or an
/// error met while reading the data that a declaration may have caused.
#[derive(Debug)]
pub(crate) enum ScanError {
    /// Every job of the table fails with this.
    Fatal(EngineError),
    /// Some declaration (or the data) failed while the table was read.
    Data(String),
}

impl From<EngineError> for ScanError {
    fn from(e: EngineError) -> Self {
        ScanError::Fatal(e)
    }
}

/// Sorts a DataFusion error met while scanning: faults of the engine itself are internal,
/// anything else may come from a declaration or the data.
pub(crate) fn scan_error(e: &datafusion::error::DataFusionError) -> ScanError {
    use datafusion::error::DataFusionError as E;
    if let Some(fault) = remote::cluster_fault(e) {
        return ScanError::Fatal(EngineError::Cluster(fault.to_string()));
    }
    match e.find_root() {
        E::Internal(_) | E::ExecutionJoin(_) | E::ResourcesExhausted(_) => {
            ScanError::Fatal(EngineError::Internal(e.strip_backtrace()))
        }
        _ => ScanError::Data(e.strip_backtrace()),
    }
}

/// `rt.block_on(work)`, given up when the calling thread's scan deadline passes
/// ([`recite_core::scan::with_deadline`]): the work is dropped, which aborts its tasks and
/// DataFusion's streams, and the scan fails as fatal (every job of it).
pub(crate) fn block_on_within<T>(
    rt: &tokio::runtime::Runtime,
    work: impl std::future::Future<Output = Result<T, datafusion::error::DataFusionError>>,
) -> Result<T, datafusion::error::DataFusionError> {
    match recite_core::scan::deadline() {
        None => rt.block_on(work),
        Some(at) => rt.block_on(async {
            tokio::time::timeout_at(at.into(), work).await.unwrap_or_else(|_| {
                Err(datafusion::error::DataFusionError::ResourcesExhausted(
                    recite_core::scan::PAST_DEADLINE.into(),
                ))
            })
        }),
    }
}

/// The first weight recite does not sum ([`grouped::LARGEST_WEIGHT`]), in words. Sums scale
/// with each column's largest weight, so any magnitude below is summed as exactly; the bound
/// keeps w², Σw² and the statistics made of them far inside f64.
const LARGEST_WEIGHT: &str = "2^256 (≈ 1.2·10^77)";

/// Checks a weighted job's sums, the same way in both plans, so a claim's verdict never
/// depends on which plan its batch took. (Rows whose weight is too large fail first, in both
/// plans; this catches a sum that is NaN or infinite.)
fn check_weight_sums(weight: Option<&str>, sums: &Sums) -> Result<(), EngineError> {
    let Some(w) = weight else { return Ok(()) };
    let total = sums.totals.first().copied().unwrap_or(0.0);
    let squares = sums.moments.get(&(0, 0)).copied().unwrap_or(0.0);
    if !total.is_finite() || !squares.is_finite() {
        return Err(overflow(w));
    }
    Ok(())
}

fn overflow(weight: &str) -> EngineError {
    EngineError::Weight {
        weight: weight.to_string(),
        error: format!(
            "is too large: some value among the claim's base rows is not under {LARGEST_WEIGHT}, \
             the largest weight recite sums"
        ),
    }
}

fn invalid_weight(weight: &str) -> EngineError {
    EngineError::Weight {
        weight: weight.to_string(),
        error: "has negative, NaN or infinite values among the claim's base rows".to_string(),
    }
}

/// A weight's check from its values over the table ([`Engine::check_weights`]): the count of
/// bad values and the largest of the others.
fn weight_verdict(bad: f64, largest: f64) -> Result<(), WeightCheckError> {
    if bad > 0.0 {
        return Err(WeightCheckError::Bad(bad));
    }
    // The same comparison as both plans' (a weight of 2^256 or more is OVERFLOW).
    if largest < grouped::LARGEST_WEIGHT {
        return Ok(());
    }
    Err(WeightCheckError::TooLarge(largest))
}

/// Why a declared weight cannot weigh claims ([`Engine::check_weight`]); worded to follow "weight
/// NAME".
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WeightCheckError {
    /// Negative, NaN or infinite values (how many).
    #[error("has {0} negative, NaN or infinite value(s): claims whose base includes them are UNVERIFIABLE")]
    Bad(f64),
    /// A value of 2^256 or more (the largest).
    #[error(
        "is too large: its largest value is {0:e}, not under {LARGEST_WEIGHT}, the largest \
         weight recite sums; claims whose base includes it would be UNVERIFIABLE"
    )]
    TooLarge(f64),
    /// The column could not be scanned as numbers (the scan's words).
    #[error("{0}")]
    Unreadable(String),
}

pub mod cache;
pub mod gram;
mod grouped;
pub mod remote;
mod summed;
pub mod universe;

pub use crate::scan::sums;
pub use crate::scan::{
    EngineError, Job, Outcome, PlanChoice, Replicated, Replication, Role, ScanPlan, ScanStats, Sums, Var,
    needed_pairs, vars_for,
};
/// The grouped scan's reduction kernel alone, for `benches/kernel.rs`.
#[doc(hidden)]
pub use grouped::reduce_batches;
pub use remote::{ConnectError, EngineUrl, EngineUrlError};
pub use summed::pred_expr;

struct Registered {
    name: String,
    schema: Arc<Schema>,
    /// The session the table is registered in: this process's, or the cluster's.
    ctx: SessionContext,
}

/// Where a scan runs: in this process, or on the engine's Ballista cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Place {
    Here,
    Cluster,
}

/// How long a PostgreSQL server's snapshot stands for the claims resolved after it.
const POSTGRES_SNAPSHOT_KEPT: std::time::Duration = std::time::Duration::from_secs(1);
/// How long a PostgreSQL server that could not be asked is not asked again.
const POSTGRES_FAILURE_KEPT: std::time::Duration = std::time::Duration::from_secs(60);

/// The versions of Delta tables (and PostgreSQL servers' snapshots) an engine found, by table folder and pin: when the log folder
/// was last modified (the latest only) and the version, or why none.
type KnownVersions = HashMap<(PathBuf, Option<Pin>), (Option<std::time::SystemTime>, Result<Found, String>)>;

/// A DataFusion session with the catalog's tables registered on demand: in this process, or
/// on a Ballista cluster ([`Engine::connect`]).
pub struct Engine {
    rt: tokio::runtime::Runtime,
    ctx: SessionContext,
    tables: Mutex<HashMap<(PathBuf, Place), Arc<Registered>>>,
    /// CSV formats declared by the catalog, by table location (see [`Engine::declare`]).
    csv: Mutex<HashMap<PathBuf, catalog::CsvFormat>>,
    grouped: bool,
    /// How the grouped scan reduces its rows ([`Engine::with_reduction`]).
    reduction: Reduction,
    /// The sufficient-statistics cache, when one is given ([`Engine::with_cache`]).
    cache: Option<cache::Cache>,
    /// The Ballista cluster scans run on, when one is given ([`Engine::connect`]).
    cluster: Option<remote::Cluster>,
    /// Where each table's scans ran on a cluster engine (table → where), for the command to
    /// tell; kept out of the report, which is the same wherever the scans ran.
    placements: Mutex<BTreeMap<String, String>>,
    /// The moment every versioned table is read as of (`--as-of`), over any pin.
    as_of: Option<String>,
    /// The version each Delta table and pin resolved to, so a batch's claims do not each load
    /// the log. What a pin names does not move; the latest does (a server's engine lives long),
    /// so it is kept with its log folder's modification time, which a commit moves.
    versions: Mutex<KnownVersions>,
}

impl Default for Engine {
    fn default() -> Self {
        Self::new()
    }
}

/// Partitions a scan is read in, per thread. DataFusion cuts a file into as many byte ranges
/// and reads each row group in the range holding its midpoint, so ranges and row groups need
/// not line up: with two partitions per thread, the 5M-row tracker's 8 row groups came as 3, 2,
/// 2 and 1, and one thread worked alone for the last 0.35 s of a 0.8 s scan. With eight, every
/// row group of a file of up to 8 × threads of them is a partition of its own, the threads
/// share them evenly, and a partition with no row group costs microseconds (BENCHMARKS.md).
/// Sums are exact integers, so the count never moves a bit of a report.
pub const PARTITIONS_PER_THREAD: usize = 8;

impl Engine {
    /// A session using every core.
    pub fn new() -> Engine {
        Engine::with_threads(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2))
    }

    /// A session of `cores` threads, each scan read in [`PARTITIONS_PER_THREAD`] times as many
    /// partitions (at least 1 thread). Sums are exact integers, so reports are byte-identical
    /// whatever the count (tests/it/scale.rs).
    pub fn with_threads(cores: usize) -> Engine {
        let cores = cores.max(1);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(cores)
            .thread_name("recite-engine")
            // Planning and evaluating expressions recurses on their depth; filters are bounded
            // (catalog::check_filter_size), and this leaves a wide margin for DataFusion.
            .thread_stack_size(ENGINE_STACK)
            .enable_all()
            .build()
            .expect("a tokio runtime can be built");
        let config = SessionConfig::new()
            .with_target_partitions(cores * PARTITIONS_PER_THREAD)
            .with_information_schema(false);
        Engine {
            rt,
            ctx: SessionContext::new_with_config(config),
            tables: Mutex::new(HashMap::new()),
            csv: Mutex::new(HashMap::new()),
            grouped: true,
            reduction: Reduction::default(),
            cache: None,
            cluster: None,
            placements: Mutex::new(BTreeMap::new()),
            as_of: None,
            versions: Mutex::new(HashMap::new()),
        }
    }

    /// An engine that always uses the summed scan (one `SUM(CASE …)` per sum); for tests and
    /// benchmarks that compare the two plans.
    pub fn summed_only() -> Engine {
        Engine::new().with_summed_only()
    }

    /// This engine, always using the summed scan ([`Engine::summed_only`]).
    pub fn with_summed_only(self) -> Engine {
        Engine { grouped: false, ..self }
    }

    /// This engine, reading and writing base sums in `cache` (docs/cache.md).
    pub fn with_cache(self, cache: cache::Cache) -> Engine {
        Engine { cache: Some(cache), ..self }
    }

    /// This engine, reading every versioned table (Delta Lake) as of `moment` (RFC 3339,
    /// `--as-of`): the latest version committed then, whatever a period or citation pins.
    pub fn with_as_of(self, moment: impl Into<String>) -> Engine {
        Engine { as_of: Some(moment.into()), ..self }
    }

    /// The version of the Delta table at `location` that `pin` names (`None`: the latest).
    #[cfg(feature = "delta")]
    pub fn delta_version(
        &self,
        location: &Path,
        pin: Option<&Pin>,
    ) -> Result<Found, crate::delta::VersionError> {
        self.rt.block_on(crate::delta::find(location, pin))
    }

    /// Without the `delta` feature no Delta table is read.
    #[cfg(not(feature = "delta"))]
    pub fn delta_version(
        &self,
        _location: &Path,
        _pin: Option<&Pin>,
    ) -> Result<Found, crate::delta::VersionError> {
        Err(crate::delta::VersionError::NotBuilt)
    }

    /// This engine, reducing grouped scans as `reduction` says. Reports are byte-identical
    /// either way; a job that [`needs_in_process`] reduction gets it under either.
    pub fn with_reduction(self, reduction: Reduction) -> Engine {
        Engine { reduction, ..self }
    }

    /// How this engine reduces grouped scans.
    pub fn reduction(&self) -> Reduction {
        self.reduction
    }

    /// Registers a table's files (once) where its scans run by default, and returns its
    /// internal name and schema.
    fn register(&self, location: &Path) -> Result<Arc<Registered>, EngineError> {
        let place = if self.cluster.is_some() && self.stays_here(location).is_none() {
            Place::Cluster
        } else {
            Place::Here
        };
        self.register_at(location, place)
    }

    /// Registers a table's files (once) in this process's session or the cluster's, and
    /// returns its internal name and schema.
    fn register_at(&self, location: &Path, place: Place) -> Result<Arc<Registered>, EngineError> {
        let table_error = |error: String| EngineError::Table { location: location.to_path_buf(), error };
        let mut tables =
            self.tables.lock().map_err(|_| EngineError::Internal("engine state poisoned".into()))?;
        let key = (location.to_path_buf(), place);
        if let Some(r) = tables.get(&key) {
            return Ok(r.clone());
        }
        let ctx = match (place, &self.cluster) {
            (Place::Cluster, Some(c)) => c.ctx.clone(),
            _ => self.ctx.clone(),
        };
        let text = location.to_string_lossy().to_string();
        let name = format!("t{}", tables.len());
        // CSV readers decode every column of a row, whatever the scan reads (see CSV_CELLS).
        let csv = crate::objstore::without_query(&text).to_lowercase().ends_with(".csv");
        if crate::postgres::is_location(&text) {
            // On a PostgreSQL server: scans pushed down to it, one query per scan.
            self.register_postgres(&ctx, &name, &text).map_err(|e| table_error(e.to_string()))?;
            return self.registered(ctx, &mut tables, key, name, false);
        }
        if let Some(scheme) = catalog::url_scheme(&text) {
            // On object storage: never joined onto the study folder, never looked up on disk.
            self.register_object(&ctx, &name, location, &scheme).map_err(table_error)?;
            return self.registered(ctx, &mut tables, key, name, csv);
        }
        if let Some((root, version)) = crate::delta::of_location(location) {
            // A Delta table, at the version its commit file names (or the latest).
            self.register_delta(&ctx, &name, &root, version).map_err(|e| table_error(e.to_string()))?;
            return self.registered(ctx, &mut tables, key, name, false);
        }
        let is_glob = text.contains(['*', '?', '[']);
        if !is_glob && !location.exists() {
            return Err(table_error("cannot be read: the file does not exist".into()));
        }
        let result = self.rt.block_on(self.register_file(&ctx, &name, location, &text, is_glob));
        result.map_err(|e| table_error(format!("cannot be read: {}", e.strip_backtrace())))?;
        self.registered(ctx, &mut tables, key, name, csv)
    }

    /// Registers a table's files on disk as `name` in `ctx`, read as their [`Format`] says.
    async fn register_file(
        &self,
        ctx: &SessionContext,
        name: &str,
        location: &Path,
        text: &str,
        is_glob: bool,
    ) -> datafusion::error::Result<()> {
        use datafusion::error::DataFusionError;
        match Format::of(location, text, || self.declared_csv(location)) {
            Format::Sav if is_glob => {
                Err(DataFusionError::Plan("an SPSS table names one .sav or .zsav file, not a glob".into()))
            }
            Format::Sav => {
                let table = crate::sav::SavTable::open(location).map_err(DataFusionError::Execution)?;
                ctx.register_table(name, Arc::new(table)).map(|_| ())
            }
            Format::Arrow(ext) => {
                let opts = datafusion::datasource::file_format::options::ArrowReadOptions {
                    file_extension: &ext,
                    ..Default::default()
                };
                ctx.register_arrow(name, text, opts).await
            }
            Format::Csv(format) => {
                let opts = csv_options(format.as_ref())?;
                match format.filter(|f| f.needs_transcoding()) {
                    // Another encoding or a decimal comma: the reader takes a converted copy.
                    Some(_) if is_glob => Err(DataFusionError::Plan(
                        "a CSV table with a declared encoding or decimal comma names one file, not a glob"
                            .into(),
                    )),
                    Some(f) => {
                        let copy = crate::transcode::cached_copy(location, &f, opts.delimiter)
                            .map_err(|e| DataFusionError::Execution(e.to_string()))?;
                        let copy = copy.to_string_lossy();
                        let schema = csv_schema(ctx, &copy, &opts).await?;
                        ctx.register_csv(name, &copy, opts.schema(&schema)).await
                    }
                    // One file: its schema inferred here, in time linear in its columns.
                    None if !is_glob => {
                        let schema = csv_schema(ctx, text, &opts).await?;
                        ctx.register_csv(name, text, opts.schema(&schema)).await
                    }
                    None => ctx.register_csv(name, text, opts).await,
                }
            }
            Format::Parquet if location.is_dir() => {
                // A folder of Parquet files, hive-partitioned (`wave=6/part-0.parquet`): the
                // partition columns are columns, and a filter on them skips whole folders.
                let opts = ParquetReadOptions::default().table_partition_cols(hive_partitions(location));
                let folder = if text.ends_with('/') { text.to_string() } else { format!("{text}/") };
                ctx.register_parquet(name, &folder, opts).await
            }
            Format::Parquet => ctx.register_parquet(name, text, ParquetReadOptions::default()).await,
        }
    }

    /// Registers a version of a Delta table (`None`: the latest) as `name` in `ctx`.
    #[cfg(feature = "delta")]
    fn register_delta(
        &self,
        ctx: &SessionContext,
        name: &str,
        root: &Path,
        version: Option<u64>,
    ) -> Result<(), crate::delta::VersionError> {
        self.rt.block_on(crate::delta::register(ctx, name, root, version))
    }

    /// Without the `delta` feature a Delta table is refused, saying how to build a recite that
    /// reads it (its folder is never read as plain Parquet: it keeps every version's files).
    #[cfg(not(feature = "delta"))]
    fn register_delta(
        &self,
        _ctx: &SessionContext,
        _name: &str,
        _root: &Path,
        _version: Option<u64>,
    ) -> Result<(), crate::delta::VersionError> {
        Err(crate::delta::VersionError::NotBuilt)
    }

    /// Registers the PostgreSQL table `location` names as `name` in `ctx`.
    #[cfg(feature = "postgres")]
    fn register_postgres(
        &self,
        ctx: &SessionContext,
        name: &str,
        location: &str,
    ) -> Result<(), crate::postgres::PostgresError> {
        let source = crate::postgres::Source::of_location(location)?;
        self.rt.block_on(crate::postgres::register(ctx, name, &source))
    }

    /// Without the `postgres` feature a PostgreSQL table is refused, saying how to build a
    /// recite that reads it.
    #[cfg(not(feature = "postgres"))]
    fn register_postgres(
        &self,
        _ctx: &SessionContext,
        _name: &str,
        _location: &str,
    ) -> Result<(), crate::postgres::PostgresError> {
        Err(crate::postgres::PostgresError::NotBuilt)
    }

    /// What the PostgreSQL server of the table at `location` can say of the data a scan reads
    /// now: its snapshot, as a version that is no version ([`recite_core::version::UNVERSIONED_FORMAT`]).
    #[cfg(feature = "postgres")]
    fn postgres_version(&self, location: &Path) -> Result<Found, crate::postgres::PostgresError> {
        let source = crate::postgres::Source::of_location(&location.to_string_lossy())?;
        let (snapshot, at) = self.rt.block_on(crate::postgres::snapshot(&source))?;
        // xmin:xmax:in-progress; xmax is the first transaction id not yet given out.
        let xmax = snapshot.split(':').nth(1).and_then(|x| x.parse().ok()).unwrap_or(0);
        Ok(Found {
            location: location.to_path_buf(),
            version: xmax,
            committed: at,
            format: recite_core::version::UNVERSIONED_FORMAT,
            snapshot: Some(snapshot),
        })
    }

    /// Without the `postgres` feature no PostgreSQL table is read.
    #[cfg(not(feature = "postgres"))]
    fn postgres_version(&self, _location: &Path) -> Result<Found, crate::postgres::PostgresError> {
        Err(crate::postgres::PostgresError::NotBuilt)
    }

    /// The CSV format the catalog declared for a table ([`Engine::declare`]), if any.
    fn declared_csv(&self, location: &Path) -> Option<catalog::CsvFormat> {
        self.csv.lock().ok().and_then(|m| m.get(location).cloned())
    }

    /// The schema of the table just registered as `name` in `ctx`, remembered under `key`. A
    /// `csv` table wider than [`CSV_CELLS`] allows at the session's batch size is scanned in a
    /// session of its own (the same catalog, runtime and, on a cluster, the same Ballista
    /// session) whose batches hold fewer rows.
    fn registered(
        &self,
        mut ctx: SessionContext,
        tables: &mut HashMap<(PathBuf, Place), Arc<Registered>>,
        key: (PathBuf, Place),
        name: String,
        csv: bool,
    ) -> Result<Arc<Registered>, EngineError> {
        let schema = self
            .rt
            .block_on(ctx.table(name.as_str()))
            .map_err(|e| EngineError::Table {
                location: key.0.clone(),
                error: format!("cannot be read: {}", e.strip_backtrace()),
            })?
            .schema()
            .as_arrow()
            .clone();
        let rows = ctx.state().config().batch_size();
        if csv && schema.fields().len().saturating_mul(rows) > CSV_CELLS {
            ctx = SessionContext::new_with_state(narrow_batches(ctx.state(), schema.fields().len()));
        }
        let reg = Arc::new(Registered { name, schema: Arc::new(schema), ctx });
        tables.insert(key, reg.clone());
        Ok(reg)
    }

    /// Registers a table on object storage as `name` (`objstore`): its store, built from the
    /// environment, on this session's runtime, then a listing table over its objects. An SPSS
    /// file, or a CSV file that needs converting, must be on disk.
    #[cfg(feature = "object-store")]
    fn register_object(
        &self,
        ctx: &SessionContext,
        name: &str,
        location: &Path,
        scheme: &str,
    ) -> Result<(), String> {
        use datafusion::datasource::file_format::options::{ArrowReadOptions, ReadOptions};
        use datafusion::datasource::listing::{ListingTable, ListingTableConfig};
        let text = location.to_string_lossy();
        let text = crate::objstore::without_query(&text);
        if !crate::objstore::SCHEMES.contains(&scheme) {
            return Err(crate::objstore::unsupported(scheme));
        }
        let format = Format::of(Path::new(&*text), &text, || self.declared_csv(location));
        if let Format::Sav = format {
            return Err("is an SPSS file on object storage, which recite cannot read: it reads .sav and \
                        .zsav files from disk only (copy the file to disk, or convert it to Parquet)"
                .into());
        }
        let url = crate::objstore::listing_url(&text).map_err(|e| e.error)?;
        let runtime = ctx.runtime_env();
        crate::objstore::register_stores(&runtime, url.get_url()).map_err(|e| e.error)?;
        let (config, table_options) = (ctx.copied_config(), ctx.copied_table_options());
        let extension = listing_extension(&text);
        let mut options = match &format {
            Format::Csv(declared) => {
                if declared.as_ref().is_some_and(|f| f.needs_transcoding()) {
                    return Err("is a CSV table with a declared encoding or decimal comma, which recite \
                                converts from a file on disk only (copy the file to disk)"
                        .into());
                }
                csv_options(declared.as_ref())
                    .map_err(|e| e.strip_backtrace())?
                    .to_listing_options(&config, table_options)
            }
            Format::Arrow(ext) => ArrowReadOptions { file_extension: ext, ..Default::default() }
                .to_listing_options(&config, table_options),
            // (An SPSS file was refused above.)
            Format::Parquet | Format::Sav => {
                ParquetReadOptions::default().to_listing_options(&config, table_options)
            }
        };
        let state = ctx.state();
        let ignore = state.config_options().execution.listing_table_ignore_subdirectory;
        let objects = self
            .rt
            .block_on(crate::objstore::objects(&runtime, &url, extension, ignore))
            .map_err(|e| format!("cannot be read: {}", e.error))?;
        if objects.is_empty() {
            return Err(if url.is_collection() {
                format!("cannot be read: no {extension} object matches it")
            } else {
                "cannot be read: no such object".to_string()
            });
        }
        if url.is_collection() {
            options = options.with_table_partition_cols(crate::objstore::hive_partitions(&url, &objects));
        }
        let url = url.with_table_ref(name.into());
        self.rt
            .block_on(async {
                let schema = options.infer_schema(&state, &url).await?;
                let config = ListingTableConfig::new(url).with_listing_options(options).with_schema(schema);
                let table = ListingTable::try_new(config)?
                    .with_cache(runtime.cache_manager.get_file_statistic_cache());
                ctx.register_table(name, Arc::new(table)).map(|_| ())
            })
            .map_err(|e| format!("cannot be read: {}", e.strip_backtrace()))
    }

    /// Without the `object-store` feature a URL location is an error that says how to build
    /// a recite that reads it.
    #[cfg(not(feature = "object-store"))]
    fn register_object(
        &self,
        _ctx: &SessionContext,
        _name: &str,
        _location: &Path,
        scheme: &str,
    ) -> Result<(), String> {
        Err(if crate::objstore::SCHEMES.contains(&scheme) {
            crate::objstore::not_built(scheme)
        } else {
            crate::objstore::unsupported(scheme)
        })
    }

    /// The identity of a table on object storage, for the cache (docs/cache.md): per object,
    /// its URL, size, ETag, version and last-modified time, listed from the store. `None`
    /// (nothing cached) when the store cannot be listed, nothing matches, or an object has no
    /// ETag: an entry recite cannot identify is never trusted.
    #[cfg(feature = "object-store")]
    pub(crate) fn object_identity(&self, location: &Path) -> Option<String> {
        let text = location.to_string_lossy();
        let text = crate::objstore::without_query(&text);
        let url = crate::objstore::listing_url(&text).ok()?;
        let runtime = self.ctx.runtime_env();
        crate::objstore::register_stores(&runtime, url.get_url()).ok()?;
        let ignore = self.ctx.state().config_options().execution.listing_table_ignore_subdirectory;
        let objects = self
            .rt
            .block_on(crate::objstore::objects(&runtime, &url, listing_extension(&text), ignore))
            .ok()?;
        if objects.is_empty() {
            return None;
        }
        let store = url.object_store();
        let mut out = String::new();
        for m in &objects {
            let etag = m.e_tag.as_deref()?;
            out.push_str(&format!(
                "{}/{}\tsize {}\tetag {etag}\tversion {}\tmodified {}\n",
                crate::objstore::redact(store.as_str()).trim_end_matches('/'),
                m.location,
                m.size,
                m.version.as_deref().unwrap_or("-"),
                m.last_modified.timestamp_nanos_opt().unwrap_or(i64::MIN),
            ));
        }
        Some(out)
    }

    /// Without the feature no table on object storage is read, so none is identified.
    #[cfg(not(feature = "object-store"))]
    pub(crate) fn object_identity(&self, _location: &Path) -> Option<String> {
        None
    }

    /// Tells the engine how a table's files are written (a CSV format), before its first use.
    pub fn declare(&self, study: &Study, table: &catalog::Table) {
        if let (Some(format), Ok(mut m)) = (&table.csv, self.csv.lock()) {
            m.insert(table.location(study), format.clone());
        }
    }

    /// The schema of the files at `location`.
    pub fn schema_of(&self, location: &Path) -> Result<Arc<Schema>, String> {
        self.register(location).map(|r| r.schema.clone()).map_err(|e| e.to_string())
    }

    /// What `catalog init` needs to know of each column of a table, in one scan folded here:
    /// its type, range, nulls, whether every value is whole, and the distinct values of whole
    /// number columns with at most `max_values` of them. No aggregate is planned: DataFusion
    /// looks each column reference up by name, so planning five per column took time (and
    /// memory) quadratic in a wide table's columns (20,000 columns: minutes, then gigabytes).
    pub fn profile(&self, location: &Path, max_values: usize) -> Result<Vec<ColumnProfile>, String> {
        use futures::StreamExt;
        let reg = self.register(location).map_err(|e| e.to_string())?;
        let mut profiles: Vec<ColumnProfile> = reg
            .schema
            .fields()
            .iter()
            .map(|f| ColumnProfile {
                name: f.name().clone(),
                data_type: f.data_type().to_string(),
                numeric: f.data_type().is_numeric(),
                ..ColumnProfile::default()
            })
            .collect();
        let numeric: Vec<usize> = (0..profiles.len()).filter(|&i| profiles[i].numeric).collect();
        let mut folds: Vec<Fold> = numeric.iter().map(|_| Fold::default()).collect();
        let mut rows = 0u64;
        // The numeric columns by index, straight from the table: no logical plan, so no
        // column is looked up by name (with none, every column, for the row count).
        let projection = (!numeric.is_empty()).then(|| numeric.clone());
        let width = projection.as_ref().map_or(profiles.len(), Vec::len);
        self.rt
            .block_on(async {
                let provider = reg.ctx.table_provider(reg.name.as_str()).await?;
                // Batches of at most PROFILE_CELLS values: readers allocate a batch's rows for
                // every column up front (CSV: 8,192 offsets a column, gigabytes at 40,000).
                let mut state = reg.ctx.state();
                let batch_rows = (PROFILE_CELLS / width.max(1)).clamp(1, state.config().batch_size().max(1));
                *state.config_mut() = state.config().clone().with_batch_size(batch_rows);
                let plan = provider.scan(&state, projection.as_ref(), &[], None).await?;
                let mut stream = datafusion::physical_plan::execute_stream(plan, state.task_ctx())?;
                while let Some(batch) = stream.next().await {
                    let batch = batch?;
                    if batch.num_columns() != width {
                        return Err(datafusion::error::DataFusionError::Internal(format!(
                            "a scan of {width} columns gave {}",
                            batch.num_columns()
                        )));
                    }
                    rows += batch.num_rows() as u64;
                    for (c, fold) in folds.iter_mut().enumerate() {
                        let values = datafusion::arrow::compute::cast(batch.column(c), &DataType::Float64)?;
                        fold.add(values.as_primitive::<Float64Type>(), max_values);
                    }
                }
                Ok::<(), datafusion::error::DataFusionError>(())
            })
            .map_err(|e| format!("cannot be read: {}", e.strip_backtrace()))?;
        for p in profiles.iter_mut() {
            p.rows = rows;
        }
        for (fold, &i) in folds.into_iter().zip(&numeric) {
            let p = &mut profiles[i];
            p.nulls = rows - fold.non_null.min(rows);
            p.min = fold.min;
            p.max = fold.max;
            p.integral = !fold.fractional;
            p.distinct = if fold.many { max_values as u64 + 1 } else { fold.distinct.len() as u64 };
            if !fold.many && !fold.fractional {
                let mut v: Vec<f64> = fold.distinct.into_iter().map(f64::from_bits).collect();
                v.sort_by(f64::total_cmp);
                p.values = v;
            }
        }
        Ok(profiles)
    }

    /// Proves a catalog filter against a table (used by `catalog check`): within the size
    /// limits, plans as true/false, and evaluates on every row without an error.
    pub fn check_filter(&self, location: &Path, sql: &str) -> Result<(), String> {
        let reg = self.register(location).map_err(|e| e.to_string())?;
        let mut filters = Filters::new(self, &reg.schema).map_err(|e| e.to_string())?;
        let expr = filters.parse(sql)?;
        match expr.get_type(&filters.schema).map_err(|e| e.strip_backtrace())? {
            DataType::Boolean | DataType::Null => {}
            other => return Err(format!("is {other}, not true/false")),
        }
        self.probe(&reg, None, vec![flag(expr)]).map_err(|e| match e {
            ScanError::Fatal(e) => e.to_string(),
            ScanError::Data(e) => format!("fails on the data: {e}"),
        })
    }

    /// Proves a declared weight against a table (used by `catalog check`): its values read as
    /// numbers, none is negative, NaN or infinite, and every one is under 2^256 (so no base of
    /// the table holds a weight recite does not sum).
    pub fn check_weight(&self, location: &Path, weight: &str) -> Result<(), WeightCheckError> {
        self.check_weights(location, &[weight]).remove(0)
    }

    /// [`Engine::check_weight`] for several weights of one table (a table's replicate weights)
    /// in one scan; when that scan fails (a column that cannot be read as numbers), each weight
    /// is checked alone, so the error names the one at fault.
    pub fn check_weights(&self, location: &Path, weights: &[&str]) -> Vec<Result<(), WeightCheckError>> {
        match self.weight_sums(location, weights) {
            Ok(sums) => sums.into_iter().map(|(bad, largest)| weight_verdict(bad, largest)).collect(),
            Err(e) if weights.len() == 1 => vec![Err(WeightCheckError::Unreadable(e))],
            Err(_) => weights.iter().map(|w| self.check_weight(location, w)).collect(),
        }
    }

    /// Per weight, over the whole table: the count of negative, NaN or infinite values, and the
    /// largest of the others. One scan.
    fn weight_sums(&self, location: &Path, weights: &[&str]) -> Result<Vec<(f64, f64)>, String> {
        let reg = self.register(location).map_err(|e| e.to_string())?;
        let mut exprs = Vec::with_capacity(2 * weights.len());
        for weight in weights {
            let w = cast(ident(*weight), DataType::Float64);
            let positive = w.clone().gt(lit(0.0)).and(std::ops::Not::not(bad_weight(&w)));
            exprs.push(sum(when(bad_weight(&w), lit(1i64))
                .otherwise(lit(0i64))
                .map_err(|e| e.to_string())?));
            exprs.push(max(when(positive, w.clone()).end().map_err(|e| e.to_string())?));
        }
        let batches = self
            .run_on(&reg.ctx, async {
                let df = reg.ctx.table(reg.name.as_str()).await?;
                let exprs: Vec<Expr> =
                    exprs.into_iter().enumerate().map(|(i, e)| e.alias(format!("a{i}"))).collect();
                df.aggregate(vec![], exprs)?.collect().await
            })
            .map_err(|e| match remote::cluster_fault(&e) {
                Some(fault) => fault.to_string(),
                None => format!("cannot be read as numbers: {}", e.strip_backtrace()),
            })?;
        let mut sums = vec![(0.0, 0.0); weights.len()];
        for b in &batches {
            for r in 0..b.num_rows() {
                for (i, (bad, largest)) in sums.iter_mut().enumerate() {
                    *bad += value_at(b.column(2 * i), r);
                    *largest = f64::max(*largest, value_at(b.column(2 * i + 1), r));
                }
            }
        }
        Ok(sums)
    }

    /// One aggregate of `exprs` over the table (the rows `keep` selects); only whether it fails.
    fn probe(&self, reg: &Registered, keep: Option<Expr>, exprs: Vec<Expr>) -> Result<(), ScanError> {
        self.run_on(&reg.ctx, async {
            let mut df = reg.ctx.table(reg.name.as_str()).await?;
            if let Some(k) = keep {
                df = df.filter(k)?;
            }
            let exprs: Vec<Expr> =
                exprs.into_iter().enumerate().map(|(i, e)| e.alias(format!("p{i}"))).collect();
            df.aggregate(vec![], exprs)?.collect().await
        })
        .map(|_| ())
        .map_err(|e| scan_error(&e))
    }

    /// Runs every job, one scan per table, tables in parallel. One job's error (a filter that
    /// does not plan or fails on the data, a weight that cannot be summed) never fails the
    /// others; a table that cannot be read fails only its jobs.
    ///
    /// A job with replicate weights adds one job per replicate weight, on the same rows with
    /// that weight: the same table, so the same single scan, whose totals are the replicate's.
    pub fn run(&self, jobs: &[Job]) -> (Outcomes, ScanStats) {
        let (outcomes, stats, _) = self.run_keeping(jobs, &[]);
        (outcomes, stats)
    }

    /// [`Engine::run`], and the groups its grouped scans reduced, for [`Engine::run_again`].
    /// A grouped scan also takes along the weights and base flags of the `anticipated` jobs on
    /// its table ([`Scan::run_keeping`]), so that its groups answer them later.
    fn run_keeping(
        &self,
        jobs: &[Job],
        anticipated: &[Job],
    ) -> (Outcomes, ScanStats, Vec<Arc<grouped::KeptGroups>>) {
        if jobs.iter().all(|j| j.rows.replicates.is_none()) {
            return self.run_cached(jobs, anticipated);
        }
        // Replicate weights' ranks are tapped from the rows, so the explaining run scans again
        // (`Engine::run_again`): nothing is worth taking along.
        let mut all = jobs.to_vec();
        let mut spans = Vec::with_capacity(jobs.len());
        for job in jobs {
            let start = all.len();
            for column in job.rows.replicates.iter().flat_map(|r| &r.columns) {
                let rows = Rows { weight: Some(column.clone()), replicates: None, ..job.rows.clone() };
                all.push(Job { rows, measures: job.measures.clone(), cells: vec![] });
            }
            spans.push(start..all.len());
        }
        let (mut outcomes, stats, kept) = self.run_cached(&all, &[]);
        let replicas = outcomes.split_off(jobs.len());
        for ((job, span), outcome) in jobs.iter().zip(spans).zip(outcomes.iter_mut()) {
            let Some(spec) = &job.rows.replicates else { continue };
            let mut totals = Vec::with_capacity(span.len());
            let mut failed = None;
            for r in &replicas[span.start - jobs.len()..span.end - jobs.len()] {
                match r {
                    Ok(o) => totals.push(o.sums.totals.clone()),
                    Err(e) => {
                        failed = Some(e.clone());
                        break;
                    }
                }
            }
            // A replicate that cannot be summed fails the estimate: no SE is better than a wrong one.
            if let Some(e) = failed {
                if outcome.is_ok() {
                    *outcome = Err(e);
                }
            } else if let Ok(out) = outcome {
                // The scan may have put the ranks of the replicate weights there (engine::gram).
                let ranks = out.sums.replicates.take().and_then(|r| r.ranks);
                out.sums.replicates = Some(Replicated { spec: spec.clone(), totals, ranks });
            }
        }
        (outcomes, stats, kept)
    }

    /// [`Engine::run`] for jobs over the same data as the run that kept `kept`
    /// ([`Engine::run_keeping`]): a job whose period, base, weight and cells are all flags of a
    /// kept grouped scan of its table (or absent) is summed from that scan's groups, exactly as
    /// a new scan would sum it; the others are scanned, as usual. A run with replicate weights
    /// is scanned whole (their ranks are taken from the rows), and an engine with a cache runs
    /// every job through it.
    fn run_again(&self, jobs: &[Job], kept: &[Arc<grouped::KeptGroups>]) -> (Outcomes, ScanStats) {
        // With a cache, the variants go through it: their sums are written there for the next
        // run, which a sum taken from the kept groups would not be.
        if kept.is_empty() || self.cache.is_some() || jobs.iter().any(|j| j.rows.replicates.is_some()) {
            return self.run(jobs);
        }
        let mut served: Vec<Option<Result<Outcome, EngineError>>> = (0..jobs.len()).map(|_| None).collect();
        for groups in kept {
            let on: Vec<usize> =
                (0..jobs.len()).filter(|&i| served[i].is_none() && groups.is_of(&jobs[i])).collect();
            let picked: Vec<&Job> = on.iter().map(|&i| &jobs[i]).collect();
            for (i, out) in on.into_iter().zip(groups.serve(self, &picked)) {
                served[i] = out;
            }
        }
        let rest: Vec<Job> =
            jobs.iter().zip(&served).filter(|(_, s)| s.is_none()).map(|(j, _)| j.clone()).collect();
        let (scanned, stats) =
            if rest.is_empty() { (Vec::new(), ScanStats::default()) } else { self.run(&rest) };
        let mut scanned = scanned.into_iter();
        let outcomes = served
            .into_iter()
            .map(|s| {
                s.unwrap_or_else(|| {
                    scanned.next().unwrap_or_else(|| Err(EngineError::Internal("no outcome".into())))
                })
            })
            .collect();
        (outcomes, stats)
    }

    /// [`Engine::run`] without replicate weights, and the base sums its grouped scans
    /// accumulated (taking along the weights and flags of the `anticipated` jobs on their
    /// tables).
    fn run_jobs<'a>(&self, jobs: &'a [Job], anticipated: &[Job]) -> Scanned<'a> {
        let mut by_table = BTreeMap::new();
        for (i, job) in jobs.iter().enumerate() {
            by_table
                .entry((job.rows.location.clone(), job.rows.design.clone()))
                .or_insert_with(Vec::new)
                .push(i);
        }
        let mut ahead: BTreeMap<_, Vec<&Job>> = BTreeMap::new();
        for job in anticipated {
            let table = (job.rows.location.clone(), job.rows.design.clone());
            if by_table.contains_key(&table) {
                ahead.entry(table).or_default().push(job);
            }
        }
        let groups: Vec<ScanGroup> = by_table.into_iter().collect();
        let deadline = recite_core::scan::deadline();
        let per_group: Vec<ScanResult> = groups
            .par_iter()
            .map(|((location, design), members)| {
                let picked: Vec<&Job> = members.iter().map(|&i| &jobs[i]).collect();
                let ahead =
                    ahead.get(&(location.clone(), design.clone())).map(Vec::as_slice).unwrap_or_default();
                let (outs, stats, accumulated) = recite_core::scan::with_deadline(deadline, || {
                    self.scan_isolated(location, design.as_ref(), &picked, ahead)
                });
                (members.iter().copied().zip(outs).collect(), stats, accumulated)
            })
            .collect();
        let mut results: Outcomes =
            (0..jobs.len()).map(|_| Err(EngineError::Internal("no outcome".into()))).collect();
        let mut stats = ScanStats::default();
        let mut accumulated = Vec::new();
        for (outs, s, acc) in per_group {
            for (i, r) in outs {
                results[i] = r;
            }
            stats.absorb(s);
            accumulated.extend(acc);
        }
        stats.tables_scanned =
            groups.iter().map(|((location, _), _)| location).collect::<std::collections::BTreeSet<_>>().len();
        (results, stats, accumulated)
    }

    /// One scan of a table for all its jobs; when it fails on the data, the jobs again, split
    /// by what they declare, each part scanned as it would be alone. So the normal case stays
    /// one scan, and a claim's outcome never depends on what else is in the batch. What the
    /// `anticipated` jobs add is dropped first: they must never fail the jobs asked for.
    fn scan_isolated<'a>(
        &self,
        location: &Path,
        design: Option<&(String, String)>,
        jobs: &[&'a Job],
        anticipated: &[&Job],
    ) -> Scanned<'a> {
        let fail_all = |e: EngineError| {
            (jobs.iter().map(|_| Err(e.clone())).collect(), ScanStats::default(), Vec::new())
        };
        let mut attempt = self.scan_best(location, design, jobs, anticipated);
        if !anticipated.is_empty() && attempt.is_err() {
            attempt = self.scan_best(location, design, jobs, &[]);
        }
        let error = match attempt {
            Ok(done) => return done,
            Err(ScanError::Fatal(e)) => return fail_all(e),
            Err(ScanError::Data(e)) => e,
        };
        let schema = match self.register(location) {
            Ok(r) => r.schema.clone(),
            Err(e) => return fail_all(e),
        };
        let mut parts: BTreeMap<Signature, Vec<usize>> = BTreeMap::new();
        for (i, job) in jobs.iter().enumerate() {
            parts.entry(Signature::of(job, &schema)).or_default().push(i);
        }
        if parts.len() == 1 {
            return fail_all(self.diagnose(location, design, jobs[0], &error));
        }
        let parts: Vec<Vec<usize>> = parts.into_values().collect();
        let deadline = recite_core::scan::deadline();
        let done: Vec<Scanned<'a>> = parts
            .par_iter()
            .map(|part| {
                recite_core::scan::with_deadline(deadline, || {
                    let picked: Vec<&Job> = part.iter().map(|&i| jobs[i]).collect();
                    let fail = |e: EngineError| {
                        (part.iter().map(|_| Err(e.clone())).collect(), ScanStats::default(), Vec::new())
                    };
                    match self.scan_best(location, design, &picked, &[]) {
                        Ok(done) => done,
                        Err(ScanError::Fatal(e)) => fail(e),
                        Err(ScanError::Data(e)) => fail(self.diagnose(location, design, picked[0], &e)),
                    }
                })
            })
            .collect();
        let mut results: Outcomes =
            (0..jobs.len()).map(|_| Err(EngineError::Internal("no outcome".into()))).collect();
        let mut stats = ScanStats::default();
        let mut accumulated = Vec::new();
        for (part, (outs, s, acc)) in parts.iter().zip(done) {
            for (&i, r) in part.iter().zip(outs) {
                results[i] = r;
            }
            stats.absorb(s);
            accumulated.extend(acc);
        }
        (results, stats, accumulated)
    }

    /// Which of a job's declarations fails on the data, each tried alone on the rows it is
    /// evaluated on (the base, weight and cells on the period's rows).
    fn diagnose(
        &self,
        location: &Path,
        design: Option<&(String, String)>,
        job: &Job,
        error: &str,
    ) -> EngineError {
        // Where the job's scan ran, so the probes meet what it met.
        let reg = match self.register_at(location, self.place(location, &[job]).0) {
            Ok(r) => r,
            Err(e) => return e,
        };
        let mut filters = match Filters::new(self, &reg.schema) {
            Ok(f) => f,
            Err(e) => return e,
        };
        let r = &job.rows;
        // First the columns themselves: a file that cannot be read is no declaration's fault.
        let mut columns = vec![r.column.clone()];
        columns.extend(design.iter().flat_map(|(s, p)| [s.clone(), p.clone()]));
        let reads = columns.iter().map(|c| count(ident(c))).collect();
        match self.probe(&reg, None, reads) {
            Err(ScanError::Fatal(e)) => return e,
            Err(ScanError::Data(e)) => {
                return EngineError::Table {
                    location: location.to_path_buf(),
                    error: format!("cannot be read: {e}"),
                };
            }
            Ok(()) => {}
        }
        let failed = |role: Role, sql: &str, e: ScanError| match e {
            ScanError::Fatal(e) => e,
            ScanError::Data(e) => {
                EngineError::Filter { role, sql: sql.to_string(), error: format!("fails on the data: {e}") }
            }
        };
        let mut keep = None;
        if let Some(sql) = &r.period_filter {
            let p = match filters.get(Role::Period, sql) {
                Ok(p) => p,
                Err(e) => return e,
            };
            if let Err(e) = self.probe(&reg, None, vec![flag(p.clone())]) {
                return failed(Role::Period, sql, e);
            }
            // With a design every row is scanned (no PSU may drop out), so the other
            // declarations are evaluated on every row too.
            if design.is_none() {
                keep = Some(p);
            }
        }
        if let Some(sql) = &r.base_filter {
            match filters.get(Role::Base, sql) {
                Ok(b) => {
                    if let Err(e) = self.probe(&reg, keep.clone(), vec![flag(b)]) {
                        return failed(Role::Base, sql, e);
                    }
                }
                Err(e) => return e,
            }
        }
        if let Some(w) = &r.weight {
            match self.probe(&reg, keep.clone(), vec![sum(cast(ident(w), DataType::Float64))]) {
                Err(ScanError::Fatal(e)) => return e,
                Err(ScanError::Data(e)) => {
                    return EngineError::Weight {
                        weight: w.clone(),
                        error: format!("cannot be read as numbers: {e}"),
                    };
                }
                Ok(()) => {}
            }
        }
        for (breakdown, cell, sql) in &job.cells {
            let role = Role::Cell { breakdown: breakdown.clone(), cell: cell.clone() };
            match filters.get(role.clone(), sql) {
                Ok(c) => {
                    if let Err(e) = self.probe(&reg, keep.clone(), vec![flag(c)]) {
                        return failed(role, sql, e);
                    }
                }
                Err(e) => return e,
            }
        }
        EngineError::Table {
            location: location.to_path_buf(),
            error: format!(
                "fails on the data with this claim's period, base, weight and cells together (each \
                 passes alone): {error}"
            ),
        }
    }

    /// One scan of one table for all its jobs: grouped when every cited column holds integer
    /// codes (cost independent of the number of claims), else one aggregate of `SUM(CASE …)`.
    /// On a cluster engine, on the cluster (the grouped scan reduced by a plan), unless the
    /// scan stays here ([`Engine::place`]); [`Engine::placements`] says where it ran. A
    /// grouped scan takes along the `anticipated` jobs' weights and flags.
    fn scan_best<'a>(
        &self,
        location: &Path,
        design: Option<&(String, String)>,
        jobs: &[&'a Job],
        anticipated: &[&Job],
    ) -> Result<Scanned<'a>, ScanError> {
        let (place, here) = self.place(location, jobs);
        let schema = self.register_at(location, place)?.schema.clone();
        if let Some((s, p)) = design {
            for c in [s, p] {
                if schema.field_with_name(c).is_err() {
                    return Err(ScanError::Fatal(EngineError::Table {
                        location: location.to_path_buf(),
                        error: format!("the declared design column {c:?} is not a column of the table"),
                    }));
                }
            }
        }
        let (plan, reason) = self.choose(&schema, jobs);
        let (outcomes, stats, accumulated) = match plan {
            ScanPlan::Grouped => self.scan_grouped(location, design, jobs, anticipated, reason)?,
            ScanPlan::Summed | ScanPlan::Cache => {
                let (outcomes, stats) = self.scan_summed(location, design, jobs, reason)?;
                (outcomes, stats, Vec::new())
            }
        };
        // Where it ran is told beside the report, not in it: the report is the same either way.
        if let Some(c) = &self.cluster {
            let place = match here {
                Some(why) => format!("in this process, not on the cluster: {why}"),
                None => format!("on the Ballista cluster {}", c.url),
            };
            if let Ok(mut m) = self.placements.lock() {
                for p in &stats.plans {
                    m.insert(p.table.clone(), place.clone());
                }
            }
        }
        Ok((outcomes, stats, accumulated))
    }

    /// The plan for one scan of a table's jobs, and why: grouped when every cited column holds
    /// integer codes and there are few enough of them, else summed. On a cluster the same (the
    /// grouped scan reduced by a plan the executors run), so the report does not change.
    fn choose(&self, schema: &Schema, jobs: &[&Job]) -> (ScanPlan, String) {
        if !self.grouped {
            return (ScanPlan::Summed, "the grouped plan is turned off (Engine::summed_only)".into());
        }
        match grouped::unsuitable(schema, jobs) {
            Some(why) => (ScanPlan::Summed, why),
            None => (ScanPlan::Grouped, grouped::suitable(jobs)),
        }
    }
}

/// How a table's files are read, told once from its location (and, for CSV, the format the
/// catalog declared): each kind's reader is set up in one place on disk
/// ([`Engine::register_file`]) and one on object storage (`Engine::register_object`).
enum Format {
    /// One SPSS `.sav` or `.zsav` file (`crate::sav`).
    Sav,
    /// Arrow IPC files; the extension, as written, selects the files a glob or folder lists.
    Arrow(String),
    /// CSV files in the declared format (comma-separated, with a header, when none is).
    Csv(Option<catalog::CsvFormat>),
    /// Parquet files: one, a glob's, or a (hive-partitioned) folder's.
    Parquet,
}

impl Format {
    /// The format of the files at `path` (spelled `text`); `declared` is asked only for CSV.
    fn of(path: &Path, text: &str, declared: impl FnOnce() -> Option<catalog::CsvFormat>) -> Format {
        if crate::sav::is_sav(path) {
            return Format::Sav;
        }
        match listing_extension(text) {
            ".csv" => Format::Csv(declared()),
            ".parquet" => Format::Parquet,
            ext => Format::Arrow(ext.to_string()),
        }
    }
}

/// The file extension a listing of a table's folder, glob or objects keeps: the location's
/// Arrow IPC extension as written, `.csv`, else `.parquet`.
fn listing_extension(location: &str) -> &str {
    let lower = location.to_lowercase();
    if let Some(ext) = [".arrow", ".feather", ".ipc"].into_iter().find(|e| lower.ends_with(e)) {
        return &location[location.len() - ext.len()..];
    }
    if lower.ends_with(".csv") { ".csv" } else { ".parquet" }
}

/// The CSV reader's options for a declared format (comma-separated, with a header, when none).
fn csv_options(declared: Option<&catalog::CsvFormat>) -> datafusion::error::Result<CsvReadOptions<'static>> {
    let (delimiter, header) = match declared {
        Some(f) => (csv_delimiter(&f.delimiter)?, f.header),
        None => (b',', true),
    };
    Ok(CsvReadOptions::new().has_header(header).delimiter(delimiter).schema_infer_max_records(1_000_000))
}

/// A declared CSV delimiter as the one byte the reader takes (`\t` spelled out is a tab).
fn csv_delimiter(d: &str) -> datafusion::error::Result<u8> {
    match d {
        "\\t" | "\t" => Ok(b'\t'),
        d if d.len() == 1 && d.is_ascii() => Ok(d.as_bytes()[0]),
        d => Err(datafusion::error::DataFusionError::Plan(format!(
            "the declared CSV delimiter {d:?} is not one ASCII character"
        ))),
    }
}

/// The hive partition columns of a folder (`wave=6/region=2/…`), read down its first branch:
/// whole-number partitions (in every folder of that level) are Int64, others text.
fn hive_partitions(folder: &Path) -> Vec<(String, DataType)> {
    let mut columns = Vec::new();
    let mut dir = folder.to_path_buf();
    loop {
        let Ok(entries) = std::fs::read_dir(&dir) else { break };
        let mut level: Vec<(String, String, PathBuf)> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().to_string();
                let (k, v) = n.split_once('=')?;
                Some((k.to_string(), v.to_string(), e.path()))
            })
            .collect();
        level.sort_by(|a, b| a.2.cmp(&b.2));
        let Some((key, _, next)) = level.first().cloned() else { break };
        if level.iter().any(|(k, _, _)| *k != key) {
            break;
        }
        let whole = level.iter().all(|(_, v, _)| v.parse::<i64>().is_ok());
        columns.push((key, if whole { DataType::Int64 } else { DataType::Utf8 }));
        dir = next;
    }
    columns
}

/// Most fields in one batch of a CSV scan. Arrow's CSV reader decodes every field of a row
/// whatever the scan projects, and sizes its buffers for a whole batch up front: 16 bytes a
/// field, so at DataFusion's 8,192 rows a batch about 130 KB a column (a 20,000-column CSV took
/// 2.7 GB to read one row). Wider tables get fewer rows a batch: a reader then holds at most
/// about 16 MB, whatever the width.
pub const CSV_CELLS: usize = 1 << 20;

/// The schema DataFusion infers for the one CSV file at `path`, as its listing table would
/// (the same format, options and stream of whole lines), without the merge of the files'
/// schemas that follows: arrow's `Schema::try_merge` looks each field up among those before it,
/// which took most of `verify`'s time on a 45,000-column file (quadratic in the columns).
async fn csv_schema(
    ctx: &SessionContext,
    path: &str,
    opts: &CsvReadOptions<'_>,
) -> datafusion::error::Result<Schema> {
    use datafusion::datasource::file_format::csv::CsvFormat;
    use datafusion::datasource::file_format::options::ReadOptions;
    use datafusion::datasource::listing::ListingTableUrl;
    use datafusion::error::DataFusionError;
    use datafusion::object_store::ObjectStoreExt;
    use futures::{StreamExt, TryStreamExt};
    let listing = opts.to_listing_options(&ctx.copied_config(), ctx.copied_table_options());
    let format: &dyn std::any::Any = listing.format.as_ref();
    let Some(format) = format.downcast_ref::<CsvFormat>() else {
        return Err(DataFusionError::Internal("CSV read options without a CSV format".into()));
    };
    let url = ListingTableUrl::parse(path)?;
    let store = ctx.runtime_env().object_store(url.object_store())?;
    let bytes = store
        .get(url.prefix())
        .await?
        .into_stream()
        .map_err(|e| DataFusionError::ObjectStore(Box::new(e)))
        .boxed();
    let lines = format.read_to_delimited_chunks_from_stream(bytes);
    let records = format.options().schema_infer_max_rec.unwrap_or(1_000_000);
    let (schema, _) = format.infer_schema_from_stream(&ctx.state(), records, lines).await?;
    Ok(schema)
}

/// `state` with batches of at most [`CSV_CELLS`] fields of a table `width` columns wide (at
/// least one row).
fn narrow_batches(
    mut state: datafusion::execution::SessionState,
    width: usize,
) -> datafusion::execution::SessionState {
    let rows = (CSV_CELLS / width.max(1)).clamp(1, state.config().batch_size().max(1));
    *state.config_mut() = state.config().clone().with_batch_size(rows);
    state
}

/// Stack of the engine's threads: deep enough for any filter within the catalog's limits.
const ENGINE_STACK: usize = 16 << 20;

/// A weight value no weight may have: negative, NaN or infinite. (Arrow orders floats totally,
/// NaN above +∞, so `> f64::MAX` catches NaN and +∞; `≠ itself` catches NaN under IEEE order
/// too, and `< -0.0` keeps -0.0 a zero.)
fn bad_weight(w: &Expr) -> Expr {
    w.clone()
        .is_not_null()
        .and(w.clone().lt(lit(-0.0)).or(w.clone().gt(lit(f64::MAX))).or(w.clone().not_eq(w.clone())))
}

/// Σ CASE WHEN e THEN 1 ELSE 0 END: evaluates a filter on every row it is given.
fn flag(e: Expr) -> Expr {
    sum(when(e, lit(1i64)).otherwise(lit(0i64)).expect("a CASE with one branch and an ELSE builds"))
}

/// What a job declares that can fail on the data: its period, base, weight and cells, and
/// (for columns the grouped scan does not take) its column. Jobs alike scan alike.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Signature {
    period: Option<String>,
    base: Option<String>,
    weight: Option<String>,
    cells: Vec<String>,
    column: Option<String>,
}

impl Signature {
    fn of(job: &Job, schema: &Schema) -> Signature {
        let r = &job.rows;
        let integer = schema.field_with_name(&r.column).is_ok_and(|f| grouped::integer_codes(f.data_type()));
        Signature {
            period: r.period_filter.clone(),
            base: r.base_filter.clone(),
            weight: r.weight.clone(),
            cells: job.cells.iter().map(|(_, _, f)| f.clone()).collect(),
            column: (!integer).then(|| r.column.clone()),
        }
    }
}

impl Schemas for Engine {
    fn schema(
        &self,
        study: &Study,
        table: &catalog::Table,
    ) -> Result<Arc<resolve::Schema>, resolve::TableError> {
        self.declare(study, table);
        let schema = self.schema_of(&table.location(study))?;
        let fields = schema.fields().iter().map(|f| {
            resolve::Field::new(f.name().clone(), f.data_type().to_string(), f.data_type().is_numeric())
        });
        Ok(Arc::new(resolve::Schema::new(fields.collect())))
    }

    fn version(
        &self,
        study: &Study,
        table: &catalog::Table,
        pin: Option<&Pin>,
    ) -> Result<Option<Found>, resolve::TableError> {
        let location = table.location(study);
        if crate::postgres::is_location(&location.to_string_lossy()) {
            // A server keeps no versions: a pin cannot be honoured, and the latest is what
            // the server holds when asked.
            if let Some(pin) = pin {
                return Err(format!(
                    "{pin} is pinned, but a PostgreSQL table keeps no versions: the pinned data cannot be read"
                )
                .into());
            }
            let key = (location, None);
            let now = std::time::SystemTime::now();
            let known = self.versions.lock().ok().and_then(|m| m.get(&key).cloned());
            if let Some((Some(when), found)) = known {
                // A snapshot is taken again after a second; a server that failed is not asked
                // again for a minute (a batch's claims on an unreachable server would each wait
                // out a connection).
                let kept = if found.is_ok() { POSTGRES_SNAPSHOT_KEPT } else { POSTGRES_FAILURE_KEPT };
                if now.duration_since(when).is_ok_and(|age| age < kept) {
                    return found.map(Some).map_err(resolve::TableError::from);
                }
            }
            let found = self.postgres_version(&key.0).map_err(|e| format!("{} {e}", key.0.display()));
            if let Ok(mut m) = self.versions.lock() {
                m.insert(key, (Some(now), found.clone()));
            }
            return found.map(Some).map_err(resolve::TableError::from);
        }
        if !crate::delta::is_table(&location) {
            return Ok(None);
        }
        // The latest is known while no commit was added or removed in the log folder since.
        let stamp = match pin {
            Some(_) => None,
            None => crate::delta::log_modified(&location),
        };
        let key = (location, pin.cloned());
        let known = self.versions.lock().ok().and_then(|m| m.get(&key).cloned());
        if let Some((when, found)) = known
            && (pin.is_some() || (stamp.is_some() && when == stamp))
        {
            return found.map(Some).map_err(resolve::TableError::from);
        }
        let found = self.delta_version(&key.0, pin).map_err(|e| e.to_string());
        if let Ok(mut m) = self.versions.lock() {
            m.insert(key, (stamp, found.clone()));
        }
        found.map(Some).map_err(resolve::TableError::from)
    }

    fn as_of(&self) -> Option<&str> {
        self.as_of.as_deref()
    }

    fn schema_at(&self, found: &Found) -> Result<Arc<resolve::Schema>, resolve::TableError> {
        let schema = self.schema_of(&found.location)?;
        let fields = schema.fields().iter().map(|f| {
            resolve::Field::new(f.name().clone(), f.data_type().to_string(), f.data_type().is_numeric())
        });
        Ok(Arc::new(resolve::Schema::new(fields.collect())))
    }
}

impl Scan for Engine {
    fn run(&self, jobs: &[Job]) -> (Outcomes, ScanStats) {
        Engine::run(self, jobs)
    }

    fn run_keeping(
        &self,
        jobs: &[Job],
        anticipated: &[Job],
    ) -> (Outcomes, ScanStats, Option<recite_core::scan::Kept>) {
        let (outcomes, stats, kept) = Engine::run_keeping(self, jobs, anticipated);
        let kept: recite_core::scan::Kept = Arc::new(kept);
        (outcomes, stats, Some(kept))
    }

    fn run_again(&self, jobs: &[Job], kept: Option<&recite_core::scan::Kept>) -> (Outcomes, ScanStats) {
        match kept.and_then(|k| k.downcast_ref::<Vec<Arc<grouped::KeptGroups>>>()) {
            Some(kept) => Engine::run_again(self, jobs, kept),
            None => Engine::run(self, jobs),
        }
    }
}

/// The catalog's filters of one scan, each parsed once as an expression (never a statement)
/// against the table's schema, and typed, so a filter naming a missing column fails here with
/// the filter's text rather than in the middle of a plan.
pub(crate) struct Filters<'a> {
    ctx: &'a SessionContext,
    schema: DFSchema,
    parsed: HashMap<String, Result<Expr, String>>,
}

impl<'a> Filters<'a> {
    fn new(engine: &'a Engine, schema: &Schema) -> Result<Filters<'a>, EngineError> {
        let schema =
            DFSchema::try_from(schema.clone()).map_err(|e| EngineError::Internal(e.strip_backtrace()))?;
        Ok(Filters { ctx: &engine.ctx, schema, parsed: HashMap::new() })
    }

    /// A filter parsed and typed; its size is checked first, so DataFusion never recurses
    /// deeper than the limit allows.
    fn parse(&mut self, sql: &str) -> Result<Expr, String> {
        let (ctx, schema) = (self.ctx, &self.schema);
        self.parsed
            .entry(sql.to_string())
            .or_insert_with(|| {
                catalog::check_filter_size(sql).map_err(|e| e.to_string())?;
                let e = ctx
                    .parse_sql_expr(sql, schema)
                    .map_err(|e| format!("does not plan: {}", e.strip_backtrace()))?;
                e.get_type(schema).map_err(|e| format!("does not plan: {}", e.strip_backtrace()))?;
                Ok(e)
            })
            .clone()
    }

    /// The expression of a filter; `role` names it in errors.
    pub(crate) fn get(&mut self, role: Role, sql: &str) -> Result<Expr, EngineError> {
        self.parse(sql).map_err(|error| EngineError::Filter { role, sql: sql.to_string(), error })
    }

    /// Whether the table has a column of this name, as the schema spells it.
    pub(crate) fn has_column(&self, name: &str) -> bool {
        self.schema.has_column_with_unqualified_name(name)
    }
}

/// One column of a table as `catalog init` sees it ([`Engine::profile`]).
#[derive(Debug, Clone, Default)]
pub struct ColumnProfile {
    /// The column's name.
    pub name: String,
    /// Its Arrow type, in words.
    pub data_type: String,
    /// Whether it holds numbers (the only columns a citation can compute on).
    pub numeric: bool,
    /// Rows in the table.
    pub rows: u64,
    /// Rows with no value (numeric columns).
    pub nulls: u64,
    /// Smallest and largest value (numeric columns with any value).
    pub min: Option<f64>,
    /// See `min`.
    pub max: Option<f64>,
    /// Distinct values (numeric columns), counted up to the `max_values` asked for plus one
    /// (more than `max_values`: `max_values + 1`); whole-number columns only.
    pub distinct: u64,
    /// Every value is a whole number (numeric columns).
    pub integral: bool,
    /// The distinct values, ascending, when few and whole.
    pub values: Vec<f64>,
}

/// Most values in one batch of [`Engine::profile`]'s scan (a wide table gets fewer rows a batch).
const PROFILE_CELLS: usize = 1 << 20;

/// A numeric column's profile, folded batch by batch ([`Engine::profile`]).
#[derive(Default)]
struct Fold {
    non_null: u64,
    min: Option<f64>,
    max: Option<f64>,
    /// Some value is not a whole number (NaN and infinities included).
    fractional: bool,
    /// The distinct values as bits (−0 as 0), while every value is whole and there are at
    /// most the limit of them.
    distinct: std::collections::HashSet<u64>,
    /// More distinct whole values than the limit.
    many: bool,
}

impl Fold {
    fn add(&mut self, values: &datafusion::arrow::array::Float64Array, limit: usize) {
        self.non_null += (values.len() - values.null_count()) as u64;
        let mut last = None;
        for x in values.iter().flatten() {
            if !x.is_nan() {
                self.min = Some(self.min.map_or(x, |m| m.min(x)));
                self.max = Some(self.max.map_or(x, |m| m.max(x)));
            }
            if x % 1.0 != 0.0 {
                self.fractional = true;
            }
            // Runs of one value (sorted or coded data) skip the set.
            if self.fractional || self.many || last == Some(x) {
                continue;
            }
            last = Some(x);
            self.distinct.insert((x + 0.0).to_bits());
            if self.distinct.len() > limit {
                self.many = true;
                self.distinct = Default::default();
            }
        }
    }
}

/// An aggregate's value as f64 (NULL, from no matching rows, is 0).
pub(crate) fn value_at(col: &Arc<dyn Array>, row: usize) -> f64 {
    if col.is_null(row) {
        return 0.0;
    }
    match col.data_type() {
        DataType::Float64 => col.as_primitive::<Float64Type>().value(row),
        DataType::Int64 => col.as_primitive::<Int64Type>().value(row) as f64,
        _ => 0.0,
    }
}
