#!/usr/bin/env bash
# pyvenv.sh REQUIREMENTS VENV EXECUTABLE: makes VENV from the pinned REQUIREMENTS when it is
# missing or differs from the pins, and prints VENV/bin/EXECUTABLE. The installers of the test
# tools (tests/*/install.sh) share it. Works offline once pip's cache holds the wheels.
# Needs python3 with venv (Debian: `apt-get install python3-venv`).
set -euo pipefail
req="$1" venv="$2" exe="$3"
if cmp -s "$req" "$venv/requirements.txt" && [ -x "$venv/bin/$exe" ]; then
  echo "$venv/bin/$exe"
  exit 0
fi
command -v python3 >/dev/null || { echo "pyvenv.sh: python3 is not installed" >&2; exit 1; }
rm -rf "$venv"
python3 -m venv "$venv" >&2 || {
  echo "pyvenv.sh: python3 cannot make a virtualenv (Debian: apt-get install python3-venv)" >&2
  rm -rf "$venv"; exit 1; }
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" >&2 || {
  echo "pyvenv.sh: pip could not install $req" >&2
  rm -rf "$venv"; exit 1; }
cp "$req" "$venv/requirements.txt"
echo "$venv/bin/$exe"
