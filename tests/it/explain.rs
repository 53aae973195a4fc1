//! Explanations, one mistake at a time: for every kind of explanation a claim made with that
//! mistake, whose cause recite must name first.
//!
//! Each claim is built honestly: recite computes the number on the mistaken inputs (W5 instead
//! of W6, no weight, another base, no base filter, Corvana's column…), the number is written
//! with the precision an agent would show (one decimal of a percent), and it is claimed under
//! the correct citation, with the base n the mistaken computation had where the mistake changes
//! the rows (period, base, column); a weight changes no row, so those claims keep the right n.

use std::path::Path;

use recite::catalog::Catalog;
use recite::citation;
use recite::claim;
use recite::engine::{Engine, Job, ScanStats};
use recite::extractor::Registry;
use recite::resolve::{self, Resolved};
use recite::scan::Reading;
use recite::settle::pipeline::{self, Claim, Options};
use recite::settle::{Cause, Settlement, Verdict};
use recite::stats::{self, Interval};
use serde_json::{Value, json};

use crate::support::{recite, report, root};

const AWARE: &str = "Adults 18-74, aware of brand";
const ALL: &str = "All adults 18-74";
const VERSANT: &str = "s14r5";

struct Recite {
    catalog: Catalog,
    registry: Registry,
    engine: Engine,
}

impl Recite {
    fn new() -> Recite {
        Recite {
            catalog: Catalog::load(&root().join("datasets")).unwrap(),
            registry: Registry::load(None).unwrap(),
            engine: Engine::new(),
        }
    }

    /// Settles claims (citation, result) with or without explanations.
    fn settle_many(&self, claims: &[(Value, Value)], explain: bool) -> (Vec<Settlement>, ScanStats) {
        let claims: Vec<Claim> = claims
            .iter()
            .map(|(citation, result)| Claim { citation: citation.clone(), numbers: claim::leaves(result) })
            .collect();
        pipeline::settle_all(
            &claims,
            &self.catalog,
            &self.registry,
            &self.engine,
            Options { explain, ..Options::default() },
        )
    }

    fn settle(&self, citation: Value, result: Value) -> Settlement {
        self.settle_many(&[(citation, result)], true).0.remove(0)
    }

    /// What recite computes for `measure` on a citation's inputs, after `tweak` (for a mistake
    /// no citation can express, such as no base filter): (value as a fraction, base n).
    fn computed(&self, citation: Value, measure: &str, tweak: impl FnOnce(&mut Resolved)) -> (f64, u64) {
        let c = citation::parse(&citation).unwrap();
        let mut r = resolve::resolve(&c, &self.catalog, &self.registry, &self.engine).unwrap();
        tweak(&mut r);
        let job = Job { rows: r.rows.clone(), measures: r.measures.clone(), cells: Vec::new() };
        let (mut outcomes, _) = self.engine.run(&[job]);
        let out = outcomes.remove(0).unwrap();
        let estimates = stats::estimate(&r.measures, &out.vars, &out.sums, Interval::Logit);
        let i = r.measures.iter().position(|m| m.name == measure).unwrap();
        (estimates[i].unwrap().value, stats::base_facts(&out.sums).n)
    }
}

/// A Versant funnel citation.
fn funnel(period: &str, base: &str, n: u64, weight: &str, column: &str) -> Value {
    json!({
        "study": "Versant Mega Tracker", "period": period,
        "base": {"name": base, "n": n}, "weight": weight,
        "source": {"table": "versant_flat", "column": column, "function": "extractFunnel"}
    })
}

/// A share as an agent shows it: a percent with one decimal.
fn pct1(fraction: f64) -> String {
    format!("{:.1}%", fraction * 100.0)
}

/// Asserts the claim is not reproduced and recite names `cause` first; returns the settlement.
fn names_first(s: &Settlement, cause: Cause) -> &Settlement {
    assert_ne!(s.verdict, Verdict::Reproduced, "the mistaken claim reproduced: {:?}", s.reasons);
    let first = s.explanations.first().unwrap_or_else(|| panic!("no explanation: {:?}", s.reasons));
    assert_eq!(first.cause, cause, "explanations: {:#?}", s.explanations);
    s
}

