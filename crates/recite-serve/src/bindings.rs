//! What the A2A SDK's bindings leave to the server, in each binding's own error shape: a body
//! declared over the input limit is refused before it is read, a body is read whole within the
//! time limit, a `SendMessage` without its REQUIRED `message` is invalid params, and the
//! HTTP+JSON binding's own refusals (axum's plain-text "Failed to parse the request body as
//! JSON", 413, 415) are rewritten as that binding's error object, so the SDKs raise typed
//! errors.
//!
//! - JSON-RPC (`/a2a/jsonrpc`): `{"jsonrpc": "2.0", "error": {code, message}, "id"}`, -32602
//!   for invalid params (JSON-RPC 2.0 §5.1), -32600 for a request too large to read.
//! - HTTP+JSON (`/a2a/rest`): `{"error": {code, status, message, details}}`, google.rpc.Status
//!   as A2A v1.0 §11 and the SDK's own errors have it: a `BadRequest` detail naming the field,
//!   and an `ErrorInfo` with the A2A reason in the `a2a-protocol.org` domain.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::extract::{self, BodyLimits};
use crate::problem::Problem;

/// The two A2A bindings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// JSON-RPC 2.0.
    JsonRpc,
    /// HTTP+JSON (REST).
    Rest,
}

/// Methods whose params are a `SendMessageRequest`, by binding (v1.0 names, and the paths'
/// legacy spellings the SDK routes too).
const SEND_METHODS: [&str; 2] = ["SendMessage", "SendStreamingMessage"];
const SEND_PATHS: [&str; 4] = ["/message:send", "/message:stream", "/message/send", "/message/stream"];

/// The middleware: `limits` are the service's input and time limits.
pub async fn guard(binding: Binding, limits: BodyLimits, req: Request, next: Next) -> Response {
    let refused = |p: Problem| refusal(binding, &p, None);
    if req.method() != axum::http::Method::POST {
        return shaped(binding, next.run(req).await).await;
    }
    let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok());
    if declared.and_then(|d| d.parse::<u64>().ok()).is_some_and(|n| n > limits.max) {
        return refused(Problem::too_large(limits.max));
    }
    let (parts, body) = req.into_parts();
    let bytes = match extract::read_within(body, limits).await {
        Ok(b) => b,
        Err(p) => return refused(p),
    };
    let path = parts.uri.path().to_string();
    if let Ok(v) = serde_json::from_slice::<Value>(&bytes)
        && let Some((why, id)) = missing_message(binding, &path, &v)
    {
        return refusal(binding, &Problem::bad_request("params.message", why), Some(id));
    }
    shaped(binding, next.run(Request::from_parts(parts, Body::from(bytes))).await).await
}

/// Why a send request has no message, and the JSON-RPC request's id: `message` is REQUIRED
/// in a2a.proto's `SendMessageRequest`, which the SDK reads as optional.
fn missing_message(binding: Binding, path: &str, v: &Value) -> Option<(String, Value)> {
    let (params, id) = match binding {
        Binding::JsonRpc => {
            let method = v.get("method")?.as_str()?;
            if !SEND_METHODS.contains(&method) {
                return None;
            }
            (v.get("params").unwrap_or(&Value::Null), v.get("id").cloned().unwrap_or(Value::Null))
        }
        Binding::Rest => {
            if !SEND_PATHS.iter().any(|p| path.ends_with(p)) {
                return None;
            }
            (v, Value::Null)
        }
    };
    match params.get("message") {
        Some(m) if !m.is_null() => None,
        _ => Some(("`message` is REQUIRED in a SendMessageRequest: the message to settle".into(), id)),
    }
}

