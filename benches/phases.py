#!/usr/bin/env python3
"""Where explaining's time goes: builds side by side on the every-claim-wrong claims, explained
and `--no-explain`, with `--timings`:

    python3 benches/phases.py --rounds 10 BASE=PATH FINAL=PATH

Holds /tmp/recite-build.lock (no build beside it); each round runs every (build, mode) once in
an order shuffled with a fixed seed; prints, per case, the medians of the wall, of the child's
user + system CPU and of each key of the report's `timings`, then explained / `--no-explain`
per build and (with two builds) the second / the first per mode, round by round. The data and
claims are the ones driver.py and targets.py make (~/.cache/recite-bench: run targets.py first,
which writes the every-claim-wrong claims).
"""
import argparse, fcntl, json, os, random, resource, statistics, subprocess, time
from pathlib import Path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("builds", nargs="+", help="NAME=PATH of a recite binary")
    ap.add_argument("--work", default=str(Path.home() / ".cache/recite-bench"))
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--claims", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    bins = dict(b.split("=", 1) for b in a.builds)
    data = f"{a.work}/versant-{a.rows}"
    claims = f"{a.work}/claims-{a.rows}-{a.claims}-every-wrong.jsonl"
    if not os.path.exists(claims):
        raise SystemExit(f"{claims} is missing: run benches/targets.py first")
    lock = open("/tmp/recite-build.lock", "a")
    print("waiting for /tmp/recite-build.lock", flush=True)
    fcntl.flock(lock, fcntl.LOCK_EX)
    cases = [(n, m) for n in bins for m in ("explained", "--no-explain")]
    timings = {c: [] for c in cases}
    walls = {c: [] for c in cases}
    cpus = {c: [] for c in cases}
    rng = random.Random(a.seed)
    for _ in range(a.rounds):
        order = cases[:]
        rng.shuffle(order)
        for n, m in order:
            cmd = [bins[n], "check", claims, "--data", data, "--format", "json", "--timings"]
            cmd += [m] if m.startswith("--") else []
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            p = subprocess.run(cmd, capture_output=True)
            walls[(n, m)].append(time.perf_counter() - t)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[(n, m)].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            if p.returncode not in (0, 1):
                raise SystemExit(f"failed {cmd}: {p.stderr[-500:].decode(errors='replace')}")
            report = json.loads(p.stdout)
            timings[(n, m)].append(report.get("timings") or report["stats"]["timings"])
    med = statistics.median
    print("| | " + " | ".join(f"{n} {m}" for n, m in cases) + " |")
    print("|---|" + "---:|" * len(cases))
    print("| wall s | " + " | ".join(f"{med(walls[c]):.3f}" for c in cases) + " |")
    print("| CPU s | " + " | ".join(f"{med(cpus[c]):.2f}" for c in cases) + " |")
    for k in sorted({k for ts in timings.values() for t in ts for k in t}):
        print(f"| {k} | " + " | ".join(f"{med([t.get(k, 0) for t in timings[c]]):.0f}" for c in cases) + " |")

    def ratio(name, top, bottom, of):
        r = [x / y for x, y in zip(of[top], of[bottom])]
        print(f"{name}: median {med(r):.2f}, per round {[round(x, 2) for x in r]}")

    for n in bins:
        ratio(f"{n} explained / --no-explain, wall", (n, "explained"), (n, "--no-explain"), walls)
        ratio(f"{n} explained / --no-explain, CPU", (n, "explained"), (n, "--no-explain"), cpus)
    names = list(bins)
    if len(names) == 2:
        for m in ("explained", "--no-explain"):
            ratio(f"{m}: {names[1]} / {names[0]}, wall", (names[1], m), (names[0], m), walls)


if __name__ == "__main__":
    main()
