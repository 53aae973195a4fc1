//! The HTML report as a browser sees it: `recite check … --format html` rendered in headless
//! Chromium (Debian's `chromium`), the DOM it dumps parsed and checked.
//!
//! - the example transcripts: one `.claim` per claim of the JSON report, a verdict badge beside
//!   every cited number, the conversation's text, the summary counts;
//! - a hostile transcript (`tests/fixtures/html/hostile-a2a-v03.json.in`): markup in text parts,
//!   result keys, message ids and citation fields stays text, and the page loads nothing (a
//!   loopback listener sees no connection, while a control page without recite does reach it);
//! - a MOCA log whose Reader record holds `<script>` and a `javascript:` link
//!   (`tests/fixtures/html/moca-hostile-record.jsonl`): inert, trust shown by the client rules.
//!
//! The page as recite wrote it (the CSP first, nothing active, hostile text escaped) is checked
//! always; without Chromium the rendering half says it was skipped, unless
//! `RECITE_REQUIRE_CHROMIUM` is set (CI sets it once it has installed Chromium), when it fails.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{recite, root};

const VERDICTS: [&str; 5] = ["INVALID", "UNVERIFIABLE", "DISCREPANT", "BASE_MISMATCH", "REPRODUCED"];
const TITLE: &str = "recite report";
const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

// ---------------------------------------------------------------------------------------------
// Running recite and Chromium

/// `recite check INPUTS --format json`: the exit code and the report.
fn check_json(inputs: &[&str]) -> (i32, Value) {
    let mut args = vec!["check"];
    args.extend_from_slice(inputs);
    args.extend_from_slice(&["--format", "json"]);
    let out = recite(&args);
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("JSON report: {e}\nstderr: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().expect("recite exited"), report)
}

/// `recite check INPUTS --format html -o OUT`: the exit code and the page.
fn check_html(inputs: &[&str], out: &Path) -> (i32, String) {
    let mut args = vec!["check"];
    args.extend_from_slice(inputs);
    let o = out.to_str().expect("UTF-8 temp path");
    args.extend_from_slice(&["--format", "html", "-o", o]);
    let run = recite(&args);
    let code = run.status.code().expect("recite exited");
    assert!(
        code == 0 || code == 1,
        "recite {args:?} exited {code}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let html = std::fs::read_to_string(out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    (code, html)
}

/// Headless Chromium, or `None` (after saying so) when it is not installed and not required.
fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::var_os("PATH")
            .into_iter()
            .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        let required = std::env::var_os("RECITE_REQUIRE_CHROMIUM").is_some_and(|v| !v.is_empty());
        assert!(
            !required,
            "RECITE_REQUIRE_CHROMIUM is set but chromium is not installed (apt-get install chromium)"
        );
        // Straight to the process's stderr: the test harness captures `eprintln!`.
        let _ = writeln!(
            std::io::stderr(),
            "skipped: chromium not installed (Debian's `chromium` renders the HTML report in these tests)"
        );
    }
    found
}

/// The DOM Chromium builds from `page` (a local file), serialised after load.
fn dump_dom(browser: &Path, page: &Path) -> String {
    let profile = tempfile::tempdir().expect("temp dir");
    let url = format!("file://{}", page.canonicalize().expect("page path").display());
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--no-proxy-server",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--virtual-time-budget=2000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", browser.display()));
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).map(|_| s)
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 120 s on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let dom = out.join().expect("stdout reader").expect("chromium's DOM is UTF-8");
    let err = err.join().expect("stderr reader");
    assert!(status.success() && dom.contains("</html>"), "chromium {status} on {url}\nstderr:\n{err}");
    dom
}

