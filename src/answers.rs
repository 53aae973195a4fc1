//! The answer-text audit: every number an agent's answer states, traced to the cited results of
//! the same exchange (docs/answers.md).
//!
//! [`mod@find`] finds the stated numbers; [`trace`] matches each with the [`Source`]s (the cited
//! numbers, as claimed and as recomputed) at the number's shown precision, with the same
//! half-unit rule as claims ([`crate::settle::compare::compare`]); [`audit`] does it for every agent
//! turn of a document. Ambiguity is reported, never resolved by a guess, and when candidates
//! disagree the most doubtful status is given: the cardinal rule holds here too.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::claim::{Claimed, fold};
use crate::extractor::Unit;
use crate::input::Turn;
use crate::settle::compare::{compare, reads_as_percent};
use crate::settle::verdict::{Settlement, Verdict, show};
use crate::stats::Estimate;

pub mod find;
pub mod render;

pub use find::{Kind, Stated, find};

/// The status of one stated number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// No citation in the exchange supports it.
    Uncited,
    /// The sentence is about a cited measure, but the number is neither its claimed nor its
    /// recomputed value.
    Misquoted,
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
    pub const ALL: [Status; 6] = [
        Status::Uncited,
        Status::Misquoted,
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
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let f = fold(s);
        Status::ALL.into_iter().find(|v| fold(v.as_str()) == f).ok_or_else(|| {
            format!(
                "unknown answer status {s:?} (expected one of uncited, misquoted, traced-to-discrepant, traced-unverified, recomputed-only, traced)"
            )
        })
    }
}

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
    let percent = n.kind == Kind::Percent;
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
        }),
        recomputed: None,
        matched: status == Status::Traced,
        verdict: Verdict::Unverifiable,
        base_n: None,
        count: n.kind == Kind::Count,
        record: Some(Record { label: label.to_string(), refs: refs.to_vec(), status, why }),
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
}

/// Whether `stated` agrees with `value` (a fraction for proportions) at its shown precision,
/// by the claims' half-unit rule.
fn agrees(stated: &Stated, unit: Unit, value: f64, count: bool) -> bool {
    if count || stated.kind == Kind::Count {
        return count && stated.decimals == 0 && stated.value == value;
    }
    let percent = matches!(stated.kind, Kind::Percent | Kind::Points);
    if percent && unit != Unit::Proportion {
        return false;
    }
    // A range agrees with any value inside it, each end at its shown precision.
    if let Some((lo, hi)) = stated.range {
        let v = if percent { value * 100.0 } else { value };
        let half = stated.half_unit();
        return v >= lo - half - 1e-9 && v <= hi + half + 1e-9;
    }
    let claimed = Claimed {
        text: stated.text.clone(),
        value: stated.value,
        decimals: stated.decimals,
        percent,
        key: None,
        pointer: String::new(),
        unreadable: None,
    };
    let e = Estimate {
        value,
        se: 0.0,
        df: 0.0,
        ci_low: value,
        ci_high: value,
        deff: None,
        sample: crate::stats::Sample::BaseRows,
    };
    compare(unit, Some(&e), &claimed).is_some_and(|c| c.matched)
}

/// A claimed number in its measure's units (a fraction for a proportion), and the unit to
/// compare in (a number of unknown unit is read as a proportion when it reads as one).
fn claimed_value(src: &Source, c: &Claimed) -> (Unit, f64) {
    let unit = src.unit.unwrap_or(if c.percent || (c.decimals > 0 && c.value.abs() <= 1.0) {
        Unit::Proportion
    } else {
        Unit::Value
    });
    let v = if unit == Unit::Proportion && reads_as_percent(unit, c) { c.value / 100.0 } else { c.value };
    (unit, v)
}

/// The status of a stated number that repeats `src`'s claimed number. A number that matched
/// its recomputed value is TRACED even when another number of the same claim did not (the same
/// re-run reproduced it); a wrong base n leaves every number of its claim in doubt.
fn traced_status(src: &Source) -> Status {
    if let Some(r) = &src.record {
        return r.status;
    }
    match src.verdict {
        Verdict::Invalid | Verdict::Unverifiable => Status::TracedUnverified,
        _ if src.recomputed.is_none() => Status::TracedUnverified,
        Verdict::Reproduced | Verdict::Discrepant if src.matched => Status::Traced,
        _ => Status::TracedToDiscrepant,
    }
}

