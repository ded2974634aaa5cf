"""Puzzle 07 · Flash attention: softmax(Q K^T / sqrt(D)) V without ever storing the scores.

Attention compares every query with every key: an M x N matrix of scores that, for long
sequences, is far larger than Q, K, V and O together. Flash attention never writes it out. One
block owns BLOCK_M queries and walks the keys in tiles of BLOCK_N, so only one BLOCK_M x BLOCK_N
tile of scores exists at a time, in registers. This puzzle is the single-head, no-mask
("scalar") version; batches, heads and causal masks are only more indexing.

Inputs and output (fp16 in, fp16 out, every sum accumulated in fp32):

``Q`` is M x D, ``K`` and ``V`` are N x D. Output ``O`` of M x D with

    S = Q @ K^T / sqrt(D)                     (M x N scores)
    P[i, j] = exp(S[i, j] - max_j S[i, :])    (the max only keeps exp from overflowing)
    O[i, :] = sum_j P[i, j] * V[j, :] / sum_j P[i, j]

``attention_two_pass``
    The plain tiled version. Pass 1 walks the key tiles once and keeps only the row maxima m
    (``T.reduce_max`` with ``clear=False``, so each tile's maxima fold into the running ones).
    Pass 2 walks them again, now knowing m: for each tile it recomputes the scores, takes
    ``P = exp(S - m)``, adds the row sums of P to l and ``P @ V`` (``T.gemm``) to an fp32
    accumulator. At the end ``O = acc / l``. Every exponent uses the final maximum, so nothing
    is ever corrected, but Q K^T is computed twice and K read twice.

``flash_attention``
    One pass. Before a tile is added, the maximum so far is updated to
    ``m_new = max(m_old, rowmax(S_tile))``; everything already summed was taken relative to
    m_old, so the running sum l and the accumulator are multiplied by ``exp(m_old - m_new)``
    first, then the tile's ``exp(S - m_new)`` and its ``P @ V`` are added. This is the online
    softmax: the same result as the two-pass kernel, for half the score computation.

What it teaches: chaining two ``T.gemm``s (Q K^T with ``transpose_B=True``, then P V with P
cast to fp16 in registers), row reductions on fragments, the online-softmax rescaling, and
masking. Sizes need not be multiples of the blocks: ``T.copy`` reads zeros past the last key,
so the scores of those padding keys come out as 0, not as "absent"; they must be set to -inf
before the max and the exp, or each would add ``exp(0 - m)`` to the row sum. (Every key tile
holds at least one real key, so a row maximum is never -inf.)

The exp path: ``exp(x) = exp2(x * log2(e))``, and the GPU has a fast base-2 exponential, so
the kernels fold ``log2(e) / sqrt(D)`` into one constant and call ``T.exp2``.

Tolerance: P is rounded to fp16 before it meets V on the Tensor Cores (``T.gemm`` needs both
operands in fp16), a relative error of up to 2^-11 on every weight. Those errors mostly average
out along a row, but not far enough for the default fp16 bound (atol 1e-3 x rms): in a CPU
emulation of this kernel over 262,144 outputs the worst element already uses 93% of it, and
larger cases cross it. Attention therefore uses atol 3e-3, of which a correct kernel uses under
30%. An fp16 accumulator still fails: its worst error is 1.7 times even this bound over 1000
keys, 2.3 times over 4099, and grows with N.

Preconditions: D is the head size, 64 in every case (the kernels are written for any multiple
of 16); the block sizes are multiples of 16; M and N are anything.
"""

