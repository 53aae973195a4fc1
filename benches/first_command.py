#!/usr/bin/env python3
"""The newcomer's first command, from a clean clone: how long the README's two commands take.

    python3 benches/first_command.py REV [REV ...] [--keep] [--no-test]

For each git revision (of this checkout's repository), one after the other: a clean clone in a
temporary folder and an empty target folder, then the README's first command with cargo's
timings (`cargo run --timings -- verify examples/citations/versant-w6-considered.json`), then
the README's `cargo test`, each timed by the wall clock. Holds /tmp/recite-build.lock for the
whole run, so no other build here shares the two cores (a build beside it would be measured
too). cargo's registry must already hold the crates' sources (`cargo fetch` once): downloading is
not what is measured.

Prints, per revision: the first command's wall time, its exit status and verdict, cargo's own
count of compiled units and their summed time (CPU-ish seconds: what a second core cannot hide),
the 25 costliest crates, and `cargo test`'s wall time and totals; then, when two revisions were
given, which crates the later one no longer compiles and what the crates both compile cost in
each. Keeps each revision's `cargo-timing.html` beside the output (`first-command-REV.html`).
A run takes about 20 minutes a revision on a 2-core machine.
"""
import argparse
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

FIRST = ["cargo", "run", "--timings", "--", "verify", "examples/citations/versant-w6-considered.json"]


def units_of(html):
    m = re.search(r"const UNIT_DATA = (\[.*?\]);\n", html, re.S)
    if not m:
        sys.exit("first_command.py: no UNIT_DATA in cargo's timings page (has its format changed?)")
    per_crate = defaultdict(float)
    for u in json.loads(m.group(1)):
        per_crate[(u["name"], u["version"])] += u["duration"]
    return per_crate


def measure(repo, rev, keep, test, out_dir):
    work = Path(tempfile.mkdtemp(prefix=f"first-{rev}-"))
    try:
        clone = work / "recite"
        subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "-q", rev], check=True)
        # The bundled `shared/` the tests read sits beside the checkout, as in CI.
        shared = Path(repo).resolve().parent / "shared"
        if shared.exists():
            (work / "shared").symlink_to(shared)
        env = dict(os.environ, CARGO_TARGET_DIR=str(work / "target"), CARGO_TERM_COLOR="never")
        env.pop("RUSTC_WORKSPACE_WRAPPER", None)
        t = time.monotonic()
        first = subprocess.run(FIRST, cwd=clone, env=env, capture_output=True, text=True)
        first_s = time.monotonic() - t
        timings = work / "target/cargo-timings/cargo-timing.html"
        if first.returncode not in (0, 1) or not timings.exists():
            # 0 and 1 are verdicts (REPRODUCED, not reproduced); anything else is a failed build or run.
            sys.exit(f"first_command.py: {rev}: the first command exited {first.returncode}:\n{first.stderr[-3000:]}")
        verdict = next((v for v in ("REPRODUCED", "DISCREPANT", "UNVERIFIABLE") if v in first.stdout), "no verdict")
        html = timings.read_text()
        (out_dir / f"first-command-{rev}.html").write_text(html)
        result = {"rev": rev, "first_s": first_s, "first_exit": first.returncode, "verdict": verdict,
                  "units": units_of(html)}
        if test:
            t = time.monotonic()
            tests = subprocess.run(["cargo", "test"], cwd=clone, env=env, capture_output=True, text=True)
            result["test_s"] = time.monotonic() - t
            result["test_exit"] = tests.returncode
            passed = failed = 0
            for line in (tests.stdout + tests.stderr).splitlines():
                m = re.match(r"test result: \w+\. (\d+) passed; (\d+) failed", line)
                if m:
                    passed += int(m.group(1))
                    failed += int(m.group(2))
            result["tests"] = (passed, failed)
            result["skipped"] = (tests.stdout + tests.stderr).count("SKIPPED ")
        return result
    finally:
        if keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def report(r):
    units = r["units"]
    print(f"\n## {r['rev']}")
    print(f"first command: {r['first_s']:.0f} s ({r['first_s'] / 60:.1f} min), exit {r['first_exit']}, {r['verdict']}")
    print(f"compiled: {len(units)} crates, {sum(units.values()):.0f} s summed over units")
    for (name, version), secs in sorted(units.items(), key=lambda kv: -kv[1])[:25]:
        print(f"  {secs:6.1f} s  {name} {version}")
    if "test_s" in r:
        p, f = r["tests"]
        print(f"cargo test: {r['test_s']:.0f} s, exit {r['test_exit']}, {p} passed, {f} failed, {r['skipped']} SKIPPED lines")


def compare(a, b):
    ua, ub = a["units"], b["units"]
    gone = {k: v for k, v in ua.items() if k not in ub}
    both = [k for k in ua if k in ub]
    print(f"\n## {a['rev']} -> {b['rev']}")
    print(f"first command: {a['first_s']:.0f} s -> {b['first_s']:.0f} s ({b['first_s'] / a['first_s']:.2f}x)")
    print(f"units summed: {sum(ua.values()):.0f} s -> {sum(ub.values()):.0f} s")
    print(f"no longer compiled: {len(gone)} crates, {sum(gone.values()):.0f} s; the costliest:")
    for (name, version), secs in sorted(gone.items(), key=lambda kv: -kv[1])[:15]:
        print(f"  {secs:6.1f} s  {name} {version}")
    sa, sb = sum(ua[k] for k in both), sum(ub[k] for k in both)
    print(f"compiled by both: {len(both)} crates, {sa:.0f} s -> {sb:.0f} s ({sb / sa:.2f}x)")
    if "test_s" in a and "test_s" in b:
        print(f"cargo test after it: {a['test_s']:.0f} s -> {b['test_s']:.0f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("revs", nargs="+", help="git revisions of this repository, measured in this order")
    ap.add_argument("--keep", action="store_true", help="keep each clone and target folder")
    ap.add_argument("--no-test", action="store_true", help="the first command only")
    ap.add_argument("--out", default=".", help="folder for the timings pages (default: here)")
    args = ap.parse_args()
    repo = Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                               check=True).stdout.strip())
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    lock = open("/tmp/recite-build.lock", "a")
    print("waiting for /tmp/recite-build.lock", flush=True)
    fcntl.flock(lock, fcntl.LOCK_EX)
    results = []
    for rev in args.revs:
        print(f"measuring {rev} from a clean clone ...", flush=True)
        results.append(measure(repo, rev, args.keep, not args.no_test, out_dir))
        report(results[-1])
    for a, b in zip(results, results[1:]):
        compare(a, b)


if __name__ == "__main__":
    main()
