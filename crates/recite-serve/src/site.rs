//! What every request must show before any route sees it, token or not: a `Host` this server
//! answers to, and, for a request that changes something, no other site's `Origin`.
//!
//! **Host** (against DNS rebinding: a page on `http://rebind.example:8787` whose name is made to
//! resolve to 127.0.0.1 talks to this server from the browser, with `Host:
//! rebind.example:8787`). The host name must be `localhost`, a loopback address, the address
//! the server listens on (any IP address when it listens on all of them: `0.0.0.0`, `::`), the
//! host of `--public-url`, or one named by `--allowed-host`. An IP address cannot be rebound (the
//! browser connects to the address it names), so only names are at stake. The port is not
//! compared: a browser sends the port of the URL it loaded, which is the port it connected to;
//! through a port mapping that is not this server's. Refused: 421, saying which host.
//!
//! **Origin** (against cross-site request forgery: a page elsewhere posting a "simple" request,
//! `text/plain` or a form, which no CORS preflight guards). A request with an unsafe method (any
//! but GET, HEAD, OPTIONS, TRACE) that carries `Origin` must name this server: the origin of
//! `--public-url`, or `http(s)://` and the `Host` the request was sent to (checked above). An
//! opaque origin (`null`: sandboxed frames, `data:` pages, some redirects) is refused, as is
//! `Sec-Fetch-Site: cross-site` or `same-site` (another origin, by the browser's own account).
//! A request without `Origin` (curl, the SDKs, any program that is not a browser) goes on.
//! Refused: 403.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::Problem;

/// The names and addresses a request's `Host` may carry, and this server's public origin.
#[derive(Debug, Clone)]
pub struct Site {
    /// Host names and addresses (lower case, IPv6 without brackets).
    names: Vec<String>,
    /// Whether any IP address is this server's (it listens on all of them).
    any_ip: bool,
    /// `--public-url`'s origin (`scheme://host[:port]`, lower case, default port left out).
    public: Option<String>,
}

/// How much of a refused value a problem repeats.
const SHOWN: usize = 200;

impl Site {
    /// The site of a server listening on `listen`, reached at `public_url` when given, under
    /// the `extra` host names too (`--allowed-host`).
    pub fn new(listen: std::net::SocketAddr, public_url: Option<&str>, extra: &[String]) -> Site {
        let mut names: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
        let ip = listen.ip();
        if !ip.is_unspecified() {
            names.push(ip.to_string());
        }
        let public = public_url.and_then(origin_of);
        if let Some(o) = &public
            && let Some((_, authority)) = o.split_once("://")
            && let Some((host, _)) = split_host(authority)
        {
            names.push(host);
        }
        for e in extra {
            names.push(normal_name(e));
        }
        names.dedup();
        Site { names, any_ip: ip.is_unspecified(), public }
    }

    /// Whether `host` (a host name or address, as [`split_host`] gives it) is this server's.
    fn answers_to(&self, host: &str) -> bool {
        if self.names.iter().any(|n| n == host) {
            return true;
        }
        self.any_ip && host.parse::<IpAddr>().is_ok()
    }

    /// Why the request is refused, if it is.
    pub fn refuse(&self, method: &Method, uri: &Uri, headers: &HeaderMap) -> Option<Problem> {
        let host = headers.get(header::HOST).map(|h| String::from_utf8_lossy(h.as_bytes()).into_owned());
        let Some(host) = host else {
            return Some(misdirected("(none)", "the request has no Host header (HTTP/1.1 asks for one)"));
        };
        // An absolute-form target names the host the request is for (RFC 9112 §3.2.2).
        for named in std::iter::once(host.as_str()).chain(uri.authority().map(|a| a.as_str())) {
            match split_host(named) {
                None => return Some(misdirected(named, "it is not a host name or address")),
                Some((name, _)) if !self.answers_to(&name) => {
                    return Some(misdirected(
                        named,
                        "it is not a name this server answers to (localhost, a loopback address, \
                         the address it listens on, --public-url's host, --allowed-host); a page \
                         whose name was made to resolve to this machine would send it (DNS rebinding)",
                    ));
                }
                Some(_) => {}
            }
        }
        if safe(method) {
            return None;
        }
        if let Some(site) = headers.get("sec-fetch-site") {
            let site = String::from_utf8_lossy(site.as_bytes()).to_ascii_lowercase();
            if site == "cross-site" || site == "same-site" {
                return Some(forbidden(format!(
                    "a {method} from another site's page is refused (Sec-Fetch-Site: {site}): \
                     changes come from this server's own pages, or from programs that are not browsers"
                )));
            }
        }
        let origin = headers.get(header::ORIGIN)?;
        let origin = String::from_utf8_lossy(origin.as_bytes()).into_owned();
        if self.own_origin(&origin, &host) {
            return None;
        }
        Some(forbidden(format!(
            "a {method} from the origin {} is refused: changes come from this server's own pages \
             ({}), or from programs that send no Origin",
            shown(&origin),
            self.public.clone().unwrap_or_else(|| format!("http://{}", shown(&host)))
        )))
    }

