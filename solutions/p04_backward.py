"""Puzzle 04 · Backward op: a broadcast multiply with ReLU, forward and backward.

Training needs a backward kernel for every forward kernel. It turns the gradient of the output
into gradients of the inputs. This puzzle writes both for a small fused op: a column scale
followed by a ReLU. That is the shape of a learned per-feature gain. The puzzle also meets the
rule behind every broadcast: what the forward copied along a dimension, the backward sums along it.

Inputs and outputs (fp16 tensors, arithmetic in fp32):

``mul_relu_forward``
    ``A`` is M x N, ``B`` is a vector of N. Output ``C`` of M x N with
    ``C[i, j] = relu(A[i, j] * B[j])``. This is puzzle 02's ``mul_relu`` with B broadcast over
    the rows, as in puzzle 03's ``outer_add_fragments``. A 2-D grid of blocks computes one
    (BLOCK_M, BLOCK_N) tile of C each. The block copies its tile of A and the matching BLOCK_N
    slice of B. It computes the tile in a ``T.Parallel`` loop where ``B`` is indexed by the
    column only. (For speed: the layout of the B fragment decides how the threads split the
    tile. With BLOCK_N = 8 x THREADS each thread owns 8 adjacent columns. It moves them with
    one 16-byte load or store.)

``mul_relu_backward``
    Inputs ``A``, ``B`` and the upstream gradient ``dC`` (M x N). Outputs, in this order:
    ``dA`` (M x N, fp16) and ``dB`` (N, **fp32**), with ``mask = A[i, j] * B[j] > 0``:
    ``dA[i, j] = mask ? dC[i, j] * B[j] : 0``   (elementwise, like the forward)
    ``dB[j] = sum_i (mask ? dC[i, j] * A[i, j] : 0)``   (a sum over the broadcast dim M).
    What changed: dB needs every row of its column, so the grid now has one block per BLOCK_N
    columns. Each block walks all of M in BLOCK_M steps with a serial loop. It writes its dA
    tiles on the way. The products are added element by element into a float32
    (BLOCK_M, BLOCK_N) fragment, cleared before the loop. After the loop, one
    ``T.reduce_sum(..., dim=0)`` folds the rows into the BLOCK_N values of dB. A kernel returns
    several outputs as a tuple: ``return dA, dB``.

Why dB is float32: it sums M products, far more significant bits than fp16 holds. Also, a
parameter's gradient is normally kept in fp32 for the optimizer. The graded tolerance for
float32 output is tight. An fp16 accumulator fails it, and so do products rounded to fp16
before the sum. Cast to float32 before multiplying.

The mask is the derivative of the ReLU at ``A * B`` (taken as 0 at 0, as torch does). Compute
``A * B`` in float32. The product of two fp16 numbers is exact there. So the sign is right even
for tiny products that would round to zero in fp16.

What it teaches: broadcasting in a tile, a vector fragment indexed by one loop variable of a
2-D ``T.Parallel``. The backward of a broadcast is a reduction over the broadcast dimension.
A kernel can have two outputs. A column reduction can accumulate in registers, with one
``T.reduce_sum`` at the end rather than one per tile.

Preconditions: none on M and N. They need not be multiples of the block sizes. ``T.copy``
reads zeros past the edge, and a zero A or dC adds nothing to dB. It drops writes past the
edge. Bench cases are 8192 x 16384 fp16, 256 MiB per tensor. That is larger than the H200's
L2, so the timing measures HBM bandwidth.
"""

# %% [markdown]
# ## Why this puzzle matters
#
# Training runs every forward kernel backwards. Given the gradient of the loss with respect to the
# output, `dC`, it produces the gradients with respect to the inputs. For an element-wise op this is the
# chain rule element by element. With a broadcast there is one more rule, and it is worth learning
# once:
#
# > what the forward **copies** along a dimension, the backward **sums** along that dimension.
#
# In `C[i, j] = relu(A[i, j] * B[j])`, `B[j]` is used by every row i. So its gradient collects a
# contribution from every row:
#
# $$dB_j = \sum_i dC_{ij}\,[A_{ij} B_j > 0]\,A_{ij}, \qquad dA_{ij} = dC_{ij}\,[A_{ij} B_j > 0]\,B_j$$
#
# The gradients of every bias, of LayerNorm's gain and shift, of any per-feature scale are such
# column sums over all the tokens of a batch.

# %%
from __future__ import annotations

