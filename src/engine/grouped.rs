//! The grouped scan: when every cited column of a table holds integer codes, ONE scan returns,
//! per cited column and for each combination of (periods, cells, code, base flags) actually
//! present, the unweighted count and Σw, Σw² per declared weight. Every total and second moment
//! a measure needs is a sum over codes of these, so the cost of the scan depends on the columns
//! cited, not on the number of claims.
//!
//! DataFusion reads the table (projection and the cited periods' filter pushed into the Parquet
//! reader) and computes, per row, a period mask, a cell mask and per cited column
//! `key_c = code·2^B + base mask` (base filters may use `{column}`, so their flags are per
//! column); masks are `CASE WHEN flag THEN 2^k ELSE 0 END` sums. The reduction of those batches
//! into groups runs here, one task per partition, in exact integer arithmetic (weights in fixed
//! point), because DataFusion's grouping-set aggregate compares every row on the union of all
//! sets' keys: measured, 57% of a 10k-claim run went there (BENCHMARKS.md).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::logical_expr::Expr;
use datafusion::prelude::{cast, ident, lit, when};
use rayon::prelude::*;

use super::{
    Engine, EngineError, FIXED_LIMIT, Filters, Job, Outcome, Outcomes, PlanChoice, Role, ScanError, ScanPlan,
    ScanStats, check_weight_sums, invalid_weight, overflow, scan_error, table_of,
};
use super::{Sums, Var, needed_pairs, vars_for};
use crate::resolve::Rows;

/// Most flags one mask may carry (bits of an i64, sign left alone).
const MAX_FLAGS: usize = 62;
/// Most cited columns one grouped scan takes (beyond, the summed plan is used).
pub const MAX_COLUMNS: usize = 56;
/// Codes must fit in the key beside the base mask (|code| < 2^42, base bits ≤ 20: < 2^62).
const MAX_CODE: i64 = 1 << 42;
/// The key of a row whose code is beyond ±2^42: no packed key can be this (|key| < 2^62), so
/// the reduction sees it, and the table is scanned by the summed plan instead of losing rows.
const OUT_OF_RANGE: i64 = i64::MIN;
/// Decimal places kept of weights (and squared weights) when they are summed in fixed point.
pub const FIXED_SCALE: i8 = 12;
/// Most bases cited with one column.
const MAX_BASE_BITS: usize = 20;

/// The packed key of a cited column's code: `code·2^bits + base mask` for a code within ±2^42,
/// [`OUT_OF_RANGE`] beyond, null for a null code (the row is not in that column's base).
fn key_expr(code: Expr, bits: i64, base_mask: Expr) -> Result<Expr, EngineError> {
    let in_range =
        code.clone().is_not_null().and(code.clone().lt(lit(MAX_CODE))).and(code.clone().gt(lit(-MAX_CODE)));
    when(in_range, code.clone() * lit(1i64 << bits) + base_mask)
        .when(code.is_not_null(), lit(OUT_OF_RANGE))
        .end()
        .map_err(|e| EngineError::Internal(e.strip_backtrace()))
}

/// A packed key's code and base mask (the inverse of [`key_expr`], negative codes included).
fn unpack(key: i64, bits: i64) -> (i64, i64) {
    (key >> bits, key & ((1i64 << bits) - 1))
}

/// Why the grouped scan suits a table's jobs, in words.
pub fn suitable(jobs: &[&Job]) -> String {
    let mut columns: Vec<&str> = jobs.iter().map(|j| j.rows.column.as_str()).collect();
    columns.sort_unstable();
    columns.dedup();
    match columns.as_slice() {
        [one] => format!("the cited column {one:?} holds integer codes"),
        all => format!("all {} cited columns hold integer codes", all.len()),
    }
}

/// Why a table's jobs cannot take the grouped scan (they take the summed one). A column whose
/// codes turn out to lie beyond ±2^42 is found during the grouped scan, which then gives way to
/// the summed one (see [`OUT_OF_RANGE`]).
pub fn unsuitable(schema: &datafusion::arrow::datatypes::Schema, jobs: &[&Job]) -> Option<String> {
    let mut columns: Vec<&str> = jobs.iter().map(|j| j.rows.column.as_str()).collect();
    columns.sort_unstable();
    columns.dedup();
    if columns.len() > MAX_COLUMNS {
        return Some(format!("{} columns cited (grouped scans take up to {MAX_COLUMNS})", columns.len()));
    }
    for c in columns {
        match schema.field_with_name(c).map(|f| f.data_type().clone()) {
            Ok(t) if integer_codes(&t) => {}
            Ok(t) => return Some(format!("column {c:?} is {t}, not integer codes")),
            Err(_) => return Some(format!("column {c:?} is not in the table")),
        }
    }
    None
}

