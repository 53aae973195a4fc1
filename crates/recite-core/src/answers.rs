//! The answer-text audit: every number an agent's answer states, traced to the cited results of
//! the same exchange (docs/answers.md).
//!
//! [`mod@find`] finds the stated numbers; [`fn@trace`] matches each with the [`Source`]s (the cited
//! numbers, as claimed and as recomputed) at the number's shown precision, with the same
//! half-unit rule as claims ([`crate::settle::compare::compare`]); [`fn@audit`] does it for every agent
//! turn of a document. Ambiguity is reported, never resolved by a guess, and when candidates
//! disagree the most doubtful status is given: the cardinal rule holds here too.
//!
//! One file per concern, each importing only those below it: `status` (a number's status and
//! how doubtful it is), `source` (the cited numbers of a settled claim) and `records` (those of
//! MOCA-cited records), `answer` (what an answer's audit gives), `words` (the word rules
//! sentences are read by), `context` (one sentence indexed for tracing), `trace` (one number
//! traced), `bounds` (how much one input may trace) and `audit` (a conversation's answers).

mod answer;
pub mod attribution;
mod audit;
mod bounds;
mod context;
pub mod find;
mod records;
mod source;
mod status;
mod trace;
mod words;

pub use answer::{Answer, Sentence, StatedNumber};
pub use audit::{Audit, audit, audit_cited, audit_text};
pub use bounds::{
    MAX_INPUT_COMPARISONS, MAX_INPUT_NUMBERS, MAX_NUMBERS, NotAudited, RULE_NOT_AUDITED, Unaudited,
};
pub use context::Context;
pub use find::{Kind, Stated, find};
pub use records::record_sources;
pub use source::{Record, Source, sources, with_covers};
pub use status::{Status, UnknownStatus, summary};
pub use trace::{MAX_CANDIDATES, trace};

#[cfg(test)]
mod corpus;

#[cfg(test)]
mod tests;
