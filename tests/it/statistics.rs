//! The statistics against independent figures: samplics' published results on the NHANES II
//! extract, small cases computed by hand (the arithmetic is in the comments), and R's survey
//! package itself over a matrix of cases (`r_survey_package_agrees_on_every_measure`).

use std::collections::HashMap;
use std::path::Path;

use recite::catalog::Catalog;
use recite::claim::{self, Claimed};
use recite::engine::Engine;
use recite::extractor::Registry;
use recite::report::text::{self, Style};
use recite::settle::pipeline::{self, Claim, Options};
use recite::settle::{Settlement, Verdict};
use recite::stats::{self, DfRule, Interval, Sample};
use serde_json::{Value, json};

fn settle_in(data: &Path, citation: Value, interval: Interval) -> Settlement {
    settle_with(data, citation, vec![], Options { interval, explain: false, ..Options::default() })
}

fn settle_with(data: &Path, citation: Value, numbers: Vec<Claimed>, opts: Options) -> Settlement {
    let catalog = Catalog::load(data).unwrap();
    let registry = Registry::load(None).unwrap();
    let engine = Engine::new();
    let (mut s, _) = pipeline::settle_all(&[Claim { citation, numbers }], &catalog, &registry, &engine, opts);
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
    assert!((got - figure).abs() <= tol, "{what}: got {got}, published {figure}");
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

/// R survey's vignette "A survey analysis example" (doc/survey.pdf of the package) prints, for
/// the one-stage cluster sample of 15 of 757 districts `dclus1` (apiclus1, with its finite
/// population correction): `svymean(~api00, dclus1)` 644.17, SE 23.542; and
/// `svyby(~meals, ~stype, dclus1, svymean)` E 53.09028 (SE 7.070399), H 37.57143 (5.912262),
/// M 43.08000 (6.017110). recite samples PSUs with replacement; in one stage the correction
/// multiplies the variance by exactly 1 − 15/757.
#[test]
fn api_cluster_sample_matches_the_figures_printed_in_the_survey_vignette() {
    let api = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/api");
    let fpc = (1.0 - 15.0 / 757.0f64).sqrt();
    for (base, column, value, se, digits) in [
        ("All schools", "api00", 644.17, 23.542, (2, 3)),
        ("Elementary schools", "meals", 53.09028, 7.070399, (5, 6)),
        ("High schools", "meals", 37.57143, 5.912262, (5, 6)),
        ("Middle schools", "meals", 43.08, 6.017110, (5, 6)),
    ] {
        let cit = json!({
            "study": "California API", "period": "1999-2000", "base": {"name": base, "n": 1},
            "weight": "pw", "source": {"table": "apiclus1", "column": column, "function": "extractMean"}
        });
        let s = settle_in(&api, cit, Interval::Logit);
        let e = s.measures[0].estimate.unwrap_or_else(|| panic!("{base}: no estimate: {:?}", s.reasons));
        published(e.value, value, digits.0, &format!("{base}: mean {column}"));
        published(e.se * fpc, se, digits.1, &format!("{base}: SE of mean {column}, with the fpc"));
        // One stratum: df = the districts holding the domain's schools − 1.
        assert_eq!(e.sample, Sample::DesignDomain);
    }
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

/// The bundled NHANES II catalog in a temporary folder, with bases that are domains missing
/// some PSUs (Black respondents, "Other" race, the West).
fn nhanes_with_domains() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    nhanes_with_domains_in(dir.path());
    dir
}

/// The bundled NHANES II study in `root/nhanes2`, with three more bases (domains).
fn nhanes_with_domains_in(root: &Path) {
    let study = root.join("nhanes2");
    std::fs::create_dir(&study).unwrap();
    let from = bundled().join("nhanes2");
    std::fs::copy(from.join("nhanes2.csv"), study.join("nhanes2.csv")).unwrap();
    let mut toml = std::fs::read_to_string(from.join("study.toml")).unwrap();
    for (name, filter) in [("Black", "race = 2"), ("Other race", "race = 3"), ("West", "region = 4")] {
        toml.push_str(&format!("\n[[bases]]\nname = \"{name}\"\nfilter = \"{filter}\"\n"));
    }
    std::fs::write(study.join("study.toml"), toml).unwrap();
}

fn nhanes_on(base: &str, column: &str, function: &str) -> Value {
    json!({
        "study": "NHANES II", "period": "1976-1980", "base": {"name": base, "n": 1},
        "weight": "finalwgt",
        "source": {"table": "nhanes2", "column": column, "function": function}
    })
}

#[test]
fn domain_degrees_of_freedom_count_only_the_psus_holding_the_base() {
    // R: degf(subset(design, race == 2 & !is.na(zinc))) = 24, race == 3 (diabetes) 12,
    // region == 4 (highbp) 8; the whole design 31.
    let d = nhanes_with_domains();
    for (base, column, function, df) in [
        ("Black", "zinc", "extractMean", 24.0),
        ("Other race", "diabetes", "extractShare", 12.0),
        ("West", "highbp", "extractShare", 8.0),
        ("All examined persons", "zinc", "extractMean", 31.0),
    ] {
        let domain = Options { explain: false, ..Options::default() };
        let s = settle_with(d.path(), nhanes_on(base, column, function), vec![], domain);
        let e = s.measures[0].estimate.unwrap();
        assert_eq!((e.df, e.sample), (df, Sample::DesignDomain), "{base} {column}");
        let full = Options { df: DfRule::FullDesign, ..domain };
        let f = settle_with(d.path(), nhanes_on(base, column, function), vec![], full);
        let ef = f.measures[0].estimate.unwrap();
        assert_eq!((ef.df, ef.sample), (31.0, Sample::FullDesign), "{base} {column}");
        assert_eq!((ef.value, ef.se), (e.value, e.se), "the df rule changes only the interval");
    }
    // Zinc among Black respondents, as R prints confint(svymean(~zinc, sub), df = degf(sub)).
    let s = settle_with(
        d.path(),
        nhanes_on("Black", "zinc", "extractMean"),
        vec![],
        Options { explain: false, ..Options::default() },
    );
    let e = s.measures[0].estimate.unwrap();
    assert!((e.ci_low - 82.6808717862).abs() < 1e-8 && (e.ci_high - 87.4906168756).abs() < 1e-8, "{e:?}");
}

#[test]
fn weights_only_estimates_take_the_base_rows_as_the_whole_sample() {
    let d = tiny(&[(0., 1.), (1., 2.), (2., 1.), (3., 1.), (1., 2.)], r#"{ "0" = "No", "1" = "Yes" }"#);
    let s = settle_in(d.path(), tiny_citation("extractMean", 5), Interval::Logit);
    let e = s.measures[0].estimate.unwrap();
    assert_eq!((e.sample, e.df), (Sample::BaseRows, 4.0));
    let shown = text::settlement(&s, Style { color: false });
    assert!(shown.contains("sample   the base rows are the whole sample"), "{shown}");
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["measures"][0]["estimate"]["sample"], "base-rows");
}

#[test]
fn base_n_claimed_in_the_result_is_the_n_shown_and_explained() {
    // The citation says 5 (right); the result says "n": 4, which the alt weight gives (its
    // weight is 0 on one row). The report's base row must show 4, and the explanation look for 4.
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("tiny");
    std::fs::create_dir(&study).unwrap();
    std::fs::write(study.join("t.csv"), "x,w,alt\n1,1,1\n2,2,2\n3,1,0\n4,1,1\n5,2,1\n").unwrap();
    std::fs::write(
        study.join("study.toml"),
        "[study]\nname = \"Tiny\"\n[[tables]]\nname = \"t\"\npath = \"t.csv\"\nweights = [\"w\", \"alt\"]\n\
         [[periods]]\nname = \"all\"\nfilter = \"TRUE\"\n[[bases]]\nname = \"everyone\"\nfilter = \"TRUE\"\n",
    )
    .unwrap();
    let numbers = claim::leaves(&json!({"n": 4}));
    let s = settle_with(dir.path(), tiny_citation("extractMean", 5), numbers, Options::default());
    assert_eq!(s.verdict, Verdict::BaseMismatch, "{:?}", s.reasons);
    let base = s.base.as_ref().unwrap();
    assert_eq!((base.claimed_n, base.facts.n), (4, 5));
    let shown = text::settlement(&s, Style { color: false });
    let row = shown.lines().find(|l| l.trim_start().starts_with("base n")).unwrap();
    assert!(row.split_whitespace().take(4).collect::<Vec<_>>() == ["base", "n", "4", "5"], "{row}");
    assert!(!s.explanations.is_empty(), "the alt weight gives n = 4: {:?}", s.reasons);
    assert!(
        s.explanations.iter().all(|e| e.message.contains("base n 4") && e.message.contains("alt")),
        "{:?}",
        s.explanations
    );
}

#[test]
fn a_reason_shows_enough_digits_to_see_the_recomputed_value() {
    // A share of 78/10000 = 0.0078 claimed as the fraction "0.8" (0.8%, read as 80%): the reason
    // must say 0.0078, not 0.01 (the claim's one decimal plus one).
    let d = tiny(&[(1., 78.), (0., 9922.)], r#"{ "0" = "No", "1" = "Yes" }"#);
    let cit = json!({"study": "Tiny", "period": "all", "base": {"name": "everyone", "n": 2}, "weight": "w",
                     "source": {"table": "t", "column": "x", "function": "extractTopBox"}});
    let numbers = claim::leaves(&json!({"share": "0.8"}));
    let s = settle_with(d.path(), cit, numbers, Options { explain: false, ..Options::default() });
    assert_eq!(s.verdict, Verdict::Discrepant, "{:?}", s.reasons);
    assert!(s.reasons.iter().any(|r| r.contains("recomputed 0.0078 ")), "{:?}", s.reasons);
}

// ---------------------------------------------------------------------------------------------
// R's survey package as the oracle (tests/r/oracle.R).

/// Whether `Rscript` with the `survey` package is here. Without it `test` is skipped loudly
/// (past the harness's capture: [`crate::support::say_skipped`]), unless RECITE_REQUIRE_R=1
/// (CI sets it after installing R), when it fails.
pub(crate) fn r_with_survey(test: &str) -> bool {
    let ok = std::process::Command::new("Rscript")
        .args(["-e", "quit(status = !requireNamespace('survey', quietly = TRUE))"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("RECITE_REQUIRE_R").as_deref() != Ok("1"),
            "RECITE_REQUIRE_R=1 but Rscript with the survey package is not available"
        );
        crate::support::say_skipped(
            test,
            "the R oracle needs Rscript and R's survey package (apt-get install r-base-core \
             r-cran-survey); recite's statistics were NOT checked against R",
        );
    }
    ok
}

/// The bundled Versant catalog in a temporary folder, with one more base (a small domain), and
/// its Parquet table written out as CSV for R: Debian's R has no Parquet reader (the `arrow`
/// package is not packaged), and the test already links the Parquet reader recite uses, so the
/// export needs nothing from the network.
pub(crate) fn versant_for_r(dir: &Path) -> std::path::PathBuf {
    use datafusion::arrow::array::{Array, AsArray};
    use datafusion::arrow::compute::cast;
    use datafusion::arrow::datatypes::{DataType, Float64Type};
    use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use std::fmt::Write as _;

    let from = bundled().join("versant");
    let study = dir.join("versant");
    std::fs::create_dir_all(&study).unwrap();
    std::fs::copy(from.join("versant_flat.parquet"), study.join("versant_flat.parquet")).unwrap();
    let mut toml = std::fs::read_to_string(from.join("study.toml")).unwrap();
    toml.push_str(
        "\n[[bases]]\nname = \"Women 18-74 in the West\"\nfilter = \"age BETWEEN 18 AND 74 AND gender = 2 AND region = 4\"\n",
    );
    std::fs::write(study.join("study.toml"), toml).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(from.join("versant_flat.parquet")).unwrap(),
    )
    .unwrap()
    .build()
    .unwrap();
    let mut csv = String::new();
    for (i, batch) in reader.enumerate() {
        let batch = batch.unwrap();
        let schema = batch.schema();
        // Numeric columns only (every column R needs is numeric).
        let columns: Vec<(String, datafusion::arrow::array::Float64Array)> = schema
            .fields()
            .iter()
            .zip(batch.columns())
            .filter(|(f, _)| f.data_type().is_numeric())
            .map(|(f, c)| {
                (f.name().clone(), cast(c, &DataType::Float64).unwrap().as_primitive::<Float64Type>().clone())
            })
            .collect();
        if i == 0 {
            let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
            csv.push_str(&names.join(","));
            csv.push('\n');
        }
        for r in 0..batch.num_rows() {
            for (k, (_, c)) in columns.iter().enumerate() {
                if k > 0 {
                    csv.push(',');
                }
                // Rust writes the shortest decimal that reads back as the same f64.
                if c.is_null(r) { csv.push_str("NA") } else { write!(csv, "{}", c.value(r)).unwrap() }
            }
            csv.push('\n');
        }
    }
    let path = dir.join("versant_flat.csv");
    std::fs::write(&path, csv).unwrap();
    path
}

/// One measure as the oracle's CASES.tsv spells it: kind, predicates a and b, scale.
fn measure_for_r(
    measures: &[recite::extractor::Measure],
    i: usize,
) -> Option<(&'static str, String, String, f64)> {
    use recite::extractor::Kind;
    let share_pred = |k: usize| match &measures[k].kind {
        Kind::Share(p) => Some(p.to_string()),
        _ => None,
    };
    match &measures[i].kind {
        Kind::Share(p) => Some(("share", p.to_string(), String::new(), 1.0)),
        Kind::Mean => Some(("mean", String::new(), String::new(), 1.0)),
        Kind::Ratio(a, b) => Some(("ratio", a.to_string(), b.to_string(), 1.0)),
        Kind::Difference { a, b, scale } => Some(("difference", share_pred(*a)?, share_pred(*b)?, *scale)),
        Kind::Count | Kind::Total => None,
    }
}

#[test]
fn r_survey_package_agrees_on_every_measure() {
    if !r_with_survey("statistics::r_survey_package_agrees_on_every_measure") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    oracle_layer(dir.path());
    let figures = oracle_figures(dir.path(), dir.path());
    agrees_with_r(dir.path(), &figures);
}

/// The R oracle over PostgreSQL (issue 48): the same matrix with the NHANES II and Versant
/// tables read from a server, whose DSN is in `RECITE_TEST_PG_DSN` (tables `nhanes2` and
/// `versant_flat`, as tests/postgres/cluster.sh loads them). recite's figures over the server
/// must equal its figures over the files bit for bit, and agree with R's as those do. Run by
/// `postgres::the_r_checked_statistics_hold_over_postgres` in a process of its own, which
/// starts the server and gives the DSN in the environment (this process's environment is not
/// changed under its running tests).
#[test]
#[ignore = "run by postgres::the_r_checked_statistics_hold_over_postgres, which starts the server"]
fn r_survey_package_agrees_over_postgres_server() {
    const DSN_ENV: &str = "RECITE_TEST_PG_DSN";
    assert!(std::env::var_os(DSN_ENV).is_some(), "{DSN_ENV} names no server");
    if !r_with_survey("statistics::r_survey_package_agrees_over_postgres_server") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("files");
    let server = dir.path().join("server");
    oracle_layer(&files);
    for (study, file, table) in
        [("nhanes2", "nhanes2.csv", "nhanes2"), ("versant", "versant_flat.parquet", "versant_flat")]
    {
        let toml = std::fs::read_to_string(files.join(study).join("study.toml")).unwrap();
        let from = format!("path = \"{file}\"");
        assert!(toml.contains(&from), "{study}: no {from}");
        let toml = toml.replacen(&from, &format!("connection = \"surveys\"\npath = \"{table}\""), 1)
            + &format!("\n[connections.surveys]\ndsn_env = \"{DSN_ENV}\"\n");
        std::fs::create_dir_all(server.join(study)).unwrap();
        std::fs::write(server.join(study).join("study.toml"), toml).unwrap();
    }
    let on_files = oracle_figures(&files, &files);
    let on_server = oracle_figures(&server, &files);
    assert!(on_server.cases.contains("versant_flat") && on_server.cases.contains("nhanes2"));
    assert_eq!(on_server.cases, on_files.cases, "the same cases over the server");
    let mut same = 0;
    for (key, got) in &on_server.ours {
        let want = &on_files.ours[key];
        // Debug writes every f64 in the shortest form that reads back to its bits.
        assert_eq!(format!("{got:?}"), format!("{want:?}"), "over PostgreSQL as over the files");
        same += 1;
    }
    assert_eq!(same, on_files.ours.len());
    eprintln!("R oracle over PostgreSQL: {same} measures equal to the files' bit for bit");
    agrees_with_r(&server, &on_server);
}

/// The oracle's studies in `root`: NHANES II with its domains and one more ("Other" race in
/// the West, a domain in a handful of PSUs), the Versant tracker with one more base and its
/// table as CSV for R (`root/versant_flat.csv`).
fn oracle_layer(root: &Path) {
    std::fs::create_dir_all(root).unwrap();
    nhanes_with_domains_in(root);
    let toml = root.join("nhanes2/study.toml");
    let mut text = std::fs::read_to_string(&toml).unwrap();
    text.push_str("\n[[bases]]\nname = \"Other race in the West\"\nfilter = \"race = 3 AND region = 4\"\n");
    std::fs::write(&toml, text).unwrap();
    versant_for_r(root);
}

/// recite's figures for each (case, measure) of the oracle's matrix: what it is, the kind,
/// the logit, Korn-Graubard, Wilson and full-design estimates, the base facts and the number
/// of replicate weights.
type Ours = (
    String,
    &'static str,
    stats::Estimate,
    stats::Estimate,
    stats::Estimate,
    stats::Estimate,
    stats::BaseFacts,
    usize,
);

/// The oracle's matrix settled by recite over the studies in `root` (with the replicate
/// tables of tests/fixtures/api): the cases as R's CASES.tsv spells them (R reads the files
/// of `files`, an [`oracle_layer`], whatever `root` reads), and recite's figures.
struct Figures {
    cases: String,
    ours: HashMap<(usize, usize), Ours>,
}

fn oracle_figures(root: &Path, files: &Path) -> Figures {
    use recite::engine::Job;
    use recite::stats::Method;
    let registry = Registry::load(None).unwrap();
    let engine = Engine::new();

    // The matrix: every extractor × cited column × base, the weight and period rotating so every
    // weight (and no weight) and several periods meet every extractor without a full product.
    struct Study<'a> {
        root: &'a Path,
        name: &'a str,
        table: &'a str,
        columns: &'a [&'a str],
        periods: &'a [&'a str],
        bases: &'a [&'a str],
        weights: &'a [&'a str],
    }
    let studies = [
        Study {
            root,
            name: "NHANES II",
            table: "nhanes2",
            columns: &["zinc", "diabetes", "highbp", "highlead", "race", "region"],
            periods: &["1976-1980"],
            bases: &[
                "All examined persons",
                "White",
                "Black",
                "Other race",
                "West",
                "Other race in the West",
            ],
            weights: &["finalwgt", "unweighted"],
        },
        Study {
            root,
            name: "Versant Mega Tracker",
            table: "versant_flat",
            columns: &["s14r1", "q20r2", "q30r3"],
            periods: &["W1", "W4", "W8"],
            bases: &[
                "All adults 18-74",
                "Adults 18-74, aware of brand",
                "Adults 18-74, familiar with brand",
                "Purchasers of brand",
                "Women 18-74",
                "Women 18-74 in the West",
            ],
            weights: &["main_weight", "alt_weight", "unweighted"],
        },
    ];
    // R survey's own example data (tests/r/api.R writes it): a stratified sample with one school
    // per PSU, and one- and two-stage cluster samples.
    let api = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/api");
    let api_study = |table: &'static str| Study {
        root: &api,
        name: "California API",
        table,
        columns: &["stype", "sch_wide", "awards", "api00", "enroll"],
        periods: &["1999-2000"],
        bases: &[
            "All schools",
            "Elementary schools",
            "High schools",
            "Schools that met their target",
            "Large high schools",
        ],
        weights: &["pw", "unweighted"],
    };
    // The same samples with replicate weights made by R's as.svrepdesign (tests/r/replicates.R):
    // JKn, BRR, Fay, JK1 and bootstrap, weighted (the replicates carry a weighted estimate), and
    // the bootstrap weights with only the method declared (svrepdesign's default scale, df from
    // the rank). Fewer columns and bases than the plain samples: R's replicate estimates are
    // slower. The subgroups' df is R's rank of their replicate weights − 1: "Large high schools"
    // (22 of apistrat's 200 schools, 7 of apiclus1's in 3 districts) has fewer rows than the
    // replicates, so far less rank than the design.
    let replicated = |table: &'static str| Study {
        columns: &["sch_wide", "stype", "api00"],
        bases: &["All schools", "High schools", "Schools that met their target", "Large high schools"],
        weights: &["pw"],
        ..api_study(table)
    };
    let studies: Vec<Study> = studies
        .into_iter()
        .chain(["apistrat", "apiclus1", "apiclus2"].map(api_study))
        .chain(
            [
                "apistrat_jkn",
                "apistrat_brr",
                "apistrat_fay",
                "apiclus1_jk1",
                "apiclus1_boot",
                "apiclus1_boot_default",
            ]
            .map(replicated),
        )
        .collect();
    // What each replicate table declares: R is given only that, so its own defaults are tested.
    let declared: HashMap<String, recite::catalog::Replicates> = Catalog::load(&api)
        .unwrap()
        .studies
        .iter()
        .flat_map(|s| &s.tables)
        .filter_map(|t| Some((t.name.clone(), t.replicates.clone()?)))
        .collect();
    let mut resolved = Vec::new();
    for st in &studies {
        let catalog = Catalog::load(st.root).unwrap();
        let mut i = 0usize;
        for ex in &registry.extractors {
            for column in st.columns {
                for base in st.bases {
                    let weight = st.weights[i % st.weights.len()];
                    let period = st.periods[(i / st.weights.len()) % st.periods.len()];
                    i += 1;
                    let c = json!({"study": st.name, "period": period, "base": {"name": base, "n": 1},
                                   "weight": weight,
                                   "source": {"table": st.table, "column": column, "function": ex.name}});
                    let c = recite::citation::parse(&c).unwrap();
                    // An extractor whose needs the column does not meet is not a case.
                    if let Ok(r) = recite::resolve::resolve(&c, &catalog, &registry, &engine) {
                        resolved.push(r);
                    }
                }
            }
        }
    }
    let jobs: Vec<Job> = resolved
        .iter()
        .map(|r| Job { rows: r.rows.clone(), measures: r.measures.clone(), cells: vec![] })
        .collect();
    let (outcomes, _) = engine.run(&jobs);

    // CASES.tsv for R, and recite's figures for each (case, measure).
    let mut cases = String::from(
        "case\tmeasure\tdata\tstrata\tpsu\tweight\tperiod\tbase\tcolumn\tmissing\tkind\ta\tb\tscale\t\
         reps\trtype\trscale\trscales\trho\tmse\tintervals\n",
    );
    let mut ours = HashMap::new();
    for (k, (r, out)) in resolved.iter().zip(&outcomes).enumerate() {
        let out = out.as_ref().unwrap();
        let est = |interval, df| stats::estimate(&r.measures, &out.vars, &out.sums, Method { interval, df });
        let logit = est(Interval::Logit, DfRule::Domain);
        let kg = est(Interval::KornGraubard, DfRule::Domain);
        let wilson = est(Interval::Wilson, DfRule::Domain);
        let full = est(Interval::Logit, DfRule::FullDesign);
        let facts = stats::base_facts(&out.sums);
        let rows = &r.rows;
        // R reads the files, whichever source recite read.
        let data = match rows.table.as_str() {
            "versant_flat" => files.join("versant_flat.csv"),
            "nhanes2" => files.join("nhanes2/nhanes2.csv"),
            _ => rows.location.clone(),
        };
        let (strata, psu) = rows.design.clone().unwrap_or_default();
        let missing: Vec<String> = rows.missing.iter().map(|m| m.to_string()).collect();
        let replicates = rows.replicates.as_ref().map_or(0, |rep| rep.columns.len());
        let reps = match &rows.replicates {
            Some(rep) => {
                let list = |v: &[f64]| v.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>().join(",");
                let rho = if rep.method == recite::catalog::ReplicateMethod::Fay { "0.3" } else { "" };
                // Scale and rscales as the catalog declares them (empty: R's default).
                let decl = &declared[&r.rows.table];
                let scale = if decl.scale.is_some() { format!("{:?}", rep.scale) } else { String::new() };
                let rscales = if decl.rscales.is_empty() { String::new() } else { list(&rep.rscales) };
                format!("{}\t{:?}\t{scale}\t{rscales}\t{rho}\t{}", rep.columns.join(","), rep.method, rep.mse)
                    .replace("Bootstrap", "bootstrap")
            }
            None => "\t\t\t\t\t".to_string(),
        };
        for i in 0..r.measures.len() {
            let (Some((kind, a, b, scale)), Some(e)) = (measure_for_r(&r.measures, i), logit[i]) else {
                continue;
            };
            cases.push_str(&format!(
                "{k}\t{i}\t{}\t{strata}\t{psu}\t{}\t{}\t{}\t{}\t{}\t{kind}\t{a}\t{b}\t{scale}\t{reps}\t1\n",
                data.display(),
                rows.weight.as_deref().unwrap_or(".one"),
                rows.period_filter.as_deref().unwrap_or(""),
                rows.base_filter.as_deref().unwrap_or(""),
                rows.column,
                missing.join(","),
            ));
            let what = format!(
                "{} · {} · {} · {}({}) · {} · measure {:?}",
                r.study,
                r.period,
                r.base,
                r.function,
                rows.column,
                rows.weight.as_deref().unwrap_or("unweighted"),
                r.measures[i].name
            );
            ours.insert(
                (k, i),
                (what, kind, e, kg[i].unwrap(), wilson[i].unwrap(), full[i].unwrap(), facts, replicates),
            );
        }
    }
    Figures { cases, ours }
}

