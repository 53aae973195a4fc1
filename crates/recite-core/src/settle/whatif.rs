//! What if: the alternatives the catalog declares for one claim — every other period of its
//! study, the other declared bases or none, the other declared weights or none, the sibling
//! columns of its question, the other measures of its extractor — each re-run on request with
//! the verdict the claim would get under it.
//!
//! An alternative is chosen by its id among those [`alternatives`] lists, which are built from
//! the catalog's own names: nothing a caller writes reaches a filter. The claimed numbers (and
//! the claimed base n) stay as the claim wrote them; only the computation changes, so "what if
//! it was W5?" answers whether the claim reproduces on W5.

use serde::Serialize;

use crate::catalog::Catalog;
use crate::citation::Citation;
use crate::claim::Claimed;
use crate::extractor::Registry;
use crate::resolve::Resolved;
use crate::scan::{EngineError, Job, Scan, ScanStats};
use crate::settle::verdict::{Cause, Explanation, Settlement};
use crate::settle::{compare, explain};
use crate::stats::{self, Method};

/// Most periods offered for one claim: the nearest to its own, in the study's order. A monthly
/// tracker of many years would otherwise offer hundreds.
pub const MAX_PERIOD_ALTERNATIVES: usize = 48;

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

/// One alternative computation of a claim.
#[derive(Debug, Clone, Serialize)]
pub struct Alternative {
    /// `kind:name` (`period:W5 (March 2026)`, `unweighted`): what a caller sends back to run it.
    pub id: String,
    /// What it changes.
    pub kind: Kind,
    /// The catalog name it uses (a period, base, weight, column or measure); empty for
    /// `unweighted` and `nobase`.
    pub name: String,
    /// What it changes, in words (`on W5 (March 2026)`, `without weights`).
    pub label: String,
    /// The claim's own explanation names it as what the agent most likely computed instead.
    pub likely: bool,
    #[serde(skip)]
    resolved: Resolved,
    /// For another measure: the claimed numbers of `.0` are compared with `.1` instead.
    #[serde(skip)]
    measure: Option<(String, String)>,
}

/// The alternatives of a resolved claim, the likely one first (the claim's first explanation,
/// when it names one of them), then periods in the study's order, weights, bases, columns and
/// measures. `claimed` are the names of the measures the claim states a number for; another
/// measure is offered only when it states exactly one.
pub fn alternatives(
    r: &Resolved,
    catalog: &Catalog,
    registry: &Registry,
    claimed: &[String],
    explanations: &[Explanation],
) -> Vec<Alternative> {
    let mut out = Vec::new();
    let alt = |kind: Kind, name: &str, label: String, resolved: Resolved| Alternative {
        id: if name.is_empty() { kind.as_str().to_string() } else { format!("{}:{name}", kind.as_str()) },
        kind,
        name: name.to_string(),
        label,
        likely: false,
        resolved,
        measure: None,
    };
    if let Ok(study) = catalog.study(&r.study) {
        let own = study.periods.iter().position(|p| p.name == r.period);
        let mut near: Vec<(usize, usize)> = (0..study.periods.len())
            .filter(|&i| Some(i) != own)
            .map(|i| (own.map_or(i, |o| o.abs_diff(i)), i))
            .collect();
        near.sort_unstable();
        let mut chosen: Vec<usize> = near.into_iter().take(MAX_PERIOD_ALTERNATIVES).map(|(_, i)| i).collect();
        chosen.sort_unstable();
        for p in chosen.into_iter().map(|i| &study.periods[i]) {
            out.push(alt(Kind::Period, &p.name, format!("on {}", p.name), explain::on_period(r, p)));
        }
    }
    // The explanations' variants, periods aside (listed above, all of them).
    for v in explain::variants(0, r, catalog, registry) {
        let (kind, name) = match v.cause {
            Cause::PreviousPeriod | Cause::NextPeriod | Cause::OtherMeasure | Cause::PercentFraction => {
                continue;
            }
            Cause::Unweighted => (Kind::Unweighted, String::new()),
            Cause::OtherWeight => (Kind::Weight, v.resolved.rows.weight.clone().unwrap_or_default()),
            Cause::OtherBase => (Kind::Base, v.resolved.base.clone()),
            Cause::NoBase => (Kind::NoBase, String::new()),
            Cause::SiblingColumn => (Kind::Column, v.resolved.rows.column.clone()),
        };
        out.push(alt(kind, &name, v.what, v.resolved));
    }
    if let [from] = claimed
        && let Some(own) = r.measures.iter().find(|m| &m.name == from)
    {
        for m in r.measures.iter().filter(|m| &m.name != from && m.unit() == own.unit()) {
            let mut a =
                alt(Kind::Measure, &m.name, format!("as the {} measure, not {from}", m.name), r.clone());
            a.measure = Some((from.clone(), m.name.clone()));
            out.push(a);
        }
    }
    if let Some(first) = explanations.first()
        && let Some(i) = out.iter().position(|a| names(a, first))
    {
        let mut likely = out.remove(i);
        likely.likely = true;
        out.insert(0, likely);
    }
    out
}

