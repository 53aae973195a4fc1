//! A table's columns as `catalog init` sees them, in one scan ([`Engine::profile`]).

use std::path::Path;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{DataType, Float64Type};

use super::Engine;

/// One column of a table as `catalog init` sees it ([`Engine::profile`]).
#[derive(Debug, Clone, Default)]
pub struct ColumnProfile {
    /// The column's name.
    pub name: String,
    /// Its Arrow type, in words.
    pub data_type: String,
    /// Whether it holds numbers (the only columns a citation can compute on).
    pub numeric: bool,
    /// Rows in the table.
    pub rows: u64,
    /// Rows with no value (numeric columns).
    pub nulls: u64,
    /// Smallest and largest value (numeric columns with any value).
    pub min: Option<f64>,
    /// See `min`.
    pub max: Option<f64>,
    /// Distinct values (numeric columns), counted up to the `max_values` asked for plus one
    /// (more than `max_values`: `max_values + 1`); whole-number columns only.
    pub distinct: u64,
    /// Every value is a whole number (numeric columns).
    pub integral: bool,
    /// The distinct values, ascending, when few and whole.
    pub values: Vec<f64>,
}

/// Most values in one batch of [`Engine::profile`]'s scan (a wide table gets fewer rows a batch).
const PROFILE_CELLS: usize = 1 << 20;

/// A numeric column's profile, folded batch by batch ([`Engine::profile`]).
#[derive(Default)]
struct Fold {
    non_null: u64,
    min: Option<f64>,
    max: Option<f64>,
    /// Some value is not a whole number (NaN and infinities included).
    fractional: bool,
    /// The distinct values as bits (−0 as 0), while every value is whole and there are at
    /// most the limit of them.
    distinct: std::collections::HashSet<u64>,
    /// More distinct whole values than the limit.
    many: bool,
}

impl Fold {
    fn add(&mut self, values: &datafusion::arrow::array::Float64Array, limit: usize) {
        self.non_null += (values.len() - values.null_count()) as u64;
        let mut last = None;
        for x in values.iter().flatten() {
            if !x.is_nan() {
                self.min = Some(self.min.map_or(x, |m| m.min(x)));
                self.max = Some(self.max.map_or(x, |m| m.max(x)));
            }
            if x % 1.0 != 0.0 {
                self.fractional = true;
            }
            // Runs of one value (sorted or coded data) skip the set.
            if self.fractional || self.many || last == Some(x) {
                continue;
            }
            last = Some(x);
            self.distinct.insert((x + 0.0).to_bits());
            if self.distinct.len() > limit {
                self.many = true;
                self.distinct = Default::default();
            }
        }
    }
}

impl Engine {
    /// What `catalog init` needs to know of each column of a table, in one scan folded here:
    /// its type, range, nulls, whether every value is whole, and the distinct values of whole
    /// number columns with at most `max_values` of them. No aggregate is planned: DataFusion
    /// looks each column reference up by name, so planning five per column took time (and
    /// memory) quadratic in a wide table's columns (20,000 columns: minutes, then gigabytes).
    pub fn profile(&self, location: &Path, max_values: usize) -> Result<Vec<ColumnProfile>, String> {
        use futures::StreamExt;
        let reg = self.register(location).map_err(|e| e.to_string())?;
        let mut profiles: Vec<ColumnProfile> = reg
            .schema
            .fields()
            .iter()
            .map(|f| ColumnProfile {
                name: f.name().clone(),
                data_type: f.data_type().to_string(),
                numeric: f.data_type().is_numeric(),
                ..ColumnProfile::default()
            })
            .collect();
        let numeric: Vec<usize> = (0..profiles.len()).filter(|&i| profiles[i].numeric).collect();
        let mut folds: Vec<Fold> = numeric.iter().map(|_| Fold::default()).collect();
        let mut rows = 0u64;
        // The numeric columns by index, straight from the table: no logical plan, so no
        // column is looked up by name (with none, every column, for the row count).
        let projection = (!numeric.is_empty()).then(|| numeric.clone());
        let width = projection.as_ref().map_or(profiles.len(), Vec::len);
        self.rt
            .block_on(async {
                let provider = reg.ctx.table_provider(reg.name.as_str()).await?;
                // Batches of at most PROFILE_CELLS values: readers allocate a batch's rows for
                // every column up front (CSV: 8,192 offsets a column, gigabytes at 40,000).
                let mut state = reg.ctx.state();
                let batch_rows = (PROFILE_CELLS / width.max(1)).clamp(1, state.config().batch_size().max(1));
                *state.config_mut() = state.config().clone().with_batch_size(batch_rows);
                let plan = provider.scan(&state, projection.as_ref(), &[], None).await?;
                let mut stream = datafusion::physical_plan::execute_stream(plan, state.task_ctx())?;
                while let Some(batch) = stream.next().await {
                    let batch = batch?;
                    if batch.num_columns() != width {
                        return Err(datafusion::error::DataFusionError::Internal(format!(
                            "a scan of {width} columns gave {}",
                            batch.num_columns()
                        )));
                    }
                    rows += batch.num_rows() as u64;
                    for (c, fold) in folds.iter_mut().enumerate() {
                        let values = datafusion::arrow::compute::cast(batch.column(c), &DataType::Float64)?;
                        fold.add(values.as_primitive::<Float64Type>(), max_values);
                    }
                }
                Ok::<(), datafusion::error::DataFusionError>(())
            })
            .map_err(|e| format!("cannot be read: {}", e.strip_backtrace()))?;
        for p in profiles.iter_mut() {
            p.rows = rows;
        }
        for (fold, &i) in folds.into_iter().zip(&numeric) {
            let p = &mut profiles[i];
            p.nulls = rows - fold.non_null.min(rows);
            p.min = fold.min;
            p.max = fold.max;
            p.integral = !fold.fractional;
            p.distinct = if fold.many { max_values as u64 + 1 } else { fold.distinct.len() as u64 };
            if !fold.many && !fold.fractional {
                let mut v: Vec<f64> = fold.distinct.into_iter().map(f64::from_bits).collect();
                v.sort_by(f64::total_cmp);
                p.values = v;
            }
        }
        Ok(profiles)
    }
}
