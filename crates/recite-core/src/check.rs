//! The batch run behind `recite check`: every claim of every input settled and written in
//! bounded chunks, every claim on one table still computed in ONE scan.
//!
//! Memory does not grow with the number of claims. The inputs are read more than once instead
//! (standard input is spooled to a file by the caller):
//!
//! 1. **measures**: each input is read and every claim resolved to its job (table, column,
//!    function, period, base, weight, cells); only the distinct jobs are kept, and their number
//!    is bounded by the catalog, not by the claims. Then one engine run: one scan per table.
//! 2. **verdicts** (only when explaining): the inputs are read again and settled, keeping only
//!    which distinct resolutions have a claim not reproduced; their variants take one more
//!    engine run.
//! 3. **report**: the inputs are read a last time, each claim settled against the sums (and
//!    explained), and handed to the report [`Writer`] in order, a chunk at a time.
//!
//! A file of JSON lines of plain `{result, citation}` pairs (what `recite generate claims` and
//! pipelines write) is read line by line; any other input is read whole, one input at a time,
//! so the largest input bounds memory (`--max-input-size`).

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use serde_json::Value;

use crate::answers;
use crate::catalog::Catalog;
use crate::citation;
use crate::claim;
use crate::extractor::Registry;
use crate::report::stream::{Closing, InputHead, InputTail, Writer};
use crate::report::{ClaimParts, ClaimReport, Coverage, DataLayer, Summary};
use crate::scan::{EngineError, Scan};
use crate::settle::session::{self, Jobs, Options as SettleOptions, Session, Settled, Wrong};
use crate::settle::{Settlement, Verdict};
use crate::transcript::{self, Document, Finding, Format, Item, Level, Locator, RULE_CONFORMANCE};

mod line;

/// Why an input was not read: the finding's rule and message.
pub type Refusal = (&'static str, String);

/// One input of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A regular file: its name as given (`-` for standard input) and where to read it (for
    /// standard input, the file it was spooled to).
    File {
        /// The name reports use.
        name: String,
        /// The path to read.
        path: String,
    },
    /// Not read, and why.
    Refused {
        /// The name reports use.
        name: String,
        /// The finding's rule.
        rule: &'static str,
        /// Why, in words.
        message: String,
    },
}

/// How a batch runs.
pub struct Options<'a> {
    /// How claims are settled.
    pub settle: SettleOptions,
    /// Claims settled (in parallel) and written per chunk; any value gives the same report.
    pub chunk: usize,
    /// Inputs larger than this are not read.
    pub max_input_size: u64,
    /// Bytes of JSON-lines text whose items pass 1 keeps for the later passes, over all inputs
    /// ([`HELD_BYTES`] by default; any value gives the same report): within it a claim is
    /// parsed once, past it its input is read again in bounded memory.
    pub held_bytes: usize,
    /// Reads one input whole, or says why not (`--max-input-size`, not a regular file…).
    pub read: &'a (dyn Fn(&str) -> Result<Vec<u8>, Refusal> + Sync),
    /// A JSON Schema every MOCA citation record must pass.
    pub record_schema: Option<&'a jsonschema::Validator>,
    /// The data layer, named in the report.
    pub data_layer: Option<DataLayer>,
    /// Record how long each pass took.
    pub timings: bool,
    /// Told what the run is doing, for a progress line.
    pub progress: &'a (dyn Fn(&str) + Sync),
}

/// Claims per chunk by default: enough to keep every core busy, small enough to bound memory.
pub const DEFAULT_CHUNK: usize = 4096;

/// What a run found, for the exit status.
#[derive(Debug, Clone, Default)]
pub struct Ran {
    /// The report's summary.
    pub summary: Summary,
    /// Findings per level.
    pub levels: BTreeMap<Level, usize>,
    /// MOCA `moca.citations` events checked.
    pub moca_events: usize,
}

impl Ran {
    /// True when the run checked nothing at all: no claim, no MOCA event and no number of an
    /// agent's answer in any input. Such a run must not look like a pass (`recite check` exits
    /// 5 unless `--allow-empty`).
    pub fn checked_nothing(&self) -> bool {
        self.summary.claims == 0
            && self.moca_events == 0
            && self.summary.answer_numbers.values().all(|n| *n == 0)
    }
}

/// Why a run failed as a whole.
#[derive(Debug)]
pub enum CheckError {
    /// The engine failed internally: no outcome can be trusted.
    Engine(EngineError),
    /// The report could not be written.
    Write(std::io::Error),
}

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckError::Engine(e) => write!(f, "{e}"),
            CheckError::Write(e) => write!(f, "writing the report: {e}"),
        }
    }
}

impl std::error::Error for CheckError {}

