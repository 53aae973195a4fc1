//! The grouped scan: when every cited column of a table holds integer codes, ONE scan returns,
//! per cited column and for each combination of (periods, cells, code, base flags) actually
//! present, the unweighted count and Σw, Σw² per declared weight. Every total and second moment
//! a measure needs is a sum over codes of these, so the cost of the scan depends on the columns
//! cited, not on the number of claims.
//!
//! DataFusion reads the table (projection and the cited periods' filter pushed into the Parquet
//! reader) and evaluates, per row, every period, cell and base filter once as a boolean
//! ([`flags`]). A base filter is split first ([`split_base`]): its conjuncts on the cited
//! column alone (`{column} >= 1`) are decided per code when summing, and what is left, when it
//! reads no cited column (`age BETWEEN 18 AND 74`), is one flag of the row beside the cells',
//! shared by every column; only a rest that reads the cited column too is a flag of that
//! column. The flags become
//! a period mask, a cell mask and per cited column a packed key `code·2^B + base mask`, and
//! each group is summed in exact integer arithmetic (weights in fixed point). Two reductions
//! do this and return the same sums ([`Reduced`]), chosen by [`Reduction`]:
//! - in process ([`reduce`]), one task per partition of DataFusion's stream, groups found by
//!   array indexing rather than hashing where codes are small. DataFusion's own grouping-set
//!   aggregate compares every row on the union of all sets' keys: measured, 57% of a 10k-claim
//!   run went there (BENCHMARKS.md);
//! - as one DataFusion plan of built-in functions ([`plan`]: a cross join with the cited
//!   columns' indices and one `GROUP BY` of exact `Decimal256` sums), which any DataFusion
//!   executor runs, a Ballista cluster's too. The replicate weights' ranks ([`super::gram`])
//!   tap the rows in process, so a scan that needs them is reduced in process under either
//!   ([`super::needs_in_process`]).
//!
//! Each job then sums the groups its period, base, weight and cells select ([`accumulate`]).

mod accumulate;
mod flags;
mod plan;
mod reduce;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use datafusion::arrow::datatypes::{DataType, i256};
use datafusion::logical_expr::Expr;
use datafusion::prelude::{cast, ident};
use rayon::prelude::*;

use super::{
    Engine, EngineError, Filters, Job, Outcome, Outcomes, PlanChoice, Reduction, Role, ScanError, ScanPlan,
    ScanStats, Scanned, scan_error, table_of,
};
use crate::scan::Reading;
pub(super) use accumulate::{Acc, BaseSums};
use accumulate::{PeriodRun, Row, RowsKey, accumulate, finish, period_runs};
use flags::{Flags, Layout, unpack};
#[doc(hidden)]
pub use reduce::reduce_batches;
use reduce::{Exact, MergedKey, Partial};

/// Most flags one mask may carry (bits of an i64, sign left alone).
const MAX_FLAGS: usize = 62;
/// Most cited columns one grouped scan takes (beyond, the summed plan is used).
pub const MAX_COLUMNS: usize = 56;
/// Codes must fit in the key beside the base mask (|code| < 2^42, base bits ≤ 20: < 2^62).
const MAX_CODE: i64 = 1 << 42;
/// The key of a row whose code is beyond ±2^42: no packed key can be this (|key| < 2^62), so
/// the reduction sees it, and the table is scanned by the summed plan instead of losing rows.
const OUT_OF_RANGE: i64 = i64::MIN;
/// Bits of every fixed-point term: a weight column summed at [`Scale`] `b` (all its weights
/// under 2^b) has terms w·2^(192−b) and (w·2^−b)²·2^192, both under 2^192 whatever the weights'
/// magnitude, so fewer than 2^63 rows (an Int64 count) never overflow the i256 sums
/// (docs/design.md, "Exact sums").
const TERM_BITS: i32 = 192;
/// Each row's terms must stay under 2^192: beyond (a weight of 2^256 or more, or one above the
/// largest its scan measured), the row's group is OVERFLOW and the jobs that select it fail,
/// naming the weight.
pub const FIXED_LIMIT: f64 = pow2(TERM_BITS);
/// The largest [`Scale`]: weights are summed up to 2^256 (≈ 1.2·10^77), so that w² (< 2^512)
/// and every statistic made of the sums stay far inside f64.
const MOST_BITS: i32 = 256;
/// The smallest [`Scale`]: a column whose weights are all under 2^-256 is summed in units of
/// 2^-448 (its Σw² would leave f64's normal range anyway).
const LEAST_BITS: i32 = -256;
/// The first weight recite does not sum, 2^256: the same comparison in both plans and in
/// `catalog check`.
pub const LARGEST_WEIGHT: f64 = pow2(MOST_BITS);

/// 2^k, for k within f64's normal exponents (-1022..=1023).
const fn pow2(k: i32) -> f64 {
    f64::from_bits(((1023 + k) as u64) << 52)
}

/// A weight column's power of two in one scan: every weight it sums is under 2^bits, measured
/// from the column's largest weight over the scan's rows ([`Engine::weight_scales`]). The terms
/// (w·2^(192−bits) and (w·2^−bits)²·2^192) are then under 2^192 whatever the magnitude, and
/// every weight within 2^-139 of the largest is an exact integer: NHANES weights ×10^6 sum as
/// exactly as ×10^-6. Both reductions take the scale from the projection, so they hold the
/// same integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Scale {
    bits: i32,
}

impl Scale {
    /// The scale of a column whose largest weight summed is `largest` (NaN: none), clamped to
    /// 2^±256: weights of 2^256 or more are OVERFLOW, not summed.
    pub(super) fn of(largest: f64) -> Scale {
        let bits = bits_above(largest).unwrap_or(0);
        Scale { bits: bits.clamp(LEAST_BITS, MOST_BITS) }
    }

    /// The factor of a weight's Σw term, 2^(192−bits).
    fn weight_factor(self) -> f64 {
        pow2(TERM_BITS - self.bits)
    }

    /// The factor a weight is brought under 1 by before it is squared, 2^−bits.
    fn unit(self) -> f64 {
        pow2(-self.bits)
    }

    /// The Σw term of a positive weight: `v·2^(192−bits)` rounded half away from zero, as
    /// `f64::round` and Arrow's cast to `Decimal256(76, 0)` both do (the plan's own f64
    /// operations, in the same order).
    #[inline]
    fn weight_term(self, v: f64) -> f64 {
        rounded(v * self.weight_factor())
    }

    /// The Σw² term: `(v·2^−bits)²·2^192`, rounded as [`Scale::weight_term`]. The square is
    /// taken after scaling so that neither 10^-200² nor 10^200² leaves f64 on the way.
    #[inline]
    fn square_term(self, v: f64) -> f64 {
        let t = v * self.unit();
        rounded(t * t * FIXED_LIMIT)
    }

    /// A fixed-point Σw back in weight units: one rounding, the same f64 for the same integer
    /// whichever reduction, partitioning or (for exact sums) scale produced it.
    fn weights(self, x: i256) -> f64 {
        whole(x) * pow2(self.bits - TERM_BITS)
    }

