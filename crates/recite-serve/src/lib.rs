//! `recite serve` and `recite mcp` as a library: one engine and settlement session for the
//! whole process, reached over an HTTP API ([`http`]) and, with the feature `agents`, as an A2A
//! agent (`a2a`) and as an MCP tool server (`mcp`). The `recite` binary turns its flags into
//! [`Backend`], [`Limits`] and [`Listen`] and calls [`serve`] or `mcp_stdio`. Every front end
//! calls the operations of [`Service`],
//! which call the library just as `recite verify` and `recite check` do (same input name `-`,
//! same data layer, same options), so the service's report for an input is the command
//! line's, byte for byte.
//!
//! Bounded by default: at most `concurrency` operations run at once and `queue` more wait;
//! beyond that a caller is told to come back (503 with Retry-After). Each operation has a time
//! limit from the moment it asks to run: past it the caller gets an error, a check stops at its
//! next write (a scan already running finishes first, then its result is dropped), and a
//! verification's result is dropped when it comes. Nothing in a request names a path the
//! server reads: bodies are spooled to private temporary files, the data layer is the server's.

#[cfg(feature = "agents")]
pub mod a2a;
pub mod access;
#[cfg(feature = "agents")]
mod bindings;
pub mod conn;
mod extract;
mod headers;
pub mod http;
pub mod ledger;
#[cfg(feature = "agents")]
pub mod mcp;
pub mod openapi;
#[cfg(feature = "agents")]
pub mod probe;
pub mod problem;
#[cfg(feature = "agents")]
pub mod prose;
pub mod signin;
pub mod site;
mod spool;
mod streaming;
pub mod warm;
#[cfg(feature = "agents")]
pub mod wholes;
pub mod workbench;

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::time::Instant;

use recite_core::catalog::Catalog;
use recite_core::check;
use recite_core::extractor::Registry;
use recite_core::report::{self, DataLayer, ReportFormat};
use recite_core::settle::{Verdict, pipeline};
use recite_core::verify;
use recite_engine::engine::Engine;

pub use problem::Problem;
use problem::Stopped;
pub use streaming::Streaming;
use streaming::{Chunk, Sink};

/// A line on stderr. Never fails: a closed or broken stderr is not a reason to stop (nor to
/// panic, as `eprintln!` would).
pub(crate) fn warn(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// A report for a person or for a program: what `POST /v1/verify?format=` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextOrJson {
    /// For a person at a terminal.
    Text,
    /// The JSON report `recite check --format json` writes.
    Json,
}

/// What the service settles with, loaded by the caller as `recite check` loads it: the data
/// layer and extractors, the engine (with its cache), and how claims are settled.
pub struct Backend {
    /// The data layer's studies.
    pub catalog: Catalog,
    /// The registered extractors.
    pub registry: Registry,
    /// The engine the scans run on.
    pub engine: Engine,
    /// Where the data layer is and how it was chosen.
    pub layer: DataLayer,
    /// How claims are settled.
    pub settle: pipeline::Options,
}

/// How much one process takes on.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The largest input (request body, transcript, citation) accepted, in bytes.
    pub max_input_size: u64,
    /// Operations run at once.
    pub concurrency: usize,
    /// Operations that may wait for a turn; past this, callers are turned away.
    pub queue: usize,
    /// The longest one operation may take, waiting included.
    pub time_limit: Duration,
    /// About how many bytes of sums are kept warm across requests ([`warm`]; 0: none, every
    /// request scans).
    pub warm_bytes: usize,
}

/// How many MCP sessions (protocol 2025-11-25 and before, which open one with `initialize`)
/// are kept, and for how long one may sit idle. Requests of protocol 2026-07-28 are served
/// without a session and count against neither.
#[derive(Debug, Clone, Copy)]
pub struct McpSessions {
    /// Sessions open at once; past them, an `initialize` is refused (503, JSON-RPC error
    /// `-32000`, `Retry-After`) until one ends.
    pub max: usize,
    /// A session without a request for this long is closed (its next request gets 404, and a
    /// client opens a new one).
    pub idle: std::time::Duration,
}

