//! Weighted statistics are scale-invariant: multiplying every weight by the same factor leaves
//! every share, mean, standard error, interval, design effect and effective base as it was, and
//! multiplies Σw by the factor. So the same claims over copies of the bundled Versant layer and
//! of NHANES II (a stratified, clustered design) whose weights are multiplied by 1e-9 … 1e9 must
//! settle alike, to 1e-12 relative, under every plan (grouped in process, grouped as a
//! DataFusion plan, summed) and from the cache, cold and warm: an oracle that needs nothing but
//! the data. The old fixed scale (10^-12 units) failed it below about 1e-6 (SE 0.00pp, deff 0,
//! effective base = n); the fixed 2^-130 units after it refused weights of 2^31 and more
//! (NHANES ×1e6, Versant ×1e9: UNVERIFIABLE).
//!
//! And sums are exact integers, so reports are byte-identical whatever the thread count.

use std::path::Path;
use std::sync::Arc;

use recite::catalog::Catalog;
use recite::claimset::{ClaimSpec, generate};
use recite::engine::cache::Cache;
use recite::engine::{Engine, Reduction, ScanPlan, ScanStats};
use recite::extractor::Registry;
use recite::settle::pipeline::{self, Claim, Options};
use recite::settle::{Settlement, Verdict};

use crate::support::{self, code, recite, stdout};

/// The factors the weights are multiplied by.
const FACTORS: [f64; 8] = [1e-9, 1e-7, 1e-6, 1e-3, 1.0, 1e3, 1e6, 1e9];

/// A copy of the bundled Versant layer under `dir` whose weights (`main_weight`, `alt_weight`)
/// are multiplied by `factor`, written in row groups of 5,000 rows so that scans split it into
/// partitions.
fn scaled_layer(dir: &Path, factor: f64) {
    use datafusion::arrow::array::{ArrayRef, AsArray, Float64Array, RecordBatch};
    use datafusion::arrow::datatypes::Float64Type;
    use datafusion::parquet::arrow::ArrowWriter;
    use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use datafusion::parquet::file::properties::WriterProperties;
    let from = support::root().join("datasets/versant");
    let study = dir.join("versant");
    std::fs::create_dir_all(&study).unwrap();
    std::fs::copy(from.join("study.toml"), study.join("study.toml")).unwrap();
    let file = std::fs::File::open(from.join("versant_flat.parquet")).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap();
    let mut writer: Option<ArrowWriter<std::fs::File>> = None;
    for batch in reader {
        let batch = batch.unwrap();
        let schema = batch.schema();
        let columns: Vec<ArrayRef> = schema
            .fields()
            .iter()
            .zip(batch.columns())
            .map(|(f, a)| {
                if f.name().ends_with("_weight") {
                    let w: Float64Array = a.as_primitive::<Float64Type>().unary(|v| v * factor);
                    Arc::new(w) as ArrayRef
                } else {
                    a.clone()
                }
            })
            .collect();
        let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
        let w = writer.get_or_insert_with(|| {
            let props = WriterProperties::builder().set_max_row_group_row_count(Some(5000)).build();
            let out = std::fs::File::create(study.join("versant_flat.parquet")).unwrap();
            ArrowWriter::try_new(out, schema.clone(), Some(props)).unwrap()
        });
        w.write(&batch).unwrap();
    }
    writer.expect("the bundled table has rows").close().unwrap();
}

/// 150 generated claims (shares, means, NPS differences, funnel ratios on `main_weight`), and
/// the first 30 of them again on `alt_weight` and unweighted.
fn claims() -> Vec<Claim> {
    let data = support::root().join("datasets");
    let catalog = Catalog::load(&data).unwrap();
    let registry = Registry::load(None).unwrap();
    let spec = ClaimSpec { study: "Versant".into(), count: 150, wrong: 0.2, seed: 24 };
    let made = generate(&spec, &catalog, &registry, &Engine::new()).unwrap();
    let mut claims: Vec<Claim> = made
        .iter()
        .map(|c| Claim {
            citation: c.line["citation"].clone(),
            numbers: recite::claim::leaves(&c.line["result"]),
        })
        .collect();
    let more: Vec<Claim> = claims[..30]
        .iter()
        .flat_map(|c| {
            let mut alt = c.citation.clone();
            alt["weight"] = "alt_weight".into();
            let mut unweighted = c.citation.clone();
            unweighted.as_object_mut().unwrap().remove("weight");
            [
                Claim { citation: alt, numbers: c.numbers.clone() },
                Claim { citation: unweighted, numbers: c.numbers.clone() },
            ]
        })
        .collect();
    claims.extend(more);
    claims
}

