"""recite.testing: the pytest gate fails as `recite check --fail-on` fails, printing the claims."""

from __future__ import annotations

import json

import pytest

import recite
from recite.testing import CitationsDoNotHold, assert_citations_hold

from .conftest import DATA, REPO

CONSIDERED = "examples/citations/versant-w6-considered.json"
DISCREPANT = "examples/citations/versant-w6-discrepant.json"


def test_a_reproduced_transcript_passes_and_returns_its_report():
    report = assert_citations_hold(CONSIDERED)
    assert report.claims["verdict"].to_list() == ["REPRODUCED"]


def test_a_discrepant_claim_fails_the_gate_and_is_printed_as_recite_check_prints_it(cli):
    with pytest.raises(CitationsDoNotHold) as e:
        assert_citations_hold(DISCREPANT, data=DATA)
    message = str(e.value)
    assert message.startswith("recite: citations do not hold: 1 discrepant")
    assert "Considered 47% → 44.2%" in message  # the claim's line: claimed → recomputed
    assert "W5 (March 2026)" in message  # its details: what the agent likely computed instead
    # The body is `recite check`'s own text report of the failing input.
    out = cli.run("check", DISCREPANT, "--data", DATA, "--color", "never")
    assert message.endswith(out.stdout.decode())
    assert isinstance(e.value, AssertionError) and e.value.report.exit_code == 1


def test_only_the_failing_inputs_are_printed():
    with pytest.raises(CitationsDoNotHold) as e:
        assert_citations_hold([CONSIDERED, DISCREPANT])
    assert DISCREPANT in str(e.value) and CONSIDERED not in str(e.value)


def test_fail_on_is_the_command_lines():
    assert_citations_hold(DISCREPANT, fail_on="unverifiable")  # passes: nothing UNVERIFIABLE
    with pytest.raises(CitationsDoNotHold) as e:
        assert_citations_hold(CONSIDERED, fail_on=["reproduced"])
    assert "1 reproduced" in str(e.value)
    with pytest.raises(recite.UsageError):
        assert_citations_hold(CONSIDERED, fail_on="wrongly")


def test_answer_statuses_fail_the_gate_when_asked():
    transcript = "tests/fixtures/frameworks/langgraph/misquote.sse"
    assert_citations_hold(transcript)  # its claim reproduces: nothing the default fails on
    with pytest.raises(CitationsDoNotHold) as e:
        assert_citations_hold(transcript, fail_on="misquoted")
    assert "1 misquoted" in str(e.value) and "MISQUOTED" in str(e.value)


def test_nothing_to_check_fails_unless_allowed():
    empty = {"result": {"brand": "Versant"}}  # nothing to check: no number, no citation
    with pytest.raises(CitationsDoNotHold) as e:
        assert_citations_hold(empty)
    assert "nothing was checked" in str(e.value)
    assert assert_citations_hold(empty, allow_empty=True).checked_nothing


def test_the_fixture_is_a_pytest_plugin_reading_its_ini_options(pytester):
    discrepant = json.loads((REPO / DISCREPANT).read_text())
    considered = json.loads((REPO / CONSIDERED).read_text())
    pytester.makeini("[pytest]\nrecite_fail_on = discrepant\n")
    pytester.makepyfile(
        f"""
        def test_good(citations_hold):
            citations_hold({considered!r})

        def test_bad(citations_hold):
            citations_hold({discrepant!r})
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*citations do not hold: 1 discrepant (fail_on: discrepant)*", "*Considered 47% → 44.2%*"])
