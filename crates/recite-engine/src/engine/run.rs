//! Running jobs: one scan per table, tables in parallel, each by the best plan; a scan that
//! fails on the data split by what its jobs declare, so one claim never fails another.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type, Schema};
use datafusion::functions_aggregate::expr_fn::{count, sum};
use datafusion::logical_expr::Expr;
use datafusion::prelude::{cast, ident};
use rayon::prelude::*;

use super::grouped::{self, Accumulated};
use super::{
    Engine, EngineError, Filters, Job, Outcome, Registered, Replicated, Role, ScanPlan, ScanStats, cache,
    flag, remote,
};
use crate::resolve::Rows;
use crate::scan::Scan;

/// The catalog name of the table a scan's jobs read.
pub(super) fn table_of(jobs: &[&Job]) -> String {
    jobs.first().map(|j| j.rows.table.clone()).unwrap_or_default()
}

/// The jobs of one scan: a table's files and design, and which jobs read it.
type ScanGroup = ((PathBuf, Option<(String, String)>), Vec<usize>);
/// What one scan returns: each job's outcome by job index, what was read, and the base sums its
/// grouped scans accumulated.
type ScanResult<'a> = (Vec<(usize, Result<Outcome, EngineError>)>, ScanStats, Vec<Accumulated<'a>>);
/// Each job's outcome, in the order of the jobs.
pub(super) type Outcomes = Vec<Result<Outcome, EngineError>>;
/// What a scan returns: each job's outcome in the order of the jobs, what was read, and the base
/// sums its grouped scans accumulated, which the cache keeps ([`Engine::run_cached`]).
pub(super) type Scanned<'a> = (Outcomes, ScanStats, Vec<Accumulated<'a>>);

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
        _ => ScanError::Data(crate::postgres::plain_words(&e.strip_backtrace())),
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

    fn run_again(
        &self,
        jobs: &[Job],
        kept: Option<&recite_core::scan::Kept>,
        reading: recite_core::scan::Reading,
    ) -> (Outcomes, ScanStats) {
        match kept.and_then(|k| k.downcast_ref::<Vec<Arc<grouped::KeptGroups>>>()) {
            Some(kept) => Engine::run_again(self, jobs, kept, reading),
            None => Engine::run(self, jobs),
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

impl Engine {
    /// One aggregate of `exprs` over the table (the rows `keep` selects); only whether it fails.
    pub(super) fn probe(
        &self,
        reg: &Registered,
        keep: Option<Expr>,
        exprs: Vec<Expr>,
    ) -> Result<(), ScanError> {
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
    pub(super) fn run_keeping(
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
    /// every job through it. `reading`: what the caller reads of the outcomes (a weight only
    /// taken along answers [`recite_core::scan::Reading::Values`] alone, [`grouped::KeptGroups::serve`]).
    pub(super) fn run_again(
        &self,
        jobs: &[Job],
        kept: &[Arc<grouped::KeptGroups>],
        reading: recite_core::scan::Reading,
    ) -> (Outcomes, ScanStats) {
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
            for (i, out) in on.into_iter().zip(groups.serve(self, &picked, reading)) {
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

    /// [`Engine::run`]'s jobs without replicate weights, and the groups of the grouped scans it
    /// ran: through the cache when the engine has one ([`cache::Cache::answer`]), else all
    /// scanned. Without a cache, the grouped scans take along the `anticipated` jobs' weights
    /// and flags; with one, later runs go through the cache, so nothing is anticipated.
    pub(super) fn run_cached(
        &self,
        jobs: &[Job],
        anticipated: &[Job],
    ) -> (Outcomes, ScanStats, Vec<Arc<grouped::KeptGroups>>) {
        let Some(cache) = self.cache.as_ref().filter(|_| self.grouped) else {
            let (outcomes, stats, accumulated) = self.run_jobs(jobs, anticipated);
            return (outcomes, stats, grouped::kept(&accumulated));
        };
        let tables = cache::Identifier::new(&self.rt, &self.ctx, &self.tables);
        cache.answer(&tables, jobs, |picked| self.run_jobs(picked, &[]))
    }

    /// [`Engine::run`] without replicate weights, and the base sums its grouped scans
    /// accumulated (taking along the weights and flags of the `anticipated` jobs on their
    /// tables).
    pub(super) fn run_jobs<'a>(&self, jobs: &'a [Job], anticipated: &[Job]) -> Scanned<'a> {
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
    pub(super) fn scan_isolated<'a>(
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
    pub(super) fn diagnose(
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
    pub(super) fn scan_best<'a>(
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
            c.record(here, &stats.plans);
        }
        Ok((outcomes, stats, accumulated))
    }

    /// The plan for one scan of a table's jobs, and why: grouped when every cited column holds
    /// integer codes and there are few enough of them, else summed. On a cluster the same (the
    /// grouped scan reduced by a plan the executors run), so the report does not change.
    pub(super) fn choose(&self, schema: &Schema, jobs: &[&Job]) -> (ScanPlan, String) {
        if !self.grouped {
            return (ScanPlan::Summed, "the grouped plan is turned off (Engine::summed_only)".into());
        }
        match grouped::unsuitable(schema, jobs) {
            Some(why) => (ScanPlan::Summed, why),
            None => (ScanPlan::Grouped, grouped::suitable(jobs)),
        }
    }
}