/// Whether a column type holds codes the grouped key takes (UInt64 may not fit an i64 cast).
pub fn integer_codes(t: &DataType) -> bool {
    t.is_integer() && *t != DataType::UInt64
}

/// Why a job was not planned into this scan.
enum Unplanned {
    /// A mask is full: the job goes to another scan.
    Full,
    /// The job fails.
    Failed(EngineError),
}

impl From<EngineError> for Unplanned {
    fn from(e: EngineError) -> Self {
        Unplanned::Failed(e)
    }
}

/// A weight value that is negative, NaN or infinite.
const INVALID: u8 = 1;
/// A fixed-point sum that overflowed.
const OVERFLOW: u8 = 2;

/// Flags shared across jobs: the same filter is one bit.
#[derive(Default)]
struct Flags {
    exprs: Vec<Expr>,
    index: HashMap<Expr, usize>,
}

impl Flags {
    fn bit(&mut self, e: Expr) -> Result<usize, Unplanned> {
        if let Some(&i) = self.index.get(&e) {
            return Ok(i);
        }
        if self.exprs.len() >= MAX_FLAGS {
            return Err(Unplanned::Full);
        }
        self.exprs.push(e.clone());
        self.index.insert(e, self.exprs.len() - 1);
        Ok(self.exprs.len() - 1)
    }

    /// Σ CASE WHEN flag THEN 2^k ELSE 0 END.
    fn mask(&self) -> Result<Expr, EngineError> {
        let mut m = lit(0i64);
        for (k, e) in self.exprs.iter().enumerate() {
            m = m + when(e.clone(), lit(1i64 << k))
                .otherwise(lit(0i64))
                .map_err(|e| EngineError::Internal(e.strip_backtrace()))?;
        }
        Ok(m)
    }
}

/// Where one job's pieces sit.
struct Plan {
    column: usize,
    period: Option<usize>,
    base: Option<usize>,
    weight: Option<usize>,
    cells: Vec<(String, String, usize)>,
}

/// Per code: unweighted count, Σw, Σw² (over rows with a valid weight), and whether any row
/// had a bad weight value or a sum overflowed (INVALID, OVERFLOW).
#[derive(Default, Clone, Copy)]
pub(super) struct Acc {
    pub(super) n: f64,
    pub(super) w: f64,
    pub(super) w2: f64,
    pub(super) bad: u8,
}

