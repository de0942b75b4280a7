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

Usage: cargo build -p carve-languages --example rust_probe &&
       python3 bench/overhead_rust.py [--runs 5] [--corpus /work/corpus/rust]
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
PROBES = [ROOT / "target" / p / "examples" / "rust_probe" for p in ("release", "debug")]
CARGO_TEST = ["cargo", "test", "--locked", "--offline", "--no-fail-fast", "-q"]
SERIAL = ["--", "--test-threads=1"]
NEXTEST = ["cargo", "nextest", "run", "--locked", "--offline", "--no-fail-fast"]


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


def recorded(tdir):
    hits = tests = 0
    for f in tdir.glob("*.jsonl"):
        for line in f.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("kind") == "test" and rec.get("test") != "<import>":
                tests += 1
                hits += len(rec.get("hits", []))
    return hits, tests


def suites(args):
    out = [("fixture:rust/geometry", ROOT / "fixtures" / "rust" / "geometry")]
    corpus = tomllib.loads((ROOT / "bench" / "corpus" / "rust.toml").read_text())
    for repo in corpus["repo"]:
        path = Path(args.corpus) / repo["name"]
        if (path / "Cargo.lock").is_file():
            out.append((f"{repo['repo']}@{repo['commit'][:12]}", path))
        else:
            sys.stderr.write(f"skipping {repo['repo']}: not checked out (with a Cargo.lock) at {path}\n")
    return out


def has_nextest():
    return subprocess.run(["cargo", "nextest", "--version"], capture_output=True).returncode == 0


def bench_suite(name, src, work, args):
    plain = work / "plain"
    probed = work / "probed"
    runtime = work / "runtime"
    for d in (plain, probed, runtime):
        shutil.rmtree(d, ignore_errors=True)
    for d in (plain, probed):
        shutil.copytree(src, d, ignore=shutil.ignore_patterns(".git", "target"))
    report = subprocess.run([str(args.probe), str(probed), str(runtime)], stdout=subprocess.PIPE, text=True, check=True)
    probe_info = json.loads(report.stdout)
    env = dict(os.environ)
    for k in ("CARVE_TRACE_DIR", "CARVE_TRACE_MODE", "RUSTFLAGS"):
        env.pop(k, None)
    env["CARGO_TERM_COLOR"] = "never"
    plain_env = dict(env, CARGO_TARGET_DIR=str(work / "target-plain"))
    probed_env = dict(env, CARGO_TARGET_DIR=str(work / "target-probed"))
    tdir = work / "traces"

    def traced(mode, cmd):
        shutil.rmtree(tdir, ignore_errors=True)
        tdir.mkdir()
        return timed(cmd, probed, dict(probed_env, CARVE_TRACE_DIR=str(tdir), CARVE_TRACE_MODE=mode))

    variants = {
        "untraced": lambda: timed(CARGO_TEST + SERIAL, plain, plain_env),
        "first-hits": lambda: traced("first-hits", CARGO_TEST + SERIAL),
        "exact": lambda: traced("exact", CARGO_TEST + SERIAL),
        "probes-off": lambda: timed(CARGO_TEST + SERIAL, probed, probed_env),
    }
    if args.nextest:
        variants["untraced-nextest"] = lambda: timed(NEXTEST, plain, plain_env)
        variants["nextest-first-hits"] = lambda: traced("first-hits", NEXTEST)
    times = {k: [] for k in variants}
    cpu = {k: [] for k in variants}
    tests = 0
    for k in variants:  # warm-up round (builds both copies), not counted
        variants[k]()
        if k in ("first-hits", "exact", "nextest-first-hits"):
            hits, tests = recorded(tdir)
            if hits == 0:
                raise SystemExit(f"the {k} traced run of {name} recorded no hits: the probes did not run")
    for _ in range(args.runs):
        for k, run in variants.items():
            wall, used = run()
            times[k].append(wall)
            cpu[k].append(used)
    med = {k: statistics.median(v) for k, v in times.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    rows = [("first-hits", "first-hits", "untraced"), ("exact", "exact", "untraced"), ("probes-off", "probes-off", "untraced")]
    if args.nextest:
        rows.append(("nextest-first-hits", "nextest-first-hits", "untraced-nextest"))
    for mode, traced_key, base_key in rows:
        print(json.dumps({
            "language": "rust",
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
    ap.add_argument("--corpus", default="/work/corpus/rust")
    ap.add_argument("--suite", action="append", help="only suites whose name contains this")
    ap.add_argument("--no-nextest", action="store_true", help="leave out the nextest rows")
    args = ap.parse_args()
    if args.runs < 5:
        sys.stderr.write("note: fewer than 5 runs; the committed figures use 5 or more\n")
    built = [p for p in PROBES if p.exists()]
    if not built:
        raise SystemExit("rust_probe is not built: run `cargo build -p carve-languages --example rust_probe`")
    args.probe = max(built, key=lambda p: p.stat().st_mtime)
    args.nextest = not args.no_nextest and has_nextest()
    work = Path(tempfile.mkdtemp(prefix="carve-bench-rust-", dir=os.environ.get("CARVE_BENCH_TMP")))
    try:
        for name, src in suites(args):
            if args.suite and not any(s in name for s in args.suite):
                continue
            bench_suite(name, src, work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
