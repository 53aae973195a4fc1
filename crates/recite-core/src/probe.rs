//! `recite probe`: Upperhand's "Conformance (probed)" against a live A2A agent, without the
//! network. The command line fetches the card and makes the calls; this module says which calls
//! to make and how to write them, and what the replies mean:
//!
//! 1. [`Agent::from_card`]: the endpoint the card prefers (v1.0 `supportedInterfaces`, first
//!    first; v0.3 `url` with `preferredTransport` and `additionalInterfaces`), whether it streams,
//!    and its skills with their `examples`;
//! 2. [`read_prompts`] and [`plan`]: the calls, each skill's examples then the `--prompts` lines
//!    naming it, capped;
//! 3. [`request`]: the body of one call, in the version and binding the endpoint speaks;
//! 4. [`conformance`]: the rule per call, on the reply as `recite check` reads it: "Every invoked
//!    skill that returns quantitative JSON also returns a Part of this media type in the same
//!    result. Required fields present; base.n is a positive integer." A result without a citation
//!    Part is already the reader's MUST finding; a citation that breaks the second sentence is one
//!    here, with the spec's words;
//! 5. [`Decorated`]: the check report's writer with the card's findings as the report's first
//!    input and each call's findings added to its transcript, so every format of `recite check`
//!    carries the probe unchanged.

use std::collections::HashMap;
use std::io;

use serde_json::{Value, json};

use crate::card;
use crate::citation;
use crate::input::{Finding, Format, Level, Locator};
use crate::report::Coverage;
use crate::report::stream::{Closing, InputHead, InputTail, Writer};
use crate::transcript::{Document, RULE_CONFORMANCE};

/// Rule of the NOTE that sums up one skill call: what came back and whether it conformed.
pub const RULE_SKILL: &str = "probe/skill";
/// Rule of a finding about a call that could not be made or answered (HTTP error, time limit).
pub const RULE_CALL: &str = "probe/call";
/// Rule of a finding about the plan: calls left out by the cap, prompts naming no skill.
pub const RULE_PLAN: &str = "probe/plan";

/// The spec's words for the second sentence of "Conformance (probed)".
pub const REQUIRED_FIELDS: &str = "Required fields present; base.n is a positive integer";

/// Why a probe cannot start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeError {
    /// The card is not a JSON object.
    CardNotObject,
    /// The card names no interface recite can call (JSON-RPC or HTTP+JSON).
    NoInterface(String),
    /// A line of the prompts file is not `{skill, text | parts}`.
    Prompt {
        /// Its line, from 1.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Nothing to call: no skill has examples and no prompt was given.
    NothingToCall,
}

impl std::fmt::Display for ProbeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProbeError::CardNotObject => f.write_str("the Agent Card is not a JSON object"),
            ProbeError::NoInterface(why) => {
                write!(f, "the Agent Card offers no interface recite can call: {why}")
            }
            ProbeError::Prompt { line, message } => write!(f, "prompts, line {line}: {message}"),
            ProbeError::NothingToCall => {
                f.write_str("nothing to call: no skill of the card has examples and no --prompts were given")
            }
        }
    }
}

impl std::error::Error for ProbeError {}

/// How requests travel (A2A's protocol bindings recite speaks; gRPC is not one of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// JSON-RPC 2.0 over HTTP.
    JsonRpc,
    /// HTTP+JSON (REST).
    HttpJson,
}

impl std::fmt::Display for Binding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Binding::JsonRpc => "JSON-RPC",
            Binding::HttpJson => "HTTP+JSON",
        })
    }
}

/// The A2A version an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// v0.3 (`message/send`, Parts with `kind`).
    V03,
    /// v1.0 (`SendMessage`, ProtoJSON).
    V10,
}

/// Where and how to call the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The binding.
    pub binding: Binding,
    /// The interface's URL, as the card gives it.
    pub url: String,
    /// The version it speaks.
    pub version: Version,
}

/// One skill of the card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its `id`.
    pub id: String,
    /// Its `examples`, the prompts the card suggests.
    pub examples: Vec<String>,
}

/// What the card says about calling the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    /// The interface the card prefers among those recite speaks.
    pub endpoint: Endpoint,
    /// `capabilities.streaming`.
    pub streaming: bool,
    /// The skills, in the card's order.
    pub skills: Vec<Skill>,
}

