//! Where the engine runs: in this process (`local`, the default), or on an Apache Ballista
//! cluster (`ballista://HOST:PORT`, cargo feature `ballista`; docs/cluster.md).
//!
//! On a cluster, a table's scans are sent to the scheduler as DataFusion plans, which its
//! executors run; recite only plans them and reads the sums back. What cannot run on an
//! executor stays in this process, and the scan's plan text says so (`Cluster::place`):
//! an SPSS table (recite's own reader), a CSV converted into a local copy, and jobs whose
//! replicate weights' ranks are accumulated from the scan's streams (`engine::gram`).
//!
//! Nothing on a cluster waits without end: the scheduler must answer a gRPC call when the
//! engine connects, and every scan on the cluster runs within the engine's deadline
//! (`--engine-timeout`, [`DEFAULT_ENGINE_TIMEOUT_SECONDS`]). A scan the deadline stops, a
//! scheduler that stops answering and an executor lost mid-scan are a [`ClusterFault`] naming
//! the scheduler: the table's claims are UNVERIFIABLE as the cluster's fault, not the table's.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::prelude::SessionContext;
use tokio::runtime::Runtime;

use super::{Job, Place, PlanChoice, Tables};

/// Ballista's default scheduler port, used when `ballista://HOST` names none.
pub const DEFAULT_PORT: u16 = 50050;

/// How long a scan on a cluster may take by default (`--engine-timeout`): ten minutes, well
/// past any scan a working cluster runs for a claim batch, and a bound on one that is not.
pub const DEFAULT_ENGINE_TIMEOUT_SECONDS: u64 = 600;

/// The longest `--engine-timeout` taken: a day. A deadline is there to end a wait that a
/// working cluster never makes a batch endure; past a day it ends nothing (and `u64::MAX`
/// seconds is not an instant any clock holds).
pub const MAX_ENGINE_TIMEOUT_SECONDS: u64 = 86_400;

/// The engine a command runs claims on, as `--engine` or `RECITE_ENGINE` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineUrl {
    /// DataFusion in this process.
    Local,
    /// The scheduler of a Ballista cluster.
    Ballista {
        /// Its host name or address (an IPv6 address in brackets).
        host: String,
        /// Its gRPC port.
        port: u16,
    },
}

impl fmt::Display for EngineUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineUrl::Local => f.write_str("local"),
            EngineUrl::Ballista { host, port } => write!(f, "ballista://{host}:{port}"),
        }
    }
}

/// An `--engine` value that names no engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineUrlError {
    /// The value as given.
    pub value: String,
    /// What is wrong with it.
    pub why: String,
}

impl fmt::Display for EngineUrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "engine {:?}: {} (expected `local` or `ballista://HOST:PORT`)", self.value, self.why)
    }
}

impl std::error::Error for EngineUrlError {}

impl FromStr for EngineUrl {
    type Err = EngineUrlError;

    fn from_str(value: &str) -> Result<EngineUrl, EngineUrlError> {
        let fail = |why: &str| EngineUrlError { value: value.to_string(), why: why.to_string() };
        let v = value.trim();
        if v.eq_ignore_ascii_case("local") {
            return Ok(EngineUrl::Local);
        }
        let Some((scheme, rest)) = v.split_once("://") else {
            return Err(fail("not an engine name or URL"));
        };
        if !scheme.eq_ignore_ascii_case("ballista") {
            return Err(fail(&format!("unknown scheme {scheme:?}")));
        }
        let authority = rest.strip_suffix('/').unwrap_or(rest);
        if authority.contains(['/', '?', '#', '@']) {
            return Err(fail("a scheduler URL is only HOST:PORT, with no path, query or user"));
        }
        // `[v6]:port`, `host:port`, or either without the port.
        let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
            let (addr, after) =
                inner.split_once(']').ok_or_else(|| fail("an IPv6 address is missing its `]`"))?;
            if addr.parse::<std::net::Ipv6Addr>().is_err() {
                return Err(fail(&format!("{addr:?} is not an IPv6 address")));
            }
            match after {
                "" => (format!("[{addr}]"), None),
                p => match p.strip_prefix(':') {
                    Some(p) => (format!("[{addr}]"), Some(p)),
                    None => return Err(fail("text after the IPv6 address is not `:PORT`")),
                },
            }
        } else {
            match authority.split_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (authority.to_string(), None),
            }
        };
        if host.is_empty() {
            return Err(fail("no host"));
        }
        if !host.starts_with('[')
            && !host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        {
            return Err(fail(&format!("{host:?} is not a host name or address")));
        }
        let port = match port {
            None => DEFAULT_PORT,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 => n,
                _ => return Err(fail(&format!("{p:?} is not a port (1 to 65535)"))),
            },
        };
        Ok(EngineUrl::Ballista { host, port })
    }
}

