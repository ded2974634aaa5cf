"""Puzzle 06 · Softmax: a numerically stable row softmax, in one pass and for rows of any length.

Softmax turns a row of scores into probabilities: attention weights, the output of a
classifier, the mixture weights of a router. It combines two reductions (a max and a sum) with
an elementwise exponential, and it is where learners first meet numerical stability.

Input and output (fp16 in, fp16 out, all arithmetic in fp32):

``softmax``
    ``A`` is M x N. Output ``C`` of M x N with
    ``C[i, j] = exp(A[i, j] - m_i) / sum_k exp(A[i, k] - m_i)`` where ``m_i = max_k A[i, k]``.
    Precondition: ``N <= BLOCK_N``, so a whole row fits in one tile and the kernel reads A once
    and writes C once. Each block owns BLOCK_M rows: copy the tile, ``T.reduce_max`` along the
    row, exponentiate, ``T.reduce_sum``, multiply by the reciprocal of the sum, copy out.

``softmax_online``
    The same softmax with no limit on N. What changed: a row no longer fits in one tile, so
    the block walks it in BLOCK_N steps twice. The first walk keeps, per row, a running max
    ``m`` and a running sum ``l`` of ``exp(x - m)``; when a tile raises the max from ``m`` to
    ``m'``, the sum gathered so far was measured against the old max, so it is rescaled by
    ``exp(m - m')`` before the tile's own sum is added (the "online softmax" of Milakov and
    Gimelshein, also the heart of flash attention in puzzle 07). The second walk reads each
    tile again and writes ``exp(x - m) / l``. A is read twice, C written once (--bench counts
    A once, so its GB/s for this kernel leaves out the second read).

Why subtract the max: exp overflows float32 past 88.7 (and float16 past 11.1), while
``exp(x - m)`` lies in (0, 1] for every x, whatever the scale of the scores; the result is
mathematically unchanged. (Most graded inputs are N(0, 1); the ``large_logits`` cases scale
them by 100, so a kernel that skips the max overflows there.)

The exponential: ``T.exp2`` maps to the GPU's native base-2 exponential. Multiply the inputs by
log2(e) once as they are loaded (``exp(x) = exp2(x * log2(e))``), take the max of the scaled
values, and the rest of the kernel works in base 2 with the same result.

The tail: ``T.copy`` reads zeros past the edge of A, and a zero is NOT neutral here: it would
add ``exp(0 - m)`` to every sum. Columns at or past N must become ``-inf`` before the max
(``T.if_then_else`` on the column index in the T.Parallel loop that scales the tile), so that
their exponential is exactly 0. Rows past M need nothing: their writes are dropped.

What it teaches: two reductions in one kernel and broadcasting a per-row value back over the
row; why and how to subtract the max; masking a partial tile with the right neutral value
(-inf: neutral for the max, and its exponential 0 is neutral for the sum); the online rescaling trick;
and, for speed, reading the row once (one tile) and multiplying by a reciprocal instead of
dividing every element. The baseline is ``torch.softmax(A, dim=1)`` on the fp16 tensor.

Preconditions: ``softmax`` needs N <= BLOCK_N; ``softmax_online`` has none. M and N need not be
multiples of the block sizes. Bench cases are 256 MiB of fp16, larger than the H200's L2.
"""

# %% [markdown]
# ## Why this puzzle matters
#
# Softmax turns scores into probabilities: attention weights, classifier outputs, router weights.
# It is two reductions (a max and a sum) around an element-wise exponential, and the place where
# numerical stability stops being optional:
#
# $$\mathrm{softmax}(x)_j = \frac{e^{x_j - m}}{\sum_k e^{x_k - m}}, \qquad m = \max_k x_k$$
#
# Subtracting m changes nothing mathematically and keeps every exponent at or below 0, so nothing
# overflows (exp passes fp32's range at 88.7). It is memory-bound: the ideal kernel reads each score
# once and writes each probability once.

# %%
from __future__ import annotations

import math

import tilelang
import tilelang.language as T

from grader.concepts import reduces
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
# Each block owns BLOCK_M whole rows (`N <= BLOCK_N`): copy the tile, scale it by log2(e) into a
# float32 fragment, `T.reduce_max` along the row, replace each value by `T.exp2(x - max)`,
# `T.reduce_sum`, and multiply by one reciprocal per row instead of dividing every element. A per-row
# fragment (`max[i]`, `sum[i]`) used in a 2-D `T.Parallel` is broadcast along the row.
#
# What to watch for:
# - **the padding**: `T.copy` fills the columns past N with zeros, and zero is not neutral here: each
#   would add `exp(0 - m)` to the sum. Set them to `-T.infinity(T.float32)` before the max (with
#   `T.if_then_else` on the column index): -inf is neutral for the max and its exponential, 0, is
#   neutral for the sum;
# - `T.exp2` is the GPU's native exponential; `exp(x) = exp2(x * log2(e))`, so scaling once at load
#   time turns the whole kernel into base 2 with the same result.


# %% softmax
@tilelang.jit
def softmax(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        # TODO begin: one block computes the softmax of BLOCK_M whole rows (N <= BLOCK_N)
        # One block computes the softmax of BLOCK_M whole rows, each held in one tile: load the
        # tile, find each row's max with T.reduce_max, exponentiate the shifted values with T.exp2,
        # find each row's sum with T.reduce_sum, and scale every value by the reciprocal of its
        # row's sum before storing. Work in float32, and keep the zero padding that T.copy adds past
        # column N out of the max and the sum.
        raise NotImplementedError("softmax")
        # TODO end

    return C


# %% [markdown]
# ## Kernel 2: `softmax_online`, rows of any length
#
# What changed: a row no longer fits in a tile, and the max is not known until the row has been read.
# The online softmax (Milakov and Gimelshein) keeps, per row, a running max m and a running sum l of
# `exp(x - m)`. When a tile raises the max to m', everything summed so far was measured against the
# old m, so it is rescaled first:
#
# $$m' = \max(m, \max_{\text{tile}} x), \qquad l' = l\, e^{m - m'} + \sum_{\text{tile}} e^{x - m'}$$
#
# A second walk then reads each tile again and writes `exp(x - m) / l`. A is read twice and C written
# once: three passes over memory instead of two, the price of rows longer than a tile. The picture
# follows m and l across the tiles of one row:

# %% [notebook]
# from grader.pictures import online_softmax
#
# online_softmax(block=8)

# %% [markdown]
# What to watch for: keep the old max before `T.reduce_max(..., clear=False)` folds the tile in;
# rescale the running sum before adding the tile's sum; mask the padding with -inf using the tile's
# offset (`k * BLOCK_N + j < N`). On the first tile m is -inf and l is 0, and `exp2(-inf) = 0`, so the
# rescaling needs no special case.


# %% softmax_online
@tilelang.jit
def softmax_online(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        # TODO begin: running max and rescaled running sum over column tiles, then a second pass
        # Rows longer than one tile: walk each row's column tiles once while keeping a running max
        # and a running sum per row, rescaling the sum whenever the max grows; then walk the tiles a
        # second time to write the normalized values. T.reduce_max with clear=False folds a tile
        # into the running max, T.reduce_sum gives one tile's row sums, and everything is float32.
        raise NotImplementedError("softmax_online")
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
# - Pad with the neutral element of the operation that reads the padding: 0 for a sum, -inf for a max
#   (and hence for a softmax).
# - Broadcast per-row values back over the row; multiply by a reciprocal instead of dividing.
# - The online softmax: a running max, and a running sum rescaled whenever the max grows.
#
# **Next:** puzzle 07 applies the same rescaling to a whole output accumulator: flash attention.
