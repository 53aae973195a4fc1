//! The scan contract: what the settlement asks of a scan ([`Job`]: base rows and measures), what
//! a scan owes back ([`Outcome`]: the sufficient statistics of [`sums`]), why a job failed
//! ([`EngineError`]) and what a run read ([`ScanStats`]). No DataFusion here: the engine
//! implements [`Scan`], and statistics, settlement and reports are written against these types.

use std::path::PathBuf;

use serde::Serialize;

use crate::catalog;
use crate::extractor::Measure;
use crate::resolve::{Resolved, Rows, Schemas};

pub mod key;
pub mod sums;

pub use key::JobKey;
pub use sums::{Replicated, Replication, Sums, Var, needed_pairs, vars_for};

/// What settlement runs its jobs through (the engine implements it): every job of one table in
/// one scan, the outcomes in the order of the jobs; and, as [`Schemas`], the tables' columns.
pub trait Scan: Schemas + Sync {
    /// Each job's sums (or why it failed), in the order of `jobs`, and what was read.
    fn run(&self, jobs: &[Job]) -> (Vec<Result<Outcome, EngineError>>, ScanStats);

    /// [`Scan::run`], and what the scan kept of the rows it reduced (the engine: each grouped
    /// scan's groups), for [`Scan::run_again`] to answer later jobs on those rows without
    /// reading the table again. A scan that keeps nothing returns `None`.
    ///
    /// `anticipated`: jobs a later run will likely ask for (the explaining run's variants on
    /// another weight or base of a cited column). A scan may take their weights and flags
    /// along, so that what it keeps answers them then; it returns nothing for them, and the
    /// outcomes of `jobs` are the same, to the bit, with or without them.
    fn run_keeping(
        &self,
        jobs: &[Job],
        anticipated: &[Job],
    ) -> (Vec<Result<Outcome, EngineError>>, ScanStats, Option<Kept>) {
        let _ = anticipated;
        let (outcomes, stats) = self.run(jobs);
        (outcomes, stats, None)
    }

    /// [`Scan::run`] for jobs over the same data as the run that returned `kept` (the
    /// explaining run after the settling one): a job whose rows `kept` holds is answered from
    /// it, with the same sums a scan would give; the rest are scanned. `reading` says what the
    /// caller reads of the outcomes: with [`Reading::Values`], a job answered from what was
    /// taken along for the anticipated jobs may come back without its second moments.
    fn run_again(
        &self,
        jobs: &[Job],
        kept: Option<&Kept>,
        reading: Reading,
    ) -> (Vec<Result<Outcome, EngineError>>, ScanStats) {
        let _ = (kept, reading);
        self.run(jobs)
    }
}

/// What the caller of [`Scan::run_again`] reads of its outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reading {
    /// Everything a scan gives: the estimates, their intervals and effective bases.
    Estimates,
    /// The values and base n alone ([`crate::stats::values`], [`crate::stats::base_n`]): what
    /// judging an explanation's variants reads. A weight the settling scan only took along
    /// for them is summed without its squares (half the scan's extra work a row), so an
    /// outcome on it has no [`Sums::moments`]; every value and count is a scan's, to the bit.
    Values,
}

/// What a run kept of the rows it reduced ([`Scan::run_keeping`]); only the scan that made it
/// reads it.
pub type Kept = std::sync::Arc<dyn std::any::Any + Send + Sync>;

