#!/usr/bin/env bash
# Installs the official A2A JavaScript SDK (@a2a-js/sdk, A2A protocol v1.0), pinned here, into
#   ${RECITE_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk}/a2a-js
# (tests/npm-pinned.sh). Prints nothing on success (client.mjs and tests/it/serve_agents.rs find
# it there).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../../npm-pinned.sh" "$here" a2a-js @a2a-js/sdk/package.json
