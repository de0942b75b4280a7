#!/usr/bin/env python3
"""carve's TypeScript/JavaScript tracing-overhead benchmark (vitest).

Prints one JSON line per suite and mode: language, suite, mode, runs, untraced_s, traced_s,
ratio (wall time), the same for CPU time (user + system of the run's process tree, less
sensitive to a loaded machine), and the load average at the end — medians over alternating untraced/traced runs, so both sides see the same machine
noise. Both sides run the same command (the project's own vitest with carve's progress
reporter, as carve runs it); the traced side runs in a copy probed by the TypeScript shim
(`languages/examples/trace_prepare.rs`) with the shim's environment, so it pays for the
probes, the recorder and per-test attribution (the set-up file's beforeEach/afterEach and
one trace record per test).

Suites: the bundled fixture (`fixtures/typescript/ledger`, node_modules from scripts/setup)
and any `--suite NAME=PATH` (a checked-out project with its dependencies installed; see
bench/corpus/typescript.toml for the pinned public ones).

Usage: cargo build --release -p carve-languages --example trace_prepare &&
       python3 bench/overhead_ts.py [--runs 5] [--suite pathe=/work/corpus/ts/pathe]
"""

import argparse
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from benchlib import ROOT, alternate, clean_env, ratio_row, recorded, timed

REPORTER = ROOT / "languages" / "src" / "typescript" / "runner" / "carve_vitest_reporter.mjs"
SHIM_VARS = ("CARVE_NODE_PROBES", "CARVE_TRACE_DIR", "CARVE_TRACE_MODE", "CARVE_EXTRA_SETUP", "CARVE_PROGRESS")


def vitest_version(tree):
    try:
        v = json.loads((tree / "node_modules" / "vitest" / "package.json").read_text())["version"]
        return tuple(int(p) for p in v.split("-")[0].split(".")[:3])
    except (OSError, ValueError, KeyError):
        return None


def bench_suite(name, src, runs, prepare, modes):
    out = []
    with tempfile.TemporaryDirectory(prefix=f"carve-ts-bench-{name}-") as tmp:
        tmp = Path(tmp)
        plain, traced = tmp / "plain", tmp / "traced"
        # Hard-linked copies: the shim replaces the files it probes by rename, never in place.
        for dest in (plain, traced):
            subprocess.run(["cp", "-al", str(src), str(dest)], check=True)
            shutil.rmtree(dest / ".git", ignore_errors=True)
        cmd_tail = ["run", f"--reporter={REPORTER}", "--watch=false"]
        version = vitest_version(plain)
        if version is None or version >= (1, 3, 0):
            cmd_tail.append("--no-cache")
        env = clean_env(SHIM_VARS)
        env.update({"CI": "1", "NO_COLOR": "1", "CARVE_ROOT": str(plain)})
        first = True
        for mode in modes:
            shim_dir, trace_dir = tmp / f"shim-{mode}", tmp / f"trace-{mode}"
            if first:
                setup = json.loads(
                    subprocess.run(
                        [prepare, str(plain), str(traced), str(shim_dir), str(trace_dir), mode],
                        check=True,
                        stdout=subprocess.PIPE,
                    ).stdout
                )
                first = False
            else:
                # The tree is probed once; only the mode changes.
                setup["env"]["CARVE_TRACE_MODE"] = mode
                setup["env"]["CARVE_TRACE_DIR"] = str(trace_dir)
            traced_env = dict(env, CARVE_ROOT=str(traced), **setup["env"])
            counted = {}

            def traced_run():
                shutil.rmtree(trace_dir, ignore_errors=True)
                run = timed(
                    [str(traced / "node_modules" / ".bin" / "vitest"), *cmd_tail, *setup["args"]], traced, traced_env
                )
                counted["tests"], hits = recorded(trace_dir)
                if counted["tests"] == 0 or hits == 0:
                    raise SystemExit(f"the traced run of {name} recorded {counted['tests']} tests, {hits} hits: not tracing")
                return run

            variants = {
                "untraced": lambda: timed([str(plain / "node_modules" / ".bin" / "vitest"), *cmd_tail], plain, env),
                "traced": traced_run,
            }
            med, med_cpu = alternate(variants, runs)
            out.append(
                ratio_row(
                    "typescript", name, mode, med["untraced"], med["traced"], med_cpu["untraced"], med_cpu["traced"],
                    runner="vitest" + (".".join(map(str, version)) if version else ""),
                    runs=runs, tests_traced=counted["tests"], load_1min=round(os.getloadavg()[0], 1),
                )
            )
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--prepare", default=str(ROOT / "target" / "release" / "examples" / "trace_prepare"))
    ap.add_argument("--suite", action="append", default=[], help="NAME=PATH of a project with node_modules")
    ap.add_argument("--no-fixture", action="store_true")
    ap.add_argument("--modes", default="first-hits,exact")
    args = ap.parse_args()
    if not Path(args.prepare).is_file():
        raise SystemExit(f"{args.prepare} is missing: cargo build --release -p carve-languages --example trace_prepare")
    suites = [] if args.no_fixture else [("fixture-ledger", ROOT / "fixtures" / "typescript" / "ledger")]
    for s in args.suite:
        name, _, path = s.partition("=")
        suites.append((name, Path(path)))
    for name, path in suites:
        if not (path / "node_modules" / ".bin" / "vitest").exists():
            raise SystemExit(f"{path}: node_modules/.bin/vitest is missing (install the project's dependencies first)")
        bench_suite(name, path.resolve(), args.runs, args.prepare, args.modes.split(","))


if __name__ == "__main__":
    main()
