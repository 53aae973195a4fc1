//! `recite probe`'s network side, shared by the command line and `POST /v1/probe`: the HTTP
//! client that fetches an Agent Card and makes the calls recite-core's `probe` module plans,
//! each reply kept as it came; and the allow-list a server probes within ([`AllowList`]), so
//! the service never becomes an open proxy: every URL it would touch (the one asked for, each
//! interface the card names, each redirect) must match a `--probe-allow` pattern.

use std::time::Duration;

use reqwest::Url;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};

use recite_core::probe::Request;
use recite_core::redact::redact;

/// Why a probe could not fetch, call or start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeNetError {
    /// Only `http://` URLs are called (no TLS client in this build).
    NotHttp(String),
    /// A URL the allow-list does not allow.
    NotAllowed(String),
    /// An `--probe-allow` pattern that is not `host[:port]`.
    BadPattern(String, String),
    /// A header that is not `Name: value`, or whose name or value is not valid.
    BadHeader(String),
    /// The HTTP client could not be built.
    Client(String),
    /// The card could not be fetched (refused, timed out, too large…).
    CardFetch(String, String),
    /// No card at the URL or its well-known places: the URLs tried and the last status.
    NoCard(String, String, String),
}

impl std::fmt::Display for ProbeNetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProbeNetError::NotHttp(url) => write!(
                f,
                "{url}: only http:// URLs can be probed (this build has no TLS client; probe an https agent through a local TLS terminator)"
            ),
            ProbeNetError::NotAllowed(url) => {
                write!(f, "{url}: not an agent this server may call (its --probe-allow patterns)")
            }
            ProbeNetError::BadPattern(p, why) => write!(f, "--probe-allow {p:?}: {why}"),
            ProbeNetError::BadHeader(why) => f.write_str(why),
            ProbeNetError::Client(why) => write!(f, "cannot build the HTTP client: {why}"),
            ProbeNetError::CardFetch(url, why) => write!(f, "cannot fetch the Agent Card of {url}: {why}"),
            ProbeNetError::NoCard(url, last, tried) => {
                write!(f, "no Agent Card at {url} ({last} from {tried})")
            }
        }
    }
}

impl std::error::Error for ProbeNetError {}

/// One `host[:port]` pattern: a host name (case-insensitive; `*.example.com` for any name under
/// example.com), an IPv4 address or a bracketed IPv6 one, and a port (any when left out).
#[derive(Debug, Clone, PartialEq, Eq)]
struct HostPattern {
    host: String,
    /// `*.` patterns: any name ending in `.host`.
    subdomains: bool,
    port: Option<u16>,
}

/// The agents a server may probe: `host[:port]` patterns. Empty (the default) allows none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList(Vec<HostPattern>);

impl AllowList {
    /// Reads the patterns (`127.0.0.1:9999`, `agents.internal`, `*.agents.internal:8080`,
    /// `[::1]:9999`).
    pub fn parse(patterns: &[String]) -> Result<AllowList, ProbeNetError> {
        let mut list = Vec::new();
        for p in patterns {
            let bad = |why: &str| ProbeNetError::BadPattern(p.clone(), why.to_string());
            let text = p.trim();
            if text.contains("://") || text.contains('/') {
                return Err(bad("give host[:port], not a URL"));
            }
            let (host, port) = if let Some(rest) = text.strip_prefix('[') {
                let (h, after) =
                    rest.split_once(']').ok_or_else(|| bad("an unclosed [ in an IPv6 address"))?;
                (h.to_string(), after.strip_prefix(':'))
            } else {
                match text.rsplit_once(':') {
                    Some((h, port)) => (h.to_string(), Some(port)),
                    None => (text.to_string(), None),
                }
            };
            let port = match port {
                None => None,
                Some(p) => {
                    Some(p.parse::<u16>().map_err(|_| bad("the port is not a number from 0 to 65535"))?)
                }
            };
            let host = host.trim_end_matches('.').to_ascii_lowercase();
            let (host, subdomains) = match host.strip_prefix("*.") {
                Some(h) => (h.to_string(), true),
                None => (host, false),
            };
            if host.is_empty() || host.contains(['*', '@', ' ']) {
                return Err(bad("a host name or address, with at most a leading `*.`"));
            }
            list.push(HostPattern { host, subdomains, port });
        }
        Ok(AllowList(list))
    }

