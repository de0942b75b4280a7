#!/usr/bin/env python3
"""Do two revisions of carve give byte-identical outputs on every fixture? (issue 8, "Proof")

    python3 bench/same_outputs.py REV_A REV_B [--out DIR] [--fixture LANG/NAME ...]

Builds carve (debug) at each revision in its own temporary `git worktree` (one shared
CARGO_TARGET_DIR under --out, so dependencies compile once), and each revision's own native
Python recorder with maturin exactly as that revision's scripts/setup does; `npm ci` runs in
each worktree where a fixture has a package-lock.json. Then, for every fixture under
fixtures/ that exists at REV_A, and each binary in turn, it runs

    carve index FIXTURE --format json --out OUT
    carve audit FIXTURE --f2p TESTS... --format json --out OUT     (once per feature)
    carve tasks FIXTURE --out OUT

and, for every scripted history `fixtures/arc/LANG/recipe.toml` (command `arc`),

    carve arc recipe RECIPE --out REPO
    carve arc mine REPO --name fixture/LANG --format json
    carve arc build REPO --chain ID --name fixture/LANG --out OUT    (once per mined chain)

and compares stdout, stderr, the exit code and every file of the --out tree, byte for byte.
The features of `audit` are the `[features.*].f2p` lists of the fixture's carve-expected.toml,
else one per test file of the fixture (the files REV_A's `carve index` marks `is_test`); the
audits of one fixture share one --out (the first traces, the others reuse its cache), in
the same order for both revisions.

No path normalisation is needed because both runs see the same paths: the fixture is copied
from the revision's worktree (with its node_modules) to OUT/work/fixtures/LANG/NAME, the
binary to OUT/work/bin/carve, the revision's recorder extension to OUT/work/shim/ (handed
to carve as CARVE_SHIM_NATIVE), the --out folder is OUT/work/out and TMPDIR OUT/work/tmp;
each is emptied before every command and its outputs moved to OUT/runs/REV/LANG/NAME/CMD/
after it. Environments (`carve env`) live in one store for both revisions, OUT/envs
(CARVE_ENV_DIR), and `carve env FIXTURE` runs before each `tasks` outside the record, so
neither revision's `tasks` output says how long an environment took to set up. GIT_CEILING_DIRECTORIES stops git in a fixture copy from finding an enclosing
checkout (a fixture is identified by content either way).

Two things no two runs can share, and how they are compared:
- the recorder is the `.so` unpacked from the revision's wheel, not the wheel: maturin puts
  an SBOM with a fresh UUID, a timestamp and the build path into every wheel, and carve
  names its unpacked copy by the wheel's digest;
- a shim's raw per-process trace (`<pid>-<n>.jsonl` in the --out tree, see
  docs/trace-format.md) is named after its process and its header carries the process's
  `pid` and `argv` (a Go test binary's argv names a fresh `go-build<random>` folder): such
  files are compared per folder as a set of contents without those two header fields, and
  a raw trace's name in stderr (carve's "partial trace: 14084-0.jsonl" warning) loses its
  pid too;
- the Rust runner keeps cargo's own build folder under --out (`cargo-target/`, so later
  runs reuse its builds): cargo's incremental state and fingerprints are not compared.
Everything else, stderr included, is compared as it is.

Prints one line per fixture x command: `identical`, `differs` (with the first differing
file and line), `failed-both` (the command failed, exit 2, at both revisions with the same
error text, quoted) or `not-run` (an audit of a fixture without tests). Exits 1 if
anything differs. `REV REV` (one commit twice) checks a revision against itself, for
nondeterminism. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = ("index", "audit", "tasks", "arc")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def nice(cmd: list[str]) -> list[str]:
    return ["nice", "-n", "10", *cmd] if shutil.which("nice") else cmd


class Revision:
    """One revision: its worktree, its carve binary and its native recorder extension."""

    def __init__(self, rev: str, out: Path):
        self.commit = git("rev-parse", "--verify", f"{rev}^{{commit}}")
        self.short = self.commit[:7]
        self.name = rev
        self.src = out / "src" / self.short
        self.bin_dir = out / "bin" / self.short
        self.carve = self.bin_dir / "carve"
        # Where its records go: the short commit, `-a`/`-b` when both sides are one commit
        # (`REV REV` checks that a revision is deterministic against itself).
        self.label = self.short
        self.native: Path | None = None

    def checkout(self) -> None:
        if self.src.exists():
            head = git("rev-parse", "HEAD", cwd=self.src) if (self.src / ".git").exists() else ""
            if head == self.commit:
                return
            git("worktree", "remove", "--force", str(self.src))
        self.src.parent.mkdir(parents=True, exist_ok=True)
        git("worktree", "add", "--detach", "--force", str(self.src), self.commit)

    def build(self, target: Path, native: bool) -> None:
        env = dict(os.environ, CARGO_TARGET_DIR=str(target))
        log(f"[{self.short}] cargo build --bin carve")
        run_checked(nice(["cargo", "build", "--quiet", "--bin", "carve"]), self.src, env)
        self.bin_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy2(target / "debug" / "carve", self.carve)
        if native:
            shim_dir = self.bin_dir / "shim"
            shutil.rmtree(shim_dir, ignore_errors=True)
            log(f"[{self.short}] maturin build --release -m shims/python/Cargo.toml (as scripts/setup)")
            run_checked(
                nice([sys.executable, "-m", "maturin", "build", "--release", "--quiet",
                      "-m", "shims/python/Cargo.toml", "-o", str(shim_dir)]),
                self.src, env,
            )
            wheels = sorted(shim_dir.glob("*.whl"))
            if len(wheels) != 1:
                sys.exit(f"same_outputs: expected one wheel in {shim_dir}, found {len(wheels)}")
            # The extension itself, not the wheel: maturin writes an SBOM into every wheel
            # with a fresh UUID, a timestamp and the build path, so no two wheel builds are
            # byte-identical (and carve names its unpacked copy by the wheel's digest).
            with zipfile.ZipFile(wheels[0]) as wheel:
                names = [n for n in wheel.namelist() if n.startswith("carve_shim/_native") and n.endswith(".so")]
                if len(names) != 1:
                    sys.exit(f"same_outputs: expected one carve_shim/_native*.so in {wheels[0]}, found {names}")
                self.native = shim_dir / Path(names[0]).name
                self.native.write_bytes(wheel.read(names[0]))
        for lock in sorted(self.src.glob("fixtures/*/*/package-lock.json")):
            if not (lock.parent / "node_modules").is_dir():
                log(f"[{self.short}] npm ci --prefix {lock.parent.relative_to(self.src)}")
                run_checked(["npm", "ci", "--prefix", str(lock.parent), "--no-audit", "--no-fund",
                             "--loglevel=error"], self.src, None)

    def remove(self) -> None:
        if self.src.exists():
            git("worktree", "remove", "--force", str(self.src))


def run_checked(cmd: list[str], cwd: Path, env: dict | None) -> None:
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"same_outputs: `{' '.join(cmd)}` failed in {cwd} (exit {p.returncode}):\n{p.stderr[-4000:]}")


def fixtures_at(rev: Revision) -> list[str]:
    """LANG/NAME of every fixture directory at the revision."""
    out = []
    for lang in git("ls-tree", "-d", "--name-only", f"{rev.commit}:fixtures").splitlines():
        for name in git("ls-tree", "-d", "--name-only", f"{rev.commit}:fixtures/{lang}").splitlines():
            out.append(f"{lang}/{name}")
    return out


class Work:
    """The fixed paths every run uses, so the two revisions' outputs need no normalising."""

    def __init__(self, out: Path):
        self.root = out / "work"
        self.bin = self.root / "bin" / "carve"
        self.shim = self.root / "shim"
        self.out = self.root / "out"
        self.tmp = self.root / "tmp"
        # One environment store for both revisions, outside the emptied work folder: `tasks`
        # sets an environment up when it finds none, and says how long that took.
        self.envs = out / "envs"

    def fixture(self, fixture: str) -> Path:
        return self.root / "fixtures" / fixture

    def prepare(self, rev: Revision, fixture: str) -> None:
        for d in (self.root / "fixtures", self.out, self.tmp, self.shim, self.bin.parent):
            if d.exists():
                shutil.rmtree(d)
        for d in (self.out, self.tmp, self.shim, self.bin.parent):
            d.mkdir(parents=True)
        shutil.copy2(rev.carve, self.bin)
        if rev.native:
            shutil.copy2(rev.native, self.shim / rev.native.name)
        dest = self.fixture(fixture)
        dest.parent.mkdir(parents=True)
        shutil.copytree(rev.src / "fixtures" / fixture, dest, symlinks=True)

    def env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CARVE_")}
        env.update(
            TMPDIR=str(self.tmp),
            CARVE_ENV_DIR=str(self.envs),
            CARVE_NO_PROGRESS="1",
            GIT_CEILING_DIRECTORIES=str(self.root),
        )
        natives = sorted(self.shim.glob("*.so"))
        if natives:
            env["CARVE_SHIM_NATIVE"] = str(natives[0])
        return env