impl From<std::io::Error> for CheckError {
    fn from(e: std::io::Error) -> Self {
        CheckError::Write(e)
    }
}

/// How pass 1 found an input, so the later passes read it the same way.
enum Plan {
    /// JSON lines of plain pairs: their items as pass 1 parsed them while the run's
    /// [`HELD_BYTES`] lasted, else `None`: read again line by line.
    Lines(Option<Vec<Held>>),
    /// Read whole.
    Whole,
    /// Not readable: reported as such.
    Refused(Refusal),
}

/// Runs a batch: settles every claim of `inputs` and writes the report to `w`.
pub fn run(
    inputs: &[Source],
    catalog: &Catalog,
    registry: &Registry,
    engine: &dyn Scan,
    opts: &Options<'_>,
    w: &mut dyn Writer,
) -> Result<Ran, CheckError> {
    let t0 = Instant::now();
    let mut timings = BTreeMap::new();
    let mut ctx = Ctx {
        catalog,
        opts,
        session: Session::new(catalog, registry, engine, opts.settle),
        phases: Phases::default(),
    };
    (opts.progress)(&format!("reading {} input(s) for their measures", inputs.len()));
    let mut jobs = Jobs::new();
    let mut budget = opts.held_bytes;
    let mut plans: Vec<Plan> = inputs.iter().map(|s| ctx.measures(s, &mut jobs, &mut budget)).collect();
    timings.insert("measures_ms".to_string(), ms(t0));
    let t1 = Instant::now();
    (opts.progress)(&format!("scanning for {} distinct measure set(s)", jobs.len()));
    ctx.session.run(jobs).map_err(CheckError::Engine)?;
    timings.insert("scan_ms".to_string(), ms(t1));
    if opts.settle.explain {
        let t2 = Instant::now();
        (opts.progress)("finding the claims not reproduced");
        let mut wrong = Wrong::new();
        let mut note = |found: &[Settled]| {
            for res in found.iter().filter_map(|(_, res)| res.as_ref()) {
                if !wrong.contains_key(res.key()) {
                    wrong.insert(res.key().clone(), Arc::clone(res));
                }
            }
        };
        for (s, plan) in inputs.iter().zip(plans.iter_mut()) {
            match plan {
                // Held items keep their settlements for pass 3, which only adds the explanations.
                Plan::Lines(Some(held)) => held.iter_mut().for_each(|h| {
                    h.settled = ctx.phases.time(Phase::Settle, || {
                        (h.items.par_iter(), &h.parsed, &h.resolved)
                            .into_par_iter()
                            .map(|(i, p, r)| ctx.settle_parsed(i, p, r.as_ref()))
                            .collect()
                    });
                    note(&h.settled);
                }),
                plan => ctx.each_chunk(s, plan, &mut |items: &[Item], parsed: &[Parsed]| {
                    let settled: Vec<Settled> = ctx.phases.time(Phase::Settle, || {
                        items.par_iter().zip(parsed).map(|(i, p)| ctx.settle_parsed(i, p, None)).collect()
                    });
                    note(&settled);
                    free_behind(settled);
                }),
            }
        }
        timings.insert("verdicts_ms".to_string(), ms(t2));
        let t3 = Instant::now();
        (opts.progress)(&format!("explaining {} distinct claim(s) not reproduced", wrong.len()));
        ctx.session.explain(wrong).map_err(CheckError::Engine)?;
        timings.insert("explain_ms".to_string(), ms(t3));
    }
    let stats = ctx.session.stats().clone();
    let t4 = Instant::now();
    (opts.progress)("settling and writing the report");
    let mut ran = Ran {
        summary: Summary { verdicts: Verdict::ALL.iter().map(|v| (*v, 0)).collect(), ..Summary::default() },
        levels: BTreeMap::new(),
        moca_events: 0,
    };
    // Each input's held items are dropped once it is written.
    for (s, plan) in inputs.iter().zip(plans) {
        ctx.report(s, plan, &mut ran, w)?;
    }
    let timings = opts.timings.then(|| {
        timings.insert("report_ms".to_string(), ms(t4));
        ctx.phases.add_to(&mut timings);
        timings.insert("total_ms".to_string(), ms(t0));
        timings
    });
    w.finish(Closing {
        summary: &ran.summary,
        stats: &stats,
        data_layer: opts.data_layer.as_ref(),
        timings: timings.as_ref(),
        inputs: inputs.len(),
    })?;
    ctx.session.finish_in_background();
    Ok(ran)
}

/// What every pass needs.
struct Ctx<'a> {
    catalog: &'a Catalog,
    opts: &'a Options<'a>,
    /// The settlement session every pass goes through: each pass resolves a citation once.
    session: Session<'a>,
    /// How long the per-claim phases took, over every pass (`--timings`).
    phases: Phases,
}