fn field<'a>(v: &'a Value, names: &[&str]) -> Option<&'a Value> {
    names.iter().find_map(|n| v.get(*n))
}

fn text_of<'a>(v: &'a Value, names: &[&str]) -> Option<&'a str> {
    field(v, names).and_then(Value::as_str)
}

/// A binding's name as cards write it (`JSONRPC`, `HTTP+JSON`, `GRPC`), or `None` for one
/// recite does not speak.
fn binding(name: &str) -> Option<Binding> {
    match name.to_ascii_uppercase().replace(['-', '_'], "").as_str() {
        "JSONRPC" => Some(Binding::JsonRpc),
        "HTTP+JSON" | "HTTPJSON" | "REST" => Some(Binding::HttpJson),
        _ => None,
    }
}

impl Agent {
    /// Reads what the card says about calling the agent. `card_url` resolves an interface URL
    /// given relative to the card.
    pub fn from_card(card: &Value, card_url: &str) -> Result<Agent, ProbeError> {
        if !card.is_object() {
            return Err(ProbeError::CardNotObject);
        }
        let endpoint = endpoint(card, card_url)?;
        let streaming = card
            .get("capabilities")
            .and_then(|c| c.get("streaming"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let skills = field(card, &["skills"])
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, s)| Skill {
                id: text_of(s, &["id"]).map_or_else(|| format!("skill-{}", i + 1), str::to_string),
                examples: field(s, &["examples"])
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
            })
            .collect();
        Ok(Agent { endpoint, streaming, skills })
    }
}

/// The first interface of a v1.0 card recite speaks (the card lists them in order of
/// preference), else a v0.3 card's `url` over its `preferredTransport` (JSON-RPC when absent),
/// else its first `additionalInterfaces` entry recite speaks.
fn endpoint(card: &Value, card_url: &str) -> Result<Endpoint, ProbeError> {
    if let Some(list) = field(card, &["supportedInterfaces", "supported_interfaces"]) {
        let Some(list) = list.as_array() else {
            return Err(ProbeError::NoInterface("supportedInterfaces is not an array".into()));
        };
        let mut seen = Vec::new();
        for i in list {
            let name = text_of(i, &["protocolBinding", "protocol_binding"]).unwrap_or("");
            let (Some(b), Some(url)) = (binding(name), text_of(i, &["url"])) else {
                seen.push(name.to_string());
                continue;
            };
            let version = match text_of(i, &["protocolVersion", "protocol_version"]) {
                Some(v) if v.starts_with("0.") => Version::V03,
                _ => Version::V10,
            };
            return Ok(Endpoint { binding: b, url: absolute(url, card_url), version });
        }
        return Err(ProbeError::NoInterface(format!(
            "supportedInterfaces names only {}",
            if seen.is_empty() { "nothing".to_string() } else { seen.join(", ") }
        )));
    }
    if let Some(url) = text_of(card, &["url"]) {
        let preferred = text_of(card, &["preferredTransport", "preferred_transport"]).unwrap_or("JSONRPC");
        if let Some(b) = binding(preferred) {
            return Ok(Endpoint { binding: b, url: absolute(url, card_url), version: Version::V03 });
        }
        let others =
            field(card, &["additionalInterfaces", "additional_interfaces"]).and_then(Value::as_array);
        for i in others.into_iter().flatten() {
            let b = text_of(i, &["transport"]).and_then(binding);
            if let (Some(b), Some(url)) = (b, text_of(i, &["url"])) {
                return Ok(Endpoint { binding: b, url: absolute(url, card_url), version: Version::V03 });
            }
        }
        return Err(ProbeError::NoInterface(format!(
            "preferredTransport {preferred} and no other interface"
        )));
    }
    Err(ProbeError::NoInterface("neither supportedInterfaces (v1.0) nor url (v0.3)".into()))
}

/// `url` as given when it has a scheme; else relative to the card's origin.
fn absolute(url: &str, card_url: &str) -> String {
    if url.contains("://") {
        return url.to_string();
    }
    let origin_end = card_url.find("://").map(|s| s + 3).and_then(|s| card_url[s..].find('/').map(|e| s + e));
    let origin = origin_end.map_or(card_url, |e| &card_url[..e]);
    format!("{origin}/{}", url.trim_start_matches('/'))
}

