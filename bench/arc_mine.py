#!/usr/bin/env python3
"""Mine every repository of a FeatureArc corpus file with `carve arc mine` and print the table.

    python3 bench/arc_mine.py bench/corpus/arc-go.toml bench/corpus/arc-rust.toml \
        --mirrors /work/.mirror --out /tmp/arc-mine [--carve target/release/carve]

Each repository is read from a bare git directory under `--mirrors` (`owner+name/…`, as the
`fetch` tool writes them; any folder holding the repository's git data works) over the `range`
its corpus file gives. One `mine-owner+name.json` report per repository goes to `--out`; the
table is bench/arc_table.py's, followed by the most frequent reasons candidates were discarded
for. `--table-only` prints the table from the reports already in `--out`.

`--checkouts DIR`: a repository with a folder `DIR/<name>` (its short name, `unjs/pathe` ->
`pathe`) is read from that checkout instead of the mirror — for TypeScript, a checkout whose
`node_modules` is installed (`npm install`), which carve links into every exported state.

`--build CARVE_TOML` then runs `carve arc build` on every mined chain (the repository's tests
configured by that carve.toml, e.g. `language = "go"` with a `[test]` runner = "go" table) into
`--out/built/`, and prints one line per chain — built, or the first line of carve's error —
and the counts. With `--validate`, each built bundle is re-checked with `carve arc validate`
(every stage gate and the chain gate with the gold patches). Every outcome goes to
`--out/build-results.json` (one entry per chain: repository, language, stages mined and built,
outcome, reason), which bench/arc_build.py turns into the build-rate table. `--only NAME`
builds the chains of those repositories only (repeatable), `--chain ID` those chains only
(repeatable: to re-measure the chains a change can affect).
"""
import argparse
import collections
import json
import pathlib
import re
import subprocess
import time
import sys
import tomllib

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import arc_table  # noqa: E402


def git_dir(mirrors, name):
    root = pathlib.Path(mirrors) / name.replace("/", "+")
    heads = sorted(p.parent for p in root.rglob("HEAD") if (p.parent / "objects").is_dir())
    if not heads:
        sys.exit(f"{name}: no git directory under {root}; fetch the repository first")
    return heads[0]


def repo_dir(args, name):
    """The checkout under --checkouts when there is one, else the mirror's git directory."""
    if args.checkouts:
        checkout = pathlib.Path(args.checkouts) / name.split("/")[-1]
        if (checkout / ".git").exists():
            return checkout
    return git_dir(args.mirrors, name)


def has_repo(args, name):
    if args.checkouts and (pathlib.Path(args.checkouts) / name.split("/")[-1] / ".git").exists():
        return True
    root = pathlib.Path(args.mirrors) / name.replace("/", "+")
    return root.is_dir() and any((p.parent / "objects").is_dir() for p in root.rglob("HEAD"))


def reason_kind(reason):
    """A discarded candidate's or a failed build's reason without its commit ids, names and
    file paths, to count by kind."""
    text = re.sub(r"`[^`]*`|\b[0-9a-f]{7,40}\b", "…", reason)
    text = re.sub(r"(?:[\w.+-]+/)*[\w+-]+\.[A-Za-z]{1,4}\b", "FILE", text)  # file paths
    return re.sub(r"\d+", "…", text)[:110]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", nargs="+", help="bench/corpus/arc-*.toml files")
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--out", required=True)
    ap.add_argument("--carve", default="target/release/carve")
    ap.add_argument("--table-only", action="store_true")
    ap.add_argument("--checkouts", help="folder of checkouts (with installed dependencies) to use instead of mirrors")
    ap.add_argument("--build", metavar="CARVE_TOML", help="also build every mined chain with this carve.toml")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per chain build")
    ap.add_argument("--validate", action="store_true", help="re-check every built bundle with `carve arc validate`")
    ap.add_argument("--only", action="append", default=[], help="build the chains of this repository only")
    ap.add_argument("--chain", action="append", default=[], help="build this chain only (its id; repeatable)")
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    reports = []
    for corpus in args.corpus:
        for repo in tomllib.loads(pathlib.Path(corpus).read_text())["repo"]:
            path = out / f"mine-{repo['name'].replace('/', '+')}.json"
            if not args.table_only and not has_repo(args, repo["name"]):
                # One repository missing (its mirror not fetched here) does not stop the others.
                print(f"# {repo['name']}: skipped, no checkout and no mirror under {args.mirrors}", file=sys.stderr)
                continue
            if not args.table_only:
                cmd = [args.carve, "arc", "mine", str(repo_dir(args, repo["name"])), "--range", repo["range"],
                       "--name", repo["name"], "--format", "json"]
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode != 0:
                    sys.exit(f"{repo['name']}: `{' '.join(cmd)}` exited {p.returncode}: {p.stderr.strip()[-2000:]}")
                path.write_text(p.stdout)
                print(f"# {repo['name']}: {path}", file=sys.stderr)
            repo = dict(repo, language=pathlib.Path(corpus).stem.removeprefix("arc-"))
            reports.append((repo, json.loads(path.read_text())))
    arc_table.header()
    for _, r in reports:
        print(arc_table.row(r))
    print()
    for _, r in reports:
        kinds = collections.Counter(reason_kind(d["reason"]) for d in r.get("discarded", []))
        top = "; ".join(f"{n}× {k}" for k, n in kinds.most_common(3))
        print(f"- {r['repo']}: {r.get('discarded_total', len(r.get('discarded', [])))} discarded — {top}")

    if args.build:
        build_all(args, out, reports)


