#!/usr/bin/env python3
"""History-analysis speed of `carve arc analyze`: commits per second as the commit count grows.

    python3 bench/arc_speed.py target/release/carve REPO 250 500 1000 2000 --runs 3

For each N, analyses the newest N first-parent commits of REPO `--runs` times and prints one
JSON line: `commits`, median wall seconds (as carve reports it), median user+system CPU seconds
of the carve process, and commits per second by both. CPU time is the figure to compare across
machines that other work shares: wall time includes waiting for a core.
"""
import argparse
import json
import resource
import statistics
import subprocess


def one(carve, repo, n):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([carve, "arc", "analyze", repo, "--limit", str(n), "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    stats = json.loads(out)["stats"]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return stats["commits"], stats["seconds"], cpu, stats["files_indexed"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("carve")
    ap.add_argument("repo")
    ap.add_argument("counts", nargs="+", type=int)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    for n in a.counts:
        runs = [one(a.carve, a.repo, n) for _ in range(a.runs)]
        commits = runs[0][0]
        wall = statistics.median(r[1] for r in runs)
        cpu = statistics.median(r[2] for r in runs)
        print(json.dumps({"commits": commits, "runs": a.runs, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                          "commits_per_s_wall": round(commits / wall, 1), "commits_per_s_cpu": round(commits / cpu, 1),
                          "files_indexed": runs[0][3]}), flush=True)


if __name__ == "__main__":
    main()
