"""Puzzle 06 · Softmax: a numerically stable row softmax, in one pass and for rows of any length.

Softmax turns a row of scores into probabilities. Examples are attention weights, the output of
a classifier and the mixture weights of a router. It combines two reductions (a max and a sum)
with an elementwise exponential. It is where learners first meet numerical stability.

Input and output (fp16 in, fp16 out, all arithmetic in fp32):

``softmax``
    ``A`` is M x N. Output ``C`` of M x N with
    ``C[i, j] = exp(A[i, j] - m_i) / sum_k exp(A[i, k] - m_i)`` where ``m_i = max_k A[i, k]``.
    Precondition: ``N <= BLOCK_N``, so a whole row fits in one tile. The kernel reads A once
    and writes C once. Each block owns BLOCK_M rows. It copies the tile, runs ``T.reduce_max``
    along the row, exponentiates and runs ``T.reduce_sum``. Then it multiplies by the reciprocal
    of the sum and copies out.

``softmax_online``
    The same softmax with no limit on N. What changed: a row no longer fits in one tile, so
    the block walks it in BLOCK_N steps twice. The first walk keeps, per row, a running max
    ``m`` and a running sum ``l`` of ``exp(x - m)``. A tile may raise the max from ``m`` to
    ``m'``. The sum gathered so far was measured against the old max. So it is rescaled by
    ``exp(m - m')`` before the tile's own sum is added. This is the "online softmax" of Milakov
    and Gimelshein, also the heart of flash attention in puzzle 07. The second walk reads each
    tile again and writes ``exp(x - m) / l``. A is read twice, C written once. (--bench counts
    A once, so its GB/s for this kernel leaves out the second read.)

Why subtract the max: exp overflows float32 past 88.7 (and float16 past 11.1). But
``exp(x - m)`` lies in (0, 1] for every x, whatever the scale of the scores. The result is
mathematically unchanged. Most graded inputs are N(0, 1). The ``large_logits`` cases scale
them by 100, so a kernel that skips the max overflows there.

The exponential: ``T.exp2`` maps to the GPU's native base-2 exponential. Multiply the inputs by
log2(e) once as they are loaded, since ``exp(x) = exp2(x * log2(e))``. Take the max of the
scaled values. The rest of the kernel then works in base 2 with the same result.

The tail: ``T.copy`` reads zeros past the edge of A. Yet a zero is NOT neutral here: it would
add ``exp(0 - m)`` to every sum. Columns at or past N must become ``-inf`` before the max, so
that their exponential is exactly 0. Use ``T.if_then_else`` on the column index in the
T.Parallel loop that scales the tile. Rows past M need nothing: their writes are dropped.

What it teaches: two reductions in one kernel, and broadcasting a per-row value back over the
row. It shows why and how to subtract the max. It masks a partial tile with the right neutral
value: -inf is neutral for the max, and its exponential 0 is neutral for the sum. It introduces
the online rescaling trick. It reads the row once (one tile), which is what sets the time of a
memory-bound kernel. And it multiplies by one reciprocal per row instead of dividing every
element, which saves instructions, not bytes. The baseline is ``torch.softmax(A, dim=1)`` on the fp16 tensor.

Preconditions: ``softmax`` needs N <= BLOCK_N; ``softmax_online`` has none. M and N need not be
multiples of the block sizes. Bench cases are 256 MiB of fp16, larger than the H200's L2.
"""

# %% [markdown]
# ## Why this puzzle matters
#
# Softmax turns scores into probabilities: attention weights, classifier outputs, router weights.
# It is two reductions (a max and a sum) around an element-wise exponential. It is also the place
# where numerical stability stops being optional:
#
# $$\mathrm{softmax}(x)_j = \frac{e^{x_j - m}}{\sum_k e^{x_k - m}}, \qquad m = \max_k x_k$$
#
# Subtracting m changes nothing mathematically. It keeps every exponent at or below 0, so nothing
# overflows (exp passes fp32's range at 88.7). It is memory-bound: the ideal kernel reads each score
# once and writes each probability once.

# %% [markdown]
# ## Why subtract the max
#
# Multiplying the numerator and the denominator by the same $e^{-m}$ changes nothing:
#
# $$\frac{e^{x_j}}{\sum_k e^{x_k}} = \frac{e^{x_j - m}}{\sum_k e^{x_k - m}}$$
#
# With $m$ the row's max, every exponent $x_j - m$ is at most 0. So every term lies in (0, 1], and the
# max's own term is exactly $e^0 = 1$. The sum lies between 1 and N. Nothing can overflow and the
# division never divides by zero, whatever the scale of the scores. Without the max, `exp` returns inf
# once its argument passes the log of the largest number the dtype holds. One inf in a row makes the
# sum inf, and every probability of that row 0 or NaN (inf / inf). The cell computes those
# thresholds. Then it computes the softmax of row 0 of the graded case `large_logits_64x256`, from the
# same seeded inputs the grader draws. That case multiplies its N(0, 1) inputs by 100
# (`scales={"A": 100.0}` in the cases below). Each kernel has one such case; its other cases are plain N(0, 1).

