#!/usr/bin/env bash
# Regenerates tests/fixtures/frameworks/ (see README.md here): installs each framework family
# from the registries into a cached venv keyed by its pins (requirements/<family>.txt), the JS
# ones from node/package-lock.json with `npm ci`, all under
# ${RECITE_FRAMEWORKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-frameworks} (never the
# checkout); runs every framework's endpoint in process with its scripted model; writes the
# manifest. Nothing leaves the machine once installed. The tests never run this.
#
#   bash tests/frameworks/gen.sh [FAMILY...]     # default: all of them
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="$repo/tests/fixtures/frameworks"
cache="${RECITE_FRAMEWORKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-frameworks}"
python="${PYTHON:-python3.12}"
families=("$@")
[ ${#families[@]} -eq 0 ] && families=(langgraph adk pydantic-ai strands llamaindex crewai mastra)
mkdir -p "$cache"

venv_for() {  # a venv per family, keyed by its pins, so a changed pin gets a fresh venv
  local family="$1" req="$here/requirements/$1.txt"
  local venv="$cache/$family-$(sha256sum "$req" | cut -c1-12)"
  if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req" >&2
  fi
  echo "$venv"
}

python3 "$here/common.py"  # runs.json for the JS generator
for family in "${families[@]}"; do
  echo "== $family" >&2
  rm -rf "${out:?}/$family"
  if [ "$family" = mastra ]; then
    node_dir="$cache/node-$(sha256sum "$here/node/package-lock.json" | cut -c1-12)"
    if [ ! -d "$node_dir/node_modules/@ag-ui/mastra" ]; then
      mkdir -p "$node_dir"
      cp "$here/node/package.json" "$here/node/package-lock.json" "$node_dir/"
      (cd "$node_dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
    fi
    node "$here/gen_mastra.mjs" "$out/$family" "$node_dir/node_modules"
  else
    venv="$(venv_for "$family")"
    "$venv/bin/python" "$here/gen_${family//-/_}.py" "$out/$family" >/dev/null
  fi
done
python3 "$here/manifest.py" "$repo"
