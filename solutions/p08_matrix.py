"""Puzzle 08 · Matrix: GEMV, a naive GEMM, and a pipelined GEMM.

Matrix multiplication is the operation most of deep learning reduces to: attention scores,
linear layers, their gradients, and convolutions after im2col. This puzzle climbs three rungs.

Inputs and outputs (fp16 in, fp16 out, every sum accumulated in fp32):

``gemv``
    ``A`` is M x K, ``B`` is a vector of K. Output ``C`` of M with
    ``C[i] = sum_k A[i, k] * B[k]``. It is the reduce-sum of puzzle 05 with a weight per
    column: multiply each row of a tile by the vector in fp32, then reduce along K.

``matmul_naive``
    ``A`` is M x K, ``B`` is K x N. Output ``C`` of M x N with ``C = A @ B``.
    Each block owns one BLOCK_M x BLOCK_N tile of C, walks K in BLOCK_K steps with a serial
    loop, copies its A and B tiles into fragments (registers) and multiplies them with
    ``T.gemm`` on the Tensor Cores into an fp32 accumulator.

``matmul_pipelined``
    The same product, with the A and B tiles in shared memory and the K loop written as
    ``T.Pipelined(..., num_stages=3)``, so the copies of the next tiles overlap the
    multiplication of the current ones.

``matmul_tuned``
    The pipelined GEMM made fast on Hopper, with four changes that are all data or one line:
    wider tiles (128 x 256 x 64: each byte brought into shared memory feeds twice as many
    multiply-adds as 128 x 128, and a K step of 64 halves the pipeline's per-step overhead),
    256 threads (two warpgroups of consumers share the tile; TileLang adds a producer warpgroup
    that issues the TMA copies), more stages (4: more copies in flight to cover HBM latency),
    and ``T.use_swizzle(panel_size=...)``, which launches blocks in panels so the blocks running
    at the same time reuse the same rows of A and columns of B from L2 instead of HBM. The
    accumulator also goes through a shared-memory tile on its way to C, so the final store is
    wide and coalesced.

What it teaches: why the accumulator must be fp32 (fp16 has 11 bits of mantissa: after a few
hundred additions each new product is rounded away); GEMV as a weighted reduction on the CUDA
cores; tile-level matrix multiply on the Tensor Cores; why operand tiles belong in shared
memory rather than registers; and how a software pipeline hides memory latency.

Sizes need not be multiples of the block sizes: ``T.copy`` reads zeros past the edge of a
tensor and drops writes past it, so a tail tile is handled as long as every global read and
write goes through ``T.copy``. BLOCK_K must be a multiple of 16 for ``T.gemm`` on fp16 (the
Tensor Core's K step).
"""

from __future__ import annotations

import tilelang
import tilelang.language as T

from grader.concepts import gemm_operands_in_shared, pipelined, uses_tile_op
from grader.spec import Case, Kernel, Puzzle, Tensor, tensor_bytes

# ---------------------------------------------------------------- references (run on float64)


def gemv_reference(A, B):
    return A @ B


def matmul_reference(A, B):
    return A @ B


def torch_matmul(A, B):
    """What --bench times against: torch at the kernel's own dtypes."""
    return A @ B


# -------------------------------------------------------------------------------- kernels


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        # TODO begin: one block computes BLOCK_M outputs
        A_tile = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_fragment((BLOCK_K,), T.float16)
        products = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float32)
        acc = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K], B_tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                products[i, j] = T.cast(A_tile[i, j], T.float32) * T.cast(B_tile[j], T.float32)
            T.reduce_sum(products, acc, dim=1, clear=False)
        T.copy(acc, C[bx * BLOCK_M])
        # TODO end

    return C


@tilelang.jit
def matmul_naive(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        # TODO begin: one block computes the tile C[by, bx] with tiles in fragments
        A_tile = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_fragment((BLOCK_K, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)
            T.gemm(A_tile, B_tile, acc)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
        # TODO end

    return C


@tilelang.jit
def matmul_pipelined(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        # TODO begin: tiles in shared memory, the K loop pipelined over STAGES stages
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)
            T.gemm(A_tile, B_tile, acc)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
        # TODO end

    return C


@tilelang.jit
def matmul_tuned(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 256, PANEL: int = 10):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        # TODO begin: the pipelined GEMM, plus block rasterization and a staged store
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        C_tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.use_swizzle(panel_size=PANEL)
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)
            T.gemm(A_tile, B_tile, acc)
        T.copy(acc, C_tile)
        T.copy(C_tile, C[by * BLOCK_M, bx * BLOCK_N])
        # TODO end

    return C


# ---------------------------------------------------------------------------------- cases

_A = Tensor("A", ("M", "K"), "float16")
_B_VEC = Tensor("B", ("K",), "float16")
_B_MAT = Tensor("B", ("K", "N"), "float16")


def _gemm_flops(s):
    return 2.0 * s["M"] * s["N"] * s["K"]


def puzzle() -> Puzzle:
    gemv_blocks = {"BLOCK_M": 64, "BLOCK_K": 64}
    naive_blocks = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}
    piped_blocks = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "STAGES": 3}
    # Chosen by scripts/sweep.py on the H200 (see the closing note of the puzzles issue).
    tuned_blocks = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "STAGES": 4, "THREADS": 256, "PANEL": 10}
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
    pipeline = (
        uses_gemm,
        pipelined(2, "the K loop to be T.Pipelined(..., num_stages=2 or more), so copies overlap the math"),
        gemm_operands_in_shared("the A and B tiles in shared memory (T.alloc_shared), the accumulator in a fragment"),
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
                    # 8192 x 8192 fp16 is 128 MiB: larger than the H200's L2, so timing sees HBM.
                    Case("large_8192", {"M": 8192, "K": 8192}, {"BLOCK_M": 16, "BLOCK_K": 256}, seed=8105, bench=True),
                ),
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
                    Case("large_4096", {"M": 4096, "N": 4096, "K": 4096}, naive_blocks, seed=8205, bench=True),
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
                        "large_4096",
                        {"M": 4096, "N": 4096, "K": 4096},
                        {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "STAGES": 3, "THREADS": 256},
                        seed=8305,
                        bench=True,
                    ),
                ),
                **gemm_common,
            ),
            Kernel(
                function="matmul_tuned",
                title="GEMM tuned for Hopper: wide tiles, rasterized blocks, staged store",
                concepts=pipeline,
                cases=(
                    Case("square_256", {"M": 256, "N": 256, "K": 256}, tuned_blocks, seed=8401, simulate=True),
                    Case("tail_1000", {"M": 1000, "N": 1000, "K": 1000}, tuned_blocks, seed=8402),
                    Case("odd_127x129x131", {"M": 127, "N": 129, "K": 131}, tuned_blocks, seed=8403, simulate=True),
                    Case("skinny_33x1024x200", {"M": 33, "N": 1024, "K": 200}, tuned_blocks, seed=8404),
                    Case("large_4096", {"M": 4096, "N": 4096, "K": 4096}, tuned_blocks, seed=8405, bench=True),
                    Case("large_8192", {"M": 8192, "N": 8192, "K": 8192}, tuned_blocks, seed=8406, bench=True),
                ),
                **gemm_common,
            ),
        ),
    )
