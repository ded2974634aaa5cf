"""Puzzle 08 · Matrix: GEMV, then a GEMM ladder from CUDA-core multiply-adds to a tuned kernel.

Matrix multiplication is the operation most of deep learning reduces to: attention scores,
linear layers, their gradients, and convolutions after im2col. This puzzle climbs from GEMV to a
GEMM near cuBLAS's speed, one change per rung.

Inputs and outputs (fp16 in, fp16 out, every sum accumulated in fp32):

``gemv``
    ``A`` is M x K, ``B`` is a vector of K. Output ``C`` of M with
    ``C[i] = sum_k A[i, k] * B[k]``: puzzle 05's row sum with a weight per column.

``matmul_cuda_cores``
    ``A`` is M x K, ``B`` is K x N. Output ``C`` of M x N with ``C = A @ B``, one tile of C per
    block, computed with fp32 multiply-adds on the CUDA cores; no ``T.gemm``.

``matmul_naive``
    The same product with ``T.gemm`` on the Tensor Cores, the A and B tiles in fragments (registers).

``matmul_shared``
    ``matmul_naive`` with the A and B tiles in shared memory (``T.alloc_shared``); the K loop
    stays serial.

``matmul_pipelined``
    ``matmul_shared`` with the K loop pipelined (``T.Pipelined``).

``matmul_tuned``
    The pipelined GEMM tuned for Hopper: wider tiles (128 x 256 x 64), 256 threads, 4 stages,
    blocks launched in panels (``T.use_swizzle``), and the result stored through a shared tile.

``matmul_streamk``
    ``matmul_tuned``'s tiles on a stream-K schedule: one persistent block per SM, the tiles of the
    last, partial wave split along K and their parts added into an fp32 workspace.

Sizes need not be multiples of the block sizes: ``T.copy`` reads zeros past the edge of a
tensor and drops writes past it. BLOCK_K must be a multiple of 16 for ``T.gemm`` on fp16 (the
Tensor Core's K step).
"""

# %% [markdown]
# ## Why this puzzle matters
#
# What makes GEMM special is **reuse**. `C = A @ B` with three n x n matrices does 2n³ flops on 3n²
# elements: every element loaded takes part in about n multiply-adds. GEMV (B a vector) does 2n²
# flops on n² elements: every element of A is used once. Set that against the machine:
#
# | H200 SXM, NVIDIA's datasheet (docs/results/datasheets.md) | peak |
# | --- | --- |
# | fp16 on the Tensor Cores, dense | ~989 TFLOP/s (the sheet lists 1,979 "with sparsity", twice the dense rate) |
# | fp32 on the CUDA cores | ~67 TFLOP/s |
# | HBM3e bandwidth | 4.8 TB/s |
#
# The balance point is 989e12 / 4.8e12 ≈ 206 flops per byte. GEMV does 1 flop per byte (2 flops per
# 2-byte element of A): memory bandwidth is its only limit. A 4096³ GEMM does 137 GFLOP on 96 MiB,
# about 1,400 flops per byte if every byte crosses HBM once: it can keep the Tensor Cores busy, but
# only if the kernel reuses what it loads. The six GEMM kernels climb toward that one change at a
# time:
#
# | rung | what changes from the rung before |
# | --- | --- |
# | `matmul_cuda_cores` | a tile of C per block, fp32 multiply-adds on the CUDA cores, A and B read from global memory |
# | `matmul_naive` | `T.gemm` on the Tensor Cores, the operand tiles copied into fragments (registers) |
# | `matmul_shared` | the operand tiles in shared memory (`T.alloc_shared`) |
# | `matmul_pipelined` | the K loop pipelined (`T.Pipelined`) |
# | `matmul_tuned` | wider tiles, more threads and stages, block rasterization, a staged store |
# | `matmul_streamk` | persistent blocks, one per SM; the last wave's tiles split along K (stream-K) |
#
# Each rung's bench case (4096³) keeps the previous rung's block parameters except what that rung
# changes; the bench cell at the end times them all on a GPU.

# %% [markdown]
# ## Accumulate in fp32
#
# fp16 keeps 11 significant bits: between 1024 and 2048 its numbers are 1 apart, so every addition
# into an fp16 sum there rounds to an integer. Over K products these roundings pile up, and once the
# running sum is large a small product is rounded away entirely. fp32 keeps 24 bits, 2¹³ times finer.
#
# So every kernel of the course multiplies fp16 inputs but sums in an fp32 fragment, and rounds to
# fp16 once, when the result is stored. The Tensor Cores are built for it: NVIDIA's Hopper
# whitepaper lists the same peak for fp16 products summed in fp32 as in fp16. The price is
# registers: an fp32 accumulator tile is twice the size.
#
# The cell below sums the same fp16 products one at a time in an fp16 and in an fp32 accumulator
# (torch, on the CPU) and measures the error against float64, relative to the typical size of the
# result: the scale of the grader's `atol`, which for fp16 outputs allows 1e-3 of it. Predict: at
# about which K does the fp16 line pass 1e-3, and how far below it does the fp32 line stay?

# %% [notebook]
# from grader.teaching.experiments import accumulation_errors
# from grader.teaching.pictures import accumulation
#
# lengths = (64, 256, 1024, 4096, 16384)
# errors = accumulation_errors(lengths)
# print("K".ljust(22), "  ".join(f"{k:>8}" for k in lengths))
# for label, values in errors.items():
#     print(label.ljust(22), "  ".join(f"{e:8.1e}" for e in values))
# accumulation(errors, lengths)

# %% [measured]
# The fp16 line reaches 1e-3 at K = 256, a few hundred terms, and keeps growing with K, to about 1e-2
# at 16384. The fp32 line stays at or below about 1e-6. "fp32, stored as fp16", about 1e-4 at every K,
# is the one rounding every fp16 output carries. (The cell computes this on the CPU: any machine
# prints the same numbers.)

# %%
from __future__ import annotations

import math

import tilelang
import tilelang.language as T

from grader.concepts import (
    adds_only_atomically,
    gemm_calls,
    gemm_operands_in_shared,
    loop_bounded_by_block,
    parallel_loop,
    pipelined,
    reduces,
    staged_store,
    sums_in_fp32,
    swizzled,
    uses_tile_op,
    without,
)
from grader.spec import ATTENTION_TOLERANCES, Case, Kernel, Puzzle, Tensor, tensor_bytes

# ---------------------------------------------------------------- references (run on float64)


def gemv_reference(A, B):
    return A @ B


def matmul_reference(A, B):
    return A @ B


def torch_matmul(A, B):
    """What --bench times against: torch at the kernel's own dtypes."""
    return A @ B


def attention_reference(Q, K, V):
    """Each head on its own: Q is H x M x D, K and V are H x N x D. One head at a time, because the
    float64 scores of all 32 heads of `heads_32x16384_d64` would take 64 GiB, twice over in softmax."""
    out = Q.new_empty(Q.shape)
    for h in range(Q.shape[0]):
        scores = (Q[h] @ K[h].T) / math.sqrt(Q.shape[-1])
        out[h] = scores.softmax(dim=-1) @ V[h]
    return out


def causal_attention_reference(Q, K, V):
    """attention_reference with a causal mask: query i sees keys 0 to i (torch's is_causal, aligned at the
    top left, so with more queries than keys the last queries see every key)."""
    out = Q.new_empty(Q.shape)
    M, N = Q.shape[1], K.shape[1]
    hidden = Q.new_ones(M, N).triu(diagonal=1).bool()  # key j > query i
    for h in range(Q.shape[0]):
        scores = ((Q[h] @ K[h].T) / math.sqrt(Q.shape[-1])).masked_fill(hidden, -math.inf)
        out[h] = scores.softmax(dim=-1) @ V[h]
    return out


def torch_causal_attention(Q, K, V):
    """What --bench times flash_attention_causal against: torch's fused attention with is_causal=True."""
    import torch.nn.functional as F

    return F.scaled_dot_product_attention(Q[None], K[None], V[None], is_causal=True)[0]


def causal_pairs(M: int, N: int) -> int:
    """How many (query, key) pairs a causal mask leaves: query i sees min(i + 1, N) keys."""
    square = min(M, N)
    return square * (square + 1) // 2 + max(M - N, 0) * N


def torch_attention(Q, K, V):
    """What --bench times flash_attention_tensor_cores against: torch's fused attention at fp16, the H
    heads as one batch (it takes batch x heads x length x D)."""
    import torch.nn.functional as F

    return F.scaled_dot_product_attention(Q[None], K[None], V[None])[0]


# -------------------------------------------------------------------------------- kernels


# %% [markdown]
# ## Kernel 1: `gemv`, a weighted row sum
#
# Puzzle 05's `row_sum_tiled` computed `C[i] = sum_k A[i, k]`. GEMV is the same sum with a weight
# on every column:
#
# $$C_i = \sum_k A_{ik}\, B_k$$
#
# A block owns BLOCK_M rows and walks K in tiles of BLOCK_K, as `row_sum_tiled` walked its columns;
# per tile it forms the products in fp32 in a `T.Parallel` loop (B indexed by the column only, the
# broadcast of puzzle 04) and folds them into BLOCK_M running sums with
# `T.reduce_sum(..., dim=1, clear=False)`. That is not `row_sum_tiled`'s shape: it reduces across
# threads on every K tile, the variant puzzle 05 calls correct but slower, where `row_sum_tiled` adds
# each tile into a per-thread fp32 fragment and reduces once after the loop. Both forms pass; which
# is faster for a kernel that waits on HBM is yours to measure.
#
# It runs on the CUDA cores, rightly: GEMV is memory-bound, so what matters is whether A streams at
# full bandwidth, not how fast it multiplies. The bench case's 128 MiB of A overflow the H200's L2, so
# HBM sets its time: the bench compares it with puzzle 01's copy bandwidth.
#
# What to watch for:
# - cast both factors to `T.float32` before multiplying;
# - `clear=False`: with the default `clear=True` each K tile overwrites the sums, and only the last
#   one counts.
#
# The cell below works a 4 x 4 GEMV by hand.

