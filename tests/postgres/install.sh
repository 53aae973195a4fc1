#!/usr/bin/env bash
# Installs the Arrow writer tests/postgres/load.py runs on (requirements.txt here, pinned) into a
# virtualenv outside the repository, when it is missing or differs from the pins:
#   ${RECITE_POSTGRES_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-postgres}
# Prints the path of its `python` (tests/pyvenv.sh does the work).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../pyvenv.sh" "$here/requirements.txt" \
  "${RECITE_POSTGRES_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-postgres}" python
