//! criterion benchmarks: one `verify` on the bundled data (cold: a new engine, so the table is
//! registered and its footer read; warm: the engine reused), and batch settlement of 1k and 10k
//! generated claims over a 1M-row Versant instance (made once under ~/.cache/recite-bench, or
//! $RECITE_BENCH_DIR). Run with `cargo bench --bench verify`.
//!
//! `sav_scan` (only with `RECITE_SAV_BENCH=DIR`, see BENCHMARKS.md): one DataFusion aggregate
//! over the columns 10,000 generated claims touch, from Parquet, bytecode `.sav` and `.zsav`
//! copies of one generated tracker, and ambers' decoding alone and with the IPC bridge.

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use recite::catalog::Catalog;
use recite::claimset::{ClaimSpec, generate};
use recite::engine::Engine;
use recite::extractor::Registry;
use recite::settle::pipeline::{self, Claim, Options};
use recite::synth::{VersantSpec, write_versant};
use serde_json::json;

fn bundled() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets")
}

fn one_claim() -> Vec<Claim> {
    let citation = json!({
        "study": "Versant Mega Tracker", "period": "W6 (April 2026)",
        "base": {"name": "Adults 18-74, aware of brand", "n": 4654}, "weight": "main_weight",
        "source": {"table": "versant_flat", "column": "s14r5", "function": "extractFunnel"}
    });
    let numbers = recite::claim::leaves(&json!({"Considered": "44%"}));
    vec![Claim { citation, numbers }]
}

fn verify(c: &mut Criterion) {
    let catalog = Catalog::load(&bundled()).unwrap();
    let registry = Registry::load(None).unwrap();
    let claims = one_claim();
    let mut g = c.benchmark_group("verify");
    g.bench_function("cold", |b| {
        b.iter(|| {
            let engine = Engine::new();
            pipeline::settle_all(&claims, &catalog, &registry, &engine, Options::default())
        })
    });
    let engine = Engine::new();
    g.bench_function("warm", |b| {
        b.iter(|| pipeline::settle_all(&claims, &catalog, &registry, &engine, Options::default()))
    });
    g.finish();
}

/// A 1M-row Versant instance, made once; the folder is its own data root.
fn big_data() -> PathBuf {
    let root = std::env::var_os("RECITE_BENCH_DIR").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/recite-bench")
    });
    // The same instance benches/compare.py makes and uses.
    let dir = root.join("versant-1000000");
    if !dir.join("study.toml").is_file() {
        let spec = VersantSpec {
            respondents: 1_000_000,
            extra_questions: 160,
            row_group_size: 125_000,
            ..VersantSpec::default()
        };
        write_versant(&spec, &dir).unwrap();
    }
    dir
}

fn check(c: &mut Criterion) {
    let data = big_data();
    let catalog = Catalog::load(&data).unwrap();
    let registry = Registry::load(None).unwrap();
    let engine = Engine::new();
    let mut g = c.benchmark_group("check_1m_rows");
    g.sample_size(10).measurement_time(Duration::from_secs(30));
    for count in [1_000, 10_000] {
        let spec = ClaimSpec { study: "Versant".into(), count, wrong: 0.1, seed: 7 };
        let claims: Vec<Claim> = generate(&spec, &catalog, &registry, &engine)
            .unwrap()
            .into_iter()
            .map(|c| Claim {
                citation: c.line["citation"].clone(),
                numbers: recite::claim::leaves(&c.line["result"]),
            })
            .collect();
        g.bench_function(format!("{count}_claims"), |b| {
            b.iter(|| {
                let engine = Engine::new();
                pipeline::settle_all(
                    &claims,
                    &catalog,
                    &registry,
                    &engine,
                    Options { explain: false, ..Options::default() },
                )
            })
        });
    }
    g.finish();
}

/// The columns 10,000 generated claims over the 203-column tracker touch (36 cited, the weight,
/// the wave and the age of the bases).
fn touched_columns() -> Vec<String> {
    let mut columns = vec!["wave".to_string(), "age".into(), "main_weight".into()];
    for q in ["s14r", "q20r", "q30r"] {
        columns.extend((1..=12).map(|i| format!("{q}{i}")));
    }
    columns
}

/// `RECITE_SAV_BENCH=DIR` holding `parquet/versant_flat.parquet`, `sav/versant_flat.sav` and
/// `zsav/versant_flat.zsav` (benches/to_sav.py writes them).
fn sav_scan(c: &mut Criterion) {
    use datafusion::arrow::buffer::Buffer;
    use datafusion::arrow::ipc::reader::StreamDecoder;
    use datafusion::prelude::{ParquetReadOptions, SessionContext, cast, ident};
    let Some(dir) = std::env::var_os("RECITE_SAV_BENCH").map(PathBuf::from) else { return };
    let columns = touched_columns();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let scan = |ctx: &SessionContext| {
        rt.block_on(async {
            let df = ctx.table("t").await.unwrap();
            let sums = columns
                .iter()
                .map(|c| {
                    datafusion::functions_aggregate::expr_fn::sum(cast(
                        ident(c),
                        datafusion::arrow::datatypes::DataType::Float64,
                    ))
                })
                .collect();
            df.aggregate(vec![], sums).unwrap().collect().await.unwrap()
        })
    };
    let mut g = c.benchmark_group("sav_scan");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    let ctx = SessionContext::new();
    let parquet = dir.join("parquet/versant_flat.parquet");
    rt.block_on(ctx.register_parquet("t", parquet.to_str().unwrap(), ParquetReadOptions::default())).unwrap();
    g.bench_function("parquet", |b| b.iter(|| scan(&ctx)));
    for (name, file) in [("sav", "sav/versant_flat.sav"), ("zsav", "zsav/versant_flat.zsav")] {
        let path = dir.join(file);
        let ctx = SessionContext::new();
        ctx.register_table("t", std::sync::Arc::new(recite::sav::SavTable::open(&path).unwrap())).unwrap();
        g.bench_function(name, |b| b.iter(|| scan(&ctx)));
        // ambers straight on the file, as it reads it without recite's streaming decompression.
        let names: Vec<&str> = columns.iter().map(String::as_str).collect();
        let decode = |bridge: bool| {
            let file = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(&path).unwrap());
            let mut sc = ambers::scan_sav_from_reader(file, 65_536).unwrap();
            sc.select(&names).unwrap();
            let mut w = arrow_57::ipc::writer::StreamWriter::try_new(Vec::new(), &sc.schema()).unwrap();
            let (mut d, mut last) = (StreamDecoder::new(), 0);
            while let Some(b) = sc.next_batch().unwrap() {
                if bridge {
                    w.get_mut().reserve(last);
                    w.write(&b).unwrap();
                    let mut bytes = Buffer::from(std::mem::take(w.get_mut()));
                    last = bytes.len();
                    while !bytes.is_empty() {
                        d.decode(&mut bytes).unwrap();
                    }
                }
            }
        };
        g.bench_function(format!("{name}_ambers_decode"), |b| b.iter(|| decode(false)));
        g.bench_function(format!("{name}_ambers_decode_and_bridge"), |b| b.iter(|| decode(true)));
    }
    g.finish();
}

criterion_group!(benches, verify, check, sav_scan);
criterion_main!(benches);
