//! The rank of a subgroup's replicate weights, for its degrees of freedom as R computes them.
//!
//! R's `subset()` of a replicate design keeps the subgroup's rows of the replicate-weight
//! matrix, and `degf()` is then `qr(weights, tol = 1e-5)$rank − 1`. The rank of a matrix W is the
//! rank of its Gram matrix WᵀW = Σᵢ wᵢwᵢᵀ (wᵢ a row's replicate weights), which is a sum over
//! rows, so the grouped scan can accumulate it per group and add groups up per job and
//! variable. It costs R(R+1)/2 products per row, so it is accumulated only for the jobs that
//! need it ([`wanted`]): a subgroup of a replicate design (a conversion's denominator rows are
//! one too), or any base of one whose catalog does not declare `df`.
//!
//! The batches are tapped as they stream to the grouped reducer ([`Grams::tap`]), one
//! accumulator per partition, so the table is still read once.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{Float64Type, Int64Type};

use super::{Outcome, Replicated, Var};
use crate::resolve::Rows;

/// R's tolerance in `degf.svyrep.design`: `qr(…, tol = 1e-5)`.
pub const TOLERANCE: f64 = 1e-5;

/// Whether a job needs the rank of its replicate weights: it has replicates, and either its
/// rows are a subgroup ([`subgroup`]), or it has a conversion (whose denominator rows are one),
/// or the catalog does not declare the design's df (R's `svrepdesign` computes it as the rank).
pub fn wanted(job: &super::Job) -> bool {
    let Some(spec) = &job.rows.replicates else { return false };
    spec.df.is_none()
        || subgroup(&job.rows)
        || job.measures.iter().any(|m| matches!(m.kind, crate::extractor::Kind::Ratio(..)))
}

/// Whether a job's base rows are a subgroup of the sample: a period or base filter other than
/// `TRUE`, or missing codes. (Rows where the cited column is empty are left out of the base
/// without making it one.)
pub fn subgroup(rows: &Rows) -> bool {
    let everything = |f: &Option<String>| f.as_deref().is_none_or(|f| f.trim().eq_ignore_ascii_case("true"));
    !everything(&rows.period_filter)
        || !everything(&rows.base_filter)
        || !rows.missing.is_empty()
        || !rows.missing_ranges.is_empty()
}

/// One Gram matrix to accumulate: over the rows of a cited column's groups, with a positive
/// main weight, of a set of replicate weights (positions in the scan's batches).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Want {
    /// The cited column's code, and its base flags (bit k of the key's base mask is flag k).
    code: usize,
    bases: Vec<usize>,
    weight: usize,
    replicates: Vec<usize>,
}

/// A Gram matrix (upper triangle, row by row) and the rows summed into it.
#[derive(Debug, Clone)]
struct Gram {
    rows: u64,
    upper: Vec<f64>,
}

impl Gram {
    fn new(p: usize) -> Gram {
        Gram { rows: 0, upper: vec![0.0; p * (p + 1) / 2] }
    }

    fn add(&mut self, o: &Gram) {
        self.rows += o.rows;
        for (a, b) in self.upper.iter_mut().zip(&o.upper) {
            *a += b;
        }
    }
}

/// One partition's Gram matrices: per want, per (period mask, packed key).
type Part = Vec<HashMap<(i64, i64), Gram>>;

/// The Gram matrices a grouped scan accumulates, for the jobs that want them.
pub struct Grams {
    /// Where the batches hold the period flags (bit k of the period mask is flag k).
    periods: Arc<Vec<usize>>,
    wants: Arc<Vec<Want>>,
    /// Per job: its want, if any.
    of_job: Vec<Option<usize>>,
    parts: Mutex<Vec<(usize, Arc<Mutex<Part>>)>>,
    merged: Vec<BTreeMap<(i64, i64), Gram>>,
}

