#!/usr/bin/env python3
"""Speed a user waits for (issue 12 point 7): carve's end-to-end wall time in plain suite runs.

On a generated call-heavy pytest suite (`bench/gen_callheavy.py`, 120 modules = 480 tests
by default) each round measures, alternating with one plain `python -m pytest` run of the
suite before each carve command (so both sides of a ratio see the same machine noise):

- `trace-cold`: `carve trace` into an empty output folder (index, baseline and trace);
- `tasks-k<K>`: `carve tasks --level 1` with K candidates (`--f2p tests/test_mNN.py`, spread
  evenly over the modules) into an empty output folder: baseline, trace and every state of
  every candidate;
- with `--before OLD_CARVE`: `trace-cold` and `tasks-k1` of another carve binary too.

It prints one JSON line per pair as it is measured (`round`, `mode`, `plain_s`, `carve_s`,
`ratio`, `load` = the 1-minute load average after the pair, and the CPU seconds of both
sides with their `cpu_ratio`: on a shared machine wall time includes waiting for a core, CPU
time much less so; the largest `tasks` run also its `steps`), then one JSON line per mode
with the medians over the rounds (`ratio`, `ratios`, `cpu_ratio`, `target`, `meets_target`
— the target is judged on wall time), a table, and where the
time of the largest `tasks` run goes (carve's `CARVE_TIMINGS` steps, median seconds per kind
of step).

Targets: trace-cold <= 2.3 plain runs; tasks with k candidates <= 2.3 + 1.2 k plain runs.

Usage: cargo build --release && python3 bench/speed.py [--runs 3] [--ks 1 2 4]
"""

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEP = re.compile(r"^\[\s*([0-9.]+)s\] (.*)$")


def base_env():
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["CARVE_NO_PROGRESS"] = "1"
    env["CARVE_QUIET_DETECT"] = "1"
    for k in ("CARVE_PROBE_MAP", "CARVE_TRACE_DIR", "CARVE_TRACE_MODE", "PYTHONPATH", "CARVE_TIMINGS"):
        env.pop(k, None)
    return env


def children_cpu():
    """CPU seconds (user + system) of every waited-for descendant so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd, cwd, env, ok_codes=(0,)):
    """Run `cmd`; (wall seconds, process, CPU seconds of it and every process it waited for)."""
    cpu0 = children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    proc.cpu_s = children_cpu() - cpu0
    if proc.returncode not in ok_codes:
        sys.stderr.write(proc.stderr.decode(errors="replace")[-3000:])
        raise SystemExit(f"benchmark command failed ({proc.returncode}): {' '.join(map(str, cmd))}")
    return elapsed, proc


def step_kind(msg):
    """`validate: restored (byte-identical …)` -> `validate: restored`; `candidate 3 (m05)` -> `candidate`."""
    msg = re.sub(r" \(.*\)$", "", msg)
    msg = re.sub(r"^candidate \d+.*", "candidate (classify)", msg)
    msg = re.sub(r"^baseline: run \d+ of \d+", "baseline: untraced run", msg)
    return msg


def step_times(stderr, total):
    """Seconds per kind of step from carve's CARVE_TIMINGS lines (a step lasts until the next)."""
    steps = []
    for line in stderr.decode(errors="replace").splitlines():
        m = STEP.match(line)
        if m:
            steps.append((float(m.group(1)), step_kind(m.group(2))))
    out = {}
    for i, (t, kind) in enumerate(steps):
        end = steps[i + 1][0] if i + 1 < len(steps) else total
        out[kind] = out.get(kind, 0.0) + max(0.0, end - t)
    return out


def candidates(modules, k):
    """k test files spread evenly over the modules (deterministic)."""
    return [f"tests/test_m{(i * modules) // k + (modules // (2 * k)):02d}.py" for i in range(k)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="rounds (each mode once per round; default 3)")
    ap.add_argument("--modules", type=int, default=120, help="suite size: 4 tests per module (default 120)")
    ap.add_argument("--iterations", type=int, default=20000, help="loop length per test (default 20000)")
    ap.add_argument("--ks", type=int, nargs="+", default=[1, 2, 4], help="candidate counts for carve tasks")
    ap.add_argument("--carve", default=str(ROOT / "target" / "release" / "carve"))
    ap.add_argument("--before", help="another carve binary to compare (trace-cold and tasks-k1)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--work", help="scratch folder (default: a temporary one, removed)")
    args = ap.parse_args()
    carve = Path(args.carve)
    if not carve.is_file():
        raise SystemExit(f"no carve binary at {carve}: run `cargo build --release` first")

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="carve-speed-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        run(args, carve, work)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


