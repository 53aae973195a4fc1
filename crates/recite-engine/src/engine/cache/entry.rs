//! One entry on disk: its key, its Arrow IPC layout (base sums, or a job's finished sums), its
//! checksum, and how it is written (a temporary file renamed into place) and read back checked.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float64Array, Int32Array, Int64Array, UInt8Array};
use datafusion::arrow::datatypes::{DataType, Field, Float64Type, Int32Type, Int64Type, Schema, UInt8Type};
use datafusion::arrow::ipc::reader::FileReader;
use datafusion::arrow::ipc::writer::FileWriter;
use serde::Serialize;

use super::digest::Digest;
use super::trust::{Refused, read_cache_file};
use super::{EXT, FORMAT};
use crate::engine::grouped::{Acc, BaseSums};
use crate::engine::{Job, Outcome, Sums, vars_for};
use crate::extractor::Measure;
use crate::resolve::Rows;
use crate::scan::JobKey;

/// An entry's file name: the digest of its key, then the digest of the file's own bytes, which
/// is checked before the bytes reach the Arrow reader (a damaged length there can make it try
/// to allocate terabytes, which no `catch_unwind` catches).
fn file_name(key: &str, bytes: &[u8]) -> String {
    format!("{}-{}.{EXT}", Digest::of(key.as_bytes()).hex(), Digest::of(bytes).hex())
}

/// What one entry holds: a job's base sums and the table's PSUs (with a design).
#[derive(Clone)]
pub(super) struct Entry {
    pub(super) base: BaseSums,
    pub(super) psus: Vec<(String, String)>,
}

/// Everything the base sums of a job depend on apart from the data: the key of its entry.
#[derive(Serialize)]
struct Key<'a> {
    format: u32,
    recite: &'static str,
    /// The table's files, canonical (`recite cache stats` counts entries by it).
    location: &'a str,
    /// The [`JobKey`] of [`rows_job`], in hex.
    job: String,
}

/// The key of a job's entry, as JSON; `location` is its table's, canonical.
pub(super) fn key(job: &Job, location: &str) -> String {
    let k = Key {
        format: FORMAT,
        recite: env!("CARGO_PKG_VERSION"),
        location,
        job: hex(&rows_job(job, location)),
    };
    serde_json::to_string(&k).expect("a key serialises")
}

/// What an entry's base sums depend on, as a job: its rows at their canonical location, and
/// its cells' filters. Not the table's declared name, the cells' names, the replicate weights
/// (each is scanned as a job of its own) or the measures (all are taken from the same sums).
fn rows_job(job: &Job, location: &str) -> Job {
    let rows = Rows { location: location.into(), table: String::new(), replicates: None, ..job.rows.clone() };
    let cells = job.cells.iter().map(|(_, _, f)| (String::new(), String::new(), f.clone())).collect();
    Job { rows, measures: Vec::new(), cells }
}