impl Grams {
    /// The Gram matrices `jobs` need, given the scan's cited columns and weights and where the
    /// batches hold the period flags, each column's code and base flags, and each weight. A job
    /// whose weights are not all in this scan gets none (its df falls back to the declared one).
    pub fn new(
        jobs: &[&super::Job],
        columns: &[String],
        weights: &[String],
        periods: Vec<usize>,
        code_at: impl Fn(usize) -> (usize, Vec<usize>),
        weight_at: impl Fn(usize) -> usize,
    ) -> Grams {
        let mut wants: Vec<Want> = Vec::new();
        let of_job = jobs
            .iter()
            .map(|job| {
                let r = &job.rows;
                let spec = r.replicates.as_ref().filter(|_| wanted(job))?;
                let at = |w: &String| weights.iter().position(|x| x == w).map(&weight_at);
                let (code, bases) = code_at(columns.iter().position(|c| *c == r.column)?);
                let want = Want {
                    code,
                    bases,
                    weight: at(r.weight.as_ref()?)?,
                    replicates: spec.columns.iter().map(at).collect::<Option<_>>()?,
                };
                Some(wants.iter().position(|w| *w == want).unwrap_or_else(|| {
                    wants.push(want);
                    wants.len() - 1
                }))
            })
            .collect();
        Grams {
            periods: Arc::new(periods),
            wants: Arc::new(wants),
            of_job,
            parts: Mutex::new(Vec::new()),
            merged: Vec::new(),
        }
    }

    /// Whether no job of the scan wants a Gram matrix (nothing to tap).
    pub fn is_empty(&self) -> bool {
        self.wants.is_empty()
    }

    /// `stream` (partition `partition` of the scan), accumulating the Gram matrices of its
    /// batches as they pass.
    pub fn tap<S, E>(
        &self,
        partition: usize,
        stream: S,
    ) -> impl futures::Stream<Item = Result<RecordBatch, E>> + use<S, E>
    where
        S: futures::Stream<Item = Result<RecordBatch, E>>,
    {
        let (wants, periods) = (Arc::clone(&self.wants), Arc::clone(&self.periods));
        let part: Arc<Mutex<Part>> = Arc::new(Mutex::new(vec![HashMap::new(); wants.len()]));
        if !wants.is_empty() {
            self.parts.lock().unwrap_or_else(|e| e.into_inner()).push((partition, Arc::clone(&part)));
        }
        futures::StreamExt::inspect(stream, move |b| {
            if let (Ok(b), false) = (b, wants.is_empty()) {
                add(&mut part.lock().unwrap_or_else(|e| e.into_inner()), &wants, &periods, b);
            }
        })
    }

    /// Adds the partitions up, in partition order (so the sums are the same from run to run).
    pub fn merge(&mut self) {
        let mut parts = std::mem::take(&mut *self.parts.lock().unwrap_or_else(|e| e.into_inner()));
        parts.sort_by_key(|(i, _)| *i);
        let mut merged = vec![BTreeMap::new(); self.wants.len()];
        for (_, part) in parts {
            let part = std::mem::take(&mut *part.lock().unwrap_or_else(|e| e.into_inner()));
            for ((into, groups), want) in merged.iter_mut().zip(part).zip(self.wants.iter()) {
                for (k, g) in groups {
                    into.entry(k).or_insert_with(|| Gram::new(want.replicates.len())).add(&g);
                }
            }
        }
        self.merged = merged;
    }

