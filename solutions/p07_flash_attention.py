"""Puzzle 07 · Flash attention: softmax(Q K^T / sqrt(D)) V without ever storing the scores.

Attention compares every query with every key. That gives an M x N matrix of scores, and for
long sequences it is far larger than Q, K, V and O together. Flash attention never writes it out.
One block owns BLOCK_M queries and walks the keys in tiles of BLOCK_N. So only one
BLOCK_M x BLOCK_N tile of scores exists at a time. This puzzle is the single-head, non-causal
version. Every product is computed element by element on the CUDA cores. Batches and heads are only
more indexing. A causal mask is more than that: a block can skip every key tile past its last query, about
half the work when M = N. The Tensor Core version is the last kernel of puzzle 08.

Inputs and output (fp16 in, fp16 out, every product and sum in fp32):

``Q`` is M x D, ``K`` and ``V`` are N x D. Output ``O`` of M x D with

    S = Q @ K^T / sqrt(D)                     (M x N scores)
    P[i, j] = exp(S[i, j] - max_j S[i, :])    (the max only keeps exp from overflowing)
    O[i, :] = sum_j P[i, j] * V[j, :] / sum_j P[i, j]

``attention_two_pass``
    The plain tiled version. Pass 1 walks the key tiles once and keeps only the row maxima m.
    It uses ``T.reduce_max`` with ``clear=False``, so each tile's maxima fold into the running
    ones. Pass 2 walks them again, now knowing m. For each tile it recomputes the scores and takes
    ``P = exp(S - m)``. It adds the row sums of P to l and ``P @ V`` to an fp32 accumulator. At the
    end ``O = acc / l``. Every exponent uses the final maximum, so nothing is ever corrected. But
    Q K^T is computed twice and K read twice.

``flash_attention``
    One pass. Before a tile is added, the maximum so far is updated to
    ``m_new = max(m_old, rowmax(S_tile))``. Everything already summed was taken relative to
    m_old. So the running sum l and the accumulator are multiplied by ``exp(m_old - m_new)``
    first. Then the tile's ``exp(S - m_new)`` and its ``P @ V`` are added. This is the online
    softmax of puzzle 06: the same result as the two-pass kernel, for half the score computation.

What it teaches: a matrix product written as a loop of multiply-adds over tiles in shared
memory, and a tile shared between threads through shared memory (P). It also teaches the
online-softmax rescaling of a whole accumulator, and masking. Sizes need not be multiples of the
blocks. ``T.copy`` reads zeros past the last key, so the scores of those padding keys come out
as 0, not as "absent". So they must be set to -inf before the max and the exp. Otherwise each
would add ``exp(0 - m)`` to the row sum. Every key tile holds at least one real key, so a row
maximum is never -inf.

The exp path: ``exp(x) = exp2(x * log2(e))``, and the GPU has a fast base-2 exponential. So
the kernels fold ``log2(e) / sqrt(D)`` into one constant and call ``T.exp2``.

Tolerance: atol 3e-3 x rms, rtol 2e-3, three times the default fp16 atol. Every product, sum and
weight stays in fp32 until O is rounded to fp16 once. That one rounding uses a small part of the
bound. You may round P to fp16 before it meets V, to halve its shared tile, as 08's Tensor Core
kernel must. At the default bound that failed one element in a million on the large case. The wider
bound leaves it room. The running sums are another matter: the accumulator and the row sums must be
fp32. A 16-bit sum can hide inside the bound over a few dozen keys. So the grader reads their dtype
from your kernel instead (docs/results/attention-precision.md has the figures).

Preconditions: D is the head size, 32 or 64 in the cases; the kernels take any D. M and N are
anything.
"""

