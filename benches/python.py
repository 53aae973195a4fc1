#!/usr/bin/env python3
"""The Python package against the command line and against svy (issue 47, item 4), release.

    python3 benches/python.py                                 # 1M rows, 10k claims, 7 rounds
    python3 benches/python.py --rows 200000 --claims 1000 --rounds 3   # a quick look

Cases, each run in a new process (wall, CPU and peak RSS from os.wait4), every round running
every case once in an order shuffled afresh from --seed, after one warm-up round not counted:

- `cli-verify`: `recite verify CITATION --data D --format json`, the W6 "Considered" citation
  of the bundled example over the generated 1M-row tracker (its claimed numbers set to that
  tracker's own, so it settles REPRODUCED as the bundled one does on the bundled data);
- `py-verify`: a new Python that imports recite and calls `recite.verify` on the same citation
  once (cold: a new engine) and then --warm more times in the same process (warm), printing the
  time of each call and the settlement's estimate and SE (read from `.measures`, which imports
  polars: the process's wall is no measure of the call; the calls are timed inside);
- `svy`: a new Python that imports svy and polars, reads the same four columns of the same
  Parquet file, keeps the base's rows (wave 6, age 18-74, aware) and estimates the weighted
  share of "considered" with its Taylor SE (weights only, each respondent its own PSU: the design
  recite names in `rerun.design`), cold then warm; its estimate and SE must equal recite's
  (1e-9 relative), or the script stops;
- `cli-check`: `recite check CLAIMS --data D --format json -o FILE`, 10k generated claims (10%
  wrong, explained);
- `py-gate`: a new Python that imports recite, calls `recite.check([CLAIMS], data=D)` and reads
  its exit code and summary, as a pytest gate does (no report written);
- `py-check`: a new Python that imports recite, calls `recite.check([CLAIMS], data=D)` and writes
  the JSON report (`Report.to_json()`) to a file — the same work as the command, from Python; its
  report must equal the command's, timings aside.

Paired ratios per kept round (median and a percentile-bootstrap 95% interval): py-gate /
cli-check and py-check / cli-check (the target: < 1.05), py-verify / cli-verify (whole processes), and recite's in-process
verify against svy's in-process estimate, cold and warm.

Holds /tmp/recite-build.lock for the whole measurement (every build on this machine takes it).
Without --recite/--python it builds, under that lock: the command line and the extension in one
cargo invocation into --target-dir (release; `-p recite -p recite-python` share one DataFusion
build), then a virtual environment under --workdir with the extension (`maturin develop
--release`) and svy and polars pinned below.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare  # noqa: E402  (the instance and sh)
import driver  # noqa: E402  (the lock, busy ticks, the bootstrap)

ROOT = Path(__file__).resolve().parent.parent
SVY = ["svy==0.35.0", "polars==2.1.0", "maturin==1.16.0"]


def build(a):
    """(recite binary, venv python) built in release under the lock this process holds."""
    env = dict(os.environ, CARGO_TARGET_DIR=str(a.target_dir))
    compare.sh(["cargo", "build", "--release", "--quiet", "-p", "recite", "-p", "recite-python",
                "--no-default-features", "--features", "recite/engine"], cwd=ROOT, env=env)
    venv = a.workdir / "py-venv"
    py = venv / "bin" / "python"
    if not py.exists():
        compare.sh([sys.executable, "-m", "venv", venv])
        compare.sh([py, "-m", "pip", "install", "-q", *SVY])
    compare.sh([venv / "bin" / "maturin", "develop", "--release", "--quiet", "-m", ROOT / "python" / "Cargo.toml"],
               env=dict(env, VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}:{os.environ['PATH']}"))
    return a.target_dir / "release" / "recite", py


def citation(recite, data, workdir):
    """The bundled W6 citation with the generated tracker's own base n and Considered share."""
    doc = json.load(open(ROOT / "examples" / "citations" / "versant-w6-considered.json"))
    path = workdir / "python-bench-citation.json"
    json.dump(doc, open(path, "w"))
    out = subprocess.run([recite, "verify", path, "--data", data, "--format", "json"], capture_output=True, text=True)
    claim = json.loads(out.stdout)["inputs"][0]["claims"][0]
    considered = next(m for m in claim["measures"] if m["name"] == "Considered")["estimate"]["value"]
    doc["citation"]["base"]["n"] = claim["base"]["n"]
    doc["result"]["Considered"] = f"{considered * 100:.0f}%"
    json.dump(doc, open(path, "w"))
    return path


PY_VERIFY = """
import json, sys, time
t0 = time.perf_counter()
import recite
imported = time.perf_counter() - t0
calls = []
for _ in range(1 + {warm}):
    t = time.perf_counter()
    s = recite.verify({citation!r}, data={data!r})
    calls.append(time.perf_counter() - t)
m = s.measures.filter(s.measures["measure"] == "Considered").row(0, named=True)
print(json.dumps({{"import": imported, "cold": calls[0], "warm": calls[1:], "verdict": s.verdict,
                  "value": m["recomputed"], "se": m["se"]}}))
"""