#[test]
fn previous_period() {
    let rc = Recite::new();
    // The agent ran W5, and cited W6 with W5's number and base n.
    let (v, n) = rc.computed(funnel("W5", AWARE, 1, "main_weight", VERSANT), "Considered", |_| {});
    assert_eq!(pct1(v), "46.7%");
    let s = rc.settle(funnel("W6", AWARE, n, "main_weight", VERSANT), json!({"Considered": pct1(v)}));
    let s = names_first(&s, Cause::PreviousPeriod);
    assert_eq!(s.verdict, Verdict::Discrepant);
    assert!(s.explanations[0].reproduces_base);
    assert!(s.explanations[0].message.contains("W5 (March 2026)"), "{}", s.explanations[0].message);
}

#[test]
fn next_period() {
    let rc = Recite::new();
    let (v, n) = rc.computed(funnel("W7", AWARE, 1, "main_weight", VERSANT), "Considered", |_| {});
    assert_eq!(pct1(v), "48.8%");
    let s = rc.settle(funnel("W6", AWARE, n, "main_weight", VERSANT), json!({"Considered": pct1(v)}));
    let s = names_first(&s, Cause::NextPeriod);
    assert!(s.explanations[0].reproduces_base);
    assert!(s.explanations[0].message.contains("W7 (May 2026)"), "{}", s.explanations[0].message);
}

#[test]
fn unweighted() {
    let rc = Recite::new();
    // Awareness over all adults, where the weights matter: 67.3% weighted, 74.5% unweighted.
    let (right, n) = rc.computed(funnel("W6", ALL, 1, "main_weight", VERSANT), "Aware", |_| {});
    let (v, n_unweighted) = rc.computed(funnel("W6", ALL, 1, "unweighted", VERSANT), "Aware", |_| {});
    assert_eq!((pct1(right), pct1(v)), ("67.3%".to_string(), "74.5%".to_string()));
    assert_eq!(n, n_unweighted, "a weight changes no row");
    let s = rc.settle(funnel("W6", ALL, n, "main_weight", VERSANT), json!({"Aware": pct1(v)}));
    let s = names_first(&s, Cause::Unweighted);
    assert_eq!(s.verdict, Verdict::Discrepant);
    assert!(s.explanations[0].reproduces_base);
}

#[test]
fn other_weight() {
    let rc = Recite::new();
    let (v, n) = rc.computed(funnel("W6", ALL, 1, "alt_weight", VERSANT), "Aware", |_| {});
    assert_eq!(pct1(v), "67.5%");
    let s = rc.settle(funnel("W6", ALL, n, "main_weight", VERSANT), json!({"Aware": pct1(v)}));
    let s = names_first(&s, Cause::OtherWeight);
    assert!(s.explanations[0].message.contains("alt_weight"), "{}", s.explanations[0].message);
    // The reverse, claimed as alt_weight but computed with main_weight, is ambiguous at one
    // decimal: W6 with main_weight (67.336%) and W7 with alt_weight (67.330%) both show 67.3% on
    // 6250 rows, and recite lists both, each reproducing base n.
    let (v, n) = rc.computed(funnel("W6", ALL, 1, "main_weight", VERSANT), "Aware", |_| {});
    let s = rc.settle(funnel("W6", ALL, n, "alt_weight", VERSANT), json!({"Aware": pct1(v)}));
    let mut causes: Vec<Cause> = s.explanations.iter().map(|e| e.cause).collect();
    causes.sort();
    assert_eq!(causes, [Cause::NextPeriod, Cause::OtherWeight], "{:#?}", s.explanations);
    assert!(s.explanations.iter().all(|e| e.reproduces_base));
    // Two decimals settle it.
    let s = rc
        .settle(funnel("W6", ALL, n, "alt_weight", VERSANT), json!({"Aware": format!("{:.2}%", v * 100.0)}));
    let s = names_first(&s, Cause::OtherWeight);
    assert_eq!(s.explanations.len(), 1, "{:#?}", s.explanations);
    assert!(s.explanations[0].message.contains("main_weight"), "{}", s.explanations[0].message);
}

