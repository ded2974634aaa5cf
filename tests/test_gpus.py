"""The course on every GPU generation: profiles, per-profile block parameters, the fit of every case, and
the capability gate, on the CPU (``--arch`` compiles for a profile and simulates with its limits)."""

from __future__ import annotations

import functools
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from grader.course.fit import fits
from grader.devices import PROFILES, UnknownArch, profile_for_capability, profile_named
from grader.discover import course_root, load_module, load_puzzle, puzzle_files
from grader.spec import Case

ROOT = course_root()
SOLUTIONS = puzzle_files(ROOT / "solutions")
KIB = 1024


@pytest.mark.parametrize(
    ("text", "name"), [("sm_90a", "sm_90"), ("sm_90", "sm_90"), ("8.6", "sm_86"), ("80", "sm_80"), ("SM_75", "sm_75")]
)
def test_an_arch_names_its_profile(text, name):
    assert profile_named(text).name == name


def test_an_unknown_arch_lists_the_known_ones():
    with pytest.raises(UnknownArch, match="sm_75, sm_80, sm_86, sm_89, sm_90"):
        profile_named("sm_61")


@pytest.mark.parametrize(
    ("capability", "shared_kib", "params_of"),
    [
        ((12, 0), 99, "sm_89"),
        ((10, 0), 227, "sm_90"),
        ((8, 7), 163, "sm_86"),
        ((9, 0), 227, "sm_90"),
        ((7, 5), 64, "sm_75"),
    ],
)
def test_a_real_gpu_keeps_its_own_limits_and_takes_the_nearest_parameters(capability, shared_kib, params_of):
    profile = profile_for_capability(*capability, shared_kib * KIB, 99, "Some GPU")
    assert (profile.name, profile.shared_per_block, profile.sm_count, profile.boards) == (
        params_of,
        shared_kib * KIB,
        99,
        "Some GPU",
    )


def test_a_case_on_a_profile_overrides_only_block_parameters():
    case = Case(
        "c",
        {"M": 100},
        {"BLOCK": 128, "STAGES": 3},
        seed=7,
        for_gpus={"sm_86 sm_89": {"BLOCK": 64}, "sm_75": "needs Hopper's wgmma"},
    )
    assert case.on("sm_90") == case
    assert dict(case.on("sm_89").params) == {"BLOCK": 64, "STAGES": 3}
    assert case.on("sm_86").sizes == case.sizes and case.on("sm_86").seed == 7
    assert case.on("sm_75").unfit == "needs Hopper's wgmma"


@functools.cache
def _fits_everywhere():
    """Every reference case on every profile, traced once per distinct parameters (fits shares them): the fit
    check and the allocation tests below read it, in one worker (their xdist group), instead of tracing every
    case again per profile."""
    return fits(list(PROFILES.values()), ROOT / "solutions")


