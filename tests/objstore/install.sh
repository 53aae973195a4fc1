#!/usr/bin/env bash
# Installs moto's S3-compatible server (requirements.txt here, pinned) into a virtualenv outside
# the repository, when it is missing or differs from the pins:
#   ${RECITE_MOTO_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-moto}
# Prints the path of the `moto_server` executable (tests/pyvenv.sh does the work).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../pyvenv.sh" "$here/requirements.txt" \
  "${RECITE_MOTO_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-moto}" moto_server
