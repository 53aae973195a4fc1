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
/// a program wrote is 4.595 (the dot convention: as a base n, no whole count, so never passes),
/// U+2212 is a minus, and a Python repr of the result is read.
#[test]
fn written_numbers_are_read_by_their_convention_and_never_pass_unread() {
    let (_, json) = check_json("tests/fixtures/plain/written-numbers.jsonl");
    assert_eq!(verdicts(&json), ["REPRODUCED", "BASE_MISMATCH", "DISCREPANT", "REPRODUCED"]);
    let all = claims(&json);
    let reasons = all[1]["reasons"].to_string();
    assert!(reasons.contains("4.595") && reasons.contains("not a whole count"), "{reasons}");
    let findings = json["inputs"][0]["findings"].to_string();
    assert!(findings.contains("input/embedded-json") && findings.contains("Python"), "{findings}");
}

/// Issue 45: what programs write follows the dot convention. `"44.249"` beside the W6 citation
/// (recomputed 44.2489%) was INVALID ("ambiguous"); `"44,0%"` (a comma before one digit can only
/// be a decimal comma) was INVALID too; `"٤٤%"` (Arabic-Indic digits), `"0x2C"`, `"NaN"`,
/// `"Infinity"` and `"44%%"` came out REPRODUCED on base n alone, the one number the agent
/// claimed never compared.
#[test]
fn values_under_a_measure_are_read_in_any_convention_or_make_the_claim_invalid() {
    let file = "tests/fixtures/plain/decimal-marks.jsonl";
    let (exit, json) = check_json(file);
    assert_eq!(exit, 1);
    assert_eq!(
        verdicts(&json),
        [
            "REPRODUCED", // 44.249
            "DISCREPANT", // 44,0% against 44.25%
            "REPRODUCED", // ٤٤%
            "REPRODUCED", // ٤٤٫٢٪
            "INVALID",    // 0x2C
            "INVALID",    // NaN
            "INVALID",    // Infinity
            "INVALID",    // 44%%
            "INVALID",    // ٤٤%%
            "REPRODUCED", // NHANES zinc mean 87.182
            "REPRODUCED", // words under keys that name no measure are no claims
        ]
    );
    let all = claims(&json);
    // Each read number was compared as the measure's claim, at its shown precision.
    for (i, value, tolerance) in [(0, 44.249, 0.0005), (1, 44.0, 0.05), (2, 44.0, 0.5), (3, 44.2, 0.05)] {
        let considered =
            all[i]["measures"].as_array().unwrap().iter().find(|m| m["name"] == "Considered").unwrap();
        let compared = &considered["claims"][0];
        assert_eq!(compared["claimed"]["value"], value, "{compared:#}");
        assert_eq!(compared["tolerance"], tolerance, "{compared:#}");
    }
    // The unreadable value is named, with where and why, and never passes on base n.
    for (i, text) in [(4, "0x2C"), (5, "NaN"), (6, "Infinity"), (7, "44%%")] {
        let reasons = all[i]["reasons"].to_string();
        assert!(reasons.contains(text) && reasons.contains("/Considered"), "{reasons}");
        assert!(reasons.contains("not a number"), "{reasons}");
        assert_eq!(all[i]["not_compared"][0]["pointer"], "/Considered", "{:#}", all[i]);
    }
    let zinc = &all[9]["measures"][0]["claims"][0];
    assert_eq!(zinc["claimed"]["value"], 87.182, "{zinc:#}");
    assert_eq!(all[10]["not_compared"], Value::Null, "{:#}", all[10]);

    // INVALID in every format, never a pass.
    for format in ["text", "jsonl", "markdown", "html", "junit"] {
        let out = recite(&["check", file, "--format", format]);
        assert_eq!(code(&out), 1, "{format}: {}", stderr(&out));
        let body = stdout(&out);
        for text in ["0x2C", "NaN", "Infinity", "44%%"] {
            assert!(body.contains(text), "{format}: the report names {text}: {body}");
        }
        let invalid = body.matches("INVALID").count();
        assert!(invalid >= 5, "{format}: {invalid} INVALID: {body}");
    }
}

/// `--claim 87.182` and `--claim 2.494` were refused ("recite does not guess", exit 2): a
/// command-line value follows the dot convention.
#[test]
fn command_line_claims_read_the_dot_as_the_decimal_point() {
    let zinc =
        recite(&["verify", "examples/citations/nhanes2-zinc.json", "--claim", "87.182", "--format", "json"]);
    assert_ne!(code(&zinc), 2, "{}", stderr(&zinc));
    let report = report(&zinc);
    let claimed = &report["inputs"][0]["claims"][0]["measures"][0]["claims"][0]["claimed"];
    assert_eq!(claimed["value"], 87.182, "{report:#}");
    let rating =
        recite(&["verify", "examples/citations/versant-w6-considered.json", "--claim", "Considered=2.494"]);
    assert_eq!(code(&rating), 1, "2.494 is compared (and is no 44%): {}", stderr(&rating));
    assert!(stdout(&rating).contains("2.494"), "{}", stdout(&rating));
    // Declared otherwise, the comma is the decimal mark.
    let comma = recite(&[
        "verify",
        "examples/citations/versant-w6-considered.json",
        "--claim",
        "Considered=44,249%",
        "--decimal-mark",
        "comma",
    ]);
    assert_eq!(code(&comma), 0, "{}{}", stdout(&comma), stderr(&comma));
}

/// A European-formatted transcript, declared as such: `"44,249%"` and a base n `"4.654"` read
/// by the comma convention reproduce; `"NaN"` is INVALID all the same.
#[test]
fn a_transcript_declared_to_use_the_decimal_comma_is_read_so() {
    let file = "tests/fixtures/plain/decimal-comma.jsonl";
    let out = recite(&["check", file, "--format", "json", "--decimal-mark", "comma"]);
    assert_eq!(verdicts(&report(&out)), ["REPRODUCED", "INVALID", "REPRODUCED"], "{}", stderr(&out));
    // Undeclared, the same file is read by the dot convention: `4.654` is no whole count.
    let (_, json) = check_json(file);
    assert_eq!(verdicts(&json)[0], "DISCREPANT");
}
