//! The job table kept warm across requests: what each run of the engine returned for a set of
//! jobs (every job's sums, and what the run read), kept in memory and given again to a later
//! request that asks for the same jobs while their tables' files are unchanged.
//!
//! A verification is parse → resolve → run → settle → report; the run (a scan of the table) is
//! nearly all of its time, and an agent asks about the same few citations again and again. A
//! run is a function of its jobs and of the data, so its result is kept by the jobs' keys
//! ([`JobKey`], every field of every job) and checked, before it is given again, against the
//! identity of every table the jobs read ([`Engine::table_identity`]: the files' paths, sizes,
//! modification and change times, inodes, and each Parquet footer's or other file's digest,
//! as the sums cache checks them, docs/cache.md). So a report from the warm table is the very
//! report a fresh run writes, byte for byte, statistics of the scan included (they say what the
//! run that computed the sums read), and a table edited between two requests is read again:
//!
//! - the identity is taken before the run and again after it, and the result is kept only if
//!   the two agree (a file rewritten during the scan never leaves its half-old sums here);
//! - a table without an identity (PostgreSQL, the latest version of a Delta table, an object
//!   without an ETag) is never kept: its jobs run every time;
//! - a run with any job that failed (a filter that does not plan, the time limit) is not kept.
//!
//! "Similar" requests share it too: a citation with other numbers claimed, the same citation
//! over `/v1/verify` and A2A, as JSON or text, resolves to the same jobs. Bounded: at most
//! [`Warm::new`]'s bytes (an estimate of the sums held) and [`MAX_ENTRIES`] runs, the least
//! recently used given up first. The groups a grouped scan keeps for the explaining run
//! ([`Scan::run_keeping`]) are never held here: a later request that needs them runs the
//! settling scan again (its result the same), so the table holds sums only.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use recite_core::catalog::{self, Study};
use recite_core::resolve::{Schema, Schemas, TableError};
use recite_core::scan::{EngineError, Job, JobKey, Kept, Outcome, Reading, Scan, ScanStats};
use recite_core::version::{FileDigest, Found, Pin};
use recite_engine::engine::Engine;

/// Most runs kept, whatever their size.
pub const MAX_ENTRIES: usize = 4096;

/// The runs kept warm, bounded by bytes and count, least recently used evicted first.
pub struct Warm {
    table: Mutex<Table>,
    max_bytes: usize,
    /// Runs given from the table.
    hits: AtomicU64,
}

/// Which run of the engine: what a run's result depends on apart from the data.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Call {
    /// [`Scan::run`] of these jobs.
    Run(Vec<JobKey>),
    /// [`Scan::run_keeping`] of these jobs, taking these anticipated ones along.
    Keeping(Vec<JobKey>, Vec<JobKey>),
    /// [`Scan::run_again`] of these jobs after the settling run `Keeping` (whose kept groups
    /// decide which of them are summed without a scan, and so what the run reports it read),
    /// read as [`Reading`] says (values alone may lack second moments).
    Again(Vec<JobKey>, Arc<Call>, Reading),
}

/// One run's result, and the identity of the tables it read.
struct Entry {
    tables: Vec<(PathBuf, String)>,
    outcomes: Vec<Outcome>,
    stats: ScanStats,
    bytes: usize,
    used: u64,
}

#[derive(Default)]
struct Table {
    runs: HashMap<Call, Entry>,
    bytes: usize,
    clock: u64,
}

impl Warm {
    /// A table holding at most about `max_bytes` of sums (0: nothing is kept).
    pub fn new(max_bytes: usize) -> Warm {
        Warm { table: Mutex::new(Table::default()), max_bytes, hits: AtomicU64::new(0) }
    }

    /// Whether anything is kept at all.
    pub fn is_on(&self) -> bool {
        self.max_bytes > 0
    }

    /// The runs kept and their estimated bytes (for tests and the log).
    pub fn held(&self) -> (usize, usize) {
        let t = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        (t.runs.len(), t.bytes)
    }

    /// How many runs the table answered.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// The kept result of `call` if it was made over files of identity `tables`; a result over
    /// other files is dropped.
    fn get(&self, call: &Call, tables: &[(PathBuf, String)]) -> Option<(Vec<Outcome>, ScanStats)> {
        let mut t = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        t.clock += 1;
        let now = t.clock;
        let fresh = t.runs.get(call).map(|e| e.tables == tables)?;
        if !fresh {
            let stale = t.runs.remove(call).map_or(0, |e| e.bytes);
            t.bytes -= stale;
            return None;
        }
        let e = t.runs.get_mut(call)?;
        e.used = now;
        self.hits.fetch_add(1, Ordering::Relaxed);
        Some((e.outcomes.clone(), e.stats.clone()))
    }

