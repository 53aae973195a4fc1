"""Writes the SPSS test files in tests/sav/ with pyreadstat (ReadStat), a writer SPSS reads.

  labelled.sav / labelled.zsav / labelled-bytecode.sav   a small survey with every dictionary
      feature recite adopts: variable labels, value labels, user-missing discrete codes, a
      user-missing range, both together, string columns, a weight; the same rows uncompressed,
      zlib-compressed (.zsav) and bytecode-compressed (what SPSS writes by default)
  labelled.csv       the same rows, as text, for comparison
  labelled.arrow     the same rows as an Arrow IPC file (pyarrow, uncompressed)
  expected.json      numbers pandas computes on those rows with the user-missing codes applied
  versant_flat.sav   datasets/versant/versant_flat.parquet with its study.toml's labels, value
      labels and missing codes as the SPSS dictionary (bytecode-compressed)

Run through gen.sh (it installs the pinned pyreadstat); the tests read the committed output.
"""

import json
import sys
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pyreadstat

here = Path(__file__).resolve().parent
repo = here.parent.parent
out = Path(sys.argv[1]) if len(sys.argv) > 1 else here


def labelled():
    """240 respondents over 3 waves, deterministic (no random generator: plain arithmetic)."""
    n = 240
    i = np.arange(n)
    wave = 1 + i % 3
    # Satisfaction 1-5, with 8 = don't know and 9 = refused (user-missing, discrete).
    sat = 1 + (i * 7 + wave) % 5
    sat = np.where(i % 17 == 0, 8, np.where(i % 23 == 0, 9, sat))
    # Recommendation 0-10, with 97-99 = no answer of three kinds (user-missing range).
    nps = (i * 5 + 3 * wave) % 11
    nps = np.where(i % 13 == 0, 97 + i % 3, nps)
    # Income band 1-6, with -1 = not asked (discrete) and 90-99 = refused (range), both at once.
    income = 1 + (i * 11) % 6
    income = np.where(i % 19 == 0, -1, np.where(i % 29 == 0, 95, income))
    # A system-missing answer too (NaN): never data, whatever the dictionary says.
    aware = np.where(i % 31 == 0, np.nan, (i * 3) % 2).astype(float)
    weight = 0.5 + ((i * 37) % 100) / 100.0
    city = np.array(["Lyon", "Oslo", "Porto", "Graz", "Turku"])[(i * 3) % 5]
    comment = np.array(["", "fine", "too long", "ok"])[i % 4]
    df = pd.DataFrame({
        "id": (i + 1).astype(float),
        "wave": wave.astype(float),
        "sat": sat.astype(float),
        "nps": nps.astype(float),
        "income": income.astype(float),
        "aware": aware,
        "city": city,
        "comment": comment,
        "wt": weight,
    })
    meta = dict(
        file_label="recite SPSS test file",
        column_labels={
            "id": "Respondent ID",
            "wave": "Survey wave",
            "sat": "Overall satisfaction",
            "nps": "Likelihood to recommend",
            "income": "Household income band",
            "aware": "Aware of the brand",
            "city": "City of residence",
            "comment": "Open comment",
            "wt": "Survey weight",
        },
        variable_value_labels={
            "wave": {1: "W1 (January 2026)", 2: "W2 (February 2026)", 3: "W3 (March 2026)"},
            "sat": {1: "Very dissatisfied", 2: "Dissatisfied", 3: "Neutral", 4: "Satisfied",
                    5: "Very satisfied", 8: "Don't know", 9: "Refused"},
            "nps": {0: "Not at all likely", 10: "Extremely likely", 97: "Don't know",
                    98: "Refused", 99: "Not asked"},
            "income": {1: "Under 20k", 2: "20-40k", 3: "40-60k", 4: "60-80k", 5: "80-100k",
                       6: "100k or more", -1: "Not asked", 95: "Refused"},
            "aware": {0: "No", 1: "Yes"},
        },
        missing_ranges={
            "sat": [8, 9],
            "nps": [{"lo": 97, "hi": 99}],
            "income": [-1, {"lo": 90, "hi": 99}],
        },
    )
    return df, meta


def expected(df):
    """What recite must recompute from the .sav: the user-missing codes are not data."""
    valid = {
        "sat": ~df["sat"].isin([8, 9]),
        "nps": ~df["nps"].between(97, 99),
        "income": ~(df["income"].eq(-1) | df["income"].between(90, 99)),
        "aware": df["aware"].notna(),
    }
    out = {}
    for wave in (1, 2, 3):
        w = df[df["wave"] == wave]
        for col, ok in valid.items():
            rows = w[ok[w.index] & w[col].notna()]
            mean = float(np.average(rows[col], weights=rows["wt"]))
            out[f"{col}/W{wave}"] = {"n": int(len(rows)), "weighted_mean": mean}
    return out


def versant():
    study = tomllib.loads((repo / "datasets/versant/study.toml").read_text())
    columns = study["tables"][0]["columns"]
    df = pq.read_table(repo / "datasets/versant/versant_flat.parquet").to_pandas()
    df = df.astype("float64")  # SPSS numbers are doubles; nullable ints become NaN
    labels = {c: columns.get(c, {}).get("label") for c in df.columns}
    values = {
        c: {int(k): v for k, v in meta["values"].items()}
        for c, meta in columns.items()
        if meta.get("values")
    }
    missing = {c: [int(m) for m in meta["missing"]] for c, meta in columns.items() if meta.get("missing")}
    return df, dict(
        file_label=study["study"]["name"],
        column_labels=labels,
        variable_value_labels=values,
        missing_ranges=missing,
    )


def write_arrow(df, path):
    import pyarrow as pa
    import pyarrow.feather as feather

    feather.write_feather(pa.Table.from_pandas(df, preserve_index=False), path, compression="uncompressed")


def main():
    out.mkdir(parents=True, exist_ok=True)
    df, meta = labelled()
    pyreadstat.write_sav(df, out / "labelled.sav", **meta)
    pyreadstat.write_sav(df, out / "labelled.zsav", compress=True, **meta)
    pyreadstat.write_sav(df, out / "labelled-bytecode.sav", row_compress=True, **meta)
    df.to_csv(out / "labelled.csv", index=False)
    write_arrow(df, out / "labelled.arrow")
    (out / "expected.json").write_text(json.dumps(expected(df), indent=1, sort_keys=True) + "\n")
    vdf, vmeta = versant()
    pyreadstat.write_sav(vdf, out / "versant_flat.sav", row_compress=True, **vmeta)
    # Read back with pyreadstat: the dictionary made it into the file.
    _, m = pyreadstat.read_sav(out / "labelled.zsav", metadataonly=True, user_missing=True)
    assert m.missing_ranges["nps"] == [{"lo": 97.0, "hi": 99.0}], m.missing_ranges
    versions = {"pyreadstat": pyreadstat.__version__, "pandas": pd.__version__}
    (out / "versions.json").write_text(json.dumps(versions, indent=1) + "\n")
    for f in sorted(out.iterdir()):
        if f.suffix in (".py", ".sh", ".txt"):
            continue
        print(f"{f.name:24} {f.stat().st_size:>9} bytes")


main()