/// One prompt: to which skill, and the Parts of the message (v1.0 shapes: `{"text"}`,
/// `{"data", "mediaType"?}`).
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    /// The skill's `id`.
    pub skill: String,
    /// The message's Parts.
    pub parts: Vec<Value>,
}

/// Reads `--prompts`: JSON lines of `{skill, text}` or `{skill, parts}` (blank lines skipped).
pub fn read_prompts(text: &str) -> Result<Vec<Prompt>, ProbeError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |message: String| ProbeError::Prompt { line: i + 1, message };
        let v: Value = serde_json::from_str(line).map_err(|e| bad(format!("not JSON: {e}")))?;
        let skill =
            v.get("skill").and_then(Value::as_str).ok_or_else(|| bad("no \"skill\" string".into()))?;
        let parts = match (v.get("text"), v.get("parts")) {
            (Some(Value::String(t)), None) => vec![json!({ "text": t })],
            (None, Some(Value::Array(ps))) if !ps.is_empty() && ps.iter().all(Value::is_object) => ps.clone(),
            _ => {
                return Err(bad(
                    "give either \"text\" (a string) or \"parts\" (an array of Part objects)".into()
                ));
            }
        };
        out.push(Prompt { skill: skill.to_string(), parts });
    }
    Ok(out)
}

/// One call to make.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The skill it exercises.
    pub skill: String,
    /// What the prompt is: `example 2`, `prompt line 3`.
    pub source: String,
    /// The message's Parts (v1.0 shapes).
    pub parts: Vec<Value>,
}

/// Which prompts to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanOptions {
    /// Use the skills' own `examples`.
    pub examples: bool,
    /// At most this many calls.
    pub max_calls: usize,
}

/// The calls, skill by skill in the card's order (its examples, then the prompts naming it),
/// then prompts naming a skill the card does not list; at most `max_calls`. Calls left out and
/// prompts for unknown skills are findings on the card (`file`).
pub fn plan(agent: &Agent, prompts: &[Prompt], o: PlanOptions, file: &str) -> (Vec<Call>, Vec<Finding>) {
    let mut calls = Vec::new();
    let mut findings = Vec::new();
    let from_prompts = |id: &str, calls: &mut Vec<Call>| {
        for (line, p) in prompts.iter().enumerate().filter(|(_, p)| p.skill == id) {
            let source = format!("prompt {}", line + 1);
            calls.push(Call { skill: p.skill.clone(), source, parts: p.parts.clone() });
        }
    };
    for s in &agent.skills {
        if o.examples {
            for (i, e) in s.examples.iter().enumerate() {
                let source = format!("example {}", i + 1);
                calls.push(Call { skill: s.id.clone(), source, parts: vec![json!({ "text": e })] });
            }
        }
        from_prompts(&s.id, &mut calls);
    }
    let mut unknown: Vec<&str> = Vec::new();
    for p in prompts {
        if !agent.skills.iter().any(|s| s.id == p.skill) && !unknown.contains(&p.skill.as_str()) {
            unknown.push(&p.skill);
        }
    }
    for id in unknown {
        let message = format!("prompts name skill {id}, which the card does not list: called all the same");
        findings.push(Finding::new(Locator::at(file, "/skills"), RULE_PLAN, Level::Note, message));
        from_prompts(id, &mut calls);
    }
    if calls.len() > o.max_calls {
        let message = format!(
            "{} call(s) not made: at most {} (--max-calls); their skills are not probed",
            calls.len() - o.max_calls,
            o.max_calls
        );
        findings.push(Finding::new(Locator::at(file, "/skills"), RULE_PLAN, Level::Should, message));
        calls.truncate(o.max_calls);
    }
    (calls, findings)
}

/// One HTTP request of a call.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Where to POST it.
    pub url: String,
    /// The JSON body.
    pub body: Value,
    /// A streaming call (the reply is Server-Sent Events).
    pub streaming: bool,
    /// The `A2A-Version` header to send, for v1.0 (servers that also speak v0.3 read a request
    /// without it as v0.3).
    pub version_header: Option<&'static str>,
}