/// Whether an explanation names this alternative: the same kind of change, and its words for
/// the change (`on W5 (March 2026)`, `the Purchased measure`) standing whole in the message.
fn names(a: &Alternative, e: &Explanation) -> bool {
    let kind = match e.cause {
        Cause::PreviousPeriod | Cause::NextPeriod => Kind::Period,
        Cause::Unweighted => Kind::Unweighted,
        Cause::OtherWeight => Kind::Weight,
        Cause::OtherBase => Kind::Base,
        Cause::NoBase => Kind::NoBase,
        Cause::SiblingColumn => Kind::Column,
        Cause::OtherMeasure => Kind::Measure,
        Cause::PercentFraction => return false,
    };
    if kind != a.kind {
        return false;
    }
    let words = match a.kind {
        Kind::Measure => format!(" the {} measure", a.name),
        _ => format!(" {}", a.label),
    };
    e.message.match_indices(&words).any(|(at, _)| {
        e.message[at + words.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric() && c != '_')
    })
}

/// The alternative with this id among `alternatives`.
pub fn find<'a>(alternatives: &'a [Alternative], id: &str) -> Option<&'a Alternative> {
    alternatives.iter().find(|a| a.id == id)
}

/// Settles the claim (`cit` with its claimed `numbers`) under the alternative: one run of its
/// job, then the claim's numbers compared as usual. An engine failure of the job is the
/// claim's UNVERIFIABLE reason; only an internal failure is an error.
pub fn settle(
    cit: &Citation,
    numbers: &[Claimed],
    alt: &Alternative,
    scan: &dyn Scan,
    method: Method,
) -> Result<(Settlement, ScanStats), EngineError> {
    let job = Job::of(&alt.resolved);
    let (mut outcomes, stats) = scan.run(std::slice::from_ref(&job));
    let outcome = outcomes.pop().unwrap_or_else(|| Err(EngineError::Internal("no outcome".into())));
    let out = match outcome {
        Err(e @ EngineError::Internal(_)) => return Err(e),
        Err(e) => {
            return Ok((
                Settlement::unverifiable(vec![format!("{} {}: {e}", alt.kind.as_str(), alt.label)]),
                stats,
            ));
        }
        Ok(out) => out,
    };
    let estimates = stats::estimate(&job.measures, &out.vars, &out.sums, method);
    let numbers: Vec<Claimed> = match &alt.measure {
        None => numbers.to_vec(),
        Some((from, to)) => {
            let from = alt.resolved.measures.iter().find(|m| &m.name == from);
            numbers
                .iter()
                .map(|n| {
                    let mut n = n.clone();
                    if from.is_some_and(|m| n.key.as_deref().is_some_and(|k| m.answers_to(k))) {
                        n.key = Some(to.clone());
                    }
                    n
                })
                .collect()
        }
    };
    let s = compare::settle_estimated(cit, &alt.resolved, &out, &estimates, &numbers);
    Ok((s, stats))
}
