//! The two scan plans agree: the grouped scan (packed keys per row, reduced by recite to the
//! count, Σw and Σw² per code, period, base and cell) and the summed scan (one `SUM(CASE …)` per
//! sum) give the same base counts, cells, estimates and standard errors, on a generated claim
//! set and on the NHANES II design. The grouped scan's two reductions (in process, and as one
//! DataFusion plan) give byte-identical reports.
//!
//! The plans agreeing says nothing of whether they are right, and the claim generator's truths
//! come from recite itself; so the generated claims are also checked against a second engine,
//! DuckDB (`tests/oracle/claims.py`, from `tests/oracle/install.sh`'s cached virtualenv), which
//! reads the same Parquet file and recomputes each base n, Σw, effective base and measure; the
//! verdicts must be the ones its numbers earn, and a claim one shown digit off its value must
//! flip. Without DuckDB that test is skipped with a message, unless `RECITE_REQUIRE_DUCKDB=1`
//! (CI) makes that a failure. Oracles that need no second engine: permuting the rows changes no
//! bit of any settlement, and duplicating every row doubles n, Σw and the effective base and
//! keeps every estimate (weight scale: `scale.rs`).
//! (The statistics themselves are checked against published figures in `statistics.rs`.)

use std::path::{Path, PathBuf};
use std::process::Command;

use recite::catalog::Catalog;
use recite::claimset::{ClaimSpec, generate};
use recite::engine::{Engine, Reduction, ScanPlan};
use recite::extractor::Registry;
use recite::settle::pipeline::{self, Claim, Options};
use recite::settle::{Settlement, Verdict};
use serde_json::{Value, json};

use crate::support;

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= 1e-9 * a.abs().max(1.0), "{what}: grouped {a} vs summed {b}");
}

fn same(a: &[Settlement], b: &[Settlement]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x.verdict, y.verdict, "{:?} vs {:?}", x.reasons, y.reasons);
        let (bx, by) = (x.base.as_ref().unwrap(), y.base.as_ref().unwrap());
        assert_eq!(bx.facts.n, by.facts.n);
        close(bx.facts.weighted, by.facts.weighted, "Σw");
        close(bx.facts.effective, by.facts.effective, "effective base");
        assert_eq!(x.warnings_audit, y.warnings_audit);
        for (mx, my) in x.measures.iter().zip(&y.measures) {
            match (mx.estimate, my.estimate) {
                (Some(ex), Some(ey)) => {
                    close(ex.value, ey.value, &mx.name);
                    close(ex.se, ey.se, &format!("SE of {}", mx.name));
                }
                (None, None) => {}
                other => panic!("{}: {other:?}", mx.name),
            }
        }
    }
}

#[test]
fn grouped_and_summed_scans_agree_on_versant_claims() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets");
    let catalog = Catalog::load(&data).unwrap();
    let registry = Registry::load(None).unwrap();
    let (made, claims) = versant_claims(11);
    let opts = Options { explain: false, ..Options::default() };
    let (grouped, gs) = pipeline::settle_all(&claims, &catalog, &registry, &Engine::new(), opts);
    let (summed, ss) = pipeline::settle_all(&claims, &catalog, &registry, &Engine::summed_only(), opts);
    assert_eq!((gs.scans, ss.scans), (1, 1));
    assert_eq!(gs.rows_scanned, ss.rows_scanned);
    let plans = |s: &recite::engine::ScanStats| {
        s.plans.iter().map(|p| (p.table.clone(), p.plan, p.reason.clone())).collect::<Vec<_>>()
    };
    let columns = made.iter().map(|c| c.line["citation"]["source"]["column"].as_str().unwrap());
    let columns: std::collections::BTreeSet<&str> = columns.collect();
    let why = format!("all {} cited columns hold integer codes", columns.len());
    assert_eq!(plans(&gs), [("versant_flat".to_string(), ScanPlan::Grouped, why)]);
    let off = "the grouped plan is turned off (Engine::summed_only)".to_string();
    assert_eq!(plans(&ss), [("versant_flat".to_string(), ScanPlan::Summed, off)]);
    same(&grouped, &summed);
    // Whether these verdicts are right is for a second engine to say: the next test.
}

/// 300 generated Versant claims (a fifth made wrong) of `seed`, with their claimed numbers.
fn versant_claims(seed: u64) -> (Vec<recite::claimset::GeneratedClaim>, Vec<Claim>) {
    let catalog = Catalog::load(&support::root().join("datasets")).unwrap();
    let registry = Registry::load(None).unwrap();
    let spec = ClaimSpec { study: "Versant".into(), count: 300, wrong: 0.2, seed };
    let made = generate(&spec, &catalog, &registry, &Engine::new()).unwrap();
    let claims = made
        .iter()
        .map(|c| Claim {
            citation: c.line["citation"].clone(),
            numbers: recite::claim::leaves(&c.line["result"]),
        })
        .collect();
    (made, claims)
}

