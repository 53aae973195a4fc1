//! Malformed JSON-RPC sent to `recite serve`'s A2A binding (`/a2a/jsonrpc`) and MCP endpoint
//! (`/mcp`), over plain HTTP: every fault gets the JSON-RPC 2.0 specification's error object
//! (`{"jsonrpc":"2.0","error":{"code","message"},"id"}`, `id` null when the request's could not
//! be read) with the code the specification assigns, and the server keeps answering.

use serde_json::Value;

use crate::serve::{Response, Server};

/// The error object of a JSON-RPC reply (an HTTP body, or the first `data:` event of an SSE
/// body), asserting the envelope the specification gives it.
fn rpc_error(r: &Response) -> (i64, Value) {
    let text = String::from_utf8_lossy(&r.body);
    let json = text
        .lines()
        .find_map(|l| l.strip_prefix("data:"))
        .map(|d| d.trim().to_string())
        .unwrap_or_else(|| text.to_string());
    let v: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {text}"));
    assert_eq!(v["jsonrpc"], "2.0", "{v}");
    assert!(v.get("result").is_none(), "an error reply has no result: {v}");
    let code = v["error"]["code"].as_i64().unwrap_or_else(|| panic!("no error code: {v}"));
    assert!(v["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "no message: {v}");
    (code, v["id"].clone())
}

/// POST `body` to `path` as JSON.
fn post(s: &Server, path: &str, body: &str) -> Response {
    s.request(
        "POST",
        path,
        &[
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("a2a-version", "1.0"),
        ],
        body.as_bytes(),
    )
}

#[test]
fn serve_a2a_answers_malformed_json_rpc_with_the_specifications_error_objects() {
    let s = Server::start(&[]);
    let path = "/a2a/jsonrpc";
    // Not JSON at all: Parse error, id null.
    let (code, id) = rpc_error(&post(&s, path, r#"{"jsonrpc": "2.0", "method": "SendMessage", "#));
    assert_eq!((code, id), (-32700, Value::Null));
    // JSON, but not a request object: Invalid Request.
    let (code, _) = rpc_error(&post(&s, path, r#"{"jsonrpc": "2.0", "id": 7}"#));
    assert_eq!(code, -32600);
    let (code, _) = rpc_error(&post(&s, path, r#""SendMessage""#));
    assert_eq!(code, -32600);
    // A method A2A does not have: Method not found, the id echoed.
    let (code, id) =
        rpc_error(&post(&s, path, r#"{"jsonrpc": "2.0", "id": 8, "method": "NoSuchMethod", "params": {}}"#));
    assert_eq!((code, id), (-32601, Value::from(8)));
    // A real method with params of the wrong shape: Invalid params.
    let (code, id) = rpc_error(&post(
        &s,
        path,
        r#"{"jsonrpc": "2.0", "id": "x", "method": "SendMessage", "params": {"message": 3}}"#,
    ));
    assert_eq!((code, id), (-32602, Value::from("x")));
    // No message at all (REQUIRED in a2a.proto's SendMessageRequest): Invalid params, not a
    // rejected task (issue 46, item 4).
    for params in [r#"{}"#, r#"{"message": null}"#] {
        let req = format!(r#"{{"jsonrpc": "2.0", "id": 10, "method": "SendMessage", "params": {params}}}"#);
        assert_eq!(rpc_error(&post(&s, path, &req)), (-32602, Value::from(10)), "{params}");
    }
    // A caller that names no A2A version is taken as v0.3, which this agent does not speak.
    let req = r#"{"jsonrpc": "2.0", "id": 9, "method": "GetTask", "params": {"id": "t"}}"#;
    let r = s.request("POST", path, &[("content-type", "application/json")], req.as_bytes());
    assert_eq!(rpc_error(&r), (-32009, Value::from(9)));
    // Still serving.
    let r = s.request("GET", "/healthz", &[], b"");
    assert_eq!(r.status, 200);
}

/// The HTTP+JSON binding's error object (google.rpc.Status, as A2A v1.0 and the SDK's own errors
/// have it): its code, status and the A2A reason of its ErrorInfo.
fn rest_error(r: &Response) -> (u16, String, String) {
    let text = String::from_utf8_lossy(&r.body);
    assert_eq!(r.header("content-type"), Some("application/json"), "{text}");
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    assert_eq!(v["error"]["code"].as_u64(), Some(u64::from(r.status)), "{v}");
    assert!(v["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
    let info = v["error"]["details"]
        .as_array()
        .and_then(|d| d.iter().find(|x| x["@type"] == "type.googleapis.com/google.rpc.ErrorInfo").cloned());
    let info = info.unwrap_or_else(|| panic!("no ErrorInfo: {v}"));
    assert_eq!(info["domain"], "a2a-protocol.org", "{v}");
    (
        r.status,
        v["error"]["status"].as_str().unwrap_or("").into(),
        info["reason"].as_str().unwrap_or("").into(),
    )
}

#[test]
fn serve_a2a_rest_answers_in_the_bindings_error_object() {
    let s = Server::start(&["--max-input-size", "64KiB"]);
    let send = "/a2a/rest/message:send";
    // Not JSON: before, axum's text/plain "Failed to parse the request body as JSON".
    let r = post(&s, send, r#"{"message": "#);
    assert_eq!(rest_error(&r), (400, "INVALID_ARGUMENT".into(), "INVALID_PARAMS".into()));
    // No message: before, a 200 with a rejected task.
    let r = post(&s, send, "{}");
    assert_eq!(rest_error(&r), (400, "INVALID_ARGUMENT".into(), "INVALID_PARAMS".into()));
    // Declared over --max-input-size: refused before the body is read, in both bindings' shapes.
    let big = format!(r#"{{"message": {{"parts": [{{"text": "{}"}}]}}}}"#, "x".repeat(80 << 10));
    assert_eq!(rest_error(&post(&s, send, &big)).0, 413);
    let r = post(&s, "/a2a/jsonrpc", &big);
    assert_eq!((r.status, rpc_error(&r).0), (413, -32600));
    let r = s.request("GET", "/healthz", &[], b"");
    assert_eq!(r.status, 200);
}

#[test]
fn serve_mcp_answers_malformed_json_rpc_with_the_specifications_error_objects() {
    let s = Server::start(&[]);
    let r = post(&s, "/mcp", r#"{"jsonrpc": "2.0", "method": "initialize", "#);
    assert_eq!(r.status, 400, "MCP's streamable HTTP answers 400 to a body that is not JSON-RPC");
    assert_eq!(rpc_error(&r), (-32700, Value::Null));
    for not_a_message in [r#"[]"#, r#"{"method": "initialize", "id": 1}"#, r#"[{"jsonrpc": "1.0"}]"#, "7"] {
        let r = post(&s, "/mcp", not_a_message);
        assert_eq!((r.status, rpc_error(&r)), (400, (-32600, Value::Null)), "{not_a_message}");
    }
    // A well-formed request still reaches the MCP server.
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",
        "capabilities":{},"clientInfo":{"name":"recite-test","version":"1"}}}"#;
    let r = post(&s, "/mcp", init);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert!(String::from_utf8_lossy(&r.body).contains("serverInfo"), "{}", String::from_utf8_lossy(&r.body));
    let r = s.request("GET", "/healthz", &[], b"");
    assert_eq!(r.status, 200);
}
