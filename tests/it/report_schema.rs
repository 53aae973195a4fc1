//! The JSON report against its committed JSON Schema (`docs/report.schema.json`), which is
//! generated from the Rust types: the committed file must be current, and real reports must
//! validate against it. Regenerate with `RECITE_UPDATE_SCHEMA=1 cargo test --test it report_schema`.

use serde_json::Value;

use crate::support::{recite, root};

#[test]
fn the_committed_schema_is_generated_from_the_types() {
    let generated = recite::report::json::schema();
    let path = root().join("docs/report.schema.json");
    if std::env::var_os("RECITE_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/report.schema.json is stale: run RECITE_UPDATE_SCHEMA=1 cargo test --test it report_schema"
    );
}

fn report(args: &[&str]) -> Value {
    let out = recite(args);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn reports_validate_against_the_committed_schema() {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("docs/report.schema.json")).unwrap())
            .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let reports = [
        report(&["check", "examples/transcripts", "--format", "json", "--timings"]),
        report(&["check", "tests/fixtures", "--format", "json"]),
        report(&["verify", "examples/citations/nhanes2-zinc.json", "--format", "json"]),
    ];
    for r in &reports {
        let errors: Vec<String> =
            validator.iter_errors(r).map(|e| format!("{} at {}", e, e.instance_path())).collect();
        assert!(errors.is_empty(), "{}", errors.join("\n"));
        assert!(r["summary"]["claims"].as_u64().unwrap() > 0);
    }
}

#[test]
fn the_committed_lines_schema_is_generated_from_the_types_and_lines_validate() {
    let generated = recite::report::jsonl::schema();
    let path = root().join("docs/report-lines.schema.json");
    if std::env::var_os("RECITE_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/report-lines.schema.json is stale: run RECITE_UPDATE_SCHEMA=1 cargo test --test it report_schema"
    );
    let validator = jsonschema::validator_for(&serde_json::from_str(&committed).unwrap()).unwrap();
    let out = recite(&["check", "examples/transcripts", "tests/fixtures", "--format", "jsonl", "--timings"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().count() > 10);
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if let Err(e) = validator.validate(&v) {
            panic!("{e}: {line}");
        }
    }
}