# %% [notebook]
# import math
#
# import torch
#
# from grader.pipeline.inputs import make_inputs
# from solutions.p06_softmax import puzzle
#
# for dtype in (torch.float32, torch.float16):
#     largest = torch.finfo(dtype).max
#     print(f"largest {str(dtype)[6:]}: {largest:.5g}, so exp(x) is inf past x = {math.log(largest):.2f}")
# x = torch.tensor([10.0, 11.0, 12.0, 88.0, 89.0])
# print("x:        ", x.tolist())
# print("exp, fp32:", torch.exp(x).tolist())
# print("exp, fp16:", torch.exp(x.half()).tolist())
#
# kernel = puzzle().kernels[0]  # softmax
# case = next(c for c in kernel.cases if c.name == "large_logits_64x256")
# (A,) = make_inputs(kernel, case, "cpu")  # the graded case's own inputs: its seed, its scale
# print(f"\n{case.name}: N(0, 1) times {case.scales['A']:g}, largest |A| = {A.abs().max().item():g}")
# row = A[0].float()
# e = torch.exp(row)
# print(f"row 0 without the max: sum = {e.sum().item()}, {torch.isnan(e / e.sum()).sum().item()} NaN of {row.numel()}")
# e = torch.exp(row - row.max())
# print(f"row 0 with the max:    sum = {e.sum().item():.6f}, probabilities add up to {(e / e.sum()).sum().item():.6f}")

# %% [markdown]
# Terms far below the max underflow to 0 instead, since fp32 holds nothing between 0 and about
# 1.4e-45. That is harmless: fp16 cannot show a probability below about 6e-8 anyway.
#
# ## Where fp32 matters
#
# The inputs and outputs are fp16; everything in between is fp32. Two places show why, on the graded
# cases' own inputs and the grader's own tolerance. For an fp16 output that tolerance is
# `|out - ref| <= 1e-3 * rms(ref) + 2e-3 * |ref|`.
#
# **Scaling and subtracting.** fp16 keeps 10 bits after the leading one. So its spacing grows with the
# magnitude: 0.5 between 512 and 1024. On `large_logits_64x256`, `x * log2(e)` reaches about 580. So
# in fp16 it is off by up to 0.25 before the max is subtracted. `exp2` of that error is a factor of up
# to $2^{0.25} \approx 1.19$ on the probability. The spacing of fp32 at 580 is about 6e-5:

# %% [notebook]
# import torch
#
# from grader.pipeline.inputs import make_inputs
# from grader.spec import DEFAULT_TOLERANCES
# from solutions.p06_softmax import LOG2E, puzzle
#
# tolerance = DEFAULT_TOLERANCES["float16"]  # what the grader allows an fp16 output
#
#
# def outside(out, ref):
#     """How many elements miss |out - ref| <= atol * rms(ref) + rtol * |ref|, the grader's test."""
#     allowed = tolerance.atol * ref.pow(2).mean().sqrt() + tolerance.rtol * ref.abs()
#     return int(((out.double() - ref).abs() > allowed).sum())
#
#
# kernel = puzzle().kernels[0]
# for case in kernel.cases[:2]:  # square_256 (N(0, 1)) and large_logits_64x256 (N(0, 1) times 100)
#     (A,) = make_inputs(kernel, case, "cpu")
#     ref = A.double().softmax(dim=1)
#     for dtype in (torch.float32, torch.float16):
#         x = A.to(dtype) * LOG2E  # scale and subtract the max in this dtype ...
#         x = x - x.max(dim=1, keepdim=True).values
#         p = torch.exp2(x.float())  # ... then everything else in fp32
#         out = (p / p.sum(dim=1, keepdim=True)).half()
#         name = str(dtype)[6:]
#         print(f"{case.name:20} x * log2(e) - max in {name}: {outside(out, ref):3} of {ref.numel()} outside")

# %% [markdown]
# Only the few large probabilities of each row are hit, but those are the ones that matter. The rest
# are so small that the absolute part of the tolerance covers them. On N(0, 1) inputs fp16 would have
# passed. A kernel that is wrong only at large magnitudes needs a case at large magnitudes to be caught.
#
# **The sum.** Every addition rounds to the accumulator's dtype. The rounding error is relative to the
# running total, not to the term being added. Once an fp16 total passes 128, its spacing is 0.125. A
# term below half of that is rounded away entirely. On a row of 8192 N(0, 1) scores most terms
# $e^{x - m}$ are a few hundredths. The cell adds the same terms three ways. The first two follow the
# order `T.reduce_sum` uses on the GPU, in fp32 and in fp16. Each thread adds its own elements, then a
# butterfly runs across the threads. The third is in fp16, with one accumulator walking the row.
# Predict: which fp16 sum ends farther from the fp32 one, and is either outside the tolerance?