impl Ctx<'_> {
    /// Pass 1 for one input: how to read it, and the distinct jobs of its claims. Its items are
    /// kept if their lines fit in what is left of `budget` (bytes of line text).
    fn measures(&self, s: &Source, jobs: &mut Jobs, budget: &mut usize) -> Plan {
        let (name, path) = match s {
            Source::Refused { rule, message, .. } => return Plan::Refused((*rule, message.clone())),
            Source::File { name, path } => (name, path),
        };
        if let Some(mut lines) = Lines::open(name, path, self.opts.max_input_size) {
            let mut mine = Jobs::new();
            // A file larger than what is left cannot be held: its items are not gathered only to
            // be dropped (a million claims held 16 MiB of lines' items, ~150 MB, for nothing).
            let fits = usize::try_from(lines.size).is_ok_and(|size| size <= *budget);
            let (mut held, mut held_bytes) = (fits.then(Vec::new), 0);
            let plain = loop {
                match self.phases.time(Phase::Parse, || lines.next_batch(LINES_PER_BATCH)) {
                    Batch::Items(items, parsed, found, bytes) => {
                        let resolved = self.collect_jobs(&parsed, &mut mine);
                        match &mut held {
                            Some(h) if held_bytes + bytes <= *budget => {
                                held_bytes += bytes;
                                h.push(Held { items, parsed, resolved, found, settled: Vec::new() });
                            }
                            _ => {
                                held = None;
                                free_behind((items, parsed, resolved));
                            }
                        }
                    }
                    Batch::End => break lines.records >= 2,
                    Batch::NotPlain => break false,
                }
            };
            if plain {
                jobs.append(&mut mine);
                if held.is_some() {
                    *budget -= held_bytes;
                }
                return Plan::Lines(held);
            }
        }
        match (self.opts.read)(path) {
            Err(r) => Plan::Refused(r),
            Ok(bytes) => {
                let doc = self.phases.time(Phase::Parse, || transcript::read_bytes(name, &bytes));
                drop(bytes);
                let parsed = self.phases.time(Phase::Parse, || parse_all(&doc.items));
                self.collect_jobs(&parsed, jobs);
                Plan::Whole
            }
        }
    }

    /// Adds the jobs of citations as parsed to `jobs`; their resolutions, in order.
    fn collect_jobs(&self, parsed: &[Parsed], jobs: &mut Jobs) -> Vec<Resolved> {
        self.phases.time(Phase::Resolve, || {
            let found: Vec<Resolved> = parsed
                .par_iter()
                .map(|p| match p {
                    Some(Ok(cit)) => Some(self.session.resolution(cit)),
                    _ => None,
                })
                .collect();
            found.iter().flatten().for_each(|res| self.session.want(res, jobs));
            found
        })
    }

    /// Hands the items of an input that is read again to `f` in chunks, read as pass 1 planned
    /// (pass 2). A held input is not read: pass 2 settles its items where they are held.
    fn each_chunk(&self, s: &Source, plan: &Plan, f: &mut dyn FnMut(&[Item], &[Parsed])) {
        let Source::File { name, path } = s else { return };
        match plan {
            Plan::Refused(_) | Plan::Lines(Some(_)) => {}
            Plan::Lines(None) => {
                let Some(mut lines) = Lines::open(name, path, self.opts.max_input_size) else { return };
                let chunk = self.opts.chunk.max(1);
                while let Batch::Items(items, parsed, _, _) =
                    self.phases.time(Phase::Parse, || lines.next_batch(chunk))
                {
                    f(&items, &parsed);
                    free_behind((items, parsed));
                }
            }
            Plan::Whole => {
                if let Ok(bytes) = (self.opts.read)(path) {
                    let doc = self.phases.time(Phase::Parse, || transcript::read_bytes(name, &bytes));
                    for items in doc.items.chunks(self.opts.chunk.max(1)) {
                        let parsed = self.phases.time(Phase::Parse, || parse_all(items));
                        f(items, &parsed);
                        free_behind(parsed);
                    }
                }
            }
        }
    }

    /// Settles one item whose citation is parsed; before the session has explained, a claim
    /// not reproduced comes back with its resolution, so pass 2 can collect what to explain.
    /// `res`: its resolution, when pass 1 kept it.
    fn settle_parsed(&self, item: &Item, parsed: &Parsed, res: Option<&Arc<session::Resolution>>) -> Settled {
        let cit = match parsed {
            None => return (uncited(), None),
            Some(Err(problems)) => return (Settlement::invalid(problems.clone()), None),
            Some(Ok(cit)) => cit,
        };
        let mark = self.opts.settle.decimal_mark;
        let numbers = item.result.as_ref().map(|r| claim::claimed(r, mark)).unwrap_or_default();
        match res {
            Some(res) => self.session.settle_resolved(cit, Arc::clone(res), &numbers),
            None => self.session.settle(cit, &numbers),
        }
    }

    /// Settles a chunk of items with their citations as parsed in parallel, in order (resolved
    /// already when `resolved` is given); adds what they held and how much of it was checked to
    /// `coverage`.
    fn settle_chunk(
        &self,
        items: &[Item],
        parsed: &[Parsed],
        resolved: Option<&[Resolved]>,
        coverage: &mut Coverage,
    ) -> Vec<ClaimReport> {
        let settlements: Vec<Settlement> = match resolved {
            Some(resolved) => self.phases.time(Phase::Settle, || {
                (items, parsed, resolved)
                    .into_par_iter()
                    .map(|(i, p, r)| self.settle_parsed(i, p, r.as_ref()).0)
                    .collect()
            }),
            None => self.phases.time(Phase::Settle, || {
                items.par_iter().zip(parsed).map(|(i, p)| self.settle_parsed(i, p, None).0).collect()
            }),
        };
        self.phases.time(Phase::Settle, || self.claim_reports(items, parsed, settlements, coverage))
    }

    /// [`Ctx::settle_chunk`] for items pass 2 settled (`settled`, in order): only the claims
    /// not reproduced are taken further, to be explained.
    fn settled_chunk(
        &self,
        items: &[Item],
        parsed: &[Parsed],
        settled: Vec<Settled>,
        coverage: &mut Coverage,
    ) -> Vec<ClaimReport> {
        self.phases.time(Phase::Settle, || {
            let settlements = parsed
                .par_iter()
                .zip(settled)
                .map(|(p, (mut s, res))| {
                    if let (Some(res), Some(Ok(cit))) = (res, p) {
                        self.session.explain_settled(&mut s, cit, &res);
                    }
                    s
                })
                .collect();
            self.claim_reports(items, parsed, settlements, coverage)
        })
    }

    /// The claims of settled items (with their citations as parsed), in order; adds what they
    /// held and how much of it was checked to `coverage`.
    fn claim_reports(
        &self,
        items: &[Item],
        parsed: &[Parsed],
        settlements: Vec<Settlement>,
        coverage: &mut Coverage,
    ) -> Vec<ClaimReport> {
        let settled: Vec<(ClaimReport, Coverage)> = (items, parsed)
            .into_par_iter()
            .zip(settlements)
            .map(|((i, p), settlement)| {
                let numbers = i.result.as_ref().map_or(0, |r| claim::leaves(r).len());
                // A line's item carries its citation parsed only (`Item::citation` is `None`).
                let parts = ClaimParts { result: i.result.is_some(), citation: p.is_some(), numbers };
                let covered = Coverage::of_claim(parts, &settlement);
                (ClaimReport { locator: i.locator.clone(), settlement }, covered)
            })
            .collect();
        let mut claims = Vec::with_capacity(settled.len());
        for (c, covered) in settled {
            coverage.add(&covered);
            claims.push(c);
        }
        claims
    }

    /// Pass 3 for one input: settle, explain and write its claims, then what it says besides.
    fn report(&self, s: &Source, plan: Plan, ran: &mut Ran, w: &mut dyn Writer) -> Result<(), CheckError> {
        let (name, path) = match s {
            Source::File { name, path } => (name.as_str(), path.as_str()),
            Source::Refused { name, .. } => (name.as_str(), ""),
        };
        let refused = |r: &Refusal| vec![Finding::new(Locator::at(name, ""), r.0, Level::Must, r.1.clone())];
        let findings = match (plan, s) {
            (Plan::Refused(r), _) => refused(&r),
            (_, Source::Refused { rule, message, .. }) => refused(&(*rule, message.clone())),
            (Plan::Lines(Some(held)), _) => {
                w.begin_input(InputHead { file: name, format: Some(Format::Plain), turns: &[] })?;
                let mut capped = Capped::default();
                let mut coverage = Coverage::default();
                let chunk = self.opts.chunk.max(1);
                for h in held {
                    // Settled already when explaining (pass 2); else settled here.
                    let explained = !h.settled.is_empty();
                    let mut settled = h.settled.into_iter();
                    let chunks =
                        h.items.chunks(chunk).zip(h.parsed.chunks(chunk)).zip(h.resolved.chunks(chunk));
                    for ((items, parsed), resolved) in chunks {
                        let claims = if explained {
                            let kept = settled.by_ref().take(items.len()).collect();
                            self.settled_chunk(items, parsed, kept, &mut coverage)
                        } else {
                            self.settle_chunk(items, parsed, Some(resolved), &mut coverage)
                        };
                        claims.iter().for_each(|c| ran.claim(c));
                        self.phases.time(Phase::Write, || w.owned_claims(claims))?;
                    }
                    h.found.into_iter().for_each(|f| capped.push(f));
                }
                let findings = capped.finish(name);
                ran.input(Some(Format::Plain), &findings, &[], &coverage);
                w.end_input(InputTail { findings: &findings, moca: &[], answers: &[], coverage })?;
                return Ok(());
            }
            (Plan::Lines(None), _) => match Lines::open(name, path, self.opts.max_input_size) {
                None => refused(&(transcript::RULE_MALFORMED, format!("{name}: {CHANGED}"))),
                Some(mut lines) => {
                    w.begin_input(InputHead { file: name, format: Some(Format::Plain), turns: &[] })?;
                    let mut capped = Capped::default();
                    let mut coverage = Coverage::default();
                    loop {
                        match self.phases.time(Phase::Parse, || lines.next_batch(self.opts.chunk.max(1))) {
                            Batch::Items(items, parsed, found, _) => {
                                let claims = self.settle_chunk(&items, &parsed, None, &mut coverage);
                                free_behind((items, parsed));
                                claims.iter().for_each(|c| ran.claim(c));
                                self.phases.time(Phase::Write, || w.owned_claims(claims))?;
                                found.into_iter().for_each(|f| capped.push(f));
                            }
                            Batch::End => break,
                            Batch::NotPlain => {
                                let at = Locator::at(name, "").on_line(Some(lines.line));
                                capped.push(Finding::new(
                                    at,
                                    transcript::RULE_MALFORMED,
                                    Level::Must,
                                    CHANGED,
                                ));
                                break;
                            }
                        }
                    }
                    let findings = capped.finish(name);
                    ran.input(Some(Format::Plain), &findings, &[], &coverage);
                    w.end_input(InputTail { findings: &findings, moca: &[], answers: &[], coverage })?;
                    return Ok(());
                }
            },
            (Plan::Whole, _) => match (self.opts.read)(path) {
                Err(r) => refused(&r),
                Ok(bytes) => {
                    let doc = self.phases.time(Phase::Parse, || transcript::read_bytes(name, &bytes));
                    drop(bytes);
                    return self.report_document(doc, ran, w);
                }
            },
        };
        w.begin_input(InputHead { file: name, format: None, turns: &[] })?;
        let coverage = Coverage::default();
        ran.input(None, &findings, &[], &coverage);
        w.end_input(InputTail { findings: &findings, moca: &[], answers: &[], coverage })?;
        Ok(())
    }

    /// Pass 3 for an input read whole: its claims are held (the answer audit reads them all),
    /// bounded by the size of the input.
    fn report_document(&self, d: Document, ran: &mut Ran, w: &mut dyn Writer) -> Result<(), CheckError> {
        let moca =
            (d.format == transcript::Format::Agui).then(|| crate::moca::check(&d, self.opts.record_schema));
        let mut coverage = Coverage::default();
        let mut claims: Vec<ClaimReport> = Vec::with_capacity(d.items.len());
        for items in d.items.chunks(self.opts.chunk.max(1)) {
            let parsed = self.phases.time(Phase::Parse, || parse_all(items));
            claims.extend(self.settle_chunk(items, &parsed, None, &mut coverage));
            free_behind(parsed);
        }
        let mut audit = audit_answers(&d, &claims, moca.as_ref(), self.catalog);
        let mut findings = d.findings;
        // Numbers past the per-answer and per-input caps are never dropped quietly.
        findings.extend(audit.findings(&d.file));
        let answers = std::mem::take(&mut audit.answers);
        let mut events = Vec::new();
        if let Some(m) = moca {
            findings.extend(m.findings);
            events = m.events;
        }
        transcript::cap_findings(&mut findings, &d.file);
        w.begin_input(InputHead { file: &d.file, format: Some(d.format), turns: &d.turns })?;
        claims.iter().for_each(|c| ran.claim(c));
        let mut claims = claims.into_iter();
        loop {
            let chunk: Vec<ClaimReport> = claims.by_ref().take(self.opts.chunk.max(1)).collect();
            if chunk.is_empty() {
                break;
            }
            self.phases.time(Phase::Write, || w.owned_claims(chunk))?;
        }
        ran.input(Some(d.format), &findings, &answers, &coverage);
        ran.moca_events += events.len();
        w.end_input(InputTail { findings: &findings, moca: &events, answers: &answers, coverage })?;
        Ok(())
    }
}

