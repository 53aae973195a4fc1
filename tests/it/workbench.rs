//! The workbench's cases (docs/workbench.md), over plain HTTP against `recite serve` started
//! as a child process on an ephemeral port with its own ledger: a case made from a bundled
//! transcript is fetched, listed, searched and exported, and its reports are what `recite check
//! -` prints for the same transcript, byte for byte; its digests are `sha256sum`'s; a re-run
//! after the data changed says what moved. The crash test kills the server (SIGKILL) while it
//! saves cases, restarts it on the same ledger, and checks that every case acknowledged is
//! there, every case listed is whole, and SQLite's own integrity check passes.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::serve::{Server, TRANSCRIPTS, cli, multipart, read};
use crate::support::root;

/// A running `recite serve` on a ledger; killed (SIGKILL) when dropped.
struct Bench {
    server: Server,
    port: u16,
}

impl Bench {
    /// `recite serve --listen 127.0.0.1:0 --ledger LEDGER ARGS` with `env`, once it listens.
    fn start(ledger: &Path, args: &[&str], env: &[(&str, &str)]) -> Bench {
        let ledger = ledger.to_str().expect("a UTF-8 ledger path");
        let args: Vec<&str> = ["--ledger", ledger].into_iter().chain(args.iter().copied()).collect();
        let server = Server::start_with(&args, env);
        Bench { port: server.port, server }
    }

    fn call(&self, method: &str, target: &str, body: &[u8]) -> Reply {
        call(self.port, method, target, body)
            .unwrap_or_else(|| panic!("{method} {target}: no answer; log: {}", self.server.log()))
    }

    fn json(&self, method: &str, target: &str, body: &[u8], status: u16) -> Value {
        let r = self.call(method, target, body);
        assert_eq!(r.status, status, "{method} {target}: {}", String::from_utf8_lossy(&r.body));
        r.json()
    }

    /// SIGKILL, then reaped.
    fn kill(self) {
        self.server.kill();
    }
}

/// An HTTP answer (its body de-chunked: a case settled with `progress=1` is streamed).
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    fn text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("UTF-8")
    }
}

/// HTTP/1.1 over a fresh connection; `None` when the server is not there or hangs up.
fn call(port: u16, method: &str, target: &str, body: &[u8]) -> Option<Reply> {
    call_typed(port, method, target, None, body)
}

/// [`call`] with a `Content-Type`.
fn call_typed(
    port: u16,
    method: &str,
    target: &str,
    content_type: Option<&str>,
    body: &[u8],
) -> Option<Reply> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(300))).ok()?;
    let typed = content_type.map(|t| format!("Content-Type: {t}\r\n")).unwrap_or_default();
    let head = format!(
        "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n{typed}Content-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).ok()?;
    s.write_all(body).ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    if headers.iter().any(|(n, v)| n == "transfer-encoding" && v.contains("chunked")) {
        body = dechunked(&body)?;
    }
    if let Some(n) =
        headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse::<usize>().ok())
        && n != body.len()
    {
        return None; // cut short
    }
    Some(Reply { status, headers, body })
}

/// A chunked body's bytes; `None` when it is cut short.
fn dechunked(mut raw: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = raw.windows(2).position(|w| w == b"\r\n")?;
        let size =
            usize::from_str_radix(std::str::from_utf8(&raw[..eol]).ok()?.split(';').next()?.trim(), 16)
                .ok()?;
        raw = &raw[eol + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(raw.get(..size)?);
        raw = raw.get(size + 2..)?;
    }
}

/// `sha256sum FILE`'s digest: computed by coreutils, not by recite.
fn sha256sum(path: &Path) -> String {
    let out = std::process::Command::new("sha256sum").arg(path).output().expect("run sha256sum");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().split_whitespace().next().unwrap().to_string()
}

/// Every claim of a JSON report.
fn claims(report: &Value) -> Vec<&Value> {
    report["inputs"].as_array().unwrap().iter().flat_map(|i| i["claims"].as_array().unwrap().iter()).collect()
}

/// The transcripts whose CLI report has a claim for which `keep` holds.
fn expected(reports: &BTreeMap<&str, Value>, keep: impl Fn(&Value) -> bool) -> BTreeSet<String> {
    reports.iter().filter(|(_, r)| claims(r).into_iter().any(&keep)).map(|(p, _)| p.to_string()).collect()
}

