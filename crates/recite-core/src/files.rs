//! Input files found and read, reports written: the rules that keep a hostile or broken input
//! folder from hanging, exhausting or overwriting anything (docs/design.md, "Safety").
//!
//! - Only regular files are read from folders and globs. FIFOs, sockets and devices found there
//!   (also behind a symbolic link) are refused with a finding; a file is opened with
//!   `O_NONBLOCK` and checked again on the open handle, so one swapped in after the check
//!   cannot block either. A FIFO named on the command line (`verify <(cat x.json)`, process
//!   substitution) is read, as any Unix tool reads it: the user named it.
//! - Symbolic link loops are findings: a link chain that never ends (the system's `ELOOP`), and a
//!   folder link to one of its own ancestors (not followed). A folder reached twice is read once.
//! - A file larger than `--max-input-size` is refused unread; a folder or file that cannot be
//!   read is a finding for itself alone.
//! - A report goes to a temporary file created exclusively (random name, `O_EXCL`) beside the
//!   target, then renamed over it; the target may not be an input, a folder, a socket or a
//!   block device. A character device or FIFO (`-o /dev/null`, `-o >(gzip > r.gz)`) is written
//!   to directly, never renamed over.

use std::collections::HashSet;
use std::fs::Metadata;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Rule of the finding for an input that could not be read (an I/O error, a link loop).
pub const RULE_UNREADABLE: &str = "input/unreadable";
/// Rule of the finding for an input that is not a regular file (FIFO, socket, device).
pub const RULE_NOT_A_FILE: &str = "input/not-a-file";
/// Rule of the finding for a folder link to one of its own ancestors.
pub const RULE_LOOP: &str = "input/loop";
/// Rule of the finding for an input over the size cap.
pub const RULE_TOO_LARGE: &str = "input/too-large";

/// Default of `--max-input-size`: 256 MiB per input file.
pub const DEFAULT_MAX_INPUT_SIZE: u64 = 256 << 20;

/// File name extensions read from folders.
const EXTENSIONS: [&str; 6] = ["json", "jsonl", "ndjson", "sse", "txt", "log"];

/// One input: a file to read (or `-`), or a path refused with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A regular file (as found), or `-` for standard input.
    File(String),
    /// A FIFO named on the command line (process substitution): read once, spooled.
    Pipe(String),
    /// Not read: the path, the finding's rule and message.
    Refused {
        /// The path as found.
        path: String,
        /// One of the `RULE_*` constants.
        rule: &'static str,
        /// Why, in words.
        message: String,
    },
}

impl Source {
    /// The path as found (`-` for standard input).
    pub fn path(&self) -> &str {
        match self {
            Source::File(p) | Source::Pipe(p) | Source::Refused { path: p, .. } => p,
        }
    }
}

/// Parses a size: bytes, or with a unit (`k`, `KiB`, `M`, `MiB`, `G`, `GiB`; powers of 1024).
pub fn parse_size(s: &str) -> Result<u64, SizeError> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: u64 = digits.parse().map_err(|_| SizeError::NotASize(s.to_string()))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        other => return Err(SizeError::Unit { size: s.to_string(), unit: other.to_string() }),
    };
    n.checked_mul(1 << shift).ok_or_else(|| SizeError::TooLarge(s.to_string()))
}

/// What kind of non-regular file `m` describes, in words.
fn kind(m: &Metadata) -> &'static str {
    let t = m.file_type();
    if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

fn not_a_file(path: String, m: &Metadata) -> Source {
    let message = format!("{} is not a regular file: {}; not read", path, kind(m));
    Source::Refused { path, rule: RULE_NOT_A_FILE, message }
}

fn unreadable(path: String, e: &std::io::Error) -> Source {
    let message = format!("cannot read {path}: {}", describe(e));
    Source::Refused { path, rule: RULE_UNREADABLE, message }
}

/// An I/O error in words, with what it means for the loops recite looks for.
fn describe(e: &std::io::Error) -> String {
    if e.raw_os_error() == Some(libc::ELOOP) {
        format!("{e} (a loop of symbolic links)")
    } else {
        e.to_string()
    }
}

