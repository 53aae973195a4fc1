//! PostgreSQL tables (feature `postgres`): a table whose location is a PostgreSQL URL is read
//! through datafusion-table-providers' Postgres table provider, which pushes the scan's
//! projection and filters down, so a table's scan is one `SELECT cols FROM table WHERE …` on
//! the server (docs/catalog.md, "PostgreSQL tables").
//!
//! Two locations name such a table:
//! - `postgres://user@host:5432/db?table=schema.name` (or `postgresql://`), written as the
//!   table's `path`. It never holds a password (the catalog refuses one): the password comes
//!   from `PGPASSWORD`, as libpq's clients take it;
//! - `postgres-env://VAR/schema.name`, made by the catalog for a table read through a
//!   `[connections]` entry: `VAR` is the environment variable holding the DSN.
//!
//! The table's name comes from the catalog, never from a citation, and reaches the server only
//! as the provider's quoted table reference. No error or report holds a DSN: errors name the
//! location (the variable's name, or the URL without a password) and say the server's words
//! with any DSN taken out.
//!
//! A PostgreSQL server keeps no past versions of a table: a claim is read on the table as it
//! is, and its report says so with the server's snapshot when the claim was resolved
//! ([`recite_core::version::UNVERSIONED_FORMAT`]). Its scans are never cached.

use std::collections::BTreeMap;

use recite_core::catalog::CONNECTION_SCHEME;

/// Why a PostgreSQL table cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostgresError {
    /// The location is not a PostgreSQL URL recite can use (no table named, a bad URL).
    Location(String),
    /// The `[connections]` entry's environment variable is not set (or not Unicode).
    MissingEnv {
        /// The variable's name.
        var: String,
    },
    /// The server could not be reached, or refused the login.
    Connect(String),
    /// The table is not on the server (never created, dropped, or not visible to the user).
    NoTable(String),
    /// The server failed a query (a statement timeout, a stopped server, a dropped table).
    Query(String),
    /// This recite was built without the `postgres` feature.
    NotBuilt,
}

impl std::fmt::Display for PostgresError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PostgresError::Location(e) => write!(f, "is not a PostgreSQL table recite can read: {e}"),
            PostgresError::MissingEnv { var } => write!(
                f,
                "cannot be read: environment variable {var} (its [connections] entry's dsn_env) is not set"
            ),
            PostgresError::Connect(e) => write!(f, "cannot be read: the PostgreSQL server: {e}"),
            PostgresError::NoTable(t) => write!(f, "cannot be read: the PostgreSQL server has no table {t}"),
            PostgresError::Query(e) => write!(f, "cannot be read: the PostgreSQL server: {e}"),
            PostgresError::NotBuilt => f.write_str(NOT_BUILT),
        }
    }
}

impl std::error::Error for PostgresError {}

/// Why a PostgreSQL table is not read by a build without the feature.
pub const NOT_BUILT: &str = "is a PostgreSQL table, which this recite was built without: \
     `cargo build --release --features postgres` makes one that reads it";

/// Whether `location` names a table on a PostgreSQL server.
pub fn is_location(location: &str) -> bool {
    let scheme = recite_core::catalog::url_scheme(location);
    matches!(scheme.as_deref(), Some("postgres" | "postgresql"))
        || scheme.as_deref() == Some(CONNECTION_SCHEME)
}

/// A PostgreSQL table as its location names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// How to reach the server.
    pub server: Server,
    /// The table: `name` or `schema.name`.
    pub table: String,
}

/// Where a DSN comes from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Server {
    /// A URL in the catalog, without a password (`PGPASSWORD` supplies one).
    Url(String),
    /// An environment variable holding the DSN (a `[connections]` entry).
    Env(String),
}

impl Source {
    /// The table a location names, or why it names none.
    pub fn of_location(location: &str) -> Result<Source, PostgresError> {
        let bad = |why: &str| PostgresError::Location(why.to_string());
        let (scheme, rest) = location.split_once("://").ok_or_else(|| bad("no scheme"))?;
        if scheme.eq_ignore_ascii_case(CONNECTION_SCHEME) {
            let (var, table) = rest.split_once('/').ok_or_else(|| bad("no table after the connection"))?;
            return Ok(Source { server: Server::Env(var.to_string()), table: table_name(table)? });
        }
        if recite_core::catalog::location_has_password(location) {
            return Err(bad("its URL holds a password; name an environment variable in [connections]"));
        }
        let (url, query) = location.split_once('?').ok_or_else(|| bad("no ?table=schema.name in its URL"))?;
        let mut table = None;
        let mut kept = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("table", t)) => table = Some(table_name(&decode(t))?),
                _ => kept.push(pair),
            }
        }
        let table = table.ok_or_else(|| bad("no ?table=schema.name in its URL"))?;
        let url = if kept.is_empty() { url.to_string() } else { format!("{url}?{}", kept.join("&")) };
        Ok(Source { server: Server::Url(url), table })
    }
}

