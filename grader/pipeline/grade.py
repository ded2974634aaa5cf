"""Step 6, grade: one case's verdict, as an ordered list of gates.

The case's build is under way when grading starts (grader.processes.judge compiles every case at once).
Each gate either gives the verdict or lets the case through to the next one; the last gate runs it (on
the GPU or the CPU simulator, grader.pipeline.execute) and compares it with torch. What the TIR shows
(an accumulator never cleared, a concept the puzzle wants and the kernel skips) can then still fail a
case whose numbers came out right.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from grader import verified
from grader.outcome import CaseResult, Cause, CauseKind, Status
from grader.pipeline.context import Build, Context, result_for
from grader.spec import Case, Kernel

# A gate: (context, kernel, case, build, compiled kernel) -> the verdict, or None to go on.
Gate = Callable[[Context, Kernel, Case, Build, Any], "CaseResult | None"]


def unfit_gate(ctx: Context, kernel: Kernel, case: Case, build: Build | None, compiled: Any) -> CaseResult | None:
    """No block parameters of this case fit this GPU: neither passed nor failed."""
    if case.unfit:
        message = f"not applicable on {ctx.device.profile.label}: {case.unfit}"
        cause = Cause(CauseKind.NOT_APPLICABLE, {"reason": "unfit"})
        return result_for(ctx, kernel, case, Status.NOT_APPLICABLE, message, cause=cause)
    return None


def setup_gate(ctx: Context, kernel: Kernel, case: Case, build: Build | None, compiled: Any) -> CaseResult | None:
    """This machine cannot grade at all (no compiler): not the kernel's fault."""
    if ctx.device.problem or build is None:
        return result_for(ctx, kernel, case, Status.SETUP, ctx.device.problem, cause=Cause(CauseKind.SETUP))
    return None


def empty_launch_gate(ctx: Context, kernel: Kernel, case: Case, build: Build, compiled: Any) -> CaseResult | None:
    """A grid with a zero extent launches nothing (on a GPU, an invalid launch): a FAIL that says why, in
    every mode, and the kernel's other cases still run."""
    from grader.pipeline.checks import empty_launch

    if build.tir is None:
        return None
    empty = empty_launch(build.tir, case.sizes, case.params, kernel.inputs + kernel.outputs)
    if not empty:
        return None
    cause = Cause(CauseKind.EMPTY_LAUNCH)  # found in the TIR: nothing ran
    return result_for(ctx, kernel, case, Status.FAILED, empty, cause=cause)


def shared_memory_gate(ctx: Context, kernel: Kernel, case: Case, build: Build, compiled: Any) -> CaseResult | None:
    """A block over the GPU's shared memory cannot launch: say so before trying (no CRASH, the kernel's
    other cases still run), and in every mode, so compiling for a smaller GPU on the CPU finds it too.
    It is the learner's failure if the course's own kernel fits at these block sizes, else not applicable."""
    from grader.pipeline.shared_memory import shared_memory_plan

    if build.tir is None:
        return None
    profile = ctx.device.profile
    plan = shared_memory_plan(build.tir)
    if plan.total <= profile.shared_per_block:
        return None
    reference = reference_shared_memory(ctx, kernel, case)
    if reference is not None and reference > profile.shared_per_block:
        return result_for(
            ctx,
            kernel,
            case,
            Status.NOT_APPLICABLE,
            f"not applicable on {profile.label}: at this case's block sizes it needs {-(-reference // 1024)} KiB of "
            f"shared memory per block; this GPU has {profile.shared_kib} KiB",
            cause=Cause(CauseKind.NOT_APPLICABLE, {"reason": "shared_memory"}),
        )
    message = plan.too_much(profile.shared_per_block, f"a block on {profile.label}")
    cause = Cause(CauseKind.SHARED_MEMORY, {"needed": plan.total, "available": profile.shared_per_block})
    return result_for(ctx, kernel, case, Status.FAILED, message, cause=cause)


def compile_only_gate(ctx: Context, kernel: Kernel, case: Case, build: Build, compiled: Any) -> CaseResult | None:
    """Built, and nothing here can run it: no GPU and no simulator, or a case too large to simulate."""
    # The renderer puts "compiled for {arch}: " before these, from the result's fields.
    if ctx.device.mode == "compile":
        message, reason = "TileLang accepts it (numbers need a GPU)", "no_gpu"
    elif ctx.device.mode == "cpu" and not case.simulate:
        message, reason = "too large to simulate (numbers need a GPU)", "too_large"
    else:
        return None
    cause = Cause(CauseKind.COMPILE_ONLY, {"reason": reason})
    return result_for(ctx, kernel, case, Status.COMPILED, message, checked=verified.COMPILED, cause=cause)


