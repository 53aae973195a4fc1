"""``recite.Catalog``: the data layer, as frames."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    import polars as pl

from . import _recite
from ._frames import to_polars
from ._layer import PathArg, path_arg


class Catalog:
    """The data layer citations are re-run against: a folder of studies, one ``study.toml``
    each, read as ``recite`` reads it (SPSS dictionaries adopted).

    ``Catalog()`` is the layer ``recite`` would use from here: ``$RECITE_DATA``, else
    ``./datasets`` in the working directory, else the datasets bundled with this build.
    ``Catalog("mydata")`` is ``recite --data mydata``.

    >>> cat = recite.Catalog()
    >>> cat.studies.select("study", "tables", "periods")
    >>> cat.columns("versant_flat").filter(pl.col("column") == "s14r5")
    """

    def __init__(self, path: PathArg = None) -> None:
        self._native = _recite.Catalog(path_arg(path))

    @property
    def path(self) -> str:
        """The folder of studies."""
        return self._native.path

    @property
    def source(self) -> str:
        """How the folder was chosen: ``--data`` (a path was given), ``RECITE_DATA``,
        ``./datasets in the working directory`` or ``bundled``."""
        return self._native.source

    @property
    def warning(self) -> Optional[str]:
        """Set when this data layer hides another (a working-directory ``./datasets``)."""
        return self._native.warning

    @property
    def studies(self) -> pl.DataFrame:
        """One row per study: its name, aliases, description, how many tables, periods and
        bases it declares, its low-base threshold and its ``study.toml``."""
        return to_polars(self._native.studies_table())

    @property
    def tables(self) -> pl.DataFrame:
        """One row per table: its study, name, declared path and resolved location, weights,
        design (strata, PSU), replicate method and number of declared columns."""
        return to_polars(self._native.tables_table())

    @property
    def periods(self) -> pl.DataFrame:
        """One row per period (wave) of every study: name, aliases, SQL filter, when fielded."""
        return to_polars(self._native.periods_table())

    @property
    def bases(self) -> pl.DataFrame:
        """One row per base of every study: name, aliases, SQL filter."""
        return to_polars(self._native.bases_table())

    @property
    def problems(self) -> pl.DataFrame:
        """One row per study file that could not be read (its studies are left out)."""
        return to_polars(self._native.problems_table())

    def columns(self, table: str) -> pl.DataFrame:
        """One row per declared column of ``table``: label, question, coded values
        (``"1=Aware"``), missing codes, scale. An unknown table raises
        :class:`~recite.DataLayerError` with the nearest declared names."""
        return to_polars(self._native.columns_table(table))

    def __repr__(self) -> str:
        return f"<recite.Catalog {self.path} ({self.source}): {self.studies.height} studies>"