# %% [notebook]
# import torch
#
#
# def threads_then_tree(p, dtype, threads):
#     """Row sums added the way T.reduce_sum adds on the GPU: each thread its own elements, one after
#     another, then a butterfly across the threads (half of the partial sums added to the other half at
#     each level). Every addition rounds to dtype."""
#     parts = p.to(dtype).reshape(p.shape[0], threads, -1)
#     acc = torch.zeros(parts.shape[:2], dtype=dtype)
#     for k in range(parts.shape[2]):
#         acc = acc + parts[:, :, k]
#     while acc.shape[1] > 1:
#         acc = acc[:, : acc.shape[1] // 2] + acc[:, acc.shape[1] // 2 :]
#     return acc[:, 0]
#
#
# def one_accumulator(p, dtype):
#     """One running sum walking the whole row."""
#     acc = torch.zeros(p.shape[0], dtype=dtype)
#     for k in range(p.shape[1]):
#         acc = acc + p[:, k].to(dtype)
#     return acc
#
#
# generator = torch.Generator().manual_seed(0)
# print(f"{'N':>6} {'threads':>7}  median relative error of the row sums")
# for n, threads in ((256, 32), (8192, 256)):
#     a = torch.randn(64, n, generator=generator).half().double()
#     p = torch.exp(a - a.max(dim=1, keepdim=True).values)  # the terms, each in (0, 1]
#     exact = p.sum(dim=1)
#     for label, sums in (
#         ("fp32, threads then tree", threads_then_tree(p, torch.float32, threads)),
#         ("fp16, threads then tree", threads_then_tree(p, torch.float16, threads)),
#         ("fp16, one accumulator  ", one_accumulator(p, torch.float16)),
#     ):
#         error = ((sums.double() - exact).abs() / exact).median().item()
#         print(f"{n:6} {threads:7}  {label}: {error:.1e}  (row 0: {sums[0].item():.2f}, exact {exact[0].item():.2f})")

# %% [measured]
# The GPU's order keeps every partial sum small, so an fp16 sum is off by about 2e-4 here: not yet
# outside the tolerance, but a tenth of it gone before the output is even rounded. One fp16 accumulator
# walking the row loses a quarter of the sum at N = 8192, and an error in the sum is the same relative
# error in every probability of the row.

# %% [markdown]
# An fp32 accumulator costs nothing here: the kernel waits on memory, not on arithmetic. So the
# fragments that hold the row, its max and its sum are all fp32.
#
# The grader does not refuse fp16 exponentials summed with `T.reduce_sum`. Measured on rows of 129 to
# 32768 (docs/results/fp16-sums.md), their worst error is 0.58 to
# 0.84 of what the fp16 tolerance allows. So the numbers pass. The tolerance is there to admit what an
# fp16 output's rounding cannot tell apart. One fp16 running sum walking the row fails at every
# size from 129 on (1.05 to 406 times the tolerance).

# %%
from __future__ import annotations

import math

import tilelang
import tilelang.language as T

from grader.concepts import reduces, sums_in_fp32
from grader.spec import Case, Kernel, Puzzle, Tensor, tensor_bytes

LOG2E = math.log2(math.e)

# ---------------------------------------------------------------- references (run on float64)


def softmax_reference(A):
    return A.softmax(dim=1)


def torch_softmax(A):
    """What --bench times against: torch at the kernel's own dtypes."""
    return A.softmax(dim=1)


# -------------------------------------------------------------------------------- kernels


# %% [markdown]
# ## Kernel 1: `softmax`, a row in one tile
#
# Each block owns BLOCK_M whole rows (`N <= BLOCK_N`). Copy the tile and scale it by log2(e) into a
# float32 fragment. Run `T.reduce_max` along the row and replace each value by `T.exp2(x - max)`.
# Then run `T.reduce_sum`, and multiply by one reciprocal per row instead of dividing every element.
# That saves instructions, not bytes. A per-row fragment (`max[i]`, `sum[i]`) used in a 2-D `T.Parallel`
# is broadcast along the row.
#
# What to watch for:
# - **The padding**: `T.copy` fills the columns past N with zeros. Zero is not neutral here: each
#   would add `exp(0 - m)` to the sum. Set them to `-T.infinity(T.float32)` before the max, with
#   `T.if_then_else` on the column index. The value -inf is neutral for the max, and its exponential,
#   0, is neutral for the sum.
# - `T.exp2` is the GPU's native exponential. Since `exp(x) = exp2(x * log2(e))`, scaling once at
#   load time turns the whole kernel into base 2. The result is the same.


