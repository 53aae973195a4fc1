#!/usr/bin/env bash
# Installs what tests/it/browser.rs drives the workbench with: puppeteer-core (the DevTools
# protocol client; it downloads no browser: the test runs Debian's chromium) and axe-core (the
# accessibility audit, run inside the pages), pinned in package.json / package-lock.json here,
# into a cache folder outside the repository, when they are missing or differ from the pins:
#   ${RECITE_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk}/workbench
# Prints nothing on success (browser.mjs and tests/it/browser.rs find it there); says why and
# exits non-zero otherwise. Works offline once npm's cache holds the packages.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${RECITE_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk}/workbench"
mkdir -p "$cache"
installed() {
  [ -f "$cache/node_modules/puppeteer-core/package.json" ] \
    && [ -f "$cache/node_modules/axe-core/axe.min.js" ] \
    && [ -f "$cache/node_modules/.package-lock.json" ]
}
if cmp -s "$here/package-lock.json" "$cache/package-lock.json" && installed; then
  exit 0
fi
command -v npm >/dev/null || { echo "install.sh: npm is not installed" >&2; exit 1; }
# Without the old tree, an install that fails is not taken for a good one next time.
rm -rf "$cache/node_modules"
cp "$here/package.json" "$here/package-lock.json" "$cache/"
# npm's output is shown only when it fails (it prints a summary even at --loglevel=error).
# No browser download: puppeteer-core has no install script, and these say so to any that would.
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! (cd "$cache" && PUPPETEER_SKIP_DOWNLOAD=1 PUPPETEER_SKIP_CHROME_DOWNLOAD=1 \
      npm ci --no-audit --no-fund --prefer-offline --loglevel=error) >"$log" 2>&1; then
  cat "$log" >&2
  echo "install.sh: npm ci failed in $cache" >&2
  exit 1
fi
installed || { echo "install.sh: puppeteer-core or axe-core is missing from $cache after npm ci" >&2; exit 1; }
