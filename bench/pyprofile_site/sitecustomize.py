"""Traces a child Python process of a test run under ``pyprofile_tracer``, then hands over
to whatever ``sitecustomize`` this one shadows (Debian's, a virtualenv's …)."""

import importlib
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
try:
    import pyprofile_tracer

    pyprofile_tracer.start_child()
finally:
    # Run the sitecustomize we shadow, if there is one.
    del sys.modules["sitecustomize"]
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
    try:
        importlib.import_module("sitecustomize")
    except ImportError:
        pass
    finally:
        sys.path[:] = saved