/// Why a claim found in the last pass has no sums: its input changed between the passes.
const CHANGED: &str = session::NO_SUMS;

impl Ran {
    fn claim(&mut self, c: &ClaimReport) {
        self.summary.claims += 1;
        *self.summary.verdicts.entry(c.settlement.verdict).or_default() += 1;
    }

    fn input(
        &mut self,
        format: Option<Format>,
        findings: &[Finding],
        answers: &[answers::Answer],
        coverage: &Coverage,
    ) {
        self.summary.findings += findings.len();
        self.summary.coverage.add(coverage);
        if format.is_none() {
            self.summary.unreadable_inputs += 1;
        }
        for f in findings {
            *self.levels.entry(f.level).or_default() += 1;
        }
        for n in answers.iter().flat_map(|a| &a.numbers) {
            if self.summary.answer_numbers.is_empty() {
                self.summary.answer_numbers = answers::Status::ALL.iter().map(|s| (*s, 0)).collect();
            }
            *self.summary.answer_numbers.entry(n.status).or_default() += 1;
        }
    }
}

/// An input's findings as [`transcript::cap_findings`] leaves them, kept as they come: the
/// first [`transcript::MAX_FINDINGS`], the rest only counted by level.
#[derive(Default)]
struct Capped {
    kept: Vec<Finding>,
    rest: [usize; 3],
}

