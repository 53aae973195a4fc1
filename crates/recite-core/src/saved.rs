//! Re-running a saved ruling on the data versions it read (issue 48): "re-run on the pinned
//! version" must reproduce the ruling bit for bit, whatever was committed since. A claim pinned
//! by its period or citation is re-run on that pin anyway; a claim that read the latest of a
//! versioned table is re-run on the version the latest was then ([`SavedVersions`], read from
//! the saved JSON report), through [`OnSaved`], a scan that answers
//! [`Schemas::saved_version`] and passes everything else to the engine.
//!
//! A table that keeps no versions (files, a PostgreSQL server) cannot be re-read as it was:
//! its claims are re-run on the data as it is, and a comparison of the two reports says
//! whether anything moved.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::catalog::{self, Study};
use crate::resolve::{Schema, Schemas, TableError};
use crate::scan::{EngineError, Job, Kept, Outcome, Reading, Scan, ScanStats};
use crate::version::{Found, Pin, UNVERSIONED_FORMAT};

/// The version each versioned table's latest was when a saved report was settled, by study
/// and table name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SavedVersions(BTreeMap<(String, String), u64>);

impl SavedVersions {
    /// The versions a saved JSON report's claims read where nothing in the inputs or the
    /// catalog pins them: `chosen` `latest`, `as_of_flag` (the run's `--as-of`, which a re-run
    /// is not given) or `saved` (a report that was itself a re-run on the pinned versions).
    /// Claims pinned by their period or citation keep their pin. PostgreSQL's snapshots are
    /// left out: a server cannot be read as it was.
    pub fn of_report(report: &Value) -> SavedVersions {
        let mut saved = BTreeMap::new();
        let claims = report["inputs"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|i| i["claims"].as_array().into_iter().flatten());
        for c in claims {
            let v = &c["rerun"]["data_version"];
            let (Some(study), Some(table), Some(version)) =
                (c["rerun"]["study"].as_str(), c["rerun"]["table"].as_str(), v["version"].as_u64())
            else {
                continue;
            };
            if v["format"] == UNVERSIONED_FORMAT
                || !matches!(v["chosen"].as_str(), Some("latest" | "as_of_flag" | "saved"))
            {
                continue;
            }
            // One run reads one latest per table; should a commit have landed mid-run, the
            // first claim's version stands for the table.
            saved.entry((study.to_string(), table.to_string())).or_insert(version);
        }
        SavedVersions(saved)
    }

    /// The version saved for `table` of `study`, if any.
    pub fn get(&self, study: &str, table: &str) -> Option<u64> {
        self.0.get(&(study.to_string(), table.to_string())).copied()
    }

    /// Whether no claim read the latest of a versioned table.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `(study, table, version)` for each table, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str, u64)> {
        self.0.iter().map(|((s, t), v)| (s.as_str(), t.as_str(), *v))
    }
}

/// A scan that re-runs the latest of each table in [`SavedVersions`] on the saved version, and
/// is otherwise `scan`.
pub struct OnSaved<'a> {
    /// The engine.
    pub scan: &'a dyn Scan,
    /// The versions to re-run on.
    pub saved: &'a SavedVersions,
}

impl Schemas for OnSaved<'_> {
    fn schema(&self, study: &Study, table: &catalog::Table) -> Result<Arc<Schema>, TableError> {
        self.scan.schema(study, table)
    }

    fn version(
        &self,
        study: &Study,
        table: &catalog::Table,
        pin: Option<&Pin>,
    ) -> Result<Option<Found>, TableError> {
        self.scan.version(study, table, pin)
    }

    fn as_of(&self) -> Option<&str> {
        self.scan.as_of()
    }

    fn saved_version(&self, study: &str, table: &str) -> Option<u64> {
        self.saved.get(study, table)
    }

    fn schema_at(&self, found: &Found) -> Result<Arc<Schema>, TableError> {
        self.scan.schema_at(found)
    }

    fn file_digests(&self, study: &Study, table: &catalog::Table) -> Vec<crate::version::FileDigest> {
        self.scan.file_digests(study, table)
    }
}

