//! The workbench in a real browser (docs/workbench.md, "Tested in a real browser"):
//! `tests/workbench/browser.mjs` drives headless Chromium (Debian's `chromium`, over the
//! DevTools protocol with puppeteer-core) against `recite serve` started here on an ephemeral
//! loopback port with its own ledger. It opens a case by uploading a bundled transcript through
//! the page, checks every highlighted number's status against the case's JSON report, switches
//! the W6 claim to the previous wave in the what-if panel and checks the value shown against
//! the API and against `POST /v1/verify` on the fixture's own citation edited, follows the
//! permalink in a new page, keeps a note, exports (the case's id, permalink, time, versions and
//! note in the file), audits every page state with axe-core (no violation at all), opens the
//! three bundled transcripts chosen at once as one case, refuses junk files without saving
//! anything, deletes a case once confirmed (its permalink then says it is gone), signs in and
//! out of a second server started with `--token-file` (a wrong token refused, the right one
//! lets the analyst in, sign-out ends the session), and watches every request the pages make
//! (none outside the two servers, no console error). Before any click
//! it checks the ruling on the first screen (claimed and recomputed values, interval, both base
//! n, the likely cause and its what-if), every chart's title and accessible name, and their
//! axes (one scale per panel, each starting where its values are: W5 to W6 a visible part of
//! the chart's height); and that the what-if rows name columns and weights by the catalog's
//! labels, their codes in small type.
//!
//! The screenshots of each step are kept in `$CARGO_TARGET_TMPDIR/workbench-browser/`; with
//! `RECITE_SCREENSHOTS=docs/workbench` the docs' (index.png, case.png, three.png, whatif.png) are
//! refreshed from them. Without node, Chromium or the npm packages (`tests/workbench/install.sh`)
//! the test says SKIPPED, unless `RECITE_REQUIRE_BROWSER_TEST` is set (CI sets it), or
//! `RECITE_REQUIRE_NODE` with node or the packages missing, or `RECITE_REQUIRE_CHROMIUM` with
//! Chromium missing: then it fails.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::serve::{Server, TRANSCRIPTS, cli, read};
use crate::support::root;

/// The transcript opened through the page: its claims include Versant on W6 (and on W5, which
/// the what-if's value is also compared with).
const FIXTURE: &str = "examples/transcripts/a2a-v10-stream.sse";
/// The steps `browser.mjs` runs, in order: every one must be there and pass.
const STEPS: [&str; 15] = [
    "controls",
    "open",
    "ruling",
    "numbers",
    "charts",
    "whatif",
    "permalink",
    "note",
    "export",
    "axe",
    "several",
    "junk",
    "delete",
    "signin",
    "requests",
];
/// The screenshots docs/workbench.md shows.
const DOC_SHOTS: [&str; 4] = ["index.png", "case.png", "three.png", "whatif.png"];

fn set(var: &str) -> bool {
    std::env::var_os(var).is_some_and(|v| !v.is_empty() && v != "0")
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Where `tests/workbench/install.sh` puts the packages.
fn packages() -> PathBuf {
    let cache = std::env::var_os("RECITE_SDK_CACHE").map(PathBuf::from).unwrap_or_else(|| {
        let xdg = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()).map(PathBuf::from);
        xdg.unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache"))
            .join("recite-sdk")
    });
    cache.join("workbench")
}

