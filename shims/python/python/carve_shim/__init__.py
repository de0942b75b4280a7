"""carve's Python tracing shim.

carve runs a repository's tests with this package on ``PYTHONPATH`` (a private directory,
never the user's site-packages) and ``-p carve_shim.plugin``. While ``CARVE_PROBE_MAP``
and ``CARVE_TRACE_DIR`` are set, an import hook (:mod:`carve_shim.hook`) inserts a probe
``_carve_hit(N)`` at the entry of every function of the repository's own modules as they
are imported; the recorder (:mod:`carve_shim.recorder`: the native ``_native`` extension,
or the pure-Python :mod:`carve_shim.fallback`) keeps, per test, which nodes ran and who
called them; the pytest plugin (:mod:`carve_shim.plugin`) switches the current test at
item boundaries; :mod:`carve_shim.runtime` writes the JSON-lines trace described in
carve's ``docs/trace-format.md``. Subprocesses are traced through the ``sitecustomize``
that carve installs next to this package (:mod:`carve_shim.autostart`).
"""

__version__ = "0.1.0"

#: Version of the probe map this shim reads and of the trace it writes.
TRACE_VERSION = 1

#: Pseudo-test for code run while modules load.
IMPORT = "<import>"
#: Caller name for code outside the repository.
EXTERNAL = "<external>"
#: Prefix of the caller name for module-level code of a repository file.
MODULE_PREFIX = "<module>"
