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
//!
//! Which file owns what. [`Engine`] (this file) holds its pieces, each a type of its own in its
//! file, and gives them what they need of it (its runtime, its session, its registered tables):
//!
//! - `engine/register.rs`: registering a table's files with DataFusion, once per location and
//!   place, and the CSV formats the catalog declared (`register::Tables`);
//! - `engine/cache.rs` and `engine/cache/`: the sums kept between runs ([`cache::Cache`]; a
//!   run's jobs answered from it and the rest scanned by the engine, `Cache::answer`; a table's
//!   identity, `cache::Identifier`);
//! - `engine/remote.rs`: `--engine` ([`EngineUrl`]) and the Ballista cluster (`remote::Cluster`:
//!   connecting, placing a table's scans, running them within the deadline, where they ran);
//! - `engine/versions.rs`: the versions of Delta tables and PostgreSQL snapshots found
//!   (`versions::Versions`), and the engine as the resolver's `Schemas`.
//!
//! What stays `impl Engine` is the orchestration: `engine/run.rs` (one scan per table, its plan
//! chosen, through the cache or not; a failing scan split), `engine/grouped.rs` with
//! `engine/grouped/` and `engine/summed.rs` (the two plans), and the one-scan checks of
//! `catalog check` and `catalog init`, each in the file of its concern (`engine/filters.rs`,
//! `engine/weights.rs`, `engine/universe.rs`, `engine/profile.rs`). `engine/gram.rs` holds the
//! ranks of replicate weights. This file also has the engine's builders and the one-line
//! delegates the scans call (`register`, `place`, `run_on`).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use datafusion::arrow::datatypes::Schema;
use datafusion::error::Result as DfResult;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::catalog;

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
mod filters;
mod profile;
mod register;
mod run;
mod versions;
mod weights;

pub use filters::FilterError;
pub use profile::{ColumnProfile, ProfileError};
pub use register::CSV_CELLS;
pub use weights::WeightCheckError;

use filters::{Filters, flag};
use register::{Place, Registered, Tables, listing_extension};
use run::{Outcomes, ScanError, Scanned, block_on_within, scan_error, table_of, value_at};
use versions::Versions;
use weights::{bad_weight, check_weight_sums, invalid_weight, overflow};

/// A DataFusion session with the catalog's tables registered on demand: in this process, or
/// on a Ballista cluster ([`Engine::connect`]).
pub struct Engine {
    rt: tokio::runtime::Runtime,
    ctx: SessionContext,
    /// The tables registered in `ctx` or the cluster's session, and the CSV formats declared.
    tables: Tables,
    grouped: bool,
    /// How the grouped scan reduces its rows ([`Engine::with_reduction`]).
    reduction: Reduction,
    /// The sufficient-statistics cache, when one is given ([`Engine::with_cache`]).
    cache: Option<cache::Cache>,
    /// The Ballista cluster scans run on, when one is given ([`Engine::connect`]).
    cluster: Option<remote::Cluster>,
    /// The moment every versioned table is read as of (`--as-of`), over any pin.
    as_of: Option<String>,
    /// The version each Delta table and pin resolved to, so a batch's claims do not each load
    /// the log. What a pin names does not move; the latest does (a server's engine lives long),
    /// so it is kept with its log folder's modification time, which a commit moves.
    versions: Versions,
    /// The digests of the files of tables of plain files, for the settlement to name what it
    /// ran on ([`Engine::file_digests_of`]).
    digests: cache::FileDigests,
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
            tables: Tables::new(),
            grouped: true,
            reduction: Reduction::default(),
            cache: None,
            cluster: None,
            as_of: None,
            versions: Versions::new(),
            digests: cache::FileDigests::default(),
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

    /// This engine, reducing grouped scans as `reduction` says. Reports are byte-identical
    /// either way; a job that [`needs_in_process`] reduction gets it under either.
    pub fn with_reduction(self, reduction: Reduction) -> Engine {
        Engine { reduction, ..self }
    }

    /// How this engine reduces grouped scans.
    pub fn reduction(&self) -> Reduction {
        self.reduction
    }

    /// The engine `url` names: this process's, or a session on a Ballista cluster, whose
    /// scheduler is asked first so that an address nothing answers on fails here rather
    /// than in every claim.
    pub fn connect(url: &EngineUrl) -> Result<Engine, ConnectError> {
        Engine::connect_within(url, Duration::from_secs(remote::DEFAULT_ENGINE_TIMEOUT_SECONDS))
    }

    /// [`Engine::connect`], with `deadline` the longest a scan on the cluster may take
    /// (ignored by the local engine), at most [`remote::MAX_ENGINE_TIMEOUT_SECONDS`] (a longer
    /// one is taken as that).
    pub fn connect_within(url: &EngineUrl, deadline: Duration) -> Result<Engine, ConnectError> {
        let deadline = deadline.min(Duration::from_secs(remote::MAX_ENGINE_TIMEOUT_SECONDS));
        match url {
            EngineUrl::Local => Ok(Engine::new()),
            EngineUrl::Ballista { host, port } => Engine::ballista(host, *port, &url.to_string(), deadline),
        }
    }

