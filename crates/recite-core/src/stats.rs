//! Sampling error: Taylor linearisation of every measure, and its confidence interval.
//!
//! Every measure is a smooth function θ = f(T₁…Tₖ) of weighted totals Tⱼ = Σ w·zⱼ over the base
//! rows, where zⱼ is 1, an indicator 1\[pred\] or the column x. Its linearised variable is
//! uᵢ = Σⱼ ∂f/∂Tⱼ · wᵢ zᵢⱼ, and:
//!
//! - weights only (each respondent its own PSU, one stratum):
//!   V = n/(n−1) · (Σuᵢ² − (Σuᵢ)²/n), where Σuᵢ² needs the second moments Σ w² zⱼ zₖ, which the
//!   engine computes in the same scan; the base rows are the whole sample, so df = n − 1 with n
//!   the rows of the measure's domain (the base; a conversion's denominator rows);
//! - a declared design (strata h, PSUs c sampled with replacement):
//!   V = Σₕ nₕ/(nₕ−1) Σ꜀ (U_hc − Ūₕ)², with U_hc the PSU totals of u over every PSU of the table
//!   (zero where the domain has no rows), which the engine gets by grouping the same scan by
//!   stratum and PSU; df = the PSUs holding domain rows minus the strata holding them, as R's
//!   `degf(subset(design, …))` ([`DfRule::Domain`]), or every PSU minus every stratum
//!   ([`DfRule::FullDesign`]);
//! - replicate weights (R's `svrepdesign`): V from the replicates' estimates; df = the rank of
//!   the domain's replicate weights − 1 as R's `degf(subset(…))` when the scan computed it
//!   (`engine::gram`), else the catalog's declared df.
//!
//! These are the estimators of R's `survey` package and of samplics (with-replacement, Taylor);
//! `tests/r/oracle.R` checks them against R itself.

use std::collections::HashMap;

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};
use statrs::function::beta::ln_beta;

use crate::extractor::{Kind, Measure};
use crate::scan::{Replication, Sums, Var};

/// How to compute the interval of a proportion.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
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

/// Where a designed estimate's degrees of freedom come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DfRule {
    /// The PSUs holding rows of the measure's domain (Σw > 0) minus the strata holding them, as
    /// R's `degf(subset(design, …))` (the default).
    #[default]
    Domain,
    /// Every PSU of the table minus every stratum, whatever the domain.
    FullDesign,
}

impl Interval {
    /// Every method, in the order `--help` lists them.
    pub const ALL: [Interval; 3] = [Interval::Logit, Interval::Wilson, Interval::KornGraubard];

    /// The method as the command line and the reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            Interval::Logit => "logit",
            Interval::Wilson => "wilson",
            Interval::KornGraubard => "korn-graubard",
        }
    }
}

impl std::str::FromStr for Interval {
    type Err = UnknownName;

    /// A method by its [`name`](Interval::name), whatever its case.
    fn from_str(s: &str) -> Result<Interval, UnknownName> {
        Interval::ALL
            .into_iter()
            .find(|v| v.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownName(s.into()))
    }
}

impl DfRule {
    /// Every rule, in the order `--help` lists them.
    pub const ALL: [DfRule; 2] = [DfRule::Domain, DfRule::FullDesign];

    /// The rule as the command line and the reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            DfRule::Domain => "domain",
            DfRule::FullDesign => "full-design",
        }
    }
}

impl std::str::FromStr for DfRule {
    type Err = UnknownName;

    /// A rule by its [`name`](DfRule::name), whatever its case.
    fn from_str(s: &str) -> Result<DfRule, UnknownName> {
        DfRule::ALL
            .into_iter()
            .find(|v| v.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownName(s.into()))
    }
}

/// A name that is no [`Interval`] or [`DfRule`] (worded as the command line words it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid variant: {0}")]
pub struct UnknownName(pub String);

/// How estimates are computed: the interval of proportions and the degrees of freedom.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Method {
    /// The interval method for proportions.
    pub interval: Interval,
    /// The degrees of freedom with a declared design.
    pub df: DfRule,
}

