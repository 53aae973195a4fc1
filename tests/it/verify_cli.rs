//! `recite verify` and `recite catalog` end to end, through the binary: every verdict kind,
//! hostile citations, exit codes, and the catalog proof.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::{recite, recite_stdin, root};

fn verify_json(citation: &Value, extra: &[&str]) -> (i32, Value) {
    let bytes = serde_json::to_vec(citation).unwrap();
    let mut args = vec!["verify", "-", "--format", "json"];
    args.extend_from_slice(extra);
    let out = recite_stdin(&args, &bytes);
    let code = out.status.code().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (code, v["inputs"][0]["claims"][0].clone())
}

fn zinc(n: u64) -> Value {
    json!({
        "study": "NHANES II", "period": "1976-1980",
        "base": {"name": "All examined persons", "n": n}, "weight": "finalwgt",
        "source": {"table": "nhanes2", "column": "zinc", "function": "extractMean"}
    })
}

#[test]
fn reproduced_when_the_number_and_base_match() {
    let (code, c) = verify_json(&json!({"citation": zinc(9189), "result": {"mean": 87.18}}), &[]);
    assert_eq!(c["verdict"], "REPRODUCED");
    assert_eq!(code, 0);
}

#[test]
fn discrepant_shows_the_recomputed_value() {
    let (code, c) = verify_json(&zinc(9189), &["--claim", "mean=88.0"]);
    assert_eq!(c["verdict"], "DISCREPANT");
    assert_eq!(code, 1);
    let cmp = &c["measures"][0]["claims"][0];
    assert_eq!(cmp["matched"], false);
    assert!((cmp["shown"].as_f64().unwrap() - 87.182067).abs() < 1e-5);
    // 88.0 lies inside the 95% CI [86.17, 88.19]; 89.0 does not.
    assert_eq!(cmp["gap"], "within_sampling_error");
    let (_, c) = verify_json(&zinc(9189), &["--claim", "mean=89.0"]);
    assert_eq!(c["measures"][0]["claims"][0]["gap"], "outside_sampling_error");
}

#[test]
fn base_mismatch_when_only_n_differs() {
    let (code, c) = verify_json(&zinc(9000), &["--claim", "87.18"]);
    assert_eq!(c["verdict"], "BASE_MISMATCH");
    assert_eq!(c["base"]["n"], 9189);
    assert_eq!(code, 1);
}

#[test]
fn unverifiable_names_get_suggestions() {
    let mut c = zinc(9189);
    c["source"]["column"] = json!("zink");
    c["period"] = json!("1976-1981");
    let (code, v) = verify_json(&c, &[]);
    assert_eq!(v["verdict"], "UNVERIFIABLE");
    assert_eq!(code, 1);
    let reasons = v["reasons"].to_string();
    assert!(reasons.contains("did you mean \\\"zinc\\\""), "{reasons}");
    assert!(reasons.contains("unknown period"), "{reasons}");
}

#[test]
fn unknown_function_lists_the_registered_ones() {
    let mut c = zinc(9189);
    c["source"]["function"] = json!("extractMedian");
    let (_, v) = verify_json(&c, &[]);
    assert_eq!(v["verdict"], "UNVERIFIABLE");
    let reasons = v["reasons"].to_string();
    assert!(reasons.contains("extractMean"), "{reasons}");
}

#[test]
fn invalid_citations_list_every_problem() {
    let mut c = zinc(9189);
    c["base"]["n"] = json!("9189");
    c.as_object_mut().unwrap().remove("study");
    c["fielded"] = json!("spring 1978");
    let (code, v) = verify_json(&c, &[]);
    assert_eq!(v["verdict"], "INVALID");
    assert_eq!(code, 1);
    let pointers: Vec<&str> =
        v["problems"].as_array().unwrap().iter().map(|p| p["pointer"].as_str().unwrap()).collect();
    assert_eq!(pointers, ["/study", "/fielded", "/base/n"]);
}

