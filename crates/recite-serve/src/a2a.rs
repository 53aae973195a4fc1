//! recite as an A2A v1 agent, on the official A2A Rust SDK (`a2a-server-lf`): its JSON-RPC
//! binding at `/a2a/jsonrpc`, its HTTP+JSON binding at `/a2a/rest`, SSE streaming on both, and
//! the Agent Card at `/.well-known/agent-card.json`.
//!
//! A message carries what to settle, one input per Part: a citation (a data Part of the
//! Upperhand media type, or any data Part shaped as a citation or a `{citation, result}` pair)
//! is verified; a transcript (a file Part's bytes, or any other data Part) is checked; a text
//! Part holding JSON is read as that JSON. A text Part in prose is the claim of the message's
//! one citation ("44% of aware adults considered Versant in W6", beside the citation as a data
//! Part): the citation is settled against the numbers the prose states ([`crate::prose`]), and
//! the settlement artifact's metadata says which were paired with a claim and which not. A URL Part is refused: the server never fetches what
//! a request names. `metadata.skill` (`verify-citation`, `check-transcript`) overrides the guess.
//!
//! The reply is a Task. For each input an artifact holds the report (a data Part of
//! [`REPORT_MEDIA_TYPE`], the JSON report `recite verify`/`recite check --format json` writes,
//! schema docs/report.schema.json) and a short text summary; and since recite's own numbers are
//! quantitative results, each re-run claim gets one artifact more: the recomputed numbers as a
//! data Part with the Upperhand citation that re-derives them beside it, so what recite answers
//! can itself be re-run. Streaming callers get the Task first (submitted, as A2A v1.0 requires),
//! a working status, then each artifact as it is settled, then the completed status.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use a2a::{
    A2AError, AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentProvider, AgentSkill,
    Artifact, HttpAuthSecurityScheme, Message, Part, PartContent, Role, SecurityScheme, StreamResponse,
    TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use a2a::{ListTasksRequest, ListTasksResponse, Task};
use a2a_server::task_store::{TaskStore, TaskVersion};
use a2a_server::{AgentExecutor, DefaultRequestHandler, ExecutorContext, StaticAgentCard};
use axum::Router;
use futures::StreamExt as _;
use futures::stream::BoxStream;
use serde_json::{Map, Value, json};

use recite_core::json::{CITATION_MEDIA_TYPE, looks_like_citation};
use recite_core::report::ReportFormat;

use crate::bindings::{self, Binding};
use crate::extract::BodyLimits;
use crate::{Service, TextOrJson};

pub use recite_core::json::REPORT_MEDIA_TYPE;

/// The Upperhand Citations v1 extension's URI, declared on the card.
const CITATIONS_EXTENSION: &str = "https://standards.upperhandai.com/ext/citations/v1";

/// The skill ids.
const VERIFY: &str = "verify-citation";
const CHECK: &str = "check-transcript";

/// The A2A routes: the card (public) and the two bindings (behind the token, when one is set).
pub struct Routes {
    /// The Agent Card.
    pub public: Router,
    /// JSON-RPC and HTTP+JSON.
    pub protected: Router,
}

/// The agent's routes, its card naming `base` (`http://HOST:PORT`) as where it is reached.
pub fn routes(svc: Arc<Service>, base: &str, token: bool) -> Routes {
    let svc_limit = svc.max_input;
    let capabilities = capabilities();
    let handler = Arc::new(
        DefaultRequestHandler::new(Recite { svc }, Tasks::default()).with_capabilities(capabilities),
    );
    let card = Arc::new(StaticAgentCard::new(card(base, token)));
    let limits = BodyLimits { max: svc_limit };
    // Each binding's bodies are read within the service's limits, its refusals in its own shape
    // (`crate::bindings`); the SDK's extractors then take what the input limit allows.
    let bound = |router: Router, binding: Binding| {
        router
            .layer(axum::middleware::from_fn(
                move |req: axum::extract::Request, next: axum::middleware::Next| {
                    bindings::guard(binding, limits, req, next)
                },
            ))
            .layer(axum::extract::DefaultBodyLimit::max(usize::try_from(limits.max).unwrap_or(usize::MAX)))
    };
    Routes {
        public: a2a_server::agent_card::agent_card_router(card),
        // Whole numbers go out as integers, not as the SDK's doubles (`super::wholes`).
        protected: Router::new()
            .nest(
                "/a2a/jsonrpc",
                bound(a2a_server::jsonrpc::jsonrpc_router(handler.clone()), Binding::JsonRpc),
            )
            .nest("/a2a/rest", bound(a2a_server::rest::rest_router(handler), Binding::Rest))
            .layer(axum::middleware::map_response(super::wholes::as_integers)),
    }
}

