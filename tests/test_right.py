"""False alarms: every kernel under tests/right/pNN/ is correct, written the way some learner might
write it (another loop order, exp instead of exp2, a T.macro, clear=True on the first tile, ...),
and must pass every simulated case of its kernel.

The complement of tests/wrong/. Each file declares, as module-level strings, the kernel it is about
(KERNEL) and, only while the simulator wrongly fails it, SIMULATOR_FALSE_ALARM: the construct that
triggers the false alarm. Such a variant is an expected failure (strict), so the fix shows.
"""

from __future__ import annotations

import os
from functools import cache

import pytest

from grader.discover import load_module, puzzle_files
from grader.outcome import Status
from tests.conftest import ROOT
from tests.corpora import RightKernel, right_kernels
from tests.inprocess import grade_simulated
from tests.inprocess import spec as load_spec

MIN_VARIANTS = 3

# Cases skipped unless RIGHT_ALL_CASES=1, to keep this file's CI time reasonable: (variant's file
# stem, case). Never a whole variant: every variant keeps its other simulated cases here.
SLOW_CASES: set[tuple[str, str]] = set()
ALL_CASES = bool(os.environ.get("RIGHT_ALL_CASES"))


RIGHT_KERNELS = right_kernels(ROOT)


@cache
def spec(puzzle_id: str):
    """The puzzle's cases and kernels, loaded from solutions/ once per test session."""
    return load_spec(puzzle_id)


def _simulated_cases(variant: RightKernel) -> list[str]:
    return [c.name for c in spec(variant.puzzle_id).kernel(variant.kernel).cases if c.simulate]


def _params() -> list:
    params = []
    for variant in RIGHT_KERNELS:
        for case in _simulated_cases(variant):
            marks = []
            if (variant.path.stem, case) in SLOW_CASES and not ALL_CASES:
                marks.append(pytest.mark.skip(reason="a slow case of this variant: RIGHT_ALL_CASES=1 runs it"))
            if variant.false_alarm:
                marks.append(pytest.mark.xfail(reason=variant.false_alarm, strict=True))
            name = f"p{variant.puzzle_id}/{variant.path.stem}-{case}"
            params.append(pytest.param(variant, case, marks=marks, id=name))
    return params


def test_every_file_declares_a_kernel_of_its_puzzle():
    assert RIGHT_KERNELS
    for variant in RIGHT_KERNELS:
        names = [k.function for k in spec(variant.puzzle_id).kernels]
        assert variant.kernel in names, (variant.path, variant.kernel, names)
        text = variant.path.read_text()
        assert text.startswith('"""'), f"{variant.path}: a docstring saying what is different comes first"
        assert text.count("@tilelang.jit") == 1, f"{variant.path}: one kernel per file"


# Kernels whose right variants are still to be written, each with the reason; the list may only shrink.
NOT_YET: dict[tuple[str, str], str] = {}


def test_every_kernel_of_every_puzzle_has_enough_right_variants():
    counts = {(v.puzzle_id, v.kernel): 0 for v in RIGHT_KERNELS}
    for variant in RIGHT_KERNELS:
        counts[(variant.puzzle_id, variant.kernel)] += 1
    missing = [
        (puzzle_id, kernel.function, counts.get((puzzle_id, kernel.function), 0))
        for puzzle_id in puzzle_files(ROOT / "solutions")
        for kernel in spec(puzzle_id).kernels
        if counts.get((puzzle_id, kernel.function), 0) < MIN_VARIANTS and (puzzle_id, kernel.function) not in NOT_YET
    ]
    assert not missing, f"kernels with fewer than {MIN_VARIANTS} right variants (puzzle, kernel, count): {missing}"


@pytest.mark.parametrize("variant", RIGHT_KERNELS, ids=lambda v: f"p{v.puzzle_id}/{v.path.stem}")
def test_right_kernel_fits_a_hopper_block_in_every_case(variant: RightKernel):
    """The large cases run only on a GPU, but whether a block fits is read from the TIR: a right kernel
    must fit the H200's 227 KiB in every case (one did not, which only the GPU run showed)."""
    from grader.pipeline.shared_memory import SHARED_LIMIT, shared_memory_plan
    from grader.pipeline.trace import kernel_function, trace_tir
    from grader.trace.learner import load_learner

    module, problem, _ = load_learner(variant.path)
    assert not problem, problem
    kernel = spec(variant.puzzle_id).kernel(variant.kernel)
    for case in kernel.cases:
        if case.simulate:
            continue  # test_right_kernel_passes_in_simulation checks these
        plan = shared_memory_plan(trace_tir(kernel_function(module, kernel), kernel, case, variant.path))
        assert plan.total <= SHARED_LIMIT, f"{case.name}: {plan.too_much()}"


