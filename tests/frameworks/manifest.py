"""Writes tests/fixtures/frameworks/manifest.json: what every framework-written fixture must
settle to. The truth, not what recite says today: each run's verdict comes from common.RUNS (or,
for the scenarios one adapter writes, common.SCENARIOS), whose numbers were checked against the
bundled Versant data (tests/sdk/agui/scenario.json).

Each entry's fields:

  file, framework, versions, protocol, run, shape
      which fixture, who wrote it (the key versions; the rest in its folder's versions.json),
      which run of common.RUNS / common.SCENARIOS, and where the result and citation are in it.
  verdicts, claims
      Every fixture holds at most one tool result with one citation, however many times the
      framework's stream repeats it (a state snapshot or an event's metadata repeating the tool's
      return included), so it is one claim: `verdicts` counts it by verdict and `claims` gives its
      cited period and column, its verdict and the measures its numbers must be compared with.
      A fixture with no citation at all (NO_CITATION; the `interrupt` scenario, whose tool never
      ran) has `verdicts: {}` and `claims: []`.
  answers
      Each number the agent's answer states, to its status (docs/answers.md): every one must be
      audited with that status, and no other number may be audited as the answer. `{}`: nothing
      may be (no text stands as the answer; `no_answer` says why). null where the stream leaves
      no answer text standing and that is not checked (NO_ANSWER; `no_answer` says why).
  answer_kinds  (the scenarios only)
      Every assistant text message of the stream that has text, by its `messageId`, to what it
      is: "answer" (the text that stands as the agent's answer, the only one audited as such),
      "retracted" (a response the agent rejected: pydantic-ai writes CUSTOM
      pydantic_ai_model_response_rejected naming it; it is replaced by the retry or, retries
      used up, by nothing) or "interrupted" (streamed by a run that ended in RUN_FINISHED with an
      interrupt outcome, before it paused; the resuming run's answer is the answer). Read from
      the fixture by the text each message streamed (common.SCENARIOS[run]["texts"]).
  not_answer_numbers  (the scenarios only)
      The numbers stated only in text that is not the answer, to that text's kind ("retracted"
      or "interrupted"): none of them may be audited as an answer number.
  must_findings
      The rules of the MUST findings a correct verifier reports: none (a correct framework run
      must pass a CI gate); null where that is not yet decided (`findings_undecided` says why).
  no_answer, findings_undecided, no_citation
      The reasons above, in words (`no_citation`: why a file whose run's tool returned a
      citation holds none; see NO_CITATION).

    python3 tests/frameworks/manifest.py [REPO]
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

# Where the framework's own stream leaves no answer text to audit, and why (not checked).
NO_ANSWER = {
    "pydantic-ai/a2a-correct-stream.sse": "fasta2a streams the answer as text chunks of an artifact, then sends that artifact whole (append false) holding only the structured output: the text is replaced, and the history carrying it is not streamed",
}
for run in ("wrong-number", "wrong-base", "misquote"):
    NO_ANSWER[f"pydantic-ai/a2a-{run}-stream.sse"] = NO_ANSWER["pydantic-ai/a2a-correct-stream.sse"]

# Where the file holds no citation although the run's tool made one, and why: no claim, and each
# number of the answer is UNCITED (nothing in the exchange is cited).
NO_CITATION = {
    f"adk/a2a-state-{run}-task.json": "the tool wrote {result, citation} to the session state only; ADK's A2A export streams the state change as statusUpdate.metadata.adk_actions.stateDelta of the function response's event, which the task (GetTask) does not keep: its history has the function response's Part ({\"status\": ...}, no citation) and its metadata is the last event's (stateDelta {})"
    for run in common.RUNS
}

# MUST findings a correct verifier reports: none, on every stream here (each is valid AG-UI or
# A2A, and each quantitative result carries its citation), except where the binding's rule is
# still the readers' to decide, as below: there the findings are not checked.
UNDECIDED_FINDINGS = {
    "pydantic-ai/a2a-": "fasta2a writes the result and its citation in one data Part (`{\"result\": {result, citation}}`); whether that breaks the Upperhand A2A binding (a citation Part of its own) is for the readers to decide and document (issue 22)",
    "adk/a2a-state-": "ADK's A2A export carries the result and its citation only in event metadata (statusUpdate.metadata.adk_actions.stateDelta.figures[0] = {result, citation}), in no Part; whether a citation outside any Part meets the Upperhand A2A binding (a citation Part of its own) is for the readers to decide and document, as for fasta2a's combined Part (issue 45)",
}


def undecided(key: str) -> str | None:
    """Why the MUST findings of a file are not decided, or None. A file with no citation (NO_CITATION)
    leaves the binding nothing to judge."""
    if key in NO_CITATION:
        return None
    return next((why for prefix, why in UNDECIDED_FINDINGS.items() if key.startswith(prefix)), None)


# Which versions each framework's entry names (the rest are in its versions.json).
KEY_VERSIONS = {
    "langgraph": ["ag-ui-langgraph", "langgraph", "langchain-core"],
    "langgraph-js": ["@ag-ui/langgraph", "@langchain/langgraph-sdk", "langgraph-api", "langgraph"],
    "adk": ["google-adk", "ag_ui_adk", "a2a-sdk"],
    "pydantic-ai": ["pydantic-ai-slim", "fasta2a"],
    "strands": ["ag_ui_strands", "strands-agents"],
    "llamaindex": ["llama-index-protocols-ag-ui", "llama-index-core"],
    "crewai": ["ag-ui-crewai", "crewai"],
    "mastra": ["@ag-ui/mastra", "@mastra/core", "ai"],
}


def agui_texts(path: Path) -> dict[str, str]:
    """Each assistant text message of an AG-UI SSE stream that has text: messageId -> its text."""
    texts: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if not line.startswith("data:"):
            continue
        e = json.loads(line[5:])
        if e["type"] in ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CHUNK") and e.get("delta"):
            texts[e["messageId"]] = texts.get(e["messageId"], "") + e["delta"]
    return texts


def answer_kinds(path: Path, run: dict) -> dict[str, str]:
    """messageId -> "answer" / "retracted" / "interrupted", by the text each message streamed."""
    kinds = {}
    for message_id, text in agui_texts(path).items():
        if text not in run["texts"]:
            raise SystemExit(f"{path}: message {message_id} streamed {text!r}, which the scenario does not name")
        kinds[message_id] = run["texts"][text]
    missing = set(run["texts"]) - set(agui_texts(path).values())
    if missing:
        raise SystemExit(f"{path}: the scenario's texts {sorted(missing)} are not in the stream")
    return kinds


def main(repo: Path) -> None:
    root = repo / "tests/fixtures/frameworks"
    entries = []
    for fw in sorted(p for p in root.iterdir() if p.is_dir()):
        doc = json.loads((fw / "versions.json").read_text())
        for name, info in doc["files"].items():
            run = common.spec(info["run"])
            key = f"{fw.name}/{name}"
            cite = run["citation"]
            cited = run["verdict"] is not None and key not in NO_CITATION
            if key in NO_CITATION:
                answers = {number: "UNCITED" for number in run["answers"]}
            elif key in NO_ANSWER:
                answers = None
            else:
                answers = run["answers"]
            why_undecided = undecided(key)
            scenario = info["run"] in common.SCENARIOS
            entries.append({
                "file": f"tests/fixtures/frameworks/{key}",
                "framework": doc["framework"],
                "versions": {k: doc["versions"][k] for k in KEY_VERSIONS[fw.name]},
                "protocol": info["protocol"],
                "run": info["run"],
                "shape": info["shape"],
                "verdicts": {run["verdict"]: 1} if cited else {},
                "claims": [{
                    "period": cite["period"],
                    "column": cite["source"]["column"],
                    "verdict": run["verdict"],
                    "compared": run["compared"],
                    "why": run["why"],
                }] if cited else [],
                "answers": answers,
                **({"answer_kinds": answer_kinds(fw / name, run), "not_answer_numbers": run["not_answer_numbers"]} if scenario else {}),
                "must_findings": None if why_undecided else [],
                **({"findings_undecided": why_undecided} if why_undecided else {}),
                **({"no_answer": NO_ANSWER[key]} if key in NO_ANSWER else {}),
                **({"no_answer": run["no_answer"]} if scenario and "no_answer" in run else {}),
                **({"no_citation": NO_CITATION[key]} if key in NO_CITATION else {}),
            })
    out = root / "manifest.json"
    out.write_text(json.dumps(entries, indent=1, ensure_ascii=False) + "\n")
    print(f"{out}: {len(entries)} fixtures", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else common.REPO)