impl Scan for OnSaved<'_> {
    fn run(&self, jobs: &[Job]) -> (Vec<Result<Outcome, EngineError>>, ScanStats) {
        self.scan.run(jobs)
    }

    fn run_keeping(
        &self,
        jobs: &[Job],
        anticipated: &[Job],
    ) -> (Vec<Result<Outcome, EngineError>>, ScanStats, Option<Kept>) {
        self.scan.run_keeping(jobs, anticipated)
    }

    fn run_again(
        &self,
        jobs: &[Job],
        kept: Option<&Kept>,
        reading: Reading,
    ) -> (Vec<Result<Outcome, EngineError>>, ScanStats) {
        self.scan.run_again(jobs, kept, reading)
    }
}

/// What moved between two reports of the same inputs: first each file read (of a table of
/// plain files, which keeps no versions) whose size or digest changed, came or went, once for
/// the whole report; then claim by claim the data version read (a versioned table's), the
/// verdict, the base n recomputed, and each measure's recomputed value. A verdict that changed
/// says why (`why`: the version or the files it read moved and how, and the claim's reasons
/// now).
pub fn moved(before: &Value, after: &Value) -> Value {
    let (b, a) = (claims(before), claims(after));
    let mut out = files_moved(&files_read(&b), &files_read(&a));
    if b.len() != a.len() {
        out.push(json!({ "what": "claims", "before": b.len(), "after": a.len() }));
    }
    for (n, (cb, ca)) in b.iter().zip(&a).enumerate() {
        let mut here: Vec<Value> = Vec::new();
        let (vb, va) = (&cb["rerun"]["data_version"], &ca["rerun"]["data_version"]);
        if vb["version"] != va["version"] || vb["format"] != va["format"] {
            here.push(json!({
                "claim": n, "what": "data version", "table": ca["rerun"]["table"],
                "before": version_words(vb), "after": version_words(va),
            }));
        }
        if cb["base"]["n"] != ca["base"]["n"] {
            here.push(
                json!({ "claim": n, "what": "base n", "before": cb["base"]["n"], "after": ca["base"]["n"] }),
            );
        }
        let values = |c: &Value| -> Vec<(String, Value)> {
            c["measures"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| (m["name"].as_str().unwrap_or_default().to_string(), m["estimate"]["value"].clone()))
                .collect()
        };
        let after_values: HashMap<String, Value> = values(ca).into_iter().collect();
        for (name, v) in values(cb) {
            let w = after_values.get(&name).cloned().unwrap_or(Value::Null);
            if v.as_f64() != w.as_f64() {
                here.push(
                    json!({ "claim": n, "what": "recomputed", "measure": name, "before": v, "after": w }),
                );
            }
        }
        if cb["verdict"] != ca["verdict"] {
            // The files are named once above; a changed verdict names those its claim read.
            let files_here = files_moved(&files_read(&[*cb]), &files_read(&[*ca]));
            let mut why: Vec<String> = files_here.iter().chain(&here).map(moved_words).collect();
            if why.is_empty() {
                why.push("nothing recomputed moved: the settlement's rules did".to_string());
            }
            here.insert(
                0,
                json!({
                    "claim": n, "what": "verdict", "before": cb["verdict"], "after": ca["verdict"],
                    "why": why.join("; "), "reasons": ca["reasons"],
                }),
            );
        }
        out.extend(here);
    }
    Value::Array(out)
}

/// The files the claims read (`rerun.files`), by name (each file's name is relative to its
/// study's folder, and studies' tables are files of their own folders).
fn files_read(claims: &[&Value]) -> BTreeMap<String, Value> {
    let mut files = BTreeMap::new();
    for file in claims.iter().filter_map(|c| c["rerun"]["files"].as_array()).flatten() {
        if let Some(name) = file["name"].as_str() {
            files.insert(name.to_string(), file.clone());
        }
    }
    files
}

