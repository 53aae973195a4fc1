//! The workbench's ledger: every case settled in the browser, kept in one SQLite file
//! (docs/workbench.md). A case is its inputs (bytes and SHA-256), the data layer's fingerprint,
//! the JSON and HTML reports and the time; re-runs are appended beside it, the ruling is never
//! rewritten.
//!
//! Every write is one transaction (`BEGIN IMMEDIATE … COMMIT`), the journal is a write-ahead
//! log with `synchronous = FULL`: a case answered as saved is on disk, and a process killed
//! mid-write leaves either the whole case or none of it. The schema is versioned by
//! `PRAGMA user_version`: [`MIGRATIONS`] are applied in order, each in the transaction that
//! bumps the version. Values from requests are only ever bound as parameters.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension as _, TransactionBehavior, params};
use serde_json::{Value, json};

/// The schema, one migration per version: `MIGRATIONS[v]` takes a ledger from version `v` to
/// `v + 1`. Append only; never edit one that has shipped.
pub const MIGRATIONS: &[&str] = &[
    // 1: cases, their inputs, one search row per claimed measure, re-runs.
    "CREATE TABLE cases (
        id TEXT PRIMARY KEY NOT NULL,
        created TEXT NOT NULL,
        recite TEXT NOT NULL,
        data_layer TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        data_files TEXT NOT NULL,
        claims INTEGER NOT NULL,
        verdict TEXT,
        verdicts TEXT NOT NULL,
        report_json TEXT NOT NULL,
        report_html TEXT NOT NULL
    ) STRICT;
    CREATE TABLE inputs (
        case_id TEXT NOT NULL REFERENCES cases(id),
        n INTEGER NOT NULL,
        name TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        size INTEGER NOT NULL,
        bytes BLOB NOT NULL,
        PRIMARY KEY (case_id, n)
    ) STRICT;
    CREATE TABLE claims (
        case_id TEXT NOT NULL REFERENCES cases(id),
        n INTEGER NOT NULL,
        study TEXT,
        period TEXT,
        measure TEXT,
        verdict TEXT NOT NULL
    ) STRICT;
    CREATE INDEX claims_by_case ON claims(case_id);
    CREATE TABLE reruns (
        case_id TEXT NOT NULL REFERENCES cases(id),
        n INTEGER NOT NULL,
        created TEXT NOT NULL,
        recite TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        data_files TEXT NOT NULL,
        report_json TEXT NOT NULL,
        report_html TEXT NOT NULL,
        moved TEXT NOT NULL,
        PRIMARY KEY (case_id, n)
    ) STRICT;",
    // 2: the analyst's note on a case (their ruling in words), empty until written.
    "ALTER TABLE cases ADD COLUMN note TEXT NOT NULL DEFAULT '';",
    // 3: what each case and re-run ran on, per table (issue 48: the Delta version and its
    // commit time, PostgreSQL's snapshot, or the files' SHA-256), and which data a re-run read
    // (`latest`, or `pinned`: the versions the ruling read). Cases saved before say `[]`.
    "ALTER TABLE cases ADD COLUMN data_versions TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE reruns ADD COLUMN data_versions TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE reruns ADD COLUMN on_data TEXT NOT NULL DEFAULT 'latest';",
];

/// The ledger's default place: `$XDG_DATA_HOME/recite/ledger.sqlite3`, else
/// `~/.local/share/recite/ledger.sqlite3`.
pub fn default_path() -> Option<PathBuf> {
    let home =
        || std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| Path::new(&h).join(".local/share"));
    // The XDG spec: a relative XDG_DATA_HOME is invalid and ignored.
    let data =
        std::env::var_os("XDG_DATA_HOME").map(PathBuf::from).filter(|p| p.is_absolute()).or_else(home)?;
    Some(data.join("recite").join("ledger.sqlite3"))
}

/// An error of the ledger, in words.
#[derive(Debug)]
pub struct LedgerError(pub String);

impl std::fmt::Display for LedgerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LedgerError {}

impl From<rusqlite::Error> for LedgerError {
    fn from(e: rusqlite::Error) -> LedgerError {
        LedgerError(format!("the ledger: {e}"))
    }
}

type Result<T> = std::result::Result<T, LedgerError>;

