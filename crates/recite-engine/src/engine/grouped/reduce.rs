//! The grouped scan's reduction: one partition's projected batches into exact integer sums per
//! group, and the sums' merge across partitions.
//!
//! Per row, the period and cell flags become masks and the row key (masks, PSU) is interned
//! once; per cited column each row with a code finds its group from the code, base flags and
//! row key, by plain array indexing where keys are small (codes near zero, few row keys), by
//! hashing only beyond, and is listed as (row, group); then the groups' sums are added by index
//! in a loop of nothing else (DataFusion's model: key → group index, then accumulate by index).
//! Rows without a code are never listed: most cited columns of a tracker are asked of a few
//! respondents, so their nulls, 27-99% of the rows, cost a bit test each. Sums are exact:
//! weights in fixed point (i256 integers at each weight's [`super::Scale`]), counts as
//! integers, so no order of rows or partitions moves a bit.
//!
//! Most batches are summed narrow: each term (`round(w·2^(192−b))`, …) is `m·2^e`, `m` of 53 bits, so
//! a batch's terms are whole multiples of a shared `2^shift` and their sums, bounded from the
//! terms' exponents and the rows added, fit an i128 ([`Groups::pending`]). Those partial sums
//! are flushed into the i256 ones only when the bound or the shift would change: the same
//! integers, at two plain adds a term instead of two checked 256-bit ones. A batch whose
//! weights span too many binary orders, or holds a bad weight, is summed wide.

use std::collections::HashMap;

use datafusion::arrow::array::{Array, AsArray, BooleanArray, RecordBatch};
use datafusion::arrow::buffer::NullBuffer;
use datafusion::arrow::datatypes::{
    Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, i256,
};

use super::flags::{Layout, pack};
use super::{FIXED_LIMIT, INVALID, OUT_OF_RANGE, OVERFLOW, Scale, fixed};

/// Bits of rows the narrow sums leave room for when their shift is chosen (2^40 rows); the
/// bound is still checked for every batch.
const ROW_BITS: u32 = 40;
/// Most bits a narrow sum may need: an i128 and its sign, with a bit to spare.
const NARROW_BITS: u32 = 126;

/// An exact term (an integer-valued f64 below [`FIXED_LIMIT`], [`Scale::weight_term`] or
/// [`Scale::square_term`]) as `(m, e)` with `m·2^e` the same integer as [`fixed`] gives, `m`
/// odd, or `(0, 0)` when it rounded to nothing.
#[inline]
pub(super) fn split(t: f64) -> (u64, u32) {
    let (m, e) = if t < TWO_64 {
        (t as u64, 0)
    } else {
        // t = mantissa·2^e, e ≥ 12 since t ≥ 2^64.
        let bits = t.to_bits();
        ((bits & ((1u64 << 52) - 1)) | (1u64 << 52), ((bits >> 52) & 0x7ff) as u32 - 1075)
    };
    if m == 0 {
        return (0, 0);
    }
    let z = m.trailing_zeros();
    (m >> z, e + z)
}

/// 2^64.
const TWO_64: f64 = 18_446_744_073_709_551_616.0;

/// Where one weight's Σw (or Σw²) narrow sums stand: each is a multiple of `2^shift` units, and
/// every term added since the last flush is under `2^top` units.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Shift {
    shift: u32,
    top: u32,
}

/// ⌈log2 n⌉ (0 for n ≤ 1).
fn ceil_log2(n: u64) -> u32 {
    if n <= 1 { 0 } else { 64 - (n - 1).leading_zeros() }
}

/// Whether sums of `rows` terms each under `2^top`, counted in units of `2^shift`, fit an i128.
fn fits(s: Shift, rows: u64) -> bool {
    s.top - s.shift + ceil_log2(rows) <= NARROW_BITS
}

/// Where a group's narrow sums sit: per weight its Σw, and its Σw² for the first `squared`
/// weights (those the scan's jobs asked for; a weight only taken along for a later run's
/// variants, which read values alone, is summed as Σw: one add a row and column instead of
/// two). The lanes of weight i: Σw at [`Lanes::sum`], Σw² right after it when squared.
#[derive(Clone, Copy, Debug)]
struct Lanes {
    weights: usize,
    squared: usize,
}

impl Lanes {
    fn new(weights: usize, squared: usize) -> Lanes {
        Lanes { weights, squared: squared.min(weights) }
    }

    /// Lanes a group (or a row's terms) holds.
    fn len(self) -> usize {
        self.weights + self.squared
    }

    /// Whether weight `i` has its Σw² summed.
    fn squares(self, i: usize) -> bool {
        i < self.squared
    }

    /// The lane of weight `i`'s Σw.
    fn sum(self, i: usize) -> usize {
        if self.squares(i) { 2 * i } else { self.squared + i }
    }
}

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
    let mut w = [a.1, a.2];
    let bad = add_wide(&mut w, [b.1, b.2]);
    *a = (a.0 + b.0, w[0], w[1]);
    bad
}

