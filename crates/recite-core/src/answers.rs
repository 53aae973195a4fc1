//! The answer-text audit: every number an agent's answer states, traced to the cited results of
//! the same exchange (docs/answers.md).
//!
//! [`mod@find`] finds the stated numbers; [`fn@trace`] matches each with the [`Source`]s (the cited
//! numbers, as claimed and as recomputed) at the number's shown precision, with the same
//! half-unit rule as claims ([`crate::settle::compare::compare`]); [`audit`] does it for every agent
//! turn of a document. Ambiguity is reported, never resolved by a guess, and when candidates
//! disagree the most doubtful status is given: the cardinal rule holds here too.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::sync::Arc;

use serde::Serialize;

use crate::claim::{Claimed, fold};
use crate::extractor::Unit;
use crate::input::{Shown, Turn};
use crate::settle::verdict::{Settlement, Verdict};

pub mod attribution;
pub mod find;
mod trace;

pub use find::{Kind, Stated, find};
pub use trace::{MAX_CANDIDATES, trace};

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

/// The numbers of the records a `moca.citations` event cites (docs/answers.md). A record's
/// numbers are those its text states, found by the rules for answers; the text is the one the
/// Reader returned in the run when it did. A number counts as checked only when the Reader
/// returned the record unchanged and its trust flags nothing.
pub fn record_sources(event: &crate::moca::MocaEvent) -> Vec<Source> {
    let mut out = Vec::new();
    if event.ignored {
        return out;
    }
    for (ci, c) in event.citations.iter().enumerate() {
        let key = c.key.clone().unwrap_or_else(|| format!("citation {ci}"));
        let label = match &c.marker {
            Some(m) => format!("{m} {key}"),
            None => key.clone(),
        };
        let mut refs: Vec<String> = c.marker.iter().filter(|m| !m.is_empty()).cloned().collect();
        refs.extend(crate::moca::references(&c.record));
        let sent = c.record.get("text").and_then(serde_json::Value::as_str);
        let flags = trust_flags(&c.record);
        let (texts, status, why): (Vec<&str>, Status, String) = match (c.returned, &c.reader_text) {
            (Some(true), Some(t)) if flags.is_empty() => {
                (vec![t], Status::Traced, "returned by the Reader in this run, unchanged".into())
            }
            (Some(true), Some(t)) => {
                (vec![t], Status::TracedUnverified, format!("the Reader's record is {}", flags.join(", ")))
            }
            (Some(false), Some(t)) => (
                vec![t],
                Status::TracedUnverified,
                "the event's record differs from the one the Reader returned".into(),
            ),
            _ => (
                sent.into_iter().collect(),
                Status::TracedUnverified,
                "a record the Reader did not return in this run".into(),
            ),
        };
        let mut push = |text: &str, status: Status, why: String| {
            for n in find(text).into_iter().filter(|n| n.range.is_none() && n.kind != Kind::Points) {
                out.push(record_number(ci, &label, &refs, &n, status, why.clone()));
            }
        };
        for t in &texts {
            push(t, status, why.clone());
        }
        // A number the event's copy states and the Reader's does not: the data (the Reader's
        // record) does not support it.
        if let (Some(false), Some(reader), Some(sent)) = (c.returned, &c.reader_text, sent) {
            let theirs = find(reader);
            for n in find(sent).into_iter().filter(|n| n.range.is_none() && n.kind != Kind::Points) {
                if !theirs.iter().any(|r| r.text == n.text) {
                    let why = "the event's record states it, the Reader's record does not".to_string();
                    out.push(record_number(ci, &label, &refs, &n, Status::TracedToDiscrepant, why));
                }
            }
        }
    }
    out
}

/// The trust flags that leave a record's content in doubt: stale, superseded, contested, out of
/// force.
fn trust_flags(record: &serde_json::Value) -> Vec<&'static str> {
    let flag = |k: &str| record.pointer(&format!("/trust/{k}"));
    let set = |k: &str| flag(k).is_some_and(|v| !v.is_null() && v != &serde_json::Value::Bool(false));
    let mut out = Vec::new();
    if flag("stale").and_then(serde_json::Value::as_bool) == Some(true) {
        out.push("stale");
    }
    if set("superseded") {
        out.push("superseded");
    }
    if set("contested") {
        out.push("contested");
    }
    if flag("inForce").and_then(serde_json::Value::as_bool) == Some(false) {
        out.push("out of force");
    }
    out
}

