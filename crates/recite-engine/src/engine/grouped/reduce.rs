//! The grouped scan's reduction: one partition's projected batches into exact integer sums per
//! group, and the sums' merge across partitions.
//!
//! Per row, the period and cell flags become masks and the row key (masks, PSU) is interned
//! once; per cited column the code and its base flags become a packed key, and the group is
//! found by plain array indexing where keys are small (codes near zero, few row keys), by
//! hashing only beyond. Sums are exact: weights in fixed point (i256 units of 2^-130, see
//! [`super::FIXED_SHIFT`]), counts as integers, so no order of rows or partitions moves a bit.

use std::collections::HashMap;

use datafusion::arrow::array::{Array, AsArray, BooleanArray, RecordBatch};
use datafusion::arrow::datatypes::{Float64Type, Int64Type, i256};

use super::flags::{Layout, pack};
use super::{FIXED_LIMIT, FIXED_SCALE, INVALID, OUT_OF_RANGE, OVERFLOW, fixed};

/// One weight's fixed-point sums over some rows: (valid rows, Σw, Σw²).
pub(super) type Fixed = (u64, i256, i256);

/// No rows.
const ZERO: Fixed = (0, i256::ZERO, i256::ZERO);

/// Exact sums of one group: the row count, and per weight (valid rows, Σw, Σw²) in fixed point
/// with its INVALID / OVERFLOW flags.
#[derive(Clone)]
pub(super) struct Exact {
    pub(super) n: u64,
    pub(super) weighted: Vec<Fixed>,
    pub(super) bad: Vec<u8>,
}

impl Exact {
    pub(super) fn new(weights: usize) -> Exact {
        Exact { n: 0, weighted: vec![ZERO; weights], bad: vec![0; weights] }
    }

    pub(super) fn merge(&mut self, o: &Exact) {
        self.n += o.n;
        for ((a, bad), (b, obad)) in
            self.weighted.iter_mut().zip(&mut self.bad).zip(o.weighted.iter().zip(&o.bad))
        {
            *bad |= *obad | add_fixed(a, b);
        }
    }
}