    /// A fixed-point Σw² back in squared weight units, as [`Scale::weights`].
    fn squares(self, x: i256) -> f64 {
        whole(x) * pow2(2 * self.bits - TERM_BITS)
    }
}

/// A term (an integer-valued f64 under 2^192, [`Scale::weight_term`]) as its exact integer.
#[inline]
fn fixed(t: f64) -> i256 {
    if t < I128_RANGE {
        return i256::from_i128(t as i128);
    }
    // t = m·2^e with e ≥ 75 (t ≥ 2^127) and e < 140 (t < 2^192): the mantissa shifted.
    let bits = t.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32 - 1075;
    let m = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    i256::from_i128(i128::from(m)) << (e as u8)
}

/// 2^127: below it an integer-valued f64 converts to i128 exactly with `as`.
const I128_RANGE: f64 = pow2(127);

/// `t` rounded half away from zero, as `f64::round` does. A product of 2^52 or more is
/// already an integer, so the call (a library function on the baseline x86-64 target, twice a
/// weight value in the grouped scan) is made only below.
#[inline]
fn rounded(t: f64) -> f64 {
    if t >= TWO_52 { t } else { t.round() }
}

/// 2^52: from here on every f64 is an integer.
const TWO_52: f64 = 4_503_599_627_370_496.0;

/// A non-negative integer sum as the nearest f64 (ties to even): one rounding, so the float
/// of an exact sum does not depend on how it was scaled. (A count is exact below 2^53.)
fn whole(x: i256) -> f64 {
    let (low, high) = x.to_parts();
    let high = high.max(0) as u128;
    if high == 0 {
        return low as f64;
    }
    // The top 128 bits, with every bit below them folded into the last one (sticky): that bit
    // lies far under the 53 kept, so `as` rounds the 128 bits as it would the whole number.
    let shift = 128 - high.leading_zeros();
    let top = (high << (128 - shift)) | (low >> shift);
    let sticky = u128::from(low << (128 - shift) != 0);
    (top | sticky) as f64 * pow2(shift as i32)
}

/// The least b with |v| < 2^b, from v's exponent bits (exact, no logarithm); `None` for NaN or
/// an infinite v, 0 for 0.
pub(in crate::engine) fn bits_above(v: f64) -> Option<i32> {
    let v = v.abs();
    if !v.is_finite() {
        return None;
    }
    if v == 0.0 {
        return Some(0);
    }
    let exponent = ((v.to_bits() >> 52) & 0x7ff) as i32;
    // A subnormal is under 2^-1022.
    Some(if exponent == 0 { -1022 } else { exponent - 1023 + 1 })
}

/// Most bases cited with one column.
const MAX_BASE_BITS: usize = 20;

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

/// The base sums one grouped scan accumulated, for the cache to keep (`cache.rs`): each distinct
/// set of base rows it summed, with the first job that selects them, and the PSUs it saw.
pub(super) struct Accumulated<'a> {
    /// Per set of base rows: a job that selects them, and their sums.
    pub(super) sums: Vec<(&'a Job, BaseSums)>,
    /// The PSUs, in the order of each sum's `per_psu` (none without a design).
    pub(super) psus: Vec<(String, String)>,
    /// The scan's groups, kept for a later run over the same data ([`KeptGroups`]).
    pub(super) reduction: Option<std::sync::Arc<KeptGroups>>,
}

/// What one grouped scan reduced, kept so that a later run over the same data (the explaining
/// run after the settling one, `Scan::run_again`) answers the jobs whose pieces are all among
/// its flags — another base, weight, period or cell the scan already evaluated, or none —
/// without reading the table: their rows are summed from the scan's groups by the same
/// [`accumulate`] and [`finish`] a scan would use.
pub(in crate::engine) struct KeptGroups {
    location: std::path::PathBuf,
    design: Option<(String, String)>,
    schema: std::sync::Arc<datafusion::arrow::datatypes::Schema>,
    /// What the scan cited, frozen ([`Cited::freeze`]).
    cited: Cited,
    /// Per cited column, the codes each of its code predicates holds for.
    passing: Vec<Vec<HashSet<i64>>>,
    /// The scan read only the rows of its cited periods: a job without a period is not here.
    period_rows_only: bool,
    by_column: Vec<Vec<Row>>,
    psus: Vec<(String, String)>,
}

