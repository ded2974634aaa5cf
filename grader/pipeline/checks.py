"""Bugs the GPU can hide, found in the kernel's TIR before it runs.

An accumulator that is added into before anything cleared it holds whatever its registers or
shared memory held before. On the H200 that is often zero, so a kernel that forgets ``T.clear``
can pass on the GPU by luck and fail on the next launch or the next machine. The CPU simulator
fills such buffers with NaN and catches it; this check makes the GPU verdict agree.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from grader.tir import ELEMENT_ATOMICS, VECTOR_ATOMIC_ADDS, pointed_element, region_buffer, stmt_children

# Tile ops that add into their destination unless told to clear it: name -> (dst arg, clear arg).
_ACCUMULATING = {"tl.tileop.gemm": (2, 9), "tl.tileop.reduce": (1, 4)}
# Tile ops that write their destination: name -> dst arg.
_WRITING = {"tl.tileop.fill": 0, "tl.tileop.copy": 1, "tl.tileop.cumsum": 1}
_OP_NAME = {"tl.tileop.gemm": "T.gemm", "tl.tileop.reduce": "T.reduce"}


def _is_true(value: Any) -> bool:
    try:
        return bool(int(value))
    except (TypeError, ValueError):
        return False  # a symbolic flag: assume it may not clear


# On-chip buffers that start with whatever the registers or shared memory held (T.alloc_var's "local.var" takes
# an initial value, so it is not among them).
_LEFTOVER_SCOPES = ("local.fragment", "local", "shared", "shared.dyn")


def _updates_itself(store: Any) -> str | None:
    """How a store reads the element it writes: "+=" for ``x[idx] = x[idx] + ...`` (``x[idx] += ...``, as
    traced), "update" for other arithmetic on it (``x[idx] = x[idx] * f + t``, ``T.max(x[idx], v)``), None if
    it does not. Only arithmetic is followed: a select or call (``T.if_then_else(k == 0, 0, x[idx])``) may be
    how the kernel starts the value, so what is under one does not count."""
    from tilelang import tvm

    arithmetic = (tvm.tirx.Add, tvm.tirx.Sub, tvm.tirx.Mul, tvm.tirx.Max, tvm.tirx.Min)

    def reads_itself(node: Any) -> bool:
        if isinstance(node, tvm.tirx.BufferLoad):
            return node.buffer.same_as(store.buffer) and tvm.ir.structural_equal(
                list(node.indices), list(store.indices)
            )
        if isinstance(node, tvm.tirx.Cast):
            return reads_itself(node.value)
        return isinstance(node, arithmetic) and (reads_itself(node.a) or reads_itself(node.b))

    value = store.value
    if isinstance(value, tvm.tirx.Add) and any(
        isinstance(operand, tvm.tirx.BufferLoad) and reads_itself(operand) for operand in (value.a, value.b)
    ):
        return "+="
    return "update" if reads_itself(value) else None


def never_initialized(tir: Any) -> list[str]:
    """A sentence for each on-chip buffer that a tile op, or a store computed from the element it writes
    (``x[...] += ...``, ``x[...] = x[...] * f + t``), accumulates into before anything wrote it.

    Statements are visited in program order; a write anywhere earlier (a fill, a copy, a store in a
    T.Parallel loop, a gemm or reduce that clears) counts, so a clear inside the K loop passes here
    (it is a different bug, which the numbers catch).
    """
    from tilelang import tvm

    written: set[Any] = set()
    problems: list[str] = []

    def visit(node: Any) -> bool:
        if isinstance(node, tvm.tirx.BufferStore):
            buffer = node.buffer
            update = _updates_itself(node) if buffer not in written else None
            if update and str(buffer.scope()) in _LEFTOVER_SCOPES:
                label = buffer.name
                if update == "+=":
                    problems.append(_uncleared(f"`{label}[...] += ...`", label))
                else:
                    problems.append(_uncleared(f"`{label}[...] = f({label}[...])`", label, reads=True))
            written.add(buffer)
        elif isinstance(node, tvm.tirx.Evaluate) and isinstance(node.value, tvm.tirx.Call):
            call = node.value
            name = getattr(call.op, "name", "")
            if name in _WRITING and len(call.args) > _WRITING[name]:
                written.add(region_buffer(call.args[_WRITING[name]]))
            elif name in _ACCUMULATING:
                dst_arg, clear_arg = _ACCUMULATING[name]
                if len(call.args) <= max(dst_arg, clear_arg):
                    return True
                buffer = region_buffer(call.args[dst_arg])
                on_chip = buffer is not None and str(buffer.scope()) != "global"
                if on_chip and not _is_true(call.args[clear_arg]) and buffer not in written:
                    problems.append(_uncleared(_OP_NAME[name], buffer.name))
                written.add(buffer)
        return True

    tvm.tirx.stmt_functor.pre_order_visit(tir.body, visit)
    return list(dict.fromkeys(problems))


def _uncleared(what: str, name: str, reads: bool = False) -> str:
    """The sentence for an accumulation (``what``: a tile op, or ``x[...] += ...``) into ``name``, or an update
    that ``reads`` it (``x[...] = f(x[...])``), before anything cleared it."""
    if reads:
        return (
            f"{what} reads `{name}` before anything cleared it: its starting values are leftovers, so call "
            f"T.clear({name}) before the loop"
        )
    return (
        f"{what} adds into `{name}` before anything cleared it: its starting values are leftovers, so call "
        f"T.clear({name}) before the loop"
    )


# ------------------------------------------------------------------ launch grids and loop trip counts
#
# The frontend folds every size and block parameter into the TIR (``M // BLOCK_M`` arrives as the
# number 1), so a rounded-down count is read from evidence: a block index or loop variable ``v`` that
# steps through a dimension of extent S of a global tensor in strides of c (``v * c + ...``), runs
# E = S // c times with S % c != 0, and so never reaches the last S % c elements of that dimension.

_AXES = {"blockIdx.x": "first", "blockIdx.y": "second", "blockIdx.z": "third"}


@dataclass
class _Loop:
    var: Any
    extent: int
    start: int  # T.serial(1, n) starts at 1: its steps reach start + extent
    what: str  # how the learner wrote it: "T.Kernel's first argument (`bx`, blockIdx.x)", "T.Pipelined loop over `k`"
    grid: bool  # a block index of T.Kernel, not a loop


@dataclass
class _Shortfall:
    loop: _Loop
    buffer: str
    dim: int
    size: int  # S
    step: int  # c
    floors: bool  # E == S // c with S % c != 0 (else a zero-block axis that is short some other way)
    one_short: bool = False  # a loop (not a grid axis) one step short of S: E == S - 1 for c = 1, or S // c - 1


def _const(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def tir_loops(tir: Any) -> list[_Loop]:
    from tilelang import tvm

    found: list[_Loop] = []

    def visit(node: Any) -> None:
        if not isinstance(node, tvm.tirx.For) or (extent := _const(node.extent)) is None:
            return
        start = _const(node.min) or 0
        name = node.loop_var.name
        if node.kind == tvm.tirx.ForKind.THREAD_BINDING:
            tag = str(node.thread_binding.thread_tag) if node.thread_binding is not None else ""
            if tag in _AXES:
                what = f"T.Kernel's {_AXES[tag]} argument (`{name}`, {tag})"
                found.append(_Loop(node.loop_var, extent, start, what, True))
            return
        if "num_stages" in node.annotations:
            kind = "T.Pipelined"
        else:
            kind = {
                tvm.tirx.ForKind.PARALLEL: "T.Parallel",
                tvm.tirx.ForKind.UNROLLED: "T.unroll",
                tvm.tirx.ForKind.VECTORIZED: "T.vectorized",
            }.get(node.kind, "T.serial")
        found.append(_Loop(node.loop_var, extent, start, f"the {kind} loop over `{name}`", False))

    tvm.tirx.stmt_functor.post_order_visit(tir.body, visit)
    return found


def global_accesses(tir: Any) -> list[tuple[Any, list[Any], list[int], bool]]:
    """(buffer, indices with let-bound names substituted, extent per index, written) of every global
    access: a BufferLoad or BufferStore, or a T.copy/T.gemm region (its extents are the region's);
    writes first."""
    from tilelang import tvm

    binds: dict[Any, Any] = {}
    accesses: list[tuple[Any, list[Any], list[int], bool]] = []

    def visit(node: Any) -> None:
        if isinstance(node, tvm.tirx.Bind):
            binds[node.var] = node.value
        elif isinstance(node, tvm.tirx.Call) and getattr(node.op, "name", "") == "tl.region" and node.args:
            load = node.args[0]
            if isinstance(load, tvm.tirx.BufferLoad) and str(load.buffer.scope()) == "global":
                extents = [_const(e) or 1 for e in node.args[2:]]
                pad = [1] * (len(load.indices) - len(extents))
                written = _const(node.args[1]) in (2, 3)
                accesses.append((load.buffer, list(load.indices), pad + extents, written))
        elif isinstance(node, (tvm.tirx.BufferLoad, tvm.tirx.BufferStore)):
            if str(node.buffer.scope()) == "global":
                written = isinstance(node, tvm.tirx.BufferStore)
                accesses.append((node.buffer, list(node.indices), [1] * len(node.indices), written))

    tvm.tirx.stmt_functor.post_order_visit(tir.body, visit)
    # A region's BufferLoad is visited before its region call, so it was listed as a single-element
    # load too; that duplicate reaches less far than the region itself, which is harmless.

    def substituted(expr: Any) -> Any:
        for _ in range(4):  # let-bound names may be defined through others
            expr = tvm.tirx.stmt_functor.substitute(expr, binds)
        return expr

    accesses.sort(key=lambda access: not access[3])
    return [(buf, [substituted(i) for i in indices], extents, written) for buf, indices, extents, written in accesses]


def _rather(short: _Shortfall, before: _Shortfall | None, own: Collection[str]) -> bool:
    """Whether ``short`` says a loop's shortfall better than ``before``, found earlier: a count that rounds down
    before a loop one step short, then along the kernel's own tensors before a view it made, then the first."""
    if before is None:
        return True
    if before.one_short != short.one_short:
        return before.one_short
    return short.buffer in own and before.buffer not in own


def _shortfalls(tir: Any, own: Collection[str] = ()) -> list[_Shortfall]:
    """A loop or grid axis's shortfall along the first tensor it falls short on, writes first; along one of
    ``own`` (the kernel's tensors, which the learner named) where it falls short on one, rather than on a
    view the kernel made (``W2 = T.reshape(W, ...)``, whose flattened sizes the learner never wrote)."""
    from tilelang import tvm

    loops = tir_loops(tir)
    by_var = {loop.var: loop for loop in loops}
    analyzer = tvm.arith.Analyzer()
    for loop in loops:
        if loop.extent > 0:
            analyzer.bind(loop.var, tvm.ir.Range.from_min_extent(loop.start, loop.extent))
    accesses = []
    reached: set[tuple[str, int]] = set()  # (tensor, dimension) that some access reaches the end of
    for buffer, indices, extents, _ in global_accesses(tir):
        for dim, (index, extent) in enumerate(zip(indices, extents)):
            size = _const(buffer.shape[dim])
            if size is None:
                continue
            used = [v for v in tvm.tirx.analysis.undefined_vars(index) if v in by_var]
            if all(by_var[v].extent > 0 for v in used):
                if analyzer.const_int_bound(index).max_value + extent >= size:
                    reached.add((buffer.name, dim))  # a tail handled apart, a halo, a peeled first step
            accesses.append((buffer.name, dim, size, index, used))
    found: dict[Any, _Shortfall] = {}  # one per loop: along the first tensor it falls short on, writes first
    covers: set[Any] = set()  # loops whose steps span some dimension they index: sized right, so not short
    for buffer, dim, size, index, used in accesses:
        for var in used:
            loop = by_var[var]
            coefficients = tvm.arith.detect_linear_equation(index, [var])
            step = _const(coefficients[0]) if len(coefficients) == 2 else None
            if step is None or step < 1:
                continue
            count = loop.start + loop.extent  # the steps it takes, counted from 0
            if step == 1:  # only a loop one short is read from a step of 1 (a halo, a window: anything else)
                if not loop.grid and count == size - 1 and (buffer, dim) not in reached and var not in found:
                    found[var] = _Shortfall(loop, buffer, dim, size, step, False, one_short=True)
                continue
            if count * step >= size:
                covers.add(var)
            elif (buffer, dim) not in reached:
                floors = size % step != 0 and count == size // step
                one_short = not loop.grid and size % step == 0 and count == size // step - 1
                if floors or loop.extent == 0 or one_short:
                    short = _Shortfall(loop, buffer, dim, size, step, floors, one_short=one_short)
                    if _rather(short, found.get(var), own):
                        found[var] = short
    for var in covers:  # a block index stepping past one tensor's end but short of another's: an index bug
        found.pop(var, None)
    return list(found.values())


def _own(tensors: Any) -> set[str]:
    """The names of the kernel's spec tensors (its inputs and outputs)."""
    return {t.name for t in tensors}


def _name_of(value: int, names: Mapping[str, Any], prefer: str = "") -> str | None:
    matches = [name for name, v in names.items() if isinstance(v, int) and not isinstance(v, bool) and v == value]
    if prefer:
        matches.sort(key=lambda name: not name.upper().endswith(prefer.upper()))
    return matches[0] if matches else None


@dataclass
class _Names:
    size: str  # "N", or the number when no size has that value
    where: str  # "N = 129 (dimension 1 of C)"
    ceil: str  # "T.ceildiv(N, BLOCK_N)"
    floor: str  # "N // BLOCK_N"


def _described(short: _Shortfall, sizes: Mapping[str, int], params: Mapping[str, Any], tensors: Any) -> _Names:
    shapes = {t.name: tuple(t.shape) for t in tensors}
    size_name = None
    if short.buffer in shapes and short.dim < len(shapes[short.buffer]):
        size_name = shapes[short.buffer][short.dim]
    size_name = size_name or _name_of(short.size, sizes)
    block = _name_of(short.step, params, prefer=size_name or "") or str(short.step)
    size = size_name or str(short.size)
    where = f"{size} = {short.size}" if size_name else size
    where += f" (dimension {short.dim} of {short.buffer})"
    return _Names(size, where, f"T.ceildiv({size}, {block})", f"{size} // {block}")


def grid_problems(tir: Any, sizes: Mapping[str, int], params: Mapping[str, Any], tensors: Any = ()) -> list[str]:
    """A sentence for each T.Kernel extent (block count) that rounds a size down for this case: its
    blocks step through a dimension of a global tensor and stop short of its end.

    ``sizes`` and ``params`` are the case's (they name the size and the block parameter);
    ``tensors`` the kernel's spec Tensors (``kernel.inputs + kernel.outputs``), which say which size
    a dimension is. Empty when every grid axis covers what it indexes.
    """
    return [_sentence(s, sizes, params, tensors) for s in _shortfalls(tir, _own(tensors)) if s.loop.grid and s.floors]


def loop_problems(tir: Any, sizes: Mapping[str, int], params: Mapping[str, Any], tensors: Any = ()) -> list[str]:
    """A sentence for each T.serial / T.Pipelined / T.Parallel loop whose trip count rounds a size down
    for this case (``for k in T.Pipelined(K // BLOCK_K)`` with K = 131, BLOCK_K = 32 runs 4 steps and
    never reads the last 3 columns). Same arguments as :func:`grid_problems`."""
    return [
        _sentence(s, sizes, params, tensors) for s in _shortfalls(tir, _own(tensors)) if not s.loop.grid and s.floors
    ]


def one_short_problems(tir: Any, sizes: Mapping[str, int], params: Mapping[str, Any], tensors: Any = ()) -> list[str]:
    """A sentence for each T.serial / T.Pipelined / T.Parallel loop that stops one step short of a dimension of a
    global tensor it walks, for this case (``for k in T.serial(K - 1)``), where no access reaches that end.
    Same arguments as :func:`grid_problems`."""
    out = []
    for short in _shortfalls(tir, _own(tensors)):
        if not short.one_short:
            continue
        names = _described(short, sizes, params, tensors)
        count = short.loop.start + short.loop.extent
        if short.step == 1:
            out.append(
                f"{short.loop.what} runs {count} steps along {names.where}, one short: the last of {names.size} is "
                f"never visited. Run it {names.size} times, not {names.size} - 1"
            )
        else:
            out.append(
                f"{short.loop.what} runs {count} steps of {short.step} along {names.where}, one step short: the "
                f"last {short.step} of {names.size} are never visited. Run it {names.ceil} times, not one fewer"
            )
    return out


def floor_problems(tir: Any, sizes: Mapping[str, int], params: Mapping[str, Any], tensors: Any = ()) -> list[str]:
    """:func:`grid_problems` then :func:`loop_problems`: the causes to give a failed case."""
    return grid_problems(tir, sizes, params, tensors) + loop_problems(tir, sizes, params, tensors)


def _sentence(short: _Shortfall, sizes: Mapping[str, int], params: Mapping[str, Any], tensors: Any) -> str:
    names = _described(short, sizes, params, tensors)
    loop, count = short.loop, short.loop.start + short.loop.extent
    covered = count * short.step
    left = short.size - covered
    unit = ("block" if loop.grid else "step") + ("" if count == 1 else "s")
    verb = "launches" if loop.grid else "runs"
    return (
        f"{loop.what} {verb} {count} {unit} of {short.step} along {names.where}: that reaches {covered}, "
        f"so the last {left} of {names.size} are never {'computed' if loop.grid else 'visited'}. The count rounds "
        f"down: use {names.ceil} rather than {names.floor}"
    )


def empty_launch(tir: Any, sizes: Mapping[str, int], params: Mapping[str, Any], tensors: Any = ()) -> str:
    """The sentence that fails a case whose launch grid has no blocks (an extent of T.Kernel is 0 for
    these sizes, as ``T.Kernel(M // BLOCK_M)`` is when M < BLOCK_M), else "". Call it before launching
    or simulating: CUDA refuses a zero-block launch, which would read as a crash."""
    zero = [loop for loop in tir_loops(tir) if loop.grid and loop.extent == 0]
    if not zero:
        return ""
    loop = zero[0]
    first = f"{loop.what} is 0 for this case, so no block runs and nothing is written"
    for short in _shortfalls(tir, _own(tensors)):
        if short.loop.var.same_as(loop.var):
            names = _described(short, sizes, params, tensors)
            if short.floors:
                return (
                    f"{first}: it counts blocks of {short.step} along {names.where}, and {names.floor} rounds down "
                    f"to 0. Launch {names.ceil} blocks"
                )
            return f"{first}: its blocks step {short.step} along {names.where}, so launch {names.ceil} of them"
    return f"{first}. Launch at least one block: round the count up with T.ceildiv(size, BLOCK)"


# ------------------------------------------------------------------ a reduction that restarts every step

_REDUCE_NAMES = {"sum": "T.reduce_sum", "max": "T.reduce_max", "min": "T.reduce_min", "abssum": "T.reduce_abssum"}


def _reads(body: Any, buffer: Any) -> bool:
    """Whether ``body`` reads ``buffer``: an element load, or a tile op's region in read mode."""
    from tilelang import tvm

    regions: list[tuple[Any, bool]] = []  # (the region's load, whether the region is read)
    loads: list[Any] = []

    def visit(node: Any) -> None:
        if isinstance(node, tvm.tirx.Call) and getattr(node.op, "name", "") == "tl.region" and node.args:
            regions.append((node.args[0], _const(node.args[1]) in (1, 3)))  # 1 read, 2 write, 3 both
        elif isinstance(node, tvm.tirx.BufferLoad) and node.buffer.same_as(buffer):
            loads.append(node)

    tvm.tirx.stmt_functor.post_order_visit(body, visit)
    if any(read and load.buffer.same_as(buffer) for load, read in regions if getattr(load, "buffer", None) is not None):
        return True
    return any(not any(load.same_as(region) for region, _ in regions) for load in loads)


def reduce_restarts(tir: Any) -> list[str]:
    """A sentence for each tile reduction that clears its destination (``clear=True``, the default) inside
    a T.serial or T.Pipelined loop of more than one step, where the loop neither reads the destination nor
    reduces into it with clear=False, and the reduction is not under an ``if``: each step throws the
    previous steps' result away, so only the last step's tile counts. (Online softmax reduces each tile with
    clear=True too, but reads the tile's maximum in the same step.)"""
    from tilelang import tvm

    problems: list[str] = []

    def visit_loop(loop: Any) -> None:
        if not isinstance(loop, tvm.tirx.For) or loop.kind not in (tvm.tirx.ForKind.SERIAL, tvm.tirx.ForKind.UNROLLED):
            return
        if (_const(loop.extent) or 2) < 2:
            return
        kind = "T.Pipelined" if "num_stages" in loop.annotations else "T.serial"
        reduces: list[tuple[Any, Any]] = []  # (the reduce call, its destination) in the loop
        guarded: list[Any] = []  # calls under an if inside the loop (`if k == 0: ... clear=True`)

        def under_if(inner: Any) -> None:
            if isinstance(inner, tvm.tirx.Evaluate):
                guarded.append(inner.value)

        def visit(node: Any) -> None:
            if isinstance(node, tvm.tirx.Evaluate) and isinstance(node.value, tvm.tirx.Call):
                call = node.value
                if getattr(call.op, "name", "") == "tl.tileop.reduce" and len(call.args) >= 5:
                    reduces.append((call, region_buffer(call.args[1])))
            elif isinstance(node, tvm.tirx.IfThenElse):
                tvm.tirx.stmt_functor.post_order_visit(node, under_if)

        tvm.tirx.stmt_functor.post_order_visit(loop.body, visit)
        for call, buffer in reduces:
            if buffer is None or str(buffer.scope()) == "global" or not _is_true(call.args[4]):
                continue
            accumulates = any(b is not None and b.same_as(buffer) and not _is_true(c.args[4]) for c, b in reduces)
            if accumulates or any(call.same_as(g) for g in guarded) or _reads(loop.body, buffer):
                continue
            op = _REDUCE_NAMES.get(str(call.args[2]).strip('"'), "T.reduce")
            name = buffer.name
            problems.append(
                f"{op} into `{name}` inside the {kind} loop over `{loop.loop_var.name}` clears `{name}` on every "
                f"step (clear=True is its default) and nothing in the loop reads it, so only the last step's tile "
                f"counts: T.clear({name}) once before the loop and pass clear=False, or add the tiles into a "
                "float32 fragment and reduce once after the loop"
            )

    tvm.tirx.stmt_functor.post_order_visit(tir.body, visit_loop)
    return list(dict.fromkeys(problems))


# ------------------------------------------------------------------ a tile copied from its first element


def _region(arg: Any) -> tuple[Any, list[Any], list[int]] | None:
    """(buffer, start indices, extents) of a tile op's ``tl.region`` argument; extents padded with 1 on the
    left to the buffer's rank (TileLang fits a tile given by its first element to the buffer's last axes)."""
    from tilelang import tvm

    if not (isinstance(arg, tvm.tirx.Call) and getattr(arg.op, "name", "") == "tl.region" and arg.args):
        return None
    load = arg.args[0]
    if not isinstance(load, tvm.tirx.BufferLoad):
        return None
    extents = [_const(e) for e in arg.args[2:]]
    if any(e is None for e in extents):
        return None
    return load.buffer, list(load.indices), [1] * (len(load.indices) - len(extents)) + extents


def corner_copies(tir: Any) -> list[str]:
    """A sentence for each T.copy between a global tensor and a tile of fewer dimensions given by its first
    element only (``T.copy(W[o0, c, 0], w)`` with W 3-D and w 2-D): TileLang fits the tile to the tensor's
    LAST axes, so where the learner's index on a skipped axis steps in tiles of the tile's own extent
    (``by * BLOCK_O`` beside a BLOCK_O x K tile), the copy reads along another axis than the one meant.
    A skipped axis indexed by a step of 1 (a channel ``c`` of a serial loop, as ``X[c, t0]`` into a 1-D
    window) is the usual, right use and is not named."""
    from tilelang import tvm

    loops = tir_loops(tir)
    problems: list[str] = []

    def visit(node: Any) -> None:
        if not (isinstance(node, tvm.tirx.Call) and getattr(node.op, "name", "") == "tl.tileop.copy"):
            return
        if len(node.args) < 2:
            return
        src, dst = _region(node.args[0]), _region(node.args[1])
        if src is None or dst is None:
            return
        for tensor, tile in ((src, dst), (dst, src)):
            buffer, indices, extents = tensor
            tile_buffer = tile[0]
            if str(buffer.scope()) != "global" or str(tile_buffer.scope()) == "global":
                continue
            rank = len(tile_buffer.shape)
            skipped = len(indices) - rank
            tile_shape = [_const(s) for s in tile_buffer.shape]
            if skipped <= 0 or extents[:skipped] != [1] * skipped or tile_shape[0] in (None, 1):
                continue  # sliced out (the region's extents are the learner's), or a tile of one row
            for axis in range(skipped):
                index = indices[axis]
                for loop in loops:
                    coefficients = tvm.arith.detect_linear_equation(index, [loop.var])
                    step = _const(coefficients[0]) if len(coefficients) == 2 else None
                    if step is None or step <= 1 or step not in tile_shape:
                        continue
                    size = "x".join(str(s) for s in tile_shape)
                    axes = ", ".join(str(a) for a in range(skipped, len(indices)))
                    corner = f"{buffer.name}[{', '.join(str(i) for i in indices)}]"
                    call = (
                        f"T.copy({corner}, {tile_buffer.name})"
                        if tensor is src
                        else (f"T.copy({tile_buffer.name}, {corner})")
                    )
                    meant = _slices(indices, axis, step, [int(e) for e in tile_shape if e is not None])
                    problems.append(
                        f"{call} gives the tile of {buffer.name} by its first element only: TileLang then fits the "
                        f"{size} tile `{tile_buffer.name}` to the last {rank} axes of {buffer.name} (axes {axes}), so "
                        f"it does not run along axis {axis}, where `{index}` steps in tiles of {step}. Write the "
                        f"slices out, one per axis of {buffer.name}: {buffer.name}[{meant}]"
                    )
                    return

    tvm.tirx.stmt_functor.post_order_visit(tir.body, visit)
    return list(dict.fromkeys(problems))


def _slices(indices: list[Any], axis: int, step: int, tile_shape: list[int]) -> str:
    """The region the learner most likely meant, written with slices: the tile's extent ``step`` along
    ``axis``, its other extents along the last axes, one index elsewhere (``by * 32:by * 32 + 32, c, 0:3``)."""
    rest = list(tile_shape)
    rest.remove(step)
    extents = [1] * len(indices)
    extents[axis] = step
    for offset, extent in enumerate(reversed(rest)):
        extents[len(indices) - 1 - offset] = extent
    parts = []
    for index, extent in zip(indices, extents):
        start = _const(index)
        if extent == 1:
            parts.append(str(index))
        elif start is not None:
            parts.append(f"{start}:{start + extent}")
        else:
            parts.append(f"{index} : {index} + {extent}")
    return ", ".join(parts)


# ------------------------------------------------------------------ global buffers only ever added to


def added_to_but_never_set(tir: Any) -> list[str]:
    """A sentence for each global buffer the kernel only adds to with T.atomic_add (the tile form or one
    element), never storing, copying or filling it: the adds land on whatever it held, and an output starts
    as leftovers on the GPU (NaN in the grader). A launch that zeroes it first is the way."""
    from tilelang import tvm

    added: dict[Any, str] = {}
    set_somewhere: set[Any] = set()

    def visit(node: Any) -> None:
        if isinstance(node, tvm.tirx.BufferStore):
            set_somewhere.add(node.buffer.data)
        elif isinstance(node, tvm.tirx.Call):
            name = getattr(node.op, "name", "")
            if name in _WRITING and len(node.args) > _WRITING[name]:
                buffer = region_buffer(node.args[_WRITING[name]])
                if buffer is not None:
                    set_somewhere.add(buffer.data)
            elif name == "tl.tileop.atomicadd":
                buffer = region_buffer(node.args[1])
                if buffer is not None and str(buffer.scope()) == "global":
                    added.setdefault(buffer.data, buffer.name)
            elif (ELEMENT_ATOMICS.get(name) == "sum" or name in VECTOR_ATOMIC_ADDS) and node.args:
                load = pointed_element(node.args[0])
                if load is not None and str(load.buffer.scope()) == "global":
                    added.setdefault(load.buffer.data, load.buffer.name)

    tvm.tirx.stmt_functor.post_order_visit(tir.body, visit)
    return [
        f"`{name}` only ever receives T.atomic_add, which adds to what it already holds, and nothing sets it "
        f"first: on the GPU it starts with leftovers (the grader fills it with NaN). Zero it in a launch of its "
        f"own before the one that adds (a T.Parallel store of 0, or T.clear on a fragment copied into it)"
        for data, name in added.items()
        if data not in set_somewhere
    ]


def repeated_updates(tir: Any) -> list[str]:
    """A sentence for each store inside a T.Parallel loop nest that updates an element from itself
    (``s[i] = 1 / s[i]``, ``acc[i] += t[i]``) with an index that leaves out one of the nest's loop variables.

    TileLang splits the nest's iterations among the block's threads, and each thread runs its share one after
    another: the update runs once for every value of the left-out variable a thread covers (64 times in a
    128-wide loop on 2 threads a row), or races where other threads share the element. The simulator runs the
    nest as one step, reading before writing, so it applies the update once and the numbers come out right on
    the CPU alone. A store under an ``if`` that tests the left-out variable (``if j == 0:``) runs once: fine.
    """
    from tilelang import tvm

    tir_ = tvm.tirx
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()

    def reads_element(store: Any) -> bool:
        hits: list[Any] = []

        def visit(node: Any) -> None:
            if (
                isinstance(node, tir_.BufferLoad)
                and node.buffer.same_as(store.buffer)
                and tvm.ir.structural_equal(list(node.indices), list(store.indices))
            ):
                hits.append(node)

        tir_.stmt_functor.post_order_visit(store.value, visit)
        return bool(hits)

    def walk(stmt: Any, parallel: tuple[Any, ...], tested: frozenset[Any]) -> None:
        if isinstance(stmt, tir_.For):
            inner = parallel
            extent = _const(stmt.extent)
            if stmt.kind == tir_.ForKind.PARALLEL and (extent is None or extent > 1):
                inner = (*parallel, stmt.loop_var)
            walk(stmt.body, inner, tested)
        elif isinstance(stmt, tir_.IfThenElse):
            tested = tested | set(tir_.analysis.undefined_vars(stmt.condition))
            walk(stmt.then_case, parallel, tested)
            if stmt.else_case is not None:
                walk(stmt.else_case, parallel, tested)
        elif isinstance(stmt, tir_.SeqStmt):
            for child in stmt.seq:
                walk(child, parallel, tested)
        elif isinstance(stmt, tir_.BufferStore):
            if not parallel or not reads_element(stmt):
                return
            used = {var for index in stmt.indices for var in tir_.analysis.undefined_vars(index)}
            left_out = [v for v in parallel if v not in used and v not in tested]
            if left_out:
                name, var = stmt.buffer.name, str(left_out[0].name)
                if (name, var) not in seen:
                    seen.add((name, var))
                    problems.append(
                        f"`{name}` is updated from itself in a T.Parallel over `{var}`, which its index leaves "
                        f"out: on the GPU each thread repeats the update for every `{var}` it covers (the "
                        f"simulator does it once). Update `{name}` in a T.Parallel over its own indices only"
                    )
        else:
            for field in ("body", "block"):
                child = getattr(stmt, field, None)
                if child is not None and isinstance(child, tir_.Stmt):
                    walk(child, parallel, tested)

    walk(tir.body, (), frozenset())
    return problems


# ------------------------------------------------------------------ a mask counted from 0 in every tile

_COMPARISONS = {"LT": "<", "LE": "<=", "GT": ">", "GE": ">="}


def _tile_walks(tir: Any) -> dict[Any, tuple[_Loop, int, list[tuple[str, int, int]]]]:
    """The T.serial / T.Pipelined loops of more than one step that walk a global tensor in tiles: loop variable
    -> (the loop, its step, [(tensor, dimension, size) it walks])."""
    from tilelang import tvm

    loops = {loop.var: loop for loop in tir_loops(tir) if not loop.grid and "T.Parallel" not in loop.what}
    walks: dict[Any, tuple[_Loop, int, list[tuple[str, int, int]]]] = {}
    for buffer, indices, _, _ in global_accesses(tir):
        for dim, index in enumerate(indices):
            size = _const(buffer.shape[dim])
            for var in tvm.tirx.analysis.undefined_vars(index):
                loop = loops.get(var)
                if loop is None or size is None or loop.start + loop.extent < 2:
                    continue
                coefficients = tvm.arith.detect_linear_equation(index, [var])
                step = _const(coefficients[0]) if len(coefficients) == 2 else None
                if step is None or step <= 1:
                    continue
                walked = walks.setdefault(var, (loop, step, []))[2]
                if (buffer.name, dim, size) not in walked:
                    walked.append((buffer.name, dim, size))
    return walks


def _loads_any(expr: Any) -> bool:
    """Whether ``expr`` reads a buffer (a cursor kept in a T.alloc_var, say)."""
    from tilelang import tvm

    loads: list[Any] = []
    tvm.tirx.stmt_functor.post_order_visit(
        expr, lambda n: loads.append(n) if isinstance(n, tvm.tirx.BufferLoad) else None
    )
    return bool(loads)


def masks_without_offset(tir: Any, sizes: Mapping[str, int], params: Mapping[str, Any], tensors: Any = ()) -> list[str]:
    """A sentence for each mask inside a tile loop (one that walks a global tensor in tiles, several steps for
    this case) that compares a position inside the tile (T.Parallel's variables alone, ``c < N``) with the size
    of the dimension the loop walks: the position restarts at 0 in every tile, so from the second tile on the
    mask keeps what lies past the end (or drops what lies before it). ``j * BLOCK_N + c < N`` is meant. Same
    arguments as :func:`grid_problems`; empty when every mask counts from the tensor's start."""
    from tilelang import tvm

    tirx = tvm.tirx
    walks = _tile_walks(tir)
    if not walks:
        return []
    shapes = {t.name: tuple(t.shape) for t in tensors}
    problems: list[str] = []

    def conditions(node: Any, found: list[Any]) -> None:
        if isinstance(node, tirx.IfThenElse):
            found.append(node.condition)
        elif isinstance(node, tirx.Select):
            found.append(node.condition)
        elif isinstance(node, tirx.Call) and getattr(node.op, "name", "") in ("tir.if_then_else", "tirx.if_then_else"):
            found.append(node.args[0])

    def comparisons(condition: Any) -> list[Any]:
        if isinstance(condition, (tirx.And, tirx.Or)):
            return comparisons(condition.a) + comparisons(condition.b)
        if isinstance(condition, tirx.Not):
            return comparisons(condition.a)
        return [condition] if type(condition).__name__ in _COMPARISONS else []

    def visit_loop(node: Any) -> None:
        if not isinstance(node, tirx.For) or node.loop_var not in walks:
            return
        loop, step, walked = walks[node.loop_var]
        parallel: set[Any] = set()

        def collect(inner: Any) -> None:
            if isinstance(inner, tirx.For) and inner.kind == tirx.ForKind.PARALLEL:
                parallel.add(inner.loop_var)

        tirx.stmt_functor.post_order_visit(node.body, collect)
        found: list[Any] = []
        tirx.stmt_functor.post_order_visit(node.body, lambda n: conditions(n, found))
        for condition in found:
            for comparison in comparisons(condition):
                for left, position, bound in ((True, comparison.a, comparison.b), (False, comparison.b, comparison.a)):
                    size = _const(bound)
                    used = set(tirx.analysis.undefined_vars(position))
                    if size is None or not used or not used <= parallel or _loads_any(position):
                        continue
                    where = next(((b, d) for b, d, s in walked if s == size), None)
                    if where is None:
                        continue
                    buffer, dim = where
                    name = shapes[buffer][dim] if buffer in shapes and dim < len(shapes[buffer]) else None
                    name = name or _name_of(size, sizes) or str(size)
                    block = _name_of(step, params, prefer=name) or str(step)
                    op = _COMPARISONS[type(comparison).__name__]
                    said = f"{position} {op} {name}" if left else f"{name} {op} {position}"
                    meant = f"{node.loop_var.name} * {block} + {position}"
                    fixed = f"{meant} {op} {name}" if left else f"{name} {op} {meant}"
                    problems.append(
                        f"the mask `{said}` in {loop.what} compares `{position}`, a position inside the tile, with "
                        f"{name} = {size} (dimension {dim} of {buffer}): `{position}` starts again at 0 in every "
                        f"tile, so only the first tile is masked right. Add the tile's offset: `{fixed}`"
                    )
                    break

    tirx.stmt_functor.post_order_visit(tir.body, visit_loop)
    return list(dict.fromkeys(problems))


# ------------------------------------------------------------------ an accumulator overwritten on every step


def _index_vars_only(indices: list[Any], allowed: set[Any]) -> bool:
    """Whether every index uses only ``allowed`` variables (or none) and reads no buffer."""
    from tilelang import tvm

    for index in indices:
        if _loads_any(index) or not set(tvm.tirx.analysis.undefined_vars(index)) <= allowed:
            return False
    return True


def overwritten_each_step(tir: Any) -> list[str]:
    """A sentence for each on-chip buffer that a T.serial or T.Pipelined loop of more than one step overwrites on
    every step (``partial[i, j] = tile[i, j]`` where ``+=`` was meant, or a T.copy into it) at the same elements
    (its index uses none of the loop's own variables, only T.Parallel's), that nothing in the loop reads, and that
    the kernel reads after it: only the last step's values are left. A write under an ``if`` (the last step's
    alone, say) is left alone."""
    from tilelang import tvm

    tirx = tvm.tirx
    problems: list[str] = []

    def visit_loop(loop: Any) -> None:
        if not isinstance(loop, tirx.For) or loop.kind not in (tirx.ForKind.SERIAL, tirx.ForKind.UNROLLED):
            return
        if (_const(loop.extent) or 0) < 2:
            return
        kind = "T.Pipelined" if "num_stages" in loop.annotations else "T.serial"
        parallel: set[Any] = set()
        writes: list[tuple[Any, str]] = []  # (buffer, how the learner wrote the write)

        def walk(node: Any, guarded: bool) -> None:
            if isinstance(node, tirx.IfThenElse):
                guarded = True
            elif isinstance(node, tirx.For) and node.kind == tirx.ForKind.PARALLEL:
                parallel.add(node.loop_var)
            elif isinstance(node, tirx.BufferStore) and not guarded:
                if _updates_itself(node) is None and _index_vars_only(list(node.indices), parallel):
                    indices = ", ".join(str(i) for i in node.indices)
                    writes.append((node.buffer, f"`{node.buffer.name}[{indices}] = ...`"))
                return
            elif isinstance(node, tirx.Evaluate) and isinstance(node.value, tirx.Call) and not guarded:
                call = node.value
                if getattr(call.op, "name", "") == "tl.tileop.copy" and len(call.args) > 1:
                    region = _region(call.args[1])
                    if region is not None and _index_vars_only(region[1], set()):
                        writes.append((region[0], f"T.copy into `{region[0].name}`"))
                return
            for child in stmt_children(node):
                walk(child, guarded)

        walk(loop.body, False)
        for buffer, what in writes:
            if str(buffer.scope()) not in _LEFTOVER_SCOPES or _reads(loop.body, buffer):
                continue
            if not _reads(tir.body, buffer):  # read nowhere: not this bug
                continue
            name = buffer.name
            problems.append(
                f"{what} inside the {kind} loop over `{loop.loop_var.name}` overwrites `{name}` on every step, and "
                f"nothing in the loop reads it, so after the loop `{name}` holds the last step's values only: add "
                f"into it (`+=`), and clear it once before the loop"
            )

    tirx.stmt_functor.post_order_visit(tir.body, visit_loop)
    return list(dict.fromkeys(problems))


# ------------------------------------------------------------------ a tile loop that steps by another tile's size


def _params_named(value: int, params: Mapping[str, Any]) -> list[str]:
    """The block parameters whose value is ``value``."""
    return [n for n, v in params.items() if isinstance(v, int) and not isinstance(v, bool) and v == value]


def _only_name(value: int, params: Mapping[str, Any]) -> str:
    """``BLOCK_N = 16`` where one block parameter alone has the value, else the number."""
    names = _params_named(value, params)
    return f"{names[0]} = {value}" if len(names) == 1 else str(value)


def tile_steps_mismatched(
    tir: Any, sizes: Mapping[str, int], params: Mapping[str, Any], tensors: Any = ()
) -> list[str]:
    """A sentence for each T.copy from or to a global tensor, inside a T.serial or T.Pipelined loop of several steps,
    whose start moves by c elements along a dimension per step (``K[j * BLOCK_M, 0]``) while its tile is e > 1
    elements long there, e != c (BLOCK_N): the steps skip what lies between the tiles, or read parts twice. Along
    T.Kernel's axes only where e and c are two different block parameters (``B[k * BLOCK_K, bx * BLOCK_K]`` into a
    BLOCK_K x BLOCK_N tile). Same arguments as :func:`grid_problems`."""
    from tilelang import tvm

    tirx = tvm.tirx
    loops = {
        loop.var: loop for loop in tir_loops(tir) if "T.Parallel" not in loop.what and loop.start + loop.extent >= 2
    }
    problems: list[str] = []

    def visit(node: Any) -> None:
        if not (isinstance(node, tirx.Call) and getattr(node.op, "name", "") == "tl.tileop.copy" and node.args):
            return
        for arg in node.args[:2]:
            region = _region(arg)
            if region is None or str(region[0].scope()) != "global":
                continue
            buffer, indices, extents = region
            for dim, (index, extent) in enumerate(zip(indices, extents)):
                used = [v for v in tirx.analysis.undefined_vars(index) if v in loops]
                if len(used) != 1 or extent is None or extent <= 1:
                    continue  # a loop nested in another's steps (chunks of tiles) fills what the outer one skips
                for var in used:
                    coefficients = tvm.arith.detect_linear_equation(index, [var])
                    step = _const(coefficients[0]) if len(coefficients) == 2 else None
                    if step is None or step <= 1 or step == extent:
                        continue
                    if loops[var].grid:
                        # Blocks may overlap by design (a convolution's window is its block's outputs plus the
                        # taps' halo): only a tile one block parameter long, moved by a smaller one, is taken for
                        # the slip of `bx * BLOCK_K` written for `bx * BLOCK_N`. Gaps between blocks' tiles leave
                        # elements unwritten, which the comparison names from the output.
                        if step > extent or not _params_named(extent, params) or not _params_named(step, params):
                            continue
                        tile = _only_name(extent, params)
                        problems.append(
                            f"T.copy of {buffer.name} starts {_only_name(step, params)} further along dimension {dim} "
                            f"for each step of {loops[var].what}, but its tile is {tile} long there: neighbouring "
                            f"blocks' tiles overlap. Step by the tile's length, {tile.partition(' = ')[0]}, or make "
                            "the tile as long as the step"
                        )
                        return
                    what = "skip what lies between the tiles" if step > extent else "cover parts of it twice"
                    problems.append(
                        f"T.copy of {buffer.name} in {loops[var].what} starts each step {_only_name(step, params)} "
                        f"further along dimension {dim}, but its tile is {extent} long there: the steps {what}. Step "
                        f"by the tile's length, {extent}"
                    )
                    return

    tirx.stmt_functor.post_order_visit(tir.body, visit)
    return list(dict.fromkeys(problems))


def cleared_each_step(tir: Any) -> list[str]:
    """A sentence for each on-chip buffer that a T.serial or T.Pipelined loop of more than one step clears (T.clear,
    T.fill, not under an ``if``) and then only adds into (``acc[...] += ...``, a T.gemm or T.reduce with clear=False
    into it), never reading it otherwise, while the kernel reads it after the loop: each step throws the sums of the
    steps before away, so only the last step's is left. A per-tile sum the loop reads (flash attention's scores)
    is left alone."""
    from tilelang import tvm

    tirx = tvm.tirx
    problems: list[str] = []

    def other_reads(body: Any, buffer: Any) -> bool:
        """Whether ``body`` reads ``buffer`` other than to add into it."""
        found: list[Any] = []

        def visit(node: Any) -> None:
            if isinstance(node, tirx.BufferStore):
                if not node.buffer.same_as(buffer) and _reads(node.value, buffer):
                    found.append(node)
                for index in node.indices:
                    if _reads(index, buffer):
                        found.append(node)
            elif isinstance(node, tirx.Evaluate) and isinstance(node.value, tirx.Call):
                call = node.value
                name = getattr(call.op, "name", "")
                own = {"tl.tileop.gemm": 2, "tl.tileop.reduce": 1, "tl.tileop.fill": 0}.get(name)
                for position, arg in enumerate(call.args):
                    if position == own:
                        continue
                    region = _region(arg)
                    if region is not None and region[0].same_as(buffer) and _const(arg.args[1]) in (1, 3):
                        found.append(node)

        tirx.stmt_functor.post_order_visit(body, visit)
        return bool(found)

    def visit_loop(loop: Any) -> None:
        if not isinstance(loop, tirx.For) or loop.kind not in (tirx.ForKind.SERIAL, tirx.ForKind.UNROLLED):
            return
        if (_const(loop.extent) or 0) < 2:
            return
        kind = "T.Pipelined" if "num_stages" in loop.annotations else "T.serial"
        cleared: list[Any] = []

        def walk(node: Any) -> None:
            if isinstance(node, (tirx.IfThenElse, tirx.For)):
                return  # under an if, or in an inner loop: not once a step for sure
            if isinstance(node, tirx.Evaluate) and isinstance(node.value, tirx.Call):
                call = node.value
                if getattr(call.op, "name", "") == "tl.tileop.fill" and call.args:
                    buffer = region_buffer(call.args[0])
                    if buffer is not None and str(buffer.scope()) in _LEFTOVER_SCOPES:
                        cleared.append(buffer)
                return
            for child in stmt_children(node):
                walk(child)

        walk(loop.body)
        for buffer in cleared:
            added: list[Any] = []

            def adds(node: Any, buffer: Any = buffer, added: list[Any] = added) -> None:
                if isinstance(node, tirx.BufferStore) and node.buffer.same_as(buffer) and _updates_itself(node):
                    added.append(node)
                elif isinstance(node, tirx.Call) and getattr(node.op, "name", "") in _ACCUMULATING:
                    dst, clear = _ACCUMULATING[node.op.name]
                    if len(node.args) > max(dst, clear) and not _is_true(node.args[clear]):
                        target = region_buffer(node.args[dst])
                        if target is not None and target.same_as(buffer):
                            added.append(node)

            tirx.stmt_functor.post_order_visit(loop.body, adds)
            if not added or other_reads(loop.body, buffer) or not other_reads(tir.body, buffer):
                continue
            name = buffer.name
            problems.append(
                f"`{name}` is cleared inside the {kind} loop over `{loop.loop_var.name}`, on every step, and the loop "
                f"only adds into it, so after the loop `{name}` holds the last step's sum only: clear it once, before "
                "the loop"
            )

    tirx.stmt_functor.post_order_visit(tir.body, visit_loop)
    return list(dict.fromkeys(problems))