fn capabilities() -> AgentCapabilities {
    AgentCapabilities {
        streaming: Some(true),
        push_notifications: Some(false),
        extensions: Some(vec![AgentExtension {
            uri: CITATIONS_EXTENSION.into(),
            description: Some(
                "every recomputed number comes with the Upperhand citation that re-derives it".into(),
            ),
            required: Some(false),
            params: None,
        }]),
        extended_agent_card: None,
    }
}

/// recite's Agent Card: two skills, the Upperhand media type among its output modes, and the
/// bearer scheme when a token is required.
pub fn card(base: &str, token: bool) -> AgentCard {
    let skill = |id: &str, name: &str, description: &str, examples: &[&str], inputs: &[&str]| AgentSkill {
        id: id.into(),
        name: name.into(),
        description: description.into(),
        tags: vec!["verification".into(), "citations".into(), "statistics".into()],
        examples: Some(examples.iter().map(|e| e.to_string()).collect()),
        input_modes: Some(inputs.iter().map(|e| e.to_string()).collect()),
        output_modes: Some(vec![REPORT_MEDIA_TYPE.into(), CITATION_MEDIA_TYPE.into(), "text/plain".into()]),
        security_requirements: None,
    };
    let security_schemes = token.then(|| {
        HashMap::from([(
            "bearer".to_string(),
            SecurityScheme::HttpAuth(HttpAuthSecurityScheme {
                scheme: "Bearer".into(),
                description: Some("the token in the server's --token-file".into()),
                bearer_format: None,
            }),
        )])
    });
    let security_requirements = token.then(|| vec![HashMap::from([("bearer".to_string(), Vec::new())])]);
    AgentCard {
        name: "recite".into(),
        description: "Re-executes the Upperhand citations agents attach to numbers over the declared data \
                      layer, and settles each claim: REPRODUCED, DISCREPANT, BASE_MISMATCH, UNVERIFIABLE \
                      or INVALID, with the recomputed numbers, their sampling error and what was most \
                      likely computed instead."
            .into(),
        version: env!("CARGO_PKG_VERSION").into(),
        supported_interfaces: vec![
            AgentInterface::new(format!("{base}/a2a/jsonrpc"), a2a::TRANSPORT_PROTOCOL_JSONRPC),
            AgentInterface::new(format!("{base}/a2a/rest"), a2a::TRANSPORT_PROTOCOL_HTTP_JSON),
        ],
        capabilities: capabilities(),
        default_input_modes: vec![CITATION_MEDIA_TYPE.into(), "application/json".into(), "text/plain".into()],
        default_output_modes: vec![REPORT_MEDIA_TYPE.into(), CITATION_MEDIA_TYPE.into(), "text/plain".into()],
        skills: vec![
            skill(
                VERIFY,
                "Verify a citation",
                "Re-run one Upperhand citation (optionally with the tool result it accompanies: \
                 {citation, result}) and settle its claimed numbers and base n.",
                &["a data Part of application/vnd.upperhand.citations+json"],
                &[CITATION_MEDIA_TYPE, "application/json"],
            ),
            skill(
                CHECK,
                "Check a transcript",
                "Settle every cited number in a transcript: A2A v0.3/v1.0 (Task, Message, JSON-RPC, \
                 SSE), AG-UI event logs, JSON lines of {result, citation}; Upperhand conformance and \
                 MOCA findings; the numbers of the agent's answer traced to their citations.",
                &["a file Part holding an A2A Task or an AG-UI event log"],
                &["application/json", "application/jsonl", "text/event-stream"],
            ),
        ],
        provider: Some(AgentProvider {
            organization: "recite".into(),
            url: "https://github.com/recite/recite".into(),
        }),
        documentation_url: None,
        icon_url: None,
        security_schemes,
        security_requirements,
        signatures: None,
    }
}

