//! The grouped scan's reduction: one partition's projected batches into exact integer sums per
//! group, and the sums' merge across partitions.

use std::collections::HashMap;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::Int64Type;

use super::flags::Layout;
use super::{FIXED_SCALE, INVALID, OUT_OF_RANGE, OVERFLOW};
use crate::engine::FIXED_LIMIT;

/// Exact sums of one group: the row count, and per weight (valid rows, Σw, Σw²) in fixed point
/// with its INVALID / OVERFLOW flags.
#[derive(Clone)]
pub(super) struct Sums128 {
    pub(super) n: u64,
    pub(super) weighted: Vec<(u64, i128, i128)>,
    pub(super) bad: Vec<u8>,
}

impl Sums128 {
    pub(super) fn new(weights: usize) -> Sums128 {
        Sums128 { n: 0, weighted: vec![(0, 0, 0); weights], bad: vec![0; weights] }
    }

    pub(super) fn merge(&mut self, o: &Sums128) {
        self.n += o.n;
        for ((a, bad), (b, obad)) in
            self.weighted.iter_mut().zip(&mut self.bad).zip(o.weighted.iter().zip(&o.bad))
        {
            *bad |= *obad | add_fixed(a, b);
        }
    }
}

/// Adds fixed-point sums, checked: OVERFLOW when Σw or Σw² leaves the i128 range.
#[inline]
pub(super) fn add_fixed(a: &mut (u64, i128, i128), b: &(u64, i128, i128)) -> u8 {
    let (w, o1) = a.1.overflowing_add(b.1);
    let (w2, o2) = a.2.overflowing_add(b.2);
    *a = (a.0 + b.0, w, w2);
    if o1 || o2 { OVERFLOW } else { 0 }
}

/// Group key within a column: (period mask, cell mask, code·2^B + base mask, PSU index).
pub(super) type GroupKey = (i64, i64, i64, Option<u32>);

/// The Fx hash (rustc's): keys here are a few machine words, and SipHash's resistance to
/// flooding buys nothing for keys computed from our own data; it was 10% of a large run.
#[derive(Default, Clone, Copy)]
pub(super) struct Fx(u64);

impl std::hash::Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u64(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_i64(&mut self, w: i64) {
        self.write_u64(w as u64);
    }
    fn write_u32(&mut self, w: u32) {
        self.write_u64(u64::from(w));
    }
    fn write_usize(&mut self, w: usize) {
        self.write_u64(w as u64);
    }
}

/// A group key across partitions: the PSU by name, since each partition numbers its own.
pub(super) type MergedKey = (i64, i64, i64, Option<(String, String)>);

pub(super) type FxMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<Fx>>;

/// A row's key apart from the column: (period mask, cell mask, PSU index).
pub(super) type RowKey = (i64, i64, Option<u32>);

/// One partition's reduction: per column, a group index per (row key, column key), and flat
/// sums per group. Row keys are interned once per row; each column then hashes two words.
pub(super) struct Partial {
    pub(super) rows: u64,
    pub(super) row_keys: FxMap<RowKey, u32>,
    pub(super) row_key_list: Vec<RowKey>,
    pub(super) index: Vec<FxMap<(u32, i64), u32>>,
    /// Per column: per group, the row count.
    pub(super) counts: Vec<Vec<u64>>,
    /// Per column: per group and weight, (valid rows, Σw, Σw²) in fixed point.
    pub(super) sums: Vec<Vec<(u64, i128, i128)>>,
    /// Per column: per group and weight, INVALID / OVERFLOW flags.
    pub(super) bad: Vec<Vec<u8>>,
    /// Per column: whether a row's code was beyond ±2^42 (its key is [`OUT_OF_RANGE`]).
    pub(super) out_of_range: Vec<bool>,
    pub(super) psu_names: Vec<(String, String)>,
    pub(super) psu_index: HashMap<(String, String), u32>,
}

impl Partial {
    pub(super) fn new(columns: usize) -> Partial {
        Partial {
            rows: 0,
            row_keys: FxMap::default(),
            row_key_list: Vec::new(),
            index: vec![FxMap::default(); columns],
            counts: vec![Vec::new(); columns],
            sums: vec![Vec::new(); columns],
            bad: vec![Vec::new(); columns],
            out_of_range: vec![false; columns],
            psu_names: Vec::new(),
            psu_index: HashMap::new(),
        }
    }

