"""The never-cleared accumulator check: silent on every reference, loud on the no-clear kernels
(which can pass on a GPU whose leftover registers are zero). The rounded-down grid and loop checks:
silent on every reference in every case, naming the T.Kernel argument or loop and T.ceildiv otherwise."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import tilelang
import tilelang.language as T

from grader.discover import course_root, load_module, load_puzzle, puzzle_files
from grader.pipeline.checks import empty_launch, floor_problems, grid_problems, loop_problems, never_initialized
from tests.corpora import wrong_kernels

ROOT = Path(__file__).resolve().parent.parent


def _tir(module, kernel):
    case = kernel.cases[0]
    return getattr(module, kernel.function).get_tir(**case.sizes, **case.params)


@pytest.mark.parametrize("puzzle_id", sorted(puzzle_files(ROOT / "solutions")))
def test_references_clear_what_they_accumulate(puzzle_id):
    module = load_module(puzzle_files(ROOT / "solutions")[puzzle_id])
    for kernel in load_puzzle(module).kernels:
        assert never_initialized(_tir(module, kernel)) == [], kernel.function


NO_CLEAR = [w for w in wrong_kernels(course_root()) if w.path.stem.endswith("no_clear")]


def test_there_are_no_clear_kernels_to_check():
    assert len(NO_CLEAR) >= 3


@pytest.mark.parametrize("wrong", NO_CLEAR, ids=lambda w: w.path.stem)
def test_no_clear_kernels_are_named(wrong):
    spec = load_puzzle(load_module(puzzle_files(ROOT / "solutions")[wrong.puzzle_id])).kernel(wrong.kernel)
    problems = never_initialized(_tir(load_module(wrong.path), spec))
    assert len(problems) == 1
    # the buffer named is the file's own accumulator: a fragment it allocates and never clears
    (name,) = re.findall(r"T\.clear\((\w+)\)", problems[0])
    source = wrong.path.read_text().split('"""', 2)[2]  # the code, not the docstring that names the bug
    assert "before anything cleared it" in problems[0]
    assert f"{name} = T.alloc_fragment" in source and f"T.clear({name})" not in source, (name, problems[0])


@pytest.mark.parametrize(
    ("puzzle_id", "stem", "said"),
    [
        ("06", "softmax_online_running_sum_not_zeroed", "`row_sum[...] = f(row_sum[...])` reads `row_sum`"),
        ("08", "flash_attention_tensor_cores_acc_not_cleared", "`acc[...] = f(acc[...])` reads `acc`"),
        ("04", "mul_relu_backward_no_clear", "`partial[...] += ...` adds into `partial`"),
    ],
)
def test_a_store_that_updates_a_buffer_nothing_set_is_named(puzzle_id, stem, said):
    """``l = l * f + t`` (a running sum, or an accumulator rescaled before its first product) reads leftovers
    as surely as ``l += t`` does, though no tile op is involved; a plain ``+=`` is said as one."""
    (wrong,) = [w for w in wrong_kernels(course_root()) if w.path.stem == stem]
    spec = _spec(puzzle_id, wrong.kernel)
    buffer = said.rsplit("`", 2)[1]
    assert never_initialized(_tir(load_module(wrong.path), spec)) == [
        f"{said} before anything cleared it: its starting values are leftovers, so call T.clear({buffer}) before "
        "the loop"
    ]


