#!/usr/bin/env python3
"""How well carve's extraction matches what a real commit added (issue 12 point 9, issue 29).

`--lang python` (the default) takes the repositories of the Python corpus
(`bench/corpus/python.toml`, checked out and installed by `bench/corpus.py --setup`);
`--lang go|rust|typescript` those of `bench/corpus/accuracy-LANG.toml` (public repositories
no other corpus uses, cloned with their history by `--setup`). For each, `carve arc analyze`
lists, per first-parent commit of the newest `--history N` commits up to the pinned one, the
definitions the commit added (index of parent vs commit, diffed) and the tests it added.
The commits are picked by this rule, newest first, and every picked commit is reported:

1. the commit has a parent, adds at least one definition in a non-test file and at least
   one test function, and at most `--max-added` definitions (a larger one is a vendoring or
   a rewrite, not a feature); Go, Rust, TypeScript: it has go.mod, Cargo.toml or
   package.json at its root (a Go commit from before modules is not one carve can run);
2. its F2P tests are the tests it added that **fail at the parent** (the parent tree with the
   commit's test files) and **pass at the commit**, in fresh clones. Python: run with
   pytest, the repository's own tree first on `sys.path` (checked: the package must import
   from the clone, else the commit is skipped with that reason). Go, Rust, TypeScript: run
   by carve's own runner, `carve baseline` (`go test`, `cargo test`, vitest/jest, in the
   environment carve sets up itself): the whole suite at the commit, whose runner ids that
   name an added test definition (a Go subtest, a nested `describe`/`it` included) and pass
   are then run at the parent with `--tests`; one that does not pass there (failed, error,
   missing, or the parent does not build — the row's note says so) is F2P. Rust tests
   inside a source file (`#[cfg(test)] mod tests`) do not travel with the test files: at
   the parent they are missing, so "fails at the parent" means "is new" for them;
3. a commit without such a test is skipped with the reason; the first `--per-repo K` commits
   that have F2P tests are measured.

For a measured commit, `carve audit` runs at the commit with those F2P tests, and its
extracted set is compared with the non-test definitions the commit added:
precision = |extracted ∩ added| / |extracted|, recall = |extracted ∩ added| / |added|.
"Overall" pools the counts of every measured commit (micro average) and also gives the
mean of the per-commit figures (macro). Targets: ≥ 0.9 and ≥ 0.9 per language.

Each definition carve missed is printed with carve's first reason for keeping it (or "not
reached by the F2P tests"), each one it extracted that the commit did not add with carve's
first reason for extracting it, and the summary counts the misses by kind. As a diagnostic (not
the target) it also prints the recall over the added definitions that no P2P test executes:
a definition the other tests run stays by design (docs/formats.md, "Classification"), so that share of the miss
is the commits' (they wired new code into paths every test takes), not the classifier's.
`--reuse` takes a measured commit's F2P tests and audit from an earlier run's `--out` and
runs no test (to re-print the table with a changed script); `--reaudit` takes its F2P tests
and runs `carve audit` again (to compare binaries on the same F2P tests).

    cargo build --release
    python3 bench/accuracy.py                        # every Python corpus repository, 2 commits each
    python3 bench/accuracy.py --only toolz --per-repo 4 --json
    python3 bench/accuracy.py --lang go --setup      # once: clone bench/corpus/accuracy-go.toml
    python3 bench/accuracy.py --lang go              # then rust, typescript the same way

Standard library only; scratch output in `--out` (default /tmp/carve-accuracy[-LANG]).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from corpus import HERE, ROOT, carve_env, load_corpus, venv_python

LANGUAGES = ("python", "go", "rust", "typescript")

# `-rA` summary lines: `PASSED path::test[a b]`, `FAILED path::test - message` (a parameter
# may hold spaces).
RESULT = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED) (.+?)(?: - .*)?$")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def analyze(carve, repo, history):
    p = run([str(carve), "arc", "analyze", str(repo), "--limit", str(history), "--format", "json"])
    if p.returncode != 0:
        print(f"carve arc analyze {repo} failed (repository left out):\n{p.stderr}", file=sys.stderr, flush=True)
        return []
    return json.loads(p.stdout)["commits"]


def test_files(commit):
    return {f["path"] for f in commit["files"] if f.get("is_test")}


def added_code(commit):
    """Definitions the commit added outside test files, less the tests it added (a Rust
    `#[test]` in a source file's `#[cfg(test)] mod tests` is a definition of that file, and a
    test, not feature code), less the modules that hold those tests and their other members
    (the `mod tests` itself, a `macro_rules!` that writes its tests; any `tests` module), and
    less what it moved:
    a definition whose qualified name the commit removed from another file (textwrap's
    "Split `lib.rs` into separate modules" added `src/fill.rs::fill` and removed
    `src/lib.rs::fill`: the existing tests run it, it is not a feature)."""
    tests = test_files(commit)
    added_tests = set(commit["tests"]["added"])
    holders = {t.rsplit(".", 1)[0] for t in added_tests if "." in t.split("::", 1)[-1]}
    moved = {d.split("::", 1)[-1] for d in commit["definitions"].get("removed", [])}

    def is_code(d):
        path, _, qual = d.partition("::")
        return (path not in tests and d not in added_tests and d not in holders
                and d.rsplit(".", 1)[0] not in holders and qual not in moved and "tests" not in qual.split("."))

    return {d for d in commit["definitions"]["added"] if is_code(d)}


def in_added_rust_file(commit, test_id):
    """Whether the Rust runner id `test_id` is a test of a source file the commit added (its
    module's tests, whatever writes them: heck's `t!` macro writes `train::tests::test1`…,
    which arc analyze lists as no test definition)."""
    for f in commit["files"]:
        if f["status"] != "added" or not f["path"].endswith(".rs") or f.get("is_test"):
            continue
        target, mods = rust_module(f["path"])
        head, _, rest = test_id.partition("::")
        if mods and (target is None or head == target) and rest.startswith("::".join(mods) + "::tests::"):
            return True
    return False


def pytest_id(node):
    """carve's node id `path.py::Class.test_x` as pytest's `path.py::Class::test_x`."""
    path, _, qual = node.partition("::")
    return f"{path}::{qual.replace('.', '::')}"


def clone(repo, sha, dest):
    shutil.rmtree(dest, ignore_errors=True)
    run(["git", "clone", "--quiet", "--shared", "--no-checkout", str(repo), str(dest)], check=True)
    run(["git", "-C", str(dest), "checkout", "--quiet", "--detach", sha], check=True)


def local_env(tree):
    """pytest in `tree` importing the tree's own package first (flat and src layouts)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = f"{tree}:{tree / 'src'}"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def imports_from(py, tree, package):
    p = run([str(py), "-c", f"import {package}, os; print(os.path.realpath({package}.__file__))"],
            cwd=tree, env=local_env(tree))
    return p.returncode == 0 and p.stdout.strip().startswith(str(tree.resolve()))


