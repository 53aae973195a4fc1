#!/usr/bin/env python3
"""The benchmark driver: paired ratios that hold on a shared machine (issue 24, item 5).

    python3 benches/driver.py --rows 5000000 --claims 10000 --rounds 10
    python3 benches/driver.py --binary ~/.cache/recite-target/debug/recite --rows 200000 --claims 1000 --rounds 5

What it does, in order:

1. Takes `flock /tmp/recite-build.lock` (the lock every build on this machine takes) for the
   whole measurement, saying so while it waits: no cargo build runs beside it. Without --binary
   it then builds recite in release into --target-dir (under the lock it holds).
2. Makes the instance as compare.py does (`recite generate versant`, `recite generate claims`,
   10% wrong) and the engines' virtual environment (DuckDB, polars, datafusion).
3. --warmup rounds, not counted; then --rounds rounds. Each round runs every engine once, in an
   order shuffled afresh from --seed (printed). The first round's outputs are checked: every
   engine's base n and Σw equal recite's (compare.check_same), the two floors agree on their
   sums (compare.check_floors).
4. Per run: wall time; user + system CPU and peak RSS from os.wait4's rusage (the child and
   its descendants); `perf stat -x, -e instructions,task-clock` when perf works (instructions
   are "not supported" without a PMU, e.g. in most VMs: then only task-clock); the busy CPU
   time of the whole machine from /proc/stat before and after.
5. Noisy neighbours: a run whose machine-wide busy CPU exceeds its own CPU by more than
   --noise × wall × cores (+ two clock ticks for /proc/stat's resolution) had company; its
   round is dropped, and the report says how many were.
6. Per kept round, paired ratios A/B of runs in the same round; for each, the median and a
   percentile-bootstrap 95% interval of the median (--resamples, seeded). Two kinds, never
   mixed:
   - whole run vs whole run: `recite check` process against each engine's process (wall, CPU,
     task-clock, instructions);
   - scan vs query: recite's scan (`timings.scan_ms` of its JSON report, `--timings`: planning,
     reading, reducing and accumulating every job) against each engine's query alone (the
     `query_seconds` engines.py times in-process: the fused query, the floors' bare scans).
   A per-claim engine (a sample of the claims, scaled) enters with its scaled wall time only.
   With --baseline (another recite build, e.g. main before a change), recite / baseline is a
   third kind: scan vs scan, beside whole run vs whole run; the two reports must be equal,
   timings aside, or the driver stops.
7. Prints a Markdown table ready for BENCHMARKS.md, and writes every raw run as JSON (--out).

Engines (--engines, comma-separated; recite is always first): recite, duckdb-fused,
duckdb-floor, datafusion-floor (the default set), duckdb-per-claim, polars-per-claim;
recite-baseline with --baseline.
Only the standard library here; the engines run in the venv's python (engines.py).
"""
import argparse
import fcntl
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare  # noqa: E402  (helpers: venv, release build, instance, result checks)

ROOT = Path(__file__).resolve().parent.parent
LOCK = Path("/tmp/recite-build.lock")
ENGINES = ["recite", "recite-baseline", "duckdb-fused", "duckdb-floor", "datafusion-floor", "duckdb-per-claim", "polars-per-claim"]
DEFAULT_ENGINES = "recite,duckdb-fused,duckdb-floor,datafusion-floor"
LABELS = {
    "recite": "recite (`check --no-explain --timings`, JSON report)",
    "recite-baseline": "recite baseline (`--baseline`: the same command, another build)",
    "duckdb-fused": "DuckDB, one fused query (+ settling in Python)",
    "duckdb-floor": "DuckDB floor (the touched columns only summed)",
    "datafusion-floor": "DataFusion floor (the same sums, Python package)",
    "duckdb-per-claim": "DuckDB, one query per claim (sample, scaled)",
    "polars-per-claim": "polars, one query per claim (sample, scaled)",
}
SHORT = {
    "recite": "recite",
    "recite-baseline": "recite baseline",
    "duckdb-fused": "DuckDB fused",
    "duckdb-floor": "DuckDB floor",
    "datafusion-floor": "DataFusion floor",
    "duckdb-per-claim": "DuckDB per claim",
    "polars-per-claim": "polars per claim",
}
HZ = os.sysconf("SC_CLK_TCK")
CORES = os.cpu_count() or 1


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def take_lock(path):
    """Holds an exclusive flock on `path` until the process ends (the file object is kept)."""
    f = open(path, "a")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        log(f"holding {path}: no build runs beside the measurement")
    except BlockingIOError:
        log(f"waiting for {path}: a build holds it ...")
        t0 = time.monotonic()
        fcntl.flock(f, fcntl.LOCK_EX)
        log(f"holding {path} after {time.monotonic() - t0:.0f} s: no build runs beside the measurement")
    return f