def run_gate(ctx: Context, kernel: Kernel, case: Case, build: Build, compiled: Any) -> CaseResult:
    """Run the case on this machine's backend and compare its outputs with torch's."""
    from grader.pipeline.execute import execute_and_compare

    drawn = replace(ctx, draw=input_draw(ctx, build.tir, case))
    return execute_and_compare(drawn, kernel, case, build.tir, compiled)


# In order: the first gate that gives a verdict ends the case's grading.
GATES: tuple[Gate, ...] = (empty_launch_gate, shared_memory_gate, compile_only_gate, run_gate)


def built(ctx: Context, kernel: Kernel, case: Case, build: Build) -> Any:
    """The compiled kernel, or the verdict of a case whose tracing, admission or compile failed."""
    from grader.pipeline.build import BuildFailed, NotImplementedYet
    from grader.pipeline.trace import TracerGone

    try:
        return build.compiled.result()
    except TracerGone as gone:
        return result_for(ctx, kernel, case, gone.status, gone.message, cause=tracer_gone_cause(gone.status))
    except NotImplementedYet:
        message = f"not implemented yet: fill in the TODO of `{kernel.function}` in {ctx.source.name}"
        cause = Cause(CauseKind.NOT_IMPLEMENTED)
        return result_for(ctx, kernel, case, Status.NOT_IMPLEMENTED, message, cause=cause)
    except BuildFailed as error:
        where = f" ({error.location})" if error.location else ""
        return result_for(
            ctx,
            kernel,
            case,
            Status.ERROR,
            error.summary + where,
            trace=error.trace,
            hint=error.hint,
            details=list(error.details),
            cause=error.cause,
        )


def tracer_gone_cause(status: str) -> Cause:
    """The cause of a case the tracer gave no usable answer for, from the verdict it stands for: it hung
    while importing or tracing the file, the kernel was given up after an earlier case, or the tracer died."""
    if status == Status.TIMED_OUT:
        return Cause(CauseKind.TIMED_OUT, {"phase": "tracing"})
    if status == Status.NOT_RUN:
        return Cause(CauseKind.NOT_RUN)
    return Cause(CauseKind.CRASHED, {"where": "tracer"})


def grade_case(ctx: Context, kernel: Kernel, case: Case, build: Build | None) -> CaseResult:
    """One case's verdict: the gates before the build, the build, then GATES in order; a case that ran is
    then held to what its TIR shows, and benched if asked."""
    started = time.perf_counter()
    for gate in (unfit_gate, setup_gate):
        if (early := gate(ctx, kernel, case, build, None)) is not None:
            return early
    assert build is not None  # setup_gate answered otherwise
    compiled = built(ctx, kernel, case, build)
    if isinstance(compiled, CaseResult):
        return compiled
    for gate in GATES:
        result = gate(ctx, kernel, case, build, compiled)
        if result is not None:
            break
    result.seconds = time.perf_counter() - started
    if result.checked in (verified.GPU, verified.SIMULATED):
        held_to_tir(result, kernel, case, build.tir)
        if ctx.bench and case.bench and result.status == Status.PASSED:
            from grader.pipeline.bench import bench_case

            result.bench = bench_case(ctx, kernel, case, compiled)
    return result


def imprecise_hint(narrow_sums: list[str]) -> str:
    """The likely cause of small errors past the tolerance, read from the TIR (the numbers alone said "a sum
    accumulated in float16?"): the running sums it keeps in 16 bits, or, with none, what else makes small errors."""
    if narrow_sums:
        what = "; ".join(narrow_sums)
        return (
            f"The errors are small but larger than rounding allows, and the kernel {what}: accumulate in float32 "
            "and cast once at the end."
        )
    return (
        "The errors are small but larger than rounding allows, and no running sum here is kept in 16 bits: look "
        "for an element counted that should not be (a mask or a guard one off, a padded column in a sum or a max) "
        "or a value rounded to float16 on the way."
    )


