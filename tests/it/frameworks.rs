//! Transcripts written by agent frameworks' own endpoints settle as
//! `tests/fixtures/frameworks/manifest.json` states.
//!
//! The fixtures were written by LangGraph, Google ADK, Pydantic AI, Strands, LlamaIndex, CrewAI
//! and Mastra behind their AG-UI and A2A integrations, each run in process with a scripted model
//! (`tests/frameworks/gen.sh`, run by hand; the tests stay offline). Each fixture holds one tool
//! result with its citation, however often the framework repeats it, so it is one claim; the
//! manifest gives its verdict, the cited period and column, the measures its numbers must be
//! compared with, the status of every number the agent's answer states, and the MUST findings
//! a correct verifier reports (none: these are valid streams). The manifest says
//! what a correct verifier must say, not what recite says today: every mismatch is reported at
//! once (fixture, what, expected, got), so one reader defect does not hide the others.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

use crate::support::{recite, root};

const CORPUS: &str = "tests/fixtures/frameworks";

fn manifest() -> Vec<Value> {
    let path = root().join(CORPUS).join("manifest.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()));
    v.as_array().unwrap_or_else(|| panic!("{}: must be a JSON array of entries", path.display())).clone()
}

fn str_of<'a>(v: &'a Value, key: &str, entry: &str) -> &'a str {
    v[key].as_str().unwrap_or_else(|| panic!("manifest entry {entry}: `{key}` must be a string"))
}

/// The verdict counts of a report input's claims.
fn verdict_counts(claims: &[Value]) -> BTreeMap<String, u64> {
    let mut got = BTreeMap::new();
    for c in claims {
        *got.entry(c["verdict"].as_str().unwrap_or("?").to_string()).or_default() += 1;
    }
    got
}

/// How one claim differs from the manifest's expectation for it.
fn claim_mismatches(expected: &Value, claim: &Value, file: &str) -> Vec<String> {
    let mut out = Vec::new();
    let verdict = str_of(expected, "verdict", file);
    if claim["verdict"] != verdict {
        let reasons = claim["reasons"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("; "))
            .unwrap_or_default();
        out.push(format!("claim: expected {verdict}, got {} ({reasons})", claim["verdict"]));
    }
    // A result whose numbers were not read is settled on base n alone, and may reach the
    // expected verdict for a wrong reason.
    let missing = crate::support::not_compared(&expected["compared"], claim);
    if !missing.is_empty() {
        out.push(format!("claim: no claimed number was compared with {}", missing.join(", ")));
    }
    let rerun = &claim["rerun"];
    for key in ["period", "column"] {
        if let Some(want) = expected[key].as_str()
            && rerun[key] != want
        {
            out.push(format!("claim: expected the {key} {want}, re-ran {}", rerun[key]));
        }
    }
    out
}

/// How the audited answer numbers differ from the manifest's `answers` (number text → status):
/// every expected number found with that status wherever it occurs, and no other number.
fn answer_mismatches(expected: &serde_json::Map<String, Value>, input: &Value) -> Vec<String> {
    let mut got: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for answer in input["answers"].as_array().into_iter().flatten() {
        for n in answer["numbers"].as_array().into_iter().flatten() {
            let text = n["text"].as_str().unwrap_or("?").to_string();
            got.entry(text).or_default().insert(n["status"].as_str().unwrap_or("?").to_string());
        }
    }
    let mut out = Vec::new();
    for (text, status) in expected {
        let status = status.as_str().expect("an answer status");
        match got.get(text) {
            None => out.push(format!("answer: {text:?} expected {status}, not audited")),
            Some(s) if s.len() == 1 && s.contains(status) => {}
            Some(s) => out.push(format!("answer: {text:?} expected {status}, got {s:?}")),
        }
    }
    for (text, s) in &got {
        if !expected.contains_key(text) {
            out.push(format!("answer: {text:?} is not a number the answer states, got {s:?}"));
        }
    }
    out
}

/// How the report's answers differ from the manifest's `answer_kinds` (message id → `answer`,
/// `retracted`, `interrupted` or `errored`): the text the user finally saw is the answer and is
/// audited; text the run took back is listed as what it is, its numbers not audited.
fn answer_kind_mismatches(expected: &serde_json::Map<String, Value>, input: &Value) -> Vec<String> {
    let answers = input["answers"].as_array().cloned().unwrap_or_default();
    let mut out = Vec::new();
    for (id, kind) in expected {
        let kind = kind.as_str().expect("an answer kind");
        let Some(answer) = answers.iter().find(|a| a["message_id"] == id.as_str()) else {
            out.push(format!("answer kinds: message {id} ({kind}) is not in the report's answers"));
            continue;
        };
        let got = answer["shown"].as_str().unwrap_or("answer");
        if got != kind {
            out.push(format!("answer kinds: message {id} expected {kind}, got {got}"));
        }
        let audited = answer["numbers"].as_array().map_or(0, Vec::len);
        if kind != "answer" && audited > 0 {
            out.push(format!(
                "answer kinds: message {id} is {kind}, yet {audited} of its numbers were audited"
            ));
        }
    }
    out
}

