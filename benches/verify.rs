//! criterion benchmarks: one `verify` on the bundled data (cold: a new engine, so the table is
//! registered and its footer read; warm: the engine reused), and batch settlement of 1k and 10k
//! generated claims over a 1M-row Versant instance (made once under ~/.cache/recite-bench, or
//! $RECITE_BENCH_DIR). Run with `cargo bench --bench verify`.

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

criterion_group!(benches, verify, check);
criterion_main!(benches);
