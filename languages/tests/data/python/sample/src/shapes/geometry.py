"""Geometric shapes."""

import math
from typing import Iterable

from .registry import register
from . import _compat


class Shape:
    """Base of every shape."""

    sides: int = 0

    def area(self) -> float:
        raise NotImplementedError

    def describe(self):
        return f"{type(self).__name__} of area {self.area():.2f}"


@register("circle")
class Circle(Shape):
    """A circle.

    Radius must be positive.
    """

    def __init__(self, radius: float = 1.0):
        self._radius = _compat.positive(radius)

    @property
    def radius(self):
        return self._radius

    @radius.setter
    def radius(self, value):
        self._radius = _compat.positive(value)

    def area(self) -> float:
        return math.pi * self.radius ** 2

    class Unit:
        """Nested class: the unit circle."""

        def make(self):
            return Circle(1.0)


@register("square")
class Square(Shape, metaclass=type):
    sides = 4

    def __init__(self, side, /, *, scale=1):
        self.side = side * scale

    def area(self):
        return self.side ** 2

    @classmethod
    def unit(cls):
        return cls.from_sides([1])

    @classmethod
    def from_sides(cls, sides: Iterable[float]) -> "Square":
        return cls(next(iter(sides)))


def total_area(shapes, *extra: Shape, key=Shape.area, **options) -> float:
    r"""Sum of areas.\n is not an escape in a raw docstring."""
    def weight(shape):
        return options.get("weight", 1) * key(shape)

    return sum(weight(s) for s in [*shapes, *extra])
