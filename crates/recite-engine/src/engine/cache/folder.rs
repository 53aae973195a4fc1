//! A cache folder as `recite cache show` and `clear` see it: recite's own file names, what the
//! entries hold, and removing them without following a link.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::FOLDER;
use super::digest::Digest;
use super::entry::{META_CHECKSUM, META_KEY, checksum, parse_entry};
use super::trust::{Refused, distrust, read_cache_file};

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
pub(super) fn entries(folder: &Path) -> Result<Vec<PathBuf>, CacheFolderError> {
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

/// Why the cache folder `folder` is not trusted, if it is not ([`super::Cache::open`]'s rule).
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
}