impl From<Interval> for Method {
    fn from(interval: Interval) -> Method {
        Method { interval, df: DfRule::default() }
    }
}

/// What "the sample" of an estimate is, and so where its degrees of freedom come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Sample {
    /// Weights only: the base rows are the whole sample, each row its own PSU (as R's
    /// `svydesign(ids = ~1, weights = ~w, data = base_rows)`); df = the domain's rows − 1.
    BaseRows,
    /// A declared design over every row of the table, the base a domain of it (R's `subset()`);
    /// df = the PSUs holding domain rows − the strata holding them.
    DesignDomain,
    /// A declared design, df from every PSU and stratum of the table (`--df full-design`).
    FullDesign,
    /// Replicate weights (R's `svrepdesign`): the SE from the replicates; df as the catalog
    /// declares it for the whole design (the base is every row, or the rank was not computed).
    Replicates,
    /// Replicate weights: the SE from the replicates; df = the rank of the domain's replicate
    /// weights − 1, as R's `degf(subset(design, …))` (at least 1).
    ReplicateRank,
}

impl Sample {
    /// In words, for the text report.
    pub fn describe(self) -> &'static str {
        match self {
            Sample::BaseRows => "the base rows are the whole sample (weights only; df = rows − 1)",
            Sample::DesignDomain => "the base is a domain of the design (df = its PSUs − its strata)",
            Sample::FullDesign => "df from every PSU of the design (--df full-design)",
            Sample::Replicates => "SEs from the replicate weights (df as the catalog declares)",
            Sample::ReplicateRank => {
                "SEs from the replicate weights (df = rank of the domain's replicate weights − 1)"
            }
        }
    }
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
    /// Design effect: variance over that of a simple random sample of the same size (drawn
    /// with replacement, as R's `deff = "replace"`).
    pub deff: Option<f64>,
    /// What the sample is, which decides `df`.
    pub sample: Sample,
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
    BaseFacts { n: base_n(s), weighted: w, effective }
}

/// [`BaseFacts::n`] alone (judging a claim's variants reads only it, ~60 times a claim).
pub fn base_n(s: &Sums) -> u64 {
    s.n.round() as u64
}

/// The degrees of freedom of the design over its whole table: #PSUs − #strata, or n − 1.
pub fn degrees_of_freedom(s: &Sums) -> f64 {
    domain_df(s, 0, true)
}

/// The degrees of freedom for the domain of variable `j` (0: the base rows): with a design the
/// PSUs whose total of w·zⱼ is positive minus their strata (or every PSU and stratum of the
/// table); weights only, the domain's unweighted rows − 1. At least 1.
fn domain_df(s: &Sums, j: usize, every_psu: bool) -> f64 {
    if s.psus.is_empty() {
        let n = if j == 0 { s.n } else { s.counts.get(j).copied().unwrap_or(s.n) };
        return (n - 1.0).max(1.0);
    }
    let held: Vec<&str> = s
        .psus
        .iter()
        .filter(|(_, t)| every_psu || t.get(j).is_some_and(|&v| v > 0.0))
        .map(|(h, _)| h.as_str())
        .collect();
    let mut strata = held.clone();
    strata.sort_unstable();
    strata.dedup();
    ((held.len() - strata.len()) as f64).max(1.0)
}

