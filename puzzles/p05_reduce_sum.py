"""Puzzle 05 · Reduce sum: the sum of every row of a matrix, first in one tile, then tile by tile.

A reduction turns many values into one. Row sums are the plainest reduction in a network (the
denominator of a softmax, the mean and variance of a layer norm), and the pattern they teach
(each thread sums what it holds, then the threads combine their partial sums) is behind every
reduction that follows in this course.

Input and output (fp16 in, fp32 out, every sum accumulated in fp32):

``row_sum``
    ``A`` is M x N. Output ``C`` of M with ``C[i] = sum_j A[i, j]``.
    Precondition: ``N <= BLOCK_N``, so a whole row fits in one tile. Each block owns BLOCK_M
    rows: it copies its (BLOCK_M, BLOCK_N) tile into a fragment and calls
    ``T.reduce_sum(tile, sums, dim=1)`` with ``sums`` a float32 fragment of BLOCK_M. The
    reduction reads fp16 and adds in the dtype of ``sums``, so float32 there is all it takes.

``row_sum_tiled``
    The same sums with no limit on N. What changed: a row no longer fits in one tile, so the
    block walks the columns in BLOCK_N steps with a serial loop. Rather than reducing every
    tile across threads (a shuffle and a barrier per tile), each thread adds the tile it holds,
    element by element, into a float32 ``partial`` fragment of (BLOCK_M, BLOCK_N) cleared
    before the loop; after the loop one ``T.reduce_sum(partial, sums, dim=1)`` combines the
    threads. (Reducing each tile into ``sums`` with ``clear=False`` is also correct, only
    slower; with the default ``clear=True`` only the last tile would count.)

Why C is float32: a row sum carries more significant bits than fp16 holds (past 2048, fp16
cannot even represent every integer) and a long row can overflow fp16's 65504. The graded
tolerance for float32 output is tight enough that an fp16 accumulator fails it. The torch
baseline is ``A.sum(dim=1, dtype=torch.float32)``.

What it teaches: ``T.reduce_sum`` and its ``dim``; accumulating in float32; reading past the
edge of a tensor (``T.copy`` gives zeros there, and zeros do not change a sum, so tail rows and
columns need nothing more); and keeping communication between threads out of the inner loop.

Preconditions: ``row_sum`` needs N <= BLOCK_N; ``row_sum_tiled`` has none. Otherwise sizes need
not be multiples of the block sizes. Bench cases are 256 MiB of fp16, larger than the H200's L2,
so the timing measures HBM bandwidth.
"""

# %% [markdown]
# ## Why this puzzle matters
#
# A reduction turns many values into one: the sums behind a mean and a variance (LayerNorm,
# RMSNorm), the denominator of a softmax, a loss. On a GPU it happens at two levels:
#
# 1. **inside a thread**: each thread adds up the values it holds, in registers, with no
#    communication at all;
# 2. **across threads**: partial sums are combined, within a warp by shuffles (threads reading each
#    other's registers), across warps through shared memory and a barrier.
#
# `T.reduce_sum(src, dst, dim=...)` does both for a fragment. The second level is the expensive one,
# so a good reduction does as much of the first as it can and crosses threads as rarely as possible.
# Row sums read every element once and do one addition per 2-byte element: memory-bound, like the
# copy of puzzle 01.

# %%
from __future__ import annotations

import tilelang
import tilelang.language as T

from grader.concepts import reduces
from grader.spec import Case, Kernel, Puzzle, Tensor, tensor_bytes

# ---------------------------------------------------------------- references (run on float64)


def row_sum_reference(A):
    return A.sum(dim=1)


def torch_row_sum(A):
    """What --bench times against: torch at the kernel's own dtypes."""
    import torch

    return A.sum(dim=1, dtype=torch.float32)


# -------------------------------------------------------------------------------- kernels


# %% [markdown]
# ## Kernel 1: `row_sum`, a row in one tile
#
# With `N <= BLOCK_N` a block's BLOCK_M rows fit in one tile: copy it into a fragment and call
# `T.reduce_sum(tile, sums, dim=1)` with `sums` a float32 fragment of BLOCK_M. The reduction reads
# fp16 and adds in the dtype of `sums`, so float32 there is all the accumulation needs.
#
# Tails: `T.copy` reads zeros past the last column, and zero is the neutral element of a sum, so the
# padding changes nothing (puzzle 06 will not be so lucky). Rows past M are computed and dropped.
# Below, the first 12 rows of the `odd_127x129` case: blocks of 4 rows, each a single tile of 256
# columns of which 129 are real.

# %% [notebook]
# from grader.teaching.pictures import row_reduction, tiling
#
# tiling(12, 129, 4, 256)


