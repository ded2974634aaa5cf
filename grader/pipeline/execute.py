"""Steps 4 and 5, run or simulate, then compare: one case on this machine's backend, checked against torch.

Both backends do the same thing in the same order: draw the case's inputs, poison its outputs, run the
kernel (on the GPU, or tile by tile on the CPU simulator), fail it for anything it wrote that it must not,
and compare every output with the float64 reference (grader.pipeline.compare).
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader import verified
from grader.outcome import CaseResult, Cause, CauseKind, Status
from grader.pipeline.context import Context, result_for
from grader.pipeline.miscompiles import as_generated, moved_clears
from grader.spec import Case, Kernel

WARP_SPECIALIZED_FAULT = (
    "An illegal instruction in a warp-specialized build (a producer warpgroup issuing TMA copies): "
    "TileLang 0.1.15 builds some correct kernels this way that fault on Hopper, puzzle 09's convolutions "
    "among them. Compile it with warp specialization off, as the stubs of 09's first four kernels do: "
    "@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})."
)


# Build options the simulator does not model, since they change float arithmetic on the GPU: flush-to-zero of
# subnormals (--use_fast_math and tl.enable_fast_math imply it), approximate division and square roots, and no
# contraction of multiplies and adds (--fmad=false: the simulator rounds a 16-bit x * y + c once, as the fused
# multiply-add nvcc forms by default; tests/attacks/fmad_off.py stored its sums only where that mattered). A kernel
# built with -ftz=true that scales its sums by 2^-130 and back stores them in the simulator and zeros on the GPU,
# where the subnormal is flushed (tests/attacks/flush_to_zero.py): its simulated cases cannot vouch for it.
FLOAT_FLAGS = frozenset(
    f"{dash}{flag}"
    for dash in ("-", "--")
    for flag in ("use_fast_math", "ftz=true", "prec-div=false", "prec-sqrt=false", "fmad=false")
)
FLOAT_PASS_CONFIGS = frozenset({"tl.enable_fast_math"})


def unmodelled_float_options(compiled: Any) -> list[str]:
    """The options ``compiled`` (a TileLang JITKernel) was built with that change float arithmetic (FLOAT_FLAGS)."""
    flags = getattr(compiled, "compile_flags", None) or []
    configs = getattr(compiled, "pass_configs", None) or {}
    found = [flag for flag in ([flags] if isinstance(flags, str) else flags) if flag in FLOAT_FLAGS]
    found += [str(getattr(key, "value", key)) for key, on in dict(configs).items() if on]
    return [option for option in found if option in FLOAT_FLAGS or option in FLOAT_PASS_CONFIGS]


@dataclass
class Ran:
    """What running a case left: its verdict when the run itself failed, else the outputs' side effects."""

    failed: CaseResult | None = None
    side_effects: tuple[str, ...] = ()


class Gpu:
    """The case's compiled kernel, launched on this machine's GPU."""

    where = "cuda"
    checked = verified.GPU

    def run(self, ctx: Context, kernel: Kernel, case: Case, tir: Any, compiled: Any, tensors: list, outs: list) -> Ran:
        from grader.pipeline.build import summarize
        from grader.pipeline.inputs import launch, writes_outside

        try:
            launch(compiled, tensors, outs)
        except Exception as error:  # an illegal address or a launch failure: the kernel's verdict
            message = f"the kernel crashed on the GPU: {summarize(error)}"
            hint = crash_hint(str(error), kernel_source(compiled))
            cause = Cause(CauseKind.CRASHED, {"where": "gpu", "warp_specialized": hint == WARP_SPECIALIZED_FAULT})
            trace = traceback.format_exc()
            return Ran(result_for(ctx, kernel, case, Status.CRASHED, message, hint=hint, trace=trace, cause=cause))
        return Ran(side_effects=tuple(writes_outside(outs, [t.name for t in kernel.outputs])))