SVY_PROP = """
import json, time
t0 = time.perf_counter()
import polars as pl, svy
imported = time.perf_counter() - t0
calls = []
for _ in range(1 + {warm}):
    t = time.perf_counter()
    df = pl.read_parquet({parquet!r}, columns=["wave", "age", "s14r5", "main_weight"])
    df = df.filter((pl.col("wave") == 6) & pl.col("age").is_between(18, 74) & (pl.col("s14r5") >= 1))
    df = df.with_columns(considered=(pl.col("s14r5") >= 3).cast(pl.Int8))
    est = svy.Sample(data=df, design=svy.Design(wgt="main_weight")).estimation.prop(y="considered")
    row = est.to_polars().filter(pl.col("considered") == 1).row(0, named=True)
    calls.append(time.perf_counter() - t)
print(json.dumps({{"import": imported, "cold": calls[0], "warm": calls[1:], "value": row["est"],
                  "se": row["se"], "n": df.height}}))
"""

PY_GATE = """
import json, time
t0 = time.perf_counter()
import recite
imported = time.perf_counter() - t0
t = time.perf_counter()
r = recite.check([{claims!r}], data={data!r})
code = r.exit_code
checked = time.perf_counter() - t
print(json.dumps({{"import": imported, "check": checked, "exit_code": code, "claims": r.summary["claims"]}}))
"""

PY_CHECK = """
import json, time
t0 = time.perf_counter()
import recite
imported = time.perf_counter() - t0
t = time.perf_counter()
r = recite.check([{claims!r}], data={data!r})
checked = time.perf_counter() - t
with open({out!r}, "w", encoding="utf-8") as f:
    f.write(r.to_json())
print(json.dumps({{"import": imported, "check": checked, "total": time.perf_counter() - t}}))
"""


def commands(a, recite, py, data, claims, cit, workdir):
    parquet = str(data / "versant_flat.parquet")
    return {
        "cli-verify": [recite, "verify", cit, "--data", data, "--format", "json"],
        "py-verify": [py, "-c", textwrap.dedent(PY_VERIFY).format(warm=a.warm, citation=str(cit), data=str(data))],
        "svy": [py, "-c", textwrap.dedent(SVY_PROP).format(warm=a.warm, parquet=parquet)],
        "cli-check": [recite, "check", claims, "--data", data, "--format", "json", "-o", workdir / "py-bench-cli.json"],
        "py-gate": [py, "-c", textwrap.dedent(PY_GATE).format(claims=str(claims), data=str(data))],
        "py-check": [py, "-c", textwrap.dedent(PY_CHECK).format(claims=str(claims), data=str(data),
                                                                out=str(workdir / "py-bench-py.json"))],
    }


def run_measured(cmd):
    """One run in a new process: wall, CPU (s) and peak RSS (bytes) from os.wait4, the machine's
    busy CPU meanwhile, and what it printed."""
    b0 = driver.busy_ticks()
    t0 = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        out_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"py-bench-{os.getpid()}.out"
        with open(out_path, "w") as out:
            p = subprocess.Popen([str(c) for c in cmd], stdout=out, stderr=devnull)
            _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    b1 = driver.busy_ticks()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # verify and check exit 1 when a claim is not reproduced
        sys.exit(f"failed ({code}): {' '.join(map(str, cmd))[:300]}")
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "maxrss": ru.ru_maxrss * 1024,
            "busy": (b1 - b0) / driver.HZ, "stdout": out_path.read_text()}


SAME_REPORT = """
import json, sys
strip = lambda r: {k: v for k, v in r.items() if k != "timings"}
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if strip(a) == strip(b) else 1)
"""


