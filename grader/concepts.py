"""Concept checks: what a puzzle teaches, read from the kernel's TIR.

A kernel can compute the right numbers without the construct its puzzle is about (a serial
loop where the puzzle teaches T.Pipelined, a hand-written loop where it teaches T.gemm). Each
check returns None when the kernel follows the lesson, else the sentence to show: what the puzzle
wants and, read from the same TIR, what the kernel used instead ("your kernel copies A into B with
one T.copy ...").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from grader.tir import region_buffer, written_region


@dataclass(frozen=True)
class Miss:
    """A concept the kernel missed: what the puzzle wants, and what the kernel did instead (None where
    the TIR shows nothing to name)."""

    wants: str
    instead: str | None = None

    def sentence(self) -> str:
        return self.wants if not self.instead else f"{self.wants}; your kernel {self.instead}"


def _nothing(tir: Any) -> str | None:
    return None


@dataclass(frozen=True)
class Concept:
    wants: str  # the sentence a learner reads when the check fails
    holds: Callable[[Any], bool]  # TIR PrimFunc -> does the kernel use the construct?
    # TIR PrimFunc -> what the kernel used in its place, as a predicate after "your kernel" ("copies A
    # into B with one T.copy, ..."); None when nothing in the TIR says
    instead: Callable[[Any], str | None] = _nothing
    # TIR PrimFunc -> the construct itself where the kernel has it ("calls T.gemm"): what a rung that
    # comes before the construct (``without``) names
    found: Callable[[Any], str | None] = _nothing

    def miss(self, tir: Any) -> Miss | None:
        return None if self.holds(tir) else Miss(self.wants, self.instead(tir))

    def check(self, tir: Any) -> str | None:
        missed = self.miss(tir)
        return missed.sentence() if missed else None


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
    return Concept(
        wants,
        lambda tir: any(call.op.name == op for call in _tile_ops(tir)),
        instead=_tile_op_instead(op),
        found=_tile_op_found(op),
    )


def pipelined(min_stages: int, wants: str) -> Concept:
    """Some loop is a T.Pipelined loop with at least ``min_stages`` stages."""

    def holds(tir: Any) -> bool:
        from tilelang import tvm

        for node in _walk(tir):
            if isinstance(node, tvm.tirx.For) and "num_stages" in node.annotations:
                if int(node.annotations["num_stages"]) >= min_stages:
                    return True
        return False

    return Concept(wants, holds, instead=_pipelined_instead(min_stages), found=_pipelined_found)


def without(concept: Concept, wants: str) -> Concept:
    """The kernel does NOT use what ``concept`` checks for: a rung that comes before a construct
    (puzzle 08's CUDA-core GEMM before T.gemm, its shared-memory GEMM before T.Pipelined)."""
    return Concept(wants, lambda tir: not concept.holds(tir), instead=concept.found)


def gemm_operands_in_shared(wants: str) -> Concept:
    """Every T.gemm reads its A and B tiles from shared memory."""

    def holds(tir: Any) -> bool:
        gemms = _gemms(tir)
        return bool(gemms) and all(
            str(region_buffer(c.args[i]).scope()).startswith("shared") for c in gemms for i in (0, 1)
        )

    return Concept(wants, holds, instead=_operands_not_shared)


def gemm_operand_copied(index: int, wants: str) -> Concept:
    """Every T.gemm's operand ``index`` (0 = A, 1 = B) is filled only by tile copies, never element by
    element: puzzle 09's implicit GEMM multiplies windows copied from X, not an im2col tile built in a
    T.Parallel loop."""

    def holds(tir: Any) -> bool:
        from tilelang import tvm

        gemms = _gemms(tir)
        stored = {n.buffer for n in _walk(tir) if isinstance(n, tvm.tirx.BufferStore)}
        return bool(gemms) and all(region_buffer(c.args[index]) not in stored for c in gemms)

    return Concept(wants, holds, instead=_gemm_operand_filled_instead(index))


def gemm_left_operand_in_fragment(wants: str) -> Concept:
    """Some T.gemm takes its first (A) operand from a fragment (registers), not from shared memory:
    a tile built in registers that the MMA reads as it is (puzzle 10's decode kernel, W unpacked there)."""
    return Concept(
        wants,
        lambda tir: any(_scope(region_buffer(c.args[0])) == "local.fragment" for c in _gemms(tir)),
        instead=_left_operand_instead,
    )


def reduces(kind: str, wants: str) -> Concept:
    """The kernel calls a tile reduction of this kind ("sum", "max", ...): T.reduce_sum, T.reduce_max."""
    return Concept(
        wants,
        lambda tir: any(
            call.op.name == "tl.tileop.reduce" and str(call.args[2]).strip('"') == kind for call in _tile_ops(tir)
        ),
        instead=_reduction_instead(kind),
    )


def gemm_calls(count: int, wants: str) -> Concept:
    """The kernel calls T.gemm at least ``count`` times (flash attention chains two)."""

    def instead(tir: Any) -> str | None:
        calls = len(_gemms(tir))
        loops = _gemm_instead(tir)
        if not calls:
            return loops
        gemm = "T.gemm once" if calls == 1 else f"T.gemm {calls} times"
        return f"calls {gemm}" + (f" and {loops.removesuffix(', with no T.gemm')}" if loops else "")

    return Concept(wants, lambda tir: len(_gemms(tir)) >= count, instead=instead)


def _grid_loop(node: Any) -> bool:
    """Is ``node`` one of the grid's loops, a T.Kernel's blockIdx.x, .y or .z?"""
    binding = getattr(node, "thread_binding", None)
    return binding is not None and binding.thread_tag.startswith("blockIdx")


def _block_vars(tir: Any) -> set[Any]:
    """The variables of the grid's block indices."""
    return {n.loop_var for n in _walk(tir) if _grid_loop(n)}


def _gemm_loops(tir: Any) -> list[Any]:
    """The loops bound to no thread index whose bodies call T.gemm, outermost first."""
    from tilelang import tvm

    loops = [n for n in _walk(tir) if isinstance(n, tvm.tirx.For) and n.thread_binding is None]
    return [n for n in reversed(loops) if any(c.op.name == "tl.tileop.gemm" for c in _calls_in(n.body))]


def _reads_any(expr: Any, variables: set[Any], lets: dict[Any, Any]) -> bool:
    """Does ``expr`` read one of ``variables``, directly or through the values of the let-bound names it reads
    (``steps = T.min(...)`` before the loop)?"""
    from tilelang import tvm

    found: list[Any] = []
    tvm.tirx.stmt_functor.post_order_visit(expr, found.append)
    return any(n in variables or (n in lets and _reads_any(lets.pop(n), variables, lets)) for n in found)


def loop_bounded_by_block(wants: str) -> Concept:
    """The loop around the T.gemm calls runs a number of steps that depends on the block's index: causal
    attention's key loop stops at the block's last query, so the tiles past it are never loaded."""

    def holds(tir: Any) -> bool:
        from tilelang import tvm

        blocks = _block_vars(tir)
        lets = {n.var: n.value for n in _walk(tir) if isinstance(n, tvm.tirx.Bind)}
        return any(_reads_any(loop.extent, blocks, dict(lets)) for loop in _gemm_loops(tir))

    def instead(tir: Any) -> str | None:
        loops = _gemm_loops(tir)
        if not loops:
            return None
        return f"runs its loop over `{loops[0].loop_var.name}` the same {loops[0].extent} steps in every block"

    return Concept(wants, holds, instead=instead)


def parallel_loop(wants: str) -> Concept:
    """Some loop is a T.Parallel loop (the block's threads share its iterations)."""

    def holds(tir: Any) -> bool:
        from tilelang import tvm

        parallel = tvm.tirx.ForKind.PARALLEL
        return any(isinstance(node, tvm.tirx.For) and node.kind == parallel for node in _walk(tir))

    return Concept(wants, holds, instead=_without_parallel)


def _allocated_scopes(tir: Any) -> list[str]:
    return [str(buffer.scope()) for node in _walk(tir) for buffer in getattr(node, "alloc_buffers", ())]


def tiles_through_fragments(wants: str) -> Concept:
    """Global tiles move with T.copy into and out of a fragment (T.alloc_fragment)."""

    def holds(tir: Any) -> bool:
        copies = [call for call in _tile_ops(tir) if call.op.name == "tl.tileop.copy"]
        return bool(copies) and any(scope == "local.fragment" for scope in _allocated_scopes(tir))

    return Concept(wants, holds, instead=_without_fragment_copies)


def swizzled(wants: str) -> Concept:
    """The kernel calls T.use_swizzle: in the TIR an AttrStmt "threadblock_swizzle_pattern" (its value
    the rasterization, e.g. T.tvm_tuple("rasterization2DRow", panel_size)), which reorders the blocks."""

    def holds(tir: Any) -> bool:
        from tilelang import tvm

        return any(
            isinstance(node, tvm.tirx.AttrStmt) and node.attr_key == "threadblock_swizzle_pattern"
            for node in _walk(tir)
        )

    return Concept(wants, holds, instead=_swizzle_instead)


def staged_store(wants: str) -> Concept:
    """The T.gemm accumulator reaches global memory through shared memory: T.copy(acc, C_shared), then
    T.copy(C_shared, C[...]) (a fragment to shared tile, that tile to a global tensor)."""

    def holds(tir: Any) -> bool:
        calls = _tile_ops(tir)
        accumulators = {region_buffer(c.args[2]) for c in calls if c.op.name == "tl.tileop.gemm"}
        copies = [(region_buffer(c.args[0]), region_buffer(c.args[1])) for c in calls if c.op.name == "tl.tileop.copy"]
        staged = {dst for src, dst in copies if src in accumulators and _scope(dst).startswith("shared")}
        return any(src in staged and _scope(dst) == "global" for src, dst in copies)

    return Concept(wants, holds, instead=_staged_store_instead)


def _scope(buffer: Any) -> str:
    return str(buffer.scope()) if buffer is not None else ""


# ------------------------------------------------ what the kernel used instead, read from its TIR

_LOOP_NAME = {0: "T.serial", 1: "T.Parallel", 2: "T.vectorized", 3: "T.unroll"}  # tvm.tirx.ForKind
_SCOPE_NAME = {"global": "global memory", "local.fragment": "a fragment", "local": "a local buffer"}


def _where(buffer: Any) -> str:
    scope = _scope(buffer)
    return "shared memory" if scope.startswith("shared") else _SCOPE_NAME.get(scope, scope)


def _copies(tir: Any) -> list[tuple[Any, Any]]:
    """(source, destination) buffers of each T.copy, in program order."""
    pairs = [
        (region_buffer(c.args[0]), region_buffer(c.args[1])) for c in _tile_ops(tir) if c.op.name == "tl.tileop.copy"
    ]
    return [(src, dst) for src, dst in pairs if src is not None and dst is not None]


def _loop_name(loop: Any) -> str:
    if "num_stages" in loop.annotations:
        return "T.Pipelined"
    return _LOOP_NAME.get(int(loop.kind), "a loop")


def _innermost_loops(tir: Any) -> list[tuple[Any, Any]]:
    """(store, the innermost loop around it) for each element store (``X[i] = ...``) inside a loop that
    is not the grid's or the threads' binding."""
    from tilelang import tvm

    loops = [n for n in _walk(tir) if isinstance(n, tvm.tirx.For) and int(n.kind) in _LOOP_NAME]
    inside: dict[Any, list[Any]] = {}
    for loop in loops:
        stores: list[Any] = []
        tvm.tirx.stmt_functor.post_order_visit(loop.body, stores.append)
        inside[loop] = [n for n in stores if isinstance(n, tvm.tirx.BufferStore)]
    found = []
    for store in [n for n in _walk(tir) if isinstance(n, tvm.tirx.BufferStore)]:
        around = [loop for loop in loops if any(s.same_as(store) for s in inside[loop])]
        if around:
            found.append((store, min(around, key=lambda loop: len(inside[loop]))))
    return found


def _accumulating(store: Any) -> bool:
    """``acc[i] = acc[i] + ...`` (or any value that reads the element it writes)."""
    from tilelang import tvm

    reads: list[Any] = []
    tvm.tirx.stmt_functor.post_order_visit(store.value, reads.append)
    return any(isinstance(r, tvm.tirx.BufferLoad) and r.buffer.same_as(store.buffer) for r in reads)


def _loops_phrase(pairs: list[tuple[Any, Any]]) -> str:
    """The kinds of the loops around these stores: "T.serial", or "T.Parallel / T.serial" for two."""
    return " / ".join(sorted({_loop_name(loop) for _, loop in pairs}))


def _copy_phrase(src: Any, dst: Any) -> str:
    if _scope(src) == _scope(dst) == "global":
        return f"one T.copy from {src.name} straight into {dst.name}"
    return f"T.copy from {src.name} ({_where(src)}) into {dst.name} ({_where(dst)})"


def _without_parallel(tir: Any) -> str | None:
    """What moves the elements in a kernel with no T.Parallel loop."""
    if _gemms(tir):
        return "computes with T.gemm, with no T.Parallel loop"
    stored = [(s, loop) for s, loop in _innermost_loops(tir) if _scope(s.buffer) == "global"]
    if stored:
        store, loop = stored[0]
        if _loop_name(loop) == "T.serial":
            return (
                f"writes {store.buffer.name} in a T.serial loop over `{loop.loop_var.name}`, with no T.Parallel: "
                "every thread of the block runs that whole loop, so each element is written once per thread"
            )
        return f"writes {store.buffer.name} in a {_loop_name(loop)} loop, with no T.Parallel"
    copies = _copies(tir)
    if copies:
        return f"moves the data with {_copy_phrase(*copies[0])}, which hands the elements to the threads by itself"
    return None


def _without_fragment_copies(tir: Any) -> str | None:
    """How a kernel that should move tiles with T.copy through a fragment moves its data."""
    copies = _copies(tir)
    if not copies:
        stores = _innermost_loops(tir)
        written = sorted({s.buffer.name for s, _ in stores if _scope(s.buffer) == "global"})
        if written:
            return f"writes {', '.join(written)} element by element in a {_loops_phrase(stores)} loop, with no T.copy"
        return "has no T.copy"
    direct = [(src, dst) for src, dst in copies if _scope(src) == _scope(dst) == "global"]
    if direct:
        src, dst = direct[0]
        return (
            f"copies {src.name} straight into {dst.name} with one T.copy, global memory to global memory, "
            "with no fragment"
        )
    staged = [buffer for pair in copies for buffer in pair if _scope(buffer).startswith("shared")]
    if staged:
        return f"moves its tile through shared memory ({staged[0].name}, T.alloc_shared), with no fragment"
    return "has no fragment (T.alloc_fragment)"


def _folds(store: Any, kind: str) -> bool:
    """The store folds a value into the element it reads: ``acc = acc + x`` for "sum", ``m = T.max(m, x)``
    for "max"."""
    from tilelang import tvm

    node = {"sum": tvm.tirx.Add, "max": tvm.tirx.Max, "min": tvm.tirx.Min}.get(kind)
    return _accumulating(store) and node is not None and isinstance(store.value, node)


_FOLD_VERB = {"sum": "adds into", "max": "takes the maximum into", "min": "takes the minimum into"}


def _reduction_instead(kind: str) -> Callable[[Any], str | None]:
    def instead(tir: Any) -> str | None:
        others = sorted({str(c.args[2]).strip('"') for c in _tile_ops(tir) if c.op.name == "tl.tileop.reduce"})
        loops = [(s, loop) for s, loop in _innermost_loops(tir) if _folds(s, kind)]
        if loops:
            verb, name = _FOLD_VERB[kind], loops[0][0].buffer.name
            return f"{verb} {name} in its own {_loops_phrase(loops)} loop, with no T.reduce_{kind}"
        if others:
            return f"calls {', '.join(f'T.reduce_{o}' for o in others)}, and no T.reduce_{kind}"
        return None

    return instead


def _gemm_instead(tir: Any) -> str | None:
    loops = [(s, loop) for s, loop in _innermost_loops(tir) if _accumulating(s)]
    if loops:
        return (
            f"multiplies and adds into {loops[0][0].buffer.name} in its own {_loops_phrase(loops)} loop, with no T.gemm"
        )
    return None


_TILE_OP_NAME = {
    "tl.tileop.gemm": "T.gemm",
    "tl.tileop.reduce": "T.reduce_sum or another T.reduce",
    "tl.tileop.copy": "T.copy",
    "tl.tileop.atomicadd": "T.atomic_add",
}


def _tile_op_instead(op: str) -> Callable[[Any], str | None]:
    if op == "tl.tileop.gemm":
        return _gemm_instead
    if op == "tl.tileop.reduce":
        return _reduction_instead("sum")
    return _nothing


def _tile_op_found(op: str) -> Callable[[Any], str | None]:
    name = _TILE_OP_NAME.get(op, op)
    return lambda tir: f"calls {name}" if any(c.op.name == op for c in _tile_ops(tir)) else None


def _stages(tir: Any) -> list[tuple[Any, int]]:
    from tilelang import tvm

    return [
        (n, int(n.annotations["num_stages"]))
        for n in _walk(tir)
        if isinstance(n, tvm.tirx.For) and "num_stages" in n.annotations
    ]


def _pipelined_instead(min_stages: int) -> Callable[[Any], str | None]:
    def instead(tir: Any) -> str | None:
        staged = _stages(tir)
        if staged:
            loop, stages = max(staged, key=lambda pair: pair[1])
            return f"pipelines its loop over `{loop.loop_var.name}` with num_stages={stages}"
        serial = [loop for loop in _gemm_loops(tir) if int(loop.kind) == 0]
        if serial:
            return f"runs its loop over `{serial[0].loop_var.name}` as a plain T.serial loop"
        return None

    return instead


def _pipelined_found(tir: Any) -> str | None:
    staged = _stages(tir)
    if not staged:
        return None
    loop, stages = staged[0]
    return f"pipelines its loop over `{loop.loop_var.name}` with T.Pipelined(..., num_stages={stages})"


def _calls_in(stmt: Any) -> list[Any]:
    from tilelang import tvm

    nodes: list[Any] = []
    tvm.tirx.stmt_functor.post_order_visit(stmt, nodes.append)
    return [n.value for n in nodes if isinstance(n, tvm.tirx.Evaluate) and isinstance(n.value, tvm.tirx.Call)]


def _operands_not_shared(tir: Any) -> str | None:
    gemms = _gemms(tir)
    if not gemms:
        return "calls no T.gemm"
    for call in gemms:
        for i in (0, 1):
            buffer = region_buffer(call.args[i])
            if buffer is not None and not _scope(buffer).startswith("shared"):
                return f"gives T.gemm its {'AB'[i]} tile {buffer.name} from {_where(buffer)}"
    return None


def _gemm_operand_filled_instead(index: int) -> Callable[[Any], str | None]:
    def instead(tir: Any) -> str | None:
        gemms = _gemms(tir)
        if not gemms:
            return "calls no T.gemm"
        for store, loop in _innermost_loops(tir):
            if any(store.buffer.same_as(region_buffer(c.args[index])) for c in gemms):
                where = _loop_name(loop)
                return f"builds T.gemm's {'AB'[index]} tile {store.buffer.name} element by element in a {where} loop"
        return None

    return instead


def _left_operand_instead(tir: Any) -> str | None:
    gemms = _gemms(tir)
    if not gemms:
        return "calls no T.gemm"
    buffer = region_buffer(gemms[0].args[0])
    return f"gives T.gemm its A operand {buffer.name} from {_where(buffer)}" if buffer is not None else None


def _swizzle_instead(tir: Any) -> str | None:
    return "launches its blocks in plain order (no T.use_swizzle)"


def _staged_store_instead(tir: Any) -> str | None:
    accumulators = {region_buffer(c.args[2]) for c in _gemms(tir)}
    for src, dst in _copies(tir):
        if src in accumulators and _scope(dst) == "global":
            return f"copies the accumulator {src.name} straight into {dst.name} with T.copy"
    return None


def _launch_writes(tir: Any, name: str) -> list[dict[str, int]]:
    """Per launch (a top-level ``T.Kernel``: a blockIdx loop not inside another), how often the kernel
    writes the global buffer ``name``: {"atomic": T.atomic_add calls, "plain": T.copy / T.fill / stores}."""
    from tilelang import tvm

    tir_ = tvm.tirx
    launches: list[dict[str, int]] = []

    def count(node: Any, into: dict[str, int]) -> None:
        if isinstance(node, tir_.BufferStore) and node.buffer.name == name:
            into["plain"] += 1
        elif isinstance(node, tir_.Call) and node.op.name.startswith("tl.tileop."):
            for arg in node.args:
                if written_region(arg):
                    if arg.args[0].buffer.name == name:
                        into["atomic" if node.op.name == "tl.tileop.atomicadd" else "plain"] += 1

    def visit(node: Any) -> None:
        if isinstance(node, tir_.For) and _grid_loop(node):
            writes = {"atomic": 0, "plain": 0}
            tir_.stmt_functor.post_order_visit(node.body, lambda n: count(n, writes))
            launches.append(writes)
            return
        for child in _children(node):
            visit(child)

    visit(tir.body)
    return launches


def _children(node: Any) -> list[Any]:
    from tilelang import tvm

    tir_ = tvm.tirx
    if isinstance(node, tir_.SeqStmt):
        return list(node.seq)
    if isinstance(node, tir_.IfThenElse):
        return [node.then_case] + ([node.else_case] if node.else_case is not None else [])
    if isinstance(node, tir_.SBlockRealize):
        return [node.block]
    body = getattr(node, "body", None)
    return [body] if body is not None else []


def adds_only_atomically(name: str, wants: str) -> Concept:
    """Some launch adds into the global buffer ``name`` with T.atomic_add, and the launches that do write
    it no other way: a stream-K fix-up whose blocks share a tile (one atomic add somewhere beside a
    T.copy read-add-store is still a race between blocks)."""

    def holds(tir: Any) -> bool:
        adding = [w for w in _launch_writes(tir, name) if w["atomic"]]
        return bool(adding) and not any(w["plain"] for w in adding)

    def instead(tir: Any) -> str | None:
        launches = _launch_writes(tir, name)
        if not any(w["atomic"] for w in launches):
            return f"adds nothing into {name} with T.atomic_add"
        if any(w["atomic"] and w["plain"] for w in launches):
            return (
                f"also stores into {name} with T.copy or an assignment in the launch that adds to it, where "
                "other blocks add to the same tile at the same time"
            )
        return None

    return Concept(wants, holds, instead=instead)


_NARROW_FLOATS = ("float16", "bfloat16")


def _adds_into_itself(store: Any) -> bool:
    """``x = x + v``, the sum perhaps done in fp32 and cast back (``x = T.cast(x + v, "float16")``): the
    element is rounded to its own dtype after every addition either way."""
    from tilelang import tvm

    value = store.value
    while isinstance(value, tvm.tirx.Cast):
        value = value.value
    return _accumulating(store) and isinstance(value, tvm.tirx.Add)


def narrow_sums(tir: Any) -> list[str]:
    """Where the kernel keeps a running sum in a 16-bit float: "adds into acc (float16) in a T.serial
    loop", one phrase per buffer, in program order."""
    found: dict[str, str] = {}
    for store, loop in _innermost_loops(tir):
        if str(store.buffer.dtype) in _NARROW_FLOATS and _adds_into_itself(store):
            found.setdefault(
                store.buffer.name, f"adds into {store.buffer.name} ({store.buffer.dtype}) in a {_loop_name(loop)} loop"
            )
    for call in _tile_ops(tir):
        if call.op.name == "tl.tileop.reduce" and str(call.args[2]).strip('"') == "sum":
            target = region_buffer(call.args[1])
            if target is not None and str(target.dtype) in _NARROW_FLOATS:
                found.setdefault(target.name, f"sums into {target.name} ({target.dtype}) with T.reduce_sum")
        elif call.op.name == "tl.tileop.gemm":
            target = region_buffer(call.args[2])
            if target is not None and str(target.dtype) in _NARROW_FLOATS:
                found.setdefault(target.name, f"accumulates T.gemm into {target.name} ({target.dtype})")
    return list(found.values())


def sums_in_fp32(wants: str = "every running sum (the output accumulator, the row sums) kept in float32") -> Concept:
    """No running sum is kept in float16 or bfloat16: every ``x = x + ...`` store, T.reduce_sum target and
    T.gemm accumulator is float32. Over a few dozen keys the drift of a 16-bit sum hides inside the
    tolerance that rounding P to fp16 needs, so the small cases the CPU simulates cannot show it; the TIR can."""
    return Concept(
        wants,
        lambda tir: not narrow_sums(tir),
        instead=lambda tir: "; ".join(narrow_sums(tir)) or None,
    )
