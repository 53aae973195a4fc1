//! The versions of versioned tables (Delta Lake's log, a PostgreSQL server's snapshot), and the
//! engine as the resolver's [`Schemas`]: a table's schema, at a version.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::runtime::Runtime;

use super::Engine;
use crate::catalog::{self, Study};
use crate::resolve::{self, Schemas};
use recite_core::version::{Found, Pin};

/// How long a PostgreSQL server's snapshot stands for the claims resolved after it.
const POSTGRES_SNAPSHOT_KEPT: std::time::Duration = std::time::Duration::from_secs(1);
/// How long a PostgreSQL server that could not be asked is not asked again.
const POSTGRES_FAILURE_KEPT: std::time::Duration = std::time::Duration::from_secs(60);

/// The versions of Delta tables (and PostgreSQL servers' snapshots) an engine found, by table folder and pin: when the log folder
/// was last modified (the latest only) and the version, or why none.
type KnownVersions =
    HashMap<(PathBuf, Option<Pin>), (Option<std::time::SystemTime>, Result<Found, VersionLookupError>)>;

/// Why the version of a versioned table could not be found; kept with the table's other
/// answers, so a server that could not be asked is not asked again at once.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(super) enum VersionLookupError {
    /// The PostgreSQL server of the table at `location` could not say its snapshot.
    #[error("{} {error}", location.display())]
    Postgres {
        /// The table's location.
        location: PathBuf,
        /// Why.
        error: crate::postgres::PostgresError,
    },
    /// The Delta table's log has no such version (or cannot be read).
    #[error("{0}")]
    Delta(crate::delta::VersionError),
}

impl Schemas for Engine {
    fn schema(
        &self,
        study: &Study,
        table: &catalog::Table,
    ) -> Result<Arc<resolve::Schema>, resolve::TableError> {
        self.declare(study, table);
        let schema =
            self.schema_of(&table.location(study)).map_err(|e| resolve::TableError::from(e.to_string()))?;
        let fields = schema.fields().iter().map(|f| {
            resolve::Field::new(f.name().clone(), f.data_type().to_string(), f.data_type().is_numeric())
        });
        Ok(Arc::new(resolve::Schema::new(fields.collect())))
    }

    fn version(
        &self,
        study: &Study,
        table: &catalog::Table,
        pin: Option<&Pin>,
    ) -> Result<Option<Found>, resolve::TableError> {
        self.versions.find(&self.rt, table.location(study), pin)
    }

    // The engine reads the latest unless told; a re-run of a saved ruling wraps it (`OnSaved`).
    fn saved_version(&self, _: &str, _: &str) -> Option<u64> {
        None
    }

    fn as_of(&self) -> Option<&str> {
        self.as_of.as_deref()
    }

    fn file_digests(&self, study: &Study, table: &catalog::Table) -> Vec<recite_core::version::FileDigest> {
        self.file_digests_of(&table.location(study), study.dir())
    }

    fn schema_at(&self, found: &Found) -> Result<Arc<resolve::Schema>, resolve::TableError> {
        let schema = self.schema_of(&found.location).map_err(|e| resolve::TableError::from(e.to_string()))?;
        let fields = schema.fields().iter().map(|f| {
            resolve::Field::new(f.name().clone(), f.data_type().to_string(), f.data_type().is_numeric())
        });
        Ok(Arc::new(resolve::Schema::new(fields.collect())))
    }
}

/// The versions of versioned tables an engine found ([`KnownVersions`]), so a batch's claims
/// do not each load a Delta log or ask a server. What a pin names does not move; the latest
/// does (a server's engine lives long), so it is kept with its log folder's modification time,
/// which a commit moves.
pub(super) struct Versions {
    known: Mutex<KnownVersions>,
}

impl Versions {
    /// None found yet.
    pub(super) fn new() -> Versions {
        Versions { known: Mutex::new(HashMap::new()) }
    }

