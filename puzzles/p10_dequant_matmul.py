"""Puzzle 10 · Dequantized matmul: fp16 activations times 4-bit weights, unpacked on the fly.

Large language models are often served with their weights stored in 4 bits: a quarter of the
memory of fp16. When a few tokens are decoded at a time, such a matrix product is limited by
reading the weights, not by the arithmetic. So its floor is a quarter of fp16's too. How close a
kernel gets to that floor is another matter (the notebook's experiments measure it). The GPU still
multiplies in fp16. So a kernel loads the packed weights, unpacks them in shared memory, and
feeds them to the Tensor Cores. This puzzle writes the unpacking alone, then fused into a GEMM.

The format, for a weight matrix W of N x K, is group-wise and symmetric around a zero point of 8.

``B`` (uint8, N x K/2) packs two 4-bit values per byte. ``B[n, j]`` holds column ``2j`` of row
n in its low nibble (bits 0-3). Column ``2j + 1`` is in its high nibble (bits 4-7). A nibble q
is unsigned, 0..15, and stands for ``q - 8``, so -8..7. ``S`` (fp16, N x K/G) holds one scale
per row and group of G consecutive columns. Then

    W[n, k] = (nibble(n, k) - 8) * S[n, k // G]

W is an fp16 matrix. Each weight is rounded to fp16 once, as the Tensor Cores take it. The
reference for ``C`` below multiplies that rounded W. Against the unrounded W, every weight would be
off by up to 2^-11. That rounding alone would use up most of the fp16 tolerance.

The sizes are named M, N, K. ``KH = K / 2`` is the bytes per row of B, and ``NG = K / G`` the
groups per row. The group size is ``G = K // NG``.

``dequantize_int4``
    Inputs ``B``, ``S``; output ``W`` (fp16, N x K) as defined above. One block owns a
    BLOCK_N x BLOCK_K tile of W. It copies the BLOCK_N x BLOCK_K/2 bytes and the BLOCK_N
    scales of the tile's group into shared memory. Then each element picks its byte
    (``k // 2``) and shifts it right by 0 or 4 (``k % 2``). It masks with 15, subtracts 8,
    converts to fp16 and multiplies by its row's scale.

``dequant_matmul``
    Inputs ``A`` (fp16, M x K), ``B``, ``S``; output ``C`` (fp16, M x N) with ``C = A @ W^T``.
    The pipelined GEMM of puzzle 08 with B's tile replaced. The scales of the block's BLOCK_N
    rows (BLOCK_N x NG, a few KiB) do not depend on the K step. So they are copied into shared
    memory once, before the loop. Each K step copies the A tile and the packed bytes. It unpacks
    the bytes as ``dequantize_int4`` does into a BLOCK_N x BLOCK_K fp16 fragment (registers).
    It stores the fragment to a shared tile with one ``T.copy``. That is one barrier for the whole
    tile, rather than shared-memory stores interleaved with the arithmetic. Then it multiplies with
    ``T.gemm(A_tile, W_tile, acc, transpose_B=True)`` into an fp32 accumulator. W is never
    written to global memory: 0.5 bytes per weight are read instead of 2.

``dequant_matmul_decode``
    The same inputs, output and preconditions as ``dequant_matmul``, with less work per weight.
    Each weight's fp16 value is built from its bits. ``0x6400 | q`` read as fp16 is 1024 + q, so
    subtracting 1032 gives q - 8 with no integer-to-float conversion. And the roles are swapped.
    The block computes C^T = W A^T with ``T.gemm(W_local, A_tile, acc, transpose_B=True)``. The
    unpacked W fragment is the MMA's register operand, so there is no shared W tile. The
    BLOCK_N x BLOCK_M accumulator is stored into C transposed, element by element, with guards.

``dequant_gemv``
    The same inputs and output, for a few tokens (its bench case has one): a GEMV on the CUDA
    cores. The grid is ``ceildiv(N, BLOCK_N) x M``; a block owns BLOCK_N rows of W and one token.
    Each K step copies the packed bytes and the token's activations straight into fragments. A
    weight's fp32 value is built from its bits: ``0x4B000000 | q`` read as fp32 is 2^23 + q. The 8
    weights of a run (columns 8r to 8r + 7) share a scale, so their products are summed first and
    the sum is scaled once. Each lane keeps its running sums across the K loop, and one
    ``T.reduce_sum`` after it gives the block's rows, stored with a guard at the tail of N.

What it teaches: bit manipulation on tiles (shifts, masks, integer to float) and group-wise
scales. It also fuses a producer (the unpacking) into a consumer (the GEMM) through shared memory.

Preconditions: G is a multiple of BLOCK_K, so a K tile lies inside one group and needs one
scale per row. Hence K is a multiple of BLOCK_K. BLOCK_K is a multiple of 16. M and N are
anything. ``dequant_gemv`` asks less of G: a multiple of 8, so a run of 8 lies inside one group;
K is a multiple of its BLOCK_K, and BLOCK_K of 8. The scales are drawn from [0.5, 1.5), so W is
-12..10.5 and no product overflows.

The bench case is decode-shaped: M = 16 tokens against an 8192 x 8192 weight. That is where
4-bit weights pay off: the product reads 32 MiB of packed weights instead of 128 MiB of fp16.
It is also where the plain torch route pays for the full-size W several times over in memory
traffic. That route unpacks W with tensor ops and calls a fp16 matmul. The fair comparison is
torch's fp16 matmul on unquantized weights, which the bench also times.
"""

