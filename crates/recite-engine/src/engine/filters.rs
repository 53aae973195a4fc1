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

/// The catalog's filters of one scan, each parsed once as an expression (never a statement)
/// against the table's schema, and typed, so a filter naming a missing column fails here with
/// the filter's text rather than in the middle of a plan.
pub(crate) struct Filters<'a> {
    ctx: &'a SessionContext,
    schema: DFSchema,
    parsed: HashMap<String, Result<Expr, String>>,
}

impl<'a> Filters<'a> {
    pub(super) fn new(engine: &'a Engine, schema: &Schema) -> Result<Filters<'a>, EngineError> {
        let schema =
            DFSchema::try_from(schema.clone()).map_err(|e| EngineError::Internal(e.strip_backtrace()))?;
        Ok(Filters { ctx: &engine.ctx, schema, parsed: HashMap::new() })
    }

    /// A filter parsed and typed; its size is checked first, so DataFusion never recurses
    /// deeper than the limit allows.
    pub(super) fn parse(&mut self, sql: &str) -> Result<Expr, String> {
        let (ctx, schema) = (self.ctx, &self.schema);
        self.parsed
            .entry(sql.to_string())
            .or_insert_with(|| {
                catalog::check_filter_size(sql).map_err(|e| e.to_string())?;
                let e = ctx
                    .parse_sql_expr(sql, schema)
                    .map_err(|e| format!("does not plan: {}", e.strip_backtrace()))?;
                e.get_type(schema).map_err(|e| format!("does not plan: {}", e.strip_backtrace()))?;
                Ok(e)
            })
            .clone()
    }

    /// The expression of a filter; `role` names it in errors.
    pub(crate) fn get(&mut self, role: Role, sql: &str) -> Result<Expr, EngineError> {
        self.parse(sql).map_err(|error| EngineError::Filter { role, sql: sql.to_string(), error })
    }

    /// Whether the table has a column of this name, as the schema spells it.
    pub(crate) fn has_column(&self, name: &str) -> bool {
        self.schema.has_column_with_unqualified_name(name)
    }
}

impl Engine {
    /// Proves a catalog filter against a table (used by `catalog check`): within the size
    /// limits, plans as true/false, and evaluates on every row without an error.
    pub fn check_filter(&self, location: &Path, sql: &str) -> Result<(), String> {
        let reg = self.register(location).map_err(|e| e.to_string())?;
        let mut filters = Filters::new(self, &reg.schema).map_err(|e| e.to_string())?;
        let expr = filters.parse(sql)?;
        match expr.get_type(&filters.schema).map_err(|e| e.strip_backtrace())? {
            DataType::Boolean | DataType::Null => {}
            other => return Err(format!("is {other}, not true/false")),
        }
        self.probe(&reg, None, vec![flag(expr)]).map_err(|e| match e {
            ScanError::Fatal(e) => e.to_string(),
            ScanError::Data(e) => format!("fails on the data: {e}"),
        })
    }
}
