"""The comparison engines for benches/compare.py, run in the benchmark's virtual environment.

    python engines.py ENGINE DATA_DIR CLAIMS.jsonl OUT.json PER_CLAIM_SAMPLE

ENGINE is duckdb-fused (the same grouped sums recite computes, one query for the table),
duckdb-per-claim or polars-per-claim (one query per claim, over a sample of the claims; the
time is scaled to all claims and the scale written out). Each writes, per claim, the base n and
Σw it computed, so compare.py can check them against recite's.

duckdb-floor and datafusion-floor are the floor a fused scan is measured against: one query
that only sums every column the claims touch (see `touched_columns`), through DuckDB and through
DataFusion's Python package (the same engine recite embeds, a different version). They settle
no claim; they write the column count and one sum per column.

Over a PostgreSQL table (benches/sources.py; its DSN in RECITE_BENCH_PG_DSN, the table's name
in RECITE_BENCH_PG_TABLE): duckdb-postgres-fused (the fused query through DuckDB's postgres
extension, from the duckdb-ext-postgres package), postgres-per-claim (one query per claim on the
server, through psycopg, over a sample, scaled) and postgres-copy-floor (one COPY of the
touched columns to the client, in binary, nothing computed).
"""
import json
import os
import re
import sys
import time
import tomllib
from pathlib import Path


def quote(name):
    return '"' + name.replace('"', '""') + '"'


def load(data_dir, claims_path):
    study = tomllib.load(open(Path(data_dir) / "study.toml", "rb"))
    periods = {p["name"]: p["filter"] for p in study["periods"]}
    bases = {b["name"]: b["filter"] for b in study["bases"]}
    table = study["tables"][0]
    missing = {name: c.get("missing", []) for name, c in table.get("columns", {}).items()}
    parquet = str(Path(data_dir) / table["path"])
    claims = [json.loads(line)["citation"] for line in open(claims_path) if line.strip()]
    cells = [cell["filter"] for b in study.get("breakdowns", []) for cell in b["cells"]]
    return periods, bases, missing, parquet, claims, cells


def where(c, periods, bases, missing):
    col = c["source"]["column"]
    x = quote(col)
    parts = [f"{x} IS NOT NULL", f"({periods[c['period']]})", f"({bases[c['base']['name']].replace('{column}', x)})"]
    if missing.get(col):
        parts.append(f"{x} NOT IN ({', '.join(str(int(m)) for m in missing[col])})")
    w = c.get("weight")
    if w:
        parts.append(f"{quote(w)} > 0")
    return " AND ".join(parts)


def per_claim_sql(c, periods, bases, missing, table, double="DOUBLE"):
    """The per-code sums of one claim: everything its measures and variance need (`double`:
    the dialect's name of a float64, PostgreSQL's `DOUBLE PRECISION`)."""
    x = quote(c["source"]["column"])
    w = f"CAST({quote(c['weight'])} AS {double})" if c.get("weight") else f"CAST(1 AS {double})"
    return (f"SELECT {x} AS code, COUNT(*) AS n, SUM({w}) AS sw, SUM({w} * {w}) AS sw2 "
            f"FROM {table} WHERE {where(c, periods, bases, missing)} GROUP BY {x}")


def fused_sql(claims, periods, bases, missing, table, cells):
    """recite's grouped scan written for DuckDB: one grouping set per cited column, masks of
    the periods and of the bases cited with each column, the weights' sums."""
    period_names = sorted({c["period"] for c in claims})
    pbit = {p: i for i, p in enumerate(period_names)}
    columns = sorted({c["source"]["column"] for c in claims})
    cbases = {col: sorted({c["base"]["name"] for c in claims if c["source"]["column"] == col}) for col in columns}
    weights = sorted({c["weight"] for c in claims if c.get("weight")})
    pm = " + ".join(f"CASE WHEN ({periods[p]}) THEN {1 << i} ELSE 0 END" for p, i in pbit.items()) or "0"
    cm = " + ".join(f"CASE WHEN ({f}) THEN {1 << i} ELSE 0 END" for i, f in enumerate(cells)) or "0"
    keys = []
    for k, col in enumerate(columns):
        x = quote(col)
        bits = len(cbases[col])
        bm = " + ".join(f"CASE WHEN ({bases[b].replace('{column}', x)}) THEN {1 << j} ELSE 0 END"
                        for j, b in enumerate(cbases[col])) or "0"
        keys.append(f"CASE WHEN {x} IS NOT NULL THEN CAST({x} AS BIGINT) * {1 << bits} + ({bm}) END AS k{k}")
    ws = [f"CAST({quote(w)} AS DOUBLE) AS w{i}" for i, w in enumerate(weights)]
    aggs = ["COUNT(*) AS n"]
    for i, _ in enumerate(weights):
        aggs += [f"SUM(CASE WHEN w{i} > 0 THEN CAST(1 AS DOUBLE) END) AS n{i}", f"SUM(CASE WHEN w{i} > 0 THEN w{i} END) AS s{i}",
                 f"SUM(CASE WHEN w{i} > 0 THEN w{i} * w{i} END) AS q{i}"]
    sets = ", ".join(f"(pm, cm, k{k})" for k in range(len(columns)))
    sql = (f"SELECT pm, cm, {', '.join(f'k{k}' for k in range(len(columns)))}, {', '.join(aggs)} FROM "
           f"(SELECT ({pm}) AS pm, ({cm}) AS cm, {', '.join(keys + ws)} FROM {table}) GROUP BY GROUPING SETS ({sets})")
    return sql, pbit, columns, cbases, weights


