//! A run through the cache: each job's entry looked up, what was found answered from it, the
//! rest scanned and written back, and what the cache did told as each table's plan.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use rayon::prelude::*;

use super::Cache;
use super::digest::Digest;
use super::entry::{Entry, finished_key, key, read_entry, read_finished, write_entry, write_finished};
use super::identity::{Identifier, canonical, volatile_call};
use super::trust::{Refused, warn};
use crate::engine::grouped;
use crate::engine::{EngineError, Job, Outcome, Outcomes, PlanChoice, ScanPlan, ScanStats, Scanned};

/// A job's address: which of the run's jobs it is (they are not moved during the run).
fn address(job: &Job) -> usize {
    job as *const Job as usize
}

/// What the cache did for one table in one run.
#[derive(Default)]
struct Tally {
    hits: usize,
    entries: usize,
    stale: usize,
    corrupt: usize,
    /// Entries refused as not trusted (warned about).
    untrusted: usize,
    /// Jobs never cached, as their declarations call a volatile function: one of them.
    volatile: usize,
    volatile_call: Option<String>,
}

impl Cache {
    /// `jobs`, those whose sums are kept here answered from this cache, the rest scanned by
    /// `scan` (one scan per table, of their columns only) and their sums written back; and the
    /// groups of the grouped scans it ran. `tables` tells each table's identity, which an
    /// entry must have been written for.
    pub(in crate::engine) fn answer(
        &self,
        tables: &Identifier<'_>,
        jobs: &[Job],
        scan: impl FnOnce(&[Job]) -> Scanned<'_>,
    ) -> (Outcomes, ScanStats, Vec<Arc<grouped::KeptGroups>>) {
        let _one_run = self.run.lock();
        let lookup = Lookup::new(tables, self, jobs);
        let first = lookup.first();
        let Found { bases, finished, mut tallies } = lookup.read(&first);
        let answered = lookup.answers(&bases, &finished);
        let missed: Vec<usize> = (0..jobs.len()).filter(|&i| answered[i].is_none()).collect();
        let picked: Vec<Job> = missed.iter().map(|&i| jobs[i].clone()).collect();
        let (scanned, mut stats, accumulated) =
            if missed.is_empty() { (Vec::new(), ScanStats::default(), Vec::new()) } else { scan(&picked) };
        let kept = grouped::kept(&accumulated);
        lookup.write_back(&first, accumulated, &missed, &scanned);
        for (job, a) in jobs.iter().zip(&answered) {
            if a.is_some() {
                tallies.entry(job.rows.table.clone()).or_default().hits += 1;
            }
        }
        let mut plans = cache_plans(tallies);
        plans.append(&mut stats.plans);
        stats.plans = plans;
        let mut scanned = scanned.into_iter();
        let outcomes = answered
            .into_iter()
            .map(|a| match a {
                Some(o) => o,
                None => scanned.next().unwrap_or_else(|| Err(EngineError::Internal("no outcome".into()))),
            })
            .collect();
        (outcomes, stats, kept)
    }
}

/// What a cached run knows of its jobs before it reads an entry: each table's identity (taken
/// before anything is read), which jobs are never cached, the entry files present, and each
/// job's keys.
struct Lookup<'a> {
    tables: &'a Identifier<'a>,
    cache: &'a Cache,
    jobs: &'a [Job],
    identities: HashMap<&'a PathBuf, Option<String>>,
    /// By job address, the volatile function a job's declarations call.
    volatile: HashMap<usize, String>,
    listing: HashMap<String, Vec<PathBuf>>,
    /// Per job: its rows' key (base sums, any measure) and its finished sums' key.
    keys: Vec<(String, String)>,
}

/// What a cached run's entries held for its keys, and what it made of them per table.
struct Found<'k> {
    /// By rows' key: the base sums, or why there are none.
    bases: HashMap<&'k str, Result<Entry, Refused>>,
    /// By finished sums' key, for rows without base sums: the finished sums, or why none.
    finished: HashMap<&'k str, Result<Outcome, Refused>>,
    tallies: BTreeMap<String, Tally>,
}

