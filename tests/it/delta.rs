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

/// The claim without its data version (a Parquet file's: the files it read): what must equal
/// between the Delta table's claim and the Parquet file's.
fn without_version(claim: &Value) -> Value {
    let mut c = claim.clone();
    c["rerun"].as_object_mut().unwrap().remove("data_version");
    c["rerun"].as_object_mut().unwrap().remove("files");
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
    assert_eq!(
        without_version(&claim),
        without_version(&parquet),
        "the Delta table's v0 settles as the Parquet file"
    );
    assert_eq!(
        claim["rerun"]["data_version"],
        json!({
            "format": "delta", "version": 0, "committed": "2026-04-20T00:00:00.000Z",
            "chosen": "period", "pin": {"version": 0}
        })
    );
    // The Parquet file's report has no data version: it is read as it is, and names the file
    // it read by the cache's digest of its footer; the Delta table's names no files.
    assert!(parquet["rerun"].get("data_version").is_none());
    assert_eq!(parquet["rerun"]["files"][0]["name"], "versant_flat.parquet", "{:#}", parquet["rerun"]);
    assert_eq!(parquet["rerun"]["files"][0]["of"], "footer");
    assert!(claim["rerun"].get("files").is_none(), "{:#}", claim["rerun"]);
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

/// The commits of v1 and v2 moved out of the table's log (the table as it was before them,
/// v0 its latest), and a function that puts them back with their times (a rename keeps them).
fn before_v1(layer: &Layer) -> (tempfile::TempDir, impl Fn()) {
    let log = layer.table().join("_delta_log");
    let aside = tempfile::tempdir().unwrap();
    let names = ["00000000000000000001.json", "00000000000000000002.json"];
    for name in names {
        std::fs::rename(log.join(name), aside.path().join(name)).unwrap();
    }
    let from = aside.path().to_path_buf();
    (aside, move || {
        for name in names {
            std::fs::rename(from.join(name), log.join(name)).unwrap();
        }
    })
}

#[cfg(feature = "serve")]
#[test]
fn a_saved_case_reruns_on_its_pinned_version_and_on_the_latest_says_what_moved() {
    use crate::serve::Server;
    let Some(layer) =
        layer("delta::a_saved_case_reruns_on_its_pinned_version_and_on_the_latest_says_what_moved")
    else {
        return;
    };
    // The case is settled while v0 is the table's latest, as the agent read it.
    let (_aside, commit_v1_v2) = before_v1(&layer);
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite3");
    let data = layer.data();
    let s = Server::start_with(&["--ledger", ledger.to_str().unwrap(), "--data", data.as_str()], &[]);
    let call = |method: &str, target: &str, body: &[u8], status: u16| -> Value {
        let r = s.request(method, target, &[], body);
        assert_eq!(r.status, status, "{method} {target}: {}", String::from_utf8_lossy(&r.body));
        r.json()
    };
    let made = call("POST", "/v1/cases?name=w6.json", &std::fs::read(root().join(W6)).unwrap(), 201);
    let id = made["id"].as_str().unwrap().to_string();
    let case = call("GET", &format!("/v1/cases/{id}"), b"", 200);
    assert_eq!(case["verdict"], "REPRODUCED", "{case:#}");
    // The ledger keeps what it ran on: the Delta version and its commit time.
    assert_eq!(
        case["data_versions"],
        json!([{
            "study": "Versant Mega Tracker", "table": "versant_flat", "format": "delta", "version": 0,
            "committed": "2026-04-20T00:00:00.000Z", "chosen": "latest"
        }]),
        "{case:#}"
    );
    // Then the tracker moves on: re-weighted (v1), late interviews appended (v2).
    commit_v1_v2();

    // On the pinned version: the ruling, bit for bit.
    let pinned = call("POST", &format!("/v1/cases/{id}/rerun?on=pinned"), b"", 200);
    assert_eq!(pinned["on"], "pinned");
    assert_eq!(pinned["reproduced"], true, "{pinned:#}");
    assert_eq!(pinned["moved"], json!([]), "{pinned:#}");
    assert_eq!(
        pinned["pinned"],
        json!([{"study": "Versant Mega Tracker", "table": "versant_flat", "version": 0}])
    );
    assert_eq!(pinned["data_versions"][0]["version"], 0);
    assert_eq!(pinned["data_versions"][0]["chosen"], "saved");
    let saved_report = call("GET", &format!("/v1/cases/{id}/report"), b"", 200);
    let rerun_claim = |n: u64| {
        let case = call("GET", &format!("/v1/cases/{id}"), b"", 200);
        assert_eq!(case["reruns"].as_array().unwrap().len() as u64, n, "{case:#}");
        case
    };
    rerun_claim(1);
    assert_eq!(saved_report["inputs"][0]["claims"][0]["verdict"], "REPRODUCED");

    // On the latest: what moved, and why the verdict changed.
    let latest = call("POST", &format!("/v1/cases/{id}/rerun?on=latest"), b"", 200);
    assert_eq!(latest["on"], "latest");
    assert_eq!(latest["reproduced"], false, "{latest:#}");
    assert_eq!(latest["data_versions"][0]["version"], 2, "{latest:#}");
    let moved = latest["moved"].as_array().unwrap();
    let find = |what: &str| moved.iter().find(|m| m["what"] == what).unwrap_or_else(|| panic!("{latest:#}"));
    let verdict = find("verdict");
    assert_eq!((&verdict["before"], &verdict["after"]), (&json!("REPRODUCED"), &json!("DISCREPANT")));
    let why = verdict["why"].as_str().unwrap();
    assert!(
        why.contains("table versant_flat was read at Delta version 0, committed 2026-04-20T00:00:00.000Z, now at Delta version 2, committed 2026-06-01T00:00:00.000Z")
            && why.contains("base n 4654 then, 5054 now"),
        "{why}"
    );
    assert_eq!(find("base n")["after"], 4654 + 400);
    assert!(why.contains("recomputed"), "{why}");
    // Each re-run is kept beside the ruling, with what it read; the ruling is unchanged.
    let case = rerun_claim(2);
    assert_eq!(case["verdict"], "REPRODUCED");
    assert_eq!(case["reruns"][0]["on"], "pinned");
    assert_eq!(case["reruns"][1]["on"], "latest");
    assert_eq!(case["reruns"][1]["data_versions"][0]["version"], 2);
    // Anything else in `on` is refused before anything runs.
    let r = s.request("POST", &format!("/v1/cases/{id}/rerun?on=yesterday"), &[], b"");
    assert_eq!(r.status, 400, "{}", String::from_utf8_lossy(&r.body));
}

/// Writes the bundled Versant table as a Delta table of three versions with delta-rs's Rust
/// writer (the `deltalake` crate), as `tests/delta/make.py` does with its Python writer: v0 the
/// Parquet file as it is, v1 W6 re-weighted (`main_weight` × 1.5 where `s14r5 >= 3`, an
/// overwrite), v2 the first 400 such W6 rows appended with new respondent ids.
#[cfg(feature = "delta")]
fn write_with_the_rust_crate(table: &std::path::Path) {
    use recite_engine::delta::deltalake::arrow::array::{
        Array, AsArray, BooleanArray, Float64Array, Int32Array,
    };
    use recite_engine::delta::deltalake::arrow::compute::filter_record_batch;
    use recite_engine::delta::deltalake::arrow::datatypes::{Float64Type, Int8Type};
    use recite_engine::delta::deltalake::arrow::record_batch::RecordBatch;
    use recite_engine::delta::deltalake::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use recite_engine::delta::deltalake::protocol::SaveMode;
    use recite_engine::delta::deltalake::{DeltaTable, ensure_table_uri};
    use std::sync::Arc;

    let file = std::fs::File::open(root().join("datasets/versant/versant_flat.parquet")).unwrap();
    let v0: Vec<RecordBatch> = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let schema = v0[0].schema();
    let at = |name: &str| schema.index_of(name).unwrap();
    let considered = |b: &RecordBatch| -> BooleanArray {
        let (wave, s14r5) = (
            b.column(at("wave")).as_primitive::<Int8Type>(),
            b.column(at("s14r5")).as_primitive::<Int8Type>(),
        );
        (0..b.num_rows()).map(|i| Some(wave.value(i) == 6 && s14r5.value(i) >= 3)).collect()
    };
    let replaced = |b: &RecordBatch, name: &str, column: Arc<dyn Array>| {
        let mut columns = b.columns().to_vec();
        columns[at(name)] = column;
        RecordBatch::try_new(schema.clone(), columns).unwrap()
    };
    let v1: Vec<RecordBatch> = v0
        .iter()
        .map(|b| {
            let (weight, w6) = (b.column(at("main_weight")).as_primitive::<Float64Type>(), considered(b));
            let w: Float64Array = (0..b.num_rows())
                .map(|i| Some(weight.value(i) * if w6.value(i) { 1.5 } else { 1.0 }))
                .collect();
            replaced(b, "main_weight", Arc::new(w))
        })
        .collect();
    let mut late: Vec<RecordBatch> = Vec::new();
    let mut left = 400;
    for b in &v1 {
        let picked = filter_record_batch(b, &considered(b)).unwrap();
        let picked = picked.slice(0, picked.num_rows().min(left));
        left -= picked.num_rows();
        if picked.num_rows() > 0 {
            let first = 900_000 + (400 - left - picked.num_rows()) as i32;
            let ids: Int32Array = (0..picked.num_rows() as i32).map(|i| Some(first + i)).collect();
            late.push(replaced(&picked, "respondent_id", Arc::new(ids)));
        }
    }
    assert_eq!(left, 0, "400 late W6 interviews");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let url = ensure_table_uri(table.to_str().unwrap()).unwrap();
        let t = DeltaTable::try_from_url(url).await.unwrap().write(v0).await.unwrap();
        let t = t.write(v1).with_save_mode(SaveMode::Overwrite).await.unwrap();
        let t = t.write(late).with_save_mode(SaveMode::Append).await.unwrap();
        assert_eq!(t.version(), Some(2));
    });
}

