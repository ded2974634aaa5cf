"""Puzzle 03 · Outer vector add: a 2-D grid of 2-D tiles, and broadcasting.

Combining a column vector with a row vector into a matrix is how a bias or a mask is spread
over a whole tile of scores, and how every pair of two index sets is visited. It is also the
first puzzle whose output is much larger than its inputs: the time goes almost all into
writing C.

Inputs: ``A``, an fp16 vector of M, and ``B``, an fp16 vector of N. Output ``C``: an fp16
matrix of M x N with ``C[i, j] = A[i] + B[j]``.

``outer_add``
    A 2-D launch grid: ``T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=...)
    as (bx, by)``. The first grid axis, ``bx``, counts column tiles and the second, ``by``,
    row tiles; the first axis varies fastest, so blocks that run together write neighbouring
    tiles of the same rows. Block ``(bx, by)`` owns the BLOCK_M x BLOCK_N tile of C whose
    top-left element is ``C[by * BLOCK_M, bx * BLOCK_N]``. A 2-D
    ``T.Parallel(BLOCK_M, BLOCK_N)`` visits it; its last variable runs along a row of the
    row-major ``C``, so neighbouring threads write neighbouring addresses. It reads ``A`` and
    ``B`` straight from global memory and guards both the row and the column, since either
    dimension may end inside the tile.

``outer_add_fragments``
    The same grid and tile, written as load, compute, store: ``T.copy`` the block's BLOCK_M
    slice of ``A`` and BLOCK_N slice of ``B`` into two 1-D fragments, fill a 2-D fragment with
    ``a[i] + b[j]`` in ``T.Parallel(BLOCK_M, BLOCK_N)``, and ``T.copy`` it to ``C`` at the
    tile's corner. Each block reads its slices of the inputs once (``outer_add`` asks for
    ``A[row]`` and ``B[col]`` at every element and leaves the rest to the caches), and
    ``T.copy`` handles both edges of ``C``. A 1-D fragment used along a 2-D loop is broadcast:
    TileLang gives each thread the elements of ``a`` and ``b`` that its part of the tile needs.

What it teaches: how a 2-D grid and a 2-D ``T.Parallel`` map onto a row-major matrix, tile
corner offsets, guarding two dimensions, broadcasting fragments, and a kernel bound by its writes
(bytes moved are 2 (M + N + M N), nearly all of it C).

Preconditions: none on M and N (tiles may be partial along either dimension).
"""

# %% [markdown]
# ## Why this puzzle matters
#
# Adding a per-row and a per-column value to every element of a matrix is how biases and masks are
# spread over a tile of scores, and how every pair of two index sets gets visited. It is the first
# 2-D grid of the course, and the first kernel whose output is much larger than its inputs: it reads
# M + N elements and writes M·N, so its time is almost all writes.

# %%
from __future__ import annotations

import tilelang
import tilelang.language as T

from grader.concepts import parallel_loop, tiles_through_fragments
from grader.spec import Case, Kernel, Puzzle, Tensor, tensor_bytes

# ---------------------------------------------------------------- references (run on float64)


def outer_add_reference(A, B):
    return A[:, None] + B[None, :]


def torch_outer_add(A, B):
    """What --bench times against: torch at the kernel's own dtypes (a broadcast add)."""
    return A[:, None] + B[None, :]


# -------------------------------------------------------------------------------- kernels


# %% [markdown]
# ## Kernel 1: `outer_add`, a 2-D grid
#
# `T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=...) as (bx, by)`: the **first**
# grid axis counts column tiles, the second row tiles. The first axis varies fastest, so blocks that
# run at the same time write neighbouring tiles of the same rows. Block `(bx, by)` owns the tile whose
# top-left element is `C[by * BLOCK_M, bx * BLOCK_N]`, and `T.Parallel(BLOCK_M, BLOCK_N)` visits it
# with the *last* loop variable along a row, so neighbouring threads write neighbouring addresses of
# the row-major C.
#
# What to watch for: rows and columns swapped between `bx` and `by`; a guard on both the row and the
# column, since either may end inside a tile. The `odd_33x127` case, 16 x 64 tiles:

# %% [notebook]
# from grader.teaching.pictures import tiling
#
# tiling(33, 127, 16, 64)


# %% outer_add
@tilelang.jit
def outer_add(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 256):
    M, N = T.const("M, N")
    A: T.Tensor((M,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        # TODO begin: block (bx, by) writes its BLOCK_M x BLOCK_N tile of C, guarded
        # Each block writes one 2-D tile of C, where element (row, column) is A at that row plus B
        # at that column. Use a two-dimensional T.Parallel over the tile, rows first, and write only
        # the elements that lie inside C.
        raise NotImplementedError("outer_add")
        # TODO end

    return C


# %% [markdown]
# ## Kernel 2: `outer_add_fragments`: broadcasting fragments
#
# The same grid and tile as load, compute, store. Copy the block's BLOCK_M slice of A and BLOCK_N
# slice of B into two 1-D fragments, fill a 2-D fragment with `a[i] + b[j]` in
# `T.Parallel(BLOCK_M, BLOCK_N)`, and copy it to C at the tile's corner (row offset first).
#
# Using a 1-D fragment inside a 2-D loop is a *broadcast*: TileLang lays out `a` and `b` so that each
# thread holds the elements its part of the tile needs, replicating them where several threads do.
# Each block reads its slices once, where `outer_add` asks for `A[row]` and `B[col]` at every element
# and relies on the caches; and `T.copy` handles both edges of C.


# %% outer_add_fragments
@tilelang.jit
def outer_add_fragments(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 256):
    M, N = T.const("M, N")
    A: T.Tensor((M,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        # TODO begin: load the two slices into fragments, build the tile, store it
        # Do outer_add in the tile style: load this tile's slice of A and slice of B into fragments
        # with T.copy, build the whole output tile in a third fragment with a 2-D T.Parallel, and
        # store it with one T.copy. No guards.
        raise NotImplementedError("outer_add_fragments")
        # TODO end

    return C


# %% cases
# ---------------------------------------------------------------------------------- cases

_A = Tensor("A", ("M",), "float16")
_B = Tensor("B", ("N",), "float16")
_C = Tensor("C", ("M", "N"), "float16")


def _bytes(s):
    return tensor_bytes((_A, _B, _C), s)


def _cases(first_seed: int, bench_blocks: dict) -> tuple[Case, ...]:
    small = {"BLOCK_M": 16, "BLOCK_N": 64, "THREADS": 128}
    medium = {"BLOCK_M": 32, "BLOCK_N": 128, "THREADS": 128}
    return (
        Case("square_64", {"M": 64, "N": 64}, small, seed=first_seed, simulate=True),
        Case("odd_33x127", {"M": 33, "N": 127}, small, seed=first_seed + 1, simulate=True),
        Case("tail_1000", {"M": 1000, "N": 1000}, medium, seed=first_seed + 2),
        Case("wide_7x5003", {"M": 7, "N": 5003}, medium, seed=first_seed + 3),
        Case("tall_3001x65", {"M": 3001, "N": 65}, medium, seed=first_seed + 4),
        # 16384 x 16384 fp16 is 512 MiB of output, far beyond the H200's L2 cache.
        Case("large_16384", {"M": 16384, "N": 16384}, bench_blocks, seed=first_seed + 5, bench=True),
    )


def puzzle() -> Puzzle:
    common = dict(
        inputs=(_A, _B),
        outputs=(_C,),
        reference=outer_add_reference,
        baseline=torch_outer_add,
        bytes_moved=_bytes,
        tiles={"C": ("BLOCK_M", "BLOCK_N")},
    )
    # 32 x 256 tiles with 256 threads: each thread writes 32 elements as four 16-byte stores,
    # and a warp covers 512 contiguous bytes of a row.
    wide = {"BLOCK_M": 32, "BLOCK_N": 256, "THREADS": 256}
    return Puzzle(
        id="03",
        title="Outer vector add",
        kernels=(
            Kernel(
                function="outer_add",
                concepts=(parallel_loop("the tile visited with a 2-D T.Parallel(BLOCK_M, BLOCK_N)"),),
                title="C[i, j] = A[i] + B[j] on a 2-D grid, guarded by hand",
                cases=_cases(3101, wide),
                **common,
            ),
            Kernel(
                function="outer_add_fragments",
                concepts=(
                    tiles_through_fragments(
                        "A and B loaded with T.copy into fragments (T.alloc_fragment), C stored with T.copy"
                    ),
                ),
                title="The outer add through fragments: load, broadcast, store",
                cases=_cases(3201, wide),
                **common,
            ),
        ),
    )


# %% [markdown]
# ## Reading a failure
#
# A failed check says where to look. The cells below plant two bugs in copies of `outer_add`, for you to
# read and fix. `check_source` and `explain_source` work like `check` and `explain`, on a kernel given as
# text. Your own kernels and their checks stay as they are.
#
# **1. A wrong offset.** This copy reads `A[i]` where `A[row]` belongs. Predict: which tiles of C come out
# wrong?

# %% [notebook]
# from grader.frontends.planted import check_source
#
# a_without_offset = """
# import tilelang
# import tilelang.language as T
#
#
# @tilelang.jit
# def outer_add(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 256):
#     M, N = T.const("M, N")
#     A: T.Tensor((M,), T.float16)
#     B: T.Tensor((N,), T.float16)
#     C = T.empty((M, N), T.float16)
#
#     with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
#         for i, j in T.Parallel(BLOCK_M, BLOCK_N):
#             row = by * BLOCK_M + i
#             col = bx * BLOCK_N + j
#             if row < M and col < N:
#                 C[row, col] = A[i] + B[col]
#
#     return C
# """
# check_source("03", "outer_add", a_without_offset, case="odd_33x127")

# %% [markdown]
# The tile map marks each tile of C, `x` wrong and `.` right, one row of marks per row of tiles:
#
# ```
# ..
# xx
# xx
# ```
#
# The first row of tiles is right and every row below it is wrong, so suspect the row offset. The first
# wrong element is `C[16, 0]`, where the second row of tiles starts. It holds a wrong number, not NaN: the
# element was written, with the wrong value.

# %% [notebook]
# from grader.frontends.planted import explain_source
#
# explain_source("03", "outer_add", a_without_offset, case="odd_33x127")

# %% [markdown]
# `explain_source` replays block `(0, 1)`, the one that wrote `C[16, 0]`. It opens at the step that stored
# it, badged "the wrong element came from here". That step's picture of A colours what the block read:
# `A[0:16]`, not `A[16:32]`. So `A[i]` ignores `by`. Write `A[row]` in the string and run both cells again:
# the check passes.
#
# For your own kernel, a failed check prints the call to make: `explain("outer_add", case="odd_33x127")`.
# In a terminal, `python -m grader 03 --explain outer_add` prints the same steps, with `>>` at that one.
#
# **2. A race.** This copy fixes the first bug and plants another: it stores to `C[row, j]`, not
# `C[row, col]`. Predict: what does the grader say?

# %% [notebook]
# from grader.frontends.planted import check_source
#
# store_without_offset = a_without_offset.replace("A[i]", "A[row]").replace("C[row, col]", "C[row, j]")
# check_source("03", "outer_add", store_without_offset, case="odd_33x127")

# %% [markdown]
# There is no tile map this time: the simulator stops at the race. Blocks `(bx=1,by=2)` and `(bx=0,by=2)`
# both store to `C[32, 0]`, with different values. A GPU runs blocks in no set order, so `C[32, 0]` would
# keep whichever store came last. The two blocks differ only in `bx`, so the store's address ignores `bx`:
# write `C[row, col]`.
#
# `T.print` is no help in a check: the simulator skips it, and on a GPU the grader discards printed output.

# %% [markdown]
# ## What you learned
#
# - A 2-D grid and a 2-D `T.Parallel` map onto a row-major matrix: first grid axis and last loop
#   variable along the rows.
# - Tile corners are `(by * BLOCK_M, bx * BLOCK_N)`; hand-written indexing needs a guard in each
#   dimension.
# - A lower-dimensional fragment used in a higher-dimensional loop is broadcast.
#
# **Next:** puzzle 04 uses broadcasting in a forward op and meets its mirror image in the backward:
# a sum over the broadcast dimension.

# %% [bench]

# %% [markdown]
# ## Experiments to try
#
# Each cell runs as it stands; change the numbers and run it again, and predict the result first.
# `bench(kernel, NAME=value, ...)` times your kernel on its bench case with those block parameters in
# place of the case's (it checks the kernel on that case first; the graded cases keep theirs); without
# a GPU it prints one line. The cells that compile need nvcc but no GPU.
#
# **1. The shape of a tile.** The cell compiles the reference `outer_add_fragments` at the bench case's
# size for three tiles of 8192 elements each, and prints the store of C. Predict: how wide is each
# thread's store, and what does one warp's 32 stores cover, at 32 x 256, 256 x 32 and 1024 x 8?

# %% [notebook]
# from grader.teaching.experiments import kernel_source
# from solutions.p03_outer_add import outer_add_fragments as reference_outer_add_fragments
#
# # Put your own outer_add_fragments in place of the reference once its check passes.
# for block_m, block_n in ((32, 256), (256, 32), (1024, 8)):
#     blocks = {"BLOCK_M": block_m, "BLOCK_N": block_n, "THREADS": 256}
#     cuda = kernel_source(reference_outer_add_fragments, M=16384, N=16384, **blocks)
#     stores = [line.strip() for line in cuda.splitlines() if "C + " in line]
#     print(blocks, "stores C with:")
#     print("   ", stores[0])

# %% [measured]
# Every shape stores 16 bytes at a time (`uint4`): TileLang gives each thread 8 consecutive columns
# wherever the tile allows. What changes is what the 32 stores of one warp cover together (read the
# index: `threadIdx.x & 31`, `& 3` or nothing along the row). At 32 x 256, the bench case's tile, they
# are 512 contiguous bytes of one row; at 256 x 32, 64 bytes in each of 8 rows; at 1024 x 8, 16 bytes
# in each of 32 rows, one row per thread.

# %% [markdown]
# **2. The same shapes on the GPU.** The bench case takes 0.1199 ms, 4478 GB/s on the H200
# (docs/results/h200-bench.md): 108 % of the copy bandwidth puzzle 01 measures, more than puzzle 02's
# `add`. Almost all of its traffic is writes. A and B, 64 KiB together, are read by every block but
# stay in the L2 cache (the L2 hit rate is 99 %, docs/results/h200-profiles.md), so DRAM sees the 512
# MiB of C and little else, and is 91 % busy, against 84 % for the copy's even mix of reads and writes
# (puzzle 02).
#
# The output is written once whatever the shape: the time is the writes. Memory moves in 32-byte
# sectors. Predict: at 256 x 32 and at 1024 x 8, does a warp still write whole sectors, and does the
# time move?

# %% [notebook]
# bench("outer_add_fragments", BLOCK_M=256, BLOCK_N=32)
# bench("outer_add_fragments", BLOCK_M=1024, BLOCK_N=8)

# %% [measured]
# On the H200 (docs/results/h200-experiments.md), 32 x 256 took 0.1198 ms, 4482 GB/s. 256 x 32 took
# 0.1316 ms, 4080 GB/s: 10 % slower, though every warp still writes whole sectors. 1024 x 8 took
# 1.1549 ms, 465 GB/s, almost ten times as long. Its warps write half sectors; the other half of each
# sector comes from the neighbouring block. The halves do not meet cheaply: that costs far more than
# the bytes. The run does not show where they meet, in the L2 cache or in memory.
