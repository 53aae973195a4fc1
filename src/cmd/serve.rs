//! `recite serve`: an HTTP API (and, with the feature `agents`, an A2A agent and an MCP server)
//! over one engine: the crate `recite_serve`, given the options these flags ask for.

const USAGE: &str = "\
Examples:
  recite serve                                      on 127.0.0.1:8787, the bundled data layer
  recite serve --data my/data --listen 127.0.0.1:0  any free port (printed on standard error)
  recite serve --open                               the workbench in your browser, then settle a dispute there
  recite serve --listen 0.0.0.0:8787 --token-file /etc/recite/token --public-url https://recite.internal

  curl -s localhost:8787/v1/verify --data-binary @examples/citations/versant-w6-considered.json
  curl -s 'localhost:8787/v1/verify?claim=Considered%3D44%25' --data-binary @citation.json
  curl -s 'localhost:8787/v1/check?format=jsonl' --data-binary @examples/transcripts/a2a-v10-stream.sse
  curl -s localhost:8787/v1/catalog

Endpoints: POST /v1/verify (the body `recite verify -` reads; ?format=json|text, ?claim=…),
POST /v1/check (one transcript, any format `recite check` reads; ?format=json|jsonl|html|
markdown|junit|text, ?name=NAME), GET /v1/catalog, GET /v1/extractors, GET /v1/openapi.json
(OpenAPI 3.1), GET /healthz, /readyz.
The workbench (docs/workbench.md): GET / in a browser; POST /v1/cases (a transcript, as /v1/check)
settles and saves a case in the ledger (--ledger); GET /v1/cases[?study=&period=&measure=&verdict=],
GET /v1/cases/ID, GET /cases/ID (its page), GET /cases/ID/export, POST /v1/cases/ID/rerun;
GET /v1/cases/ID/alternatives and POST /v1/cases/ID/whatif {\"claim\": K, \"alternative\": ID} re-run
a claim on another period, base, weight, column or measure the catalog declares.
POST /v1/probe {\"url\": AGENT} probes an A2A agent as `recite probe` does and saves the case: only
agents --probe-allow names (none by default).
With the cargo feature `agents`: MCP (streamable HTTP) at /mcp, A2A at /a2a/jsonrpc and /a2a/rest,
its card at /.well-known/agent-card.json. Reports equal `recite verify -` / `recite check -`
byte for byte.
Errors are application/problem+json with a `location`.

Safe by default: loopback only unless --token-file (then every request but /healthz, /readyz and
the Agent Card needs `Authorization: Bearer TOKEN`); a `Host` other than loopback, the listen
address, --public-url's host or an --allowed-host is refused (421, against DNS rebinding), and so
is a change (POST…) from another site's page (`Origin`, 403); bodies over --max-input-size get
413; at most --concurrency requests run and --queue wait, more get 503 with Retry-After; each
request has --time-limit; a connection gets --header-timeout to send its request header, and at
most --max-connections are open, and at most --max-mcp-sessions MCP sessions (each closed after
--mcp-session-idle). Request bodies are never logged. SIGTERM, SIGINT or SIGHUP finishes the
requests in flight, then exits 0.
Running it for a team, behind a proxy, from agent frameworks: docs/service.md.";

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use super::cache::CacheArgs;
use super::{DataArgs, EngineArgs, SettleArgs, files};

/// Serve verification to other programs and agents: an HTTP API (with the feature `agents`, an
/// A2A agent and an MCP server too), over one engine and data layer.
#[derive(Debug, clap::Args)]
#[command(after_help = USAGE)]
pub struct Args {
    /// Where to listen, IP:PORT (port 0: any free port). An address other than loopback needs
    /// --token-file.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8787")]
    listen: SocketAddr,
    /// A file holding the bearer token requests must carry (one word of at least 16
    /// characters, readable by its owner only).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// The URL clients reach this server at, named by the Agent Card (default: http://ADDR as
    /// bound); set it behind a reverse proxy.
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,
    /// A host name clients reach this server by, besides localhost, the loopback and listen
    /// addresses and --public-url's host; a request naming any other `Host` is refused (421),
    /// against DNS rebinding. Repeatable.
    #[arg(long = "allowed-host", value_name = "NAME", value_parser = host_name)]
    allowed_hosts: Vec<String>,
    /// An agent `POST /v1/probe` and the workbench may probe, `HOST[:PORT]` (`*.example.com`
    /// for any name under it; any port when left out). Repeatable; none by default, so the
    /// server calls no agent on a request's word.
    #[arg(long = "probe-allow", value_name = "HOST[:PORT]")]
    probe_allow: Vec<String>,
    /// The longest a connection may take to send a request's header, in seconds, counted from
    /// when it opens and again from the end of each response (so idle kept-alive connections
    /// close after it too).
    #[arg(long, value_name = "SECONDS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    header_timeout: u64,
    /// Connections open at once; past them, a new connection is answered 503 and closed.
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    max_connections: u64,
    /// MCP sessions kept at once (clients of the 2025-11-25 protocol open one each; the
    /// 2026-07-28 protocol needs none); past them, a new session is refused (503, JSON-RPC
    /// error -32000) until one ends.
    #[arg(long, value_name = "N", default_value_t = 128, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    max_mcp_sessions: u64,
    /// An MCP session without a request for this long, in seconds, is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    mcp_session_idle: u64,
    /// The workbench's case ledger, an SQLite file (created if need be). Default:
    /// $XDG_DATA_HOME/recite/ledger.sqlite3, else ~/.local/share/recite/ledger.sqlite3.
    #[arg(long, value_name = "PATH")]
    ledger: Option<PathBuf>,
    /// Open the workbench in the browser once listening ($BROWSER, else xdg-open or open); if
    /// none starts, the address is printed and the server runs on.
    #[arg(long)]
    open: bool,
    #[command(flatten)]
    limits: Limits,
    #[command(flatten)]
    settle: SettleArgs,
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    cache: CacheArgs,
    #[command(flatten)]
    engine: EngineArgs,
}

/// How much one process takes on; shared by `serve` and `mcp`.
#[derive(Debug, Clone, clap::Args)]
pub struct Limits {
    /// The largest request body (a citation, a transcript) read. Bytes, or with KiB, MiB, GiB.
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = super::files::parse_size)]
    max_input_size: u64,
    /// Requests settled at once.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=1024))]
    concurrency: u64,
    /// Requests that may wait for a turn; beyond them, 503 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(0..=100_000))]
    queue: u64,
    /// The longest one request may take, waiting included, in seconds: then it is answered
    /// with an error and its check stops.
    #[arg(long, value_name = "SECONDS", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..))]
    time_limit: u64,
    /// The sums of recent verifications kept in memory, so that the same or a similar citation
    /// is answered without a scan while its table's files are unchanged (docs/service.md). Bytes,
    /// or with KiB, MiB, GiB; 0 keeps none.
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = super::files::parse_size)]
    warm_sums: u64,
}

