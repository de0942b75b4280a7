"""Read shapes from text."""

from ..geometry import Circle, Square
from .. import registry


def parse_line(line, /, default="circle", *, strict: bool = False):
    kind, _, size = line.partition(" ")
    cls = registry.lookup(kind or default)
    return cls(float(size))


async def load(path: str, *args, encoding="utf-8", **kwargs) -> list:
    """Load every shape of a file.

    One shape per line.
    """
    import asyncio

    def read():
        with open(path, encoding=encoding) as fh:
            return [parse_line(line) for line in fh]

    return await asyncio.to_thread(read)


def demo():
    return [Circle(), Square(2)]
