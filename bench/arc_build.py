#!/usr/bin/env python3
"""Print the FeatureArc build-rate table (issue 30) from bench/arc_mine.py's build-results.json.

    python3 bench/arc_mine.py bench/corpus/arc-go.toml --out OUT --build go.toml --validate
    python3 bench/arc_build.py OUT/build-results.json [more results …]

Per language: mined chains of ≥ 2 stages, how many built, how many built and validated (every
stage gate and the chain gate re-checked with the gold patches), the rate, and the
stage-count distribution of the chains that built (beside the FeatureArc paper's 73 chains,
263 stages, 2–10 stages per chain); then per repository; then every failure counted by reason
(arc_mine.py's `kind`: the first line of carve's error without ids, names and paths).
"""
import collections
import json
import sys


def load(paths):
    rows = []
    for p in paths:
        with open(p) as f:
            rows.extend(json.load(f))
    return [r for r in rows if r["stages_mined"] >= 2]


def ok(r):
    """Built, and validated where validation ran."""
    return r["outcome"] in ("built", "validated")


def rate(group):
    built = sum(ok(r) for r in group)
    validated = sum(r["outcome"] == "validated" for r in group)
    return built, validated, f"{100 * built / len(group):.0f}%" if group else "-"


def distribution(group):
    counts = collections.Counter(r["stages_built"] for r in group if ok(r) and r["stages_built"])
    stages = sum(k * n for k, n in counts.items())
    text = ", ".join(f"{k}: {counts[k]}" for k in sorted(counts))
    return f"{sum(counts.values())} chains, {stages} stages ({text or '-'})"


def main(paths):
    rows = load(paths)
    by_lang = collections.defaultdict(list)
    for r in rows:
        by_lang[r["language"]].append(r)
    print("| language | chains mined (≥ 2 stages) | built | built and validated | rate | shortened | stage counts of built chains |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for lang, group in sorted(by_lang.items()):
        built, validated, pct = rate(group)
        cut = sum(ok(r) and r["merged_stages"] > 0 for r in group)
        print(f"| {lang} | {len(group)} | {built} | {validated} | {pct} | {cut} | {distribution(group)} |")
    print("| FeatureArc paper | | | 73 | | | 73 chains, 263 stages (2–10 per chain) |")
    print()
    print("| repository | mined | built | validated | stages mined → built (built chains) |")
    print("| --- | --- | --- | --- | --- |")
    by_repo = collections.defaultdict(list)
    for r in rows:
        by_repo[(r["language"], r["repo"])].append(r)
    for (_, repo), group in sorted(by_repo.items()):
        built, validated, _ = rate(group)
        shapes = ", ".join(f"{r['stages_mined']}→{r['stages_built']}" for r in group if ok(r))
        print(f"| {repo} | {len(group)} | {built} | {validated} | {shapes or '-'} |")
    print()
    for lang, group in sorted(by_lang.items()):
        fails = collections.Counter(r["kind"] for r in group if not ok(r))
        print(f"{lang}: {sum(fails.values())} failed")
        for kind, n in fails.most_common():
            print(f"  {n}× {kind}")


if __name__ == "__main__":
    main(sys.argv[1:])
