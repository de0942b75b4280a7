#!/usr/bin/env python3
"""Run `carve tasks` on the Go or the TypeScript/JavaScript corpus of real projects and
print one table (as corpus.py does for Python, with its columns and its rejection
grouping, which this script imports).

The projects are listed in `bench/corpus/go.toml` and `bench/corpus/typescript.toml`
(name, repository, pinned commit, install command; `checkout` when the folder is not
named as the project). Their code never enters this repository: check each one out at
its commit into the corpus folder (Go: `/work/corpus/<name>`, TypeScript:
`/work/corpus/ts/<name>`) and run its install command there (`go mod download` from the
Go module proxy, `npm install` from the npm registry, as a user would); `--setup` runs
the install commands of the checkouts it finds.

Candidates are carve's own, every one tried: one per test file whose tests pass at
baseline (a Go package's tests and subtests grouped by the `_test.go` file that defines
them; a vitest or jest file's tests; sorted, so the choice is deterministic), and with
`--module-groups` one per group of test files that test one module. `--candidates K`
tries only the K that would extract the most (carve's ranking). `--protect` and
`--max-lines` are carve's protection policy and line budget. For each project:

    carve tasks PROJECT --out OUT/NAME --level 1 --format json --protect POLICY

Columns as corpus.py's: candidates, valid tasks and yield, lines / files / functions per
task (median / mean / max, from each bundle's `instance.json`), tasks of at least 100 and
300 lines, carve's wall time over one plain run of the
suite (`go test -count=1 ./...`, `npx vitest run`), and the rejections grouped by reason.
`--recheck` re-validates every emitted bundle with `carve validate BUNDLE --repo PROJECT`
(an independent re-run from the bundle alone, with the real toolchain).

Standard library only.

    python3 bench/corpus_go.py --setup
    python3 bench/corpus_go.py --recheck --json
    python3 bench/corpus_go.py --recheck --vet   # and `go vet` each bundle's masked state
    python3 bench/corpus_go.py --only semver --carve target/debug/carve
    python3 bench/corpus_go.py --language typescript --recheck --json
    python3 bench/corpus_go.py --protect feature --recheck --out /tmp/carve-corpus-go-feature
    python3 bench/corpus_go.py --table-only --recheck   # the table of the last run, from OUT
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402  (the Python corpus script: its table and reason grouping)
from benchlib import carve_tasks  # noqa: E402


# Per language (its corpus list is bench/corpus/LANGUAGE.toml): the list's table key, the
# default corpus folder, the file a checkout has at its root, and the plain run of the suite
# carve's time is divided by.
LANGUAGES = {
    "go": {"key": "repo", "corpus": "/work/corpus", "marker": "go.mod",
           "plain": ["go", "test", "-count=1", "./..."]},
    "typescript": {"key": "project", "corpus": "/work/corpus/ts",
                   "marker": "package.json", "plain": ["npx", "--no-install", "vitest", "run"]},
}


def go_env():
    return dict(os.environ, CARVE_NO_PROGRESS="1", CARVE_QUIET_DETECT="1", GOFLAGS="-mod=mod")


def plain_run(repo, out, command):
    """Seconds of one plain run of the suite (cached in OUT/NAME/plain.json)."""
    cache = out / "plain.json"
    if cache.exists():
        return json.loads(cache.read_text())["seconds"]
    start = time.monotonic()
    subprocess.run(command, cwd=repo, env=go_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.monotonic() - start
    out.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"seconds": seconds}))
    return seconds


def run_carve(carve, repo, out, timeout, extra=(), k=0, env=None):
    """`carve tasks` with carve's candidates (and the flags `extra`): every one, or with
    `k` > 0 the `k` carve ranks first."""
    out.mkdir(parents=True, exist_ok=True)
    cmd = [str(carve), "tasks", str(repo), "--out", str(out), "--level", "1", "--format", "json", *extra]
    if k > 0:
        cmd += ["--candidates", str(k)]
    report, error, seconds = carve_tasks(cmd, out, timeout, env or go_env(), time.monotonic())
    if error:
        return {"candidates": 0, "error": error, "seconds": seconds}
    if k > 0 and "ranking" in report:
        return {"candidates": sum(1 for r in report["ranking"] if r["tried"]), "report": report, "seconds": seconds}
    # With --level 1 every candidate gives one task or one rejection without a level.
    candidates = len(report["tasks"]) + sum(1 for r in report["rejected"] if r.get("level") is None)
    return {"candidates": candidates, "report": report, "seconds": seconds}


def recheck(carve, bundle, repo, env=None):
    """`carve validate` of `bundle` (with `env`, by default `go_env()`): True when valid; why
    not is printed."""
    p = subprocess.run([str(carve), "validate", str(bundle), "--repo", str(repo), "--format", "json"],
                       capture_output=True, text=True, env=env or go_env())
    if p.returncode != 0:
        print(f"recheck failed: {bundle}: {p.stderr.strip()[-400:]}", file=sys.stderr)
    return p.returncode == 0


def vet_masked(bundle, repo):
    """`go vet ./...` of a bundle's masked state, outside carve: the module copied, the
    bundle's `mask.patch` applied with `git apply` (F2P tests removed per test where they
    share a `_test.go` file with others). True when vet passes; its output is printed."""
    tmp = Path(tempfile.mkdtemp(prefix="carve-vet-"))
    try:
        tree = tmp / "tree"
        shutil.copytree(repo, tree, symlinks=True)
        steps = [["git", "apply", "--unsafe-paths", "-p1", str(bundle / "mask.patch")], ["go", "vet", "./..."]]
        for cmd in steps:
            p = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, env=go_env())
            if p.returncode != 0:
                print(f"vet failed: {bundle.name}: {' '.join(cmd[:2])}: {(p.stdout + p.stderr).strip()[-400:]}",
                      file=sys.stderr)
                return False
        return True
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def summarize(name, r, plain, carve_out, recheck_task=None):
    """A project's table row and its rejections by reason, from `run_carve`'s result `r`
    (tasks read from `carve_out`); `recheck_task(task)` re-validates a bundle when given."""
    row = {"name": name, "candidates": r["candidates"], "seconds": r["seconds"], "plain": plain}
    mine, tasks, stats = {}, [], {"lines": [], "files": [], "functions": []}
    if "error" in r:
        row["error"] = r["error"]
        mine.setdefault("carve failed: " + corpus.reason_key(r["error"]), []).append(name)
    else:
        tasks = r["report"]["tasks"]
        for t in tasks:
            inst = json.loads((carve_out / t / "instance.json").read_text())
            for key in stats:
                stats[key].append(inst[key])
        for rej in r["report"]["rejected"]:
            mine.setdefault(corpus.reason_key(rej["reason"]), []).append(f"{name}:{rej['feature']}")
    row["tasks"] = len(tasks)
    row.update(stats)
    if recheck_task is not None:
        row["rechecked"] = sum(recheck_task(t) for t in tasks)
    return row, mine


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--language", choices=sorted(LANGUAGES), default="go")
    ap.add_argument("--corpus", type=Path, help="checkouts (default: /work/corpus, TypeScript /work/corpus/ts)")
    ap.add_argument("--out", type=Path, help="default: /tmp/carve-corpus-LANGUAGE")
    ap.add_argument("--carve", type=Path, default=ROOT / "target" / "release" / "carve")
    ap.add_argument("--only", nargs="*", help="module names")
    ap.add_argument("--setup", action="store_true", help="run each checkout's install command; then exit")
    ap.add_argument("--recheck", action="store_true", help="re-validate every bundle with `carve validate`")
    ap.add_argument("--vet", action="store_true",
                    help="Go: `go vet ./...` of every bundle's masked state (mask.patch applied to a copy)")
    ap.add_argument("--candidates", type=int, default=0,
                    help="try only the K candidates carve ranks first (0, the default: every candidate)")
    corpus.add_policy_args(ap)
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per module")
    ap.add_argument("--json", action="store_true", help="also print the rows as JSON lines")
    ap.add_argument("--table-only", action="store_true",
                    help="print the table of an earlier run from OUT (each module's row.json) without running")
    args = ap.parse_args()
    lang = LANGUAGES[args.language]
    env_corpus = os.environ.get("CARVE_CORPUS_GO") if args.language == "go" else None
    args.corpus = args.corpus or Path(env_corpus or lang["corpus"])
    args.out = args.out or Path(f"/tmp/carve-corpus-{args.language}")
    entries = corpus.load_corpus(args.language, lang["key"], args.only)
    rows, reasons = [], {}
    for e in entries:
        repo, out = args.corpus / e.get("checkout", e["name"]), args.out / e["name"]
        if not corpus.checked_out(e, repo, lang["marker"]):
            continue
        if args.setup:
            subprocess.run(e["install"], shell=True, cwd=repo, env=go_env(), check=True)
            continue
        if args.table_only:
            saved = corpus.saved_row(out, e["name"])
            if saved:
                corpus.add_row(rows, reasons, *saved)
            continue
        plain = plain_run(repo, out, lang["plain"])
        shutil.rmtree(out / "carve", ignore_errors=True)  # a fresh run: no cached baseline or trace
        r = run_carve(args.carve, repo, out / "carve", args.timeout, corpus.policy_args(args), args.candidates)
        row, mine = summarize(e["name"], r, plain, out / "carve",
                              (lambda t: recheck(args.carve, out / "carve" / t, repo)) if args.recheck else None)
        row.update(corpus.policy_row(args), pick="ranked" if args.candidates else "all", k=args.candidates)
        if args.vet and args.language == "go":
            bundles = [out / "carve" / t for t in r.get("report", {}).get("tasks", [])]
            row["vetted"] = sum(vet_masked(b, repo) for b in bundles)
            print(f"# {e['name']}: go vet of the masked state passes for {row['vetted']}/{len(bundles)} bundles",
                  file=sys.stderr)
        corpus.add_row(rows, reasons, row, mine)
        (out / "row.json").write_text(json.dumps({"row": row, "reasons": mine}, sort_keys=True))
        print(f"# {e['name']}: {row['tasks']}/{row['candidates']} in {row['seconds']:.0f}s", file=sys.stderr)
    if not args.setup:
        corpus.print_table(rows, reasons, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
