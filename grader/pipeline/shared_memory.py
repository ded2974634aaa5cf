"""How much shared memory a block asks for, as TileLang 0.1.15 plans it: the grading gate (a block that does not fit
this GPU fails with the sentence ``SharedPlan.too_much`` writes), the simulator's own limit, the static profile,
``python -m grader fit`` and the puzzles' experiments all read it from here. Pinned to TileLang's allocation by
tests/test_simulate_semantics.py and tests/test_gpus.py."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

SHARED_LIMIT = 227 * 1024  # bytes of shared memory a Hopper block may use (grader.devices has the others)


def element_bytes(dtype: Any) -> int:
    """Bytes of one element of a TIR dtype ("float16": 2, "bool": 1)."""
    from tilelang import tvm

    kind = tvm.DataType(str(dtype))
    return max(1, (kind.bits * kind.lanes + 7) // 8)


class _LiveParts:
    """The parts of a statement that TileLang 0.1.15 keeps until it plans shared memory: its first
    ``tilelang.transform.Simplify`` (before layout inference and MergeSharedMemoryAllocations) removes
    the then-branch of an ``if`` whose condition it proves false, the else-branch of one it proves
    true, and a loop it proves runs no iteration (``T.serial(waves)`` with ``waves == 0``), from the
    ranges of the loop variables around it and the conditions of the ifs around it. Only those proofs
    are made here (no let-bound values are substituted), so what is kept is never less than what
    TileLang keeps."""

    def __init__(self, tvm: Any):
        self.tir = tvm.tirx
        self.range = tvm.ir.Range.from_min_extent
        self.analyzer = tvm.arith.Analyzer()

    def parts(self, stmt: Any) -> Iterator[Any]:
        """``stmt``'s statements and expressions that survive, for a visitor to look into."""
        tir = self.tir
        if isinstance(stmt, tir.SeqStmt):
            for child in stmt.seq:
                yield from self.parts(child)
        elif isinstance(stmt, tir.For):
            yield stmt.min
            yield stmt.extent
            if not self.analyzer.can_prove(stmt.extent <= 0):  # a loop of no iteration is dropped too
                self.analyzer.bind(stmt.loop_var, self.range(stmt.min, stmt.extent), allow_override=True)
                yield from self.parts(stmt.body)
        elif isinstance(stmt, tir.IfThenElse):
            condition = stmt.condition
            yield condition
            if not self.analyzer.can_prove(tir.Not(condition)):
                with self.analyzer.constraint_scope(condition):
                    yield from self.parts(stmt.then_case)
            if stmt.else_case is not None and not self.analyzer.can_prove(condition):
                with self.analyzer.constraint_scope(tir.Not(condition)):
                    yield from self.parts(stmt.else_case)
        else:
            yield stmt


@dataclass
class SharedPlan:
    """A block's shared memory: ``total`` bytes, and the buffers a T.Pipelined loop keeps one copy of
    per stage (name -> (stages, bytes of one copy))."""

    total: int
    staged: dict[str, tuple[int, int]]

    def too_much(self, limit: int = SHARED_LIMIT, gpu: str = "a Hopper block") -> str:
        kib = math.ceil(self.total / 1024)
        stages = ""
        if self.staged:
            parts = []
            for count in sorted({n for n, _ in self.staged.values()}):
                names = [name for name, (n, _) in self.staged.items() if n == count]
                one = sum(b for n, b in self.staged.values() if n == count)
                listed = " and ".join(f"`{name}`" for name in names)
                parts.append(
                    f"T.Pipelined with num_stages={count} keeps {count} copies of {listed}: "
                    f"{count} x {math.ceil(one / 1024)} KiB"
                )
            stages = f" ({'; '.join(parts)})"
        return (
            f"the block asks for {kib} KiB of shared memory{stages}; {gpu} may use at most "
            f"{limit // 1024} KiB: use smaller tiles or fewer stages"
        )


