//! Raking (iterative proportional fitting) of cell weights to marginal population targets.

/// Stop when every weighted margin share is within this of its target.
pub const RAKE_TOLERANCE: f64 = 1e-9;
/// Stop after this many full cycles over the margins, converged or not.
pub const RAKE_MAX_ITERATIONS: usize = 100;

/// One raking margin: the category of every cell, and the population share of every category.
#[derive(Debug, Clone, Copy)]
pub struct Margin<'a> {
    /// `category_of_cell[c]` is the category (index into `targets`) that cell `c` belongs to.
    pub category_of_cell: &'a [usize],
    /// Population shares by category; they must be positive and sum to 1.
    pub targets: &'a [f64],
}

/// Margins that cannot be raked to.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RakeError {
    /// No respondents at all.
    #[error("cannot rake an empty sample")]
    Empty,
    /// A margin whose cell categories do not cover the cells.
    #[error("margin {margin}: {categories} cell categories for {cells} cells")]
    Cells {
        /// The margin's index.
        margin: usize,
        /// Cell categories it gives.
        categories: usize,
        /// Cells counted.
        cells: usize,
    },
    /// Targets that are not positive shares summing to 1.
    #[error("margin {margin}: targets must be positive and sum to 1 (sum {sum})")]
    Targets {
        /// The margin's index.
        margin: usize,
        /// What they sum to.
        sum: f64,
    },
    /// A cell in a category with no target.
    #[error("margin {margin}: cell {cell} has category {category}, beyond the {targets} targets")]
    Category {
        /// The margin's index.
        margin: usize,
        /// The cell.
        cell: usize,
        /// Its category.
        category: usize,
        /// Targets declared.
        targets: usize,
    },
    /// A category with a target and no respondents.
    #[error("margin {margin}: no respondents in category {category}, which has a population target")]
    NoRespondents {
        /// The margin's index.
        margin: usize,
        /// The empty category.
        category: usize,
    },
}

/// The result of [`rake`].
#[derive(Debug, Clone, PartialEq)]
pub struct Raking {
    /// The weight of one respondent in each cell, normalised so the mean respondent weight is 1.
    pub weights: Vec<f64>,
    /// Full cycles over the margins that were run.
    pub iterations: usize,
    /// The largest |weighted share − target| over all margins at the end.
    pub max_error: f64,
}

/// Rakes respondent weights to the margins.
///
/// Raking only ever multiplies weights by a factor per category, so every respondent of one cell
/// (one combination of categories) ends with the same weight: raking the cell counts is exactly
/// raking the respondents, at the cost of the number of cells instead of the number of rows.
/// `counts[c]` is the number of respondents in cell `c`.
pub fn rake(counts: &[f64], margins: &[Margin<'_>]) -> Result<Raking, RakeError> {
    let total: f64 = counts.iter().sum();
    if total <= 0.0 {
        return Err(RakeError::Empty);
    }
    for (m, margin) in margins.iter().enumerate() {
        if margin.category_of_cell.len() != counts.len() {
            return Err(RakeError::Cells {
                margin: m,
                categories: margin.category_of_cell.len(),
                cells: counts.len(),
            });
        }
        let sum: f64 = margin.targets.iter().sum();
        if (sum - 1.0).abs() > 1e-9 || margin.targets.iter().any(|t| !t.is_finite() || *t <= 0.0) {
            return Err(RakeError::Targets { margin: m, sum });
        }
        let mut present = vec![0.0; margin.targets.len()];
        for (c, &k) in margin.category_of_cell.iter().enumerate() {
            if k >= present.len() {
                return Err(RakeError::Category { margin: m, cell: c, category: k, targets: present.len() });
            }
            present[k] += counts[c];
        }
        if let Some(k) = present.iter().position(|n| *n <= 0.0) {
            return Err(RakeError::NoRespondents { margin: m, category: k });
        }
    }

    let mut weights = vec![1.0; counts.len()];
    let mut iterations = 0;
    let mut max_error = margin_error(counts, &weights, margins, total);
    while max_error >= RAKE_TOLERANCE && iterations < RAKE_MAX_ITERATIONS {
        for margin in margins {
            let totals = weighted_totals(counts, &weights, margin);
            let factors: Vec<f64> =
                totals.iter().zip(margin.targets).map(|(t, target)| target * total / t).collect();
            for (w, &k) in weights.iter_mut().zip(margin.category_of_cell) {
                *w *= factors[k];
            }
        }
        iterations += 1;
        max_error = margin_error(counts, &weights, margins, total);
    }

    let weighted: f64 = counts.iter().zip(&weights).map(|(n, w)| n * w).sum();
    let scale = total / weighted;
    weights.iter_mut().for_each(|w| *w *= scale);
    let max_error = margin_error(counts, &weights, margins, total);
    Ok(Raking { weights, iterations, max_error })
}

fn weighted_totals(counts: &[f64], weights: &[f64], margin: &Margin<'_>) -> Vec<f64> {
    let mut totals = vec![0.0; margin.targets.len()];
    for ((n, w), &k) in counts.iter().zip(weights).zip(margin.category_of_cell) {
        totals[k] += n * w;
    }
    totals
}

fn margin_error(counts: &[f64], weights: &[f64], margins: &[Margin<'_>], total: f64) -> f64 {
    margins
        .iter()
        .flat_map(|m| {
            weighted_totals(counts, weights, m)
                .into_iter()
                .zip(m.targets)
                .map(|(t, target)| (t / total - target).abs())
                .collect::<Vec<_>>()
        })
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_by_two_hits_both_margins() {
        // cells: (row, col) = (0,0) (0,1) (1,0) (1,1)
        let counts = [40.0, 10.0, 20.0, 30.0];
        let rows = [0, 0, 1, 1];
        let cols = [0, 1, 0, 1];
        let r = rake(
            &counts,
            &[
                Margin { category_of_cell: &rows, targets: &[0.3, 0.7] },
                Margin { category_of_cell: &cols, targets: &[0.5, 0.5] },
            ],
        )
        .unwrap();
        assert!(r.max_error < RAKE_TOLERANCE, "{r:?}");
        let mean = counts.iter().zip(&r.weights).map(|(n, w)| n * w).sum::<f64>() / 100.0;
        assert!((mean - 1.0).abs() < 1e-12);
    }

    #[test]
    fn empty_category_is_an_error() {
        let err = rake(&[5.0, 0.0], &[Margin { category_of_cell: &[0, 1], targets: &[0.5, 0.5] }]);
        assert!(err.is_err());
    }
}
