//! Settling through the core's `Scan` trait, over sums written by hand: no DataFusion in this
//! build, and every expected verdict follows from arithmetic done here, not by any engine.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use recite_core::catalog::{self, Catalog, Study};
use recite_core::claim::leaves;
use recite_core::extractor::Registry;
use recite_core::resolve::{Field, Schema, Schemas};
use recite_core::scan::{EngineError, Job, Outcome, Scan, ScanStats, Sums, Var, vars_for};
use recite_core::settle::pipeline::{Claim, Options, settle_all};
use recite_core::settle::{Settlement, Verdict};
use serde_json::{Value, json};

/// A table of four rows, `score` = 1, 2, 3 and 6, each of weight 1; `city` holds text.
/// Σ1 = 4, Σx = 12, Σx² = 50, Σx³ = 252, Σx⁴ = 1394, so the mean is 12 / 4 = 3.
struct FourRows {
    /// When set, every job fails with this (a table that cannot be read).
    fail: Option<EngineError>,
    /// The number of jobs of each run asked of it.
    runs: Mutex<Vec<usize>>,
}

impl FourRows {
    fn new(fail: Option<EngineError>) -> FourRows {
        FourRows { fail, runs: Mutex::default() }
    }
}

/// Σ x^p over the four rows, for p = 0..=4.
const POWER_SUMS: [f64; 5] = [4.0, 12.0, 50.0, 252.0, 1394.0];

impl Schemas for FourRows {
    fn schema(&self, _: &Study, _: &catalog::Table) -> Result<Arc<Schema>, recite_core::resolve::TableError> {
        Ok(Arc::new(Schema::new(vec![Field::new("score", "Int64", true), Field::new("city", "Utf8", false)])))
    }
    // Four rows in memory: no versions, no files.
    fn version(
        &self,
        _: &Study,
        _: &catalog::Table,
        _: Option<&recite_core::version::Pin>,
    ) -> Result<Option<recite_core::version::Found>, recite_core::resolve::TableError> {
        Ok(None)
    }

    fn as_of(&self) -> Option<&str> {
        None
    }

    fn saved_version(&self, _: &str, _: &str) -> Option<u64> {
        None
    }

    fn schema_at(
        &self,
        found: &recite_core::version::Found,
    ) -> Result<Arc<Schema>, recite_core::resolve::TableError> {
        Err(recite_core::resolve::TableError::VersionsNotRead(found.location.clone()))
    }

    fn file_digests(&self, _: &Study, _: &catalog::Table) -> Vec<recite_core::version::FileDigest> {
        Vec::new()
    }
}

impl Scan for FourRows {
    fn run(&self, jobs: &[Job]) -> (Vec<Result<Outcome, EngineError>>, ScanStats) {
        self.runs.lock().unwrap().push(jobs.len());
        let outcomes = jobs
            .iter()
            .map(|job| {
                if let Some(e) = &self.fail {
                    return Err(e.clone());
                }
                let vars = vars_for(&job.measures);
                let power = |v: &Var| match v {
                    Var::One => 0,
                    Var::X => 1,
                    Var::X2 => 2,
                    Var::Ind(_) => panic!("a mean needs no indicator"),
                };
                let mut moments = HashMap::new();
                for (j, a) in vars.iter().enumerate() {
                    for (k, b) in vars.iter().enumerate().skip(j) {
                        moments.insert((j, k), POWER_SUMS[power(a) + power(b)]);
                    }
                }
                let sums = Sums {
                    n: 4.0,
                    totals: vars.iter().map(|v| POWER_SUMS[power(v)]).collect(),
                    counts: vec![4.0; vars.len()],
                    moments,
                    psus: Vec::new(),
                    replicates: None,
                };
                Ok(Outcome { vars, sums, cells: Vec::new() })
            })
            .collect();
        (outcomes, ScanStats { tables_scanned: 1, scans: 1, rows_scanned: 4, ..ScanStats::default() })
    }
}