impl Engine {
    /// The grouped scan of one table for all its jobs (see the module doc).
    pub(super) fn scan_grouped(
        &self,
        location: &Path,
        design: Option<&(String, String)>,
        jobs: &[&Job],
        reason: String,
    ) -> Result<(Outcomes, ScanStats), ScanError> {
        let reg = self.register(location)?;
        let mut filters = Filters::new(self, &reg.schema)?;
        let mut columns: Vec<String> = Vec::new();
        let mut weights: Vec<String> = Vec::new();
        let (mut periods, mut cells) = (Flags::default(), Flags::default());
        let mut bases: Vec<Flags> = Vec::new();
        let mut plans: Vec<Result<Plan, Unplanned>> = Vec::new();
        for job in jobs {
            let r = &job.rows;
            let mut parsed = |role: Role, sql: &str| filters.get(role, sql);
            let plan = (|| -> Result<Plan, Unplanned> {
                let column = match columns.iter().position(|c| *c == r.column) {
                    Some(i) => i,
                    None => {
                        columns.push(r.column.clone());
                        bases.push(Flags::default());
                        columns.len() - 1
                    }
                };
                let period = r.period_filter.as_deref().map(|f| parsed(Role::Period, f)).transpose()?;
                let base = r.base_filter.as_deref().map(|f| parsed(Role::Base, f)).transpose()?;
                let mut cell_exprs = Vec::new();
                for (b, c, f) in &job.cells {
                    let role = Role::Cell { breakdown: b.clone(), cell: c.clone() };
                    cell_exprs.push((b.clone(), c.clone(), parsed(role, f)?));
                }
                let weight = r.weight.as_ref().map(|w| match weights.iter().position(|x| x == w) {
                    Some(i) => i,
                    None => {
                        weights.push(w.clone());
                        weights.len() - 1
                    }
                });
                Ok(Plan {
                    column,
                    period: period.map(|p| periods.bit(p)).transpose()?,
                    base: match base {
                        Some(b)
                            if bases[column].exprs.len() >= MAX_BASE_BITS
                                && !bases[column].index.contains_key(&b) =>
                        {
                            return Err(Unplanned::Full);
                        }
                        Some(b) => Some(bases[column].bit(b)?),
                        None => None,
                    },
                    weight,
                    cells: cell_exprs
                        .into_iter()
                        .map(|(b, c, e)| Ok((b, c, cells.bit(e)?)))
                        .collect::<Result<_, Unplanned>>()?,
                })
            })();
            plans.push(plan);
        }
        // Jobs that did not fit a mask take another scan of their own (the summed one when
        // none fitted, e.g. a study of more than 62 cells), never an error: what else is in
        // the batch must not change a job's outcome.
        let deferred: Vec<usize> = plans
            .iter()
            .enumerate()
            .filter(|(_, p)| matches!(p, Err(Unplanned::Full)))
            .map(|(i, _)| i)
            .collect();
        if deferred.len() == jobs.len() {
            let why = "more periods, cells or bases than the grouped plan's masks hold";
            return self.scan_summed(location, design, jobs, why.into());
        }
        let mut later = None;
        if !deferred.is_empty() {
            let picked: Vec<&Job> = deferred.iter().map(|&i| jobs[i]).collect();
            later = Some(self.scan_best(location, design, &picked)?);
        }
        let plans: Vec<Result<Plan, EngineError>> = plans
            .into_iter()
            .map(|p| {
                p.map_err(|e| match e {
                    Unplanned::Failed(e) => e,
                    Unplanned::Full => EngineError::Internal("a deferred job was not scanned".into()),
                })
            })
            .collect();
        // The projection: masks, one key per column, the weights, the design.
        let mut select = vec![periods.mask()?.alias("pm"), cells.mask()?.alias("cm")];
        for (i, c) in columns.iter().enumerate() {
            let bits = bases[i].exprs.len() as i64;
            let key = key_expr(cast(ident(c), DataType::Int64), bits, bases[i].mask()?)?;
            select.push(key.alias(format!("k{i}")));
        }
        for (i, w) in weights.iter().enumerate() {
            select.push(cast(ident(w), DataType::Float64).alias(format!("w{i}")));
        }
        if let Some((s, p)) = design {
            select.push(cast(ident(s), DataType::Utf8).alias("s"));
            select.push(cast(ident(p), DataType::Utf8).alias("p"));
        }
        let layout = Layout { columns: columns.len(), weights: weights.len(), design: design.is_some() };
        let mut grams = super::gram::Grams::new(
            jobs,
            &columns,
            &weights,
            Layout::PERIODS,
            |c| layout.key(c),
            |w| layout.weight(w),
        );
        if select.len() != layout.width() {
            return Err(ScanError::Fatal(EngineError::Internal(
                "the grouped projection is out of layout".into(),
            )));
        }
        // Only rows in some cited period matter. Saying so lets the Parquet reader skip row
        // groups by their statistics (a tracker written wave by wave reads one wave for one
        // claim). Not with a design: every PSU must stay, even one with no base rows.
        let every_job_has_a_period = plans
            .iter()
            .enumerate()
            .filter(|(i, _)| !deferred.contains(i))
            .all(|(_, p)| p.as_ref().is_ok_and(|p| p.period.is_some()));
        let keep = (design.is_none() && every_job_has_a_period && !periods.exprs.is_empty())
            .then(|| periods.exprs.iter().cloned().reduce(|a, b| a.or(b)))
            .flatten();
        // DataFusion reads, filters and computes the keys; the counts and sums per key are
        // reduced here, one partition per task, in exact integer arithmetic.
        let n_weights = weights.len();
        let partials: Vec<Partial> =
            if columns.is_empty() {
                Vec::new()
            } else {
                self.rt
                    .block_on(async {
                        let mut df = self.ctx.table(reg.name.as_str()).await?;
                        if let Some(keep) = &keep {
                            df = df.filter(keep.clone())?;
                        }
                        let streams = df.select(select)?.execute_stream_partitioned().await?;
                        let mut tasks = tokio::task::JoinSet::new();
                        for (i, stream) in streams.into_iter().enumerate() {
                            let mut stream = grams.tap(i, stream); // replicate weights' ranks
                            let n_columns = columns.len();
                            tasks.spawn(async move {
                                let mut part = Partial::new(n_columns);
                                while let Some(batch) = futures::StreamExt::next(&mut stream).await {
                                    part.add(&batch?, &layout)?;
                                }
                                Ok::<_, datafusion::error::DataFusionError>(part)
                            });
                        }
                        let mut parts = Vec::new();
                        while let Some(done) = tasks.join_next().await {
                            parts.push(done.map_err(|e| {
                                datafusion::error::DataFusionError::ExecutionJoin(Box::new(e))
                            })??);
                        }
                        Ok::<_, datafusion::error::DataFusionError>(parts)
                    })
                    .map_err(|e| scan_error(&e))?
            };
        if let Some(c) = (0..columns.len()).find(|&c| partials.iter().any(|p| p.out_of_range[c])) {
            let why = format!(
                "column {:?} holds codes beyond ±2^42, which the grouped key cannot pack",
                columns[c]
            );
            return self.scan_summed(location, design, jobs, why);
        }
        let rows_total: u64 = partials.iter().map(|p| p.rows).sum();
        grams.merge();
        let mut psus: BTreeMap<(String, String), ()> = BTreeMap::new();
        for p in &partials {
            for k in &p.psu_names {
                psus.insert(k.clone(), ());
            }
        }
        // Merge the partitions' integer sums (order-free), then lay them out per column.
        let mut merged: Vec<HashMap<MergedKey, Sums128>> = vec![HashMap::new(); columns.len()];
        for p in &partials {
            for (c, into) in merged.iter_mut().enumerate() {
                for ((pm, cm, key, psu), v) in p.groups(c, n_weights) {
                    let psu = psu.map(|i| p.psu_names[i as usize].clone());
                    into.entry((pm, cm, key, psu)).or_insert_with(|| Sums128::new(n_weights)).merge(&v);
                }
            }
        }
        let scale = 10f64.powi(i32::from(FIXED_SCALE));
        let mut by_column: Vec<Vec<Row>> = vec![Vec::new(); columns.len()];
        for (c, map) in merged.into_iter().enumerate() {
            let bits = bases[c].exprs.len() as i64;
            for ((pm, cm, key, psu), v) in map {
                let (code, bmask) = unpack(key, bits);
                by_column[c].push(Row {
                    pm,
                    cm,
                    code,
                    bmask,
                    psu,
                    n: v.n as f64,
                    weighted: v
                        .weighted
                        .iter()
                        .zip(&v.bad)
                        .map(|((n, w, w2), bad)| Acc {
                            n: *n as f64,
                            w: *w as f64 / scale,
                            w2: *w2 as f64 / scale,
                            bad: *bad,
                        })
                        .collect(),
                });
            }
        }
        let psu_list: Vec<(String, String)> = psus.into_keys().collect();
        // Groups come out of hash maps in no fixed order; summing them in a fixed order keeps
        // every float bit the same from run to run.
        for rows in &mut by_column {
            rows.sort_unstable_by(|a, b| {
                (a.pm, a.cm, a.code, a.bmask, &a.psu).cmp(&(b.pm, b.cm, b.code, b.bmask, &b.psu))
            });
        }
        let mut stats = ScanStats {
            tables_scanned: 1,
            scans: usize::from(!columns.is_empty()),
            rows_scanned: rows_total,
            aggregates: 1 + 3 * weights.len(),
            explanation_scans: 0,
            plans: Vec::new(),
        };
        if !columns.is_empty() {
            stats.plans.push(PlanChoice { table: table_of(jobs), plan: ScanPlan::Grouped, reason });
        }
        // Jobs that select the same rows (column, period, base, weight, missing codes, cells)
        // share one accumulation: a batch of claims repeats these a lot.
        let psu_index: HashMap<&(String, String), usize> =
            psu_list.iter().enumerate().map(|(i, k)| (k, i)).collect();
        let mut keys: HashMap<RowsKey, usize> = HashMap::new();
        let mut distinct: Vec<(&Plan, &Job)> = Vec::new();
        let job_key: Vec<Option<usize>> = jobs
            .iter()
            .zip(&plans)
            .map(|(job, plan)| {
                let plan = plan.as_ref().ok()?;
                let key = RowsKey::of(plan, job);
                Some(*keys.entry(key).or_insert_with(|| {
                    distinct.push((plan, job));
                    distinct.len() - 1
                }))
            })
            .collect();
        let accumulated: Vec<BaseSums> = distinct
            .par_iter()
            .map(|(plan, job)| {
                accumulate(plan, &job.rows, &by_column[plan.column], &psu_index, design.is_some())
            })
            .collect();
        if let Some(cache) = &self.cache {
            cache.capture(distinct.iter().map(|(_, job)| *job).zip(&accumulated), &psu_list);
        }
        let mut outcomes: Outcomes = jobs
            .par_iter()
            .zip(plans.par_iter())
            .zip(job_key.par_iter())
            .enumerate()
            .map(|(i, ((job, plan), key))| {
                let plan = plan.as_ref().map_err(Clone::clone)?;
                let Some(key) = key else {
                    return Err(EngineError::Internal("a planned job has no key".into()));
                };
                finish(job, plan, &accumulated[*key], &psu_list, design.is_some())
                    .map(|o| grams.attach(i, job, plan.period, plan.base, bases[plan.column].exprs.len(), o))
            })
            .collect();
        if let Some((outs, s)) = later {
            for (&i, out) in deferred.iter().zip(outs) {
                outcomes[i] = out;
            }
            stats.absorb(s);
        }
        Ok((outcomes, stats))
    }
}