def outcomes(py, tree, ids, timeout):
    """pytest statuses (`-rA` summary) of the tests `ids` in `tree`, parametrized ids
    expanded; and the last error line of the run (why nothing ran, when nothing did)."""
    cmd = [str(py), "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-o", "addopts=", *ids]
    try:
        p = run(cmd, cwd=tree, env=local_env(tree), timeout=timeout)
    except subprocess.TimeoutExpired:
        return {}, f"pytest timed out after {timeout}s"
    out = {}
    for line in p.stdout.splitlines():
        m = RESULT.match(line)
        if m:
            out[m.group(2)] = m.group(1).lower()
    errors = [l.strip() for l in (p.stdout + p.stderr).splitlines() if re.match(r"^E\s+\w+(Error|Exception)", l.strip())]
    return out, errors[-1][1:].strip() if errors else f"pytest exit {p.returncode}"


def package_of(code):
    """The top-level package of the added code (`toolz` of `toolz/curried/x.py`, `attr` of
    `src/attr/_make.py`)."""
    path = sorted(code)[0].split("::", 1)[0]
    parts = path.split("/")
    if parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    return parts[0].removesuffix(".py")


def f2p_of(entry, repo, py, commit, work, timeout):
    """(F2P pytest ids, reason when there are none)."""
    added_tests = [pytest_id(t) for t in commit["tests"]["added"]]
    at, before = work / "commit", work / "parent"
    parent_tree(repo, commit, at, before)
    package = package_of(added_code(commit))
    if not imports_from(py, at, package):
        return [], f"`import {package}` does not resolve to the clone (install layout not handled)"
    at_commit, why = outcomes(py, at, added_tests, timeout)
    passing = {t for t, s in at_commit.items() if s == "passed"}
    if not passing:
        return [], f"no added test passes at the commit ({why}; the virtualenv holds today's dependencies)"
    at_parent, _ = outcomes(py, before, sorted(passing), timeout)
    # A test module that cannot import at the parent reports no per-test line: each of its
    # tests fails there.
    failing_before = {t for t in passing if at_parent.get(t, "error") in ("failed", "error")}
    f2p = sorted(passing & failing_before)
    return f2p, None if f2p else "every added test that passes at the commit passes at the parent too"



