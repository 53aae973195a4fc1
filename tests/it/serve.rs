//! `recite serve`, started as a child process on an ephemeral loopback port and called over
//! plain HTTP by a client written here, so the bytes on the wire are what is compared: every
//! report it answers is what `recite verify -` / `recite check -` print for the same input,
//! byte for byte. The SDK clients' tests are in `serve_agents.rs` (feature `agents`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{command, root, run, stdout};

/// A running `recite serve`, killed when dropped; its standard error kept line by line. Its
/// default ledger is in a folder of its own (`XDG_DATA_HOME`), never the user's.
pub(crate) struct Server {
    child: Child,
    _data_home: tempfile::TempDir,
    pub(crate) port: u16,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// `recite serve --listen 127.0.0.1:0 ARGS` from the crate root, once it listens.
    pub(crate) fn start(args: &[&str]) -> Server {
        Server::start_with(args, &[])
    }

    /// [`Server::start`] with `env` set for the server.
    pub(crate) fn start_with(args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut c = command(&["serve", "--listen", "127.0.0.1:0"]);
        c.args(args).envs(env.iter().copied());
        Server::spawn(c)
    }

    /// [`Server::start`] run by `wrapper` (`prlimit --nofile=…`), which runs the rest of its
    /// command line in its own process.
    pub(crate) fn start_under(wrapper: &[&str], args: &[&str]) -> Server {
        let base = command(&["serve", "--listen", "127.0.0.1:0"]);
        let mut c = Command::new(wrapper[0]);
        c.args(&wrapper[1..]).arg("--").arg(base.get_program()).args(base.get_args()).args(args);
        c.current_dir(root()).env("NO_COLOR", "1").env_remove("RECITE_DATA").env_remove("RECITE_CACHE");
        Server::spawn(c)
    }

    /// Starts `c` and waits until it says where it listens.
    fn spawn(mut c: Command) -> Server {
        // A test that gives no --ledger must not write the user's ~/.local/share/recite.
        let data_home = tempfile::tempdir().expect("a data home for the server");
        c.env("XDG_DATA_HOME", data_home.path());
        c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = c.spawn().expect("start recite serve");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let kept = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("listening on http://127.0.0.1:").nth(1) {
                    let port: String = rest.chars().take_while(char::is_ascii_digit).collect();
                    let _ = tx.send(port.parse::<u16>().ok());
                }
                kept.lock().unwrap().push(line);
            }
            let _ = tx.send(None);
        });
        let port = rx.recv_timeout(Duration::from_secs(120)).ok().flatten();
        let port = port.unwrap_or_else(|| panic!("recite serve did not listen: {:?}", log.lock().unwrap()));
        Server { child, _data_home: data_home, port, log }
    }

    /// The server's process id.
    #[cfg(feature = "agents")]
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    #[cfg(feature = "agents")]
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// One request; the response's status, headers (lower-case names) and body (de-chunked).
    pub(crate) fn request(
        &self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Response {
        request(self.port, method, target, headers, body)
    }

    pub(crate) fn log(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// Sends the server `signal` (`TERM`, `INT`, `HUP`), as `kill -SIGNAL` does.
    pub(crate) fn signal(&self, signal: &str) {
        let sent = Command::new("kill").args([&format!("-{signal}"), &self.child.id().to_string()]).status();
        assert!(sent.is_ok_and(|s| s.success()), "kill -{signal} failed");
    }

    /// Waits up to `within` for the server to exit: its status, or `None` if it still runs.
    pub(crate) fn exited_within(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let start = Instant::now();
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return Some(st);
            }
            if start.elapsed() >= within {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the server (SIGKILL) and waits for it.
    pub(crate) fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP response as received.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: u16,
    headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    /// Whether a chunked body ended with its last chunk (not cut short).
    pub(crate) complete: bool,
}

impl Response {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
}

/// HTTP/1.1 over a fresh connection, `Connection: close`.
fn request(port: u16, method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(300))).unwrap();
    let mut head = format!("{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("content-length")) {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).unwrap();
    // The server may answer (413) before reading all of a large body. The write side stays
    // open: the server (hyper) takes a half-closed connection for a caller that has gone.
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    parse(&raw)
}

pub(crate) fn parse(raw: &[u8]) -> Response {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a response head");
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let rest = &raw[end + 4..];
    let chunked = headers.iter().any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    if !chunked {
        return Response { status, headers, body: rest.to_vec(), complete: true };
    }
    let (mut body, mut at, mut complete) = (Vec::new(), 0, false);
    while let Some(nl) = rest[at..].windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(String::from_utf8_lossy(&rest[at..at + nl]).trim(), 16).unwrap_or(0);
        at += nl + 2;
        if size == 0 {
            complete = true;
            break;
        }
        if at + size > rest.len() {
            body.extend_from_slice(&rest[at..]);
            break;
        }
        body.extend_from_slice(&rest[at..at + size]);
        at += size + 2;
    }
    Response { status, headers, body, complete }
}

