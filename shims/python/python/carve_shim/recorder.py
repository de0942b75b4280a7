"""The recorder in use: the native extension, or the pure-Python fallback.

Probed modules bind ``hit`` from here as ``_carve_hit``. ``NATIVE`` says which recorder
loaded; ``FALLBACK_REASON`` why the native one did not (None when it did, or when the
fallback was forced with ``CARVE_SHIM_FORCE_FALLBACK=1``).
"""

import os

NATIVE = False
FALLBACK_REASON = None

if os.environ.get("CARVE_SHIM_FORCE_FALLBACK", "") in ("", "0"):
    try:
        from carve_shim import _native as _impl

        NATIVE = True
    except ImportError as exc:
        FALLBACK_REASON = "%s: %s" % (type(exc).__name__, exc)

if not NATIVE:
    from carve_shim import fallback as _impl  # noqa: F811

hit = _impl.hit

#: The probes' guard, bound in probed modules as ``_carve_seen``: probed code runs
#: ``if not _carve_seen[N]: _carve_hit(N)``, and the recorder sets ``seen[N]`` once the
#: current test needs nothing more from node N (first-hits mode). Same object for the
#: life of the process.
seen = []


def configure(n_nodes, mode="first-hits", first_hits=4, resolver=None, external=None):
    """Starts recording afresh (see ``configure`` in src/lib.rs)."""
    seen[:] = [False] * n_nodes
    _impl.configure(n_nodes, mode, first_hits, resolver, external, seen)


set_test = _impl.set_test
current_test = _impl.current_test
enter_import = _impl.enter_import
exit_import = _impl.exit_import
import_depth = _impl.import_depth
take_test = _impl.take_test
drain = _impl.drain
flush = _impl.flush
stats = _impl.stats


def warn_if_fallback(stream):
    """Says once per process tree (stderr of the pytest process) that probes are slow."""
    if FALLBACK_REASON is None or os.environ.get("CARVE_SHIM_WARNED"):
        return
    os.environ["CARVE_SHIM_WARNED"] = "1"
    stream.write(
        "carve: the native recorder could not be loaded (%s); tracing with the pure-Python "
        "fallback, which is several times slower. Build it with `maturin build --release "
        "-m shims/python/Cargo.toml` or set CARVE_SHIM_NATIVE.\n" % FALLBACK_REASON
    )
    stream.flush()
