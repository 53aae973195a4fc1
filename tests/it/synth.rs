//! The Versant generator: determinism, code ranges, null rules, raking, and the committed dataset.

use std::fs::File;
use std::path::{Path, PathBuf};

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::compute::concat_batches;
use datafusion::arrow::datatypes::{Float64Type, Int8Type, Int32Type};
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::parquet::basic::Compression;
use datafusion::prelude::{ParquetReadOptions, SessionContext};
use recite::synth::{
    AGE_BAND_TARGETS, AGE_BANDS, FILE_NAME, GENDER_TARGETS, REGION_TARGETS, STUDY_FILE, VersantSpec,
    study_toml, versant_batches, write_versant,
};

fn small(seed: u64) -> VersantSpec {
    VersantSpec { respondents: 4000, seed, extra_questions: 3, row_group_size: 700, ..VersantSpec::default() }
}

fn read(path: &Path) -> RecordBatch {
    let reader =
        ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap().build().unwrap();
    let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    concat_batches(&batches[0].schema(), &batches).unwrap()
}

fn int8(b: &RecordBatch, name: &str) -> Vec<Option<i8>> {
    b.column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .as_primitive::<Int8Type>()
        .iter()
        .collect()
}

fn codes(b: &RecordBatch, name: &str) -> Vec<i8> {
    int8(b, name).into_iter().map(|v| v.unwrap_or_else(|| panic!("null in {name}"))).collect()
}

fn float(b: &RecordBatch, name: &str) -> Vec<f64> {
    b.column_by_name(name).unwrap().as_primitive::<Float64Type>().values().to_vec()
}

fn committed_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/versant")
}

fn band(age: i8) -> usize {
    AGE_BANDS.iter().position(|(_, lo, hi)| (*lo..=*hi).contains(&age)).unwrap()
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let (a, b, c) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_versant(&small(7), a.path()).unwrap();
    write_versant(&small(7), b.path()).unwrap();
    write_versant(&small(8), c.path()).unwrap();
    let bytes = |d: &Path, f: &str| std::fs::read(d.join(f)).unwrap();
    assert_eq!(bytes(a.path(), FILE_NAME), bytes(b.path(), FILE_NAME));
    assert_eq!(bytes(a.path(), STUDY_FILE), bytes(b.path(), STUDY_FILE));
    assert_ne!(bytes(a.path(), FILE_NAME), bytes(c.path(), FILE_NAME));
}

#[test]
fn file_layout_codes_and_null_rules() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small(11);
    write_versant(&spec, dir.path()).unwrap();
    let path = dir.path().join(FILE_NAME);

    let meta =
        ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap().metadata().clone();
    assert_eq!(meta.num_row_groups(), spec.respondents.div_ceil(spec.row_group_size));
    assert!(matches!(meta.row_group(0).column(0).compression(), Compression::ZSTD(_)));

    let b = read(&path);
    assert_eq!(b.num_rows(), spec.respondents);
    assert_eq!(b.num_columns(), 5 + 3 * spec.brands + spec.extra_questions + 2);
    let ids: Vec<i32> =
        b.column_by_name("respondent_id").unwrap().as_primitive::<Int32Type>().values().to_vec();
    assert!(ids.iter().enumerate().all(|(i, id)| *id == i as i32 + 1));

    let wave = codes(&b, "wave");
    for (w, n) in spec.wave_sizes().iter().enumerate() {
        assert_eq!(wave.iter().filter(|v| **v as usize == w + 1).count(), *n);
    }
    assert!(wave.windows(2).all(|p| p[0] <= p[1]), "rows are in wave order");
    assert!(codes(&b, "age").iter().all(|a| (18..=74).contains(a)));
    assert!(codes(&b, "gender").iter().all(|g| (1..=2).contains(g)));
    assert!(codes(&b, "region").iter().all(|r| (1..=4).contains(r)));
    for i in 1..=spec.extra_questions {
        assert!(codes(&b, &format!("q40r{i}")).iter().all(|v| (1..=5).contains(v)));
    }

    let mut dont_know = 0;
    for brand in 1..=spec.brands {
        let funnel = codes(&b, &format!("s14r{brand}"));
        let recommend = int8(&b, &format!("q20r{brand}"));
        let satisfaction = int8(&b, &format!("q30r{brand}"));
        for ((f, r), s) in funnel.iter().zip(&recommend).zip(&satisfaction) {
            assert!((0..=5).contains(f));
            assert_eq!(r.is_some(), *f >= 2, "q20r{brand} is answered exactly by the familiar");
            assert_eq!(s.is_some(), *f >= 4, "q30r{brand} is answered exactly by purchasers");
            assert!(r.is_none_or(|r| (0..=10).contains(&r)));
            assert!(s.is_none_or(|s| (1..=5).contains(&s) || s == 9));
            dont_know += usize::from(*s == Some(9));
        }
        assert!(funnel.contains(&5), "brand {brand} has loyal customers");
    }
    assert!(dont_know > 0, "some purchasers say Don't know");
}

