"""``recite.verify``: one citation re-run and settled, as ``recite verify`` settles it."""

from __future__ import annotations

import json
import os
from functools import cached_property
from typing import TYPE_CHECKING, Any, Dict, List, Optional

if TYPE_CHECKING:
    import polars as pl

from . import _recite
from ._frames import to_polars
from ._html import framed
from ._inputs import claims as claims_arg, to_bytes
from ._layer import PathArg, path_arg, warn_shadowing
from .errors import CitationError


class Settlement:
    """One citation, settled: the verdict, every measure and the base recomputed, why, and
    what the agent most likely computed instead.

    ``to_dict()`` is the report ``recite verify --format json`` writes; ``measures`` is a polars
    frame of its claim's measures; in a notebook the settlement shows as recite's HTML report.
    """

    def __init__(self, native: Any) -> None:
        self._native = native

    @property
    def verdict(self) -> str:
        """``REPRODUCED``, ``DISCREPANT``, ``BASE_MISMATCH``, ``UNVERIFIABLE`` or ``INVALID``."""
        return self._native.verdict

    @property
    def reasons(self) -> List[str]:
        """Why, in words, most important first."""
        return list(self._native.reasons)

    @cached_property
    def claim(self) -> Dict[str, Any]:
        """The settled claim as the JSON report writes it (``inputs[0].claims[0]`` of
        :meth:`to_dict`, without its locator)."""
        return json.loads(self._native.claim_json())

    @property
    def rerun(self) -> Optional[Dict[str, Any]]:
        """What was re-run, in the catalog's words: study, period and its filter, table,
        column, function, weight, design, base and its filter. ``None`` when nothing could be."""
        return self.claim.get("rerun")

    @property
    def base(self) -> Optional[Dict[str, Any]]:
        """The base: its name, ``claimed_n``, the recomputed ``n``, ``weighted`` (Σw) and
        ``effective`` base, and whether n ``matched``. ``None`` when nothing was re-run."""
        return self.claim.get("base")

    @property
    def explanation(self) -> Optional[str]:
        """For a claim not reproduced, what the agent most likely computed instead (the best
        of :attr:`explanations`), e.g. "47% (Considered) is what extractFunnel gives on W5…"."""
        found = self.explanations
        return found[0]["message"] if found else None

    @property
    def explanations(self) -> List[Dict[str, Any]]:
        """Every nearby computation that reproduces the claim, best first: ``cause``,
        ``message``, ``reproduces_base`` and the ``alternative`` to re-run."""
        return list(self.claim.get("explanations", []))

    @cached_property
    def measures(self) -> pl.DataFrame:
        """One row per measure of the extractor and number claimed about it (a measure no
        number claims has one row, its ``claimed…`` columns null): the recomputed value with
        its SE, 95% interval, degrees of freedom and design effect; the claim as written, its
        value, the recomputed value in the claim's units, the tolerance its shown precision
        allows, the difference, z, the gap's class and whether it ``matched``."""
        return to_polars(self._native.measures_table())

    @cached_property
    def series(self) -> pl.DataFrame:
        """Each claimed measure across the periods of its study, one row per period (value,
        interval, base n; ``cited`` marks the claim's period). Empty unless settled with
        ``series=True``."""
        return to_polars(self._native.series_table())

    def to_dict(self) -> Dict[str, Any]:
        """The report ``recite verify --format json`` writes (docs/report.schema.json)."""
        return json.loads(self._native.json())

    def to_json(self) -> str:
        """That report as its JSON text, byte for byte."""
        return self._native.json()

    def to_text(self) -> str:
        """What ``recite verify`` prints."""
        return self._native.text()

    def to_html(self, path: PathArg = None) -> str:
        """recite's HTML report of this claim; written to ``path`` when given."""
        page = self._native.html()
        if path is not None:
            with open(path_arg(path), "w", encoding="utf-8") as f:  # type: ignore[arg-type]
                f.write(page)
        return page

    def _repr_html_(self) -> str:
        return framed(self._native.html(), height=520)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        reason = self.reasons[0] if self.reasons else ""
        return f"<recite.Settlement {self.verdict}: {reason}>"


def verify(
    citation: Any,
    *,
    result: Any = None,
    claims: Any = None,
    data: PathArg = None,
    extractors: PathArg = None,
    interval: str = "logit",
    df: str = "domain",
    explain: bool = True,
    series: bool = False,
    decimal_mark: str = "dot",
) -> Settlement:
    """Re-runs one citation on the data and settles it, as ``recite verify`` does.

    ``citation`` is a citation file's path, its JSON text or bytes, or the citation as a dict;
    a ``{"citation": …, "result": …}`` pair is read as ``recite check`` reads one. The claimed
    numbers are ``claims`` (``{"Considered": "44%"}``, ``["0.44"]``: each keeps its shown
    precision), else the numeric leaves of ``result`` (a tool result: dict, JSON text or a
    path), else those of the result paired with the citation.

    ``data`` is the data layer's folder (default: as :class:`Catalog`), ``extractors`` a folder
    of extra extractor declarations. ``interval`` (``logit``, ``wilson``, ``korn-graubard``),
    ``df`` (``domain``, ``full-design``), ``explain=False`` (skip looking for what a claim not
    reproduced computed instead), ``series=True`` (each claimed measure on every period:
    :attr:`Settlement.series`) and ``decimal_mark`` (``dot``, ``comma``) are the command line's
    ``--interval``, ``--df``, ``--no-explain``, ``--series`` and ``--decimal-mark``.

    The engine runs with the GIL released; Ctrl-C interrupts the wait.

    >>> s = recite.verify("examples/citations/versant-w6-discrepant.json")
    >>> s.verdict, s.explanation
    ('DISCREPANT', '47% (Considered) is what extractFunnel gives on W5 (March 2026), …')
    """
    doc = to_bytes(citation)
    name = os.fspath(citation) if doc is None else "<citation>"
    result_doc: Optional[bytes] = None
    result_name = "result"
    if result is not None:
        result_doc = to_bytes(result)
        if result_doc is None:
            result_name = os.fspath(result)
            try:
                with open(result_name, "rb") as f:
                    result_doc = f.read()
            except OSError as e:
                raise CitationError(f"cannot read {result_name}: {e.strerror}", location=result_name) from e
    native = _recite.verify(
        name,
        doc,
        None if doc is not None else name,
        result=result_doc,
        result_name=result_name,
        claims=claims_arg(claims),
        data=path_arg(data),
        extractors=path_arg(extractors),
        interval=interval,
        df=df,
        explain=explain,
        series=series,
        decimal_mark=decimal_mark,
    )
    settlement = Settlement(native)
    warn_shadowing(json.loads(native.data_layer_json()))
    return settlement
