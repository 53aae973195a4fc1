//! Explanations: for a claim not reproduced, the nearby computations an agent plausibly ran
//! instead — unweighted, another declared weight, the previous or next period, a sibling column
//! of the same question, another declared base or none, percent vs fraction, another measure
//! of the same extractor — and which of them reproduce the claim, best first.
//!
//! Variants are ordinary engine jobs, so all variants of all unsettled claims on a table run in
//! ONE more fused scan of that table; a run where everything reproduces pays nothing.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use serde::Serialize;

use crate::catalog::{self, Catalog};
use crate::extractor::{Extractor, Measure, Registry, Unit};
use crate::resolve::{Resolved, Rows};
use crate::scan::key::Canonical;
use crate::scan::{EngineError, Job, JobKey, Outcome};
use crate::settle::compare;
use crate::settle::verdict::{Cause, Comparison, Explanation, Kind, Settlement, alternative_id};
use crate::stats::{self, Method};

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
/// reproduced on a question tries the same siblings ([`plans`]), and expanding an extractor
/// (its templates filled, its predicates parsed, the column's codes sorted) cost more than
/// copying what it gave: a third of building 10k wrong claims' variants. Shared, not copied.
#[derive(Default)]
pub struct Expansions(RwLock<HashMap<String, Option<Arc<[Measure]>>>>);

impl Expansions {
    /// `extractor`'s measures on `column` (described by `meta`) of `table` in `study`; `None`
    /// when the extractor does not apply to it.
    fn of(
        &self,
        extractor: &Extractor,
        (study, table, column): (&str, &str, &str),
        meta: &catalog::Column,
    ) -> Option<Arc<[Measure]>> {
        // One allocation a look-up; each part length-prefixed so no two keys run together.
        let mut key =
            String::with_capacity(study.len() + table.len() + column.len() + extractor.name.len() + 16);
        for part in [study, table, column, &extractor.name] {
            key.push_str(&part.len().to_string());
            key.push(':');
            key.push_str(part);
        }
        if let Some(m) = self.0.read().unwrap_or_else(PoisonError::into_inner).get(&key) {
            return m.clone();
        }
        let m = extractor.expand(meta).ok().map(Arc::from);
        self.0.write().unwrap_or_else(PoisonError::into_inner).entry(key).or_insert(m).clone()
    }
}