/// Expands files, folders and globs into the inputs to read, in a stable order. A path that
/// does not exist (or a glob that matches nothing) is a usage error; anything else that cannot
/// be read is a [`Source::Refused`], so the rest of the batch still runs.
pub fn expand_inputs(inputs: &[String]) -> Result<Vec<Source>, InputsError> {
    let mut out = Vec::new();
    for i in inputs {
        if i == "-" {
            out.push(Source::File(i.clone()));
            continue;
        }
        let p = Path::new(i);
        match std::fs::metadata(p) {
            Ok(m) if m.is_file() => out.push(Source::File(i.clone())),
            Ok(m) if m.file_type().is_fifo() => out.push(Source::Pipe(i.clone())),
            Ok(m) if m.is_dir() => {
                let mut found = Vec::new();
                let mut walk = Walk { ancestors: Vec::new(), seen: HashSet::new() };
                walk.folder(p, &m, &mut found);
                if found.is_empty() {
                    return Err(InputsError::EmptyFolder(i.clone()));
                }
                found.sort_by(|a, b| a.path().cmp(b.path()));
                out.extend(found);
            }
            Ok(m) => out.push(not_a_file(i.clone(), &m)),
            Err(_) if i.contains(['*', '?', '[']) => {
                let mut found = Vec::new();
                let entries =
                    glob::glob(i).map_err(|source| InputsError::Glob { input: i.clone(), source })?;
                for entry in entries {
                    match entry {
                        Ok(path) => match std::fs::metadata(&path) {
                            Ok(m) if m.is_file() => found.push(Source::File(path.display().to_string())),
                            Ok(m) if m.is_dir() => {}
                            Ok(m) => found.push(not_a_file(path.display().to_string(), &m)),
                            Err(e) => found.push(unreadable(path.display().to_string(), &e)),
                        },
                        Err(e) => found.push(unreadable(e.path().display().to_string(), e.error())),
                    }
                }
                if found.is_empty() {
                    return Err(InputsError::NoMatch(i.clone()));
                }
                found.sort_by(|a, b| a.path().cmp(b.path()));
                out.extend(found);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if std::fs::symlink_metadata(p).is_ok() {
                    return Err(InputsError::DanglingLink(i.clone()));
                }
                return Err(InputsError::Missing(i.clone()));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
                return Err(InputsError::FileAsFolder { input: i.clone(), error: e });
            }
            Err(e) => out.push(unreadable(i.clone(), &e)),
        }
    }
    Ok(out)
}

/// A folder walk: the folders above the current one (to find links to an ancestor) and every
/// folder read so far (so one reached by two links is read once), by device and inode.
struct Walk {
    ancestors: Vec<((u64, u64), PathBuf)>,
    seen: HashSet<(u64, u64)>,
}

impl Walk {
    fn folder(&mut self, dir: &Path, m: &Metadata, out: &mut Vec<Source>) {
        let id = (m.dev(), m.ino());
        if let Some((_, ancestor)) = self.ancestors.iter().find(|(a, _)| *a == id) {
            let message = format!(
                "{} links to its own ancestor folder {}: a loop, not followed",
                dir.display(),
                ancestor.display()
            );
            out.push(Source::Refused { path: dir.display().to_string(), rule: RULE_LOOP, message });
            return;
        }
        if !self.seen.insert(id) {
            return; // already read through another link
        }
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                out.push(Source::Refused {
                    path: dir.display().to_string(),
                    rule: RULE_UNREADABLE,
                    message: format!("cannot read folder {}: {}", dir.display(), describe(&e)),
                });
                return;
            }
        };
        self.ancestors.push((id, dir.to_path_buf()));
        let mut paths = Vec::new();
        for e in entries {
            match e {
                Ok(e) => paths.push(e.path()),
                Err(e) => out.push(Source::Refused {
                    path: dir.display().to_string(),
                    rule: RULE_UNREADABLE,
                    message: format!("cannot list folder {}: {}", dir.display(), describe(&e)),
                }),
            }
        }
        paths.sort();
        for p in paths {
            let wanted = p
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| EXTENSIONS.contains(&e.to_lowercase().as_str()));
            match std::fs::metadata(&p) {
                Ok(m) if m.is_dir() => self.folder(&p, &m, out),
                Ok(m) if m.is_file() && wanted => out.push(Source::File(p.display().to_string())),
                Ok(m) if wanted && !m.is_file() => out.push(not_a_file(p.display().to_string(), &m)),
                Ok(_) => {}
                // A link loop or a dangling link under an input's name; other names are skipped as
                // they would be if they could be read.
                Err(e) if wanted || e.raw_os_error() == Some(libc::ELOOP) => {
                    out.push(unreadable(p.display().to_string(), &e))
                }
                Err(_) => {}
            }
        }
        self.ancestors.pop();
    }
}

