"""Shapes: a small geometry package (src layout)."""

from .geometry import Circle, Square as Box
from .registry import register, lookup
from .io import load

__all__ = ["Circle", "Box", "register", "lookup", "load", "VERSION"]

VERSION = "1.0"