# %% softmax
@tilelang.jit
def softmax(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        # TODO begin: one block computes the softmax of BLOCK_M whole rows (N <= BLOCK_N)
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        x = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        row_max = T.alloc_fragment((BLOCK_M,), T.float32)
        row_sum = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(A[bx * BLOCK_M, 0], tile)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            x[i, j] = T.if_then_else(j < N, T.cast(tile[i, j], T.float32) * LOG2E, -T.infinity(T.float32))
        T.reduce_max(x, row_max, dim=1)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            x[i, j] = T.exp2(x[i, j] - row_max[i])
        T.reduce_sum(x, row_sum, dim=1)
        for i in T.Parallel(BLOCK_M):
            row_sum[i] = 1.0 / row_sum[i]
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            tile[i, j] = T.cast(x[i, j] * row_sum[i], T.float16)
        T.copy(tile, C[bx * BLOCK_M, 0])
        # TODO end

    return C


# %% [markdown]
# ## What `T.reduce_max` does with a fragment
#
# A fragment (`T.alloc_fragment`) is a tile held in registers, spread over the block's threads. Each
# thread holds some of its elements. TileLang's layout inference decides which, from the operations
# that touch the fragment. Here that is the `T.copy` from A, which wants wide contiguous loads.
# `T.reduce_max(x, row_max, dim=1)` then works in two steps:
#
# 1. Each thread takes the max of the elements it holds of each row, in its own registers.
# 2. The threads that share a row combine their partial maxima with `tl::AllReduce`. It is a butterfly
#    in which each thread reads a partner's register with a warp shuffle, the partner's distance
#    halving each step. The steps that cross warps add a round through a small shared-memory workspace
#    and a barrier.
#
# Every thread that holds part of row i ends up with `row_max[i]`. So `x[i, j] - row_max[i]` in a
# `T.Parallel` loop is a register read: broadcasting a per-row value costs nothing. `T.reduce_sum` works
# the same way. The cell prints the declarations and the max reduction from the CUDA that TileLang
# generates. It does so for the block of `square_256` and for the block of the bench case:

# %% [notebook]
# from grader.teaching.experiments import kernel_source
# from solutions.p06_softmax import softmax as reference_softmax
#
# for blocks in (
#     {"M": 256, "N": 256, "BLOCK_M": 16, "BLOCK_N": 256, "THREADS": 128},  # square_256's block
#     {"M": 16384, "N": 8192, "BLOCK_M": 1, "BLOCK_N": 8192, "THREADS": 256},  # the bench case's block
# ):
#     print(blocks)
#     for line in kernel_source(reference_softmax, **blocks).splitlines():
#         if any(key in line for key in ("half_t tile[", "float x[", "float row_max[", "AllReduce<tl::MaxOp")):
#             print("   ", line.strip()[:120])

# %% [markdown]
# How to read it. At 16 x 256 with 128 threads, each thread loads 16 bytes (8 fp16 values) at a time.
# It holds 32 elements: 8 consecutive columns of each of 4 rows (`row_max[4]`). The 32 threads of one
# warp share each row, so the reduction is `AllReduce<tl::MaxOp, 32, ...>`, shuffles only. At 1 x 8192
# with 256 threads, each thread holds 32 elements of the one row, and all 256 threads share it.
# `AllReduce<tl::MaxOp, 256, ...>` crosses eight warps, hence the workspace pointer. Either way the
# row stays in registers: 32 fp32 values of `x` and 32 fp16 values of `tile` per thread. It is read
# from memory once.

# %% [markdown]
# ## Kernel 2: `softmax_online`, rows of any length
#
# What changed: a row no longer fits in a tile. The max is not known until the row has been read.
# The online softmax (Milakov and Gimelshein) keeps, per row, a running max m and a running sum l of
# `exp(x - m)`. When a tile raises the max to m', everything summed so far was measured against the
# old m. So it is rescaled first:
#
# $$m' = \max(m, \max_{\text{tile}} x), \qquad l' = l\, e^{m - m'} + \sum_{\text{tile}} e^{x - m'}$$
#
# A second walk then reads each tile again and writes `exp(x - m) / l`. A is read twice and C written
# once. That is 6 bytes of memory traffic per element instead of 4. It is the price of rows longer than
# a tile. The picture follows m and l across the tiles of one row:

# %% [notebook]
# from grader.teaching.pictures import online_softmax
#
# online_softmax(block=8)

# %% [markdown]
# ### The recurrence, step by step
#
# Call the state after some tiles (m, l). Here m is the max of everything read so far. And
# $l = \sum_{\text{seen}} e^{x - m}$ is the sum of what was read, measured against that max. Moving a
# sum to another reference point is one multiplication:
#
# $$\sum_{\text{seen}} e^{x - m'} = e^{m - m'} \sum_{\text{seen}} e^{x - m} = e^{m - m'}\, l$$
#
# Reading the next tile, with values y:
#
# 1. The new max is $m' = \max(m, \max_y y)$, the max of the values seen and the tile's.
# 2. The old sum moves to the new reference: $l\, e^{m - m'}$. Since $m' \ge m$ the factor lies in
#    (0, 1]. The rescaling only ever shrinks l, and it is exactly 1 when the tile did not raise the max.
# 3. The tile's own terms are taken against the new max, $\sum_y e^{y - m'}$, each in (0, 1].
# 4. The new sum is $l' = l\, e^{m - m'} + \sum_y e^{y - m'}$, and (m', l') now describes everything
#    read.
#
# So after the last tile, m is the row's max and l is $\sum_k e^{x_k - m}$. Both statistics of the
# safe softmax come from one walk. The walk starts from m = -inf and l = 0. On the first tile the factor
# is $e^{-\infty} = 0$, and l' is the tile's own sum. The first tile always holds at least one real
# column, so m is finite from then on. Hence -inf - (-inf), which is NaN, never occurs. The kernel works
# in base 2: its m is the max of `x * log2(e)` and its factor `exp2(m - m')`. Its l is the same number.
#
# Two partial states merge by the same rule, whatever parts of the row they cover. The rule is
# $m = \max(m_a, m_b)$, $l = l_a e^{m_a - m} + l_b e^{m_b - m}$. The tile loop is the case where one part
# is a single tile. The rule also lets threads, warps or whole blocks each summarise a piece of a row.
# They combine their states afterwards, in any order. The cell runs the recurrence in float64 on a row
# of 1000 in tiles of 64. Then it runs it without the rescaling, then in base 2, then as a tree of
# merges:

# %% [notebook]
# import math
#
# import torch
#
# generator = torch.Generator().manual_seed(0)
# trend = torch.linspace(0, 6, 1000, dtype=torch.float64)  # the max keeps rising along the row
# row = torch.randn(1000, generator=generator, dtype=torch.float64) * 3 + trend
# true_max = row.max().item()
# true_sum = torch.exp(row - true_max).sum().item()
#
# m, l = -math.inf, 0.0  # before the first tile
# unscaled = 0.0  # the same walk without the rescaling (the bug in softmax_online_no_rescale)
# for tile in row.split(64):  # 16 tiles: 15 of 64 columns and a last one of 40
#     new_m = max(m, tile.max().item())
#     tile_sum = torch.exp(tile - new_m).sum().item()
#     l = l * math.exp(m - new_m) + tile_sum  # exp(-inf) = 0 on the first tile
#     unscaled += tile_sum
#     m = new_m
# print(f"running max {m:.6f}    row max {true_max:.6f}")
# print(f"running sum {l:.12f}    exact {true_sum:.12f}    relative difference {abs(l - true_sum) / true_sum:.1e}")
# print(f"without the rescaling {unscaled:.6f}: {unscaled / true_sum:.2f} times too large")
#
# # Base 2, as the kernel does it: m is in units of log2(e), l is the same number.
# x2 = row * math.log2(math.e)
# m2, l2 = -math.inf, 0.0
# for tile in x2.split(64):
#     new_m2 = max(m2, tile.max().item())
#     l2 = l2 * 2 ** (m2 - new_m2) + torch.exp2(tile - new_m2).sum().item()
#     m2 = new_m2
# print(f"base 2: m2 / log2(e) = {m2 / math.log2(math.e):.6f}, l2 = {l2:.12f}")
#
#
# def merge(a, b):
#     """Two partial states (max, sum) of disjoint parts of a row -> the state of both parts."""
#     (ma, la), (mb, lb) = a, b
#     mm = max(ma, mb)
#     return mm, la * math.exp(ma - mm) + lb * math.exp(mb - mm)
#
#
# # Any split, merged in any order: tiles of 7 columns, merged pairwise like a tree.
# states = [(t.max().item(), torch.exp(t - t.max()).sum().item()) for t in row.split(7)]
# while len(states) > 1:
#     states = [merge(*states[i : i + 2]) if i + 1 < len(states) else states[i] for i in range(0, len(states), 2)]
# print(f"tree of {len(row.split(7))} partial states: max {states[0][0]:.6f}, sum {states[0][1]:.12f}")

# %% [markdown]
# ### By hand: six numbers in two tiles
#
# Here is the same walk on numbers small enough for a pencil. The row 1, 3, 2, 5, 4, 0 goes in two
# tiles of three (three decimals):
#
# | after | m | factor $e^{m - m'}$ | l |
# | --- | --- | --- | --- |
# | nothing | -inf | | 0 |
# | tile 1, 3, 2 | 3 | $e^{-\infty} = 0$ | $e^{-2} + e^{0} + e^{-1} = 0.135 + 1 + 0.368 = 1.503$ |
# | tile 5, 4, 0 | 5 | $e^{3 - 5} = 0.135$ | $1.503 \cdot 0.135 + (e^{0} + e^{-1} + e^{-5}) = 0.203 + 1.375 = 1.578$ |
#
# The second tile raised the max from 3 to 5. So the first tile's sum shrank by $e^{-2}$ before the
# second tile's terms were added. The second walk writes $e^{x - 5} / 1.578$: 0.0116, 0.0858, 0.0315,
# 0.6337, 0.2331, 0.0043, which is `torch.softmax` of the row. The cell prints the same steps. Change
# the row or the tile width and run it again (with the row 5, 4, 0, 1, 3, 2 the second factor is 1).

# %% [notebook]
# # The online softmax by hand: one row walked in tiles of TILE, every step printed, then the second walk
# # and torch.softmax. Change the row or TILE and run it again.
# import math
#
# import torch
#
# row = [1.0, 3.0, 2.0, 5.0, 4.0, 0.0]
# TILE = 3
#
# m, l = -math.inf, 0.0  # the state before the first tile
# print(f"start: m = {m}, l = {l:g}")
# for start in range(0, len(row), TILE):
#     tile = row[start : start + TILE]
#     new_m = max(m, max(tile))  # 1. the new running max
#     factor = math.exp(m - new_m)  # 2. what moves l to the new max: 0 on the first tile, 1 if the max held
#     terms = [math.exp(x - new_m) for x in tile]  # 3. the tile's own terms, against the new max
#     new_l = l * factor + sum(terms)  # 4. the new running sum
#     print(f"tile {', '.join(f'{x:g}' for x in tile)}: m' = max({m:g}, {max(tile):g}) = {new_m:g}")
#     print(f"    factor exp(m - m') = exp({m:g} - {new_m:g}) = {factor:.3f}")
#     print(f"    terms exp(x - m') = {[round(t, 3) for t in terms]}, their sum {sum(terms):.3f}")
#     print(f"    l' = l * factor + sum = {l:.3f} * {factor:.3f} + {sum(terms):.3f} = {new_l:.3f}")
#     m, l = new_m, new_l
#
# probabilities = [math.exp(x - m) / l for x in row]  # the second walk: each tile read again
# reference = torch.softmax(torch.tensor(row, dtype=torch.float64), dim=0).tolist()
# print(f"second walk, exp(x - {m:g}) / {l:.3f}: {[round(p, 4) for p in probabilities]}")
# print(f"torch.softmax(row):          {[round(r, 4) for r in reference]}")
# print(f"largest difference: {max(abs(p - r) for p, r in zip(probabilities, reference)):.1e}")

# %% [markdown]
# ### Three walks, two, one: bytes per element
#
# The safe softmax needs the max before the sum, and the sum before any output. Written directly that
# is three walks over the row: one for m, one for l, one to write $e^{x - m} / l$. When the row does not
# stay on chip, each walk reads it from memory again. The online recurrence folds the first two walks
# into one. A row that fits in one tile is read once:
#
# | kernel | reads of A | bytes per element (fp16 in, fp16 out) |
# | --- | --- | --- |
# | three walks: max, sum, write | 3 | 3 x 2 + 2 = 8 |
# | two walks: `softmax_online` | 2 | 2 x 2 + 2 = 6 |
# | one walk: `softmax` (the row in one tile) | 1 | 2 + 2 = 4 |
#
# `softmax` still makes three passes (max, exponentials and sum, scaling), but over registers.
# Registers cost little next to memory. That bytes are what counts shows on the H200
# (docs/results/h200-bench.md). There `softmax` moves 4032 GB/s, within 1 % of `copy_threads`'s
# 4051 GB/s in the same run. It runs at the speed of a copy of the same bytes. Its arithmetic (the
# 5.0 TFLOP/s the run counts) hides under the memory traffic. The only way to be faster is to move
# fewer bytes. The cell turns the byte counts into predicted times at the copy's bandwidth. It sets
# them next to the measured ones (both bench cases hold 2^27 elements, in different shapes):

# %% [notebook]
# # The H200 bench run's times (docs/results/h200-bench.md).
# measured_ms = {"01 copy_threads": 0.1325, "06 softmax": 0.1332, "06 softmax_online": 0.2046}
# elements = 2**27  # every one of these bench cases has 2^27 fp16 elements (256 MiB)
# copy_gbps = 4 * elements / (measured_ms["01 copy_threads"] * 1e-3) / 1e9  # 2 bytes read, 2 written
# print(f"copy_threads moved {copy_gbps:.0f} GB/s: take that as what this GPU's memory delivers\n")
# print(f"{'variant':34} {'B/element':>9} {'predicted ms':>12} {'measured ms':>11}")
# for name, per_element, kernel in (
#     ("three walks: max, sum, write", 2 + 2 + 2 + 2, None),
#     ("two walks: online (m, l), write", 2 + 2 + 2, "06 softmax_online"),
#     ("one walk: the row in one tile", 2 + 2, "06 softmax"),
# ):
#     predicted = per_element * elements / (copy_gbps * 1e9) * 1e3
#     measured = f"{measured_ms[kernel]:.4f}" if kernel else "-"
#     print(f"{name:34} {per_element:9} {predicted:12.4f} {measured:>11}")

# %% [markdown]
# The byte counts predict both kernels within about 3 %. The second read of `softmax_online` costs
# about as much as the first. The bench's GB/s column counts A once for both kernels. That is why it
# shows 2623 GB/s for `softmax_online`; with the second read counted it is about 3.9 TB/s. In that run
# torch's own softmax took 0.5033 ms on the 8192-wide rows and 0.2323 ms on the 32768-wide ones. Those
# are the 3.78x and 1.13x of its `vs torch` column (docs/results/h200-bench.md).

# %% [markdown]
# What to watch for:
# - Keep the old max before `T.reduce_max(..., clear=False)` folds the tile in.
# - Rescale the running sum before adding the tile's sum.
# - Mask the padding with -inf using the tile's offset (`k * BLOCK_N + j < N`).
# - On the first tile m is -inf and l is 0. As `exp2(-inf) = 0`, the rescaling needs no special
#   case.


# %% softmax_online
@tilelang.jit
def softmax_online(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        # TODO begin: running max and rescaled running sum over column tiles, then a second pass
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        x = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        row_max = T.alloc_fragment((BLOCK_M,), T.float32)
        prev_max = T.alloc_fragment((BLOCK_M,), T.float32)
        tile_sum = T.alloc_fragment((BLOCK_M,), T.float32)
        row_sum = T.alloc_fragment((BLOCK_M,), T.float32)
        T.fill(row_max, -T.infinity(T.float32))
        T.clear(row_sum)
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_N], tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                x[i, j] = T.if_then_else(
                    k * BLOCK_N + j < N, T.cast(tile[i, j], T.float32) * LOG2E, -T.infinity(T.float32)
                )
            T.copy(row_max, prev_max)
            T.reduce_max(x, row_max, dim=1, clear=False)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                x[i, j] = T.exp2(x[i, j] - row_max[i])
            T.reduce_sum(x, tile_sum, dim=1)
            for i in T.Parallel(BLOCK_M):
                row_sum[i] = row_sum[i] * T.exp2(prev_max[i] - row_max[i]) + tile_sum[i]
        for i in T.Parallel(BLOCK_M):
            row_sum[i] = 1.0 / row_sum[i]
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_N], tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                tile[i, j] = T.cast(T.exp2(T.cast(tile[i, j], T.float32) * LOG2E - row_max[i]) * row_sum[i], T.float16)
            T.copy(tile, C[bx * BLOCK_M, k * BLOCK_N])
        # TODO end

    return C


