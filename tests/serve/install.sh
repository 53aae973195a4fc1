#!/usr/bin/env bash
# Installs the official MCP and A2A Python clients (requirements.txt here, pinned) into a
# virtualenv outside the repository, when it is missing or differs from the pins:
#   ${RECITE_SERVE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-serve-clients}
# Prints the path of its python (tests/pyvenv.sh does the work).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../pyvenv.sh" "$here/requirements.txt" \
  "${RECITE_SERVE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-serve-clients}" python