#[test]
fn workbench_cases_are_saved_fetched_searched_and_exported() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("cases/ledger.sqlite3");
    let s = Bench::start(&ledger, &[], &[]);

    // The pages: served from the binary, their policy allowing this server only.
    let index = s.call("GET", "/", b"");
    assert_eq!(index.status, 200);
    assert!(index.header("content-type").unwrap().starts_with("text/html"));
    assert!(index.text().contains("Open a case"));
    let csp = index.header("content-security-policy").unwrap();
    assert!(csp.contains("default-src 'none'") && csp.contains("script-src 'self'"), "{csp}");
    for asset in ["/assets/workbench.js", "/assets/workbench.css"] {
        assert_eq!(s.call("GET", asset, b"").status, 200, "{asset}");
    }

    let mut ids: BTreeMap<&str, String> = BTreeMap::new();
    let mut reports: BTreeMap<&str, Value> = BTreeMap::new();
    let mut order = Vec::new();
    for path in TRANSCRIPTS {
        let body = read(path);
        let r = s.call("POST", "/v1/cases", &body);
        assert_eq!(r.status, 201, "{path}: {}", r.text());
        let made = r.json();
        let id = made["id"].as_str().unwrap().to_string();
        assert_eq!(r.header("location"), Some(format!("/cases/{id}").as_str()));
        assert_eq!(made["permalink"], Value::from(format!("http://127.0.0.1:{}/cases/{id}", s.port)));

        // The reports are the command line's, byte for byte.
        // Settled with each claim's series across periods, which the HTML report charts.
        let want_json = cli(&["check", "-", "--format", "json", "--series"], &body);
        let got = s.call("GET", &format!("/v1/cases/{id}/report"), b"");
        assert_eq!(got.status, 200);
        assert_eq!(
            got.text(),
            String::from_utf8(want_json.clone()).unwrap(),
            "{path}: the saved JSON report"
        );
        let export = s.call("GET", &format!("/cases/{id}/export"), b"");
        assert_eq!(export.status, 200);
        assert!(export.header("content-disposition").unwrap().starts_with("attachment;"));
        // The command line's report, with the case's facts first in its <main>: its id and
        // permalink, so a ruling mailed on can be found in the ledger again.
        let want_html = String::from_utf8(cli(&["check", "-", "--format", "html"], &body)).unwrap();
        let exported = export.text();
        let (start, end) = (
            exported.find("<section class=\"input case-facts\"").unwrap(),
            exported.find("</section>\n").unwrap(),
        );
        let facts = &exported[start..end + "</section>\n".len()];
        assert_eq!(exported.replacen(facts, "", 1), want_html, "{path}: the exported HTML report");
        assert!(facts.contains(&format!("<code data-case-id>{id}</code>")), "{facts}");
        assert!(
            facts.contains(&format!("<td data-permalink>http://127.0.0.1:{}/cases/{id}</td>", s.port)),
            "{facts}"
        );

        // The case: the input's digest is sha256sum's, its bytes as sent; the data layer's
        // files hashed as sha256sum hashes them.
        let case = s.json("GET", &format!("/v1/cases/{id}"), b"", 200);
        assert_eq!(case["inputs"][0]["sha256"], Value::from(sha256sum(&root().join(path))), "{path}");
        assert_eq!(case["inputs"][0]["size"], Value::from(body.len()));
        assert_eq!(s.call("GET", &format!("/v1/cases/{id}/inputs/0"), b"").body, body);
        let report: Value = serde_json::from_slice(&want_json).unwrap();
        assert_eq!(case["verdicts"], report["summary"]["verdicts"]);
        assert_eq!(case["report"], report);
        assert!(case["fingerprint"].as_str().unwrap().starts_with("sha256:"));
        let parquet = case["data_files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == "versant/versant_flat.parquet")
            .unwrap_or_else(|| panic!("the fingerprint covers the Versant table: {:#}", case["data_files"]));
        assert_eq!(
            parquet["sha256"],
            Value::from(sha256sum(&root().join("datasets/versant/versant_flat.parquet")))
        );

        // Its page frames the stored report.
        let page = s.call("GET", &format!("/cases/{id}"), b"");
        assert_eq!(page.status, 200);
        assert!(page.text().contains(&format!("src=\"/cases/{id}/report\"")));
        let framed = s.call("GET", &format!("/cases/{id}/report"), b"");
        assert!(framed.header("content-security-policy").unwrap().contains("frame-ancestors 'self'"));

        ids.insert(path, id.clone());
        reports.insert(path, report);
        order.push(id);
    }

    // The list: newest first, every verdict counted.
    let all = s.json("GET", "/v1/cases", b"", 200);
    assert_eq!(all["count"], 3);
    let listed: Vec<&str> =
        all["cases"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    let newest_first: Vec<&str> = order.iter().rev().map(String::as_str).collect();
    assert_eq!(listed, newest_first);
    let total =
        |v: &str| reports.values().map(|r| r["summary"]["verdicts"][v].as_u64().unwrap()).sum::<u64>();
    for v in ["REPRODUCED", "DISCREPANT", "BASE_MISMATCH", "UNVERIFIABLE", "INVALID"] {
        assert_eq!(all["verdicts"][v].as_u64(), Some(total(v)), "{v}");
    }

    // Search, against what the command line's reports say.
    let found = |q: &str| -> BTreeSet<String> {
        let l = s.json("GET", &format!("/v1/cases?{q}"), b"", 200);
        let by_id: BTreeMap<&String, &&str> = ids.iter().map(|(p, id)| (id, p)).collect();
        l["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| by_id[&c["id"].as_str().unwrap().to_string()].to_string())
            .collect()
    };
    let text = |c: &Value, k: &str| c["rerun"][k].as_str().unwrap_or_default().to_lowercase();
    let claimed = |c: &Value, m: &str| {
        c["measures"].as_array().into_iter().flatten().any(|x| {
            x["name"].as_str().unwrap().to_lowercase().contains(m)
                && x["claims"].as_array().is_some_and(|a| !a.is_empty())
        })
    };
    let discrepant = expected(&reports, |c| c["verdict"] == "DISCREPANT");
    assert!(!discrepant.is_empty());
    assert_eq!(found("verdict=DISCREPANT"), discrepant);
    assert_eq!(found("verdict=invalid"), expected(&reports, |c| c["verdict"] == "INVALID"));
    let w5 = expected(&reports, |c| text(c, "study").contains("versant") && text(c, "period").contains("w5"));
    assert!(!w5.is_empty() && w5.len() < 3, "{w5:?}");
    assert_eq!(found("study=versant&period=W5"), w5);
    assert_eq!(
        found("measure=considered&verdict=REPRODUCED"),
        expected(&reports, |c| claimed(c, "considered") && c["verdict"] == "REPRODUCED")
    );
    // A search term is data, never SQL.
    assert!(found("study=%27%20OR%201%3D1%20--").is_empty());
    assert_eq!(found("limit=1").len(), 1);

    // Problems, as the rest of the API has them.
    for (target, status, at) in [
        ("/v1/cases?verdict=WRONG", 400, "query.verdict"),
        ("/v1/cases?sort=id", 400, "query.sort"),
        ("/v1/cases?limit=0", 400, "query.limit"),
        ("/v1/cases/zzz", 404, "path"),
        ("/v1/cases/000000000000000000000000", 404, "path"),
        ("/cases/000000000000000000000000/export", 404, "path"),
        ("/v1/cases/..%2f..%2fetc/inputs/0", 404, "path"),
    ] {
        let r = s.call("GET", target, b"");
        assert_eq!(r.status, status, "{target}: {}", r.text());
        assert_eq!(r.header("content-type"), Some("application/problem+json"), "{target}");
        assert_eq!(r.json()["location"], at, "{target}");
    }
    let r = s.call("DELETE", "/v1/cases", b"");
    assert_eq!(r.status, 405);

    // Not a transcript: refused with the reader's own words and where, and nothing saved.
    let before = s.json("GET", "/v1/cases", b"", 200)["count"].clone();
    for (name, body, says) in [
        ("notes.txt", &b"These are notes, not a transcript."[..], "malformed JSON"),
        ("empty.json", &b""[..], "empty input"),
        ("other.json", &b"{\"a\": 1}"[..], "neither a {result, citation} pair"),
    ] {
        let r = s.call("POST", &format!("/v1/cases?name={name}"), body);
        assert_eq!(r.status, 422, "{name}: {}", r.text());
        let p = r.json();
        let detail = p["detail"].as_str().unwrap();
        assert_eq!(p["location"], "body", "{name}");
        assert!(detail.starts_with(name) && detail.contains(says), "{name}: {detail}");
        assert!(detail.contains("nothing was saved"), "{name}: {detail}");
    }
    assert_eq!(s.json("GET", "/v1/cases", b"", 200)["count"], before, "junk saved nothing");
    let r = s.call("POST", "/v1/cases?name=", b"{}");
    assert_eq!((r.status, r.json()["location"].as_str()), (400, Some("query.name")));

    // A re-run on the same data moves nothing.
    let id = &ids[TRANSCRIPTS[0]];
    let again = s.json("POST", &format!("/v1/cases/{id}/rerun"), b"", 200);
    assert_eq!(again["data_layer_changed"], false);
    assert_eq!(again["moved"], Value::Array(vec![]));
    assert_eq!(again["rerun"], 1);
    let case = s.json("GET", &format!("/v1/cases/{id}"), b"", 200);
    assert_eq!(case["reruns"].as_array().unwrap().len(), 1);
    assert_eq!(s.call("GET", &format!("/cases/{id}/reruns/1/report"), b"").status, 200);
    assert_eq!(s.json("POST", "/v1/cases/000000000000000000000000/rerun", b"", 404)["location"], "path");

    // The analyst's note: kept, escaped in the export, refused past its limit.
    let said = "Ruled <b>W5's</b> figure & relabelled";
    let body = serde_json::json!({ "note": said }).to_string();
    assert_eq!(s.json("PUT", &format!("/v1/cases/{id}/note"), body.as_bytes(), 200)["note"], said);
    assert_eq!(s.json("GET", &format!("/v1/cases/{id}"), b"", 200)["note"], said);
    let export = s.call("GET", &format!("/cases/{id}/export"), b"").text();
    assert!(
        export.contains("Ruled &lt;b&gt;W5's&lt;/b&gt; figure &amp; relabelled") && !export.contains("<b>W5")
    );
    let long = serde_json::json!({ "note": "x".repeat(10_001) }).to_string();
    assert_eq!(s.json("PUT", &format!("/v1/cases/{id}/note"), long.as_bytes(), 400)["location"], "body.note");

    // Deleted: the case, its inputs and re-runs gone; its permalink says so; the others kept.
    let count = s.json("GET", "/v1/cases", b"", 200)["count"].as_u64().unwrap();
    assert_eq!(s.json("DELETE", &format!("/v1/cases/{id}"), b"", 200)["deleted"], id.as_str());
    assert_eq!(s.call("GET", &format!("/v1/cases/{id}"), b"").status, 404);
    assert_eq!(s.call("GET", &format!("/v1/cases/{id}/inputs/0"), b"").status, 404);
    assert_eq!(s.call("GET", &format!("/cases/{id}/reruns/1/report"), b"").status, 404);
    let gone = s.call("GET", &format!("/cases/{id}"), b"");
    assert_eq!(gone.status, 404);
    assert!(gone.text().contains("This case is gone"), "{}", gone.text());
    assert_eq!(s.json("DELETE", &format!("/v1/cases/{id}"), b"", 404)["location"], "path");
    assert_eq!(s.json("GET", "/v1/cases", b"", 200)["count"].as_u64().unwrap(), count - 1);
}

/// Adds 20 to the first 3000 zinc values of an NHANES II copy: its mean moves, its base does
/// not.
fn shift_zinc(csv: &Path) {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut lines = text.lines();
    let head = lines.next().unwrap();
    let at = head.split(',').position(|c| c == "zinc").unwrap();
    let mut out = vec![head.to_string()];
    for (i, line) in lines.enumerate() {
        let mut cells: Vec<String> = line.split(',').map(str::to_string).collect();
        if i < 3000
            && let Ok(v) = cells[at].parse::<f64>()
        {
            cells[at] = format!("{}", v + 20.0);
        }
        out.push(cells.join(","));
    }
    std::fs::write(csv, out.join("\n") + "\n").unwrap();
}

#[test]
fn workbench_rerun_after_the_data_changed_says_what_moved() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let copied =
        std::process::Command::new("cp").arg("-r").arg(root().join("datasets")).arg(&data).status().unwrap();
    assert!(copied.success());
    let ledger = dir.path().join("ledger.sqlite3");
    let data_arg = data.to_str().unwrap();
    let body = read("examples/citations/nhanes2-zinc.json");

    let s = Bench::start(&ledger, &["--data", data_arg], &[]);
    let made = s.json("POST", "/v1/cases?name=zinc.json", &body, 201);
    let id = made["id"].as_str().unwrap().to_string();
    let saved = s.json("GET", &format!("/v1/cases/{id}"), b"", 200);
    assert_eq!(saved["verdict"], "REPRODUCED", "{saved:#}");
    s.kill();

    shift_zinc(&data.join("nhanes2/nhanes2.csv"));
    let s = Bench::start(&ledger, &["--data", data_arg], &[]);
    let r = s.json("POST", &format!("/v1/cases/{id}/rerun"), b"", 200);
    assert_eq!(r["data_layer_changed"], true, "{r:#}");
    assert_eq!(r["saved_fingerprint"], saved["fingerprint"]);
    assert_ne!(r["fingerprint"], saved["fingerprint"]);
    assert_eq!(
        r["files_changed"],
        serde_json::json!([{ "name": "nhanes2/nhanes2.csv", "change": "changed" }])
    );
    let moved = r["moved"].as_array().unwrap();
    assert!(
        moved
            .iter()
            .any(|m| m["what"] == "verdict" && m["before"] == "REPRODUCED" && m["after"] == "DISCREPANT"),
        "{r:#}"
    );
    // The mean moved up, by what 20 more on a third of the rows makes (weighted: less or more
    // than a third of the weight), and nothing else moved.
    let mean = moved.iter().find(|m| m["what"] == "recomputed").unwrap_or_else(|| panic!("{r:#}"));
    let (before, after) = (mean["before"].as_f64().unwrap(), mean["after"].as_f64().unwrap());
    assert!(
        (before - 87.18).abs() < 0.005 && after > before + 1.0 && after < before + 20.0,
        "{before} → {after}"
    );
    assert!(moved.iter().all(|m| m["what"] != "base n"), "{r:#}");
    // The ruling is kept as it was; the re-run is beside it.
    let case = s.json("GET", &format!("/v1/cases/{id}"), b"", 200);
    assert_eq!(case["verdict"], "REPRODUCED");
    assert_eq!(case["reruns"][0]["fingerprint"], r["fingerprint"]);
}

#[test]
fn workbench_ledger_survives_a_kill_during_saves() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite3");
    let bodies: Vec<Vec<u8>> = TRANSCRIPTS.iter().map(|p| read(p)).collect();
    let digests: Vec<String> = TRANSCRIPTS.iter().map(|p| sha256sum(&root().join(p))).collect();
    let cli_reports: Vec<Vec<u8>> =
        bodies.iter().map(|b| cli(&["check", "-", "--format", "json", "--series"], b)).collect();

    // Each save pauses inside its transaction (200 ms, against a few for the check), so with
    // four clients one is almost always mid-write: the kill lands there.
    let s = Bench::start(&ledger, &["--concurrency", "4"], &[("RECITE_TEST_LEDGER_PAUSE_MS", "200")]);
    let port = s.port;
    let stop = Arc::new(AtomicBool::new(false));
    let acked: Arc<Mutex<Vec<(String, usize)>>> = Arc::default();
    let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let workers: Vec<_> = (0..4)
        .map(|w| {
            let (stop, acked, sent, bodies) = (stop.clone(), acked.clone(), sent.clone(), bodies.clone());
            std::thread::spawn(move || {
                for k in 0..200 {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let which = (w + k) % bodies.len();
                    sent.fetch_add(1, Ordering::SeqCst);
                    match call(port, "POST", "/v1/cases", &bodies[which]) {
                        Some(r) if r.status == 201 => {
                            let id = r.json()["id"].as_str().unwrap().to_string();
                            acked.lock().unwrap().push((id, which));
                        }
                        Some(r) => panic!("a save failed before the kill: {} {}", r.status, r.text()),
                        None => break, // killed
                    }
                }
            })
        })
        .collect();
    let t0 = Instant::now();
    while acked.lock().unwrap().len() < 12 && t0.elapsed() < Duration::from_secs(240) {
        std::thread::sleep(Duration::from_millis(10));
    }
    // Not on a save's boundary: somewhere inside the next ones.
    std::thread::sleep(Duration::from_millis(37));
    stop.store(true, Ordering::SeqCst);
    s.kill();
    for w in workers {
        w.join().unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    let sent = sent.load(Ordering::SeqCst);
    assert!(acked.len() >= 12, "only {} saves acknowledged", acked.len());
    assert!(sent > acked.len(), "no save was in flight at the kill");

    // Restarted on the same ledger: every acknowledged case is there, and every case listed is
    // whole.
    let s = Bench::start(&ledger, &[], &[]);
    let list = s.json("GET", "/v1/cases?limit=1000", b"", 200);
    let listed: BTreeSet<String> =
        list["cases"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_string()).collect();
    for (id, _) in &acked {
        assert!(listed.contains(id), "the acknowledged case {id} was lost");
    }
    assert!(listed.len() <= sent, "{} listed, {sent} sent", listed.len());
    eprintln!("{} sent, {} acknowledged, {} saved", sent, acked.len(), listed.len());
    for id in &listed {
        let case = s.json("GET", &format!("/v1/cases/{id}"), b"", 200);
        let digest = case["inputs"][0]["sha256"].as_str().unwrap();
        let which = digests
            .iter()
            .position(|d| d == digest)
            .unwrap_or_else(|| panic!("{id}: digest {digest} is no input's"));
        if let Some((_, sent_as)) = acked.iter().find(|(a, _)| a == id) {
            assert_eq!(*sent_as, which, "{id}: saved with another input");
        }
        assert_eq!(case["inputs"].as_array().unwrap().len(), 1, "{id}");
        assert_eq!(s.call("GET", &format!("/v1/cases/{id}/inputs/0"), b"").body, bodies[which], "{id}");
        let report = s.call("GET", &format!("/v1/cases/{id}/report"), b"");
        assert_eq!(report.text(), String::from_utf8(cli_reports[which].clone()).unwrap(), "{id}: report");
        assert!(
            s.call("GET", &format!("/cases/{id}/export"), b"").text().ends_with("</html>\n"),
            "{id}: HTML"
        );
    }

    // SQLite's own checks, through a connection of the test's.
    let db = rusqlite::Connection::open(&ledger).unwrap();
    let integrity: String = db.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(integrity, "ok");
    let orphans: i64 =
        db.query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| r.get(0)).unwrap();
    assert_eq!(orphans, 0);
    let rows: i64 = db.query_row("SELECT count(*) FROM cases", [], |r| r.get(0)).unwrap();
    assert_eq!(rows as usize, listed.len());
    let unindexed: i64 = db
        .query_row("SELECT count(*) FROM cases c WHERE c.claims > 0 AND NOT EXISTS (SELECT 1 FROM claims t WHERE t.case_id = c.id)", [], |r| r.get(0))
        .unwrap();
    assert_eq!(unindexed, 0, "a case saved without its search rows");
}

