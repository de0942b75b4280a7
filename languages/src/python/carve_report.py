"""carve's pytest report plugin: one status per test, written as the run goes.

carve writes this file into a private directory, puts that directory on PYTHONPATH and
loads it with ``-p carve_report``. It does nothing unless ``CARVE_REPORT`` names a file.
It appends one JSON object per line to that file and flushes after each line, so a
process that hangs or dies leaves every finished test behind:

    {"event": "header", "version": 1, "pid": 4242, "pytest": "9.2.0"}
    {"event": "collecting", "id": "tests/test_a.py"}
    {"event": "collect_error", "id": "tests/test_b.py", "message": "..."}
    {"event": "collected", "ids": ["tests/test_a.py::test_x", ...]}
    {"event": "start", "id": "tests/test_a.py::test_x"}
    {"event": "result", "id": "tests/test_a.py::test_x", "status": "passed",
     "duration": 0.0012, "message": null}
    {"event": "finished", "exitstatus": 0}

``status`` is one of passed, failed, error, skipped: a failed setup or teardown is an
error, a failed call is a failure, a skip or an xfail is skipped, a strict xpass is a
failure, a non-strict xpass passed. When ``CARVE_SELECT`` names a JSON file holding a
list of node ids (or node-id prefixes: a file, a directory, a class), only the items they
name are kept; the rest are deselected the way ``-k`` deselects.

The format is private to carve (the Rust side embeds this file); bump ``VERSION`` with it.
"""

import json
import os

import carve_redirect
import pytest

# Before anything imports the package under test: load it from this tree, not from where
# an editable install points (see carve_redirect).
carve_redirect.install()

VERSION = 1
_MESSAGE_LIMIT = 300
# Rank of a status when several phases of one test report: the worst wins.
_RANK = {"passed": 0, "skipped": 1, "error": 2, "failed": 3}


class _Report:
    def __init__(self, path):
        self._file = open(path, "a", encoding="utf-8")
        self._states = {}

    def emit(self, **event):
        self._file.write(json.dumps(event, ensure_ascii=False) + "\n")
        self._file.flush()

    def phase(self, report):
        state = self._states.setdefault(
            report.nodeid, {"status": "passed", "duration": 0.0, "message": None}
        )
        state["duration"] += float(getattr(report, "duration", 0.0) or 0.0)
        status = _phase_status(report)
        if status is None:
            return
        if _RANK[status] > _RANK[state["status"]]:
            state["status"] = status
            state["message"] = _message(report)

    def finish(self, nodeid):
        state = self._states.pop(
            nodeid, {"status": "error", "duration": 0.0, "message": "pytest reported no phase of this test"}
        )
        self.emit(event="result", id=nodeid, **state)


def _phase_status(report):
    outcome = report.outcome
    if report.when == "call":
        if outcome == "failed":  # includes XPASS(strict)
            return "failed"
        if outcome == "skipped":  # includes xfail
            return "skipped"
        if outcome == "passed":  # includes a non-strict xpass
            return "passed"
        return None  # e.g. "rerun" from pytest-rerunfailures
    if outcome == "failed":
        return "error"
    if outcome == "skipped":
        return "skipped"
    return None


def _first_line(text):
    for line in str(text).splitlines():
        line = line.strip()
        if line:
            return line[:_MESSAGE_LIMIT]
    return None


def _message(report):
    if hasattr(report, "wasxfail") and report.outcome == "skipped":
        reason = _first_line(report.wasxfail)
        return "xfail: " + reason if reason else "xfail"
    longrepr = report.longrepr
    if longrepr is None:
        return None
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (path, line, reason)
        return _first_line(longrepr[2])
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return _first_line(crash.message)
    return _first_line(longrepr)


def _collect_error_message(report):
    text = str(report.longrepr)
    errors = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    errors = [e for e in errors if e]
    if errors:
        return errors[-1][:_MESSAGE_LIMIT]
    return _first_line(text) or "collection failed"


def _ancestors(nodeid):
    """The node id itself, the test a parametrized case belongs to, every `::` prefix of it
    and every directory of its path."""
    out = [nodeid]
    base = nodeid
    if nodeid.endswith("]") and "[" in nodeid:
        base = nodeid.split("[", 1)[0]
        out.append(base)
    parts = base.split("::")
    for i in range(len(parts) - 1, 0, -1):
        out.append("::".join(parts[:i]))
    path = parts[0]
    while "/" in path:
        path = path.rsplit("/", 1)[0]
        out.append(path)
    return out


_report = None
_select = None


def pytest_configure(config):
    global _report, _select
    path = os.environ.get("CARVE_REPORT")
    if not path or _report is not None:
        return
    _report = _Report(path)
    _report.emit(event="header", version=VERSION, pid=os.getpid(), pytest=pytest.__version__)
    select = os.environ.get("CARVE_SELECT")
    if select:
        with open(select, encoding="utf-8") as f:
            _select = set(json.load(f))


def pytest_collectstart(collector):
    if _report is not None and collector.nodeid:
        _report.emit(event="collecting", id=collector.nodeid)


def pytest_collectreport(report):
    if _report is not None and report.failed:
        _report.emit(event="collect_error", id=report.nodeid, message=_collect_error_message(report))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    if _report is None or _select is None:
        return
    keep, drop = [], []
    for item in items:
        if any(a in _select for a in _ancestors(item.nodeid)):
            keep.append(item)
        else:
            drop.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_collection_finish(session):
    if _report is not None:
        _seed_hypothesis()
        _report.emit(event="collected", ids=[item.nodeid for item in session.items])


def _seed_hypothesis():
    """Hypothesis draws new examples in every run unless it is seeded, so a property test could
    reach code in one run that the traced run never saw (w3lib's ``test_idempotent`` failed on
    a masked state for that reason). Once the collected tests have imported it, seed it as
    ``--hypothesis-seed=0`` does, unless the user gave a seed; seeded, it also neither replays
    nor saves examples in its database."""
    import sys

    core = sys.modules.get("hypothesis.core")
    if core is not None and getattr(core, "global_force_seed", None) is None:
        core.global_force_seed = 0


def pytest_runtest_logstart(nodeid, location):
    if _report is not None:
        _report.emit(event="start", id=nodeid)


def pytest_runtest_logreport(report):
    if _report is not None:
        _report.phase(report)


def pytest_runtest_logfinish(nodeid, location):
    if _report is not None:
        _report.finish(nodeid)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    if _report is not None:
        _report.emit(event="finished", exitstatus=int(exitstatus))
