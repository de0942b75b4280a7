"""One traced process: configuration from the environment, the hook, the trace file.

:func:`start` (idempotent) reads ``CARVE_PROBE_MAP``, ``CARVE_TRACE_DIR``,
``CARVE_TRACE_MODE`` (``first-hits`` | ``exact``), ``CARVE_FIRST_HITS`` (captures per
callee per test in first-hits mode, default 4) and ``CARVE_SHIM_CACHE`` (private code
cache, optional); configures the recorder, installs the import hook and registers an
``atexit`` handler that drains everything still recorded and writes the ``end`` record.
The trace file ``<CARVE_TRACE_DIR>/<pid>-<n>.jsonl`` is created on the first record; every
record is flushed as it is written, so a process that dies keeps what it finished.
"""

import atexit
import json
import os
import platform
import sys
import threading

from carve_shim import IMPORT, TRACE_VERSION, hook, recorder
from carve_shim.probemap import ProbeMap

DEFAULT_FIRST_HITS = 4
MODES = ("first-hits", "exact")

_session = None
_start_lock = threading.Lock()


def env_active(environ=None):
    environ = os.environ if environ is None else environ
    return bool(environ.get("CARVE_PROBE_MAP")) and bool(environ.get("CARVE_TRACE_DIR"))


class Session:
    def __init__(self, environ, role):
        self.probe_map = ProbeMap.load(environ["CARVE_PROBE_MAP"])
        self.trace_dir = environ["CARVE_TRACE_DIR"]
        mode = environ.get("CARVE_TRACE_MODE") or "first-hits"
        if mode not in MODES:
            raise ValueError("CARVE_TRACE_MODE=%r: use `first-hits` or `exact`" % mode)
        self.mode = mode
        try:
            self.first_hits = max(1, min(255, int(environ.get("CARVE_FIRST_HITS") or DEFAULT_FIRST_HITS)))
        except ValueError:
            self.first_hits = DEFAULT_FIRST_HITS
        #: "pytest" (the plugin drives tests), "subprocess" (started under a test) or
        #: "process" (anything else)
        self.role = role
        #: test id this process inherited from its parent (subprocesses)
        self.parent_test = environ.get("CARVE_CURRENT_TEST") or None
        pm = self.probe_map
        recorder.configure(len(pm.nodes), mode, self.first_hits, pm.resolve, pm.external)
        self.finder, self.preloaded = hook.install(pm, environ.get("CARVE_SHIM_CACHE"))
        self._lock = threading.Lock()
        self._file = None
        self._tests = set()
        self.ended = False
        if self.parent_test:
            recorder.set_test(self.parent_test)

    # -- writing -----------------------------------------------------------------------

    def _open(self):
        os.makedirs(self.trace_dir, exist_ok=True)
        n = 0
        while True:
            path = os.path.join(self.trace_dir, "%d-%d.jsonl" % (os.getpid(), n))
            try:
                self._file = open(path, "x", encoding="utf-8")
                break
            except FileExistsError:
                n += 1
        self.path = path
        header = {
            "kind": "header",
            "version": TRACE_VERSION,
            "pid": os.getpid(),
            "python": platform.python_version(),
            "native": recorder.NATIVE,
            "mode": self.mode,
            "first_hits": self.first_hits,
            "role": self.role,
            "argv": list(getattr(sys, "argv", []) or []),
            "root": self.probe_map.root,
            "probe_map_sha256": self.probe_map.digest,
            "unprobed_preloaded": self.preloaded,
        }
        if self.parent_test:
            header["parent_test"] = self.parent_test
        self._emit(header)

    def _emit(self, record):
        self._file.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._file.flush()

    def write(self, record):
        with self._lock:
            if self.ended:
                return
            if self._file is None:
                self._open()
            self._emit(record)

    def write_test(self, name, hits, edges, outcome=None):
        pm = self.probe_map
        record = {
            "kind": "test",
            "test": name,
            "hits": sorted(pm.nodes[n] for n in hits),
            "edges": sorted([pm.name_of(c), pm.nodes[n]] for c, n in edges),
        }
        if outcome:
            record["outcome"] = outcome
        if name != IMPORT:
            self._tests.add(name)
        self.write(record)

    # -- test boundaries (the pytest plugin) -------------------------------------------

    def begin_test(self, name):
        recorder.set_test(name)
        os.environ["CARVE_CURRENT_TEST"] = name

    def end_test(self, name, outcome=None):
        recorder.set_test(IMPORT)
        os.environ["CARVE_CURRENT_TEST"] = IMPORT
        got = recorder.take_test(name)
        hits, edges = got if got is not None else ([], [])
        self.write_test(name, hits, edges, outcome)
        self.flush_import()

    def flush_import(self):
        hits, edges = recorder.drain(IMPORT)
        if hits or edges:
            self.write_test(IMPORT, hits, edges)

    def finish(self):
        """Drains every bucket and writes the ``end`` record (once)."""
        if self.ended:
            return
        for name, hits, edges in recorder.flush():
            self.write_test(name, hits, edges)
        unprobed = dict(sorted(self.finder.unprobed.items()))
        self.write({"kind": "end", "tests": len(self._tests), "unprobed_loaders": unprobed})
        with self._lock:
            self.ended = True
            if self._file is not None:
                self._file.close()

    def _after_fork_in_child(self):
        """A forked child writes its own file (never the parent's) under the current test."""
        self._lock = threading.Lock()
        self._file = None  # the parent's; the child's copy closes when collected
        self._tests = set()
        self.ended = False
        self.role = "subprocess"
        try:
            self.parent_test = recorder.current_test()
        except Exception:
            pass

    def _atexit(self):
        try:
            self.finish()
        except Exception:  # never turn a clean exit into a traceback
            pass


def start(role="process", environ=None):
    """The process's session, started on first call; None when tracing is not asked for."""
    global _session
    environ = os.environ if environ is None else environ
    if _session is not None:
        return _session
    if not env_active(environ):
        return None
    with _start_lock:
        if _session is None:
            session = Session(environ, role)
            atexit.register(session._atexit)
            if hasattr(os, "register_at_fork"):
                os.register_at_fork(after_in_child=session._after_fork_in_child)
            _session = session
    return _session


def session():
    return _session
