//! The sufficient-statistics cache (docs/cache.md): what the grouped scan sums for one set of base
//! rows — per code the count, Σw and Σw², per PSU and code Σw, the cells' counts and the weight's
//! flags (`grouped::BaseSums`) — kept in Arrow IPC files under `DIR/recite-sums-v4/`, so a later
//! run settles claims on the same rows without scanning. Every measure on those rows (any share,
//! mean, total, ratio) is taken from the same per-code sums, so new claims on a cached column hit.
//!
//! One entry per set of base rows: its file name is a digest of the key (the [`JobKey`](crate::scan::JobKey) of its
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

use std::collections::HashMap;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

mod digest;
mod entry;
mod folder;
mod identity;
mod lookup;
mod trust;

pub use folder::{CacheFolderError, Summary, clear, show};
pub(super) use identity::{FileDigests, Identifier};

use folder::entries;
use trust::distrust;

/// The entry format; a change of layout or meaning bumps it (and the folder name). 2: sums
/// from the exact 2^-130 fixed point (1 held sums rounded to 10^-12, wrong for small weights).
/// 3: keys made from the job's [`JobKey`](crate::scan::JobKey). 4: sums at each weight column's own scale (any
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

    /// What proves a table unchanged before an entry is used.
    pub(in crate::engine) fn verify(&self) -> Verify {
        self.verify
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
