//! The whole path for many claims at once: validate → resolve → one fused engine run → settle.
//!
//! `verify` is this with one claim; `check` with every claim of every transcript. Items are
//! independent until the engine, which fuses all of them per table.

use std::collections::HashMap;

use rayon::prelude::*;
use serde_json::Value;

use crate::catalog::Catalog;
use crate::citation::{self, Citation};
use crate::claim::Claimed;
use crate::extractor::Registry;
use crate::resolve::{self, Resolved};
use crate::scan::{EngineError, Job, Role, Scan, ScanStats};
use crate::settle::compare;
use crate::settle::explain;
use crate::settle::verdict::{Explanation, Settlement, Verdict};
use crate::stats::{DfRule, Estimate, Interval, Method};

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
    engine: &dyn Scan,
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
    engine: &dyn Scan,
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
pub(crate) fn engine_reason(e: &EngineError, r: &Resolved) -> String {
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
        EngineError::Internal(_) | EngineError::Cluster(_) => e.to_string(),
    }
}

/// Claims whose variants are generated, run and judged at a time: variants are made twice (to
/// collect the distinct jobs, then to judge them) so that no more than one chunk's variants are
/// held at once.
const EXPLAIN_CHUNK: usize = 2048;

/// Computes every variant of every claim not reproduced in one more fused run, and attaches
/// the explanations. Returns the scans it took.
///
/// Variants of different claims coincide (the same column, period, base and weight under
/// another claim's mistake), so only the distinct variant jobs are run: their number is bounded
/// by the data layer (columns × periods × bases × weights × extractors), not by the claims, and
/// so are the run's time and memory. An outcome depends only on its job, so sharing it changes
/// no explanation.
fn explain_all(
    settled: &mut [Settled],
    catalog: &Catalog,
    registry: &Registry,
    engine: &dyn Scan,
    method: Method,
) -> Result<usize, EngineError> {
    let wrong: Vec<usize> = settled
        .iter()
        .enumerate()
        .filter(|(_, (s, ctx))| {
            matches!(s.verdict, Verdict::Discrepant | Verdict::BaseMismatch) && ctx.is_some()
        })
        .map(|(i, _)| i)
        .collect();
    let resolved = |i: usize| settled[i].1.as_ref().map(|(_, r)| &**r);
    // Per wrong claim, the distinct job each of its variants is.
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut jobs: Vec<Job> = Vec::new();
    let mut job_of: Vec<Vec<usize>> = Vec::with_capacity(wrong.len());
    for chunk in wrong.chunks(EXPLAIN_CHUNK) {
        let made: Vec<Vec<(String, Job)>> = chunk
            .par_iter()
            .map(|&i| {
                let Some(r) = resolved(i) else { return Vec::new() };
                explain::variants(i, r, catalog, registry)
                    .into_iter()
                    .map(|v| (job_key(&v.job), v.job))
                    .collect()
            })
            .collect();
        for variants in made {
            let at = variants
                .into_iter()
                .map(|(key, job)| {
                    *index.entry(key).or_insert_with(|| {
                        jobs.push(job);
                        jobs.len() - 1
                    })
                })
                .collect();
            job_of.push(at);
        }
    }
    drop(index);
    let (outcomes, stats) =
        if jobs.is_empty() { (Vec::new(), ScanStats::default()) } else { engine.run(&jobs) };
    if let Some(Err(e)) = outcomes.iter().find(|o| matches!(o, Err(EngineError::Internal(_)))) {
        return Err(e.clone());
    }
    // Each distinct variant estimated once, however many claims it explains.
    let estimates: Vec<Vec<Option<Estimate>>> = jobs
        .par_iter()
        .zip(&outcomes)
        .map(|(job, o)| o.as_ref().map(|o| explain::estimates(job, o, method)).unwrap_or_default())
        .collect();
    drop(jobs);
    for (chunk, at) in wrong.chunks(EXPLAIN_CHUNK).zip(job_of.chunks(EXPLAIN_CHUNK)) {
        let explained: Vec<(Vec<Explanation>, Vec<String>)> = chunk
            .par_iter()
            .zip(at)
            .map(|(&i, at)| {
                let (s, ctx) = &settled[i];
                let Some((cit, r)) = ctx else { return (Vec::new(), Vec::new()) };
                // The same variants, in the same order, as when their jobs were collected.
                let variants = explain::variants(i, r, catalog, registry);
                let tried: Vec<explain::Tried> = variants
                    .iter()
                    .zip(at)
                    .filter_map(|(v, &j)| Some((v, outcomes[j].as_ref().ok()?, estimates[j].as_slice())))
                    .collect();
                // The base n that failed: the citation's, or a result's `n` that differs from it.
                let claimed_n = s.base.as_ref().map_or(cit.base.n, |b| b.claimed_n);
                // In the order `check` writes them.
                let notes: Vec<String> = explain::cluster_note(at.iter().map(|&j| &outcomes[j]))
                    .into_iter()
                    .chain(explain::limits_note(r, catalog))
                    .collect();
                (explain::judge(s, claimed_n, &tried), notes)
            })
            .collect();
        for (&i, (e, note)) in chunk.iter().zip(explained) {
            settled[i].0.explanations = e;
            settled[i].0.notes.extend(note);
        }
    }
    Ok(stats.scans)
}

/// What makes two variant jobs the same computation: every field of the job, as written out
/// (floats in `Debug` round-trip exactly).
fn job_key(job: &Job) -> String {
    format!("{job:?}")
}