/// Why an engine could not be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectError {
    /// This build of recite has no Ballista client.
    NotBuilt {
        /// The engine asked for.
        url: String,
    },
    /// The scheduler did not answer, or its session could not be made.
    Unreachable {
        /// The engine asked for.
        url: String,
        /// What went wrong.
        error: String,
    },
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectError::NotBuilt { url } => write!(
                f,
                "engine {url}: this recite was built without the `ballista` cargo feature; build it \
                 with `cargo build --release --features ballista` to run on a Ballista cluster \
                 (docs/cluster.md)"
            ),
            ConnectError::Unreachable { url, error } => {
                write!(f, "engine {url}: the Ballista scheduler cannot be reached: {error}")
            }
        }
    }
}

impl std::error::Error for ConnectError {}

/// A failure of the Ballista cluster itself while it ran a scan (the deadline passed, the
/// scheduler or an executor stopped answering, an executor was lost), not of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterFault {
    /// The scheduler, as `ballista://HOST:PORT`.
    pub url: String,
    /// What happened, as a phrase following the scheduler's name.
    pub error: String,
}

impl fmt::Display for ClusterFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the Ballista scheduler {} {}", self.url, self.error)
    }
}

impl std::error::Error for ClusterFault {}

/// The [`ClusterFault`] a scan's error carries, if it does.
pub(crate) fn cluster_fault(e: &DataFusionError) -> Option<&ClusterFault> {
    [e, e.find_root()].into_iter().find_map(|e| match e {
        DataFusionError::External(x) => x.downcast_ref::<ClusterFault>(),
        _ => None,
    })
}

/// What a cluster's error says happened to the cluster, when it is the cluster's failure
/// rather than the plan's or the data's (Ballista's and tonic's own words).
#[cfg(feature = "ballista")]
fn cluster_failure(text: &str) -> Option<&'static str> {
    if text.contains("Executor") && text.contains(" lost") {
        return Some("lost the executor running the scan");
    }
    const GONE: [&str; 10] = [
        "transport error",
        "Unavailable",
        "Connection refused",
        "connection refused",
        "Connection reset",
        "connection reset",
        "Broken pipe",
        "broken pipe",
        "error trying to connect",
        "h2 protocol error",
    ];
    GONE.iter()
        .any(|m| text.contains(m))
        .then_some("stopped answering during the scan (it, or the executor holding the results)")
}

/// A Ballista cluster's session, which scans registered in it run on, and where each table's
/// scans ran.
pub(crate) struct Cluster {
    /// The client session: its query planner sends every plan to the scheduler.
    pub(crate) ctx: SessionContext,
    /// The scheduler, as `ballista://HOST:PORT`, for plan texts.
    pub(crate) url: String,
    /// The longest one scan on the cluster may take (`--engine-timeout`).
    #[cfg_attr(not(feature = "ballista"), allow(dead_code))]
    pub(crate) deadline: Duration,
    /// Where each table's scans ran (table → where), for the command to tell; kept out of the
    /// report, which is the same wherever the scans ran.
    placements: Mutex<BTreeMap<String, String>>,
}

#[cfg(feature = "ballista")]
impl Cluster {
    fn fault(&self, error: String) -> DataFusionError {
        DataFusionError::External(Box::new(ClusterFault { url: self.url.clone(), error }))
    }
}

