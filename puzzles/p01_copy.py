"""Puzzle 01 · Copy: one block, a grid of blocks, and tiles.

A copy does nothing but move bytes, which makes it the cleanest first kernel: it has a launch
grid, threads, global reads and global writes, and no arithmetic to get wrong. Its speed on a
large vector is the memory bandwidth that every later memory-bound puzzle is compared with.

Input ``A``: an fp16 vector of N. Output ``B``: an fp16 vector of N with ``B[i] = A[i]``.
The three kernels compute the same thing and differ in how the work is spread over the GPU.
Each is graded on its numbers and on the construct its rung teaches, read from the kernel's TIR:
right numbers reached another way are refused, with the construct the grader found instead.

``copy_serial``
    A single block: ``T.Kernel(1, threads=THREADS)``. A ``T.serial`` loop walks the vector
    THREADS elements per step, and inside it ``T.Parallel(THREADS)`` hands element
    ``step * THREADS + t`` of the step to thread ``t``. When N is not a multiple of THREADS the
    last step reaches past the end of the vector, so the copy is guarded with ``if i < N``.
    It is correct, and slow: one block runs on one of the H200's 132 SMs, and the others idle.

``copy_threads``
    The launch grid takes the place of the serial loop.
    ``T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx`` starts one block per BLOCK
    elements, and block ``bx`` owns ``B[bx * BLOCK]`` up to ``B[bx * BLOCK + BLOCK - 1]``.
    ``T.Parallel(BLOCK)`` spreads those elements over the block's THREADS threads, BLOCK /
    THREADS each. The grid is rounded up (``T.ceildiv``), so the last block may be partial and
    its iterations past N must not copy: the kernel says so with ``if i < N``.

``copy_tiles``
    The same grid, but each block moves its BLOCK elements as one tile: ``T.copy`` from ``A``
    into a fragment of BLOCK (registers, spread over the threads), then ``T.copy`` from the
    fragment into ``B``. ``T.copy`` is given only the tile's first element and takes its
    extent from the fragment; it checks the edge of the tensor itself (reads past the end give
    zeros, writes past it are dropped), so there is no hand-written guard.

About the guard ``if i < N``: TileLang adds one itself. Compiled for sm_90a,
``copy_threads`` gives the same CUDA with and without it: every global load or store whose index
TileLang cannot prove in range is wrapped in its own ``if``, in a ``T.Parallel`` loop, a serial
loop or an atomic alike. A load past the end reads 0 and a store past it is dropped. Writing the
guard still says what the kernel means, and a hand-written CUDA kernel has no such net. It is
needed where those zeros would change a result: a maximum over negative values, the sum of a
softmax's exponentials, a count.

What it teaches: what ``T.Kernel``'s grid and ``threads`` mean, how ``T.Parallel`` maps loop
iterations onto a block's threads, block offsets, guarding the tail of a size that is not a
multiple of the block, and copies of whole tiles. N is a compile-time constant (``T.const``):
every case compiles its own kernel, and where N is a multiple of the block TileLang drops the
guard it can prove always true and copies 16 bytes per instruction. On such sizes
``copy_threads`` and ``copy_tiles`` compile to much the same code; the tile style is the one
that later puzzles build on (shared memory, ``T.gemm``).

Preconditions: none on N (it need not be a multiple of THREADS or BLOCK). BLOCK is a multiple
of THREADS in every case.
"""

# %% [markdown]
# ## Why start with a copy
#
# A copy does no arithmetic, so its speed is the speed of the memory system and nothing else. The
# H200's HBM3e is specified at 4.8 TB/s (docs/results/datasheets.md); torch's own device-to-device
# copy of this puzzle's bench case (2 x 256 MiB) takes 0.1295 ms on the course's H200, and a copy of
# 512 MiB reaches 4,170 GB/s counting bytes read plus bytes written (docs/results/h200-bench.md).
# Every memory-bound kernel that follows (element-wise ops, reductions, softmax, GEMV, unpacking
# weights) is judged against that number, and `--bench` reports GB/s for them. It is a yardstick, not
# a ceiling: puzzle 02 shows kernels that pass it, and why.
#
# **How a TileLang kernel runs.** `with T.Kernel(grid, threads=THREADS) as bx:` launches `grid`
# *blocks* of THREADS threads each. The body is written once, for one block; `bx` says which block it
# is. Blocks are independent: the hardware spreads them over the SMs (132 on the H200) and runs them
# in any order. Inside a block:
#
# - `for i in T.Parallel(n)` is a loop whose n iterations TileLang spreads over the block's threads:
#   neighbouring iterations go to neighbouring threads (or, when it can use vector loads, runs of 8
#   fp16 elements to each thread), so a warp touches one contiguous stretch of memory and its loads
#   coalesce into wide memory transactions.
# - `for s in T.serial(n)` is an ordinary loop: every thread runs all n steps in order.
#
# Sizes such as N are compile-time constants (`T.const`): each case compiles its own kernel.

