"""Shared fixtures: the repository, the `recite` binary the reports are compared with, and a
data layer with the SPSS example's study.

The tests run from the repository's root, so inputs are named as on the command line
(``examples/transcripts/``) and the reports of both front ends name the same files.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import List

import pytest

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]

# The reports are compared with the binary's over the same data layer, named on both sides (as
# --data), so they are equal whichever checkout each was built in; the default choice (the
# bundled datasets) has tests of its own.
DATA = str(REPO / "datasets")


def recite_binary() -> Path:
    """The command line built from this checkout: $RECITE_BIN, else the debug build in
    $CARGO_TARGET_DIR (python/ci.sh builds it there)."""
    if os.environ.get("RECITE_BIN"):
        return Path(os.environ["RECITE_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return target / "debug" / "recite"


@pytest.fixture(autouse=True)
def at_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    # The data layer is the bundled one unless a test says otherwise, as for the binary.
    monkeypatch.delenv("RECITE_DATA", raising=False)


class Cli:
    """Runs the `recite` binary from the repository's root."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def run(self, *args: str) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if k not in ("RECITE_DATA", "RECITE_ENGINE", "RECITE_CACHE")}
        env["NO_COLOR"] = "1"
        return subprocess.run([str(self.path), *args], cwd=REPO, env=env, capture_output=True, check=False)

    def json(self, *args: str) -> dict:
        out = self.run(*args, "--format", "json")
        assert out.returncode in (0, 1), out.stderr.decode()
        return json.loads(out.stdout)


@pytest.fixture(scope="session")
def cli() -> Cli:
    path = recite_binary()
    if not path.is_file():
        pytest.fail(f"the recite binary is not built at {path} (python/ci.sh builds it; or set RECITE_BIN)")
    return Cli(path)


@pytest.fixture(scope="session")
def spss_layer(cli: Cli, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled studies and the SPSS test file as a third study (what examples/spss/
    cites), as the golden reports' data layer is made."""
    data = tmp_path_factory.mktemp("layer") / "data"
    data.mkdir()
    for study in ("versant", "nhanes2"):
        (data / study).symlink_to(REPO / "datasets" / study)
    made = cli.run("catalog", "init", "tests/sav/labelled-bytecode.sav", "--output", str(data / "spss"))
    assert made.returncode == 0, made.stderr.decode()
    return data


def example_folders() -> List[str]:
    return sorted(f"examples/{p.name}/" for p in (REPO / "examples").iterdir() if p.is_dir())


def citation_files() -> List[str]:
    return sorted(str(p.relative_to(REPO)) for p in (REPO / "examples" / "citations").glob("*.json"))