    /// Puts the rank of job `i`'s replicate weights over each variable's domain into its
    /// outcome (`sums.replicates`, whose totals [`super::Engine::run`] fills in). `period` and
    /// `base` are the job's bits in the masks, `bits` the base bits of its column's key.
    pub fn attach(
        &self,
        i: usize,
        job: &super::Job,
        period: Option<usize>,
        base: Option<usize>,
        bits: usize,
        mut out: Outcome,
    ) -> Outcome {
        let (Some(w), Some(spec)) = (self.of_job.get(i).copied().flatten(), &job.rows.replicates) else {
            return out;
        };
        let Some(groups) = self.merged.get(w) else { return out };
        let p = spec.columns.len();
        let mut per_var: Vec<Gram> = vec![Gram::new(p); out.vars.len()];
        for (&(pm, key), g) in groups {
            let (code, bmask) = (key >> bits, key & ((1i64 << bits) - 1));
            if period.is_some_and(|b| pm & (1 << b) == 0)
                || base.is_some_and(|b| bmask & (1 << b) == 0)
                || job.rows.is_missing(code as f64)
            {
                continue;
            }
            for (v, into) in out.vars.iter().zip(per_var.iter_mut()) {
                if let Var::Ind(pred) = v
                    && !pred.matches(code as f64)
                {
                    continue;
                }
                into.add(g);
            }
        }
        // The whole sample's df is the declared one, when there is one: only subgroups (here, a
        // conversion's denominator rows) take their rank.
        let declared = spec.df.is_some() && !subgroup(&job.rows);
        let ranks = per_var
            .iter()
            .zip(&out.vars)
            .map(|(g, v)| {
                let whole = declared && !matches!(v, Var::Ind(_));
                (!whole).then(|| qr_rank(&g.upper, p, TOLERANCE).min(g.rows as usize))
            })
            .collect();
        out.sums.replicates = Some(Replicated { spec: spec.clone(), totals: Vec::new(), ranks: Some(ranks) });
        out
    }
}

/// Adds a batch's rows to a partition's Gram matrices.
fn add(part: &mut Part, wants: &[Want], periods: &[usize], b: &RecordBatch) {
    // The masks and keys as the grouped reducer builds them from the projected flags.
    let mask = |flags: &[usize], r: usize| -> i64 {
        flags.iter().enumerate().fold(0, |m, (k, &at)| {
            let f = b.column(at).as_boolean();
            if f.is_valid(r) && f.value(r) { m | (1i64 << k) } else { m }
        })
    };
    let pms: Vec<i64> = (0..b.num_rows()).map(|r| mask(periods, r)).collect();
    for (want, groups) in wants.iter().zip(part.iter_mut()) {
        let keys = b.column(want.code).as_primitive::<Int64Type>();
        let bits = want.bases.len() as u32;
        let main = b.column(want.weight).as_primitive::<Float64Type>();
        let reps: Vec<_> =
            want.replicates.iter().map(|&i| b.column(i).as_primitive::<Float64Type>()).collect();
        let p = reps.len();
        let mut row = vec![0.0; p];
        for (r, &pm) in pms.iter().enumerate() {
            // The base rows: a code, and a positive main weight (as the reducer counts them). A
            // code beyond the packed key's range sends the table to the summed plan, so its
            // rows are never read from here.
            if keys.is_null(r) || main.is_null(r) {
                continue;
            }
            let w = main.value(r);
            if !(w.is_finite() && w > 0.0) {
                continue;
            }
            // A missing or invalid replicate weight adds nothing here (the replicate's own sums
            // fail the estimate).
            for (x, c) in row.iter_mut().zip(&reps) {
                *x = if c.is_null(r) { 0.0 } else { c.value(r) };
                if !(x.is_finite() && *x >= 0.0) {
                    *x = 0.0;
                }
            }
            let key = keys.value(r).wrapping_mul(1i64 << bits) + mask(&want.bases, r);
            let g = groups.entry((pm, key)).or_insert_with(|| Gram::new(p));
            g.rows += 1;
            let mut at = 0;
            for (j, &xj) in row.iter().enumerate() {
                if xj != 0.0 {
                    for (cell, xk) in g.upper[at..at + p - j].iter_mut().zip(&row[j..]) {
                        *cell += xj * xk;
                    }
                }
                at += p - j;
            }
        }
    }
}