/// The groups the grouped scans of `accumulated` kept.
pub(in crate::engine) fn kept(accumulated: &[Accumulated<'_>]) -> Vec<std::sync::Arc<KeptGroups>> {
    accumulated.iter().filter_map(|a| a.reduction.clone()).collect()
}

impl KeptGroups {
    /// Whether this reduction read the table a job is on.
    pub(in crate::engine) fn is_of(&self, job: &Job) -> bool {
        self.location == job.rows.location && self.design == job.rows.design
    }

    /// The outcomes of the jobs (all of this reduction's table) whose rows it holds, by index
    /// into `jobs`; the others (`None`) are left for a scan. Each job is placed as the scan
    /// placed its own ([`Cited::plan_job`], frozen), its rows summed by the same
    /// [`accumulate_distinct`] and [`finish`]. Not for replicate weights (their ranks are tapped
    /// from the rows during a scan), nor a job without a period when the scan read only its
    /// periods' rows. A filter that does not parse, or a code predicate that fails on the codes,
    /// is left for a scan, which says why. A job on a weight the scan only took along (summed
    /// without its squares, [`Cited::squared`]) is served when the caller reads values alone
    /// (`reading`), its outcome then without second moments; else it is left for a scan.
    pub(in crate::engine) fn serve(
        &self,
        engine: &Engine,
        jobs: &[&Job],
        reading: Reading,
    ) -> Vec<Option<Result<Outcome, EngineError>>> {
        let Ok(mut filters) = Filters::new(engine, &self.schema) else {
            return jobs.iter().map(|_| None).collect();
        };
        let mut cited = self.cited.clone();
        let squared = self.cited.squared();
        let unsquared = |p: &Plan| p.weight.is_some_and(|k| k >= squared);
        let mut plans: Vec<Option<Plan>> = jobs
            .iter()
            .map(|j| {
                let r = &j.rows;
                if r.replicates.is_some() || (r.period_filter.is_none() && self.period_rows_only) {
                    return None;
                }
                let plan = cited.plan_job(j, &mut filters).ok()?;
                (reading == Reading::Values || !unsquared(&plan)).then_some(plan)
            })
            .collect();
        // Code predicates this scan did not meet, decided on the codes its groups hold.
        let met: Vec<usize> = self.passing.iter().map(Vec::len).collect();
        let mut passing = self.passing.clone();
        for (c, more) in cited.codes.iter().enumerate() {
            if more.len() > met[c] {
                let codes: BTreeSet<i64> = self.by_column[c].iter().map(|r| r.code).collect();
                let codes: Vec<i64> = codes.into_iter().collect();
                let field = self
                    .schema
                    .field_with_name(&cited.columns[c])
                    .map_err(|e| CodeSetError::Column(e.to_string()));
                match field.and_then(|f| passing_codes(&engine.ctx, f, &more[met[c]..], &codes)) {
                    Ok(sets) => passing[c].extend(sets),
                    Err(_) => plans.iter_mut().for_each(|p| {
                        if p.as_ref().is_some_and(|p| p.column == c && p.codes.iter().any(|&k| k >= met[c])) {
                            *p = None;
                        }
                    }),
                }
            }
        }
        let placed: Vec<Result<Plan, EngineError>> =
            plans.into_iter().map(|p| p.ok_or_else(|| EngineError::Internal("not kept".into()))).collect();
        let designed = self.design.is_some();
        let (sums, job_key) = accumulate_distinct(
            jobs,
            &placed,
            (&self.by_column, &cited.scales),
            &passing,
            &self.psus,
            designed,
        );
        jobs.par_iter()
            .zip(placed.par_iter().zip(job_key.par_iter()))
            .map(|(job, (plan, key))| {
                let (plan, key) = (plan.as_ref().ok()?, (*key)?);
                let mut outcome = finish(job, plan, &sums[key].1, &self.psus, designed);
                // Σw² of a weight taken along was never summed: no moments rather than zeros.
                if unsquared(plan)
                    && let Ok(o) = &mut outcome
                {
                    o.sums.moments.clear();
                }
                Some(outcome)
            })
            .collect()
    }
}

/// Where one job's pieces sit.
struct Plan {
    column: usize,
    period: Option<usize>,
    /// The base flag: the base filter's conjuncts that read other columns than the cited one,
    /// where one of them reads the cited column too.
    base: Option<usize>,
    /// Else those conjuncts as a flag of the row (a bit of the cell mask), shared by every column.
    row_base: Option<usize>,
    /// The base filter's conjuncts on the cited column alone ([`split_base`]), as indices into
    /// the column's code predicates: applied per code when summing, not per row.
    codes: Vec<usize>,
    weight: Option<usize>,
    cells: Vec<(String, String, usize)>,
}

/// A base filter split for the grouped scan: the conjuncts that read the cited column alone
/// (`{column} >= 1`), which a code decides, and the rest as one expression (`age BETWEEN 18 AND
/// 74`, the same for every column, so evaluated once per row). Rows pass the filter exactly
/// when they pass the rest and their code passes each conjunct (an AND is TRUE only when every
/// conjunct is). Not split: a volatile conjunct (it must see each row), and a job with
/// replicate weights (their ranks are tapped per row with the whole base flag, `gram.rs`).
fn split_base(base: Expr, column: &str, whole: bool) -> (Option<Expr>, Vec<Expr>) {
    if whole {
        return (Some(base), Vec::new());
    }
    let (mut rest, mut codes) = (Vec::new(), Vec::new());
    for c in datafusion::logical_expr::utils::split_conjunction(&base) {
        let refs = c.column_refs();
        if !c.is_volatile() && refs.len() == 1 && refs.iter().all(|r| r.name == column) {
            codes.push(c.clone());
        } else {
            rest.push(c.clone());
        }
    }
    (rest.into_iter().reduce(Expr::and), codes)
}

/// Per cited column, the codes each of its code predicates holds for, among the codes its
/// groups hold.
/// Why a base filter could not be evaluated on a cited column's codes: a fault of the data or
/// the declaration (the scan's `ScanError::Data`), worded as DataFusion says it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum CodeSetError {
    /// The cited column is not in the table's schema (arrow's words).
    #[error("{0}")]
    Column(String),
    /// A base filter on the column failed on its codes.
    #[error("a base filter on column {column:?}: {error}")]
    Filter {
        /// The cited column.
        column: String,
        /// What failed.
        error: String,
    },
}

fn code_sets(
    ctx: &datafusion::prelude::SessionContext,
    schema: &datafusion::arrow::datatypes::Schema,
    columns: &[String],
    predicates: &[Vec<Expr>],
    by_column: &[Vec<Row>],
) -> Result<Vec<Vec<HashSet<i64>>>, CodeSetError> {
    columns
        .iter()
        .zip(predicates)
        .zip(by_column)
        .map(|((c, preds), rows)| {
            if preds.is_empty() {
                return Ok(Vec::new());
            }
            let field = schema.field_with_name(c).map_err(|e| CodeSetError::Column(e.to_string()))?;
            let codes: BTreeSet<i64> = rows.iter().map(|r| r.code).collect();
            passing_codes(ctx, field, preds, &codes.into_iter().collect::<Vec<_>>())
        })
        .collect()
}

/// Whether an expression reads a column.
fn reads(e: &Expr, column: &str) -> bool {
    e.column_refs().iter().any(|c| c.name == column)
}

/// Which of `codes` (a cited column's distinct codes) each predicate holds for: each is
/// evaluated on the codes cast back to the column's type `field`, TRUE only (NULL is not).
fn passing_codes(
    ctx: &datafusion::prelude::SessionContext,
    field: &datafusion::arrow::datatypes::Field,
    predicates: &[Expr],
    codes: &[i64],
) -> Result<Vec<HashSet<i64>>, CodeSetError> {
    use datafusion::arrow::array::{Array, AsArray, Int64Array, RecordBatch};
    let fail = |e: &dyn std::fmt::Display| CodeSetError::Filter {
        column: field.name().clone(),
        error: e.to_string(),
    };
    if predicates.is_empty() {
        return Ok(Vec::new());
    }
    let values = datafusion::arrow::compute::cast(&Int64Array::from(codes.to_vec()), field.data_type())
        .map_err(|e| fail(&e))?;
    let schema = std::sync::Arc::new(datafusion::arrow::datatypes::Schema::new(vec![
        field.clone().with_nullable(true),
    ]));
    let batch = RecordBatch::try_new(schema.clone(), vec![values]).map_err(|e| fail(&e))?;
    let df_schema = datafusion::common::DFSchema::try_from(schema.as_ref().clone()).map_err(|e| fail(&e))?;
    predicates
        .iter()
        .map(|p| {
            let physical = ctx.create_physical_expr(p.clone(), &df_schema).map_err(|e| fail(&e))?;
            let out =
                physical.evaluate(&batch).and_then(|v| v.into_array(codes.len())).map_err(|e| fail(&e))?;
            let flags = out.as_boolean_opt().ok_or_else(|| fail(&"is not a condition"))?;
            Ok(codes
                .iter()
                .enumerate()
                .filter(|(i, _)| flags.is_valid(*i) && flags.value(*i))
                .map(|(_, c)| *c)
                .collect())
        })
        .collect()
}