impl Default for McpSessions {
    /// 128 sessions (about 56 KiB each, measured: some 7 MiB in all), closed after 5 minutes
    /// idle (rmcp's own default).
    fn default() -> Self {
        McpSessions { max: 128, idle: std::time::Duration::from_secs(300) }
    }
}

/// Why `recite serve` or `recite mcp` could not start, or stopped on an error.
#[derive(Debug)]
pub enum ServeError {
    /// A non-loopback address without a token.
    Unguarded(std::net::SocketAddr),
    /// The ledger could not be opened or read.
    Ledger(ledger::LedgerError),
    /// The data layer, extractors or engine could not be loaded (the caller's error).
    Backend(Box<dyn std::error::Error + Send + Sync>),
    /// The address could not be bound.
    Listen(std::net::SocketAddr, std::io::Error),
    /// The runtime, a signal handler or a transport failed.
    Io(std::io::Error),
    /// The MCP transport failed.
    Mcp(String),
    /// A `--probe-allow` pattern could not be read.
    ProbeAllow(String),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Unguarded(listen) => write!(
                f,
                "refusing to listen on {listen} without a token: a non-loopback address needs --token-file FILE \
                 (a bearer token every request must carry; docs/service.md)"
            ),
            ServeError::Ledger(e) => write!(f, "{e}"),
            ServeError::Backend(e) => write!(f, "{e}"),
            ServeError::Listen(listen, e) => write!(f, "cannot listen on {listen}: {e}"),
            ServeError::Io(e) => write!(f, "{e}"),
            ServeError::Mcp(e) => write!(f, "{e}"),
            ServeError::ProbeAllow(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ServeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ServeError::Backend(e) => e.source(),
            _ => None,
        }
    }
}

impl From<ledger::LedgerError> for ServeError {
    fn from(e: ledger::LedgerError) -> Self {
        ServeError::Ledger(e)
    }
}

impl From<std::io::Error> for ServeError {
    fn from(e: std::io::Error) -> Self {
        ServeError::Io(e)
    }
}

type Result<T, E = ServeError> = std::result::Result<T, E>;

/// One verified citation: its report and verdict.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The report, as `recite verify - --format …` writes it.
    pub text: String,
    /// The verdict.
    pub verdict: Verdict,
}

/// A request's body is read within the input limit (and the time limit: `extract::body_deadline`).
impl axum::extract::FromRef<Arc<Service>> for extract::BodyLimits {
    fn from_ref(svc: &Arc<Service>) -> extract::BodyLimits {
        extract::BodyLimits { max: svc.max_input }
    }
}

/// Turns for operations: a semaphore, and a count of those waiting for it.
struct Turns {
    permits: Arc<Semaphore>,
    waiting: Arc<AtomicUsize>,
    concurrency: usize,
    queue: usize,
    time_limit: Duration,
}

