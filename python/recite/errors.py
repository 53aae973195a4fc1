"""The exceptions recite raises, each saying where the problem is.

Every one is a :class:`ReciteError`, with ``location`` (the file, folder, table or argument at
fault, or ``None``) and ``suggestions`` (the declared names nearest to an unknown one, best
first). A claim the data does not support is *not* an exception: it is a verdict
(``DISCREPANT``, ``UNVERIFIABLE``, ``INVALID``…) in the :class:`~recite.Settlement` or
:class:`~recite.Report`, as in ``recite``'s reports.
"""

from __future__ import annotations

from typing import Optional, Sequence

__all__ = [
    "ReciteError",
    "CitationError",
    "DataLayerError",
    "ExtractorError",
    "InputError",
    "EngineError",
    "UsageError",
    "ReciteWarning",
]


class ReciteError(Exception):
    """Something recite could not do at all (not a verdict on a claim)."""

    def __init__(
        self,
        message: str,
        *,
        location: Optional[str] = None,
        suggestions: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        self.suggestions = list(suggestions)

    def __str__(self) -> str:
        text = self.message
        if self.location and self.location not in text:
            text = f"{self.location}: {text}"
        if self.suggestions:
            text += " (did you mean " + ", ".join(repr(s) for s in self.suggestions) + "?)"
        return text


class CitationError(ReciteError, ValueError):
    """A citation, tool result or claimed number that cannot be read at all: a missing file, a
    result that is not JSON, a claim like ``"Considered=lots"``. (A citation that is read but
    breaks the spec settles INVALID instead.)"""


class DataLayerError(ReciteError):
    """The data layer (a folder of studies) cannot be read, or names no such table."""


class ExtractorError(ReciteError):
    """An extractor declaration (``extractors=``) cannot be read."""


class InputError(ReciteError, FileNotFoundError):
    """An input of :func:`recite.check` does not exist: no such file or folder, a glob that
    matches nothing, a folder holding no transcript."""


class EngineError(ReciteError, RuntimeError):
    """The engine failed internally: no outcome of the run can be trusted."""


class UsageError(ReciteError, ValueError):
    """An argument recite does not understand (an unknown ``fail_on`` item, interval…)."""


class ReciteWarning(UserWarning):
    """Worth knowing, changes no verdict: e.g. a ``./datasets`` folder in the working directory
    hides the bundled data layer."""