def busy_ticks():
    """The machine's busy CPU time in clock ticks (/proc/stat: user, nice, system, irq,
    softirq, steal; idle and iowait left out; guest time is already within user)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (v + [0] * 8)[:8]
    return user + nice + system + irq + softirq + steal


def perf_status():
    """(usable, why): whether `perf stat` counts task-clock here, and what it says of
    instructions."""
    perf = shutil.which("perf")
    if not perf:
        return False, "perf not found"
    try:
        paranoid = int(Path("/proc/sys/kernel/perf_event_paranoid").read_text())
    except OSError:
        paranoid = None
    with tempfile.NamedTemporaryFile("r", suffix=".perf") as out:
        p = subprocess.run([perf, "stat", "-x,", "-e", "instructions,task-clock", "-o", out.name, "--", "true"],
                           capture_output=True, text=True)
        counters = parse_perf(Path(out.name).read_text()) if p.returncode == 0 else {}
    if counters.get("task-clock") is None:
        return False, f"perf stat failed (perf_event_paranoid = {paranoid}): {p.stderr.strip()[:200]}"
    what = "instructions and task-clock" if counters.get("instructions") is not None else \
        "task-clock only (instructions not supported: no PMU, e.g. a VM)"
    return True, f"perf stat: {what}; perf_event_paranoid = {paranoid}"


def parse_perf(text):
    """`perf stat -x,` output: {event: value} (None where `<not supported>` or `<not counted>`)."""
    out = {}
    for line in text.splitlines():
        parts = line.split(",")
        if len(parts) < 3 or line.startswith("#"):
            continue
        value, event = parts[0], parts[2]
        event = event.split(":")[0]  # instructions:u
        try:
            out[event] = float(value)
        except ValueError:
            out[event] = None
    return out


def run_once(cmd, use_perf, workdir):
    """Runs cmd once and measures it: a dict of wall, user, sys, cpu (s), maxrss (bytes),
    instructions, task_clock (s), busy (machine-wide CPU s during the run), stderr tail."""
    perf_out = workdir / "driver.perf"
    full = [str(c) for c in cmd]
    if use_perf:
        full = ["perf", "stat", "-x,", "-e", "instructions,task-clock", "-o", str(perf_out), "--", *full]
    err_path = workdir / "driver.stderr"
    with open(os.devnull, "w") as devnull, open(err_path, "w") as err:
        b0 = busy_ticks()
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdout=devnull, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        b1 = busy_ticks()
    p.returncode = os.waitstatus_to_exitcode(status)
    stderr = err_path.read_text()[-3000:]
    if p.returncode not in (0, 1):  # recite check exits 1 when a claim is not reproduced
        sys.exit(f"failed ({p.returncode}): {' '.join(full)}\n{stderr}")
    counters = parse_perf(perf_out.read_text()) if use_perf and perf_out.exists() else {}
    tc = counters.get("task-clock")
    return {
        "wall": wall,
        "user": ru.ru_utime,
        "sys": ru.ru_stime,
        "cpu": ru.ru_utime + ru.ru_stime,
        "maxrss": ru.ru_maxrss * 1024,
        "instructions": counters.get("instructions"),
        "task_clock": tc / 1000 if tc is not None else None,  # perf reports msec
        "busy": (b1 - b0) / HZ,
    }


def command(engine, a, recite, py, data, claims, workdir):
    """The command of one engine's run, and where its output goes."""
    if engine in ("recite", "recite-baseline"):
        out = workdir / f"driver-{engine}.json"
        binary = recite if engine == "recite" else a.baseline
        return [binary, "check", claims, "--data", data, "--format", "json", "--no-explain", "--timings",
                "-o", out], out
    out = workdir / f"driver-{engine}.json"
    return [py, ROOT / "benches" / "engines.py", engine, data, claims, out, a.per_claim_sample], out


