//! The sufficient-statistics cache (docs/cache.md): what the grouped scan sums for one set of base
//! rows — per code the count, Σw and Σw², per PSU and code Σw, the cells' counts and the weight's
//! flags (`grouped::BaseSums`) — kept in Arrow IPC files under `DIR/recite-sums-v4/`, so a later
//! run settles claims on the same rows without scanning. Every measure on those rows (any share,
//! mean, total, ratio) is taken from the same per-code sums, so new claims on a cached column hit.
//!
//! One entry per set of base rows: its file name is a digest of the key (the [`JobKey`] of its
//! rows — table location, design, column, period, base, weight, missing codes and ranges, cell
//! filters — recite's version and this format) and of the file's bytes; the file holds the full key again, the identity of the table's files (path,
//! size, modification and change times, inode, and the Parquet footer's digest or, for other
//! files, the content's) and a checksum of everything in it. An entry whose key, identity or
//! checksum does not match, or that does not parse, is never used: its rows are scanned and the
//! entry written again. Entries are written to a temporary file and renamed, so a reader sees a
//! whole entry or none, and concurrent runs never see each other's half-written files.
//!
//! Claims the summed plan takes (no per-code sums) keep their finished [`super::Sums`] instead,
//! keyed by their rows and what their measures compute.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float64Array, Int32Array, Int64Array, UInt8Array};
use datafusion::arrow::datatypes::{DataType, Field, Float64Type, Int32Type, Int64Type, Schema, UInt8Type};
use datafusion::arrow::ipc::reader::FileReader;
use datafusion::arrow::ipc::writer::FileWriter;
use rayon::prelude::*;
use serde::Serialize;

use super::grouped::{self, Acc, BaseSums};
use super::{Engine, EngineError, Job, Outcomes, PlanChoice, ScanPlan, ScanStats};
use crate::extractor::Measure;
use crate::resolve::Rows;
use crate::scan::JobKey;

/// The entry format; a change of layout or meaning bumps it (and the folder name). 2: sums
/// from the exact 2^-130 fixed point (1 held sums rounded to 10^-12, wrong for small weights).
/// 3: keys made from the job's [`JobKey`]. 4: sums at each weight column's own scale (any
/// magnitude under 2^256): a format-3 entry may hold a weight's OVERFLOW from 2^31 on.
pub const FORMAT: u32 = 4;
/// The folder under the cache directory that holds this format's entries.
pub const FOLDER: &str = "recite-sums-v4";
/// The extension of entry files.
const EXT: &str = "arrow";
/// The largest entry file read: entries hold kilobytes (a megabyte or two with thousands of PSUs
/// and codes), so anything larger is not one of recite's and is never read into memory.
const MAX_ENTRY_BYTES: u64 = 256 << 20;

/// Why a cache folder cannot be used ([`Cache::open`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenError {
    /// It cannot be created or read: the run fails, as for any folder it was told to use.
    Io(String),
    /// It is not trusted (a link, another user's, writable by others): the run goes on without
    /// a cache, with this warning, as a cache can only ever cost a scan.
    Untrusted(String),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Io(e) | OpenError::Untrusted(e) => f.write_str(e),
        }
    }
}

/// Why a file or folder of the cache is not trusted: owned by another user than the one
/// running recite, or writable by its group or others (either could have forged its entries,
/// whose checksums anyone can compute). `None` when trusted.
fn distrust(m: &std::fs::Metadata) -> Option<String> {
    let Some(me) = user_id() else {
        return Some("the user running recite cannot be told (no temporary file)".into());
    };
    if m.uid() != me {
        return Some(format!("it belongs to user id {}, not to this user ({me})", m.uid()));
    }
    if m.mode() & 0o022 != 0 {
        return Some(format!(
            "its group or other users may write it (mode {:o}; `chmod go-w` it)",
            m.mode() & 0o7777
        ));
    }
    None
}

/// The user id files this process creates belong to (its effective user), read from a
/// temporary file it creates (the crate has no `unsafe` for `geteuid`); once per process.
fn user_id() -> Option<u32> {
    static ID: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    *ID.get_or_init(|| tempfile::tempfile().and_then(|f| f.metadata()).ok().map(|m| m.uid()))
}

/// A line on standard error; never fails (a closed stderr is no reason to stop).
fn warn(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "recite: warning: {line}");
}

/// Whether `name` is one recite gives a file in its cache folder: an entry (`KEY-BYTES.arrow`,
/// two 32-digit hex digests) or a temporary file (`.tmp-` and six letters or digits). Nothing
/// else there is read or removed.
fn own_name(name: &str) -> bool {
    let hex = |t: &str| t.len() == 32 && t.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if let Some(stem) = name.strip_suffix(".arrow") {
        return stem.split_once('-').is_some_and(|(k, d)| hex(k) && hex(d));
    }
    name.strip_prefix(".tmp-").is_some_and(|r| r.len() == 6 && r.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Reads a cache file's bytes: only a regular file (a link is not followed, a FIFO or device
/// is not waited on: `O_NOFOLLOW | O_NONBLOCK`, checked on the open handle), this user's and
/// not writable by others ([`distrust`]), of at most [`MAX_ENTRY_BYTES`].
fn read_cache_file(path: &Path) -> Result<Vec<u8>, Refused> {
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Refused::Absent),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(Refused::Untrusted(format!("{}: a symbolic link, not followed", path.display())));
        }
        Err(_) => return Err(Refused::Corrupt),
    };
    let m = file.metadata().map_err(|_| Refused::Corrupt)?;
    if !m.is_file() {
        return Err(Refused::Untrusted(format!("{}: not a regular file, not read", path.display())));
    }
    if let Some(why) = distrust(&m) {
        return Err(Refused::Untrusted(format!("{}: {why}; not read", path.display())));
    }
    if m.len() > MAX_ENTRY_BYTES {
        return Err(Refused::Corrupt);
    }
    let mut bytes = Vec::with_capacity(m.len() as usize);
    file.take(MAX_ENTRY_BYTES + 1).read_to_end(&mut bytes).map_err(|_| Refused::Corrupt)?;
    if bytes.len() as u64 > MAX_ENTRY_BYTES {
        return Err(Refused::Corrupt);
    }
    Ok(bytes)
}

