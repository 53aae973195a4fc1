//! Transcripts written by the official SDKs settle as `tests/fixtures/sdk/manifest.json` states.
//!
//! The fixtures under `tests/fixtures/sdk/` were written by the SDKs' own servers, clients and
//! serialisers (`tests/sdk/*/gen.sh`, run by hand; the tests stay offline). The manifest is one
//! JSON array; each entry names a fixture, the SDK, version and binding that wrote it, the count
//! of claims per verdict, and per claim where it is (`at`: locator fields such as
//! `artifact_id`, `message_id`, `event_index`), the cited period and column, its verdict, and
//! optionally `compared`: the measures its claimed numbers must have been compared with; and,
//! where it says, `must_findings`: the rules of the MUST findings a correct verifier reports.
//! Every fixture is checked in one `recite check … --format json` run, and every mismatch is
//! reported at once, so one reader defect does not hide the others.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::support::{recite, root};

fn manifest() -> Vec<Value> {
    let path = root().join("tests/fixtures/sdk/manifest.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()));
    v.as_array().unwrap_or_else(|| panic!("{}: must be a JSON array of entries", path.display())).clone()
}

fn str_of<'a>(v: &'a Value, key: &str, entry: &str) -> &'a str {
    v[key].as_str().unwrap_or_else(|| panic!("manifest entry {entry}: `{key}` must be a string"))
}

/// `recite check FILES --format json`, from the crate root (so `datasets/` is the data layer).
fn check(files: &[&str]) -> Value {
    let mut args = vec!["check"];
    args.extend_from_slice(files);
    args.extend_from_slice(&["--format", "json"]);
    let out = recite(&args);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("recite check wrote no JSON report ({e}): {}", String::from_utf8_lossy(&out.stderr))
    })
}

/// The mismatches between one fixture's report and its manifest entry, in words.
fn mismatches(entry: &Value, input: &Value) -> Vec<String> {
    let file = str_of(entry, "file", "?");
    let mut out = Vec::new();
    if input["format"].is_null() {
        out.push(format!("not read at all: {}", input["findings"]));
        return out;
    }
    let claims = input["claims"].as_array().cloned().unwrap_or_default();

    let mut got: BTreeMap<String, u64> = BTreeMap::new();
    for c in &claims {
        *got.entry(c["verdict"].as_str().unwrap_or("?").to_string()).or_default() += 1;
    }
    let want: BTreeMap<String, u64> = entry["verdicts"]
        .as_object()
        .unwrap_or_else(|| panic!("manifest entry {file}: `verdicts` must be an object"))
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().expect("a count")))
        .filter(|(_, n)| *n > 0)
        .collect();
    if got != want {
        out.push(format!("verdict counts: expected {want:?}, got {got:?}"));
    }

    for expected in entry["claims"]
        .as_array()
        .unwrap_or_else(|| panic!("manifest entry {file}: `claims` must be an array"))
    {
        let at =
            expected["at"].as_object().unwrap_or_else(|| panic!("manifest entry {file}: a claim needs `at`"));
        let verdict = str_of(expected, "verdict", file);
        let here: Vec<&Value> =
            claims.iter().filter(|c| at.iter().all(|(k, v)| &c["locator"][k.as_str()] == v)).collect();
        let place = Value::Object(at.clone());
        let [claim] = here.as_slice() else {
            out.push(format!("{place}: expected one claim ({verdict}), found {}", here.len()));
            continue;
        };
        if claim["verdict"] != verdict {
            let reasons = claim["reasons"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("; "));
            out.push(format!(
                "{place}: expected {verdict}, got {} ({})",
                claim["verdict"],
                reasons.unwrap_or_default()
            ));
        }
        // The measures its numbers must have been compared with: a result whose numbers were not
        // read is settled on base n alone, and may reach the expected verdict for a wrong reason.
        let missing = crate::support::not_compared(&expected["compared"], claim);
        if !missing.is_empty() {
            out.push(format!("{place}: no claimed number was compared with {}", missing.join(", ")));
        }
        // Which citation was re-run, when one was (an INVALID claim may have none).
        let rerun = &claim["rerun"];
        for key in ["period", "column"] {
            if let Some(want) = expected[key].as_str()
                && !rerun.is_null()
                && rerun[key] != want
            {
                out.push(format!("{place}: expected the {key} {want}, re-ran {}", rerun[key]));
            }
        }
    }
    // The MUST findings a correct verifier reports, where the entry says (none for a push
    // notification log that only repeats what it settled: a CI gate over it must pass).
    if let Some(rules) = entry["must_findings"].as_array() {
        out.extend(crate::support::must_finding_mismatches(rules, input));
    }
    out
}

#[test]
fn every_sdk_written_fixture_settles_as_its_manifest_entry_states() {
    let entries = manifest();
    assert!(!entries.is_empty(), "the manifest lists no fixture");
    let files: Vec<&str> = entries.iter().map(|e| str_of(e, "file", "?")).collect();
    let report = check(&files);
    let inputs = report["inputs"].as_array().expect("inputs");
    assert_eq!(inputs.len(), entries.len(), "one report input per fixture");

    let mut failures = Vec::new();
    for (entry, input) in entries.iter().zip(inputs) {
        let file = str_of(entry, "file", "?");
        assert_eq!(input["file"], file, "report inputs follow the order given");
        let (sdk, binding) = (str_of(entry, "sdk", file), str_of(entry, "binding", file));
        for m in mismatches(entry, input) {
            failures.push(format!("{file} ({sdk} {}, {binding}): {m}", str_of(entry, "sdk_version", file)));
        }
    }
    let failing: std::collections::BTreeSet<&str> =
        failures.iter().map(|f| f.split(' ').next().unwrap_or("")).collect();
    assert!(
        failures.is_empty(),
        "{} of {} SDK fixtures do not settle as stated:\n{}",
        failing.len(),
        entries.len(),
        failures.join("\n")
    );
}

/// Every fixture file under tests/fixtures/sdk/ is in the manifest, and every entry's file exists,
/// so a regenerated corpus cannot drop out of the test silently.
#[test]
fn the_sdk_manifest_lists_every_fixture_file() {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut on_disk = Vec::new();
    walk(&root().join("tests/fixtures/sdk"), &mut on_disk);
    // Not transcripts: the manifest itself, per-corpus version records and notes.
    on_disk.retain(|f| {
        let name = f.rsplit('/').next().unwrap_or("");
        name != "manifest.json" && !name.starts_with("versions") && !name.ends_with(".md")
    });
    on_disk.sort();
    let mut listed: Vec<String> = manifest().iter().map(|e| str_of(e, "file", "?").to_string()).collect();
    listed.sort();
    assert_eq!(listed, on_disk, "manifest entries vs fixture files under tests/fixtures/sdk/");
}