# %% cases
# ---------------------------------------------------------------------------------- cases

_A = Tensor("A", ("M", "N"), "float16")
_C = Tensor("C", ("M", "N"), "float16")


def puzzle() -> Puzzle:
    common = dict(
        inputs=(_A,),
        outputs=(_C,),
        reference=softmax_reference,
        baseline=torch_softmax,
        # max, subtract, exp, sum, scale: about five operations per element
        flops=lambda s: 5.0 * s["M"] * s["N"],
        # A read once and C written once; softmax_online reads A a second time on top of this
        bytes_moved=lambda s: tensor_bytes((_A, _C), s),
        tiles={"C": ("BLOCK_M", "BLOCK_N")},
    )
    return Puzzle(
        id="06",
        title="Softmax",
        kernels=(
            Kernel(
                function="softmax",
                concepts=(
                    reduces("max", "each row's maximum taken with T.reduce_max"),
                    reduces("sum", "each row's sum of exponentials taken with T.reduce_sum"),
                    sums_in_fp32("every sum of exponentials kept in float32"),
                ),
                title="Row softmax with the whole row in one tile (N <= BLOCK_N)",
                cases=(
                    Case("square_256", {"M": 256, "N": 256}, {"BLOCK_M": 16, "BLOCK_N": 256}, seed=6101, simulate=True),
                    # Logits around N(0, 100): exp overflows unless the row max is subtracted first.
                    Case(
                        "large_logits_64x256",
                        {"M": 64, "N": 256},
                        {"BLOCK_M": 16, "BLOCK_N": 256},
                        seed=6109,
                        simulate=True,
                        scales={"A": 100.0},
                    ),
                    Case("tail_1001x1000", {"M": 1001, "N": 1000}, {"BLOCK_M": 2, "BLOCK_N": 1024}, seed=6102),
                    Case("odd_127x129", {"M": 127, "N": 129}, {"BLOCK_M": 8, "BLOCK_N": 256}, seed=6103, simulate=True),
                    # 127 columns in a 256-wide tile: half the tile is padding, so padding that is
                    # not masked to -inf shifts every sum by far more than the tolerance.
                    Case(
                        "short_rows_500x127",
                        {"M": 500, "N": 127},
                        {"BLOCK_M": 16, "BLOCK_N": 256},
                        seed=6104,
                        simulate=True,
                    ),
                    Case(
                        "wide_300x8000",
                        {"M": 300, "N": 8000},
                        {"BLOCK_M": 1, "BLOCK_N": 8192, "THREADS": 256},
                        seed=6105,
                    ),
                    # 16384 x 8192 fp16 is 256 MiB: larger than the H200's L2, so timing sees HBM.
                    Case(
                        "large_16384x8192",
                        {"M": 16384, "N": 8192},
                        {"BLOCK_M": 1, "BLOCK_N": 8192, "THREADS": 256},
                        seed=6106,
                        bench=True,
                    ),
                ),
                **common,
            ),
            Kernel(
                function="softmax_online",
                concepts=(
                    reduces("max", "each tile's row maxima taken with T.reduce_max"),
                    reduces("sum", "each tile's row sums of exponentials taken with T.reduce_sum"),
                    sums_in_fp32("every sum of exponentials kept in float32"),
                ),
                title="Row softmax of any length: online max and sum, then a second pass",
                cases=(
                    Case("square_256", {"M": 256, "N": 256}, {"BLOCK_M": 32, "BLOCK_N": 64}, seed=6201, simulate=True),
                    Case(
                        "large_logits_64x256",
                        {"M": 64, "N": 256},
                        {"BLOCK_M": 32, "BLOCK_N": 64},
                        seed=6209,
                        simulate=True,
                        scales={"A": 100.0},
                    ),
                    # Rows of 3 scores around N(0, 1000): about one row in eight has every score below -87, where
                    # exp2 of (score - 0) underflows, so a running max started at 0 and not -inf shows.
                    Case(
                        "far_logits_64x3",
                        {"M": 64, "N": 3},
                        {"BLOCK_M": 32, "BLOCK_N": 64},
                        seed=6211,
                        simulate=True,
                        scales={"A": 1000.0},
                    ),
                    Case("tail_1001x1000", {"M": 1001, "N": 1000}, {"BLOCK_M": 2, "BLOCK_N": 256}, seed=6202),
                    Case("odd_127x129", {"M": 127, "N": 129}, {"BLOCK_M": 8, "BLOCK_N": 64}, seed=6203, simulate=True),
                    Case(
                        "long_rows_37x50001",
                        {"M": 37, "N": 50001},
                        {"BLOCK_M": 1, "BLOCK_N": 2048, "THREADS": 256},
                        seed=6204,
                    ),
                    # 4096 x 32768 fp16 is 256 MiB; a 64 KiB row is too long for one tile.
                    Case(
                        "large_4096x32768",
                        {"M": 4096, "N": 32768},
                        {"BLOCK_M": 1, "BLOCK_N": 4096, "THREADS": 256},
                        seed=6205,
                        bench=True,
                    ),
                ),
                **common,
            ),
        ),
    )