def test_the_grader_says_what_to_fix():
    path = ROOT / "tests" / "wrong" / "p08" / "gemv_no_clear.py"
    run = subprocess.run(
        [sys.executable, "-m", "grader", "08", "--file", str(path), "-k", "gemv", "--case", "square_256"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "hint: the likely cause: T.reduce adds into `acc` before anything cleared it" in run.stdout


# ------------------------------------------------------------ launch grids and loops that round down


def _spec(puzzle_id, function):
    return load_puzzle(load_module(puzzle_files(ROOT / "solutions")[puzzle_id])).kernel(function)


def _floors(module, puzzle_id, function, case_name):
    kernel = _spec(puzzle_id, function)
    case = kernel.case(case_name)
    tir = getattr(module, function).get_tir(**case.sizes, **case.params)
    tensors = kernel.inputs + kernel.outputs
    return tir, case, tensors


def test_no_reference_kernel_has_a_grid_or_loop_that_rounds_down_in_any_case():
    for path in puzzle_files(ROOT / "solutions").values():
        module = load_module(path)
        for kernel in load_puzzle(module).kernels:
            for case in kernel.cases:
                tir = getattr(module, kernel.function).get_tir(**case.sizes, **case.params)
                tensors = kernel.inputs + kernel.outputs
                assert floor_problems(tir, case.sizes, case.params, tensors) == [], (kernel.function, case.name)
                assert empty_launch(tir, case.sizes, case.params, tensors) == "", (kernel.function, case.name)


RIGHT = sorted((ROOT / "tests" / "right").glob("p[0-9][0-9]/*.py"))


@pytest.mark.parametrize("path", RIGHT, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_correct_variants_are_not_said_to_round_down(path):
    """Full steps then a tail apart, a first tile peeled off, T.serial(1, n): each reaches the end."""
    kernel = _spec(path.parent.name[1:], re.search(r'^KERNEL = "(.*)"$', path.read_text(), re.M).group(1))
    module = load_module(path)
    for case in kernel.cases:
        tir = getattr(module, kernel.function).get_tir(**case.sizes, **case.params)
        tensors = kernel.inputs + kernel.outputs
        assert floor_problems(tir, case.sizes, case.params, tensors) == [], case.name
        assert empty_launch(tir, case.sizes, case.params, tensors) == "", case.name


def test_a_grid_of_n_over_block_names_the_kernel_argument_and_t_ceildiv():
    module = load_module(ROOT / "tests" / "wrong" / "p01" / "copy_threads_grid_rounds_down.py")
    tir, case, tensors = _floors(module, "01", "copy_threads", "tail_1000")
    assert grid_problems(tir, case.sizes, case.params, tensors) == [
        "T.Kernel's first argument (`bx`, blockIdx.x) launches 3 blocks of 256 along N = 1000 (dimension 0 of B): "
        "that reaches 768, so the last 232 of N are never computed. The count rounds down: use "
        "T.ceildiv(N, BLOCK) rather than N // BLOCK"
    ]
    assert loop_problems(tir, case.sizes, case.params, tensors) == []
    # where N is a multiple of BLOCK the same kernel is right, and nothing is said
    tir, case, tensors = _floors(module, "01", "copy_threads", "even_4096")
    assert floor_problems(tir, case.sizes, case.params, tensors) == []


def test_a_serial_loop_that_rounds_down_is_named():
    module = load_module(ROOT / "tests" / "wrong" / "p05" / "row_sum_tiled_columns_rounded_down.py")
    tir, case, tensors = _floors(module, "05", "row_sum_tiled", "odd_127x129")
    (problem,) = floor_problems(tir, case.sizes, case.params, tensors)
    assert problem.startswith("the T.serial loop over `k` runs 2 steps of 64 along N = 129 (dimension 1 of A)")
    assert problem.endswith("use T.ceildiv(N, BLOCK_N) rather than N // BLOCK_N")


@tilelang.jit
def _k_loop_rounds_down(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(acc)
        for k in T.Pipelined(K // BLOCK_K, num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)
            T.gemm(A_tile, B_tile, acc)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
    return C


def test_a_pipelined_k_loop_that_rounds_down_is_named_not_the_formula():
    kernel = _spec("08", "matmul_pipelined")
    case, tensors = kernel.case("odd_127x129x131"), kernel.inputs + kernel.outputs
    tir = _k_loop_rounds_down.get_tir(**case.sizes, **case.params)
    assert grid_problems(tir, case.sizes, case.params, tensors) == []
    assert loop_problems(tir, case.sizes, case.params, tensors) == [
        "the T.Pipelined loop over `k` runs 4 steps of 32 along K = 131 (dimension 1 of A): that reaches 128, "
        "so the last 3 of K are never visited. The count rounds down: use T.ceildiv(K, BLOCK_K) rather than "
        "K // BLOCK_K"
    ]
    # K a multiple of BLOCK_K: the same loop covers K, nothing to say
    case = _spec("08", "matmul_pipelined").case("square_256")
    tir = _k_loop_rounds_down.get_tir(**case.sizes, **case.params)
    assert floor_problems(tir, case.sizes, case.params, tensors) == []


@tilelang.jit
def _parallel_steps_round_down(A, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)
    with T.Kernel(1, threads=THREADS):
        for step, t in T.Parallel(N // THREADS, THREADS):
            B[step * THREADS + t] = A[step * THREADS + t]
    return B


def test_a_parallel_loop_that_rounds_down_is_named():
    kernel = _spec("01", "copy_serial")
    case = kernel.case("tail_1000")
    tir = _parallel_steps_round_down.get_tir(**case.sizes, **case.params)
    (problem,) = loop_problems(tir, case.sizes, case.params, kernel.inputs + kernel.outputs)
    assert problem.startswith("the T.Parallel loop over `step` runs 3 steps of 256 along N = 1000")
    assert "T.ceildiv(N, THREADS) rather than N // THREADS" in problem


def test_an_index_bug_is_not_called_a_count_that_rounds_down():
    """matmul_naive reads B's columns at `by`: `by` covers C's rows, so its count is right and the bug is
    the index (which the numbers show), not the grid."""
    module = load_module(ROOT / "tests" / "wrong" / "p08" / "matmul_naive_wrong_tile_offset.py")
    tir, case, tensors = _floors(module, "08", "matmul_naive", "odd_127x129x131")
    assert floor_problems(tir, case.sizes, case.params, tensors) == []


@tilelang.jit
def _zero_block_grid(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), 127 // 128, threads=THREADS) as (bx, by):
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)
            T.gemm(A_tile, B_tile, acc)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
    return C


def test_a_zero_block_grid_is_a_sentence_before_anything_runs():
    kernel = _spec("08", "matmul_pipelined")
    tensors = kernel.inputs + kernel.outputs
    case = kernel.case("odd_127x129x131")  # BLOCK_M = 128
    tir = _zero_block_grid.get_tir(**case.sizes, **case.params)
    assert empty_launch(tir, case.sizes, case.params, tensors) == (
        "T.Kernel's second argument (`by`, blockIdx.y) is 0 for this case, so no block runs and nothing is "
        "written: it counts blocks of 128 along M = 127 (dimension 0 of C), and M // BLOCK_M rounds down to 0. "
        "Launch T.ceildiv(M, BLOCK_M) blocks"
    )
    # with another block size the literal 127 // 128 is still 0: the fix is said from the index's step
    params = {**case.params, "BLOCK_M": 64}
    tir = _zero_block_grid.get_tir(**case.sizes, **params)
    assert empty_launch(tir, case.sizes, params, tensors) == (
        "T.Kernel's second argument (`by`, blockIdx.y) is 0 for this case, so no block runs and nothing is "
        "written: its blocks step 64 along M = 127 (dimension 0 of C), so launch T.ceildiv(M, BLOCK_M) of them"
    )
