"""The import hook that probes the repository's own modules as they load.

:class:`ProbeFinder` sits first on ``sys.meta_path`` and asks the other finders, in order,
for a spec — so whatever resolves the module (``PathFinder``, a ``.pth`` path entry,
setuptools' ``__editable__`` finder, …) still does. When the spec is a plain
``SourceFileLoader`` for a file the probe map marks ``probe: true``, the loader is replaced
by :class:`ProbeLoader`, which compiles :func:`probe_source` of the file under its own
name and line numbers and runs the module body between ``enter_import`` / ``exit_import``
(so its work counts for ``<import>``).

Probed bytecode is never written where a plain run would load it: ``ProbeLoader`` neither
reads nor writes ``__pycache__``. With ``CARVE_SHIM_CACHE`` set it keeps compiled code in
that private directory, keyed by the source, the file's probes, the interpreter's magic
number and this shim's version.
"""

import ast
import hashlib
import importlib.machinery
import importlib.util
import marshal
import os
import sys

from carve_shim import __version__, recorder

#: The names probed modules use. They are bound in ``builtins`` (see :func:`bind_probe_names`),
#: not in the probed module: a module's namespace stays as it is untraced, for code that
#: lists it (``vars(module)``, ``dir(module)``, ``from module import *``).
HIT_NAME = "_carve_hit"
SEEN_NAME = "_carve_seen"
#: Part of the compiled-code cache key: changes when the shape of probed code does.
PROBE_SHAPE = b"probes-v2-builtins"


def bind_probe_names():
    """Makes ``_carve_hit`` / ``_carve_seen`` resolve in every module, through ``builtins``."""
    import builtins

    setattr(builtins, HIT_NAME, recorder.hit)
    setattr(builtins, SEEN_NAME, recorder.seen)


def _is_docstring(stmt):
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _located(node, anchor):
    node.lineno = node.end_lineno = anchor.lineno
    node.col_offset = node.end_col_offset = anchor.col_offset
    return node


def _probe_stmt(n, anchor):
    """``if not _carve_seen[n]: _carve_hit(n)`` at ``anchor``'s position."""
    loc = lambda node: _located(node, anchor)  # noqa: E731
    call = loc(ast.Call(func=loc(ast.Name(id=HIT_NAME, ctx=ast.Load())), args=[loc(ast.Constant(value=n))], keywords=[]))
    guard = loc(
        ast.Subscript(
            value=loc(ast.Name(id=SEEN_NAME, ctx=ast.Load())), slice=loc(ast.Constant(value=n)), ctx=ast.Load()
        )
    )
    test = loc(ast.UnaryOp(op=loc(ast.Not()), operand=guard))
    return loc(ast.If(test=test, body=[loc(ast.Expr(value=call))], orelse=[]))


def probe_tree(tree, defs):
    """Inserts the probe of node N (``if not _carve_seen[N]: _carve_hit(N)``) at the start of every function of ``tree`` (a module)
    whose ``def`` line (or first decorator line) is in ``defs``; returns how many. The names
    resolve through ``builtins`` (:func:`bind_probe_names`)."""
    probed = 0
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        n = defs.get(node.lineno)
        if n is None and node.decorator_list:
            n = defs.get(node.decorator_list[0].lineno)
        if n is None:
            continue
        body = node.body
        at = 1 if body and _is_docstring(body[0]) else 0
        anchor = body[at] if at < len(body) else body[-1]
        body.insert(at, _probe_stmt(n, anchor))
        probed += 1
    return probed


def probe_source(source, filename, defs):
    """Code object of ``source`` with probes (see :func:`probe_tree`)."""
    tree = ast.parse(source, filename=filename)
    probe_tree(tree, defs)
    return compile(tree, filename, "exec", dont_inherit=True)