class Simulator:
    """The case's admitted TIR, run tile by tile on the CPU (grader.pipeline.simulate). The compiled kernel
    is the evidence for how the GPU would store (TMA stores write whole 16-byte units at a tail)."""

    where = "cpu"
    checked = verified.SIMULATED

    def run(
        self,
        ctx: Context,
        kernel: Kernel,
        case: Case,
        tir: Any,
        compiled: Any,
        tensors: list,
        outs: list,
        contract: bool = False,
        approximate: int | None = None,
    ) -> Ran:
        """``contract``, ``approximate``: the second run of a kernel with a float multiply-add, or a math function the
        GPU approximates (contracted_differently)."""
        from grader.pipeline.simulate import SimulationError, Unsupported, simulate

        named = {t.name: x for t, x in zip(kernel.inputs + kernel.outputs, tensors + outs)}
        try:
            options = unmodelled_float_options(compiled)
            if options:
                raise Unsupported(f"the build option {options[0]}, which changes float arithmetic on the GPU")
            simulate(
                tir,
                named,
                ctx.device.profile,
                tma_stores="tl::tma_store(" in kernel_source(compiled),
                reverse_blocks=reversed_blocks(kernel, case),
                contract=contract,
                approximate=approximate,
            )
        except SimulationError as error:
            return Ran(result_for(ctx, kernel, case, Status.FAILED, str(error), cause=simulation_cause(error)))
        except Unsupported as error:
            message = f"the CPU simulator does not support {error}; run on a GPU to check the numbers"
            cause = Cause(CauseKind.UNSUPPORTED)
            unsupported = result_for(ctx, kernel, case, Status.UNSUPPORTED, message, cause=cause)
            unsupported.checked = verified.COMPILED  # built; its numbers unchecked
            return Ran(unsupported)
        return Ran()


CONTRACTED = (
    "a float multiply-add that nvcc may contract into one fused multiply-add (the case passes with a product rounded "
    "before it is added, and not with the two rounded once)"
)


def multiply_adds(tir: Any) -> bool:
    """Whether ``tir`` multiplies and adds (or subtracts) values of one float type nvcc contracts (float32, float16,
    bfloat16) into one fused multiply-add: the product straight into the add, or through a variable or a register
    buffer (a local, local.var or fragment)."""
    from tilelang import tvm

    from grader.pipeline.simulate.values import CONTRACTED_TYPES

    t, kinds = tvm.tirx, set()

    def visit(node: Any) -> None:
        if isinstance(node, (t.Mul, t.Add, t.Sub)) and str(node.dtype) in CONTRACTED_TYPES:
            kinds.add((str(node.dtype), isinstance(node, t.Mul)))

    t.stmt_functor.post_order_visit(tir.body, visit)
    return any((dtype, True) in kinds and (dtype, False) in kinds for dtype, _ in kinds)


APPROXIMATED = (
    "a math function the GPU computes approximately, within a few ulps of the exact value and not with torch's bits "
    "(T.exp, T.exp2, T.log, T.log2, T.rsqrt, T.tanh, T.sigmoid, T.pow; in float16 and bfloat16 T.sqrt and division "
    "too): the case passes with torch's results and not with them moved by those few ulps"
)


def approximates(tir: Any) -> bool:
    """Whether ``tir`` calls a math function, or divides in a 16-bit float, that the GPU computes to within a few ulps
    and not correctly rounded (values.approximate_ulps): its results need not be torch's bits."""
    from tilelang import tvm

    from grader.pipeline.simulate.values import approximate_ulps

    t, found = tvm.tirx, []

    def visit(node: Any) -> None:
        if isinstance(node, t.Call) and hasattr(node.op, "name"):
            found.append(approximate_ulps(str(node.op.name), str(node.dtype)) > 0)
        elif isinstance(node, t.Div):
            found.append(approximate_ulps("tirx.Div", str(node.dtype)) > 0)

    t.stmt_functor.post_order_visit(tir.body, visit)
    return any(found)


def contracted_differently(
    ctx: Context, kernel: Kernel, case: Case, tir: Any, compiled: Any, inputs: list, expected: list
) -> CaseResult | None:
    """A passing simulated case of a kernel with a float multiply-add, or with a math function the GPU approximates, run
    again as the GPU may compute it; where that run does not pass too, the case gets no CPU verdict (the result
    returned); None where it passes.

    A multiply-add is rounded once there (the simulator's ``contract``): nvcc writes `fma.rn.f32` for `acc * 1.1 + p`
    into the PTX itself, where the first run rounded twice, so a gemv that stored its sums only where that was 0
    passed here and stored zeros on the GPU (tests/attacks/fp32_fma.py). Whether nvcc contracts one depends on what
    else it rewrites. A math function's result is moved by the few ulps the GPU's may differ by (``approximate``): a
    gemv that stored its sums only where T.rsqrt(x) == 1 / T.sqrt(x) passed with torch's bits, and the GPU's
    rsqrt.approx.f32 stores zeros (tests/attacks/approximate_rsqrt.py). Where a kernel has both and the run fails,
    a third run with the approximations alone names the cause."""
    contract, approximate = multiply_adds(tir), approximates(tir)
    if not contract and not approximate:
        return None
    key = int.from_bytes(os.urandom(4), "little")  # which way each result moves: not a constant a kernel can know
    if passes_again(ctx, kernel, case, tir, compiled, inputs, expected, contract, key if approximate else None):
        return None
    cause = CONTRACTED if contract else APPROXIMATED
    if contract and approximate and not passes_again(ctx, kernel, case, tir, compiled, inputs, expected, False, key):
        cause = APPROXIMATED
    message = f"the CPU simulator does not support {cause}; run on a GPU to check the numbers"
    result = result_for(ctx, kernel, case, Status.UNSUPPORTED, message, cause=Cause(CauseKind.UNSUPPORTED))
    result.checked = verified.COMPILED  # built; its numbers unchecked
    return result