@pytest.mark.xdist_group("fit")
def test_every_case_fits_every_profile():
    """The CI fit check: every reference case, traced with each profile's parameters, asks for no more
    shared memory than that profile gives a block, and none is declared unfit."""
    rows = _fits_everywhere()
    assert len(rows) == len(PROFILES) * sum(
        len(k.cases) for p in SOLUTIONS.values() for k in load_puzzle(load_module(p)).kernels
    )
    over = [(r.profile, r.kernel, r.case, r.shared // KIB) for r in rows if not r.fits or r.unfit]
    assert over == []


def test_only_block_parameters_differ_between_profiles():
    for path in SOLUTIONS.values():
        puzzle = load_puzzle(_module(path))
        for name in PROFILES:
            for kernel, there in zip(puzzle.kernels, puzzle.on(name).kernels):
                for case, other in zip(kernel.cases, there.cases):
                    assert replace(other, params=case.params) == case, (name, kernel.function, case.name)
                    assert set(other.params) <= set(case.params) | set(_defaults(path, kernel.function))


@functools.cache
def _module(path):
    """Each solution loaded once: loading one builds every kernel's TIR (a tenth of a second each), and the
    test asks for a kernel's defaults once per case and profile."""
    return load_module(path)


def _defaults(path, function):
    import inspect

    return inspect.signature(getattr(_module(path), function).func).parameters


def _largest_per_kernel(profile):
    largest = {}
    for row in (row for row in _fits_everywhere() if row.profile == profile.name):
        if row.shared > largest.get((row.puzzle, row.kernel), (None, -1))[1]:
            largest[(row.puzzle, row.kernel)] = (row.case, row.shared)
    return {key: value for key, value in largest.items() if value[1] > 0}


def _allocated(tir, arch: str) -> int:
    """The dynamic shared memory TileLang's lowering for ``arch`` gives the traced kernel, in bytes."""
    import tilelang
    from tilelang import tvm

    target = {"kind": "cuda", "arch": arch}
    with tvm.target.Target(target):
        lowered = tilelang.lower(tir.without_attr("tilelang_out_idx"), target=target)
    return max(int(f.attrs.get("dyn_shared_memory_buf", 0) or 0) for _, f in lowered.device_mod.functions.items())


@pytest.mark.slow  # every kernel's largest case traced and lowered for the profile: a minute or two each
@pytest.mark.xdist_group("fit")
@pytest.mark.parametrize("name", sorted(PROFILES))
def test_the_count_is_what_tilelang_allocates_for_each_profile(name):
    """The fit check counts shared memory itself; TileLang's lowering for the profile's arch must agree
    on each kernel's largest case (where a wrong count would matter most)."""
    from grader.pipeline.trace import kernel_function, trace_tir

    profile = PROFILES[name]

    def allocated(key):
        puzzle_id, function = key
        module = _module(SOLUTIONS[puzzle_id])
        kernel = load_puzzle(module).on(name).kernel(function)
        case = kernel.case(largest[key][0])
        return _allocated(trace_tir(kernel_function(module, kernel), kernel, case, SOLUTIONS[puzzle_id]), profile.arch)

    largest = _largest_per_kernel(profile)
    # One thread: tracing in two at once hit CPython 3.11's "AST constructor recursion depth mismatch"
    # in CI (ast is not thread-safe there).
    with ThreadPoolExecutor(max_workers=1) as pool:
        counts = dict(zip(largest, pool.map(allocated, largest)))
    # Exact, or (Hopper, where TMA buffers sit on 1024-byte boundaries) at most the count rounded up to
    # a KiB: every limit is a whole number of KiB, so the count decides fit exactly either way.
    wrong = {
        key: (shared, counts[key])
        for key, (_, shared) in largest.items()
        if key not in OVERCOUNTED and not shared <= counts[key] <= -(-shared // KIB) * KIB
    }
    assert wrong == {}
    # Where the count is known to be high, it must never be low: a block it passes always launches.
    assert {
        key: (largest[key][1], counts[key]) for key in OVERCOUNTED if key in counts and counts[key] > largest[key][1]
    } == {}


# Kernels whose count is larger than TileLang's allocation, each with the reason; the list may only shrink.
# (matmul_streamk was here: at sizes with fewer tiles than SMS, waves == 0 and TileLang's Simplify drops
# `if step < waves * chunks:` (step < 0), so the whole tiles' staged C tile is never allocated: 144 KiB
# where 208 was counted at tail_1000 on sm_90. shared_memory_plan now drops such branches too.)
OVERCOUNTED: dict[tuple[str, str], str] = {}


def test_a_branch_that_never_runs_allocates_nothing():
    """matmul_streamk at tail_1000 has 32 tiles for 132 blocks, no full wave: the branch that stores a whole
    tile through C_tile is dead, TileLang allocates only the three stages of A_tile and B_tile, and the count
    agrees; at tail_3000x2504x1000 (one full wave) C_tile is allocated and counted."""
    from grader.pipeline.shared_memory import shared_memory_plan
    from grader.pipeline.trace import kernel_function, trace_tir

    module = load_module(SOLUTIONS["08"])
    kernel = load_puzzle(module).kernel("matmul_streamk")
    found = {}
    for name in ("tail_1000", "tail_3000x2504x1000"):
        tir = trace_tir(kernel_function(module, kernel), kernel, kernel.case(name), SOLUTIONS["08"])
        found[name] = (shared_memory_plan(tir).total // KIB, _allocated(tir, PROFILES["sm_90"].arch) // KIB)
    assert found == {"tail_1000": (144, 144), "tail_3000x2504x1000": (208, 208)}


# ------------------------------------------------------------------ end to end, as a learner runs it


def test_a_t4_grades_the_tuned_gemm_with_tiles_that_fit(warm_grade):
    run = warm_grade("08", "--solutions", "-k", "matmul_tuned", "--exact", "--arch", "sm_75")
    assert run.code == run.passed_code, run.out + run.err
    statuses = run.statuses("matmul_tuned")
    assert set(statuses.values()) == {"passed", "compiled"}, statuses
    assert "compiled for sm_75" in run.out


def test_fixed_stages_fit_hopper_and_fail_on_a_t4_with_the_reason(warm_grade):
    learner = str(ROOT / "tests" / "gpus" / "matmul_tuned_fixed_stages.py")
    hopper = warm_grade("08", "--file", learner, "-k", "matmul_tuned", "--exact", "--case", "square_256")
    assert hopper.code == 0, hopper.out + hopper.err
    t4 = warm_grade("08", "--file", learner, "-k", "matmul_tuned", "--exact", "--case", "square_256", "--arch", "sm_75")
    assert t4.code == 1
    (result,) = t4.results("matmul_tuned")
    assert result["status"] == "failed"
    assert "asks for 128 KiB of shared memory" in result["message"]
    assert "a block on sm_75 (T4, RTX 20xx) may use at most 64 KiB" in result["message"]


def test_a_case_no_parameters_fit_is_not_applicable_not_failed(warm_grade, tmp_path):
    # An instructor's hidden case with Hopper-sized tiles and no entry for smaller GPUs.
    hopper_tiles = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "STAGES": 3, "THREADS": 256}
    entry = {"puzzle": "08", "kernel": "matmul_pipelined", "sizes": {"M": 130, "N": 260, "K": 70}, "seed": 5}
    hidden = tmp_path / "hidden.json"
    hidden.write_text(json.dumps({"cases": [{**entry, "params": hopper_tiles, "simulate": True}]}))
    args = ("08", "--solutions", "-k", "matmul_pipelined", "--exact", "--case", "hidden_1", "--arch", "sm_86")
    run = warm_grade(*args, env={"TILELANG_COURSE_HIDDEN_CASES": str(hidden)})
    assert run.code == 0, run.out + run.err
    (result,) = run.results("matmul_pipelined")
    assert result["status"] == "not_applicable"
    assert "not applicable" in result["message"] and "144" not in result["message"]  # the sizes stay secret
    assert "N/A" in run.out
    # Given parameters for that GPU, the same case is graded there.
    small = {"sm_86": {"BLOCK_N": 128, "BLOCK_K": 32, "THREADS": 128}}
    hidden.write_text(json.dumps({"cases": [{**entry, "params": hopper_tiles, "simulate": True, "for_gpus": small}]}))
    run = warm_grade(*args, env={"TILELANG_COURSE_HIDDEN_CASES": str(hidden)})
    assert run.code == 0 and run.statuses("matmul_pipelined") == {"matmul_pipelined[hidden_1]": "passed"}, run.out


def test_an_arch_the_course_does_not_know_is_a_usage_error(warm_grade):
    run = warm_grade("01", "--solutions", "--arch", "sm_61")
    assert run.code != 0
    assert "the course has profiles for sm_75, sm_80, sm_86, sm_89, sm_90" in run.out + run.err


@pytest.mark.gpu
@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_86", "sm_89"])
def test_an_older_generations_lowering_runs_on_this_gpu(warm_grade, arch):
    import torch

    major, minor = torch.cuda.get_device_capability()
    if major * 10 + minor <= int(arch.removeprefix("sm_")):
        pytest.skip(f"this GPU is not newer than {arch}")
    run = warm_grade("08", "--solutions", "-k", "matmul_tuned", "--exact", "--case", "tail_1000", "--arch", arch)
    assert run.code == 0, run.out + run.err
    assert run.statuses("matmul_tuned") == {"matmul_tuned[tail_1000]": "passed"}
    assert f"running the {arch} lowering" in run.out
