//! One settlement session: the path parse → resolve → run → settle → explain, shared by
//! `verify` (a session of one claim, [`super::pipeline`]) and `check` (every claim of every
//! input, [`crate::check`]).
//!
//! A session remembers each distinct resolution (by what a citation names) and the sums of each
//! distinct job (by [`JobKey`]), so claims that name the same things are resolved once and
//! claims on the same rows and measures share one job, its sums and its estimates. It runs in
//! two steps the caller drives, so a caller can stream its claims past it more than once:
//!
//! 1. [`Session::run`]: the jobs the caller collected ([`Session::want`]), in one fused run;
//! 2. [`Session::explain`] (when explaining): the variants of every distinct resolution with a
//!    claim not reproduced ([`Session::settle`] hands it back), in one more fused run.
//!
//! After the second step [`Session::settle`] explains what it does not reproduce.
//!
//! With [`Options::series`] on, each claim's job is also wanted on every period of its study
//! (the nearest [`MAX_SERIES_PERIODS`]), in the first run: ordinary jobs, shared like any other
//! (the cited period's is the claim's own), from which [`Session::settle`] makes the claim's
//! [`Series`] (the HTML report's chart).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};

use rayon::prelude::*;

use crate::catalog::Catalog;
use crate::citation::Citation;
use crate::claim::{Claimed, DecimalMark};
use crate::extractor::{Measure, Registry};
use crate::resolve::{self, Resolved};
use crate::scan::key::Canonical;
use crate::scan::{EngineError, Job, JobKey, Outcome, Reading, Role, Scan, ScanStats};
use crate::settle::verdict::{Rerun, Series, SeriesPoint, Settlement, Verdict};
use crate::settle::{compare, explain};
use crate::stats::{self, DfRule, Estimate, Interval, Method};

/// Options that change how claims are settled.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The interval method for proportions.
    pub interval: Interval,
    /// Where a designed estimate's degrees of freedom come from.
    pub df: DfRule,
    /// Look for what a claim not reproduced most likely computed instead.
    pub explain: bool,
    /// Recompute each claimed measure on every period of the claim's study
    /// ([`Settlement::series`]), in the same run as the claims: more rows read, no extra scan.
    pub series: bool,
    /// The decimal mark of numbers written as strings in results (and on the command line)
    /// where their text leaves it open (`"4.595"`): the dot, as programs write, unless declared.
    pub decimal_mark: DecimalMark,
}

impl Options {
    /// The estimation method these options ask for.
    pub fn method(&self) -> Method {
        Method { interval: self.interval, df: self.df }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            interval: Interval::Logit,
            df: DfRule::Domain,
            explain: true,
            series: false,
            decimal_mark: DecimalMark::Dot,
        }
    }
}

/// Distinct jobs by key, in key order (so a run does not depend on the order or chunking of
/// the claims that asked for them).
pub type Jobs = BTreeMap<JobKey, Job>;

/// Distinct resolutions with a claim not reproduced, by [`Resolution::key`], in key order.
pub type Wrong = BTreeMap<ResolutionKey, Arc<Resolution>>;

/// One wrong claim's resolution and its variants as planned, each with its key
/// ([`explain::Planned::key`]).
type Planned<'a> = (ResolutionKey, Vec<(Canonical, explain::Planned<'a>)>);

/// What makes two resolutions the same: the canonical form of everything resolved.
pub type ResolutionKey = Canonical;

/// One job's sums, and the estimates of its measures from them: computed by the first claim
/// (or variant) that needs them, once however many share the job.
struct Summed {
    outcome: Result<Outcome, EngineError>,
    measures: Vec<Measure>,
    estimates: OnceLock<Vec<Option<Estimate>>>,
    /// The estimates' values alone: all a variant's explaining reads.
    values: OnceLock<Vec<Option<f64>>>,
}

impl Summed {
    fn estimates(&self, method: Method) -> &[Option<Estimate>] {
        self.estimates.get_or_init(|| match &self.outcome {
            Ok(o) => stats::estimate(&self.measures, &o.vars, &o.sums, method),
            Err(_) => Vec::new(),
        })
    }

