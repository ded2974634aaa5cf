"""Right numbers the wrong way: dequant_matmul_decode with the fp16 built from its bits, but the
unpacked W still stored to a shared tile and multiplied as T.gemm's second operand (C, not C^T)."""

import tilelang
import tilelang.language as T

PUZZLE = "10"
KERNELS = "dequant_matmul_decode"
WANTS = "the unpacked W tile as T.gemm's first operand, straight from its fragment (registers)"


@tilelang.jit
def dequant_matmul_decode(A, B, S, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 128):
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
        W_local = T.alloc_fragment((BLOCK_N, BLOCK_K), T.float16)
        W_tile = T.alloc_shared((BLOCK_N, BLOCK_K), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.copy(S[bx * BLOCK_N, 0], scales)
        T.clear(acc)
        for k in T.Pipelined(K // BLOCK_K, num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[bx * BLOCK_N, k * BLOCK_K // 2], packed)
            for n, kk in T.Parallel(BLOCK_N, BLOCK_K):
                nibble = (packed[n, kk // 2] >> (4 * (kk % 2))) & T.uint8(15)
                value = T.reinterpret(T.Cast("uint16", nibble) | T.uint16(0x6400), T.float16) - T.float16(1032)
                W_local[n, kk] = value * scales[n, k * BLOCK_K // G]
            T.copy(W_local, W_tile)
            T.gemm(A_tile, W_tile, acc, transpose_B=True)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
    return C
