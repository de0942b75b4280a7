"""pyprofile_tracer: a pure-Python ``sys.setprofile`` tracer, packaged as a pytest plugin.

This is the comparison point for carve's Python shim (and the kind of tracer FeatureBench
uses): it records the same data the shim does -- per pytest test id, the repository
functions that ran and the caller -> callee edges between them, plus an ``<import>``
pseudo-test for code that runs while modules load or before the first test -- but it does
so with a profile hook that Python calls on *every* call and return of the process.

Use::

    PYPROFILE_TRACE_OUT=/tmp/trace.json PYTHONPATH=/path/to/bench \\
        python -m pytest -p pyprofile_tracer -q

Environment:

- ``PYPROFILE_TRACE_OUT`` (required to trace): the JSON file written at session end.
- ``PYPROFILE_TRACE_ROOT``: the repository root (default: the working directory). Only
  code in files under it counts; ``site-packages`` and virtualenvs under it do not.
- ``CARVE_PROBE_MAP`` (optional): a carve probe map (docs/trace-format.md); when given,
  node ids and the test/non-test split come from it instead of this file's own ``ast`` scan.
- ``PYPROFILE_SUBPROCESSES=0`` turns off tracing of child Python processes (on by default:
  children started by a test get ``pyprofile_site/`` on ``PYTHONPATH``, whose
  ``sitecustomize`` traces them under the parent's current test; the parent merges their
  files, union, at session end).

Output (``version`` 1; with ``PYPROFILE_TRACE_FORMAT=carve-jsonl`` the file is instead one
carve trace file, JSON lines as in docs/trace-format.md, ``mode`` ``exact``)::

    {"version": 1, "tracer": "pyprofile", "python": "3.11.7", "root": "/abs/root",
     "partial_children": 0,
     "tests": {"<import>": {"hits": [...], "edges": [[caller, callee], ...]},
               "tests/test_x.py::test_y": {...}}}

Node ids are ``relative/path.py::Qual.Name`` (``@L<line>`` appended when a qualified name
is defined twice in a file), as carve's definition index writes them. ``hits`` hold
non-test nodes only; a caller is a node id (test code included), ``<module>PATH`` for
module-level code of a repository file, or ``<external>``.
"""

import ast
import atexit
import glob
import json
import os
import sys
import threading

ENV_OUT = "PYPROFILE_TRACE_OUT"
ENV_ROOT = "PYPROFILE_TRACE_ROOT"
# Also accepted, as spelled by bench/overhead.py: PYPROFILE_TRACER_OUT, PYPROFILE_TRACER_ROOT.
for _name in ("OUT", "ROOT"):
    if os.environ.get(f"PYPROFILE_TRACER_{_name}") and not os.environ.get(f"PYPROFILE_TRACE_{_name}"):
        os.environ[f"PYPROFILE_TRACE_{_name}"] = os.environ[f"PYPROFILE_TRACER_{_name}"]
ENV_TEST = "PYPROFILE_CURRENT_TEST"
ENV_CHILD = "PYPROFILE_CHILD_OUT"
ENV_SUBPROCESSES = "PYPROFILE_SUBPROCESSES"
ENV_PROBE_MAP = "CARVE_PROBE_MAP"
ENV_FORMAT = "PYPROFILE_TRACE_FORMAT"
IMPORT = "<import>"
EXTERNAL = "<external>"
SITE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyprofile_site")

# What a code object is, for the tracer: OTHER (outside the repository), NODE (a repository
# function: a hit, and a callee), CALLER_ONLY (test code or a class body: names a caller,
# is never a hit), MODULE (module-level code), INNER (a comprehension or lambda: its caller
# is the enclosing node).
OTHER, NODE, CALLER_ONLY, MODULE, INNER = range(5)
CO_OPTIMIZED = 0x0001  # set on function code, not on module or class bodies


def is_test_path(rel):
    base = rel.rsplit("/", 1)[-1]
    return base == "conftest.py" or base.startswith("test_") or base.endswith("_test.py")


