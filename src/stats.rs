//! Sampling error: Taylor linearisation of every measure, and its confidence interval.
//!
//! Every measure is a smooth function θ = f(T₁…Tₖ) of weighted totals Tⱼ = Σ w·zⱼ over the base
//! rows, where zⱼ is 1, an indicator 1\[pred\] or the column x. Its linearised variable is
//! uᵢ = Σⱼ ∂f/∂Tⱼ · wᵢ zᵢⱼ, and:
//!
//! - weights only (each respondent its own PSU, one stratum):
//!   V = n/(n−1) · (Σuᵢ² − (Σuᵢ)²/n), where Σuᵢ² needs the second moments Σ w² zⱼ zₖ, which the
//!   engine computes in the same scan; df = n − 1;
//! - a declared design (strata h, PSUs c sampled with replacement):
//!   V = Σₕ nₕ/(nₕ−1) Σ꜀ (U_hc − Ūₕ)², with U_hc the PSU totals of u, which the engine gets by
//!   grouping the same scan by stratum and PSU; df = #PSUs − #strata.
//!
//! These are the estimators of R's `survey` package and of samplics (with-replacement, Taylor).

use std::collections::HashMap;

use serde::Serialize;
use statrs::distribution::{Beta, ContinuousCDF, Normal, StudentsT};

use crate::engine::{Sums, Var};
use crate::extractor::{Kind, Measure};

/// How to compute the interval of a proportion.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, clap::ValueEnum, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Interval {
    /// Logit transform, as R's `svyciprop(method = "logit")` and samplics (the default).
    #[default]
    Logit,
    /// Wilson score interval on the effective base.
    Wilson,
    /// Korn–Graubard (Clopper–Pearson on the effective base, df-adjusted).
    KornGraubard,
}

/// A measure's estimate with its sampling error.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Estimate {
    /// The recomputed value (a fraction for proportions).
    pub value: f64,
    /// Its standard error (linearised).
    pub se: f64,
    /// Degrees of freedom of the interval.
    pub df: f64,
    /// Lower end of the 95% interval.
    pub ci_low: f64,
    /// Upper end of the 95% interval.
    pub ci_high: f64,
    /// Design effect: variance over that of a simple random sample of the same size.
    pub deff: Option<f64>,
}

/// The base's weighting facts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct BaseFacts {
    /// Unweighted count of base rows.
    pub n: u64,
    /// Σw.
    pub weighted: f64,
    /// (Σw)² / Σw² (Kish); equals n when unweighted.
    pub effective: f64,
}

/// Base facts from the sums.
pub fn base_facts(s: &Sums) -> BaseFacts {
    let w = s.totals.first().copied().unwrap_or(0.0);
    let w2 = s.moments.get(&(0, 0)).copied();
    let effective = match w2 {
        Some(w2) if w2 > 0.0 => w * w / w2,
        _ => s.n,
    };
    BaseFacts { n: s.n.round() as u64, weighted: w, effective }
}

/// The degrees of freedom of the design: #PSUs − #strata, or n − 1.
pub fn degrees_of_freedom(s: &Sums) -> f64 {
    if s.psus.is_empty() {
        (s.n - 1.0).max(1.0)
    } else {
        let mut strata: Vec<&str> = s.psus.iter().map(|(h, _)| h.as_str()).collect();
        strata.sort_unstable();
        strata.dedup();
        ((s.psus.len() - strata.len()) as f64).max(1.0)
    }
}

