"""recite.Catalog: the data layer as frames."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import recite

from .conftest import REPO


def test_the_bundled_catalog_is_the_clones_datasets_and_holds_both_studies():
    cat = recite.Catalog()
    assert Path(cat.path) == Path(recite.BUNDLED_DATA) == REPO / "datasets"
    assert cat.source == "bundled"
    assert set(cat.studies["study"]) == {"Versant Mega Tracker", "NHANES II"}


def test_studies_frame_counts_what_each_study_declares():
    studies = recite.Catalog().studies
    assert studies.schema["study"] == pl.String
    assert studies.schema["tables"] == pl.Int64
    assert studies.schema["aliases"] == pl.List(pl.String)
    versant = studies.filter(pl.col("study") == "Versant Mega Tracker").row(0, named=True)
    assert versant["tables"] >= 1 and versant["periods"] >= 6 and versant["bases"] >= 1
    assert versant["file"].endswith("study.toml")


def test_tables_frame_resolves_each_table_to_a_file_that_exists():
    tables = recite.Catalog().tables
    flat = tables.filter(pl.col("table") == "versant_flat").row(0, named=True)
    assert flat["weights"] and "main_weight" in flat["weights"]
    assert Path(flat["location"]).exists()
    # NHANES II declares its design: strata and PSUs.
    nhanes = tables.filter(pl.col("strata").is_not_null())
    assert nhanes.height >= 1 and nhanes["psu"].null_count() == 0


def test_periods_frame_holds_the_waves_with_their_filters():
    periods = recite.Catalog().periods.filter(pl.col("study") == "Versant Mega Tracker")
    w6 = periods.filter(pl.col("period") == "W6 (April 2026)").row(0, named=True)
    assert w6["filter"] == "wave = 6"
    assert w6["fielded"] == "2026-04-02/2026-04-19"


def test_columns_frame_gives_labels_and_coded_values():
    cols = recite.Catalog().columns("versant_flat")
    s14r5 = cols.filter(pl.col("column") == "s14r5").row(0, named=True)
    assert s14r5["label"] == "Brand funnel: Versant"
    assert s14r5["table"] == "versant_flat"
    assert all("=" in v for v in s14r5["values"])


def test_an_unknown_table_is_a_data_layer_error_naming_the_nearest():
    with pytest.raises(recite.DataLayerError) as e:
        recite.Catalog().columns("versant_flt")
    assert e.value.location == "versant_flt"
    assert "versant_flat" in e.value.suggestions
    assert "did you mean" in str(e.value)


def test_a_path_is_the_data_flag(spss_layer):
    cat = recite.Catalog(spss_layer)
    assert cat.source == "--data"
    assert cat.path == str(spss_layer)
    assert "labelled_bytecode" in set(cat.tables["table"])
    assert cat.problems.is_empty()


def test_a_file_as_data_layer_is_a_data_layer_error(tmp_path):
    f = tmp_path / "not-a-folder"
    f.write_text("x")
    with pytest.raises(recite.DataLayerError) as e:
        recite.Catalog(f)
    assert e.value.location == str(f)
    assert "is a file, not a folder" in str(e.value)


def test_a_broken_study_file_is_a_problem_row_not_an_error(tmp_path):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "study.toml").write_text("[study\nname = ")
    cat = recite.Catalog(tmp_path)
    assert cat.studies.is_empty()
    problem = cat.problems.row(0, named=True)
    assert problem["file"].endswith("study.toml") and problem["error"]