impl Cluster {
    /// A session on the Ballista cluster whose scheduler is at `host`:`port` (`url`), made on
    /// `rt` once the scheduler answered a gRPC call, so that an address nothing answers on
    /// fails here rather than in every claim; every scan on it runs within `deadline`.
    #[cfg(feature = "ballista")]
    pub(crate) fn connect(
        rt: &Runtime,
        host: &str,
        port: u16,
        url: &str,
        deadline: Duration,
    ) -> Result<Cluster, ConnectError> {
        use ballista::prelude::SessionContextExt;
        use ballista_core::serde::protobuf::GetJobStatusParams;
        use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
        let unreachable = |error: String| ConnectError::Unreachable { url: url.to_string(), error };
        let ctx = rt.block_on(async {
            // A gRPC call, not only a connection: a listener that accepts and never answers
            // is found here, not by the first scan.
            let wait = Duration::from_secs(CONNECT_TIMEOUT_SECONDS).min(deadline);
            let asked = tokio::time::timeout(wait, async {
                let mut client = SchedulerGrpcClient::connect(format!("http://{host}:{port}"))
                    .await
                    .map_err(|e| error_chain(&e))?;
                match client
                    .get_job_status(GetJobStatusParams { job_id: "recite-connect-probe".into() })
                    .await
                {
                    // Any answer of the scheduler's own (an unknown job) is an answer.
                    Err(status)
                        if ["Unavailable", "transport error", "not ready"]
                            .iter()
                            .any(|m| format!("{status:?}").contains(m)) =>
                    {
                        Err(error_chain(&status))
                    }
                    _ => Ok(()),
                }
            })
            .await;
            match asked {
                Err(_) => {
                    return Err(unreachable(format!(
                        "it accepted no gRPC call in {} s (nothing answers, or something that is not a \
                         Ballista scheduler)",
                        wait.as_secs()
                    )));
                }
                Ok(Err(e)) => return Err(unreachable(e)),
                Ok(Ok(())) => {}
            }
            SessionContext::remote(&format!("df://{host}:{port}"))
                .await
                .map_err(|e| unreachable(e.strip_backtrace()))
        })?;
        Ok(Cluster { ctx, url: url.to_string(), deadline, placements: Mutex::new(BTreeMap::new()) })
    }

    /// Whether `ctx` is this cluster's session (a table registered in it is scanned here).
    pub(crate) fn holds(&self, ctx: &SessionContext) -> bool {
        self.ctx.session_id() == ctx.session_id()
    }

    /// Runs `work` on `rt` (no cluster in this build).
    #[cfg(not(feature = "ballista"))]
    pub(crate) fn run<T>(
        &self,
        rt: &Runtime,
        work: impl std::future::Future<Output = DfResult<T>>,
    ) -> DfResult<T> {
        rt.block_on(work)
    }

    /// Runs `work`, in this cluster's session, on `rt` within the cluster's deadline; a failure of
    /// the cluster itself comes back as a [`ClusterFault`] naming the scheduler (see
    /// [`cluster_fault`]).
    #[cfg(feature = "ballista")]
    pub(crate) fn run<T>(
        &self,
        rt: &Runtime,
        work: impl std::future::Future<Output = DfResult<T>>,
    ) -> DfResult<T> {
        match rt.block_on(async { tokio::time::timeout(self.deadline, work).await }) {
            Ok(Ok(v)) => Ok(v),
            Err(_) => Err(self.fault(format!(
                "did not finish the scan within {} s (--engine-timeout): it may have no executor, \
                 have lost the one running the scan, or not be answering",
                self.deadline.as_secs()
            ))),
            Ok(Err(e)) if cluster_fault(&e).is_some() => Err(e),
            Ok(Err(e)) => {
                let text = e.strip_backtrace();
                match cluster_failure(&text) {
                    Some(what) => Err(self.fault(format!("{what}: {text}"))),
                    None => Err(e),
                }
            }
        }
    }

    /// Where each table's scans ran, as (table, where) in table order.
    pub(crate) fn placements(&self) -> Vec<(String, String)> {
        self.placements
            .lock()
            .map(|m| m.iter().map(|(t, p)| (t.clone(), p.clone())).collect())
            .unwrap_or_default()
    }

    /// Remembers where the scans that chose `plans` ran: on the cluster, or in this process
    /// for the reason `here` gives ([`Cluster::place`]).
    pub(crate) fn record(&self, here: Option<&str>, plans: &[PlanChoice]) {
        let place = match here {
            Some(why) => format!("in this process, not on the cluster: {why}"),
            None => format!("on the Ballista cluster {}", self.url),
        };
        if let Ok(mut m) = self.placements.lock() {
            for p in plans {
                m.insert(p.table.clone(), place.clone());
            }
        }
    }

    /// Why scans of the table at `location` stay in this process (none when the executors can
    /// read the table); `tables` knows the CSV formats declared.
    fn stays_here(&self, location: &Path, tables: &Tables) -> Option<&'static str> {
        if crate::sav::is_sav(location) {
            return Some("an SPSS table is read by recite's own reader, which the executors do not run");
        }
        if crate::delta::of_location(location).is_some() {
            return Some(
                "a Delta table is read through delta-rs's table provider, which the executors do not run",
            );
        }
        if crate::postgres::is_location(&location.to_string_lossy()) {
            return Some(
                "a PostgreSQL table is read through its server by this process, which holds the connection",
            );
        }
        if tables.declared_csv(location).is_some_and(|f| f.needs_transcoding()) {
            return Some(
                "a CSV table in another encoding or with decimal commas is read from a converted copy on this machine",
            );
        }
        None
    }

    /// Where one scan of a table for `jobs` runs, and why it stays here: on the cluster, unless
    /// the table or a job needs this process.
    pub(super) fn place(
        &self,
        location: &Path,
        jobs: &[&Job],
        tables: &Tables,
    ) -> (Place, Option<&'static str>) {
        if let Some(why) = self.stays_here(location, tables) {
            return (Place::Here, Some(why));
        }
        if jobs.iter().any(|j| super::gram::wanted(j)) {
            // The ranks are accumulated from the grouped scan's streams, in this process.
            return (
                Place::Here,
                Some("the replicate weights' ranks (degrees of freedom) are accumulated in this process"),
            );
        }
        (Place::Cluster, None)
    }
}