    fn values(&self, method: Method) -> &[Option<f64>] {
        self.values.get_or_init(|| match &self.outcome {
            Ok(o) => stats::values(&self.measures, &o.vars, &o.sums, method),
            Err(_) => Vec::new(),
        })
    }
}

/// A variant as run, with its job's sums.
type Ran<'a> = (explain::Planned<'a>, Arc<Summed>);

/// The variants tried for one explained resolution, and [`explain::limits_note`] of it.
type Explained<'a> = (Vec<Ran<'a>>, Option<String>);

/// Most periods a claim's series holds: the nearest to the cited period in the study's order.
/// Each is one more job for the first scan, so a study of monthly waves over years cannot make
/// every claim cost a hundred.
pub const MAX_SERIES_PERIODS: usize = 24;

/// The periods of a claim's series and their jobs' keys, in the study's order.
struct SeriesPlan {
    /// (period name, its filter, its job's key); the cited period's key is the claim's own.
    periods: Vec<(String, String, JobKey)>,
    /// Which of them the claim cites.
    cited: usize,
    /// Said on the claim when the study has more periods than the series holds.
    note: Option<String>,
}

/// The periods `[lo, hi)` of a series: at most `max` around the cited one (`cited` of `len`),
/// the nearest first, one more before than after when they tie.
fn series_window(cited: usize, len: usize, max: usize) -> (usize, usize) {
    let hi = (cited.saturating_sub(max / 2) + max).min(len);
    (hi.saturating_sub(max), hi)
}

/// The series job of a resolved claim on another period: the same rows but that period's, no
/// cells (their small-base audit is the cited period's business).
fn series_job(r: &Resolved, filter: &str) -> Job {
    let mut rows = r.rows.clone();
    rows.period_filter = Some(filter.to_string());
    Job { rows, measures: r.measures.clone(), cells: Vec::new() }
}

/// The series plan of a resolved claim whose own job has key `own`; none when its study
/// declares fewer than two periods.
fn series_plan(catalog: &Catalog, r: &Resolved, own: &JobKey) -> Option<SeriesPlan> {
    let study = catalog.study(&r.study).ok()?;
    let all = &study.periods;
    let i = all.iter().position(|p| p.name == r.period).filter(|_| all.len() >= 2)?;
    let (lo, hi) = series_window(i, all.len(), MAX_SERIES_PERIODS);
    let periods = all[lo..hi]
        .iter()
        .enumerate()
        .map(|(j, p)| {
            let key = if lo + j == i { own.clone() } else { series_job(r, &p.filter).key() };
            (p.name.clone(), p.filter.clone(), key)
        })
        .collect();
    let note = (all.len() > MAX_SERIES_PERIODS).then(|| {
        format!(
            "the series across periods holds the {MAX_SERIES_PERIODS} periods nearest to {} ({} to {}) of \
             the {} that study {:?} declares",
            r.period,
            all[lo].name,
            all[hi - 1].name,
            all.len(),
            r.study
        )
    });
    Some(SeriesPlan { periods, cited: i - lo, note })
}

/// A citation resolved once for every claim that names the same things. Resolving reads only
/// the study, period, base, table, column, function, weight and fielded date a citation names
/// (`resolution_key`), so claims that agree on those share one resolution, its job key and
/// its explanation key.
pub struct Resolution {
    resolved: Result<Resolved, resolve::Unresolvable>,
    /// The key of its job; `None` when not resolved.
    job: Option<JobKey>,
    /// Its key among the resolutions to explain, made when first needed.
    key: OnceLock<ResolutionKey>,
    /// Its series plan, made when first needed (with [`Options::series`]).
    series: OnceLock<Option<SeriesPlan>>,
    /// What its claims re-run, made by the first claim settled and shared by the others.
    rerun: OnceLock<Arc<Rerun>>,
}

impl Resolution {
    /// Its key among the resolutions to explain: equal keys, equal variants.
    pub fn key(&self) -> &ResolutionKey {
        self.key.get_or_init(|| match &self.resolved {
            Ok(r) => Canonical::of(r),
            Err(_) => Canonical::of(&()),
        })
    }
}

