"""Makes a test run import the package under test from the tree it runs in.

carve runs every test run (baseline, trace, masked, restored) in a copy of the repository.
A package installed for development resolves to the user's own tree, not to that copy:
an editable install adds the user's ``src/`` to ``sys.path`` with a ``.pth`` file
(setuptools' lenient mode, flit, hatchling, ``setup.py develop``) or maps the package
name to it with a meta path finder (setuptools' ``__editable___*_finder``); a regular
install puts a copy into site-packages. Either way the masked state would be tested
against the original code and the trace would record nothing of the copy.

:class:`RedirectFinder` sits on ``sys.meta_path`` ahead of the others. For a top-level
module it asks the other finders where it would come from; when that is outside the run's
root (``CARVE_RUN_ROOT``) and the root holds the same module at the same place relative
to the project it came from, the spec is rebuilt on the root's file (a plain
``SourceFileLoader``, so the tracing shim probes it). "The same project": the first
ancestor of the module's location that holds a project file (``pyproject.toml``,
``setup.py``, ``setup.cfg``) holds a byte-identical copy of it at the root, or one that
names the same distribution (``[project] name``, ``[tool.poetry] name``, ``[metadata]
name`` or ``setup(name=...)``, compared normalized): another checkout of the project —
a worktree, an older commit — whose virtualenv has the first one installed. A module from
site-packages (a non-editable install) is mapped back when the root has it at
``<name>`` or ``src/<name>``. Submodules then resolve through the package's
``__path__``, which points into the root. Namespace packages (no ``__init__.py``) get a
``__path__`` with the root's directory first.

What was redirected is recorded in ``REDIRECTED`` (name -> (from, to)); the report
plugin writes it into the run's report.
"""

import importlib.machinery
import importlib.util
import os
import re
import sys

PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")

#: top-level module name -> (where it would have loaded from, where it loads from)
REDIRECTED = {}


def _inside(path, root):
    try:
        return os.path.commonpath([os.path.realpath(path), root]) == root
    except ValueError:
        return False


def _same_bytes(a, b):
    try:
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return fa.read() == fb.read()
    except OSError:
        return False


def _location(spec):
    """The module's file, or its package directory (``None`` when it has neither)."""
    if spec.origin and spec.has_location and os.path.isfile(spec.origin):
        if spec.submodule_search_locations is not None:
            return os.path.dirname(spec.origin)
        return spec.origin
    locations = list(spec.submodule_search_locations or [])
    return locations[0] if locations else None


def _project_relative(location):
    """``(project dir, location relative to it)`` for the nearest ancestor that holds a
    project file, else ``None``."""
    here = os.path.dirname(os.path.realpath(location))
    while True:
        if any(os.path.isfile(os.path.join(here, f)) for f in PROJECT_FILES):
            return here, os.path.relpath(os.path.realpath(location), here)
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _is_site_packages(location):
    parts = os.path.realpath(location).split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts


_NAME_LINE = re.compile(r"""^\s*name\s*=\s*["']([^"']+)["']""")
_SETUP_NAME = re.compile(r"""\bname\s*=\s*["']([^"']+)["']""")


def _normalized(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def project_name(project):
    """The distribution name a project directory declares, normalized, or ``None``."""
    for fname, sections in (("pyproject.toml", ("[project]", "[tool.poetry]")), ("setup.cfg", ("[metadata]",))):
        try:
            with open(os.path.join(project, fname), encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        section = None
        for line in lines:
            if line.strip().startswith("["):
                section = line.strip()
            elif section in sections:
                m = _NAME_LINE.match(line)
                if m:
                    return _normalized(m.group(1))
    try:
        with open(os.path.join(project, "setup.py"), encoding="utf-8") as f:
            m = _SETUP_NAME.search(f.read())
        if m:
            return _normalized(m.group(1))
    except (OSError, UnicodeDecodeError):
        pass
    return None


def _same_project(project, root):
    if any(
        os.path.isfile(os.path.join(project, f)) and _same_bytes(os.path.join(project, f), os.path.join(root, f))
        for f in PROJECT_FILES
    ):
        return True
    name = project_name(project)
    return name is not None and name == project_name(root)


def local_counterpart(location, root):
    """Where ``location`` (a module file or package directory outside ``root``) lives in
    ``root``, or ``None``."""
    found = _project_relative(location)
    if found is not None and not _is_site_packages(location):
        project, rel = found
        target = os.path.join(root, rel)
        if _same_project(project, root) and os.path.exists(target):
            return target
        return None
    if _is_site_packages(location):
        name = os.path.basename(location)
        for base in ("", "src"):
            target = os.path.join(root, base, name)
            if os.path.isdir(location) == os.path.isdir(target) and os.path.exists(target):
                return target
    return None


class RedirectFinder:
    """Meta path finder that loads top-level modules from the run's root (see the module doc)."""

    def __init__(self, root):
        self.root = os.path.realpath(root)

    def find_spec(self, fullname, path=None, target=None):
        if path is not None or "." in fullname:
            return None
        spec = None
        for finder in list(sys.meta_path):
            if isinstance(finder, RedirectFinder) or type(finder).__name__ == "ProbeFinder":
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            try:
                spec = find(fullname, path, target)
            except Exception:  # another finder's failure is not ours to report
                continue
            if spec is not None:
                break
        if spec is None:
            return None
        location = _location(spec)
        if location is None or _inside(location, self.root):
            return None
        local = local_counterpart(location, self.root)
        if local is None:
            return None
        if os.path.isdir(local):
            init = os.path.join(local, "__init__.py")
            if os.path.isfile(init):
                new = importlib.util.spec_from_file_location(fullname, init, submodule_search_locations=[local])
            else:
                new = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
                new.submodule_search_locations = [local] + [
                    p for p in (spec.submodule_search_locations or []) if not _inside(p, self.root)
                ]
        elif local.endswith(".py"):
            new = importlib.util.spec_from_file_location(fullname, local)
        else:
            return None
        REDIRECTED[fullname] = (location, local)
        return new

    def invalidate_caches(self):
        pass


def install(root=None):
    """Puts a :class:`RedirectFinder` for ``root`` (default ``CARVE_RUN_ROOT``) on
    ``sys.meta_path`` ahead of every finder but the tracing shim's, once."""
    root = root or os.environ.get("CARVE_RUN_ROOT")
    if not root:
        return None
    for finder in sys.meta_path:
        if isinstance(finder, RedirectFinder):
            return finder
    finder = RedirectFinder(root)
    # After the tracing shim's ProbeFinder, which asks every finder behind it in turn.
    at = 0
    while at < len(sys.meta_path) and type(sys.meta_path[at]).__name__ == "ProbeFinder":
        at += 1
    sys.meta_path.insert(at, finder)
    return finder
