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
use crate::extractor::{Extractor, Measure, Registry};
use crate::version::{DataVersion, FileDigest, Found, Pin, PinSource};

/// Where the resolver gets a table's columns from (the engine, in practice). No method has a
/// default: a scanner that wraps another (the service's warm table, a re-run of a saved report)
/// must say what it does with versions and files, or a forgotten method would silently drop
/// them from its reports.
pub trait Schemas {
    /// The schema of a declared table, or why it cannot be read.
    fn schema(&self, study: &Study, table: &catalog::Table) -> Result<Arc<Schema>, TableError>;

    /// For a table that keeps versions (a Delta Lake table): the version `pin` names (`None`:
    /// the latest) and where to scan it; `Ok(None)` for a table without versions, or why the
    /// version cannot be read (not in the log, a log with a gap, a moment before the first
    /// commit).
    fn version(
        &self,
        study: &Study,
        table: &catalog::Table,
        pin: Option<&Pin>,
    ) -> Result<Option<Found>, TableError>;

    /// The moment the run re-runs every claim on a versioned table as of (`--as-of`), over any
    /// pin; `None` for none.
    fn as_of(&self) -> Option<&str>;

    /// The version a saved ruling read of `table` of `study` where its claims read the latest
    /// (a re-run on the pinned version, [`crate::saved`]); `None`: the latest.
    fn saved_version(&self, study: &str, table: &str) -> Option<u64>;

    /// The schema of a table at a version [`Schemas::version`] found (columns may come and go
    /// between versions). Only asked of a scanner whose `version` found one.
    fn schema_at(&self, found: &Found) -> Result<Arc<Schema>, TableError>;

    /// For a table of plain files on disk that keeps no versions, the files a scan of it reads,
    /// each by name (relative to the study's folder), size and digest, sorted by name: what
    /// the settlement names as the data it ran on. Empty for a table on object storage or a
    /// server, and when a file cannot be read.
    fn file_digests(&self, study: &Study, table: &catalog::Table) -> Vec<FileDigest>;
}

/// Why a scanner cannot give a table's schema or version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    /// A version was found, but this scanner reads no versions.
    #[error("{}: versions are not read by this scanner", .0.display())]
    VersionsNotRead(PathBuf),
    /// The scanner could not read the table: its own words (the engine's errors come from
    /// DataFusion and the file readers, which the core does not name).
    #[error("{0}")]
    Unreadable(String),
}

impl From<String> for TableError {
    fn from(words: String) -> TableError {
        TableError::Unreadable(words)
    }
}

