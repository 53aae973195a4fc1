//! The OpenAPI 3.1 description of the HTTP API, served at `GET /v1/openapi.json`. Its report
//! schemas are generated from the same Rust types as docs/report.schema.json and
//! docs/report-lines.schema.json (`recite_core::report::json::schema`, `…::jsonl::schema`), so the
//! description cannot drift from what the endpoints answer.

use serde_json::{Map, Value, json};

/// A generated JSON Schema as an OpenAPI component named `name`: its own `$schema` dropped
/// (OpenAPI 3.1's dialect is 2020-12 already) and its `#/$defs/…` references pointed at where
/// the definitions now are, `#/components/schemas/NAME/$defs/…`.
fn component(name: &str, schema: &str) -> Value {
    let mut v: Value = serde_json::from_str(schema).unwrap_or_else(|_| json!({}));
    if let Some(o) = v.as_object_mut() {
        o.remove("$schema");
    }
    repoint(&mut v, &format!("#/components/schemas/{name}/$defs/"));
    v
}

fn repoint(v: &mut Value, to: &str) {
    match v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                match x {
                    Value::String(r) if k == "$ref" => {
                        if let Some(rest) = r.strip_prefix("#/$defs/") {
                            *r = format!("{to}{rest}");
                        }
                    }
                    _ => repoint(x, to),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| repoint(x, to)),
        _ => {}
    }
}

/// A response of `media` types, each with `schema`.
fn content(media: &[(&str, Value)]) -> Value {
    let mut m = Map::new();
    for (t, s) in media {
        m.insert((*t).to_string(), json!({ "schema": s }));
    }
    Value::Object(m)
}

/// The error responses every endpoint may give.
fn problems(codes: &[&str]) -> Map<String, Value> {
    let mut m = Map::new();
    for c in codes {
        m.insert(
            (*c).to_string(),
            json!({
                "description": "application/problem+json (RFC 9457), `location` naming what was wrong",
                "content": { "application/problem+json": { "schema": { "$ref": "#/components/schemas/Problem" } } }
            }),
        );
    }
    m
}

/// The document; `token` says whether the server requires a bearer token.
pub fn document(token: bool) -> Value {
    let report = json!({ "$ref": "#/components/schemas/Report" });
    let line = json!({ "$ref": "#/components/schemas/ReportLine" });
    let text = json!({ "type": "string" });
    let errors = ["400", "401", "413", "500", "503", "504"];
    let mut verify_responses = problems(&errors);
    verify_responses.insert(
        "200".into(),
        json!({
            "description": "the report `recite verify - --format FORMAT` writes",
            "headers": { "Recite-Verdict": { "description": "the verdict", "schema": { "type": "string" } } },
            "content": content(&[("application/json", report.clone()), ("text/plain", text.clone())]),
        }),
    );
    let mut check_responses = problems(&errors);
    check_responses.insert(
        "200".into(),
        json!({
            "description": "the report `recite check - --format FORMAT` writes, streamed as the claims settle",
            "content": content(&[
                ("application/json", report),
                ("application/jsonl", line),
                ("text/html", text.clone()),
                ("text/markdown", text.clone()),
                ("application/xml", text.clone()),
                ("text/plain", text.clone()),
            ]),
        }),
    );
    let listing = |what: &str| {
        json!({
            "responses": {
                "200": { "description": what, "content": content(&[("application/json", json!({ "type": "object" }))]) }
            }
        })
    };
    let health = |what: &str| json!({ "security": [], "responses": { "200": { "description": what, "content": content(&[("text/plain", text.clone())]) } } });
    let mut doc = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "recite",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Re-executes the citations AI agents attach to numbers, and settles them (docs/service.md).",
        },
        "paths": {
            "/v1/verify": { "post": {
                "summary": "Verify one citation",
                "parameters": [
                    { "name": "format", "in": "query", "schema": { "enum": ["json", "text"], "default": "json" } },
                    { "name": "claim", "in": "query", "description": "a claimed number, [MEASURE=]VALUE (--claim)",
                      "schema": { "type": "array", "items": { "type": "string" } }, "style": "form", "explode": true },
                ],
                "requestBody": { "required": true, "description": "a citation, or {citation, result}",
                    "content": { "application/json": { "schema": {} } } },
                "responses": verify_responses,
            } },
            "/v1/check": { "post": {
                "summary": "Check one transcript, or several as multipart/form-data (one a part)",
                "parameters": [
                    { "name": "format", "in": "query",
                      "schema": { "enum": ["json", "jsonl", "html", "markdown", "junit", "text"], "default": "json" } },
                    { "name": "name", "in": "query", "description": "the input's name in the report (a label only)",
                      "schema": { "type": "string", "default": "-" } },
                ],
                "requestBody": { "required": true, "description": "a transcript in any format `recite check` reads",
                    "content": {
                        "application/json": { "schema": {} },
                        "application/jsonl": { "schema": { "type": "string" } },
                        "text/event-stream": { "schema": { "type": "string" } },
                        "multipart/form-data": { "schema": { "type": "object",
                            "description": "one transcript a part, named in the report by its file name, in order",
                            "additionalProperties": { "type": "string", "contentMediaType": "application/octet-stream" } } },
                    } },
                "responses": check_responses,
            } },
            "/v1/catalog": { "get": listing("the data layer: studies, tables, columns, periods, bases, weights") },
            "/v1/extractors": { "get": listing("the registered extractor functions and their measures") },
            "/v1/openapi.json": { "get": listing("this document") },
            "/healthz": { "get": health("the process runs") },
            "/readyz": { "get": health("new work is taken (503 once stopping)") },
        },
        "components": {
            "schemas": {
                "Report": component("Report", &recite_core::report::json::schema()),
                "ReportLine": component("ReportLine", &recite_core::report::jsonl::schema()),
                "Problem": {
                    "type": "object",
                    "required": ["type", "title", "status", "detail"],
                    "properties": {
                        "type": { "type": "string" },
                        "title": { "type": "string" },
                        "status": { "type": "integer" },
                        "detail": { "type": "string" },
                        "location": { "type": "string", "description": "what in the request was wrong: body, query.NAME, header.NAME, claim, path, method" },
                    },
                },
            },
        },
    });
    if let Some(paths) = doc["paths"].as_object_mut() {
        paths.extend(cases());
    }
    if token {
        doc["components"]["securitySchemes"] = json!({ "bearer": { "type": "http", "scheme": "bearer" } });
        doc["security"] = json!([{ "bearer": [] }]);
    }
    doc
}

