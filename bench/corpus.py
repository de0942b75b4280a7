#!/usr/bin/env python3
"""Run `carve tasks` on the real-repository corpus and print one table.

The corpus is listed in `bench/corpus/<language>.toml` (name, `owner/name`, pinned commit,
install command). Their code never enters this repository: `--setup` clones each one at
its commit into the corpus folder and installs it into its own virtualenv beside it (as
a user would: the listed install command, run with that virtualenv first on PATH).

For each repository the script runs `carve baseline` and `carve tasks` in one output
folder (the second reuses the first's baseline). Three ways to choose the candidates
(`--pick`):

- `all` (the default): every candidate carve makes (one per file of passing tests, and
  with `--module-groups` one per group of test files that test one module), each tried:

      carve tasks REPO --out OUT/NAME --python VENV/bin/python --level 1 --format json \
          --protect POLICY --max-lines N

  The design's yield is over *all* candidates, not a ranked few.
- `ranked`: carve classifies every candidate (no test runs) and tries the `--candidates K`
  that would extract the most (`--candidates K` of `carve tasks`); the candidates counted
  are the ones carve tried (`tried` in the report's `ranking`).
- `spaced`: the script chooses, blind. It picks K of the files of the passing tests
  (sorted, evenly spaced: deterministic) and names them (`--f2p FILE1 --f2p FILE2 ...`).

`--protect all|sampled:N|feature` is carve's protection policy (default `all`), passed
through with `--max-lines` and `--module-groups`; each row records them. Columns:
candidates, valid tasks and yield (tasks / candidates), gold lines, files and functions
per task (median / mean / max, from each bundle's `instance.json`), how many tasks have at
least 100 and 300 gold lines, carve's wall time (baseline included) over one plain
`python -m pytest` run of the same repository; then the whole corpus beside FeatureBench's
task sizes (mean 790 lines, 15.7 files, 29.2 functions), and the rejections grouped by
reason (the first line of carve's reason, with paths, numbers and names blanked so that
equal causes count together). `--recheck` re-validates every emitted bundle with `carve
validate` (an independent re-run from the bundle alone).

Standard library only.

    python3 bench/corpus.py --setup                 # once: clone, venv, install
    python3 bench/corpus.py                         # the table: every candidate, --protect all
    python3 bench/corpus.py --protect sampled:5 --out /tmp/carve-corpus-sampled5
    python3 bench/corpus.py --protect feature --recheck --out /tmp/carve-corpus-feature
    python3 bench/corpus.py --protect sampled:5 --module-groups=only --out /tmp/carve-corpus-groups
    python3 bench/corpus.py --only toolz boltons --pick ranked --candidates 4 --recheck
    python3 bench/corpus.py --pick spaced --candidates 2 --out /tmp/carve-corpus-spaced
    python3 bench/corpus.py --dataset --protect sampled:5 --only msiemens/tinydb tkem/cachetools

`--dataset` runs the public corpus of `bench/corpus/dataset-<language>.toml` instead (set
up by hand as `oracle-<language>.toml` says: checkouts in /work/corpus/<owner>+<name>,
virtualenvs in /work/corpus-envs/<owner>+<name>); held-out repositories are marked.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from benchlib import carve_tasks

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def load_corpus(language, key="repo", only=None, dataset=False):
    """The entries of `bench/corpus/<language>.toml` (its `key` table list); with `only`,
    the entries of those names, in the order given. With `dataset`, the public corpus of
    `dataset-<language>.toml` instead: each entry's `dir` is its `owner+name` folder and
    `held_out` comes from `oracle-<language>.toml`."""
    if dataset:
        entries = dataset_corpus(language)
    else:
        with open(HERE / "corpus" / f"{language}.toml", "rb") as f:
            entries = tomllib.load(f)[key]
    if only:
        by_name = {e["name"]: e for e in entries}
        entries = [by_name[n] for n in only]
    return entries


def dataset_corpus(language):
    """The repositories of `dataset-<language>.toml` with their folder name and whether the
    oracle marks them held out (nobody may tune carve on those)."""
    with open(HERE / "corpus" / f"dataset-{language}.toml", "rb") as f:
        entries = tomllib.load(f)["repo"]
    with open(HERE / "corpus" / f"oracle-{language}.toml", "rb") as f:
        held = {o["name"]: o.get("held_out", False) for o in tomllib.load(f)["repo"]}
    return [dict(e, dir=e["name"].replace("/", "+"), held_out=held.get(e["name"], False)) for e in entries]


def checked_out(e, repo, marker):
    """Whether `repo` holds a checkout of the entry `e` (the file `marker`); if not, says on
    stderr what to check out there."""
    if (repo / marker).is_file():
        return True
    print(f"{e['name']}: no checkout at {repo}: check out {e['repo']} at {e['commit']} there", file=sys.stderr)
    return False


def venv_python(venvs, name):
    return venvs / name / "bin" / "python"


def setup(entry, corpus, venvs):
    repo = corpus / entry["name"]
    if not repo.exists():
        url = f"https://github.com/{entry['repo']}.git"
        subprocess.run(["git", "clone", "--quiet", url, str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "checkout", "--quiet", entry["commit"]], check=True)
    py = venv_python(venvs, entry["name"])
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venvs / entry["name"])], check=True)
    env = dict(os.environ, PATH=f"{py.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    subprocess.run(entry["install"], shell=True, cwd=repo, env=env, check=True)


def carve_env(carve):
    """carve finds its native recorder next to its binary; a copied binary is told where."""
    env = dict(os.environ, CARVE_NO_PROGRESS="1")
    shim = sorted((ROOT / "target" / "shim").glob("*.whl"))
    if shim and "CARVE_SHIM_NATIVE" not in env and not (carve.parent.parent / "shim").is_dir():
        env["CARVE_SHIM_NATIVE"] = str(shim[-1])
    return env


def test_files(carve, repo, py, out, timeout):
    """Files of the tests that pass at baseline (from `carve baseline`, whose result the
    `carve tasks` run in the same output folder reuses), sorted."""
    cmd = [str(carve), "baseline", str(repo), "--out", str(out), "--python", str(py), "--format", "json"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=carve_env(carve))
    (out / "baseline-stderr.log").write_text(p.stderr)
    tests = json.loads(p.stdout)["tests"]
    files = {t.split("::", 1)[0] for t, e in tests.items() if e["status"] == "passed" and not e.get("flaky")}
    return sorted(files)


def pick(files, k):
    """`k` of `files`, evenly spaced (deterministic)."""
    if k <= 0 or len(files) <= k:
        return list(files)
    step = len(files) / k
    return [files[int(i * step + step / 2)] for i in range(k)]


def plain_run(repo, py, out):
    """Seconds of one plain pytest run (cached in OUT/NAME/plain.json)."""
    cache = out / "plain.json"
    if cache.exists():
        return json.loads(cache.read_text())["seconds"]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    start = time.monotonic()
    subprocess.run(
        [str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    seconds = time.monotonic() - start
    out.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"seconds": seconds}))
    return seconds


def reason_key(reason):
    """A reason with its specifics blanked, so equal causes count together."""
    line = reason.strip().splitlines()[0] if reason.strip() else "(no reason given)"
    line = re.sub(r"\([^()]*::[^()]*\)", "(…)", line)  # lists of test ids
    line = re.sub(r"`[^`]*`", "`…`", line)
    line = re.sub(r"\b[\w./-]+\.py(::[\w.\[\]-]+)?", "FILE", line)
    line = re.sub(r"\b\d+\b", "N", line)
    line = re.sub(r"(/[\w.+-]+)+", "PATH", line)
    return line[:140]


def policy_args(args):
    """The `carve tasks` flags of the protection policy, line budget and candidate groups."""
    out = ["--protect", args.protect]
    if args.max_lines is not None:
        out += ["--max-lines", str(args.max_lines)]
    if args.module_groups:
        out.append(f"--module-groups={args.module_groups}")
    return out


def run_carve(carve, entry, repo, py, out, k, timeout, pick_mode, extra=()):
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    cmd = [str(carve), "tasks", str(repo), "--out", str(out), "--python", str(py), "--level", "1", "--format", "json"]
    cmd += list(extra)
    if pick_mode == "spaced":
        try:
            cands = pick(test_files(carve, repo, py, out, timeout), k)
        except (subprocess.TimeoutExpired, json.JSONDecodeError, KeyError) as e:
            return {"candidates": [], "error": f"carve baseline failed: {type(e).__name__}", "seconds": 0}
        for c in cands:
            cmd += ["--f2p", c]
    elif pick_mode == "ranked":
        cands = None  # carve's choice: read from the report's ranking
        cmd += ["--candidates", str(k if k > 0 else RANK_ALL)]
    else:
        cands = None  # every candidate: one task or one rejection each (--level 1)
    report, error, seconds = carve_tasks(cmd, out, timeout, carve_env(carve), start)
    if error:
        return {"candidates": cands or [], "error": error, "seconds": seconds}
    if pick_mode == "all":
        cands = report["tasks"] + [r["feature"] for r in report["rejected"] if r.get("level") is None]
    elif cands is None:
        if "ranking" not in report:
            return {"candidates": [], "error": "carve tasks --candidates wrote no `ranking`", "seconds": seconds}
        cands = [r["feature"] for r in report["ranking"] if r["tried"]]
    return {"candidates": cands, "report": report, "seconds": seconds, "command": cmd}


# `--candidates 0` with `--pick ranked`: rank and try every candidate.
RANK_ALL = 1_000_000


def recheck(carve, bundle, repo, py):
    p = subprocess.run(
        [str(carve), "validate", str(bundle), "--repo", str(repo), "--python", str(py), "--format", "json"],
        capture_output=True, text=True, env=carve_env(carve),
    )
    return p.returncode == 0


def saved_row(out, name):
    """The row and rejections by reason that an earlier run saved in `out/row.json`, or None
    (said on stderr) when `name` was not measured."""
    saved = out / "row.json"
    if not saved.exists():
        print(f"{name}: not measured (no {saved})", file=sys.stderr)
        return None
    row = json.loads(saved.read_text())
    return row["row"], row["reasons"]


def add_row(rows, reasons, row, mine):
    """Add a repository's `row` and its rejections by reason `mine` to the table's."""
    rows.append(row)
    for key, who in mine.items():
        reasons.setdefault(key, []).extend(who)


def med_max(values):
    if not values:
        return "-"
    return f"{statistics.median(values):g}/{max(values)}"


def med_mean_max(values):
    if not values:
        return "-"
    return f"{statistics.median(values):g}/{statistics.mean(values):.0f}/{max(values)}"


# FeatureBench's task sizes (its paper: mean gold lines, files and functions per task).
FEATUREBENCH = {"lines": 790, "files": 15.7, "functions": 29.2}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--language", default="python")
    ap.add_argument("--corpus", type=Path, help="the checkouts (default: $CARVE_CORPUS or /work/corpus/python; "
                    "with --dataset /work/corpus)")
    ap.add_argument("--venvs", type=Path,
                    help="virtualenvs, one per repository (default: CORPUS-venvs; with --dataset /work/corpus-envs)")
    ap.add_argument("--dataset", action="store_true",
                    help="the public corpus of bench/corpus/dataset-LANGUAGE.toml (set up by hand as "
                         "oracle-LANGUAGE.toml says, in CORPUS/<owner>+<name>); held-out ones are marked")
    ap.add_argument("--out", type=Path, default=Path("/tmp/carve-corpus"))
    ap.add_argument("--carve", type=Path, default=ROOT / "target" / "release" / "carve")
    ap.add_argument("--candidates", type=int, default=3,
                    help="with --pick ranked or spaced: candidates per repository (0: all)")
    ap.add_argument("--pick", choices=["all", "ranked", "spaced"], default="all",
                    help="all: every candidate carve makes, each tried (default); ranked: carve tries the K "
                         "candidates that extract the most; spaced: the script names K test files, evenly "
                         "spaced over the sorted passing ones")
    add_policy_args(ap)
    ap.add_argument("--only", nargs="*", help="repository names")
    ap.add_argument("--setup", action="store_true", help="clone, create virtualenvs, install; then exit")
    ap.add_argument("--recheck", action="store_true", help="re-validate every bundle with `carve validate`")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per repository")
    ap.add_argument("--json", action="store_true", help="also print the rows as JSON lines")
    ap.add_argument("--table-only", action="store_true",
                    help="print the table of an earlier run from OUT (each repository's row.json) without running")
    args = ap.parse_args()
    if args.corpus is None:
        args.corpus = Path("/work/corpus" if args.dataset else os.environ.get("CARVE_CORPUS", "/work/corpus/python"))
    venvs = args.venvs or (Path("/work/corpus-envs") if args.dataset
                           else args.corpus.with_name(args.corpus.name + "-venvs"))
    entries = load_corpus(args.language, only=args.only, dataset=args.dataset)
    if args.dataset and args.setup:
        raise SystemExit("--dataset repositories are set up by hand (bench/corpus/oracle-LANGUAGE.toml says how)")
    if args.setup:
        args.corpus.mkdir(parents=True, exist_ok=True)
        for e in entries:
            setup(e, args.corpus, venvs)
        return 0

    rows, reasons = [], {}
    if args.table_only:
        for e in entries:
            saved = saved_row(args.out / e.get("dir", e["name"]), e["name"])
            if saved:
                add_row(rows, reasons, *saved)
        print_table(rows, reasons, args)
        return 0
    for e in entries:
        mine = {}
        d = e.get("dir", e["name"])
        repo, py, out = args.corpus / d, venv_python(venvs, d), args.out / d
        if not py.exists():
            print(f"{e['name']}: no virtualenv at {py}: run with --setup first", file=sys.stderr)
            continue
        plain = plain_run(repo, py, out)
        shutil.rmtree(out / "carve", ignore_errors=True)  # a fresh run: no cached baseline or trace
        r = run_carve(args.carve, e, repo, py, out / "carve", args.candidates, args.timeout, args.pick,
                      policy_args(args))
        row = {"name": e["name"], "candidates": len(r["candidates"]), "seconds": r["seconds"], "plain": plain,
               "pick": args.pick, "k": args.candidates, "held_out": e.get("held_out", False), **policy_row(args)}
        tasks, stats = [], {"lines": [], "files": [], "functions": []}
        if "error" in r:
            row["error"] = r["error"]
            mine.setdefault("carve failed: " + reason_key(r["error"]), []).append(e["name"])
        else:
            tasks = r["report"]["tasks"]
            for t in tasks:
                inst = json.loads((out / "carve" / t / "instance.json").read_text())
                for key in stats:
                    stats[key].append(inst[key])
            for rej in r["report"]["rejected"]:
                mine.setdefault(reason_key(rej["reason"]), []).append(f"{e['name']}:{rej['feature']}")
        row["tasks"] = len(tasks)
        row.update(stats)
        if args.recheck:
            row["rechecked"] = sum(recheck(args.carve, out / "carve" / t, repo, py) for t in tasks)
        add_row(rows, reasons, row, mine)
        (out / "row.json").write_text(json.dumps({"row": row, "reasons": mine}, sort_keys=True))
        print(f"# {e['name']}: {row['tasks']}/{row['candidates']} in {row['seconds']:.0f}s", file=sys.stderr)

    print_table(rows, reasons, args)
    return 0


def add_policy_args(ap):
    """`--protect`, `--max-lines` and `--module-groups`, passed to `carve tasks`."""
    ap.add_argument("--protect", default="all", help="carve's protection policy: all, sampled:N or feature")
    ap.add_argument("--max-lines", type=int, help="carve's line budget per feature (default: carve's, 5000)")
    ap.add_argument("--module-groups", nargs="?", const="also", choices=["also", "only", "off"],
                    help="also (or only, or not) the candidates of test files grouped by the module they test "
                         "(default: carve's, also under sampled:N and feature, off under all)")


def policy_row(args):
    return {"protect": args.protect, "max_lines": args.max_lines, "module_groups": args.module_groups}


PICK_MODES = {
    "all": "every candidate carve makes, each tried",
    "ranked": "carve tries the {k} candidates of every test file that extract the most (`--candidates {k}`)",
    "spaced": "{k} test files evenly spaced over the sorted passing ones (`--f2p`)",
}


def pick_header(rows, args):
    """The pick mode and protection policy of the rows (an earlier run's, with `--table-only`)."""
    # corpus_go.py has no --pick (its candidates are always carve's own): say so when no row does.
    default = (getattr(args, "pick", "all"), getattr(args, "candidates", "?"))
    modes = sorted({(r.get("pick", "all"), r.get("k", "?")) for r in rows}) or [default]
    said = [f"{m}: " + PICK_MODES.get(m, "unknown (a row from before `--pick`)").format(k=k) for m, k in modes]
    policies = sorted({(r.get("protect", "all"), r.get("max_lines") or 0, r.get("module_groups") or "") for r in rows})
    told = [f"--protect {p}" + (f" --max-lines {m}" if m else "") + (f" --module-groups={g}" if g else "")
            for p, m, g in policies]
    return "Pick: " + "; ".join(said) + ". Policy: " + ("; ".join(told) or "--protect all")


def print_table(rows, reasons, args):
    head = ["repo", "cand", "tasks", "yield", "lines med/mean/max", "files med/mean/max", "funcs med/mean/max",
            ">=100", ">=300", "wall/plain"]
    if args.recheck:
        head.append("recheck ok")
    lines = [head]
    at_least = lambda vs, n: str(sum(1 for v in vs if v >= n))  # noqa: E731
    for r in rows:
        y = f"{100 * r['tasks'] / r['candidates']:.0f}%" if r["candidates"] else "-"
        cells = [
            r["name"] + (" (held out)" if r.get("held_out") else ""), str(r["candidates"]), str(r["tasks"]), y, med_mean_max(r["lines"]),
            med_mean_max(r["files"]), med_mean_max(r["functions"]), at_least(r["lines"], 100),
            at_least(r["lines"], 300), f"{r['seconds'] / r['plain']:.1f}x" if r["plain"] else "-",
        ]
        if args.recheck:
            cells.append(f"{r['rechecked']}/{r['tasks']}")
        lines.append(cells)
    cand = sum(r["candidates"] for r in rows)
    tasks = sum(r["tasks"] for r in rows)
    allv = lambda k: [v for r in rows for v in r[k]]  # noqa: E731
    total = ["all", str(cand), str(tasks), f"{100 * tasks / cand:.0f}%" if cand else "-",
             med_mean_max(allv("lines")), med_mean_max(allv("files")), med_mean_max(allv("functions")),
             at_least(allv("lines"), 100), at_least(allv("lines"), 300), ""]
    if args.recheck:
        total.append(f"{sum(r['rechecked'] for r in rows)}/{tasks}")
    lines.append(total)
    fb = ["FeatureBench (mean)", "", "", "", f"{FEATUREBENCH['lines']}", f"{FEATUREBENCH['files']}",
          f"{FEATUREBENCH['functions']}", "", "", ""] + ([""] if args.recheck else [])
    lines.append(fb)
    print(pick_header(rows, args))
    print()
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    fmt = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    print(fmt(lines[0]))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for line in lines[1:]:
        print(fmt(line))
    mean_lines = statistics.mean(allv("lines")) if allv("lines") else 0
    if mean_lines:
        print()
        print(f"Mean gold lines {mean_lines:.0f}: {100 * mean_lines / FEATUREBENCH['lines']:.0f}% of FeatureBench's "
              f"{FEATUREBENCH['lines']}; median {statistics.median(allv('lines')):g}.")
    print()
    print("Rejections by reason (count: reason — candidates):")
    for key, who in sorted(reasons.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"- {len(who)}: {key} — {', '.join(who)}")
    for r in rows:
        if "error" in r:
            print(f"- {r['name']}: carve failed: {r['error']}")
    if args.json:
        for r in rows:
            print(json.dumps(r, sort_keys=True))


if __name__ == "__main__":
    sys.exit(main())
