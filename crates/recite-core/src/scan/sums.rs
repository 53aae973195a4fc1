//! What a scan returns for one set of base rows, and so what the engine owes the statistics: the
//! linear variables z a job's measures need ([`Var`], [`vars_for`]), and their sufficient
//! statistics ([`Sums`]): the count, the weighted totals Σ w·zⱼ, the second moments Σ w²·zⱼ·zₖ
//! the variances need ([`needed_pairs`]), and with a design the totals per PSU. Both plans
//! compute exactly these; `stats` turns them into estimates and standard errors.

use std::collections::HashMap;

pub use crate::catalog::Replication;
use crate::extractor::{Kind, Measure, Pred};

/// A linear variable z whose weighted total over the base rows an estimate needs.
#[derive(Debug, Clone, PartialEq)]
pub enum Var {
    /// z = 1 (Σw).
    One,
    /// z = 1\[pred\].
    Ind(Pred),
    /// z = x.
    X,
    /// z = x² (for the design effect of a mean).
    X2,
}

/// The variables the measures need, `One` first. Measures refer to them by index.
pub fn vars_for(measures: &[Measure]) -> Vec<Var> {
    let mut vars = vec![Var::One];
    let mut add = |v: Var| {
        if !vars.contains(&v) {
            vars.push(v);
        }
    };
    for m in measures {
        match &m.kind {
            Kind::Share(p) => add(Var::Ind(p.clone())),
            Kind::Ratio(a, b) => {
                add(Var::Ind(a.clone()));
                add(Var::Ind(b.clone()));
            }
            Kind::Mean => {
                add(Var::X);
                add(Var::X2);
            }
            Kind::Total => add(Var::X),
            Kind::Difference { .. } | Kind::Count => {}
        }
    }
    vars
}

/// The pairs (j ≤ k) of variables whose second moment Σ w²·zⱼ·zₖ some measure's variance
/// needs: those that appear together in one measure's gradient. (0, 0) is always included, for
/// the effective base.
pub fn needed_pairs(measures: &[Measure], vars: &[Var]) -> Vec<(usize, usize)> {
    let idx = |v: &Var| vars.iter().position(|x| x == v).expect("vars_for covers every measure");
    let mut support: Vec<Vec<usize>> = Vec::new();
    for m in measures {
        let s = match &m.kind {
            Kind::Share(p) => vec![0, idx(&Var::Ind(p.clone()))],
            Kind::Mean => vec![0, idx(&Var::X)],
            Kind::Ratio(a, b) => vec![idx(&Var::Ind(a.clone())), idx(&Var::Ind(b.clone()))],
            Kind::Difference { a, b, .. } => {
                let mut s = support[*a].clone();
                s.extend(support[*b].iter().copied());
                s
            }
            Kind::Count => vec![0],
            Kind::Total => vec![idx(&Var::X)],
        };
        support.push(s);
    }
    let mut pairs = std::collections::BTreeSet::from([(0, 0)]);
    for s in &support {
        for &j in s {
            for &k in s {
                if j <= k {
                    pairs.insert((j, k));
                }
            }
        }
    }
    pairs.into_iter().collect()
}

/// The sums the engine returns for one set of base rows.
#[derive(Debug, Clone, Default)]
pub struct Sums {
    /// Unweighted count of base rows.
    pub n: f64,
    /// Tⱼ = Σ w·zⱼ, one per variable.
    pub totals: Vec<f64>,
    /// The unweighted count of base rows in each variable's domain: where its indicator is 1
    /// (a conversion's denominator rows), every base row for 1, x and x².
    pub counts: Vec<f64>,
    /// Σ w²·zⱼ·zₖ for j ≤ k (weights-only variance; with a design only j = k).
    pub moments: HashMap<(usize, usize), f64>,
    /// With a declared design: (stratum, Tⱼ within that PSU) for every PSU of the table.
    pub psus: Vec<(String, Vec<f64>)>,
    /// With replicate weights: how they combine, and each replicate's Tⱼ = Σ wᵣ·zⱼ.
    pub replicates: Option<Replicated>,
}

/// The replicate totals of one set of base rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Replicated {
    /// How they combine.
    pub spec: Replication,
    /// Per replicate, Tⱼ = Σ wᵣ·zⱼ in the order of [`Sums::totals`].
    pub totals: Vec<Vec<f64>>,
    /// Per variable, the rank of the replicate weights over its domain rows (R's `degf()` of
    /// the subgroup + 1), where the scan computed it (see `engine::gram`): not for the whole
    /// sample when the catalog declares its df.
    pub ranks: Option<Vec<Option<usize>>>,
}
