//! Explanations: for a claim not reproduced, the nearby computations an agent plausibly ran
//! instead — unweighted, another declared weight, the previous or next period, a sibling column
//! of the same question, another declared base or none, percent vs fraction, another measure
//! of the same extractor — and which of them reproduce the claim, best first.
//!
//! Variants are ordinary engine jobs, so all variants of all unsettled claims on a table run in
//! ONE more fused scan of that table; a run where everything reproduces pays nothing.

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};

use crate::catalog::{self, Catalog};
use crate::extractor::{Extractor, Measure, Registry, Unit};
use crate::resolve::Resolved;
use crate::scan::{EngineError, Job, JobKey, Outcome};
use crate::settle::compare;
use crate::settle::verdict::{Cause, Comparison, Explanation, Kind, Settlement, alternative_id};
use crate::stats::{self, Estimate, Method};

/// Most sibling columns tried as explanations of one claim: the nearest in the grid's order. A
/// question may have thousands of columns, and every wrong claim would otherwise add a job for
/// each to the explanation scan.
pub const MAX_SIBLING_VARIANTS: usize = 16;

/// A variant computation of one claim.
#[derive(Debug, Clone)]
pub struct Variant {
    /// Which claim (index into the batch).
    pub claim: usize,
    /// The kind of mistake it models.
    pub cause: Cause,
    /// What changed, in words (`on W5 (March 2026)`, `without weights`, `on column s14r4`).
    pub what: String,
    /// The resolved claim under the variant (measures may differ for a sibling column): its
    /// rows and measures are the job to run ([`Variant::job`]).
    pub resolved: Resolved,
}

impl Variant {
    /// The job to run: the variant's rows and measures, no cells.
    pub fn job(&self) -> Job {
        Job { rows: self.resolved.rows.clone(), measures: self.resolved.measures.clone(), cells: Vec::new() }
    }

    /// The key of [`Variant::job`], without building the job (a batch makes ~20 variants for
    /// each claim not reproduced, and most share their job with another claim's).
    pub fn key(&self) -> JobKey {
        JobKey::of_parts(&self.resolved.rows, &self.resolved.measures, &[])
    }

    /// The variant as a what-if alternative: its kind and the catalog name it uses (empty for
    /// `unweighted` and `nobase`).
    pub fn alternative(&self) -> Option<(Kind, String)> {
        let kind = self.cause.alternative()?;
        let name = match kind {
            Kind::Period => self.resolved.period.clone(),
            Kind::Weight => self.resolved.rows.weight.clone().unwrap_or_default(),
            Kind::Base => self.resolved.base.clone(),
            Kind::Column => self.resolved.rows.column.clone(),
            Kind::Unweighted | Kind::NoBase | Kind::Measure => String::new(),
        };
        Some((kind, name))
    }
}

/// Sibling columns' measures under an extractor, expanded once for a batch: every claim not
/// reproduced on a question tries the same siblings ([`variants`]), and expanding an extractor
/// (its templates filled, its predicates parsed, the column's codes sorted) cost more than
/// copying what it gave: a third of building 10k wrong claims' variants.
#[derive(Default)]
pub struct Expansions(RwLock<HashMap<[String; 4], Option<Vec<Measure>>>>);

impl Expansions {
    /// `extractor`'s measures on `column` (described by `meta`) of `table` in `study`; `None`
    /// when the extractor does not apply to it.
    fn of(
        &self,
        extractor: &Extractor,
        (study, table, column): (&str, &str, &str),
        meta: &catalog::Column,
    ) -> Option<Vec<Measure>> {
        let key = [study, table, column, &extractor.name].map(str::to_string);
        if let Some(m) = self.0.read().unwrap_or_else(PoisonError::into_inner).get(&key) {
            return m.clone();
        }
        let m = extractor.expand(meta).ok();
        self.0.write().unwrap_or_else(PoisonError::into_inner).entry(key).or_insert(m).clone()
    }
}

