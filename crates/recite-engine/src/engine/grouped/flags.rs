//! The grouped scan's projection: flags shared across jobs, and where each value sits in the
//! projected batches. DataFusion evaluates each flag once per row as a plain boolean column;
//! the masks and packed keys are built from those bits in the reduction ([`pack`]), where
//! they cost a few machine instructions a row instead of a `CASE` array each.

use std::collections::HashMap;

use datafusion::logical_expr::Expr;

use super::{MAX_CODE, MAX_FLAGS, OUT_OF_RANGE, Unplanned};

/// The packed key of a cited column's code: `code·2^bits + base mask` for a code within
/// ±2^42, [`OUT_OF_RANGE`] beyond. A null code has no key (the row is not in that column's base).
#[inline]
pub(super) fn pack(code: i64, bits: u32, base_mask: i64) -> i64 {
    if code < MAX_CODE && code > -MAX_CODE { code * (1i64 << bits) + base_mask } else { OUT_OF_RANGE }
}

/// A packed key's code and base mask (the inverse of [`pack`], negative codes included).
pub(super) fn unpack(key: i64, bits: i64) -> (i64, i64) {
    (key >> bits, key & ((1i64 << bits) - 1))
}

/// Flags shared across jobs: the same filter is one bit.
#[derive(Default, Clone)]
pub(super) struct Flags {
    pub(super) exprs: Vec<Expr>,
    pub(super) index: HashMap<Expr, usize>,
    /// The flags of a scan already run: a filter not among them has no bit.
    pub(super) frozen: bool,
}

impl Flags {
    /// The bit of a filter, a new one when it is new; [`Unplanned::Full`] when the mask is
    /// full, or the flags are frozen and the filter not among them.
    pub(super) fn bit(&mut self, e: Expr) -> Result<usize, Unplanned> {
        if let Some(&i) = self.index.get(&e) {
            return Ok(i);
        }
        if self.frozen || self.exprs.len() >= MAX_FLAGS {
            return Err(Unplanned::Full);
        }
        self.exprs.push(e.clone());
        self.index.insert(e, self.exprs.len() - 1);
        Ok(self.exprs.len() - 1)
    }

    /// The flags as boolean columns named `{prefix}{k}`: a filter that is NULL on a row is
    /// false there (as in SQL's WHERE), so the columns carry no nulls.
    pub(super) fn columns(&self, prefix: &str) -> Vec<Expr> {
        self.exprs
            .iter()
            .enumerate()
            .map(|(k, e)| e.clone().is_true().alias(format!("{prefix}{k}")))
            .collect()
    }
}

/// Where each value sits in the grouped scan's projection, which is built in this order: the
/// period flags, the cell flags, per cited column its code and its base flags, one value per
/// weight, and the design's stratum and PSU. The reduction reads the batches by these indices.
#[derive(Debug, Clone)]
pub(super) struct Layout {
    /// Period flags.
    pub(super) periods: usize,
    /// Cell flags.
    pub(super) cells: usize,
    /// Per cited column, its base flags.
    pub(super) bases: Vec<usize>,
    /// Weights.
    pub(super) weights: usize,
    /// Whether the table has a design (stratum and PSU last).
    pub(super) design: bool,
    /// Per cited column, where its code sits (its base flags follow it).
    codes: Vec<usize>,
}

impl Layout {
    /// The layout of these flags, columns and weights.
    pub(super) fn new(
        periods: usize,
        cells: usize,
        bases: Vec<usize>,
        weights: usize,
        design: bool,
    ) -> Layout {
        let mut at = periods + cells;
        let codes = bases
            .iter()
            .map(|b| {
                at += 1 + b;
                at - 1 - b
            })
            .collect();
        Layout { periods, cells, bases, weights, design, codes }
    }

    /// Period flag `k`.
    pub(super) fn period(&self, k: usize) -> usize {
        k
    }

    /// Cell flag `k`.
    pub(super) fn cell(&self, k: usize) -> usize {
        self.periods + k
    }

    /// The code of cited column `c`.
    pub(super) fn code(&self, c: usize) -> usize {
        self.codes[c]
    }

    /// Base flag `k` of cited column `c`.
    pub(super) fn base(&self, c: usize, k: usize) -> usize {
        self.codes[c] + 1 + k
    }

    /// Cited columns.
    pub(super) fn columns(&self) -> usize {
        self.bases.len()
    }

    /// Weight `i`.
    pub(super) fn weight(&self, i: usize) -> usize {
        self.periods + self.cells + self.bases.iter().map(|b| 1 + b).sum::<usize>() + i
    }

    /// The stratum and PSU, with a design.
    pub(super) fn design(&self) -> Option<(usize, usize)> {
        let at = self.weight(self.weights);
        self.design.then_some((at, at + 1))
    }

    /// Columns in all.
    pub(super) fn width(&self) -> usize {
        self.weight(self.weights) + if self.design { 2 } else { 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::super::MAX_BASE_BITS;
    use super::*;

    #[test]
    fn key_packing_keeps_negative_codes_and_base_masks() {
        let codes = [-(MAX_CODE - 1), -300, -3, -1, 0, 1, 5, MAX_CODE - 1];
        for bits in [0, 1, 5, MAX_BASE_BITS as u32] {
            for mask in [0, 1 % (1 << bits), (1 << bits) - 1] {
                for code in codes {
                    let key = pack(code, bits, mask);
                    assert_ne!(key, OUT_OF_RANGE);
                    assert_eq!(unpack(key, i64::from(bits)), (code, mask), "code {code}, {bits} base bits");
                }
            }
        }
    }

    #[test]
    fn key_packing_marks_codes_beyond_the_bound() {
        let bits = MAX_BASE_BITS as u32;
        let mask = (1 << bits) - 1;
        for code in [MAX_CODE, -MAX_CODE, i64::MAX, i64::MIN] {
            assert_eq!(pack(code, bits, mask), OUT_OF_RANGE, "code {code}");
        }
        // No code in range packs to the marker, even at the widest mask.
        assert_ne!(pack(-(MAX_CODE - 1), bits, 0), OUT_OF_RANGE);
        assert_eq!(pack(7, 3, 5), 7 * 8 + 5);
    }

    #[test]
    fn layout_addresses_every_projected_column_once() {
        let layout = Layout::new(3, 2, vec![0, 2, 1], 2, true);
        let mut at: Vec<usize> = (0..3).map(|k| layout.period(k)).collect();
        at.extend((0..2).map(|k| layout.cell(k)));
        for (c, &b) in layout.bases.iter().enumerate() {
            at.push(layout.code(c));
            at.extend((0..b).map(|k| layout.base(c, k)));
        }
        at.extend((0..2).map(|i| layout.weight(i)));
        let (s, p) = layout.design().unwrap();
        at.extend([s, p]);
        assert_eq!(at, (0..layout.width()).collect::<Vec<_>>());
    }
}