/// What proves a table's files unchanged before a cache entry is used (`--cache-verify`,
/// docs/cache.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Verify {
    /// Each file's size, times, inode and device, and a Parquet file's footer (other files are
    /// hashed whole): cheap, but a write that keeps all of them (through a shared `mmap`, or a
    /// tool that restores times) is not noticed.
    #[default]
    Identity,
    /// The identity and the digest of every file's whole content, read before any entry is
    /// used: a table is read once more per run, and any change to its bytes is noticed.
    Content,
}

impl Verify {
    /// Every choice, in the order `--help` lists them.
    pub const ALL: [Verify; 2] = [Verify::Identity, Verify::Content];

    /// The choice's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Verify::Identity => "identity",
            Verify::Content => "content",
        }
    }
}

/// A cache directory opened for a run (see the module doc).
pub struct Cache {
    folder: PathBuf,
    /// What proves a table unchanged ([`Cache::verifying`]).
    verify: Verify,
    /// One cached run at a time per engine: a run on rows another is scanning waits, then reads
    /// the entries that one wrote instead of scanning the rows again.
    run: Mutex<()>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cache({})", self.folder.display())
    }
}

impl Cache {
    /// Opens (creating it if needed, private to this user) the cache under `dir`. Its folder
    /// must be a folder, not a link to one, owned by this user and not writable by others:
    /// else [`OpenError::Untrusted`], and the run should go on without a cache.
    pub fn open(dir: &Path) -> Result<Cache, OpenError> {
        let folder = dir.join(FOLDER);
        let io = |e: std::io::Error| {
            OpenError::Io(format!("cache folder {}: cannot be created: {e}", folder.display()))
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        match std::fs::DirBuilder::new().mode(0o700).create(&folder) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(io(e)),
            _ => {}
        }
        let m = std::fs::symlink_metadata(&folder).map_err(io)?;
        let refused = |why: &str| {
            OpenError::Untrusted(format!(
                "cache folder {}: {why}; not used (its entries could have been written by someone \
                 else), claims are scanned",
                folder.display()
            ))
        };
        if m.file_type().is_symlink() {
            return Err(refused("a symbolic link, not followed"));
        }
        if !m.is_dir() {
            return Err(OpenError::Io(format!("cache folder {}: not a folder", folder.display())));
        }
        if let Some(why) = distrust(&m) {
            return Err(refused(&why));
        }
        Ok(Cache { folder, verify: Verify::default(), run: Mutex::new(()) })
    }

    /// This cache, proving a table's files unchanged as `verify` says before using an entry.
    pub fn verifying(self, verify: Verify) -> Cache {
        Cache { verify, ..self }
    }

    /// The entry files present, by the digest of their key (more than one only briefly, when
    /// runs wrote the same key at once, or a rewrite could not remove the old file).
    fn listing(&self) -> HashMap<String, Vec<PathBuf>> {
        let mut by_key: HashMap<String, Vec<PathBuf>> = HashMap::new();
        for p in entries(&self.folder).unwrap_or_default() {
            if let Some((k, _)) = p.file_stem().and_then(|s| s.to_str()).and_then(|s| s.split_once('-')) {
                by_key.entry(k.to_string()).or_default().push(p.clone());
            }
        }
        by_key
    }
}

/// An entry's file name: the digest of its key, then the digest of the file's own bytes, which
/// is checked before the bytes reach the Arrow reader (a damaged length there can make it try
/// to allocate terabytes, which no `catch_unwind` catches).
fn file_name(key: &str, bytes: &[u8]) -> String {
    format!("{}-{}.{EXT}", Digest::of(key.as_bytes()).hex(), Digest::of(bytes).hex())
}

/// What one entry holds: a job's base sums and the table's PSUs (with a design).
#[derive(Clone)]
pub(super) struct Entry {
    base: BaseSums,
    psus: Vec<(String, String)>,
}

/// A stable 128-bit digest (two multiply-rotate lanes, finished by murmur's mix): the file name
/// of a key, the fingerprint of a Parquet footer or file, the checksum of an entry. Not
/// cryptographic; it detects damage and change, and the key stored in full guards its collisions.
#[derive(Clone, Copy)]
struct Digest {
    a: u64,
    b: u64,
}

impl Digest {
    fn new() -> Digest {
        Digest { a: 0x243f_6a88_85a3_08d3, b: 0x1319_8a2e_0370_7344 }
    }

    fn of(bytes: &[u8]) -> Digest {
        let mut d = Digest::new();
        d.bytes(bytes);
        d
    }

