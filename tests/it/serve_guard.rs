//! `recite serve` against an attacker (issue 46), as the real binary on a loopback port: a
//! `Host` from DNS rebinding and a change posted from another site are refused on every route,
//! token or not; idle and slow connections are closed by the header timeout and capped, so
//! `/healthz` keeps answering under a 1,024-descriptor limit; a stop closes connections without
//! a request at once, lets requests in flight finish, and is handled from the moment the
//! address is printed. The checks' details are tested in process (`crates/recite-serve/src/site.rs`).

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::serve::{
    CITATIONS, Response, Server, TRANSCRIPTS, claim_set, multipart, parse, problem, read, stalled_check,
    wait_for_log,
};

/// One request over a fresh connection with exactly the header lines given (`Host` among them,
/// or not), `Connection: close` and the body's length added.
fn raw(port: u16, method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut head =
        format!("{method} {target} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).unwrap();
    let _ = s.write_all(body);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    parse(&out)
}

/// The routes an attacker's page would read or post to, with a body each takes.
fn routes(case: &str) -> Vec<(&'static str, String, Vec<u8>)> {
    let mut r = vec![
        ("GET", "/v1/cases".to_string(), Vec::new()),
        ("GET", format!("/v1/cases/{case}/inputs/0"), Vec::new()),
        ("GET", format!("/cases/{case}/export"), Vec::new()),
        ("GET", "/v1/catalog".to_string(), Vec::new()),
        ("POST", "/v1/verify".to_string(), read(CITATIONS[0])),
        ("POST", "/v1/check".to_string(), read(TRANSCRIPTS[0])),
        ("POST", "/v1/cases".to_string(), read(TRANSCRIPTS[0])),
        ("GET", "/healthz".to_string(), Vec::new()),
    ];
    if cfg!(feature = "agents") {
        let rpc = br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}"#.to_vec();
        r.push(("POST", "/a2a/jsonrpc".to_string(), rpc));
        r.push(("POST", "/mcp".to_string(), br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec()));
        r.push(("GET", "/.well-known/agent-card.json".to_string(), Vec::new()));
    }
    r
}

#[test]
fn serve_refuses_a_rebound_host_and_another_sites_changes_on_every_route() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.sqlite3").display().to_string();
    let s = Server::start(&["--ledger", &ledger]);
    let own = format!("127.0.0.1:{}", s.port);
    let own_origin = format!("http://{own}");
    let made = raw(s.port, "POST", "/v1/cases", &[("Host", &own)], &read(TRANSCRIPTS[0]));
    assert_eq!(made.status, 201, "{}", String::from_utf8_lossy(&made.body));
    let case = made.json()["id"].as_str().unwrap().to_string();

    // DNS rebinding: the browser sends the attacker's name as Host.
    let evil = format!("rebind.evil.example:{}", s.port);
    for (method, target, body) in routes(&case) {
        let r = raw(s.port, method, &target, &[("Host", &evil)], &body);
        problem(&r, 421, Some("header.host"));
        let detail = r.json()["detail"].as_str().unwrap().to_string();
        assert!(detail.contains(&evil) && detail.contains("DNS rebinding"), "{method} {target}: {detail}");
    }
    assert_eq!(raw(s.port, "GET", &format!("/v1/cases/{case}/inputs/0"), &[("Host", &own)], b"").status, 200);
    assert_eq!(
        raw(s.port, "GET", "/v1/cases", &[("Host", &format!("localhost:{}", s.port))], b"").status,
        200
    );

    // A page elsewhere posting a "simple" request (no preflight), or from an opaque origin.
    let plain = ("Content-Type", "text/plain");
    for (method, target, body) in routes(&case).into_iter().filter(|(m, _, _)| *m == "POST") {
        for origin in ["http://evil.example", "null"] {
            let r = raw(s.port, method, &target, &[("Host", &own), plain, ("Origin", origin)], &body);
            problem(&r, 403, Some("header.origin"));
        }
        let cross = [("Host", own.as_str()), ("Sec-Fetch-Site", "cross-site")];
        problem(&raw(s.port, method, &target, &cross, &body), 403, Some("header.origin"));
    }
    let (form, typed) = multipart(&[("a.sse", &read(TRANSCRIPTS[1]))]);
    let from_null = [("Host", own.as_str()), ("Content-Type", typed.as_str()), ("Origin", "null")];
    problem(&raw(s.port, "POST", "/v1/cases", &from_null, &form), 403, Some("header.origin"));
    // This server's own pages, and programs that send no Origin, go on.
    let from_page =
        [("Host", own.as_str()), ("Content-Type", typed.as_str()), ("Origin", own_origin.as_str())];
    assert_eq!(raw(s.port, "POST", "/v1/cases", &from_page, &form).status, 201);
    assert_eq!(raw(s.port, "POST", "/v1/cases", &[("Host", &own), plain], &read(TRANSCRIPTS[2])).status, 201);
    let listed = raw(s.port, "GET", "/v1/cases", &[("Host", &own)], b"").json();
    assert_eq!(
        listed["cases"].as_array().map(Vec::len),
        Some(3),
        "only the three allowed were saved: {listed}"
    );
    assert!(!s.log().contains("evil.example"), "a refused Host or Origin was logged");
}

