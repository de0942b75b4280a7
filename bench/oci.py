#!/usr/bin/env python3
"""carve's OCI benchmark (issue 27): what the local base images cost, and what building and
running in an image costs next to running on this machine.

Prints one JSON line per measurement, then a summary table:

- `base-image`: each local base image of `scripts/base-images`, its size (its layers,
  uncompressed, as carve-core's ImageInfo reports it) and, for those named by `--make`, the
  time `scripts/base-images --force NAME` takes (median of `--make-runs`; debian's includes
  debootstrap, the others reuse the debian image that is there);
- `detect`: `Engine::detect` (it probes each engine by running a container);
- `build`: a small image FROM python:3.11-slim-bookworm that installs pytest from PyPI,
  through carve-core's `Engine::build`: `cold` (the install layer not cached: a new file is
  copied in before it) and `warm` (every layer cached), medians of `--runs`;
- `run`: the same command run directly on a fresh copy of the folder and in the image through
  carve-core's `Engine::run` (a container made, the folder copied in, the command run, the
  result copied out, the container removed): `true` (the fixed cost) and the pytest suite of
  `fixtures/python/inventory` with the image's CPython (the machine's own, copied), medians
  over alternating runs and the in-image/direct ratio. `command_s` is the command alone
  inside the container (buildah run).

- `fixture`: per fixture of `fixtures/env/` with two features (go-tasks, python-tasks), on a
  fresh copy: `carve env --build-image` (set-up: finding, installing and verifying the
  environment, then building its image, each timed; the image's size as environment.json
  records it), `carve tasks --level 1` for one feature, then `carve validate` of that bundle
  with `--runtime local` and with `--runtime oci` (timed), and whether every state gives every
  test the same status both ways (`agree` = tests whose statuses agree / all, over the states).
  The image is removed afterwards.

- `repo` (`--manifest M.toml --mirror DIR`): public repositories, through `carve dataset run
  M --recheck image --candidates K --keep-work` (the environment set up by carve, every
  bundle validated on the checkout and in its image, compared state by state); then per
  repository its image removed and built again from the kept checkout with `carve env
  --build-image` (the environment reused from the store, so `build_s` is the image alone),
  the image's size, and the tasks whose statuses agree / re-checked in the image.

Usage: python3 bench/oci.py [--runs 5] [--make debian,python,node,go,rust] [--make-runs 1]
                            [--fixtures go-tasks,python-tasks] [--only-fixtures]
       python3 bench/oci.py --manifest M.toml --mirror DIR [--candidates 3] [--out DIR]
Needs root, buildah and the base images (`scripts/base-images`); builds carve-core's `oci`
example (release) and drives it, and carve itself (debug, `target/debug/carve`) for the fixtures.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "target" / "release" / "examples" / "oci"
BASES = {
    "debian": "debian:bookworm-slim",
    "python": "python:3.11-slim-bookworm",
    "node": "node:20-bookworm-slim",
    "go": "golang:1.26-bookworm",
    "rust": "rust:1.95-slim-bookworm",
}
FIXTURE = ROOT / "fixtures" / "python" / "inventory"
PYTEST = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"]


def emit(row):
    row["load_1min"] = round(os.getloadavg()[0], 1)
    print(json.dumps(row), flush=True)
    return row


def check(cmd, **kw):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-3000:])
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(map(str, cmd))}")
    return proc.stdout


def oci(*args):
    """One call of carve-core's oci example: its JSON line."""
    return json.loads(check([str(EXAMPLE), *map(str, args)]).strip().splitlines()[-1])


def image_size(name):
    """The size of an image's layers, uncompressed (what carve-core's ImageInfo says)."""
    info = json.loads(check(["buildah", "inspect", "--type", "image", name]))
    return sum(layer["size"] for layer in json.loads(info["Manifest"])["layers"])


def median(xs):
    return round(statistics.median(xs), 3)


def base_images(make, make_runs):
    rows = []
    for short, name in BASES.items():
        times = []
        if short in make:
            for _ in range(make_runs):
                start = time.perf_counter()
                check([str(ROOT / "scripts" / "base-images"), "--force", short])
                times.append(time.perf_counter() - start)
        present = subprocess.run(["buildah", "inspect", "--type", "image", name], capture_output=True).returncode == 0
        row = {"what": "base-image", "image": name, "present": present}
        if present:
            row["size_mb"] = round(image_size(name) / 1e6, 1)
        if times:
            row.update({"make_s": median(times), "make_runs": len(times)})
        rows.append(emit(row))
    return rows


def pytest_version():
    return check([*PYTEST[:3], "--version"]).split()[-1]


