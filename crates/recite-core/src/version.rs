//! Versions of the data a claim is re-run on. A Delta Lake table keeps every version it had; a
//! claim may be pinned to one ([`Pin`]: by its period in `study.toml`, by the citation's
//! `data_version`, or by `--as-of`), and its settlement says which version it ran on
//! ([`DataVersion`]). Tables of plain files have no versions: they are read as they are now, and
//! their settlement names the files it read by their digests ([`FileDigest`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which version of a versioned table to read.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pin {
    /// A version of the table's log (Delta's version number).
    Version(u64),
    /// The latest version committed at or before this moment (RFC 3339, as written).
    AsOf(String),
}

impl std::fmt::Display for Pin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pin::Version(v) => write!(f, "version {v}"),
            Pin::AsOf(t) => write!(f, "as of {t}"),
        }
    }
}

impl Pin {
    /// A citation's `data_version` (recite's extension of the citation): a whole number is a
    /// version, a string of digits too, any other string a moment (RFC 3339).
    pub fn of_citation(v: &Value) -> Result<Pin, BadDataVersion> {
        let bad = || BadDataVersion(v.to_string());
        match v {
            Value::Number(n) => n.as_u64().map(Pin::Version).ok_or_else(bad),
            Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
                s.parse().map(Pin::Version).map_err(|_| bad())
            }
            Value::String(s) if looks_like_moment(s) => Ok(Pin::AsOf(s.clone())),
            _ => Err(bad()),
        }
    }
}

/// A citation's `data_version` that is neither a version nor a moment (the value as JSON).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "data_version {0} is neither a version (a whole number, 0 or more) nor a moment \
     (an RFC 3339 timestamp such as \"2026-04-20T00:00:00Z\")"
)]
pub struct BadDataVersion(pub String);

/// Whether `s` has the shape of an RFC 3339 timestamp (`YYYY-MM-DDTHH:MM:SS…`); the engine
/// parses it in full.
fn looks_like_moment(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 20 && b[4] == b'-' && b[7] == b'-' && matches!(b[10], b'T' | b't' | b' ')
}

/// Who chose the version a claim ran on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PinSource {
    /// Nobody: the latest version when the claim was settled.
    Latest,
    /// The cited period's `delta_version` or `as_of` in `study.toml`.
    Period,
    /// The citation's `data_version`.
    Citation,
    /// The run's `--as-of`.
    AsOfFlag,
    /// A re-run of a saved ruling on the versions it read (`recite check --rerun-of REPORT
    /// --pinned`, the workbench's re-run on the pinned version): the claim read the latest
    /// then, and is re-run on that version, not on today's latest.
    Saved,
}

/// A version of a table as the engine found it: where its scan reads, its number, its commit time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The location the engine scans for this version (for a Delta table, the version's commit
    /// file in `_delta_log/`): it names the version, so every key made of it (the engine's
    /// table registrations, the sums cache) tells versions apart.
    pub location: std::path::PathBuf,
    /// The version.
    pub version: u64,
    /// When it was committed (RFC 3339, UTC); for a table that keeps no versions, when the
    /// server was asked.
    pub committed: String,
    /// The table's format: `delta`, or `postgres` (which keeps no versions).
    pub format: &'static str,
    /// For a PostgreSQL table, the server's `pg_current_snapshot()` when it was asked.
    pub snapshot: Option<String>,
}

/// The format of a table on a PostgreSQL server: it keeps no versions.
pub const UNVERSIONED_FORMAT: &str = "postgres";

/// What a settlement ran on, for a table that keeps versions (a Delta Lake table).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DataVersion {
    /// The table's format: `delta`, or `postgres` (a server that keeps no versions: a re-run
    /// may differ).
    pub format: String,
    /// The version read. PostgreSQL: the `xmax` of the server's snapshot (the first
    /// transaction id not yet given out when it was asked).
    pub version: u64,
    /// When that version was committed (RFC 3339, UTC; Delta: its commit file's modification
    /// time, as delta-rs reads it). PostgreSQL: the server's clock when it was asked.
    pub committed: String,
    /// Who chose the version.
    pub chosen: PinSource,
    /// The pin asked for, when one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<Pin>,
    /// PostgreSQL: the server's `pg_current_snapshot()` (`xmin:xmax:in-progress`) when the
    /// claim was resolved. The server keeps no past versions: it says what was committed then,
    /// and a re-run reads the table as it is by then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
}