/// What one Part asks for.
#[derive(Debug)]
enum Input {
    Verify(Vec<u8>),
    Check {
        name: String,
        bytes: Vec<u8>,
    },
    /// A citation, and the prose that states its numbers.
    Prose {
        citation: Vec<u8>,
        text: String,
    },
}

/// The inputs of a message, or why it cannot be read (which Part, and what is wrong).
fn inputs(m: &Message) -> Result<Vec<Input>, String> {
    let forced = m.metadata.as_ref().and_then(|md| md.get("skill")).and_then(Value::as_str);
    if let Some(s) = forced.filter(|s| ![VERIFY, CHECK].contains(s)) {
        return Err(format!("metadata.skill {s:?}: this agent's skills are {VERIFY} and {CHECK}"));
    }
    let mut out = Vec::new();
    let mut prose: Vec<&str> = Vec::new();
    for (i, p) in m.parts.iter().enumerate() {
        let at = format!("parts[{i}]");
        let cited = p.media_type.as_deref().is_some_and(|t| t.eq_ignore_ascii_case(CITATION_MEDIA_TYPE));
        let value = match &p.content {
            PartContent::Data(v) => v.clone(),
            PartContent::Text(t) => match serde_json::from_str::<Value>(t) {
                Ok(v) => v,
                Err(_) if forced == Some(CHECK) => {
                    out.push(Input::Check { name: name_of(p), bytes: t.as_bytes().to_vec() });
                    continue;
                }
                Err(_) => {
                    prose.push(t);
                    continue;
                }
            },
            PartContent::Raw(bytes) => {
                if forced == Some(VERIFY) || cited {
                    out.push(Input::Verify(bytes.clone()));
                } else {
                    out.push(Input::Check { name: name_of(p), bytes: bytes.clone() });
                }
                continue;
            }
            PartContent::Url(_) => {
                return Err(format!("{at}: a URL Part is not fetched; send the file's bytes in a file Part"));
            }
        };
        let verify = match forced {
            Some(s) => s == VERIFY,
            None => {
                cited || looks_like_citation(&value) || value.get("citation").is_some_and(looks_like_citation)
            }
        };
        let bytes = serde_json::to_vec(&value).map_err(|e| format!("{at}: {e}"))?;
        out.push(if verify { Input::Verify(bytes) } else { Input::Check { name: name_of(p), bytes } });
    }
    if !prose.is_empty() {
        pair_prose(&mut out, prose.join("\n"))?;
    }
    if out.is_empty() {
        return Err("the message has no Part to settle: send a citation or a transcript".into());
    }
    Ok(out)
}

/// Makes the message's one citation the one its prose claims about; prose beside no citation,
/// or beside several, cannot be settled.
fn pair_prose(inputs: &mut [Input], text: String) -> Result<(), String> {
    let mut cited = inputs.iter_mut().filter(|i| matches!(i, Input::Verify(_)));
    let (Some(one), None) = (cited.next(), cited.next()) else {
        return Err("a text Part in prose is settled against the message's one citation: send the citation \
                    as a data Part beside it (or a text Part holding JSON, a citation or a transcript)"
            .into());
    };
    if let Input::Verify(bytes) = one {
        *one = Input::Prose { citation: std::mem::take(bytes), text };
    }
    Ok(())
}

/// The name a transcript is reported under: its file name, else `-` as for standard input.
fn name_of(p: &Part) -> String {
    p.filename
        .as_deref()
        .filter(|f| !f.is_empty() && f.chars().count() <= 256 && !f.chars().any(char::is_control))
        .unwrap_or("-")
        .to_string()
}

/// The agent.
struct Recite {
    svc: Arc<Service>,
}

