//! Compare: claimed numbers against recomputed measures → a [`Settlement`] with its [`Verdict`].
//!
//! Semantics (docs/semantics.md): a claimed number matches when |recomputed − claimed| is at most
//! half a unit of its last shown digit (closed interval), in the units it was written in; shares
//! may be claimed as fractions or percents; base n must match exactly.

use serde::Serialize;

use crate::citation::{Citation, Problem};
use crate::claim::{Claimed, fold};
use crate::engine::Outcome;
use crate::settle::explain::Explanation;
use crate::extractor::{Measure, Unit};
use crate::resolve::Resolved;
use crate::stats::{self, BaseFacts, Estimate, Interval};

/// The five verdicts, most serious first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    /// The citation breaks the spec (missing field, bad base.n, not JSON).
    Invalid,
    /// It cannot be re-run: unknown name, missing file or column.
    Unverifiable,
    /// A claimed number differs from what the data gives.
    Discrepant,
    /// The numbers match but base n does not.
    BaseMismatch,
    /// Every claimed number and base n are what the data gives.
    Reproduced,
}

impl Verdict {
    /// The name as shown in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Invalid => "INVALID",
            Verdict::Unverifiable => "UNVERIFIABLE",
            Verdict::Discrepant => "DISCREPANT",
            Verdict::BaseMismatch => "BASE_MISMATCH",
            Verdict::Reproduced => "REPRODUCED",
        }
    }

    /// Every verdict, in order.
    pub const ALL: [Verdict; 5] = [
        Verdict::Invalid,
        Verdict::Unverifiable,
        Verdict::Discrepant,
        Verdict::BaseMismatch,
        Verdict::Reproduced,
    ];
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Verdict {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let f = fold(s);
        Verdict::ALL
            .into_iter()
            .find(|v| fold(v.as_str()) == f)
            .ok_or_else(|| format!("unknown verdict {s:?} (expected one of invalid, unverifiable, discrepant, base-mismatch, reproduced)"))
    }
}

/// How far a claimed number is from the recomputed one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Gap {
    /// Within half a unit of the last shown digit: the claim is the data's number, rounded.
    WithinRounding,
    /// Not the data's number, but inside its 95% sampling interval.
    WithinSamplingError,
    /// Outside the 95% sampling interval.
    OutsideSamplingError,
}

/// One claimed number, compared.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Comparison {
    /// The claim as written.
    pub claimed: Claimed,
    /// The recomputed value in the units the claim was written in (percent or fraction).
    pub shown: f64,
    /// Half a unit of the claim's last shown digit, in those units.
    pub tolerance: f64,
    /// Whether the claim matches.
    pub matched: bool,
    /// claimed − recomputed, in the measure's units (percentage points for proportions).
    pub difference: f64,
    /// difference / SE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub z: Option<f64>,
    /// The plain-words class of the gap.
    pub gap: Gap,
    /// The claim was read as a percent of a proportion (`44%`, `44`), not as a fraction.
    pub percent: bool,
}

/// One measure of the extractor, recomputed, with the claim made about it (if any).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct MeasureRow {
    /// The measure's name.
    pub name: String,
    /// Proportion or value.
    pub unit: Unit,
    /// The recomputed estimate; none when its denominator is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<Estimate>,
    /// The claims compared with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<Comparison>,
}

/// Claimed vs recomputed base.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct BaseRow {
    /// The base's name.
    pub name: String,
    /// base.n as the citation claims it.
    pub claimed_n: u64,
    /// The recomputed unweighted count, Σw and effective base.
    #[serde(flatten)]
    pub facts: BaseFacts,
    /// Whether n matches exactly.
    pub matched: bool,
}

/// What was re-run, in the catalog's words.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Rerun {
    /// Study name.
    pub study: String,
    /// Period name.
    pub period: String,
    /// The period's SQL filter.
    pub period_filter: String,
    /// When the period was fielded, per the catalog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fielded: Option<String>,
    /// Table name.
    pub table: String,
    /// Column name.
    pub column: String,
    /// The column's label.
    pub column_label: String,
    /// The extractor.
    pub function: String,
    /// The weight column, or `unweighted`.
    pub weight: String,
    /// The design, `strata/psu`, or `weights only`.
    pub design: String,
    /// The base's name.
    pub base: String,
    /// The base's SQL filter, `{column}` filled in.
    pub base_filter: String,
}