/// A job's [`JobKey`] in hex, for a key stored as text. By table: a key is ~1 KB and every
/// job of a run is looked up, so `write!` per byte was 4% of a warm run.
fn hex(job: &Job) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let bytes = JobKey::of(job);
    let mut out = String::with_capacity(2 * bytes.bytes().len());
    for &b in bytes.bytes() {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

const META_FORMAT: &str = "recite.cache.format";
pub(super) const META_KEY: &str = "recite.cache.key";
const META_IDENTITY: &str = "recite.cache.identity";
const META_CELLS: &str = "recite.cache.cells";
const META_PSUS: &str = "recite.cache.psus";
const META_BAD: &str = "recite.cache.bad";
const META_LAYOUT: &str = "recite.cache.layout";
pub(super) const META_CHECKSUM: &str = "recite.cache.checksum";
/// The metadata the checksum covers, in order.
const CHECKED: [&str; 6] = [META_KEY, META_IDENTITY, META_CELLS, META_PSUS, META_BAD, META_LAYOUT];

/// The rows of a code's sums over the whole base.
const WHOLE: i32 = -1;
/// The rows of a finished job's sums (`w` holds the value, `code` its place).
const FINISHED: i32 = -2;

fn schema(metadata: HashMap<String, String>) -> Schema {
    Schema::new(vec![
        Field::new("part", DataType::Int32, false),
        Field::new("code", DataType::Int64, false),
        Field::new("n", DataType::Float64, false),
        Field::new("w", DataType::Float64, false),
        Field::new("w2", DataType::Float64, false),
        Field::new("bad", DataType::UInt8, false),
    ])
    .with_metadata(metadata)
}

/// One row of an entry: (part, code, sums).
pub(super) type Row = (i32, i64, Acc);

/// The rows of base sums: the whole base first, then each PSU.
fn rows_of(base: &BaseSums) -> Vec<Row> {
    let mut rows: Vec<Row> = base.codes.iter().map(|(c, a)| (WHOLE, *c, *a)).collect();
    for (i, by_code) in base.per_psu.iter().enumerate() {
        rows.extend(by_code.iter().map(|(c, a)| (i as i32, *c, *a)));
    }
    rows
}

/// The checksum of an entry's metadata (those in [`CHECKED`]) and rows.
pub(super) fn checksum(meta: &HashMap<String, String>, rows: &[Row]) -> String {
    let mut d = Digest::new();
    for k in CHECKED {
        d.bytes(meta.get(k).map(String::as_str).unwrap_or("\u{0}absent").as_bytes());
    }
    for (part, code, a) in rows {
        d.word(*part as u64);
        d.word(*code as u64);
        for v in [a.n, a.w, a.w2] {
            d.word(v.to_bits());
        }
        d.word(u64::from(a.bad));
    }
    d.hex()
}

/// Writes an entry: `meta` (the keys of [`CHECKED`] but key and identity) and `rows`.
/// Writes an entry into `folder` and removes the `old` files of its key.
/// Why an entry could not be written (the run goes on: its sums are scanned again next time).
#[derive(Debug, thiserror::Error)]
pub(super) enum WriteError {
    /// The sums could not be encoded (Arrow's or serde's words).
    #[error("{0}")]
    Encode(String),
    /// The entry's file could not be created, written or renamed into place.
    #[error("{}: {error}", path.display())]
    Io {
        /// The folder or file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The sums do not fit an entry's layout.
    #[error("{0}")]
    Layout(&'static str),
}

fn write_file(
    folder: &Path,
    old: &[PathBuf],
    (key, identity): (&str, &str),
    mut meta: HashMap<String, String>,
    rows: &[Row],
) -> Result<PathBuf, WriteError> {
    meta.insert(META_FORMAT.to_string(), FORMAT.to_string());
    meta.insert(META_KEY.to_string(), key.to_string());
    meta.insert(META_IDENTITY.to_string(), identity.to_string());
    for k in CHECKED {
        meta.entry(k.to_string()).or_default();
    }
    let sum = checksum(&meta, rows);
    meta.insert(META_CHECKSUM.to_string(), sum);
    let schema = Arc::new(schema(meta));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.0))),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.1))),
        Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.2.n))),
        Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.2.w))),
        Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.2.w2))),
        Arc::new(UInt8Array::from_iter_values(rows.iter().map(|r| r.2.bad))),
    ];
    let encode = |e: datafusion::arrow::error::ArrowError| WriteError::Encode(e.to_string());
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(encode)?;
    let mut w = FileWriter::try_new(Vec::new(), &schema).map_err(encode)?;
    w.write(&batch).map_err(encode)?;
    w.finish().map_err(encode)?;
    let bytes = w.into_inner().map_err(encode)?;
    let path = folder.join(file_name(key, &bytes));
    // A private temporary file renamed into place: readers see the old entry or the new one.
    // No fsync: an entry a crash leaves short fails to parse or its checksum, and is rebuilt.
    let tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(folder)
        .map_err(|error| WriteError::Io { path: folder.to_path_buf(), error })?;
    std::io::Write::write_all(&mut tmp.as_file(), &bytes)
        .map_err(|error| WriteError::Io { path: path.clone(), error })?;
    tmp.persist(&path).map_err(|e| WriteError::Io { path: path.clone(), error: e.error })?;
    for o in old.iter().filter(|o| **o != path) {
        let _ = std::fs::remove_file(o);
    }
    Ok(path)
}

