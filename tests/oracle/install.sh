#!/usr/bin/env bash
# Installs DuckDB's Python package (requirements.txt here, pinned) into a virtualenv outside the
# repository, when it is missing or differs from the pins:
#   ${RECITE_ORACLE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-oracle}
# Prints the path of its python, which runs claims.py here (tests/pyvenv.sh does the work).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../pyvenv.sh" "$here/requirements.txt" \
  "${RECITE_ORACLE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-oracle}" python