/// What the command line prints for `recite ARGS` reading `stdin`.
pub(crate) fn cli(args: &[&str], stdin: &[u8]) -> Vec<u8> {
    run(command(args), Some(stdin)).stdout
}

pub(crate) fn read(path: &str) -> Vec<u8> {
    std::fs::read(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub(crate) const CITATIONS: [&str; 3] = [
    "examples/citations/versant-w6-considered.json",
    "examples/citations/versant-w6-discrepant.json",
    "examples/citations/nhanes2-zinc.json",
];

pub(crate) const TRANSCRIPTS: [&str; 3] = [
    "examples/transcripts/a2a-v03-task.json",
    "examples/transcripts/a2a-v10-stream.sse",
    "examples/transcripts/agui-run.sse",
];

#[test]
fn serve_reports_equal_the_cli_byte_for_byte() {
    let s = Server::start(&[]);
    for path in CITATIONS {
        let body = read(path);
        for (query, args) in [
            ("", vec!["verify", "-", "--format", "json"]),
            ("?format=text", vec!["verify", "-", "--format", "text"]),
            (
                "?claim=Considered%3D44%25&claim=0.5",
                vec!["verify", "-", "--format", "json", "--claim", "Considered=44%", "--claim", "0.5"],
            ),
        ] {
            if query.contains("claim") && !path.contains("versant") {
                continue; // the measures claimed are the tracker's
            }
            let want = cli(&args, &body);
            assert!(!want.is_empty(), "the CLI wrote nothing for {args:?} on {path}");
            // Twice: the process's one engine must not answer a second request differently.
            for round in 0..2 {
                let r = s.request("POST", &format!("/v1/verify{query}"), &[], &body);
                assert_eq!(r.status, 200, "{path}{query}: {}", String::from_utf8_lossy(&r.body));
                assert!(r.header("recite-verdict").is_some());
                assert_eq!(
                    String::from_utf8_lossy(&r.body),
                    String::from_utf8_lossy(&want),
                    "POST /v1/verify{query} with {path} (round {round}) differs from recite {args:?}"
                );
            }
        }
    }
    for path in TRANSCRIPTS {
        let body = read(path);
        for format in ["json", "jsonl", "html", "markdown", "junit", "text"] {
            let want = cli(&["check", "-", "--format", format], &body);
            for round in 0..2 {
                let r = s.request("POST", &format!("/v1/check?format={format}"), &[], &body);
                assert_eq!(r.status, 200, "{path} {format}: {}", String::from_utf8_lossy(&r.body));
                assert!(r.complete, "{path} {format}: the streamed report was cut short");
                assert_eq!(
                    String::from_utf8_lossy(&r.body),
                    String::from_utf8_lossy(&want),
                    "POST /v1/check?format={format} with {path} (round {round}) differs from recite check -"
                );
            }
        }
    }
    // The name a report gives the input is the caller's label, never a path read.
    let body = read(TRANSCRIPTS[0]);
    let r = s.request("POST", "/v1/check?name=%2Fetc%2Fpasswd", &[], &body);
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["inputs"][0]["file"], "/etc/passwd");
    assert_eq!(
        r.json()["summary"],
        serde_json::from_slice::<Value>(&cli(&["check", "-", "--format", "json"], &body)).unwrap()["summary"]
    );
    // Request bodies never reach the log.
    let log = s.log();
    assert!(log.contains("POST /v1/check 200"), "{log}");
    assert!(!log.contains("Versant"), "a request body was logged: {log}");
}

/// The warm job table never answers from files that changed: one server asked the same
/// citation before and after its table is rewritten in place (same path and inode, other bytes),
/// then replaced by a rename, answers each time what a fresh `recite verify` answers on the files
/// as they are then; asked twice, the second answer (from the warm table) is the same bytes.
#[test]
fn serve_answers_from_the_edited_table_not_from_the_warm_sums() {
    let dir = tempfile::tempdir().unwrap();
    let versant = dir.path().join("data/versant");
    std::fs::create_dir_all(&versant).unwrap();
    for f in ["study.toml", "versant_flat.parquet"] {
        std::fs::copy(root().join("datasets/versant").join(f), versant.join(f)).unwrap();
    }
    // Another tracker from recite's generator: 20,000 interviews, so other figures for W6.
    let other = dir.path().join("other");
    let made = crate::support::recite(&[
        "generate",
        "versant",
        "--rows",
        "20000",
        "--output",
        other.to_str().unwrap(),
    ]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    let s = Server::start(&["--data", data]);
    let body = read(CITATIONS[0]);
    let fresh =
        || String::from_utf8(cli(&["verify", "-", "--format", "json", "--data", data], &body)).unwrap();
    let ask = || {
        let r = s.request("POST", "/v1/verify", &[], &body);
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        String::from_utf8(r.body).unwrap()
    };
    let table = versant.join("versant_flat.parquet");
    let before = fresh();
    assert!(before.contains("REPRODUCED"), "{before}");
    assert_eq!(ask(), before);
    assert_eq!(ask(), before, "the second answer, from the warm table");
    std::fs::write(&table, std::fs::read(other.join("versant_flat.parquet")).unwrap()).unwrap();
    let edited = fresh();
    assert_ne!(edited, before, "the other tracker must give another report");
    assert_eq!(ask(), edited, "after the table was rewritten in place");
    assert_eq!(ask(), edited);
    let new = versant.join("incoming.tmp");
    std::fs::copy(root().join("datasets/versant/versant_flat.parquet"), &new).unwrap();
    std::fs::rename(&new, &table).unwrap();
    assert_eq!(ask(), before, "after the table was replaced by a rename");
}

/// A `multipart/form-data` body of `files` (name, bytes), one part each, and its content type.
pub(crate) fn multipart(files: &[(&str, &[u8])]) -> (Vec<u8>, String) {
    let boundary = "recite-test-boundary-7d1f";
    let mut body = Vec::new();
    for (name, bytes) in files {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"transcript\"; filename=\"{name}\"\r\n\
                 Content-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (body, format!("multipart/form-data; boundary={boundary}"))
}

#[test]
fn serve_checks_a_multipart_body_as_the_cli_checks_those_files() {
    let s = Server::start(&[]);
    let files: Vec<(&str, Vec<u8>)> = TRANSCRIPTS.iter().map(|p| (*p, read(p))).collect();
    let parts: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (*p, b.as_slice())).collect();
    let (body, content_type) = multipart(&parts);
    for format in ["json", "markdown"] {
        let mut args = vec!["check"];
        args.extend(TRANSCRIPTS);
        args.extend(["--format", format]);
        let want = stdout(&run(command(&args), None));
        let r = s.request(
            "POST",
            &format!("/v1/check?format={format}"),
            &[("content-type", &content_type)],
            &body,
        );
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        assert_eq!(String::from_utf8_lossy(&r.body), want, "multipart {format} differs from recite {args:?}");
    }
    // A multipart body with no part, or one cut inside a part, is a problem naming where.
    let r = s.request(
        "POST",
        "/v1/check",
        &[("content-type", &content_type)],
        b"--recite-test-boundary-7d1f--\r\n",
    );
    problem(&r, 400, Some("body"));
    let cut = &body[..body.len() / 2];
    let r = s.request("POST", "/v1/check", &[("content-type", &content_type)], cut);
    assert_eq!(r.status, 400, "{}", String::from_utf8_lossy(&r.body));
    assert!(r.json()["location"].as_str().is_some_and(|l| l.starts_with("body.part[")), "{}", r.json());
    let r = s.request("POST", "/v1/check", &[("content-type", "multipart/form-data")], &body);
    problem(&r, 400, Some("header.content-type"));
}

#[test]
fn serve_catalog_and_extractors_list_what_the_cli_lists() {
    let s = Server::start(&[]);
    let r = s.request("GET", "/v1/catalog", &[], b"");
    assert_eq!(r.status, 200);
    let cat = r.json();
    let names: Vec<&str> =
        cat["studies"].as_array().unwrap().iter().filter_map(|s| s["study"]["name"].as_str()).collect();
    let shown = stdout(&run(command(&["catalog", "show"]), None));
    assert!(!names.is_empty());
    for n in &names {
        assert!(shown.contains(n), "{n} is not in `recite catalog show`");
    }
    // The server's own file locations are left out.
    let text = String::from_utf8_lossy(&r.body);
    assert!(!text.contains(&root().display().to_string()), "the catalog shows server paths: {text}");
    let r = s.request("GET", "/v1/extractors", &[], b"");
    assert_eq!(r.status, 200);
    let listed = stdout(&run(command(&["extractors"]), None));
    let ex = r.json();
    let fns: Vec<&str> =
        ex["extractors"].as_array().unwrap().iter().filter_map(|e| e["name"].as_str()).collect();
    assert!(fns.contains(&"extractFunnel"), "{fns:?}");
    for f in fns {
        assert!(listed.contains(f), "{f} is not in `recite extractors`");
    }
    assert_eq!(s.request("GET", "/healthz", &[], b"").status, 200);
    assert_eq!(s.request("GET", "/readyz", &[], b"").status, 200);
}

/// A problem+json response: its status, and the member `location`.
pub(crate) fn problem(r: &Response, status: u16, location: Option<&str>) {
    assert_eq!(r.status, status, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.header("content-type"), Some("application/problem+json"));
    let p = r.json();
    assert_eq!(p["status"], status);
    assert!(p["title"].is_string() && p["detail"].is_string(), "{p}");
    assert_eq!(p["location"].as_str(), location, "{p}");
}

#[test]
fn serve_errors_are_problem_json_with_their_location() {
    let s = Server::start(&["--max-input-size", "2KiB"]);
    let citation = read(CITATIONS[0]);
    problem(&s.request("POST", "/v1/verify?colour=red", &[], &citation), 400, Some("query.colour"));
    problem(&s.request("POST", "/v1/check?format=pdf", &[], &citation), 400, Some("query.format"));
    problem(
        &s.request("POST", "/v1/verify?format=json&format=text", &[], &citation),
        400,
        Some("query.format"),
    );
    problem(&s.request("POST", "/v1/verify?claim=forty", &[], &citation), 400, Some("claim"));
    problem(&s.request("POST", "/v1/check?name=", &[], &citation), 400, Some("query.name"));
    problem(&s.request("GET", "/v2/everything", &[], b""), 404, Some("path"));
    problem(&s.request("GET", "/v1/verify", &[], b""), 405, Some("method"));
    // Over the size limit, declared or not.
    let big = vec![b' '; 3 << 10];
    problem(&s.request("POST", "/v1/check", &[], &big), 413, Some("body"));
    let chunked = format!("{:x}\r\n{}\r\n0\r\n\r\n", big.len(), String::from_utf8_lossy(&big));
    problem(
        &s.request(
            "POST",
            "/v1/check",
            &[("Transfer-Encoding", "chunked"), ("Content-Length", "")],
            chunked.as_bytes(),
        ),
        413,
        Some("body"),
    );
    // A body cut short (fewer bytes than declared, then the caller goes away) is never settled.
    let mut cut = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    let head = "POST /v1/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n";
    cut.write_all(head.as_bytes()).unwrap();
    cut.write_all(&citation[..100]).unwrap();
    cut.shutdown(std::net::Shutdown::Write).unwrap();
    let mut raw = Vec::new();
    let _ = cut.read_to_end(&mut raw);
    if !raw.is_empty() {
        problem(&parse(&raw), 400, Some("body"));
    }
    assert!(!s.log().contains("POST /v1/verify 200"), "a body cut short was settled: {}", s.log());
    // Not JSON is a settlement (INVALID), as the CLI says, not an error.
    let r = s.request("POST", "/v1/verify", &[], b"{not json");
    assert_eq!(r.status, 200);
    assert_eq!(r.body, cli(&["verify", "-", "--format", "json"], b"{not json"));
    assert_eq!(r.header("recite-verdict"), Some("INVALID"));
}

#[test]
fn serve_refuses_a_non_loopback_address_without_a_token() {
    let out = run(command(&["serve", "--listen", "0.0.0.0:0"]), None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("refusing to listen on 0.0.0.0:0") && err.contains("--token-file"), "{err}");
}

/// A token file only its owner can read.
fn token_file(dir: &Path, token: &str, mode: u32) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("token");
    std::fs::write(&p, format!("{token}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    p
}

#[test]
fn serve_with_a_token_answers_only_requests_that_carry_it() {
    let dir = tempfile::tempdir().unwrap();
    let token = "s3cret-token-0123456789";
    let open = token_file(dir.path(), token, 0o644);
    let out = run(command(&["serve", "--token-file", &open.display().to_string()]), None);
    assert_eq!(out.status.code(), Some(2), "a token file others can read is refused");
    assert!(String::from_utf8_lossy(&out.stderr).contains("chmod 600"));
    let file = token_file(dir.path(), token, 0o600);
    let s = Server::start(&["--token-file", &file.display().to_string()]);
    problem(&s.request("GET", "/v1/catalog", &[], b""), 401, Some("header.authorization"));
    let wrong = "Bearer s3cret-token-012345678X";
    problem(
        &s.request("GET", "/v1/catalog", &[("Authorization", wrong)], b""),
        401,
        Some("header.authorization"),
    );
    #[cfg(feature = "agents")]
    {
        problem(
            &s.request("POST", "/mcp", &[("Authorization", wrong)], b"{}"),
            401,
            Some("header.authorization"),
        );
        problem(&s.request("POST", "/a2a/jsonrpc", &[], b"{}"), 401, Some("header.authorization"));
    }
    let right = format!("Bearer {token}");
    assert_eq!(s.request("GET", "/v1/catalog", &[("Authorization", &right)], b"").status, 200);
    // The scheme is matched without regard to case (RFC 9110 §11.1), as clients may send it.
    for scheme in ["bearer", "BEARER", "bEaReR"] {
        let sent = format!("{scheme}  {token}");
        assert_eq!(s.request("GET", "/v1/catalog", &[("Authorization", &sent)], b"").status, 200, "{scheme}");
    }
    let basic = format!("Basic {token}");
    problem(
        &s.request("GET", "/v1/catalog", &[("Authorization", &basic)], b""),
        401,
        Some("header.authorization"),
    );
    assert_eq!(s.request("GET", "/healthz", &[], b"").status, 200);
    // The card is public and declares the scheme.
    #[cfg(feature = "agents")]
    {
        let card = s.request("GET", "/.well-known/agent-card.json", &[], b"");
        assert_eq!(card.status, 200);
        let card = card.json();
        assert!(card["securitySchemes"]["bearer"].is_object(), "{card}");
    }
    assert!(!s.log().contains(token), "the token was logged");
}

/// With a token, a browser signs in once at `/signin` and carries a session cookie (a digest of
/// the token, never the token); a change made with the cookie must come from this server's own
/// pages; a page asked for without either is sent to the form.
#[test]
fn serve_with_a_token_lets_a_browser_sign_in_for_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let token = "s3cret-token-0123456789";
    let file = token_file(dir.path(), token, 0o600);
    let ledger = dir.path().join("ledger.sqlite3");
    let s = Server::start(&[
        "--token-file",
        &file.display().to_string(),
        "--ledger",
        &ledger.display().to_string(),
    ]);
    let html = [("Accept", "text/html,application/xhtml+xml")];
    let page = s.request("GET", "/", &html, b"");
    assert_eq!(page.status, 303, "a page without the token goes to the form");
    assert_eq!(page.header("location"), Some("/signin"));
    let form = s.request("GET", "/signin", &[], b"");
    assert_eq!(form.status, 200);
    assert!(String::from_utf8_lossy(&form.body).contains("name=\"token\""));
    assert_eq!(s.request("GET", "/assets/workbench.css", &[], b"").status, 200, "the form's style is public");
    problem(&s.request("GET", "/v1/cases", &html, b""), 401, Some("header.authorization"));

    let form_type = [("Content-Type", "application/x-www-form-urlencoded")];
    let wrong = s.request("POST", "/signin", &form_type, b"token=s3cret-token-012345678X");
    assert_eq!(wrong.status, 401);
    assert!(wrong.header("set-cookie").is_none());
    let signed = s.request("POST", "/signin", &form_type, format!("token={token}").as_bytes());
    assert_eq!(signed.status, 303);
    let cookie = signed.header("set-cookie").expect("a session cookie").to_string();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
    assert!(!cookie.contains(token), "the cookie holds the token: {cookie}");
    let session = cookie.split(';').next().unwrap().to_string();

    let with = [("Cookie", session.as_str()), ("Accept", "text/html")];
    assert_eq!(s.request("GET", "/", &with, b"").status, 200);
    assert_eq!(s.request("GET", "/v1/catalog", &with, b"").status, 200);
    let body = read(TRANSCRIPTS[0]);
    let port = s.port.to_string();
    let own = format!("http://127.0.0.1:{port}");
    let foreign = [("Cookie", session.as_str()), ("Origin", "http://evil.example")];
    problem(&s.request("POST", "/v1/cases", &foreign, &body), 403, Some("header.origin"));
    let from_page = [("Cookie", session.as_str()), ("Origin", own.as_str())];
    assert_eq!(s.request("POST", "/v1/cases", &from_page, &body).status, 201);
    let forged =
        [("Cookie", "recite_session=0000000000000000000000000000000000000000000000000000000000000000")];
    problem(&s.request("GET", "/v1/cases", &forged, b""), 401, Some("header.authorization"));
    assert!(!s.log().contains(token), "the token was logged");

    // Signed in, the pages offer sign-out; it expires the cookie and goes back to the index,
    // which asks for the token again. The pages' icon is one their policies allow.
    let index = s.request("GET", "/", &with, b"");
    assert!(String::from_utf8_lossy(&index.body).contains("action=\"/signout\""), "a sign-out button");
    let out = s.request("POST", "/signout", &from_page, b"");
    assert_eq!((out.status, out.header("location")), (303, Some("/")));
    let expired = out.header("set-cookie").expect("the cookie expired").to_string();
    assert!(expired.starts_with("recite_session=;") && expired.contains("Max-Age=0"), "{expired}");
    assert_eq!(s.request("GET", "/assets/favicon.svg", &[], b"").status, 200, "the icon is public");
    let form = s.request("GET", "/signin", &[], b"");
    assert!(form.header("content-security-policy").unwrap().contains("img-src 'self'"));
    assert!(String::from_utf8_lossy(&form.body).contains("href=\"/assets/favicon.svg\""));

    // Behind a proxy (https, Host rewritten): the cookie is Secure, and the pages' Origin is the
    // public URL's.
    let public = "https://recite.example.org";
    let p = Server::start(&[
        "--token-file",
        &file.display().to_string(),
        "--ledger",
        &ledger.display().to_string(),
        "--public-url",
        &format!("{public}/"),
    ]);
    let signed = p.request("POST", "/signin", &form_type, format!("token={token}").as_bytes());
    let cookie = signed.header("set-cookie").expect("a session cookie").to_string();
    assert!(cookie.split(';').any(|a| a.trim() == "Secure"), "{cookie}");
    let session = cookie.split(';').next().unwrap().to_string();
    let proxied = [("Cookie", session.as_str()), ("Origin", public)];
    assert_eq!(p.request("POST", "/v1/cases", &proxied, &body).status, 201);
    let foreign = [("Cookie", session.as_str()), ("Origin", "https://recite.example.org.evil.example")];
    problem(&p.request("POST", "/v1/cases", &foreign, &body), 403, Some("header.origin"));
}

#[test]
fn serve_stops_on_sigterm_and_exits_0() {
    let mut s = Server::start(&[]);
    assert_eq!(s.request("GET", "/healthz", &[], b"").status, 200);
    let killed = Command::new("kill").args(["-TERM", &s.child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let start = Instant::now();
    let status = loop {
        if let Some(st) = s.child.try_wait().unwrap() {
            break st;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "recite serve did not stop within 30 s of SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0), "{}", s.log());
    assert!(s.log().contains("recite serve: stopped"), "{}", s.log());
}

/// A claim set of `count` claims (`recite generate claims`): a check long enough to watch.
pub(crate) fn claim_set(count: usize) -> Vec<u8> {
    let body = cli(&["generate", "claims", "--count", &count.to_string()], b"");
    assert!(body.len() > count * 100, "recite generate claims wrote {} bytes", body.len());
    body
}

/// Sends a check of `body` asking for JSON lines, and does not read the report: the check
/// stalls once the connection's buffers are full, holding its turn.
pub(crate) fn stalled_check(port: u16, body: &[u8]) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let head = format!(
        "POST /v1/check?format=jsonl HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    s
}

/// Waits until the server's log has `line`.
pub(crate) fn wait_for_log(s: &Server, line: &str) {
    let start = Instant::now();
    while !s.log().contains(line) {
        assert!(start.elapsed() < Duration::from_secs(240), "no {line:?} in the log: {}", s.log());
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Polls `POST /v1/verify` until it is answered 200, within `within`.
fn verify_until_ok(s: &Server, within: Duration) -> Duration {
    let (start, citation) = (Instant::now(), read(CITATIONS[0]));
    loop {
        let r = s.request("POST", "/v1/verify", &[], &citation);
        if r.status == 200 {
            return start.elapsed();
        }
        assert_eq!(r.status, 503, "{}", String::from_utf8_lossy(&r.body));
        assert!(start.elapsed() < within, "no turn came back within {within:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn serve_beyond_its_concurrency_and_queue_answers_503_with_retry_after() {
    let s = Server::start(&["--concurrency", "1", "--queue", "0", "--time-limit", "600"]);
    let stuck = stalled_check(s.port, &claim_set(20_000));
    wait_for_log(&s, "POST /v1/check 200");
    let r = s.request("POST", "/v1/verify", &[], &read(CITATIONS[0]));
    problem(&r, 503, None);
    assert_eq!(r.header("retry-after"), Some("1"));
    // Health checks and listings take no turn.
    assert_eq!(s.request("GET", "/v1/catalog", &[], b"").status, 200);
    // The caller going away stops its check and gives the turn back.
    drop(stuck);
    verify_until_ok(&s, Duration::from_secs(60));
}

#[test]
fn serve_time_limit_frees_the_turn_of_a_caller_that_stops_reading() {
    let s = Server::start(&["--concurrency", "1", "--queue", "0", "--time-limit", "20"]);
    let mut stuck = stalled_check(s.port, &claim_set(20_000));
    wait_for_log(&s, "POST /v1/check 200");
    // The stalled check stops at its time limit, while its caller is still connected.
    verify_until_ok(&s, Duration::from_secs(90));
    stuck.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut raw = Vec::new();
    let _ = stuck.read_to_end(&mut raw);
    let r = parse(&raw);
    assert_eq!(r.status, 200);
    assert!(!r.complete, "a report stopped by the time limit must not end like a whole one");
}

#[test]
fn serve_answers_504_when_a_check_passes_its_time_limit() {
    let s = Server::start(&["--time-limit", "1"]);
    // A JSON report is written at the end (its totals come first): nothing before the limit.
    let r = s.request("POST", "/v1/check?format=json", &[], &claim_set(20_000));
    problem(&r, 504, None);
}

/// Every `$ref` in `v` that points into `doc` (`#/…`), unresolved.
fn dangling(doc: &Value, v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                match (k.as_str(), x.as_str()) {
                    ("$ref", Some(r)) if r.starts_with('#') => {
                        if doc.pointer(&r[1..]).is_none() {
                            out.push(r.to_string());
                        }
                    }
                    _ => dangling(doc, x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| dangling(doc, x, out)),
        _ => {}
    }
}

#[test]
fn serve_openapi_describes_the_api_with_the_committed_report_schemas() {
    let s = Server::start(&[]);
    let r = s.request("GET", "/v1/openapi.json", &[], b"");
    assert_eq!(r.status, 200);
    let doc = r.json();
    assert_eq!(doc["openapi"], "3.1.0");
    for path in [
        "/v1/verify",
        "/v1/check",
        "/v1/catalog",
        "/v1/extractors",
        "/healthz",
        "/readyz",
        "/v1/cases",
        "/v1/cases/{id}",
        "/v1/cases/{id}/alternatives",
        "/v1/cases/{id}/whatif",
    ] {
        assert!(doc["paths"][path].is_object(), "{path} is not described");
    }
    let mut missing = Vec::new();
    dangling(&doc, &doc, &mut missing);
    assert!(missing.is_empty(), "references that resolve to nothing: {missing:?}");
    // The report schemas are the committed ones (docs/, written by the report_schema test),
    // moved under components.
    for (name, file) in
        [("Report", "docs/report.schema.json"), ("ReportLine", "docs/report-lines.schema.json")]
    {
        let committed = String::from_utf8(read(file)).unwrap();
        let moved = committed.replace("\"#/$defs/", &format!("\"#/components/schemas/{name}/$defs/"));
        let mut want: Value = serde_json::from_str(&moved).unwrap();
        want.as_object_mut().unwrap().remove("$schema");
        assert_eq!(doc["components"]["schemas"][name], want, "{name} differs from {file}");
    }
    // And a report the service answers is valid by the document's own schema.
    let mut schema = doc.clone();
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema".into();
    schema["$ref"] = "#/components/schemas/Report".into();
    let validator = jsonschema::validator_for(&schema).expect("the document is a usable JSON Schema");
    let report = s.request("POST", "/v1/check", &[], &read(TRANSCRIPTS[1])).json();
    let errors: Vec<String> = validator.iter_errors(&report).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn serve_answers_408_to_a_body_that_does_not_arrive_within_the_time_limit() {
    let s = Server::start(&["--time-limit", "2"]);
    let mut slow = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    let head =
        "POST /v1/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n";
    slow.write_all(head.as_bytes()).unwrap();
    slow.write_all(&read(CITATIONS[0])[..100]).unwrap();
    // The connection stays open, the rest of the body never comes.
    slow.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let start = Instant::now();
    let mut raw = Vec::new();
    let _ = slow.read_to_end(&mut raw);
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "the server waited {:?} for the body",
        start.elapsed()
    );
    problem(&parse(&raw), 408, Some("body"));
}

/// The body's time limit is counted once, from the header: a caller that keeps trickling a byte
/// every half second into a body it never finishes is answered 408 at the limit, where a timer
/// restarted at every chunk (tower-http's `RequestBodyTimeoutLayer`) would read it for ever.
#[test]
fn serve_answers_408_to_a_body_trickled_past_the_time_limit() {
    let s = Server::start(&["--time-limit", "2"]);
    let mut slow = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    let head =
        "POST /v1/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n";
    slow.write_all(head.as_bytes()).unwrap();
    slow.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    let start = Instant::now();
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    while start.elapsed() < Duration::from_secs(30) {
        match slow.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            // Nothing yet: one more byte of the body, as a slow sender would.
            Err(_) => {
                if slow.write_all(b" ").is_err() {
                    break;
                }
            }
        }
    }
    let took = start.elapsed();
    assert!(took < Duration::from_secs(6), "the server read a trickled body for {took:?}");
    problem(&parse(&raw), 408, Some("body"));
}
