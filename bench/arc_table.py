#!/usr/bin/env python3
"""Print the FeatureArc mining table of bench/README.md from `carve arc mine --format json` reports.

    python3 bench/arc_table.py mine-*.json

Per repository: commits analysed, chains kept, stages per chain (mean / max), changed lines and
files per stage (median), the share of a later stage's changed files that earlier stages changed
(mean over later stages of every chain; the FeatureArc paper reports 54.3%), and time
(analysis + mining, wall seconds as the report records them).
"""
import json
import statistics
import sys


def row(report):
    chains = report["chains"]
    stages = [len(c["stages"]) for c in chains]
    lines = [s["lines"] for c in chains for s in c["stages"]]
    files = [len(s["files"]) for c in chains for s in c["stages"]]
    shares = []
    for c in chains:
        earlier = set()
        for k, s in enumerate(c["stages"]):
            fs = set(s["files"])
            if k > 0 and fs:
                shares.append(len(fs & earlier) / len(fs))
            earlier |= fs
    med = lambda v: statistics.median(v) if v else 0
    mean = lambda v: statistics.mean(v) if v else 0
    return (
        f"| {report['repo']} | {report['range']} | {report['commits']} | {len(chains)} "
        f"| {mean(stages):.2f} / {max(stages, default=0)} | {med(lines):.0f} | {med(files):.0f} "
        f"| {100 * mean(shares):.1f}% | {report['analysis_seconds'] + report['mining_seconds']:.1f} s |"
    )


def header():
    print("| repository | range | commits | chains | stages per chain (mean / max) | lines per stage (median) "
          "| files per stage (median) | later stage's files shared with earlier stages (mean) | time |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")


def main(paths):
    header()
    for p in paths:
        with open(p) as f:
            print(row(json.load(f)))


if __name__ == "__main__":
    main(sys.argv[1:])
