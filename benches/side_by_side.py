"""Side by side, interleaved: commands run in turn, --reps times; for each the median wall
seconds, CPU seconds and peak MB (for `python` commands, the query seconds they print).

    python3 benches/side_by_side.py 3 DATA_DIR 'label=recite check C.jsonl --data {data} ...' \
        'duckdb fused=VENV/bin/python benches/duck_query.py fused {data} C.jsonl'

Used for the issue 13.3/13.4 figures in BENCHMARKS.md (binaries of two builds side by side).
"""
import os, re, statistics, subprocess, sys, time
W = os.path.expanduser("~/.cache/recite-bench")
PY = f"{W}/venv/bin/python"
def timed(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v", *map(str, cmd)], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 1):
        sys.exit(f"failed {cmd}: {p.stderr[-2000:]}")
    g = lambda k: float(re.search(k + r": ([\d.]+)", p.stderr).group(1))
    cpu = g(r"User time \(seconds\)") + g(r"System time \(seconds\)")
    return wall, cpu, g(r"Maximum resident set size \(kbytes\)") / 1024, p.stdout
def main():
    reps, data = int(sys.argv[1]), sys.argv[2]
    cases = [a.split("=", 1) for a in sys.argv[3:]]  # label=cmd (space-separated, {data} filled)
    res = {l: [] for l, _ in cases}
    for _ in range(reps):
        for label, cmd in cases:
            cmd = cmd.format(data=data).split()
            r = timed(cmd)
            if cmd[0].endswith("python"):
                r = (float(r[3].strip()), r[1], r[2], "")
            res[label].append(r)
    print(f"median of {reps}, {os.cpu_count()} cores; wall s | CPU s | peak MB")
    for label, rs in res.items():
        m = lambda i: statistics.median(r[i] for r in rs)
        print(f"{label:<40} {m(0):8.3f} {m(1):8.2f} {max(r[2] for r in rs):8.0f}   all: {' '.join(f'{r[0]:.2f}' for r in rs)}")
main()