pub(super) fn write_entry(
    folder: &Path,
    old: &[PathBuf],
    key: &str,
    identity: &str,
    entry: &Entry,
) -> Result<PathBuf, WriteError> {
    let cells: Vec<u64> = entry.base.cells.iter().map(|c| c.to_bits()).collect();
    let meta = HashMap::from([
        (
            META_CELLS.to_string(),
            serde_json::to_string(&cells).map_err(|e| WriteError::Encode(e.to_string()))?,
        ),
        (
            META_PSUS.to_string(),
            serde_json::to_string(&entry.psus).map_err(|e| WriteError::Encode(e.to_string()))?,
        ),
        (META_BAD.to_string(), entry.base.bad.to_string()),
    ]);
    write_file(folder, old, (key, identity), meta, &rows_of(&entry.base))
}

/// Where a finished job's values sit (see [`write_finished`]).
#[derive(Serialize, serde::Deserialize)]
struct Layout {
    totals: usize,
    counts: usize,
    moments: Vec<(usize, usize)>,
}

/// Writes a finished job's sums (the summed plan's): the values n, totals, counts, moments (in
/// the layout's order), then each PSU's totals, one row each.
pub(super) fn write_finished(
    folder: &Path,
    old: &[PathBuf],
    key: &str,
    identity: &str,
    out: &Outcome,
) -> Result<PathBuf, WriteError> {
    let s = &out.sums;
    if s.replicates.is_some() {
        return Err(WriteError::Layout("replicate totals are combined after the cache"));
    }
    let mut moments: Vec<(usize, usize)> = s.moments.keys().copied().collect();
    moments.sort_unstable();
    let layout = Layout { totals: s.totals.len(), counts: s.counts.len(), moments };
    let mut values = vec![s.n];
    values.extend(&s.totals);
    values.extend(&s.counts);
    values.extend(layout.moments.iter().map(|jk| s.moments[jk]));
    let strata: Vec<&str> = s.psus.iter().map(|(h, _)| h.as_str()).collect();
    for (_, t) in &s.psus {
        if t.len() != layout.totals {
            return Err(WriteError::Layout("a PSU's totals do not match the job's"));
        }
        values.extend(t);
    }
    let cells: Vec<u64> = out.cells.iter().map(|(_, _, n)| *n).collect();
    let meta = HashMap::from([
        (
            META_CELLS.to_string(),
            serde_json::to_string(&cells).map_err(|e| WriteError::Encode(e.to_string()))?,
        ),
        (
            META_PSUS.to_string(),
            serde_json::to_string(&strata).map_err(|e| WriteError::Encode(e.to_string()))?,
        ),
        (
            META_LAYOUT.to_string(),
            serde_json::to_string(&layout).map_err(|e| WriteError::Encode(e.to_string()))?,
        ),
    ]);
    let rows: Vec<Row> = values
        .iter()
        .enumerate()
        .map(|(i, v)| (FINISHED, i as i64, Acc { n: 0.0, w: *v, w2: 0.0, bad: 0 }))
        .collect();
    write_file(folder, old, (key, identity), meta, &rows)
}

/// An entry file's metadata and rows, as read (not yet checked).
pub(super) struct Parsed {
    pub(super) metadata: HashMap<String, String>,
    pub(super) rows: Vec<Row>,
}

pub(super) fn parse_entry(bytes: Vec<u8>) -> Option<Parsed> {
    // The IPC reader must not be trusted with damaged bytes not to panic: a panic is damage too.
    std::panic::catch_unwind(move || {
        let reader = FileReader::try_new(std::io::Cursor::new(bytes), None).ok()?;
        let metadata = reader.schema().metadata().clone();
        let mut rows = Vec::new();
        for batch in reader {
            let b = batch.ok()?;
            if b.num_columns() != 6 {
                return None;
            }
            let part = b.column(0).as_primitive_opt::<Int32Type>()?;
            let code = b.column(1).as_primitive_opt::<Int64Type>()?;
            let n = b.column(2).as_primitive_opt::<Float64Type>()?;
            let w = b.column(3).as_primitive_opt::<Float64Type>()?;
            let w2 = b.column(4).as_primitive_opt::<Float64Type>()?;
            let bad = b.column(5).as_primitive_opt::<UInt8Type>()?;
            if b.columns().iter().any(|c| c.null_count() > 0) {
                return None;
            }
            for r in 0..b.num_rows() {
                let acc = Acc { n: n.value(r), w: w.value(r), w2: w2.value(r), bad: bad.value(r) };
                rows.push((part.value(r), code.value(r), acc));
            }
        }
        Some(Parsed { metadata, rows })
    })
    .ok()
    .flatten()
}