impl<'a> Lookup<'a> {
    fn new(tables: &'a Identifier<'a>, cache: &'a Cache, jobs: &'a [Job]) -> Lookup<'a> {
        let mut locations: Vec<&PathBuf> = jobs.iter().map(|j| &j.rows.location).collect();
        locations.sort();
        locations.dedup();
        let identities =
            locations.par_iter().map(|l| (*l, tables.declared_identity(l, cache.verify))).collect();
        // Jobs whose declarations call a volatile function (`now()`) are neither read from the
        // cache nor written to it: their rows are another set at every run.
        let state = tables.session().state();
        let volatile = jobs
            .iter()
            .filter_map(|j| Some((address(j), volatile_call(j, state.scalar_functions())?)))
            .collect();
        let listing = cache.listing();
        let canon: HashMap<&PathBuf, String> = locations.iter().map(|l| (*l, canonical(l))).collect();
        let keys = jobs
            .par_iter()
            .map(|j| {
                let location = &canon[&j.rows.location];
                let k = key(j, location);
                let f = finished_key(j, &k, location);
                (k, f)
            })
            .collect();
        Lookup { tables, cache, jobs, identities, volatile, listing, keys }
    }

    /// The identity a job's entries are read and written under: none (never cached) when its
    /// declarations are volatile or its table has none.
    fn id_of(&self, job: &Job) -> Option<String> {
        if self.volatile.contains_key(&address(job)) {
            return None;
        }
        self.identities.get(&job.rows.location).cloned().flatten()
    }

    /// The entry files present for a key.
    fn files(&self, k: &str) -> &[PathBuf] {
        self.listing.get(&Digest::of(k.as_bytes()).hex()).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The first job of each key, rows' and finished: the one its entry is read and written for.
    fn first(&self) -> HashMap<&str, &'a Job> {
        let mut first: HashMap<&str, &'a Job> = HashMap::new();
        for (j, (k, f)) in self.jobs.iter().zip(&self.keys) {
            first.entry(k.as_str()).or_insert(j);
            first.entry(f.as_str()).or_insert(j);
        }
        first
    }

    /// Reads each set of rows' base sums, then, for rows with none (columns the summed plan
    /// takes), their finished sums; and tallies per table what was found, warning once about
    /// each entry not trusted.
    fn read<'s>(&'s self, first: &HashMap<&'s str, &'a Job>) -> Found<'s> {
        let mut wanted: Vec<&str> = self.keys.iter().map(|(k, _)| k.as_str()).collect();
        wanted.sort_unstable();
        wanted.dedup();
        let bases: HashMap<&str, Result<Entry, Refused>> = wanted
            .par_iter()
            .map(|k| {
                let found = match self.id_of(first[k]) {
                    Some(id) => read_entry(self.files(k), k, &id),
                    None => Err(Refused::Absent),
                };
                (*k, found)
            })
            .collect();
        let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
        for job in self.jobs {
            if let Some(call) = self.volatile.get(&address(job)) {
                let t = tallies.entry(job.rows.table.clone()).or_default();
                t.volatile += 1;
                t.volatile_call.get_or_insert_with(|| call.clone());
            }
        }
        let mut warned: HashSet<String> = HashSet::new();
        let mut tally = |job: &Job, found: Option<&Refused>| {
            let t = tallies.entry(job.rows.table.clone()).or_default();
            match found {
                None => t.entries += 1,
                Some(Refused::Stale) => t.stale += 1,
                Some(Refused::Corrupt) => t.corrupt += 1,
                Some(Refused::Untrusted(why)) => {
                    t.untrusted += 1;
                    if warned.insert(why.clone()) {
                        warn(&format!("cache entry {why}: its rows are scanned"));
                    }
                }
                Some(Refused::Absent) => {}
            }
        };
        for (k, found) in &bases {
            tally(first[k], found.as_ref().err());
        }
        let mut finished_wanted: Vec<&str> = self
            .keys
            .iter()
            .filter(|(k, _)| bases.get(k.as_str()).is_some_and(|b| b.is_err()))
            .map(|(_, f)| f.as_str())
            .collect();
        finished_wanted.sort_unstable();
        finished_wanted.dedup();
        let finished: HashMap<&str, Result<Outcome, Refused>> = finished_wanted
            .par_iter()
            .map(|f| {
                let job = first[f];
                let found = match self.id_of(job) {
                    Some(id) => read_finished(self.files(f), f, &id, job),
                    None => Err(Refused::Absent),
                };
                (*f, found)
            })
            .collect();
        for (f, found) in &finished {
            tally(first[f], found.as_ref().err());
        }
        Found { bases, finished, tallies }
    }

    /// Each job's outcome from what was found: from its rows' base sums, else its finished
    /// sums; `None` when it must be scanned.
    fn answers(
        &self,
        bases: &HashMap<&str, Result<Entry, Refused>>,
        finished: &HashMap<&str, Result<Outcome, Refused>>,
    ) -> Vec<Option<Result<Outcome, EngineError>>> {
        self.jobs
            .par_iter()
            .zip(&self.keys)
            .map(|(job, (k, f))| match (bases.get(k.as_str()), finished.get(f.as_str())) {
                (Some(Ok(e)), _) => {
                    Some(grouped::outcome_from(job, &e.base, &e.psus, job.rows.design.is_some()))
                }
                (_, Some(Ok(out))) => Some(Ok(relabel(out, job))),
                _ => None,
            })
            .collect()
    }

    /// Writes what the scans computed, for tables whose files did not change meanwhile: the
    /// base sums the grouped scans accumulated, else the finished sums of the summed scans
    /// (`scanned`, the outcomes of the jobs `missed`). A cache that cannot be written costs the
    /// next run a scan, never a wrong answer.
    fn write_back(
        &self,
        first: &HashMap<&str, &'a Job>,
        accumulated: Vec<grouped::Accumulated<'_>>,
        missed: &[usize],
        scanned: &Outcomes,
    ) {
        let mut after: HashMap<PathBuf, Option<String>> = HashMap::new();
        let mut unchanged = |job: &Job| -> Option<String> {
            let before = self.id_of(job)?;
            let location = &job.rows.location;
            let now = after
                .entry(location.clone())
                .or_insert_with(|| self.tables.declared_identity(location, self.cache.verify));
            (now.as_deref() == Some(before.as_str())).then_some(before)
        };
        let folder = &self.cache.folder;
        let mut written: HashSet<String> = HashSet::new();
        for grouped::Accumulated { sums, psus, .. } in accumulated {
            for (job, base) in sums {
                let k = key(job, &canonical(&job.rows.location));
                let Some(job) = first.get(k.as_str()) else { continue };
                if let Some(id) = unchanged(job)
                    && written.insert(k.clone())
                {
                    let entry = Entry { base, psus: psus.clone() };
                    let _ = write_entry(folder, self.files(&k), &k, &id, &entry);
                }
            }
        }
        for (&i, out) in missed.iter().zip(scanned) {
            let (k, f) = &self.keys[i];
            if let Ok(out) = out
                && !written.contains(k)
                && let Some(id) = unchanged(&self.jobs[i])
                && written.insert(f.clone())
            {
                let _ = write_finished(folder, self.files(f), f, &id, out);
            }
        }
    }
}

