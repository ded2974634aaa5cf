"""grader.pipeline.miscompiles: a clear TileLang's CUDA moves into a loop that the TIR clears before (issue 40, item
3), read from the generated code of real builds and from small pieces of CUDA written the way TileLang writes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.discover import load_module, load_puzzle, puzzle_files
from grader.pipeline.build import COMPILE_ONLY_TARGET, compile_tir
from grader.pipeline.miscompiles import MovedClear, generated_clears, moved_clears
from grader.pipeline.trace import jit_options, kernel_function, trace_tir
from tests.conftest import ROOT

WARP_SPECIALIZED = ROOT / "tests" / "wrong" / "p09" / "channels_last_taps_warp_specialized.py"
WARP_SPECIALIZATION_OFF = ROOT / "tests" / "right" / "p09" / "conv1d_channels_last_serial_taps.py"

# A consumer branch as TileLang 0.1.15 writes it for sm_90a: the vector clear's own loop, inside the tap loop.
MOVED = """
  for (int k = 0; k < 5; ++k) {
    __syncthreads();
    if (((int)threadIdx.x) < 128) {
      producer_phase_cnt[0] = (producer_phase_cnt[0] + 1);
    } else {
      #pragma unroll
      for (int i = 0; i < 4; ++i) {
        float broadcast_var = 0x0p+0f/*0.000000e+00*/;
        *(float4*)(acc + (i * 4)) = make_float4(broadcast_var, broadcast_var, broadcast_var, broadcast_var);
      }
      for (int cb_1 = 0; cb_1 < 3; ++cb_1) {
        S[0] = 0x0p+0f/*0.000000e+00*/;
        acc[0] = (acc[0] + S[0]);
      }
    }
  }
"""


def test_each_zero_store_is_read_with_the_loops_around_it_but_its_own():
    assert generated_clears(MOVED) == [("acc", ("k",)), ("S", ("k", "cb_1"))]
    once = "  for (int i = 0; i < 4; ++i) {\n    acc[i] = 0x0p+0f;\n  }\n"
    once += "  for (int k = 0; k < 5; ++k) {\n    x = 1;\n  }\n"
    assert generated_clears(once) == [("acc", ())]
    assert generated_clears("  acc[0] = (acc[0] + 0x0p+0f);\n  acc[1] = 1.0f;\n") == []


def _built(path: Path, case_name: str, puzzle: str = "09", kernel_name: str = "conv1d_channels_last"):
    solution = load_puzzle(load_module(puzzle_files(ROOT / "solutions")[puzzle]))
    kernel = solution.kernel(kernel_name)
    case = kernel.case(case_name)
    function = kernel_function(load_module(path), kernel)
    tir = trace_tir(function, kernel, case, path)
    options = jit_options(function)  # the decorator's pass configs, as the judge passes them on
    return tir, compile_tir(tir, COMPILE_ONLY_TARGET, path, kernel, options, runs=False).get_kernel_source()


def test_warp_specialization_moving_the_accumulators_clear_into_the_tap_loop_is_found():
    tir, cuda = _built(WARP_SPECIALIZED, "rect_40to72_150_k5")
    assert "producer_phase_cnt" in cuda  # TileLang did specialize it
    (moved,) = moved_clears(tir, cuda)
    assert moved == MovedClear("acc", "k", warp_specialized=True)
    assert "`acc` on every step of the loop over `k`" in moved.sentence()
    assert "TL_DISABLE_WARP_SPECIALIZED" in moved.sentence()


@pytest.mark.parametrize(
    ("path", "case"),
    [
        (WARP_SPECIALIZATION_OFF, "rect_40to72_150_k5"),  # the same loops, warp specialization off: passes on the GPU
        (WARP_SPECIALIZED, "small_20to24_300_k3"),  # rows of 40 bytes: no TMA, no specialization, and it passes there
    ],
)
def test_a_build_that_clears_where_the_code_does_is_left_alone(path: Path, case: str):
    assert moved_clears(*_built(path, case)) == []


def test_a_clear_written_inside_the_loop_is_the_learners_own():
    """08's flash attention clears its scores inside the key loop, as written: nothing moved."""
    tir, cuda = _built(ROOT / "solutions" / "p08_matrix.py", "heads_2x100x37", "08", "flash_attention_tensor_cores")
    assert any(loops for _, loops in generated_clears(cuda))  # a clear inside a loop is there
    assert moved_clears(tir, cuda) == []


def test_the_simulator_runs_what_the_generated_code_does_and_gets_the_gpus_verdicts():
    """On the H100 (docs/results/data/h100-2026-12-06-tenth/item3-verdicts.txt) the kernel fails rect_40to72_150_k5
    alone of its simulated cases: the others' copies are not TMA loads, and their build is not specialized."""
    from tests.inprocess import grade_simulated

    graded = {r.case: r for r in grade_simulated("09", WARP_SPECIALIZED, "conv1d_channels_last", compile_cuda=True)}
    assert {case: r.status for case, r in graded.items()} == {
        "small_20to24_300_k3": "passed",
        "pointwise_24to40_150_k1": "passed",
        "odd_3to5_37_k9": "passed",
        "rect_40to72_150_k5": "failed",
        "deep_300to32_130_k7": "passed",
    }
    failed = graded["rect_40to72_150_k5"]
    assert failed.cause.kind == "miscompiled" and failed.cause.facts == {
        "buffer": "acc",
        "loop": "k",
        "construct": "moved_clear",
    }
    assert failed.wrong and failed.wrong > 10000  # the numbers, not a flag: nearly every element, as on the GPU
    assert failed.details[0] == MovedClear("acc", "k", warp_specialized=True).sentence()
    assert failed.hint == ""  # no generic guess at the learner's formula beside TileLang's miscompile
    # as written (the clear before the tap loop), every case passes: the verdict comes from the generated code
    as_written = grade_simulated("09", WARP_SPECIALIZED, "conv1d_channels_last")
    assert {r.status for r in as_written} == {"passed"}


@pytest.mark.gpu
def test_on_the_gpu_the_same_cases_fail_and_name_the_construct(warm_grade):
    """Every case, the large ones included (on the H100: rect, tail and large fail, the copies of the others are not
    TMA loads); each failure says what TileLang did, read from the CUDA that ran."""
    run = warm_grade("09", "--file", str(WARP_SPECIALIZED), "-k", "conv1d_channels_last", "--exact", "--device", "cuda")
    results = {r["case"]: r for r in run.results("conv1d_channels_last")}
    failed = sorted(case for case, r in results.items() if r["status"] == "failed")
    assert failed == ["large_256_131072_k5", "rect_40to72_150_k5", "tail_40to72_1000_k5"], results
    assert all(results[case]["cause"]["kind"] == "miscompiled" for case in failed)
