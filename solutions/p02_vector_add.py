"""Puzzle 02 · Vector add: element-wise kernels, a fused one, and tiles in fragments.

Element-wise operations (residual adds, activations, scaling) are everywhere in a network and
do almost no arithmetic per byte, so their speed is set by memory traffic alone. This puzzle
writes three of them on the grid of puzzle 01.

Inputs ``A`` and ``B``: fp16 vectors of N. Output ``C``: an fp16 vector of N.

``add``
    ``C[i] = A[i] + B[i]``. The ``copy_threads`` kernel of puzzle 01 with two inputs: one block
    per BLOCK elements, ``T.Parallel(BLOCK)`` over them, and a guard ``if i < N`` for the
    partial last block (TileLang adds its own too: see puzzle 01, "Who guards the edge").

``mul_relu``
    ``C[i] = max(A[i] * B[i], 0)``, the product and the ReLU fused into one kernel. Written as
    two torch calls (``torch.relu(A * B)``) it is two kernels, and the product goes out to
    memory and comes back: 5 passes over a vector of N where the fused kernel needs 3. The
    bench compares with exactly that. The maximum is ``T.max`` (Python's ``max`` cannot compare a symbolic
    expression with 0). One fp16 multiply rounds the product once, as the reference does.

``add_fragments``
    ``add`` again, written with tiles as in ``copy_tiles``: ``T.copy`` the block's tiles of
    ``A`` and ``B`` into two fragments, add them element by element in ``T.Parallel`` into a
    third fragment, and ``T.copy`` that out to ``C``. Load, compute, store: every later
    puzzle has this shape. ``T.copy`` handles the edge of the vector, so the guard goes away;
    past the end the input fragments hold zeros, which are added and never stored.

What it teaches: element-wise kernels, that fusing element-wise steps saves memory passes
(the speed-up is about the ratio of bytes moved), and the load/compute/store structure with
fragments.

Preconditions: none on N. BLOCK is a multiple of THREADS in every case.
"""

# %% [markdown]
# ## Why element-wise kernels are about bytes
#
# `C = A + B` in fp16 reads 4 bytes and writes 2 for one addition. The H200's CUDA cores do about 67
# fp32 TFLOP/s (its Tensor Cores ~989 fp16; docs/results/datasheets.md) but its memory moves under 5
# terabytes per second, so a kernel like this spends its time waiting for memory, and its speed is
# simply bytes moved divided by bandwidth. For the bench case (2²⁷ elements, 768 MiB moved) that is
# 768 MiB over the bandwidth of a device-to-device copy (puzzle 01), whatever the arithmetic; torch's
# own `A + B` takes 0.1872 ms on the H200 (docs/results/h200-bench.md).
#
# It follows that the one real optimisation for element-wise work is to move fewer bytes: **fuse**
# consecutive element-wise steps into one kernel, so intermediate results stay in registers instead
# of going to HBM and coming back. Residual adds, bias-plus-activation epilogues and the chains
# `torch.compile` fuses are all this puzzle.

# %%
from __future__ import annotations

import tilelang
import tilelang.language as T

from grader.concepts import parallel_loop, tiles_through_fragments
from grader.spec import Case, Kernel, Puzzle, Tensor, tensor_bytes

# ---------------------------------------------------------------- references (run on float64)


def add_reference(A, B):
    return A + B


def mul_relu_reference(A, B):
    return (A * B).clamp_min(0)


def torch_add(A, B):
    """What --bench times against: torch at the kernel's own dtypes."""
    return A + B


def torch_mul_relu(A, B):
    """torch's unfused version: a multiply kernel, then a ReLU kernel."""
    return (A * B).relu()


# -------------------------------------------------------------------------------- kernels


# %% [markdown]
# ## Kernel 1: `add`
#
# `copy_threads` from puzzle 01 with two inputs: one block per BLOCK elements, a `T.Parallel(BLOCK)`
# over them, and the guard `if i < N` (TileLang would drop the accesses past N without it, as puzzle
# 01 shows, but it says what the kernel means). The picture is the `odd_4097` case: the fifth block
# holds a single element of the vector.

# %% [notebook]
# from grader.teaching.pictures import tiling
#
# tiling(1, 4097, 1, 1024)