# %% [notebook]
# # GEMV by hand: y = A x in the kernel's names (x is B, y is C), a 4 x 4 A in tiles of BLOCK_M x BLOCK_K =
# # 2 x 2, played in torch on the CPU the way `gemv`'s blocks work. Each block owns BLOCK_M rows and walks
# # K one tile at a time; no row belongs to two blocks, so no block needs another's sums. It prints:
# # block 0 (rows 0-1): partial sums 3 and 11 from K tile 0, then 2 and 6 from K tile 1: C[0:2] = [5, 17];
# # block 1 (rows 2-3): partial sums 2 and 1, then -1 and -2: C[2:4] = [1, -1].
# # Change A, B or the block sizes and run it again.
# import torch
#
# A = torch.tensor([[1.0, 2, 3, 4], [5, 6, 7, 8], [2, 0, 1, 3], [0, 1, 0, 2]])
# B = torch.tensor([1.0, 1, 2, -1])
# BLOCK_M, BLOCK_K = 2, 2
# M, K = A.shape
#
#
# def show(v):
#     """A number as the printout writes it: -1 in parentheses where it follows * or +."""
#     return f"({v:g})" if v < 0 else f"{v:g}"
#
#
# C = torch.empty(M)
# for bx in range(-(-M // BLOCK_M)):  # the grid: T.ceildiv(M, BLOCK_M) blocks
#     r0, r1 = bx * BLOCK_M, min((bx + 1) * BLOCK_M, M)
#     sums = torch.zeros(r1 - r0)  # T.clear: one fp32 running sum per row
#     print(f"block {bx} owns rows {r0}-{r1 - 1}; its running sums start at 0")
#     for k in range(-(-K // BLOCK_K)):  # the T.serial loop over the K tiles
#         c0, c1 = k * BLOCK_K, min((k + 1) * BLOCK_K, K)
#         products = A[r0:r1, c0:c1] * B[c0:c1]  # the T.Parallel loop: B[c] for every row
#         partial = products.sum(dim=1)  # the tile's partial sums, one per row: T.reduce_sum along dim=1 ...
#         print(f"  K tile {k} (columns {c0}-{c1 - 1}):")
#         for i in range(r1 - r0):
#             terms = " + ".join(f"{A[r0 + i, c]:g}*{show(B[c].item())}" for c in range(c0, c1))
#             p, s = partial[i].item(), sums[i].item()
#             print(f"    row {r0 + i}: {terms} = {p:g}; running sum {s:g} + {show(p)} = {s + p:g}")
#         sums += partial  # ... with clear=False adds them to the running sums (clear=True would overwrite them)
#     C[r0:r1] = sums  # the one T.copy after the loop
#     print(f"  stores C[{r0}:{r1}] = {[round(v, 4) for v in sums.tolist()]}")
# print("C     =", [round(v, 4) for v in C.tolist()])
# print("A @ B =", [round(v, 4) for v in (A @ B).tolist()], " the same:", torch.allclose(C, A @ B))


# %% gemv
@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    # A product formed in fp16, then cast, passes too (docs/results/fp16-sums.md); the sum must be fp32.

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        # TODO begin: one block computes BLOCK_M outputs
        # One block computes BLOCK_M entries of C, the product of A and the vector B. Walk K in
        # tiles with a T.serial loop: load a tile of A and the matching piece of B into fragments
        # with T.copy, form the products in float32 in a T.Parallel loop, and fold each row of
        # products into a float32 fragment of running sums with T.reduce_sum, told not to clear it.
        # Clear the sums once before the loop and store them with one T.copy after it.
        raise NotImplementedError("gemv")
        # TODO end

    return C


# %% [markdown]
# ## Kernel 2: `matmul_cuda_cores`, a GEMM one multiply-add at a time
#
# The first GEMM uses nothing new. Each block owns one BLOCK_M x BLOCK_N tile of C (a 2-D grid as in
# puzzle 03: `bx` along N, `by` along M) and keeps an fp32 accumulator for it in a fragment. A serial
# loop walks K one column of A (and one row of B) at a time, and inside it a `T.Parallel` loop over
# the tile adds one product to every element of the accumulator:
#
# $$\text{acc}_{ij} \mathrel{+}= A_{\text{row}(i),\,k}\; B_{k,\,\text{col}(j)}$$
#
# Every product is an fp32 fused multiply-add (FMA) that one thread executes on the CUDA cores.
# Puzzle 07's score loop was already such a GEMM, on shared tiles. This rung copies no tile: it reads
# A and B by index, straight from global memory. An element of the tile whose row or column lies
# past the edge of C has nothing to compute: guard the update with an `if` on the row and column.
# TileLang also guards every load it cannot prove in bounds (puzzle 01), so the kernel passes without
# the `if` too; the `if` says what it means.
# The store stays a `T.copy`, which drops the writes past the edge.
#
# It is slow on purpose: nothing loaded is kept for the next K step except by the caches, and the
# multiply-adds run at the CUDA cores' fp32 rate, far below the Tensor Cores' fp16 rate (next
# section). Each later rung keeps this kernel's grid and fp32 accumulator; `matmul_tuned`
# changes five settings, the others one thing each.
#
# What to watch for:
# - `T.clear` the accumulator before the K loop: fragments start as garbage (NaN in the simulator).
# - Cast both factors to `T.float32` before multiplying, as in `gemv`.
#
# The grid for the `odd_127x129x131` case, 64 x 64 tiles: the last row and column of blocks are
# partly outside C.

# %% [notebook]
# from grader.teaching.pictures import tiling
#
# tiling(127, 129, 64, 64)


