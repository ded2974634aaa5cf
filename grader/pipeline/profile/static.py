"""The static half of ``--profile``: figures estimated from the admitted TIR, the generated CUDA source,
ptxas and the device profile, on any machine with nvcc (no GPU).

``estimate`` gives the ``source == "static"`` FIGURES; ``traffic``, ``occupancy`` and ``lowering`` are
its parts, and ``ptxas_usage`` comes from grader.pipeline.profile.ptxas.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from grader.devices import Profile
from grader.pipeline.profile.ptxas import instructions, ptxas_usage

__all__ = ["Occupancy", "Traffic", "estimate", "lowering", "occupancy", "ptxas_usage", "traffic"]

SAMPLED_BLOCKS = 512  # a larger grid is estimated from this many blocks, evenly spaced, scaled up
SAMPLED_STEPS = 16  # a loop whose steps differ (a bound or an `if` uses its index) is sampled this often
UNLIMITED = 1 << 30  # the blocks per SM a resource the block does not use allows

FLOAT_OPS = ("Add", "Sub", "Mul", "Div", "Max", "Min")
FLOAT_CALLS = ("exp", "exp2", "exp10", "log", "log2", "log10", "sqrt", "rsqrt", "tanh", "sigmoid", "pow", "fabs")


@dataclass(frozen=True)
class Traffic:
    """Global memory asked for and flops done, per block (average over the grid) and in all.

    ``loads_total`` and ``stores_total`` are bytes: global reads and global writes (atomics count as writes).
    """

    grid: tuple[int, ...]
    blocks: int
    threads: int  # per block, from T.Kernel(threads=...) (TileLang may add a producer warpgroup)
    bytes_per_block: float
    flops_per_block: float
    bytes_total: float
    flops_total: float
    loads_total: float
    stores_total: float
    launches: int = 1  # T.Kernel launches in the function (matmul_streamk: 3)
    main_launch: int = 0  # which one grid, threads and the per-block figures describe


@dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int
    occupancy_pct: float  # active warps / the SM's maximum
    limit: str  # "registers", "shared memory", "threads" or "blocks per SM"


# ------------------------------------------------------------------------------------------ traffic


class _Count:
    def __init__(self) -> None:
        self.loads = 0.0
        self.stores = 0.0
        self.flops = 0.0


class _Walker:
    """One block's walk over the kernel body: what it reads and writes in global memory and its flops."""

    def __init__(self, tvm: Any, global_data: set[Any], block_vars: dict[Any, int], shapes: dict | None = None):
        self.tvm = tvm
        self.tir = tvm.tirx
        self.analyzer = tvm.arith.Analyzer()
        self.global_data = global_data
        self.env: dict[Any, Any] = {var: self.tir.IntImm("int32", value) for var, value in block_vars.items()}
        self.count = _Count()
        self.shapes = {} if shapes is None else shapes  # what a loop's body looks like, shared by the blocks

    # -- expressions
    def value(self, expr: Any) -> Any:
        return self.analyzer.simplify(self.tir.stmt_functor.substitute(expr, self.env)) if self.env else expr

    def const(self, expr: Any) -> int | None:
        simplified = self.value(expr)
        return int(simplified.value) if isinstance(simplified, self.tir.IntImm) else None

    def upper_extent(self, expr: Any) -> int:
        """An extent the walk cannot fix: the largest value it can take (0 when unbounded)."""
        bound = self.analyzer.const_int_bound(self.value(expr))
        return max(0, int(bound.max_value)) if bound.max_value < (1 << 40) else 0

    def expression(self, expr: Any, times: float) -> None:
        """Element loads of global buffers and floating-point operations in ``expr``, ``times`` times."""
        tir = self.tir

        def visit(node: Any) -> bool:
            if isinstance(node, tir.BufferLoad) and node.buffer.data in self.global_data:
                self.count.loads += times * _itemsize(node.buffer.dtype)
            elif type(node).__name__ in FLOAT_OPS and _is_float(node.dtype):
                self.count.flops += times
            elif isinstance(node, tir.Call):
                name = getattr(node.op, "name", "")
                short = name.rpartition(".")[2]
                if name in ("tl.access_ptr", "tl.region", "tirx.address_of"):
                    return False  # an address, not a load (an atomic's target is counted as its store)
                if short == "fma" and _is_float(node.dtype):
                    self.count.flops += 2 * times
                elif short in FLOAT_CALLS and _is_float(node.dtype):
                    self.count.flops += times
                elif "atomic" in name:
                    self.atomic_element(node, times)
            return True

        tir.stmt_functor.pre_order_visit(expr, visit)

    def atomic_element(self, call: Any, times: float) -> None:
        for arg in call.args:
            buffer = getattr(arg, "buffer", None)
            if buffer is None and isinstance(arg, self.tir.Call) and arg.args:
                buffer = getattr(arg.args[0], "buffer", None)
            if buffer is not None and buffer.data in self.global_data:
                self.count.stores += times * _itemsize(buffer.dtype)
                self.count.flops += times
                return

    # -- tile ops
    def region(self, arg: Any) -> tuple[Any, int] | None:
        """(buffer, elements) of a tl.region argument, the elements clipped to the buffer where the
        region's corner is known (a tail block asks only for what lies inside the tensor)."""
        key = ("region", arg.__hash__())
        if key not in self.shapes:  # the parts that are the same in every block
            from grader.tir import region_buffer

            buffer = region_buffer(arg)
            if buffer is None:
                self.shapes[key] = None
            else:
                load = arg.args[0] if isinstance(arg, self.tir.Call) and arg.args else arg
                extents = [int(e) for e in arg.args[2:]] if isinstance(arg, self.tir.Call) else []
                indices = list(getattr(load, "indices", []))
                shape = [int(s) if isinstance(s, self.tir.IntImm) else None for s in buffer.shape]
                # tl.region lists extents for the trailing dimensions; leading ones are 1
                extents = [1] * (len(indices) - len(extents)) + extents
                dims = list(zip(indices, extents, shape, strict=False))
                self.shapes[key] = (buffer, buffer.data in self.global_data, dims, math.prod(extents))
        shape = self.shapes[key]
        if shape is None:
            return None
        buffer, in_global, dims, elements = shape
        if not in_global:  # on-chip tiles are never clipped, and their bytes are not counted
            return buffer, elements
        elements = 1
        for index, extent, size in dims:
            start = self.const(index)
            if start is not None and size is not None:
                extent = max(0, min(start + extent, size) - max(start, 0))
            elements *= extent
        return buffer, elements

    def tile_op(self, call: Any, times: float) -> None:
        name = call.op.name
        regions = [r for r in (self.region(a) for a in call.args if _is_region(self.tir, a)) if r]
        if name == "tl.tileop.copy" and len(regions) >= 2:
            (src, n_src), (dst, n_dst) = regions[0], regions[1]
            moved = min(n_src, n_dst)
            if src.data in self.global_data:
                self.count.loads += times * moved * _itemsize(src.dtype)
            if dst.data in self.global_data:
                self.count.stores += times * moved * _itemsize(dst.dtype)
        elif name == "tl.tileop.gemm" and len(regions) >= 3:
            m, n, k = (self.const(call.args[i]) or 0 for i in (5, 6, 7))
            self.count.flops += times * 2 * m * n * k
            for position, (buffer, elements) in enumerate(regions[:3]):
                if buffer.data in self.global_data:
                    self.count.loads += times * elements * _itemsize(buffer.dtype)
                    if position == 2:
                        self.count.stores += times * elements * _itemsize(buffer.dtype)
        elif name in ("tl.tileop.reduce", "tl.tileop.cumsum") and regions:
            src, elements = regions[0]
            self.count.flops += times * elements
            if src.data in self.global_data:
                self.count.loads += times * elements * _itemsize(src.dtype)
            if len(regions) > 1 and regions[1][0].data in self.global_data:
                self.count.stores += times * regions[1][1] * _itemsize(regions[1][0].dtype)
        elif "atomic" in name and regions:
            src, elements = regions[0]
            dst = regions[-1][0]
            self.count.flops += times * elements
            if dst.data in self.global_data:
                self.count.stores += times * elements * _itemsize(dst.dtype)
            if len(regions) > 1 and src.data in self.global_data:
                self.count.loads += times * elements * _itemsize(src.dtype)
        elif name == "tl.tileop.fill" and regions:
            buffer, elements = regions[0]
            if buffer.data in self.global_data:
                self.count.stores += times * elements * _itemsize(buffer.dtype)
        else:  # an element-wise call (T.atomic_add on one element) or anything else: its loads and flops
            self.expression(call, times)

    # -- statements
    def stmt(self, node: Any, times: float) -> None:
        tir = self.tir
        if times == 0:
            return
        if isinstance(node, tir.SeqStmt):
            for child in node.seq:
                self.stmt(child, times)
        elif isinstance(node, tir.Bind):
            self.env[node.var] = self.value(node.value)
        elif isinstance(node, tir.For):
            self.loop(node, times)
        elif isinstance(node, tir.IfThenElse):
            self.branch(node, times)
        elif isinstance(node, tir.BufferStore):
            self.expression(node.value, times)
            for index in node.indices:
                self.expression(index, times)
            if node.buffer.data in self.global_data:
                self.count.stores += times * _itemsize(node.buffer.dtype)
        elif isinstance(node, tir.Evaluate):
            value = node.value
            if isinstance(value, tir.Call) and getattr(value.op, "name", "").startswith("tl.tileop."):
                self.tile_op(value, times)
            else:
                self.expression(value, times)
        elif isinstance(node, tir.SBlockRealize):
            self.stmt(node.block.body, times)
        elif isinstance(node, tir.SBlock):
            self.stmt(node.body, times)
        else:
            body = getattr(node, "body", None)  # AttrStmt, LetStmt-like wrappers, AllocBuffer ...
            if isinstance(node, tir.AttrStmt) or body is not None:
                if getattr(node, "var", None) is not None and getattr(node, "value", None) is not None:
                    self.env[node.var] = self.value(node.value)
                if body is not None:
                    self.stmt(body, times)

    def loop(self, node: Any, times: float) -> None:
        tir = self.tir
        start = self.const(node.min)
        extent = self.const(node.extent)
        if extent is None:  # a bound this walk cannot fix (a value read at run time): its largest
            extent = self.upper_extent(node.extent)
        if start is None:
            start = 0
        if extent <= 0:
            return
        var = node.loop_var
        # T.Parallel and vectorized loops are spread over threads: their index gets a range, which
        # decides conditions that hold for the whole tile; only sequential loops are walked step by step
        spread = node.kind in (tir.ForKind.PARALLEL, tir.ForKind.VECTORIZED)
        key = node.__hash__()  # the node's handle: the same loop in every block and every step
        if key not in self.shapes:
            self.shapes[key] = (
                _steps_differ(tir, node.body, var),
                _places_global_tile(tir, node.body, var, self.global_data),
            )
        differ, places_tile = self.shapes[key]
        if spread or not differ:
            if not spread and extent > 1 and places_tile:
                # the last step's tile may stick out of the tensor (a K tail): walk it on its own, and
                # let the first step stand for the others
                for step, count in ((start, extent - 1), (start + extent - 1, 1)):
                    self.env[var] = tir.IntImm(var.dtype, step)
                    self.stmt(node.body, times * count)
                self.env.pop(var, None)
                return
            self.analyzer.bind(var, self.tvm.ir.Range.from_min_extent(start, extent), allow_override=True)
            self.stmt(node.body, times * extent)
            return
        steps = range(start, start + extent)
        if extent > SAMPLED_STEPS:
            steps = [start + (i * extent) // SAMPLED_STEPS for i in range(SAMPLED_STEPS)]
        scale = extent / len(steps)
        for step in steps:
            self.env[var] = tir.IntImm(var.dtype, step)
            self.stmt(node.body, times * scale)
        self.env.pop(var, None)

    def branch(self, node: Any, times: float) -> None:
        condition = self.value(node.condition)
        if isinstance(condition, self.tir.IntImm) or self.analyzer.can_prove(condition):
            taken = bool(condition.value) if isinstance(condition, self.tir.IntImm) else True
        elif self.analyzer.can_prove(self.tir.Not(condition)):
            taken = False
        else:  # undecidable here (it depends on a thread's index or a value read at run time): taken
            taken = True
        if taken:
            self.stmt(node.then_case, times)
        elif node.else_case is not None:
            self.stmt(node.else_case, times)


def _steps_differ(tir: Any, body: Any, var: Any) -> bool:
    """Whether a loop's steps may do different work: an inner loop's bound or an `if`'s condition uses
    its index (a causal mask's triangle, a tail test)."""
    uses: list[bool] = []

    def mentions(expr: Any) -> bool:
        found: list[bool] = []
        tir.stmt_functor.post_order_visit(expr, lambda n: found.append(True) if n.same_as(var) else None)
        return bool(found)

    def visit(node: Any) -> None:
        if uses:
            return
        if isinstance(node, tir.For) and (mentions(node.extent) or mentions(node.min)):
            uses.append(True)
        elif isinstance(node, tir.IfThenElse) and mentions(node.condition):
            uses.append(True)
        elif isinstance(node, tir.Bind) and mentions(node.value):
            # a value bound from the index may feed a bound or a condition further on
            uses.append(_bound_feeds_control(tir, body, node.var))

    tir.stmt_functor.post_order_visit(body, visit)
    return bool(uses and uses[0])


def _places_global_tile(tir: Any, body: Any, var: Any, global_data: set[Any]) -> bool:
    """Whether the loop index (or a value bound from it) places a tile op's region in a global tensor."""
    dependent = [var]
    found: list[bool] = []

    def mentions(expr: Any) -> bool:
        hits: list[bool] = []

        def visit_var(n: Any) -> None:
            if isinstance(n, tir.Var) and any(n.same_as(d) for d in dependent):
                hits.append(True)

        tir.stmt_functor.post_order_visit(expr, visit_var)
        return bool(hits)

    def visit(node: Any) -> None:
        if found:
            return
        if isinstance(node, tir.Bind) and mentions(node.value):
            dependent.append(node.var)
        elif _is_region(tir, node):
            load = node.args[0]
            if getattr(load, "buffer", None) is not None and load.buffer.data in global_data:
                if any(mentions(index) for index in load.indices):
                    found.append(True)

    tir.stmt_functor.pre_order_visit(body, lambda n: visit(n) is None)
    return bool(found)


def _bound_feeds_control(tir: Any, body: Any, var: Any) -> bool:
    found: list[bool] = []

    def visit(node: Any) -> None:
        exprs = []
        if isinstance(node, tir.For):
            exprs = [node.extent, node.min]
        elif isinstance(node, tir.IfThenElse):
            exprs = [node.condition]
        for expr in exprs:
            tir.stmt_functor.post_order_visit(expr, lambda n: found.append(True) if n.same_as(var) else None)

    tir.stmt_functor.post_order_visit(body, visit)
    return bool(found)


def _is_region(tir: Any, arg: Any) -> bool:
    return isinstance(arg, tir.Call) and getattr(arg.op, "name", "") == "tl.region"


def _is_float(dtype: Any) -> bool:
    return str(dtype).startswith(("float", "bfloat"))


def _itemsize(dtype: Any) -> float:
    text = str(dtype)
    bits = int(re.search(r"(\d+)", text).group(1)) if re.search(r"\d", text) else 8
    lanes = re.search(r"x(\d+)$", text)
    return bits / 8 * (int(lanes.group(1)) if lanes else 1)


@dataclass(frozen=True)
class _Launch:
    grid: list[tuple[Any, int]]  # the blockIdx loops, outermost first: (var, extent)
    threads: int
    body: Any


def _launches(tvm: Any, tir_func: Any) -> list[_Launch]:
    """Each T.Kernel of the function (matmul_streamk has three): its grid, threads and body."""
    tir = tvm.tirx
    found: list[_Launch] = []

    def threads_of(body: Any) -> int:
        counts: list[int] = []

        def visit(node: Any) -> None:
            if isinstance(node, tir.SBlock) and node.annotations and "tl.launch_threads" in node.annotations:
                counts.append(math.prod(int(t) for t in node.annotations["tl.launch_threads"]))

        tir.stmt_functor.post_order_visit(body, visit)
        return counts[0] if counts else 1

    def is_grid(node: Any) -> bool:
        return (
            isinstance(node, tir.For)
            and node.thread_binding is not None
            and str(node.thread_binding.thread_tag).startswith("blockIdx")
        )

    def search(node: Any) -> None:
        if is_grid(node):
            grid = []
            while is_grid(node):
                grid.append((node.loop_var, int(node.extent)))
                node = node.body
            found.append(_Launch(grid, threads_of(node), node))
        elif isinstance(node, tir.SeqStmt):
            for child in node.seq:
                search(child)
        elif isinstance(node, tir.SBlockRealize):
            search(node.block.body)
        elif getattr(node, "body", None) is not None:
            search(node.body)

    search(tir_func.body)
    return found


def _global_buffers(tvm: Any, tir_func: Any) -> set[Any]:
    """The data of the tensors in global memory: the parameters, and workspaces allocated in global
    scope outside the kernels (matmul_streamk's ``partial``)."""
    tir = tvm.tirx
    data = {buffer.data for buffer in tir_func.buffer_map.values()}

    def visit(node: Any) -> None:
        if isinstance(node, tir.SBlock):
            data.update(b.data for b in node.alloc_buffers if b.scope() == "global")

    tir.stmt_functor.post_order_visit(tir_func.body, visit)
    return data


def _count_launch(tvm: Any, launch: _Launch, global_data: set[Any]) -> tuple[float, float, float]:
    """(loads, stores, flops) of all the blocks of one launch."""
    extents = [extent for _, extent in launch.grid]
    blocks = math.prod(extents)
    if not _depends_on_block(tvm.tirx, launch.body, [var for var, _ in launch.grid]):
        chosen = [0]
    elif blocks <= SAMPLED_BLOCKS:
        chosen = list(range(blocks))
    else:
        chosen = sorted({(i * blocks) // SAMPLED_BLOCKS for i in range(SAMPLED_BLOCKS)})
    loads = stores = flops = 0.0
    shapes: dict[Any, Any] = {}
    for linear in chosen:
        values: dict[Any, int] = {}
        rest = linear
        for var, extent in launch.grid:
            values[var] = rest % extent
            rest //= extent
        walker = _Walker(tvm, global_data, values, shapes)
        walker.stmt(launch.body, 1.0)
        loads += walker.count.loads
        stores += walker.count.stores
        flops += walker.count.flops
    scale = blocks / len(chosen)
    return loads * scale, stores * scale, flops * scale


def traffic(tir: Any, sizes: dict[str, int] | None = None) -> Traffic:
    """The global bytes and flops of the launched grid of ``tir`` (an admitted PrimFunc: a bench case
    is traced with its sizes and block parameters as ints, so every shape is a number).

    Counting rules (an estimate, per block, then summed over the blocks):
    - a tile op (T.copy, T.gemm, T.reduce_*, T.cumsum, T.atomic_add, T.fill) whose region lies in a
      global tensor counts the region's elements x the element size, clipped to the tensor where the
      region's corner is known: the block indices are, and a sequential loop whose index places a
      global tile is walked at its last step (a K tail) and at its first, which stands for the rest;
      a T.copy between two tensors counts the smaller region on each side;
    - a BufferLoad or BufferStore of a global tensor (T.Parallel bodies, scalar code) counts one
      element each time it runs; an atomic on one element counts as a store and one flop;
    - flops: T.gemm 2 x M x N x K of its tile per call; T.reduce_* and T.cumsum one per input
      element; in element-wise code each floating add, sub, mul, div, max, min and exp/log-like call
      counts 1, an fma 2 (casts and integer index arithmetic count nothing);
    - loops multiply their body by their trip count; a sequential loop (T.serial, T.Pipelined,
      T.unroll) whose steps may differ (an inner bound or an `if` uses its index, as in a causal mask)
      is walked step by step, or on 16 evenly spaced steps scaled up when it has more; a T.Parallel
      loop's index is given its range instead, so a tail test over a whole tile is decided, and one
      true for part of the tile only counts as taken;
    - an `if` whose condition the walk cannot decide (it depends on a thread index or a value read at
      run time) counts as taken, its else branch as not; a loop bound read at run time counts at its
      largest value;
    - every block is walked when the grid has at most 512; a larger grid walks 512 evenly spaced
      blocks and scales their sum;
    - a function with several T.Kernel launches (matmul_streamk) sums all of them in the totals; grid,
      threads and the per-block figures are those of its main launch (the most flops, then bytes).
    ``sizes`` is accepted for callers that have them; the traced shapes are what counts.
    """
    from tilelang import tvm

    global_data = _global_buffers(tvm, tir)
    launches = _launches(tvm, tir)
    if not launches:
        return Traffic((1,), 1, 1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    counts = [_count_launch(tvm, launch, global_data) for launch in launches]
    main_index = max(range(len(launches)), key=lambda i: (counts[i][2], counts[i][0] + counts[i][1]))
    main, (main_loads, main_stores, main_flops) = launches[main_index], counts[main_index]
    blocks = math.prod(extent for _, extent in main.grid)
    loads, stores, flops = (sum(c[i] for c in counts) for i in range(3))
    return Traffic(
        grid=tuple(extent for _, extent in main.grid),
        blocks=blocks,
        threads=main.threads,
        bytes_per_block=(main_loads + main_stores) / blocks,
        flops_per_block=main_flops / blocks,
        bytes_total=loads + stores,
        flops_total=flops,
        loads_total=loads,
        stores_total=stores,
        launches=len(launches),
        main_launch=main_index,
    )


def _depends_on_block(tir: Any, body: Any, block_vars: list[Any]) -> bool:
    """Whether any block index (or a value bound from one) reaches a loop bound, a condition, or the
    corner of a region the block may clip at a tensor's edge: then blocks differ and each is walked."""
    found: list[bool] = []
    targets = list(block_vars)

    def visit(node: Any) -> None:
        if not found and isinstance(node, tir.Var) and any(node.same_as(v) for v in targets):
            found.append(True)

    tir.stmt_functor.post_order_visit(body, visit)
    return bool(found)


# ------------------------------------------------------------------------------------------ occupancy


def occupancy(profile: Profile, threads: int, registers: int, shared_bytes: int) -> Occupancy:
    """How many blocks of this shape one SM holds, and the warps they keep active.

    Registers are allocated per warp in units of 256 (a thread's count rounded up so that 32 threads
    take a multiple of 256); shared memory in units of 128 bytes, plus the runtime's reservation per
    block (1 KiB on sm_80 and later). The smallest of the four limits wins; on a tie the first of
    registers, shared memory, threads, blocks per SM is named.
    """
    warps = max(1, math.ceil(threads / 32))
    limits: dict[str, int] = {}
    if registers > 0:
        per_warp = math.ceil(registers * 32 / 256) * 256
        limits["registers"] = (profile.registers_per_sm // per_warp) // warps
    else:  # no figure (ptxas not run): registers do not limit
        limits["registers"] = UNLIMITED
    if shared_bytes > 0:
        per_block = math.ceil(shared_bytes / 128) * 128 + profile.shared_reserved_per_block
        limits["shared memory"] = profile.shared_per_sm // per_block
    else:
        limits["shared memory"] = UNLIMITED
    limits["threads"] = profile.max_warps_per_sm // warps
    limits["blocks per SM"] = profile.max_blocks_per_sm
    limit = min(limits, key=lambda key: limits[key])  # dicts keep order: the first of a tie
    blocks = max(0, limits[limit])
    return Occupancy(
        blocks_per_sm=blocks,
        occupancy_pct=100.0 * blocks * warps / profile.max_warps_per_sm,
        limit=limit,
    )


# ------------------------------------------------------------------------------------------ lowering

# Bytes of the types TileLang 0.1.15 casts a pointer to for a vectorised access: `*(uint4*)(A + i)`.
VECTOR_TYPES = {
    "char": 1, "uchar": 1, "int8_t": 1, "uint8_t": 1, "half_t": 2, "half": 2, "__half": 2, "bfloat16_t": 2,
    "short": 2, "ushort": 2, "int": 4, "uint": 4, "float": 4, "uint1": 4, "int1": 4, "float1": 4, "half2": 4,
    "__half2": 4, "nv_bfloat162": 4, "bfloat162": 4, "char4": 4, "uchar4": 4, "uint2": 8, "int2": 8,
    "float2": 8, "double": 8, "longlong": 8, "ulonglong": 8, "int64_t": 8, "uint64_t": 8, "uint4": 16,
    "int4": 16, "float4": 16, "double2": 16, "longlong2": 16, "ulonglong2": 16, "ulonglong4": 32,
    "longlong4": 32, "double4": 32,
}  # fmt: skip


def lowering(kernel_source: str) -> dict[str, Any]:
    """What TileLang lowered the tile ops to, read from the generated CUDA source.

    - tensor_cores: "wgmma", "mma.sync" or "none"; copies: "TMA", "cp.async" or "plain loads";
    - vector_bytes: the widest access to a global tensor (a pointer parameter of the kernel): a cast
      such as ``*(uint4*)(A + i)`` is 16 bytes, ``A[i]`` its element's size, ``cp_async_gs<16>`` 16; a
      TMA copy moves whole tiles and counts as 16 (its 16-byte-aligned rows); 0 when none is found;
    - ldmatrix: whether fragments are loaded from shared memory with ldmatrix.
    """
    tensor, copies, _ = instructions(kernel_source)
    widths = [0]
    for params in re.findall(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s*)?\w+\(([^)]*)\)", kernel_source):
        for param in params.split(","):
            match = re.match(r"\s*(?:const\s+)?([\w:]+)\s*\*\s*(?:__restrict__\s*)?(\w+)\s*$", param)
            if not match:
                continue
            element, name = match.groups()
            element_bytes = VECTOR_TYPES.get(element.split("::")[-1], 0)
            name_re = re.escape(name)
            for cast in re.findall(rf"\*\((\w+)\s*\*\)\s*\(\s*(?:\(\([\w\s]+\*\)\s*)?{name_re}\b", kernel_source):
                widths.append(VECTOR_TYPES.get(cast, 0))
            if re.search(rf"(?<![\w.]){name_re}\[", kernel_source):
                widths.append(element_bytes)
    widths += [int(n) for n in re.findall(r"cp_async_gs(?:_conditional)?<(\d+)>", kernel_source)]
    if "tma_load" in kernel_source or "tma_store" in kernel_source:
        widths.append(16)
    return {
        "tensor_cores": tensor,
        "copies": copies,
        "vector_bytes": max(widths),
        "ldmatrix": "ldmatrix" in kernel_source,
    }


# ------------------------------------------------------------------------------------- bank conflicts

BANKS, BANK_BYTES, WARP = 32, 4, 32
SHARED_TILE = re.compile(r"void\*\s+(\w+)\s*=\s*\(\(void\*\)\(\(char\*\)buf_dyn_shmem\s*\+\s*\d+\)\);")
# A shared access as TileLang 0.1.15 prints it: ((half_t*)K_tile)[index], or *(uint4*)(((half_t*)K_tile) + index)
SCALAR_ACCESS = re.compile(r"\(\((\w+)\*\)(\w+)\)\[")
VECTOR_ACCESS = re.compile(r"\*\((\w+)\*\)\(\(\((\w+)\*\)(\w+)\)\s*\+\s*")
C_NAME = re.compile(r"[A-Za-z_]\w*")
# ldmatrix and stmatrix take one address a lane, each of a 16-byte row of an 8 x 8 matrix: (&(((half_t*)C_tile)[
MATRIX_ROW = re.compile(r"ptx_(ld|st)matrix\w*\(\(&\($")


def _balanced(text: str, start: int, close: str) -> str:
    """The text from ``start`` up to the ``close`` bracket that balances the brackets opened before ``start``."""
    depth = 0
    for at in range(start, len(text)):
        char = text[at]
        if char in "([":
            depth += 1
        elif char in ")]":
            if depth == 0 and char == close:
                return text[start:at]
            depth -= 1
    return ""


def _lane_index(expression: str, lane: int) -> int | None:
    """An index expression of the generated CUDA evaluated for thread ``lane`` of the first warp, every other name
    (loop variables, block indices) at 0: a warp's lanes differ only in threadIdx.x, so that is where their
    addresses part. None where the expression is not plain integer arithmetic."""
    text = expression.replace("((int)threadIdx.x)", "__lane").replace("(int)", "").replace("/", "//")
    names = {name: 0 for name in C_NAME.findall(text) if name != "__lane"}
    if not re.fullmatch(r"[\w\s+\-*/%&|^<>()]*", text):
        return None
    try:
        return int(eval(text, {"__builtins__": {}}, {**names, "__lane": lane}))  # noqa: S307 - digits and names only
    except Exception:
        return None


def _ways(addresses: list[int], width: int) -> int:
    """The most distinct 4-byte words one bank must serve in one pass: 16-byte accesses go a quarter warp at a time,
    8-byte ones half a warp; lanes reading the same word share it (a broadcast)."""
    per_pass = max(1, min(WARP, 128 // max(width, 4)))
    worst = 1
    for start in range(0, len(addresses), per_pass):
        words_in_bank: dict[int, set[int]] = {}
        for address in addresses[start : start + per_pass]:
            for word in range(address // BANK_BYTES, (address + max(width, 1) - 1) // BANK_BYTES + 1):
                words_in_bank.setdefault(word % BANKS, set()).add(word)
        worst = max(worst, max(len(words) for words in words_in_bank.values()))
    return worst


def bank_conflicts(kernel_source: str, threads: int = WARP) -> tuple[int, str]:
    """The worst shared-memory access of the generated CUDA: how many ways its bank conflict goes for the first warp
    (1: none) and which tile and whether it is a read or a write ("K_tile read"). An estimate from the index
    expressions alone: the other loop variables at 0, the tiles at their offsets (TileLang aligns them)."""
    tiles = set(SHARED_TILE.findall(kernel_source))
    lanes = range(min(WARP, threads))
    worst: tuple[int, str] = (1, "")
    for line in kernel_source.splitlines():
        accesses = []
        for match in VECTOR_ACCESS.finditer(line):
            vector, element, tile = match.groups()
            accesses.append((tile, VECTOR_TYPES.get(vector, 0), element, _balanced(line, match.end(), ")"), match))
        for match in SCALAR_ACCESS.finditer(line):
            element, tile = match.groups()
            accesses.append((tile, VECTOR_TYPES.get(element, 0), element, _balanced(line, match.end(), "]"), match))
        for tile, width, element, index, match in accesses:
            size = VECTOR_TYPES.get(element, 0)
            if tile not in tiles or not width or not size or not index:
                continue
            offsets = [_lane_index(index, lane) for lane in lanes]
            if any(offset is None for offset in offsets):
                continue
            kind = "write" if re.match(r"\s*=(?!=)", line[match.end() + len(index) + 1 :]) else "read"
            if matrix := MATRIX_ROW.search(line[: match.start()]):
                width, kind = 16, "write" if matrix[1] == "st" else "read"
            ways = _ways([offset * size for offset in offsets], width)
            if ways > worst[0]:
                worst = (ways, f"{tile} {kind}")
    return worst


KERNEL_DEFINITION = re.compile(r"__global__\s+void\s+(?:__launch_bounds__\((\d+)[^)]*\)\s*)?(\w+)\s*\([^;]*?\)\s*\{")


def kernel_names(kernel_source: str) -> list[str]:
    """The __global__ functions the source defines, in its order: one per T.Kernel launch, in order."""
    return [match.group(2) for match in KERNEL_DEFINITION.finditer(kernel_source)]


def launched_threads(kernel_source: str, function: str | None = None) -> int | None:
    """Threads per block as compiled: ``__launch_bounds__(384, 1)`` counts TileLang's producer warpgroup,
    which T.Kernel(threads=256) does not. Of ``function``, or of the first kernel defined."""
    for match in KERNEL_DEFINITION.finditer(kernel_source):
        if function is None or match.group(2) == function:
            return int(match.group(1)) if match.group(1) else None
    return None


# ------------------------------------------------------------------------------------------ estimate


def estimate(
    tir: Any, kernel_source: str, kernel: Any, case: Any, profile: Profile, limits: Any = None
) -> dict[str, Any]:
    """The static FIGURES for one kernel and case (see grader.pipeline.profile.FIGURES).

    ``kernel`` is the puzzle's grader.spec.Kernel: its ``bytes_moved`` and ``flops`` give the problem's
    compulsory work, the roofline's numerator. ``limits`` is a grader.pipeline.roofline.Limits (the
    measured bandwidth) or None for the profile's datasheet numbers. Shared memory per block is
    TileLang's plan for the TIR's shared buffers plus what ptxas places statically (mbarriers). With several
    T.Kernel launches, registers, threads and occupancy are those of the main launch's kernel.
    ``grid`` is the number of blocks launched. Slow part: one nvcc run (seconds).
    """
    from grader.pipeline.roofline import Limits, floor
    from grader.pipeline.shared_memory import shared_memory_plan

    sizes = dict(case.sizes)
    counted = traffic(tir, sizes)
    names = kernel_names(kernel_source)
    # TileLang names a function's kernels in launch order (f_kernel, f_kernel_1, ...)
    main = names[counted.main_launch] if len(names) == counted.launches and names else None
    usage = ptxas_usage(kernel_source, profile.arch, main)
    threads = launched_threads(kernel_source, main) or counted.threads
    shared = shared_memory_plan(tir).total + usage["static_shared"]
    fit = occupancy(profile, threads, usage["registers"], shared)
    lowered = lowering(kernel_source)
    compulsory = kernel.bytes_moved(sizes) if getattr(kernel, "bytes_moved", None) else None
    work = kernel.flops(sizes) if getattr(kernel, "flops", None) else None
    if limits is None:
        limits = Limits(copy_gbps=profile.dram_gbps, tensor_tflops=profile.tensor_tflops)
    floor_ms, bound = floor(limits, work, compulsory) if limits.copy_gbps else (None, "")
    waves = counted.blocks / (profile.sm_count * fit.blocks_per_sm) if fit.blocks_per_sm else None
    ways, access = bank_conflicts(kernel_source, threads)
    return {
        "grid": counted.blocks,
        "threads": threads,
        "bytes_per_block": counted.bytes_per_block,
        "flops_per_block": counted.flops_per_block,
        "bytes_total": counted.bytes_total,
        "flops_total": counted.flops_total,
        "compulsory_bytes": compulsory,
        "floor_us": floor_ms * 1000 if floor_ms is not None else None,
        "bound": bound,
        "registers": usage["registers"],
        "spill_bytes": usage["spill_stores"],
        "shared_bytes": shared,
        "blocks_per_sm": fit.blocks_per_sm,
        "occupancy_pct": fit.occupancy_pct,
        "occupancy_limit": fit.limit,
        "waves": waves,
        "tensor_cores": lowered["tensor_cores"],
        "copies": lowered["copies"],
        "vector_bytes": lowered["vector_bytes"],
        "bank_ways": f"{ways}-way, {access}" if ways > 1 else "none",
    }