    /// The version of the table at `location` that `pin` names (`None`: the latest), read on
    /// `rt`; `None` for a table that keeps no versions.
    pub(super) fn find(
        &self,
        rt: &Runtime,
        location: PathBuf,
        pin: Option<&Pin>,
    ) -> Result<Option<Found>, resolve::TableError> {
        if crate::postgres::is_location(&location.to_string_lossy()) {
            // A server keeps no versions: a pin cannot be honoured, and the latest is what
            // the server holds when asked.
            if let Some(pin) = pin {
                return Err(format!(
                    "{pin} is pinned, but a PostgreSQL table keeps no versions: the pinned data cannot be read"
                )
                .into());
            }
            let key = (location, None);
            let now = std::time::SystemTime::now();
            let known = self.known.lock().ok().and_then(|m| m.get(&key).cloned());
            if let Some((Some(when), found)) = known {
                // A snapshot is taken again after a second; a server that failed is not asked
                // again for a minute (a batch's claims on an unreachable server would each wait
                // out a connection).
                let kept = if found.is_ok() { POSTGRES_SNAPSHOT_KEPT } else { POSTGRES_FAILURE_KEPT };
                if now.duration_since(when).is_ok_and(|age| age < kept) {
                    return found.map(Some).map_err(|e| resolve::TableError::from(e.to_string()));
                }
            }
            let found = postgres_version(rt, &key.0)
                .map_err(|error| VersionLookupError::Postgres { location: key.0.clone(), error });
            if let Ok(mut m) = self.known.lock() {
                m.insert(key, (Some(now), found.clone()));
            }
            return found.map(Some).map_err(|e| resolve::TableError::from(e.to_string()));
        }
        if !crate::delta::is_table(&location) {
            return Ok(None);
        }
        // The latest is known while no commit was added or removed in the log folder since.
        let stamp = match pin {
            Some(_) => None,
            None => crate::delta::log_modified(&location),
        };
        let key = (location, pin.cloned());
        let known = self.known.lock().ok().and_then(|m| m.get(&key).cloned());
        if let Some((when, found)) = known
            && (pin.is_some() || (stamp.is_some() && when == stamp))
        {
            return found.map(Some).map_err(|e| resolve::TableError::from(e.to_string()));
        }
        let found = delta_version(rt, &key.0, pin).map_err(VersionLookupError::Delta);
        if let Ok(mut m) = self.known.lock() {
            m.insert(key, (stamp, found.clone()));
        }
        found.map(Some).map_err(|e| resolve::TableError::from(e.to_string()))
    }
}

/// The version of the Delta table at `location` that `pin` names (`None`: the latest).
#[cfg(feature = "delta")]
pub(super) fn delta_version(
    rt: &Runtime,
    location: &Path,
    pin: Option<&Pin>,
) -> Result<Found, crate::delta::VersionError> {
    rt.block_on(crate::delta::find(location, pin))
}

/// Without the `delta` feature no Delta table is read.
#[cfg(not(feature = "delta"))]
pub(super) fn delta_version(
    _rt: &Runtime,
    _location: &Path,
    _pin: Option<&Pin>,
) -> Result<Found, crate::delta::VersionError> {
    Err(crate::delta::VersionError::NotBuilt)
}

/// What the PostgreSQL server of the table at `location` can say of the data a scan reads
/// now: its snapshot, as a version that is no version ([`recite_core::version::UNVERSIONED_FORMAT`]).
#[cfg(feature = "postgres")]
fn postgres_version(rt: &Runtime, location: &Path) -> Result<Found, crate::postgres::PostgresError> {
    let source = crate::postgres::Source::of_location(&location.to_string_lossy())?;
    let (snapshot, at) = rt.block_on(crate::postgres::snapshot(&source))?;
    // xmin:xmax:in-progress; xmax is the first transaction id not yet given out.
    let xmax = snapshot.split(':').nth(1).and_then(|x| x.parse().ok()).unwrap_or(0);
    Ok(Found {
        location: location.to_path_buf(),
        version: xmax,
        committed: at,
        format: recite_core::version::UNVERSIONED_FORMAT,
        snapshot: Some(snapshot),
    })
}

/// Without the `postgres` feature no PostgreSQL table is read.
#[cfg(not(feature = "postgres"))]
fn postgres_version(_rt: &Runtime, _location: &Path) -> Result<Found, crate::postgres::PostgresError> {
    Err(crate::postgres::PostgresError::NotBuilt)
}
