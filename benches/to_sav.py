"""Writes a generated tracker's Parquet as SPSS for the .sav scan benchmark (BENCHMARKS.md).

  python benches/to_sav.py DIR     # DIR/parquet/versant_flat.parquet -> DIR/sav/*.sav, DIR/zsav/*.zsav

Run it with the pyreadstat venv tests/sav/gen.sh makes (~/.cache/recite-sdk/sav-py-*/bin/python).
Each folder gets the Parquet study.toml with its path pointed at the SPSS file.
"""

import sys
from pathlib import Path

import pyarrow.parquet as pq
import pyreadstat

d = Path(sys.argv[1])
df = pq.read_table(d / "parquet/versant_flat.parquet").to_pandas().astype("float64")
study = (d / "parquet/study.toml").read_text()
for sub, ext, kw in [("sav", "sav", {"row_compress": True}), ("zsav", "zsav", {"compress": True})]:
    (d / sub).mkdir(exist_ok=True)
    pyreadstat.write_sav(df, d / sub / f"versant_flat.{ext}", **kw)
    (d / sub / "study.toml").write_text(study.replace('"versant_flat.parquet"', f'"versant_flat.{ext}"'))
