//! Registering a table's files with DataFusion, once per location and place: on disk (Parquet,
//! CSV, Arrow IPC, SPSS), on object storage, in a Delta table or on a PostgreSQL server.
//! [`Tables`] keeps what is registered and the CSV formats the catalog declared; the engine
//! gives it the runtime to register on and the session (its own, or its cluster's) to
//! register in.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::prelude::{CsvReadOptions, ParquetReadOptions, SessionContext};
use tokio::runtime::Runtime;

use super::EngineError;
use crate::catalog::{self, Study};

pub(super) struct Registered {
    pub(super) name: String,
    pub(super) schema: Arc<Schema>,
    /// The session the table is registered in: this process's, or the cluster's.
    pub(super) ctx: SessionContext,
}

/// Where a scan runs: in this process, or on the engine's Ballista cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Place {
    Here,
    Cluster,
}

/// Why a table on object storage cannot be registered; worded to follow the table's location.
/// A build without `object-store` registers none, so only `Scheme` is made there.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[cfg_attr(not(feature = "object-store"), allow(dead_code))]
pub(super) enum ObjectTableError {
    /// The scheme is not one recite reads, or this build reads none (recite_core::redact's
    /// words, which say how to build one that does).
    #[error("{0}")]
    Scheme(String),
    /// An SPSS file, which recite reads from disk only.
    #[error(
        "is an SPSS file on object storage, which recite cannot read: it reads .sav and .zsav files \
         from disk only (copy the file to disk, or convert it to Parquet)"
    )]
    Sav,
    /// A CSV file that must be converted, which recite does from disk only.
    #[error(
        "is a CSV table with a declared encoding or decimal comma, which recite converts from a \
         file on disk only (copy the file to disk)"
    )]
    Converted,
    /// The store could not be set up or listed (its words, secrets redacted).
    #[error("{0}")]
    Store(String),
    /// The listing could not be read.
    #[error("cannot be read: {0}")]
    Unlisted(String),
    /// A folder or glob that matches no object of the table's extension.
    #[error("cannot be read: no {extension} object matches it")]
    NoMatch {
        /// The extension listed (`.parquet`, `.csv`, …).
        extension: String,
    },
    /// One object that does not exist.
    #[error("cannot be read: no such object")]
    NoObject,
    /// DataFusion could not read the objects (its words).
    #[error("cannot be read: {0}")]
    Unreadable(String),
    /// The declared CSV format is not one the reader takes.
    #[error("{0}")]
    Format(String),
}

/// How a table's files are read, told once from its location (and, for CSV, the format the
/// catalog declared): each kind's reader is set up in one place on disk
/// ([`Tables::register_file`]) and one on object storage (`Tables::register_object`).
enum Format {
    /// One SPSS `.sav` or `.zsav` file (`crate::sav`).
    Sav,
    /// Arrow IPC files; the extension, as written, selects the files a glob or folder lists.
    Arrow(String),
    /// CSV files in the declared format (comma-separated, with a header, when none is).
    Csv(Option<catalog::CsvFormat>),
    /// Parquet files: one, a glob's, or a (hive-partitioned) folder's.
    Parquet,
}

impl Format {
    /// The format of the files at `path` (spelled `text`); `declared` is asked only for CSV.
    fn of(path: &Path, text: &str, declared: impl FnOnce() -> Option<catalog::CsvFormat>) -> Format {
        if crate::sav::is_sav(path) {
            return Format::Sav;
        }
        match listing_extension(text) {
            ".csv" => Format::Csv(declared()),
            ".parquet" => Format::Parquet,
            ext => Format::Arrow(ext.to_string()),
        }
    }
}

/// The file extension a listing of a table's folder, glob or objects keeps: the location's
/// Arrow IPC extension as written, `.csv`, else `.parquet`.
pub(super) fn listing_extension(location: &str) -> &str {
    let lower = location.to_lowercase();
    if let Some(ext) = [".arrow", ".feather", ".ipc"].into_iter().find(|e| lower.ends_with(e)) {
        return &location[location.len() - ext.len()..];
    }
    if lower.ends_with(".csv") { ".csv" } else { ".parquet" }
}

