"""duck_query.py MODE DATA CLAIMS: prints the query seconds of DuckDB's fused query (MODE=fused) or
of the bare scan summing the touched columns (MODE=bare), in this process."""
import sys, time, json
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
import duckdb
from engines import load, fused_sql, quote
mode, data, claims_path = sys.argv[1:4]
periods, bases, missing, parquet, claims, cells = load(data, claims_path)
con = duckdb.connect()
con.execute(f"CREATE VIEW t AS SELECT * FROM read_parquet('{parquet}')")
if mode == "fused":
    sql = fused_sql(claims, periods, bases, missing, "t", cells)[0]
else:
    cols = sorted({c["source"]["column"] for c in claims} | {c["weight"] for c in claims if c.get("weight")}
                  | {"wave", "age", "gender", "region"})
    sql = "SELECT " + ", ".join(f"SUM({quote(c)})" for c in cols) + " FROM t"
t0 = time.perf_counter()
con.execute(sql).fetchall()
print(time.perf_counter() - t0)
