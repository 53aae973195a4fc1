//! SPSS `.sav` / `.zsav` tables and `recite catalog init`, on files written by pyreadstat
//! (tests/sav/gen.sh): the dictionary arrives in the catalog, user-missing codes are not data,
//! the Versant examples settle alike from the `.sav` and the Parquet, and a starter catalog
//! passes `catalog check` and settles a citation unedited.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::recite;

fn root() -> PathBuf {
    crate::support::root().to_path_buf()
}

fn sav_dir() -> PathBuf {
    root().join("tests/sav")
}

/// A data layer with one study over `file` (absolute path), columns declared by `columns`.
fn layer(dir: &Path, file: &Path, columns: &str) {
    let toml = format!(
        "[study]\nname = \"SPSS test\"\n\n[[tables]]\nname = \"survey\"\npath = {:?}\nweights = [\"wt\"]\n\n{columns}\n\
         [[periods]]\nname = \"W1\"\nfilter = \"wave = 1\"\n[[periods]]\nname = \"W2\"\nfilter = \"wave = 2\"\n\
         [[periods]]\nname = \"W3\"\nfilter = \"wave = 3\"\n\n[[bases]]\nname = \"All\"\nfilter = \"TRUE\"\n",
        file.display().to_string()
    );
    std::fs::write(dir.join("study.toml"), toml).unwrap();
}

fn expected() -> Value {
    serde_json::from_str(&std::fs::read_to_string(sav_dir().join("expected.json")).unwrap()).unwrap()
}

#[test]
fn spss_dictionary_becomes_column_metadata() {
    for file in ["labelled.sav", "labelled.zsav", "labelled-bytecode.sav"] {
        let dir = tempfile::tempdir().unwrap();
        layer(dir.path(), &sav_dir().join(file), "");
        let cat = recite::sav::load_catalog(dir.path()).unwrap();
        let t = &cat.studies[0].tables[0];
        let sat = t.column_meta("sat");
        assert_eq!(sat.label, "Overall satisfaction", "{file}");
        assert_eq!(sat.values.get("5").map(String::as_str), Some("Very satisfied"), "{file}");
        assert_eq!(sat.missing, [8.0, 9.0], "{file}");
        let nps = t.column_meta("nps");
        assert_eq!((nps.missing.as_slice(), nps.missing_ranges.as_slice()), (&[][..], &[[97.0, 99.0]][..]));
        let income = t.column_meta("income");
        assert_eq!(income.missing, [-1.0], "{file}");
        assert_eq!(income.missing_ranges, [[90.0, 99.0]], "{file}");
        assert!(income.codes().iter().all(|(c, _)| *c >= 1.0 && *c <= 6.0), "missing codes are not answers");
        let city = t.column_meta("city");
        assert_eq!(city.label, "City of residence");
        assert!(city.values.is_empty() && city.missing.is_empty());
        assert_eq!(t.column_meta("wt").label, "Survey weight");
    }
}

#[test]
fn study_toml_overrides_the_spss_dictionary_key_by_key() {
    let dir = tempfile::tempdir().unwrap();
    let columns = "[tables.columns.sat]\nlabel = \"Satisfaction (ours)\"\nmissing = []\n";
    layer(dir.path(), &sav_dir().join("labelled.sav"), columns);
    let cat = recite::sav::load_catalog(dir.path()).unwrap();
    let sat = cat.studies[0].tables[0].column_meta("sat");
    assert_eq!(sat.label, "Satisfaction (ours)");
    assert!(sat.missing.is_empty(), "declared missing = [] keeps 8 and 9 as data");
    assert_eq!(sat.values.get("9").map(String::as_str), Some("Refused"), "values still from the file");
}

/// Citations of the weighted mean of every labelled column in every wave, claiming what pandas
/// computed with the user-missing codes left out (tests/sav/expected.json).
fn mean_citations() -> (String, Vec<(String, u64, f64)>) {
    let mut lines = String::new();
    let mut want = Vec::new();
    for (key, e) in expected().as_object().unwrap() {
        let (column, wave) = key.split_once('/').unwrap();
        let n = e["n"].as_u64().unwrap();
        let mean = e["weighted_mean"].as_f64().unwrap();
        let c = json!({
            "citation": {
                "study": "SPSS test", "period": wave, "base": {"name": "All", "n": n}, "weight": "wt",
                "source": {"table": "survey", "column": column, "function": "extractMean"}
            },
            "result": {"mean": format!("{mean:.4}")}
        });
        lines.push_str(&c.to_string());
        lines.push('\n');
        want.push((key.clone(), n, mean));
    }
    (lines, want)
}