impl AgentExecutor for Recite {
    fn execute(&self, ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let svc = self.svc.clone();
        let (task, context) = ctx.task_info();
        let status = {
            let (task, context) = (task.clone(), context.clone());
            move |state: TaskState, text: String| {
                let message = Message {
                    role: Role::Agent,
                    message_id: a2a::new_message_id(),
                    task_id: Some(task.clone()),
                    context_id: Some(context.clone()),
                    parts: vec![Part::text(text)],
                    metadata: None,
                    extensions: None,
                    reference_task_ids: None,
                };
                StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                    task_id: task.clone(),
                    context_id: context.clone(),
                    status: TaskStatus { state, message: Some(message), timestamp: Some(chrono::Utc::now()) },
                    metadata: None,
                })
            }
        };
        // A task's stream MUST begin with the Task (A2A v1.0 §3.1.2): submitted, nothing yet.
        let first = StreamResponse::Task(Task {
            id: task.clone(),
            context_id: context.clone(),
            status: TaskStatus {
                state: TaskState::Submitted,
                message: None,
                timestamp: Some(chrono::Utc::now()),
            },
            artifacts: None,
            history: None,
            metadata: None,
        });
        let read = ctx.message.as_ref().ok_or_else(|| "no message".to_string()).and_then(inputs);
        let inputs = match read {
            Err(e) => {
                return Box::pin(futures::stream::iter([Ok(first), Ok(status(TaskState::Rejected, e))]));
            }
            Ok(i) => i,
        };
        // Status texts carry no digit: recite's answer-text audit would look for their citation.
        let working = status(TaskState::Working, "settling the citations and transcripts sent".into());
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<StreamResponse, A2AError>>(8);
        tokio::spawn(async move {
            let total = inputs.len();
            let mut failed = None;
            for (i, input) in inputs.into_iter().enumerate() {
                match settle(&svc, input).await {
                    Ok(artifacts) => {
                        for artifact in artifacts {
                            let ev = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                                task_id: task.clone(),
                                context_id: context.clone(),
                                artifact,
                                append: None,
                                last_chunk: Some(true),
                                metadata: None,
                            });
                            if tx.send(Ok(ev)).await.is_err() {
                                return;
                            }
                        }
                    }
                    Err(e) => {
                        failed = Some(format!("input {} of {total}: {e}", i + 1));
                        break;
                    }
                }
            }
            let last = match failed {
                Some(e) => status(TaskState::Failed, e),
                None => status(TaskState::Completed, "settled: the reports are in the artifacts".into()),
            };
            let _ = tx.send(Ok(last)).await;
        });
        let rest = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|e| (e, rx)) });
        Box::pin(futures::stream::iter([Ok(first), Ok(working)]).chain(rest))
    }

    fn cancel(&self, ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let (task_id, context_id) = ctx.task_info();
        Box::pin(futures::stream::iter([Ok(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id,
            context_id,
            status: TaskStatus {
                state: TaskState::Canceled,
                message: None,
                timestamp: Some(chrono::Utc::now()),
            },
            metadata: None,
        }))]))
    }
}

/// Settles one input: its report artifact, then one artifact per re-run claim.
async fn settle(svc: &Arc<Service>, input: Input) -> Result<Vec<Artifact>, String> {
    let mut read = None;
    let text = match input {
        Input::Verify(bytes) => {
            svc.verify(bytes, Vec::new(), TextOrJson::Json).await.map_err(|p| p.to_string())?.text
        }
        Input::Prose { citation, text } => {
            let (v, reading) = svc.verify_prose(citation, text).await.map_err(|p| p.to_string())?;
            read = Some(reading.to_json());
            v.text
        }
        Input::Check { name, bytes } => {
            let report = svc.check(bytes, name, ReportFormat::Json).await.map_err(|p| p.to_string())?;
            let bytes = report.collect().await.map_err(|p| p.to_string())?;
            String::from_utf8(bytes).map_err(|e| e.to_string())?
        }
    };
    let report: Value = serde_json::from_str(&text).map_err(|e| format!("the report is not JSON: {e}"))?;
    let mut out = artifacts(report);
    if let (Some(read), Some(settlement)) = (read, out.first_mut()) {
        settlement.metadata = Some(HashMap::from([("prose".to_string(), read)]));
    }
    Ok(out)
}