/// How serious a status is, for picking the most doubtful among candidates.
fn doubt(s: Status) -> u8 {
    match s {
        Status::Uncited => 6,
        Status::Misquoted => 5,
        Status::TracedToDiscrepant => 4,
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

/// Byte distance from the number at `at` to the nearest mention of `measure` in `sentence`, if
/// any; with `others` (the other numbers of the sentence), only the mentions nearer to this
/// number than to any other count (`44% would consider it, and 58% would recommend it`: the
/// 58% is not about consideration).
fn mention_owned(sentence: &str, offset: usize, measure: &str, at: usize, others: &[usize]) -> Option<usize> {
    // A conversion (`Considered → Purchased`) is mentioned only when both its stages are: `47%
    // would consider it` is about Considered, not about the step from it to Purchased.
    if let Some((from, to)) = measure.split_once('→') {
        let a = mention_owned(sentence, offset, from.trim(), at, others)?;
        let b = mention_owned(sentence, offset, to.trim(), at, others)?;
        return Some(a.max(b));
    }
    let st = stem(measure);
    if st.len() < 2 {
        return None;
    }
    let lower = sentence.to_lowercase();
    // Lower-casing can change byte lengths; only then fall back to "mentioned somewhere".
    let same_len = lower.len() == sentence.len();
    let mut best: Option<usize> = None;
    let mut from = 0;
    while let Some(p) = lower[from..].find(&st) {
        let p = from + p;
        let starts_word = p == 0 || !lower[..p].ends_with(|c: char| c.is_alphanumeric());
        let owned =
            !same_len || others.iter().all(|&o| (offset + p).abs_diff(o) >= (offset + p).abs_diff(at));
        if starts_word && owned {
            let d = if same_len { (offset + p).abs_diff(at) } else { 0 };
            best = Some(best.map_or(d, |b| b.min(d)));
        }
        from = p + st.len();
    }
    best
}

/// Byte distance from the number at `at` to the nearest place `sentence` names `src`: its
/// measure, or for a MOCA-cited record its marker or node reference (as [`mention_owned`]).
fn names(sentence: &str, offset: usize, src: &Source, at: usize, others: &[usize]) -> Option<usize> {
    let Some(r) = &src.record else {
        return mention_owned(sentence, offset, &src.measure, at, others);
    };
    let mut best: Option<usize> = None;
    for needle in r.refs.iter().filter(|n| !n.is_empty()) {
        for (p, _) in sentence.match_indices(needle.as_str()) {
            let d = (offset + p).abs_diff(at);
            if others.iter().all(|&o| (offset + p).abs_diff(o) >= d) {
                best = Some(best.map_or(d, |b| b.min(d)));
            }
        }
    }
    best
}

/// How a report names a source: `claim #1 Considered`, or the cited record.
fn key_of(s: &Source) -> String {
    match &s.record {
        Some(r) => format!("record {}", r.label),
        None => format!("claim #{} {}", s.claim + 1, s.measure),
    }
}

/// Traces one stated number to the sources of its exchange. `sentence` is its sentence's text,
/// `offset` where that sentence starts in the answer, `counts` the counts stated in it.
/// `others` are where the sentence's other numbers start.
pub fn trace(
    stated: &Stated,
    sentence: &str,
    offset: usize,
    counts: &[f64],
    others: &[usize],
    sources: &[Source],
) -> StatedNumber {
    let mut out = StatedNumber {
        text: stated.text.clone(),
        start: stated.start,
        end: stated.end,
        sentence: stated.sentence,
        kind: stated.kind,
        status: Status::Uncited,
        claim: None,
        measure: None,
        record: None,
        claimed: None,
        recomputed: None,
        ambiguous: false,
        candidates: Vec::new(),
        why: "no citation of this exchange states or recomputes this number".into(),
    };
    let percent = matches!(stated.kind, Kind::Percent | Kind::Points);
    let show_rec = |src: &Source| {
        src.recomputed.map(|v| {
            if src.count {
                format!("{v}")
            } else if src.unit == Some(Unit::Proportion) && (percent || stated.value.abs() > 1.0) {
                show(v * 100.0, stated.decimals, true)
            } else {
                show(v, stated.decimals.max(0), false)
            }
        })
    };
    // Points are differences: traced to two cited values of the same measure.
    if stated.kind == Kind::Points {
        return trace_points(stated, sources, out);
    }
    let by_claim: Vec<&Source> = sources
        .iter()
        .filter(|s| {
            s.claimed.as_ref().is_some_and(|c| {
                let (unit, v) = claimed_value(s, c);
                agrees(stated, unit, v, s.count)
            })
        })
        .collect();
    let by_rec: Vec<&Source> = sources
        .iter()
        .filter(|s| s.recomputed.is_some_and(|v| s.unit.is_some_and(|u| agrees(stated, u, v, s.count))))
        .collect();
    // A range is loose: it only traces to a measure its sentence names.
    let named =
        |s: &&Source| stated.range.is_none() || names(sentence, offset, s, stated.start, &[]).is_some();
    let by_claim: Vec<&Source> = by_claim.into_iter().filter(&named).collect();
    let by_rec: Vec<&Source> = by_rec.into_iter().filter(&named).collect();
    let (tier, recomputed_only) = if !by_claim.is_empty() { (by_claim, false) } else { (by_rec, true) };
    // A value that only coincides with a measure the sentence does not name, next to a cited
    // measure it does name (`consideration is 48%` against detractors 47.6%), is a misquote.
    let coincidence = !tier.is_empty()
        && tier.iter().all(|s| !s.count && names(sentence, offset, s, stated.start, &[]).is_none())
        && sources.iter().any(|s| {
            !s.count
                && (stated.kind == Kind::Number || s.unit.is_none_or(|u| u == Unit::Proportion))
                && names(sentence, offset, s, stated.start, others).is_some()
        });
    if !tier.is_empty() && !coincidence {
        let picked = narrow(tier, sentence, offset, stated.start, counts);
        let status_of = |s: &Source| if recomputed_only { Status::RecomputedOnly } else { traced_status(s) };
        let worst = picked.iter().copied().max_by_key(|s| doubt(status_of(s))).unwrap_or(picked[0]);
        let mut keys: Vec<String> = picked.iter().map(|s| key_of(s)).collect();
        keys.dedup();
        out.status = status_of(worst);
        point_at(&mut out, worst);
        out.claimed = worst.claimed.as_ref().map(|c| c.text.clone());
        out.recomputed = show_rec(worst);
        if keys.len() > 1 {
            out.ambiguous = true;
            out.candidates = keys;
        }
        out.why = match (&worst.record, out.status) {
            (Some(r), Status::Traced) => format!("stated by the cited record {} ({})", r.label, r.why),
            (Some(r), _) => format!("repeats the cited record {}, not checked: {}", r.label, r.why),
            (None, status) => match status {
                Status::Traced => format!("the cited {} that recite reproduced", worst.measure),
                Status::TracedToDiscrepant => {
                    format!("repeats the cited {}, which the data does not support", worst.measure)
                }
                Status::TracedUnverified => {
                    format!(
                        "repeats the cited {}, which could not be re-run or was not checked",
                        worst.measure
                    )
                }
                _ => format!("recite's recomputed {}, which the tool did not state so", worst.measure),
            },
        };
        if out.ambiguous {
            out.why.push_str(&format!(" (ambiguous: {} cited measures fit)", out.candidates.len()));
        }
        return out;
    }
    // Not a cited number: is the sentence about a cited measure of the same kind?
    let compatible = |s: &Source| match stated.kind {
        Kind::Count => s.count,
        Kind::Percent => s.unit.is_none_or(|u| u == Unit::Proportion) && !s.count,
        _ => !s.count,
    };
    let mut about: Vec<(usize, &Source)> = sources
        .iter()
        .filter(|s| compatible(s))
        .filter_map(|s| {
            let d = if s.count && s.record.is_none() {
                // A count stated as `n =` is about a base.
                Some(0)
            } else {
                names(sentence, offset, s, stated.start, others)
            };
            d.map(|d| (d, s))
        })
        .collect();
    about.sort_by_key(|(d, _)| *d);
    if let Some(&(d, first)) = about.first() {
        let nearest: Vec<&Source> = about.iter().filter(|(e, _)| *e == d).map(|(_, s)| *s).collect();
        let mut keys: Vec<String> = nearest.iter().map(|s| key_of(s)).collect();
        keys.dedup();
        out.status = Status::Misquoted;
        point_at(&mut out, first);
        out.claimed = first.claimed.as_ref().map(|c| c.text.clone());
        out.recomputed = show_rec(first);
        out.why = match &first.record {
            Some(r) => {
                // Every number of that record's kind, so the reader sees what it does say.
                let said: Vec<&str> = nearest
                    .iter()
                    .filter(|s| s.record.as_ref().is_some_and(|x| x.label == r.label))
                    .filter_map(|s| s.claimed.as_ref().map(|c| c.text.as_str()))
                    .collect();
                out.claimed = Some(said.join(", "));
                format!(
                    "the sentence refers to the cited record {}, but {} is not a number it states ({})",
                    r.label,
                    stated.text,
                    said.join(", ")
                )
            }
            None => format!(
                "the sentence is about the cited {}, but {} is neither its claimed ({}) nor its recomputed value ({})",
                first.measure,
                stated.text,
                out.claimed.as_deref().unwrap_or("not stated"),
                out.recomputed.as_deref().unwrap_or("not re-run")
            ),
        };
        if keys.len() > 1 {
            out.ambiguous = true;
            out.candidates = keys;
        }
    }
    out
}

/// Points a stated number at its source: a claim and measure, or a MOCA-cited record.
fn point_at(out: &mut StatedNumber, src: &Source) {
    match &src.record {
        Some(r) => out.record = Some(r.label.clone()),
        None => {
            out.claim = Some(src.claim);
            out.measure = Some(src.measure.clone());
        }
    }
}

/// Several candidates: keep those whose measure the sentence mentions, then those whose base n
/// it states. What is left and still differs is ambiguous.
fn narrow<'a>(
    tier: Vec<&'a Source>,
    sentence: &str,
    offset: usize,
    at: usize,
    counts: &[f64],
) -> Vec<&'a Source> {
    let distinct = |v: &[&Source]| {
        let mut k: Vec<(usize, &str)> = v.iter().map(|s| (s.claim, s.measure.as_str())).collect();
        k.sort();
        k.dedup();
        k.len()
    };
    let mut picked = tier;
    if distinct(&picked) > 1 {
        let named: Vec<&Source> =
            picked.iter().copied().filter(|s| names(sentence, offset, s, at, &[]).is_some()).collect();
        if !named.is_empty() {
            picked = named;
        }
    }
    if distinct(&picked) > 1 {
        let based: Vec<&Source> = picked
            .iter()
            .copied()
            .filter(|s| s.base_n.is_some_and(|n| counts.contains(&(n as f64))))
            .collect();
        if !based.is_empty() {
            picked = based;
        }
    }
    picked
}

