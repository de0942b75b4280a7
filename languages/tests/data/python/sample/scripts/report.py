"""Print a report of the registered shapes."""
import shapes.io.reader as reader
import shapes.registry


def main(argv=None):
    from shapes.geometry import Circle as C

    class Row:
        def __init__(self, shape):
            self.shape = shape

        def render(self):
            return format_row(self.shape)

    def format_row(shape):
        return shape.describe()

    rows = [Row(C(r)) for r in (1, 2)] + [Row(s) for s in reader.demo()]
    print(shapes.registry.kinds())
    return "\n".join(row.render() for row in rows)


if __name__ == "__main__":
    main()
