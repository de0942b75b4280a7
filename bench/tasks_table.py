#!/usr/bin/env python3
"""Size and yield table of `carve tasks --format json` runs (issue 26), per repository and pooled
per label: valid / candidates, gold lines, files and functions (median/mean/max), tasks >= 100
and >= 300 lines.

    carve tasks REPO --out OUT/REPO --protect sampled:5 --level 1 --format json > OUT/REPO.json
    python3 bench/tasks_table.py LABEL:REPO:OUT/REPO ...

Each OUTDIR holds the bundles; OUTDIR.json beside it is carve's report (its stdout). A
candidate is a Level 1 task or a rejection without a level. Sizes are of Level 1 tasks; the
`lv2` column counts the Level 2 tasks of a run made with `--level 1 2` (their share of the Level 1
tasks; a Level 2 task exists only beside a valid Level 1 one)."""
import json, statistics, sys
from pathlib import Path
from collections import defaultdict

def mmm(v):
    if not v: return "-"
    med = statistics.median(v)
    f = lambda x: f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"
    return f"{f(med)}/{f(statistics.mean(v))}/{max(v)}"

rows = []
pooled = defaultdict(lambda: {"valid": 0, "cand": 0, "lv2": 0, "lines": [], "files": [], "functions": []})
for arg in sys.argv[1:]:
    label, repo, out = arg.split(":", 2)
    out = Path(out)
    rep = json.loads(out.with_name(out.name + ".json").read_text())
    tasks = [t for t in rep["tasks"] if t.endswith(".lv1")]
    cands = tasks + [r["feature"] for r in rep["rejected"] if r.get("level") is None]
    insts = [json.loads((out / t / "instance.json").read_text()) for t in tasks]
    r = {"valid": len(tasks), "cand": len(cands), "lv2": sum(t.endswith(".lv2") for t in rep["tasks"]), "lines": [i["lines"] for i in insts],
         "files": [i["files"] for i in insts], "functions": [i["functions"] for i in insts]}
    groups = [(i["carve"]["feature"], i["lines"]) for i in insts if i["carve"].get("group")]
    rows.append((label, repo, r, groups, [(x["feature"], x["reason"][:90]) for x in rep["rejected"]]))
    p = pooled[label]
    for k in ("valid", "cand", "lv2"): p[k] += r[k]
    for k in ("lines", "files", "functions"): p[k] += r[k]

print("| run | repo | valid/cand | lines med/mean/max | files | functions | ≥100 | ≥300 | lv2 |")
print("|---|---|---|---|---|---|---|---|---|")
def line(label, repo, r):
    print(f"| {label} | {repo} | {r['valid']}/{r['cand']} | {mmm(r['lines'])} | {mmm(r['files'])} | {mmm(r['functions'])} | "
          f"{sum(x >= 100 for x in r['lines'])} | {sum(x >= 300 for x in r['lines'])} | {lv2(r)} |")
def lv2(r):
    return f"{r['lv2']} ({100 * r['lv2'] // r['valid']}%)" if r["valid"] else str(r["lv2"])
for label, repo, r, _, _ in rows: line(label, repo, r)
for label, p in pooled.items(): line(f"**{label}**", "**pooled**", p)
print()
for label, repo, r, groups, rej in rows:
    print(f"{label} {repo}: group tasks {groups}")
    for f, why in rej: print(f"    rejected {f}: {why}")
