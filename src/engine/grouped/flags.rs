//! The grouped scan's projection: flags shared across jobs, the masks and packed keys DataFusion
//! computes, and where each value sits in the projected batches.

use std::collections::HashMap;

use datafusion::logical_expr::Expr;
use datafusion::prelude::{lit, when};

use super::{MAX_CODE, MAX_FLAGS, OUT_OF_RANGE, Unplanned};
use crate::engine::EngineError;

/// The packed key of a cited column's code: `code·2^bits + base mask` for a code within ±2^42,
/// [`OUT_OF_RANGE`] beyond, null for a null code (the row is not in that column's base).
pub(super) fn key_expr(code: Expr, bits: i64, base_mask: Expr) -> Result<Expr, EngineError> {
    let in_range =
        code.clone().is_not_null().and(code.clone().lt(lit(MAX_CODE))).and(code.clone().gt(lit(-MAX_CODE)));
    when(in_range, code.clone() * lit(1i64 << bits) + base_mask)
        .when(code.is_not_null(), lit(OUT_OF_RANGE))
        .end()
        .map_err(|e| EngineError::Internal(e.strip_backtrace()))
}

/// A packed key's code and base mask (the inverse of [`key_expr`], negative codes included).
pub(super) fn unpack(key: i64, bits: i64) -> (i64, i64) {
    (key >> bits, key & ((1i64 << bits) - 1))
}

/// Flags shared across jobs: the same filter is one bit.
#[derive(Default)]
pub(super) struct Flags {
    pub(super) exprs: Vec<Expr>,
    pub(super) index: HashMap<Expr, usize>,
}

impl Flags {
    pub(super) fn bit(&mut self, e: Expr) -> Result<usize, Unplanned> {
        if let Some(&i) = self.index.get(&e) {
            return Ok(i);
        }
        if self.exprs.len() >= MAX_FLAGS {
            return Err(Unplanned::Full);
        }
        self.exprs.push(e.clone());
        self.index.insert(e, self.exprs.len() - 1);
        Ok(self.exprs.len() - 1)
    }

    /// Σ CASE WHEN flag THEN 2^k ELSE 0 END.
    pub(super) fn mask(&self) -> Result<Expr, EngineError> {
        let mut m = lit(0i64);
        for (k, e) in self.exprs.iter().enumerate() {
            m = m + when(e.clone(), lit(1i64 << k))
                .otherwise(lit(0i64))
                .map_err(|e| EngineError::Internal(e.strip_backtrace()))?;
        }
        Ok(m)
    }
}

/// Where each value sits in the grouped scan's projection, which is built in this order: the
/// period mask, the cell mask, one packed key per cited column, one value per weight, and the
/// design's stratum and PSU. The reduction reads the batches by these indices.
#[derive(Debug, Clone, Copy)]
pub(super) struct Layout {
    /// Cited columns (one key each).
    pub(super) columns: usize,
    /// Weights.
    pub(super) weights: usize,
    /// Whether the table has a design (stratum and PSU last).
    pub(super) design: bool,
}

impl Layout {
    /// The period mask.
    pub(super) const PERIODS: usize = 0;
    /// The cell mask.
    pub(super) const CELLS: usize = 1;

    /// The packed key of cited column `c`.
    pub(super) fn key(&self, c: usize) -> usize {
        2 + c
    }

    /// Weight `i`.
    pub(super) fn weight(&self, i: usize) -> usize {
        2 + self.columns + i
    }

    /// The stratum and PSU, with a design.
    pub(super) fn design(&self) -> Option<(usize, usize)> {
        let at = 2 + self.columns + self.weights;
        self.design.then_some((at, at + 1))
    }

    /// Columns in all.
    pub(super) fn width(&self) -> usize {
        2 + self.columns + self.weights + if self.design { 2 } else { 0 }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch};
    use datafusion::arrow::datatypes::Int64Type;
    use datafusion::prelude::ident;
    use datafusion::prelude::SessionContext;

    use super::super::MAX_BASE_BITS;
    use super::*;

    /// The keys DataFusion computes for `codes` with `bits` base flags, all set to `mask`.
    fn keys(codes: &[Option<i64>], bits: i64, mask: i64) -> Vec<Option<i64>> {
        let column: ArrayRef = Arc::new(Int64Array::from(codes.to_vec()));
        let batch = RecordBatch::try_from_iter([("x", column)]).unwrap();
        let key = key_expr(ident("x"), bits, lit(mask)).unwrap().alias("k");
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let out = rt.block_on(async {
            SessionContext::new()
                .read_batch(batch)
                .unwrap()
                .select(vec![key])
                .unwrap()
                .collect()
                .await
                .unwrap()
        });
        out.iter()
            .flat_map(|b| {
                let k = b.column(0).as_primitive::<Int64Type>().clone();
                (0..b.num_rows()).map(move |r| (!k.is_null(r)).then(|| k.value(r)))
            })
            .collect()
    }

    #[test]
    fn key_packing_keeps_negative_codes_and_base_masks() {
        let codes = [-(MAX_CODE - 1), -300, -3, -1, 0, 1, 5, MAX_CODE - 1];
        for bits in [0, 1, 5, MAX_BASE_BITS as i64] {
            for mask in [0, 1 % (1 << bits), (1 << bits) - 1] {
                let got = keys(&codes.map(Some), bits, mask);
                for (code, key) in codes.iter().zip(got) {
                    let key = key.expect("a code in range has a key");
                    assert_ne!(key, OUT_OF_RANGE);
                    assert_eq!(unpack(key, bits), (*code, mask), "code {code}, {bits} base bits");
                }
            }
        }
    }

    #[test]
    fn key_packing_marks_codes_beyond_the_bound_and_leaves_nulls_out() {
        let got =
            keys(&[Some(MAX_CODE), Some(-MAX_CODE), Some(i64::MAX), Some(i64::MIN), None, Some(7)], 3, 5);
        let out = Some(OUT_OF_RANGE);
        assert_eq!(got, [out, out, out, out, None, Some(7 * 8 + 5)]);
    }
}
