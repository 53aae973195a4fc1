//! Compare: claimed numbers against recomputed measures → a [`Settlement`] with its [`Verdict`].
//!
//! Semantics (docs/semantics.md): a claimed number matches when |recomputed − claimed| is at most
//! half a unit of its last shown digit (closed interval), in the units it was written in; shares
//! may be claimed as fractions or percents; base n must match exactly.

use std::sync::Arc;

use crate::citation::Citation;
use crate::claim::{Claimed, fold};
use crate::extractor::{Measure, Unit};
use crate::resolve::Resolved;
use crate::scan::Outcome;
use crate::settle::audit::audit_warnings;
use crate::settle::verdict::{BaseRow, Comparison, Gap, MeasureRow, Rerun, Settlement, Verdict, show};
use crate::stats::{self, Estimate, Method};

/// Result keys that state the base's unweighted count rather than a measure.
const BASE_N_KEYS: &[&str] =
    &["n", "basen", "base", "unweightedn", "respondents", "samplesize", "count", "nbase"];
/// Result keys that say nothing about which measure a number is.
const GENERIC_KEYS: &[&str] =
    &["value", "share", "pct", "percent", "percentage", "result", "estimate", "number"];

/// Settles one resolved claim against the engine's outcome.
pub fn settle(c: &Citation, r: &Resolved, out: &Outcome, claims: &[Claimed], method: Method) -> Settlement {
    let estimates = stats::estimate(&r.measures, &out.vars, &out.sums, method);
    settle_estimated(c, r, Arc::new(rerun(r)), out, &estimates, claims)
}

/// [`settle`] with the estimates of `r`'s measures from `out` already computed: claims that
/// share a job share its estimates, so a batch computes them once per job; and claims that
/// share a resolution share what was re-run (`rerun`, [`rerun`] of `r`).
pub fn settle_estimated(
    c: &Citation,
    r: &Resolved,
    rerun: Arc<Rerun>,
    out: &Outcome,
    estimates: &[Option<Estimate>],
    claims: &[Claimed],
) -> Settlement {
    let facts = stats::base_facts(&out.sums);
    let mut rows: Vec<MeasureRow> = r
        .measures
        .iter()
        .zip(estimates)
        .map(|(m, e)| MeasureRow { name: m.name.clone(), unit: m.unit(), estimate: *e, claims: Vec::new() })
        .collect();
    let mut reasons = Vec::new();
    let mut not_compared = Vec::new();
    let mut unreadable_n: Vec<String> = Vec::new();
    let mut claimed_n = vec![c.base.n];
    let mut unreadable = Vec::new();
    let single = r.measures.len() == 1;
    // Each claimed key folded once, not once per measure and name.
    let answered = |key: &str| r.measures.iter().position(|m| m.answers_to_folded(key));
    for claim in claims {
        let key = claim.key.as_deref().map(fold).unwrap_or_default();
        // A string that is no number claims something only under a measure's name (`"Considered":
        // "NaN"`); `"brand": "Versant"` is no claim at all.
        if claim.word && answered(key.as_str()).is_none() {
            continue;
        }
        if let Some(why) = &claim.unreadable {
            unreadable.push(format!(
                "the claimed {} {} at result {} cannot be compared: {why}",
                if claim.word { "value" } else { "number" },
                claim.text,
                if claim.pointer.is_empty() { "/" } else { &claim.pointer }
            ));
            not_compared.push(claim.clone());
            continue;
        }
        if let Some(i) = answered(key.as_str()) {
            attach(&mut rows[i], &r.measures[i], claim);
        } else if BASE_N_KEYS.contains(&key.as_str()) {
            // A count is compared exactly, on its digits; anything that is not a whole count
            // (`4654.5`, `-3`, `4654.0000000000001`) cannot equal one and is a mismatch.
            match claim.as_count() {
                Some(n) if n == c.base.n => {}
                Some(n) => claimed_n.push(n),
                None => unreadable_n.push(claim.text.clone()),
            }
        } else if key.is_empty() || GENERIC_KEYS.contains(&key.as_str()) || single {
            // Which measure? The one it reproduces, else the nearest of the same kind.
            let i = by_value(&r.measures, &rows, claim);
            match i {
                Some(i) => attach(&mut rows[i], &r.measures[i], claim),
                None => not_compared.push(claim.clone()),
            }
        } else {
            not_compared.push(claim.clone());
        }
    }
    let base_ok = claimed_n.iter().all(|&n| n == facts.n) && unreadable_n.is_empty();
    // The base row shows (and explanations look for) the n that failed: a result's `"n": 1295`
    // beside a citation's right 1296 is a claim of 1295.
    let shown_n = claimed_n.iter().copied().find(|&n| n != facts.n).unwrap_or(c.base.n);
    for row in &rows {
        for cmp in row.claims.iter().filter(|c| !c.matched) {
            reasons.push(format!(
                "{}: claimed {}, recomputed {} (tolerance ±{})",
                row.name,
                cmp.claimed.text,
                show_recomputed(cmp),
                show(cmp.tolerance, cmp.claimed.decimals + 1, false)
            ));
        }
        if row.estimate.is_none() && !row.claims.is_empty() {
            reasons.push(format!("{}: nothing to compute over (empty denominator)", row.name));
        }
    }
    if !base_ok {
        for n in claimed_n.iter().filter(|&&n| n != facts.n) {
            reasons.push(format!("base n: claimed {n}, recomputed {} ({})", facts.n, r.base));
        }
        for text in &unreadable_n {
            reasons.push(format!(
                "base n: claimed {text}, not a whole count; recomputed {} ({})",
                facts.n, r.base
            ));
        }
    }
    let discrepant = rows
        .iter()
        .any(|row| row.claims.iter().any(|c| !c.matched) || row.estimate.is_none() && !row.claims.is_empty());
    let verdict = if !unreadable.is_empty() {
        Verdict::Invalid
    } else if discrepant {
        Verdict::Discrepant
    } else if !base_ok {
        Verdict::BaseMismatch
    } else {
        Verdict::Reproduced
    };
    // Unreadable numbers first: they decide the verdict.
    unreadable.append(&mut reasons);
    let mut reasons = unreadable;
    let compared = rows.iter().map(|r| r.claims.len()).sum::<usize>();
    let mut notes = r.notes.clone();
    if compared == 0 {
        notes.push("no claimed number named a measure: only base n was checked".into());
    }
    if verdict == Verdict::Reproduced {
        reasons.push(if compared == 0 {
            format!("base n {} reproduced", facts.n)
        } else {
            format!("{compared} claimed number{} and base n reproduced", if compared == 1 { "" } else { "s" })
        });
    }
    Settlement {
        verdict,
        reasons,
        problems: Vec::new(),
        unknown_names: Vec::new(),
        rerun: Some(rerun),
        base: Some(BaseRow { name: r.base.clone(), claimed_n: shown_n, facts, matched: base_ok }),
        measures: rows,
        series: Vec::new(),
        not_compared,
        warnings: c.warnings.clone(),
        warnings_audit: audit_warnings(c, r, out, facts.n),
        explanations: Vec::new(),
        notes,
    }
}

