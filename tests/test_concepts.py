"""Concept checks: every reference kernel follows its puzzle's lesson; each kernel under tests/concept/
gets the numbers right the wrong way and fails with a sentence saying what the puzzle wants."""

from __future__ import annotations

import math

import pytest
import tilelang
import tilelang.language as T

from grader.concepts import Concept, Miss, staged_store, swizzled
from grader.discover import load_module, load_puzzle, puzzle_files
from grader.outcome import Status
from tests.conftest import ROOT
from tests.corpora import ConceptKernel, concept_kernels
from tests.inprocess import grade_simulated, spec

CONCEPT_KERNELS = concept_kernels(ROOT)


@pytest.mark.slow  # every case of every reference kernel traced: a minute and a half in CI
def test_every_reference_kernel_passes_its_concept_checks_in_every_case():
    for path in puzzle_files(ROOT / "solutions").values():
        module = load_module(path)
        for kernel in load_puzzle(module).kernels:
            for case in kernel.cases:
                tir = getattr(module, kernel.function).get_tir(**case.sizes, **case.params)
                missed = [sentence for concept in kernel.concepts if (sentence := concept.check(tir))]
                assert not missed, (path.name, kernel.function, case.name, missed)


def test_every_puzzle_with_concepts_has_a_kernel_that_breaks_them():
    covered = {(c.puzzle_id, k) for c in CONCEPT_KERNELS for k in c.kernels}
    for puzzle_id in puzzle_files(ROOT / "solutions"):
        declared = [k.function for k in spec(puzzle_id).kernels if k.concepts]
        if declared:
            assert any((puzzle_id, k) in covered for k in declared), (puzzle_id, declared)
    for c in CONCEPT_KERNELS:  # and each declaration names kernels whose puzzle checks a concept
        assert c.wants and c.kernels, c.path
        assert all(spec(c.puzzle_id).kernel(k).concepts for k in c.kernels), c.path


@pytest.mark.parametrize(
    ("concept", "kernel"),
    [(c, k) for c in CONCEPT_KERNELS for k in c.kernels],
    ids=lambda value: value.path.stem if isinstance(value, ConceptKernel) else value,
)
def test_right_numbers_the_wrong_way_fail_with_what_the_puzzle_wants(concept: ConceptKernel, kernel: str):
    # The concept is read from the TIR and the numbers must be right: the smallest simulated case shows both, in a
    # fraction of the first's time (a serial softmax took 23 s to simulate at 256 x 256, softmax's first case)
    smallest = min(
        (c for c in spec(concept.puzzle_id).kernel(kernel).cases if c.simulate),
        key=lambda c: math.prod(c.sizes.values()),
    )
    (result,) = grade_simulated(concept.puzzle_id, concept.path, kernel, [smallest.name])
    assert result.status == Status.FAILED, result
    # still a simulated case (its field, which the closing summary counts and the renderer says)
    assert result.checked == "simulated" and result.arch, result
    assert result.message.startswith("the numbers are right, but the puzzle wants "), result.message
    assert concept.wants in " ".join([result.message, *result.details]), (result.message, result.details)
    # and, read from the same TIR, what the kernel used instead
    assert concept.instead in " ".join([result.message, *result.details]), (result.message, result.details)


# Concept kernels whose check cannot name what the kernel did instead (the TIR shows nothing to name).
NOTHING_TO_NAME = {"p08_matmul_streamk_whole_last_wave"}


@pytest.mark.parametrize(
    ("concept", "kernel"),
    [(c, k) for c in CONCEPT_KERNELS for k in c.kernels if c.path.stem not in NOTHING_TO_NAME],
    ids=lambda value: value.path.stem if isinstance(value, ConceptKernel) else value,
)
def test_each_missed_concept_names_what_the_kernel_used_instead(concept: ConceptKernel, kernel: str):
    """Every sentence, not only the first: each missed concept of the kernel says "your kernel ..."."""
    module = load_module(concept.path)
    declared = spec(concept.puzzle_id).kernel(kernel)
    case = next(c for c in declared.cases if c.simulate)
    tir = getattr(module, kernel).get_tir(**case.sizes, **case.params)
    misses = [m for c in declared.concepts if (m := c.miss(tir))]
    assert misses, concept.path
    for miss in misses:
        assert miss.instead, (concept.path.stem, miss.wants)
        assert miss.sentence() == f"{miss.wants}; your kernel {miss.instead}"


def test_a_missed_concept_with_nothing_to_name_reads_as_before():
    assert Miss("the tile through a fragment").sentence() == "the tile through a fragment"
    assert Concept("wanted", lambda tir: False).check(None) == "wanted"
    assert Concept("wanted", lambda tir: True).check(None) is None