/// A size that does not parse (`--max-input-size`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// No number first.
    #[error("{0:?}: not a size (e.g. 1000000, 64MiB, 1G)")]
    NotASize(String),
    /// More bytes than a 64-bit count holds.
    #[error("{0:?}: too large")]
    TooLarge(String),
    /// A unit recite does not know.
    #[error("{size:?}: unknown unit {unit:?} (use KiB, MiB or GiB)")]
    Unit {
        /// The size as given.
        size: String,
        /// Its unit, lower-cased.
        unit: String,
    },
}

/// Why the inputs named on the command line cannot be listed (a usage error).
#[derive(Debug, thiserror::Error)]
pub enum InputsError {
    /// A folder holding no file recite reads.
    #[error("{0}: no .json, .jsonl, .ndjson, .sse, .txt or .log file in this folder")]
    EmptyFolder(String),
    /// A glob that does not parse.
    #[error("{input}: not a valid glob")]
    Glob {
        /// The input.
        input: String,
        /// What is wrong with it.
        source: glob::PatternError,
    },
    /// A glob matching nothing.
    #[error("{0}: no file matches")]
    NoMatch(String),
    /// A link to nothing.
    #[error("{0}: a symbolic link to a file or folder that does not exist")]
    DanglingLink(String),
    /// Nothing there.
    #[error("{0}: no such file or folder")]
    Missing(String),
    /// A file where the path needs a folder.
    #[error("{input}: a file is named as a folder in this path ({error})")]
    FileAsFolder {
        /// The input.
        input: String,
        /// The system's error.
        error: std::io::Error,
    },
}

/// Why [`read_one`] read nothing.
#[derive(Debug, thiserror::Error)]
pub enum ReadOneError {
    /// Nothing at the path.
    #[error("{0}: no such file")]
    Missing(String),
    /// The path cannot be looked at.
    #[error("cannot read {path}: {why}")]
    Unreadable {
        /// The path.
        path: String,
        /// The system's words.
        why: String,
    },
    /// A folder, a socket, a device.
    #[error("{path} is not a regular file: {kind}")]
    NotAFile {
        /// The path.
        path: String,
        /// What it is.
        kind: &'static str,
    },
    /// Refused as `check` refuses an input (too large, unreadable…).
    #[error("{message}")]
    Refused {
        /// The rule a finding would name.
        rule: &'static str,
        /// The refusal in words.
        message: String,
    },
}

/// What is being written and where, for [`OutputError`]'s messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// "the report", "the catalog".
    pub what: String,
    /// The path asked for.
    pub path: PathBuf,
}

/// Why a report (or other output) cannot be written where it was asked for.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// Its folder is a file.
    #[error("cannot write {} to {}: {} is not a folder", to.what, to.path.display(), folder.display())]
    NotAFolder {
        /// The output.
        to: Target,
        /// Its folder.
        folder: PathBuf,
    },
    /// A file is named as a folder in its path.
    #[error("cannot write {} to {}: a file is named as a folder in this path", .0.what, .0.path.display())]
    FileAsFolder(Target),
    /// Its folder does not exist.
    #[error("cannot write {} to {}: folder {} does not exist", to.what, to.path.display(), folder.display())]
    NoFolder {
        /// The output.
        to: Target,
        /// Its folder.
        folder: PathBuf,
    },
    /// Its folder cannot be looked at.
    #[error("cannot write {} to {}: {error}", to.what, to.path.display())]
    Folder {
        /// The output.
        to: Target,
        /// The system's error.
        error: std::io::Error,
    },
    /// It is one of the inputs.
    #[error("refusing to write {} to {}: it is one of the inputs", .0.what, .0.path.display())]
    IsInput(Target),
    /// A folder, socket or block device is there.
    #[error("refusing to write {} to {}: it is not a regular file but {kind}", to.what, to.path.display())]
    NotRegular {
        /// The output.
        to: Target,
        /// What is there.
        kind: &'static str,
    },
    /// A stream was swapped for something else while it was opened.
    #[error("refusing to write {} to {}: it changed while it was opened", .0.what, .0.path.display())]
    Changed(Target),
    /// Writing failed.
    #[error("cannot write {} to {}", to.what, to.path.display())]
    Write {
        /// The output.
        to: Target,
        /// Why.
        source: std::io::Error,
    },
    /// The complete file could not be renamed over the target.
    #[error("cannot write {} to {}: {error}", to.what, to.path.display())]
    Rename {
        /// The output.
        to: Target,
        /// The system's error.
        error: std::io::Error,
    },
}