/// Each file read before or after whose size or digest is not the same in both, by name.
fn files_moved(before: &BTreeMap<String, Value>, after: &BTreeMap<String, Value>) -> Vec<Value> {
    let names: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    let same =
        |b: &Value, a: &Value| b["bytes"] == a["bytes"] && b["of"] == a["of"] && b["digest"] == a["digest"];
    names
        .into_iter()
        .filter_map(|name| match (before.get(name), after.get(name)) {
            (Some(b), Some(a)) if same(b, a) => None,
            (b, a) => Some(json!({
                "what": "file", "file": name,
                "before": b.cloned().unwrap_or(Value::Null), "after": a.cloned().unwrap_or(Value::Null),
            })),
        })
        .collect()
}

/// A file read, in words: "767652 bytes, Parquet footer 575a1b2c…", or that it was not read.
pub fn file_words(f: &Value) -> String {
    if f.is_null() {
        return "not read".to_string();
    }
    let digest = f["digest"].as_str().unwrap_or("?");
    let short: String = digest.chars().take(8).collect();
    let of = match f["of"].as_str() {
        Some("footer") => "Parquet footer",
        Some("content") => "content",
        _ => "digest",
    };
    format!("{} bytes, {of} {short}…", f["bytes"])
}

/// A report's `data_version` in words (`Delta version 2, committed …`), or that the table
/// keeps none.
fn version_words(v: &Value) -> Value {
    match (v["format"].as_str(), v["version"].as_u64()) {
        (Some("postgres"), _) => json!(format!(
            "PostgreSQL, unversioned (server snapshot {})",
            v["snapshot"].as_str().unwrap_or("unknown")
        )),
        (Some(_), Some(n)) => {
            json!(format!("Delta version {n}, committed {}", v["committed"].as_str().unwrap_or("?")))
        }
        _ => json!("files, read as they are (no versions)"),
    }
}

/// One move in words, for a verdict's `why`.
fn moved_words(m: &Value) -> String {
    let text = |v: &Value| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
    match m["what"].as_str() {
        Some("data version") => {
            format!(
                "table {} was read at {}, now at {}",
                text(&m["table"]),
                text(&m["before"]),
                text(&m["after"])
            )
        }
        Some("file") => {
            format!(
                "file {} was {}, now {}",
                text(&m["file"]),
                file_words(&m["before"]),
                file_words(&m["after"])
            )
        }
        Some("recomputed") => {
            format!(
                "{} recomputed {} then, {} now",
                text(&m["measure"]),
                text(&m["before"]),
                text(&m["after"])
            )
        }
        Some(what) => format!("{what} {} then, {} now", text(&m["before"]), text(&m["after"])),
        None => m.to_string(),
    }
}

/// Whether two reports of the same inputs rule alike, bit for bit: every claim the same JSON
/// but for who chose its data version (a re-run on the pinned version says so).
pub fn same_rulings(before: &Value, after: &Value) -> bool {
    let strip = |c: &Value| {
        let mut c = c.clone();
        if let Some(v) = c["rerun"]["data_version"].as_object_mut() {
            v.remove("chosen");
            v.remove("pin");
        }
        c
    };
    let (b, a) = (claims(before), claims(after));
    b.len() == a.len() && b.iter().zip(&a).all(|(x, y)| strip(x) == strip(y))
}

