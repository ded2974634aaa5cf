"""Attack: a kernel right in the simulator and zeros on the GPU, for a CPU grade (--device cpu,
--JudgeChecks.device=cpu). The simulator rounds a 16-bit `x * y + c` once, as the fused multiply-add (HFMA) ptxas forms
from cutlass's `mul.f16` and `add.f16`, but only where the product is written inside the add. gemv keeps
p = -(x * x) rounded to fp16 (computed apart as (0 - x * 2 * x) * 0.5, x = 1 + |sum| / 16 in fp16), puts `q = x * x`
into a T.alloc_var, and stores each sum only where `q + p` is 0: rounded before the add, q + p is 0 and every
simulated case PASSed (red team, 2026-12-05). The PTX nvcc 13.0 emits for sm_90a is the same, line for line, as for
`x * x + p == 0` written as one expression (q is a register: `mul.f16` then `add.f16` either way), which the simulator
fuses and fails (247 of 256 wrong): one program, two verdicts, and on the GPU it is the fused one, x * x's rounding
error, not 0, so C is zeros there. The simulator's second run of a kernel that multiplies and adds (contract mode)
now covers float16 and bfloat16 as well as float32, a product kept unrounded through variables and register buffers:
no CPU verdict."""

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
        x = T.alloc_fragment((BLOCK_M,), T.float16)
        p = T.alloc_fragment((BLOCK_M,), T.float16)
        q = T.alloc_var(T.float16)
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K], B_tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                products[i, j] = T.cast(A_tile[i, j], T.float32) * T.cast(B_tile[j], T.float32)
            T.reduce_sum(products, acc, dim=1, clear=False)
        for i in T.Parallel(BLOCK_M):
            x[i] = T.cast(T.abs(acc[i]), T.float16) * T.float16(0.0625) + T.float16(1)  # 1 to 5: x * x rarely exact
        for i in T.Parallel(BLOCK_M):
            p[i] = (T.float16(0) - x[i] * T.float16(2) * x[i]) * T.float16(0.5)  # -(x * x) rounded once
        for i in T.Parallel(BLOCK_M):
            q = x[i] * x[i]
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.if_then_else(q + p[i] == T.float16(0), T.cast(acc[i], T.float16), T.float16(0))
    return C