#[test]
fn a_table_written_by_the_rust_crate_settles_as_the_python_writers() {
    let test = "delta::a_table_written_by_the_rust_crate_settles_as_the_python_writers";
    #[cfg(not(feature = "delta"))]
    {
        let required = std::env::var_os("RECITE_REQUIRE_DELTA").is_some_and(|v| !v.is_empty() && v != "0");
        assert!(!required, "RECITE_REQUIRE_DELTA is set but this build has no `delta` feature");
        crate::support::say_skipped(test, "this build has no `delta` feature (cargo test --features delta)");
    }
    #[cfg(feature = "delta")]
    {
        let dir = tempfile::tempdir().unwrap();
        let study = dir.path().join("data/versant");
        std::fs::create_dir_all(&study).unwrap();
        write_with_the_rust_crate(&study.join("versant_delta"));
        let toml = std::fs::read_to_string(root().join("datasets/versant/study.toml")).unwrap();
        let toml = toml.replacen("path = \"versant_flat.parquet\"", "path = \"versant_delta\"", 1);
        std::fs::write(study.join("study.toml"), toml).unwrap();
        let rust = Layer { dir };
        let claim_at = |layer: &Layer, version: Option<u64>| {
            let citation = w6_citation(version.map(|v| json!(v)));
            without_version(&layer.verify_json(&citation))
        };
        // v0 is the Parquet file's claim; the latest is DISCREPANT, 400 interviews more.
        let parquet = recite(&["verify", W6, "--format", "json", "--data", "datasets"]);
        let parquet = report(&parquet)["inputs"][0]["claims"][0].clone();
        // (Read from standard input, the claim's locator names `-`; the rest must be equal.)
        let mut v0 = claim_at(&rust, Some(0));
        v0["locator"] = parquet["locator"].clone();
        assert_eq!(v0, without_version(&parquet), "the Rust writer's v0 settles as the Parquet file");
        let latest = rust.verify_json(&w6_citation(None));
        assert_eq!(latest["verdict"], "DISCREPANT", "{latest:#}");
        assert_eq!(latest["base"]["n"], 4654 + 400);
        assert_eq!(latest["rerun"]["data_version"]["version"], 2);
        // The same three versions written by the Python writer settle alike, version by version.
        if let Some(python) = layer(test) {
            for v in [0, 1, 2] {
                assert_eq!(claim_at(&rust, Some(v)), claim_at(&python, Some(v)), "version {v}");
            }
        }
    }
}

