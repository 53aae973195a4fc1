//! `recite probe URL`: Upperhand's "Conformance (probed)" against a live A2A agent. The card is
//! fetched and checked, each skill called, every reply saved as the transcript it is, then
//! settled as `recite check` settles it (recite-core's `probe` module says what to call and what
//! the replies mean; this file makes the calls).

const USAGE: &str = "\
Examples:
  recite probe http://127.0.0.1:9999                          its card at /.well-known/agent-card.json
  recite probe https://agent.example/.well-known/agent-card.json --save runs/agent/
  recite probe http://127.0.0.1:9999 --prompts prompts.jsonl --no-examples --format junit -o probe.xml
  AGENT_TOKEN=… recite probe http://127.0.0.1:9999 --token-env AGENT_TOKEN --header 'X-Tenant: acme'

The card is checked as `recite card` checks it, then each skill is called with its own examples
from the card and the --prompts lines naming it (JSON lines {\"skill\": ID, \"text\": …} or
{\"skill\": ID, \"parts\": [A2A Parts]}), over the interface the card prefers (JSON-RPC or
HTTP+JSON, A2A v1.0 or v0.3), streaming when the card offers it. Each reply is saved as it came
(--save DIR; `recite check DIR` settles it again) and settled as `recite check` settles a
transcript, with the rule of Upperhand's \"Conformance (probed)\" per call: a quantitative result
without a citation Part in the same result, or a citation without its required fields or with
a base.n that is not a positive integer, is a MUST finding. The report is `recite check`'s, in
the same six formats, with the card as its first input.

Plain http only: this build has no TLS client (probe an https agent through a local TLS
terminator). Exit status as `recite check`: 0 passed, 1 something counts as a failure
(--fail-on; a non-conforming skill is a MUST finding), 2 on usage or I/O errors (an unreachable
agent, a card that is not JSON), 5 when nothing was checked.";

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use recite_serve::probe::{Client, ClientOptions, file_part};
use serde_json::Value;

use recite::check;
use recite::input::Finding;
use recite::probe::{self, Agent, Call, CardInput, Decorated, PlanOptions};
use recite::report;

use super::check::EXIT_NOTHING_CHECKED;
use super::choices::{FailOnList, FormatArg as Format, ListParser};
use super::fail_on::FailOn;
use super::files;
use super::{DataArgs, Progress, ReportArgs, ReportOutput, SettleArgs};

/// Call a live A2A agent's skills and check that its quantitative replies carry Upperhand
/// citations that hold (the spec's "Conformance (probed)").
#[derive(Debug, clap::Args)]
#[command(after_help = USAGE)]
pub struct Args {
    /// The agent's base URL (its card is at /.well-known/agent-card.json), or its card's URL.
    #[arg(value_name = "URL")]
    url: String,
    /// Prompts to send: JSON lines of {"skill": ID, "text": …} or {"skill": ID, "parts": [...]}.
    #[arg(long, value_name = "FILE")]
    prompts: Option<PathBuf>,
    /// Do not send the skills' own examples from the card (only --prompts).
    #[arg(long)]
    no_examples: bool,
    /// Call without streaming even when the card offers it.
    #[arg(long)]
    no_stream: bool,
    /// A header sent with every request, `Name: value` (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// The environment variable holding a bearer token, sent as `Authorization: Bearer …`.
    #[arg(long, value_name = "VAR")]
    token_env: Option<String>,
    /// Seconds each request may take, the whole reply included.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    timeout: u64,
    /// At most this many skill calls (the rest are a finding on the card).
    #[arg(long, value_name = "N", default_value_t = 20)]
    max_calls: usize,
    /// Keep the card and every reply here, as received (`recite check DIR` re-settles them).
    #[arg(long, value_name = "DIR")]
    save: Option<PathBuf>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    report: ReportArgs,
    /// A card or reply larger than this is refused. Bytes, or with KiB, MiB, GiB.
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = files::parse_size)]
    max_input_size: u64,
    /// What makes the exit status 1 (as `recite check --fail-on`).
    #[arg(long, value_name = "LIST", value_parser = ListParser, default_value = recite::fail_on::DEFAULT)]
    fail_on: Vec<FailOnList>,
    /// Exit 0, not 5, when the replies held nothing to check.
    #[arg(long)]
    allow_empty: bool,
    #[command(flatten)]
    settle: SettleArgs,
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    cache: super::cache::CacheArgs,
    #[command(flatten)]
    engine: super::EngineArgs,
}

/// The card's name in the folder of transcripts.
const CARD_FILE: &str = "agent-card.json";

