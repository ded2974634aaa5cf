"""Adversarial submission: results cached between calls.

`add` is a @tilelang.jit kernel object whose Python call returns the first answer it ever computed
(with torch), and whose kernel writes nothing. `mul_relu` keeps a module-level cache of answers keyed
by shape. Neither may pass: the grader compiles the kernel itself and runs it on fresh inputs.
"""

import tilelang
import tilelang.language as T
import torch
from tilelang.jit import JITImpl

_CACHE: dict = {}


def _writes_nothing(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        T.evaluate(0)
    return C


class _Cached(type(tilelang.jit(_writes_nothing))):
    def __call__(self, A, B, *args, **kwargs):
        if "answer" not in _CACHE:
            _CACHE["answer"] = A + B
        return _CACHE["answer"]


add = _Cached.__new__(_Cached)
add.__dict__.update(tilelang.jit(_writes_nothing).__dict__)
assert isinstance(add, JITImpl)


@tilelang.jit
def mul_relu(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        key = ("mul_relu", N)
        if key not in _CACHE:
            _CACHE[key] = torch.randn(N)  # traced once per size: nothing the kernel can read
        T.evaluate(0)
    return C
