//! The reference client's stream rules (`verifyEvents` in `@ag-ui/client`), applied after CHUNK
//! expansion.
//!
//! The client stops at the first breach; recite reports every breach and goes on, so after a
//! breach the state is updated the way that causes the fewest knock-on reports: an event after
//! the run ended is reported and otherwise ignored, an unexpected `RUN_STARTED` starts a new run,
//! and a `RUN_FINISHED` with open parts still ends the run. Each fixture is its own stream and
//! starts from a fresh state. The deprecated `THINKING_*` rules of the client are applied too.

use std::collections::BTreeSet;

use super::Event;

/// Verifier state for one stream.
#[derive(Default)]
struct State {
    first_seen: bool,
    run_started: bool,
    run_finished: bool,
    run_error: bool,
    messages: BTreeSet<String>,
    tool_calls: BTreeSet<String>,
    steps: BTreeSet<String>,
    thinking: bool,
    thinking_message: bool,
}

impl State {
    fn new_run(&mut self) {
        *self = State { first_seen: true, run_started: true, ..State::default() };
    }
}

/// Every breach of the stream rules: the event index and the client's reason.
pub fn verify(events: &[Event], streams: &[usize]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut state = State::default();
    let mut current = None;
    for (event, &stream) in events.iter().zip(streams) {
        if current != Some(stream) {
            state = State::default();
            current = Some(stream);
        }
        if let Err(message) = step(&mut state, event) {
            out.push((event.index, message));
        }
    }
    out
}

/// The id an event names in `key` (`undefined`, as the client would print it, when absent).
fn id<'a>(event: &'a Event, key: &str) -> &'a str {
    event.str_field(key).unwrap_or("undefined")
}

/// Applies one event; `Err` with the client's message on a breach.
fn step(s: &mut State, event: &Event) -> Result<(), String> {
    let kind = event.kind.as_str();
    if s.run_error && kind != "RUN_STARTED" {
        return Err(format!(
            "Cannot send event type '{kind}': The run has already errored with 'RUN_ERROR'. No further events can be sent."
        ));
    }
    if s.run_finished && kind != "RUN_ERROR" && kind != "RUN_STARTED" {
        return Err(format!(
            "Cannot send event type '{kind}': The run has already finished with 'RUN_FINISHED'. Start a new run with 'RUN_STARTED'."
        ));
    }
    if !s.first_seen {
        s.first_seen = true;
        if kind != "RUN_STARTED" && kind != "RUN_ERROR" {
            let _ = apply(s, event);
            return Err("First event must be 'RUN_STARTED'".to_string());
        }
    } else if kind == "RUN_STARTED" {
        let active = s.run_started && !s.run_finished && !s.run_error;
        s.new_run();
        if active {
            return Err("Cannot send 'RUN_STARTED' while a run is still active. The previous run must be finished with 'RUN_FINISHED' before starting a new run.".to_string());
        }
    }
    apply(s, event)
}

/// Rules 5 and 6: `{family}_START` opens an id that is not open; every other event of the family
/// needs it open, and `{family}_END` closes it. Messages of the reference client, word for word.
fn per_id(
    open: &mut BTreeSet<String>,
    kind: &str,
    id: &str,
    family: &str,
    one: &str,
    none: &str,
) -> Result<(), String> {
    let (start, end) = (format!("{family}_START"), format!("{family}_END"));
    if kind == start {
        if !open.insert(id.to_string()) {
            return Err(format!(
                "Cannot send '{kind}' event: {one} with ID '{id}' is already in progress. Complete it with '{end}' first."
            ));
        }
        return Ok(());
    }
    let was_open = if kind == end { open.remove(id) } else { open.contains(id) };
    if !was_open {
        return Err(format!(
            "Cannot send '{kind}' event: {none} found with ID '{id}'. Start {} with '{start}' first.",
            one.to_lowercase()
        ));
    }
    Ok(())
}

/// The per-type rules.
fn apply(s: &mut State, event: &Event) -> Result<(), String> {
    let kind = event.kind.as_str();
    match kind {
        "TEXT_MESSAGE_START" | "TEXT_MESSAGE_CONTENT" | "TEXT_MESSAGE_END" => {
            let id = id(event, "messageId");
            per_id(&mut s.messages, kind, id, "TEXT_MESSAGE", "A text message", "No active text message")?;
        }
        "TOOL_CALL_START" | "TOOL_CALL_ARGS" | "TOOL_CALL_END" => {
            let id = id(event, "toolCallId");
            per_id(&mut s.tool_calls, kind, id, "TOOL_CALL", "A tool call", "No active tool call")?;
        }
        "STEP_STARTED" => {
            let name = id(event, "stepName");
            if !s.steps.insert(name.to_string()) {
                return Err(format!("Step \"{name}\" is already active for 'STEP_STARTED'"));
            }
        }
        "STEP_FINISHED" => {
            let name = id(event, "stepName");
            if !s.steps.remove(name) {
                return Err(format!("Cannot send 'STEP_FINISHED' for step \"{name}\" that was not started"));
            }
        }
        "RUN_STARTED" => s.run_started = true,
        "RUN_FINISHED" => return finish(s),
        "RUN_ERROR" => s.run_error = true,
        "THINKING_START" | "THINKING_END" => {
            let starting = kind == "THINKING_START";
            if s.thinking == starting {
                let why = if starting {
                    "A thinking step is already in progress"
                } else {
                    "No active thinking step found"
                };
                return Err(format!("Cannot send '{kind}' event: {why}."));
            }
            s.thinking = starting;
        }
        "THINKING_TEXT_MESSAGE_START" => {
            if !s.thinking {
                return Err("Cannot send 'THINKING_TEXT_MESSAGE_START' event: A thinking step is not in progress. Create one with 'THINKING_START' first.".to_string());
            }
            if s.thinking_message {
                return Err("Cannot send 'THINKING_TEXT_MESSAGE_START' event: A thinking message is already in progress. Complete it with 'THINKING_TEXT_MESSAGE_END' first.".to_string());
            }
            s.thinking_message = true;
        }
        "THINKING_TEXT_MESSAGE_CONTENT" | "THINKING_TEXT_MESSAGE_END" => {
            if !s.thinking_message {
                return Err(format!(
                    "Cannot send '{kind}' event: No active thinking message found. Start a message with 'THINKING_TEXT_MESSAGE_START' first."
                ));
            }
            if kind == "THINKING_TEXT_MESSAGE_END" {
                s.thinking_message = false;
            }
        }
        _ => {}
    }
    Ok(())
}

/// `RUN_FINISHED`: nothing may be open. The run ends either way.
fn finish(s: &mut State) -> Result<(), String> {
    let open = [("steps", &s.steps), ("text messages", &s.messages), ("tool calls", &s.tool_calls)]
        .into_iter()
        .filter(|(_, set)| !set.is_empty())
        .map(|(what, set)| format!("{what} {}", set.iter().cloned().collect::<Vec<_>>().join(", ")))
        .collect::<Vec<_>>();
    s.run_finished = true;
    s.steps.clear();
    s.messages.clear();
    s.tool_calls.clear();
    if open.is_empty() {
        Ok(())
    } else {
        Err(format!("Cannot send 'RUN_FINISHED' while {} still active", open.join("; ")))
    }
}