    /// No pattern: nothing may be probed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `url` is an http URL whose host and port a pattern allows.
    pub fn allows(&self, url: &Url) -> bool {
        if url.scheme() != "http" {
            return false;
        }
        let Some(host) = url.host_str() else { return false };
        let host =
            host.trim_start_matches('[').trim_end_matches(']').trim_end_matches('.').to_ascii_lowercase();
        let port = url.port_or_known_default();
        self.0.iter().any(|p| {
            let named = if p.subdomains { host.ends_with(&format!(".{}", p.host)) } else { host == p.host };
            named && p.port.is_none_or(|want| port == Some(want))
        })
    }

    /// `url` parsed, when the list allows it.
    pub fn check(&self, url: &str) -> Result<Url, ProbeNetError> {
        let shown = redact(url).into_owned();
        match Url::parse(url) {
            Ok(u) if self.allows(&u) => Ok(u),
            _ => Err(ProbeNetError::NotAllowed(shown)),
        }
    }
}

/// How the client calls.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Headers sent with every request, each `Name: value`; marked sensitive, never written.
    pub headers: Vec<String>,
    /// A bearer token sent as `Authorization: Bearer …`.
    pub bearer: Option<String>,
    /// The time each request may take, the whole reply included.
    pub timeout: Duration,
    /// The largest card or reply read, in bytes.
    pub max_reply: u64,
    /// When set, every request (redirects included) must go where it allows.
    pub allow: Option<AllowList>,
}

/// A reply as received.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The body, byte for byte.
    pub body: Vec<u8>,
    /// Server-Sent Events (`text/event-stream`).
    pub sse: bool,
    /// The HTTP status when it was not a success.
    pub failed: Option<String>,
}

/// The HTTP client: reqwest (the one the A2A SDK already builds), with the probe's headers and
/// time limit on every request, and a cap on what it reads.
pub struct Client {
    http: reqwest::Client,
    max: u64,
    allow: Option<AllowList>,
}

impl Client {
    /// A client calling as `o` says.
    pub fn new(o: ClientOptions) -> Result<Client, ProbeNetError> {
        let mut headers = HeaderMap::new();
        for h in &o.headers {
            let (name, value) = h
                .split_once(':')
                .ok_or_else(|| ProbeNetError::BadHeader(format!("header {h:?}: give it as `Name: value`")))?;
            let name = HeaderName::from_bytes(name.trim().as_bytes())
                .map_err(|e| ProbeNetError::BadHeader(format!("header {name:?}: {e}")))?;
            let mut value = HeaderValue::from_str(value.trim())
                .map_err(|e| ProbeNetError::BadHeader(format!("header {name}: {e}")))?;
            value.set_sensitive(true);
            headers.append(name, value);
        }
        if let Some(token) = &o.bearer {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", token.trim()))
                .map_err(|_| ProbeNetError::BadHeader("the token is not a valid header value".into()))?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let secs = o.timeout.as_secs().max(1);
        let mut b = reqwest::Client::builder()
            .user_agent(concat!("recite-probe/", env!("CARGO_PKG_VERSION")))
            .default_headers(headers)
            .timeout(Duration::from_secs(secs))
            .connect_timeout(Duration::from_secs(secs.min(10)));
        if let Some(allow) = o.allow.clone() {
            // A redirect is a request too: only where the list allows, and at most 10 of them.
            b = b.no_proxy().redirect(reqwest::redirect::Policy::custom(move |attempt| {
                if attempt.previous().len() >= 10 {
                    attempt.error("more than 10 redirects")
                } else if allow.allows(attempt.url()) {
                    attempt.follow()
                } else {
                    let to = redact(attempt.url().as_str()).into_owned();
                    attempt.error(format!(
                        "a redirect to {to}, which --probe-allow does not allow, was not followed"
                    ))
                }
            }));
        }
        let http = b.build().map_err(|e| ProbeNetError::Client(e.to_string()))?;
        Ok(Client { http, max: o.max_reply, allow: o.allow })
    }

    /// `url` when it may be called: http, and allowed by the list when there is one.
    fn may_call(&self, url: &str) -> Result<(), ProbeNetError> {
        if !url.starts_with("http://") {
            return Err(ProbeNetError::NotHttp(redact(url).into_owned()));
        }
        match &self.allow {
            Some(list) => list.check(url).map(|_| ()),
            None => Ok(()),
        }
    }

    /// The card: at `url` when it names a `.json` file or a `/.well-known/` path, else at
    /// `url/.well-known/agent-card.json` (then `agent.json`, where v0.2 agents served it). Its
    /// URL and bytes.
    pub async fn card(&self, url: &str) -> Result<(String, Vec<u8>), ProbeNetError> {
        let shown = redact(url).into_owned();
        self.may_call(url)?;
        let candidates: Vec<String> = if url.ends_with(".json") || url.contains("/.well-known/") {
            vec![url.to_string()]
        } else {
            let base = url.trim_end_matches('/');
            vec![format!("{base}/.well-known/agent-card.json"), format!("{base}/.well-known/agent.json")]
        };
        let mut last = String::new();
        for c in &candidates {
            let resp = self
                .http
                .get(c)
                .header(ACCEPT, "application/json")
                .send()
                .await
                .map_err(|e| ProbeNetError::CardFetch(shown.clone(), reason(&e)))?;
            if resp.status().is_success() {
                let body = self.read(resp).await.map_err(|e| ProbeNetError::CardFetch(shown.clone(), e))?;
                return Ok((c.clone(), body));
            }
            last = format!("HTTP {}", resp.status());
        }
        Err(ProbeNetError::NoCard(shown, last, candidates.join(" and ")))
    }

    /// Sends one request; the reply as received, or why none came.
    pub async fn call(&self, req: &Request) -> Result<Reply, String> {
        self.may_call(&req.url).map_err(|e| e.to_string())?;
        let body = serde_json::to_vec(&req.body).map_err(|e| e.to_string())?;
        let accept = if req.streaming { "text/event-stream" } else { "application/json" };
        let mut r = self
            .http
            .post(&req.url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, accept)
            .body(body);
        if let Some(v) = req.version_header {
            r = r.header("A2A-Version", v);
        }
        let resp = r.send().await.map_err(|e| reason(&e))?;
        let status = resp.status();
        let sse = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.trim_start().starts_with("text/event-stream"));
        let failed = (!status.is_success()).then(|| format!("HTTP {status}"));
        let body = self.read(resp).await?;
        Ok(Reply { body, sse, failed })
    }

