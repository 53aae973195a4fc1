#!/usr/bin/env bash
# Regenerates the SPSS test files in tests/sav/ with pyreadstat (see gen.py for what each holds).
#
# pyreadstat is installed from PyPI into a venv outside the repository
# (${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk/), at the versions pinned in requirements.txt.
# The tests never run this; they read the committed files.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk"
python="${PYTHON:-python3.11}"

venv="$cache/sav-py-$(sha256sum "$here/requirements.txt" | cut -c1-12)"
if [ ! -x "$venv/bin/python" ]; then
  mkdir -p "$cache"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
fi
"$venv/bin/python" "$here/gen.py" "${1:-$here}"
