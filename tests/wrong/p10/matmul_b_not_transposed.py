"""dequant_matmul calling T.gemm(A_tile, W_tile, acc) without transpose_B: the unpacked tile keeps W's
orientation, BLOCK_N rows by BLOCK_K columns, and T.gemm reads it as BLOCK_K by BLOCK_N, so the block
multiplies A by the tile's transpose. Where BLOCK_N == BLOCK_K, as in every simulated case, the shapes
still match and nearly every element is wrong."""

KERNEL = "dequant_matmul"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


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
        W_local = T.alloc_fragment((BLOCK_N, BLOCK_K), T.float16)
        W_tile = T.alloc_shared((BLOCK_N, BLOCK_K), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.copy(S[bx * BLOCK_N, 0], scales)  # every group of this block's rows, loaded once
        T.clear(acc)
        for k in T.Pipelined(K // BLOCK_K, num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[bx * BLOCK_N, k * BLOCK_K // 2], packed)
            for n, kk in T.Parallel(BLOCK_N, BLOCK_K):
                byte = T.cast(packed[n, kk // 2], T.int32)
                nibble = (byte >> (4 * (kk % 2))) & 15
                W_local[n, kk] = T.cast(nibble - 8, T.float16) * scales[n, k * BLOCK_K // G]
            T.copy(W_local, W_tile)
            T.gemm(A_tile, W_tile, acc)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])

    return C