/// One place in the queue, given back however the wait ends (a caller that goes away too).
struct Waiting(Arc<AtomicUsize>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The process's one engine and settlement session, and its limits.
pub struct Service {
    catalog: Catalog,
    registry: Registry,
    engine: Engine,
    layer: DataLayer,
    settle: pipeline::Options,
    /// The largest input accepted, in bytes.
    pub max_input: u64,
    limits: Turns,
    /// The job table kept warm across requests ([`warm`]).
    warm: warm::Warm,
    stopping: AtomicBool,
    /// The agents `POST /v1/probe` may call (none unless the server was told).
    #[cfg(feature = "agents")]
    probe_allow: probe::AllowList,
}

impl Service {
    /// The service over `b` within `c`. Must be called outside any async runtime (the
    /// engine has its own).
    pub fn new(b: Backend, c: Limits) -> Service {
        let Backend { catalog, registry, engine, layer, settle } = b;
        let concurrency = c.concurrency.max(1);
        Service {
            catalog,
            registry,
            engine,
            layer,
            settle,
            max_input: c.max_input_size,
            limits: Turns {
                permits: Arc::new(Semaphore::new(concurrency)),
                waiting: Arc::new(AtomicUsize::new(0)),
                concurrency,
                queue: c.queue,
                time_limit: c.time_limit,
            },
            warm: warm::Warm::new(c.warm_bytes),
            stopping: AtomicBool::new(false),
            #[cfg(feature = "agents")]
            probe_allow: probe::AllowList::default(),
        }
    }

    /// The service allowed to probe the agents `allow` names (`POST /v1/probe`).
    #[cfg(feature = "agents")]
    pub fn probing(mut self, allow: probe::AllowList) -> Service {
        self.probe_allow = allow;
        self
    }

    /// The time limit of one operation.
    pub fn time_limit(&self) -> Duration {
        self.limits.time_limit
    }

    /// Whether new work is still taken (`/readyz`).
    pub fn ready(&self) -> bool {
        !self.stopping.load(Ordering::SeqCst)
    }

    /// Stops taking new work: waiting operations are refused, running ones finish.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.limits.permits.close();
    }

    /// A turn to run, and the deadline of the operation: at once when one is free, after
    /// waiting when the queue has room, else refused.
    async fn admit(&self) -> Result<(OwnedSemaphorePermit, Instant), Problem> {
        let l = &self.limits;
        let deadline = Instant::now() + l.time_limit;
        if !self.ready() {
            return Err(Problem::stopping());
        }
        if let Ok(p) = l.permits.clone().try_acquire_owned() {
            return Ok((p, deadline));
        }
        if l.waiting.fetch_add(1, Ordering::SeqCst) >= l.queue {
            l.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(Problem::busy(l.concurrency, l.queue));
        }
        let _place = Waiting(l.waiting.clone());
        match tokio::time::timeout_at(deadline, l.permits.clone().acquire_owned()).await {
            Ok(Ok(p)) => Ok((p, deadline)),
            Ok(Err(_)) => Err(Problem::stopping()),
            Err(_) => Err(Problem::time_limit(l.time_limit)),
        }
    }

    /// `recite verify - [--claim …] --format FORMAT` with `body` as standard input.
    pub async fn verify(
        self: &Arc<Self>,
        body: Vec<u8>,
        claims: Vec<String>,
        format: TextOrJson,
    ) -> Result<Verified, Problem> {
        if body.len() as u64 > self.max_input {
            return Err(Problem::too_large(self.max_input));
        }
        let claimed = verify::claimed(&claims, None, self.settle.decimal_mark)
            .map_err(|e| Problem::bad_request("claim", e.to_string()))?;
        let (permit, deadline) = self.admit().await?;
        let svc = self.clone();
        let until = deadline.into_std();
        let job = tokio::task::spawn_blocking(move || {
            let _turn = permit;
            // The scan is given up at the deadline, so the turn is free when the caller hears 504.
            let scan = warm::WarmScan { engine: &svc.engine, warm: &svc.warm };
            let (settlement, stats) = recite_core::scan::with_deadline(Some(until), || {
                verify::verify("-", &body, claimed, &svc.catalog, &svc.registry, &scan, svc.settle)
            })?;
            let verdict = settlement.verdict;
            let text = match format {
                TextOrJson::Text => {
                    verify::text("-", &settlement, report::text::Style { color: false }, &svc.layer)
                }
                TextOrJson::Json => {
                    report::json::render(&verify::report("-", settlement, stats, svc.layer.clone()))
                }
            };
            Ok::<_, recite_engine::engine::EngineError>(Verified { text, verdict })
        });
        match tokio::time::timeout_at(deadline, job).await {
            Err(_) => Err(Problem::time_limit(self.limits.time_limit)),
            Ok(Err(e)) => Err(Problem::internal(format!("the verification failed: {e}"))),
            Ok(Ok(Err(e))) => Err(Problem::internal(format!("the engine failed: {e}"))),
            Ok(Ok(Ok(v))) => Ok(v),
        }
    }

    /// The measures and the base a citation (or a `{citation, result}` pair) names, when it
    /// resolves.
    #[cfg(feature = "agents")]
    fn cited(&self, bytes: &[u8]) -> Option<(Vec<recite_core::extractor::Measure>, String)> {
        let v: Value = serde_json::from_slice(bytes).ok()?;
        let c = v.get("citation").unwrap_or(&v);
        let citation = recite_core::citation::parse(c).ok()?;
        let r = recite_core::resolve::resolve(&citation, &self.catalog, &self.registry, &self.engine).ok()?;
        Some((r.measures, r.base))
    }

    /// The citation in `citation` settled against the numbers the prose `text` states about it
    /// ([`prose`]), as `recite verify - --claim …` would settle them; and how the prose was read.
    #[cfg(feature = "agents")]
    pub async fn verify_prose(
        self: &Arc<Self>,
        citation: Vec<u8>,
        text: String,
    ) -> Result<(Verified, prose::Reading), Problem> {
        if (citation.len() + text.len()) as u64 > self.max_input {
            return Err(Problem::too_large(self.max_input));
        }
        let (svc, bytes) = (self.clone(), citation.clone());
        // Resolving the citation may read the tables' schemas: off the async threads.
        let reading = tokio::task::spawn_blocking(move || {
            let (measures, base) = svc.cited(&bytes).unwrap_or_default();
            prose::read(&text, &measures, &base, svc.settle.decimal_mark)
        })
        .await
        .map_err(|e| Problem::internal(format!("reading the prose failed: {e}")))?;
        let verified = self.verify(citation, reading.claims.clone(), TextOrJson::Json).await?;
        Ok((verified, reading))
    }

    /// `recite check - --format FORMAT` with `body` as standard input named `name`: the report
    /// as it is written.
    pub async fn check(
        self: &Arc<Self>,
        body: Vec<u8>,
        name: String,
        format: ReportFormat,
    ) -> Result<Streaming, Problem> {
        self.check_many(vec![(name, body)], format).await
    }

    /// `recite check A B … --format FORMAT` over `inputs` (name, bytes), in order: one report.
    pub async fn check_many(
        self: &Arc<Self>,
        inputs: Vec<(String, Vec<u8>)>,
        format: ReportFormat,
    ) -> Result<Streaming, Problem> {
        if inputs.iter().map(|(_, b)| b.len() as u64).sum::<u64>() > self.max_input {
            return Err(Problem::too_large(self.max_input));
        }
        let (permit, deadline) = self.admit().await?;
        let (tx, rx) = mpsc::channel(8);
        let until = std::time::Instant::now() + deadline.saturating_duration_since(Instant::now());
        let svc = self.clone();
        // Made here, on the runtime: the blocking thread waits on it for a slow reader.
        let (sink, last) = (Sink::new(tx.clone(), until), Sink::new(tx, until));
        tokio::task::spawn_blocking(move || {
            let _turn = permit;
            let done =
                recite_core::scan::with_deadline(Some(until), || svc.check_into(&inputs, format, sink));
            let _ = last.put(Chunk::Done(done));
        });
        Ok(Streaming::new(rx, deadline, self.limits.time_limit))
    }

    /// Runs the check of the inputs onto `sink`, as `recite check -` runs it on one.
    fn check_into(
        &self,
        inputs: &[(String, Vec<u8>)],
        format: ReportFormat,
        sink: Sink,
    ) -> Result<(), Stopped> {
        let options = report::WriterOptions { layer: Some(self.layer.clone()), ..Default::default() };
        let mut w = report::writer(format, options, Box::new(sink));
        let inputs: Vec<(&str, &[u8])> = inputs.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect();
        // As `recite check --format html`: the HTML report charts each claim across periods.
        let done = self.check_onto(&inputs, w.as_mut(), format == ReportFormat::Html);
        drop(w);
        done
    }

    /// Runs the check of `inputs` (name, bytes) onto the report writer `w`, as `recite check`
    /// runs them (with each claim's series across periods when `series`,
    /// [`pipeline::Options::series`]); a write past the time limit (`TimedOut`) is
    /// [`Stopped::TimedOut`].
    fn check_onto(
        &self,
        inputs: &[(&str, &[u8])],
        w: &mut dyn report::stream::Writer,
        series: bool,
    ) -> Result<(), Stopped> {
        self.check_on(inputs, w, series, &self.engine)
    }

    /// [`Service::check_onto`] through `scan` (the engine, or the engine re-running a saved
    /// ruling on the versions it read: `recite::saved::OnSaved`).
    fn check_on(
        &self,
        inputs: &[(&str, &[u8])],
        w: &mut dyn report::stream::Writer,
        series: bool,
        scan: &dyn recite_core::scan::Scan,
    ) -> Result<(), Stopped> {
        let spooled = spool::Spool::new(inputs).map_err(|e| e.to_string())?;
        let sources = spooled.sources();
        let max = self.max_input;
        let opts = check::Options {
            settle: pipeline::Options { series, ..self.settle },
            held_bytes: check::HELD_BYTES,
            chunk: check::DEFAULT_CHUNK,
            max_input_size: max,
            read: &|p| spooled.read(p, max),
            record_schema: None,
            data_layer: Some(self.layer.clone()),
            timings: false,
            progress: &|_| {},
        };
        let ran = check::run(&sources, &self.catalog, &self.registry, scan, &opts, w);
        drop(spooled);
        match ran {
            Ok(_) => Ok(()),
            Err(check::CheckError::Write(e)) if e.kind() == std::io::ErrorKind::TimedOut => {
                Err(Stopped::TimedOut)
            }
            Err(e) => Err(Stopped::Failed(e.to_string())),
        }
    }

    /// The data layer: every study with its tables, columns, periods, bases and weights, the
    /// server's own file locations left out.
    pub fn catalog_json(&self) -> Value {
        let studies: Vec<Value> = self
            .catalog
            .studies
            .iter()
            .map(|s| {
                let mut v = serde_json::to_value(s).unwrap_or(Value::Null);
                if let Some(o) = v.as_object_mut() {
                    o.remove("file");
                    for t in o.get_mut("tables").and_then(Value::as_array_mut).into_iter().flatten() {
                        if let Some(t) = t.as_object_mut() {
                            t.remove("path");
                        }
                    }
                }
                v
            })
            .collect();
        json!({
            "studies": studies,
            "unusable_studies": self.catalog.broken.len(),
            "data_layer": { "source": self.layer.source.as_str() },
        })
    }

    /// The registered extractors and their measures.
    pub fn extractors_json(&self) -> Value {
        json!({ "extractors": self.registry.extractors })
    }
}

