#!/usr/bin/env bash
# Installs the npm packages pinned in DIR's package.json / package-lock.json into a cache folder
# outside the repository, when they are missing or differ from the pins:
#   ${RECITE_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk}/NAME
#   npm-pinned.sh DIR NAME FILE…   (FILE: paths under node_modules that must exist after)
# Prints nothing on success; says why and exits non-zero otherwise (npm's output only then).
# Works offline once npm's cache holds the packages. No package may download a browser.
set -euo pipefail
here="$1" name="$2"
shift 2
cache="${RECITE_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk}/$name"
installed() {
  [ -f "$cache/node_modules/.package-lock.json" ] || return 1
  for f in "$@"; do [ -f "$cache/node_modules/$f" ] || return 1; done
}
mkdir -p "$cache"
if cmp -s "$here/package-lock.json" "$cache/package-lock.json" && installed "$@"; then
  exit 0
fi
command -v npm >/dev/null || { echo "install: npm is not installed" >&2; exit 1; }
# Without the old tree, an install that fails is not taken for a good one next time.
rm -rf "$cache/node_modules"
cp "$here/package.json" "$here/package-lock.json" "$cache/"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! (cd "$cache" && PUPPETEER_SKIP_DOWNLOAD=1 PUPPETEER_SKIP_CHROME_DOWNLOAD=1 \
      npm ci --no-audit --no-fund --prefer-offline --loglevel=error) >"$log" 2>&1; then
  cat "$log" >&2
  echo "install: npm ci failed in $cache" >&2
  exit 1
fi
installed "$@" || { echo "install: $* missing from $cache/node_modules after npm ci" >&2; exit 1; }