/// One input of a case, as received.
#[derive(Debug, Clone)]
pub struct NewInput {
    /// Its name in the report.
    pub name: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// One search row: a claimed measure of a claim (or the claim alone, `measure` none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRow {
    /// The claim's index in the report, over all inputs.
    pub n: usize,
    /// The study re-run, when resolved.
    pub study: Option<String>,
    /// The period re-run, when resolved.
    pub period: Option<String>,
    /// A measure the claim states a number for.
    pub measure: Option<String>,
    /// The claim's verdict.
    pub verdict: String,
}

/// A settled case, to be saved.
#[derive(Debug, Clone)]
pub struct NewCase {
    /// The recite version that settled it.
    pub recite: String,
    /// The report's `data_layer`, as JSON.
    pub data_layer: Value,
    /// The data layer's fingerprint (`sha256:…`).
    pub fingerprint: String,
    /// The files it covers: `[{name, size, sha256}]`.
    pub data_files: Value,
    /// What each table read was at: `[{study, table, format, …}]` (the workbench's
    /// `data_versions`).
    pub data_versions: Value,
    /// Claims settled.
    pub claims: usize,
    /// The most serious verdict, when there is a claim.
    pub verdict: Option<String>,
    /// Claims per verdict.
    pub verdicts: Value,
    /// The JSON report, as written.
    pub report_json: String,
    /// The HTML report, as written.
    pub report_html: String,
    /// The inputs.
    pub inputs: Vec<NewInput>,
    /// The search rows.
    pub rows: Vec<ClaimRow>,
}

/// A re-run of a case, to be saved beside it.
#[derive(Debug, Clone)]
pub struct NewRerun {
    /// The recite version that re-ran it.
    pub recite: String,
    /// The data layer's fingerprint then.
    pub fingerprint: String,
    /// The files it covers.
    pub data_files: Value,
    /// The JSON report.
    pub report_json: String,
    /// The HTML report.
    pub report_html: String,
    /// What moved against the saved report.
    pub moved: Value,
    /// Which data it read: `latest`, or `pinned` (the versions the ruling read).
    pub on: String,
    /// What each table read was at, as [`NewCase::data_versions`].
    pub data_versions: Value,
}

/// What the case list is narrowed to: each a case-insensitive part of a claim's study, period
/// or measure, or a claim's verdict exactly; all of them must hold for one claim.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Part of a study name.
    pub study: Option<String>,
    /// Part of a period name.
    pub period: Option<String>,
    /// Part of a measure name.
    pub measure: Option<String>,
    /// A verdict (`DISCREPANT`…).
    pub verdict: Option<String>,
    /// At most this many cases, newest first.
    pub limit: usize,
}

/// A saved case's stored parts.
#[derive(Debug, Clone)]
pub struct Case {
    /// Its facts, as the API answers it (`GET /v1/cases/{id}` without the report).
    pub meta: Value,
    /// The JSON report as written.
    pub report_json: String,
    /// The HTML report as written.
    pub report_html: String,
}

/// The ledger: one connection, writes one at a time (SQLite takes one writer anyway).
pub struct Ledger {
    conn: Mutex<Connection>,
    /// Where it is.
    pub path: PathBuf,
    /// A pause inside each case's transaction, for the crash test only
    /// (`RECITE_TEST_LEDGER_PAUSE_MS`): it makes a kill land mid-write.
    pause: Option<Duration>,
}