def timed_part(engine, out):
    """What one run reports of its own: recite's scan seconds, an engine's query seconds and
    scale."""
    got = json.load(open(out))
    if engine.startswith("recite"):
        return {"scan": got["timings"]["scan_ms"] / 1000}, got
    return {"query": got["query_seconds"], "scale": got.get("scale", 1.0), "sample": got.get("sample")}, got


def check_first_round(outputs):
    """The first round's outputs agree: every engine's claims with recite's, the floors' sums."""
    rec = outputs["recite"]
    if "recite-baseline" in outputs:
        # Two builds of recite: the same report, apart from the timings.
        strip = lambda r: {k: v for k, v in r.items() if k != "timings"}  # noqa: E731
        if strip(rec) != strip(outputs["recite-baseline"]):
            sys.exit("recite and the baseline build wrote different reports (timings aside)")
        log("recite and the baseline build: the same report, timings aside")
    for engine, got in outputs.items():
        if not engine.startswith("recite") and not engine.endswith("-floor"):
            compare.check_same(rec, got, engine)
    floors = {e: g for e, g in outputs.items() if e.endswith("-floor")}
    if len(floors) == 2:
        compare.check_floors(floors)


def scaled_wall(r):
    """A per-claim engine's whole run with its queries scaled to all claims."""
    return r["wall"] - r["query"] + r["query"] * r["scale"]


def bootstrap(values, resamples, rng):
    """The median of `values` and a percentile-bootstrap 95% interval of it."""
    med = statistics.median(values)
    if len(values) < 2:
        return med, med, med
    n = len(values)
    meds = sorted(statistics.median(rng.choices(values, k=n)) for _ in range(resamples))
    lo = meds[int(0.025 * (resamples - 1))]
    hi = meds[int(round(0.975 * (resamples - 1)))]
    return med, lo, hi


def ratios(kept, engines, resamples, seed):
    """Paired ratios over the kept rounds: (kind, metric, A, B, note, values, median, lo, hi)."""
    rng = random.Random(seed + 1)
    out = []
    by_round = {}
    for r in kept:
        by_round.setdefault(r["round"], {})[r["engine"]] = r

    def add(kind, metric, b, note, f):
        vals = []
        for runs in by_round.values():
            v = f(runs["recite"], runs[b])
            if v is None:
                return
            vals.append(v)
        if vals:
            out.append((kind, metric, "recite", b, note, vals, *bootstrap(vals, resamples, rng)))

    for b in engines:
        if b == "recite":
            continue
        if b == "recite-baseline":
            add("whole run", "wall", b, "", lambda x, y: x["wall"] / y["wall"])
            add("whole run", "CPU", b, "", lambda x, y: x["cpu"] / y["cpu"])
            add("whole run", "task-clock", b, "",
                lambda x, y: x["task_clock"] / y["task_clock"] if x["task_clock"] and y["task_clock"] else None)
            add("scan vs scan", "wall", b, "", lambda x, y: x["scan"] / y["scan"])
            continue
        scaled = b.endswith("-per-claim")
        note = "scaled" if scaled else ""
        if scaled:
            add("whole run", "wall", b, note, lambda x, y: x["wall"] / scaled_wall(y))
        else:
            add("whole run", "wall", b, note, lambda x, y: x["wall"] / y["wall"])
            add("whole run", "CPU", b, note, lambda x, y: x["cpu"] / y["cpu"])
            add("whole run", "task-clock", b, note,
                lambda x, y: x["task_clock"] / y["task_clock"] if x["task_clock"] and y["task_clock"] else None)
            add("whole run", "instructions", b, note,
                lambda x, y: x["instructions"] / y["instructions"] if x["instructions"] and y["instructions"] else None)
        add("scan vs query", "wall", b, note, lambda x, y: x["scan"] / (y["query"] * y["scale"]))
    return out


def profile_of(binary, built):
    if built:
        return "release"
    parts = Path(binary).resolve().parts
    return "release" if "release" in parts else "debug" if "debug" in parts else "unknown profile"


