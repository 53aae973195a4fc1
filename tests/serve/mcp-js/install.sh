#!/usr/bin/env bash
# Installs the official MCP TypeScript SDK (@modelcontextprotocol/sdk), pinned here, into
#   ${RECITE_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk}/mcp-js
# (tests/npm-pinned.sh). Prints nothing on success (client.mjs and tests/it/serve_agents.rs find
# it there).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../../npm-pinned.sh" "$here" mcp-js @modelcontextprotocol/sdk/package.json
