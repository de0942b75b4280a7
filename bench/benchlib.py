"""What carve's benchmark scripts share: timing a command (wall and CPU time of its process
tree), alternating the variants of one suite so that every side sees the same machine
noise, reading what a traced run recorded, and the JSON line of one traced/untraced ratio.

Also what the corpus scripts share: one `carve tasks` run with its logs kept and its report
read, and the loop of an overhead script over the fixture and the corpus suites.

Standard library only; imported by `bench/overhead*.py` and `bench/corpus*.py` (they run
from the repository, so `bench/` is on `sys.path` as the script's own folder).
"""

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


def timed(cmd, cwd, env):
    """Wall time and CPU time (user + system of the whole process tree) of one run; a failing
    command stops the benchmark with its output's tail."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout.decode(errors="replace")[-3000:])
        raise SystemExit(f"benchmark command failed ({proc.returncode}) in {cwd}: {' '.join(map(str, cmd))}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def recorded(trace_dir, with_import=False):
    """(test records, hits) in a trace folder's `*.jsonl` files; the `<import>` pseudo-test
    counts only `with_import`."""
    tests = hits = 0
    for f in Path(trace_dir).glob("*.jsonl"):
        for line in f.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("kind") == "test" and (with_import or rec.get("test") != "<import>"):
                tests += 1
                hits += len(rec.get("hits", []))
    return tests, hits


def require_hits(trace_dir, suite, mode, with_import=False):
    """A traced run that recorded nothing timed an untraced one: refuse to go on."""
    tests, hits = recorded(trace_dir, with_import)
    if hits == 0:
        raise SystemExit(f"the {mode} traced run of {suite} recorded no hits: the probes did not run")
    return tests


def alternate(variants, runs, after_warmup=None):
    """Run every variant once uncounted (warm-up: builds, caches), calling
    `after_warmup(name)` after each, then `runs` rounds of all variants in turn. Returns the
    median wall and CPU seconds per variant: `({name: wall}, {name: cpu})`."""
    for name, run in variants.items():
        run()
        if after_warmup:
            after_warmup(name)
    walls = {k: [] for k in variants}
    cpus = {k: [] for k in variants}
    for _ in range(runs):
        for name, run in variants.items():
            wall, cpu = run()
            walls[name].append(wall)
            cpus[name].append(cpu)
    med = lambda d: {k: statistics.median(v) for k, v in d.items()}  # noqa: E731
    return med(walls), med(cpus)


def ratio_row(language, suite, mode, untraced, traced, untraced_cpu, traced_cpu, **extra):
    """One measurement's JSON line (printed, flushed) and its dict."""
    row = {
        "language": language,
        "suite": suite,
        "mode": mode,
        "untraced_s": round(untraced, 4),
        "traced_s": round(traced, 4),
        "ratio": round(traced / untraced, 3),
        # CPU time of the process tree: steadier than wall time on a shared machine.
        "untraced_cpu_s": round(untraced_cpu, 4),
        "traced_cpu_s": round(traced_cpu, 4),
        "cpu_ratio": round(traced_cpu / untraced_cpu, 3),
        **extra,
    }
    print(json.dumps(row), flush=True)
    return row


def corpus_suites(language, fixture, corpus_dir, marker):
    """The fixture `(name, path)` and every repository of `bench/corpus/<language>.toml`
    checked out under `corpus_dir/<name>` (recognised by the file `marker`)."""
    out = [fixture]
    corpus = tomllib.loads((ROOT / "bench" / "corpus" / f"{language}.toml").read_text())
    for repo in corpus["repo"]:
        path = Path(corpus_dir) / repo["name"]
        if (path / marker).is_file():
            out.append((f"{repo['repo']}@{repo['commit'][:12]}", path))
        else:
            sys.stderr.write(f"skipping {repo['repo']}: not checked out (with a {marker}) at {path}\n")
    return out


def suite_args(ap, corpus):
    """The options every corpus overhead script takes: `--runs`, `--corpus` (default
    `corpus`) and `--suite`."""
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--corpus", default=corpus)
    ap.add_argument("--suite", action="append", help="only suites whose name contains this")


def each_suite(bench_suite, args, language, fixture, marker, prefix, tmp=None):
    """`bench_suite(name, src, work, args)` for the fixture and the checked-out corpus
    suites (`corpus_suites`) whose name contains one of `args.suite` (all without it), in a
    temporary folder `work` (named `prefix...`, below `tmp` when given) removed after."""
    work = Path(tempfile.mkdtemp(prefix=prefix, dir=tmp))
    try:
        for name, src in corpus_suites(language, fixture, args.corpus, marker):
            if args.suite and not any(s in name for s in args.suite):
                continue
            bench_suite(name, src, work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def carve_tasks(cmd, out, timeout, env, start):
    """Run the `carve tasks ... --format json` command `cmd` for at most `timeout` seconds,
    its stderr and stdout kept as `out/tasks-stderr.log` and `out/tasks-report.json`.
    Returns `(report, None, seconds)`, or `(None, error, seconds)` when it timed out or
    printed no report; the seconds count from `start` (a `time.monotonic()`), a time-out's
    are `timeout`."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout}s", timeout
    seconds = time.monotonic() - start
    (out / "tasks-stderr.log").write_text(p.stderr)
    (out / "tasks-report.json").write_text(p.stdout)
    try:
        return json.loads(p.stdout), None, seconds
    except json.JSONDecodeError:
        tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        return None, f"exit {p.returncode}: {tail}", seconds


def built_example(name):
    """The newest build (release or debug) of a `carve-languages` example, or an exit that
    says how to build it."""
    built = [p for p in (ROOT / "target" / d / "examples" / name for d in ("release", "debug")) if p.exists()]
    if not built:
        raise SystemExit(f"{name} is not built: run `cargo build -p carve-languages --example {name}`")
    return max(built, key=lambda p: p.stat().st_mtime)


def clean_env(drop):
    """This process's environment without the variables `drop` names."""
    return {k: v for k, v in os.environ.items() if k not in drop}