def same_report(cli, py):
    """The two reports equal, timings aside; compared in a child process, so this one stays small
    (a child forked from a large parent counts the parent's pages in its peak RSS until exec)."""
    if subprocess.run([sys.executable, "-c", SAME_REPORT, str(cli), str(py)]).returncode != 0:
        sys.exit("recite.check's report differs from recite check's (timings aside)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--claims", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--warm", type=int, default=5, help="warm calls after the cold one, in one process")
    ap.add_argument("--seed", type=int, default=47)
    ap.add_argument("--noise", type=float, default=0.10)
    ap.add_argument("--resamples", type=int, default=5000)
    ap.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "recite-bench")
    ap.add_argument("--target-dir", type=Path, default=Path.home() / ".cache" / "recite-release")
    ap.add_argument("--recite", type=Path, help="a release recite binary instead of building one")
    ap.add_argument("--python", type=Path, help="a python with the recite package and svy installed")
    ap.add_argument("--lock", type=Path, default=driver.LOCK)
    a = ap.parse_args()
    a.workdir.mkdir(parents=True, exist_ok=True)
    held = driver.take_lock(a.lock)  # noqa: F841  (kept to the end)
    if a.recite and a.python:
        recite, py = a.recite, a.python
    else:
        recite, py = build(a)
    data, claims = compare.instance(recite, a.workdir, a.rows, a.claims)
    cit = citation(recite, data, a.workdir)
    cases = commands(a, recite, py, data, claims, cit, a.workdir)
    rng = random.Random(a.seed)
    print(f"seed {a.seed}; {a.rows:,} rows, {a.claims:,} claims; {a.rounds} rounds after 1 warm-up; "
          f"{os.cpu_count()} cores", file=sys.stderr)
    rounds, dropped = [], 0
    for i in range(a.rounds + 1):
        order = list(cases)
        rng.shuffle(order)
        got = {name: run_measured(cases[name]) for name in order}
        if i == 0:
            rec, sv = json.loads(got["py-verify"]["stdout"]), json.loads(got["svy"]["stdout"])
            for k in ("value", "se"):
                if abs(rec[k] - sv[k]) > 1e-9 * abs(sv[k]):
                    sys.exit(f"recite and svy differ on {k}: {rec[k]!r} against {sv[k]!r}")
            print(f"recite {rec['verdict']}: {rec['value']:.12f} (SE {rec['se']:.12f}); "
                  f"svy {sv['value']:.12f} (SE {sv['se']:.12f}) on {sv['n']:,} base rows: equal to 1e-9",
                  file=sys.stderr)
            same_report(a.workdir / "py-bench-cli.json", a.workdir / "py-bench-py.json")
            print("recite.check's report equals recite check's, timings aside", file=sys.stderr)
            continue
        noisy = any(r["busy"] - r["cpu"] > a.noise * r["wall"] * os.cpu_count() + 2 / driver.HZ for r in got.values())
        if noisy:
            dropped += 1
            continue
        rounds.append(got)
    if not rounds:
        sys.exit(f"every round had company ({dropped} dropped): nothing to report")
    med = lambda xs: statistics.median(xs)  # noqa: E731
    inner = {n: [json.loads(r[n]["stdout"]) for r in rounds] for n in ("py-verify", "svy", "py-check")}
    boot = random.Random(a.seed + 1)

    def ratio(name, values):
        m, lo, hi = driver.bootstrap(values, a.resamples, boot)
        return f"| {name} | **{m:.3f}×** [{lo:.3f}, {hi:.3f}] |"

    print(f"\n{len(rounds)} rounds kept, {dropped} dropped for company (seed {a.seed})\n")
    print("| case (new process each) | median wall | median CPU | peak RSS |")
    print("|---|---|---|---|")
    for n in cases:
        print(f"| `{n}` | {med([r[n]['wall'] for r in rounds]):.3f} s | {med([r[n]['cpu'] for r in rounds]):.3f} s "
              f"| {med([r[n]['maxrss'] for r in rounds]) / 2**20:.0f} MB |")
    print("\n| in process | median |")
    print("|---|---|")
    for n, label in (("py-verify", "recite.verify"), ("svy", "svy prop (read, filter, estimate)")):
        xs = inner[n]
        print(f"| import ({n}) | {med([x['import'] for x in xs]) * 1000:.0f} ms |")
        print(f"| {label}, cold | {med([x['cold'] for x in xs]) * 1000:.1f} ms |")
        print(f"| {label}, warm | {med([w for x in xs for w in x['warm']]) * 1000:.1f} ms |")
    print(f"| recite.check, {a.claims:,} claims | {med([x['check'] for x in inner['py-check']]):.3f} s |")
    print(f"| recite.check + to_json written | {med([x['total'] for x in inner['py-check']]):.3f} s |")
    print("\n| ratio (paired per round) | median [95% CI] |")
    print("|---|---|")
    print(ratio("py-gate / cli-check, wall (recite.check and its exit code, as a pytest gate uses it)",
                [r["py-gate"]["wall"] / r["cli-check"]["wall"] for r in rounds]))
    print(ratio("py-check / cli-check, wall (target < 1.05)", [r["py-check"]["wall"] / r["cli-check"]["wall"] for r in rounds]))
    print(ratio("py-check / cli-check, CPU", [r["py-check"]["cpu"] / r["cli-check"]["cpu"] for r in rounds]))
    print(ratio("py-verify / cli-verify, wall (a new Python, its imports (polars for `.measures`) and 6 calls, against one CLI process)",
                [r["py-verify"]["wall"] / r["cli-verify"]["wall"] for r in rounds]))
    pv, sv = inner["py-verify"], inner["svy"]
    print(ratio("recite.verify / svy, in process, cold", [p["cold"] / s["cold"] for p, s in zip(pv, sv)]))
    print(ratio("recite.verify / svy, in process, warm",
                [med(p["warm"]) / med(s["warm"]) for p, s in zip(pv, sv)]))


if __name__ == "__main__":
    main()