fn claims(report: &Value) -> Vec<Value> {
    report["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| i["claims"].as_array().unwrap().clone())
        .collect()
}

#[test]
fn user_missing_codes_are_not_data() {
    let (lines, want) = mean_citations();
    for file in ["labelled.sav", "labelled.zsav", "labelled-bytecode.sav"] {
        let dir = tempfile::tempdir().unwrap();
        layer(dir.path(), &sav_dir().join(file), "");
        let input = dir.path().join("claims.jsonl");
        std::fs::write(&input, &lines).unwrap();
        let data = dir.path().display().to_string();
        let out = recite(&["check", input.to_str().unwrap(), "--format", "json", "--data", &data]);
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{file}: not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
        let got = claims(&report);
        assert_eq!(got.len(), want.len(), "{file}");
        // Every claim on the file is computed in one scan of it, in batches.
        assert_eq!(
            (report["stats"]["tables_scanned"].as_u64(), report["stats"]["scans"].as_u64()),
            (Some(1), Some(1))
        );
        for (claim, (key, n, _)) in got.iter().zip(&want) {
            assert_eq!(claim["verdict"], "REPRODUCED", "{file} {key}: {claim:#}");
            assert_eq!(claim["base"]["n"], json!(n), "{file} {key}");
        }
    }
}

/// The bundled data layer with the Versant table read from tests/sav/versant_flat.sav, its
/// labels, value labels and missing codes left to the SPSS dictionary.
fn versant_from_sav(dir: &Path) {
    let text = std::fs::read_to_string(root().join("datasets/versant/study.toml")).unwrap();
    let mut study: toml::Table = toml::from_str(&text).unwrap();
    let table = study["tables"].as_array_mut().unwrap()[0].as_table_mut().unwrap();
    table.insert("path".into(), sav_dir().join("versant_flat.sav").display().to_string().into());
    for (_, c) in table["columns"].as_table_mut().unwrap().iter_mut() {
        let c = c.as_table_mut().unwrap();
        for k in ["label", "values", "missing"] {
            c.remove(k);
        }
    }
    std::fs::create_dir(dir.join("versant")).unwrap();
    std::fs::write(dir.join("versant/study.toml"), toml::to_string(&study).unwrap()).unwrap();
    let nhanes = std::fs::read_to_string(root().join("datasets/nhanes2/study.toml")).unwrap();
    let csv = root().join("datasets/nhanes2/nhanes2.csv").display().to_string();
    std::fs::create_dir(dir.join("nhanes2")).unwrap();
    std::fs::write(dir.join("nhanes2/study.toml"), nhanes.replace("\"nhanes2.csv\"", &format!("{csv:?}")))
        .unwrap();
}

/// Equal JSON, but numbers that are not integers only to 1e-10 relative.
fn assert_alike(p: &Value, s: &Value, at: &str) {
    match (p, s) {
        (Value::Object(a), Value::Object(b)) => {
            assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>(), "keys at {at}");
            for (k, v) in a {
                assert_alike(v, &b[k], &format!("{at}/{k}"));
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "length at {at}");
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                assert_alike(x, y, &format!("{at}/{i}"));
            }
        }
        (Value::Number(x), Value::Number(y)) if !(x.is_u64() && y.is_u64()) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!((x - y).abs() <= 1e-10 * x.abs().max(y.abs()).max(1e-300), "{x} vs {y} at {at}");
        }
        _ => assert_eq!(p, s, "a claim settles differently from the .sav at {at}"),
    }
}

#[test]
fn versant_examples_settle_alike_from_sav_and_parquet() {
    let dir = tempfile::tempdir().unwrap();
    versant_from_sav(dir.path());
    let data = dir.path().display().to_string();
    let examples = ["examples/citations/", "examples/transcripts/", "examples/moca/conforming.jsonl"];
    let run = |extra: &[&str]| -> Vec<Value> {
        let mut args = vec!["check", "--format", "json"];
        args.extend(examples);
        args.extend(extra);
        let out = recite(&args);
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
        claims(&report)
    };
    let parquet = run(&["--data", "datasets"]);
    let sav = run(&["--data", &data]);
    assert!(parquet.len() >= 5, "the examples hold claims: {}", parquet.len());
    assert_eq!(parquet.len(), sav.len());
    // SPSS stores doubles, so the .sav takes the summed plan and the Parquet the exact integer
    // one: every verdict, reason, count and label is the same; a number may differ in its last
    // rounding digit (12 significant digits in the report). The files each read differ (their
    // `rerun.files`): the .sav here, the Parquet file there.
    let read = |c: &Value| c["rerun"]["files"].as_array().map(|f| f.len());
    for (p, s) in parquet.iter().zip(&sav) {
        assert_eq!(read(p), read(s), "both name the files they read: {:#}", s["rerun"]);
        let (mut p, mut s) = (p.clone(), s.clone());
        for c in [&mut p, &mut s] {
            if let Some(rerun) = c["rerun"].as_object_mut() {
                rerun.remove("files");
            }
        }
        assert_alike(&p, &s, "");
    }
    // The dictionary supplied what the study.toml no longer says.
    let shown = recite(&["catalog", "show", "Versant", "--data", &data]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("Brand funnel: Versant") && text.contains("3=Considered"), "{text}");
}

