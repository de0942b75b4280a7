#!/usr/bin/env python3
"""Print the FeatureArc build-rate table (issue 30) from bench/arc_mine.py's build-results.json.

    python3 bench/arc_mine.py bench/corpus/arc-go.toml --out OUT --build go.toml --validate
    python3 bench/arc_build.py OUT/build-results.json [more results …]
    python3 bench/arc_build.py arc_mine.log [--mined OUT]   # a run's log, when it stopped early

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
        if p.endswith(".log"):
            rows.extend(from_log(p))
            continue
        with open(p) as f:
            rows.extend(json.load(f))
    return [r for r in rows if r["stages_mined"] >= 2]


MINED = []  # folders of mine reports given with --mined (logs of --table-only runs name none)


def from_log(path):
    """The entries of an arc_mine.py --build log (its `- CHAIN (N s): outcome …` lines), for a
    run stopped before it wrote build-results.json; stages and language from the mine reports
    beside the log's `--out` folder (`# owner/name: OUT/mine-….json` lines)."""
    import pathlib
    import re
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from arc_mine import reason_kind
    chains, rows = {}, []
    for folder in MINED:
        for report_path in sorted(pathlib.Path(folder).glob("mine-*.json")):
            report = json.load(open(report_path))
            for c in report["chains"]:
                chains[c["chain_id"]] = (report["repo"], c, pathlib.Path(folder))
    for line in open(path):
        m = re.match(r"# ([^:]+): (\S+mine-\S+\.json)$", line.strip())
        if m:
            report = json.load(open(m.group(2)))
            for c in report["chains"]:
                chains[c["chain_id"]] = (m.group(1), c, pathlib.Path(m.group(2)).parent)
            continue
        m = re.match(r"- (\S+) \((\d+) s\): (built|validated|invalid|failed) ?(.*)$", line.strip())
        if not m or m.group(1) not in chains:
            continue
        repo, c, out = chains[m.group(1)]
        outcome, detail = m.group(3), m.group(4)
        stages_built, merged = None, 0
        bundle = out / "built" / c["chain_id"] / "chain.json"
        if outcome != "failed" and bundle.is_file():
            chain_file = json.load(open(bundle))
            stages_built, merged = len(chain_file["stages"]), len(chain_file.get("merged_stages", []))
        if outcome == "failed":
            # An older arc_mine.py printed "failed carve: error: chain ID: reason".
            detail = re.sub(r"^carve: error: (chain [^:]+: )?", "", detail)
            kind = reason_kind(detail)[:70]
        else:
            kind = {"built": "built", "validated": "built and validated", "invalid": "built, validation failed"}[outcome]
        rows.append({"repo": repo, "language": language_of(path, repo), "chain_id": c["chain_id"],
                     "stages_mined": len(c["stages"]), "stages_built": stages_built, "merged_stages": merged,
                     "outcome": outcome, "kind": kind, "detail": detail})
    return rows


def language_of(path, repo):
    import pathlib
    import tomllib
    for corpus in sorted((pathlib.Path(__file__).resolve().parent / "corpus").glob("arc-*.toml")):
        if any(r["name"] == repo for r in tomllib.loads(corpus.read_text())["repo"]):
            return corpus.stem.removeprefix("arc-")
    return "?"


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
    args = sys.argv[1:]
    while "--mined" in args:
        i = args.index("--mined")
        MINED.append(args[i + 1])
        del args[i : i + 2]
    main(args)