# %% [markdown]
# ## Why this puzzle matters
#
# Attention is the core of a transformer. Its naive form is memory-bound for a silly reason. The
# M x N score matrix is far larger than Q, K, V and O together. At M = N = 16384 it is 268 million
# scores, 1 GiB in fp32, per head. All of it is written to memory and read back. Flash attention
# never stores it. One block owns BLOCK_M queries and walks the keys in tiles of BLOCK_N. Only one
# BLOCK_M x BLOCK_N tile of scores exists at a time. The output is built with the online softmax of
# puzzle 06. This is the algorithm of FlashAttention. It is one of the backends that torch's
# `scaled_dot_product_attention` (the bench baseline) dispatches to on a GPU.
#
# Per key tile the block computes two matrix products:
#
# $$S = Q K_{\text{tile}}^T / \sqrt{D}, \qquad \text{acc} \mathrel{+}= P\, V_{\text{tile}}, \quad P = e^{S - m}$$
#
# Here both are loops of multiply-adds on the CUDA cores. At each step every thread adds one product
# to each element of the result it holds. That way the lesson is the softmax bookkeeping, not the
# products. GPUs have Tensor Cores for such products. The Tensor Core version is the last kernel of
# puzzle 08, after the GEMM ladder has introduced them.

# %%
from __future__ import annotations

import math

import tilelang
import tilelang.language as T

from grader.concepts import reduces, sums_in_fp32
from grader.spec import ATTENTION_TOLERANCES, Case, Kernel, Puzzle, Tensor, tensor_bytes

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
# Pass 2 walks them again with m known. It recomputes S and takes `P = exp2((S - m) * scale)`. It adds
# the row sums of P to l and `P @ V` to an fp32 accumulator. At the end `O = acc / l`. Nothing is ever
# rescaled, but `Q K^T` is computed twice and K read twice.
#
# The tiles go to shared memory with `T.alloc_shared` and `T.copy`: Q's BLOCK_M rows, and each step's
# K and V tiles (BLOCK_N x D). They go there because every thread reads many of their elements. This
# is the first graded kernel with shared tiles; puzzles 01 and 06 only mentioned them. The scores are
# a loop over the head dimension. Each step adds one product to every score of the tile:
#
# ```python
# T.clear(S)
# for d in T.serial(D):
#     for i, c in T.Parallel(BLOCK_M, BLOCK_N):
#         S[i, c] += T.cast(Q_tile[i, d], T.float32) * T.cast(K_tile[c, d], T.float32)
# ```
#
# `acc += P V` has the same shape. The keys of the tile are its serial loop, and `(i, d)` is the
# parallel one. There is one catch. A fragment's element lives in the registers of the one thread
# that owns it. But `acc[i, d]` needs `P[i, c]` for every key c, and other threads hold those. So P
# goes through shared memory. `T.copy(S, P)` copies it into a BLOCK_M x BLOCK_N fp32 tile from
# `T.alloc_shared`. Every thread of the block can read that tile. TileLang puts the barrier between
# the writes and the reads.
#
# What to watch for:
# - Keys past N: `T.copy` reads zero rows of K, whose scores come out as 0, a perfectly ordinary
#   score. Set them to -inf (`T.if_then_else(j * BLOCK_N + c < N, ...)`) before the max and the exp.
#   Otherwise each adds `exp(0 - m)` to the row sum.
# - Start the row max at -inf (`T.fill(row_max, -T.infinity(T.float32))`). Clear S before each
#   tile's products (`T.clear(S)`: they add into it).
# - Keep the products, the output accumulator and the row sums in fp32 (`T.cast` each fp16 factor).
# - Fold `log2(e) / sqrt(D)` into one Python float and use `T.exp2`. Inside the `T.Kernel` body the
#   sizes from `T.const` are Python ints. So `math.sqrt(D)` and `math.log2(math.e)` work there.