def run_carve(work: Work, args: list[str], record: Path, stem: str, timeout: int) -> int:
    """Run the binary, keeping stdout, stderr and the exit code under `record`."""
    try:
        p = subprocess.run(nice([str(work.bin), *args]), cwd=work.root, env=work.env(),
                           capture_output=True, timeout=timeout)
        stdout, stderr, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        stdout, stderr, rc = e.stdout or b"", (e.stderr or b"") + f"\n[timed out after {timeout}s]\n".encode(), -1
    (record / f"{stem}.stdout").write_bytes(stdout)
    (record / f"{stem}.stderr").write_bytes(stderr)
    (record / f"{stem}.rc").write_text(f"{rc}\n")
    return rc


def audit_features(rev_a: Revision, fixture: str, index_json: Path) -> list[list[str]]:
    """The F2P lists of carve-expected.toml, else one per test file of REV_A's index."""
    expected = rev_a.src / "fixtures" / fixture / "carve-expected.toml"
    if expected.is_file():
        features = tomllib.loads(expected.read_text()).get("features", {})
        return [list(f["f2p"]) for _, f in sorted(features.items()) if f.get("f2p")]
    try:
        index = json.loads(index_json.read_bytes())
    except (OSError, ValueError):
        return []
    files = index.get("files", {})
    rows = files.values() if isinstance(files, dict) else files
    return [[f["path"]] for f in sorted(rows, key=lambda f: f["path"]) if f.get("is_test")]