/// Adds (Σw, Σw²) pairs, checked as [`add_fixed`]: a sum that leaves the i256 range stays at
/// `i256::MAX`, flagged OVERFLOW.
#[inline]
fn add_wide(a: &mut [i256; 2], b: [i256; 2]) -> u8 {
    let mut bad = 0;
    for (a, b) in a.iter_mut().zip(b) {
        *a = a.checked_add(b).unwrap_or_else(|| {
            bad = OVERFLOW;
            i256::MAX
        });
    }
    bad
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

/// Most entries of a column's direct lookup (4 MiB of u32).
const DIRECT_LIMIT: i64 = 1 << 20;

/// Most period and cell flags whose masks find their row key in an array (2^16 u32): without
/// a design, the row key is the two masks, and one load replaces a hash look-up a row.
const ROW_KEY_BITS: usize = 16;

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
    /// Per group and weight: the rows whose weight is null or zero (out of the weighted base)
    /// or bad; the others are the weight's valid rows.
    outs: Vec<u64>,
    /// Per group and weight: (Σw, Σw²) in fixed point, flushed.
    sums: Vec<[i256; 2]>,
    /// Per group and weight: INVALID / OVERFLOW flags.
    bad: Vec<u8>,
    /// Per group, its [`Lanes`]: the narrow Σw (and Σw²) since the last flush, in units of
    /// their weight's [`Shift`]s.
    pending: Vec<i128>,
    /// The direct lookup, where the column's codes span a small range: the group of (row key,
    /// code, base mask) at `(row key · span + (code − lo)·2^bits + mask)`, `NONE` where
    /// unseen. One load a row instead of the window's three.
    direct: Vec<u32>,
    /// The lowest code and how many codes from it the direct lookup holds (0: none yet).
    direct_lo: i64,
    direct_codes: i64,
    /// The direct lookup would exceed [`DIRECT_LIMIT`]: the window and maps serve alone.
    direct_off: bool,
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

    /// A new group of `key`, with zero sums.
    fn push(&mut self, key: (u32, u32), lanes: Lanes) -> u32 {
        self.keys.push(key);
        self.counts.push(0);
        self.outs.extend(std::iter::repeat_n(0, lanes.weights));
        self.sums.extend(std::iter::repeat_n([i256::ZERO; 2], lanes.weights));
        self.bad.extend(std::iter::repeat_n(0, lanes.weights));
        self.pending.extend(std::iter::repeat_n(0, lanes.len()));
        self.keys.len() as u32 - 1
    }

    /// The group of (row key, packed key), made with zero sums when new.
    #[inline]
    fn group(&mut self, row_key: u32, key: i64, lanes: Lanes) -> u32 {
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
            return g;
        }
        let g = self.push((row_key, id), lanes);
        if row_key < DENSE_ROW_KEYS {
            self.dense[id as usize][row_key as usize] = g;
        } else {
            self.sparse.insert((row_key, id), g);
        }
        g
    }

    /// Readies the direct lookup for a batch whose non-null codes lie in `[min, max]`, with
    /// `bits` base flags and `row_keys` row keys so far: widens its range (and re-places the
    /// groups) when needed. False when the lookup is off or would exceed [`DIRECT_LIMIT`]; the
    /// batch then finds its groups through the window.
    fn direct_for(&mut self, min: i64, max: i64, bits: u32, row_keys: usize) -> bool {
        if self.direct_off || min <= -super::MAX_CODE || max >= super::MAX_CODE {
            return false;
        }
        let (lo, hi) = if self.direct_codes == 0 {
            (min, max)
        } else {
            (self.direct_lo.min(min), (self.direct_lo + self.direct_codes - 1).max(max))
        };
        let codes = hi - lo + 1;
        let span = codes << bits;
        if codes > DIRECT_LIMIT || span.saturating_mul(row_keys as i64) > DIRECT_LIMIT {
            self.direct_off = true;
            self.direct = Vec::new();
            return false;
        }
        if (lo, codes) != (self.direct_lo, self.direct_codes) {
            self.direct_lo = lo;
            self.direct_codes = codes;
            self.direct = vec![NONE; span as usize * row_keys];
            for (g, &(rk, id)) in self.keys.iter().enumerate() {
                let (code, mask) = super::flags::unpack(self.ids[id as usize], i64::from(bits));
                self.direct[(i64::from(rk) * span + ((code - lo) << bits) + mask) as usize] = g as u32;
            }
        } else if self.direct.len() < span as usize * row_keys {
            self.direct.resize(span as usize * row_keys, NONE);
        }
        true
    }

    /// Lists each row with a code as (row, group) in `into`, in row order, reading the
    /// codes at the width the file stores them (the projection does not cast them: a cast
    /// allocated and wrote 8 bytes a row per column and batch). `None` for a type that is not
    /// integer codes (`super::integer_codes` keeps those out of the grouped scan).
    fn place(
        &mut self,
        into: &mut Vec<(u32, u32)>,
        row: &RowInputs<'_>,
        codes: &dyn Array,
        lanes: Lanes,
    ) -> Option<()> {
        let nulls = codes.logical_nulls();
        macro_rules! typed {
            ($($t:ty),*) => {$(
                if let Some(p) = codes.as_primitive_opt::<$t>() {
                    self.place_typed(into, row, p.values(), nulls.as_ref(), lanes);
                    return Some(());
                }
            )*};
        }
        typed!(Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type);
        None
    }

    /// [`Groups::place`] over codes of one type, `nulls` telling the rows without one: the
    /// direct lookup where it serves, else the window and maps.
    fn place_typed<T: Copy>(
        &mut self,
        into: &mut Vec<(u32, u32)>,
        row: &RowInputs<'_>,
        codes: &[T],
        nulls: Option<&NullBuffer>,
        lanes: Lanes,
    ) where
        i64: From<T>,
    {
        let n = codes.len();
        into.clear();
        let code = |r: usize| i64::from(codes[r]);
        let mut range: Option<(i64, i64)> = None;
        each_word(nulls, n, |start, word| {
            let (lo, hi) = if word == u64::MAX {
                codes[start..start + 64]
                    .iter()
                    .fold((i64::MAX, i64::MIN), |(lo, hi), &v| (lo.min(i64::from(v)), hi.max(i64::from(v))))
            } else {
                each_bit(word, start)
                    .fold((i64::MAX, i64::MIN), |(lo, hi), r| (lo.min(code(r)), hi.max(code(r))))
            };
            range = Some(range.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        });
        let Some((min, max)) = range.filter(|(lo, hi)| lo <= hi) else { return };
        let bits = row.bits;
        if self.direct_for(min, max, bits, row.row_keys) {
            let (lo, span) = (self.direct_lo, self.direct_codes << bits);
            // The group of row r, made when new.
            let mut group_of = |key: u32, code: i64, mask: i64| {
                let at = (key as i64 * span + ((code - lo) << bits) + mask) as usize;
                match self.direct[at] {
                    NONE => {
                        let made = self.group(key, pack(code, bits, mask), lanes);
                        self.direct[at] = made;
                        made
                    }
                    found => found,
                }
            };
            each_word(nulls, n, |start, word| {
                if word == u64::MAX {
                    let run = start..start + 64;
                    let rows = row.keys[run.clone()].iter().zip(&codes[run.clone()]).zip(&row.base_mask[run]);
                    for (r, ((&key, &code), &mask)) in (start as u32..).zip(rows) {
                        into.push((r, group_of(key, i64::from(code), mask)));
                    }
                } else {
                    for r in each_bit(word, start) {
                        into.push((r as u32, group_of(row.keys[r], code(r), row.base_mask[r])));
                    }
                }
            });
        } else {
            each_word(nulls, n, |start, word| {
                for r in each_bit(word, start) {
                    let key = pack(code(r), bits, row.base_mask[r]);
                    if key == OUT_OF_RANGE {
                        self.out_of_range = true;
                        continue;
                    }
                    into.push((r as u32, self.group(row.keys[r], key, lanes)));
                }
            });
        }
    }

    /// Adds one batch's narrow terms (`lanes` a row) of the rows `placed` lists to their
    /// groups, by index.
    fn add_narrow(&mut self, placed: &[(u32, u32)], terms: &[i128], lanes: Lanes) {
        /// The loop with the lanes' count known to the compiler.
        fn by<const L: usize>(
            placed: &[(u32, u32)],
            terms: &[i128],
            counts: &mut [u64],
            pending: &mut [i128],
        ) {
            for &(r, g) in placed {
                let (r, g) = (r as usize, g as usize);
                counts[g] += 1;
                let p = &mut pending[g * L..(g + 1) * L];
                let t = &terms[r * L..(r + 1) * L];
                for k in 0..L {
                    p[k] += t[k];
                }
            }
        }
        match lanes.len() {
            0 => placed.iter().for_each(|&(_, g)| self.counts[g as usize] += 1),
            1 => by::<1>(placed, terms, &mut self.counts, &mut self.pending),
            2 => by::<2>(placed, terms, &mut self.counts, &mut self.pending),
            3 => by::<3>(placed, terms, &mut self.counts, &mut self.pending),
            4 => by::<4>(placed, terms, &mut self.counts, &mut self.pending),
            l => {
                for &(r, g) in placed {
                    let (r, g) = (r as usize, g as usize);
                    self.counts[g] += 1;
                    for (p, t) in self.pending[g * l..(g + 1) * l].iter_mut().zip(&terms[r * l..(r + 1) * l])
                    {
                        *p += t;
                    }
                }
            }
        }
    }

    /// Adds one batch's wide terms (`n_weights` a row) of the rows `placed` lists, checked, to
    /// their groups.
    fn add_wide(&mut self, placed: &[(u32, u32)], terms: &[[i256; 2]], n_weights: usize) {
        for &(r, g) in placed {
            let (r, g) = (r as usize, g as usize);
            self.counts[g] += 1;
            for i in 0..n_weights {
                let t = terms[r * n_weights + i];
                if t != [i256::ZERO; 2] {
                    self.bad[g * n_weights + i] |= add_wide(&mut self.sums[g * n_weights + i], t);
                }
            }
        }
    }

    /// Adds the pending narrow sums (laid out as `lanes`) into the exact ones (`shifts` per
    /// weight: Σw's, Σw²'s) and clears them.
    fn flush(&mut self, shifts: &[[Option<Shift>; 2]], lanes: Lanes) {
        let n_weights = shifts.len();
        if n_weights == 0 {
            return;
        }
        let up = |x: i128, s: Option<Shift>| match s {
            Some(s) if x != 0 => i256::from_i128(x) << (s.shift as u8),
            _ => i256::ZERO,
        };
        for ((sums, bad), pending) in self
            .sums
            .chunks_exact_mut(n_weights)
            .zip(self.bad.chunks_exact_mut(n_weights))
            .zip(self.pending.chunks_exact_mut(lanes.len()))
        {
            for (i, [sw, sw2]) in shifts.iter().enumerate() {
                let at = lanes.sum(i);
                let p = [pending[at], if lanes.squares(i) { pending[at + 1] } else { 0 }];
                if p == [0; 2] {
                    continue;
                }
                bad[i] |= add_wide(&mut sums[i], [up(p[0], *sw), up(p[1], *sw2)]);
                pending[at] = 0;
                if lanes.squares(i) {
                    pending[at + 1] = 0;
                }
            }
        }
    }
}