/// Weighted share of each category, over the rows of one wave.
fn weighted_shares(rows: &[usize], category: &[usize], w: &[f64], k: usize) -> Vec<f64> {
    let mut totals = vec![0.0; k];
    for &i in rows {
        totals[category[i]] += w[i];
    }
    let sum: f64 = totals.iter().sum();
    totals.iter().map(|t| t / sum).collect()
}

#[test]
fn raking_hits_the_declared_margins_in_every_wave() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small(3);
    write_versant(&spec, dir.path()).unwrap();
    let b = read(&dir.path().join(FILE_NAME));
    let wave = codes(&b, "wave");
    let bands: Vec<usize> = codes(&b, "age").into_iter().map(band).collect();
    let genders: Vec<usize> = codes(&b, "gender").into_iter().map(|g| g as usize - 1).collect();
    let regions: Vec<usize> = codes(&b, "region").into_iter().map(|r| r as usize - 1).collect();
    let (main, alt) = (float(&b, "main_weight"), float(&b, "alt_weight"));

    let close = |got: &[f64], want: &[f64], what: &str| {
        for (g, t) in got.iter().zip(want) {
            assert!((g - t).abs() < 1e-6, "{what}: {got:?} vs {want:?}");
        }
    };
    for w in 1..=spec.waves as i8 {
        let rows: Vec<usize> = (0..b.num_rows()).filter(|&i| wave[i] == w).collect();
        // The sample is off target, so the weights have work to do.
        let raw_65 = rows.iter().filter(|&&i| bands[i] == 3).count() as f64 / rows.len() as f64;
        assert!(raw_65 < AGE_BAND_TARGETS[3] - 0.05, "65-74 is under-represented before weighting");

        close(&weighted_shares(&rows, &bands, &main, 4), &AGE_BAND_TARGETS, "main, age band");
        close(&weighted_shares(&rows, &genders, &main, 2), &GENDER_TARGETS, "main, gender");
        close(&weighted_shares(&rows, &regions, &main, 4), &REGION_TARGETS, "main, region");
        close(&weighted_shares(&rows, &bands, &alt, 4), &AGE_BAND_TARGETS, "alt, age band");
        close(&weighted_shares(&rows, &genders, &alt, 2), &GENDER_TARGETS, "alt, gender");
        for weights in [&main, &alt] {
            let mean = rows.iter().map(|&i| weights[i]).sum::<f64>() / rows.len() as f64;
            assert!((mean - 1.0).abs() < 1e-9, "mean weight {mean} in wave {w}");
            assert!(rows.iter().all(|&i| weights[i] > 0.0));
        }
        // alt_weight ignores region, so it does not hit the region targets.
        let alt_region = weighted_shares(&rows, &regions, &alt, 4);
        assert!(alt_region.iter().zip(&REGION_TARGETS).any(|(g, t)| (g - t).abs() > 1e-3));
    }
}

#[test]
fn extra_questions_do_not_move_other_columns() {
    let narrow = versant_batches(&VersantSpec { extra_questions: 0, ..small(5) }, 1000).unwrap();
    let wide = versant_batches(&VersantSpec { extra_questions: 4, ..small(5) }, 1000).unwrap();
    for (n, w) in narrow.zip(wide) {
        let (n, w) = (n.unwrap(), w.unwrap());
        for field in n.schema().fields() {
            assert_eq!(n.column_by_name(field.name()), w.column_by_name(field.name()), "{}", field.name());
        }
    }
}

#[test]
fn invalid_specs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for spec in [
        VersantSpec { brands: 4, ..small(1) },
        VersantSpec { respondents: 50, ..small(1) },
        VersantSpec { waves: 0, ..small(1) },
        VersantSpec { row_group_size: 0, ..small(1) },
    ] {
        assert!(write_versant(&spec, dir.path()).is_err(), "{spec:?}");
    }
    assert!(!dir.path().join(FILE_NAME).exists());
}

