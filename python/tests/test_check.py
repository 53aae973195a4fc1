"""recite.check: transcripts checked as `recite check` checks them."""

from __future__ import annotations

import html
import json
import subprocess
import sys
import threading
import time

import polars as pl
import pytest

import recite

from .conftest import DATA, REPO, example_folders

TRANSCRIPTS = "examples/transcripts/"


@pytest.mark.parametrize("folder", example_folders())
def test_to_dict_and_exit_code_are_the_clis(cli, spss_layer, folder):
    # The SPSS example cites a study only the SPSS data layer declares.
    data = str(spss_layer) if "spss" in folder else DATA
    report = recite.check(folder, data=data)
    out = cli.run("check", folder, "--data", data, "--format", "json")
    assert report.to_dict() == json.loads(out.stdout)
    assert report.exit_code == out.returncode


def test_json_text_junit_and_html_are_the_clis_bytes(cli):
    report = recite.check(TRANSCRIPTS, data=DATA)
    for fmt, mine in (("json", report.to_json), ("text", report.to_text), ("junit", report.to_junit), ("html", report.to_html)):
        out = cli.run("check", TRANSCRIPTS, "--data", DATA, "--format", fmt, "--color", "never")
        assert mine().encode() == out.stdout, fmt


def test_to_html_and_to_junit_write_their_files(tmp_path):
    report = recite.check("examples/citations/")
    assert report.to_html(tmp_path / "r.html") == (tmp_path / "r.html").read_text()
    xml = report.to_junit(tmp_path / "r.xml")
    assert xml == (tmp_path / "r.xml").read_text() and xml.startswith("<?xml")


def test_repr_html_frames_the_html_report():
    report = recite.check("examples/citations/")
    assert html.escape(report.to_html(), quote=True) in report._repr_html_()


def test_claims_frame_has_one_row_per_claim_with_its_verdict():
    report = recite.check(TRANSCRIPTS)
    claims = report.claims
    assert claims.height == report.summary["claims"]
    counts = dict(claims.group_by("verdict").len().iter_rows())
    assert counts == {v: n for v, n in report.summary["verdicts"].items() if n}
    claimed = [c for i in report.to_dict()["inputs"] for c in i["claims"]]
    assert claims["pointer"].to_list() == [c["locator"]["pointer"] for c in claimed]
    assert claims["file"].to_list() == [c["locator"]["file"] for c in claimed]


def test_claims_frame_types():
    schema = recite.check(TRANSCRIPTS).claims.schema
    assert schema["input"] == pl.Int64 and schema["n"] == pl.Int64 and schema["claimed_n"] == pl.Int64
    assert schema["verdict"] == pl.String and schema["reasons"] == pl.List(pl.String)
    assert schema["recomputed"] == pl.Float64 and schema["weighted_n"] == pl.Float64
    assert schema["matched"] == pl.Boolean and schema["base_matched"] == pl.Boolean


def test_a_discrepant_claims_headline_is_its_wrong_number():
    claims = recite.check("examples/citations/").claims
    row = claims.filter(pl.col("file").str.ends_with("versant-w6-discrepant.json")).row(0, named=True)
    assert row["verdict"] == "DISCREPANT"
    assert row["measure"] == "Considered" and row["claimed"] == "47%" and row["matched"] is False
    assert row["claimed_n"] == 4595 and row["n"] == 4654 and row["base_matched"] is False
    assert "W5" in row["explanation"]


def test_answers_frame_counts_are_the_summarys():
    report = recite.check(TRANSCRIPTS)
    answers = report.answers
    counts = dict(answers.group_by("status").len().iter_rows())
    assert counts == {s: n for s, n in report.summary["answer_numbers"].items() if n}
    assert answers.schema["start"] == pl.Int64 and answers.schema["ambiguous"] == pl.Boolean


def test_answers_frame_gives_each_number_its_sentence():
    answers = recite.check(TRANSCRIPTS).answers
    for row in answers.iter_rows(named=True):
        assert row["text"] in row["sentence"], row


def test_findings_frame_of_an_input_that_breaks_the_moca_rules():
    report = recite.check("tests/fixtures/moca/")
    findings = report.findings
    assert findings.height == report.summary["findings"] > 0
    assert set(findings["level"]) <= {"MUST", "SHOULD", "NOTE"}
    assert findings["rule"].str.starts_with("moca/").any()


def test_inputs_frame_has_each_input_and_its_coverage():
    report = recite.check(TRANSCRIPTS)
    inputs = report.inputs
    assert inputs["file"].to_list() == [i["file"] for i in report.to_dict()["inputs"]]
    assert inputs["numbers"].sum() == report.summary["coverage"]["numbers"]