def passes_again(
    ctx: Context,
    kernel: Kernel,
    case: Case,
    tir: Any,
    compiled: Any,
    inputs: list,
    expected: list,
    contract: bool,
    approximate: int | None,
) -> bool:
    """Whether the case passes simulated again on fresh copies of ``inputs``, in the simulator's ``contract`` and
    ``approximate`` modes."""
    from grader.pipeline.inputs import poisoned_outputs

    outputs = poisoned_outputs(kernel, case, "cpu")
    fresh = [x.clone() for x in inputs]
    ran = Simulator().run(ctx, kernel, case, tir, compiled, fresh, outputs, contract=contract, approximate=approximate)
    return ran.failed is None and compare_outputs(ctx, kernel, case, expected, outputs).status == Status.PASSED


def simulation_cause(error: Any) -> Cause:
    """The cause of a simulator's SimulationError: a race between blocks (its Race's facts), else a fault."""
    race = error.race
    if race is None:
        return Cause(CauseKind.FAULT, {"line": error.line})
    return Cause(
        CauseKind.RACE,
        {
            "buffer": race.buffer,
            "element": [int(i) for i in race.element],
            "first": [int(i) for i in race.first],
            "did_first": race.did_first,
            "second": [int(i) for i in race.second],
            "did_second": race.did_second,
        },
    )


def backend_for(ctx: Context) -> Gpu | Simulator:
    return Gpu() if ctx.device.mode == "cuda" else Simulator()


def execute_and_compare(ctx: Context, kernel: Kernel, case: Case, tir: Any, compiled: Any) -> CaseResult:
    """Run the case on this machine's backend and fold every output's comparison into one verdict."""
    from grader.pipeline.inputs import changed_inputs, make_inputs, poisoned_outputs, reference_outputs

    backend = backend_for(ctx)
    # Where TileLang's CUDA does otherwise than the TIR, the simulator runs the TIR rewritten to do what the GPU will
    moved = moved_clears(tir, kernel_source(compiled))
    if moved and isinstance(backend, Simulator):
        tir = as_generated(tir, moved)
    inputs = make_inputs(kernel, case, backend.where, ctx.seed_offset + ctx.draw)
    # Everything the verdict is computed from is made before the launch and kept in host memory: a kernel can
    # write past its own buffers on the GPU, and a copy of B kept there, or a reference computed after the launch,
    # could be zeroed with B so that A @ 0 agrees with zeros (tests/attacks/zero_the_reference.py).
    expected = [want.to("cpu") for want in reference_outputs(kernel, inputs)]
    pristine = [x.to("cpu", copy=True) for x in inputs]
    outputs = poisoned_outputs(kernel, case, backend.where)
    ran = backend.run(ctx, kernel, case, tir, compiled, inputs, outputs)
    if ran.failed is not None:
        ran.failed.checked = ran.failed.checked or backend.checked
        return ran.failed
    result = compare_outputs(ctx, kernel, case, expected, outputs)
    modified = changed_inputs(pristine, [x.to("cpu") for x in inputs], [t.name for t in kernel.inputs])
    result = with_side_effects(result, modified + list(ran.side_effects), len(modified))
    if result.status == Status.PASSED and isinstance(backend, Simulator):
        again = contracted_differently(ctx, kernel, case, tir, compiled, pristine, expected)
        if again is not None:
            return again
    result.checked = backend.checked
    if moved and result.status == Status.FAILED:  # on either device, the likely cause is TileLang's, and named
        facts = {"buffer": moved[0].buffer, "loop": moved[0].loop, "construct": "moved_clear"}
        result.cause = Cause(CauseKind.MISCOMPILED, facts)
        result.details = [moved[0].sentence(), *result.details]
        result.hint = ""  # the comparison's guess ("check the formula ...") would point at code that is right
    return keep_failure(ctx, kernel, case, result, pristine, expected, outputs)