    /// The body, at most `max` bytes.
    async fn read(&self, mut resp: reqwest::Response) -> Result<Vec<u8>, String> {
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| reason(&e))? {
            if (body.len() + chunk.len()) as u64 > self.max {
                return Err(format!("the reply is larger than {} bytes (--max-input-size)", self.max));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

/// A request error in words, with its causes (reqwest's own message is "error sending request").
fn reason(e: &reqwest::Error) -> String {
    let mut s = if e.is_timeout() { "timed out (--timeout)".to_string() } else { e.to_string() };
    let mut source = std::error::Error::source(e);
    while let Some(c) = source {
        s.push_str(": ");
        s.push_str(&c.to_string());
        source = std::error::Error::source(c);
    }
    redact(&s).into_owned()
}

/// A skill id as a file name's part: letters, digits, `-` and `_` kept, the rest `_`.
pub fn file_part(id: &str) -> String {
    let s: String = id
        .chars()
        .take(60)
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    if s.is_empty() { "skill".to_string() } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(p: &[&str]) -> AllowList {
        AllowList::parse(&p.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    fn allowed(l: &AllowList, url: &str) -> bool {
        l.allows(&Url::parse(url).unwrap())
    }

    #[test]
    fn patterns_allow_their_host_and_port_only() {
        let l = list(&["127.0.0.1:9999", "Agents.Internal", "*.example.com:8080", "[::1]:7000"]);
        assert!(allowed(&l, "http://127.0.0.1:9999/.well-known/agent-card.json"));
        assert!(!allowed(&l, "http://127.0.0.1:9998/"));
        assert!(allowed(&l, "http://agents.internal:1234/rpc"));
        assert!(allowed(&l, "http://agents.internal./"));
        assert!(allowed(&l, "http://a.b.example.com:8080/"));
        assert!(!allowed(&l, "http://example.com:8080/"), "*. names what is under it only");
        assert!(!allowed(&l, "http://evil-example.com:8080/"));
        assert!(!allowed(&l, "http://a.example.com:8081/"));
        assert!(allowed(&l, "http://[::1]:7000/"));
        assert!(!allowed(&l, "https://127.0.0.1:9999/"), "http only");
        assert!(!allowed(&l, "http://localhost:9999/"), "a name is matched as written, not resolved");
        assert!(
            !allowed(&l, "http://127.0.0.1:9999@169.254.169.254/"),
            "the host is the URL's, not its user"
        );
    }

    #[test]
    fn no_pattern_allows_nothing_and_bad_patterns_are_refused() {
        assert!(!allowed(&AllowList::default(), "http://127.0.0.1/"));
        for bad in ["http://127.0.0.1:9999", "host:port", "*", "a/b", "[::1"] {
            let e = AllowList::parse(&[bad.to_string()]);
            assert!(matches!(e, Err(ProbeNetError::BadPattern(..))), "{bad}: {e:?}");
        }
    }
}
