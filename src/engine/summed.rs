//! The summed plan: every sum a job needs is one `SUM(CASE WHEN … THEN … END)` aggregate of a
//! single aggregate plan over the table (the CASE form measured fastest on DataFusion 55; see
//! docs/design.md), identical aggregates from different jobs computed once. It takes any
//! column; `Engine::choose` prefers the grouped plan when it can.

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::DataType;
use datafusion::functions_aggregate::expr_fn::{count, sum};
use datafusion::logical_expr::Expr;
use datafusion::prelude::{cast, ident, lit, when};

use super::{
    Engine, EngineError, Filters, Job, Outcome, Outcomes, PlanChoice, Role, ScanError, ScanPlan, ScanStats,
    bad_weight, check_weight_sums, invalid_weight, scan_error, table_of, value_at,
};
use super::{Sums, Var, needed_pairs, vars_for};
use crate::extractor::{Clause, Op, Pred};

impl Engine {
    /// The summed scan, recorded in the stats as the plan taken, for `reason`.
    pub(crate) fn scan_summed(
        &self,
        location: &Path,
        design: Option<&(String, String)>,
        jobs: &[&Job],
        reason: String,
    ) -> Result<(Outcomes, ScanStats), ScanError> {
        let (outcomes, mut stats) = self.scan(location, design, jobs)?;
        stats.plans.push(PlanChoice { table: table_of(jobs), plan: ScanPlan::Summed, reason });
        Ok((outcomes, stats))
    }

    /// One scan of one table for all its jobs, every sum one `SUM(CASE …)` aggregate.
    pub(crate) fn scan(
        &self,
        location: &Path,
        design: Option<&(String, String)>,
        jobs: &[&Job],
    ) -> Result<(Outcomes, ScanStats), ScanError> {
        let reg = self.register_at(location, self.place(location, jobs).0)?;
        let mut filters = Filters::new(self, &reg.schema)?;
        let mut aggs = Aggregates::default();
        let rows_slot = aggs.slot(count(lit(1)));
        let mut plans: Vec<Result<JobPlan, EngineError>> = Vec::with_capacity(jobs.len());
        for job in jobs {
            plans.push(self.plan_job(job, &mut aggs, &mut filters, design.is_none()));
        }
        // As in the grouped scan, only rows in some cited period matter: saying so lets the
        // reader skip row groups and whole partition folders (`wave=6/`). Every sum is of its
        // period's rows already, so none changes. Not with a design: every PSU must stay.
        let keep = if design.is_none() && plans.iter().all(Result::is_ok) {
            let periods: Option<Vec<Expr>> = jobs
                .iter()
                .map(|j| j.rows.period_filter.as_deref().and_then(|f| filters.get(Role::Period, f).ok()))
                .collect();
            periods.and_then(|p| p.into_iter().reduce(|a, b| a.or(b)))
        } else {
            None
        };
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
            .run_on(&reg.ctx, async {
                let mut df = reg.ctx.table(reg.name.as_str()).await?;
                if let Some(keep) = keep {
                    df = df.filter(keep)?;
                }
                df.aggregate(group.clone(), exprs)?.collect().await
            })
            .map_err(|e| scan_error(&e))?;
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
            plans: Vec::new(),
        };
        let outcomes = plans
            .into_iter()
            .zip(jobs)
            .map(|(plan, job)| {
                let plan = plan?;
                let weight = job.rows.weight.as_deref();
                if let (Some(w), Some(bad)) = (weight, plan.bad_weights)
                    && total(bad) > 0.0
                {
                    return Err(invalid_weight(w));
                }
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
                let sums = Sums { n: total(plan.n), totals, counts, moments, psus, replicates: None };
                check_weight_sums(weight, &sums)?;
                Ok(Outcome { vars: plan.vars, sums, cells })
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
    ) -> Result<JobPlan, EngineError> {
        let r = &job.rows;
        let mut parse = |role: Role, sql: &str| filters.get(role, sql);
        let x = cast(ident(&r.column), DataType::Float64);
        let mut base = x.clone().is_not_null();
        if !r.missing.is_empty() {
            base = base.and(x.clone().in_list(r.missing.iter().map(|&m| lit(m)).collect(), true));
        }
        for [lo, hi] in &r.missing_ranges {
            base = base.and(x.clone().not_between(lit(*lo), lit(*hi)));
        }
        if let Some(f) = &r.period_filter {
            base = base.and(parse(Role::Period, f)?);
        }
        if let Some(f) = &r.base_filter {
            base = base.and(parse(Role::Base, f)?);
        }
        let internal = |e: datafusion::error::DataFusionError| EngineError::Internal(e.strip_backtrace());
        let sum_when = |cond: Expr, value: Expr| -> Result<Expr, EngineError> {
            Ok(sum(when(cond, value).end().map_err(internal)?))
        };
        let (w, bad_weights) = match &r.weight {
            Some(wc) => {
                let w = cast(ident(wc), DataType::Float64);
                // Rows of the base with a value no weight may have fail the job (both plans).
                let bad = aggs.slot(sum_when(base.clone().and(bad_weight(&w)), lit(1.0))?);
                base = base.and(w.clone().is_not_null()).and(w.clone().gt(lit(0.0)));
                (w, Some(bad))
            }
            None => (lit(1.0), None),
        };
        let mut cell_filters = Vec::new();
        for (b, c, f) in &job.cells {
            let role = Role::Cell { breakdown: b.clone(), cell: c.clone() };
            cell_filters.push((b.clone(), c.clone(), parse(role, f)?));
        }
        let vars = vars_for(&job.measures);
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
            .collect::<Result<Vec<_>, EngineError>>()?;
        Ok(JobPlan { vars, n, totals, counts, moments, cells, bad_weights })
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
    /// Rows of the base with a bad weight value (weighted jobs).
    bad_weights: Option<usize>,
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