def test_every_rung_of_puzzle_08_checks_its_lesson_and_has_a_kernel_that_breaks_it():
    covered = {k for c in CONCEPT_KERNELS if c.puzzle_id == "08" for k in c.kernels}
    for kernel in spec("08").kernels:
        assert kernel.concepts, kernel.function
        assert kernel.function in covered, kernel.function


def test_matmul_tuned_as_plain_pipelined_misses_both_of_its_own_checks():
    (concept,) = [c for c in CONCEPT_KERNELS if c.path.stem == "p08_matmul_tuned_as_pipelined"]
    (result,) = grade_simulated("08", concept.path, "matmul_tuned", ["square_256"])
    assert result.status == Status.FAILED
    assert result.message == (
        "the numbers are right, but the puzzle wants the blocks launched in panels with "
        "T.use_swizzle(panel_size=PANEL), so neighbours share L2; your kernel launches its blocks in plain order "
        "(no T.use_swizzle)"
    )
    assert result.details == [
        "also: the puzzle wants the accumulator stored through a shared tile: T.copy(acc, C_tile), then "
        "T.copy(C_tile, C[...]); your kernel copies the accumulator acc straight into C with T.copy"
    ]


TUNED = {"M": 256, "N": 256, "K": 256, "BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "STAGES": 4, "PANEL": 10}


@tilelang.jit
def _swizzled_direct_store(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int, PANEL: int):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=256) as (bx, by):
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.use_swizzle(panel_size=PANEL)
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)
            T.gemm(A_tile, B_tile, acc)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
    return C


@tilelang.jit
def _staged_not_swizzled(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int, PANEL: int):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=256) as (bx, by):
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        C_tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)
            T.gemm(A_tile, B_tile, acc)
        T.copy(acc, C_tile)
        T.copy(C_tile, C[by * BLOCK_M, bx * BLOCK_N])
    return C


@tilelang.jit
def _shared_tile_not_from_the_accumulator(A, BLOCK_M: int, BLOCK_N: int):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=128) as (bx, by):
        tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        T.copy(A[by * BLOCK_M, bx * BLOCK_N], tile)
        T.copy(tile, C[by * BLOCK_M, bx * BLOCK_N])
    return C


def test_swizzle_and_staged_store_are_read_from_the_tir_one_at_a_time():
    swizzle, staged = swizzled("swizzle"), staged_store("staged")
    only_swizzled = _swizzled_direct_store.get_tir(**TUNED)
    assert swizzle.check(only_swizzled) is None
    assert staged.check(only_swizzled) == "staged; your kernel copies the accumulator acc straight into C with T.copy"
    only_staged = _staged_not_swizzled.get_tir(**TUNED)
    assert swizzle.check(only_staged) == "swizzle; your kernel launches its blocks in plain order (no T.use_swizzle)"
    assert staged.check(only_staged) is None
    # a shared tile on the way to C counts only when what goes into it is the T.gemm accumulator; with no
    # accumulator there is nothing to name
    no_gemm = _shared_tile_not_from_the_accumulator.get_tir(M=128, N=128, BLOCK_M=64, BLOCK_N=64)
    assert staged.check(no_gemm) == "staged"


def test_the_reference_matmul_tuned_has_both_in_its_tir():
    from solutions.p08_matrix import matmul_tuned

    case = spec("08").kernel("matmul_tuned").case("odd_127x129x131")
    tir = matmul_tuned.get_tir(**case.sizes, **case.params)
    assert swizzled("s").check(tir) is None and staged_store("t").check(tir) is None


def _streamk_tir(path):
    from grader.pipeline.trace import kernel_function, trace_tir
    from grader.trace.learner import load_learner

    kernel = spec("08").kernel("matmul_streamk")
    case = next(c for c in kernel.cases if c.simulate)
    module, problem, _ = load_learner(path)
    assert not problem, problem
    return trace_tir(kernel_function(module, kernel), kernel, case, path)


def test_streamk_fix_up_must_add_only_atomically_not_beside_one_atomic_add_of_zero():
    from grader.concepts import adds_only_atomically

    concept = adds_only_atomically("partial", "only atomic adds")
    assert concept.check(_streamk_tir(ROOT / "solutions" / "p08_matrix.py")) is None
    # T.copy read, add, T.copy store, plus one T.atomic_add of zero: a race between blocks
    racy = concept.miss(_streamk_tir(ROOT / "tests" / "wrong" / "p08" / "matmul_streamk_race_read_add_store.py"))
    assert racy is not None and "also stores into partial" in racy.sentence(), racy
    # a plain T.copy of each part, no atomic at all
    copied = concept.miss(_streamk_tir(ROOT / "tests" / "wrong" / "p08" / "matmul_streamk_copy_not_add.py"))
    assert copied is not None and copied.instead == "adds nothing into partial with T.atomic_add", copied