/// A column the table does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no column {0:?}")]
pub struct NoColumn(pub String);

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
    pub fn field_with_name(&self, name: &str) -> Result<&Field, NoColumn> {
        self.fields.iter().find(|f| f.name == name).ok_or_else(|| NoColumn(name.to_string()))
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
    /// The version of the table the rows are read at, for a table that keeps versions.
    pub data_version: Option<DataVersion>,
    /// For a table of plain files on disk, the files its rows are read from
    /// ([`Schemas::file_digests`]); empty for a versioned table and where the scanner says none.
    pub files: Vec<FileDigest>,
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
    let study = study_of(catalog, &c.study)?;
    let mut p = Problems::default();
    let period = study.period(&c.period).map_err(|e| p.miss(e));
    let base = study.base(&c.base.name).map_err(|e| p.miss(e));
    let extractor = registry.get(&c.source.function).map_err(|e| p.miss(e));
    let table = study.table(&c.source.table).map_err(|e| p.miss(e));
    // The version first: the cited columns are checked against the schema of the version read.
    let before = p.why.len();
    let version = match (&table, &period) {
        (Ok(table), Ok(period)) => version_of(c, study, table, period, schemas, &mut p),
        _ => None,
    };
    let on = match &table {
        // A version that cannot be read has been said; its schema would only say it again.
        Ok(_) if p.why.len() > before => OnTable::default(),
        Ok(table) => on_table(c, study, table, version.as_ref().map(|(f, _)| f), schemas, &mut p),
        Err(_) => OnTable::default(),
    };
    check_filters(study, &period, &base, &mut p);
    let measures = measures(c, &extractor, &on, &mut p);
    if let Err(e) = &table {
        p.why.push(e.to_string());
    }
    if !p.why.is_empty() {
        return Err(Unresolvable(p.why, p.unknown));
    }
    let (Ok(period), Ok(base), Ok(extractor), Ok(table), Some(column), Some(measures)) =
        (period, base, extractor, table, on.column, measures)
    else {
        return Err(Unresolvable(vec!["the citation could not be resolved".into()], Vec::new()));
    };
    let (location, data_version, files) = match version {
        Some((found, v)) => (found.location, Some(v), Vec::new()),
        None => (table.location(study), None, schemas.file_digests(study, table)),
    };
    let mut notes: Vec<String> = fielded_note(c, period).into_iter().collect();
    if data_version.is_none()
        && let Some(moment) = schemas.as_of()
    {
        notes.push(format!(
            "--as-of {moment} does not apply to table {:?}: it keeps no versions, and is read as it is now",
            table.name
        ));
    }
    Ok(Resolved {
        study: study.study.name.clone(),
        period: period.name.clone(),
        fielded: period.fielded.clone(),
        base: base.name.clone(),
        column_label: on.meta.label.clone(),
        function: extractor.name.clone(),
        rows: Rows {
            location,
            table: table.name.clone(),
            design: on.design,
            period_filter: Some(period.filter.clone()),
            base_filter: Some(catalog::base_filter(base, &column)),
            column,
            missing: on.meta.missing.clone(),
            missing_ranges: on.meta.missing_ranges.clone(),
            weight: on.weight,
            replicates: on.replicates,
        },
        measures,
        thresholds: study.thresholds,
        cells: study
            .cells()
            .map(|(b, cell)| (b.name.clone(), cell.name.clone(), cell.filter.clone()))
            .collect(),
        notes,
        data_version,
        files,
    })
}

/// The version of a versioned table the claim is re-run on: `--as-of` over the citation's
/// `data_version` over the period's pin, else the latest; `None` for a table without versions,
/// where a pin from the citation or the period cannot be honoured and is a problem (the claim
/// would be settled on data nobody can say is the pinned one).
fn version_of(
    c: &Citation,
    study: &Study,
    table: &catalog::Table,
    period: &catalog::Period,
    schemas: &dyn Schemas,
    p: &mut Problems,
) -> Option<(Found, DataVersion)> {
    let from_citation = c.extra.get("data_version").map(Pin::of_citation).transpose();
    let (pin, chosen) = match (schemas.as_of(), from_citation, period.pin()) {
        (Some(moment), _, _) => (Some(Pin::AsOf(moment.to_string())), PinSource::AsOfFlag),
        (None, Err(e), _) => {
            p.why.push(e.to_string());
            return None;
        }
        (None, Ok(None), Err(e)) => {
            p.why.push(e.to_string());
            return None;
        }
        (None, Ok(Some(pin)), _) => (Some(pin), PinSource::Citation),
        (None, Ok(None), Ok(Some(pin))) => (Some(pin), PinSource::Period),
        (None, Ok(None), Ok(None)) => match schemas.saved_version(&study.study.name, &table.name) {
            Some(v) => (Some(Pin::Version(v)), PinSource::Saved),
            None => (None, PinSource::Latest),
        },
    };
    match schemas.version(study, table, pin.as_ref()) {
        Ok(Some(found)) => {
            let v = DataVersion {
                format: found.format.into(),
                version: found.version,
                committed: found.committed.clone(),
                chosen,
                pin,
                snapshot: found.snapshot.clone(),
            };
            Some((found, v))
        }
        Ok(None) => {
            if let (Some(pin), PinSource::Period | PinSource::Citation) = (&pin, chosen) {
                let by = if chosen == PinSource::Period {
                    format!("period {:?}", period.name)
                } else {
                    "the citation's data_version".to_string()
                };
                p.why.push(format!(
                    "{by} pins {pin}, but table {:?} keeps no versions (it is not a Delta table): \
                     the pinned data cannot be read",
                    table.name
                ));
            }
            None
        }
        Err(e) => {
            p.why.push(format!("table {:?}: {e}", table.name));
            None
        }
    }
}

