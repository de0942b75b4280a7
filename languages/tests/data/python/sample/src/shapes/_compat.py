import sys

if sys.version_info >= (3, 10):
    def positive(value):
        """Check a value is positive."""
        if value <= 0:
            raise ValueError(value)
        return value
else:
    def positive(value):
        assert value > 0
        return value
