//! A real Ballista cluster on loopback (feature `ballista`): a scheduler and two executors, each
//! a child process of the built `recite cluster …` binary on ephemeral ports, so the test runs
//! the same entry points, gRPC services and Flight transfers a deployment does (Ballista's
//! in-process `standalone()` would skip recite's own scheduler and executor). `recite check`
//! through it must give the local engine's report.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::support::{code, command, recite, report, root, stderr, stdout};

/// How long a child may take to say it is ready, and the cluster to register its executors.
const READY: Duration = Duration::from_secs(90);

/// The children of one cluster, killed (and reaped) however the test ends.
pub struct Cluster {
    children: Vec<(String, Child)>,
    /// The scheduler's address, `127.0.0.1:PORT`.
    pub scheduler: String,
    logs: tempfile::TempDir,
    /// Variables set in every child's environment (an object store's endpoint, say).
    env: Vec<(String, String)>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for (_, child) in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Cluster {
    /// A scheduler and `executors` executors of `tasks` concurrent tasks each, all registered.
    pub fn start(executors: usize, tasks: usize) -> Cluster {
        Cluster::start_with(executors, tasks, &[])
    }

    /// [`Cluster::start`], with `env` in the scheduler's and executors' environment.
    pub fn start_with(executors: usize, tasks: usize, env: &[(String, String)]) -> Cluster {
        let mut cluster = Cluster {
            children: Vec::new(),
            scheduler: String::new(),
            logs: tempfile::tempdir().unwrap(),
            env: env.to_vec(),
        };
        let min = executors.to_string();
        let line =
            cluster.spawn("scheduler", &["cluster", "scheduler", "--port", "0", "--min-executors", &min]);
        cluster.scheduler = line
            .split_whitespace()
            .skip_while(|w| *w != "on")
            .nth(1)
            .unwrap_or_else(|| panic!("no address in the scheduler's ready line: {line}"))
            .to_string();
        let tasks = tasks.to_string();
        for i in 0..executors {
            let scheduler = cluster.scheduler.clone();
            let args = [
                "cluster",
                "executor",
                "--scheduler",
                &scheduler,
                "--port",
                "0",
                "--grpc-port",
                "0",
                "--concurrent-tasks",
                &tasks,
            ];
            cluster.spawn(&format!("executor-{i}"), &args);
        }
        cluster.wait_ready();
        cluster
    }

    /// `ballista://HOST:PORT` of the scheduler.
    pub fn url(&self) -> String {
        format!("ballista://{}", self.scheduler)
    }

    /// Starts `recite ARGS`, kept for the drop, and returns the first line it prints.
    fn spawn(&mut self, name: &str, args: &[&str]) -> String {
        let log = std::fs::File::create(self.logs.path().join(name)).unwrap();
        let mut c = command(args);
        c.envs(self.env.iter().map(|(k, v)| (k, v)));
        c.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(log);
        let mut child = c.spawn().expect("start recite cluster");
        let stdout = child.stdout.take().expect("stdout");
        self.children.push((name.to_string(), child));
        // Read the ready line on a thread, then drain the rest, so the child never blocks.
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout);
            let mut first = String::new();
            let _ = lines.read_line(&mut first);
            let _ = tx.send(first);
            let _ = std::io::copy(&mut lines, &mut std::io::sink());
        });
        let line = rx.recv_timeout(READY).unwrap_or_else(|_| panic!("{name} not ready: {}", self.logs(name)));
        assert!(line.contains("listening on"), "{name}: {line} {}", self.logs(name));
        line
    }

    /// Polls the scheduler's `/readyz` until its executors are registered.
    fn wait_ready(&mut self) {
        let started = Instant::now();
        loop {
            if let Some(answer) = http_get(&self.scheduler, "/readyz")
                && answer.starts_with("HTTP/1.1 200")
            {
                return;
            }
            let logs = self.logs.path().to_path_buf();
            for (name, child) in &mut self.children {
                if let Ok(Some(status)) = child.try_wait() {
                    panic!("{name} exited ({status}) before the cluster was ready: {}", log_of(&logs, name));
                }
            }
            assert!(started.elapsed() < READY, "the executors did not register: {}", self.logs("scheduler"));
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Kills the child `name` (an executor, say) and waits for it.
    fn kill(&mut self, name: &str) {
        let (_, child) = self.children.iter_mut().find(|(n, _)| n == name).expect("a child of that name");
        child.kill().unwrap();
        child.wait().unwrap();
    }

    /// What a child wrote on stderr.
    fn logs(&self, name: &str) -> String {
        log_of(self.logs.path(), name)
    }
}

/// What the child `name` wrote on stderr, in the logs folder `dir`.
fn log_of(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_default()
}

/// The response to `GET PATH` on `addr`, or None when nothing answers yet.
fn http_get(addr: &str, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").ok()?;
    let mut answer = String::new();
    s.read_to_string(&mut answer).ok()?;
    Some(answer)
}

/// A data layer of the bundled Versant and NHANES II studies, and the SPSS test file as a
/// third study (a table only this process reads).
fn data_layer(dir: &Path) -> PathBuf {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    for study in ["versant", "nhanes2"] {
        std::os::unix::fs::symlink(root().join("datasets").join(study), data.join(study)).unwrap();
    }
    let spss = data.join("spss");
    let sav = root().join("tests/sav/labelled-bytecode.sav");
    let made = recite(&["catalog", "init", sav.to_str().unwrap(), "--out", spss.to_str().unwrap()]);
    assert_eq!(code(&made), 0, "{}", stderr(&made));
    data
}

#[test]
fn check_on_a_ballista_cluster_equals_the_local_report() {
    let dir = tempfile::tempdir().unwrap();
    let data = data_layer(dir.path());
    let data = data.to_str().unwrap();
    let inputs = ["examples/transcripts/", "examples/citations/", "examples/spss/"];
    let args = |engine: &str| -> Vec<String> {
        let mut a: Vec<String> = vec!["check".into()];
        a.extend(inputs.iter().map(|s| s.to_string()));
        a.extend(["--format", "json", "--data", data, "--engine", engine].map(String::from));
        a
    };
    let run = |engine: &str| {
        let a = args(engine);
        recite(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let local = run("local");
    let cluster = Cluster::start(2, 2);
    let remote = run(&cluster.url());
    assert_eq!(code(&remote), code(&local), "{}", stderr(&remote));
    // The report is the same wherever the scans ran, byte for byte.
    assert_eq!(stdout(&remote), stdout(&local));
    assert!(report(&remote)["inputs"].as_array().is_some_and(|i| !i.is_empty()));
    // Where each table's scan ran is told on standard error: Versant and NHANES on the
    // cluster, the SPSS table here, saying why.
    let told = stderr(&remote);
    let on_cluster = format!("scanned on the Ballista cluster {}", cluster.url());
    for table in ["versant_flat", "nhanes2"] {
        assert!(told.contains(&format!("table {table}: {on_cluster}")), "{table}: {told}");
    }
    assert!(told.contains("scanned in this process, not on the cluster: an SPSS table"), "{told}");
    assert!(!stderr(&local).contains("scanned"), "{}", stderr(&local));
    // RECITE_ENGINE says the same as --engine.
    let mut c = command(&["check", "examples/transcripts/", "--format", "json", "--data", data]);
    c.env("RECITE_ENGINE", cluster.url());
    let from_env = super::support::run(c, None);
    let by_flag = recite(&[
        "check",
        "examples/transcripts/",
        "--format",
        "json",
        "--data",
        data,
        "--engine",
        &cluster.url(),
    ]);
    assert_eq!(code(&from_env), code(&by_flag), "{}", stderr(&from_env));
    assert_eq!(from_env.stdout, by_flag.stdout);
}

#[test]
fn an_engine_nothing_answers_on_is_a_clear_error() {
    // A port just freed: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("ballista://127.0.0.1:{port}");
    let out = recite(&["check", "examples/transcripts/", "--engine", &url]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(err.contains(&format!("engine {url}: the Ballista scheduler cannot be reached")), "{err}");
}

/// Runs `recite ARGS` and waits for it, failing the test (rather than hanging it) when it is
/// still running after `limit`.
fn recite_within(args: &[&str], limit: Duration) -> std::process::Output {
    let mut c = command(args);
    c.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().expect("run recite");
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = r.read_to_end(&mut b);
            b
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout")));
    let err = drain(Box::new(child.stderr.take().expect("stderr")));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for recite") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let err = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
            panic!("recite {args:?} still waiting after {limit:?}: {err}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    std::process::Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}

#[test]
fn a_scheduler_that_accepts_and_never_answers_is_a_clear_error() {
    // In this process: accepts every connection and holds it, never reading or answering.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().flatten() {
            held.push(s);
        }
    });
    let url = format!("ballista://{addr}");
    let out = recite_within(&["check", "examples/transcripts/", "--engine", &url], Duration::from_secs(120));
    let err = stderr(&out);
    assert_eq!(code(&out), 2, "{err}");
    assert!(err.contains(&format!("engine {url}: the Ballista scheduler cannot be reached")), "{err}");
    assert!(err.contains("accepted no gRPC call in 10 s"), "{err}");
}

#[test]
fn a_scheduler_with_no_executor_makes_claims_unverifiable_naming_it() {
    let cluster = Cluster::start(0, 1);
    let out = recite_within(
        &[
            "check",
            "examples/citations/versant-w6-considered.json",
            "--format",
            "json",
            "--engine",
            &cluster.url(),
            "--engine-timeout",
            "5",
        ],
        Duration::from_secs(120),
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let r = report(&out);
    let claims: Vec<&serde_json::Value> =
        r["inputs"].as_array().unwrap().iter().flat_map(|i| i["claims"].as_array().unwrap()).collect();
    assert!(!claims.is_empty());
    let said = format!(
        "the Ballista scheduler {} did not finish the scan within 5 s (--engine-timeout)",
        cluster.url()
    );
    for c in claims {
        assert_eq!(c["verdict"], "UNVERIFIABLE", "{c:#}");
        let reasons = c["reasons"].to_string();
        assert!(reasons.contains(&said), "{c:#}");
        assert!(
            !reasons.contains("table \\\"versant_flat\\\""),
            "the cluster's fault, not the table's: {c:#}"
        );
    }
    // RECITE_ENGINE_TIMEOUT says the same.
    let mut c =
        command(&["check", "examples/citations/versant-w6-considered.json", "--engine", &cluster.url()]);
    c.env("RECITE_ENGINE_TIMEOUT", "3");
    let from_env = super::support::run(c, None);
    assert!(stderr(&from_env).contains("within 3 s") || stdout(&from_env).contains("within 3 s"));
}

#[test]
fn a_cluster_bind_beyond_loopback_needs_allow_remote() {
    let scheduler = ["cluster", "scheduler", "--bind", "0.0.0.0", "--port", "0"];
    let executor = ["cluster", "executor", "--bind", "10.0.0.5", "--port", "0", "--grpc-port", "0"];
    for args in [&scheduler[..], &executor[..]] {
        let out = recite_within(args, Duration::from_secs(60));
        let err = stderr(&out);
        assert_eq!(code(&out), 2, "{args:?}: {err}");
        assert!(err.contains("refusing to listen on") && err.contains("--allow-remote"), "{err}");
        assert!(err.contains("no authentication"), "{err}");
    }
}

#[test]
fn an_executor_lost_before_the_explanation_scan_is_reported_on_the_claims() {
    // Once, a cluster failing the second scan (a claim's explanations, after the first scan
    // finished) was never said: the claim came out with no explanation and no word of why,
    // after the whole --engine-timeout. The first scan is answered from the cache here, so the
    // explanation scan is the only one the cluster is asked for.
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let cache = cache.to_str().unwrap();
    let claim = "examples/citations/versant-w6-discrepant.json";
    let mut cluster = Cluster::start(1, 1);
    let url = cluster.url();
    let args = |extra: &[&'static str]| -> Vec<String> {
        let mut a: Vec<String> = ["check", claim, "--format", "json", "--cache", cache, "--engine", &url]
            .map(String::from)
            .to_vec();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let run = |a: Vec<String>| {
        recite_within(&a.iter().map(String::as_str).collect::<Vec<_>>(), Duration::from_secs(180))
    };
    let first = run(args(&["--no-explain"]));
    assert_eq!(code(&first), 1, "{}", stderr(&first));
    let c = &report(&first)["inputs"][0]["claims"][0];
    assert_eq!(c["verdict"], "DISCREPANT", "{c:#}");
    cluster.kill("executor-0");
    let second = run(args(&["--engine-timeout", "5"]));
    assert_eq!(code(&second), 1, "{}", stderr(&second));
    let c = &report(&second)["inputs"][0]["claims"][0];
    assert_eq!(c["verdict"], "DISCREPANT", "the verdict is the cache's: {c:#}");
    let notes = c["notes"].to_string();
    assert!(notes.contains("not every explanation was looked for"), "{c:#}");
    assert!(notes.contains(&format!("the Ballista scheduler {url}")), "{c:#}");
}
