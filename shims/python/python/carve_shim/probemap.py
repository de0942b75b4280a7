"""The probe map (carve -> shim) and caller naming.

:class:`ProbeMap` loads ``probe-map.json`` (``docs/trace-format.md``), maps file names to
repository-relative paths, and names callers: :meth:`ProbeMap.resolve` turns a code object
into a caller id — a node number, or an extra id for ``<external>`` / ``<module>PATH`` —
which the recorder caches per code object, so it runs once per code object.
"""

import ast
import hashlib
import json
import os

from carve_shim import EXTERNAL, MODULE_PREFIX, TRACE_VERSION


class ProbeMapError(Exception):
    """The probe map cannot be used (missing, unreadable, wrong version)."""


class FileEntry:
    """One file of the probe map: whether to probe it, and its definition lines."""

    __slots__ = ("rel", "probe", "defs")

    def __init__(self, rel, probe, defs):
        self.rel = rel
        self.probe = probe
        #: line (int) -> node number
        self.defs = defs


class ProbeMap:
    def __init__(self, data, path="<probe map>", digest=""):
        if not isinstance(data, dict):
            raise ProbeMapError("%s: expected a JSON object" % path)
        version = data.get("version")
        if version != TRACE_VERSION:
            raise ProbeMapError(
                "%s: probe map version %r, this shim reads version %d; rebuild the shim "
                "or carve so that they match" % (path, version, TRACE_VERSION)
            )
        self.path = path
        self.digest = digest
        root = data.get("root")
        if not isinstance(root, str) or not root:
            raise ProbeMapError("%s: `root` must be an absolute path" % path)
        self.root = os.path.normpath(os.path.abspath(root))
        self.real_root = os.path.realpath(self.root)
        self.nodes = [str(n) for n in data.get("nodes", [])]
        self.index_of = {n: i for i, n in enumerate(self.nodes)}
        self.files = {}
        for rel, entry in (data.get("files") or {}).items():
            defs = {}
            for line, node in (entry.get("defs") or {}).items():
                try:
                    line, node = int(line), int(node)
                except (TypeError, ValueError):
                    continue
                if 0 <= node < len(self.nodes):
                    defs[line] = node
            self.files[rel] = FileEntry(rel, bool(entry.get("probe")), defs)
        #: caller id of code outside the repository
        self.external = len(self.nodes)
        self._extra = [EXTERNAL]
        self._module_ids = {}
        self._rel_cache = {}
        self._spans = {}

    @classmethod
    def load(cls, path):
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError as exc:
            raise ProbeMapError("cannot read probe map %s: %s" % (path, exc)) from None
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise ProbeMapError("probe map %s is not valid JSON: %s" % (path, exc)) from None
        return cls(data, path, hashlib.sha256(raw).hexdigest())

    # -- paths -------------------------------------------------------------------------

    def relpath(self, filename):
        """Repository-relative ``/`` path of ``filename``, or None outside the root."""
        try:
            return self._rel_cache[filename]
        except KeyError:
            pass
        rel = self._relpath(filename)
        self._rel_cache[filename] = rel
        return rel

    def _relpath(self, filename):
        if not filename or filename.startswith("<"):
            return None
        path = filename if os.path.isabs(filename) else os.path.join(os.getcwd(), filename)
        path = os.path.normpath(path)
        for root in (self.root, self.real_root):
            if path.startswith(root + os.sep):
                return path[len(root) + 1 :].replace(os.sep, "/")
        real = os.path.realpath(path)
        if real.startswith(self.real_root + os.sep):
            return real[len(self.real_root) + 1 :].replace(os.sep, "/")
        return None

    def entry_for(self, filename):
        rel = self.relpath(filename)
        return None if rel is None else self.files.get(rel)

    # -- callers -----------------------------------------------------------------------

    def module_id(self, rel):
        try:
            return self._module_ids[rel]
        except KeyError:
            cid = self.external + len(self._extra)
            self._extra.append(MODULE_PREFIX + rel)
            self._module_ids[rel] = cid
            return cid

    def name_of(self, cid):
        """The name of a node number or caller id."""
        if cid < self.external:
            return self.nodes[cid]
        try:
            return self._extra[cid - self.external]
        except IndexError:
            return EXTERNAL

    def resolve(self, code):
        """Caller id of a code object (see ``docs/trace-format.md``, edges)."""
        entry = self.entry_for(code.co_filename)
        if entry is None:
            return self.external
        name = code.co_name
        if name == "<module>":
            return self.module_id(entry.rel)
        if not name.startswith("<"):
            node = entry.defs.get(code.co_firstlineno)
            if node is not None:
                return node
        # Lambdas and comprehensions count as the definition they are written in.
        qualname = getattr(code, "co_qualname", None)  # CPython 3.11+
        if qualname and name.startswith("<"):
            parts = [p for p in qualname.split(".") if p != "<locals>"]
            while parts and parts[-1].startswith("<"):
                parts.pop()
            if parts:
                node = self.index_of.get(entry.rel + "::" + ".".join(parts))
                if node is not None:
                    return node
        node = self.enclosing(entry, code.co_firstlineno)
        if node is not None:
            return node
        return self.module_id(entry.rel)

    def enclosing(self, entry, line):
        """The innermost mapped definition of ``entry`` whose lines contain ``line``."""
        spans = self._spans.get(entry.rel)
        if spans is None:
            spans = self._spans[entry.rel] = self._def_spans(entry)
        best = None
        for start, end, node in spans:
            if start <= line <= end and (best is None or start >= best[0]):
                best = (start, node)
        return None if best is None else best[1]

    def _def_spans(self, entry):
        path = os.path.join(self.root, *entry.rel.split("/"))
        try:
            with open(path, "rb") as f:
                tree = ast.parse(f.read(), path)
        except (OSError, SyntaxError, ValueError):
            return []
        spans = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                n = entry.defs.get(node.lineno, entry.defs.get(start))
                if n is not None:
                    spans.append((start, getattr(node, "end_lineno", None) or node.lineno, n))
        return spans
