from .reader import load, parse_line as parse

__all__ = ("load", "parse")
