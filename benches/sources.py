#!/usr/bin/env python3
"""The data sources side by side (issue 48, item 5): the same tracker and the same claims read
from a Parquet file, a Delta Lake table and a PostgreSQL table.

    python3 benches/sources.py --binary PATH --rows 5000000 --claims 10000 --rounds 5

PATH is a recite built with `--features postgres,delta` (without --binary it is built here, in
release, under the lock). What it does, in order:

1. Takes `flock /tmp/recite-build.lock` for the whole measurement (no build runs beside it):
   with --binary after step 3 (making and loading the data times nothing), else first.
2. Makes the instance as compare.py does (`recite generate versant`, `recite generate claims`,
   10% wrong) under --workdir, and a virtual environment there with the pinned clients below.
3. Starts a throwaway PostgreSQL cluster with tests/postgres/cluster.sh (Debian's server, as
   .ci/run uses it: initdb in a temporary folder, a loopback port, stopped when this process
   ends) and loads the tracker into it with tests/postgres/load.py and psql's \\copy; makes the
   same file a Delta table of one version with the delta-rs Python package (`deltalake`'s
   convert_to_deltalake: the Parquet file copied into the table's folder, a log written for it).
4. Three data layers of the same study.toml, the table's `path` changed: the Parquet file, the
   Delta table, the server's table (through `[connections]`).
5. --rounds rounds after one warm-up, each running every engine once in an order shuffled from
   --seed:
   - recite over Parquet, over Delta, over PostgreSQL (`check --no-explain`, JSON report;
     over PostgreSQL one pushed-down query per table);
   - DuckDB's fused query (the grouped sums recite computes, one query) over the server's table
     through DuckDB's postgres extension (the duckdb-ext-postgres package: DuckDB's own INSTALL
     downloads it from a host this machine cannot reach);
   - one query per claim on the server (psycopg), over --per-claim-sample claims, its time
     scaled to all claims;
   - the transfer floor: one binary COPY of the columns the claims touch to the client.
6. Checks the first round: the three recite reports are equal but for their data layer's path,
   data versions and timings; DuckDB's and the per-claim queries' base n and Σw equal recite's (compare.check_same).
7. Prints the median wall time of each, its ratio to recite over PostgreSQL, and the median and
   range of the per-round ratio Delta / Parquet (recite's whole runs and its scans alone).
"""
import argparse
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare  # noqa: E402  (instance, check_same)
import driver  # noqa: E402  (take_lock)

ROOT = Path(__file__).resolve().parent.parent
PINS = ["duckdb==1.4.4", "duckdb-ext-postgres==1.4.4.20260205", "psycopg[binary]==3.3.9", "pyarrow==26.0.1",
        "deltalake==1.6.6"]
TABLE = "versant_flat"
PASSWORD = "recite-test-password"  # cluster.sh's role `recite`, a throwaway cluster
RECITE = ["recite-parquet", "recite-delta", "recite-postgres"]
OTHERS = ["duckdb-postgres-fused", "postgres-per-claim", "postgres-copy-floor"]
LABELS = {
    "recite-parquet": "recite, Parquet file",
    "recite-delta": "recite, Delta table (latest version)",
    "recite-postgres": "recite, PostgreSQL table (one pushed-down query)",
    "duckdb-postgres-fused": "DuckDB postgres extension, one fused query",
    "postgres-per-claim": "PostgreSQL, one query per claim (sample, scaled)",
    "postgres-copy-floor": "floor: binary COPY of the touched columns",
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def venv(workdir):
    py = workdir / "sources-venv" / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(py.parent.parent)], check=True)
    have = subprocess.run([str(py), "-m", "pip", "freeze"], capture_output=True, text=True).stdout.lower()
    if any(p.replace("[binary]", "").lower() not in have for p in PINS):
        subprocess.run([str(py), "-m", "pip", "install", "-q", *PINS], check=True)
    return py


