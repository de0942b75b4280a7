"""Tracing for every Python process started under a traced run (``sitecustomize``).

carve installs a top-level ``sitecustomize.py`` next to this package in its private
directory; Python imports it at start-up in the pytest process and in every subprocess
that inherits ``PYTHONPATH``. It calls :func:`start`, which — when ``CARVE_PROBE_MAP`` and
``CARVE_TRACE_DIR`` are set — starts a session (see :mod:`carve_shim.runtime`) recording
under ``CARVE_CURRENT_TEST`` (module bodies still go to ``<import>``) and writing
``<pid>-<n>.jsonl`` at exit, and then :func:`chain`, which runs the ``sitecustomize`` that
ours shadows, if any. Nothing here may print or raise: a traced program must behave as an
untraced one (set ``CARVE_SHIM_DEBUG=1`` to see failures on stderr).
"""

import importlib.machinery
import importlib.util
import os
import sys


def _debug(msg):
    if os.environ.get("CARVE_SHIM_DEBUG"):
        sys.stderr.write("carve_shim: %s\n" % msg)


def start():
    try:
        from carve_shim import runtime

        inherited = os.environ.get("CARVE_CURRENT_TEST")
        runtime.start(role="subprocess" if inherited and inherited != "<import>" else "process")
    except Exception as exc:  # tracing must never break the traced program
        _debug("tracing not started: %s: %s" % (type(exc).__name__, exc))


def chain(our_dir):
    """Imports the next ``sitecustomize`` on ``sys.path`` after ``our_dir``."""
    ours = os.path.realpath(our_dir)
    rest = [p for p in sys.path if os.path.realpath(p or os.curdir) != ours]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    # The import system re-reads sys.modules["sitecustomize"] when ours finishes, so the
    # user's module is the one that stays registered.
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)
