//! `recite cluster scheduler|executor`: recite's own Apache Ballista scheduler and executor
//! ([`recite::cluster`]), for `--engine ballista://HOST:PORT`. Needs the `ballista` feature.

const USAGE: &str = "\
Examples:
  recite cluster scheduler --bind 0.0.0.0 --allow-remote --port 50050
  recite cluster executor --scheduler sched.internal:50050 --bind 0.0.0.0 --allow-remote \\
      --port 50051 --grpc-port 50052 --concurrent-tasks 8 --work-dir /var/tmp/recite
  recite check transcripts/ --engine ballista://sched.internal:50050 --engine-timeout 300

A Ballista cluster has no authentication: any client that reaches the scheduler can run plans
that read whatever the executors can read, and anyone who reaches an executor can fetch its
results. Both listen on loopback (127.0.0.1) unless --bind names another address, which they
refuse without --allow-remote. Before you pass it, let only recite's clients and the cluster's
own hosts reach these ports (a firewall or network policy; mTLS in front, docs/cluster.md).

The scheduler plans each scan the client sends and hands its tasks to the executors, which read
the tables and run them; the client reads the sums back. Every machine must read the tables at
the paths the catalog names: object storage (s3://, gs://, az://, https://), or one shared
folder. Each prints one ready line on standard output, then runs until stopped (Ctrl-C, SIGTERM).
Port 0 picks a free port, which the ready line reports. The scheduler also answers
GET /readyz on its port: 200 once --min-executors executors are registered.
Deployment: docs/cluster.md. Needs the `ballista` cargo feature (on by default).";

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

/// Run recite's Ballista scheduler or executor (`--engine ballista://HOST:PORT`).
#[derive(Debug, clap::Subcommand)]
#[command(after_help = USAGE)]
pub enum Command {
    /// The scheduler: takes plans from clients, runs them on the executors.
    #[command(after_help = USAGE)]
    Scheduler(SchedulerArgs),
    /// An executor: registers with the scheduler and runs the tasks it is given.
    #[command(after_help = USAGE)]
    Executor(ExecutorArgs),
}

/// `recite cluster scheduler`.
#[derive(Debug, clap::Args)]
#[cfg_attr(not(feature = "ballista"), allow(dead_code))]
pub struct SchedulerArgs {
    /// The address to listen on (0.0.0.0: every interface).
    #[arg(long, value_name = "HOST", default_value = "127.0.0.1")]
    bind: String,
    /// The gRPC port for clients and executors (0: a free one).
    #[arg(long, default_value_t = 50050)]
    port: u16,
    /// The host name the scheduler is known by (default: the bind address).
    #[arg(long, value_name = "HOST")]
    external_host: Option<String>,
    /// Executors registered before GET /readyz answers 200.
    #[arg(long, value_name = "N", default_value_t = 1)]
    min_executors: usize,
    /// Listen on an address other machines can reach (not loopback). The cluster has no
    /// authentication: anyone who reaches it can read what its executors can (docs/cluster.md).
    #[arg(long)]
    allow_remote: bool,
}

/// `recite cluster executor`.
#[derive(Debug, clap::Args)]
#[cfg_attr(not(feature = "ballista"), allow(dead_code))]
pub struct ExecutorArgs {
    /// The scheduler, as HOST:PORT.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:50050", value_parser = host_port)]
    scheduler: (String, u16),
    /// The address to listen on.
    #[arg(long, value_name = "HOST", default_value = "127.0.0.1")]
    bind: String,
    /// The host name others reach this executor by (default: the address it connects from).
    #[arg(long, value_name = "HOST")]
    external_host: Option<String>,
    /// The Arrow Flight port results are fetched from (0: a free one).
    #[arg(long, default_value_t = 50051)]
    port: u16,
    /// The gRPC port the scheduler sends tasks to (0: a free one).
    #[arg(long, default_value_t = 50052)]
    grpc_port: u16,
    /// Tasks run at once (default: the cores of this machine).
    #[arg(long, value_name = "N")]
    concurrent_tasks: Option<usize>,
    /// Where shuffle files and spills go (default: a temporary folder, removed at exit).
    #[arg(long, value_name = "DIR")]
    work_dir: Option<PathBuf>,
    /// Listen on an address other machines can reach (not loopback). The cluster has no
    /// authentication: anyone who reaches it can read what its executors can (docs/cluster.md).
    #[arg(long)]
    allow_remote: bool,
}

/// `HOST:PORT`, the port required.
fn host_port(v: &str) -> std::result::Result<(String, u16), String> {
    let (host, port) = v.rsplit_once(':').ok_or_else(|| format!("{v:?} is not HOST:PORT"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match port.parse::<u16>() {
        Ok(p) if p > 0 && !host.is_empty() => Ok((host.to_string(), p)),
        _ => Err(format!("{v:?} is not HOST:PORT (a port from 1 to 65535)")),
    }
}

/// Whether `host` (a `--bind` value) is a loopback address, which only this machine reaches.
#[cfg_attr(not(feature = "ballista"), allow(dead_code))]
fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|a| a.is_loopback())
}

/// Refuses a non-loopback `--bind` without `--allow-remote`: the cluster has no authentication.
#[cfg_attr(not(feature = "ballista"), allow(dead_code))]
fn check_bind(role: &str, bind: &str, allow_remote: bool) -> Result<()> {
    if allow_remote || is_loopback(bind) {
        return Ok(());
    }
    anyhow::bail!(
        "refusing to listen on {bind}: the {role} would be reachable from other machines, and a Ballista \
         cluster has no authentication (anyone who reaches it can read what its executors can). Pass \
         --allow-remote once a firewall or network policy lets only your clients and cluster hosts in \
         (docs/cluster.md), or bind 127.0.0.1"
    )
}

/// Runs `recite cluster …`.
#[cfg(feature = "ballista")]
pub fn run(c: Command) -> Result<ExitCode> {
    use recite::cluster;
    match c {
        Command::Scheduler(a) => {
            check_bind("scheduler", &a.bind, a.allow_remote)?;
            let opts = cluster::SchedulerOptions {
                bind_host: a.bind,
                port: a.port,
                external_host: a.external_host,
                min_executors: a.min_executors,
            };
            cluster::run_scheduler(&opts, |addr| {
                // The first line is what scripts and tests wait for.
                println!(
                    "recite cluster scheduler listening on {addr} (clients: --engine ballista://{addr})"
                );
            })?;
        }
        Command::Executor(a) => {
            check_bind("executor", &a.bind, a.allow_remote)?;
            let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
            let opts = cluster::ExecutorOptions {
                bind_host: a.bind,
                external_host: a.external_host,
                port: a.port,
                grpc_port: a.grpc_port,
                scheduler: a.scheduler.clone(),
                concurrent_tasks: a.concurrent_tasks.filter(|&n| n > 0).unwrap_or(cores),
                work_dir: a.work_dir,
            };
            cluster::run_executor(&opts, |r| {
                println!(
                    "recite cluster executor listening on {} (tasks on {}), {} concurrent tasks, \
                     scheduler {}:{}, work dir {}",
                    r.flight,
                    r.grpc,
                    r.concurrent_tasks,
                    a.scheduler.0,
                    a.scheduler.1,
                    r.work_dir.display()
                );
            })?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `recite cluster …`: without the feature, says how to build it.
#[cfg(not(feature = "ballista"))]
pub fn run(_c: Command) -> Result<ExitCode> {
    anyhow::bail!(
        "recite cluster: this recite was built without the `ballista` cargo feature; build it with \
         `cargo build --release --features ballista` (docs/cluster.md)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_binds_go_without_allow_remote() {
        for host in ["127.0.0.1", "127.8.9.1", "::1", "[::1]", "localhost", "LOCALHOST"] {
            assert!(check_bind("scheduler", host, false).is_ok(), "{host}");
        }
        for host in ["0.0.0.0", "::", "10.0.0.5", "sched.internal", "192.168.1.2"] {
            let e = check_bind("scheduler", host, false).unwrap_err().to_string();
            assert!(e.contains("--allow-remote") && e.contains("no authentication"), "{host}: {e}");
            assert!(check_bind("executor", host, true).is_ok(), "{host}");
        }
    }
}
