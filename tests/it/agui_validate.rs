//! A second AG-UI reference: `ag-ui-validate` (PyPI, a conformance validator) over the AG-UI
//! fixtures, beside the `@ag-ui/client` differential test in `agui.rs`.
//!
//! Per file, the validator's verdict (an error-level diagnostic, or none) is compared with
//! recite's (a MUST `ag-ui/stream` or `input/malformed` finding, or none). The two validators
//! disagree on some streams; recite follows the 1.0 reference client there, and each such file
//! is listed in [`DISAGREEMENTS`] with the reason (docs/readers.md, "A second reference"). A
//! new disagreement fails the test, and so does a listed file that no longer disagrees.
//!
//! The validator is installed by `tests/sdk/agui/install-validate.sh` (a cached venv). Without
//! it the test is skipped with a message, unless `RECITE_REQUIRE_AGUI_VALIDATE=1` (CI sets it
//! once the install succeeded), when it fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support;

/// Where ag-ui-validate and recite (with `@ag-ui/client`) disagree, and why recite follows the
/// client. `validator_rejects` is the validator's side: true when it reports an error on a
/// stream recite accepts, false when it accepts a stream recite rejects.
const DISAGREEMENTS: &[(&str, bool, &str)] = &[
    ("tests/fixtures/sdk/agui/py/versant-run.sse", true, CONTENT_PARTS),
    ("tests/fixtures/sdk/agui/py/versant-run.jsonl", true, CONTENT_PARTS),
    ("tests/fixtures/sdk/agui/js/versant-run.sse", true, CONTENT_PARTS),
    ("tests/fixtures/sdk/agui/js/versant-run.jsonl", true, CONTENT_PARTS),
    ("tests/fixtures/agui/upperhand.jsonl", true, CONTENT_PARTS),
    ("tests/fixtures/sdk/agui/py/interrupt-run.sse", true, RESUMED_CALL),
    ("tests/fixtures/sdk/agui/py/interrupt-run.jsonl", true, RESUMED_CALL),
    ("tests/fixtures/sdk/agui/js/interrupt-run.sse", true, RESUMED_CALL),
    ("tests/fixtures/sdk/agui/js/interrupt-run.jsonl", true, RESUMED_CALL),
    ("tests/fixtures/frameworks/pydantic-ai/agui-resumed.sse", true, RESUMED_ELSEWHERE),
    ("tests/fixtures/agui/sse-multiline.sse", true, LAST_EVENT),
    ("tests/fixtures/frameworks/langgraph-js/wrong-number.sse", true, REUSED_CALL_ID),
    ("tests/fixtures/agui/unknown-types.jsonl", true, UNKNOWN_AND_NULL),
    ("tests/fixtures/sdk/agui/streams/bad-activity-delta-by-other-owner.sse", false, OWNERS),
    ("tests/fixtures/sdk/agui/streams/bad-chunk-ambiguous-lane.sse", false, OWNERS),
    ("tests/fixtures/sdk/agui/streams/bad-text-continued-by-other-owner.sse", false, OWNERS),
    ("tests/fixtures/sdk/agui/streams/bad-tool-call-owner-differs-from-parent-message.sse", false, OWNERS),
    ("tests/fixtures/sdk/agui/streams/bad-subagent-parent-not-started.sse", false, OWNERS),
    ("tests/fixtures/sdk/agui/streams/bad-reasoning-end-without-start.sse", false, REASONING),
    ("tests/fixtures/sdk/agui/streams/bad-reasoning-message-start-twice.sse", false, REASONING),
    ("tests/fixtures/sdk/agui/streams/bad-run-finished-reasoning-message-open.sse", false, REASONING),
    ("tests/fixtures/sdk/agui/streams/bad-run-finished-reasoning-span-open.sse", false, REASONING),
    ("tests/fixtures/sdk/agui/streams/bad-run-finished-thinking-open.sse", false, REASONING),
    ("tests/fixtures/sdk/agui/streams/bad-thinking-content-without-start.sse", false, REASONING),
];

const CONTENT_PARTS: &str = "AGUI504: the validator checks TOOL_CALL_RESULT.content against its bundled 0.1 schema \
     (a string); AG-UI 1.0 allows a list of content parts, which the 1.0 client accepts";
const RESUMED_CALL: &str = "AGUI207: a result for a tool call opened in an earlier run (carried by RUN_STARTED's \
     input messages, as a resumed interrupt is); the 1.0 client seeds its state from the input and accepts it";
const RESUMED_ELSEWHERE: &str = "AGUI207: Pydantic AI's resumed run (its own POST, one file) streams the result \
     of a tool call the interrupted run opened, and echoes no input; the 1.0 client accepts a result for a call \
     it has not seen";
const REUSED_CALL_ID: &str = "AGUI205: @ag-ui/langgraph streams the same tool call again (START/ARGS/END under the \
     id of a call that has ended); the 1.0 client refuses only a start while that id is still open";
const LAST_EVENT: &str = "AGUI501/AGUI003: the last SSE event is not followed by a blank line; the client's parser \
     dispatches it at end of stream, and recite reads it too rather than drop a RUN_FINISHED (CRLF lines: `sse-crlf`)";
const UNKNOWN_AND_NULL: &str = "AGUI503/AGUI504: an event type the validator's bundled SDK does not know, and null on \
     optional fields; the 1.0 client drops unknown events, and recite reads null as absent (`explicit-null`)";
