#!/usr/bin/env bash
# Installs the official MCP and A2A Python clients (requirements.txt here, pinned) into a
# virtualenv outside the repository, when it is missing or differs from the pins:
#   ${RECITE_SERVE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-serve-clients}
# Prints the path of its python. Works offline once pip's cache holds the wheels.
# Needs python3 (3.10 or later) with venv (Debian: `apt-get install python3-venv`).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${RECITE_SERVE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-serve-clients}"
if cmp -s "$here/requirements.txt" "$venv/requirements.txt" && [ -x "$venv/bin/python" ]; then
  echo "$venv/bin/python"
  exit 0
fi
command -v python3 >/dev/null || { echo "install.sh: python3 is not installed" >&2; exit 1; }
rm -rf "$venv"
python3 -m venv "$venv" >&2 || {
  echo "install.sh: python3 cannot make a virtualenv (Debian: apt-get install python3-venv)" >&2
  rm -rf "$venv"; exit 1; }
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2 || {
  echo "install.sh: pip could not install $here/requirements.txt" >&2
  rm -rf "$venv"; exit 1; }
cp "$here/requirements.txt" "$venv/requirements.txt"
echo "$venv/bin/python"