# %% [markdown]
# ## Why this puzzle matters
#
# When a language model generates text it processes a few tokens at a time. Each step multiplies
# those few activations by every weight matrix of the model. With M = 16 tokens against an
# 8192 x 8192 weight, the product does 2·16 flops per weight read. That is 16 flops per byte of fp16
# weights (64 per byte at 4 bits), far below the H200's ~206 flops per byte (puzzle 08). So the time
# is the time to read the weights. Store them in 4 bits instead of
# 16 and there are 4x fewer bytes to read: 32 MiB instead of 128 MiB for that matrix. At the copy
# bandwidth puzzle 01 measures on the course's H200, 4,158 GB/s (docs/results/h200-bench.md), that is
# a floor of about 8 µs instead of 32 µs (docs/results/p09-p10-notes.md).
#
# The bench times two torch baselines. The plain torch route unpacks the weights into a new fp16
# tensor and calls a fp16 matmul: a simple reference to check against, not what an inference server
# does. The comparison that counts is torch's fp16 matmul on unquantized weights, the thing 4-bit
# weights must beat. How close this puzzle's kernels come to it, and why, is experiment 5 below.
#
# The Tensor Cores still multiply fp16, so the kernel reads packed bytes, unpacks them into fp16 on
# the chip, and feeds the result to `T.gemm`. Group-wise 4-bit formats of this kind (one scale per
# row and group of G columns) are what weight-only quantization schemes for LLM serving store.
#
# The packing: byte `B[n, j]` holds column 2j in its low four bits and column 2j + 1 in its high four
# bits. A nibble q in 0..15 stands for q - 8, and `W[n, k] = (q - 8) * S[n, k // G]`:

# %% [notebook]
# from grader.teaching.pictures import nibbles
#
# nibbles([0x3A, 0xF0, 0x81], scale=0.5)

# %%
from __future__ import annotations

import tilelang
import tilelang.language as T

from grader.concepts import gemm_left_operand_in_fragment, uses_tile_op
from grader.spec import Baseline, Case, Kernel, Puzzle, Tensor, tensor_bytes

# ---------------------------------------------------------------- references (run on float64)


def unpack_reference(B, S):
    """W from the packed nibbles and the group scales, written with integer ops."""
    import torch

    B = B.to(torch.int64)
    low, high = B & 15, (B >> 4) & 15
    nibbles = torch.stack((low, high), dim=-1).reshape(B.shape[0], 2 * B.shape[1])  # column 2j, then 2j + 1
    group = nibbles.shape[1] // S.shape[1]
    return (nibbles - 8).to(S.dtype) * S.repeat_interleave(group, dim=1)


def dequant_matmul_reference(A, B, S):
    import torch

    W = unpack_reference(B, S).to(torch.float16).to(A.dtype)  # the fp16 W the Tensor Cores multiply
    return A @ W.T


def torch_dequantize(B, S):
    """What --bench times against: the unpacking as torch tensor ops, at fp16."""
    import torch

    n, groups = S.shape
    nibbles = torch.stack((B & 15, B >> 4), dim=-1).reshape(n, groups, -1)
    return ((nibbles.to(torch.float16) - 8) * S[:, :, None]).reshape(n, -1)


def torch_dequant_matmul(A, B, S):
    """What --bench times against: unpack W with torch, then a fp16 matmul (cuBLAS)."""
    return A @ torch_dequantize(B, S).T


def unquantized_weights(A, B, S):
    """The fp16 W a model would hold without quantization, made outside the timing."""
    return A, torch_dequantize(B, S)


def fp16_matmul(A, W):
    """What 4-bit weights must beat: the same product with fp16 weights (cuBLAS), 4x the bytes."""
    return A @ W.T


# -------------------------------------------------------------------------------- kernels


# %% [markdown]
# ## Kernel 1: `dequantize_int4`
#
# One block owns a BLOCK_N x BLOCK_K tile of W. It copies the BLOCK_N x BLOCK_K/2 bytes and the
# BLOCK_N scales of the tile's group into shared memory. Then each element in a `T.Parallel` loop
# picks its byte (`k // 2`) and shifts it right by 0 or 4 (`4 * (k % 2)`). It masks with 15, subtracts
# 8, converts to fp16 and multiplies by its row's scale.
#
# What to watch for:
# - Cast the byte to `T.int32` and keep q in int32. `q - 8` is negative for q < 8, so a uint8 variable
#   or fragment that holds it wraps around to 248..255.
# - One scale per row for the whole tile: G is a multiple of BLOCK_K, so a tile never straddles two
#   groups. Its group is `bx * BLOCK_K // G`.
# - The byte index is `k // 2` inside the tile. The packed copy starts at column `bx * BLOCK_K // 2`.
#
# On its own this kernel writes the fp16 W out to memory: 2 bytes per weight where the packed input
# had 0.5. It exists to check the unpacking; the next kernel never writes W.


