//! The labelled corpus (`tests/fixtures/answers/corpus.txt`): precision and recall of each
//! status against labels recite did not compute, and no UNCITED or MISQUOTED alarm on a
//! non-claim. Its first part is hand-written against six fixed cited results
//! ([`corpus_sources`], make_corpus.py); its data part (after `@scope data`) was written by
//! make_data_corpus.py from the bundled Versant data, against the results that script
//! computed itself (`corpus-claims.json`, [`data_sources`]), their coverage read from the
//! bundled catalog.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::*;
use crate::claim::parse_number;
use crate::extractor::Unit;
use crate::input::Turn;
use crate::settle::compare::compare;
use crate::settle::verdict::{Settlement, Verdict};
use crate::settle::{BaseRow, Comparison, MeasureRow};
use crate::stats::{BaseFacts, Estimate};

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

/// The cited results of the corpus's data part (`corpus-claims.json`: computed by
/// make_data_corpus.py from the bundled parquet file with its own weighted arithmetic), with
/// what the bundled catalog says each citation covers.
pub(super) fn data_sources() -> Vec<Source> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let catalog = crate::catalog::Catalog::load(&root.join("datasets")).unwrap();
    let text = std::fs::read_to_string(root.join("tests/fixtures/answers/corpus-claims.json")).unwrap();
    let file: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut out = Vec::new();
    for (i, c) in file["claims"].as_array().unwrap().iter().enumerate() {
        let verdict = match c["verdict"].as_str().unwrap() {
            "REPRODUCED" => Verdict::Reproduced,
            "DISCREPANT" => Verdict::Discrepant,
            _ => Verdict::Unverifiable,
        };
        let n = c["n"].as_u64();
        let covers = attribution::covers(&catalog, &c["citation"]).map(Arc::new);
        assert!(covers.is_some(), "the catalog covers claim {i}");
        let found = match c.get("leaves") {
            // Not re-run: the numbers of its result as the tool stated them.
            Some(leaves) => sources(
                i,
                &Settlement::unverifiable(vec!["not re-run".into()]),
                &crate::claim::leaves(leaves),
                n,
            ),
            None => {
                let rows: Vec<(String, Option<String>, f64)> = c["measures"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| {
                        let claimed = m["claimed"].as_str().map(str::to_string);
                        (m["name"].as_str().unwrap().to_string(), claimed, m["recomputed"].as_f64().unwrap())
                    })
                    .collect();
                let rows: Vec<(&str, Unit, Option<&str>, f64)> =
                    rows.iter().map(|(m, c, r)| (m.as_str(), Unit::Proportion, c.as_deref(), *r)).collect();
                sources(i, &settled(verdict, n, &rows), &[], None)
            }
        };
        out.extend(with_covers(found, covers));
    }
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
    audit_corpus("corpus.txt", (150, 60, 500));
}

/// The corpus written by a tester who read docs/answers.md and the data, never recite's code,
/// its output or the other corpus (the cited results are the data part's).
#[test]
fn answers_corpus_independent_precision_and_recall_per_status() {
    audit_corpus("corpus-independent.txt", (60, 60, 400));
}

/// The second independent corpus (issue 45), written by another tester who read only
/// docs/answers.md, `corpus-claims.json` and the data, with sub-population questions, derived
/// differences, identifiers, explicit pairings and decimal commas among its 440 numbers
/// (`corpus-independent-2.md`), with the same assertions as the other corpora.
#[test]
fn answers_corpus_independent_2_precision_and_recall_per_status() {
    audit_corpus("corpus-independent-2.txt", (130, 130, 320));
}