/// What a variant changes of its claim's resolution, borrowing what it changes to from the
/// catalog: a claim not reproduced tries ~20 of them, and most coincide with another claim's,
/// so the explaining run keys them without building the resolution each would make
/// ([`Planned::apply`] builds it, for the what-if alternatives).
#[derive(Debug, Clone)]
pub enum Change<'c> {
    /// Another period of the study.
    Period(&'c catalog::Period),
    /// No weight (and so no replicate weights).
    Unweighted,
    /// Another declared weight of the table.
    Weight(&'c str),
    /// Another declared base of the study.
    Base(&'c catalog::BaseDef),
    /// No base filter.
    NoBase,
    /// A sibling column of the same question, with its measures under the claim's extractor
    /// and the claim's base (when the study declares it) filled in for it.
    Sibling {
        /// The column's name.
        column: &'c str,
        /// What the catalog says of it (`None`: nothing).
        meta: Option<&'c catalog::Column>,
        /// The extractor's measures on it.
        measures: Arc<[Measure]>,
        /// The claim's base, which follows the column it is about.
        base: Option<&'c catalog::BaseDef>,
    },
}

/// The base name of a resolution without a base filter.
const NO_BASE: &str = "no base filter";

/// One variant of a claim, as planned: the kind of mistake it models and what it changes.
#[derive(Debug, Clone)]
pub struct Planned<'c> {
    /// The kind of mistake it models.
    pub cause: Cause,
    /// What it changes.
    pub change: Change<'c>,
}

impl<'c> Planned<'c> {
    /// What changed, in words (`on W5 (March 2026)`, `without weights`, `on column s14r4`).
    pub fn what(&self) -> String {
        match &self.change {
            Change::Period(p) => format!("on {}", p.name),
            Change::Unweighted => "without weights".into(),
            Change::Weight(w) => format!("with weight {w}"),
            Change::Base(b) => format!("on base {:?}", b.name),
            Change::NoBase => "with no base filter (every row of the period)".into(),
            Change::Sibling { column, meta, .. } => {
                match meta.map(|m| m.label.as_str()).filter(|l| !l.is_empty()) {
                    Some(label) => format!("on column {column} ({label})"),
                    None => format!("on column {column}"),
                }
            }
        }
    }

    /// The base the variant is on, `r` being the claim's resolution.
    pub fn base<'s>(&'s self, r: &'s Resolved) -> &'s str {
        match &self.change {
            Change::Base(b) => &b.name,
            Change::NoBase => NO_BASE,
            _ => &r.base,
        }
    }

    /// Its measures, `r` being the claim's resolution.
    pub fn measures<'s>(&'s self, r: &'s Resolved) -> &'s [Measure] {
        match &self.change {
            Change::Sibling { measures, .. } => measures,
            _ => &r.measures,
        }
    }

    /// The variant as a what-if alternative: its kind and the catalog name it uses (empty for
    /// `unweighted` and `nobase`).
    pub fn alternative(&self) -> Option<(Kind, &'c str)> {
        let kind = self.cause.alternative()?;
        let name = match (&self.change, kind) {
            (Change::Period(p), Kind::Period) => p.name.as_str(),
            (Change::Weight(w), Kind::Weight) => w,
            (Change::Base(b), Kind::Base) => b.name.as_str(),
            (Change::Sibling { column, .. }, Kind::Column) => column,
            _ => "",
        };
        Some((kind, name))
    }

    /// The rows the variant reads, `r` being the claim's resolution.
    pub fn rows(&self, r: &Resolved) -> Rows {
        let mut rows = r.rows.clone();
        match &self.change {
            Change::Period(p) => rows.period_filter = Some(p.filter.clone()),
            Change::Unweighted => {
                rows.weight = None;
                // Replicate weights carry a weighted estimate's variance, as resolving an
                // unweighted citation decides: an unweighted variant has none.
                rows.replicates = None;
            }
            Change::Weight(w) => rows.weight = Some(w.to_string()),
            Change::Base(b) => rows.base_filter = Some(catalog::base_filter(b, &r.rows.column)),
            Change::NoBase => rows.base_filter = None,
            Change::Sibling { column, meta, base, .. } => {
                // The base filter follows the column it is about.
                if let Some(b) = base {
                    rows.base_filter = Some(catalog::base_filter(b, column));
                }
                rows.column = column.to_string();
                rows.missing = meta.map(|m| m.missing.clone()).unwrap_or_default();
                rows.missing_ranges = meta.map(|m| m.missing_ranges.clone()).unwrap_or_default();
            }
        }
        rows
    }

    /// The variant's job: its rows and measures, no cells.
    pub fn job(&self, r: &Resolved) -> Job {
        Job { rows: self.rows(r), measures: self.measures(r).to_vec(), cells: Vec::new() }
    }

    /// The resolution the variant makes of `r`.
    pub fn apply(&self, r: &Resolved) -> Resolved {
        let mut v = Resolved { rows: self.rows(r), ..r.clone() };
        match &self.change {
            Change::Period(p) => {
                v.period = p.name.clone();
                v.fielded = p.fielded.clone();
            }
            Change::Base(b) => v.base = b.name.clone(),
            Change::NoBase => v.base = NO_BASE.into(),
            Change::Sibling { meta, measures, .. } => {
                v.column_label = meta.map(|m| m.label.clone()).unwrap_or_default();
                v.measures = measures.to_vec();
            }
            Change::Unweighted | Change::Weight(_) => {}
        }
        v
    }

    /// What makes the variant's job the job it is, without building it: equal keys, equal jobs.
    /// `own` is the claim's own column ([`Own::of`]). Variants of claims on different columns
    /// that make one job share a key where their columns are named alike (see [`Own`]).
    pub fn key(&self, r: &Resolved, own: &Own, extractor: &str) -> Canonical {
        let rows = &r.rows;
        let (mut period, mut base) = (rows.period_filter.as_deref(), rows.base_filter.as_deref());
        let (mut weight, mut replicates) = (rows.weight.as_deref(), rows.replicates.is_some());
        let filled;
        let named = |column| Column::Named {
            location: &rows.location,
            design: &rows.design,
            study: &r.study,
            table: &rows.table,
            column,
            extractor,
        };
        let mut column = if own.named { named(&rows.column) } else { Column::Own(own.id) };
        match &self.change {
            Change::Period(p) => period = Some(&p.filter),
            Change::Unweighted => (weight, replicates) = (None, false),
            Change::Weight(w) => weight = Some(w),
            Change::Base(b) => {
                filled = catalog::base_filter(b, &rows.column);
                base = Some(&filled);
            }
            Change::NoBase => base = None,
            Change::Sibling { column: sib, base: b, .. } => {
                if let Some(b) = b {
                    filled = catalog::base_filter(b, sib);
                    base = Some(&filled);
                }
                column = named(sib);
            }
        }
        // The replicate weights are the resolution's or none: which, is all that varies.
        Canonical::of(&(column, period, base, weight, replicates.then_some(own.id)))
    }
}

/// A claim's own column as its variants' keys name it: by a number among the batch's own
/// columns (equal numbers, equal canonical forms of [`own_column`]), and, where its measures
/// and missing codes are exactly what its names give a sibling ([`Expansions`]), by those
/// names, so its variants share jobs with other claims' sibling variants.
pub struct Own {
    /// Its number.
    pub id: u64,
    /// Whether its names decide it.
    pub named: bool,
}

impl Own {
    /// `r`'s own column, numbered by `number` (given [`own_column`] of `r`).
    pub fn of(
        r: &Resolved,
        catalog: &Catalog,
        registry: &Registry,
        expansions: &Expansions,
        number: impl FnOnce(Canonical) -> u64,
    ) -> Own {
        let own = own_column(r);
        let named = as_named(r, catalog, registry, expansions).is_some_and(|named| named == own);
        Own { id: number(own), named }
    }
}

/// What a variant's job is computed over apart from its rows' filters and weight: its table,
/// column and measures.
#[derive(Serialize)]
enum Column<'a> {
    /// The claim's own ([`own_column`], numbered).
    Own(u64),
    /// A column of the same files whose measures and missing codes its names decide
    /// ([`Expansions`]): a sibling, or the claim's own when [`Own::named`].
    Named {
        location: &'a std::path::Path,
        design: &'a Option<(String, String)>,
        study: &'a str,
        table: &'a str,
        column: &'a str,
        extractor: &'a str,
    },
}