def run_command(work: Work, rev: Revision, fixture: str, command: str, features: list[list[str]],
                runs: Path, timeout: int) -> None:
    record = runs / rev.label / fixture / command
    if record.exists():
        shutil.rmtree(record)
    record.mkdir(parents=True)
    work.prepare(rev, fixture)
    repo = str(work.fixture(fixture))
    out = ["--out", str(work.out)]
    if command == "index":
        run_carve(work, ["index", repo, "--format", "json", *out], record, "index", timeout)
    elif command == "audit":
        (record / "features.json").write_text(json.dumps(features, indent=1) + "\n")
        for i, f2p in enumerate(features):
            run_carve(work, ["audit", repo, "--f2p", *f2p, "--format", "json", *out], record, f"audit-{i}", timeout)
    elif command == "tasks":
        # The environment first, outside the record: whichever revision comes first would
        # otherwise be the one that prints "environment set up in 24s".
        warmup = runs / "env-warmup" / rev.label / fixture
        warmup.mkdir(parents=True, exist_ok=True)
        run_carve(work, ["env", repo], warmup, "env", timeout)
        run_carve(work, ["tasks", repo, *out], record, "tasks", timeout)
    else:
        run_arc(work, fixture, repo, out, record, timeout)
    shutil.move(str(work.out), str(record / "out"))