/// The runtime the front ends run on (the engine has its own for its scans).
fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("recite-serve")
        .enable_all()
        .build()?)
}

/// Where and how `recite serve` listens, beyond what every front end shares ([`Backend`],
/// [`Limits`]). (Not
/// `Debug`: it holds the token.)
pub struct Listen {
    /// The address to bind (a non-loopback one only with a token).
    pub addr: std::net::SocketAddr,
    /// The bearer token every request but the public ones must carry.
    pub token: Option<Vec<u8>>,
    /// The URL clients reach the server at (`--public-url`).
    pub public_url: Option<String>,
    /// Host names answered besides loopback, the address and the public URL's host.
    pub allowed_hosts: Vec<String>,
    /// How connections are bounded.
    pub conns: conn::Options,
    /// How MCP sessions are bounded.
    pub mcp_sessions: McpSessions,
    /// `--probe-allow`: the `host[:port]` patterns of the agents `POST /v1/probe` may call
    /// (none by default; feature `agents`).
    pub probe_allow: Vec<String>,
}

/// `recite serve`: listens as `l` says and serves the API, MCP and A2A, and the workbench on
/// the ledger at `ledger`, until SIGTERM, SIGINT or SIGHUP; the Agent Card and the permalinks
/// name the public URL, else the address. `backend` loads what the service settles with, once
/// the ledger is open.
pub fn serve<E>(
    backend: impl FnOnce() -> Result<Backend, E>,
    limits: Limits,
    l: Listen,
    ledger: &std::path::Path,
    open: bool,
) -> Result<()>
where
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let Listen { addr: listen, token, public_url, allowed_hosts, conns, mcp_sessions, probe_allow } = l;
    if !listen.ip().is_loopback() && token.is_none() {
        return Err(ServeError::Unguarded(listen));
    }
    #[cfg(feature = "agents")]
    let probe_allow =
        probe::AllowList::parse(&probe_allow).map_err(|e| ServeError::ProbeAllow(e.to_string()))?;
    #[cfg(not(feature = "agents"))]
    if !probe_allow.is_empty() {
        return Err(ServeError::ProbeAllow("this build has no probe (feature `agents`)".into()));
    }
    access::install();
    let ledger = Arc::new(ledger::Ledger::open(ledger)?);
    crate::warn(&format!("recite serve: ledger {} ({} cases)", ledger.path.display(), ledger.count()?));
    let svc = Service::new(backend().map_err(|e| ServeError::Backend(e.into()))?, limits);
    #[cfg(feature = "agents")]
    let svc = svc.probing(probe_allow);
    let svc = Arc::new(svc);
    let rt = runtime()?;
    let done = rt.block_on(async {
        let listener =
            tokio::net::TcpListener::bind(listen).await.map_err(|e| ServeError::Listen(listen, e))?;
        let bound = listener.local_addr().unwrap_or(listen);
        let site = Arc::new(site::Site::new(bound, public_url.as_deref(), &allowed_hosts));
        let base = public_url.unwrap_or_else(|| format!("http://{bound}"));
        let guarded = token.is_some();
        if open {
            open_in_browser(bound, guarded);
        }
        let base = base.trim_end_matches('/');
        let (protected, public, stop_agents) = agents(&svc, base, guarded, &ledger, mcp_sessions);
        let protected = protected.merge(workbench::routes(svc.clone(), ledger, base));
        let public = public.merge(workbench::assets());
        let guard = token.map(|t| Arc::new(signin::Guard::new(t, base)));
        let app = http::app(svc.clone(), site, guard, protected, public);
        http::run(svc.clone(), listener, guarded, app, conns, stop_agents).await
    });
    // Work still running past the grace period is abandoned; the engine is dropped here, outside
    // the runtime.
    rt.shutdown_timeout(Duration::from_secs(1));
    drop(svc);
    done
}