/// Estimates every measure, each with its linearised SE and 95% interval.
pub fn estimate(
    measures: &[Measure],
    vars: &[Var],
    s: &Sums,
    method: impl Into<Method>,
) -> Vec<Option<Estimate>> {
    let method = method.into();
    let idx = |v: &Var| vars.iter().position(|x| x == v).expect("vars_for covers every measure");
    let t = |j: usize| s.totals.get(j).copied().unwrap_or(0.0);
    let base = base_facts(s);
    let sample = match (&s.replicates, s.psus.is_empty(), method.df) {
        (Some(_), ..) => Sample::Replicates,
        (None, true, _) => Sample::BaseRows,
        (None, false, DfRule::Domain) => Sample::DesignDomain,
        (None, false, DfRule::FullDesign) => Sample::FullDesign,
    };
    // The rows a measure's interval is about: the base, or a conversion's denominator rows.
    let domain_of = |m: &Measure| match &m.kind {
        Kind::Ratio(_, b) => idx(&Var::Ind(b.clone())),
        _ => 0,
    };
    let df_of = |j: usize| match &s.replicates {
        Some(r) => replicate_df(r, j),
        None => domain_df(s, j, sample == Sample::FullDesign),
    };
    let lin = linearise(measures, vars, &s.totals);
    // Each replicate's estimate of every measure.
    let replicated: Option<(&Replication, Vec<Vec<Option<f64>>>)> = s.replicates.as_ref().map(|r| {
        let thetas = r
            .totals
            .iter()
            .map(|t| linearise(measures, vars, t).into_iter().map(|l| l.map(|(th, _)| th)).collect())
            .collect();
        (&r.spec, thetas)
    });
    measures
        .iter()
        .zip(&lin)
        .enumerate()
        .map(|(i, (m, l))| {
            let (value, g) = l.as_ref()?;
            let var = match &replicated {
                Some((spec, thetas)) => replicate_variance(spec, thetas.iter().map(|t| t[i]), *value)?,
                None => variance(g, s),
            };
            let se = var.max(0.0).sqrt();
            let proportion = matches!(m.kind, Kind::Share(_) | Kind::Ratio(..));
            let j = domain_of(m);
            let df = df_of(j);
            // The domain's unweighted rows and Kish effective base (Korn–Graubard, Wilson).
            let (n, n_eff) = if j == 0 {
                (s.n, base.effective)
            } else {
                let n = s.counts.get(j).copied().unwrap_or(s.n);
                let w2 = s.moments.get(&(j, j)).copied().unwrap_or(0.0);
                (n, if w2 > 0.0 { t(j) * t(j) / w2 } else { n })
            };
            let logit_replicated = match &replicated {
                Some((spec, thetas)) if proportion && method.interval == Interval::Logit => {
                    replicate_logit_interval(spec, thetas.iter().map(|t| t[i]), *value, df)
                }
                _ => None,
            };
            let (ci_low, ci_high) = if let Some(ci) = logit_replicated {
                ci
            } else if proportion {
                proportion_interval(*value, se, df, n, n_eff, method.interval)
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
                    // A column constant over the domain has no spread (only rounding's).
                    let spread = ex2 - value * value;
                    let srs = spread / (s.n - 1.0);
                    (spread > 1e-12 * ex2.abs()).then(|| var / srs)
                }
                _ => None,
            };
            // With replicates, whether this measure's df came from a rank.
            let sample = match &s.replicates {
                Some(r)
                    if r.ranks.as_ref().is_some_and(|ranks| ranks.get(j).is_some_and(Option::is_some)) =>
                {
                    Sample::ReplicateRank
                }
                _ => sample,
            };
            Some(Estimate { value: *value, se, df, ci_low, ci_high, deff, sample })
        })
        .collect()
}

/// Every measure's estimate θ and its gradient over the variables, from the totals Tⱼ.
/// The values of [`estimate`] alone, without their variances and intervals: `None` exactly
/// where [`estimate`] gives none.
pub fn values(measures: &[Measure], vars: &[Var], s: &Sums, method: impl Into<Method>) -> Vec<Option<f64>> {
    // With replicate weights an estimate can also fail on its replicates: estimated whole.
    if s.replicates.is_some() {
        return estimate(measures, vars, s, method).into_iter().map(|e| e.map(|e| e.value)).collect();
    }
    linearise(measures, vars, &s.totals).into_iter().map(|l| l.map(|(value, _)| value)).collect()
}

