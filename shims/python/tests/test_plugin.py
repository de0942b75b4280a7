"""The pytest plugin's own helpers, without tracing (no CARVE_PROBE_MAP: importing it starts
nothing)."""

import os
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))


def test_rootdir_of_old_and_new_pytest(monkeypatch):
    monkeypatch.delenv("CARVE_PROBE_MAP", raising=False)
    monkeypatch.delenv("CARVE_TRACE_DIR", raising=False)
    from carve_shim import plugin

    # pytest >= 6.1 has `rootpath`; pytest 3 (psf/requests' 2017 states) only `rootdir`.
    assert plugin._rootdir(SimpleNamespace(rootpath=Path("/repo/new"), rootdir="/ignored")) == "/repo/new"
    assert plugin._rootdir(SimpleNamespace(rootdir="/repo/old/")) == "/repo/old"