/// The citation of a `{result, citation}` file with one change an alternative names, as the
/// agent would have written it had it computed that.
fn edited(body: &[u8], kind: &str, name: &str) -> Option<Vec<u8>> {
    let mut v: Value = serde_json::from_slice(body).unwrap();
    let c = &mut v["citation"];
    match kind {
        "period" => {
            c["period"] = Value::from(name);
            c.as_object_mut().unwrap().remove("fielded");
        }
        "weight" => c["weight"] = Value::from(name),
        "unweighted" => {
            c.as_object_mut().unwrap().remove("weight");
        }
        "base" => c["base"]["name"] = Value::from(name),
        "column" => c["source"]["column"] = Value::from(name),
        _ => return None,
    }
    Some(serde_json::to_vec(&v).unwrap())
}

#[test]
fn workbench_what_if_reruns_a_claim_on_the_catalogs_alternatives() {
    let dir = tempfile::tempdir().unwrap();
    let s = Bench::start(&dir.path().join("ledger.sqlite3"), &[], &[]);
    let body = read("examples/citations/versant-w6-discrepant.json");
    let id = s.json("POST", "/v1/cases?name=discrepant.json", &body, 201)["id"].as_str().unwrap().to_string();
    let saved = s.json("GET", &format!("/v1/cases/{id}/report"), b"", 200);
    let claim = claims(&saved)[0].clone();
    assert_eq!(claim["verdict"], "DISCREPANT");

    let listed = s.json("GET", &format!("/v1/cases/{id}/alternatives"), b"", 200);
    let alts = listed["claims"][0]["alternatives"].as_array().unwrap().clone();
    // First: what the explanation says the agent most likely computed instead (W5).
    assert_eq!(alts[0]["likely"], true, "{listed:#}");
    assert_eq!(
        (alts[0]["kind"].as_str(), alts[0]["name"].as_str()),
        (Some("period"), Some("W5 (March 2026)"))
    );
    assert_eq!(alts.iter().filter(|a| a["likely"] == true).count(), 1);

    // Every other period the study declares is offered, and no name the catalog lacks: the
    // periods read from the study file itself, not from recite.
    let study: toml::Table =
        toml::from_str(&std::fs::read_to_string(root().join("datasets/versant/study.toml")).unwrap())
            .unwrap();
    let declared: BTreeSet<String> = study["periods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .filter(|p| p != "W6 (April 2026)")
        .collect();
    let offered: BTreeSet<String> = alts
        .iter()
        .filter(|a| a["kind"] == "period")
        .map(|a| a["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(offered, declared);
    let kinds: BTreeSet<&str> = alts.iter().map(|a| a["kind"].as_str().unwrap()).collect();
    for k in ["period", "unweighted", "weight", "nobase", "column", "measure"] {
        assert!(kinds.contains(k), "no {k} alternative: {listed:#}");
    }

    let whatif = |alt: &str| -> Value {
        let req = serde_json::json!({ "claim": 0, "alternative": alt }).to_string();
        s.json("POST", &format!("/v1/cases/{id}/whatif"), req.as_bytes(), 200)
    };
    // On W5 the claim reproduces: 47% with base n 4595, as the explanation said.
    let w5 = whatif("period:W5 (March 2026)");
    assert_eq!(w5["verdict"], "REPRODUCED", "{w5:#}");
    assert_eq!(w5["report_claim"]["base"]["n"], 4595);

    // Each alternative that a citation can name is the citation edited to name it: the same
    // measures, base and verdict as `recite verify` gives on the edited citation.
    let mut compared = 0;
    for a in &alts {
        let (kind, name) = (a["kind"].as_str().unwrap(), a["name"].as_str().unwrap());
        let Some(edit) = edited(&body, kind, name) else { continue };
        let got = whatif(a["id"].as_str().unwrap());
        let want: Value = serde_json::from_slice(&cli(&["verify", "-", "--format", "json"], &edit)).unwrap();
        let want = &claims(&want)[0];
        for field in ["verdict", "base", "measures"] {
            assert_eq!(got["report_claim"][field], want[field], "{kind} {name}: {field}");
        }
        compared += 1;
    }
    assert!(compared >= 8, "only {compared} alternatives compared");

    // Another funnel stage: the claimed 47% read as Purchased, the saved report's Purchased.
    let purchased = whatif("measure:Purchased");
    assert_eq!(purchased["verdict"], "DISCREPANT");
    let estimate = |c: &Value, m: &str| {
        c["measures"].as_array().unwrap().iter().find(|x| x["name"] == m).unwrap()["estimate"]["value"]
            .clone()
    };
    assert_eq!(estimate(&purchased["report_claim"], "Purchased"), estimate(&claim, "Purchased"));
    let compared_on: Vec<&str> = purchased["report_claim"]["measures"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["claims"].as_array().is_some_and(|c| !c.is_empty()))
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(compared_on, ["Purchased"]);

    // Only listed alternatives run: a name the catalog lacks, or SQL, is refused with where.
    for (req, status, at) in [
        (r#"{"claim": 0, "alternative": "period:W9"}"#, 422, "body.alternative"),
        (r#"{"claim": 0, "alternative": "period:W5 (March 2026) OR 1=1"}"#, 422, "body.alternative"),
        (r#"{"claim": 0, "alternative": "column:s14r5\" OR TRUE --"}"#, 422, "body.alternative"),
        (r#"{"claim": 3, "alternative": "unweighted"}"#, 422, "body.claim"),
        (r#"{"claim": "0", "alternative": "unweighted"}"#, 400, "body.claim"),
        (r#"{"claim": 0}"#, 400, "body.alternative"),
        ("not json", 400, "body"),
    ] {
        let r = s.call("POST", &format!("/v1/cases/{id}/whatif"), req.as_bytes());
        assert_eq!(r.status, status, "{req}: {}", r.text());
        assert_eq!(r.json()["location"], at, "{req}");
    }
    assert_eq!(s.call("GET", &format!("/v1/cases/{id}/alternatives?claim=x"), b"").status, 400);
    assert_eq!(s.call("GET", &format!("/v1/cases/{id}/alternatives?claim=7"), b"").status, 400);
    assert_eq!(s.call("GET", "/v1/cases/0123456789abcdef01234567/alternatives", b"").status, 404);

    // The case page carries the what-if panel.
    assert!(s.call("GET", &format!("/cases/{id}"), b"").text().contains(r#"<section id="whatif""#));
}

#[test]
fn workbench_open_starts_the_users_browser_on_the_page() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen");
    let browser = dir.path().join("browser");
    std::fs::write(&browser, format!("#!/bin/sh\necho \"$1\" > '{}'\n", seen.display())).unwrap();
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    let s = Bench::start(
        &dir.path().join("ledger.sqlite3"),
        &["--open"],
        &[("BROWSER", browser.to_str().unwrap())],
    );
    let until = Instant::now() + Duration::from_secs(20);
    // Written whole once its line ends.
    while !std::fs::read_to_string(&seen).is_ok_and(|t| t.ends_with('\n')) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let url = std::fs::read_to_string(&seen)
        .unwrap_or_else(|_| panic!("the browser was not started: {}", s.server.log()));
    assert_eq!(url.trim(), format!("http://127.0.0.1:{}/", s.port));
    let page = s.call("GET", "/", b"");
    assert_eq!(page.status, 200);
    assert!(page.text().contains("Open a case"));
}

#[test]
fn workbench_tells_the_claims_as_they_settle_then_the_case() {
    let dir = tempfile::tempdir().unwrap();
    let s = Bench::start(&dir.path().join("ledger.sqlite3"), &[], &[]);
    let body = read(TRANSCRIPTS[1]);
    let r = s.call("POST", "/v1/cases?progress=1&name=stream.sse", &body);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/jsonl"));
    let lines: Vec<Value> = r.text().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let (last, told) = lines.split_last().unwrap();
    let id = last["case"]["id"].as_str().unwrap_or_else(|| panic!("no case last: {last}"));
    // One line a claim, counted in order, then the summary as it is saved.
    let claims_told: Vec<&Value> = told.iter().filter(|l| l.get("verdict").is_some()).collect();
    for (n, l) in claims_told.iter().enumerate() {
        assert_eq!(l["settled"], n + 1);
        assert_eq!(l["input"], "stream.sse");
    }
    assert_eq!(told.last().unwrap()["saving"], true);
    // What was told is what was saved, claim by claim.
    let saved = s.json("GET", &format!("/v1/cases/{id}/report"), b"", 200);
    let saved_claims = claims(&saved);
    assert!(!saved_claims.is_empty());
    assert_eq!(claims_told.len(), saved_claims.len());
    for (t, c) in claims_told.iter().zip(&saved_claims) {
        assert_eq!((&t["locator"], &t["verdict"]), (&c["locator"], &c["verdict"]));
    }
    assert_eq!(last["case"]["summary"]["verdicts"], saved["summary"]["verdicts"]);
    assert_eq!(s.call("POST", "/v1/cases?progress=yes", &body).json()["location"], "query.progress");
}

#[test]
fn workbench_what_if_unweighted_drops_replicate_weights_as_an_unweighted_citation_does() {
    // R survey's apistrat with JKn replicate weights (tests/fixtures/api): unweighted, the
    // estimate has no replicate variance, as `recite verify` decides for a citation without a
    // weight; the what-if must be that computation, not the unweighted share with the replicates'
    // standard error.
    let dir = tempfile::tempdir().unwrap();
    let data = root().join("tests/fixtures/api");
    let s = Bench::start(&dir.path().join("ledger.sqlite3"), &["--data", data.to_str().unwrap()], &[]);
    let claim = serde_json::json!({
        "citation": {
            "study": "California API", "period": "1999-2000", "base": { "name": "All schools", "n": 200 },
            "weight": "pw",
            "source": { "table": "apistrat_jkn", "column": "sch_wide", "function": "extractShare" }
        },
        "result": { "share": "66%" }
    });
    let body = serde_json::to_vec(&claim).unwrap();
    let id = s.json("POST", "/v1/cases?name=api.json", &body, 201)["id"].as_str().unwrap().to_string();
    let req = br#"{"claim": 0, "alternative": "unweighted"}"#;
    let got = s.json("POST", &format!("/v1/cases/{id}/whatif"), req, 200);
    let edit = edited(&body, "unweighted", "").unwrap();
    let want: Value = serde_json::from_slice(&cli(
        &["verify", "-", "--format", "json", "--data", data.to_str().unwrap()],
        &edit,
    ))
    .unwrap();
    let want = &claims(&want)[0];
    assert_eq!(got["report_claim"]["measures"], want["measures"], "{got:#}");
    assert_eq!(got["report_claim"]["base"], want["base"]);
}

/// Several files dropped at once are one case: a multipart body, one transcript a part, is
/// settled as `recite check A B C` settles those files (names, order and report byte for byte),
/// and the case keeps each input with its own digest.
#[test]
fn workbench_several_files_make_one_case() {
    let dir = tempfile::tempdir().unwrap();
    let s = Bench::start(&dir.path().join("ledger.sqlite3"), &[], &[]);
    let files: Vec<(&str, Vec<u8>)> = TRANSCRIPTS.iter().map(|p| (*p, read(p))).collect();
    let parts: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (*p, b.as_slice())).collect();
    let (body, content_type) = multipart(&parts);
    let r = call_typed(s.port, "POST", "/v1/cases", Some(&content_type), &body).expect("an answer");
    assert_eq!(r.status, 201, "{}", r.text());
    let id = r.json()["id"].as_str().unwrap().to_string();

    let mut args = vec!["check"];
    args.extend(TRANSCRIPTS);
    args.extend(["--format", "json", "--series"]);
    let want = cli(&args, b"");
    let got = s.call("GET", &format!("/v1/cases/{id}/report"), b"");
    assert_eq!(got.status, 200);
    assert_eq!(got.text(), String::from_utf8(want).unwrap(), "the case's report is `recite {args:?}`'s");

    let case = s.json("GET", &format!("/v1/cases/{id}"), b"", 200);
    let inputs = case["inputs"].as_array().unwrap();
    assert_eq!(inputs.len(), TRANSCRIPTS.len(), "{case}");
    for (n, path) in TRANSCRIPTS.iter().enumerate() {
        assert_eq!(inputs[n]["name"], Value::from(*path));
        assert_eq!(inputs[n]["sha256"], Value::from(sha256sum(&root().join(path))), "{path}");
        assert_eq!(s.call("GET", &format!("/v1/cases/{id}/inputs/{n}"), b"").body, read(path));
    }
    // The list shows one case naming the three inputs.
    let list = s.json("GET", "/v1/cases", b"", 200);
    assert_eq!(list["count"], Value::from(1));
    assert_eq!(list["cases"][0]["inputs"].as_array().map(Vec::len), Some(TRANSCRIPTS.len()));

    // A part cut short is a problem naming the part, and nothing is saved.
    let r = call_typed(s.port, "POST", "/v1/cases", Some(&content_type), &body[..body.len() / 2]).unwrap();
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.json()["location"].as_str().is_some_and(|l| l.starts_with("body.part[")), "{}", r.text());
    assert_eq!(s.json("GET", "/v1/cases", b"", 200)["count"], Value::from(1));
}