def shared_memory_plan(func: Any, block: Any = None, size: Any = None) -> SharedPlan:
    """The shared memory TileLang 0.1.15 gives ``block`` (the kernel's root block by default):

    - each shared buffer that a T.Pipelined loop fills from global memory (a T.copy from a global
      tensor, or a store of a global load) gets ``num_stages`` copies, one per stage in flight;
    - buffers are live from the first to the last statement of the block's body that touches
      them (a loop or an if is one statement), and buffers never live at the same time share
      memory (MergeSharedMemoryAllocations), so the total is the peak over the statements;
    - a buffer nothing touches is not allocated, and neither is one that only statements that never
      run touch: TileLang's first Simplify pass drops the branch of an ``if`` whose condition it proves
      false from the bounds of the loops around it (matmul_streamk's ``if step < waves * chunks`` at
      sizes with no full wave, ``waves == 0``: the staged C tile of the whole tiles is never allocated);
    - each buffer takes a multiple of 16 bytes.

    Not modelled (the count is then below the allocation): on sm_90a, where TileLang warp-specializes
    the first T.Pipelined loop, tiles that a second T.Pipelined loop of the same block fills get
    ``num_stages ** 2`` copies, not ``num_stages`` (matmul_streamk with the whole tiles and the share
    in two loops, each with its own tiles: 72 KiB allocated at square_256 where 32 KiB are counted,
    432 KiB at large_4096 where 208 are; on sm_80 both are exact).
    """
    from tilelang import tvm

    tir = tvm.tirx
    if block is None:
        found: list[Any] = []
        tir.stmt_functor.post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, tir.SBlock) else None)
        block = next((b for b in found if any(x.scope().startswith("shared") for x in b.alloc_buffers)), None)
        if block is None:
            return SharedPlan(0, {})
    size = size or (lambda e: int(e))
    shared = {b.data: b for b in block.alloc_buffers if b.scope().startswith("shared")}
    global_data = {b.data for b in func.buffer_map.values()}

    live = _LiveParts(tvm)

    def touched(stmt: Any) -> set[Any]:
        seen: set[Any] = set()

        def visit(node: Any) -> None:
            if isinstance(node, tir.BufferLoad | tir.BufferStore) and node.buffer.data in shared:
                seen.add(node.buffer.data)
            elif isinstance(node, tir.Var) and node in shared:
                seen.add(node)

        for part in live.parts(stmt):
            tir.stmt_functor.post_order_visit(part, visit)
        return seen

    def reads_global(expr: Any) -> bool:
        hits: list[Any] = []
        tir.stmt_functor.post_order_visit(
            expr, lambda n: hits.append(n) if isinstance(n, tir.BufferLoad) and n.buffer.data in global_data else None
        )
        return bool(hits)

    stages: dict[Any, int] = {}

    def stage(loop: Any) -> None:
        count = int(loop.annotations["num_stages"])

        def visit(node: Any) -> None:
            target = None
            if isinstance(node, tir.Call) and node.op.name == "tl.tileop.copy":
                src, dst = (a.args[0] for a in node.args[:2])
                if src.buffer.data in global_data:
                    target = dst.buffer.data
            elif isinstance(node, tir.BufferStore) and reads_global(node.value):
                target = node.buffer.data
            if target in shared:
                stages[target] = max(stages.get(target, 1), count)

        tir.stmt_functor.post_order_visit(loop.body, visit)

    tir.stmt_functor.post_order_visit(
        block.body,
        lambda n: stage(n) if isinstance(n, tir.For) and n.annotations and "num_stages" in n.annotations else None,
    )

    def flatten(stmt: Any) -> list[Any]:
        if isinstance(stmt, tir.SeqStmt):
            return [s for child in stmt.seq for s in flatten(child)]
        if isinstance(stmt, tir.AttrStmt | tir.DeclBuffer) or (
            isinstance(stmt, tir.AllocBuffer) and getattr(stmt, "body", None) is not None
        ):
            return flatten(stmt.body)
        return [stmt]

    first: dict[Any, int] = {}
    last: dict[Any, int] = {}
    for position, stmt in enumerate(flatten(block.body)):
        for data in touched(stmt):
            first.setdefault(data, position)
            last[data] = position

    def one_copy(data: Any) -> int:
        buffer = shared[data]
        element = element_bytes(buffer.dtype)
        return -(-math.prod(size(s) for s in buffer.shape) * element // 16) * 16  # each buffer 16-byte aligned

    total = 0
    for position in range(max(last.values(), default=-1) + 1):
        live = [d for d in first if first[d] <= position <= last[d]]
        total = max(total, sum(one_copy(d) * stages.get(d, 1) for d in live))
    staged = {shared[d].name: (n, one_copy(d)) for d, n in stages.items() if n > 1 and d in first}
    return SharedPlan(total, staged)
