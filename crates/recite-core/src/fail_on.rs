//! `recite check --fail-on`: what makes the exit status 1.

use crate::answers::Status;
use crate::claim::fold;
use crate::input::Level;
use crate::settle::Verdict;

/// One thing that makes `recite check` exit 1: a claim's verdict, a finding's level, or the
/// status of a number in an agent's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOn {
    /// A claim settled INVALID.
    Invalid,
    /// A claim settled UNVERIFIABLE.
    Unverifiable,
    /// A claim settled DISCREPANT.
    Discrepant,
    /// A claim settled BASE_MISMATCH.
    BaseMismatch,
    /// A claim settled REPRODUCED.
    Reproduced,
    /// A finding at level MUST.
    Must,
    /// A finding at level SHOULD.
    Should,
    /// A finding at level NOTE.
    Note,
    /// An answer number no citation supports.
    Uncited,
    /// An answer number about a cited measure that is neither its claimed nor recomputed value.
    Misquoted,
    /// An answer number repeating a cited number, given another period, population or brand
    /// than its citation covers.
    Misattributed,
    /// An answer number repeating a cited number, where recite cannot tell whether the sentence
    /// gives it the population, period or brand its citation covers.
    AttributionUnsure,
    /// An answer number repeating a cited number the data does not support.
    TracedToDiscrepant,
    /// An answer number repeating a cited number whose citation could not be re-run.
    TracedUnverified,
    /// An answer number that is recite's recomputed value, not the tool's.
    RecomputedOnly,
    /// An answer number repeating a cited number recite reproduced.
    Traced,
}

/// What a [`FailOn`] item looks at.
enum Target {
    Verdict(Verdict),
    Level(Level),
    Answer(Status),
}

impl FailOn {
    /// Every item, in the order `--help` lists them.
    pub const ALL: [FailOn; 16] = {
        use FailOn::*;
        [
            Invalid,
            Unverifiable,
            Discrepant,
            BaseMismatch,
            Reproduced,
            Must,
            Should,
            Note,
            Uncited,
            Misquoted,
            Misattributed,
            AttributionUnsure,
            TracedToDiscrepant,
            TracedUnverified,
            RecomputedOnly,
            Traced,
        ]
    };

    fn target(self) -> Target {
        use FailOn::*;
        match self {
            Invalid => Target::Verdict(Verdict::Invalid),
            Unverifiable => Target::Verdict(Verdict::Unverifiable),
            Discrepant => Target::Verdict(Verdict::Discrepant),
            BaseMismatch => Target::Verdict(Verdict::BaseMismatch),
            Reproduced => Target::Verdict(Verdict::Reproduced),
            Must => Target::Level(Level::Must),
            Should => Target::Level(Level::Should),
            Note => Target::Level(Level::Note),
            Uncited => Target::Answer(Status::Uncited),
            Misquoted => Target::Answer(Status::Misquoted),
            Misattributed => Target::Answer(Status::Misattributed),
            AttributionUnsure => Target::Answer(Status::AttributionUnsure),
            TracedToDiscrepant => Target::Answer(Status::TracedToDiscrepant),
            TracedUnverified => Target::Answer(Status::TracedUnverified),
            RecomputedOnly => Target::Answer(Status::RecomputedOnly),
            Traced => Target::Answer(Status::Traced),
        }
    }

    /// The item as `--fail-on` spells it.
    pub fn name(self) -> &'static str {
        use FailOn::*;
        match self {
            Invalid => "invalid",
            Unverifiable => "unverifiable",
            Discrepant => "discrepant",
            BaseMismatch => "base-mismatch",
            Reproduced => "reproduced",
            Must => "must",
            Should => "should",
            Note => "note",
            Uncited => "uncited",
            Misquoted => "misquoted",
            Misattributed => "misattributed",
            AttributionUnsure => "attribution-unsure",
            TracedToDiscrepant => "traced-to-discrepant",
            TracedUnverified => "traced-unverified",
            RecomputedOnly => "recomputed-only",
            Traced => "traced",
        }
    }

    /// What the item fails on, in words: the line `--help` gives it (no closing period, as clap
    /// writes help).
    pub fn help(self) -> &'static str {
        use FailOn::*;
        match self {
            Invalid => "A claim settled INVALID",
            Unverifiable => "A claim settled UNVERIFIABLE",
            Discrepant => "A claim settled DISCREPANT",
            BaseMismatch => "A claim settled BASE_MISMATCH",
            Reproduced => "A claim settled REPRODUCED",
            Must => "A finding at level MUST",
            Should => "A finding at level SHOULD",
            Note => "A finding at level NOTE",
            Uncited => "An answer number no citation supports",
            Misquoted => {
                "An answer number about a cited measure that is neither its claimed nor recomputed value"
            }
            Misattributed => {
                "An answer number repeating a cited number, given another period, population or brand than \
                 its citation covers"
            }
            AttributionUnsure => {
                "An answer number repeating a cited number, where recite cannot tell whether the sentence \
                 gives it the population, period or brand its citation covers"
            }
            TracedToDiscrepant => "An answer number repeating a cited number the data does not support",
            TracedUnverified => {
                "An answer number repeating a cited number whose citation could not be re-run"
            }
            RecomputedOnly => "An answer number that is recite's recomputed value, not the tool's",
            Traced => "An answer number repeating a cited number recite reproduced",
        }
    }

    /// Whether anything a batch counted (verdicts, finding levels, answer statuses) is one of
    /// `list`.
    pub fn any_in(list: &[FailOn], ran: &crate::check::Ran) -> bool {
        let some = |n: Option<&usize>| n.is_some_and(|n| *n > 0);
        list.iter().any(|f| match f.target() {
            Target::Verdict(v) => some(ran.summary.verdicts.get(&v)),
            Target::Level(l) => some(ran.levels.get(&l)),
            Target::Answer(s) => some(ran.summary.answer_numbers.get(&s)),
        })
    }
}

/// What `recite check` fails on when `--fail-on` is not given.
pub const DEFAULT: &str = "invalid,unverifiable,discrepant,base-mismatch,must";

/// Parses one `--fail-on` value: a comma-separated list of items, matched whatever their case or
/// separators (`BASE_MISMATCH`, `base-mismatch`); blank items are skipped. The error names the
/// unknown item and every known one.
pub fn parse_list(text: &str) -> Result<Vec<FailOn>, UnknownItem> {
    let mut list = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let wanted = fold(item);
        match FailOn::ALL.iter().find(|v| fold(v.name()) == wanted) {
            Some(v) => list.push(*v),
            None => return Err(UnknownItem(item.to_string())),
        }
    }
    Ok(list)
}

/// A `--fail-on` item that is none of [`FailOn`]; its message lists every known one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown item {:?} ({})", .0, expected())]
pub struct UnknownItem(pub String);

/// Every item, grouped by what it looks at, for the error on an unknown one.
fn expected() -> String {
    let names = |keep: fn(&Target) -> bool| {
        FailOn::ALL.iter().filter(|v| keep(&v.target())).map(|v| v.name()).collect::<Vec<_>>().join(", ")
    };
    format!(
        "expected verdicts {}; levels {}; answer statuses {}",
        names(|t| matches!(t, Target::Verdict(_))),
        names(|t| matches!(t, Target::Level(_))),
        names(|t| matches!(t, Target::Answer(_)))
    )
}