/// Resolutions a session remembers at most: past this (a batch naming that many different
/// things) claims are resolved each on its own, so the memo cannot grow with the claims.
const MAX_RESOLUTIONS: usize = 1 << 16;

/// Everything [`resolve::resolve`] reads of a citation, each part length-prefixed so no two
/// citations that resolve differently share a key.
fn resolution_key(c: &Citation) -> String {
    // A pin picks the version of the table the rows are read at.
    let data_version = c.extra.get("data_version").map(|v| v.to_string());
    let parts = [
        Some(&c.study),
        Some(&c.period),
        Some(&c.base.name),
        Some(&c.source.table),
        Some(&c.source.column),
        Some(&c.source.function),
        c.weight.as_ref(),
        c.fielded.as_ref(),
        data_version.as_ref(),
    ];
    let mut k = String::with_capacity(parts.iter().flatten().map(|p| p.len() + 8).sum());
    for p in parts {
        match p {
            Some(p) => {
                k.push_str(&p.len().to_string());
                k.push(':');
                k.push_str(p);
            }
            None => k.push('-'),
        }
    }
    k
}

/// A cited column: its study, its table's files and its name.
type CitedColumn = (String, PathBuf, String);

/// The settlement of one claim, and its resolution when it is not reproduced and the session
/// has not explained yet (to hand to [`Session::explain`]).
pub type Settled = (Settlement, Option<Arc<Resolution>>);

/// Why a claim has no sums: the caller never asked for its job (an input that changed
/// between the caller's passes).
pub const NO_SUMS: &str = "the input changed while it was being checked (its measures were read \
                           from an earlier version): check it again";

/// A settlement session over one scan (see the module doc).
pub struct Session<'a> {
    catalog: &'a Catalog,
    registry: &'a Registry,
    scan: &'a dyn Scan,
    opts: Options,
    /// Resolutions met so far, by [`resolution_key`].
    memo: RwLock<HashMap<String, Arc<Resolution>>>,
    /// The job table: the sums of every job run.
    sums: HashMap<JobKey, Arc<Summed>>,
    /// The variants tried for each explained resolution, with their sums.
    /// With [`explain::limits_note`] of the resolution, said on each of its claims.
    tried: Option<HashMap<ResolutionKey, Explained<'a>>>,
    stats: ScanStats,
    /// What the settling run's scan kept of its rows, for the explaining run (explaining on);
    /// freed with the rest in [`Session::finish_in_background`].
    kept: Option<crate::scan::Kept>,
    /// Explaining on: the variants' weights and bases the settling run takes along
    /// ([`explain::anticipated`]), and the columns already asked for.
    ahead: Mutex<(HashSet<CitedColumn>, Jobs)>,
    /// Sibling columns' measures, expanded once for the explaining run's variants.
    expansions: explain::Expansions,
}

impl<'a> Session<'a> {
    /// A session settling claims against `catalog` and `registry` through `scan`.
    pub fn new(catalog: &'a Catalog, registry: &'a Registry, scan: &'a dyn Scan, opts: Options) -> Self {
        Session {
            catalog,
            registry,
            scan,
            opts,
            memo: RwLock::default(),
            sums: HashMap::new(),
            tried: None,
            stats: ScanStats::default(),
            kept: None,
            ahead: Mutex::default(),
            expansions: explain::Expansions::default(),
        }
    }

    /// What the session's runs read.
    pub fn stats(&self) -> &ScanStats {
        &self.stats
    }

    /// Ends the session, freeing its tables (resolutions, job sums, the variants tried) on a
    /// thread of its own: for 10k claims all explained that is ~100 ms of frees, which the
    /// caller, its report written, need not wait for (a process that exits first leaves them
    /// to the system). Freed here when no thread can be started.
    pub fn finish_in_background(self) {
        let Session { memo, sums, tried, kept, ahead, .. } = self;
        // The variants borrow the catalog; they hold no copies, so they go at once.
        drop(tried);
        let tables = (memo, sums, kept, ahead);
        // On an error the closure, and so the tables, is dropped here.
        let _ = std::thread::Builder::new().name("recite-free".into()).spawn(move || drop(tables));
    }

