#!/usr/bin/env bash
# Regenerates tests/fixtures/sdk/a2a/ with the official A2A SDKs (see README.md here).
#
# The SDKs are installed from the package registries into a cache outside the repository
# (${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk/), at the exact versions pinned beside this file
# (requirements.txt, package.json + package-lock.json). Nothing leaves the machine: the Python
# server runs in process, the JS server and the push-notification webhooks on loopback ports.
# The tests never run this; they read the committed output.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
out="${1:-$repo/tests/fixtures/sdk/a2a}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk"
python="${PYTHON:-python3.11}"

mkdir -p "$cache" "$out"

# Python: a2a-sdk in a venv keyed by the pins, so a changed pin gets a fresh venv.
venv="$cache/a2a-py-$(sha256sum "$here/requirements.txt" | cut -c1-12)"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
fi

# Node: @a2a-js/sdk from the lock file.
node_dir="$cache/a2a-js-$(sha256sum "$here/package-lock.json" | cut -c1-12)"
if [ ! -d "$node_dir/node_modules/@a2a-js/sdk" ]; then
  mkdir -p "$node_dir"
  cp "$here/package.json" "$here/package-lock.json" "$node_dir/"
  (cd "$node_dir" && npm ci --no-audit --no-fund --silent)
fi

rm -f "$out"/py-* "$out"/js-* "$out"/versions*.json
echo "a2a-sdk (Python) -> $out"
"$venv/bin/python" "$here/gen_py.py" "$out" 2> >(grep -v 'not spec-compliant' >&2 || true)
echo "@a2a-js/sdk -> $out"
node "$here/gen_js.mjs" "$out" "$node_dir/node_modules"

# One versions.json: the SDK versions and, per file, which SDK and binding wrote it.
"$venv/bin/python" - "$out" <<'EOF'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
merged = {'versions': {}, 'files': {}}
for side in ('versions-py.json', 'versions-js.json'):
    part = json.loads((out / side).read_text())
    merged['versions'].update(part['versions'])
    merged['files'].update(part['files'])
    (out / side).unlink()
merged['files'] = dict(sorted(merged['files'].items()))
(out / 'versions.json').write_text(json.dumps(merged, indent=2) + '\n')
EOF
echo "wrote $(ls "$out" | wc -l) files"
"$venv/bin/python" "$here/manifest.py" "$repo"
