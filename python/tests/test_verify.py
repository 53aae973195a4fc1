"""recite.verify: one citation settled as `recite verify` settles it."""

from __future__ import annotations

import html
import json

import polars as pl
import pytest

import recite

from .conftest import DATA, REPO, citation_files

CONSIDERED = "examples/citations/versant-w6-considered.json"
DISCREPANT = "examples/citations/versant-w6-discrepant.json"


def pair(path: str) -> dict:
    return json.loads((REPO / path).read_text())


@pytest.mark.parametrize("path", citation_files())
def test_to_dict_is_the_clis_json_report(cli, path):
    assert recite.verify(path, data=DATA).to_dict() == cli.json("verify", path, "--data", DATA)


def test_to_dict_is_the_clis_json_report_over_the_spss_example(cli, spss_layer):
    path = "examples/spss/labelled-sat-w2.json"
    mine = recite.verify(path, data=spss_layer)
    assert mine.verdict == "REPRODUCED"
    assert mine.to_dict() == cli.json("verify", path, "--data", str(spss_layer))


def test_to_json_is_the_clis_bytes(cli):
    out = cli.run("verify", DISCREPANT, "--format", "json", "--data", DATA)
    assert recite.verify(DISCREPANT, data=DATA).to_json().encode() == out.stdout


def test_to_text_is_what_recite_verify_prints(cli):
    out = cli.run("verify", DISCREPANT, "--color", "never", "--data", DATA)
    assert recite.verify(DISCREPANT, data=DATA).to_text().encode() == out.stdout


def test_the_w6_claim_reproduces_on_the_bundled_data():
    s = recite.verify(CONSIDERED)
    assert s.to_dict()["data_layer"] == {"path": recite.BUNDLED_DATA, "source": "bundled"}
    assert s.verdict == "REPRODUCED"
    assert s.reasons == ["1 claimed number and base n reproduced"]
    assert s.explanation is None and s.explanations == []


def test_the_disputed_w6_claim_is_discrepant_and_explained_by_w5():
    s = recite.verify(DISCREPANT)
    assert s.verdict == "DISCREPANT"
    assert "W5" in s.explanation
    assert s.explanations[0]["alternative"] == "period:W5 (March 2026)"
    assert s.rerun["period"] == "W6 (April 2026)" and s.rerun["table"] == "versant_flat"


def test_base_is_claimed_and_recomputed_n():
    base = recite.verify(CONSIDERED).base
    assert base["claimed_n"] == 4654 and base["n"] == 4654 and base["matched"] is True
    assert base["effective"] < base["n"] + 1000  # an effective base, not a sum of weights


def test_measures_frame_types():
    m = recite.verify(CONSIDERED).measures
    assert m.schema["measure"] == pl.String
    for c in ("recomputed", "se", "ci_low", "ci_high", "df", "deff", "tolerance", "difference", "z"):
        assert m.schema[c] == pl.Float64, c
    assert m.schema["matched"] == pl.Boolean
    assert m.schema["percent"] == pl.Boolean


def test_measures_frame_is_the_reports_measures_row_for_row():
    s = recite.verify(DISCREPANT)
    measures = s.to_dict()["inputs"][0]["claims"][0]["measures"]
    m = s.measures
    assert m["measure"].to_list() == [x["name"] for x in measures]  # one claim at most per measure here
    for row, x in zip(m.iter_rows(named=True), measures):
        est = x.get("estimate") or {}
        assert row["recomputed"] == est.get("value")
        assert row["se"] == est.get("se")
        assert row["ci_low"] == est.get("ci_low") and row["ci_high"] == est.get("ci_high")


def test_the_claimed_measure_row_holds_claimed_against_recomputed():
    m = recite.verify(DISCREPANT).measures.filter(pl.col("claimed").is_not_null())
    assert m.height == 1
    row = m.row(0, named=True)
    assert row["measure"] == "Considered" and row["claimed"] == "47%"
    assert row["claimed_value"] == 47.0 and row["percent"] is True
    assert row["matched"] is False and row["gap"] == "outside_sampling_error"
    assert row["tolerance"] == 0.5
    assert row["recomputed_as_claimed"] == pytest.approx(44.2489, abs=1e-3)
    assert row["difference"] == pytest.approx(47 - row["recomputed_as_claimed"], abs=1e-4)
    assert row["ci_low"] < row["recomputed"] < row["ci_high"]


