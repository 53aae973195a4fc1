//! The engine: DataFusion, in process. Every estimate of every job on one table is computed in
//! ONE scan of that table: each needed sum becomes one `SUM(CASE WHEN … THEN … END)` aggregate
//! of a single aggregate plan (the CASE form measured fastest on DataFusion 55; see DESIGN.md),
//! and identical aggregates from different jobs are computed once.
//!
//! Names reach DataFusion only as column expressions built from the catalog (`ident`), values
//! only as literals. The SQL that is parsed is the catalog's own period, base and cell filters,
//! parsed as expressions (never statements) against the table's schema.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type, Schema};
use datafusion::common::DFSchema;
use datafusion::functions_aggregate::expr_fn::{count, sum};
use datafusion::logical_expr::{Expr, ExprSchemable};
use datafusion::prelude::{
    CsvReadOptions, ParquetReadOptions, SessionConfig, SessionContext, cast, ident, lit, when,
};
use rayon::prelude::*;
use serde::Serialize;

use crate::catalog::{self, Study};
use crate::extractor::{Clause, Measure, Op, Pred};
use crate::resolve::{Rows, Schemas};
use crate::stats::{Sums, Var, needed_pairs, vars_for};

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
    /// Aggregates computed (after sharing identical ones).
    pub aggregates: usize,
    /// Extra fused scans made to explain claims not reproduced (one per table that has any).
    pub explanation_scans: usize,
}

/// The jobs of one scan: a table's files and design, and which jobs read it.
type ScanGroup = ((PathBuf, Option<(String, String)>), Vec<usize>);
/// What one scan returns: each job's outcome by job index, and what was read.
type ScanResult = (Vec<(usize, Result<Outcome, String>)>, ScanStats);

mod grouped;

struct Registered {
    name: String,
    schema: Arc<Schema>,
}

/// An in-process DataFusion session with the catalog's tables registered on demand.
pub struct Engine {
    rt: tokio::runtime::Runtime,
    ctx: SessionContext,
    tables: Mutex<HashMap<PathBuf, Arc<Registered>>>,
    grouped: bool,
}

impl Default for Engine {
    fn default() -> Self {
        Self::new()
    }
}

impl Engine {
    /// A session using every core.
    pub fn new() -> Engine {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(cores)
            .thread_name("recite-engine")
            .enable_all()
            .build()
            .expect("a tokio runtime can be built");
        let config = SessionConfig::new().with_target_partitions(cores).with_information_schema(false);
        Engine {
            rt,
            ctx: SessionContext::new_with_config(config),
            tables: Mutex::new(HashMap::new()),
            grouped: true,
        }
    }

    /// An engine that always uses the summed scan (one `SUM(CASE …)` per sum); for tests and
    /// benchmarks that compare the two plans.
    pub fn summed_only() -> Engine {
        Engine { grouped: false, ..Engine::new() }
    }

    /// Registers a table's files (once) and returns its internal name and schema.
    fn register(&self, location: &Path) -> Result<Arc<Registered>, String> {
        let mut tables = self.tables.lock().map_err(|_| "engine state poisoned".to_string())?;
        if let Some(r) = tables.get(location) {
            return Ok(r.clone());
        }
        let text = location.to_string_lossy().to_string();
        let is_glob = text.contains(['*', '?', '[']);
        if !is_glob && !location.exists() {
            return Err(format!("file {} does not exist", location.display()));
        }
        let name = format!("t{}", tables.len());
        let lower = text.to_lowercase();
        let result = self.rt.block_on(async {
            if lower.ends_with(".csv") {
                let opts = CsvReadOptions::new().has_header(true).schema_infer_max_records(1_000_000);
                self.ctx.register_csv(&name, &text, opts).await
            } else {
                self.ctx.register_parquet(&name, &text, ParquetReadOptions::default()).await
            }
        });
        result.map_err(|e| format!("{}: {e}", location.display()))?;
        let schema = self
            .rt
            .block_on(self.ctx.table(name.as_str()))
            .map_err(|e| format!("{}: {e}", location.display()))?
            .schema()
            .as_arrow()
            .clone();
        let reg = Arc::new(Registered { name, schema: Arc::new(schema) });
        tables.insert(location.to_path_buf(), reg.clone());
        Ok(reg)
    }

    /// The schema of the files at `location`.
    pub fn schema_of(&self, location: &Path) -> Result<Arc<Schema>, String> {
        self.register(location).map(|r| r.schema.clone())
    }