# %% row_sum
@tilelang.jit
def row_sum(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        # TODO begin: one block sums BLOCK_M whole rows (N <= BLOCK_N)
        # One block sums BLOCK_M whole rows at once: copy its tile of A into a fragment with T.copy,
        # let T.reduce_sum add along the columns into a float32 fragment with one value per row, and
        # store those values with T.copy. The tile is wide enough for a whole row, and T.copy fills
        # the columns past N with zeros, which do not change a sum.
        raise NotImplementedError("row_sum")
        # TODO end

    return C


# %% [markdown]
# ## Kernel 2: `row_sum_tiled`, rows of any length
#
# What changed: a row no longer fits in one tile, so the block walks the columns in BLOCK_N steps
# with `T.serial(T.ceildiv(N, BLOCK_N))`. Calling `T.reduce_sum` on every tile would cross threads
# (shuffles and a barrier) once per tile. Instead each thread adds the tile it holds into a float32
# (BLOCK_M, BLOCK_N) fragment `partial`, element by element, cleared before the loop; after the loop
# one `T.reduce_sum(partial, sums, dim=1)` combines the threads.
#
# (Reducing each tile into `sums` with `clear=False` is also correct, only slower. With the default
# `clear=True` only the last tile would count.)

# %% [notebook]
# row_reduction(8, 64, 4)


# %% row_sum_tiled
@tilelang.jit
def row_sum_tiled(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        # TODO begin: one block sums BLOCK_M rows of any length, BLOCK_N columns at a time
        # Rows may be longer than one tile, so walk them BLOCK_N columns at a time with a T.serial
        # loop. Keep a float32 fragment of running sums the size of a tile, clear it first, and add
        # each tile into it element by element with a T.Parallel loop: no thread talks to another
        # inside the loop. Reduce across the columns once, after the loop, with T.reduce_sum.
        raise NotImplementedError("row_sum_tiled")
        # TODO end

    return C


# %% cases
# ---------------------------------------------------------------------------------- cases

_A = Tensor("A", ("M", "N"), "float16")
_C = Tensor("C", ("M",), "float32")


def puzzle() -> Puzzle:
    common = dict(
        inputs=(_A,),
        outputs=(_C,),
        reference=row_sum_reference,
        baseline=torch_row_sum,
        flops=lambda s: float(s["M"] * s["N"]),
        bytes_moved=lambda s: tensor_bytes((_A, _C), s),
        tiles={"C": ("BLOCK_M",)},
    )
    tiled_blocks = {"BLOCK_M": 8, "BLOCK_N": 256}
    return Puzzle(
        id="05",
        title="Reduce sum",
        kernels=(
            Kernel(
                function="row_sum",
                concepts=(reduces("sum", "the rows summed by a tile reduction, T.reduce_sum(tile, sums, dim=1)"),),
                title="Row sums with the whole row in one tile (N <= BLOCK_N)",
                cases=(
                    Case("square_256", {"M": 256, "N": 256}, {"BLOCK_M": 4, "BLOCK_N": 256}, seed=5101, simulate=True),
                    Case("tail_1001x1000", {"M": 1001, "N": 1000}, {"BLOCK_M": 4, "BLOCK_N": 1024}, seed=5102),
                    Case("odd_127x129", {"M": 127, "N": 129}, {"BLOCK_M": 4, "BLOCK_N": 256}, seed=5103, simulate=True),
                    Case(
                        "wide_300x4000",
                        {"M": 300, "N": 4000},
                        {"BLOCK_M": 2, "BLOCK_N": 4096, "THREADS": 256},
                        seed=5104,
                    ),
                    # 32768 x 4096 fp16 is 256 MiB: larger than the H200's L2, so timing sees HBM.
                    Case(
                        "large_32768x4096",
                        {"M": 32768, "N": 4096},
                        {"BLOCK_M": 2, "BLOCK_N": 4096, "THREADS": 256},
                        seed=5105,
                        bench=True,
                    ),
                ),
                **common,
            ),
            Kernel(
                function="row_sum_tiled",
                concepts=(
                    reduces(
                        "sum",
                        "the threads' partial sums combined by a tile reduction, T.reduce_sum(partial, sums, dim=1)",
                    ),
                ),
                title="Row sums of any length: a serial loop over column tiles",
                cases=(
                    Case("square_256", {"M": 256, "N": 256}, {"BLOCK_M": 8, "BLOCK_N": 64}, seed=5201, simulate=True),
                    Case("tail_1000", {"M": 1000, "N": 1000}, {"BLOCK_M": 16, "BLOCK_N": 256}, seed=5202),
                    Case("odd_127x129", {"M": 127, "N": 129}, {"BLOCK_M": 8, "BLOCK_N": 64}, seed=5203, simulate=True),
                    Case("short_rows_515x100", {"M": 515, "N": 100}, tiled_blocks, seed=5204, simulate=True),
                    Case("long_rows_37x50001", {"M": 37, "N": 50001}, {"BLOCK_M": 8, "BLOCK_N": 512}, seed=5205),
                    Case(
                        "large_16384x8192",
                        {"M": 16384, "N": 8192},
                        {"BLOCK_M": 4, "BLOCK_N": 512, "THREADS": 128},
                        seed=5206,
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
# - `T.reduce_sum` and its `dim`; the accumulator's dtype sets the precision of the sum.
# - Zero padding from `T.copy` is harmless for a sum.
# - Keep communication between threads out of the inner loop: accumulate per thread, reduce once.
#
# **Next:** puzzle 06 combines a max, an exponential and a sum into a softmax, where the padding is
# no longer harmless.

# %% [bench]

# %% [markdown]
# ## Experiments to try
#
# Each cell runs as it stands; change the numbers and run it again, and predict the result first.
# `bench(kernel, NAME=value, ...)` times your kernel on its bench case with those block parameters in
# place of the case's (it checks the kernel on that case first; the graded cases keep theirs); without
# a GPU it prints one line. The cells that compile need nvcc but no GPU.
#
# **1. Where the threads talk.** The cell compiles the reference `row_sum_tiled` and a variant that
# calls `T.reduce_sum(tile, sums, dim=1, clear=False)` on every tile (correct, as kernel 2's section
# says), both at the bench case's block, and prints their loops, barriers and reductions, indented as
# they nest. Predict: how many rounds of cross-thread reduction does each kernel make per row?

# %% [notebook]
# import tilelang
# import tilelang.language as T
#
# from grader.teaching.experiments import kernel_source
# from solutions.p05_reduce_sum import row_sum_tiled as reference_row_sum_tiled
#
#
# @tilelang.jit
# def row_sum_reduce_each_tile(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
#     M, N = T.const("M, N")
#     A: T.Tensor((M, N), T.float16)
#     C = T.empty((M,), T.float32)
#     with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
#         tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
#         sums = T.alloc_fragment((BLOCK_M,), T.float32)
#         T.clear(sums)
#         for k in T.serial(T.ceildiv(N, BLOCK_N)):
#             T.copy(A[bx * BLOCK_M, k * BLOCK_N], tile)
#             T.reduce_sum(tile, sums, dim=1, clear=False)  # threads talk on every tile
#         T.copy(sums, C[bx * BLOCK_M])
#     return C
#
#
# blocks = {"BLOCK_M": 4, "BLOCK_N": 512, "THREADS": 128}  # the bench case's block
# for name, kernel in (("row_sum_tiled", reference_row_sum_tiled), ("reduce each tile", row_sum_reduce_each_tile)):
#     cuda = kernel_source(kernel, M=16384, N=8192, **blocks)
#     body = cuda[cuda.index("__launch_bounds__") :]
#     print(name)
#     for line in body.splitlines():  # the loops, the barriers and the reductions, indented as nested
#         if "for (int" in line or "AllReduce" in line or "__syncthreads" in line:
#             print("   ", line.rstrip()[:100])

# %% [measured]
# In `row_sum_tiled` the loop over the 16 column tiles (`for (int k ...`) holds only loads and
# additions; the barrier and the `AllReduce` come once, after it. In the variant they sit inside it: 16
# rounds per row instead of one. Here 64 threads share each row (`AllReduce<tl::SumOp, 64, ...>`), two
# warps, so every round also passes through shared memory. Both kernels read the same bytes.

# %% [markdown]
# **2. The tile width.** The bench case runs `row_sum_tiled` at BLOCK_M = 4, BLOCK_N = 512, THREADS =
# 128: 0.0643 ms, 4178 GB/s on the H200 (docs/results/h200-bench.md). Predict: at BLOCK_N = 128, and
# at 2048?

# %% [notebook]
# bench("row_sum_tiled", BLOCK_N=128)
# bench("row_sum_tiled", BLOCK_N=2048)

# %% [measured]
# On the H200 (docs/results/h200-experiments.md), the bench case's BLOCK_N = 512 took 0.0642 ms,
# 4181 GB/s. BLOCK_N = 128 took 0.0651 ms, 4125 GB/s: a tie, 1 % apart. BLOCK_N = 2048 took 0.0694 ms,
# 3868 GB/s, 8 % slower. The threads talk once per row at every width, and the bytes are the same. What
# grows at 2048 is each thread's share: 64 fp32 partial sums, and 64 values loaded per tile. The narrow
# loads at 128 still keep enough bytes in flight.

# %% [markdown]
# **3. Time the variant.** To measure what experiment 1 shows, put the variant's body into your
# `row_sum_tiled` cell, run its check (it passes) and then `bench("row_sum_tiled")`. Predict: slower
# by how much, for 15 more rounds of reduction and barriers for every row? Put your own body back
# afterwards.