# Go, Rust and TypeScript: carve's own runner (`carve baseline`) gives the statuses, and
# carve's own environment set-up (`carve env`, which `carve baseline` and `carve audit` use
# when recorded) installs what the tests need.

def accuracy_corpus(lang, only):
    """The repositories of `bench/corpus/accuracy-<lang>.toml` (name, repo, commit)."""
    with open(HERE / "corpus" / f"accuracy-{lang}.toml", "rb") as f:
        entries = tomllib.load(f)["repo"]
    return [e for e in entries if not only or e["name"] in only]


def setup_checkout(entry, dest, source):
    """Clone the entry's repository with its history (`carve arc analyze` reads it) and
    check out its pinned commit; `source` is a folder of bare mirrors `owner+name/repo`."""
    if not dest.exists():
        url = Path(source) / entry["repo"].replace("/", "+") / "repo" if source else f"https://github.com/{entry['repo']}.git"
        run(["git", "clone", "--quiet", str(url), str(dest)], check=True)
    run(["git", "-C", str(dest), "checkout", "--quiet", "--detach", entry["commit"]], check=True)


def go_import_path(tree, folder):
    """The import path of the Go package in `folder` (relative to `tree`): the module of the
    nearest go.mod above it, plus the rest of the folder's path."""
    parts = [p for p in folder.split("/") if p]
    for i in range(len(parts), -1, -1):
        mod = tree.joinpath(*parts[:i], "go.mod")
        if mod.is_file():
            m = re.search(r"^module\s+(\S+)", mod.read_text(), re.M)
            if m:
                return "/".join([m.group(1).strip('"'), *parts[i:]])
    return None


def rust_module(path):
    """(target, module path) of a Rust file: `src/a/b.rs` is the crate's `a::b` (target None:
    the crate, whatever its name), `tests/x.rs` and `tests/x/main.rs` the target `x`."""
    parts = path.split("/")
    if "tests" in parts[:-1] and "src" not in parts:
        rest = parts[parts.index("tests") + 1:]
        return rest[0].removesuffix(".rs"), []
    rest = parts[parts.index("src") + 1:] if "src" in parts else parts[-1:]
    mods = [r.removesuffix(".rs") for r in rest]
    if mods and mods[-1] in ("lib", "main", "mod"):
        mods = mods[:-1]
    return None, mods


def names_test(lang, tree, node, test_id):
    """Whether the runner's test id `test_id` is the test definition `node` (carve's node id
    `path::qualified.name`) or one of its subtests / nested tests."""
    if lang == "rust" and " - " in node:  # a doctest: `src/lib.rs - Type::method`
        return test_id.endswith("::doctest::" + node)
    path, _, qual = node.partition("::")
    if lang == "go":
        pkg = go_import_path(tree, os.path.dirname(path))
        want = f"{pkg}/{qual}"
        return pkg is not None and (test_id == want or test_id.startswith(want + "/"))
    if lang == "rust":
        target, mods = rust_module(path)
        want = "::".join([*mods, *qual.split(".")])
        head, _, rest = test_id.partition("::")
        return (target is None or head == target) and (rest == want or rest.startswith(want + "::"))
    file, _, rest = test_id.partition(" > ")
    title = ".".join(rest.split(" > "))
    return file == path and (title == qual or title.startswith(qual + "."))


def carve_statuses(carve, tree, out, ids, timeout, name):
    """({test id: status}, None) from `carve baseline` in `tree` (only `ids` when given),
    or (None, carve's error). When the runner cannot start as found (no Cargo.lock, no
    node_modules), `carve env` sets the environment up (shared by every clone of the
    repository `name` with the same install inputs) and the baseline runs again."""
    got, err = carve_baseline(carve, tree, out, ids, timeout)
    if got is not None:
        return got, None
    cmd = [str(carve), "env", str(tree), "--out", str(out), "--repo-name", name]
    try:
        p = run(cmd, timeout=timeout, env=carve_env(carve))
    except subprocess.TimeoutExpired:
        return None, f"{err}; then carve env timed out after {timeout}s"
    if p.returncode != 0:
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        return None, f"{err}; then carve env failed: " + " / ".join(lines[-2:])[:300]
    return carve_baseline(carve, tree, out, ids, timeout)