    /// The groups of one column with their sums.
    pub(super) fn groups(&self, c: usize, n_weights: usize) -> impl Iterator<Item = (GroupKey, Sums128)> + '_ {
        self.index[c].iter().map(move |(&(rk, k), &g)| {
            let g = g as usize;
            let (pm, cm, psu) = self.row_key_list[rk as usize];
            let weighted = self.sums[c][g * n_weights..(g + 1) * n_weights].to_vec();
            let bad = self.bad[c][g * n_weights..(g + 1) * n_weights].to_vec();
            ((pm, cm, k, psu), Sums128 { n: self.counts[c][g], weighted, bad })
        })
    }

    /// Adds one batch of rows laid out as `layout` says, column by column.
    pub(super) fn add(&mut self, b: &RecordBatch, layout: &Layout) -> datafusion::error::Result<()> {
        use datafusion::arrow::datatypes::Float64Type;
        if b.num_columns() != layout.width() {
            return Err(datafusion::error::DataFusionError::Internal(format!(
                "a grouped batch has {} columns, its layout {}",
                b.num_columns(),
                layout.width()
            )));
        }
        let n_weights = layout.weights;
        let pm = b.column(Layout::PERIODS).as_primitive::<Int64Type>();
        let cm = b.column(Layout::CELLS).as_primitive::<Int64Type>();
        let ws: Vec<_> =
            (0..n_weights).map(|i| b.column(layout.weight(i)).as_primitive::<Float64Type>()).collect();
        let design = layout.design().map(|(s, p)| (b.column(s), b.column(p)));
        let n = b.num_rows();
        self.rows += n as u64;
        let scale = 10f64.powi(i32::from(FIXED_SCALE));
        // Per row: its interned row key, and per weight (valid, Σw, Σw²) in fixed point. A
        // null or zero weight leaves the base; a negative, NaN or infinite one, or one whose
        // square does not fit the fixed point, flags the row's group (the jobs that select it
        // fail, naming the weight).
        let mut weighted = vec![(0u64, 0i128, 0i128); n * n_weights];
        let mut row_bad = vec![0u8; n * n_weights];
        for (i, w) in ws.iter().enumerate() {
            for r in 0..n {
                if w.is_null(r) {
                    continue;
                }
                let v = w.value(r);
                if v.is_nan() || v < 0.0 || v.is_infinite() {
                    row_bad[r * n_weights + i] = INVALID;
                } else if v > 0.0 {
                    let (wv, w2v) = (v * scale, v * v * scale);
                    if w2v < FIXED_LIMIT {
                        weighted[r * n_weights + i] = (1, wv.round() as i128, w2v.round() as i128);
                    } else {
                        row_bad[r * n_weights + i] = OVERFLOW;
                    }
                }
            }
        }
        let mut rk = Vec::with_capacity(n);
        for r in 0..n {
            let psu = match &design {
                Some((s, p)) => {
                    let (s, p) = (s.as_string::<i32>(), p.as_string::<i32>());
                    let name = |a: &datafusion::arrow::array::StringArray| {
                        if a.is_null(r) { String::new() } else { a.value(r).to_string() }
                    };
                    let key = (name(s), name(p));
                    let next = self.psu_names.len() as u32;
                    let i = *self.psu_index.entry(key.clone()).or_insert(next);
                    if i == next {
                        self.psu_names.push(key);
                    }
                    Some(i)
                }
                None => None,
            };
            let key = (pm.value(r), cm.value(r), psu);
            let next = self.row_key_list.len() as u32;
            let i = *self.row_keys.entry(key).or_insert(next);
            if i == next {
                self.row_key_list.push(key);
            }
            rk.push(i);
        }
        for c in 0..self.index.len() {
            let k = b.column(layout.key(c)).as_primitive::<Int64Type>();
            let (index, counts, sums, bad) =
                (&mut self.index[c], &mut self.counts[c], &mut self.sums[c], &mut self.bad[c]);
            for (r, &row_key) in rk.iter().enumerate() {
                if k.is_null(r) {
                    continue;
                }
                if k.value(r) == OUT_OF_RANGE {
                    self.out_of_range[c] = true;
                    continue;
                }
                let next = counts.len() as u32;
                let g = *index.entry((row_key, k.value(r))).or_insert(next);
                if g == next {
                    counts.push(0);
                    sums.extend(std::iter::repeat_n((0, 0, 0), n_weights));
                    bad.extend(std::iter::repeat_n(0, n_weights));
                }
                let g = g as usize;
                counts[g] += 1;
                let span = r * n_weights..(r + 1) * n_weights;
                let (row, row_bad) = (&weighted[span.clone()], &row_bad[span]);
                let group = g * n_weights..(g + 1) * n_weights;
                for ((a, b), (flags, f)) in
                    sums[group.clone()].iter_mut().zip(row).zip(bad[group].iter_mut().zip(row_bad))
                {
                    *flags |= *f | add_fixed(a, b);
                }
            }
        }
        Ok(())
    }
}