/// What a citation's look-ups found wrong so far: each problem in words, in the order they are
/// reported, and the names not declared, in the order they were looked up.
#[derive(Default)]
struct Problems {
    why: Vec<String>,
    unknown: Vec<NotFound>,
}

impl Problems {
    /// Keeps a name that is not declared; its words are for the caller to report in its turn.
    fn miss(&mut self, e: NotFound) -> NotFound {
        self.unknown.push(e.clone());
        e
    }

    /// Reports a name that is not declared, now.
    fn not_declared(&mut self, e: NotFound) {
        let words = self.miss(e).to_string();
        self.why.push(words);
    }
}

/// The study the citation names: without it nothing else can be looked up, so its failure is
/// the only one reported.
fn study_of<'c>(catalog: &'c Catalog, name: &str) -> Result<&'c Study, Unresolvable> {
    catalog.study(name).map_err(|e| {
        let unknown = match &e {
            catalog::StudyError::NotFound { missing, .. } => vec![missing.clone()],
            _ => Vec::new(),
        };
        Unresolvable(vec![e.to_string()], unknown)
    })
}

/// What the cited table's schema settles: the column, its metadata, the weight, the design and
/// the replicate weights. Each is `None` (the metadata default) when it could not be checked.
#[derive(Default)]
struct OnTable {
    column: Option<String>,
    meta: Column,
    weight: Option<String>,
    design: Option<(String, String)>,
    replicates: Option<Replication>,
}

/// Checks the citation against the cited table's columns: the column, the weight and the
/// replicate weights exist and hold numbers.
fn on_table(
    c: &Citation,
    study: &Study,
    table: &catalog::Table,
    version: Option<&Found>,
    schemas: &dyn Schemas,
    p: &mut Problems,
) -> OnTable {
    let schema = match version {
        Some(found) => schemas.schema_at(found),
        None => schemas.schema(study, table),
    };
    let schema = match schema {
        Ok(schema) => schema,
        Err(e) => {
            p.why.push(format!("table {:?}: {e}", table.name));
            return OnTable::default();
        }
    };
    let column = cited_column(&c.source.column, table, &schema, p);
    let meta = table.column_meta(&c.source.column);
    let weight = c.weight.as_deref().and_then(|w| cited_weight(w, table, &schema, p));
    let design = table.design.as_ref().map(|Design { strata, psu }| (strata.clone(), psu.clone()));
    // Replicates carry a weighted estimate's variance; unweighted ones stay simple.
    let replicates = match (&table.replicates, c.weight.is_some()) {
        (Some(decl), true) => replicates(decl, table, &schema, p),
        _ => None,
    };
    OnTable { column, meta, weight, design, replicates }
}

/// The cited column, as the schema spells it: a column of the table that holds numbers.
fn cited_column(name: &str, table: &catalog::Table, schema: &Schema, p: &mut Problems) -> Option<String> {
    match schema.fields().iter().find(|f| f.name() == name) {
        Some(f) if f.data_type().is_numeric() => return Some(f.name().clone()),
        Some(f) => p.why.push(format!(
            "column {:?} of table {:?} holds {}, not numbers: no extractor computes on it",
            f.name(),
            table.name,
            f.data_type()
        )),
        None => p.not_declared(NotFound {
            what: "column",
            asked: catalog::shorten(name),
            scope: format!("table {:?}", table.name),
            declared: schema.fields().len(),
            suggestions: catalog::suggest(name, schema.fields().iter().map(|f| f.name().as_str())),
        }),
    }
    None
}

