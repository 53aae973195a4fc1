//! Numbers written as text, end to end through `recite check`: group separators, both minus
//! signs, ambiguous dots, and exponent form that must not widen a claim's tolerance
//! (`tests/fixtures/a2a/written-base-n.json`, `tests/fixtures/plain/{exponent-tolerance,written-numbers}.jsonl`).

use serde_json::Value;

use crate::support::{code, recite, report, stderr, stdout};

/// `recite check FILE --format json`: the exit code and the report.
fn check_json(file: &str) -> (i32, Value) {
    let out = recite(&["check", file, "--format", "json"]);
    (code(&out), report(&out))
}

/// Every claim of a JSON report, in order.
fn claims(report: &Value) -> Vec<Value> {
    report["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| i["claims"].as_array().unwrap().clone())
        .collect()
}

fn verdicts(report: &Value) -> Vec<String> {
    claims(report).iter().map(|c| c["verdict"].as_str().unwrap().to_string()).collect()
}

const WRITTEN_BASE_N: &str = "tests/fixtures/a2a/written-base-n.json";

/// The headline of issue 22: `{"Considered": "44%", "n": "4,595"}` beside the W6 citation (base
/// n 4654) once came out REPRODUCED, "4,595" being dropped as not a number.
#[test]
fn written_base_n_with_a_group_separator_is_base_mismatch_in_every_format() {
    let (exit, json) = check_json(WRITTEN_BASE_N);
    assert_eq!(exit, 1);
    assert_eq!(verdicts(&json), ["BASE_MISMATCH"]);
    let claim = &claims(&json)[0];
    assert_eq!(claim["base"]["claimed_n"], 4595, "{claim:#}");
    assert_eq!(claim["base"]["n"], 4654, "{claim:#}");
    assert_eq!(claim["base"]["matched"], false, "{claim:#}");

    for format in ["text", "jsonl", "markdown", "html", "junit"] {
        let out = recite(&["check", WRITTEN_BASE_N, "--format", format]);
        assert_eq!(code(&out), 1, "{format}: {}", stderr(&out));
        let body = stdout(&out);
        assert!(body.contains("BASE_MISMATCH"), "{format}: {body}");
        assert!(body.contains("4595"), "{format}: the report names the claimed n: {body}");
        match format {
            "jsonl" => {
                let lines: Vec<Value> = body.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
                let claim_lines: Vec<&Value> = lines.iter().filter(|l| l["record"] == "claim").collect();
                assert_eq!(claim_lines.len(), 1, "{body}");
                assert_eq!(claim_lines[0]["verdict"], "BASE_MISMATCH", "{body}");
            }
            "markdown" => {
                let rows: Vec<&str> = body.lines().filter(|l| l.starts_with("| **")).collect();
                assert!(
                    !rows.is_empty() && rows.iter().all(|r| r.starts_with("| **BASE_MISMATCH**")),
                    "{body}"
                );
            }
            "junit" => assert!(body.contains("<failure type=\"BASE_MISMATCH\""), "{body}"),
            "text" => assert!(body.contains("base n: claimed 4595, recomputed 4654"), "{body}"),
            "html" => {}
            _ => unreachable!(),
        }
    }
}

/// `0e9` once got a tolerance of ±500,000,000 points, `"0e3"` ±500 and `4e1` ±5: each passed
/// against 44.2%. Exponent form never shows fewer decimals than the plain spelling (0, 0, 40).
#[test]
fn exponent_form_never_widens_the_tolerance_past_the_plain_spelling() {
    let (exit, json) = check_json("tests/fixtures/plain/exponent-tolerance.jsonl");
    assert_eq!(exit, 1);
    assert_eq!(verdicts(&json), ["DISCREPANT", "DISCREPANT", "DISCREPANT"]);
    for claim in claims(&json) {
        let compared = &claim["measures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "Considered")
            .unwrap()["claims"][0];
        assert_eq!(compared["tolerance"], 0.5, "{compared:#}");
    }
}

/// One parser for numbers written as text: a narrow no-break space groups thousands, `"4.595"`
/// is ambiguous (INVALID, never REPRODUCED, saying why), U+2212 is a minus, and a Python repr of
/// the result is read.
#[test]
fn written_numbers_are_read_and_ambiguous_ones_never_pass() {
    let (_, json) = check_json("tests/fixtures/plain/written-numbers.jsonl");
    assert_eq!(verdicts(&json), ["REPRODUCED", "INVALID", "DISCREPANT", "REPRODUCED"]);
    let all = claims(&json);
    let reasons = all[1]["reasons"].to_string();
    assert!(reasons.contains("4.595") && reasons.contains("ambiguous"), "{reasons}");
    let not_compared = &all[1]["not_compared"][0];
    assert_eq!(not_compared["pointer"], "/n", "{not_compared:#}");
    assert!(not_compared["unreadable"].as_str().unwrap().contains("ambiguous"));
    let findings = json["inputs"][0]["findings"].to_string();
    assert!(findings.contains("input/embedded-json") && findings.contains("Python"), "{findings}");
}
