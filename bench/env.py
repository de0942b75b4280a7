#!/usr/bin/env python3
"""How well `carve env` sets up real repositories with no human input (issue 27).

For every repository of `bench/corpus/dataset-<language>.toml`: a fresh clone at the pinned
commit (from the checkout in /work/corpus/<owner>+<name>, else the mirror in
/work/.mirror/<owner>+<name>/repo), WITHOUT the hand-written install of the oracle, then
`carve env` on it. Compared with `bench/corpus/oracle-<language>.toml` (the hand set-up from
each repository's CI, never carve's input):

- set up: carve kept an environment in which tests pass (status verified or partial);
  repositories whose test runner carve does not drive (mocha …) are `no runner`, counted apart;
- passing: tests carve's verification run passed / tests the oracle's hand run passed (the
  runners count alike for pytest, go test -json ids, cargo and vitest/jest; see notes);
- seconds: wall time of `carve env` (install, verification run, repairs, record).

Prints a table per language and a summary with the held-out repositories apart, and writes
every row as JSON (`--json`). Targets: set up >= 80%, passing >= 95% of the oracle's count.

    bench/env.py [--languages go typescript] [--corpus-dir bench/corpus] [--only NAME…]
                 [--carve target/release/carve] [--env-dir DIR] [--fresh] [--json out.json]

Standard library only. `--env-dir` (default: a folder under the system's temporary folder)
holds the environments; without `--fresh` an environment made by an earlier run is reused
(and its set-up time is then the lookup's).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load(path):
    with open(path, "rb") as f:
        return tomllib.load(f).get("repo", [])


def source_of(name):
    folder = name.replace("/", "+")
    for p in (Path("/work/corpus") / folder, Path("/work/.mirror") / folder / "repo"):
        if p.exists():
            return p
    return None


def clone(name, commit, dest):
    """A fresh clone at `commit`, nothing installed; None and why when it cannot be made."""
    src = source_of(name)
    if src is None:
        return f"no checkout or mirror of {name}"
    r = subprocess.run(["git", "clone", "-q", "--no-checkout", str(src), str(dest)], capture_output=True, text=True)
    if r.returncode != 0:
        return f"git clone failed: {r.stderr.strip()[-300:]}"
    r = subprocess.run(["git", "-C", str(dest), "checkout", "-q", commit], capture_output=True, text=True)
    if r.returncode != 0:
        return f"git checkout {commit} failed: {r.stderr.strip()[-300:]}"
    return None


def run_one(carve, repo, lang, oracle, work, env_dir, fresh, timeout):
    row = {
        "language": lang,
        "name": repo["name"],
        "commit": repo["commit"],
        "held_out": bool(oracle.get("held_out", False)),
        "oracle_passed": oracle.get("passed"),
        "oracle_failed": oracle.get("failed"),
        "oracle_seconds": oracle.get("seconds"),
    }
    tree = work / repo["name"].replace("/", "+")
    shutil.rmtree(tree, ignore_errors=True)
    why = clone(repo["name"], repo["commit"], tree)
    if why:
        row.update(status="no checkout", error=why, seconds=0.0)
        return row
    out = work / (tree.name + ".out")
    shutil.rmtree(out, ignore_errors=True)
    cmd = [carve, "env", str(tree), "--out", str(out), "--format", "json", "--repo-name", repo["name"]]
    if fresh:
        cmd.append("--fresh")
    env = dict(os.environ, CARVE_ENV_DIR=str(env_dir), CARVE_NO_PROGRESS="1")
    env.pop("CARVE_ENV", None)
    env.pop("VIRTUAL_ENV", None)
    start = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        row.update(status="timeout", error=f"carve env did not finish within {timeout}s", seconds=timeout)
        return row
    row["seconds"] = round(time.perf_counter() - start, 1)
    row["exit_code"] = p.returncode
    try:
        report = json.loads(p.stdout)
    except json.JSONDecodeError:
        err = [l for l in p.stderr.splitlines() if l.startswith("carve: error") or l.startswith("  caused by")]
        tail = "\n".join(err) or p.stderr.strip()[-500:]
        # carve cannot run this suite at all (its runner is not one carve drives): not an
        # environment failure, counted apart.
        status = "no runner" if "could not detect the language or test runner" in tail else "error"
        row.update(status=status, error=tail[:1500])
        return row
    e = report["environment"]
    b = e["baseline"]
    row.update(
        status=e["status"],
        reused=report.get("reused", False),
        passed=b["passed"],
        failed=b["failed"],
        errors=b["errors"],
        skipped=b["skipped"],
        collection_errors=len(b.get("collection_errors", {})),
        # Install steps a repair round added, and the project's build when a round added it.
        repairs=sum(1 for s in e["install"] if s["round"] > 0) + sum(1 for f in e["findings"] if f["what"] == "build"),
        build=" ".join(e["activation"].get("build", [])) or None,
        unresolved=e.get("unresolved", []),
        tools=e["tools"],
        packages=len(e["packages"]["packages"]),
        failing=dict(list(b.get("failing", {}).items())[:5]),
    )
    return row


def ratio(row):
    if row.get("passed") is None or not row.get("oracle_passed"):
        return None
    return row["passed"] / row["oracle_passed"]


def set_up(row):
    return row.get("status") in ("verified", "partial")


def summary(rows):
    n = len(rows)
    ok = [r for r in rows if set_up(r)]
    runnable = [r for r in rows if r.get("status") != "no runner"]
    ratios = [ratio(r) for r in rows if ratio(r) is not None]
    at_target = [x for x in ratios if x >= 0.95]
    times = [r["seconds"] for r in ok]
    return {
        "repositories": n,
        "set_up": len(ok),
        "set_up_share": round(len(ok) / n, 3) if n else None,
        "runnable": len(runnable),
        "set_up_share_of_runnable": round(len(ok) / len(runnable), 3) if runnable else None,
        "passing_vs_oracle_median": round(statistics.median(ratios), 3) if ratios else None,
        "passing_vs_oracle_overall": round(sum(r.get("passed") or 0 for r in rows) / max(1, sum(r.get("oracle_passed") or 0 for r in rows)), 3),
        "repos_at_95_percent": len(at_target),
        "setup_seconds_median": round(statistics.median(times), 1) if times else None,
        "setup_seconds_total": round(sum(r.get("seconds", 0) for r in rows), 1),
    }


def table(lang, rows):
    print(f"\n## {lang}\n")
    print(f"{'repository':<28} {'held':<4} {'status':<11} {'passed':>7} {'oracle':>7} {'ratio':>6} {'repairs':>7} {'secs':>7}  note")
    for r in rows:
        x = ratio(r)
        note = r.get("error", "")
        if not note and r.get("unresolved"):
            note = "; ".join(r["unresolved"])[:80]
        if not note and r.get("failing"):
            k, v = next(iter(r["failing"].items()))
            note = f"{k}: {v}"[:80]
        note = note.replace("\n", " ")[:110]
        print(
            f"{r['name']:<28} {'yes' if r['held_out'] else '':<4} {r.get('status', ''):<11} "
            f"{r.get('passed', '') if r.get('passed') is not None else '-':>7} {r.get('oracle_passed') or '-':>7} "
            f"{'' if x is None else f'{x:.2f}':>6} {r.get('repairs', '') if r.get('repairs') is not None else '':>7} "
            f"{r.get('seconds', 0):>7.1f}  {note}"
        )
    for label, part in (("all", rows), ("held out", [r for r in rows if r["held_out"]]), ("not held out", [r for r in rows if not r["held_out"]])):
        if part:
            s = summary(part)
            print(
                f"{label}: set up {s['set_up']}/{s['repositories']} ({s['set_up_share']:.0%}; "
                f"{s['set_up']}/{s['runnable']} of those whose runner carve drives); passing vs oracle "
                f"median {s['passing_vs_oracle_median']}, overall {s['passing_vs_oracle_overall']}, "
                f"{s['repos_at_95_percent']} at >= 95%; set-up time median {s['setup_seconds_median']} s, total {s['setup_seconds_total']} s"
            )


def report(files, languages):
    """The tables and summaries of saved rows, per language, in the order of `languages`."""
    rows = {}
    for f in files:
        text = Path(f).read_text()
        if text.lstrip().startswith('{"rows"') or text.lstrip().startswith("{\n"):
            saved = json.loads(text)["rows"]
        else:
            # A run's stderr: one row per line as each repository ends.
            saved = [json.loads(l) for l in text.splitlines() if l.startswith("{")]
        for r in saved:
            # Runs made before `no runner` was told apart say `error` with the same message.
            if r.get("status") == "error" and "could not detect the language or test runner" in r.get("error", ""):
                r["status"] = "no runner"
            rows[(r["language"], r["name"])] = r
    every = []
    for lang in languages:
        part = sorted((r for (l, _), r in rows.items() if l == lang), key=lambda r: r["name"].lower())
        if part:
            table(lang, part)
            every.extend(part)
    s = summary(every)
    print(
        f"\nall languages: set up {s['set_up']}/{s['repositories']} ({s['set_up_share']:.0%}; {s['set_up']}/{s['runnable']} "
        f"of those whose runner carve drives); {s['repos_at_95_percent']} of {s['set_up']} at >= 95% of the oracle's passing tests; "
        f"passing vs oracle median {s['passing_vs_oracle_median']}; set-up time median {s['setup_seconds_median']} s"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--languages", nargs="+", default=["python", "typescript", "go", "rust"])
    ap.add_argument("--corpus-dir", default=str(ROOT / "bench" / "corpus"))
    ap.add_argument("--only", nargs="+", help="repositories (owner/name) to run, of the languages chosen")
    ap.add_argument("--carve", default=str(ROOT / "target" / "release" / "carve"))
    ap.add_argument("--env-dir", default=str(Path(tempfile.gettempdir()) / "carve-bench-envs"))
    ap.add_argument("--work-dir", default=None, help="where the clones go (default: a temporary folder, removed)")
    ap.add_argument("--fresh", action="store_true", help="make every environment again")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per repository")
    ap.add_argument("--json", help="write every row and the summaries here")
    ap.add_argument(
        "--drop-envs",
        action="store_true",
        help="remove each environment once measured (little disk: environments are 50 MB-2 GB each)",
    )
    ap.add_argument(
        "--report",
        nargs="+",
        metavar="JSON",
        help="print the tables of earlier runs' --json files (or their stderr) instead of running (a later file's row of a repository replaces an earlier one)",
    )
    args = ap.parse_args()
    if args.report:
        report(args.report, args.languages)
        return
    if not Path(args.carve).exists():
        raise SystemExit(f"{args.carve} does not exist: build it (cargo build --release) or pass --carve")
    work = Path(args.work_dir) if args.work_dir else Path(tempfile.mkdtemp(prefix="carve-bench-env-"))
    work.mkdir(parents=True, exist_ok=True)
    corpus = Path(args.corpus_dir)
    results = {"rows": [], "summary": {}}
    try:
        for lang in args.languages:
            dataset, oracle_file = corpus / f"dataset-{lang}.toml", corpus / f"oracle-{lang}.toml"
            if not dataset.exists():
                print(f"\n## {lang}\n\n(no {dataset.name} yet)")
                continue
            oracle = {o["name"]: o for o in load(oracle_file)} if oracle_file.exists() else {}
            rows = []
            for repo in load(dataset):
                if args.only and repo["name"] not in args.only:
                    continue
                row = run_one(args.carve, repo, lang, oracle.get(repo["name"], {}), work, Path(args.env_dir), args.fresh, args.timeout)
                print(json.dumps(row), file=sys.stderr, flush=True)
                rows.append(row)
                folder = repo["name"].replace("/", "+")
                shutil.rmtree(work / folder, ignore_errors=True)
                # carve's output folder holds the run's build products (cargo's target folder).
                shutil.rmtree(work / (folder + ".out"), ignore_errors=True)
                if args.drop_envs:
                    shutil.rmtree(Path(args.env_dir) / folder, ignore_errors=True)
            table(lang, rows)
            results["rows"].extend(rows)
            results["summary"][lang] = {
                "all": summary(rows),
                "held_out": summary([r for r in rows if r["held_out"]]),
                "not_held_out": summary([r for r in rows if not r["held_out"]]),
            }
    finally:
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results["summary"], indent=2))


if __name__ == "__main__":
    main()
