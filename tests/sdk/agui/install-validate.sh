#!/usr/bin/env bash
# Installs ag-ui-validate (PyPI, pinned in requirements-validate.txt here) into a cached venv
# outside the repository, when it is missing or differs from the pins:
#   ${RECITE_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk}/agui-validate
# Prints the path of its `ag-ui-validate` executable (tests/it/agui_validate.rs runs it).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${RECITE_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk}/agui-validate"
python="${PYTHON:-python3}"
if ! cmp -s "$here/requirements-validate.txt" "$venv/requirements.txt" || [ ! -x "$venv/bin/ag-ui-validate" ]; then
  rm -rf "$venv"
  "$python" -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$here/requirements-validate.txt" >&2
  cp "$here/requirements-validate.txt" "$venv/requirements.txt"
fi
echo "$venv/bin/ag-ui-validate"
