//! `recite check` end to end, through the binary: the bundled example transcripts (every
//! verdict), `--fail-on`, every report format, `--output`, byte-identical JSON, malformed inputs
//! in a batch, folders, globs and stdin, colour, and fusion of 1,000 claims into one scan.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Helpers

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_recite"));
    c.args(args).current_dir(root()).env("NO_COLOR", "1").env_remove("RECITE_DATA");
    c
}

fn run(mut c: Command, stdin: Option<&[u8]>) -> Output {
    let mut child = c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(bytes) = stdin {
        let _ = input.write_all(bytes);
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn recite(args: &[&str]) -> Output {
    run(command(args), None)
}

fn recite_stdin(args: &[&str], stdin: &[u8]) -> Output {
    run(command(args), Some(stdin))
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("exited with a code")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

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

    // The same two files through `check` (plain {citation, result} pairs).
    let (code, report) = check_json(&[
        "examples/citations/versant-w6-considered.json",
        "examples/citations/versant-w6-discrepant.json",
    ]);
    assert_eq!(code, 1);
    assert_eq!(verdicts(&report), counts(&[("REPRODUCED", 1), ("DISCREPANT", 1)]));
    assert_eq!(check_code(&["examples/citations/versant-w6-considered.json"]), 0);
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
    assert_eq!(check_code(&[&malformed, "--fail-on", "discrepant"]), 0, "a finding is not a verdict");
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
                // No findings in the examples: one testcase per claim.
                assert_eq!(testcases, all.len(), "{body}");
                assert_eq!(failures.len(), not_reproduced, "{body}");
                assert!(failures.iter().all(|(_, parent)| parent == "testcase"));
                assert!(body.contains(&format!("tests=\"{}\" failures=\"{not_reproduced}\"", all.len())));
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
    let args = ["check", EXAMPLES, "examples/citations/", "--format", "json"];
    let a = recite(&args);
    let b = recite(&args);
    assert_eq!(code(&a), 1);
    assert!(!a.stdout.is_empty());
    assert!(a.stdout == b.stdout, "two runs over the same inputs differ");
    let plain: Value = serde_json::from_slice(&a.stdout).unwrap();
    assert!(plain.get("timings").is_none());

    let mut with = args.to_vec();
    with.push("--timings");
    let t = recite(&with);
    assert_eq!(code(&t), 1);
    let mut timed: Value = serde_json::from_slice(&t.stdout).unwrap();
    let timings = timed.as_object_mut().unwrap().remove("timings").expect("--timings adds timings");
    let timings = timings.as_object().unwrap();
    assert!(timings.contains_key("total_ms"), "{timings:?}");
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

#[test]
fn answers_say_47_for_a_cited_44_is_misquoted_and_fails_fail_on_misquoted() {
    let (_, report) = check_json(&["tests/fixtures/answers/misquoted.json"]);
    let numbers = answer_numbers(&report, "misquoted.json");
    assert!(numbers.contains(&("47%".into(), "MISQUOTED".into())), "{numbers:?}");
    assert!(numbers.contains(&("4,654".into(), "TRACED".into())), "{numbers:?}");
    assert_eq!(report["summary"]["answer_numbers"]["MISQUOTED"], 1);
    assert_eq!(check_code(&["tests/fixtures/answers/misquoted.json", "--fail-on", "misquoted"]), 1);
    assert_eq!(check_code(&["tests/fixtures/answers/misquoted.json", "--fail-on", "uncited"]), 0);
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
    let total: usize = ["agui-run.sse", "a2a-v03-task.json", "a2a-v10-stream.sse"]
        .iter()
        .map(|f| answer_numbers(&report, f).len())
        .sum();
    for format in ["text", "markdown", "html", "junit"] {
        let out = stdout(&recite(&["check", "examples/transcripts/", "--format", format]));
        let shown = ["TRACED", "MISQUOTED", "UNCITED", "RECOMPUTED_ONLY"]
            .iter()
            .map(|s| out.matches(s).count())
            .sum::<usize>();
        assert!(shown >= total, "{format}: {shown} statuses shown for {total} numbers");
    }
    let html = stdout(&recite(&["check", "examples/transcripts/agui-run.sse", "--format", "html"]));
    assert!(
        html.contains("<mark class=\"ans TRACED\" tabindex=\"0\" title=\""),
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