/// One number of a cited record's text as a source.
fn record_number(ci: usize, label: &str, refs: &[String], n: &Stated, status: Status, why: String) -> Source {
    let percent = matches!(n.kind, Kind::Percent | Kind::Relative);
    Source {
        claim: ci,
        measure: label.to_string(),
        unit: Some(if percent { Unit::Proportion } else { Unit::Value }),
        claimed: Some(Claimed {
            text: n.text.clone(),
            value: n.value,
            decimals: n.decimals,
            percent,
            key: None,
            pointer: String::new(),
            unreadable: None,
            word: false,
        }),
        recomputed: None,
        matched: status == Status::Traced,
        verdict: Verdict::Unverifiable,
        base_n: None,
        count: n.kind == Kind::Count,
        record: Some(Record { label: label.to_string(), refs: refs.to_vec(), status, why }),
        covers: None,
    }
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

/// How serious a status is, for picking the most doubtful among candidates.
fn doubt(s: Status) -> u8 {
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

/// The stem a sentence mentions a measure by: its name's first six letters, case-folded
/// (`consid` for Considered and consideration).
fn stem(measure: &str) -> String {
    measure.to_lowercase().chars().filter(|c| c.is_alphanumeric()).take(6).collect()
}

/// One sentence of an answer, indexed once for tracing its numbers: its lower-cased text, where
/// its numbers stand and the stretch of text each one owns, and (filled on first use) where each
/// measure stem and record reference is mentioned. Tracing a number then costs a binary search
/// per source, whatever the sentence's length: lower-casing and scanning the sentence per
/// number made the audit cubic in a long sentence (docs/answers.md, "Cost").
pub struct Context<'a> {
    /// The sentence's text.
    sentence: &'a str,
    /// Where the sentence starts in the answer text.
    offset: usize,
    /// The sentence lower-cased.
    lower: String,
    /// Whether lower-casing kept byte lengths; if not, a mention is found but not placed (as
    /// near as can be: distance 0, owned by every number).
    same_len: bool,
    /// Where the sentence's numbers start (answer offsets), in order.
    starts: Vec<usize>,
    /// For each of them, the stretch of the answer (inclusive) whose mentions it owns.
    owns: Vec<(usize, usize)>,
    /// The same by nearness alone (no list sharing): where a number's own period, population
    /// or brand words are (`26.8% for Versant and 28.7% for Northwind`).
    near: Vec<(usize, usize)>,
    /// Where each number ends (answer offsets), and whether it is a change.
    ends: Vec<(usize, bool)>,
    /// The counts the sentence states.
    counts: Vec<f64>,
    /// For each number, the subject its table header or list lead-in gives it (lower case).
    subjects: Vec<Option<String>>,
    /// Word-start mentions of a measure stem in `lower` (answer offsets), by stem.
    stems: RefCell<HashMap<String, Rc<[usize]>>>,
    /// Mentions of a record's marker or reference in the sentence (answer offsets).
    refs: RefCell<HashMap<String, Rc<[usize]>>>,
    /// Whole-word mentions of an attribution phrase in `lower` (answer offsets).
    phrases: RefCell<HashMap<String, Rc<[usize]>>>,
    /// The sentence's levels (no counts, changes or second ends of a range): where each starts
    /// and ends (answer offsets), in order. A list pairs them with its brands, periods or
    /// populations ([`Pairing`]).
    levels: Vec<(usize, usize)>,
    /// The levels themselves, in the same order: a change may be derived from two of them.
    stated_levels: Vec<Stated>,
    /// How the levels pair with each dimension's options, by the options' names.
    pairings: RefCell<HashMap<String, Rc<Pairing>>>,
    /// The population phrases the sentence states (`among women`, `of men aged 18-34`): where
    /// each starts (answer offset), as written (lower case), and its words.
    populations: Vec<(usize, String, Vec<String>)>,
}

/// How the levels of one sentence pair with the options of one dimension (brands, periods,
/// populations) the sentence names (docs/answers.md, "Swaps").
#[derive(Debug, Clone, PartialEq)]
enum Pairing {
    /// Fewer than two levels or two named options, or no list: the nearness rules apply.
    None,
    /// A list whose every level has its own option: the option's name, by the level's start.
    /// The second map: where the first level of each option starts.
    Unique(HashMap<usize, String>, HashMap<String, usize>),
    /// A list naming two options or more in an order recite cannot pair with its levels.
    Ambiguous(Vec<String>),
}

#[cfg(test)]
thread_local! {
    /// Work the audit does, in bytes scanned and cited values compared: counted in tests to
    /// assert that the audit stays linear in its input (a count, not a time: debug builds are
    /// slow).
    static WORK: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts `n` units of work (in tests only).
#[inline]
fn work(n: usize) {
    #[cfg(test)]
    WORK.with(|w| w.set(w.get() + n));
    #[cfg(not(test))]
    let _ = n;
}

/// Words that join the items of a list of numbers (`26.8% for Versant and 28.7% for Northwind`).
const LIST_JOINS: &[&str] =
    &["and", "or", "vs", "versus", "against", "while", "compared", "with", "respectively"];

/// Words that open the subject phrase of one item of a list (`for Versant`, `among women`).
const LIST_SUBJECTS: &[&str] = &["for", "among", "in", "at", "of", "the"];

impl<'a> Context<'a> {
    /// Indexes the sentence `span` of `text` holding `numbers` (in order of start), with the
    /// subject each number's table header or list lead-in gives it ([`find::subject_of`]).
    pub fn new(
        text: &'a str,
        span: (usize, usize),
        numbers: &[&Stated],
        subjects: Vec<Option<String>>,
    ) -> Self {
        let sentence = &text[span.0..span.1];
        work(sentence.len() + numbers.len());
        let lower = sentence.to_lowercase();
        let stated_levels: Vec<Stated> = numbers
            .iter()
            .enumerate()
            .filter(|(i, n)| {
                matches!(n.kind, Kind::Percent | Kind::Number)
                    && !(n.range.is_some() && *i > 0 && numbers[i - 1].range == n.range)
            })
            .map(|(_, n)| (*n).clone())
            .collect();
        let levels: Vec<(usize, usize)> = stated_levels.iter().map(|n| (n.start, n.end)).collect();
        let populations =
            if lower.len() == sentence.len() { population_phrases(&lower, span.0) } else { Vec::new() };
        let starts: Vec<usize> = numbers.iter().map(|n| n.start).collect();
        let mut owns: Vec<(usize, usize)> = Vec::with_capacity(starts.len());
        let mut near: Vec<(usize, usize)> = Vec::with_capacity(starts.len());
        for (i, &x) in starts.iter().enumerate() {
            // A mention belongs to the number nearest to it (ties to both).
            let mut lo = if i == 0 { 0 } else { (starts[i - 1] + x).div_ceil(2) };
            let hi = starts.get(i + 1).map_or(usize::MAX, |&r| (x + r) / 2);
            near.push((lo, hi));
            // An item of a list shares the measure word heading the list.
            if i > 0
                && joins_list(
                    &text[numbers[i - 1].end.min(x)..x],
                    &text[numbers[i].end..span.1.max(numbers[i].end)],
                )
            {
                lo = owns[i - 1].0;
            }
            owns.push((lo, hi));
        }
        Context {
            sentence,
            offset: span.0,
            same_len: lower.len() == sentence.len(),
            lower,
            starts,
            owns,
            near,
            ends: numbers.iter().map(|n| (n.end, matches!(n.kind, Kind::Points | Kind::Relative))).collect(),
            counts: numbers.iter().filter(|n| n.kind == Kind::Count).map(|n| n.value).collect(),
            subjects,
            stems: RefCell::default(),
            refs: RefCell::default(),
            phrases: RefCell::default(),
            levels,
            stated_levels,
            pairings: RefCell::default(),
            populations,
        }
    }

    /// Whole-word mentions of `phrase` (lower case) in the sentence.
    fn phrase_mentions(&self, phrase: &str) -> Rc<[usize]> {
        if let Some(m) = self.phrases.borrow().get(phrase) {
            return m.clone();
        }
        let lower = &self.lower;
        work(lower.len());
        let found: Rc<[usize]> = whole_words(lower, phrase).map(|p| self.offset + p).collect();
        self.phrases.borrow_mut().insert(phrase.to_string(), found.clone());
        found
    }

    /// Whether the sentence says `phrase` (lower case) of the number at `at`: nearer to it than
    /// to any other number (anywhere in the sentence, with `anywhere`), or in its table headers
    /// or list lead-in.
    fn says(&self, phrase: &str, at: usize, anywhere: bool) -> bool {
        self.says_where(phrase, at, anywhere, false)
    }

    /// [`Self::says`] of a level: a phrase after `since` is where a change starts (`fell 5%
    /// since W5, to 44.2%`), said of no level.
    fn says_of_level(&self, phrase: &str, at: usize, anywhere: bool) -> bool {
        self.says_where(phrase, at, anywhere, true)
    }

    /// [`Self::says`], leaving out the mentions after `since` with `level`.
    fn says_where(&self, phrase: &str, at: usize, anywhere: bool, level: bool) -> bool {
        let Ok(i) = self.starts.binary_search(&at) else { return false };
        let found = self.phrase_mentions(phrase);
        let (lo, hi) = if anywhere { (0, usize::MAX) } else { self.near[i] };
        let k = found.partition_point(|&p| p < lo);
        let in_sentence = !found.is_empty()
            && (!self.same_len
                || found[k..]
                    .iter()
                    .take_while(|&&p| p <= hi)
                    .any(|&p| !level || !after_since(&self.lower[..p - self.offset])));
        in_sentence
            || self.subjects.get(i).and_then(|s| s.as_deref()).is_some_and(|sub| {
                work(sub.len());
                whole_words(sub, phrase).any(|q| !level || !after_since(&sub[..q]))
            })
    }

    /// What the sentence says of the number at `at` that contradicts what `src`'s citation
    /// covers: another period, population or column label of the study, and nowhere the cited
    /// one's words (`in W5` beside a W6 figure). `None` when nothing contradicts it. A list
    /// that gives each level its own option is read as it pairs them (`28.7% for Versant and
    /// 26.8% for Northwind`: a swap); otherwise a sentence naming the cited option anywhere
    /// contradicts nothing.
    fn contradiction(&self, src: &Source, at: usize) -> Option<String> {
        let covers = src.covers.as_ref()?;
        for d in &covers.dims {
            if let Pairing::Unique(map, first) = &*self.pairing(d)
                && let Some(name) = map.get(&at)
            {
                if *name == d.cited {
                    continue;
                }
                // The level the list gives the cited option, if any: the two were swapped.
                let swapped = first.get(&d.cited).and_then(|&s| {
                    let k = self.levels.binary_search_by_key(&s, |&(a, _)| a).ok()?;
                    self.sentence.get(s - self.offset..self.levels[k].1 - self.offset)
                });
                return Some(match swapped {
                    Some(t) => format!(
                        "the sentence says {name} ({}); the citation covers {}, to which the sentence gives {t}",
                        d.what, d.cited
                    ),
                    None => format!("the sentence says {name} ({}); the citation covers {}", d.what, d.cited),
                });
            }
            let said =
                |marks: &[String], anywhere: bool| marks.iter().any(|m| self.says_of_level(m, at, anywhere));
            if said(&d.marks, true) {
                continue;
            }
            // The only option of this dimension the sentence names is said of all its numbers
            // (`Versant's purchase went from 30% in W5 to 27% in W6`: both are Versant's), but
            // for a number with a population phrase of its own (`compared with 44.2% among
            // aware adults overall`): that phrase is whom it is about.
            let only = || {
                if d.what == "population" && self.own_population(at).is_some() {
                    return None;
                }
                let mut named = d.others.iter().filter(|(_, marks)| said(marks, true));
                let first = named.next();
                if named.next().is_some() {
                    return None;
                }
                first.filter(|(_, marks)| d.what != "period" || !self.period_of_another(marks, at))
            };
            if let Some((name, _)) = d.others.iter().find(|(_, marks)| said(marks, false)).or_else(only) {
                return Some(format!(
                    "the sentence says {name} ({}); the citation covers {}",
                    d.what, d.cited
                ));
            }
        }
        None
    }

    /// Why recite cannot tell whether the sentence gives the number at `at` what `src`'s
    /// citation covers, if it cannot: a list naming the cited option and others in an order
    /// it cannot pair with its levels, or a population phrase of the number's (`among men`)
    /// whose population words the cited base does not have.
    fn unsure(&self, src: &Source, at: usize) -> Option<String> {
        let covers = src.covers.as_ref()?;
        for d in &covers.dims {
            if let Pairing::Ambiguous(names) = &*self.pairing(d)
                && names.contains(&d.cited)
                && self.levels.binary_search_by_key(&at, |&(s, _)| s).is_ok()
            {
                return Some(format!(
                    "the sentence names {} ({}) in an order recite cannot pair with its numbers; the citation covers {}",
                    names.join(", "),
                    d.what,
                    d.cited
                ));
            }
        }
        // The cited population and another said of one number (`Among women in the West`): a
        // part of the cited population, which the citation does not cover by itself.
        for d in covers.dims.iter().filter(|d| d.what == "population") {
            let said = |marks: &[String]| marks.iter().any(|m| self.says_of_level(m, at, false));
            if !said(&d.marks) || matches!(&*self.pairing(d), Pairing::Unique(..)) {
                continue;
            }
            if let Some((other, _)) = d.others.iter().find(|(_, marks)| said(marks)) {
                return Some(format!(
                    "the sentence says {} and {other} ({}) of this number; the citation covers {} alone",
                    d.cited, d.what, d.cited
                ));
            }
        }
        let base = covers.base.as_ref()?;
        let (lo, hi) = self.near[self.starts.binary_search(&at).ok()?];
        let from = self.populations.partition_point(|(p, _, _)| *p < lo);
        self.populations[from..].iter().take_while(|(p, _, _)| *p <= hi).find_map(|(_, phrase, words)| {
            words.iter().any(|w| !attribution::base_has(base, w)).then(|| {
                format!(
                    "the sentence says “{phrase}”, a population recite could not match to the citation's base {}",
                    base.name
                )
            })
        })
    }

    /// Whether every mention of a period (`marks`) in the sentence is another number's in a way
    /// that keeps it from the number at `at`: after and nearer a change, whose reference it is
    /// (`down 2.5 points on W5`), or after and nearer a level the sentence compares this one
    /// with (`44.2%, compared with 46.7% in W5`). Not when a table header or list lead-in names
    /// it.
    fn period_of_another(&self, marks: &[String], at: usize) -> bool {
        let Ok(i) = self.starts.binary_search(&at) else { return false };
        if self
            .subjects
            .get(i)
            .and_then(|s| s.as_deref())
            .is_some_and(|sub| marks.iter().any(|m| whole_words(sub, m).next().is_some()))
            || !self.same_len
        {
            return false;
        }
        let mut mentions = marks.iter().flat_map(|m| self.phrase_mentions(m).to_vec()).peekable();
        mentions.peek().is_some()
            && mentions.all(|p| {
                if after_since(&self.lower[..p - self.offset]) {
                    return true;
                }
                let j = self.near.partition_point(|&(lo, _)| lo <= p).saturating_sub(1);
                // Before its number, a period heads what follows (`in W7, 46.2% vs 40.3%`).
                if j == i || p < self.starts[j] {
                    return false;
                }
                let (a, b) =
                    if j < i { (self.ends[j].0, self.starts[i]) } else { (self.ends[i].0, self.starts[j]) };
                let gap = self.lower.get(a.min(b) - self.offset..b.max(a) - self.offset).unwrap_or("");
                self.ends[j].1 || gap.split(|c: char| !c.is_alphanumeric()).any(|w| COMPARISONS.contains(&w))
            })
    }

    /// How many words of the population phrases said of the number at `at` (`among adults
    /// aware of Versant`) `src`'s cited base has ([`attribution::base_says`]): what tells
    /// candidates on two bases apart when the sentence names one of them.
    fn population_said(&self, src: &Source, at: usize) -> usize {
        let Some(base) = src.covers.as_ref().and_then(|c| c.base.as_ref()) else { return 0 };
        let Ok(i) = self.starts.binary_search(&at) else { return 0 };
        let (lo, hi) = self.near[i];
        let from = self.populations.partition_point(|(p, _, _)| *p < lo);
        self.populations[from..]
            .iter()
            .take_while(|(p, _, _)| *p <= hi)
            .flat_map(|(_, _, words)| words)
            .filter(|w| attribution::base_says(base, w))
            .count()
    }

    /// The population phrase nearest the number at `at` that is its own (`among aware adults`
    /// after it, nearer to it than to any other number), if any.
    fn own_population(&self, at: usize) -> Option<&str> {
        let (lo, hi) = self.near[self.starts.binary_search(&at).ok()?];
        let from = self.populations.partition_point(|(p, _, _)| *p < lo);
        self.populations[from..].iter().take_while(|(p, _, _)| *p <= hi).map(|(_, t, _)| t.as_str()).next()
    }

    /// Whether a change's two ends fit the periods, populations and brands the sentence names
    /// (docs/answers.md, "Changes"): both ends are among the options it names of a dimension
    /// (`between W5 and W6`, `Versant's … than Corvana's`, `Versant's … fell`), except that one
    /// period named (`since W5`) needs only one end; and the ends differ in one dimension, or in
    /// several only where the sentence names two options of each. A sentence naming none, or an end the catalog knows nothing
    /// of, constrains nothing.
    fn fits_pair(&self, a: &Source, b: &Source, at: usize) -> bool {
        let (Some(ca), Some(cb)) = (&a.covers, &b.covers) else { return true };
        let named = |marks: &[String]| marks.iter().any(|m| self.says(m, at, true));
        // A change compares two results that differ in one respect (two waves, two brands),
        // or in several only where the sentence names both sides of each.
        let mut differ = 0;
        let mut both_named = true;
        let fits = ca.dims.iter().all(|d| {
            let Some(e) = cb.dims.iter().find(|e| e.what == d.what) else { return true };
            let count = usize::from(named(&d.marks)) + d.others.iter().filter(|(_, m)| named(m)).count();
            if d.cited != e.cited {
                differ += 1;
                both_named &= count >= 2;
            }
            let (x, y) = (named(&d.marks), named(&e.marks));
            match count {
                0 => true,
                // `since W5`: the other end is the wave the answer is about.
                1 if d.what == "period" => x || y,
                _ => x && y,
            }
        });
        fits && (differ <= 1 || both_named)
    }

    /// Whether the two ends of a pair differ in a dimension whose two options, one each end's,
    /// the sentence both names (`Versant's … Corvana's`).
    fn contrasts(&self, a: &Source, b: &Source, at: usize) -> bool {
        let (Some(ca), Some(cb)) = (&a.covers, &b.covers) else { return false };
        let named = |marks: &[String]| marks.iter().any(|m| self.says(m, at, true));
        ca.dims.iter().any(|d| {
            cb.dims
                .iter()
                .any(|e| e.what == d.what && e.cited != d.cited && named(&d.marks) && named(&e.marks))
        })
    }

    /// How the sentence's levels pair with the options of `d` (computed once per sentence and
    /// set of options).
    fn pairing(&self, d: &attribution::Dim) -> Rc<Pairing> {
        let mut names: Vec<&str> =
            std::iter::once(d.cited.as_str()).chain(d.others.iter().map(|(n, _)| n.as_str())).collect();
        names.sort_unstable();
        let key = format!("{}\u{0}{}", d.what, names.join("\u{0}"));
        if let Some(p) = self.pairings.borrow().get(&key) {
            return p.clone();
        }
        let p = Rc::new(self.pair(d));
        self.pairings.borrow_mut().insert(key, p.clone());
        p
    }

    /// [`Self::pairing`], computed. A list of levels (only joining words, subject phrases,
    /// options' names and bases between them) pairs uniquely when the options it names stand
    /// one per gap with exactly one gap empty: `28.7% for Versant and 26.8% for Northwind`
    /// (each after its level), `Versant at 26.8% and Northwind at 28.7%` (each before),
    /// `in W6 44%, against 47% in W5`. All the options before the first level or after the
    /// last pair in order only with `respectively`, or for periods (`from 47% to 44% between
    /// W5 and W6`).
    fn pair(&self, d: &attribution::Dim) -> Pairing {
        let k = self.levels.len();
        if k < 2 || !self.same_len {
            return Pairing::None;
        }
        let options = std::iter::once((&d.cited, &d.marks)).chain(d.others.iter().map(|(n, m)| (n, m)));
        let mut mentions: Vec<(usize, usize, &str)> = Vec::new();
        let mut words: Vec<&str> = Vec::new();
        for (name, marks) in options {
            for m in marks {
                mentions.extend(self.phrase_mentions(m).iter().map(|&p| (p, m.len(), name.as_str())));
                words.extend(m.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()));
            }
        }
        mentions.sort_unstable();
        let mut named: Vec<&str> = mentions.iter().map(|(_, _, n)| *n).collect();
        named.sort_unstable();
        named.dedup();
        if named.len() < 2 {
            return Pairing::None;
        }
        for w in self.levels.windows(2) {
            let gap = self.lower.get(w[0].1 - self.offset..w[1].0 - self.offset);
            if !gap.is_some_and(|g| listish(g, &words)) {
                return Pairing::None;
            }
        }
        // A name in brackets right after a level is that level's own (`19.6% (Corvana)`); the
        // other levels pair with the names left, as below.
        let mut pinned: HashMap<usize, &str> = HashMap::new();
        let mut rest: Vec<(usize, &str)> = Vec::new();
        for &(p, len, name) in &mentions {
            let j = self.levels.partition_point(|&(_, e)| e <= p);
            let bracketed = j > 0
                && self
                    .lower
                    .get(self.levels[j - 1].1 - self.offset..p - self.offset)
                    .is_some_and(|b| b.trim() == "(")
                && self.lower.get(p + len - self.offset..).is_some_and(|a| a.trim_start().starts_with(')'));
            if bracketed && pinned.get(&(j - 1)).is_none_or(|n| *n == name) {
                pinned.insert(j - 1, name);
            } else {
                rest.push((p, name));
            }
        }
        // The levels no bracket names, and (slot j) the options named before the j-th of them
        // (and after the one before); slot `free.len()`: after the last.
        let free: Vec<usize> = (0..k).filter(|i| !pinned.contains_key(i)).collect();
        let kf = free.len();
        let mut slots: Vec<Vec<&str>> = vec![Vec::new(); kf + 1];
        for &(p, name) in &rest {
            let j = free.partition_point(|&i| self.levels[i].1 <= p);
            if !slots[j].contains(&name) {
                slots[j].push(name);
            }
        }
        let ambiguous = Pairing::Ambiguous(named.iter().map(|n| n.to_string()).collect());
        let pair = |f: &dyn Fn(usize) -> String| {
            let mut map: HashMap<usize, String> =
                free.iter().enumerate().map(|(j, &i)| (self.levels[i].0, f(j))).collect();
            map.extend(pinned.iter().map(|(&i, n)| (self.levels[i].0, n.to_string())));
            let mut first: HashMap<String, usize> = HashMap::new();
            for &(s, _) in &self.levels {
                first.entry(map[&s].clone()).or_insert(s);
            }
            Pairing::Unique(map, first)
        };
        if kf == 0 {
            return pair(&|_| String::new());
        }
        // All options at one end, one per level: in order, where the sentence says so.
        let in_order = d.what == "period" || IN_ORDER.iter().any(|w| self.lower.contains(w));
        for end in [0, kf] {
            if slots[end].len() == kf
                && in_order
                && slots.iter().enumerate().all(|(j, s)| j == end || s.is_empty())
            {
                return pair(&|j| slots[end][j].to_string());
            }
        }
        if slots.iter().any(|s| s.len() > 1) {
            return ambiguous;
        }
        let empty: Vec<usize> = (0..=kf).filter(|&j| slots[j].is_empty()).collect();
        let &[e] = empty.as_slice() else { return ambiguous };
        pair(&|j| slots[if j < e { j } else { j + 1 }][0].to_string())
    }

    /// The stretch of the answer whose mentions the number at `at` owns.
    fn owned(&self, at: usize) -> (usize, usize) {
        match self.starts.binary_search(&at) {
            Ok(i) => self.owns[i],
            Err(i) => (
                if i == 0 { 0 } else { (self.starts[i - 1] + at).div_ceil(2) },
                self.starts.get(i).map_or(usize::MAX, |&r| (at + r) / 2),
            ),
        }
    }

    /// Word-start mentions of `stem` (lower case) in the sentence.
    fn stem_mentions(&self, stem: &str) -> Rc<[usize]> {
        if let Some(m) = self.stems.borrow().get(stem) {
            return m.clone();
        }
        let lower = &self.lower;
        work(lower.len());
        let word_start = |p: usize| p == 0 || !lower[..p].ends_with(|c: char| c.is_alphanumeric());
        let nps = |p: usize| lower.get(p..).is_some_and(|r| r.starts_with(NET_PROMOTER)) && word_start(p);
        let mut found: Vec<usize> = lower
            .match_indices(stem)
            .map(|(p, _)| p)
            .filter(|&p| word_start(p))
            .filter(|&p| !describes_people(&lower[p..]))
            // `promoter` in `net promoter score` names the NPS, not the promoters' share.
            .filter(|&p| !(p >= 4 && nps(p - 4)))
            .collect();
        if NPS_STEMS.contains(&stem) {
            found.extend(lower.match_indices(NET_PROMOTER).map(|(p, _)| p).filter(|&p| word_start(p)));
            found.sort_unstable();
            found.dedup();
        }
        let found: Rc<[usize]> = found.into_iter().map(|p| self.offset + p).collect();
        self.stems.borrow_mut().insert(stem.to_string(), found.clone());
        found
    }

    /// Mentions of a record's marker or node reference in the sentence.
    fn ref_mentions(&self, needle: &str) -> Rc<[usize]> {
        if let Some(m) = self.refs.borrow().get(needle) {
            return m.clone();
        }
        work(self.sentence.len());
        let found: Rc<[usize]> = self.sentence.match_indices(needle).map(|(p, _)| self.offset + p).collect();
        self.refs.borrow_mut().insert(needle.to_string(), found.clone());
        found
    }

    /// Byte distance from `at` to the nearest of `found` (sorted); with `owned`, only among
    /// those the number at `at` owns.
    fn nearest(&self, found: &[usize], at: usize, owned: bool) -> Option<usize> {
        work(1);
        let (lo, hi) = if owned { self.owned(at) } else { (0, usize::MAX) };
        let k = found.partition_point(|&p| p < at);
        let left = k.checked_sub(1).map(|j| found[j]).filter(|&p| p >= lo).map(|p| at - p);
        let right = found.get(k).copied().filter(|&p| p <= hi).map(|p| p - at);
        match (left, right) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Byte distance from the number at `at` to the nearest mention of `measure`, if any; with
    /// `owned`, only the mentions that number owns: those nearer to it than to any other number
    /// of the sentence (`44% would consider it, and 58% would recommend it`: the 58% is not
    /// about consideration), or heading a list it is an item of.
    fn mention(&self, measure: &str, at: usize, owned: bool) -> Option<usize> {
        // A conversion (`Considered → Purchased`) is mentioned only when both its stages are:
        // `47% would consider it` is about Considered, not about the step from it to Purchased.
        if let Some((from, to)) = measure.split_once('→') {
            let a = self.mention(from.trim(), at, owned)?;
            let b = self.mention(to.trim(), at, owned)?;
            return Some(a.max(b));
        }
        let st = stem(measure);
        if st.len() < 2 {
            return None;
        }
        let found = self.stem_mentions(&st);
        if !self.same_len {
            // Lower-casing moved byte offsets: "mentioned somewhere" is all that is known.
            return (!found.is_empty()).then_some(0);
        }
        // Not named in the sentence: a table cell's headers or a bullet's lead-in may name it,
        // farther than anything in the sentence.
        self.nearest(&found, at, owned).or_else(|| {
            let sub = self.subjects.get(self.starts.binary_search(&at).ok()?)?.as_deref()?;
            work(sub.len());
            sub.match_indices(st.as_str())
                .any(|(p, _)| p == 0 || !sub[..p].ends_with(|c: char| c.is_alphanumeric()))
                .then_some(self.sentence.len() + 1)
        })
    }

    /// What the sentence's mention of `src`'s measure nearest the number at `at` is said to be
    /// of, when that is something the citation does not cover: `awareness of the new campaign`
    /// (a determiner, then words naming neither the cited column nor a sibling, nor a brand or
    /// product in general). Such a sentence is not about the cited measure: its number is not a
    /// misquote of it.
    fn measure_of_another(&self, src: &Source, at: usize) -> Option<String> {
        if src.record.is_some() || !self.same_len || src.measure.contains('→') {
            return None;
        }
        let st = stem(&src.measure);
        if st.len() < 2 {
            return None;
        }
        let found = self.stem_mentions(&st);
        let p = found.iter().copied().min_by_key(|&p| p.abs_diff(at))?;
        let rest = self.lower.get(p - self.offset..)?;
        let rest = rest.trim_start_matches(|c: char| c.is_alphanumeric() || c == '-');
        let mut words = rest.split_whitespace();
        if words.next() != Some("of") {
            return None;
        }
        if !matches!(words.next(), Some("the" | "a" | "an" | "this" | "that" | "its" | "their" | "our")) {
            return None;
        }
        let object: Vec<&str> = words
            .take(3)
            .map(|w| w.trim_end_matches(|c: char| !c.is_alphanumeric()))
            .take_while(|w| !w.is_empty() && !OBJECT_STOPS.contains(w))
            .collect();
        let covered = |w: &str| {
            GENERIC_OBJECTS.contains(&w)
                || attribution::population_word(w)
                || src.covers.as_ref().is_some_and(|c| {
                    c.dims
                        .iter()
                        .filter(|d| d.what == "column label")
                        .any(|d| d.marks.iter().chain(d.others.iter().flat_map(|(_, m)| m)).any(|m| m == w))
                })
        };
        let named = object.iter().any(|w| w.chars().count() >= 4 && w.chars().all(char::is_alphabetic));
        (named && !object.iter().any(|w| covered(w))).then(|| object.join(" "))
    }

    /// Byte distance from the number at `at` to the nearest place the sentence names `src`: its
    /// measure, or for a MOCA-cited record its marker or node reference (as [`Self::mention`]).
    fn names(&self, src: &Source, at: usize, owned: bool) -> Option<usize> {
        let Some(r) = &src.record else {
            return self.mention(&src.measure, at, owned);
        };
        r.refs
            .iter()
            .filter(|n| !n.is_empty())
            .filter_map(|needle| self.nearest(&self.ref_mentions(needle), at, owned))
            .min()
    }
}

/// What says a list's options pair with its levels in the order both are written (`Versant and
/// Corvana are at 44% and 31% respectively`, `…, in that order`).
const IN_ORDER: &[&str] = &["respectively", "in that order", "in this order", "in the same order"];

/// Words that end what a measure is said to be of (`awareness of the campaign is 33%`).
const OBJECT_STOPS: &[&str] = &[
    "is", "was", "are", "were", "stands", "stood", "sits", "rose", "fell", "reached", "at", "in", "among",
    "for", "has", "had", "remains", "stays",
];

/// What a measure may be said to be of that is the cited column's thing in general.
const GENERIC_OBJECTS: &[&str] =
    &["brand", "brands", "product", "products", "company", "category", "label", "name", "range", "line"];

/// How a sentence names the net promoter score in words; [`NPS_STEMS`] are its measures' stems
/// (`NPS`, `Net promoter score`).
const NET_PROMOTER: &str = "net promoter";

/// The stems of a measure named by [`NET_PROMOTER`].
const NPS_STEMS: &[&str] = &["nps", "netpro"];

/// Whether the word `text` starts with describes people rather than names a measure: it is
/// followed by `adults`, `respondents`, `people` or `consumers` (`aware adults` are a base,
/// not the Aware measure; `loyal customers` still name loyalty).
fn describes_people(text: &str) -> bool {
    let rest = text.trim_start_matches(char::is_alphanumeric);
    let next = rest.trim_start_matches(' ');
    if next.len() == rest.len() {
        return false;
    }
    let word: String =
        next.chars().take(24).take_while(|c| c.is_alphanumeric() || *c == '-').collect::<String>();
    matches!(word.as_str(), "adults" | "adult" | "respondents" | "people" | "consumers")
}

/// Words between two levels that compare them (`44.2%, compared with 46.7% in W5`): a period
/// nearer the second is not the first's.
const COMPARISONS: &[&str] = &["compared", "against", "vs", "versus", "than", "from"];

/// Whether `before`, the text before a mention, ends in the word `since`: the mention is
/// where a change starts (`since W5`).
fn after_since(before: &str) -> bool {
    let t = before.trim_end();
    t.len() < before.len() && t.strip_suffix("since").is_some_and(|r| !r.ends_with(char::is_alphanumeric))
}

/// Where `phrase` stands in `text` as whole words (no letter or digit touching either end).
fn whole_words<'t>(text: &'t str, phrase: &'t str) -> impl Iterator<Item = usize> + 't {
    text.match_indices(phrase).map(|(p, _)| p).filter(move |&p| {
        let before = text[..p].chars().next_back();
        let after = text[p + phrase.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// Words that may stand between two levels of a list pairing them with options (`Versant at
/// 26.8% and Northwind at 28.7%`, `in W6 44%, against 47% in W5`), besides joins, subject
/// openers, the options' names and a stated base (`(n = 4,654)`).
const LIST_LINKS: &[&str] = &["to", "from", "is", "was", "are", "were", "s", "its", "their", "on", "by", "n"];

/// Whether `gap` (lower case), the text between two levels, leaves them items of one list
/// naming options whose words are `words` ([`Context::pair`]).
fn listish(gap: &str, words: &[&str]) -> bool {
    if gap.len() > 80 || gap.contains(['\n', '.', '!', '?']) {
        return false;
    }
    gap.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).all(|w| {
        LIST_JOINS.contains(&w)
            || LIST_SUBJECTS.contains(&w)
            || LIST_LINKS.contains(&w)
            || words.contains(&w)
            || w.bytes().all(|b| b.is_ascii_digit())
    })
}

/// Words that open a population phrase (`among women`, `of men aged 18-34`, `for non-users`).
const POPULATION_OPENERS: &[&str] = &["among", "amongst", "of", "for"];

/// Words that end a population phrase: verbs and the words opening another phrase.
const PHRASE_STOPS: &[&str] = &[
    "is", "are", "was", "were", "would", "will", "say", "says", "said", "have", "has", "had", "do", "does",
    "did", "who", "that", "which", "with", "in", "at", "on", "to", "than", "vs", "versus", "compared",
    "while", "against", "from", "by", "rose", "fell", "stands", "sits", "into", "as", "over", "per",
];

/// The population phrases of a sentence (lower case, `offset` its start in the answer): an
/// opener ([`POPULATION_OPENERS`]) and the words after it, up to six, to a punctuation mark,
/// a number or a verb ([`PHRASE_STOPS`]), kept when one of them is a population word or an
/// age band ([`attribution::population_word`]). Each as where it starts, its text and words.
fn population_phrases(lower: &str, offset: usize) -> Vec<(usize, String, Vec<String>)> {
    let mut out = Vec::new();
    for opener in POPULATION_OPENERS {
        for p in whole_words(lower, opener) {
            let rest = &lower[p + opener.len()..];
            // At most 120 bytes: a phrase costs the same whatever the sentence's length.
            let window = (0..=rest.len().min(120)).rev().find(|&i| rest.is_char_boundary(i)).unwrap_or(0);
            let rest = &rest[..window];
            let stop = rest
                .find(|c: char| {
                    matches!(c, ',' | ';' | ':' | '.' | '(' | ')' | '!' | '?' | '\n' | '"' | '%' | '|')
                })
                .unwrap_or(rest.len());
            let mut words: Vec<String> = Vec::new();
            for w in rest[..stop].split_whitespace() {
                let w = w.trim_matches(|c: char| matches!(c, '\'' | '’'));
                let w = w.strip_suffix("'s").or_else(|| w.strip_suffix("’s")).unwrap_or(w);
                let number = !w.is_empty() && w.chars().all(|c| c.is_ascii_digit() || c == '.' || c == ',');
                if words.len() == 6 || number || PHRASE_STOPS.contains(&w) {
                    break;
                }
                words.push(w.to_string());
            }
            if words.iter().any(|w| attribution::population_word(w)) {
                out.push((offset + p, format!("{opener} {}", words.join(" ")), words));
            }
        }
    }
    work(lower.len());
    out.sort();
    out
}

/// Whether `gap`, the text between two numbers, joins them as items of one list, with `after`
/// the text after the second: only joining words and each item's subject phrase between them
/// (`for Versant and`, `, `, `among women, and`), and the second followed by its own subject
/// phrase, a join or the end of a clause — not by a verb (`44% would consider it, and 58%
/// would recommend it` is two clauses).
fn joins_list(gap: &str, after: &str) -> bool {
    if gap.len() > 60 || gap.contains(['\n', '.', ':', '(', ')', '=']) {
        return false;
    }
    let written: Vec<&str> = gap.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    if written.len() > 6 {
        return false;
    }
    let words: Vec<String> = written.iter().map(|w| w.to_lowercase()).collect();
    let joined = gap.contains([',', ';']) || words.iter().any(|w| LIST_JOINS.contains(&w.as_str()));
    // Every word is a join, opens a subject phrase, or stands in one; a name (a capitalised
    // word) opens one too: `Versant at 31% and Corvana at 44%`, `Versant 44%, Corvana 31%`.
    let mut in_subject = false;
    for (w, as_written) in words.iter().zip(&written) {
        if LIST_JOINS.contains(&w.as_str()) {
            in_subject = false;
        } else if LIST_SUBJECTS.contains(&w.as_str()) || as_written.starts_with(char::is_uppercase) {
            in_subject = true;
        } else if !in_subject {
            return false;
        }
    }
    let next = after
        .trim_start_matches(|c: char| c.is_whitespace())
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("")
        .to_lowercase();
    let follows = next.is_empty()
        || LIST_JOINS.contains(&next.as_str())
        || ["for", "among", "in", "at"].contains(&next.as_str());
    joined && follows
}

/// The most numbers one answer has traced (docs/answers.md, "Cost"): finding is linear in the
/// text, tracing costs a little per number and cited value; past this many, the rest of the
/// answer's numbers are counted and reported as not audited ([`NotAudited`]), never dropped
/// silently.
pub const MAX_NUMBERS: usize = 10_000;

/// The most numbers the answers of one input have traced together (docs/answers.md, "Cost"):
/// what an input's audit holds until its report is written grows with them, so past this many
/// the answer reaching it is cut there, and the later answers' numbers are found and counted
/// ([`Unaudited`]), not traced. Ten answers at [`MAX_NUMBERS`]; far more than any real
/// conversation states.
pub const MAX_INPUT_NUMBERS: usize = 100_000;

/// The most comparisons of a stated number with a cited value the answers of one input make
/// together: tracing a number costs one per cited value of its exchange, so an input of
/// thousands of answers in one exchange with thousands of citations (no user turn between
/// them) would otherwise cost their product. Past it, as past [`MAX_INPUT_NUMBERS`].
pub const MAX_INPUT_COMPARISONS: usize = 5_000_000;

/// Why an input's later numbers were not audited, in words.
fn input_bound() -> String {
    format!(
        "the input's answers reached the bound of one input's audit: {MAX_INPUT_NUMBERS} numbers, or \
         {MAX_INPUT_COMPARISONS} comparisons of a number with a cited value"
    )
}

/// The finding rule of an answer whose numbers past [`MAX_NUMBERS`] (or past the input's
/// [`MAX_INPUT_NUMBERS`]) were not audited.
pub const RULE_NOT_AUDITED: &str = "answers/not-audited";

/// An answer with more stated numbers than it was allowed to trace: those past it were not.
#[derive(Debug, Clone, PartialEq)]
pub struct NotAudited {
    /// Index of the turn in the conversation.
    pub turn: usize,
    /// The message id, when there is one.
    pub message_id: Option<String>,
    /// How many numbers the answer states.
    pub found: usize,
    /// How many of them (the first) were audited: [`MAX_NUMBERS`], or fewer where the input
    /// reached its bound ([`MAX_INPUT_NUMBERS`], [`MAX_INPUT_COMPARISONS`]).
    pub audited: usize,
    /// Byte offset in the answer text of the first number not traced.
    pub from: usize,
    /// Cut by the input's bound rather than the answer's.
    pub by_input: bool,
}

impl NotAudited {
    /// The finding that says so (a MUST: numbers nobody checked never pass quietly).
    pub fn finding(&self, file: &str) -> crate::input::Finding {
        let why = if self.by_input { format!(" ({})", input_bound()) } else { String::new() };
        let message = format!(
            "the answer in turn {}{} states {} numbers; only the first {} were audited{why}, the {} from byte {} on were not",
            self.turn + 1,
            self.message_id.as_ref().map(|m| format!(" (message {m})")).unwrap_or_default(),
            self.found,
            self.audited,
            self.found - self.audited,
            self.from
        );
        not_audited(file, message)
    }
}

/// The answers of an input after its audit reached [`MAX_INPUT_NUMBERS`]: their numbers were
/// found and counted, not traced.
#[derive(Debug, Clone, PartialEq)]
pub struct Unaudited {
    /// How many answers (that state numbers).
    pub answers: usize,
    /// How many numbers they state.
    pub numbers: usize,
    /// Index of the first one's turn.
    pub first_turn: usize,
    /// Index of the last one's turn.
    pub last_turn: usize,
}

impl Unaudited {
    /// The finding that says so (a MUST, as for [`NotAudited`]).
    pub fn finding(&self, file: &str) -> crate::input::Finding {
        let message = format!(
            "{} more answer(s), in turns {} to {}, state {} numbers that were not audited: {}",
            self.answers,
            self.first_turn + 1,
            self.last_turn + 1,
            self.numbers,
            input_bound()
        );
        not_audited(file, message)
    }
}

fn not_audited(file: &str, message: String) -> crate::input::Finding {
    crate::input::Finding::new(
        crate::input::Locator::at(file, ""),
        RULE_NOT_AUDITED,
        crate::input::Level::Must,
        message,
    )
}

/// The audit of one conversation: its answers, those cut short, and those not audited at all.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Audit {
    /// The audited answers, in turn order.
    pub answers: Vec<Answer>,
    /// The answers whose later numbers were not audited ([`MAX_NUMBERS`],
    /// [`MAX_INPUT_NUMBERS`]).
    pub not_audited: Vec<NotAudited>,
    /// The answers after the input reached [`MAX_INPUT_NUMBERS`].
    pub unaudited: Option<Unaudited>,
}

impl Audit {
    /// The findings for every number not audited.
    pub fn findings(&self, file: &str) -> Vec<crate::input::Finding> {
        let mut out: Vec<_> = self.not_audited.iter().map(|n| n.finding(file)).collect();
        out.extend(self.unaudited.iter().map(|u| u.finding(file)));
        out
    }
}

/// Audits every agent turn of a conversation that the user was shown as the answer (a turn the
/// run took back, [`Turn::shown`], is listed with no number audited): `sources[i]` are the
/// cited numbers of claim `i`.
/// A turn's exchange runs from the user message before it to the next user message (the A2A
/// task, the AG-UI run); a conversation with no user turn is one exchange.
pub fn audit(turns: &[Turn], sources: &[Vec<Source>]) -> Audit {
    audit_cited(turns, sources, &HashMap::new())
}

/// [`audit`], where `cited` holds, by message id, the numbers of the records `moca.citations`
/// events cite for that assistant message ([`record_sources`]): that message's numbers are also
/// traced to them, and a number inside one of their markers (`[12]`) is not a stated number.
pub fn audit_cited(turns: &[Turn], sources: &[Vec<Source>], cited: &HashMap<String, Vec<Source>>) -> Audit {
    audit_within(turns, sources, cited, MAX_INPUT_NUMBERS, MAX_INPUT_COMPARISONS)
}

/// [`audit_cited`], tracing at most `budget` numbers and making at most `comparisons`
/// comparisons of a number with a cited value in all; past either, no later answer is traced.
fn audit_within(
    turns: &[Turn],
    sources: &[Vec<Source>],
    cited: &HashMap<String, Vec<Source>>,
    mut budget: usize,
    mut comparisons: usize,
) -> Audit {
    let mut out = Audit::default();
    let is_user = |t: &Turn| t.role.eq_ignore_ascii_case("user");
    // Each turn's exchange, found once: [the turn after the last user turn before it, the next
    // user turn).
    let mut from = vec![0; turns.len()];
    let mut to = vec![turns.len(); turns.len()];
    for i in 1..turns.len() {
        from[i] = if is_user(&turns[i - 1]) { i } else { from[i - 1] };
    }
    for i in (0..turns.len().saturating_sub(1)).rev() {
        to[i] = if is_user(&turns[i + 1]) { i + 1 } else { to[i + 1] };
    }
    // The cited numbers of the exchange last used: answers of one exchange share them.
    let mut exchange: Option<((usize, usize), Vec<Source>)> = None;
    for (ti, turn) in turns.iter().enumerate() {
        let role = turn.role.to_lowercase();
        if !matches!(role.as_str(), "agent" | "assistant" | "model") || turn.text.trim().is_empty() {
            continue;
        }
        // What the user finally saw is the answer; text the run took back is listed, not audited.
        if !turn.shown.is_answer() {
            out.answers.push(set_aside(ti, turn));
            continue;
        }
        let records = turn.message_id.as_ref().and_then(|id| cited.get(id));
        let mut stated = find(&turn.text);
        if let Some(records) = records {
            let mut markers: Vec<(usize, usize)> = records
                .iter()
                .filter_map(|s| s.record.as_ref())
                .flat_map(|r| r.refs.iter().filter(|m| !m.is_empty()))
                .flat_map(|m| turn.text.match_indices(m.as_str()).map(|(p, m)| (p, p + m.len())))
                .collect();
            markers.sort_unstable();
            // The furthest end among the markers starting at or before each one.
            let reach: Vec<usize> = markers
                .iter()
                .scan(0, |r, &(_, b)| {
                    *r = b.max(*r);
                    Some(*r)
                })
                .collect();
            stated.retain(|n| {
                let k = markers.partition_point(|&(a, _)| a <= n.start);
                k == 0 || reach[k - 1] < n.end
            });
        }
        if stated.is_empty() {
            continue;
        }
        let span = (from[ti], to[ti]);
        if exchange.as_ref().is_none_or(|(k, _)| *k != span) {
            let scope: Vec<Source> = turns[span.0..span.1]
                .iter()
                .flat_map(|t| t.items.iter())
                .filter_map(|&i| sources.get(i))
                .flatten()
                .cloned()
                .collect();
            exchange = Some((span, scope));
        }
        let scope = exchange.as_ref().map_or(&[][..], |(_, s)| s.as_slice());
        // Each number is compared with every cited value of its exchange (and the records).
        let width = (scope.len() + records.map_or(0, Vec::len)).max(1);
        let by_input = budget.min(comparisons / width);
        let keep = stated.len().min(MAX_NUMBERS).min(by_input);
        if keep == 0 {
            budget = 0;
            let u = out.unaudited.get_or_insert(Unaudited {
                answers: 0,
                numbers: 0,
                first_turn: ti,
                last_turn: ti,
            });
            u.answers += 1;
            u.numbers += stated.len();
            u.last_turn = ti;
            continue;
        }
        budget -= keep;
        comparisons -= keep * width;
        if stated.len() > keep {
            let by_input = keep < stated.len().min(MAX_NUMBERS);
            if by_input {
                // No later answer is traced: what is not audited stays one stretch of turns.
                budget = 0;
            }
            out.not_audited.push(NotAudited {
                turn: ti,
                message_id: turn.message_id.clone(),
                found: stated.len(),
                audited: keep,
                from: stated[keep].start,
                by_input,
            });
            stated.truncate(keep);
        }
        let answer = match records {
            Some(r) => audit_text(ti, turn, &stated, &[scope, r.as_slice()].concat()),
            None => audit_text(ti, turn, &stated, scope),
        };
        out.answers.push(answer);
    }
    out
}

/// Audits one text against the sources of its exchange. The second end of a range takes the
/// status of the first: a range is one statement (docs/answers.md).
pub fn audit_text(ti: usize, turn: &Turn, stated: &[Stated], scope: &[Source]) -> Answer {
    let spans = find::sentences(&turn.text);
    let lines = find::line_subjects(&turn.text);
    // The numbers of each sentence, indexed once per sentence.
    let mut by_sentence: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (k, s) in stated.iter().enumerate() {
        by_sentence.entry(s.sentence).or_default().push(k);
    }
    let mut traced: Vec<Option<StatedNumber>> = vec![None; stated.len()];
    for (&si, ks) in &by_sentence {
        let span = spans.get(si).copied().unwrap_or((0, turn.text.len()));
        let mine: Vec<&Stated> = ks.iter().map(|&k| &stated[k]).collect();
        let subjects = mine.iter().map(|n| find::subject_of(&turn.text, &lines, n.start)).collect();
        let ctx = Context::new(&turn.text, span, &mine, subjects);
        // A range's first end, waiting for its second.
        let mut first_end: Option<usize> = None;
        for &k in ks {
            let s = &stated[k];
            let copy = first_end.take().filter(|&f| s.range.is_some() && stated[f].range == s.range);
            let n = match copy.and_then(|f| traced[f].as_ref()) {
                Some(f) => StatedNumber { text: s.text.clone(), start: s.start, end: s.end, ..f.clone() },
                None => {
                    if s.range.is_some() {
                        first_end = Some(k);
                    }
                    trace(s, &ctx, scope)
                }
            };
            traced[k] = Some(n);
        }
    }
    let mut numbers: Vec<StatedNumber> = traced.into_iter().flatten().collect();
    let zero = || Status::ALL.iter().map(|s| (*s, 0)).collect::<BTreeMap<_, _>>();
    let mut counts = zero();
    for n in &numbers {
        *counts.entry(n.status).or_default() += 1;
    }
    // Sentence indices in numbers point into `sentences` (only those with numbers).
    let mut mine: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (k, n) in numbers.iter().enumerate() {
        mine.entry(n.sentence).or_default().push(k);
    }
    let mut sentences = Vec::with_capacity(mine.len());
    for (si, ks) in &mine {
        let (a, b) = spans.get(*si).copied().unwrap_or((0, 0));
        let mut c = BTreeMap::new();
        for &k in ks {
            *c.entry(numbers[k].status).or_default() += 1;
        }
        let worst = ks.iter().map(|&k| numbers[k].status).max_by_key(|s| doubt(*s));
        for &k in ks {
            numbers[k].sentence = sentences.len();
        }
        sentences.push(Sentence { start: a, end: b, counts: c, worst });
    }
    Answer {
        turn: ti,
        role: turn.role.clone(),
        message_id: turn.message_id.clone(),
        text: turn.text.clone(),
        counts,
        numbers,
        sentences,
        shown: Shown::Answer,
    }
}

/// A turn whose text the user was not shown as the answer (retracted, interrupted, errored):
/// listed as such, its numbers not audited.
fn set_aside(ti: usize, turn: &Turn) -> Answer {
    Answer {
        turn: ti,
        role: turn.role.clone(),
        message_id: turn.message_id.clone(),
        text: turn.text.clone(),
        counts: Status::ALL.iter().map(|s| (*s, 0)).collect(),
        numbers: Vec::new(),
        sentences: Vec::new(),
        shown: turn.shown,
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

#[cfg(test)]
mod corpus;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::moca::{MocaCitation, MocaEvent};

    /// An event citing one record whose text (as sent) is `sent`.
    fn event(
        returned: Option<bool>,
        reader: Option<&str>,
        sent: Option<&str>,
        trust: serde_json::Value,
    ) -> MocaEvent {
        let mut record = serde_json::json!({"package": {}, "node": {"ref": "kb@1#a.md"}, "trust": trust});
        if let Some(t) = sent {
            record["text"] = t.into();
        }
        MocaEvent {
            message_id: Some("m".into()),
            citations: vec![MocaCitation {
                marker: Some("[1]".into()),
                key: crate::moca::key(&record),
                record,
                passed: returned == Some(true),
                returned,
                reader_text: reader.map(str::to_string),
            }],
            ..MocaEvent::default()
        }
    }

    fn statuses(text: &str, ev: &MocaEvent) -> Vec<(String, Status)> {
        let turn = Turn {
            role: "assistant".into(),
            text: text.into(),
            message_id: Some("m".into()),
            ..Turn::default()
        };
        let cited = HashMap::from([("m".to_string(), record_sources(ev))]);
        audit_cited(&[turn], &[], &cited)
            .answers
            .into_iter()
            .flat_map(|a| a.numbers)
            .map(|n| (n.text, n.status))
            .collect()
    }

    #[test]
    fn moca_cited_number_only_traced_when_the_reader_returned_the_record_unchanged() {
        let ok = serde_json::json!({"stale": false, "superseded": false, "inForce": true});
        let text = "Refunds within 30 days [1].";
        let returned = event(Some(true), Some("A refund within 30 days."), None, ok.clone());
        assert_eq!(statuses(text, &returned), [("30".to_string(), Status::Traced)]);
        // A node the Reader never returned in the run: its number was not checked.
        let invented = event(None, None, Some("A refund within 30 days."), ok.clone());
        assert_eq!(statuses(text, &invented), [("30".to_string(), Status::TracedUnverified)]);
        // The event changed the record's text: the Reader's record does not say 30.
        let changed =
            event(Some(false), Some("A refund within 14 days."), Some("A refund within 30 days."), ok);
        assert_eq!(statuses(text, &changed), [("30".to_string(), Status::TracedToDiscrepant)]);
        // A superseded node's number is in doubt.
        let superseded = serde_json::json!({"superseded": {"by": "kb@2#a.md"}});
        let old = event(Some(true), Some("A refund within 30 days."), None, superseded);
        assert_eq!(statuses(text, &old), [("30".to_string(), Status::TracedUnverified)]);
    }

    #[test]
    fn moca_cited_relative_change_repeating_the_record_is_traced() {
        // The record states `rose 12%`: the answer repeats it (no two cited values to divide).
        let ok = serde_json::json!({"stale": false, "superseded": false, "inForce": true});
        let ev = event(Some(true), Some("Refund requests rose 12% in May."), None, ok);
        assert_eq!(
            statuses("Refund requests rose 12% in May [1].", &ev),
            [("12%".to_string(), Status::Traced)]
        );
    }

    #[test]
    fn moca_cited_marker_is_not_a_stated_number() {
        let ev = event(Some(true), Some("Within 30 days."), None, serde_json::json!({}));
        let mut ev12 = ev.clone();
        ev12.citations[0].marker = Some("[12]".into());
        assert_eq!(statuses("Refunds within 30 days [12].", &ev12), [("30".to_string(), Status::Traced)]);
    }

    /// The statuses of `text`'s numbers against the corpus's cited results.
    fn traced(text: &str) -> Vec<(String, Status)> {
        let turn = Turn { role: "assistant".into(), text: text.into(), ..Turn::default() };
        audit_text(0, &turn, &find(text), &corpus::corpus_sources())
            .numbers
            .into_iter()
            .map(|n| (n.text, n.status))
            .collect()
    }

    /// The first number of `text`, traced against the corpus's cited results.
    fn trace_one(text: &str) -> StatedNumber {
        let turn = Turn { role: "assistant".into(), text: text.into(), ..Turn::default() };
        audit_text(0, &turn, &find(text), &corpus::corpus_sources()).numbers.remove(0)
    }

    #[test]
    fn answers_relative_change_is_traced_to_the_ratio_of_two_cited_values() {
        // Purchase W5 30.6% -> W6 26.8% claimed (12.4% down), 30.3% -> 26.83% recomputed (11.5%
        // down). Before, `fell 12.4%` was read as a level and came out UNCITED.
        assert_eq!(trace_one("Purchase fell 12.4% since W5.").status, Status::TracedToDiscrepant);
        assert_eq!(trace_one("Purchase fell by 11.5% on recomputed figures.").status, Status::RecomputedOnly);
        // Wrong: neither ratio.
        let n = trace_one("Purchase fell 20% since W5.");
        assert_eq!(
            (n.status, n.claimed.as_deref(), n.recomputed.as_deref()),
            (Status::Misquoted, Some("12%"), Some("11%"))
        );
        // Up: Familiar W6 Versant 69.4% against Corvana 55.2% (recomputed only): 25.7% higher.
        assert_eq!(
            trace_one("Versant's familiarity is 25.7% higher than Corvana's.").status,
            Status::RecomputedOnly
        );
        // A fraction word: no cited pair changed by a tenth (9-11%), and it is no level.
        assert_eq!(trace_one("Recommendation fell by a tenth.").status, Status::Uncited);
        // Purchase fell by an eighth (12.4%), not by a fifth: a misquote.
        assert_eq!(trace_one("Purchase fell by a fifth since W5.").status, Status::Misquoted);
        // `fell 3.8%` matches the change in points (3.8), not the ratio: unsure, never TRACED.
        let n = trace_one("Purchase fell 3.8% since W5.");
        assert!(n.ambiguous && n.status == Status::TracedToDiscrepant, "{n:?}");
        // `dropped 27%` may mean `dropped to 27%` (W6 purchase is 26.8%): unsure.
        let n = trace_one("Purchase dropped 27% this wave.");
        assert!(n.ambiguous && n.status == Status::TracedUnverified, "{n:?}");
        // `is 12%` and `rose to 12%` are levels; `up 3.8 points` a change in points.
        assert_eq!(trace_one("Purchase is 26.8%.").kind, Kind::Percent);
        assert_eq!(trace_one("Purchase fell to 26.8%.").status, Status::Traced);
        assert_eq!(trace_one("Purchase fell 3.8 points since W5.").status, Status::TracedToDiscrepant);
    }

    fn pairs(v: &[(&str, Status)]) -> Vec<(String, Status)> {
        v.iter().map(|(t, s)| (t.to_string(), *s)).collect()
    }

    #[test]
    fn answers_each_item_of_a_list_is_about_the_measure_heading_it() {
        // Before: the 28.7% owned no mention of Purchase and came out UNCITED.
        let got = traced("Purchase is 26.8% for Versant and 28.7% for Northwind.");
        assert_eq!(got, pairs(&[("26.8%", Status::Traced), ("28.7%", Status::Misquoted)]));
        let got = traced("Purchase is 28.7% among women, 26.8% among men and 29.9% in total.");
        assert_eq!(
            got,
            pairs(&[("28.7%", Status::Misquoted), ("26.8%", Status::Traced), ("29.9%", Status::Misquoted)])
        );
        // A second clause is not an item of the list.
        let got = traced("Familiarity is 69.4%, and 58% would recommend it.");
        assert_eq!(got, pairs(&[("69.4%", Status::Traced), ("58%", Status::Uncited)]));
    }

    #[test]
    fn answers_both_ends_of_a_range_get_one_status() {
        // Before: 60 was MISQUOTED (the nearest to "Consideration"), 62% UNCITED.
        assert_eq!(
            traced("Consideration sits at 60–62%."),
            pairs(&[("60", Status::Misquoted), ("62%", Status::Misquoted)])
        );
        assert_eq!(
            traced("Familiarity is 68-70%."),
            pairs(&[("68", Status::Traced), ("70%", Status::Traced)])
        );
    }

    #[test]
    fn answers_thin_space_groups_digits_of_one_count() {
        let got = find("Among 4\u{2009}654 respondents, 44.2% would consider it.");
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!((got[0].value, got[0].kind), (4654.0, Kind::Count));
        assert_eq!(traced("Among 4\u{2009}654 respondents, 44.2% would consider it.")[0].1, Status::Traced);
    }

    #[test]
    fn answers_change_between_two_signed_values_is_reported() {
        // Before: `−20.1 to −25.1` was taken for a bare range (an age band) and left out.
        let got = traced("NPS fell from −20.1 to −25.1.");
        assert_eq!(got, pairs(&[("−20.1", Status::Misquoted), ("−25.1", Status::TracedUnverified)]));
    }

    #[test]
    fn answers_wrong_change_in_points_is_misquoted() {
        // W6 44.2% against W5 47.0%: 2.8 points claimed, 2.5 recomputed; 1.9 is neither.
        assert_eq!(traced("Consideration fell 2.8 points since W5.")[0].1, Status::TracedToDiscrepant);
        assert_eq!(
            traced("Consideration fell 1.9 points since W5."),
            pairs(&[("1.9 points", Status::Misquoted)])
        );
        // A gap between two cited results, however it is phrased: W6 Versant 44.2%, Corvana 31%.
        // The all-adults claim also states 44.2% (and is discrepant): two pairs fit, so the
        // gap is ambiguous and takes the more doubtful status (it was TRACED, a silent guess).
        for text in [
            "Versant's consideration is 13.2 points higher than Corvana's.",
            "Consideration shows a gap of 13.2 points between Versant and Corvana.",
        ] {
            let n = &trace_one(text);
            assert_eq!(
                (n.status, n.ambiguous, n.candidates.len()),
                (Status::TracedToDiscrepant, true, 2),
                "{text}"
            );
        }
        // The base n stated picks the pair.
        assert_eq!(
            trace_one("Among aware adults (n = 4,654), consideration is 13.2 points above Corvana's.").status,
            Status::Traced
        );
        // A change naming no cited measure stays UNCITED.
        assert_eq!(traced("Recommendation rose 1.9 points.")[0].1, Status::Uncited);
    }

    /// One long sentence of about `size` bytes (no full stop): percentages, a list, a count.
    fn long_sentence(size: usize) -> String {
        let unit = "consideration is 44% and 47% for Northwind, familiarity 69.4% (n = 4,654 respondents), ";
        unit.repeat(size / unit.len() + 1)[..size].to_string()
    }

    /// The work counted for auditing `text` against the corpus's cited results.
    fn work_for(text: &str) -> (usize, Audit) {
        let turn = Turn { role: "assistant".into(), text: text.into(), items: vec![0], ..Turn::default() };
        let sources = vec![corpus::corpus_sources()];
        WORK.with(|w| w.set(0));
        let audit = audit(&[turn], &sources);
        (WORK.with(|w| w.get()), audit)
    }

    #[test]
    fn answers_audit_work_is_linear_in_one_long_sentence() {
        // Counted, not timed. Before, each number lower-cased and scanned its whole sentence per
        // cited value: 57 KB of one sentence took 116 s.
        let (small, _) = work_for(&long_sentence(20_000));
        let (large, audit) = work_for(&long_sentence(200_000));
        assert!(audit.not_audited.is_empty());
        assert!(
            large <= 12 * small,
            "10x the text cost {}x the work ({small} -> {large})",
            large / small.max(1)
        );
        assert!(large <= 40 * 200_000, "{large} units of work for 200 KB");
        // 1 MB states more numbers than one answer audits: the rest is reported, not dropped.
        let (mb, audit) = work_for(&long_sentence(1_000_000));
        assert!(mb <= 40 * 1_000_000, "{mb} units of work for 1 MB");
        assert_eq!(audit.answers[0].numbers.len(), MAX_NUMBERS);
        let cut = &audit.not_audited[0];
        assert!(cut.found > MAX_NUMBERS && cut.from > 0, "{cut:?}");
        let f = cut.finding("answer.json");
        assert_eq!((f.rule.as_str(), f.level), (RULE_NOT_AUDITED, crate::input::Level::Must));
        assert!(f.message.contains(&format!("only the first {MAX_NUMBERS} were audited")), "{}", f.message);
    }

    #[test]
    fn answers_of_one_input_past_its_cap_are_counted_and_reported_not_audited() {
        // Once, every answer of an input was traced and held until its report was written:
        // 2,000 answers of 5 KB took 1.67 GB. Now an input traces at most MAX_INPUT_NUMBERS
        // (here 10): the answer reaching it is cut there, the later ones only counted.
        let answer = "Consideration is 44%, familiarity 69.4%, purchase 26.8% and recommendation 31%.";
        let mut turns = Vec::new();
        for i in 0..6 {
            turns.push(Turn { role: "user".into(), text: "And?".into(), ..Turn::default() });
            let id = Some(format!("m{i}"));
            turns.push(Turn {
                role: "assistant".into(),
                text: answer.into(),
                message_id: id,
                ..Turn::default()
            });
        }
        let audit = audit_within(&turns, &[], &HashMap::new(), 10, usize::MAX);
        let audited: Vec<usize> = audit.answers.iter().map(|a| a.numbers.len()).collect();
        assert_eq!(audited, [4, 4, 2], "{audit:?}");
        assert_eq!(audit.not_audited.len(), 1);
        let cut = &audit.not_audited[0];
        assert_eq!((cut.turn, cut.found, cut.audited), (5, 4, 2), "{cut:?}");
        assert_eq!(cut.from, answer.find("26.8%").unwrap());
        let rest = audit.unaudited.as_ref().expect("the later answers are reported");
        assert_eq!((rest.answers, rest.numbers, rest.first_turn, rest.last_turn), (3, 12, 7, 11));
        // Every number is either audited or in a MUST finding: 4 a sentence, 6 answers.
        let findings = audit.findings("t.json");
        assert_eq!(findings.len(), 2);
        for f in &findings {
            assert_eq!((f.rule.as_str(), f.level), (RULE_NOT_AUDITED, crate::input::Level::Must));
        }
        assert!(findings[0].message.contains("only the first 2 were audited"), "{}", findings[0].message);
        assert!(findings[0].message.contains("the 2 from byte"), "{}", findings[0].message);
        assert!(
            findings[1].message.contains("3 more answer(s), in turns 8 to 12, state 12 numbers"),
            "{}",
            findings[1].message
        );
        assert_eq!(audited.iter().sum::<usize>() + (cut.found - cut.audited) + rest.numbers, 6 * 4);
        // Within the cap, nothing is reported.
        let all = audit_within(&turns, &[], &HashMap::new(), 24, usize::MAX);
        assert!(all.not_audited.is_empty() && all.unaudited.is_none() && all.answers.len() == 6);
        // Comparisons bound it too: with three cited values in scope, 30 comparisons trace 10.
        let leaves = crate::claim::leaves(&serde_json::json!({"Considered": 0.442, "Familiar": 0.694}));
        let sources = vec![sources(0, &Settlement::unverifiable(vec![]), &leaves, Some(4654))];
        let width = sources[0].len();
        let mut cited_turns = turns.clone();
        cited_turns.iter_mut().for_each(|t| t.items = vec![0]);
        let by_work = audit_within(&cited_turns, &sources, &HashMap::new(), usize::MAX, 10 * width);
        let audited: Vec<usize> = by_work.answers.iter().map(|a| a.numbers.len()).collect();
        assert_eq!(audited, [4, 4, 2], "{width} cited values: {by_work:?}");
        assert!(by_work.not_audited[0].by_input);
        assert_eq!(by_work.unaudited.as_ref().map(|u| u.numbers), Some(12));
    }

    #[test]
    fn answers_number_fitting_thousands_of_citations_lists_twenty_and_counts_the_rest() {
        // Once, every fitting candidate was listed: 2,000 identical citations in one exchange
        // gave each number 4,000 of them.
        use crate::extractor::Unit::Proportion as P;
        let one = |i: usize| {
            let s =
                corpus::settled(Verdict::Reproduced, Some(4654), &[("Considered", P, Some("0.442"), 0.4421)]);
            sources(i, &s, &[], None)
        };
        let scope: Vec<Source> = (0..50).flat_map(one).collect();
        let turn =
            Turn { role: "assistant".into(), text: "Consideration is 44.2%.".into(), ..Turn::default() };
        let n = audit_text(0, &turn, &find(&turn.text), &scope).numbers.remove(0);
        assert!(n.ambiguous, "{n:?}");
        assert_eq!(n.candidates.len(), MAX_CANDIDATES + 1);
        assert_eq!(n.candidates[MAX_CANDIDATES], "… and 30 more");
        assert!(n.why.contains("(ambiguous: 50 cited measures fit)"), "{}", n.why);
        assert_eq!(n.status, Status::TracedUnverified);
    }

    #[test]
    fn answers_table_cell_is_about_its_column_and_row_headers() {
        let text = "| Brand | Familiar | Purchased |\n|---|---:|---:|\n| Versant | 69.4% | 47% |\n";
        // Before: no cell named a measure, so the 47% (Considered in W5) passed as traced.
        assert_eq!(traced(text), pairs(&[("69.4%", Status::Traced), ("47%", Status::Misquoted)]));
    }

    #[test]
    fn answers_bullet_is_about_the_lead_in_line() {
        let text = "Purchase by brand:\n\n- Versant: 26.8%\n- Northwind: 28.7%\n";
        assert_eq!(traced(text), pairs(&[("26.8%", Status::Traced), ("28.7%", Status::Misquoted)]));
    }

    #[test]
    fn answers_ambiguous_attribution_lists_candidates_and_is_never_traced() {
        use crate::extractor::Unit::Proportion as P;
        let a = corpus::settled(Verdict::Reproduced, Some(4654), &[("Considered", P, Some("0.442"), 0.4421)]);
        let b = corpus::settled(Verdict::Reproduced, Some(6250), &[("Considered", P, Some("0.442"), 0.4419)]);
        let scope: Vec<Source> = [sources(0, &a, &[], None), sources(1, &b, &[], None)].concat();
        let audit = |text: &str| {
            let turn = Turn { role: "assistant".into(), text: text.into(), ..Turn::default() };
            audit_text(0, &turn, &find(text), &scope).numbers.remove(0)
        };
        let n = audit("Consideration is 44.2%.");
        assert_eq!((n.status, n.ambiguous, n.candidates.len()), (Status::TracedUnverified, true, 2), "{n:?}");
        // The base n the sentence states tells them apart.
        let n = audit("Consideration is 44.2% (n = 4,654).");
        assert_eq!((n.status, n.ambiguous), (Status::Traced, false), "{n:?}");
    }

    #[test]
    fn answers_change_between_two_results_not_re_run_is_traced_unverified() {
        let leaves = |v: f64| crate::claim::leaves(&serde_json::json!({ "Considered": v }));
        let none = Settlement::unverifiable(vec!["unknown column".into()]);
        let scope =
            [sources(0, &none, &leaves(0.47), None), sources(1, &none, &leaves(0.442), None)].concat();
        let turn = |t: &str| Turn { role: "assistant".into(), text: t.into(), ..Turn::default() };
        let text = "Consideration fell 2.8 points since W5.";
        let n = audit_text(0, &turn(text), &find(text), &scope).numbers.remove(0);
        // Before: UNCITED, though both ends are cited (only not re-run).
        assert_eq!(n.status, Status::TracedUnverified, "{n:?}");
    }

    #[test]
    fn answers_sentence_naming_the_cited_brand_anywhere_is_not_misattributed() {
        let scope = two_brands();
        let statuses = |text: &str| -> Vec<Status> {
            let turn = Turn { role: "assistant".into(), text: text.into(), ..Turn::default() };
            audit_text(0, &turn, &find(text), &scope).numbers.into_iter().map(|n| n.status).collect()
        };
        // Versant stands nearest the 31%, but Corvana is named too: which number goes with which
        // brand is not read, so nothing is contradicted (this was a false MISATTRIBUTED), and
        // the attribution is unsure (it was TRACED, though `(31% vs 44%)` read the same).
        let text = "Versant turns a larger share of aware adults into considerers than Corvana (44% vs 31%).";
        assert_eq!(statuses(text), [Status::AttributionUnsure, Status::AttributionUnsure]);
        // Corvana's 31% given to Versant, Corvana named nowhere.
        assert_eq!(statuses("Versant's consideration is 31%."), [Status::Misattributed]);
    }

    #[test]
    fn answers_change_of_a_measure_no_pair_has_is_not_traced_to_another_measures_pair() {
        // The NPS is cited once: a gap in it cannot be traced, and some pair of shares 5 points
        // apart is no trace of it (it was TRACED).
        let scope = corpus::data_sources();
        let got = with_scope("The NPS gap between Versant and Corvana is 5 points.", &scope);
        assert_eq!(got[0].status, Status::Uncited, "{:?}", got[0]);
    }

    #[test]
    fn answers_refuted_value_outranks_an_unsure_attribution() {
        // As two_brands(), but the data gives Corvana 27.9%, not the claimed 31%.
        use crate::extractor::Unit::Proportion as P;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let catalog = crate::catalog::Catalog::load(&root.join("datasets")).unwrap();
        let cite = |column: &str| {
            serde_json::json!({
                "study": "Versant Mega Tracker", "period": "W6 (April 2026)",
                "base": {"name": "Adults 18-74, aware of brand", "n": 4654}, "weight": "main_weight",
                "source": {"table": "versant_flat", "column": column, "function": "extractFunnel"}
            })
        };
        let claim = |i: usize, column: &str, verdict: Verdict, v: &str, rec: f64| {
            let s = corpus::settled(verdict, Some(4654), &[("Considered", P, Some(v), rec)]);
            with_covers(sources(i, &s, &[], None), attribution::covers(&catalog, &cite(column)).map(Arc::new))
        };
        let scope = [
            claim(0, "s14r5", Verdict::Reproduced, "0.44", 0.4421),
            claim(1, "s14r4", Verdict::Discrepant, "0.31", 0.279),
        ]
        .concat();
        let text = "Versant turns a larger share of aware adults into considerers than Corvana (44% vs 31%).";
        let got = with_scope(text, &scope);
        let statuses: Vec<Status> = got.iter().map(|n| n.status).collect();
        // The 44% stays unsure; the 31% is refuted, and says the attribution doubt too.
        assert_eq!(statuses, [Status::AttributionUnsure, Status::TracedToDiscrepant]);
        assert!(got[1].attribution.is_some() && got[1].why.contains("does not support"), "{:?}", got[1]);
    }

    /// What the bundled catalog says W6 Versant's and Corvana's consideration citations cover,
    /// as sources: 44% (claim #1) and 31% (claim #2), both among aware adults.
    fn two_brands() -> Vec<Source> {
        use crate::extractor::Unit::Proportion as P;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let catalog = crate::catalog::Catalog::load(&root.join("datasets")).unwrap();
        let cite = |column: &str| {
            serde_json::json!({
                "study": "Versant Mega Tracker", "period": "W6 (April 2026)",
                "base": {"name": "Adults 18-74, aware of brand", "n": 4654}, "weight": "main_weight",
                "source": {"table": "versant_flat", "column": column, "function": "extractFunnel"}
            })
        };
        let claim = |i: usize, column: &str, v: &str, rec: f64| {
            let s = corpus::settled(Verdict::Reproduced, Some(4654), &[("Considered", P, Some(v), rec)]);
            with_covers(sources(i, &s, &[], None), attribution::covers(&catalog, &cite(column)).map(Arc::new))
        };
        [claim(0, "s14r5", "0.44", 0.4421), claim(1, "s14r4", "0.31", 0.3104)].concat()
    }

    fn with_scope(text: &str, scope: &[Source]) -> Vec<StatedNumber> {
        let turn = Turn { role: "assistant".into(), text: text.into(), ..Turn::default() };
        audit_text(0, &turn, &find(text), scope).numbers
    }

    #[test]
    fn answers_swap_inside_one_list_is_misattributed_naming_both() {
        let scope = two_brands();
        let st = |text: &str| {
            with_scope(text, &scope)
                .into_iter()
                .filter(|n| n.kind != Kind::Count)
                .map(|n| n.status)
                .collect::<Vec<_>>()
        };
        // Before: both TRACED, each brand being named somewhere in the sentence.
        let swapped = with_scope("Consideration is 31% for Versant and 44% for Corvana.", &scope);
        assert_eq!(swapped.iter().map(|n| n.status).collect::<Vec<_>>(), [Status::Misattributed; 2]);
        let why = swapped[0].attribution.as_deref().unwrap();
        assert!(
            why.contains("Brand funnel: Versant")
                && why.contains("Brand funnel: Corvana")
                && why.contains("44%"),
            "{why}"
        );
        assert_eq!(st("Consideration is 44% for Versant and 31% for Corvana."), [Status::Traced; 2]);
        // Each brand before its number, with its base stated.
        assert_eq!(st("Versant is at 31% (n = 4,654) and Corvana at 44%."), [Status::Misattributed; 2]);
        assert_eq!(st("Versant is at 44% and Corvana at 31%."), [Status::Traced; 2]);
        // `respectively` pairs in order.
        assert_eq!(st("Versant and Corvana are at 31% and 44% respectively."), [Status::Misattributed; 2]);
        assert_eq!(st("Versant and Corvana are at 44% and 31% respectively."), [Status::Traced; 2]);
        assert_eq!(st("Versant and Corvana are at 31% and 44%, in that order."), [Status::Misattributed; 2]);
        assert_eq!(st("Versant and Corvana: 44% and 31%, in that order."), [Status::Traced; 2]);
        // Both brands before both numbers: unsure, never TRACED, never MISATTRIBUTED.
        assert_eq!(st("Versant leads Corvana, 44% vs 31%."), [Status::AttributionUnsure; 2]);
    }

    /// The statuses of `text`'s numbers against the corpus's data part (results computed from
    /// the bundled data, their coverage from the bundled catalog).
    fn on_data(text: &str) -> Vec<Status> {
        with_scope(text, &corpus::data_sources()).into_iter().map(|n| n.status).collect()
    }

    #[test]
    fn answers_change_between_two_levels_the_sentence_states_is_derived_from_them() {
        // Women's 31.5% and the aware adults' 44.2% (two claims of consideration): the gap is
        // the difference of what the reader was shown. Before: UNCITED, the aware base having
        // no word of its own for the sentence to name.
        let s = "Among women, 31.5% would consider Versant, against 44.2% among aware adults overall, a gap of 12.7 points.";
        assert_eq!(on_data(s), [Status::Traced; 3]);
        let wrong = on_data(&s.replace("12.7", "10.7"));
        assert_eq!(wrong[..2], [Status::Traced; 2]);
        assert!(matches!(wrong[2], Status::Misquoted | Status::Uncited), "{wrong:?}");
    }

    #[test]
    fn answers_measure_of_something_the_citation_does_not_cover_is_not_misquoted() {
        let scope = two_brands();
        let one = |text: &str| with_scope(text, &scope).remove(0).status;
        // The campaign's consideration is not the brand's: no misquote of the cited one.
        assert_eq!(one("Consideration of the new campaign is 33%."), Status::Uncited);
        for text in [
            "Consideration of the brand is 33%.",
            "Consideration of Versant is 33%.",
            "Consideration of the Versant range is 33%.",
            "Consideration is 33%.",
        ] {
            assert_eq!(one(text), Status::Misquoted, "{text}");
        }
    }

    #[test]
    fn answers_only_brand_a_sentence_names_is_said_of_all_its_numbers() {
        // W6 purchase: Versant 26.8%, Northwind 26.7%, both `27%`. Before: the 27% stood nearer
        // no brand, so Northwind's citation fit too: ambiguous, TRACED_UNVERIFIED.
        assert_eq!(on_data("Versant's purchase went from 30% in W5 to 27% in W6."), [Status::Traced; 2]);
    }

    #[test]
    fn answers_change_is_traced_only_to_pairs_fitting_the_waves_and_brands_it_names() {
        // Versant fell 5.4% from W5 to W6; Versant W7 (46.2%) against Corvana W6 (30.7%) is the
        // only pair a third apart. Before: TRACED_TO_DISCREPANT, traced to that pair.
        assert_eq!(on_data("Versant's consideration fell by a third from W5 to W6."), [Status::Misquoted]);
        assert_eq!(on_data("Versant's consideration fell 5.4% from W5 to W6."), [Status::Traced]);
    }

    #[test]
    fn answers_number_left_only_to_a_measure_the_sentence_does_not_name_is_misattributed() {
        // 31.5% is the W7 purchase (contradicted by `In W6`) and, by chance, the W6
        // consideration among women. Before: traced to the women's consideration.
        assert_eq!(on_data("In W6, 31.5% of aware adults have purchased Versant."), [Status::Misattributed]);
    }

    #[test]
    fn answers_named_list_items_share_the_measure_heading_the_list() {
        // Before: `Corvana 35.0%` owned no mention of consideration and was UNCITED.
        let got = on_data("Consideration in W6: Versant 44.2%, Corvana 35.0%, Northwind 40.3%.");
        assert_eq!(got, [Status::Traced, Status::Misquoted, Status::Traced]);
    }

    #[test]
    fn answers_share_fixed_by_the_base_is_never_misquoted() {
        // Aware among the aware is 100% by construction. Before: MISQUOTED (the corpus's miss).
        assert_eq!(traced("Awareness of the new campaign is 33%."), pairs(&[("33%", Status::Uncited)]));
    }

    #[test]
    fn answers_aware_adults_describe_a_base_not_the_aware_measure() {
        use crate::extractor::Unit::Proportion as P;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let catalog = crate::catalog::Catalog::load(&root.join("datasets")).unwrap();
        let cite = |base: &str| {
            serde_json::json!({
                "study": "Versant Mega Tracker", "period": "W6 (April 2026)",
                "base": {"name": base, "n": 4654}, "weight": "main_weight",
                "source": {"table": "versant_flat", "column": "s14r5", "function": "extractFunnel"}
            })
        };
        let claim = |i: usize, base: &str, measure: &str| {
            let s = corpus::settled(Verdict::Reproduced, Some(4654), &[(measure, P, Some("0.70"), 0.7001)]);
            with_covers(sources(i, &s, &[], None), attribution::covers(&catalog, &cite(base)).map(Arc::new))
        };
        let scope =
            [claim(0, "Adults 18-74, aware of brand", "Familiar"), claim(1, "Women 18-74", "Aware")].concat();
        // Before: `aware` named the women's Aware too, so both fit and the number was unsure.
        let n = with_scope("In W6, 70% of aware adults are familiar with Versant.", &scope).remove(0);
        assert_eq!((n.status, n.ambiguous), (Status::Traced, false), "{n:?}");
    }

    #[test]
    fn answers_population_the_catalog_does_not_name_leaves_attribution_unsure() {
        let scope = two_brands();
        let one = |text: &str| with_scope(text, &scope).remove(0);
        // Before: TRACED, 44% being the aware adults' figure; the catalog says `Male`, not `men`.
        for text in [
            "Among men, 44% would consider Versant.",
            "44% of men aged 18–34 would consider Versant.",
            "Among non-users, 44% would consider Versant.",
            "For Versant's lapsed customers, consideration is 44%.",
        ] {
            let n = one(text);
            assert_eq!(n.status, Status::AttributionUnsure, "{text}: {n:?}");
            assert!(n.attribution.as_deref().unwrap().contains("Adults 18-74, aware of brand"), "{n:?}");
        }
        // A population the catalog names is MISATTRIBUTED, as before.
        assert_eq!(one("Among women, 44% would consider Versant.").status, Status::Misattributed);
        // Ordinary text: the cited base's own words, or no population word at all.
        for text in [
            "Among aware adults, 44% would consider Versant.",
            "44% of aware adults (n = 4,654) would consider Versant.",
            "44% of those aware of Versant would consider it.",
            "For Versant, consideration is 44%.",
            "44% of adults 18-74 aware of Versant would consider it.",
            "Consideration of the brand is 44%.",
        ] {
            assert_eq!(one(text).status, Status::Traced, "{text}");
        }
    }

    #[test]
    fn answers_population_the_sentence_names_picks_the_candidate_before_doubt_does() {
        // Issue 45: one citation (aware adults) reproduces 44.2%, another (all adults, claimed
        // 0.442) is refuted. Before: TRACED_TO_DISCREPANT, ambiguous, though the sentence names
        // the aware adults.
        use crate::extractor::Unit::Proportion as P;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let catalog = crate::catalog::Catalog::load(&root.join("datasets")).unwrap();
        let cite = |base: &str| {
            serde_json::json!({
                "study": "Versant Mega Tracker", "period": "W6 (April 2026)",
                "base": {"name": base, "n": 4654}, "weight": "main_weight",
                "source": {"table": "versant_flat", "column": "s14r5", "function": "extractFunnel"}
            })
        };
        let claim = |i: usize, base: &str, verdict: Verdict, rec: f64| {
            let s = corpus::settled(verdict, Some(4654), &[("Considered", P, Some("0.442"), rec)]);
            with_covers(sources(i, &s, &[], None), attribution::covers(&catalog, &cite(base)).map(Arc::new))
        };
        let scope = [
            claim(0, "Adults 18-74, aware of brand", Verdict::Reproduced, 0.4421),
            claim(1, "All adults 18-74", Verdict::Discrepant, 0.3085),
        ]
        .concat();
        let one = |text: &str| with_scope(text, &scope).remove(0);
        let n = one("Among adults aware of Versant in W6, 44% have considered it.");
        assert_eq!((n.status, n.ambiguous, n.claim), (Status::Traced, false, Some(0)), "{n:?}");
        // A sentence that names neither base still cannot tell them apart: doubt wins.
        let n = one("In W6, 44% have considered Versant.");
        assert_eq!(n.status, Status::TracedToDiscrepant, "{n:?}");
        assert!(n.ambiguous, "{n:?}");
    }

    #[test]
    fn answers_population_a_question_is_asked_of_is_the_population_of_its_figures() {
        // Satisfaction (q30r5) is asked only of Versant's purchasers (the bundled catalog's
        // `universe`), so its rows are purchasers whatever the cited base is named.
        use crate::extractor::Unit::Proportion as P;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let catalog = crate::catalog::Catalog::load(&root.join("datasets")).unwrap();
        let cite = |column: &str| {
            serde_json::json!({
                "study": "Versant Mega Tracker", "period": "W6 (April 2026)",
                "base": {"name": "All adults 18-74", "n": 1225}, "weight": "main_weight",
                "source": {"table": "versant_flat", "column": column, "function": "extractShare"}
            })
        };
        let scope_of = |column: &str| {
            let s = corpus::settled(Verdict::Reproduced, Some(1225), &[("share", P, Some("0.69"), 0.6903)]);
            with_covers(sources(0, &s, &[], None), attribution::covers(&catalog, &cite(column)).map(Arc::new))
        };
        let one = |text: &str, column: &str| with_scope(text, &scope_of(column)).remove(0);
        for text in [
            "Among purchasers, 69% are satisfied with Versant (n = 1,225).",
            "69% of Versant's purchasers are satisfied.",
        ] {
            let n = one(text, "q30r5");
            assert_eq!(n.status, Status::Traced, "{text}: {n:?}");
        }
        // Another population is still not the purchasers', and the question's own universe
        // says nothing for a column asked of everyone: the same words on the funnel (s14r5,
        // no universe) are not the base's.
        assert_eq!(
            one("Among women, 69% are satisfied with Versant.", "q30r5").status,
            Status::Misattributed
        );
        assert_ne!(one("Among purchasers, 69% are satisfied with Versant.", "s14r5").status, Status::Traced);
    }

    // The cited results of the tests below are corpus-claims.json's (make_data_corpus.py's
    // arithmetic on the bundled data): W6 purchase Versant 26.8%, Corvana 19.6% (both claimed),
    // among women 19.5% (recomputed only); W5 and W6 consideration 46.7% and 44.2%.

    #[test]
    fn answers_contradicted_claimed_value_leaves_the_recomputed_one_that_fits() {
        // 20% is Corvana's claimed 19.6% (another brand and base) and the women's recomputed
        // 19.5%. Before: MISATTRIBUTED, the claimed tier taken before dropping the contradicted.
        assert_eq!(on_data("Among women, 20% purchased Versant."), [Status::RecomputedOnly]);
        // Both contradicted: Corvana among women is cited by neither.
        assert_eq!(on_data("Among women, 20% purchased Corvana."), [Status::Misattributed]);
    }

    #[test]
    fn answers_change_fitting_no_cited_pair_of_a_named_measure_is_misquoted() {
        // No Corvana or Northwind W5 is cited; 12% and 2.5 points are Versant's changes. Before:
        // UNCITED, as no pair fit the brand and wave the sentence names.
        assert_eq!(on_data("Corvana's purchase fell 12% since W5."), [Status::Misquoted]);
        assert_eq!(on_data("Northwind's consideration fell 2.5 points since W5."), [Status::Misquoted]);
        // A change naming no cited measure stays UNCITED.
        assert_eq!(on_data("Corvana's sales fell 12% since W5."), [Status::Uncited]);
    }

    #[test]
    fn answers_net_promoter_score_names_the_nps_not_the_promoters() {
        // The NPS result (−25.1, promoters 22.6%, base n 3,241) was not re-run. Before: `promoter`
        // named the promoters' share, so −25.1 was a coincidence and MISQUOTED.
        let text = "Versant's net promoter score is −25.1 among familiar adults (base n = 3,241).";
        assert_eq!(on_data(text), [Status::TracedUnverified; 2]);
        assert_eq!(on_data("Versant's net promoter score is −24 this wave."), [Status::Misquoted]);
        assert_eq!(on_data("Promoters are 22.6% of familiar adults."), [Status::TracedUnverified]);
    }

    #[test]
    fn answers_population_phrase_of_its_own_is_not_the_sentence_s_other_population() {
        // 44.2% is the aware adults' figure; `aware` is a funnel stage, so `women` was the only
        // population named and was said of it too. Before: MISATTRIBUTED.
        let text = "Among women, 31.5% would consider Versant (n = 3,597), compared with 44.2% among aware adults overall.";
        assert_eq!(on_data(text), [Status::Traced; 3]);
        // Without a phrase of its own, the only population named is still said of it.
        assert_eq!(on_data("Among women, 44.2% would consider Versant."), [Status::Misattributed]);
    }

    #[test]
    fn answers_period_of_a_change_or_a_compared_level_is_not_said_of_the_other_level() {
        // Before: the 44.2% (W6) was given W5, the only period the sentence names.
        let text = "Versant's consideration fell by about 5% since W5, to 44.2%.";
        assert_eq!(on_data(text), [Status::Traced; 2]);
        assert_eq!(on_data("In W5, Versant's consideration was 44.2%."), [Status::Misattributed]);
        // So is a period after and nearest a change (its reference) or a level this one is
        // compared with. Before: MISATTRIBUTED, given W5.
        for text in [
            "Versant's consideration is 44.2%, down 2.5 points on W5.",
            "Versant's consideration is 44.2%, compared with 46.7% in W5.",
        ] {
            assert_eq!(on_data(text), [Status::Traced; 2], "{text}");
        }
        // A period before both levels heads them: 40.3% is Northwind's W6 figure.
        let heading = on_data("Versant leads Northwind on consideration in W7, 46.2% vs 40.3%.");
        assert_eq!(heading[1], Status::Misattributed);
    }

    #[test]
    fn answers_name_in_brackets_after_a_level_is_that_level_s() {
        // W6 purchase: Northwind 26.7%. Before: ATTRIBUTION_UNSURE three times (Versant and
        // Northwind stood between the second and third levels).
        let text = "Across the three brands in W6, purchase ranges from 19.6% (Corvana) to 26.8% (Versant), with Northwind at 26.7%.";
        assert_eq!(on_data(text), [Status::Traced; 3]);
        let swapped = "Purchase ranges from 26.8% (Corvana) to 19.6% (Versant), with Northwind at 26.7%.";
        assert_eq!(on_data(swapped), [Status::Misattributed, Status::Misattributed, Status::Traced]);
    }

    #[test]
    fn answers_part_of_the_cited_population_is_attribution_unsure() {
        // 31.5% is the consideration among all women; the catalog names the region West. Before:
        // TRACED.
        let n = with_scope("Among women in the West, 31.5% would consider Versant.", &corpus::data_sources());
        assert_eq!(n[0].status, Status::AttributionUnsure, "{n:?}");
        assert!(n[0].attribution.as_deref().unwrap().contains("West"), "{n:?}");
        assert_eq!(on_data("Among women, 31.5% would consider Versant."), [Status::Traced]);
    }
}
