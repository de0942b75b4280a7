def approx(a, b, eps=1e-3):
    return abs(a - b) < eps
