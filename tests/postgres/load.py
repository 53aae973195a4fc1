"""Writes a table file as PostgreSQL loads it, with pyarrow (not recite):

    load.py SOURCE TABLE OUT_DIR

SOURCE is a Parquet or CSV file. Writes OUT_DIR/TABLE.csv (pyarrow's CSV writer: a header row,
empty for null) and prints the SQL that makes and fills the table: a CREATE TABLE whose column
types are the PostgreSQL types of the Arrow types (int8 and int16 as smallint, PostgreSQL has no
one-byte integer; int32 integer; int64 bigint; float64 double precision; strings text), then a
psql \\copy of the CSV.
"""

import os
import sys

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

TYPES = [
    (pa.types.is_int8, "smallint"),
    (pa.types.is_int16, "smallint"),
    (pa.types.is_int32, "integer"),
    (pa.types.is_int64, "bigint"),
    (pa.types.is_float32, "real"),
    (pa.types.is_float64, "double precision"),
    (pa.types.is_boolean, "boolean"),
    (pa.types.is_string, "text"),
    (pa.types.is_large_string, "text"),
    (pa.types.is_date32, "date"),
]


def pg_type(t):
    for test, name in TYPES:
        if test(t):
            return name
    raise SystemExit(f"load.py: no PostgreSQL type for Arrow's {t}")


def main(source, table, out_dir):
    data = pq.read_table(source) if source.endswith(".parquet") else pacsv.read_csv(source)
    csv = os.path.join(out_dir, f"{table}.csv")
    pacsv.write_csv(data, csv)
    columns = ",\n  ".join(f'"{f.name}" {pg_type(f.type)}' for f in data.schema)
    print(f"CREATE TABLE {table} (\n  {columns}\n);")
    print(f"\\copy {table} FROM '{csv}' WITH (FORMAT csv, HEADER true)")
    print(f"ANALYZE {table};")


if __name__ == "__main__":
    main(*sys.argv[1:])
