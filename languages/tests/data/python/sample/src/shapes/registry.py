"""A registry of shape kinds, filled at import time by a decorator."""

_KINDS = {}


def register(name):
    """Class decorator: record a shape kind under `name`."""

    def wrap(cls):
        _KINDS[name] = cls
        return cls

    return wrap


def lookup(name):
    return _KINDS[name]


def kinds():
    return sorted(_KINDS)


DEFAULT_KIND = lookup if __debug__ else kinds
