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

Usage: python3 bench/oci.py [--runs 5] [--make debian,python,node,go,rust] [--make-runs 1]
Needs root, buildah and the base images (`scripts/base-images`); builds carve-core's `oci`
example (release) and drives it.
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--make", default="", help="base images to remake and time (comma-separated, or 'all')")
    ap.add_argument("--make-runs", type=int, default=1)
    args = ap.parse_args()
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


if __name__ == "__main__":
    main()
