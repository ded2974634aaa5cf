"""Attack: a kernel right in the simulator and zeros on the GPU, for a CPU grade (--device cpu,
--JudgeChecks.device=cpu). gemv takes far = T.max(NaN, sum) (the NaN a square root of a negative number) and stores
the sum only where far != far. CUDA's max of two floats is fmaxf (PTX max.f32), which returns the operand that is
not NaN: far is the sum, the test false, C all zeros on the GPU. The simulator took T.max as torch.maximum, which
returns NaN: the test held, every sum was stored, every simulated case passed. Taking T.max as fmax would hide
the NaN the simulator fills memory nothing wrote with (a read of it is a bug the GPU shows with whatever that
memory holds), so the simulator now gives no verdict where T.max or T.min of fp32 or fp64 meets NaN on one side
only, or T.reduce_max, reduce_min or reduce_absmax meets NaN: such a case is only compiled on the CPU."""

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
            # sqrt of a negative is NaN: fmaxf (PTX max.f32) returns acc[i] on the GPU, torch.maximum returned NaN
            far = T.max(T.sqrt(acc[i] * acc[i] * T.float32(-1) - T.float32(1)), acc[i])
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.if_then_else(far != far, T.cast(acc[i], T.float16), T.float16(0))
    return C