    /// Keeps `call`'s result, evicting the least recently used runs past the bounds. A result
    /// larger than the bound is not kept.
    fn put(&self, call: Call, tables: Vec<(PathBuf, String)>, outcomes: Vec<Outcome>, stats: ScanStats) {
        let bytes =
            call_bytes(&call) + outcomes.iter().map(outcome_bytes).sum::<usize>() + stats_bytes(&stats);
        if bytes > self.max_bytes {
            return;
        }
        let mut t = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        t.clock += 1;
        let used = t.clock;
        if let Some(old) = t.runs.insert(call, Entry { tables, outcomes, stats, bytes, used }) {
            t.bytes -= old.bytes;
        }
        t.bytes += bytes;
        while t.bytes > self.max_bytes || t.runs.len() > MAX_ENTRIES {
            // A linear pass: evictions are rare and the table holds at most MAX_ENTRIES.
            let Some(oldest) = t.runs.iter().min_by_key(|(_, e)| e.used).map(|(c, _)| c.clone()) else {
                break;
            };
            let gone = t.runs.remove(&oldest).map_or(0, |e| e.bytes);
            t.bytes -= gone;
        }
    }
}

/// The engine, with its runs kept in (and given from) the warm table.
pub struct WarmScan<'a> {
    /// The engine the runs that are not kept go to.
    pub engine: &'a Engine,
    /// Where runs are kept.
    pub warm: &'a Warm,
}

/// What [`WarmScan::run_keeping`] hands the session for its explaining run: which settling run
/// it was, and the engine's kept groups when that run scanned (`None` when it came from the
/// warm table: the settling run is then scanned again only if the explaining run is not kept).
struct Settled {
    call: Arc<Call>,
    jobs: Vec<Job>,
    anticipated: Vec<Job>,
    kept: Option<Kept>,
}

impl WarmScan<'_> {
    /// The identity of every table `jobs` read, by location in order; `None` when one has none
    /// (its runs are never kept).
    fn identities<'j>(&self, jobs: impl Iterator<Item = &'j Job>) -> Option<Vec<(PathBuf, String)>> {
        let mut locations: Vec<&PathBuf> = jobs.map(|j| &j.rows.location).collect();
        locations.sort();
        locations.dedup();
        locations.into_iter().map(|l| Some((l.clone(), self.engine.table_identity(l)?))).collect()
    }

    /// `call`'s result from the warm table, else from `run` (kept when every job was summed
    /// and the tables did not change while it ran).
    fn through<K>(
        &self,
        call: Call,
        reads: &[&[Job]],
        run: impl FnOnce() -> (Vec<Result<Outcome, EngineError>>, ScanStats, K),
    ) -> (Vec<Result<Outcome, EngineError>>, ScanStats, Option<K>) {
        let all = || reads.iter().flat_map(|jobs| jobs.iter());
        let before = if self.warm.is_on() { self.identities(all()) } else { None };
        let Some(before) = before else {
            let (outcomes, stats, k) = run();
            return (outcomes, stats, Some(k));
        };
        if let Some((outcomes, stats)) = self.warm.get(&call, &before) {
            return (outcomes.into_iter().map(Ok).collect(), stats, None);
        }
        let (outcomes, stats, k) = run();
        let summed: Option<Vec<Outcome>> = outcomes.iter().map(|o| o.as_ref().ok().cloned()).collect();
        if let Some(summed) = summed
            && self.identities(all()).as_ref() == Some(&before)
        {
            self.warm.put(call, before, summed, stats.clone());
        }
        (outcomes, stats, Some(k))
    }
}

fn keys(jobs: &[Job]) -> Vec<JobKey> {
    jobs.iter().map(JobKey::of).collect()
}

impl Schemas for WarmScan<'_> {
    fn schema(&self, study: &Study, table: &catalog::Table) -> Result<Arc<Schema>, TableError> {
        Schemas::schema(self.engine, study, table)
    }

    fn version(
        &self,
        study: &Study,
        table: &catalog::Table,
        pin: Option<&Pin>,
    ) -> Result<Option<Found>, TableError> {
        Schemas::version(self.engine, study, table, pin)
    }

    fn as_of(&self) -> Option<&str> {
        Schemas::as_of(self.engine)
    }

    fn saved_version(&self, study: &str, table: &str) -> Option<u64> {
        Schemas::saved_version(self.engine, study, table)
    }

    fn schema_at(&self, found: &Found) -> Result<Arc<Schema>, TableError> {
        Schemas::schema_at(self.engine, found)
    }

    fn file_digests(&self, study: &Study, table: &catalog::Table) -> Vec<FileDigest> {
        Schemas::file_digests(self.engine, study, table)
    }
}