def scan_definitions(source):
    """``{line: qualname-with-suffix}`` for every def/class: the keyword's line and, when
    decorated, the first decorator's line (what ``co_firstlineno`` reports)."""
    tree = ast.parse(source)
    found = []  # (qualname, def line, first line)

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = prefix + node.name
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                found.append((qual, node.lineno, first))
                visit(node.body, qual + ".")
            else:
                for field in ("body", "orelse", "finalbody", "handlers"):
                    inner = getattr(node, field, None)
                    if isinstance(inner, list):
                        visit(inner, prefix)

    visit(tree.body, "")
    counts = {}
    for qual, _, _ in found:
        counts[qual] = counts.get(qual, 0) + 1
    lines = {}
    for qual, def_line, first in found:
        name = f"{qual}@L{def_line}" if counts[qual] > 1 else qual
        lines[def_line] = name
        lines[first] = name
    return lines


class NodeMap:
    """Maps code objects to what they are: a repository node, test code, module code …"""

    def __init__(self, root, probe_map=None):
        self.root = os.path.realpath(root) + os.sep
        self.probe = None
        if probe_map:
            with open(probe_map, encoding="utf-8") as f:
                self.probe = json.load(f)
        self.files = {}

    def rel(self, filename):
        path = os.path.realpath(filename)
        if not path.startswith(self.root):
            return None
        rel = path[len(self.root):].replace(os.sep, "/")
        if "/site-packages/" in "/" + rel or rel.startswith((".venv/", "venv/", ".tox/")):
            return None
        return rel

    def file_info(self, filename):
        info = self.files.get(filename)
        if info is None:
            info = self.files[filename] = self._load(filename)
        return info

    def _load(self, filename):
        rel = self.rel(filename) if filename and not filename.startswith("<") else None
        if rel is None or rel.endswith("pyprofile_tracer.py") or not rel.endswith(".py"):
            return None
        if self.probe is not None:
            entry = self.probe.get("files", {}).get(rel)
            if entry is None:
                return None
            nodes = self.probe["nodes"]
            lines = {int(line): nodes[number] for line, number in entry.get("defs", {}).items()}
            return rel, not entry.get("probe", True), lines
        try:
            with open(filename, "rb") as f:
                lines = scan_definitions(f.read())
        except (OSError, SyntaxError, ValueError):
            return None
        return rel, is_test_path(rel), {line: f"{rel}::{qual}" for line, qual in lines.items()}

    def classify(self, code):
        info = self.file_info(code.co_filename)
        if info is None:
            return (OTHER, None)
        rel, is_test, lines = info
        if code.co_name == "<module>":
            return (MODULE, "<module>" + rel)
        node = lines.get(code.co_firstlineno)
        if node is None:
            return (INNER, None)  # comprehension, lambda: its caller is the enclosing node
        if is_test or not code.co_flags & CO_OPTIMIZED:
            return (CALLER_ONLY, node)
        return (NODE, node)


class Recorder:
    def __init__(self, nodes):
        self.nodes = nodes
        self.kinds = {}
        self.tests = {}
        self.current = None
        self.import_frames = []
        self.hits = self.edges = None
        self.select(None)

    def select(self, test):
        self.current = test
        entry = self.tests.setdefault(test or IMPORT, (set(), set()))
        self.hits, self.edges = entry

    def profile(self, frame, event, arg):
        if event != "call":
            if event == "return" and self.import_frames and frame is self.import_frames[-1]:
                self.import_frames.pop()
            return
        code = frame.f_code
        # Keyed by id(): code objects compare by value and the value leaves out the file, so
        # two identical functions on the same line of two files would share an entry. The
        # entry holds the code object, so its id cannot be reused while cached.
        kind = self.kinds.get(id(code))
        if kind is None:
            kind = self.kinds[id(code)] = self.nodes.classify(code) + (code,)
        if kind[0] == OTHER or kind[0] == INNER:
            if code.co_name == "<module>" and frame.f_globals.get("__name__") != "__main__":
                self.import_frames.append(frame)
            return
        if kind[0] == MODULE:
            if frame.f_globals.get("__name__") != "__main__":
                self.import_frames.append(frame)
            return
        if kind[0] == CALLER_ONLY:
            return
        node = kind[1]
        if self.import_frames:
            hits, edges = self.tests.setdefault(IMPORT, (set(), set()))
        else:
            hits, edges = self.hits, self.edges
        hits.add(node)
        caller = frame.f_back
        while caller is not None:
            ccode = caller.f_code
            ckind = self.kinds.get(id(ccode))
            if ckind is None:
                ckind = self.kinds[id(ccode)] = self.nodes.classify(ccode) + (ccode,)
            if ckind[0] == INNER:
                caller = caller.f_back
                continue
            edges.add((ckind[1] if ckind[0] != OTHER else EXTERNAL, node))
            return
        edges.add((EXTERNAL, node))

    def start(self):
        threading.setprofile(self.profile)
        sys.setprofile(self.profile)

    def stop(self):
        sys.setprofile(None)
        threading.setprofile(None)

    def as_json(self):
        return {
            test: {"hits": sorted(hits), "edges": sorted([list(e) for e in edges])}
            for test, (hits, edges) in sorted(self.tests.items())
            if hits or edges
        }