fn settle(claims: &[Claim], data: &Path, engine: &Engine) -> Vec<Settlement> {
    let catalog = Catalog::load(data).unwrap();
    let registry = Registry::load(None).unwrap();
    let opts = Options { explain: false, ..Options::default() };
    pipeline::settle_all(claims, &catalog, &registry, engine, opts).0
}

/// The python of DuckDB's virtualenv (`tests/oracle/install.sh`, made from the pins in
/// `tests/oracle/requirements.txt`), or `None` (after a SKIPPED line) when it is not installed
/// and `RECITE_REQUIRE_DUCKDB` is not set.
pub(crate) fn duckdb_python(test: &str) -> Option<PathBuf> {
    let venv = std::env::var_os("RECITE_ORACLE_VENV").map(PathBuf::from).unwrap_or_else(|| {
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache"));
        cache.join("recite-oracle")
    });
    let python = venv.join("bin/python");
    // install.sh copies the pins into the venv: one made from other pins is not this oracle.
    let pins = std::fs::read(support::root().join("tests/oracle/requirements.txt")).unwrap();
    let why = if !python.is_file() {
        format!("{} is not installed (run tests/oracle/install.sh)", python.display())
    } else if std::fs::read(venv.join("requirements.txt")).ok() != Some(pins) {
        format!("{} was made from other pins (run tests/oracle/install.sh)", venv.display())
    } else {
        return Some(python);
    };
    let required = std::env::var_os("RECITE_REQUIRE_DUCKDB").is_some_and(|v| !v.is_empty() && v != "0");
    assert!(!required, "RECITE_REQUIRE_DUCKDB is set but {why}");
    crate::support::say_skipped(test, &why);
    None
}

/// DuckDB's truth for each citation over the layer `data` (`tests/oracle/claims.py`): base `n`,
/// `weighted` (Σw), `effective` (Kish) and `measures` (`name`, `unit`, `value`), in order.
fn duckdb_truths(python: &Path, data: &Path, citations: &[&Value]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("citations.jsonl");
    let text: String = citations.iter().map(|c| json!({"citation": c}).to_string() + "\n").collect();
    std::fs::write(&file, text).unwrap();
    let out = Command::new(python)
        .arg(support::root().join("tests/oracle/claims.py"))
        .arg(data)
        .arg(&file)
        .output()
        .expect("run tests/oracle/claims.py");
    assert!(out.status.success(), "claims.py failed: {}", String::from_utf8_lossy(&out.stderr));
    let truths: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(truths.len(), citations.len(), "one truth a citation");
    truths
}

/// The measure a generated result states and its text (`"44.1%"`, `"-12"`, `"6.1"`): the key
/// that is not the label, the period or n.
fn stated(result: &Value) -> (&str, &str) {
    let mut keys =
        result.as_object().unwrap().iter().filter(|(k, _)| !matches!(k.as_str(), "label" | "period" | "n"));
    let (name, text) = keys.next().expect("a claimed measure");
    assert!(keys.next().is_none(), "one claimed measure: {result}");
    (name, text.as_str().expect("claimed as text"))
}

/// DuckDB's `(value, unit)` of the measure `name`.
fn truth_of(truth: &Value, name: &str) -> (f64, String) {
    let m = truth["measures"].as_array().unwrap().iter().find(|m| m["name"] == name);
    let m = m.unwrap_or_else(|| panic!("DuckDB has no measure {name:?}: {truth}"));
    (m["value"].as_f64().expect("a value"), m["unit"].as_str().unwrap().to_string())
}

/// Whether `text` states `value` (a measure in `unit`): within half a unit of its last shown
/// digit, a proportion in percent (docs/semantics.md; recite's 1e-9 relative slack for the
/// binary representation).
fn states(value: f64, unit: &str, text: &str) -> bool {
    let (digits, percent) = text.strip_suffix('%').map_or((text, false), |d| (d, true));
    assert_eq!(percent, unit == "proportion", "{text}: a proportion is claimed as a percent here");
    let claimed: f64 = digits.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
    let decimals = digits.split_once('.').map_or(0, |(_, f)| f.len()) as i32;
    let shown = if percent { value * 100.0 } else { value };
    (shown - claimed).abs() <= 0.5 * 10f64.powi(-decimals) + 1e-9 * claimed.abs().max(1.0)
}

