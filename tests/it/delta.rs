//! Delta Lake tables (feature `delta`), on a table recite did not write: the bundled Versant
//! table written as a Delta table of three versions by the delta-rs Python writer
//! (`tests/delta/make.py`, run at test time into a temporary folder): v0 the Parquet file as it
//! is, v1 W6 re-weighted, v2 late W6 interviews appended; committed 2026-04-20, 2026-05-15 and
//! 2026-06-01. The writer comes from `tests/delta/install.sh` (a cached virtualenv); without it
//! these tests are skipped with a SKIPPED line, unless `RECITE_REQUIRE_DELTA=1` (CI) makes that a
//! failure.
//!
//! The README's W6 citation (`examples/citations/versant-w6-considered.json`: 44% considered,
//! n = 4654) was computed on v0: pinned there it is REPRODUCED with the very report the Parquet
//! file gives, on the latest version it is DISCREPANT, and every report says which version it
//! ran on.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use crate::support::{code, recite, recite_stdin, report, root, stderr, stdout};

/// The README's W6 citation.
const W6: &str = "examples/citations/versant-w6-considered.json";

/// A data layer holding the Versant study over a Delta table, in a temporary folder.
struct Layer {
    dir: tempfile::TempDir,
}

impl Layer {
    /// The data layer's folder, for `--data`.
    fn data(&self) -> String {
        self.dir.path().join("data").to_string_lossy().into_owned()
    }

    /// The Delta table's folder.
    fn table(&self) -> PathBuf {
        self.dir.path().join("data/versant/versant_delta")
    }

    /// Rewrites the study's W6 period with `line` added (a pin: `delta_version = 0`).
    fn pin_w6(&self, line: &str) {
        let toml = self.dir.path().join("data/versant/study.toml");
        let text = std::fs::read_to_string(&toml).unwrap();
        let pinned = text.replacen("filter = \"wave = 6\"\n", &format!("filter = \"wave = 6\"\n{line}\n"), 1);
        assert_ne!(pinned, text, "the W6 period's filter is where the pin goes");
        std::fs::write(toml, pinned).unwrap();
    }

    /// `recite verify CITATION --format json --data LAYER ARGS`: the exit code and the claim.
    fn verify(&self, citation: &str, args: &[&str]) -> (i32, Value) {
        let data = self.data();
        let mut all = vec!["verify", citation, "--format", "json", "--data", data.as_str()];
        all.extend_from_slice(args);
        let out = recite(&all);
        (code(&out), report(&out)["inputs"][0]["claims"][0].clone())
    }

    /// `recite verify - --format json --data LAYER` over `citation` (the W6 citation's JSON,
    /// changed): the claim.
    fn verify_json(&self, citation: &Value) -> Value {
        let data = self.data();
        let out = recite_stdin(
            &["verify", "-", "--format", "json", "--data", data.as_str()],
            &serde_json::to_vec(citation).unwrap(),
        );
        report(&out)["inputs"][0]["claims"][0].clone()
    }
}

/// The Python of `tests/delta/install.sh`'s virtualenv (or `RECITE_DELTA_PYTHON`).
fn writer() -> PathBuf {
    if let Some(p) = std::env::var_os("RECITE_DELTA_PYTHON").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let venv = std::env::var_os("RECITE_DELTA_VENV").filter(|p| !p.is_empty()).map(PathBuf::from);
    let cache = || {
        std::env::var_os("XDG_CACHE_HOME")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache"))
    };
    venv.unwrap_or_else(|| cache().join("recite-delta")).join("bin/python")
}