/// With a token the same checks hold, before the token's: 421 and 403, not 401.
#[test]
fn serve_with_a_token_checks_host_and_origin_too() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let token = "s3cret-token-0123456789";
    let file = dir.path().join("token");
    std::fs::write(&file, token).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let ledger = dir.path().join("ledger.sqlite3").display().to_string();
    let s = Server::start(&["--token-file", &file.display().to_string(), "--ledger", &ledger]);
    let bearer = format!("Bearer {token}");
    let own = format!("127.0.0.1:{}", s.port);
    let evil = format!("rebind.evil.example:{}", s.port);
    let r = raw(s.port, "GET", "/v1/cases", &[("Host", &evil), ("Authorization", &bearer)], b"");
    problem(&r, 421, Some("header.host"));
    let posted =
        [("Host", own.as_str()), ("Authorization", bearer.as_str()), ("Origin", "http://evil.example")];
    problem(&raw(s.port, "POST", "/v1/cases", &posted, &read(TRANSCRIPTS[0])), 403, Some("header.origin"));
    let sent = [("Host", own.as_str()), ("Authorization", bearer.as_str())];
    assert_eq!(raw(s.port, "POST", "/v1/cases", &sent, &read(TRANSCRIPTS[0])).status, 201);
}

/// Raises this process's soft limit on open files to `n` (the test holds more connections than
/// a default 1,024), with `prlimit` (util-linux) on its own process id.
fn allow_open_files(n: u64) {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
    let line = limits.lines().find(|l| l.starts_with("Max open files")).unwrap();
    let words: Vec<&str> = line.split_whitespace().collect();
    let (soft, hard) =
        (words[3].parse::<u64>().unwrap_or(u64::MAX), words[4].parse::<u64>().unwrap_or(u64::MAX));
    if soft >= n {
        return;
    }
    assert!(hard >= n, "this test needs {n} open files; the hard limit is {hard}");
    let pid = std::process::id().to_string();
    let set = std::process::Command::new("prlimit").args(["--pid", &pid, &format!("--nofile={n}:")]).status();
    assert!(set.is_ok_and(|s| s.success()), "prlimit --pid {pid} --nofile={n}: failed");
}

/// `GET /healthz` on a fresh connection within `within`: whether it was answered 200.
fn healthy(port: u16, within: Duration) -> bool {
    let Ok(mut s) = TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), within) else { return false };
    let _ = s.set_read_timeout(Some(within));
    let head = format!("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if s.write_all(head.as_bytes()).is_err() {
        return false;
    }
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out.starts_with(b"HTTP/1.1 200")
}

#[test]
fn serve_keeps_answering_healthz_while_idle_connections_outnumber_its_descriptors() {
    allow_open_files(4096);
    let timeout = 2;
    let s = Server::start_under(&["prlimit", "--nofile=1024"], &["--header-timeout", &timeout.to_string()]);
    // 1,100 connections that send nothing: more than the server has descriptors.
    let mut idle = Vec::new();
    for _ in 0..1100 {
        if let Ok(c) =
            TcpStream::connect_timeout(&([127, 0, 0, 1], s.port).into(), Duration::from_millis(500))
        {
            idle.push(c);
        }
    }
    assert!(idle.len() >= 1000, "only {} connections were made", idle.len());
    // Those past the cap are answered 503 and closed; those within it time out; then a health
    // check is answered while the idle ones are all still connected on this side.
    let start = Instant::now();
    let limit = Duration::from_secs(timeout + 8);
    while !healthy(s.port, Duration::from_secs(1)) {
        assert!(start.elapsed() < limit, "/healthz did not answer within {limit:?}: {}", s.log());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(s.log().contains("connections open (--max-connections)"), "{}", s.log());
    assert!(!s.log().contains("Too many open files"), "{}", s.log());
    // And the idle ones were closed by the server (503, or the timeout): all were accepted
    // before the health check's connection, behind them in the backlog.
    std::thread::sleep(Duration::from_secs(timeout + 1));
    let mut open = 0;
    for c in &mut idle {
        c.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        let mut b = [0u8; 512];
        let waiting = c.read(&mut b);
        open += usize::from(
            matches!(waiting, Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)),
        );
    }
    assert_eq!(open, 0, "connections the server kept open past its header timeout");
    drop(idle);
}

