//! What settling a claim produces, as data: the verdict, the measure and base rows, the gaps,
//! the warnings audit and the explanations. The reports depend on these types alone; how they
//! are computed is in [`compare`](super::compare), [`audit`](super::audit) and
//! [`explain`](super::explain).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::catalog::NotFound;
use crate::citation::Problem;
use crate::claim::{Claimed, fold};
use crate::extractor::Unit;
use crate::stats::{BaseFacts, Estimate};

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
    type Err = UnknownVerdict;
    fn from_str(s: &str) -> Result<Self, UnknownVerdict> {
        let f = fold(s);
        Verdict::ALL.into_iter().find(|v| fold(v.as_str()) == f).ok_or_else(|| UnknownVerdict(s.to_string()))
    }
}

/// A name that is no [`Verdict`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown verdict {0:?} (expected one of invalid, unverifiable, discrepant, base-mismatch, reproduced)"
)]
pub struct UnknownVerdict(pub String);

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

impl MeasureRow {
    /// Whether the estimate is shown as a percent (a proportion; its SE and gaps in points).
    pub fn in_percent(&self) -> bool {
        self.unit == Unit::Proportion
    }
}

impl Comparison {
    /// The recomputed value as the claim was written: one decimal more than the claim shows (at
    /// least `min_decimals`), as a percent when the claim is one.
    pub fn recomputed(&self, min_decimals: i32) -> String {
        show(self.shown, (self.claimed.decimals + 1).max(min_decimals), self.percent)
    }
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
    /// The version of the table the claim ran on, for a table that keeps versions (a Delta Lake
    /// table); absent for tables of plain files, which are read as they are now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_version: Option<crate::version::DataVersion>,
    /// For a table of plain files on disk (Parquet, CSV, Arrow, SPSS), the files it was read
    /// from, by name, size and the sums cache's digest (sorted by name): what the claim ran on,
    /// though not a version anything can go back to. Absent for versioned tables
    /// (`data_version`) and tables on object storage.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<crate::version::FileDigest>,
}

impl Rerun {
    /// The claim in one line, as every report names it: `period · base · function(column)`.
    pub fn label(&self) -> String {
        format!("{} · {} · {}({})", self.period, self.base, self.function, self.column)
    }
}

/// [`Settlement::rerun`] written as the value it shares (serde writes an `Arc` only with its
/// `rc` feature, which would rebuild every crate using serde).
fn shared_rerun<S: serde::Serializer>(rerun: &Option<Arc<Rerun>>, s: S) -> Result<S::Ok, S::Error> {
    rerun.as_deref().serialize(s)
}

/// What a warning audit finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuditKind {
    /// The data has a small cell the claim did not warn of.
    Undisclosed,
    /// The claim warns of a small cell the data does not have.
    Unsupported,
}

impl AuditKind {
    /// The name as shown in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditKind::Undisclosed => "undisclosed",
            AuditKind::Unsupported => "unsupported",
        }
    }
}

impl std::fmt::Display for AuditKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A small-base warning audit finding.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct WarningAudit {
    /// Undisclosed or unsupported.
    pub kind: AuditKind,
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
    /// Names the citation uses that the data layer or the registry does not declare
    /// (UNVERIFIABLE), each with the declared names nearest to it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_names: Vec<NotFound>,
    /// What was re-run.
    // Shared by every claim of one resolution (a batch's claims name a few hundred distinct
    // things), not thirteen strings copied per claim.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "shared_rerun")]
    pub rerun: Option<Arc<Rerun>>,
    /// The base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<BaseRow>,
    /// Every measure of the extractor.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measures: Vec<MeasureRow>,
    /// Each claimed measure across the periods of the claim's study, when the run computed it
    /// (`recite check --series`, and the HTML report, which charts it) and the study declares
    /// two periods or more.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<Series>,
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
            unknown_names: Vec::new(),
            rerun: None,
            base: None,
            measures: Vec::new(),
            series: Vec::new(),
            not_compared: Vec::new(),
            warnings: Vec::new(),
            warnings_audit: Vec::new(),
            explanations: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// One claimed measure recomputed on every period of the claim's study (the 24 nearest the cited
/// one when it declares more, `MAX_SERIES_PERIODS`), on the same rows otherwise: table, column,
/// base, weight and design.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Series {
    /// The measure's name (that of a measure with a claim).
    pub measure: String,
    /// Proportion or value: a proportion's values are fractions.
    pub unit: Unit,
    /// One point a period, in the study's declared order.
    pub points: Vec<SeriesPoint>,
}

