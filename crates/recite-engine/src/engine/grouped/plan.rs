//! The grouped scan's reduction as ONE DataFusion plan, built from built-in functions only, so
//! it serialises through datafusion-proto and runs on any DataFusion executor (a Ballista
//! cluster's too) with no custom codec or UDAF.
//!
//! Per row, a projection turns the flags into a period mask, a cell mask and per cited column
//! the packed key `code·2^B + base mask` (`i64::MIN` for a code beyond ±2^42), and each weight
//! into its fixed-point w and w² (`Decimal256` integers at the weight's [`super::Scale`], the
//! reducer's own f64 operations and rounding) and INVALID / OVERFLOW flags. A cross join with
//! the column indices `0..C` (a `VALUES` list, the small build side: each output batch is one
//! index beside a whole batch of rows, sharing its arrays) makes one row per (row, cited
//! column), whose key a `CASE index WHEN c THEN key_c` picks; one `GROUP BY (index, period
//! mask, cell mask, key[, stratum, PSU])` then counts rows and sums the fixed-point weights
//! exactly (`Decimal256` sums wrap, but terms under 2^192 in fewer than 2^63 rows cannot reach
//! 2^255). The groups become the same per-column exact sums the in-process reducer merges
//! ([`Reduced`]), so everything after is shared and reports are byte-identical. Arrays of keys
//! and `unnest` would be the obvious form, but `make_array` lives in DataFusion's
//! `nested_expressions` feature, which recite does not build.

use std::collections::{BTreeSet, HashMap};

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Decimal256Type, Int64Type};
use datafusion::dataframe::DataFrame;
use datafusion::error::{DataFusionError, Result};
use datafusion::functions_aggregate::expr_fn::{bit_or, count, sum};
use datafusion::logical_expr::{Expr, LogicalPlanBuilder, bitwise_or, case};
use datafusion::prelude::{SessionContext, cast, coalesce, col, ident, lit, when};

use super::reduce::{Exact, MergedKey};
use super::{FIXED_LIMIT, INVALID, MAX_CODE, OUT_OF_RANGE, OVERFLOW, Reduced, Scale};
use crate::engine::bad_weight;

/// Exact sums of fixed-point weights: terms under 2^192 (< 10^58) always fit 76 digits, and no
/// group of fewer than 2^63 rows sums past the i256 range.
const FIXED: DataType = DataType::Decimal256(76, 0);

/// What the plan reduces: the flags and cited columns of one grouped scan.
pub(super) struct Shape<'a> {
    pub(super) periods: &'a [Expr],
    pub(super) cells: &'a [Expr],
    pub(super) columns: &'a [String],
    /// Per cited column, its base flags.
    pub(super) bases: Vec<&'a [Expr]>,
    pub(super) weights: &'a [String],
    /// Per weight, the scale its terms are summed at (the reducer's).
    pub(super) scales: &'a [Scale],
    pub(super) design: Option<&'a (String, String)>,
}

/// `flags` as a mask: bit k set where flag k is true (a NULL flag is false, as in WHERE).
fn mask(flags: &[Expr]) -> Result<Expr> {
    let mut bits = Vec::with_capacity(flags.len());
    for (k, f) in flags.iter().enumerate() {
        bits.push(when(f.clone().is_true(), lit(1i64 << k)).otherwise(lit(0i64))?);
    }
    Ok(bits.into_iter().reduce(bitwise_or).unwrap_or_else(|| lit(0i64)))
}

