"""Arrow tables from the compiled core, as polars frames.

The core hands over objects with ``__arrow_c_stream__`` (the Arrow PyCapsule interface): polars
takes them without copying row by row, and so would pyarrow (``pa.table(t)``) or pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl


def to_polars(table: Any) -> pl.DataFrame:
    """A polars frame of an Arrow C stream (the same columns, types and nulls)."""
    # Imported here, not at the top: polars takes ~0.2 s to import, which a check that never
    # asks for a frame (a pytest gate, a report written to a file) should not pay.
    import polars as pl

    return pl.DataFrame(table)
