//! The cited numbers an answer may repeat ([`Source`]): each measure of a settled claim, as
//! claimed and as recomputed ([`sources`]), with what its citation covers ([`with_covers`]).

use std::sync::Arc;

use super::attribution;
use super::status::Status;
use crate::claim::{Claimed, fold};
use crate::extractor::Unit;
use crate::settle::verdict::{Settlement, Verdict};

/// One cited number an answer may repeat: a measure of a claim, as claimed and as recomputed.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// Index of the claim in its input.
    pub claim: usize,
    /// The measure's name (`base n` for the base's count).
    pub measure: String,
    /// Its unit; `None` when the citation was not re-run and the unit is unknown.
    pub unit: Option<Unit>,
    /// What the tool claimed, when it claimed this measure.
    pub claimed: Option<Claimed>,
    /// The recomputed value (a fraction for proportions), when re-run.
    pub recomputed: Option<f64>,
    /// Whether the claimed number matched the recomputed one.
    pub matched: bool,
    /// The claim's verdict.
    pub verdict: Verdict,
    /// The base's claimed n (to tell apart measures of two bases by the `n =` beside them).
    pub base_n: Option<u64>,
    /// True for the base's count.
    pub count: bool,
    /// For a number of a record a MOCA `moca.citations` event cites: which record.
    pub record: Option<Record>,
    /// What the claim's citation covers (period, population, column label), when the catalog
    /// knows its study ([`attribution::covers`]).
    pub covers: Option<Arc<attribution::Covers>>,
}

/// A record a `moca.citations` event cites for one assistant message, as a [`Source`] of the
/// numbers its text states.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// How reports name it: its marker and key (`[1] https://…@4.2.0#refund-window.md`).
    pub label: String,
    /// How the answer refers to it: its marker and node references.
    pub refs: Vec<String>,
    /// The status of a stated number that repeats this number of the record.
    pub status: Status,
    /// Why that status, in words.
    pub why: String,
}

/// The cited numbers of one settled claim: each measure (claimed or not), its base n, and, for
/// a claim that could not be re-run, the numbers of its result as the tool stated them and the
/// citation's own `base.n` (`citation_n`).
pub fn sources(claim: usize, s: &Settlement, leaves: &[Claimed], citation_n: Option<u64>) -> Vec<Source> {
    let base_n = s.base.as_ref().map(|b| b.claimed_n).or(citation_n);
    let mut out = Vec::new();
    let source = |measure: &str, unit, claimed: Option<Claimed>, recomputed, matched| Source {
        claim,
        measure: measure.to_string(),
        unit,
        claimed,
        recomputed,
        matched,
        verdict: s.verdict,
        base_n,
        count: false,
        record: None,
        covers: None,
    };
    for row in &s.measures {
        let rec = row.estimate.map(|e| e.value);
        if row.claims.is_empty() {
            out.push(source(&row.name, Some(row.unit), None, rec, false));
        }
        for c in &row.claims {
            out.push(source(&row.name, Some(row.unit), Some(c.claimed.clone()), rec, c.matched));
        }
    }
    if let Some(b) = &s.base {
        let claimed = crate::claim::parse_number(&b.claimed_n.to_string(), Some("n".into()), String::new());
        out.push(Source {
            count: true,
            ..source("base n", Some(Unit::Value), claimed, Some(b.facts.n as f64), b.matched)
        });
    }
    if let (None, Some(n)) = (&s.base, citation_n) {
        let claimed = crate::claim::parse_number(&n.to_string(), Some("n".into()), String::new());
        out.push(Source { count: true, ..source("base n", Some(Unit::Value), claimed, None, false) });
    }
    // Numbers the settlement did not compare (no re-run, or naming no measure): repeating them
    // is repeating a number nobody checked.
    let compared = !s.measures.is_empty();
    for leaf in leaves.iter().filter(|l| l.unreadable.is_none()) {
        let in_rows = s.measures.iter().flat_map(|r| &r.claims).any(|c| c.claimed.pointer == leaf.pointer);
        if compared && in_rows {
            continue;
        }
        let key = leaf.key.clone().unwrap_or_else(|| "value".into());
        let count = ["n", "basen", "base", "count", "respondents"].contains(&fold(&key).as_str());
        let mut src = source(&key, None, Some(leaf.clone()), None, false);
        src.count = count;
        if compared {
            // Re-run, but this number named no measure: it was not checked.
            src.verdict = Verdict::Unverifiable;
        }
        out.push(src);
    }
    out
}

/// `sources` with what their claim's citation covers, for checking attribution.
pub fn with_covers(mut sources: Vec<Source>, covers: Option<Arc<attribution::Covers>>) -> Vec<Source> {
    for s in &mut sources {
        s.covers.clone_from(&covers);
    }
    sources
}