#[test]
fn other_base() {
    let rc = Recite::new();
    // Considered among the familiar (63.7%, n 3241) claimed as among the aware. The same number
    // is also this citation's Familiar → Considered conversion, but only the other base gives
    // the claimed base n, so it comes first.
    let familiar = "Adults 18-74, familiar with brand";
    let (v, n) = rc.computed(funnel("W6", familiar, 1, "main_weight", VERSANT), "Considered", |_| {});
    let s = rc.settle(funnel("W6", AWARE, n, "main_weight", VERSANT), json!({"Considered": pct1(v)}));
    let s = names_first(&s, Cause::OtherBase);
    assert!(s.explanations[0].reproduces_base);
    assert!(s.explanations[0].message.contains(familiar), "{}", s.explanations[0].message);
    let causes: Vec<Cause> = s.explanations.iter().map(|e| e.cause).collect();
    assert_eq!(causes, [Cause::OtherBase, Cause::OtherMeasure]);
    assert!(!s.explanations[1].reproduces_base);
}

#[test]
fn no_base() {
    let rc = Recite::new();
    // Considered over every W6 respondent, the aware filter left out (29.8%, n 6250).
    let (v, n) = rc.computed(funnel("W6", AWARE, 1, "main_weight", VERSANT), "Considered", |r| {
        r.rows.base_filter = None;
    });
    assert_eq!((pct1(v), n), ("29.8%".to_string(), 6250));
    let s = rc.settle(funnel("W6", AWARE, n, "main_weight", VERSANT), json!({"Considered": pct1(v)}));
    let s = names_first(&s, Cause::NoBase);
    assert!(s.explanations[0].reproduces_base);
    // Every Versant respondent is 18-74, so "All adults 18-74" keeps the very same rows: one
    // computation, one explanation, which says so.
    assert!(s.explanations[0].message.contains(ALL), "{}", s.explanations[0].message);
    assert!(s.explanations.iter().all(|e| e.cause != Cause::OtherBase), "{:#?}", s.explanations);
}

#[test]
fn sibling_column() {
    let rc = Recite::new();
    // Corvana's row of the same question (s14r4) read instead of Versant's.
    let (v, n) = rc.computed(funnel("W6", AWARE, 1, "main_weight", "s14r4"), "Considered", |_| {});
    let s = rc.settle(funnel("W6", AWARE, n, "main_weight", VERSANT), json!({"Considered": pct1(v)}));
    let s = names_first(&s, Cause::SiblingColumn);
    assert!(s.explanations[0].reproduces_base);
    assert!(
        s.explanations[0].message.contains("s14r4 (Brand funnel: Corvana)"),
        "{}",
        s.explanations[0].message
    );
}

#[test]
fn other_measure() {
    let rc = Recite::new();
    // The Familiar share claimed as Considered, on the right rows.
    let (v, n) = rc.computed(funnel("W6", AWARE, 1, "main_weight", VERSANT), "Familiar", |_| {});
    assert_eq!(n, 4654);
    let s = rc.settle(funnel("W6", AWARE, n, "main_weight", VERSANT), json!({"Considered": pct1(v)}));
    let s = names_first(&s, Cause::OtherMeasure);
    assert!(s.explanations[0].message.contains("Familiar"), "{}", s.explanations[0].message);
}

