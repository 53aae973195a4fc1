//! What a handler takes from a request, typed: its query ([`Query`] of a [`Params`] type per
//! endpoint, each parameter checked against the endpoint's own), its body read whole within the
//! size limit ([`Payload`], refused unread when its declared length is over) and the time limit
//! (the layer [`body_deadline`]), and a `multipart/form-data` body's parts ([`Boundary`],
//! [`inputs`]). Every refusal is a [`Problem`] naming where the request was wrong
//! (`query.format`, `body.part[3]`…).

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{FromRef, FromRequest, FromRequestParts, Request};
use axum::http::header;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt as _;

use crate::problem::Problem;

/// The query string's parameters, decoded, in order; each one the endpoint takes.
pub struct Pairs(Vec<(String, String)>);

impl Pairs {
    /// The parameters of `query` (`a=1&b=2`), each one of `allowed`.
    fn parse(query: &str, allowed: &[&str]) -> Result<Pairs, Problem> {
        // form_urlencoded decodes lossily (U+FFFD for bytes that are not UTF-8); the service
        // refuses them instead. The separators `&` and `=` are ASCII, so the whole string
        // decodes as UTF-8 exactly when every name and value does: checked once, strictly.
        if decode(query).is_none() {
            return Err(Problem::bad_request("query", "a parameter is not valid percent-encoded UTF-8"));
        }
        let mut out = Vec::new();
        for (k, v) in form_urlencoded::parse(query.as_bytes()) {
            if !allowed.contains(&k.as_ref()) {
                let known = allowed.join(", ");
                return Err(Problem::bad_request(
                    &format!("query.{k}"),
                    format!("unknown parameter {k:?}; this endpoint takes {known}"),
                ));
            }
            out.push((k.into_owned(), v.into_owned()));
        }
        Ok(Pairs(out))
    }

    /// The one value of parameter `k`, if given (twice is an error).
    pub fn single(&self, k: &str) -> Result<Option<&str>, Problem> {
        let mut it = self.0.iter().filter(|(n, _)| n == k);
        let first = it.next().map(|(_, v)| v.as_str());
        if it.next().is_some() {
            return Err(Problem::bad_request(&format!("query.{k}"), format!("{k} is given more than once")));
        }
        Ok(first)
    }

    /// Every value of parameter `k`, in order.
    pub fn all(&self, k: &str) -> Vec<String> {
        self.0.iter().filter(|(n, _)| n == k).map(|(_, v)| v.clone()).collect()
    }
}

/// `application/x-www-form-urlencoded` decoding (`+` is a space), of UTF-8 text only: the
/// strict check before form_urlencoded splits and decodes.
fn decode(s: &str) -> Option<String> {
    let spaced = s.replace('+', " ");
    percent_encoding::percent_decode_str(&spaced).decode_utf8().ok().map(|c| c.into_owned())
}

/// An endpoint's query parameters, as a type.
pub trait Params: Sized {
    /// The parameters the endpoint takes; any other is refused.
    const ALLOWED: &'static [&'static str];
    /// The parameters read from the decoded pairs.
    fn read(q: &Pairs) -> Result<Self, Problem>;
}

/// The query string as the endpoint's [`Params`].
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: Params> FromRequestParts<S> for Query<T> {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Problem> {
        let q = Pairs::parse(parts.uri.query().unwrap_or(""), T::ALLOWED)?;
        T::read(&q).map(Query)
    }
}

/// What a name in a report may be (`?name=`, a part's file name).
const NAME_RULE: &str = "a name is 1 to 256 characters, none of them control characters";

/// Whether `name` may name an input in a report.
pub fn good_name(name: &str) -> bool {
    !name.is_empty() && name.chars().count() <= 256 && !name.chars().any(char::is_control)
}

/// The input's name in the report: `name`, default `-`; 1 to 256 characters, no control
/// characters.
pub fn input_name(q: &Pairs) -> Result<String, Problem> {
    let name = q.single("name")?.unwrap_or("-").to_string();
    if !good_name(&name) {
        return Err(Problem::bad_request("query.name", NAME_RULE));
    }
    Ok(name)
}