/// Where each value sits in the grouped scan's projection, which is built in this order: the
/// period mask, the cell mask, one packed key per cited column, one value per weight, and the
/// design's stratum and PSU. The reduction reads the batches by these indices.
#[derive(Debug, Clone, Copy)]
struct Layout {
    /// Cited columns (one key each).
    columns: usize,
    /// Weights.
    weights: usize,
    /// Whether the table has a design (stratum and PSU last).
    design: bool,
}

impl Layout {
    /// The period mask.
    const PERIODS: usize = 0;
    /// The cell mask.
    const CELLS: usize = 1;

    /// The packed key of cited column `c`.
    fn key(&self, c: usize) -> usize {
        2 + c
    }

    /// Weight `i`.
    fn weight(&self, i: usize) -> usize {
        2 + self.columns + i
    }

    /// The stratum and PSU, with a design.
    fn design(&self) -> Option<(usize, usize)> {
        let at = 2 + self.columns + self.weights;
        self.design.then_some((at, at + 1))
    }

    /// Columns in all.
    fn width(&self) -> usize {
        2 + self.columns + self.weights + if self.design { 2 } else { 0 }
    }
}

/// Exact sums of one group: the row count, and per weight (valid rows, Σw, Σw²) in fixed point
/// with its INVALID / OVERFLOW flags.
#[derive(Clone)]
struct Sums128 {
    n: u64,
    weighted: Vec<(u64, i128, i128)>,
    bad: Vec<u8>,
}