fn linearise(measures: &[Measure], vars: &[Var], totals: &[f64]) -> Vec<Option<(f64, Vec<f64>)>> {
    let idx = |v: &Var| vars.iter().position(|x| x == v).expect("vars_for covers every measure");
    let t = |j: usize| totals.get(j).copied().unwrap_or(0.0);
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
    lin
}

/// The df of variable `j`'s domain with replicate weights: its rank − 1 (at least 1) when the
/// scan computed it; else the declared df, or the replicates − 1.
fn replicate_df(r: &crate::scan::Replicated, j: usize) -> f64 {
    match r.ranks.as_ref().and_then(|ranks| ranks.get(j).copied().flatten()) {
        Some(rank) => (rank as f64 - 1.0).max(1.0),
        None => r.spec.df.unwrap_or(r.spec.columns.len() as f64 - 1.0),
    }
}

/// The logit interval of a proportion with replicate weights, as R's `svyciprop(method =
/// "logit")` on a replicate design: the SE of logit θ over the replicates (R refits the logistic
/// model on each), not the transformed SE of θ. None when θ or a replicate's θ is 0 or 1.
fn replicate_logit_interval(
    spec: &Replication,
    thetas: impl Iterator<Item = Option<f64>>,
    p: f64,
    df: f64,
) -> Option<(f64, f64)> {
    let inner = |p: f64| p > 0.0 && p < 1.0;
    let logit = |p: f64| (p / (1.0 - p)).ln();
    if !inner(p) {
        return None;
    }
    let v = replicate_variance(spec, thetas.map(|t| t.filter(|&t| inner(t)).map(logit)), logit(p))?;
    let half = t_quantile(df) * v.max(0.0).sqrt();
    Some((logistic(logit(p) - half), logistic(logit(p) + half)))
}

