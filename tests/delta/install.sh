#!/usr/bin/env bash
# Installs the delta-rs Python writer (requirements.txt here, pinned) into a virtualenv outside
# the repository, when it is missing or differs from the pins:
#   ${RECITE_DELTA_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-delta}
# Prints the path of its `python` (tests/pyvenv.sh does the work); tests/delta/make.py runs on it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../pyvenv.sh" "$here/requirements.txt" \
  "${RECITE_DELTA_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-delta}" python
