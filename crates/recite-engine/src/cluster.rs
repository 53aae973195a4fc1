//! recite's own Ballista scheduler and executor (`recite cluster scheduler|executor`,
//! docs/cluster.md), built on the `ballista-scheduler` and `ballista-executor` libraries.
//!
//! Why recite ships them rather than pointing at Ballista's binaries: they are the same build
//! of DataFusion 55 as the client (same functions, same file formats, same Ballista protocol
//! version), and they register on the cluster side what recite's plans need. Today that is the
//! object stores table URLs may name ([`object_stores`], from the `object-store`
//! feature fills); recite's plans use only DataFusion's built-in functions and listing tables,
//! so no UDF or extension codec has to be shipped.

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::Arc;

use ballista_core::serde::BallistaCodec;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::metrics::default_metrics_collector;
use ballista_scheduler::scheduler_process::start_grpc_service_with_listener;
use ballista_scheduler::scheduler_server::SchedulerServer;
use datafusion::execution::SessionState;
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::prelude::SessionConfig;

/// Why a scheduler or executor stopped or could not start.
#[derive(Debug)]
pub struct ClusterError(pub String);

impl std::fmt::Display for ClusterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ClusterError {}

fn fail(what: &str, e: impl std::fmt::Display) -> ClusterError {
    ClusterError(format!("{what}: {e}"))
}

/// How to run a scheduler.
#[derive(Debug, Clone)]
pub struct SchedulerOptions {
    /// The address to listen on (`0.0.0.0` for every interface).
    pub bind_host: String,
    /// The gRPC port clients (`--engine ballista://HOST:PORT`) and executors use; 0 picks a
    /// free one, which the ready line reports.
    pub port: u16,
    /// The host name the scheduler is known by (default: the bind address, or `localhost`
    /// when that is every interface).
    pub external_host: Option<String>,
    /// Executors registered before its `/readyz` answers 200 (on the same port).
    pub min_executors: usize,
}

/// How to run an executor.
#[derive(Debug, Clone)]
pub struct ExecutorOptions {
    /// The address to listen on.
    pub bind_host: String,
    /// The host name the scheduler and clients reach this executor by (default: the address
    /// its connection to the scheduler comes from).
    pub external_host: Option<String>,
    /// The Arrow Flight port results and shuffles are fetched from; 0 picks a free one.
    pub port: u16,
    /// The gRPC port the scheduler pushes tasks to; 0 picks a free one.
    pub grpc_port: u16,
    /// The scheduler's host and port.
    pub scheduler: (String, u16),
    /// Tasks run at once (default: the cores of this machine).
    pub concurrent_tasks: usize,
    /// Where shuffle files and spills go (default: a temporary folder removed at exit).
    pub work_dir: Option<PathBuf>,
}

/// What a started executor listens on, for its ready line.
#[derive(Debug, Clone)]
pub struct ExecutorReady {
    /// The Arrow Flight address.
    pub flight: SocketAddr,
    /// The task (gRPC) address.
    pub grpc: SocketAddr,
    /// Tasks run at once.
    pub concurrent_tasks: usize,
    /// The work folder.
    pub work_dir: PathBuf,
}

/// The runtime of a scheduler or executor: multi-threaded, with the engine's deep stacks
/// (filters are evaluated by recursion on their depth, here as in the client).
fn runtime(name: &str) -> Result<tokio::runtime::Runtime, ClusterError> {
    tokio::runtime::Builder::new_multi_thread()
        .thread_name(name)
        .thread_stack_size(32 << 20)
        .enable_all()
        .build()
        .map_err(|e| fail("cannot start the runtime", e))
}

/// A free port on `host` (the OS picks it; another process could take it before it is
/// bound again, which on a test machine's loopback does not happen in practice).
fn free_port(host: &str) -> Result<u16, ClusterError> {
    let listener = TcpListener::bind((host, 0)).map_err(|e| fail(&format!("cannot bind {host}"), e))?;
    let port = listener.local_addr().map_err(|e| fail("no local address", e))?.port();
    Ok(port)
}

fn address(host: &str, port: u16) -> Result<SocketAddr, ClusterError> {
    use std::net::ToSocketAddrs;
    (host, port)
        .to_socket_addrs()
        .map_err(|e| fail(&format!("cannot resolve {host}"), e))?
        .next()
        .ok_or_else(|| ClusterError(format!("{host} resolves to no address")))
}

/// The object stores a scheduler's or executor's runtime reads table URLs through (`s3://`,
/// `gs://`, `az://`, `http(s)://`): built from the environment the first time a task names a
/// bucket or host, since executors learn the URLs only from their tasks (`objstore::registry`).
pub fn object_stores() -> Arc<dyn datafusion::execution::object_store::ObjectStoreRegistry> {
    crate::objstore::registry()
}