    #[cfg(not(feature = "ballista"))]
    fn ballista(_host: &str, _port: u16, url: &str, _deadline: Duration) -> Result<Engine, ConnectError> {
        Err(ConnectError::NotBuilt { url: url.to_string() })
    }

    #[cfg(feature = "ballista")]
    fn ballista(host: &str, port: u16, url: &str, deadline: Duration) -> Result<Engine, ConnectError> {
        let engine = Engine::new();
        let cluster = remote::Cluster::connect(&engine.rt, host, port, url, deadline)?;
        Ok(Engine { cluster: Some(cluster), ..engine })
    }

    /// The version of the Delta table at `location` that `pin` names (`None`: the latest).
    pub fn delta_version(
        &self,
        location: &Path,
        pin: Option<&recite_core::version::Pin>,
    ) -> Result<recite_core::version::Found, crate::delta::VersionError> {
        versions::delta_version(&self.rt, location, pin)
    }

    /// The cluster's scheduler (`ballista://HOST:PORT`), when this engine runs on one.
    pub fn cluster_url(&self) -> Option<&str> {
        self.cluster.as_ref().map(|c| c.url.as_str())
    }

    /// Where each table's scans ran on a cluster engine, as (table, where) in table order;
    /// empty for a local engine. Kept out of the report, which is the same wherever they ran.
    pub fn placements(&self) -> Vec<(String, String)> {
        self.cluster.as_ref().map(|c| c.placements()).unwrap_or_default()
    }

    /// Tells the engine how a table's files are written (a CSV format), before its first use.
    pub fn declare(&self, study: &catalog::Study, table: &catalog::Table) {
        self.tables.declare(study, table);
    }

    /// The schema of the files at `location`.
    pub fn schema_of(&self, location: &Path) -> Result<Arc<Schema>, EngineError> {
        self.register(location).map(|r| r.schema.clone())
    }

    /// The identity of the files the table at `location` reads, as the cache checks it before
    /// an entry answers (docs/cache.md, "Never wrong"); `None` when the table has none (it is
    /// never cached). For results kept outside the engine: the service's warm job table.
    pub fn table_identity(&self, location: &Path) -> Option<String> {
        let verify = self.cache.as_ref().map_or(cache::Verify::default(), cache::Cache::verify);
        cache::Identifier::new(&self.rt, &self.ctx, &self.tables).declared_identity(location, verify)
    }

    /// The files the table at `location` reads, by name relative to `root`, with their digests
    /// ([`cache::Identifier::file_digests`]).
    fn file_digests_of(&self, location: &Path, root: &Path) -> Vec<recite_core::version::FileDigest> {
        let verify = self.cache.as_ref().map_or(cache::Verify::default(), cache::Cache::verify);
        cache::Identifier::new(&self.rt, &self.ctx, &self.tables).file_digests(
            location,
            root,
            verify,
            &self.digests,
        )
    }
}

/// The pieces as the scans call them: each call one line, given the engine's runtime,
/// session and tables.
impl Engine {
    /// Where one scan of a table for `jobs` runs, and why it stays here on a cluster engine
    /// ([`remote::Cluster::place`]); here on a local engine.
    fn place(&self, location: &Path, jobs: &[&Job]) -> (Place, Option<&'static str>) {
        match &self.cluster {
            Some(c) => c.place(location, jobs, &self.tables),
            None => (Place::Here, None),
        }
    }

    /// Runs `work` on the engine's runtime; work in the cluster's session runs as the cluster
    /// runs it ([`remote::Cluster::run`]: within its deadline, its faults told as its own).
    fn run_on<T>(
        &self,
        ctx: &SessionContext,
        work: impl std::future::Future<Output = DfResult<T>>,
    ) -> DfResult<T> {
        match self.cluster.as_ref().filter(|c| c.holds(ctx)) {
            Some(c) => c.run(&self.rt, work),
            None => self.rt.block_on(work),
        }
    }

    /// Registers a table's files (once) where its scans run by default ([`Engine::place`]),
    /// and returns its internal name and schema.
    fn register(&self, location: &Path) -> Result<Arc<Registered>, EngineError> {
        self.register_at(location, self.place(location, &[]).0)
    }

    /// Registers a table's files (once) in this process's session or the cluster's, and
    /// returns its internal name and schema.
    fn register_at(&self, location: &Path, place: Place) -> Result<Arc<Registered>, EngineError> {
        let ctx = match (place, &self.cluster) {
            (Place::Cluster, Some(c)) => &c.ctx,
            _ => &self.ctx,
        };
        self.tables.register(&self.rt, ctx, location, place)
    }
}

/// Stack of the engine's threads: deep enough for any filter within the catalog's limits.
const ENGINE_STACK: usize = 16 << 20;