# %% [markdown]
# ## Why this puzzle matters
#
# Attention is the core of a transformer, and its naive form is memory-bound for a silly reason: the
# M x N score matrix is far larger than Q, K, V and O together. At M = N = 16384 it is 268 million
# scores, 1 GiB in fp32, per head, written to memory and read back. Flash attention never stores
# it: one block owns BLOCK_M queries, walks the keys in tiles of BLOCK_N, and only one
# BLOCK_M x BLOCK_N tile of scores exists at a time, in registers. The output is built with the
# online softmax of puzzle 06. This is the algorithm of FlashAttention, one of the backends torch's
# `scaled_dot_product_attention` (the bench baseline) dispatches to on a GPU.
#
# Per key tile the block runs two matrix products on the Tensor Cores (puzzle 08):
#
# $$S = Q K_{\text{tile}}^T / \sqrt{D}, \qquad \text{acc} \mathrel{+}= P\, V_{\text{tile}}, \quad P = e^{S - m}$$

# %%
from __future__ import annotations

import math

import tilelang
import tilelang.language as T

from grader.concepts import gemm_calls, reduces
from grader.spec import Case, Kernel, Puzzle, Tensor, Tolerance, tensor_bytes

# ---------------------------------------------------------------- references (run on float64)


def attention_reference(Q, K, V):
    scores = (Q @ K.T) / math.sqrt(Q.shape[1])
    return scores.softmax(dim=-1) @ V


def torch_attention(Q, K, V):
    """What --bench times against: torch's fused attention at fp16 (one batch, one head)."""
    import torch.nn.functional as F

    return F.scaled_dot_product_attention(Q[None, None], K[None, None], V[None, None])[0, 0]


# -------------------------------------------------------------------------------- kernels


# %% [markdown]
# ## Kernel 1: `attention_two_pass`
#
# Pass 1 walks the key tiles and keeps only the row maxima m (`T.reduce_max` with `clear=False`).
# Pass 2 walks them again with m known: recompute S, take `P = exp2((S - m) * scale)`, add its row
# sums to l and `P @ V` to an fp32 accumulator; at the end `O = acc / l`. Nothing is ever rescaled,
# but `Q K^T` is computed twice and K read twice.
#
# TileLang constructs, several of which puzzle 08 explains at length (its sections "Tensor Cores and
# CUDA cores" and "Why the tiles go to shared memory", if they are new to you):
#
# - `T.alloc_shared(shape, dtype)` is a tile in the block's shared memory, which every thread of the
#   block can read; `T.copy(K[j * BLOCK_N, 0], K_tile)` fills it from global memory (zeros past the end).
# - `T.gemm(A, B, C)` adds `A @ B` into the fragment C on the Tensor Cores; `transpose_B=True` reads B
#   transposed, so `T.gemm(Q_tile, K_tile, S, transpose_B=True)` multiplies by K^T without moving K
#   (the tile is BLOCK_N x D in shared memory). P is copied into an fp16 fragment because the second
#   `T.gemm` takes fp16 operands.
# - `policy=T.GemmWarpPolicy.FullRow` (the reference passes it) splits the block's warps along the
#   rows of the result only, so each warp holds whole rows of S, the rows the max and the sums run
#   along. The default policy gives the same numbers; the policy changes how the work is split.
# - `T.Pipelined(count, num_stages=STAGES)` is a loop whose next tiles' copies overlap this tile's math
#   (puzzle 08, "What `T.Pipelined` overlaps"). STAGES = 1 gives each tile one buffer; on Hopper the
#   copies still run ahead of the math where the buffer is free (experiment 2 below).
#
# What to watch for:
# - keys past N: `T.copy` reads zero rows of K, whose scores come out as 0, a perfectly ordinary
#   score. Set them to -inf (`T.if_then_else(j * BLOCK_N + c < N, ...)`) before the max and the exp,
#   or each adds `exp(0 - m)` to the row sum;
# - clear S before each `T.gemm` into it (`T.gemm` accumulates), and keep the output accumulator and
#   row sums in fp32;
# - fold `log2(e) / sqrt(D)` into one Python float and use `T.exp2`.


