"""A pytest gate for agents' transcripts: every cited number re-run, the test failing the way
``recite check`` fails a CI job.

In a test::

    from recite.testing import assert_citations_hold

    def test_funnel_agent_cites_truthfully(tmp_path):
        transcript = run_my_agent(tmp_path)           # a path, text, dict or SDK object
        assert_citations_hold(transcript)              # fails on what `recite check` fails on
        assert_citations_hold(transcript, fail_on="discrepant,misquoted,uncited")

or with the fixture the installed package adds to pytest (``citations_hold``), whose defaults
come from the ``recite_fail_on`` and ``recite_data`` ini options::

    def test_agent(citations_hold):
        citations_hold("runs/latest.sse")

A failure is an :class:`CitationsDoNotHold` (an ``AssertionError``) whose message is what failed,
counted, then ``recite check``'s text report of each input that failed: every claim not
reproduced with claimed vs recomputed and the likely cause, every answer number with its
sentence and status, every finding.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, Union

from . import _recite
from ._check import FailOn, Report, check, fail_on_text
from ._layer import PathArg

__all__ = ["CitationsDoNotHold", "assert_citations_hold"]


class CitationsDoNotHold(AssertionError):
    """Raised by :func:`assert_citations_hold`; ``report`` is the whole :class:`~recite.Report`."""

    def __init__(self, message: str, report: Report) -> None:
        super().__init__(message)
        self.report = report


def _fold(item: str) -> str:
    return item.strip().lower().replace("_", "-")


def failed_counts(report: Report, fail_on: FailOn = None) -> Dict[str, int]:
    """How many of each ``fail_on`` item the report holds (items with none left out)."""
    items = [_fold(i) for i in (fail_on_text(fail_on) or _recite.DEFAULT_FAIL_ON).split(",") if i.strip()]
    summary = report.summary
    verdicts = {_fold(k): v for k, v in summary["verdicts"].items()}
    statuses = {_fold(k): v for k, v in summary.get("answer_numbers", {}).items()}
    levels: Dict[str, int] = {}
    for level in report.findings["level"].to_list():
        levels[_fold(level)] = levels.get(_fold(level), 0) + 1
    counts = {}
    for item in items:
        n = verdicts.get(item) or statuses.get(item) or levels.get(item) or 0
        if n:
            counts[item] = n
    return counts


def assert_citations_hold(
    transcript: Union[Any, Iterable[Any]],
    *,
    fail_on: FailOn = None,
    allow_empty: bool = False,
    data: PathArg = None,
    **options: Any,
) -> Report:
    """Checks ``transcript`` (one input or a list: paths, text, dicts, SDK objects, as
    :func:`recite.check` takes them) and fails unless ``recite check --fail-on FAIL_ON`` would
    pass: by default on any claim INVALID, UNVERIFIABLE, DISCREPANT or BASE_MISMATCH and any
    MUST finding. ``fail_on`` takes verdicts, finding levels and answer statuses
    (``"discrepant,misquoted,uncited"`` or a list; ``recite.fail_on_items()`` lists them).
    A transcript with nothing to check fails too, as ``recite check`` exits 5, unless
    ``allow_empty``. Other keyword arguments go to :func:`recite.check`. Returns the report.
    """
    report = check(transcript, data=data, **options)
    code = report.exit_code_for(fail_on, allow_empty=allow_empty)
    if code == 0:
        return report
    if code == 5:
        raise CitationsDoNotHold(
            "recite: nothing was checked (no claim, no moca.citations event, no answer number); "
            "allow_empty=True allows it",
            report,
        )
    counts = failed_counts(report, fail_on)
    what = ", ".join(f"{n} {item}" for item, n in counts.items())
    rule = fail_on_text(fail_on) or _recite.DEFAULT_FAIL_ON
    message = f"recite: citations do not hold: {what} (fail_on: {rule})\n\n{report.to_text(rule)}"
    raise CitationsDoNotHold(message, report)


try:  # the pytest plugin, where pytest is installed (the package registers it: pytest11)
    import pytest
except ImportError:  # pragma: no cover - recite.testing without pytest
    pytest = None  # type: ignore[assignment]

if pytest is not None:

    def pytest_addoption(parser: Any) -> None:
        parser.addini("recite_fail_on", "what citations_hold fails on (as recite check --fail-on)", default=None)
        parser.addini("recite_data", "the data layer citations_hold re-runs against (as --data)", default=None)

    @pytest.fixture
    def citations_hold(request: Any) -> Callable[..., Report]:
        """``assert_citations_hold``, with ``fail_on`` and ``data`` defaulting to the
        ``recite_fail_on`` and ``recite_data`` ini options."""
        ini_fail_on = request.config.getini("recite_fail_on") or None
        ini_data = request.config.getini("recite_data") or None

        def hold(transcript: Any, **kwargs: Any) -> Report:
            kwargs.setdefault("fail_on", ini_fail_on)
            kwargs.setdefault("data", ini_data)
            return assert_citations_hold(transcript, **kwargs)

        return hold