/// A v1.0 Part as v0.3 writes it (`kind`; a data Part's media type in `metadata.mimeType`).
fn part_v03(p: &Value) -> Value {
    if let Some(t) = p.get("text") {
        return json!({ "kind": "text", "text": t });
    }
    if let Some(d) = p.get("data") {
        let mut part = json!({ "kind": "data", "data": d });
        if let Some(m) = p.get("mediaType") {
            part["metadata"] = json!({ "mimeType": m });
        }
        return part;
    }
    p.clone()
}

/// A v1.0 Part as v0.3's protobuf JSON writes it (HTTP+JSON): a data Part's value inside
/// `{"data": {"data": …}}`, its media type in `metadata.mimeType`.
fn part_v03_rest(p: &Value) -> Value {
    let Some(d) = p.get("data") else { return p.clone() };
    let mut part = json!({ "data": { "data": d } });
    if let Some(m) = p.get("mediaType") {
        part["metadata"] = json!({ "mimeType": m });
    }
    part
}

/// The request of `call` to `endpoint`: `id` is its JSON-RPC id and message id.
pub fn request(endpoint: &Endpoint, streaming: bool, call: &Call, id: &str) -> Request {
    let message = match (endpoint.version, endpoint.binding) {
        (Version::V10, _) => json!({ "messageId": id, "role": "ROLE_USER", "parts": call.parts }),
        (Version::V03, Binding::JsonRpc) => json!({
            "kind": "message", "messageId": id, "role": "user",
            "parts": call.parts.iter().map(part_v03).collect::<Vec<_>>(),
        }),
        // v0.3's HTTP+JSON is the JSON of its protobuf: the Parts are `content`.
        (Version::V03, Binding::HttpJson) => json!({
            "messageId": id, "role": "ROLE_USER",
            "content": call.parts.iter().map(part_v03_rest).collect::<Vec<_>>(),
        }),
    };
    let base = endpoint.url.trim_end_matches('/');
    let (url, body) = match endpoint.binding {
        Binding::JsonRpc => {
            let method = match (endpoint.version, streaming) {
                (Version::V10, false) => "SendMessage",
                (Version::V10, true) => "SendStreamingMessage",
                (Version::V03, false) => "message/send",
                (Version::V03, true) => "message/stream",
            };
            let body =
                json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": { "message": message } });
            (endpoint.url.clone(), body)
        }
        Binding::HttpJson => {
            let prefix = if endpoint.version == Version::V03 { "/v1" } else { "" };
            let verb = if streaming { "stream" } else { "send" };
            (format!("{base}{prefix}/message:{verb}"), json!({ "message": message }))
        }
    };
    let version_header = (endpoint.version == Version::V10).then_some("1.0");
    Request { url, body, streaming, version_header }
}

/// The conformance findings of one call's reply, as `recite check` read it (`doc`): a MUST for
/// each citation that breaks "Required fields present; base.n is a positive integer", and a NOTE
/// summing up the call (the reader already gives a MUST for each quantitative result that came
/// without a citation Part).
pub fn conformance(doc: &Document, call: &Call) -> Vec<Finding> {
    let mut findings = Vec::new();
    let (mut results, mut uncited, mut citations, mut invalid) = (0, 0, 0, 0);
    for item in &doc.items {
        results += usize::from(item.result.is_some());
        if item.result.is_some() && item.citation.is_none() {
            uncited += 1;
        }
        let Some(c) = &item.citation else { continue };
        citations += 1;
        if let Err(problems) = citation::parse(c) {
            invalid += 1;
            let said: Vec<String> = problems.iter().map(ToString::to_string).collect();
            let message = format!(
                "skill {}: a citation Part breaks \"{REQUIRED_FIELDS}\" (Upperhand Citations v1, Conformance (probed)): {}",
                call.skill,
                said.join("; ")
            );
            findings.push(Finding::new(item.locator.clone(), RULE_CONFORMANCE, Level::Must, message));
        }
    }
    let verdict = if uncited + invalid > 0 {
        "NOT conforming"
    } else if results == 0 && citations == 0 {
        "no quantitative JSON came back, so the rule had nothing to apply to"
    } else {
        "conforming"
    };
    let message = format!(
        "skill {} ({}): {results} quantitative result(s), {} with a citation Part in the same result; {citations} citation(s), {invalid} breaking the required fields: {verdict}",
        call.skill,
        call.source,
        results - uncited,
    );
    findings.push(Finding::new(Locator::at(&doc.file, ""), RULE_SKILL, Level::Note, message));
    findings
}