def carve_baseline(carve, tree, out, ids, timeout):
    cmd = [str(carve), "baseline", str(tree), "--out", str(out), "--format", "json"]
    if ids:
        cmd += ["--tests", *ids]
    try:
        p = run(cmd, timeout=timeout, env=carve_env(carve))
    except subprocess.TimeoutExpired:
        return None, f"carve baseline timed out after {timeout}s"
    if p.returncode != 0:
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        return None, " / ".join(lines[-2:])[:300]
    return {t: e["status"] for t, e in json.loads(p.stdout)["tests"].items()}, None


def parent_tree(repo, commit, at, before):
    """The parent with the commit's test files: the new tests exist, the code they test not."""
    clone(repo, commit["commit"], at)
    clone(repo, commit["parent"], before)
    files = sorted(test_files(commit))
    present = set(run(["git", "-C", str(at), "ls-files", "--", *files], check=True).stdout.split()) if files else set()
    if present:
        run(["git", "-C", str(before), "checkout", "--quiet", commit["commit"], "--", *sorted(present)], check=True)
    for gone in sorted(set(files) - present):  # test files the commit deleted
        (before / gone).unlink(missing_ok=True)


def f2p_by_carve(lang, carve, name, repo, commit, work, timeout):
    """(F2P test ids, reason when there are none, note): the runner's tests of the commit's
    added test definitions that pass at the commit (whole suite, `carve baseline` into the
    folder the audit then reuses) and do not pass at the parent with the commit's test files
    (a build that fails there fails them all: the note says so)."""
    at, before = work / "commit", work / "parent"
    parent_tree(repo, commit, at, before)
    at_commit, err = carve_statuses(carve, at, work / "out", [], timeout, name)
    if at_commit is None:
        return [], f"carve baseline at the commit failed: {err}", None
    added = commit["tests"]["added"]
    passing = sorted(t for t, s in at_commit.items() if s == "passed" and (
        any(names_test(lang, at, n, t) for n in added) or (lang == "rust" and in_added_rust_file(commit, t))))
    if not passing:
        return [], f"none of the {len(added)} added tests passes at the commit ({', '.join(sorted(added))[:160]})", None
    at_parent, err = carve_statuses(carve, before, work / "parent-out", passing, timeout, name)
    note = None
    if at_parent is None:
        at_parent, note = {}, f"the parent did not run ({err[:160]}): every test counted failing"
    f2p = [t for t in passing if at_parent.get(t, "missing") != "passed"]
    return f2p, None if f2p else "every added test that passes at the commit passes at the parent too", note

def audit(carve, tree, py, f2p, out, timeout):
    cmd = [str(carve), "audit", str(tree), "--out", str(out), "--format", "json"]
    if py is not None:
        cmd += ["--python", str(py)]
    for t in f2p:
        cmd += ["--f2p", t]
    try:
        p = run(cmd, timeout=timeout, env=carve_env(carve))
    except subprocess.TimeoutExpired:
        return None, f"carve audit timed out after {timeout}s"
    if p.returncode != 0:
        lines = [l for l in p.stderr.splitlines() if l.startswith("carve: error") or re.match(r"^E\s", l)]
        return None, f"carve audit exit {p.returncode}: " + " / ".join(lines[-2:])[:300]
    return json.loads(p.stdout), None


def saved_audit(out):
    """The audit a previous run of this script left in `out` (`--reuse`), or None."""
    found = sorted(Path(out).glob("audit-*.json"))
    return json.loads(found[0].read_text()) if len(found) == 1 else None


def why_missed(report, node):
    """Why carve kept an added definition: its first reason (reasons to remain come first),
    or that the F2P tests never reached it."""
    for n in report["remained"]:
        if n["id"] == node:
            return n["reasons"][0] if n["reasons"] else "remained"
    return "not reached by the F2P tests"


def why_extracted(report, nodes):
    """The definitions carve extracted that the commit did not add, each with carve's first
    reason for extracting it (how the F2P tests reached it)."""
    reasons = {n["id"]: (n.get("reasons") or ["extracted"])[0] for n in report["extracted"]}
    return {n: reasons.get(n, "extracted") for n in sorted(nodes)}


