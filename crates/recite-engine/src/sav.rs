//! SPSS `.sav` and `.zsav` tables: read with [`ambers`], streamed into DataFusion.
//!
//! ambers decodes onto arrow 57; DataFusion 55 is on arrow 59. Each decoded batch crosses as
//! Arrow IPC stream bytes: written by arrow-ipc 57, decoded by DataFusion's own arrow-ipc (which
//! takes the bytes' buffer without a second copy). The C Data Interface would avoid that one
//! copy but needs arrow's `ffi` feature on DataFusion's arrow-data and arrow-schema, which
//! rebuilds the whole DataFusion tree; the copy costs little beside decoding (see BENCHMARKS.md).
//!
//! A scan reads only the columns the plan needs (ambers' projection), in batches, on a blocking
//! thread feeding a bounded channel, so a file is never held decoded in memory. A
//! bytecode-compressed `.sav`, which ambers would read whole, is decompressed by `sav/bytecode.rs` as
//! ambers reads it, so every kind of SPSS file streams.
//!
//! Every open and scan is isolated: a file recite's checks let through and ambers still panics
//! on fails only its own table (its claims UNVERIFIABLE), never the batch. The checks
//! (`sav/bytecode.rs`) are the fix; catching the panic is the last line.
//!
//! The file's dictionary (variable labels, value labels, user-missing codes and ranges) is read
//! by [`dictionary`] and becomes the catalog's column metadata where `study.toml` does not say
//! otherwise ([`adopt_dictionaries`]; `catalog::Study::parse` itself reads no file).

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ambers::{MissingSpec, SpssMetadata, Value};
use async_trait::async_trait;
use datafusion::arrow::array::{RecordBatch, RecordBatchOptions};
use datafusion::arrow::buffer::Buffer;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::ipc::reader::{StreamDecoder, StreamReader};
use datafusion::catalog::{Session, TableProvider};
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, TableType};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::stream::RecordBatchReceiverStreamBuilder;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};

use crate::catalog::{Catalog, Column, Study, url_scheme};

/// Rows decoded per batch: large enough that the per-batch bridge is noise, small enough that
/// a wide projection stays a few MiB.
const BATCH_ROWS: usize = 65_536;
/// At most this many bytes of whole rows per batch: ambers reads a batch's rows, every column
/// of them, into one buffer before picking the wanted columns.
const BATCH_BYTES: u64 = 16 << 20;
/// Decoded batches waiting for the plan: the reader stays at most this far ahead.
const QUEUE: usize = 2;

pub use crate::catalog::is_sav;

/// The catalog of a chosen data layer ([`load_catalog`]); a layer that is a file, or a folder
/// that cannot be read, is an error (a missing folder is an empty catalog).
pub fn load_layer(layer: &recite_core::report::DataLayer) -> Result<Catalog, LayerError> {
    let root = Path::new(&layer.path);
    match std::fs::metadata(root) {
        Ok(m) if !m.is_dir() => return Err(LayerError::NotAFolder(layer.path.clone())),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(LayerError::Unreadable { folder: layer.path.clone(), error: e });
        }
        _ => {}
    }
    Ok(load_catalog(root)?)
}

/// Why a data layer could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LayerError {
    /// The layer names a file.
    #[error("data folder {0} is a file, not a folder (set --data DIR or RECITE_DATA)")]
    NotAFolder(String),
    /// The folder cannot be looked at.
    #[error("cannot read data folder {folder}: {error}")]
    Unreadable {
        /// The folder.
        folder: String,
        /// The system's error.
        error: std::io::Error,
    },
    /// The catalog in it cannot be loaded.
    #[error(transparent)]
    Catalog(#[from] crate::catalog::LoadError),
}

/// Every study of the data layer at `root` ([`Catalog::load`]), with each SPSS table's columns
/// completed from its file's dictionary ([`adopt_dictionaries`]): what the commands use.
pub fn load_catalog(root: &Path) -> Result<Catalog, crate::catalog::LoadError> {
    let mut catalog = Catalog::load(root)?;
    catalog.studies.iter_mut().for_each(adopt_dictionaries);
    Ok(catalog)
}

