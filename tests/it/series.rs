//! A claimed measure across every period of its study (`Settlement::series`, the HTML report's
//! chart), against truths recite did not compute:
//!
//! - DuckDB (`tests/oracle/claims.py --series`) reads the same Parquet file and recomputes the
//!   Versant W6 "Considered" claim on every wave the study declares, in its order: each point's
//!   value and base n must be DuckDB's;
//! - R's survey package (`tests/r/oracle.R`) gives each wave's logit 95% interval
//!   (`svyciprop(method = "logit")`) on the same weights: each point's interval must be R's;
//! - invariances: the cited period's point is the claim's own recomputed estimate; periods
//!   added to the study change no point of the others; a period without rows or with a filter
//!   that fails is a point without a value and with a reason, never a failure of the claim; a
//!   study of more than `MAX_SERIES_PERIODS` periods keeps the nearest and says so;
//! - the JSON report carries `series` only when asked (`--series`), the HTML report draws it
//!   unasked (`--no-series` leaves it out), every value of the chart is in its description.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::{code, recite, report, root, stderr};

const CITATION: &str = "examples/citations/versant-w6-considered.json";

/// `recite check ARGS --format json` (plus `extra`): the report.
fn check_json(data: &Path, input: &str, extra: &[&str]) -> Value {
    let mut args = vec!["check", input, "--format", "json", "--data", data.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = recite(&args);
    assert!(matches!(code(&out), 0 | 1), "recite {args:?}: {}", stderr(&out));
    report(&out)
}

/// The only claim of a one-claim report.
fn only_claim(report: &Value) -> &Value {
    let claims = report["inputs"][0]["claims"].as_array().expect("claims");
    assert_eq!(claims.len(), 1);
    &claims[0]
}

/// The series of `measure` in a claim.
fn series_of<'a>(claim: &'a Value, measure: &str) -> &'a [Value] {
    let series = claim["series"].as_array().unwrap_or_else(|| panic!("no series in {claim:#}"));
    let s = series.iter().find(|s| s["measure"] == measure).unwrap_or_else(|| panic!("no {measure} series"));
    s["points"].as_array().unwrap()
}

fn close(got: f64, want: f64, tol: f64, what: &str) {
    assert!(
        (got - want).abs() <= tol * got.abs().max(want.abs()).max(1e-300),
        "{what}: recite {got}, oracle {want}"
    );
}

