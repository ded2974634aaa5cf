"""grader.pipeline.structure: a kernel's admitted TIR as a sketch that renaming does not move, small edits move a
little, and a differently built kernel of the same puzzle moves more. Traced in-process (no compile)."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.discover import course_root
from grader.pipeline.structure import K, of_tir, similarity, sketch, tokens
from grader.pipeline.trace import kernel_function, trace_tir
from grader.trace.learner import load_learner
from tests.inprocess import spec

MATMUL = """
import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_shared(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)
            T.gemm(A_tile, B_tile, acc)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])

    return C
"""
ALLOCS = (
    "        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)\n",
    "        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)\n",
)
LOADS = (
    "            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)\n",
    "            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)\n",
)
CLEAR = "        T.clear(acc)\n"


def _renamed(text: str) -> str:
    for old, new in (("A_tile", "left"), ("B_tile", "right"), ("acc", "total"), ("bx", "col"), ("by", "row")):
        text = text.replace(old, new)
    return text.replace("for k in", "for step in").replace("k * BLOCK_K", "step * BLOCK_K")


def _reordered(text: str) -> str:
    """The two tiles allocated, and loaded, in the other order: independent statements swapped."""
    for first, second in (ALLOCS, LOADS):
        text = text.replace(first + second, second + first)
    return text


VARIANTS = {
    "renamed": _renamed(MATMUL),
    "reordered": _reordered(MATMUL),
    # a loop that clears the cleared accumulator again: it changes nothing the kernel computes
    "no_op_loop": MATMUL.replace(CLEAR, CLEAR + "        for z in T.serial(4):\n            T.clear(acc)\n"),
    # loops of one step and of none around what was there, and a loop that passes
    "trivial_loops": MATMUL.replace(
        CLEAR,
        "        for z in T.serial(1):\n            T.clear(acc)\n"
        "        for w in T.serial(0):\n            T.fill(acc, 1)\n"
        "        for u in T.serial(3):\n            pass\n",
    ),
}


@pytest.fixture(scope="module")
def sketches(tmp_path_factory: pytest.TempPathFactory) -> dict:
    kernel = spec("08").kernel("matmul_shared")
    case = next(c for c in kernel.cases if c.simulate)
    folder = tmp_path_factory.mktemp("structure")
    right = course_root() / "tests" / "right" / "p08"

    def traced(path: Path):
        module, problem, _ = load_learner(path)
        assert not problem, problem
        return trace_tir(kernel_function(module, kernel), kernel, case, path)

    files = {"original": MATMUL, **VARIANTS}
    for name, text in files.items():
        (folder / f"{name}.py").write_text(text)
    tirs = {name: traced(folder / f"{name}.py") for name in files}
    # two right kernels of the same puzzle built another way: the grid flattened, and staged through shared memory
    for name in ("matmul_shared_flat_grid_divmod_alloc_var", "matmul_shared_slices_staged_store"):
        tirs[name] = traced(right / f"{name}.py")
    tirs["original_again"] = traced(folder / "original.py")
    return {"tir": tirs, "sketch": {name: of_tir(tir, case.name) for name, tir in tirs.items()}, "case": case.name}


def test_the_same_kernel_traced_twice_prints_the_same_tir(sketches: dict):
    """The judge's names (tir_graph.judge_names) depend on the TIR alone, so its text does too."""
    assert sketches["tir"]["original"].script() == sketches["tir"]["original_again"].script()


def test_renamed_variables_give_the_same_sketch(sketches: dict):
    original, renamed = sketches["sketch"]["original"], sketches["sketch"]["renamed"]
    # The admitted TIR keeps plain names as the learner wrote them: the texts differ, the sketches do not
    assert sketches["tir"]["original"].script() != sketches["tir"]["renamed"].script()
    assert renamed.sketch == original.sketch and renamed.tokens == original.tokens
    assert similarity(original, renamed) == 1.0
    assert original.case == sketches["case"]


def test_loops_of_one_step_or_none_or_of_nothing_are_not_seen(sketches: dict):
    assert similarity(sketches["sketch"]["original"], sketches["sketch"]["trivial_loops"]) == 1.0


def test_small_edits_stay_closer_than_a_kernel_built_another_way(sketches: dict):
    got = {name: similarity(sketches["sketch"]["original"], s) for name, s in sketches["sketch"].items()}
    assert 0.9 <= got["reordered"] <= 1.0  # independent statements alike but for their names swap unseen
    assert 0.7 <= got["no_op_loop"] < 1.0
    # The flattened grid is another way; the staged store adds two lines to the same kernel and is as alike as a
    # copy with one edit (0.99): the report's margin over the reference, which both share, leaves such pairs alone.
    assert got["matmul_shared_flat_grid_divmod_alloc_var"] < 0.5 < got["no_op_loop"] <= got["reordered"]
    assert got["matmul_shared_slices_staged_store"] >= 0.9


def test_an_unused_local_declared_first_does_not_hide_a_copy(sketches: dict):
    """Names numbered by first appearance let one unused local, declared before the rest, renumber every name
    after it: a red team's copy fell from 1.0 to 0.68 and went unflagged. Every name is one token now."""
    from grader.nbgrader.class_report import SIMILARITY_THRESHOLD

    text = sketches["tir"]["original"].script()
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if "alloc_buffer" in line)
    indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
    padded = [*lines[:first], f'{indent}pad = T.sblock_alloc_buffer((1,), scope="local")', *lines[first:]]
    assert similarity(sketches["sketch"]["original"], sketch("\n".join(padded))) >= SIMILARITY_THRESHOLD


def test_a_sketch_is_the_smallest_hashes_of_the_shingles():
    text = "\n".join(f"x = T.copy(a[{i}], b)" for i in range(100))
    made = sketch(text, "case")
    assert len(made.sketch) == K and made.sketch == sorted(made.sketch) and all(0 <= h < 2**63 for h in made.sketch)
    assert made.tokens == len(tokens(text))
    assert similarity(made, made) == 1.0
    # a name the learner chose is written as what it names; the language's own names stay
    text = 'acc = T.alloc_buffer((8,), scope="local.fragment")\nfor k in T.serial(8):\n    acc[k] = T.exp(acc[k])'
    assert tokens(text)[-26:] == [
        "@0", "for", "loop", "in", "T", ".", "serial", "(", "8", ")", ":",
        "@1", "fragment", "[", "loop", "]", "=", "T", ".", "exp", "(", "fragment", "[", "loop", "]", ")",
    ]  # fmt: skip
    assert similarity(sketch(""), sketch("")) == 0.0
