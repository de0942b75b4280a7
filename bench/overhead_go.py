#!/usr/bin/env python3
"""carve's Go tracing-overhead benchmark.

Prints one JSON line per measurement, with the fields of `bench/overhead.py` (language,
suite, mode, untraced_s, traced_s, ratio, CPU time too; medians over alternating runs, so
both sides see the same machine noise), for the fixture `fixtures/go/shapes` and every
module of `bench/corpus/go.toml` checked out under `--corpus` (`<corpus>/<name>`, at the
pinned commit, dependencies downloaded).

Each suite is copied twice: a plain copy, and one probed in place by carve's Go shim
(`cargo run --release -p carve-languages --example go_probe`, what `carve trace` does in
its shadow copy). Runs are `go test -json -count=1 -timeout=0 ./...` as carve's runner
runs them (compilation is warm after the uncounted first round: the build cache keeps
both copies' packages). Modes:

- `first-hits` / `exact`: the probed copy under `-p 1 -parallel 1` (how carve traces)
  against the plain copy under the same flags: the cost of the probes and the per-test
  records;
- `first-hits-vs-default`: the same traced run against a plain run with go's default
  parallelism (what tracing costs over carve's baseline run, serialisation included).

Usage: cargo build -p carve-languages --example go_probe &&
       python3 bench/overhead_go.py [--runs 5] [--corpus /work/corpus]
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The probing tool; its speed is not measured, so a debug build serves as well.
PROBES = [ROOT / "target" / p / "examples" / "go_probe" for p in ("release", "debug")]
GO_TEST = ["go", "test", "-json", "-count=1", "-timeout=0"]
SERIAL = ["-p", "1", "-parallel", "1"]


def timed(cmd, cwd, env):
    """Wall time and CPU time (user + system of the whole process tree) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout.decode(errors="replace")[-3000:])
        raise SystemExit(f"benchmark command failed ({proc.returncode}) in {cwd}: {' '.join(map(str, cmd))}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def recorded_hits(tdir):
    hits = tests = 0
    for f in tdir.glob("*.jsonl"):
        for line in f.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("kind") == "test" and rec.get("test") != "<import>":
                tests += 1
                hits += len(rec.get("hits", []))
    return hits, tests


def suites(args):
    out = [("fixture:go/shapes", ROOT / "fixtures" / "go" / "shapes")]
    corpus = tomllib.loads((ROOT / "bench" / "corpus" / "go.toml").read_text())
    for repo in corpus["repo"]:
        path = Path(args.corpus) / repo["name"]
        if (path / "go.mod").is_file():
            out.append((f"{repo['repo']}@{repo['commit'][:12]}", path))
        else:
            sys.stderr.write(f"skipping {repo['repo']}: not checked out at {path}\n")
    return out


def bench_suite(name, src, work, args):
    plain = work / "plain"
    probed = work / "probed"
    for d in (plain, probed):
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(src, d, ignore=shutil.ignore_patterns(".git"))
    report = subprocess.run([str(args.probe), str(probed)], stdout=subprocess.PIPE, text=True, check=True)
    probe_info = json.loads(report.stdout)
    env = dict(os.environ)
    for k in ("CARVE_TRACE_DIR", "CARVE_TRACE_MODE", "CARVE_CURRENT_TEST"):
        env.pop(k, None)
    tdir = work / "traces"

    def traced(mode):
        shutil.rmtree(tdir, ignore_errors=True)
        tdir.mkdir()
        e = dict(env, CARVE_TRACE_DIR=str(tdir), CARVE_TRACE_MODE=mode, CARVE_CURRENT_TEST="")
        return timed(GO_TEST + SERIAL + ["./..."], probed, e)

    variants = {
        "untraced": lambda: timed(GO_TEST + ["./..."], plain, env),
        "untraced-serial": lambda: timed(GO_TEST + SERIAL + ["./..."], plain, env),
        "first-hits": lambda: traced("first-hits"),
        "exact": lambda: traced("exact"),
    }
    times = {k: [] for k in variants}
    cpu = {k: [] for k in variants}
    for k in variants:  # warm-up round (compiles both copies), not counted
        variants[k]()
        if k in ("first-hits", "exact"):
            hits, tests = recorded_hits(tdir)
            if hits == 0:
                raise SystemExit(f"the {k} traced run of {name} recorded no hits: the probes did not run")
    for _ in range(args.runs):
        for k, run in variants.items():
            wall, used = run()
            times[k].append(wall)
            cpu[k].append(used)
    med = {k: statistics.median(v) for k, v in times.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    for mode, traced_key, base_key in (
        ("first-hits", "first-hits", "untraced-serial"),
        ("exact", "exact", "untraced-serial"),
        ("first-hits-vs-default", "first-hits", "untraced"),
    ):
        print(json.dumps({
            "language": "go",
            "suite": name,
            "mode": mode,
            "untraced_s": round(med[base_key], 4),
            "traced_s": round(med[traced_key], 4),
            "ratio": round(med[traced_key] / med[base_key], 3),
            "untraced_cpu_s": round(med_cpu[base_key], 4),
            "traced_cpu_s": round(med_cpu[traced_key], 4),
            "cpu_ratio": round(med_cpu[traced_key] / med_cpu[base_key], 3),
            "runs": args.runs,
            "probes": probe_info["probes"],
            "tests_recorded": tests,
            "native": True,
        }), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--corpus", default="/work/corpus")
    ap.add_argument("--suite", action="append", help="only suites whose name contains this")
    args = ap.parse_args()
    if args.runs < 1:
        raise SystemExit("--runs must be at least 1")
    built = [p for p in PROBES if p.exists()]
    if not built:
        raise SystemExit("go_probe is not built: run `cargo build -p carve-languages --example go_probe`")
    args.probe = max(built, key=lambda p: p.stat().st_mtime)
    work = Path(tempfile.mkdtemp(prefix="carve-bench-go-"))
    try:
        for name, src in suites(args):
            if args.suite and not any(s in name for s in args.suite):
                continue
            bench_suite(name, src, work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