#[test]
fn catalog_init_writes_a_catalog_that_checks_and_settles_unedited() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("survey");
    let out_s = out.display().to_string();
    let sav = sav_dir().join("labelled.sav").display().to_string();
    let made = recite(&["catalog", "init", &sav, "--out", &out_s]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let text = std::fs::read_to_string(out.join("study.toml")).unwrap();
    assert!(text.contains("# GUESS: the wave (period) column is \"wave\""), "{text}");
    assert!(text.contains("# GUESS: weight \"wt\""), "{text}");
    assert!(text.contains("missing_ranges = [[97, 99]]"), "{text}");
    let check = recite(&["catalog", "check", "--data", &out_s]);
    assert!(
        check.status.success(),
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
    // A citation over the starter catalog, with the names it wrote, settles.
    let e = &expected()["sat/W2"];
    let citation = json!({
        "citation": {
            "study": "recite SPSS test file", "period": "W2 (February 2026)",
            "base": {"name": "All respondents", "n": e["n"]}, "weight": "wt",
            "source": {"table": "labelled", "column": "sat", "function": "extractMean"}
        },
        // A JSON number: as a string, "3.010" would be ambiguous (a dot grouping thousands).
        "result": {"mean": serde_json::from_str::<serde_json::Value>(&format!("{:.3}", e["weighted_mean"].as_f64().unwrap())).unwrap()}
    });
    let file = dir.path().join("c.json");
    std::fs::write(&file, citation.to_string()).unwrap();
    let v = recite(&["verify", file.to_str().unwrap(), "--data", &out_s]);
    assert!(
        v.status.success(),
        "{}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );
    // An existing study.toml is kept without --force.
    let again = recite(&["catalog", "init", &sav, "--out", &out_s]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    assert!(recite(&["catalog", "init", &sav, "--out", &out_s, "--force"]).status.success());
    // A study.toml that cannot be written is called the catalog, not a report.
    let blocked = dir.path().join("blocked");
    std::fs::create_dir_all(blocked.join("study.toml")).unwrap();
    let refused = recite(&["catalog", "init", &sav, "--out", blocked.to_str().unwrap(), "--force"]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("refusing to write the catalog to") && !err.contains("report"), "{err}");
}

#[test]
fn readme_spss_quickstart_runs_as_written() {
    // README and docs/catalog.md: init on the bytecode .sav, check, verify the committed citation.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mydata");
    let out_s = out.display().to_string();
    let run = |args: &[&str]| {
        let o = recite(args);
        let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert!(o.status.success(), "{args:?}: {text}");
        text
    };
    run(&["catalog", "init", "tests/sav/labelled-bytecode.sav", "--out", &out_s]);
    run(&["catalog", "check", "--data", &out_s]);
    let verified = run(&["verify", "examples/spss/labelled-sat-w2.json", "--data", &out_s]);
    assert!(verified.contains("REPRODUCED"), "{verified}");
}

#[test]
fn catalog_init_reads_parquet_csv_and_arrow_too() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        root().join("datasets/versant/versant_flat.parquet"),
        sav_dir().join("labelled.csv"),
        sav_dir().join("labelled.arrow"),
    ];
    for f in &files {
        let out = dir.path().join(f.file_name().unwrap());
        let out_s = out.display().to_string();
        let made = recite(&["catalog", "init", f.to_str().unwrap(), "--out", &out_s]);
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
        let check = recite(&["catalog", "check", "--data", &out_s]);
        assert!(
            check.status.success(),
            "{}: {}{}",
            f.display(),
            String::from_utf8_lossy(&check.stdout),
            String::from_utf8_lossy(&check.stderr)
        );
        let text = std::fs::read_to_string(out.join("study.toml")).unwrap();
        assert!(text.contains("# GUESS: the wave (period) column is \"wave\""), "{text}");
    }
}

#[test]
fn catalog_init_proposes_the_universe_routing_shows_and_check_proves_it() {
    // The Versant tracker asks satisfaction (q30rN) only of the brand's purchasers (funnel
    // s14rN 4 or 5) and the recommendation (q20rN) of those familiar (2 to 5): the generator's
    // routing (recite::synth::model), which nothing in the file states.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("init");
    let out_s = out.display().to_string();
    let parquet = root().join("datasets/versant/versant_flat.parquet");
    let made = recite(&["catalog", "init", parquet.to_str().unwrap(), "--out", &out_s]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let text = std::fs::read_to_string(out.join("study.toml")).unwrap();
    let universe_of = |column: &str| {
        let at =
            text.find(&format!("[tables.columns.{column}]\n")).unwrap_or_else(|| panic!("{column}: {text}"));
        let block = &text[at..];
        let block = &block[..block[1..].find("\n[").map_or(block.len(), |e| e + 1)];
        block.lines().find(|l| l.starts_with("universe = ")).map(str::to_string)
    };
    for b in 1..=12 {
        let q30 = universe_of(&format!("q30r{b}")).unwrap_or_else(|| panic!("q30r{b} has no universe"));
        assert!(q30.contains(&format!(r#"filter = "\"s14r{b}\" >= 4""#)), "{q30}");
        let q20 = universe_of(&format!("q20r{b}")).unwrap_or_else(|| panic!("q20r{b} has no universe"));
        assert!(q20.contains(&format!(r#"filter = "\"s14r{b}\" >= 2""#)), "{q20}");
    }
    // Columns everyone answers have none.
    for column in ["s14r5", "age", "gender", "region"] {
        assert_eq!(universe_of(column), None, "{column}");
    }
    let check = recite(&["catalog", "check", "--data", &out_s]);
    assert!(
        check.status.success(),
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );

    // A universe narrower than who answers is refused by check, with the count and the filter.
    let wrong = text.replacen(r#"filter = "\"s14r5\" >= 4""#, r#"filter = "\"s14r5\" >= 5""#, 1);
    assert_ne!(wrong, text);
    std::fs::write(out.join("study.toml"), wrong).unwrap();
    let check = recite(&["catalog", "check", "--data", &out_s]);
    let said =
        format!("{}{}", String::from_utf8_lossy(&check.stdout), String::from_utf8_lossy(&check.stderr));
    assert!(!check.status.success(), "{said}");
    assert!(said.contains("column \"q30r5\": universe") && said.contains("outside its filter"), "{said}");
}

/// Every row of an SPSS file as recite's table scans it (bytecode files decompressed as they
/// stream), in DataFusion's arrow.
fn rows_streamed(path: &Path) -> datafusion::arrow::array::RecordBatch {
    use datafusion::prelude::SessionContext;
    let rt = tokio::runtime::Runtime::new().unwrap();
    let ctx = SessionContext::new();
    let table = recite::sav::SavTable::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let schema = datafusion::catalog::TableProvider::schema(&table);
    ctx.register_table("t", std::sync::Arc::new(table)).unwrap();
    let batches = rt.block_on(async { ctx.table("t").await.unwrap().collect().await.unwrap() });
    datafusion::arrow::compute::concat_batches(&schema, &batches).unwrap()
}

/// Every row as ambers reads the file by itself (a bytecode file held whole in memory), carried
/// to DataFusion's arrow through Arrow IPC.
fn rows_by_ambers(path: &Path) -> datafusion::arrow::array::RecordBatch {
    let (batch, _) = ambers::read_sav(path).unwrap();
    let mut w = arrow_57::ipc::writer::StreamWriter::try_new(Vec::new(), &batch.schema()).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    let bytes = w.into_inner().unwrap();
    let mut r =
        datafusion::arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
    r.next().unwrap().unwrap()
}

/// The same columns with the same values, column by column (a failure names the column).
fn assert_same_rows(
    a: &datafusion::arrow::array::RecordBatch,
    b: &datafusion::arrow::array::RecordBatch,
    what: &str,
) {
    let names = |r: &datafusion::arrow::array::RecordBatch| -> Vec<String> {
        r.schema().fields().iter().map(|f| f.name().clone()).collect()
    };
    assert_eq!(names(a), names(b), "{what}: columns");
    assert_eq!(a.num_rows(), b.num_rows(), "{what}: rows");
    for (i, name) in names(a).iter().enumerate() {
        assert!(a.column(i) == b.column(i), "{what}: column {name} differs");
    }
}

#[test]
fn bytecode_sav_streams_the_values_ambers_reads_whole() {
    // The same rows written uncompressed and bytecode-compressed by pyreadstat, and the Versant
    // tracker (bytecode): recite's streaming decompression gives every value ambers' in-memory
    // one does, and the uncompressed file's, bit for bit.
    let plain = rows_streamed(&sav_dir().join("labelled.sav"));
    let bytecode = rows_streamed(&sav_dir().join("labelled-bytecode.sav"));
    assert_eq!(plain.num_rows(), 240);
    assert_same_rows(&bytecode, &plain, "labelled: bytecode vs uncompressed");
    assert_same_rows(
        &bytecode,
        &rows_by_ambers(&sav_dir().join("labelled-bytecode.sav")),
        "labelled vs ambers",
    );
    let versant = sav_dir().join("versant_flat.sav");
    let streamed = rows_streamed(&versant);
    assert!(streamed.num_rows() > 1000 && streamed.num_columns() > 20);
    assert_same_rows(&streamed, &rows_by_ambers(&versant), "versant_flat.sav vs ambers");
}

#[test]
fn damaged_bytecode_sav_is_unverifiable_naming_the_byte() {
    let (lines, _) = mean_citations();
    let good = std::fs::read(sav_dir().join("labelled-bytecode.sav")).unwrap();
    let mut more_rows = good.clone();
    more_rows[80..84].copy_from_slice(&241i32.to_le_bytes());
    for (name, bytes, says) in [
        ("cut.sav", good[..good.len() - 100].to_vec(), "compressed data ends at byte"),
        ("rows.sav", more_rows, "after 240 rows, but the header declares 241"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        layer(dir.path(), &path, "");
        let input = dir.path().join("claims.jsonl");
        std::fs::write(&input, lines.lines().next().unwrap()).unwrap();
        let data = dir.path().display().to_string();
        let out = recite(&["check", input.to_str().unwrap(), "--format", "json", "--data", &data]);
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
        let claim = &claims(&report)[0];
        assert_eq!(claim["verdict"], "UNVERIFIABLE", "{name}: {claim:#}");
        let reasons = claim["reasons"].to_string();
        assert!(reasons.contains(says) && reasons.contains(name), "{name}: {claim:#}");
    }
}

/// `labelled.zsav` with its first block declaring -5 bytes uncompressed (ambers: a
/// capacity-overflow panic), and the byte of that block's trailer entry.
fn negative_zsav_block() -> (Vec<u8>, usize) {
    let mut b = std::fs::read(sav_dir().join("labelled.zsav")).unwrap();
    // The zlib header opens with its own offset; its second field is the trailer's.
    let zh = (176..b.len() - 8)
        .find(|&i| i64::from_le_bytes(b[i..i + 8].try_into().unwrap()) == i as i64)
        .unwrap();
    let entry = i64::from_le_bytes(b[zh + 8..zh + 16].try_into().unwrap()) as usize + 24;
    b[entry + 16..entry + 20].copy_from_slice(&(-5i32).to_le_bytes());
    (b, entry)
}

#[test]
fn hostile_spss_container_fails_only_its_own_claims_naming_the_byte() {
    let (lines, _) = mean_citations();
    let (bad, entry) = negative_zsav_block();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hostile.zsav");
    std::fs::write(&path, bad).unwrap();
    layer(dir.path(), &path, "");
    // A second, sound table in the same study: its claims settle in the same batch.
    let mut toml = std::fs::read_to_string(dir.path().join("study.toml")).unwrap();
    let sound = sav_dir().join("labelled.sav").display().to_string();
    toml.push_str(&format!("\n[[tables]]\nname = \"good\"\npath = {sound:?}\nweights = [\"wt\"]\n"));
    std::fs::write(dir.path().join("study.toml"), toml).unwrap();
    let good_lines = lines.replace("\"table\":\"survey\"", "\"table\":\"good\"");
    assert_ne!(good_lines, lines);
    let input = dir.path().join("claims.jsonl");
    std::fs::write(&input, format!("{lines}{good_lines}")).unwrap();
    let data = dir.path().display().to_string();
    let out = recite(&["check", input.to_str().unwrap(), "--format", "json", "--data", &data]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let claims =
        claims(&serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {err}")));
    let n = lines.lines().count();
    assert_eq!(claims.len(), 2 * n);
    for c in &claims[..n] {
        assert_eq!(c["verdict"], "UNVERIFIABLE", "{c:#}");
        let reasons = c["reasons"].to_string();
        assert!(
            reasons.contains("hostile.zsav") && reasons.contains("declares -5 bytes uncompressed"),
            "{c:#}"
        );
        assert!(reasons.contains(&format!("byte {entry}")), "{c:#}");
    }
    for c in &claims[n..] {
        assert_eq!(c["verdict"], "REPRODUCED", "{c:#}");
    }
    // catalog init refuses it as bad input (exit 2), naming the byte, instead of a panic (101).
    let init = recite(&[
        "catalog",
        "init",
        path.to_str().unwrap(),
        "--out",
        dir.path().join("init").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&init.stderr);
    assert_eq!(init.status.code(), Some(2), "{err}");
    assert!(
        err.contains("declares -5 bytes uncompressed") && err.contains(&format!("byte {entry}")),
        "{err}"
    );
    assert!(!dir.path().join("init/study.toml").exists());
}

#[test]
fn missing_ranges_apply_in_the_grouped_plan_as_codes_do() {
    // Versant's Parquet holds integer codes, so its claims take the grouped plan.
    let text = std::fs::read_to_string(root().join("datasets/versant/study.toml")).unwrap();
    let parquet = root().join("datasets/versant/versant_flat.parquet").display().to_string();
    let text = text.replace("\"versant_flat.parquet\"", &format!("{parquet:?}"));
    let settle = |declaration: &str| -> Vec<Value> {
        let dir = tempfile::tempdir().unwrap();
        let with =
            text.replace("[tables.columns.s14r5]\n", &format!("[tables.columns.s14r5]\n{declaration}\n"));
        std::fs::write(dir.path().join("study.toml"), with).unwrap();
        let data = dir.path().display().to_string();
        let out = recite(&[
            "check",
            "examples/citations/versant-w6-considered.json",
            "--format",
            "json",
            "--data",
            &data,
        ]);
        claims(&serde_json::from_slice(&out.stdout).unwrap())
    };
    let (range, codes, none) =
        (settle("missing_ranges = [[3.5, 5]]"), settle("missing = [4, 5]"), settle(""));
    assert_eq!(range, codes);
    assert_ne!(range[0]["base"]["n"], none[0]["base"]["n"], "the range left rows out");
}

#[test]
fn unreadable_spss_file_makes_its_claims_unverifiable() {
    let (lines, _) = mean_citations();
    for (file, bytes, says) in [
        ("broken.sav", &b"not an SPSS file at all"[..], "not a readable SPSS file"),
        ("*.sav", &b""[..], "not a glob"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(file);
        if !file.contains('*') {
            std::fs::write(&path, bytes).unwrap();
        }
        layer(dir.path(), &path, "");
        let input = dir.path().join("claims.jsonl");
        std::fs::write(&input, lines.lines().next().unwrap()).unwrap();
        let data = dir.path().display().to_string();
        let out = recite(&["check", input.to_str().unwrap(), "--format", "json", "--data", &data]);
        let claim = &claims(&serde_json::from_slice(&out.stdout).unwrap())[0];
        assert_eq!(claim["verdict"], "UNVERIFIABLE", "{file}");
        assert!(claim["reasons"].to_string().contains(says), "{file}: {claim:#}");
    }
}

#[test]
fn hive_partitioned_parquet_settles_like_one_file() {
    use datafusion::dataframe::DataFrameWriteOptions;
    use datafusion::prelude::{ParquetReadOptions, SessionContext};
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("by_wave");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let ctx = SessionContext::new();
        let file = root().join("datasets/versant/versant_flat.parquet");
        let df = ctx.read_parquet(file.to_str().unwrap(), ParquetReadOptions::default()).await.unwrap();
        let opts = DataFrameWriteOptions::new().with_partition_by(vec!["wave".into()]);
        df.write_parquet(&format!("{}/", folder.display()), opts, None).await.unwrap();
    });
    assert!(folder.join("wave=6").is_dir());
    let text = std::fs::read_to_string(root().join("datasets/versant/study.toml")).unwrap();
    let text = text.replace("\"versant_flat.parquet\"", &format!("{:?}", folder.display().to_string()));
    std::fs::write(dir.path().join("study.toml"), text).unwrap();
    let data = dir.path().display().to_string();
    let run = |data: &str| -> Value {
        let out = recite(&["check", "examples/citations/", "--format", "json", "--data", data]);
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let (whole, parts) = (run("datasets"), run(&data));
    // The claims on the Versant table, without the files they read (one file, or the parts).
    let versant = |r: &Value| -> Vec<Value> {
        let mut found: Vec<Value> =
            claims(r).into_iter().filter(|c| c["rerun"].to_string().contains("versant")).collect();
        for c in &mut found {
            c["rerun"].as_object_mut().unwrap().remove("files");
        }
        found
    };
    assert!(!versant(&whole).is_empty());
    assert_eq!(versant(&whole), versant(&parts));
}

#[test]
fn csv_with_a_declared_delimiter_is_read() {
    let (lines, _) = mean_citations();
    let aware = lines.lines().find(|l| l.contains("\"aware\"") && l.contains("\"W1\"")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let semicolons = std::fs::read_to_string(sav_dir().join("labelled.csv")).unwrap().replace(',', ";");
    let path = dir.path().join("survey.csv");
    std::fs::write(&path, semicolons).unwrap();
    let input = dir.path().join("claims.jsonl");
    std::fs::write(&input, aware).unwrap();
    let data = dir.path().display().to_string();
    let settle = |declared: &str| -> Value {
        layer(dir.path(), &path, declared);
        let out = recite(&["check", input.to_str().unwrap(), "--format", "json", "--data", &data]);
        claims(&serde_json::from_slice(&out.stdout).unwrap())[0].clone()
    };
    assert_eq!(settle("csv = { delimiter = \";\" }\n")["verdict"], "REPRODUCED");
    assert_eq!(settle("")["verdict"], "UNVERIFIABLE", "read with commas, there is no column \"aware\"");
    let bad = settle("csv = { delimiter = \";;\" }\n");
    assert!(bad["reasons"].to_string().contains("not one ASCII character"), "{bad:#}");
}

/// tests/sav/european.csv: windows-1252, `;`, decimal commas (`1.234,5` is 1234.5), quoted text
/// holding `;` and `,`. By hand, revenu weighted by wt: wave 1 (1234.5·0.5 + 2.5·1.5 + 10·2) / 4
/// = 641 / 4 = 160.25 over 3 respondents; wave 2 (3.25 + 4.75) / 2 = 4 over 2.
#[test]
fn csv_with_decimal_comma_and_windows_1252_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = sav_dir().join("european.csv");
    let mut lines = String::new();
    for (wave, n, mean) in [("W1", 3, "160.25"), ("W2", 2, "4.00")] {
        let c = json!({
            "citation": {
                "study": "SPSS test", "period": wave, "base": {"name": "All", "n": n}, "weight": "wt",
                "source": {"table": "survey", "column": "revenu", "function": "extractMean"}
            },
            "result": {"mean": mean}
        });
        lines.push_str(&format!("{c}\n"));
    }
    let input = dir.path().join("claims.jsonl");
    std::fs::write(&input, lines).unwrap();
    let data = dir.path().display().to_string();
    let settle = |declared: &str| -> Vec<Value> {
        layer(dir.path(), &path, declared);
        let out = recite(&["check", input.to_str().unwrap(), "--format", "json", "--data", &data]);
        claims(&serde_json::from_slice(&out.stdout).unwrap())
    };
    let european = "csv = { delimiter = \";\", decimal = \",\", encoding = \"windows-1252\" }\n";
    for c in settle(european) {
        assert_eq!(c["verdict"], "REPRODUCED", "{c:#}");
    }
    // Read with `.` decimals, revenu is text: nothing passes.
    for c in settle("csv = { delimiter = \";\", encoding = \"latin-1\" }\n") {
        assert_ne!(c["verdict"], "REPRODUCED", "{c:#}");
    }
    let bad = settle("csv = { delimiter = \";\", encoding = \"klingon\" }\n");
    assert!(bad[0]["reasons"][0].as_str().unwrap().contains("\"klingon\" is not known"), "{:#}", bad[0]);

    // The copy the engine reads: UTF-8, quoted text whole, only numbers converted.
    let format = recite::catalog::CsvFormat {
        delimiter: ";".into(),
        header: true,
        decimal: ",".into(),
        encoding: "windows-1252".into(),
    };
    let copy =
        std::fs::read_to_string(recite::transcode::cached_copy(&path, &format, b';').unwrap()).unwrap();
    assert!(copy.contains("1;1;Genève;\"très bien; 2,5 fois\";1234.5;0.5\r\n"), "{copy}");
    assert!(copy.contains("4;2;Orléans;\"a, b\";3.25;1\r\n"), "{copy}");
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend("x;y\n\"1,5\";Zoë\n".encode_utf16().flat_map(u16::to_le_bytes));
    let mut out = Vec::new();
    recite::transcode::transcode(
        &utf16[..],
        &mut out,
        recite::transcode::encoding("utf-16").unwrap(),
        b';',
        true,
    )
    .unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "x;y\n1.5;Zoë\n");
    for (field, number) in
        [("-1.234,5", Some("-1234.5")), ("0,44", Some("0.44")), ("01.02.2024", None), ("1.5", None)]
    {
        assert_eq!(recite::transcode::decimal_comma_number(field).as_deref(), number, "{field}");
    }
}

/// A period filter on the partition column skips the other folders in both scans: with wave 3's
/// data unreadable, claims on wave 1 still settle, and a claim on wave 3 does not.
#[test]
fn period_filter_on_partition_column_prunes_folders() {
    use datafusion::dataframe::DataFrameWriteOptions;
    use datafusion::prelude::{CsvReadOptions, SessionContext};
    use recite::engine::Engine;
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("by_wave");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let ctx = SessionContext::new();
        let csv = sav_dir().join("labelled.csv");
        ctx.register_csv("t", csv.to_str().unwrap(), CsvReadOptions::new()).await.unwrap();
        let df = ctx.sql("SELECT id, aware, wt, CAST(wave AS BIGINT) AS wave FROM t").await.unwrap();
        let opts = DataFrameWriteOptions::new().with_partition_by(vec!["wave".into()]);
        df.write_parquet(&format!("{}/", folder.display()), opts, None).await.unwrap();
    });
    // The first third of wave 3's data pages overwritten; the page index after them and the
    // footer kept: the table still registers (schema and statistics come from there), and only a
    // scan that reads wave 3 fails.
    for entry in std::fs::read_dir(folder.join("wave=3")).unwrap() {
        let path = entry.unwrap().path();
        let mut bytes = std::fs::read(&path).unwrap();
        let footer = u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap()) as usize;
        let data_end = bytes.len() - 8 - footer;
        bytes[4..4 + (data_end - 4) / 3].fill(0xFF);
        std::fs::write(&path, bytes).unwrap();
    }
    layer(dir.path(), &folder, "");
    let catalog = recite::sav::load_catalog(dir.path()).unwrap();
    let registry = recite::extractor::Registry::load(None).unwrap();
    let (lines, _) = mean_citations();
    let claim = |key: &str| {
        let (column, wave) = key.split_once('/').unwrap();
        let line = lines
            .lines()
            .find(|l| l.contains(&format!("\"{column}\"")) && l.contains(&format!("\"{wave}\"")))
            .unwrap();
        let v: Value = serde_json::from_str(line).unwrap();
        recite::settle::pipeline::Claim {
            citation: v["citation"].clone(),
            numbers: recite::claim::leaves(&v["result"]),
        }
    };
    let opts = recite::settle::pipeline::Options { explain: false, ..Default::default() };
    for engine in [Engine::new(), Engine::summed_only()] {
        let wave1 = [claim("aware/W1"), claim("aware/W1")];
        let (settled, _) = recite::settle::pipeline::settle_all(&wave1, &catalog, &registry, &engine, opts);
        for s in &settled {
            assert_eq!(s.verdict, recite::settle::Verdict::Reproduced, "{s:?}");
        }
        let (settled, _) =
            recite::settle::pipeline::settle_all(&[claim("aware/W3")], &catalog, &registry, &engine, opts);
        assert_eq!(
            settled[0].verdict,
            recite::settle::Verdict::Unverifiable,
            "wave 3 is read: {:?}",
            settled[0]
        );
    }
}

/// `catalog init` over `file`: the study.toml it wrote, which must hold every one of `columns`.
fn init_wide(file: &Path, columns: usize) {
    let out = file.with_file_name(format!("{}.out", file.file_name().unwrap().to_string_lossy()));
    let started = std::time::Instant::now();
    let made = recite(&["catalog", "init", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let text = std::fs::read_to_string(out.join("study.toml")).unwrap();
    assert_eq!(text.matches("\n[tables.columns.").count(), columns, "every column written");
    assert!(text.contains(&format!("[tables.columns.c{}]", columns - 1)));
    eprintln!("catalog init of {columns} columns ({}): {:?}", file.display(), started.elapsed());
}

#[test]
fn catalog_init_of_wide_files_is_linear_in_their_columns() {
    // Once, five aggregates a column were planned at once, each column looked up by name
    // among all: a 20,000-column CSV (0.5 MB) took 158 s and aborted at 2.6 GB; a
    // 50,000-variable .sav took over 3 minutes.
    let dir = tempfile::tempdir().unwrap();
    let n = 20_000;
    let mut csv = (0..n).map(|i| format!("c{i}")).collect::<Vec<_>>().join(",");
    csv.push('\n');
    for r in 0..3 {
        csv.push_str(&(0..n).map(|i| ((i + r) % 5).to_string()).collect::<Vec<_>>().join(","));
        csv.push('\n');
    }
    let file = dir.path().join("wide.csv");
    std::fs::write(&file, csv).unwrap();
    init_wide(&file, n);

    use arrow_57::array::{ArrayRef, Float64Array};
    use arrow_57::datatypes::{DataType, Field, Schema};
    let n = 50_000;
    let schema = std::sync::Arc::new(Schema::new(
        (0..n).map(|i| Field::new(format!("c{i}"), DataType::Float64, true)).collect::<Vec<_>>(),
    ));
    let columns: Vec<ArrayRef> = (0..n)
        // Not whole numbers: no codes listed, so the starter stays small (a few MB).
        .map(|i| std::sync::Arc::new(Float64Array::from(vec![(i % 5) as f64 + 0.5, 1.5, 2.5])) as ArrayRef)
        .collect();
    let batch = arrow_57::record_batch::RecordBatch::try_new(schema.clone(), columns).unwrap();
    let meta = ambers::SpssMetadata::from_arrow_schema(&schema);
    let file = dir.path().join("wide.sav");
    let sink = std::fs::File::create(&file).unwrap();
    ambers::write_sav_to_writer(sink, &batch, &meta, ambers::Compression::Bytecode, None).unwrap();
    init_wide(&file, n);
}

/// The memory a debug `recite` may use on a 20,000-column CSV (heap and anonymous maps): before,
/// every CSV scan needed about 2.7 GB there; bounded batches need a few hundred MB at most.
const WIDE_CSV_MEMORY: u64 = 1 << 30;

#[test]
fn a_wide_csv_is_checked_verified_and_settled_in_memory_bounded_whatever_its_width() {
    // Once, every CSV scan sized its reader for 8,192 rows of every column, read or not (about
    // 130 KB a column): `catalog check`, `verify` and `check` of a 20,000-column CSV of three
    // rows took 2.7 GB, and 30,000 columns aborted at 4 GB.
    let dir = tempfile::tempdir().unwrap();
    let (n, rows) = (20_000, 40);
    let value = |column: usize, row: usize| (column * 7 + row * 3) % 5 + 1;
    let mut csv = (0..n).map(|i| format!("c{i}")).collect::<Vec<_>>().join(",");
    csv.push('\n');
    for r in 0..rows {
        csv.push_str(&(0..n).map(|i| value(i, r).to_string()).collect::<Vec<_>>().join(","));
        csv.push('\n');
    }
    let file = dir.path().join("wide.csv");
    std::fs::write(&file, csv).unwrap();
    init_wide(&file, n);
    let data = dir.path().join("wide.csv.out");
    let data = data.to_str().unwrap();
    let limited = |args: &[&str]| {
        let out = crate::support::recite_within_memory(WIDE_CSV_MEMORY, args);
        let says = format!("{args:?}: {}{}", crate::support::stdout(&out), crate::support::stderr(&out));
        (out, says)
    };
    let (out, says) = limited(&["catalog", "check", "--data", data]);
    assert_eq!(crate::support::code(&out), 0, "{says}");
    assert!(says.contains("✓ wide"), "{says}");
    // A mean over one column of the twenty thousand, as the test computes it from what it wrote.
    let column = 12_345;
    let mean = (0..rows).map(|r| value(column, r) as f64).sum::<f64>() / rows as f64;
    let claim = |claimed: f64| {
        json!({
            "citation": {"study": "wide", "period": "All data", "base": {"name": "All respondents", "n": rows},
                         "source": {"table": "wide", "column": format!("c{column}"), "function": "extractMean"}},
            "result": {"mean": format!("{claimed:.4}")}
        })
    };
    let one = dir.path().join("claim.json");
    std::fs::write(&one, claim(mean).to_string()).unwrap();
    let (out, says) = limited(&["verify", one.to_str().unwrap(), "--data", data, "--format", "json"]);
    assert_eq!(crate::support::code(&out), 0, "{says}");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &r["inputs"][0]["claims"][0];
    assert_eq!(c["verdict"], "REPRODUCED", "{says}");
    let recomputed = c["measures"][0]["estimate"]["value"].as_f64().unwrap();
    assert!((recomputed - mean).abs() < 1e-9, "{recomputed} against {mean}: {says}");
    // A batch with a wrong claim too, so its explanations are scanned as well.
    let lines = dir.path().join("claims.jsonl");
    std::fs::write(&lines, format!("{}\n{}\n", claim(mean), claim(mean + 0.5))).unwrap();
    let (out, says) = limited(&["check", lines.to_str().unwrap(), "--data", data, "--format", "json"]);
    assert_eq!(crate::support::code(&out), 1, "{says}");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let verdicts: Vec<String> =
        claims(&r).iter().map(|c| c["verdict"].as_str().unwrap_or("").to_string()).collect();
    assert_eq!(verdicts, ["REPRODUCED", "DISCREPANT"], "{says}");
}

#[test]
fn catalog_init_of_a_column_name_with_a_newline_writes_toml_that_parses() {
    // Once written as a multi-line TOML key: init exited 0 and catalog check refused the file.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("names.csv");
    std::fs::write(&csv, "\"a\nb\",\"q\"\"uote\",\"back\\slash\",c\n1,2,3,4\n3,4,5,6\n").unwrap();
    let out = dir.path().join("out");
    let made = recite(&["catalog", "init", csv.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let text = std::fs::read_to_string(out.join("study.toml")).unwrap();
    let parsed: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let columns = parsed["tables"][0]["columns"].as_table().unwrap();
    for name in ["a\nb", "q\"uote", "back\\slash", "c"] {
        assert!(columns.contains_key(name), "{name:?}: {text}");
    }
    let check = recite(&["catalog", "check", "--data", out.to_str().unwrap()]);
    assert!(
        check.status.success(),
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
}
