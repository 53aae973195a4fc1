//! Which files of the cache are trusted (this user's, not writable by others, no link followed)
//! and how an entry file is read.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use super::MAX_ENTRY_BYTES;

/// Why a file or folder of the cache is not trusted: owned by another user than the one
/// running recite, or writable by its group or others (either could have forged its entries,
/// whose checksums anyone can compute). `None` when trusted.
pub(super) fn distrust(m: &std::fs::Metadata) -> Option<String> {
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
pub(super) fn warn(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "recite: warning: {line}");
}

/// Reads a cache file's bytes: only a regular file (a link is not followed, a FIFO or device
/// is not waited on: `O_NOFOLLOW | O_NONBLOCK`, checked on the open handle), this user's and
/// not writable by others ([`distrust`]), of at most [`MAX_ENTRY_BYTES`].
pub(super) fn read_cache_file(path: &Path) -> Result<Vec<u8>, Refused> {
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

/// Why an entry on disk was not used.
pub(super) enum Refused {
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
