//! `recite check` end to end, through the binary: the bundled example transcripts (every
//! verdict), `--fail-on`, every report format, `--output`, byte-identical JSON, malformed inputs
//! in a batch, folders, globs and stdin, colour, and fusion of 1,000 claims into one scan.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

use crate::support::{
    a_mean_of_x, code, command, recite, recite_stdin, root, run, run_bounded, stderr, stdout,
};

// ---------------------------------------------------------------------------------------------
// Helpers

/// `recite check ARGS --format json`: the exit code and the report.
fn check_json(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let out = recite(&all);
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{all:?}: not JSON ({e}): {}", stderr(&out)));
    (code(&out), report)
}

/// The exit code of `recite check ARGS` (text report).
fn check_code(args: &[&str]) -> i32 {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    let out = recite(&all);
    code(&out)
}

/// Per-verdict counts of a JSON report, as a map.
fn verdicts(report: &Value) -> BTreeMap<String, u64> {
    report["summary"]["verdicts"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect()
}

fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    let mut m: BTreeMap<String, u64> =
        ["INVALID", "UNVERIFIABLE", "DISCREPANT", "BASE_MISMATCH", "REPRODUCED"]
            .iter()
            .map(|v| (v.to_string(), 0))
            .collect();
    for (v, n) in pairs {
        m.insert(v.to_string(), *n);
    }
    m
}

/// The verdicts of one input's claims, in order.
fn input_verdicts(report: &Value, file_suffix: &str) -> Vec<String> {
    let input = report["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["file"].as_str().unwrap().ends_with(file_suffix))
        .unwrap_or_else(|| panic!("no input {file_suffix}"));
    input["claims"].as_array().unwrap().iter().map(|c| c["verdict"].as_str().unwrap().to_string()).collect()
}

/// Every claim of a report, in order.
fn claims(report: &Value) -> Vec<Value> {
    report["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| i["claims"].as_array().unwrap().iter().cloned())
        .collect()
}

/// Every finding of a report, in order.
fn findings(report: &Value) -> Vec<Value> {
    report["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| i["findings"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// A Versant citation.
fn versant(period: &str, base: &str, n: Value, column: &str, function: &str) -> Value {
    json!({
        "study": "Versant Mega Tracker",
        "period": period,
        "base": {"name": base, "n": n},
        "weight": "main_weight",
        "source": {"table": "versant_flat", "column": column, "function": function}
    })
}

const W5: &str = "W5 (March 2026)";
const W6: &str = "W6 (April 2026)";
const AWARE: &str = "Adults 18-74, aware of brand";
const ALL: &str = "All adults 18-74";

/// "44% of aware adults considered Versant in W6": reproduces on the bundled data.
fn w6_considered() -> Value {
    json!({"result": {"Considered": "44%"}, "citation": versant(W6, AWARE, json!(4654), "s14r5", "extractFunnel")})
}

/// "47% of aware adults considered Versant in W5": reproduces on the bundled data.
fn w5_considered() -> Value {
    json!({"result": {"Considered": "47%"}, "citation": versant(W5, AWARE, json!(4595), "s14r5", "extractFunnel")})
}

/// A claim on a misspelt column: UNVERIFIABLE.
fn misspelt_column() -> Value {
    json!({"result": {"Considered": "44%"}, "citation": versant(W6, AWARE, json!(4654), "s14_r5", "extractFunnel")})
}

fn jsonl(values: &[Value]) -> String {
    values.iter().map(|v| format!("{v}\n")).collect()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

// ---------------------------------------------------------------------------------------------
// The examples

const EXAMPLES: &str = "examples/transcripts/";

#[test]
fn examples_settle_all_five_verdicts() {
    let (code, report) = check_json(&[EXAMPLES]);
    assert_eq!(code, 1, "something is not reproduced");
    assert_eq!(report["summary"]["claims"], 8);
    assert_eq!(
        verdicts(&report),
        counts(&[
            ("INVALID", 1),
            ("UNVERIFIABLE", 1),
            ("DISCREPANT", 2),
            ("BASE_MISMATCH", 1),
            ("REPRODUCED", 3)
        ])
    );
    assert_eq!(report["summary"]["findings"], 0, "{:#?}", findings(&report));
    assert_eq!(report["summary"]["unreadable_inputs"], 0);
    // Each example, claim by claim.
    assert_eq!(input_verdicts(&report, "a2a-v03-task.json"), ["REPRODUCED", "BASE_MISMATCH", "UNVERIFIABLE"]);
    assert_eq!(input_verdicts(&report, "a2a-v10-stream.sse"), ["REPRODUCED", "DISCREPANT"]);
    assert_eq!(input_verdicts(&report, "agui-run.sse"), ["REPRODUCED", "DISCREPANT", "INVALID"]);
    // What the discrepant ones most likely computed instead.
    let cs = claims(&report);
    let discrepant: Vec<&Value> = cs.iter().filter(|c| c["verdict"] == "DISCREPANT").collect();
    assert_eq!(discrepant[0]["explanations"][0]["cause"], "unweighted", "{:#}", discrepant[0]);
    assert_eq!(discrepant[1]["explanations"][0]["cause"], "other_base", "{:#}", discrepant[1]);
    // One table, one scan, plus one scan for the explanations.
    assert_eq!(report["stats"]["tables_scanned"], 1);
    assert_eq!(report["stats"]["scans"], 1);
    assert_eq!(report["stats"]["explanation_scans"], 1);
    // The text report says the same.
    let out = recite(&["check", EXAMPLES]);
    assert_eq!(self::code(&out), 1);
    let text = stdout(&out);
    for v in ["REPRODUCED", "DISCREPANT", "BASE_MISMATCH", "UNVERIFIABLE", "INVALID"] {
        assert!(text.contains(v), "{v} missing from the text report:\n{text}");
    }
}

#[test]
fn the_json_report_names_the_plan_each_scan_took_and_why() {
    let (_, report) = check_json(&[EXAMPLES]);
    let plans = report["stats"]["plans"].as_array().expect("stats.plans");
    assert_eq!(plans.len() as u64, report["stats"]["scans"].as_u64().unwrap(), "one plan per scan");
    for p in plans {
        assert!(["grouped", "summed"].contains(&p["plan"].as_str().unwrap()), "{p}");
        assert!(!p["reason"].as_str().unwrap().is_empty(), "{p}");
    }
    let versant = plans.iter().find(|p| p["table"] == "versant_flat").expect("the Versant table's scan");
    assert_eq!(versant["plan"], "grouped", "{versant}");
}

#[test]
fn example_citations_reproduce_and_explain() {
    let out = recite(&["verify", "examples/citations/versant-w6-considered.json"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("REPRODUCED"));

    let out = recite(&["verify", "examples/citations/versant-w6-discrepant.json", "--format", "json"]);
    assert_eq!(code(&out), 1);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let claim = &report["inputs"][0]["claims"][0];
    assert_eq!(claim["verdict"], "DISCREPANT");
    assert_eq!(claim["explanations"][0]["cause"], "previous_period", "{claim:#}");
    assert_eq!(claim["explanations"][0]["reproduces_base"], true);
    // The alternative it re-ran, by the id the workbench's what-if lists it under: the
    // previous period of the study file (datasets/versant/study.toml).
    assert_eq!(claim["explanations"][0]["alternative"], "period:W5 (March 2026)", "{claim:#}");

    // The same two files through `check` (plain {citation, result} pairs).
    let (code, report) = check_json(&[
        "examples/citations/versant-w6-considered.json",
        "examples/citations/versant-w6-discrepant.json",
    ]);
    assert_eq!(code, 1);
    assert_eq!(verdicts(&report), counts(&[("REPRODUCED", 1), ("DISCREPANT", 1)]));
    assert_eq!(check_code(&["examples/citations/versant-w6-considered.json"]), 0);
}

#[test]
fn a_run_that_checked_nothing_exits_5_unless_allowed() {
    let dir = tempdir();
    // A conforming AG-UI run whose answer states no number, and a plain file of no claim.
    let run = jsonl(&[
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "Nothing to report."}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "m"}),
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
    ]);
    let quiet = write(dir.path(), "quiet.jsonl", &run);
    let out = recite(&["check", &quiet]);
    assert_eq!(code(&out), 5, "{}{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("nothing was checked"), "{}", stderr(&out));
    assert!(stdout(&out).contains("checked 0 of 0 cited numbers"), "{}", stdout(&out));
    assert_eq!(check_code(&[&quiet, "--allow-empty"]), 0);
    // One input with a claim is enough: the batch checked something.
    assert_eq!(check_code(&[&quiet, "examples/citations/versant-w6-considered.json"]), 0);
    // No claim for --fail-on to fail on: still nothing checked.
    assert_eq!(check_code(&[&quiet, "--fail-on", "reproduced"]), 5);
    let help = stdout(&recite(&["check", "--help"]));
    assert!(help.contains("--allow-empty") && help.contains("5 when nothing was checked"), "{help}");
}

#[test]
fn the_report_says_how_many_cited_numbers_were_checked_per_input_and_in_all() {
    // The A2A example: three claims, one UNVERIFIABLE (its numbers are not compared).
    let (_, report) = check_json(&["examples/transcripts/a2a-v03-task.json"]);
    let input = &report["inputs"][0]["coverage"];
    let total = &report["summary"]["coverage"];
    assert_eq!(input, total, "one input: its counts are the run's");
    assert_eq!(input["citations"], 3, "{input}");
    let (numbers, compared) = (input["cited_numbers"].as_u64().unwrap(), input["compared"].as_u64().unwrap());
    assert!(compared > 0 && compared < numbers, "the UNVERIFIABLE claim's numbers are not compared: {input}");
    let line = format!("checked {compared} of {numbers} cited numbers");
    for format in ["text", "markdown", "html", "junit"] {
        let out = recite(&["check", "examples/transcripts/a2a-v03-task.json", "--format", format]);
        assert!(stdout(&out).contains(&line), "--format {format} does not say {line:?}: {}", stdout(&out));
    }
    let lines = stdout(&recite(&["check", "examples/transcripts/a2a-v03-task.json", "--format", "jsonl"]));
    let input_line: Value =
        serde_json::from_str(lines.lines().find(|l| l.contains("\"record\":\"input\"")).unwrap()).unwrap();
    assert_eq!(&input_line["coverage"], input);
}

// ---------------------------------------------------------------------------------------------
// --fail-on

#[test]
fn fail_on_every_choice() {
    let dir = tempdir();
    let all_reproduced = write(dir.path(), "ok.jsonl", &jsonl(&[w6_considered(), w5_considered()]));
    let unverifiable = write(dir.path(), "unverifiable.jsonl", &jsonl(&[w6_considered(), misspelt_column()]));
    // Two citations paired with a result array by order: a NOTE finding, both reproduce.
    let paired = json!({
        "result": [{"Considered": "44%"}, {"Considered": "47%"}],
        "citations": [w6_considered()["citation"], w5_considered()["citation"]]
    });
    let note = write(dir.path(), "paired.json", &paired.to_string());
    let malformed = write(dir.path(), "malformed.json", "{\"result\": {\"Considered\": \"44%\"},");
    let should = "tests/fixtures/moca/missing-event.jsonl";

    // Sanity: what each input holds.
    let (_, r) = check_json(&[&all_reproduced]);
    assert_eq!(verdicts(&r), counts(&[("REPRODUCED", 2)]));
    let (_, r) = check_json(&[&unverifiable]);
    assert_eq!(verdicts(&r), counts(&[("REPRODUCED", 1), ("UNVERIFIABLE", 1)]));
    let (_, r) = check_json(&[&note]);
    assert_eq!(verdicts(&r), counts(&[("REPRODUCED", 2)]));
    assert_eq!(findings(&r).iter().map(|f| f["level"].as_str().unwrap()).collect::<Vec<_>>(), ["NOTE"]);
    let (_, r) = check_json(&[should]);
    assert!(findings(&r).iter().all(|f| f["level"] == "SHOULD") && !findings(&r).is_empty());

    // Default: invalid, unverifiable, discrepant, base-mismatch, must.
    assert_eq!(check_code(&[EXAMPLES]), 1);
    assert_eq!(check_code(&[&all_reproduced]), 0, "every claim reproduces");
    assert_eq!(check_code(&[&unverifiable]), 1);
    assert_eq!(check_code(&[&note]), 0, "a NOTE is not a failure by default");
    assert_eq!(check_code(&[should]), 0, "a SHOULD is not a failure by default");
    assert_eq!(check_code(&[&malformed]), 1, "malformed input is a MUST finding");

    // Each verdict alone: the examples hold every verdict, so each fails them.
    for v in ["invalid", "unverifiable", "discrepant", "base-mismatch", "reproduced"] {
        assert_eq!(check_code(&[EXAMPLES, "--fail-on", v]), 1, "--fail-on {v}");
    }
    // ... and inputs without that verdict pass.
    assert_eq!(
        check_code(&[&all_reproduced, "--fail-on", "invalid,unverifiable,discrepant,base-mismatch"]),
        0
    );
    assert_eq!(check_code(&[&all_reproduced, "--fail-on", "reproduced"]), 1);
    assert_eq!(check_code(&[&unverifiable, "--fail-on", "discrepant"]), 0, "UNVERIFIABLE is not DISCREPANT");
    assert_eq!(check_code(&[&unverifiable, "--fail-on", "unverifiable"]), 1);
    assert_eq!(check_code(&["examples/transcripts/agui-run.sse", "--fail-on", "base-mismatch"]), 0);
    assert_eq!(check_code(&["examples/transcripts/a2a-v03-task.json", "--fail-on", "invalid"]), 0);
    // Other spellings of a verdict.
    assert_eq!(check_code(&["examples/transcripts/a2a-v03-task.json", "--fail-on", "BASE_MISMATCH"]), 1);

    // Finding levels.
    assert_eq!(check_code(&[EXAMPLES, "--fail-on", "must"]), 0, "no MUST finding in the examples");
    assert_eq!(check_code(&[&malformed, "--fail-on", "must"]), 1);
    // A finding is not a verdict, but the malformed input held no claim: nothing was checked.
    assert_eq!(check_code(&[&malformed, "--fail-on", "discrepant"]), 5, "nothing was checked");
    assert_eq!(
        check_code(&[&malformed, "--fail-on", "discrepant", "--allow-empty"]),
        0,
        "a finding is not a verdict"
    );
    assert_eq!(check_code(&[should, "--fail-on", "should"]), 1);
    assert_eq!(check_code(&[should, "--fail-on", "must"]), 0);
    assert_eq!(check_code(&[&note, "--fail-on", "note"]), 1);
    assert_eq!(check_code(&[&note, "--fail-on", "must,should"]), 0);

    // Names recite does not know are usage errors.
    for bad in ["bogus", "discrepant,bogus", "reproduce"] {
        let out = recite(&["check", EXAMPLES, "--fail-on", bad]);
        assert_eq!(code(&out), 2, "--fail-on {bad}");
        assert!(stdout(&out).is_empty(), "no report on a usage error");
        assert!(stderr(&out).contains("--fail-on"), "{}", stderr(&out));
    }
}

#[test]
fn fail_on_help_lists_every_item_and_old_spellings_still_parse() {
    let help = stdout(&recite(&["check", "--help"]));
    for item in ["invalid", "base-mismatch", "must", "note", "traced-to-discrepant", "recomputed-only"] {
        assert!(help.contains(item), "--help does not list {item}: {help}");
    }
    // Case, underscores, blanks and repeats, as users write them today.
    let ok = ["examples/citations/versant-w6-considered.json"];
    for spelling in ["Must, SHOULD", "BASE_MISMATCH,", "reproduced,,", " invalid "] {
        let out = recite(&["check", ok[0], "--fail-on", spelling]);
        assert_ne!(code(&out), 2, "--fail-on {spelling:?}: {}", stderr(&out));
    }
    assert_eq!(check_code(&[ok[0], "--fail-on", "must", "--fail-on", "reproduced"]), 1, "repeats add up");
}

#[test]
fn unknown_names_carry_their_suggestions_as_data() {
    let dir = tempdir();
    let file = write(dir.path(), "misspelt.jsonl", &jsonl(&[misspelt_column()]));
    let (_, r) = check_json(&[&file]);
    let claim = &claims(&r)[0];
    assert_eq!(claim["verdict"], "UNVERIFIABLE");
    let unknown = claim["unknown_names"].as_array().expect("unknown_names");
    assert_eq!((&unknown[0]["what"], &unknown[0]["asked"]), (&json!("column"), &json!("s14_r5")));
    let suggested = unknown[0]["suggestions"].as_array().unwrap();
    assert!(!suggested.is_empty(), "{unknown:?}");
    // The reason says the same in words.
    let first = suggested[0].as_str().unwrap();
    assert!(claim["reasons"][0].as_str().unwrap().contains(&format!("{first:?}")), "{claim}");
    // A reproduced claim has none.
    let (_, r) = check_json(&["examples/citations/versant-w6-considered.json"]);
    assert!(claims(&r)[0].get("unknown_names").is_none());
}

#[test]
fn card_format_json_is_the_old_json_flag_and_writes_to_output() {
    let card = "tests/fixtures/cards/v10-card.json";
    let old = recite(&["card", card, "--json"]);
    let new = recite(&["card", card, "--format", "json"]);
    assert_eq!((code(&old), stdout(&old)), (code(&new), stdout(&new)));
    serde_json::from_str::<Value>(&stdout(&new)).expect("JSON");
    let dir = tempdir();
    let path = dir.path().join("card.json");
    let to_file = recite(&["card", card, "--format", "json", "-o", path.to_str().unwrap()]);
    assert_eq!(code(&to_file), code(&new));
    assert!(stdout(&to_file).is_empty());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), stdout(&new));
    // Refused over its own input, as every report is.
    assert_eq!(code(&recite(&["card", card, "-o", card])), 2);
}

// ---------------------------------------------------------------------------------------------
// Formats

/// A minimal XML well-formedness check: balanced, properly nested elements, quoted attributes,
/// no bare `<` or `&` in text. Returns every element's name with its parent's name.
fn xml_elements(xml: &str) -> Vec<(String, String)> {
    fn check_text(t: &str) {
        assert!(!t.contains('<'), "bare < in {t:?}");
        let mut rest = t;
        while let Some(i) = rest.find('&') {
            let after = &rest[i + 1..];
            let end = after.find(';').unwrap_or_else(|| panic!("unterminated entity in {t:?}"));
            let name = &after[..end];
            assert!(
                ["amp", "lt", "gt", "quot", "apos"].contains(&name) || name.starts_with('#'),
                "unknown entity &{name};"
            );
            rest = &after[end + 1..];
        }
    }
    let mut out = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    let mut s = xml.trim_start();
    if let Some(rest) = s.strip_prefix("<?xml") {
        s = &rest[rest.find("?>").expect("end of the XML declaration") + 2..];
    }
    let mut roots = 0;
    while !s.is_empty() {
        let lt = s.find('<').unwrap_or(s.len());
        let text = &s[..lt];
        if stack.is_empty() {
            assert!(text.trim().is_empty(), "text outside the root element: {text:?}");
        }
        check_text(text);
        s = &s[lt..];
        if s.is_empty() {
            break;
        }
        let gt = s.find('>').expect("unterminated tag");
        let tag = &s[1..gt];
        s = &s[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name.trim()), "mismatched </{name}>");
            continue;
        }
        let empty = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let name_end = tag.find(char::is_whitespace).unwrap_or(tag.len());
        let name = &tag[..name_end];
        assert!(
            !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || "_-:.".contains(c)),
            "{name:?}"
        );
        // Attributes: name="value" pairs.
        let mut attrs = tag[name_end..].trim();
        while !attrs.is_empty() {
            let eq =
                attrs.find("=\"").unwrap_or_else(|| panic!("attribute without a quoted value in <{tag}>"));
            let value_and_rest = &attrs[eq + 2..];
            let close = value_and_rest.find('"').expect("unterminated attribute value");
            check_text(&value_and_rest[..close]);
            attrs = value_and_rest[close + 1..].trim_start();
        }
        if stack.is_empty() {
            roots += 1;
        }
        out.push((name.to_string(), stack.last().cloned().unwrap_or_default()));
        if !empty {
            stack.push(name.to_string());
        }
    }
    assert!(stack.is_empty(), "unclosed elements: {stack:?}");
    assert_eq!(roots, 1, "one root element");
    out
}