#[test]
fn check_reruns_a_saved_report_on_its_pinned_version_and_on_the_latest() {
    let Some(layer) = layer("delta::check_reruns_a_saved_report_on_its_pinned_version_and_on_the_latest")
    else {
        return;
    };
    let (_aside, commit_v1_v2) = before_v1(&layer);
    let data = layer.data();
    let saved = layer.dir.path().join("saved.json");
    let out = recite(&[
        "check",
        W6,
        "--format",
        "json",
        "--data",
        data.as_str(),
        "--output",
        saved.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    commit_v1_v2();
    let saved = saved.to_str().unwrap();

    // Pinned: the saved ruling, bit for bit, on the version it read.
    let out =
        recite(&["check", W6, "--format", "json", "--data", data.as_str(), "--rerun-of", saved, "--pinned"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let claim = report(&out)["inputs"][0]["claims"][0].clone();
    assert_eq!(claim["verdict"], "REPRODUCED");
    assert_eq!(claim["rerun"]["data_version"]["version"], 0);
    assert_eq!(claim["rerun"]["data_version"]["chosen"], "saved");
    let said = stderr(&out);
    assert!(said.contains("re-run on Delta version 0"), "{said}");
    assert!(said.contains("the ruling reproduced, bit for bit"), "{said}");

    // On the latest: what moved and why the verdict changed.
    let out = recite(&["check", W6, "--data", data.as_str(), "--rerun-of", saved]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("what moved"), "{said}");
    assert!(
        said.contains("claim 0: verdict REPRODUCED -> DISCREPANT, because table versant_flat was read at Delta version 0"),
        "{said}"
    );
    assert!(said.contains("claim 0: base n 4654 -> 5054"), "{said}");
    // A ruling made with --as-of (v0) re-runs on that version without it, as the README shows.
    let as_of = layer.dir.path().join("as-of.json");
    let out = recite(&[
        "check",
        W6,
        "--format",
        "json",
        "--data",
        data.as_str(),
        "--as-of",
        "2026-05-01T00:00:00Z",
        "-o",
        as_of.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out =
        recite(&["check", W6, "--data", data.as_str(), "--rerun-of", as_of.to_str().unwrap(), "--pinned"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).contains("the ruling reproduced, bit for bit"), "{}", stderr(&out));
    // --pinned without a saved report is a usage error.
    assert_eq!(code(&recite(&["check", W6, "--pinned"])), 2);
}