/// Audits every answer of `tests/fixtures/answers/FILE` and asserts overall recall ≥ 0.99, no
/// UNCITED or MISQUOTED alarm on a non-claim, precision and recall ≥ 0.99 per status, and at least `min` = (answers, answers in the data part, numbers there).
fn audit_corpus(file: &str, min: (usize, usize, usize)) {
    let path = format!("{}/tests/fixtures/answers/{file}", env!("CARGO_MANIFEST_DIR"));
    let corpus = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (hand, data) = (corpus_sources(), data_sources());
    // Per status: (true positives, predicted, labelled), for the whole corpus and its data part.
    let zero = || -> BTreeMap<Status, (usize, usize, usize)> {
        Status::ALL.iter().map(|s| (*s, (0, 0, 0))).collect()
    };
    let (mut tally, mut tally_data) = (zero(), zero());
    let (mut lines, mut labelled, mut found_right) = (0, 0, 0);
    let (mut data_lines, mut data_labelled) = (0, 0);
    let mut false_alarms = Vec::new();
    let mut wrong = Vec::new();
    let mut in_data = false;
    for line in corpus.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(scope) = line.strip_prefix("@scope ") {
            in_data = scope.trim() == "data";
            continue;
        }
        lines += 1;
        let scope = if in_data { &data } else { &hand };
        let (text, labels) = parse_line(line);
        let turn = Turn { role: "assistant".into(), text: text.clone(), ..Turn::default() };
        let answer = audit_text(0, &turn, &find(&text), scope);
        if in_data {
            data_lines += 1;
            data_labelled += labels.len();
        }
        let mut count = |s: Status, k: usize, d: usize| {
            for t in [&mut tally, &mut tally_data].into_iter().take(if in_data { 2 } else { 1 }) {
                let e = t.get_mut(&s).unwrap();
                match k {
                    0 => e.0 += d,
                    1 => e.1 += d,
                    _ => e.2 += d,
                }
            }
        };
        for (at, status) in &labels {
            labelled += 1;
            count(*status, 2, 1);
            match answer.numbers.iter().find(|n| n.start == *at) {
                Some(n) if n.status == *status => found_right += 1,
                Some(n) => {
                    wrong.push(format!("{text:?}: {} is {}, labelled {status} ({})", n.text, n.status, n.why))
                }
                None => wrong.push(format!("{text:?}: the number at {at} was not found (labelled {status})")),
            }
        }
        for n in &answer.numbers {
            count(n.status, 1, 1);
            match labels.iter().find(|(at, _)| *at == n.start) {
                Some((_, s)) if *s == n.status => count(n.status, 0, 1),
                Some(_) => {}
                None => false_alarms.push(format!("{text:?}: {} reported {}, not a claim", n.text, n.status)),
            }
        }
    }
    let table = |tally: &BTreeMap<Status, (usize, usize, usize)>| {
        let mut table = String::from("status | precision | recall | labelled\n");
        for (s, (tp, predicted, labels)) in tally {
            let p = if *predicted == 0 { 1.0 } else { *tp as f64 / *predicted as f64 };
            let r = if *labels == 0 { 1.0 } else { *tp as f64 / *labels as f64 };
            table.push_str(&format!("{s} | {p:.3} | {r:.3} | {labels}\n"));
        }
        table
    };
    let recall = found_right as f64 / labelled as f64;
    println!("{lines} lines, {labelled} labelled numbers, overall recall {recall:.3}\n{}", table(&tally));
    println!("data part: {data_lines} answers, {data_labelled} labelled numbers\n{}", table(&tally_data));
    println!("misses:\n{}", wrong.join("\n"));
    let table = table(&tally);
    println!("not claims, reported:\n{}", false_alarms.join("\n"));
    assert!(lines >= min.0, "{file} has {lines} answer texts, fewer than {}", min.0);
    assert!(
        data_lines >= min.1 && data_labelled >= min.2,
        "the data part of {file} has {data_lines} answers, {data_labelled} numbers"
    );
    let alarms: Vec<&String> =
        false_alarms.iter().filter(|a| a.contains("UNCITED") || a.contains("MISQUOTED")).collect();
    assert!(alarms.is_empty(), "false alarms on non-claims:\n{alarms:#?}");
    assert!(recall >= 0.99, "recall {recall:.3} < 0.99; misses:\n{wrong:#?}");
    for (s, (tp, predicted, labels)) in &tally {
        let r = if *labels == 0 { 1.0 } else { *tp as f64 / *labels as f64 };
        let p = if *predicted == 0 { 1.0 } else { *tp as f64 / *predicted as f64 };
        assert!(r >= 0.99 && p >= 0.99, "{s}: precision {p:.3}, recall {r:.3}\n{table}\nmisses:\n{wrong:#?}");
    }
}
