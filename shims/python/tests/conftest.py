"""Fixtures for the shim's tests: a private shim directory (as carve installs it), a tiny
repository with a hand-written probe map, and a runner that traces pytest on it."""

import ast
import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SHIM = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(SHIM))


def find_native():
    """The built extension: $CARVE_SHIM_NATIVE (.so or wheel), a wheel in target/shim,
    or cargo's build of the shim crate."""
    env = os.environ.get("CARVE_SHIM_NATIVE")
    candidates = [env] if env else []
    candidates += sorted(glob.glob(os.path.join(REPO, "target", "shim", "*.whl")))
    candidates += [os.path.join(SHIM, "target", "release", "lib_native.so")]
    for path in candidates:
        if path and os.path.isfile(path):
            return path
    return None


def install_shim(dest, native):
    """What carve's `install_python_shim` does, in Python (tests of the Rust side check
    that both produce the same layout)."""
    pkg = os.path.join(dest, "carve_shim")
    os.makedirs(pkg)
    for path in glob.glob(os.path.join(SHIM, "python", "carve_shim", "*.py")):
        shutil.copy(path, pkg)
    shutil.copy(os.path.join(SHIM, "sitecustomize", "sitecustomize.py"), dest)
    if native is None:
        return False
    target = os.path.join(pkg, "_native.abi3.so")
    if native.endswith(".whl"):
        with zipfile.ZipFile(native) as z:
            names = [n for n in z.namelist() if n.startswith("carve_shim/_native")]
            if not names:
                return False
            with z.open(names[0]) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)
    else:
        shutil.copy(native, target)
    return True


@pytest.fixture(scope="session")
def shim_dirs(tmp_path_factory):
    base = tmp_path_factory.mktemp("shim")
    native = find_native()
    with_native = str(base / "native")
    has_native = install_shim(with_native, native)
    fallback = str(base / "fallback")
    install_shim(fallback, None)
    return {"native": with_native if has_native else None, "fallback": fallback}


@pytest.fixture(params=["native", "fallback"])
def backend(request, shim_dirs):
    d = shim_dirs[request.param]
    if d is None:
        if os.environ.get("CI"):
            pytest.fail("native extension not built (maturin build --release -m shims/python/Cargo.toml -o target/shim)")
        pytest.skip("native extension not built; run maturin build --release -m shims/python/Cargo.toml -o target/shim")
    return request.param, d


# -- the tiny repository -----------------------------------------------------------------

FILES = {
    "pkg/__init__.py": """
        from .registry import REGISTRY, register
        from . import plugins
    """,
    "pkg/registry.py": """
        REGISTRY = {}

        def register(name):
            def deco(fn):
                REGISTRY[name] = fn
                return fn
            return deco
    """,
    "pkg/util.py": '''
        """Helpers."""
        from __future__ import annotations


        def helper(x: int) -> int:
            """Adds one."""
            return x + 1


        class Calc:
            def add(self, a, b):
                return helper(a) + b

            @staticmethod
            def neg(a):
                return -a

            def total(self, xs):
                return sum([helper(x) for x in xs])


        def lazy():
            from pkg import late
            return late.late_fn()
    ''',
    "pkg/plugins.py": """
        from .registry import register
        from .util import helper


        @register("double")
        def double(x):
            return helper(x) * 2


        SETUP_VALUE = helper(1)
    """,
    "pkg/late.py": """
        def _compute():
            return 41

        CONST = _compute()

        def late_fn():
            return CONST + 1
    """,
    "pkg/cli.py": """
        import sys

        from pkg import REGISTRY


        def main(argv):
            print(REGISTRY["double"](int(argv[0])))


        if __name__ == "__main__":
            main(sys.argv[1:])
    """,
    "tests/conftest.py": """
        import pytest

        from pkg.util import helper


        @pytest.fixture
        def ten():
            return helper(9)
    """,
    "tests/test_a.py": """
        import pytest

        from pkg.util import Calc, helper


        def test_add():
            assert Calc().add(1, 2) == 4


        def test_helper(ten):
            assert helper(1) == 2 and ten == 10


        class TestCalc:
            @pytest.mark.parametrize("v", [1, 2])
            def test_neg(self, v):
                assert Calc.neg(v) == -v

            def test_total(self):
                assert Calc().total([1, 2]) == 5
    """,
    "tests/test_b.py": """
        import os
        import subprocess
        import sys

        from pkg.util import lazy


        def test_subprocess():
            out = subprocess.run(
                [sys.executable, "-m", "pkg.cli", "3"], capture_output=True, text=True, check=True
            )
            assert out.stdout.strip() == "8"
            assert out.stderr == ""


        def test_lazy():
            assert lazy() == 42


        def test_crash():
            if os.environ.get("CRASH_HERE"):
                os._exit(3)
    """,
}

PROBED = ["pkg/__init__.py", "pkg/registry.py", "pkg/util.py", "pkg/plugins.py", "pkg/late.py", "pkg/cli.py"]


def _defs(path, source):
    """(qualname, [lines]) of every def/class, as carve's index would give them."""
    out = []

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = prefix + child.name
                lines = [child.lineno] + [d.lineno for d in child.decorator_list[:1]]
                out.append((qual, sorted(set(lines))))
                walk(child, qual + ".")
            else:
                walk(child, prefix)

    walk(ast.parse(source), "")
    return out


def make_repo(root):
    os.makedirs(root, exist_ok=True)
    nodes, files = [], {}
    for rel, text in FILES.items():
        source = textwrap.dedent(text).lstrip("\n")
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(source)
        defs = {}
        for qual, lines in _defs(rel, source):
            for line in lines:
                defs[str(line)] = len(nodes)
            nodes.append("%s::%s" % (rel, qual))
        files[rel] = {"probe": rel in PROBED, "defs": defs}
    probe_map = {"version": 1, "root": str(root), "nodes": nodes, "files": files}
    with open(os.path.join(root, "..", "probe-map.json"), "w") as f:
        json.dump(probe_map, f)
    return os.path.normpath(os.path.join(root, "..", "probe-map.json"))


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    probe_map = make_repo(str(root))
    return str(root), probe_map


def run_traced(shim_dir, root, probe_map, trace_dir, mode=None, fallback=False, extra_env=None, pythonpath_extra=()):
    env = dict(os.environ)
    for key in list(env):
        if key.startswith("CARVE_") or key == "PYTEST_ADDOPTS":
            del env[key]
    env["PYTHONPATH"] = os.pathsep.join([shim_dir, *pythonpath_extra])
    env["CARVE_PROBE_MAP"] = probe_map
    env["CARVE_TRACE_DIR"] = trace_dir
    env["PYTHONDONTWRITEBYTECODE"] = ""
    env.pop("PYTHONDONTWRITEBYTECODE")
    if mode:
        env["CARVE_TRACE_MODE"] = mode
    if fallback:
        env["CARVE_SHIM_FORCE_FALLBACK"] = "1"
    env.update(extra_env or {})
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "carve_shim.plugin", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def read_traces(trace_dir):
    """[(file name, [records])] for every trace file."""
    out = []
    for path in sorted(glob.glob(os.path.join(trace_dir, "*.jsonl"))):
        with open(path) as f:
            out.append((os.path.basename(path), [json.loads(line) for line in f if line.strip()]))
    return out


def merge(traces):
    """Union of hits and edges per test id over every file."""
    tests = {}
    for _, records in traces:
        for r in records:
            if r["kind"] == "test":
                t = tests.setdefault(r["test"], {"hits": set(), "edges": set()})
                t["hits"].update(r["hits"])
                t["edges"].update(tuple(e) for e in r["edges"])
    return tests