# %% attention_two_pass
@tilelang.jit
def attention_two_pass(Q, K, V, BLOCK_M: int, BLOCK_N: int, STAGES: int = 1, THREADS: int = 128):
    M, N, D = T.const("M, N, D")
    Q: T.Tensor((M, D), T.float16)
    K: T.Tensor((N, D), T.float16)
    V: T.Tensor((N, D), T.float16)
    O = T.empty((M, D), T.float16)  # noqa: E741 (O, the output, as in the formulas)

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        # TODO begin: pass 1 finds each row's max score, pass 2 sums exp(S - max) and P @ V
        # One block computes BLOCK_M rows of the output in two walks over the key tiles: the first
        # only finds each row's max score, the second exponentiates the scores against it, sums
        # them, and adds P times V into an accumulator; at the end each row is divided by its sum.
        # Q, K and V tiles live in shared memory (T.alloc_shared), scores and accumulators in
        # float32 fragments, the score matrix comes from T.gemm with transpose_B=True, the walks are
        # T.Pipelined loops, and the row max starts at minus infinity.
        raise NotImplementedError("attention_two_pass")
        # TODO end

    return O


# %% [markdown]
# ## Kernel 2: `flash_attention`
#
# One pass. For each key tile: keep the old max, fold the tile into the running max, compute the
# correction `c = exp2((m_old - m_new) * scale)` per row, then
#
# $$l \leftarrow c\, l + \sum_j P_{ij}, \qquad \mathrm{acc} \leftarrow c\, \mathrm{acc} + P\, V_{\mathrm{tile}}$$
#
# The only difference from puzzle 06's running sum is that the accumulator being rescaled is a whole
# BLOCK_M x D tile of partial outputs, not a single number per row. Half the `Q K^T` work of the
# two-pass kernel, K read once. The running max and its corrections along one row of scores:

# %% [notebook]
# from grader.teaching.pictures import online_softmax
#
# online_softmax(block=8, seed=3)


# %% flash_attention
@tilelang.jit
def flash_attention(Q, K, V, BLOCK_M: int, BLOCK_N: int, STAGES: int = 1, THREADS: int = 128):
    M, N, D = T.const("M, N, D")
    Q: T.Tensor((M, D), T.float16)
    K: T.Tensor((N, D), T.float16)
    V: T.Tensor((N, D), T.float16)
    O = T.empty((M, D), T.float16)  # noqa: E741 (O, the output, as in the formulas)

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        # TODO begin: one pass over the key tiles with a running max, a running sum and rescaling
        # The same result in a single walk over the key tiles: keep a running max, a running sum and
        # the output accumulator per row, and whenever a tile raises a row's max, rescale that row's
        # sum and accumulator by the exponential of the change before adding the tile's
        # contribution. The tiles, the masked scores and the T.gemm calls are those of
        # attention_two_pass; only the bookkeeping is new.
        raise NotImplementedError("flash_attention")
        # TODO end

    return O


# %% cases
# ---------------------------------------------------------------------------------- cases

_Q = Tensor("Q", ("M", "D"), "float16")
_K = Tensor("K", ("N", "D"), "float16")
_V = Tensor("V", ("N", "D"), "float16")
_O = Tensor("O", ("M", "D"), "float16")

# P is rounded to fp16 before P @ V: see the module docstring.
ATTENTION_TOLERANCES = {"float16": Tolerance(rtol=2e-3, atol=3e-3)}