thread_local! {
    static DEADLINE: std::cell::Cell<Option<std::time::Instant>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` with the scans it starts on this thread given up once `deadline` passes: the scan's
/// work is dropped and its jobs fail (a service's time limit then frees its turn at once, rather
/// than when the scan would have ended). `None` is no limit; the previous limit comes back after.
pub fn with_deadline<T>(deadline: Option<std::time::Instant>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<std::time::Instant>);
    impl Drop for Restore {
        fn drop(&mut self) {
            DEADLINE.set(self.0);
        }
    }
    let _restore = Restore(DEADLINE.replace(deadline));
    f()
}

/// The deadline [`with_deadline`] set on this thread, if any. A scan that hands work to other
/// threads passes it on with [`with_deadline`].
pub fn deadline() -> Option<std::time::Instant> {
    DEADLINE.get()
}

/// Why a scan given up at its deadline failed.
pub const PAST_DEADLINE: &str = "the time limit passed before the scan ended";

/// What to compute over one set of base rows.
#[derive(Debug, Clone)]
pub struct Job {
    /// The base rows.
    pub rows: Rows,
    /// The measures.
    pub measures: Vec<Measure>,
    /// Cells whose unweighted base counts are wanted: (breakdown, cell, SQL filter).
    pub cells: Vec<(String, String, String)>,
}

impl Job {
    /// The job a resolved citation makes.
    pub fn of(r: &Resolved) -> Job {
        Job { rows: r.rows.clone(), measures: r.measures.clone(), cells: r.cells.clone() }
    }

    /// Its key: equal keys, equal sums.
    pub fn key(&self) -> JobKey {
        JobKey::of(self)
    }
}

/// The sums for one job.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The linear variables, in the order of `sums.totals`.
    pub vars: Vec<Var>,
    /// The sums.
    pub sums: Sums,
    /// Unweighted base counts of the cells: (breakdown, cell, n).
    pub cells: Vec<(String, String, u64)>,
}

/// What a run read, so fusion can be checked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ScanStats {
    /// Distinct tables scanned.
    pub tables_scanned: usize,
    /// Scans made (one per table when fused).
    pub scans: usize,
    /// Rows aggregated over all scans (after the cited periods' filter, which the Parquet reader
    /// also uses to skip row groups).
    pub rows_scanned: u64,
    /// Aggregates computed for the jobs asked for (after sharing identical ones); what a scan
    /// takes along for the explanations is not counted.
    pub aggregates: usize,
    /// Extra fused scans made to explain claims not reproduced (one per table that has any).
    pub explanation_scans: usize,
    /// The plan each scan of the settling run took, and why, in table order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plans: Vec<PlanChoice>,
}

impl ScanStats {
    /// Adds what another scan of the same run read.
    pub fn absorb(&mut self, other: ScanStats) {
        self.scans += other.scans;
        self.rows_scanned += other.rows_scanned;
        self.aggregates += other.aggregates;
        self.plans.extend(other.plans);
    }
}

/// The two ways one scan of a table is planned (docs/design.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScanPlan {
    /// DataFusion evaluates each filter once per row as a boolean; recite packs flags and codes
    /// into keys and reduces them to sums per code (`engine/grouped/`).
    Grouped,
    /// One `SUM(CASE …)` aggregate per sum.
    Summed,
    /// No scan: the sums were read from the sufficient-statistics cache (`--cache`,
    /// docs/cache.md).
    Cache,
}

/// The plan one scan of a table took, and why.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PlanChoice {
    /// The table, by its catalog name.
    pub table: String,
    /// The plan.
    pub plan: ScanPlan,
    /// Why this plan, in words.
    pub reason: String,
}

/// Which declared filter an error is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// The cited period's filter.
    Period,
    /// The cited base's filter (`{column}` filled in).
    Base,
    /// A breakdown cell's filter.
    Cell {
        /// The breakdown's name.
        breakdown: String,
        /// The cell's name.
        cell: String,
    },
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Role::Period => write!(f, "period filter"),
            Role::Base => write!(f, "base filter"),
            Role::Cell { breakdown, cell } => write!(f, "filter of breakdown {breakdown:?} cell {cell:?}"),
        }
    }
}

/// Why the engine could not compute a job. Every kind but [`EngineError::Internal`] is about the
/// data layer (a declaration, the data), fails only the jobs that use it, and makes their
/// claims UNVERIFIABLE; an internal failure means the run cannot be trusted.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineError {
    /// A declared filter that does not plan, is too large, or fails on the data.
    Filter {
        /// Which filter.
        role: Role,
        /// Its SQL.
        sql: String,
        /// What went wrong, as a phrase (`does not plan: …`, `fails on the data: …`).
        error: String,
    },
    /// A declared weight whose values cannot be summed: not numbers, negative, NaN or
    /// infinite, or sums beyond the fixed point.
    Weight {
        /// The weight column.
        weight: String,
        /// What went wrong, as a phrase.
        error: String,
    },
    /// The table's files cannot be read (missing, unreadable, malformed), or its declared
    /// design does not fit them.
    Table {
        /// The table's files.
        location: PathBuf,
        /// What went wrong.
        error: String,
    },
    /// A fault of recite or DataFusion itself (a panic in a task, an internal error, memory
    /// exhausted): the run fails.
    Internal(String),
    /// The Ballista cluster failed the scan (its deadline passed, the scheduler stopped
    /// answering, an executor was lost): the table's claims fail, naming the scheduler.
    Cluster(String),
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = match self {
            EngineError::Filter { role, sql, error } => {
                format!("the {role} {:?} {error}", catalog::shorten(sql))
            }
            EngineError::Weight { weight, error } => format!("weight {weight:?} {error}"),
            EngineError::Table { location, error } => format!("{}: {error}", location.display()),
            EngineError::Internal(e) => format!("internal engine failure: {e}"),
            EngineError::Cluster(e) => e.to_string(),
        };
        // A URL's userinfo and query (a presigned signature) never reach a report or a log.
        f.write_str(&crate::redact::redact(&text))
    }
}

impl std::error::Error for EngineError {}