    #[inline]
    fn word(&mut self, w: u64) {
        self.a = (self.a ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
        self.b = (self.b.rotate_left(17) ^ w).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    }

    /// Adds bytes, then their length (so consecutive fields cannot run into each other).
    fn bytes(&mut self, data: &[u8]) {
        let mut words = data.chunks_exact(8);
        for w in &mut words {
            self.word(u64::from_le_bytes(w.try_into().expect("8 bytes")));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.word(u64::from_le_bytes(last));
        }
        self.word(data.len() as u64);
    }

    fn hex(&self) -> String {
        let fmix = |mut h: u64| {
            h ^= h >> 33;
            h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
            h ^= h >> 33;
            h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
            h ^ (h >> 33)
        };
        format!("{:016x}{:016x}", fmix(self.a ^ self.b.rotate_left(32)), fmix(self.b))
    }
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
fn key(job: &Job, location: &str) -> String {
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

fn canonical(location: &Path) -> String {
    if crate::catalog::url_scheme(&location.to_string_lossy()).is_some() {
        // No secret is written into the cache: an http(s) query is never sent (the key's
        // identity says which object answered), and userinfo names no other object.
        return crate::objstore::redact(&location.to_string_lossy()).into_owned();
    }
    location.canonicalize().unwrap_or_else(|_| location.to_path_buf()).to_string_lossy().into_owned()
}

/// The identity of a table's files and of how they are read, as text: one line per file (path,
/// size, modification and change times, inode, fingerprint), then the declared CSV format. The
/// files are those the location names ([`files_of`]) and those DataFusion's listing of it
/// reads (`listed`, canonical paths), which a glob's own matches need not include (a Spark
/// `x.parquet/` folder, hive `part=2/` folders). `None` when a file cannot be listed or read,
/// or there is none: nothing is cached for that table.
fn identity(
    location: &Path,
    csv: Option<&crate::catalog::CsvFormat>,
    listed: Vec<PathBuf>,
    verify: Verify,
) -> Option<String> {
    // Canonical paths: `--data d` and `--data /abs/d` name the same files.
    let location = location.canonicalize().unwrap_or_else(|_| location.to_path_buf());
    let mut files = files_of(&location)?;
    files.extend(listed);
    files.sort();
    files.dedup();
    if files.is_empty() {
        return None;
    }
    let mut out = String::new();
    for f in &files {
        let meta = std::fs::metadata(f).ok()?;
        let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
        #[cfg(unix)]
        let changed =
            format!("{}.{:09} ino {} dev {}", meta.ctime(), meta.ctime_nsec(), meta.ino(), meta.dev());
        #[cfg(not(unix))]
        let changed = String::new();
        let print = fingerprint(f, meta.len(), verify)?;
        out.push_str(&format!(
            "{}\tsize {}\tmodified {modified}\tchanged {changed}\t{print}\n",
            f.display(),
            meta.len()
        ));
    }
    if let Some(c) = csv {
        out.push_str(&format!("csv {c:?}\n"));
    }
    Some(out)
}

/// The files a table location names: a file, every file under a folder, or a glob's matches.
fn files_of(location: &Path) -> Option<Vec<PathBuf>> {
    let text = location.to_string_lossy();
    if text.contains(['*', '?', '[']) {
        return Some(glob::glob(&text).ok()?.filter_map(Result::ok).filter(|p| p.is_file()).collect());
    }
    if location.is_dir() {
        let mut found = Vec::new();
        let mut stack = vec![location.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).ok()? {
                let p = e.ok()?.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    found.push(p);
                }
            }
        }
        return Some(found);
    }
    location.is_file().then(|| vec![location.to_path_buf()])
}

/// A Parquet file's footer digest (its schema, row groups, sizes and statistics: reading it
/// costs a few kilobytes), or the digest of a whole other file; of every file whole under
/// [`Verify::Content`].
fn fingerprint(path: &Path, size: u64, verify: Verify) -> Option<String> {
    let mut f = std::fs::File::open(path).ok()?;
    let parquet =
        verify == Verify::Identity && path.extension().is_some_and(|e| e.eq_ignore_ascii_case("parquet"));
    if parquet && size >= 12 {
        let mut tail = [0u8; 8];
        f.seek(SeekFrom::End(-8)).ok()?;
        f.read_exact(&mut tail).ok()?;
        let len = u64::from(u32::from_le_bytes(tail[..4].try_into().expect("4 bytes")));
        if &tail[4..] == b"PAR1" && len + 8 <= size {
            let mut footer = vec![0u8; len as usize + 8];
            f.seek(SeekFrom::End(-(len as i64) - 8)).ok()?;
            f.read_exact(&mut footer).ok()?;
            return Some(format!("footer {}", Digest::of(&footer).hex()));
        }
        f.seek(SeekFrom::Start(0)).ok()?;
    }
    // Whole chunks (a short read must not change the digest), the last one shorter.
    let mut d = Digest::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let mut n = 0;
        while n < buf.len() {
            match f.read(&mut buf[n..]).ok()? {
                0 => break,
                k => n += k,
            }
        }
        d.bytes(&buf[..n]);
        if n < buf.len() {
            break;
        }
    }
    Some(format!("content {}", d.hex()))
}

/// Why an entry on disk was not used.
enum Refused {
    /// No entry.
    Absent,
    /// Written for other files or another format: its rows are scanned and it is replaced.
    Stale,
    /// Does not parse or fails its checksum: its rows are scanned and it is replaced.
    Corrupt,
    /// Not a regular file, a link, another user's or writable by others (why, with its path):
    /// never read, warned about; its rows are scanned and it is replaced.
    Untrusted(String),
}

const META_FORMAT: &str = "recite.cache.format";
const META_KEY: &str = "recite.cache.key";
const META_IDENTITY: &str = "recite.cache.identity";
const META_CELLS: &str = "recite.cache.cells";
const META_PSUS: &str = "recite.cache.psus";
const META_BAD: &str = "recite.cache.bad";
const META_LAYOUT: &str = "recite.cache.layout";
const META_CHECKSUM: &str = "recite.cache.checksum";
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
type Row = (i32, i64, Acc);

/// The rows of base sums: the whole base first, then each PSU.
fn rows_of(base: &BaseSums) -> Vec<Row> {
    let mut rows: Vec<Row> = base.codes.iter().map(|(c, a)| (WHOLE, *c, *a)).collect();
    for (i, by_code) in base.per_psu.iter().enumerate() {
        rows.extend(by_code.iter().map(|(c, a)| (i as i32, *c, *a)));
    }
    rows
}