/// The binding's error object for `p` (JSON-RPC: with the request's `id`).
fn refusal(binding: Binding, p: &Problem, id: Option<Value>) -> Response {
    let status = StatusCode::from_u16(p.status).unwrap_or(StatusCode::BAD_REQUEST);
    match binding {
        Binding::JsonRpc => {
            // Invalid params when the request was read; else it could not be (-32600).
            let code =
                if p.location.as_deref().is_some_and(|l| l.starts_with("params")) { -32602 } else { -32600 };
            let body = json!({
                "jsonrpc": "2.0",
                "error": { "code": code, "message": format!("{}: {}", p.title, p.detail) },
                "id": id.unwrap_or(Value::Null),
            });
            // A read request is answered 200, as JSON-RPC over HTTP answers every reply.
            let status = if code == -32602 { StatusCode::OK } else { status };
            (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
        }
        Binding::Rest => rest_error(status, &p.detail, p.location.as_deref().unwrap_or("")),
    }
}

/// The HTTP+JSON binding's error object.
fn rest_error(status: StatusCode, message: &str, field: &str) -> Response {
    let grpc = match status.as_u16() {
        404 => "NOT_FOUND",
        400..=499 => "INVALID_ARGUMENT",
        _ => "INTERNAL",
    };
    let reason = if status.is_client_error() { "INVALID_PARAMS" } else { "INTERNAL_ERROR" };
    let body = json!({ "error": {
        "code": status.as_u16(),
        "status": grpc,
        "message": message,
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [ { "field": field, "description": message } ],
            },
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": "a2a-protocol.org",
                "metadata": { "timestamp": chrono::Utc::now().to_rfc3339() },
            },
        ],
    }});
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// A refusal the HTTP+JSON binding answered in plain text (axum's extractors' rejections),
/// rewritten as its error object; every other response as it is.
async fn shaped(binding: Binding, r: Response) -> Response {
    let plain = r
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v: &HeaderValue| v.to_str().ok())
        .is_none_or(|t| t.starts_with("text/plain"));
    if binding != Binding::Rest || !r.status().is_client_error() || !plain {
        return r;
    }
    let status = r.status();
    let text = axum::body::to_bytes(r.into_body(), 64 * 1024).await.unwrap_or_default();
    let message = String::from_utf8_lossy(&text).trim().to_string();
    let message = if message.is_empty() {
        status.canonical_reason().unwrap_or("bad request").to_string()
    } else {
        message
    };
    rest_error(status, &message, "")
}

#[cfg(test)]
mod tests {

    use axum::Router;
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use axum::routing::post;
    use serde_json::Value;
    use tower::ServiceExt as _;

    use super::{Binding, guard};
    use crate::extract::BodyLimits;

    /// A binding that answers what axum's `Json` extractor would, behind the guard.
    fn app(binding: Binding) -> Router {
        let limits = BodyLimits { max: 1024 };
        let reached = post(|axum::Json(_): axum::Json<Value>| async { "reached" });
        Router::new().route("/", reached.clone()).route("/message:send", reached).layer(
            axum::middleware::from_fn(move |req: axum::extract::Request, next: axum::middleware::Next| {
                guard(binding, limits, req, next)
            }),
        )
    }

    async fn ask(binding: Binding, path: &str, body: &str, length: Option<&str>) -> (StatusCode, Value) {
        let mut req = Request::post(path).header("content-type", "application/json");
        if let Some(n) = length {
            req = req.header("content-length", n);
        }
        let r = app(binding).oneshot(req.body(Body::from(body.to_string())).unwrap()).await.unwrap();
        let status = r.status();
        let bytes = axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap();
        (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    #[tokio::test]
    async fn a_send_without_its_message_is_invalid_params() {
        let rpc = r#"{"jsonrpc": "2.0", "id": 4, "method": "SendMessage", "params": {}}"#;
        let (status, v) = ask(Binding::JsonRpc, "/", rpc, None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!((v["error"]["code"].as_i64(), &v["id"]), (Some(-32602), &Value::from(4)), "{v}");
        let (status, v) = ask(Binding::Rest, "/message:send", "{}", None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(v["error"]["status"], "INVALID_ARGUMENT", "{v}");
        assert_eq!(v["error"]["details"][1]["reason"], "INVALID_PARAMS", "{v}");
        // Another method, or a message given, goes on.
        let other = r#"{"jsonrpc": "2.0", "id": 5, "method": "GetTask", "params": {}}"#;
        assert_eq!(ask(Binding::JsonRpc, "/", other, None).await.0, StatusCode::OK);
    }

    #[tokio::test]
    async fn the_rest_bindings_refusals_are_its_error_object() {
        let (status, v) = ask(Binding::Rest, "/message:send", "{not json", None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
        assert_eq!(v["error"]["code"], 400, "{v}");
        assert!(v["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
        // Declared over the limit: refused before a byte is read, in each binding's shape.
        let (status, v) = ask(Binding::Rest, "/message:send", "{}", Some("1073741824")).await;
        assert_eq!((status, &v["error"]["code"]), (StatusCode::PAYLOAD_TOO_LARGE, &Value::from(413)), "{v}");
        let (status, v) = ask(Binding::JsonRpc, "/", "{}", Some("1073741824")).await;
        assert_eq!(
            (status, v["error"]["code"].as_i64()),
            (StatusCode::PAYLOAD_TOO_LARGE, Some(-32600)),
            "{v}"
        );
    }
}
