#!/usr/bin/env bash
# The Python package's CI (issue 47): a cached venv with the pinned tools, the package built and
# installed into it by maturin, the `recite` binary its reports are compared with, then pytest
# (python/tests/, the example notebook included).
#
# The venv is ${RECITE_PY_VENV:-~/.cache/recite-py-venv}, remade only when the pins change
# (tests/pyvenv.sh). maturin builds in cargo's target folder ($CARGO_TARGET_DIR, as .ci/run sets
# it), with the feature `share-test-build`: the extension asks for the test build's features of
# every crate under DataFusion, so that build is reused, not repeated (python/Cargo.toml; a
# user's `pip install ./python` leaves it off and builds the local engine alone). Any failed
# install or build stops here with a message: nothing is skipped.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/recite-target}"
venv="${RECITE_PY_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/recite-py-venv}"
fail() { echo "python/ci.sh: $*" >&2; exit 1; }

echo "== python venv: $venv (python/requirements-dev.txt)"
python="$("$repo/tests/pyvenv.sh" "$here/requirements-dev.txt" "$venv" python)" \
  || fail "the pinned tools could not be installed (python/requirements-dev.txt)"

echo "== maturin develop: build the extension and install recite into the venv"
start=$(date +%s)
(cd "$here" && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop --locked --features share-test-build) \
  || fail "maturin develop failed"
echo "recite built and installed in $(($(date +%s) - start)) s"
"$python" -c 'import recite; print("recite", recite.__version__, "from", recite.__file__)' \
  || fail "recite does not import after maturin develop"

# The command line the reports are compared with, from this checkout: built as .ci/run builds
# it for the integration tests (the same command, so there, right after it, nothing is rebuilt).
echo "== cargo test --all-targets --no-run (the recite binary the reports are compared with)"
(cd "$repo" && cargo test --all-targets --no-run) || fail "the recite binary did not build"
export RECITE_BIN="$CARGO_TARGET_DIR/debug/recite"
[ -x "$RECITE_BIN" ] || fail "no recite binary at $RECITE_BIN after the build"

echo "== pytest python/tests"
cd "$here"
exec "$python" -m pytest tests -p no:cacheprovider "$@"
