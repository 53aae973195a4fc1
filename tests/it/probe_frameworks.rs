//! `recite probe` against agents served by frameworks nobody here wrote, on loopback: Google
//! ADK's A2A export (`to_a2a`, `tests/probe/adk_agent.py`) and Pydantic AI served by fasta2a
//! (`tests/probe/fasta2a_agent.py`), each with a scripted model and a tool returning the Versant
//! W6 funnel, in five variants: cites correctly, cites a wrong number, numbers without a
//! citation, base.n as a string, and a card that declares the media type nowhere. Each
//! variant's findings and verdicts are asserted, and the transcript the probe saved settles to
//! the same claims under `recite check`.
//!
//! The frameworks come from the virtualenvs `tests/probe/install.sh` makes; without them these
//! tests are skipped with a message, unless `RECITE_REQUIRE_PROBE_FRAMEWORKS=1` (CI) makes that
//! a failure.

use std::path::PathBuf;

use serde_json::Value;

use crate::probe::{Agent, findings, musts, probe, verdicts};
use crate::support::{code, recite, root, stderr};

/// A framework: its venv under the cache, its agent script, the `recite probe` arguments it
/// needs (ADK's generated card has no skill examples: a prompts file names its skill).
struct Framework {
    venv: &'static str,
    script: &'static str,
    args: &'static [&'static str],
    /// The skill the call names in the report.
    skill: &'static str,
}

const ADK: Framework = Framework {
    venv: "recite-probe-adk",
    script: "adk_agent.py",
    args: &["--prompts", "tests/probe/prompts-adk.jsonl", "--no-examples"],
    skill: "skill versant (prompt 1)",
};

const FASTA2A: Framework = Framework {
    venv: "recite-probe-pydantic-ai",
    script: "fasta2a_agent.py",
    args: &[],
    skill: "skill funnel (example 1)",
};

/// The framework's venv python, or `None` after a SKIPPED line.
fn python(test: &str, f: &Framework) -> Option<PathBuf> {
    let venvs = std::env::var_os("RECITE_PROBE_VENVS").map(PathBuf::from).unwrap_or_else(|| {
        std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache"))
    });
    let python = venvs.join(f.venv).join("bin/python");
    if python.is_file() {
        return Some(python);
    }
    let why = format!("{} is not installed (run tests/probe/install.sh)", python.display());
    let required =
        std::env::var_os("RECITE_REQUIRE_PROBE_FRAMEWORKS").is_some_and(|v| !v.is_empty() && v != "0");
    assert!(!required, "RECITE_REQUIRE_PROBE_FRAMEWORKS is set but {why}");
    crate::support::say_skipped(test, &why);
    None
}

/// What a variant must come to.
struct Expected {
    status: i32,
    verdict: &'static str,
    /// The `probe/skill` NOTE's last words.
    skill_ends: &'static str,
    /// A MUST `upperhand/conformance` is there, and its message holds this.
    conformance_must: Option<&'static str>,
    /// The card's SHOULD `upperhand/card-output-modes` is there.
    card_should: bool,
}

/// Probes `f`'s agent answering as `variant` and checks the report against `want`, then the
/// saved transcript under `recite check`.
fn settles(test: &str, f: &Framework, variant: &str, want: Expected) {
    let Some(python) = python(test, f) else { return };
    let agent = Agent::spawn(&python, f.script, &[variant]);
    let args: Vec<String> = f
        .args
        .iter()
        .map(|a| {
            if a.starts_with("tests/") {
                root().join(a).to_string_lossy().into_owned()
            } else {
                a.to_string()
            }
        })
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (status, report, _dir) = probe(&agent.url, &args);
    drop(agent);
    let said = findings(&report);
    assert_eq!(status, want.status, "{variant}: {said:#?}");
    assert_eq!(verdicts(&report), [want.verdict], "{variant}: {report:#}");
    assert!(
        said.iter().any(|(r, l, m)| r == "probe/skill"
            && l == "NOTE"
            && m.contains(f.skill)
            && m.ends_with(want.skill_ends)),
        "{variant}: {said:#?}"
    );
    let conformance: Vec<_> =
        musts(&report).into_iter().filter(|(r, _, _)| r == "upperhand/conformance").collect();
    match want.conformance_must {
        Some(words) => assert!(conformance.iter().any(|(_, _, m)| m.contains(words)), "{variant}: {said:#?}"),
        None => assert!(conformance.is_empty(), "{variant}: {conformance:#?}"),
    }
    let card_should = said.iter().any(|(r, l, _)| r == "upperhand/card-output-modes" && l == "SHOULD");
    assert_eq!(card_should, want.card_should, "{variant}: {said:#?}");
    assert!(!said.iter().any(|(r, _, _)| r == "probe/call"), "{variant}: every call answered: {said:#?}");

    // The saved transcript, settled again by `recite check`: the same claims, byte for byte, and
    // every finding the reader makes of it already in the probe's report.
    let inputs = report["inputs"].as_array().unwrap();
    let call = &inputs[1];
    let file = call["file"].as_str().unwrap();
    let again = recite(&["check", file, "--format", "json"]);
    assert!(code(&again) <= 1, "{}", stderr(&again));
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    let input = &again["inputs"][0];
    assert_eq!(
        serde_json::to_string(&input["claims"]).unwrap(),
        serde_json::to_string(&call["claims"]).unwrap(),
        "{variant}: recite check settles {file} otherwise"
    );
    let listed = |v: &Value| v["findings"].as_array().cloned().unwrap_or_default();
    let (read, probed) = (listed(input), listed(call));
    for f in &read {
        assert!(probed.contains(f), "{variant}: {f} is not in the probe's report");
    }
}

