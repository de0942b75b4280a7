"""The recorder API, native and pure-Python, driven directly (in a fresh interpreter per
case, as the native recorder is one per process)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    if sys.argv[2] == "native":
        from carve_shim import _native as r
    else:
        from carve_shim import fallback as r
    out = {}
    seen = [False] * 4
    codes = []

    def resolver(code):
        codes.append(code.co_name)
        return {"caller_a": 0, "caller_b": 1}.get(code.co_name, 9)

    r.configure(4, sys.argv[3], 2, resolver, 4, seen)

    def probed():
        if not seen[2]:
            r.hit(2)

    def caller_a():
        probed()

    def caller_b():
        probed()

    r.set_test("a")
    for _ in range(5):
        caller_a()
    out["seen_a"] = list(seen)
    r.set_test("b")
    out["seen_b_start"] = list(seen)
    caller_b()
    r.enter_import()
    out["seen_importing"] = list(seen)
    caller_a()
    r.exit_import()
    out["seen_b_after_import"] = list(seen)
    caller_b()
    out["seen_b"] = list(seen)
    out["current"] = r.current_test()
    out["a"] = r.take_test("a")
    out["b"] = r.take_test("b")
    out["current_after_take"] = r.current_test()
    out["import"] = r.drain("<import>")
    out["import_again"] = r.drain("<import>")
    out["missing"] = r.take_test("nope")
    out["resolved"] = sorted(set(codes))
    r.hit(99)  # out of range: ignored
    try:
        r.hit("x")
        out["bad"] = "accepted"
    except TypeError:
        out["bad"] = "TypeError"
    print(json.dumps(out))
    """
)


@pytest.fixture(params=["native", "fallback"])
def impl(request, shim_dirs):
    d = shim_dirs[request.param] if request.param == "native" else shim_dirs["fallback"]
    if d is None:
        pytest.skip("native extension not built")
    return request.param, d


def run(impl, mode):
    name, d = impl
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, d, name, mode], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_first_hits(impl):
    out = run(impl, "first-hits")
    # Two captures per callee per test, then the guard skips the call.
    assert out["seen_a"] == [False, False, True, False]
    assert out["seen_b_start"] == [False] * 4
    assert out["seen_importing"] == [False] * 4
    assert out["seen_b_after_import"] == [False] * 4
    assert out["seen_b"] == [False, False, True, False]
    assert out["current"] == "b"
    assert out["a"] == [[2], [[0, 2]]]
    assert out["b"] == [[2], [[1, 2]]]
    assert out["current_after_take"] == "<import>"
    assert out["import"] == [[2], [[0, 2]]]
    assert out["import_again"] == [[], []]
    assert out["missing"] is None
    assert out["resolved"] == ["caller_a", "caller_b"]
    assert out["bad"] == "TypeError"


def test_exact_never_guards(impl):
    out = run(impl, "exact")
    assert out["seen_a"] == [False] * 4
    assert out["seen_b"] == [False] * 4
    assert out["a"] == [[2], [[0, 2]]]


def test_probe_tree_keeps_docstring_future_and_lines(shim_dirs):
    d = shim_dirs["fallback"]
    script = textwrap.dedent(
        '''
        import ast, sys
        sys.path.insert(0, sys.argv[1])
        from carve_shim import hook
        src = """\\"\\"\\"Module doc.\\"\\"\\"
        from __future__ import annotations

        import os


        @staticmethod
        def f(a: Undefined) -> int:
            \\"\\"\\"Doc.\\"\\"\\"
            return 1

        class C:
            def m(self):
                def inner():
                    pass
                return inner

        lam = lambda: 0
        """
        tree = ast.parse(src)
        n = hook.probe_tree(tree, {7: 0, 13: 1, 14: 2})
        code = compile(tree, "mod.py", "exec")
        out = ast.unparse(tree).splitlines()
        print(n)
        print("\\n".join(out))
        '''
    )
    out = subprocess.run([sys.executable, "-c", script, d], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "3"
    text = "\n".join(lines[1:])
    # Nothing is bound in the module: the probe names resolve through builtins.
    assert text.startswith('"""Module doc."""\nfrom __future__ import annotations\nimport os\n')
    assert "carve_shim" not in text
    assert '"""Doc."""\n    if not _carve_seen[0]:\n        _carve_hit(0)\n    return 1' in text
    assert "def m(self):\n        if not _carve_seen[1]:" in text
    assert "def inner():\n            if not _carve_seen[2]:" in text


def test_a_probed_module_namespace_is_the_untraced_one(shim_dirs, tmp_path):
    # Code that lists a module's names (toolz' curried namespace test compares
    # vars(toolz) with toolz.curried) must see no names of the shim.
    d = shim_dirs["fallback"]
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("def f():\n    return 1\n")
    pm = {"version": 1, "root": str(root), "nodes": ["pkg/__init__.py::f"],
          "files": {"pkg/__init__.py": {"probe": True, "defs": {"1": 0}}}}
    (tmp_path / "pm.json").write_text(json.dumps(pm))
    script = textwrap.dedent(
        """
        import sys
        sys.path[:0] = [sys.argv[1], sys.argv[2]]
        from carve_shim import runtime
        s = runtime.start(role="process")
        import pkg
        assert pkg.f() == 1
        print(sorted(n for n in vars(pkg) if not n.startswith("__")))
        print("pkg/__init__.py" in s.finder.probed)
        """
    )
    env = dict(os.environ, CARVE_PROBE_MAP=str(tmp_path / "pm.json"), CARVE_TRACE_DIR=str(tmp_path / "t"))
    out = subprocess.run([sys.executable, "-S", "-c", script, d, str(root)], capture_output=True, text=True,
                         timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["['f']", "True"]


def test_preloaded_modules_are_reported(shim_dirs, tmp_path):
    d = shim_dirs["fallback"]
    root = tmp_path / "repo"
    (root / "early").mkdir(parents=True)
    (root / "early" / "__init__.py").write_text("def f():\n    return 1\n")
    pm = {"version": 1, "root": str(root), "nodes": ["early/__init__.py::f"],
          "files": {"early/__init__.py": {"probe": True, "defs": {"1": 0}}}}
    (tmp_path / "pm.json").write_text(json.dumps(pm))
    script = textwrap.dedent(
        """
        import sys
        sys.path[:0] = [sys.argv[1], sys.argv[2]]
        import early
        from carve_shim import runtime
        s = runtime.start(role="process")
        print(s.preloaded)
        """
    )
    env = dict(os.environ, CARVE_PROBE_MAP=str(tmp_path / "pm.json"), CARVE_TRACE_DIR=str(tmp_path / "t"))
    out = subprocess.run([sys.executable, "-S", "-c", script, d, str(root)], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['early/__init__.py']"