def puzzle() -> Puzzle:
    small = {"BLOCK_M": 64, "BLOCK_N": 64}
    rect = {"BLOCK_M": 64, "BLOCK_N": 32}
    # TileLang cannot multi-buffer a shared tile that two pipelined loops both fill (an
    # internal layout error), so the two-pass bench keeps STAGES=1, which works whether or not
    # the passes share K_tile; flash attention double-buffers K and V.
    large_two_pass = {"BLOCK_M": 128, "BLOCK_N": 128, "STAGES": 1, "THREADS": 256}
    large = {"BLOCK_M": 128, "BLOCK_N": 128, "STAGES": 2, "THREADS": 256}
    common = dict(
        inputs=(_Q, _K, _V),
        outputs=(_O,),
        reference=attention_reference,
        baseline=torch_attention,
        bytes_moved=lambda s: tensor_bytes((_Q, _K, _V, _O), s),
        tiles={"O": ("BLOCK_M", None)},
        tolerances=ATTENTION_TOLERANCES,
    )
    return Puzzle(
        id="07",
        title="Flash attention",
        kernels=(
            Kernel(
                function="attention_two_pass",
                concepts=(
                    gemm_calls(2, "both products, Q K^T and P V, computed with T.gemm on the Tensor Cores"),
                    reduces("max", "the row maxima of the scores taken with T.reduce_max"),
                ),
                title="Attention in two passes: the row max first, then exp and P @ V",
                # Pass 1 computes Q K^T a second time: 6 M N D flops instead of 4.
                flops=lambda s: 6.0 * s["M"] * s["N"] * s["D"],
                cases=(
                    Case("square_256", {"M": 256, "N": 256, "D": 64}, small, seed=7101, simulate=True),
                    Case("tail_1000", {"M": 1000, "N": 1000, "D": 64}, small, seed=7102),
                    Case("few_keys_100x37", {"M": 100, "N": 37, "D": 64}, small, seed=7103, simulate=True),
                    Case("long_keys_127x4099", {"M": 127, "N": 4099, "D": 64}, small, seed=7104),
                    # rectangular tiles, M != N != D, a tail in M and N: a key offset stepped by
                    # BLOCK_M instead of BLOCK_N fails here on the CPU too
                    Case("rect_150x100x32", {"M": 150, "N": 100, "D": 32}, rect, seed=7106, simulate=True),
                    Case("large_16384", {"M": 16384, "N": 16384, "D": 64}, large_two_pass, seed=7105, bench=True),
                ),
                **common,
            ),
            Kernel(
                function="flash_attention",
                concepts=(
                    gemm_calls(2, "both products, Q K^T and P V, computed with T.gemm on the Tensor Cores"),
                    reduces("max", "the row maxima of the scores taken with T.reduce_max"),
                ),
                title="Flash attention: one pass with the online softmax",
                flops=lambda s: 4.0 * s["M"] * s["N"] * s["D"],
                cases=(
                    Case("square_256", {"M": 256, "N": 256, "D": 64}, small, seed=7201, simulate=True),
                    Case("tail_1000", {"M": 1000, "N": 1000, "D": 64}, small, seed=7202),
                    Case("few_keys_100x37", {"M": 100, "N": 37, "D": 64}, small, seed=7203, simulate=True),
                    Case("long_keys_127x4099", {"M": 127, "N": 4099, "D": 64}, small, seed=7204, simulate=True),
                    Case("rect_150x100x32", {"M": 150, "N": 100, "D": 32}, rect, seed=7206, simulate=True),
                    # 80 KiB: a T4 block gets 64, so half as many keys per step there (48 KiB)
                    Case(
                        "large_16384",
                        {"M": 16384, "N": 16384, "D": 64},
                        large,
                        seed=7205,
                        bench=True,
                        for_gpus={"sm_75": {"BLOCK_N": 64}},
                    ),
                ),
                **common,
            ),
        ),
    )


# %% [markdown]
# ## What you learned
#
# - Two chained `T.gemm`s with the intermediate kept in registers; `transpose_B=True` for `Q K^T`.
# - Masking padded keys with -inf before a max and an exp.
# - The online softmax applied to an output accumulator: rescale everything summed so far when the
#   max grows. That is flash attention.
#
# **Next:** puzzle 08 looks inside `T.gemm`: how a matrix product is tiled, where its tiles live, and
# how copies overlap the math.

# %% [bench]

# %% [markdown]
# ## Experiments to try
#
# Each cell runs as it stands; change the numbers and run it again, and predict the result first.
# `bench(kernel, NAME=value, ...)` times your kernel on its bench case with those block parameters in
# place of the case's (it checks the kernel on that case first; the graded cases keep theirs); without
# a GPU it prints one line. The cells that compile need nvcc but no GPU.
#
# **1. What a stage costs.** The cell compiles the reference `flash_attention` at the bench case's size
# and block (BLOCK_M = 128, 256 threads) with one, two and three stages, and with 64 keys a step, and
# reads what each block asks of an SM (four compilations, about a minute on a CPU):