#[test]
fn every_format_renders_the_examples() {
    let (_, report) = check_json(&[EXAMPLES]);
    let all = claims(&report);
    let not_reproduced = all.iter().filter(|c| c["verdict"] != "REPRODUCED").count();
    assert_eq!(all.len(), 8);

    for format in ["text", "json", "markdown", "html", "junit"] {
        let out = recite(&["check", EXAMPLES, "--format", format]);
        assert_eq!(code(&out), 1, "{format}: {}", stderr(&out));
        let body = stdout(&out);
        assert!(!body.trim().is_empty(), "{format}");
        match format {
            "text" => assert!(body.contains("8 claims in 3 inputs"), "{body}"),
            "json" => assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), report),
            "html" => {
                assert!(body.trim_start().to_lowercase().starts_with("<!doctype html>"));
                assert!(body.trim_end().ends_with("</html>"));
                for v in ["REPRODUCED", "DISCREPANT", "BASE_MISMATCH", "UNVERIFIABLE", "INVALID"] {
                    assert!(body.contains(v), "{v} missing from the HTML report");
                }
            }
            "junit" => {
                let elements = xml_elements(&body);
                let testcases = elements.iter().filter(|(n, _)| n == "testcase").count();
                let failures: Vec<_> = elements.iter().filter(|(n, _)| n == "failure").collect();
                // No findings in the examples: one testcase per claim and per number stated in an
                // answer; the examples' answers quote their citations, so no answer fails.
                let stated = report["summary"]["answer_numbers"]
                    .as_object()
                    .map_or(0, |m| m.values().map(|n| n.as_u64().unwrap() as usize).sum());
                assert!(stated > 0, "the examples' answers state numbers");
                assert_eq!(testcases, all.len() + stated, "{body}");
                assert_eq!(failures.len(), not_reproduced, "{body}");
                assert!(failures.iter().all(|(_, parent)| parent == "testcase"));
                let tests = all.len() + stated;
                assert!(body.contains(&format!("tests=\"{tests}\" failures=\"{not_reproduced}\"")));
                for v in ["DISCREPANT", "BASE_MISMATCH", "UNVERIFIABLE", "INVALID"] {
                    assert!(body.contains(&format!("<failure type=\"{v}\"")), "{v}");
                }
            }
            "markdown" => {
                // A table row per claim: one per claimed number compared, or one for a claim with
                // none (INVALID, UNVERIFIABLE); every claim's verdict and place appear in a row.
                let rows: Vec<Vec<&str>> = body
                    .lines()
                    .filter(|l| l.starts_with("| **"))
                    .map(|l| l.split(" | ").collect())
                    .collect();
                let expected: usize = all
                    .iter()
                    .map(|c| {
                        let compared: usize = c["measures"]
                            .as_array()
                            .map(|ms| ms.iter().map(|m| m["claims"].as_array().map_or(0, Vec::len)).sum())
                            .unwrap_or(0);
                        compared.max(1)
                    })
                    .sum();
                assert_eq!(rows.len(), expected, "{body}");
                let mut per_claim: BTreeMap<(String, String), usize> = BTreeMap::new();
                for r in &rows {
                    *per_claim
                        .entry((r[0].trim_start_matches("| ").to_string(), r[1].to_string()))
                        .or_default() += 1;
                }
                assert_eq!(per_claim.len(), all.len(), "one distinct (verdict, where) per claim");
                for v in ["REPRODUCED", "DISCREPANT", "BASE_MISMATCH", "UNVERIFIABLE", "INVALID"] {
                    let want = all.iter().filter(|c| c["verdict"] == v).count();
                    let got = per_claim.keys().filter(|(verdict, _)| *verdict == format!("**{v}**")).count();
                    assert_eq!(got, want, "{v}");
                }
            }
            _ => unreachable!(),
        }
    }
}

#[test]
fn output_file_is_written_atomically() {
    let dir = tempdir();
    let report = dir.path().join("report.json");
    let out = recite(&["check", EXAMPLES, "--format", "json", "-o", report.to_str().unwrap()]);
    assert_eq!(code(&out), 1);
    assert!(out.stdout.is_empty(), "nothing on stdout with --output");
    let written = std::fs::read(&report).unwrap();
    let direct = recite(&["check", EXAMPLES, "--format", "json"]).stdout;
    assert_eq!(written, direct, "the file holds the same report");
    // Overwrites an existing file, and leaves no temporary file behind.
    let out = recite(&["check", EXAMPLES, "--format", "junit", "--output", report.to_str().unwrap()]);
    assert_eq!(code(&out), 1);
    assert!(std::fs::read_to_string(&report).unwrap().starts_with("<?xml"));
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["report.json"]);

    // An output path that cannot be written: exit 2, nothing left behind, no report on stdout.
    let missing = dir.path().join("no-such-folder").join("report.html");
    let out = recite(&["check", EXAMPLES, "--format", "html", "-o", missing.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert!(!stderr(&out).is_empty());
    assert!(!missing.exists() && !missing.parent().unwrap().exists());
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["report.json"]);
}

#[test]
fn json_report_is_byte_identical_and_timings_only_on_request() {
    let args = ["check", EXAMPLES, "examples/citations/", "tests/fixtures/answers/", "--format", "json"];
    let a = recite(&args);
    let b = recite(&args);
    assert_eq!(code(&a), 1);
    assert!(!a.stdout.is_empty());
    assert!(a.stdout == b.stdout, "two runs over the same inputs differ");
    let plain: Value = serde_json::from_slice(&a.stdout).unwrap();
    assert!(plain.get("timings").is_none());
    assert!(plain["summary"]["answer_numbers"]["MISQUOTED"].as_u64() > Some(0), "the answers are in it");
    let mut only = args.to_vec();
    only.push("--answers-only");
    assert!(recite(&only).stdout == recite(&only).stdout, "two --answers-only runs differ");

    let mut with = args.to_vec();
    with.push("--timings");
    let t = recite(&with);
    assert_eq!(code(&t), 1);
    let mut timed: Value = serde_json::from_slice(&t.stdout).unwrap();
    let timings = timed.as_object_mut().unwrap().remove("timings").expect("--timings adds timings");
    let timings = timings.as_object().unwrap();
    // The passes, and the per-claim phases across them (issue 51).
    for key in ["measures_ms", "scan_ms", "report_ms", "total_ms"].into_iter().chain([
        "claims_parse_ms",
        "claims_resolve_ms",
        "claims_settle_ms",
        "claims_write_ms",
    ]) {
        assert!(timings.contains_key(key), "{key} missing: {timings:?}");
    }
    assert!(timings.values().all(|v| v.as_f64().is_some_and(|ms| ms >= 0.0)));
    assert_eq!(timed, plain, "--timings changes nothing else");
}

// ---------------------------------------------------------------------------------------------
// Inputs

#[test]
fn malformed_inputs_become_findings_and_the_rest_still_settles() {
    let dir = tempdir();
    let good = write(dir.path(), "good.jsonl", &jsonl(&[w6_considered()]));
    let bad =
        write(dir.path(), "bad.json", "{\"result\": {\"Considered\": \"44%\"}, \"citation\": {\"study\": ");
    let empty = write(dir.path(), "empty.json", "");
    // The v1.0 example stream cut off in the middle of its fifth event (the W5 artifact).
    let stream = std::fs::read_to_string(root().join("examples/transcripts/a2a-v10-stream.sse")).unwrap();
    let third = stream.match_indices("data: ").nth(4).unwrap().0;
    let truncated = write(dir.path(), "truncated.sse", &stream[..third + 120]);

    let (code, report) = check_json(&[&good, &bad, &empty, &truncated]);
    assert_eq!(code, 1, "malformed input is a MUST finding");
    assert_eq!(report["inputs"].as_array().unwrap().len(), 4);
    assert_eq!(input_verdicts(&report, "good.jsonl"), ["REPRODUCED"]);
    assert_eq!(input_verdicts(&report, "bad.json"), Vec::<String>::new());
    assert_eq!(input_verdicts(&report, "empty.json"), Vec::<String>::new());
    // The events before the cut are still read and settled.
    assert_eq!(input_verdicts(&report, "truncated.sse"), ["REPRODUCED"]);
    for (i, name) in ["good.jsonl", "bad.json", "empty.json", "truncated.sse"].iter().enumerate() {
        let input = &report["inputs"][i];
        assert!(input["file"].as_str().unwrap().ends_with(name));
        let rules: Vec<&str> = input["findings"]
            .as_array()
            .map(|f| f.iter().map(|f| f["rule"].as_str().unwrap()).collect())
            .unwrap_or_default();
        if *name == "good.jsonl" {
            assert!(rules.is_empty(), "{rules:?}");
        } else {
            assert!(rules.contains(&"input/malformed"), "{name}: {rules:?}");
        }
    }
    assert_eq!(report["summary"]["claims"], 2);

    // A missing file given by name is a usage error, not a finding.
    let missing = dir.path().join("missing.json");
    let out = recite(&["check", &good, missing.to_str().unwrap()]);
    assert_eq!(self::code(&out), 2);
    assert!(out.stdout.is_empty());
    assert!(stderr(&out).contains("missing.json"), "{}", stderr(&out));
    // No input at all is a usage error too.
    assert_eq!(recite(&["check"]).status.code(), Some(2));
}

