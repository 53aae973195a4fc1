//! Claims held in memory, settled in one [`Session`]: validate → resolve → one fused engine run
//! → settle → explain. `verify` is this with one claim; `check` drives a session itself, to
//! stream its inputs past it.

use rayon::prelude::*;
use serde_json::Value;

use crate::catalog::Catalog;
use crate::citation;
use crate::claim::Claimed;
use crate::extractor::Registry;
use crate::scan::{EngineError, Scan, ScanStats};
pub use crate::settle::session::Options;
use crate::settle::session::{Jobs, Session, Wrong};
use crate::settle::verdict::Settlement;

/// One claim to settle: the citation as found, and the numbers claimed.
#[derive(Debug, Clone)]
pub struct Claim {
    /// The citation Part's data.
    pub citation: Value,
    /// The claimed numbers (from the result it accompanies, or the command line).
    pub numbers: Vec<Claimed>,
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

/// Settles every claim in one session; the settlements come back in input order. A
/// declaration or data file that fails makes its claims UNVERIFIABLE; only an internal engine
/// failure (which leaves no outcome to trust) is an error of the run.
pub fn try_settle_all(
    claims: &[Claim],
    catalog: &Catalog,
    registry: &Registry,
    engine: &dyn Scan,
    opts: Options,
) -> Result<(Vec<Settlement>, ScanStats), EngineError> {
    let mut session = Session::new(catalog, registry, engine, opts);
    let parsed: Vec<_> = claims.par_iter().map(|c| citation::parse(&c.citation)).collect();
    let resolved: Vec<_> =
        parsed.par_iter().filter_map(|p| Some(session.resolution(p.as_ref().ok()?))).collect();
    let mut jobs = Jobs::new();
    resolved.iter().for_each(|r| session.want(r, &mut jobs));
    drop(resolved);
    session.run(jobs)?;
    let settle = |session: &Session<'_>| -> Vec<_> {
        parsed
            .par_iter()
            .zip(claims)
            .map(|(p, c)| match p {
                Err(problems) => (Settlement::invalid(problems.clone()), None),
                Ok(cit) => session.settle(cit, &c.numbers),
            })
            .collect()
    };
    let mut settled = settle(&session);
    if opts.explain {
        let mut wrong = Wrong::new();
        for res in settled.iter().filter_map(|(_, r)| r.clone()) {
            wrong.entry(res.key().clone()).or_insert(res);
        }
        let any = !wrong.is_empty();
        session.explain(wrong)?;
        if any {
            settled = settle(&session);
        }
    }
    let stats = session.stats().clone();
    Ok((settled.into_iter().map(|(s, _)| s).collect(), stats))
}