/// Standard input or a pipe could not be spooled: no temporary file.
#[derive(Debug, thiserror::Error)]
#[error("cannot spool an input")]
pub struct SpoolError(#[source] pub std::io::Error);

/// Why an input was not read: a finding's rule and message.
pub type Refusal = (&'static str, String);

/// Reads a regular file, at most `max` bytes. Opened without blocking (`O_NONBLOCK`) and checked
/// on the open handle, so a FIFO or device swapped in after [`expand_inputs`] is refused too.
pub fn read_file(path: &str, max: u64) -> Result<Vec<u8>, Refusal> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| (RULE_UNREADABLE, format!("cannot read {path}: {}", describe(&e))))?;
    let m = file.metadata().map_err(|e| (RULE_UNREADABLE, format!("cannot read {path}: {e}")))?;
    if !m.is_file() {
        return Err((RULE_NOT_A_FILE, format!("{path} is not a regular file: {}; not read", kind(&m))));
    }
    if m.len() > max {
        return Err(too_large(path, Some(m.len()), max));
    }
    read_capped(file, path, max)
}

/// Reads standard input, at most `max` bytes.
pub fn read_stdin(max: u64) -> Result<Vec<u8>, Refusal> {
    read_capped(std::io::stdin().lock(), "-", max)
}

fn read_capped(r: impl Read, path: &str, max: u64) -> Result<Vec<u8>, Refusal> {
    let mut buf = Vec::new();
    r.take(max.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| (RULE_UNREADABLE, format!("cannot read {path}: {e}")))?;
    if buf.len() as u64 > max {
        return Err(too_large(path, None, max));
    }
    Ok(buf)
}

fn too_large(path: &str, size: Option<u64>, max: u64) -> Refusal {
    let size = size.map(|s| format!(" ({s} bytes)")).unwrap_or_default();
    (RULE_TOO_LARGE, format!("{path}{size} is larger than --max-input-size ({max} bytes); not read"))
}

/// Reads a FIFO named on the command line, at most `max` bytes, waiting for its writer as any
/// Unix tool does (process substitution has one).
pub fn read_pipe(path: &str, max: u64) -> Result<Vec<u8>, Refusal> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOCTTY)
        .open(path)
        .map_err(|e| (RULE_UNREADABLE, format!("cannot read {path}: {}", describe(&e))))?;
    let m = file.metadata().map_err(|e| (RULE_UNREADABLE, format!("cannot read {path}: {e}")))?;
    if !m.file_type().is_fifo() {
        return Err((RULE_NOT_A_FILE, format!("{path} is not a regular file: {}; not read", kind(&m))));
    }
    read_capped(file, path, max)
}

/// Reads a file named on the command line (or `-`, or a FIFO: process substitution) for a
/// command that reads one input: the same rules as for `check`'s inputs, as an error.
pub fn read_one(path: &str, max: u64) -> Result<Vec<u8>, ReadOneError> {
    let refused = |(rule, message): Refusal| ReadOneError::Refused { rule, message };
    if path == "-" {
        return read_stdin(max).map_err(refused);
    }
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ReadOneError::Missing(path.to_string())),
        Err(e) => Err(ReadOneError::Unreadable { path: path.to_string(), why: describe(&e) }),
        Ok(m) if m.file_type().is_fifo() => read_pipe(path, max).map_err(refused),
        Ok(m) if !m.is_file() => Err(ReadOneError::NotAFile { path: path.to_string(), kind: kind(&m) }),
        Ok(_) => read_file(path, max).map_err(refused),
    }
}