impl Sums128 {
    fn new(weights: usize) -> Sums128 {
        Sums128 { n: 0, weighted: vec![(0, 0, 0); weights], bad: vec![0; weights] }
    }

    fn merge(&mut self, o: &Sums128) {
        self.n += o.n;
        for ((a, bad), (b, obad)) in
            self.weighted.iter_mut().zip(&mut self.bad).zip(o.weighted.iter().zip(&o.bad))
        {
            *bad |= *obad | add_fixed(a, b);
        }
    }
}

/// Adds fixed-point sums, checked: OVERFLOW when Σw or Σw² leaves the i128 range.
#[inline]
fn add_fixed(a: &mut (u64, i128, i128), b: &(u64, i128, i128)) -> u8 {
    let (w, o1) = a.1.overflowing_add(b.1);
    let (w2, o2) = a.2.overflowing_add(b.2);
    *a = (a.0 + b.0, w, w2);
    if o1 || o2 { OVERFLOW } else { 0 }
}

/// Group key within a column: (period mask, cell mask, code·2^B + base mask, PSU index).
type GroupKey = (i64, i64, i64, Option<u32>);

/// The Fx hash (rustc's): keys here are a few machine words, and SipHash's resistance to
/// flooding buys nothing for keys computed from our own data; it was 10% of a large run.
#[derive(Default, Clone, Copy)]
struct Fx(u64);

impl std::hash::Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u64(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_i64(&mut self, w: i64) {
        self.write_u64(w as u64);
    }
    fn write_u32(&mut self, w: u32) {
        self.write_u64(u64::from(w));
    }
    fn write_usize(&mut self, w: usize) {
        self.write_u64(w as u64);
    }
}

/// A group key across partitions: the PSU by name, since each partition numbers its own.
type MergedKey = (i64, i64, i64, Option<(String, String)>);

type FxMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<Fx>>;

/// A row's key apart from the column: (period mask, cell mask, PSU index).
type RowKey = (i64, i64, Option<u32>);

/// One partition's reduction: per column, a group index per (row key, column key), and flat
/// sums per group. Row keys are interned once per row; each column then hashes two words.
struct Partial {
    rows: u64,
    row_keys: FxMap<RowKey, u32>,
    row_key_list: Vec<RowKey>,
    index: Vec<FxMap<(u32, i64), u32>>,
    /// Per column: per group, the row count.
    counts: Vec<Vec<u64>>,
    /// Per column: per group and weight, (valid rows, Σw, Σw²) in fixed point.
    sums: Vec<Vec<(u64, i128, i128)>>,
    /// Per column: per group and weight, INVALID / OVERFLOW flags.
    bad: Vec<Vec<u8>>,
    /// Per column: whether a row's code was beyond ±2^42 (its key is [`OUT_OF_RANGE`]).
    out_of_range: Vec<bool>,
    psu_names: Vec<(String, String)>,
    psu_index: HashMap<(String, String), u32>,
}