/// Adds fixed-point sums, checked: OVERFLOW when Σw or Σw² leaves the i256 range (which terms
/// under 2^192 cannot do in fewer than 2^63 rows; the check costs little and keeps it so).
#[inline]
pub(super) fn add_fixed(a: &mut Fixed, b: &Fixed) -> u8 {
    let (w, w2) = (a.1.checked_add(b.1), a.2.checked_add(b.2));
    *a = (a.0 + b.0, w.unwrap_or(i256::MAX), w2.unwrap_or(i256::MAX));
    if w.is_none() || w2.is_none() { OVERFLOW } else { 0 }
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

/// No id yet.
const NONE: u32 = u32::MAX;
/// Packed keys in `[WINDOW_LOW, WINDOW_LOW + WINDOW)` find their id in an array: survey codes
/// are small integers, so nearly every key does.
const WINDOW_LOW: i64 = -4096;
const WINDOW: usize = 1 << 14;
/// Row keys below this find their group in an array per key id; beyond (a design with many
/// PSUs), in a hash map. Bounds the arrays at `DENSE_ROW_KEYS` entries per key id.
const DENSE_ROW_KEYS: u32 = 1 << 14;

/// One cited column's groups in one partition: a group per (row key, packed key) present, and
/// its sums.
#[derive(Default)]
pub(super) struct Groups {
    /// Ids of packed keys in the window (`NONE` where unseen); allocated on first use.
    window: Vec<u32>,
    /// Ids of packed keys outside the window.
    spill: FxMap<i64, u32>,
    /// Packed key of each id.
    ids: Vec<i64>,
    /// Per key id, the group of each row key below [`DENSE_ROW_KEYS`] (`NONE` where unseen).
    dense: Vec<Vec<u32>>,
    /// Groups of row keys from [`DENSE_ROW_KEYS`] on: (row key, key id) → group.
    sparse: FxMap<(u32, u32), u32>,
    /// Per group: (row key, key id).
    keys: Vec<(u32, u32)>,
    /// Per group: the row count.
    counts: Vec<u64>,
    /// Per group and weight: (valid rows, Σw, Σw²) in fixed point.
    sums: Vec<Fixed>,
    /// Per group and weight: INVALID / OVERFLOW flags.
    bad: Vec<u8>,
    /// Whether a row's code was beyond ±2^42 (its key is [`OUT_OF_RANGE`]).
    pub(super) out_of_range: bool,
}

impl Groups {
    /// The id of a packed key.
    #[inline]
    fn id(&mut self, key: i64) -> u32 {
        let slot = key.wrapping_sub(WINDOW_LOW);
        if (0..WINDOW as i64).contains(&slot) {
            if self.window.is_empty() {
                self.window = vec![NONE; WINDOW];
            }
            let id = self.window[slot as usize];
            if id != NONE {
                return id;
            }
            let id = self.new_id(key);
            self.window[slot as usize] = id;
            id
        } else {
            if let Some(&id) = self.spill.get(&key) {
                return id;
            }
            let id = self.new_id(key);
            self.spill.insert(key, id);
            id
        }
    }

    fn new_id(&mut self, key: i64) -> u32 {
        self.ids.push(key);
        self.dense.push(Vec::new());
        self.ids.len() as u32 - 1
    }

    /// The group of (row key, packed key), made with zero sums when new.
    #[inline]
    fn group(&mut self, row_key: u32, key: i64, n_weights: usize) -> usize {
        let id = self.id(key);
        let g = if row_key < DENSE_ROW_KEYS {
            let slots = &mut self.dense[id as usize];
            if slots.len() <= row_key as usize {
                slots.resize(row_key as usize + 1, NONE);
            }
            slots[row_key as usize]
        } else {
            self.sparse.get(&(row_key, id)).copied().unwrap_or(NONE)
        };
        if g != NONE {
            return g as usize;
        }
        let g = self.counts.len() as u32;
        if row_key < DENSE_ROW_KEYS {
            self.dense[id as usize][row_key as usize] = g;
        } else {
            self.sparse.insert((row_key, id), g);
        }
        self.keys.push((row_key, id));
        self.counts.push(0);
        self.sums.extend(std::iter::repeat_n(ZERO, n_weights));
        self.bad.extend(std::iter::repeat_n(0, n_weights));
        g as usize
    }
}

/// One partition's reduction: the interned row keys, and per cited column its groups.
pub(super) struct Partial {
    pub(super) rows: u64,
    row_keys: FxMap<RowKey, u32>,
    row_key_list: Vec<RowKey>,
    pub(super) columns: Vec<Groups>,
    pub(super) psu_names: Vec<(String, String)>,
    psu_index: HashMap<(String, String), u32>,
}

/// The rows where flags `at(0..count)` of a batch are set, as a mask per row (bit k for flag k).
fn mask(b: &RecordBatch, count: usize, at: impl Fn(usize) -> usize) -> Vec<i64> {
    let mut m = vec![0i64; b.num_rows()];
    for k in 0..count {
        let flag: &BooleanArray = b.column(at(k)).as_boolean();
        let set = match flag.nulls() {
            Some(nulls) => flag.values() & nulls.inner(),
            None => flag.values().clone(),
        };
        for r in set.set_indices() {
            m[r] |= 1 << k;
        }
    }
    m
}

impl Partial {
    pub(super) fn new(columns: usize) -> Partial {
        Partial {
            rows: 0,
            row_keys: FxMap::default(),
            row_key_list: Vec::new(),
            columns: (0..columns).map(|_| Groups::default()).collect(),
            psu_names: Vec::new(),
            psu_index: HashMap::new(),
        }
    }

    /// The groups of one column with their sums, keyed by (period mask, cell mask, packed
    /// key, PSU index).
    pub(super) fn groups(&self, c: usize, n_weights: usize) -> impl Iterator<Item = (GroupKey, Exact)> + '_ {
        let col = &self.columns[c];
        col.keys.iter().enumerate().map(move |(g, &(rk, id))| {
            let (pm, cm, psu) = self.row_key_list[rk as usize];
            let weighted = col.sums[g * n_weights..(g + 1) * n_weights].to_vec();
            let bad = col.bad[g * n_weights..(g + 1) * n_weights].to_vec();
            ((pm, cm, col.ids[id as usize], psu), Exact { n: col.counts[g], weighted, bad })
        })
    }

    /// Adds one batch of rows laid out as `layout` says, column by column.
    pub(super) fn add(&mut self, b: &RecordBatch, layout: &Layout) -> datafusion::error::Result<()> {
        if b.num_columns() != layout.width() || self.columns.len() != layout.columns() {
            return Err(datafusion::error::DataFusionError::Internal(format!(
                "a grouped batch has {} columns, its layout {}",
                b.num_columns(),
                layout.width()
            )));
        }
        let n_weights = layout.weights;
        let pm = mask(b, layout.periods, |k| layout.period(k));
        let cm = mask(b, layout.cells, |k| layout.cell(k));
        let ws: Vec<_> =
            (0..n_weights).map(|i| b.column(layout.weight(i)).as_primitive::<Float64Type>()).collect();
        let design = layout.design().map(|(s, p)| (b.column(s), b.column(p)));
        let n = b.num_rows();
        self.rows += n as u64;
        // Per row: its interned row key, and per weight (valid, Σw, Σw²) in fixed point. A
        // null or zero weight leaves the base; a negative, NaN or infinite one, or one whose
        // square does not fit the fixed point, flags the row's group (the jobs that select it
        // fail, naming the weight).
        let mut weighted = vec![ZERO; n * n_weights];
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
                    // The same f64 operations as the plan's: (v·v)·2^130, compared in f64.
                    let squared = v * v;
                    if squared * FIXED_SCALE < FIXED_LIMIT {
                        weighted[r * n_weights + i] = (1, fixed(v), fixed(squared));
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
            let key = (pm[r], cm[r], psu);
            let next = self.row_key_list.len() as u32;
            let i = *self.row_keys.entry(key).or_insert(next);
            if i == next {
                self.row_key_list.push(key);
            }
            rk.push(i);
        }
        for (c, groups) in self.columns.iter_mut().enumerate() {
            let codes = b.column(layout.code(c)).as_primitive::<Int64Type>();
            let bits = layout.bases[c];
            let bm = if bits == 0 { Vec::new() } else { mask(b, bits, |k| layout.base(c, k)) };
            for (r, &row_key) in rk.iter().enumerate() {
                if codes.is_null(r) {
                    continue;
                }
                let key = pack(codes.value(r), bits as u32, bm.get(r).copied().unwrap_or(0));
                if key == OUT_OF_RANGE {
                    groups.out_of_range = true;
                    continue;
                }
                let g = groups.group(row_key, key, n_weights);
                groups.counts[g] += 1;
                let span = r * n_weights..(r + 1) * n_weights;
                let (row, row_bad) = (&weighted[span.clone()], &row_bad[span]);
                let group = g * n_weights..(g + 1) * n_weights;
                for ((a, b), (flags, f)) in groups.sums[group.clone()]
                    .iter_mut()
                    .zip(row)
                    .zip(groups.bad[group].iter_mut().zip(row_bad))
                {
                    *flags |= *f | add_fixed(a, b);
                }
            }
        }
        Ok(())
    }
}

