"""Puzzle 08's flash_attention_tensor_cores with the softmax overlapped with the Tensor-Core GEMMs (the
FlashAttention-3 schedule), for scripts/sweep.py --file: the cases are the course's own (puzzle 08's puzzle(),
imported). Timed by `python -m scripts.gpu_check notes-p08` (the large_16384 case, 128 x 128 blocks, 256 threads);
the figures are on docs/results/p08-flash-attention.md: OVERLAP=1 gives wrong results on the GPU (it passes the
CPU simulator; not investigated), and OVERLAP=2 is slower than the plain loop. The hand-written schedule loses TMA
and warp specialization, which costs more than the overlap wins.

The math is the course's one-pass kernel (exp2 with log2(e)/sqrt(D) folded in, running max and sum,
keys past N masked to -inf, P rounded to fp16 before P V). What changes is the order in which one
iteration of the key loop issues its work: ``T.Pipelined(..., order=..., stage=...)`` gives each
scheduled statement of the loop body a stage and a position in the emitted iteration.

OVERLAP=2 (the default): both GEMMs are ``T.gemm`` with ``annotations={"wg_wait": -1}`` (lowered to
wgmma without the implicit wait, as ``T.wgmma_gemm`` would be) and the waits are explicit
``T.wait_wgmma``. Stages: 0 the K and V copies (tile j+2), 1 Q K^T and the softmax (tile j+1), 2 the
rescale and P V (tile j). One iteration of the generated loop issues, in this order:

    cp.async K, V (tile t+1)         stage 0
    S = mask; issue S += Q K^T (t)   stage 1, async wgmma
    acc *= correction (t-1)          stage 2, CUDA cores, while Q K^T runs
    issue acc += P V (t-1)           stage 2, async wgmma
    wait_wgmma<1>                    Q K^T of t done, P V of t-1 still running
    max, correction, exp2, sums (t)  stage 1, CUDA cores, while P V of t-1 runs
    wait_wgmma<0>                    P V of t-1 done: P's registers are free
    P = fp16(S) (t)

(tile 0 has no P V in flight, so its wait is wait_wgmma<0>: ``if j > 0`` picks the count; the last
tile's P V is waited after the loop). K is double-buffered and V triple-buffered in shared memory.

OVERLAP=1: the same reordering with the ordinary synchronous T.gemm (Q K^T of j, then the rescale and
P V of j-1, then the softmax of j); every GEMM still waits for itself, so this only reorders.
OVERLAP=0: the plain loop (``num_stages=STAGES``, the compiler's own schedule: TMA and a producer
warpgroup), i.e. scripts/p08/flash_ffma.py with the mask folded into the score initialisation.

With a manual order/stage TileLang 0.1.15 does not warp-specialize the loop: OVERLAP 1 and 2 load with
cp.async from all THREADS threads (no TMA, no producer warpgroup, 256 threads launched, not 384).
STAGES only matters for them when it exceeds the depth the schedule implies (2 or 3).
"""

from __future__ import annotations

import math

import tilelang
import tilelang.language as T

from solutions.p08_matrix import puzzle  # noqa: F401

# OVERLAP=1, T.gemm (each GEMM waits for itself), statements in source order:
#   0 K copy   1 S init/mask   2 gemm Q K^T   3 prev_max   4 reduce_max   5 correction   6 exp2
#   7 reduce_sum   8 row_sum   9 P = fp16(S)   10 acc *= correction   11 V copy   12 gemm P V
# OVERLAP=2, T.gemm without its implicit wait (NO_WAIT) and explicit T.wait_wgmma, copies a tile ahead:
#   0 K copy   1 V copy   2 S init/mask   3 wgmma Q K^T   4 wait for Q K^T   5 prev_max
#   6 reduce_max   7 correction   8 exp2   9 reduce_sum   10 row_sum   11 wait for P V   12 P = fp16(S)
#   13 acc *= correction   14 wgmma P V
NO_WAIT = {"wg_wait": -1}  # T.gemm lowered to wgmma without its implicit wait (as T.wgmma_gemm)

_SCHEDULES = {
    # (position of each statement in the emitted iteration, its stage)
    1: ([0, 1, 2, 6, 7, 8, 9, 10, 11, 12, 3, 4, 5], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1]),
    2: ([0, 1, 2, 3, 6, 7, 8, 9, 10, 11, 12, 13, 14, 4, 5], [0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2]),
}