/// The CSV reader's options for a declared format (comma-separated, with a header, when none).
fn csv_options(declared: Option<&catalog::CsvFormat>) -> datafusion::error::Result<CsvReadOptions<'static>> {
    let (delimiter, header) = match declared {
        Some(f) => (csv_delimiter(&f.delimiter)?, f.header),
        None => (b',', true),
    };
    Ok(CsvReadOptions::new().has_header(header).delimiter(delimiter).schema_infer_max_records(1_000_000))
}

/// A declared CSV delimiter as the one byte the reader takes (`\t` spelled out is a tab).
fn csv_delimiter(d: &str) -> datafusion::error::Result<u8> {
    match d {
        "\\t" | "\t" => Ok(b'\t'),
        d if d.len() == 1 && d.is_ascii() => Ok(d.as_bytes()[0]),
        d => Err(datafusion::error::DataFusionError::Plan(format!(
            "the declared CSV delimiter {d:?} is not one ASCII character"
        ))),
    }
}

/// The hive partition columns of a folder (`wave=6/region=2/…`), read down its first branch:
/// whole-number partitions (in every folder of that level) are Int64, others text.
fn hive_partitions(folder: &Path) -> Vec<(String, DataType)> {
    let mut columns = Vec::new();
    let mut dir = folder.to_path_buf();
    loop {
        let Ok(entries) = std::fs::read_dir(&dir) else { break };
        let mut level: Vec<(String, String, PathBuf)> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().to_string();
                let (k, v) = n.split_once('=')?;
                Some((k.to_string(), v.to_string(), e.path()))
            })
            .collect();
        level.sort_by(|a, b| a.2.cmp(&b.2));
        let Some((key, _, next)) = level.first().cloned() else { break };
        if level.iter().any(|(k, _, _)| *k != key) {
            break;
        }
        let whole = level.iter().all(|(_, v, _)| v.parse::<i64>().is_ok());
        columns.push((key, if whole { DataType::Int64 } else { DataType::Utf8 }));
        dir = next;
    }
    columns
}

/// Most fields in one batch of a CSV scan. Arrow's CSV reader decodes every field of a row
/// whatever the scan projects, and sizes its buffers for a whole batch up front: 16 bytes a
/// field, so at DataFusion's 8,192 rows a batch about 130 KB a column (a 20,000-column CSV took
/// 2.7 GB to read one row). Wider tables get fewer rows a batch: a reader then holds at most
/// about 16 MB, whatever the width.
pub const CSV_CELLS: usize = 1 << 20;

/// The schema DataFusion infers for the one CSV file at `path`, as its listing table would
/// (the same format, options and stream of whole lines), without the merge of the files'
/// schemas that follows: arrow's `Schema::try_merge` looks each field up among those before it,
/// which took most of `verify`'s time on a 45,000-column file (quadratic in the columns).
async fn csv_schema(
    ctx: &SessionContext,
    path: &str,
    opts: &CsvReadOptions<'_>,
) -> datafusion::error::Result<Schema> {
    use datafusion::datasource::file_format::csv::CsvFormat;
    use datafusion::datasource::file_format::options::ReadOptions;
    use datafusion::datasource::listing::ListingTableUrl;
    use datafusion::error::DataFusionError;
    use datafusion::object_store::ObjectStoreExt;
    use futures::{StreamExt, TryStreamExt};
    let listing = opts.to_listing_options(&ctx.copied_config(), ctx.copied_table_options());
    let format: &dyn std::any::Any = listing.format.as_ref();
    let Some(format) = format.downcast_ref::<CsvFormat>() else {
        return Err(DataFusionError::Internal("CSV read options without a CSV format".into()));
    };
    let url = ListingTableUrl::parse(path)?;
    let store = ctx.runtime_env().object_store(url.object_store())?;
    let bytes = store
        .get(url.prefix())
        .await?
        .into_stream()
        .map_err(|e| DataFusionError::ObjectStore(Box::new(e)))
        .boxed();
    let lines = format.read_to_delimited_chunks_from_stream(bytes);
    let records = format.options().schema_infer_max_rec.unwrap_or(1_000_000);
    let (schema, _) = format.infer_schema_from_stream(&ctx.state(), records, lines).await?;
    Ok(schema)
}

/// `state` with batches of at most [`CSV_CELLS`] fields of a table `width` columns wide (at
/// least one row).
fn narrow_batches(
    mut state: datafusion::execution::SessionState,
    width: usize,
) -> datafusion::execution::SessionState {
    let rows = (CSV_CELLS / width.max(1)).clamp(1, state.config().batch_size().max(1));
    *state.config_mut() = state.config().clone().with_batch_size(rows);
    state
}