/// A table's name as the catalog writes it: `name` or `schema.name`, each part letters,
/// digits, `_` or `$` (PostgreSQL's unquoted identifiers), so nothing else can reach the
/// server's SQL through it.
fn table_name(text: &str) -> Result<String, PostgresError> {
    let parts: Vec<&str> = text.split('.').collect();
    let ok = (1..=2).contains(&parts.len())
        && parts.iter().all(|p| {
            p.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
                && p.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        });
    if ok {
        Ok(text.to_string())
    } else {
        Err(PostgresError::Location(format!(
            "{text:?} is not a table name (`name` or `schema.name`: letters, digits, _)"
        )))
    }
}

/// A URL component with its `%XX` escapes decoded.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The connection parameters a DSN names (`postgres://user:pass@host:port/db?sslmode=…`, or
/// libpq's `key=value …` form), as the provider's pool takes them; `sslmode` is libpq's default
/// (`prefer`) unless the DSN says otherwise.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
fn parameters(dsn: &str, password: Option<String>) -> Result<BTreeMap<String, String>, PostgresError> {
    let mut out = BTreeMap::new();
    let dsn = dsn.trim();
    if recite_core::catalog::url_scheme(dsn).is_none() {
        // key=value pairs (libpq's other form), the provider's own.
        out.insert("connection_string".to_string(), dsn.to_string());
        if !dsn.contains("sslmode=") {
            out.insert("sslmode".into(), "prefer".into());
        }
        return Ok(out);
    }
    let bad = |why: &str| PostgresError::Location(format!("its DSN is not a PostgreSQL URL: {why}"));
    let (_, rest) = dsn.split_once("://").ok_or_else(|| bad("no scheme"))?;
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, db) = rest.split_once('/').unwrap_or((rest, ""));
    let (user, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    if let Some(u) = user {
        let (name, pass) = u.split_once(':').map_or((u, None), |(n, p)| (n, Some(p)));
        out.insert("user".into(), decode(name));
        if let Some(p) = pass {
            out.insert("pass".into(), decode(p));
        }
    }
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || hostport.starts_with('[') => (h, Some(p)),
        _ => (hostport, None),
    };
    if !host.is_empty() {
        out.insert("host".into(), decode(host.trim_start_matches('[').trim_end_matches(']')));
    }
    if let Some(p) = port.filter(|p| !p.is_empty()) {
        out.insert("port".into(), p.to_string());
    }
    if !db.is_empty() {
        out.insert("db".into(), decode(db));
    }
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let k = match k {
            "dbname" => "db",
            "password" => "pass",
            k => k,
        };
        out.insert(k.to_string(), decode(v));
    }
    if let Some(p) = password
        && !out.contains_key("pass")
    {
        out.insert("pass".into(), p);
    }
    out.entry("sslmode".into()).or_insert_with(|| "prefer".into());
    Ok(out)
}

/// `text` with every secret in `params` (the password, the whole DSN) written as `***`: the
/// server's and the driver's words may repeat what they were given.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
/// A scan's error in plain words where the PostgreSQL provider's are misleading: when no
/// connection comes within its pool's (bb8's) 30 s wait, it advises enlarging the pool, but the
/// cause is a server that stopped or cannot be reached (seen with a server stopped mid-batch).
/// Any other text is returned as it is.
pub fn plain_words(text: &str) -> String {
    if !text.contains("Timed out in bb8") {
        return text.to_string();
    }
    let before = text.split("PostgreSQL connection failed").next().unwrap_or_default();
    format!("{before}no connection to the PostgreSQL server within 30 s: it stopped, or cannot be reached")
}

// The provider's words with the connection's secrets masked (used by the `postgres` build and tests).
#[cfg(any(feature = "postgres", test))]
fn scrubbed(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for s in secrets.iter().filter(|s| s.len() >= 3) {
        out = out.replace(s.as_str(), "***");
    }
    // The provider's advice lines (a link to its documentation) are not about this table.
    out.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("For details"))
        .collect::<Vec<_>>()
        .join(": ")
}