/// Whether the server closed `c` within `within` while the test trickles `trickle` to it every
/// 300 ms (a slowloris) or sends nothing: how long it took.
fn closed_within(c: &mut TcpStream, trickle: &[u8], within: Duration) -> Option<Duration> {
    let start = Instant::now();
    c.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    let mut buf = [0u8; 1024];
    while start.elapsed() < within {
        if !trickle.is_empty() && c.write_all(trickle).is_err() {
            return Some(start.elapsed());
        }
        match c.read(&mut buf) {
            Ok(0) => return Some(start.elapsed()),
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return Some(start.elapsed()),
        }
    }
    None
}

#[test]
fn serve_closes_slow_and_idle_connections_after_the_header_timeout() {
    let s = Server::start(&["--header-timeout", "2"]);
    let within = Duration::from_secs(6);
    let connect = || TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    // A slowloris: a header that never ends, a line at a time.
    let mut slow = connect();
    slow.write_all(format!("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n", s.port).as_bytes()).unwrap();
    let took = closed_within(&mut slow, b"X-Slow: 1\r\n", within);
    assert!(took.is_some_and(|t| t >= Duration::from_millis(1500)), "slowloris: {took:?}");
    // A connection that sends nothing.
    let took = closed_within(&mut connect(), b"", within);
    assert!(took.is_some(), "a silent connection stayed open past {within:?}");
    // A kept-alive connection after its response: the same timeout, from the response's end.
    let mut kept = connect();
    kept.write_all(format!("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n", s.port).as_bytes())
        .unwrap();
    kept.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.ends_with(b"ok\n") {
        let n = kept.read(&mut buf).expect("the health check's answer");
        assert!(n > 0, "closed before answering");
        got.extend_from_slice(&buf[..n]);
    }
    let took = closed_within(&mut kept, b"", within);
    assert!(took.is_some(), "an idle kept-alive connection stayed open past {within:?}");
    assert_eq!(s.request("GET", "/healthz", &[], b"").status, 200);
}

#[test]
fn serve_stops_at_once_with_a_half_sent_header_and_an_idle_connection() {
    let mut s = Server::start(&[]);
    let mut half = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    half.write_all(
        format!("POST /v1/verify HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Le", s.port).as_bytes(),
    )
    .unwrap();
    let _idle = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    s.signal("TERM");
    let status = s.exited_within(Duration::from_secs(2));
    assert!(status.is_some(), "recite serve still ran 2 s after SIGTERM: {}", s.log());
    assert_eq!(status.unwrap().code(), Some(0), "{}", s.log());
    assert!(s.log().contains("recite serve: stopped"), "{}", s.log());
}

#[test]
fn serve_lets_a_request_in_flight_finish_when_stopped() {
    let mut s = Server::start(&["--time-limit", "120"]);
    let mut stuck = stalled_check(s.port, &claim_set(20_000));
    wait_for_log(&s, "POST /v1/check 200");
    s.signal("TERM");
    wait_for_log(&s, "SIGTERM: stopping");
    // Still running: the report is read to its end, then the server exits.
    assert!(s.exited_within(Duration::from_millis(300)).is_none(), "it did not wait: {}", s.log());
    stuck.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut out = Vec::new();
    let _ = stuck.read_to_end(&mut out);
    let r = parse(&out);
    assert_eq!(r.status, 200);
    assert!(r.complete, "the report in flight was cut: {}", s.log());
    let status = s.exited_within(Duration::from_secs(10));
    assert_eq!(status.and_then(|s| s.code()), Some(0), "{}", s.log());
}

#[test]
fn serve_drains_on_sighup_and_sigint_sent_as_soon_as_it_listens() {
    for signal in ["HUP", "INT"] {
        let mut s = Server::start(&[]);
        s.signal(signal);
        let status = s.exited_within(Duration::from_secs(10));
        assert_eq!(status.and_then(|st| st.code()), Some(0), "SIG{signal}: {status:?} {}", s.log());
        assert!(s.log().contains(&format!("SIG{signal}: stopping")), "{}", s.log());
        assert!(s.log().contains("recite serve: stopped"), "{}", s.log());
    }
}

/// One claim as a line of JSON: the pair `examples/citations/versant-w6-considered.json` holds.
fn one_claim() -> Vec<u8> {
    let pair: serde_json::Value = serde_json::from_slice(&read(CITATIONS[0])).unwrap();
    format!("{pair}\n").into_bytes()
}