/// The identity (device, inode) of every regular file among `inputs`.
pub fn identities<'a>(inputs: impl IntoIterator<Item = &'a str>) -> Vec<(u64, u64)> {
    inputs
        .into_iter()
        .filter(|p| *p != "-")
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| (m.dev(), m.ino()))
        .collect()
}

/// Checks that `path` may receive a report: its folder exists and is a folder, and the path is
/// not a folder, a socket or a block device, nor one of the `inputs` (by device and inode, so
/// through links too). A character device or FIFO ([`is_stream`]) may: it is written to.
pub fn check_output(path: &Path, inputs: &[(u64, u64)]) -> Result<(), OutputError> {
    check_output_of(path, "the report", inputs, true)
}

/// Whether `path` is (or links to) a character device or a FIFO: `-o /dev/null`, `-o
/// /dev/stdout`, `-o >(…)`. A report is written straight into it, as every Unix tool does,
/// never through a temporary file renamed over it.
pub fn is_stream(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_char_device() || m.file_type().is_fifo())
}

/// [`check_output`] for a file that is `what` ("the report", "the catalog"): errors say so.
/// `streams`: whether a character device or FIFO may be the target (not when renaming over it).
fn check_output_of(path: &Path, what: &str, inputs: &[(u64, u64)], streams: bool) -> Result<(), OutputError> {
    let target = || Target { what: what.to_string(), path: path.to_path_buf() };
    let dir = folder_of(path);
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(OutputError::NotAFolder { to: target(), folder: dir.to_path_buf() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            return Err(OutputError::FileAsFolder(target()));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(OutputError::NoFolder { to: target(), folder: dir.to_path_buf() });
        }
        Err(e) => return Err(OutputError::Folder { to: target(), error: e }),
    }
    match std::fs::metadata(path) {
        Ok(m) if inputs.contains(&(m.dev(), m.ino())) => Err(OutputError::IsInput(target())),
        Ok(m) if streams && (m.file_type().is_char_device() || m.file_type().is_fifo()) => Ok(()),
        Ok(m) if !m.is_file() => Err(OutputError::NotRegular { to: target(), kind: kind(&m) }),
        _ => Ok(()),
    }
}

fn folder_of(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// Writes `text` to `path` atomically: a temporary file created exclusively with a random name
/// in the same folder (so a link planted at a predictable name is never followed), renamed over
/// `path` once complete. Errors name `path`, never the temporary file.
pub fn write_atomically(path: &Path, text: &str, inputs: &[(u64, u64)]) -> Result<(), OutputError> {
    write_atomically_as(path, "the report", text, inputs)
}

/// [`write_atomically`] for a file that is `what` ("the catalog"): errors say so.
pub fn write_atomically_as(
    path: &Path,
    what: &str,
    text: &str,
    inputs: &[(u64, u64)],
) -> Result<(), OutputError> {
    use std::io::Write;
    check_output_of(path, what, inputs, true)?;
    if is_stream(path) {
        let mut f = open_stream(path, what)?;
        return f.write_all(text.as_bytes()).and_then(|_| f.flush()).map_err(writing(path, what));
    }
    let mut tmp = temporary_beside_as(path, what)?;
    tmp.write_all(text.as_bytes()).map_err(writing(path, what))?;
    persist_as(tmp, path, what, inputs)
}

/// Opens a character device or FIFO ([`is_stream`]) to write `what` into: never created,
/// truncated or renamed over. A FIFO waits for its reader, as any Unix tool's output does.
pub fn open_stream(path: &Path, what: &str) -> Result<std::fs::File, OutputError> {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(path)
        .map_err(writing(path, what))?;
    let m = f.metadata().map_err(writing(path, what))?;
    if !(m.file_type().is_char_device() || m.file_type().is_fifo()) {
        return Err(OutputError::Changed(Target { what: what.to_string(), path: path.to_path_buf() }));
    }
    Ok(f)
}

/// The error of an I/O failure while writing `what` to `path`, with the failure as its cause.
fn writing<'a>(path: &'a Path, what: &'a str) -> impl FnOnce(std::io::Error) -> OutputError + 'a {
    move |source| OutputError::Write {
        to: Target { what: what.to_string(), path: path.to_path_buf() },
        source,
    }
}

/// A temporary file for `path`'s content, created exclusively with a random name in the same
/// folder (so a link planted at a predictable name is never followed).
pub fn temporary_beside(path: &Path) -> Result<tempfile::NamedTempFile, OutputError> {
    temporary_beside_as(path, "the report")
}

fn temporary_beside_as(path: &Path, what: &str) -> Result<tempfile::NamedTempFile, OutputError> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(folder_of(path))
        .map_err(writing(path, what))
}

