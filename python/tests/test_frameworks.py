"""One transcript written by each agent framework of tests/frameworks/ through the pytest gate,
failing exactly where its manifest (tests/fixtures/frameworks/manifest.json, the truth, not what
recite says) says a CI gate must."""

from __future__ import annotations

import json
from typing import Dict, List

import pytest

from recite.testing import CitationsDoNotHold, assert_citations_hold

from .conftest import REPO

# Verdicts, finding levels and answer statuses the gate is asked to fail on here.
FAIL_ON = "invalid,unverifiable,discrepant,base-mismatch,must,misquoted,uncited"
FAILING_VERDICTS = {"INVALID", "UNVERIFIABLE", "DISCREPANT", "BASE_MISMATCH"}
FAILING_STATUSES = {"MISQUOTED", "UNCITED"}


def should_fail(entry: dict) -> bool:
    """What the manifest says `--fail-on FAIL_ON` must do with the file."""
    return (
        bool(FAILING_VERDICTS & set(entry["verdicts"]))
        or bool(entry["must_findings"])
        or bool(FAILING_STATUSES & set((entry["answers"] or {}).values()))
    )


def chosen() -> List[dict]:
    """Per framework, the first decided file that must fail and the first that must pass (a
    file whose findings or answers are left undecided by the manifest is not used)."""
    manifest = json.loads((REPO / "tests/fixtures/frameworks/manifest.json").read_text())
    picked: Dict[tuple, dict] = {}
    for entry in manifest:
        if entry["must_findings"] is None or entry["answers"] is None or not entry["claims"]:
            continue
        picked.setdefault((entry["framework"], should_fail(entry)), entry)
    return [picked[k] for k in sorted(picked)]


@pytest.mark.parametrize("entry", chosen(), ids=lambda e: e["file"].split("frameworks/")[1])
def test_each_frameworks_transcript_through_the_gate(entry):
    path = entry["file"]
    if should_fail(entry):
        with pytest.raises(CitationsDoNotHold) as e:
            assert_citations_hold(path, fail_on=FAIL_ON)
        assert path in str(e.value)
        report = e.value.report
    else:
        report = assert_citations_hold(path, fail_on=FAIL_ON)
    verdicts = dict(report.claims.group_by("verdict").len().iter_rows())
    assert verdicts == entry["verdicts"]
    statuses = dict(report.answers.select("text", "status").iter_rows())
    assert statuses == entry["answers"]


def test_every_framework_is_covered_both_ways():
    frameworks = {e["framework"] for e in json.loads((REPO / "tests/fixtures/frameworks/manifest.json").read_text())}
    covered = {(e["framework"], should_fail(e)) for e in chosen()}
    assert {f for f, _ in covered} == frameworks
    assert sum(1 for _, fails in covered if fails) >= len(frameworks) - 1