def run(args, carve, work):
    suite = work / "suite"
    subprocess.run(
        [args.python, str(ROOT / "bench" / "gen_callheavy.py"), str(suite), "--force",
         "--modules", str(args.modules), "--iterations", str(args.iterations)],
        check=True, stdout=subprocess.DEVNULL,
    )
    env = base_env()
    suite_name = f"callheavy-{args.modules * 4}"
    plain_cmd = [args.python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    # (mode, binary, command after the binary, target in plain runs)
    modes = [("trace-cold", carve, ["trace"], 2.3)]
    for k in args.ks:
        f2p = [x for c in candidates(args.modules, k) for x in ("--f2p", c)]
        modes.append((f"tasks-k{k}", carve, ["tasks", "--level", "1", *f2p], 2.3 + 1.2 * k))
    if args.before:
        before = Path(args.before)
        modes.append(("before:trace-cold", before, ["trace"], 2.3))
        f2p = [x for c in candidates(args.modules, 1) for x in ("--f2p", c)]
        modes.append(("before:tasks-k1", before, ["tasks", "--level", "1", *f2p], 3.5))
    widest = f"tasks-k{max(args.ks)}"

    samples = {m[0]: [] for m in modes}
    cpu = {m[0]: [] for m in modes}
    steps = []
    # Warm-up: bytecode caches of pytest and the suite, as a user's second run has them.
    timed(plain_cmd, suite, env, ok_codes=(0,))
    for rnd in range(args.runs):
        for mode, binary, cmd, _ in modes:
            plain_s, plain_proc = timed(plain_cmd, suite, env)
            out = work / "out"
            shutil.rmtree(out, ignore_errors=True)
            e = dict(env)
            if mode == widest:
                e["CARVE_TIMINGS"] = "1"
            full = [str(binary), cmd[0], str(suite), "--out", str(out), *cmd[1:]]
            # A task rejected by validation exits 1: the run still did every state.
            carve_s, proc = timed(full, work, e, ok_codes=(0, 1))
            if mode == widest:
                steps.append(step_times(proc.stderr, carve_s))
            samples[mode].append((plain_s, carve_s))
            cpu[mode].append((plain_proc.cpu_s, proc.cpu_s))
            # One line per pair as it is measured, so a run cut short still says something.
            pair = {"suite": suite_name, "round": rnd + 1, "mode": mode, "plain_s": round(plain_s, 2),
                    "carve_s": round(carve_s, 2), "ratio": round(carve_s / plain_s, 2),
                    "load": round(os.getloadavg()[0], 1), "plain_cpu_s": round(plain_proc.cpu_s, 2),
                    "carve_cpu_s": round(proc.cpu_s, 2), "cpu_ratio": round(proc.cpu_s / plain_proc.cpu_s, 2)}
            if mode == widest:
                pair["steps"] = {k: round(v, 2) for k, v in steps[-1].items()}
            print(json.dumps(pair), flush=True)
        shutil.rmtree(work / "out", ignore_errors=True)

    rows = []
    for mode, _, cmd, target in modes:
        pairs = samples[mode]
        ratios = [c / p for p, c in pairs]
        row = {
            "suite": suite_name,
            "mode": mode,
            "runs": len(pairs),
            "plain_s": round(statistics.median(p for p, _ in pairs), 2),
            "carve_s": round(statistics.median(c for _, c in pairs), 2),
            "ratio": round(statistics.median(ratios), 2),
            "ratios": [round(r, 2) for r in ratios],
            "target": round(target, 2),
        }
        row["meets_target"] = row["ratio"] <= target
        row["cpu_ratio"] = round(statistics.median(c / p for p, c in cpu[mode]), 2)
        rows.append(row)
        print(json.dumps(row))

    print()
    print(f"| mode | plain run (s) | carve (s) | ratio (median of {args.runs}) | per-round ratios | CPU ratio | target |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        mark = "" if r["meets_target"] else " (missed)"
        print(f"| {r['mode']} | {r['plain_s']:.2f} | {r['carve_s']:.2f} | **{r['ratio']:.2f}x**{mark} | "
              f"{', '.join(f'{x:.2f}' for x in r['ratios'])} | {r['cpu_ratio']:.2f}x | <= {r['target']:.1f}x |")
    if steps:
        plain = statistics.median(p for p, _ in samples[widest])
        kinds = sorted({k for s in steps for k in s}, key=lambda k: -statistics.median(s.get(k, 0.0) for s in steps))
        print()
        print(f"Where the time of {widest} goes (median seconds per kind of step over {len(steps)} runs; "
              f"plain run {plain:.2f} s):")
        print()
        print("| step | seconds | plain runs |")
        print("|---|---|---|")
        for k in kinds:
            sec = statistics.median(s.get(k, 0.0) for s in steps)
            if sec >= 0.05:
                print(f"| {k} | {sec:.2f} | {sec / plain:.2f} |")


if __name__ == "__main__":
    main()
