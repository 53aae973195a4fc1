//! The catalog's filters, parsed once per scan as expressions against a table's schema, and
//! proved against a table (`catalog check`).

use std::collections::HashMap;
use std::path::Path;

use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::common::DFSchema;
use datafusion::functions_aggregate::expr_fn::sum;
use datafusion::logical_expr::{Expr, ExprSchemable};
use datafusion::prelude::{SessionContext, lit, when};

use super::{Engine, EngineError, Role, ScanError};
use crate::catalog;

/// Σ CASE WHEN e THEN 1 ELSE 0 END: evaluates a filter on every row it is given.
pub(super) fn flag(e: Expr) -> Expr {
    sum(when(e, lit(1i64)).otherwise(lit(0i64)).expect("a CASE with one branch and an ELSE builds"))
}

/// Why a catalog filter cannot be used: worded to follow "filter SQL".
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FilterError {
    /// Too large or too deep to be parsed within the catalog's limits.
    #[error(transparent)]
    Size(#[from] catalog::FilterSizeError),
    /// DataFusion cannot plan it against the table's schema (its words).
    #[error("does not plan: {0}")]
    Unplanned(String),
    /// Its type cannot be told (DataFusion's words; `parse` has typed it already, so this is
    /// not expected).
    #[error("{0}")]
    Untyped(String),
    /// It plans, but not as true/false (its type).
    #[error("is {0}, not true/false")]
    NotBoolean(String),
    /// It fails when evaluated on the table's rows (the scan's words).
    #[error("fails on the data: {0}")]
    FailsOnData(String),
    /// The table itself cannot be read, or the engine failed: nothing of the filter's doing.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// The catalog's filters of one scan, each parsed once as an expression (never a statement)
/// against the table's schema, and typed, so a filter naming a missing column fails here with
/// the filter's text rather than in the middle of a plan.
pub(crate) struct Filters<'a> {
    ctx: &'a SessionContext,
    schema: DFSchema,
    parsed: HashMap<String, Result<Expr, FilterError>>,
}

impl<'a> Filters<'a> {
    pub(super) fn new(engine: &'a Engine, schema: &Schema) -> Result<Filters<'a>, EngineError> {
        let schema =
            DFSchema::try_from(schema.clone()).map_err(|e| EngineError::Internal(e.strip_backtrace()))?;
        Ok(Filters { ctx: &engine.ctx, schema, parsed: HashMap::new() })
    }

    /// A filter parsed and typed; its size is checked first, so DataFusion never recurses
    /// deeper than the limit allows.
    pub(super) fn parse(&mut self, sql: &str) -> Result<Expr, FilterError> {
        let (ctx, schema) = (self.ctx, &self.schema);
        self.parsed
            .entry(sql.to_string())
            .or_insert_with(|| {
                catalog::check_filter_size(sql)?;
                let unplanned =
                    |e: datafusion::error::DataFusionError| FilterError::Unplanned(e.strip_backtrace());
                let e = ctx.parse_sql_expr(sql, schema).map_err(unplanned)?;
                e.get_type(schema).map_err(unplanned)?;
                Ok(e)
            })
            .clone()
    }

    /// The expression of a filter; `role` names it in errors.
    pub(crate) fn get(&mut self, role: Role, sql: &str) -> Result<Expr, EngineError> {
        self.parse(sql).map_err(|e| EngineError::Filter { role, sql: sql.to_string(), error: e.to_string() })
    }

    /// Whether the table has a column of this name, as the schema spells it.
    pub(crate) fn has_column(&self, name: &str) -> bool {
        self.schema.has_column_with_unqualified_name(name)
    }
}

impl Engine {
    /// Proves a catalog filter against a table (used by `catalog check`): within the size
    /// limits, plans as true/false, and evaluates on every row without an error.
    pub fn check_filter(&self, location: &Path, sql: &str) -> Result<(), FilterError> {
        let reg = self.register(location)?;
        let mut filters = Filters::new(self, &reg.schema)?;
        let expr = filters.parse(sql)?;
        match expr.get_type(&filters.schema).map_err(|e| FilterError::Untyped(e.strip_backtrace()))? {
            DataType::Boolean | DataType::Null => {}
            other => return Err(FilterError::NotBoolean(other.to_string())),
        }
        self.probe(&reg, None, vec![flag(expr)]).map_err(|e| match e {
            ScanError::Fatal(e) => FilterError::Engine(e),
            ScanError::Data(e) => FilterError::FailsOnData(e),
        })
    }
}