/// Estimates every measure, each with its linearised SE and 95% interval.
pub fn estimate(measures: &[Measure], vars: &[Var], s: &Sums, interval: Interval) -> Vec<Option<Estimate>> {
    let idx = |v: &Var| vars.iter().position(|x| x == v).expect("vars_for covers every measure");
    let t = |j: usize| s.totals.get(j).copied().unwrap_or(0.0);
    let df = degrees_of_freedom(s);
    let base = base_facts(s);
    // (θ, gradient over vars) per measure, in order, so differences can use earlier ones.
    let mut lin: Vec<Option<(f64, Vec<f64>)>> = Vec::new();
    for m in measures {
        let mut g = vec![0.0; vars.len()];
        let one = t(0);
        let theta = match &m.kind {
            Kind::Share(p) => ratio(t(idx(&Var::Ind(p.clone()))), one, idx(&Var::Ind(p.clone())), 0, &mut g),
            Kind::Mean => ratio(t(idx(&Var::X)), one, idx(&Var::X), 0, &mut g),
            Kind::Ratio(a, b) => {
                let (ja, jb) = (idx(&Var::Ind(a.clone())), idx(&Var::Ind(b.clone())));
                ratio(t(ja), t(jb), ja, jb, &mut g)
            }
            Kind::Difference { a, b, scale } => match (&lin[*a], &lin[*b]) {
                (Some((ta, ga)), Some((tb, gb))) => {
                    for j in 0..g.len() {
                        g[j] = scale * (ga[j] - gb[j]);
                    }
                    Some(scale * (ta - tb))
                }
                _ => None,
            },
            Kind::Count => {
                g[0] = 1.0;
                Some(one)
            }
            Kind::Total => {
                let j = idx(&Var::X);
                g[j] = 1.0;
                Some(t(j))
            }
        };
        lin.push(theta.map(|th| (th, g)));
    }
    measures
        .iter()
        .zip(&lin)
        .map(|(m, l)| {
            let (value, g) = l.as_ref()?;
            let var = variance(g, s);
            let se = var.max(0.0).sqrt();
            let proportion = matches!(m.kind, Kind::Share(_) | Kind::Ratio(..));
            let (ci_low, ci_high) = if proportion {
                proportion_interval(*value, se, df, base.n as f64, base.effective, interval)
            } else {
                let q = t_quantile(df);
                (value - q * se, value + q * se)
            };
            let deff = match &m.kind {
                Kind::Share(_) if s.n > 1.0 => {
                    let srs = value * (1.0 - value) / (s.n - 1.0);
                    (srs > 0.0).then(|| var / srs)
                }
                Kind::Mean if s.n > 1.0 && t(0) > 0.0 => {
                    let ex2 = t(idx(&Var::X2)) / t(0);
                    let srs = (ex2 - value * value).max(0.0) / (s.n - 1.0);
                    (srs > 0.0).then(|| var / srs)
                }
                _ => None,
            };
            Some(Estimate { value: *value, se, df, ci_low, ci_high, deff })
        })
        .collect()
}

/// θ = a / b with ∂θ/∂a = 1/b and ∂θ/∂b = −θ/b; none when b is zero.
fn ratio(a: f64, b: f64, ja: usize, jb: usize, g: &mut [f64]) -> Option<f64> {
    if b == 0.0 {
        return None;
    }
    let theta = a / b;
    g[ja] += 1.0 / b;
    g[jb] -= theta / b;
    Some(theta)
}

/// The linearised variance of Σⱼ gⱼ Tⱼ.
fn variance(g: &[f64], s: &Sums) -> f64 {
    if !s.psus.is_empty() {
        let mut by_stratum: HashMap<&str, Vec<f64>> = HashMap::new();
        for (h, totals) in &s.psus {
            let u: f64 = g.iter().zip(totals).map(|(gj, tj)| gj * tj).sum();
            by_stratum.entry(h.as_str()).or_default().push(u);
        }
        let mut strata: Vec<_> = by_stratum.into_iter().collect();
        strata.sort_by(|a, b| a.0.cmp(b.0));
        return strata
            .iter()
            .filter(|(_, us)| us.len() > 1) // a stratum with one PSU adds nothing (and no df)
            .map(|(_, us)| {
                let nh = us.len() as f64;
                let mean = us.iter().sum::<f64>() / nh;
                nh / (nh - 1.0) * us.iter().map(|u| (u - mean).powi(2)).sum::<f64>()
            })
            .sum();
    }
    let n = s.n;
    if n < 2.0 {
        return 0.0;
    }
    let mut sum_u2 = 0.0;
    for j in 0..g.len() {
        for k in j..g.len() {
            if g[j] == 0.0 || g[k] == 0.0 {
                continue;
            }
            let m = s.moments.get(&(j, k)).copied().unwrap_or(0.0);
            sum_u2 += if j == k { g[j] * g[j] * m } else { 2.0 * g[j] * g[k] * m };
        }
    }
    let sum_u: f64 = g.iter().zip(&s.totals).map(|(gj, tj)| gj * tj).sum();
    n / (n - 1.0) * (sum_u2 - sum_u * sum_u / n)
}