/// A small-base warning audit finding.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct WarningAudit {
    /// `undisclosed` (the data has a small cell the claim did not warn of) or `unsupported`
    /// (the claim warns of a small cell the data does not have).
    pub kind: String,
    /// What, in words.
    pub message: String,
}

/// The settlement of one claim.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Settlement {
    /// The verdict.
    pub verdict: Verdict,
    /// Why, in words, most important first.
    pub reasons: Vec<String>,
    /// Problems with the citation itself (INVALID).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<Problem>,
    /// What was re-run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun: Option<Rerun>,
    /// The base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<BaseRow>,
    /// Every measure of the extractor.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measures: Vec<MeasureRow>,
    /// Numbers in the result that name no measure, left alone, and numbers that cannot be
    /// compared (`unreadable`, which make the claim INVALID).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_compared: Vec<Claimed>,
    /// The warnings the claim carried.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The small-base audit of those warnings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings_audit: Vec<WarningAudit>,
    /// For a claim not reproduced: the nearby computations that reproduce it, best first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub explanations: Vec<Explanation>,
    /// Worth knowing; does not change the verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Settlement {
    /// An INVALID settlement listing every problem.
    pub fn invalid(problems: Vec<Problem>) -> Settlement {
        let reasons = problems.iter().map(|p| p.to_string()).collect();
        Settlement { problems, reasons, ..Settlement::empty(Verdict::Invalid) }
    }

    /// An UNVERIFIABLE settlement with its reasons.
    pub fn unverifiable(reasons: Vec<String>) -> Settlement {
        Settlement { reasons, ..Settlement::empty(Verdict::Unverifiable) }
    }

    fn empty(verdict: Verdict) -> Settlement {
        Settlement {
            verdict,
            reasons: Vec::new(),
            problems: Vec::new(),
            rerun: None,
            base: None,
            measures: Vec::new(),
            not_compared: Vec::new(),
            warnings: Vec::new(),
            warnings_audit: Vec::new(),
            explanations: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// Result keys that state the base's unweighted count rather than a measure.
const BASE_N_KEYS: &[&str] =
    &["n", "basen", "base", "unweightedn", "respondents", "samplesize", "count", "nbase"];
/// Result keys that say nothing about which measure a number is.
const GENERIC_KEYS: &[&str] =
    &["value", "share", "pct", "percent", "percentage", "result", "estimate", "number"];

/// Settles one resolved claim against the engine's outcome.
pub fn settle(
    c: &Citation,
    r: &Resolved,
    out: &Outcome,
    claims: &[Claimed],
    interval: Interval,
) -> Settlement {
    let estimates = stats::estimate(&r.measures, &out.vars, &out.sums, interval);
    let facts = stats::base_facts(&out.sums);
    let mut rows: Vec<MeasureRow> = r
        .measures
        .iter()
        .zip(&estimates)
        .map(|(m, e)| MeasureRow { name: m.name.clone(), unit: m.unit(), estimate: *e, claims: Vec::new() })
        .collect();
    let mut reasons = Vec::new();
    let mut not_compared = Vec::new();
    let mut unreadable_n: Vec<String> = Vec::new();
    let mut claimed_n = vec![c.base.n];
    let mut unreadable = Vec::new();
    let single = r.measures.len() == 1;
    for claim in claims {
        if let Some(why) = &claim.unreadable {
            unreadable.push(format!(
                "the claimed number {} at result {} cannot be compared: {why}",
                claim.text,
                if claim.pointer.is_empty() { "/" } else { &claim.pointer }
            ));
            not_compared.push(claim.clone());
            continue;
        }
        let key = claim.key.as_deref().map(fold).unwrap_or_default();
        if let Some(i) = r.measures.iter().position(|m| claim.key.as_deref().is_some_and(|k| m.answers_to(k)))
        {
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
        rerun: Some(rerun(r)),
        base: Some(BaseRow { name: r.base.clone(), claimed_n: c.base.n, facts, matched: base_ok }),
        measures: rows,
        not_compared,
        warnings: c.warnings.clone(),
        warnings_audit: audit_warnings(c, r, out, facts.n),
        explanations: Vec::new(),
        notes,
    }
}

fn rerun(r: &Resolved) -> Rerun {
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
        design: match &r.rows.design {
            Some((s, p)) => format!("strata {s}, PSU {p}"),
            None => "weights only (each respondent its own PSU)".into(),
        },
        base: r.base.clone(),
        base_filter: r.rows.base_filter.clone().unwrap_or_default(),
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
    let mut percent = reads_as_percent(unit, claim);
    // A bare 0 or 1 may also be the exact fraction (a funnel's `"Aware": 1` for 100%): it then
    // matches only that exact value, never half the range.
    let exact_fraction = unit == Unit::Proportion
        && !claim.percent
        && claim.decimals <= 0
        && (claim.value == 0.0 || claim.value == 1.0)
        && (e.value - claim.value).abs() <= 1e-12;
    if exact_fraction {
        percent = false;
    }
    let scale = if percent { 100.0 } else { 1.0 };
    let shown = e.value * scale;
    let tolerance = if exact_fraction { 0.0 } else { claim.half_unit() };
    let gap_abs = (shown - claim.value).abs();
    let matched = gap_abs <= tolerance + 1e-9 * claim.value.abs().max(1.0);
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

/// The recomputed value as a reason shows it: with enough digits that a difference from the
/// claim is visible (`0.0078`, not `0.01`, against a claimed `0.01`).
pub fn show_recomputed(cmp: &Comparison) -> String {
    let mut digits = (cmp.claimed.decimals + 1).max(0);
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

/// Recomputes which cells of the base fall under the thresholds and compares with the warnings.
fn audit_warnings(c: &Citation, r: &Resolved, out: &Outcome, base_n: u64) -> Vec<WarningAudit> {
    let t = r.thresholds;
    let said = |cell: &str| c.warnings.iter().any(|w| names_cell(w, cell));
    let mut audit = Vec::new();
    for (b, cell, n) in &out.cells {
        // A cell the base cannot contain (the Male cell of "Women 18-74") is empty, not small:
        // there is no number for it to warn about.
        if *n > 0 && *n < t.low && !said(cell) {
            audit.push(WarningAudit {
                kind: "undisclosed".into(),
                message: format!(
                    "the {cell} cell ({b}) has an unweighted base of {n}, under {}{}, and no warning says so",
                    if *n < t.very_low { t.very_low } else { t.low },
                    if *n < t.very_low { " (very low)" } else { "" }
                ),
            });
        }
    }
    if base_n < t.low && !c.warnings.iter().any(|w| fold(w).contains("base")) {
        audit.push(WarningAudit {
            kind: "undisclosed".into(),
            message: format!(
                "the whole base has {base_n} respondents, under {}, and no warning says so",
                t.low
            ),
        });
    }
    for w in &c.warnings {
        let fw = fold(w);
        for (b, cell, n) in &out.cells {
            if names_cell(w, cell)
                && *n >= t.low
                && (fw.contains("base") || fw.contains("small") || fw.contains("low"))
            {
                audit.push(WarningAudit {
                    kind: "unsupported".into(),
                    message: format!(
                        "the warning {w:?} is not supported: the {cell} cell ({b}) has {n} respondents"
                    ),
                });
            }
        }
    }
    audit
}

/// Whether a warning names a cell: the cell's name as whole words, case-insensitively, with any
/// punctuation between them ("65-74" in "the 65–74 cell"; not "West" in "Midwest" nor "Male" in
/// "Female").
fn names_cell(warning: &str, cell: &str) -> bool {
    let words = |s: &str| -> Vec<String> {
        s.split(|ch: char| !ch.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
    };
    let (w, c) = (words(warning), words(cell));
    !c.is_empty() && w.windows(c.len()).any(|win| win == c.as_slice())
}

/// A number with `digits` decimals (at least 0), as a percent when asked.
pub fn show(v: f64, digits: i32, percent: bool) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    let d = digits.clamp(0, 10) as usize;
    if percent { format!("{v:.d$}%") } else { format!("{v:.d$}") }
}
