"""What every framework generator shares: the four runs (and the scenarios some adapters write
besides), the tool's payload, saving a stream.

The data come from the SDK corpus (tests/sdk/agui/scenario.json, tests/sdk/a2a/agent_data.json):
the numbers there are true of the bundled Versant data (datasets/versant). Each generator runs
its framework's own endpoint in process with a scripted model, once per run below, and saves
the bytes the endpoint streamed. manifest.py turns RUNS and SCENARIOS into what each fixture
must settle to.
"""

import copy
import importlib.metadata
import json
import platform
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SCENARIO = json.loads((REPO / "tests/sdk/agui/scenario.json").read_text())
AGENT_DATA = json.loads((REPO / "tests/sdk/a2a/agent_data.json").read_text())
MEDIA_TYPE = SCENARIO["citationMediaType"]

QUESTION = "How many adults aware of Versant have considered it in the latest wave (W6)?"
TOOL_NAME = "versant_funnel"
TOOL_DESCRIPTION = "The Versant brand funnel among adults aware of the brand, with its Upperhand citation."

W6 = SCENARIO["funnel"]["citation"]

# The four runs: what the tool returns, and what the agent then says.
RUNS = {
    # Every stage and base n true of W6; the answer quotes them faithfully.
    "correct": {
        "result": SCENARIO["funnel"]["result"],
        "citation": W6,
        "answer": "Among adults aware of Versant, 44.2% have considered it in W6 (n = 4,654).",
        "verdict": "REPRODUCED",
        "compared": ["Familiar", "Considered", "Purchased", "Loyal"],
        "answers": {"44.2%": "TRACED", "4,654": "TRACED"},
        "why": "the W6 funnel (44.2% considered, n 4654) with its W6 citation; the answer quotes it",
    },
    # W5's consideration (47%) beside the W6 citation (44.2%): issue 9's wrong number.
    "wrong-number": {
        "result": SCENARIO["consideredWrong"]["result"],
        "citation": W6,
        "answer": "47% of adults aware of Versant have considered it in W6.",
        "verdict": "DISCREPANT",
        "compared": ["Considered"],
        "answers": {"47%": "TRACED_TO_DISCREPANT"},
        "why": "{\"Considered\": \"47%\"} (W5's value) beside a W6 citation; W6 gives 44.2%",
    },
    # A true share with W5's base n written with a group separator: issue 22's "4,595".
    "wrong-base": {
        "result": {"brand": "Versant", "Considered": "44%", "n": "4,595"},
        "citation": W6,
        "answer": "44% of adults aware of Versant have considered it in W6 (n = 4,595).",
        "verdict": "BASE_MISMATCH",
        "compared": ["Considered"],
        "answers": {"44%": "TRACED_TO_DISCREPANT", "4,595": "TRACED_TO_DISCREPANT"},
        "why": "{\"Considered\": \"44%\", \"n\": \"4,595\"}: 44% is W6's 44.2% but the base n is W5's 4595, not 4654",
    },
    # The tool is right; the answer misquotes it.
    "misquote": {
        "result": SCENARIO["funnel"]["result"],
        "citation": W6,
        "answer": "Among adults aware of Versant, 46% have considered it in W6 (n = 4,654).",
        "verdict": "REPRODUCED",
        "compared": ["Familiar", "Considered", "Purchased", "Loyal"],
        "answers": {"46%": "MISQUOTED", "4,654": "TRACED"},
        "why": "the tool's W6 funnel is right (44.2%); the answer says 46% considered",
    },
}