def markdown(meta, kept, engines, rows):
    """The tables for BENCHMARKS.md."""
    lines = [
        f"`python3 benches/driver.py {meta['argv']}`: {meta['claims']:,} claims × {meta['rows']:,} rows, "
        f"recite **{meta['profile']}** (`{meta['commit']}`), {meta['cores']} cores, lock held; "
        f"{meta['warmup']} warm-up round(s), {meta['kept']} of {meta['rounds']} rounds kept "
        f"({meta['dropped']} dropped: neighbours used more than {meta['noise']:.0%} of wall × cores), "
        f"order shuffled each round (seed {meta['seed']}); {meta['perf']}; {meta['when']}.",
        "",
        "| engine | wall s | CPU s | cores | task-clock s | instructions (G) | scan / query s | peak MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def med(xs):
        xs = [x for x in xs if x is not None]
        return statistics.median(xs) if xs else None

    def fmt(x, f="{:.3f}"):
        return "" if x is None else f.format(x)

    for e in engines:
        rs = [r for r in kept if r["engine"] == e]
        if not rs:
            continue
        wall, cpu = med(r["wall"] for r in rs), med(r["cpu"] for r in rs)
        ins = med(r["instructions"] for r in rs)
        part = med(r.get("scan") for r in rs) if e.startswith("recite") else med(r["query"] * r["scale"] for r in rs)
        label, tc = LABELS[e], med(r["task_clock"] for r in rs)
        if e.endswith("-per-claim"):
            # Only times scale: CPU, counters and cores of the sample are not the whole run's.
            wall = med(scaled_wall(r) for r in rs)
            label = label.replace("(sample, scaled)", f"({rs[0]['sample']} claims run, scaled)")
            cpu = tc = ins = None
        lines.append(f"| {label} | {fmt(wall)} | {fmt(cpu, '{:.2f}')} | {fmt(cpu / wall if cpu else None, '{:.2f}')} "
                     f"| {fmt(tc, '{:.2f}')} "
                     f"| {fmt(ins / 1e9 if ins else None, '{:.2f}')} | {fmt(part)} "
                     f"| {max(r['maxrss'] for r in rs) / 2**20:.0f} |")
    lines += [
        "",
        "Paired ratios, A/B within each kept round: median [bootstrap 95% interval], "
        f"{meta['resamples']:,} resamples. Whole run is process against process; scan vs query is "
        "recite's `timings.scan_ms` against the engine's query alone, timed in its process.",
        "",
        "| comparison | kind | metric | median | 95% interval | rounds |",
        "|---|---|---|---:|---:|---:|",
    ]
    for kind, metric, a, b, note, vals, m, lo, hi in rows:
        if kind == "whole run":
            what = f"{SHORT[a]} / {SHORT[b]}"
        elif kind == "scan vs scan":
            what = f"{SHORT[a]} scan / {SHORT[b]} scan"
        else:
            what = f"{SHORT[a]} scan / {SHORT[b]} query"
        if note:
            what += f" ({note})"
        lines.append(f"| {what} | {kind} | {metric} | **{m:.2f}×** | [{lo:.2f}, {hi:.2f}] | {len(vals)} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--claims", type=int, default=10_000)
    ap.add_argument("--extra-questions", type=int, default=160, help="q40 columns, for a table of ~200 columns")
    ap.add_argument("--rounds", type=int, default=10, help="measured rounds (each runs every engine once)")
    ap.add_argument("--warmup", type=int, default=1, help="rounds run first and not counted")
    ap.add_argument("--engines", default=DEFAULT_ENGINES, help=f"comma-separated, of {', '.join(ENGINES)}")
    ap.add_argument("--seed", type=int, help="the shuffles' and the bootstrap's seed (default: from the clock)")
    ap.add_argument("--noise", type=float, default=0.10,
                    help="drop a round where others' CPU exceeded this fraction of wall × cores in a run")
    ap.add_argument("--resamples", type=int, default=5000)
    ap.add_argument("--per-claim-sample", type=int, default=200)
    ap.add_argument("--no-perf", action="store_true", help="no perf stat, even where it works")
    ap.add_argument("--binary", type=Path, help="this recite binary, already built (no cargo run)")
    ap.add_argument("--baseline", type=Path,
                    help="another recite binary (e.g. built from main before a change), run as the engine "
                         "recite-baseline beside the others: its report must equal recite's (timings aside), "
                         "and recite / baseline is reported, whole run and scan against scan")
    ap.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "recite-bench")
    ap.add_argument("--target-dir", type=Path, default=Path.home() / ".cache" / "recite-release")
    ap.add_argument("--lock", type=Path, default=LOCK)
    ap.add_argument("--out", type=Path, help="raw runs as JSON (default: WORKDIR/driver-ROWS-CLAIMS.json)")
    ap.add_argument("--markdown", type=Path, help="also write the Markdown tables here")
    a = ap.parse_args()
    engines = [e.strip() for e in a.engines.split(",") if e.strip()]
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        sys.exit(f"unknown engine(s) {unknown}: choose from {ENGINES}")
    engines = ["recite"] + [e for e in engines if e not in ("recite", "recite-baseline")]
    if a.baseline:
        if not a.baseline.exists():
            sys.exit(f"--baseline {a.baseline}: no such file")
        a.baseline = a.baseline.resolve()
        engines.insert(1, "recite-baseline")
    elif "recite-baseline" in [e.strip() for e in a.engines.split(",")]:
        sys.exit("the engine recite-baseline needs --baseline PATH")
    if a.rounds < 1:
        sys.exit("--rounds must be at least 1")
    seed = a.seed if a.seed is not None else int(time.time()) % 1_000_000
    log(f"seed {seed}")
    a.workdir.mkdir(parents=True, exist_ok=True)
    py = compare.ensure_venv(a.workdir) if any(not e.startswith("recite") for e in engines) else None

    lock = take_lock(a.lock)  # held until the process ends
    recite = a.binary.resolve() if a.binary else compare.recite_binary(a.target_dir)
    data, claims = compare.instance(recite, a.workdir, a.rows, a.claims, a.extra_questions)
    use_perf, perf_why = (False, "perf not used (--no-perf)") if a.no_perf else perf_status()
    log(perf_why if use_perf else f"counters unavailable: {perf_why}")

    rng = random.Random(seed)
    runs, rounds = [], []
    total = a.warmup + a.rounds
    for i in range(total):
        warm = i < a.warmup
        order = engines[:]
        rng.shuffle(order)
        outputs, noisy = {}, []
        for pos, engine in enumerate(order):
            cmd, out = command(engine, a, recite, py, data, claims, a.workdir)
            r = run_once(cmd, use_perf, a.workdir)
            own, got = timed_part(engine, out)
            r.update(own)
            others = r["busy"] - r["cpu"]
            r.update({"round": i - a.warmup, "warmup": warm, "position": pos, "engine": engine,
                      "others_cpu": others, "noisy": others > a.noise * r["wall"] * CORES + 2 / HZ})
            if r["noisy"]:
                noisy.append(engine)
            runs.append(r)
            outputs[engine] = got
        if i == 0:
            check_first_round(outputs)
        kind = "warm-up" if warm else f"round {i - a.warmup + 1}/{a.rounds}"
        rounds.append({"round": i - a.warmup, "warmup": warm, "order": order, "noisy": noisy})
        took = " ".join(f"{r['engine']}={r['wall']:.2f}s" for r in runs[-len(order):])
        log(f"{kind}: {took}" + (f"  DROPPED (neighbours during {', '.join(noisy)})" if noisy else ""))

    dropped = {r["round"] for r in rounds if not r["warmup"] and r["noisy"]}
    kept = [r for r in runs if not r["warmup"] and r["round"] not in dropped]
    rows = ratios(kept, engines, a.resamples, seed)
    commit = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True,
                            text=True).stdout.strip() or "?"
    meta = {
        "argv": " ".join(sys.argv[1:]), "rows": a.rows, "claims": a.claims, "rounds": a.rounds, "warmup": a.warmup,
        "kept": a.rounds - len(dropped), "dropped": len(dropped), "noise": a.noise, "seed": seed,
        "resamples": a.resamples, "cores": CORES, "profile": profile_of(recite, a.binary is None),
        "binary": str(recite), "commit": commit, "perf": perf_why if use_perf else "counters unavailable: " + perf_why,
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "engines": engines,
    }
    md = markdown(meta, kept, engines, rows) if kept else "every round was dropped: no ratios\n"
    print(md)
    if a.markdown:
        a.markdown.write_text(md)
    out = a.out or a.workdir / f"driver-{a.rows}-{a.claims}.json"
    json.dump({"meta": meta, "rounds": rounds, "runs": runs,
               "ratios": [{"kind": k, "metric": m, "a": x, "b": y, "note": n, "values": v, "median": med,
                           "low": lo, "high": hi} for k, m, x, y, n, v, med, lo, hi in rows]},
              open(out, "w"), indent=2)
    log(f"raw runs: {out}")
    lock.close()


if __name__ == "__main__":
    main()
