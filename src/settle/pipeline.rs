//! The whole path for many claims at once: validate → resolve → one fused engine run → settle.
//!
//! `verify` is this with one claim; `check` with every claim of every transcript. Items are
//! independent until the engine, which fuses all of them per table.

use rayon::prelude::*;
use serde_json::Value;

use crate::catalog::Catalog;
use crate::citation::{self, Citation};
use crate::claim::Claimed;
use crate::engine::{Engine, EngineError, Job, Role, ScanStats};
use crate::extractor::Registry;
use crate::resolve::{self, Resolved};
use crate::settle::compare;
use crate::settle::explain;
use crate::settle::verdict::{Settlement, Verdict};
use crate::stats::{DfRule, Interval, Method};

/// A settlement, with the citation and resolution it came from when it got that far.
type Settled = (Settlement, Option<(Box<Citation>, Box<Resolved>)>);

/// One claim to settle: the citation as found, and the numbers claimed.
#[derive(Debug, Clone)]
pub struct Claim {
    /// The citation Part's data.
    pub citation: Value,
    /// The claimed numbers (from the result it accompanies, or the command line).
    pub numbers: Vec<Claimed>,
}

/// Options that change how claims are settled.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The interval method for proportions.
    pub interval: Interval,
    /// Where a designed estimate's degrees of freedom come from.
    pub df: DfRule,
    /// Look for what a claim not reproduced most likely computed instead.
    pub explain: bool,
}

impl Options {
    /// The estimation method these options ask for.
    pub fn method(&self) -> Method {
        Method { interval: self.interval, df: self.df }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options { interval: Interval::Logit, df: DfRule::Domain, explain: true }
    }
}

/// [`try_settle_all`], for tests and benchmarks: an internal engine failure panics.
pub fn settle_all(
    claims: &[Claim],
    catalog: &Catalog,
    registry: &Registry,
    engine: &Engine,
    opts: Options,
) -> (Vec<Settlement>, ScanStats) {
    try_settle_all(claims, catalog, registry, engine, opts).unwrap_or_else(|e| panic!("{e}"))
}

/// Settles every claim; the settlements come back in input order. A declaration or data file
/// that fails makes its claims UNVERIFIABLE; only an internal engine failure (which leaves no
/// outcome to trust) is an error of the run.
pub fn try_settle_all(
    claims: &[Claim],
    catalog: &Catalog,
    registry: &Registry,
    engine: &Engine,
    opts: Options,
) -> Result<(Vec<Settlement>, ScanStats), EngineError> {
    enum Stage {
        Done(Box<Settlement>),
        Ready(Box<Citation>, Box<Resolved>),
    }
    let staged: Vec<Stage> = claims
        .par_iter()
        .map(|c| match citation::parse(&c.citation) {
            Err(problems) => Stage::Done(Box::new(Settlement::invalid(problems))),
            Ok(cit) => match resolve::resolve(&cit, catalog, registry, engine) {
                Err(why) => Stage::Done(Box::new(Settlement {
                    unknown_names: why.1,
                    ..Settlement::unverifiable(why.0)
                })),
                Ok(r) => Stage::Ready(Box::new(cit), Box::new(r)),
            },
        })
        .collect();
    let mut jobs = Vec::new();
    let mut job_of = vec![None; staged.len()];
    for (i, s) in staged.iter().enumerate() {
        if let Stage::Ready(_, r) = s {
            job_of[i] = Some(jobs.len());
            jobs.push(Job { rows: r.rows.clone(), measures: r.measures.clone(), cells: r.cells.clone() });
        }
    }
    let (outcomes, mut stats) = engine.run(&jobs);
    if let Some(Err(e)) = outcomes.iter().find(|o| matches!(o, Err(EngineError::Internal(_)))) {
        return Err(e.clone());
    }
    let mut settled: Vec<Settled> = staged
        .into_iter()
        .zip(claims)
        .zip(job_of)
        .map(|((s, claim), j)| match (s, j) {
            (Stage::Done(s), _) => (*s, None),
            (Stage::Ready(cit, r), Some(j)) => match &outcomes[j] {
                Ok(out) => (compare::settle(&cit, &r, out, &claim.numbers, opts.method()), Some((cit, r))),
                Err(e) => (Settlement::unverifiable(vec![engine_reason(e, &r)]), None),
            },
            (Stage::Ready(..), None) => (Settlement::unverifiable(vec!["internal: no job".into()]), None),
        })
        .collect();
    if opts.explain {
        stats.explanation_scans = explain_all(&mut settled, catalog, registry, engine, opts.method())?;
    }
    Ok((settled.into_iter().map(|(s, _)| s).collect(), stats))
}

/// An engine error as a claim's reason, naming the declaration by its catalog name.
fn engine_reason(e: &EngineError, r: &Resolved) -> String {
    match e {
        EngineError::Filter { role: Role::Period, .. } => {
            format!("period {:?} of study {:?}: {e}", r.period, r.study)
        }
        EngineError::Filter { role: Role::Base, .. } => {
            format!("base {:?} of study {:?}: {e}", r.base, r.study)
        }
        EngineError::Filter { .. } | EngineError::Weight { .. } => {
            format!("study {:?}, table {:?}: {e}", r.study, r.rows.table)
        }
        EngineError::Table { .. } => format!("table {:?}: {e}", r.rows.table),
        EngineError::Internal(_) => e.to_string(),
    }
}

/// Computes every variant of every claim not reproduced in one more fused run, and attaches
/// the explanations. Returns the scans it took.
fn explain_all(
    settled: &mut [Settled],
    catalog: &Catalog,
    registry: &Registry,
    engine: &Engine,
    method: Method,
) -> Result<usize, EngineError> {
    let mut variants = Vec::new();
    for (i, (s, ctx)) in settled.iter().enumerate() {
        if matches!(s.verdict, Verdict::Discrepant | Verdict::BaseMismatch)
            && let Some((_, r)) = ctx
        {
            variants.extend(explain::variants(i, r, catalog, registry));
        }
    }
    let jobs: Vec<Job> = variants.iter().map(|v| v.job.clone()).collect();
    let (outcomes, stats) =
        if jobs.is_empty() { (Vec::new(), ScanStats::default()) } else { engine.run(&jobs) };
    if let Some(Err(e)) = outcomes.iter().find(|o| matches!(o, Err(EngineError::Internal(_)))) {
        return Err(e.clone());
    }
    for (i, (s, ctx)) in settled.iter_mut().enumerate() {
        let Some((cit, _)) = ctx else { continue };
        let tried: Vec<_> = variants
            .iter()
            .zip(&outcomes)
            .filter(|(v, _)| v.claim == i)
            .filter_map(|(v, o)| o.as_ref().ok().map(|o| (v, o)))
            .collect();
        if matches!(s.verdict, Verdict::Discrepant | Verdict::BaseMismatch) {
            // The base n that failed: the citation's, or a result's `n` that differs from it.
            let claimed_n = s.base.as_ref().map_or(cit.base.n, |b| b.claimed_n);
            s.explanations = explain::judge(s, claimed_n, &tried, method);
        }
    }
    Ok(stats.scans)
}