#[test]
fn percent_fraction() {
    let rc = Recite::new();
    // A fraction written with a % sign: 0.4425 shown as "0.44%".
    let (v, n) = rc.computed(funnel("W6", AWARE, 1, "main_weight", VERSANT), "Considered", |_| {});
    let claimed = format!("{v:.2}%");
    assert_eq!(claimed, "0.44%");
    let s = rc.settle(funnel("W6", AWARE, n, "main_weight", VERSANT), json!({"Considered": claimed}));
    let s = names_first(&s, Cause::PercentFraction);
    assert!(s.explanations[0].message.contains("fraction"), "{}", s.explanations[0].message);
    // A percent without its % sign: Ostrel's purchase share over all adults is under 1%, and
    // "0.7" reads as the fraction 0.7.
    let ostrel = "s14r12";
    let (v, n) = rc.computed(funnel("W6", ALL, 1, "main_weight", ostrel), "Purchased", |_| {});
    let claimed = format!("{:.1}", v * 100.0);
    assert_eq!(claimed, "0.7");
    let s = rc.settle(funnel("W6", ALL, n, "main_weight", ostrel), json!({"Purchased": claimed}));
    let s = names_first(&s, Cause::PercentFraction);
    assert!(s.explanations[0].message.contains("dropped the % sign"), "{}", s.explanations[0].message);
}

#[test]
fn reproduced_claims_get_no_explanations_and_cost_no_scan() {
    let rc = Recite::new();
    let (v, n) = rc.computed(funnel("W6", AWARE, 1, "main_weight", VERSANT), "Considered", |_| {});
    assert_eq!(n, 4654);
    let right = (funnel("W6", AWARE, n, "main_weight", VERSANT), json!({"Considered": pct1(v)}));
    let (s, stats) = rc.settle_many(std::slice::from_ref(&right), true);
    assert_eq!(s[0].verdict, Verdict::Reproduced, "{:?}", s[0].reasons);
    assert!(s[0].explanations.is_empty());
    assert_eq!(stats.explanation_scans, 0);
    assert_eq!(stats.scans, 1);

    // With a wrong claim on the same table: one extra scan, and still nothing for the right one.
    let wrong = (funnel("W6", AWARE, 4595, "main_weight", VERSANT), json!({"Considered": "46.7%"}));
    let (s, stats) = rc.settle_many(&[right, wrong], true);
    assert_eq!(s[0].verdict, Verdict::Reproduced);
    assert!(s[0].explanations.is_empty());
    assert_eq!(s[1].explanations[0].cause, Cause::PreviousPeriod);
    assert_eq!((stats.scans, stats.explanation_scans), (1, 1));
}

#[test]
fn without_explain_nothing_is_explained_or_scanned() {
    let rc = Recite::new();
    let wrong = (funnel("W6", AWARE, 4595, "main_weight", VERSANT), json!({"Considered": "46.7%"}));
    let (s, stats) = rc.settle_many(&[wrong], false);
    assert_eq!(s[0].verdict, Verdict::Discrepant);
    assert!(s[0].explanations.is_empty());
    assert_eq!(stats.explanation_scans, 0);
}

fn verify_json(dir: &Path, pair: &Value, extra: &[&str]) -> Value {
    let file = dir.join("claim.json");
    std::fs::write(&file, serde_json::to_vec(pair).unwrap()).unwrap();
    let file = file.to_str().expect("UTF-8 temp path");
    let mut args = vec!["verify", file, "--format", "json"];
    args.extend_from_slice(extra);
    report(&recite(&args))
}

#[test]
fn the_binary_reports_explanations_and_their_scans_and_no_explain_turns_them_off() {
    let dir = tempfile::tempdir().unwrap();
    let wrong = json!({
        "citation": funnel("W6", AWARE, 4595, "main_weight", VERSANT),
        "result": {"Considered": "46.7%"}
    });
    let v = verify_json(dir.path(), &wrong, &[]);
    let c = &v["inputs"][0]["claims"][0];
    assert_eq!(c["verdict"], "DISCREPANT");
    assert_eq!(c["explanations"][0]["cause"], "previous_period");
    assert_eq!(c["explanations"][0]["reproduces_base"], true);
    assert_eq!(v["stats"]["explanation_scans"], 1);

    let v = verify_json(dir.path(), &wrong, &["--no-explain"]);
    let c = &v["inputs"][0]["claims"][0];
    assert_eq!(c["verdict"], "DISCREPANT");
    assert!(c.get("explanations").is_none(), "{c:#}");
    assert_eq!(v["stats"]["explanation_scans"], 0);

    let right = json!({
        "citation": funnel("W6", AWARE, 4654, "main_weight", VERSANT),
        "result": {"Considered": "44.2%"}
    });
    let v = verify_json(dir.path(), &right, &[]);
    let c = &v["inputs"][0]["claims"][0];
    assert_eq!(c["verdict"], "REPRODUCED");
    assert!(c.get("explanations").is_none(), "{c:#}");
    assert_eq!(v["stats"]["explanation_scans"], 0);
}