impl Ledger {
    /// Opens (creating it and its folder if need be) and migrates the ledger at `path`.
    pub fn open(path: &Path) -> Result<Ledger> {
        let shown = path.display();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            create_private_dir(dir)
                .map_err(|e| LedgerError(format!("cannot create {}: {e}", dir.display())))?;
        }
        let conn = Connection::open(path)
            .map_err(|e| LedgerError(format!("cannot open the ledger {shown}: {e}")))?;
        conn.busy_timeout(Duration::from_secs(5))?;
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(LedgerError(format!(
                "the ledger {shown}: cannot use a write-ahead log (journal mode {mode})"
            )));
        }
        conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")?;
        let mut ledger = Ledger { conn: Mutex::new(conn), path: path.to_path_buf(), pause: None };
        ledger.migrate().map_err(|e| LedgerError(format!("the ledger {shown}: {e}")))?;
        ledger.pause = std::env::var("RECITE_TEST_LEDGER_PAUSE_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(Duration::from_millis);
        Ok(ledger)
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding it left no transaction open (rusqlite rolls back on drop).
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Brings the schema to the last version, one transaction per migration.
    fn migrate(&mut self) -> Result<()> {
        let conn = self.conn.get_mut().unwrap_or_else(|e| e.into_inner());
        loop {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            let Some(step) = usize::try_from(version).ok().and_then(|v| MIGRATIONS.get(v)) else {
                if version as usize > MIGRATIONS.len() {
                    return Err(LedgerError(format!(
                        "schema version {version} is newer than this recite's ({}): use a newer recite",
                        MIGRATIONS.len()
                    )));
                }
                return Ok(());
            };
            tx.execute_batch(step)?;
            // PRAGMA takes no parameters; the version is our own integer.
            tx.execute_batch(&format!("PRAGMA user_version = {}", version + 1))?;
            tx.commit()?;
        }
    }

    /// The schema version.
    #[cfg(test)]
    pub fn version(&self) -> Result<i64> {
        Ok(self.conn().query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    /// Cases saved.
    pub fn count(&self) -> Result<u64> {
        let n: i64 = self.conn().query_row("SELECT count(*) FROM cases", [], |r| r.get(0))?;
        Ok(n.max(0) as u64)
    }

    /// Saves a case in one transaction; its new id and time.
    pub fn save(&self, case: &NewCase) -> Result<(String, String)> {
        let id = new_id()?;
        let created = now_rfc3339();
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO cases (id, created, recite, data_layer, fingerprint, data_files, claims, verdict, verdicts, \
             report_json, report_html, data_versions) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                id,
                created,
                case.recite,
                case.data_layer.to_string(),
                case.fingerprint,
                case.data_files.to_string(),
                case.claims as i64,
                case.verdict,
                case.verdicts.to_string(),
                case.report_json,
                case.report_html,
                case.data_versions.to_string(),
            ],
        )?;
        if let Some(p) = self.pause {
            std::thread::sleep(p);
        }
        {
            let mut put = tx.prepare(
                "INSERT INTO inputs (case_id, n, name, sha256, size, bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for (n, i) in case.inputs.iter().enumerate() {
                put.execute(params![
                    id,
                    n as i64,
                    i.name,
                    sha256_hex(&i.bytes),
                    i.bytes.len() as i64,
                    i.bytes
                ])?;
            }
            let mut row = tx.prepare(
                "INSERT INTO claims (case_id, n, study, period, measure, verdict) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for r in &case.rows {
                row.execute(params![id, r.n as i64, r.study, r.period, r.measure, r.verdict])?;
            }
        }
        tx.commit()?;
        Ok((id, created))
    }

    /// Appends a re-run to case `id` in one transaction; its number and time (`None`: no such
    /// case).
    pub fn save_rerun(&self, id: &str, r: &NewRerun) -> Result<Option<(i64, String)>> {
        let created = now_rfc3339();
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let exists: Option<i64> =
            tx.query_row("SELECT 1 FROM cases WHERE id = ?1", [id], |r| r.get(0)).optional()?;
        if exists.is_none() {
            return Ok(None);
        }
        let n: i64 =
            tx.query_row("SELECT count(*) + 1 FROM reruns WHERE case_id = ?1", [id], |r| r.get(0))?;
        tx.execute(
            "INSERT INTO reruns (case_id, n, created, recite, fingerprint, data_files, report_json, report_html, moved, \
             on_data, data_versions) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                id,
                n,
                created,
                r.recite,
                r.fingerprint,
                r.data_files.to_string(),
                r.report_json,
                r.report_html,
                r.moved.to_string(),
                r.on,
                r.data_versions.to_string()
            ],
        )?;
        tx.commit()?;
        Ok(Some((n, created)))
    }

    /// Deletes case `id` with its inputs, search rows and re-runs, in one transaction; whether
    /// there was such a case.
    pub fn delete(&self, id: &str) -> Result<bool> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        for table in ["inputs", "claims", "reruns"] {
            // The table names are ours; the id is bound.
            tx.execute(&format!("DELETE FROM {table} WHERE case_id = ?1"), [id])?;
        }
        let gone = tx.execute("DELETE FROM cases WHERE id = ?1", [id])? > 0;
        tx.commit()?;
        Ok(gone)
    }

    /// Sets the analyst's note on case `id`; whether there was such a case.
    pub fn set_note(&self, id: &str, note: &str) -> Result<bool> {
        Ok(self.conn().execute("UPDATE cases SET note = ?2 WHERE id = ?1", params![id, note])? > 0)
    }

    /// A case, or none.
    pub fn get(&self, id: &str) -> Result<Option<Case>> {
        let conn = self.conn();
        let row = conn
            .query_row(
                "SELECT id, created, recite, data_layer, fingerprint, data_files, claims, verdict, verdicts, \
                 report_json, report_html, note, data_versions FROM cases WHERE id = ?1",
                [id],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, String>(5)?,
                        r.get::<_, i64>(6)?,
                        r.get::<_, Option<String>>(7)?,
                        r.get::<_, String>(8)?,
                        r.get::<_, String>(9)?,
                        r.get::<_, String>(10)?,
                        r.get::<_, String>(11)?,
                        r.get::<_, String>(12)?,
                    ))
                },
            )
            .optional()?;
        let Some((
            id,
            created,
            recite,
            layer,
            fingerprint,
            files,
            claims,
            verdict,
            verdicts,
            json,
            html,
            note,
            versions,
        )) = row
        else {
            return Ok(None);
        };
        let mut inputs = Vec::new();
        let mut q = conn.prepare("SELECT n, name, sha256, size FROM inputs WHERE case_id = ?1 ORDER BY n")?;
        for r in q.query_map([&id], |r| {
            Ok(json!({
                "n": r.get::<_, i64>(0)?,
                "name": r.get::<_, String>(1)?,
                "sha256": r.get::<_, String>(2)?,
                "size": r.get::<_, i64>(3)?,
            }))
        })? {
            inputs.push(r?);
        }
        let mut reruns = Vec::new();
        let mut q = conn.prepare(
            "SELECT n, created, recite, fingerprint, moved, on_data, data_versions FROM reruns \
             WHERE case_id = ?1 ORDER BY n",
        )?;
        for r in q.query_map([&id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, String>(6)?,
            ))
        })? {
            let (n, at, recite, print, moved, on, versions) = r?;
            reruns.push(json!({
                "n": n,
                "created": at,
                "recite": recite,
                "on": on,
                "fingerprint": print,
                "data_versions": parse(&versions),
                "moved": parse(&moved),
            }));
        }
        let meta = json!({
            "id": id,
            "created": created,
            "recite": recite,
            "data_layer": parse(&layer),
            "fingerprint": fingerprint,
            "data_files": parse(&files),
            "data_versions": parse(&versions),
            "claims": claims,
            "verdict": verdict,
            "verdicts": parse(&verdicts),
            "inputs": inputs,
            "reruns": reruns,
            "note": note,
        });
        Ok(Some(Case { meta, report_json: json, report_html: html }))
    }

    /// The bytes of input `n` of case `id`, or none.
    pub fn input(&self, id: &str, n: i64) -> Result<Option<(String, Vec<u8>)>> {
        Ok(self
            .conn()
            .query_row("SELECT name, bytes FROM inputs WHERE case_id = ?1 AND n = ?2", params![id, n], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?)
    }

    /// Every input of case `id`, in order.
    pub fn inputs(&self, id: &str) -> Result<Vec<NewInput>> {
        let conn = self.conn();
        let mut q = conn.prepare("SELECT name, bytes FROM inputs WHERE case_id = ?1 ORDER BY n")?;
        let rows = q.query_map([id], |r| Ok(NewInput { name: r.get(0)?, bytes: r.get(1)? }))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// The re-run `n` of case `id`: its HTML report, or none.
    pub fn rerun_html(&self, id: &str, n: i64) -> Result<Option<String>> {
        Ok(self
            .conn()
            .query_row("SELECT report_html FROM reruns WHERE case_id = ?1 AND n = ?2", params![id, n], |r| {
                r.get(0)
            })
            .optional()?)
    }

    /// The cases that match `f`, newest first: `{id, created, claims, verdict, verdicts,
    /// inputs, studies, periods}` each.
    pub fn list(&self, f: &Filter) -> Result<Vec<Value>> {
        let conn = self.conn();
        let mut q = conn.prepare(
            "SELECT c.id, c.created, c.claims, c.verdict, c.verdicts, c.fingerprint,
                (SELECT json_group_array(name) FROM (SELECT name FROM inputs WHERE case_id = c.id ORDER BY n)),
                (SELECT json_group_array(DISTINCT study) FROM claims WHERE case_id = c.id AND study IS NOT NULL),
                (SELECT json_group_array(DISTINCT period) FROM claims WHERE case_id = c.id AND period IS NOT NULL),
                (SELECT count(*) FROM reruns WHERE case_id = c.id)
             FROM cases c
             WHERE (?1 IS NULL AND ?2 IS NULL AND ?3 IS NULL AND ?4 IS NULL)
                OR EXISTS (SELECT 1 FROM claims t WHERE t.case_id = c.id
                    AND (?1 IS NULL OR instr(lower(t.study), lower(?1)) > 0)
                    AND (?2 IS NULL OR instr(lower(t.period), lower(?2)) > 0)
                    AND (?3 IS NULL OR instr(lower(t.measure), lower(?3)) > 0)
                    AND (?4 IS NULL OR t.verdict = ?4))
             ORDER BY c.rowid DESC
             LIMIT ?5",
        )?;
        let rows = q.query_map(params![f.study, f.period, f.measure, f.verdict, f.limit as i64], |r| {
            Ok(json!({
                "id": r.get::<_, String>(0)?,
                "created": r.get::<_, String>(1)?,
                "claims": r.get::<_, i64>(2)?,
                "verdict": r.get::<_, Option<String>>(3)?,
                "verdicts": parse(&r.get::<_, String>(4)?),
                "fingerprint": r.get::<_, String>(5)?,
                "inputs": parse(&r.get::<_, String>(6)?),
                "studies": parse(&r.get::<_, String>(7)?),
                "periods": parse(&r.get::<_, String>(8)?),
                "reruns": r.get::<_, i64>(9)?,
            }))
        })?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }
}

/// Stored JSON back as a value (it was written by this module, so it parses).
fn parse(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or(Value::Null)
}

/// The SHA-256 of `bytes`, in lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex(&sha2::Sha256::digest(bytes))
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A case id: 12 random bytes, 24 hex characters (unguessable, so a permalink shows only the
/// case it names).
fn new_id() -> Result<String> {
    use std::io::Read as _;
    let mut b = [0u8; 12];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(|e| LedgerError(format!("cannot read /dev/urandom for a case id: {e}")))?;
    Ok(hex(&b))
}

/// Whether `s` has the shape of a case id (anything else is not looked up at all).
pub fn is_id(s: &str) -> bool {
    s.len() == 24 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Creates `dir` and its parents, the last ones only its owner can enter.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// Now, as `2026-05-04T09:12:44.318Z`.
pub fn now_rfc3339() -> String {
    rfc3339(chrono::Utc::now())
}

/// A time as RFC 3339 in UTC, with milliseconds.
fn rfc3339(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339() {
        // Known instants (date -u -d @SECS).
        let at = |secs: i64, millis: u32| {
            rfc3339(chrono::DateTime::from_timestamp(secs, millis * 1_000_000).unwrap())
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(at(1_777_885_964, 318), "2026-05-04T09:12:44.318Z");
    }

    #[test]
    fn sha256_is_the_standard_one() {
        // FIPS 180-2's example "abc".
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn ids_are_checked_before_any_lookup() {
        assert!(is_id("0123456789abcdef01234567"));
        assert!(!is_id("0123456789ABCDEF01234567"));
        assert!(!is_id("0123456789abcdef0123456"));
        assert!(!is_id("' OR 1=1 --abcdef01234567"));
    }

    fn case(study: &str, verdict: &str) -> NewCase {
        NewCase {
            recite: "test".into(),
            data_layer: json!({"path": "d", "source": "flag"}),
            fingerprint: "sha256:00".into(),
            data_files: json!([]),
            data_versions: json!([{"study": study, "table": "t", "format": "delta", "version": 2}]),
            claims: 1,
            verdict: Some(verdict.into()),
            verdicts: json!({ verdict: 1 }),
            report_json: "{}\n".into(),
            report_html: "<!DOCTYPE html>\n".into(),
            inputs: vec![NewInput { name: "-".into(), bytes: b"abc".to_vec() }],
            rows: vec![ClaimRow {
                n: 0,
                study: Some(study.into()),
                period: Some("W6 (April 2026)".into()),
                measure: Some("Considered".into()),
                verdict: verdict.into(),
            }],
        }
    }

    #[test]
    fn cases_are_saved_found_and_searched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/ledger.sqlite3");
        let l = Ledger::open(&path).unwrap();
        assert_eq!(l.version().unwrap(), MIGRATIONS.len() as i64);
        let (a, _) = l.save(&case("Versant Mega Tracker", "REPRODUCED")).unwrap();
        let (b, _) = l.save(&case("NHANES II", "DISCREPANT")).unwrap();
        assert!(is_id(&a) && is_id(&b) && a != b);
        let all = l.list(&Filter { limit: 10, ..Filter::default() }).unwrap();
        let ids: Vec<&str> = all.iter().map(|c| c["id"].as_str().unwrap()).collect();
        assert_eq!(ids, [b.as_str(), a.as_str()], "newest first");
        let f = Filter { study: Some("versant".into()), limit: 10, ..Filter::default() };
        assert_eq!(l.list(&f).unwrap().len(), 1);
        let f = Filter {
            verdict: Some("DISCREPANT".into()),
            period: Some("w6".into()),
            limit: 10,
            ..Filter::default()
        };
        assert_eq!(l.list(&f).unwrap()[0]["id"], json!(b));
        // A filter value is data, never SQL.
        let f = Filter { study: Some("' OR 1=1 --".into()), limit: 10, ..Filter::default() };
        assert!(l.list(&f).unwrap().is_empty());
        let got = l.get(&a).unwrap().unwrap();
        assert_eq!(got.meta["inputs"][0]["sha256"], json!(sha256_hex(b"abc")));
        assert_eq!(l.input(&a, 0).unwrap().unwrap().1, b"abc");
        assert!(l.get("000000000000000000000000").unwrap().is_none());
        drop(l);
        // Re-opened: nothing migrated twice, everything kept.
        let l = Ledger::open(&path).unwrap();
        assert_eq!(l.count().unwrap(), 2);
        let r = NewRerun {
            recite: "test".into(),
            fingerprint: "sha256:01".into(),
            data_files: json!([]),
            report_json: "{}\n".into(),
            report_html: String::new(),
            moved: json!([]),
            on: "pinned".into(),
            data_versions: json!([{"study": "S", "table": "t", "format": "delta", "version": 2}]),
        };
        assert_eq!(l.save_rerun(&a, &r).unwrap().unwrap().0, 1);
        assert_eq!(l.save_rerun(&a, &r).unwrap().unwrap().0, 2);
        // What the case and each re-run ran on, kept with them.
        let got = l.get(&a).unwrap().unwrap();
        assert_eq!(got.meta["data_versions"][0]["version"], json!(2));
        assert_eq!(got.meta["reruns"][1]["on"], json!("pinned"));
        assert_eq!(got.meta["reruns"][1]["data_versions"], r.data_versions);
        assert!(l.save_rerun("000000000000000000000000", &r).unwrap().is_none());

        // The analyst's note is kept with the case; a deleted case takes everything with it.
        assert!(l.set_note(&a, "W5's figure, relabelled").unwrap());
        assert_eq!(l.get(&a).unwrap().unwrap().meta["note"], json!("W5's figure, relabelled"));
        assert!(l.delete(&a).unwrap());
        assert!(!l.delete(&a).unwrap());
        assert!(l.get(&a).unwrap().is_none() && l.input(&a, 0).unwrap().is_none());
        assert!(l.rerun_html(&a, 1).unwrap().is_none());
        let left: i64 = l
            .conn()
            .query_row("SELECT (SELECT count(*) FROM inputs) + (SELECT count(*) FROM claims)", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(left, 2, "case b's input and search row, nothing of a's");
        assert_eq!(l.count().unwrap(), 1);
    }

    #[test]
    fn a_ledger_of_the_first_schema_is_migrated_with_its_cases() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite3");
        let old = Connection::open(&path).unwrap();
        old.execute_batch(MIGRATIONS[0]).unwrap();
        old.execute_batch(
            "PRAGMA user_version = 1;
             INSERT INTO cases VALUES ('0123456789abcdef01234567', 't', 'r', '{}', 'f', '[]', 0, NULL, '{}', '{}', '');",
        )
        .unwrap();
        drop(old);
        let l = Ledger::open(&path).unwrap();
        assert_eq!(l.version().unwrap(), MIGRATIONS.len() as i64);
        let got = l.get("0123456789abcdef01234567").unwrap().unwrap();
        assert_eq!(got.meta["data_versions"], json!([]), "a case saved before says nothing");
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite3");
        Connection::open(&path).unwrap().execute_batch("PRAGMA user_version = 99").unwrap();
        let e = Ledger::open(&path).err().unwrap();
        assert!(e.0.contains("newer"), "{e}");
    }
}