/// Calls `f(start, word)` for the rows of a batch of `n` in runs of 64 from `start`: bit i of
/// `word` is set when row `start + i` is a row of the batch and not null in `nulls`.
fn each_word(nulls: Option<&NullBuffer>, n: usize, mut f: impl FnMut(usize, u64)) {
    match nulls {
        Some(nulls) => {
            let words = nulls.inner().bit_chunks();
            for (start, word) in (0..n).step_by(64).zip(words.iter_padded()) {
                if word != 0 {
                    f(start, word);
                }
            }
        }
        None => {
            for start in (0..n).step_by(64) {
                let len = n - start;
                f(start, if len >= 64 { u64::MAX } else { (1 << len) - 1 });
            }
        }
    }
}

/// The rows whose bits are set in `word`, counted from `start`.
fn each_bit(mut word: u64, start: usize) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (word != 0).then(|| {
            let r = start + word.trailing_zeros() as usize;
            word &= word - 1;
            r
        })
    })
}

/// Row `r` of a text column, empty where null.
fn text_at(a: &datafusion::arrow::array::StringArray, r: usize) -> &str {
    if a.is_null(r) { "" } else { a.value(r) }
}

/// What places one column's rows in their groups, beside its codes: per row its row key and
/// base mask; the column's base flags and the partition's row keys so far.
struct RowInputs<'a> {
    keys: &'a [u32],
    base_mask: &'a [i64],
    bits: u32,
    row_keys: usize,
}