impl Scan for WarmScan<'_> {
    fn run(&self, jobs: &[Job]) -> (Vec<Result<Outcome, EngineError>>, ScanStats) {
        let (outcomes, stats, _) = self.through(Call::Run(keys(jobs)), &[jobs], || {
            let (o, s) = Scan::run(self.engine, jobs);
            (o, s, ())
        });
        (outcomes, stats)
    }

    fn run_keeping(
        &self,
        jobs: &[Job],
        anticipated: &[Job],
    ) -> (Vec<Result<Outcome, EngineError>>, ScanStats, Option<Kept>) {
        let call = Arc::new(Call::Keeping(keys(jobs), keys(anticipated)));
        let (outcomes, stats, kept) = self.through((*call).clone(), &[jobs, anticipated], || {
            Scan::run_keeping(self.engine, jobs, anticipated)
        });
        let settled =
            Settled { call, jobs: jobs.to_vec(), anticipated: anticipated.to_vec(), kept: kept.flatten() };
        (outcomes, stats, Some(Arc::new(settled) as Kept))
    }

    fn run_again(
        &self,
        jobs: &[Job],
        kept: Option<&Kept>,
        reading: Reading,
    ) -> (Vec<Result<Outcome, EngineError>>, ScanStats) {
        let Some(settled) = kept.and_then(|k| k.downcast_ref::<Settled>()) else {
            // Not a settling run of this table's: as the engine would, without its groups.
            return Scan::run_again(self.engine, jobs, None, reading);
        };
        let call = Call::Again(keys(jobs), settled.call.clone(), reading);
        let (outcomes, stats, _) = self.through(call, &[jobs], || {
            let groups = match &settled.kept {
                Some(k) => Some(k.clone()),
                // The settling run came from the warm table: scanned again for its groups, so
                // that this run reads what it would have (its own result is already known).
                None => Scan::run_keeping(self.engine, &settled.jobs, &settled.anticipated).2,
            };
            let (o, s) = Scan::run_again(self.engine, jobs, groups.as_ref(), reading);
            (o, s, ())
        });
        (outcomes, stats)
    }
}

/// Roughly the bytes a kept run's key holds.
fn call_bytes(call: &Call) -> usize {
    let of = |keys: &[JobKey]| keys.iter().map(|k| k.bytes().len() + 48).sum::<usize>();
    match call {
        Call::Run(k) => of(k),
        Call::Keeping(k, a) => of(k) + of(a),
        Call::Again(k, ..) => of(k),
    }
}

/// Roughly the bytes an outcome holds (its vectors and strings; not exact, a bound's measure).
fn outcome_bytes(o: &Outcome) -> usize {
    let s = &o.sums;
    let f = std::mem::size_of::<f64>();
    std::mem::size_of::<Outcome>()
        + o.vars.len() * std::mem::size_of::<recite_core::scan::Var>()
        + (s.totals.len() + s.counts.len()) * f
        + s.moments.len() * 4 * f
        + s.psus.iter().map(|(h, t)| h.len() + t.len() * f + 48).sum::<usize>()
        + s.replicates.as_ref().map_or(0, |r| r.totals.iter().map(|t| t.len() * f + 24).sum::<usize>())
        + o.cells.iter().map(|(b, c, _)| b.len() + c.len() + 56).sum::<usize>()
}