/// A Versant funnel citation, resolved.
fn resolved_of(rc: &Recite, citation: Value) -> Resolved {
    let c = citation::parse(&citation).unwrap();
    resolve::resolve(&c, &rc.catalog, &rc.registry, &rc.engine).unwrap()
}

/// The job of a Versant funnel citation, resolved, then changed by `tweak`.
fn job_of(rc: &Recite, citation: Value, tweak: impl FnOnce(&mut Resolved)) -> Job {
    let mut r = resolved_of(rc, citation);
    tweak(&mut r);
    Job { rows: r.rows.clone(), measures: r.measures.clone(), cells: Vec::new() }
}

/// Two outcomes of the same rows agree to the bit: the same counts, totals and second
/// moments. The grouped scan sums a job's rows per code as exact integers before they become
/// floats, so however other jobs' flags split its groups, the floats are the same.
fn same_sums(a: &recite::scan::Outcome, b: &recite::scan::Outcome, what: &str) {
    same_values(a, b, what);
    assert_eq!(a.sums.moments.len(), b.sums.moments.len(), "{what}");
    for (k, x) in &a.sums.moments {
        let y = b.sums.moments[k];
        assert_eq!(x.to_bits(), y.to_bits(), "{what}: moment {k:?} {x} vs {y}");
    }
}

/// [`same_sums`] but the second moments: what a variant's value and base n are made of.
fn same_values(a: &recite::scan::Outcome, b: &recite::scan::Outcome, what: &str) {
    assert_eq!(a.sums.n, b.sums.n, "{what}: n");
    assert_eq!(a.sums.counts, b.sums.counts, "{what}: counts");
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        bits(&a.sums.totals),
        bits(&b.sums.totals),
        "{what}: totals {:?} vs {:?}",
        a.sums.totals,
        b.sums.totals
    );
}

#[test]
fn the_settling_scan_takes_the_other_weights_and_bases_along_so_their_variants_need_no_scan() {
    use recite::scan::Scan;
    let rc = Recite::new();
    // The settling run cites one period, base and weight.
    let cited = funnel("W6", AWARE, 1, "main_weight", VERSANT);
    let first = [job_of(&rc, cited.clone(), |_| {})];
    let variants = [
        job_of(&rc, funnel("W6", AWARE, 1, "alt_weight", VERSANT), |_| {}),
        job_of(&rc, funnel("W6", ALL, 1, "main_weight", VERSANT), |_| {}),
        job_of(&rc, funnel("W6", "Women 18-74", 1, "main_weight", VERSANT), |_| {}),
        job_of(&rc, funnel("W6", "Purchasers of brand", 1, "main_weight", VERSANT), |_| {}),
    ];
    let names = ["alt_weight", "all adults", "women", "purchasers"];
    // Taken along: the table's other weight, the study's four other bases.
    let ahead = recite::settle::explain::anticipated(&resolved_of(&rc, cited), &rc.catalog);
    let weights: Vec<_> = ahead.iter().filter_map(|j| j.rows.weight.as_deref()).collect();
    assert_eq!(ahead.len(), 5, "{weights:?}");
    assert!(ahead.iter().all(|j| j.rows.period_filter.is_none() && j.rows.column == VERSANT));
    // Without them, the variants on another weight or a base with a row condition of its own
    // (women) need a scan; with them, none does.
    let (plain, _, kept) = Scan::run_keeping(&rc.engine, &first, &[]);
    let (_, stats) = Scan::run_again(&rc.engine, &variants, kept.as_ref(), Reading::Values);
    assert_eq!(stats.scans, 1);
    let (taken, stats, kept) = Scan::run_keeping(&rc.engine, &first, &ahead);
    assert_eq!((stats.scans, taken.len()), (1, 1), "nothing is returned for what was taken along");
    // What was asked for is the same, to the bit.
    same_sums(plain[0].as_ref().unwrap(), taken[0].as_ref().unwrap(), "the cited job");
    let (served, stats) = Scan::run_again(&rc.engine, &variants, kept.as_ref(), Reading::Values);
    assert_eq!(stats.scans, 0, "every variant was taken along: {stats:?}");
    let (scanned, _) = Engine::new().run(&variants);
    for ((a, b), what) in served.iter().zip(&scanned).zip(names) {
        let (a, b) = (a.as_ref().unwrap(), b.as_ref().unwrap());
        if what == "alt_weight" {
            // A weight only taken along is summed without its squares: values and base n only.
            same_values(a, b, what);
            assert!(a.sums.moments.is_empty() && !b.sums.moments.is_empty(), "{what}: no moments");
        } else {
            same_sums(a, b, what);
        }
    }
    // Read for its estimates, the variant on that weight is scanned, moments and all.
    let (served, stats) = Scan::run_again(&rc.engine, &variants, kept.as_ref(), Reading::Estimates);
    assert_eq!(stats.scans, 1, "{stats:?}");
    for ((a, b), what) in served.iter().zip(&scanned).zip(names) {
        same_sums(a.as_ref().unwrap(), b.as_ref().unwrap(), what);
    }
}

