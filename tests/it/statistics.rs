//! The statistics against independent figures: samplics' published results on the NHANES II
//! extract, and small cases computed by hand (the arithmetic is in the comments).

use std::path::Path;

use recite::catalog::Catalog;
use recite::engine::Engine;
use recite::extractor::Registry;
use recite::settle::pipeline::{self, Claim, Options};
use recite::settle::{Settlement, Verdict};
use recite::stats::Interval;
use serde_json::{Value, json};

fn settle_in(data: &Path, citation: Value, interval: Interval) -> Settlement {
    let catalog = Catalog::load(data).unwrap();
    let registry = Registry::load(None).unwrap();
    let engine = Engine::new();
    let (mut s, _) = pipeline::settle_all(
        &[Claim { citation, numbers: vec![] }],
        &catalog,
        &registry,
        &engine,
        Options { interval, explain: false },
    );
    s.remove(0)
}

fn bundled() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets")
}

fn nhanes(column: &str, function: &str, n: u64) -> Value {
    json!({
        "study": "NHANES II", "period": "1976-1980",
        "base": {"name": "All examined persons", "n": n},
        "weight": "finalwgt",
        "source": {"table": "nhanes2", "column": column, "function": function}
    })
}

/// Asserts `got` equals a figure published to `digits` decimals.
fn published(got: f64, figure: f64, digits: i32, what: &str) {
    let tol = 0.5 * 10f64.powi(-digits);
    assert!((got - figure).abs() <= tol, "{what}: got {got}, samplics publishes {figure}");
}

#[test]
fn nhanes2_mean_zinc_matches_samplics() {
    let s = settle_in(&bundled(), nhanes("zinc", "extractMean", 9189), Interval::Logit);
    assert_eq!(s.verdict, Verdict::Reproduced, "{:?}", s.reasons);
    assert_eq!(s.base.as_ref().unwrap().facts.n, 9189);
    let e = s.measures[0].estimate.unwrap();
    published(e.value, 87.182067, 6, "mean");
    published(e.se, 0.494483, 6, "SE");
    assert_eq!(e.df, 31.0);
    published(e.ci_low, 86.173563, 6, "CI low");
    published(e.ci_high, 88.190571, 6, "CI high");
}

#[test]
fn nhanes2_share_with_diabetes_matches_samplics() {
    let s = settle_in(&bundled(), nhanes("diabetes", "extractShare", 10335), Interval::Logit);
    assert_eq!(s.verdict, Verdict::Reproduced, "{:?}", s.reasons);
    assert_eq!(s.base.as_ref().unwrap().facts.n, 10335);
    let e = s.measures[0].estimate.unwrap();
    published(e.value, 0.034285, 6, "share");
    published(e.se, 0.001820, 6, "SE");
    published(e.ci_low, 0.030762, 6, "logit CI low");
    published(e.ci_high, 0.038197, 6, "logit CI high");
}

/// A tiny study in a temporary folder: one CSV table `t` with columns x and w.
fn tiny(rows: &[(f64, f64)], values: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("tiny");
    std::fs::create_dir(&study).unwrap();
    let mut csv = String::from("x,w\n");
    for (x, w) in rows {
        csv.push_str(&format!("{x},{w}\n"));
    }
    std::fs::write(study.join("t.csv"), csv).unwrap();
    std::fs::write(
        study.join("study.toml"),
        format!(
            r#"[study]
name = "Tiny"
[[tables]]
name = "t"
path = "t.csv"
weights = ["w"]
[tables.columns.x]
values = {values}
[[periods]]
name = "all"
filter = "TRUE"
[[bases]]
name = "everyone"
filter = "TRUE"
"#
        ),
    )
    .unwrap();
    dir
}

fn tiny_citation(function: &str, n: u64) -> Value {
    json!({"study": "Tiny", "period": "all", "base": {"name": "everyone", "n": n}, "weight": "w",
           "source": {"table": "t", "column": "x", "function": function}})
}

