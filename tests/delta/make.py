"""Writes the bundled Versant table as a Delta table of three versions, with the delta-rs Python
writer (not recite's Rust reader), for tests/it/delta.rs:

    make.py SOURCE.parquet TABLE_DIR

- version 0: the Parquet file as it is (what the bundled W6 citations were computed on);
- version 1: W6 re-weighted: `main_weight` of the W6 respondents who considered Versant or went
  further (s14r5 >= 3) multiplied by 1.5 (an overwrite: every data file replaced);
- version 2: 400 late W6 interviews appended: copies of W6 respondents who considered Versant,
  with new respondent ids (the base's n and the share both move).

Each commit file's modification time is set to a fixed moment (delta-rs takes a version's time
from it), so `--as-of` and `as_of` pins have known answers: v0 2026-04-20, v1 2026-05-15, v2
2026-06-01, all 00:00:00 UTC. Prints the three versions' times, one a line.
"""

import datetime
import os
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from deltalake import write_deltalake

TIMES = ["2026-04-20T00:00:00+00:00", "2026-05-15T00:00:00+00:00", "2026-06-01T00:00:00+00:00"]


def commit_file(table_dir, version):
    return os.path.join(table_dir, "_delta_log", f"{version:020d}.json")


def main(source, table_dir):
    original = pq.read_table(source)
    write_deltalake(table_dir, original)

    # v1: the re-weighting.
    w6_considered = pc.and_(pc.equal(original["wave"], 6), pc.greater_equal(original["s14r5"], 3))
    weight = original["main_weight"]
    reweighted = pc.if_else(w6_considered, pc.multiply(weight, pa.scalar(1.5, weight.type)), weight)
    v1 = original.set_column(original.schema.get_field_index("main_weight"), "main_weight", reweighted)
    write_deltalake(table_dir, v1, mode="overwrite")

    # v2: late interviews, appended.
    late = v1.filter(w6_considered).slice(0, 400)
    ids = pa.array(range(900_000, 900_000 + late.num_rows), type=late.schema.field("respondent_id").type)
    late = late.set_column(late.schema.get_field_index("respondent_id"), "respondent_id", ids)
    write_deltalake(table_dir, late, mode="append")

    for version, when in enumerate(TIMES):
        t = datetime.datetime.fromisoformat(when).timestamp()
        os.utime(commit_file(table_dir, version), (t, t))
        print(when)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: make.py SOURCE.parquet TABLE_DIR")
    main(sys.argv[1], sys.argv[2])
