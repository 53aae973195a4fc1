//! What the audit of one answer gives: its stated numbers with their statuses
//! ([`StatedNumber`]), its sentences summarised ([`Sentence`]), the answer itself ([`Answer`]).

use std::collections::BTreeMap;

use serde::Serialize;

use super::find::Kind;
use super::status::Status;
use crate::input::Shown;

/// One stated number, with its status.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct StatedNumber {
    /// The number as written, unit included.
    pub text: String,
    /// Byte offset in the answer text.
    pub start: usize,
    /// Byte offset just past it.
    pub end: usize,
    /// Index of its sentence in [`Answer::sentences`].
    pub sentence: usize,
    /// What kind of number it is.
    pub kind: Kind,
    /// Its status.
    pub status: Status,
    /// The claim it was traced to (index into the input's claims).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<usize>,
    /// The measure it was traced to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure: Option<String>,
    /// The MOCA-cited record it was traced to (its marker and key), for an answer a
    /// `moca.citations` event cites records for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
    /// The tool's claimed number for that measure; for a MOCA-cited record, the number (for a
    /// MISQUOTED one, the numbers of its kind) the record's text states.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed: Option<String>,
    /// recite's recomputed number for that measure, at the stated precision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recomputed: Option<String>,
    /// True when two or more cited measures fit equally well: the status is then the most
    /// doubtful of theirs, and `candidates` lists them.
    pub ambiguous: bool,
    /// Every cited measure that fits (`claim #i measure`), when more than one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
    /// For a MISATTRIBUTED or ATTRIBUTION_UNSURE number: what the sentence said and what the
    /// citation covers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<String>,
    /// Why, in words.
    pub why: String,
}

/// One sentence of an answer, summarised.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Sentence {
    /// Byte offset in the answer text.
    pub start: usize,
    /// Byte offset just past it.
    pub end: usize,
    /// Its numbers per status.
    pub counts: BTreeMap<Status, usize>,
    /// The most serious status among its numbers; none when it states no number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst: Option<Status>,
}

/// One agent turn's text, audited.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Answer {
    /// Index of the turn in the conversation.
    pub turn: usize,
    /// The turn's role.
    pub role: String,
    /// The message id, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// The answer text as read; the numbers' byte offsets point into it. Reports cut it at
    /// 65,536 characters, as any conversation turn.
    pub text: String,
    /// Stated numbers per status (every status present, zeros included).
    pub counts: BTreeMap<Status, usize>,
    /// The stated numbers, in order.
    pub numbers: Vec<StatedNumber>,
    /// The sentences that state numbers.
    pub sentences: Vec<Sentence>,
    /// What became of the text: the answer (not written), or text the run took back, listed so
    /// it stays visible but not audited (no numbers, no sentences).
    #[serde(default, skip_serializing_if = "Shown::is_answer")]
    pub shown: Shown,
}