class ProbeLoader(importlib.machinery.SourceFileLoader):
    """A ``SourceFileLoader`` whose code carries probes and is never cached beside the source."""

    def __init__(self, fullname, path, entry, finder):
        super().__init__(fullname, path)
        self._carve_entry = entry
        self._carve_finder = finder

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        data = self.get_data(path)
        return self._carve_finder.compile_probed(data, path, self._carve_entry)

    def set_data(self, path, data, *, _mode=0o666):
        """Never writes bytecode (probed code must not land in ``__pycache__``)."""

    def exec_module(self, module):
        recorder.enter_import()
        try:
            super().exec_module(module)
        finally:
            recorder.exit_import()

    # FileLoader compares loaders by their __dict__; ours differ by the finder only.
    def __eq__(self, other):
        return type(self) is type(other) and self.name == other.name and self.path == other.path

    def __hash__(self):
        return hash((self.name, self.path))


class ProbeFinder:
    """Meta path finder that hands probe-map files to :class:`ProbeLoader`."""

    def __init__(self, probe_map, cache_dir=None):
        self.probe_map = probe_map
        self.cache_dir = cache_dir or None
        #: repository files that loaded unprobed because their loader was not a plain
        #: SourceFileLoader: rel path -> loader class name
        self.unprobed = {}
        self.probed = set()

    def find_spec(self, fullname, path=None, target=None):
        for finder in list(sys.meta_path):
            if finder is self or isinstance(finder, ProbeFinder):
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                return self._probe_spec(spec)
        return None

    def invalidate_caches(self):
        pass

    def _probe_spec(self, spec):
        origin = spec.origin
        if not origin or not spec.has_location or not origin.endswith(".py"):
            return spec
        entry = self.probe_map.entry_for(origin)
        if entry is None or not entry.probe:
            return spec
        if type(spec.loader) is not importlib.machinery.SourceFileLoader:
            self.unprobed[entry.rel] = type(spec.loader).__name__
            return spec
        spec.loader = ProbeLoader(spec.name, origin, entry, self)
        self.probed.add(entry.rel)
        return spec

    def compile_probed(self, data, path, entry):
        key = None
        if self.cache_dir:
            h = hashlib.sha256()
            for part in (
                importlib.util.MAGIC_NUMBER,
                __version__.encode(),
                PROBE_SHAPE,
                os.fsencode(path),
                repr(sorted(entry.defs.items())).encode(),
                data,
            ):
                h.update(len(part).to_bytes(8, "little"))
                h.update(part)
            key = os.path.join(self.cache_dir, h.hexdigest() + ".code")
            try:
                with open(key, "rb") as f:
                    return marshal.loads(f.read())
            except (OSError, ValueError, EOFError, TypeError):
                pass
        source = importlib.util.decode_source(data)
        code = probe_source(source, path, entry.defs)
        if key is not None:
            try:
                os.makedirs(self.cache_dir, exist_ok=True)
                tmp = "%s.%d.tmp" % (key, os.getpid())
                with open(tmp, "wb") as f:
                    f.write(marshal.dumps(code))
                os.replace(tmp, key)
            except OSError:
                pass
        return code


def install(probe_map, cache_dir=None):
    """Puts a :class:`ProbeFinder` first on ``sys.meta_path`` (once) and returns it with
    the probe-map files whose modules were already imported, unprobed."""
    for finder in sys.meta_path:
        if isinstance(finder, ProbeFinder):
            return finder, []
    bind_probe_names()
    finder = ProbeFinder(probe_map, cache_dir)
    sys.meta_path.insert(0, finder)
    preloaded = set()
    for module in list(sys.modules.values()):
        filename = getattr(module, "__file__", None)
        if not isinstance(filename, str):
            continue
        entry = probe_map.entry_for(filename)
        if entry is not None and entry.probe:
            preloaded.add(entry.rel)
    return finder, sorted(preloaded)


def move_to_front(finder):
    """Makes ``finder`` first again (pytest puts its assertion rewriter at the front)."""
    try:
        if sys.meta_path[0] is not finder:
            sys.meta_path.remove(finder)
            sys.meta_path.insert(0, finder)
    except ValueError:
        sys.meta_path.insert(0, finder)
