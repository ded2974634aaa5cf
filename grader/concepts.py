"""Concept checks: what a puzzle teaches, read from the kernel's TIR.

A kernel can compute the right numbers without the construct its puzzle is about (a serial
loop where the puzzle teaches T.Pipelined, a hand-written loop where it teaches T.gemm). Each
check returns None when the kernel follows the lesson, else the sentence to show.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from grader.static_checks import region_buffer


@dataclass(frozen=True)
class Concept:
    wants: str  # the sentence a learner reads when the check fails
    holds: Callable[[Any], bool]  # TIR PrimFunc -> does the kernel use the construct?

    def check(self, tir: Any) -> str | None:
        return None if self.holds(tir) else self.wants


def _walk(tir: Any) -> list[Any]:
    from tilelang import tvm

    nodes: list[Any] = []
    tvm.tirx.stmt_functor.post_order_visit(tir.body, nodes.append)
    return nodes


def _tile_ops(tir: Any) -> list[Any]:
    from tilelang import tvm

    return [n.value for n in _walk(tir) if isinstance(n, tvm.tirx.Evaluate) and isinstance(n.value, tvm.tirx.Call)]


def _gemms(tir: Any) -> list[Any]:
    """The kernel's T.gemm calls: args 0, 1, 2 are the A, B and accumulator regions."""
    return [call for call in _tile_ops(tir) if call.op.name == "tl.tileop.gemm"]


def uses_tile_op(op: str, wants: str) -> Concept:
    """The kernel calls this tile op (e.g. "tl.tileop.gemm", "tl.tileop.reduce")."""
    return Concept(wants, lambda tir: any(call.op.name == op for call in _tile_ops(tir)))


def pipelined(min_stages: int, wants: str) -> Concept:
    """Some loop is a T.Pipelined loop with at least ``min_stages`` stages."""

    def holds(tir: Any) -> bool:
        from tilelang import tvm

        for node in _walk(tir):
            if isinstance(node, tvm.tirx.For) and "num_stages" in node.annotations:
                if int(node.annotations["num_stages"]) >= min_stages:
                    return True
        return False

    return Concept(wants, holds)


def without(concept: Concept, wants: str) -> Concept:
    """The kernel does NOT use what ``concept`` checks for: a rung that comes before a construct
    (puzzle 08's CUDA-core GEMM before T.gemm, its shared-memory GEMM before T.Pipelined)."""
    return Concept(wants, lambda tir: not concept.holds(tir))


def gemm_operands_in_shared(wants: str) -> Concept:
    """Every T.gemm reads its A and B tiles from shared memory."""

    def holds(tir: Any) -> bool:
        gemms = _gemms(tir)
        return bool(gemms) and all(
            str(region_buffer(c.args[i]).scope()).startswith("shared") for c in gemms for i in (0, 1)
        )

    return Concept(wants, holds)


def gemm_operand_copied(index: int, wants: str) -> Concept:
    """Every T.gemm's operand ``index`` (0 = A, 1 = B) is filled only by tile copies, never element by
    element: puzzle 09's implicit GEMM multiplies windows copied from X, not an im2col tile built in a
    T.Parallel loop."""

    def holds(tir: Any) -> bool:
        from tilelang import tvm

        gemms = _gemms(tir)
        stored = {n.buffer for n in _walk(tir) if isinstance(n, tvm.tirx.BufferStore)}
        return bool(gemms) and all(region_buffer(c.args[index]) not in stored for c in gemms)

    return Concept(wants, holds)


def gemm_left_operand_in_fragment(wants: str) -> Concept:
    """Some T.gemm takes its first (A) operand from a fragment (registers), not from shared memory:
    a tile built in registers that the MMA reads as it is (puzzle 10's decode kernel, W unpacked there)."""
    return Concept(wants, lambda tir: any(_scope(region_buffer(c.args[0])) == "local.fragment" for c in _gemms(tir)))


def reduces(kind: str, wants: str) -> Concept:
    """The kernel calls a tile reduction of this kind ("sum", "max", ...): T.reduce_sum, T.reduce_max."""
    return Concept(
        wants,
        lambda tir: any(
            call.op.name == "tl.tileop.reduce" and str(call.args[2]).strip('"') == kind for call in _tile_ops(tir)
        ),
    )


def gemm_calls(count: int, wants: str) -> Concept:
    """The kernel calls T.gemm at least ``count`` times (flash attention chains two)."""
    return Concept(wants, lambda tir: len(_gemms(tir)) >= count)


def parallel_loop(wants: str) -> Concept:
    """Some loop is a T.Parallel loop (the block's threads share its iterations)."""

    def holds(tir: Any) -> bool:
        from tilelang import tvm

        parallel = tvm.tirx.ForKind.PARALLEL
        return any(isinstance(node, tvm.tirx.For) and node.kind == parallel for node in _walk(tir))

    return Concept(wants, holds)


def _allocated_scopes(tir: Any) -> list[str]:
    return [str(buffer.scope()) for node in _walk(tir) for buffer in getattr(node, "alloc_buffers", ())]


def tiles_through_fragments(wants: str) -> Concept:
    """Global tiles move with T.copy into and out of a fragment (T.alloc_fragment)."""

    def holds(tir: Any) -> bool:
        copies = [call for call in _tile_ops(tir) if call.op.name == "tl.tileop.copy"]
        return bool(copies) and any(scope == "local.fragment" for scope in _allocated_scopes(tir))

    return Concept(wants, holds)


def swizzled(wants: str) -> Concept:
    """The kernel calls T.use_swizzle: in the TIR an AttrStmt "threadblock_swizzle_pattern" (its value
    the rasterization, e.g. T.tvm_tuple("rasterization2DRow", panel_size)), which reorders the blocks."""

    def holds(tir: Any) -> bool:
        from tilelang import tvm

        return any(
            isinstance(node, tvm.tirx.AttrStmt) and node.attr_key == "threadblock_swizzle_pattern"
            for node in _walk(tir)
        )

    return Concept(wants, holds)


def staged_store(wants: str) -> Concept:
    """The T.gemm accumulator reaches global memory through shared memory: T.copy(acc, C_shared), then
    T.copy(C_shared, C[...]) (a fragment to shared tile, that tile to a global tensor)."""

    def holds(tir: Any) -> bool:
        calls = _tile_ops(tir)
        accumulators = {region_buffer(c.args[2]) for c in calls if c.op.name == "tl.tileop.gemm"}
        copies = [(region_buffer(c.args[0]), region_buffer(c.args[1])) for c in calls if c.op.name == "tl.tileop.copy"]
        staged = {dst for src, dst in copies if src in accumulators and _scope(dst).startswith("shared")}
        return any(src in staged and _scope(dst) == "global" for src, dst in copies)

    return Concept(wants, holds)


def _scope(buffer: Any) -> str:
    return str(buffer.scope()) if buffer is not None else ""