/// What a scan's jobs cite, each once: the columns and weights, and the period, cell and (per
/// column) base filters as flags. Each job's [`Plan`] points into it.
#[derive(Default, Clone)]
struct Cited {
    columns: Vec<String>,
    weights: Vec<String>,
    /// Per weight, its scale in this scan ([`Engine::weight_scales`]), once measured.
    scales: Vec<Scale>,
    periods: Flags,
    cells: Flags,
    /// Per cited column, its bases' flags.
    bases: Vec<Flags>,
    /// Per cited column, its code predicates (the conjuncts on it alone, [`split_base`]).
    codes: Vec<Vec<Expr>>,
    /// How many of `weights` the jobs asked for, once others were taken along for later runs
    /// ([`Cited::anticipate`]); `None`: all of them. See [`Cited::squared`].
    asked_weights: Option<usize>,
    /// What a scan already run cited ([`Cited::freeze`]): a job whose column, weight or flag is
    /// not here is [`Unplanned::Full`]. Code predicates are still added: they are decided on
    /// the codes the scan's groups hold, not on its rows.
    frozen: bool,
}

impl Cited {
    /// Places every job's pieces, sharing what repeats: a job whose filter does not parse
    /// fails, one whose flags do not fit a mask is [`Unplanned::Full`].
    fn plan(jobs: &[&Job], filters: &mut Filters<'_>) -> (Cited, Vec<Result<Plan, Unplanned>>) {
        let mut cited = Cited::default();
        let plans = jobs.iter().map(|job| cited.plan_job(job, filters)).collect();
        (cited, plans)
    }

    /// Takes along the weights and row flags of jobs a later run will likely ask for (the
    /// explaining run's variants), on columns already cited: the groups then hold their rows,
    /// at the price of a weight's sums or a flag per row. Only what is cheap is taken: no new
    /// column (its codes would be read), no replicate weights, and a base only when what is
    /// left of it beside its code predicates reads no cited column (one flag of the row, not
    /// one per column). A piece that does not parse or fit a mask is left out (the later run
    /// scans for it); the bits of the jobs already planned do not move.
    fn anticipate(&mut self, jobs: &[&Job], filters: &mut Filters<'_>) {
        self.asked_weights.get_or_insert(self.weights.len());
        // No new period: its flag would widen the rows read (`Cited::keep`).
        let periods_were_frozen = std::mem::replace(&mut self.periods.frozen, true);
        for job in jobs {
            let r = &job.rows;
            if r.replicates.is_some() || !self.columns.contains(&r.column) || !job.cells.is_empty() {
                continue;
            }
            if r.weight.as_ref().is_some_and(|w| !filters.has_column(w)) {
                continue;
            }
            if let Some(f) = &r.base_filter {
                let Ok(base) = filters.get(Role::Base, f) else { continue };
                let (rest, _) = split_base(base, &r.column, false);
                if rest.is_some_and(|b| self.columns.iter().any(|c| reads(&b, c))) {
                    continue;
                }
            }
            let _ = self.plan_job(job, filters);
        }
        self.periods.frozen = periods_were_frozen;
    }

    /// How many of the weights, the first ones, are summed with their squares (Σw and Σw²):
    /// those the jobs asked for. A weight only taken along is summed as Σw alone, since the
    /// later run reads its variants' values and base n only ([`Reading::Values`]): a third
    /// fewer adds a row and column than its Σw² would cost.
    fn squared(&self) -> usize {
        self.asked_weights.unwrap_or(self.weights.len())
    }

    /// What a scan cited, frozen: later jobs are placed among its pieces only.
    fn freeze(mut self) -> Cited {
        self.frozen = true;
        for f in [&mut self.periods, &mut self.cells].into_iter().chain(&mut self.bases) {
            f.frozen = true;
        }
        self
    }

    /// Places one job. Its column and weight are cited even when a mask then turns out full
    /// (unless frozen).
    fn plan_job(&mut self, job: &Job, filters: &mut Filters<'_>) -> Result<Plan, Unplanned> {
        let r = &job.rows;
        let column = match self.columns.iter().position(|c| *c == r.column) {
            Some(i) => i,
            None if self.frozen => return Err(Unplanned::Full),
            None => {
                self.columns.push(r.column.clone());
                self.bases.push(Flags::default());
                self.codes.push(Vec::new());
                self.columns.len() - 1
            }
        };
        let period = r.period_filter.as_deref().map(|f| filters.get(Role::Period, f)).transpose()?;
        let base = r.base_filter.as_deref().map(|f| filters.get(Role::Base, f)).transpose()?;
        let mut cell_exprs = Vec::new();
        for (b, c, f) in &job.cells {
            let role = Role::Cell { breakdown: b.clone(), cell: c.clone() };
            cell_exprs.push((b.clone(), c.clone(), filters.get(role, f)?));
        }
        let weight = match r.weight.as_ref().map(|w| (w, self.weights.iter().position(|x| x == w))) {
            None => None,
            Some((_, Some(i))) => Some(i),
            Some((_, None)) if self.frozen => return Err(Unplanned::Full),
            Some((w, None)) => {
                self.weights.push(w.clone());
                Some(self.weights.len() - 1)
            }
        };
        let period = period.map(|p| self.periods.bit(p)).transpose()?;
        let (base, code_exprs) = match base {
            Some(b) => split_base(b, &r.column, r.replicates.is_some()),
            None => (None, Vec::new()),
        };
        let known = &mut self.codes[column];
        let codes = code_exprs
            .into_iter()
            .map(|e| match known.iter().position(|k| *k == e) {
                Some(i) => i,
                None => {
                    known.push(e);
                    known.len() - 1
                }
            })
            .collect();
        // What is left of a split base that does not read the cited column is the same for
        // every column: one flag of the row, beside the cells', which every column's groups
        // carry.
        let (base, row_base) = match base {
            Some(b) if r.replicates.is_none() && !reads(&b, &r.column) => (None, Some(self.cells.bit(b)?)),
            other => (other, None),
        };
        let bases = &mut self.bases[column];
        let base = match base {
            Some(b) if bases.exprs.len() >= MAX_BASE_BITS && !bases.index.contains_key(&b) => {
                return Err(Unplanned::Full);
            }
            Some(b) => Some(bases.bit(b)?),
            None => None,
        };
        let cells = cell_exprs
            .into_iter()
            .map(|(b, c, e)| Ok((b, c, self.cells.bit(e)?)))
            .collect::<Result<_, Unplanned>>()?;
        Ok(Plan { column, period, base, row_base, codes, weight, cells })
    }

