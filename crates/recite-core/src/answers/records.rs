//! The numbers of records a MOCA `moca.citations` event cites, as [`Source`]s, each with the
//! status a stated number repeating it gets: checked only when the Reader returned the record
//! unchanged and its trust flags nothing.

use super::find::{Kind, Stated, find};
use super::source::{Record, Source};
use super::status::Status;
use crate::claim::Claimed;
use crate::extractor::Unit;
use crate::settle::verdict::Verdict;

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