    /// The resolution of a citation, from the memo when an earlier claim named the same things.
    pub fn resolution(&self, cit: &Citation) -> Arc<Resolution> {
        let key = resolution_key(cit);
        if let Some(r) = self.memo.read().unwrap_or_else(PoisonError::into_inner).get(&key) {
            return Arc::clone(r);
        }
        let resolved = resolve::resolve(cit, self.catalog, self.registry, self.scan);
        let job = resolved.as_ref().ok().map(|r| Job::of(r).key());
        let res = Arc::new(Resolution {
            resolved,
            job,
            key: OnceLock::new(),
            series: OnceLock::new(),
            rerun: OnceLock::new(),
        });
        let mut memo = self.memo.write().unwrap_or_else(PoisonError::into_inner);
        if memo.len() >= MAX_RESOLUTIONS {
            return res;
        }
        Arc::clone(memo.entry(key).or_insert(res))
    }

    /// Adds the job of a resolution, when it resolved, to `jobs`; with [`Options::series`],
    /// its jobs on the other periods of its study too.
    pub fn want(&self, res: &Resolution, jobs: &mut Jobs) {
        let (Ok(r), Some(k)) = (&res.resolved, &res.job) else { return };
        if !jobs.contains_key(k) {
            jobs.insert(k.clone(), Job::of(r));
        }
        if self.opts.explain {
            let mut ahead = self.ahead.lock().unwrap_or_else(PoisonError::into_inner);
            let (seen, anticipated) = &mut *ahead;
            if seen.insert((r.study.clone(), r.rows.location.clone(), r.rows.column.clone())) {
                for job in explain::anticipated(r, self.catalog) {
                    anticipated.entry(job.key()).or_insert(job);
                }
            }
        }
        for (_, filter, key) in self.series_plan(res).iter().flat_map(|p| &p.periods) {
            if !jobs.contains_key(key) {
                jobs.insert(key.clone(), series_job(r, filter));
            }
        }
    }