#[test]
fn what_is_taken_along_never_fails_the_jobs_asked_for() {
    use recite::scan::Scan;
    let rc = Recite::new();
    let first = [job_of(&rc, funnel("W6", AWARE, 1, "main_weight", VERSANT), |_| {})];
    let (plain, _, _) = Scan::run_keeping(&rc.engine, &first, &[]);
    // A weight that is not a column, a base that does not parse, one that fails on the data,
    // one on a period no job cited, and one on a column no job cited.
    let odd = [
        job_of(&rc, funnel("W6", AWARE, 1, "main_weight", VERSANT), |r| {
            r.rows.weight = Some("no_such".into())
        }),
        job_of(&rc, funnel("W6", AWARE, 1, "main_weight", VERSANT), |r| {
            r.rows.base_filter = Some("age >".into())
        }),
        job_of(&rc, funnel("W6", AWARE, 1, "main_weight", VERSANT), |r| {
            r.rows.base_filter = Some("CAST('x' AS INT) = age".into())
        }),
        job_of(&rc, funnel("W4", ALL, 1, "alt_weight", VERSANT), |_| {}),
        job_of(&rc, funnel("W6", ALL, 1, "alt_weight", "s14r4"), |_| {}),
    ];
    let (taken, stats, _) = Scan::run_keeping(&rc.engine, &first, &odd);
    assert_eq!(taken.len(), 1);
    same_sums(plain[0].as_ref().unwrap(), taken[0].as_ref().unwrap(), "the cited job");
    assert_eq!(stats.rows_scanned, Scan::run(&rc.engine, &first).1.rows_scanned, "no other period's rows");
}

