#!/usr/bin/env python3
"""How recite's cost grows: claims (1k, 10k, 100k) over 1M rows, and rows (1M, 5M) at 10k
claims. Median of --reps runs of `recite check --no-explain` (release build), peak memory.
Claims are streamed, so peak memory should not grow with them: add 1000000 to --claims for the
million-claim row (a 360 MB claim file of JSON lines, read with the defaults: streamed inputs are not
capped like whole documents).
Then the warm cache (docs/cache.md): per row count, the cache filled by one run of the 10k
claims, then --reps runs each of 10k NEW claims (another seed each) on the same columns, every
one checked to have scanned nothing (`stats.scans` = 0 in its JSON report).

    python3 benches/scaling.py                       # the full curve (makes 1M and 5M instances)
    python3 benches/scaling.py --rows 200000 --claims 1000,10000 --reps 3   # a quick look
    python3 benches/scaling.py --rows 1000000 --claims 10000,100000,1000000 --reps 1
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v", *map(str, cmd)], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"failed: {cmd}\n{p.stderr[-2000:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))
    return time.perf_counter() - t0, rss / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default="1000000,5000000")
    ap.add_argument("--claims", default="1000,10000,100000")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "recite-bench")
    ap.add_argument("--target-dir", type=Path, default=Path.home() / ".cache" / "recite-release")
    ap.add_argument("--no-warm", action="store_true", help="skip the warm-cache rows")
    ap.add_argument("--warm-only", action="store_true", help="only the warm-cache rows")
    ap.add_argument("--warm-claims", type=int, default=10000)
    ap.add_argument("--recite", type=Path, help="this release binary instead of building one")
    a = ap.parse_args()
    if a.recite:
        recite = a.recite
    else:
        env = dict(os.environ, CARGO_TARGET_DIR=str(a.target_dir))
        subprocess.run(["cargo", "build", "--release", "--quiet", "--no-default-features", "--features", "engine"], cwd=ROOT, env=env, check=True)
        recite = a.target_dir / "release" / "recite"
    rows_list = [int(r) for r in a.rows.split(",")]
    claims_list = [int(c) for c in a.claims.split(",")]
    if not a.warm_only:
        print(f"{'rows':>9} {'claims':>8} {'median s':>9} {'peak MB':>8}  ({a.reps} runs, {os.cpu_count()} cores)")
    for rows in [] if a.warm_only else rows_list:
        data = tracker(recite, a.workdir, rows)
        for n in claims_list:
            claims = a.workdir / f"claims-{rows}-{n}.jsonl"
            if not claims.exists():
                subprocess.run([recite, "generate", "claims", "--data", data, "--count", str(n), "-o", claims],
                               check=True, capture_output=True)
            runs = [run([recite, "check", claims, "--data", data, "--format", "json", "--no-explain",
                         "-o", a.workdir / "scaling-report.json"])
                    for _ in range(a.reps)]
            print(f"{rows:>9} {n:>8} {statistics.median(r[0] for r in runs):>9.3f} {max(r[1] for r in runs):>8.0f}",
                  flush=True)
    if not a.no_warm:
        warm(a, recite, rows_list)


def tracker(recite, workdir, rows):
    """The generated tracker of `rows` rows (made when missing)."""
    data = workdir / f"versant-{rows}"
    if not (data / "versant_flat.parquet").exists():
        subprocess.run([recite, "generate", "versant", "--rows", str(rows), "--extra-questions", "160",
                        "--row-group-size", str(max(rows // 8, 10_000)), "--out", data], check=True)
    return data


def warm(a, recite, rows_list):
    """10k new claims on cached columns: the cache filled once, then new claim sets."""
    import json
    import shutil
    n = a.warm_claims
    print(f"\nwarm cache: {n} new claims per run on cached columns")
    print(f"{'rows':>9} {'claims':>8} {'fill s':>9} {'median s':>9} {'peak MB':>8}  ({a.reps} runs)")
    for rows in rows_list:
        data = tracker(recite, a.workdir, rows)
        cache = a.workdir / f"cache-{rows}"
        shutil.rmtree(cache, ignore_errors=True)
        report = a.workdir / "warm-report.json"
        fill_claims = a.workdir / f"claims-{rows}-{n}.jsonl"
        if not fill_claims.exists():
            subprocess.run([recite, "generate", "claims", "--data", data, "--count", str(n), "-o", fill_claims],
                           check=True, capture_output=True)
        fill = run([recite, "check", fill_claims, "--data", data, "--format", "json", "--no-explain",
                    "--cache", cache, "-o", report])
        runs = []
        for rep in range(a.reps):
            claims = a.workdir / f"claims-{rows}-{n}-seed{1000 + rep}.jsonl"
            if not claims.exists():
                subprocess.run([recite, "generate", "claims", "--data", data, "--count", str(n), "--seed",
                                str(1000 + rep), "-o", claims], check=True, capture_output=True)
            runs.append(run([recite, "check", claims, "--data", data, "--format", "json", "--no-explain",
                             "--cache", cache, "-o", report]))
            stats = json.loads(report.read_text())["stats"]
            if stats["scans"] != 0:
                sys.exit(f"the warm run scanned: {stats}")
        print(f"{rows:>9} {n:>8} {fill[0]:>9.3f} {statistics.median(r[0] for r in runs):>9.3f} "
              f"{max(r[1] for r in runs):>8.0f}", flush=True)


if __name__ == "__main__":
    main()