/// A finding about a call that failed (`file` is its transcript, or the card when none was
/// written). A call recite could not make or read never helps a probe pass: MUST.
pub fn call_failed(file: &str, call: &Call, why: &str) -> Finding {
    let message =
        format!("skill {} ({}): the call failed: {why}; the skill is not probed", call.skill, call.source);
    Finding::new(Locator::at(file, ""), RULE_CALL, Level::Must, message)
}

/// The card as the report's first input: its findings (the `recite card` rules and the plan's).
#[derive(Debug, Clone)]
pub struct CardInput {
    /// Its name in the report (the saved card, or its URL).
    pub file: String,
    /// The A2A version of the card.
    pub format: Format,
    /// Its findings.
    pub findings: Vec<Finding>,
}

impl CardInput {
    /// The card's input: the `recite card` findings, then `more`.
    pub fn new(file: &str, card_json: &Value, more: Vec<Finding>) -> CardInput {
        let r = card::card_report(file, card_json);
        let format = if r.version == "0.3" { Format::A2aV03 } else { Format::A2aV10 };
        let mut findings = r.findings;
        findings.extend(more);
        CardInput { file: file.to_string(), format, findings }
    }
}

/// A report [`Writer`] that writes the card first and adds each call's findings to its
/// transcript's input, counting them in the summary: `recite check`'s report of the transcripts,
/// with the probe in it.
pub struct Decorated<'a> {
    inner: &'a mut dyn Writer,
    card: Option<CardInput>,
    extra: HashMap<String, Vec<Finding>>,
    current: Option<String>,
    added: usize,
}

impl<'a> Decorated<'a> {
    /// Wraps `inner`; `extra` maps a transcript's name to the findings to add to it.
    pub fn new(inner: &'a mut dyn Writer, card: CardInput, extra: HashMap<String, Vec<Finding>>) -> Self {
        Decorated { inner, card: Some(card), extra, current: None, added: 0 }
    }

    /// Findings per level the decoration added, for the exit status.
    pub fn levels(card: &CardInput, extra: &HashMap<String, Vec<Finding>>) -> Vec<Level> {
        card.findings.iter().chain(extra.values().flatten()).map(|f| f.level).collect()
    }

    fn card_first(&mut self) -> io::Result<()> {
        let Some(card) = self.card.take() else { return Ok(()) };
        self.inner.begin_input(InputHead { file: &card.file, format: Some(card.format), turns: &[] })?;
        self.added += card.findings.len();
        self.inner.end_input(InputTail {
            findings: &card.findings,
            moca: &[],
            answers: &[],
            coverage: Coverage::default(),
        })
    }
}