/// The checksum of an entry's metadata (those in [`CHECKED`]) and rows.
fn checksum(meta: &HashMap<String, String>, rows: &[Row]) -> String {
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
enum WriteError {
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

fn write_entry(
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
fn write_finished(
    folder: &Path,
    old: &[PathBuf],
    key: &str,
    identity: &str,
    out: &super::Outcome,
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
struct Parsed {
    metadata: HashMap<String, String>,
    rows: Vec<Row>,
}

fn parse_entry(bytes: Vec<u8>) -> Option<Parsed> {
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
fn read_entry(paths: &[PathBuf], key: &str, identity: &str) -> Result<Entry, Refused> {
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
fn read_finished(paths: &[PathBuf], key: &str, identity: &str, job: &Job) -> Result<super::Outcome, Refused> {
    let Parsed { metadata, rows } = read_checked(paths, key, identity)?;
    let get = |k: &str| metadata.get(k).map(String::as_str).ok_or(Refused::Corrupt);
    let layout: Layout = serde_json::from_str(get(META_LAYOUT)?).map_err(|_| Refused::Corrupt)?;
    let cells: Vec<u64> = serde_json::from_str(get(META_CELLS)?).map_err(|_| Refused::Corrupt)?;
    let strata: Vec<String> = serde_json::from_str(get(META_PSUS)?).map_err(|_| Refused::Corrupt)?;
    let vars = super::vars_for(&job.measures);
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
    let sums = super::Sums {
        n: values[0],
        totals: totals.to_vec(),
        counts: counts.to_vec(),
        moments: layout.moments.iter().copied().zip(moments.iter().copied()).collect(),
        psus,
        replicates: None,
    };
    let cells = job.cells.iter().zip(cells).map(|((b, c, _), n)| (b.clone(), c.clone(), n)).collect();
    Ok(super::Outcome { vars, sums, cells })
}

/// The key of a job's finished sums: its rows' key and the [`JobKey`] of its rows with what its
/// measures compute (not their names, which the outcome is relabelled with).
fn finished_key(job: &Job, key: &str, location: &str) -> String {
    let mut rows = rows_job(job, location);
    rows.measures = job
        .measures
        .iter()
        .map(|m| Measure { name: String::new(), aliases: Vec::new(), kind: m.kind.clone() })
        .collect();
    format!("{key} finished {}", hex(&rows))
}

/// A job's address: which of the run's jobs it is (they are not moved during the run).
fn address(job: &Job) -> usize {
    job as *const Job as usize
}

/// What the cache did for one table in one run.
#[derive(Default)]
struct Tally {
    hits: usize,
    entries: usize,
    stale: usize,
    corrupt: usize,
    /// Entries refused as not trusted (warned about).
    untrusted: usize,
    /// Jobs never cached, as their declarations call a volatile function: one of them.
    volatile: usize,
    volatile_call: Option<String>,
}

impl Engine {
    /// [`Engine::run`]'s jobs, those whose sums are cached answered from the cache, the rest
    /// scanned (one scan per table, of their columns only) and their sums written back; and
    /// the groups of the grouped scans it ran. Without a cache, the grouped scans take along
    /// the `anticipated` jobs' weights and flags; with one, later runs go through the cache, so
    /// nothing is anticipated.
    pub(super) fn run_cached(
        &self,
        jobs: &[Job],
        anticipated: &[Job],
    ) -> (Outcomes, ScanStats, Vec<Arc<grouped::KeptGroups>>) {
        let Some(cache) = self.cache.as_ref().filter(|_| self.grouped) else {
            let (outcomes, stats, accumulated) = self.run_jobs(jobs, anticipated);
            return (outcomes, stats, grouped::kept(&accumulated));
        };
        let _one_run = cache.run.lock();
        let lookup = Lookup::new(self, cache, jobs);
        let first = lookup.first();
        let Found { bases, finished, mut tallies } = lookup.read(&first);
        let answered = lookup.answers(&bases, &finished);
        let missed: Vec<usize> = (0..jobs.len()).filter(|&i| answered[i].is_none()).collect();
        let picked: Vec<Job> = missed.iter().map(|&i| jobs[i].clone()).collect();
        let (scanned, mut stats, accumulated) = if missed.is_empty() {
            (Vec::new(), ScanStats::default(), Vec::new())
        } else {
            self.run_jobs(&picked, &[])
        };
        let kept = grouped::kept(&accumulated);
        lookup.write_back(&first, accumulated, &missed, &scanned);
        for (job, a) in jobs.iter().zip(&answered) {
            if a.is_some() {
                tallies.entry(job.rows.table.clone()).or_default().hits += 1;
            }
        }
        let mut plans = cache_plans(tallies);
        plans.append(&mut stats.plans);
        stats.plans = plans;
        let mut scanned = scanned.into_iter();
        let outcomes = answered
            .into_iter()
            .map(|a| match a {
                Some(o) => o,
                None => scanned.next().unwrap_or_else(|| Err(EngineError::Internal("no outcome".into()))),
            })
            .collect();
        (outcomes, stats, kept)
    }

    /// [`Engine::identity`] of a table with the CSV format the catalog declared for it.
    fn declared_identity(&self, location: &Path) -> Option<String> {
        self.identity(location, self.declared_csv(location).as_ref())
    }
}

/// What a cached run knows of its jobs before it reads an entry: each table's identity (taken
/// before anything is read), which jobs are never cached, the entry files present, and each
/// job's keys.
struct Lookup<'a> {
    engine: &'a Engine,
    cache: &'a Cache,
    jobs: &'a [Job],
    identities: HashMap<&'a PathBuf, Option<String>>,
    /// By job address, the volatile function a job's declarations call.
    volatile: HashMap<usize, String>,
    listing: HashMap<String, Vec<PathBuf>>,
    /// Per job: its rows' key (base sums, any measure) and its finished sums' key.
    keys: Vec<(String, String)>,
}

/// What a cached run's entries held for its keys, and what it made of them per table.
struct Found<'k> {
    /// By rows' key: the base sums, or why there are none.
    bases: HashMap<&'k str, Result<Entry, Refused>>,
    /// By finished sums' key, for rows without base sums: the finished sums, or why none.
    finished: HashMap<&'k str, Result<super::Outcome, Refused>>,
    tallies: BTreeMap<String, Tally>,
}

impl<'a> Lookup<'a> {
    fn new(engine: &'a Engine, cache: &'a Cache, jobs: &'a [Job]) -> Lookup<'a> {
        let mut locations: Vec<&PathBuf> = jobs.iter().map(|j| &j.rows.location).collect();
        locations.sort();
        locations.dedup();
        let identities = locations.par_iter().map(|l| (*l, engine.declared_identity(l))).collect();
        // Jobs whose declarations call a volatile function (`now()`) are neither read from the
        // cache nor written to it: their rows are another set at every run.
        let state = engine.ctx.state();
        let volatile = jobs
            .iter()
            .filter_map(|j| Some((address(j), engine.volatile_call(j, state.scalar_functions())?)))
            .collect();
        let listing = cache.listing();
        let canon: HashMap<&PathBuf, String> = locations.iter().map(|l| (*l, canonical(l))).collect();
        let keys = jobs
            .par_iter()
            .map(|j| {
                let location = &canon[&j.rows.location];
                let k = key(j, location);
                let f = finished_key(j, &k, location);
                (k, f)
            })
            .collect();
        Lookup { engine, cache, jobs, identities, volatile, listing, keys }
    }

    /// The identity a job's entries are read and written under: none (never cached) when its
    /// declarations are volatile or its table has none.
    fn id_of(&self, job: &Job) -> Option<String> {
        if self.volatile.contains_key(&address(job)) {
            return None;
        }
        self.identities.get(&job.rows.location).cloned().flatten()
    }

    /// The entry files present for a key.
    fn files(&self, k: &str) -> &[PathBuf] {
        self.listing.get(&Digest::of(k.as_bytes()).hex()).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The first job of each key, rows' and finished: the one its entry is read and written for.
    fn first(&self) -> HashMap<&str, &'a Job> {
        let mut first: HashMap<&str, &'a Job> = HashMap::new();
        for (j, (k, f)) in self.jobs.iter().zip(&self.keys) {
            first.entry(k.as_str()).or_insert(j);
            first.entry(f.as_str()).or_insert(j);
        }
        first
    }

    /// Reads each set of rows' base sums, then, for rows with none (columns the summed plan
    /// takes), their finished sums; and tallies per table what was found, warning once about
    /// each entry not trusted.
    fn read<'s>(&'s self, first: &HashMap<&'s str, &'a Job>) -> Found<'s> {
        let mut wanted: Vec<&str> = self.keys.iter().map(|(k, _)| k.as_str()).collect();
        wanted.sort_unstable();
        wanted.dedup();
        let bases: HashMap<&str, Result<Entry, Refused>> = wanted
            .par_iter()
            .map(|k| {
                let found = match self.id_of(first[k]) {
                    Some(id) => read_entry(self.files(k), k, &id),
                    None => Err(Refused::Absent),
                };
                (*k, found)
            })
            .collect();
        let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
        for job in self.jobs {
            if let Some(call) = self.volatile.get(&address(job)) {
                let t = tallies.entry(job.rows.table.clone()).or_default();
                t.volatile += 1;
                t.volatile_call.get_or_insert_with(|| call.clone());
            }
        }
        let mut warned: HashSet<String> = HashSet::new();
        let mut tally = |job: &Job, found: Option<&Refused>| {
            let t = tallies.entry(job.rows.table.clone()).or_default();
            match found {
                None => t.entries += 1,
                Some(Refused::Stale) => t.stale += 1,
                Some(Refused::Corrupt) => t.corrupt += 1,
                Some(Refused::Untrusted(why)) => {
                    t.untrusted += 1;
                    if warned.insert(why.clone()) {
                        warn(&format!("cache entry {why}: its rows are scanned"));
                    }
                }
                Some(Refused::Absent) => {}
            }
        };
        for (k, found) in &bases {
            tally(first[k], found.as_ref().err());
        }
        let mut finished_wanted: Vec<&str> = self
            .keys
            .iter()
            .filter(|(k, _)| bases.get(k.as_str()).is_some_and(|b| b.is_err()))
            .map(|(_, f)| f.as_str())
            .collect();
        finished_wanted.sort_unstable();
        finished_wanted.dedup();
        let finished: HashMap<&str, Result<super::Outcome, Refused>> = finished_wanted
            .par_iter()
            .map(|f| {
                let job = first[f];
                let found = match self.id_of(job) {
                    Some(id) => read_finished(self.files(f), f, &id, job),
                    None => Err(Refused::Absent),
                };
                (*f, found)
            })
            .collect();
        for (f, found) in &finished {
            tally(first[f], found.as_ref().err());
        }
        Found { bases, finished, tallies }
    }

    /// Each job's outcome from what was found: from its rows' base sums, else its finished
    /// sums; `None` when it must be scanned.
    fn answers(
        &self,
        bases: &HashMap<&str, Result<Entry, Refused>>,
        finished: &HashMap<&str, Result<super::Outcome, Refused>>,
    ) -> Vec<Option<Result<super::Outcome, EngineError>>> {
        self.jobs
            .par_iter()
            .zip(&self.keys)
            .map(|(job, (k, f))| match (bases.get(k.as_str()), finished.get(f.as_str())) {
                (Some(Ok(e)), _) => {
                    Some(grouped::outcome_from(job, &e.base, &e.psus, job.rows.design.is_some()))
                }
                (_, Some(Ok(out))) => Some(Ok(relabel(out, job))),
                _ => None,
            })
            .collect()
    }

    /// Writes what the scans computed, for tables whose files did not change meanwhile: the
    /// base sums the grouped scans accumulated, else the finished sums of the summed scans
    /// (`scanned`, the outcomes of the jobs `missed`). A cache that cannot be written costs the
    /// next run a scan, never a wrong answer.
    fn write_back(
        &self,
        first: &HashMap<&str, &'a Job>,
        accumulated: Vec<grouped::Accumulated<'_>>,
        missed: &[usize],
        scanned: &Outcomes,
    ) {
        let mut after: HashMap<PathBuf, Option<String>> = HashMap::new();
        let mut unchanged = |job: &Job| -> Option<String> {
            let before = self.id_of(job)?;
            let location = &job.rows.location;
            let now =
                after.entry(location.clone()).or_insert_with(|| self.engine.declared_identity(location));
            (now.as_deref() == Some(before.as_str())).then_some(before)
        };
        let folder = &self.cache.folder;
        let mut written: HashSet<String> = HashSet::new();
        for grouped::Accumulated { sums, psus, .. } in accumulated {
            for (job, base) in sums {
                let k = key(job, &canonical(&job.rows.location));
                let Some(job) = first.get(k.as_str()) else { continue };
                if let Some(id) = unchanged(job)
                    && written.insert(k.clone())
                {
                    let entry = Entry { base, psus: psus.clone() };
                    let _ = write_entry(folder, self.files(&k), &k, &id, &entry);
                }
            }
        }
        for (&i, out) in missed.iter().zip(scanned) {
            let (k, f) = &self.keys[i];
            if let Ok(out) = out
                && !written.contains(k)
                && let Some(id) = unchanged(&self.jobs[i])
                && written.insert(f.clone())
            {
                let _ = write_finished(folder, self.files(f), f, &id, out);
            }
        }
    }
}

/// What the cache did for each table it did anything for, as the plan its jobs took.
fn cache_plans(tallies: BTreeMap<String, Tally>) -> Vec<PlanChoice> {
    tallies
        .into_iter()
        .filter(|(_, t)| t.hits > 0 || t.stale > 0 || t.corrupt > 0 || t.untrusted > 0 || t.volatile > 0)
        .map(|(table, t)| {
            let mut reason = format!(
                "{} job(s) answered from {} cache entr{}; {} stale and {} corrupt entr{} rescanned",
                t.hits,
                t.entries,
                if t.entries == 1 { "y" } else { "ies" },
                t.stale,
                t.corrupt,
                if t.stale + t.corrupt == 1 { "y" } else { "ies" },
            );
            if t.untrusted > 0 {
                reason.push_str(&format!("; {} untrusted entr{} refused", t.untrusted, if t.untrusted == 1 { "y" } else { "ies" }));
            }
            if let Some(call) = &t.volatile_call {
                reason.push_str(&format!(
                    "; {} job(s) never cached: their declarations call {call}, which is not fixed by its arguments",
                    t.volatile
                ));
            }
            PlanChoice { table, plan: ScanPlan::Cache, reason }
        })
        .collect()
}

impl Engine {
    /// The identity of a table's files ([`identity`]), or of its objects when it is on object
    /// storage ([`Engine::object_identity`]).
    fn identity(&self, location: &Path, csv: Option<&crate::catalog::CsvFormat>) -> Option<String> {
        let verify = self.cache.as_ref().map_or(Verify::default(), |c| c.verify);
        if let Some((root, version)) = crate::delta::of_location(location) {
            // A version of a Delta table: its commit files and the data files it reads; the
            // latest (a bare folder, whose version moves) is never cached.
            return identity(location, None, self.delta_files(&root, version?)?, verify);
        }
        if crate::postgres::is_location(&location.to_string_lossy()) {
            // A PostgreSQL table keeps no versions and no identity proves it unchanged: its
            // scans are never cached.
            return None;
        }
        if crate::catalog::url_scheme(&location.to_string_lossy()).is_none() {
            return identity(location, csv, self.listed(location)?, verify);
        }
        let mut out = self.object_identity(location)?;
        if let Some(c) = csv {
            out.push_str(&format!("csv {c:?}\n"));
        }
        Some(out)
    }
}

/// A file's stamp for [`Engine::file_digests_of`]'s memo: size, modification and change
/// times, inode and device, and what the digest covers; its digest is taken again when any
/// moved (a server's engine lives long).
pub(super) type Stamp = (u64, u128, i64, i64, u64, u64, Verify);

/// The digests [`Engine::file_digests_of`] took, by canonical file path.
pub(super) type KnownDigests = HashMap<PathBuf, (Stamp, recite_core::version::FileDigest)>;

impl Engine {
    /// The files a scan of the table at `location` (plain files on disk) reads, each by its name
    /// relative to `root` (the study's folder), size and the cache's fingerprint of it (a
    /// Parquet footer, or the whole content: [`fingerprint`]), sorted by name. Empty for a
    /// table on object storage, a server or a Delta table, and when a file cannot be read (the
    /// scan says why). Taken once per file while its size, times and inode stay, so a batch's
    /// claims on one table read its footer once.
    pub(super) fn file_digests_of(
        &self,
        location: &Path,
        root: &Path,
    ) -> Vec<recite_core::version::FileDigest> {
        use recite_core::version::{DigestOf, FileDigest};
        let text = location.to_string_lossy();
        if crate::catalog::url_scheme(&text).is_some()
            || crate::postgres::is_location(&text)
            || crate::delta::of_location(location).is_some()
        {
            return Vec::new();
        }
        let verify = self.cache.as_ref().map_or(Verify::default(), |c| c.verify);
        let location = location.canonicalize().unwrap_or_else(|_| location.to_path_buf());
        let Some(mut files) = files_of(&location) else { return Vec::new() };
        files.extend(self.listed(&location).unwrap_or_default());
        files.sort();
        files.dedup();
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let mut out = Vec::with_capacity(files.len());
        for f in files {
            let Ok(meta) = std::fs::metadata(&f) else { return Vec::new() };
            let modified = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            let stamp: Stamp =
                (meta.len(), modified, meta.ctime(), meta.ctime_nsec(), meta.ino(), meta.dev(), verify);
            let known = self.digests.lock().ok().and_then(|m| m.get(&f).cloned());
            if let Some((was, digest)) = known
                && was == stamp
            {
                out.push(digest);
                continue;
            }
            let Some(print) = fingerprint(&f, meta.len(), verify) else { return Vec::new() };
            let (of, digest) = match print.split_once(' ') {
                Some(("footer", hex)) => (DigestOf::Footer, hex.to_string()),
                Some((_, hex)) => (DigestOf::Content, hex.to_string()),
                None => (DigestOf::Content, print.clone()),
            };
            let name = f.strip_prefix(&root).unwrap_or(&f).display().to_string();
            let digest = FileDigest { name, bytes: meta.len(), of, digest };
            if let Ok(mut m) = self.digests.lock() {
                m.insert(f, (stamp, digest.clone()));
            }
            out.push(digest);
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

impl Engine {
    /// The files version `version` of the Delta table at `root` is made of (canonical paths).
    #[cfg(feature = "delta")]
    fn delta_files(&self, root: &Path, version: u64) -> Option<Vec<PathBuf>> {
        let files = self.rt.block_on(crate::delta::files(root, version))?;
        files.iter().map(|f| f.canonicalize().ok()).collect()
    }

    /// Without the `delta` feature no Delta table is read, so none is cached.
    #[cfg(not(feature = "delta"))]
    fn delta_files(&self, _root: &Path, _version: u64) -> Option<Vec<PathBuf>> {
        None
    }

    /// The files DataFusion reads for a table on disk that names a folder or a glob, listed as
    /// its listing table lists them (the local store's recursive walk, then its file extension
    /// and `ListingTableUrl::contains`, with this session's `ignore_subdirectory`), as
    /// canonical paths; empty for one file. `None` when the listing fails.
    fn listed(&self, location: &Path) -> Option<Vec<PathBuf>> {
        use datafusion::datasource::listing::ListingTableUrl;
        use datafusion::object_store::ObjectStore;
        use datafusion::object_store::local::LocalFileSystem;
        use futures::TryStreamExt;
        let text = location.to_string_lossy();
        let glob = text.contains(['*', '?', '[']);
        if !glob && !location.is_dir() {
            return Some(Vec::new());
        }
        // The extension the engine lists the table's files by.
        let ext = super::listing_extension(&text);
        let text = if glob || text.ends_with('/') { text.to_string() } else { format!("{text}/") };
        let url = ListingTableUrl::parse(&text).ok()?;
        if !url.is_collection() {
            return Some(Vec::new());
        }
        let ignore = self.ctx.state().config_options().execution.listing_table_ignore_subdirectory;
        let store = LocalFileSystem::new();
        let found: Vec<datafusion::object_store::ObjectMeta> =
            self.rt.block_on(store.list(Some(url.prefix())).try_collect()).ok()?;
        found
            .iter()
            .filter(|m| m.location.as_ref().ends_with(ext) && url.contains(&m.location, ignore))
            .map(|m| store.path_to_filesystem(&m.location).ok()?.canonicalize().ok())
            .collect()
    }

    /// The first function a job's declarations (period, base and cells' filters) call whose
    /// result is not fixed by its arguments (`now()`, `current_date`, `random()`: any
    /// DataFusion function not `Immutable`), or that is unknown; `None` when there is none.
    /// Such a job's rows change with the clock or by chance, so they are never cached.
    fn volatile_call(
        &self,
        job: &Job,
        funcs: &HashMap<String, Arc<datafusion::logical_expr::ScalarUDF>>,
    ) -> Option<String> {
        let r = &job.rows;
        let filters = r.period_filter.iter().chain(&r.base_filter).map(String::as_str);
        filters.chain(job.cells.iter().map(|(_, _, f)| f.as_str())).find_map(|sql| volatile_in(sql, funcs))
    }
}

/// The first call in `sql` of a function that is not `Immutable` in `funcs` (or unknown, or a
/// niladic SQL function such as `CURRENT_DATE`); `None` when every call is to a fixed function.
fn volatile_in(
    sql: &str,
    funcs: &HashMap<String, Arc<datafusion::logical_expr::ScalarUDF>>,
) -> Option<String> {
    use datafusion::logical_expr::Volatility;
    use sqlparser::dialect::GenericDialect;
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, Tokenizer};
    /// SQL's functions written without parentheses, all of them of the moment or the session.
    const NILADIC: [&str; 10] = [
        "current_date",
        "current_time",
        "current_timestamp",
        "localtime",
        "localtimestamp",
        "current_user",
        "session_user",
        "current_role",
        "current_catalog",
        "current_schema",
    ];
    let Ok(tokens) = Tokenizer::new(&GenericDialect {}, sql).tokenize() else {
        return Some("(a filter that does not tokenize)".into());
    };
    let tokens: Vec<&Token> = tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_))).collect();
    for (i, t) in tokens.iter().enumerate() {
        let Token::Word(w) = t else { continue };
        let called = matches!(tokens.get(i + 1), Some(Token::LParen));
        // After a `.` a word is a field or a qualified name's part, not a function of its own.
        let qualified = i > 0 && matches!(tokens[i - 1], Token::Period);
        let name = if w.quote_style.is_some() { w.value.clone() } else { w.value.to_lowercase() };
        if w.quote_style.is_none() && !qualified && NILADIC.contains(&name.as_str()) {
            return Some(name);
        }
        match funcs.get(&name) {
            Some(f)
                if f.signature().volatility != Volatility::Immutable
                    && (called || w.quote_style.is_none()) =>
            {
                return Some(format!("{name}()"));
            }
            Some(_) => {}
            // Not a function recite knows: a keyword (`IN (`, `CAST(`), or doubt.
            None if called && (w.quote_style.is_some() || w.keyword == Keyword::NoKeyword) => {
                return Some(format!("{name}()"));
            }
            None => {}
        }
    }
    None
}

/// Finished sums read for one job, given to another with the same rows and measures: the
/// cells' names are the job's own.
fn relabel(out: &super::Outcome, job: &Job) -> super::Outcome {
    let cells =
        job.cells.iter().zip(&out.cells).map(|((b, c, _), (_, _, n))| (b.clone(), c.clone(), *n)).collect();
    super::Outcome { vars: out.vars.clone(), sums: out.sums.clone(), cells }
}

/// What a cache folder holds ([`show`]).
#[derive(Debug, Default, Serialize)]
pub struct Summary {
    /// The folder of this format's entries.
    pub folder: PathBuf,
    /// Entries that parse and pass their checksum, by table location: (entries, bytes).
    pub tables: BTreeMap<String, (usize, u64)>,
    /// Entries that do not parse or fail their checksum (they are rebuilt when next needed).
    pub corrupt: usize,
    /// Why the folder, or each entry, is not trusted (a link, not a regular file, another
    /// user's, writable by others): never read by `check` or `verify`.
    pub untrusted: Vec<String>,
    /// Bytes in all.
    pub bytes: u64,
}

/// The entry files of a cache folder: recite's own names only ([`own_name`]).
fn entries(folder: &Path) -> Result<Vec<PathBuf>, CacheFolderError> {
    let list = match std::fs::read_dir(folder) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(CacheFolderError::Unreadable { folder: folder.to_path_buf(), error }),
    };
    let mut out: Vec<PathBuf> = list
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_str().is_some_and(own_name))
        .map(|e| e.path())
        .collect();
    out.sort();
    Ok(out)
}