impl DataVersion {
    /// In words, for the text reports: `Delta version 0, committed …, pinned by the period
    /// (version 0)`.
    pub fn describe(&self) -> String {
        if self.format == UNVERSIONED_FORMAT {
            return format!(
                "PostgreSQL, unversioned: a re-run may differ (server snapshot {}, taken {})",
                self.snapshot.as_deref().unwrap_or("unknown"),
                self.committed
            );
        }
        let why = match (&self.chosen, &self.pin) {
            (PinSource::Latest, _) | (_, None) => "the latest".to_string(),
            (PinSource::Period, Some(p)) => format!("pinned by the period ({p})"),
            (PinSource::Citation, Some(p)) => format!("pinned by the citation's data_version ({p})"),
            (PinSource::AsOfFlag, Some(p)) => format!("chosen by --as-of ({p})"),
            (PinSource::Saved, Some(p)) => format!("the version the saved ruling read ({p})"),
        };
        format!("Delta version {}, committed {}, {why}", self.version, self.committed)
    }
}

/// What a file's digest covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DigestOf {
    /// A Parquet file's footer: its schema, row groups, their sizes and offsets, and every
    /// column chunk's statistics (the sums cache's identity of a Parquet file; a few kilobytes
    /// read, not the file).
    Footer,
    /// Every byte of the file (CSV, Arrow, SPSS files; Parquet too under
    /// `--cache-verify content`).
    Content,
}

/// One file a table of plain files was read from, as the sums cache identifies it
/// (docs/cache.md): the same file gives the same entry on any machine, at any time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FileDigest {
    /// The file, relative to its study's folder (`../…` when it lies outside it), or absolute
    /// where study.toml names it by an absolute path.
    pub name: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// What [`FileDigest::digest`] covers.
    pub of: DigestOf,
    /// The cache's 128-bit digest of it, in hex: it tells files apart and shows a change, but is
    /// not cryptographic (the workbench's ledger keeps SHA-256 digests of the same files).
    pub digest: String,
}

impl FileDigest {
    /// In words, for the text reports: `versant_flat.parquet (1234 bytes, footer 0a1b…)`.
    pub fn describe(&self) -> String {
        let of = match self.of {
            DigestOf::Footer => "Parquet footer",
            DigestOf::Content => "content",
        };
        format!("{} ({} bytes, {of} {})", self.name, self.bytes, self.digest)
    }
}

/// The files of a table of plain files in words: `files: a.csv (… bytes, content …); b.csv (…)`,
/// the note that they keep no versions first.
pub fn describe_files(files: &[FileDigest]) -> String {
    let list: Vec<String> = files.iter().map(FileDigest::describe).collect();
    format!("files, unversioned: a re-run may differ; read {}", list.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_citation_pins_a_version_or_a_moment() {
        assert_eq!(Pin::of_citation(&json!(3)), Ok(Pin::Version(3)));
        assert_eq!(Pin::of_citation(&json!("12")), Ok(Pin::Version(12)));
        assert_eq!(
            Pin::of_citation(&json!("2026-04-20T00:00:00Z")),
            Ok(Pin::AsOf("2026-04-20T00:00:00Z".into()))
        );
        let saved = DataVersion {
            format: "delta".into(),
            version: 0,
            committed: "2026-04-20T00:00:00.000Z".into(),
            chosen: PinSource::Saved,
            pin: Some(Pin::Version(0)),
            snapshot: None,
        };
        assert_eq!(
            saved.describe(),
            "Delta version 0, committed 2026-04-20T00:00:00.000Z, the version the saved ruling read (version 0)"
        );
        for bad in [json!(-1), json!(1.5), json!("latest"), json!(null), json!([1])] {
            assert!(Pin::of_citation(&bad).unwrap_err().to_string().contains("neither a version"), "{bad}");
        }
    }
}