# %% [markdown]
# ## What you learned
#
# - Subtract the row max: the result is unchanged and nothing overflows.
# - Pad with the neutral element of the operation that reads the padding. That is 0 for a sum, and
#   -inf for a max (and hence for a softmax).
# - Broadcast per-row values back over the row; multiply by a reciprocal instead of dividing (fewer
#   instructions, the same bytes).
# - The online softmax: a running max, and a running sum rescaled whenever the max grows. Two partial
#   states (m, l) merge by the same rule, in any order.
# - A reduction over a fragment: each thread reduces the elements it holds. Then the threads that
#   share a row combine theirs (`tl::AllReduce`), and every one of them ends up with the result.
# - Keep the scaled scores and the sum in fp32: fp16 fails on large logits and on long sums.
# - For a memory-bound kernel, bytes per element decide the time: 8 for three walks, 6 online, 4 with
#   the row in one tile. `softmax` runs as fast as a copy of the same bytes.
#
# **Next:** puzzle 07 applies the same rescaling to a whole output accumulator: flash attention.

# %% [bench]

# %% [markdown]
# ## Experiments to try
#
# Each cell runs as it stands; change the numbers and run it again. `bench(kernel, NAME=value, ...)`
# times your kernel on its bench case, with those block parameters instead of the case's. The graded
# cases do not change. Without a GPU it prints one line. Predict the result before you run it.
#
# **1. Threads per row.** The bench case of `softmax` gives each row of 8192 one block of 256 threads.
# That is 32 values per thread. Predict: with half and with twice the threads, does the time move?