/// The tables an engine registered with DataFusion, by location and [`Place`], and the CSV
/// formats the catalog declared for them, by location: what registering a table needs beside
/// the runtime and the session the engine passes.
pub(super) struct Tables {
    registered: Mutex<HashMap<(PathBuf, Place), Arc<Registered>>>,
    /// CSV formats declared by the catalog, by table location (see [`Tables::declare`]).
    csv: Mutex<HashMap<PathBuf, catalog::CsvFormat>>,
}

impl Tables {
    /// No table registered, no format declared.
    pub(super) fn new() -> Tables {
        Tables { registered: Mutex::new(HashMap::new()), csv: Mutex::new(HashMap::new()) }
    }

    /// Registers a table's files (once) for scans at `place`, in `ctx` (this process's session,
    /// or the cluster's for [`Place::Cluster`]) on `rt`, and returns its internal name and schema.
    pub(super) fn register(
        &self,
        rt: &Runtime,
        ctx: &SessionContext,
        location: &Path,
        place: Place,
    ) -> Result<Arc<Registered>, EngineError> {
        let table_error = |error: String| EngineError::Table { location: location.to_path_buf(), error };
        let mut tables =
            self.registered.lock().map_err(|_| EngineError::Internal("engine state poisoned".into()))?;
        let key = (location.to_path_buf(), place);
        if let Some(r) = tables.get(&key) {
            return Ok(r.clone());
        }
        let ctx = ctx.clone();
        let text = location.to_string_lossy().to_string();
        let name = format!("t{}", tables.len());
        // CSV readers decode every column of a row, whatever the scan reads (see CSV_CELLS).
        let csv = crate::objstore::without_query(&text).to_lowercase().ends_with(".csv");
        if crate::postgres::is_location(&text) {
            // On a PostgreSQL server: scans pushed down to it, one query per scan.
            register_postgres(rt, &ctx, &name, &text).map_err(|e| table_error(e.to_string()))?;
            return registered(rt, ctx, &mut tables, key, name, false);
        }
        if let Some(scheme) = catalog::url_scheme(&text) {
            // On object storage: never joined onto the study folder, never looked up on disk.
            self.register_object(rt, &ctx, &name, location, &scheme)
                .map_err(|e| table_error(e.to_string()))?;
            return registered(rt, ctx, &mut tables, key, name, csv);
        }
        if let Some((root, version)) = crate::delta::of_location(location) {
            // A Delta table, at the version its commit file names (or the latest).
            register_delta(rt, &ctx, &name, &root, version).map_err(|e| table_error(e.to_string()))?;
            return registered(rt, ctx, &mut tables, key, name, false);
        }
        let is_glob = text.contains(['*', '?', '[']);
        if !is_glob && !location.exists() {
            return Err(table_error("cannot be read: the file does not exist".into()));
        }
        let result = rt.block_on(self.register_file(&ctx, &name, location, &text, is_glob));
        result.map_err(|e| table_error(format!("cannot be read: {}", e.strip_backtrace())))?;
        registered(rt, ctx, &mut tables, key, name, csv)
    }