fn trace_points(stated: &Stated, sources: &[Source], mut out: StatedNumber) -> StatedNumber {
    let props: Vec<&Source> =
        sources.iter().filter(|s| s.unit == Some(Unit::Proportion) && s.record.is_none()).collect();
    let fits =
        |a: f64, b: f64| ((a - b).abs() * 100.0 - stated.value.abs()).abs() <= stated.half_unit() + 1e-9;
    for (i, a) in props.iter().enumerate() {
        for b in props.iter().skip(i + 1) {
            if fold(&a.measure) != fold(&b.measure) || a.claim == b.claim {
                continue;
            }
            let claimed = |s: &Source| s.claimed.as_ref().map(|c| claimed_value(s, c).1);
            let status = match (claimed(a), claimed(b)) {
                (Some(x), Some(y)) if fits(x, y) => {
                    Some(if doubt(traced_status(a)) >= doubt(traced_status(b)) {
                        traced_status(a)
                    } else {
                        traced_status(b)
                    })
                }
                _ => match (a.recomputed, b.recomputed) {
                    (Some(x), Some(y)) if fits(x, y) => Some(Status::RecomputedOnly),
                    _ => None,
                },
            };
            if let Some(status) = status {
                out.status = status;
                out.claim = Some(a.claim);
                out.measure = Some(a.measure.clone());
                out.why = format!(
                    "the difference between the cited {} of claims #{} and #{}",
                    a.measure,
                    a.claim + 1,
                    b.claim + 1
                );
                return out;
            }
        }
    }
    out.why = "no two cited values of one measure differ by this many points".into();
    out
}