# %%
from __future__ import annotations

import tilelang
import tilelang.language as T

from grader.concepts import parallel_loop, tiles_through_fragments
from grader.spec import Case, Kernel, Puzzle, Tensor, tensor_bytes

# ---------------------------------------------------------------- references (run on float64)


def copy_reference(A):
    return A.clone()


def torch_copy(A):
    """What --bench times against: torch at the kernel's own dtypes."""
    return A.clone()


# -------------------------------------------------------------------------------- kernels


# %% [markdown]
# ## Kernel 1: `copy_serial`, one block
#
# A grid of one block. A `T.serial` loop walks the vector THREADS elements per step; inside it a
# `T.Parallel(THREADS)` gives element `step * THREADS + t` to thread `t`.
#
# What to watch for:
# - the number of steps is `T.ceildiv(N, THREADS)`, rounded up, or the tail is never copied;
# - the last step reaches past the end when THREADS does not divide N: copy only where `i < N`
#   (TileLang would drop those accesses by itself, as the note after kernel 3 shows).
#
# It is correct and slow: one block runs on one SM while the other 131 idle. The bench case shows by
# how much.
#
# **What the grader checks here, and why.** The numbers, and in the kernel's TIR a `T.Parallel` loop:
# this rung is about deciding yourself which thread copies which element. One `T.copy(A, B)`, the way
# the original tilelang-puzzles course starts, gives the right numbers and is still refused, because
# `T.copy` makes that decision for you (kernel 3 comes back to it). A plain `T.serial` loop over every
# element is refused too: each of the block's threads runs the whole loop, so every element is copied
# THREADS times. The refusal names what your kernel used instead.


# %% copy_serial
@tilelang.jit
def copy_serial(A, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)

    with T.Kernel(1, threads=THREADS):
        # TODO begin: one block walks the whole vector, THREADS elements per step
        # Copy all of A into B with the single block you have: step through the vector THREADS
        # elements at a time with a T.serial loop, and inside each step let a T.Parallel loop give
        # one element to each thread. Cover the last, partial step, but write nothing past the end
        # of the vector. Write that mapping yourself: one T.copy(A, B) gives the right numbers but
        # is refused here, because T.copy picks the threads for you.
        raise NotImplementedError("copy_serial")
        # TODO end

    return B


# %% [markdown]
# ## Kernel 2: `copy_threads`, a grid of blocks
#
# The launch grid replaces the serial loop: `T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS)` starts
# one block per BLOCK elements, and block `bx` copies `B[bx * BLOCK + i]` for `i` in
# `T.Parallel(BLOCK)`; each thread handles BLOCK / THREADS of them.
#
# What to watch for:
# - `T.ceildiv(N, BLOCK)` blocks, not `N // BLOCK`: the last, partial block still has to run;
# - that last block reaches past the end: write the guard `if i < N` (TileLang also adds its own).
#
# The `tail_1000` case, 1000 elements in blocks of 256 (orange: the partial block; hatched: indices
# that exist only in the grid, not in the vector):

# %% [notebook]
# from grader.teaching.pictures import mismatch_map, tiling
#
# tiling(1, 1000, 1, 256)

# %% [markdown]
# When a check fails, the grader reports which tiles of the output are wrong. Here is the map it
# would draw for a kernel launched with `N // BLOCK` blocks on that case: the fourth block never ran,
# so its tile still holds the NaN the grader filled the output with.

# %% [notebook]
# mismatch_map({"output": "B", "tile": [256], "wrong": [[0, 0, 0, 1]]})