/// The cited weight: declared for the table, a column of it, and holding numbers.
fn cited_weight(w: &str, table: &catalog::Table, schema: &Schema, p: &mut Problems) -> Option<String> {
    let w = match table.weight(w) {
        Ok(w) => w,
        Err(e) => {
            p.not_declared(e);
            return None;
        }
    };
    match schema.field_with_name(w) {
        Ok(f) if f.data_type().is_numeric() => return Some(w.to_string()),
        Ok(f) => p.why.push(format!(
            "declared weight {w:?} of table {:?} holds {}, not numbers",
            table.name,
            f.data_type()
        )),
        Err(_) => p.why.push(format!("declared weight {w:?} is not a column of table {:?}", table.name)),
    }
    None
}

/// The table's replicate weights: its pattern matches columns, and each holds numbers. A
/// column that does not is reported; the replication is kept, since the citation fails anyway.
fn replicates(
    decl: &catalog::Replicates,
    table: &catalog::Table,
    schema: &Schema,
    p: &mut Problems,
) -> Option<Replication> {
    let r = match decl.resolve(schema.fields().iter().map(|f| f.name().as_str())) {
        Ok(r) => r,
        Err(e) => {
            p.why.push(format!("table {:?}: {e}", table.name));
            return None;
        }
    };
    for col in &r.columns {
        if let Ok(f) = schema.field_with_name(col)
            && !f.data_type().is_numeric()
        {
            p.why.push(format!(
                "replicate weight {col:?} of table {:?} holds {}, not numbers",
                table.name,
                f.data_type()
            ));
        }
    }
    Some(r)
}

/// Checks that the period and base are declared, and that their filters and every breakdown
/// cell's are within the size limits: past them a filter is refused here, where its name is
/// known, not in the engine.
fn check_filters(
    study: &Study,
    period: &Result<&catalog::Period, NotFound>,
    base: &Result<&catalog::BaseDef, NotFound>,
    p: &mut Problems,
) {
    let too_large = |what: String, sql: &str| {
        study.oversized(sql).map(|e| format!("{what} of study {:?}: its filter {e}", study.study.name))
    };
    match period {
        Err(e) => p.why.push(e.to_string()),
        Ok(x) => p.why.extend(too_large(format!("period {:?}", x.name), &x.filter)),
    }
    match base {
        Err(e) => p.why.push(e.to_string()),
        Ok(b) => p.why.extend(too_large(format!("base {:?}", b.name), &b.filter)),
    }
    if let Some(e) = study.too_many_cells() {
        p.why.push(format!("study {:?} {e}", study.study.name));
    }
    for (b, cell) in study.cells() {
        p.why.extend(too_large(format!("breakdown {:?} cell {:?}", b.name, cell.name), &cell.filter));
    }
}

/// The cited extractor's measures for the column: the extractor is registered and applies to
/// the column's metadata. `None` also when the column could not be checked (already reported).
fn measures(
    c: &Citation,
    extractor: &Result<&Extractor, NotFound>,
    on: &OnTable,
    p: &mut Problems,
) -> Option<Vec<Measure>> {
    let x = match extractor {
        Err(e) => {
            p.why.push(e.to_string());
            return None;
        }
        Ok(x) => x,
    };
    on.column.as_ref()?;
    match x.expand(&on.meta) {
        Ok(m) => Some(m),
        Err(e) => {
            let e = crate::causes::with_causes(&e);
            p.why.push(format!("{e} (table {:?}, column {:?})", c.source.table, c.source.column));
            None
        }
    }
}

/// A note when the citation says the period was fielded other than when the catalog says: worth
/// knowing, but the period is the catalog's either way.
fn fielded_note(c: &Citation, period: &catalog::Period) -> Option<String> {
    let (Some(claimed), Some(declared)) = (&c.fielded, &period.fielded) else {
        return None;
    };
    (claimed != declared).then(|| {
        format!(
            "the citation says period {:?} was fielded {claimed}, the catalog says {declared}",
            period.name
        )
    })
}