/// How much of a body a route reads (how long it may take to arrive is the layer
/// [`body_deadline`]'s).
#[derive(Debug, Clone, Copy)]
pub struct BodyLimits {
    /// The most bytes read (413 past them).
    pub max: u64,
}

/// The body-read time limit, as a layer (`axum::middleware::map_request_with_state(within,
/// body_deadline)`): every request's body must have arrived whole `within` of its head, or
/// reading it fails ([`BodyTimedOut`], which the readers here answer 408), so a caller that
/// sends a body slowly or never finishes it cannot hold a connection for ever.
///
/// The deadline is counted once, from the head, not per chunk: tower-http's
/// `RequestBodyTimeoutLayer` restarts its timer at every frame, so a body trickled a byte at a
/// time would be read for as long as its sender likes (docs/service.md).
pub async fn body_deadline(
    axum::extract::State(within): axum::extract::State<Duration>,
    req: Request,
) -> Request {
    req.map(|body| Body::new(Deadline { body, within, at: Box::pin(tokio::time::sleep(within)) }))
}

/// A request body that fails once its deadline has passed ([`body_deadline`]).
struct Deadline {
    body: Body,
    within: Duration,
    at: Pin<Box<tokio::time::Sleep>>,
}

/// A body that did not arrive within its time limit ([`body_deadline`]).
#[derive(Debug)]
pub struct BodyTimedOut(pub Duration);

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the body did not arrive within {} s", self.0.as_secs())
    }
}

impl std::error::Error for BodyTimedOut {}

impl http_body::Body for Deadline {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        // What has arrived is given first; the deadline is looked at only while waiting.
        if let Poll::Ready(frame) = http_body::Body::poll_frame(Pin::new(&mut self.body), cx) {
            return Poll::Ready(frame);
        }
        match self.at.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(axum::Error::new(BodyTimedOut(self.within))))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        http_body::Body::is_end_stream(&self.body)
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::Body::size_hint(&self.body)
    }
}

/// The time limit a body read failed on, if it failed on its deadline.
fn timed_out(e: &(dyn std::error::Error + 'static)) -> Option<Duration> {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if let Some(t) = c.downcast_ref::<BodyTimedOut>() {
            return Some(t.0);
        }
        cause = c.source();
    }
    None
}

/// The whole body, read within the route's [`BodyLimits`]: refused unread (413) when its
/// declared length is over them.
pub struct Payload(pub Vec<u8>);

impl<S> FromRequest<S> for Payload
where
    S: Send + Sync,
    BodyLimits: FromRef<S>,
{
    type Rejection = Problem;

    async fn from_request(req: Request, state: &S) -> Result<Self, Problem> {
        let limits = BodyLimits::from_ref(state);
        let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok());
        match declared.map(str::parse::<u64>) {
            Some(Ok(n)) if n > limits.max => return Err(Problem::too_large(limits.max)),
            Some(Err(_)) => return Err(Problem::bad_request("header.content-length", "not a number")),
            _ => {}
        }
        read_within(req.into_body(), limits).await.map(Payload)
    }
}

/// Reads the whole body within `limits` and its deadline ([`body_deadline`]): 408 past the
/// time, 413 past the size, 400 when it is cut short. Read through http-body-util's `Limited`
/// (what axum's `to_bytes` uses), so that a body past the size is told apart, by its error's
/// type, from one cut short.
pub async fn read_within(body: Body, limits: BodyLimits) -> Result<Vec<u8>, Problem> {
    let max = limits.max;
    let limited = http_body_util::Limited::new(body, usize::try_from(max).unwrap_or(usize::MAX));
    match limited.collect().await {
        Ok(all) => Ok(Vec::from(all.to_bytes())),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(Problem::too_large(max)),
        Err(e) => match timed_out(&*e) {
            Some(within) => Err(Problem::body_timeout(within)),
            None => Err(Problem::bad_request("body", format!("the body could not be read: {e}"))),
        },
    }
}