const OWNERS: &str = "1.0 ownership rules (subagentRunId lanes, parents) that the validator does not check, or \
     reports only as a warning (AGUI605/AGUI606); the 1.0 client rejects the stream";
const REASONING: &str = "1.0 reasoning span/message rules and the THINKING_* translation, which the validator does \
     not check or reports only as a warning (AGUI402); the 1.0 client rejects the stream";

/// The validator's executable, or why there is none.
fn validator() -> Result<PathBuf, String> {
    let exe = match std::env::var_os("RECITE_AGUI_VALIDATE") {
        Some(p) => PathBuf::from(p),
        None => {
            let cache = std::env::var_os("RECITE_SDK_CACHE").map(PathBuf::from).unwrap_or_else(|| {
                let base = std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from).unwrap_or_else(|| {
                    PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache")
                });
                base.join("recite-sdk")
            });
            cache.join("agui-validate/bin/ag-ui-validate")
        }
    };
    if exe.is_file() {
        Ok(exe)
    } else {
        Err(format!("{} is not installed (tests/sdk/agui/install-validate.sh)", exe.display()))
    }
}

/// The AG-UI fixtures the validator reads: SSE and JSON lines (it has no reader for JSON arrays
/// or `{name, stream}` fixture files).
fn fixture_files() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                walk(&path, out);
            } else if (name.ends_with(".sse") || name.ends_with(".jsonl")) && !name.starts_with("a2a-") {
                out.push(path.strip_prefix(support::root()).unwrap().to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut files = Vec::new();
    for dir in ["tests/fixtures/sdk/agui", "tests/fixtures/agui", "tests/fixtures/frameworks"] {
        walk(&support::root().join(dir), &mut files);
    }
    files
}

/// The validator's error-level diagnostics on one file, as `RULE@index: message`.
fn validator_errors(exe: &Path, file: &str) -> Vec<String> {
    let out = Command::new(exe)
        .arg(file)
        .arg("--json")
        .current_dir(support::root())
        .output()
        .expect("run ag-ui-validate");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "ag-ui-validate failed on {file}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("ag-ui-validate wrote no JSON report for {file} ({e})"));
    report["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| format!("{}@{}: {}", d["rule"].as_str().unwrap_or("?"), d["eventIndex"], d["message"]))
        .collect()
}

/// recite's MUST stream findings per file, as `rule@index: message`.
fn recite_rejections(files: &[String]) -> BTreeMap<String, Vec<String>> {
    let mut args = vec!["check"];
    args.extend(files.iter().map(String::as_str));
    args.extend_from_slice(&["--format", "json"]);
    let report = support::report(&support::recite(&args));
    report["inputs"]
        .as_array()
        .expect("inputs")
        .iter()
        .map(|i| {
            let found = i["findings"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|f| {
                    f["level"] == "MUST" && (f["rule"] == "ag-ui/stream" || f["rule"] == "input/malformed")
                })
                .map(|f| {
                    format!(
                        "{}@{}: {}",
                        f["rule"].as_str().unwrap_or("?"),
                        f["locator"]["event_index"],
                        f["message"]
                    )
                })
                .collect();
            (i["file"].as_str().unwrap().to_string(), found)
        })
        .collect()
}

#[test]
fn ag_ui_validate_agrees_with_recite_on_every_stream_but_the_listed_ones() {
    let exe = match validator() {
        Ok(exe) => exe,
        Err(why) => {
            let required =
                std::env::var_os("RECITE_REQUIRE_AGUI_VALIDATE").is_some_and(|v| !v.is_empty() && v != "0");
            assert!(!required, "RECITE_REQUIRE_AGUI_VALIDATE is set but {why}");
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED ag_ui_validate_agrees_with_recite_on_every_stream_but_the_listed_ones: {why}"
            );
            return;
        }
    };
    let files = fixture_files();
    for corpus in ["sdk/agui/py/", "sdk/agui/streams/", "fixtures/agui/", "fixtures/frameworks/"] {
        assert!(files.iter().any(|f| f.contains(corpus)), "no fixture in {corpus}");
    }
    let recite = recite_rejections(&files);
    let listed: BTreeMap<&str, (bool, &str)> =
        DISAGREEMENTS.iter().map(|(f, side, why)| (*f, (*side, *why))).collect();
    let mut wrong = Vec::new();
    for file in &files {
        let theirs = validator_errors(&exe, file);
        let ours = recite.get(file).cloned().unwrap_or_default();
        let differ = theirs.is_empty() != ours.is_empty();
        match (differ, listed.get(file.as_str())) {
            (false, None) => {}
            (true, Some(&(side, _))) if side != theirs.is_empty() => {}
            (true, _) => wrong.push(format!(
                "{file}: ag-ui-validate says {theirs:?}, recite says {ours:?} (not listed in DISAGREEMENTS)"
            )),
            (false, Some((_, why))) => wrong.push(format!(
                "{file}: listed in DISAGREEMENTS ({why}) but both now agree (validator {theirs:?}, recite {ours:?})"
            )),
        }
    }
    for (file, _, _) in DISAGREEMENTS {
        assert!(files.iter().any(|f| f == file), "DISAGREEMENTS names {file}, which is not a fixture");
    }
    assert!(wrong.is_empty(), "ag-ui-validate vs recite:\n{}", wrong.join("\n"));
}