#[test]
fn folders_globs_and_stdin_expand() {
    let dir = tempdir();
    write(dir.path(), "a.jsonl", &jsonl(&[w6_considered()]));
    write(dir.path(), "nested/b.json", &w5_considered().to_string());
    write(dir.path(), "nested/deeper/c.ndjson", &jsonl(&[misspelt_column()]));
    write(dir.path(), "notes.md", "# not a transcript: skipped\n");
    let d = dir.path().display().to_string();

    // A folder is read recursively, in a stable order, skipping other extensions.
    let (code, report) = check_json(&[&d]);
    assert_eq!(code, 1);
    let files: Vec<String> = report["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["file"].as_str().unwrap().strip_prefix(&d).unwrap().to_string())
        .collect();
    assert_eq!(files, ["/a.jsonl", "/nested/b.json", "/nested/deeper/c.ndjson"]);
    assert_eq!(verdicts(&report), counts(&[("REPRODUCED", 2), ("UNVERIFIABLE", 1)]));

    // Globs.
    let (code, report) = check_json(&[&format!("{d}/**/*.json*")]);
    assert_eq!(code, 0);
    assert_eq!(report["inputs"].as_array().unwrap().len(), 2);
    let (_, report) = check_json(&[&format!("{d}/*.jsonl"), &format!("{d}/nested/*.json")]);
    assert_eq!(verdicts(&report), counts(&[("REPRODUCED", 2)]));
    assert_eq!(check_code(&[&format!("{d}/*.xml")]), 2, "a glob that matches nothing");
    std::fs::create_dir(dir.path().join("void")).unwrap();
    assert_eq!(check_code(&[&format!("{d}/void")]), 2, "a folder with nothing to read");

    // `-` reads standard input, alone or with files.
    let body = jsonl(&[w6_considered(), w5_considered()]);
    let out = recite_stdin(&["check", "-", "--format", "json"], body.as_bytes());
    assert_eq!(self::code(&out), 0, "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["inputs"][0]["file"], "-");
    assert_eq!(verdicts(&report), counts(&[("REPRODUCED", 2)]));
    let sse = std::fs::read(root().join("examples/transcripts/agui-run.sse")).unwrap();
    let out = recite_stdin(
        &["check", "examples/citations/versant-w6-considered.json", "-", "--format", "json"],
        &sse,
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["inputs"][1]["file"], "-");
    assert_eq!(report["inputs"][1]["format"], "agui");
    assert_eq!(input_verdicts(&report, "-"), ["REPRODUCED", "DISCREPANT", "INVALID"]);
}

#[test]
fn text_output_has_no_ansi_escapes_without_a_terminal() {
    // NO_COLOR set (by `command`).
    let out = recite(&["check", EXAMPLES]);
    assert!(!out.stdout.is_empty());
    assert!(!out.stdout.contains(&0x1b), "ANSI escape with NO_COLOR");
    // NO_COLOR unset, but stdout is a pipe.
    let mut c = command(&["check", EXAMPLES]);
    c.env_remove("NO_COLOR");
    let out = run(c, None);
    assert!(!out.stdout.contains(&0x1b), "ANSI escape on a pipe");
    assert!(!out.stderr.contains(&0x1b), "ANSI escape on stderr");
    // The check above would pass vacuously if recite never coloured: --color always does.
    let out = recite(&["check", EXAMPLES, "--color", "always"]);
    assert!(out.stdout.contains(&0x1b), "--color always colours");
}

// ---------------------------------------------------------------------------------------------
// Fusion

/// A small deterministic generator (64-bit LCG, high bits).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

const PERIODS: [&str; 8] = [
    "W1 (November 2025)",
    "W2 (December 2025)",
    "W3 (January 2026)",
    "W4 (February 2026)",
    "W5 (March 2026)",
    "W6 (April 2026)",
    "W7 (May 2026)",
    "W8 (June 2026)",
];

/// 1,000 `{result, citation}` claims over the Versant table: 12 brands, 8 waves, 2 bases, 6
/// extractors. The claimed numbers are arbitrary; base n is plausible.
fn thousand_claims() -> String {
    let mut rng = Lcg(0x5eed_2026);
    let mut lines = String::new();
    for _ in 0..1000 {
        let brand = rng.next(12) + 1;
        let period = PERIODS[rng.next(8) as usize];
        let base = if rng.next(2) == 0 { ALL } else { AWARE };
        let (column, function, result) = match rng.next(6) {
            0 => (
                format!("s14r{brand}"),
                "extractFunnel",
                json!({"Considered": format!("{}%", 20 + rng.next(40))}),
            ),
            1 => (
                format!("s14r{brand}"),
                "extractDistribution",
                json!({"Familiar": format!("{}%", 5 + rng.next(30))}),
            ),
            2 => (
                format!("q20r{brand}"),
                "extractMean",
                json!({"mean": format!("{}.{}", 4 + rng.next(4), rng.next(10))}),
            ),
            3 => (format!("q20r{brand}"), "extractNPS", json!({"NPS": -40 + rng.next(60) as i64})),
            4 => (
                format!("q20r{brand}"),
                "extractTop2Box",
                json!({"top 2 box": format!("{}%", 10 + rng.next(40))}),
            ),
            _ => (
                format!("q30r{brand}"),
                "extractTopBox",
                json!({"top box": format!("{}%", 10 + rng.next(40))}),
            ),
        };
        let n = if base == ALL { 5800 + rng.next(700) } else { 2500 + rng.next(3000) };
        let citation = versant(period, base, json!(n), &column, function);
        lines.push_str(&json!({"result": result, "citation": citation}).to_string());
        lines.push('\n');
    }
    lines
}

#[test]
fn a_thousand_claims_fuse_into_one_scan() {
    let dir = tempdir();
    let text = thousand_claims();
    assert_eq!(text, thousand_claims(), "deterministic");
    let file = write(dir.path(), "thousand.jsonl", &text);

    let started = Instant::now();
    let (_, report) = check_json(&[&file, "--no-explain"]);
    eprintln!("1,000 claims, --no-explain: {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(report["summary"]["claims"], 1000);
    assert_eq!(report["summary"]["findings"], 0, "{:#?}", findings(&report));
    let v = verdicts(&report);
    assert_eq!(v["INVALID"] + v["UNVERIFIABLE"], 0, "every claim resolves: {v:?}");
    let stats = &report["stats"];
    assert_eq!(stats["tables_scanned"], 1, "{stats}");
    assert_eq!(stats["scans"], 1, "{stats}");
    assert_eq!(stats["rows_scanned"], 50000, "{stats}");
    assert_eq!(stats["explanation_scans"].as_u64().unwrap_or(0), 0, "{stats}");

    let started = Instant::now();
    let (_, explained) = check_json(&[&file]);
    eprintln!("1,000 claims, with explanations: {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(explained["summary"]["claims"], 1000);
    assert_eq!(explained["stats"]["scans"], 1, "{}", explained["stats"]);
    assert!(explained["stats"]["explanation_scans"].as_u64().unwrap() <= 1, "{}", explained["stats"]);
    // Explanations change nothing but the explanations.
    assert_eq!(verdicts(&explained), v);
}

// ---------------------------------------------------------------------------------------------
// Odd claimed numbers (issue 16)

#[test]
fn odd_numbers_one_unreadable_number_does_not_sink_the_batch() {
    let dir = tempdir();
    let hostile = format!(
        "{}\n{{\"result\": {{\"Considered\": 0.44e-2147483648}}, \"citation\": {}}}\n{}\n",
        w6_considered(),
        versant(W6, AWARE, json!(4654), "s14r5", "extractFunnel"),
        w5_considered()
    );
    let file = write(dir.path(), "odd.jsonl", &hostile);
    let (code, report) = check_json(&[&file]);
    assert_eq!(code, 1, "the INVALID claim fails the run, nothing panics");
    assert_eq!(input_verdicts(&report, "odd.jsonl"), ["REPRODUCED", "INVALID", "REPRODUCED"]);
}

// Hostile data layers: a declaration or study file that fails, fails only the claims on it

/// A copy of the NHANES II study as `dir/folder`: its CSV gains three weight columns that
/// cannot be summed (`hugewgt` = finalwgt·10^300, beyond 2^256, `negwgt` with one negative
/// value, `textwgt` with one "n/a"), its study.toml declares them and is then edited by `edit`.
fn nhanes_copy(dir: &Path, folder: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let to = dir.join(folder);
    std::fs::create_dir_all(&to).unwrap();
    let csv = std::fs::read_to_string(root().join("datasets/nhanes2/nhanes2.csv")).unwrap();
    let mut out = String::new();
    for (i, line) in csv.lines().enumerate() {
        let extra = if i == 0 {
            "hugewgt,negwgt,textwgt".to_string()
        } else {
            let w: u64 = line.split(',').nth(5).unwrap().parse().unwrap();
            let odd = i == 1;
            format!(
                "{w}e300,{},{}",
                if odd { "-1".to_string() } else { w.to_string() },
                if odd { "n/a".to_string() } else { w.to_string() }
            )
        };
        out.push_str(&format!("{line},{extra}\n"));
    }
    std::fs::write(to.join("nhanes2.csv"), out).unwrap();
    let toml = std::fs::read_to_string(root().join("datasets/nhanes2/study.toml")).unwrap().replace(
        "weights = [\"finalwgt\"]",
        "weights = [\"finalwgt\", \"hugewgt\", \"negwgt\", \"textwgt\"]",
    );
    std::fs::write(to.join("study.toml"), edit(toml)).unwrap();
    to
}

/// "The mean serum zinc is 87.18 (n = 9,189)": reproduces on NHANES II's whole period and base.
fn zinc_claim(study: &str, period: &str, base: &str, weight: &str) -> Value {
    json!({
        "result": {"mean": 87.18},
        "citation": {
            "study": study, "period": period, "base": {"name": base, "n": 9189}, "weight": weight,
            "source": {"table": "nhanes2", "column": "zinc", "function": "extractMean"}
        }
    })
}

/// `recite check` of these claims over the data layer `data`: each claim's verdict and reasons.
fn check_over(data: &Path, claims: &[Value]) -> Vec<(String, String)> {
    let dir = tempdir();
    let file = write(dir.path(), "claims.jsonl", &jsonl(claims));
    let (code, report) = check_json(&[&file, "--data", data.to_str().unwrap()]);
    assert!(code == 0 || code == 1, "exit {code}: {report}");
    claims_of(&report)
}

fn claims_of(report: &Value) -> Vec<(String, String)> {
    claims(report)
        .iter()
        .map(|c| (c["verdict"].as_str().unwrap().to_string(), c["reasons"].to_string()))
        .collect()
}

const ALL_1976: &str = "1976-1980";
const EVERYONE: &str = "All examined persons";

#[test]
fn one_bad_declaration_fails_only_its_claims() {
    let dir = tempdir();
    nhanes_copy(dir.path(), "nhanes2", |t| {
        format!(
            "{t}\n[[periods]]\nname = \"Broken\"\nfilter = \"race / (race - race) = 1\"\n\n\
             [[bases]]\nname = \"Broken base\"\nfilter = \"{{column}} / ({{column}} - {{column}}) > 1\"\n"
        )
    });
    let good = zinc_claim("NHANES II", ALL_1976, EVERYONE, "finalwgt");
    let batch = [
        good.clone(),
        zinc_claim("NHANES II", "Broken", EVERYONE, "finalwgt"),
        zinc_claim("NHANES II", ALL_1976, "Broken base", "finalwgt"),
        zinc_claim("NHANES II", ALL_1976, EVERYONE, "hugewgt"),
        zinc_claim("NHANES II", ALL_1976, EVERYONE, "negwgt"),
        zinc_claim("NHANES II", ALL_1976, EVERYONE, "textwgt"),
    ];
    let alone = check_over(dir.path(), &[good]);
    let settled = check_over(dir.path(), &batch);
    assert_eq!(alone[0].0, "REPRODUCED", "{alone:?}");
    // The good claim's verdict does not depend on what else is in the batch.
    assert_eq!(settled[0].0, "REPRODUCED", "{settled:?}");
    let named = [
        "period \\\"Broken\\\"",
        "base \\\"Broken base\\\"",
        "weight \\\"hugewgt\\\"",
        "weight \\\"negwgt\\\"",
        "weight \\\"textwgt\\\"",
    ];
    for ((verdict, reasons), name) in settled[1..].iter().zip(named) {
        assert_eq!(verdict, "UNVERIFIABLE", "{name}: {reasons}");
        assert!(reasons.contains(name), "{name} not in {reasons}");
    }
    assert!(
        settled[1].1.contains("fails on the data") && settled[1].1.contains("Divide by zero"),
        "{}",
        settled[1].1
    );
    assert!(settled[3].1.contains("too large"), "{}", settled[3].1);
    assert!(settled[4].1.contains("negative"), "{}", settled[4].1);
}

#[test]
fn a_deep_period_filter_is_refused_not_a_stack_overflow() {
    let dir = tempdir();
    // 5,000 ORs overflowed the stack; 127 (253 operators, under the limit of 256) still run, in
    // this debug build, on the engine's threads.
    let deep = (0..5000).map(|i| format!("psuid = {i}")).collect::<Vec<_>>().join(" OR ");
    let wide = (1..=127).map(|i| format!("stratid = {i}")).collect::<Vec<_>>().join(" OR ");
    nhanes_copy(dir.path(), "nhanes2", |t| {
        format!(
            "{t}\n[[periods]]\nname = \"Deep\"\nfilter = \"{deep}\"\n\n[[periods]]\nname = \"Wide\"\nfilter = \"{wide}\"\n"
        )
    });
    let settled = check_over(
        dir.path(),
        &[
            zinc_claim("NHANES II", ALL_1976, EVERYONE, "finalwgt"),
            zinc_claim("NHANES II", "Deep", EVERYONE, "finalwgt"),
            zinc_claim("NHANES II", "Wide", EVERYONE, "finalwgt"),
        ],
    );
    assert_eq!(settled[0].0, "REPRODUCED", "{settled:?}");
    assert_eq!(settled[1].0, "UNVERIFIABLE", "{settled:?}");
    for needle in ["period \\\"Deep\\\"", "study \\\"NHANES II\\\"", "at most"] {
        assert!(settled[1].1.contains(needle), "{needle} not in {}", settled[1].1);
    }
    assert_eq!(settled[2].0, "REPRODUCED", "every stratum is in the wide period: {settled:?}");
}

#[test]
fn breakdown_cells_beyond_one_mask_and_a_broken_cell() {
    let dir = tempdir();
    let many: Vec<String> =
        (1..=70).map(|i| format!("{{ name = \"c{i}\", filter = \"stratid = {i}\" }}")).collect();
    nhanes_copy(dir.path(), "many", |t| {
        format!("{t}\n[[breakdowns]]\nname = \"strata\"\ncells = [{}]\n", many.join(", "))
            .replace("name = \"NHANES II\"", "name = \"Many cells\"")
            .replace("aliases = [\"nhanes2\", \"NHANES 2\"]", "aliases = []")
    });
    nhanes_copy(dir.path(), "broken", |t| {
        format!("{t}\n[[breakdowns]]\nname = \"bad\"\ncells = [{{ name = \"zero\", filter = \"region / (region - region) = 1\" }}]\n")
            .replace("name = \"NHANES II\"", "name = \"Broken cell\"")
            .replace("aliases = [\"nhanes2\", \"NHANES 2\"]", "aliases = []")
    });
    let settled = check_over(
        dir.path(),
        &[
            zinc_claim("Many cells", ALL_1976, EVERYONE, "finalwgt"),
            zinc_claim("Broken cell", ALL_1976, EVERYONE, "finalwgt"),
        ],
    );
    assert_eq!(settled[0].0, "REPRODUCED", "70 cells: {settled:?}");
    assert_eq!(settled[1].0, "UNVERIFIABLE", "{settled:?}");
    assert!(settled[1].1.contains("breakdown \\\"bad\\\" cell \\\"zero\\\""), "{}", settled[1].1);
}

#[test]
fn duplicate_and_colliding_study_names_are_ambiguous() {
    let dir = tempdir();
    nhanes_copy(dir.path(), "nhanes2", |t| t);
    // "nhanes-II" folds like "NHANES II"; "Other Survey" takes NHANES II's alias "nhanes2".
    nhanes_copy(dir.path(), "twin", |t| {
        t.replace("name = \"NHANES II\"", "name = \"nhanes-II\"")
            .replace("aliases = [\"nhanes2\", \"NHANES 2\"]", "aliases = []")
    });
    nhanes_copy(dir.path(), "other", |t| {
        t.replace("name = \"NHANES II\"", "name = \"Other Survey\"")
            .replace("aliases = [\"nhanes2\", \"NHANES 2\"]", "aliases = [\"nhanes2\"]")
    });
    let settled = check_over(
        dir.path(),
        &[
            zinc_claim("NHANES II", ALL_1976, EVERYONE, "finalwgt"),
            zinc_claim("nhanes2", ALL_1976, EVERYONE, "finalwgt"),
            zinc_claim("Other Survey", ALL_1976, EVERYONE, "finalwgt"),
        ],
    );
    assert_eq!(settled[0].0, "UNVERIFIABLE", "{settled:?}");
    assert!(
        settled[0].1.contains("ambiguous")
            && settled[0].1.contains("twin")
            && settled[0].1.contains("nhanes-II"),
        "{}",
        settled[0].1
    );
    assert_eq!(settled[1].0, "UNVERIFIABLE", "{settled:?}");
    assert!(settled[1].1.contains("Other Survey") && settled[1].1.contains("NHANES II"), "{}", settled[1].1);
    assert_eq!(settled[2].0, "REPRODUCED", "{settled:?}");
    let out = recite(&["catalog", "check", "--data", dir.path().to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(code(&out), 1, "{text}");
    assert!(text.contains("\"nhanes-II\"") && text.contains("\"Other Survey\""), "{text}");
}

#[test]
fn a_broken_study_file_fails_only_its_claims() {
    let dir = tempdir();
    // Only the weight the bundled study declares, so that `catalog check` passes it.
    nhanes_copy(dir.path(), "nhanes2", |t| t.replace("\"hugewgt\", \"negwgt\", \"textwgt\"", ""));
    write(dir.path(), "empty/study.toml", "");
    write(dir.path(), "bad/study.toml", "[study]\nname = \"Bad\"\n[[tables]]\nname = 3\n");
    std::fs::create_dir_all(dir.path().join("fifo")).unwrap();
    let made = Command::new("mkfifo").arg(dir.path().join("fifo/study.toml")).status().unwrap();
    assert!(made.success());
    let settled = check_over(
        dir.path(),
        &[
            zinc_claim("NHANES II", ALL_1976, EVERYONE, "finalwgt"),
            zinc_claim("Bad", ALL_1976, EVERYONE, "finalwgt"),
            zinc_claim("Missing", ALL_1976, EVERYONE, "finalwgt"),
        ],
    );
    assert_eq!(settled[0].0, "REPRODUCED", "{settled:?}");
    assert_eq!(settled[1].0, "UNVERIFIABLE");
    assert!(settled[1].1.contains("bad/study.toml") && settled[1].1.contains("line 4"), "{}", settled[1].1);
    assert_eq!(settled[2].0, "UNVERIFIABLE");
    assert!(settled[2].1.contains("empty/study.toml"), "{}", settled[2].1);
    let out = recite(&["catalog", "check", "--data", dir.path().to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(code(&out), 1, "{text}");
    for needle in
        ["✓ NHANES II", "empty/study.toml", "bad/study.toml", "fifo/study.toml: is not a regular file"]
    {
        assert!(text.contains(needle), "{needle} not in {text}");
    }
}

// Hostile inputs and faults (issue 16): each class has its regression test.

fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo").arg(path).status().unwrap().success();
    assert!(ok, "mkfifo {}", path.display());
}

/// The findings of the input whose file ends with `suffix`, as (rule, message) pairs.
fn input_findings(report: &Value, suffix: &str) -> Vec<(String, String)> {
    let input = report["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["file"].as_str().unwrap().ends_with(suffix))
        .unwrap_or_else(|| panic!("no input {suffix} in {report:#}"));
    input["findings"]
        .as_array()
        .map(|f| {
            f.iter()
                .map(|f| {
                    (f["rule"].as_str().unwrap().to_string(), f["message"].as_str().unwrap().to_string())
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn inputs_non_regular_files_are_refused_without_blocking() {
    let dir = tempdir();
    write(dir.path(), "good.jsonl", &jsonl(&[w6_considered()]));
    mkfifo(&dir.path().join("pipe.jsonl"));
    let _socket = std::os::unix::net::UnixListener::bind(dir.path().join("socket.json")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.json")).unwrap();
    let d = dir.path().display().to_string();
    let out = run_bounded(command(&["check", &d, "--format", "json"]), 60);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(input_verdicts(&report, "good.jsonl"), ["REPRODUCED"]);
    for (name, kind) in [("pipe.jsonl", "FIFO"), ("socket.json", "socket"), ("zero.json", "device")] {
        let f = input_findings(&report, name);
        assert_eq!(f.len(), 1, "{name}: {f:?}");
        assert_eq!(f[0].0, "input/not-a-file", "{name}: {f:?}");
        assert!(f[0].1.contains(kind) && f[0].1.contains("not a regular file"), "{name}: {f:?}");
    }
    // A device named directly is refused the same way, never read (a FIFO named directly is
    // read: inputs_named_fifos_are_read_as_process_substitution_gives_them).
    let out = run_bounded(command(&["check", "/dev/zero", "--format", "json"]), 60);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(input_findings(&report, "/dev/zero")[0].1.contains("device"), "{report:#}");
}

#[test]
fn inputs_symlink_loops_are_detected() {
    let dir = tempdir();
    write(dir.path(), "good.jsonl", &jsonl(&[w6_considered()]));
    // a → b → a
    std::os::unix::fs::symlink(dir.path().join("b.json"), dir.path().join("a.json")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("a.json"), dir.path().join("b.json")).unwrap();
    // A folder link to its own ancestor.
    write(dir.path(), "nested/c.jsonl", &jsonl(&[w5_considered()]));
    std::os::unix::fs::symlink(dir.path(), dir.path().join("nested/up")).unwrap();
    let d = dir.path().display().to_string();
    let out = run_bounded(command(&["check", &d, "--format", "json"]), 60);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verdicts(&report), counts(&[("REPRODUCED", 2)]), "each real file once");
    for name in ["a.json", "b.json"] {
        let f = input_findings(&report, name);
        assert!(f.len() == 1 && f[0].0 == "input/unreadable" && f[0].1.contains("symbolic link"), "{f:?}");
    }
    let f = input_findings(&report, "nested/up");
    assert!(f.len() == 1 && f[0].0 == "input/loop" && f[0].1.contains("ancestor"), "{f:?}");
    assert_eq!(report["inputs"].as_array().unwrap().len(), 5, "{report:#}");
}

#[test]
fn inputs_size_and_findings_caps() {
    let dir = tempdir();
    // 100 kB of bytes that are not UTF-8: once a finding per byte (a 34 MB report; 340 MB for
    // 1 MB).
    let binary: Vec<u8> = (0..100_000u32).map(|i| 0x80 | (i % 64) as u8).collect();
    let p = dir.path().join("binary.json");
    std::fs::write(&p, &binary).unwrap();
    let bin = p.display().to_string();
    let out = run_bounded(command(&["check", &bin, "--format", "json"]), 120);
    assert_eq!(code(&out), 1);
    assert!(out.stdout.len() < 200_000, "a {}-byte report for a 100 kB input", out.stdout.len());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = input_findings(&report, "binary.json");
    assert!((101..=102).contains(&f.len()), "the first 100 findings and what was cut, counted: {f:?}");
    assert!(f[..100].iter().all(|(rule, _)| rule == "input/malformed"), "{f:?}");
    for (rule, message) in &f[100..] {
        assert_eq!(rule, "input/findings-capped");
        assert!(message.contains("more"), "{message}");
    }
    assert!(f[100].1.starts_with("99900 more invalid UTF-8"), "{:?}", f[100]);

    // The size cap: a file over it is refused (with its size and the cap), not read.
    let good = write(dir.path(), "good.jsonl", &jsonl(&[w6_considered()]));
    let (code, report) = check_json(&[&good, "--max-input-size", "100"]);
    assert_eq!(code, 1);
    let f = input_findings(&report, "good.jsonl");
    assert!(f.len() == 1 && f[0].0 == "input/too-large" && f[0].1.contains("100 bytes"), "{f:?}");
    let (code, _) = check_json(&[&good, "--max-input-size", "1MiB"]);
    assert_eq!(code, 0);
    // Standard input too.
    let out = recite_stdin(&["check", "-", "--max-input-size", "10", "--format", "json"], good.as_bytes());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(input_findings(&report, "-")[0].0, "input/too-large");
}

#[test]
fn inputs_unreadable_file_or_folder_fails_only_itself() {
    // Root reads through chmod 000; recite runs without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH
    // (setpriv), so permissions bind it as they bind any user.
    let is_root = Command::new("id").arg("-u").output().map(|o| o.stdout == b"0\n").unwrap_or(false);
    let setpriv = Command::new("setpriv").arg("--version").output().is_ok_and(|o| o.status.success());
    if is_root && !setpriv {
        eprintln!("skipped: running as root without setpriv");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir();
    write(dir.path(), "good.jsonl", &jsonl(&[w6_considered()]));
    write(dir.path(), "locked/inner.jsonl", &jsonl(&[w5_considered()]));
    let secret = write(dir.path(), "secret.jsonl", &jsonl(&[w5_considered()]));
    std::fs::set_permissions(dir.path().join("locked"), std::fs::Permissions::from_mode(0o000)).unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    let d = dir.path().display().to_string();
    let args = ["check", &d, "--format", "json"];
    let c = if is_root {
        let mut c = Command::new("setpriv");
        c.args(["--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all"])
            .arg(env!("CARGO_BIN_EXE_recite"))
            .args(args)
            .current_dir(root())
            .env("NO_COLOR", "1")
            .env_remove("RECITE_DATA");
        c
    } else {
        command(&args)
    };
    let out = run_bounded(c, 60);
    std::fs::set_permissions(dir.path().join("locked"), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(input_verdicts(&report, "good.jsonl"), ["REPRODUCED"]);
    for name in ["locked", "secret.jsonl"] {
        let f = input_findings(&report, name);
        assert!(f.len() == 1 && f[0].0 == "input/unreadable" && f[0].1.contains("ermission"), "{f:?}");
    }
}

#[test]
fn output_refuses_inputs_and_non_regular_targets() {
    let dir = tempdir();
    let input = write(dir.path(), "claims.jsonl", &jsonl(&[w6_considered()]));
    let before = std::fs::read(&input).unwrap();
    // -o naming an input (directly, or through a hard link) would destroy it.
    std::fs::hard_link(&input, dir.path().join("link.jsonl")).unwrap();
    for target in [input.clone(), dir.path().join("link.jsonl").display().to_string()] {
        let out = recite(&["check", &input, "-o", &target]);
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        assert!(stderr(&out).contains("is one of the inputs"), "{}", stderr(&out));
        assert_eq!(std::fs::read(&input).unwrap(), before, "the input is untouched");
    }
    // A folder or a socket is refused, not replaced by a regular file.
    let _socket = std::os::unix::net::UnixListener::bind(dir.path().join("socket")).unwrap();
    for target in [dir.path().to_path_buf(), dir.path().join("socket")] {
        let out = run_bounded(command(&["check", &input, "-o", target.to_str().unwrap()]), 60);
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        assert!(stderr(&out).contains("not a regular file"), "{}", stderr(&out));
        let out = recite(&["verify", "examples/citations/nhanes2-zinc.json", "-o", target.to_str().unwrap()]);
        assert_eq!(code(&out), 2, "{}", stderr(&out));
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(dir.path().join("socket")).unwrap().file_type().is_socket());
}

/// Reads a FIFO to its end on a thread: what a report written into it said.
fn drain(fifo: &Path) -> std::thread::JoinHandle<String> {
    let fifo = fifo.to_path_buf();
    std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
}

/// Waits for a thread at one end of `fifo` whose other end recite should have opened; when
/// recite never did, opens that end itself so the thread ends (and the test fails, not hangs).
fn finish<T>(fifo: &Path, thread: std::thread::JoinHandle<T>, open_for_write: bool) -> T {
    let started = Instant::now();
    while !thread.is_finished() && started.elapsed().as_secs() < 5 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    if !thread.is_finished() {
        if open_for_write {
            let _ = std::fs::OpenOptions::new().write(true).open(fifo);
        } else {
            let _ = std::fs::read(fifo);
        }
    }
    thread.join().unwrap()
}

#[test]
fn output_to_dev_null_a_device_or_a_fifo_is_written_into_it() {
    let dir = tempdir();
    let input = write(dir.path(), "claims.jsonl", &jsonl(&[w6_considered()]));
    // Every Unix tool writes to /dev/null; so do check, verify and card.
    for args in [
        vec!["check", input.as_str(), "-o", "/dev/null"],
        vec!["check", input.as_str(), "--format", "html", "--output", "/dev/null"],
        vec!["verify", "examples/citations/versant-w6-considered.json", "-o", "/dev/null"],
    ] {
        let out = run_bounded(command(&args), 120);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{args:?}: the report went to /dev/null");
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device(), "still a device");
    // A FIFO (as `-o >(gzip > r.gz)` gives): the report is written into it, whole.
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let reader = drain(&fifo);
    let out = run_bounded(command(&["check", &input, "--format", "json", "-o", fifo.to_str().unwrap()]), 120);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report: Value = serde_json::from_str(&finish(&fifo, reader, true)).expect("the whole JSON report");
    assert_eq!(input_verdicts(&report, "claims.jsonl"), ["REPRODUCED"]);
    let reader = drain(&fifo);
    let out = run_bounded(
        command(&["verify", "examples/citations/versant-w6-considered.json", "-o", fifo.to_str().unwrap()]),
        120,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(finish(&fifo, reader, true).contains("REPRODUCED"));
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "never renamed over");
}

#[test]
fn inputs_named_fifos_are_read_as_process_substitution_gives_them() {
    let dir = tempdir();
    let good = write(dir.path(), "good.jsonl", &jsonl(&[w6_considered()]));
    let feed = |fifo: &Path, text: String| {
        let fifo = fifo.to_path_buf();
        std::thread::spawn(move || std::fs::write(fifo, text).unwrap())
    };
    // `recite check <(cat claims.jsonl)`: a FIFO named on the command line is read (once, spooled).
    let fifo = dir.path().join("claims.fifo");
    mkfifo(&fifo);
    let writer = feed(&fifo, jsonl(&[w6_considered()]));
    let out = run_bounded(command(&["check", fifo.to_str().unwrap(), &good, "--format", "json"]), 120);
    finish(&fifo, writer, false);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(input_verdicts(&report, "claims.fifo"), ["REPRODUCED"]);
    assert_eq!(input_verdicts(&report, "good.jsonl"), ["REPRODUCED"]);
    // `recite verify <(cat citation.json)`.
    let citation =
        std::fs::read_to_string(root().join("examples/citations/versant-w6-considered.json")).unwrap();
    let writer = feed(&fifo, citation);
    let out = run_bounded(command(&["verify", fifo.to_str().unwrap()]), 120);
    finish(&fifo, writer, false);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("REPRODUCED"), "{}", stdout(&out));
    // Found by walking a folder, a FIFO is still refused unread (no writer: it would block).
    let walked = dir.path().join("walked");
    std::fs::create_dir_all(&walked).unwrap();
    std::fs::copy(&good, walked.join("good.jsonl")).unwrap();
    mkfifo(&walked.join("pipe.jsonl"));
    let out = run_bounded(command(&["check", walked.to_str().unwrap(), "--format", "json"]), 60);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(input_findings(&report, "pipe.jsonl")[0].0, "input/not-a-file");
    assert_eq!(input_verdicts(&report, "good.jsonl"), ["REPRODUCED"]);
}

#[test]
fn output_temporary_file_is_exclusive_and_not_predictable() {
    let dir = tempdir();
    let victim = write(dir.path(), "victim.txt", "keep me\n");
    let report = dir.path().join("report.json");
    // The old temporary name was `.report.json.<pid>.tmp`: plant a symlink there as soon as the
    // process exists; it must never be followed.
    let mut child = command(&["check", EXAMPLES, "--format", "json", "-o", report.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let planted = dir.path().join(format!(".report.json.{}.tmp", child.id()));
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n", "the link's target was overwritten");
    assert!(std::fs::read_to_string(&report).unwrap().contains("\"report_version\""));
    let planted_name = planted.file_name().unwrap().to_str().unwrap().to_string();
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp") && *n != planted_name)
        .collect();
    assert!(names.is_empty(), "temporary files left behind: {names:?}");
}

#[test]
fn output_errors_name_the_requested_path() {
    let dir = tempdir();
    let good = write(dir.path(), "good.jsonl", &jsonl(&[w6_considered()]));
    // A folder that cannot hold the report: the message names the requested path, not a temp file.
    let missing = dir.path().join("no-such-folder").join("report.json");
    let out = recite(&["check", &good, "-o", missing.to_str().unwrap()]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    // (The temporary file was `.report.json.<pid>.tmp`; the test's own folder is `.tmp…` too.)
    assert!(err.contains(missing.to_str().unwrap()) && !err.contains(".report.json."), "{err}");
    // A file where a folder is expected is not "does not exist".
    let out = recite(&["check", &good, "-o", &format!("{good}/report.json")]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(err.contains("not a folder") && !err.contains("does not exist"), "{err}");
    let out = recite(&["check", &good, "--data", &good]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(err.contains("not a folder") && !err.contains("does not exist"), "{err}");
    // A socket named as an input is not "no such file".
    let socket = dir.path().join("named.socket");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let out = run_bounded(command(&["check", socket.to_str().unwrap()]), 60);
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(text.contains("socket") && !text.contains("no such file"), "{text}");
}

/// A claim whose echoed strings carry terminal escapes, bidi overrides and Markdown.
fn hostile_claim() -> Value {
    let evil = "Versant\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}gnp.exe\u{9b}31m ![x](https://evil.example/beacon.png) [click](https://evil.example) <img src=x> | cell";
    json!({
        "result": {"Considered": "44%", evil: 1},
        "citation": versant(W6, evil, json!(4654), "s14r5", "extractFunnel"),
    })
}

#[test]
fn reports_neutralise_control_and_bidi_characters() {
    let dir = tempdir();
    let file = write(dir.path(), "hostile\u{1b}[31m.jsonl", &jsonl(&[hostile_claim()]));
    let out = recite(&["check", &file]);
    assert_eq!(code(&out), 1);
    let text = stdout(&out);
    for bad in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
        assert!(!text.contains(bad), "{bad:?} reaches the text report:\n{text}");
    }
    assert!(text.contains("\\u{1b}") && text.contains("\\u{202e}"), "shown escaped:\n{text}");

    let out = recite(&["check", &file, "--format", "markdown"]);
    let md = stdout(&out);
    for bad in ['\u{1b}', '\u{202e}'] {
        assert!(!md.contains(bad), "{bad:?} in Markdown");
    }
    for active in ["![", "](", "<img", "[click]"] {
        assert!(!md.contains(active), "{active} reaches the Markdown report:\n{md}");
    }
    // Every table row keeps its column count: no `|` from input breaks a cell.
    for l in md.lines().filter(|l| l.starts_with("| **")) {
        let cells = l.replace("\\|", "").matches('|').count();
        assert_eq!(cells, 8, "{l}");
    }
}

#[test]
fn reports_cap_echoed_strings() {
    let dir = tempdir();
    // A 2 MB key (10 MB made a 30 MB report) beside a claim that is not reproduced (so every format shows its details), and
    // a 2 MB citation name (INVALID).
    let key = "k".repeat(2 << 20);
    let echoed = json!({"result": {"Considered": "99%", key.as_str(): 1}, "citation": versant(W6, AWARE, json!(4654), "s14r5", "extractFunnel")});
    let named = json!({"result": {"Considered": "44%"}, "citation": versant(W6, &key, json!(4654), "s14r5", "extractFunnel")});
    let file = write(dir.path(), "big.jsonl", &jsonl(&[echoed, named]));
    for format in ["text", "json", "markdown", "html", "junit"] {
        let out = run_bounded(command(&["check", &file, "--format", format]), 120);
        assert_eq!(code(&out), 1, "{format}: {}", stderr(&out));
        assert!(out.stdout.len() < 100_000, "{format}: a {}-byte report from a 2 MB key", out.stdout.len());
        if ["text", "json", "html"].contains(&format) {
            // These show the key (or its pointer): cut, saying how long it was.
            let body = stdout(&out);
            assert!(body.contains(&format!("kkk… ({}", key.len() / 1000)), "{format}");
        }
    }
}

#[test]
fn closed_stdout_or_stderr_pipe_does_not_panic() {
    for (args, closed) in [
        (vec!["check", EXAMPLES], "stdout"),
        (vec!["check", EXAMPLES], "stderr"),
        (vec!["check", "no-such-file.json"], "stderr"),
        (vec!["check", EXAMPLES, "--data", "no-such-folder"], "stderr"),
        (vec!["verify", "examples/citations/nhanes2-zinc.json"], "stdout"),
        (vec!["catalog", "show"], "stdout"),
        (vec!["extractors"], "stdout"),
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader); // every write to it fails with EPIPE
        let mut c = command(&args);
        c.stdin(Stdio::null());
        if closed == "stdout" {
            c.stdout(writer).stderr(Stdio::piped());
        } else {
            c.stderr(writer).stdout(Stdio::piped());
        }
        let out = c.output().unwrap();
        let code = out.status.code();
        assert!(matches!(code, Some(0..=2)), "{args:?} with a closed {closed}: {code:?} {}", stderr(&out));
    }
    // The shell's way: `2>&- | head -c0`, recite's exit status kept in a file.
    let dir = tempdir();
    let status = dir.path().join("status");
    let bin = env!("CARGO_BIN_EXE_recite");
    for args in [format!("{EXAMPLES} missing.json 2>&-"), format!("{EXAMPLES} 2>&-")] {
        let script = format!("('{bin}' check {args}; echo $? > '{}') | head -c0", status.display());
        let out = Command::new("sh").arg("-c").arg(&script).current_dir(root()).output().unwrap();
        assert!(out.status.success(), "{script}");
        let code = std::fs::read_to_string(&status).unwrap();
        assert!(["0", "1", "2"].contains(&code.trim()), "{script}: exit {code}");
    }
}

/// `datasets/nhanes2` copied into `dir/datasets`.
fn local_datasets(dir: &Path) {
    let to = dir.join("datasets/nhanes2");
    std::fs::create_dir_all(&to).unwrap();
    for e in std::fs::read_dir(root().join("datasets/nhanes2")).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
    }
}

#[test]
fn data_layer_is_named_in_every_format() {
    let zinc = root().join("examples/citations/nhanes2-zinc.json").display().to_string();
    // Bundled (the working directory's ./datasets is the bundled one).
    let (_, report) = check_json(&[&zinc]);
    assert_eq!(report["data_layer"]["source"], "bundled", "{:#}", report["data_layer"]);
    assert!(report["data_layer"]["path"].as_str().unwrap().ends_with("datasets"));
    assert!(report["data_layer"].get("warning").is_none());
    // --data, and RECITE_DATA.
    let data = root().join("datasets").display().to_string();
    let (_, report) = check_json(&[&zinc, "--data", &data]);
    assert_eq!(report["data_layer"]["source"], "flag");
    assert_eq!(report["data_layer"]["path"], data.as_str());
    let mut c = command(&["check", &zinc, "--format", "json"]);
    c.env("RECITE_DATA", &data);
    let report: Value = serde_json::from_slice(&run(c, None).stdout).unwrap();
    assert_eq!(report["data_layer"]["source"], "environment");
    // Every format says it.
    for format in ["text", "markdown", "html", "junit"] {
        let out = recite(&["check", &zinc, "--format", format, "--data", &data]);
        let body = stdout(&out);
        assert!(body.contains("data layer") && body.contains(&data), "{format}:\n{body}");
    }
    let out = recite(&["verify", &zinc, "--data", &data]);
    assert!(stdout(&out).contains("data layer"), "{}", stdout(&out));
}

#[test]
fn data_layer_in_the_working_directory_shadowing_the_bundled_one_is_warned() {
    let dir = tempdir();
    local_datasets(dir.path());
    let zinc = root().join("examples/citations/nhanes2-zinc.json").display().to_string();
    let mut c = command(&["check", &zinc, "--format", "json"]);
    c.current_dir(dir.path());
    let out = run(c, None);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["data_layer"]["source"], "working-directory", "{:#}", report["data_layer"]);
    let warning = report["data_layer"]["warning"].as_str().expect("a warning in the report");
    assert!(warning.contains("bundled"), "{warning}");
    assert!(stderr(&out).contains("shadows the bundled"), "{}", stderr(&out));
}

// The answer-text audit (docs/answers.md)

/// Every stated number of every answer of a JSON report: (text, status).
fn answer_numbers(report: &Value, file_suffix: &str) -> Vec<(String, String)> {
    let input = report["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["file"].as_str().unwrap().ends_with(file_suffix));
    let Some(input) = input else { return Vec::new() };
    input["answers"]
        .as_array()
        .map(|a| a.as_slice())
        .unwrap_or_default()
        .iter()
        .flat_map(|a| a["numbers"].as_array().unwrap().iter())
        .map(|n| (n["text"].as_str().unwrap().to_string(), n["status"].as_str().unwrap().to_string()))
        .collect()
}

/// The second hostile pass: a Task whose `status.message` reuses a history message's id with
/// other text was read as a repeat, so the final answer's numbers were never audited.
#[test]
fn a_status_message_reusing_a_history_id_with_new_text_is_audited_too() {
    let file = "tests/fixtures/a2a/status-message-reuses-history-id.json";
    let (_, report) = check_json(&[file]);
    let numbers = answer_numbers(&report, "status-message-reuses-history-id.json");
    assert!(numbers.contains(&("44%".into(), "TRACED".into())), "{numbers:?}");
    let n71: Vec<_> = numbers.iter().filter(|(t, _)| t == "71%").collect();
    assert_eq!(n71.len(), 1, "the status message's 71% is audited: {numbers:?}");
    assert!(matches!(n71[0].1.as_str(), "MISQUOTED" | "UNCITED"), "{numbers:?}");
    let out = recite(&["check", file, "--fail-on", "misquoted,uncited"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn answers_say_47_for_a_cited_44_is_misquoted_and_fails_fail_on_misquoted() {
    let (_, report) = check_json(&["tests/fixtures/answers/misquoted.json"]);
    let numbers = answer_numbers(&report, "misquoted.json");
    assert!(numbers.contains(&("47%".into(), "MISQUOTED".into())), "{numbers:?}");
    assert!(numbers.contains(&("4,654".into(), "TRACED".into())), "{numbers:?}");
    assert_eq!(report["summary"]["answer_numbers"]["MISQUOTED"], 1);
    // `47% would consider it` names Considered, not the conversion Considered → Purchased.
    let n47 = &report["inputs"][0]["answers"][0]["numbers"][1];
    assert_eq!(
        (&n47["text"], &n47["measure"], &n47["ambiguous"]),
        (&json!("47%"), &json!("Considered"), &json!(false))
    );
    assert_eq!(check_code(&["tests/fixtures/answers/misquoted.json", "--fail-on", "misquoted"]), 1);
    assert_eq!(check_code(&["tests/fixtures/answers/misquoted.json", "--fail-on", "uncited"]), 0);
    // A typo is an error that names it and lists the answer statuses too.
    let out = recite(&["check", "tests/fixtures/answers/misquoted.json", "--fail-on", "misquote"]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(err.contains("\"misquote\"") && err.contains("traced-to-discrepant"), "{err}");
}

#[test]
fn answers_true_number_given_another_population_period_or_brand_is_misattributed() {
    let file = "tests/fixtures/answers/misattributed.json";
    let (_, report) = check_json(&[file]);
    let numbers = answer_numbers(&report, "misattributed.json");
    let want: Vec<(String, String)> = [
        // `women` is the only population the sentence names: the n = 4,654 (aware adults) is
        // given to them too (it was TRACED, being nearer no population word).
        ("44%", "MISATTRIBUTED"),
        ("4,654", "MISATTRIBUTED"),
        ("44%", "MISATTRIBUTED"),
        ("44%", "MISATTRIBUTED"),
        ("44%", "TRACED"),
    ]
    .iter()
    .map(|(t, s)| (t.to_string(), s.to_string()))
    .collect();
    assert_eq!(numbers, want);
    let n = &report["inputs"][0]["answers"][0]["numbers"];
    for (i, said) in [(0, "Women 18-74"), (2, "W5 (March 2026)"), (3, "Brand funnel: Northwind")] {
        let a = n[i]["attribution"].as_str().unwrap_or_default();
        assert!(a.contains(said), "number {i}: {a:?} should name {said}");
    }
    assert!(n[0]["attribution"].as_str().unwrap().contains("Adults 18-74, aware of brand"), "{n}");
    assert_eq!(report["summary"]["answer_numbers"]["MISATTRIBUTED"], 4);
    assert_eq!(check_code(&[file, "--fail-on", "misattributed"]), 1);
    assert_eq!(check_code(&[file, "--fail-on", "misquoted,uncited"]), 0);
    for (format, shown) in [
        ("text", "MISATTRIBUTED"),
        ("markdown", "**MISATTRIBUTED**"),
        ("html", "<mark class=\"ans MISATTRIBUTED\""),
        ("junit", "type=\"MISATTRIBUTED\""),
        ("jsonl", "\"MISATTRIBUTED\""),
    ] {
        let out = stdout(&recite(&["check", file, "--format", format]));
        assert!(out.contains(shown), "{format}: no {shown}\n{out}");
        assert!(out.contains("Women 18"), "{format}: does not say what the sentence attributed");
    }
}

#[test]
fn answers_population_the_catalog_has_no_word_for_is_attribution_unsure_in_every_format() {
    // Before: `Among men, 44%` was TRACED to the aware adults' 44% (the catalog says `Male`).
    let file = "tests/fixtures/answers/attribution-unsure.json";
    let (_, report) = check_json(&[file]);
    let numbers = answer_numbers(&report, "attribution-unsure.json");
    let want: Vec<(String, String)> = [("44%", "ATTRIBUTION_UNSURE"), ("4,654", "TRACED"), ("44%", "TRACED")]
        .iter()
        .map(|(t, s)| (t.to_string(), s.to_string()))
        .collect();
    assert_eq!(numbers, want);
    let n = &report["inputs"][0]["answers"][0]["numbers"][0];
    let a = n["attribution"].as_str().unwrap_or_default();
    assert!(a.contains("among men") && a.contains("Adults 18-74, aware of brand"), "{n}");
    assert_eq!(report["summary"]["answer_numbers"]["ATTRIBUTION_UNSURE"], 1);
    assert_eq!(check_code(&[file, "--fail-on", "attribution-unsure"]), 1);
    assert_eq!(check_code(&[file, "--fail-on", "misattributed,misquoted,uncited"]), 0);
    for (format, shown) in [
        ("text", "ATTRIBUTION_UNSURE"),
        ("markdown", "**ATTRIBUTION_UNSURE**"),
        ("html", "<mark class=\"ans ATTRIBUTION_UNSURE\""),
        ("junit", "44% ATTRIBUTION_UNSURE"),
        ("jsonl", "\"ATTRIBUTION_UNSURE\""),
    ] {
        let out = stdout(&recite(&["check", file, "--format", format]));
        assert!(out.contains(shown), "{format}: no {shown}\n{out}");
        assert!(out.contains("among men"), "{format}: does not say what the sentence attributed");
    }
}

#[test]
fn answers_a_number_no_tool_returned_is_uncited() {
    let (_, report) = check_json(&["tests/fixtures/answers/uncited.json"]);
    let numbers = answer_numbers(&report, "uncited.json");
    assert!(numbers.contains(&("58%".into(), "UNCITED".into())), "{numbers:?}");
    assert!(numbers.contains(&("44%".into(), "TRACED".into())), "{numbers:?}");
    assert_eq!(check_code(&["tests/fixtures/answers/uncited.json", "--fail-on", "misquoted,uncited"]), 1);
}

#[test]
fn answers_moca_cited_message_is_traced_to_its_cited_records() {
    let file = "tests/fixtures/answers/moca-cited.jsonl";
    let (_, report) = check_json(&[file]);
    let numbers = answer_numbers(&report, "moca-cited.jsonl");
    // 30 is in record [1]'s text (the Reader's: the event left it out); record [2] states 90;
    // no record states 25%.
    let want: Vec<(String, String)> = [("30", "TRACED"), ("60", "MISQUOTED"), ("25%", "UNCITED")]
        .iter()
        .map(|(t, s)| (t.to_string(), s.to_string()))
        .collect();
    assert_eq!(numbers, want);
    let n = &report["inputs"][0]["answers"][0]["numbers"];
    assert_eq!(n[0]["record"], json!("[1] https://example.com/moca/support-kb@4.2.0#refund-window.md"));
    assert_eq!((&n[1]["claimed"], &n[1]["ambiguous"]), (&json!("90"), &json!(false)));
    assert!(n[1]["record"].as_str().unwrap().starts_with("[2] "), "{n}");
    assert!(n[2].get("record").is_none(), "{n}");
    // The markers [1] and [2] are not stated numbers; the log keeps the MOCA rules.
    let findings = &report["inputs"][0]["findings"];
    assert!(findings.as_array().is_none_or(|f| f.is_empty()), "{findings}");
    assert_eq!(check_code(&[file, "--fail-on", "misquoted"]), 1);
    assert_eq!(check_code(&[file, "--fail-on", "traced-to-discrepant,traced-unverified"]), 0);
    let html = stdout(&recite(&["check", file, "--format", "html"]));
    assert!(html.contains("<mark class=\"ans MISQUOTED\""), "the HTML highlights the misquote");
}

#[test]
fn answers_of_the_bundled_examples_all_have_a_status_in_every_format() {
    let (code, report) = check_json(&["examples/transcripts/", "--fail-on", "misquoted,uncited"]);
    assert_eq!(code, 0, "the bundled answers quote their citations");
    for file in ["agui-run.sse", "a2a-v03-task.json", "a2a-v10-stream.sse"] {
        let numbers = answer_numbers(&report, file);
        assert!(!numbers.is_empty(), "{file}: no answer number");
        assert!(numbers.iter().all(|(_, s)| !s.is_empty()), "{file}: {numbers:?}");
    }
    let agui = answer_numbers(&report, "agui-run.sse");
    for (text, status) in
        [("69.4%", "TRACED"), ("-25.1", "TRACED_UNVERIFIED"), ("3,241", "TRACED_UNVERIFIED")]
    {
        assert!(agui.contains(&(text.into(), status.into())), "{text} {status}: {agui:?}");
    }
    // `from 30.6% to 27%` is a change: each value traced on its own, not a range fitting both.
    let v10 = answer_numbers(&report, "a2a-v10-stream.sse");
    for (text, status) in [("30.6%", "TRACED_TO_DISCREPANT"), ("27%", "TRACED")] {
        assert!(v10.contains(&(text.into(), status.into())), "{text} {status}: {v10:?}");
    }
    let total: usize = ["agui-run.sse", "a2a-v03-task.json", "a2a-v10-stream.sse"]
        .iter()
        .map(|f| answer_numbers(&report, f).len())
        .sum();
    for format in ["text", "markdown", "html", "junit"] {
        let out = stdout(&recite(&["check", "examples/transcripts/", "--format", format]));
        let shown =
            ["TRACED", "MISQUOTED", "UNCITED", "RECOMPUTED_ONLY", "MISATTRIBUTED", "ATTRIBUTION_UNSURE"]
                .iter()
                .map(|s| out.matches(s).count())
                .sum::<usize>();
        assert!(shown >= total, "{format}: {shown} statuses shown for {total} numbers");
    }
    let html = stdout(&recite(&["check", "examples/transcripts/agui-run.sse", "--format", "html"]));
    assert!(
        html.contains("<mark class=\"ans TRACED\" tabindex=\"0\" data-tip=\""),
        "numbers highlighted in place"
    );
    assert!(!html.contains("<script"));
}

#[test]
fn answers_only_lists_every_number_with_its_status() {
    let out = recite(&["check", "tests/fixtures/answers/misquoted.json", "--answers-only"]);
    let text = stdout(&out);
    assert!(text.contains("47% MISQUOTED claim #1 Considered (claimed 0.44, recomputed 44%)"), "{text}");
    assert!(!text.contains("REPRODUCED"), "only the answers: {text}");
}

#[test]
fn answers_hostile_text_stays_inert_in_text_markdown_and_junit() {
    // The misquoting fixture with markup, a Markdown link, a right-to-left override and a
    // terminal escape in its answer and its message id.
    let hostile =
        "<script>alert(1)</script> [x](javascript:alert(1)) ![i](http://example.com/i.png) \u{202e}\u{1b}[2J";
    let mut t: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/fixtures/answers/misquoted.json")).unwrap(),
    )
    .unwrap();
    let text = t.pointer_mut("/result/history/1/parts/0/text").unwrap();
    *text = Value::String(format!("{hostile} {}", text.as_str().unwrap()));
    *t.pointer_mut("/result/history/1/messageId").unwrap() = Value::String(format!("m2{hostile}"));
    let dir = tempdir();
    let file = write(dir.path(), "hostile.json", &serde_json::to_string(&t).unwrap());
    let (_, report) = check_json(&[&file]);
    assert!(
        answer_numbers(&report, "hostile.json").contains(&("47%".into(), "MISQUOTED".into())),
        "{report:#}"
    );
    for format in ["text", "markdown", "junit"] {
        for extra in [&[][..], &["--answers-only"][..]] {
            let mut args = vec!["check", file.as_str(), "--format", format];
            args.extend_from_slice(extra);
            let out = stdout(&recite(&args));
            assert!(out.contains("MISQUOTED"), "{format} {extra:?}: {out}");
            assert!(!out.contains('\u{1b}'), "{format} {extra:?}: a control as it is");
            // JUnit XML carries bidi characters as text (docs/design.md); the others show them.
            if format != "junit" || !extra.is_empty() {
                assert!(!out.contains('\u{202e}'), "{format} {extra:?}: a bidi override as it is");
            }
            if format != "text" && extra.is_empty() {
                assert!(!out.contains("<script"), "{format}: markup as it is: {out}");
            }
            if format == "markdown" && extra.is_empty() {
                assert!(!out.contains("](javascript") && !out.contains("!["), "a live Markdown link: {out}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Streamed reports

/// "40% of aware adults considered Versant in W6": DISCREPANT, with explanations to find.
fn w6_considered_wrong() -> Value {
    json!({"result": {"Considered": "40%"}, "citation": versant(W6, AWARE, json!(4654), "s14r5", "extractFunnel")})
}

/// JSON lines of plain pairs (read line by line) and the same with one malformed line (read
/// whole): right, wrong and unresolvable claims, a citation-less result, an unrecognised line.
fn streamed_inputs(dir: &Path) -> [String; 2] {
    let mut lines = Vec::new();
    for i in 0..30 {
        lines.push(match i % 5 {
            0 => w5_considered(),
            1 | 2 => w6_considered_wrong(),
            3 => misspelt_column(),
            _ => w6_considered(),
        });
    }
    lines.push(json!({"result": {"Considered": "44%"}}));
    lines.push(json!(42));
    let clean = jsonl(&lines);
    let broken = format!("{clean}{{not json\n{}", jsonl(&lines[..5]));
    [write(dir, "clean.jsonl", &clean), write(dir, "broken.jsonl", &broken)]
}

#[test]
fn every_format_streams_the_same_report_whatever_the_chunk_size() {
    let dir = tempdir();
    let [clean, broken] = streamed_inputs(dir.path());
    for format in ["text", "json", "jsonl", "markdown", "html", "junit"] {
        let at = |chunk: &str| {
            let args =
                ["check", EXAMPLES, "tests/fixtures", &clean, &broken, "--format", format, "--chunk", chunk];
            recite(&[&args[..], &["--color", "never"]].concat())
        };
        let (one, many) = (at("1"), at("100000"));
        assert!(one.stdout.len() > 10_000, "{format}: {}", stderr(&one));
        assert_eq!(code(&one), code(&many), "{format}");
        assert!(one.stdout == many.stdout, "{format}: the report differs between chunks of 1 and of 100000");
    }
}

#[test]
fn the_streamed_json_report_equals_the_whole_report_value() {
    use recite::report::{self, ClaimReport, Input, Report};
    use recite::settle::pipeline::{self, Claim};
    let dir = tempdir();
    let lines: Vec<Value> =
        (0..12).map(|i| [w5_considered(), w6_considered_wrong(), misspelt_column()][i % 3].clone()).collect();
    let file = write(dir.path(), "claims.jsonl", &jsonl(&lines));
    let data = root().join("datasets");
    let catalog = recite::catalog::Catalog::load(&data).unwrap();
    let registry = recite::extractor::Registry::load(None).unwrap();
    let engine = recite::engine::Engine::new();
    // The old way: the whole document, every claim settled at once, one report value.
    let doc = recite::transcript::read(&file, &std::fs::read_to_string(&file).unwrap());
    let claims: Vec<Claim> = doc
        .items
        .iter()
        .map(|i| Claim {
            citation: i.citation.clone().unwrap(),
            numbers: i.result.as_ref().map(recite::claim::leaves).unwrap_or_default(),
        })
        .collect();
    let (settlements, stats) =
        pipeline::settle_all(&claims, &catalog, &registry, &engine, Default::default());
    let mut coverage = report::Coverage::default();
    let claims = doc
        .items
        .iter()
        .zip(settlements)
        .map(|(i, settlement)| {
            let numbers = i.result.as_ref().map_or(0, |r| recite::claim::leaves(r).len());
            let parts = report::ClaimParts { result: i.result.is_some(), citation: true, numbers };
            coverage.add(&report::Coverage::of_claim(parts, &settlement));
            ClaimReport { locator: i.locator.clone(), settlement }
        })
        .collect();
    let input = Input {
        coverage,
        file: file.clone(),
        format: Some(doc.format),
        claims,
        findings: doc.findings,
        moca: Vec::new(),
        answers: Vec::new(),
        turns: Vec::new(),
    };
    let whole = report::json::render_value(&Report::new(vec![input], stats));
    // Streamed, a claim at a time, into a file.
    let out = tempfile::NamedTempFile::new().unwrap();
    let mut w = report::json::Writer::new(Box::new(out.reopen().unwrap()));
    let opts = recite::check::Options {
        settle: Default::default(),
        held_bytes: recite::check::HELD_BYTES,
        chunk: 1,
        max_input_size: u64::MAX,
        read: &|p| std::fs::read(p).map_err(|e| ("input/unreadable", e.to_string())),
        record_schema: None,
        data_layer: None,
        timings: false,
        progress: &|_| {},
    };
    let source = recite::check::Source::File { name: file.clone(), path: file };
    let ran = recite::check::run(&[source], &catalog, &registry, &engine, &opts, &mut w).unwrap();
    drop(w);
    assert_eq!(ran.summary.claims, 12);
    let streamed = std::fs::read_to_string(out.path()).unwrap();
    assert!(whole.contains("DISCREPANT") && whole.contains("\"explanations\""), "{whole}");
    assert!(streamed == whole, "streamed:\n{streamed}\nwhole:\n{whole}");
}

/// The JSON report of `recite::check::run` over `files`, pass 1 keeping at most `held_bytes` of
/// their lines parsed; `between` runs after pass 1 (on its "scanning" progress line).
fn check_held(
    files: &[String],
    held_bytes: usize,
    max_input_size: u64,
    between: &(dyn Fn() + Sync),
) -> String {
    let catalog = recite::catalog::Catalog::load(&root().join("datasets")).unwrap();
    let registry = recite::extractor::Registry::load(None).unwrap();
    let engine = recite::engine::Engine::new();
    let out = tempfile::NamedTempFile::new().unwrap();
    let mut w = recite::report::json::Writer::new(Box::new(out.reopen().unwrap()));
    let progress = |m: &str| {
        if m.starts_with("scanning") {
            between()
        }
    };
    let opts = recite::check::Options {
        settle: Default::default(),
        held_bytes,
        chunk: 7,
        max_input_size,
        read: &|p| std::fs::read(p).map_err(|e| ("input/unreadable", e.to_string())),
        record_schema: None,
        data_layer: None,
        timings: false,
        progress: &progress,
    };
    let sources: Vec<_> =
        files.iter().map(|p| recite::check::Source::File { name: p.clone(), path: p.clone() }).collect();
    recite::check::run(&sources, &catalog, &registry, &engine, &opts, &mut w).unwrap();
    drop(w);
    std::fs::read_to_string(out.path()).unwrap()
}

#[test]
fn json_lines_held_from_the_first_pass_or_read_again_make_the_same_report() {
    let dir = tempdir();
    let [clean, _] = streamed_inputs(dir.path());
    // A second input with a line over --max-input-size (a finding, not read) among its claims.
    let mut lines: Vec<Value> =
        (0..9).map(|i| [w6_considered_wrong(), w5_considered()][i % 2].clone()).collect();
    let mut long = w6_considered();
    long["padding"] = json!("x".repeat(3_000));
    lines.insert(4, long);
    let other = write(dir.path(), "other.jsonl", &jsonl(&lines));
    let files = [clean.clone(), other];
    let first = std::fs::metadata(&clean).unwrap().len() as usize;
    // Nothing held; the first input held and not the second; both held.
    let reports: Vec<String> =
        [0, first, usize::MAX].map(|held| check_held(&files, held, 2048, &|| {})).into();
    let r: Value = serde_json::from_str(&reports[0]).unwrap();
    let inputs = r["inputs"].as_array().unwrap();
    assert_eq!(inputs[0]["claims"].as_array().unwrap().len(), 31, "{r:#}");
    assert_eq!(inputs[1]["claims"].as_array().unwrap().len(), 9, "{r:#}");
    assert_eq!(inputs[1]["findings"][0]["rule"], "input/record-too-large", "{r:#}");
    assert!(reports[0].contains("\"explanations\""), "the wrong claims are explained");
    for (held, report) in ["the first input", "both inputs"].iter().zip(&reports[1..]) {
        assert!(*report == reports[0], "with {held} held the report differs from reading again");
    }
}

#[test]
fn a_json_lines_input_is_parsed_once_so_a_rewrite_between_the_passes_changes_nothing() {
    let dir = tempdir();
    let file = write(dir.path(), "claims.jsonl", &jsonl(&vec![w5_considered(); 6]));
    // After pass 1 the file is rewritten with claims on another period, whose sums no pass asked for.
    let rewrite = || std::fs::write(&file, jsonl(&vec![w6_considered(); 6])).unwrap();
    let held: Value =
        serde_json::from_str(&check_held(std::slice::from_ref(&file), usize::MAX, u64::MAX, &rewrite))
            .unwrap();
    let held_claims = held["inputs"][0]["claims"].as_array().unwrap();
    assert_eq!(held_claims.len(), 6, "{held:#}");
    assert!(
        held_claims.iter().all(|c| c["verdict"] == "REPRODUCED" && c["rerun"]["period"].as_str().unwrap().starts_with("W5")),
        "{held:#}"
    );
    // Read again, the same rewrite is seen, and said: no claim passes on sums it never had.
    std::fs::write(&file, jsonl(&vec![w5_considered(); 6])).unwrap();
    let again: Value =
        serde_json::from_str(&check_held(std::slice::from_ref(&file), 0, u64::MAX, &rewrite)).unwrap();
    let again_claims = again["inputs"][0]["claims"].as_array().unwrap();
    assert_eq!(again_claims.len(), 6, "{again:#}");
    assert!(again_claims.iter().all(|c| c["verdict"] == "UNVERIFIABLE"), "{again:#}");
    assert!(again.to_string().contains("the input changed while it was being checked"), "{again:#}");
}

#[test]
fn json_lines_stream_past_max_input_size_and_a_line_over_it_is_refused_with_its_number() {
    // Once, --max-input-size capped JSON lines like a whole document: a 1M-claim file (365 MB)
    // was "larger than --max-input-size; not read", though it streams in bounded memory.
    let dir = tempdir();
    let lines: Vec<Value> = (0..40).map(|i| [w5_considered(), w6_considered()][i % 2].clone()).collect();
    let file = write(dir.path(), "claims.jsonl", &jsonl(&lines));
    assert!(std::fs::metadata(&file).unwrap().len() > 4 * 1024);
    let out = recite(&["check", &file, "--format", "json", "--max-input-size", "2KiB"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let r = super::support::report(&out);
    assert_eq!(claims(&r).len(), 40);
    assert!(claims(&r).iter().all(|c| c["verdict"] == "REPRODUCED"), "{r:#}");
    assert!(findings(&r).is_empty(), "{r:#}");
    // One line longer than the bound is refused, naming its line; the others are read.
    let mut long = w5_considered();
    long["padding"] = json!("x".repeat(3_000));
    let mut with_long = lines.clone();
    with_long[6] = long;
    let file = write(dir.path(), "long.jsonl", &jsonl(&with_long));
    let out = recite(&["check", &file, "--format", "json", "--max-input-size", "2KiB"]);
    assert_eq!(code(&out), 1, "a MUST finding: {}", stderr(&out));
    let r = super::support::report(&out);
    assert_eq!(claims(&r).len(), 39);
    let f = findings(&r);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0]["rule"], "input/record-too-large");
    assert_eq!(f[0]["level"], "MUST");
    assert_eq!(f[0]["locator"]["line"], 7, "{f:?}");
    assert!(
        f[0]["message"].as_str().unwrap().starts_with("line 7 is longer than --max-input-size (2048 bytes")
    );
    // A document that must be held whole is still capped.
    let doc = write(dir.path(), "doc.json", &serde_json::to_string_pretty(&Value::Array(lines)).unwrap());
    let out = recite(&["check", &doc, "--format", "json", "--max-input-size", "2KiB"]);
    let f = findings(&super::support::report(&out));
    assert_eq!(f[0]["rule"], "input/too-large", "{f:?}");
}

#[test]
fn engine_timeout_beyond_a_day_or_zero_is_refused_saying_the_range() {
    // Once, --engine-timeout 18446744073709551615 was taken: a deadline that bounds nothing.
    for value in ["0", "86401", "18446744073709551615", "18446744073709551616", "-5", "ten"] {
        let out = recite(&["check", "examples/transcripts/", &format!("--engine-timeout={value}")]);
        let err = stderr(&out);
        assert_eq!(code(&out), 2, "{value}: {err}");
        assert!(err.contains("--engine-timeout"), "{value}: {err}");
        assert!(err.contains("from 1 to 86400"), "{value}: {err}");
    }
    let mut c = command(&["check", "examples/transcripts/"]);
    c.env("RECITE_ENGINE_TIMEOUT", "99999999");
    let out = super::support::run(c, None);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("from 1 to 86400"), "{}", stderr(&out));
    for fine in ["1", "86400"] {
        let out = recite(&["check", "examples/transcripts/", "--engine-timeout", fine, "--format", "json"]);
        assert_ne!(code(&out), 2, "{fine}: {}", stderr(&out));
    }
}

#[test]
fn answers_of_two_thousand_long_replies_are_audited_in_bounded_memory() {
    // Once, every answer of an input was traced and held, and its report built as one value:
    // 2,000 answers of 5 KB (320,000 stated numbers) took 1.5 GB and 34 s in a debug build.
    // Now at most answers::MAX_INPUT_NUMBERS are traced; the rest are counted and reported.
    let unit = "Among adults 18-74 who are aware of Versant (n=4,654), 44% would consider it; \
                familiarity is 69.4% and Corvana reaches 31%. ";
    let text: String = unit.repeat(5_000 / unit.len() + 1).chars().take(5_000).collect();
    let citation = versant(W6, AWARE, json!(4654), "s14r5", "extractFunnel");
    let mut history = Vec::new();
    for i in 0..2_000 {
        history.push(json!({"kind": "message", "messageId": format!("u{i}"), "role": "user",
                            "parts": [{"kind": "text", "text": "And the funnel?"}]}));
        history.push(json!({"kind": "message", "messageId": format!("a{i}"), "role": "agent", "parts": [
            {"kind": "text", "text": text},
            {"kind": "data", "data": {"Considered": 0.44}},
            {"kind": "data", "data": citation, "metadata": {"mimeType": "application/vnd.upperhand.citations+json"}}]}));
    }
    let task = json!({"jsonrpc": "2.0", "id": "t", "result": {"kind": "task", "id": "task-1", "contextId": "c",
                      "status": {"state": "completed"}, "history": history}});
    let dir = tempdir();
    let file = write(dir.path(), "long.json", &task.to_string());
    let out = super::support::recite_within_memory(700 << 20, &["check", &file, "--format", "json"]);
    assert_eq!(code(&out), 1, "a MUST finding fails the run: {}", stderr(&out));
    let r = super::support::report(&out);
    let answers = r["inputs"][0]["answers"].as_array().unwrap();
    let per_answer = answers[0]["numbers"].as_array().unwrap().len();
    let audited: usize = answers.iter().map(|a| a["numbers"].as_array().unwrap().len()).sum();
    assert_eq!(audited, 100_000);
    // Every number the answers state is audited or counted in a MUST finding.
    let mut not_audited = 0;
    for f in findings(&r) {
        assert_eq!(
            (f["rule"].as_str(), f["level"].as_str()),
            (Some("answers/not-audited"), Some("MUST")),
            "{f}"
        );
        let m = f["message"].as_str().unwrap();
        let words: Vec<&str> = m.split_whitespace().collect();
        let after = |w: &str| words.iter().position(|x| *x == w).map(|i| words[i + 1]);
        not_audited += match after("state") {
            Some(n) if m.contains("more answer(s)") => n.parse::<usize>().unwrap(),
            _ => {
                let found: usize = after("states").unwrap().parse().unwrap();
                let first: usize = after("first").unwrap().parse().unwrap();
                found - first
            }
        };
    }
    assert_eq!(audited + not_audited, 2_000 * per_answer);
}

#[test]
fn the_reports_write_answers_one_at_a_time_as_the_whole_value_would() {
    // Once, each report built one JSON value of all an input's answers (about 2.5 KB a stated
    // number, 1.67 GB for 2,000 answers of 5 KB); now each answer's value is built alone. The
    // bytes must be those of the whole value: answer texts past 65,536 characters and ids past
    // 1,000 cut as before.
    use recite::answers;
    use recite::input::Turn;
    use recite::report::{self, Input, Report};
    let long = format!("{}Consideration is 44.2% and 47%.", "word ".repeat(14_000));
    let texts =
        ["Consideration is 44.2% (n = 4,654), familiarity 69.4%.", long.as_str(), "Up 2.8 points; 31%."];
    let turns: Vec<Turn> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| Turn {
            role: "assistant".into(),
            text: t.to_string(),
            message_id: Some(format!("{i}{}", "x".repeat(if i == 1 { 1_500 } else { 3 }))),
            ..Turn::default()
        })
        .collect();
    let audit = answers::audit(&turns, &[]);
    assert_eq!(audit.answers.len(), 3);
    let input = |file: &str| Input {
        file: file.into(),
        format: None,
        claims: Vec::new(),
        findings: Vec::new(),
        moca: Vec::new(),
        answers: audit.answers.clone(),
        coverage: Default::default(),
        turns: Vec::new(),
    };
    let r = Report::new(vec![input("a.json"), input("b.json")], Default::default());
    let streamed = report::json::render(&r);
    assert!(streamed == report::json::render_value(&r), "{streamed}");
    assert!(streamed.contains("… (") && streamed.contains("44.2%"), "the long text and id are cut");
    // JSON lines and the answers-only JSON carry the same answers.
    let whole: Value = serde_json::from_str(&streamed).unwrap();
    let want = &whole["inputs"][0]["answers"];
    let lines = recite::report::stream::render_whole(&r, report::jsonl::Writer::new);
    let input_line: Value =
        serde_json::from_str(lines.lines().find(|l| l.contains("\"record\":\"input\"")).unwrap()).unwrap();
    assert_eq!(&input_line["answers"], want);
    assert_eq!(input_line["coverage"], whole["inputs"][0]["coverage"]);
    let only = recite::report::stream::render_whole(&r, |out| report::answers_only::Writer::new(out, true));
    let only: Value = serde_json::from_str(&only).unwrap();
    assert_eq!(&only["inputs"][1]["answers"], want);
    assert_eq!(only["inputs"][1]["file"], "b.json");
}

/// Every claim a run over the bundled examples, the fixtures and `streamed_inputs` settles.
fn settled_claims(dir: &Path) -> Vec<recite::report::ClaimReport> {
    use recite::report::stream::{Closing, InputHead, InputTail, Writer};
    struct Collect(Vec<recite::report::ClaimReport>);
    impl Writer for Collect {
        fn begin_input(&mut self, _: InputHead<'_>) -> std::io::Result<()> {
            Ok(())
        }
        fn claim(&mut self, c: &recite::report::ClaimReport) -> std::io::Result<()> {
            self.0.push(c.clone());
            Ok(())
        }
        fn end_input(&mut self, _: InputTail<'_>) -> std::io::Result<()> {
            Ok(())
        }
        fn finish(&mut self, _: Closing<'_>) -> std::io::Result<()> {
            Ok(())
        }
    }
    let [clean, _] = streamed_inputs(dir);
    let catalog = recite::catalog::Catalog::load(&root().join("datasets")).unwrap();
    let registry = recite::extractor::Registry::load(None).unwrap();
    let engine = recite::engine::Engine::new();
    let opts = recite::check::Options {
        settle: Default::default(),
        held_bytes: recite::check::HELD_BYTES,
        chunk: 1,
        max_input_size: u64::MAX,
        read: &|p| std::fs::read(p).map_err(|e| ("input/unreadable", e.to_string())),
        record_schema: None,
        data_layer: None,
        timings: false,
        progress: &|_| {},
    };
    let sources: Vec<recite::check::Source> = std::fs::read_dir(root().join(EXAMPLES))
        .unwrap()
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .chain([clean])
        .map(|p| recite::check::Source::File { name: p.clone(), path: p })
        .collect();
    let mut all = Collect(Vec::new());
    recite::check::run(&sources, &catalog, &registry, &engine, &opts, &mut all).unwrap();
    all.0
}

#[test]
fn every_format_writes_a_chunk_rendered_in_parallel_as_it_writes_claims_one_by_one() {
    use recite::report::stream::{Closing, InputHead, InputTail};
    use recite::report::{ReportFormat, Summary};
    let dir = tempdir();
    let mut claims = settled_claims(dir.path());
    // Enough claims that rayon splits the chunk between threads many times over.
    while claims.len() < 2_000 {
        claims.extend_from_slice(&claims.clone());
    }
    let verdicts: std::collections::BTreeSet<_> = claims.iter().map(|c| c.settlement.verdict).collect();
    assert!(verdicts.len() >= 4, "{verdicts:?}");
    let formats = [
        ReportFormat::Text,
        ReportFormat::Json,
        ReportFormat::Jsonl,
        ReportFormat::Markdown,
        ReportFormat::Html,
        ReportFormat::Junit,
    ];
    for format in formats {
        let write = |chunked: bool| {
            let out = tempfile::NamedTempFile::new().unwrap();
            let options = recite::report::WriterOptions::default();
            let mut w = recite::report::writer(format, options, Box::new(out.reopen().unwrap()));
            w.begin_input(InputHead { file: "claims.jsonl", format: None, turns: &[] }).unwrap();
            if chunked {
                claims.chunks(700).for_each(|c| w.claims(c).unwrap());
            } else {
                claims.iter().for_each(|c| w.claim(c).unwrap());
            }
            w.end_input(InputTail { findings: &[], moca: &[], answers: &[], coverage: Default::default() })
                .unwrap();
            let summary = Summary { claims: claims.len(), ..Summary::default() };
            let stats = Default::default();
            w.finish(Closing {
                summary: &summary,
                stats: &stats,
                data_layer: None,
                timings: None,
                inputs: 1,
            })
            .unwrap();
            drop(w);
            std::fs::read(out.path()).unwrap()
        };
        let (one_by_one, chunked) = (write(false), write(true));
        assert!(one_by_one.len() > 100_000, "{format:?}: {} bytes", one_by_one.len());
        assert!(one_by_one == chunked, "{format:?}: chunks rendered in parallel differ from claim by claim");
    }
}

#[test]
fn jsonl_writes_a_line_per_claim_then_per_input_then_the_summary() {
    let dir = tempdir();
    let [clean, _] = streamed_inputs(dir.path());
    let out = recite(&["check", EXAMPLES, &clean, "--format", "jsonl"]);
    let lines: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["record"].as_str().unwrap()).collect();
    assert_eq!(kinds.last(), Some(&"summary"));
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(kinds.iter().filter(|k| **k == "claim").count() as u64, summary["claims"].as_u64().unwrap());
    // Each input line closes its claims: the claims since the previous input line are its own.
    let mut since = 0;
    for l in &lines {
        match l["record"].as_str().unwrap() {
            "claim" => since += 1,
            "input" => {
                assert_eq!(l["claims"].as_u64().unwrap(), since, "{l}");
                since = 0;
            }
            _ => {}
        }
    }
    let (_, json) = check_json(&[EXAMPLES, &clean]);
    assert_eq!(&json["summary"], summary);
}

#[test]
fn malformed_engine_urls_are_usage_errors_naming_the_fault() {
    for (engine, why) in [
        ("ballista://:50050", "no host"),
        ("ballista://sched:http", "\"http\" is not a port"),
        ("spark://sched:7077", "unknown scheme \"spark\""),
    ] {
        let out = recite(&["check", EXAMPLES, "--engine", engine]);
        assert_eq!(code(&out), 2, "{engine}");
        let err = stderr(&out);
        assert!(
            err.contains(why) && err.contains("expected `local` or `ballista://HOST:PORT`"),
            "{engine}: {err}"
        );
    }
    // The environment variable is read the same way.
    let mut c = command(&["verify", "examples/citations/versant-w6-considered.json"]);
    c.env("RECITE_ENGINE", "ballista://");
    let out = run(c, None);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("no host"), "{}", stderr(&out));
}

#[cfg(not(feature = "ballista"))]
#[test]
fn a_ballista_engine_without_the_feature_says_how_to_build_it() {
    for args in [
        vec!["check", EXAMPLES, "--engine", "ballista://127.0.0.1:50050"],
        vec!["catalog", "check", "--engine", "ballista://127.0.0.1:50050"],
        vec!["cluster", "scheduler"],
    ] {
        let out = recite(&args);
        assert_eq!(code(&out), 2, "{args:?}");
        let err = stderr(&out);
        assert!(
            err.contains("`ballista` cargo feature") && err.contains("--features ballista"),
            "{args:?}: {err}"
        );
    }
    // `local`, or nothing, is this process's engine as before.
    let out = recite(&["check", EXAMPLES, "--engine", "local"]);
    assert_eq!(code(&out), code(&recite(&["check", EXAMPLES])));
}

/// `recite mcp` and `recite probe` in a build without `agents` (the README's) say which feature
/// brings them and the command that builds it, whatever arguments follow, rather than clap's
/// "unrecognized subcommand".
#[cfg(not(feature = "agents"))]
#[test]
fn the_agents_commands_without_the_feature_say_how_to_build_them() {
    for args in [vec!["mcp"], vec!["probe", "http://127.0.0.1:9/", "--max-calls", "3"]] {
        let out = recite(&args);
        assert_eq!(code(&out), 2, "{args:?}");
        let err = stderr(&out);
        assert!(
            err.contains("`agents` cargo feature")
                && err.contains(&format!("cargo run --features agents -- {}", args[0])),
            "{args:?}: {err}"
        );
    }
}

/// A re-run of a saved report on plain files names the files it read, as the saved run did: the
/// re-run scanner wraps the engine and must not fall back to "no files".
#[test]
fn a_pinned_rerun_of_a_saved_report_names_the_files_it_read() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("saved.json");
    let out = recite(&[
        "check",
        "examples/citations/versant-w6-considered.json",
        "--format",
        "json",
        "--output",
        saved.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let first: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    let files = first["inputs"][0]["claims"][0]["rerun"]["files"].clone();
    assert_eq!(files[0]["name"], "versant_flat.parquet", "{files:#}");
    let out = recite(&[
        "check",
        "examples/citations/versant-w6-considered.json",
        "--format",
        "json",
        "--rerun-of",
        saved.to_str().unwrap(),
        "--pinned",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let again: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(again["inputs"][0]["claims"][0]["rerun"]["files"], files);
}

/// A re-run on the latest of a table of plain files that changed since the saved run names the
/// file that moved, its size and digest then and now, and gives it as why the verdict changed.
#[test]
fn a_rerun_on_the_latest_names_the_file_that_moved() {
    let dir = tempfile::tempdir().unwrap();
    let (study, claim) = a_mean_of_x(dir.path(), "Scores", "scores.csv");
    let csv = study.join("scores.csv");
    let rows = |shift: i64| -> String {
        std::iter::once("x".to_string())
            .chain((1..=100).map(|i| (i + shift).to_string()))
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    };
    std::fs::write(&csv, rows(0)).unwrap();
    let data = dir.path().join("data");
    let saved = dir.path().join("saved.json");
    let args = ["check", claim.to_str().unwrap(), "--data", data.to_str().unwrap(), "--format", "json"];
    let out = recite(&[&args[..], &["--output", saved.to_str().unwrap()]].concat());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let first: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    let file = &first["inputs"][0]["claims"][0]["rerun"]["files"][0];
    assert_eq!(file["name"], "scores.csv", "{first:#}");
    assert_eq!(file["of"], "content");
    // Every score ten higher: mean 60.5.
    std::fs::write(&csv, rows(10)).unwrap();
    let now = std::fs::read(&csv).unwrap();
    let out = recite(&[&args[..], &["--rerun-of", saved.to_str().unwrap()]].concat());
    let err = stderr(&out);
    assert_eq!(code(&out), 1, "{err}");
    let digest = |v: &Value| v["digest"].as_str().unwrap().chars().take(8).collect::<String>();
    let again: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let after = &again["inputs"][0]["claims"][0]["rerun"]["files"][0];
    assert_ne!(digest(file), digest(after));
    assert_eq!(after["bytes"], now.len());
    let line = format!(
        "  file scores.csv: {} bytes, content {}… -> {} bytes, content {}…",
        file["bytes"],
        digest(file),
        now.len(),
        digest(after)
    );
    assert!(err.contains(&line), "{line}\n{err}");
    assert!(err.contains("verdict REPRODUCED -> DISCREPANT, because file scores.csv was"), "{err}");
}

/// A table's file outside its study's folder is named relative to it, as study.toml names it,
/// never by a folder of the machine the report was made on.
#[test]
fn a_file_outside_the_study_folder_is_named_relative_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let (_, claim) = a_mean_of_x(dir.path(), "Outside", "../../outside.csv");
    let rows: Vec<String> =
        std::iter::once("x".to_string()).chain((1..=100).map(|i| i.to_string())).collect();
    std::fs::write(dir.path().join("outside.csv"), rows.join("\n") + "\n").unwrap();
    let data = dir.path().join("data");
    let out =
        recite(&["check", claim.to_str().unwrap(), "--data", data.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let files = &report["inputs"][0]["claims"][0]["rerun"]["files"];
    assert_eq!(files[0]["name"], "../../outside.csv", "{files:#}");
    let rerun = report["inputs"][0]["claims"][0]["rerun"].to_string();
    assert!(
        !rerun.contains(dir.path().to_str().unwrap()),
        "the settlement names the scratch folder: {rerun}"
    );
}
