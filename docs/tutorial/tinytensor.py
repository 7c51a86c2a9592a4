"""tinytensor: a deliberately tiny tensor library, the "your library" of docs/check-your-library.md.

A Tensor is a flat list of float64 values and a shape, contiguous and row-major. Pure Python, no dependencies.
"""

import itertools
import math

__version__ = "0.1.0"


class ShapeError(ValueError):
    """Operands whose shapes do not fit together."""


class Tensor:
    def __init__(self, values, shape):
        self.shape = tuple(int(n) for n in shape)
        if any(n < 0 for n in self.shape):
            raise ValueError(f"negative dimension in shape {list(self.shape)}")
        if len(values) != numel(self.shape):
            raise ShapeError(f"{len(values)} values cannot fill shape {list(self.shape)}")
        self.values = [float(v) for v in values]


def numel(shape):
    return math.prod(shape)


# Factories.
def from_list(values, shape):
    return Tensor(values, shape)


def full(shape, value):
    return Tensor([value] * numel(shape), shape)


def zeros(shape):
    return full(shape, 0.0)


def ones(shape):
    return full(shape, 1.0)


# Element-wise ops, NumPy-style broadcasting.
def broadcast_shapes(a, b):
    if len(a) != len(b):  # dims are compared pairwise, so the ranks must agree
        raise ShapeError(f"shapes do not match: {list(a)} and {list(b)}")
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise ShapeError(f"shapes {list(a)} and {list(b)} cannot be broadcast")
        out.append(y if x == 1 else x)
    return tuple(out)


def _element(t, index):
    """t's element at `index`, an index into the broadcast shape (t's shape right-aligned in it)."""
    flat, skip = 0, len(index) - len(t.shape)
    for i, size in zip(index[skip:], t.shape):
        flat = flat * size + (i if size != 1 else 0)
    return t.values[flat]


def _elementwise(a, b, f):
    shape = broadcast_shapes(a.shape, b.shape)
    return Tensor([f(_element(a, i), _element(b, i)) for i in itertools.product(*map(range, shape))], shape)


def add(a, b):
    return _elementwise(a, b, lambda x, y: x + y)


def mul(a, b):
    return _elementwise(a, b, lambda x, y: x * y)


def neg(a):
    return Tensor([-x for x in a.values], a.shape)


def sum(a):  # noqa: A001 (shadows the builtin on purpose: tinytensor.sum)
    total = 0.0
    for x in a.values:
        total += x
    return Tensor([total], ())
