//! PostgreSQL tables (feature `postgres`), on a real server: a throwaway cluster of Debian's
//! PostgreSQL (`tests/postgres/cluster.sh`: initdb in a temporary folder, as `nobody` when the
//! tests run as root, on a loopback port, password logins) holding the bundled Versant table and
//! the NHANES II extract, loaded by PostgreSQL's own `COPY` from CSV written by pyarrow
//! (`tests/postgres/load.py`, its Python from `tests/postgres/install.sh`). Without the server's
//! binaries, the writer or the feature these tests are skipped with a SKIPPED line, unless
//! `RECITE_REQUIRE_POSTGRES=1` (CI) makes that a failure.
//!
//! Checked: the README's W6 citation settles from PostgreSQL with the very report the Parquet
//! file gives (its data-version line aside, which says the server keeps no versions and gives its
//! snapshot); the golden reports of the bundled examples (Versant and NHANES II's published zinc
//! mean) hold over PostgreSQL; the R-checked statistics (statistics.rs's oracle matrix) come out
//! bit for bit as over the files, and agree with R's survey package; a wrong password, a server that is not there, a table that is not
//! on the server and a statement timeout are each a clear failure naming the table, with no
//! password in it, while the rest of the batch settles.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

use crate::support::{code, command, recite, report, root, run, stderr, stdout};

/// The README's W6 citation.
const W6: &str = "examples/citations/versant-w6-considered.json";
/// The password of the cluster's `recite` role.
const PASSWORD: &str = "recite-test-password";
/// The environment variable the Versant study's `[connections]` entry names.
const DSN_ENV: &str = "RECITE_TEST_PG_DSN";

/// A running throwaway cluster, stopped when the test process exits.
struct Cluster {
    dir: PathBuf,
    port: u16,
}

impl Cluster {
    /// A DSN for the `recite` role with `password`, and `extra` query parameters.
    fn dsn(&self, password: &str, extra: &str) -> String {
        format!("postgres://recite:{password}@127.0.0.1:{}/surveys?sslmode=disable{extra}", self.port)
    }

