"""Right numbers the wrong way: the dequantized product summed on the CUDA cores, no T.gemm."""

import tilelang
import tilelang.language as T

PUZZLE = "10"
KERNELS = "dequant_matmul"
WANTS = "T.gemm"


@tilelang.jit
def dequant_matmul(A, B, S, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 128):
    M, N, K, NG = T.const("M, N, K, NG")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K // 2), T.uint8)
    S: T.Tensor((N, NG), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        G = K // NG
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        packed = T.alloc_shared((BLOCK_N, BLOCK_K // 2), T.uint8)
        scales = T.alloc_shared((BLOCK_N, NG), T.float16)
        W_tile = T.alloc_shared((BLOCK_N, BLOCK_K), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.copy(S[bx * BLOCK_N, 0], scales)
        T.clear(acc)
        for k in T.serial(K // BLOCK_K):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[bx * BLOCK_N, k * BLOCK_K // 2], packed)
            for n, kk in T.Parallel(BLOCK_N, BLOCK_K):
                byte = T.cast(packed[n, kk // 2], T.int32)
                nibble = (byte >> (4 * (kk % 2))) & 15
                W_tile[n, kk] = T.cast(nibble - 8, T.float16) * scales[n, k * BLOCK_K // G]
            for kk in T.serial(BLOCK_K):
                for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                    acc[i, j] += T.cast(A_tile[i, kk], T.float32) * T.cast(W_tile[j, kk], T.float32)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
    return C