def build_all(args, out, reports):
    """`carve arc build` (and with --validate `carve arc validate`) on every mined chain; one line
    each, then the counts; every outcome to build-results.json."""
    outcomes = collections.Counter()
    results = []
    print()
    for repo, r in reports:
        if args.only and repo["name"] not in args.only:
            continue
        report = out / f"mine-{repo['name'].replace('/', '+')}.json"
        for chain in r["chains"]:
            if args.chain and chain["chain_id"] not in args.chain:
                continue
            start = time.monotonic()
            entry = build_one(args, out, repo, report, chain)
            entry["seconds"] = round(time.monotonic() - start)
            results.append(entry)
            outcomes[entry["kind"]] += 1
            print(f"- {chain['chain_id']} ({entry['seconds']} s): {entry['outcome']} {entry['detail'][:300]}", flush=True)
            # Written after every chain: a run stopped early keeps what it measured.
            (out / "build-results.json").write_text(json.dumps(results, indent=1) + "\n")
    print()
    for kind, n in outcomes.most_common():
        print(f"{n}× {kind}")


def run(cmd, timeout):
    """(exit code 0, the first line of stdout on success or of stderr otherwise)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        ok, text = p.returncode == 0, (p.stdout if p.returncode == 0 else p.stderr).strip()
    except subprocess.TimeoutExpired:
        ok, text = False, f"timed out after {timeout}s"
    return ok, text


def build_one(args, out, repo, report, chain):
    """Build (and validate) one chain: its entry of build-results.json."""
    src = str(repo_dir(args, repo["name"]))
    cmd = [args.carve, "arc", "build", src, "--mined", str(report), "--chain", chain["chain_id"],
           "--out", str(out / "built"), "--config", args.build, "--format", "json"]
    ok, text = run(cmd, args.timeout)
    entry = {"repo": repo["name"], "language": repo["language"], "chain_id": chain["chain_id"],
             "stages_mined": len(chain["stages"]), "stages_built": None, "merged_stages": 0}
    if not ok:
        first = text.splitlines()[-1] if text else ""
        first = next((l for l in text.splitlines() if l.startswith("carve: error")), first)
        kind = reason_kind(re.sub(r"^carve: error: (chain [^:]+: )?", "", first))[:70]
        # The lines after the first (the build check's or runner's own output) say what broke.
        return dict(entry, outcome="failed", kind=kind, detail=first, stderr=text[:4000])
    try:
        built = json.loads(text)
        entry["stages_built"] = len(built["stages"])  # chain.json
        entry["merged_stages"] = len(built.get("merged_stages", []))
    except (json.JSONDecodeError, KeyError, TypeError):
        pass
    if not args.validate:
        return dict(entry, outcome="built", kind="built", detail="")
    bundle = out / "built" / chain["chain_id"]
    ok, text = run([args.carve, "arc", "validate", str(bundle), "--repo", src], args.timeout)
    if ok:
        return dict(entry, outcome="validated", kind="built and validated", detail="")
    last = text.splitlines()[-1] if text else ""
    return dict(entry, outcome="invalid", kind="built, validation failed", detail=last)


if __name__ == "__main__":
    main()