/// Column metadata from the study's SPSS files (variable labels, value labels, user-missing
/// codes) wherever `study.toml` does not declare it. A file that cannot be read is left alone
/// here: the engine reports it when the table is used.
pub fn adopt_dictionaries(study: &mut Study) {
    let dir = study.dir().to_path_buf();
    for t in &mut study.tables {
        // An SPSS file on object storage is refused by the engine, which says why.
        if !is_sav(Path::new(&t.path)) || url_scheme(&t.path).is_some() {
            continue;
        }
        let Ok(dict) = dictionary(&dir.join(&t.path)) else { continue };
        adopt(&mut t.columns, &dict, &t.declared_keys);
        t.columns_changed();
    }
}

mod bytecode;

/// Why an SPSS file cannot be read; worded to follow the file's path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SavError {
    /// The file cannot be opened or read (the system's words).
    #[error("cannot be read: {0}")]
    Unreadable(String),
    /// Its header, dictionary or layout does not hold (where and why, from the layout check).
    #[error("{0}")]
    Layout(String),
    /// The SPSS reader refuses it (its words).
    #[error("is not a readable SPSS file: {0}")]
    NotSav(String),
    /// The SPSS reader panicked on it (the panic's message).
    #[error("is not a readable SPSS file: its reader failed on it ({0})")]
    ReaderFailed(String),
    /// The reader failed while it read the rows (its words: a damaged data section says where).
    #[error("{0}")]
    Rows(String),
    /// Its batches cannot be passed from the reader's arrow to DataFusion's (arrow's words).
    #[error("cannot be bridged to DataFusion: {0}")]
    Bridge(String),
}

type Scanner = ambers::Scanner<bytecode::SavSource>;

fn open(path: &Path, batch_rows: usize) -> Result<Scanner, SavError> {
    let file = File::open(path).map_err(|e| SavError::Unreadable(e.to_string()))?;
    // A bytecode-compressed file is decompressed as ambers reads it (ambers alone would hold
    // the whole compressed data section in memory); other files go to ambers as they are,
    // once their dictionary (and a .zsav's trailer) has been checked against the file.
    let source = bytecode::SavSource::open(file).map_err(|e| SavError::Layout(e.to_string()))?;
    // Rows a batch holds: within BATCH_BYTES however wide a row is (one row at the least).
    let rows = source.row_bytes().map_or(batch_rows, |b| batch_rows.min((BATCH_BYTES / b).max(1) as usize));
    isolated(|| ambers::scan_sav_from_reader(source, rows))?.map_err(|e| SavError::NotSav(reason(e)))
}

/// Runs `f` (a call into ambers), turning a panic into an error: a file that makes ambers
/// panic fails its own table only.
fn isolated<T>(f: impl FnOnce() -> T) -> Result<T, SavError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".into());
        SavError::ReaderFailed(why)
    })
}

/// What went wrong, in words: a damaged data section says where, without ambers' "I/O error".
fn reason(e: ambers::error::SpssError) -> String {
    match e {
        ambers::error::SpssError::Io(io) if io.kind() == std::io::ErrorKind::InvalidData => io.to_string(),
        other => other.to_string(),
    }
}

/// An SPSS file's dictionary, as the catalog sees it.
#[derive(Debug, Clone, Default)]
pub struct Dictionary {
    /// The file label.
    pub file_label: String,
    /// Every variable in file order, with what the file says about it.
    pub columns: Vec<(String, Column)>,
    /// Variables that hold text (their value labels and missing codes are not numbers).
    pub text: Vec<String>,
    /// The weight variable SPSS has switched on in the file (`WEIGHT BY`), if any.
    pub weight: Option<String>,
}

/// Reads the dictionary of a `.sav` / `.zsav` file (no data is decoded).
pub fn dictionary(path: &Path) -> Result<Dictionary, SavError> {
    let scanner = open(path, 1)?;
    Ok(dictionary_of(scanner.metadata()))
}

