"""examples/notebook.ipynb, executed headless as a reader would run it."""

from __future__ import annotations

import nbformat
from nbclient import NotebookClient

from .conftest import REPO


def test_the_example_notebook_runs_and_shows_the_disputed_claim():
    nb = nbformat.read(REPO / "examples" / "notebook.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(REPO / "examples")}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "DISCREPANT" in printed and "W5" in printed
    assert any("image/png" in o.get("data", {}) for o in outputs), "the chart across waves"
    assert any("<iframe" in o.get("data", {}).get("text/html", "") for o in outputs), "the HTML report"