# %% dequantize_int4
@tilelang.jit
def dequantize_int4(B, S, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    N, K, NG = T.const("N, K, NG")
    B: T.Tensor((N, K // 2), T.uint8)
    S: T.Tensor((N, NG), T.float16)
    W = T.empty((N, K), T.float16)

    with T.Kernel(T.ceildiv(K, BLOCK_K), T.ceildiv(N, BLOCK_N), threads=THREADS) as (bx, by):
        # TODO begin: unpack one BLOCK_N x BLOCK_K tile of W from its bytes and its group's scales
        # One block unpacks one BLOCK_N x BLOCK_K tile of W: copy the bytes that hold the tile (two
        # 4-bit weights per byte) and the scales of the tile's group into shared memory with T.copy,
        # then in a T.Parallel loop over the tile pick each element's byte, extract its nibble with
        # a shift and a mask, remove the offset of 8, and scale it, into a float16 fragment that one
        # T.copy stores into W.
        raise NotImplementedError("dequantize_int4")
        # TODO end

    return W


# %% [markdown]
# ## Kernel 2: `dequant_matmul`: unpacking fused into the GEMM
#
# `C = A @ W^T`: the pipelined GEMM of puzzle 08 with its B tile replaced. The scales of the block's
# BLOCK_N rows, a few KiB, do not depend on the K step. So they are copied into shared memory once,
# before the loop. Each K step copies the A tile and the packed bytes. It unpacks them as
# `dequantize_int4` does into a BLOCK_N x BLOCK_K fp16 fragment. It stores that to a shared tile with
# one `T.copy`: one barrier for the whole tile, instead of shared-memory stores mixed into the
# arithmetic. Then it calls `T.gemm(A_tile, W_tile, acc, transpose_B=True)`, since W is N x K.
#
# W never exists in global memory: 0.5 bytes per weight cross HBM instead of 2. This is the general
# pattern of fusing a producer (the unpacking) into a consumer (the GEMM) through shared memory. The
# torch baseline unpacks W with tensor ops and then calls cuBLAS, paying for the full-size W in
# memory several times over.
#
# What to watch for: the scale index for a K step is `k * BLOCK_K // G` (global column over G), not
# the tile-local one. And the accumulator is fp32 as always.


# %% dequant_matmul
@tilelang.jit
def dequant_matmul(A, B, S, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 128):
    M, N, K, NG = T.const("M, N, K, NG")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K // 2), T.uint8)
    S: T.Tensor((N, NG), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        # TODO begin: pipelined GEMM whose B tile is unpacked from 4 bits in shared memory
        # The pipelined GEMM of puzzle 08 with a twist: B arrives as packed 4-bit weights with
        # per-group scales, and each K step unpacks its weight tile, as dequantize_int4 does, into
        # shared memory before T.gemm uses it. The weight tile holds rows of W, so T.gemm needs
        # transpose_B. The scales of this block's rows do not change along K: load them once, before
        # the loop.
        raise NotImplementedError("dequant_matmul")
        # TODO end

    return C


# %% [markdown]
# ## Kernel 3: `dequant_matmul_decode`: fewer instructions per weight
#
# The same product as `dequant_matmul`, with the same inputs, output and preconditions, graded on the
# same decode case with the same block (16 x 64 x 128, four stages). Two things change, both in the
# work done per weight; the loads stay as they are.
#
# **1. The fp16 value from its bits.** The 16 bits `0x6400` are the fp16 number 1024 (exponent 10,
# mantissa 0). Between 1024 and 2048 consecutive fp16 numbers are 1 apart, so the ten mantissa bits
# count units. `0x6400 | q` for a nibble q in 0..15 is the fp16 number 1024 + q, and subtracting 1032
# leaves q - 8, exactly. In the kernel that is a mask and an OR into a 16-bit integer
# (`T.Cast("uint16", x)` is `T.cast` in TVM's spelling, the type first). Then
# `T.reinterpret(..., T.float16)` reads the same bits as fp16, with no instruction at all. Last comes
# one fp16 subtraction. These replace an integer subtraction and an integer-to-fp16 conversion, which
# runs at a fraction of the rate of plain arithmetic. The weights are the same fp16 numbers as before, bit for
# bit: q - 8 is exact either way, and the product with the scale rounds once, as before.
#
# **2. W as the register operand.** `dequant_matmul` stores its unpacked fragment to a shared tile (a
# `T.copy` and a barrier every K step). Its `T.gemm(A_tile, W_tile, ...)` reads both operands from
# shared memory. Swap the roles and compute the transpose, C^T = W A^T, with the fragment itself as
# the first operand. That is `T.gemm(W_local, A_tile, acc, transpose_B=True)` into a BLOCK_N x BLOCK_M
# accumulator. TileLang gives `W_local` the layout of the MMA's first operand. So the `T.Parallel`
# loop unpacks each weight into the thread and register that multiply it: no shared W tile, no extra
# barrier. It also makes the 64 rows of W the MMA's M, and the 16 tokens its N. Hopper's `wgmma` fixes
# that dimension M at 64 rows per warpgroup (four warps). Compiled for sm_90a at the decode case, this
# kernel's `T.gemm` becomes `wgmma`. Its first operand is in registers, and the A tile is read from
# shared memory. `dequant_matmul`'s `T.gemm`, with the 16 tokens as M, becomes `mma.sync` (m16n8k16).
# Its fragments are loaded from the two shared tiles with `ldmatrix`.
#
# The price is the store: `acc[n, m]` is `C[m, n]`. And `T.copy` does not transpose, so C is written
# by a `T.Parallel` loop. The loop runs over the accumulator, with a guard on each edge (M and N both
# have tails).
#
# What the two changes buy on the GPU is experiment 5 below.
#
# The bit trick, checked on the CPU for all 16 nibbles. Predict: is `(0x6400 | q)` read as fp16,
# minus 1032, exactly q - 8 for every nibble, or does some q round?

# %% [notebook]
# import torch
#
# q = torch.arange(16, dtype=torch.int16)  # every nibble
# value = (0x6400 | q).view(torch.float16)  # the same 16 bits, read as fp16
# print(value)  # 1024 + q
# print(torch.equal(value - 1032, (q - 8).to(torch.float16)))  # q - 8, exactly

# %% [measured]
# Exact for all 16: the values print as 1024 to 1039 and the comparison prints `True`. Between 1024
# and 2048 fp16 numbers are 1 apart, so neither the OR nor the subtraction rounds.


# %% dequant_matmul_decode
@tilelang.jit
def dequant_matmul_decode(A, B, S, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 128):
    M, N, K, NG = T.const("M, N, K, NG")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K // 2), T.uint8)
    S: T.Tensor((N, NG), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        # TODO begin: C^T = W A^T, with W unpacked from its bits straight into the MMA's registers
        # dequant_matmul with two changes. Build each weight's float16 from its bits rather than by
        # converting an integer: put the nibble under the bits of the float16 number 1024, reinterpret
        # the 16 bits as a float16 (1024 plus the nibble), and subtract the constant that leaves the
        # nibble minus 8. And swap the operands: the unpacked W fragment is T.gemm's first operand, the
        # A tile its second (transposed), so W needs no shared tile and the accumulator holds C^T,
        # BLOCK_N x BLOCK_M. Store it element by element into C, transposed, guarding both edges.
        raise NotImplementedError("dequant_matmul_decode")
        # TODO end

    return C


# %% [markdown]
# ## Kernel 4: `dequant_gemv`: one token on the CUDA cores
#
# At one token (M = 1) the product is puzzle 08's `gemv` with W in 4 bits: each weight is read once and
# used in one multiply-add. `dequant_matmul_decode` takes as long at one token as at 16: 0.0416 and
# 0.0418 ms on the H200 (docs/results/h200-bench-2026-12-03.md). Its MMA pads the one token to a full
# tile, and its time goes elsewhere than the arithmetic. Two flops per half byte of weight is 4 flops
# per byte, below even the CUDA cores' balance point (the H200's 67 TFLOP/s of fp32 FMA over the
# 4,158 GB/s puzzle 01 measures, docs/results/h200-bench.md, is about 16 flops per byte). So the CUDA
# cores can keep up with the loads, and the Tensor Cores, the shared W tile and the pipeline all go.
#
# The grid is `(ceildiv(N, BLOCK_N), M)`: a block owns BLOCK_N rows of W and one token. Each K step
# copies the step's packed bytes (BLOCK_N x BLOCK_K/2) and the token's BLOCK_K activations with
# `T.copy` straight into fragments, registers, as `gemv` did: no shared memory, no `T.Pipelined`. The
# other blocks on the SM keep their loads in flight while one block computes.
#
# Three things keep the instructions per weight down:
#
# **1. The fp32 value from its bits.** Kernel 3's trick, in fp32, since the products and sums here are
# fp32. The 32 bits `0x4B000000` are the fp32 number 2^23; between 2^23 and 2^24 consecutive fp32
# numbers are 1 apart. So `0x4B000000 | q` is 2^23 + q, and subtracting 2^23 + 8 = 8388616 leaves
# q - 8, exactly: an OR and a subtraction, no conversion.
#
# **2. One multiplication by the scale per run of 8 weights.** G is a multiple of 8 (see the
# preconditions), so the 8 weights in columns 8r to 8r + 7 of a row lie in one group and share one scale. Write
# the step's products as a BLOCK_N x BLOCK_K/8 x 8 fragment, sum each run of 8 with
# `T.reduce_sum(..., dim=2)`, and multiply the run's sum by its scale once, instead of each weight.
#
# **3. Each lane's own sums, one reduction at the end.** `gemv` reduced across the block at every K
# step. Here each run's scaled sum is added into a BLOCK_N x BLOCK_K/8 fragment of running sums that no
# other thread reads, and a single `T.reduce_sum(..., dim=1)` after the K loop gives the BLOCK_N rows.
#
# Compiled for sm_90a at the bench block (8 rows, 1024 columns, 128 threads), each thread holds whole
# runs: the first `T.reduce_sum` is a loop inside each thread, and only the last one crosses threads.
# Then `C[m, n]` takes row n's sum, guarded at the tail of N. The cost of the last two changes, and of
# the loads' schedule, is experiment 7.


# %% dequant_gemv
@tilelang.jit
def dequant_gemv(A, B, S, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    M, N, K, NG = T.const("M, N, K, NG")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K // 2), T.uint8)
    S: T.Tensor((N, NG), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), M, threads=THREADS) as (bx, m):
        # TODO begin: BLOCK_N dot products of one token with rows of W, in runs of 8 weights that share a scale
        # gemv of puzzle 08 with W unpacked in registers. Each K step copies the packed bytes of the block's
        # rows and the token's activations straight into fragments (no shared memory, no pipeline). Build each
        # weight's fp32 value from its bits (Kernel 3's trick with the fp32 number 2^23), multiply it by its
        # activation in a BLOCK_N x BLOCK_K/8 x 8 fragment, sum each run of 8 and scale that sum once, and add
        # it into running sums that stay in each lane across the K loop. Reduce them to BLOCK_N row sums once,
        # after the loop, and store the rows that exist.
        raise NotImplementedError("dequant_gemv")
        # TODO end

    return C


# %% cases
# ---------------------------------------------------------------------------------- cases

_A = Tensor("A", ("M", "K"), "float16")
_B = Tensor("B", ("N", "KH"), "uint8", int_range=(0, 255))
_S = Tensor("S", ("N", "NG"), "float16", init="positive")
_W = Tensor("W", ("N", "K"), "float16")
_C = Tensor("C", ("M", "N"), "float16")


def _sizes(n, k, groups, m=None):
    sizes = {"N": n, "K": k, "KH": k // 2, "NG": groups}
    return sizes if m is None else {"M": m, **sizes}


# What dequant_matmul and dequant_matmul_decode share: the same product, checked and timed the same way.
_GEMM = {
    "inputs": (_A, _B, _S),
    "outputs": (_C,),
    "reference": dequant_matmul_reference,
    "baseline": torch_dequant_matmul,
    "baselines": (Baseline("torch fp16 on unquantized W", fp16_matmul, prepare=unquantized_weights),),
    "flops": lambda s: 2.0 * s["M"] * s["N"] * s["K"],
    "bytes_moved": lambda s: tensor_bytes((_A, _B, _S, _C), s),
    "tiles": {"C": ("BLOCK_M", "BLOCK_N")},
}


def _gemm_cases(seeds: int) -> tuple[Case, ...]:
    """The GEMM kernels' cases, seeded from ``seeds`` + 1 on (each kernel draws its own inputs)."""
    gemm = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "STAGES": 3}
    return (
        Case("square_256_g64", _sizes(256, 256, 4, m=256), gemm, seed=seeds + 1, simulate=True),
        Case("odd_37x200x512_g64", _sizes(200, 512, 8, m=37), gemm, seed=seeds + 2, simulate=True),
        Case("tail_1000_g128", _sizes(1000, 1024, 8, m=1000), gemm, seed=seeds + 3),
        # One scale per row (G = K) and 2048-term sums.
        Case("per_row_100x300x2048", _sizes(300, 2048, 1, m=100), gemm, seed=seeds + 4, simulate=True),
        # BLOCK_M != BLOCK_N, M != N != K, a tail in M and N: swapped offsets, and for the decode kernel
        # C stored untransposed or its guards swapped, fail here.
        Case(
            "rect_50x77x384_g128",
            _sizes(77, 384, 3, m=50),
            {"BLOCK_M": 32, "BLOCK_N": 64, "BLOCK_K": 64, "STAGES": 3},
            seed=seeds + 6,
            simulate=True,
        ),
        # One token: a single row of A, 15 of the block's 16 rows past M; and tails in N and K's groups.
        Case(
            "one_row_1x200x512_g64",
            _sizes(200, 512, 8, m=1),
            {"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 64, "STAGES": 3},
            seed=seeds + 7,
            simulate=True,
        ),
        # Decode: 16 tokens. BLOCK_N = 64 gives 128 blocks for the 132 SMs (the same block for both kernels,
        # for the two to compare).
        Case(
            "decode_16x8192x8192_g128",
            _sizes(8192, 8192, 64, m=16),
            {"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 128, "STAGES": 4},
            seed=seeds + 5,
            bench=True,
        ),
        # Decode of one token, the size published 4-bit kernels are compared at (issue 29's targets).
        Case(
            "decode_1x8192x8192_g128",
            _sizes(8192, 8192, 64, m=1),
            {"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 128, "STAGES": 4},
            seed=seeds + 8,
            bench=True,
        ),
    )


def _gemv_cases() -> tuple[Case, ...]:
    """dequant_gemv's cases: a few tokens, tails in N, groups down to 8 columns, and the one-token decode."""
    return (
        Case(
            "one_token_1x256x512_g64",
            _sizes(256, 512, 8, m=1),
            {"BLOCK_N": 8, "BLOCK_K": 256},
            seed=10401,
            simulate=True,
        ),
        # Three tokens (the grid's second axis) and a tail in N: 203 rows are 25 blocks of 8 and 3 rows.
        Case(
            "tokens_3x203x1024_g128",
            _sizes(203, 1024, 8, m=3),
            {"BLOCK_N": 8, "BLOCK_K": 512},
            seed=10402,
            simulate=True,
        ),
        # G = 8: every run of 8 has its own scale, so a scale read for the step (or the block) fails here.
        Case(
            "groups_of_8_2x40x256", _sizes(40, 256, 32, m=2), {"BLOCK_N": 8, "BLOCK_K": 128}, seed=10403, simulate=True
        ),
        # One scale per row (G = K), a block of 16 rows over a tail, 1024-wide steps.
        Case("per_row_1x77x2048", _sizes(77, 2048, 1, m=1), {"BLOCK_N": 16, "BLOCK_K": 1024}, seed=10404),
        Case("tail_2x1000x4096_g128", _sizes(1000, 4096, 32, m=2), {"BLOCK_N": 8, "BLOCK_K": 2048}, seed=10405),
        # Issue 39's one-token target. 1024 blocks of 8 rows, 1024 columns a step: 53 registers a thread, so
        # all 1024 blocks fit on 132 SMs at once (docs/results/p09-p10-notes.md).
        Case(
            "decode_1x8192x8192_g128",
            _sizes(8192, 8192, 64, m=1),
            {"BLOCK_N": 8, "BLOCK_K": 1024, "THREADS": 128},
            seed=10406,
            bench=True,
        ),
    )


def puzzle() -> Puzzle:
    unpack = {"BLOCK_N": 64, "BLOCK_K": 64}
    return Puzzle(
        id="10",
        title="Dequantized matmul",
        kernels=(
            Kernel(
                function="dequantize_int4",
                title="Unpack 4-bit weights with their group scales",
                inputs=(_B, _S),
                outputs=(_W,),
                reference=unpack_reference,
                baseline=torch_dequantize,
                bytes_moved=lambda s: tensor_bytes((_B, _S, _W), s),
                tiles={"W": ("BLOCK_N", "BLOCK_K")},
                cases=(
                    Case("small_64x256_g64", _sizes(64, 256, 4), unpack, seed=10101, simulate=True),
                    Case("odd_37x128_g64", _sizes(37, 128, 2), unpack, seed=10102, simulate=True),
                    Case("tail_1000x1024_g128", _sizes(1000, 1024, 8), unpack, seed=10103),
                    Case("per_row_300x512", _sizes(300, 512, 1), unpack, seed=10104),
                    # BLOCK_N != BLOCK_K and a tail in N (K is a multiple of BLOCK_K by the
                    # preconditions): swapped tile offsets fail on the CPU too
                    Case(
                        "rect_77x384_g128",
                        _sizes(77, 384, 3),
                        {"BLOCK_N": 32, "BLOCK_K": 64},
                        seed=10106,
                        simulate=True,
                    ),
                    # 32 MiB in, 128 MiB out: memory-bound.
                    Case(
                        "large_8192_g128",
                        _sizes(8192, 8192, 64),
                        {"BLOCK_N": 64, "BLOCK_K": 128, "THREADS": 256},
                        seed=10105,
                        bench=True,
                    ),
                ),
            ),
            Kernel(
                function="dequant_matmul",
                concepts=(
                    uses_tile_op(
                        "tl.tileop.gemm",
                        "the A tile times the unpacked W tile computed with T.gemm (the Tensor Cores)",
                    ),
                ),
                title="GEMM with 4-bit weights unpacked in shared memory",
                cases=_gemm_cases(10200),
                **_GEMM,
            ),
            Kernel(
                function="dequant_matmul_decode",
                concepts=(
                    uses_tile_op(
                        "tl.tileop.gemm",
                        "W times the A tile computed with T.gemm (the Tensor Cores)",
                    ),
                    gemm_left_operand_in_fragment(
                        "the unpacked W tile as T.gemm's first operand, straight from its fragment (registers), "
                        "with no shared W tile"
                    ),
                ),
                title="Decode GEMM: W from its bits, straight into the MMA's registers",
                cases=_gemm_cases(10300),
                **_GEMM,
            ),
            Kernel(
                function="dequant_gemv",
                concepts=(uses_tile_op("tl.tileop.reduce", "each row's scaled run sums added up with T.reduce_sum"),),
                title="One token: a GEMV on the CUDA cores, W unpacked in registers",
                cases=_gemv_cases(),
                **{**_GEMM, "tiles": {"C": (1, "BLOCK_N")}},
            ),
        ),
    )


# %% [markdown]
# ## What you learned
#
# - Bit manipulation on tiles: cast, shift, mask, subtract, convert, scale.
# - Group-wise scales and why a tile must lie inside one group.
# - Fusing a producer into a consumer through shared memory: the weights are unpacked on the chip and
#   never written out, so a memory-bound product reads 4x fewer bytes.
# - Counting instructions per weight: an fp16 built from its bits instead of converted, and the
#   unpacked tile fed to `T.gemm` from registers as its first operand (C^T = W A^T), not through shared
#   memory.
# - When the Tensor Cores are the wrong tool: at one token the product is a GEMV, and the CUDA cores
#   unpack and multiply in registers, with one scale per run of 8 weights and one reduction at the end.
#
# That is the course: from a copy to a fused, pipelined, quantized matrix product. Every kernel of
# the last puzzles is the same few ideas (tiles in the right memory, fp32 accumulation, masks for the
# edges, copies overlapped with math) combined.

# %% [bench]

# %% [markdown]
# ## Experiments to try
#
# Each cell runs as it stands: predict its result first, run it, then open "What we measured" below
# it. Change the numbers and run it again. `bench(kernel, NAME=value, ...)` times your kernel on
# its bench case with those block parameters in place of the case's (it checks the kernel on that
# case first; the graded cases keep theirs); without a GPU it prints one line. The cells that
# compile need nvcc but no GPU.
#
# **1. What a stage costs.** The cell traces the reference `dequant_matmul` at the decode case's sizes
# and block with one to eight stages and counts the shared memory one block asks for, as TileLang
# allocates it (the count `python -m grader fit` uses; no compile, no GPU). Predict: what does one
# more stage add at these sizes, and what is there only once?

# %% [notebook]
# from grader.devices import profile_named
# from grader.pipeline.shared_memory import shared_memory_plan
# from solutions.p10_dequant_matmul import dequant_matmul as reference_dequant_matmul
#
# # The decode case's sizes and block at four depths of pipeline, traced (no compile): the shared memory
# # one block asks for, counted as TileLang allocates it (what `python -m grader fit` counts).
# sizes = {"M": 16, "N": 8192, "K": 8192, "KH": 4096, "NG": 64, "BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 128}
# limit = profile_named("sm_90").shared_per_block
# for stages in (1, 2, 4, 8):
#     shared = shared_memory_plan(reference_dequant_matmul.get_tir(**sizes, STAGES=stages)).total
#     print(f"STAGES={stages}: {shared / 1024:5.1f} KiB per block (Hopper allows {limit / 1024:.0f})")

# %% [measured]
# Each stage holds one A tile (16 x 128 fp16, 4 KiB) and one tile of packed weights (64 x 64 bytes,
# 4 KiB): 8 KiB, the step between the rows. The unpacked W tile (64 x 128 fp16, 16 KiB) and the
# block's scales (64 rows x 64 groups of fp16, 8 KiB) are there once. At decode sizes stages are cheap.

# %% [markdown]
# **2. A deeper pipeline.** The decode case uses STAGES = 4: 0.0521 ms, 675 GB/s on the H200. That is
# far below the 4051 GB/s of puzzle 01's copy in the same run (docs/results/h200-bench.md). So it is
# not the bytes themselves that limit it. A decode step streams the weights once, so what matters is how many
# of their bytes are on the way at any moment. More stages put more tiles of packed weights in flight
# per block, 8 KiB each (experiment 1). Predict: if loads in flight are what holds the kernel back,
# two stages are slower and eight help. If eight do not help, what is the next suspect?

# %% [notebook]
# bench("dequant_matmul", STAGES=2)
# bench("dequant_matmul", STAGES=8)

# %% [measured]
# The course has no H200 time for these two settings on a results page yet; your run is the
# measurement. Experiment 5 shows what the unpacking, the next suspect, costs.

# %% [markdown]
# **3. More blocks.** The case's comment says it: BLOCK_N = 64 gives 128 blocks for the 132 SMs. At 32
# rows of W per block there are 256 blocks: every SM gets work, enough for two on most. So twice the
# loads can be in flight on an SM, each block unpacking half as many weights. The A tile is read by
# twice as many blocks, but it is 16 x 8192 fp16, 256 KiB, next to 32 MiB of packed weights. Predict:
# faster or slower than the bench case?

# %% [notebook]
# bench("dequant_matmul", BLOCK_N=32)

# %% [measured]
# The course has no H200 time for `dequant_matmul` at this block on a results page yet; your run is
# the measurement. Experiment 6 tries the same on the decode rung.

# %% [markdown]
# **4. Unpacking alone.** `dequantize_int4`'s bench case (BLOCK_N = 64, BLOCK_K = 128) takes 0.0469 ms,
# 3596 GB/s on the H200 (docs/results/h200-bench.md): it reads 32 MiB and writes 128 MiB, close to a
# copy's speed. Both cells below keep each tile inside one group of 128 columns (G must be a multiple
# of BLOCK_K: one scale per row and tile). Predict: how much can a memory-bound kernel near copy speed
# still gain?

# %% [notebook]
# bench("dequantize_int4", BLOCK_N=128)
# bench("dequantize_int4", BLOCK_K=64)

# %% [measured]
# The course has no H200 time for these two blocks on a results page yet; your run is the
# measurement. A kernel near copy speed has little left to gain, so a few percent either way is what
# to expect. BLOCK_K = 256 would break the precondition: one scale for two groups, and the check that
# runs before the timing would fail.

# %% [markdown]
# **5. What the decode rung buys.** `dequant_matmul` spends a handful of integer instructions and an
# integer-to-fp16 conversion on every weight; `dequant_matmul_decode` builds the fp16 from its bits and
# unpacks straight into the MMA's registers. The floor is about 8 µs; `dequant_matmul` takes 0.0521 ms
# (docs/results/h200-bench.md, docs/results/p09-p10-notes.md). Predict: if the unpacking, not the
# loads, limits `dequant_matmul`, how much faster is the decode rung, and does it beat torch's fp16
# matmul on unquantized weights?

# %% [notebook]
# bench("dequant_matmul_decode")

# %% [measured]
# On the H200 the decode rung takes 0.0414 ms at the decode case, 0.87x torch's fp16 matmul on
# unquantized weights in the same run (docs/results/h200-bench.md). A sweep of candidate kernels
# (on an H100, docs/results/p09-p10-notes.md) splits the gain: 51.8 µs for `dequant_matmul`, 41.9 µs with
# the bit trick alone (the shared W tile kept), 41.1 µs with both changes. Taking the scale and the offset
# out of the per-weight work altogether (correcting each K step's product on the accumulator instead) was
# slower, 55.3 µs. So the per-weight instructions cost time: removing some of them gave the largest
# gain. What limits the decode rung now is not settled: its profile (docs/results/h200-profiles.md)
# shows warps waiting mostly on global memory (53% of stalls) while DRAM is 19% busy, and 72% of its
# shared-memory accesses replayed for bank conflicts. Each weight still gets its own shift, mask, OR,
# subtraction and multiplication; fast 4-bit kernels convert eight nibbles at once with a few 32-bit
# bit operations on weights stored pre-shuffled, which `T.Parallel` over single elements does not
# express.

# %% [markdown]
# **6. More unpacking warps.** Only one warpgroup per SM unpacks: the decode case's 128 blocks of 64
# rows meet 132 SMs, one block each. Smaller blocks give more blocks (below 64 rows the MMA is
# `mma.sync`, not wgmma); more threads give two warpgroups per block, sharing its tile. Predict: does
# either help, if the unpacking is the limit?

# %% [notebook]
# bench("dequant_matmul_decode", BLOCK_N=32)
# bench("dequant_matmul_decode", THREADS=256)

# %% [measured]
# Neither helps (on an H100, docs/results/p09-p10-notes.md): 0.0736 ms at BLOCK_N = 32 (256 blocks) and
# 0.0683 ms with two consumer warpgroups (THREADS = 256), against 0.0414 ms at the bench block; 0.0485 ms
# with 64-wide K steps and 6 stages, and 0.0404 ms without warp specialization, level with the bench
# block. A likely
# reason, a hypothesis not yet profiled: `T.gemm` waits for its MMA before the block unpacks the next
# K step, so unpacking and MMA take turns instead of overlapping.

# %% [markdown]
# **7. One token.** At the one-token case the decode rung still multiplies a tile of 16 tokens, 15 of
# them padding; `dequant_gemv` is a GEMV on the CUDA cores instead. Predict: how much faster is it than
# the decode rung at one token, and which of its changes (the fp32 from its bits, one scale per run of
# 8, no shared memory) buys the most? Then try another block.

# %% [notebook]
# bench("dequant_gemv", "dequant_matmul_decode")
# bench("dequant_gemv", BLOCK_K=2048)

# %% [measured]
# On an H100, `dequant_gemv` took 23.0-25.1 µs at its bench block against 41.1-41.7 µs for the
# decode rung: 1.7-1.8x, and about 2x torch's fp16 matmul on unquantized weights, at half the floor of
# 11.6 µs (docs/results/p09-p10-notes.md, three device calls of a candidate sweep). One scale per run of
# 8 instead of per weight was the largest single change (26.7-27.0 to 22.5-25.1 µs); the fp32 from its
# bits saved 2 µs against an integer conversion (28.8 against 26.9 µs); staging the bytes in shared
# memory by TMA doubled the time, and by `cp.async` gained nothing. Blocks of 4 to 16 rows at 128
# threads were within the run-to-run spread of each other; 256 threads were slower for every shape.
# BLOCK_K = 2048 moves twice the bytes per step, but its 80 registers a thread (53 at 1024) leave room
# for 6 blocks an SM instead of 9, so the 1024 blocks no longer run at once: its timings ranged from
# 22.5 µs to 0.0340 ms, against 23.0 to 25.1 µs at the bench block.
