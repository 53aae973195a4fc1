//! The whole path for many claims at once: validate → resolve → one fused engine run → settle.
//!
//! `verify` is this with one claim; `check` with every claim of every transcript. Items are
//! independent until the engine, which fuses all of them per table.

use rayon::prelude::*;
use serde_json::Value;

use crate::catalog::Catalog;
use crate::citation::{self, Citation};
use crate::claim::Claimed;
use crate::compare::{self, Settlement};
use crate::engine::{Engine, Job, ScanStats};
use crate::extractor::Registry;
use crate::resolve::{self, Resolved};
use crate::stats::Interval;

/// One claim to settle: the citation as found, and the numbers claimed.
#[derive(Debug, Clone)]
pub struct Claim {
    /// The citation Part's data.
    pub citation: Value,
    /// The claimed numbers (from the result it accompanies, or the command line).
    pub numbers: Vec<Claimed>,
}

/// Options that change how claims are settled.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// The interval method for proportions.
    pub interval: Interval,
}

/// Settles every claim; the settlements come back in input order.
pub fn settle_all(
    claims: &[Claim],
    catalog: &Catalog,
    registry: &Registry,
    engine: &Engine,
    opts: Options,
) -> (Vec<Settlement>, ScanStats) {
    enum Stage {
        Done(Box<Settlement>),
        Ready(Box<Citation>, Box<Resolved>),
    }
    let staged: Vec<Stage> = claims
        .par_iter()
        .map(|c| match citation::parse(&c.citation) {
            Err(problems) => Stage::Done(Box::new(Settlement::invalid(problems))),
            Ok(cit) => match resolve::resolve(&cit, catalog, registry, engine) {
                Err(why) => Stage::Done(Box::new(Settlement::unverifiable(why.0))),
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
    let (outcomes, stats) = engine.run(&jobs);
    let settlements = staged
        .into_iter()
        .zip(claims)
        .zip(job_of)
        .map(|((s, claim), j)| match (s, j) {
            (Stage::Done(s), _) => *s,
            (Stage::Ready(cit, r), Some(j)) => match &outcomes[j] {
                Ok(out) => compare::settle(&cit, &r, out, &claim.numbers, opts.interval),
                Err(e) => Settlement::unverifiable(vec![e.clone()]),
            },
            (Stage::Ready(..), None) => Settlement::unverifiable(vec!["internal: no job".into()]),
        })
        .collect();
    (settlements, stats)
}
