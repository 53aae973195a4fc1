"""recite re-executes the citations AI agents attach to numbers, and settles disputes about them.

An agent that says "44% of aware adults considered Versant in W6" attaches a citation naming the
study, period, base, weight and the function that computed it. recite looks every name up in a
declared data layer, re-runs the function over the data with its weights, and settles the claim:
REPRODUCED, DISCREPANT, BASE_MISMATCH, UNVERIFIABLE or INVALID, with each measure's standard
error and interval, and what the agent most likely computed instead.

>>> import recite
>>> s = recite.verify("examples/citations/versant-w6-considered.json")
>>> s.verdict
'REPRODUCED'
>>> s.measures                      # a polars frame: claimed vs recomputed, SE, CI, deff
>>> r = recite.check("examples/transcripts/")
>>> r.claims, r.answers             # one row per claim, per number of the agents' answers
>>> r.exit_code                     # as `recite check`

- :func:`verify`: one citation → :class:`Settlement`;
- :func:`check`: transcripts (A2A, AG-UI, JSON lines…) → :class:`Report`;
- :class:`Catalog`: the data layer as frames;
- :mod:`recite.testing`: ``assert_citations_hold`` and a pytest fixture, for agents' test suites;
- :mod:`recite.errors`: what is raised when recite cannot do something at all.

The compiled core is recite's own (recite-core and recite-engine, DataFusion); frames cross as
Arrow and become polars here. docs/python.md has the whole API.
"""

from __future__ import annotations

from . import errors
from ._catalog import Catalog
from ._check import Report, check
from ._recite import BUNDLED_DATA, DEFAULT_FAIL_ON, __version__, fail_on_items
from ._verify import Settlement, verify
from .errors import (
    CitationError,
    DataLayerError,
    EngineError,
    ExtractorError,
    InputError,
    ReciteError,
    ReciteWarning,
    UsageError,
)

__all__ = [
    "BUNDLED_DATA",
    "DEFAULT_FAIL_ON",
    "Catalog",
    "CitationError",
    "DataLayerError",
    "EngineError",
    "ExtractorError",
    "InputError",
    "ReciteError",
    "ReciteWarning",
    "Report",
    "Settlement",
    "UsageError",
    "__version__",
    "check",
    "errors",
    "fail_on_items",
    "verify",
]