/// The part of a resolution's job that its variants on its own column keep: the table's files
/// and design, the column, its missing codes and measures, and the replicate weights.
pub fn own_column(r: &Resolved) -> Canonical {
    let rows = &r.rows;
    Canonical::of(&(
        &rows.location,
        &rows.table,
        &rows.design,
        &rows.column,
        &rows.missing,
        &rows.missing_ranges,
        &rows.replicates,
        &r.measures,
    ))
}

/// [`own_column`] of `r` as its names would give it ([`Expansions`], the catalog's missing
/// codes): compared in canonical form, floats by their bits, as job keys compare them.
fn as_named(
    r: &Resolved,
    catalog: &Catalog,
    registry: &Registry,
    expansions: &Expansions,
) -> Option<Canonical> {
    let table = catalog.study(&r.study).ok()?.table(&r.rows.table).ok()?;
    let extractor = registry.get(&r.function).ok()?;
    let none = catalog::Column::default();
    let meta = table.columns.get(&r.rows.column).unwrap_or(&none);
    let measures = expansions.of(extractor, (&r.study, &r.rows.table, &r.rows.column), meta)?;
    let rows = &r.rows;
    Some(Canonical::of(&(
        &rows.location,
        &rows.table,
        &rows.design,
        &rows.column,
        &meta.missing,
        &meta.missing_ranges,
        &rows.replicates,
        &*measures,
    )))
}

/// The variants worth computing for one resolved claim, planned; `expansions` keeps the
/// siblings' measures for the claims after it.
pub fn plans<'c>(
    r: &Resolved,
    catalog: &'c Catalog,
    registry: &Registry,
    expansions: &Expansions,
) -> Vec<Planned<'c>> {
    let Ok(study) = catalog.study(&r.study) else { return Vec::new() };
    let Ok(table) = study.table(&r.rows.table) else { return Vec::new() };
    let mut out = Vec::new();
    let mut push = |cause: Cause, change: Change<'c>| out.push(Planned { cause, change });
    if let Ok(period) = study.period(&r.period) {
        let (prev, next) = study.neighbours(period);
        for (cause, p) in [(Cause::PreviousPeriod, prev), (Cause::NextPeriod, next)] {
            if let Some(p) = p {
                push(cause, Change::Period(p));
            }
        }
    }
    if r.rows.weight.is_some() {
        push(Cause::Unweighted, Change::Unweighted);
    }
    for (cause, change) in other_weights_and_bases(r, study, table) {
        push(cause, change);
    }
    push(Cause::NoBase, Change::NoBase);
    if let Ok(extractor) = registry.get(&r.function) {
        let base = study.base(&r.base).ok();
        for sib in table.nearest_siblings(&r.rows.column, MAX_SIBLING_VARIANTS).0 {
            let meta = table.columns.get(sib);
            let none = catalog::Column::default();
            let Some(measures) =
                expansions.of(extractor, (&r.study, &r.rows.table, sib), meta.unwrap_or(&none))
            else {
                continue;
            };
            push(Cause::SiblingColumn, Change::Sibling { column: sib, meta, measures, base });
        }
    }
    out
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
    plans(r, catalog, registry, expansions)
        .into_iter()
        .map(|p| Variant { claim, cause: p.cause, what: p.what(), resolved: p.apply(r) })
        .collect()
}