import tilelang
import tilelang.language as T

from grader.concepts import reduces
from grader.spec import Case, Kernel, Puzzle, Tensor, tensor_bytes

# ---------------------------------------------------------------- references (run on float64)


def mul_relu_forward_reference(A, B):
    return (A * B).clamp_min(0)


def mul_relu_backward_reference(A, B, dC):
    grad = dC * (A * B > 0)
    return grad * B, (grad * A).sum(dim=0)


def torch_mul_relu_forward(A, B):
    """What --bench times against: torch at the kernel's own dtypes."""
    return (A * B).relu()


def torch_mul_relu_backward(A, B, dC):
    """What --bench times against: the same gradients in torch (fp16, dB summed in fp32)."""
    import torch

    grad = dC * (A * B > 0)
    return grad * B, (grad * A).sum(dim=0, dtype=torch.float32)


# -------------------------------------------------------------------------------- kernels


# %% [markdown]
# ## Kernel 1: `mul_relu_forward`
#
# A 2-D grid of tiles as in puzzle 03. Each block copies its BLOCK_M x BLOCK_N tile of A and the
# BLOCK_N slice of B. It computes the output tile in a `T.Parallel` loop where B is indexed by the
# column only. That is the broadcast. Multiply in fp32 (`T.cast(x, T.float32)` converts a value to
# another type). Clamp with `T.max`, cast back with `T.cast(..., T.float16)`, and store with one
# `T.copy` out. The `odd_127x129` case, 32 x 64 tiles:

# %% [notebook]
# from grader.teaching.pictures import tiling
#
# tiling(127, 129, 32, 64)


