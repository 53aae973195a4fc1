//! The warnings audit: small-base cells a claim did not disclose, warnings the data does not
//! support, very small cells; and that every report shows the audit beside the values.

use std::path::Path;

use recite::catalog::Catalog;
use recite::claim;
use recite::engine::Engine;
use recite::extractor::Registry;
use recite::settle::pipeline::{self, Claim, Options};
use recite::settle::{AuditKind, Settlement, Verdict, WarningAudit};
use serde_json::{Value, json};

use crate::support::{recite, root};

const AWARE: &str = "Adults 18-74, aware of brand";
const REAL_WARNING: &str = "Base under 100 in the 65-74 cell";

/// A Versant W6 funnel citation with its warnings.
fn citation(column: &str, base: &str, n: u64, warnings: &[&str]) -> Value {
    let mut c = json!({
        "study": "Versant Mega Tracker", "period": "W6 (April 2026)",
        "base": {"name": base, "n": n}, "weight": "main_weight",
        "source": {"table": "versant_flat", "column": column, "function": "extractFunnel"}
    });
    if !warnings.is_empty() {
        c["warnings"] = json!(warnings);
    }
    c
}

/// Versant (s14r5) considered among the aware in W6, as the data gives it.
fn versant(warnings: &[&str]) -> Value {
    json!({"citation": citation("s14r5", AWARE, 4654, warnings), "result": {"Considered": "44.2%"}})
}

fn settle(pair: &Value) -> Settlement {
    let catalog = Catalog::load(&root().join("datasets")).unwrap();
    let registry = Registry::load(None).unwrap();
    let engine = Engine::new();
    let claims = [Claim { citation: pair["citation"].clone(), numbers: claim::leaves(&pair["result"]) }];
    let (mut s, _) = pipeline::settle_all(&claims, &catalog, &registry, &engine, Options::default());
    s.remove(0)
}

/// The audit findings of one kind that name a cell.
fn findings<'a>(s: &'a Settlement, kind: AuditKind, cell: &str) -> Vec<&'a WarningAudit> {
    s.warnings_audit.iter().filter(|a| a.kind == kind && a.message.contains(cell)).collect()
}

#[test]
fn an_undisclosed_small_cell_is_flagged() {
    let s = settle(&versant(&[]));
    assert_eq!(s.verdict, Verdict::Reproduced, "the audit does not change the verdict: {:?}", s.reasons);
    let found = findings(&s, AuditKind::Undisclosed, "65-74");
    assert_eq!(found.len(), 1, "{:#?}", s.warnings_audit);
    let m = &found[0].message;
    assert!(m.contains("the 65-74 cell (age band) has an unweighted base of 76"), "{m}");
    assert!(m.contains("under 100"), "{m}");
    assert!(!m.contains("very low"), "76 is low, not very low: {m}");
    // It is the only small cell of this base.
    assert_eq!(s.warnings_audit.len(), 1, "{:#?}", s.warnings_audit);
}

#[test]
fn a_disclosed_small_cell_is_not_flagged() {
    let s = settle(&versant(&[REAL_WARNING]));
    assert_eq!(s.warnings, [REAL_WARNING]);
    assert!(s.warnings_audit.iter().all(|a| !a.message.contains("65-74")), "{:#?}", s.warnings_audit);
    assert!(s.warnings_audit.is_empty(), "{:#?}", s.warnings_audit);
    // Written another way, it still names the cell.
    let s = settle(&versant(&["Small base: ages 65–74 (n=76)"]));
    assert!(s.warnings_audit.is_empty(), "{:#?}", s.warnings_audit);
}

#[test]
fn a_warning_the_data_does_not_support_is_flagged() {
    let s = settle(&versant(&["Base under 100 in the 18-34 cell"]));
    let found = findings(&s, AuditKind::Unsupported, "18-34");
    assert_eq!(found.len(), 1, "{:#?}", s.warnings_audit);
    assert!(
        found[0].message.contains("\"Base under 100 in the 18-34 cell\" is not supported"),
        "{}",
        found[0].message
    );
    // And the real small cell is still undisclosed.
    assert_eq!(findings(&s, AuditKind::Undisclosed, "65-74").len(), 1, "{:#?}", s.warnings_audit);
}