impl Partial {
    fn new(columns: usize) -> Partial {
        Partial {
            rows: 0,
            row_keys: FxMap::default(),
            row_key_list: Vec::new(),
            index: vec![FxMap::default(); columns],
            counts: vec![Vec::new(); columns],
            sums: vec![Vec::new(); columns],
            bad: vec![Vec::new(); columns],
            out_of_range: vec![false; columns],
            psu_names: Vec::new(),
            psu_index: HashMap::new(),
        }
    }

    /// The groups of one column with their sums.
    fn groups(&self, c: usize, n_weights: usize) -> impl Iterator<Item = (GroupKey, Sums128)> + '_ {
        self.index[c].iter().map(move |(&(rk, k), &g)| {
            let g = g as usize;
            let (pm, cm, psu) = self.row_key_list[rk as usize];
            let weighted = self.sums[c][g * n_weights..(g + 1) * n_weights].to_vec();
            let bad = self.bad[c][g * n_weights..(g + 1) * n_weights].to_vec();
            ((pm, cm, k, psu), Sums128 { n: self.counts[c][g], weighted, bad })
        })
    }

    /// Adds one batch of rows laid out as `layout` says, column by column.
    fn add(&mut self, b: &RecordBatch, layout: &Layout) -> datafusion::error::Result<()> {
        use datafusion::arrow::datatypes::Float64Type;
        if b.num_columns() != layout.width() {
            return Err(datafusion::error::DataFusionError::Internal(format!(
                "a grouped batch has {} columns, its layout {}",
                b.num_columns(),
                layout.width()
            )));
        }
        let n_weights = layout.weights;
        let pm = b.column(Layout::PERIODS).as_primitive::<Int64Type>();
        let cm = b.column(Layout::CELLS).as_primitive::<Int64Type>();
        let ws: Vec<_> =
            (0..n_weights).map(|i| b.column(layout.weight(i)).as_primitive::<Float64Type>()).collect();
        let design = layout.design().map(|(s, p)| (b.column(s), b.column(p)));
        let n = b.num_rows();
        self.rows += n as u64;
        let scale = 10f64.powi(i32::from(FIXED_SCALE));
        // Per row: its interned row key, and per weight (valid, Σw, Σw²) in fixed point. A
        // null or zero weight leaves the base; a negative, NaN or infinite one, or one whose
        // square does not fit the fixed point, flags the row's group (the jobs that select it
        // fail, naming the weight).
        let mut weighted = vec![(0u64, 0i128, 0i128); n * n_weights];
        let mut row_bad = vec![0u8; n * n_weights];
        for (i, w) in ws.iter().enumerate() {
            for r in 0..n {
                if w.is_null(r) {
                    continue;
                }
                let v = w.value(r);
                if v.is_nan() || v < 0.0 || v.is_infinite() {
                    row_bad[r * n_weights + i] = INVALID;
                } else if v > 0.0 {
                    let (wv, w2v) = (v * scale, v * v * scale);
                    if w2v < FIXED_LIMIT {
                        weighted[r * n_weights + i] = (1, wv.round() as i128, w2v.round() as i128);
                    } else {
                        row_bad[r * n_weights + i] = OVERFLOW;
                    }
                }
            }
        }
        let mut rk = Vec::with_capacity(n);
        for r in 0..n {
            let psu = match &design {
                Some((s, p)) => {
                    let (s, p) = (s.as_string::<i32>(), p.as_string::<i32>());
                    let name = |a: &datafusion::arrow::array::StringArray| {
                        if a.is_null(r) { String::new() } else { a.value(r).to_string() }
                    };
                    let key = (name(s), name(p));
                    let next = self.psu_names.len() as u32;
                    let i = *self.psu_index.entry(key.clone()).or_insert(next);
                    if i == next {
                        self.psu_names.push(key);
                    }
                    Some(i)
                }
                None => None,
            };
            let key = (pm.value(r), cm.value(r), psu);
            let next = self.row_key_list.len() as u32;
            let i = *self.row_keys.entry(key).or_insert(next);
            if i == next {
                self.row_key_list.push(key);
            }
            rk.push(i);
        }
        for c in 0..self.index.len() {
            let k = b.column(layout.key(c)).as_primitive::<Int64Type>();
            let (index, counts, sums, bad) =
                (&mut self.index[c], &mut self.counts[c], &mut self.sums[c], &mut self.bad[c]);
            for (r, &row_key) in rk.iter().enumerate() {
                if k.is_null(r) {
                    continue;
                }
                if k.value(r) == OUT_OF_RANGE {
                    self.out_of_range[c] = true;
                    continue;
                }
                let next = counts.len() as u32;
                let g = *index.entry((row_key, k.value(r))).or_insert(next);
                if g == next {
                    counts.push(0);
                    sums.extend(std::iter::repeat_n((0, 0, 0), n_weights));
                    bad.extend(std::iter::repeat_n(0, n_weights));
                }
                let g = g as usize;
                counts[g] += 1;
                let span = r * n_weights..(r + 1) * n_weights;
                let (row, row_bad) = (&weighted[span.clone()], &row_bad[span]);
                let group = g * n_weights..(g + 1) * n_weights;
                for ((a, b), (flags, f)) in
                    sums[group.clone()].iter_mut().zip(row).zip(bad[group].iter_mut().zip(row_bad))
                {
                    *flags |= *f | add_fixed(a, b);
                }
            }
        }
        Ok(())
    }
}