def settle_fused(rows, names, claims, pbit, columns, cbases, weights, missing):
    """Base n and Σw of each claim from the grouped rows (as recite does in Rust)."""
    by_col = {k: [] for k in range(len(columns))}
    idx = {n: i for i, n in enumerate(names)}
    for r in rows:
        for k in range(len(columns)):
            if r[idx[f"k{k}"]] is not None:
                by_col[k].append(r)
                break
    out = {}
    for i, c in enumerate(claims):
        k = columns.index(c["source"]["column"])
        bits = len(cbases[columns[k]])
        bbit = cbases[columns[k]].index(c["base"]["name"])
        miss = set(missing.get(columns[k], []))
        wi = weights.index(c["weight"]) if c.get("weight") else None
        n = sw = 0.0
        for r in by_col[k]:
            key = r[idx[f"k{k}"]]
            code, bm = key >> bits, key & ((1 << bits) - 1)
            if not (r[idx["pm"]] >> pbit[c["period"]]) & 1 or not (bm >> bbit) & 1 or code in miss:
                continue
            if wi is None:
                n += r[idx["n"]]
                sw += r[idx["n"]]
            else:
                n += r[idx[f"n{wi}"]] or 0
                sw += r[idx[f"s{wi}"]] or 0
        out[i] = (int(round(n)), sw)
    return out


def touched_columns(parquet, claims, periods, bases, cells, schema):
    """The columns a fused scan of these claims reads: cited columns, weights, and the table's
    columns named in the period, base and breakdown-cell filters."""
    cols = {c["source"]["column"] for c in claims} | {c["weight"] for c in claims if c.get("weight")}
    filters = [periods[c["period"]] for c in claims] + [bases[c["base"]["name"]] for c in claims] + cells
    for f in set(filters):
        cols |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", f)) & schema
    return sorted(cols & schema)


def floor_sql(columns, table):
    return "SELECT " + ", ".join(f"SUM(CAST({quote(c)} AS DOUBLE)) AS s{i}" for i, c in enumerate(columns)) + f" FROM {table}"


def duckdb_with_postgres():
    """A DuckDB connection with the PostgreSQL server of RECITE_BENCH_PG_DSN attached as `pg`
    (read only), through the postgres extension the duckdb-ext-postgres package ships (DuckDB's
    own INSTALL would download it)."""
    import duckdb
    import duckdb_ext
    ext = next(Path(duckdb_ext.__path__[0]).rglob("postgres_scanner.duckdb_extension"))
    con = duckdb.connect()
    con.execute(f"LOAD '{ext}'")
    con.execute(f"ATTACH '{os.environ['RECITE_BENCH_PG_DSN']}' AS pg (TYPE postgres, READ_ONLY)")
    return con