/// The artifacts of one report: the report with its summary, then each re-run claim's
/// recomputed numbers with their citation.
fn artifacts(report: Value) -> Vec<Artifact> {
    let summary = summary(&report);
    let mut out = Vec::new();
    let claims: Vec<&Value> = report["inputs"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|i| i["claims"].as_array().into_iter().flatten())
        .collect();
    for (j, c) in claims.iter().enumerate() {
        if let Some((result, citation)) = recomputed(c) {
            out.push(Artifact {
                artifact_id: a2a::new_artifact_id(),
                name: Some(format!("recomputed-{}", j + 1)),
                description: Some(
                    "the numbers recite recomputed for this claim, with the citation that re-derives them"
                        .into(),
                ),
                parts: vec![
                    Part::data(result).with_media_type("application/json"),
                    Part::data(citation).with_media_type(CITATION_MEDIA_TYPE),
                ],
                metadata: None,
                extensions: Some(vec![CITATIONS_EXTENSION.into()]),
            });
        }
    }
    out.insert(
        0,
        Artifact {
            artifact_id: a2a::new_artifact_id(),
            name: Some("settlement".into()),
            description: Some("recite's report (docs/report.schema.json) and its summary".into()),
            parts: vec![Part::data(report).with_media_type(REPORT_MEDIA_TYPE), Part::text(summary)],
            metadata: None,
            extensions: None,
        },
    );
    out
}

/// The recomputed numbers of a re-run claim (each measure with an estimate, by name, and base
/// n), and the Upperhand citation that re-derives them; none for a claim that was not re-run.
fn recomputed(claim: &Value) -> Option<(Value, Value)> {
    let rerun = claim.get("rerun")?.as_object()?;
    let n = claim.get("base")?.get("n")?.as_u64()?;
    let mut result = Map::new();
    for m in claim.get("measures")?.as_array()? {
        if let (Some(name), Some(v)) = (m["name"].as_str(), m["estimate"]["value"].as_f64()) {
            result.insert(name.to_string(), rounded(v));
        }
    }
    if result.is_empty() {
        return None;
    }
    result.insert("n".into(), json!(n));
    let text = |k: &str| rerun.get(k).and_then(Value::as_str).map(str::to_string);
    let mut citation = Map::new();
    citation.insert("study".into(), json!(text("study")?));
    citation.insert("period".into(), json!(text("period")?));
    if let Some(f) = text("fielded") {
        citation.insert("fielded".into(), json!(f));
    }
    citation.insert("base".into(), json!({ "name": text("base")?, "n": n }));
    citation.insert("weight".into(), json!(text("weight")?));
    citation.insert(
        "source".into(),
        json!({ "table": text("table")?, "column": text("column")?, "function": text("function")? }),
    );
    Some((Value::Object(result), Value::Object(citation)))
}