/// The verdict DuckDB's numbers give a `{result, citation}` line: a number off is DISCREPANT,
/// else a base n off (the citation's or the result's) is BASE_MISMATCH.
fn verdict_by(truth: &Value, line: &Value) -> Verdict {
    let (name, text) = stated(&line["result"]);
    let (value, unit) = truth_of(truth, name);
    let n = &truth["n"];
    if !states(value, &unit, text) {
        Verdict::Discrepant
    } else if line["citation"]["base"]["n"] != *n || line["result"]["n"] != *n {
        Verdict::BaseMismatch
    } else {
        Verdict::Reproduced
    }
}

/// `a` and `b` equal to 1e-9 relative (two engines add in different orders).
fn near(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-3), "{what}: {a} vs {b}");
}

/// `value` (a measure in `unit`) as a claim shows it at `decimals`, moved `by` units of the
/// last digit (0.441 as a proportion, 1, -1 → `"44.0%"`).
fn moved(value: f64, unit: &str, decimals: usize, by: i64) -> String {
    let shown = if unit == "proportion" { value * 100.0 } else { value };
    let scale = 10f64.powi(decimals as i32);
    let k = (shown * scale).round() as i64 + by;
    format!("{:.decimals$}{}", k as f64 / scale, if unit == "proportion" { "%" } else { "" })
}