def build(workdir):
    target = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache" / "recite-target"))
    subprocess.run(["cargo", "build", "--release", "--features", "postgres,delta"], cwd=ROOT, check=True)
    out = workdir / "recite-sources"
    shutil.copy(target / "release" / "recite", out)
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(workdir, py, parquet):
    """A throwaway cluster with the tracker loaded as TABLE: (dsn, cluster folder)."""
    import tempfile
    folder = Path(tempfile.mkdtemp(prefix="recite-sources-pg-"))
    port = free_port()
    log(f"starting PostgreSQL on 127.0.0.1:{port} in {folder}")
    subprocess.run([ROOT / "tests/postgres/cluster.sh", "start", folder, str(port), py, str(os.getpid())], check=True)
    sql = subprocess.run([py, ROOT / "tests/postgres/load.py", parquet, TABLE, folder], check=True,
                         capture_output=True, text=True).stdout
    # The bundled tables of cluster.sh are called versant_flat too: the tracker replaces it.
    (folder / "big.sql").write_text(f"SET ROLE recite;\nDROP TABLE IF EXISTS {TABLE};\n{sql}")
    if os.getuid() == 0:
        subprocess.run(["chown", "nobody", folder / f"{TABLE}.csv", folder / "big.sql"], check=True)
    t0 = time.perf_counter()
    psql = Path(subprocess.run(["bash", "-c", "ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1"],
                               capture_output=True, text=True, check=True).stdout.strip()) / "psql"
    subprocess.run([psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", folder, "-p", str(port), "-U", "postgres",
                    "-d", "surveys", "-f", folder / "big.sql"], check=True)
    (folder / f"{TABLE}.csv").unlink()
    size = subprocess.run([ROOT / "tests/postgres/cluster.sh", "sql", folder, str(port),
                           f"SELECT pg_size_pretty(pg_total_relation_size('{TABLE}'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    log(f"loaded {TABLE} in {time.perf_counter() - t0:.0f} s ({size} on the server)")
    return f"postgres://recite:{PASSWORD}@127.0.0.1:{port}/surveys?sslmode=disable", folder, size


def write_delta(py, parquet, out):
    """The Parquet file as a Delta table of one version: the very file copied into the table's
    folder and a log written for it by delta-rs (`convert_to_deltalake`), so the two paths read
    the same bytes and only the reading differs."""
    if (out / "_delta_log").is_dir():
        return
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(parquet, out / parquet.name)
    code = "import sys; from deltalake import convert_to_deltalake; convert_to_deltalake(sys.argv[1])"
    subprocess.run([py, "-c", code, out], check=True)


def layers(workdir, data):
    """The three data layers: {engine: (data folder, extra environment)}."""
    toml = (data / "study.toml").read_text()
    line = f'path = "{TABLE}.parquet"'
    assert line in toml, f"no {line} in {data / 'study.toml'}"
    out = {"recite-parquet": data}
    for name, path in [("recite-delta", f'path = "{TABLE}_delta"'),
                       ("recite-postgres", f'connection = "bench"\npath = "{TABLE}"')]:
        study = workdir / f"layer-{name}" / "versant"
        study.mkdir(parents=True, exist_ok=True)
        text = toml.replace(line, path, 1)
        if name == "recite-postgres":
            text += '\n[connections.bench]\ndsn_env = "RECITE_BENCH_PG_DSN"\n'
        (study / "study.toml").write_text(text)
        out[name] = study.parent
    delta = out["recite-delta"] / "versant" / f"{TABLE}_delta"
    return out, delta


def without_versions(value):
    """A report without what differs between the data layers: where the layer is, the data
    versions (Delta's version, the server's snapshot, the files' digests) and the timings."""
    drop = ("data_layer", "data_version", "files", "timings")
    if isinstance(value, dict):
        return {k: without_versions(v) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [without_versions(v) for v in value]
    return value


def run(cmd, env):
    t0 = time.perf_counter()
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 1):  # 1: some generated claims are wrong on purpose
        sys.exit(f"failed: {cmd}\n{p.stderr[-3000:]}")
    return wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", type=Path, help="a recite built with --features postgres,delta")
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--claims", type=int, default=10_000)
    ap.add_argument("--extra-questions", type=int, default=20, help="q40 columns beyond the tracker's own")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--per-claim-sample", type=int, default=20)
    ap.add_argument("--seed", type=int, default=48)
    ap.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "recite-bench-sources")
    ap.add_argument("--out", type=Path, help="write every run as JSON here")
    ap.add_argument("--no-lock", action="store_true",
                    help="a smoke run beside builds (with --binary): checks everything, times nothing worth quoting")
    a = ap.parse_args()
    if a.no_lock and not a.binary:
        sys.exit("--no-lock needs --binary: nothing is built without the lock")
    a.workdir.mkdir(parents=True, exist_ok=True)
    # With a binary given, the data is made and loaded before the lock is taken (no timing
    # then, and a shorter hold for the builds waiting); a build is made under it.
    lock = None if a.no_lock or a.binary else driver.take_lock(driver.LOCK)
    recite = a.binary or build(a.workdir)
    py = venv(a.workdir)
    data, claims = compare.instance(recite, a.workdir, a.rows, a.claims, a.extra_questions)
    parquet = data / f"{TABLE}.parquet"
    data_layers, delta = layers(a.workdir, data)
    t0 = time.perf_counter()
    write_delta(py, parquet, delta)
    log(f"Delta table at {delta} ({time.perf_counter() - t0:.0f} s)")
    dsn, cluster, size = start_server(a.workdir, py, parquet)
    env = dict(os.environ, RECITE_BENCH_PG_DSN=dsn, RECITE_BENCH_PG_TABLE=TABLE)
    if lock is None and not a.no_lock:
        lock = driver.take_lock(driver.LOCK)  # noqa: F841  (held until the process ends)
    report = {e: a.workdir / f"{e}.json" for e in RECITE + OTHERS}
    worker = ROOT / "benches" / "engines.py"

    def once(engine):
        if engine in RECITE:
            cmd = [recite, "check", claims, "--data", data_layers[engine], "--format", "json", "--no-explain",
                   "--timings", "-o", report[engine]]
            wall = run(cmd, env)
            got = json.loads(report[engine].read_text())
            return {"wall": wall, "scan": got["timings"]["scan_ms"] / 1000}
        cmd = [py, worker, engine, data, claims, report[engine], a.per_claim_sample]
        wall = run(cmd, env)
        got = json.loads(report[engine].read_text())
        scale = got.get("scale", 1.0)
        query = got["query_seconds"]
        return {"wall": wall - query + query * scale, "query": query * scale, "scaled": scale != 1.0}

    engines = RECITE + OTHERS
    rng = random.Random(a.seed)
    runs = {e: [] for e in engines}
    for r in range(a.rounds + 1):
        order = list(engines)
        rng.shuffle(order)
        log(f"round {r}{' (warm-up)' if r == 0 else ''}: {', '.join(order)}")
        for e in order:
            got = once(e)
            if r > 0:
                runs[e].append(got)
        if r == 0:
            reports = {e: json.loads(report[e].read_text()) for e in RECITE}
            base = without_versions(reports["recite-parquet"])
            for e in RECITE[1:]:
                if without_versions(reports[e]) != base:
                    sys.exit(f"{e}: its report differs from the Parquet file's (data versions and timings aside)")
            log("the three recite reports agree (data versions and timings aside)")
            for e in ["duckdb-postgres-fused", "postgres-per-claim"]:
                compare.check_same(reports["recite-postgres"], json.loads(report[e].read_text()), e)
    floor = json.loads(report["postgres-copy-floor"].read_text())

    med = {e: statistics.median(x["wall"] for x in runs[e]) for e in engines}
    ref = med["recite-postgres"]
    print(f"\n{a.claims} claims over a {a.rows}-row table ({size} in PostgreSQL), median of {a.rounds} rounds, "
          f"{os.cpu_count()} cores")
    names = {}
    for e in engines:
        note = f", {a.per_claim_sample} of them" if runs[e][0].get("scaled") else ""
        if e == "postgres-copy-floor":
            note = f" ({len(floor['columns'])} columns, {floor['bytes'] / 2**20:.0f} MB)"
        names[e] = LABELS[e].replace("(sample, scaled)", f"(scaled{note})") if note.startswith(",") else LABELS[e] + note
    width = max(len(n) for n in names.values())
    print(f"| {'engine':<{width}} | {'median wall s':>13} | {'vs recite on PostgreSQL':>23} |")
    print(f"|{'-' * (width + 2)}|{'-' * 14}:|{'-' * 24}:|")
    for e in engines:
        print(f"| {names[e]:<{width}} | {med[e]:>13.2f} | {med[e] / ref:>22.2f}x |")
    for what, key in [("whole runs", "wall"), ("scans alone (timings.scan_ms)", "scan")]:
        ratios = sorted(d[key] / p[key] for d, p in zip(runs["recite-delta"], runs["recite-parquet"]))
        print(f"recite Delta / Parquet, {what}: median {statistics.median(ratios):.3f}x "
              f"(range {ratios[0]:.3f}-{ratios[-1]:.3f}, {len(ratios)} rounds)")
    if a.out:
        json.dump({"rows": a.rows, "claims": a.claims, "rounds": a.rounds, "seed": a.seed, "server_size": size,
                   "runs": runs}, open(a.out, "w"), indent=2)
    subprocess.run([ROOT / "tests/postgres/cluster.sh", "stop", cluster], check=False)


if __name__ == "__main__":
    main()
