//! The summed plan: every sum a job needs is one `SUM(CASE WHEN … THEN … END)` aggregate of a
//! single aggregate plan over the table (the CASE form measured fastest on DataFusion 55; see
//! docs/design.md), identical aggregates from different jobs computed once. It takes any
//! column; `Engine::choose` prefers the grouped plan when it can.
//!
//! Sums of weights and values are exact integers, so the same for any partitioning: a first
//! small aggregate measures the range of each weight and value column over the scan's rows
//! ([`Ranges`]), each term w^a·x^p is scaled by a power of two so that its bound is 2^86 and
//! cast to `Decimal128(38, 0)` (a native conversion), and the integers are summed (docs/design.md,
//! "Exact sums").

use std::collections::HashMap;
use std::path::Path;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::DataType;
use datafusion::functions_aggregate::expr_fn::{count, max, min, sum};
use datafusion::logical_expr::Expr;
use datafusion::prelude::{cast, ident, lit, when};

use super::{
    Engine, EngineError, Filters, Job, Outcome, Outcomes, PlanChoice, Role, ScanError, ScanPlan, ScanStats,
    bad_weight, check_weight_sums, grouped, invalid_weight, overflow, scan_error, table_of, value_at,
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

    /// One scan of one table for all its jobs, every sum one `SUM(CASE …)` aggregate. Every sum
    /// of weights or values is exact: each term in fixed point ([`Ranges`]), summed as an
    /// integer, so no partitioning or thread count moves a bit; counts are sums of 1.0, exact
    /// below 2^53.
    pub(crate) fn scan(
        &self,
        location: &Path,
        design: Option<&(String, String)>,
        jobs: &[&Job],
    ) -> Result<(Outcomes, ScanStats), ScanError> {
        let reg = self.register_at(location, self.place(location, jobs).0)?;
        let mut filters = Filters::new(self, &reg.schema)?;
        // First which jobs plan, and so which weights and columns the fixed point needs the
        // range of; then that range (one small aggregate); then the plans with their scales.
        let mut ranges = Ranges::default();
        let mut planned = true;
        for job in jobs {
            match self.plan_job(job, &mut Aggregates::default(), &mut filters, design.is_none(), &ranges) {
                Ok(_) => ranges.want(job),
                Err(_) => planned = false,
            }
        }
        // As in the grouped scan, only rows in some cited period matter: saying so lets the
        // reader skip row groups and whole partition folders (`wave=6/`). Every sum is of its
        // period's rows already, so none changes. Not with a design: every PSU must stay.
        let keep = if design.is_none() && planned {
            let periods: Option<Vec<Expr>> = jobs
                .iter()
                .map(|j| j.rows.period_filter.as_deref().and_then(|f| filters.get(Role::Period, f).ok()))
                .collect();
            periods.and_then(|p| p.into_iter().reduce(|a, b| a.or(b)))
        } else {
            None
        };
        ranges.measure(self, &reg, keep.clone())?;
        let mut aggs = Aggregates::default();
        let rows_slot = aggs.slot(count(lit(1)), None);
        let mut plans: Vec<Result<JobPlan, EngineError>> = Vec::with_capacity(jobs.len());
        for job in jobs {
            plans.push(self.plan_job(job, &mut aggs, &mut filters, design.is_none(), &ranges));
        }
        let group: Vec<Expr> = match design {
            Some((strata, psu)) => vec![
                cast(ident(strata), DataType::Utf8).alias("__stratum"),
                cast(ident(psu), DataType::Utf8).alias("__psu"),
            ],
            None => vec![],
        };
        let shifts = aggs.shifts;
        let n_aggs = aggs.exprs.len();
        let exprs: Vec<Expr> =
            aggs.exprs.into_iter().enumerate().map(|(i, e)| e.alias(format!("a{i}"))).collect();
        let batches: Vec<RecordBatch> = self
            .run_on(&reg.ctx, async {
                let mut df = reg.ctx.table(reg.name.as_str()).await?;
                if let Some(keep) = keep {
                    df = df.filter(keep)?;
                }
                df.aggregate(group.clone(), exprs)?.collect().await
            })
            .map_err(|e| scan_error(&e))?;
        // Read every aggregate column into rows of f64 (one row per PSU, or one row), in the
        // order of (stratum, PSU): sums over PSUs are then taken in one order, whatever order
        // the aggregate's partitions finished in.
        let offset = group.len();
        let mut rows: Vec<((String, String), Vec<f64>)> = Vec::new();
        for b in &batches {
            let names = (offset > 0)
                .then(|| (b.column(0).as_string::<i32>().clone(), b.column(1).as_string::<i32>().clone()));
            for r in 0..b.num_rows() {
                let name = |a: &datafusion::arrow::array::StringArray| {
                    if a.is_null(r) { String::new() } else { a.value(r).to_string() }
                };
                let key = names.as_ref().map(|(s, p)| (name(s), name(p))).unwrap_or_default();
                let vals = (0..n_aggs).map(|i| sum_at(b.column(offset + i), r, shifts[i])).collect();
                rows.push((key, vals));
            }
        }
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        let total = |slot: usize| rows.iter().map(|(_, v)| v[slot]).sum::<f64>();
        let rows_scanned = total(rows_slot);
        let stats = ScanStats {
            tables_scanned: 1,
            scans: 1,
            rows_scanned: rows_scanned as u64,
            aggregates: n_aggs,
            explanation_scans: 0,
            plans: Vec::new(),
        };
        let outcomes = plans
            .into_iter()
            .zip(jobs)
            .map(|(plan, job)| {
                let plan = plan?;
                if rows_scanned >= MAX_ROWS {
                    return Err(EngineError::Table {
                        location: location.to_path_buf(),
                        error: format!(
                            "has {rows_scanned} rows to sum: the summed plan's exact sums take fewer \
                             than 2^40"
                        ),
                    });
                }
                let weight = job.rows.weight.as_deref();
                if let (Some(w), Some((bad, over))) = (weight, plan.bad_weights) {
                    if total(bad) > 0.0 {
                        return Err(invalid_weight(w));
                    }
                    if total(over) > 0.0 {
                        return Err(overflow(w));
                    }
                }
                // A NaN or infinite value among the base rows makes every sum of values NaN, as
                // a float sum would: such a number never helps a claim pass.
                let poisoned = plan.nonfinite.is_some_and(|s| total(s) > 0.0);
                let value = |slot: usize, pow: u8| if poisoned && pow > 0 { f64::NAN } else { total(slot) };
                let totals: Vec<f64> = plan.totals.iter().map(|&(s, pow)| value(s, pow)).collect();
                let counts: Vec<f64> = plan.counts.iter().map(|&s| total(s)).collect();
                let moments = plan.moments.iter().map(|(&jk, &(s, pow))| (jk, value(s, pow))).collect();
                let psus = if design.is_some() {
                    rows.iter()
                        .map(|((h, _), v)| {
                            let t = plan.totals.iter().map(
                                |&(s, pow)| {
                                    if poisoned && pow > 0 { f64::NAN } else { v[s] }
                                },
                            );
                            (h.clone(), t.collect())
                        })
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
        ranges: &Ranges,
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
        let (w, bad_weights, w_bits) = match &r.weight {
            Some(wc) => {
                let w = cast(ident(wc), DataType::Float64);
                // Rows of the base with a value no weight may have fail the job (both plans),
                // and so do rows whose weight recite does not sum (as the grouped reducer's
                // OVERFLOW: 2^256 or more, the same f64 comparison).
                let bad = aggs.slot(sum_when(base.clone().and(bad_weight(&w)), lit(1.0))?, None);
                base = base.and(w.clone().is_not_null()).and(w.clone().gt(lit(0.0)));
                let beyond = base
                    .clone()
                    .and(std::ops::Not::not(bad_weight(&w)))
                    .and(w.clone().gt_eq(lit(grouped::LARGEST_WEIGHT)));
                let over = aggs.slot(sum_when(beyond, lit(1.0))?, None);
                (w, Some((bad, over)), ranges.bits(wc))
            }
            None => (lit(1.0), None, Some(1)),
        };
        // Fixed-point terms are summed only over rows whose values are finite (the others
        // fail the job or poison its sums, above), so no cast can fail.
        let mut valid = base.clone();
        if r.weight.is_some() {
            // Nor of weights of 2^256 or more: they fail the job, and the range leaves them out,
            // so their terms would not cast (10^300 ·2^85 is beyond any Decimal128).
            let summed = w.clone().lt(lit(grouped::LARGEST_WEIGHT));
            valid = valid.and(std::ops::Not::not(bad_weight(&w))).and(summed);
        }
        let x_bits = ranges.bits(&r.column);
        let finite_x = x.clone().lt_eq(lit(f64::MAX)).and(x.clone().gt_eq(lit(f64::MIN)));
        let vars = vars_for(&job.measures);
        let nonfinite = if vars.iter().any(|v| matches!(v, Var::X | Var::X2)) {
            Some(aggs.slot(sum_when(base.clone().and(std::ops::Not::not(finite_x.clone())), lit(1.0))?, None))
        } else {
            None
        };
        // Σ of w^a·x^p over `cond`, exact: the term scaled by 2^k so that its bound (from the
        // ranges) is 2^TERM_BITS, cast to a 128-bit integer, summed.
        let exact_sum = |aggs: &mut Aggregates, cond: Expr, a: i32, pow: u8| -> Result<usize, EngineError> {
            let weight = if a == 2 { w.clone() * w.clone() } else { w.clone() };
            let term = times(weight, &x, pow);
            let mut cond = and_all(valid.clone(), Some(cond));
            if pow > 0 {
                cond = cond.and(finite_x.clone());
            }
            // The term's bound 2^b, and those of its partial products (w^a, then w^a·x): all
            // must be finite for the cast (a weight of 2^256 or more fails its job anyway, and
            // is left out of the range).
            let bounds = match (w_bits, x_bits) {
                (Some(wb), _) if pow == 0 => Some((a * wb, a * wb)),
                (Some(wb), Some(xb)) => Some((a * wb + i32::from(pow) * xb, (a * wb).max(a * wb + xb))),
                _ => None,
            };
            match bounds.filter(|&(b, partial)| (-900..=1000).contains(&b) && partial <= 1000) {
                Some((b, _)) => {
                    let k = TERM_BITS - b;
                    let scaled = cast(term * lit(pow2(k)), EXACT);
                    Ok(aggs.slot(sum(when(cond, scaled).end().map_err(internal)?), Some(k)))
                }
                // No range measured (no finite value at all: nothing to sum), or one beyond
                // any fixed point (values near the f64 limits): an f64 sum.
                None => Ok(aggs.slot(sum_when(cond, term)?, None)),
            }
        };
        let mut cell_filters = Vec::new();
        for (b, c, f) in &job.cells {
            let role = Role::Cell { breakdown: b.clone(), cell: c.clone() };
            cell_filters.push((b.clone(), c.clone(), parse(role, f)?));
        }
        let n = aggs.slot(sum_when(base.clone(), lit(1.0))?, None);
        let mut totals = Vec::new();
        let mut counts = Vec::new();
        for v in &vars {
            let (cond, xpow) = var_parts(v, &x);
            let rows = and_all(base.clone(), cond);
            totals.push((exact_sum(aggs, rows.clone(), 1, xpow)?, xpow));
            counts.push(aggs.slot(sum_when(rows, lit(1.0))?, None));
        }
        let mut moments = HashMap::new();
        for (j, k) in needed_pairs(&job.measures, &vars) {
            // With a design the PSU totals carry the variance; only Σw²·zⱼ (effective bases).
            if !weights_only && j != k {
                continue;
            }
            let (pred, pow) = product(&vars[j], &vars[k]);
            let cond = and_all(base.clone(), pred.map(|p| pred_expr(&p, &x)));
            moments.insert((j, k), (exact_sum(aggs, cond, 2, pow)?, pow));
        }
        let cells = cell_filters
            .into_iter()
            .map(|(b, c, f)| Ok((b, c, aggs.slot(sum_when(base.clone().and(f), lit(1.0))?, None))))
            .collect::<Result<Vec<_>, EngineError>>()?;
        Ok(JobPlan { vars, n, totals, counts, moments, cells, bad_weights, nonfinite })
    }
}

/// Fixed-point terms are scaled to under 2^86, so that sums of fewer than 2^40 rows stay
/// under 2^126, inside a 128-bit integer (and 2^86 < 10^38, inside `Decimal128(38, 0)`).
const TERM_BITS: i32 = 86;
/// 2^40: most rows one summed scan sums exactly.
const MAX_ROWS: f64 = 1_099_511_627_776.0;
/// The exact sums' type: a cast from f64 to it is a native 128-bit conversion.
const EXACT: DataType = DataType::Decimal128(38, 0);

/// 2^k as f64, for k within the normal exponents.
fn pow2(k: i32) -> f64 {
    f64::from_bits(((1023 + k) as u64) << 52)
}

/// One aggregate's value at a row: an exact sum (`shift` k) back in its units, or an f64 sum;
/// NULL, from no matching rows, is 0.
fn sum_at(col: &datafusion::arrow::array::ArrayRef, row: usize, shift: Option<i32>) -> f64 {
    match shift {
        Some(k) if !col.is_null(row) => {
            col.as_primitive::<datafusion::arrow::datatypes::Decimal128Type>().value(row) as f64 / pow2(k)
        }
        Some(_) => 0.0,
        None => value_at(col, row),
    }
}

/// The ranges of the weights and values a scan's exact sums scale by: per column, the b with
/// |v| < 2^b for every finite value (positive, for a weight) among the scan's rows. A range is
/// measured once per scan, before the sums, by one aggregate of MIN and MAX; the terms' scale
/// depends on nothing else, so the sums are the same integers whatever the partitioning.
#[derive(Default)]
struct Ranges {
    weights: Vec<String>,
    values: Vec<String>,
    bits: HashMap<String, Option<i32>>,
}

impl Ranges {
    /// Notes the columns a job's exact sums scale by.
    fn want(&mut self, job: &Job) {
        let r = &job.rows;
        if let Some(w) = &r.weight
            && !self.weights.contains(w)
        {
            self.weights.push(w.clone());
        }
        let valued = vars_for(&job.measures).iter().any(|v| matches!(v, Var::X | Var::X2));
        if valued && !self.values.contains(&r.column) {
            self.values.push(r.column.clone());
        }
    }

    /// The measured range of a column, `None` when it has no finite value (or was not
    /// measured: the first planning pass).
    fn bits(&self, column: &str) -> Option<i32> {
        self.bits.get(column).copied().flatten()
    }

    /// Measures every wanted range over the rows `keep` selects: MAX of the weights summed
    /// (positive, under 2^256: a larger one fails its own jobs, and must not coarsen the scale
    /// of the others'), and MIN and MAX of the finite values.
    fn measure(
        &mut self,
        engine: &Engine,
        reg: &super::Registered,
        keep: Option<Expr>,
    ) -> Result<(), ScanError> {
        if self.weights.is_empty() && self.values.is_empty() {
            return Ok(());
        }
        let internal = |e: datafusion::error::DataFusionError| {
            ScanError::Fatal(EngineError::Internal(e.strip_backtrace()))
        };
        let mut exprs = Vec::new();
        for w in &self.weights {
            let v = cast(ident(w), DataType::Float64);
            let valid = v.clone().gt(lit(0.0)).and(v.clone().lt(lit(grouped::LARGEST_WEIGHT)));
            let valid = valid.and(std::ops::Not::not(bad_weight(&v)));
            exprs.push(max(when(valid, v).end().map_err(internal)?));
        }
        for c in &self.values {
            let v = cast(ident(c), DataType::Float64);
            let finite = v.clone().lt_eq(lit(f64::MAX)).and(v.clone().gt_eq(lit(f64::MIN)));
            exprs.push(max(when(finite.clone(), v.clone()).end().map_err(internal)?));
            exprs.push(min(when(finite, v).end().map_err(internal)?));
        }
        let exprs: Vec<Expr> = exprs.into_iter().enumerate().map(|(i, e)| e.alias(format!("r{i}"))).collect();
        let batches = super::block_on_within(&engine.rt, async {
            let mut df = reg.ctx.table(reg.name.as_str()).await?;
            if let Some(keep) = keep {
                df = df.filter(keep)?;
            }
            df.aggregate(vec![], exprs)?.collect().await
        })
        .map_err(|e| scan_error(&e))?;
        let at = |i: usize| {
            batches.iter().find(|b| b.num_rows() > 0).map(|b| value_or_nan(b.column(i))).unwrap_or(f64::NAN)
        };
        for (i, w) in self.weights.iter().enumerate() {
            self.bits.insert(w.clone(), grouped::bits_above(at(i)));
        }
        let from = self.weights.len();
        for (i, c) in self.values.iter().enumerate() {
            let (hi, lo) = (at(from + 2 * i), at(from + 2 * i + 1));
            let largest = if hi.is_nan() || lo.is_nan() { f64::NAN } else { hi.abs().max(lo.abs()) };
            self.bits.insert(c.clone(), grouped::bits_above(largest));
        }
        Ok(())
    }
}

/// An aggregate's f64 at row 0, NaN when NULL (no value to measure).
fn value_or_nan(col: &datafusion::arrow::array::ArrayRef) -> f64 {
    if col.is_null(0) { f64::NAN } else { value_at(col, 0) }
}

/// Where each sum of one job sits among the scan's aggregates.
struct JobPlan {
    vars: Vec<Var>,
    n: usize,
    /// Per variable, its total's slot and the power of x in its terms.
    totals: Vec<(usize, u8)>,
    counts: Vec<usize>,
    /// Per pair, its moment's slot and the power of x in its terms.
    moments: HashMap<(usize, usize), (usize, u8)>,
    cells: Vec<(String, String, usize)>,
    /// Rows of the base with a bad weight value, and with one the fixed point cannot hold
    /// (weighted jobs).
    bad_weights: Option<(usize, usize)>,
    /// Rows of the base whose value is NaN or infinite (jobs that sum values).
    nonfinite: Option<usize>,
}

/// The aggregates of one scan, identical expressions shared; per aggregate, the shift k of an
/// exact sum (its integer is the sum · 2^k), or `None` for an f64 sum.
#[derive(Default)]
struct Aggregates {
    exprs: Vec<Expr>,
    shifts: Vec<Option<i32>>,
    index: HashMap<Expr, usize>,
}

impl Aggregates {
    fn slot(&mut self, e: Expr, shift: Option<i32>) -> usize {
        if let Some(&i) = self.index.get(&e) {
            return i;
        }
        self.exprs.push(e.clone());
        self.shifts.push(shift);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_the_least_power_of_two_above_every_value() {
        for (v, b) in [(1.0, 1), (0.999, 0), (2.0, 2), (3.5, 2), (-3.5, 2), (1e-7, -23), (0.0, 0)] {
            assert_eq!(grouped::bits_above(v), Some(b), "{v}");
            if v != 0.0 {
                assert!(v.abs() < pow2(b) && v.abs() >= pow2(b - 1), "{v} against 2^{b}");
            }
        }
        assert_eq!(grouped::bits_above(f64::MIN_POSITIVE / 4.0), Some(-1022), "a subnormal");
        assert_eq!(grouped::bits_above(f64::NAN), None);
        assert_eq!(grouped::bits_above(f64::INFINITY), None);
    }

    #[test]
    fn an_exact_sum_reads_back_in_its_units() {
        let sums: datafusion::arrow::array::ArrayRef = std::sync::Arc::new(
            datafusion::arrow::array::Decimal128Array::from(vec![Some(3i128 << 80), None])
                .with_precision_and_scale(38, 0)
                .unwrap(),
        );
        assert_eq!(sum_at(&sums, 0, Some(80)), 3.0);
        assert_eq!(sum_at(&sums, 0, Some(-2)), 3.0 * 2f64.powi(82));
        assert_eq!(sum_at(&sums, 1, Some(80)), 0.0, "no rows: 0");
    }
}