#[test]
fn variants_a_flag_away_are_summed_from_the_settling_scans_groups_without_a_scan() {
    use recite::scan::Scan;
    let rc = Recite::new();
    // The settling run cites W5 and W6, both bases, both weights.
    let first = [
        job_of(&rc, funnel("W6", AWARE, 1, "main_weight", VERSANT), |_| {}),
        job_of(&rc, funnel("W5", ALL, 1, "alt_weight", VERSANT), |_| {}),
    ];
    let (outs, stats, kept) = Scan::run_keeping(&rc.engine, &first, &[]);
    assert!(outs.iter().all(Result::is_ok));
    assert_eq!(stats.scans, 1);
    assert!(kept.is_some(), "the grouped scan keeps its groups");
    // Variants a flag away: another period, base or weight among those cited, no weight, no
    // base filter.
    let near = [
        job_of(&rc, funnel("W5", AWARE, 1, "alt_weight", VERSANT), |_| {}),
        job_of(&rc, funnel("W6", ALL, 1, "main_weight", VERSANT), |r| r.rows.weight = None),
        job_of(&rc, funnel("W6", AWARE, 1, "main_weight", VERSANT), |r| r.rows.base_filter = None),
    ];
    let (served, stats) = Scan::run_again(&rc.engine, &near, kept.as_ref(), Reading::Estimates);
    assert_eq!(stats.scans, 0, "every variant was a flag away: {stats:?}");
    let (scanned, _) = Engine::new().run(&near);
    for ((a, b), what) in served.iter().zip(&scanned).zip(["W5 aware alt", "W6 all unweighted", "W6 no base"])
    {
        same_sums(a.as_ref().unwrap(), b.as_ref().unwrap(), what);
    }
    // A period no job cited is not among the flags (nor its rows, which the first scan did not
    // read): that job is scanned, the others still come from the groups.
    let far = [near[0].clone(), job_of(&rc, funnel("W4", AWARE, 1, "main_weight", VERSANT), |_| {})];
    let (served, stats) = Scan::run_again(&rc.engine, &far, kept.as_ref(), Reading::Estimates);
    assert_eq!(stats.scans, 1);
    let (scanned, _) = Engine::new().run(&far);
    for ((a, b), what) in served.iter().zip(&scanned).zip(["W5 aware alt", "W4 scanned"]) {
        same_sums(a.as_ref().unwrap(), b.as_ref().unwrap(), what);
    }
    // Nothing kept: everything is scanned.
    let (_, stats) = Scan::run_again(&rc.engine, &near, None, Reading::Estimates);
    assert_eq!(stats.scans, 1);
}

/// The explaining run keys each variant by what it changes ([`explain::Planned::key`]) and
/// builds each distinct one's job once: equal keys must be equal jobs, and the job built from
/// a plan must be the one the variant's resolution makes (what the what-if alternatives run).
/// Checked over the bundled tracker's periods, bases, weights and brand columns, with the
/// jobs' own canonical keys ([`Job::key`]) as the judge.
#[test]
fn a_variants_key_decides_its_job() {
    use recite::settle::explain;
    use std::collections::HashMap;
    let rc = Recite::new();
    let expansions = explain::Expansions::default();
    let mut owns: HashMap<recite::scan::key::Canonical, u64> = HashMap::new();
    let mut seen: HashMap<recite::scan::key::Canonical, recite::scan::JobKey> = HashMap::new();
    let (mut variants, mut shared, mut named) = (0, 0, 0);
    for period in ["W1", "W5", "W8"] {
        for base in [AWARE, ALL, "Women 18-74"] {
            for weight in ["main_weight", "alt_weight"] {
                for column in [VERSANT, "s14r1", "s14r12"] {
                    let r = resolved_of(&rc, funnel(period, base, 1, weight, column));
                    let own = explain::Own::of(&r, &rc.catalog, &rc.registry, &expansions, |c| {
                        let next = owns.len() as u64;
                        *owns.entry(c).or_insert(next)
                    });
                    named += usize::from(own.named);
                    let plans = explain::plans(&r, &rc.catalog, &rc.registry, &expansions);
                    let built = explain::variants(0, &r, &rc.catalog, &rc.registry, &expansions);
                    assert_eq!(plans.len(), built.len());
                    for (p, v) in plans.iter().zip(&built) {
                        let job = p.job(&r).key();
                        assert_eq!(job, v.job().key(), "{:?} {}", p.cause, v.what);
                        assert_eq!(p.what(), v.what);
                        variants += 1;
                        if let Some(before) = seen.insert(p.key(&r, &own, &r.function), job.clone()) {
                            shared += 1;
                            assert_eq!(before, job, "two jobs under one key: {:?} {}", p.cause, v.what);
                        }
                    }
                }
            }
        }
    }
    // The bundled catalog's columns are what their names give (so a claim's own column and
    // another claim's sibling share keys), and the variants of these 54 claims coincide a
    // great deal: that is what keying them saves.
    assert_eq!(named, 54);
    assert!(variants > 54 * 10 && shared > variants / 3, "{variants} variants, {shared} shared");
}