# %% [notebook]
# bench("softmax", THREADS=128)
# bench("softmax", THREADS=512)

# %% [measured]
# The time barely moves. On the H200 (docs/results/h200-experiments.md), the bench case's 256 threads
# took 0.1332 ms, 4030 GB/s. 128 threads took 0.1332 ms, 4032 GB/s; 512 took 0.1304 ms, 4117 GB/s. The
# three tie, within 2 %, at the speed of `copy_threads` in the same run (4043 GB/s). THREADS changes
# what each thread holds, not the bytes moved.

# %% [markdown]
# **2. What a thread holds (no GPU needed).** The cell compiles the reference `softmax` for sm_90a at
# one row per block. It reads what ptxas gave each thread (four compilations, under a minute on a CPU).
# Put your own `softmax` in place of `reference_softmax` once its check passes. Predict: which of the
# four spills to local memory, and why?

# %% [notebook]
# from grader.teaching.experiments import resource_usage, table
# from solutions.p06_softmax import softmax as reference_softmax
#
# rows = [
#     resource_usage(reference_softmax, f"1 x {n} row, {t} threads", M=64, N=n, BLOCK_M=1, BLOCK_N=n, THREADS=t)
#     for n, t in ((8192, 128), (8192, 256), (8192, 512), (32768, 128))
# ]
# print(table(rows))

