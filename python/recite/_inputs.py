"""What recite accepts as a citation, a tool result or a transcript, turned into what the
compiled core reads: a path, or a document's bytes.

- a :class:`os.PathLike` is a path, and so is a ``str`` unless it holds a document itself
  (it starts with ``{`` or ``[``, or spans lines: JSON, JSON lines, an SSE stream);
- ``bytes`` are a document;
- a ``dict`` or ``list`` is a JSON document;
- an SDK's own object is serialised as it goes on the wire: a pydantic model (the A2A and AG-UI
  Python SDKs) with its aliases (``model_dump_json(by_alias=True)``), a protobuf message with
  ``json_format``; anything else with ``model_dump``, ``to_dict`` or ``dict``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, List, Mapping, Optional, Tuple, Union

# A path (None) or a document (its bytes), with the name reports give it.
Given = Tuple[str, Optional[bytes]]


def is_document_text(text: str) -> bool:
    """Whether a string holds a document rather than naming a file."""
    stripped = text.lstrip()
    return stripped.startswith(("{", "[")) or "\n" in stripped


def to_bytes(obj: Any) -> Optional[bytes]:
    """The document an object holds, as bytes; ``None`` when it names a file."""
    if isinstance(obj, os.PathLike):
        return None
    if isinstance(obj, str):
        return obj.encode("utf-8") if is_document_text(obj) else None
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return bytes(obj)
    if isinstance(obj, (Mapping, list, tuple)):
        return json.dumps(obj, ensure_ascii=False, default=_plain).encode("utf-8")
    if hasattr(obj, "model_dump_json"):  # pydantic v2: the A2A and AG-UI SDKs
        return obj.model_dump_json(by_alias=True, exclude_none=True).encode("utf-8")
    if hasattr(obj, "SerializeToString") and hasattr(obj, "DESCRIPTOR"):  # protobuf
        from google.protobuf import json_format

        return json_format.MessageToJson(obj).encode("utf-8")
    plain = _plain(obj)
    return json.dumps(plain, ensure_ascii=False, default=_plain).encode("utf-8")


def _plain(obj: Any) -> Any:
    """A JSON-ready form of an object json cannot write itself."""
    for method in ("model_dump", "to_dict", "dict"):
        f = getattr(obj, method, None)
        if callable(f):
            try:
                return f(by_alias=True, mode="json", exclude_none=True) if method == "model_dump" else f()
            except TypeError:
                return f()
    raise TypeError(
        f"recite cannot read a {type(obj).__name__}: pass a path, bytes, JSON text, a dict, "
        "or an object with model_dump_json, to_dict or dict"
    )


def given(obj: Any, name: str) -> Given:
    """One input: its name in reports (the path itself for a file) and its bytes."""
    data = to_bytes(obj)
    if data is None:
        return (os.fspath(obj), None)
    return (name, data)


def many(inputs: Union[Any, Iterable[Any]]) -> List[Given]:
    """The inputs of a check: one input, or a list (tuple, generator) of them. A list of
    inputs is never read as one JSON array: pass an array document as text or bytes, or as
    ``[events]`` (one input, itself a list)."""
    if isinstance(inputs, (str, bytes, bytearray, memoryview, os.PathLike, Mapping)) or not _iterable(inputs):
        items = [inputs]
    else:
        items = list(inputs)
    return [given(obj, f"<input {n}>") for n, obj in enumerate(items, start=1)]


def _iterable(obj: Any) -> bool:
    if hasattr(obj, "model_dump_json") or hasattr(obj, "DESCRIPTOR"):
        return False
    try:
        iter(obj)
    except TypeError:
        return False
    return True


def claims(value: Any) -> Optional[List[str]]:
    """Claimed numbers as ``recite verify --claim`` takes them: ``{"Considered": "44%"}`` or
    ``{"Considered": 0.44}``, a list of ``"[MEASURE=]VALUE"`` strings or numbers, or one."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        return [f"{k}={_number_text(v)}" for k, v in value.items()]
    if isinstance(value, (str, int, float)):
        return [_number_text(value)]
    return [_number_text(v) for v in value]


def _number_text(v: Any) -> str:
    """A number as written: a float keeps the digits Python shows (0.44, not 0.4400000001)."""
    if isinstance(v, bool):
        raise TypeError("a claimed number cannot be a bool")
    if isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        return repr(v)
    return repr(float(v))  # numpy and other number types: their float's digits
