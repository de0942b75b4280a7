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
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORTER = ROOT / "languages" / "src" / "typescript" / "runner" / "carve_vitest_reporter.mjs"
SHIM_VARS = ("CARVE_NODE_PROBES", "CARVE_TRACE_DIR", "CARVE_TRACE_MODE", "CARVE_EXTRA_SETUP", "CARVE_PROGRESS")


def vitest_version(tree):
    try:
        v = json.loads((tree / "node_modules" / "vitest" / "package.json").read_text())["version"]
        return tuple(int(p) for p in v.split("-")[0].split(".")[:3])
    except (OSError, ValueError, KeyError):
        return None


def timed(cmd, cwd, env):
    """Wall time and CPU time (user + system of the process tree) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout.decode(errors="replace")[-3000:])
        raise SystemExit(f"benchmark command failed ({proc.returncode}) in {cwd}: {' '.join(map(str, cmd))}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def recorded(trace_dir):
    """Hits recorded per test record: a traced run that recorded nothing timed nothing."""
    tests, hits = 0, 0
    for f in trace_dir.glob("*.jsonl"):
        for line in f.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("kind") == "test" and rec.get("test") != "<import>":
                tests += 1
                hits += len(rec.get("hits", []))
    return tests, hits


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
        env = {k: v for k, v in os.environ.items() if k not in SHIM_VARS}
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
            untraced_s, traced_s, untraced_cpu, traced_cpu = [], [], [], []
            for _ in range(runs):
                wall, cpu = timed([str(plain / "node_modules" / ".bin" / "vitest"), *cmd_tail], plain, env)
                untraced_s.append(wall)
                untraced_cpu.append(cpu)
                shutil.rmtree(trace_dir, ignore_errors=True)
                wall, cpu = timed(
                    [str(traced / "node_modules" / ".bin" / "vitest"), *cmd_tail, *setup["args"]], traced, traced_env
                )
                traced_s.append(wall)
                traced_cpu.append(cpu)
                tests, hits = recorded(trace_dir)
                if tests == 0 or hits == 0:
                    raise SystemExit(f"the traced run of {name} recorded {tests} tests, {hits} hits: not tracing")
            u, t = statistics.median(untraced_s), statistics.median(traced_s)
            out.append(
                {
                    "language": "typescript",
                    "suite": name,
                    "runner": "vitest" + (".".join(map(str, version)) if version else ""),
                    "mode": mode,
                    "runs": runs,
                    "tests_traced": tests,
                    "untraced_s": round(u, 3),
                    "traced_s": round(t, 3),
                    "ratio": round(t / u, 3),
                    "untraced_cpu_s": round(statistics.median(untraced_cpu), 3),
                    "traced_cpu_s": round(statistics.median(traced_cpu), 3),
                    "cpu_ratio": round(statistics.median(traced_cpu) / statistics.median(untraced_cpu), 3),
                    "load_1min": round(os.getloadavg()[0], 1),
                }
            )
            print(json.dumps(out[-1]), flush=True)
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