#[test]
fn committed_study_toml_is_the_generated_catalog() {
    let committed = std::fs::read_to_string(committed_dir().join(STUDY_FILE)).unwrap();
    assert_eq!(
        committed,
        study_toml(&VersantSpec::default()),
        "regenerate datasets/versant (see its README)"
    );

    let t: toml::Table = toml::from_str(&committed).unwrap();
    assert_eq!(t["study"]["name"].as_str(), Some("Versant Mega Tracker"));
    let periods = t["periods"].as_array().unwrap();
    assert_eq!(periods.len(), 8);
    assert_eq!(periods[5]["name"].as_str(), Some("W6 (April 2026)"));
    assert_eq!(periods[5]["fielded"].as_str(), Some("2026-04-02/2026-04-19"));
    assert_eq!(periods[0]["name"].as_str(), Some("W1 (November 2025)"));
    assert_eq!(periods[7]["name"].as_str(), Some("W8 (June 2026)"));
    let columns = t["tables"][0]["columns"].as_table().unwrap();
    assert_eq!(columns["s14r5"]["label"].as_str(), Some("Brand funnel: Versant"));
    assert_eq!(columns["q30r5"]["missing"].as_array().unwrap()[0].as_integer(), Some(9));
    // Every column of the file is declared.
    let file = read(&committed_dir().join(FILE_NAME));
    for field in file.schema().fields() {
        assert!(columns.contains_key(field.name()), "{} is not declared", field.name());
    }
    let targets = &t["weighting"]["targets"];
    assert_eq!(targets["age band"]["65-74"].as_float(), Some(AGE_BAND_TARGETS[3]));
    assert_eq!(targets["region"]["South"].as_float(), Some(REGION_TARGETS[2]));
}

#[test]
fn committed_parquet_is_the_generated_data() {
    let file = read(&committed_dir().join(FILE_NAME));
    let batches: Vec<RecordBatch> =
        versant_batches(&VersantSpec::default(), 8192).unwrap().map(Result::unwrap).collect();
    let generated = concat_batches(&batches[0].schema(), &batches).unwrap();
    assert_eq!(file.schema().fields(), generated.schema().fields());
    let stale = "datasets/versant/versant_flat.parquet is stale: regenerate it (see its README)";
    assert!(file.columns() == generated.columns(), "{stale}");
}

#[test]
fn committed_versant_has_a_small_65_74_aware_cell_and_a_large_aware_base() {
    let b = read(&committed_dir().join(FILE_NAME));
    let (wave, age, versant) = (codes(&b, "wave"), codes(&b, "age"), codes(&b, "s14r5"));
    for w in 1..=8 {
        let aware = |old: bool| {
            (0..b.num_rows()).filter(|&i| wave[i] == w && versant[i] >= 1 && (!old || age[i] >= 65)).count()
        };
        assert_eq!(wave.iter().filter(|v| **v == w).count(), 6250);
        assert!(aware(false) >= 4000, "wave {w}: aware base {}", aware(false));
        assert!((50..100).contains(&aware(true)), "wave {w}: 65-74 aware {}", aware(true));
    }
    // A niche brand's aware cell is tiny among 65-74.
    let ostrel = codes(&b, "s14r12");
    let niche = (0..b.num_rows()).filter(|&i| wave[i] == 6 && ostrel[i] >= 1 && age[i] >= 65).count();
    assert!(niche < 30, "{niche}");
}

/// The headline numbers the dataset is built to show, through DataFusion SQL as recite runs it.
#[test]
fn committed_w6_versant_headlines() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let row = runtime.block_on(async {
        let ctx = SessionContext::new();
        let path = committed_dir().join(FILE_NAME);
        ctx.register_parquet("versant_flat", path.to_str().unwrap(), ParquetReadOptions::default())
            .await
            .unwrap();
        let sql = "SELECT COUNT(*) AS n, \
                   SUM(CASE WHEN s14r5 >= 3 THEN main_weight END) / SUM(main_weight) AS considered, \
                   SUM(CASE WHEN age BETWEEN 65 AND 74 THEN 1 ELSE 0 END) AS n_65_74 \
                   FROM versant_flat WHERE wave = 6 AND age BETWEEN 18 AND 74 AND s14r5 >= 1";
        ctx.sql(sql).await.unwrap().collect().await.unwrap()
    });
    let b = &row[0];
    let n = b.column(0).as_primitive::<datafusion::arrow::datatypes::Int64Type>().value(0);
    let considered = b.column(1).as_primitive::<Float64Type>().value(0);
    let old = b.column(2).as_primitive::<datafusion::arrow::datatypes::Int64Type>().value(0);
    assert!((4000..5500).contains(&n), "{n}");
    assert!((0.43..0.45).contains(&considered), "{considered}");
    assert!((60..=90).contains(&old), "{old}");
    assert!(!b.column(1).is_null(0));
}