    /// Plans a catalog filter against a table, to prove it (used by `catalog check`).
    pub fn check_filter(&self, location: &Path, sql: &str) -> Result<(), String> {
        let reg = self.register(location)?;
        let dfs = DFSchema::try_from(reg.schema.as_ref().clone()).map_err(|e| e.to_string())?;
        let expr = self.ctx.parse_sql_expr(sql, &dfs).map_err(|e| e.to_string())?;
        match expr.get_type(&dfs).map_err(|e| e.to_string())? {
            DataType::Boolean | DataType::Null => Ok(()),
            other => Err(format!("is {other}, not true/false")),
        }
    }

    /// Runs every job, one scan per table, tables in parallel. One job's error (a filter that
    /// does not plan) never fails the others; a table that cannot be read fails only its jobs.
    pub fn run(&self, jobs: &[Job]) -> (Vec<Result<Outcome, String>>, ScanStats) {
        let mut by_table = BTreeMap::new();
        for (i, job) in jobs.iter().enumerate() {
            by_table
                .entry((job.rows.location.clone(), job.rows.design.clone()))
                .or_insert_with(Vec::new)
                .push(i);
        }
        let groups: Vec<ScanGroup> = by_table.into_iter().collect();
        let per_group: Vec<ScanResult> = groups
            .par_iter()
            .map(|((location, design), members)| {
                let picked: Vec<&Job> = members.iter().map(|&i| &jobs[i]).collect();
                match self.scan_best(location, design.as_ref(), &picked) {
                    Ok((outs, stats)) => (members.iter().copied().zip(outs).collect(), stats),
                    Err(e) => (members.iter().map(|&i| (i, Err(e.clone()))).collect(), ScanStats::default()),
                }
            })
            .collect();
        let mut results: Vec<Result<Outcome, String>> = (0..jobs.len()).map(|_| Err(String::new())).collect();
        let mut stats = ScanStats::default();
        for (outs, s) in per_group {
            for (i, r) in outs {
                results[i] = r;
            }
            stats.scans += s.scans;
            stats.rows_scanned += s.rows_scanned;
            stats.aggregates += s.aggregates;
        }
        stats.tables_scanned =
            groups.iter().map(|((location, _), _)| location).collect::<std::collections::BTreeSet<_>>().len();
        (results, stats)
    }

    /// One scan of one table for all its jobs: grouped when every cited column holds integer
    /// codes (cost independent of the number of claims), else one aggregate of `SUM(CASE …)`.
    fn scan_best(
        &self,
        location: &Path,
        design: Option<&(String, String)>,
        jobs: &[&Job],
    ) -> Result<(Vec<Result<Outcome, String>>, ScanStats), String> {
        let schema = self.register(location)?.schema.clone();
        if let Some((s, p)) = design {
            for c in [s, p] {
                if schema.field_with_name(c).is_err() {
                    return Err(format!("design column {c:?} is not a column of {}", location.display()));
                }
            }
        }
        match grouped::unsuitable(&schema, jobs) {
            None if self.grouped => self.scan_grouped(location, design, jobs),
            _ => self.scan(location, design, jobs),
        }
    }

