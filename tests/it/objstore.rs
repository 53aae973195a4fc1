//! Tables on object storage (feature `object-store`, docs/catalog.md): the Versant batch read
//! from a local S3-compatible server (moto, on a loopback port this test starts and stops)
//! settles byte for byte as from the local file, a missing bucket or object is UNVERIFIABLE
//! naming the URL, and without the feature a URL location says which build reads it.
//!
//! moto comes from `tests/objstore/install.sh` (a cached virtualenv); without it the S3 tests
//! are skipped with a message, unless `RECITE_REQUIRE_MOTO=1` (CI) makes that a failure.

use std::path::{Path, PathBuf};

use crate::support::{command, run, stderr};

/// A catalog folder holding the Versant study with its table at `versant_path`, and NHANES II
/// reading the bundled CSV: the same `--data` for every run, so reports compare byte for byte.
fn data_layer(dir: &Path, versant_path: &str) -> PathBuf {
    let root = crate::support::root();
    let data = dir.join("data");
    for (study, path) in [
        ("versant", versant_path.to_string()),
        ("nhanes2", root.join("datasets/nhanes2/nhanes2.csv").display().to_string()),
    ] {
        let text = std::fs::read_to_string(root.join("datasets").join(study).join("study.toml")).unwrap();
        let mut replaced = 0;
        let text: String = text
            .lines()
            .map(|l| {
                if l.starts_with("path = ") {
                    replaced += 1;
                    format!("path = {path:?}\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        assert_eq!(replaced, 1, "{study}/study.toml has one table path");
        std::fs::create_dir_all(data.join(study)).unwrap();
        std::fs::write(data.join(study).join("study.toml"), text).unwrap();
    }
    data
}

#[cfg(not(feature = "object-store"))]
#[test]
fn url_locations_name_the_feature_that_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let data = data_layer(dir.path(), "s3://recite-test/versant/versant_flat.parquet");
    let data = data.to_str().unwrap();
    let mut c = command(&["verify", "examples/citations/versant-w6-considered.json", "--format", "json"]);
    c.args(["--data", data]);
    let out = run(c, None);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.contains("UNVERIFIABLE"), "{text}{}", stderr(&out));
    for needle in ["s3://recite-test/versant/versant_flat.parquet", "versant_flat", "--features object-store"]
    {
        assert!(text.contains(needle), "the reason names {needle:?}: {text}");
    }
}

/// The second hostile pass: `catalog init` wrote a URL's password and signature into the
/// starter study.toml, a file meant to be committed. It refuses, before any request, and its
/// message shows the URL redacted.
#[test]
fn catalog_init_refuses_a_url_holding_a_secret_and_never_prints_it() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("starter");
    for url in [
        "http://alice:HUNTER2PW@127.0.0.1:9/versant_flat.parquet",
        "https://127.0.0.1:9/versant_flat.parquet?X-Amz-Signature=SIGSECRET",
        "http://127.0.0.1:9/versant_flat.parquet#access_token=FRAGSECRET",
        "http://127.0.0.1:9/versant_flat.parquet;jsessionid=MATRIXSECRET",
    ] {
        let out = run(command(&["catalog", "init", url, "--output", out_dir.to_str().unwrap()]), None);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{url}: {err}");
        assert!(err.contains("REDACTED") && err.contains("will not write"), "{url}: {err}");
        for secret in ["HUNTER2PW", "SIGSECRET", "FRAGSECRET", "MATRIXSECRET"] {
            assert!(!err.contains(secret), "{secret} printed: {err}");
        }
        assert!(!out_dir.join("study.toml").exists(), "{url}: a starter was written");
    }
}

#[cfg(feature = "object-store")]
mod with_store {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::path::PathBuf;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    use serde_json::Value;

    use super::*;
    use crate::support::code;

    const BUCKET: &str = "recite-test";
    const KEY: &str = "versant/versant_flat.parquet";

    /// A moto S3 server on a loopback port, stopped (killed and reaped) when dropped, so on
    /// every path out of a test, panics included.
    struct Moto {
        child: Child,
        /// Its port on 127.0.0.1.
        port: u16,
    }

    impl Drop for Moto {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// Where `tests/objstore/install.sh` puts `moto_server`.
    fn moto_server() -> PathBuf {
        if let Some(p) = std::env::var_os("RECITE_MOTO_SERVER").filter(|p| !p.is_empty()) {
            return PathBuf::from(p);
        }
        let venv = std::env::var_os("RECITE_MOTO_VENV").filter(|p| !p.is_empty()).map(PathBuf::from);
        let cache = || {
            std::env::var_os("XDG_CACHE_HOME")
                .filter(|p| !p.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache"))
        };
        venv.unwrap_or_else(|| cache().join("recite-moto")).join("bin/moto_server")
    }

    /// Starts moto, or says why not: `None` (after a SKIPPED line) when it is not installed and
    /// `RECITE_REQUIRE_MOTO` is not set.
    fn start_moto(test: &str) -> Option<Moto> {
        let server = moto_server();
        if !server.is_file() {
            let why = format!("{} is not installed (run tests/objstore/install.sh)", server.display());
            let required = std::env::var_os("RECITE_REQUIRE_MOTO").is_some_and(|v| !v.is_empty() && v != "0");
            assert!(!required, "RECITE_REQUIRE_MOTO is set but {why}");
            crate::support::say_skipped(test, &why);
            return None;
        }
        // An ephemeral port: the kernel picks a free one, moto binds it right after.
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(&server)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", server.display()));
        let moto = Moto { child, port };
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(start.elapsed() < Duration::from_secs(60), "moto did not listen on port {port} in 60 s");
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(moto)
    }

    /// One plain HTTP/1.1 request to moto (which takes unsigned requests): the status code.
    fn http(port: u16, method: &str, path: &str, body: &[u8]) -> u16 {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(body).unwrap();
        let mut reply = Vec::new();
        s.read_to_end(&mut reply).unwrap();
        let text = String::from_utf8_lossy(&reply);
        text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("not HTTP: {text}"))
    }

    /// A bucket holding the Versant Parquet at [`KEY`].
    fn upload_versant(moto: &Moto) {
        assert_eq!(http(moto.port, "PUT", &format!("/{BUCKET}"), b""), 200, "create the bucket");
        let parquet =
            std::fs::read(crate::support::root().join("datasets/versant/versant_flat.parquet")).unwrap();
        assert_eq!(http(moto.port, "PUT", &format!("/{BUCKET}/{KEY}"), &parquet), 200, "upload");
    }

    /// Moto's endpoint and dummy credentials, as environment variables.
    fn s3_env(moto: &Moto) -> Vec<(String, String)> {
        [
            ("AWS_ENDPOINT", format!("http://127.0.0.1:{}", moto.port)),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_ACCESS_KEY_ID", "recite-test".into()),
            ("AWS_SECRET_ACCESS_KEY", "recite-test".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_EC2_METADATA_DISABLED", "true".into()),
        ]
        .map(|(k, v)| (k.to_string(), v))
        .to_vec()
    }

    /// `recite ARGS --data DATA` with moto's endpoint and dummy credentials in its environment
    /// (and none of the machine's own AWS settings).
    fn recite_s3(moto: &Moto, data: &Path, args: &[&str]) -> std::process::Output {
        let mut c = command(args);
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("AWS_") {
                c.env_remove(k);
            }
        }
        c.args(["--data", data.to_str().unwrap()]).envs(s3_env(moto));
        run(c, None)
    }

    /// moto holding the Versant Parquet, and the batch's report with the table on disk; the
    /// catalog (`DIR/data`) then names the object instead. `None` when moto is not installed.
    fn versant_on_disk_then_s3(test: &str) -> Option<(Moto, tempfile::TempDir, std::process::Output)> {
        let moto = start_moto(test)?;
        upload_versant(&moto);
        let dir = tempfile::tempdir().unwrap();
        let local = crate::support::root().join("datasets/versant/versant_flat.parquet");
        let data = data_layer(dir.path(), local.to_str().unwrap());
        let on_disk = recite_s3(&moto, &data, &BATCH);
        assert_eq!(data_layer(dir.path(), &format!("s3://{BUCKET}/{KEY}")), data);
        Some((moto, dir, on_disk))
    }

    /// The catalog on S3 and the scans on a Ballista cluster: the scheduler lists the object and
    /// the executors read it, each building the store from its own environment.
    #[cfg(feature = "ballista")]
    #[test]
    fn a_table_on_s3_settles_on_a_ballista_cluster_byte_for_byte_as_the_local_file() {
        let Some((moto, dir, on_disk)) = versant_on_disk_then_s3(
            "a_table_on_s3_settles_on_a_ballista_cluster_byte_for_byte_as_the_local_file",
        ) else {
            return;
        };
        let data = dir.path().join("data");
        let cluster = crate::cluster::Cluster::start_with(2, 1, &s3_env(&moto));
        let mut args = BATCH.to_vec();
        let url = cluster.url();
        args.extend(["--engine", url.as_str()]);
        let on_cluster = recite_s3(&moto, &data, &args);
        assert_eq!(code(&on_disk), code(&on_cluster), "{}", stderr(&on_cluster));
        assert!(
            stderr(&on_cluster)
                .contains(&format!("table versant_flat: scanned on the Ballista cluster {url}")),
            "{}",
            stderr(&on_cluster)
        );
        assert!(
            same_but_files(&on_disk.stdout, &on_cluster.stdout),
            "the report from s3 on the cluster differs:\n{}\n---\n{}",
            String::from_utf8_lossy(&on_disk.stdout),
            String::from_utf8_lossy(&on_cluster.stdout)
        );
    }

    const BATCH: [&str; 5] = ["check", "examples/transcripts/", "examples/citations/", "--format", "json"];

    /// Whether two JSON reports are the same but for the files the local file's claims name
    /// (`rerun.files`; a table on object storage names none), and the local one names more (the
    /// NHANES II claims read a local file in both).
    fn same_but_files(local: &[u8], remote: &[u8]) -> bool {
        let strip = |bytes: &[u8]| -> (Value, usize) {
            let mut r: Value = serde_json::from_slice(bytes).expect("a JSON report");
            let mut named = 0;
            for input in r["inputs"].as_array_mut().into_iter().flatten() {
                for c in input["claims"].as_array_mut().into_iter().flatten() {
                    if let Some(rerun) = c["rerun"].as_object_mut() {
                        named += usize::from(rerun.remove("files").is_some());
                    }
                }
            }
            (r, named)
        };
        let ((l, named), (r, fewer)) = (strip(local), strip(remote));
        named > fewer && l == r
    }

    #[test]
    fn a_table_on_s3_settles_the_versant_batch_byte_for_byte_as_the_local_file() {
        let Some((moto, dir, on_disk)) = versant_on_disk_then_s3(
            "a_table_on_s3_settles_the_versant_batch_byte_for_byte_as_the_local_file",
        ) else {
            return;
        };
        let data = dir.path().join("data");
        let url = format!("s3://{BUCKET}/{KEY}");
        let on_s3 = recite_s3(&moto, &data, &BATCH);
        assert_eq!(code(&on_disk), code(&on_s3), "{}", stderr(&on_s3));
        let report: Value = serde_json::from_slice(&on_disk.stdout).expect("a JSON report");
        assert!(report["summary"]["verdicts"]["REPRODUCED"].as_u64() > Some(0), "{report}");
        assert!(!String::from_utf8_lossy(&on_disk.stdout).contains("cannot be read"), "{report}");
        assert!(
            same_but_files(&on_disk.stdout, &on_s3.stdout),
            "the report from s3 differs:\n{}\n---\n{}",
            String::from_utf8_lossy(&on_disk.stdout),
            String::from_utf8_lossy(&on_s3.stdout)
        );

        // The cache identifies the object by size, ETag and last-modified time: a warm run
        // answers from it, and its claims are the same.
        let cache = dir.path().join("cache");
        let mut cached = BATCH.to_vec();
        cached.extend(["--cache", cache.to_str().unwrap()]);
        let cold = recite_s3(&moto, &data, &cached);
        let warm = recite_s3(&moto, &data, &cached);
        let claims = |o: &std::process::Output| -> Value {
            let r: Value = serde_json::from_slice(&o.stdout).unwrap();
            r["inputs"].clone()
        };
        assert_eq!(claims(&cold), claims(&on_s3));
        assert_eq!(claims(&warm), claims(&on_s3));
        let warm_report: Value = serde_json::from_slice(&warm.stdout).unwrap();
        let plans = warm_report["stats"]["plans"].as_array().unwrap();
        assert!(
            plans.iter().any(|p| p["table"] == "versant_flat" && p["plan"] == "cache"),
            "the warm run answers the s3 table from the cache: {plans:?}"
        );

        // `catalog check` proves the catalog against the object.
        let check = recite_s3(&moto, &data, &["catalog", "check"]);
        assert_eq!(code(&check), 0, "{}{}", String::from_utf8_lossy(&check.stdout), stderr(&check));

        // `catalog init` profiles the object and writes its URL as the table's path.
        let out = dir.path().join("init");
        let mut c = command(&["catalog", "init", &url, "--out", out.to_str().unwrap()]);
        c.env("AWS_ENDPOINT", format!("http://127.0.0.1:{}", moto.port))
            .env("AWS_ALLOW_HTTP", "true")
            .env("AWS_ACCESS_KEY_ID", "recite-test")
            .env("AWS_SECRET_ACCESS_KEY", "recite-test")
            .env("AWS_REGION", "us-east-1");
        let init = run(c, None);
        assert_eq!(code(&init), 0, "{}", stderr(&init));
        let written = std::fs::read_to_string(out.join("study.toml")).unwrap();
        assert!(written.contains(&format!("path = {url:?}")), "{written}");
        assert!(written.contains("[tables.columns.s14r1]"), "{written}");
    }

    #[test]
    fn a_missing_bucket_or_object_is_unverifiable_naming_table_and_url() {
        let Some(moto) = start_moto("a_missing_bucket_or_object_is_unverifiable_naming_table_and_url") else {
            return;
        };
        upload_versant(&moto);
        let dir = tempfile::tempdir().unwrap();
        for url in [format!("s3://no-such-bucket/{KEY}"), format!("s3://{BUCKET}/versant/no-such.parquet")] {
            let data = data_layer(dir.path(), &url);
            let out = recite_s3(
                &moto,
                &data,
                &["verify", "examples/citations/versant-w6-considered.json", "--format", "json"],
            );
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            assert_ne!(code(&out), 0, "{text}");
            let report: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
            let verdicts = &report["summary"]["verdicts"];
            assert_eq!(
                (verdicts["UNVERIFIABLE"].as_u64(), verdicts["REPRODUCED"].as_u64()),
                (Some(1), Some(0)),
                "{text}"
            );
            assert!(text.contains(&url) && text.contains("versant_flat"), "names the table and URL: {text}");
            let check = recite_s3(&moto, &data, &["catalog", "check"]);
            let said = format!("{}{}", String::from_utf8_lossy(&check.stdout), stderr(&check));
            assert_ne!(code(&check), 0, "{said}");
            assert!(said.contains(&url), "{said}");
        }
    }

    /// `tests/objstore/http_server.py` serving a folder on a loopback port (ranges, ETags,
    /// HEAD), stopped (killed and reaped) when dropped.
    struct Web {
        child: Child,
        /// Its port on 127.0.0.1.
        port: u16,
    }

    impl Drop for Web {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// Starts the HTTP server over `folder`, or says why not (`None` after a SKIPPED line when
    /// python3 is missing).
    fn start_web(test: &str, folder: &Path) -> Option<Web> {
        use std::io::BufRead;
        let script = crate::support::root().join("tests/objstore/http_server.py");
        let spawned = Command::new("python3")
            .arg(&script)
            .arg(folder)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let Ok(mut child) = spawned else {
            crate::support::say_skipped(test, "python3 is not installed");
            return None;
        };
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("its stdout")).read_line(&mut line).unwrap();
        let port =
            line.trim().parse().unwrap_or_else(|_| panic!("the server printed {line:?}, not its port"));
        Some(Web { child, port })
    }

    /// `recite ARGS --data DATA`, with no AWS settings of the machine's.
    fn recite_web(data: &Path, args: &[&str]) -> std::process::Output {
        let mut c = command(args);
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("AWS_") {
                c.env_remove(k);
            }
        }
        c.args(["--data", data.to_str().unwrap()]);
        run(c, None)
    }

    #[test]
    fn a_table_over_plain_http_settles_the_versant_batch_byte_for_byte_as_the_local_file() {
        let test = "a_table_over_plain_http_settles_the_versant_batch_byte_for_byte_as_the_local_file";
        let dir = tempfile::tempdir().unwrap();
        let served = dir.path().join("served");
        std::fs::create_dir_all(&served).unwrap();
        let local = crate::support::root().join("datasets/versant/versant_flat.parquet");
        std::fs::copy(&local, served.join("versant_flat.parquet")).unwrap();
        let Some(web) = start_web(test, &served) else { return };
        let data = data_layer(dir.path(), local.to_str().unwrap());
        let on_disk = recite_web(&data, &BATCH);
        let url = format!("http://127.0.0.1:{}/versant_flat.parquet", web.port);
        assert_eq!(data_layer(dir.path(), &url), data);
        let on_http = recite_web(&data, &BATCH);
        assert_eq!(code(&on_disk), code(&on_http), "{}", stderr(&on_http));
        let report: Value = serde_json::from_slice(&on_http.stdout).expect("a JSON report");
        assert!(report["summary"]["verdicts"]["REPRODUCED"].as_u64() > Some(0), "{report}");
        assert!(
            same_but_files(&on_disk.stdout, &on_http.stdout),
            "the report over http differs:\n{}\n---\n{}",
            String::from_utf8_lossy(&on_disk.stdout),
            String::from_utf8_lossy(&on_http.stdout)
        );

        // The cache identifies the object by its ETag: a warm run answers from it; new bytes
        // under the same URL get a new ETag, and the claims are scanned again.
        let cache = dir.path().join("cache");
        let mut cached = BATCH.to_vec();
        cached.extend(["--cache", cache.to_str().unwrap()]);
        recite_web(&data, &cached);
        let warm = recite_web(&data, &cached);
        let warm_report: Value = serde_json::from_slice(&warm.stdout).unwrap();
        assert_eq!(warm_report["inputs"], report["inputs"]);
        let plans = warm_report["stats"]["plans"].as_array().unwrap();
        assert!(
            plans.iter().any(|p| p["table"] == "versant_flat" && p["plan"] == "cache"),
            "the warm run answers the http table from the cache: {plans:?}"
        );
        let other = dir.path().join("other");
        let made = crate::support::recite(&[
            "generate",
            "versant",
            "--rows",
            "20000",
            "--seed",
            "99",
            "--out",
            other.to_str().unwrap(),
        ]);
        assert_eq!(code(&made), 0, "{}", stderr(&made));
        std::fs::copy(other.join("versant_flat.parquet"), served.join("versant_flat.parquet")).unwrap();
        let fresh = recite_web(&data, &BATCH);
        let rewritten = recite_web(&data, &cached);
        let inputs =
            |o: &std::process::Output| serde_json::from_slice::<Value>(&o.stdout).unwrap()["inputs"].clone();
        assert_ne!(inputs(&fresh), report["inputs"], "the new bytes change the report");
        assert_eq!(inputs(&rewritten), inputs(&fresh), "a stale entry answered: {}", stderr(&rewritten));
    }

    #[test]
    fn a_table_urls_userinfo_and_query_are_redacted_from_every_report_message_and_listing() {
        let test = "a_table_urls_userinfo_and_query_are_redacted_from_every_report_message_and_listing";
        let dir = tempfile::tempdir().unwrap();
        let served = dir.path().join("served");
        std::fs::create_dir_all(&served).unwrap();
        let local = crate::support::root().join("datasets/versant/versant_flat.parquet");
        std::fs::copy(&local, served.join("versant_flat.parquet")).unwrap();
        let Some(web) = start_web(test, &served) else { return };
        let secrets = ["alice", "pa55word", "s1gnature", "X-Amz-Credential"];
        let clean = |what: &str, text: &str| {
            for s in secrets {
                assert!(!text.contains(s), "{what} shows the secret {s:?}:\n{text}");
            }
        };
        let port = web.port;
        // A missing object: UNVERIFIABLE, the URL named in every format, its secrets not.
        let missing = format!(
            "http://alice:pa55word@127.0.0.1:{port}/no-such.parquet?X-Amz-Signature=s1gnature&X-Amz-Credential=k"
        );
        let data = data_layer(dir.path(), &missing);
        for format in ["json", "jsonl", "text", "markdown", "html", "junit"] {
            let out = recite_web(
                &data,
                &["check", "examples/citations/versant-w6-considered.json", "--format", format],
            );
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
            assert_ne!(code(&out), 0, "{text}");
            assert!(text.contains("no-such.parquet") && text.contains("REDACTED"), "{format}: {text}");
            clean(format, &text);
        }
        let out = recite_web(&data, &["verify", "examples/citations/versant-w6-considered.json"]);
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert!(text.contains("UNVERIFIABLE") && text.contains("no-such.parquet"), "{text}");
        clean("verify", &text);
        for args in [&["catalog", "check"][..], &["catalog", "show", "versant"][..]] {
            let out = recite_web(&data, args);
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
            assert!(text.contains("no-such.parquet"), "{args:?}: {text}");
            clean(&format!("{args:?}"), &text);
        }
        // A readable object behind the same secrets: it is read (the query is never sent), and
        // the cache's listing names it without them.
        let readable =
            format!("http://alice:pa55word@127.0.0.1:{port}/versant_flat.parquet?X-Amz-Signature=s1gnature");
        let data = data_layer(dir.path(), &readable);
        let cache = dir.path().join("cache");
        let out = recite_web(
            &data,
            &["verify", "examples/citations/versant-w6-considered.json", "--cache", cache.to_str().unwrap()],
        );
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert!(text.contains("REPRODUCED"), "{text}");
        clean("verify over the readable URL", &text);
        let out = crate::support::recite(&["cache", "show", "--cache", cache.to_str().unwrap()]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(text.contains("versant_flat.parquet") && text.contains("REDACTED"), "{text}");
        clean("cache show", &text);
        for e in std::fs::read_dir(cache.join(recite::engine::cache::FOLDER)).unwrap() {
            let bytes = std::fs::read(e.unwrap().path()).unwrap();
            clean("a cache entry", &String::from_utf8_lossy(&bytes));
        }
    }

    #[test]
    fn an_spss_file_on_object_storage_is_refused_saying_why() {
        // Refused before any request: no server needed.
        let dir = tempfile::tempdir().unwrap();
        let data = data_layer(dir.path(), "s3://recite-test/versant/versant_flat.sav");
        let mut c = command(&["verify", "examples/citations/versant-w6-considered.json", "--format", "json"]);
        c.args(["--data", data.to_str().unwrap()]);
        let out = run(c, None);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(text.contains("UNVERIFIABLE"), "{text}{}", stderr(&out));
        assert!(text.contains("SPSS file on object storage"), "{text}");
    }
}