def builds(runs, work):
    """Cold and warm builds of a small image; returns the tag of one to run in."""
    ctx = work / "ctx"
    ctx.mkdir()
    (ctx / "Dockerfile").write_text(
        "FROM python:3.11-slim-bookworm\n"
        "COPY nonce.txt /opt/nonce.txt\n"
        f"RUN pip install --no-cache-dir --disable-pip-version-check -q pytest=={pytest_version()}\n"
    )
    cold, warm, tags = [], [], []
    for i in range(runs):
        (ctx / "nonce.txt").write_text(f"{time.time_ns()}\n")
        tag = f"localhost/carve-bench-oci:cold-{os.getpid()}-{i}"
        tags.append(tag)
        cold.append(oci("build", ctx, ctx / "Dockerfile", tag)["build_s"])
        warm.append(oci("build", ctx, ctx / "Dockerfile", tag + "-warm")["build_s"])
        tags.append(tag + "-warm")
    size = image_size(tags[-1])
    emit({"what": "build", "kind": "cold", "median_s": median(cold), "runs": runs, "size_mb": round(size / 1e6, 1)})
    emit({"what": "build", "kind": "warm", "median_s": median(warm), "runs": runs})
    keep = tags.pop()
    for tag in tags:
        subprocess.run(["buildah", "rmi", tag], capture_output=True)
    return keep, {"cold": median(cold), "warm": median(warm), "size_mb": round(size / 1e6, 1)}


