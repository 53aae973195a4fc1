#!/usr/bin/env python3
"""`recite serve` under load: several builds side by side, with wrk as the load generator.

    python3 benches/serve_load.py NAME=PATH [NAME=PATH ...] [--rounds 3] [--seconds 15]
    python3 benches/serve_load.py 'cold=PATH --warm-sums 0' 'c8=PATH --concurrency 8' ...

A build is NAME=PATH, optionally followed by `recite serve` flags (split as a shell would), so
one binary may be measured under several settings in the same rounds.

Each round starts every build's server in turn (freshly shuffled order, each build's own bundled
data layer: the servers run in a scratch folder, so no ./datasets shadows it;
default limits, a ledger in a scratch folder, loopback) and drives it with wrk (one thread; wrk
is C and spends a few percent of a core at these rates, so the server is what is measured):
  verify c1    POST /v1/verify of the bundled W6 citation, 1 connection
  verify c32   the same at 32 connections
  a2a c16      A2A JSON-RPC SendMessage of the same citation as a data Part, 16 connections
then reads the server's peak resident memory (VmHWM) and stops it. Every answer must be 2xx
(wrk counts the others as errors; the table shows them). Prints the medians per build and
measurement over the rounds, as a Markdown table, and the raw rounds as JSON lines. Holds
/tmp/recite-build.lock so that no build runs beside it. Needs `wrk` (Debian's package) and
benches/wrk_post.lua beside this file.
"""
import argparse, fcntl, json, os, random, shlex, socket, statistics, subprocess, sys, tempfile, time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CITATION = ROOT / "examples/citations/versant-w6-considered.json"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(base, proc, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            sys.exit(f"the server exited with {proc.returncode} before answering /healthz")
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    sys.exit("the server did not answer /healthz within 60 s")


def peak_rss_mib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def post(url, body, headers):
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json", **headers})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def check_answers(base, a2a):
    """A 200 can still carry a JSON-RPC error: check once that each request is settled."""
    v = post(base + "/v1/verify", CITATION.read_bytes(), {})
    # The verdict counts, not the text: "REPRODUCED" is a key of every report's summary, and a
    # build reading another build's data layer answers UNVERIFIABLE at once (seen: 26k req/s).
    verdicts = (v.get("summary") or {}).get("verdicts") or {}
    if verdicts.get("REPRODUCED") != 1 or v["summary"].get("claims") != 1:
        sys.exit(f"/v1/verify did not settle the W6 citation REPRODUCED: {json.dumps(v)[:300]}")
    t = post(base + "/a2a/jsonrpc", a2a.read_bytes(), {"A2A-Version": "1.0"})
    state = (((t.get("result") or {}).get("task") or {}).get("status") or {}).get("state")
    if state != "TASK_STATE_COMPLETED":
        sys.exit(f"A2A SendMessage did not complete: {json.dumps(t)[:300]}")


def wrk(url, body, connections, seconds, header=""):
    env = dict(os.environ, BODY=str(body), CTYPE="application/json", HDR=header)
    out = subprocess.run(
        ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s",
         "-s", str(HERE / "wrk_post.lua"), url],
        env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("builds", nargs="+", help="NAME=PATH of a recite binary (default features)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=15)
    ap.add_argument("--no-lock", action="store_true",
                    help="do not take /tmp/recite-build.lock: the caller holds it (flock … python3 …)")
    a = ap.parse_args()
    builds = {name: shlex.split(rest) for name, rest in (b.split("=", 1) for b in a.builds)}
    scratch = Path(tempfile.mkdtemp(prefix="recite-load-"))
    a2a = scratch / "a2a.json"
    a2a.write_text(json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": "load", "role": "ROLE_USER",
                               "parts": [{"data": json.loads(CITATION.read_text())}]}}}))
    if not a.no_lock:
        lock = open("/tmp/recite-build.lock", "a")
        print("waiting for /tmp/recite-build.lock", file=sys.stderr, flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)
    rows = []
    for rnd in range(a.rounds):
        order = list(builds.items())
        random.shuffle(order)
        for name, (path, *flags) in order:
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            ledger = scratch / f"{name}-{rnd}.sqlite3"
            proc = subprocess.Popen([path, "serve", "--listen", f"127.0.0.1:{port}", "--ledger", str(ledger), *flags],
                                    cwd=scratch, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                wait_ready(base, proc)
                check_answers(base, a2a)
                wrk(base + "/v1/verify", CITATION, 4, 3)  # warm-up: first scans, caches, pages
                row = {"build": name, "round": rnd}
                row["verify c1"] = wrk(base + "/v1/verify", CITATION, 1, a.seconds)
                row["verify c32"] = wrk(base + "/v1/verify", CITATION, 32, a.seconds)
                row["a2a c16"] = wrk(base + "/a2a/jsonrpc", a2a, 16, a.seconds, "A2A-Version: 1.0")
                row["peak_rss_mib"] = peak_rss_mib(proc.pid)
            finally:
                proc.terminate()
                proc.wait(timeout=30)
            print(json.dumps(row), flush=True)
            rows.append(row)
    print()
    print("| build | measurement | req/s | p50 ms | p99 ms | errors | server peak RSS |")
    print("|---|---|---|---|---|---|---|")
    for name in builds:
        mine = [r for r in rows if r["build"] == name]
        rss = statistics.median(r["peak_rss_mib"] for r in mine)
        for m in ("verify c1", "verify c32", "a2a c16"):
            med = lambda k: statistics.median(r[m][k] for r in mine)
            errors = sum(r[m]["errors"] for r in mine)
            print(f"| {name} | {m} | {med('rps'):,.0f} | {med('p50_ms'):.1f} | {med('p99_ms'):.1f} "
                  f"| {errors} | {rss:.0f} MiB |")


if __name__ == "__main__":
    main()