/// A loopback listener that counts connections (and keeps their request lines) until stopped.
struct Listener {
    port: u16,
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Vec<String>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Listener {
    fn start() -> Listener {
        let socket = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        socket.set_nonblocking(true).expect("non-blocking listener");
        let port = socket.local_addr().expect("local address").port();
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (s, v) = (stop.clone(), seen.clone());
        let thread = std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(300);
            while !s.load(Ordering::SeqCst) && Instant::now() < deadline {
                match socket.accept() {
                    Ok((mut conn, _)) => {
                        let _ = conn.set_nonblocking(false);
                        let _ = conn.set_read_timeout(Some(Duration::from_millis(500)));
                        let mut buf = [0u8; 256];
                        let n = conn.read(&mut buf).unwrap_or(0);
                        let line =
                            String::from_utf8_lossy(&buf[..n]).lines().next().unwrap_or("").to_string();
                        v.lock().unwrap().push(if line.is_empty() {
                            "(connection, no request)".into()
                        } else {
                            line
                        });
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(10))
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Listener { port, stop, seen, thread: Some(thread) }
    }

    /// Stops listening (after a grace period for late connections) and returns what came in.
    fn finish(mut self) -> Vec<String> {
        std::thread::sleep(Duration::from_millis(500));
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.join().expect("listener thread");
        }
        self.seen.lock().unwrap().clone()
    }
}

// ---------------------------------------------------------------------------------------------
// A small parser for the DOM Chromium serialises (well-formed: every non-void element closed,
// attribute values double-quoted, `&`, `<`, `>`, `"` and no-break spaces escaped).

#[derive(Debug)]
enum Node {
    Element { tag: String, attrs: Vec<(String, String)>, children: Vec<usize>, parent: usize },
    Text { text: String, parent: usize },
}

struct Dom {
    nodes: Vec<Node>,
}

const VOID: [&str; 14] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track",
    "wbr",
];
const RAW: [&str; 4] = ["script", "style", "textarea", "title"];

fn decode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let end = rest.find(';').filter(|&e| e <= 10);
        let decoded = end.and_then(|e| {
            let name = &rest[1..e];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" | "#39" => Some('\''),
                "nbsp" => Some('\u{a0}'),
                _ if name.starts_with("#x") || name.starts_with("#X") => {
                    u32::from_str_radix(&name[2..], 16).ok().and_then(char::from_u32)
                }
                _ if name.starts_with('#') => name[1..].parse().ok().and_then(char::from_u32),
                _ => None,
            };
            c.map(|c| (c, e))
        });
        match decoded {
            Some((c, e)) => {
                out.push(c);
                rest = &rest[e + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

impl Dom {
    fn parse(html: &str) -> Dom {
        let mut nodes = vec![Node::Element {
            tag: "#document".into(),
            attrs: Vec::new(),
            children: Vec::new(),
            parent: 0,
        }];
        let mut stack = vec![0usize];
        let b = html.as_bytes();
        let mut i = 0;
        let push = |nodes: &mut Vec<Node>, stack: &[usize], node: Node| -> usize {
            let id = nodes.len();
            let parent = *stack.last().unwrap();
            nodes.push(node);
            if let Node::Element { children, .. } = &mut nodes[parent] {
                children.push(id);
            }
            id
        };
        while i < b.len() {
            if b[i] != b'<' {
                let end = html[i..].find('<').map_or(html.len(), |e| i + e);
                let parent = *stack.last().unwrap();
                push(&mut nodes, &stack, Node::Text { text: decode(&html[i..end]), parent });
                i = end;
                continue;
            }
            if html[i..].starts_with("<!--") {
                i = html[i..].find("-->").map_or(html.len(), |e| i + e + 3);
                continue;
            }
            if html[i..].starts_with("<!") || html[i..].starts_with("<?") {
                i = html[i..].find('>').map_or(html.len(), |e| i + e + 1);
                continue;
            }
            if html[i..].starts_with("</") {
                let end = html[i..].find('>').map_or(html.len(), |e| i + e);
                let tag = html[i + 2..end].trim().to_ascii_lowercase();
                if let Some(pos) = stack
                    .iter()
                    .rposition(|&n| matches!(&nodes[n], Node::Element { tag: t, .. } if *t == tag))
                    && pos > 0
                {
                    stack.truncate(pos);
                }
                i = end + 1;
                continue;
            }
            // A start tag.
            let mut j = i + 1;
            while j < b.len() && !b[j].is_ascii_whitespace() && b[j] != b'>' && b[j] != b'/' {
                j += 1;
            }
            let tag = html[i + 1..j].to_ascii_lowercase();
            let mut attrs = Vec::new();
            loop {
                while j < b.len() && (b[j].is_ascii_whitespace() || b[j] == b'/') {
                    j += 1;
                }
                if j >= b.len() || b[j] == b'>' {
                    j += 1;
                    break;
                }
                let start = j;
                while j < b.len() && !b[j].is_ascii_whitespace() && !matches!(b[j], b'=' | b'>' | b'/') {
                    j += 1;
                }
                let name = html[start..j].to_ascii_lowercase();
                let mut value = String::new();
                if j < b.len() && b[j] == b'=' {
                    j += 1;
                    if j < b.len() && (b[j] == b'"' || b[j] == b'\'') {
                        let q = b[j] as char;
                        let end = html[j + 1..].find(q).map_or(html.len(), |e| j + 1 + e);
                        value = decode(&html[j + 1..end]);
                        j = end + 1;
                    } else {
                        let start = j;
                        while j < b.len() && !b[j].is_ascii_whitespace() && b[j] != b'>' {
                            j += 1;
                        }
                        value = decode(&html[start..j]);
                    }
                }
                attrs.push((name, value));
            }
            let parent = *stack.last().unwrap();
            let id = push(
                &mut nodes,
                &stack,
                Node::Element { tag: tag.clone(), attrs, children: Vec::new(), parent },
            );
            i = j.min(html.len());
            if RAW.contains(&tag.as_str()) {
                let close = format!("</{tag}");
                let end = html[i..].to_ascii_lowercase().find(&close).map_or(html.len(), |e| i + e);
                if end > i {
                    let text = if tag == "script" || tag == "style" {
                        html[i..end].to_string()
                    } else {
                        decode(&html[i..end])
                    };
                    nodes.push(Node::Text { text, parent: id });
                    let t = nodes.len() - 1;
                    if let Node::Element { children, .. } = &mut nodes[id] {
                        children.push(t);
                    }
                }
                i = html[end..].find('>').map_or(html.len(), |e| end + e + 1);
            } else if !VOID.contains(&tag.as_str()) {
                stack.push(id);
            }
        }
        Dom { nodes }
    }

    fn elements(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.nodes.len()).filter(|&n| n > 0 && matches!(self.nodes[n], Node::Element { .. }))
    }

    fn tag(&self, n: usize) -> &str {
        match &self.nodes[n] {
            Node::Element { tag, .. } => tag,
            Node::Text { .. } => "#text",
        }
    }

    fn attrs(&self, n: usize) -> &[(String, String)] {
        match &self.nodes[n] {
            Node::Element { attrs, .. } => attrs,
            Node::Text { .. } => &[],
        }
    }

    fn attr(&self, n: usize, name: &str) -> Option<&str> {
        self.attrs(n).iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    fn has_class(&self, n: usize, class: &str) -> bool {
        self.attr(n, "class").is_some_and(|c| c.split_ascii_whitespace().any(|x| x == class))
    }

    fn parent(&self, n: usize) -> usize {
        match &self.nodes[n] {
            Node::Element { parent, .. } | Node::Text { parent, .. } => *parent,
        }
    }

    fn children(&self, n: usize) -> &[usize] {
        match &self.nodes[n] {
            Node::Element { children, .. } => children,
            Node::Text { .. } => &[],
        }
    }

    /// Descendants of `n` (not `n`), in document order.
    fn descendants(&self, n: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut todo: Vec<usize> = self.children(n).iter().rev().copied().collect();
        while let Some(x) = todo.pop() {
            out.push(x);
            todo.extend(self.children(x).iter().rev());
        }
        out
    }

    /// Element descendants of `n` with `class`.
    fn find(&self, n: usize, class: &str) -> Vec<usize> {
        self.descendants(n).into_iter().filter(|&x| self.has_class(x, class)).collect()
    }

    /// Element descendants of `n` with tag `tag`.
    fn find_tag(&self, n: usize, tag: &str) -> Vec<usize> {
        self.descendants(n).into_iter().filter(|&x| self.tag(x) == tag).collect()
    }

    fn ancestors(&self, mut n: usize) -> Vec<usize> {
        let mut out = Vec::new();
        while n != 0 {
            n = self.parent(n);
            out.push(n);
        }
        out
    }

    fn text(&self, n: usize) -> String {
        match &self.nodes[n] {
            Node::Text { text, .. } => text.clone(),
            Node::Element { .. } => self
                .descendants(n)
                .into_iter()
                .filter_map(|x| match &self.nodes[x] {
                    Node::Text { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect(),
        }
    }

    fn title(&self) -> String {
        // The page's title; a chart's (`<svg>`'s own `<title>`) names the chart.
        let titles: Vec<usize> = self
            .find_tag(0, "title")
            .into_iter()
            .filter(|&t| !self.ancestors(t).iter().any(|&a| self.tag(a) == "svg"))
            .collect();
        assert_eq!(titles.len(), 1, "one <title>");
        self.text(titles[0])
    }
}

/// Whitespace runs folded to one space, ends trimmed.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Elements that load, run or embed something, or style from the outside, and attributes that
/// run script or point elsewhere: none may be in a report's DOM, except `<a href>` with an http(s)
/// target inside a MOCA record, and recite's own chart (`<svg class="chart-svg">`) drawn with
/// shapes and text alone. Returns what is wrong.
fn active_content(dom: &Dom) -> Vec<String> {
    // What a chart is drawn with: nothing that loads, links, animates or embeds.
    // (`tspan`: a label set on two lines.)
    const CHART: [&str; 10] =
        ["svg", "title", "desc", "g", "line", "rect", "circle", "polygon", "text", "tspan"];
    let chart = |n: usize| dom.tag(n) == "svg" && dom.has_class(n, "chart-svg");
    let mut wrong = Vec::new();
    let banned = [
        "script", "iframe", "frame", "frameset", "img", "image", "link", "object", "embed", "video", "audio",
        "source", "track", "picture", "svg", "math", "form", "input", "button", "base", "portal", "canvas",
    ];
    for n in dom.elements() {
        let tag = dom.tag(n);
        let in_chart = chart(n) || dom.ancestors(n).iter().any(|&a| chart(a));
        if in_chart {
            if !CHART.contains(&tag) {
                wrong.push(format!("<{tag}> element in a chart {:?}", dom.attrs(n)));
            }
        } else if banned.contains(&tag) {
            wrong.push(format!("<{tag}> element {:?}", dom.attrs(n)));
        }
        if tag == "meta" && dom.attr(n, "http-equiv").is_some_and(|h| h.eq_ignore_ascii_case("refresh")) {
            wrong.push("<meta http-equiv=refresh>".into());
        }
        if tag == "style" && !dom.ancestors(n).iter().any(|&a| dom.tag(a) == "head") {
            wrong.push("<style> outside <head>".into());
        }
        for (k, v) in dom.attrs(n) {
            let v = v.trim().to_ascii_lowercase();
            match k.as_str() {
                k if k.starts_with("on") => wrong.push(format!("<{tag} {k}=…> event handler")),
                "style" => wrong.push(format!("<{tag} style={v:?}>")),
                "src" | "srcset" | "srcdoc" | "action" | "formaction" | "poster" | "background" | "data"
                | "ping" | "xlink:href" => wrong.push(format!("<{tag} {k}={v:?}>")),
                "href" => {
                    let in_record = dom.ancestors(n).iter().any(|&a| dom.has_class(a, "record"));
                    let web = v.starts_with("https://") || v.starts_with("http://");
                    if tag != "a" || !in_record || !web {
                        wrong.push(format!("<{tag} href={v:?}> (in a MOCA record: {in_record})"));
                    }
                }
                _ if v.contains("javascript:") && k != "title" && k != "data-key" => {
                    wrong.push(format!("<{tag} {k}={v:?}>"))
                }
                _ => {}
            }
        }
    }
    wrong
}

/// The page as recite wrote it: the CSP meta comes first in <head>, before anything else that
/// could load, and nothing in it loads, runs or points outside the page.
fn assert_static_page(html: &str) {
    let meta = format!("<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">");
    let at = html.find(&meta).expect("the report has the CSP meta");
    let head = html.find("<head>").expect("<head>");
    assert_eq!(
        &html[head..at],
        "<head><meta charset=\"utf-8\">",
        "the CSP meta is first in <head>, after the charset"
    );
    assert!(html[at..].find("<title>").is_some(), "the title after the CSP");
    let dom = Dom::parse(html);
    let wrong = active_content(&dom);
    assert!(wrong.is_empty(), "the report as written has active content: {wrong:#?}");
    assert_eq!(dom.find_tag(0, "style").len(), 1, "one stylesheet, recite's own");
}

/// A scratch directory for one test's files.
fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("recite-html-").tempdir().expect("temp dir")
}

// ---------------------------------------------------------------------------------------------
// The example transcripts

#[test]
fn example_transcripts_render_every_claim_with_a_badge_beside_every_number() {
    let dir = scratch();
    let page = dir.path().join("examples.html");
    let (json_code, report) = check_json(&["examples/transcripts/"]);
    let (html_code, html) = check_html(&["examples/transcripts/"], &page);
    assert_eq!(html_code, json_code, "the exit code does not depend on the format");
    assert_static_page(&html);
    let Some(browser) = chromium() else { return };

    let dom = Dom::parse(&dump_dom(&browser, &page));
    assert_eq!(dom.title(), TITLE);
    let wrong = active_content(&dom);
    assert!(wrong.is_empty(), "{wrong:#?}");

    // The summary header against the JSON report's summary.
    let summary = &report["summary"];
    let claims_total = summary["claims"].as_u64().unwrap() as usize;
    assert!(claims_total > 0, "the examples make claims");
    let header = dom.find_tag(0, "header");
    assert_eq!(header.len(), 1);
    let header = header[0];
    let h1 = squash(&dom.text(dom.find_tag(header, "h1")[0]));
    let plural = if claims_total == 1 { "" } else { "s" };
    assert_eq!(h1, format!("recite: {claims_total} claim{plural} checked"));
    let counts = dom.find(header, "summary");
    assert_eq!(counts.len(), 1);
    for v in VERDICTS {
        let badges: Vec<_> =
            dom.find(counts[0], "badge").into_iter().filter(|&b| dom.has_class(b, v)).collect();
        assert_eq!(badges.len(), 1, "one {v} count in the header");
        let shown = squash(&dom.text(dom.parent(badges[0])));
        assert_eq!(shown, format!("{v} {}", summary["verdicts"][v]), "the header's {v} count");
    }
    let header_text = squash(&dom.text(header));
    assert!(header_text.contains(&format!("{} findings", summary["findings"])), "{header_text}");

    // One section per input, in order; one .claim per claim, with its verdict, in order.
    let inputs = report["inputs"].as_array().unwrap();
    let sections: Vec<_> =
        dom.elements().filter(|&n| dom.tag(n) == "section" && dom.has_class(n, "input")).collect();
    assert_eq!(sections.len(), inputs.len());
    assert_eq!(dom.find(0, "claim").len(), claims_total, "one .claim per claim in the whole page");
    for (input, &section) in inputs.iter().zip(&sections) {
        let file = input["file"].as_str().unwrap();
        let h2 = dom.text(dom.find_tag(section, "h2")[0]);
        assert!(h2.starts_with(file), "section {h2:?} for {file}");
        let claims = input["claims"].as_array().unwrap();
        let shown = dom.find(section, "claim");
        assert_eq!(shown.len(), claims.len(), "{file}: claims shown");
        for (i, (claim, &el)) in claims.iter().zip(&shown).enumerate() {
            let verdict = claim["verdict"].as_str().unwrap();
            assert_eq!(dom.attr(el, "data-verdict"), Some(verdict), "{file} claim {i}");
            check_claim(&dom, el, claim, &format!("{file} claim {i}"));
        }

        // The conversation: every turn's text, in order, as the reader reads it.
        let bytes = std::fs::read(root().join(file)).unwrap();
        let doc = recite::transcript::read_bytes(file, &bytes);
        let turns: Vec<_> = dom.find(section, "turn");
        assert_eq!(turns.len(), doc.turns.len(), "{file}: turns shown");
        assert!(!doc.turns.is_empty(), "{file}: the example has a conversation");
        for (turn, &el) in doc.turns.iter().zip(&turns) {
            let role = squash(&dom.text(dom.find(el, "role")[0]));
            assert!(role.starts_with(&turn.role.to_lowercase()), "{file}: role {role:?} for {:?}", turn.role);
            if let Some(id) = &turn.message_id {
                assert!(role.contains(id.as_str()), "{file}: role line {role:?} names message {id}");
            }
            if turn.text.is_empty() {
                continue;
            }
            let texts: Vec<_> = dom
                .find(el, "text")
                .into_iter()
                .filter(|&t| dom.parent(t) == el || dom.has_class(dom.parent(t), "tool-text"))
                .collect();
            assert_eq!(texts.len(), 1, "{file}: one text for the turn {:?}", turn.message_id);
            assert_eq!(
                dom.text(texts[0]).replace("\r\n", "\n"),
                turn.text.replace("\r\n", "\n"),
                "{file}: turn text"
            );
        }
    }
}

/// One `.claim` against its JSON settlement: the verdict badge, every cited number with a
/// badge of its own beside it, the details.
fn check_claim(dom: &Dom, el: usize, claim: &Value, at: &str) {
    let verdict = claim["verdict"].as_str().unwrap();
    let compared: Vec<&Value> = claim["measures"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["claims"].as_array().into_iter().flatten())
        .collect();
    let cited = dom.find(el, "cited");
    assert!(!cited.is_empty(), "{at}: something cited");
    for &c in &cited {
        let badges = dom.find(c, "badge");
        assert_eq!(badges.len(), 1, "{at}: one badge beside each cited number");
        let b = badges[0];
        let text = squash(&dom.text(b));
        assert!(VERDICTS.contains(&text.as_str()), "{at}: badge {text:?} is a verdict");
        assert!(dom.has_class(b, &text), "{at}: badge {text:?} styled as its verdict");
        assert_eq!(dom.attr(c, "data-verdict"), Some(text.as_str()), "{at}: the number's verdict");
    }
    for n in dom.find(el, "num") {
        assert!(dom.ancestors(n).iter().any(|&a| dom.has_class(a, "cited")), "{at}: every .num in a .cited");
    }
    if compared.is_empty() {
        assert_eq!(cited.len(), 1, "{at}: no number compared: the citation itself, with the verdict");
        assert_eq!(squash(&dom.text(dom.find(cited[0], "badge")[0])), verdict);
    } else {
        assert_eq!(cited.len(), compared.len(), "{at}: one .cited per claimed number");
        let claim_badge: Vec<_> =
            dom.children(el).iter().copied().filter(|&c| dom.has_class(c, "claim-verdict")).collect();
        assert_eq!(claim_badge.len(), 1, "{at}: the claim's own verdict");
        assert_eq!(squash(&dom.text(claim_badge[0])), verdict, "{at}: the claim's verdict badge");
        for (i, (cmp, &c)) in compared.iter().zip(&cited).enumerate() {
            let nums = dom.find(c, "num");
            assert_eq!(nums.len(), 1, "{at} number {i}");
            assert_eq!(
                dom.text(nums[0]),
                cmp["claimed"]["text"].as_str().unwrap(),
                "{at} number {i}: as claimed"
            );
            let nv = dom.attr(c, "data-verdict").unwrap();
            let matched = cmp["matched"].as_bool().unwrap();
            assert_eq!(nv == "DISCREPANT", !matched, "{at} number {i}: {nv} for matched={matched}");
            if verdict == "REPRODUCED" {
                assert_eq!(nv, "REPRODUCED", "{at}: every number of a reproduced claim reproduces");
            }
            assert!(
                dom.attr(c, "title").is_some_and(|t| t.starts_with("recomputed ")),
                "{at}: recomputed on hover"
            );
        }
    }
    let details = dom.find_tag(el, "details");
    assert_eq!(details.len(), 1, "{at}: details");
    let summary = dom.find_tag(details[0], "summary");
    assert_eq!(squash(&dom.text(summary[0])), "recomputed, base and sampling error");
    let measures = claim["measures"].as_array().map_or(0, Vec::len);
    if measures > 0 {
        let rows = dom.find_tag(details[0], "tr");
        assert_eq!(rows.len(), measures + 1, "{at}: a row per measure under the header");
        assert!(squash(&dom.text(rows[0])).contains("SE"), "{at}: the table has the SE column");
    }
    if let Some(n) = claim["base"]["n"].as_u64() {
        let text = squash(&dom.text(details[0]));
        assert!(text.contains(&format!("recomputed {n}")), "{at}: recomputed base n in {text:?}");
    }
    for reason in claim["reasons"].as_array().into_iter().flatten() {
        let text = dom.text(details[0]);
        assert!(text.contains(reason.as_str().unwrap()), "{at}: reason {reason} shown");
    }
}

// ---------------------------------------------------------------------------------------------
// A hostile transcript

/// The hostile pieces in the fixture, with `{PORT}` as in the template.
const HOSTILE: [&str; 6] = [
    "<img src=\"http://127.0.0.1:{PORT}/img-text\">",
    "<link rel=stylesheet href=http://127.0.0.1:{PORT}/link-text>",
    "<script>document.title='pwned'</script>",
    "\"><iframe src=http://127.0.0.1:{PORT}/iframe-text></iframe>",
    "<style>body{background:url(http://127.0.0.1:{PORT}/css-text)}</style>",
    "<div style=\"background:url(http://127.0.0.1:{PORT}/css-attr)\">x</div>",
];

#[test]
fn hostile_transcript_stays_text_and_loads_nothing() {
    let dir = scratch();
    let listener = Listener::start();
    let port = listener.port.to_string();
    let template =
        std::fs::read_to_string(root().join("tests/fixtures/html/hostile-a2a-v03.json.in")).unwrap();
    for piece in HOSTILE {
        let in_json = serde_json::to_string(piece).unwrap();
        assert!(template.contains(&in_json[1..in_json.len() - 1]), "the fixture carries {piece}");
    }
    let transcript = dir.path().join("hostile.json");
    std::fs::write(&transcript, template.replace("{PORT}", &port)).unwrap();
    let input = transcript.to_str().unwrap();
    let page = dir.path().join("hostile.html");

    let (json_code, report) = check_json(&[input]);
    let (html_code, html) = check_html(&[input], &page);
    assert_eq!(html_code, json_code);
    assert_eq!(report["summary"]["unreadable_inputs"], 0, "the hostile transcript is read");
    assert!(report["summary"]["claims"].as_u64().unwrap() >= 2, "its claims are settled");
    let not_compared = report["inputs"][0]["claims"][0]["not_compared"].as_array().map_or(0, Vec::len);
    assert!(not_compared >= 5, "the hostile result keys reach the report");

    // As written: the CSP first, nothing active, the markup only in escaped form.
    assert_static_page(&html);
    for piece in HOSTILE {
        let piece = piece.replace("{PORT}", &port);
        assert!(!html.contains(&piece), "written unescaped: {piece}");
        let escaped = piece.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
        assert!(html.contains(&escaped), "escaped text missing: {escaped}");
    }

    let Some(browser) = chromium() else { return };
    // As Chromium builds it: no element from the transcript, no script run, the text as text.
    let dom = Dom::parse(&dump_dom(&browser, &page));
    let seen = listener.finish();
    assert!(seen.is_empty(), "the report made Chromium connect to the page's loopback listener: {seen:?}");
    assert_eq!(dom.title(), TITLE, "no script ran");
    let wrong = active_content(&dom);
    assert!(wrong.is_empty(), "active content in the rendered report: {wrong:#?}");
    assert_eq!(dom.find_tag(0, "style").len(), 1, "no stylesheet from the transcript");
    let divs_with_x = dom.find_tag(0, "div").into_iter().filter(|&d| dom.text(d) == "x").count();
    assert_eq!(divs_with_x, 0, "no <div> from the transcript");
    let all_text = dom.text(0);
    for piece in HOSTILE {
        let piece = piece.replace("{PORT}", &port);
        assert!(all_text.contains(&piece), "shown as text: {piece}");
    }
    let texts = dom.find(0, "text");
    assert!(
        texts.iter().any(|&t| dom.text(t).contains(HOSTILE[2])),
        "a turn's text shows the <script> as text"
    );
    let warnings: Vec<_> = dom.find(0, "warn").into_iter().map(|w| dom.text(w)).collect();
    assert!(
        warnings.iter().any(|w| w.contains(HOSTILE[2])),
        "the claimed warning shows it too: {warnings:?}"
    );

    // The listener would have seen a load: a page with the same loads, without recite, reaches it.
    let control = Listener::start();
    let page = dir.path().join("control.html");
    std::fs::write(
        &page,
        format!(
            "<!DOCTYPE html><html><head><title>control</title></head><body><img src=\"http://127.0.0.1:{}/control\"></body></html>",
            control.port
        ),
    )
    .unwrap();
    dump_dom(&browser, &page);
    let seen = control.finish();
    assert!(
        !seen.is_empty(),
        "the control page's <img> should reach the listener: the no-load check is blind"
    );
}

// ---------------------------------------------------------------------------------------------
// MOCA records by the client rules

const MOCA_FIXTURE: &str = "tests/fixtures/html/moca-hostile-record.jsonl";
const RECORD_1: &str = "https://example.com/moca/support-kb@4.2.0#refund-window.md";
const RECORD_2: &str = "https://example.com/moca/support-kb@4.2.0#refund-exceptions.md";
const HTTPS_LINK: &str = "https://example.com/moca/support-kb/refund-exceptions";

#[test]
fn moca_record_with_script_and_javascript_link_renders_inert() {
    // The fixture conforms to the MOCA rules: hostile content and all, the records are the
    // Reader's, unchanged.
    let (code, report) = check_json(&[MOCA_FIXTURE]);
    assert_eq!(code, 0, "a conforming log with no claims passes: {report:#}");
    assert_eq!(report["summary"]["findings"], 0, "{:#}", report["inputs"][0]["findings"]);
    assert_eq!(report["summary"]["claims"], 0);
    let events = report["inputs"][0]["moca"].as_array().expect("the moca.citations event");
    assert_eq!(events.len(), 1);
    let citations = events[0]["citations"].as_array().unwrap();
    assert_eq!(citations.len(), 2);
    assert!(citations.iter().all(|c| c["passed"] == true), "{citations:#?}");
    let record_text = citations[0]["record"]["text"].as_str().unwrap().to_string();
    assert!(
        record_text.contains("<script>") && record_text.contains("onerror"),
        "the fixture's hostile text"
    );
    assert_eq!(citations[0]["record"]["node"]["url"], "javascript:alert(1)");
    assert_eq!(citations[1]["record"]["node"]["url"], HTTPS_LINK);

    let dir = scratch();
    let page = dir.path().join("moca.html");
    let (html_code, html) = check_html(&[MOCA_FIXTURE], &page);
    assert_eq!(html_code, code);
    assert_static_page(&html);
    assert!(!html.contains("<script>") && !html.contains("<a href=\"javascript"), "written escaped");

    let Some(browser) = chromium() else { return };

    let dom = Dom::parse(&dump_dom(&browser, &page));
    assert_eq!(dom.title(), TITLE, "no script ran");
    let wrong = active_content(&dom);
    assert!(wrong.is_empty(), "active content: {wrong:#?}");
    for n in dom.elements() {
        for (k, v) in dom.attrs(n) {
            assert!(!k.starts_with("on"), "an event handler attribute {k}={v:?} on <{}>", dom.tag(n));
            if k == "href" {
                assert!(!v.trim().to_ascii_lowercase().starts_with("javascript:"), "a javascript: href");
            }
        }
    }

    let records = dom.find(0, "record");
    assert_eq!(records.len(), 2, "both records shown");
    let keys: Vec<_> = records.iter().map(|&r| dom.attr(r, "data-key").unwrap()).collect();
    assert_eq!(keys, [RECORD_1, RECORD_2], "keyed by node.ref, in the event's order");
    // Both beside their assistant message.
    for &r in &records {
        let turn = dom.ancestors(r).into_iter().find(|&a| dom.has_class(a, "turn")).expect("in a turn");
        assert!(dom.has_class(turn, "assistant"));
        assert!(dom.text(turn).contains("msg-answer-1"));
    }
    let (r1, r2) = (records[0], records[1]);

    // Record 1: its text shown as text, the javascript: link inert.
    let text = dom.find(r1, "record-text");
    assert_eq!(text.len(), 1);
    assert_eq!(dom.text(text[0]), record_text, "the record's text, exactly, as text");
    assert!(dom.find_tag(r1, "a").is_empty(), "no link for javascript:");
    let inert: Vec<_> =
        dom.find_tag(r1, "code").into_iter().filter(|&c| dom.text(c) == "javascript:alert(1)").collect();
    assert_eq!(inert.len(), 1, "the javascript: link as text");
    assert!(squash(&dom.text(dom.parent(inert[0]))).starts_with("link not followed"));
    let title = dom.find(r1, "title");
    assert_eq!(dom.text(title[0]), "Refund eligibility window <b onmouseover=alert(3)>bold</b>");

    // Record 2: the https link is a link.
    let links = dom.find_tag(r2, "a");
    assert_eq!(links.len(), 1);
    assert_eq!(dom.attr(links[0], "href"), Some(HTTPS_LINK));
    assert_eq!(dom.text(links[0]), HTTPS_LINK);
    assert!(dom.attr(links[0], "rel").is_some_and(|r| r.contains("noreferrer")));
    assert_eq!(dom.find_tag(0, "a").len(), 1, "the only link on the page");

    // Trust: declared is never shown as attested; the flags as they are; computedAt beside them.
    let trust = |r: usize| squash(&dom.text(dom.find(r, "trust-line")[0]));
    let (t1, t2) = (trust(r1), trust(r2));
    assert!(t1.contains("declared") && t1.contains("not reviewed"), "{t1}");
    assert!(!t1.to_ascii_lowercase().contains("attested"), "declared shown as attested: {t1}");
    for flag in ["STALE", "CONTESTED", "DRAFT"] {
        assert!(t1.contains(flag), "record 1 flagged {flag}: {t1}");
    }
    for flag in ["SUPERSEDED", "NOT IN FORCE"] {
        assert!(!t1.contains(flag), "record 1 is not {flag}: {t1}");
    }
    assert!(t2.contains("attested review: accurate"), "{t2}");
    for flag in ["SUPERSEDED", "NOT IN FORCE", "DEPRECATED"] {
        assert!(t2.contains(flag), "record 2 flagged {flag}: {t2}");
    }
    for flag in ["STALE", "CONTESTED"] {
        assert!(!t2.contains(flag), "record 2 is not {flag}: {t2}");
    }
    let declared: Vec<_> =
        dom.find(r1, "trust").into_iter().filter(|&t| dom.has_class(t, "declared")).collect();
    assert!(!declared.is_empty() && dom.find(r1, "attested").is_empty(), "record 1 styled as declared only");
    assert_eq!(dom.find(r2, "attested").len(), 1, "record 2's attested review styled as attested");
    for t in [&t1, &t2] {
        assert!(t.contains("as of 2026-09-28T10:15:00Z"), "computedAt beside the flags: {t}");
    }
    let at = dom.find(0, "computed-at");
    assert_eq!(at.len(), 1);
    assert_eq!(dom.text(at[0]), "2026-09-28T10:15:00Z");
}

// ---------------------------------------------------------------------------------------------
// Bidi controls (issue 16)

#[test]
fn html_link_text_drops_bidi_overrides() {
    // The MOCA fixture with a right-to-left override (and other bidi controls) in its https link:
    // the link's text would read backwards, showing another address than the one it opens.
    let fixture = std::fs::read_to_string(root().join(MOCA_FIXTURE)).unwrap();
    let spoofed = format!("{HTTPS_LINK}/\\u202egnp.exe\\u2066x\\u200f");
    let hostile = fixture.replace(&format!("\"{HTTPS_LINK}\""), &format!("\"{spoofed}\""));
    assert_ne!(hostile, fixture, "the link was replaced");
    let dir = scratch();
    let input = dir.path().join("bidi.jsonl");
    std::fs::write(&input, hostile).unwrap();
    let page = dir.path().join("bidi.html");
    let (_, html) = check_html(&[input.to_str().unwrap()], &page);
    let start = html.find("<a href=").expect("the https link is a link");
    let text_start = start + html[start..].find('>').unwrap() + 1;
    let text_end = text_start + html[text_start..].find("</a>").unwrap();
    let text = &html[text_start..text_end];
    for c in ['\u{202e}', '\u{2066}', '\u{200f}'] {
        assert!(!text.contains(c), "{c:?} in the link text {text:?}");
    }
    assert!(text.starts_with(HTTPS_LINK) && text.contains("gnp.exe"), "{text}");
    // Nowhere else on the page either.
    assert!(!html.contains('\u{202e}'), "a right-to-left override on the page");
}

// ---------------------------------------------------------------------------------------------
// The answer-text audit (issue 12)

/// What a hostile agent wraps around its misquoting answer: markup, a Markdown link and image,
/// a right-to-left override, a terminal escape.
const ANSWER_PREFIX: &str = "<script>alert(1)</script> <img src=x onerror=alert(1)> [x](javascript:alert(1)) \
![i](http://example.com/i.png) \u{202e}";

/// `tests/fixtures/answers/misquoted.json` (its answer says 47% for a cited 44%) with
/// [`ANSWER_PREFIX`] before the answer, a terminal escape after it and an extra uncited 58%.
fn hostile_answer(dir: &Path) -> PathBuf {
    let fixture = std::fs::read_to_string(root().join("tests/fixtures/answers/misquoted.json")).unwrap();
    let mut t: Value = serde_json::from_str(&fixture).unwrap();
    let text = t.pointer_mut("/result/history/1/parts/0/text").expect("the agent's answer");
    let answer = text.as_str().unwrap().trim_end_matches('.').to_string();
    *text = Value::String(format!("{ANSWER_PREFIX}{answer}; 58% would recommend it.\u{1b}[2J"));
    let path = dir.join("hostile-answer.json");
    std::fs::write(&path, serde_json::to_string_pretty(&t).unwrap()).unwrap();
    path
}

/// `s` as the report shows input text: control (but tab and newline) and bidi characters as
/// `\u{…}`.
fn shown(s: &str) -> String {
    s.chars()
        .map(|c| {
            let bidi = matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
            if (c.is_control() && c != '\t' && c != '\n') || bidi {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[test]
fn answer_numbers_highlighted_in_place_with_their_citation_on_hover_and_focus() {
    let Some(browser) = chromium() else { return };
    let dir = scratch();
    let hostile = hostile_answer(dir.path());
    let inputs = [
        hostile.to_str().unwrap(),
        "examples/transcripts/agui-run.sse",
        "examples/transcripts/a2a-v10-stream.sse",
    ];
    let page = dir.path().join("answers.html");
    let (json_code, report) = check_json(&inputs);
    let (html_code, html) = check_html(&inputs, &page);
    assert_eq!(html_code, json_code);
    assert_static_page(&html);
    assert!(!html.contains('\u{202e}') && !html.contains('\u{1b}'), "controls written as they are");

    let dom = Dom::parse(&dump_dom(&browser, &page));
    assert_eq!(dom.title(), TITLE, "no script ran");
    let wrong = active_content(&dom);
    assert!(wrong.is_empty(), "{wrong:#?}");
    // The tip shows on hover and on keyboard focus alike, by CSS: the page runs no script.
    let style = dom.text(dom.find_tag(0, "style")[0]);
    assert!(style.contains(".ans:hover::after,.ans:focus::after{content:attr(data-tip)"), "{style}");

    let sections: Vec<_> =
        dom.elements().filter(|&n| dom.tag(n) == "section" && dom.has_class(n, "input")).collect();
    let reported = report["inputs"].as_array().unwrap();
    assert_eq!(sections.len(), reported.len());
    let mut statuses = Vec::new();
    for (input, &section) in reported.iter().zip(&sections) {
        let file = input["file"].as_str().unwrap();
        let answers = input["answers"].as_array().unwrap_or_else(|| panic!("{file}: no answer audited"));
        let turns = dom.find(section, "turn");
        for answer in answers {
            let turn = turns[answer["turn"].as_u64().unwrap() as usize];
            let texts: Vec<_> =
                dom.find(turn, "text").into_iter().filter(|&t| dom.parent(t) == turn).collect();
            assert_eq!(texts.len(), 1, "{file}: one text for the answer");
            // The answer reads as written, the numbers marked inside it.
            let written = answer["text"].as_str().unwrap();
            assert_eq!(dom.text(texts[0]), shown(written), "{file}: the answer's text");
            let marks = dom.find_tag(texts[0], "mark");
            let numbers = answer["numbers"].as_array().unwrap();
            assert_eq!(marks.len(), numbers.len(), "{file}: one mark per stated number");
            for (&mark, n) in marks.iter().zip(numbers) {
                let (text, status) = (n["text"].as_str().unwrap(), n["status"].as_str().unwrap());
                let (start, end) =
                    (n["start"].as_u64().unwrap() as usize, n["end"].as_u64().unwrap() as usize);
                assert_eq!(&written[start..end], text, "{file}: the number's span");
                assert_eq!(dom.text(mark), text, "{file}: marked in place");
                assert!(dom.has_class(mark, "ans") && dom.has_class(mark, status), "{file}: {text} {status}");
                assert_eq!(dom.attr(mark, "data-status"), Some(status));
                assert_eq!(dom.attr(mark, "tabindex"), Some("0"), "{file}: {text} is a tab stop");
                let tip = dom.attr(mark, "data-tip").unwrap_or_else(|| panic!("{file}: {text} has no tip"));
                assert_eq!(
                    dom.attr(mark, "aria-label"),
                    Some(tip),
                    "{file}: the label says what the tip says"
                );
                assert!(tip.starts_with(&format!("{text} {status}")), "{tip}");
                if let (Some(c), Some(m)) = (n["claim"].as_u64(), n["measure"].as_str()) {
                    assert!(tip.contains(&format!("claim #{} {m}", c + 1)), "{file}: citation in {tip:?}");
                }
                for key in ["claimed", "recomputed"] {
                    if let Some(v) = n[key].as_str() {
                        assert!(tip.contains(&format!("{key} {v}")), "{file}: {key} value in {tip:?}");
                    }
                }
                statuses.push((file.to_string(), text.to_string(), status.to_string(), tip.to_string()));
            }
            let summary = dom.find(turn, "ans-summary");
            assert_eq!(summary.len(), 1, "{file}: the answer's summary");
            assert_eq!(dom.find_tag(summary[0], "li").len(), numbers.len(), "{file}: every number listed");
        }
    }
    // Every mark on the page is recite's, inside an answer's text.
    for mark in dom.find_tag(0, "mark") {
        assert!(
            dom.has_class(mark, "ans") && dom.has_class(dom.parent(mark), "text"),
            "{:?}",
            dom.attrs(mark)
        );
    }
    let hostile_file = hostile.to_str().unwrap();
    let misquoted = statuses
        .iter()
        .find(|(f, t, s, _)| f == hostile_file && t == "47%" && s == "MISQUOTED")
        .expect("47% MISQUOTED");
    assert!(
        misquoted.3.contains("claimed 0.44") && misquoted.3.contains("recomputed 44%"),
        "{}",
        misquoted.3
    );
    assert!(
        statuses.iter().any(|(f, t, s, _)| f == hostile_file && t == "58%" && s == "UNCITED"),
        "{statuses:#?}"
    );
    assert!(
        statuses.iter().any(|(f, _, s, _)| f.ends_with("agui-run.sse") && s == "TRACED"),
        "{statuses:#?}"
    );
    // The hostile markup is text.
    let all = dom.text(0);
    assert!(all.contains("<script>alert(1)</script>") && all.contains("<img src=x onerror=alert(1)>"));
}