# %% attention_two_pass
@tilelang.jit
def attention_two_pass(Q, K, V, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N, D = T.const("M, N, D")
    Q: T.Tensor((M, D), T.float16)
    K: T.Tensor((N, D), T.float16)
    V: T.Tensor((N, D), T.float16)
    O = T.empty((M, D), T.float16)  # noqa: E741 (O, the output, as in the formulas)

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        # TODO begin: pass 1 finds each row's max score, pass 2 sums exp(S - max) and P @ V
        scale = math.log2(math.e) / math.sqrt(D)  # exp(x / sqrt(D)) == exp2(x * scale)
        Q_tile = T.alloc_shared((BLOCK_M, D), T.float16)
        K_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        V_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        S = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        P = T.alloc_shared((BLOCK_M, BLOCK_N), T.float32)
        acc = T.alloc_fragment((BLOCK_M, D), T.float32)
        row_max = T.alloc_fragment((BLOCK_M,), T.float32)
        row_sum = T.alloc_fragment((BLOCK_M,), T.float32)

        T.copy(Q[bx * BLOCK_M, 0], Q_tile)
        T.fill(row_max, -T.infinity(T.float32))
        for j in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(K[j * BLOCK_N, 0], K_tile)
            T.clear(S)
            for d in T.serial(D):
                for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                    S[i, c] += T.cast(Q_tile[i, d], T.float32) * T.cast(K_tile[c, d], T.float32)
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                S[i, c] = T.if_then_else(j * BLOCK_N + c < N, S[i, c], -T.infinity(T.float32))
            T.reduce_max(S, row_max, dim=1, clear=False)

        T.clear(acc)
        T.clear(row_sum)
        for j in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(K[j * BLOCK_N, 0], K_tile)
            T.clear(S)
            for d in T.serial(D):
                for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                    S[i, c] += T.cast(Q_tile[i, d], T.float32) * T.cast(K_tile[c, d], T.float32)
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                S[i, c] = T.if_then_else(j * BLOCK_N + c < N, S[i, c], -T.infinity(T.float32))
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                S[i, c] = T.exp2((S[i, c] - row_max[i]) * scale)
            T.reduce_sum(S, row_sum, dim=1, clear=False)
            T.copy(S, P)
            T.copy(V[j * BLOCK_N, 0], V_tile)
            for c in T.serial(BLOCK_N):
                for i, d in T.Parallel(BLOCK_M, D):
                    acc[i, d] += P[i, c] * T.cast(V_tile[c, d], T.float32)

        for i, d in T.Parallel(BLOCK_M, D):
            acc[i, d] = acc[i, d] / row_sum[i]
        T.copy(acc, O[bx * BLOCK_M, 0])
        # TODO end

    return O


# %% [markdown]
# ## Kernel 2: `flash_attention`
#
# One pass. For each key tile, keep the old max and fold the tile into the running max. Compute the
# correction `c = exp2((m_old - m_new) * scale)` per row, then
#
# $$l \leftarrow c\, l + \sum_j P_{ij}, \qquad \mathrm{acc} \leftarrow c\, \mathrm{acc} + P\, V_{\mathrm{tile}}$$
#
# Puzzle 06 rescaled a running sum, a single number per row. The only difference here is that the
# accumulator being rescaled is a whole BLOCK_M x D tile of partial outputs. Half the `Q K^T` work of the
# two-pass kernel, K read once. The running max and its corrections along one row of scores:

# %% [notebook]
# from grader.teaching.pictures import online_softmax
#
# online_softmax(block=8, seed=3)


# %% flash_attention
@tilelang.jit
def flash_attention(Q, K, V, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N, D = T.const("M, N, D")
    Q: T.Tensor((M, D), T.float16)
    K: T.Tensor((N, D), T.float16)
    V: T.Tensor((N, D), T.float16)
    O = T.empty((M, D), T.float16)  # noqa: E741 (O, the output, as in the formulas)

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        # TODO begin: one pass over the key tiles with a running max, a running sum and rescaling
        scale = math.log2(math.e) / math.sqrt(D)  # exp(x / sqrt(D)) == exp2(x * scale)
        Q_tile = T.alloc_shared((BLOCK_M, D), T.float16)
        K_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        V_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        S = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        P = T.alloc_shared((BLOCK_M, BLOCK_N), T.float32)
        acc = T.alloc_fragment((BLOCK_M, D), T.float32)
        row_max = T.alloc_fragment((BLOCK_M,), T.float32)
        prev_max = T.alloc_fragment((BLOCK_M,), T.float32)
        correction = T.alloc_fragment((BLOCK_M,), T.float32)
        tile_sum = T.alloc_fragment((BLOCK_M,), T.float32)
        row_sum = T.alloc_fragment((BLOCK_M,), T.float32)

        T.copy(Q[bx * BLOCK_M, 0], Q_tile)
        T.clear(acc)
        T.clear(row_sum)
        T.fill(row_max, -T.infinity(T.float32))
        for j in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(K[j * BLOCK_N, 0], K_tile)
            T.clear(S)
            for d in T.serial(D):
                for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                    S[i, c] += T.cast(Q_tile[i, d], T.float32) * T.cast(K_tile[c, d], T.float32)
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                S[i, c] = T.if_then_else(j * BLOCK_N + c < N, S[i, c], -T.infinity(T.float32))

            T.copy(row_max, prev_max)
            T.reduce_max(S, row_max, dim=1, clear=False)
            for i in T.Parallel(BLOCK_M):
                correction[i] = T.exp2((prev_max[i] - row_max[i]) * scale)
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                S[i, c] = T.exp2((S[i, c] - row_max[i]) * scale)
            T.reduce_sum(S, tile_sum, dim=1)
            for i in T.Parallel(BLOCK_M):
                row_sum[i] = row_sum[i] * correction[i] + tile_sum[i]
            for i, d in T.Parallel(BLOCK_M, D):
                acc[i, d] = acc[i, d] * correction[i]

            T.copy(S, P)
            T.copy(V[j * BLOCK_N, 0], V_tile)
            for c in T.serial(BLOCK_N):
                for i, d in T.Parallel(BLOCK_M, D):
                    acc[i, d] += P[i, c] * T.cast(V_tile[c, d], T.float32)

        for i, d in T.Parallel(BLOCK_M, D):
            acc[i, d] = acc[i, d] / row_sum[i]
        T.copy(acc, O[bx * BLOCK_M, 0])
        # TODO end

    return O


# %% cases
# ---------------------------------------------------------------------------------- cases

_Q = Tensor("Q", ("M", "D"), "float16")
_K = Tensor("K", ("N", "D"), "float16")
_V = Tensor("V", ("N", "D"), "float16")
_O = Tensor("O", ("M", "D"), "float16")


def puzzle() -> Puzzle:
    small = {"BLOCK_M": 64, "BLOCK_N": 64}
    rect = {"BLOCK_M": 32, "BLOCK_N": 16}
    # 64 x 64 scores and a 64 x 64 accumulator over 256 threads: 16 of each per thread, in registers
    large = {"BLOCK_M": 64, "BLOCK_N": 64, "THREADS": 256}
    # One head has only M / BLOCK_M blocks: 16384 queries make 256 of them for the H200's 132 SMs (4096
    # would leave half the SMs idle); 4096 keys keep a kernel on the CUDA cores in milliseconds.
    common = dict(
        inputs=(_Q, _K, _V),
        outputs=(_O,),
        reference=attention_reference,
        baseline=torch_attention,
        tolerances=ATTENTION_TOLERANCES,
        bytes_moved=lambda s: tensor_bytes((_Q, _K, _V, _O), s),
        tiles={"O": ("BLOCK_M", None)},
    )

    def cases(seed: int) -> tuple[Case, ...]:
        return (
            Case("square_128", {"M": 128, "N": 128, "D": 64}, small, seed=seed + 1),
            Case("tail_1000", {"M": 1000, "N": 1000, "D": 64}, small, seed=seed + 2),
            # fewer keys and fewer queries than one tile: most of the only key tile is padding
            Case("few_keys_50x37", {"M": 50, "N": 37, "D": 64}, small, seed=seed + 3, simulate=True),
            Case("long_keys_127x4099", {"M": 127, "N": 4099, "D": 64}, small, seed=seed + 4),
            # rectangular tiles, M != N != D, a tail in M and N, five key tiles: a key offset stepped
            # by BLOCK_M instead of BLOCK_N, a max restarted at -inf on every tile, or an accumulator
            # or a sum not rescaled fails here
            Case("rect_40x70x32", {"M": 40, "N": 70, "D": 32}, rect, seed=seed + 6, simulate=True),
            # large logits (Q x 100: scores / sqrt(D) of about 100), three key tiles with a tail, two query
            # tiles: a max that is only the current tile's (T.reduce_max's default clear=True) gives the
            # same numbers on ordinary scores, since softmax allows any value subtracted, and overflows
            # here, where an earlier tile's scores lie far above a later tile's max
            Case(
                "large_logits_70x150",
                {"M": 70, "N": 150, "D": 64},
                small,
                seed=seed + 7,
                simulate=True,
                scales={"Q": 100.0},
            ),
            Case("large_16384x4096", {"M": 16384, "N": 4096, "D": 64}, large, seed=seed + 5, bench=True),
        )

    return Puzzle(
        id="07",
        title="Flash attention",
        kernels=(
            Kernel(
                function="attention_two_pass",
                concepts=(reduces("max", "the row maxima of the scores taken with T.reduce_max"), sums_in_fp32()),
                title="Attention in two passes: the row max first, then exp and P @ V",
                # Pass 1 computes Q K^T a second time: 6 M N D flops instead of 4.
                flops=lambda s: 6.0 * s["M"] * s["N"] * s["D"],
                cases=cases(7100),
                **common,
            ),
            Kernel(
                function="flash_attention",
                concepts=(reduces("max", "the row maxima of the scores taken with T.reduce_max"), sums_in_fp32()),
                title="Flash attention: one pass with the online softmax",
                flops=lambda s: 4.0 * s["M"] * s["N"] * s["D"],
                cases=cases(7200),
                **common,
            ),
        ),
    )


# %% [markdown]
# ## What you learned
#
# - A matrix product as a serial loop of multiply-adds over tiles in shared memory, each thread
#   updating the scores it holds (16 at the bench case).
# - A tile that other threads must read goes through shared memory, not a fragment.
# - Masking padded keys with -inf before a max and an exp.
# - The online softmax applied to an output accumulator: rescale everything summed so far when the
#   max grows. That is flash attention.
#
# **Next:** puzzle 08 looks at matrix products on their own. It covers how they are tiled, where the
# tiles live, how copies overlap the math, and the Tensor Cores. The Tensor Core version of this kernel is the last
# kernel of puzzle 08.

# %% [bench]

# %% [markdown]
# ## Experiments to try
#
# Each cell runs as it stands; change the numbers and run it again, and predict the result first.
# `bench(kernel, NAME=value, ...)` times your kernel on its bench case, with those block parameters in
# place of the case's. It checks the kernel on that case first; the graded cases keep theirs. Without
# a GPU it prints one line. The cells that compile need nvcc but no GPU.
#
# **1. What a block holds.** Each thread keeps its share of the BLOCK_M x BLOCK_N scores and of the
# BLOCK_M x D accumulator in registers. Shared memory holds the Q, K and V tiles and P. The cell
# compiles the reference `flash_attention` at the bench case's size with four blocks. It reads what
# each asks of an SM (four compilations, about a minute on a CPU). Predict: which rows need the most
# registers per thread, and which the most shared memory?

# %% [notebook]
# from grader.teaching.experiments import resource_usage, table
# from solutions.p07_flash_attention import flash_attention as reference_flash_attention
#
# # The bench case's sizes; put your own flash_attention here once its check passes.
# sizes = {"M": 16384, "N": 4096, "D": 64}
# blocks = ((64, 64, 256), (64, 64, 128), (128, 64, 256), (64, 32, 256))
# rows = [
#     resource_usage(reference_flash_attention, f"{m}x{n}, {t} threads", **sizes, BLOCK_M=m, BLOCK_N=n, THREADS=t)
#     for m, n, t in blocks
# ]
# print(table(rows))

# %% [measured]
# Registers follow the elements per thread: (BLOCK_M x BLOCK_N + BLOCK_M x D) / THREADS fp32 values,
# plus addresses and the loop's temporaries. Halving the threads doubles each thread's share, and the
# register count grows with it. Shared memory follows the tiles alone: BLOCK_M x D and two
# BLOCK_N x D fp16 tiles, and BLOCK_M x BLOCK_N fp32 for P, whatever the thread count. The MMA column
# says none: every product runs on the CUDA cores.

# %% [markdown]
# **2. One pass or two.** Predict: the two-pass kernel does 1.5 times the flops of `flash_attention`
# (Q K^T twice). Is it 1.5 times slower, or does the rescaling the one-pass kernel adds per tile
# eat part of the gain?

# %% [notebook]
# bench("attention_two_pass")
# bench("flash_attention")

# %% [measured]
# On the H200, one launch of each at the bench case under Nsight Compute (docs/results/h200-profiles.md,
# 2026-12-03): `attention_two_pass` 2,581.4 µs, `flash_attention` 1,442.2 µs, 1.8 times, more than the
# flops alone (the second walk reads K again too). Neither is held back by its multiply-adds: the FMA pipe
# is busy 22% and 26% of the time. 85% and 80% of their shared-memory wavefronts are bank-conflict
# replays, and their most common stall is a wait for shared memory (short scoreboard). The score loop
# shows why. As TileLang compiles it, each thread holds 16 scores, 4 queries by 4 keys, and the 16 threads
# of a half-warp read `K_tile` at the same `d` from 16 different key rows, 512 bytes apart
# (`K_tile[(threadIdx.x & 15) * 256 + ... + d]` in the CUDA): one bank of shared memory's 32, so each
# such read is served 16 times over. A K tile laid out so that those rows fall in different banks
# (padded rows, or the tile stored transposed) removes most replays; puzzle 08's Tensor Core kernel
# reads its tiles through layouts TileLang chooses for the MMA instead.

# %% [markdown]
# **3. Other blocks.** Half as many keys per tile (BLOCK_N = 32) halves the scores each thread holds.
# But it doubles the number of tiles, and with them the per-tile steps. Those are the row max and sum
# across threads, the rescaling of the accumulator, and the barriers. Twice as many queries per block
# (BLOCK_M = 128) let each K and V element loaded into shared memory serve twice as many rows. That
# comes with half as many blocks and more registers per thread. Predict: which of the two is faster than the
# bench case's 64 x 64, and why?

# %% [notebook]
# bench("flash_attention", BLOCK_N=32)
# bench("flash_attention", BLOCK_M=128)

# %% [measured]
# On the H200 (docs/results/p07-blocks.md), `flash_attention` at the bench case takes 1.4444 ms with
# 64 x 64; BLOCK_N = 32 takes 1.9438 ms and BLOCK_M = 128 takes 1.8414 ms. Both lose. But neither the
# key tiles nor the number of blocks explains it alone. With 128 threads, 64 x 32 takes 1.1057 ms, the
# fastest block tried. 128 x 32 with 256 threads takes 1.1430 ms, with as many blocks as 128 x 64.
# Nor do bank conflicts: the static profile's worst is 8-way at all three blocks of 32 keys. Why the
# blocks differ this much has not been profiled. Experiment 1's table shows what each block asks of
# an SM.

# %% [markdown]
# **4. Find the conflict, then fix it.** A profile says where a kernel's time goes. Without a GPU,
# `static=True` estimates it from the code TileLang generates. Run the cell on your `flash_attention`
# and find the row "worst shared-memory bank conflict". Predict first: which tile does the score loop
# read from one bank?
#
# Then give that tile two more columns, one 4-byte word a row. Allocate it as
# `K_tile = T.alloc_shared((BLOCK_N, D + 2), T.float16)`, filled with
# `T.copy(K[j * BLOCK_N : (j + 1) * BLOCK_N, 0:D], K_tile[:, 0:D])`. Check the kernel again, then
# profile it again. Which row changed, and to what? On a GPU, also time both kernels with
# `bench("flash_attention")`, and predict first: if the replays are what the kernel waits on, how much
# of its time should go?

# %% [notebook]
# from grader.nb import profile
#
# profile("flash_attention", static=True)

# %% [measured]
# The estimate for the course's kernel reads "16-way, K_tile read". With rows of D + 2 the worst access
# drops to 2-way: the 16 lanes' key rows now land four banks apart, two lanes a bank. The kernel still
# passes. On an H100 (docs/results/p07-k-tile-padded.md, 2026-12-06), timed turn by turn with the
# course's kernel, the padded one takes 0.6443 and 0.6452 ms at the bench case against 1.3990 and
# 1.3922 ms: 2.2 times as fast. Its profile shows why. The FMA pipe is busy 56% of the time instead of
# 26%, 38% of the shared-memory wavefronts are replays instead of 80%, and the top stall is no longer a
# wait for shared memory (short scoreboard, 63% for the course's kernel). The course's reference keeps
# its conflict, so that this experiment has one to find.