/// One partition's reduction: the interned row keys, and per cited column its groups.
pub(super) struct Partial {
    pub(super) rows: u64,
    row_keys: FxMap<RowKey, u32>,
    row_key_list: Vec<RowKey>,
    /// The row key of each (period mask, cell mask) without a design, when the two fit
    /// [`ROW_KEY_BITS`] (`NONE` where unseen; allocated on first use).
    row_key_direct: Vec<u32>,
    pub(super) columns: Vec<Groups>,
    pub(super) psu_names: Vec<(String, String)>,
    /// Stratum → PSU → index into `psu_names`: two levels, so a row's names are looked up as
    /// borrowed text and only a new PSU's are copied.
    psu_index: HashMap<String, HashMap<String, u32>>,
    /// Per weight, the scale its terms are made at (the projection's).
    scales: Vec<Scale>,
    /// How many weights, the first ones, have their Σw² summed ([`Lanes`]).
    squared: usize,
    /// Per weight, where its pending narrow Σw and Σw² stand (`None`: nothing pending).
    shifts: Vec<[Option<Shift>; 2]>,
    /// Rows added narrow since the last flush.
    pending_rows: u64,
    /// Buffers reused from batch to batch.
    scratch: Scratch,
}

/// A batch's per-row buffers, kept between batches so that no batch allocates them.
#[derive(Default)]
struct Scratch {
    period_mask: Vec<i64>,
    cell_mask: Vec<i64>,
    base_mask: Vec<i64>,
    /// A zero base mask a row, for the columns without base flags.
    no_base: Vec<i64>,
    row_keys: Vec<u32>,
    /// Per row and weight: the split terms of w and w².
    split: Vec<[(u64, u32); 2]>,
    /// Per row, its narrow terms laid out as the groups' [`Lanes`].
    narrow: Vec<i128>,
    /// Per row and weight: the wide terms.
    wide: Vec<[i256; 2]>,
    /// The (row, weight, flag) of each weight value that is null or zero (flag 0) or bad
    /// (INVALID / OVERFLOW): the row is out of that weight's valid rows.
    outs: Vec<(u32, u32, u8)>,
    /// One cited column's rows with a code, and their groups: (row, group) in row order.
    placed: Vec<(u32, u32)>,
}

/// Sets `m` to the rows where flags `at(0..count)` of a batch are set, as a mask per row (bit
/// k for flag k).
fn mask_into(m: &mut Vec<i64>, b: &RecordBatch, count: usize, at: impl Fn(usize) -> usize) {
    m.clear();
    m.resize(b.num_rows(), 0);
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
}

/// What one weight value does to its row's sums.
enum WeightValue {
    /// Null or zero: the row leaves the base.
    Out,
    /// Negative, NaN or infinite (INVALID), or squared beyond the fixed point (OVERFLOW).
    Bad(u8),
    /// Positive and within the fixed point: its Σw and Σw² terms.
    In(f64, f64),
}

/// Row `r` of a weight column summed at `scale`, told apart.
#[inline]
fn weight_value(w: &datafusion::arrow::array::Float64Array, r: usize, scale: Scale) -> WeightValue {
    if w.is_null(r) {
        return WeightValue::Out;
    }
    let v = w.value(r);
    if v.is_nan() || v < 0.0 || v.is_infinite() {
        WeightValue::Bad(INVALID)
    } else if v > 0.0 {
        // The same f64 operations as the plan's, compared in f64 (rounding moves no term of
        // 2^52 or more, so the rounded term compares as the plan's unrounded one).
        let squared = scale.square_term(v);
        if squared < FIXED_LIMIT {
            WeightValue::In(scale.weight_term(v), squared)
        } else {
            WeightValue::Bad(OVERFLOW)
        }
    } else {
        WeightValue::Out
    }
}

/// How one batch's weights are summed.
enum Terms {
    /// In i128 at the partition's shifts ([`Scratch::narrow`]).
    Narrow,
    /// In i256 ([`Scratch::wide`]).
    Wide,
}

impl Partial {
    /// A partition's reduction of `columns` cited columns, its weights summed at `scales`, the
    /// first `squared` of them with their Σw² (the others' is left zero, [`Lanes`]).
    pub(super) fn new(columns: usize, scales: Vec<Scale>, squared: usize) -> Partial {
        Partial {
            scales,
            squared,
            rows: 0,
            row_keys: FxMap::default(),
            row_key_list: Vec::new(),
            row_key_direct: Vec::new(),
            columns: (0..columns).map(|_| Groups::default()).collect(),
            psu_names: Vec::new(),
            psu_index: HashMap::new(),
            shifts: Vec::new(),
            pending_rows: 0,
            scratch: Scratch::default(),
        }
    }