def run_arc(work: Work, fixture: str, fixture_dir: str, out: list[str], record: Path, timeout: int) -> None:
    """Build the scripted history, mine it, and build every chain it mined."""
    repo = str(work.root / "history")
    shutil.rmtree(repo, ignore_errors=True)
    name = "fixture/" + fixture.split("/", 1)[1]
    if run_carve(work, ["arc", "recipe", f"{fixture_dir}/recipe.toml", "--out", repo], record, "recipe", timeout):
        return
    run_carve(work, ["arc", "mine", repo, "--name", name, "--format", "json"], record, "mine", timeout)
    try:
        chains = json.loads((record / "mine.stdout").read_bytes())["chains"]
    except (ValueError, KeyError, TypeError):
        return
    for k, chain in enumerate(chains):
        run_carve(work, ["arc", "build", repo, "--chain", chain["chain_id"], "--name", name, *out],
                  record, f"build-{k}", timeout)
    shutil.rmtree(repo, ignore_errors=True)


# A shim's raw per-process trace (docs/trace-format.md: `<pid>-<n>.jsonl`, JavaScript
# `<pid>-<threadId>-<n>.jsonl`) is named after the process that wrote it, and its header
# says which process that was: `pid` and `argv` (a Go test binary runs from a fresh
# `go-build<random>` folder). Such files are compared per folder as a set of contents, the
# header without those two fields. carve's warnings name such a file (`warning: partial
# trace: 14084-0.jsonl (...)`), so in stderr a raw trace's name loses its process id too.
RAW_TRACE = re.compile(r"^\d+-\d+(-\d+)?\.jsonl$")
RAW_TRACE_NAME = re.compile(rb"\b\d+(-\d+){1,2}\.jsonl\b")
PROCESS_FIELDS = ("pid", "argv")
# cargo's own build folder, which the Rust runner keeps under --out so that later runs reuse
# its builds (`work/*/runner/cargo-target/`): incremental session names, fingerprints and
# `.rustc_info.json` (a hash map, in no fixed order) are cargo's, not carve's output.
TOOL_FOLDERS = ("cargo-target",)


# A temporary folder's random name (`/tmp/.tmpJi7CXS/build-s0` in an error message), and the
# wall-clock fields of `carve arc mine --format json` (`"analysis_seconds": 0.35`).
TEMP_NAME = re.compile(rb"\.tmp[A-Za-z0-9]{6}\b")
SECONDS_FIELD = re.compile(rb'("[a-z_]*seconds": )[0-9.e+-]+')


def without_process(raw: bytes) -> bytes:
    """A raw trace with `pid` and `argv` taken out of its header line."""
    first, sep, rest = raw.partition(b"\n")
    try:
        header = json.loads(first)
    except ValueError:
        return raw
    if not isinstance(header, dict) or header.get("kind") != "header":
        return raw
    for field in PROCESS_FIELDS:
        header.pop(field, None)
    return json.dumps(header, sort_keys=True, separators=(",", ":")).encode() + sep + rest