impl Capped {
    fn push(&mut self, f: Finding) {
        if self.kept.len() < transcript::MAX_FINDINGS {
            self.kept.push(f);
        } else {
            self.rest[match f.level {
                Level::Must => 0,
                Level::Should => 1,
                Level::Note => 2,
            }] += 1;
        }
    }

    fn finish(mut self, file: &str) -> Vec<Finding> {
        if self.rest.iter().sum::<usize>() > 0 {
            self.kept.push(transcript::findings_not_shown(file, self.rest));
        }
        self.kept
    }
}

/// The answer-text audit of one document: its agent turns' numbers traced to its claims.
/// An assistant message that `moca.citations` events cite records for is also traced to the
/// numbers of those records.
fn audit_answers(
    d: &Document,
    claims: &[ClaimReport],
    moca: Option<&crate::moca::MocaReport>,
    catalog: &Catalog,
) -> answers::Audit {
    if d.turns.is_empty() {
        return answers::Audit::default();
    }
    // What each citation covers, read from the catalog once per distinct citation header.
    let mut covered: HashMap<String, Option<Arc<answers::attribution::Covers>>> = HashMap::new();
    let sources: Vec<Vec<answers::Source>> = d
        .items
        .iter()
        .zip(claims)
        .enumerate()
        .map(|(i, (item, c))| {
            let leaves = item.result.as_ref().map(claim::leaves).unwrap_or_default();
            let n = item
                .citation
                .as_ref()
                .and_then(|c| c.pointer("/base/n"))
                // An INVALID citation may state n as a string: the answer may still repeat it.
                .and_then(|v| {
                    v.as_u64().or_else(|| {
                        let mark = Some(claim::DecimalMark::Dot);
                        v.as_str().and_then(|s| claim::read_written(s, mark).ok()?.as_count())
                    })
                });
            // What the citation covers, for the sentence's period, population and brand.
            let covers = item.citation.as_ref().and_then(|cit| {
                let key = ["/study", "/period", "/base/name", "/source/table", "/source/column"]
                    .map(|p| cit.pointer(p).map(ToString::to_string).unwrap_or_default())
                    .join("\u{0}");
                covered
                    .entry(key)
                    .or_insert_with(|| answers::attribution::covers(catalog, cit).map(Arc::new))
                    .clone()
            });
            answers::with_covers(answers::sources(i, &c.settlement, &leaves, n), covers)
        })
        .collect();
    let mut cited: HashMap<String, Vec<answers::Source>> = HashMap::new();
    for ev in moca.iter().flat_map(|m| &m.events) {
        if let Some(id) = &ev.message_id {
            cited.entry(id.clone()).or_default().extend(answers::record_sources(ev));
        }
    }
    answers::audit_cited(&d.turns, &sources, &cited)
}