def kind_of(why):
    if why.startswith("executed by P2P test"):
        return "executed by P2P tests"
    if why.startswith("not reached"):
        return "not reached by the F2P tests"
    return "other: " + re.sub(r"[\w./:\[\]-]*(::|/|\.\w+:\d)[\w./:\[\]-]*", "X", why)[:60]


def score(extracted, added):
    hit = len(extracted & added)
    precision = hit / len(extracted) if extracted else (1.0 if not added else 0.0)
    recall = hit / len(added) if added else 1.0
    return hit, precision, recall


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lang", choices=LANGUAGES, default="python",
                    help="python: bench/corpus/python.toml; others: bench/corpus/accuracy-LANG.toml")
    ap.add_argument("--corpus", help="folder of the checkouts (default /work/corpus/python, /work/corpus/accuracy-LANG)")
    ap.add_argument("--venvs", default="/work/corpus/python-venvs")
    ap.add_argument("--setup", action="store_true", help="clone the accuracy corpus of --lang at its pinned commits, then exit")
    ap.add_argument("--source", help="with --setup: a folder of bare mirrors OWNER+NAME/repo to clone from")
    ap.add_argument("--carve", default=str(ROOT / "target" / "release" / "carve"))
    ap.add_argument("--out", help="scratch folder (default /tmp/carve-accuracy, /tmp/carve-accuracy-LANG)")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--commits", nargs="*", help="try only the candidate commits whose hash starts with one of these")
    ap.add_argument("--history", type=int, default=300, help="newest first-parent commits considered per repository")
    ap.add_argument("--per-repo", type=int, default=2)
    ap.add_argument("--max-added", type=int, default=30)
    ap.add_argument("--max-tries", type=int, default=6, help="candidate commits tried per repository")
    ap.add_argument("--timeout", type=int, default=1200)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--reuse", action="store_true",
                    help="take a measured commit's F2P tests and audit from an earlier run's --out (no test runs)")
    ap.add_argument("--reaudit", action="store_true",
                    help="take a measured commit's F2P tests from an earlier run's --out and run `carve audit` "
                         "again with --carve (no baselines: compares binaries on the same F2P tests)")
    ap.add_argument("--table", nargs="+", metavar="JSONL",
                    help="print the table of earlier `--json` runs (their output files) and run nothing")
    args = ap.parse_args()
    if args.table:
        rows = [json.loads(l) for f in args.table for l in Path(f).read_text().splitlines() if l.startswith("{")]
        for r in rows:
            print(summary_line(r))
        print_overall(rows)
        return
    lang = args.lang
    suffix = "" if lang == "python" else f"-{lang}"
    corpus_dir = Path(args.corpus or f"/work/corpus/{'python' if lang == 'python' else 'accuracy-' + lang}")
    out = Path(args.out or f"/tmp/carve-accuracy{suffix}")
    entries = load_corpus("python", only=args.only) if lang == "python" else accuracy_corpus(lang, args.only)
    if args.setup:
        if lang == "python":
            raise SystemExit("the Python corpus is set up by `python3 bench/corpus.py --setup`")
        corpus_dir.mkdir(parents=True, exist_ok=True)
        for entry in entries:
            setup_checkout(entry, corpus_dir / entry["name"], args.source)
        return
    carve = Path(args.carve)
    if not carve.exists():
        raise SystemExit(f"{carve} does not exist: run `cargo build --release`")
    rows = []
    for entry in entries:
        repo = corpus_dir / entry["name"]
        py = venv_python(Path(args.venvs), entry["name"]) if lang == "python" else None
        if not repo.is_dir() or (py is not None and not py.exists()):
            how = "python3 bench/corpus.py --setup" if lang == "python" else f"python3 bench/accuracy.py --lang {lang} --setup"
            print(f"{entry['name']}: not set up ({how})", file=sys.stderr)
            continue
        rows += measure_repo(args, lang, carve, entry, repo, py, out)
    print_overall(rows)


# The file at the root without which carve cannot run a commit's tests (a Go commit from
# before modules has no go.mod): such commits are not candidates.
MANIFEST = {"go": "go.mod", "rust": "Cargo.toml", "typescript": "package.json"}


def has_manifest(lang, repo, sha):
    if lang not in MANIFEST:
        return True
    return run(["git", "-C", str(repo), "cat-file", "-e", f"{sha}:{MANIFEST[lang]}"]).returncode == 0