/// A multipart check of `n` parts, one claim each, on a fresh connection: its response.
fn check_parts(port: u16, n: usize) -> Response {
    let one = one_claim();
    let names: Vec<String> = (0..n).map(|i| format!("claim-{i}.jsonl")).collect();
    let parts: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), one.as_slice())).collect();
    let (body, typed) = multipart(&parts);
    let host = format!("127.0.0.1:{port}");
    raw(port, "POST", "/v1/check", &[("Host", host.as_str()), ("Content-Type", typed.as_str())], &body)
}

/// The report of a multipart check settled every part, and names no path of the server's.
fn settled_every_part(r: &Response, n: usize) {
    let text = String::from_utf8_lossy(&r.body);
    // The data layer's own location is in every report by design (and under /tmp when the
    // checkout is); any other temporary path would be the spool's.
    let shown = match serde_json::from_slice::<serde_json::Value>(&r.body) {
        Ok(mut v) => {
            v.as_object_mut().map(|o| o.remove("data_layer"));
            v.to_string()
        }
        Err(_) => text.to_string(),
    };
    let tmp = std::env::temp_dir().display().to_string();
    assert!(!shown.contains(&tmp) && !shown.contains("/tmp/"), "a server path in the answer: {text:.2000}");
    assert_eq!(r.status, 200, "{text:.2000}");
    let report = r.json();
    let inputs = report["inputs"].as_array().unwrap();
    assert_eq!(inputs.len(), n);
    assert_eq!(report["summary"]["verdicts"]["REPRODUCED"], serde_json::json!(n), "{}", report["summary"]);
}

/// Issue 46, item 3: a part was spooled to a temporary file held open to the end of the check,
/// so the documented maximum of 1,024 parts ran out of descriptors under systemd's default
/// limit (500 "Too many open files … at path /tmp/…"), and so did four checks of 300 at once.
#[test]
fn serve_settles_the_most_parts_a_check_takes_under_a_1024_descriptor_limit() {
    let s = Server::start_under(&["prlimit", "--nofile=1024"], &["--concurrency", "4"]);
    settled_every_part(&check_parts(s.port, 1024), 1024);
    let port = s.port;
    let four: Vec<_> = (0..4).map(|_| std::thread::spawn(move || check_parts(port, 300))).collect();
    for t in four {
        settled_every_part(&t.join().unwrap(), 300);
    }
    assert!(!s.log().contains("Too many open files"), "{}", s.log());
}

/// A body that stalls (`Content-Length: 1000`, 11 bytes sent) to each agent endpoint: an answer
/// within the time limit, not a connection held for ever (on `4528a7d` A2A and MCP answered
/// nothing in 18 s under `--time-limit 10`; `/v1/check` answered 408). And a body declared over
/// the limit is refused at once, before any of it is sent.
#[cfg(feature = "agents")]
#[test]
fn serve_answers_stalled_and_oversized_agent_bodies_within_the_time_limit() {
    let s = Server::start(&["--time-limit", "3", "--max-input-size", "1MiB"]);
    let own = format!("127.0.0.1:{}", s.port);
    for target in ["/a2a/jsonrpc", "/a2a/rest/message:send", "/mcp"] {
        let mut slow = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
        let head = format!(
            "POST {target} HTTP/1.1\r\nHost: {own}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n"
        );
        slow.write_all(head.as_bytes()).unwrap();
        slow.write_all(b"{\"jsonrpc\":").unwrap();
        slow.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let start = Instant::now();
        let mut out = Vec::new();
        let _ = slow.read_to_end(&mut out);
        let took = start.elapsed();
        assert!(took < Duration::from_secs(3 + 3), "{target}: the server waited {took:?} for the body");
        let r = parse(&out);
        assert_eq!(r.status, 408, "{target}: {}", String::from_utf8_lossy(&r.body));

        // 1 GiB declared: refused before the body, in the endpoint's own error shape.
        let mut big = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
        let head = format!(
            "POST {target} HTTP/1.1\r\nHost: {own}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: 1073741824\r\nConnection: close\r\n\r\n"
        );
        big.write_all(head.as_bytes()).unwrap();
        big.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let start = Instant::now();
        let mut out = Vec::new();
        let _ = big.read_to_end(&mut out);
        assert!(start.elapsed() < Duration::from_secs(2), "{target}: 1 GiB took {:?}", start.elapsed());
        let r = parse(&out);
        assert_eq!(r.status, 413, "{target}: {}", String::from_utf8_lossy(&r.body));
        let body: serde_json::Value = serde_json::from_slice(&r.body)
            .unwrap_or_else(|e| panic!("{target}: not JSON ({e}): {}", String::from_utf8_lossy(&r.body)));
        if target != "/a2a/rest/message:send" {
            assert_eq!(body["jsonrpc"], "2.0", "{target}: {body}");
        }
    }
}