/// The grouped plan of a table (`table`, its rows filtered by `keep`) as a DataFrame: one row
/// per group with its index `c`, masks `pm`, `cm`, packed `key` (NULL where the code is),
/// stratum and PSU `s`, `p` with a design, the row count `n`, and per weight i its valid rows
/// `v{i}`, fixed-point Σw `w{i}` and Σw² `q{i}`, and flags `f{i}`.
pub(super) async fn plan(
    ctx: &SessionContext,
    table: &str,
    keep: Option<Expr>,
    shape: &Shape<'_>,
) -> Result<DataFrame> {
    let mut rows = ctx.table(table).await?;
    if let Some(keep) = keep {
        rows = rows.filter(keep)?;
    }
    let mut select = vec![mask(shape.periods)?.alias("pm"), mask(shape.cells)?.alias("cm")];
    for (c, (column, bases)) in shape.columns.iter().zip(&shape.bases).enumerate() {
        let code = cast(ident(column), DataType::Int64);
        let beyond = code.clone().gt_eq(lit(MAX_CODE)).or(code.clone().lt_eq(lit(-MAX_CODE)));
        // A NULL code makes the condition NULL: the ELSE branch, NULL again.
        let packed = code * lit(1i64 << bases.len()) + mask(bases)?;
        select.push(when(beyond, lit(OUT_OF_RANGE)).otherwise(packed)?.alias(format!("k{c}")));
    }
    if shape.scales.len() != shape.weights.len() {
        return Err(DataFusionError::Internal("the grouped plan has a weight without its scale".into()));
    }
    for (i, (w, scale)) in shape.weights.iter().zip(shape.scales).enumerate() {
        // As the reducer ([`Scale::weight_term`], [`Scale::square_term`]): a negative, NaN or
        // infinite value is INVALID; a positive one whose (w·2^−b)²·2^192 is not under 2^192
        // is OVERFLOW; a positive one that fits is summed, rounded as `f64::round` (the cast's
        // own rounding); NULL and zero add nothing.
        let v = cast(ident(w), DataType::Float64);
        let unit = v.clone() * lit(scale.unit());
        let squared = unit.clone() * unit * lit(FIXED_LIMIT);
        let positive = v.clone().gt(lit(0.0));
        let fits = squared.clone().lt(lit(FIXED_LIMIT));
        let ok = std::ops::Not::not(bad_weight(&v)).and(positive.clone()).and(fits.clone());
        let term = v.clone() * lit(scale.weight_factor());
        select.push(when(ok.clone(), cast(term, FIXED)).end()?.alias(format!("w{i}")));
        select.push(when(ok, cast(squared, FIXED)).end()?.alias(format!("q{i}")));
        let flag = when(bad_weight(&v), lit(i64::from(INVALID)))
            .when(positive.and(std::ops::Not::not(fits)), lit(i64::from(OVERFLOW)))
            .otherwise(lit(0i64))?;
        select.push(flag.alias(format!("f{i}")));
    }
    if let Some((s, p)) = shape.design {
        // As the reducer: a NULL stratum or PSU is the empty name.
        select.push(coalesce(vec![cast(ident(s), DataType::Utf8), lit("")]).alias("s"));
        select.push(coalesce(vec![cast(ident(p), DataType::Utf8), lit("")]).alias("p"));
    }
    let rows = rows.select(select)?;
    let (state, rows) = rows.into_parts();
    let index: Vec<Vec<Expr>> = (0..shape.columns.len() as i64).map(|c| vec![lit(c)]).collect();
    let index = LogicalPlanBuilder::values(index)?.project([col("column1").alias("c")])?.build()?;
    let joined = LogicalPlanBuilder::from(index).cross_join(rows)?.build()?;
    let mut pick = case(col("c"));
    for c in 0..shape.columns.len() {
        pick = pick.when(lit(c as i64), col(format!("k{c}")));
    }
    let mut group = vec![col("c"), col("pm"), col("cm"), pick.end()?.alias("key")];
    if shape.design.is_some() {
        group.extend([col("s"), col("p")]);
    }
    let mut aggregates = vec![count(lit(1i64)).alias("n")];
    for i in 0..shape.weights.len() {
        aggregates.extend([
            count(col(format!("w{i}"))).alias(format!("v{i}")),
            sum(col(format!("w{i}"))).alias(format!("w{i}")),
            sum(col(format!("q{i}"))).alias(format!("q{i}")),
            bit_or(col(format!("f{i}"))).alias(format!("f{i}")),
        ]);
    }
    DataFrame::new(state, joined).aggregate(group, aggregates)
}

/// The plan's groups as the reducer's merged sums per cited column.
pub(super) fn gather(batches: &[RecordBatch], shape: &Shape<'_>) -> Result<Reduced> {
    let n_columns = shape.columns.len();
    let n_weights = shape.weights.len();
    let mut out = Reduced {
        merged: vec![HashMap::new(); n_columns],
        rows: 0,
        psus: BTreeSet::new(),
        out_of_range: vec![false; n_columns],
    };
    for b in batches {
        let column = |name: &str| {
            b.column_by_name(name)
                .ok_or_else(|| DataFusionError::Internal(format!("the grouped plan has no column {name}")))
        };
        let int = |name: &str| column(name).map(|a| a.as_primitive::<Int64Type>().clone());
        let fixed = |name: &str| column(name).map(|a| a.as_primitive::<Decimal256Type>().clone());
        let (c, pm, cm, key, n) = (int("c")?, int("pm")?, int("cm")?, int("key")?, int("n")?);
        let weights: Vec<_> = (0..n_weights)
            .map(|i| {
                Ok((
                    int(&format!("v{i}"))?,
                    fixed(&format!("w{i}"))?,
                    fixed(&format!("q{i}"))?,
                    int(&format!("f{i}"))?,
                ))
            })
            .collect::<Result<_>>()?;
        let design = match shape.design {
            Some(_) => {
                Some((column("s")?.as_string::<i32>().clone(), column("p")?.as_string::<i32>().clone()))
            }
            None => None,
        };
        for r in 0..b.num_rows() {
            let index = usize::try_from(c.value(r))
                .ok()
                .filter(|&i| i < n_columns)
                .ok_or_else(|| DataFusionError::Internal("the grouped plan gave an unknown column".into()))?;
            let psu = design.as_ref().map(|(s, p)| (s.value(r).to_string(), p.value(r).to_string()));
            if index == 0 {
                // Every row read is in column 0's groups, its NULL codes' too.
                out.rows += n.value(r) as u64;
                if let Some(psu) = &psu {
                    out.psus.insert(psu.clone());
                }
            }
            if key.is_null(r) {
                continue;
            }
            if key.value(r) == OUT_OF_RANGE {
                out.out_of_range[index] = true;
                continue;
            }
            let mut sums = Exact::new(n_weights);
            sums.n = n.value(r) as u64;
            for (i, (v, w, q, f)) in weights.iter().enumerate() {
                let exact = |a: &datafusion::arrow::array::Decimal256Array| {
                    if a.is_null(r) { datafusion::arrow::datatypes::i256::ZERO } else { a.value(r) }
                };
                let flags = if f.is_null(r) { 0 } else { f.value(r) as u8 };
                sums.weighted[i] = (v.value(r) as u64, exact(w), exact(q));
                sums.bad[i] = flags;
            }
            let merged_key: MergedKey = (pm.value(r), cm.value(r), key.value(r), psu);
            out.merged[index].insert(merged_key, sums);
        }
    }
    Ok(out)
}