/// The measure on one period.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SeriesPoint {
    /// The period's declared name.
    pub period: String,
    /// Whether this is the period the claim cites.
    pub cited: bool,
    /// The recomputed value; none when the period gives no estimate (see `reason`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// Lower end of its 95% interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_low: Option<f64>,
    /// Upper end of its 95% interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_high: Option<f64>,
    /// Unweighted count of the base rows of the period; none when it could not be computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u64>,
    /// Why there is no value, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What kind of mistake an explanation names.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The previous period.
    PreviousPeriod,
    /// The next period.
    NextPeriod,
    /// No weight.
    Unweighted,
    /// Another declared weight.
    OtherWeight,
    /// Another declared base.
    OtherBase,
    /// No base filter at all.
    NoBase,
    /// A sibling column of the same question.
    SiblingColumn,
    /// Another measure of the same extractor (e.g. another funnel stage).
    OtherMeasure,
    /// A percent read as a fraction or the reverse.
    PercentFraction,
}

impl Cause {
    /// What the cause says of the claim, in words (empty for the causes whose explanation says
    /// it itself: another measure, percent vs fraction).
    pub fn wording(self) -> &'static str {
        match self {
            Cause::PreviousPeriod => "the claim likely used the previous period",
            Cause::NextPeriod => "the claim likely used the next period",
            Cause::Unweighted => "the claim is likely unweighted",
            Cause::OtherWeight => "the claim likely used another weight",
            Cause::OtherBase => "the claim likely used another base",
            Cause::NoBase => "the claim likely left the base filter out",
            Cause::SiblingColumn => "the claim likely read a sibling column of the same question",
            Cause::OtherMeasure | Cause::PercentFraction => "",
        }
    }
}

/// What an alternative changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Another period of the study.
    Period,
    /// Another declared base.
    Base,
    /// No base filter: every row of the period.
    NoBase,
    /// Another declared weight of the table.
    Weight,
    /// No weight.
    Unweighted,
    /// A sibling column of the same question.
    Column,
    /// Another measure of the same extractor (another funnel stage).
    Measure,
}

impl Kind {
    /// The kind as written in ids and in the API (`period`, `nobase`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Period => "period",
            Kind::Base => "base",
            Kind::NoBase => "nobase",
            Kind::Weight => "weight",
            Kind::Unweighted => "unweighted",
            Kind::Column => "column",
            Kind::Measure => "measure",
        }
    }
}

/// The id of an alternative computation, as the what-if lists it and an explanation records
/// it: `kind:name` (`period:W5 (March 2026)`, `weight:w2`), or the kind alone when it names
/// nothing (`unweighted`, `nobase`).
pub fn alternative_id(kind: Kind, name: &str) -> String {
    if name.is_empty() { kind.as_str().to_string() } else { format!("{}:{name}", kind.as_str()) }
}

impl Cause {
    /// The kind of alternative computation this cause re-ran; none for percent vs fraction,
    /// which is a reading of the same numbers.
    pub fn alternative(self) -> Option<Kind> {
        Some(match self {
            Cause::PreviousPeriod | Cause::NextPeriod => Kind::Period,
            Cause::Unweighted => Kind::Unweighted,
            Cause::OtherWeight => Kind::Weight,
            Cause::OtherBase => Kind::Base,
            Cause::NoBase => Kind::NoBase,
            Cause::SiblingColumn => Kind::Column,
            Cause::OtherMeasure => Kind::Measure,
            Cause::PercentFraction => return None,
        })
    }
}

/// One computation that reproduces the claim.
// Deserialize: the workbench reads a saved report's explanations back (settle::whatif).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Explanation {
    /// The kind of mistake.
    pub cause: Cause,
    /// In words, e.g. "44% is what extractFunnel gives on W5 (March 2026): the claim likely
    /// used the previous period".
    pub message: String,
    /// Whether the variant also reproduces the claimed base n.
    pub reproduces_base: bool,
    /// The alternative computation that reproduces the claim, by its what-if id
    /// (`period:W5 (March 2026)`, `unweighted`, `measure:Purchased`); absent for percent vs
    /// fraction, which re-runs nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alternative: Option<String>,
}

/// A number with `digits` decimals (at least 0), as a percent when asked.
pub fn show(v: f64, digits: i32, percent: bool) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    let d = digits.clamp(0, 10) as usize;
    if percent { format!("{v:.d$}%") } else { format!("{v:.d$}") }
}