/// Runs R's survey package over the cases (tests/r/oracle.R, its files in `dir`) and checks
/// every figure recite gave against R's.
fn agrees_with_r(dir: &Path, figures: &Figures) {
    let Figures { cases, ours } = figures;
    let cases_path = dir.join("cases.tsv");
    let out_path = dir.join("r.tsv");
    std::fs::write(&cases_path, cases).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/r/oracle.R");
    let run =
        std::process::Command::new("Rscript").arg(&script).arg(&cases_path).arg(&out_path).output().unwrap();
    assert!(run.status.success(), "R failed: {}", String::from_utf8_lossy(&run.stderr));
    let r_out = std::fs::read_to_string(&out_path).unwrap();

    // Compare every figure: values 1e-9 relative, SEs, intervals and design effects 1e-6.
    let mut problems = Vec::new();
    let (mut measures, mut narrow_domains, mut conversions, mut designed, mut weights_only) = (0, 0, 0, 0, 0);
    let (mut replicate, mut zero_df, mut replicate_subgroups, mut below_replicates) = (0, 0, 0, 0);
    let mut degenerate_replicates = 0;
    let lines: Vec<&str> = r_out.lines().collect();
    let header: Vec<&str> = lines[0].split('\t').collect();
    for line in &lines[1..] {
        let f: HashMap<&str, &str> = header.iter().copied().zip(line.split('\t')).collect();
        let num = |k: &str| -> Option<f64> { f[k].parse::<f64>().ok().filter(|v| v.is_finite()) };
        let key = (f["case"].parse::<usize>().unwrap(), f["measure"].parse::<usize>().unwrap());
        let (what, kind, e, kg, wilson, full, facts, replicates) = &ours[&key];
        let mut check = |name: &str, got: f64, want: Option<f64>, tol: f64| {
            let Some(want) = want else {
                problems.push(format!("{what}: R gives no {name} (recite {got})"));
                return;
            };
            if (got - want).abs() > tol * got.abs().max(want.abs()).max(1e-300) + 1e-14 {
                problems.push(format!("{what}: {name} recite {got} R {want}"));
            }
        };
        check("base n", facts.n as f64, num("n"), 0.0);
        check("weighted base", facts.weighted, num("weighted"), 1e-9);
        check("effective base", facts.effective, num("effective"), 1e-9);
        check("value", e.value, num("value"), 1e-9);
        // An SE that is zero up to rounding (a column constant over the domain) is zero.
        let zeroish = |v: f64| if v.abs() <= 1e-12 * e.value.abs() { 0.0 } else { v };
        check("SE", zeroish(e.se), num("se").map(zeroish), 1e-6);
        // A domain in one PSU of one stratum has df 0 in R (no interval); recite's df is at least
        // 1 (docs/semantics.md), so there only that is checked.
        let r_df = num("df");
        let intervals = r_df != Some(0.0);
        if r_df == Some(0.0) {
            assert_eq!(e.df, 1.0, "{what}: df 0 in R");
            zero_df += 1;
        } else if intervals {
            check("df", e.df, r_df, 0.0);
        }
        if matches!(e.sample, Sample::Replicates | Sample::ReplicateRank) {
            replicate += 1;
            replicate_subgroups += usize::from(e.sample == Sample::ReplicateRank);
            below_replicates +=
                usize::from(e.sample == Sample::ReplicateRank && e.df + 1.0 < *replicates as f64);
        } else if e.sample == Sample::DesignDomain {
            check("full-design df", full.df, num("df_full"), 0.0);
            designed += 1;
            narrow_domains += usize::from(e.df < full.df);
        } else {
            weights_only += 1;
        }
        let proportion = matches!(*kind, "share" | "ratio");
        let inner = e.value > 0.0 && e.value < 1.0 && intervals;
        // A replicate estimate of 0 or 1: R's logit interval is where a logistic fit that cannot
        // converge stopped; recite takes the linearised one (docs/semantics.md).
        let degenerate = f["degenerate"] == "1";
        degenerate_replicates += usize::from(degenerate);
        if (!proportion || inner) && intervals && !degenerate {
            check("interval low", e.ci_low, num("logit_lo"), 1e-6);
            check("interval high", e.ci_high, num("logit_hi"), 1e-6);
        }
        // Without sampling error (a share of the strata) R's effective n is infinite and its beta
        // interval degenerates to (0.5, 0.5).
        if proportion && inner && e.se > 1e-6 * e.value {
            check("Korn-Graubard low", kg.ci_low, num("beta_lo"), 1e-6);
            check("Korn-Graubard high", kg.ci_high, num("beta_hi"), 1e-6);
        }
        if proportion && inner {
            check("Wilson low", wilson.ci_low, num("wilson_lo"), 1e-6);
            check("Wilson high", wilson.ci_high, num("wilson_hi"), 1e-6);
        }
        if let Some(d) = e.deff {
            check("design effect", d, num("deff"), 1e-6);
        }
        conversions += usize::from(*kind == "ratio");
        measures += 1;
    }
    assert_eq!(measures, ours.len(), "R answered every measure");
    assert!(
        problems.is_empty(),
        "{} of {measures} measures disagree with R's survey package:\n{}",
        problems.len(),
        problems.iter().take(400).cloned().collect::<Vec<_>>().join("\n")
    );
    eprintln!(
        "R oracle: {measures} measures agree ({designed} designed, {narrow_domains} in domains missing PSUs, \
         {weights_only} weights only, {replicate} with replicate weights ({replicate_subgroups} with df from \
         the rank, {below_replicates} below the replicates − 1, {degenerate_replicates} with a replicate proportion of \
         0 or 1), {conversions} conversions, {zero_df} with df 0 in R)"
    );
    assert!(
        measures >= 200
            && narrow_domains > 0
            && conversions > 0
            && weights_only > 0
            && replicate > 0
            && below_replicates > 0,
        "{measures} measures"
    );
}