@pytest.mark.parametrize(("variant", "case"), _params())
def test_right_kernel_passes_in_simulation(variant: RightKernel, case: str):
    (result,) = grade_simulated(variant.puzzle_id, variant.path, variant.kernel, [case])
    assert result.status == Status.PASSED, "\n".join(
        [f"{variant.path.name} [{case}]: {result.status}: {result.message}", *result.details]
    )


def _gpu_params() -> list:
    return [
        pytest.param(
            variant,
            id=f"p{variant.puzzle_id}/{variant.path.stem}",
            marks=[
                *([pytest.mark.xfail(reason=variant.miscompiled, strict=True)] if variant.miscompiled else []),
                # the heads_32x16384_d64 case's torch reference holds about 64 GiB: one such grading at a time
                *([pytest.mark.xdist_group("gpu-memory")] if variant.kernel == "flash_attention_tensor_cores" else []),
            ],
        )
        for variant in RIGHT_KERNELS
    ]


def test_the_streamk_segment_loop_is_still_miscompiled_by_tilelangs_warp_specialization():
    """The evidence behind matmul_streamk_segments_per_tile's TILELANG_MISCOMPILES, without a GPU: in
    the CUDA for sm_90a, the accumulator is zeroed inside the chunk loop, right before the consumer's
    wait and its wgmma, not once before the loop as the kernel says. When a TileLang bump fixes this,
    this test fails: drop the declaration (the GPU test then must pass)."""
    from grader.teaching.experiments import kernel_source

    (variant,) = [v for v in RIGHT_KERNELS if v.path.stem == "matmul_streamk_segments_per_tile"]
    case = spec("08").kernel("matmul_streamk").case("square_256")
    cuda = kernel_source(load_module(variant.path).matmul_streamk, **case.sizes, **case.params)
    chunk_loop = cuda[cuda.index("for (int j = 0;") :]
    consumer = chunk_loop[chunk_loop.index("} else {") : chunk_loop.index("wgmma_ss")]
    assert "make_float4(broadcast_var" in consumer  # acc = 0, in the consumer, once per chunk
    # The CPU reads that from the CUDA and simulates it (grader.pipeline.miscompiles): its verdicts on the
    # simulated cases are the GPU's (on an H100, 2026-12-06: docs/results/data/h100-2026-12-06-tenth/
    # corpora-summary.tsv), square_256's whole tiles of several chunks failing, few_tiles_256's shares passing.
    both = ["square_256", "few_tiles_256"]  # one of each (the other two simulated cases pass on both devices)
    graded = grade_simulated("08", variant.path, "matmul_streamk", both, compile_cuda=True)
    assert {r.case: r.status for r in graded} == {"square_256": Status.FAILED, "few_tiles_256": Status.PASSED}
    assert graded[0].cause.kind == "miscompiled" and graded[0].cause.facts["loop"] == "j", graded[0].cause


@pytest.mark.gpu
@pytest.mark.parametrize("variant", _gpu_params())
def test_right_kernel_passes_every_case_on_the_gpu(warm_grade, variant: RightKernel):
    """Through the grader as a learner runs it (warm, as a notebook checks): every case, the large ones included."""
    run = warm_grade(
        variant.puzzle_id, "--file", str(variant.path), "-k", variant.kernel, "--exact", "--device", "cuda"
    )
    results = run.results(variant.kernel)
    assert results and run.code == 0, "\n".join(f"{r['case']}: {r['status']}: {r['message']}" for r in results)
    assert all(r["status"] == Status.PASSED for r in results)


def test_a_window_start_kept_in_a_local_buffer_is_guarded_by_tilelang():
    """The evidence behind the simulator zero-filling the halo of conv1d_naive_tap_macro_grid_second_axis
    (issue 25, item 1): its window start is a load from a T.alloc_local, so TileLang cannot fold it and its
    CUDA for sm_90a tests the start against 0 before each read of X. The simulator must then read zeros
    there, not the end of X, as it once did (this variant and the T.alloc_var ones failed every case)."""
    from grader.teaching.experiments import kernel_source

    (variant,) = [v for v in RIGHT_KERNELS if v.path.stem == "conv1d_naive_tap_macro_grid_second_axis"]
    case = spec("09").kernel("conv1d_naive").case("short_37_k31")
    cuda = kernel_source(load_module(variant.path).conv1d_naive, **case.sizes, **case.params)
    assert "0 <= (first[0] + " in cuda
    (result,) = grade_simulated("09", variant.path, "conv1d_naive", ["short_37_k31"])
    assert result.status == Status.PASSED, result.message
