#!/usr/bin/env python3
"""Three of issue 24's targets the driver does not measure, side by side in one sitting:

    python3 benches/targets.py [--binary PATH] [--baseline PATH] [--rounds 4] [--seed 35]

- cold `recite verify` of the bundled citation, a new process each time (21 runs);
- 10k claims × 5M rows on one core (`taskset -c 0`) against both: the threads' speed-up, of
  the whole run and of the scan alone (`timings.scan_ms`, `--timings`);
- the same with explanations against `--no-explain`: 10% of the claims wrong (the driver's
  claims), and every claim wrong (made here once, `recite generate claims --wrong 1`).

With `--baseline`, another build's explained and `--no-explain` runs join the same rounds, and
each of its cases is compared with this build's, round by round.

Holds /tmp/recite-build.lock (no build beside it), interleaves the three checks in an order
shuffled each round, and prints the medians and the per-round ratios. The data and claims are
the ones driver.py makes (~/.cache/recite-bench: run it first); the binary is the release build
driver.py and compare.py make in ~/.cache/recite-release.
"""
import argparse, fcntl, json, os, random, statistics, subprocess, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def wall(cmd, scans=None):
    """The wall seconds of `cmd`; with `--timings` in it, its report's `scan_ms` is appended
    to `scans`."""
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, cwd=ROOT)
    w = time.perf_counter() - t
    if p.returncode not in (0, 1):  # 1: a claim not reproduced (10% are made wrong)
        raise SystemExit(f"failed {cmd}: {p.stderr[-500:].decode(errors='replace')}")
    if scans is not None and "--timings" in cmd:
        report = json.loads(p.stdout)
        scans.append((report.get("timings") or report["stats"]["timings"])["scan_ms"])
    return w


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default=str(Path.home() / ".cache/recite-release/release/recite"))
    ap.add_argument("--work", default=str(Path.home() / ".cache/recite-bench"))
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--claims", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--seed", type=int, default=35)
    ap.add_argument("--baseline", help="another recite binary, run beside this one")
    a = ap.parse_args()
    lock = open("/tmp/recite-build.lock", "a")
    print("waiting for /tmp/recite-build.lock", flush=True)
    fcntl.flock(lock, fcntl.LOCK_EX)
    verify = [a.binary, "verify", "examples/citations/versant-w6-considered.json"]
    wall(verify)
    cold = sorted(wall(verify) for _ in range(21))
    print(f"cold verify: median {statistics.median(cold) * 1000:.1f} ms "
          f"(min {cold[0] * 1000:.1f}, max {cold[-1] * 1000:.1f}, 21 runs)")
    data = f"{a.work}/versant-{a.rows}"
    claims = f"{a.work}/claims-{a.rows}-{a.claims}.jsonl"
    for p in (data, claims):
        if not os.path.exists(p):
            raise SystemExit(f"{p} is missing: run benches/driver.py --rows {a.rows} --claims {a.claims} first")
    wrong = f"{a.work}/claims-{a.rows}-{a.claims}-every-wrong.jsonl"
    if not os.path.exists(wrong):
        subprocess.run([a.binary, "generate", "claims", "--data", data, "--count", str(a.claims),
                        "--wrong", "1", "-o", wrong], check=True, capture_output=True, cwd=ROOT)

    def checks(binary):
        check = [binary, "check", claims, "--data", data, "--format", "json"]
        every = [binary, "check", wrong, "--data", data, "--format", "json"]
        return {
            "both cores": [*check, "--no-explain", "--timings"],
            "one core": ["taskset", "-c", "0", *check, "--no-explain", "--timings"],
            "explained": check,
            "every wrong, --no-explain": [*every, "--no-explain"],
            "every wrong, explained": every,
        }

    cases = checks(a.binary)
    if a.baseline:
        base = checks(a.baseline)
        cases.update({f"{k} (baseline)": base[k] for k in
                      ("both cores", "explained", "every wrong, --no-explain", "every wrong, explained")})
    runs = {k: [] for k in cases}
    scans = {k: [] for k in cases}
    rng = random.Random(a.seed)
    for _ in range(a.rounds):
        order = list(cases)
        rng.shuffle(order)
        for k in order:
            runs[k].append(wall(cases[k], scans[k]))
    for k, ws in runs.items():
        print(f"{k}: median {statistics.median(ws):.2f} s, all {[round(w, 2) for w in ws]}")
    pairs = [("one core / both cores", "one core", "both cores"),
             ("explained / --no-explain", "explained", "both cores"),
             ("every wrong: explained / --no-explain", "every wrong, explained", "every wrong, --no-explain")]
    if a.baseline:
        pairs += [("baseline: explained / --no-explain", "explained (baseline)", "both cores (baseline)"),
                  ("baseline: every wrong: explained / --no-explain", "every wrong, explained (baseline)",
                   "every wrong, --no-explain (baseline)")]
        pairs += [(f"{k}: this / baseline", k, f"{k} (baseline)") for k in
                  ("both cores", "explained", "every wrong, --no-explain", "every wrong, explained")]
    for name, top, bottom in pairs:
        r = [x / y for x, y in zip(runs[top], runs[bottom])]
        print(f"{name}: median {statistics.median(r):.2f}, per round {[round(x, 2) for x in r]}")
    r = [x / y for x, y in zip(scans["one core"], scans["both cores"])]
    print(f"one core / both cores, scan_ms: median {statistics.median(r):.2f}, per round "
          f"{[round(x, 2) for x in r]} (medians {statistics.median(scans['one core']):.0f} and "
          f"{statistics.median(scans['both cores']):.0f} ms)")


if __name__ == "__main__":
    main()