    /// Runs `sql` as the superuser in database `surveys`; its output.
    fn sql(&self, sql: &str) -> String {
        let out = Command::new(root().join("tests/postgres/cluster.sh"))
            .args(["sql", self.dir.to_str().unwrap(), &self.port.to_string(), sql])
            .output()
            .unwrap();
        assert!(out.status.success(), "cluster.sh sql {sql}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

/// A free loopback port.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Starts a cluster with the two tables loaded, or says why it cannot be (then `None`).
fn start() -> Result<Cluster, String> {
    if !cfg!(feature = "postgres") {
        return Err("this build has no `postgres` feature (cargo test --features postgres)".into());
    }
    let initdb = std::fs::read_dir("/usr/lib/postgresql")
        .ok()
        .into_iter()
        .flatten()
        .flatten()
        .any(|v| v.path().join("bin/initdb").is_file());
    if !initdb && std::env::var_os("PG_BIN").is_none() {
        return Err("PostgreSQL's server binaries are not installed (apt-get install postgresql)".into());
    }
    let install =
        Command::new(root().join("tests/postgres/install.sh")).output().map_err(|e| e.to_string())?;
    if !install.status.success() {
        return Err(format!(
            "tests/postgres/install.sh failed: {}",
            String::from_utf8_lossy(&install.stderr)
        ));
    }
    let python = String::from_utf8_lossy(&install.stdout).trim().to_string();
    let dir = tempfile::tempdir().unwrap().keep();
    let port = free_port();
    let out = Command::new(root().join("tests/postgres/cluster.sh"))
        .args(["start", dir.to_str().unwrap(), &port.to_string(), &python, &std::process::id().to_string()])
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "tests/postgres/cluster.sh start failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(Cluster { dir, port })
}

/// The cluster the tests share (they only read it), or `None` after a SKIPPED line when it
/// cannot run and `RECITE_REQUIRE_POSTGRES` is not set.
fn cluster(test: &str) -> Option<&'static Cluster> {
    static SHARED: OnceLock<Result<Cluster, String>> = OnceLock::new();
    match SHARED.get_or_init(start) {
        Ok(c) => Some(c),
        Err(why) => {
            let required =
                std::env::var_os("RECITE_REQUIRE_POSTGRES").is_some_and(|v| !v.is_empty() && v != "0");
            assert!(!required, "RECITE_REQUIRE_POSTGRES is set but {why}");
            crate::support::say_skipped(test, why);
            None
        }
    }
}

/// A data layer of the bundled studies with their tables on the server: Versant through a
/// `[connections]` entry naming [`DSN_ENV`], NHANES II by an inline URL (its password from
/// `PGPASSWORD`), and the SPSS study of the golden reports as it is.
fn layer(cluster: &Cluster, dir: &Path) -> PathBuf {
    let data = dir.join("data");
    let versant = std::fs::read_to_string(root().join("datasets/versant/study.toml")).unwrap();
    let versant = versant
        .replacen(
            "[thresholds]",
            &format!("[connections.surveys]\ndsn_env = \"{DSN_ENV}\"\n\n[thresholds]"),
            1,
        )
        .replacen("path = \"versant_flat.parquet\"", "connection = \"surveys\"\npath = \"versant_flat\"", 1);
    let nhanes = std::fs::read_to_string(root().join("datasets/nhanes2/study.toml")).unwrap();
    let url =
        format!("postgres://recite@127.0.0.1:{}/surveys?table=public.nhanes2&sslmode=disable", cluster.port);
    let nhanes = nhanes.replacen("path = \"nhanes2.csv\"", &format!("path = \"{url}\""), 1);
    for (study, toml) in [("versant", versant), ("nhanes2", nhanes)] {
        std::fs::create_dir_all(data.join(study)).unwrap();
        std::fs::write(data.join(study).join("study.toml"), toml).unwrap();
    }
    let spss = data.join("spss");
    let made =
        recite(&["catalog", "init", "tests/sav/labelled-bytecode.sav", "--out", spss.to_str().unwrap()]);
    assert_eq!(code(&made), 0, "catalog init: {}", stderr(&made));
    data
}

/// `recite ARGS` with the cluster's DSN in [`DSN_ENV`] (password `password`) and `PGPASSWORD`.
fn recite_on(cluster: &Cluster, password: &str, extra: &str, args: &[&str]) -> Output {
    let mut c = command(args);
    c.env(DSN_ENV, cluster.dsn(password, extra)).env("PGPASSWORD", password);
    run(c, None)
}

/// `value` with every `data_version` and `files` taken out (what differs between the two data
/// layers: the server's snapshot, the files' digests).
fn without_versions(value: &Value) -> Value {
    match value {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| *k != "data_version" && *k != "files")
                .map(|(k, v)| (k.clone(), without_versions(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_versions).collect()),
        v => v.clone(),
    }
}

#[test]
fn the_w6_claim_settles_from_postgres_as_from_parquet() {
    let Some(cluster) = cluster("postgres::the_w6_claim_settles_from_postgres_as_from_parquet") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let data = layer(cluster, tmp.path());
    let data = data.to_str().unwrap();
    let out = recite_on(cluster, PASSWORD, "", &["verify", W6, "--format", "json", "--data", data]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let claim = report(&out)["inputs"][0]["claims"][0].clone();
    let parquet = recite(&["verify", W6, "--format", "json", "--data", "datasets"]);
    let parquet = report(&parquet)["inputs"][0]["claims"][0].clone();
    assert_eq!(parquet["verdict"], "REPRODUCED");
    assert_eq!(
        without_versions(&claim),
        without_versions(&parquet),
        "the PostgreSQL table settles as the Parquet file"
    );
    assert!(parquet["rerun"]["files"].is_array() && claim["rerun"].get("files").is_none(), "{claim:#}");
    let version = &claim["rerun"]["data_version"];
    assert_eq!(version["format"], "postgres", "{version:#}");
    assert_eq!(version["chosen"], "latest");
    // The server's snapshot, xmin:xmax:in-progress, and its xmax as the version.
    let snapshot = version["snapshot"].as_str().unwrap();
    let xmax: u64 = snapshot.split(':').nth(1).unwrap().parse().unwrap();
    assert_eq!(version["version"], xmax, "{version:#}");
    let text = recite_on(cluster, PASSWORD, "", &["verify", W6, "--data", data]);
    assert!(
        stdout(&text).contains("PostgreSQL, unversioned: a re-run may differ (server snapshot"),
        "{}",
        stdout(&text)
    );
    assert!(!stdout(&text).contains(PASSWORD) && !stderr(&text).contains(PASSWORD));
    // Pushed down: the server was asked for the period's rows and the columns read, never the
    // whole table (its log, every statement of every test's session).
    let log = std::fs::read_to_string(cluster.dir.join("server.log")).unwrap();
    let reads: Vec<&str> = log.lines().filter(|l| l.contains("FROM \"versant_flat\"")).collect();
    assert!(
        reads.iter().any(|l| l.contains("\"versant_flat\".\"s14r5\"")
            && l.ends_with("WHERE (\"versant_flat\".\"wave\" = 6)")),
        "no pushed-down scan of W6 in the server's log: {reads:#?}"
    );
    assert!(!reads.iter().any(|l| l.contains("SELECT *")), "a whole-table read: {reads:#?}");
}

#[test]
fn the_golden_reports_hold_over_postgres() {
    let Some(cluster) = cluster("postgres::the_golden_reports_hold_over_postgres") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let data = layer(cluster, tmp.path());
    // The examples that read the Versant and NHANES II tables (NHANES II's zinc mean is
    // samplics' published figure), and the answer audit's fixtures over Versant.
    for (case, input) in
        [("examples-citations", "examples/citations/"), ("fixtures-answers", "tests/fixtures/answers/")]
    {
        let golden = std::fs::read_to_string(root().join(format!("tests/golden/{case}.json"))).unwrap();
        let args = ["check", input, "--format", "json", "--color", "never", "--allow-empty", "--data"];
        let mut args = args.to_vec();
        args.push(data.to_str().unwrap());
        let out = recite_on(cluster, PASSWORD, "", &args);
        let canonical = tmp.path().canonicalize().unwrap();
        let text = String::from_utf8(out.stdout.clone())
            .unwrap()
            .replace(&canonical.display().to_string(), "$TMP")
            .replace(&tmp.path().display().to_string(), "$TMP")
            .replace(&root().display().to_string(), "$ROOT");
        let mut got: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{case}: {e}: {}", stderr(&out)));
        let mut want: Value = serde_json::from_str(&golden).unwrap();
        // Scan plans are listed by table location, which differs (a server's, a file's).
        for report in [&mut got, &mut want] {
            if let Some(plans) = report["stats"]["plans"].as_array_mut() {
                plans.sort_by_key(|p| p["table"].to_string());
            }
        }
        assert_eq!(without_versions(&got), without_versions(&want), "{case} over PostgreSQL");
        assert!(text.contains("\"format\": \"postgres\""), "{case}: no PostgreSQL data version");
    }
}

#[test]
fn the_r_checked_statistics_hold_over_postgres() {
    let test = "postgres::the_r_checked_statistics_hold_over_postgres";
    let Some(cluster) = cluster(test) else { return };
    if !crate::statistics::r_with_survey(test) {
        return;
    }
    // The oracle's matrix (statistics.rs) with NHANES II and Versant read from the server, in a
    // process of its own that is given the DSN in its environment.
    let child = "statistics::r_survey_package_agrees_over_postgres_server";
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", child, "--nocapture", "--test-threads", "1"])
        .env(DSN_ENV, cluster.dsn(PASSWORD, ""))
        .output()
        .unwrap();
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{child}:\n{all}");
    assert!(all.contains("1 passed"), "{child} did not run:\n{all}");
    assert!(all.contains("equal to the files' bit for bit") && all.contains("measures agree"), "{all}");
    assert!(!all.contains(PASSWORD), "a password is printed: {all}");
}

/// A data layer at `data`: the Versant study read from `table` on the server (through the
/// `[connections]` entry `surveys`, its DSN from $DSN_ENV), the NHANES II files as bundled.
fn server_layer(data: &Path, table: &str) {
    let versant = std::fs::read_to_string(root().join("datasets/versant/study.toml")).unwrap();
    let versant = versant
        .replacen(
            "[thresholds]",
            &format!("[connections.surveys]\ndsn_env = \"{DSN_ENV}\"\n\n[thresholds]"),
            1,
        )
        .replacen(
            "path = \"versant_flat.parquet\"",
            &format!("connection = \"surveys\"\npath = \"{table}\""),
            1,
        );
    std::fs::create_dir_all(data.join("versant")).unwrap();
    std::fs::write(data.join("versant/study.toml"), versant).unwrap();
    std::os::unix::fs::symlink(root().join("datasets/nhanes2"), data.join("nhanes2")).unwrap();
}

/// A batch of two claims, one on the Versant table on the server (through `[connections]`),
/// one on the NHANES II CSV file: `recite check` over both, with the connection as `dsn` says.
fn mixed_batch(dir: &Path, dsn: &str, table: &str) -> (i32, Value, String) {
    let data = dir.join("data");
    server_layer(&data, table);
    let mut c = command(&[
        "check",
        W6,
        "examples/citations/nhanes2-zinc.json",
        "--format",
        "json",
        "--data",
        data.to_str().unwrap(),
    ]);
    c.env(DSN_ENV, dsn);
    let out = run(c, None);
    let all = format!("{}{}", stdout(&out), stderr(&out));
    (code(&out), report(&out), all)
}

/// The verdict and reasons of the claim of input `i`.
fn claim(report: &Value, i: usize) -> &Value {
    &report["inputs"][i]["claims"][0]
}

/// Checks a failed PostgreSQL claim: UNVERIFIABLE, saying `why` and naming the table, with no
/// password anywhere; and the NHANES II claim beside it REPRODUCED.
fn fails_alone(report: &Value, all: &str, why: &str) {
    let pg = claim(report, 0);
    assert_eq!(pg["verdict"], "UNVERIFIABLE", "{pg:#}");
    let words = pg.to_string();
    assert!(words.contains(why), "{why:?} not in {words}");
    assert!(words.contains("versant_flat"), "the table is not named: {words}");
    assert!(!all.contains(PASSWORD) && !all.contains("not-the-password"), "a password is printed: {all}");
    assert_eq!(claim(report, 1)["verdict"], "REPRODUCED", "the rest of the batch: {:#}", claim(report, 1));
}

#[test]
fn a_wrong_password_is_unverifiable_and_the_batch_goes_on() {
    let Some(cluster) = cluster("postgres::a_wrong_password_is_unverifiable_and_the_batch_goes_on") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (_, report, all) = mixed_batch(tmp.path(), &cluster.dsn("not-the-password", ""), "versant_flat");
    fails_alone(&report, &all, "uthentication failed");
}

#[test]
fn a_server_that_is_not_there_is_unverifiable_and_the_batch_goes_on() {
    let Some(_cluster) =
        cluster("postgres::a_server_that_is_not_there_is_unverifiable_and_the_batch_goes_on")
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dsn = format!("postgres://recite:{PASSWORD}@127.0.0.1:{}/surveys?sslmode=disable", free_port());
    let (_, report, all) = mixed_batch(tmp.path(), &dsn, "versant_flat");
    fails_alone(&report, &all, "Cannot connect to PostgreSQL");
}

#[test]
fn a_table_not_on_the_server_is_unverifiable_and_the_batch_goes_on() {
    let Some(cluster) = cluster("postgres::a_table_not_on_the_server_is_unverifiable_and_the_batch_goes_on")
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (_, report, all) = mixed_batch(tmp.path(), &cluster.dsn(PASSWORD, ""), "versant_flat_dropped");
    fails_alone(&report, &all, "has no table versant_flat_dropped");
}

#[test]
fn a_statement_timeout_is_unverifiable_and_the_batch_goes_on() {
    let Some(cluster) = cluster("postgres::a_statement_timeout_is_unverifiable_and_the_batch_goes_on") else {
        return;
    };
    // A view as the table, each row a millisecond's sleep: its scan outlasts the timeout.
    cluster.sql(
        "CREATE OR REPLACE VIEW versant_flat_slow AS SELECT v.* FROM versant_flat v \
         WHERE pg_sleep(0.001 * (v.wave IS NOT NULL)::int)::text = ''; \
         GRANT SELECT ON versant_flat_slow TO recite",
    );
    let tmp = tempfile::tempdir().unwrap();
    let dsn = cluster.dsn(PASSWORD, "&options=-c%20statement_timeout%3D300");
    let (_, report, all) = mixed_batch(tmp.path(), &dsn, "versant_flat_slow");
    fails_alone(&report, &all, "statement timeout");
}

#[test]
fn a_password_in_study_toml_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let study = tmp.path().join("data/versant");
    std::fs::create_dir_all(&study).unwrap();
    let toml = std::fs::read_to_string(root().join("datasets/versant/study.toml")).unwrap();
    let toml = toml.replacen(
        "path = \"versant_flat.parquet\"",
        "path = \"postgres://recite:hunter22@127.0.0.1/surveys?table=versant_flat\"",
        1,
    );
    std::fs::write(study.join("study.toml"), toml).unwrap();
    let out = recite(&["verify", W6, "--data", tmp.path().join("data").to_str().unwrap()]);
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert_ne!(code(&out), 0);
    assert!(all.contains("holds a password, which study.toml must never hold"), "{all}");
    assert!(!all.contains("hunter22"), "{all}");
}

#[test]
fn catalog_init_and_check_read_a_postgres_table_as_the_parquet_file() {
    let Some(cluster) = cluster("postgres::catalog_init_and_check_read_a_postgres_table_as_the_parquet_file")
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let url = format!(
        "postgres://recite@127.0.0.1:{}/surveys?table=public.versant_flat&sslmode=disable",
        cluster.port
    );
    let (pg, parquet) = (tmp.path().join("pg"), tmp.path().join("parquet"));
    let out = recite_on(cluster, PASSWORD, "", &["catalog", "init", &url, "--out", pg.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let file = "datasets/versant/versant_flat.parquet";
    let out = recite(&["catalog", "init", file, "--out", parquet.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The same catalog (columns, codes, the wave guessed), where each says what it read.
    let read = |dir: &Path| std::fs::read_to_string(dir.join("study.toml")).unwrap();
    let (pg_toml, parquet_toml) = (read(&pg), read(&parquet));
    // Each table's `path` is where init read it: the URL, or the file as seen from OUT
    // (relative when the two share a folder, as a checkout and the temporary folder under /tmp
    // do in CI; absolute otherwise). Every other line must be the same.
    let located = |text: &str, location: &str, dir: &Path| {
        let text = text.replace(location, "LOCATION").replace(&dir.display().to_string(), "OUT");
        let lines = text.lines().map(|l| if l.starts_with("path = ") { "path = \"LOCATION\"" } else { l });
        lines.collect::<Vec<_>>().join("\n")
    };
    assert!(pg_toml.contains(&format!("path = {url:?}")), "{pg_toml}");
    assert!(parquet_toml.contains("versant_flat.parquet\""), "{parquet_toml}");
    assert_eq!(located(&pg_toml, &url, &pg), located(&parquet_toml, file, &parquet));
    let out = recite_on(cluster, PASSWORD, "", &["catalog", "check", "--data", pg.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "catalog check over PostgreSQL: {}{}", stdout(&out), stderr(&out));
}

#[test]
fn a_server_stopped_mid_batch_fails_its_claims_and_the_batch_goes_on() {
    // Its own cluster: the shared one must stay up for the other tests.
    if cluster("postgres::a_server_stopped_mid_batch_fails_its_claims_and_the_batch_goes_on").is_none() {
        return;
    }
    let own = start().expect("a second cluster");
    // A view as the table, each row a short sleep: its scan streams for seconds, long enough
    // to stop the server while it does.
    own.sql(
        "CREATE OR REPLACE VIEW versant_flat_slow AS SELECT v.* FROM versant_flat v \
         WHERE pg_sleep(0.0005 * (v.wave IS NOT NULL)::int)::text = ''; \
         GRANT SELECT ON versant_flat_slow TO recite",
    );
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    server_layer(&data, "versant_flat_slow");
    // Three inputs settled one at a time (`--chunk 1`): a claim on the server, whose scan the
    // stop cuts; a claim on the NHANES II file; a claim on the server after it stopped.
    let inputs = tmp.path().join("inputs");
    std::fs::create_dir_all(&inputs).unwrap();
    for (name, from) in
        [("a-pg.json", W6), ("b-file.json", "examples/citations/nhanes2-zinc.json"), ("c-pg.json", W6)]
    {
        std::fs::copy(root().join(from), inputs.join(name)).unwrap();
    }
    // The stop, once the server's log shows the scan of the slow view started.
    let (dir, log) = (own.dir.clone(), own.dir.join("server.log"));
    let stopper = std::thread::spawn(move || {
        let t0 = std::time::Instant::now();
        while t0.elapsed() < std::time::Duration::from_secs(120) {
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            if log.lines().any(|l| l.contains("FROM \"versant_flat_slow\"") && l.contains("WHERE")) {
                std::thread::sleep(std::time::Duration::from_millis(500));
                let stop = Command::new(root().join("tests/postgres/cluster.sh"))
                    .args(["stop", dir.to_str().unwrap()])
                    .output()
                    .unwrap();
                return (stop.status.success(), t0.elapsed());
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        (false, t0.elapsed())
    });
    let t0 = std::time::Instant::now();
    let mut c = command(&[
        "check",
        inputs.to_str().unwrap(),
        "--chunk",
        "1",
        "--format",
        "json",
        "--data",
        data.to_str().unwrap(),
    ]);
    c.env(DSN_ENV, own.dsn(PASSWORD, ""));
    let out = run(c, None);
    let took = t0.elapsed();
    let (stopped, at) = stopper.join().unwrap();
    assert!(stopped, "the server was not stopped mid-scan ({at:?}): {}", stderr(&out));
    let (report, all) = (report(&out), format!("{}{}", stdout(&out), stderr(&out)));
    let reasons = |i: usize| claim(&report, i)["reasons"].to_string();
    // Cut mid-scan: UNVERIFIABLE, naming the table, saying the connection ended.
    assert_eq!(claim(&report, 0)["verdict"], "UNVERIFIABLE", "{:#}", claim(&report, 0));
    assert!(reasons(0).contains("versant_flat_slow"), "{}", reasons(0));
    // The file's claim after it settles.
    assert_eq!(claim(&report, 1)["verdict"], "REPRODUCED", "{:#}", claim(&report, 1));
    // The server's claim after the stop: UNVERIFIABLE, the server not there.
    assert_eq!(claim(&report, 2)["verdict"], "UNVERIFIABLE", "{:#}", claim(&report, 2));
    assert!(reasons(2).contains("versant_flat_slow"), "{}", reasons(2));
    // Said plainly: the server is gone, not a pool to enlarge (the provider's advice).
    for i in [0, 2] {
        assert!(!reasons(i).contains("Adjust the connection pool"), "{}", reasons(i));
        assert!(reasons(i).contains("PostgreSQL"), "{}", reasons(i));
    }
    assert!(!all.contains(PASSWORD), "a password is printed: {all}");
    eprintln!(
        "stopped {at:?} after the start, the batch took {took:?}; reasons: {} | {}",
        reasons(0),
        reasons(2)
    );
}
