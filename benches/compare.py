#!/usr/bin/env python3
"""Side by side, on the same files and the same claims: recite; DuckDB computing the same sums
in one query per table; DuckDB with one query per claim; polars with one query per claim; and
the floor: the columns the claims touch, only summed, by DuckDB and by DataFusion (its Python
package, `datafusion` from PyPI, in the same virtual environment).

Checks that all of them give the same numbers (base n and Σw of every claim, and the per-code
weighted sums; the two floors the same column sums), then prints for each the median wall time
of --reps runs, the CPU seconds (user + system, from /usr/bin/time -v) and cores used (CPU s /
wall s) of the same runs, peak memory, and the ratios to recite. See BENCHMARKS.md. Each
engine's runs are back to back, unlocked: for ratios that hold on a shared machine (a build
lock, shuffled interleaved rounds, noisy rounds dropped, paired ratios with intervals, recite's
scan against a query alone and whole runs against whole runs), use benches/driver.py.

    python3 benches/compare.py --rows 1000000 --claims 10000
    python3 benches/compare.py --rows 5000000 --claims 10000 --per-claim-sample 200
    python3 benches/compare.py --rows 5000000 --claims 10000 --reductions in-process,plan --recite-only

--reductions runs recite once per grouped-scan reduction (its hidden --reduction flag), one row
each, and checks their reports are byte-identical; --recite-only skips the other engines.

DuckDB, polars and datafusion are installed into a local virtual environment (--workdir/venv) on
first use.
The per-claim engines run a sample of the claims (--per-claim-sample) and their time is scaled
to the whole claim set; the report says so.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def sh(cmd, **kw):
    cmd = [str(c) for c in cmd]  # sizes and paths arrive as ints and Paths
    print("+", " ".join(cmd), file=sys.stderr)
    return subprocess.run(cmd, check=True, **kw)


def ensure_venv(workdir):
    venv = workdir / "venv"
    py = venv / "bin" / "python"
    if not py.exists():
        sh([sys.executable, "-m", "venv", str(venv)])
    probe = subprocess.run([str(py), "-c", "import duckdb, polars, datafusion"], capture_output=True)
    if probe.returncode != 0:
        sh([str(py), "-m", "pip", "install", "-q", "duckdb", "polars", "datafusion"])
    return py


def recite_binary(target_dir):
    env = dict(os.environ, CARGO_TARGET_DIR=str(target_dir))
    sh(["cargo", "build", "--release", "--quiet", "--no-default-features", "--features", "engine"], cwd=ROOT, env=env)
    return target_dir / "release" / "recite"


def instance(recite, workdir, rows, claims, extra_questions=160):
    """The Versant tracker of `rows` rows and `claims` generated claims over it (10% wrong), made
    by recite under `workdir` when missing: (data directory, claims file)."""
    data = workdir / f"versant-{rows}"
    if not (data / "versant_flat.parquet").exists():
        sh([recite, "generate", "versant", "--rows", rows, "--extra-questions", extra_questions,
            "--row-group-size", max(rows // 8, 10_000), "--out", data])
    path = workdir / f"claims-{rows}-{claims}.jsonl"
    if not path.exists():
        sh([recite, "generate", "claims", "--data", data, "--count", claims, "--wrong", "0.1", "-o", path])
    return data, path


def timed(cmd, env=None):
    """Runs cmd under /usr/bin/time -v: (wall seconds, peak RSS bytes, CPU seconds, stdout)."""
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v", *map(str, cmd)], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 1):
        sys.exit(f"failed: {cmd}\n{p.stderr[-3000:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) * 1024
    cpu = sum(float(re.search(rf"{k} time \(seconds\): ([\d.]+)", p.stderr).group(1)) for k in ("User", "System"))
    return wall, rss, cpu, p.stdout


def load_claims(path):
    return [json.loads(line)["citation"] for line in open(path) if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--claims", type=int, default=10_000)
    ap.add_argument("--extra-questions", type=int, default=160, help="q40 columns, for a table of ~200 columns")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--per-claim-sample", type=int, default=200)
    ap.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "recite-bench")
    ap.add_argument("--target-dir", type=Path, default=Path.home() / ".cache" / "recite-release")
    ap.add_argument("--out", type=Path, help="write the results as JSON here")
    ap.add_argument("--reductions", help="comma-separated grouped-scan reductions (in-process, plan): a row each")
    ap.add_argument("--binary", type=Path, help="this recite binary, already built (no cargo run)")
    ap.add_argument("--recite-only", action="store_true", help="only recite: no other engine")
    a = ap.parse_args()
    a.workdir.mkdir(parents=True, exist_ok=True)
    py = ensure_venv(a.workdir)
    recite = a.binary or recite_binary(a.target_dir)
    data, claims = instance(recite, a.workdir, a.rows, a.claims, a.extra_questions)
    report = a.workdir / "recite-report.json"
    results = {}

    # recite, once per reduction asked for (each a row; their reports must be byte-identical)
    first = None
    for how in (a.reductions.split(",") if a.reductions else [None]):
        name = "recite" if how is None else f"recite ({how})"
        out = report if how is None else a.workdir / f"recite-report-{how}.json"
        extra = [] if how is None else ["--reduction", how]
        runs = []
        for _ in range(a.reps):
            runs.append(timed([recite, "check", claims, "--data", data, "--format", "json", "--no-explain", "-o", out,
                               *extra]))
        results[name] = {"wall": statistics.median(r[0] for r in runs), "rss": max(r[1] for r in runs),
                         "cpu": statistics.median(r[2] for r in runs), "scaled": False}
        if first is None:
            first = (name, out)
        elif open(out, "rb").read() != open(first[1], "rb").read():
            sys.exit(f"{name}: its report differs from {first[0]}'s")
    rec = json.load(open(first[1]))
    if a.recite_only:
        base = results[first[0]]["wall"]
        print(f"\n{a.claims} claims over {a.rows} rows, median of {a.reps}, {os.cpu_count()} cores")
        print(f"{'engine':<22} {'wall s':>9} {'vs first':>9} {'CPU s':>8} {'cores':>6} {'peak MB':>9}")
        for name, r in results.items():
            print(f"{name:<22} {r['wall']:>9.3f} {r['wall'] / base:>8.2f}x {r['cpu']:>8.2f} "
                  f"{r['cpu'] / r['wall']:>6.2f} {r['rss'] / 2**20:>9.0f}")
        if a.out:
            json.dump({"rows": a.rows, "claims": a.claims, "reps": a.reps, "results": results}, open(a.out, "w"),
                      indent=2)
        return

    # The other engines run in the venv's python, one process per engine and repetition.
    worker = ROOT / "benches" / "engines.py"
    floors = {}
    for engine in ["duckdb-fused", "duckdb-per-claim", "polars-per-claim", "duckdb-floor", "datafusion-floor"]:
        runs = []
        reps = a.reps
        for i in range(reps):
            out = a.workdir / f"{engine}.json"
            wall, rss, cpu, _ = timed([py, worker, engine, data, claims, out, a.per_claim_sample])
            runs.append((wall, rss, cpu, json.load(open(out))["query_seconds"]))
        got = json.load(open(out))
        scale = got.get("scale", 1.0)
        # Process overhead (start-up, reading the catalog) once, the queries scaled to all claims.
        wall = statistics.median(r[0] for r in runs)
        query = statistics.median(r[3] for r in runs)
        # Cores used are measured on the runs as they were; a scaled engine's CPU seconds are
        # those cores times its scaled wall time.
        cores = statistics.median(r[2] / r[0] for r in runs)
        results[engine] = {
            "wall": wall - query + query * scale,
            "query_wall": query * scale,
            "rss": max(r[1] for r in runs),
            "cpu": cores * (wall - query + query * scale),
            "scaled": scale != 1.0,
            "sample": got.get("sample"),
        }
        if engine.endswith("-floor"):
            floors[engine] = got
        else:
            check_same(rec, got, engine)
    floor_columns = check_floors(floors)

    parquet = data / "versant_flat.parquet"
    touched = touched_bytes(py, parquet, claims)
    base = results[first[0]]["wall"]
    print(f"\n{a.claims} claims over {a.rows} rows, median of {a.reps}, {os.cpu_count()} cores")
    print(f"{'engine':<20} {'wall s':>9} {'vs recite':>10} {'CPU s':>8} {'cores':>6} {'peak MB':>9}")
    for name, r in results.items():
        note = f"  (scaled from {r['sample']} claims)" if r["scaled"] else ""
        if name.endswith("-floor"):
            note = f"  (sums the {floor_columns} touched columns, nothing else)"
        print(f"{name:<20} {r['wall']:>9.3f} {r['wall'] / base:>9.2f}x {r['cpu']:>8.2f} {r['cpu'] / r['wall']:>6.2f} "
              f"{r['rss'] / 2**20:>9.0f}{note}")
        if name in ("duckdb-fused", "duckdb-floor", "datafusion-floor"):
            q = r["query_wall"]
            what = "without settling claims in Python" if name == "duckdb-fused" else "without process start-up"
            # No ratio: recite's whole run over a query alone mixes kinds (driver.py pairs
            # recite's scan with the query, and whole runs with whole runs).
            print(f"{'  its query alone':<20} {q:>9.3f} {'':>10} {'':>8} {'':>6} {'':>9}  ({what})")
    print(f"columns the claims touch: {touched / 2**20:.0f} MB in memory (Arrow); recite peak / that = "
          f"{results[first[0]]['rss'] / touched:.2f}")
    if a.out:
        json.dump({"rows": a.rows, "claims": a.claims, "reps": a.reps, "results": results,
                   "touched_bytes": touched}, open(a.out, "w"), indent=2)


def check_same(rec, got, engine):
    """Base n of every claim the engine computed equals recite's; Σw within 1e-9."""
    claims = [c for i in rec["inputs"] for c in i["claims"]]
    bad = 0
    for idx, (n, w) in got["claims"].items():
        c = claims[int(idx)]
        base = c.get("base")
        if base is None:
            continue
        if base["n"] != n or abs(base["weighted"] - w) > 1e-9 * max(1.0, abs(w)):
            bad += 1
            if bad < 5:
                print(f"MISMATCH {engine} claim {idx}: recite n={base['n']} Σw={base['weighted']}, {engine} n={n} Σw={w}")
    if bad:
        sys.exit(f"{engine}: {bad} claims differ from recite")
    print(f"{engine}: {len(got['claims'])} claims agree with recite (base n exactly, Σw to 1e-9)", file=sys.stderr)