def merge_into(tests, more):
    for test, data in more.items():
        entry = tests.setdefault(test, {"hits": [], "edges": []})
        entry["hits"] = sorted(set(entry["hits"]) | set(data["hits"]))
        edges = {tuple(e) for e in entry["edges"]} | {tuple(e) for e in data["edges"]}
        entry["edges"] = sorted([list(e) for e in edges])


_recorder = None
_out = None


def _root():
    return os.environ.get(ENV_ROOT) or os.getcwd()


def _start(out):
    global _recorder, _out
    _out = out
    _recorder = Recorder(NodeMap(_root(), os.environ.get(ENV_PROBE_MAP)))
    _recorder.start()


def start_child():
    """Called from ``pyprofile_site/sitecustomize.py`` in a child process of a traced test."""
    out = os.environ.get(ENV_CHILD)
    if not out or _recorder is not None:
        return
    _start(f"{out}.child-{os.getpid()}.json")
    _recorder.select(os.environ.get(ENV_TEST))
    atexit.register(_write_child)


def _write_child():
    _recorder.stop()
    _write(_out, {"tests": _recorder.as_json()})


def _write(path, data):
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


# --- pytest plugin -------------------------------------------------------------------

_parent = bool(os.environ.get(ENV_OUT)) and not os.environ.get(ENV_CHILD)
if _parent:
    # Start as soon as pytest imports the plugin (`-p pyprofile_tracer`), before conftest
    # files and test modules load, so their import-time calls are seen.
    _start(os.path.abspath(os.environ[ENV_OUT]))
    if os.environ.get(ENV_SUBPROCESSES, "1") != "0":
        os.environ[ENV_CHILD] = _out
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in [SITE_DIR, os.path.dirname(SITE_DIR), os.environ.get("PYTHONPATH")] if p
        )
    os.environ.setdefault(ENV_ROOT, _root())


def pytest_runtest_protocol(item, nextitem):
    if _recorder is not None:
        _recorder.select(item.nodeid)
        os.environ[ENV_TEST] = item.nodeid


def pytest_runtest_logfinish(nodeid, location):
    if _recorder is not None:
        _recorder.select(None)
        os.environ.pop(ENV_TEST, None)


def pytest_unconfigure(config):
    if _recorder is None or not _parent:
        return
    _recorder.stop()
    tests = _recorder.as_json()
    children = sorted(glob.glob(glob.escape(_out) + ".child-*.json"))
    partial = 0
    for child in children:
        try:
            with open(child, encoding="utf-8") as f:
                merge_into(tests, json.load(f)["tests"])
        except (OSError, ValueError, KeyError):
            partial += 1
        finally:
            try:
                os.remove(child)
            except OSError:
                pass
    if os.environ.get(ENV_FORMAT) == "carve-jsonl":
        _write_jsonl(_out, tests)
        return
    data = {
        "version": 1,
        "tracer": "pyprofile",
        "python": ".".join(map(str, sys.version_info[:3])),
        "root": os.path.realpath(_root()),
        "partial_children": partial,
        "tests": dict(sorted(tests.items())),
    }
    _write(_out, data)


def _write_jsonl(path, tests):
    """The same data as carve's trace format, version 1 (docs/trace-format.md), one file."""
    records = [{"kind": "header", "version": 1, "pid": os.getpid(), "python": ".".join(map(str, sys.version_info[:3])),
                "native": False, "mode": "exact", "argv": sys.argv}]
    records += [{"kind": "test", "test": test, "hits": data["hits"], "edges": data["edges"]}
                for test, data in sorted(tests.items())]
    records.append({"kind": "end", "tests": sum(1 for t in tests if t != IMPORT)})
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, sort_keys=True) + "\n")
    os.replace(tmp, path)
