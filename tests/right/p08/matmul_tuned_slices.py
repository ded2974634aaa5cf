"""matmul_tuned with every copy written with slice syntax (A[r0 : r0 + BLOCK_M, k0 : k0 + BLOCK_K],
...) and the tile corners and the K step count named once as Python values, the swizzle declared
before the buffers.
"""

KERNEL = "matmul_tuned"

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_tuned(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 256, PANEL: int = 10):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    steps = T.ceildiv(K, BLOCK_K)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        T.use_swizzle(panel_size=PANEL)
        r0 = by * BLOCK_M
        c0 = bx * BLOCK_N
        a = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        b = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        out = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(acc)
        for k in T.Pipelined(steps, num_stages=STAGES):
            T.copy(A[r0 : r0 + BLOCK_M, k * BLOCK_K : (k + 1) * BLOCK_K], a)
            T.copy(B[k * BLOCK_K : (k + 1) * BLOCK_K, c0 : c0 + BLOCK_N], b)
            T.gemm(a, b, acc)
        T.copy(acc, out)
        T.copy(out, C[r0 : r0 + BLOCK_M, c0 : c0 + BLOCK_N])
    return C
