#!/usr/bin/env python3
"""Issue 14: `recite check` on an Apache Ballista cluster on loopback, one executor vs two,
beside the local engine; every report checked equal to the local one (apart from `stats`).

    python3 benches/cluster.py --bin BIN --claims CLAIMS.jsonl --data DATA_DIR [--reps 3]

BIN is a recite built with `--features ballista` (debug is fine: dependencies are opt-level 2 in
the dev profile, so DataFusion's kernels are optimised; recite's own per-claim work is not).
Each executor runs --tasks concurrent tasks (default 1, so one executor has one core's worth of
work slots and two have two). Prints a Markdown table: wall seconds, the scan phase (`scan_ms`
from --timings), and the executors' and scheduler's CPU seconds.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request


def cpu_seconds(pid):
    """User + system CPU seconds of a live process, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick


class Cluster:
    def __init__(self, binary, executors, tasks, logs):
        self.procs = []
        self.logs = logs
        sched = self.spawn([binary, "cluster", "scheduler", "--port", "0",
                            "--min-executors", str(executors)], "scheduler")
        line = sched.stdout.readline()
        self.addr = line.split(" on ")[1].split()[0]
        for i in range(executors):
            e = self.spawn([binary, "cluster", "executor", "--scheduler", self.addr,
                            "--port", "0", "--grpc-port", "0", "--concurrent-tasks", str(tasks)],
                           f"executor-{i}")
            e.stdout.readline()
        deadline = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(f"http://{self.addr}/readyz", timeout=5) as r:
                    if r.status == 200:
                        break
            except Exception:
                pass
            if time.time() > deadline:
                raise SystemExit(f"cluster not ready; logs in {logs}")
            time.sleep(0.2)

    def spawn(self, cmd, name):
        log = open(os.path.join(self.logs, name), "w")
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
        self.procs.append(p)
        return p

    def cpu(self):
        return sum(cpu_seconds(p.pid) for p in self.procs)

    def stop(self):
        for p in self.procs:
            p.kill()
            p.wait()


def check(binary, claims, data, engine, out):
    cmd = [binary, "check", claims, "--data", data, "--format", "json", "--no-explain",
           "--timings", "--engine", engine, "-o", out]
    started = time.time()
    done = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
    wall = time.time() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{engine}: exit {done.returncode}: {done.stderr}")
    with open(out) as f:
        report = json.load(f)
    timings = report.pop("timings", None) or {}
    stats = report.pop("stats")
    return wall, timings.get("scan_ms", 0) / 1000, report, stats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--claims", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--tasks", type=int, default=1)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="recite-cluster-bench-")
    rows = {}
    local = None
    for rep in range(a.reps):
        for setup in ["local", 1, 2]:
            out = os.path.join(work, f"{setup}.json")
            if setup == "local":
                wall, scan, report, stats = check(a.bin, a.claims, a.data, "local", out)
                local = local or report
                cpu = None
            else:
                c = Cluster(a.bin, setup, a.tasks, work)
                try:
                    before = c.cpu()
                    wall, scan, report, stats = check(a.bin, a.claims, a.data, f"ballista://{c.addr}", out)
                    cpu = c.cpu() - before
                finally:
                    c.stop()
                if report != local:
                    raise SystemExit(f"{setup} executor(s): the report differs from the local one")
            rows.setdefault(setup, []).append((wall, scan, cpu, stats["rows_scanned"], stats["plans"]))
            print(f"rep {rep} {setup}: wall {wall:.2f} s, scan {scan:.2f} s, cluster CPU {cpu}", file=sys.stderr)
    print("| engine | wall s | scan s | cluster CPU s | rows scanned |")
    print("|---|---:|---:|---:|---:|")
    for setup, rs in rows.items():
        name = "local (in process)" if setup == "local" else f"{setup} executor(s) × {a.tasks} task(s)"
        med = lambda i: statistics.median(r[i] for r in rs)
        cpu = "" if setup == "local" else f"{med(2):.2f}"
        print(f"| {name} | {med(0):.2f} | {med(1):.2f} | {cpu} | {rs[0][3]:,} |")
    print()
    for setup, rs in rows.items():
        for p in rs[0][4]:
            print(f"- {setup}: {p['table']}: {p['plan']}: {p['reason']}")


if __name__ == "__main__":
    main()