/// The in-process reduction's kernel alone, for `benches/kernel.rs` (not an API): `batches`
/// reduced as one partition's task reduces them, into exact sums per group. Each batch is laid
/// out as the grouped projection is: `periods` period flags and `cells` cell flags (Boolean),
/// then per cited column its code (Int64) followed by its `bases[c]` base flags (Boolean), then
/// `weights` weights (Float64); no design. Returns the rows read and the groups made over all
/// columns. A batch of another width is an error; columns of other types panic.
#[doc(hidden)]
pub fn reduce_batches(
    batches: &[RecordBatch],
    periods: usize,
    cells: usize,
    bases: &[usize],
    weights: usize,
) -> datafusion::error::Result<(u64, usize)> {
    let layout = Layout::new(periods, cells, bases.to_vec(), weights, false);
    let mut part = Partial::new(bases.len());
    for b in batches {
        part.add(b, &layout)?;
    }
    Ok((part.rows, part.columns.iter().map(|g| g.counts.len()).sum()))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{ArrayRef, BooleanArray, Int64Array};

    use super::super::MAX_CODE;
    use super::*;

    #[test]
    fn reduction_packs_codes_leaves_nulls_out_and_marks_codes_beyond_the_bound() {
        // One period flag, one cited column with one base flag, no weights.
        let layout = Layout::new(1, 0, vec![1], 0, false);
        let period: ArrayRef = Arc::new(BooleanArray::from(vec![true, true, false, true, true]));
        let codes: ArrayRef = Arc::new(Int64Array::from(vec![Some(-3), None, Some(5), Some(-3), Some(9)]));
        let base: ArrayRef =
            Arc::new(BooleanArray::from(vec![Some(true), Some(true), None, Some(true), Some(false)]));
        let batch = RecordBatch::try_from_iter([("p0", period), ("x0", codes), ("b0_0", base)]).unwrap();
        let mut part = Partial::new(1);
        part.add(&batch, &layout).unwrap();
        let mut groups: Vec<((i64, i64, i64), u64)> =
            part.groups(0, 0).map(|((pm, cm, key, _), s)| ((pm, cm, key), s.n)).collect();
        groups.sort();
        // Code -3 in base twice, 5 outside the period and base (NULL flag is false), 9 outside
        // the base; the null code has no group.
        assert_eq!(groups, [((0, 0, 5 * 2), 1), ((1, 0, -3 * 2 + 1), 2), ((1, 0, 9 * 2), 1)]);
        assert!(!part.columns[0].out_of_range);

        let codes: ArrayRef = Arc::new(Int64Array::from(vec![MAX_CODE, 1]));
        let flags: ArrayRef = Arc::new(BooleanArray::from(vec![true, true]));
        let batch =
            RecordBatch::try_from_iter([("p0", flags.clone()), ("x0", codes), ("b0_0", flags)]).unwrap();
        part.add(&batch, &layout).unwrap();
        assert!(part.columns[0].out_of_range, "a code beyond ±2^42 is seen, never dropped");
    }
}
