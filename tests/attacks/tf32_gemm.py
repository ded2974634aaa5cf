"""Attack: a kernel right in the simulator and zeros on the GPU, for a CPU grade (--device cpu,
--JudgeChecks.device=cpu). gemv computes its sums, then multiplies two float32 tiles it fills itself with T.gemm:
X all 1 + 2^-20, Y all 1, 64 along K. TileLang multiplies float32 tiles on the Tensor Cores as TF32 (its CUDA:
tl::mma_sync<kTensorFloat32, kTensorFloat32, kFloat32, ...>, the fp32 bits passed as they are, no cvt.rna.tf32.f32),
which reads 10 bits of mantissa and ignores the low 13: X is 1 there, every element of Z is 64, the file's test
`Zs[0, 0] != 64` false and C zeros. The simulator multiplied in float32: 64 + 2^-14, the test true, every sum stored,
every simulated case PASSed (red team, 2026-12-05). The simulator now drops a float32 operand's low 13 mantissa bits
before it multiplies, as the TF32 Tensor Cores do."""

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
        X = T.alloc_shared((64, 64), T.float32)
        Y = T.alloc_shared((64, 64), T.float32)
        Z = T.alloc_fragment((64, 64), T.float32)
        Zs = T.alloc_shared((64, 64), T.float32)
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K], B_tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                products[i, j] = T.cast(A_tile[i, j], T.float32) * T.cast(B_tile[j], T.float32)
            T.reduce_sum(products, acc, dim=1, clear=False)
        for r, k in T.Parallel(64, 64):
            X[r, k] = T.float32(1.0000009536743164)  # 1 + 2^-20: 1.0 in TF32
            Y[r, k] = T.float32(1)
        T.gemm(X, Y, Z, transpose_B=True, clear_accum=True)  # 64 + 2^-14 in float32, 64 in TF32
        T.copy(Z, Zs)
        for i in T.Parallel(BLOCK_M):
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.if_then_else(Zs[0, 0] != T.float32(64), T.cast(acc[i], T.float16), T.float16(0))
    return C