/// A recomputed value as written for a claim: six decimals, so it re-runs within its own shown
/// precision.
fn rounded(v: f64) -> Value {
    let text = format!("{v:.6}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// One line per input: the verdicts its claims got, and whether it has findings (no counts:
/// the numbers are in the report, and a digit in text would be an answer number to trace).
fn summary(report: &Value) -> String {
    let mut lines = Vec::new();
    for input in report["inputs"].as_array().into_iter().flatten() {
        let mut verdicts: Vec<&str> = Vec::new();
        for c in input["claims"].as_array().into_iter().flatten() {
            let v = c["verdict"].as_str().unwrap_or("UNKNOWN");
            if !verdicts.contains(&v) {
                verdicts.push(v);
            }
        }
        let findings = input["findings"].as_array().is_some_and(|f| !f.is_empty());
        let file = input["file"].as_str().unwrap_or("-");
        lines.push(format!(
            "{file}: {}{}",
            if verdicts.is_empty() {
                "no claim".to_string()
            } else {
                format!("claims {}", verdicts.join(", "))
            },
            if findings { "; with findings (see the report)" } else { "" }
        ));
    }
    lines.join("\n")
}

/// Tasks kept for `tasks/get`, `tasks/list` and resubscription: at most this many; past it the
/// oldest finished ones are forgotten (each holds its reports, so memory stays bounded).
pub const MAX_TASKS: usize = 256;

/// The agent's task store: the SDK's in-memory store's rules, with [`MAX_TASKS`].
#[derive(Default)]
struct Tasks {
    inner: tokio::sync::RwLock<TaskMap>,
}

#[derive(Default)]
struct TaskMap {
    tasks: HashMap<String, (Task, TaskVersion)>,
    order: VecDeque<String>,
}

impl TaskMap {
    /// Forgets the oldest finished tasks while there are too many (running ones are kept:
    /// there are at most as many as requests admitted).
    fn evict(&mut self) {
        while self.tasks.len() > MAX_TASKS {
            let oldest = self
                .order
                .iter()
                .position(|id| self.tasks.get(id).is_some_and(|t| t.0.status.state.is_terminal()));
            let Some(at) = oldest else { break };
            if let Some(id) = self.order.remove(at) {
                self.tasks.remove(&id);
            }
        }
    }
}

// The store's operations, as the in-memory store of the SDK does them.
#[async_trait::async_trait]
impl TaskStore for Tasks {
    async fn create(&self, task: Task) -> Result<TaskVersion, A2AError> {
        let mut m = self.inner.write().await;
        if m.tasks.contains_key(&task.id) {
            return Err(A2AError::internal("task already exists"));
        }
        m.order.push_back(task.id.clone());
        m.tasks.insert(task.id.clone(), (task, 1));
        m.evict();
        Ok(1)
    }

    async fn update(&self, task: Task) -> Result<TaskVersion, A2AError> {
        let mut m = self.inner.write().await;
        let entry = m.tasks.get_mut(&task.id).ok_or_else(|| A2AError::task_not_found(&task.id))?;
        // A finished task stays as it finished (the same state may be written again).
        if entry.0.status.state.is_terminal() && entry.0.status.state != task.status.state {
            return Err(A2AError::invalid_request(format!("task {} has finished", task.id)));
        }
        entry.1 += 1;
        entry.0 = task;
        let version = entry.1;
        m.evict();
        Ok(version)
    }

    async fn get(&self, task_id: &str) -> Result<Option<Task>, A2AError> {
        Ok(self.inner.read().await.tasks.get(task_id).map(|e| e.0.clone()))
    }

    async fn list(&self, req: &ListTasksRequest) -> Result<ListTasksResponse, A2AError> {
        let m = self.inner.read().await;
        let mut tasks: Vec<&Task> = m
            .tasks
            .values()
            .map(|e| &e.0)
            .filter(|t| req.context_id.as_ref().is_none_or(|c| t.context_id == *c))
            .filter(|t| req.status.as_ref().is_none_or(|s| t.status.state == *s))
            .filter(|t| {
                req.status_timestamp_after.is_none_or(|after| t.status.timestamp.is_some_and(|ts| ts > after))
            })
            .collect();
        tasks.sort_by(|a, b| a.id.cmp(&b.id));
        let page_size = a2a_server::pagination::resolve_page_size(req.page_size);
        let start = match &req.page_token {
            Some(t) if !t.is_empty() => {
                t.parse::<usize>().map_err(|_| A2AError::invalid_params("invalid page token"))?
            }
            _ => 0,
        };
        let total = tasks.len();
        let start = start.min(total);
        let end = start.saturating_add(page_size).min(total);
        let page = tasks[start..end]
            .iter()
            .map(|t| {
                let mut t = (*t).clone();
                if let (Some(keep), Some(h)) = (req.history_length, t.history.as_mut()) {
                    let keep = usize::try_from(keep.max(0)).unwrap_or(0);
                    if h.len() > keep {
                        h.drain(..h.len() - keep);
                    }
                }
                if req.include_artifacts == Some(false) {
                    t.artifacts = None;
                }
                t
            })
            .collect();
        Ok(ListTasksResponse {
            tasks: page,
            next_page_token: if end < total { end.to_string() } else { String::new() },
            page_size: i32::try_from(page_size).unwrap_or(i32::MAX),
            total_size: i32::try_from(total).unwrap_or(i32::MAX),
        })
    }

    async fn begin_cancel(&self, task_id: &str) -> Result<Task, A2AError> {
        let mut m = self.inner.write().await;
        let entry = m.tasks.get_mut(task_id).ok_or_else(|| A2AError::task_not_found(task_id))?;
        if entry.0.status.state.is_terminal() {
            return Err(A2AError::task_not_cancelable(task_id));
        }
        entry.1 += 1;
        entry.0.status.state = TaskState::Canceled;
        entry.0.status.timestamp = Some(chrono::Utc::now());
        Ok(entry.0.clone())
    }
}