    /// The projection: the flags as booleans, per column its code and base flags, the weights,
    /// the design; the reduction turns flags into masks and keys. `keep` is its rows' filter;
    /// `int64_codes`: the codes cast to Int64 (for the replicate weights' ranks), else as stored.
    fn projection(
        &self,
        design: Option<&(String, String)>,
        keep: Option<Expr>,
        int64_codes: bool,
    ) -> Result<Projection, ScanError> {
        let mut select: Vec<Expr> = self.periods.columns("p");
        select.extend(self.cells.columns("c"));
        for (i, c) in self.columns.iter().enumerate() {
            // At the file's width, the reducer reads the codes as stored (`reduce::Groups::place`);
            // the replicate weights' ranks read them as Int64 (`gram.rs`).
            let code = if int64_codes { cast(ident(c), DataType::Int64) } else { ident(c) };
            select.push(code.alias(format!("x{i}")));
            select.extend(self.bases[i].columns(&format!("b{i}_")));
        }
        for (i, w) in self.weights.iter().enumerate() {
            select.push(cast(ident(w), DataType::Float64).alias(format!("w{i}")));
        }
        if let Some((s, p)) = design {
            select.push(cast(ident(s), DataType::Utf8).alias("s"));
            select.push(cast(ident(p), DataType::Utf8).alias("p"));
        }
        let layout = Layout::new(
            self.periods.exprs.len(),
            self.cells.exprs.len(),
            self.bases.iter().map(|b| b.exprs.len()).collect(),
            self.weights.len(),
            design.is_some(),
        );
        if select.len() != layout.width() {
            return Err(ScanError::Fatal(EngineError::Internal(
                "the grouped projection is out of layout".into(),
            )));
        }
        Ok(Projection { select, layout, keep, scales: self.scales.clone(), squared: self.squared() })
    }

    /// The rows worth reading: those in some cited period, when every job planned into this
    /// scan has one. Saying so lets the Parquet reader skip row groups by their statistics (a
    /// tracker written wave by wave reads one wave for one claim). Not with a design: every
    /// PSU must stay, even one with no base rows.
    fn keep(&self, plans: &[Result<Plan, EngineError>], deferred: &[usize], designed: bool) -> Option<Expr> {
        let every_job_has_a_period = plans
            .iter()
            .enumerate()
            .filter(|(i, _)| !deferred.contains(i))
            .all(|(_, p)| p.as_ref().is_ok_and(|p| p.period.is_some()));
        (!designed && every_job_has_a_period && !self.periods.exprs.is_empty())
            .then(|| self.periods.exprs.iter().cloned().reduce(|a, b| a.or(b)))
            .flatten()
    }

    /// The replicate weights' ranks the jobs want ([`super::gram`]), tapped from the rows as
    /// they pass, at the places `layout` gives.
    fn grams(&self, jobs: &[&Job], layout: &Layout) -> super::gram::Grams {
        super::gram::Grams::new(
            jobs,
            &self.columns,
            &self.weights,
            (0..layout.periods).map(|k| layout.period(k)).collect(),
            |c| (layout.code(c), (0..layout.bases[c]).map(|k| layout.base(c, k)).collect()),
            |w| layout.weight(w),
        )
    }

    /// What one scan read: a scan when any column is cited, the aggregates it computed.
    /// `weights`: how many of its weights the jobs asked for (what was taken along for later
    /// runs is not counted, so a report's statistics do not depend on explaining).
    fn stats(&self, jobs: &[&Job], rows_scanned: u64, reason: String, weights: usize) -> ScanStats {
        let mut stats = ScanStats {
            tables_scanned: 1,
            scans: usize::from(!self.columns.is_empty()),
            rows_scanned,
            aggregates: 1 + 3 * weights,
            explanation_scans: 0,
            plans: Vec::new(),
        };
        if !self.columns.is_empty() {
            stats.plans.push(PlanChoice { table: table_of(jobs), plan: ScanPlan::Grouped, reason });
        }
        stats
    }
}

/// The grouped scan's projected columns (`select`, laid out as `layout`) and the filter of the
/// rows it reads (`keep`).
struct Projection {
    select: Vec<Expr>,
    layout: Layout,
    keep: Option<Expr>,
    /// Per weight, the scale both reductions sum its terms at.
    scales: Vec<Scale>,
    /// How many weights, the first ones, have their squares summed ([`Cited::squared`]; the
    /// in-process reduction sums the others' Σw alone, the plan sums all).
    squared: usize,
}

