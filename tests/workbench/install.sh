#!/usr/bin/env bash
# Installs what tests/it/browser.rs drives the workbench with: puppeteer-core (the DevTools
# protocol client; it downloads no browser: the test runs Debian's chromium) and axe-core (the
# accessibility audit, run inside the pages), pinned here, into
#   ${RECITE_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk}/workbench
# (tests/npm-pinned.sh). Prints nothing on success.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../npm-pinned.sh" "$here" workbench puppeteer-core/package.json axe-core/axe.min.js
