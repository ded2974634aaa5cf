"""Attack: fp32_fma.py with the product kept in a register first: `q = acc * 1.1` into a T.alloc_var, then
`e = q + p`. The CUDA keeps the two statements (`q = (acc[i_4] * 0x1.19999ap+0f); float e = (q + p[...]);`) and nvcc
still contracts them into one `fma.rn.f32` (nvcc 13.0, sm_90a): a second run that contracted only a product written
inside the add would pass this file, so the simulator's contract mode keeps a product unrounded through variables and
register buffers (local, local.var and fragments; grader.pipeline.simulate.interp) until it is added or stored to
shared or global memory. No CPU verdict; zeros on the GPU (red team, 2026-12-05, read from the PTX)."""

import tilelang
import tilelang.language as T


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        A_tile = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_fragment((BLOCK_K,), T.float16)
        products = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float32)
        acc = T.alloc_fragment((BLOCK_M,), T.float32)
        p = T.alloc_shared((BLOCK_M,), T.float32)
        q = T.alloc_var(T.float32)
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K], B_tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                products[i, j] = T.cast(A_tile[i, j], T.float32) * T.cast(B_tile[j], T.float32)
            T.reduce_sum(products, acc, dim=1, clear=False)
        for i in T.Parallel(BLOCK_M):
            p[i] = acc[i] * T.float32(-2.200000047683716) * T.float32(0.5)  # -(acc * 1.1) rounded once (2.2 = 2 * 1.1)
        for i in T.Parallel(BLOCK_M):
            # apart (the simulator): 0; contracted into one fma.rn.f32 (nvcc): the product's rounding error
            q = acc[i] * T.float32(1.100000023841858)
            e = q + p[i]
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.if_then_else(e == T.float32(0), T.cast(acc[i], T.float16), T.float16(0))
    return C
