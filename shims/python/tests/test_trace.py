"""End-to-end: trace pytest on a tiny repository, with the native recorder and with the
pure-Python fallback, and check the JSON-lines trace."""

import os

import pytest

from conftest import merge, read_traces, run_traced

IMPORT = "<import>"


@pytest.fixture
def traced(backend, repo, tmp_path):
    name, shim_dir = backend
    root, probe_map = repo
    trace_dir = str(tmp_path / "trace")
    proc = run_traced(shim_dir, root, probe_map, trace_dir, fallback=(name == "fallback"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return name, root, read_traces(trace_dir), proc


def main_file(traces):
    for fname, records in traces:
        if records and records[0].get("role") == "pytest":
            return fname, records
    raise AssertionError("no trace file of the pytest process: %r" % [f for f, _ in traces])


def test_header_and_end(traced):
    name, root, traces, _ = traced
    fname, records = main_file(traces)
    header = records[0]
    assert header["kind"] == "header" and header["version"] == 1
    assert header["native"] is (name == "native")
    assert header["mode"] == "first-hits"
    assert header["pid"] == int(fname.split("-")[0])
    assert header["unprobed_preloaded"] == []
    assert records[-1]["kind"] == "end"
    assert records[-1]["tests"] == 8
    tests = [r["test"] for r in records if r["kind"] == "test" and r["test"] != IMPORT]
    assert tests == [
        "tests/test_a.py::test_add",
        "tests/test_a.py::test_helper",
        "tests/test_a.py::TestCalc::test_neg[1]",
        "tests/test_a.py::TestCalc::test_neg[2]",
        "tests/test_a.py::TestCalc::test_total",
        "tests/test_b.py::test_subprocess",
        "tests/test_b.py::test_lazy",
        "tests/test_b.py::test_crash",
    ]
    outcomes = {r["test"]: r.get("outcome") for r in records if r["kind"] == "test"}
    assert outcomes["tests/test_a.py::test_add"] == "passed"


def test_hits_and_edges_per_test(traced):
    _, _, traces, _ = traced
    tests = merge(traces)
    add = tests["tests/test_a.py::test_add"]
    assert add["hits"] == {"pkg/util.py::Calc.add", "pkg/util.py::helper"}
    assert add["edges"] == {
        ("tests/test_a.py::test_add", "pkg/util.py::Calc.add"),
        ("pkg/util.py::Calc.add", "pkg/util.py::helper"),
    }
    # A fixture's work counts for the test that requested it; its caller is named.
    helper_test = tests["tests/test_a.py::test_helper"]
    assert helper_test["edges"] == {
        ("tests/conftest.py::ten", "pkg/util.py::helper"),
        ("tests/test_a.py::test_helper", "pkg/util.py::helper"),
    }
    # Decorated test methods are named through their decorator line.
    neg = tests["tests/test_a.py::TestCalc::test_neg[2]"]
    assert neg["edges"] == {("tests/test_a.py::TestCalc.test_neg", "pkg/util.py::Calc.neg")}
    # A comprehension's frame counts as the function it is written in.
    total = tests["tests/test_a.py::TestCalc::test_total"]
    assert ("pkg/util.py::Calc.total", "pkg/util.py::helper") in total["edges"]
    # Code run by a lazy import belongs to <import>; the call after it to the test.
    lazy = tests["tests/test_b.py::test_lazy"]
    assert lazy["hits"] == {"pkg/util.py::lazy", "pkg/late.py::late_fn"}
    assert ("pkg/util.py::lazy", "pkg/late.py::late_fn") in lazy["edges"]
    assert tests["tests/test_b.py::test_crash"]["hits"] == set()


def test_import_pseudo_test(traced):
    _, _, traces, _ = traced
    imp = merge(traces)[IMPORT]
    assert {
        "pkg/registry.py::register",
        "pkg/registry.py::register.deco",
        "pkg/util.py::helper",
        "pkg/late.py::_compute",
    } <= imp["hits"]
    assert ("<module>pkg/plugins.py", "pkg/registry.py::register") in imp["edges"]
    assert ("<module>pkg/plugins.py", "pkg/registry.py::register.deco") in imp["edges"]
    assert ("<module>pkg/plugins.py", "pkg/util.py::helper") in imp["edges"]
    assert ("<module>pkg/late.py", "pkg/late.py::_compute") in imp["edges"]
    # The fixture module's import-time work is not a test's.
    assert "pkg/late.py::_compute" not in merge(traces)["tests/test_b.py::test_lazy"]["hits"]


def test_subprocess_merged_under_its_test(traced):
    _, _, traces, _ = traced
    sub = [(f, r) for f, r in traces if r and r[0].get("role") == "subprocess"]
    assert len(sub) == 1, [f for f, _ in traces]
    fname, records = sub[0]
    assert records[0]["parent_test"] == "tests/test_b.py::test_subprocess"
    assert records[-1]["kind"] == "end"
    t = merge(traces)["tests/test_b.py::test_subprocess"]
    assert {"pkg/cli.py::main", "pkg/plugins.py::double", "pkg/util.py::helper"} <= t["hits"]
    assert ("<module>pkg/cli.py", "pkg/cli.py::main") in t["edges"]
    assert ("pkg/cli.py::main", "pkg/plugins.py::double") in t["edges"]


def test_no_probed_bytecode_next_to_sources(traced):
    _, root, _, _ = traced
    assert not os.path.exists(os.path.join(root, "pkg", "__pycache__")), os.listdir(
        os.path.join(root, "pkg", "__pycache__")
    )


def test_crash_keeps_finished_tests(backend, repo, tmp_path):
    name, shim_dir = backend
    root, probe_map = repo
    trace_dir = str(tmp_path / "trace")
    proc = run_traced(
        shim_dir, root, probe_map, trace_dir, fallback=(name == "fallback"), extra_env={"CRASH_HERE": "1"}
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    _, records = main_file(read_traces(trace_dir))
    kinds = [r["kind"] for r in records]
    assert "end" not in kinds
    tests = [r["test"] for r in records if r["kind"] == "test"]
    assert "tests/test_b.py::test_lazy" in tests
    assert "tests/test_b.py::test_crash" not in tests
    assert merge(read_traces(trace_dir))["tests/test_a.py::test_add"]["hits"] == {
        "pkg/util.py::Calc.add",
        "pkg/util.py::helper",
    }


def test_exact_mode_and_chained_sitecustomize(backend, repo, tmp_path):
    name, shim_dir = backend
    root, probe_map = repo
    user_site = tmp_path / "usersite"
    user_site.mkdir()
    marker = tmp_path / "marker"
    (user_site / "sitecustomize.py").write_text(
        "import os\nopen(os.environ['MARKER'], 'a').write('ran\\n')\n"
    )
    trace_dir = str(tmp_path / "trace")
    proc = run_traced(
        shim_dir,
        root,
        probe_map,
        trace_dir,
        mode="exact",
        fallback=(name == "fallback"),
        extra_env={"MARKER": str(marker)},
        pythonpath_extra=[str(user_site)],
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The user's sitecustomize ran in the pytest process and in the subprocess.
    assert marker.read_text() == "ran\nran\n"
    traces = read_traces(trace_dir)
    assert main_file(traces)[1][0]["mode"] == "exact"
    assert merge(traces)["tests/test_a.py::test_add"]["hits"] == {"pkg/util.py::Calc.add", "pkg/util.py::helper"}


def test_inactive_without_environment(shim_dirs, repo, tmp_path):
    shim_dir = shim_dirs["native"] or shim_dirs["fallback"]
    root, _ = repo
    proc = run_traced(shim_dir, root, "", str(tmp_path / "trace"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not os.path.exists(tmp_path / "trace")
    # A plain run writes bytecode as usual.
    assert os.path.isdir(os.path.join(root, "pkg", "__pycache__"))


def test_forked_child_writes_its_own_file(backend, tmp_path):
    """A test that forks, and whose child runs the atexit handlers, must not write into
    the parent's trace file."""
    name, shim_dir = backend
    from conftest import make_repo, FILES

    root = str(tmp_path / "repo")
    extra = {
        "tests/test_fork.py": (
            "import atexit, os\n"
            "from pkg.util import helper\n\n\n"
            "def test_fork():\n"
            "    pid = os.fork()\n"
            "    if pid == 0:\n"
            "        helper(5)\n"
            "        atexit._run_exitfuncs()\n"
            "        os._exit(0)\n"
            "    assert os.waitpid(pid, 0)[1] == 0\n\n\n"
            "def test_after():\n"
            "    assert helper(1) == 2\n"
        )
    }
    FILES_BACKUP = dict(FILES)
    try:
        FILES.clear()
        FILES.update({k: v for k, v in FILES_BACKUP.items() if not k.startswith("tests/test_")})
        FILES.update(extra)
        probe_map = make_repo(root)
    finally:
        FILES.clear()
        FILES.update(FILES_BACKUP)
    trace_dir = str(tmp_path / "trace")
    proc = run_traced(shim_dir, root, probe_map, trace_dir, fallback=(name == "fallback"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    traces = read_traces(trace_dir)
    fname, records = main_file(traces)
    assert [r["kind"] for r in records].count("end") == 1 and records[-1]["kind"] == "end"
    assert records[-1]["tests"] == 2
    children = [r for f, r in traces if f != fname]
    assert len(children) == 1 and children[0][0]["role"] == "subprocess"
    assert children[0][0]["parent_test"] == "tests/test_fork.py::test_fork"
    assert "pkg/util.py::helper" in merge(traces)["tests/test_fork.py::test_fork"]["hits"]


def test_private_code_cache(backend, repo, tmp_path):
    """With CARVE_SHIM_CACHE, probed code is cached there (and only there) and reused."""
    name, shim_dir = backend
    root, probe_map = repo
    cache = tmp_path / "cache"
    results = []
    for run in range(2):
        trace_dir = str(tmp_path / ("trace%d" % run))
        proc = run_traced(
            shim_dir, root, probe_map, trace_dir, fallback=(name == "fallback"),
            extra_env={"CARVE_SHIM_CACHE": str(cache)},
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        results.append(merge(read_traces(trace_dir)))
        if run == 0:
            cached = sorted(os.listdir(cache))
            assert len(cached) == 6, cached  # the six probed modules of the pytest process
            stamps = {f: os.path.getmtime(cache / f) for f in cached}
    assert results[0] == results[1]
    assert {f: os.path.getmtime(cache / f) for f in stamps} == stamps
    assert not os.path.exists(os.path.join(root, "pkg", "__pycache__"))
