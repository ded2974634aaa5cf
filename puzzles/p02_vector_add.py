"""Puzzle 02 · Vector add: element-wise kernels, a fused one, and tiles in fragments.

Element-wise operations (residual adds, activations, scaling) are everywhere in a network and
do almost no arithmetic per byte, so their speed is set by memory traffic alone. This puzzle
writes three of them on the grid of puzzle 01.

Inputs ``A`` and ``B``: fp16 vectors of N. Output ``C``: an fp16 vector of N.

``add``
    ``C[i] = A[i] + B[i]``. The ``copy_threads`` kernel of puzzle 01 with two inputs: one block
    per BLOCK elements, ``T.Parallel(BLOCK)`` over them, and a guard ``if i < N`` for the
    partial last block.

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


@tilelang.jit
def add(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        # TODO begin: block bx adds its BLOCK elements
        # As copy_threads in puzzle 01: a T.Parallel over BLOCK, the global index is this
        # block's offset plus the loop position, and only indices below N are written.
        # Each element of C is the sum of the elements of A and B at the same index.
        raise NotImplementedError("add")
        # TODO end

    return C


@tilelang.jit
def mul_relu(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        # TODO begin: block bx computes max(A * B, 0) for its BLOCK elements in one pass
        # The same loop and guard as add. Multiply the two inputs and keep the larger of the
        # product and zero, in one expression, written straight to C: the product never
        # goes to memory. Use T.max, not Python's max.
        raise NotImplementedError("mul_relu")
        # TODO end

    return C


@tilelang.jit
def add_fragments(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        # TODO begin: load both tiles into fragments, add them, store the sum tile
        # Three float16 fragments of BLOCK: two for the input tiles, one for the result.
        # T.copy each input's tile (starting at this block's offset) into its fragment,
        # add the fragments element by element in a T.Parallel over BLOCK (indices are
        # positions inside the tile, no guard), then T.copy the result tile into C.
        raise NotImplementedError("add_fragments")
        # TODO end

    return C


# ---------------------------------------------------------------------------------- cases

_A = Tensor("A", ("N",), "float16")
_B = Tensor("B", ("N",), "float16")
_C = Tensor("C", ("N",), "float16")

# 2^27 fp16 elements: 256 MiB per vector, 768 MiB per call, far beyond the H200's 60 MB L2.
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