fn settle(claims: &[Claim], data: &Path, engine: &Engine) -> (Vec<Settlement>, ScanStats) {
    let catalog = Catalog::load(data).unwrap();
    let registry = Registry::load(None).unwrap();
    let opts = Options { explain: false, ..Options::default() };
    pipeline::settle_all(claims, &catalog, &registry, engine, opts)
}

/// `a` and `b` equal to 1e-12 relative (or both not numbers).
fn close(a: f64, b: f64, what: &str) {
    let ok = (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-12 * a.abs().max(b.abs());
    assert!(ok, "{what}: {a:e} vs {b:e} (relative {:e})", (a - b).abs() / a.abs().max(b.abs()));
}

/// The settlements of `claims` over a layer scaled by `factor` against those over the original:
/// same verdicts and counts, the same statistics to 1e-12 relative, Σw times the factor (for
/// weighted claims; an unweighted Σw is n).
fn scale_invariant(claims: &[Claim], original: &[Settlement], scaled: &[Settlement], factor: f64, how: &str) {
    assert_eq!(original.len(), scaled.len());
    for (i, (a, b)) in original.iter().zip(scaled).enumerate() {
        let weighted = claims[i].citation.get("weight").is_some();
        let at = |what: &str| format!("{how}, ×{factor:e}, claim {i}: {what}");
        assert_eq!(a.verdict, b.verdict, "{}: {:?} vs {:?}", at("verdict"), a.reasons, b.reasons);
        let (Some(ba), Some(bb)) = (&a.base, &b.base) else {
            assert_eq!(a.base.is_none(), b.base.is_none(), "{}", at("base"));
            continue;
        };
        assert_eq!(ba.facts.n, bb.facts.n, "{}", at("n"));
        let f = if weighted { factor } else { 1.0 };
        close(ba.facts.weighted * f, bb.facts.weighted, &at("Σw"));
        close(ba.facts.effective, bb.facts.effective, &at("effective base"));
        assert_eq!(a.measures.len(), b.measures.len(), "{}", at("measures"));
        for (ma, mb) in a.measures.iter().zip(&b.measures) {
            let (Some(ea), Some(eb)) = (ma.estimate, mb.estimate) else {
                assert_eq!(ma.estimate.is_none(), mb.estimate.is_none(), "{}", at(&ma.name));
                continue;
            };
            close(ea.value, eb.value, &at(&ma.name));
            close(ea.se, eb.se, &at(&format!("SE of {}", ma.name)));
            close(ea.ci_low, eb.ci_low, &at(&format!("interval of {}", ma.name)));
            close(ea.ci_high, eb.ci_high, &at(&format!("interval of {}", ma.name)));
            close(ea.df, eb.df, &at(&format!("df of {}", ma.name)));
            match (ea.deff, eb.deff) {
                (Some(da), Some(db)) => close(da, db, &at(&format!("deff of {}", ma.name))),
                (da, db) => assert_eq!(da.is_none(), db.is_none(), "{}", at("deff")),
            }
        }
    }
}

/// Settlements at full precision (every f64 bit), for byte-for-byte comparisons.
fn exact(settled: &[Settlement]) -> String {
    serde_json::to_string(settled).unwrap()
}

#[test]
fn weight_scale_changes_no_statistic_in_any_plan_or_the_cache() {
    let claims = claims();
    // Each plan over the original weights is the truth its scaled runs answer to (the plans
    // agree with each other to 1e-9, tests/it/engine_plans.rs; here each must agree with
    // itself to 1e-12 whatever the scale).
    let original = tempfile::tempdir().unwrap();
    scaled_layer(original.path(), 1.0);
    let (grouped_truth, _) = settle(&claims, original.path(), &Engine::new());
    let (summed_truth, _) = settle(&claims, original.path(), &Engine::summed_only());
    // The oracle has something to check: claims with standard errors and design effects.
    let with_se = grouped_truth
        .iter()
        .filter(|s| s.measures.iter().any(|m| m.estimate.is_some_and(|e| e.se > 0.0 && e.deff.is_some())));
    assert!(with_se.count() > 100, "too few claims with a standard error and a design effect");
    for factor in FACTORS {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        scaled_layer(&data, factor);
        every_plan_and_the_cache_agree(&claims, (&grouped_truth, &summed_truth), dir.path(), factor);
    }
}

/// The claims settled over `dir/data` (weights ×`factor`) by each plan and the cache, cold
/// and warm, each against its plan's settlements over the original weights.
fn every_plan_and_the_cache_agree(
    claims: &[Claim],
    (grouped_truth, summed_truth): (&[Settlement], &[Settlement]),
    dir: &Path,
    factor: f64,
) {
    let data = dir.join("data");
    let (in_process, stats) = settle(claims, &data, &Engine::new());
    assert_eq!(stats.plans[0].plan, ScanPlan::Grouped, "{:?}", stats.plans);
    scale_invariant(claims, grouped_truth, &in_process, factor, "grouped, in process");
    let (plan, _) = settle(claims, &data, &Engine::new().with_reduction(Reduction::Plan));
    // Both reductions sum the same integers: the same bits.
    assert!(exact(&in_process) == exact(&plan), "×{factor:e}: the two reductions differ");
    let (summed, stats) = settle(claims, &data, &Engine::summed_only());
    assert_eq!(stats.plans[0].plan, ScanPlan::Summed, "{:?}", stats.plans);
    scale_invariant(claims, summed_truth, &summed, factor, "summed");
    // The cache, cold (scans and writes) and warm (reads, no scan): the scan's bits.
    let cache = dir.join("cache");
    let cached = || Engine::new().with_cache(Cache::open(&cache).unwrap());
    let (cold, _) = settle(claims, &data, &cached());
    assert!(exact(&cold) == exact(&in_process), "×{factor:e}: a cold cache changed the sums");
    let (warm, stats) = settle(claims, &data, &cached());
    let answered = !stats.plans.is_empty() && stats.plans.iter().all(|p| p.plan == ScanPlan::Cache);
    assert!(answered, "×{factor:e}: the warm run scanned: {:?}", stats.plans);
    assert!(exact(&warm) == exact(&in_process), "×{factor:e}: a warm cache changed the sums");
}

/// A copy of the bundled NHANES II study under `dir` whose `finalwgt` (2,000 to 79,634) is
/// multiplied by `factor`, each product written as its shortest round-trip decimal.
fn scaled_nhanes(dir: &Path, factor: f64) {
    let from = support::root().join("datasets/nhanes2");
    let study = dir.join("nhanes2");
    std::fs::create_dir_all(&study).unwrap();
    std::fs::copy(from.join("study.toml"), study.join("study.toml")).unwrap();
    let csv = std::fs::read_to_string(from.join("nhanes2.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    let at = header.split(',').position(|c| c == "finalwgt").unwrap();
    let mut out = format!("{header}\n");
    for line in lines {
        let mut fields: Vec<String> = line.split(',').map(str::to_string).collect();
        let w: f64 = fields[at].parse().unwrap();
        // With an exponent, so every factor makes a Float64 column alike.
        fields[at] = format!("{:e}", w * factor);
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    std::fs::write(study.join("nhanes2.csv"), out).unwrap();
}

/// Claims on NHANES II, weighted by `finalwgt` over its 31 strata × 2 PSUs: the mean serum zinc
/// and the shares with diabetes, high blood pressure and high lead, over everyone and over
/// White persons.
fn nhanes_claims() -> Vec<Claim> {
    let mut claims = Vec::new();
    for base in ["All examined persons", "White"] {
        for (column, function) in [
            ("zinc", "extractMean"),
            ("diabetes", "extractShare"),
            ("highbp", "extractShare"),
            ("highlead", "extractShare"),
        ] {
            let citation = serde_json::json!({
                "study": "NHANES II", "period": "1976-1980", "base": {"name": base, "n": 1},
                "weight": "finalwgt",
                "source": {"table": "nhanes2", "column": column, "function": function}
            });
            claims.push(Claim { citation, numbers: vec![] });
        }
    }
    claims
}

/// NHANES II's weights ×1e-9 … ×1e9 (population-scaled weights of a small sample reach 8·10^10
/// at ×1e6) give every plan and the cache the statistics of the original weights, to 1e-12
/// relative, on a stratified, clustered design.
#[test]
fn nhanes_weight_scale_changes_no_statistic_in_any_plan_or_the_cache() {
    let claims = nhanes_claims();
    let original = tempfile::tempdir().unwrap();
    scaled_nhanes(original.path(), 1.0);
    let (grouped_truth, _) = settle(&claims, original.path(), &Engine::new());
    let (summed_truth, _) = settle(&claims, original.path(), &Engine::summed_only());
    for s in &grouped_truth {
        let reasons = &s.reasons;
        assert!(s.measures.iter().all(|m| m.estimate.is_some_and(|e| e.se > 0.0)), "{reasons:?}");
    }
    for factor in FACTORS {
        let dir = tempfile::tempdir().unwrap();
        scaled_nhanes(&dir.path().join("data"), factor);
        every_plan_and_the_cache_agree(&claims, (&grouped_truth, &summed_truth), dir.path(), factor);
    }
}

/// The case against independent figures: NHANES II's weights ×10^6 (up to 8·10^10, past
/// the old 2^31 limit, where the claim was UNVERIFIABLE) give samplics' and R's mean serum
/// zinc, 87.182067 with SE 0.494483, in every plan.
#[test]
fn nhanes_weights_times_a_million_give_the_published_zinc_mean() {
    let dir = tempfile::tempdir().unwrap();
    scaled_nhanes(dir.path(), 1e6);
    let claim = Claim {
        citation: serde_json::json!({
            "study": "NHANES II", "period": "1976-1980",
            "base": {"name": "All examined persons", "n": 9189}, "weight": "finalwgt",
            "source": {"table": "nhanes2", "column": "zinc", "function": "extractMean"}
        }),
        numbers: recite::claim::leaves(&serde_json::json!({"mean": 87.18})),
    };
    let engines = [
        ("grouped, in process", Engine::new()),
        ("grouped, plan", Engine::new().with_reduction(Reduction::Plan)),
        ("summed", Engine::summed_only()),
    ];
    for (how, engine) in engines {
        let (settled, _) = settle(std::slice::from_ref(&claim), dir.path(), &engine);
        let s = &settled[0];
        assert_eq!(s.verdict, Verdict::Reproduced, "{how}: {:?}", s.reasons);
        let e = s.measures[0].estimate.unwrap();
        assert!((e.value - 87.182067).abs() <= 5e-7, "{how}: mean {}", e.value);
        assert!((e.se - 0.494483).abs() <= 5e-7, "{how}: SE {}", e.se);
        // Σw: the 9,189 examined persons' weights add up to 104,176,071, here ×10^6.
        let sigma = s.base.as_ref().unwrap().facts.weighted;
        assert!((sigma / 104_176_071e6 - 1.0).abs() < 1e-12, "{how}: Σw {sigma:e}");
    }
}

#[test]
fn sums_are_byte_identical_whatever_the_thread_count() {
    let claims = claims();
    let dir = tempfile::tempdir().unwrap();
    // Small weights, where the last digits are the fragile ones.
    scaled_layer(dir.path(), 1e-7);
    type MakeEngine = fn(usize) -> Engine;
    let engines: [(&str, MakeEngine); 3] = [
        ("grouped, in process", Engine::with_threads),
        ("grouped, plan", |t| Engine::with_threads(t).with_reduction(Reduction::Plan)),
        ("summed", |t| Engine::with_threads(t).with_summed_only()),
    ];
    for (how, engine) in engines {
        let (one, one_stats) = settle(&claims, dir.path(), &engine(1));
        for threads in [2, 3, 8] {
            let (many, stats) = settle(&claims, dir.path(), &engine(threads));
            assert_eq!(stats.rows_scanned, one_stats.rows_scanned, "{how}: every row read once");
            assert!(exact(&one) == exact(&many), "{how}: 1 thread and {threads} give different sums");
        }
    }
}

/// The case, as a user sees it: "Considered 44%" in W6 over weights normalised to
/// about 1e-7 reports what it reports over the original weights (effective base 4250.7, not
/// n = 4654; SE and interval not 0.00), with Σw shown in digits, not 0.0.
#[test]
fn normalised_weights_report_the_same_sampling_error_as_the_original() {
    let text = |factor: f64| {
        let dir = tempfile::tempdir().unwrap();
        scaled_layer(dir.path(), factor);
        let data = dir.path().to_str().unwrap().to_string();
        let out = recite(&[
            "verify",
            "examples/citations/versant-w6-considered.json",
            "--data",
            &data,
            "--no-explain",
        ]);
        assert_eq!(code(&out), 0, "{}", stdout(&out));
        let text = stdout(&out).replace(&data, "DATA");
        let sigma = text.lines().find(|l| l.contains("Σw ")).expect("a base line").to_string();
        (text, sigma)
    };
    let (original, original_sigma) = text(1.0);
    let (scaled, scaled_sigma) = text(1e-7);
    assert!(original.contains("effective base 4250.7"), "{original}");
    assert!(!scaled_sigma.contains("Σw 0.0,"), "{scaled_sigma}");
    let sigma = |line: &str| -> f64 {
        let after = line.split("Σw ").nth(1).unwrap();
        after.split(',').next().unwrap().parse().unwrap()
    };
    let (w, w_scaled) = (sigma(&original_sigma), sigma(&scaled_sigma));
    assert!((w_scaled / (w * 1e-7) - 1.0).abs() < 1e-3, "Σw {w} vs {w_scaled}");
    // Everything else, SE, interval, deff and effective base among it, is the same text, but
    // for the line naming the files read: other bytes, so another digest.
    let files = |text: &str| -> String {
        text.lines().find(|l| l.contains("files, unversioned")).expect("the files line").to_string()
    };
    let (original_files, scaled_files) = (files(&original), files(&scaled));
    assert_ne!(original_files, scaled_files, "the scaled weights are other bytes");
    assert_eq!(
        original.replace(&original_sigma, "").replace(&original_files, ""),
        scaled.replace(&scaled_sigma, "").replace(&scaled_files, "")
    );
}