def test_claims_replace_the_results_numbers():
    assert recite.verify(CONSIDERED, claims={"Considered": "47%"}).verdict == "DISCREPANT"
    assert recite.verify(DISCREPANT, claims=["44%"]).verdict == "BASE_MISMATCH"  # base n 4595 is W5's


def test_a_claim_keeps_its_shown_precision():
    row = recite.verify(CONSIDERED, claims=[0.44]).measures.filter(pl.col("claimed").is_not_null()).row(0, named=True)
    assert row["claimed"] == "0.44" and row["tolerance"] == 0.005 and row["matched"] is True


def test_result_as_a_dict(tmp_path):
    citation = pair(CONSIDERED)["citation"]
    assert recite.verify(citation, result={"Considered": "47%"}).verdict == "DISCREPANT"
    (tmp_path / "result.json").write_text('{"Considered": 0.442}')
    assert recite.verify(citation, result=tmp_path / "result.json").verdict == "REPRODUCED"


def test_the_citation_as_a_dict_or_text_settles_as_its_file():
    from_file = recite.verify(DISCREPANT)
    from_dict = recite.verify(pair(DISCREPANT))
    from_text = recite.verify((REPO / DISCREPANT).read_text())
    assert from_dict.verdict == from_text.verdict == from_file.verdict
    assert from_dict.measures.equals(from_file.measures)
    assert from_dict.to_dict()["inputs"][0]["file"] == "<citation>"


def test_an_unreadable_claim_is_a_citation_error():
    with pytest.raises(recite.CitationError) as e:
        recite.verify(CONSIDERED, claims={"Considered": "lots"})
    assert e.value.location == "claims"


def test_a_result_that_is_not_json_is_a_citation_error_naming_it(tmp_path):
    bad = tmp_path / "result.json"
    bad.write_text("{not json")
    with pytest.raises(recite.CitationError) as e:
        recite.verify(CONSIDERED, result=bad)
    assert e.value.location == str(bad) and "not valid JSON" in str(e.value)


def test_a_missing_citation_file_is_a_citation_error_naming_it():
    with pytest.raises(recite.CitationError) as e:
        recite.verify("examples/citations/nope.json")
    assert e.value.location == "examples/citations/nope.json"
    assert isinstance(e.value, ValueError)


def test_a_citation_breaking_the_spec_is_invalid_not_an_exception():
    s = recite.verify({"study": "Versant Mega Tracker"})
    assert s.verdict == "INVALID"
    assert s.reasons and s.measures.is_empty()


def test_an_unknown_table_is_unverifiable_with_suggestions():
    citation = pair(CONSIDERED)
    citation["citation"]["source"]["table"] = "versant_flt"
    s = recite.verify(citation)
    assert s.verdict == "UNVERIFIABLE"
    unknown = s.claim["unknown_names"][0]
    assert unknown["what"] == "table" and "versant_flat" in unknown["suggestions"]


def test_series_gives_the_measure_on_every_wave():
    series = recite.verify(CONSIDERED, series=True).series.filter(pl.col("measure") == "Considered")
    assert series.height >= 6
    cited = series.filter(pl.col("cited"))
    assert cited["period"].to_list() == ["W6 (April 2026)"]
    assert cited["value"][0] == pytest.approx(0.442489, abs=1e-6)
    assert recite.verify(CONSIDERED).series.is_empty()


def test_interval_and_df_options_are_the_command_lines(cli):
    wilson = recite.verify(CONSIDERED, interval="wilson", data=DATA)
    assert wilson.to_dict() == cli.json("verify", CONSIDERED, "--interval", "wilson", "--data", DATA)
    with pytest.raises(recite.UsageError):
        recite.verify(CONSIDERED, interval="bayes")


def test_repr_html_is_the_reports_html_page_framed(tmp_path):
    s = recite.verify(DISCREPANT)
    page = s.to_html(tmp_path / "claim.html")
    assert (tmp_path / "claim.html").read_text() == page
    assert page.lstrip().lower().startswith("<!doctype html")
    framed = s._repr_html_()
    assert framed.startswith("<iframe") and html.escape(page, quote=True) in framed


def test_str_and_repr_say_the_verdict():
    s = recite.verify(DISCREPANT)
    assert str(s).startswith("recite verify " + DISCREPANT)
    assert repr(s).startswith("<recite.Settlement DISCREPANT")
