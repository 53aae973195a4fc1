//! The labelled corpus (`tests/fixtures/answers/corpus.txt`): precision and recall of each
//! status against hand-written labels, and no UNCITED or MISQUOTED alarm on a non-claim.

use std::collections::BTreeMap;

use super::*;
use crate::claim::parse_number;
use crate::settle::{BaseRow, Comparison, MeasureRow};
use crate::stats::BaseFacts;

fn est(v: f64) -> Option<Estimate> {
    Some(Estimate {
        value: v,
        se: 0.01,
        df: 100.0,
        ci_low: v - 0.02,
        ci_high: v + 0.02,
        deff: None,
        sample: crate::stats::Sample::BaseRows,
    })
}

/// A settled claim: measures as (name, unit, claimed text, recomputed), its verdict and base n.
pub(super) fn settled(
    verdict: Verdict,
    n: Option<u64>,
    rows: &[(&str, Unit, Option<&str>, f64)],
) -> Settlement {
    let mut s = Settlement::unverifiable(vec![]);
    s.verdict = verdict;
    s.base = n.map(|n| BaseRow {
        name: "base".into(),
        claimed_n: n,
        facts: BaseFacts { n, weighted: n as f64, effective: n as f64 },
        matched: true,
    });
    s.measures = rows
        .iter()
        .map(|(name, unit, claimed, rec)| {
            let e = est(*rec);
            let claims = claimed
                .map(|t| {
                    let c = parse_number(t, Some(name.to_string()), format!("/{name}")).unwrap();
                    compare(*unit, e.as_ref(), &c).unwrap()
                })
                .into_iter()
                .collect::<Vec<Comparison>>();
            MeasureRow { name: name.to_string(), unit: *unit, estimate: e, claims }
        })
        .collect();
    s
}

/// The cited results every corpus line is audited against (see make_corpus.py).
pub(super) fn corpus_sources() -> Vec<Source> {
    use Unit::{Proportion as P, Value as V};
    let mut out = Vec::new();
    let funnel = settled(
        Verdict::Reproduced,
        Some(4654),
        &[
            ("Aware", P, None, 1.0),
            ("Familiar", P, Some("0.694"), 0.6941),
            ("Considered", P, Some("0.442"), 0.4421),
            ("Purchased", P, Some("0.268"), 0.2683),
            ("Loyal", P, Some("0.132"), 0.1318),
        ],
    );
    out.extend(sources(0, &funnel, &[], None));
    let all = settled(Verdict::Discrepant, Some(6250), &[("Considered", P, Some("0.442"), 0.298)]);
    out.extend(sources(1, &all, &[], None));
    let nps = Settlement::unverifiable(vec!["unknown column".into()]);
    let leaves =
        crate::claim::leaves(&serde_json::json!({"NPS": -25.1, "promoters": 0.226, "detractors": 0.476}));
    out.extend(sources(2, &nps, &leaves, Some(3241)));
    let corvana = settled(
        Verdict::Reproduced,
        Some(3980),
        &[("Familiar", P, None, 0.552), ("Considered", P, Some("0.31"), 0.3104)],
    );
    out.extend(sources(3, &corvana, &[], None));
    let w5 = settled(
        Verdict::Discrepant,
        Some(4590),
        &[("Considered", P, Some("0.470"), 0.467), ("Purchased", P, Some("0.306"), 0.303)],
    );
    out.extend(sources(4, &w5, &[], None));
    let spend = settled(Verdict::Reproduced, Some(1200), &[("Spend", V, Some("42.5"), 42.46)]);
    out.extend(sources(5, &spend, &[], None));
    out
}

/// One corpus line: its text with the markup removed, and the labels (start, status).
fn parse_line(line: &str) -> (String, Vec<(usize, Status)>) {
    let line = line.replace("\\n", "\n");
    let (mut text, mut labels) = (String::new(), Vec::new());
    let mut rest = line.as_str();
    while let Some(open) = rest.find("[[") {
        text.push_str(&rest[..open]);
        let close = rest[open..].find("]]").expect("unclosed [[") + open;
        let (num, status) = rest[open + 2..close].rsplit_once('|').expect("label without |");
        labels.push((text.len(), status.parse::<Status>().unwrap()));
        text.push_str(num);
        rest = &rest[close + 2..];
    }
    text.push_str(rest);
    (text, labels)
}

#[test]
fn answers_corpus_precision_and_recall_per_status() {
    let corpus =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/answers/corpus.txt"))
            .unwrap();
    let scope = corpus_sources();
    // Per status: (true positives, predicted, labelled).
    let mut tally: BTreeMap<Status, (usize, usize, usize)> =
        Status::ALL.iter().map(|s| (*s, (0, 0, 0))).collect();
    let (mut lines, mut labelled, mut found_right) = (0, 0, 0);
    let mut false_alarms = Vec::new();
    let mut wrong = Vec::new();
    for line in corpus.lines().filter(|l| !l.trim().is_empty()) {
        lines += 1;
        let (text, labels) = parse_line(line);
        let turn = Turn { role: "assistant".into(), text: text.clone(), ..Turn::default() };
        let answer = audit_text(0, &turn, &find(&text), &scope);
        for (at, status) in &labels {
            labelled += 1;
            tally.get_mut(status).unwrap().2 += 1;
            match answer.numbers.iter().find(|n| n.start == *at) {
                Some(n) if n.status == *status => found_right += 1,
                Some(n) => wrong.push(format!("{text:?}: {} is {}, labelled {status}", n.text, n.status)),
                None => wrong.push(format!("{text:?}: the number at {at} was not found (labelled {status})")),
            }
        }
        for n in &answer.numbers {
            tally.get_mut(&n.status).unwrap().1 += 1;
            match labels.iter().find(|(at, _)| *at == n.start) {
                Some((_, s)) if *s == n.status => tally.get_mut(&n.status).unwrap().0 += 1,
                Some(_) => {}
                None => false_alarms.push(format!("{text:?}: {} reported {}, not a claim", n.text, n.status)),
            }
        }
    }
    let mut table = String::from("status | precision | recall | labelled\n");
    for (s, (tp, predicted, labels)) in &tally {
        let p = if *predicted == 0 { 1.0 } else { *tp as f64 / *predicted as f64 };
        let r = if *labels == 0 { 1.0 } else { *tp as f64 / *labels as f64 };
        table.push_str(&format!("{s} | {p:.3} | {r:.3} | {labels}\n"));
    }
    let recall = found_right as f64 / labelled as f64;
    println!("{lines} lines, {labelled} labelled numbers, overall recall {recall:.3}\n{table}");
    assert!(lines >= 150, "the corpus has {lines} answer texts, fewer than 150");
    let alarms: Vec<&String> =
        false_alarms.iter().filter(|a| a.contains("UNCITED") || a.contains("MISQUOTED")).collect();
    assert!(alarms.is_empty(), "false alarms on non-claims:\n{alarms:#?}");
    assert!(recall >= 0.95, "recall {recall:.3} < 0.95; misses:\n{wrong:#?}");
    for (s, (tp, predicted, labels)) in &tally {
        let r = if *labels == 0 { 1.0 } else { *tp as f64 / *labels as f64 };
        let p = if *predicted == 0 { 1.0 } else { *tp as f64 / *predicted as f64 };
        assert!(r >= 0.9 && p >= 0.9, "{s}: precision {p:.3}, recall {r:.3}\n{table}\nmisses:\n{wrong:#?}");
    }
}
