#!/bin/bash
# Where a `recite serve` request's time goes: perf samples of one server while wrk drives
# POST /v1/verify of the bundled W6 citation at 32 connections for 10 s (after a 3 s warm-up).
#
#   benches/serve_profile.sh BINARY OUTDIR [recite serve flags…]   e.g. … --warm-sums 0
#
# Writes OUTDIR/perf.data, OUTDIR/wrk.json (wrk_post.lua's line), OUTDIR/top.txt (self time by
# symbol), OUTDIR/dso.txt (by library) and OUTDIR/inclusive.txt (time under recite's and the
# HTTP stack's functions, children included: parse, resolve, run, settle, render, admission).
# Needs perf (cpu-clock: works without a PMU) and wrk. Take /tmp/recite-build.lock around it on
# a shared machine (flock /tmp/recite-build.lock benches/serve_profile.sh …).
set -u
BIN=$(realpath "$1"); OUT=$2; shift 2
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
cd "$ROOT"
"$BIN" serve --listen 127.0.0.1:$PORT --ledger "$OUT/ledger.sqlite3" "$@" 2>"$OUT/server.log" &
PID=$!
for _ in $(seq 100); do curl -sf http://127.0.0.1:$PORT/healthz >/dev/null && break; sleep 0.2; done
drive() {
  BODY=$ROOT/examples/citations/versant-w6-considered.json CTYPE=application/json HDR= \
    wrk -t1 -c"$1" -d"$2" -s "$ROOT/benches/wrk_post.lua" http://127.0.0.1:$PORT/v1/verify
}
drive 4 3s >/dev/null
perf record -e cpu-clock -F 199 --call-graph dwarf,16384 -p $PID -o "$OUT/perf.data" -- sleep 10 2>"$OUT/perf.err" &
PERF=$!
drive 32 10s | tail -1 > "$OUT/wrk.json"
wait $PERF
kill $PID; wait $PID
R="perf report --no-inline -i $OUT/perf.data --stdio"
$R --no-children --sort symbol 2>/dev/null | grep -v '^#' | grep '%' | head -60 > "$OUT/top.txt"
$R --no-children --sort dso 2>/dev/null | grep '%' | head -20 > "$OUT/dso.txt"
$R --children --sort symbol -g none 2>/dev/null | grep -v '^#' | grep '%' \
  | grep -E 'recite|verify|resolve|settle|render|json|hyper|axum|spawn_blocking|datafusion::|parquet::|admit|identity' \
  | head -80 > "$OUT/inclusive.txt"
cat "$OUT/wrk.json"
