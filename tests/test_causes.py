"""Every verdict but a pass names its cause as a typed grader.outcome.Cause, read from the evidence (the
numbers' pattern, the TIR, the simulator, the build), never from the hint's text.

Graded in-process on the CPU (tests.inprocess.grade_simulated: trace, admit, simulate, compare): for each
cause kind reachable there, one known-wrong kernel of tests/wrong/ (or a one-line edit of a right kernel of
tests/right/, where the corpus has none) on the one case that shows it. What only the supervisor sees (a judge
that goes silent or dies) comes from tests.test_supervisor's stand-in judges.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import torch

from grader.discover import course_root
from grader.outcome import CaseResult, Cause, CauseKind, Status
from grader.pipeline.compare import compare
from grader.pipeline.hidden import public_view
from grader.processes import supervisor
from grader.processes.protocol import COMPILING, SIMULATING
from grader.spec import Tolerance
from tests.inprocess import grade_simulated
from tests.test_supervisor import dies, grading, silent_in
from tests.test_supervisor import graded as supervised

ROOT = course_root()

# (cause, file under tests/wrong/, kernel, case, facts the cause must hold)
WRONG = [
    (CauseKind.WRONG_VALUES, "p01/copy_serial_reads_thread_index", "copy_serial", "even_1024", {"most": False}),
    (CauseKind.UNWRITTEN, "p01/copy_tiles_tile_of_threads", "copy_tiles", "even_4096", {"count": 3072}),
    (CauseKind.ROUNDS_DOWN, "p01/copy_threads_grid_rounds_down", "copy_threads", "tail_1000", {}),
    (CauseKind.CONCEPT_MISS, "p01/copy_tiles_store_from_shared", "copy_tiles", "even_4096", {}),
    (CauseKind.CLAMP, "p02/mul_relu_on_inputs", "mul_relu", "even_4096", {"pattern": "cut", "bound": 0.0}),
    (CauseKind.CLAMP, "p02/mul_relu_no_relu", "mul_relu", "even_4096", {"pattern": "missing", "bound": 0.0}),
    (CauseKind.RACE, "p02/add_fragments_store_offset_unscaled", "add_fragments", "even_4096", {"buffer": "C"}),
    (CauseKind.BUILD_ERROR, "p02/mul_relu_python_max", "mul_relu", "even_4096", {}),
    (CauseKind.EMPTY_LAUNCH, "p03/outer_add_rows_rounded_down", "outer_add", "wide_7x5003", {}),
    (CauseKind.UNCOVERED_TAIL, "p03/outer_add_flat_grid_split_by_row_tiles", "outer_add", "odd_33x127", {}),
    (CauseKind.NEVER_INITIALIZED, "p04/mul_relu_backward_no_clear", "mul_relu_backward", "square_256", {}),
    (CauseKind.IMPRECISE, "p05/row_sum_tiled_fp16_accumulator", "row_sum_tiled", "square_256", {"output": "C"}),
    (CauseKind.ZEROS, "p05/row_sum_tiled_cursor_advanced_first", "row_sum_tiled", "short_rows_515x100", {}),
    (CauseKind.REDUCE_RESTART, "p05/row_sum_tiled_reduce_clears", "row_sum_tiled", "square_256", {}),
    (CauseKind.REPEATED_UPDATE, "p08/gemv_tile_sum_added_in_a_2d_parallel", "gemv", "rect_77x150", {}),
    (CauseKind.ADDED_NEVER_SET, "p05/row_sum_tiled_scalar_atomic_not_zeroed", "row_sum_tiled", "square_256", {}),
    (CauseKind.NOTHING_WRITTEN, "p06/softmax_online_cursor_not_rewound", "softmax_online", "square_256", {}),
    (CauseKind.FAULT, "p10/matmul_scale_per_tile", "dequant_matmul", "per_row_100x300x2048", {}),
    (CauseKind.NAN_SPREAD, "p03/outer_add_fragments_shared_one_past", "outer_add_fragments", "odd_33x127", {"nan": 33}),
    (CauseKind.TILE_STEP, "p08/gemv_tile_offsets_swapped", "gemv", "rect_77x150", {}),
    (CauseKind.TILE_STEP, "p08/matmul_pipelined_a_rows_step_block_k", "matmul_pipelined", "square_256", {}),
    (CauseKind.UNGUARDED_TAIL, "p08/matmul_tuned_store_offsets_swapped", "matmul_tuned", "rect_200x300x100", {}),
    (CauseKind.CORNER_COPY, "p09/channels_weights_by_corner", "conv1d_channels", "small_4to8_256_k3", {}),
    (CauseKind.MASK_OFFSET, "p07/flash_mask_without_tile_offset", "flash_attention", "rect_40x70x32", {}),
    (CauseKind.OVERWRITTEN, "p05/row_sum_tiled_assigns_partial", "row_sum_tiled", "square_256", {}),
    (CauseKind.LOOP_SHORT, "p08/matmul_cuda_cores_k_off_by_one", "matmul_cuda_cores", "rect_77x150x91", {}),
    (CauseKind.SHIFTED, "p10/unpack_no_zero_point", "dequantize_int4", "odd_37x128_g64", {"axis": 1, "run": 64}),
]

# Causes only the verdicts of earlier cases point to (grader.pipeline.across): the kernel's cases up to this one
ACROSS = [
    (CauseKind.LARGE_INPUTS, "p06/softmax_no_max", "softmax", ["square_256", "large_logits_64x256"], {"A": 100.0}),
    (CauseKind.SEVERAL_STEPS, "p07/flash_sum_not_rescaled", "flash_attention", ["few_keys_50x37", "rect_40x70x32"], {}),
]


def _wrong(name: str) -> Path:
    return ROOT / "tests" / "wrong" / f"{name}.py"


def _only_case(results: list[CaseResult], case: str) -> CaseResult:
    (result,) = [r for r in results if r.case == case]
    return result


@pytest.mark.parametrize(("kind", "name", "kernel", "case", "facts"), WRONG, ids=[f"{w[0]}-{w[1]}" for w in WRONG])
def test_a_wrong_kernel_names_its_cause(kind: CauseKind, name: str, kernel: str, case: str, facts: dict):
    result = _only_case(grade_simulated(name[1:3], _wrong(name), kernel, [case]), case)
    assert result.status in (Status.FAILED, Status.ERROR)
    assert result.cause is not None and result.cause.kind == kind, (result.cause, result.hint)
    assert facts.items() <= result.cause.facts.items()
    assert CaseResult.from_dict(json.loads(json.dumps(result.to_dict()))).cause == result.cause  # JSON as it is


@pytest.mark.parametrize(("kind", "name", "kernel", "cases", "scales"), ACROSS, ids=[f"{a[0]}-{a[1]}" for a in ACROSS])
def test_a_cause_seen_across_cases_is_named_on_the_failing_one(kind, name, kernel, cases, scales):
    results = grade_simulated(name[1:3], _wrong(name), kernel, cases)
    first, last = _only_case(results, cases[0]), _only_case(results, cases[-1])
    assert first.status == Status.PASSED and first.cause is None
    assert last.status == Status.FAILED and last.cause is not None and last.cause.kind == kind, last.cause
    assert last.cause.facts["passing"] == [cases[0]]
    if scales:
        assert last.cause.facts["scales"] == scales


def test_every_failing_result_of_a_wrong_kernel_has_a_cause():
    """All the simulated cases of a few wrong kernels, each failing on several of them for different reasons."""
    graded = {
        name: grade_simulated(name[1:3], _wrong(name), kernel)
        for name, kernel in (
            ("p03/outer_add_grid_rows_first", "outer_add"),  # unwritten elements, and a grid that rounds down
            ("p06/softmax_online_second_pass_unscaled", "softmax_online"),  # wrong values, zeros, an overflow
            ("p07/flash_fp16_accumulator", "flash_attention"),  # a concept missed, imprecise sums
        )
    }
    for name, results in graded.items():
        failing = [r for r in results if r.status != Status.PASSED]
        assert len({r.cause.kind for r in failing if r.cause}) >= 2, (name, [(r.case, r.cause) for r in failing])
        assert all(r.cause is not None for r in failing), [(r.case, r.status) for r in failing if r.cause is None]
        assert all(r.cause is None for r in results if r.status == Status.PASSED)
    overflow = _only_case(graded["p06/softmax_online_second_pass_unscaled"], "far_logits_64x3")
    assert overflow.cause == Cause(
        CauseKind.OVERFLOW, {"output": "C", "infinite": 12, "tiles": {"tile": [32, 64], "wrong": 2, "total": 2}}
    )


# ----------------------------------------------------------------- one-line edits of a right kernel

RIGHT_ADD = (ROOT / "tests" / "right" / "p02" / "add_fp32_sum.py").read_text()
GUARD = "            if i < N:\n"
STORE = "                C[i] = T.cast(T.cast(A[i], T.float32) + T.cast(B[i], T.float32), T.float16)\n"

EDITS = [
    # the guard stops one short: the last element is never written, inside a block that wrote the rest
    (CauseKind.UNWRITTEN_END, GUARD, "            if i < N - 1:\n", {"axis": 0, "count": 1, "in_tile": True}),
    # it stores into an input as well: the numbers are right
    (CauseKind.SIDE_EFFECT, STORE, STORE + "                A[i] = B[i]\n", {"inputs_written": 1}),
    (CauseKind.SIGNATURE, "    C = T.empty((N,), T.float16)\n", "    C = T.empty((N,), T.float32)\n", {}),
    (CauseKind.MISSING_KERNEL, "def add(", "def add_kernel(", {"renamed": "add_kernel"}),
    (CauseKind.NOT_A_KERNEL, "@tilelang.jit\n", "", {}),
    (CauseKind.REFUSED, GUARD, '            T.call_extern("int32", "host_function")\n' + GUARD, {}),
    (
        CauseKind.SHARED_MEMORY,
        "        for t in T.Parallel(BLOCK):\n",
        "        spare = T.alloc_shared((1 << 17,), T.float32)\n"
        "        T.clear(spare)\n"
        "        for t in T.Parallel(BLOCK):\n",
        {"needed": 1 << 19},
    ),
]


@pytest.mark.parametrize(("kind", "old", "new", "facts"), EDITS, ids=[str(e[0]) for e in EDITS])
def test_an_edited_right_kernel_names_its_cause(tmp_path: Path, kind: CauseKind, old: str, new: str, facts: dict):
    assert RIGHT_ADD.count(old) == 1
    edited = tmp_path / "add_edited.py"
    edited.write_text(RIGHT_ADD.replace(old, new))
    result = _only_case(grade_simulated("02", edited, "add", ["tail_1000"]), "tail_1000")
    assert result.status in (Status.FAILED, Status.ERROR)
    assert result.cause is not None and result.cause.kind == kind, (result.cause, result.message)
    assert facts.items() <= result.cause.facts.items()


def test_a_stub_a_case_too_large_to_simulate_and_a_right_kernel(tmp_path: Path):
    stub = grade_simulated("02", ROOT / "puzzles" / "p02_vector_add.py", "add", ["even_4096"])[0]
    assert stub.status == Status.NOT_IMPLEMENTED and stub.cause == Cause(CauseKind.NOT_IMPLEMENTED)
    right = tmp_path / "add.py"
    right.write_text(RIGHT_ADD)
    passed, large = grade_simulated("02", right, "add", ["even_4096", "tail_1000003"])
    assert passed.status == Status.PASSED and passed.cause is None
    assert large.status == Status.COMPILED and large.cause == Cause(CauseKind.COMPILE_ONLY, {"reason": "too_large"})


# ----------------------------------------------------------------- causes read from tensors alone


def test_the_numbers_patterns_no_kernel_of_the_course_reaches():
    tolerance = Tolerance(atol=1e-3, rtol=1e-3)
    shape = compare("C", torch.zeros(3), torch.ones(4, dtype=torch.float64), tolerance)
    assert shape.cause == Cause(CauseKind.WRONG_SHAPE, {"output": "C", "shape": [3], "expected": [4]})
    tiny = torch.full((8,), 1e-6, dtype=torch.float64)
    underflow = compare("C", torch.zeros(8, dtype=torch.float16), tiny, tolerance)
    assert underflow.cause is not None and underflow.cause.kind == CauseKind.UNDERFLOW
    assert underflow.cause.facts["largest"] == pytest.approx(1e-6)
    assert compare("C", torch.ones(8), torch.ones(8, dtype=torch.float64), tolerance).cause is None


def test_the_cause_travels_as_json_and_a_hidden_case_keeps_none_of_it():
    cause = Cause(CauseKind.RACE, {"buffer": "C", "element": [3], "first": [0], "second": [1]})
    result = CaseResult("02", "add", "hidden_1", Status.FAILED, {"N": 77}, "wrong", cause=cause)
    assert CaseResult.from_dict(result.to_dict()).cause == cause
    assert public_view(result).cause is None


@pytest.mark.parametrize(
    "status",
    [Status.FAILED, Status.ERROR, Status.NOT_IMPLEMENTED, Status.CRASHED, Status.TIMED_OUT, Status.NOT_RUN],
)
def test_every_way_a_learner_can_fail_a_hidden_case_reads_as_one(status):
    """A file can choose how it fails a hidden case from the case's real sizes (the tracer is given them): each
    choice it could make reads the same, FAILED, with no cause and no time, so one submission tells at most whether
    the case passed (the red team read M=777 from the status tags and the cause kinds)."""
    cause = Cause(CauseKind.BUILD_ERROR, {})
    result = CaseResult("08", "gemv", "hidden_1", status, {"M": 777}, "x", cause=cause, seconds=3.25)
    shown = public_view(result)
    assert (shown.status, shown.cause, shown.seconds, shown.sizes) == (Status.FAILED, None, 0.0, {})
    assert shown.message == "a hidden case did not pass (its sizes and numbers are not shown)"
    for kept in (Status.PASSED, Status.UNSUPPORTED, Status.COMPILED):
        assert public_view(dataclasses.replace(result, status=kept)).status == kept


# ----------------------------------------------------------------- what the supervisor sees of the judge


@pytest.mark.parametrize(
    ("phase", "cause"),
    [
        (SIMULATING, Cause(CauseKind.TIMED_OUT, {"phase": SIMULATING})),
        (COMPILING, Cause(CauseKind.TIMED_OUT, {"phase": COMPILING})),
        ("", Cause(CauseKind.TIMED_OUT, {"phase": ""})),
    ],
    ids=["simulating", "compiling", "no_phase"],
)
def test_a_silent_judge_times_out_in_the_phase_it_was_in(phase: str, cause: Cause):
    """Stand-in judges (tests.test_supervisor): the case in flight is timed out for what it was doing; where it
    is the learner's code that ran long, the rest of the kernel is not run."""
    results, _ = supervised(grading(silent_in(phase)))
    assert results[("add", "first")].cause == cause
    second = results[("add", "second")]
    assert second.cause == (None if phase == COMPILING else Cause(CauseKind.NOT_RUN)), second


def test_a_judge_that_dies_is_a_crash_and_costs_its_kernel(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(supervisor, "oom_kills", lambda: 7)
    results, _ = supervised(grading(dies(7)))
    assert results[("add", "first")].cause == Cause(CauseKind.CRASHED, {"where": "process"})
    assert results[("add", "second")].cause == Cause(CauseKind.NOT_RUN)
    assert results[("mul", "only")].cause is None