/// Reads an entry file, checked: its bytes match the digest in its name, it parses, passes
/// its checksum, and was written for `key` over files of `identity` in this format.
fn read_one(path: &Path, key: &str, identity: &str) -> Result<Parsed, Refused> {
    let bytes = read_cache_file(path)?;
    let named = path.file_stem().and_then(|s| s.to_str()).and_then(|s| s.split_once('-')).map(|(_, d)| d);
    if named != Some(Digest::of(&bytes).hex().as_str()) {
        return Err(Refused::Corrupt);
    }
    let parsed = parse_entry(bytes).ok_or(Refused::Corrupt)?;
    let get = |k: &str| parsed.metadata.get(k).map(String::as_str).ok_or(Refused::Corrupt);
    if checksum(&parsed.metadata, &parsed.rows) != get(META_CHECKSUM)? {
        return Err(Refused::Corrupt);
    }
    if get(META_FORMAT)? != FORMAT.to_string() || get(META_KEY)? != key || get(META_IDENTITY)? != identity {
        return Err(Refused::Stale);
    }
    Ok(parsed)
}

/// The first of a key's files that reads, checked; else why none did (damage before staleness).
fn read_checked(paths: &[PathBuf], key: &str, identity: &str) -> Result<Parsed, Refused> {
    let mut why = Refused::Absent;
    for p in paths {
        match read_one(p, key, identity) {
            Ok(parsed) => return Ok(parsed),
            Err(u @ Refused::Untrusted(_)) => why = u,
            Err(Refused::Corrupt) if !matches!(why, Refused::Untrusted(_)) => why = Refused::Corrupt,
            Err(Refused::Stale) if matches!(why, Refused::Absent | Refused::Stale) => why = Refused::Stale,
            Err(_) => {}
        }
    }
    Err(why)
}

/// Reads the base sums of `key` for files of `identity`.
pub(super) fn read_entry(paths: &[PathBuf], key: &str, identity: &str) -> Result<Entry, Refused> {
    let Parsed { metadata, rows } = read_checked(paths, key, identity)?;
    let get = |k: &str| metadata.get(k).map(String::as_str).ok_or(Refused::Corrupt);
    let cells: Vec<u64> = serde_json::from_str(get(META_CELLS)?).map_err(|_| Refused::Corrupt)?;
    let psus: Vec<(String, String)> = serde_json::from_str(get(META_PSUS)?).map_err(|_| Refused::Corrupt)?;
    let bad: u8 = get(META_BAD)?.parse().map_err(|_| Refused::Corrupt)?;
    let mut codes = BTreeMap::new();
    let mut per_psu = vec![BTreeMap::new(); psus.len()];
    for (part, code, acc) in rows {
        let into = match part {
            WHOLE => &mut codes,
            i => {
                per_psu.get_mut(usize::try_from(i).map_err(|_| Refused::Corrupt)?).ok_or(Refused::Corrupt)?
            }
        };
        into.insert(code, acc);
    }
    let cells = cells.into_iter().map(f64::from_bits).collect();
    Ok(Entry { base: BaseSums { codes, per_psu, cells, bad }, psus })
}