    /// The groups of one column with their sums, keyed by (period mask, cell mask, packed
    /// key, PSU index). Only after [`Partial::finish`].
    pub(super) fn groups(&self, c: usize, n_weights: usize) -> impl Iterator<Item = (GroupKey, Exact)> + '_ {
        debug_assert_eq!(self.pending_rows, 0, "a partial read before it was finished");
        let col = &self.columns[c];
        col.keys.iter().enumerate().map(move |(g, &(rk, id))| {
            let (pm, cm, psu) = self.row_key_list[rk as usize];
            let at = g * n_weights..(g + 1) * n_weights;
            let weighted = col.outs[at.clone()]
                .iter()
                .zip(&col.sums[at.clone()])
                .map(|(out, [w, w2])| (col.counts[g] - out, *w, *w2));
            let exact = Exact { n: col.counts[g], weighted: weighted.collect(), bad: col.bad[at].to_vec() };
            ((pm, cm, col.ids[id as usize], psu), exact)
        })
    }

    /// The groups made over all columns.
    fn group_count(&self) -> usize {
        self.columns.iter().map(|g| g.keys.len()).sum()
    }

    /// Flushes what is pending: the sums are then whole, for [`Partial::groups`].
    pub(super) fn finish(&mut self) {
        self.flush();
    }

    /// The layout of the groups' narrow sums.
    fn lanes(&self) -> Lanes {
        Lanes::new(self.scales.len(), self.squared)
    }

    fn flush(&mut self) {
        if self.pending_rows > 0 {
            let lanes = self.lanes();
            for g in &mut self.columns {
                g.flush(&self.shifts, lanes);
            }
        }
        self.pending_rows = 0;
        self.shifts.iter_mut().for_each(|s| *s = [None, None]);
    }

    /// Splits the batch's weights into terms, and decides whether they are summed narrow: when
    /// no row holds a bad weight and, per weight, the terms fit the pending sums' shift and
    /// bound (flushing first when they would change). Otherwise wide, the terms in i256. A null
    /// or zero weight leaves the base; a negative, NaN or infinite one, or one whose square
    /// does not fit the fixed point, flags the row's group (the jobs that select it fail,
    /// naming the weight). Either way such rows are listed in [`Scratch::outs`].
    fn terms(&mut self, ws: &[&datafusion::arrow::array::Float64Array], n: usize) -> Terms {
        let n_weights = ws.len();
        let lanes = self.lanes();
        let sc = &mut self.scratch;
        sc.split.clear();
        sc.split.resize(n * n_weights, [(0, 0); 2]);
        sc.outs.clear();
        // Per weight and kind: the lowest exponent and the highest bit of its terms.
        let mut range = vec![[None::<Shift>; 2]; n_weights];
        let mut narrow = true;
        for (i, (w, &scale)) in ws.iter().zip(&self.scales).enumerate() {
            for r in 0..n {
                let (term, square) = match weight_value(w, r, scale) {
                    WeightValue::Out => {
                        sc.outs.push((r as u32, i as u32, 0));
                        continue;
                    }
                    WeightValue::Bad(flag) => {
                        sc.outs.push((r as u32, i as u32, flag));
                        narrow = false;
                        continue;
                    }
                    WeightValue::In(term, square) => (term, square),
                };
                // A weight only taken along has no Σw² (its square still decides OVERFLOW).
                let terms = [split(term), if lanes.squares(i) { split(square) } else { (0, 0) }];
                // A positive weight counts as a valid row through its Σw term.
                narrow &= terms[0].0 != 0;
                for (k, (m, e)) in terms.into_iter().enumerate() {
                    if m != 0 {
                        let top = e + 64 - m.leading_zeros();
                        range[i][k] = Some(match range[i][k] {
                            None => Shift { shift: e, top },
                            Some(s) => Shift { shift: s.shift.min(e), top: s.top.max(top) },
                        });
                    }
                }
                sc.split[r * n_weights + i] = terms;
            }
        }
        if narrow {
            if self.shifts.len() != n_weights {
                self.flush();
                self.shifts = vec![[None, None]; n_weights];
            }
            let merged = |now: Option<Shift>, batch: Option<Shift>| match (now, batch) {
                (Some(s), Some(b)) => Some(Shift { shift: s.shift.min(b.shift), top: s.top.max(b.top) }),
                (s, b) => s.or(b),
            };
            let rows = self.pending_rows + n as u64;
            let keeps = self.shifts.iter().zip(&range).all(|(now, batch)| {
                (0..2).all(|k| {
                    let m = merged(now[k], batch[k]);
                    now[k].is_none_or(|s| Some(s.shift) == m.map(|m| m.shift))
                        && m.is_none_or(|m| fits(m, rows))
                })
            });
            if !keeps {
                self.flush();
            }
            // A fresh shift sits as low as the batch's terms and 2^ROW_BITS rows allow, so that
            // later batches seldom lower it.
            let fresh =
                |b: Shift| Shift { shift: b.shift.min(b.top.saturating_sub(NARROW_BITS - ROW_BITS)), ..b };
            let next: Vec<[Option<Shift>; 2]> = self
                .shifts
                .iter()
                .zip(&range)
                .map(|(now, batch)| {
                    [0, 1].map(|k| match now[k] {
                        Some(_) => merged(now[k], batch[k]),
                        None => batch[k].map(fresh),
                    })
                })
                .collect();
            let rows = self.pending_rows + n as u64;
            narrow = next.iter().flatten().all(|s| s.is_none_or(|s| fits(s, rows)));
            if narrow {
                self.shifts = next;
                self.pending_rows = rows;
                let sc = &mut self.scratch;
                sc.narrow.clear();
                sc.narrow.reserve(n * lanes.len());
                let term = |(m, e): (u64, u32), s: Option<Shift>| match s {
                    Some(s) if m != 0 => i128::from(m) << (e - s.shift),
                    _ => 0,
                };
                if n_weights > 0 {
                    for row in sc.split.chunks_exact(n_weights) {
                        for (i, (terms, s)) in row.iter().zip(&self.shifts).enumerate() {
                            sc.narrow.push(term(terms[0], s[0]));
                            if lanes.squares(i) {
                                sc.narrow.push(term(terms[1], s[1]));
                            }
                        }
                    }
                }
                return Terms::Narrow;
            }
        }
        let sc = &mut self.scratch;
        sc.wide.clear();
        sc.wide.resize(n * n_weights, [i256::ZERO; 2]);
        for (i, (w, &scale)) in ws.iter().zip(&self.scales).enumerate() {
            for r in 0..n {
                if let WeightValue::In(term, square) = weight_value(w, r, scale) {
                    let square = if lanes.squares(i) { fixed(square) } else { i256::ZERO };
                    sc.wide[r * n_weights + i] = [fixed(term), square];
                }
            }
        }
        Terms::Wide
    }

    /// Each row's key (period mask, cell mask, PSU) interned, into `self.scratch.row_keys`.
    fn row_keys(&mut self, b: &RecordBatch, layout: &Layout) {
        let n = b.num_rows();
        let mut sc = std::mem::take(&mut self.scratch);
        mask_into(&mut sc.period_mask, b, layout.periods, |k| layout.period(k));
        mask_into(&mut sc.cell_mask, b, layout.cells, |k| layout.cell(k));
        sc.row_keys.clear();
        if let Some((s, p)) = layout.design().map(|(s, p)| (b.column(s), b.column(p))) {
            let (s, p) = (s.as_string::<i32>(), p.as_string::<i32>());
            for r in 0..n {
                let (stratum, psu) = (text_at(s, r), text_at(p, r));
                let known = self.psu_index.get(stratum).and_then(|psus| psus.get(psu)).copied();
                let i = known.unwrap_or_else(|| {
                    let i = self.psu_names.len() as u32;
                    self.psu_names.push((stratum.to_string(), psu.to_string()));
                    self.psu_index.entry(stratum.to_string()).or_default().insert(psu.to_string(), i);
                    i
                });
                sc.row_keys.push(self.intern((sc.period_mask[r], sc.cell_mask[r], Some(i))));
            }
        } else if layout.periods + layout.cells <= ROW_KEY_BITS {
            if self.row_key_direct.is_empty() {
                self.row_key_direct = vec![NONE; 1 << (layout.periods + layout.cells)];
            }
            for (&pm, &cm) in sc.period_mask.iter().zip(&sc.cell_mask) {
                let at = (pm | cm << layout.periods) as usize;
                let i = match self.row_key_direct[at] {
                    NONE => {
                        let i = self.intern((pm, cm, None));
                        self.row_key_direct[at] = i;
                        i
                    }
                    i => i,
                };
                sc.row_keys.push(i);
            }
        } else {
            for (&pm, &cm) in sc.period_mask.iter().zip(&sc.cell_mask) {
                sc.row_keys.push(self.intern((pm, cm, None)));
            }
        }
        self.scratch = sc;
    }

    /// The index of a row key, new ones numbered in order of arrival.
    fn intern(&mut self, key: RowKey) -> u32 {
        let next = self.row_key_list.len() as u32;
        let i = *self.row_keys.entry(key).or_insert(next);
        if i == next {
            self.row_key_list.push(key);
        }
        i
    }

    /// Adds one batch of rows laid out as `layout` says: the row keys, the weights' terms, then
    /// column by column each row's group and the groups' sums.
    pub(super) fn add(&mut self, b: &RecordBatch, layout: &Layout) -> datafusion::error::Result<()> {
        if b.num_columns() != layout.width()
            || self.columns.len() != layout.columns()
            || self.scales.len() != layout.weights
        {
            return Err(datafusion::error::DataFusionError::Internal(format!(
                "a grouped batch has {} columns and {} scales, its layout {} and {} weights",
                b.num_columns(),
                self.scales.len(),
                layout.width(),
                layout.weights
            )));
        }
        let n_weights = layout.weights;
        let lanes = self.lanes();
        let ws: Vec<_> =
            (0..n_weights).map(|i| b.column(layout.weight(i)).as_primitive::<Float64Type>()).collect();
        self.rows += b.num_rows() as u64;
        let terms = self.terms(&ws, b.num_rows());
        self.row_keys(b, layout);
        let mut sc = std::mem::take(&mut self.scratch);
        let row_keys = self.row_key_list.len();
        let n = b.num_rows();
        sc.no_base.resize(n, 0);
        for (c, groups) in self.columns.iter_mut().enumerate() {
            let column = b.column(layout.code(c));
            let bits = layout.bases[c];
            if bits > 0 {
                mask_into(&mut sc.base_mask, b, bits, |k| layout.base(c, k));
            }
            let inputs = RowInputs {
                keys: &sc.row_keys,
                base_mask: if bits > 0 { &sc.base_mask } else { &sc.no_base[..n] },
                bits: bits as u32,
                row_keys,
            };
            groups.place(&mut sc.placed, &inputs, column.as_ref(), lanes).ok_or_else(|| {
                datafusion::error::DataFusionError::Internal(format!(
                    "a cited column's codes are {}, not integers",
                    column.data_type()
                ))
            })?;
            match terms {
                Terms::Narrow => groups.add_narrow(&sc.placed, &sc.narrow, lanes),
                Terms::Wide => groups.add_wide(&sc.placed, &sc.wide, n_weights),
            }
            // Rows whose weight is out or bad, in row order as `placed` is: few, found by search.
            for &(r, i, flag) in &sc.outs {
                if let Ok(p) = sc.placed.binary_search_by_key(&r, |&(row, _)| row) {
                    let at = sc.placed[p].1 as usize * n_weights + i as usize;
                    groups.outs[at] += 1;
                    groups.bad[at] |= flag;
                }
            }
        }
        self.scratch = sc;
        Ok(())
    }
}

