#!/usr/bin/env bash
# Installs the pinned AG-UI TypeScript packages (package.json / package-lock.json here) into
# a cache folder outside the repository, when they are missing or differ from the pins:
#   ${RECITE_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk}/agui-js
# Prints that folder. Works offline once npm's cache holds the packages.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${RECITE_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk}/agui-js"
mkdir -p "$cache"
if cmp -s "$here/package-lock.json" "$cache/package-lock.json" \
    && [ -f "$cache/node_modules/@ag-ui/client/package.json" ] \
    && [ -f "$cache/node_modules/.package-lock.json" ]; then
  echo "$cache"
  exit 0
fi
command -v npm >/dev/null || { echo "install.sh: npm is not installed" >&2; exit 1; }
cp "$here/package.json" "$here/package-lock.json" "$cache/"
(cd "$cache" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error >&2)
echo "$cache"