/// The workbench's case endpoints (docs/workbench.md).
fn cases() -> Map<String, Value> {
    let object = json!({ "type": "object" });
    let id = json!({ "name": "id", "in": "path", "required": true,
        "description": "a case id: 24 hex digits", "schema": { "type": "string", "pattern": "^[0-9a-f]{24}$" } });
    let term = |name: &str, what: &str| json!({ "name": name, "in": "query", "description": what, "schema": { "type": "string" } });
    let answer = |code: &str, what: &str, media: &str, schema: Value, errors: &[&str]| {
        let mut r = problems(errors);
        r.insert(code.into(), json!({ "description": what, "content": content(&[(media, schema)]) }));
        Value::Object(r)
    };
    let report = json!({ "$ref": "#/components/schemas/Report" });
    let settling = ["400", "401", "404", "413", "500", "503", "504"];
    let reading = ["401", "404", "500"];
    let transcript = json!({ "required": true, "description": "one transcript, as POST /v1/check takes it",
        "content": { "application/json": { "schema": {} }, "application/jsonl": { "schema": { "type": "string" } },
                     "text/event-stream": { "schema": { "type": "string" } } } });
    let mut m = Map::new();
    m.insert("/v1/cases".into(), json!({
        "post": {
            "summary": "Settle a transcript and save it as a case in the ledger",
            "parameters": [
                term("name", "the input's name in the report"),
                { "name": "progress", "in": "query", "schema": { "enum": ["0", "1"], "default": "0" },
                  "description": "1: answered 200 as JSON lines, one a claim as it settles, the case last" },
            ],
            "requestBody": transcript,
            "responses": answer("201", "the case: {id, created, permalink, url, json, export, summary}; Location: /cases/ID", "application/json", object.clone(), &settling),
        },
        "get": {
            "summary": "The saved cases, newest first; the terms must all hold for one claim of a case",
            "parameters": [
                term("study", "a case-insensitive part of a claim's study"),
                term("period", "a case-insensitive part of a claim's period"),
                term("measure", "a case-insensitive part of a claimed measure"),
                { "name": "verdict", "in": "query", "schema": { "enum": ["INVALID", "UNVERIFIABLE", "DISCREPANT", "BASE_MISMATCH", "REPRODUCED"] } },
                { "name": "limit", "in": "query", "schema": { "type": "integer", "minimum": 1, "maximum": 1000, "default": 100 } },
            ],
            "responses": answer("200", "{count, verdicts, cases: [{id, created, claims, verdict, verdicts, inputs, studies, periods, reruns}]}", "application/json", object.clone(), &["400", "401", "500"]),
        },
    }));
    m.insert("/v1/cases/{id}".into(), json!({ "get": {
        "summary": "A case: its inputs' digests, data layer and fingerprint, verdicts, re-runs and JSON report",
        "parameters": [id.clone()],
        "responses": answer("200", "the case", "application/json", object.clone(), &reading),
    } }));
    m.insert("/v1/cases/{id}/report".into(), json!({ "get": {
        "summary": "The case's JSON report, as saved",
        "parameters": [id.clone()],
        "responses": answer("200", "what `recite check - --format json` printed", "application/json", report, &reading),
    } }));
    m.insert("/v1/cases/{id}/inputs/{n}".into(), json!({ "get": {
        "summary": "Input N's bytes, as received",
        "parameters": [id.clone(), { "name": "n", "in": "path", "required": true, "schema": { "type": "integer", "minimum": 0 } }],
        "responses": answer("200", "the bytes", "application/octet-stream", json!({ "type": "string" }), &reading),
    } }));
    m.insert("/v1/cases/{id}/rerun".into(), json!({ "post": {
        "summary": "Settle the case's inputs again on the data layer as it is now, and say what moved",
        "parameters": [id.clone()],
        "responses": answer("200", "{rerun, data_layer_changed, saved_fingerprint, fingerprint, files_changed, moved, verdicts_before, verdicts_after, report}", "application/json", object.clone(), &settling),
    } }));
    m.insert("/v1/cases/{id}/alternatives".into(), json!({ "get": {
        "summary": "Each claim's alternatives from the catalog (other periods, bases, weights, columns, measures), the likely one first",
        "parameters": [id.clone(), { "name": "claim", "in": "query", "description": "one claim's index (0, 1, …)", "schema": { "type": "integer", "minimum": 0 } }],
        "responses": answer("200", "{id, claims: [{claim, locator, study, period, column, claimed, alternatives: [{id, kind, name, label, likely}], reason?}], truncated}", "application/json", object.clone(), &settling),
    } }));
    m.insert("/v1/cases/{id}/whatif".into(), json!({ "post": {
        "summary": "Re-run one claim under one of its listed alternatives; nothing is saved",
        "parameters": [id],
        "requestBody": { "required": true, "content": { "application/json": { "schema": {
            "type": "object", "required": ["claim", "alternative"],
            "properties": { "claim": { "type": "integer", "minimum": 0 }, "alternative": { "type": "string", "description": "an id …/alternatives listed" } } } } } },
        "responses": answer("200", "{claim, alternative, verdict, reasons, report_claim}", "application/json", object.clone(), &["400", "401", "404", "422", "500", "503", "504"]),
    } }));
    #[cfg(feature = "agents")]
    m.insert("/v1/probe".into(), json!({ "post": {
        "summary": "Probe an A2A agent as `recite probe` does (its card checked, each skill called, every reply settled) and save the replies and the report as a case; only agents the server's --probe-allow names",
        "requestBody": { "required": true, "content": { "application/json": { "schema": {
            "type": "object", "required": ["url"], "additionalProperties": false,
            "properties": {
                "url": { "type": "string", "description": "the agent's base URL (its card at /.well-known/agent-card.json) or its card's URL; http only" },
                "prompts": { "type": "array", "description": "as `recite probe --prompts` lines: {skill, text} or {skill, parts: [A2A Parts]}", "items": { "type": "object" } },
                "examples": { "type": "boolean", "default": true, "description": "call each skill with the card's own examples" },
                "stream": { "type": "boolean", "default": true, "description": "stream when the card offers it" },
                "max_calls": { "type": "integer", "minimum": 1, "maximum": 20, "default": 20 },
            } } } } },
        "responses": answer("201", "the case, as POST /v1/cases answers it, with probe: {calls, answered}; Location: /cases/ID", "application/json", object, &["400", "401", "403", "413", "422", "500", "502", "503", "504"]),
    } }));
    m
}