impl Engine {
    /// The grouped scan of one table for all its jobs (see the module doc): the jobs planned
    /// into flags ([`Cited::plan`]), those that do not fit scanned apart, the rows projected
    /// and reduced ([`Engine::reduce_grouped`]), then each distinct set of base rows summed
    /// ([`accumulate_distinct`]) and each job's outcome taken from its sums ([`finish_all`]).
    /// The weights and row flags of the `anticipated` jobs are taken along
    /// ([`Cited::anticipate`]) for the groups kept ([`KeptGroups`]).
    pub(super) fn scan_grouped<'a>(
        &self,
        location: &Path,
        design: Option<&(String, String)>,
        jobs: &[&'a Job],
        anticipated: &[&Job],
        reason: String,
    ) -> Result<Scanned<'a>, ScanError> {
        let reg = self.register_at(location, self.place(location, jobs).0)?;
        let mut filters = Filters::new(self, &reg.schema)?;
        let (mut cited, plans) = Cited::plan(jobs, &mut filters);
        cited.anticipate(anticipated, &mut filters);
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
            let (outcomes, stats) = self.scan_summed(location, design, jobs, why.into())?;
            return Ok((outcomes, stats, Vec::new()));
        }
        let mut later = None;
        if !deferred.is_empty() {
            let picked: Vec<&Job> = deferred.iter().map(|&i| jobs[i]).collect();
            later = Some(self.scan_best(location, design, &picked, &[])?);
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
        let keep = cited.keep(&plans, &deferred, design.is_some());
        let period_rows_only = keep.is_some();
        // No column planned: nothing is summed, so no aggregate to measure the weights with.
        cited.scales = if cited.columns.is_empty() {
            cited.weights.iter().map(|_| Scale::of(f64::NAN)).collect()
        } else {
            self.weight_scales(&reg, &cited.weights, keep.clone())?
        };
        let replicated = jobs.iter().any(|j| j.rows.replicates.is_some());
        let projection = cited.projection(design, keep, replicated)?;
        let mut grams = cited.grams(jobs, &projection.layout);
        let on_cluster = self.place(location, jobs).0 == super::Place::Cluster;
        let reduced = self.reduce_grouped(&reg, on_cluster, &cited, design, projection, &grams)?;
        if let Some(c) = reduced.out_of_range.iter().position(|&o| o) {
            let why = format!(
                "column {:?} holds codes beyond ±2^42, which the grouped key cannot pack",
                cited.columns[c]
            );
            // What the deferred jobs' own scan accumulated is still theirs to keep.
            let (outcomes, stats) = self.scan_summed(location, design, jobs, why)?;
            return Ok((outcomes, stats, later.map(|(_, _, kept)| kept).unwrap_or_default()));
        }
        let Reduced { merged, rows, psus, .. } = reduced;
        grams.merge();
        let by_column = rows_by_column(merged, &cited.bases);
        let mut stats = cited.stats(jobs, rows, reason, cited.squared());
        let psus: Vec<(String, String)> = psus.into_iter().collect();
        let passing = code_sets(&self.ctx, &reg.schema, &cited.columns, &cited.codes, &by_column)
            .map_err(|e| ScanError::Data(e.to_string()))?;
        let (sums, job_key) =
            accumulate_distinct(jobs, &plans, (&by_column, &cited.scales), &passing, &psus, design.is_some());
        let mut accumulated = Accumulated { sums, psus, reduction: None };
        let mut outcomes = finish_all(jobs, &plans, &job_key, &accumulated, design.is_some(), &grams, &cited);
        accumulated.reduction = Some(std::sync::Arc::new(KeptGroups {
            location: location.to_path_buf(),
            design: design.cloned(),
            schema: reg.schema.clone(),
            cited: cited.freeze(),
            passing,
            period_rows_only,
            by_column,
            psus: accumulated.psus.clone(),
        }));
        let mut kept = vec![accumulated];
        if let Some((outs, s, more)) = later {
            for (&i, out) in deferred.iter().zip(outs) {
                outcomes[i] = out;
            }
            stats.absorb(s);
            kept.extend(more);
        }
        Ok((outcomes, stats, kept))
    }

    /// The table's rows reduced to exact sums per group: DataFusion reads, filters and computes
    /// the flags; the counts and sums per key are reduced in exact integer arithmetic, here (one
    /// task per partition) or by a plan any DataFusion executor runs. The replicate weights'
    /// ranks tap the rows in process. On a cluster the rows never come here: the plan reduces
    /// them on the executors.
    fn reduce_grouped(
        &self,
        reg: &super::Registered,
        on_cluster: bool,
        cited: &Cited,
        design: Option<&(String, String)>,
        projection: Projection,
        grams: &super::gram::Grams,
    ) -> Result<Reduced, ScanError> {
        let Projection { select, layout, keep, scales, squared } = projection;
        if cited.columns.is_empty() {
            return Ok(Reduced::empty(0));
        }
        if (self.reduction == Reduction::Plan || on_cluster) && grams.is_empty() {
            let shape = plan::Shape {
                periods: &cited.periods.exprs,
                cells: &cited.cells.exprs,
                columns: &cited.columns,
                bases: cited.bases.iter().map(|b| b.exprs.as_slice()).collect(),
                weights: &cited.weights,
                scales: &scales,
                design,
            };
            return self
                .run_on(&reg.ctx, async {
                    let batches = plan::plan(&reg.ctx, &reg.name, keep, &shape).await?.collect().await?;
                    plan::gather(&batches, &shape)
                })
                .map_err(|e| scan_error(&e));
        }
        self.reduce_in_process(&reg.ctx, &reg.name, (keep, select), &layout, (&scales, squared), grams)
    }

    /// Each weight's [`Scale`] over the rows the grouped scan reads (`keep`): one aggregate, a
    /// MAX per weight of its values that are summed (positive, under 2^256), run before the
    /// scan because both reductions need the scale before the first row. The largest weight
    /// depends on the data alone, so the sums are the same integers whatever the partitioning;
    /// weights of 2^256 or more are left out, to fail their own jobs (OVERFLOW) without
    /// coarsening the others' sums.
    fn weight_scales(
        &self,
        reg: &super::Registered,
        weights: &[String],
        keep: Option<Expr>,
    ) -> Result<Vec<Scale>, ScanError> {
        use datafusion::functions_aggregate::expr_fn::max;
        use datafusion::prelude::{lit, when};
        if weights.is_empty() {
            return Ok(Vec::new());
        }
        let internal = |e: datafusion::error::DataFusionError| {
            ScanError::Fatal(EngineError::Internal(e.strip_backtrace()))
        };
        let mut largest = Vec::with_capacity(weights.len());
        for (i, w) in weights.iter().enumerate() {
            let v = cast(ident(w), DataType::Float64);
            let summed = v.clone().gt(lit(0.0)).and(v.clone().lt(lit(LARGEST_WEIGHT)));
            let summed = summed.and(std::ops::Not::not(super::bad_weight(&v)));
            largest.push(max(when(summed, v).end().map_err(internal)?).alias(format!("m{i}")));
        }
        let batches = self
            .run_on(&reg.ctx, async {
                let mut df = reg.ctx.table(reg.name.as_str()).await?;
                if let Some(keep) = keep {
                    df = df.filter(keep)?;
                }
                df.aggregate(vec![], largest)?.collect().await
            })
            .map_err(|e| scan_error(&e))?;
        let row = batches.iter().find(|b| b.num_rows() > 0);
        Ok((0..weights.len())
            .map(|i| {
                // NULL: no weight summed at all; any scale sums nothing exactly.
                let m = row.map_or(f64::NAN, |b| {
                    let c = b.column(i);
                    if c.is_null(0) { f64::NAN } else { super::value_at(c, 0) }
                });
                Scale::of(m)
            })
            .collect())
    }

    /// The in-process reduction: DataFusion streams the projected rows (`select`, laid out as
    /// `layout`) partition by partition, each reduced by a task of its own ([`reduce`]); the
    /// partitions' integer sums are merged (order-free). `grams` taps the rows as they pass.
    fn reduce_in_process(
        &self,
        ctx: &datafusion::prelude::SessionContext,
        table: &str,
        (keep, select): (Option<Expr>, Vec<Expr>),
        layout: &Layout,
        (scales, squared): (&[Scale], usize),
        grams: &super::gram::Grams,
    ) -> Result<Reduced, ScanError> {
        let n_columns = layout.columns();
        let partials: Vec<Partial> = super::block_on_within(&self.rt, async {
            let mut df = ctx.table(table).await?;
            if let Some(keep) = keep {
                df = df.filter(keep)?;
            }
            let streams = df.select(select)?.execute_stream_partitioned().await?;
            let mut tasks = tokio::task::JoinSet::new();
            for (i, stream) in streams.into_iter().enumerate() {
                let mut stream = grams.tap(i, stream); // replicate weights' ranks
                let layout = layout.clone();
                let scales = scales.to_vec();
                tasks.spawn(async move {
                    let mut part = Partial::new(n_columns, scales, squared);
                    while let Some(batch) = futures::StreamExt::next(&mut stream).await {
                        part.add(&batch?, &layout)?;
                    }
                    part.finish();
                    Ok::<_, datafusion::error::DataFusionError>(part)
                });
            }
            let mut parts = Vec::new();
            while let Some(done) = tasks.join_next().await {
                parts
                    .push(done.map_err(|e| datafusion::error::DataFusionError::ExecutionJoin(Box::new(e)))??);
            }
            Ok::<_, datafusion::error::DataFusionError>(parts)
        })
        .map_err(|e| scan_error(&e))?;
        let n_weights = layout.weights;
        let mut out = Reduced::empty(n_columns);
        for p in &partials {
            out.rows += p.rows;
            out.psus.extend(p.psu_names.iter().cloned());
            for (c, oor) in out.out_of_range.iter_mut().enumerate() {
                *oor |= p.columns[c].out_of_range;
            }
        }
        // Column by column in parallel: each column's groups are merged apart from the others'.
        out.merged = (0..n_columns)
            .into_par_iter()
            .map(|c| {
                let mut into: HashMap<MergedKey, Exact> = HashMap::new();
                for p in &partials {
                    for ((pm, cm, key, psu), v) in p.groups(c, n_weights) {
                        let psu = psu.map(|i| p.psu_names[i as usize].clone());
                        into.entry((pm, cm, key, psu)).or_insert_with(|| Exact::new(n_weights)).merge(&v);
                    }
                }
                into
            })
            .collect();
        Ok(out)
    }
}