/// The variants worth computing for one resolved claim; `expansions` keeps the siblings'
/// measures for the claims after it.
pub fn variants(
    claim: usize,
    r: &Resolved,
    catalog: &Catalog,
    registry: &Registry,
    expansions: &Expansions,
) -> Vec<Variant> {
    let Ok(study) = catalog.study(&r.study) else { return Vec::new() };
    let Ok(table) = study.table(&r.rows.table) else { return Vec::new() };
    let mut out = Vec::new();
    let mut push = |cause: Cause, what: String, v: Resolved| {
        out.push(Variant { claim, cause, what, resolved: v });
    };
    if let Ok(period) = study.period(&r.period) {
        let (prev, next) = study.neighbours(period);
        for (cause, p) in [(Cause::PreviousPeriod, prev), (Cause::NextPeriod, next)] {
            if let Some(p) = p {
                push(cause, format!("on {}", p.name), on_period(r, p));
            }
        }
    }
    if r.rows.weight.is_some() {
        let mut v = r.clone();
        v.rows.weight = None;
        // Replicate weights carry a weighted estimate's variance, as resolving an unweighted
        // citation decides: an unweighted variant has none.
        v.rows.replicates = None;
        push(Cause::Unweighted, "without weights".into(), v);
    }
    for (cause, what, v) in other_weights_and_bases(r, study, table) {
        push(cause, what, v);
    }
    let mut v = r.clone();
    v.rows.base_filter = None;
    v.base = "no base filter".into();
    push(Cause::NoBase, "with no base filter (every row of the period)".into(), v);
    if let Ok(extractor) = registry.get(&r.function) {
        let none = catalog::Column::default();
        for sib in table.nearest_siblings(&r.rows.column, MAX_SIBLING_VARIANTS).0 {
            let meta = table.columns.get(sib).unwrap_or(&none);
            let Some(measures) = expansions.of(extractor, (&r.study, &r.rows.table, sib), meta) else {
                continue;
            };
            let mut v = r.clone();
            // The base filter follows the column it is about.
            if let Ok(b) = study.base(&r.base) {
                v.rows.base_filter = Some(catalog::base_filter(b, sib));
            }
            v.rows.column = sib.to_string();
            v.rows.missing = meta.missing.clone();
            v.rows.missing_ranges = meta.missing_ranges.clone();
            v.column_label = meta.label.clone();
            v.measures = measures;
            let label = if meta.label.is_empty() { String::new() } else { format!(" ({})", meta.label) };
            push(Cause::SiblingColumn, format!("on column {sib}{label}"), v);
        }
    }
    out
}

/// The claim under each other declared weight of its table and each other base of its study.
fn other_weights_and_bases(
    r: &Resolved,
    study: &catalog::Study,
    table: &catalog::Table,
) -> Vec<(Cause, String, Resolved)> {
    let mut out = Vec::new();
    for w in table.weights.iter().filter(|w| Some(*w) != r.rows.weight.as_ref()) {
        let mut v = r.clone();
        v.rows.weight = Some(w.clone());
        out.push((Cause::OtherWeight, format!("with weight {w}"), v));
    }
    for b in study.bases.iter().filter(|b| b.name != r.base) {
        let mut v = r.clone();
        v.base = b.name.clone();
        v.rows.base_filter = Some(catalog::base_filter(b, &r.rows.column));
        out.push((Cause::OtherBase, format!("on base {:?}", b.name), v));
    }
    out
}

/// What the variants of `r` a weight or a base away need of the rows its own scan reads: per
/// other weight of its table and other base of its study, a job on its column with no period
/// and no measures. The settling scan takes them along ([`crate::scan::Scan::run_keeping`]),
/// so the explaining run finds those variants' sums in what that scan kept instead of scanning
/// again. They depend on the claim's table and column only, so one claim per column will do.
pub fn anticipated(r: &Resolved, catalog: &Catalog) -> Vec<Job> {
    let Ok(study) = catalog.study(&r.study) else { return Vec::new() };
    let Ok(table) = study.table(&r.rows.table) else { return Vec::new() };
    other_weights_and_bases(r, study, table)
        .into_iter()
        .map(|(_, _, v)| {
            // Replicate weights are tapped per row: never taken along.
            let rows = crate::resolve::Rows { period_filter: None, replicates: None, ..v.rows };
            Job { rows, measures: Vec::new(), cells: Vec::new() }
        })
        .collect()
}

