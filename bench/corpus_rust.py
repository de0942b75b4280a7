#!/usr/bin/env python3
"""Run `carve tasks` on the Rust corpus of real crates and print one table (corpus.py's
table and rejection grouping, for cargo projects).

The crates are listed in `bench/corpus/rust.toml` (name, `owner/name`, pinned commit,
install command). Their code never enters this repository: check each one out at its
commit into the corpus folder (`/work/corpus/rust/<name>`) and run its install command
there (`cargo generate-lockfile && cargo fetch`, from crates.io, as a user would);
`--setup` runs the install commands of the checkouts it finds.

Candidates: carve's default (one per test file) suits Rust badly — a crate's unit tests
share `src/lib.rs` with its code and most of its examples are doctests — so this script
forms the groups from `carve baseline` (tests that pass and are not flaky): one per
doctested item (its doctests together: `lib::doctest::src/lib.rs - Either<L,R>::left`),
one per other test; every group by default (`--candidates 0`), each passed as one `--f2p`
group, or `--candidates K` of them. Which K: `--pick spaced` (the default), evenly spaced
over the sorted list (deterministic, `corpus.pick`); `--pick ranked`, every group is passed
with carve's `--candidates K`, so carve classifies them all first (no test runs) and tries
the K that would extract the most (its report's `ranking`). `--protect`, `--max-lines` and
`--module-groups` are passed to carve (its protection policy, line budget, and the
candidates of test files grouped by module with `--per-file`):

    carve tasks CRATE --out OUT/NAME/carve --level 1 --format json --f2p G1... --f2p G2...
    carve tasks CRATE --out OUT/NAME/carve --level 1 --format json --candidates K --f2p G1... (every group)

Columns as corpus.py's (time: carve's wall time, baseline included, over one plain
`cargo test` with nothing to compile); `--recheck` re-validates every emitted bundle with
`carve validate BUNDLE --repo CRATE` (an independent re-run from the bundle alone, with
the real toolchain).

Standard library only.

    python3 bench/corpus_rust.py --setup
    python3 bench/corpus_rust.py --recheck                         # every group
    python3 bench/corpus_rust.py --protect feature --recheck --out /tmp/carve-corpus-rust-feature
    python3 bench/corpus_rust.py --candidates 3 --recheck
    python3 bench/corpus_rust.py --candidates 3 --recheck --pick ranked
    python3 bench/corpus_rust.py --only either --candidates 2
    python3 bench/corpus_rust.py --per-file --out /tmp/carve-corpus-rust-files   # carve's candidates
    python3 bench/corpus_rust.py --table-only --recheck   # the table of the last run, from OUT
    python3 bench/corpus_rust.py --per-file --cache-from /tmp/carve-corpus-rust --out /tmp/carve-corpus-rust-files
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402  (the Python corpus script: pick, reason grouping, the table)
import corpus_go  # noqa: E402  (the Go corpus script: a run with carve's own candidates)
from benchlib import carve_tasks  # noqa: E402


def rust_env():
    return dict(os.environ, CARVE_NO_PROGRESS="1", CARVE_QUIET_DETECT="1", CARGO_TERM_COLOR="never")


def groups(tests):
    """The candidate groups of a baseline's tests: a doctested item's doctests together,
    every other test alone; sorted by their first id."""
    by_key = {}
    for t, e in tests.items():
        if e["status"] != "passed" or e.get("flaky"):
            continue
        key = re.sub(r" \(example \d+\)$", "", t) if "::doctest::" in t else t
        by_key.setdefault(key, []).append(t)
    return [sorted(v) for _, v in sorted(by_key.items())]


def plain_run(repo, out):
    """Seconds of one plain `cargo test` with nothing left to compile (cached in
    OUT/NAME/plain.json): an uncounted build first, in a target folder outside the tree."""
    cache = out / "plain.json"
    if cache.exists():
        return json.loads(cache.read_text())["seconds"]
    env = dict(rust_env(), CARGO_TARGET_DIR=str(out / "plain-target"))
    cmd = ["cargo", "test", "--locked", "--offline", "--no-fail-fast", "-q"]
    subprocess.run(cmd + ["--no-run"], cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    start = time.monotonic()
    subprocess.run(cmd, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.monotonic() - start
    shutil.rmtree(out / "plain-target", ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"seconds": seconds}))
    return seconds


def run_carve(carve, repo, out, k, timeout, per_file=False, pick="spaced", extra=()):
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    if per_file:
        # carve's own candidates: one per test file (a library's unit tests and doctests
        # under its label), run as corpus_go.py runs them.
        return corpus_go.run_carve(carve, repo, out, timeout, extra, k if pick == "ranked" else 0, rust_env())
    cmd = [str(carve), "baseline", str(repo), "--out", str(out), "--format", "json"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=rust_env())
        (out / "baseline-stderr.log").write_text(p.stderr)
        every = groups(json.loads(p.stdout)["tests"])
    except (subprocess.TimeoutExpired, json.JSONDecodeError, KeyError) as e:
        tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1] if "p" in locals() else ""
        return {"candidates": 0, "error": f"carve baseline failed: {type(e).__name__} {tail}", "seconds": 0}
    cmd = [str(carve), "tasks", str(repo), "--out", str(out), "--level", "1", "--format", "json", *extra]
    if pick == "ranked" and 0 < k < len(every):
        # Every group to carve, which classifies them all (no test runs) and tries the k
        # that would extract the most (`ranking` in its report).
        cands = every[:k]  # only their number counts below
        cmd += ["--candidates", str(k)]
        for group in every:
            cmd += ["--f2p", *group]
    else:
        cands = corpus.pick(every, k)
        for group in cands:
            cmd += ["--f2p", *group]
    (out / "tasks-command.json").write_text(json.dumps(cmd))
    report, error, seconds = carve_tasks(cmd, out, timeout, rust_env(), start)
    if error:
        return {"candidates": len(cands), "error": error, "seconds": seconds}
    return {"candidates": len(cands), "report": report, "seconds": seconds}


def measure(args, e, repo, out):
    """One crate's row and its rejections by reason."""
    plain = plain_run(repo, out)
    shutil.rmtree(out / "carve", ignore_errors=True)  # a fresh run: no cached baseline or trace
    if args.cache_from:
        # The baseline and trace of an earlier run of the same checkout (carve keys them by
        # the tree's digest and the command, so a changed tree is not served from them).
        cached = args.cache_from / e["name"] / "carve" / "cache"
        if cached.is_dir():
            shutil.copytree(cached, out / "carve" / "cache")
    r = run_carve(args.carve, repo, out / "carve", args.candidates, args.timeout, args.per_file, args.pick,
                  corpus.policy_args(args))
    check = (lambda t: corpus_go.recheck(args.carve, out / "carve" / t, repo, rust_env())) if args.recheck else None
    row, mine = corpus_go.summarize(e["name"], r, plain, out / "carve", check)
    row.update(corpus.policy_row(args), pick=args.pick, k=args.candidates)
    return row, mine


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=Path(os.environ.get("CARVE_CORPUS_RUST", "/work/corpus/rust")))
    ap.add_argument("--out", type=Path, default=Path("/tmp/carve-corpus-rust"))
    ap.add_argument("--carve", type=Path, default=ROOT / "target" / "release" / "carve")
    ap.add_argument("--only", nargs="*", help="crate names")
    ap.add_argument("--candidates", type=int, default=0, help="candidate groups per crate (0, the default: all)")
    corpus.add_policy_args(ap)
    ap.add_argument("--pick", choices=["spaced", "ranked"], default="spaced",
                    help="spaced: K groups evenly spaced over the sorted list, passed as --f2p; ranked: every "
                         "group passed, with `--candidates K` (carve tries the K that extract the most)")
    ap.add_argument("--per-file", action="store_true",
                    help="carve's own candidates (one per test file) instead of the script's groups")
    ap.add_argument("--cache-from", type=Path,
                    help="start from the baseline and trace cached by an earlier run's OUT (time: without them)")
    ap.add_argument("--setup", action="store_true", help="run each checkout's install command; then exit")
    ap.add_argument("--recheck", action="store_true", help="re-validate every bundle with `carve validate`")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per crate")
    ap.add_argument("--json", action="store_true", help="also print the rows as JSON lines")
    ap.add_argument("--table-only", action="store_true",
                    help="print the table of an earlier run from OUT (each crate's row.json) without running")
    args = ap.parse_args()
    entries = corpus.load_corpus("rust", only=args.only)
    rows, reasons = [], {}
    for e in entries:
        repo, out = args.corpus / e["name"], args.out / e["name"]
        if not corpus.checked_out(e, repo, "Cargo.toml"):
            continue
        if args.setup:
            subprocess.run(e["install"], shell=True, cwd=repo, env=rust_env(), check=True)
            continue
        if args.table_only:
            saved = corpus.saved_row(out, e["name"])
            if saved is None:
                continue
            row, mine = saved
        else:
            row, mine = measure(args, e, repo, out)
            (out / "row.json").write_text(json.dumps({"row": row, "reasons": mine}, sort_keys=True))
            print(f"# {e['name']}: {row['tasks']}/{row['candidates']} in {row['seconds']:.0f}s", file=sys.stderr)
        corpus.add_row(rows, reasons, row, mine)
    if not args.setup:
        corpus.print_table(rows, reasons, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