def main():
    engine, data_dir, claims_path, out_path, sample = sys.argv[1:6]
    periods, bases, missing, parquet, claims, cells = load(data_dir, claims_path)
    sample = min(int(sample), len(claims))
    result = {"claims": {}}
    if engine == "duckdb-fused":
        import duckdb
        con = duckdb.connect()
        con.execute(f"CREATE VIEW t AS SELECT * FROM read_parquet('{parquet}')")
        sql, pbit, columns, cbases, weights = fused_sql(claims, periods, bases, missing, "t", cells)
        t0 = time.perf_counter()
        cur = con.execute(sql)
        rows = cur.fetchall()
        names = [d[0] for d in cur.description]
        result["query_seconds"] = time.perf_counter() - t0
        result["claims"] = settle_fused(rows, names, claims, pbit, columns, cbases, weights, missing)
    elif engine == "duckdb-per-claim":
        import duckdb
        con = duckdb.connect()
        con.execute(f"CREATE VIEW t AS SELECT * FROM read_parquet('{parquet}')")
        t0 = time.perf_counter()
        for i, c in enumerate(claims[:sample]):
            rows = con.execute(per_claim_sql(c, periods, bases, missing, "t")).fetchall()
            result["claims"][i] = (sum(r[1] for r in rows), sum(r[2] or 0 for r in rows))
        result["query_seconds"] = time.perf_counter() - t0
        result["scale"] = len(claims) / sample
        result["sample"] = sample
    elif engine == "polars-per-claim":
        import polars as pl
        ctx = pl.SQLContext(t=pl.scan_parquet(parquet))
        t0 = time.perf_counter()
        for i, c in enumerate(claims[:sample]):
            df = ctx.execute(per_claim_sql(c, periods, bases, missing, "t")).collect()
            result["claims"][i] = (int(df["n"].sum()), float(df["sw"].sum() or 0.0))
        result["query_seconds"] = time.perf_counter() - t0
        result["scale"] = len(claims) / sample
        result["sample"] = sample
    elif engine == "duckdb-postgres-fused":
        con = duckdb_with_postgres()
        table = f"pg.public.{quote(os.environ['RECITE_BENCH_PG_TABLE'])}"
        sql, pbit, columns, cbases, weights = fused_sql(claims, periods, bases, missing, table, cells)
        t0 = time.perf_counter()
        cur = con.execute(sql)
        rows = cur.fetchall()
        names = [d[0] for d in cur.description]
        result["query_seconds"] = time.perf_counter() - t0
        result["claims"] = settle_fused(rows, names, claims, pbit, columns, cbases, weights, missing)
    elif engine == "postgres-per-claim":
        import psycopg
        table = quote(os.environ["RECITE_BENCH_PG_TABLE"])
        with psycopg.connect(os.environ["RECITE_BENCH_PG_DSN"]) as con:
            t0 = time.perf_counter()
            for i, c in enumerate(claims[:sample]):
                rows = con.execute(per_claim_sql(c, periods, bases, missing, table, "DOUBLE PRECISION")).fetchall()
                result["claims"][i] = (sum(r[1] for r in rows), sum(r[2] or 0 for r in rows))
            result["query_seconds"] = time.perf_counter() - t0
        result["scale"] = len(claims) / sample
        result["sample"] = sample
    elif engine == "postgres-copy-floor":
        import psycopg
        table = quote(os.environ["RECITE_BENCH_PG_TABLE"])
        with psycopg.connect(os.environ["RECITE_BENCH_PG_DSN"]) as con:
            schema = {r[0] for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s",
                (os.environ["RECITE_BENCH_PG_TABLE"],)).fetchall()}
            columns = touched_columns(parquet, claims, periods, bases, cells, schema)
            t0 = time.perf_counter()
            size = 0
            with con.cursor().copy(f"COPY (SELECT {', '.join(map(quote, columns))} FROM {table}) "
                                   "TO STDOUT (FORMAT binary)") as copy:
                for block in copy:
                    size += len(block)
            result["query_seconds"] = time.perf_counter() - t0
        result["columns"] = columns
        result["bytes"] = size
    elif engine in ("duckdb-floor", "datafusion-floor"):
        if engine == "duckdb-floor":
            import duckdb
            con = duckdb.connect()
            con.execute(f"CREATE VIEW t AS SELECT * FROM read_parquet('{parquet}')")
            schema = {r[0] for r in con.execute("DESCRIBE t").fetchall()}
            columns = touched_columns(parquet, claims, periods, bases, cells, schema)
            t0 = time.perf_counter()
            sums = list(con.execute(floor_sql(columns, "t")).fetchone())
        else:
            import datafusion
            ctx = datafusion.SessionContext()
            ctx.register_parquet("t", parquet)
            schema = set(ctx.table("t").schema().names)
            columns = touched_columns(parquet, claims, periods, bases, cells, schema)
            t0 = time.perf_counter()
            row = ctx.sql(floor_sql(columns, "t")).to_pylist()[0]
            sums = [row[f"s{i}"] for i in range(len(columns))]
        result["query_seconds"] = time.perf_counter() - t0
        result["columns"] = columns
        result["sums"] = sums
    else:
        sys.exit(f"unknown engine {engine}")
    json.dump(result, open(out_path, "w"))


if __name__ == "__main__":
    main()
