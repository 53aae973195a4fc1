#!/usr/bin/env bash
# Regenerates the AG-UI fixture corpus in tests/fixtures/sdk/agui/ with the official SDKs:
#   py/       runs written by ag-ui-protocol (Python) with its EventEncoder
#   js/       the same runs written by @ag-ui/core + @ag-ui/encoder (TypeScript), plus THINKING_*
#   streams/  stream-rule cases (bad-*: one ordering rule broken; ok-*: valid edge shapes);
#             where the client must reject each is in streams.json here
#   versions.json  the SDK versions that wrote them
# and the AG-UI entries of tests/fixtures/sdk/manifest.json (manifest.mjs: what each run must
# settle to).
# The SDKs install into ${RECITE_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk}, pinned by
# requirements.txt and package-lock.json here. Then every file goes through the reference
# client (verify.mjs): the runs must be accepted, each stream case rejected where
# streams.json (here) says.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
out="$repo/tests/fixtures/sdk/agui"
cache="${RECITE_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-sdk}"
python="${PYTHON:-python3}"

venv="$cache/agui-py"
if ! cmp -s "$here/requirements.txt" "$venv/requirements.txt"; then
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --no-deps -r "$here/requirements.txt"
  cp "$here/requirements.txt" "$venv/requirements.txt"
fi
"$here/install.sh" >/dev/null

rm -rf "$out/py" "$out/js" "$out/streams"
py_versions="$("$venv/bin/python" "$here/gen_agui.py" "$out/py")"
js_versions="$(node "$here/gen_agui.mjs" "$out/js" "$out/streams" "$here/streams.json")"
"$venv/bin/python" - "$out/versions.json" "$py_versions" "$js_versions" <<'PY'
import json, sys
path, py, js = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
versions = {
    "py": {"writer": "ag-ui-protocol EventEncoder", **py},
    "js": {"writer": "@ag-ui/core EventSchema + @ag-ui/encoder EventEncoder", **js},
    "streams": {"writer": "@ag-ui/core EventSchema + @ag-ui/encoder EventEncoder", **js},
    "framings": {".sse": "the encoder's SSE output", ".json": "a JSON array of the encoder's payloads",
                 ".jsonl": "JSON lines of the encoder's payloads"},
}
open(path, "w").write(json.dumps(versions, indent=2) + "\n")
PY

# Self-check against the reference client.
node "$here/verify.mjs" "$out"/py/* "$out"/js/* "$out"/streams/*.sse | node -e '
const expect = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
let bad = 0;
for (const line of require("fs").readFileSync(0, "utf8").trim().split("\n")) {
  const d = JSON.parse(line);
  const name = d.file.split("/").pop();
  const want = d.file.includes("/streams/") ? expect[name] : { verdict: "accepted" };
  const got = d.index === undefined ? { verdict: d.verdict } : { verdict: d.verdict, index: d.index };
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    bad++;
    console.error(`${d.file}: the client says ${JSON.stringify(got)} (${d.message}), expected ${JSON.stringify(want)}`);
  }
}
process.exit(bad ? 1 : 0);
' "$here/streams.json"
node "$here/manifest.mjs" "$repo"
echo "wrote $out"