/// The boundary of a `multipart/…` body, `None` for any other body.
pub struct Boundary(pub Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for Boundary {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Problem> {
        match parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) {
            Some(ct) if ct.trim_start().to_ascii_lowercase().starts_with("multipart/") => {
                let b = multer::parse_boundary(ct)
                    .map_err(|e| Problem::bad_request("header.content-type", format!("{ct:?}: {e}")))?;
                Ok(Boundary(Some(b)))
            }
            _ => Ok(Boundary(None)),
        }
    }
}

/// Most parts a multipart body may have: each is an input of the report.
pub const MAX_PARTS: usize = 1024;

/// The inputs of a body: itself, named `name`, or with a multipart `boundary` one a part, in
/// order, each named by its file name (else its field name, else `part N`). The body is
/// already read within the size limit.
pub async fn inputs(
    body: Vec<u8>,
    name: String,
    boundary: Boundary,
) -> Result<Vec<(String, Vec<u8>)>, Problem> {
    let Some(boundary) = boundary.0 else { return Ok(vec![(name, body)]) };
    let stream = futures::stream::once(async move { Ok::<Bytes, std::io::Error>(Bytes::from(body)) });
    let mut form = multer::Multipart::new(stream, boundary);
    let mut out = Vec::new();
    loop {
        let at = format!("body.part[{}]", out.len());
        let field = match form.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => return Err(Problem::bad_request(&at, format!("not a multipart part: {e}"))),
        };
        if out.len() == MAX_PARTS {
            return Err(Problem::bad_request(&at, format!("a check takes at most {MAX_PARTS} parts")));
        }
        let name = field
            .file_name()
            .or(field.name())
            .filter(|n| !n.is_empty())
            .map_or_else(|| format!("part {}", out.len() + 1), str::to_string);
        if !good_name(&name) {
            return Err(Problem::bad_request(&at, NAME_RULE));
        }
        let bytes = field.bytes().await.map_err(|e| Problem::bad_request(&at, format!("{name}: {e}")))?;
        out.push((name, bytes.to_vec()));
    }
    if out.is_empty() {
        return Err(Problem::bad_request(
            "body",
            "the multipart body has no part: send one transcript a part",
        ));
    }
    Ok(out)
}

/// A JSON answer as the API writes them: pretty, with a final newline.
pub fn json_response(v: &serde_json::Value) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], format!("{v:#}\n")).into_response()
}

#[cfg(test)]
mod tests {
    use super::{Pairs, decode};

    #[test]
    fn query_values_decode() {
        assert_eq!(decode("Considered%3D44%25").as_deref(), Some("Considered=44%"));
        assert_eq!(decode("a+b").as_deref(), Some("a b"));
        assert_eq!(decode("%ff"), None);
        // A `%` not followed by two hex digits stays as written, as WHATWG's form decoding has it.
        assert_eq!(decode("%zz").as_deref(), Some("%zz"));
    }

    #[test]
    fn a_parameter_is_one_the_endpoint_takes_and_given_once() {
        let q =
            Pairs::parse("claim=0.44&claim=Considered%3D44%25&format=text", &["format", "claim"]).unwrap();
        assert_eq!(q.single("format").unwrap(), Some("text"));
        assert_eq!(q.all("claim"), ["0.44", "Considered=44%"]);
        assert_eq!(q.single("claim").unwrap_err().location.as_deref(), Some("query.claim"));
        // Not UTF-8, in a name or a value: refused, not decoded into U+FFFD.
        for bad in ["claim=%ff", "cl%c3aim=1", "format=text&claim=%e2%82"] {
            let p = Pairs::parse(bad, &["format", "claim"]).err().unwrap();
            assert_eq!(p.location.as_deref(), Some("query"), "{bad}");
        }
        // A genuine U+FFFD, percent-encoded, is text like any other.
        assert_eq!(Pairs::parse("claim=%EF%BF%BD", &["claim"]).unwrap().all("claim"), ["\u{FFFD}"]);
        let p = Pairs::parse("fromat=json", &["format"]).err().unwrap();
        assert_eq!(p.location.as_deref(), Some("query.fromat"));
        assert!(p.detail.contains("this endpoint takes format"), "{}", p.detail);
    }
}