/// What a resolved claim re-runs, in the catalog's words.
pub fn rerun(r: &Resolved) -> Rerun {
    Rerun {
        study: r.study.clone(),
        period: r.period.clone(),
        period_filter: r.rows.period_filter.clone().unwrap_or_default(),
        fielded: r.fielded.clone(),
        table: r.rows.table.clone(),
        column: r.rows.column.clone(),
        column_label: r.column_label.clone(),
        function: r.function.clone(),
        weight: r.rows.weight.clone().unwrap_or_else(|| "unweighted".into()),
        design: match (&r.rows.replicates, &r.rows.design) {
            (Some(rep), _) => format!("{} replicate weights ({:?})", rep.columns.len(), rep.method),
            (None, Some((s, p))) => format!("strata {s}, PSU {p}"),
            (None, None) => "weights only (each respondent its own PSU)".into(),
        },
        base: r.base.clone(),
        base_filter: r.rows.base_filter.clone().unwrap_or_default(),
        data_version: r.data_version.clone(),
        files: r.files.clone(),
    }
}

/// Whether a claim about a measure of `unit` is read as a percent: written with `%`, greater than
/// 1, or a whole number (`44`, and also `0` and `1`: a share claimed as a bare integer is a whole
/// percent, so `{"Considered": 0}` is not "any share under one half"). A fraction shows decimals
/// (`0.44`). See docs/semantics.md.
pub fn reads_as_percent(unit: Unit, c: &Claimed) -> bool {
    unit == Unit::Proportion && (c.percent || c.value.abs() > 1.0 || c.decimals <= 0)
}