impl Limits {
    /// The service's limits.
    pub fn limits(&self) -> recite_serve::Limits {
        recite_serve::Limits {
            max_input_size: self.max_input_size,
            concurrency: self.concurrency as usize,
            queue: self.queue as usize,
            time_limit: std::time::Duration::from_secs(self.time_limit),
            warm_bytes: usize::try_from(self.warm_sums).unwrap_or(usize::MAX),
        }
    }
}

/// What the service settles with, loaded as `recite check` loads it: the catalog and
/// extractors, then the engine (with its cache).
pub fn backend(
    data: &DataArgs,
    settle: &SettleArgs,
    cache: &CacheArgs,
    engine: &EngineArgs,
) -> Result<recite_serve::Backend> {
    let layer = data.data_layer();
    let (catalog, registry) = (data.catalog()?, data.registry()?);
    let engine = cache.engine(engine)?;
    Ok(recite_serve::Backend { catalog, registry, engine, layer, settle: settle.options() })
}

/// Runs `recite serve`.
pub fn run(a: Args) -> Result<ExitCode> {
    let token = a.token_file.as_deref().map(read_token).transpose()?;
    let ledger = match a.ledger {
        Some(p) => p,
        None => recite_serve::ledger::default_path().ok_or_else(|| {
            anyhow::anyhow!(
                "no place for the ledger: set --ledger PATH (neither XDG_DATA_HOME nor HOME is set)"
            )
        })?,
    };
    let listen = recite_serve::Listen {
        addr: a.listen,
        token,
        public_url: a.public_url,
        allowed_hosts: a.allowed_hosts,
        conns: recite_serve::conn::Options {
            header_timeout: std::time::Duration::from_secs(a.header_timeout),
            max_connections: a.max_connections as usize,
        },
        probe_allow: a.probe_allow,
        mcp_sessions: recite_serve::McpSessions {
            max: a.max_mcp_sessions as usize,
            idle: std::time::Duration::from_secs(a.mcp_session_idle),
        },
    };
    let load = || backend(&a.data, &a.settle, &a.cache, &a.engine);
    recite_serve::serve(load, a.limits.limits(), listen, &ledger, a.open)?;
    Ok(ExitCode::SUCCESS)
}

/// Reads the bearer token file: a regular file only its owner can read, holding one token of
/// at least 16 characters (surrounding whitespace ignored).
fn read_token(path: &std::path::Path) -> Result<Vec<u8>> {
    use std::os::unix::fs::PermissionsExt;
    let shown = path.display();
    let m = std::fs::metadata(path).map_err(|e| anyhow::anyhow!("--token-file {shown}: {e}"))?;
    if !m.is_file() {
        anyhow::bail!("--token-file {shown}: not a regular file");
    }
    if m.permissions().mode() & 0o077 != 0 {
        anyhow::bail!("--token-file {shown}: readable by others than its owner (chmod 600 {shown})");
    }
    let bytes = files::read_one(&path.to_string_lossy(), 4096)?;
    let token = String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("--token-file {shown}: not UTF-8"))?;
    let token = token.trim();
    if token.chars().count() < 16 || token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        anyhow::bail!("--token-file {shown}: the token must be one word of at least 16 characters");
    }
    Ok(token.as_bytes().to_vec())
}

/// `--allowed-host`: a DNS name or an IP address, without a port.
fn host_name(v: &str) -> Result<String, String> {
    let name = v.trim().trim_end_matches('.');
    let ip = name.strip_prefix('[').and_then(|n| n.strip_suffix(']')).unwrap_or(name);
    let dns = !name.is_empty()
        && name.len() <= 253
        && name
            .split('.')
            .all(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    if dns || ip.parse::<std::net::IpAddr>().is_ok() {
        Ok(name.to_ascii_lowercase())
    } else {
        Err(format!("{v:?} is not a host name or IP address (a name, without scheme or port)"))
    }
}