def check_floors(floors):
    """Both floors read the same columns and agree on every sum (1e-9 relative): the number of
    columns."""
    d, f = floors["duckdb-floor"], floors["datafusion-floor"]
    if d["columns"] != f["columns"]:
        sys.exit(f"the floors read different columns: {d['columns']} vs {f['columns']}")
    for c, x, y in zip(d["columns"], d["sums"], f["sums"]):
        if (x is None) != (y is None) or (x is not None and abs(x - y) > 1e-9 * max(1.0, abs(x))):
            sys.exit(f"the floors disagree on the sum of {c}: DuckDB {x}, DataFusion {y}")
    print(f"floors: DuckDB and DataFusion agree on the sums of {len(d['columns'])} columns", file=sys.stderr)
    return len(d["columns"])


def touched_bytes(py, parquet, claims):
    # Size in memory of the columns the claims touch: cited columns, weights, and the columns
    # of the period and base filters (wave, age), as 8-byte values (what recite casts them to).
    cols = set()
    for line in open(claims):
        c = json.loads(line)["citation"]
        cols.add(c["source"]["column"])
        if c.get("weight"):
            cols.add(c["weight"])
    cols |= {"wave", "age", "gender", "region"}
    rows = int(re.search(r"versant-(\d+)", str(parquet)).group(1))
    return len(cols) * rows * 8


if __name__ == "__main__":
    main()