/// Chromium, when node, Chromium and the packages are all there; otherwise a SKIPPED line, or a
/// failure when one of the RECITE_REQUIRE_* variables says the missing one is required.
fn ready(test: &str) -> Option<PathBuf> {
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    let chromium = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| on_path("chromium"))
        .or_else(|| on_path("chromium-browser"));
    let pkgs = packages();
    let installed = ["node_modules/puppeteer-core/package.json", "node_modules/axe-core/axe.min.js"]
        .iter()
        .all(|f| pkgs.join(f).is_file());
    let (why, required) = if !node {
        ("node is not installed (Debian's `nodejs`)".to_string(), set("RECITE_REQUIRE_NODE"))
    } else if chromium.is_none() {
        ("chromium is not installed (Debian's `chromium`)".to_string(), set("RECITE_REQUIRE_CHROMIUM"))
    } else if !installed {
        (
            format!(
                "puppeteer-core and axe-core are not in {} (run tests/workbench/install.sh)",
                pkgs.display()
            ),
            set("RECITE_REQUIRE_NODE"),
        )
    } else {
        return chromium;
    };
    assert!(
        !(required || set("RECITE_REQUIRE_BROWSER_TEST")),
        "the browser test is required (RECITE_REQUIRE_*) but {why}"
    );
    // Straight to the process's stderr: the test harness captures `eprintln!`.
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
    None
}

/// `node tests/workbench/browser.mjs BASE FIXTURE SHOTS` with `env` (`TOKEN_BASE` and `TOKEN`:
/// the server with a token; `PROBE_AGENT`: the URL of an agent the server may probe): its exit
/// code, standard output and error; killed after 15 minutes.
fn drive(chromium: &Path, base: &str, shots: &Path, env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let mut child = Command::new("node");
    child.envs(env.iter().copied());
    let mut child = child
        .arg(root().join("tests/workbench/browser.mjs"))
        .arg(base)
        .arg(root().join(FIXTURE))
        .arg(shots)
        .env("CHROMIUM", chromium)
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run node");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(900);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for node") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("browser.mjs did not finish within 15 minutes");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    (status.code(), out.join().expect("stdout reader"), err.join().expect("stderr reader"))
}

