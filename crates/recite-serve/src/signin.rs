//! The bearer token for browsers: with `--token-file`, an agent sends `Authorization: Bearer
//! TOKEN`, which a browser cannot; so the workbench's pages offer `GET /signin`, a form that
//! posts the token once and gets a session cookie in return (`HttpOnly`, `SameSite=Strict`,
//! `Secure` behind an `https` public URL). The cookie holds a digest of the token, never the
//! token, and is compared in constant time as the token is. A request the cookie authorises
//! that changes something comes from this server's own pages: the site's `Origin` check, before
//! every route and in every mode ([`super::site`]), is a second guard beside `SameSite`.

use std::sync::Arc;

use axum::Router;
use axum::extract::{FromRef, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use cookie::{Cookie, SameSite};
use subtle::ConstantTimeEq as _;

use crate::extract::{BodyLimits, Payload};
use crate::headers;
use crate::ledger::sha256_hex;
use crate::problem::Problem;

/// The session cookie's name.
const COOKIE: &str = "recite_session";

/// What a request must show: the bearer token, or the session cookie derived from it.
pub struct Guard {
    token: Vec<u8>,
    session: String,
    /// Whether the server is reached over `https` (the cookie is then `Secure`).
    secure: bool,
}

impl Guard {
    /// The guard of `token` for a server reached at `base` (its `--public-url`, else its
    /// address); an `https` base marks the cookie `Secure`.
    pub fn new(token: Vec<u8>, base: &str) -> Guard {
        let mut salted = b"recite session\0".to_vec();
        salted.extend_from_slice(&token);
        let secure = base.get(..8).is_some_and(|s| s.eq_ignore_ascii_case("https://"));
        Guard { session: sha256_hex(&salted), token, secure }
    }

    /// The session cookie (`Set-Cookie`), written by the `cookie` crate.
    fn cookie(&self) -> Cookie<'static> {
        Cookie::build((COOKIE, self.session.clone()))
            .path("/")
            .http_only(true)
            .same_site(SameSite::Strict)
            .secure(self.secure)
            .build()
    }
}

/// The session cookie in a request, if it has one: its `Cookie` headers read by the `cookie`
/// crate (a pair it cannot parse is skipped, as a browser would).
fn session_of(req: &Request) -> Option<Cookie<'_>> {
    req.headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|c| c.name() == COOKIE)
}

/// The bearer token of an `Authorization` header: the scheme is matched without regard to case
/// (RFC 9110 §11.1), one or more spaces before the token.
fn bearer(v: &str) -> Option<&str> {
    let (scheme, token) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// The token check, in constant time: the bearer token, else the session cookie (from this
/// server's pages for a change). A page asked for without either is sent to the sign-in form.
pub async fn authorize(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    let bearer = req.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(bearer);
    if bearer.is_some_and(|t| same_token(t.as_bytes(), &guard.token)) {
        return next.run(req).await;
    }
    // A change made with the cookie comes from this server's own pages: the site's Origin check
    // ([`super::site`]) has refused any other before this.
    if bearer.is_none()
        && session_of(&req).is_some_and(|s| same_token(s.value().as_bytes(), guard.session.as_bytes()))
    {
        return next.run(req).await;
    }
    let page = req.method() == Method::GET
        && !req.uri().path().starts_with("/v1/")
        && req
            .headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("text/html"));
    if page {
        return Redirect::to("/signin").into_response();
    }
    Problem {
        status: 401,
        title: "unauthorized",
        detail: "this server needs `Authorization: Bearer TOKEN` (the token in its --token-file), \
                 or, from a browser, the session of /signin"
            .into(),
        location: Some("header.authorization".into()),
        retry_after: None,
    }
    .into_response()
}

const FORM: &str = include_str!("workbench/signin.html");

fn form(status: StatusCode, message: &str) -> Response {
    let html = FORM.replace("{message}", message);
    let kind = (header::CONTENT_TYPE, "text/html; charset=utf-8");
    (status, [kind, (header::CACHE_CONTROL, "no-store")], html).into_response()
}

/// The token form is read whole within these: at most 4 KiB (and in [`FORM_WITHIN`]).
impl FromRef<Arc<Guard>> for BodyLimits {
    fn from_ref(_: &Arc<Guard>) -> BodyLimits {
        BodyLimits { max: 4096 }
    }
}

/// `POST /signin` (`token=TOKEN`, form-encoded): the session cookie and a redirect to the
/// index, or the form again, 401, saying the token was wrong.
async fn sign_in(State(guard): State<Arc<Guard>>, Payload(body): Payload) -> Response {
    let token = form_urlencoded::parse(&body).find(|(k, _)| k == "token").map(|(_, v)| v);
    match token {
        Some(t) if same_token(t.trim().as_bytes(), &guard.token) => {
            let mut r = Redirect::to("/").into_response();
            if let Ok(c) = HeaderValue::from_str(&guard.cookie().to_string()) {
                r.headers_mut().insert(header::SET_COOKIE, c);
            }
            r
        }
        _ => form(
            StatusCode::UNAUTHORIZED,
            "<p class=\"error\" role=\"alert\">That is not this server's token.</p>",
        ),
    }
}

