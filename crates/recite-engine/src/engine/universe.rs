//! A question's universe, against the data: `catalog check` proves a declared universe (the
//! column holds no answer on a row outside it), and `catalog init` proposes one where the data
//! shows routing (a column null exactly outside a set of codes of another column).

use datafusion::arrow::datatypes::DataType;
use datafusion::functions_aggregate::expr_fn::count;
use datafusion::logical_expr::Expr;
use datafusion::prelude::{cast, ident, lit, when};

use super::{Engine, EngineError, FilterError, Filters, remote, value_at};
use crate::catalog::Column;

/// Why a universe cannot be checked ([`Engine::check_universe`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UniverseError {
    /// Its filter cannot be used (or the table cannot be read).
    #[error(transparent)]
    Filter(#[from] FilterError),
    /// The Ballista cluster failed while it ran the scan.
    #[error(transparent)]
    Cluster(#[from] remote::ClusterFault),
}

/// Why the data's routings cannot be looked for ([`Engine::routings`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RoutingError {
    /// The table cannot be read.
    #[error(transparent)]
    Table(#[from] EngineError),
    /// The grouped aggregate over a condition column failed (DataFusion's words).
    #[error("column {condition:?}: {error}")]
    Condition {
        /// The condition column.
        condition: String,
        /// What failed.
        error: String,
    },
}

/// How a declared universe holds on the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UniverseCheck {
    /// Rows with an answer in the column (neither null nor a missing code).
    pub answered: u64,
    /// Of those, rows outside the universe's filter (false or null there): routing the
    /// declaration does not describe. Zero when it holds.
    pub outside: u64,
}

/// A universe the data shows: `target` is answered on the rows where `condition` holds one of
/// `codes` and on no other row.
#[derive(Debug, Clone, PartialEq)]
pub struct Routing {
    /// The routed column.
    pub target: String,
    /// The column its routing reads.
    pub condition: String,
    /// The codes of `condition` whose rows answer `target` (ascending).
    pub codes: Vec<f64>,
    /// Rows answering `target`.
    pub answered: u64,
}

/// Most columns a routed column's condition is looked for among, per table: one grouped
/// aggregate of the table each, so the work is bounded whatever the file's width.
pub const MAX_CONDITIONS: usize = 64;

/// `column` holds an answer: not null, and not one of the codes the catalog calls no answer.
fn answered(column: &str, meta: &Column) -> Expr {
    let v = cast(ident(column), DataType::Float64);
    let mut e = ident(column).is_not_null();
    if !meta.missing.is_empty() {
        e = e.and(v.clone().in_list(meta.missing.iter().map(|m| lit(*m)).collect(), true));
    }
    for [lo, hi] in &meta.missing_ranges {
        e = e.and(v.clone().not_between(lit(*lo), lit(*hi)));
    }
    e
}

impl Engine {
    /// Proves `filter` as the universe of `column` on the table at `location`: it plans, is
    /// true/false, and no row outside it answers the column. One scan.
    pub fn check_universe(
        &self,
        location: &std::path::Path,
        column: &str,
        meta: &Column,
        filter: &str,
    ) -> Result<UniverseCheck, UniverseError> {
        let reg = self.register(location).map_err(FilterError::from)?;
        let mut filters = Filters::new(self, &reg.schema).map_err(FilterError::from)?;
        let inside = filters.parse(filter)?;
        let answered = answered(column, meta);
        let outside = answered.clone().and(inside.is_not_true());
        let ones = |e: Expr| -> Result<Expr, FilterError> {
            Ok(datafusion::functions_aggregate::expr_fn::sum(
                when(e, lit(1i64)).otherwise(lit(0i64)).map_err(|e| FilterError::Untyped(e.to_string()))?,
            ))
        };
        let exprs = vec![ones(answered)?.alias("answered"), ones(outside)?.alias("outside")];
        let batches = self
            .run_on(&reg.ctx, async {
                let df = reg.ctx.table(reg.name.as_str()).await?;
                df.aggregate(vec![], exprs)?.collect().await
            })
            .map_err(|e| match remote::cluster_fault(&e) {
                Some(fault) => UniverseError::Cluster(fault.clone()),
                None => UniverseError::Filter(FilterError::FailsOnData(e.strip_backtrace())),
            })?;
        let (mut a, mut o) = (0.0, 0.0);
        for b in &batches {
            for r in 0..b.num_rows() {
                a += value_at(b.column(0), r);
                o += value_at(b.column(1), r);
            }
        }
        Ok(UniverseCheck { answered: a as u64, outside: o as u64 })
    }

    /// The routing the data shows for each of `targets` (columns with some rows unanswered),
    /// looked for among `conditions` (coded columns, at most [`MAX_CONDITIONS`] taken, in the
    /// order given): a target is routed by a condition when, code by code of the condition,
    /// either every row answers it or none does, and both kinds of code occur. The first
    /// condition that routes a target is kept. One grouped aggregate per condition.
    pub fn routings(
        &self,
        location: &std::path::Path,
        targets: &[&str],
        conditions: &[&str],
    ) -> Result<Vec<Routing>, RoutingError> {
        let reg = self.register(location)?;
        let mut found: Vec<Routing> = Vec::new();
        for condition in conditions.iter().take(MAX_CONDITIONS) {
            let open: Vec<&str> = targets
                .iter()
                .copied()
                .filter(|t| t != condition && !found.iter().any(|r| r.target == *t))
                .collect();
            if open.is_empty() {
                break;
            }
            let mut exprs = vec![count(lit(1i64)).alias("rows")];
            exprs.extend(open.iter().enumerate().map(|(i, t)| count(ident(*t)).alias(format!("t{i}"))));
            let code = cast(ident(*condition), DataType::Float64).alias("code");
            let batches = self
                .run_on(&reg.ctx, async {
                    let df = reg.ctx.table(reg.name.as_str()).await?;
                    df.aggregate(vec![code], exprs)?.collect().await
                })
                .map_err(|e| RoutingError::Condition {
                    condition: condition.to_string(),
                    error: e.strip_backtrace(),
                })?;
            // Per target: codes all of whose rows answer, and whether any code is mixed or
            // unanswered.
            let mut all: Vec<Vec<f64>> = vec![Vec::new(); open.len()];
            let mut mixed = vec![false; open.len()];
            let mut none = vec![false; open.len()];
            let mut answered = vec![0u64; open.len()];
            for b in &batches {
                for r in 0..b.num_rows() {
                    let rows = value_at(b.column(1), r);
                    let null_code = b.column(0).is_null(r);
                    for i in 0..open.len() {
                        let n = value_at(b.column(2 + i), r);
                        answered[i] += n as u64;
                        if n == 0.0 {
                            none[i] = true;
                        } else if n == rows && !null_code {
                            all[i].push(value_at(b.column(0), r));
                        } else {
                            mixed[i] = true;
                        }
                    }
                }
            }
            for (i, t) in open.iter().enumerate() {
                if !mixed[i] && none[i] && !all[i].is_empty() {
                    let mut codes = std::mem::take(&mut all[i]);
                    codes.sort_by(f64::total_cmp);
                    found.push(Routing {
                        target: t.to_string(),
                        condition: condition.to_string(),
                        codes,
                        answered: answered[i],
                    });
                }
            }
        }
        Ok(found)
    }
}