# %% copy_threads
@tilelang.jit
def copy_threads(A, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        # TODO begin: block bx copies its BLOCK elements, one T.Parallel iteration each
        # Each block copies its own BLOCK consecutive elements, one T.Parallel iteration per
        # element. Find where this block's elements start from its block index, and keep the last
        # block, which the rounded-up grid lets hang past the end of the vector, from writing there.
        raise NotImplementedError("copy_threads")
        # TODO end

    return B


# %% [markdown]
# ## Kernel 3: `copy_tiles`, whole tiles with `T.copy`
#
# Same grid; each block now moves its BLOCK elements as one tile. `T.alloc_fragment((BLOCK,),
# T.float16)` is a tile held in registers, spread over the block's threads; `T.copy(A[bx * BLOCK],
# tile)` fills it from the tensor starting at that element (the extent comes from the fragment), and
# `T.copy(tile, B[bx * BLOCK])` writes it back.
#
# What changed: there is no guard. `T.copy` checks the edge of the tensor itself: reads past the end
# give zeros and writes past it are dropped. With N a multiple of the block TileLang also proves the
# check always true, removes it, and moves 16 bytes per instruction. This is the tile style every
# later puzzle is written in: load tiles, compute on tiles, store tiles.
#
# **What the grader checks here, and why.** Two `T.copy` calls with a fragment between them. One
# `T.copy` from a slice of A straight into B (the original course's block copy), or a tile staged in
# shared memory alone (`T.alloc_shared`), gives the right numbers and is refused: the point of the
# rung is the tile in registers, because that is where later puzzles compute (the sums of puzzle 02,
# the reductions of 05, the accumulator of `T.gemm` in 08). An element-by-element `T.Parallel` loop is
# kernel 2 again.


# %% copy_tiles
@tilelang.jit
def copy_tiles(A, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        # TODO begin: block bx moves its BLOCK elements as one tile through a fragment
        # Move this block's BLOCK elements as one tile: allocate a float16 fragment the size of a
        # block, fill it from A with T.copy, and write it to B with a second T.copy. No guard by
        # hand: T.copy stops at the edge of the tensor. The tile must sit in the fragment: a T.copy
        # straight from A to B, or through shared memory alone, is refused.
        raise NotImplementedError("copy_tiles")
        # TODO end

    return B


# %% [markdown]
# ## Who guards the edge
#
# TileLang guards global accesses itself. Compile `copy_threads` for sm_90a without its
# `if i < N` and the CUDA is the same as with it: TileLang wraps the load and the store in its own
# check of the index against N (printed as `... < 125`: it counts in runs of 8 elements, and
# 125 x 8 = 1000). It does the same in serial loops, in code run by a single thread and for
# atomics: a load past the end of a tensor reads 0, a store past it is dropped. The cell below
# prints the kernel TileLang generates for an unguarded copy (no GPU needed).
#
# So the guard in kernels 1 and 2 is there to say what the kernel means; a CUDA kernel written by
# hand does need it. It matters in TileLang when the zeros read past the end would change a
# result: a maximum over negative values, the sum of a softmax's exponentials, a count. Then the
# padding must be set to what leaves the result alone (minus infinity for a maximum), as puzzle 06
# does.
#
# **One exception, on Hopper (sm_90a: H100, H200).** There TileLang compiles a `T.copy` from a
# 1-D shared tile (`T.alloc_shared`) to global memory into a TMA store (`tl::tma_store`), which writes
# whole 16-byte units: at the tensor's end it writes on to the next 16-byte boundary, up to 7 fp16
# elements past the end, over whatever lies there (3 past a 37-element output and 5 past a
# 4099-element one on the H200). The grader catches it on the CPU too. Store from a fragment, as
# kernel 3 does (TileLang guards those stores), or write the shared tile out with a guarded
# `T.Parallel` loop.

# %% [notebook]
# import tilelang
# import tilelang.language as T
#
# from grader.teaching.experiments import kernel_source
#
#
# @tilelang.jit
# def copy_unguarded(A, BLOCK: int, THREADS: int = 256):
#     N = T.const("N")
#     A: T.Tensor((N,), T.float16)
#     B = T.empty((N,), T.float16)
#     with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
#         for t in T.Parallel(BLOCK):
#             B[bx * BLOCK + t] = A[bx * BLOCK + t]
#     return B
#
#
# cuda = kernel_source(copy_unguarded, N=1000, BLOCK=256)
# print(cuda[cuda.index('extern "C" __global__ void __launch_bounds__'):])


# %% cases
# ---------------------------------------------------------------------------------- cases

_A = Tensor("A", ("N",), "float16")
_B = Tensor("B", ("N",), "float16")

# 2^27 fp16 elements are 256 MiB each way, far beyond the H200's L2 cache: timing sees HBM.
LARGE = 1 << 27


def _bytes(s):
    return tensor_bytes((_A, _B), s)


def puzzle() -> Puzzle:
    common = dict(
        inputs=(_A,),
        outputs=(_B,),
        reference=copy_reference,
        baseline=torch_copy,
        bytes_moved=_bytes,
    )
    return Puzzle(
        id="01",
        title="Copy",
        kernels=(
            Kernel(
                function="copy_serial",
                concepts=(
                    parallel_loop(
                        "each step's THREADS elements handed to the threads by your own T.Parallel(THREADS) loop "
                        "(the rung is about writing that mapping)"
                    ),
                ),
                title="Copy with one block and a serial loop",
                tiles={"B": ("THREADS",)},
                cases=(
                    Case("even_1024", {"N": 1024}, {"THREADS": 256}, seed=1101, simulate=True),
                    Case("tail_1000", {"N": 1000}, {"THREADS": 256}, seed=1102, simulate=True),
                    Case("odd_4097", {"N": 4097}, {"THREADS": 128}, seed=1103),
                    Case("tail_100003", {"N": 100_003}, {"THREADS": 512}, seed=1104),
                    # One block on one SM against torch on all of them: the gap is the lesson.
                    Case("large_2p27", {"N": LARGE}, {"THREADS": 1024}, seed=1105, bench=True),
                ),
                **common,
            ),
            Kernel(
                function="copy_threads",
                concepts=(parallel_loop("the block's BLOCK elements spread over its threads with T.Parallel(BLOCK)"),),
                title="Copy with a grid of blocks and a guarded T.Parallel",
                tiles={"B": ("BLOCK",)},
                cases=(
                    Case("even_4096", {"N": 4096}, {"BLOCK": 1024, "THREADS": 256}, seed=1201, simulate=True),
                    Case("tail_1000", {"N": 1000}, {"BLOCK": 256, "THREADS": 128}, seed=1202, simulate=True),
                    Case("odd_4097", {"N": 4097}, {"BLOCK": 1024, "THREADS": 256}, seed=1203),
                    Case("tail_1000003", {"N": 1_000_003}, {"BLOCK": 2048, "THREADS": 256}, seed=1204),
                    Case("large_2p27", {"N": LARGE}, {"BLOCK": 4096, "THREADS": 256}, seed=1205, bench=True),
                ),
                **common,
            ),
            Kernel(
                function="copy_tiles",
                concepts=(
                    tiles_through_fragments(
                        "the tile moved with T.copy from A into a fragment (T.alloc_fragment), then with T.copy into B "
                        "(the register tile later puzzles compute on)"
                    ),
                ),
                title="Copy tile by tile with T.copy through a fragment",
                tiles={"B": ("BLOCK",)},
                cases=(
                    Case("even_4096", {"N": 4096}, {"BLOCK": 1024, "THREADS": 256}, seed=1301, simulate=True),
                    Case("tail_1000", {"N": 1000}, {"BLOCK": 256, "THREADS": 128}, seed=1302, simulate=True),
                    Case("odd_4097", {"N": 4097}, {"BLOCK": 1024, "THREADS": 256}, seed=1303),
                    Case("tail_1000003", {"N": 1_000_003}, {"BLOCK": 2048, "THREADS": 256}, seed=1304),
                    # 8192 elements per block: each thread holds 64 bytes, four 16-byte loads in
                    # flight before its stores, enough to keep HBM busy.
                    Case("large_2p27", {"N": LARGE}, {"BLOCK": 8192, "THREADS": 256}, seed=1305, bench=True),
                ),
                **common,
            ),
        ),
    )


# %% [markdown]
# ## What you learned
#
# - `T.Kernel` launches a grid of independent blocks; the body describes one block.
# - `T.Parallel` spreads a loop over the block's threads; `T.serial` is a plain loop.
# - Round the grid up with `T.ceildiv`. TileLang guards every global access past a tensor's end
#   (reads give 0, writes are dropped), `T.copy` included; guard by hand where those zeros would
#   change a result. On Hopper, store 1-D tiles from a fragment, not from shared memory.
# - One block uses one SM: a kernel needs many blocks to use the GPU.
#
# **Next:** puzzle 02 computes something on the way through, and fuses two steps into one pass.

# %% [bench]

# %% [markdown]
# ## Experiments to try
#
# Each cell runs as it stands; change the numbers and run it again, and predict the result first.
# `bench(kernel, NAME=value, ...)` times your kernel on its bench case with those block parameters in
# place of the case's (it checks the kernel on that case first; the graded cases keep theirs); without
# a GPU it prints one line. The cells that compile need nvcc but no GPU.
#
# **1. What one thread does.** The cell compiles the reference `copy_threads` at the bench case's size
# (2^27 elements) for three block shapes and prints the kernel's body. Predict: how wide is each
# thread's load at BLOCK = 4096 and at 1024 (THREADS = 256), and what do the threads of a block of 512
# do when BLOCK is only 256?

# %% [notebook]
# from grader.teaching.experiments import kernel_source
# from solutions.p01_copy import copy_threads as reference_copy_threads
#
# # Put your own copy_threads in place of reference_copy_threads once its check passes.
# for blocks in ({"BLOCK": 4096, "THREADS": 256}, {"BLOCK": 1024, "THREADS": 256}, {"BLOCK": 256, "THREADS": 512}):
#     cuda = kernel_source(reference_copy_threads, N=1 << 27, **blocks)
#     print(blocks)
#     for line in cuda[cuda.index("__launch_bounds__") :].splitlines()[1:]:
#         if line.strip() not in ("", "}", "#pragma unroll"):
#             print("   ", line.strip())

# %% [measured]
# Each thread copies BLOCK / THREADS elements. At 4096 / 256 = 16 that is two 16-byte vectors (`uint4`,
# 8 fp16 values each); at 1024 / 256 = 4, one 8-byte vector (`uint2`). With BLOCK = 256 and THREADS =
# 512 there is less than one element per thread: TileLang keeps the first 256 threads busy
# (`if (threadIdx.x < 256)`), the other half of the block does nothing, and each working thread moves
# one 2-byte element. No guard against N appears: 2^27 is a multiple of every BLOCK here, and TileLang
# drops a check it can prove always true.

# %% [markdown]
# **2. Block size.** The bench case runs `copy_threads` at BLOCK = 4096, THREADS = 256: 0.1325 ms,
# 4051 GB/s on the H200 (docs/results/h200-bench.md). Predict: at BLOCK = 1024 and at 8192, faster,
# slower, or the same?

# %% [notebook]
# bench("copy_threads", BLOCK=1024)
# bench("copy_threads", BLOCK=8192)

# %% [measured]
# On the H200 (docs/results/h200-experiments.md), the bench case's BLOCK = 4096 took 0.1328 ms,
# 4043 GB/s. BLOCK = 8192 took 0.1353 ms, 3969 GB/s: a tie, 2 % apart. BLOCK = 1024 took 0.1403 ms,
# 3827 GB/s, 6 % slower. All three move the same 512 MiB, so the bytes are not the difference. At 1024
# each thread issues 8-byte loads: twice the load instructions per byte, and four times the blocks to
# start.

# %% [markdown]
# **3. More threads than elements.** Predict: BLOCK = 256 with THREADS = 512, next to the bench case?

# %% [notebook]
# bench("copy_threads", BLOCK=256, THREADS=512)

# %% [measured]
# Much slower: 0.4877 ms, 1101 GB/s on the H200, 3.7 times the bench case's 0.1328 ms
# (docs/results/h200-experiments.md). Half of each block idles, and each working thread has one 2-byte
# load in flight. That is about 2 KiB in flight per SM. The bench case's shape has up to 64 KiB: 2048
# threads, two 16-byte loads each. A memory system delivers roughly the bytes in flight over a load's
# latency: fewer bytes, less bandwidth.

# %% [markdown]
# **4. One block.** `copy_serial`'s bench case uses THREADS = 1024 (7.1468 ms, 75 GB/s on the H200,
# docs/results/h200-bench.md). Predict: with THREADS = 256, how much slower?

# %% [notebook]
# bench("copy_serial", THREADS=256)

# %% [measured]
# On the H200 (docs/results/h200-experiments.md), THREADS = 1024 took 7.1345 ms, 75 GB/s. THREADS = 256
# took 9.2189 ms, 58 GB/s. A quarter of the threads cost 1.3 times the time, not four. So the threads'
# loads in flight are not this SM's only limit; the run does not show what else is. THREADS cannot go
# past 1024, and one block stays over 50 times slower than `copy_threads`' grid (0.1328 ms).