/// The claim under each other declared weight of its table and each other base of its study.
fn other_weights_and_bases<'c>(
    r: &Resolved,
    study: &'c catalog::Study,
    table: &'c catalog::Table,
) -> Vec<(Cause, Change<'c>)> {
    let weights = table.weights.iter().filter(|w| Some(*w) != r.rows.weight.as_ref());
    let bases = study.bases.iter().filter(|b| b.name != r.base);
    weights
        .map(|w| (Cause::OtherWeight, Change::Weight(w)))
        .chain(bases.map(|b| (Cause::OtherBase, Change::Base(b))))
        .collect()
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
        .map(|(_, change)| {
            let v = Planned { cause: Cause::OtherWeight, change }.apply(r);
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

/// A variant as computed, for [`judge`]: what it changed, and its job's outcome.
pub struct Tried<'a> {
    /// The variant.
    pub planned: &'a Planned<'a>,
    /// The base it is on ([`Planned::base`]).
    pub base: &'a str,
    /// The claim's extractor.
    pub function: &'a str,
    /// Its measures ([`Planned::measures`]).
    pub measures: &'a [Measure],
    /// Its job's sums.
    pub outcome: &'a Outcome,
    /// Its measures' values from them ([`values`]), in order.
    pub values: &'a [Option<f64>],
}

/// The values of a variant's measures from its outcome, without their intervals: judging
/// reads only the value, and variants that coincide across claims are valued once.
pub fn values(job: &Job, out: &Outcome, method: Method) -> Vec<Option<f64>> {
    stats::values(&job.measures, &out.vars, &out.sums, method)
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
        tried.iter().find(|t| t.planned.cause == Cause::NoBase).map(|t| stats::base_n(&t.outcome.sums));
    let same_as_no_base: Vec<&str> = tried
        .iter()
        .filter(|t| t.planned.cause == Cause::OtherBase && Some(stats::base_n(&t.outcome.sums)) == no_base_n)
        .map(|t| t.base)
        .collect();
    let any_wrong = compared.iter().any(|(_, _, _, c)| !c.matched);
    for t in tried {
        let cause = t.planned.cause;
        if cause == Cause::OtherBase && same_as_no_base.contains(&t.base) {
            continue;
        }
        let n = stats::base_n(&t.outcome.sums);
        let mut all = !compared.is_empty();
        let mut distance = 0.0;
        let mut first = None;
        let mut wrong_quoted = false;
        for (j, name, unit, c) in &compared {
            let measures = t.measures;
            let i = if measures.get(*j).is_some_and(|m| m.name == *name) {
                Some(*j)
            } else {
                measures.iter().position(|m| m.name == *name)
            };
            let fit = i.and_then(|i| t.values[i]).map(|v| compare::fit_value(*unit, v, &c.claimed));
            match fit {
                Some(fit) if fit.matched => {
                    distance += (fit.shown - c.claimed.value).abs() / fit.tolerance.max(1e-12);
                    // Quote the first number that was wrong, not one that was right anyway.
                    if first.is_none() || (!c.matched && !wrong_quoted) {
                        first = Some((c.claimed.text.as_str(), *name));
                        wrong_quoted = !c.matched;
                    }
                }
                // A claimed number it does not reproduce: it explains nothing, whatever the rest.
                _ => {
                    all = false;
                    break;
                }
            }
        }
        let base_ok = n == claimed_n;
        // A variant explains a wrong number by reproducing every claimed number; it explains a
        // base mismatch alone by reproducing base n (with the numbers still right).
        let explains = if any_wrong { all } else { base_failed && base_ok && (all || compared.is_empty()) };
        if !explains {
            continue;
        }
        let lead = match &first {
            Some((text, name)) => format!("{text} ({name}) is what {} gives", t.function),
            None => format!("base n {claimed_n} is what {} gives", t.function),
        };
        let why = cause.wording();
        let also = if base_ok { format!(", with base n {n}") } else { format!(" (base n there: {n})") };
        let what = if cause == Cause::NoBase && !same_as_no_base.is_empty() {
            let bases: Vec<String> = same_as_no_base.iter().map(|b| format!("{b:?}")).collect();
            format!("{} — the same rows as base {}", t.planned.what(), bases.join(", "))
        } else {
            t.planned.what()
        };
        found.push((
            base_ok,
            distance,
            Explanation {
                cause,
                message: format!("{lead} {what}{also}: {why}"),
                reproduces_base: base_ok,
                alternative: t.planned.alternative().map(|(kind, name)| alternative_id(kind, name)),
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
