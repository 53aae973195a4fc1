//! criterion benchmark of the answer-text audit (docs/answers.md, "Cost"): one long sentence of
//! 10 KB, 1 MB and 10 MB, every number traced against a small cited result. Throughput is in
//! bytes, so criterion reports the time per byte of each size: a linear audit keeps them within
//! a small constant of each other (past `answers::MAX_NUMBERS` numbers the rest is only found
//! and counted, so the large sizes cost less per byte). Run with `cargo bench --bench answers`.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use recite::answers;
use recite::input::Turn;
use recite::settle::verdict::Settlement;
use serde_json::json;

/// One long sentence of about `size` bytes: percentages, a list, a count, no full stop.
fn sentence(size: usize) -> String {
    let unit = "consideration is 44% and 47% for Northwind, familiarity 69.4% (n = 4,654 respondents), ";
    unit.repeat(size / unit.len() + 1)[..size].to_string()
}

fn audit(c: &mut Criterion) {
    let leaves = recite::claim::leaves(&json!({"Considered": 0.442, "Familiar": 0.694}));
    let sources = vec![answers::sources(0, &Settlement::unverifiable(vec![]), &leaves, Some(4654))];
    let mut g = c.benchmark_group("answers");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    for (name, size) in [("10KB", 10_000), ("1MB", 1_000_000), ("10MB", 10_000_000)] {
        let turns =
            vec![Turn { role: "assistant".into(), text: sentence(size), items: vec![0], ..Turn::default() }];
        g.throughput(Throughput::Bytes(size as u64));
        g.bench_with_input(BenchmarkId::new("one_sentence", name), &turns, |b, turns| {
            b.iter(|| answers::audit(turns, &sources))
        });
    }
    g.finish();
}

criterion_group!(benches, audit);
criterion_main!(benches);
