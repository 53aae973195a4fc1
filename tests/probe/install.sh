#!/usr/bin/env bash
# Installs the agent frameworks tests/it/probe_frameworks.rs serves on loopback for `recite probe`
# to call, each into its own virtualenv outside the repository (pinned in requirements-*.txt
# here; tests/pyvenv.sh remakes a venv whose pins changed):
#   ${RECITE_PROBE_VENVS:-${XDG_CACHE_HOME:-$HOME/.cache}}/recite-probe-adk         google-adk (to_a2a)
#   ${RECITE_PROBE_VENVS:-${XDG_CACHE_HOME:-$HOME/.cache}}/recite-probe-pydantic-ai pydantic-ai + fasta2a
# Prints the path of each venv's python, one a line.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venvs="${RECITE_PROBE_VENVS:-${XDG_CACHE_HOME:-$HOME/.cache}}"
for family in adk pydantic-ai; do
  "$here/../pyvenv.sh" "$here/requirements-$family.txt" "$venvs/recite-probe-$family" python
done