    /// Registers a table's files on disk as `name` in `ctx`, read as their [`Format`] says.
    async fn register_file(
        &self,
        ctx: &SessionContext,
        name: &str,
        location: &Path,
        text: &str,
        is_glob: bool,
    ) -> datafusion::error::Result<()> {
        use datafusion::error::DataFusionError;
        match Format::of(location, text, || self.declared_csv(location)) {
            Format::Sav if is_glob => {
                Err(DataFusionError::Plan("an SPSS table names one .sav or .zsav file, not a glob".into()))
            }
            Format::Sav => {
                let table = crate::sav::SavTable::open(location)
                    .map_err(|e| DataFusionError::Execution(e.to_string()))?;
                ctx.register_table(name, Arc::new(table)).map(|_| ())
            }
            Format::Arrow(ext) => {
                let opts = datafusion::datasource::file_format::options::ArrowReadOptions {
                    file_extension: &ext,
                    ..Default::default()
                };
                ctx.register_arrow(name, text, opts).await
            }
            Format::Csv(format) => {
                let opts = csv_options(format.as_ref())?;
                match format.filter(|f| f.needs_transcoding()) {
                    // Another encoding or a decimal comma: the reader takes a converted copy.
                    Some(_) if is_glob => Err(DataFusionError::Plan(
                        "a CSV table with a declared encoding or decimal comma names one file, not a glob"
                            .into(),
                    )),
                    Some(f) => {
                        let copy = crate::transcode::cached_copy(location, &f, opts.delimiter)
                            .map_err(|e| DataFusionError::Execution(e.to_string()))?;
                        let copy = copy.to_string_lossy();
                        let schema = csv_schema(ctx, &copy, &opts).await?;
                        ctx.register_csv(name, &copy, opts.schema(&schema)).await
                    }
                    // One file: its schema inferred here, in time linear in its columns.
                    None if !is_glob => {
                        let schema = csv_schema(ctx, text, &opts).await?;
                        ctx.register_csv(name, text, opts.schema(&schema)).await
                    }
                    None => ctx.register_csv(name, text, opts).await,
                }
            }
            Format::Parquet if location.is_dir() => {
                // A folder of Parquet files, hive-partitioned (`wave=6/part-0.parquet`): the
                // partition columns are columns, and a filter on them skips whole folders.
                let opts = ParquetReadOptions::default().table_partition_cols(hive_partitions(location));
                let folder = if text.ends_with('/') { text.to_string() } else { format!("{text}/") };
                ctx.register_parquet(name, &folder, opts).await
            }
            Format::Parquet => ctx.register_parquet(name, text, ParquetReadOptions::default()).await,
        }
    }

    /// The CSV format the catalog declared for a table ([`Tables::declare`]), if any.
    pub(super) fn declared_csv(&self, location: &Path) -> Option<catalog::CsvFormat> {
        self.csv.lock().ok().and_then(|m| m.get(location).cloned())
    }

    /// Registers a table on object storage as `name` (`objstore`): its store, built from the
    /// environment, on this session's runtime, then a listing table over its objects. An SPSS
    /// file, or a CSV file that needs converting, must be on disk.
    #[cfg(feature = "object-store")]
    fn register_object(
        &self,
        rt: &Runtime,
        ctx: &SessionContext,
        name: &str,
        location: &Path,
        scheme: &str,
    ) -> Result<(), ObjectTableError> {
        use datafusion::datasource::file_format::options::{ArrowReadOptions, ReadOptions};
        use datafusion::datasource::listing::{ListingTable, ListingTableConfig};
        let text = location.to_string_lossy();
        let text = crate::objstore::without_query(&text);
        if !crate::objstore::SCHEMES.contains(&scheme) {
            return Err(ObjectTableError::Scheme(crate::objstore::unsupported(scheme)));
        }
        let format = Format::of(Path::new(&*text), &text, || self.declared_csv(location));
        if let Format::Sav = format {
            return Err(ObjectTableError::Sav);
        }
        let url = crate::objstore::listing_url(&text).map_err(|e| ObjectTableError::Store(e.error))?;
        let runtime = ctx.runtime_env();
        crate::objstore::register_stores(&runtime, url.get_url())
            .map_err(|e| ObjectTableError::Store(e.error))?;
        let (config, table_options) = (ctx.copied_config(), ctx.copied_table_options());
        let extension = listing_extension(&text);
        let mut options = match &format {
            Format::Csv(declared) => {
                if declared.as_ref().is_some_and(|f| f.needs_transcoding()) {
                    return Err(ObjectTableError::Converted);
                }
                csv_options(declared.as_ref())
                    .map_err(|e| ObjectTableError::Format(e.strip_backtrace()))?
                    .to_listing_options(&config, table_options)
            }
            Format::Arrow(ext) => ArrowReadOptions { file_extension: ext, ..Default::default() }
                .to_listing_options(&config, table_options),
            // (An SPSS file was refused above.)
            Format::Parquet | Format::Sav => {
                ParquetReadOptions::default().to_listing_options(&config, table_options)
            }
        };
        let state = ctx.state();
        let ignore = state.config_options().execution.listing_table_ignore_subdirectory;
        let objects = rt
            .block_on(crate::objstore::objects(&runtime, &url, extension, ignore))
            .map_err(|e| ObjectTableError::Unlisted(e.error))?;
        if objects.is_empty() {
            return Err(if url.is_collection() {
                ObjectTableError::NoMatch { extension: extension.to_string() }
            } else {
                ObjectTableError::NoObject
            });
        }
        if url.is_collection() {
            options = options.with_table_partition_cols(crate::objstore::hive_partitions(&url, &objects));
        }
        let url = url.with_table_ref(name.into());
        rt.block_on(async {
            let schema = options.infer_schema(&state, &url).await?;
            let config = ListingTableConfig::new(url).with_listing_options(options).with_schema(schema);
            let table =
                ListingTable::try_new(config)?.with_cache(runtime.cache_manager.get_file_statistic_cache());
            ctx.register_table(name, Arc::new(table)).map(|_| ())
        })
        .map_err(|e| ObjectTableError::Unreadable(e.strip_backtrace()))
    }