/// How long to wait for a scheduler's first answer.
#[cfg(feature = "ballista")]
const CONNECT_TIMEOUT_SECONDS: u64 = 10;

/// An error and its sources, in one line (tonic's transport errors say little at the top).
#[cfg(feature = "ballista")]
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parsed URL, or what a user reads when it is refused.
    fn parse(v: &str) -> Result<EngineUrl, Refused> {
        v.parse::<EngineUrl>().map_err(|e| Refused(e.to_string()))
    }

    /// An [`EngineUrlError`] as its message, to compare.
    #[derive(Debug, PartialEq)]
    struct Refused(String);

    #[test]
    fn engine_urls_name_local_or_a_ballista_scheduler() {
        assert_eq!(parse("local"), Ok(EngineUrl::Local));
        assert_eq!(parse(" LOCAL "), Ok(EngineUrl::Local));
        let b = |h: &str, p: u16| Ok(EngineUrl::Ballista { host: h.into(), port: p });
        assert_eq!(parse("ballista://127.0.0.1:50050"), b("127.0.0.1", 50050));
        assert_eq!(parse("ballista://sched.internal"), b("sched.internal", DEFAULT_PORT));
        assert_eq!(parse("Ballista://sched:7/"), b("sched", 7));
        assert_eq!(parse("ballista://[::1]:9000"), b("[::1]", 9000));
        assert_eq!(parse("ballista://[::1]:9000").unwrap().to_string(), "ballista://[::1]:9000");
    }

    #[test]
    fn malformed_engine_urls_say_what_is_wrong() {
        for (v, why) in [
            ("remote", "not an engine name or URL"),
            ("df://h:1", "unknown scheme \"df\""),
            ("ballista://", "no host"),
            ("ballista://:50050", "no host"),
            ("ballista://h:0", "\"0\" is not a port"),
            ("ballista://h:99999", "\"99999\" is not a port"),
            ("ballista://h:port", "\"port\" is not a port"),
            ("ballista://h:1/jobs", "no path"),
            ("ballista://u@h:1", "no path, query or user"),
            ("ballista://h h:1", "is not a host name"),
            ("ballista://[::1:1", "missing its `]`"),
            ("ballista://[nope]:1", "is not an IPv6 address"),
        ] {
            let Refused(e) = parse(v).expect_err(v);
            assert!(e.contains(why), "{v}: {e}");
            assert!(e.contains("expected `local` or `ballista://HOST:PORT`"), "{v}: {e}");
        }
    }

    #[cfg(feature = "ballista")]
    #[test]
    fn cluster_failures_are_told_from_data_errors() {
        let lost = "Job 3 failed: Task failure due to Executor 7f2c lost";
        assert_eq!(cluster_failure(lost), Some("lost the executor running the scan"));
        let gone = "Status { code: Unavailable, message: \"error trying to connect: tcp connect error\" }";
        assert!(cluster_failure(gone).is_some_and(|w| w.starts_with("stopped answering")));
        for data in
            ["Arrow error: Cast error: Cannot cast string 'x' to Float64", "Job 4 failed: Divide by zero"]
        {
            assert_eq!(cluster_failure(data), None, "{data}");
        }
        let fault = ClusterFault { url: "ballista://h:1".into(), error: "did not finish".into() };
        let e = DataFusionError::Context(
            "scan".into(),
            Box::new(DataFusionError::External(Box::new(fault.clone()))),
        );
        assert_eq!(cluster_fault(&e), Some(&fault));
        assert_eq!(fault.to_string(), "the Ballista scheduler ballista://h:1 did not finish");
    }

    #[cfg(not(feature = "ballista"))]
    #[test]
    fn a_ballista_engine_without_the_feature_names_the_feature() {
        let url: EngineUrl = "ballista://127.0.0.1:1".parse().unwrap();
        let e =
            crate::engine::Engine::connect(&url).err().expect("no Ballista client in this build").to_string();
        assert!(e.contains("`ballista` cargo feature") && e.contains("--features ballista"), "{e}");
    }
}