/// Runs a scheduler until the process is stopped; `ready` is called with its address once
/// it is about to listen.
pub fn run_scheduler(opts: &SchedulerOptions, ready: impl FnOnce(SocketAddr)) -> Result<(), ClusterError> {
    let port = if opts.port == 0 { free_port(&opts.bind_host)? } else { opts.port };
    let addr = address(&opts.bind_host, port)?;
    let external = opts.external_host.clone().unwrap_or_else(|| {
        if addr.ip().is_unspecified() { "localhost".to_string() } else { opts.bind_host.clone() }
    });
    let mut config = SchedulerConfig::default().with_hostname(external).with_port(port);
    config.bind_host = opts.bind_host.clone();
    config.min_ready_executors = opts.min_executors;
    // The scheduler plans the physical plan, listing the tables' files: it needs the stores.
    config.override_session_builder =
        Some(Arc::new(|c: SessionConfig| -> datafusion::error::Result<SessionState> {
            let state = ballista_core::utils::default_session_builder(c)?;
            let runtime = RuntimeEnvBuilder::new().with_object_store_registry(object_stores()).build_arc()?;
            Ok(datafusion::execution::SessionStateBuilder::new_from_existing(state)
                .with_runtime_env(runtime)
                .build())
        }));
    config.validate().map_err(|e| fail("bad scheduler configuration", e))?;
    let config = Arc::new(config);
    runtime("recite-scheduler")?.block_on(async move {
        let cluster = BallistaCluster::new_from_config(&config)
            .await
            .map_err(|e| fail("cannot set up the scheduler", e))?;
        // Ballista's default codecs (its logical and physical plan protobufs).
        let codec: BallistaCodec = BallistaCodec::default();
        let metrics = default_metrics_collector().map_err(|e| fail("cannot set up the scheduler", e))?;
        let mut server =
            SchedulerServer::new(config.scheduler_endpoint(), cluster, codec, config.clone(), metrics);
        server.init().await.map_err(|e| fail("cannot start the scheduler", e))?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| fail(&format!("cannot listen on {addr}"), e))?;
        ready(listener.local_addr().unwrap_or(addr));
        start_grpc_service_with_listener(listener, server).await.map_err(|e| fail("the scheduler stopped", e))
    })
}

/// Runs an executor until the process is stopped (or the scheduler tells it to); `ready` is
/// called with what it listens on before it registers with the scheduler, which it retries
/// until the scheduler answers.
pub fn run_executor(opts: &ExecutorOptions, ready: impl FnOnce(&ExecutorReady)) -> Result<(), ClusterError> {
    let port = if opts.port == 0 { free_port(&opts.bind_host)? } else { opts.port };
    let grpc_port = if opts.grpc_port == 0 { free_port(&opts.bind_host)? } else { opts.grpc_port };
    if port == grpc_port {
        return Err(ClusterError(format!("the Flight and task ports are both {port}: give two ports")));
    }
    // A temporary work folder lives as long as this function.
    let temporary = match &opts.work_dir {
        Some(_) => None,
        None => Some(tempfile::tempdir().map_err(|e| fail("cannot make a work folder", e))?),
    };
    let work_dir = match (&opts.work_dir, &temporary) {
        (Some(d), _) => {
            std::fs::create_dir_all(d).map_err(|e| fail(&format!("cannot make {}", d.display()), e))?;
            d.clone()
        }
        (None, Some(t)) => t.path().to_path_buf(),
        (None, None) => unreachable!("a work folder is given or made"),
    };
    let work = work_dir.to_string_lossy().to_string();
    let spills = work.clone();
    let config = ExecutorProcessConfig {
        bind_host: opts.bind_host.clone(),
        external_host: opts.external_host.clone(),
        port,
        grpc_port,
        scheduler_host: opts.scheduler.0.clone(),
        scheduler_port: opts.scheduler.1,
        // Keep trying a scheduler that is not up yet (executors may start first).
        scheduler_connect_timeout_seconds: 60,
        vcores: opts.concurrent_tasks,
        work_dir: Some(work),
        print_thread_info: false,
        // Its tasks read the tables: they need the stores too.
        override_runtime_producer: Some(Arc::new(
            move |_: &SessionConfig| -> datafusion::error::Result<Arc<RuntimeEnv>> {
                let env = RuntimeEnvBuilder::new()
                    .with_temp_file_path(spills.clone())
                    .with_object_store_registry(object_stores())
                    .build()?;
                Ok(Arc::new(env))
            },
        )),
        ..ExecutorProcessConfig::default()
    };
    ready(&ExecutorReady {
        flight: address(&opts.bind_host, port)?,
        grpc: address(&opts.bind_host, grpc_port)?,
        concurrent_tasks: opts.concurrent_tasks,
        work_dir: work_dir.clone(),
    });
    let done = runtime("recite-executor")?.block_on(start_executor_process(Arc::new(config)));
    drop(temporary);
    done.map_err(|e| fail("the executor stopped", e))
}
