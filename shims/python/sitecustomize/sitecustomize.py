"""carve: starts carve's tracing shim in every process of a traced run, then runs the
``sitecustomize`` this one shadows. Installed by carve into its private shim directory
(first on PYTHONPATH); inert unless CARVE_PROBE_MAP and CARVE_TRACE_DIR are set."""


def _carve_sitecustomize():
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    if os.environ.get("CARVE_PROBE_MAP") and os.environ.get("CARVE_TRACE_DIR"):
        try:
            from carve_shim import autostart
        except Exception:
            autostart = None
        if autostart is not None:
            autostart.start()
            autostart.chain(here)
            return
    import importlib.machinery
    import importlib.util
    import sys

    rest = [p for p in sys.path if os.path.realpath(p or os.curdir) != os.path.realpath(here)]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)


_carve_sitecustomize()
del _carve_sitecustomize
