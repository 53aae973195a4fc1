"""Writes tests/fixtures/frameworks/manifest.json: what every framework-written fixture must
settle to. The truth, not what recite says today: each run's verdict comes from common.RUNS,
whose numbers were checked against the bundled Versant data (tests/sdk/agui/scenario.json).

Every fixture holds one tool result with one citation, however many times the framework's
stream repeats it, so it is one claim. `answers` maps each number the agent's answer states to
its status (docs/answers.md); it is null where the stream leaves no answer text standing (see
NO_ANSWER), and then the answer is not checked. `must_findings` lists the rules of the MUST
findings a correct verifier reports (none: a correct framework run must pass a CI gate), null
where that is not yet decided.

    python3 tests/frameworks/manifest.py [REPO]
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

# Where the framework's own stream leaves no answer text to audit, and why.
NO_ANSWER = {
    "pydantic-ai/a2a-correct-stream.sse": "fasta2a streams the answer as text chunks of an artifact, then sends that artifact whole (append false) holding only the structured output: the text is replaced, and the history carrying it is not streamed",
}
for run in ("wrong-number", "wrong-base", "misquote"):
    NO_ANSWER[f"pydantic-ai/a2a-{run}-stream.sse"] = NO_ANSWER["pydantic-ai/a2a-correct-stream.sse"]

# MUST findings a correct verifier reports: none, on every stream here (each is valid AG-UI or
# A2A, and each quantitative result carries its citation), except where the binding's rule is
# still the readers' to decide, as below: there the findings are not checked.
UNDECIDED_FINDINGS = "fasta2a writes the result and its citation in one data Part (`{\"result\": {result, citation}}`); whether that breaks the Upperhand A2A binding (a citation Part of its own) is for the readers to decide and document (issue 22)"

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


def main(repo: Path) -> None:
    root = repo / "tests/fixtures/frameworks"
    entries = []
    for fw in sorted(p for p in root.iterdir() if p.is_dir()):
        doc = json.loads((fw / "versions.json").read_text())
        for name, info in doc["files"].items():
            run = common.RUNS[info["run"]]
            key = f"{fw.name}/{name}"
            cite = run["citation"]
            entries.append({
                "file": f"tests/fixtures/frameworks/{key}",
                "framework": doc["framework"],
                "versions": {k: doc["versions"][k] for k in KEY_VERSIONS[fw.name]},
                "protocol": info["protocol"],
                "run": info["run"],
                "shape": info["shape"],
                "verdicts": {run["verdict"]: 1},
                "claims": [{
                    "period": cite["period"],
                    "column": cite["source"]["column"],
                    "verdict": run["verdict"],
                    "compared": run["compared"],
                    "why": run["why"],
                }],
                "answers": None if key in NO_ANSWER else run["answers"],
                "must_findings": None if key.startswith("pydantic-ai/a2a-") else [],
                **({"findings_undecided": UNDECIDED_FINDINGS} if key.startswith("pydantic-ai/a2a-") else {}),
                **({"no_answer": NO_ANSWER[key]} if key in NO_ANSWER else {}),
            })
    out = root / "manifest.json"
    out.write_text(json.dumps(entries, indent=1, ensure_ascii=False) + "\n")
    print(f"{out}: {len(entries)} fixtures", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else common.REPO)
