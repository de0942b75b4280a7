#!/usr/bin/env python3
"""carve's Rust tracing-overhead benchmark.

Prints one JSON line per measurement, with the fields of `bench/overhead_go.py` (language,
suite, mode, untraced_s, traced_s, ratio, CPU time too; medians over alternating runs, so
both sides see the same machine noise), for the fixture `fixtures/rust/geometry` and every
crate of `bench/corpus/rust.toml` checked out under `--corpus` (`<corpus>/<name>`, at the
pinned commit, with its `install` run: a Cargo.lock and the dependencies downloaded).

Each suite is copied twice: a plain copy, and one probed in place by carve's Rust shim
(`cargo build -p carve-languages --example rust_probe`, what `carve trace` does in its
shadow copy, the runtime crate beside it). Each copy has its own target directory, built
in an uncounted first round, so the timed runs are `cargo test` with nothing to compile,
as carve's runner runs them (`--no-fail-fast -- --test-threads=1`; nextest: one process
per test). Modes:

- `first-hits` / `exact`: the probed copy with CARVE_TRACE_DIR set against the plain copy:
  the cost of the probes and the per-test records (libtest, one test thread at a time);
- `nextest-first-hits`: the same under `cargo nextest run` (only when cargo-nextest is
  installed);
- `probes-off`: the probed copy without CARVE_TRACE_DIR (each probe one thread-local read).

rustdoc compiles every doctest again on every run (nothing of it is cached), against the
probed library in the probed copy: on a doctest-heavy crate the figure is mostly that
compilation. `--no-doctests` times `cargo test --lib --bins --tests` instead (the suite's
name gets ` (no doctests)`): the test binaries alone, where the probes run.

Usage: cargo build -p carve-languages --example rust_probe &&
       python3 bench/overhead_rust.py [--runs 5] [--corpus /work/corpus/rust]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

from benchlib import ROOT, alternate, built_example, clean_env, each_suite, ratio_row, require_hits, suite_args, timed

CARGO_TEST = ["cargo", "test", "--locked", "--offline", "--no-fail-fast", "-q"]
SERIAL = ["--", "--test-threads=1"]
NEXTEST = ["cargo", "nextest", "run", "--locked", "--offline", "--no-fail-fast"]


def has_nextest():
    return subprocess.run(["cargo", "nextest", "--version"], capture_output=True).returncode == 0


def bench_suite(name, src, work, args):
    test = CARGO_TEST + (["--lib", "--bins", "--tests"] if args.no_doctests else [])
    if args.no_doctests:
        name += " (no doctests)"
    plain = work / "plain"
    probed = work / "probed"
    runtime = work / "runtime"
    for d in (plain, probed, runtime):
        shutil.rmtree(d, ignore_errors=True)
    for d in (plain, probed):
        shutil.copytree(src, d, ignore=shutil.ignore_patterns(".git", "target"))
    report = subprocess.run([str(args.probe), str(probed), str(runtime)], stdout=subprocess.PIPE, text=True, check=True)
    probe_info = json.loads(report.stdout)
    env = clean_env(("CARVE_TRACE_DIR", "CARVE_TRACE_MODE", "RUSTFLAGS"))
    env["CARGO_TERM_COLOR"] = "never"
    plain_env = dict(env, CARGO_TARGET_DIR=str(work / "target-plain"))
    probed_env = dict(env, CARGO_TARGET_DIR=str(work / "target-probed"))
    tdir = work / "traces"

    def traced(mode, cmd):
        shutil.rmtree(tdir, ignore_errors=True)
        tdir.mkdir()
        return timed(cmd, probed, dict(probed_env, CARVE_TRACE_DIR=str(tdir), CARVE_TRACE_MODE=mode))

    variants = {
        "untraced": lambda: timed(test + SERIAL, plain, plain_env),
        "first-hits": lambda: traced("first-hits", test + SERIAL),
        "exact": lambda: traced("exact", test + SERIAL),
        "probes-off": lambda: timed(test + SERIAL, probed, probed_env),
    }
    if args.nextest:
        variants["untraced-nextest"] = lambda: timed(NEXTEST, plain, plain_env)
        variants["nextest-first-hits"] = lambda: traced("first-hits", NEXTEST)
    tests = {}

    def check(k):  # the warm-up round builds both copies
        if k in ("first-hits", "exact", "nextest-first-hits"):
            tests["n"] = require_hits(tdir, name, k)

    med, med_cpu = alternate(variants, args.runs, check)
    rows = [("first-hits", "first-hits", "untraced"), ("exact", "exact", "untraced"), ("probes-off", "probes-off", "untraced")]
    if args.nextest:
        rows.append(("nextest-first-hits", "nextest-first-hits", "untraced-nextest"))
    for mode, traced_key, base_key in rows:
        ratio_row(
            "rust", name, mode, med[base_key], med[traced_key], med_cpu[base_key], med_cpu[traced_key],
            runs=args.runs, probes=probe_info["probes"], tests_recorded=tests["n"], native=True,
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    suite_args(ap, "/work/corpus/rust")
    ap.add_argument("--no-nextest", action="store_true", help="leave out the nextest rows")
    ap.add_argument("--no-doctests", action="store_true",
                    help="time `cargo test --lib --bins --tests` (rustdoc recompiles doctests on every run)")
    args = ap.parse_args()
    if args.runs < 5:
        sys.stderr.write("note: fewer than 5 runs; the committed figures use 5 or more\n")
    args.probe = built_example("rust_probe")
    args.nextest = not args.no_nextest and has_nextest()
    fixture = ("fixture:rust/geometry", ROOT / "fixtures" / "rust" / "geometry")
    tmp = os.environ.get("CARVE_BENCH_TMP")
    each_suite(bench_suite, args, "rust", fixture, "Cargo.lock", "carve-bench-rust-", tmp)


if __name__ == "__main__":
    main()
