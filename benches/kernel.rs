//! criterion benchmark of the grouped scan's accumulation kernel alone
//! (`crates/recite-engine/src/engine/grouped/reduce.rs`, `Partial::add`): rows' period and cell
//! flags made masks and interned as row keys, each cited column's code and base flags packed
//! and its group found, the row count and the weights' fixed-point Σw and Σw² added per group.
//! No DataFusion plan, no Parquet: 1,000,000 rows of in-memory Arrow arrays in batches of 8,192
//! (DataFusion's batch size), laid out as the grouped projection is, reduced as one partition's
//! task reduces them. Throughput is in rows.
//!
//! The shape is the Versant tracker's under `recite generate claims` (BENCHMARKS.md): 8 waves
//! (one-hot period flags), 4 cell flags, cited columns of codes 1..=5 with about 5% nulls and
//! 2 base flags each, one raked weight. Four cases: one cited column unweighted (the kernel's
//! floor per row); 12 cited columns with the weight; the same with a second weight (what an
//! explained run's settling scan takes along); and with 70% of the codes null (a tracker's
//! follow-up questions, asked of some respondents only). Run with `cargo bench
//! --no-default-features --features engine --bench kernel` (release), or `--profile dev` and
//! `-- --quick` for the shape only (recite's own crates are then unoptimised).

use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use datafusion::arrow::array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch};
use recite::engine::reduce_batches;

const ROWS: usize = 1_000_000;
const BATCH: usize = 8_192;
const PERIODS: usize = 8;
const CELLS: usize = 4;
const BASES: usize = 2;

/// A small deterministic generator (SplitMix64): the same rows every run, no dependency.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The batches of `ROWS` rows: period flags, cell flags, per column its code (null in
/// `null_in_20` rows of 20) and base flags, then `weights` weights (raked-looking values in
/// [0.2, 3.2)).
fn batches(columns: usize, weights: usize, null_in_20: u64) -> Vec<RecordBatch> {
    let mut rng = Mix(0x5eed);
    let mut out = Vec::new();
    let mut start = 0;
    while start < ROWS {
        let n = BATCH.min(ROWS - start);
        let mut cols: Vec<(String, ArrayRef)> = Vec::new();
        let wave: Vec<u64> = (0..n).map(|_| rng.below(PERIODS as u64)).collect();
        for k in 0..PERIODS {
            let flag = BooleanArray::from(wave.iter().map(|w| *w == k as u64).collect::<Vec<_>>());
            cols.push((format!("p{k}"), Arc::new(flag)));
        }
        for k in 0..CELLS {
            let flag = BooleanArray::from((0..n).map(|_| rng.below(2) == 0).collect::<Vec<_>>());
            cols.push((format!("c{k}"), Arc::new(flag)));
        }
        for c in 0..columns {
            let codes: Vec<Option<i64>> =
                (0..n).map(|_| (rng.below(20) >= null_in_20).then(|| 1 + rng.below(5) as i64)).collect();
            cols.push((format!("x{c}"), Arc::new(Int64Array::from(codes))));
            for k in 0..BASES {
                let flag = BooleanArray::from((0..n).map(|_| rng.below(4) != 0).collect::<Vec<_>>());
                cols.push((format!("b{c}_{k}"), Arc::new(flag)));
            }
        }
        for i in 0..weights {
            let w =
                Float64Array::from((0..n).map(|_| 0.2 + rng.below(3000) as f64 / 1000.0).collect::<Vec<_>>());
            cols.push((format!("w{i}"), Arc::new(w)));
        }
        out.push(RecordBatch::try_from_iter(cols).expect("a valid batch"));
        start += n;
    }
    out
}

fn kernel(c: &mut Criterion) {
    let mut g = c.benchmark_group("kernel");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.throughput(Throughput::Elements(ROWS as u64));
    // A second weight is what an explained run's settling scan takes along; 70% nulls, a
    // tracker's follow-up question asked of some respondents only.
    let cases = [
        ("1col_unweighted", 1, 0, 1),
        ("12cols_1weight", 12, 1, 1),
        ("12cols_2weights", 12, 2, 1),
        ("12cols_1weight_70pct_null", 12, 1, 14),
    ];
    for (name, columns, weights, null_in_20) in cases {
        let data = batches(columns, weights, null_in_20);
        let bases = vec![BASES; columns];
        // The same groups every time: 8 periods × 16 cell masks × (5 codes × 4 base masks).
        let (rows, groups) = reduce_batches(&data, PERIODS, CELLS, &bases, weights).expect("reduces");
        assert_eq!(rows, ROWS as u64);
        assert!(groups <= columns * PERIODS * (1 << CELLS) * 5 * (1 << BASES), "{groups} groups");
        g.bench_with_input(BenchmarkId::new("reduce_1m_rows", name), &data, |b, data| {
            b.iter(|| reduce_batches(data, PERIODS, CELLS, &bases, weights).expect("reduces"))
        });
    }
    g.finish();
}

criterion_group!(benches, kernel);
criterion_main!(benches);