/// The periods of a study.toml, in order: (name, filter), read with the toml crate.
fn periods(study_toml: &Path) -> Vec<(String, String)> {
    let t: toml::Table = std::fs::read_to_string(study_toml).unwrap().parse().unwrap();
    t["periods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap().to_string(), p["filter"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn the_versant_considered_series_is_duckdbs_on_every_wave_and_rs_intervals() {
    let data = root().join("datasets");
    let report = check_json(&data, CITATION, &["--series"]);
    let claim = only_claim(&report);
    assert_eq!(claim["verdict"], "REPRODUCED", "{claim:#}");
    let points = series_of(claim, "Considered");
    let declared = periods(&data.join("versant/study.toml"));
    assert_eq!(declared.len(), 8, "the bundled study declares 8 waves");

    // The cited period's point is the claim's own estimate (same report, same job): a
    // consistency check.
    let cited: Vec<&Value> = points.iter().filter(|p| p["cited"] == true).collect();
    assert_eq!(cited.len(), 1, "one cited period");
    assert_eq!(cited[0]["period"], claim["rerun"]["period"]);
    let own = claim["measures"].as_array().unwrap().iter().find(|m| m["name"] == "Considered").unwrap();
    for (p, e) in [("value", "value"), ("ci_low", "ci_low"), ("ci_high", "ci_high")] {
        assert_eq!(cited[0][p], own["estimate"][e], "the cited point's {p}");
    }
    assert_eq!(cited[0]["n"], claim["base"]["n"]);

    // DuckDB: every period the study declares, in its order, with its value and base n.
    let Some(python) = crate::engine_plans::duckdb_python("series: DuckDB") else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("claims.jsonl");
    let pair: Value = serde_json::from_str(&std::fs::read_to_string(root().join(CITATION)).unwrap()).unwrap();
    std::fs::write(&file, json!({"citation": pair["citation"]}).to_string() + "\n").unwrap();
    let out = std::process::Command::new(python)
        .arg(root().join("tests/oracle/claims.py"))
        .arg("--series")
        .arg(&data)
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "claims.py --series: {}", String::from_utf8_lossy(&out.stderr));
    let truth: Value = serde_json::from_slice(&out.stdout).unwrap();
    let truth = truth["series"].as_array().unwrap();
    let names: Vec<&str> = points.iter().map(|p| p["period"].as_str().unwrap()).collect();
    let want: Vec<&str> = truth.iter().map(|t| t["period"].as_str().unwrap()).collect();
    assert_eq!(names, want, "every period of the study, in its order");
    for (p, t) in points.iter().zip(truth) {
        let at = p["period"].as_str().unwrap();
        assert_eq!(p["n"], t["n"], "{at}: base n");
        let m = t["measures"].as_array().unwrap().iter().find(|m| m["name"] == "Considered").unwrap();
        close(p["value"].as_f64().unwrap(), m["value"].as_f64().unwrap(), 1e-9, &format!("{at}: value"));
        let (lo, v, hi) =
            (p["ci_low"].as_f64().unwrap(), p["value"].as_f64().unwrap(), p["ci_high"].as_f64().unwrap());
        assert!(lo < v && v < hi, "{at}: the interval holds the value");
    }
    // The waves differ (W7 is the tracker's high): the series is not one number repeated.
    let values: Vec<f64> = points.iter().map(|p| p["value"].as_f64().unwrap()).collect();
    assert!(values.iter().any(|v| (v - values[5]).abs() > 0.02), "{values:?}");

    // R's survey package: each wave's logit interval on the same weights.
    if !crate::statistics::r_with_survey(
        "series::the_versant_considered_series_is_duckdbs_on_every_wave_and_rs_intervals",
    ) {
        return;
    }
    let rdir = tempfile::tempdir().unwrap();
    let csv = crate::statistics::versant_for_r(rdir.path());
    let base = claim["rerun"]["base_filter"].as_str().unwrap();
    let mut cases = String::from(
        "case\tmeasure\tdata\tstrata\tpsu\tweight\tperiod\tbase\tcolumn\tmissing\tkind\ta\tb\tscale\t\
         reps\trtype\trscale\trscales\trho\tmse\tintervals\n",
    );
    for (k, (_, filter)) in declared.iter().enumerate() {
        // Considered: the funnel column at code 3 or more (docs/semantics.md, extractFunnel).
        cases.push_str(&format!(
            "{k}\t0\t{}\t\t\tmain_weight\t{filter}\t{base}\ts14r5\t\tshare\tx >= 3\t\t1\t\t\t\t\t\t\t1\n",
            csv.display()
        ));
    }
    let (cases_path, out_path) = (rdir.path().join("cases.tsv"), rdir.path().join("r.tsv"));
    std::fs::write(&cases_path, cases).unwrap();
    let run = std::process::Command::new("Rscript")
        .arg(root().join("tests/r/oracle.R"))
        .arg(&cases_path)
        .arg(&out_path)
        .output()
        .unwrap();
    assert!(run.status.success(), "R: {}", String::from_utf8_lossy(&run.stderr));
    let text = std::fs::read_to_string(&out_path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let mut checked = 0;
    for line in lines {
        let f: HashMap<&str, &str> = header.iter().copied().zip(line.split('\t')).collect();
        let p = &points[f["case"].parse::<usize>().unwrap()];
        let at = p["period"].as_str().unwrap();
        let r = |k: &str| f[k].parse::<f64>().unwrap();
        assert_eq!(p["n"].as_u64().unwrap() as f64, r("n"), "{at}: base n (R)");
        close(p["value"].as_f64().unwrap(), r("value"), 1e-9, &format!("{at}: value (R)"));
        close(p["ci_low"].as_f64().unwrap(), r("logit_lo"), 1e-6, &format!("{at}: 95% interval, low (R)"));
        close(p["ci_high"].as_f64().unwrap(), r("logit_hi"), 1e-6, &format!("{at}: 95% interval, high (R)"));
        checked += 1;
    }
    assert_eq!(checked, declared.len(), "R gave every wave");
}

/// The bundled Versant study in `dir` with `extra` periods appended after W8 (TOML text).
fn versant_with(dir: &Path, extra: &str) -> std::path::PathBuf {
    let from = root().join("datasets/versant");
    let study = dir.join("versant");
    std::fs::create_dir_all(&study).unwrap();
    std::os::unix::fs::symlink(from.join("versant_flat.parquet"), study.join("versant_flat.parquet"))
        .unwrap();
    let toml = std::fs::read_to_string(from.join("study.toml")).unwrap();
    // The periods go before the bases, keeping the declared order W1..W8, then `extra`.
    let at = toml.find("[[bases]]").unwrap();
    std::fs::write(study.join("study.toml"), format!("{}{extra}\n{}", &toml[..at], &toml[at..])).unwrap();
    dir.to_path_buf()
}

#[test]
fn periods_without_rows_or_with_a_failing_filter_are_points_with_a_reason_and_a_long_study_is_cut() {
    let bundled = check_json(&root().join("datasets"), CITATION, &["--series"]);
    let bundled_points = series_of(only_claim(&bundled), "Considered").to_vec();

    // W1..W8, a period whose filter names no column, then 21 periods without rows: 30 periods.
    let mut extra = String::from("[[periods]]\nname = \"Broken\"\nfilter = \"no_such_column = 1\"\n\n");
    for k in 1..=21 {
        extra.push_str(&format!("[[periods]]\nname = \"Empty {k}\"\nfilter = \"wave = {}\"\n\n", 100 + k));
    }
    let dir = tempfile::tempdir().unwrap();
    let data = versant_with(dir.path(), &extra);
    let report = check_json(&data, CITATION, &["--series"]);
    let claim = only_claim(&report);
    assert_eq!(claim["verdict"], "REPRODUCED", "a failing period is no failure of the claim: {claim:#}");
    let points = series_of(claim, "Considered");

    // The 24 periods nearest W6 (the 6th of 30): W1 to Empty 15.
    assert_eq!(points.len(), 24);
    assert_eq!(points[0]["period"], "W1 (November 2025)");
    assert_eq!(points[23]["period"], "Empty 15");
    let note = claim["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find(|n| n.contains("24 periods"));
    let note = note.unwrap_or_else(|| panic!("a note says the series was cut: {:#}", claim["notes"]));
    assert!(note.contains("of the 30"), "{note}");

    // The first eight are the bundled study's, bit for bit: added periods move nothing.
    assert_eq!(&points[..8], &bundled_points[..], "W1..W8 as on the bundled study");
    let broken = &points[8];
    assert_eq!(broken["period"], "Broken");
    assert!(broken.get("value").is_none() && broken.get("n").is_none(), "{broken:#}");
    let why = broken["reason"].as_str().unwrap();
    assert!(
        why.contains("\"Broken\"") && why.contains("no_such_column"),
        "names the period and its filter: {why}"
    );
    for p in &points[9..] {
        assert!(p.get("value").is_none(), "{p:#}");
        assert_eq!(p["n"], 0, "no rows: {p:#}");
        assert!(p["reason"].as_str().unwrap().contains("nothing to compute over"), "{p:#}");
        assert_eq!(p["cited"], false);
    }

    // The HTML report draws the chart of that series: 24 periods, 8 with a point, 16 saying
    // there is none.
    let html = check_html(&data, &[]);
    let svg = only_svg(&html);
    assert_eq!(
        svg.matches("<circle ").count() + svg.matches("<rect ").count(),
        8,
        "a point a wave with rows"
    );
    assert_eq!(svg.matches(">none</text>").count(), 16);
}

/// `recite check CITATION --format html` over `data` (plus `extra`): the page.
fn check_html(data: &Path, extra: &[&str]) -> String {
    let mut args = vec!["check", CITATION, "--format", "html", "--data", data.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = recite(&args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    String::from_utf8(out.stdout).unwrap()
}

/// The page's one chart.
fn only_svg(html: &str) -> &str {
    assert_eq!(html.matches("<svg ").count(), 1, "one chart");
    let start = html.find("<svg ").unwrap();
    &html[start..start + html[start..].find("</svg>").unwrap()]
}

/// An HTML text as the page shows it (the escapes the report writes, undone).
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
}

#[test]
fn the_html_report_charts_the_series_and_says_every_value_in_words() {
    let data = root().join("datasets");
    let report = check_json(&data, CITATION, &["--series"]);
    let points = series_of(only_claim(&report), "Considered");
    let html = check_html(&data, &[]);
    let svg = only_svg(&html);
    assert!(svg.starts_with("<svg class=\"chart-svg\" role=\"img\""), "{svg}");
    // Seven open circles and the cited wave's filled square; the claimed value dashed and
    // labelled, its diamond on the cited wave.
    assert_eq!(svg.matches("<circle ").count(), 7);
    assert_eq!(svg.matches("<rect ").count(), 1);
    assert!(svg.contains("stroke-dasharray") && svg.contains(">claimed 44%</text>"), "{svg}");
    assert_eq!(svg.matches("<polygon ").count(), 1);
    assert!(
        svg.contains(" font-weight=\"700\">W6 (April 2026) (cited)</text>"),
        "the cited wave's label says so"
    );
    // Every value, interval and base n in the description, as the details table writes them.
    let desc = unescape(&svg[svg.find("<desc>").unwrap() + 6..svg.find("</desc>").unwrap()]);
    for p in points {
        let pct = |k: &str| format!("{:.2}%", p[k].as_f64().unwrap() * 100.0);
        let cited = if p["cited"] == true { ", the cited period," } else { "" };
        let said = format!(
            "{}{cited} {} (95% interval {} to {}, base n {})",
            p["period"].as_str().unwrap(),
            pct("value"),
            pct("ci_low"),
            pct("ci_high"),
            p["n"]
        );
        assert!(desc.contains(&said), "{said:?} in {desc:?}");
    }
    assert!(desc.ends_with("Claimed: 44% on W6 (April 2026)."), "{desc}");
    // The same values in a table for a screen reader: a row a period under the header.
    let table = &html[html.find("<table class=\"sr-only\">").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr>").count(), points.len() + 1);
    assert!(table.contains("cited period; claimed 44%"));

    // Without the chart the page is what it was: the same claim, no drawing.
    let plain = check_html(&data, &["--no-series"]);
    assert!(!plain.contains("<svg"), "--no-series draws no chart");
    // The JSON report has no series unless asked.
    let json = check_json(&data, CITATION, &[]);
    assert!(only_claim(&json).get("series").is_none(), "no series in the JSON report unasked");
    // And the series changes nothing else of the claim.
    let mut with = only_claim(&report).clone();
    with.as_object_mut().unwrap().remove("series");
    assert_eq!(&with, only_claim(&json), "the claim with its series is the claim");
}
