"""Attack: a kernel right in the simulator and zeros on the GPU, for a CPU grade (--device cpu,
--JudgeChecks.device=cpu). gemv computes its sums, then stores row r's only where T.rsqrt(x) == 1 / T.sqrt(x), x = 1.5 +
(r % 256) / 25.6. The simulator took T.rsqrt as torch.rsqrt, which on the CPU is 1 / sqrt(x) (two correctly rounded
steps, the same bits as the right side for these 256 x): the test held, every sum was stored, every simulated case
PASSed (red team, 2026-12-05). TileLang writes rsqrtf(x), which nvcc 13.0 makes `rsqrt.approx.f32` (sm_90a, no fast
math: CUDA's rsqrtf has a maximum error of 2 ulp), and 1 / sqrtf(x) `sqrt.rn.f32` then `rcp.rn.f32`, both correctly
rounded: the two differ in the last bits for most x, so most of C is zeros on the GPU."""

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
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K], B_tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                products[i, j] = T.cast(A_tile[i, j], T.float32) * T.cast(B_tile[j], T.float32)
            T.reduce_sum(products, acc, dim=1, clear=False)
        for i in T.Parallel(BLOCK_M):
            x = T.float32(1.5) + T.cast((bx * BLOCK_M + i) % 256, T.float32) * T.float32(0.0390625)
            # torch: 1 / sqrt(x) twice; the GPU: rsqrt.approx.f32 on the left, sqrt.rn and rcp.rn on the right
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.if_then_else(
                    T.rsqrt(x) == T.float32(1) / T.sqrt(x), T.cast(acc[i], T.float16), T.float16(0)
                )
    return C