#[test]
fn hostile_names_are_refused_without_running_anything() {
    let cases = [
        ("/source/column", json!("zinc; DROP TABLE x"), "unknown column"),
        ("/source/table", json!("../../etc/passwd"), "unknown table"),
        ("/weight", json!("zinc"), "unknown weight"),
        ("/source/column", json!("zinc\" FROM t0; --"), "unknown column"),
    ];
    for (ptr, value, expect) in cases {
        let mut c = zinc(9189);
        *c.pointer_mut(ptr).unwrap() = value.clone();
        let (code, v) = verify_json(&c, &[]);
        assert_eq!(v["verdict"], "UNVERIFIABLE", "{value}");
        assert_eq!(code, 1);
        assert!(v["reasons"].to_string().contains(expect), "{value}: {}", v["reasons"]);
        assert!(v.get("measures").is_none(), "{value}: nothing may be computed");
    }
}

#[test]
fn a_ten_megabyte_name_is_invalid_not_a_crash() {
    let mut c = zinc(9189);
    c["source"]["column"] = json!("x".repeat(10 * 1024 * 1024));
    let (code, v) = verify_json(&c, &[]);
    assert_eq!(v["verdict"], "INVALID");
    assert_eq!(code, 1);
    assert_eq!(v["problems"][0]["pointer"], "/source/column");
    // The report does not echo the 10 MB back.
    assert!(v.to_string().len() < 10_000);
}

#[test]
fn deeply_nested_json_is_invalid_not_a_crash() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let out = recite_stdin(&["verify", "-", "--format", "json"], deep.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &v["inputs"][0]["claims"][0];
    assert_eq!(c["verdict"], "INVALID");
    assert!(c["reasons"][0].as_str().unwrap().contains("recursion limit"), "{}", c["reasons"]);
}

#[test]
fn malformed_json_names_line_and_column() {
    let out = recite_stdin(&["verify", "-"], b"{\n  \"study\": \"NHANES II\",\n  \"period\": }\n");
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("INVALID") && text.contains("line 3 column"), "{text}");
}

#[test]
fn usage_and_io_errors_exit_2() {
    let out = recite(&["verify", "no/such/file.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/file.json"));
    let out = recite(&["verify"]);
    assert_eq!(out.status.code(), Some(2));
    let out = recite_stdin(&["verify", "-", "--claim", "forty"], b"{}");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn text_report_shows_what_was_rerun() {
    let out = recite(&["verify", "examples/citations/nhanes2-zinc.json"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "NHANES II",
        "1976-1980",
        "nhanes2.zinc",
        "Serum zinc",
        "extractMean",
        "finalwgt",
        "All examined persons",
        "REPRODUCED",
        "9189",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
}

#[test]
fn the_json_report_is_byte_identical_across_runs() {
    let a = recite(&["verify", "examples/citations/nhanes2-zinc.json", "--format", "json"]);
    let b = recite(&["verify", "examples/citations/nhanes2-zinc.json", "--format", "json"]);
    assert_eq!(a.stdout, b.stdout);
}

fn copy_study(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
    }
}

#[test]
fn catalog_check_passes_on_the_bundled_data() {
    let out = recite(&["catalog", "check"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("✓ NHANES II"), "{text}");
}

#[test]
fn catalog_check_points_at_a_broken_study() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("nhanes2");
    copy_study(&root().join("datasets/nhanes2"), &study);
    let toml = std::fs::read_to_string(study.join("study.toml")).unwrap();
    let broken = toml
        .replace("filter = \"race = 1\"", "filter = \"rase = 1\"")
        .replace("weights = [\"finalwgt\"]", "weights = [\"finalwgt\", \"weight2\"]")
        .replace("[tables.columns.zinc]", "[tables.columns.zinc_level]");
    std::fs::write(study.join("study.toml"), broken).unwrap();
    let out = recite(&["catalog", "check", "--data", dir.path().to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("study.toml"), "{text}");
    assert!(text.contains("base \"White\"") && text.contains("rase"), "{text}");
    assert!(text.contains("weight \"weight2\""), "{text}");
    assert!(
        text.contains("declared column \"zinc_level\"") && text.contains("did you mean \"zinc\""),
        "{text}"
    );
}

#[test]
fn catalog_check_reports_a_study_file_that_does_not_parse() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("bad");
    std::fs::create_dir_all(&study).unwrap();
    std::fs::write(study.join("study.toml"), "[study]\nname = \"Bad\"\n[[tables]]\nname = 3\n").unwrap();
    let out = recite(&["catalog", "check", "--data", dir.path().to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(text.contains("bad/study.toml") && text.contains("line 4"), "{text}");
}

/// `recite verify -` over a raw JSON text (numbers kept exactly as written).
fn verify_raw(text: &str) -> (i32, Value) {
    let out = recite_stdin(&["verify", "-", "--format", "json"], text.as_bytes());
    let code = out.status.code().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (code, v["inputs"][0]["claims"][0].clone())
}

/// The W6 Considered citation with `result` as raw JSON text, and `base.n` as raw text.
fn w6_with(result: &str, n: &str) -> String {
    format!(
        r#"{{"citation": {{"study": "Versant Mega Tracker", "period": "W6 (April 2026)",
            "base": {{"name": "Adults 18-74, aware of brand", "n": {n}}}, "weight": "main_weight",
            "source": {{"table": "versant_flat", "column": "s14r5", "function": "extractFunnel"}}}},
          "result": {result}}}"#
    )
}

