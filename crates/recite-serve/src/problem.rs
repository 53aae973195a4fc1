//! Why a request or an operation gave no answer: one error type, [`Problem`], rendered as
//! `application/problem+json` (RFC 9457) with a `location` member naming the part of the
//! request that was wrong; and why a settling job stopped ([`Stopped`]).

use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// Why an operation gave no report: an HTTP status, a title and what went wrong, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The HTTP status it maps to.
    pub status: u16,
    /// A short title, the same for every problem of its kind.
    pub title: &'static str,
    /// What went wrong, for this request.
    pub detail: String,
    /// Where in the request (`body`, `query.format`, `header.authorization`…), when it was the
    /// request's fault.
    pub location: Option<String>,
    /// Seconds after which to try again (503).
    pub retry_after: Option<u64>,
}

impl Problem {
    /// The request itself is wrong at `location`.
    pub fn bad_request(location: &str, detail: impl Into<String>) -> Problem {
        Problem {
            status: 400,
            title: "bad request",
            detail: detail.into(),
            location: Some(location.to_string()),
            retry_after: None,
        }
    }

    /// The body is over the size limit.
    pub fn too_large(max: u64) -> Problem {
        Problem {
            status: 413,
            title: "request body too large",
            detail: format!("the body is over {max} bytes (--max-input-size)"),
            location: Some("body".into()),
            retry_after: None,
        }
    }

    /// Every turn is taken and the queue is full.
    pub(crate) fn busy(concurrency: usize, queue: usize) -> Problem {
        Problem {
            status: 503,
            title: "busy",
            detail: format!(
                "{concurrency} requests are running and {queue} waiting (--concurrency, --queue); try again later"
            ),
            location: None,
            retry_after: Some(1),
        }
    }

    /// The server is stopping.
    pub(crate) fn stopping() -> Problem {
        Problem {
            status: 503,
            title: "stopping",
            detail: "the server is shutting down".into(),
            location: None,
            retry_after: Some(5),
        }
    }

    /// The time limit passed.
    pub fn time_limit(limit: Duration) -> Problem {
        Problem {
            status: 504,
            title: "time limit",
            detail: format!("the request did not finish within {} s (--time-limit)", limit.as_secs()),
            location: None,
            retry_after: None,
        }
    }

    /// The server failed: nothing the request could change.
    pub fn internal(detail: impl Into<String>) -> Problem {
        Problem {
            status: 500,
            title: "internal error",
            detail: recite_engine::objstore::redact(&detail.into()).into_owned(),
            location: None,
            retry_after: None,
        }
    }

    /// A body that did not arrive within `limit` (408).
    pub fn body_timeout(limit: Duration) -> Problem {
        Problem {
            status: 408,
            title: "request timeout",
            detail: format!("the body did not arrive within {} s (--time-limit)", limit.as_secs()),
            location: Some("body".into()),
            retry_after: None,
        }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.location {
            Some(at) => write!(f, "{} ({at}): {}", self.title, self.detail),
            None => write!(f, "{}: {}", self.title, self.detail),
        }
    }
}

/// The media type of errors.
const PROBLEM: &str = "application/problem+json";

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut body = json!({
            "type": "about:blank",
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
        });
        if let Some(at) = &self.location {
            body["location"] = json!(at);
        }
        let mut r = (status, [(header::CONTENT_TYPE, PROBLEM)], format!("{body:#}\n")).into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        if self.status == 401 {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        r
    }
}

/// Why a settling job stopped without its result: the time limit passed (its writes are
/// refused from then on), or it failed.
#[derive(Debug)]
pub enum Stopped {
    /// The request's time limit passed.
    TimedOut,
    /// It failed, saying why.
    Failed(String),
}

impl From<String> for Stopped {
    fn from(why: String) -> Self {
        Stopped::Failed(why)
    }
}

impl Stopped {
    /// The problem to answer, for a request whose time limit is `limit`.
    pub fn problem(self, limit: Duration) -> Problem {
        match self {
            Stopped::TimedOut => Problem::time_limit(limit),
            Stopped::Failed(why) => Problem::internal(why),
        }
    }
}