# Scenarios beyond the four runs, each written by one adapter only (SCENARIOS[...]["writers"]).
# The tool returns the W6 funnel with its citation, as in `correct`; what varies is what becomes
# of the agent's text. `answers` audits only the text that stands as the answer; `texts` says what
# each text the model streams is (`answer`, `retracted`: a response the agent rejected and
# replaced or gave up on, `interrupted`: streamed before the run paused for an approval), and
# `not_answer_numbers` the numbers stated only in text that is not the answer.
REJECTED_ANSWER = "47% of adults aware of Versant have considered it in W6."
INTERRUPTED_TEXT = "Let me fetch the W6 funnel; in W5 it was 47%."
SCENARIOS = {
    # An output validator rejects the first answer (47%); the model's retry (44.2%) is accepted.
    "rejected-retried": {
        "writers": ["pydantic-ai"],
        "result": SCENARIO["funnel"]["result"],
        "citation": W6,
        "before_tool": None,
        "responses": [REJECTED_ANSWER, RUNS["correct"]["answer"]],
        "answer": RUNS["correct"]["answer"],
        "texts": {REJECTED_ANSWER: "retracted", RUNS["correct"]["answer"]: "answer"},
        "verdict": "REPRODUCED",
        "compared": ["Familiar", "Considered", "Purchased", "Loyal"],
        "answers": {"44.2%": "TRACED", "4,654": "TRACED"},
        "not_answer_numbers": {"47%": "retracted"},
        "why": "the W6 funnel with its W6 citation; the first answer (47%) was rejected by an output validator and retried, the second (44.2%, n = 4,654) accepted",
    },
    # Every answer is rejected: the run ends in RUN_ERROR with no answer.
    "retries-exhausted": {
        "writers": ["pydantic-ai"],
        "result": SCENARIO["funnel"]["result"],
        "citation": W6,
        "before_tool": None,
        "responses": [REJECTED_ANSWER, REJECTED_ANSWER],
        "answer": None,
        "texts": {REJECTED_ANSWER: "retracted"},
        "verdict": "REPRODUCED",
        "compared": ["Familiar", "Considered", "Purchased", "Loyal"],
        "answers": {},
        "not_answer_numbers": {"47%": "retracted"},
        "no_answer": "both answers (47%) were rejected by the output validator, the second using up the output retry budget (1); the run ends in RUN_ERROR, so no text stands as the answer",
        "why": "the W6 funnel with its W6 citation; every answer was rejected, but the tool result stands",
    },
    # The tool needs approval: the run streams some text and the call, then pauses (interrupt).
    "interrupt": {
        "writers": ["pydantic-ai"],
        "result": None,
        "citation": None,
        "before_tool": INTERRUPTED_TEXT,
        "responses": [],
        "answer": None,
        "texts": {INTERRUPTED_TEXT: "interrupted"},
        "verdict": None,
        "compared": [],
        "answers": {},
        "not_answer_numbers": {"47%": "interrupted"},
        "no_answer": "the run pauses for the tool call's approval (RUN_FINISHED outcome interrupt) before the tool runs: the text streamed before the call is interrupted, not the answer, and there is no tool result, so no claim",
        "why": "no tool result: the call awaits approval",
    },
    # The next run on the thread resumes with the approval: the tool runs and the model answers.
    "resumed": {
        "writers": ["pydantic-ai"],
        "result": SCENARIO["funnel"]["result"],
        "citation": W6,
        "before_tool": INTERRUPTED_TEXT,
        "responses": [RUNS["correct"]["answer"]],
        "answer": RUNS["correct"]["answer"],
        "texts": {RUNS["correct"]["answer"]: "answer"},
        "verdict": "REPRODUCED",
        "compared": ["Familiar", "Considered", "Purchased", "Loyal"],
        "answers": {"44.2%": "TRACED", "4,654": "TRACED"},
        "not_answer_numbers": {},
        "why": "the approved call's W6 funnel with its W6 citation, streamed by the resuming run; the answer quotes it",
    },
}


def spec(run: str) -> dict:
    """A run of RUNS or a scenario of SCENARIOS."""
    return RUNS[run] if run in RUNS else SCENARIOS[run]


def payload(run: str) -> dict:
    """The tool's return value as a plain object: the result and its citation side by side."""
    r = spec(run)
    return {"result": copy.deepcopy(r["result"]), "citation": copy.deepcopy(r["citation"])}


def run_input(run: str) -> dict:
    """The AG-UI `RunAgentInput` every AG-UI generator posts: the question, no state, no tools."""
    return {
        "threadId": f"thread-{run}",
        "runId": f"run-{run}",
        "state": {},
        "messages": [{"id": "user-1", "role": "user", "content": QUESTION}],
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }


async def post_run(app, path: str, run: str, timeout: float = 120) -> bytes:
    """Posts `run_input(run)` to `path` of the ASGI `app`, in process, and returns the bytes
    the endpoint streamed (Server-Sent Events), as they came."""
    import httpx

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent", timeout=timeout) as client:
        r = await client.post(path, json=run_input(run), headers={"accept": "text/event-stream"})
        r.raise_for_status()
        return r.content


def citation_part(run: str) -> dict:
    """The citation as an Upperhand Part: media type and data."""
    return {"mediaType": MEDIA_TYPE, "data": copy.deepcopy(spec(run)["citation"])}


def versions(*dists: str) -> dict:
    """Installed versions of the named distributions, and the interpreter's."""
    out = {d: importlib.metadata.version(d) for d in dists}
    out["python"] = platform.python_version()
    return out


def save(out: Path, name: str, data: bytes) -> None:
    """Writes one fixture's bytes as the endpoint streamed them."""
    out.mkdir(parents=True, exist_ok=True)
    (out / name).write_bytes(data)
    print(f"  {out.name}/{name}: {len(data)} bytes", file=sys.stderr)


def write_versions(out: Path, framework: str, vers: dict, files: dict, events: dict | None = None) -> None:
    """versions.json: the packages that wrote the fixtures, and per file its run and shape; with
    `events`, what the framework's installed source says of the events and keys a scenario
    relies on (where it is written, and the shape)."""
    doc = {"framework": framework, "versions": vers, "files": dict(sorted(files.items()))}
    if events:
        doc["events"] = events
    (out / "versions.json").write_text(json.dumps(doc, indent=2) + "\n")


def write_runs_json() -> None:
    """runs.json: RUNS for the JS generator (gen_mastra.mjs), so both sides make the same runs."""
    doc = {
        "_comment": "Written by common.py from its RUNS (python3 tests/frameworks/common.py), for gen_mastra.mjs.",
        "question": QUESTION,
        "tool": TOOL_NAME,
        "description": TOOL_DESCRIPTION,
        "runs": {k: {"result": v["result"], "citation": v["citation"], "answer": v["answer"]} for k, v in RUNS.items()},
    }
    (HERE / "runs.json").write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    write_runs_json()
