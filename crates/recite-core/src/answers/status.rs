//! The status of a stated number ([`Status`]), how doubtful each is ([`doubt`]), and a count
//! of them in words ([`summary`]).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::claim::fold;

/// The status of one stated number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// No citation in the exchange supports it.
    Uncited,
    /// The sentence is about a cited measure, but the number is neither its claimed nor its
    /// recomputed value.
    Misquoted,
    /// It repeats a cited number, but the sentence gives it another period, population or
    /// column label (brand) than the citation covers.
    Misattributed,
    /// It repeats a cited number, but recite cannot tell whether the sentence gives it what the
    /// citation covers: it names a population recite could not match to the citation's base,
    /// or pairs its numbers with several brands, periods or populations in an order recite
    /// cannot read.
    AttributionUnsure,
    /// It repeats a cited number the data does not support.
    TracedToDiscrepant,
    /// It repeats a cited number whose citation could not be re-run.
    TracedUnverified,
    /// It is recite's recomputed value of a cited measure the tool did not state that way.
    RecomputedOnly,
    /// It is a cited number recite reproduced.
    Traced,
}

impl Status {
    /// Every status, most serious first.
    pub const ALL: [Status; 8] = [
        Status::Uncited,
        Status::Misquoted,
        Status::Misattributed,
        Status::AttributionUnsure,
        Status::TracedToDiscrepant,
        Status::TracedUnverified,
        Status::RecomputedOnly,
        Status::Traced,
    ];

    /// The name as shown in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Uncited => "UNCITED",
            Status::Misquoted => "MISQUOTED",
            Status::Misattributed => "MISATTRIBUTED",
            Status::AttributionUnsure => "ATTRIBUTION_UNSURE",
            Status::TracedToDiscrepant => "TRACED_TO_DISCREPANT",
            Status::TracedUnverified => "TRACED_UNVERIFIED",
            Status::RecomputedOnly => "RECOMPUTED_ONLY",
            Status::Traced => "TRACED",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Status {
    type Err = UnknownStatus;
    fn from_str(s: &str) -> Result<Self, UnknownStatus> {
        let f = fold(s);
        Status::ALL.into_iter().find(|v| fold(v.as_str()) == f).ok_or_else(|| UnknownStatus(s.to_string()))
    }
}

/// A name that is no answer [`Status`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown answer status {0:?} (expected one of uncited, misquoted, misattributed, attribution-unsure, traced-to-discrepant, traced-unverified, recomputed-only, traced)"
)]
pub struct UnknownStatus(pub String);

/// How serious a status is, for picking the most doubtful among candidates.
pub(super) fn doubt(s: Status) -> u8 {
    match s {
        Status::Uncited => 8,
        Status::Misquoted => 7,
        Status::Misattributed => 6,
        // A value the re-run refutes is a finding whatever the sentence means it to be about;
        // an attribution recite cannot read is only a doubt, and would hide that finding (and
        // `--fail-on traced-to-discrepant`).
        Status::TracedToDiscrepant => 5,
        Status::AttributionUnsure => 4,
        Status::TracedUnverified => 3,
        Status::RecomputedOnly => 2,
        Status::Traced => 1,
    }
}

/// A sentence's summary in words: `2 traced, 1 misquoted`.
pub fn summary(counts: &BTreeMap<Status, usize>) -> String {
    let parts: Vec<String> = counts
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(s, n)| format!("{n} {}", s.as_str().to_lowercase().replace('_', " ")))
        .collect();
    if parts.is_empty() { "no stated number".into() } else { parts.join(", ") }
}