/// Roughly the bytes of a run's statistics (its plans' words).
fn stats_bytes(s: &ScanStats) -> usize {
    std::mem::size_of::<ScanStats>()
        + s.plans.iter().map(|p| p.table.len() + p.reason.len() + 64).sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use recite_core::extractor::Registry;
    use recite_core::report::{DataLayer, DataSource};
    use recite_core::settle::pipeline;

    /// The bundled data layer (the Versant tracker, NHANES II) copied into a folder of its own,
    /// which a test may edit.
    fn layer() -> (tempfile::TempDir, DataLayer) {
        let dir = tempfile::tempdir().unwrap();
        let bundled = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets");
        for (study, files) in
            [("versant", ["study.toml", "versant_flat.parquet"]), ("nhanes2", ["study.toml", "nhanes2.csv"])]
        {
            std::fs::create_dir(dir.path().join(study)).unwrap();
            for f in files {
                std::fs::copy(bundled.join(study).join(f), dir.path().join(study).join(f)).unwrap();
            }
        }
        let path = dir.path().to_string_lossy().into_owned();
        (dir, DataLayer { path, source: DataSource::Flag, warning: None })
    }

    fn citation(name: &str) -> Vec<u8> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/citations").join(name);
        std::fs::read(p).unwrap()
    }

    #[test]
    fn a_verification_asked_again_is_answered_from_the_warm_table_until_its_table_changes() {
        let (dir, layer) = layer();
        let catalog = recite_engine::sav::load_layer(&layer).unwrap();
        let registry = Registry::load(None).unwrap();
        let engine = Engine::new();
        let warm = Warm::new(64 << 20);
        let scan = WarmScan { engine: &engine, warm: &warm };
        let verify = |name: &str, scan: &dyn Scan| {
            let (s, stats) = recite_core::verify::verify(
                "-",
                &citation(name),
                None,
                &catalog,
                &registry,
                scan,
                pipeline::Options::default(),
            )
            .unwrap();
            let report = recite_core::verify::report("-", s, stats, layer.clone());
            recite_core::report::json::render(&report)
        };
        let considered = "versant-w6-considered.json";
        let cold = verify(considered, &engine);
        assert_eq!(verify(considered, &scan), cold, "the first, scanned");
        assert_eq!(warm.hits(), 0, "nothing to answer from yet");
        assert_eq!(verify(considered, &scan), cold, "the second, warm");
        assert_eq!(warm.hits(), 1, "the second run was scanned again");
        // The same rows with another number claimed (47%, not reproduced): its settling run is
        // the one kept, its explaining run is new, then kept too.
        let discrepant = "versant-w6-discrepant.json";
        let cold = verify(discrepant, &engine);
        assert_eq!(verify(discrepant, &scan), cold, "a similar citation, its settling run warm");
        assert_eq!(warm.hits(), 2);
        assert_eq!(verify(discrepant, &scan), cold, "both its runs warm");
        assert_eq!(warm.hits(), 4);
        let (runs, bytes) = warm.held();
        assert!(runs == 2 && bytes > 0, "{runs} runs, {bytes} bytes");
        // Written again, even with the same bytes: its times move, so nothing is answered warm.
        let table = dir.path().join("versant/versant_flat.parquet");
        std::fs::write(&table, std::fs::read(&table).unwrap()).unwrap();
        let cold = verify(considered, &engine);
        assert_eq!(verify(considered, &scan), cold);
        assert_eq!(warm.hits(), 4, "a run over changed files was answered warm");
    }

    #[test]
    fn the_warm_table_keeps_within_its_bytes_and_gives_up_the_least_recently_used() {
        let (_dir, layer) = layer();
        let catalog = recite_engine::sav::load_layer(&layer).unwrap();
        let registry = Registry::load(None).unwrap();
        let engine = Engine::new();
        let run = |warm: &Warm, name: &str| {
            let scan = WarmScan { engine: &engine, warm };
            let options = pipeline::Options::default();
            recite_core::verify::verify("-", &citation(name), None, &catalog, &registry, &scan, options)
                .unwrap();
        };
        // Three runs: Versant's settling run (shared by both W6 citations), the discrepant
        // citation's explaining run, NHANES's settling run; sized on a table with room for all.
        let sizes = Warm::new(64 << 20);
        run(&sizes, "versant-w6-considered.json");
        let (_, first) = sizes.held();
        run(&sizes, "versant-w6-discrepant.json");
        run(&sizes, "nhanes2-zinc.json");
        let (runs, all) = sizes.held();
        assert_eq!(runs, 3);
        // Room for the last two only: the least recently used (Versant's settling run) goes.
        let bound = all - first;
        let warm = Warm::new(bound);
        for name in ["versant-w6-considered.json", "versant-w6-discrepant.json", "nhanes2-zinc.json"] {
            run(&warm, name);
            assert!(warm.held().1 <= bound, "{} of {bound} bytes", warm.held().1);
        }
        assert_eq!(warm.held().0, 2);
        let hits = warm.hits();
        run(&warm, "nhanes2-zinc.json");
        assert_eq!(warm.hits(), hits + 1, "the latest run is kept");
        run(&warm, "versant-w6-considered.json");
        assert_eq!(warm.hits(), hits + 1, "the least recently used run was given up");
        assert!(warm.held().1 <= bound);
        assert!(!Warm::new(0).is_on());
    }
}