def test_objects_and_paths_in_one_batch_keep_their_order_and_names():
    pair = json.loads((REPO / "examples/citations/versant-w6-considered.json").read_text())
    report = recite.check([pair, "examples/citations/versant-w6-discrepant.json", json.dumps(pair) + "\n"])
    assert report.inputs["file"].to_list() == ["<input 1>", "examples/citations/versant-w6-discrepant.json", "<input 3>"]
    assert report.claims["verdict"].to_list() == ["REPRODUCED", "DISCREPANT", "REPRODUCED"]


def test_bytes_and_sdk_objects_are_read_as_documents():
    sse = (REPO / "examples/transcripts/agui-run.sse").read_bytes()

    class Model:  # what a pydantic model of the A2A or AG-UI SDKs offers
        def model_dump_json(self, by_alias: bool = False, exclude_none: bool = False) -> str:
            return (REPO / "examples/transcripts/a2a-v03-task.json").read_text()

    by_bytes = recite.check(sse)
    by_path = recite.check("examples/transcripts/agui-run.sse")
    assert by_bytes.claims["verdict"].to_list() == by_path.claims["verdict"].to_list()
    assert recite.check(Model()).claims["verdict"].to_list() == recite.check("examples/transcripts/a2a-v03-task.json").claims["verdict"].to_list()


def test_a_missing_input_is_an_input_error_naming_it():
    with pytest.raises(recite.InputError) as e:
        recite.check("examples/nowhere/")
    assert e.value.location == "examples/nowhere/"
    assert isinstance(e.value, FileNotFoundError)


def test_fail_on_follows_the_command_line(cli):
    report = recite.check("examples/citations/", data=DATA)
    for fail_on in ("reproduced", "discrepant", "should,note", "uncited"):
        out = cli.run("check", "examples/citations/", "--data", DATA, "--fail-on", fail_on)
        assert report.exit_code_for(fail_on) == out.returncode, fail_on
    assert report.fails(["discrepant"]) and not report.fails("note")
    with pytest.raises(recite.UsageError) as e:
        report.exit_code_for("wrong")
    assert "unknown item" in str(e.value)
    assert "misquoted" in recite.fail_on_items()


def test_nothing_checked_exits_5_unless_allowed():
    report = recite.check({"result": {"brand": "Versant"}})  # a result with no number, no citation
    assert report.checked_nothing
    assert report.exit_code == 5 and report.exit_code_for(allow_empty=True) == 0


def claims_file(tmp_path, n: int):
    line = json.dumps(json.loads((REPO / "examples/citations/versant-w6-considered.json").read_text()))
    path = tmp_path / "claims.jsonl"
    path.write_text((line + "\n") * n)
    return path


def test_the_gil_is_released_while_the_engine_works(tmp_path):
    path = claims_file(tmp_path, 2000)
    done = threading.Event()
    ticks = 0

    def work():
        recite.check(path)
        done.set()

    t = threading.Thread(target=work)
    t.start()
    while not done.is_set():
        ticks += 1  # runs only while the check does not hold the GIL
        time.sleep(0.001)
    t.join()
    assert ticks > 20


def test_ctrl_c_interrupts_a_long_check(tmp_path):
    import _thread
    import signal

    path = claims_file(tmp_path, 20_000)  # about 8 s of work in a debug build
    stop = threading.Event()

    def press_ctrl_c():  # as a notebook's interrupt does, until the call gives way
        while not stop.wait(0.2):
            _thread.interrupt_main()

    # Python raises KeyboardInterrupt only while it handles SIGINT. A process a shell without
    # job control starts in the background (a CI runner's) inherits SIGINT ignored, and then
    # interrupt_main() does nothing: handled here as in a terminal or a notebook.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    presser = threading.Thread(target=press_ctrl_c)
    started = time.monotonic()
    presser.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            recite.check(path)
    finally:
        stop.set()
        presser.join()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("folder", example_folders())
def test_summary_is_the_reports_without_rendering_it(spss_layer, folder):
    # Report.summary is read from the core alone (a 10k-claim report is not rendered and parsed
    # for it): it must still be the JSON report's summary, field for field.
    data = str(spss_layer) if "spss" in folder else DATA
    report = recite.check(folder, data=data)
    assert report.summary == report.to_dict()["summary"]


def test_importing_recite_and_checking_leaves_polars_unimported():
    # polars is imported when a frame is asked for, not before: a pytest gate pays nothing for it.
    code = (
        "import sys, recite; r = recite.check(%r, data=%r); r.exit_code; r.summary; "
        "print('polars' in sys.modules); r.claims; print('polars' in sys.modules)" % (TRANSCRIPTS, DATA)
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
