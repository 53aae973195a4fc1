"""Transcripts handed over as the SDKs' own objects: the A2A Python SDK's protobuf messages and
the AG-UI Python SDK's pydantic events, serialised as they go on the wire."""

from __future__ import annotations

import recite

from .conftest import DATA, REPO

A2A_TASK = "tests/fixtures/sdk/a2a/py-rest-get-task.json"
AGUI_RUN = "examples/transcripts/agui-run.sse"


# What a claim settled to (where it was found differs: a JSON document is not an SSE stream).
SETTLED = ["verdict", "reasons", "study", "period", "table", "column", "measure", "claimed", "recomputed", "n", "matched"]


def same_outcome(a: recite.Report, b: recite.Report) -> None:
    assert a.claims.select(SETTLED).equals(b.claims.select(SETTLED))
    assert a.answers["status"].to_list() == b.answers["status"].to_list()
    assert a.findings.select("level", "rule").rows() == b.findings.select("level", "rule").rows()


def test_an_a2a_sdk_task_settles_as_the_file_it_was_read_from():
    from a2a.types import Task
    from google.protobuf import json_format

    task = json_format.Parse((REPO / A2A_TASK).read_text(), Task())
    as_object = recite.check(task, data=DATA)
    assert as_object.inputs["file"].to_list() == ["<input 1>"]
    assert "DISCREPANT" in as_object.claims["verdict"].to_list()
    same_outcome(as_object, recite.check(A2A_TASK, data=DATA))


def test_ag_ui_sdk_events_settle_as_the_stream_they_were_read_from():
    from ag_ui.core import Event
    from pydantic import TypeAdapter

    adapter = TypeAdapter(Event)
    lines = (REPO / AGUI_RUN).read_text().splitlines()
    events = [adapter.validate_json(line[len("data:"):]) for line in lines if line.startswith("data:")]
    as_objects = recite.check([events], data=DATA)  # one input: the run's list of events
    assert as_objects.claims["verdict"].to_list() == ["REPRODUCED", "DISCREPANT", "INVALID"]
    same_outcome(as_objects, recite.check(AGUI_RUN, data=DATA))