/// Syncs a complete temporary file and renames it over `path`. Errors name `path`, never the
/// temporary file.
pub fn persist(tmp: tempfile::NamedTempFile, path: &Path, inputs: &[(u64, u64)]) -> Result<(), OutputError> {
    persist_as(tmp, path, "the report", inputs)
}

fn persist_as(
    tmp: tempfile::NamedTempFile,
    path: &Path,
    what: &str,
    inputs: &[(u64, u64)],
) -> Result<(), OutputError> {
    tmp.as_file().sync_all().map_err(writing(path, what))?;
    // Checked again just before the rename: the target may have changed during the run, and
    // nothing is ever renamed over a device or FIFO.
    check_output_of(path, what, inputs, false)?;
    tmp.persist(path).map_err(|e| OutputError::Rename {
        to: Target { what: what.to_string(), path: path.to_path_buf() },
        error: e.error,
    })?;
    Ok(())
}

/// Standard input, and FIFOs named on the command line, spooled to temporary files (at most
/// `--max-input-size` bytes each), so a batch can read them more than once like any file.
pub struct StdinSpool {
    spooled: std::collections::HashMap<String, Result<tempfile::NamedTempFile, Refusal>>,
}

impl StdinSpool {
    /// Spools standard input when `-` is among `sources`, and every [`Source::Pipe`].
    pub fn new(sources: &[Source], max: u64) -> Result<StdinSpool, SpoolError> {
        let mut spooled = std::collections::HashMap::new();
        for s in sources {
            let name = s.path();
            let spool = name == "-" || matches!(s, Source::Pipe(_));
            if !spool || spooled.contains_key(name) {
                continue;
            }
            let mut tmp = tempfile::NamedTempFile::new().map_err(SpoolError)?;
            let copied = if name == "-" {
                std::io::copy(&mut std::io::stdin().lock().take(max.saturating_add(1)), &mut tmp)
            } else {
                match std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOCTTY).open(name) {
                    Ok(f) => std::io::copy(&mut f.take(max.saturating_add(1)), &mut tmp),
                    Err(e) => Err(e),
                }
            };
            let one = match copied {
                Err(e) => Err((RULE_UNREADABLE, format!("cannot read {name}: {}", describe(&e)))),
                Ok(n) if n > max => Err(too_large(name, None, max)),
                Ok(_) => Ok(tmp),
            };
            spooled.insert(name.to_string(), one);
        }
        Ok(StdinSpool { spooled })
    }

    /// The batch's inputs, standard input and pipes read from their spools.
    pub fn sources(&self, sources: &[Source]) -> Vec<crate::check::Source> {
        use crate::check::Source as In;
        sources
            .iter()
            .map(|s| match (s, self.spooled.get(s.path())) {
                (Source::Refused { path, rule, message }, _) => {
                    In::Refused { name: path.clone(), rule, message: message.clone() }
                }
                (Source::File(f) | Source::Pipe(f), Some(Err((rule, message)))) => {
                    In::Refused { name: f.clone(), rule, message: message.clone() }
                }
                (Source::File(f) | Source::Pipe(f), Some(Ok(tmp))) => {
                    In::File { name: f.clone(), path: tmp.path().to_string_lossy().into_owned() }
                }
                (Source::File(f) | Source::Pipe(f), None) => In::File { name: f.clone(), path: f.clone() },
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!(parse_size("100"), Ok(100));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("2 kb"), Ok(2048));
        assert!(parse_size("ten").is_err());
        assert!(parse_size("5 parsecs").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
    }
}