const CONFORMING: Expected = Expected {
    status: 0,
    verdict: "REPRODUCED",
    skill_ends: ": conforming",
    conformance_must: None,
    card_should: false,
};
const UNCITED: Expected = Expected {
    status: 1,
    verdict: "INVALID",
    skill_ends: "NOT conforming",
    conformance_must: Some("a quantitative result with no citation Part"),
    card_should: false,
};
// A cited wrong number conforms; it is wrong.
const DISCREPANT: Expected = Expected {
    status: 1,
    verdict: "DISCREPANT",
    skill_ends: ": conforming",
    conformance_must: None,
    card_should: false,
};
const STRING_N: Expected = Expected {
    status: 1,
    verdict: "INVALID",
    skill_ends: "NOT conforming",
    conformance_must: Some("Required fields present; base.n is a positive integer"),
    card_should: false,
};
// The replies conform; the card does not say so (a SHOULD: exit 0 under the default --fail-on).
const UNDECLARED: Expected = Expected {
    status: 0,
    verdict: "REPRODUCED",
    skill_ends: ": conforming",
    conformance_must: None,
    card_should: true,
};

#[test]
fn adk_to_a2a_agent_that_cites_passes() {
    settles("probe_frameworks::adk_conforming", &ADK, "conforming", CONFORMING);
}

#[test]
fn adk_to_a2a_agent_without_a_citation_is_not_conforming() {
    settles("probe_frameworks::adk_uncited", &ADK, "uncited", UNCITED);
}

#[test]
fn adk_to_a2a_agent_citing_a_wrong_number_is_discrepant() {
    settles("probe_frameworks::adk_discrepant", &ADK, "discrepant", DISCREPANT);
}

#[test]
fn adk_to_a2a_agent_whose_base_n_is_a_string_breaks_the_required_fields() {
    settles("probe_frameworks::adk_string_n", &ADK, "string-n", STRING_N);
}

#[test]
fn adk_to_a2a_agent_whose_card_omits_the_media_type_gets_the_cards_should() {
    settles("probe_frameworks::adk_undeclared", &ADK, "undeclared", UNDECLARED);
}

#[test]
fn fasta2a_agent_that_cites_passes() {
    settles("probe_frameworks::fasta2a_conforming", &FASTA2A, "conforming", CONFORMING);
}

#[test]
fn fasta2a_agent_without_a_citation_is_not_conforming() {
    settles("probe_frameworks::fasta2a_uncited", &FASTA2A, "uncited", UNCITED);
}

#[test]
fn fasta2a_agent_citing_a_wrong_number_is_discrepant() {
    settles("probe_frameworks::fasta2a_discrepant", &FASTA2A, "discrepant", DISCREPANT);
}

#[test]
fn fasta2a_agent_whose_base_n_is_a_string_breaks_the_required_fields() {
    settles("probe_frameworks::fasta2a_string_n", &FASTA2A, "string-n", STRING_N);
}

#[test]
fn fasta2a_agent_whose_card_omits_the_media_type_gets_the_cards_should() {
    settles("probe_frameworks::fasta2a_undeclared", &FASTA2A, "undeclared", UNDECLARED);
}