def compare_outputs(ctx: Context, kernel: Kernel, case: Case, expected: list, outputs: list) -> CaseResult:
    """Compare every output with its float64 reference (computed before the launch) into one result."""
    from grader.pipeline.compare import compare
    from grader.pipeline.inputs import unwritten

    details: list[str] = []
    hint = ""
    cause = None
    tile_map = None
    wrong = total = 0
    max_abs = max_rel = 0.0
    for spec, got, want in zip(kernel.outputs, outputs, expected):
        tile = kernel.tile_sizes(spec.name, case.params)
        verdict = compare(
            spec.name, got, want.to(got.device), kernel.tolerance_for(spec.dtype), tile, never_written=unwritten(got)
        )
        wrong += verdict.wrong
        total += verdict.total
        max_abs, max_rel = max(max_abs, verdict.max_abs_error), max(max_rel, verdict.max_rel_error)
        details += verdict.details
        if not hint:
            hint, cause = verdict.hint, verdict.cause
        if tile_map is None and verdict.tile_map is not None:
            tile_map = {"output": spec.name, **verdict.tile_map}
    status = Status.PASSED if wrong == 0 else Status.FAILED
    message = f"max abs err {max_abs:.3g}" if wrong == 0 else f"{wrong} of {total} output elements wrong"
    return result_for(
        ctx,
        kernel,
        case,
        status,
        message,
        details=details,
        hint=hint,
        cause=cause,
        max_abs_error=max_abs,
        max_rel_error=max_rel,
        wrong=wrong,
        total=total,
        tile_map=tile_map,
    )


def reversed_blocks(kernel: Kernel, case: Case) -> bool:
    """Every other case runs its blocks last to first, so a result that depends on their order cannot
    pass every case (races the simulator names are caught in either order)."""
    names = [c.name for c in kernel.cases]
    return case.name in names and names.index(case.name) % 2 == 1


def kernel_source(compiled: Any) -> str:
    """The CUDA TileLang generated for a compiled kernel, or "" where there is none to read."""
    try:
        return str(compiled.get_kernel_source()) if compiled is not None else ""
    except Exception:  # a build that kept no source: the simulator assumes plain stores, a hint says less
        return ""


def with_side_effects(result: CaseResult, side_effects: list[str], inputs_written: int = 0) -> CaseResult:
    """Fail a result whose kernel wrote to an input or outside an output, saying so first. ``inputs_written``:
    how many of ``side_effects`` (the first ones) are inputs written to; the others are stores past an output."""
    if not side_effects:
        return result
    result.status = Status.FAILED
    result.message = side_effects[0] if result.wrong == 0 else f"{result.message}; {side_effects[0]}"
    result.details = side_effects + result.details
    result.hint = result.hint or (
        "A kernel may only store to its outputs (the tensors it returns), each index inside the output's shape: "
        "find the store to that tensor, or the index that runs past the end."
    )
    if result.cause is None:
        facts = {"inputs_written": inputs_written, "outside_outputs": len(side_effects) - inputs_written}
        result.cause = Cause(CauseKind.SIDE_EFFECT, facts)
    return result


def crash_hint(message: str, source: str) -> str:
    """What to look at after a GPU crash, from the error and the CUDA TileLang generated."""
    if "illegal instruction" in message and "warpgroup_reg_alloc" in source:
        return WARP_SPECIALIZED_FAULT
    return "Look for an index past the end of a buffer, or a block needing more shared memory than the GPU has."


def keep_failure(
    ctx: Context, kernel: Kernel, case: Case, result: CaseResult, inputs: list, expected: list, outputs: list
) -> CaseResult:
    """With --save-failures, write a failed case's tensors and say how to replay it."""
    if not ctx.save_failures or result.status != Status.FAILED:
        return result
    from grader.pipeline.failures import save_failure

    path, command = save_failure(
        Path(ctx.save_failures),
        ctx.puzzle.id,
        ctx.source,
        kernel,
        case,
        ctx.seed_offset,
        ctx.draw,
        (ctx.device.mode, ctx.device.name),
        {"inputs": inputs, "expected": expected, "actual": outputs},
    )
    result.saved, result.replay = str(path), command
    return result
