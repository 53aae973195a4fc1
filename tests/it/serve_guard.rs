//! `recite serve` against an attacker (issue 46), as the real binary on a loopback port: a
//! `Host` from DNS rebinding and a change posted from another site are refused on every route,
//! token or not. The checks' details are tested in process (`src/cmd/serve/server/site.rs`).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::serve::{CITATIONS, Response, Server, TRANSCRIPTS, multipart, parse, problem, read};

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