/// The settlement of a quantitative result that came without a citation.
fn uncited() -> Settlement {
    Settlement::invalid(vec![citation::Problem {
        pointer: String::new(),
        message: format!(
            "a quantitative result without a citation Part ({RULE_CONFORMANCE}): nothing to re-run"
        ),
    }])
}

fn ms(t: Instant) -> f64 {
    (t.elapsed().as_secs_f64() * 1000.0 * 10.0).round() / 10.0
}

/// Lines read per batch in pass 1 (how many are parsed in parallel at once).
const LINES_PER_BATCH: usize = 4096;

/// The default [`Options::held_bytes`]. An item with its parsed citation holds 9–12 times its
/// line's bytes (10k generated claims, 3.65 MB of lines, added 33 MB to a warm run's peak), and
/// when explaining its settlement about 8 times more (+30 MB for those 10k), so this bounds
/// what is held near 150–200 MB, or 300 MB explaining.
pub const HELD_BYTES: usize = 16 << 20;

/// One batch of JSON lines as pass 1 read it: its items, their citations as parsed and the
/// readers' findings; once pass 2 has run (explaining), each item's settlement, in order.
struct Held {
    items: Vec<Item>,
    parsed: Vec<Parsed>,
    /// The items' resolutions, when their citations resolved.
    resolved: Vec<Resolved>,
    found: Vec<Finding>,
    settled: Vec<Settled>,
}

