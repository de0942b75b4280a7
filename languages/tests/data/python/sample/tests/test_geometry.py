import shapes
from shapes import Box, lookup
from shapes.geometry import total_area
from helpers import approx


def test_circle_area(circle):
    assert approx(circle.area(), 12.566)


def test_registry():
    assert lookup("square") is Box
    assert shapes.geometry.Square.unit().area() == 1


class TestTotals:
    def test_total(self):
        assert total_area([Box(1)], Box(2)) == 5