impl Writer for Decorated<'_> {
    fn begin_input(&mut self, head: InputHead<'_>) -> io::Result<()> {
        self.card_first()?;
        self.current = Some(head.file.to_string());
        self.inner.begin_input(head)
    }

    fn claim(&mut self, c: &crate::report::ClaimReport) -> io::Result<()> {
        self.inner.claim(c)
    }

    fn claims(&mut self, cs: &[crate::report::ClaimReport]) -> io::Result<()> {
        self.inner.claims(cs)
    }

    fn end_input(&mut self, tail: InputTail<'_>) -> io::Result<()> {
        let more = self.current.take().and_then(|f| self.extra.remove(&f)).unwrap_or_default();
        if more.is_empty() {
            return self.inner.end_input(tail);
        }
        self.added += more.len();
        let mut findings = tail.findings.to_vec();
        findings.extend(more);
        self.inner.end_input(InputTail { findings: &findings, ..tail })
    }

    fn finish(&mut self, closing: Closing<'_>) -> io::Result<()> {
        self.card_first()?;
        let mut summary = closing.summary.clone();
        summary.findings += self.added;
        // The card is an input of the report too.
        self.inner.finish(Closing { summary: &summary, inputs: closing.inputs + 1, ..closing })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v1_card() -> Value {
        json!({
            "name": "a", "supportedInterfaces": [
                {"url": "http://h/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
                {"url": "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {"streaming": true},
            "skills": [{"id": "funnel", "examples": ["W6 funnel", "W5 funnel"]}, {"id": "nothing"}]
        })
    }

    #[test]
    fn a_v1_card_gives_its_first_interface_recite_speaks() {
        let a = Agent::from_card(&v1_card(), "http://127.0.0.1:9/.well-known/agent-card.json").unwrap();
        let want = Endpoint {
            binding: Binding::JsonRpc,
            url: "http://127.0.0.1:9/rpc".into(),
            version: Version::V10,
        };
        assert_eq!(a.endpoint, want);
        assert!(a.streaming);
        assert_eq!(a.skills[0].examples.len(), 2);
    }

    #[test]
    fn a_v03_card_gives_its_url_over_the_preferred_transport() {
        let card = json!({"url": "http://h/a2a", "preferredTransport": "HTTP+JSON", "skills": []});
        let a = Agent::from_card(&card, "http://h/.well-known/agent-card.json").unwrap();
        assert_eq!((a.endpoint.binding, a.endpoint.version), (Binding::HttpJson, Version::V03));
        let call = Call { skill: "s".into(), source: "example 1".into(), parts: vec![json!({"text": "hi"})] };
        let r = request(&a.endpoint, false, &call, "m1");
        assert_eq!(r.url, "http://h/a2a/v1/message:send");
        assert_eq!(r.body["message"]["content"][0], json!({"text": "hi"}));
        let rpc = Endpoint { binding: Binding::JsonRpc, ..a.endpoint };
        let r = request(&rpc, true, &call, "m1");
        assert_eq!(r.body["method"], "message/stream");
        assert_eq!(r.body["params"]["message"]["parts"][0], json!({"kind": "text", "text": "hi"}));
    }

    #[test]
    fn a_card_with_only_grpc_is_an_error_naming_it() {
        let card = json!({"supportedInterfaces": [{"url": "x", "protocolBinding": "GRPC"}]});
        let e = Agent::from_card(&card, "http://h/").unwrap_err();
        assert!(e.to_string().contains("GRPC"), "{e}");
    }

    #[test]
    fn the_plan_takes_examples_then_prompts_and_caps_the_calls() {
        let a = Agent::from_card(&v1_card(), "http://h/").unwrap();
        let prompts = read_prompts(
            "{\"skill\":\"nothing\",\"text\":\"x\"}\n\n{\"skill\":\"other\",\"parts\":[{\"text\":\"y\"}]}\n",
        )
        .unwrap();
        let (calls, findings) = plan(&a, &prompts, PlanOptions { examples: true, max_calls: 3 }, "card");
        let got: Vec<(&str, &str)> = calls.iter().map(|c| (c.skill.as_str(), c.source.as_str())).collect();
        assert_eq!(got, [("funnel", "example 1"), ("funnel", "example 2"), ("nothing", "prompt 1")]);
        assert_eq!(findings.len(), 2, "{findings:?}");
        assert!(findings[1].message.contains("1 call(s) not made"));
    }

    #[test]
    fn a_prompt_line_without_text_or_parts_is_refused_with_its_line() {
        let e = read_prompts("\n{\"skill\":\"a\"}").unwrap_err();
        assert_eq!(
            e.to_string(),
            "prompts, line 2: give either \"text\" (a string) or \"parts\" (an array of Part objects)"
        );
    }

    #[test]
    fn a_v1_streaming_call_is_send_streaming_message_with_the_version_header() {
        let a = Agent::from_card(&v1_card(), "http://h/").unwrap();
        let call = Call { skill: "s".into(), source: "example 1".into(), parts: vec![json!({"text": "hi"})] };
        let r = request(&a.endpoint, true, &call, "c1");
        assert_eq!(r.body["method"], "SendStreamingMessage");
        assert_eq!(r.body["params"]["message"]["role"], "ROLE_USER");
        assert_eq!(r.version_header, Some("1.0"));
    }
}
