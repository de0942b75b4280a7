#!/usr/bin/env python3
"""Merge the JSON rows that `bench/corpus.py --json` prints into one before/after table.

Each `--run LABEL FILE...` names the saved outputs of corpus.py runs (their `{...}` lines);
`--sum LABEL RUN...` adds up earlier runs per repository, candidates and tasks (a
`--module-groups=only` run added to a files-only run gives what the default with groups
tries). Prints one Markdown row per
repository and run, then the run's total: valid / candidates, gold lines, files and functions
(median / mean / max), tasks with at least 100 and 300 lines. Standard library only.

    python3 bench/corpus_merge.py --run before /tmp/groups/before-py.txt /tmp/groups/before-ds.txt \
        --run groups /tmp/groups/after-py.txt /tmp/groups/after-ds.txt --sum after before groups
"""

import argparse
import json
import statistics


def rows(paths):
    out = {}
    for p in paths:
        with open(p) as f:
            for line in f:
                if line.startswith("{"):
                    r = json.loads(line)
                    out[r["name"]] = r
    return out


def spread(v):
    if not v:
        return "-"
    return f"{statistics.median(v):g}/{round(sum(v) / len(v))}/{max(v)}"


def row(label, name, runs):
    sizes = {k: [x for r in runs for x in r[k]] for k in ("lines", "files", "functions")}
    cands = sum(r["candidates"] for r in runs)
    lines = sizes["lines"]
    return (f"| {label} | {name} | {len(lines)}/{cands} | {spread(lines)} | {spread(sizes['files'])} | "
            f"{spread(sizes['functions'])} | {sum(x >= 100 for x in lines)} | {sum(x >= 300 for x in lines)} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", nargs="+", action="append", metavar=("LABEL", "FILE"), default=[])
    ap.add_argument("--sum", nargs="+", action="append", metavar=("LABEL", "RUN"), default=[])
    args = ap.parse_args()
    runs = {r[0]: rows(r[1:]) for r in args.run}
    for s in args.sum:
        parts = [runs[p] for p in s[1:]]
        runs[s[0]] = {name: [p[name] for p in parts if name in p] for name in parts[0]}
    print("| run | repo | valid/cand | lines med/mean/max | files | functions | >=100 | >=300 |")
    print("|---|---|---|---|---|---|---|---|")
    for label, by_repo in runs.items():
        by_repo = {n: (r if isinstance(r, list) else [r]) for n, r in by_repo.items()}
        for name, rs in by_repo.items():
            print(row(label, name, rs))
        print(row(f"**{label}**", "**all**", [r for rs in by_repo.values() for r in rs]))


if __name__ == "__main__":
    main()
