"""Right numbers the wrong way: both products of flash_attention_tensor_cores as serial multiply-add loops, no
T.gemm (puzzle 07's CUDA-core kernel handed in for the Tensor Core rung)."""

import math

import tilelang
import tilelang.language as T

PUZZLE = "08"
KERNELS = "flash_attention_tensor_cores"
WANTS = "T.gemm"


@tilelang.jit
def flash_attention_tensor_cores(Q, K, V, BLOCK_M: int, BLOCK_N: int, STAGES: int = 1, THREADS: int = 128):
    H, M, N, D = T.const("H, M, N, D")
    Q: T.Tensor((H, M, D), T.float16)
    K: T.Tensor((H, N, D), T.float16)
    V: T.Tensor((H, N, D), T.float16)
    O = T.empty((H, M, D), T.float16)  # noqa: E741
    with T.Kernel(T.ceildiv(M, BLOCK_M), H, threads=THREADS) as (bx, head):
        scale = math.log2(math.e) / math.sqrt(D)
        Q_tile = T.alloc_shared((BLOCK_M, D), T.float16)
        K_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        V_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        P_tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        S = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        acc = T.alloc_fragment((BLOCK_M, D), T.float32)
        row_max = T.alloc_fragment((BLOCK_M,), T.float32)
        prev_max = T.alloc_fragment((BLOCK_M,), T.float32)
        tile_sum = T.alloc_fragment((BLOCK_M,), T.float32)
        row_sum = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(Q[head, bx * BLOCK_M, 0], Q_tile)
        T.clear(acc)
        T.clear(row_sum)
        T.fill(row_max, -T.infinity(T.float32))
        for j in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(K[head, j * BLOCK_N, 0], K_tile)
            T.copy(V[head, j * BLOCK_N, 0], V_tile)
            T.clear(S)
            for d in T.serial(D):
                for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                    S[i, c] += T.cast(Q_tile[i, d], T.float32) * T.cast(K_tile[c, d], T.float32)
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                S[i, c] = T.if_then_else(j * BLOCK_N + c < N, S[i, c], -T.infinity(T.float32))
            T.copy(row_max, prev_max)
            T.reduce_max(S, row_max, dim=1, clear=False)
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                S[i, c] = T.exp2((S[i, c] - row_max[i]) * scale)
            T.reduce_sum(S, tile_sum, dim=1)
            for i in T.Parallel(BLOCK_M):
                row_sum[i] = row_sum[i] * T.exp2((prev_max[i] - row_max[i]) * scale) + tile_sum[i]
            for i, d in T.Parallel(BLOCK_M, D):
                acc[i, d] = acc[i, d] * T.exp2((prev_max[i] - row_max[i]) * scale)
            T.copy(S, P_tile)
            for c in T.serial(BLOCK_N):
                for i, d in T.Parallel(BLOCK_M, D):
                    acc[i, d] += T.cast(P_tile[i, c], T.float32) * T.cast(V_tile[c, d], T.float32)
        for i, d in T.Parallel(BLOCK_M, D):
            acc[i, d] = acc[i, d] / row_sum[i]
        T.copy(acc, O[head, bx * BLOCK_M, 0])
    return O
