//! Resolve: a validated citation, looked up in the catalog and the extractor registry, becomes a
//! [`Resolved`] — everything the engine needs, all of it the catalog's own names and SQL.
//!
//! Nothing here runs a query. The table's schema comes through [`Schemas`], so the resolver can
//! check that a column exists and is numeric without knowing how tables are read.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use crate::catalog::{self, Catalog, Column, Design, NotFound, Replication, Study, Thresholds};
use crate::citation::Citation;
use crate::extractor::{Measure, Registry};

/// Where the resolver gets a table's columns from (the engine, in practice).
pub trait Schemas {
    /// The schema of a declared table, or why it cannot be read.
    fn schema(&self, study: &Study, table: &catalog::Table) -> Result<Arc<Schema>, String>;
}

/// A table's columns as the resolver checks them: names in the table's order, and whether each
/// holds numbers. The engine reads them from the table's files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schema {
    fields: Vec<Field>,
}

impl Schema {
    /// A schema of these columns, in order.
    pub fn new(fields: Vec<Field>) -> Schema {
        Schema { fields }
    }

    /// The columns, in order.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The column named `name`, if the table has it.
    pub fn field_with_name(&self, name: &str) -> Result<&Field, String> {
        self.fields.iter().find(|f| f.name == name).ok_or_else(|| format!("no column {name:?}"))
    }
}

/// One column of a [`Schema`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    name: String,
    data_type: DataType,
}

impl Field {
    /// A column: its name, its type as said in messages (`Utf8`, `Int64`), whether it holds
    /// numbers.
    pub fn new(name: impl Into<String>, shown: impl Into<String>, numeric: bool) -> Field {
        Field { name: name.into(), data_type: DataType { shown: shown.into(), numeric } }
    }

    /// Its name, as the table spells it.
    pub fn name(&self) -> &String {
        &self.name
    }

    /// Its type.
    pub fn data_type(&self) -> &DataType {
        &self.data_type
    }
}

/// A column's type, as far as resolution cares: whether it is numeric, and its name in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataType {
    shown: String,
    numeric: bool,
}

impl DataType {
    /// Whether the column holds numbers an extractor can compute on.
    pub fn is_numeric(&self) -> bool {
        self.numeric
    }
}

impl std::fmt::Display for DataType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// Which rows an estimate is over, by catalog names only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rows {
    /// The table's files (path or glob).
    pub location: PathBuf,
    /// The table's declared name (for reports).
    pub table: String,
    /// The sampling design, if the catalog declares one.
    pub design: Option<(String, String)>,
    /// The period's SQL filter (trusted catalog text), if any.
    pub period_filter: Option<String>,
    /// The base's SQL filter with `{column}` filled in, if any.
    pub base_filter: Option<String>,
    /// The cited column, as the schema spells it.
    pub column: String,
    /// Codes of the column that count as no answer.
    pub missing: Vec<f64>,
    /// Ranges of codes `[low, high]` of the column that count as no answer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing_ranges: Vec<[f64; 2]>,
    /// The weight column, or `None` for w = 1.
    pub weight: Option<String>,
    /// The table's replicate weights, when it declares them and the estimate is weighted.
    pub replicates: Option<Replication>,
}

impl Rows {
    /// Whether a code of the column counts as no answer (a missing code or in a missing range).
    pub fn is_missing(&self, code: f64) -> bool {
        self.missing.contains(&code) || self.missing_ranges.iter().any(|[lo, hi]| *lo <= code && code <= *hi)
    }
}

/// A citation, resolved.
#[derive(Debug, Clone, Serialize)]
pub struct Resolved {
    /// The study's declared name.
    pub study: String,
    /// The period's declared name.
    pub period: String,
    /// When the catalog says the period was fielded.
    pub fielded: Option<String>,
    /// The base's declared name.
    pub base: String,
    /// The column's label from the catalog.
    pub column_label: String,
    /// The extractor's name.
    pub function: String,
    /// The rows to compute over.
    pub rows: Rows,
    /// The measures, expanded for the column.
    pub measures: Vec<Measure>,
    /// Small-base thresholds of the study.
    pub thresholds: Thresholds,
    /// Breakdown cells audited for small bases: (breakdown, cell, SQL filter).
    pub cells: Vec<(String, String, String)>,
    /// Things worth knowing that do not change the verdict.
    pub notes: Vec<String>,
}

/// Why a citation cannot be re-run: every failed look-up, in words; and the names not
/// declared, each with the declared names nearest to it (as data, for a caller to offer).
#[derive(Debug, Clone, PartialEq)]
pub struct Unresolvable(pub Vec<String>, pub Vec<NotFound>);

