//! Weights: the bound recite sums under, the checks both plans make of a weighted job's sums,
//! and a declared weight proved against a table (`catalog check`).

use std::path::Path;

use datafusion::arrow::datatypes::DataType;
use datafusion::functions_aggregate::expr_fn::{max, sum};
use datafusion::logical_expr::Expr;
use datafusion::prelude::{cast, ident, lit, when};

use super::{Engine, EngineError, Sums, grouped, remote, value_at};

/// The first weight recite does not sum ([`grouped::LARGEST_WEIGHT`]), in words. Sums scale
/// with each column's largest weight, so any magnitude below is summed as exactly; the bound
/// keeps w², Σw² and the statistics made of them far inside f64.
const LARGEST_WEIGHT: &str = "2^256 (≈ 1.2·10^77)";

/// Checks a weighted job's sums, the same way in both plans, so a claim's verdict never
/// depends on which plan its batch took. (Rows whose weight is too large fail first, in both
/// plans; this catches a sum that is NaN or infinite.)
pub(super) fn check_weight_sums(weight: Option<&str>, sums: &Sums) -> Result<(), EngineError> {
    let Some(w) = weight else { return Ok(()) };
    let total = sums.totals.first().copied().unwrap_or(0.0);
    let squares = sums.moments.get(&(0, 0)).copied().unwrap_or(0.0);
    if !total.is_finite() || !squares.is_finite() {
        return Err(overflow(w));
    }
    Ok(())
}

pub(super) fn overflow(weight: &str) -> EngineError {
    EngineError::Weight {
        weight: weight.to_string(),
        error: format!(
            "is too large: some value among the claim's base rows is not under {LARGEST_WEIGHT}, \
             the largest weight recite sums"
        ),
    }
}

pub(super) fn invalid_weight(weight: &str) -> EngineError {
    EngineError::Weight {
        weight: weight.to_string(),
        error: "has negative, NaN or infinite values among the claim's base rows".to_string(),
    }
}

/// A weight's check from its values over the table ([`Engine::check_weights`]): the count of
/// bad values and the largest of the others.
fn weight_verdict(bad: f64, largest: f64) -> Result<(), WeightCheckError> {
    if bad > 0.0 {
        return Err(WeightCheckError::Bad(bad));
    }
    // The same comparison as both plans' (a weight of 2^256 or more is OVERFLOW).
    if largest < grouped::LARGEST_WEIGHT {
        return Ok(());
    }
    Err(WeightCheckError::TooLarge(largest))
}

/// Why a declared weight cannot weigh claims ([`Engine::check_weight`]); worded to follow "weight
/// NAME".
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WeightCheckError {
    /// Negative, NaN or infinite values (how many).
    #[error("has {0} negative, NaN or infinite value(s): claims whose base includes them are UNVERIFIABLE")]
    Bad(f64),
    /// A value of 2^256 or more (the largest).
    #[error(
        "is too large: its largest value is {0:e}, not under {LARGEST_WEIGHT}, the largest \
         weight recite sums; claims whose base includes it would be UNVERIFIABLE"
    )]
    TooLarge(f64),
    /// The column could not be scanned as numbers (the scan's words).
    #[error("{0}")]
    Unreadable(String),
}

/// A weight value no weight may have: negative, NaN or infinite. (Arrow orders floats totally,
/// NaN above +∞, so `> f64::MAX` catches NaN and +∞; `≠ itself` catches NaN under IEEE order
/// too, and `< -0.0` keeps -0.0 a zero.)
pub(super) fn bad_weight(w: &Expr) -> Expr {
    w.clone()
        .is_not_null()
        .and(w.clone().lt(lit(-0.0)).or(w.clone().gt(lit(f64::MAX))).or(w.clone().not_eq(w.clone())))
}

impl Engine {
    /// Proves a declared weight against a table (used by `catalog check`): its values read as
    /// numbers, none is negative, NaN or infinite, and every one is under 2^256 (so no base of
    /// the table holds a weight recite does not sum).
    pub fn check_weight(&self, location: &Path, weight: &str) -> Result<(), WeightCheckError> {
        self.check_weights(location, &[weight]).remove(0)
    }

    /// [`Engine::check_weight`] for several weights of one table (a table's replicate weights)
    /// in one scan; when that scan fails (a column that cannot be read as numbers), each weight
    /// is checked alone, so the error names the one at fault.
    pub fn check_weights(&self, location: &Path, weights: &[&str]) -> Vec<Result<(), WeightCheckError>> {
        match self.weight_sums(location, weights) {
            Ok(sums) => sums.into_iter().map(|(bad, largest)| weight_verdict(bad, largest)).collect(),
            Err(e) if weights.len() == 1 => vec![Err(WeightCheckError::Unreadable(e))],
            Err(_) => weights.iter().map(|w| self.check_weight(location, w)).collect(),
        }
    }

    /// Per weight, over the whole table: the count of negative, NaN or infinite values, and the
    /// largest of the others. One scan.
    pub(super) fn weight_sums(&self, location: &Path, weights: &[&str]) -> Result<Vec<(f64, f64)>, String> {
        let reg = self.register(location).map_err(|e| e.to_string())?;
        let mut exprs = Vec::with_capacity(2 * weights.len());
        for weight in weights {
            let w = cast(ident(*weight), DataType::Float64);
            let positive = w.clone().gt(lit(0.0)).and(std::ops::Not::not(bad_weight(&w)));
            exprs.push(sum(when(bad_weight(&w), lit(1i64))
                .otherwise(lit(0i64))
                .map_err(|e| e.to_string())?));
            exprs.push(max(when(positive, w.clone()).end().map_err(|e| e.to_string())?));
        }
        let batches = self
            .run_on(&reg.ctx, async {
                let df = reg.ctx.table(reg.name.as_str()).await?;
                let exprs: Vec<Expr> =
                    exprs.into_iter().enumerate().map(|(i, e)| e.alias(format!("a{i}"))).collect();
                df.aggregate(vec![], exprs)?.collect().await
            })
            .map_err(|e| match remote::cluster_fault(&e) {
                Some(fault) => fault.to_string(),
                None => format!("cannot be read as numbers: {}", e.strip_backtrace()),
            })?;
        let mut sums = vec![(0.0, 0.0); weights.len()];
        for b in &batches {
            for r in 0..b.num_rows() {
                for (i, (bad, largest)) in sums.iter_mut().enumerate() {
                    *bad += value_at(b.column(2 * i), r);
                    *largest = f64::max(*largest, value_at(b.column(2 * i + 1), r));
                }
            }
        }
        Ok(sums)
    }
}
