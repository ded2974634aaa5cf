"""Inputs, poisoned and guarded outputs, side-effect checks: the run step on CPU tensors."""

import torch

from grader.pipeline.inputs import changed_inputs, make_inputs, poisoned_outputs, writes_outside
from grader.spec import Case, Kernel, Tensor

KERNEL = Kernel(
    function="k",
    title="",
    inputs=(Tensor("A", ("N",), "float16"), Tensor("Q", ("N",), "uint8", int_range=(0, 15))),
    outputs=(Tensor("C", ("M", "N"), "float32"),),
    reference=lambda a, q: a,
    baseline=lambda a, q: a,
    cases=(Case("c", {"M": 3, "N": 5}, {}, seed=7),),
)
CASE = KERNEL.cases[0]


def test_inputs_are_seeded_and_respect_ranges():
    first, again = make_inputs(KERNEL, CASE, "cpu"), make_inputs(KERNEL, CASE, "cpu")
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    assert not torch.equal(first[0], make_inputs(KERNEL, CASE, "cpu", seed_offset=1)[0])
    assert first[1].dtype == torch.uint8 and int(first[1].max()) <= 15


def test_outputs_start_as_nan_inside_guard_bands():
    (out,) = poisoned_outputs(KERNEL, CASE, "cpu")
    assert out.shape == (3, 5) and torch.isnan(out).all()
    assert writes_outside([out], ["C"]) == []
    out.fill_(1.0)  # writing the whole output is fine
    assert writes_outside([out], ["C"]) == []


def test_a_store_past_the_end_is_reported():
    (out,) = poisoned_outputs(KERNEL, CASE, "cpu")
    torch.as_strided(out, (out.numel() + 2,), (1,), out.storage_offset())[-2:] = 0.0  # two past the end
    (problem,) = writes_outside([out], ["C"])
    assert problem.startswith("wrote outside the output C: 2 element(s) after it")


def test_a_store_before_the_start_is_reported():
    (out,) = poisoned_outputs(KERNEL, CASE, "cpu")
    torch.as_strided(out, (1,), (1,), out.storage_offset() - 1).fill_(3.0)
    (problem,) = writes_outside([out], ["C"])
    assert "1 element(s) before it" in problem


def test_a_stray_nan_store_is_seen_too():
    (out,) = poisoned_outputs(KERNEL, CASE, "cpu")
    torch.as_strided(out, (out.numel() + 1,), (1,), out.storage_offset())[-1:] = float("nan")
    assert len(writes_outside([out], ["C"])) == 1


def test_modified_input_is_reported():
    inputs = make_inputs(KERNEL, CASE, "cpu")
    pristine = [x.clone() for x in inputs]
    inputs[0][2] = 0
    assert changed_inputs(pristine, inputs, ["A", "Q"]) == ["modified input A: the kernel must only read it"]


def test_an_illegal_instruction_in_a_warp_specialized_build_points_at_warp_specialization():
    """The crash conv1d_implicit's warp-specialized build gives on the H200 (scripts/p09/implicit_fault.py):
    the hint names the decorator that avoids it, and only where the build is warp-specialized."""
    from grader.pipeline.execute import WARP_SPECIALIZED_FAULT, crash_hint
    from grader.teaching.experiments import kernel_source
    from scripts.p09.implicit_variants import windows_only
    from solutions.p09_conv1d import conv1d_implicit

    sizes = dict(C_in=48, L=1024, C_out=64, K=5, BLOCK_O=32, BLOCK_L=64, BLOCK_C=16, STAGES=2)
    crash = "CUDA error: an illegal instruction was encountered"
    assert crash_hint(crash, kernel_source(windows_only, **sizes)) == WARP_SPECIALIZED_FAULT
    as_the_course_builds_it = kernel_source(conv1d_implicit, **sizes)  # the stub's decorator: no WS
    assert crash_hint(crash, as_the_course_builds_it).startswith("Look for an index past the end")
    assert crash_hint("CUDA error: an illegal memory access was encountered", "warpgroup_reg_alloc<240>") != (
        WARP_SPECIALIZED_FAULT
    )