#[test]
fn workbench_in_chromium_opens_checks_switches_follows_exports_and_passes_axe() {
    let test = "workbench_in_chromium_opens_checks_switches_follows_exports_and_passes_axe";
    let Some(chromium) = ready(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite3");
    // An A2A agent of the official Python SDK for the index page's probe field, when its
    // virtualenv is there (tests/serve/install.sh); the server may probe it and nothing else.
    #[cfg(feature = "agents")]
    let agent = crate::probe::Agent::start(test, "conforming", "JSONRPC");
    #[cfg(feature = "agents")]
    let agent_url = agent.as_ref().map(|a| a.url.clone());
    #[cfg(not(feature = "agents"))]
    let agent_url: Option<String> = None;
    let allow = agent_url.as_ref().map(|u| u.trim_start_matches("http://").to_string());
    let mut args = vec!["--ledger", ledger.to_str().unwrap()];
    if let Some(allow) = &allow {
        args.extend(["--probe-allow", allow.as_str()]);
    }
    let s = Server::start_with(&args, &[]);
    let base = format!("http://127.0.0.1:{}", s.port);

    // The other two bundled transcripts are cases already, so the index lists three (as the
    // docs' screenshot shows); the fixture is opened through the page.
    for path in TRANSCRIPTS.iter().filter(|p| **p != FIXTURE) {
        let name = Path::new(path).file_name().unwrap().to_str().unwrap();
        let r = s.request("POST", &format!("/v1/cases?name={name}"), &[], &read(path));
        assert_eq!(r.status, 201, "{path}: {}", String::from_utf8_lossy(&r.body));
    }

    // A second server, started with --token-file, for the sign-in step: its own ledger, the
    // token in a file only its owner reads.
    let token = "workbench-browser-token-5f2c9e";
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let token_ledger = dir.path().join("token-ledger.sqlite3");
    let guarded = Server::start_with(
        &["--token-file", token_file.to_str().unwrap(), "--ledger", token_ledger.to_str().unwrap()],
        &[],
    );
    let token_base = format!("http://127.0.0.1:{}", guarded.port);

    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("workbench-browser");
    let _ = std::fs::remove_dir_all(&shots);
    std::fs::create_dir_all(&shots).unwrap();
    let mut env = vec![("TOKEN_BASE", token_base.as_str()), ("TOKEN", token)];
    if let Some(url) = agent_url.as_deref() {
        env.push(("PROBE_AGENT", url));
    }
    let (code, stdout, stderr) = drive(&chromium, &base, &shots, &env);
    let got: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "browser.mjs printed no result ({e}), exit {code:?}\nstderr:\n{stderr}\nstdout:\n{stdout}\nserver:\n{}\nthe server with a token:\n{}",
            s.log(),
            guarded.log()
        )
    });

    // Each step's outcome, said whether it passed or not (`--nocapture` shows it).
    let steps = got["steps"].as_array().expect("steps");
    let mut summary = String::new();
    for st in steps {
        let mark = if st["ok"] == true { "ok  " } else { "FAIL" };
        summary.push_str(&format!("{mark} {}\n", st["step"].as_str().unwrap_or("?")));
        for f in st["failures"].as_array().into_iter().flatten() {
            summary.push_str(&format!("       {}\n", f.as_str().unwrap_or_default()));
        }
    }
    for v in got["axe"].as_array().into_iter().flatten() {
        summary.push_str(&format!(
            "axe  {}: {} {} ({} node(s)): {}\n",
            v["where"].as_str().unwrap_or_default(),
            v["impact"].as_str().unwrap_or_default(),
            v["id"].as_str().unwrap_or_default(),
            v["count"],
            v["help"].as_str().unwrap_or_default()
        ));
    }
    summary.push_str(&format!("screenshots and result.json: {}\n", shots.display()));

    // The docs' screenshots, refreshed on request from those this run took.
    if let Some(to) = std::env::var_os("RECITE_SCREENSHOTS").filter(|v| !v.is_empty()) {
        let to = root().join(to);
        std::fs::create_dir_all(&to).unwrap();
        for name in DOC_SHOTS {
            if shots.join(name).is_file() {
                std::fs::copy(shots.join(name), to.join(name)).unwrap();
                eprintln!("refreshed {}", to.join(name).display());
            }
        }
    }

    let failed: Vec<&str> =
        steps.iter().filter(|st| st["ok"] != true).filter_map(|st| st["step"].as_str()).collect();
    assert!(
        failed.is_empty() && code == Some(0),
        "steps failed: {failed:?} (exit {code:?})\n{summary}\nstderr:\n{stderr}"
    );
    let names: Vec<&str> = steps.iter().filter_map(|st| st["step"].as_str()).collect();
    // The probe step runs when an agent could be started for it (before `requests`, the last).
    let mut want = STEPS.to_vec();
    if agent_url.is_some() {
        want.insert(want.len() - 1, "probe");
    }
    assert_eq!(names, want, "browser.mjs ran other steps\n{summary}");

    // What the page was checked against, against the command line: every number the answer
    // audit of `recite check -` states was highlighted and compared.
    let cli_report: Value =
        serde_json::from_slice(&cli(&["check", "-", "--format", "json"], &read(FIXTURE))).unwrap();
    let stated: usize = cli_report["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| i["answers"].as_array().into_iter().flatten())
        .map(|a| a["numbers"].as_array().map_or(0, Vec::len))
        .sum();
    assert!(stated > 0);
    eprintln!("{summary}");
    let numbers = steps.iter().find(|st| st["step"] == "numbers").unwrap();
    assert_eq!(numbers["highlighted"], Value::from(stated), "{summary}");
    // Every step's screenshot is a PNG.
    for name in [
        "open-index.png",
        "case.png",
        "whatif.png",
        "permalink.png",
        "export.png",
        "index.png",
        "three.png",
        "junk.png",
        "gone.png",
        "signin.png",
    ] {
        let png = std::fs::read(shots.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(png.len() > 1000 && png.starts_with(b"\x89PNG\r\n\x1a\n"), "{name} is not a PNG");
    }
    assert!(got["requests"]["seen"].as_array().is_some_and(|l| l.len() > 5), "{summary}");
}