/// A measure's variance from its replicate estimates, as R's `svrVar`:
/// scale · Σᵣ rscaleᵣ (θᵣ − c)², c the replicates' mean (or θ̂ with mse). None when a replicate
/// has no estimate (a zero denominator).
fn replicate_variance(
    spec: &Replication,
    thetas: impl Iterator<Item = Option<f64>>,
    full: f64,
) -> Option<f64> {
    let thetas: Vec<f64> = thetas.collect::<Option<_>>()?;
    if thetas.is_empty() {
        return None;
    }
    let centre = if spec.mse { full } else { thetas.iter().sum::<f64>() / thetas.len() as f64 };
    Some(spec.scale * thetas.iter().zip(&spec.rscales).map(|(t, r)| r * (t - centre).powi(2)).sum::<f64>())
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

/// Most degrees of freedom whose quantile [`t_quantile`] remembers.
const T_QUANTILES_KEPT: usize = 1 << 16;

/// The 97.5% quantile of Student's t with `df` degrees of freedom (normal when df is huge).
/// Remembered per `df`: solving it takes O(√df) steps of a continued fraction per Newton step,
/// and a batch asks for the same df over and over (every weight and the unweighted variant of
/// a claim share its rows, so its n). The same bits come back either way.
pub fn t_quantile(df: f64) -> f64 {
    use std::sync::{OnceLock, PoisonError, RwLock};
    static KEPT: OnceLock<RwLock<HashMap<u64, f64>>> = OnceLock::new();
    let kept = KEPT.get_or_init(RwLock::default);
    if let Some(q) = kept.read().unwrap_or_else(PoisonError::into_inner).get(&df.to_bits()) {
        return *q;
    }
    let q = solve_t_quantile(df);
    let mut kept = kept.write().unwrap_or_else(PoisonError::into_inner);
    if kept.len() < T_QUANTILES_KEPT {
        kept.insert(df.to_bits(), q);
    }
    q
}

/// [`t_quantile`], solved.
fn solve_t_quantile(df: f64) -> f64 {
    if df > 1e7 || !df.is_finite() {
        return Normal::standard().inverse_cdf(0.975);
    }
    // P(|T| > t) = 0.05 ⇔ z = t²/(ν + t²) has I_z(½, ν/2) = 0.95; z is small for large ν, so
    // solving for z rather than 1 − z keeps its digits.
    let nu = df.max(1.0);
    let z = beta_quantile(0.5, nu / 2.0, 0.95);
    if z.is_finite() && z > 0.0 && z < 1.0 { (nu * z / (1.0 - z)).sqrt() } else { 1.959963984540054 }
}

/// The regularised incomplete beta function I_x(a, b), by its continued fraction (modified
/// Lentz), iterated to convergence: statrs' `beta_reg` stops after 140 terms, too few for the
/// large a, b of a big effective base, and its inverse loops forever on some of them. NaN when
/// the fraction does not converge.
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = a * x.ln() + b * (-x).ln_1p() - ln_beta(a, b);
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of I_x(a, b) (Numerical Recipes' `betacf`); it converges in
/// O(√max(a, b)) terms where x < (a + 1)/(a + b + 2).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let nonzero = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / nonzero(1.0 - qab * x / qap);
    let mut h = d;
    for m in 1..=1_000_000 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / nonzero(1.0 + aa * d);
        c = nonzero(1.0 + aa / c);
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / nonzero(1.0 + aa * d);
        c = nonzero(1.0 + aa / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-16 {
            return h;
        }
    }
    f64::NAN
}

/// The p-quantile of Beta(a, b), as R's `qbeta`: Newton's method on I_x(a, b) = p, kept inside a
/// bracket that bisection narrows whenever a step would leave it. NaN when it cannot be computed.
fn beta_quantile(a: f64, b: f64, p: f64) -> f64 {
    if !(a > 0.0 && b > 0.0 && (0.0..=1.0).contains(&p)) {
        return f64::NAN;
    }
    if p == 0.0 || p == 1.0 {
        return p;
    }
    let ln_b = ln_beta(a, b);
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    let mut x = a / (a + b);
    for _ in 0..2000 {
        let f = incomplete_beta(a, b, x) - p;
        if f.is_nan() {
            return f64::NAN;
        }
        if f == 0.0 {
            return x;
        }
        if f < 0.0 {
            lo = x
        } else {
            hi = x
        }
        let density = ((a - 1.0) * x.ln() + (b - 1.0) * (-x).ln_1p() - ln_b).exp();
        let mut next = x - f / density;
        if !(next > lo && next < hi) {
            next = 0.5 * (lo + hi);
        }
        if (next - x).abs() <= 4.0 * f64::EPSILON * next || hi - lo <= 4.0 * f64::EPSILON * hi {
            return next;
        }
        x = next;
    }
    f64::NAN
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
            // A quantile that cannot be computed widens the interval to its bound.
            let lo = if x <= 0.0 { 0.0 } else { beta_quantile(x, n_star - x + 1.0, 0.025) };
            let hi = if x >= n_star { 1.0 } else { beta_quantile(x + 1.0, n_star - x, 0.975) };
            (if lo.is_nan() { 0.0 } else { lo }, if hi.is_nan() { 1.0 } else { hi })
        }
    }
}

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extractor::Pred;
    use crate::extractor::{Clause, Op};
    use crate::scan::vars_for;

    #[test]
    fn t_quantiles_match_tables() {
        // t(0.975; 31) = 2.039513 (any table); t(0.975; ∞) = 1.959964.
        assert!((t_quantile(31.0) - 2.039513).abs() < 1e-6);
        assert!((t_quantile(1e9) - 1.959964).abs() < 1e-6);
        // R: qt(0.975, c(1, 2, 5, 1000, 1e6)).
        let r = [
            (1.0, 12.706204736174694),
            (2.0, 4.302652729749462),
            (5.0, 2.5705818356363137),
            (1000.0, 1.9623390808264076),
            (1e6, 1.9599663568141066),
        ];
        for (df, q) in r {
            assert!((t_quantile(df) / q - 1.0).abs() < 1e-9, "t({df}): {} vs R {q}", t_quantile(df));
        }
    }

    #[test]
    fn beta_quantiles_match_r_qbeta_for_small_and_large_parameters() {
        // R: qbeta(0.025, a, b) and qbeta(0.975, 1e-3, 2).
        let r = [
            (0.3, 10.0, 0.025, 3.2998797768809534e-07),
            (5.0, 7.5, 0.025, 0.15917205416118133),
            (1234.5, 40000.0, 0.025, 0.02831537699189966),
            (2e5, 3e6, 0.025, 0.062235043734527644),
            (1e-3, 2.0, 0.975, 3.7199595648382005e-12),
        ];
        for (a, b, p, q) in r {
            let got = beta_quantile(a, b, p);
            assert!((got / q - 1.0).abs() < 1e-10, "qbeta({p}, {a}, {b}): {got} vs R {q}");
        }
    }

    #[test]
    fn a_conversion_takes_the_df_of_its_denominator_domain() {
        // Two strata of two PSUs; the base touches all four PSUs, the denominator (x ≥ 2) only
        // stratum "1" and one PSU of "2": R's degf(subset(...)) = 3 PSUs − 2 strata = 1 for the
        // conversion, 4 − 2 = 2 for the share.
        let (ge1, ge2) = (Pred(vec![Clause::Cmp(Op::Ge, 1.0)]), Pred(vec![Clause::Cmp(Op::Ge, 2.0)]));
        let measures = vec![
            Measure { name: "Aware".into(), aliases: vec![], kind: Kind::Share(ge1.clone()) },
            Measure { name: "Aware → Familiar".into(), aliases: vec![], kind: Kind::Ratio(ge2, ge1) },
        ];
        let vars = vars_for(&measures);
        let j = |v: &Var| vars.iter().position(|x| x == v).unwrap();
        let (jb, ja) = (
            j(&Var::Ind(Pred(vec![Clause::Cmp(Op::Ge, 1.0)]))),
            j(&Var::Ind(Pred(vec![Clause::Cmp(Op::Ge, 2.0)]))),
        );
        let psu = |h: &str, one: f64, b: f64, a: f64| {
            let mut t = vec![0.0; vars.len()];
            (t[0], t[jb], t[ja]) = (one, b, a);
            (h.to_string(), t)
        };
        let psus = vec![
            psu("1", 3.0, 2.0, 1.0),
            psu("1", 2.0, 2.0, 2.0),
            psu("2", 2.0, 1.0, 1.0),
            psu("2", 1.0, 0.0, 0.0),
        ];
        let mut totals = vec![0.0; vars.len()];
        for (_, t) in &psus {
            totals.iter_mut().zip(t).for_each(|(s, v)| *s += v);
        }
        let s = Sums {
            n: 8.0,
            counts: vec![8.0; vars.len()],
            totals,
            moments: HashMap::new(),
            psus,
            replicates: None,
        };
        let e = estimate(&measures, &vars, &s, Interval::Logit);
        assert_eq!((e[0].unwrap().df, e[1].unwrap().df), (2.0, 1.0));
        let full =
            estimate(&measures, &vars, &s, Method { interval: Interval::Logit, df: DfRule::FullDesign });
        assert_eq!((full[0].unwrap().df, full[1].unwrap().df), (2.0, 2.0));
        // Weights only: the denominator's unweighted rows − 1.
        let w = Sums { psus: vec![], counts: vec![8.0, 6.0, 5.0], ..s };
        let e = estimate(&measures, &vars, &w, Interval::Logit);
        assert_eq!(e[1].unwrap().df, w.counts[jb] - 1.0);
    }

    #[test]
    fn wilson_matches_a_hand_computation() {
        // p = 0.5, n = 100, z = 1.96 (df huge): 0.5 ± 1.96/1.0384·sqrt(0.0025 + 0.000096) = [0.4038, 0.5962].
        let (lo, hi) = proportion_interval(0.5, 0.05, 1e9, 100.0, 100.0, Interval::Wilson);
        assert!((lo - 0.403832).abs() < 1e-5 && (hi - 0.596168).abs() < 1e-5, "{lo} {hi}");
    }
}