/// `--open`: the workbench's page in the user's browser, started apart from the server (it
/// never waits for the browser, nor fails with it). An unspecified bind address (0.0.0.0) is
/// opened on loopback, where this machine reaches it.
fn open_in_browser(bound: std::net::SocketAddr, guarded: bool) {
    let mut at = bound;
    if at.ip().is_unspecified() {
        at.set_ip(if at.is_ipv4() {
            std::net::Ipv4Addr::LOCALHOST.into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        });
    }
    // With a token, the page asks for it once (`/signin`) and keeps a session cookie.
    let url = if guarded { format!("http://{at}/signin") } else { format!("http://{at}/") };
    // $BROWSER as xdg-utils reads it (a command, or several separated by ':'), else the
    // desktop's opener.
    let browser = std::env::var("BROWSER").ok().filter(|b| !b.trim().is_empty());
    let mut tried: Vec<String> = browser.iter().flat_map(|b| b.split(':').map(str::to_string)).collect();
    tried.extend(["xdg-open".to_string(), "open".to_string()]);
    for cmd in tried {
        let mut words = cmd.split_whitespace();
        let Some(program) = words.next() else { continue };
        let spawned = std::process::Command::new(program)
            .args(words)
            .arg(&url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        if let Ok(mut child) = spawned {
            crate::warn(&format!("recite serve: opening {url} with {program}"));
            // Reaped on its own thread, so no zombie is left behind.
            std::thread::spawn(move || child.wait());
            return;
        }
    }
    crate::warn(&format!(
        "recite serve: --open: no browser could be started ($BROWSER, xdg-open, open); open {url}"
    ));
}

/// The agents' routes (feature `agents`): those behind the token (MCP at `/mcp`, A2A at
/// `/a2a/…`), the public ones (the Agent Card), and what closes the MCP sessions on stopping.
#[cfg(feature = "agents")]
fn agents(
    svc: &Arc<Service>,
    base: &str,
    guarded: bool,
    ledger: &Arc<ledger::Ledger>,
    sessions: McpSessions,
) -> (axum::Router, axum::Router, Box<dyn FnOnce() + Send>) {
    let cases = mcp::Cases { ledger: ledger.clone(), base: base.to_string() };
    let (mcp, stop) = mcp::http(svc.clone(), Some(cases), sessions);
    let agent = a2a::routes(svc.clone(), base, guarded);
    (mcp.merge(agent.protected), agent.public, Box::new(stop))
}

/// Without the feature `agents`: the HTTP API alone.
#[cfg(not(feature = "agents"))]
fn agents(
    _: &Arc<Service>,
    _: &str,
    _: bool,
    _: &Arc<ledger::Ledger>,
    _: McpSessions,
) -> (axum::Router, axum::Router, Box<dyn FnOnce() + Send>) {
    (axum::Router::new(), axum::Router::new(), Box::new(|| {}))
}

/// `recite mcp`: the MCP tools over standard input and output, until the client closes them.
#[cfg(feature = "agents")]
pub fn mcp_stdio(backend: Backend, limits: Limits) -> Result<()> {
    let svc = Arc::new(Service::new(backend, limits));
    let rt = runtime()?;
    let done = rt.block_on(mcp::stdio(svc.clone()));
    rt.shutdown_timeout(Duration::from_secs(1));
    drop(svc);
    done
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::body::{Body, Bytes};
    use axum::http::{Request, Response};
    use tokio::sync::{mpsc, watch};
    use tower::{Service as _, ServiceBuilder, ServiceExt as _};

    /// One piece of work running, counted while it lives.
    struct Working(Arc<AtomicUsize>);

    impl Drop for Working {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Why admission is the service's own (docs/service.md, "Admission"), shown rather than
    /// argued: tower's `ConcurrencyLimit` gives its permit back when the response head is
    /// ready, so while the first check's report is still being written a second check is let in
    /// (not shed) under a limit of one. The service's turn moves into the job instead, and is
    /// given back only when the work stops.
    #[tokio::test]
    async fn tower_concurrency_limit_lets_a_second_check_run_while_the_first_report_streams() {
        let working = Arc::new(AtomicUsize::new(0));
        let (release, released) = watch::channel(false);
        let counter = working.clone();
        // As `POST /v1/check`: the work starts, the head goes back at once, and the report is
        // written into the body until the work ends.
        let check = tower::service_fn(move |_: Request<Body>| {
            let (counter, mut released) = (counter.clone(), released.clone());
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                let job = Working(counter);
                let (tx, rx) = mpsc::channel::<Bytes>(1);
                tokio::spawn(async move {
                    let _job = job;
                    let _ = tx.send(Bytes::from_static(b"one report line\n")).await;
                    let _ = released.wait_for(|r| *r).await;
                });
                let report = futures::stream::unfold(rx, |mut rx| async move {
                    rx.recv().await.map(|c| (Ok::<_, Infallible>(c), rx))
                });
                Ok::<_, Infallible>(Response::new(Body::from_stream(report)))
            }
        });
        let mut limited = ServiceBuilder::new().load_shed().concurrency_limit(1).service(check);
        let ask = || Request::post("/v1/check").body(Body::empty()).unwrap();
        let first = limited.ready().await.unwrap().call(ask()).await.expect("the first check is let in");
        assert_eq!(working.load(Ordering::SeqCst), 1);
        let second = limited.ready().await.unwrap().call(ask()).await;
        assert!(second.is_ok(), "the layer shed the second check");
        assert_eq!(
            working.load(Ordering::SeqCst),
            2,
            "two checks run at once under a concurrency limit of one: the layer's permit ended with the head"
        );
        release.send(true).unwrap();
        drop((first, second));
    }
}