#[cfg(feature = "postgres")]
pub(crate) use built::{register, snapshot};

#[cfg(feature = "postgres")]
mod built {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use datafusion::arrow::datatypes::SchemaRef;
    use datafusion::catalog::{Session, TableProvider};
    use datafusion::common::TableReference;
    use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
    use datafusion::physical_expr::PhysicalExpr;
    use datafusion::physical_plan::ExecutionPlan;
    use datafusion::physical_plan::projection::ProjectionExec;
    use datafusion::prelude::SessionContext;
    use datafusion_table_providers_postgres::PostgresTableFactory;
    use datafusion_table_providers_postgres::pool::PostgresConnectionPool;
    use secrecy::SecretString;

    use super::{PostgresError, Server, Source, parameters, scrubbed};

    /// A server's pool of connections, opened once per server a run reads.
    struct Opened {
        pool: Arc<PostgresConnectionPool>,
        secrets: Vec<String>,
    }

    /// The pools opened so far, by server (the provider's pool holds its connections open).
    fn pools() -> &'static Mutex<HashMap<Server, Arc<Opened>>> {
        static POOLS: std::sync::OnceLock<Mutex<HashMap<Server, Arc<Opened>>>> = std::sync::OnceLock::new();
        POOLS.get_or_init(Default::default)
    }

    /// The server's pool, opened (and its login checked) on first use.
    async fn open(server: &Server) -> Result<Arc<Opened>, PostgresError> {
        if let Some(o) = pools().lock().ok().and_then(|m| m.get(server).cloned()) {
            return Ok(o);
        }
        let (dsn, password) = match server {
            Server::Url(url) => (url.clone(), std::env::var("PGPASSWORD").ok().filter(|p| !p.is_empty())),
            Server::Env(var) => {
                let dsn = std::env::var(var).map_err(|_| PostgresError::MissingEnv { var: var.clone() })?;
                (dsn, None)
            }
        };
        let params = parameters(&dsn, password)?;
        let mut secrets = vec![dsn.clone()];
        secrets.extend(params.get("pass").cloned());
        let secret: HashMap<String, SecretString> =
            params.into_iter().map(|(k, v)| (k, SecretString::from(v))).collect();
        let pool = PostgresConnectionPool::new(secret)
            .await
            .map_err(|e| PostgresError::Connect(scrubbed(&e.to_string(), &secrets)))?;
        let opened = Arc::new(Opened { pool: Arc::new(pool), secrets });
        if let Ok(mut m) = pools().lock() {
            m.insert(server.clone(), opened.clone());
        }
        Ok(opened)
    }

    /// Registers the table `source` names as `name` in `ctx`, through the provider (its schema
    /// read from the server's catalog; scans pushed down to the server as one query).
    pub(crate) async fn register(
        ctx: &SessionContext,
        name: &str,
        source: &Source,
    ) -> Result<(), PostgresError> {
        let opened = open(&source.server).await?;
        let factory = PostgresTableFactory::new(opened.pool.clone());
        let provider =
            factory.table_provider(TableReference::from(source.table.as_str())).await.map_err(|e| {
                let words = scrubbed(&e.to_string(), &opened.secrets);
                if ["does not exist", "doesn't exist", "not found"].iter().any(|w| words.contains(w)) {
                    PostgresError::NoTable(source.table.clone())
                } else {
                    PostgresError::Query(words)
                }
            })?;
        if provider.schema().fields().is_empty() {
            return Err(PostgresError::NoTable(source.table.clone()));
        }
        let provider = Arc::new(AnyColumn(provider));
        ctx.register_table(name, provider).map_err(|e| PostgresError::Query(e.strip_backtrace()))?;
        Ok(())
    }

    /// The provider's table, where a scan asked for no column (`COUNT(*)` under a filter of
    /// `TRUE`) reads the first column and drops it: the provider's plan for an empty projection
    /// returns a column DataFusion did not ask for, which its planner refuses.
    #[derive(Debug)]
    struct AnyColumn(Arc<dyn TableProvider>);

    #[async_trait::async_trait]
    impl TableProvider for AnyColumn {
        fn schema(&self) -> SchemaRef {
            self.0.schema()
        }

        fn table_type(&self) -> TableType {
            self.0.table_type()
        }

        fn supports_filters_pushdown(
            &self,
            filters: &[&Expr],
        ) -> datafusion::error::Result<Vec<TableProviderFilterPushDown>> {
            self.0.supports_filters_pushdown(filters)
        }

        async fn scan(
            &self,
            state: &dyn Session,
            projection: Option<&Vec<usize>>,
            filters: &[Expr],
            limit: Option<usize>,
        ) -> datafusion::error::Result<Arc<dyn ExecutionPlan>> {
            match projection {
                Some(p) if p.is_empty() && !self.0.schema().fields().is_empty() => {
                    let one = self.0.scan(state, Some(&vec![0]), filters, limit).await?;
                    let none: Vec<(Arc<dyn PhysicalExpr>, String)> = Vec::new();
                    Ok(Arc::new(ProjectionExec::try_new(none, one)?))
                }
                _ => self.0.scan(state, projection, filters, limit).await,
            }
        }
    }

    /// The server's `pg_current_snapshot()` (its text) and its clock (RFC 3339, UTC), asked
    /// now: what the server can say of the data a scan reads.
    pub(crate) async fn snapshot(source: &Source) -> Result<(String, String), PostgresError> {
        let opened = open(&source.server).await?;
        let conn = opened
            .pool
            .connect_direct()
            .await
            .map_err(|e| PostgresError::Connect(scrubbed(&e.to_string(), &opened.secrets)))?;
        let row = conn
            .conn
            .query_one(
                "SELECT pg_current_snapshot()::text, \
                 to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')",
                &[],
            )
            .await
            .map_err(|e| PostgresError::Query(scrubbed(&e.to_string(), &opened.secrets)))?;
        Ok((row.get::<_, String>(0), row.get::<_, String>(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_location_names_its_server_and_table() {
        let s = Source::of_location(
            "postgres://reader@127.0.0.1:5432/surveys?table=public.versant&sslmode=disable",
        )
        .unwrap();
        assert_eq!(s.table, "public.versant");
        assert_eq!(s.server, Server::Url("postgres://reader@127.0.0.1:5432/surveys?sslmode=disable".into()));
        let s = Source::of_location("postgres-env://RECITE_PG/versant").unwrap();
        assert_eq!((s.server, s.table.as_str()), (Server::Env("RECITE_PG".into()), "versant"));
        for bad in [
            "postgres://u:secret@h/db?table=t",
            "postgres://u@h/db",
            "postgres://u@h/db?table=t;drop",
            "postgres://u@h/db?table=a.b.c",
            "postgres-env://VAR/x y",
        ] {
            let e = Source::of_location(bad).unwrap_err().to_string();
            assert!(!e.contains("secret"), "{e}");
            assert!(matches!(Source::of_location(bad), Err(PostgresError::Location(_))), "{bad}");
        }
        assert!(is_location("postgresql://h/db?table=t") && is_location("postgres-env://V/t"));
        assert!(!is_location("s3://bucket/t.parquet") && !is_location("data/t.parquet"));
    }

    #[test]
    fn a_pool_that_waited_in_vain_is_said_plainly() {
        let said = plain_words(
            "Execution error: PostgreSQL connection failed.\nTimed out in bb8\nAdjust the connection pool parameters for sufficient capacity.",
        );
        assert_eq!(
            said,
            "Execution error: no connection to the PostgreSQL server within 30 s: it stopped, or cannot be reached"
        );
        assert_eq!(plain_words("Parquet error: x"), "Parquet error: x");
    }

    #[test]
    fn a_dsn_becomes_the_pools_parameters() {
        let p = parameters("postgres://ann:p%40ss@db.example:6543/surveys?sslmode=require", None).unwrap();
        let want = [
            ("db", "surveys"),
            ("host", "db.example"),
            ("pass", "p@ss"),
            ("port", "6543"),
            ("sslmode", "require"),
            ("user", "ann"),
        ];
        assert_eq!(p, want.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
        let p = parameters("postgresql://ann@localhost/surveys", Some("pw".into())).unwrap();
        assert_eq!((p["pass"].as_str(), p["sslmode"].as_str()), ("pw", "prefer"));
        let p = parameters("host=/tmp user=ann dbname=s", None).unwrap();
        assert_eq!(p["connection_string"], "host=/tmp user=ann dbname=s");
    }

    #[test]
    fn secrets_are_taken_out_of_the_servers_words() {
        let dsn = "postgres://ann:hunter2@h/db".to_string();
        let said = scrubbed(
            "connecting to postgres://ann:hunter2@h/db failed\nFor details, see x\npassword hunter2",
            &[dsn, "hunter2".into()],
        );
        assert_eq!(said, "connecting to *** failed: password ***");
    }
}