    /// One scan of one table for all its jobs, every sum one `SUM(CASE …)` aggregate.
    fn scan(
        &self,
        location: &Path,
        design: Option<&(String, String)>,
        jobs: &[&Job],
    ) -> Result<(Vec<Result<Outcome, String>>, ScanStats), String> {
        let reg = self.register(location)?;
        let mut filters = Filters::new(self, &reg.schema)?;
        let mut aggs = Aggregates::default();
        let rows_slot = aggs.slot(count(lit(1)));
        let mut plans: Vec<Result<JobPlan, String>> = Vec::with_capacity(jobs.len());
        for job in jobs {
            plans.push(self.plan_job(job, &mut aggs, &mut filters, design.is_none()));
        }
        if let Some((strata, psu)) = design {
            for c in [strata, psu] {
                if reg.schema.field_with_name(c).is_err() {
                    return Err(format!("design column {c:?} is not a column of {}", location.display()));
                }
            }
        }
        let group: Vec<Expr> = match design {
            Some((strata, psu)) => vec![
                cast(ident(strata), DataType::Utf8).alias("__stratum"),
                cast(ident(psu), DataType::Utf8).alias("__psu"),
            ],
            None => vec![],
        };
        let n_aggs = aggs.exprs.len();
        let exprs: Vec<Expr> =
            aggs.exprs.into_iter().enumerate().map(|(i, e)| e.alias(format!("a{i}"))).collect();
        let started = Instant::now();
        let batches: Vec<RecordBatch> = self
            .rt
            .block_on(async {
                let df = self.ctx.table(reg.name.as_str()).await?;
                df.aggregate(group.clone(), exprs)?.collect().await
            })
            .map_err(|e| format!("scanning {}: {e}", location.display()))?;
        let _elapsed = started.elapsed();
        // Read every aggregate column into rows of f64 (one row per PSU, or one row).
        let offset = group.len();
        let mut rows: Vec<(String, Vec<f64>)> = Vec::new();
        for b in &batches {
            let strata_col = (offset > 0).then(|| b.column(0).as_string::<i32>().clone());
            for r in 0..b.num_rows() {
                let stratum = strata_col
                    .as_ref()
                    .map(|s| if s.is_null(r) { String::new() } else { s.value(r).to_string() });
                let vals = (0..n_aggs).map(|i| value_at(b.column(offset + i), r)).collect();
                rows.push((stratum.unwrap_or_default(), vals));
            }
        }
        let total = |slot: usize| rows.iter().map(|(_, v)| v[slot]).sum::<f64>();
        let stats = ScanStats {
            tables_scanned: 1,
            scans: 1,
            rows_scanned: total(rows_slot) as u64,
            aggregates: n_aggs,
            explanation_scans: 0,
        };
        let outcomes = plans
            .into_iter()
            .map(|plan| {
                let plan = plan?;
                let totals: Vec<f64> = plan.totals.iter().map(|&s| total(s)).collect();
                let counts: Vec<f64> = plan.counts.iter().map(|&s| total(s)).collect();
                let moments = plan.moments.iter().map(|(&jk, &s)| (jk, total(s))).collect();
                let psus = if design.is_some() {
                    rows.iter()
                        .map(|(h, v)| (h.clone(), plan.totals.iter().map(|&s| v[s]).collect()))
                        .collect()
                } else {
                    Vec::new()
                };
                let cells = plan
                    .cells
                    .iter()
                    .map(|(b, c, s)| (b.clone(), c.clone(), total(*s).round() as u64))
                    .collect();
                Ok(Outcome {
                    vars: plan.vars,
                    sums: Sums { n: total(plan.n), totals, counts, moments, psus },
                    cells,
                })
            })
            .collect();
        Ok((outcomes, stats))
    }

    fn plan_job(
        &self,
        job: &Job,
        aggs: &mut Aggregates,
        filters: &mut Filters,
        weights_only: bool,
    ) -> Result<JobPlan, String> {
        let r = &job.rows;
        let mut parse = |what: &str, sql: &str| filters.get(what, sql);
        let x = cast(ident(&r.column), DataType::Float64);
        let mut base = x.clone().is_not_null();
        if !r.missing.is_empty() {
            base = base.and(x.clone().in_list(r.missing.iter().map(|&m| lit(m)).collect(), true));
        }
        if let Some(f) = &r.period_filter {
            base = base.and(parse("period", f)?);
        }
        if let Some(f) = &r.base_filter {
            base = base.and(parse("base", f)?);
        }
        let w = match &r.weight {
            Some(wc) => {
                let w = cast(ident(wc), DataType::Float64);
                base = base.and(w.clone().is_not_null()).and(w.clone().gt(lit(0.0)));
                w
            }
            None => lit(1.0),
        };
        let mut cell_filters = Vec::new();
        for (b, c, f) in &job.cells {
            cell_filters.push((b.clone(), c.clone(), parse("cell", f)?));
        }
        let vars = vars_for(&job.measures);
        let sum_when = |cond: Expr, value: Expr| -> Result<Expr, String> {
            Ok(sum(when(cond, value).end().map_err(|e| e.to_string())?))
        };
        let n = aggs.slot(sum_when(base.clone(), lit(1.0))?);
        let mut totals = Vec::new();
        let mut counts = Vec::new();
        for v in &vars {
            let (cond, xpow) = var_parts(v, &x);
            let rows = and_all(base.clone(), cond);
            totals.push(aggs.slot(sum_when(rows.clone(), times(w.clone(), &x, xpow))?));
            counts.push(aggs.slot(sum_when(rows, lit(1.0))?));
        }
        let mut moments = HashMap::new();
        let w2 = w.clone() * w.clone();
        for (j, k) in needed_pairs(&job.measures, &vars) {
            // With a design the PSU totals carry the variance; only Σw²·zⱼ (effective bases).
            if !weights_only && j != k {
                continue;
            }
            let (pred, pow) = product(&vars[j], &vars[k]);
            let cond = and_all(base.clone(), pred.map(|p| pred_expr(&p, &x)));
            moments.insert((j, k), aggs.slot(sum_when(cond, times(w2.clone(), &x, pow))?));
        }
        let cells = cell_filters
            .into_iter()
            .map(|(b, c, f)| Ok((b, c, aggs.slot(sum_when(base.clone().and(f), lit(1.0))?))))
            .collect::<Result<Vec<_>, String>>()?;
        Ok(JobPlan { vars, n, totals, counts, moments, cells })
    }
}