#[test]
fn odd_numbers_zero_and_one_for_shares_are_compared_not_waved_through() {
    // Read as fractions with a ±0.5 tolerance, 0 and 1 matched any share below or above one half.
    let (code, c) = verify_raw(&w6_with(r#"{"Considered": 0, "Familiar": 1}"#, "4654"));
    assert_eq!(c["verdict"], "DISCREPANT", "{c:#}");
    assert_eq!(code, 1);
    let compared: Vec<&Value> = c["measures"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["claims"].as_array().into_iter().flatten())
        .collect();
    assert_eq!(compared.len(), 2);
    assert!(compared.iter().all(|cmp| cmp["matched"] == false && cmp["percent"] == true), "{c:#}");
}

#[test]
fn odd_numbers_one_matches_an_exact_whole_share() {
    // Every base row is aware of the brand: `"Aware": 1` is the exact fraction 1.
    let (_, c) = verify_raw(&w6_with(r#"{"Aware": 1}"#, "4654"));
    assert_eq!(c["verdict"], "REPRODUCED", "{c:#}");
    let cmp = &c["measures"][0]["claims"][0];
    assert_eq!(cmp["tolerance"], 0.0);
    assert_eq!(cmp["percent"], false);
}

#[test]
fn odd_numbers_huge_exponent_makes_the_claim_invalid() {
    let (code, c) = verify_raw(&w6_with(r#"{"Considered": 0.44e-2147483648}"#, "4654"));
    assert_eq!(c["verdict"], "INVALID", "{c:#}");
    assert_eq!(code, 1);
    let reason = c["reasons"][0].as_str().unwrap();
    assert!(reason.contains("/Considered") && reason.contains("exponent"), "{reason}");
    assert!(c["not_compared"][0]["unreadable"].as_str().unwrap().contains("exponent"));
}

#[test]
fn odd_numbers_out_of_range_is_invalid_not_dropped() {
    // 44% is right and base n is right: the unreadable 1e400 must still keep the claim from passing.
    let (_, c) = verify_raw(&w6_with(r#"{"Considered": "44%", "Familiar": 1e400}"#, "4654"));
    assert_eq!(c["verdict"], "INVALID", "{c:#}");
    assert_eq!(c["not_compared"][0]["pointer"], "/Familiar");
}

#[test]
fn odd_numbers_base_n_with_a_tiny_fraction_is_not_a_count() {
    let (_, c) = verify_raw(&w6_with(r#"{"Considered": "44%"}"#, "4654.0000000000001"));
    assert_eq!(c["verdict"], "INVALID", "{c:#}");
    assert_eq!(c["problems"][0]["pointer"], "/base/n");
    // Whole numbers written with a zero fraction or an exponent are counts.
    for n in ["4654.0", "4.654e3"] {
        let (_, c) = verify_raw(&w6_with(r#"{"Considered": "44%"}"#, n));
        assert_eq!(c["verdict"], "REPRODUCED", "{n}: {c:#}");
    }
    // In the result, an `n` that is not a whole count is a base mismatch, not ignored.
    let (_, c) = verify_raw(&w6_with(r#"{"Considered": "44%", "n": 4654.5}"#, "4654"));
    assert_eq!(c["verdict"], "BASE_MISMATCH", "{c:#}");
}

#[test]
fn catalog_check_runs_every_declaration_on_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("nhanes2");
    copy_study(&root().join("datasets/nhanes2"), &study);
    // A weight column beyond 2^256, the largest weight summed, and one with a negative value;
    // replicate weights (checked in one scan) with the same faults, and one that is not numbers.
    let csv = std::fs::read_to_string(study.join("nhanes2.csv")).unwrap();
    let mut out = String::new();
    for (i, line) in csv.lines().enumerate() {
        let extra = match i {
            0 => "hugewgt,negwgt,rep_1,rep_2,rep_3,rep_4".to_string(),
            1 => "1e300,-1,1,-1,1e300,x".to_string(),
            _ => "1e300,1,1,1,1e300,1".to_string(),
        };
        out.push_str(&format!("{line},{extra}\n"));
    }
    std::fs::write(study.join("nhanes2.csv"), out).unwrap();
    let deep = vec!["race = 1"; 1000].join(" OR ");
    let many: Vec<String> = (1..=300).map(|i| format!("{{ name = \"c{i}\", filter = \"TRUE\" }}")).collect();
    let toml = std::fs::read_to_string(study.join("study.toml"))
        .unwrap()
        .replace(
            "weights = [\"finalwgt\"]",
            "weights = [\"finalwgt\", \"hugewgt\", \"negwgt\"]\nreplicates = { columns = \"rep_*\", method = \"JK1\" }",
        )
        + &format!(
            "\n[[periods]]\nname = \"Broken\"\nfilter = \"race / (race - race) = 1\"\n\
         \n[[periods]]\nname = \"Deep\"\nfilter = \"{deep}\"\n\
         \n[[bases]]\nname = \"Zero\"\nfilter = \"{{column}} / ({{column}} - {{column}}) > 0\"\n\
         \n[[breakdowns]]\nname = \"bad\"\ncells = [{{ name = \"zero\", filter = \"region / (region - region) = 1\" }}]\n\
         \n[[breakdowns]]\nname = \"many\"\ncells = [{}]\n",
            many.join(", ")
        );
    std::fs::write(study.join("study.toml"), toml).unwrap();
    let out = recite(&["catalog", "check", "--data", dir.path().to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    for needle in [
        "period \"Broken\"",
        "Divide by zero",
        "period \"Deep\"",
        "at most 256",
        "base \"Zero\"",
        "breakdown \"bad\" cell \"zero\"",
        "305 breakdown cells; at most 256",
        "weight \"hugewgt\" is too large",
        "weight \"negwgt\" has 1 negative",
        "replicate weight \"rep_2\" has 1 negative",
        "replicate weight \"rep_3\" is too large",
        "replicate weight \"rep_4\" is not numeric",
    ] {
        assert!(text.contains(needle), "{needle:?} not in\n{text}");
    }
    assert!(!text.contains("\"rep_1\""), "{text}");
}

#[test]
fn verify_reads_what_check_reads_bom_and_pairs_with_source() {
    // A UTF-8 byte-order mark, as check accepts it.
    let pair = json!({"citation": zinc(9189), "result": {"mean": 87.18}});
    let mut bytes = "\u{feff}".as_bytes().to_vec();
    bytes.extend(serde_json::to_vec(&pair).unwrap());
    let out = recite_stdin(&["verify", "-", "--format", "json"], &bytes);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    // A {citation, source, result} object (a tool's own `source` beside the pair), as check settles it.
    for extra in [json!({"source": "zinc tool"}), json!({"source": {"tool": "stats"}})] {
        let mut v = pair.clone();
        v.as_object_mut().unwrap().insert("source".into(), extra["source"].clone());
        let (code, c) = verify_json(&v, &[]);
        assert_eq!(c["verdict"], "REPRODUCED", "{v}: {c:#}");
        assert_eq!(code, 0);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pair.json");
        std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
        let out = recite(&["check", file.to_str().unwrap(), "--format", "json"]);
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["inputs"][0]["claims"][0]["verdict"], "REPRODUCED", "check agrees");
    }
    // A bare citation with no result still settles on its own (base n only).
    let (_, c) = verify_json(&zinc(9189), &[]);
    assert_eq!(c["verdict"], "REPRODUCED", "{c:#}");
}