fn dictionary_of(meta: &SpssMetadata) -> Dictionary {
    let mut d = Dictionary {
        file_label: meta.file_label.trim().to_string(),
        weight: meta.weight_variable.clone(),
        ..Dictionary::default()
    };
    for name in &meta.variable_names {
        let text = meta.arrow_data_types.get(name).is_some_and(|t| t.contains("Utf8"));
        let mut c =
            Column { label: meta.label(name).unwrap_or_default().trim().to_string(), ..Column::default() };
        if text {
            d.text.push(name.clone());
        } else {
            if let Some(labels) = meta.value_labels(name) {
                for (v, l) in labels {
                    if let Value::Numeric(x) = v {
                        c.values.insert(code_key(*x), l.trim().to_string());
                    }
                }
            }
            for spec in meta.variable_missing_values.get(name).into_iter().flatten() {
                match spec {
                    MissingSpec::Value(x) => c.missing.push(*x),
                    MissingSpec::Range { lo, hi } => c.missing_ranges.push([*lo, *hi]),
                    MissingSpec::StringValue(_) => {}
                }
            }
        }
        d.columns.push((name.clone(), c));
    }
    d
}

/// A code as a `values` key: integers without a decimal point, as people write them.
pub fn code_key(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 { format!("{}", x as i64) } else { format!("{x}") }
}

/// Arrow IPC from ambers' arrow to DataFusion's: one writer and one decoder per scan, so the
/// schema crosses once and each batch is one message.
struct Bridge {
    writer: arrow_57::ipc::writer::StreamWriter<Vec<u8>>,
    decoder: StreamDecoder,
    /// Bytes of the last message: the next one is written into that much room, not grown into.
    last: usize,
}

impl Bridge {
    fn new(schema: &arrow_57::datatypes::Schema) -> Result<Bridge, SavError> {
        let writer = arrow_57::ipc::writer::StreamWriter::try_new(Vec::new(), schema)
            .map_err(|e| SavError::Bridge(e.to_string()))?;
        Ok(Bridge { writer, decoder: StreamDecoder::new(), last: 0 })
    }

    fn convert(&mut self, batch: &arrow_57::record_batch::RecordBatch) -> Result<RecordBatch, SavError> {
        let fail = |e: &dyn std::fmt::Display| SavError::Bridge(e.to_string());
        self.writer.get_mut().reserve(self.last);
        self.writer.write(batch).map_err(|e| fail(&e))?;
        // DataFusion's decoder takes the bytes as they are: the batch's arrays point into them.
        let mut bytes = Buffer::from(std::mem::take(self.writer.get_mut()));
        self.last = bytes.len();
        let mut out = None;
        while !bytes.is_empty() {
            if let Some(b) = self.decoder.decode(&mut bytes).map_err(|e| fail(&e))? {
                out = Some(b);
            }
        }
        out.ok_or_else(|| fail(&"no batch came through"))
    }
}

/// The schema of an SPSS file in DataFusion's arrow.
fn schema_of(scanner: &Scanner) -> Result<SchemaRef, SavError> {
    let schema = scanner.schema();
    let bridge = |e: &dyn std::fmt::Display| SavError::Bridge(e.to_string());
    let mut w = arrow_57::ipc::writer::StreamWriter::try_new(Vec::new(), &schema).map_err(|e| bridge(&e))?;
    w.finish().map_err(|e| bridge(&e))?;
    let bytes = w.into_inner().map_err(|e| bridge(&e))?;
    let reader = StreamReader::try_new(std::io::Cursor::new(bytes), None).map_err(|e| bridge(&e))?;
    Ok(reader.schema())
}

/// A `.sav` / `.zsav` file as a DataFusion table.
#[derive(Debug)]
pub struct SavTable {
    path: PathBuf,
    schema: SchemaRef,
}

impl SavTable {
    /// Opens the file and reads its schema (its dictionary, not its data).
    pub fn open(path: &Path) -> Result<SavTable, SavError> {
        let scanner = open(path, 1)?;
        Ok(SavTable { path: path.to_path_buf(), schema: schema_of(&scanner)? })
    }
}

#[async_trait]
impl TableProvider for SavTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let schema = match projection {
            Some(p) => Arc::new(self.schema.project(p)?),
            None => self.schema.clone(),
        };
        let partition = SavPartition { path: self.path.clone(), schema: schema.clone(), limit };
        Ok(Arc::new(StreamingTableExec::try_new(schema, vec![Arc::new(partition)], None, [], false, limit)?))
    }
}