    /// A resolution's series plan, when series are asked for and it has one.
    fn series_plan<'r>(&self, res: &'r Resolution) -> Option<&'r SeriesPlan> {
        if !self.opts.series {
            return None;
        }
        let (Ok(r), Some(own)) = (&res.resolved, &res.job) else { return None };
        res.series.get_or_init(|| series_plan(self.catalog, r, own)).as_ref()
    }

    /// The series of a settled claim: each measure it claims, on every period of the plan.
    fn series(&self, res: &Resolution, r: &Resolved, s: &mut Settlement) {
        let Some(plan) = self.series_plan(res) else { return };
        let method = self.opts.method();
        for m in s.measures.iter().filter(|m| !m.claims.is_empty()) {
            let points = plan
                .periods
                .iter()
                .enumerate()
                .map(|(i, (period, _, key))| {
                    let mut p = SeriesPoint {
                        period: period.clone(),
                        cited: i == plan.cited,
                        value: None,
                        ci_low: None,
                        ci_high: None,
                        n: None,
                        reason: None,
                    };
                    let Some(summed) = self.sums.get(key) else {
                        p.reason = Some(NO_SUMS.into());
                        return p;
                    };
                    match &summed.outcome {
                        Err(e) => p.reason = Some(engine_reason_on(e, r, period)),
                        Ok(out) => {
                            p.n = Some(stats::base_facts(&out.sums).n);
                            let at = summed.measures.iter().position(|x| x.name == m.name);
                            match at.and_then(|i| summed.estimates(method).get(i).copied().flatten()) {
                                Some(e) => {
                                    (p.value, p.ci_low, p.ci_high) =
                                        (Some(e.value), Some(e.ci_low), Some(e.ci_high));
                                }
                                None => p.reason = Some("nothing to compute over (empty denominator)".into()),
                            }
                        }
                    }
                    p
                })
                .collect();
            s.series.push(Series { measure: m.name.clone(), unit: m.unit, points });
        }
        if !s.series.is_empty() {
            s.notes.extend(plan.note.clone());
        }
    }

    /// The settling run: every job in one fused run. Only an internal failure of the scan is an
    /// error; any other fails the claims of its job.
    /// With explaining on, what the scan kept of its rows stays for [`Session::explain`],
    /// whose variants mostly lie on the same rows (another base, weight or period a flag away);
    /// the scan takes along the other weights and bases of the cited columns
    /// ([`explain::anticipated`]), so those variants are there too.
    pub fn run(&mut self, jobs: Jobs) -> Result<(), EngineError> {
        let keep = self.opts.explain;
        let (_, anticipated) = std::mem::take(self.ahead.get_mut().unwrap_or_else(PoisonError::into_inner));
        let anticipated: Vec<Job> = anticipated.into_values().collect();
        let (sums, stats, kept) = run_jobs(self.scan, jobs, Run::First { keep, anticipated: &anticipated })?;
        self.sums = sums;
        self.stats = stats;
        self.kept = kept;
        Ok(())
    }

    /// The explaining run: every variant of every resolution in `wrong`, in one more fused run.
    /// Variants of different claims coincide (the same column, period, base and weight under
    /// another claim's mistake), so only distinct variant jobs are run: their number is bounded
    /// by the data layer, not by the claims.
    pub fn explain(&mut self, wrong: Wrong) -> Result<(), EngineError> {
        // Planned in parallel (each claim's variants walk its table's columns for siblings),
        // gathered in order. No variant's resolution is built: a variant is what it changes,
        // keyed by what decides its job, so the ~20 a claim plans cost a key each, and the
        // few thousand distinct jobs among them are built once.
        let (catalog, registry, expansions) = (self.catalog, self.registry, &self.expansions);
        let wrong: Vec<(ResolutionKey, Arc<Resolution>)> = wrong.into_iter().collect();
        // Own columns numbered, so a variant's key holds a number, not their canonical form.
        let owns: Mutex<HashMap<Canonical, u64>> = Mutex::default();
        let number = |own: Canonical| {
            let mut owns = owns.lock().unwrap_or_else(PoisonError::into_inner);
            let next = owns.len() as u64;
            *owns.entry(own).or_insert(next)
        };
        let planned: Vec<Option<Planned<'a>>> = wrong
            .par_iter()
            .map(|(key, res)| {
                let r = res.resolved.as_ref().ok()?;
                let own = explain::Own::of(r, catalog, registry, expansions, number);
                let ps = explain::plans(r, catalog, registry, expansions)
                    .into_iter()
                    .map(|p| (p.key(r, &own, &r.function), p))
                    .collect();
                Some((key.clone(), ps))
            })
            .collect();
        // Each distinct variant's job built once, from the first claim that plans it, and run
        // in the order of the keys (which depends on the claims' resolutions alone).
        let mut first: HashMap<&Canonical, (&Resolved, &explain::Planned<'a>)> = HashMap::new();
        for ((_, res), found) in wrong.iter().zip(&planned) {
            let (Ok(r), Some((_, ps))) = (&res.resolved, found) else { continue };
            for (k, p) in ps {
                first.entry(k).or_insert((r, p));
            }
        }
        let mut first: Vec<(&Canonical, (&Resolved, &explain::Planned<'a>))> = first.into_iter().collect();
        first.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let jobs: Vec<Job> = first.par_iter().map(|(_, (r, p))| p.job(r)).collect();
        let at: HashMap<&Canonical, usize> = first.iter().enumerate().map(|(i, (k, _))| (*k, i)).collect();
        // Kept, not taken: freed with the session's other tables (`finish_in_background`).
        let (sums, stats, _) = run_listed(self.scan, jobs, Run::Again(self.kept.as_ref()))?;
        // Each distinct variant valued once, however many resolutions share it.
        let method = self.opts.method();
        sums.par_iter().for_each(|s| {
            s.values(method);
        });
        let tried = wrong
            .iter()
            .zip(&planned)
            .filter_map(|((_, res), found)| {
                let (key, ps) = found.as_ref()?;
                let with = ps
                    .iter()
                    .filter_map(|(k, p)| Some((p.clone(), Arc::clone(sums.get(*at.get(k)?)?))))
                    .collect();
                let note = res.resolved.as_ref().ok().and_then(|r| explain::limits_note(r, catalog));
                Some((key.clone(), (with, note)))
            })
            .collect();
        self.tried = Some(tried);
        self.stats.explanation_scans = stats.scans;
        Ok(())
    }

    /// Settles one claim against the sums of the settling run; once [`Session::explain`] has
    /// run, a claim not reproduced is explained. Before, with explaining on, such a claim comes
    /// back with its resolution, for the caller to hand to [`Session::explain`].
    pub fn settle(&self, cit: &Citation, numbers: &[Claimed]) -> Settled {
        self.settle_resolved(cit, self.resolution(cit), numbers)
    }

    /// [`Session::settle`] with the citation's resolution at hand ([`Session::resolution`]
    /// gave it in an earlier pass): its key is not built and looked up again.
    pub fn settle_resolved(&self, cit: &Citation, res: Arc<Resolution>, numbers: &[Claimed]) -> Settled {
        let r = match &res.resolved {
            Err(why) => {
                let s =
                    Settlement { unknown_names: why.1.clone(), ..Settlement::unverifiable(why.0.clone()) };
                return (s, None);
            }
            Ok(r) => r,
        };
        let Some(summed) = res.job.as_ref().and_then(|k| self.sums.get(k)) else {
            return (Settlement::unverifiable(vec![NO_SUMS.into()]), None);
        };
        let out = match &summed.outcome {
            Ok(out) => out,
            Err(e) => return (Settlement::unverifiable(vec![engine_reason(e, r)]), None),
        };
        let method = self.opts.method();
        let rerun = Arc::clone(res.rerun.get_or_init(|| Arc::new(compare::rerun(r))));
        let mut s = compare::settle_estimated(cit, r, rerun, out, summed.estimates(method), numbers);
        self.series(&res, r, &mut s);
        if !self.opts.explain || !matches!(s.verdict, Verdict::Discrepant | Verdict::BaseMismatch) {
            return (s, None);
        }
        if self.tried.is_none() {
            return (s, Some(res));
        }
        self.explain_settled(&mut s, cit, &res);
        (s, None)
    }

    /// Explains a claim [`Session::settle`] found not reproduced before [`Session::explain`]
    /// ran (it came back with `res`): the rest of what `settle` does after `explain`. Nothing
    /// happens before `explain` has run.
    pub fn explain_settled(&self, s: &mut Settlement, cit: &Citation, res: &Resolution) {
        let (Some(tried), Ok(r)) = (&self.tried, &res.resolved) else { return };
        let (tried, note) = match tried.get(res.key()) {
            Some((tried, note)) => (tried.as_slice(), note.clone()),
            // Not among those explained (an input changed between the passes): said as before.
            None => (&[][..], explain::limits_note(r, self.catalog)),
        };
        explain_one(s, cit, r, tried, self.opts.method());
        s.notes.extend(note);
    }
}

/// Which run [`run_jobs`] is.
enum Run<'k> {
    /// The settling run; `keep`: what its scan keeps of its rows is returned, having taken
    /// `anticipated` along.
    First { keep: bool, anticipated: &'k [Job] },
    /// A later run over the same data, with what the first one kept.
    Again(Option<&'k crate::scan::Kept>),
}

/// The job table of one run, and what the run kept of its rows.
type RunOutput = (HashMap<JobKey, Arc<Summed>>, ScanStats, Option<crate::scan::Kept>);

/// The sums of one run's jobs in their order, and what the run kept of its rows.
type Listed = (Vec<Arc<Summed>>, ScanStats, Option<crate::scan::Kept>);

/// One run over distinct jobs, in key order.
fn run_jobs(scan: &dyn Scan, jobs: Jobs, run: Run<'_>) -> Result<RunOutput, EngineError> {
    let (keys, jobs): (Vec<JobKey>, Vec<Job>) = jobs.into_iter().unzip();
    let (sums, stats, kept) = run_listed(scan, jobs, run)?;
    Ok((keys.into_iter().zip(sums).collect(), stats, kept))
}

/// One run over distinct jobs, in the order given: their sums in that order.
fn run_listed(scan: &dyn Scan, jobs: Vec<Job>, run: Run<'_>) -> Result<Listed, EngineError> {
    if jobs.is_empty() {
        return Ok((Vec::new(), ScanStats::default(), None));
    }
    let (outcomes, stats, kept) = match run {
        Run::First { keep: true, anticipated } => scan.run_keeping(&jobs, anticipated),
        Run::First { keep: false, .. } => {
            let (o, s) = scan.run(&jobs);
            (o, s, None)
        }
        Run::Again(kept) => {
            // The explaining run: its variants are valued and their base n read, nothing more.
            let (o, s) = scan.run_again(&jobs, kept, Reading::Values);
            (o, s, None)
        }
    };
    if let Some(Err(e)) = outcomes.iter().find(|o| matches!(o, Err(EngineError::Internal(_)))) {
        return Err(e.clone());
    }
    let sums = jobs
        .into_iter()
        .zip(outcomes)
        .map(|(job, outcome)| {
            let summed = Summed {
                outcome,
                measures: job.measures,
                estimates: OnceLock::new(),
                values: OnceLock::new(),
            };
            Arc::new(summed)
        })
        .collect();
    Ok((sums, stats, kept))
}

/// Attaches the explanations of a claim not reproduced (resolved as `r`).
fn explain_one(s: &mut Settlement, cit: &Citation, r: &Resolved, tried: &[Ran<'_>], method: Method) {
    let ok: Vec<explain::Tried> = tried
        .iter()
        .filter_map(|(p, sums)| {
            let outcome = sums.outcome.as_ref().ok()?;
            Some(explain::Tried {
                planned: p,
                base: p.base(r),
                function: &r.function,
                measures: p.measures(r),
                outcome,
                values: sums.values(method),
            })
        })
        .collect();
    // The base n that failed: the citation's, or a result's `n` that differs from it.
    let claimed_n = s.base.as_ref().map_or(cit.base.n, |b| b.claimed_n);
    s.explanations = explain::judge(s, claimed_n, &ok);
    s.notes.extend(explain::cluster_note(tried.iter().map(|(_, sums)| &sums.outcome)));
}

/// An engine error as a claim's reason, naming the declaration by its catalog name.
fn engine_reason(e: &EngineError, r: &Resolved) -> String {
    engine_reason_on(e, r, &r.period)
}

/// [`engine_reason`] for the claim's job on `period` (a point of its series).
fn engine_reason_on(e: &EngineError, r: &Resolved, period: &str) -> String {
    match e {
        EngineError::Filter { role: Role::Period, .. } => {
            format!("period {period:?} of study {:?}: {e}", r.study)
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

#[cfg(test)]
mod tests {
    use super::series_window;

    #[test]
    fn a_series_window_holds_the_nearest_periods_and_stays_inside_the_study() {
        // Fewer periods than the bound: all of them.
        assert_eq!(series_window(5, 8, 24), (0, 8));
        assert_eq!(series_window(0, 2, 24), (0, 2));
        // Centred: 12 before the cited period, 11 after.
        assert_eq!(series_window(20, 40, 24), (8, 32));
        // Near either end the window slides in, still 24 long, still holding the cited one.
        assert_eq!(series_window(2, 40, 24), (0, 24));
        assert_eq!(series_window(39, 40, 24), (16, 40));
        assert_eq!(series_window(29, 30, 24), (6, 30));
        for len in 1..60 {
            for cited in 0..len {
                let (lo, hi) = series_window(cited, len, 24);
                assert!(lo <= cited && cited < hi && hi <= len, "{cited} of {len}: {lo}..{hi}");
                assert_eq!(hi - lo, len.min(24));
                // No period outside is nearer than one inside.
                let far = (lo..hi).map(|j| cited.abs_diff(j)).max().unwrap();
                let near_out = (0..lo).chain(hi..len).map(|j| cited.abs_diff(j)).min();
                assert!(near_out.is_none_or(|d| d >= far), "{cited} of {len}");
            }
        }
    }
}
