"""conv1d_naive with no shared window and no guard on the input: each output sums X[t + k - P] * W[k] straight
from global memory. TileLang guards every global load past an edge to read 0 (its CUDA: `condval = half_t(0)`
outside [0, L)), which is the zero padding the spec asks for; the simulator reads 0 there too. Every case passed
on an H100 (docs/results/data/h100-2026-12-05-sixth/probes/edges.txt)."""

KERNEL = "conv1d_naive"

import tilelang
import tilelang.language as T


@tilelang.jit
def conv1d_naive(X, W, BLOCK_L: int, THREADS: int = 128):
    L, K = T.const("L, K")
    X: T.Tensor((L,), T.float16)
    W: T.Tensor((K,), T.float16)
    Y = T.empty((L,), T.float16)

    with T.Kernel(T.ceildiv(L, BLOCK_L), threads=THREADS) as bx:
        P = (K - 1) // 2
        acc = T.alloc_fragment((BLOCK_L,), T.float32)
        T.clear(acc)
        for k in T.serial(K):
            for i in T.Parallel(BLOCK_L):
                acc[i] += T.cast(X[bx * BLOCK_L + i + k - P], T.float32) * T.cast(W[k], T.float32)
        T.copy(acc, Y[bx * BLOCK_L])
    return Y