    /// Whether `origin` is this server's: `--public-url`'s, or the host the request was sent to
    /// (both compared as [`origin_of`] writes them).
    fn own_origin(&self, origin: &str, host: &str) -> bool {
        let Some(origin) = origin_of(origin) else { return false };
        if self.public.as_deref() == Some(origin.as_str()) {
            return true;
        }
        let scheme = if origin.starts_with("https://") { "https" } else { "http" };
        origin_of(&format!("{scheme}://{host}")).as_deref() == Some(origin.as_str())
    }
}

/// GET, HEAD, OPTIONS and TRACE change nothing (RFC 9110 §9.2.1).
fn safe(m: &Method) -> bool {
    matches!(*m, Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE)
}

/// A host name as compared: lower case, no trailing dot, IPv6 without brackets.
fn normal_name(name: &str) -> String {
    let n = name.trim().to_ascii_lowercase();
    let n = n.strip_suffix('.').unwrap_or(&n);
    n.strip_prefix('[').and_then(|v| v.strip_suffix(']')).unwrap_or(n).to_string()
}

/// `host[:port]` (a `Host` header, or a URL's authority) as its host, compared as
/// [`normal_name`] makes it, and its port; `None` when it is not one.
fn split_host(authority: &str) -> Option<(String, Option<u16>)> {
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => {
            let (v6, after) = rest.split_once(']')?;
            v6.parse::<std::net::Ipv6Addr>().ok()?;
            (v6, if after.is_empty() { None } else { Some(after.strip_prefix(':')?) })
        }
        None => {
            let (h, p) = match authority.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            };
            let name = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_');
            if h.is_empty() || !h.bytes().all(name) {
                return None;
            }
            (h, p)
        }
    };
    let port = match port.filter(|p| !p.is_empty()) {
        None => None,
        Some(p) if p.bytes().all(|b| b.is_ascii_digit()) => Some(p.parse().ok()?),
        Some(_) => return None,
    };
    Some((normal_name(host), port))
}

/// A URL's origin (`scheme://host[:port]`, lower case, the scheme's default port left out), or
/// `None` for an opaque one (`null`) or what is not a URL.
pub fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.trim().split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest).to_ascii_lowercase();
    if authority.contains('@') {
        return None;
    }
    let (host, port) = split_host(&authority)?;
    let host = if host.contains(':') { format!("[{host}]") } else { host };
    let default = if scheme == "https" { 443 } else { 80 };
    Some(match port {
        Some(p) if p != default => format!("{scheme}://{host}:{p}"),
        _ => format!("{scheme}://{host}"),
    })
}

/// A refused value as a problem repeats it: at most [`SHOWN`] characters.
fn shown(v: &str) -> String {
    if v.chars().count() > SHOWN { v.chars().take(SHOWN).chain(['…']).collect() } else { v.to_string() }
}

fn misdirected(host: &str, why: &str) -> Problem {
    Problem {
        status: 421,
        title: "misdirected request",
        detail: format!("the Host {} is refused: {why}", shown(host)),
        location: Some("header.host".into()),
        retry_after: None,
    }
}

fn forbidden(detail: String) -> Problem {
    Problem {
        status: 403,
        title: "forbidden",
        detail,
        location: Some("header.origin".into()),
        retry_after: None,
    }
}