/// The four rows' study, in a folder kept as long as the catalog is used.
fn four_rows_catalog() -> (Catalog, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let study = "[study]\nname = \"Four rows\"\n\n[thresholds]\nlow = 2\nvery_low = 1\n\n\
                 [[tables]]\nname = \"scores\"\npath = \"scores.csv\"\n\n\
                 [[periods]]\nname = \"2026\"\nfilter = \"true\"\n\n\
                 [[bases]]\nname = \"Everyone\"\nfilter = \"true\"\n";
    std::fs::write(dir.path().join("study.toml"), study).unwrap();
    (Catalog::load(dir.path()).unwrap(), dir)
}

/// A claim of `result`, citing `column` of the four rows with base n `n`.
fn claim(column: &str, n: u64, result: Value) -> Claim {
    let citation = json!({
        "study": "Four rows",
        "period": "2026",
        "base": {"name": "Everyone", "n": n},
        "source": {"table": "scores", "column": column, "function": "extractMean"}
    });
    Claim { citation, numbers: leaves(&result) }
}

/// Settles one claim on the four rows' study: `result` claimed, citing `column` with base n `n`.
fn settle(scan: &FourRows, column: &str, n: u64, result: Value) -> Settlement {
    let (catalog, _dir) = four_rows_catalog();
    let registry = Registry::load(None).unwrap();
    let opts = Options { explain: false, ..Options::default() };
    let (mut settled, _) = settle_all(&[claim(column, n, result)], &catalog, &registry, scan, opts);
    settled.remove(0)
}

#[test]
fn a_mean_written_by_hand_reproduces_and_a_wrong_one_does_not() {
    let scan = FourRows::new(None);
    let s = settle(&scan, "score", 4, json!({"mean": "3.0"}));
    assert_eq!(s.verdict, Verdict::Reproduced, "{:?}", s.reasons);
    // 3.2 is 0.2 from 3, past half a unit of its last digit (0.05).
    let s = settle(&scan, "score", 4, json!({"mean": "3.2"}));
    assert_eq!(s.verdict, Verdict::Discrepant, "{:?}", s.reasons);
    // The right mean on a base of 5 rows, where there are 4.
    let s = settle(&scan, "score", 5, json!({"mean": "3.0"}));
    assert_eq!(s.verdict, Verdict::BaseMismatch, "{:?}", s.reasons);
}

#[test]
fn a_text_column_or_a_failed_scan_leaves_the_claim_unverifiable() {
    let s = settle(&FourRows::new(None), "city", 4, json!({"mean": "3.0"}));
    assert_eq!(s.verdict, Verdict::Unverifiable);
    assert!(s.reasons.iter().any(|r| r.contains("holds Utf8, not numbers")), "{:?}", s.reasons);
    let unreadable = EngineError::Table { location: "scores.csv".into(), error: "no such file".into() };
    let s = settle(&FourRows::new(Some(unreadable)), "score", 4, json!({"mean": "3.0"}));
    assert_eq!(s.verdict, Verdict::Unverifiable, "a scan that failed never lets a claim pass");
    assert!(s.reasons.iter().any(|r| r.contains("no such file")), "{:?}", s.reasons);
}

#[test]
fn claims_that_name_the_same_rows_and_measures_share_one_job() {
    let (catalog, _dir) = four_rows_catalog();
    let registry = Registry::load(None).unwrap();
    let scan = FourRows::new(None);
    // Three claims on the mean of `score`, two of them with the same base n, and one on `city`,
    // which does not resolve (text): one job for the three, as they cite the same things.
    let claims = [
        claim("score", 4, json!({"mean": "3.0"})),
        claim("score", 4, json!({"mean": "3.2"})),
        claim("score", 5, json!({"mean": "3.0"})),
        claim("city", 4, json!({"mean": "3.0"})),
    ];
    let opts = Options { explain: false, ..Options::default() };
    let (settled, _) = settle_all(&claims, &catalog, &registry, &scan, opts);
    let verdicts: Vec<Verdict> = settled.iter().map(|s| s.verdict).collect();
    assert_eq!(
        verdicts,
        [Verdict::Reproduced, Verdict::Discrepant, Verdict::BaseMismatch, Verdict::Unverifiable]
    );
    assert_eq!(*scan.runs.lock().unwrap(), [1], "one run of one job");
}
