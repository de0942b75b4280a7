"""Pure-Python recorder with the API of the native ``carve_shim._native``.

Used when the extension cannot be imported (another platform, a Python the wheel does not
support) or when ``CARVE_SHIM_FORCE_FALLBACK=1``. Same semantics as ``src/lib.rs`` —
keep the two in step — only slower (each probe is a Python call).
"""

import sys
import threading

IMPORT = "<import>"

_tls = threading.local()
#: imports in progress over all threads: lets `hit` skip the thread-local lookup
_importing = 0
_state = None


class _Bucket:
    __slots__ = ("name", "counts", "new_hits", "edges", "new_edges", "saturated")

    def __init__(self, name, n_nodes):
        self.name = name
        self.counts = bytearray(n_nodes)
        self.new_hits = []
        self.edges = set()
        self.new_edges = []
        self.saturated = []

    def all(self):
        hits = [i for i, c in enumerate(self.counts) if c]
        return hits, sorted(self.edges)

    def drain(self):
        hits, self.new_hits = sorted(self.new_hits), []
        edges, self.new_edges = sorted(self.new_edges), []
        return hits, edges


class _State:
    def __init__(self, n_nodes, exact, first_hits, resolver, external, seen):
        #: the probes' guard (see ``Recorder::seen`` in src/lib.rs)
        self.seen = seen
        self.n_nodes = n_nodes
        self.exact = exact
        self.first_hits = first_hits
        self.resolver = resolver
        self.external = external
        self.import_bucket = _Bucket(IMPORT, n_nodes)
        self.by_name = {}
        self.active = self.import_bucket
        self.code_ids = {}  # id(code) -> caller id
        self.code_refs = []  # keeps ids unique


def configure(n_nodes, mode="first-hits", first_hits=4, resolver=None, external=None, seen=None):
    global _state, _importing
    if mode not in ("first-hits", "exact"):
        raise ValueError("unknown trace mode `%s` (use `first-hits` or `exact`)" % mode)
    if external is None:
        external = n_nodes
    if resolver is None:
        resolver = lambda code: external  # noqa: E731
    if seen is None:
        seen = [False] * n_nodes
    elif len(seen) != n_nodes or any(seen):
        raise ValueError("configure: `seen` must be a list of n_nodes False values")
    _state = _State(n_nodes, mode == "exact", max(1, int(first_hits)), resolver, external, seen)
    _importing = 0
    _tls.depth = 0


def _require():
    if _state is None:
        raise ValueError(
            "carve_shim.fallback: call configure(n_nodes, mode, first_hits, resolver, external) first"
        )
    return _state


def hit(n, _getframe=sys._getframe):
    st = _state
    if st is None or n < 0 or n >= st.n_nodes:
        return
    b = st.active
    if _importing and getattr(_tls, "depth", 0) > 0:
        b = st.import_bucket
    c = b.counts[n]
    if c >= st.first_hits and not st.exact:
        return
    if c == 0:
        b.new_hits.append(n)
    if c < 255:
        b.counts[n] = c + 1
    if c + 1 == st.first_hits and not st.exact:
        b.saturated.append(n)
        if b is st.active and not _importing:
            st.seen[n] = True
    try:
        frame = _getframe(1)
    except ValueError:
        return
    if c == 0:
        code = frame.f_code
        if id(code) not in st.code_ids:
            st.code_ids[id(code)] = n
            st.code_refs.append(code)
    back = frame.f_back
    if back is None:
        caller = st.external
    else:
        code = back.f_code
        caller = st.code_ids.get(id(code))
        if caller is None:
            try:
                caller = int(st.resolver(code))
            except Exception:
                caller = st.external
            st.code_ids[id(code)] = caller
            st.code_refs.append(code)
    edge = (caller, n)
    if edge not in b.edges:
        b.edges.add(edge)
        b.new_edges.append(edge)


def _paint(st, b, on):
    seen = st.seen
    for n in b.saturated:
        seen[n] = on


def _activate(st, b):
    if b is not st.active and not _importing:
        _paint(st, st.active, False)
        _paint(st, b, True)
    st.active = b


def set_test(name):
    st = _require()
    if name == IMPORT:
        _activate(st, st.import_bucket)
        return
    b = st.by_name.get(name)
    if b is None:
        b = st.by_name[name] = _Bucket(name, st.n_nodes)
    _activate(st, b)


def seen():
    return _require().seen


def current_test():
    return _require().active.name


def enter_import():
    global _importing
    _tls.depth = getattr(_tls, "depth", 0) + 1
    if _importing == 0 and _state is not None:
        _paint(_state, _state.active, False)
    _importing += 1


def exit_import():
    global _importing
    depth = getattr(_tls, "depth", 0)
    if depth > 0:
        _tls.depth = depth - 1
        _importing = max(0, _importing - 1)
        if _importing == 0 and _state is not None:
            _paint(_state, _state.active, True)


def import_depth():
    return getattr(_tls, "depth", 0)


def take_test(name):
    st = _require()
    if name == IMPORT:
        b = st.import_bucket
        if st.active is b and not _importing:
            _paint(st, b, False)
        st.import_bucket = _Bucket(IMPORT, st.n_nodes)
        if st.active is b:
            st.active = st.import_bucket
        return b.all()
    b = st.by_name.get(name)
    if b is None:
        return None
    if st.active is b:
        _activate(st, st.import_bucket)
    del st.by_name[name]
    return b.all()


def drain(name):
    st = _require()
    b = st.import_bucket if name == IMPORT else st.by_name.get(name)
    if b is None:
        return [], []
    return b.drain()


def flush():
    st = _require()
    out = []
    for b in [st.import_bucket] + list(st.by_name.values()):
        hits, edges = b.drain()
        if hits or edges:
            out.append((b.name, hits, edges))
    out.sort(key=lambda r: r[0])
    return out


def stats():
    st = _require()
    return {
        "n_nodes": st.n_nodes,
        "mode": "exact" if st.exact else "first-hits",
        "first_hits": st.first_hits,
        "tests": len(st.by_name),
        "code_objects": len(st.code_ids),
    }