# %% matmul_cuda_cores
@tilelang.jit
def matmul_cuda_cores(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        # TODO begin: one block computes the tile C[by, bx] with multiply-adds on the CUDA cores
        # Accumulate this block's tile of C in a float32 fragment: a serial loop over K, and in it
        # a T.Parallel loop over the tile that adds one product per element, its factors read
        # straight from A and B in global memory. Elements outside C have nothing to compute. No
        # T.gemm yet.
        raise NotImplementedError("matmul_cuda_cores")
        # TODO end

    return C


# %% [deep-dive]
# ## The CUDA-core kernel as TileLang compiles it
#
# The inner loop of the reference `matmul_cuda_cores` as TileLang generates it for sm_90a (a 127 x 129
# x 131 case, 64 x 64 tiles; no GPU needed): one guarded FMA per element a thread owns, its factors
# loaded from `A` and `B` in global memory.
#
# In this code the 32 threads of a warp hold 32 neighbouring columns of one row of the tile, so for
# each row a warp loads one element of A that all 32 threads use and 32 neighbouring elements of B,
# for 32 FMAs. Nothing loaded is kept on the chip for the next K step except by the caches, and every
# block of a tile row reads the same A again.

# %% [notebook]
# from grader.teaching.experiments import kernel_source
# from solutions.p08_matrix import matmul_cuda_cores as reference_cuda_cores
#
# cuda = kernel_source(reference_cuda_cores, M=127, N=129, K=131, BLOCK_M=64, BLOCK_N=64)
# for line in cuda.splitlines():
#     if "acc[i_1] = " in line or "for (int k" in line:
#         print(line.strip()[:200])


# %% [markdown]
# ## Tensor Cores and CUDA cores
#
# The CUDA cores execute scalar instructions: a warp's fp32 fused multiply-add does 32 of them, one
# per thread. A Tensor Core does a small matrix multiply-accumulate, `D = A B + C` on tiles, per
# instruction, issued jointly by a warp (32 threads) or, on Hopper, by a warpgroup (4 warps, 128
# threads). On the H200: ~989 dense fp16 TFLOP/s against ~67 fp32 TFLOP/s on the CUDA cores, about 15x
# (docs/results/datasheets.md).
#
# `T.gemm(A_tile, B_tile, acc)` adds `A_tile @ B_tile` into `acc` on the Tensor Cores. TileLang picks
# the instruction from the target and from where the operands live:
#
# - **A and B in shared memory, on Hopper (sm_90a): `wgmma`**, the warpgroup MMA. It reads its
#   operands from shared memory, runs asynchronously, and accumulates in registers: Hopper's peak.
# - **A and B in fragments (registers): `mma.sync`** (m16n8k16), the warp-level instruction of the
#   Ampere generation: synchronous, and on Hopper it leaves much of the rate unused.
#
# ## Kernel 3: `matmul_naive`, the products on the Tensor Cores
#
# **The change from `matmul_cuda_cores`: `T.gemm` instead of the FMA loop.** The grid, the tile of C
# per block and the fp32 accumulator stay. The K loop now walks K in BLOCK_K steps: copy the
# BLOCK_M x BLOCK_K tile of A and the BLOCK_K x BLOCK_N tile of B into fragments and `T.gemm` them
# into the accumulator. The Tensor Cores multiply tiles held on the chip, so the copies are part of
# the change, not a second one. After the loop one `T.copy` converts the tile to fp16 and stores it.
#
# Why it is faster: the multiply-adds move to the Tensor Cores, and each thread's share of a tile is
# loaded once per K step instead of once per FMA.
#
# What to watch for:
# - `T.gemm` accumulates (`acc += A B`): clear the accumulator once, before the K loop.
# - BLOCK_K must be a multiple of 16, the K of one fp16 Tensor Core instruction. Below it TileLang
#   changes course: at BLOCK_K = 8 this kernel fails to compile for sm_90a (a layout error), and
#   `matmul_shared` gets `mma.sync` m16n8k8 instead of `wgmma`.
# - Tails need no guard any more: `T.copy` reads zeros past the edges of A and B.


# %% matmul_naive
@tilelang.jit
def matmul_naive(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        # TODO begin: one block computes the tile C[by, bx] with tiles in fragments
        # One block computes one BLOCK_M x BLOCK_N tile of C with the Tensor Cores: walk K in
        # BLOCK_K steps with a T.serial loop, copy a tile of A and a tile of B into fragments, and
        # let T.gemm add their product into a float32 accumulator fragment. Clear the accumulator
        # before the loop and store it with one T.copy after it.
        raise NotImplementedError("matmul_naive")
        # TODO end

    return C


# %% [markdown]
# ## Why the tiles go to shared memory
#
# Registers are the fastest storage on the chip, so why not keep everything there? Four reasons, all
# visible in the compiled kernels:
#
# 1. **Registers are private; shared memory is shared by the block.** In `matmul_naive` each warp
#    loads its own slice of the tiles from global memory: elements two warps need are fetched twice,
#    and B arrives two bytes at a time. A tile in shared memory is fetched once, in wide copies, and
#    read by all.
# 2. **`wgmma` reads shared memory.** B must be there (A may come from registers, as P does in this
#    puzzle's flash attention, Kernel 8). With both tiles in fragments TileLang can only use `mma.sync`.
# 3. **Copies into shared memory can be asynchronous.** The TMA unit (Hopper) and `cp.async`
#    (Ampere) fill shared memory while the threads compute: the basis of `T.Pipelined`.
# 4. **The register file is small.** An SM has 64K 32-bit registers (256 KiB) and a thread may use
#    at most 255. Past the limit the compiler *spills* to local memory, which lives in HBM behind the
#    caches. Shared memory holds up to 227 KiB per block on Hopper: room for several stages of tiles.
#
# **Experiment.** The next cell compiles the reference GEMMs for sm_90a (no GPU needed, 10 to 20
# seconds) and prints what nvcc allotted them: registers and spills per thread, shared memory and
# threads per block, and the MMA and copy instructions. `resource_usage` from
# `grader.teaching.experiments` does the same for any kernel, yours included. Predict before you run
# it: which of the five kernels spills, and which get `wgmma` rather than `mma.sync`?

# %% [notebook]
# from grader.teaching.experiments import compare_tiles, table
#
# print(table(compare_tiles()))

# %% [measured]
# What nvcc reported for sm_90a:
#
# - **naive, 64 x 64 x 32**: 96 registers, no shared memory, `mma.sync` and plain loads. It fits; at
#   this size the cost is reasons 1 to 3, not spilling.
# - **shared, 64 x 64 x 32, serial loop** (the next kernel, `matmul_shared`): the same 96 registers and
#   128 threads, 8 KiB of shared memory (one 4 KiB A tile and one 4 KiB B tile), `wgmma`, and still
#   plain loads: moving the tiles changes the instruction, not yet how they are copied.
# - **pipelined, 64 x 64 x 32**: 24 KiB of shared memory (3 stages of 8 KiB tiles), `wgmma`, and
#   `cp.async` copies issued by the same 128 threads: the copies of later steps are in flight while
#   this one multiplies. (`matmul_pipelined` turns off TileLang's warp specialization, see its
#   section; `matmul_tuned` keeps it, and then TileLang adds a *producer* warpgroup that only issues
#   TMA copies and moves registers from it to the math warps with `setmaxnreg`.)
# - **naive, 128 x 256 x 64**: 255 registers, the maximum, and about 1.5 KiB per thread spilled.
# - **pipelined, 128 x 256 x 64**: no spills, 144 KiB of shared memory, 256 threads.

# %% [deep-dive]
# ## Reason 1 in the generated code
#
# To see reason 1 in the code, print the lines of the naive kernel that load B and call the MMA:

# %% [notebook]
# from grader.teaching.experiments import kernel_source
# from solutions.p08_matrix import matmul_naive as reference_naive
#
# cuda = kernel_source(reference_naive, M=256, N=256, K=256, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
# for line in cuda.splitlines():
#     if "B_tile[i" in line or "mma_sync<" in line:
#         print(line.strip()[:160])

# %% [markdown]
# ## Kernel 4: `matmul_shared`, the tiles in shared memory
#
# **The change from `matmul_naive`: `T.alloc_shared` instead of `T.alloc_fragment` for the A and B
# tiles.** Nothing else moves: the K loop stays a plain serial loop, the accumulator stays an fp32
# fragment, the copies and `T.gemm` are the same calls. What the lowering does with it (the
# cell below shows the code):
#
# - the tiles are fetched once per block and K step, every thread copying 16 bytes at a time, and
#   all warps read them from there (reason 1);
# - on Hopper `T.gemm` becomes `wgmma`, which reads both tiles from shared memory (reason 2). It needs
#   64 rows per warpgroup of 128 threads; with fewer, TileLang falls back to `mma.sync`;
# - each K step still runs copy, wait, multiply, wait. Nothing overlaps yet; that is the next rung.
#
# What to watch for: the accumulator must stay a fragment, private to the threads that own it.

# %% [notebook]
# from grader.teaching.experiments import kernel_source
# from solutions.p08_matrix import matmul_shared as reference_shared
#
# cuda = kernel_source(reference_shared, M=256, N=256, K=256, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
# for line in cuda.splitlines():
#     if "__syncthreads" in line or "wgmma_ss<" in line or "(half_t*)A_tile) +" in line:
#         print(line.strip()[:160])


# %% matmul_shared
@tilelang.jit
def matmul_shared(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        # TODO begin: one block computes the tile C[by, bx] with its operand tiles in shared memory
        # matmul_naive with the A and B tiles allocated in shared memory (T.alloc_shared) instead
        # of fragments. Keep the K loop a plain serial loop and the accumulator a fragment.
        raise NotImplementedError("matmul_shared")
        # TODO end

    return C


# %% [deep-dive]
# ## Banks, conflicts, and the swizzle TileLang already applies
#
# Shared memory is built of 32 **banks**, each 4 bytes wide, and each bank delivers one 4-byte word
# per cycle. An access by a warp runs in one pass when the words it asks for lie in different banks
# (or are the same word); when two of them are different words of one bank, the bank serves them one
# after the other: a *bank conflict*, and an n-way conflict takes n passes.
#
# The Tensor Core paths read operand tiles in 16-byte rows. `ldmatrix` (the `mma.sync` path, every
# GPU before Hopper and small tiles on Hopper) loads an 8 x 8 fp16 matrix: eight rows of 16 bytes,
# 128 bytes, which fit the 32 banks exactly once if the eight rows fall in eight different groups of
# four banks. Store `matmul_shared`'s 64 x 32 A tile row-major and every row is 64 bytes long: row r
# starts at byte 64·r, bank 16·r mod 32, so rows 0, 2, 4 and 6 all start in bank 0 and rows 1, 3, 5
# and 7 in bank 16. The read takes 4 passes instead of 1.
#
# A **swizzle** fixes it without padding: it keeps every row where it is but permutes the 16-byte
# pieces within the row, XOR-ing the piece's index with bits of the row number, so the eight rows of
# any 8 x 8 read land in eight different bank groups. The copies that fill the tile write through
# the same permutation, and nothing else changes. The cell computes the bank groups one `ldmatrix`
# read touches from TileLang's own layout objects: the plain row-major layout, the swizzled layout
# TileLang's `T.gemm` lowering picks for this tile by itself, and `make_mma_swizzle_layout` (imported
# from `tilelang.cuda.intrinsics`), the layout a kernel asks for with
# `T.annotate_layout({A_tile: make_mma_swizzle_layout(A_tile), ...})`.

# %% [notebook]
# from grader.teaching.layouts import bank_rows, bank_table
#
# print("banks one ldmatrix read of rows 0-7 touches in the 64 x 32 fp16 A tile:")
# print(bank_table(bank_rows(64, 32)))

# %% [markdown]
# The last two rows agree: TileLang already swizzles the operand tiles of `T.gemm`, and the
# annotation only spells out the same addresses. The next cell lowers `grader.teaching.layouts`'
# `matmul_shared_layout` (this rung's kernel with an optional `T.annotate_layout` line) three ways
# for two targets and prints the lines that write and read the A tile:
#
# - **sm_80** (`mma.sync` with `ldmatrix`, what sm_75 to sm_89 use): TileLang's default writes the
#   tile through a swizzle (the `& 1` terms are XORs of single bits, written as sums); with the
#   annotation the same permutation appears as a `^`; with the row-major annotation (the same
#   function's `is_smooth=True`) the XOR is gone: thread t writes at `t * 8`, and the `ldmatrix`
#   addresses are plain multiples of the row length, the 4-way conflict above.
# - **sm_90a** (`wgmma`): the copy into the tile is swizzled by default too, and the wgmma
#   descriptors name the swizzle mode the hardware reads with (the first template argument of
#   `initialize_wgmma_descriptor`: 2, 64-byte swizzle, for A's 64-byte rows; 1, 128-byte swizzle, for
#   B's 128-byte rows). An annotation with any other layout object is refused, and the refusal is
#   TileLang's layout inference, not the instruction: the `wgmma` lowering has already chosen a layout
#   for the tile, the annotation asks for another, and TileLang stops with `Get different layout for
#   A_tile`. The instruction itself has a no-swizzle mode too (mode 0 of the descriptor).
#
# On a CUDA GPU the cell also times the three layouts on the sm_80 lowering at 4096³ (on a Hopper
# GPU nvcc builds that lowering's PTX for it); without one it says so. Expect the row-major layout to
# be the slow one; how much slower depends on how much of the kernel's time goes to reading shared
# memory, which in this unpipelined kernel competes with waiting for global memory.

# %% [notebook]
# from grader.teaching.layouts import compile_layouts, time_layouts
#
# for lowered in compile_layouts(("sm_80", "sm_90a")):
#     print(f"{lowered.arch}, {lowered.layout}:", lowered.refused or "")
#     for line in lowered.lines:
#         print("   ", line[:150])
# times = time_layouts()
# if times is None:
#     print("no CUDA GPU here: the layouts were compiled, not timed")
# else:
#     for layout, ms in times.items():
#         print(f"{layout:<12} {ms:.3f} ms at 4096^3, sm_80 lowering")

# %% [markdown]
# ## What `T.Pipelined` overlaps
#
# Without a pipeline each K step copies its tiles, waits for them, multiplies, and starts over: the
# Tensor Cores idle during the copy and the copy idles during the math.
# `T.Pipelined(n, num_stages=S)` gives every shared tile S buffers and reorders the loop so that the
# copies of the next S - 1 steps are in flight while step k multiplies. Once the pipeline is full a
# step costs max(copy, math) instead of copy + math. The picture is a model (a copy of 1 time unit,
# the math of a step 0.8), not a measurement:

# %% [notebook]
# from grader.teaching.pictures import pipeline
#
# pipeline(3, 8)

# %% [markdown]
# Each stage costs (BLOCK_M·BLOCK_K + BLOCK_K·BLOCK_N) · 2 bytes of shared memory; two to four stages
# are typical. More stages help only while the math is waiting for copies.

# %% [markdown]
# ## Kernel 5: `matmul_pipelined`
#
# **The change from `matmul_shared`: the serial K loop becomes `T.Pipelined(..., num_stages=STAGES)`.**
# The tiles, the accumulator, the copies and `T.gemm` stay as they are. The one line gives three
# buffers of each tile (24 KiB instead of 8, the experiment above) and `cp.async` copies instead of
# plain loads. The bench case keeps `matmul_shared`'s tiles and threads and adds 3 stages, so the two
# bench lines differ by the pipeline alone (experiment 1 at the end).
#
# The decorator, already in the stub, turns off TileLang's *warp specialization*: some warps only copy
# tiles while the others compute. With it on, Hopper's copies would be TMA, not `cp.async`. The deep
# dive below says why it is off.


# %% matmul_pipelined
# No warp specialization: at this rung's 64 x 64 x 32 block TileLang's producer/consumer split measured
# slower than no pipeline at all on the H200 (0.9171 ms against matmul_shared's 0.6299 ms at 4096³); with
# the same threads issuing the copies and the math, 3 stages take 0.4667 ms (docs/results/h200-bench.md).
# matmul_tuned, with 256 threads and large tiles, turns it back on.
@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
def matmul_pipelined(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        # TODO begin: tiles in shared memory, the K loop pipelined over STAGES stages
        # The same tile GEMM with its operand tiles in shared memory and the K loop written as a
        # software pipeline, so that the copies of the next tiles overlap the multiply of this one.
        # Allocate the A and B tiles with T.alloc_shared and write the loop as T.Pipelined with
        # STAGES stages; the accumulator stays a fragment.
        raise NotImplementedError("matmul_pipelined")
        # TODO end

    return C


# %% [deep-dive]
# ## Warp specialization on Hopper
#
# On Hopper TileLang builds this with warp specialization. The producer warpgroup issues TMA bulk
# copies: one thread describes a whole tile, the TMA unit moves it, and an *mbarrier* in shared
# memory flips when the bytes have landed. The consumer warpgroups wait on that barrier, run
# `wgmma`, then arrive on a second barrier that tells the producer the buffer is free again. On
# Ampere the same loop becomes `cp.async` copies issued by all threads, with commit and wait groups.
#
# With warp specialization off, `num_stages=1` is no pipeline at all; with it on (Hopper's default),
# the producer still loads the next tile as soon as the consumers release the buffer, which can be
# before their math ends (this puzzle's flash attention, Kernel 8, releases K right after `Q K^T`).
#
# `matmul_pipelined` turns it off. Left on, Hopper's lowering gives the copies to an extra producer
# warpgroup that issues TMA loads and signals the math warpgroup through barriers, and the same kernel
# took 0.9171 ms at 4096³ on the H200, slower than `matmul_shared` with no pipeline at all (0.6299 ms);
# with the same threads issuing the copies and the math, 3 stages took 0.4667 ms
# (docs/results/h200-bench.md). Why is not measured: that the handshake costs more than it hides at a
# 64 x 64 x 32 block is a hypothesis. What is measured is the kernel as shipped
# (docs/results/h200-profiles.md, `--profile` on the H200): the Tensor Core pipe busy 32 % of the time,
# the loads by `cp.async` (no TMA), the most common stall waiting for global loads (long scoreboard,
# 34 %), occupancy 42 %. `matmul_tuned` turns warp specialization back on, with 128 x 256 x 64 tiles
# and two math warpgroups.

# %% [markdown]
# ## Kernel 6: `matmul_tuned`
#
# **The change from `matmul_pipelined`: tuning.** The algorithm is unchanged; what changes is data,
# plus one line each, and the bench case differs from `matmul_pipelined`'s (64 x 64 x 32 tiles,
# 128 threads, 3 stages) in exactly these:
#
# - **Wider tiles, 128 x 256 x 64**: each element brought into shared memory feeds 85 multiply-adds,
#   against 32 at 64 x 64.
# - **256 threads instead of 128**: two math warpgroups share the accumulator (and warp
#   specialization is back on).
# - **4 stages instead of 3**: more copies in flight to cover HBM latency.
# - **`T.use_swizzle(panel_size=10)`** changes the order in which blocks are launched, not what they
#   compute (despite the name, it is not the shared-memory swizzle): blocks that run at the same time
#   share rows of A and columns of B, so a wave brings fewer unique bytes from HBM.
# - **A staged store**: `T.copy(acc, C_tile)` into a shared fp16 tile, then `T.copy(C_tile, C[...])`,
#   so the global store is wide and coalesced instead of every thread writing scattered 4-byte pieces.
#
# On the H200 `matmul_tuned` runs at 0.96x torch at 4096³ and at 0.99x to 1.01x at 8192³ in two bench
# runs (docs/results/h200-bench.md). Its partly empty last wave is the next rung's target.


# %% matmul_tuned
@tilelang.jit
def matmul_tuned(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 256, PANEL: int = 10):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)

    # T.use_swizzle(panel_size=PANEL) is one statement of the T.Kernel body, after the allocations and before
    # the K loop: it marks the launch, so that TileLang orders the blocks in panels of PANEL tile rows.
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        # TODO begin: the pipelined GEMM, plus block rasterization and a staged store
        # Start from matmul_pipelined and make two changes. Change the order in which blocks are
        # launched with T.use_swizzle, so that blocks running at the same time share rows of A and
        # columns of B and fetch fewer unique bytes from memory. And stage the result: copy the
        # accumulator into a float16 tile in shared memory and from there into C, so the global
        # store is wide and coalesced. The case data picks the tile shape, threads and stages; read
        # the notes above on why those.
        raise NotImplementedError("matmul_tuned")
        # TODO end

    return C


# %% [markdown]
# **Which change buys what?** Five changes at once (six, with warp specialization) leave each one's
# worth unknown. Predict: rank them at 4096³. The cell reverts the three that are block parameters, one
# at a time:

# %% [notebook]
# bench("matmul_tuned", BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
# bench("matmul_tuned", THREADS=128)
# bench("matmul_tuned", STAGES=3)

# %% [measured]
# The full ablation is on docs/results/p08-ablation.md: at 4096³ and 8192³, `matmul_tuned` with each
# change reverted alone (the block order and the store too, which need a line of code each), and the
# path from `matmul_pipelined` with one change added at a time, every figure repeated with its spread.
# A change can be worth more or less depending on the ones already made, so the two views need not
# agree.
#
# On the H200 at 4096³, each change reverted alone leaves this share of `matmul_tuned`'s speed: tiles
# 0.30x, threads 0.18x, warp specialization 0.78x, staged store 0.93x, panels 0.99x, stages 1.01x. The
# tile and the threads are most of it; a fourth stage buys nothing there.
#
# The `THREADS=128` line changes more than the number of math warpgroups. One warpgroup then holds the
# whole 128 x 256 fp32 accumulator: 256 values a thread, more than the 255 registers a thread may
# have. nvcc spills 2,224 bytes a thread (docs/results/p08-notes.md), so that line measures spilling
# too.


# %% [deep-dive]
# ## `matmul_tuned` in detail: tile reuse, block order, other GPUs
#
# - **Wider tiles, 128 x 256 x 64.** A step loads (BM + BN)·BK elements for BM·BN·BK multiply-adds:
#   BM·BN/(BM + BN) = 85 per element loaded, against 64 for 128 x 128 and 32 for 64 x 64. A K step of
#   64 also halves the number of steps, and with it the per-step barrier and issue overhead.
# - **256 threads instead of 128**: two math warpgroups share the 128 x 256 fp32 accumulator (128 KiB,
#   128 registers per thread), plus TileLang's producer warpgroup, back on here (no pass config): 384
#   threads in all, the producer issuing TMA copies.
# - **4 stages instead of 3**: four 48 KiB stages, 192 KiB of shared memory, more copies in flight to
#   cover HBM latency.
# - **`T.use_swizzle(panel_size=10)`** changes the order in which blocks are launched, not what they
#   compute (despite the name, it is not the shared-memory swizzle above). Row by row, the first wave
#   of 132 blocks (one per SM) covers a few rows of C and all of its columns, so it reads all of B at
#   once; in panels of 10 tile rows walked column by column, a wave covers a squarer patch. At 8192³
#   that is 10 MiB of A plus all 128 MiB of B per wave, against 20 MiB of A plus 56 MiB of B.
#   Neither fits in L2; what the panels cut is the unique bytes a wave must bring from HBM: 138 MiB
#   row by row, 76 MiB in panels.
# - **A staged store**: the accumulator goes fragment, then a shared tile, then C. The generated code
#   stores C with TMA, in four 128 x 64 boxes, instead of every thread writing scattered
#   4-byte pieces; and TileLang places that tile in the shared memory of the B stages, idle by then,
#   so it costs no extra space.

# %% [notebook]
# from grader.teaching.pictures import rasterization
#
# rasterization(8192 // 128, 8192 // 256, panel=10, wave=132)

# %% [markdown]
# **On another GPU** the same kernel is graded with tiles that fit its shared memory (the cases'
# `for_gpus`, checked by `python -m grader fit`): an A100 (163 KiB a block) keeps 128 x 256 x 64 with
# three stages (144 KiB); an RTX 30xx/40xx or L4 (99 KiB) takes 128 x 128 x 32 tiles, four stages and 128
# threads (64 KiB); a T4 (64 KiB) the same tiles with two stages. There is no `wgmma`, TMA or producer
# warpgroup before Hopper: `T.gemm` becomes warp-level `mma.sync` fed by `ldmatrix`, the stages are
# `cp.async` copies every thread issues (a T4 has no `cp.async`: its copies are plain loads and stores), and
# the staged store is an ordinary coalesced copy from shared memory. The block order is the same on every
# GPU; how much it and the staged store gain there has been measured only on the H200.


# %% [markdown]
# ## Kernel 7: `matmul_streamk`, the last wave
#
# **The change from `matmul_tuned`: the schedule.** The tiles, the pipeline and the staged store stay;
# what changes is which block computes which part of C, and when. The bench case also changes two
# block parameters: 3 stages instead of 4 (the staged store's tile is no longer free while the next
# tile loads) and panels of 8 tile rows instead of 10.
# For the schedule alone, compare `bench("matmul_tuned", STAGES=3, PANEL=8)` with
# `bench("matmul_streamk")`.
#
# At 4096³ `matmul_tuned` has 512 tiles for the H200's 132 SMs: three full waves of 132 tiles and a
# fourth of 116, while 16 SMs have nothing to do.
#
# **Stream-K** (Osama et al., 2023) spreads it evenly. Launch exactly `SMS` blocks, one per SM, and let
# each loop over its work (a *persistent* kernel). The full waves stay as they are: block `pid` computes
# the whole tiles `pid`, `pid + SMS`, ... of the first `tiles // SMS` waves. The tiles of the partial
# last wave are cut along K instead: their `rest * chunks` chunks of K steps are split into `SMS`
# equal shares, share `pid` being chunks `[pid * work // SMS, (pid + 1) * work // SMS)`. A share
# starts inside one tile and runs on into the next, so most of these tiles are summed by two or three
# blocks, each holding part of the sum in its accumulator. The parts must be added up: each block
# adds its fp32 accumulator into a workspace tile with `T.atomic_add` (an atomic add per element, so
# two blocks adding into the same tile at once lose nothing), and a last launch rounds the workspace
# tiles to fp16 into C. The picture below is the model at 4096³: every K step the same length, the
# fix-up free.

# %% [notebook]
# from grader.teaching.pictures import waves
#
# waves(tiles=(4096 // 128) * (4096 // 256), sms=132, k_steps=4096 // 64)

# %% [markdown]
# The parts of the kernel:
#
# - **`T.alloc_global`** allocates the fp32 workspace `partial`, one BLOCK_M x BLOCK_N tile per tile of
#   the last wave. TileLang allocates it from its workspace pool on every call, with whatever it held
#   before: the first launch clears it.
# - **Three `T.Kernel` launches** in one function run one after another, like three kernels on one
#   stream: clear the workspace, the GEMM, round the workspace into C. Only the middle one is yours.
# - **One loop over the block's work.** TileLang multi-buffers a shared tile once per `T.Pipelined`
#   loop that fills it, so the whole tiles and the shares go through the same pipelined loop. That
#   loop runs over CHUNK K steps (4 in the bench cases): the whole tiles are `chunks` steps of the
#   outer loop, the share is `share` more, and a step is skipped when the share is used up.
# - **Clear at the start of a piece, store at its end.** A whole tile is cleared at its first chunk
#   and stored through `C_tile` after its last. A piece of a last-wave tile is cleared at its first
#   chunk or at the start of the share, and added into `partial` after the tile's last chunk or the
#   share's.
# - **`panel_tile`** (given) maps a tile's number to its row and column, in panels of PANEL tile rows
#   as `T.use_swizzle` orders a launch grid.
#
# What to watch for:
# - every piece starts from a cleared accumulator: a share that begins inside a tile has no chunk 0;
# - a last-wave tile's piece goes through `T.atomic_add`, never `T.copy` into the workspace: the
#   other blocks' parts are added there too, in any order;
# - the result must not depend on `SMS`: the cases use 132 (the H200's SMs) and smaller counts.


# %% matmul_streamk
def panel_tile(t, tiles_m, tiles_n, PANEL: int):
    """Row and column of tile number ``t``, counted PANEL tile rows at a time and column by column
    inside such a panel; the last panel holds the rows left over. (Each branch divides by a constant:
    a divisor that depends on ``t`` trips TileLang's index simplifier.)"""
    panels = T.ceildiv(tiles_m, PANEL)
    last_rows = tiles_m - (panels - 1) * PANEL
    panel, inside = t // (PANEL * tiles_n), t % (PANEL * tiles_n)
    in_last = panel == panels - 1
    row = panel * PANEL + T.if_then_else(in_last, inside % last_rows, inside % PANEL)
    return row, T.if_then_else(in_last, inside // last_rows, inside // PANEL)


@tilelang.jit
def matmul_streamk(
    A,
    B,
    BLOCK_M: int,
    BLOCK_N: int,
    BLOCK_K: int,
    STAGES: int = 3,
    THREADS: int = 256,
    SMS: int = 132,
    PANEL: int = 8,
    CHUNK: int = 1,
):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    # (TileLang first runs the lines outside the T.Kernel bodies with M, N and K as symbols: T.max here,
    # not max. Inside a kernel body they are ints, and `if`, `and` and `or` work, as in launch 3 below.)
    tiles_m, tiles_n = T.ceildiv(M, BLOCK_M), T.ceildiv(N, BLOCK_N)
    tiles = tiles_m * tiles_n
    chunks = T.ceildiv(T.ceildiv(K, BLOCK_K), CHUNK)  # a tile's K loop, in chunks of CHUNK K steps
    waves = tiles // SMS  # full waves: every block computes this many whole tiles
    first = waves * SMS  # the first tile of the last, partial wave
    rest = tiles - first  # tiles in the last wave, fewer than SMS
    work = rest * chunks  # their chunks, shared out evenly over the SMS blocks
    share = T.ceildiv(work, SMS)  # at most `chunks`: a share touches at most two tiles
    partial = T.alloc_global((T.max(rest, 1), BLOCK_M, BLOCK_N), T.float32)

    with T.Kernel(T.max(rest, 1), threads=128) as z:  # launch 1: clear the workspace
        zeros = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(zeros)
        T.copy(zeros, partial[z, 0, 0])

    # T.atomic_add(dst, value) takes the destination first, the reverse of T.copy(src, dst). With a fragment
    # as the value, T.atomic_add(partial[t, 0, 0], acc) adds each element of acc, atomically, into the
    # BLOCK_M x BLOCK_N tile of `partial` that starts at [t, 0, 0].
    with T.Kernel(SMS, threads=THREADS) as pid:  # launch 2: one block per SM
        # TODO begin: the whole tiles of the full waves, then this block's share of the last wave's chunks
        # Keep matmul_tuned's shared tiles, pipelined K loop and staged store. Walk this block's work
        # in one T.serial loop over pieces of CHUNK K steps, each through one T.Pipelined loop: first
        # the whole tiles pid, pid + SMS, ... of the full waves, stored into C; then its equal share
        # of the last wave's chunks, each tile's part added into `partial` with T.atomic_add.
        raise NotImplementedError("matmul_streamk")
        # TODO end

    with T.Kernel(T.max(rest, 1), threads=128) as f:  # launch 3: the last wave's tiles into C
        out = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        if f < rest:
            out_row, out_col = panel_tile(first + f, tiles_m, tiles_n, PANEL)
            T.copy(partial[f, 0, 0], out)
            T.copy(out, C[out_row * BLOCK_M, out_col * BLOCK_N])

    return C


# %% [deep-dive]
# ## Stream-K's model, and what it measured
#
# Why one loop of CHUNK-step pieces: a loop whose length varies from block to block would be simpler,
# but it does not compile where there is no TMA (TileLang's cp.async pipeline needs a constant count).
#
# A launch of `matmul_tuned` at 4096³ has 32 x 16 = 512 tiles for the H200's 132 SMs, one block per SM
# at a time (192 KiB of shared memory each): three full waves of 132 tiles and a fourth of 116, while
# 16 SMs have nothing to do. Every tile takes the same 64 K steps, so the run lasts 4 x 64 = 256 K steps
# of an SM where 512 x 64 / 132 = 248.2 would do if the work were spread evenly: the SMs are busy 97 %
# of the time. At 8192³ it is 2048 tiles, 15.5 waves, the last one half full.
#
# In the model the run shrinks from 256 to 249 K steps at 4096³ (2.7 %), and from 2048 to 1986 at
# 8192³ (3.0 %); that is all a schedule can recover, and the fix-up pays for itself out of it. The
# workspace holds the last wave's 116 tiles, 128 KiB of fp32 each, 14.5 MiB at 4096³; every block's
# piece of a tile is added into it whole, and with chunks of 4 K steps the 132 shares make 236 such
# pieces (most tiles are summed by two blocks), about 29.5 MiB of atomic adds. The workspace must be
# cleared before and rounded into C after: three launches in one kernel function. A block also starts
# its next piece of work while the last one is being stored: TileLang's producer warpgroup is not held
# back at the end of a tile, so it loads the next tile's first stages while the consumers store C.
#
# **Measured, it loses** (on an H100, each row against cuBLAS timed just before it;
# docs/results/p08-notes.md): at 4096³ `matmul_tuned` runs at 0.954x cuBLAS; the same tiles as a
# persistent kernel without the split, with stream-K's 3 stages and panels of 8, at 0.937x; stream-K with
# shares in chunks of 4 K steps at 0.739x and of 1 step at 0.683x; with shares of any length (a loop whose
# count varies per block, which only compiles with TMA) at 0.772x. At 8192³: 0.977x, 0.946x, 0.849x,
# 0.768x and 0.923x. The model's 2.7 % is all there is to win, and here every cost is larger: the one pipelined
# loop checks at every K step whether the share is used up, a share starts the pipeline again in the
# middle of a tile, and the fix-up adds about 29.5 MiB of fp32 atomics and two launches. This rung
# teaches how a schedule is written (persistent blocks, shares of K, a workspace and its fix-up); on
# this GPU it does not make the GEMM faster. Try `bench("matmul_streamk", CHUNK=1)`
# and `CHUNK=8` to see the per-chunk cost move.
#
# **Where the model says it pays: a nearly empty last wave.** Both kernels have a second bench case,
# `last_wave_1792x2560x16384`: 14 x 10 = 140 tiles, one full wave and then 8 tiles, each 256 K steps
# long. `matmul_tuned` runs two rounds of 256 K steps, the second with 124 SMs idle: 512 K steps where
# 140 x 256 / 132 = 271.5 would do, the SMs busy 53 % of the time. Stream-K shares those 8 tiles' 512
# chunks of 4 K steps out among all 132 blocks, 3 or 4 chunks each, so its run is 256 + 16 = 272 K
# steps: the model gives it nearly half the run back, against the same per-chunk and fix-up costs as
# above. Predict the ratio before you run `bench("matmul_streamk", "matmul_tuned")`. The H200 measured
# 1.21x (docs/results/h200-bench-2026-12-03.md): the chunk and fix-up costs eat much of the model's 2x.


# %% [markdown]
# ## Kernel 8: `flash_attention_tensor_cores`, two GEMMs chained
#
# **The change from puzzle 07's `flash_attention`: its two products go to the Tensor Cores.** The
# algorithm is 07's, from the masking to the running max, sum and accumulator. Per key tile:
#
# $$S = Q K_{\text{tile}}^T, \qquad \text{acc} \mathrel{+}= P\, V_{\text{tile}}$$
#
# - **`transpose_B=True`.** K is stored N x D, one key per row, like Q.
#   `T.gemm(Q_tile, K_tile, S, transpose_B=True)` adds `Q_tile @ K_tile^T`, reading the K tile
#   transposed, so the tile is copied into shared memory as it lies. Clear S first: `T.gemm` accumulates.
# - **P in fp16.** The MMA needs P in V's type, fp16. So `T.copy(S, P)` rounds the fp32 exponentials
#   into an fp16 fragment, the left operand of `T.gemm(P, V_tile, acc)`; the accumulator stays fp32.
#   That rounding is why attention is graded with a looser tolerance (`ATTENTION_TOLERANCES`).
# - **P stays in a fragment.** Puzzle 07's rule still holds: no thread reads another thread's P. S
#   arrives in the MMA's accumulator layout, which is also a valid layout for its left operand. So each
#   thread already holds the P values it feeds in.
# - **`policy=T.GemmWarpPolicy.FullRow`** splits the output tile among the warps along rows only, so
#   each warp holds whole rows of S, the rows the max and the sums run along.
# - **`T.Pipelined`** over the key tiles, as in `matmul_pipelined`, with warp specialization on (the
#   default).
# - **Heads.** Q, K, V and O gain a leading head axis, the grid a second axis `head`; copies index it
#   first.


# %% flash_attention_tensor_cores
@tilelang.jit
def flash_attention_tensor_cores(Q, K, V, BLOCK_M: int, BLOCK_N: int, STAGES: int = 1, THREADS: int = 128):
    H, M, N, D = T.const("H, M, N, D")
    Q: T.Tensor((H, M, D), T.float16)
    K: T.Tensor((H, N, D), T.float16)
    V: T.Tensor((H, N, D), T.float16)
    O = T.empty((H, M, D), T.float16)  # noqa: E741 (O, the output, as in the formulas)

    with T.Kernel(T.ceildiv(M, BLOCK_M), H, threads=THREADS) as (bx, head):
        # TODO begin: puzzle 07's one-pass flash attention, its two products as T.gemm on the Tensor Cores
        # Puzzle 07's flash_attention, with the same running max, running sum, correction and mask.
        # Now Q, K and V tiles live in shared memory, S = Q K^T comes from T.gemm with transpose_B=True,
        # and P @ V from a second T.gemm whose left operand is an fp16 copy of the exponentials; both
        # calls take the FullRow warp policy, and the walk over the key tiles is a T.Pipelined loop
        # with STAGES stages. The scores, the row statistics and the accumulator stay float32.
        # This block's queries and keys are those of one head, the grid's second index.
        raise NotImplementedError("flash_attention_tensor_cores")
        # TODO end

    return O


# %% [markdown]
# ## Kernel 9: `flash_attention_causal`, no key after its query
#
# **The change: a causal mask.** In a language model query i sees keys 0 to i. A mask alone gives
# the right numbers but computes half of a square problem's tiles for nothing. Block `bx` stops its key
# loop at its last query's tile, or at N's if that comes first (`T.min`), and only the tiles the diagonal
# crosses need the mask, `key <= query`.


# %% flash_attention_causal
@tilelang.jit
def flash_attention_causal(Q, K, V, BLOCK_M: int, BLOCK_N: int, STAGES: int = 1, THREADS: int = 128):
    H, M, N, D = T.const("H, M, N, D")
    Q: T.Tensor((H, M, D), T.float16)
    K: T.Tensor((H, N, D), T.float16)
    V: T.Tensor((H, N, D), T.float16)
    O = T.empty((H, M, D), T.float16)  # noqa: E741 (O, the output, as in the formulas)

    with T.Kernel(T.ceildiv(M, BLOCK_M), H, threads=THREADS) as (bx, head):
        # TODO begin: flash_attention_tensor_cores over only the key tiles its queries may see, masked on the diagonal
        # flash_attention_tensor_cores, with two changes. The walk over the key tiles stops at the last tile
        # holding a key this block's queries may see: its last query's index plus one, or N if that is
        # smaller, rounded up to whole tiles. And the mask keeps a score only where the key's index is at
        # most the query's, as well as below N.
        raise NotImplementedError("flash_attention_causal")
        # TODO end

    return O


# %% cases
# ---------------------------------------------------------------------------------- cases

_A = Tensor("A", ("M", "K"), "float16")
_B_VEC = Tensor("B", ("K",), "float16")
_B_MAT = Tensor("B", ("K", "N"), "float16")


# A GEMM whose last wave of 128 x 256 tiles is nearly empty on 132 SMs (14 x 10 = 140 tiles), with a long K.
_LAST_WAVE = {"M": 1792, "N": 2560, "K": 16384}


def _gemm_flops(s):
    return 2.0 * s["M"] * s["N"] * s["K"]


_Q = Tensor("Q", ("H", "M", "D"), "float16")
_K = Tensor("K", ("H", "N", "D"), "float16")
_V = Tensor("V", ("H", "N", "D"), "float16")
_O = Tensor("O", ("H", "M", "D"), "float16")


def puzzle() -> Puzzle:
    gemv_blocks = {"BLOCK_M": 64, "BLOCK_K": 64}
    # The GEMM ladder's bench cases differ from rung to rung only by that rung's change: 64 x 64 tiles
    # of C and 128 threads from matmul_cuda_cores to matmul_pipelined (BLOCK_K once the tiles are
    # copied, STAGES once the loop is pipelined); matmul_tuned changes the tile, threads and stages.
    cuda_core_blocks = {"BLOCK_M": 64, "BLOCK_N": 64}
    naive_blocks = {**cuda_core_blocks, "BLOCK_K": 32}
    piped_bench = {**naive_blocks, "STAGES": 3}
    piped_blocks = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "STAGES": 3}
    # Chosen by scripts/sweep.py on the H200 (docs/results/h200-bench.md).
    tuned_blocks = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "STAGES": 4, "THREADS": 256, "PANEL": 10}
    # Smaller GPUs give a block less shared memory (grader.devices; `python -m grader fit` checks every
    # case): 163 KiB on an A100, 99 KiB on RTX 30xx/40xx and L4, 64 KiB on a T4.
    small_gemm = {"BLOCK_N": 128, "BLOCK_K": 32, "THREADS": 128}
    tuned_gpus = {
        "sm_80": {"STAGES": 3},  # 144 KiB
        "sm_86 sm_89": {**small_gemm, "STAGES": 4},  # 64 KiB
        "sm_75": {**small_gemm, "STAGES": 2},  # 32 KiB; Turing has no cp.async, so stages add nothing
    }
    fit = {"for_gpus": tuned_gpus}
    gemm_io = {"inputs": (_A, _B_MAT), "outputs": (Tensor("C", ("M", "N"), "float16"),)}
    gemm_common = dict(
        reference=matmul_reference,
        baseline=torch_matmul,
        flops=_gemm_flops,
        tiles={"C": ("BLOCK_M", "BLOCK_N")},
        **gemm_io,
    )
    gemv_out = (Tensor("C", ("M",), "float16"),)
    uses_gemm = uses_tile_op("tl.tileop.gemm", "the product of the tiles to go through T.gemm (the Tensor Cores)")
    cuda_cores = (
        without(uses_gemm, "the products as multiply-adds on the CUDA cores, without T.gemm (the next rung adds it)"),
        parallel_loop("the multiply-adds in a T.Parallel loop over the block's tile of C"),
    )
    in_shared = gemm_operands_in_shared(
        "the A and B tiles in shared memory (T.alloc_shared), the accumulator in a fragment"
    )
    is_pipelined = pipelined(2, "the K loop to be T.Pipelined(..., num_stages=2 or more), so copies overlap the math")
    shared = (
        uses_gemm,
        in_shared,
        without(pipelined(0, ""), "a plain serial K loop (T.serial): pipelining it is the next rung"),
    )
    pipeline = (uses_gemm, is_pipelined)  # the shared tiles are the previous rung's lesson
    tuned = (
        *pipeline,
        in_shared,
        swizzled("the blocks launched in panels with T.use_swizzle(panel_size=PANEL), so neighbours share L2"),
        staged_store("the accumulator stored through a shared tile: T.copy(acc, C_tile), then T.copy(C_tile, C[...])"),
    )
    # matmul_tuned's tiles with 3 stages: the staged store's 64 KiB tile is no longer free (the next
    # tile's stages are loading while it is stored), 3 x 48 + 64 = 208 KiB. SMS: one block per SM of
    # the H200 (an A100 has 108; on other GPUs the count changes the speed only, never the result).
    # 4 K steps a chunk: faster than 1 on the H200 (scripts/streamk/sweep.py: 0.79x against 0.73x cuBLAS at 4096³)
    sk_blocks = {**tuned_blocks, "STAGES": 3, "SMS": 132, "PANEL": 8, "CHUNK": 4}
    sk_small = {**naive_blocks, "STAGES": 3, "THREADS": 128, "SMS": 132, "PANEL": 2, "CHUNK": 1}
    sk_fit = {
        "for_gpus": {
            "sm_80": {"STAGES": 2, "SMS": 108},
            "sm_86 sm_89": {**small_gemm, "STAGES": 3},
            "sm_75": {**small_gemm, "BLOCK_N": 64, "STAGES": 2},
        }
    }
    streamk = (
        *pipeline,
        in_shared,
        staged_store("the whole tiles stored through a shared tile: T.copy(acc, C_tile), then T.copy(C_tile, C[...])"),
        adds_only_atomically("partial", "the parts of a last-wave tile added into `partial` with T.atomic_add only"),
    )
    # flash_attention_tensor_cores: puzzle 07's blocks and cases, with one head; the bench cases double-buffer
    # K and V
    attn_small = {"BLOCK_M": 64, "BLOCK_N": 64}
    attn_rect = {"BLOCK_M": 64, "BLOCK_N": 32}
    attn_large = {"BLOCK_M": 128, "BLOCK_N": 128, "STAGES": 2, "THREADS": 256}
    flash = (
        gemm_calls(2, "both products, Q K^T and P V, computed with T.gemm on the Tensor Cores"),
        reduces("max", "the row maxima of the scores taken with T.reduce_max"),
        sums_in_fp32(),
    )
    causal = (
        *flash,
        loop_bounded_by_block(
            "the key loop bounded by the block's last query, so that the tiles above the diagonal are skipped"
        ),
    )
    return Puzzle(
        id="08",
        title="Matrix",
        kernels=(
            Kernel(
                function="gemv",
                title="GEMV: C = A @ B for a vector B",
                inputs=(_A, _B_VEC),
                outputs=gemv_out,
                reference=gemv_reference,
                baseline=torch_matmul,
                flops=lambda s: 2.0 * s["M"] * s["K"],
                bytes_moved=lambda s: tensor_bytes((_A, _B_VEC) + gemv_out, s),
                tiles={"C": ("BLOCK_M",)},
                concepts=(uses_tile_op("tl.tileop.reduce", "each row's products summed with T.reduce_sum"),),
                cases=(
                    Case("square_256", {"M": 256, "K": 256}, gemv_blocks, seed=8101, simulate=True),
                    Case("tail_1000", {"M": 1000, "K": 1000}, gemv_blocks, seed=8102),
                    Case("odd_127x129", {"M": 127, "K": 129}, gemv_blocks, seed=8103, simulate=True),
                    Case("long_k_64x8191", {"M": 64, "K": 8191}, gemv_blocks, seed=8104, simulate=True),
                    # BLOCK_M != BLOCK_K and a tail in both: swapped tile offsets fail on the CPU too
                    Case(
                        "rect_77x150",
                        {"M": 77, "K": 150},
                        {"BLOCK_M": 32, "BLOCK_K": 64},
                        seed=8106,
                        simulate=True,
                    ),
                    # 8192 x 8192 fp16 is 128 MiB: larger than the H200's L2, so timing sees HBM. 512 columns
                    # and 256 threads a block keep more loads in flight than 256 and 128; one H200 sweep put
                    # them ahead by less than gemv's run-to-run spread (docs/results/h200-bench.md).
                    Case(
                        "large_8192",
                        {"M": 8192, "K": 8192},
                        {"BLOCK_M": 16, "BLOCK_K": 512, "THREADS": 256},
                        seed=8105,
                        bench=True,
                    ),
                ),
            ),
            Kernel(
                function="matmul_cuda_cores",
                title="GEMM with multiply-adds on the CUDA cores, A and B read from global memory",
                concepts=cuda_cores,
                cases=(
                    # Compiled only on the CPU: 16.8 M multiply-adds, each simulated twice (once contracted), took
                    # 27 s of a check there; the two simulated cases below have the same blocks, whole and partial.
                    Case("square_256", {"M": 256, "N": 256, "K": 256}, cuda_core_blocks, seed=8701),
                    Case("tail_1000", {"M": 1000, "N": 1000, "K": 1000}, cuda_core_blocks, seed=8702),
                    # a tail in M and N: the edge blocks reach past C (TileLang guards their loads, puzzle 01)
                    Case("odd_127x129x131", {"M": 127, "N": 129, "K": 131}, cuda_core_blocks, seed=8703, simulate=True),
                    Case("skinny_33x1024x200", {"M": 33, "N": 1024, "K": 200}, cuda_core_blocks, seed=8704),
                    # BLOCK_M != BLOCK_N and M != N: swapped rows and columns fail on the CPU too
                    Case(
                        "rect_77x150x91",
                        {"M": 77, "N": 150, "K": 91},
                        {"BLOCK_M": 32, "BLOCK_N": 64},
                        seed=8706,
                        simulate=True,
                    ),
                    Case("large_4096", {"M": 4096, "N": 4096, "K": 4096}, cuda_core_blocks, seed=8705, bench=True),
                ),
                **gemm_common,
            ),
            Kernel(
                function="matmul_naive",
                title="GEMM with tiles in registers and a serial K loop",
                concepts=(uses_gemm,),
                cases=(
                    Case("square_256", {"M": 256, "N": 256, "K": 256}, naive_blocks, seed=8201, simulate=True),
                    Case("tail_1000", {"M": 1000, "N": 1000, "K": 1000}, naive_blocks, seed=8202),
                    Case("odd_127x129x131", {"M": 127, "N": 129, "K": 131}, naive_blocks, seed=8203, simulate=True),
                    Case("skinny_33x1024x200", {"M": 33, "N": 1024, "K": 200}, naive_blocks, seed=8204),
                    # BLOCK_M != BLOCK_N, M != N != K, a tail in each and several tiles of each:
                    # swapped rows and columns (offsets or block sizes) fail on the CPU too
                    Case(
                        "rect_77x150x91",
                        {"M": 77, "N": 150, "K": 91},
                        {"BLOCK_M": 32, "BLOCK_N": 64, "BLOCK_K": 32},
                        seed=8206,
                        simulate=True,
                    ),
                    Case("large_4096", {"M": 4096, "N": 4096, "K": 4096}, naive_blocks, seed=8205, bench=True),
                ),
                **gemm_common,
            ),
            Kernel(
                function="matmul_shared",
                title="GEMM with tiles in shared memory and a serial K loop",
                concepts=shared,
                cases=(
                    Case("square_256", {"M": 256, "N": 256, "K": 256}, naive_blocks, seed=8801, simulate=True),
                    Case("tail_1000", {"M": 1000, "N": 1000, "K": 1000}, naive_blocks, seed=8802),
                    Case("odd_127x129x131", {"M": 127, "N": 129, "K": 131}, naive_blocks, seed=8803, simulate=True),
                    Case("skinny_33x1024x200", {"M": 33, "N": 1024, "K": 200}, naive_blocks, seed=8804),
                    Case(
                        "rect_150x300x100",
                        {"M": 150, "N": 300, "K": 100},
                        {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32},
                        seed=8806,
                        simulate=True,
                    ),
                    Case("large_4096", {"M": 4096, "N": 4096, "K": 4096}, naive_blocks, seed=8805, bench=True),
                ),
                **gemm_common,
            ),
            Kernel(
                function="matmul_pipelined",
                title="GEMM with tiles in shared memory and a pipelined K loop",
                concepts=pipeline,
                cases=(
                    Case("square_256", {"M": 256, "N": 256, "K": 256}, piped_blocks, seed=8301, simulate=True),
                    Case("tail_1000", {"M": 1000, "N": 1000, "K": 1000}, piped_blocks, seed=8302),
                    Case("odd_127x129x131", {"M": 127, "N": 129, "K": 131}, piped_blocks, seed=8303, simulate=True),
                    Case("skinny_33x1024x200", {"M": 33, "N": 1024, "K": 200}, piped_blocks, seed=8304),
                    Case(
                        "rect_150x300x100",
                        {"M": 150, "N": 300, "K": 100},
                        {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "STAGES": 3},
                        seed=8306,
                        simulate=True,
                    ),
                    # matmul_shared's bench block plus 3 stages (24 KiB: fits every profile)
                    Case("large_4096", {"M": 4096, "N": 4096, "K": 4096}, piped_bench, seed=8305, bench=True),
                ),
                **gemm_common,
            ),
            Kernel(
                function="matmul_tuned",
                title="GEMM tuned for Hopper: wide tiles, rasterized blocks, staged store",
                concepts=tuned,
                cases=(
                    Case("square_256", {"M": 256, "N": 256, "K": 256}, tuned_blocks, 8401, simulate=True, **fit),
                    Case("tail_1000", {"M": 1000, "N": 1000, "K": 1000}, tuned_blocks, 8402, **fit),
                    Case("odd_127x129x131", {"M": 127, "N": 129, "K": 131}, tuned_blocks, 8403, simulate=True, **fit),
                    Case("skinny_33x1024x200", {"M": 33, "N": 1024, "K": 200}, tuned_blocks, 8404, **fit),
                    # two tiles of 128 x 256 each way, each with a tail
                    Case("rect_200x300x100", {"M": 200, "N": 300, "K": 100}, tuned_blocks, 8407, simulate=True, **fit),
                    Case("large_4096", {"M": 4096, "N": 4096, "K": 4096}, tuned_blocks, 8405, bench=True, **fit),
                    Case("large_8192", {"M": 8192, "N": 8192, "K": 8192}, tuned_blocks, 8406, bench=True, **fit),
                    # matmul_streamk's last-wave case, for the two to be compared on it
                    Case("last_wave_1792x2560x16384", _LAST_WAVE, tuned_blocks, 8408, bench=True, **fit),
                ),
                **gemm_common,
            ),
            Kernel(
                function="matmul_streamk",
                title="Stream-K GEMM: persistent blocks, the last wave split along K",
                concepts=streamk,
                cases=(
                    # 16 tiles of 64 x 64 for 5 blocks: 3 full waves, then one tile split among all 5
                    Case("square_256", {"M": 256, "N": 256, "K": 256}, {**sk_small, "SMS": 5}, 8501, simulate=True),
                    # 16 tiles for 132 blocks: no full wave, and 128 chunks, so 4 blocks get none
                    Case("few_tiles_256", {"M": 256, "N": 256, "K": 256}, sk_small, 8502, simulate=True),
                    # 6 tiles for 4 blocks, tails in M, N and K; chunks of 2 K steps, the last one past K
                    Case(
                        "odd_127x129x131",
                        {"M": 127, "N": 129, "K": 131},
                        {**sk_small, "SMS": 4, "CHUNK": 2},
                        8503,
                        simulate=True,
                    ),
                    # 20 tiles for 7 blocks, panels of 3 tile rows (the last panel 1 row)
                    Case(
                        "rect_200x300x100",
                        {"M": 200, "N": 300, "K": 100},
                        {**sk_small, "SMS": 7, "PANEL": 3},
                        8504,
                        simulate=True,
                    ),
                    # 32 tiles of 128 x 256 for 132 blocks: every tile split
                    Case("tail_1000", {"M": 1000, "N": 1000, "K": 1000}, sk_blocks, 8505, **sk_fit),
                    # 240 tiles: one full wave, 108 tiles shared; tails in M and N
                    Case("tail_3000x2504x1000", {"M": 3000, "N": 2504, "K": 1000}, sk_blocks, 8506, **sk_fit),
                    Case("large_4096", {"M": 4096, "N": 4096, "K": 4096}, sk_blocks, 8507, bench=True, **sk_fit),
                    Case("large_8192", {"M": 8192, "N": 8192, "K": 8192}, sk_blocks, 8508, bench=True, **sk_fit),
                    # 140 tiles of 128 x 256 on 132 SMs: one full wave, then 8 tiles that would leave 124 SMs
                    # idle, with 256 K steps each for stream-K to share out: the shape the schedule is for
                    Case("last_wave_1792x2560x16384", _LAST_WAVE, sk_blocks, 8509, bench=True, **sk_fit),
                ),
                **gemm_common,
            ),
            Kernel(
                function="flash_attention_tensor_cores",
                title="Flash attention on the Tensor Cores: two chained T.gemm calls",
                inputs=(_Q, _K, _V),
                outputs=(_O,),
                reference=attention_reference,
                baseline=torch_attention,
                flops=lambda s: 4.0 * s["H"] * s["M"] * s["N"] * s["D"],
                bytes_moved=lambda s: tensor_bytes((_Q, _K, _V, _O), s),
                tiles={"O": (1, "BLOCK_M", None)},  # one block per head
                tolerances=ATTENTION_TOLERANCES,
                concepts=flash,
                cases=(
                    Case("square_256", {"H": 1, "M": 256, "N": 256, "D": 64}, attn_small, seed=8901, simulate=True),
                    Case("tail_1000", {"H": 1, "M": 1000, "N": 1000, "D": 64}, attn_small, seed=8902),
                    # fewer keys than one tile: the mask decides every row's sum
                    Case("few_keys_100x37", {"H": 1, "M": 100, "N": 37, "D": 64}, attn_small, seed=8903, simulate=True),
                    Case(
                        "long_keys_127x4099",
                        {"H": 1, "M": 127, "N": 4099, "D": 64},
                        attn_small,
                        seed=8904,
                        simulate=True,
                    ),
                    # rectangular tiles, M != N != D, a tail in M and N: a key offset stepped by
                    # BLOCK_M instead of BLOCK_N fails here on the CPU too
                    Case("rect_150x100x32", {"H": 1, "M": 150, "N": 100, "D": 32}, attn_rect, seed=8906, simulate=True),
                    # two heads, a tail in M and N: a copy that forgets the head (every block reading head 0's
                    # Q, K or V, or writing head 0's O) fails here on the CPU too
                    Case("heads_2x100x37", {"H": 2, "M": 100, "N": 37, "D": 64}, attn_small, seed=8907, simulate=True),
                    # 80 KiB: a T4 block gets 64, so half as many keys per step there (48 KiB)
                    Case(
                        "large_16384",
                        {"H": 1, "M": 16384, "N": 16384, "D": 64},
                        attn_large,
                        seed=8905,
                        bench=True,
                        for_gpus={"sm_75": {"BLOCK_N": 64}},
                    ),
                    # 32 heads: 4096 blocks where large_16384 has 128; the same block and fit
                    Case(
                        "heads_32x16384_d64",
                        {"H": 32, "M": 16384, "N": 16384, "D": 64},
                        attn_large,
                        seed=8908,
                        bench=True,
                        for_gpus={"sm_75": {"BLOCK_N": 64}},
                    ),
                ),
            ),
            Kernel(
                function="flash_attention_causal",
                title="Causal flash attention: the key tiles above the diagonal skipped, the diagonal masked",
                inputs=(_Q, _K, _V),
                outputs=(_O,),
                reference=causal_attention_reference,
                baseline=torch_causal_attention,
                flops=lambda s: 4.0 * s["H"] * causal_pairs(s["M"], s["N"]) * s["D"],
                bytes_moved=lambda s: tensor_bytes((_Q, _K, _V, _O), s),
                tiles={"O": (1, "BLOCK_M", None)},
                tolerances=ATTENTION_TOLERANCES,
                concepts=causal,
                cases=(
                    # four query blocks, each with its own number of key tiles (tall_200x70 has four on the CPU)
                    Case("square_256", {"H": 1, "M": 256, "N": 256, "D": 64}, attn_small, seed=8911),
                    # the diagonal inside a tile, a tail in M and N; BLOCK_M != BLOCK_N: a loop bound or a mask
                    # that mixes the two fails here
                    Case("tail_150", {"H": 1, "M": 150, "N": 150, "D": 32}, attn_rect, seed=8912, simulate=True),
                    # more keys than queries: the keys past the last query are never seen
                    Case("wide_70x200", {"H": 1, "M": 70, "N": 200, "D": 64}, attn_small, seed=8913, simulate=True),
                    # more queries than keys: the last queries see every key, and the loop must stop at N
                    Case("tall_200x70", {"H": 2, "M": 200, "N": 70, "D": 64}, attn_small, seed=8914, simulate=True),
                    Case("tail_1000", {"H": 1, "M": 1000, "N": 1000, "D": 64}, attn_small, seed=8915),
                    Case(
                        "heads_32x16384_d64",
                        {"H": 32, "M": 16384, "N": 16384, "D": 64},
                        attn_large,
                        seed=8916,
                        bench=True,
                        # sm_80-89: TileLang 0.1.15's cp.async pipeline fails to generate code for two stages
                        # of a loop whose count is not a constant (Hopper's warp-specialized one does not)
                        for_gpus={"sm_75": {"BLOCK_N": 64}, "sm_80 sm_86 sm_89": {"STAGES": 1}},
                    ),
                ),
            ),
        ),
    )


# %% [deep-dive]
# ## Beyond `T.gemm`: the intrinsics rung (an experiment, not graded)
#
# The GEMM ladder has one more rung below `T.gemm`: writing out what it expands into. `T.gemm` decides
# three things for you: how the block's warps split the output tile, how each warp's operands reach the
# Tensor Cores, and how the accumulator goes back out. TileLang hands each of them to you as a method of
# an *emitter*, an object built outside the kernel from the tile's shape and the warp split and called
# inside it:
#
# - `T.TensorCoreIntrinEmitter`, the warp-level `mma.sync` path. `ldmatrix_a` and `ldmatrix_b` copy the
#   warp's 16 x 16 pieces of the shared tiles into registers, one `ldmatrix.x4` (four 8 x 8 matrices)
#   per piece, with `.trans` for B because B is stored K x N. `mma_atom` issues the two m16n8k16
#   instructions that add one 16 x 16 piece of the warp's output (`mma` loops over all of them).
#   `stmatrix` writes each thread's accumulator values to their places in a tile. The accumulator is a
#   plain per-thread array (`T.alloc_local`): which element of C each register holds is fixed by the
#   instruction, and the emitter is what knows it.
# - `T.WGMMATensorCoreIntrinEmitter`, Hopper's warpgroup `wgmma`. There is no `ldmatrix`: the
#   instruction reads both operands from shared memory itself, through *descriptors* (an address that
#   also names the tile's swizzle), so the kernel annotates the tiles' layouts and gives the emitter the
#   same layouts to build the descriptors from. One `wgmma` covers 64 rows for the four warps of a
#   warpgroup and runs asynchronously: the emitter's `wgmma` method writes a fence, an arrive, the
#   instructions, a commit and a wait. The accumulator is a fragment with the emitter's layout
#   (`make_mma_store_layout`), so `T.copy` stores it.
#
# `scripts/p08/intrinsics.py`, in the course's folder, writes `matmul_tuned`'s GEMM both ways and keeps
# its block (a 128 x 256 x 64 tile, 4 stages, panels of 10, the staged store): `matmul_mma_sync` splits
# the tile over 8 warps as 2 x 4, 64 x 64 each; `matmul_wgmma` over 2 warpgroups, 128 x 128 each, the
# split `T.gemm` picks for this tile. Against `matmul_tuned` the one change is who writes the Tensor
# Core code. The grader's CPU simulator runs tile operations, not per-thread instructions, so these
# kernels can be checked on a GPU only; that is why they are an experiment and not a graded kernel.

# %% [markdown]
# The next cell compiles both kernels for Hopper (sm_90a) without a GPU (it needs nvcc) and prints the
# generated lines that do the Tensor Core work, then the PTX instructions nvcc makes of them, with how
# often each appears in the kernel's text. On a GPU it then checks both against the reference at 4096³
# and times them next to `matmul_tuned` and torch. Predict: per K step of 64, how many `mma.sync` does
# one warp of `matmul_mma_sync` issue, and how many `wgmma` does one warpgroup of `matmul_wgmma`? Which
# of the three kernels is the fastest on Hopper, and why?

# %% [notebook]
# import sys
#
# import torch
#
# from grader.discover import course_root
#
# sys.path.insert(0, str(course_root()))  # scripts/ sits beside puzzles/, outside the installed packages
# from scripts.p08 import intrinsics
#
# intrinsics.show_generated(width=110)
# if torch.cuda.is_available():
#     intrinsics.print_figures(intrinsics.measure(repeats=5))

# %% [measured]
# A warp of `matmul_mma_sync` owns 64 x 64 of C: per 16 values of K that is 4 x 8 = 32 m16n8k16
# instructions, and a K step of 64 holds four such slices, 128 in all, the count in the PTX (the loops
# are unrolled). Before them the warp issues 16 `ldmatrix.x4` for A and 16 with `.trans` for B. A
# warpgroup of `matmul_wgmma` owns 128 x 128: two m64n128k16 per 16 values of K, 8 per step, and no
# loads of its own.
#
# The H200's times at 4096³ are on docs/results/p08-intrinsics.md (2026-12-03): `matmul_wgmma` 0.2252 ms
# against `matmul_tuned`'s 0.2228, since it issues the instructions `T.gemm` issues for this tile;
# `matmul_mma_sync` 0.3214 ms, the slowest, since each warp waits for its own register loads and
# synchronous instructions, work that `wgmma` takes off the warps.

# %% [markdown]
# ## What you learned
#
# - Sum in fp32, round to fp16 once when storing.
# - GEMV is memory-bound: bandwidth is its limit, not the multiplies.
# - `T.gemm` runs on the Tensor Cores; on Hopper, shared tiles give `wgmma`, fragments `mma.sync`.
# - Operand tiles belong in shared memory, the accumulator in registers; `T.Pipelined` overlaps the
#   copies of later K steps with this one's math.
# - Tuning is mostly data. Stream-K is a schedule: persistent blocks, shares of K, an fp32 workspace.
#
# **Next:** puzzle 09 turns a convolution into this GEMM (im2col), and puzzle 10 feeds it weights
# unpacked from 4 bits on the way into shared memory.

# %% [bench]

# %% [deep-dive]
# ## Experiments to try
#
# Each cell runs as it stands; change the numbers, predict the result, then run it. `bench(kernel,
# NAME=value, ...)` times your kernel on its bench case with those block parameters in place of the
# case's (it checks the kernel on that case first; the graded cases keep theirs); without a GPU it
# prints one line. The cell that compiles needs nvcc but no GPU.
#
# **1. One change per rung.** `matmul_shared` and `matmul_pipelined` share their bench block (64 x 64 x
# 32, 128 threads); the second adds three stages and nothing else, so the two lines below measure what
# overlapping the copies with the math is worth on your GPU. Predict: faster by how much?

# %% [notebook]
# bench("matmul_shared", "matmul_pipelined")

# %% [measured]
# On the H200 at 4096³: `matmul_shared` 0.6299 ms, `matmul_pipelined` 0.4667 ms, the pipeline alone
# worth about a quarter of the time (docs/results/h200-bench.md).

# %% [markdown]
# **2. A larger tile.** Per K step a block loads (BLOCK_M + BLOCK_N) x BLOCK_K fp16 values and does
# 2 x BLOCK_M x BLOCK_N x BLOCK_K flops, so each byte it loads feeds BLOCK_M x BLOCK_N / (BLOCK_M +
# BLOCK_N) flops: 32 at 64 x 64, 43 at 64 x 128, 85 at 128 x 256 (`matmul_tuned`'s tile). More flops
# per byte means less traffic for the same product, which matters once the copies no longer hide behind
# the math. Each stage costs (BLOCK_M + BLOCK_N) x BLOCK_K x 2 bytes of shared memory: 12 KiB at 64 x
# 128 x 32, so four stages ask for 48 KiB, within every GPU's limit.

# %% [notebook]
# bench("matmul_pipelined", BLOCK_N=128, STAGES=4)

# %% [markdown]
# Predict: faster than the 64 x 64 line above? Still behind `matmul_tuned`, which also uses 256
# threads (two warpgroups, each with its own half of the tile), a 64-wide K step, block rasterization
# and a staged store? The course has not measured this setting on the H200: your run is the answer.
#
# **3. What shared memory a stage costs.** Read from the compiled kernel, without a GPU (three
# compilations, about a minute on a CPU). Predict: how much shared memory does each added stage cost
# at 64 x 128 x 32?

# %% [notebook]
# from grader.teaching.experiments import resource_usage, table
# from solutions.p08_matrix import matmul_pipelined as reference_pipelined
#
# sizes = {"M": 4096, "N": 4096, "K": 4096, "BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32}
# rows = [resource_usage(reference_pipelined, f"STAGES={s}", **sizes, STAGES=s) for s in (2, 3, 4)]
# print(table(rows))

# %% [measured]
# The shared memory column grows by one stage's A and B tiles per row, 12 KiB. A GPU runs as many
# blocks on an SM as its shared memory and registers allow, so past some depth a deeper pipeline costs
# blocks per SM instead of hiding more latency.

# %% [markdown]
# **4. GEMV's block.** The bench case uses 512 columns and 256 threads per block. A GEMV reads each
# element of A once, so all that the block shape changes is how many loads each SM keeps in flight:
# more columns per block and more threads mean more bytes requested before the first one returns.
# Predict: is 256 columns with 128 threads slower on your GPU, and by more than the noise between two
# runs?

# %% [notebook]
# bench("gemv", BLOCK_K=256, THREADS=128)

# %% [measured]
# On the H200 one sweep put the smaller block a few percent behind, less than the up to 14 % that
# gemv's own time moves between bench runs (docs/results/h200-bench.md): that sweep does not show
# either block faster. Run both several times before you believe a gap this small.

# %% [deep-dive]
# ## Flash attention on the Tensor Cores: stages, keys a step, and the softmax between the GEMMs
#
# Experiments on `flash_attention_tensor_cores`' bench cases: 16384 queries and keys, D = 64, 128 x 128
# tiles, 256 threads, 2 stages. `large_16384` is one head: 128 blocks, fewer than the H200's 132 SMs.
# `heads_32x16384_d64` is 32 heads, the shape of a model's attention layer and the kind of shape at which
# published attention kernels report their speed: 4096 blocks, about 31 for every SM. Each head has its
# own Q, K and V and no head reads another's, so each block works within one head, the grid's second
# index, and only the kernel's copies know there is more than one (`heads_2x100x37` checks on the CPU
# that heads do not mix). A batch of sequences would be one more axis of the same kind; the cases have
# one, so it is left out. The figures below are the one-head case's: `bench()` times the 32-head case
# too, but it has not been measured yet.
#
# **1. What a stage costs.** The cell compiles the reference kernel at the bench case's size and block
# with one, two and three stages, and with 64 keys a step, and reads what each block asks of an SM
# (four compilations, about a minute on a CPU). Predict: how much shared memory does each stage add, and
# how many threads does a block of 256 launch on Hopper?

# %% [notebook]
# from grader.teaching.experiments import resource_usage, table
# from solutions.p08_matrix import flash_attention_tensor_cores as reference_flash
#
# # The bench case's sizes and block; put your own kernel here once its check passes.
# sizes = {"H": 1, "M": 16384, "N": 16384, "D": 64, "BLOCK_M": 128, "THREADS": 256}
# rows = [
#     resource_usage(reference_flash, f"BLOCK_N={n}, STAGES={s}", **sizes, BLOCK_N=n, STAGES=s)
#     for n, s in ((128, 1), (128, 2), (128, 3), (64, 2))
# ]
# print(table(rows))

# %% [measured]
# Each stage adds one K tile and one V tile, BLOCK_N x D x 2 bytes each: 32 KiB at BLOCK_N = 128, the
# step between the first three rows. The Q tile and the barriers are the rest. The threads column shows
# 384, not 256: as in `matmul_tuned`, TileLang adds a producer warpgroup that only issues the TMA copies
# and moves registers from it to the warpgroups that compute (the `copy/math regs` column).

# %% [markdown]
# **2. One stage or two.** `matmul_pipelined` turned warp specialization off, and there one stage is no
# pipeline at all. Here it is on: the producer warpgroup loads a tile as soon as the consumers release
# its buffer, and they release K right after `Q K^T` and V right after `P @ V`. Predict: with one
# stage, does the kernel slow down? And what can a third stage add?

# %% [notebook]
# bench("flash_attention_tensor_cores", STAGES=1)
# bench("flash_attention_tensor_cores", STAGES=3)

# %% [measured]
# On an H100 (docs/results/p08-flash-attention.md): STAGES = 1 0.1650 ms (0.92x torch), STAGES = 2
# 0.1686 ms (0.90x torch). One stage cost nothing: with one buffer per tile, the next K tile still loads
# while the softmax runs, and the next V tile during the next `Q K^T` and softmax. A third stage lets the
# copies run two steps ahead, which helps only if one step ahead did not already hide them, and costs
# another 32 KiB per block.

# %% [markdown]
# **3. Fewer keys a step.** Halve BLOCK_N: half the shared memory per stage (the last row of the table)
# and twice as many steps over the keys. Predict: faster or slower?

# %% [notebook]
# bench("flash_attention_tensor_cores", BLOCK_N=64)

# %% [measured]
# Slower on an H100 (docs/results/p08-flash-attention.md): 64 keys a step 0.2045 ms (0.75x torch).
# Every step rescales the BLOCK_M x D accumulator and the running sums and reduces the scores across
# threads, whatever BLOCK_N is, so narrower steps spend more of the time on that bookkeeping; that this
# is where the time goes is a hypothesis, not profiled. The T4's cases use 64 keys a step because 80 KiB
# per block does not fit there.

# %% [markdown]
# **4. The softmax between the two products.** Within a step each math warpgroup runs `Q K^T` on the
# Tensor Cores, then the softmax on the CUDA cores (the row max, 64 x 128 exponentials, the row sum,
# the rescaling), then `P @ V`. The two math warpgroups share no barrier within a step. So one's
# softmax may run during the other's products, but only by chance: nothing in the kernel arranges it.
# The profile of the bench case (docs/results/h200-profiles.md, measured under the kernel's former name,
# 07 `flash_attention`) finds the Tensor Cores busy 42% of the time and the most common stall waiting
# for loads (long scoreboard 39%). Two experiments, run with scripts rather than in this notebook
# (docs/results/p08-flash-attention.md):
#
# - Writing the exponent as one fused multiply-add, `exp2(S * scale - max * scale)`, made it slower,
#   0.1735 ms (0.87x torch, where the kernel as written runs at 0.90x): the multiply is not what limits it.
# - FlashAttention-3 enforces that overlap on Hopper: barriers make two warpgroups take turns
#   (ping-pong), one's softmax running while the other's products do. `T.Pipelined(..., order=[...],
#   stage=[...])` can reorder one warpgroup's loop so that `P @ V` of one key tile is issued before the
#   softmax of the next, but a loop scheduled by hand loses the TMA copies and the producer warpgroup,
#   and it ran at 0.2143 ms, 0.71x torch.
#
# Closing the remaining gap to torch's fused attention takes that kind of scheduling, which is past
# what `T.gemm` and `T.Pipelined` express on their own.
