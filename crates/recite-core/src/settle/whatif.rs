//! What if: the alternatives the catalog declares for one claim — every other period of its
//! study, the other declared bases or none, the other declared weights or none, the sibling
//! columns of its question, the other measures of its extractor — each re-run on request with
//! the verdict the claim would get under it.
//!
//! An alternative is chosen by its id among those [`alternatives`] lists, which are built from
//! the catalog's own names: nothing a caller writes reaches a filter. The claimed numbers (and
//! the claimed base n) stay as the claim wrote them; only the computation changes, so "what if
//! it was W5?" answers whether the claim reproduces on W5.

use std::sync::Arc;

use serde::Serialize;

use crate::catalog::Catalog;
use crate::citation::Citation;
use crate::claim::Claimed;
use crate::extractor::Registry;
use crate::resolve::Resolved;
use crate::scan::{EngineError, Job, Scan, ScanStats};
pub use crate::settle::verdict::Kind;
use crate::settle::verdict::{Explanation, Settlement, alternative_id};
use crate::settle::{compare, explain};
use crate::stats::{self, Method};

/// Most periods offered for one claim: the nearest to its own, in the study's order. A monthly
/// tracker of many years would otherwise offer hundreds.
pub const MAX_PERIOD_ALTERNATIVES: usize = 48;

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
    /// What it changes, in words, naming columns and weights by the catalog's labels (`on W5
    /// (March 2026), the period before`, `on Brand funnel: Corvana`, `without weights`).
    pub label: String,
    /// The catalog's code for what the label names by its label (the column `s14r4`, the
    /// weight `alt_weight`), for small type beside it; empty when the label names it by code.
    pub code: String,
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
        id: alternative_id(kind, name),
        kind,
        name: name.to_string(),
        label,
        code: String::new(),
        likely: false,
        resolved,
        measure: None,
    };
    let study = catalog.study(&r.study).ok();
    // A column's label in the catalog (the cited table's), when it declares one.
    let label_of = |column: &str| {
        let table = study.and_then(|s| s.table(&r.rows.table).ok())?;
        table.columns.get(column).map(|c| c.label.as_str()).filter(|l| !l.is_empty())
    };
    if let Some(study) = study {
        let own = study.periods.iter().position(|p| p.name == r.period);
        let mut near: Vec<(usize, usize)> = (0..study.periods.len())
            .filter(|&i| Some(i) != own)
            .map(|i| (own.map_or(i, |o| o.abs_diff(i)), i))
            .collect();
        near.sort_unstable();
        let mut chosen: Vec<usize> = near.into_iter().take(MAX_PERIOD_ALTERNATIVES).map(|(_, i)| i).collect();
        chosen.sort_unstable();
        for i in chosen {
            let p = &study.periods[i];
            // The claim's neighbours said so: the period an agent most often confuses it with.
            let next_to = match own {
                Some(o) if i + 1 == o => ", the period before",
                Some(o) if i == o + 1 => ", the period after",
                _ => "",
            };
            out.push(alt(Kind::Period, &p.name, format!("on {}{next_to}", p.name), explain::on_period(r, p)));
        }
    }
    // The explanations' variants, periods aside (listed above, all of them), in the catalog's
    // words: a column or a weight by its label (its code kept for small type), a base by name.
    for v in explain::variants(0, r, catalog, registry, &explain::Expansions::default()) {
        let Some((kind, name)) = v.alternative() else { continue };
        let (label, code) = match kind {
            Kind::Period | Kind::Measure => continue,
            Kind::Column if !v.resolved.column_label.is_empty() => {
                (format!("on {}", v.resolved.column_label), name.clone())
            }
            Kind::Weight => match label_of(&name) {
                Some(l) => (format!("weighted by {l}"), name.clone()),
                None => (v.what, String::new()),
            },
            Kind::Base => (format!("on the base \u{201c}{name}\u{201d}"), String::new()),
            _ => (v.what, String::new()),
        };
        out.push(Alternative { code, ..alt(kind, &name, label, v.resolved) });
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

/// Whether an explanation names this alternative: the report records the alternative each
/// explanation re-ran (its id), so a saved report's likely alternative is found by id.
fn names(a: &Alternative, e: &Explanation) -> bool {
    e.alternative.as_deref() == Some(a.id.as_str())
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
    let rerun = Arc::new(compare::rerun(&alt.resolved));
    let s = compare::settle_estimated(cit, &alt.resolved, rerun, &out, &estimates, &numbers);
    Ok((s, stats))
}