# %% mul_relu_forward
@tilelang.jit
def mul_relu_forward(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        # TODO begin: one block computes the tile C[by, bx] = relu(A tile * B slice)
        A_tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        B_tile = T.alloc_fragment((BLOCK_N,), T.float16)
        C_tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        T.copy(A[by * BLOCK_M, bx * BLOCK_N], A_tile)
        T.copy(B[bx * BLOCK_N], B_tile)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            product = T.cast(A_tile[i, j], T.float32) * T.cast(B_tile[j], T.float32)
            C_tile[i, j] = T.cast(T.max(product, 0.0), T.float16)
        T.copy(C_tile, C[by * BLOCK_M, bx * BLOCK_N])
        # TODO end

    return C


# %% [markdown]
# ## Kernel 2: `mul_relu_backward`
#
# What changed: dB needs every row of its columns, so the grid now runs over **columns only**. Each
# block owns BLOCK_N columns and walks all of M in BLOCK_M steps with `T.serial`. On the way it writes
# its dA tiles. It adds the dB products element by element into a float32 (BLOCK_M, BLOCK_N)
# fragment. After the loop one `T.reduce_sum(..., dim=0)` folds the rows into BLOCK_N values. Threads
# add what they hold inside the loop and talk to each other once, at the end.
#
# Below, the `square_256` case with BLOCK_N = 64: four blocks, each a full-height strip of columns.
#
# What to watch for:
# - Compute the mask `A * B > 0` in fp32. The product of two fp16 numbers is exact there. So its
#   sign is right even when it would round to zero in fp16.
# - Pick the gradient with `T.if_then_else(mask, dC, 0)`.
# - Keep dB in float32 and sum it in float32, with each product cast to float32 *before*
#   multiplying. The graded tolerance for fp32 outputs catches an fp16 accumulator and products
#   rounded to fp16.
# - Clear the accumulator before the loop. `T.clear(buf)` is `T.fill(buf, 0)`, and `T.fill` sets
#   every element of a buffer to one value.
# - Return both outputs: `return dA, dB`.

# %% [notebook]
# tiling(256, 256, 256, 64)


# %% mul_relu_backward
@tilelang.jit
def mul_relu_backward(A, B, dC, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    B: T.Tensor((N,), T.float16)
    dC: T.Tensor((M, N), T.float16)
    dA = T.empty((M, N), T.float16)
    dB = T.empty((N,), T.float32)

    with T.Kernel(T.ceildiv(N, BLOCK_N), threads=THREADS) as bx:
        # TODO begin: one block owns BLOCK_N columns: dA tiles down all of M, and dB summed over M
        A_tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        dC_tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        dA_tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        B_tile = T.alloc_fragment((BLOCK_N,), T.float16)
        partial = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        dB_tile = T.alloc_fragment((BLOCK_N,), T.float32)
        T.copy(B[bx * BLOCK_N], B_tile)
        T.clear(partial)
        for k in T.serial(T.ceildiv(M, BLOCK_M)):
            T.copy(A[k * BLOCK_M, bx * BLOCK_N], A_tile)
            T.copy(dC[k * BLOCK_M, bx * BLOCK_N], dC_tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                a = T.cast(A_tile[i, j], T.float32)
                b = T.cast(B_tile[j], T.float32)
                grad = T.if_then_else(a * b > 0.0, T.cast(dC_tile[i, j], T.float32), 0.0)
                dA_tile[i, j] = T.cast(grad * b, T.float16)
                partial[i, j] += grad * a
            T.copy(dA_tile, dA[k * BLOCK_M, bx * BLOCK_N])
        T.reduce_sum(partial, dB_tile, dim=0)
        T.copy(dB_tile, dB[bx * BLOCK_N])
        # TODO end

    return dA, dB


# %% cases
# ---------------------------------------------------------------------------------- cases

_A = Tensor("A", ("M", "N"), "float16")
_B = Tensor("B", ("N",), "float16")
_C = Tensor("C", ("M", "N"), "float16")
_DC = Tensor("dC", ("M", "N"), "float16")
_DA = Tensor("dA", ("M", "N"), "float16")
_DB = Tensor("dB", ("N",), "float32")


def puzzle() -> Puzzle:
    forward_blocks = {"BLOCK_M": 32, "BLOCK_N": 64}
    backward_blocks = {"BLOCK_M": 32, "BLOCK_N": 64}
    return Puzzle(
        id="04",
        title="Backward op",
        kernels=(
            Kernel(
                function="mul_relu_forward",
                title="Forward: C = relu(A * B) with B broadcast over the rows",
                inputs=(_A, _B),
                outputs=(_C,),
                reference=mul_relu_forward_reference,
                baseline=torch_mul_relu_forward,
                flops=lambda s: 2.0 * s["M"] * s["N"],
                bytes_moved=lambda s: tensor_bytes((_A, _B, _C), s),
                tiles={"C": ("BLOCK_M", "BLOCK_N")},
                cases=(
                    Case("square_256", {"M": 256, "N": 256}, forward_blocks, seed=4101, simulate=True),
                    Case("tail_1000", {"M": 1000, "N": 1000}, forward_blocks, seed=4102),
                    Case("odd_127x129", {"M": 127, "N": 129}, forward_blocks, seed=4103, simulate=True),
                    Case("tall_4097x96", {"M": 4097, "N": 96}, forward_blocks, seed=4104),
                    # 8192 x 16384 fp16 is 256 MiB: larger than the H200's L2, so timing sees HBM.
                    Case(
                        "large_8192x16384",
                        {"M": 8192, "N": 16384},
                        {"BLOCK_M": 8, "BLOCK_N": 1024, "THREADS": 128},
                        seed=4105,
                        bench=True,
                    ),
                ),
            ),
            Kernel(
                function="mul_relu_backward",
                concepts=(reduces("sum", "the rows folded into dB with one T.reduce_sum(..., dim=0) after the loop"),),
                title="Backward: dA elementwise, dB summed over the broadcast dim",
                inputs=(_A, _B, _DC),
                outputs=(_DA, _DB),
                reference=mul_relu_backward_reference,
                baseline=torch_mul_relu_backward,
                # dA: multiply and select; dB: multiply and add
                flops=lambda s: 4.0 * s["M"] * s["N"],
                bytes_moved=lambda s: tensor_bytes((_A, _B, _DC, _DA, _DB), s),
                tiles={"dA": ("BLOCK_M", "BLOCK_N"), "dB": ("BLOCK_N",)},
                cases=(
                    Case("square_256", {"M": 256, "N": 256}, backward_blocks, seed=4201, simulate=True),
                    Case("tail_1000", {"M": 1000, "N": 1000}, {"BLOCK_M": 128, "BLOCK_N": 64}, seed=4202),
                    Case("odd_127x129", {"M": 127, "N": 129}, backward_blocks, seed=4203, simulate=True),
                    # few columns, a long sum: one partial block of columns walks 5000 rows
                    Case("tall_5000x40", {"M": 5000, "N": 40}, {"BLOCK_M": 128, "BLOCK_N": 64}, seed=4204),
                    Case(
                        "large_8192x16384",
                        {"M": 8192, "N": 16384},
                        {"BLOCK_M": 128, "BLOCK_N": 64, "THREADS": 256},
                        seed=4205,
                        bench=True,
                    ),
                ),
            ),
        ),
    )


# %% [markdown]
# ## What you learned
#
# - Broadcasting in a tile: a vector fragment indexed by one variable of a 2-D `T.Parallel`.
# - The backward of a broadcast is a reduction over the broadcast dimension, accumulated in fp32.
# - A kernel can return several outputs, and a block can walk a whole dimension with `T.serial`.
#
# **Next:** puzzle 05 makes reductions the topic: row sums, in one tile and tile by tile.

# %% [bench]

# %% [markdown]
# ## Experiments to try
#
# Each cell runs as it stands; change the numbers and run it again, and predict the result first.
# `bench(kernel, NAME=value, ...)` times your kernel on its bench case, with those block parameters in
# place of the case's. It checks the kernel on that case first; the graded cases keep theirs. Without
# a GPU it prints one line. The cells that compile need nvcc but no GPU.
#
# **1. Why BLOCK_N = 8 x THREADS.** The spec says the layout of the B fragment decides how the threads
# split the tile. The cell compiles the reference `mul_relu_forward` at the bench case's size, with 1024
# and with 512 columns per block. It uses 128 threads both times. It prints the kernel's loads of A and
# B and its store of C. Predict: how many columns does each thread own, and how wide is each access, in the two?

# %% [notebook]
# from grader.teaching.experiments import kernel_source
# from solutions.p04_backward import mul_relu_forward as reference_forward
#
# # Put your own mul_relu_forward in place of reference_forward once its check passes.
# for block_n in (1024, 512):
#     blocks = {"BLOCK_M": 8, "BLOCK_N": block_n, "THREADS": 128}
#     cuda = kernel_source(reference_forward, M=8192, N=16384, **blocks)
#     print(blocks)
#     for line in cuda.splitlines():
#         if "= *(" in line and ("A + " in line or "B + " in line) or "C + " in line:
#             print("   ", line.strip())

# %% [measured]
# Each thread owns BLOCK_N / THREADS adjacent columns of every row of the tile. At 1024 / 128 that is
# 8 columns and every access is 16 bytes (`uint4`); at 512 / 128 it is 4 columns, and every load and
# store of A, B and C is 8 bytes (`uint2`), although each thread still handles 32 elements.

# %% [markdown]
# **2. The forward on the GPU.** The bench case takes 0.1307 ms, 4107 GB/s on the H200
# (docs/results/h200-bench.md). Predict: at BLOCK_N = 512, and at BLOCK_M = 4 with BLOCK_N = 2048?

# %% [notebook]
# bench("mul_relu_forward", BLOCK_N=512)
# bench("mul_relu_forward", BLOCK_M=4, BLOCK_N=2048)

# %% [measured]
# On the H200 (docs/results/h200-experiments.md), the bench case took 0.1304 ms, 4116 GB/s.
# BLOCK_N = 512 took 0.1315 ms, 4084 GB/s. BLOCK_M = 4 with BLOCK_N = 2048 took 0.1307 ms, 4107 GB/s.
# The three tie, within 1 %. The bytes are the same, and even the 8-byte accesses keep enough bytes in
# flight. Twice the memory instructions cost nothing measurable here.

# %% [markdown]
# **3. The backward's grid.** Its grid has only N / BLOCK_N blocks, each walking all 8192 rows. That
# is 256 blocks at the bench case's BLOCK_N = 64: 0.2142 ms, 3759 GB/s on the H200
# (docs/results/h200-bench.md). Predict: 128 columns per block, then 32?

# %% [notebook]
# bench("mul_relu_backward", BLOCK_N=128)
# bench("mul_relu_backward", BLOCK_N=32)

# %% [measured]
# On the H200 (docs/results/h200-experiments.md), the bench case's BLOCK_N = 64 took 0.2138 ms,
# 3768 GB/s. BLOCK_N = 128 won: 0.2008 ms, 4010 GB/s, 6 % faster despite four idle SMs. BLOCK_N = 32
# took 0.2604 ms, 3092 GB/s, 22 % slower. The balance is the same in all three: the busiest SM gets 128
# columns, as one, two or four blocks. What differs is the piece of each row a block reads: 256, 128 or
# 64 bytes. The widest won here; the run does not show why.