/// Looks up every name in a citation. Collects every failure it can find, not just the first.
pub fn resolve(
    c: &Citation,
    catalog: &Catalog,
    registry: &Registry,
    schemas: &dyn Schemas,
) -> Result<Resolved, Unresolvable> {
    let mut why = Vec::new();
    let study = catalog.study(&c.study).map_err(|e| {
        let unknown = match &e {
            catalog::StudyError::NotFound { missing, .. } => vec![missing.clone()],
            _ => Vec::new(),
        };
        Unresolvable(vec![e.to_string()], unknown)
    })?;
    // Every failed look-up in words, its NotFound kept beside.
    let unknown = std::cell::RefCell::new(Vec::new());
    let miss = |e: NotFound| {
        let words = e.to_string();
        unknown.borrow_mut().push(e);
        words
    };
    let period = study.period(&c.period).map_err(miss);
    let base = study.base(&c.base.name).map_err(miss);
    let extractor = registry.get(&c.source.function).map_err(miss);
    let table = study.table(&c.source.table).map_err(miss);
    let mut notes = Vec::new();
    let (mut column, mut column_meta, mut weight, mut design) = (None, Column::default(), None, None);
    let mut replicates = None;
    if let Ok(table) = &table {
        match schemas.schema(study, table) {
            Err(e) => why.push(format!("table {:?}: {e}", table.name)),
            Ok(schema) => {
                match schema.fields().iter().find(|f| f.name() == &c.source.column) {
                    Some(f) if f.data_type().is_numeric() => column = Some(f.name().clone()),
                    Some(f) => why.push(format!(
                        "column {:?} of table {:?} holds {}, not numbers: no extractor computes on it",
                        f.name(),
                        table.name,
                        f.data_type()
                    )),
                    None => why.push(miss(NotFound {
                        what: "column",
                        asked: catalog::shorten(&c.source.column),
                        scope: format!("table {:?}", table.name),
                        declared: schema.fields().len(),
                        suggestions: catalog::suggest(
                            &c.source.column,
                            schema.fields().iter().map(|f| f.name().as_str()),
                        ),
                    })),
                }
                column_meta = table.column_meta(&c.source.column);
                if let Some(w) = &c.weight {
                    match table.weight(w) {
                        Ok(w) => match schema.field_with_name(w) {
                            Ok(f) if f.data_type().is_numeric() => weight = Some(w.to_string()),
                            Ok(f) => why.push(format!(
                                "declared weight {w:?} of table {:?} holds {}, not numbers",
                                table.name,
                                f.data_type()
                            )),
                            Err(_) => why.push(format!(
                                "declared weight {w:?} is not a column of table {:?}",
                                table.name
                            )),
                        },
                        Err(e) => why.push(miss(e)),
                    }
                }
                design = table.design.as_ref().map(|Design { strata, psu }| (strata.clone(), psu.clone()));
                // Replicates carry a weighted estimate's variance; unweighted ones stay simple.
                if let (Some(decl), true) = (&table.replicates, c.weight.is_some()) {
                    match decl.resolve(schema.fields().iter().map(|f| f.name().as_str())) {
                        Ok(r) => {
                            for col in &r.columns {
                                if let Ok(f) = schema.field_with_name(col)
                                    && !f.data_type().is_numeric()
                                {
                                    why.push(format!(
                                        "replicate weight {col:?} of table {:?} holds {}, not numbers",
                                        table.name,
                                        f.data_type()
                                    ));
                                }
                            }
                            replicates = Some(r);
                        }
                        Err(e) => why.push(format!("table {:?}: {e}", table.name)),
                    }
                }
            }
        }
    }
    // Filters past the size limits are refused here, where their names are known.
    let too_large = |what: String, sql: &str| {
        study.oversized(sql).map(|e| format!("{what} of study {:?}: its filter {e}", study.study.name))
    };
    match &period {
        Err(e) => why.push(e.clone()),
        Ok(p) => why.extend(too_large(format!("period {:?}", p.name), &p.filter)),
    }
    match &base {
        Err(e) => why.push(e.clone()),
        Ok(b) => why.extend(too_large(format!("base {:?}", b.name), &b.filter)),
    }
    let n_cells: usize = study.breakdowns.iter().map(|b| b.cells.len()).sum();
    if n_cells > catalog::MAX_CELLS {
        why.push(format!(
            "study {:?} declares {n_cells} breakdown cells; at most {} are supported",
            study.study.name,
            catalog::MAX_CELLS
        ));
    }
    for b in &study.breakdowns {
        for cell in &b.cells {
            why.extend(too_large(format!("breakdown {:?} cell {:?}", b.name, cell.name), &cell.filter));
        }
    }
    let measures = match &extractor {
        Err(e) => {
            why.push(e.clone());
            None
        }
        Ok(x) if column.is_some() => match x.expand(&column_meta) {
            Ok(m) => Some(m),
            Err(e) => {
                why.push(format!("{e:#} (table {:?}, column {:?})", c.source.table, c.source.column));
                None
            }
        },
        Ok(_) => None,
    };
    if let Err(e) = &table {
        why.push(e.clone());
    }
    if !why.is_empty() {
        return Err(Unresolvable(why, unknown.into_inner()));
    }
    let (Ok(period), Ok(base), Ok(extractor), Ok(table), Some(column), Some(measures)) =
        (period, base, extractor, table, column, measures)
    else {
        return Err(Unresolvable(vec!["the citation could not be resolved".into()], Vec::new()));
    };
    if let (Some(claimed), Some(declared)) = (&c.fielded, &period.fielded)
        && claimed != declared
    {
        notes.push(format!(
            "the citation says period {:?} was fielded {claimed}, the catalog says {declared}",
            period.name
        ));
    }
    let cells = study
        .breakdowns
        .iter()
        .flat_map(|b| {
            b.cells.iter().map(move |cell| (b.name.clone(), cell.name.clone(), cell.filter.clone()))
        })
        .collect();
    Ok(Resolved {
        study: study.study.name.clone(),
        period: period.name.clone(),
        fielded: period.fielded.clone(),
        base: base.name.clone(),
        column_label: column_meta.label.clone(),
        function: extractor.name.clone(),
        rows: Rows {
            location: table.location(study),
            table: table.name.clone(),
            design,
            period_filter: Some(period.filter.clone()),
            base_filter: Some(catalog::base_filter(base, &column)),
            column,
            missing: column_meta.missing.clone(),
            missing_ranges: column_meta.missing_ranges.clone(),
            weight,
            replicates,
        },
        measures,
        thresholds: study.thresholds,
        cells,
        notes,
    })
}