/// The check as a middleware, before every route.
pub async fn check(State(site): State<Arc<Site>>, req: Request, next: Next) -> Response {
    match site.refuse(req.method(), req.uri(), req.headers()) {
        Some(p) => p.into_response(),
        None => next.run(req).await,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use axum::Router;
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use axum::routing::get;
    use tower::ServiceExt as _;

    use super::{Site, origin_of};

    /// The site check before two routes, as `recite serve` puts it before all of them.
    fn app(site: Site) -> Router {
        Router::new()
            .route("/v1/cases", get(|| async { "cases" }).post(|| async { (StatusCode::CREATED, "made") }))
            .route("/v1/cases/{id}/inputs/{n}", get(|| async { "input bytes" }))
            .layer(axum::middleware::from_fn_with_state(Arc::new(site), super::check))
    }

    fn loopback() -> Site {
        Site::new("127.0.0.1:8787".parse().unwrap(), None, &[])
    }

    /// The status of `method target` with `headers`, and the problem's body if any.
    async fn ask(site: Site, method: &str, target: &str, headers: &[(&str, &str)]) -> (u16, String) {
        let mut req = Request::builder().method(method).uri(target);
        for (n, v) in headers {
            req = req.header(*n, *v);
        }
        let body = if method == "POST" { Body::from("{\"messages\": []}") } else { Body::empty() };
        let r = app(site).oneshot(req.body(body).unwrap()).await.unwrap();
        let status = r.status().as_u16();
        let bytes = axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap();
        (status, String::from_utf8_lossy(&bytes).into_owned())
    }

    #[tokio::test]
    async fn a_rebound_name_is_refused_with_the_host_it_named() {
        let evil = [("Host", "rebind.evil.example:8787")];
        for target in ["/v1/cases", "/v1/cases/0123456789abcdef/inputs/0", "/nowhere"] {
            let (status, body) = ask(loopback(), "GET", target, &evil).await;
            assert_eq!(status, 421, "{target}: {body}");
            let p: serde_json::Value = serde_json::from_str(&body).unwrap();
            assert_eq!(p["location"], "header.host");
            assert!(p["detail"].as_str().unwrap().contains("rebind.evil.example:8787"), "{p}");
            assert!(p["detail"].as_str().unwrap().contains("DNS rebinding"), "{p}");
        }
        let (status, _) = ask(loopback(), "POST", "/v1/cases", &evil).await;
        assert_eq!(status, 421);
        // No Host at all, or an absolute-form target naming another host.
        assert_eq!(ask(loopback(), "GET", "/v1/cases", &[]).await.0, 421);
        let absolute =
            ask(loopback(), "GET", "http://rebind.evil.example:8787/v1/cases", &[("Host", "127.0.0.1:8787")]);
        assert_eq!(absolute.await.0, 421);
        for bad in ["localhost:80:80", "local host", "[::1", "[zz]:1", "évil.example", "localhost:8x"] {
            assert_eq!(ask(loopback(), "GET", "/v1/cases", &[("Host", bad)]).await.0, 421, "{bad}");
        }
    }

    #[tokio::test]
    async fn loopback_names_the_listen_address_and_the_public_host_are_answered() {
        for host in
            ["127.0.0.1:8787", "localhost:8787", "LocalHost", "localhost.:8787", "[::1]:8787", "127.0.0.1"]
        {
            assert_eq!(ask(loopback(), "GET", "/v1/cases", &[("Host", host)]).await.0, 200, "{host}");
        }
        let listen = Site::new("127.0.0.2:9000".parse().unwrap(), None, &[]);
        assert_eq!(ask(listen.clone(), "GET", "/v1/cases", &[("Host", "127.0.0.2:9000")]).await.0, 200);
        assert_eq!(ask(listen, "GET", "/v1/cases", &[("Host", "10.0.0.5:9000")]).await.0, 421);
        let public = Site::new("127.0.0.1:8787".parse().unwrap(), Some("https://Recite.Example.org/"), &[]);
        assert_eq!(ask(public.clone(), "GET", "/v1/cases", &[("Host", "recite.example.org")]).await.0, 200);
        assert_eq!(
            ask(public, "GET", "/v1/cases", &[("Host", "recite.example.org.evil.example")]).await.0,
            421
        );
        let named = Site::new("127.0.0.1:8787".parse().unwrap(), None, &["Build-7.lan".to_string()]);
        assert_eq!(ask(named, "GET", "/v1/cases", &[("Host", "build-7.lan:8787")]).await.0, 200);
        // Listening on every address: any address is this server's, a name still is not.
        let all = Site::new("0.0.0.0:8787".parse().unwrap(), None, &[]);
        assert_eq!(ask(all.clone(), "GET", "/v1/cases", &[("Host", "10.0.0.5:8787")]).await.0, 200);
        assert_eq!(ask(all.clone(), "GET", "/v1/cases", &[("Host", "[fd00::5]:8787")]).await.0, 200);
        assert_eq!(ask(all, "GET", "/v1/cases", &[("Host", "rebind.evil.example:8787")]).await.0, 421);
    }

    #[tokio::test]
    async fn a_change_from_another_origin_is_refused_and_one_without_origin_is_not() {
        let host = ("Host", "127.0.0.1:8787");
        let plain = ("Content-Type", "text/plain");
        for origin in
            ["http://evil.example", "null", "http://127.0.0.1:8788", "http://localhost:8787", "file://"]
        {
            let (status, body) =
                ask(loopback(), "POST", "/v1/cases", &[host, plain, ("Origin", origin)]).await;
            assert_eq!(status, 403, "{origin}: {body}");
            let p: serde_json::Value = serde_json::from_str(&body).unwrap();
            assert_eq!(p["location"], "header.origin");
            assert!(p["detail"].as_str().unwrap().contains(origin), "{p}");
        }
        for method in ["PUT", "PATCH", "DELETE"] {
            let (status, _) =
                ask(loopback(), method, "/v1/cases", &[host, ("Origin", "http://evil.example")]).await;
            assert_eq!(status, 403, "{method}");
        }
        let cross = ask(loopback(), "POST", "/v1/cases", &[host, ("Sec-Fetch-Site", "cross-site")]).await;
        assert_eq!(cross.0, 403, "{}", cross.1);
        // This server's own pages, and programs that send no Origin.
        assert_eq!(
            ask(loopback(), "POST", "/v1/cases", &[host, ("Origin", "http://127.0.0.1:8787")]).await.0,
            201
        );
        let page = [host, ("Origin", "http://127.0.0.1:8787"), ("Sec-Fetch-Site", "same-origin")];
        assert_eq!(ask(loopback(), "POST", "/v1/cases", &page).await.0, 201);
        assert_eq!(ask(loopback(), "POST", "/v1/cases", &[host, plain]).await.0, 201);
        let local = [("Host", "localhost:8787"), ("Origin", "http://localhost:8787")];
        assert_eq!(ask(loopback(), "POST", "/v1/cases", &local).await.0, 201);
        // Reads are left to the browser's same-origin policy (no CORS header is ever sent).
        assert_eq!(
            ask(loopback(), "GET", "/v1/cases", &[host, ("Origin", "http://evil.example")]).await.0,
            200
        );
        // Behind a proxy: the public URL's origin, whatever Host the proxy sends.
        let public = Site::new("127.0.0.1:8787".parse().unwrap(), Some("https://recite.example.org/"), &[]);
        let proxied = [host, ("Origin", "https://recite.example.org")];
        assert_eq!(ask(public.clone(), "POST", "/v1/cases", &proxied).await.0, 201);
        let lookalike = [host, ("Origin", "https://recite.example.org.evil.example")];
        assert_eq!(ask(public, "POST", "/v1/cases", &lookalike).await.0, 403);
    }

    #[test]
    fn origins_are_compared_in_one_form() {
        assert_eq!(
            origin_of("https://Recite.Example.org:443/x?y").as_deref(),
            Some("https://recite.example.org")
        );
        assert_eq!(origin_of("http://[::1]:8787").as_deref(), Some("http://[::1]:8787"));
        assert_eq!(origin_of("http://127.0.0.1:80").as_deref(), Some("http://127.0.0.1"));
        assert_eq!(origin_of("null"), None);
        assert_eq!(origin_of("file:///etc"), None);
        assert_eq!(origin_of("http://user@evil.example"), None);
    }
}