/// Each cited column's groups as rows: the key unpacked into code and base mask, the sums kept
/// exact (a job's rows are summed per code as integers before they become floats, so how its
/// groups are split, by other jobs' flags, never moves a bit). Groups come out of hash maps in
/// no fixed order; the rows are sorted, so every run sees them in the same order.
fn rows_by_column(merged: Vec<HashMap<MergedKey, Exact>>, bases: &[Flags]) -> Vec<Vec<Row>> {
    merged
        .into_par_iter()
        .zip(bases)
        .map(|(map, base)| {
            let bits = base.exprs.len() as i64;
            let mut rows: Vec<Row> = map
                .into_iter()
                .map(|((pm, cm, key, psu), sums)| {
                    let (code, bmask) = unpack(key, bits);
                    Row { pm, cm, code, bmask, psu, sums }
                })
                .collect();
            rows.sort_unstable_by(|a, b| {
                (a.pm, a.cm, a.code, a.bmask, &a.psu).cmp(&(b.pm, b.cm, b.code, b.bmask, &b.psu))
            });
            rows
        })
        .collect()
}

/// Each distinct set of base rows summed once, with the first job that selects it, and which
/// of them each planned job takes. Jobs that select the same rows (column, period, base,
/// weight, missing codes, cells) share one accumulation: a batch of claims repeats these a lot.
fn accumulate_distinct<'a>(
    jobs: &[&'a Job],
    plans: &[Result<Plan, EngineError>],
    (by_column, scales): (&[Vec<Row>], &[Scale]),
    passing: &[Vec<HashSet<i64>>],
    psus: &[(String, String)],
    designed: bool,
) -> (Vec<(&'a Job, BaseSums)>, Vec<Option<usize>>) {
    let psu_index: HashMap<&(String, String), usize> = psus.iter().enumerate().map(|(i, k)| (k, i)).collect();
    let mut keys: HashMap<RowsKey, usize> = HashMap::new();
    let mut distinct: Vec<(&Plan, &'a Job)> = Vec::new();
    let job_key: Vec<Option<usize>> = jobs
        .iter()
        .zip(plans)
        .map(|(job, plan)| {
            let plan = plan.as_ref().ok()?;
            let key = RowsKey::of(plan, job);
            Some(*keys.entry(key).or_insert_with(|| {
                distinct.push((plan, *job));
                distinct.len() - 1
            }))
        })
        .collect();
    // Each column's rows come sorted by period mask first: a job on one period reads only the
    // runs of the masks holding it.
    let mut used = vec![false; by_column.len()];
    distinct.iter().for_each(|(plan, _)| used[plan.column] = true);
    let runs: Vec<Vec<PeriodRun>> = by_column
        .par_iter()
        .zip(&used)
        .map(|(rows, &used)| if used { period_runs(rows) } else { Vec::new() })
        .collect();
    let sums = distinct
        .par_iter()
        .map(|(plan, job)| {
            let codes: Vec<&HashSet<i64>> = plan.codes.iter().map(|&k| &passing[plan.column][k]).collect();
            let rows = (&by_column[plan.column][..], &runs[plan.column][..]);
            let scale = plan.weight.map(|k| scales[k]);
            (*job, accumulate(plan, scale, &job.rows, rows, &codes, &psu_index, designed))
        })
        .collect();
    (sums, job_key)
}

/// Each job's outcome: why it failed, or what [`finish`] makes of the sums of its rows (`key`
/// into `accumulated`), with its replicate weights' ranks ([`super::gram`]).
fn finish_all(
    jobs: &[&Job],
    plans: &[Result<Plan, EngineError>],
    job_key: &[Option<usize>],
    accumulated: &Accumulated<'_>,
    designed: bool,
    grams: &super::gram::Grams,
    cited: &Cited,
) -> Outcomes {
    jobs.par_iter()
        .zip(plans.par_iter())
        .zip(job_key.par_iter())
        .enumerate()
        .map(|(i, ((job, plan), key))| {
            let plan = plan.as_ref().map_err(Clone::clone)?;
            let Some(key) = key else {
                return Err(EngineError::Internal("a planned job has no key".into()));
            };
            finish(job, plan, &accumulated.sums[*key].1, &accumulated.psus, designed).map(|o| {
                grams.attach(i, job, plan.period, plan.base, cited.bases[plan.column].exprs.len(), o)
            })
        })
        .collect()
}

/// What a reduction returns: per cited column the exact sums of each (period mask, cell mask,
/// packed key, PSU) group, the rows read, the PSUs seen, and which columns hold codes beyond
/// ±2^42. Both reductions return the same, so what follows them is shared.
struct Reduced {
    merged: Vec<HashMap<MergedKey, Exact>>,
    rows: u64,
    psus: BTreeSet<(String, String)>,
    out_of_range: Vec<bool>,
}

impl Reduced {
    fn empty(columns: usize) -> Reduced {
        Reduced {
            merged: vec![HashMap::new(); columns],
            rows: 0,
            psus: BTreeSet::new(),
            out_of_range: vec![false; columns],
        }
    }
}

/// A job's outcome from base sums the cache kept: the same [`finish`] a scan takes.
pub(super) fn outcome_from(
    job: &Job,
    base: &BaseSums,
    psu_list: &[(String, String)],
    designed: bool,
) -> Result<Outcome, EngineError> {
    let cells = job.cells.iter().enumerate().map(|(i, (b, c, _))| (b.clone(), c.clone(), i)).collect();
    let plan =
        Plan { column: 0, period: None, base: None, row_base: None, codes: Vec::new(), weight: None, cells };
    finish(job, &plan, base, psu_list, designed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_splits_into_what_the_code_decides_and_the_rest() {
        use datafusion::prelude::{col, lit, random};
        let adults = col("age").between(lit(18), lit(74));
        let aware = col("q1").gt_eq(lit(1));
        let base = adults.clone().and(aware.clone()).and(col("gender").eq(lit(2)));
        let (rest, codes) = split_base(base.clone(), "q1", false);
        assert_eq!(rest, Some(adults.clone().and(col("gender").eq(lit(2)))));
        assert_eq!(codes, std::slice::from_ref(&aware));
        assert!(!reads(rest.as_ref().unwrap(), "q1"));
        // Whole with replicate weights; a conjunct reading another column too stays in the rest,
        // and so does a volatile one.
        assert_eq!(split_base(base.clone(), "q1", true), (Some(base), Vec::new()));
        let mixed = col("q1").gt(col("q2"));
        assert_eq!(split_base(mixed.clone(), "q1", false), (Some(mixed), Vec::new()));
        let volatile = col("q1").gt(random());
        assert_eq!(split_base(volatile.clone(), "q1", false), (Some(volatile), Vec::new()));
        // A base on the code alone leaves no rest.
        assert_eq!(split_base(aware.clone(), "q1", false), (None, vec![aware]));
    }

    #[test]
    fn code_predicates_hold_on_the_codes_cast_back_to_the_columns_type() {
        use datafusion::arrow::datatypes::Field;
        use datafusion::prelude::{SessionContext, col, lit};
        let ctx = SessionContext::new();
        let field = Field::new("q1", DataType::Int8, true);
        let preds = [col("q1").gt_eq(lit(4)), col("q1").in_list(vec![lit(-1), lit(5)], false)];
        let got = passing_codes(&ctx, &field, &preds, &[-1, 0, 4, 5, 7]).unwrap();
        assert_eq!(got[0], HashSet::from([4, 5, 7]));
        assert_eq!(got[1], HashSet::from([-1, 5]));
        // A predicate NULL on a code does not hold there.
        let null = [col("q1").gt_eq(lit(datafusion::scalar::ScalarValue::Int8(None)))];
        assert!(passing_codes(&ctx, &field, &null, &[1, 2]).unwrap()[0].is_empty());
    }

    /// A scale is the least power of two above the largest weight, within 2^±256.
    #[test]
    fn a_scale_is_the_least_power_of_two_above_the_largest_weight() {
        assert_eq!(Scale::of(8e10), Scale { bits: 37 }, "NHANES weights ×10^6: 2^36 ≤ 8·10^10 < 2^37");
        assert_eq!(Scale::of(1.0), Scale { bits: 1 });
        assert_eq!(Scale::of(0.75), Scale { bits: 0 });
        assert_eq!(Scale::of(1e-9), Scale { bits: -29 });
        assert_eq!(Scale::of(f64::NAN), Scale { bits: 0 }, "no weight summed");
        assert_eq!(Scale::of(1e300), Scale { bits: 256 });
        assert_eq!(Scale::of(1e-300), Scale { bits: -256 });
    }

    /// Every weight within 2^-70 (≈ 10^-21) of the largest keeps all 53 bits of w and w², at
    /// any magnitude from 10^-70 to 10^70: each term read back is the f64 it came from.
    #[test]
    fn the_scaled_fixed_point_keeps_every_bit_whatever_the_magnitude() {
        for e in (-70..=70).step_by(7) {
            let largest = 9.87 * 10f64.powi(e);
            let scale = Scale::of(largest);
            for ratio in [1.0, 0.5, 1.234_567_890_123_456_7e-3, 1e-12, 7e-21] {
                let w = largest * ratio;
                let (t, t2) = (scale.weight_term(w), scale.square_term(w));
                assert!(t2 < FIXED_LIMIT, "{w:e} must fit");
                assert_eq!(scale.weights(fixed(t)), w, "Σw of {w:e} at 2^{}", scale.bits);
                assert_eq!(scale.squares(fixed(t2)), w * w, "Σw² of {w:e} at 2^{}", scale.bits);
            }
        }
    }

    /// Weights scaled by a power of two sum to the same floats scaled alike: the exact sums do
    /// not depend on the scale, and each becomes a float with one rounding.
    #[test]
    fn weights_times_a_power_of_two_sum_to_the_same_floats_times_it() {
        let weights: Vec<f64> = (1..500).map(|i| 0.1 + f64::from(i) * 0.037).collect();
        let sums = |k: i32| {
            let w: Vec<f64> = weights.iter().map(|v| v * 2f64.powi(k)).collect();
            let scale = Scale::of(w.iter().copied().fold(f64::NAN, f64::max));
            let sw = w.iter().fold(i256::ZERO, |a, &v| a + fixed(scale.weight_term(v)));
            let sq = w.iter().fold(i256::ZERO, |a, &v| a + fixed(scale.square_term(v)));
            (scale.weights(sw), scale.squares(sq))
        };
        let (sw, sq) = sums(0);
        for k in [-200, -30, -1, 1, 20, 36, 200] {
            assert_eq!(sums(k), (sw * 2f64.powi(k), sq * 2f64.powi(2 * k)), "×2^{k}");
        }
    }

    /// Binary fractions are exact in the fixed point: sums of them are the exact sums.
    #[test]
    fn fixed_point_sums_binary_fractions_exactly() {
        let scale = Scale::of(2f64.powi(30));
        let terms = [0.5, 1.5, 2.0, 0.25, 2f64.powi(-40), 2f64.powi(30)];
        let sum = terms.iter().fold(i256::ZERO, |a, &t| a + fixed(scale.weight_term(t)));
        assert_eq!(scale.weights(sum), 0.5 + 1.5 + 2.0 + 0.25 + 2f64.powi(-40) + 2f64.powi(30));
        // Large terms take the shifted path: (2^31 - 2^8)² = 2^62 - 2^40 + 2^16, exact in f64,
        // in units of 2^(192 - 62) at the scale 2^31.
        let w = 2f64.powi(31) - 256.0;
        let scale = Scale::of(w);
        let square = fixed(scale.square_term(w));
        assert_eq!(square, i256::from_i128((1i128 << 62) - (1i128 << 40) + (1i128 << 16)) << 130u8);
        assert!(scale.square_term(2f64.powi(31)) >= FIXED_LIMIT, "2^31 is beyond its scale");
    }

    /// A sum becomes the nearest float, once rounded: 2^128 + 2^75 + 1 is just above the half
    /// way between 2^128 and 2^128 + 2^76, where rounding the low half first (to 2^75) and the
    /// total then (a tie, to even) gave 2^128.
    #[test]
    fn a_sum_becomes_the_nearest_float() {
        let two = |k: u8| i256::ONE << k;
        assert_eq!(whole(two(128) + two(75) + i256::ONE), 2f64.powi(128) + 2f64.powi(76));
        assert_eq!(whole(two(128) + two(75)), 2f64.powi(128), "a tie goes to even");
        assert_eq!(whole(two(128) + two(75) * i256::from_i128(3)), 2f64.powi(128) + 2f64.powi(77));
        assert_eq!(whole(two(254)), 2f64.powi(254));
        assert_eq!(whole(i256::from_i128(12_345)), 12_345.0);
        assert_eq!(whole(i256::ZERO), 0.0);
    }

    /// The in-process term equals what Arrow's cast to `Decimal256(76, 0)` makes of the same
    /// f64 (the plan reduction's), rounding halves away from zero alike.
    #[test]
    fn fixed_point_rounds_as_the_decimal_cast() {
        use datafusion::arrow::array::{AsArray, Float64Array};
        use datafusion::arrow::compute::cast;
        use datafusion::arrow::datatypes::{DataType, Decimal256Type};
        let values = [0.0, 1e-40, 0.3, 2.5, 1e-24, 1e-12, 0.7, 1.0, 3e8, 1e18, 3.3e50, 6e57];
        let products = Float64Array::from_iter_values(values);
        let cast = cast(&products, &DataType::Decimal256(76, 0)).unwrap();
        let cast = cast.as_primitive::<Decimal256Type>();
        for (i, v) in values.iter().enumerate() {
            assert_eq!(cast.value(i), fixed(rounded(*v)), "{v:e}");
        }
    }
}
