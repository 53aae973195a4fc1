#!/usr/bin/env python3
"""The builds a newcomer and CI run share one DataFusion build: check that they ask for the same
features.

    python3 .ci/same_features.py

Cargo compiles a crate again, and every crate above it, when a build asks for other features of
it. Four builds matter: the README's first command (`cargo run`, the default features), its
`cargo test` (the same plus the dev-dependencies), the Python extension (python/, with
`share-test-build`) and CI's last step (every feature: Ballista, the agents, object stores,
Delta Lake, PostgreSQL). recite-engine's Cargo.toml ("One DataFusion build") asks for the union
of their features in all of them, so cargo compiles DataFusion once: `cargo test` after the first
command compiles only the tests, and turning a feature on compiles only its own crates. This
prints, from `cargo tree` (no build, seconds), every crate two of those builds would compile with
different features, and exits 1 if there is one: a new dependency or feature broke the sharing
(DataFusion compiled again, 15-20 minutes on 2 cores). The fix is in that Cargo.toml section.
"""
import hashlib
import json
import subprocess
import sys
from collections import defaultdict

BUILDS = {
    "first command (cargo run)": ["-e", "normal,build", "-p", "recite"],
    "every feature (CI)": ["-e", "normal,build,dev", "-p", "recite", "-p", "recite-core", "-p", "recite-engine", "-p", "recite-serve", "--features", "recite/ballista,recite/agents,recite/object-store,recite/delta,recite/postgres"],
    "tests (cargo test)": ["-e", "normal,build,dev", "-p", "recite", "-p", "recite-core",
                           "-p", "recite-engine", "-p", "recite-serve"],
    "Python extension (python/ci.sh)": ["-e", "normal,build", "-p", "recite-python",
                                        "--features", "share-test-build"],
}
# The workspace's own packages differ on purpose (their features are what the builds choose).
OWN = {"recite", "recite-core", "recite-engine", "recite-serve", "recite-python"}


def features(args):
    out = subprocess.run(["cargo", "tree", "--locked", "--prefix", "none", "-f", "{p} {f}", *args],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"same_features.py: cargo tree {' '.join(args)} failed:\n{out.stderr}")
    crates = defaultdict(set)
    for line in out.stdout.splitlines():
        parts = line.replace(" (*)", "").replace(" (proc-macro)", "").split()
        if len(parts) < 2 or parts[0] in OWN:
            continue
        last = parts[-1]
        crates[(parts[0], parts[1])] |= set(last.split(",")) if len(parts) > 2 and not last.startswith("(") else set()
    return crates


def profile_entries_match_the_lock():
    """Every `[profile.dev.package.NAME]` or `NAME@VERSION` of Cargo.toml names a package of
    Cargo.lock: cargo only warns when one matches nothing (after an upgrade, say), and the crate
    it was for would silently be compiled unoptimised in the tests."""
    import tomllib
    with open("Cargo.toml", "rb") as f:
        entries = tomllib.load(f).get("profile", {}).get("dev", {}).get("package", {})
    with open("Cargo.lock", "rb") as f:
        locked = {(p["name"], p["version"]) for p in tomllib.load(f)["package"]}
    bad = 0
    for spec in entries:
        if spec == "*":
            continue
        name, _, version = spec.partition("@")
        if not any(n == name and (not version or v == version) for n, v in locked):
            bad += 1
            print(f"Cargo.toml [profile.dev.package.\"{spec}\"] matches no package of Cargo.lock")
    return bad


UNIT_GRAPHS = {
    "first command (cargo run)": ["build", "-p", "recite", "--bin", "recite"],
    "tests (cargo test)": ["test", "--no-run"],
    "every feature (CI)": ["test", "--no-run", "-p", "recite", "-p", "recite-engine", "-p", "recite-serve",
                           "--features", "recite/ballista,recite/agents,recite/object-store,recite/delta,recite/postgres"],
    "Python extension (python/ci.sh)": ["build", "-p", "recite-python", "--features", "share-test-build"],
}


def datafusion_units(args):
    """DataFusion's compiled units in a build, each as a digest of itself (package, target, mode,
    features, profile) and, recursively, of every unit it depends on: build scripts and
    proc-macros included, which `cargo tree` merges with the rest. Needs nightly cargo."""
    out = subprocess.run(["cargo", "+nightly", *args, "--locked", "-Z", "unstable-options", "--unit-graph"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None
    units = json.loads(out.stdout)["units"]
    memo = {}

    def digest(i):
        if i not in memo:
            u = units[i]
            p = u["profile"]
            own = json.dumps([u["pkg_id"], u["target"]["name"], u["mode"], sorted(u["features"]),
                              p.get("opt_level"), p.get("debug_assertions"), p.get("overflow_checks")])
            deps = "|".join(sorted(digest(d["index"]) for d in u["dependencies"]))
            memo[i] = hashlib.sha1((own + deps).encode()).hexdigest()
        return memo[i]

    return {digest(i) for i, u in enumerate(units) if u["target"]["name"] == "datafusion" and u["mode"] == "build"}


def unit_graphs_share_datafusion():
    graphs = {name: datafusion_units(args) for name, args in UNIT_GRAPHS.items()}
    if any(g is None for g in graphs.values()):
        print("SKIPPED unit graphs: no nightly cargo (`cargo +nightly … --unit-graph`); only cargo tree was compared")
        return 0
    first = graphs["first command (cargo run)"]
    bad = [name for name, g in graphs.items() if g != first]
    for name in bad:
        print(f"{name}: DataFusion's units differ from the first command's (a host unit under it, "
              "a build script's or proc-macro's dependency, has other features)")
    return len(bad)


def main():
    if profile_entries_match_the_lock():
        sys.exit("same_features.py: a profile entry names no locked package (above); update its name or version")
    sets = {name: features(args) for name, args in BUILDS.items()}
    names = list(sets)
    bad = 0
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            for key in sorted(sets[a].keys() & sets[b].keys()):
                fa, fb = sets[a][key], sets[b][key]
                if fa != fb:
                    bad += 1
                    print(f"{key[0]} {key[1]}: {a} only {sorted(fa - fb)}, {b} only {sorted(fb - fa)}")
    bad += unit_graphs_share_datafusion()
    if bad:
        print(f"same_features.py: {bad} crates would be compiled twice (above); align them in "
              "crates/recite-engine/Cargo.toml, \"One DataFusion build\"", file=sys.stderr)
        sys.exit(1)
    print(f"same_features.py: the {len(names)} builds ask for the same features of every crate they share")


if __name__ == "__main__":
    main()
