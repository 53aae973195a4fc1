//! `recite.Catalog`: the data layer a citation is re-run against, as frames: its studies, their
//! tables, periods and bases, and each table's declared columns.

use std::path::PathBuf;

use pyo3::prelude::*;
use serde_json::{Value, json};

use recite_core::catalog::{Catalog as Studies, Study, Table};
use recite_core::report::DataLayer;

use crate::errors::{Error, Kind};
use crate::frame::{Column, Kind::*, col};
use crate::{frame, layer, worker};

/// A data layer: a folder of studies (one `study.toml` each), read as `recite` reads it.
#[pyclass(frozen, module = "recite._recite")]
pub struct Catalog {
    data_layer: DataLayer,
    studies: Studies,
}

const STUDIES: [Column; 8] = [
    col("study", Text, "/s/name"),
    col("aliases", Texts, "/s/aliases"),
    col("description", Text, "/s/description"),
    col("tables", Int, "/tables"),
    col("periods", Int, "/periods"),
    col("bases", Int, "/bases"),
    col("low_base", Int, "/low"),
    col("file", Text, "/file"),
];

const TABLES: [Column; 9] = [
    col("study", Text, "/study"),
    col("table", Text, "/t/name"),
    col("path", Text, "/t/path"),
    col("location", Text, "/location"),
    col("weights", Texts, "/t/weights"),
    col("strata", Text, "/t/design/strata"),
    col("psu", Text, "/t/design/psu"),
    col("replicates", Text, "/t/replicates/method"),
    col("columns", Int, "/columns"),
];

const PERIODS: [Column; 5] = [
    col("study", Text, "/study"),
    col("period", Text, "/p/name"),
    col("aliases", Texts, "/p/aliases"),
    col("filter", Text, "/p/filter"),
    col("fielded", Text, "/p/fielded"),
];

const BASES: [Column; 4] = [
    col("study", Text, "/study"),
    col("base", Text, "/b/name"),
    col("aliases", Texts, "/b/aliases"),
    col("filter", Text, "/b/filter"),
];

const COLUMNS: [Column; 9] = [
    col("study", Text, "/study"),
    col("table", Text, "/table"),
    col("column", Text, "/column"),
    col("label", Text, "/c/label"),
    col("question", Text, "/c/question"),
    col("values", Texts, "/values"),
    col("missing", Texts, "/missing"),
    col("scale_low", Float, "/c/scale/0"),
    col("scale_high", Float, "/c/scale/1"),
];

const PROBLEMS: [Column; 3] =
    [col("file", Text, "/file"), col("names", Texts, "/names"), col("error", Text, "/error")];

impl Catalog {
    fn each_study<'a>(&'a self) -> impl Iterator<Item = &'a Study> + 'a {
        self.studies.studies.iter()
    }

    fn tables<'a>(&'a self) -> impl Iterator<Item = (&'a Study, &'a Table)> + 'a {
        self.each_study().flat_map(|s| s.tables.iter().map(move |t| (s, t)))
    }
}

#[pymethods]
impl Catalog {
    /// Reads the data layer at `path`, or the one `recite` would choose.
    #[new]
    #[pyo3(signature = (path=None))]
    fn new(py: Python<'_>, path: Option<PathBuf>) -> PyResult<Self> {
        let (data_layer, studies) = worker::run(py, move || -> Result<_, Error> {
            let data_layer = layer::choose(path.as_deref());
            let studies = layer::load(&data_layer)?;
            Ok((data_layer, studies))
        })??;
        Ok(Catalog { data_layer, studies })
    }

    /// The folder of studies.
    #[getter]
    fn path(&self) -> String {
        self.data_layer.path.clone()
    }

    /// How it was chosen: `--data` (a path was given), `RECITE_DATA`, `./datasets in the
    /// working directory` or `bundled`.
    #[getter]
    fn source(&self) -> &'static str {
        self.data_layer.source.as_str()
    }

    /// Set when this data layer hides another (a working-directory `./datasets`).
    #[getter]
    fn warning(&self) -> Option<String> {
        self.data_layer.warning.clone()
    }

    /// One row per study.
    fn studies_table(&self, py: Python<'_>) -> PyResult<Py<pyo3_arrow::PyTable>> {
        let rows: Vec<Value> = self
            .each_study()
            .map(|s| {
                json!({"s": s.study, "tables": s.tables.len(), "periods": s.periods.len(), "bases": s.bases.len(),
                       "low": s.thresholds.low, "file": s.file.display().to_string()})
            })
            .collect();
        frame::table(py, &STUDIES, &rows)
    }

    /// One row per table of every study.
    fn tables_table(&self, py: Python<'_>) -> PyResult<Py<pyo3_arrow::PyTable>> {
        let rows: Vec<Value> = self
            .tables()
            .map(|(s, t)| {
                json!({"study": s.study.name, "t": t, "location": t.location(s).display().to_string(),
                       "columns": t.columns.len()})
            })
            .collect();
        frame::table(py, &TABLES, &rows)
    }

    /// One row per period of every study.
    fn periods_table(&self, py: Python<'_>) -> PyResult<Py<pyo3_arrow::PyTable>> {
        let rows: Vec<Value> = (self.each_study())
            .flat_map(|s| s.periods.iter().map(move |p| json!({"study": s.study.name, "p": p})))
            .collect();
        frame::table(py, &PERIODS, &rows)
    }

    /// One row per base of every study.
    fn bases_table(&self, py: Python<'_>) -> PyResult<Py<pyo3_arrow::PyTable>> {
        let rows: Vec<Value> = (self.each_study())
            .flat_map(|s| s.bases.iter().map(move |b| json!({"study": s.study.name, "b": b})))
            .collect();
        frame::table(py, &BASES, &rows)
    }

    /// One row per declared column of `table`; an unknown table is a DataLayerError naming
    /// the nearest declared ones.
    fn columns_table(&self, py: Python<'_>, table: &str) -> PyResult<Py<pyo3_arrow::PyTable>> {
        let Some((s, t)) = self.tables().find(|(_, t)| t.name == table) else {
            let mut suggestions: Vec<String> = self
                .each_study()
                .filter_map(|s| s.table(table).err())
                .flat_map(|nf| nf.suggestions)
                .collect();
            suggestions.dedup();
            let message = format!("unknown table {table:?} in the data layer {}", self.data_layer.path);
            return Err(Error::new(Kind::DataLayer, message).at(table).suggesting(suggestions).into());
        };
        let rows: Vec<Value> = t
            .columns
            .iter()
            .map(|(name, c)| {
                let values: Vec<String> = c.codes().iter().map(|(code, label)| format!("{}={label}", num(*code))).collect();
                let missing: Vec<String> = c.missing.iter().map(|m| num(*m)).collect();
                json!({"study": s.study.name, "table": t.name, "column": name, "c": c, "values": values, "missing": missing})
            })
            .collect();
        frame::table(py, &COLUMNS, &rows)
    }

    /// One row per study file that could not be read (its studies are not in the catalog).
    fn problems_table(&self, py: Python<'_>) -> PyResult<Py<pyo3_arrow::PyTable>> {
        let rows: Vec<Value> = (self.studies.broken.iter())
            .map(|b| json!({"file": b.file.display().to_string(), "names": b.names, "error": b.error}))
            .collect();
        frame::table(py, &PROBLEMS, &rows)
    }
}

/// A code as the catalog shows it (`1`, `2.5`).
fn num(v: f64) -> String {
    recite_core::catalog::num(v)
}