#[test]
fn a_very_small_cell_is_described_as_very_low() {
    // Ostrel (s14r12) is known to few: its 65-74 aware cell in W6 is far under 50.
    let pair = json!({"citation": citation("s14r12", AWARE, 309, &[]), "result": {"Considered": "30.4%"}});
    let s = settle(&pair);
    assert_eq!(s.verdict, Verdict::Reproduced, "{:?}", s.reasons);
    let found = findings(&s, AuditKind::Undisclosed, "65-74");
    assert_eq!(found.len(), 1, "{:#?}", s.warnings_audit);
    let m = &found[0].message;
    let n: u64 = m
        .split("unweighted base of ")
        .nth(1)
        .and_then(|t| t.split(',').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no n in {m}"));
    assert!(n > 0 && n < 50, "{m}");
    assert!(m.contains("under 50 (very low)"), "{m}");
    // Cells between 50 and 100 are low, not very low.
    let low: Vec<&WarningAudit> = s.warnings_audit.iter().filter(|a| a.message.contains("35-49")).collect();
    assert_eq!(low.len(), 1, "{:#?}", s.warnings_audit);
    assert!(low[0].message.contains("under 100,"), "{}", low[0].message);
}

#[test]
fn cell_names_are_whole_words() {
    // "Midwest" does not name the West cell, nor "Female" the Male one.
    let s = settle(&json!({
        "citation": citation("s14r5", AWARE, 4654, &[REAL_WARNING, "Small base in the Midwest"]),
        "result": {"Considered": "44.2%"}
    }));
    let unsupported: Vec<&WarningAudit> =
        s.warnings_audit.iter().filter(|a| a.kind == AuditKind::Unsupported).collect();
    assert_eq!(unsupported.len(), 1, "{:#?}", s.warnings_audit);
    assert!(unsupported[0].message.contains("the Midwest cell (region)"), "{}", unsupported[0].message);
}

#[test]
fn a_cell_the_base_cannot_contain_is_empty_not_small() {
    // Women 18-74 has no one in the Male cell: that is not a small base to warn of.
    let s = settle(&json!({
        "citation": citation("s14r5", "Women 18-74", 3597, &[]),
        "result": {"Aware": "69.8%"}
    }));
    assert_eq!(s.verdict, Verdict::Reproduced, "{:?}", s.reasons);
    assert!(s.warnings_audit.iter().all(|a| !a.message.contains("Male")), "{:#?}", s.warnings_audit);
}

fn write(dir: &Path, name: &str, v: &Value) -> String {
    let file = dir.join(name);
    std::fs::write(&file, serde_json::to_vec_pretty(v).unwrap()).unwrap();
    file.to_string_lossy().into_owned()
}

const AUDIT_LINE: &str = "  warning audit (undisclosed): the 65-74 cell (age band) has an unweighted base of 76, under 100, and no warning says so";

#[test]
fn the_text_report_shows_warnings_as_prominently_as_values() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "versant.json", &versant(&["Base under 100 in the 18-34 cell"]));
    let out = recite(&["verify", &file]);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let at = |needle: &str| {
        lines.iter().position(|l| l.starts_with(needle)).unwrap_or_else(|| panic!("no {needle:?} in\n{text}"))
    };
    // Each at the indent of the measure rows, between the values and the verdict.
    let considered = at("  Considered ");
    let claimed = at("  warning (claimed): Base under 100 in the 18-34 cell");
    let undisclosed = at(AUDIT_LINE);
    let unsupported = at(
        "  warning audit (unsupported): the warning \"Base under 100 in the 18-34 cell\" is not supported",
    );
    let verdict = at("  REPRODUCED");
    assert!(considered < claimed && claimed < undisclosed && undisclosed < verdict, "{text}");
    assert!(unsupported < verdict, "{text}");
}

#[test]
fn the_json_report_has_the_statistics_the_audit_and_the_explanations() {
    let dir = tempfile::tempdir().unwrap();
    // W5's Considered share and base n claimed as W6's, no warning.
    let pair = json!({"citation": citation("s14r5", AWARE, 4595, &[]), "result": {"Considered": "46.7%"}});
    let file = write(dir.path(), "w5-as-w6.json", &pair);
    let out = recite(&["verify", &file, "--format", "json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &v["inputs"][0]["claims"][0];
    assert_eq!(c["verdict"], "DISCREPANT");
    let considered = c["measures"].as_array().unwrap().iter().find(|m| m["name"] == "Considered").unwrap();
    let e = &considered["estimate"];
    let (value, se, lo, hi) = (
        e["value"].as_f64().unwrap(),
        e["se"].as_f64().unwrap(),
        e["ci_low"].as_f64().unwrap(),
        e["ci_high"].as_f64().unwrap(),
    );
    assert!((value - 0.4425).abs() < 5e-5, "{e}");
    assert!(se > 0.005 && se < 0.01, "{e}");
    assert!(lo < value && value < hi, "{e}");
    let base = &c["base"];
    assert_eq!(base["n"], 4654);
    assert_eq!(base["claimed_n"], 4595);
    let effective = base["effective"].as_f64().unwrap();
    assert!(effective > 4000.0 && effective < 4654.0, "{base}");
    assert_eq!(considered["claims"][0]["gap"], "outside_sampling_error");
    assert_eq!(c["warnings_audit"][0]["kind"], "undisclosed");
    assert_eq!(
        c["warnings_audit"][0]["message"],
        AUDIT_LINE.trim_start().trim_start_matches("warning audit (undisclosed): ")
    );
    assert_eq!(c["explanations"][0]["cause"], "previous_period");
    assert!(c["explanations"][0]["message"].as_str().unwrap().contains("W5 (March 2026)"), "{c:#}");
}

#[test]
fn the_html_report_has_the_audit_and_the_explanation() {
    let dir = tempfile::tempdir().unwrap();
    let pair = json!({"citation": citation("s14r5", AWARE, 4595, &[]), "result": {"Considered": "46.7%"}});
    let file = write(dir.path(), "w5-as-w6.json", &pair);
    let out = recite(&["check", &file, "--format", "html"]);
    let html = String::from_utf8(out.stdout).unwrap();
    assert!(
        html.contains(
            "the 65-74 cell (age band) has an unweighted base of 76, under 100, and no warning says so"
        ),
        "no audit in the HTML"
    );
    assert!(
        html.contains("46.7% (Considered) is what extractFunnel gives on W5 (March 2026), with base n 4595"),
        "no explanation in the HTML"
    );
}

#[test]
fn the_check_text_report_shows_the_audit_of_a_reproduced_claim() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "versant.json", &versant(&[]));
    let out = recite(&["check", &file]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("the 65-74 cell (age band) has an unweighted base of 76"), "{text}");
}
