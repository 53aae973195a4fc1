//! The grouped scan's accumulation: a job's base rows summed per code from the reduced groups,
//! and its sufficient statistics from those sums.

use std::collections::{BTreeMap, HashMap, HashSet};

use datafusion::arrow::datatypes::i256;

use super::reduce::{Exact, Fixed, FxMap, add_fixed};
use super::{INVALID, OVERFLOW, Plan, Scale, whole};
use crate::engine::{
    EngineError, Job, Outcome, Sums, Var, check_weight_sums, invalid_weight, needed_pairs, overflow, vars_for,
};
use crate::resolve::Rows;

/// Per code: unweighted count, Σw, Σw² (over rows with a valid weight), and whether any row
/// had a bad weight value or a sum overflowed (INVALID, OVERFLOW).
#[derive(Default, Clone, Copy)]
pub(in crate::engine) struct Acc {
    pub(in crate::engine) n: f64,
    pub(in crate::engine) w: f64,
    pub(in crate::engine) w2: f64,
    pub(in crate::engine) bad: u8,
}
/// One output row of the grouped aggregate.
#[derive(Clone)]
pub(super) struct Row {
    pub(super) pm: i64,
    pub(super) cm: i64,
    pub(super) code: i64,
    pub(super) bmask: i64,
    pub(super) psu: Option<(String, String)>,
    /// The group's exact sums: its row count, and per weight (valid rows, Σw, Σw²) in fixed point.
    pub(super) sums: Exact,
}

/// What selects a job's rows, for sharing accumulations between jobs.
#[derive(PartialEq, Eq, Hash)]
pub(super) struct RowsKey {
    pub(super) column: usize,
    pub(super) period: Option<usize>,
    pub(super) base: Option<usize>,
    pub(super) row_base: Option<usize>,
    pub(super) codes: Vec<usize>,
    pub(super) weight: Option<usize>,
    pub(super) missing: Vec<u64>,
    pub(super) missing_ranges: Vec<[u64; 2]>,
    pub(super) cells: Vec<usize>,
}

impl RowsKey {
    pub(super) fn of(plan: &Plan, job: &Job) -> RowsKey {
        RowsKey {
            column: plan.column,
            period: plan.period,
            base: plan.base,
            row_base: plan.row_base,
            codes: plan.codes.clone(),
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
pub(in crate::engine) struct BaseSums {
    pub(in crate::engine) codes: BTreeMap<i64, Acc>,
    pub(in crate::engine) per_psu: Vec<BTreeMap<i64, Acc>>,
    pub(in crate::engine) cells: Vec<f64>,
    /// INVALID / OVERFLOW flags of the selected groups' weight.
    pub(in crate::engine) bad: u8,
}

/// A run of a column's rows (sorted by period mask first) that share one period mask:
/// (mask, first row, end).
pub(super) type PeriodRun = (i64, usize, usize);

/// The runs of `rows` that share a period mask, in order.
pub(super) fn period_runs(rows: &[Row]) -> Vec<PeriodRun> {
    let mut runs: Vec<PeriodRun> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        match runs.last_mut() {
            Some((pm, _, end)) if *pm == row.pm => *end = i + 1,
            _ => runs.push((row.pm, i, i + 1)),
        }
    }
    runs
}

/// Sums the rows of a column (with their [`period_runs`]) that a job's period, base, weight
/// and missing codes select; `codes_in`: the codes each of the base's code predicates holds for;
/// `scale`: the scan's scale of the job's weight.
pub(super) fn accumulate(
    plan: &Plan,
    scale: Option<Scale>,
    selected: &Rows,
    (rows, runs): (&[Row], &[PeriodRun]),
    codes_in: &[&HashSet<i64>],
    psu_index: &HashMap<&(String, String), usize>,
    designed: bool,
) -> BaseSums {
    // Summed exactly per code (fixed point, or counts unweighted), then made floats once: the
    // same floats however the groups were split.
    let mut codes: Vec<(i64, Fixed)> = Vec::new();
    // Per code met: where its sums go, or `None` when the code predicates or the missing codes
    // leave it out (decided once per code, not per group).
    let mut slots: FxMap<i64, Option<usize>> = FxMap::default();
    let mut per_psu: Vec<BTreeMap<i64, i256>> =
        vec![BTreeMap::new(); if designed { psu_index.len() } else { 0 }];
    let mut cells = vec![0u64; plan.cells.len()];
    let mut bad = 0;
    let in_period = |pm: i64| plan.period.is_none_or(|b| pm & (1 << b) != 0);
    let selected_rows =
        runs.iter().filter(|run| in_period(run.0)).flat_map(|&(_, start, end)| &rows[start..end]);
    for row in selected_rows {
        if plan.base.is_some_and(|b| row.bmask & (1 << b) == 0)
            || plan.row_base.is_some_and(|b| row.cm & (1 << b) == 0)
        {
            continue;
        }
        let slot = *slots.entry(row.code).or_insert_with(|| {
            let kept =
                codes_in.iter().all(|set| set.contains(&row.code)) && !selected.is_missing(row.code as f64);
            kept.then(|| {
                codes.push((row.code, (0, i256::ZERO, i256::ZERO)));
                codes.len() - 1
            })
        });
        let Some(slot) = slot else { continue };
        let sums = match plan.weight {
            Some(k) => {
                bad |= row.sums.bad[k];
                row.sums.weighted[k]
            }
            None => {
                let n = i256::from_i128(i128::from(row.sums.n));
                (row.sums.n, n, n)
            }
        };
        bad |= add_fixed(&mut codes[slot].1, &sums);
        if designed && let Some(i) = row.psu.as_ref().and_then(|k| psu_index.get(k)) {
            let e = per_psu[*i].entry(row.code).or_insert(i256::ZERO);
            match e.checked_add(sums.1) {
                Some(v) => *e = v,
                None => bad |= OVERFLOW,
            }
        }
        for (slot, (_, _, bit)) in plan.cells.iter().enumerate() {
            if row.cm & (1 << bit) != 0 {
                cells[slot] += sums.0;
            }
        }
    }
    // Fixed point back in weight units at the weight's scale; unweighted sums are counts.
    let weights = |x: i256| scale.map_or_else(|| whole(x), |s| s.weights(x));
    let squares = |x: i256| scale.map_or_else(|| whole(x), |s| s.squares(x));
    // A code's groups are added in row order whichever slot it has: the same integers.
    let codes: BTreeMap<i64, Acc> = codes
        .into_iter()
        .map(|(code, (n, w, w2))| (code, Acc { n: n as f64, w: weights(w), w2: squares(w2), bad: 0 }))
        .collect();
    let per_psu = per_psu
        .into_iter()
        .map(|by_code| {
            by_code.into_iter().map(|(code, w)| (code, Acc { w: weights(w), ..Acc::default() })).collect()
        })
        .collect();
    let cells = cells.into_iter().map(|n| n as f64).collect();
    BaseSums { codes, per_psu, cells, bad }
}

/// A job's totals, second moments and PSU totals from its base sums.
pub(super) fn finish(
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