/// The claim computed on another period of its study: its filter and fielded dates.
pub fn on_period(r: &Resolved, p: &catalog::Period) -> Resolved {
    let mut v = r.clone();
    v.period = p.name.clone();
    v.fielded = p.fielded.clone();
    v.rows.period_filter = Some(p.filter.clone());
    v
}

/// The note for a claim whose question has more sibling columns than were tried as explanations:
/// nothing found among them does not mean no sibling reproduces the claim.
pub fn limits_note(r: &Resolved, catalog: &Catalog) -> Option<String> {
    let table = catalog.study(&r.study).ok()?.table(&r.rows.table).ok()?;
    let (_, total) = table.nearest_siblings(&r.rows.column, 0);
    (total > MAX_SIBLING_VARIANTS).then(|| {
        format!(
            "only the {MAX_SIBLING_VARIANTS} sibling columns nearest to {} (of {total} in its question) \
             were tried as explanations",
            r.rows.column
        )
    })
}

/// The note for a claim whose explanation scan the Ballista cluster failed (its deadline
/// passed, an executor was lost after the first scan): said on the claim, as the first scan's
/// failure is, never left to look like a claim nothing explains.
pub fn cluster_note<'a>(
    outcomes: impl IntoIterator<Item = &'a Result<Outcome, EngineError>>,
) -> Option<String> {
    outcomes.into_iter().find_map(|o| match o {
        Err(e @ EngineError::Cluster(_)) => Some(format!(
            "not every explanation was looked for: the scan of its variants (previous period, \
             unweighted, …) failed on the cluster: {e}"
        )),
        _ => None,
    })
}

/// A variant as computed: its outcome, and the estimates of its measures from that outcome.
pub type Tried<'a> = (&'a Variant, &'a Outcome, &'a [Option<Estimate>]);

/// The estimates of a variant's measures from its outcome ([`judge`] takes them computed, so
/// variants that coincide across claims are estimated once).
pub fn estimates(job: &Job, out: &Outcome, method: Method) -> Vec<Option<Estimate>> {
    stats::estimate(&job.measures, &out.vars, &out.sums, method)
}