/// `GET /signin` and `POST /signin`, outside the token's guard.
pub fn routes(guard: Arc<Guard>) -> Router {
    let signin = Router::new()
        .route("/signin", get(|| async { form(StatusCode::OK, "") }).post(sign_in))
        .layer(axum::middleware::map_request_with_state(FORM_WITHIN, crate::extract::body_deadline));
    headers::pages(signin, FORM_CSP).with_state(guard)
}

/// The longest the sign-in form may take to arrive.
const FORM_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// The sign-in form's policy: its style, and posting to this server only.
const FORM_CSP: &str =
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'";

/// Whether `bytes` equal `token`, in time that depends on the token's length only.
pub fn same_token(bytes: &[u8], token: &[u8]) -> bool {
    bool::from(bytes.ct_eq(token))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use axum::Router;
    use axum::body::Body;
    use axum::http::{Request, StatusCode, header};
    use axum::routing::get;
    use cookie::{Cookie, SameSite};
    use tower::ServiceExt as _;

    use super::{Guard, authorize, bearer, routes, same_token};

    const TOKEN: &str = "s3cret-token-0123456789";

    /// The sign-in routes and one route behind the guard, as `recite serve` puts them.
    fn app(base: &str) -> Router {
        let guard = Arc::new(Guard::new(TOKEN.as_bytes().to_vec(), base));
        Router::new()
            .route("/v1/cases", get(|| async { "cases" }))
            .layer(axum::middleware::from_fn_with_state(guard.clone(), authorize))
            .merge(routes(guard))
    }

    /// The status of `method target` with `headers` and `body`, and its `Set-Cookie` if any.
    async fn ask(
        app: Router,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (StatusCode, Option<String>) {
        let mut req = Request::builder().method(method).uri(target);
        for (n, v) in headers {
            req = req.header(*n, *v);
        }
        let r = app.oneshot(req.body(Body::from(body.to_string())).unwrap()).await.unwrap();
        let set = r.headers().get(header::SET_COOKIE).map(|v| v.to_str().unwrap().to_string());
        (r.status(), set)
    }

    /// Signs in with `token` at a server reached at `base`: the status and the cookie set.
    async fn sign_in(base: &str, token: &str) -> (StatusCode, Option<String>) {
        let form = [("Content-Type", "application/x-www-form-urlencoded")];
        ask(app(base), "POST", "/signin", &form, &format!("token={token}")).await
    }

    #[tokio::test]
    async fn the_session_cookie_is_set_with_its_attributes_and_read_among_others() {
        let (status, set) = sign_in("http://127.0.0.1:8787", TOKEN).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        let set = set.expect("a session cookie");
        // Read back by the cookie crate, as a browser reads it: attributes in any order.
        let c = Cookie::parse(set.as_str()).unwrap();
        assert_eq!(c.name(), "recite_session");
        assert_eq!((c.http_only(), c.same_site(), c.path()), (Some(true), Some(SameSite::Strict), Some("/")));
        assert_ne!(c.secure(), Some(true), "not Secure over http: {set}");
        assert!(!set.contains(TOKEN), "the cookie holds the token: {set}");
        // The session among a browser's other cookies, with spaces as browsers send them.
        let jar = format!("theme=dark; {}; lang=en", c.stripped());
        let (status, _) =
            ask(app("http://127.0.0.1:8787"), "GET", "/v1/cases", &[("Cookie", jar.as_str())], "").await;
        assert_eq!(status, StatusCode::OK);
        // In a second Cookie header (HTTP/2 splits them so) too.
        let split = [("Cookie", "theme=dark"), ("Cookie", &c.stripped().to_string())];
        let (status, _) = ask(app("http://127.0.0.1:8787"), "GET", "/v1/cases", &split, "").await;
        assert_eq!(status, StatusCode::OK);
        let forged = format!("recite_session={}", "0".repeat(64));
        let (status, _) =
            ask(app("http://127.0.0.1:8787"), "GET", "/v1/cases", &[("Cookie", forged.as_str())], "").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        // A cookie of another name with the session's value is no session.
        let renamed = format!("other={}", c.value());
        let (status, _) =
            ask(app("http://127.0.0.1:8787"), "GET", "/v1/cases", &[("Cookie", renamed.as_str())], "").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }

    #[tokio::test]
    async fn the_session_cookie_is_secure_behind_https_and_never_set_for_a_wrong_token() {
        let (_, set) = sign_in("https://recite.example.org", TOKEN).await;
        let c = Cookie::parse(set.expect("a session cookie")).unwrap();
        assert_eq!(c.secure(), Some(true));
        let (status, set) = sign_in("https://recite.example.org", "s3cret-token-012345678X").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(set, None);
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same_token(b"0123456789abcdef", b"0123456789abcdef"));
        assert!(!same_token(b"0123456789abcdeF", b"0123456789abcdef"));
        assert!(!same_token(b"0123456789abcde", b"0123456789abcdef"));
        assert!(!same_token(b"0123456789abcdef0", b"0123456789abcdef"));
        assert!(!same_token(b"", b"0123456789abcdef"));
    }

    #[test]
    fn the_bearer_scheme_is_matched_in_any_case() {
        for v in ["Bearer t0k", "bearer t0k", "BEARER t0k", "Bearer   t0k ", "bEaReR t0k"] {
            assert_eq!(bearer(v), Some("t0k"), "{v}");
        }
        for v in ["Basic t0k", "Bearert0k", "Bearer", "Bear t0k"] {
            assert_ne!(bearer(v), Some("t0k"), "{v}");
        }
    }
}