/// Every claim of a JSON report, in order over its inputs.
fn claims(report: &Value) -> Vec<&Value> {
    report["inputs"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|i| i["claims"].as_array().into_iter().flatten())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_latest_of_versioned_tables_is_saved() {
        let claim = |table: &str, format: &str, version: u64, chosen: &str| {
            json!({"rerun": {"study": "S", "table": table,
                "data_version": {"format": format, "version": version, "chosen": chosen}}})
        };
        let report = json!({"inputs": [
            {"claims": [claim("a", "delta", 2, "latest"), claim("b", "delta", 0, "period")]},
            {"claims": [claim("a", "delta", 3, "latest"), claim("pg", "postgres", 766, "latest"),
                        claim("c", "delta", 5, "saved"), {"rerun": {"study": "S", "table": "files"}},
                        claim("d", "delta", 1, "as_of_flag"), claim("e", "delta", 4, "citation")]},
        ]});
        let saved = SavedVersions::of_report(&report);
        assert_eq!(saved.iter().collect::<Vec<_>>(), [("S", "a", 2), ("S", "c", 5), ("S", "d", 1)]);
        assert_eq!(saved.get("S", "b"), None);
        assert!(SavedVersions::of_report(&json!({})).is_empty());
    }

    fn report(verdict: &str, value: f64, n: u64) -> Value {
        json!({ "summary": { "verdicts": { verdict: 1 } }, "inputs": [ { "claims": [ {
            "verdict": verdict,
            "rerun": { "study": "Versant Mega Tracker", "period": "W6 (April 2026)" },
            "base": { "n": n },
            "measures": [
                { "name": "Aware", "estimate": { "value": 1.0 } },
                { "name": "Considered", "estimate": { "value": value }, "claims": [ { "matched": true } ] }
            ]
        } ] } ] })
    }

    #[test]
    fn what_moved_is_named() {
        let same = moved(&report("REPRODUCED", 0.44, 4654), &report("REPRODUCED", 0.44, 4654));
        assert_eq!(same, json!([]));
        let m = moved(&report("REPRODUCED", 0.44, 4654), &report("DISCREPANT", 0.41, 4600));
        let whats: Vec<&str> = m.as_array().unwrap().iter().map(|e| e["what"].as_str().unwrap()).collect();
        assert_eq!(whats, ["verdict", "base n", "recomputed"]);
        assert_eq!(m[2]["measure"], json!("Considered"));
        assert_eq!(m[2]["after"], json!(0.41));
        assert_eq!(
            m[0]["why"],
            json!("base n 4654 then, 4600 now; Considered recomputed 0.44 then, 0.41 now")
        );
        // Only who chose the version differs: the same ruling.
        let (mut a, mut b) = (report("REPRODUCED", 0.44, 4654), report("REPRODUCED", 0.44, 4654));
        a["inputs"][0]["claims"][0]["rerun"]["data_version"] = json!({"version": 2, "chosen": "latest"});
        b["inputs"][0]["claims"][0]["rerun"]["data_version"] =
            json!({"version": 2, "chosen": "saved", "pin": {"version": 2}});
        assert!(same_rulings(&a, &b));
        assert_eq!(moved(&a, &b), json!([]));
        b["inputs"][0]["claims"][0]["rerun"]["data_version"]["version"] = json!(3);
        assert!(!same_rulings(&a, &b));
        assert_eq!(moved(&a, &b)[0]["what"], json!("data version"));
    }

    #[test]
    fn a_file_that_changed_is_named_once_and_in_each_changed_verdict() {
        let file = |digest: &str| json!({ "name": "x.csv", "bytes": 120, "of": "content", "digest": digest });
        let (mut a, mut b) = (report("REPRODUCED", 0.44, 4654), report("DISCREPANT", 0.41, 4654));
        for (r, d) in [(&mut a, "0123456789abcdef"), (&mut b, "fedcba9876543210")] {
            let claim = r["inputs"][0]["claims"][0].clone();
            r["inputs"][0]["claims"] = json!([claim.clone(), claim]);
            for c in r["inputs"][0]["claims"].as_array_mut().unwrap() {
                c["rerun"]["files"] = json!([file(d)]);
            }
        }
        let m = moved(&a, &b);
        let whats: Vec<&str> = m.as_array().unwrap().iter().map(|e| e["what"].as_str().unwrap()).collect();
        assert_eq!(whats, ["file", "verdict", "recomputed", "verdict", "recomputed"]);
        assert_eq!(m[0]["file"], json!("x.csv"));
        assert_eq!(
            m[1]["why"],
            json!(
                "file x.csv was 120 bytes, content 01234567…, now 120 bytes, content fedcba98…; \
                   Considered recomputed 0.44 then, 0.41 now"
            )
        );
        // A file no longer read is named too, and the same files are not.
        b["inputs"][0]["claims"][1]["rerun"]["files"] = json!([]);
        b["inputs"][0]["claims"][0]["rerun"]["files"] = json!([]);
        assert_eq!(moved(&a, &b)[0]["after"], Value::Null);
        assert!(moved(&a, &a).as_array().unwrap().is_empty());
    }
}