def record_files(d: Path) -> tuple[dict[str, Path | bytes], int, int]:
    """Every file under a record by relative name (a symlink as its target), raw traces
    renamed `[pid]-K.jsonl` in the order of their pid-less contents; how many those were,
    and how many files of a tool's own folder were left out."""
    files: dict[str, Path | bytes] = {}
    raw: dict[str, list[bytes]] = {}
    tool_files = 0
    for p in sorted(d.rglob("*")):
        name = str(p.relative_to(d))
        if name.startswith("out/") and any(part in TOOL_FOLDERS for part in p.relative_to(d).parts[:-1]):
            tool_files += p.is_file() or p.is_symlink()
        elif p.is_symlink():
            files[name] = b"symlink -> " + os.readlink(p).encode()
        elif p.is_file() and name.startswith("out/") and RAW_TRACE.match(p.name):
            raw.setdefault(str(Path(name).parent), []).append(without_process(p.read_bytes()))
        elif p.is_file() and name.endswith(".stderr"):
            files[name] = TEMP_NAME.sub(b".tmp[random]", RAW_TRACE_NAME.sub(b"[pid].jsonl", p.read_bytes()))
        elif p.is_file() and name.endswith("mine.stdout"):
            files[name] = SECONDS_FIELD.sub(rb'\1"[seconds]"', p.read_bytes())
        elif p.is_file():
            files[name] = p
    for folder, contents in raw.items():
        for k, content in enumerate(sorted(contents)):
            files[f"{folder}/[pid]-{k}.jsonl"] = content
    return files, sum(len(c) for c in raw.values()), tool_files


def first_difference(a: Path, b: Path) -> tuple[str | None, int, int, list[str]]:
    """Where two records first differ (None when byte-identical), the number of raw traces
    compared without their process fields, of files in a tool's folder not compared, and the
    stderr files that hold the same lines in another order."""
    (fa, raw, tool), (fb, _, tool_b) = record_files(a), record_files(b)
    reordered: list[str] = []
    tool = max(tool, tool_b)
    # stdout, stderr and exit codes first, then the --out tree, each in name order.
    for name in sorted(set(fa) | set(fb), key=lambda n: (n.startswith("out/"), n)):
        if name not in fb:
            return f"{name}: only at REV_A", raw, tool, reordered
        if name not in fa:
            return f"{name}: only at REV_B", raw, tool, reordered
        da, db = (x if isinstance(x, bytes) else x.read_bytes() for x in (fa[name], fb[name]))
        if da != db:
            la, lb = da.split(b"\n"), db.split(b"\n")
            # Two test runs at once print their warnings in either order (and a compiler
            # lists its errors in either order): stderr holding the same lines counts.
            if name.endswith(".stderr") and sorted(la) == sorted(lb):
                reordered.append(name)
                continue
            line = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
            return f"{name} line {line + 1}", raw, tool, reordered
    return None, raw, tool, reordered


def verdict(a: Path) -> tuple[str, str]:
    """`identical`, or `failed-both` with the error text, for two identical records. Exit 1
    is carve's "the work ran but something failed validation": a result, not a failure."""
    rcs = sorted(a.glob("*.rc"))
    codes = [rc.read_text().strip() for rc in rcs]
    failed = [rc for rc, code in zip(rcs, codes) if code not in ("0", "1")]
    notes = [f"{len(rcs)} runs"] if len(rcs) > 1 else []
    if "1" in codes:
        notes.append(f"exit 1 (a validation failed) in {codes.count('1')}" if len(rcs) > 1 else "exit 1 (a validation failed)")
    if not failed:
        return "identical", ", ".join(notes)
    err = failed[0].with_suffix(".stderr").read_text(errors="replace").strip().splitlines()
    text = next((line for line in err if line.startswith("carve: error")), err[-1] if err else "")
    what = f"exit {failed[0].read_text().strip()}: {text}"
    if len(failed) == len(rcs):
        return "failed-both", ", ".join([*notes, what])
    return "identical", ", ".join([*notes, f"{len(failed)} failed at both: {what}"])