/// Reads a finished job's sums for `job` (see [`write_finished`]).
pub(super) fn read_finished(
    paths: &[PathBuf],
    key: &str,
    identity: &str,
    job: &Job,
) -> Result<Outcome, Refused> {
    let Parsed { metadata, rows } = read_checked(paths, key, identity)?;
    let get = |k: &str| metadata.get(k).map(String::as_str).ok_or(Refused::Corrupt);
    let layout: Layout = serde_json::from_str(get(META_LAYOUT)?).map_err(|_| Refused::Corrupt)?;
    let cells: Vec<u64> = serde_json::from_str(get(META_CELLS)?).map_err(|_| Refused::Corrupt)?;
    let strata: Vec<String> = serde_json::from_str(get(META_PSUS)?).map_err(|_| Refused::Corrupt)?;
    let vars = vars_for(&job.measures);
    let values: Vec<f64> = rows.iter().map(|r| r.2.w).collect();
    let fixed = 1 + layout.totals + layout.counts + layout.moments.len();
    if vars.len() != layout.totals
        || cells.len() != job.cells.len()
        || values.len() != fixed + strata.len() * layout.totals
        || rows.iter().enumerate().any(|(i, r)| r.0 != FINISHED || r.1 != i as i64)
    {
        return Err(Refused::Corrupt);
    }
    let (totals, rest) = values[1..].split_at(layout.totals);
    let (counts, rest) = rest.split_at(layout.counts);
    let (moments, rest) = rest.split_at(layout.moments.len());
    let psus =
        strata.into_iter().zip(rest.chunks(layout.totals.max(1))).map(|(h, t)| (h, t.to_vec())).collect();
    let sums = Sums {
        n: values[0],
        totals: totals.to_vec(),
        counts: counts.to_vec(),
        moments: layout.moments.iter().copied().zip(moments.iter().copied()).collect(),
        psus,
        replicates: None,
    };
    let cells = job.cells.iter().zip(cells).map(|((b, c, _), n)| (b.clone(), c.clone(), n)).collect();
    Ok(Outcome { vars, sums, cells })
}

/// The key of a job's finished sums: its rows' key and the [`JobKey`] of its rows with what its
/// measures compute (not their names, which the outcome is relabelled with).
pub(super) fn finished_key(job: &Job, key: &str, location: &str) -> String {
    let mut rows = rows_job(job, location);
    rows.measures = job
        .measures
        .iter()
        .map(|m| Measure { name: String::new(), aliases: Vec::new(), kind: m.kind.clone() })
        .collect();
    format!("{key} finished {}", hex(&rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        let acc = |n: f64, w: f64| Acc { n, w, w2: w * w, bad: 0 };
        let codes = BTreeMap::from([(1, acc(3.0, 2.5)), (2, acc(4.0, 0.1 + 0.2))]);
        Entry { base: BaseSums { codes, per_psu: Vec::new(), cells: vec![7.0], bad: 0 }, psus: Vec::new() }
    }

    fn same(a: &Entry, b: &Entry) -> bool {
        let bits = |e: &Entry| {
            rows_of(&e.base)
                .iter()
                .map(|(p, c, a)| (*p, *c, a.n.to_bits(), a.w.to_bits(), a.w2.to_bits(), a.bad))
                .collect::<Vec<_>>()
        };
        bits(a) == bits(b) && a.base.cells == b.base.cells && a.psus == b.psus && a.base.bad == b.base.bad
    }
    #[test]
    fn an_entry_reads_back_bit_for_bit_and_damage_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_entry(dir.path(), &[], "k", "id", &entry()).unwrap();
        let paths = [path.clone()];
        let back = read_entry(&paths, "k", "id").ok().expect("reads back");
        assert!(same(&back, &entry()));
        assert_eq!(back.base.codes[&2].w.to_bits(), (0.1f64 + 0.2).to_bits());
        assert!(matches!(read_entry(&paths, "k", "other files"), Err(Refused::Stale)));
        assert!(matches!(read_entry(&paths, "other key", "id"), Err(Refused::Stale)));
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        assert!(matches!(read_entry(&paths, "k", "id"), Err(Refused::Corrupt)));
        // Every byte of the file, one at a time, one bit flipped: each is refused before the
        // Arrow reader sees it.
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x10;
            std::fs::write(&path, &b).unwrap();
            assert!(matches!(read_entry(&paths, "k", "id"), Err(Refused::Corrupt)), "byte {i}");
        }
        // Rewritten, the old file goes.
        std::fs::write(&path, &bytes).unwrap();
        let mut changed = entry();
        changed.base.cells = vec![8.0];
        let new = write_entry(dir.path(), &paths, "k", "id", &changed).unwrap();
        assert!(!path.exists() && new.exists());
        assert_eq!(read_entry(&[new], "k", "id").ok().expect("reads").base.cells, [8.0]);
    }
}