#[test]
fn generated_claims_settle_as_duckdb_computes_them() {
    let test = "generated_claims_settle_as_duckdb_computes_them";
    let Some(python) = duckdb_python(test) else { return };
    let data = support::root().join("datasets");
    let (made, claims) = versant_claims(11);
    let citations: Vec<&Value> = made.iter().map(|c| &c.line["citation"]).collect();
    // Every extractor the generator cites: funnels and distributions, NPS, means, top boxes
    // (over a column with a missing code and nulls).
    let functions: std::collections::BTreeSet<&str> =
        citations.iter().map(|c| c["source"]["function"].as_str().unwrap()).collect();
    assert_eq!(functions.len(), 6, "{functions:?}");
    let truths = duckdb_truths(&python, &data, &citations);
    // The grouped plan's two reductions; the summed plan agrees with the grouped one to 1e-9 (the
    // first test), so with DuckDB too.
    let engines = [("in process", Engine::new()), ("plan", Engine::new().with_reduction(Reduction::Plan))];
    for (how, engine) in engines {
        let settled = settle(&claims, &data, &engine);
        for (i, ((c, s), truth)) in made.iter().zip(&settled).zip(&truths).enumerate() {
            let at = |what: &str| format!("{how}, claim {i} ({}): {what}", c.line["citation"]["source"]);
            // recite's numbers are DuckDB's: base n, Σw, effective base, every measure.
            let base = s.base.as_ref().unwrap_or_else(|| panic!("{}", at(&format!("{:?}", s.reasons))));
            assert_eq!(Some(base.facts.n), truth["n"].as_u64(), "{}", at("base n"));
            near(base.facts.weighted, truth["weighted"].as_f64().unwrap(), &at("Σw"));
            near(base.facts.effective, truth["effective"].as_f64().unwrap(), &at("effective base"));
            let names: Vec<&str> = s.measures.iter().map(|m| m.name.as_str()).collect();
            let theirs: Vec<&str> =
                truth["measures"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
            assert_eq!(names, theirs, "{}", at("measures"));
            for m in &s.measures {
                match (m.estimate, truth_of_opt(truth, &m.name)) {
                    (Some(e), Some(v)) => near(e.value, v, &at(&m.name)),
                    (None, None) => {}
                    other => panic!("{}", at(&format!("{}: {other:?}", m.name))),
                }
            }
            // And so is the verdict, and the generator's wrong claims are the ones DuckDB
            // finds wrong.
            let expected = verdict_by(truth, &c.line);
            assert_eq!(s.verdict, expected, "{}", at(&format!("{} {:?}", c.line["result"], s.reasons)));
            assert_eq!(c.wrong, expected != Verdict::Reproduced, "{}", at("made wrong"));
        }
    }
    // At the tolerance: each claim's measure at 0, 1, 2 and 4 decimals of DuckDB's value is
    // REPRODUCED, and one shown unit either side of it DISCREPANT. (Not 3: `3.900` may be 3900
    // written with a dot between thousands, which recite refuses to guess.)
    let mut flips = Vec::new();
    let mut expect = Vec::new();
    for (c, truth) in made.iter().zip(&truths) {
        let (name, _) = stated(&c.line["result"]);
        let (value, unit) = truth_of(truth, name);
        for decimals in [0, 1, 2, 4] {
            for by in [-1, 0, 1] {
                let result = json!({name: moved(value, &unit, decimals, by), "n": truth["n"]});
                let mut citation = c.line["citation"].clone();
                citation["base"]["n"] = truth["n"].clone();
                assert_eq!(states(value, &unit, result[name].as_str().unwrap()), by == 0, "{result}");
                flips.push(Claim { citation, numbers: recite::claim::leaves(&result) });
                expect.push((result, if by == 0 { Verdict::Reproduced } else { Verdict::Discrepant }));
            }
        }
    }
    let settled = settle(&flips, &data, &Engine::new());
    for ((result, verdict), s) in expect.iter().zip(&settled) {
        assert_eq!(s.verdict, *verdict, "{result} (DuckDB): {:?}", s.reasons);
    }
}

/// DuckDB's value of the measure `name`, `None` when it has none (an empty denominator).
fn truth_of_opt(truth: &Value, name: &str) -> Option<f64> {
    let m = truth["measures"].as_array().unwrap().iter().find(|m| m["name"] == name)?;
    m["value"].as_f64()
}

/// A copy of the bundled Versant layer under `dir` whose table holds the rows `order(n)` picks
/// from the original's `n` (row i of the copy is row `order[i]`), in row groups of 5,000.
fn reordered_layer(dir: &Path, order: impl Fn(usize) -> Vec<u32>) {
    use datafusion::arrow::array::{RecordBatch, UInt32Array};
    use datafusion::arrow::compute::{concat_batches, take_record_batch};
    use datafusion::parquet::arrow::ArrowWriter;
    use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use datafusion::parquet::file::properties::WriterProperties;
    let from = support::root().join("datasets/versant");
    let study = dir.join("versant");
    std::fs::create_dir_all(&study).unwrap();
    std::fs::copy(from.join("study.toml"), study.join("study.toml")).unwrap();
    let file = std::fs::File::open(from.join("versant_flat.parquet")).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let schema = builder.schema().clone();
    let batches: Vec<RecordBatch> = builder.build().unwrap().map(Result::unwrap).collect();
    let all = concat_batches(&schema, &batches).unwrap();
    let rows = take_record_batch(&all, &UInt32Array::from(order(all.num_rows()))).unwrap();
    let props = WriterProperties::builder().set_max_row_group_row_count(Some(5000)).build();
    let out = std::fs::File::create(study.join("versant_flat.parquet")).unwrap();
    let mut writer = ArrowWriter::try_new(out, schema, Some(props)).unwrap();
    writer.write(&rows).unwrap();
    writer.close().unwrap();
}

/// Row i of `len` rows drawn from `n`: a stride coprime with n, so each n rows are a permutation.
fn shuffled(n: usize, len: usize) -> Vec<u32> {
    const STRIDE: usize = 7919;
    assert!(!n.is_multiple_of(STRIDE), "a stride coprime with {n}");
    (0..len).map(|i| ((i * STRIDE + 13) % n) as u32).collect()
}

#[test]
fn permuting_rows_changes_nothing_and_duplicating_them_doubles_only_the_counts() {
    let (_, claims) = versant_claims(11);
    let original = support::root().join("datasets");
    let permuted = tempfile::tempdir().unwrap();
    reordered_layer(permuted.path(), |n| shuffled(n, n));
    let doubled = tempfile::tempdir().unwrap();
    reordered_layer(doubled.path(), |n| shuffled(n, 2 * n));
    // Every bit of each settlement but the digests of the files read, which are other bytes.
    let exact = |s: &[Settlement]| {
        let mut v = serde_json::to_value(s).unwrap();
        let mut named = 0;
        for settlement in v.as_array_mut().unwrap() {
            if let Some(rerun) = settlement.get_mut("rerun").and_then(Value::as_object_mut) {
                named += usize::from(rerun.remove("files").is_some());
            }
        }
        assert!(named > 0, "the settlements name the files they read");
        v.to_string()
    };
    // The grouped plan's two reductions; the summed plan agrees with them (the first test) and
    // is slow to build: a minute a run in a debug build.
    let engines = [("in process", Engine::new()), ("plan", Engine::new().with_reduction(Reduction::Plan))];
    for (how, engine) in engines {
        let truth = settle(&claims, &original, &engine);
        // Sums are exact: the same rows in another order give the same bits.
        let again = settle(&claims, permuted.path(), &engine);
        assert!(exact(&truth) == exact(&again), "{how}: permuting the rows changed a settlement");
        let twice = settle(&claims, doubled.path(), &engine);
        for (i, (a, b)) in truth.iter().zip(&twice).enumerate() {
            let at = |what: &str| format!("{how}, claim {i}: {what}");
            let (ba, bb) = (a.base.as_ref().unwrap(), b.base.as_ref().unwrap());
            assert_eq!(2 * ba.facts.n, bb.facts.n, "{}", at("n"));
            near(2.0 * ba.facts.weighted, bb.facts.weighted, &at("Σw"));
            near(2.0 * ba.facts.effective, bb.facts.effective, &at("effective base"));
            for (ma, mb) in a.measures.iter().zip(&b.measures) {
                match (ma.estimate, mb.estimate) {
                    (Some(ea), Some(eb)) => near(ea.value, eb.value, &at(&ma.name)),
                    (None, None) => {}
                    other => panic!("{}", at(&format!("{}: {other:?}", ma.name))),
                }
            }
            // The claimed n is now half the base: a right number is a base mismatch.
            let expected = match a.verdict {
                Verdict::Reproduced => Verdict::BaseMismatch,
                v => v,
            };
            assert_eq!(b.verdict, expected, "{}", at(&format!("{:?}", b.reasons)));
        }
    }
}

#[test]
fn grouped_and_summed_scans_agree_on_a_design() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets");
    let catalog = Catalog::load(&data).unwrap();
    let registry = Registry::load(None).unwrap();
    let claims: Vec<Claim> = [("zinc", "extractMean", "All examined persons"), ("diabetes", "extractShare", "White"), ("race", "extractDistribution", "All examined persons")]
        .iter()
        .map(|(column, function, base)| Claim {
            citation: json!({"study": "NHANES II", "period": "1976-1980", "base": {"name": base, "n": 1},
                             "weight": "finalwgt", "source": {"table": "nhanes2", "column": column, "function": function}}),
            numbers: vec![],
        })
        .collect();
    let opts = Options { explain: false, ..Options::default() };
    let (grouped, _) = pipeline::settle_all(&claims, &catalog, &registry, &Engine::new(), opts);
    let (summed, _) = pipeline::settle_all(&claims, &catalog, &registry, &Engine::summed_only(), opts);
    same(&grouped, &summed);
}

