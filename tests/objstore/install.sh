#!/usr/bin/env bash
# Installs moto's S3-compatible server (requirements.txt here, pinned) into a virtualenv outside
# the repository, when it is missing or differs from the pins:
#   ${RECITE_MOTO_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-moto}
# Prints the path of the `moto_server` executable. Works offline once pip's cache holds the wheels.
# Needs python3 with venv (Debian: `apt-get install python3-venv`).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${RECITE_MOTO_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-moto}"
if cmp -s "$here/requirements.txt" "$venv/requirements.txt" && [ -x "$venv/bin/moto_server" ]; then
  echo "$venv/bin/moto_server"
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
echo "$venv/bin/moto_server"