def measure_repo(args, lang, carve, entry, repo, py, out):
    """The rows of one repository: its candidate commits, newest first, until `--per-repo`
    are measured or `--max-tries` are tried."""
    # `carve arc analyze` lists the commits oldest first.
    picked = [c for c in reversed(analyze(carve, repo, args.history))
              if c.get("parent") and added_code(c) and c["tests"]["added"] and len(added_code(c)) <= args.max_added
              and has_manifest(lang, repo, c["commit"])]
    if args.commits:
        picked = [c for c in picked if any(c["commit"].startswith(p) for p in args.commits)]
    rows, measured = [], 0
    for commit in picked[: args.max_tries]:
        if measured >= args.per_repo:
            break
        work = out / entry["name"] / commit["commit"][:10]
        row = {"repo": entry["name"], "commit": commit["commit"][:10], "summary": commit["summary"][:60]}
        start = time.monotonic()
        report = saved_audit(work / "out") if args.reuse or args.reaudit else None
        note = None
        if report is not None:
            f2p, why = report["f2p"], None
            if args.reaudit:
                for old in (work / "out").glob("audit-*.json"):
                    old.unlink()
                report, why = audit(carve, work / "commit", py, f2p, work / "out", args.timeout)
        elif lang == "python":
            f2p, why = f2p_of(entry, repo, py, commit, work, args.timeout)
            if why is None:
                shutil.rmtree(work / "out", ignore_errors=True)
        else:
            f2p, why, note = f2p_by_carve(lang, carve, entry["repo"], repo, commit, work, args.timeout)
        added = added_code(commit)
        row.update(f2p=len(f2p), added=len(added))
        if note:
            row["note"] = note
        if why is None and report is None:
            report, why = audit(carve, work / "commit", py, f2p, work / "out", args.timeout)
        if why is None:
            extracted = {n["id"] for n in report["extracted"]}
            hit, precision, recall = score(extracted, added)
            missed = {m: why_missed(report, m) for m in sorted(added - extracted)}
            row.update(extracted=len(extracted), hit=hit, precision=precision, recall=recall,
                       missed=missed, extra=why_extracted(report, extracted - added))
            measured += 1
        else:
            row["skipped"] = why
        row["seconds"] = round(time.monotonic() - start, 1)
        rows.append(row)
        print(json.dumps(row) if args.json else summary_line(row), flush=True)
        shutil.rmtree(work / "parent", ignore_errors=True)
    return rows


def summary_line(r):
    if "skipped" in r:
        return f"{r['repo']:<15} {r['commit']}  skipped: {r['skipped']}  ({r['summary']})"
    line = (f"{r['repo']:<15} {r['commit']}  F2P {r['f2p']:>3}  added {r['added']:>3}  extracted {r['extracted']:>3}  "
            f"precision {r['precision']:.2f}  recall {r['recall']:.2f}  ({r['summary']})")
    for node, why in r["missed"].items():
        line += f"\n    missed {node.split('::', 1)[1]}: {why[:140]}"
    for node, why in r["extra"].items():
        line += f"\n    extra  {node.split('::', 1)[1]}: {why[:140]}"
    if r.get("note"):
        line += f"\n    note: {r['note']}"
    return line


def print_overall(rows):
    done = [r for r in rows if "skipped" not in r]
    if not done:
        print("no commit measured")
        return
    hit, ext, add = (sum(r[k] for r in done) for k in ("hit", "extracted", "added"))
    macro_p = sum(r["precision"] for r in done) / len(done)
    macro_r = sum(r["recall"] for r in done) / len(done)
    print(f"overall: {len(done)} commits measured, {len(rows) - len(done)} skipped; "
          f"precision {hit / ext if ext else 0:.2f} recall {hit / add if add else 0:.2f} (pooled), "
          f"{macro_p:.2f} / {macro_r:.2f} (mean per commit)")
    kinds = {}
    for r in done:
        for why in r["missed"].values():
            kinds[kind_of(why)] = kinds.get(kind_of(why), 0) + 1
    for kind, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  missed, {kind}: {n}")
    # Diagnostic, not the target: the same recall over the added definitions that no P2P
    # test keeps (what remains when an extraction may not change what P2P tests run).
    kept_by_p2p = sum(kind_of(w) == "executed by P2P tests" for r in done for w in r["missed"].values())
    if add - kept_by_p2p:
        print(f"  recall without the {kept_by_p2p} added definitions P2P tests execute: "
              f"{hit / (add - kept_by_p2p):.2f} ({hit} of {add - kept_by_p2p})")


if __name__ == "__main__":
    main()