/// The in-process reduction's kernel alone, for `benches/kernel.rs` (not an API): `batches`
/// reduced as one partition's task reduces them, into exact sums per group. Each batch is laid
/// out as the grouped projection is: `periods` period flags and `cells` cell flags (Boolean),
/// then per cited column its code (any integer type but UInt64) followed by its `bases[c]` base flags (Boolean), then
/// `weights` weights (Float64); no design. Each weight is summed at the scale of its largest
/// value in `batches`, as a scan measures it. Returns the rows read and the groups made over
/// all columns. A batch of another width is an error; columns of other types panic.
#[doc(hidden)]
pub fn reduce_batches(
    batches: &[RecordBatch],
    periods: usize,
    cells: usize,
    bases: &[usize],
    weights: usize,
) -> datafusion::error::Result<(u64, usize)> {
    let layout = Layout::new(periods, cells, bases.to_vec(), weights, false);
    let mut part = Partial::new(bases.len(), scales_of(batches, &layout), weights);
    for b in batches {
        part.add(b, &layout)?;
    }
    part.finish();
    Ok((part.rows, part.group_count()))
}

/// Each weight's [`Scale`] from its largest summed value in `batches` (laid out as `layout`),
/// as `Engine::weight_scales` measures it over a table.
fn scales_of(batches: &[RecordBatch], layout: &Layout) -> Vec<Scale> {
    (0..layout.weights)
        .map(|i| {
            let summed = batches
                .iter()
                .filter(|b| b.num_columns() == layout.width())
                .flat_map(|b| b.column(layout.weight(i)).as_primitive::<Float64Type>().iter().flatten())
                .filter(|v| *v > 0.0 && *v < super::LARGEST_WEIGHT);
            Scale::of(summed.fold(f64::NAN, f64::max))
        })
        .collect()
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
        let mut part = Partial::new(1, Vec::new(), 0);
        part.add(&batch, &layout).unwrap();
        part.finish();
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

    #[test]
    fn codes_stored_narrow_make_the_groups_and_sums_of_the_same_codes_as_int64() {
        use datafusion::arrow::array::{Float64Array, Int8Array, UInt16Array};
        // One period flag, one cited column with one base flag, one weight.
        let layout = Layout::new(1, 0, vec![1], 1, false);
        let values = [Some(1), None, Some(5), Some(1), Some(-2), Some(127)];
        let period: ArrayRef = Arc::new(BooleanArray::from(vec![true, true, false, true, true, true]));
        let base: ArrayRef = Arc::new(BooleanArray::from(vec![true, true, true, false, true, true]));
        let weight: ArrayRef = Arc::new(Float64Array::from(vec![0.5, 1.0, 2.0, 1e-9, 3.25, 7.0]));
        let wide: ArrayRef = Arc::new(Int64Array::from(values.map(|v| v.map(i64::from)).to_vec()));
        let narrow: ArrayRef = Arc::new(Int8Array::from(values.map(|v| v.map(|x: i32| x as i8)).to_vec()));
        let groups = |codes: &ArrayRef| {
            let cols = [
                ("p0", period.clone()),
                ("x0", codes.clone()),
                ("b0_0", base.clone()),
                ("w0", weight.clone()),
            ];
            let batch = RecordBatch::try_from_iter(cols).unwrap();
            let mut part = Partial::new(1, scales_of(std::slice::from_ref(&batch), &layout), 1);
            part.add(&batch, &layout).unwrap();
            part.finish();
            let mut g: Vec<_> = part.groups(0, 1).map(|(k, s)| (k, s.n, s.weighted, s.bad)).collect();
            g.sort_by_key(|(k, ..)| *k);
            g
        };
        let expected = groups(&wide);
        // Code 1 in the base and out of it, 5 outside the period (a group of its own), -2, 127.
        assert_eq!(expected.len(), 5);
        assert!(groups(&narrow) == expected);
        // Unsigned, and past i8's range.
        let unsigned: ArrayRef =
            Arc::new(UInt16Array::from(vec![Some(300), Some(300), None, Some(65535), None, Some(0)]));
        let keys: Vec<i64> = groups(&unsigned).iter().map(|((_, _, key, _), ..)| *key >> 1).collect();
        // 300 twice in one group, 65535 outside the base, 0.
        assert_eq!(keys, [0, 300, 65535]);
    }

    /// A group's (period mask, cell mask, packed key).
    type Key = (i64, i64, i64);

    /// Reference sums of one column's rows, straight from the definition: per (period mask,
    /// packed key), each row's `fixed` terms at its weight's scale added in i256, its flags
    /// OR-ed.
    fn reference(batches: &[RecordBatch], scales: &[Scale]) -> Vec<(Key, u64, Vec<Fixed>, Vec<u8>)> {
        let mut out: HashMap<Key, (u64, Vec<Fixed>, Vec<u8>)> = HashMap::new();
        for b in batches {
            let period = b.column(0).as_boolean();
            let codes = b.column(1).as_primitive::<Int64Type>();
            let base = b.column(2).as_boolean();
            for r in 0..b.num_rows() {
                if codes.is_null(r) {
                    continue;
                }
                let key = (i64::from(period.value(r)), 0, pack(codes.value(r), 1, i64::from(base.value(r))));
                let e = out.entry(key).or_insert_with(|| (0, vec![ZERO; 2], vec![0; 2]));
                e.0 += 1;
                for (i, scale) in scales.iter().enumerate() {
                    let w = b.column(3 + i).as_primitive::<Float64Type>();
                    if w.is_null(r) {
                        continue;
                    }
                    let v = w.value(r);
                    if v.is_nan() || v < 0.0 || v.is_infinite() {
                        e.2[i] |= INVALID;
                    } else if v > 0.0 {
                        let (w, w2) = (scale.weight_term(v), scale.square_term(v));
                        if w2 >= FIXED_LIMIT {
                            e.2[i] |= OVERFLOW;
                        } else {
                            e.2[i] |= add_fixed(&mut e.1[i], &(1, fixed(w), fixed(w2)));
                        }
                    }
                }
            }
        }
        let mut out: Vec<_> = out.into_iter().map(|(k, (n, w, bad))| (k, n, w, bad)).collect();
        out.sort_by_key(|g| g.0);
        out
    }

    #[test]
    fn narrow_and_wide_batches_sum_to_the_same_integers_as_the_definition() {
        // Rows of one period flag, one column with one base flag, two weights; batches whose
        // weights lower the narrow shift (×1e-9 after ×1), span too many binary orders for it
        // (1e-12 to 1e9: summed wide), hold nulls and zeros, or a negative weight (wide,
        // INVALID), interleaved so that pending narrow sums meet wide ones; then codes spread
        // too far for the direct lookup, so the last batches find their groups by hashing.
        let mut seed = 0x5eed_u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            seed >> 11
        };
        // `spread`: a few codes far from the rest, so the direct lookup (beyond DIRECT_LIMIT)
        // turns off and later rows find their groups through the window and maps.
        let mut batch = |n: usize, spread: bool, weight: &mut dyn FnMut(u64) -> Option<f64>| {
            let period: ArrayRef =
                Arc::new(BooleanArray::from((0..n).map(|_| next() % 2 == 0).collect::<Vec<_>>()));
            let mut code = || match next() % 50 {
                0..=4 => None,
                5 if spread => Some(3_000_000 + (next() % 3) as i64),
                _ => Some((next() % 7) as i64 - 2),
            };
            let codes: ArrayRef = Arc::new(Int64Array::from((0..n).map(|_| code()).collect::<Vec<_>>()));
            let base: ArrayRef =
                Arc::new(BooleanArray::from((0..n).map(|_| next() % 3 != 0).collect::<Vec<_>>()));
            let w: Vec<ArrayRef> = (0..2)
                .map(|_| {
                    Arc::new(datafusion::arrow::array::Float64Array::from(
                        (0..n).map(|_| weight(next())).collect::<Vec<_>>(),
                    )) as ArrayRef
                })
                .collect();
            RecordBatch::try_from_iter([
                ("p0", period),
                ("x0", codes),
                ("b0_0", base),
                ("w0", w[0].clone()),
                ("w1", w[1].clone()),
            ])
            .unwrap()
        };
        let unit = |x: u64| (x % 1_000_000) as f64 / 1e6;
        let batches = vec![
            batch(1000, false, &mut |x| Some(0.2 + 3.0 * unit(x))),
            batch(700, false, &mut |x| Some((0.2 + 3.0 * unit(x)) * 1e-9)),
            batch(900, false, &mut |x| Some(10f64.powi((x % 22) as i32 - 12) * (1.0 + unit(x)))),
            batch(500, false, &mut |x| match x % 5 {
                0 => None,
                1 => Some(0.0),
                _ => Some(1234.5 * unit(x) + 1.0),
            }),
            batch(300, false, &mut |x| Some(if x % 97 == 0 { -1.0 } else { unit(x) + 0.5 })),
            batch(800, false, &mut |x| Some(0.5 + unit(x))),
            batch(600, true, &mut |x| Some(if x % 5 == 0 { 0.0 } else { unit(x) + 0.5 })),
            batch(400, false, &mut |x| Some(0.25 + unit(x))),
        ];
        let layout = Layout::new(1, 0, vec![1], 2, false);
        let scales = scales_of(&batches, &layout);
        let want = reference(&batches, &scales);
        // Both weights with their squares; then the second taken along, its Σw² not summed:
        // every other sum and flag the same.
        for squared in [2, 1] {
            let mut part = Partial::new(1, scales.clone(), squared);
            for b in &batches {
                part.add(b, &layout).unwrap();
            }
            part.finish();
            let mut got: Vec<_> = part
                .groups(0, 2)
                .map(|((pm, cm, key, _), e)| ((pm, cm, key), e.n, e.weighted, e.bad))
                .collect();
            got.sort_by_key(|g| g.0);
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                let mut w = w.clone();
                if squared == 1 {
                    w.2[1].2 = i256::ZERO;
                }
                assert_eq!(*g, w, "group {:?}, {squared} squared", g.0);
            }
            assert!(part.columns[0].direct_off, "the spread codes turned the direct lookup off");
        }
        assert!(want.iter().any(|g| g.3.contains(&INVALID)), "the negative weight is flagged");
        assert!(want.iter().any(|g| g.0.2 >> 1 >= 3_000_000), "the spread codes have groups");
    }

    #[test]
    fn split_terms_are_the_fixed_point_integers() {
        // Weights over 49 decimal orders below a largest of 2e9, and over 60 up to 2^200.
        for (smallest, largest) in [(1e-40, 2e9), (1.0, 2f64.powi(200))] {
            let scale = Scale::of(largest);
            let mut v = smallest;
            while v < largest {
                for x in [v, v * 1.37, v * 0.999_999_9] {
                    for t in [scale.weight_term(x), scale.square_term(x)] {
                        let (m, e) = split(t);
                        assert_eq!(i256::from_i128(i128::from(m)) << (e as u8), fixed(t), "weight {x:e}");
                        assert!(m == 0 || m % 2 == 1);
                    }
                }
                v *= 3.1;
            }
        }
        assert_eq!(split(0.0), (0, 0));
    }

    #[test]
    fn a_weight_at_or_beyond_2_to_256_is_overflow_and_the_largest_below_fits() {
        use datafusion::arrow::array::Float64Array;
        let below = 2f64.powi(256) * (1.0 - f64::EPSILON);
        let w = Float64Array::from(vec![below, 2f64.powi(256), 1e300, 1.0]);
        let scale = Scale::of(below);
        assert!(matches!(weight_value(&w, 0, scale), WeightValue::In(..)));
        assert!(matches!(weight_value(&w, 1, scale), WeightValue::Bad(OVERFLOW)));
        assert!(matches!(weight_value(&w, 2, scale), WeightValue::Bad(OVERFLOW)));
        // A weight above the largest measured (the data changed under the scan) is refused too.
        assert!(matches!(weight_value(&w, 0, Scale::of(1.0)), WeightValue::Bad(OVERFLOW)));
        // Beside weights near 2^256, a weight of 1 is 2^-64 units: it rounds to nothing.
        let WeightValue::In(t, t2) = weight_value(&w, 3, scale) else { panic!("1 is a valid weight") };
        assert_eq!((t, t2), (0.0, 0.0));
    }
}
