#!/usr/bin/env python3
"""The truth of cited claims, computed by a second engine (DuckDB) from the same files.

    claims.py [--series] DATA CLAIMS.jsonl

DATA is a data layer (one folder per study, each with a study.toml); CLAIMS.jsonl holds one
`{"citation": ...}` (or `{"result": ..., "citation": ...}`) per line. For each line, one JSON
line on standard output:

    {"n": rows in the base, "weighted": their sum of weights, "effective": (Σw)² / Σw² (Kish),
     "measures": [{"name": ..., "unit": "proportion" | "points" | "value", "value": ... | null}]}

With --series, each line is instead `{"series": [{"period": ..., n, weighted, effective,
measures}, ...]}`: the citation's truth on every period its study declares, in the declared
order (the period it cites among them), as recite's series across periods should be.

Nothing of recite is used: the study.toml is read with tomllib, the period and base filters are
handed to DuckDB as the SQL they are, and the extractors' measures are written out below from
their definitions (extractors/*.toml and docs/semantics.md), not read from recite's registry:

- the base is the rows of the period and base filters whose cited column is neither null nor a
  declared missing code (`missing`, `missing_ranges`); a weight of 1 when the citation names none;
- a share is Σw over the rows meeting its predicate / Σw; a ratio Σw(a) / Σw(b) (none when
  Σw(b) is 0); a mean Σw·x / Σw; NPS 100 × (share 9-10 − share 0-6), in points;
- the labelled codes are the value labels less the missing codes, in code order; a column's
  scale is its `scale`, else the lowest and highest labelled code.

Only the extractors the claim generator cites (recite::claimset) and extractShare are known;
any other function is an error, so the oracle never guesses.
"""

import json
import sys
import tomllib
from pathlib import Path

import duckdb


def num(c):
    """A code as SQL and as recite's labels write it: 3, not 3.0."""
    return str(int(c)) if float(c).is_integer() else repr(float(c))


def labelled(col):
    """[(code, label)] of the labelled codes that are not missing codes, by code."""
    out = []
    for k, label in col.get("values", {}).items():
        try:
            c = float(k)
        except ValueError:
            continue
        if not missing(col, c):
            out.append((c, label))
    return sorted(out)


def missing(col, c):
    return c in [float(m) for m in col.get("missing", [])] or any(
        lo <= c <= hi for lo, hi in col.get("missing_ranges", [])
    )


def scale(col):
    if "scale" in col:
        return [float(v) for v in col["scale"]]
    codes = labelled(col)
    return [codes[0][0], codes[-1][0]] if codes else None


def measures(function, col):
    """[(name, unit, kind, args)] of a function over one column."""
    codes = labelled(col)
    if function == "extractDistribution":
        return [(label, "proportion", "share", f"x = {num(c)}") for c, label in codes]
    if function == "extractFunnel":
        # Stages from the second code (everyone reached the first), then each step between two.
        stages = codes[1:]
        out = [(label, "proportion", "share", f"x >= {num(c)}") for c, label in stages]
        for (c, label), (n, next_label) in zip(stages, stages[1:]):
            out.append((f"{label} → {next_label}", "proportion", "ratio", (f"x >= {num(n)}", f"x >= {num(c)}")))
        return out
    if function == "extractNPS":
        return [
            ("promoters", "proportion", "share", "x >= 9"),
            ("passives", "proportion", "share", "x >= 7 AND x <= 8"),
            ("detractors", "proportion", "share", "x <= 6"),
            ("NPS", "points", "difference", ("promoters", "detractors", 100.0)),
        ]
    if function == "extractMean":
        return [("mean", "value", "mean", None)]
    if function == "extractTopBox":
        return [("top box", "proportion", "share", f"x = {num(scale(col)[1])}")]
    if function == "extractTop2Box":
        lo, hi = scale(col)
        return [("top 2 box", "proportion", "share", f"x >= {num(max(hi - 1, lo))}")]
    if function == "extractShare":
        codes = ", ".join(num(c) for c in col["share"])
        return [("share", "proportion", "share", f"x IN ({codes})")]
    raise SystemExit(f"claims.py: no definition of {function}")


