//! Delta Lake tables (feature `delta`): a table whose `path` is a folder holding `_delta_log/`
//! is read through the `deltalake` crate's DataFusion table provider, at one version of its log
//! (docs/catalog.md, "Delta Lake tables").
//!
//! A version is named by its commit file, `TABLE/_delta_log/00000000000000000012.json`: that is
//! the location resolution hands the scan ([`recite_core::version::Found`]), so the engine's
//! registrations, its grouping of jobs by table and the sums cache's keys all tell versions
//! apart without a field of their own, and every error about a version names its file.
//!
//! Without the feature a Delta table is refused, never read as a folder of Parquet files: the
//! folder keeps the files of every version, removed ones too, and would mix them.

use std::path::{Path, PathBuf};

/// delta-rs itself, for tests that write Delta tables with its Rust writer (tests/it/delta.rs).
#[cfg(feature = "delta")]
pub use deltalake;

/// The log folder of a Delta table.
const LOG: &str = "_delta_log";

/// Whether `location` is a Delta table's folder (it holds `_delta_log/`).
pub fn is_table(location: &Path) -> bool {
    location.join(LOG).is_dir()
}

/// When the log folder of the Delta table at `root` last had a file added, removed or renamed
/// (a commit moves it), for knowing the latest version is still the one found.
pub fn log_modified(root: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(root.join(LOG)).ok()?.modified().ok()
}

/// A Delta table and the version a location names: its folder (the latest version) or one of
/// its commit files (that version). `None` for anything else.
pub fn of_location(location: &Path) -> Option<(PathBuf, Option<u64>)> {
    if is_table(location) {
        return Some((location.to_path_buf(), None));
    }
    let log = location.parent()?;
    if log.file_name()? != LOG {
        return None;
    }
    let digits = location.file_name()?.to_str()?.strip_suffix(".json")?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((log.parent()?.to_path_buf(), Some(digits.parse().ok()?)))
}

/// The commit file of `version` of the table at `root`: the location that names that version.
pub fn commit_file(root: &Path, version: u64) -> PathBuf {
    root.join(LOG).join(format!("{version:020}.json"))
}

/// Why a version of a Delta table cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionError {
    /// The pinned version is not in the log (never committed, or its commit file removed).
    NotInLog {
        /// The version asked for.
        version: u64,
        /// The latest version the log has, when it could be read.
        latest: Option<u64>,
        /// What delta-rs said.
        error: String,
    },
    /// A moment that is not an RFC 3339 timestamp.
    BadMoment {
        /// The moment as written.
        moment: String,
        /// Why it does not parse.
        error: String,
    },
    /// No version was committed at or before the moment asked for (delta-rs would read the
    /// earliest version it has: data that did not exist then).
    BeforeFirst {
        /// The moment as written.
        moment: String,
        /// The earliest version the log has, and when it was committed.
        earliest: (u64, String),
    },
    /// The log cannot be read (a gap in its versions, a damaged commit, an unreadable folder).
    Log(String),
    /// This recite was built without the `delta` feature.
    NotBuilt,
}

impl std::fmt::Display for VersionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VersionError::NotInLog { version, latest, error } => {
                write!(f, "its Delta log has no version {version}")?;
                if let Some(l) = latest {
                    write!(f, " (the latest is {l})")?;
                }
                write!(f, ": {error}")
            }
            VersionError::BadMoment { moment, error } => {
                write!(f, "{moment:?} is not an RFC 3339 moment (such as 2026-04-20T00:00:00Z): {error}")
            }
            VersionError::BeforeFirst { moment, earliest: (v, at) } => write!(
                f,
                "no version of it was committed at or before {moment} (its earliest, version {v}, was committed {at})"
            ),
            VersionError::Log(e) => write!(f, "its Delta log cannot be read: {e}"),
            VersionError::NotBuilt => f.write_str(NOT_BUILT),
        }
    }
}

impl std::error::Error for VersionError {}

/// Why a Delta table is not read by a build without the feature.
pub const NOT_BUILT: &str = "is a Delta Lake table (it has _delta_log/), which this recite was built without: \
     `cargo build --release --features delta` makes one that reads it (a Delta folder is never read \
     as plain Parquet files: it keeps the files of every version)";

#[cfg(feature = "delta")]
pub(crate) use built::{files, find, register};

#[cfg(feature = "delta")]
mod built {
    use std::path::Path;

    use datafusion::prelude::SessionContext;
    use deltalake::{DeltaTable, DeltaTableBuilder, DeltaTableError};
    use recite_core::version::{Found, Pin};

    use super::{VersionError, commit_file};

    /// The table's URL, for delta-rs (which takes URLs; a folder's ends with `/`).
    fn url_of(root: &Path) -> Result<url::Url, VersionError> {
        let absolute = std::path::absolute(root).map_err(|e| VersionError::Log(e.to_string()))?;
        url::Url::from_directory_path(&absolute)
            .map_err(|()| VersionError::Log(format!("{} is not a folder path", absolute.display())))
    }

    /// `moment` as a time, or why it is not one.
    fn parse_moment(moment: &str) -> Result<chrono::DateTime<chrono::Utc>, VersionError> {
        chrono::DateTime::parse_from_rfc3339(moment)
            .map(|at| at.with_timezone(&chrono::Utc))
            .map_err(|e| VersionError::BadMoment { moment: moment.to_string(), error: e.to_string() })
    }

