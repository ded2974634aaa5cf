"""A kernel's verdicts read together: the cause some failures share, seen only across cases.

One case's numbers say which elements are wrong; the cases of a kernel side by side can say why. The
cases whose tile loop runs one step pass and those where it runs several fail: what one step hands to
the next is wrong (flash attention's accumulator never rescaled). Only the case with large inputs
fails: a value overflows on the way (an exponent taken against a max that is not the running one).
The judge grades a kernel's cases in order and calls :func:`add_pattern` on each, with the verdicts
before it, so a failure gets the sentence as soon as the cases graded so far show the pattern.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from grader.outcome import CaseResult, Cause, CauseKind, Status
from grader.spec import Case

LIKELY = "the likely cause: "
# Causes read from the TIR that are themselves why one tile's step passes and several fail
EXPLAIN_STEPS = (CauseKind.MASK_OFFSET, CauseKind.OVERWRITTEN, CauseKind.TILE_STEP)


@dataclass(frozen=True)
class Graded:
    """One case of a kernel as graded: the case, its admitted TIR (None when it did not build), its verdict."""

    case: Case
    tir: Any
    result: CaseResult


@dataclass(frozen=True)
class TileLoop:
    """The loop that walks a global tensor in tiles, taking the most steps for a case."""

    name: str  # "the T.serial loop over `j`"
    steps: int
    online: bool  # a running max and a sum in the same loop: the online softmax


def tile_loop(tir: Any) -> TileLoop | None:
    """The serial or pipelined loop whose variable steps through a global tensor in strides of more than
    one element (``K[j * BLOCK_N, 0]``), taking the most steps; None when the kernel has none."""
    from tilelang import tvm

    from grader.pipeline.checks import global_accesses, tir_loops

    loops = {loop.var: loop for loop in tir_loops(tir) if not loop.grid and "T.Parallel" not in loop.what}
    tiled: dict[Any, int] = {}
    for _, indices, _, _ in global_accesses(tir):
        for index in indices:
            for var in tvm.tirx.analysis.undefined_vars(index):
                if var in loops:
                    coefficients = tvm.arith.detect_linear_equation(index, [var])
                    step = int(coefficients[0]) if len(coefficients) == 2 and _is_int(coefficients[0]) else 0
                    if step > 1:
                        tiled[var] = loops[var].start + loops[var].extent
    if not tiled:
        return None
    var = max(tiled, key=lambda v: tiled[v])
    return TileLoop(loops[var].what, tiled[var], _online(tir, var))


def _is_int(value: Any) -> bool:
    try:
        int(value)
    except (TypeError, ValueError):
        return False
    return True


def _online(tir: Any, var: Any) -> bool:
    """Whether the loop over ``var`` takes a max and a sum of the same tile (a running max kept alongside)."""
    from tilelang import tvm

    kinds: set[str] = set()
    found = []

    def find(node: Any) -> None:
        if isinstance(node, tvm.tirx.For) and node.loop_var.same_as(var):
            found.append(node)

    tvm.tirx.stmt_functor.post_order_visit(tir.body, find)

    def reduce_kind(node: Any) -> None:
        if (
            isinstance(node, tvm.tirx.Call)
            and getattr(node.op, "name", "") == "tl.tileop.reduce"
            and len(node.args) > 2
        ):
            kinds.add(str(node.args[2]).strip('"'))

    for loop in found:
        tvm.tirx.stmt_functor.post_order_visit(loop.body, reduce_kind)
    return "max" in kinds and "sum" in kinds


def _has_exp(tir: Any) -> bool:
    from tilelang import tvm

    seen = []

    def visit(node: Any) -> None:
        if isinstance(node, tvm.tirx.Call) and getattr(node.op, "name", "") in (
            "tirx.exp",
            "tirx.exp2",
            "tir.exp",
            "tir.exp2",
        ):
            seen.append(node)

    tvm.tirx.stmt_functor.post_order_visit(tir.body, visit)
    return bool(seen)


def _names(graded: Sequence[Graded]) -> str:
    return ", ".join(g.case.name for g in graded)


def several_steps(current: Graded, earlier: Sequence[Graded]) -> tuple[str, Cause] | None:
    """The sentence when the cases whose tile loop runs one step passed and this one, where it runs several,
    failed (with no case of several steps passing on the same inputs' scale), and its cause; else None."""
    loop = tile_loop(current.tir) if current.tir is not None else None
    if loop is None or loop.steps < 2:
        return None
    one, several_passed = [], False
    for g in earlier:
        if g.tir is None or g.result.status not in (Status.PASSED, Status.FAILED):
            continue
        theirs = tile_loop(g.tir)
        if theirs is None:
            continue
        if theirs.steps == 1 and g.result.status == Status.PASSED:
            one.append(g)
        elif theirs.steps > 1 and g.result.status == Status.PASSED and dict(g.case.scales) == dict(current.case.scales):
            several_passed = True
    if not one or several_passed:
        return None
    facts = {"loop": loop.name, "steps": loop.steps, "online": loop.online, "passing": [g.case.name for g in one]}
    cause = Cause(CauseKind.SEVERAL_STEPS, facts)
    if loop.online:
        return (
            f"The case(s) where {loop.name} runs one step pass ({_names(one)}) and this one, where it runs "
            f"{loop.steps}, fails: what one tile hands to the next is wrong. When a tile raises the running max, "
            "everything summed so far (the running sum and the accumulator) was taken against the old max: "
            "multiply both by exp2((m_old - m_new) * scale) before adding the tile's own terms, and carry the max "
            "from tile to tile (T.reduce_max with clear=False).",
            cause,
        )
    return (
        f"The case(s) where {loop.name} runs one step pass ({_names(one)}) and this one, where it runs "
        f"{loop.steps}, fails: what one step hands to the next is wrong: an accumulator cleared or overwritten "
        "inside the loop, a running value not carried or not rescaled, or an offset that does not move with the "
        "loop variable.",
        cause,
    )


def large_inputs(current: Graded, earlier: Sequence[Graded]) -> tuple[str, Cause] | None:
    """The sentence when this case, with inputs scaled up (Case.scales), failed and every case graded before
    it with ordinary inputs passed, in a kernel that takes an exponential; else ""."""
    if not current.case.scales or current.tir is None or not _has_exp(current.tir):
        return None
    ordinary = [g for g in earlier if not g.case.scales and g.result.status in (Status.PASSED, Status.FAILED)]
    if not ordinary or any(g.result.status != Status.PASSED for g in ordinary):
        return None
    facts = {"scales": dict(current.case.scales), "passing": [g.case.name for g in ordinary]}
    scaled = ", ".join(f"{name} x {factor:g}" for name, factor in current.case.scales.items())
    return (
        f"Only this case, whose inputs are large ({scaled}), fails, and the cases with ordinary inputs pass "
        f"({_names(ordinary)}): a value overflows float32 on the way (inf, then NaN). No exponent may be "
        "positive: subtract the row's max over every tile seen so far (T.reduce_max with clear=False, kept from "
        "tile to tile) before T.exp / T.exp2.",
        Cause(CauseKind.LARGE_INPUTS, facts),
    )


def add_pattern(current: Graded, earlier: Sequence[Graded]) -> None:
    """Give a failed case the sentence its kernel's verdicts so far point to. ``earlier``: the same kernel's
    cases graded before it, in order. A cause read from the case's TIR ("the likely cause: ...") stays the
    hint and the pattern is added below it; otherwise the pattern replaces the hint read from the numbers
    alone, which could only guess."""
    result = current.result
    if result.status != Status.FAILED:
        return
    found = large_inputs(current, earlier) or several_steps(current, earlier)
    if found is None:
        return
    sentence, cause = found
    if cause.kind == CauseKind.SEVERAL_STEPS and result.cause is not None and result.cause.kind in EXPLAIN_STEPS:
        return  # the TIR's cause is why one step passes and several fail: the pattern would point elsewhere
    if result.hint.startswith(LIKELY):  # a cause read from the TIR stays the cause
        result.details = result.details + [f"also: {sentence}"]
    else:
        result.hint, result.cause = sentence, cause