# %% add
@tilelang.jit
def add(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        # TODO begin: block bx adds its BLOCK elements
        for t in T.Parallel(BLOCK):
            i = bx * BLOCK + t
            if i < N:
                C[i] = A[i] + B[i]
        # TODO end

    return C


# %% [markdown]
# ## Kernel 2: `mul_relu`, two steps fused
#
# `C = max(A * B, 0)` in one pass. As torch writes it, `(A * B).relu()` is two kernels: the product
# is written to memory and read back. Count the passes over a vector of N: the product reads two and
# writes one, the ReLU reads one and writes one, 5 in all; the fused kernel reads two and writes one,
# 3 in all. Memory-bound, so the speed-up to expect is about 5 / 3.
#
# Use `T.max(x, 0)`: Python's `max` cannot compare a symbolic TileLang expression with 0. The fp16
# product is rounded once, as in the reference.


# %% mul_relu
@tilelang.jit
def mul_relu(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        # TODO begin: block bx computes max(A * B, 0) for its BLOCK elements in one pass
        for t in T.Parallel(BLOCK):
            i = bx * BLOCK + t
            if i < N:
                C[i] = T.max(A[i] * B[i], 0)
        # TODO end

    return C


# %% [markdown]
# ## Kernel 3: `add_fragments`: load, compute, store
#
# `add` in the tile style of `copy_tiles`: copy the block's tiles of A and B into two fragments, add
# them element by element in a `T.Parallel(BLOCK)` loop into a third, and copy that to C. Indices in
# the loop are positions inside the tile, so no guard: past the end of the vector the input fragments
# hold zeros, their sums are computed and never stored.
#
# Every later kernel has this shape: bring tiles close (registers or shared memory), compute on
# them, store the result tile.


# %% add_fragments
@tilelang.jit
def add_fragments(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        # TODO begin: load both tiles into fragments, add them, store the sum tile
        a = T.alloc_fragment((BLOCK,), T.float16)
        b = T.alloc_fragment((BLOCK,), T.float16)
        c = T.alloc_fragment((BLOCK,), T.float16)
        T.copy(A[bx * BLOCK], a)
        T.copy(B[bx * BLOCK], b)
        for t in T.Parallel(BLOCK):
            c[t] = a[t] + b[t]
        T.copy(c, C[bx * BLOCK])
        # TODO end

    return C


# %% cases
# ---------------------------------------------------------------------------------- cases

_A = Tensor("A", ("N",), "float16")
_B = Tensor("B", ("N",), "float16")
_C = Tensor("C", ("N",), "float16")

# 2^27 fp16 elements: 256 MiB per vector, 768 MiB per call, far beyond the H200's L2 cache.
LARGE = 1 << 27


def _bytes(s):
    return tensor_bytes((_A, _B, _C), s)


def _cases(first_seed: int, bench_blocks: dict) -> tuple[Case, ...]:
    return (
        Case("even_4096", {"N": 4096}, {"BLOCK": 1024, "THREADS": 256}, seed=first_seed, simulate=True),
        Case("tail_1000", {"N": 1000}, {"BLOCK": 256, "THREADS": 128}, seed=first_seed + 1, simulate=True),
        Case("odd_4097", {"N": 4097}, {"BLOCK": 1024, "THREADS": 256}, seed=first_seed + 2),
        Case("tail_1000003", {"N": 1_000_003}, {"BLOCK": 2048, "THREADS": 256}, seed=first_seed + 3),
        Case("large_2p27", {"N": LARGE}, bench_blocks, seed=first_seed + 4, bench=True),
    )


def puzzle() -> Puzzle:
    common = dict(
        inputs=(_A, _B),
        outputs=(_C,),
        bytes_moved=_bytes,
        tiles={"C": ("BLOCK",)},
    )
    return Puzzle(
        id="02",
        title="Vector add",
        kernels=(
            Kernel(
                function="add",
                concepts=(parallel_loop("the block's BLOCK elements spread over its threads with T.Parallel(BLOCK)"),),
                title="C = A + B with a guarded T.Parallel",
                reference=add_reference,
                baseline=torch_add,
                cases=_cases(2101, {"BLOCK": 4096, "THREADS": 256}),
                **common,
            ),
            Kernel(
                function="mul_relu",
                concepts=(parallel_loop("the block's BLOCK elements spread over its threads with T.Parallel(BLOCK)"),),
                title="C = max(A * B, 0) fused into one pass",
                reference=mul_relu_reference,
                baseline=torch_mul_relu,
                cases=_cases(2201, {"BLOCK": 4096, "THREADS": 256}),
                **common,
            ),
            Kernel(
                function="add_fragments",
                concepts=(
                    tiles_through_fragments(
                        "A and B loaded with T.copy into fragments (T.alloc_fragment), added there, stored with T.copy"
                    ),
                ),
                title="C = A + B through fragments: load, compute, store",
                reference=add_reference,
                baseline=torch_add,
                # 8192 elements per block: each thread holds 64 bytes of each input, so eight
                # 16-byte loads are in flight before the adds.
                cases=_cases(2301, {"BLOCK": 8192, "THREADS": 256}),
                **common,
            ),
        ),
    )


# %% [markdown]
# ## What you learned
#
# - Element-wise kernels are memory-bound: their time is bytes moved over bandwidth.
# - Fusing steps removes the round trips of intermediates through HBM; the gain is the ratio of bytes.
# - `T.max` and friends build expressions on symbolic values; Python's builtins do not.
# - Load, compute, store with fragments, with `T.copy` handling the edge.
#
# **Next:** puzzle 03 goes to two dimensions and broadcasts vectors over a matrix.

# %% [bench]

# %% [markdown]
# ## Experiments to try
#
# Each cell runs as it stands; change the numbers and run it again, and predict the result first.
# `bench(kernel, NAME=value, ...)` times your kernel on its bench case with those block parameters in
# place of the case's (it checks the kernel on that case first; the graded cases keep theirs); without
# a GPU it prints one line. The cells that compile need nvcc but no GPU.
#
# **Faster than a copy.** The bench case runs `add` at BLOCK = 4096, THREADS = 256: 0.1890 ms, 4261
# GB/s on the H200, above the 4,170 GB/s of puzzle 01's copy in the same run (docs/results/h200-bench.md),
# and puzzle 03's `outer_add` goes further. The bytes are counted the same way for every kernel (each
# input read once, each output written once: a copy of 256 MiB counts 512 MiB), so the extra speed is
# real, and Nsight Compute shows where it comes from: DRAM is 84 % busy during `copy_threads` and 90 %
# during `add` (docs/results/h200-profiles.md). The copy does not keep the memory as busy as it could.
# Its traffic is half reads and half writes; `add`'s is two thirds reads. Why an even mix keeps DRAM
# less busy is not measured here; one likely cause is the time the memory bus loses turning around
# between reads and writes. A copy's bandwidth is a yardstick, not a ceiling.
#
# **1. Smaller blocks.** Predict: `add` at BLOCK = 512, THREADS = 128 and at BLOCK = 256, THREADS = 256,
# next to the bench case?

# %% [notebook]
# bench("add", BLOCK=512, THREADS=128)
# bench("add", BLOCK=256, THREADS=256)

# %% [measured]
# On the H200 (docs/results/h200-experiments.md), the bench case took 0.1889 ms, 4263 GB/s. BLOCK = 512,
# THREADS = 128 took 0.1866 ms, 4315 GB/s: a tie, 1 % apart. BLOCK = 256, THREADS = 256 took 0.3787 ms,
# 2127 GB/s, twice the time. Its threads add one element each, with one 2-byte load per input. That
# leaves too few bytes in flight to keep the memory busy (puzzle 01's experiments show the same).

# %% [markdown]
# **2. What a big block costs in registers.** The cell compiles the reference `add_fragments` for
# sm_90a with 8, 32 and 128 elements per thread and reads what ptxas allotted. Predict: how do the
# registers per thread grow with BLOCK, and how many blocks of 256 threads fit on one SM at the largest?

# %% [notebook]
# from grader.teaching.experiments import resource_usage, table
# from solutions.p02_vector_add import add_fragments as reference_add_fragments
#
# # Put your own add_fragments in place of reference_add_fragments once its check passes.
# rows = [
#     resource_usage(reference_add_fragments, f"BLOCK={block}, THREADS=256", N=1 << 27, BLOCK=block, THREADS=256)
#     for block in (2048, 8192, 32768)
# ]
# print(table(rows))

# %% [measured]
# A fragment lives in registers, so each thread holds its BLOCK / THREADS elements of A, B and C there,
# and its register count grows with them: 22, 40, 142. An SM has 65,536 registers for all the threads
# it runs. At 142 per thread it fits one block of 256 threads (two would need 72,704), at 40 about six,
# at 22 the SM's limit of 2048 threads (eight blocks) comes first. Fewer resident threads means fewer
# loads in flight to hide the memory's latency.

# %% [markdown]
# **3. The fragment kernel's block.** Its bench case uses BLOCK = 8192 (the case's comment says why:
# each thread then has eight 16-byte loads in flight before its adds). At 2048 each thread has one
# 16-byte load per input in flight; at 32768 it has many, but the SM holds a single block (experiment
# 2). Both trade the same thing, bytes in flight per SM, from opposite ends. Predict: which loses more?
# The bytes moved, and so the time floor, do not change.

# %% [notebook]
# bench("add_fragments", BLOCK=2048)
# bench("add_fragments", BLOCK=32768)

# %% [measured]
# Neither loses. On the H200 (docs/results/h200-experiments.md), the bench case's BLOCK = 8192 took
# 0.1902 ms, 4235 GB/s. BLOCK = 2048 took 0.1879 ms, 4286 GB/s, and BLOCK = 32768 took 0.1890 ms,
# 4262 GB/s. The three tie, within about 1 %, at `add`'s time. Both ends still keep enough bytes in
# flight: eight blocks of small loads per SM, or one block of many.