/// Compares one claim with one measure's estimate.
pub fn compare(unit: Unit, estimate: Option<&Estimate>, claim: &Claimed) -> Option<Comparison> {
    let e = estimate?;
    let Fit { shown, tolerance, matched, percent, scale } = fit(unit, e, claim);
    // In the measure's units: percentage points for proportions.
    let unit_scale = if unit == Unit::Proportion { 100.0 } else { 1.0 };
    let difference = (claim.value / scale - e.value) * unit_scale;
    let z = (e.se > 0.0).then(|| (claim.value / scale - e.value) / e.se);
    let inside = (claim.value / scale) >= e.ci_low && (claim.value / scale) <= e.ci_high;
    let gap = if matched {
        Gap::WithinRounding
    } else if inside {
        Gap::WithinSamplingError
    } else {
        Gap::OutsideSamplingError
    };
    Some(Comparison { claimed: claim.clone(), shown, tolerance, matched, difference, z, gap, percent })
}

/// Where a claimed number falls against an estimate: the part of [`compare`] that needs no copy
/// of the claim, which is all explaining asks of each variant.
pub struct Fit {
    /// The estimate in the units the claim was written in.
    pub shown: f64,
    /// Half a unit of the claim's last shown digit, in those units.
    pub tolerance: f64,
    /// Whether the claim matches.
    pub matched: bool,
    /// The claim was read as a percent of a proportion.
    pub percent: bool,
    /// 100 when read as a percent, else 1.
    pub scale: f64,
}

/// [`Fit`] of `claim` against `e`.
pub fn fit(unit: Unit, e: &Estimate, claim: &Claimed) -> Fit {
    fit_value(unit, e.value, claim)
}

/// [`fit`] against an estimate's value alone (a fit reads nothing else of it).
pub fn fit_value(unit: Unit, value: f64, claim: &Claimed) -> Fit {
    let mut percent = reads_as_percent(unit, claim);
    // A bare 0 or 1 may also be the exact fraction (a funnel's `"Aware": 1` for 100%): it then
    // matches only that exact value, never half the range.
    let exact_fraction = unit == Unit::Proportion
        && !claim.percent
        && claim.decimals <= 0
        && (claim.value == 0.0 || claim.value == 1.0)
        && (value - claim.value).abs() <= 1e-12;
    if exact_fraction {
        percent = false;
    }
    let scale = if percent { 100.0 } else { 1.0 };
    let shown = value * scale;
    let tolerance = if exact_fraction { 0.0 } else { claim.half_unit() };
    let gap_abs = (shown - claim.value).abs();
    let matched = gap_abs <= tolerance + 1e-9 * claim.value.abs().max(1.0);
    Fit { shown, tolerance, matched, percent, scale }
}

/// The recomputed value as a reason shows it: the claim's decimals plus one, and at least two
/// significant digits, so neither the value nor its difference from the claim is rounded
/// away (`0.0078`, not `0.01`, against a claimed `0.8` or `0.01`).
pub fn show_recomputed(cmp: &Comparison) -> String {
    let significant = if cmp.shown.is_finite() && cmp.shown != 0.0 {
        1 - cmp.shown.abs().log10().floor() as i32
    } else {
        0
    };
    let mut digits = (cmp.claimed.decimals + 1).max(significant).max(0);
    while digits < 10 && cmp.shown != cmp.claimed.value {
        let v: f64 = show(cmp.shown, digits, false).parse().unwrap_or(cmp.shown);
        let hides_gap = (v - cmp.claimed.value).abs() < 1e-12;
        let hides_value = v == 0.0 && cmp.shown != 0.0;
        if !hides_gap && !hides_value {
            break;
        }
        digits += 1;
    }
    show(cmp.shown, digits, cmp.percent)
}

fn attach(row: &mut MeasureRow, m: &Measure, claim: &Claimed) {
    match compare(m.unit(), row.estimate.as_ref(), claim) {
        Some(cmp) => row.claims.push(cmp),
        None => row.claims.push(Comparison {
            claimed: claim.clone(),
            shown: f64::NAN,
            tolerance: claim.half_unit(),
            matched: false,
            difference: f64::NAN,
            z: None,
            gap: Gap::OutsideSamplingError,
            percent: reads_as_percent(m.unit(), claim),
        }),
    }
}

/// The measure an unnamed claim is about: the first it reproduces, else the nearest.
fn by_value(measures: &[Measure], rows: &[MeasureRow], claim: &Claimed) -> Option<usize> {
    let scored: Vec<(usize, f64, bool)> = measures
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let cmp = compare(m.unit(), rows[i].estimate.as_ref(), claim)?;
            Some((i, (cmp.shown - cmp.claimed.value).abs(), cmp.matched))
        })
        .collect();
    if let Some((i, _, _)) = scored.iter().find(|(_, _, matched)| *matched) {
        return Some(*i);
    }
    scored.iter().min_by(|a, b| a.1.total_cmp(&b.1)).map(|(i, _, _)| *i)
}