/// An item's citation as parsed; `None` when it has none.
type Parsed = Option<Result<citation::Citation, Vec<citation::Problem>>>;

/// An item's resolution as pass 1 found it; `None` when its citation was not parsed.
type Resolved = Option<Arc<session::Resolution>>;

/// Frees `x` on the pool, beside the next batch's work: a batch's items, citations and claims
/// are tens of allocations each, and freed one by one on this thread they were a serial
/// stretch between batches while the other core waited.
fn free_behind<T: Send + 'static>(x: T) {
    rayon::spawn(move || drop(x));
}

/// Parses the citations of `items`, in parallel, in order.
fn parse_all(items: &[Item]) -> Vec<Parsed> {
    items.par_iter().map(|item| item.citation.as_ref().map(citation::parse)).collect()
}

/// A per-claim phase, timed around whole batches (their claims handled in parallel).
#[derive(Clone, Copy)]
enum Phase {
    /// Lines or documents read and their JSON parsed, citations parsed.
    Parse,
    /// Citations resolved to their jobs (pass 1).
    Resolve,
    /// Claims settled against the sums (and explained), and their coverage counted.
    Settle,
    /// Claims rendered and written by the report's writer.
    Write,
}

impl Phase {
    const ALL: [Phase; 4] = [Phase::Parse, Phase::Resolve, Phase::Settle, Phase::Write];

    /// Its key in the report's `timings`.
    fn key(self) -> &'static str {
        match self {
            Phase::Parse => "claims_parse_ms",
            Phase::Resolve => "claims_resolve_ms",
            Phase::Settle => "claims_settle_ms",
            Phase::Write => "claims_write_ms",
        }
    }
}

/// Wall time of each [`Phase`], summed over every pass and batch, in nanoseconds. The passes'
/// own timings mix the phases (pass 1 parses and resolves, the report's pass settles and writes):
/// these tell which one grows with the claims.
#[derive(Default)]
struct Phases([AtomicU64; 4]);

impl Phases {
    fn time<T>(&self, phase: Phase, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        let nanos = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.0[phase as usize].fetch_add(nanos, Ordering::Relaxed);
        out
    }

    fn add_to(&self, timings: &mut BTreeMap<String, f64>) {
        for phase in Phase::ALL {
            let nanos = self.0[phase as usize].load(Ordering::Relaxed);
            timings.insert(phase.key().to_string(), (nanos as f64 / 1e5).round() / 10.0);
        }
    }
}

/// Bytes of lines one batch holds at most (past its first line): a batch of long lines is cut
/// short rather than held whole.
const BATCH_BYTES: usize = 64 << 20;

/// The finding rule of a line of JSON lines longer than `--max-input-size`, not read.
pub const RULE_RECORD_TOO_LARGE: &str = "input/record-too-large";

/// A file read as JSON lines of plain pairs, a batch of lines at a time. It gives up
/// ([`Batch::NotPlain`]) on anything the framing layer would read otherwise: a line that is not
/// one whole JSON value, a value a reader other than the plain one would claim, a stray
/// carriage return, bytes that are not UTF-8. The caller then reads the input whole.
struct Lines {
    name: String,
    reader: BufReader<std::fs::File>,
    /// The longest line read (`--max-input-size`): a longer one is a finding, not read.
    max_record: u64,
    /// The last line read (1-based).
    line: usize,
    /// Values read so far.
    records: usize,
    /// The file's size when opened: its lines' bytes, unless it grows.
    size: u64,
}

/// One batch of lines.
enum Batch {
    /// The items found, their citations as parsed (in order; the items themselves carry none:
    /// see [`line`]), the readers' findings, and the bytes of the lines read.
    Items(Vec<Item>, Vec<Parsed>, Vec<Finding>, usize),
    /// The end of the file.
    End,
    /// Not JSON lines of plain pairs.
    NotPlain,
}