def held_to_tir(result: CaseResult, kernel: Kernel, case: Case, tir: Any) -> None:
    """Fail a case that ran for what its TIR shows. Accumulators nothing cleared can come out right by luck
    (zeroed registers): the cause, not luck. A count that rounds down explains a mismatch; it never makes one."""
    from grader.concepts import narrow_sums
    from grader.pipeline.checks import (
        added_to_but_never_set,
        cleared_each_step,
        corner_copies,
        floor_problems,
        masks_without_offset,
        never_initialized,
        one_short_problems,
        overwritten_each_step,
        reduce_restarts,
        repeated_updates,
        tile_steps_mismatched,
    )

    if result.status == Status.FAILED and result.cause is not None and result.cause.kind == CauseKind.IMPRECISE:
        result.hint = imprecise_hint(narrow_sums(tir))
    found = [(CauseKind.NEVER_INITIALIZED, s) for s in never_initialized(tir)]
    # the simulator applies such an update once, the GPU once per iteration a thread covers: right numbers here
    # say nothing
    found += [(CauseKind.REPEATED_UPDATE, s) for s in repeated_updates(tir)]
    if result.status == Status.FAILED:
        shape = kernel.inputs + kernel.outputs
        found += [(CauseKind.ADDED_NEVER_SET, s) for s in added_to_but_never_set(tir)]
        found += [(CauseKind.CORNER_COPY, s) for s in corner_copies(tir)]
        found += [(CauseKind.TILE_STEP, s) for s in tile_steps_mismatched(tir, case.sizes, case.params, shape)]
        found += [(CauseKind.MASK_OFFSET, s) for s in masks_without_offset(tir, case.sizes, case.params, shape)]
        found += [(CauseKind.ROUNDS_DOWN, s) for s in floor_problems(tir, case.sizes, case.params, shape)]
        found += [(CauseKind.LOOP_SHORT, s) for s in one_short_problems(tir, case.sizes, case.params, shape)]
        found += [(CauseKind.REDUCE_RESTART, s) for s in reduce_restarts(tir)]
        found += [(CauseKind.OVERWRITTEN, s) for s in overwritten_each_step(tir)]
        found += [(CauseKind.OVERWRITTEN, s) for s in cleared_each_step(tir)]
    causes = [Cause(kind) for kind, _ in found]
    fail_by_tir(result, [s for _, s in found], "the numbers happen to be right, but ", cause=True, causes=causes)
    misses = [missed for concept in kernel.concepts if (missed := concept.miss(tir))]
    fail_by_tir(
        result,
        [f"the puzzle wants {m.sentence()}" for m in misses],
        "the numbers are right, but ",
        cause=False,
        causes=[Cause(CauseKind.CONCEPT_MISS, {"wants": m.wants, "instead": m.instead}) for m in misses],
    )


def input_draw(ctx: Context, tir: Any, case: Case) -> int:
    """The part of a case's input seed drawn from a hash of its admitted TIR. The case's own seed is in the
    course's files, so without this a file could draw the inputs while it is traced and bake the answers
    into its TIR as constants; with it, changing the TIR changes the inputs it is checked on, and the
    tracer is dead before they are drawn. The same file draws the same inputs on every run (and
    --seed-offset N another draw of them), so a failure replays."""
    import hashlib

    from tilelang import tvm

    if not ctx.seed_from_tir:
        return 0
    text = _program_text(tvm.ir.save_json(tir)) if tir is not None else ""
    digest = hashlib.sha256(f"{case.name}:{case.seed}:{text}".encode()).digest()
    return int.from_bytes(digest[:4], "little") % (2**30)


def _program_text(saved: str) -> str:
    """TVM's JSON of a TIR without its source spans: they hold the file's path and line numbers, so
    the same kernel in another checkout, or with a comment added, would otherwise draw other inputs
    and a saved failure would not replay there."""
    import json

    graph = json.loads(saved)
    for node in graph.get("nodes", []):
        if node.get("type") in ("ir.SourceName", "ir.Span"):
            node["data"] = None
    return json.dumps(graph, sort_keys=True)


def reference_shared_memory(ctx: Context, kernel: Kernel, case: Case) -> int | None:
    """Bytes of shared memory the course's own kernel (the trusted spec file) takes for this case."""
    from grader.discover import load_module
    from grader.pipeline.shared_memory import shared_memory_plan
    from grader.pipeline.trace import kernel_function, trace_tir

    try:
        module = load_module(ctx.spec_file)
        return shared_memory_plan(trace_tir(kernel_function(module, kernel), kernel, case, ctx.spec_file)).total
    except Exception:  # a spec without this kernel's body (a stub used as spec): no reference to weigh
        return None


def fail_by_tir(
    result: CaseResult, sentences: list[str], right_numbers: str, cause: bool, causes: list[Cause] | None = None
) -> None:
    """Fail a ran case for what its TIR shows (a concept missed, an accumulator never cleared), even
    when its numbers are right. On a case that failed anyway, the first sentence replaces the generic
    hint when it is the ``cause`` of the mismatch; the others are listed. ``causes``: the sentences' typed
    causes, in order; the first becomes the result's where its sentence does."""
    if not sentences or result.status not in (Status.PASSED, Status.FAILED):
        return
    first = causes[0] if causes else None
    listed = sentences[1:]
    if result.status == Status.PASSED:
        result.status, result.message = Status.FAILED, right_numbers + sentences[0]
        result.cause = first
    elif cause:
        result.hint = "the likely cause: " + sentences[0]
        result.cause = first
    else:
        listed = sentences
    result.details = result.details + [f"also: {s}" for s in listed]