/// Judges the variants of one claim against its settlement; the explanations best first.
pub fn judge(s: &Settlement, claimed_n: u64, tried: &[Tried<'_>]) -> Vec<Explanation> {
    let mut found: Vec<(bool, f64, Explanation)> = Vec::new();
    // Each with its measure's place in the settlement, where a variant usually has it too.
    let compared: Vec<(usize, &str, Unit, &Comparison)> = s
        .measures
        .iter()
        .enumerate()
        .flat_map(|(j, m)| m.claims.iter().map(move |c| (j, m.name.as_str(), m.unit, c)))
        .collect();
    let base_failed = s.base.as_ref().is_some_and(|b| !b.matched);
    // Every declared base's rows are a subset of the rows with no base filter (same period,
    // column and weight), so a base that keeps as many rows keeps the very same rows: it is the
    // same computation, not a second explanation. It is named once, by the smaller change to the
    // citation — leaving the filter out — with the declared bases it coincides with.
    let no_base_n =
        tried.iter().find(|(v, ..)| v.cause == Cause::NoBase).map(|(_, o, _)| stats::base_facts(&o.sums).n);
    let same_as_no_base: Vec<&str> = tried
        .iter()
        .filter(|(v, o, _)| v.cause == Cause::OtherBase && Some(stats::base_facts(&o.sums).n) == no_base_n)
        .map(|(v, ..)| v.resolved.base.as_str())
        .collect();
    for (variant, out, estimates) in tried {
        if variant.cause == Cause::OtherBase && same_as_no_base.contains(&variant.resolved.base.as_str()) {
            continue;
        }
        let n = stats::base_facts(&out.sums).n;
        let mut all = !compared.is_empty();
        let mut distance = 0.0;
        let mut first = None;
        let mut wrong_quoted = false;
        for (j, name, unit, c) in &compared {
            let measures = &variant.resolved.measures;
            let i = if measures.get(*j).is_some_and(|m| m.name == *name) {
                Some(*j)
            } else {
                measures.iter().position(|m| m.name == *name)
            };
            let fit = i.and_then(|i| estimates[i].as_ref()).map(|e| compare::fit(*unit, e, &c.claimed));
            match fit {
                Some(fit) if fit.matched => {
                    distance += (fit.shown - c.claimed.value).abs() / fit.tolerance.max(1e-12);
                    // Quote the first number that was wrong, not one that was right anyway.
                    if first.is_none() || (!c.matched && !wrong_quoted) {
                        first = Some((c.claimed.text.as_str(), *name));
                        wrong_quoted = !c.matched;
                    }
                }
                _ => all = false,
            }
        }
        let base_ok = n == claimed_n;
        // A variant explains a wrong number by reproducing every claimed number; it explains a
        // base mismatch alone by reproducing base n (with the numbers still right).
        let explains = if compared.iter().any(|(_, _, _, c)| !c.matched) {
            all
        } else {
            base_failed && base_ok && (all || compared.is_empty())
        };
        if !explains {
            continue;
        }
        let lead = match &first {
            Some((text, name)) => format!("{text} ({name}) is what {} gives", variant.resolved.function),
            None => format!("base n {claimed_n} is what {} gives", variant.resolved.function),
        };
        let why = variant.cause.wording();
        let also = if base_ok { format!(", with base n {n}") } else { format!(" (base n there: {n})") };
        let what = if variant.cause == Cause::NoBase && !same_as_no_base.is_empty() {
            let bases: Vec<String> = same_as_no_base.iter().map(|b| format!("{b:?}")).collect();
            format!("{} — the same rows as base {}", variant.what, bases.join(", "))
        } else {
            variant.what.clone()
        };
        found.push((
            base_ok,
            distance,
            Explanation {
                cause: variant.cause,
                message: format!("{lead} {what}{also}: {why}"),
                reproduces_base: base_ok,
                alternative: variant.alternative().map(|(kind, name)| alternative_id(kind, &name)),
            },
        ));
    }
    // Without computing anything: another measure of the same extractor, percent vs fraction.
    for (_, name, unit, c) in compared.iter().filter(|(_, _, _, c)| !c.matched) {
        for m in s.measures.iter().filter(|m| m.name != *name && m.unit == *unit) {
            if let Some(fit) = m.estimate.as_ref().map(|e| compare::fit(m.unit, e, &c.claimed))
                && fit.matched
            {
                found.push((
                    !base_failed,
                    (fit.shown - c.claimed.value).abs() / fit.tolerance.max(1e-12),
                    Explanation {
                        cause: Cause::OtherMeasure,
                        message: format!(
                            "{} is the {} measure, not {name}: the claim likely read the wrong one",
                            c.claimed.text, m.name
                        ),
                        reproduces_base: !base_failed,
                        alternative: Some(alternative_id(Kind::Measure, &m.name)),
                    },
                ));
            }
        }
        if *unit == Unit::Proportion
            && let Some(e) = s.measures.iter().find(|m| m.name == *name).and_then(|m| m.estimate)
        {
            let as_percent_of_fraction = !c.percent;
            let other = if as_percent_of_fraction { e.value * 100.0 } else { e.value };
            // A whole number read as a fraction only explains an exact 0 or 1, never half the range.
            let tolerance =
                if !as_percent_of_fraction && c.claimed.decimals <= 0 { 0.0 } else { c.claimed.half_unit() };
            if (other - c.claimed.value).abs() <= tolerance + 1e-12 {
                let message = if as_percent_of_fraction {
                    format!(
                        "{} matches {name} read as a percent ({:.2}%): the claim likely dropped the % sign",
                        c.claimed.text,
                        e.value * 100.0
                    )
                } else {
                    format!(
                        "{} matches {name} read as a fraction ({:.4}): the claim likely put a fraction where a percent belongs",
                        c.claimed.text, e.value
                    )
                };
                found.push((
                    !base_failed,
                    0.0,
                    Explanation {
                        cause: Cause::PercentFraction,
                        message,
                        reproduces_base: !base_failed,
                        alternative: None,
                    },
                ));
            }
        }
    }
    // Closeness is rounded before ties are broken by cause and wording, so floating-point noise
    // in the last bits never reorders explanations between runs.
    let key = |d: f64| (d * 1e6).round() as i64;
    found.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(key(a.1).cmp(&key(b.1)))
            .then(a.2.cause.cmp(&b.2.cause))
            .then(a.2.message.cmp(&b.2.message))
    });
    found.into_iter().map(|(_, _, e)| e).collect()
}
