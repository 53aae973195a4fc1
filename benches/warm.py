#!/usr/bin/env python3
"""Warm-cache runs of several recite builds side by side: 10k new claims on cached columns.

    python3 benches/warm.py BASE=PATH NEW=PATH [...] [--rows 5000000] [--rounds 9] [--seed 51]

The cache is filled once (by the first build, from the generated claims), then each round runs
every build once in a freshly shuffled order, on new claims (three other seeds, in turn), each
run checked to have scanned nothing (`stats.scans` = 0). Holds /tmp/recite-build.lock (no build
beside it). Prints per build the median wall time, the median and range of its per-round ratio
to the first build, and its peak RSS. The data, claims and cache are made when missing under
~/.cache/recite-bench (the tracker as scaling.py makes it).
"""
import argparse, fcntl, json, random, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scaling import tracker  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("builds", nargs="+", help="NAME=PATH of a recite binary; the first is the reference")
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--claims", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--seed", type=int, default=51)
    ap.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "recite-bench")
    a = ap.parse_args()
    builds = dict(b.split("=", 1) for b in a.builds)
    first = next(iter(builds.values()))
    lock = open("/tmp/recite-build.lock", "a")
    print("waiting for /tmp/recite-build.lock", flush=True)
    fcntl.flock(lock, fcntl.LOCK_EX)
    a.workdir.mkdir(parents=True, exist_ok=True)
    data = tracker(first, a.workdir, a.rows)
    cache = a.workdir / f"warm-cache-{a.rows}"
    report = a.workdir / "warm-report.json"

    def claims(seed):
        path = a.workdir / (f"claims-{a.rows}-{a.claims}.jsonl" if seed is None
                            else f"claims-{a.rows}-{a.claims}-seed{seed}.jsonl")
        if not path.exists():
            extra = [] if seed is None else ["--seed", str(seed)]
            subprocess.run([first, "generate", "claims", "--data", data, "--count", str(a.claims), *extra,
                            "-o", path], check=True, capture_output=True)
        return path

    def run(binary, path, fill=False):
        cmd = ["/usr/bin/time", "-f", "%M", binary, "check", path, "--data", data, "--format", "json",
               "--no-explain", "--cache", cache, "-o", report]
        t = time.perf_counter()
        p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
        wall = time.perf_counter() - t
        if p.returncode not in (0, 1):  # 1: claims not reproduced (generated claims include some)
            sys.exit(f"failed {cmd}: {p.stderr[-500:]}")
        if not fill and json.loads(report.read_text())["stats"]["scans"] != 0:
            sys.exit(f"{binary} scanned on a warm cache")
        return wall, int(p.stderr.strip().splitlines()[-1]) / 1024

    run(first, claims(None), fill=True)  # fills the cache (reads it once filled)
    seeds = [claims(1000 + i) for i in range(3)]
    for b in builds.values():
        run(b, seeds[0])  # warm-up, not counted
    rng = random.Random(a.seed)
    walls = {k: [] for k in builds}
    peak = {k: 0.0 for k in builds}
    for r in range(a.rounds):
        order = list(builds)
        rng.shuffle(order)
        for k in order:
            w, m = run(builds[k], seeds[r % 3])
            walls[k].append(w)
            peak[k] = max(peak[k], m)
    ref = walls[next(iter(builds))]
    print(f"{a.claims} new claims × {a.rows} rows, warm cache, {a.rounds} rounds (seed {a.seed})")
    for k in builds:
        ratios = sorted(x / y for x, y in zip(walls[k], ref))
        print(f"{k:24} median {statistics.median(walls[k]):.3f} s  / first "
              f"{statistics.median(ratios):.2f}x ({ratios[0]:.2f}-{ratios[-1]:.2f})  peak {peak[k]:.0f} MB")


if __name__ == "__main__":
    main()