/// Runs `recite probe`.
pub fn run(a: Args) -> Result<ExitCode> {
    let fail: Vec<FailOn> = a.fail_on.iter().flat_map(|l| l.0.clone()).collect();
    if a.max_calls == 0 {
        bail!("--max-calls 0 would call nothing: give at least 1");
    }
    let out = ReportOutput::open(a.report.to.path(), &[])?;
    let prompts = match &a.prompts {
        Some(p) => {
            let text = String::from_utf8(super::read_input(&p.to_string_lossy())?)
                .with_context(|| format!("{}: not UTF-8", p.display()))?;
            probe::read_prompts(&text).with_context(|| p.display().to_string())?
        }
        None => Vec::new(),
    };
    let (catalog, registry) = (a.data.catalog()?, a.data.registry()?);
    let temp;
    let dir = match &a.save {
        Some(d) => {
            std::fs::create_dir_all(d).with_context(|| format!("cannot make {}", d.display()))?;
            d.clone()
        }
        None => {
            temp = tempfile::tempdir().context("cannot make a temporary folder for the replies")?;
            temp.path().to_path_buf()
        }
    };
    // Names in the report: the saved files as `recite check DIR/…` names them, else bare.
    let name_of = |file: &str| match &a.save {
        Some(d) => d.join(file).to_string_lossy().into_owned(),
        None => file.to_string(),
    };
    let client = client(&a)?;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;

    let (card_url, card_bytes) = rt.block_on(client.card(&a.url))?;
    let card_path = dir.join(CARD_FILE);
    std::fs::write(&card_path, &card_bytes)
        .with_context(|| format!("cannot write {}", card_path.display()))?;
    let card_json: Value = serde_json::from_slice(&card_bytes)
        .map_err(|e| anyhow!("the Agent Card at {} is not JSON: {e}", recite::redact::redact(&card_url)))?;
    let card_name = name_of(CARD_FILE);
    let agent = Agent::from_card(&card_json, &card_url)?;
    let options = PlanOptions { examples: !a.no_examples, max_calls: a.max_calls };
    let (calls, mut card_findings) = probe::plan(&agent, &prompts, options, &card_name);
    if calls.is_empty() {
        bail!(probe::ProbeError::NothingToCall);
    }
    let streaming = agent.streaming && !a.no_stream;
    let progress = Progress::new();
    let mut sources = Vec::new();
    let mut extra: HashMap<String, Vec<Finding>> = HashMap::new();
    for (i, call) in calls.iter().enumerate() {
        progress.phase(&format!(
            "calling skill {} ({}), {} of {}",
            call.skill,
            call.source,
            i + 1,
            calls.len()
        ));
        let id = format!("recite-probe-{}", i + 1);
        let req = probe::request(&agent.endpoint, streaming, call, &id);
        match rt.block_on(client.call(&req)) {
            Err(why) => card_findings.push(probe::call_failed(&card_name, call, &why)),
            Ok(reply) => {
                let ext = if reply.sse { "sse" } else { "json" };
                let file = format!("{:02}-{}.{ext}", i + 1, file_part(&call.skill));
                let path = dir.join(&file);
                std::fs::write(&path, &reply.body)
                    .with_context(|| format!("cannot write {}", path.display()))?;
                let name = name_of(&file);
                let doc = recite::transcript::read_bytes(&name, &reply.body);
                let mut found = Vec::new();
                if let Some(status) = reply.failed {
                    found.push(probe::call_failed(&name, call, &status));
                }
                found.extend(probe::conformance(&doc, call));
                extra.insert(name.clone(), found);
                sources.push(check::Source::File { name, path: path.to_string_lossy().into_owned() });
            }
        }
    }
    drop(rt);
    let card = CardInput::new(&card_name, &card_json, std::mem::take(&mut card_findings));
    let added = Decorated::levels(&card, &extra);

    let max = a.max_input_size;
    let opts = check::Options {
        settle: recite::settle::Options { series: a.format == Format::Html, ..a.settle.options() },
        chunk: check::DEFAULT_CHUNK,
        max_input_size: max,
        held_bytes: check::HELD_BYTES,
        read: &|p| files::read_file(p, max),
        record_schema: None,
        data_layer: Some(a.data.data_layer()),
        timings: false,
        progress: &|m| progress.phase(m),
    };
    let (color, layer) = (a.report.colored(), opts.data_layer.clone());
    let options = report::WriterOptions { answers_only: false, color, layer };
    let mut inner = report::writer(a.format.into(), options, out.writer()?);
    let engine = a.cache.engine(&a.engine)?;
    let mut ran = {
        let mut w = Decorated::new(inner.as_mut(), card, extra);
        check::run(&sources, &catalog, &registry, &engine, &opts, &mut w)?
    };
    drop(inner);
    out.commit(&[])?;
    progress.finish();
    for level in added {
        *ran.levels.entry(level).or_default() += 1;
    }
    eprintln!("recite probe: {}", summary_line(&calls, &sources, &ran));
    Ok(if FailOn::any_in(&fail, &ran) {
        ExitCode::from(1)
    } else if ran.checked_nothing() && !a.allow_empty {
        eprintln!(
            "recite: the replies held nothing to check (no claim, no answer number): exit 5; --allow-empty allows it"
        );
        ExitCode::from(EXIT_NOTHING_CHECKED)
    } else {
        ExitCode::SUCCESS
    })
}

/// One line for CI: calls made and answered, claims by verdict, findings by level.
fn summary_line(calls: &[Call], answered: &[check::Source], ran: &check::Ran) -> String {
    let verdicts: Vec<String> =
        ran.summary.verdicts.iter().filter(|(_, n)| **n > 0).map(|(v, n)| format!("{n} {v}")).collect();
    let levels: Vec<String> = ran.levels.iter().map(|(l, n)| format!("{n} {l}")).collect();
    format!(
        "{} skill call(s), {} answered; {} claim(s){}{}; finding(s): {}",
        calls.len(),
        answered.len(),
        ran.summary.claims,
        if verdicts.is_empty() { "" } else { ": " },
        verdicts.join(", "),
        if levels.is_empty() { "none".to_string() } else { levels.join(", ") }
    )
}

/// The HTTP client with the probe's headers, token and limits (recite-serve's, which
/// `POST /v1/probe` uses too; here without an allow-list: the command line calls what it is
/// told to).
fn client(a: &Args) -> Result<Client> {
    let bearer = match &a.token_env {
        Some(var) => {
            Some(std::env::var(var).map_err(|_| anyhow!("--token-env {var}: the variable is not set"))?)
        }
        None => None,
    };
    let options = ClientOptions {
        headers: a.headers.clone(),
        bearer,
        timeout: Duration::from_secs(a.timeout.max(1)),
        max_reply: a.max_input_size,
        allow: None,
    };
    Ok(Client::new(options)?)
}