/// The Versant study over a Delta table of three versions written by delta-rs's Python writer,
/// or `None` (after a SKIPPED line) when the writer is not installed and `RECITE_REQUIRE_DELTA`
/// is not set.
fn layer(test: &str) -> Option<Layer> {
    let python = writer();
    let why = if !cfg!(feature = "delta") {
        Some("this build has no `delta` feature (cargo test --features delta)".to_string())
    } else if !python.is_file() {
        Some(format!("{} is not installed (run tests/delta/install.sh)", python.display()))
    } else {
        None
    };
    if let Some(why) = why {
        let required = std::env::var_os("RECITE_REQUIRE_DELTA").is_some_and(|v| !v.is_empty() && v != "0");
        assert!(!required, "RECITE_REQUIRE_DELTA is set but {why}");
        crate::support::say_skipped(test, &why);
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("data/versant");
    std::fs::create_dir_all(&study).unwrap();
    let made = Command::new(&python)
        .arg(root().join("tests/delta/make.py"))
        .arg(root().join("datasets/versant/versant_flat.parquet"))
        .arg(study.join("versant_delta"))
        .output()
        .unwrap();
    assert!(made.status.success(), "tests/delta/make.py: {}", String::from_utf8_lossy(&made.stderr));
    let toml = std::fs::read_to_string(root().join("datasets/versant/study.toml")).unwrap();
    let toml = toml.replacen("path = \"versant_flat.parquet\"", "path = \"versant_delta\"", 1);
    std::fs::write(study.join("study.toml"), toml).unwrap();
    Some(Layer { dir })
}

/// The claim without its data version: what must equal the Parquet file's claim.
fn without_version(claim: &Value) -> Value {
    let mut c = claim.clone();
    c["rerun"].as_object_mut().unwrap().remove("data_version");
    c
}

/// The W6 citation's JSON, with `data_version` added when given.
fn w6_citation(data_version: Option<Value>) -> Value {
    let mut c: Value = serde_json::from_slice(&std::fs::read(root().join(W6)).unwrap()).unwrap();
    if let Some(v) = data_version {
        c["citation"]["data_version"] = v;
    }
    c
}

#[test]
fn pinned_to_v0_the_w6_claim_settles_as_from_parquet() {
    let Some(layer) = layer("delta::pinned_to_v0_the_w6_claim_settles_as_from_parquet") else { return };
    layer.pin_w6("delta_version = 0");
    let (exit, claim) = layer.verify(W6, &[]);
    let parquet = recite(&["verify", W6, "--format", "json", "--data", "datasets"]);
    let parquet = report(&parquet)["inputs"][0]["claims"][0].clone();
    assert_eq!(parquet["verdict"], "REPRODUCED");
    assert_eq!(exit, 0, "{claim:#}");
    assert_eq!(without_version(&claim), parquet, "the Delta table's v0 settles as the Parquet file");
    assert_eq!(
        claim["rerun"]["data_version"],
        json!({
            "format": "delta", "version": 0, "committed": "2026-04-20T00:00:00.000Z",
            "chosen": "period", "pin": {"version": 0}
        })
    );
    // The Parquet file's report has no data version: it is read as it is.
    assert!(parquet["rerun"].get("data_version").is_none());
}

#[test]
fn on_the_latest_version_the_w6_claim_is_discrepant_and_says_which_version() {
    let Some(layer) = layer("delta::on_the_latest_version_the_w6_claim_is_discrepant_and_says_which_version")
    else {
        return;
    };
    let (exit, claim) = layer.verify(W6, &[]);
    assert_eq!(claim["verdict"], "DISCREPANT", "{claim:#}");
    assert_eq!(exit, 1);
    assert_eq!(claim["rerun"]["data_version"]["version"], 2);
    assert_eq!(claim["rerun"]["data_version"]["chosen"], "latest");
    assert!(claim["rerun"]["data_version"].get("pin").is_none());
    // v2 appended 400 W6 interviews, all aware of Versant: the base moved.
    assert_eq!(claim["base"]["n"], 4654 + 400, "{:#}", claim["base"]);
    // The text report says it too.
    let data = layer.data();
    let text = stdout(&recite(&["verify", W6, "--data", data.as_str()]));
    assert!(
        text.contains("data     Delta version 2, committed 2026-06-01T00:00:00.000Z, the latest"),
        "{text}"
    );
}

#[test]
fn as_of_reads_the_version_committed_then_over_any_pin() {
    let Some(layer) = layer("delta::as_of_reads_the_version_committed_then_over_any_pin") else { return };
    layer.pin_w6("delta_version = 2");
    for (moment, version, verdict) in [
        ("2026-05-01T00:00:00Z", 0, "REPRODUCED"),
        ("2026-05-20T12:00:00+02:00", 1, "DISCREPANT"),
        ("2026-12-01T00:00:00Z", 2, "DISCREPANT"),
    ] {
        let (_, claim) = layer.verify(W6, &["--as-of", moment]);
        assert_eq!(claim["verdict"], verdict, "--as-of {moment}: {claim:#}");
        let v = &claim["rerun"]["data_version"];
        assert_eq!(v["version"], version, "--as-of {moment}");
        assert_eq!(v["chosen"], "as_of_flag");
        assert_eq!(v["pin"], json!({"as_of": moment}));
    }
    // v1 re-weighted W6 only: n is v0's, the share is not.
    let (_, claim) = layer.verify(W6, &["--as-of", "2026-05-20T00:00:00Z"]);
    assert_eq!(claim["base"]["n"], 4654);
    // A moment before the first commit: no data existed then.
    let (_, claim) = layer.verify(W6, &["--as-of", "2026-01-01T00:00:00Z"]);
    assert_eq!(claim["verdict"], "UNVERIFIABLE", "{claim:#}");
    assert!(
        claim["reasons"].to_string().contains("no version of it was committed at or before"),
        "{claim:#}"
    );
    // A moment that is not one: the claim is UNVERIFIABLE, saying why.
    let (exit, claim) = layer.verify(W6, &["--as-of", "last tuesday"]);
    assert_eq!((exit, &claim["verdict"]), (1, &json!("UNVERIFIABLE")), "{claim:#}");
    assert!(claim["reasons"].to_string().contains("not an RFC 3339 moment"), "{claim:#}");
}

#[test]
fn a_citations_data_version_pins_it() {
    let Some(layer) = layer("delta::a_citations_data_version_pins_it") else { return };
    layer.pin_w6("as_of = \"2026-12-01T00:00:00Z\"");
    let claim = layer.verify_json(&w6_citation(Some(json!(0))));
    assert_eq!(claim["verdict"], "REPRODUCED", "{claim:#}");
    assert_eq!(claim["rerun"]["data_version"]["chosen"], "citation");
    assert_eq!(claim["rerun"]["data_version"]["version"], 0);
    let claim = layer.verify_json(&w6_citation(Some(json!("2026-05-16T00:00:00Z"))));
    assert_eq!(claim["rerun"]["data_version"]["version"], 1, "{claim:#}");
    // Without one, the period's as_of pin: the latest committed by 2026-12-01.
    let claim = layer.verify_json(&w6_citation(None));
    assert_eq!(claim["rerun"]["data_version"]["chosen"], "period");
    assert_eq!(claim["rerun"]["data_version"]["version"], 2);
    // A version the log never had.
    let claim = layer.verify_json(&w6_citation(Some(json!(7))));
    assert_eq!(claim["verdict"], "UNVERIFIABLE", "{claim:#}");
    let reasons = claim["reasons"].to_string();
    assert!(reasons.contains("no version 7") && reasons.contains("the latest is 2"), "{reasons}");
}

#[test]
fn a_log_missing_a_version_is_a_clear_error_and_the_batch_goes_on() {
    let Some(layer) = layer("delta::a_log_missing_a_version_is_a_clear_error_and_the_batch_goes_on") else {
        return;
    };
    std::fs::remove_file(layer.table().join("_delta_log/00000000000000000001.json")).unwrap();
    let inputs = tempfile::tempdir().unwrap();
    let write = |name: &str, v: Option<Value>| {
        std::fs::write(inputs.path().join(name), serde_json::to_vec(&w6_citation(v)).unwrap()).unwrap()
    };
    write("a-latest.json", None);
    write("b-v0.json", Some(json!(0)));
    write("c-v1.json", Some(json!(1)));
    let data = layer.data();
    let out =
        recite(&["check", inputs.path().to_str().unwrap(), "--format", "json", "--data", data.as_str()]);
    let r = report(&out);
    let verdict = |i: usize| r["inputs"][i]["claims"][0].clone();
    // The latest cannot be built without v1: the gap is said, not read past.
    assert_eq!(verdict(0)["verdict"], "UNVERIFIABLE", "{:#}", verdict(0));
    assert!(verdict(0)["reasons"].to_string().contains("Delta log cannot be read"), "{:#}", verdict(0));
    // v0 is whole: it settles, in the same batch.
    assert_eq!(verdict(1)["verdict"], "REPRODUCED", "{:#} {}", verdict(1), stderr(&out));
    assert_eq!(verdict(1)["rerun"]["data_version"]["version"], 0);
    // v1 is the missing one.
    assert_eq!(verdict(2)["verdict"], "UNVERIFIABLE", "{:#}", verdict(2));
    assert!(verdict(2)["reasons"].to_string().contains("no version 1"), "{:#}", verdict(2));
}

#[test]
fn the_sums_cache_keys_on_the_version() {
    let Some(layer) = layer("delta::the_sums_cache_keys_on_the_version") else { return };
    let cache = tempfile::tempdir().unwrap();
    let cache = cache.path().join("c");
    let data = layer.data();
    let run = |citation: &Value| {
        let out = recite_stdin(
            &["verify", "-", "--format", "json", "--data", data.as_str(), "--cache", cache.to_str().unwrap()],
            &serde_json::to_vec(citation).unwrap(),
        );
        report(&out)
    };
    let plans = |r: &Value| r["stats"]["plans"].to_string();
    let v0 = w6_citation(Some(json!(0)));
    let cold = run(&v0);
    assert_eq!(cold["inputs"][0]["claims"][0]["verdict"], "REPRODUCED");
    let warm = run(&v0);
    assert_eq!(warm["inputs"][0]["claims"][0], cold["inputs"][0]["claims"][0]);
    assert!(plans(&warm).contains("\"cache\""), "the warm run answers from the cache: {}", plans(&warm));
    // The latest version is other rows: never answered by v0's entry.
    let latest = run(&w6_citation(None));
    assert_eq!(latest["inputs"][0]["claims"][0]["verdict"], "DISCREPANT");
    assert!(!plans(&latest).contains("\"cache\""), "{}", plans(&latest));
}

#[test]
fn a_pin_on_a_table_without_versions_is_unverifiable() {
    // No Delta table needed: the bundled Parquet file, pinned by the citation.
    let claim = w6_citation(Some(json!(3)));
    let out = recite_stdin(&["verify", "-", "--format", "json"], &serde_json::to_vec(&claim).unwrap());
    let claim = report(&out)["inputs"][0]["claims"][0].clone();
    assert_eq!(claim["verdict"], "UNVERIFIABLE", "{claim:#}");
    assert!(claim["reasons"].to_string().contains("keeps no versions"), "{claim:#}");
    // --as-of on it is a note: the file is read as it is.
    let out = recite(&["verify", W6, "--format", "json", "--as-of", "2026-05-01T00:00:00Z"]);
    let claim = report(&out)["inputs"][0]["claims"][0].clone();
    assert_eq!(claim["verdict"], "REPRODUCED");
    assert!(claim["notes"].to_string().contains("keeps no versions"), "{claim:#}");
}