def quote(name):
    return '"' + name.replace('"', '""') + '"'


class Layer:
    def __init__(self, data):
        self.studies = []
        for toml in sorted(Path(data).glob("*/study.toml")):
            self.studies.append((toml.parent, tomllib.loads(toml.read_text())))
        self.db = duckdb.connect()
        self.tables = {}

    def study(self, name):
        for folder, s in self.studies:
            if name == s["study"]["name"] or name in s["study"].get("aliases", []):
                return folder, s
        raise SystemExit(f"claims.py: no study {name!r}")

    def table(self, folder, t):
        """The table loaded once into DuckDB, by the name it is queried under."""
        path = Path(t["path"]) if Path(t["path"]).is_absolute() else folder / t["path"]
        key = str(path)
        if key not in self.tables:
            name = f"t{len(self.tables)}"
            reader = "read_csv_auto" if path.suffix == ".csv" else "read_parquet"
            self.db.execute(f"CREATE TABLE {name} AS SELECT * FROM {reader}(?)", [key])
            self.tables[key] = name
        return self.tables[key]

    def truth(self, citation):
        folder, s = self.study(citation["study"])
        source = citation["source"]
        t = next(t for t in s["tables"] if t["name"] == source["table"])
        column = source["column"]
        col = t.get("columns", {}).get(column, {})
        period = next(p for p in s["periods"] if citation["period"] in [p["name"], *p.get("aliases", [])])
        base = next(b for b in s["bases"] if b["name"] == citation["base"]["name"])
        weight = quote(citation["weight"]) if citation.get("weight") else "1"
        x = quote(column)
        where = [f"({period['filter']})", f"({base['filter'].replace('{column}', column)})", f"{x} IS NOT NULL"]
        where += [f"{x} <> {num(m)}" for m in col.get("missing", [])]
        where += [f"NOT ({x} BETWEEN {num(lo)} AND {num(hi)})" for lo, hi in col.get("missing_ranges", [])]
        ms = measures(source["function"], col)
        sums = {}
        for _, _, kind, args in ms:
            for pred in [args] if kind == "share" else args if kind == "ratio" else []:
                sums.setdefault(pred, f"s{len(sums)}")
        select = ["count(*)", "sum(w)", "sum(w * w)", "sum(w * x)"]
        select += [f"sum(CASE WHEN {pred} THEN w ELSE 0 END)" for pred in sums]
        sql = (
            f"SELECT {', '.join(select)} FROM (SELECT CAST({x} AS DOUBLE) AS x, CAST({weight} AS DOUBLE) AS w "
            f"FROM {self.table(folder, t)} WHERE {' AND '.join(where)})"
        )
        n, sw, sw2, swx, *got = self.db.execute(sql).fetchone()
        by_pred = dict(zip(sums, got))
        values, out = {}, []
        for name, unit, kind, args in ms:
            if not n:
                v = None
            elif kind == "share":
                v = by_pred[args] / sw
            elif kind == "ratio":
                a, b = by_pred[args[0]], by_pred[args[1]]
                v = a / b if b else None
            elif kind == "mean":
                v = swx / sw
            else:
                a, b, k = args
                v = None if values[a] is None or values[b] is None else (values[a] - values[b]) * k
            values[name] = v
            out.append({"name": name, "unit": unit, "value": v})
        effective = sw * sw / sw2 if sw2 else float(n)
        return {"n": n, "weighted": sw or 0.0, "effective": effective, "measures": out}


def series(layer, citation):
    """The citation's truth on every period of its study, in the declared order."""
    _, s = layer.study(citation["study"])
    return {"series": [{"period": p["name"], **layer.truth({**citation, "period": p["name"]})} for p in s["periods"]]}


def main():
    args = sys.argv[1:]
    across = args[:1] == ["--series"]
    if across:
        args = args[1:]
    if len(args) != 2:
        raise SystemExit(__doc__)
    layer = Layer(args[0])
    with open(args[1], encoding="utf-8") as f:
        for line in f:
            if line.strip():
                citation = json.loads(line)["citation"]
                out = series(layer, citation) if across else layer.truth(citation)
                print(json.dumps(out, ensure_ascii=False))


if __name__ == "__main__":
    main()