impl Lines {
    /// Opens a regular file, whatever its size (it streams), without blocking on a FIFO swapped
    /// in; lines longer than `max_record` bytes are not read ([`RULE_RECORD_TOO_LARGE`]).
    fn open(name: &str, path: &str, max_record: u64) -> Option<Lines> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
            .ok()?;
        let m = file.metadata().ok()?;
        if !m.is_file() {
            return None;
        }
        Some(Lines {
            name: name.to_string(),
            reader: BufReader::with_capacity(1 << 20, file),
            max_record,
            line: 0,
            records: 0,
            size: m.len(),
        })
    }

    fn next_batch(&mut self, lines: usize) -> Batch {
        let mut texts: Vec<(usize, String)> = Vec::with_capacity(lines.min(LINES_PER_BATCH));
        let mut too_large = Vec::new();
        let (mut buf, mut bytes) = (Vec::new(), 0);
        while texts.len() < lines && bytes < BATCH_BYTES {
            buf.clear();
            // One byte past the bound tells a line over it.
            let limit = self.max_record.saturating_add(1);
            match (&mut self.reader).take(limit).read_until(b'\n', &mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(_) => return Batch::NotPlain,
            }
            self.line += 1;
            if buf.len() as u64 > self.max_record && buf.last() != Some(&b'\n') {
                // Skipped to its end unread; the other lines are read as usual.
                let skipped = match self.reader.skip_until(b'\n') {
                    Ok(n) => n,
                    Err(_) => return Batch::NotPlain,
                };
                self.records += 1;
                too_large.push(Finding::new(
                    Locator::at(&self.name, "").on_line(Some(self.line)),
                    RULE_RECORD_TOO_LARGE,
                    Level::Must,
                    format!(
                        "line {} is longer than --max-input-size ({} bytes: {} or more); not read",
                        self.line,
                        self.max_record,
                        buf.len() + skipped
                    ),
                ));
                continue;
            }
            bytes += buf.len();
            if buf.last() == Some(&b'\n') {
                buf.pop();
                if buf.last() == Some(&b'\r') {
                    buf.pop();
                }
            }
            if buf.contains(&b'\r') {
                return Batch::NotPlain;
            }
            let Ok(mut text) = String::from_utf8(std::mem::take(&mut buf)) else { return Batch::NotPlain };
            if self.line == 1 && text.starts_with('\u{feff}') {
                text.drain(..'\u{feff}'.len_utf8());
            }
            if !text.trim().is_empty() {
                texts.push((self.line, text));
            }
        }
        if texts.is_empty() && too_large.is_empty() {
            return Batch::End;
        }
        self.records += texts.len();
        let read: Vec<Option<Reading>> = texts
            .par_iter()
            .map(|(line, text)| {
                if let Some((item, cit)) = line::read(&self.name, *line, text) {
                    return Some(Reading::Typed(item, cit));
                }
                let value: Value = serde_json::from_str(text).ok()?;
                if !transcript::is_plain_record(&value) {
                    return None;
                }
                let record = transcript::Record {
                    value,
                    line: Some(*line),
                    pointer: String::new(),
                    object_lines: Vec::new(),
                    first_line: *line,
                };
                let framed = transcript::Framed {
                    framing: transcript::Framing::Sequence,
                    records: vec![record],
                    findings: Vec::new(),
                };
                let mut d = transcript::plain::read_framed(&self.name, framed);
                let parsed =
                    d.items.iter_mut().map(|i| i.citation.take().map(|c| citation::parse(&c))).collect();
                Some(Reading::General(d, parsed))
            })
            .collect();
        let (mut items, mut parsed, mut findings) = (Vec::with_capacity(read.len()), Vec::new(), too_large);
        parsed.reserve(read.len());
        for r in read {
            match r {
                None => return Batch::NotPlain,
                Some(Reading::Typed(item, cit)) => {
                    items.push(item);
                    parsed.push(Some(Ok(cit)));
                }
                Some(Reading::General(d, p)) => {
                    items.extend(d.items);
                    parsed.extend(p);
                    findings.extend(d.findings);
                }
            }
        }
        Batch::Items(items, parsed, findings, bytes)
    }
}

/// One line as [`Lines::next_batch`] read it.
// One per line of a batch, moved once into the batch's vectors: boxing the typed claim would
// allocate once more per line, what the typed reader is there to save.
#[allow(clippy::large_enum_variant)]
enum Reading {
    /// Of the common shape: its item and citation, read typed ([`line::read`]).
    Typed(Item, citation::Citation),
    /// Read the general way: what the plain reader found, and the items' citations as parsed
    /// (taken out of the items).
    General(Document, Vec<Parsed>),
}