/// Audits every agent turn of a conversation: `sources[i]` are the cited numbers of claim `i`.
/// A turn's exchange runs from the user message before it to the next user message (the A2A
/// task, the AG-UI run); a conversation with no user turn is one exchange.
pub fn audit(turns: &[Turn], sources: &[Vec<Source>]) -> Vec<Answer> {
    audit_cited(turns, sources, &HashMap::new())
}

/// [`audit`], where `cited` holds, by message id, the numbers of the records `moca.citations`
/// events cite for that assistant message ([`record_sources`]): that message's numbers are also
/// traced to them, and a number inside one of their markers (`[12]`) is not a stated number.
pub fn audit_cited(
    turns: &[Turn],
    sources: &[Vec<Source>],
    cited: &HashMap<String, Vec<Source>>,
) -> Vec<Answer> {
    let mut out = Vec::new();
    for (ti, turn) in turns.iter().enumerate() {
        let role = turn.role.to_lowercase();
        if !matches!(role.as_str(), "agent" | "assistant" | "model") || turn.text.trim().is_empty() {
            continue;
        }
        let records = turn.message_id.as_ref().and_then(|id| cited.get(id));
        let mut stated = find(&turn.text);
        if let Some(records) = records {
            let markers: Vec<(usize, usize)> = records
                .iter()
                .filter_map(|s| s.record.as_ref())
                .flat_map(|r| r.refs.iter().filter(|m| !m.is_empty()))
                .flat_map(|m| turn.text.match_indices(m.as_str()).map(|(p, m)| (p, p + m.len())))
                .collect();
            stated.retain(|n| !markers.iter().any(|&(a, b)| n.start >= a && n.end <= b));
        }
        if stated.is_empty() {
            continue;
        }
        let from = turns[..ti].iter().rposition(|t| t.role.eq_ignore_ascii_case("user")).map_or(0, |p| p + 1);
        let to = turns[ti..]
            .iter()
            .position(|t| t.role.eq_ignore_ascii_case("user"))
            .map_or(turns.len(), |p| ti + p);
        let scope: Vec<Source> = turns[from..to]
            .iter()
            .flat_map(|t| t.items.iter())
            .filter_map(|&i| sources.get(i))
            .flatten()
            .chain(records.into_iter().flatten())
            .cloned()
            .collect();
        out.push(audit_text(ti, turn, &stated, &scope));
    }
    out
}

