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
import shutil
import subprocess

from benchlib import ROOT, alternate, built_example, clean_env, each_suite, ratio_row, require_hits, suite_args, timed

GO_TEST = ["go", "test", "-json", "-count=1", "-timeout=0"]
SERIAL = ["-p", "1", "-parallel", "1"]


def bench_suite(name, src, work, args):
    plain = work / "plain"
    probed = work / "probed"
    for d in (plain, probed):
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(src, d, ignore=shutil.ignore_patterns(".git"))
    report = subprocess.run([str(args.probe), str(probed)], stdout=subprocess.PIPE, text=True, check=True)
    probe_info = json.loads(report.stdout)
    env = clean_env(("CARVE_TRACE_DIR", "CARVE_TRACE_MODE", "CARVE_CURRENT_TEST"))
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
    tests = {}

    def check(k):  # the warm-up round compiles both copies
        if k in ("first-hits", "exact"):
            tests["n"] = require_hits(tdir, name, k)

    med, med_cpu = alternate(variants, args.runs, check)
    for mode, traced_key, base_key in (
        ("first-hits", "first-hits", "untraced-serial"),
        ("exact", "exact", "untraced-serial"),
        ("first-hits-vs-default", "first-hits", "untraced"),
    ):
        ratio_row(
            "go", name, mode, med[base_key], med[traced_key], med_cpu[base_key], med_cpu[traced_key],
            runs=args.runs, probes=probe_info["probes"], tests_recorded=tests["n"], native=True,
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    suite_args(ap, "/work/corpus")
    args = ap.parse_args()
    if args.runs < 1:
        raise SystemExit("--runs must be at least 1")
    args.probe = built_example("go_probe")
    fixture = ("fixture:go/shapes", ROOT / "fixtures" / "go" / "shapes")
    each_suite(bench_suite, args, "go", fixture, "go.mod", "carve-bench-go-")


if __name__ == "__main__":
    main()
