//! The headers every page, asset and stored report carries, as tower-http layers: its
//! Content-Security-Policy (unless the route set its own), `nosniff` and `same-origin` as the
//! referrer policy. A leaf, so the routes that serve pages (the workbench, the sign-in form)
//! share it without importing each other.
//!
//! `same-origin`, not `no-referrer`: under `no-referrer` a browser sends `Origin: null` with a
//! form's POST (the Fetch standard's rule for a request that is not CORS), which the site's
//! Origin check (`site.rs`) refuses as it must, so the sign-in and sign-out forms were
//! answered 403 in Chromium. `same-origin` sends the page's origin to this server and no
//! referrer to any other (the pages ask nothing of any other).

use axum::Router;
use axum::http::{HeaderValue, header};
use tower_http::set_header::SetResponseHeaderLayer;

/// `router`'s responses with the page headers, `csp` their policy.
pub fn pages<S: Clone + Send + Sync + 'static>(router: Router<S>, csp: &'static str) -> Router<S> {
    router
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(csp),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::REFERRER_POLICY,
            HeaderValue::from_static("same-origin"),
        ))
}