/// Audits one text against the sources of its exchange.
pub fn audit_text(ti: usize, turn: &Turn, stated: &[Stated], scope: &[Source]) -> Answer {
    let spans = find::sentences(&turn.text);
    let mut numbers = Vec::new();
    for s in stated {
        let (a, b) = spans.get(s.sentence).copied().unwrap_or((0, turn.text.len()));
        let counts: Vec<f64> = stated
            .iter()
            .filter(|x| x.sentence == s.sentence && x.kind == Kind::Count)
            .map(|x| x.value)
            .collect();
        let others: Vec<usize> = stated
            .iter()
            .filter(|x| x.sentence == s.sentence && x.start != s.start)
            .map(|x| x.start)
            .collect();
        numbers.push(trace(s, &turn.text[a..b], a, &counts, &others, scope));
    }
    let zero = || Status::ALL.iter().map(|s| (*s, 0)).collect::<BTreeMap<_, _>>();
    let mut counts = zero();
    for n in &numbers {
        *counts.entry(n.status).or_default() += 1;
    }
    let mut sentences = Vec::new();
    for (si, &(a, b)) in spans.iter().enumerate() {
        let mine: Vec<&StatedNumber> = numbers.iter().filter(|n| n.sentence == si).collect();
        if mine.is_empty() {
            continue;
        }
        let mut c = BTreeMap::new();
        for n in &mine {
            *c.entry(n.status).or_default() += 1;
        }
        let worst = mine.iter().map(|n| n.status).max_by_key(|s| doubt(*s));
        sentences.push(Sentence { start: a, end: b, counts: c, worst });
    }
    // Sentence indices in numbers point into `sentences` (only those with numbers).
    for n in &mut numbers {
        let (a, _) = spans.get(n.sentence).copied().unwrap_or((0, 0));
        n.sentence = sentences.iter().position(|s| s.start == a).unwrap_or(0);
    }
    Answer {
        turn: ti,
        role: turn.role.clone(),
        message_id: turn.message_id.clone(),
        text: turn.text.clone(),
        counts,
        numbers,
        sentences,
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
    fn moca_cited_marker_is_not_a_stated_number() {
        let ev = event(Some(true), Some("Within 30 days."), None, serde_json::json!({}));
        let mut ev12 = ev.clone();
        ev12.citations[0].marker = Some("[12]".into());
        assert_eq!(statuses("Refunds within 30 days [12].", &ev12), [("30".to_string(), Status::Traced)]);
    }
}
