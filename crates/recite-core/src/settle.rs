//! Settling claims: claimed vs recomputed numbers → a verdict, with what the agent most likely
//! computed instead.
//!
//! - [`verdict`]: what settling produces, as data (verdicts, measure and base rows, gaps,
//!   warnings audit, explanations); the reports depend on it alone;
//! - [`compare`]: one claim's numbers against the engine's outcome → a [`Settlement`];
//! - [`audit`]: the claim's small-base warnings against the recomputed cells;
//! - [`explain`]: the nearby computations that would reproduce a claim not reproduced;
//! - [`session`]: the whole path (resolve → run → settle → explain) for `verify` and `check`,
//!   one job table by [`crate::scan::JobKey`], fused per table;
//! - [`pipeline`]: a session over claims held in memory (`verify`);
//! - [`whatif`]: one claim re-run under an alternative the catalog declares (the workbench).
//!
//! Dependencies point one way: `pipeline` → `session` → `explain` → `compare` → `audit` →
//! `verdict`, and `whatif` → `explain`, `compare`.

pub mod audit;
pub mod compare;
pub mod explain;
pub mod pipeline;
pub mod session;
pub mod verdict;
pub mod whatif;

/// What a settling run read; the engine counts it, [`pipeline`] returns it.
pub use crate::scan::ScanStats;
pub use pipeline::{Claim, Options, settle_all, try_settle_all};
pub use session::Session;
pub use verdict::{
    AuditKind, BaseRow, Cause, Comparison, Explanation, Gap, MeasureRow, Rerun, Series, SeriesPoint,
    Settlement, Verdict, WarningAudit,
};