# %% [notebook]
# from grader.teaching.experiments import resource_usage, table
# from solutions.p07_flash_attention import flash_attention as reference_flash_attention
#
# # The bench case's sizes and block; put your own flash_attention here once its check passes.
# sizes = {"M": 16384, "N": 16384, "D": 64, "BLOCK_M": 128, "THREADS": 256}
# rows = [
#     resource_usage(reference_flash_attention, f"BLOCK_N={n}, STAGES={s}", **sizes, BLOCK_N=n, STAGES=s)
#     for n, s in ((128, 1), (128, 2), (128, 3), (64, 2))
# ]
# print(table(rows))

# %% [markdown]
# Each stage adds one K tile and one V tile to shared memory, BLOCK_N x D x 2 bytes each: 32 KiB at
# BLOCK_N = 128, which is the step between the first three rows. The Q tile and the barriers are the
# rest. The threads column shows 384, not 256: on Hopper TileLang adds a producer warpgroup that only
# issues the TMA copies, and moves registers from it to the warpgroups that compute (the `copy/math
# regs` column; puzzle 08 explains this warp specialization).
#
# **2. Stages on the GPU.** The bench case uses STAGES = 2: 0.1740 ms, 395.0 TFLOP/s, 0.90x torch, in
# the README's bench run (`python -m grader --solutions --bench`).

# %% [notebook]
# bench("flash_attention", STAGES=1)
# bench("flash_attention", STAGES=3)

# %% [markdown]
# With one stage there is one buffer per tile, but on Hopper the copies are issued by TileLang's
# producer warpgroup, which waits only until the consumers release a buffer: K is released right after
# `Q K^T`, so the next K tile loads while the softmax runs, and V right after `P @ V`, so the next V
# loads during the next `Q K^T` and softmax. Expect one stage to cost little, perhaps nothing. A third
# stage lets copies run two steps ahead, which helps only if two were not already enough to hide them,
# and costs another 32 KiB per block, which can leave room for fewer blocks on an SM.
#
# Measured on the H200 (`bash scripts/h200_sweeps.sh flash`, which times as `--bench` does, 2026-12-01):
# STAGES = 1 0.1685 ms (0.92x torch), STAGES = 2 0.1709 ms (0.91x), and 64 keys a step 0.2065 ms
# (0.76x). Writing the exponent as one fused multiply-add, `exp2(S * scale - max * scale)`
# (`scripts/p07/flash_ffma.py`), made it slower, 0.1798 ms: the multiply is not what limits it. Within
# each step the softmax (the row max, 128 x 128 exponentials, the row sum, the rescaling) runs on the
# CUDA cores between the two Tensor Core products, and nothing in this kernel overlaps it with them.
# FlashAttention-3 closes that gap on Hopper by letting two warpgroups take turns, one's softmax
# running while the other's products do; that scheduling is the step past this puzzle. TileLang's
# `T.Pipelined(..., order=[...], stage=[...])` can reorder one warpgroup's loop so that P @ V of one key
# tile is issued before the softmax of the next (`scripts/p07/flash_overlap.py`), but in TileLang 0.1.15
# a loop scheduled by hand loses the TMA copies and the producer warpgroup, and on the H200 it ran at
# 0.2222 ms, 0.71x (`bash scripts/h200_sweeps.sh flashoverlap`).
#
# **3. Fewer keys a step.**

# %% [notebook]
# bench("flash_attention", BLOCK_N=64)

# %% [markdown]
# Half the shared memory per stage (the last row of the table), and twice as many steps over the keys.
# Every step rescales the BLOCK_M x D accumulator and the running sums and reduces the scores across
# threads, whatever BLOCK_N is, so narrower steps spend more of the time on that bookkeeping and less
# on `T.gemm`. This is what the T4's profile uses, where 80 KiB per block does not fit (README, "Which
# GPU").