def commands_for(fixture: str, commands: list[str]) -> list[str]:
    """`arc` for the scripted histories of fixtures/arc/, the other commands for the rest."""
    is_history = fixture.startswith("arc/")
    return [c for c in commands if (c == "arc") == is_history]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev_a")
    ap.add_argument("rev_b")
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "carve-same-outputs",
                    help="working folder: worktrees, shared target, binaries, runs (default: %(default)s)")
    ap.add_argument("--fixture", action="append", default=[], help="only this LANG/NAME (repeatable)")
    ap.add_argument("--command", action="append", choices=COMMANDS, default=[], help="only this command")
    ap.add_argument("--no-native", action="store_true",
                    help="run both revisions without the native recorder (pure-Python recorder)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per carve run (default: %(default)s)")
    ap.add_argument("--keep", action="store_true", help="keep the worktrees afterwards")
    ap.add_argument("--compare-only", action="store_true",
                    help="build and run nothing: compare the records an earlier run left in OUT/runs")
    args = ap.parse_args()

    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    revs = [Revision(args.rev_a, out), Revision(args.rev_b, out)]
    one_commit = revs[0].commit == revs[1].commit
    built = revs[:1] if one_commit else revs
    if one_commit:
        revs[0].label, revs[1].label = f"{revs[0].short}-a", f"{revs[1].short}-b"
    for rev in [] if args.compare_only else built:
        rev.checkout()
        rev.build(out / "target", native=not args.no_native)
    if one_commit:
        revs[1].native = revs[0].native
    fixtures = fixtures_at(revs[0])
    if args.fixture:
        unknown = sorted(set(args.fixture) - set(fixtures))
        if unknown:
            sys.exit(f"same_outputs: no such fixture at {revs[0].name}: {', '.join(unknown)}")
        fixtures = [f for f in fixtures if f in args.fixture]
    commands = [c for c in COMMANDS if not args.command or c in args.command]
    work, runs = Work(out), out / "runs"
    if args.no_native:
        recorder = "pure-Python recorder (--no-native)"
    elif args.compare_only:
        recorder = "records of an earlier run (--compare-only)"
    else:
        same = revs[0].native.read_bytes() == revs[1].native.read_bytes()
        recorder = f"each revision's native recorder (the two .so files are {'identical' if same else 'different'})"
    print(f"# carve {revs[0].name} ({revs[0].short}) vs {revs[1].name} ({revs[1].short}); "
          f"debug builds, {recorder}")
    differs = 0
    width = max(len(f) for f in fixtures) + 1 if fixtures else 10
    for fixture in fixtures:
        for command in commands_for(fixture, commands):
            records = [runs / rev.label / fixture / command for rev in revs]
            if args.compare_only:
                if not all(r.is_dir() for r in records):
                    print(f"{fixture:<{width}} {command:<6} {'not-run':<11} no records", flush=True)
                    continue
            else:
                features: list[list[str]] = []
                if command == "audit":
                    if "index" not in commands:
                        run_command(work, revs[0], fixture, "index", [], runs, args.timeout)
                    features = audit_features(revs[0], fixture, runs / revs[0].label / fixture / "index" / "index.stdout")
                    if not features:
                        shutil.rmtree(records[0], ignore_errors=True)
                        shutil.rmtree(records[1], ignore_errors=True)
                        print(f"{fixture:<{width}} {command:<6} {'not-run':<11} no carve-expected.toml and no test files",
                              flush=True)
                        continue
                for rev in revs:
                    run_command(work, rev, fixture, command, features, runs, args.timeout)
            diff, raw, tool, reordered = first_difference(*records)
            if diff:
                differs += 1
                status, detail = "differs", diff
            else:
                status, detail = verdict(records[0])
            if raw:
                detail = f"{detail}; " if detail else ""
                detail += f"{raw} raw trace(s) compared without pid and argv"
            if reordered:
                detail = f"{detail}; " if detail else ""
                detail += f"{len(reordered)} stderr file(s) with the same lines in another order"
            if tool:
                detail = f"{detail}; " if detail else ""
                detail += f"{tool} files of cargo-target/ not compared"
            print(f"{fixture:<{width}} {command:<6} {status:<11} {detail}".rstrip(), flush=True)
    if not args.compare_only:
        shutil.rmtree(work.root, ignore_errors=True)
        if not args.keep:
            for rev in built:
                rev.remove()
    total = sum(len(commands_for(f, commands)) for f in fixtures)
    print(f"# {differs} of {total} differ; records in {runs}")
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