    /// Without the `object-store` feature a URL location is an error that says how to build
    /// a recite that reads it.
    #[cfg(not(feature = "object-store"))]
    fn register_object(
        &self,
        _rt: &Runtime,
        _ctx: &SessionContext,
        _name: &str,
        _location: &Path,
        scheme: &str,
    ) -> Result<(), ObjectTableError> {
        Err(ObjectTableError::Scheme(if crate::objstore::SCHEMES.contains(&scheme) {
            crate::objstore::not_built(scheme)
        } else {
            crate::objstore::unsupported(scheme)
        }))
    }

    /// Remembers how a table's files are written (a CSV format), before its first use.
    pub(super) fn declare(&self, study: &Study, table: &catalog::Table) {
        if let (Some(format), Ok(mut m)) = (&table.csv, self.csv.lock()) {
            m.insert(table.location(study), format.clone());
        }
    }
}

/// The schema of the table just registered as `name` in `ctx`, remembered under `key`. A
/// `csv` table wider than [`CSV_CELLS`] allows at the session's batch size is scanned in a
/// session of its own (the same catalog, runtime and, on a cluster, the same Ballista
/// session) whose batches hold fewer rows.
fn registered(
    rt: &Runtime,
    mut ctx: SessionContext,
    tables: &mut HashMap<(PathBuf, Place), Arc<Registered>>,
    key: (PathBuf, Place),
    name: String,
    csv: bool,
) -> Result<Arc<Registered>, EngineError> {
    let schema = rt
        .block_on(ctx.table(name.as_str()))
        .map_err(|e| EngineError::Table {
            location: key.0.clone(),
            error: format!("cannot be read: {}", e.strip_backtrace()),
        })?
        .schema()
        .as_arrow()
        .clone();
    let rows = ctx.state().config().batch_size();
    if csv && schema.fields().len().saturating_mul(rows) > CSV_CELLS {
        ctx = SessionContext::new_with_state(narrow_batches(ctx.state(), schema.fields().len()));
    }
    let reg = Arc::new(Registered { name, schema: Arc::new(schema), ctx });
    tables.insert(key, reg.clone());
    Ok(reg)
}

/// Registers a version of a Delta table (`None`: the latest) as `name` in `ctx`.
#[cfg(feature = "delta")]
fn register_delta(
    rt: &Runtime,
    ctx: &SessionContext,
    name: &str,
    root: &Path,
    version: Option<u64>,
) -> Result<(), crate::delta::VersionError> {
    rt.block_on(crate::delta::register(ctx, name, root, version))
}

/// Without the `delta` feature a Delta table is refused, saying how to build a recite that
/// reads it (its folder is never read as plain Parquet: it keeps every version's files).
#[cfg(not(feature = "delta"))]
fn register_delta(
    _rt: &Runtime,
    _ctx: &SessionContext,
    _name: &str,
    _root: &Path,
    _version: Option<u64>,
) -> Result<(), crate::delta::VersionError> {
    Err(crate::delta::VersionError::NotBuilt)
}

/// Registers the PostgreSQL table `location` names as `name` in `ctx`.
#[cfg(feature = "postgres")]
fn register_postgres(
    rt: &Runtime,
    ctx: &SessionContext,
    name: &str,
    location: &str,
) -> Result<(), crate::postgres::PostgresError> {
    let source = crate::postgres::Source::of_location(location)?;
    rt.block_on(crate::postgres::register(ctx, name, &source))
}

/// Without the `postgres` feature a PostgreSQL table is refused, saying how to build a
/// recite that reads it.
#[cfg(not(feature = "postgres"))]
fn register_postgres(
    _rt: &Runtime,
    _ctx: &SessionContext,
    _name: &str,
    _location: &str,
) -> Result<(), crate::postgres::PostgresError> {
    Err(crate::postgres::PostgresError::NotBuilt)
}