/// Replicate weights are summed in the table's one scan (each replicate weight one more
/// weight of the same scan), and every replicate reaches the estimate.
#[test]
fn replicate_weights_are_summed_in_the_same_single_scan() {
    use recite::engine::Job;
    let api = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/api");
    let catalog = Catalog::load(&api).unwrap();
    let registry = Registry::load(None).unwrap();
    let engine = Engine::new();
    let mut jobs = Vec::new();
    for (table, replicates) in [("apistrat_jkn", 200), ("apistrat_brr", 104), ("apiclus1_jk1", 15)] {
        let c = json!({"study": "California API", "period": "1999-2000", "base": {"name": "High schools", "n": 1},
                       "weight": "pw", "source": {"table": table, "column": "sch_wide", "function": "extractShare"}});
        let r = recite::resolve::resolve(&recite::citation::parse(&c).unwrap(), &catalog, &registry, &engine)
            .unwrap();
        assert_eq!(r.rows.replicates.as_ref().map(|x| x.columns.len()), Some(replicates), "{table}");
        jobs.push(Job { rows: r.rows, measures: r.measures, cells: vec![] });
    }
    let (outcomes, scan) = engine.run(&jobs);
    // Two files (apistrat_rep.csv holds both apistrat sets): one scan each.
    assert_eq!((scan.tables_scanned, scan.scans), (2, 2), "{scan:?}");
    for (job, out) in jobs.iter().zip(&outcomes) {
        let out = out.as_ref().unwrap();
        let reps = out.sums.replicates.as_ref().unwrap();
        assert_eq!(reps.totals.len(), job.rows.replicates.as_ref().unwrap().columns.len());
        let e = stats::estimate(&job.measures, &out.vars, &out.sums, Interval::Logit)[0].unwrap();
        // A subgroup: df from the rank of its replicate weights, at most the replicates − 1.
        assert_eq!(e.sample, Sample::ReplicateRank);
        assert!(e.se > 0.0 && e.df < reps.totals.len() as f64, "{e:?}");
    }
}
