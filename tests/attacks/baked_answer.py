"""Attack: bake the answer into the TIR. The graded inputs are drawn from a seed that the course's own
files hold (the case's seed, offset 0), so while TileLang traces the kernel the file reads the public
cases, finds the one with these sizes, draws that case's inputs on the CPU as the judge will, computes
the reference and writes it into the kernel as constants: a kernel that never reads A or B, yet is
right on every public simulated case. (It keeps a T.reduce_sum, so the concept check has nothing to
say.)"""

import sys

import tilelang
import tilelang.language as T


def _sizes() -> tuple[int, int]:
    """The sizes are symbols in the kernel's body: read them from the tracer's own frame (its job)."""
    frame = sys._getframe(1)
    while frame is not None:
        arguments = frame.f_locals.get("arguments")
        if isinstance(arguments, dict) and "M" in arguments:
            return int(arguments["M"]), int(arguments["K"])
        frame = frame.f_back
    raise RuntimeError("no job")


def _expected(M: int, K: int) -> list[float]:
    from grader.discover import course_root, load_module, load_puzzle, puzzle_files
    from grader.pipeline.inputs import make_inputs, reference_outputs

    puzzle = load_puzzle(load_module(puzzle_files(course_root() / "solutions")["08"]))
    kernel = puzzle.kernel("gemv")
    case = next(c for c in kernel.cases if dict(c.sizes) == {"M": M, "K": K})
    (C,) = reference_outputs(kernel, make_inputs(kernel, case, "cpu", 0))
    return [float(v) for v in C.to(dtype=__import__("torch").float16).float()]


def _store(C, values: list[float]) -> None:
    """A plain function TileLang does not rewrite: one constant store per output element."""
    for m, value in enumerate(values):
        T.buffer_store(C, T.float16(value), [m])


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    values = _expected(*_sizes())
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS):
        ones = T.alloc_fragment((BLOCK_M, 2), T.float32)
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        for i, j in T.Parallel(BLOCK_M, 2):
            ones[i, j] = 1.0
        T.reduce_sum(ones, sums, dim=1)
        unused = T.alloc_shared((BLOCK_M,), T.float32)
        T.copy(sums, unused)
        _store(C, values)  # every block stores every row: the same constants, so no race shows
    return C
