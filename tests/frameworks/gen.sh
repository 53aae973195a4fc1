#!/usr/bin/env bash
# Regenerates tests/fixtures/frameworks/ (see README.md here): installs each framework family
# from the registries into a cached venv keyed by its pins (requirements/<family>.txt), the JS
# ones from node/package-lock.json with `npm ci`, all under
# ${RECITE_FRAMEWORKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-frameworks} (never the
# checkout); runs every framework's endpoint in process with its scripted model (for
# @ag-ui/langgraph, a LangGraph API server on loopback); writes the manifest. Nothing leaves the
# machine once installed. The tests never run this.
#
#   bash tests/frameworks/gen.sh [FAMILY...]     # default: all of them
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="$repo/tests/fixtures/frameworks"
cache="${RECITE_FRAMEWORKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-frameworks}"
python="${PYTHON:-python3.12}"
families=("$@")
[ ${#families[@]} -eq 0 ] && families=(langgraph langgraph-js adk pydantic-ai strands llamaindex crewai mastra)
mkdir -p "$cache"

venv_for() {  # a venv per family, keyed by its pins, so a changed pin gets a fresh venv
  local req="$here/requirements/$1.txt"
  local venv="$cache/$1-$(sha256sum "$req" | cut -c1-12)"
  if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req" >&2
  fi
  echo "$venv"
}

node_modules() {  # the JS packages from the lock file
  local dir="$cache/node-$(sha256sum "$here/node/package-lock.json" | cut -c1-12)"
  if [ ! -d "$dir/node_modules/@ag-ui/mastra" ]; then
    mkdir -p "$dir"
    cp "$here/node/package.json" "$here/node/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
  fi
  echo "$dir/node_modules"
}

# @ag-ui/langgraph is a client of a LangGraph API server: `langgraph dev` (in memory) serving
# langgraph_server/graphs.py on a free loopback port, stopped when the generator is done.
langgraph_js() {
  local venv port pid versions work
  venv="$(venv_for langgraph-js)"
  work="$(mktemp -d)"  # the server keeps threads in .langgraph_api/ of its folder: not the checkout
  cp "$here/langgraph_server/graphs.py" "$here/langgraph_server/langgraph.json" "$work/"
  port="$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  (cd "$work" && RECITE_FRAMEWORKS_DIR="$here" exec "$venv/bin/langgraph" dev --no-browser --no-reload --host 127.0.0.1 \
      --port "$port" >"${TMPDIR:-/tmp}/recite-langgraph-dev.log" 2>&1) &
  pid=$!
  trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' RETURN
  for _ in $(seq 60); do
    curl -fs "http://127.0.0.1:$port/ok" >/dev/null 2>&1 && break
    sleep 1
  done
  versions="$("$venv/bin/python" -c 'import json, importlib.metadata as m; print(json.dumps({d: m.version(d) for d in ("langgraph-api", "langgraph-runtime-inmem", "langgraph", "langchain-core")}))')"
  node "$here/gen_langgraph_js.mjs" "$out/langgraph-js" "$(node_modules)" "http://127.0.0.1:$port" "$versions"
}

python3 "$here/common.py"  # runs.json for the JS generators
for family in "${families[@]}"; do
  echo "== $family" >&2
  rm -rf "${out:?}/$family"
  case "$family" in
    mastra) node "$here/gen_mastra.mjs" "$out/$family" "$(node_modules)" ;;
    langgraph-js) langgraph_js ;;
    *) "$(venv_for "$family")/bin/python" "$here/gen_${family//-/_}.py" "$out/$family" >/dev/null ;;
  esac
done
python3 "$here/manifest.py" "$repo"