/// The mismatches between one fixture's report input and its manifest entry, in words.
fn mismatches(entry: &Value, input: &Value) -> Vec<String> {
    let file = str_of(entry, "file", "?");
    if input["format"].is_null() {
        return vec![format!("not read at all: {}", input["findings"])];
    }
    let mut out = Vec::new();
    let claims = input["claims"].as_array().cloned().unwrap_or_default();
    let want: BTreeMap<String, u64> = entry["verdicts"]
        .as_object()
        .unwrap_or_else(|| panic!("manifest entry {file}: `verdicts` must be an object"))
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().expect("a count")))
        .collect();
    let got = verdict_counts(&claims);
    if got != want {
        let findings: Vec<String> = input["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| format!("{} {}: {}", f["level"], f["rule"], f["message"]))
            .collect();
        out.push(format!(
            "verdict counts: expected {want:?}, got {got:?} (findings: {})",
            findings.join(" | ")
        ));
    }
    let expected_claims = entry["claims"]
        .as_array()
        .unwrap_or_else(|| panic!("manifest entry {file}: `claims` must be an array"));
    // One tool result, one citation: when the counts agree, the only claim is the expected one.
    if let ([expected], [claim]) = (expected_claims.as_slice(), claims.as_slice()) {
        out.extend(claim_mismatches(expected, claim, file));
    }
    if let Some(answers) = entry["answers"].as_object() {
        out.extend(answer_mismatches(answers, input));
    }
    if let Some(kinds) = entry["answer_kinds"].as_object() {
        out.extend(answer_kind_mismatches(kinds, input));
    }
    if let Some(rules) = entry["must_findings"].as_array() {
        out.extend(crate::support::must_finding_mismatches(rules, input));
    }
    out
}

#[test]
fn every_framework_written_fixture_settles_as_its_manifest_states() {
    let entries = manifest();
    assert!(
        entries.len() >= 28,
        "the manifest lists {} fixtures: at least 7 frameworks × 4 runs",
        entries.len()
    );
    let files: Vec<&str> = entries.iter().map(|e| str_of(e, "file", "?")).collect();
    let mut args = vec!["check"];
    args.extend_from_slice(&files);
    args.extend_from_slice(&["--format", "json"]);
    let out = recite(&args);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("recite check wrote no JSON report ({e}): {}", String::from_utf8_lossy(&out.stderr))
    });
    let inputs = report["inputs"].as_array().expect("inputs");
    assert_eq!(inputs.len(), entries.len(), "one report input per fixture");

    let mut failures = Vec::new();
    let mut failing = BTreeSet::new();
    for (entry, input) in entries.iter().zip(inputs) {
        let file = str_of(entry, "file", "?");
        assert_eq!(input["file"], file, "report inputs follow the order given");
        let label =
            format!("{file} ({}, {} run)", str_of(entry, "framework", file), str_of(entry, "run", file));
        for m in mismatches(entry, input) {
            failing.insert(file);
            failures.push(format!("{label}: {m}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} framework-written fixtures do not settle as stated:\n{}",
        failing.len(),
        entries.len(),
        failures.join("\n")
    );
}

fn walk(dir: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/"));
        }
    }
}

/// Every transcript under the corpus is in the manifest and every entry's file exists, so a
/// regenerated corpus cannot drop out of the test silently.
#[test]
fn the_framework_manifest_lists_every_fixture_file() {
    let mut on_disk = Vec::new();
    walk(&root().join(CORPUS), &mut on_disk);
    on_disk.retain(|f| !f.ends_with("/manifest.json") && !f.ends_with("/versions.json"));
    on_disk.sort();
    let mut listed: Vec<String> = manifest().iter().map(|e| str_of(e, "file", "?").to_string()).collect();
    listed.sort();
    assert_eq!(listed, on_disk, "manifest entries vs fixture files under {CORPUS}/");
}

/// Each framework's folder records the package versions that wrote it, and says for each of
/// its files which run and shape it holds: a fixture whose writer is unknown cannot be
/// regenerated or trusted.
#[test]
fn every_framework_fixture_names_the_versions_that_wrote_it() {
    let mut problems = Vec::new();
    let mut frameworks = 0;
    for dir in
        std::fs::read_dir(root().join(CORPUS)).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir())
    {
        frameworks += 1;
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let path = dir.join("versions.json");
        let Ok(text) = std::fs::read_to_string(&path) else {
            problems.push(format!("{name}: no versions.json"));
            continue;
        };
        let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if doc["versions"].as_object().is_none_or(|v| v.is_empty() || v.values().any(|x| !x.is_string())) {
            problems.push(format!("{name}/versions.json: `versions` must name each package's version"));
        }
        let listed: BTreeSet<String> =
            doc["files"].as_object().map(|f| f.keys().cloned().collect()).unwrap_or_default();
        let present: BTreeSet<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|f| f != "versions.json")
            .collect();
        if listed != present {
            problems.push(format!("{name}/versions.json lists {listed:?}, the folder holds {present:?}"));
        }
        for (file, info) in doc["files"].as_object().into_iter().flatten() {
            for key in ["run", "protocol", "shape"] {
                if !info[key].is_string() {
                    problems.push(format!("{name}/versions.json: {file} has no `{key}`"));
                }
            }
        }
    }
    assert!(frameworks >= 7, "{frameworks} framework folders under {CORPUS}/, expected at least 7");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