/// One output row of the grouped aggregate.
#[derive(Clone)]
struct Row {
    pm: i64,
    cm: i64,
    code: i64,
    bmask: i64,
    psu: Option<(String, String)>,
    n: f64,
    weighted: Vec<Acc>,
}

/// What selects a job's rows, for sharing accumulations between jobs.
#[derive(PartialEq, Eq, Hash)]
struct RowsKey {
    column: usize,
    period: Option<usize>,
    base: Option<usize>,
    weight: Option<usize>,
    missing: Vec<u64>,
    missing_ranges: Vec<[u64; 2]>,
    cells: Vec<usize>,
}

impl RowsKey {
    fn of(plan: &Plan, job: &Job) -> RowsKey {
        RowsKey {
            column: plan.column,
            period: plan.period,
            base: plan.base,
            weight: plan.weight,
            missing: job.rows.missing.iter().map(|m| m.to_bits()).collect(),
            missing_ranges: job
                .rows
                .missing_ranges
                .iter()
                .map(|[lo, hi]| [lo.to_bits(), hi.to_bits()])
                .collect(),
            cells: plan.cells.iter().map(|(_, _, bit)| *bit).collect(),
        }
    }
}

/// The base rows of a job, summed per code (and per PSU and code with a design), and the
/// unweighted count of each cell. What the sufficient-statistics cache keeps (`cache.rs`).
#[derive(Clone)]
pub(super) struct BaseSums {
    pub(super) codes: BTreeMap<i64, Acc>,
    pub(super) per_psu: Vec<BTreeMap<i64, Acc>>,
    pub(super) cells: Vec<f64>,
    /// INVALID / OVERFLOW flags of the selected groups' weight.
    pub(super) bad: u8,
}

/// Sums the rows of a column that a job's period, base, weight and missing codes select.
fn accumulate(
    plan: &Plan,
    selected: &Rows,
    rows: &[Row],
    psu_index: &HashMap<&(String, String), usize>,
    designed: bool,
) -> BaseSums {
    let mut codes: BTreeMap<i64, Acc> = BTreeMap::new();
    let mut per_psu: Vec<BTreeMap<i64, Acc>> =
        vec![BTreeMap::new(); if designed { psu_index.len() } else { 0 }];
    let mut cells = vec![0.0; plan.cells.len()];
    let mut bad = 0;
    for row in rows {
        if plan.period.is_some_and(|b| row.pm & (1 << b) == 0)
            || plan.base.is_some_and(|b| row.bmask & (1 << b) == 0)
            || selected.is_missing(row.code as f64)
        {
            continue;
        }
        let acc = match plan.weight {
            Some(k) => row.weighted[k],
            None => Acc { n: row.n, w: row.n, w2: row.n, bad: 0 },
        };
        bad |= acc.bad;
        let e = codes.entry(row.code).or_default();
        e.n += acc.n;
        e.w += acc.w;
        e.w2 += acc.w2;
        if designed && let Some(i) = row.psu.as_ref().and_then(|k| psu_index.get(k)) {
            let e = per_psu[*i].entry(row.code).or_default();
            e.w += acc.w;
        }
        for (slot, (_, _, bit)) in plan.cells.iter().enumerate() {
            if row.cm & (1 << bit) != 0 {
                cells[slot] += acc.n;
            }
        }
    }
    BaseSums { codes, per_psu, cells, bad }
}