fn is_temporary(p: &Path) -> bool {
    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(".tmp-"))
}

/// Why the cache folder `folder` is not trusted, if it is not ([`Cache::open`]'s rule).
fn folder_distrust(folder: &Path) -> Option<String> {
    let m = std::fs::symlink_metadata(folder).ok()?;
    if m.file_type().is_symlink() {
        return Some(format!("{}: a symbolic link, not followed", folder.display()));
    }
    distrust(&m).map(|why| format!("{}: {why}", folder.display()))
}

/// Lists what the cache under `dir` holds, checking every entry; entries are read as a run
/// reads them (`read_cache_file`: no link followed, no FIFO waited on, at most
/// `MAX_ENTRY_BYTES`).
pub fn show(dir: &Path) -> Result<Summary, CacheFolderError> {
    let folder = dir.join(FOLDER);
    let mut s = Summary { folder: folder.clone(), ..Summary::default() };
    if let Some(why) = folder_distrust(&folder) {
        s.untrusted.push(why);
        return Ok(s);
    }
    for p in entries(&folder)?.into_iter().filter(|p| !is_temporary(p)) {
        let bytes = match read_cache_file(&p) {
            Ok(b) => b,
            Err(Refused::Untrusted(why)) => {
                s.untrusted.push(why);
                continue;
            }
            Err(Refused::Absent) => continue,
            Err(_) => {
                s.corrupt += 1;
                continue;
            }
        };
        let size = bytes.len() as u64;
        s.bytes += size;
        let named = |b: &Vec<u8>| {
            p.file_stem().and_then(|s| s.to_str()).and_then(|s| s.split_once('-')).map(|(_, d)| d.to_string())
                == Some(Digest::of(b).hex())
        };
        let location = Some(bytes).filter(named).and_then(parse_entry).and_then(|r| {
            // A finished entry's key is its rows' key (JSON) and more: the first value.
            let key = r.metadata.get(META_KEY)?;
            let key =
                serde_json::Deserializer::from_str(key).into_iter::<serde_json::Value>().next()?.ok()?;
            (Some(&checksum(&r.metadata, &r.rows)) == r.metadata.get(META_CHECKSUM))
                .then(|| key["location"].as_str().unwrap_or("?").to_string())
        });
        match location {
            Some(l) => {
                let t = s.tables.entry(l).or_default();
                t.0 += 1;
                t.1 += size;
            }
            None => s.corrupt += 1,
        }
    }
    Ok(s)
}