/// One scan of an SPSS file: the projected columns, decoded on a blocking thread.
#[derive(Debug)]
struct SavPartition {
    path: PathBuf,
    schema: SchemaRef,
    limit: Option<usize>,
}

impl PartitionStream for SavPartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let mut builder = RecordBatchReceiverStreamBuilder::new(self.schema.clone(), QUEUE);
        let tx = builder.tx();
        let (path, schema, limit) = (self.path.clone(), self.schema.clone(), self.limit);
        builder.spawn_blocking(move || {
            let error = |e: SavError| DataFusionError::External(format!("{}: {e}", path.display()).into());
            isolated(|| scan(&path, &schema, limit, &tx)).map_err(error)?
        });
        builder.build()
    }
}

/// One scan of the file at `path`: its `schema` columns, batch by batch into `tx`.
fn scan(
    path: &Path,
    schema: &SchemaRef,
    limit: Option<usize>,
    tx: &tokio::sync::mpsc::Sender<DfResult<RecordBatch>>,
) -> DfResult<()> {
    let error = |e: SavError| DataFusionError::External(format!("{}: {e}", path.display()).into());
    let mut scanner = open(path, BATCH_ROWS).map_err(error)?;
    // No column wanted (COUNT(*)): decode the first one, for its row count. Every column in
    // file order: no projection (ambers looks each name up, a step per column per column).
    let wanted: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let names = &scanner.metadata().variable_names;
    let first = names.first().cloned().unwrap_or_default();
    let every =
        !wanted.is_empty() && wanted.len() == names.len() && wanted.iter().zip(names).all(|(w, n)| w == n);
    let select: Vec<&str> = if wanted.is_empty() { vec![first.as_str()] } else { wanted };
    if !every {
        scanner.select(&select).map_err(|e| error(SavError::Rows(reason(e))))?;
    }
    if let Some(n) = limit {
        scanner.limit(n);
    }
    let mut bridge = Bridge::new(&scanner.schema()).map_err(error)?;
    while let Some(batch) = scanner.next_batch().map_err(|e| error(SavError::Rows(reason(e))))? {
        let out = if schema.fields().is_empty() {
            let opts = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
            RecordBatch::try_new_with_options(schema.clone(), vec![], &opts)?
        } else {
            let b = bridge.convert(&batch).map_err(error)?;
            RecordBatch::try_new(schema.clone(), b.columns().to_vec())?
        };
        if tx.blocking_send(Ok(out)).is_err() {
            break; // the plan stopped reading (a limit, an error elsewhere)
        }
    }
    Ok(())
}

