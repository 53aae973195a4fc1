#!/usr/bin/env bash
# Installs the official A2A JavaScript SDK (@a2a-js/sdk, A2A protocol v1.0; package.json /
# package-lock.json here, pinned) into a cache folder outside the repository, when it is
# missing or differs from the pins:
#   ${RECITE_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk}/a2a-js
# Prints nothing on success (client.mjs and tests/it/serve_agents.rs find it there); says why
# and exits non-zero otherwise. Works offline once npm's cache holds the packages.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${RECITE_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk}/a2a-js"
mkdir -p "$cache"
if cmp -s "$here/package-lock.json" "$cache/package-lock.json" \
    && [ -f "$cache/node_modules/@a2a-js/sdk/package.json" ] \
    && [ -f "$cache/node_modules/.package-lock.json" ]; then
  exit 0
fi
command -v npm >/dev/null || { echo "install.sh: npm is not installed" >&2; exit 1; }
# Without the old tree, an install that fails is not taken for a good one next time.
rm -rf "$cache/node_modules"
cp "$here/package.json" "$here/package-lock.json" "$cache/"
# npm's output is shown only when it fails (it prints a summary even at --loglevel=error).
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! (cd "$cache" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) >"$log" 2>&1; then
  cat "$log" >&2
  echo "install.sh: npm ci failed in $cache" >&2
  exit 1
fi
[ -f "$cache/node_modules/@a2a-js/sdk/package.json" ] \
  || { echo "install.sh: @a2a-js/sdk is missing from $cache after npm ci" >&2; exit 1; }