impl Schemas for Engine {
    fn schema(&self, study: &Study, table: &catalog::Table) -> Result<Arc<Schema>, String> {
        self.schema_of(&table.location(study))
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
    fn new(engine: &'a Engine, schema: &Schema) -> Result<Filters<'a>, String> {
        let schema = DFSchema::try_from(schema.clone()).map_err(|e| e.to_string())?;
        Ok(Filters { ctx: &engine.ctx, schema, parsed: HashMap::new() })
    }

    /// The expression of a filter; `what` (period, base, cell) names it in errors.
    pub(crate) fn get(&mut self, what: &str, sql: &str) -> Result<Expr, String> {
        let (ctx, schema) = (self.ctx, &self.schema);
        self.parsed
            .entry(sql.to_string())
            .or_insert_with(|| {
                let e = ctx.parse_sql_expr(sql, schema).map_err(|e| e.to_string())?;
                e.get_type(schema).map_err(|e| e.to_string())?;
                Ok(e)
            })
            .clone()
            .map_err(|e| format!("the {what} filter {sql:?} does not plan: {e}"))
    }
}

/// Where each sum of one job sits among the scan's aggregates.
struct JobPlan {
    vars: Vec<Var>,
    n: usize,
    totals: Vec<usize>,
    counts: Vec<usize>,
    moments: HashMap<(usize, usize), usize>,
    cells: Vec<(String, String, usize)>,
}

/// The aggregates of one scan, identical expressions shared.
#[derive(Default)]
struct Aggregates {
    exprs: Vec<Expr>,
    index: HashMap<Expr, usize>,
}

impl Aggregates {
    fn slot(&mut self, e: Expr) -> usize {
        if let Some(&i) = self.index.get(&e) {
            return i;
        }
        self.exprs.push(e.clone());
        self.index.insert(e, self.exprs.len() - 1);
        self.exprs.len() - 1
    }
}

/// The product of two variables as (simplified predicate, power of x).
fn product(a: &Var, b: &Var) -> (Option<Pred>, u8) {
    let parts = |v: &Var| match v {
        Var::One => (None, 0),
        Var::Ind(p) => (Some(p.clone()), 0),
        Var::X => (None, 1),
        Var::X2 => (None, 2),
    };
    let ((pa, xa), (pb, xb)) = (parts(a), parts(b));
    let pred = match (pa, pb) {
        (Some(p), Some(q)) => Some(p.and(&q)),
        (p, q) => p.or(q),
    };
    (pred, xa + xb)
}

/// A variable as (condition on x, power of x).
fn var_parts(v: &Var, x: &Expr) -> (Option<Expr>, u8) {
    match v {
        Var::One => (None, 0),
        Var::Ind(p) => (Some(pred_expr(p, x)), 0),
        Var::X => (None, 1),
        Var::X2 => (None, 2),
    }
}

fn and_all(base: Expr, extra: Option<Expr>) -> Expr {
    match extra {
        Some(e) => base.and(e),
        None => base,
    }
}

fn times(w: Expr, x: &Expr, pow: u8) -> Expr {
    (0..pow).fold(w, |acc, _| acc * x.clone())
}

/// A predicate over the cited column as a DataFusion expression: numbers only.
pub fn pred_expr(p: &Pred, x: &Expr) -> Expr {
    let clauses = p.0.iter().map(|c| match c {
        Clause::Cmp(op, v) => {
            let (x, v) = (x.clone(), lit(*v));
            match op {
                Op::Eq => x.eq(v),
                Op::Ne => x.not_eq(v),
                Op::Lt => x.lt(v),
                Op::Le => x.lt_eq(v),
                Op::Gt => x.gt(v),
                Op::Ge => x.gt_eq(v),
            }
        }
        Clause::In(vs) => x.clone().in_list(vs.iter().map(|v| lit(*v)).collect(), false),
    });
    clauses.reduce(|a, b| a.and(b)).unwrap_or(lit(true))
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