/// Fills `columns` from an SPSS dictionary where `study.toml` does not declare them:
/// `declared` names, per column, the keys `study.toml` wrote. A column's `missing` and
/// `missing_ranges` are one declaration: declaring either replaces the file's missing codes.
pub fn adopt(
    columns: &mut BTreeMap<String, Column>,
    dict: &Dictionary,
    declared: &BTreeMap<String, Vec<String>>,
) {
    for (name, file) in &dict.columns {
        let keys = declared.get(name).map(Vec::as_slice).unwrap_or_default();
        let has = |k: &str| keys.iter().any(|d| d == k);
        let c = columns.entry(name.clone()).or_default();
        if !has("label") {
            c.label = file.label.clone();
        }
        if !has("values") {
            c.values = file.values.clone();
        }
        if !has("missing") && !has("missing_ranges") {
            c.missing = file.missing.clone();
            c.missing_ranges = file.missing_ranges.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sav").join(name)).unwrap()
    }

    /// Where a `.zsav`'s zlib header starts: it opens with its own offset, as an i64.
    fn zheader_at(b: &[u8]) -> usize {
        (176..b.len() - 8)
            .find(|&i| i64::from_le_bytes(b[i..i + 8].try_into().unwrap()) == i as i64)
            .expect("a zlib header")
    }

    fn le32(v: i32) -> Vec<u8> {
        v.to_le_bytes().to_vec()
    }

    fn put(b: &mut [u8], at: usize, bytes: &[u8]) {
        b[at..at + bytes.len()].copy_from_slice(bytes);
    }

    /// Why opening `bytes` (as a file named `name`) fails; the dictionary and the table
    /// open say the same.
    fn refusal(name: &str, bytes: &[u8]) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let e = dictionary(&path).err().unwrap_or_else(|| panic!("{name}: read"));
        assert_eq!(SavTable::open(&path).err().as_ref(), Some(&e), "{name}");
        e.to_string()
    }

    /// Rows of every column of `path`, as a scan reads them.
    fn rows_scanned(path: &Path) -> DfResult<usize> {
        let table = SavTable::open(path).map_err(|e| DataFusionError::Execution(e.to_string()))?;
        let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
        scan(path, &table.schema, None, &tx)?;
        drop(tx);
        let mut rows = 0;
        while let Ok(b) = rx.try_recv() {
            rows += b?.num_rows();
        }
        Ok(rows)
    }

    #[test]
    fn hostile_zsav_trailer_is_refused_before_ambers_allocates() {
        let good = fixture("labelled.zsav");
        let zh = zheader_at(&good);
        let trailer = i64::from_le_bytes(good[zh + 8..zh + 16].try_into().unwrap()) as usize;
        let entry = trailer + 24; // the first block's entry
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("good.zsav"), &good).unwrap();
        assert_eq!(rows_scanned(&dir.path().join("good.zsav")).unwrap(), 240);
        // (what, where to patch, the bytes written there, what the refusal says, the byte it names)
        let cases: Vec<(&str, usize, Vec<u8>, String, usize)> = vec![
            // ambers: `vec![0; -5 as usize]`, a capacity-overflow panic.
            ("negative block", entry + 16, le32(-5), "declares -5 bytes uncompressed".into(), entry),
            // ambers: a 2 GB buffer for a 4 KB file.
            (
                "huge blocks",
                trailer + 16,
                le32(i32::MAX),
                format!("blocks of {} bytes", i32::MAX),
                trailer + 16,
            ),
            (
                "block over its size",
                entry + 16,
                le32(0x40_0000),
                "outside 0 to the block size 4190208".into(),
                entry,
            ),
            ("negative compressed", entry + 20, le32(-1), "declares -1 compressed bytes".into(), entry),
            (
                "compressed past the file",
                entry + 20,
                le32(i32::MAX),
                "outside the file's blocks".into(),
                entry,
            ),
            ("negative block count", trailer + 20, le32(-1), "declares -1 blocks".into(), trailer + 20),
            (
                "too many blocks",
                trailer + 20,
                le32(1_000_000),
                "run past the end of the file".into(),
                trailer,
            ),
            (
                "trailer outside",
                zh + 8,
                (-1i64).to_le_bytes().to_vec(),
                "puts the trailer at byte -1".into(),
                zh,
            ),
        ];
        for (what, at, bytes, says, byte) in cases {
            let mut bad = good.clone();
            put(&mut bad, at, &bytes);
            let e = refusal("survey.zsav", &bad);
            assert!(e.contains(&says) && e.contains("not a readable SPSS file"), "{what}: {e}");
            assert!(e.contains(&format!("byte {byte}")), "{what}: names byte {byte}: {e}");
        }
    }

    #[test]
    fn negative_info_record_size_is_refused_naming_the_byte() {
        let good = fixture("labelled.sav");
        // The integer info record: type 7, subtype 3, 8 values of 4 bytes.
        let pattern: Vec<u8> = [7i32, 3, 4, 8].iter().flat_map(|v| v.to_le_bytes()).collect();
        let at = good.windows(16).position(|w| w == pattern).expect("an integer info record");
        for (offset, value, says) in [
            (8, -4i32, "an extension record's size is negative (-4)"),
            (12, -8, "an extension record's count is negative (-8)"),
        ] {
            let mut bad = good.clone();
            put(&mut bad, at + offset, &value.to_le_bytes());
            let e = refusal("survey.sav", &bad);
            assert!(e.contains(says) && e.contains(&format!("at byte {}", at + offset)), "{e}");
        }
    }

    #[test]
    fn a_panic_in_the_reader_fails_its_file_only() {
        let e = isolated(|| -> usize { panic!("capacity overflow") }).unwrap_err().to_string();
        assert!(e.contains("its reader failed on it (capacity overflow)"), "{e}");
        assert_eq!(isolated(|| 7), Ok(7));
    }
}