/// Removes every entry (and leftover temporary file) of the cache under `dir`; returns how many.
/// Only this format's folder is touched, and in it only recite's own names (`own_name`):
/// never anything else in `dir`, never through a link (a linked folder is refused, and the
/// folder is checked again before each removal, so one swapped for a link meanwhile stops it).
pub fn clear(dir: &Path) -> Result<usize, CacheFolderError> {
    let folder = dir.join(FOLDER);
    let m = match std::fs::symlink_metadata(&folder) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(error) => return Err(CacheFolderError::Unreadable { folder, error }),
    };
    if m.file_type().is_symlink() {
        return Err(CacheFolderError::Link(folder));
    }
    if !m.is_dir() {
        return Err(CacheFolderError::NotAFolder(folder));
    }
    // The folder, as checked, is checked again before each removal: one swapped for a link
    // meanwhile stops the clearing there.
    let same = || {
        std::fs::symlink_metadata(&folder)
            .is_ok_and(|now| !now.file_type().is_symlink() && (now.dev(), now.ino()) == (m.dev(), m.ino()))
    };
    let mut removed = 0;
    for p in entries(&folder)? {
        if !same() {
            return Err(CacheFolderError::Changed { folder: folder.clone(), removed });
        }
        // remove_file never follows a link named like an entry (it removes the link), and
        // removes no folder.
        match std::fs::remove_file(&p) {
            Ok(()) => removed += 1,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            // A folder under an entry's name: not recite's to remove.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EISDIR | libc::EPERM)) => {}
            Err(error) => return Err(CacheFolderError::Remove { entry: p, error }),
        }
    }
    let _ = std::fs::remove_dir(&folder);
    Ok(removed)
}