/// A job's totals, second moments and PSU totals from its base sums.
fn finish(
    job: &Job,
    plan: &Plan,
    base: &BaseSums,
    psu_list: &[(String, String)],
    designed: bool,
) -> Result<Outcome, EngineError> {
    let weight = job.rows.weight.as_deref();
    if let Some(w) = weight {
        if base.bad & INVALID != 0 {
            return Err(invalid_weight(w));
        }
        if base.bad & OVERFLOW != 0 {
            return Err(overflow(w));
        }
    }
    let vars = vars_for(&job.measures);
    let (codes, per_psu) = (&base.codes, &base.per_psu);
    let z = |v: &Var, code: f64| match v {
        Var::One => 1.0,
        Var::Ind(p) => f64::from(u8::from(p.matches(code))),
        Var::X => code,
        Var::X2 => code * code,
    };
    let total = |v: &Var, by_code: &BTreeMap<i64, Acc>| {
        by_code.iter().map(|(c, a)| z(v, *c as f64) * a.w).sum::<f64>()
    };
    let totals: Vec<f64> = vars.iter().map(|v| total(v, codes)).collect();
    let counts: Vec<f64> = vars
        .iter()
        .map(|v| {
            let inside = |c: f64| if let Var::Ind(p) = v { p.matches(c) } else { true };
            codes.iter().filter(|(c, _)| inside(**c as f64)).map(|(_, a)| a.n).sum::<f64>()
        })
        .collect();
    let mut moments = HashMap::new();
    for (j, k) in needed_pairs(&job.measures, &vars) {
        if designed && j != k {
            continue;
        }
        let m =
            codes.iter().map(|(c, a)| z(&vars[j], *c as f64) * z(&vars[k], *c as f64) * a.w2).sum::<f64>();
        moments.insert((j, k), m);
    }
    let psus = per_psu
        .iter()
        .zip(psu_list)
        .map(|(by_code, (s, _))| (s.clone(), vars.iter().map(|v| total(v, by_code)).collect()))
        .collect();
    let n = codes.values().map(|a| a.n).sum::<f64>();
    let cells = plan
        .cells
        .iter()
        .zip(&base.cells)
        .map(|((b, c, _), n)| (b.clone(), c.clone(), n.round() as u64))
        .collect();
    let sums = Sums { n, totals, counts, moments, psus, replicates: None };
    check_weight_sums(weight, &sums)?;
    Ok(Outcome { vars, sums, cells })
}

/// A job's outcome from base sums the cache kept: the same [`finish`] a scan takes.
pub(super) fn outcome_from(
    job: &Job,
    base: &BaseSums,
    psu_list: &[(String, String)],
    designed: bool,
) -> Result<Outcome, EngineError> {
    let cells = job.cells.iter().enumerate().map(|(i, (b, c, _))| (b.clone(), c.clone(), i)).collect();
    let plan = Plan { column: 0, period: None, base: None, weight: None, cells };
    finish(job, &plan, base, psu_list, designed)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{ArrayRef, Int64Array};
    use datafusion::prelude::SessionContext;

    use super::*;

    /// The keys DataFusion computes for `codes` with `bits` base flags, all set to `mask`.
    fn keys(codes: &[Option<i64>], bits: i64, mask: i64) -> Vec<Option<i64>> {
        let column: ArrayRef = Arc::new(Int64Array::from(codes.to_vec()));
        let batch = RecordBatch::try_from_iter([("x", column)]).unwrap();
        let key = key_expr(ident("x"), bits, lit(mask)).unwrap().alias("k");
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let out = rt.block_on(async {
            SessionContext::new()
                .read_batch(batch)
                .unwrap()
                .select(vec![key])
                .unwrap()
                .collect()
                .await
                .unwrap()
        });
        out.iter()
            .flat_map(|b| {
                let k = b.column(0).as_primitive::<Int64Type>().clone();
                (0..b.num_rows()).map(move |r| (!k.is_null(r)).then(|| k.value(r)))
            })
            .collect()
    }

    #[test]
    fn key_packing_keeps_negative_codes_and_base_masks() {
        let codes = [-(MAX_CODE - 1), -300, -3, -1, 0, 1, 5, MAX_CODE - 1];
        for bits in [0, 1, 5, MAX_BASE_BITS as i64] {
            for mask in [0, 1 % (1 << bits), (1 << bits) - 1] {
                let got = keys(&codes.map(Some), bits, mask);
                for (code, key) in codes.iter().zip(got) {
                    let key = key.expect("a code in range has a key");
                    assert_ne!(key, OUT_OF_RANGE);
                    assert_eq!(unpack(key, bits), (*code, mask), "code {code}, {bits} base bits");
                }
            }
        }
    }

    #[test]
    fn key_packing_marks_codes_beyond_the_bound_and_leaves_nulls_out() {
        let got =
            keys(&[Some(MAX_CODE), Some(-MAX_CODE), Some(i64::MAX), Some(i64::MIN), None, Some(7)], 3, 5);
        let out = Some(OUT_OF_RANGE);
        assert_eq!(got, [out, out, out, out, None, Some(7 * 8 + 5)]);
    }
}