/// A data layer of one table, `days.parquet`: 70 days of 50 rows, an integer code `x`, the
/// same as a float `xf` and as `big` with one code of 2^43 (beyond the grouped key) on day 70,
/// and weights `w` (fine), `neg`, `nan`, `inf` and `huge` (one bad value each, on day 70:
/// -1, NaN, +∞, 10^300, beyond the largest weight summed) and `large` (`w` ×10^13, past the
/// old fixed point's 2^31).
fn days_layer(dir: &Path) {
    use datafusion::arrow::array::{Float64Array, Int64Array};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::arrow::record_batch::RecordBatch;
    use std::sync::Arc;
    let rows = 70 * 50;
    let day: Vec<i64> = (0..rows).map(|i| (i / 50 + 1) as i64).collect();
    let x: Vec<i64> = (0..rows).map(|i| (i % 3 == 0) as i64).collect();
    let w: Vec<f64> = (0..rows).map(|i| 1.0 + (i % 7) as f64 / 10.0).collect();
    let bad = |v: f64| -> Vec<f64> {
        w.iter().enumerate().map(|(i, &x)| if i == rows - 1 { v } else { x }).collect()
    };
    let float = |name: &str, v: Vec<f64>| {
        (Field::new(name, DataType::Float64, true), Arc::new(Float64Array::from(v)) as _)
    };
    let columns: Vec<(Field, datafusion::arrow::array::ArrayRef)> = vec![
        (Field::new("day", DataType::Int64, false), Arc::new(Int64Array::from(day))),
        (Field::new("x", DataType::Int64, false), Arc::new(Int64Array::from(x.clone()))),
        (
            Field::new("big", DataType::Int64, false),
            Arc::new(Int64Array::from(
                x.iter()
                    .enumerate()
                    .map(|(i, &v)| if i == rows - 1 { 1 << 43 } else { v })
                    .collect::<Vec<_>>(),
            )),
        ),
        float("xf", x.iter().map(|&v| v as f64).collect()),
        float("w", w.clone()),
        float("neg", bad(-1.0)),
        float("nan", bad(f64::NAN)),
        float("inf", bad(f64::INFINITY)),
        float("huge", bad(1e300)),
        float("large", w.iter().map(|v| v * 1e13).collect()),
    ];
    let schema = Arc::new(Schema::new(columns.iter().map(|(f, _)| f.clone()).collect::<Vec<_>>()));
    let batch = RecordBatch::try_new(schema.clone(), columns.into_iter().map(|(_, a)| a).collect()).unwrap();
    let file = std::fs::File::create(dir.join("days.parquet")).unwrap();
    let mut writer = datafusion::parquet::arrow::ArrowWriter::try_new(file, schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    let periods: String =
        (1..=70).map(|d| format!("[[periods]]\nname = \"D{d}\"\nfilter = \"day = {d}\"\n\n")).collect();
    let toml = format!(
        "[study]\nname = \"Days\"\n\n[[tables]]\nname = \"days\"\npath = \"days.parquet\"\n\
         weights = [\"w\", \"neg\", \"nan\", \"inf\", \"huge\", \"large\"]\n\n\
         [tables.columns.x]\nvalues = {{ \"0\" = \"No\", \"1\" = \"Yes\" }}\nshare = [1]\n\n\
         [tables.columns.xf]\nvalues = {{ \"0\" = \"No\", \"1\" = \"Yes\" }}\nshare = [1]\n\n\
         [tables.columns.big]\nvalues = {{ \"0\" = \"No\", \"1\" = \"Yes\" }}\nshare = [1]\n\n\
         {periods}[[bases]]\nname = \"All\"\nfilter = \"TRUE\"\n"
    );
    std::fs::write(dir.join("study.toml"), toml).unwrap();
}

fn day_share(day: u32, weight: &str, column: &str) -> Claim {
    Claim {
        citation: json!({"study": "Days", "period": format!("D{day}"), "base": {"name": "All", "n": 50},
                         "weight": weight, "source": {"table": "days", "column": column, "function": "extractShare"}}),
        numbers: vec![],
    }
}

#[test]
fn more_than_62_periods_in_one_batch_all_settle() {
    let dir = tempfile::tempdir().unwrap();
    days_layer(dir.path());
    let catalog = Catalog::load(dir.path()).unwrap();
    let registry = Registry::load(None).unwrap();
    let claims: Vec<Claim> = (1..=70).map(|d| day_share(d, "w", "x")).collect();
    let opts = Options { explain: false, ..Options::default() };
    let (grouped, _) = pipeline::settle_all(&claims, &catalog, &registry, &Engine::new(), opts);
    for (d, s) in grouped.iter().enumerate() {
        assert_eq!(s.verdict, recite::settle::Verdict::Reproduced, "day {}: {:?}", d + 1, s.reasons);
    }
    let (summed, _) = pipeline::settle_all(&claims, &catalog, &registry, &Engine::summed_only(), opts);
    same(&grouped, &summed);
}

#[test]
fn weights_that_cannot_be_summed_fail_alike_in_both_plans() {
    let dir = tempfile::tempdir().unwrap();
    days_layer(dir.path());
    let catalog = Catalog::load(dir.path()).unwrap();
    let registry = Registry::load(None).unwrap();
    let opts = Options { explain: false, ..Options::default() };
    // Day 70 holds the bad values; day 1 does not. x takes the grouped plan, xf the summed one.
    for (column, reduction) in [("x", Reduction::InProcess), ("x", Reduction::Plan), ("xf", Reduction::Plan)]
    {
        let claims: Vec<Claim> = ["w", "neg", "nan", "inf", "huge", "large"]
            .iter()
            .flat_map(|w| [day_share(1, w, column), day_share(70, w, column)])
            .collect();
        let engine = Engine::new().with_reduction(reduction);
        let (settled, _) = pipeline::settle_all(&claims, &catalog, &registry, &engine, opts);
        let verdicts: Vec<String> = settled
            .iter()
            .map(|s| match s.verdict {
                recite::settle::Verdict::Unverifiable => s.reasons.join("; "),
                v => format!("{v:?}"),
            })
            .collect();
        let expect = |i: usize, needle: &str| {
            assert!(verdicts[i].contains(needle), "{column}, claim {i}: {needle:?} not in {:?}", verdicts[i]);
        };
        expect(0, "Reproduced");
        expect(1, "Reproduced");
        for (i, w) in [(2, "neg"), (4, "nan"), (6, "inf")] {
            expect(i, "Reproduced");
            expect(i + 1, &format!("weight \"{w}\" has negative, NaN or infinite values"));
        }
        // 1e300 is beyond 2^256, the largest weight summed: its day fails, the other day is
        // summed as if it were not in the table (its scale is not coarsened by it).
        expect(8, "Reproduced");
        expect(9, "weight \"huge\" is too large");
        let estimate = |i: usize| settled[i].measures[0].estimate.map(|e| (e.value, e.se, e.deff));
        assert_eq!(estimate(8), estimate(0), "{column}: day 1 on \"huge\" and on \"w\"");
        // Weights ×10^13 (past the old 2^31 limit) are summed, to the same statistics.
        expect(10, "Reproduced");
        expect(11, "Reproduced");
        for (i, j) in [(10, 0), (11, 1)] {
            let (a, b) = (estimate(i).unwrap(), estimate(j).unwrap());
            let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * x.abs().max(y.abs());
            assert!(close(a.0, b.0) && close(a.1, b.1), "{column}, claim {i}: {a:?} vs {b:?}");
        }
    }
}

#[test]
fn codes_beyond_the_grouped_key_are_detected_not_dropped() {
    let dir = tempfile::tempdir().unwrap();
    days_layer(dir.path());
    let catalog = Catalog::load(dir.path()).unwrap();
    let registry = Registry::load(None).unwrap();
    let claims = [day_share(70, "w", "big"), day_share(1, "w", "big")];
    let opts = Options { explain: false, ..Options::default() };
    let (summed, _) = pipeline::settle_all(&claims, &catalog, &registry, &Engine::summed_only(), opts);
    for reduction in [Reduction::InProcess, Reduction::Plan] {
        let engine = Engine::new().with_reduction(reduction);
        let (grouped, gs) = pipeline::settle_all(&claims, &catalog, &registry, &engine, opts);
        same(&grouped, &summed);
        // The row coded 2^43 stays in day 70's base: all 50 rows.
        for s in &grouped {
            assert_eq!(s.verdict, recite::settle::Verdict::Reproduced, "{:?}", s.reasons);
        }
        assert_eq!(gs.plans.len(), 1, "{:?}", gs.plans);
        assert_eq!(gs.plans[0].plan, ScanPlan::Summed);
        assert!(gs.plans[0].reason.contains("\"big\" holds codes beyond ±2^42"), "{}", gs.plans[0].reason);
    }
}

/// `recite check ARGS --format json`, once per reduction: the report, after asserting the two
/// are equal byte for byte and settle some claims.
fn same_report_both_ways(args: &[&str]) -> serde_json::Value {
    let run = |how: &str| {
        let mut a = vec!["check"];
        a.extend(args);
        a.extend(["--format", "json", "--reduction", how]);
        let out = support::recite(&a);
        assert!(
            matches!(support::code(&out), 0 | 1),
            "{args:?} --reduction {how}: {}",
            support::stderr(&out)
        );
        support::stdout(&out)
    };
    let (local, plan) = (run("in-process"), run("plan"));
    if local != plan {
        let at =
            local.bytes().zip(plan.bytes()).position(|(a, b)| a != b).unwrap_or(local.len().min(plan.len()));
        let near = |s: &str| s[at.saturating_sub(200).min(s.len())..(at + 200).min(s.len())].to_string();
        panic!(
            "{args:?}: the reports differ at byte {at}:\nin-process …{}…\nplan …{}…",
            near(&local),
            near(&plan)
        );
    }
    let report: serde_json::Value = serde_json::from_str(&local).unwrap();
    assert!(report["summary"]["claims"].as_u64().unwrap() > 0, "{args:?}: no claims settled");
    report
}

/// Writes `{result, citation}` lines to `dir/NAME.jsonl`, returning its path.
fn claims_file(dir: &Path, name: &str, citations: &[serde_json::Value]) -> String {
    let text: String = citations
        .iter()
        .map(|c| json!({"result": {"value": 0.5}, "citation": c}).to_string() + "\n")
        .collect();
    let path = dir.join(format!("{name}.jsonl"));
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn both_reductions_give_byte_identical_reports_on_the_examples() {
    same_report_both_ways(&["examples/transcripts", "examples/citations"]);
    // The generated Versant claims: breakdown cells, two weights, explanations (other weights,
    // periods, bases, columns).
    let dir = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets");
    let catalog = Catalog::load(&data).unwrap();
    let registry = Registry::load(None).unwrap();
    let spec = ClaimSpec { study: "Versant".into(), count: 300, wrong: 0.2, seed: 5 };
    let made = generate(&spec, &catalog, &registry, &Engine::new()).unwrap();
    let text: String = made.iter().map(|c| c.line.to_string() + "\n").collect();
    let file = dir.path().join("versant.jsonl");
    std::fs::write(&file, text).unwrap();
    let report = same_report_both_ways(&[file.to_str().unwrap()]);
    assert_eq!(report["summary"]["claims"], 300);
    // NHANES II: a design (strata and PSUs) on every column.
    let nhanes: Vec<serde_json::Value> = [("zinc", "extractMean"), ("diabetes", "extractShare"), ("race", "extractDistribution"), ("sex", "extractShare")]
        .iter()
        .map(|(column, function)| json!({"study": "NHANES II", "period": "1976-1980", "base": {"name": "All examined persons", "n": 1},
                                         "weight": "finalwgt", "source": {"table": "nhanes2", "column": column, "function": function}}))
        .collect();
    same_report_both_ways(&[&claims_file(dir.path(), "nhanes", &nhanes)]);
}

#[test]
fn both_reductions_give_byte_identical_reports_on_designs_and_replicate_weights() {
    let dir = tempfile::tempdir().unwrap();
    let api = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/api");
    let mut citations = Vec::new();
    // Designs (stratified, clustered), replicate weights of three kinds; the whole sample (a
    // plan reduces it) and subgroups (the rank of their replicate weights: in process).
    for table in [
        "apistrat",
        "apiclus1",
        "apiclus2",
        "apistrat_jkn",
        "apistrat_brr",
        "apiclus1_jk1",
        "apiclus1_boot_default",
    ] {
        for base in ["All schools", "High schools", "Schools that met their target"] {
            for (column, function) in
                [("sch_wide", "extractShare"), ("awards", "extractShare"), ("stype", "extractDistribution")]
            {
                citations.push(json!({"study": "California API", "period": "1999-2000", "base": {"name": base, "n": 1},
                                      "weight": "pw", "source": {"table": table, "column": column, "function": function}}));
            }
        }
    }
    let file = claims_file(dir.path(), "api", &citations);
    let report = same_report_both_ways(&[&file, "--data", api.to_str().unwrap()]);
    assert_eq!(report["summary"]["claims"], citations.len());
}

#[test]
fn both_reductions_give_byte_identical_reports_on_bad_weights_and_codes() {
    let dir = tempfile::tempdir().unwrap();
    days_layer(dir.path());
    let mut citations = Vec::new();
    // Several weights on one scan, the invalid ones (negative, NaN, infinite), one beyond the
    // largest summed and one past the old fixed point's 2^31; days with and without the bad
    // values; unweighted.
    for day in [1, 2, 69, 70] {
        for weight in ["w", "neg", "nan", "inf", "huge", "large", "unweighted"] {
            citations.push(day_share(day, weight, "x").citation);
        }
    }
    let data = dir.path().to_str().unwrap().to_string();
    same_report_both_ways(&[&claims_file(dir.path(), "weights", &citations), "--data", &data]);
    // A code beyond ±2^42: the table falls back to the summed plan under either reduction.
    let big: Vec<serde_json::Value> = [1, 70].iter().map(|&d| day_share(d, "w", "big").citation).collect();
    let report = same_report_both_ways(&[&claims_file(dir.path(), "big", &big), "--data", &data]);
    assert_eq!(report["stats"]["plans"][0]["plan"], "summed", "{}", report["stats"]);
}

/// The plan's sums against sums worked by hand, on a table small enough to add up.
#[test]
fn the_plan_reduction_sums_what_a_hand_count_gives() {
    // x, w, wave: wave 1 has x = 1, 2, 1, (null), 2 with w = 0.5, 1.5, 2, 1, 0.25; wave 2 one
    // more row (x = 1, w = 3) outside the period. Binary fractions, so every sum is exact.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.csv"), "x,w,wave\n1,0.5,1\n2,1.5,1\n1,2,1\n,1,1\n2,0.25,1\n1,3,2\n")
        .unwrap();
    std::fs::write(
        dir.path().join("study.toml"),
        "[study]\nname = \"Hand\"\n[[tables]]\nname = \"t\"\npath = \"t.csv\"\nweights = [\"w\"]\n\
         [tables.columns.x]\nvalues = { \"1\" = \"One\", \"2\" = \"Two\" }\nshare = [1]\n\
         [[periods]]\nname = \"W1\"\nfilter = \"wave = 1\"\n[[bases]]\nname = \"All\"\nfilter = \"TRUE\"\n",
    )
    .unwrap();
    let catalog = Catalog::load(dir.path()).unwrap();
    let registry = Registry::load(None).unwrap();
    let engine = Engine::new().with_reduction(Reduction::Plan);
    let citation = json!({"study": "Hand", "period": "W1", "base": {"name": "All", "n": 4}, "weight": "w",
                          "source": {"table": "t", "column": "x", "function": "extractShare"}});
    let r =
        recite::resolve::resolve(&recite::citation::parse(&citation).unwrap(), &catalog, &registry, &engine)
            .unwrap();
    assert_eq!(
        recite::engine::needs_in_process(&recite::engine::Job {
            rows: r.rows.clone(),
            measures: r.measures.clone(),
            cells: vec![]
        }),
        None
    );
    let (outcomes, stats) =
        engine.run(&[recite::engine::Job { rows: r.rows, measures: r.measures, cells: vec![] }]);
    assert_eq!(stats.plans[0].plan, ScanPlan::Grouped);
    assert_eq!(stats.rows_scanned, 5, "the period's rows, the null code's among them");
    let out = outcomes[0].as_ref().unwrap();
    assert!(
        matches!(out.vars[..], [recite::engine::Var::One, recite::engine::Var::Ind(_)]),
        "{:?}",
        out.vars
    );
    let s = &out.sums;
    // Base: the four wave-1 rows with a code. Σw = .5 + 1.5 + 2 + .25 = 4.25; x = 1: .5 + 2 = 2.5.
    assert_eq!(s.n, 4.0);
    assert_eq!(s.totals, [4.25, 2.5]);
    assert_eq!(s.counts, [4.0, 2.0]);
    // Σw² = .25 + 2.25 + 4 + .0625 = 6.5625; over x = 1: .25 + 4 = 4.25 (with 1 and with itself).
    assert_eq!(s.moments[&(0, 0)], 6.5625);
    assert_eq!(s.moments[&(0, 1)], 4.25);
    assert_eq!(s.moments[&(1, 1)], 4.25);
}