/// Why the cache folder could not be listed or cleared.
#[derive(Debug, thiserror::Error)]
pub enum CacheFolderError {
    /// The folder cannot be read.
    #[error("cache folder {}: {error}", folder.display())]
    Unreadable {
        /// The folder.
        folder: PathBuf,
        /// The system's error.
        error: std::io::Error,
    },
    /// The folder is a symbolic link, never followed.
    #[error(
        "cache folder {} is a symbolic link: not followed, nothing removed (remove the link \
         itself if it is not meant to be there)",
        .0.display()
    )]
    Link(PathBuf),
    /// Something else than a folder has its name.
    #[error("cache folder {} is not a folder: nothing removed", .0.display())]
    NotAFolder(PathBuf),
    /// The folder was swapped while it was cleared.
    #[error("cache folder {} changed while it was cleared: {removed} removed, then stopped", folder.display())]
    Changed {
        /// The folder.
        folder: PathBuf,
        /// Entries removed before it changed.
        removed: usize,
    },
    /// An entry could not be removed.
    #[error("{}: {error}", entry.display())]
    Remove {
        /// The entry.
        entry: PathBuf,
        /// The system's error.
        error: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_differ_when_a_byte_or_the_length_does() {
        let a = Digest::of(b"recite sums").hex();
        assert_eq!(a, Digest::of(b"recite sums").hex());
        assert_ne!(a, Digest::of(b"recite sumt").hex());
        assert_ne!(Digest::of(b"ab\0").hex(), Digest::of(b"ab").hex());
        assert_eq!(a.len(), 32);
    }

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
    fn declarations_calling_volatile_functions_are_told_from_fixed_ones() {
        let ctx = datafusion::prelude::SessionContext::new();
        let state = ctx.state();
        let funcs = state.scalar_functions();
        for fixed in [
            "wave = 6",
            "wave IN (5, 6) AND age BETWEEN 18 AND 74",
            "CAST(age AS INT) > 3 OR abs(age) < 2",
            "coalesce(\"s14r5\", 0) >= 1 AND name LIKE 'a%' AND NOT (x IS NULL)",
            "EXTRACT(year FROM ts) = 2026 AND ts > TIMESTAMP '2026-01-01'",
        ] {
            assert_eq!(volatile_in(fixed, funcs), None, "{fixed}");
        }
        for (volatile, call) in [
            ("ts > now() - INTERVAL '30 days'", "now()"),
            ("ts::date = CURRENT_DATE", "current_date"),
            ("random() < 0.5", "random()"),
            ("NOW () IS NOT NULL", "now()"),
            ("my_own_udf(x) = 1", "my_own_udf()"),
        ] {
            assert_eq!(volatile_in(volatile, funcs).as_deref(), Some(call), "{volatile}");
        }
    }

    #[test]
    fn only_recites_own_names_are_taken_for_its_files() {
        let key = "0123456789abcdef0123456789abcdef";
        assert!(own_name(&format!("{key}-{key}.arrow")));
        assert!(own_name(".tmp-aB3xY9"));
        for other in
            ["data.arrow", "x-y.arrow", &format!("{key}-{key}.arrow.bak"), ".tmp-", ".tmp-toolongname"]
        {
            assert!(!own_name(other), "{other}");
        }
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