/// The rank R's `qr(W, tol)` reports for a matrix W with `p` columns, from its Gram matrix WᵀW
/// (upper triangle, row by row). LINPACK's `dqrdc2` takes the columns in order and moves a
/// column to the end when the norm of what is left of it, after projecting out the columns
/// kept so far, is below `tol` times its original norm (a zero column counts as norm 1); the
/// rank is the columns kept. That residual norm² is the pivot of a Cholesky factorisation of
/// WᵀW over the kept columns, which is what this computes. (R caps the rank at the rows of W;
/// the caller does.) The Gram matrix squares W's condition number: residuals are resolved to
/// about 1e-8 of a column's norm, well inside R's 1e-5.
pub fn qr_rank(upper: &[f64], p: usize, tol: f64) -> usize {
    let at = |j: usize, k: usize| {
        let (j, k) = if j <= k { (j, k) } else { (k, j) };
        upper[j * p - j * (j + 1) / 2 + k]
    };
    // The kept columns, each with its row of the Cholesky factor L (G over them = L·Lᵀ).
    let mut kept: Vec<(usize, Vec<f64>)> = Vec::new();
    for j in 0..p {
        let norm2 = at(j, j);
        let original = if norm2 > 0.0 { norm2 } else { 1.0 };
        // v = L⁻¹ g (g the column's products with the kept columns); residual = G[j][j] − |v|².
        let mut v: Vec<f64> = Vec::with_capacity(kept.len() + 1);
        for (col, row) in &kept {
            let dot: f64 = row.iter().zip(&v).map(|(l, x)| l * x).sum();
            v.push((at(*col, j) - dot) / row[v.len()]);
        }
        let residual = norm2 - v.iter().map(|x| x * x).sum::<f64>();
        if residual < tol * tol * original {
            continue;
        }
        v.push(residual.sqrt());
        kept.push((j, v));
    }
    kept.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Gram matrix of a matrix given by its columns (upper triangle, row by row).
    fn gram(columns: &[Vec<f64>]) -> Vec<f64> {
        let mut upper = Vec::new();
        for (j, a) in columns.iter().enumerate() {
            for b in &columns[j..] {
                upper.push(a.iter().zip(b).map(|(x, y)| x * y).sum());
            }
        }
        upper
    }

    #[test]
    fn rank_is_r_qr_rank_with_its_tolerance() {
        // R: qr(cbind(a, b, a + b, 0, 1), tol = 1e-5)$rank = 3 (the sum and the zero column go).
        let a = vec![1., 2., 3., 4., 5., 6.];
        let b = vec![2., 0., 1., 0., 3., 1.];
        let sum: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        let m = [a.clone(), b.clone(), sum.clone(), vec![0.; 6], vec![1.; 6]];
        assert_eq!(qr_rank(&gram(&m), 5, TOLERANCE), 3);
        // a + b + ε(1, −1, …): what is left after a and b is 1.12e-5 of its norm for ε = 1.2e-4
        // (R: rank 3) and 8.4e-6 for ε = 0.9e-4 (R: rank 2).
        for (eps, rank) in [(1.2e-4, 3), (0.9e-4, 2)] {
            let c: Vec<f64> =
                sum.iter().enumerate().map(|(i, s)| s + eps * if i % 2 == 0 { 1. } else { -1. }).collect();
            assert_eq!(qr_rank(&gram(&[a.clone(), b.clone(), c]), 3, TOLERANCE), rank, "ε = {eps}");
        }
        // More columns than rows: R's qr(cbind(c(1,2,3), c(2,1,0), 5, c(1,0,1), c(9,1,4)))$rank
        // is 3; the caller caps at the rows, and rounding must not find more here either.
        let wide = [vec![1., 2., 3.], vec![2., 1., 0.], vec![5.; 3], vec![1., 0., 1.], vec![9., 1., 4.]];
        assert_eq!(qr_rank(&gram(&wide), 5, TOLERANCE), 3);
        assert_eq!(qr_rank(&[], 0, TOLERANCE), 0);
    }
}