#[test]
fn funnel_conversion_se_is_the_linearised_ratio_se() {
    // x = 0 1 2 3 1 2 3 0, w = 1 2 1 1 2 1 3 1. Aware → Familiar = Σw[x≥2] / Σw[x≥1] = 6/10.
    // u = w(1[x≥2] − 0.6·1[x≥1]) / 10 = 0, −.12, .04, .04, −.12, .04, .12, 0; Σu = 0, Σu² = 0.048.
    // V = n/(n−1)·Σu² = 8/7·0.048; SE = 0.2342160175.
    let d = tiny(
        &[(0., 1.), (1., 2.), (2., 1.), (3., 1.), (1., 2.), (2., 1.), (3., 3.), (0., 1.)],
        r#"{ "0" = "Not aware", "1" = "Aware", "2" = "Familiar", "3" = "Considered" }"#,
    );
    let s = settle_in(d.path(), tiny_citation("extractFunnel", 8), Interval::Logit);
    let conv = s.measures.iter().find(|m| m.name == "Aware → Familiar").unwrap().estimate.unwrap();
    assert!((conv.value - 0.6).abs() < 1e-12);
    assert!((conv.se - 0.2342160175).abs() < 1e-9, "{}", conv.se);
    // And a share on the same data: Aware = 10/12, u = w(1[x≥1] − 5/6)/12.
    let aware = s.measures.iter().find(|m| m.name == "Aware").unwrap().estimate.unwrap();
    assert!((aware.value - 10.0 / 12.0).abs() < 1e-12);
    // u for x=0 (w=1): −(5/6)/12 twice; x≥1: w(1/6)/12 for w = 2,1,1,2,1,3.
    let u: Vec<f64> =
        [-5.0 / 6.0, 2.0 / 6.0, 1.0 / 6.0, 1.0 / 6.0, 2.0 / 6.0, 1.0 / 6.0, 3.0 / 6.0, -5.0 / 6.0]
            .iter()
            .map(|v| v / 12.0)
            .collect();
    let v = 8.0 / 7.0 * u.iter().map(|x| x * x).sum::<f64>();
    assert!((aware.se - v.sqrt()).abs() < 1e-12);
}

#[test]
fn nps_difference_se_is_linearised() {
    // x = 10 9 8 7 6 3 10 0, w = 2 1 1 1 1 1 2 1 (Σw = 10). Promoters 5/10, detractors 3/10, NPS 20.
    // u = 100·w((1[x≥9] − 1[x≤6]) − 0.2)/10 = 16, 8, −2, −2, −12, −12, 16, −12; Σu = 0, Σu² = 1016.
    // V = 8/7·1016; SE = 34.07554632.
    let d = tiny(
        &[(10., 2.), (9., 1.), (8., 1.), (7., 1.), (6., 1.), (3., 1.), (10., 2.), (0., 1.)],
        r#"{ "0" = "Not at all likely", "10" = "Extremely likely" }"#,
    );
    let s = settle_in(d.path(), tiny_citation("extractNPS", 8), Interval::Logit);
    let nps = s.measures.iter().find(|m| m.name == "NPS").unwrap().estimate.unwrap();
    assert!((nps.value - 20.0).abs() < 1e-9);
    assert!((nps.se - 34.07554632).abs() < 1e-7, "{}", nps.se);
    let promoters = s.measures.iter().find(|m| m.name == "promoters").unwrap().estimate.unwrap();
    assert!((promoters.value - 0.5).abs() < 1e-12);
}

#[test]
fn effective_base_is_kish() {
    // Σw = 10, Σw² = 4+1+1+1+1+1+4+1 = 14: effective base 100/14.
    let d = tiny(
        &[(10., 2.), (9., 1.), (8., 1.), (7., 1.), (6., 1.), (3., 1.), (10., 2.), (0., 1.)],
        r#"{ "0" = "Not at all likely", "10" = "Extremely likely" }"#,
    );
    let s = settle_in(d.path(), tiny_citation("extractMean", 8), Interval::Logit);
    let b = s.base.unwrap().facts;
    assert_eq!(b.n, 8);
    assert!((b.weighted - 10.0).abs() < 1e-12);
    assert!((b.effective - 100.0 / 14.0).abs() < 1e-12);
    // Weighted mean: (20+9+8+7+6+3+20+0)/10 = 7.3.
    assert!((s.measures[0].estimate.unwrap().value - 7.3).abs() < 1e-12);
}

#[test]
fn korn_graubard_interval_matches_an_independent_computation() {
    // R's svyciprop(method = "beta") on the samplics share (p = 0.0342852567903, SE =
    // 0.00181972637299, n = 10,335, df = 31): n_eff = p(1−p)/SE² · (t(n−1)/t(df))² = 9236.105,
    // x = p·n_eff, CI = [Beta⁻¹(0.025; x, n_eff−x+1), Beta⁻¹(0.975; x+1, n_eff−x)], evaluated
    // with SciPy's beta and t quantiles: [0.030667715, 0.038200237].
    let s = settle_in(&bundled(), nhanes("diabetes", "extractShare", 10335), Interval::KornGraubard);
    let e = s.measures[0].estimate.unwrap();
    published(e.ci_low, 0.030667715, 9, "Korn-Graubard low");
    published(e.ci_high, 0.038200237, 9, "Korn-Graubard high");
}
