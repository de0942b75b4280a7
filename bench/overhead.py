#!/usr/bin/env python3
"""carve's tracing-overhead benchmark.

Prints one JSON line per measurement: language, suite, mode, untraced_s, traced_s, ratio
(medians over alternating runs, so both sides see the same machine noise), for

- suites: the bundled fixture (`fixtures/python/inventory`) and a generated call-heavy
  suite (`bench/gen_callheavy.py`);
- modes: carve's shim in `first-hits` (default) and `exact` edge mode, the pure-Python
  `sys.setprofile` tracer of `bench/pyprofile_tracer.py` recording the same data, and
  `carve-trace-e2e`: `carve trace --fresh` end to end (set-up once the shim is built, the
  traced run, writing the trace) against one plain pytest run of the same suite.

Usage: scripts/setup && cargo build --release && python3 bench/overhead.py [--runs 5]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import ROOT, alternate, ratio_row, require_hits, timed

BENCH = ROOT / "bench"


def base_env():
    env = dict(os.environ)
    # The plain run keeps its bytecode cache, as a user's pytest run does (the suite is a
    # temporary copy); the shim keeps probed bytecode in its own private cache.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["CARVE_NO_PROGRESS"] = "1"
    for k in ("CARVE_PROBE_MAP", "CARVE_TRACE_DIR", "CARVE_TRACE_MODE", "PYTHONPATH"):
        env.pop(k, None)
    return env


def with_pythonpath(env, entry):
    env = dict(env)
    env["PYTHONPATH"] = str(entry) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--carve", default=str(ROOT / "target" / "release" / "carve"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--suite", action="append", choices=["fixture", "callheavy"])
    args = ap.parse_args()
    if args.runs < 1:
        raise SystemExit("--runs must be at least 1")
    if not Path(args.carve).exists():
        raise SystemExit(f"{args.carve} does not exist: run `cargo build --release` first")
    suites = args.suite or ["fixture", "callheavy"]
    work = Path(tempfile.mkdtemp(prefix="carve-bench-"))
    try:
        for suite in suites:
            bench_suite(suite, work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def bench_suite(suite, work, args):
    repo = work / suite
    if suite == "fixture":
        shutil.copytree(ROOT / "fixtures" / "python" / "inventory", repo)
    else:
        subprocess.run([args.python, str(BENCH / "gen_callheavy.py"), str(repo)], check=True, stdout=subprocess.DEVNULL)
    out = work / f"out-{suite}"
    env = base_env()
    # One carve run prepares everything: baseline (cached afterwards), shim, probe map.
    info = subprocess.run(
        [args.carve, "trace", str(repo), "--out", str(out), "--format", "json", "--python", args.python],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    if info.returncode != 0:
        raise SystemExit(f"carve trace failed on {suite}:\n{info.stderr}")
    summary = json.loads(info.stdout)
    shim = summary["shim"]
    native = summary["native"]
    # carve traced a shadow copy; the probe map names files relative to its root, so point
    # it at the suite the benchmark runs (same files, same content).
    pm = json.loads(Path(summary["probe_map"]).read_text())
    pm["root"] = str(repo)
    probe_map = str(work / f"probe-map-{suite}.json")
    Path(probe_map).write_text(json.dumps(pm))

    pytest = [args.python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    tdir = work / "traces"

    def traced_env(mode):
        shutil.rmtree(tdir, ignore_errors=True)
        tdir.mkdir()
        e = with_pythonpath(env, shim)
        e.update({"CARVE_PROBE_MAP": probe_map, "CARVE_TRACE_DIR": str(tdir), "CARVE_TRACE_MODE": mode})
        return e

    def profile_env():
        shutil.rmtree(tdir, ignore_errors=True)
        tdir.mkdir()
        e = with_pythonpath(env, BENCH)
        e["PYPROFILE_TRACER_OUT"] = str(tdir / "pyprofile.json")
        e["PYPROFILE_TRACER_ROOT"] = str(repo)
        return e

    variants = {
        "untraced": lambda: timed(pytest, repo, env),
        "first-hits": lambda: timed(pytest + ["-p", "carve_shim.plugin"], repo, traced_env("first-hits")),
        "exact": lambda: timed(pytest + ["-p", "carve_shim.plugin"], repo, traced_env("exact")),
        "pyprofile": lambda: timed(pytest + ["-p", "pyprofile_tracer"], repo, profile_env()),
        "carve-trace-e2e": lambda: timed(
            [args.carve, "trace", str(repo), "--out", str(out), "--fresh", "--python", args.python], repo, env
        ),
    }
    med, med_cpu = alternate(variants, args.runs, lambda k: k in ("first-hits", "exact") and require_hits(tdir, suite, k, True))
    for mode in ("first-hits", "exact", "pyprofile", "carve-trace-e2e"):
        ratio_row(
            "python", suite, mode, med["untraced"], med[mode], med_cpu["untraced"], med_cpu[mode],
            runs=args.runs, native=native if mode in ("first-hits", "exact", "carve-trace-e2e") else None,
        )


if __name__ == "__main__":
    main()
