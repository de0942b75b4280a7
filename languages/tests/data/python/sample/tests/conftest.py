import pytest

from shapes import Circle


@pytest.fixture
def circle():
    return Circle(2.0)