def direct(command, work, i):
    """The command on a fresh copy of the fixture, as carve runs tests locally."""
    copy = work / f"direct-{i}"
    start = time.perf_counter()
    shutil.copytree(FIXTURE, copy, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    proc = subprocess.run(command, cwd=copy, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"direct run failed ({proc.returncode}): {' '.join(command)}")
    return elapsed


def in_image(tag, command, work, i):
    out = oci(
        "run", tag, "--in", f"{FIXTURE}:/work/repo", "--workdir", "/work/repo",
        "--out", f"/work/repo/pyproject.toml:{work / f'out-{i}'}", "--", *command,
    )
    if out["exit_code"] != 0 or out["copied_out"] != 1:
        raise SystemExit(f"run in {tag} failed: {out}")
    return out["run_s"], out["command_s"]


def runs_compared(tag, runs, work):
    rows = []
    for name, command in [("true", ["true"]), ("pytest inventory", PYTEST)]:
        here, there, inside = [], [], []
        for i in range(runs):
            here.append(direct(command, work, f"{name.replace(' ', '-')}-{i}"))
            run_s, command_s = in_image(tag, command, work, f"{name.replace(' ', '-')}-{i}")
            there.append(run_s)
            inside.append(command_s)
        d, r = median(here), median(there)
        rows.append(emit({
            "what": "run", "command": name, "direct_s": d, "in_image_s": r, "command_in_image_s": median(inside),
            "overhead_s": round(r - d, 3), "ratio": round(r / d, 1) if d else None, "runs": runs,
        }))
    return rows


CARVE = ROOT / "target" / "debug" / "carve"
FIXTURE_F2P = {
    "go-tasks": "initials_test.go",
    "python-tasks": "tests/test_initials.py",
    "typescript-tasks": "tests/initials.test.ts",
    "rust-tasks": "tests/grouped.rs",
}


def carve(envs, *args):
    """carve with its environments under `envs`: (stdout, seconds)."""
    env = {**os.environ, "CARVE_ENV_DIR": str(envs), "CARVE_NO_PROGRESS": "1"}
    env.pop("CARVE_ENV", None)
    start = time.perf_counter()
    out = check([str(CARVE), *map(str, args)], env=env)
    return out, time.perf_counter() - start


def statuses(validation):
    return [(s["state"], s["statuses"]) for s in validation["states"]]


def fixture_row(name, work):
    """Set up, build, make one task and validate it here and in its image."""
    repo = work / name
    shutil.copytree(ROOT / "fixtures" / "env" / name, repo)
    envs = work / f"envs-{name}"
    out, total = carve(envs, "env", repo, "--out", work / f"env-{name}", "--build-image", "--format", "json")
    report = json.loads(out)
    image = report["environment"]["image"]["name"]
    tasks = work / f"tasks-{name}"
    out, _ = carve(envs, "tasks", repo, "--out", tasks, "--level", "1", "--format", "json", "--f2p", FIXTURE_F2P[name])
    bundle = tasks / json.loads(out)["tasks"][0]
    try:
        here, local_s = carve(envs, "validate", bundle, "--repo", repo, "--format", "json", "--runtime", "local")
        there, oci_s = carve(envs, "validate", bundle, "--repo", repo, "--format", "json", "--runtime", "oci")
    finally:
        subprocess.run(["buildah", "rmi", image], capture_output=True)
    a, b = json.loads(here), json.loads(there)
    pairs = [(t, st, b_st.get(t)) for (_, st), (_, b_st) in zip(statuses(a), statuses(b)) for t in st]
    agree = sum(1 for t, st, other in pairs if st[t] == other) if len(statuses(a)) == len(statuses(b)) else 0
    return emit({
        "what": "fixture", "fixture": name, "image": image,
        "env_s": round(report["seconds"], 1), "build_s": round(total - report["seconds"], 1),
        "image_mb": round(report["environment"]["image"]["size_bytes"] / 1e6, 1),
        "validate_local_s": round(local_s, 1), "validate_oci_s": round(oci_s, 1),
        "valid_local": a["valid"], "valid_oci": b["valid"], "agree": agree, "tests": len(pairs),
    })


def fixtures_table(names):
    if CARVE == ROOT / "target" / "debug" / "carve":
        check(["cargo", "build", "--quiet", "-p", "carve"], cwd=ROOT)
    with tempfile.TemporaryDirectory(prefix="carve-bench-oci-fx-") as tmp:
        rows = [fixture_row(n, Path(tmp)) for n in names]
    print()
    print(f"{'fixture':14} {'env s':>6} {'build s':>8} {'image MB':>9} {'local s':>8} {'oci s':>6} {'valid':>11} {'agree':>6}")
    for r in rows:
        valid = f"{r['valid_local']}/{r['valid_oci']}".lower()
        print(f"{r['fixture']:14} {r['env_s']:>6} {r['build_s']:>8} {r['image_mb']:>9} {r['validate_local_s']:>8} "
              f"{r['validate_oci_s']:>6} {valid:>11} {r['agree']:>3}/{r['tests']}")
    return rows


def repos_table(manifest, mirror, candidates, out, run=True):
    """`carve dataset run --recheck image` over `manifest`, then each image built again."""
    import tomllib

    entries = tomllib.loads(Path(manifest).read_text())["repo"]
    out = Path(out)
    envs = out / "envs"
    args = ["dataset", "run", manifest, "--out", out / "dataset", "--mirror", mirror, "--recheck", "image",
            "--candidates", str(candidates), "--keep-work", "--format", "json"]
    env = {**os.environ, "CARVE_ENV_DIR": str(envs), "CARVE_NO_PROGRESS": "1"}
    env.pop("CARVE_ENV", None)
    if run:
        start = time.perf_counter()
        subprocess.run([str(CARVE), *map(str, args)], env=env, stdout=subprocess.DEVNULL, check=False)
        emit({"what": "dataset-run", "seconds": round(time.perf_counter() - start, 1)})
    rows = []
    for e in entries:
        key = e["name"].replace("/", "+")
        path = out / "dataset" / "repos" / key / e["commit"] / "result.json"
        if not path.is_file():
            rows.append(emit({"what": "repo", "repo": e["name"], "status": "pending"}))
            continue
        result = json.loads(path.read_text())
        row = {"what": "repo", "repo": e["name"], "language": result.get("language"), "status": result["status"],
               "image": (result.get("environment") or {}).get("image_name")}
        stats = json.loads((out / "dataset" / "repos" / key / e["commit"] / "stats.json").read_text())
        stages = {s["stage"]: s["seconds"] for s in stats["stages"]}
        row["env_s"] = round(stages.get("environment", 0), 1)
        row["recheck_s"] = round(stages.get("recheck", 0), 1)
        tasks = result.get("tasks", [])
        row["tasks"] = len(tasks)
        row["in_image"] = sum(1 for t in tasks if t.get("image"))
        row["agree"] = sum(1 for t in tasks if (t.get("image") or {}).get("agrees"))
        row["differences"] = [d for t in tasks for d in (t.get("image") or {}).get("differences", [])]
        row["rejected_in_image"] = [r["reason"] for r in result.get("rejected", []) if "in the image" in r["reason"]]
        checkout = out / "dataset" / "work" / f"{key}@{e['commit']}" / "checkout"
        if row["image"] and checkout.is_dir():
            subprocess.run(["buildah", "rmi", row["image"]], capture_output=True)
            t0 = time.perf_counter()
            o = subprocess.run([str(CARVE), "env", str(checkout), "--out", str(out / "env" / key), "--build-image",
                                "--format", "json"], env=env, capture_output=True, text=True)
            took = time.perf_counter() - t0
            # A `partial` environment (tests still failing) exits 1 with its report and image.
            if o.returncode in (0, 1) and o.stdout.strip().startswith("{"):
                report = json.loads(o.stdout)
                row["build_s"] = round(took - report["seconds"], 1)
                row["image_mb"] = round((report["environment"]["image"].get("size_bytes") or 0) / 1e6, 1)
            else:
                row["build_error"] = o.stderr.strip().splitlines()[-1:]
            subprocess.run(["buildah", "rmi", row["image"]], capture_output=True)
        rows.append(emit(row))
    print()
    print(f"{'repository':26} {'lang':10} {'env s':>6} {'build s':>8} {'image MB':>9} {'recheck s':>9} {'tasks':>5} {'agree':>7}")
    for r in rows:
        if r["status"] == "pending":
            print(f"{r['repo']:26} (no result)")
            continue
        print(f"{r['repo']:26} {str(r['language']):10} {r['env_s']:>6} {r.get('build_s', '-'):>8} "
              f"{r.get('image_mb', '-'):>9} {r['recheck_s']:>9} {r['tasks']:>5} {r['agree']:>3}/{r['in_image']}")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--make", default="", help="base images to remake and time (comma-separated, or 'all')")
    ap.add_argument("--make-runs", type=int, default=1)
    ap.add_argument("--fixtures", default="go-tasks,python-tasks", help="fixtures of fixtures/env/ ('' for none)")
    ap.add_argument("--only-fixtures", action="store_true", help="only the fixtures' set-up and validation")
    ap.add_argument("--manifest", help="public repositories (a dataset manifest) to run through --recheck image")
    ap.add_argument("--mirror", default="/work/.mirror", help="folder of git mirrors (<owner>+<name>/repo)")
    ap.add_argument("--candidates", type=int, default=3, help="candidates per repository (--manifest)")
    ap.add_argument("--out", help="output folder (--manifest; default: a temporary one, removed)")
    ap.add_argument("--no-run", action="store_true",
                    help="with --manifest and --out: only report (and rebuild the images of) the repositories finished there")
    ap.add_argument("--carve", help="the carve binary (default: target/debug/carve, built first)")
    args = ap.parse_args()
    global CARVE
    if args.carve:
        CARVE = Path(args.carve).resolve()
    elif args.manifest:
        check(["cargo", "build", "--quiet", "-p", "carve"], cwd=ROOT)
    if args.manifest:
        if args.out:
            repos_table(args.manifest, args.mirror, args.candidates, args.out, run=not args.no_run)
        else:
            with tempfile.TemporaryDirectory(prefix="carve-bench-oci-repos-") as tmp:
                repos_table(args.manifest, args.mirror, args.candidates, tmp)
        return
    fixtures = [f for f in args.fixtures.split(",") if f]
    if unknown := set(fixtures) - set(FIXTURE_F2P):
        raise SystemExit(f"unknown fixture(s): {', '.join(sorted(unknown))}")
    if args.only_fixtures:
        fixtures_table(fixtures)
        return
    make = set(BASES) if args.make == "all" else {m for m in args.make.split(",") if m}
    if unknown := make - set(BASES):
        raise SystemExit(f"unknown base image(s): {', '.join(sorted(unknown))}")
    check(["cargo", "build", "--quiet", "--release", "-p", "carve-core", "--example", "oci"], cwd=ROOT)
    bases = base_images(make, args.make_runs)
    if not any(b["image"] == BASES["python"] and b["present"] for b in bases):
        raise SystemExit("python:3.11-slim-bookworm is missing: run scripts/base-images python")
    detect = [oci("detect")["detect_s"] for _ in range(args.runs)]
    emit({"what": "detect", "median_s": median(detect), "runs": args.runs})
    with tempfile.TemporaryDirectory(prefix="carve-bench-oci-") as tmp:
        work = Path(tmp)
        tag, build = builds(args.runs, work)
        try:
            runs = runs_compared(tag, args.runs, work)
        finally:
            subprocess.run(["buildah", "rmi", tag], capture_output=True)
    print()
    print(f"{'base image':28} {'size MB':>8} {'make s':>7}")
    for b in bases:
        print(f"{b['image']:28} {b.get('size_mb', '-'):>8} {b.get('make_s', '-'):>7}")
    print(f"\ndetect {median(detect)} s; build (pytest on python:3.11) cold {build['cold']} s, warm {build['warm']} s, "
          f"{build['size_mb']} MB")
    print(f"{'run':18} {'direct s':>9} {'in image s':>11} {'inside s':>9} {'ratio':>6}")
    for r in runs:
        print(f"{r['command']:18} {r['direct_s']:>9} {r['in_image_s']:>11} {r['command_in_image_s']:>9} {r['ratio']:>6}")
    if fixtures:
        fixtures_table(fixtures)


if __name__ == "__main__":
    main()
