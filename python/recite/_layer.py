"""The data layer a call reads, and what the core says of it."""

from __future__ import annotations

import os
import warnings
from typing import Any, Mapping, Optional, Union

from .errors import ReciteWarning

PathArg = Union[str, "os.PathLike[str]", None]


def path_arg(path: PathArg) -> Optional[str]:
    """A folder argument as the core takes it."""
    return None if path is None else os.fspath(path)


def warn_shadowing(data_layer: Optional[Mapping[str, Any]]) -> None:
    """Says, as the command line does on stderr, when the data layer hides another."""
    if data_layer and data_layer.get("warning"):
        warnings.warn(data_layer["warning"], ReciteWarning, stacklevel=3)