@tilelang.jit
def flash_attention_tensor_cores(
    Q, K, V, BLOCK_M: int, BLOCK_N: int, STAGES: int = 1, THREADS: int = 128, OVERLAP: int = 2
):
    H, M, N, D = T.const("H, M, N, D")
    Q: T.Tensor((H, M, D), T.float16)
    K: T.Tensor((H, N, D), T.float16)
    V: T.Tensor((H, N, D), T.float16)
    O = T.empty((H, M, D), T.float16)  # noqa: E741 (O, the output, as in the formulas)

    if OVERLAP:
        order, stage = _SCHEDULES[OVERLAP]
        pipeline = {"order": order, "stage": stage}
        if STAGES > max(stage) + 1:  # deeper than the schedule implies: an explicit depth override
            pipeline["num_stages"] = STAGES
    else:
        pipeline = {"num_stages": STAGES}

    with T.Kernel(T.ceildiv(M, BLOCK_M), H, threads=THREADS) as (bx, head):
        scale = math.log2(math.e) / math.sqrt(D)  # exp(x / sqrt(D)) == exp2(x * scale)
        Q_tile = T.alloc_shared((BLOCK_M, D), T.float16)
        K_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        V_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        S = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        P = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, D), T.float32)
        row_max = T.alloc_fragment((BLOCK_M,), T.float32)
        prev_max = T.alloc_fragment((BLOCK_M,), T.float32)
        correction = T.alloc_fragment((BLOCK_M,), T.float32)
        tile_sum = T.alloc_fragment((BLOCK_M,), T.float32)
        max_scaled = T.alloc_fragment((BLOCK_M,), T.float32)
        row_sum = T.alloc_fragment((BLOCK_M,), T.float32)

        T.copy(Q[head, bx * BLOCK_M, 0], Q_tile)
        T.clear(acc)
        T.clear(row_sum)
        T.fill(row_max, -T.infinity(T.float32))
        if OVERLAP == 2:
            for j in T.Pipelined(T.ceildiv(N, BLOCK_N), **pipeline):
                T.copy(K[head, j * BLOCK_N, 0], K_tile)
                T.copy(V[head, j * BLOCK_N, 0], V_tile)
                for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                    S[i, c] = T.if_then_else(j * BLOCK_N + c < N, 0, -T.infinity(T.float32))
                T.gemm(Q_tile, K_tile, S, transpose_B=True, policy=T.GemmWarpPolicy.FullRow, annotations=NO_WAIT)
                # In the steady state the P V of tile j-1 was committed after this Q K^T: leave it running.
                # Tile 0 has none in flight (the prologue), so there it must wait for everything.
                if j > 0:
                    T.wait_wgmma(1)
                else:
                    T.wait_wgmma(0)
                T.copy(row_max, prev_max)
                T.reduce_max(S, row_max, dim=1, clear=False)
                for i in T.Parallel(BLOCK_M):
                    correction[i] = T.exp2(prev_max[i] * scale - row_max[i] * scale)
                    max_scaled[i] = row_max[i] * scale
                for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                    S[i, c] = T.exp2(S[i, c] * scale - max_scaled[i])
                T.reduce_sum(S, tile_sum, dim=1)
                for i in T.Parallel(BLOCK_M):
                    row_sum[i] = row_sum[i] * correction[i] + tile_sum[i]
                T.wait_wgmma(0)  # the P V of tile j-1 still reads P's registers until here
                T.copy(S, P)
                for i, d in T.Parallel(BLOCK_M, D):
                    acc[i, d] = acc[i, d] * correction[i]
                T.gemm(P, V_tile, acc, policy=T.GemmWarpPolicy.FullRow, annotations=NO_WAIT)
            T.wait_wgmma(0)  # the last tile's P V
        else:
            for j in T.Pipelined(T.ceildiv(N, BLOCK_N), **pipeline):
                T.copy(K[head, j * BLOCK_N, 0], K_tile)
                # the GEMM accumulates into S: padding keys start at -inf (and stay so), real ones at 0
                for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                    S[i, c] = T.if_then_else(j * BLOCK_N + c < N, 0, -T.infinity(T.float32))
                T.gemm(Q_tile, K_tile, S, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(row_max, prev_max)
                T.reduce_max(S, row_max, dim=1, clear=False)
                for i in T.Parallel(BLOCK_M):
                    correction[i] = T.exp2(prev_max[i] * scale - row_max[i] * scale)
                    max_scaled[i] = row_max[i] * scale
                for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                    S[i, c] = T.exp2(S[i, c] * scale - max_scaled[i])
                T.reduce_sum(S, tile_sum, dim=1)
                for i in T.Parallel(BLOCK_M):
                    row_sum[i] = row_sum[i] * correction[i] + tile_sum[i]
                T.copy(S, P)
                for i, d in T.Parallel(BLOCK_M, D):
                    acc[i, d] = acc[i, d] * correction[i]
                T.copy(V[head, j * BLOCK_N, 0], V_tile)
                T.gemm(P, V_tile, acc, policy=T.GemmWarpPolicy.FullRow)

        for i, d in T.Parallel(BLOCK_M, D):
            acc[i, d] = acc[i, d] / row_sum[i]
        T.copy(acc, O[head, bx * BLOCK_M, 0])

    return O