/// What the cache did for each table it did anything for, as the plan its jobs took.
fn cache_plans(tallies: BTreeMap<String, Tally>) -> Vec<PlanChoice> {
    tallies
        .into_iter()
        .filter(|(_, t)| t.hits > 0 || t.stale > 0 || t.corrupt > 0 || t.untrusted > 0 || t.volatile > 0)
        .map(|(table, t)| {
            let mut reason = format!(
                "{} job(s) answered from {} cache entr{}; {} stale and {} corrupt entr{} rescanned",
                t.hits,
                t.entries,
                if t.entries == 1 { "y" } else { "ies" },
                t.stale,
                t.corrupt,
                if t.stale + t.corrupt == 1 { "y" } else { "ies" },
            );
            if t.untrusted > 0 {
                reason.push_str(&format!("; {} untrusted entr{} refused", t.untrusted, if t.untrusted == 1 { "y" } else { "ies" }));
            }
            if let Some(call) = &t.volatile_call {
                reason.push_str(&format!(
                    "; {} job(s) never cached: their declarations call {call}, which is not fixed by its arguments",
                    t.volatile
                ));
            }
            PlanChoice { table, plan: ScanPlan::Cache, reason }
        })
        .collect()
}

/// Finished sums read for one job, given to another with the same rows and measures: the
/// cells' names are the job's own.
fn relabel(out: &Outcome, job: &Job) -> Outcome {
    let cells =
        job.cells.iter().zip(&out.cells).map(|((b, c, _), (_, _, n))| (b.clone(), c.clone(), *n)).collect();
    Outcome { vars: out.vars.clone(), sums: out.sums.clone(), cells }
}
