"""``recite.check``: every cited number of transcripts re-run in one pass over the data, as
``recite check`` runs it."""

from __future__ import annotations

import json
from functools import cached_property
from typing import TYPE_CHECKING, Any, Dict, Iterable, Optional, Sequence, Union

if TYPE_CHECKING:
    import polars as pl

from . import _recite
from ._frames import to_polars
from ._html import framed
from ._inputs import many
from ._layer import PathArg, path_arg, warn_shadowing

FailOn = Union[str, Sequence[str], None]


def fail_on_text(fail_on: FailOn) -> Optional[str]:
    """``fail_on`` as ``--fail-on`` spells it: ``"discrepant,uncited"`` or a list of items."""
    if fail_on is None or isinstance(fail_on, str):
        return fail_on
    return ",".join(fail_on)


class Report:
    """A checked batch: every claim, answer number and finding of the inputs, as ``recite
    check`` reports them.

    Frames: :attr:`claims` (one row per claim), :attr:`answers` (one per number stated in an
    agent's answer), :attr:`findings`, :attr:`inputs`. ``to_dict()`` is ``recite check
    --format json``; :meth:`to_html` and :meth:`to_junit` write the HTML and JUnit reports;
    :attr:`exit_code` is the command line's exit status.
    """

    def __init__(self, native: Any) -> None:
        self._native = native

    @cached_property
    def claims(self) -> pl.DataFrame:
        """One row per claim, in input and document order: where it was found (``input``,
        ``file``, ``format``, ``line``, ids, ``pointer``), the ``verdict`` and ``reasons``, what
        was re-run (``study``, ``period``, ``table``, ``column``, ``function``, ``weight``,
        ``base``), base n claimed and recomputed, the headline number (the first not
        reproduced, else the first: ``measure``, ``claimed``, ``recomputed``…) and the best
        ``explanation``."""
        return to_polars(self._native.claims_table())

    @cached_property
    def answers(self) -> pl.DataFrame:
        """One row per number stated in an agent's answer: the answer (``turn``, ``role``,
        ``message_id``), the number as written with its byte offsets in the answer's text, its
        ``status`` (TRACED, MISQUOTED, UNCITED…), the claim it was traced to, ``why``, and the
        ``sentence`` holding it."""
        return to_polars(self._native.answers_table())

    @cached_property
    def findings(self) -> pl.DataFrame:
        """One row per finding (conformance, stream and MOCA rules, unreadable inputs):
        ``level`` (MUST, SHOULD, NOTE), ``rule``, ``message`` and where."""
        return to_polars(self._native.findings_table())

    @cached_property
    def inputs(self) -> pl.DataFrame:
        """One row per input: its name, detected format, claims, and what it held and how much
        was checked (results, citations, numbers, compared)."""
        return to_polars(self._native.inputs_table())

    @cached_property
    def summary(self) -> Dict[str, Any]:
        """Counts: claims, claims per verdict, findings, unreadable inputs, answer numbers per
        status, and the coverage over all inputs."""
        return json.loads(self._native.summary_json())

    @property
    def exit_code(self) -> int:
        """``recite check``'s exit status with its default ``--fail-on``: 1 when a claim is
        INVALID, UNVERIFIABLE, DISCREPANT or BASE_MISMATCH or a finding is MUST, 5 when nothing
        at all was checked, else 0."""
        return self._native.exit_code()

    def exit_code_for(self, fail_on: FailOn = None, *, allow_empty: bool = False) -> int:
        """The exit status ``recite check --fail-on FAIL_ON [--allow-empty]`` would give."""
        return self._native.exit_code(fail_on_text(fail_on), allow_empty)

    def fails(self, fail_on: FailOn = None) -> bool:
        """Whether anything counts toward ``fail_on`` (default: the command line's)."""
        return self._native.fails(fail_on_text(fail_on))

    @property
    def checked_nothing(self) -> bool:
        """True when no input held a claim, a ``moca.citations`` event or an answer number."""
        return self._native.checked_nothing()

    def to_dict(self) -> Dict[str, Any]:
        """The report ``recite check --format json`` writes (docs/report.schema.json)."""
        return json.loads(self._native.json())

    def to_json(self) -> str:
        """That report as its JSON text, byte for byte."""
        return self._native.json()

    def to_text(self, fail_on: FailOn = None) -> str:
        """The text ``recite check`` prints; with ``fail_on``, only the inputs that hold
        something it fails on."""
        return self._native.text(fail_on_text(fail_on))

    def to_html(self, path: PathArg = None) -> str:
        """The HTML report (``recite check --format html``), written to ``path`` when given.
        Its charts need each claimed measure on every period: unless checked with
        ``series=True``, the batch is run once more for them."""
        page = self._native.html()
        if path is not None:
            with open(path_arg(path), "w", encoding="utf-8") as f:  # type: ignore[arg-type]
                f.write(page)
        return page

    def to_junit(self, path: PathArg = None) -> str:
        """The JUnit XML report (``recite check --format junit``), written to ``path`` when
        given: one testcase per claim, for CI systems."""
        xml = self._native.junit()
        if path is not None:
            with open(path_arg(path), "w", encoding="utf-8") as f:  # type: ignore[arg-type]
                f.write(xml)
        return xml

    def _repr_html_(self) -> str:
        return framed(self._native.html())

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        s = self.summary
        verdicts = ", ".join(f"{n} {v}" for v, n in s["verdicts"].items() if n)
        return f"<recite.Report {s['claims']} claims ({verdicts or 'none'}); {s['findings']} findings>"


def check(
    inputs: Union[Any, Iterable[Any]],
    *,
    data: PathArg = None,
    extractors: PathArg = None,
    interval: str = "logit",
    df: str = "domain",
    explain: bool = True,
    series: bool = False,
    decimal_mark: str = "dot",
    max_input_size: int = 256 << 20,
) -> Report:
    """Checks every cited number in transcripts, as ``recite check`` does: every claim on one
    table computed in one scan of it, and every number of the agents' answers traced.

    ``inputs`` is one input or a list of them: paths (files, folders read recursively, globs),
    a transcript's text or bytes, a dict (one JSON document), or an A2A/AG-UI SDK object
    (serialised as on the wire). A list is always a list of inputs. Files stream: a JSON-lines
    file of a million claims is never loaded into Python.

    The options are :func:`verify`'s, and ``max_input_size`` is ``--max-input-size`` (bytes).
    The engine runs with the GIL released; Ctrl-C interrupts the wait.

    >>> r = recite.check("examples/transcripts/")
    >>> r.claims.group_by("verdict").len()
    >>> r.exit_code
    1
    """
    native = _recite.check(
        many(inputs),
        data=path_arg(data),
        extractors=path_arg(extractors),
        interval=interval,
        df=df,
        explain=explain,
        series=series,
        decimal_mark=decimal_mark,
        max_input_size=max_input_size,
    )
    report = Report(native)
    # The data layer alone: rendering and parsing a 10k-claim report to read it cost more than
    # the batch's own settling (benches/python.py).
    warn_shadowing(json.loads(native.data_layer_json()))
    return report