/// The 97.5% quantile of Student's t with `df` degrees of freedom (normal when df is huge).
pub fn t_quantile(df: f64) -> f64 {
    if df > 1e7 || !df.is_finite() {
        return Normal::standard().inverse_cdf(0.975);
    }
    StudentsT::new(0.0, 1.0, df.max(1.0)).map(|t| t.inverse_cdf(0.975)).unwrap_or(1.959963984540054)
}

/// The 95% interval of a proportion.
pub fn proportion_interval(p: f64, se: f64, df: f64, n: f64, n_eff: f64, how: Interval) -> (f64, f64) {
    let q = t_quantile(df);
    match how {
        Interval::Logit => {
            if p <= 0.0 || p >= 1.0 || se == 0.0 {
                return (p, p);
            }
            let l = (p / (1.0 - p)).ln();
            let half = q * se / (p * (1.0 - p));
            (logistic(l - half), logistic(l + half))
        }
        Interval::Wilson => {
            if n_eff <= 0.0 {
                return (p, p);
            }
            let z2 = q * q;
            let denom = 1.0 + z2 / n_eff;
            let centre = (p + z2 / (2.0 * n_eff)) / denom;
            let half = q / denom * (p * (1.0 - p) / n_eff + z2 / (4.0 * n_eff * n_eff)).sqrt();
            ((centre - half).max(0.0), (centre + half).min(1.0))
        }
        Interval::KornGraubard => {
            // As R's svyciprop(method = "beta"): effective n from the variance, adjusted for the
            // design's degrees of freedom, then Clopper–Pearson on it.
            let mut n_star = if se > 0.0 { p * (1.0 - p) / (se * se) } else { n };
            if n > 1.0 {
                n_star *= (t_quantile(n - 1.0) / q).powi(2);
            }
            let x = p * n_star;
            let lo = if x <= 0.0 {
                0.0
            } else {
                Beta::new(x, n_star - x + 1.0).map(|b| b.inverse_cdf(0.025)).unwrap_or(0.0)
            };
            let hi = if x >= n_star {
                1.0
            } else {
                Beta::new(x + 1.0, n_star - x).map(|b| b.inverse_cdf(0.975)).unwrap_or(1.0)
            };
            (lo, hi)
        }
    }
}

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_tables() {
        // t(0.975; 31) = 2.039513 (any table); t(0.975; ∞) = 1.959964.
        assert!((t_quantile(31.0) - 2.039513).abs() < 1e-6);
        assert!((t_quantile(1e9) - 1.959964).abs() < 1e-6);
    }

    #[test]
    fn wilson_matches_a_hand_computation() {
        // p = 0.5, n = 100, z = 1.96 (df huge): 0.5 ± 1.96/1.0384·sqrt(0.0025 + 0.000096) = [0.4038, 0.5962].
        let (lo, hi) = proportion_interval(0.5, 0.05, 1e9, 100.0, 100.0, Interval::Wilson);
        assert!((lo - 0.403832).abs() < 1e-5 && (hi - 0.596168).abs() < 1e-5, "{lo} {hi}");
    }
}
