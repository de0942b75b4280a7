"""pytest plugin: tells the recorder which test is running.

carve loads it with ``-p carve_shim.plugin`` (the ``pytest11`` entry point does the same
when the wheel is installed). It does nothing unless ``CARVE_PROBE_MAP`` and
``CARVE_TRACE_DIR`` are set. Importing it starts tracing (the import hook goes in before
collection imports the package under test). Each item's setup, call and teardown — and so
the fixtures they trigger — count for that item; after its teardown one ``test`` record is
written, plus what ``<import>`` gained meanwhile. Between items and during collection the
current test is ``<import>``. ``CARVE_CURRENT_TEST`` follows the current test so
subprocesses record under it.

A pytest started *by* a traced test (``CARVE_CURRENT_TEST`` already set) stays passive:
everything it runs is recorded under the parent's test, as in any other subprocess.
"""

import os
import sys

import pytest

from carve_shim import IMPORT, hook, recorder, runtime


def _rootdir(config):
    """pytest's rootdir: ``config.rootpath`` since pytest 6.1, ``config.rootdir`` before (the
    states of a 2017 history run their tests with pytest 3)."""
    root = getattr(config, "rootpath", None) or config.rootdir
    return os.path.normpath(str(root))


_inherited = bool(os.environ.get("CARVE_CURRENT_TEST")) and os.environ.get("CARVE_CURRENT_TEST") != IMPORT
_session = runtime.start(role="subprocess" if _inherited else "pytest")
_driving = _session is not None and not _inherited

if _session is not None:
    hook.move_to_front(_session.finder)

if _driving:
    _session.role = "pytest"
    os.environ["CARVE_CURRENT_TEST"] = IMPORT
    _prefix = ""
    _outcomes = {}

    def pytest_configure(config):
        global _prefix
        recorder.warn_if_fallback(sys.stderr)
        hook.move_to_front(_session.finder)
        # Test ids are relative to the probe map's root, pytest's to its rootdir.
        rootdir = _rootdir(config)
        rel = _session.probe_map.relpath(os.path.join(rootdir, "x"))
        if rel is not None and "/" in rel:
            _prefix = rel.rsplit("/", 1)[0] + "/"

    def _test_id(item):
        return _prefix + item.nodeid

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(session):
        _session.flush_import()

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(item, nextitem):
        name = _test_id(item)
        _outcomes[item.nodeid] = "passed"
        _session.begin_test(name)
        try:
            yield
        finally:
            _session.end_test(name, _outcomes.pop(item.nodeid, None))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(report):
        current = _outcomes.get(report.nodeid)
        if current is None:
            return
        if report.failed:
            outcome = "failed" if report.when == "call" else "error"
            if current not in ("failed", "error"):
                _outcomes[report.nodeid] = outcome
        elif report.skipped and current == "passed":
            _outcomes[report.nodeid] = "skipped"

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(session, exitstatus):
        _session.finish()