    /// Loads the table's log at `pin` (`None`: the latest).
    async fn load(root: &Path, pin: Option<&Pin>) -> Result<DeltaTable, VersionError> {
        let builder =
            DeltaTableBuilder::from_url(url_of(root)?).map_err(|e| VersionError::Log(e.to_string()))?;
        let builder = match pin {
            None => builder,
            Some(Pin::Version(v)) => builder.with_version(*v),
            Some(Pin::AsOf(moment)) => builder.with_timestamp(parse_moment(moment)?),
        };
        match builder.load().await {
            Ok(t) => Ok(t),
            Err(e) => Err(match pin {
                Some(Pin::Version(v)) => {
                    VersionError::NotInLog { version: *v, latest: latest(root).await, error: words(&e) }
                }
                _ => VersionError::Log(words(&e)),
            }),
        }
    }

    /// The latest version of the log, when it can be read (for a message).
    async fn latest(root: &Path) -> Option<u64> {
        DeltaTableBuilder::from_url(url_of(root).ok()?).ok()?.build().ok()?.get_latest_version().await.ok()
    }

    /// delta-rs's error in one line.
    fn words(e: &DeltaTableError) -> String {
        e.to_string().lines().next().unwrap_or_default().to_string()
    }

    /// The version of the table at `root` that `pin` names (`None`: the latest), with its
    /// commit time and the location that names it.
    pub(crate) async fn find(root: &Path, pin: Option<&Pin>) -> Result<Found, VersionError> {
        let table = load(root, pin).await?;
        let version = table.version().ok_or_else(|| VersionError::Log("no version was loaded".into()))?;
        let snapshot = table.snapshot().map_err(|e| VersionError::Log(words(&e)))?;
        // delta-rs's own time of the version (its commit file's modification time); a commit
        // before the log's last checkpoint is not listed, and its file is asked directly.
        let millis = snapshot.version_timestamp(version).or_else(|| {
            let modified = std::fs::metadata(commit_file(root, version)).ok()?.modified().ok()?;
            let since = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
            i64::try_from(since.as_millis()).ok()
        });
        let at = millis.and_then(chrono::DateTime::from_timestamp_millis);
        let committed = at
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
            .unwrap_or_else(|| "unknown".into());
        if let (Some(Pin::AsOf(moment)), Some(at)) = (pin, at)
            && at > parse_moment(moment)?
        {
            // delta-rs falls back to the earliest version for a moment before it.
            return Err(VersionError::BeforeFirst { moment: moment.clone(), earliest: (version, committed) });
        }
        Ok(Found {
            location: commit_file(root, version),
            version,
            committed,
            format: "delta",
            snapshot: None,
        })
    }

    /// The files version `version` of the table at `root` is made of, for the sums cache's
    /// identity: the commit files up to it (and the checkpoints the log has) and the data
    /// files that version reads. `None` when the log or a file cannot be listed.
    pub(crate) async fn files(root: &Path, version: u64) -> Option<Vec<std::path::PathBuf>> {
        let table = load(root, Some(&Pin::Version(version))).await.ok()?;
        let mut out = Vec::new();
        for uri in table.get_file_uris().ok()? {
            // delta-rs writes a local file's URI as its URL's path, `file://` taken off
            // (percent-encoded as in the URL): put back, it decodes to the path.
            let url = if uri.starts_with("file://") { uri } else { format!("file://{uri}") };
            out.push(url::Url::parse(&url).ok()?.to_file_path().ok()?);
        }
        for entry in std::fs::read_dir(root.join(super::LOG)).ok()? {
            let path = entry.ok()?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            let number = name.split('.').next().and_then(|n| n.parse::<u64>().ok());
            if number.is_some_and(|n| n <= version) && path.is_file() {
                out.push(path);
            }
        }
        Some(out)
    }

    /// Registers version `version` of the table at `root` (`None`: the latest) as `name` in
    /// `ctx`, through delta-rs's table provider (only the files of that version, its schema).
    pub(crate) async fn register(
        ctx: &SessionContext,
        name: &str,
        root: &Path,
        version: Option<u64>,
    ) -> Result<(), VersionError> {
        let table = load(root, version.map(Pin::Version).as_ref()).await?;
        table.update_datafusion_session(&ctx.state()).map_err(|e| VersionError::Log(words(&e)))?;
        let provider = table.table_provider().await.map_err(|e| VersionError::Log(e.strip_backtrace()))?;
        ctx.register_table(name, provider).map_err(|e| VersionError::Log(e.strip_backtrace()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_file_names_its_table_and_version() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(LOG)).unwrap();
        assert_eq!(of_location(dir.path()), Some((dir.path().to_path_buf(), None)));
        let twelve = commit_file(dir.path(), 12);
        assert!(twelve.ends_with("_delta_log/00000000000000000012.json"));
        assert_eq!(of_location(&twelve), Some((dir.path().to_path_buf(), Some(12))));
        for other in ["_delta_log/12.json", "_delta_log/00000000000000000012.checkpoint.parquet", "x.json"] {
            assert_eq!(of_location(&dir.path().join(other)), None, "{other}");
        }
        assert_eq!(of_location(&dir.path().join("data.parquet")), None);
    }
}