# %% [measured]
# Each thread holds BLOCK_N / THREADS fp32 values of `x` and as many fp16 values of `tile`, and its
# registers follow: fewer threads, more registers each. A whole row of 32768 with 128 threads is 256
# fp32 values per thread, more than the 255 registers a thread can have, so ptxas spills to local
# memory (the `spilled` column): memory traffic that the byte count of the table above does not
# include. That is the limit behind `softmax`'s precondition N <= BLOCK_N, and why long rows go to
# `softmax_online`.

# %% [markdown]
# **3. Tile width in the online kernel.** Its bench case walks rows of 32768 in tiles of 4096. Predict:
# at tiles of 1024 and of 8192, faster or slower, and why?

# %% [notebook]
# bench("softmax_online", BLOCK_N=1024)
# bench("softmax_online", BLOCK_N=8192)

# %% [measured]
# On the H200 (docs/results/h200-experiments.md), the bench case's tiles of 4096 took 0.2046 ms,
# 2624 GB/s. Tiles of 1024 took 0.2646 ms, 2029 GB/s, 29 % slower. Tiles of 8192 won: 0.1912 ms,
# 2807 GB/s, 7 % faster. The bytes are the same; the tiles per row are 32, 8 or 4. Each tile costs two
# cross-thread reductions and their barriers: fewer tiles, fewer of them. (The GB/s figures count 4
# bytes per element; this kernel moves 6.)

# %% [markdown]
# **4. Read a long row once (a kernel to write, not graded).** `softmax_online` reads every element
# twice. A row of 32768 fp16 values is 64 KiB. A block on Hopper may use 227 KiB of shared memory.
# Write a variant that keeps the row's tiles in shared memory (`T.alloc_shared`) during the first walk.
# It reads them from there in the second: 4 bytes per element instead of 6. So at the copy's bandwidth
# the table above predicts two thirds of `softmax_online`'s time on the bench case. Compare its output with
# `torch.softmax` in a cell of your own, and time it on a GPU with `torch.cuda.Event`s.
