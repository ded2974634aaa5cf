"""Execute the TIR that TileLang's frontend emits for a kernel, on the CPU, at tile level.

One program per block of the launch grid, run one after another. Fragment, shared and local
buffers are per-block torch tensors that start as NaN (so a forgotten clear or copy shows).
A ``T.Parallel`` nest is evaluated at once, vectorised over the whole nest: every loop
variable of the nest is a tensor along its own axis of a fixed-rank grid. Serial and pipelined
loops run in order. Tile ops (copy, fill, reduce, gemm, cumsum) run as whole-tile torch ops.

The semantics follow TileLang 0.1.15 (src/op/copy.cc, reduce.cc, gemm*.cc):
- copy matches the non-unit extents of the two regions by position; source elements outside
  a global buffer read as 0 and destination elements outside it are dropped; values are cast
  to the destination dtype;
- reduce combines with the destination when clear=False;
- gemm accumulates in the accumulator's dtype, rounding after every 16-wide K step (one MMA)
  when that dtype is 16-bit, as the Tensor Cores do;
- ``x * y + c`` in fp16/bf16 is rounded once, as the fused multiply-add nvcc emits for it.
- a 16-bit sum reduce adds in the order the GPU's threads do, with products stored to a fragment
  added unrounded (fused), so a fp16 accumulator fails the same elements as on the GPU (lanes.py).
"""

from __future__ import annotations

import functools
import math
import operator
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch

from grader.pipeline.inputs import TORCH_DTYPES
from grader.pipeline.shared_memory import SHARED_LIMIT, shared_memory_plan
from grader.pipeline.simulate.faults import SimulationError, Unsupported
from grader.pipeline.simulate.tileops import HANDLERS
from grader.pipeline.simulate.unwritten import (
    forged_fill,
    from_unwritten,
    integer_fill,
    keep_unwritten,
    unwritten_fill,
)
from grader.tir import ELEMENT_ATOMICS, pointed_element

RANK = 8  # axes available to vectorised loop variables (parallel nests, nested)


PY_OPS = {
    torch.add: operator.add, torch.sub: operator.sub, torch.mul: operator.mul,
    torch.maximum: max, torch.minimum: min,
    torch.lt: operator.lt, torch.le: operator.le, torch.gt: operator.gt, torch.ge: operator.ge,
    torch.eq: operator.eq, torch.ne: operator.ne,
    torch.logical_and: lambda a, b: bool(a) and bool(b), torch.logical_or: lambda a, b: bool(a) or bool(b),
}  # fmt: skip


# TIR calls the simulator computes with one torch function, by the call's name (bound once, not per call).
MATH_CALLS = {
    "tirx.exp2": torch.exp2, "tirx.exp": torch.exp, "tirx.log2": torch.log2, "tirx.log": torch.log,
    "tirx.fabs": torch.abs, "tirx.sqrt": torch.sqrt, "tirx.rsqrt": torch.rsqrt, "tirx.tanh": torch.tanh,
    "tirx.sigmoid": torch.sigmoid, "tirx.floor": torch.floor, "tirx.ceil": torch.ceil,
}  # fmt: skip
BITWISE_CALLS = {
    "tirx.bitwise_and": torch.bitwise_and, "tirx.bitwise_or": torch.bitwise_or,
    "tirx.bitwise_xor": torch.bitwise_xor, "tirx.shift_left": torch.bitwise_left_shift,
    "tirx.shift_right": torch.bitwise_right_shift,
}  # fmt: skip


@functools.cache
def binary_ops(tirx: Any) -> dict[type, Any]:
    """TIR binary expression kinds -> the torch function that computes them, made once per process (TVM is imported
    late, so the table is made on the first Interpreter, not at import)."""
    t = tirx
    return {
        t.Add: torch.add, t.Sub: torch.sub, t.Mul: torch.mul,
        t.Max: torch.maximum, t.Min: torch.minimum,
        t.LT: torch.lt, t.LE: torch.le, t.GT: torch.gt, t.GE: torch.ge, t.EQ: torch.eq, t.NE: torch.ne,
        t.And: torch.logical_and, t.Or: torch.logical_or,
    }  # fmt: skip


COMPARISONS = (torch.lt, torch.le, torch.gt, torch.ge, torch.eq, torch.ne)
# Memory every thread of a block (or of the grid) stores to: lanes of a T.Parallel are threads there
SHARED_BY_THREADS = ("shared", "shared.dyn", "global")
# Signed integer arithmetic checked for overflow (Interpreter.no_signed_overflow): int32, C's int. Narrower types are
# computed in int and truncated when stored (defined: they wrap, as torch does); int64 is computed in int64 itself.
SIGNED_ARITHMETIC = (torch.add, torch.sub, torch.mul)
SIGNED_OVERFLOW_CHECKED = {"int32"}

# Unsigned integers wider than a byte live in the next wider signed type (torch's CPU kernels lack
# bitwise ops on uint16/uint32); their values fit, and T.reinterpret takes the low bits back.
WIDE_UNSIGNED = {"uint16": torch.int32, "uint32": torch.int64}
BITS_AS = {
    16: (torch.int16, {"float16": torch.float16, "bfloat16": torch.bfloat16}),
    32: (torch.int32, {"float32": torch.float32}),
}


def torch_dtype(dtype: Any) -> torch.dtype:
    name = str(dtype)
    if name in WIDE_UNSIGNED:
        return WIDE_UNSIGNED[name]
    if name not in TORCH_DTYPES:
        raise Unsupported(f"the dtype {name}")
    return TORCH_DTYPES[name]


def integer_range(name: str) -> tuple[int, int] | None:
    """The least and greatest value of a TIR integer type ("int32", "uint8"...); None for any other type."""
    match = re.fullmatch(r"(u?)int(8|16|32|64)", name)
    if match is None:
        return None
    bits = int(match.group(2))
    return (0, 2**bits - 1) if match.group(1) else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def saturated(value: torch.Tensor, bounds: tuple[int, int]) -> torch.Tensor:
    """A float tensor converted to an integer of ``bounds`` as CUDA's cvt.rzi does it, as int64: truncated toward
    zero, clamped to the range, NaN to 0."""
    low, high = bounds
    whole = torch.nan_to_num(value.double().trunc(), nan=0.0)
    inside = torch.where((whole > low) & (whole < high), whole, torch.zeros_like(whole)).to(torch.int64)
    return torch.where(whole >= high, high, torch.where(whole <= low, low, inside))


def wrapped(value: torch.Tensor, bounds: tuple[int, int]) -> torch.Tensor:
    """An int64 tensor wrapped to the bits of an integer type of ``bounds`` (two's complement)."""
    low, high = bounds
    if high - low + 1 >= 2**64:
        return value
    return torch.remainder(value - low, high - low + 1) + low


def fitted(value: Any, name: str) -> Any:
    """The result of integer arithmetic of TIR type ``name`` wrapped to the type's bits, as the GPU's fixed-width
    registers wrap it: plain ints (index arithmetic) are Python's, unbounded, and an unsigned type wider than a
    byte lives in a wider torch type (WIDE_UNSIGNED), so `T.cast(n, uint32) + T.uint32(4294967295)` was n + 2^32 - 1
    here and n - 1 on the GPU (tests/attacks/unsigned_wrap.py). Torch's own fixed-width types wrap already."""
    bounds = integer_range(name)
    if bounds is None or isinstance(value, bool):
        return value
    if isinstance(value, torch.Tensor):
        if name not in WIDE_UNSIGNED or value.dtype == torch.bool:
            return value
        return wrapped(value.to(torch.int64), bounds).to(value.dtype)
    if isinstance(value, int):
        low, high = bounds
        return (value - low) % (high - low + 1) + low
    return value


def reinterpret_bits(value: torch.Tensor, source: str, target: str) -> torch.Tensor:
    """T.reinterpret(x, float16) of a 16-bit integer: the same bits read as the float."""
    bits = 16 if source.endswith("16") else 32 if source.endswith("32") else 0
    signed, floats = BITS_AS.get(bits, (None, {}))
    if target not in floats:
        raise Unsupported(f"T.reinterpret from {source} to {target}")
    wide = value.to(torch.int64) & ((1 << bits) - 1)
    wide = torch.where(wide >= 1 << (bits - 1), wide - (1 << bits), wide)
    return forged_fill(wide.to(signed).view(floats[target]))  # bits a kernel makes are never memory nothing wrote


class ThreadIndex:
    """The value of a block's thread index (T.get_thread_binding, the Bind of tl.launch_thread_idx) in the simulator,
    which runs a block's threads as one program at tile level: it had 0 for every lane, so a kernel that stored its
    sums only where the thread index was 0 stored them all here, and on the GPU, where the lanes of a T.Parallel are
    spread over the block's threads, only thread 0's (tests/attacks/thread_index.py). Read in an expression, it gives
    the case no CPU verdict."""

    what = "the thread index (T.get_thread_binding): the simulator runs a block's threads as one program"


THREAD_INDEX = ThreadIndex()


@dataclass
class Lanes:
    """Which grid axes are taken by vectorised loop variables."""

    used: list[int] = field(default_factory=list)

    def take(self) -> int:
        for axis in range(RANK):
            if axis not in self.used:
                self.used.append(axis)
                return axis
        raise Unsupported(f"more than {RANK} nested parallel loops")

    def release(self, axis: int) -> None:
        self.used.remove(axis)


def lane(extent: int, axis: int) -> torch.Tensor:
    shape = [1] * RANK
    shape[axis] = extent
    return torch.arange(extent, dtype=torch.int64).reshape(shape)


def owned(value: Any) -> Any:
    """``value`` as a value of its own: a tensor that shares no memory with a buffer. A scalar
    the kernel saves (``m_old = row_max[0]``) lives in a register on the GPU, and a later write
    to the buffer (an in-place reduce, a store) must not change it."""
    if isinstance(value, torch.Tensor) and value._base is not None:
        return value.clone()
    return value


def _storage(data: torch.Tensor) -> torch.Tensor:
    return data if data._base is None else data._base


def _flat(data: torch.Tensor, indices: list[torch.Tensor]) -> torch.Tensor:
    """Row-major positions in ``data`` (contiguous) of the elements at ``indices``, one tensor per axis."""
    flat = torch.zeros(indices[0].shape if indices else (1,), dtype=torch.int64)
    for index, stride in zip(indices, data.stride()):
        flat = flat + index.reshape(flat.shape).to(torch.int64) * stride
    return flat.reshape(-1)


class Interpreter:
    def __init__(
        self,
        func: Any,
        tensors: dict[str, torch.Tensor],
        shared_limit: int = SHARED_LIMIT,
        gpu: str = "a Hopper block",
        tma_stores: bool = False,
        reverse_blocks: bool = False,
        integers: torch.Generator | None = None,
    ):
        from tilelang import tvm

        from grader.pipeline.simulate.races import RaceWatch, written_globals

        self.shared_limit, self.gpu = shared_limit, gpu  # the GPU profile's per-block limit, and its name
        # The kernel's CUDA stores shared tiles to global memory with TMA (tl::tma_store): a 1-D store then
        # writes whole 16-byte units at the tensor's end (scripts/p09/tma_store_tail.py measured it).
        self.tma_stores = tma_stores

        self.tir = tvm.tirx
        self.binary_ops = binary_ops(tvm.tirx)
        self.func = func
        # Blocks run last to first: a result that depends on the order shows in one of the two orders.
        self.reverse_blocks = reverse_blocks
        # Integer and bool memory the kernel allocates starts as 0, or, given a generator, at random (the second run
        # of simulate(), which compares the two: the GPU leaves that memory undefined); integer_memory: some was.
        self.integers = integers
        self.integer_memory = False
        self.block_vars: list[tuple[str, Any]] = []  # (blockIdx.x/y/z, loop var) of the loops we are inside
        self.env: dict[Any, Any] = {}
        self.buffers: dict[Any, torch.Tensor] = {}
        self.scopes: dict[Any, str] = {}
        self.lanes = Lanes()
        self.parallel_vars: set[Any] = set()
        self.block_extents: dict[Any, int] = {}
        # buffer -> (unrounded products, the storage they belong to, its version when they were kept)
        self.exact: dict[Any, tuple[torch.Tensor, torch.Tensor, int]] = {}
        self.placements: dict[str, Any] | None = None  # fragment placements, inferred on first need
        # local / local.var buffers written inside a T.Parallel nest: one copy per iteration (each
        # thread's registers), shaped [lanes (RANK axes)] + the buffer's shape, until the nest ends
        self.private: dict[Any, torch.Tensor] = {}
        self.checked_blocks: list[Any] = []  # blocks whose shared memory was counted
        self.views_dtype = self.reinterprets(func)  # some T.view reads a buffer as another dtype
        self.shapes: dict[Any, list[int]] = {}  # buffer -> its shape as ints (sizes are fixed per run)
        for param in func.params:
            buffer = func.buffer_map.get(param)
            if buffer is None:
                raise Unsupported(f"the scalar parameter {param}")
            self.buffers[buffer.data] = tensors[buffer.name]
            self.scopes[buffer.data] = "global"
        self.races = RaceWatch(written_globals(func, self.tir))

    def reinterprets(self, func: Any) -> bool:
        dtypes: dict[Any, set[str]] = {}

        def visit(node: Any) -> None:
            if isinstance(node, self.tir.BufferLoad | self.tir.BufferStore):
                dtypes.setdefault(node.buffer.data, set()).add(str(node.buffer.dtype))
            elif isinstance(node, self.tir.SBlock):
                for buffer in node.alloc_buffers:
                    dtypes.setdefault(buffer.data, set()).add(str(buffer.dtype))

        self.tir.stmt_functor.post_order_visit(func.body, visit)
        return any(len(names) > 1 for names in dtypes.values())

    # ------------------------------------------------------------------ statements
    def run(self) -> None:
        from grader.pipeline.simulate.races import RaceError

        try:
            self.stmt(self.func.body)
        except RaceError as error:
            raise SimulationError(str(error), race=error.race) from None

    def stmt(self, node: Any) -> None:
        t = self.tir
        if isinstance(node, t.SeqStmt):
            for child in node.seq:
                self.stmt(child)
        elif isinstance(node, t.SBlockRealize):
            self.stmt(node.block)
        elif isinstance(node, t.SBlock):
            self.check_shared(node)
            self.allocate(node.alloc_buffers)
            self.stmt(node.body)
        elif isinstance(node, t.For):
            self.loop(node)
        elif isinstance(node, t.Bind):
            self.env[node.var] = owned(self.bind_value(node.value))
        elif isinstance(node, t.Evaluate):
            self.evaluate(node.value)
        elif isinstance(node, t.BufferStore):
            self.store(node)
        elif isinstance(node, t.IfThenElse):
            self.branch(node)
        elif isinstance(node, t.AttrStmt):
            self.stmt(node.body)  # block swizzles and similar hints change order, not results
        elif isinstance(node, t.AllocBuffer):
            self.allocate([node.buffer])
            if hasattr(node, "body") and node.body is not None:
                self.stmt(node.body)
        elif isinstance(node, t.DeclBuffer):
            self.stmt(node.body)
        else:
            raise Unsupported(f"the statement {type(node).__name__}")

    def allocate(self, buffers: Any) -> None:
        for buffer in buffers:
            shape = [self.int_of(s) for s in buffer.shape]
            dtype = torch_dtype(buffer.dtype)
            self.scopes[buffer.data] = buffer.scope()
            if dtype.is_floating_point:
                self.buffers[buffer.data] = unwritten_fill(shape, dtype)
                continue
            self.integer_memory = True
            if self.integers is None:
                self.buffers[buffer.data] = unwritten_fill(shape, dtype)
            else:
                bounds = integer_range(str(buffer.dtype))
                self.buffers[buffer.data] = integer_fill(shape, dtype, bounds, self.integers)

    def check_shared(self, block: Any) -> None:
        """A block's shared memory as TileLang allocates it (see ``shared_memory_plan``), once per block."""
        if any(block.same_as(b) for b in self.checked_blocks):
            return
        self.checked_blocks.append(block)
        plan = shared_memory_plan(self.func, block, size=self.int_of)
        if plan.total > self.shared_limit:
            raise SimulationError(plan.too_much(self.shared_limit, self.gpu))

    def bind_value(self, value: Any) -> Any:
        if isinstance(value, self.tir.Call) and value.op.name == "tl.launch_thread_idx":
            return THREAD_INDEX  # tile-level semantics: the threads of a block act as one program
        return self.expr(value)

    def loop(self, node: Any) -> None:
        kind = node.kind
        extent = self.int_of(node.extent)
        start = self.int_of(node.min)
        if kind == self.tir.ForKind.THREAD_BINDING:
            tag = node.thread_binding.thread_tag if node.thread_binding is not None else ""
            if not tag.startswith("blockIdx"):
                raise Unsupported(f"a loop bound to {tag}")
            self.block_extents[node.loop_var] = extent
            if not self.block_vars:
                self.races.new_launch()  # blocks of different launches never overlap in time
            self.block_vars.append((tag, node.loop_var))
            self.block_vars.sort(key=lambda pair: pair[0])  # blockIdx.x, .y, .z: the grid's order
            order = range(start, start + extent)
            try:
                for index in reversed(order) if self.reverse_blocks else order:
                    self.env[node.loop_var] = index
                    axes = tuple(str(v.name) for _, v in self.block_vars)
                    self.races.enter_block(tuple(int(self.env[v]) for _, v in self.block_vars), axes)
                    self.stmt(node.body)
            finally:
                self.block_vars.remove((tag, node.loop_var))
        elif kind == self.tir.ForKind.PARALLEL:
            axis = self.lanes.take()
            self.env[node.loop_var] = lane(extent, axis) + start
            self.parallel_vars.add(node.loop_var)
            try:
                self.stmt(node.body)
            finally:
                self.parallel_vars.discard(node.loop_var)
                self.lanes.release(axis)
            if not self.parallel_vars:
                self.end_private()
        elif kind in (self.tir.ForKind.SERIAL, self.tir.ForKind.UNROLLED, self.tir.ForKind.VECTORIZED):
            for index in range(start, start + extent):
                self.env[node.loop_var] = index
                self.stmt(node.body)
        else:
            raise Unsupported(f"a loop of kind {kind}")

    def branch(self, node: Any) -> None:
        condition = self.expr(node.condition)
        if isinstance(condition, torch.Tensor) and condition.numel() > 1:
            with self.masked(condition):
                self.stmt(node.then_case)
            if node.else_case is not None:
                with self.masked(~condition):
                    self.stmt(node.else_case)
            return
        if bool(condition):
            self.stmt(node.then_case)
        elif node.else_case is not None:
            self.stmt(node.else_case)

    _mask: torch.Tensor | None = None

    @contextmanager
    def masked(self, condition: torch.Tensor) -> Iterator[None]:
        previous = self._mask
        self._mask = condition if previous is None else (previous & condition)
        try:
            yield
        finally:
            self._mask = previous

    # ------------------------------------------------------------------ stores and loads
    def tensor_of(self, buffer: Any) -> torch.Tensor:
        """The storage behind ``buffer``, viewed with the buffer's own shape (T.reshape and
        T.view make several buffers over one allocation)."""
        data = self.buffers[buffer.data]
        shape = self.shape_of(buffer)
        if self.views_dtype:
            dtype = torch_dtype(buffer.dtype)
            if dtype != data.dtype:  # T.view(buffer, dtype=...): the same bytes read as another type
                data = data.reshape(-1).view(dtype)
        if list(data.shape) != shape:
            if math.prod(shape) != data.numel():
                raise Unsupported(f"a view of `{buffer.name}` with another number of elements")
            data = data.view(shape)
        return data

    def store(self, node: Any) -> None:
        data = self.tensor_of(node.buffer)
        indices = [self.expr(i) for i in node.indices]
        product = self.sixteen_bit_product(node)
        value = self.expr(node.value) if product is None else product.to(torch_dtype(node.value.dtype))
        mask = self._mask
        if self.is_private(node.buffer, indices, value, mask):
            self.store_private(node.buffer, data, indices, value, mask)
            return
        if (
            not any(isinstance(i, torch.Tensor) for i in indices)
            and mask is None
            and not isinstance(value, torch.Tensor)
        ):
            position = tuple(int(i) for i in indices)
            if self.scalar_in_bounds(node.buffer, position):
                if node.buffer.data in self.races.watched and self.scopes[node.buffer.data] == "global":
                    where = [torch.tensor([p]) for p in position]
                    self.watch_write(node.buffer, data, where, torch.as_tensor(value, dtype=data.dtype).reshape(1))
                data[position] = value
            return
        flat_indices, values, lanes = self.lanes_written(node.buffer, data, indices, value, mask)
        if node.buffer.data in self.races.watched and self.scopes[node.buffer.data] == "global":
            self.watch_write(node.buffer, data, flat_indices, values)
        if self.scopes[node.buffer.data] in SHARED_BY_THREADS:
            self.no_lanes_disagree(data, flat_indices, values)
        data.index_put_(tuple(flat_indices), values)
        if product is not None:
            self.keep_exact(node.buffer, data, flat_indices, lanes(product))

    @staticmethod
    def no_lanes_disagree(data: torch.Tensor, flat_indices: list[torch.Tensor], values: torch.Tensor) -> None:
        """Unsupported where two lanes of one store put different values in one element of shared or global memory.
        The simulator kept the last lane's; on the GPU the lanes are threads, and which thread's store lands last is
        not defined: `scale[0] = T.if_then_else(i == BLOCK_M - 1, 1, 0)` in a T.Parallel was 1 here and, as the
        threads came, 0 on the GPU (tests/attacks/lanes_disagree.py). Lanes that store the same bits agree."""
        if values.numel() < 2 or not flat_indices:
            return
        position = _flat(data, flat_indices)
        order = torch.argsort(position, stable=True)
        where, bits = position[order], values[order]
        if bits.is_floating_point():
            bits = bits.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[bits.element_size()])
        if bool(((where[1:] == where[:-1]) & (bits[1:] != bits[:-1])).any()):
            raise Unsupported(
                "lanes of one T.Parallel that store different values to one element of shared or global memory "
                "(the GPU keeps one thread's store, which one is not defined)"
            )

    def lanes_written(
        self, buffer: Any, data: torch.Tensor, indices: list[Any], value: Any, mask: torch.Tensor | None
    ) -> tuple[list[torch.Tensor], torch.Tensor, Any]:
        """A write of ``value`` at ``indices`` by every lane of the loops around it: the flat indices and values of
        the lanes the mask leaves on and that land inside a global buffer's edges (past them nothing is written),
        and a function that picks the same lanes from another tensor of the value's shape."""
        grids = torch.broadcast_tensors(
            *[self.as_tensor(i) for i in indices],
            self.as_tensor(value, data.dtype),
            *([mask] if mask is not None else []),
        )
        value_grid = grids[len(indices)]
        keep = grids[-1].reshape(-1) if mask is not None else None

        def kept(grid: torch.Tensor) -> torch.Tensor:  # the lanes the mask leaves on, flattened
            flat = grid.reshape(-1)
            return flat if keep is None else flat[keep]

        flat_indices = [kept(g) for g in grids[: len(indices)]]
        inside = self.in_global_bounds(buffer, flat_indices)

        def lanes(other: torch.Tensor) -> torch.Tensor:
            return kept(torch.broadcast_to(other, value_grid.shape))[inside]

        return [f[inside] for f in flat_indices], lanes(value_grid).to(data.dtype), lanes

    def atomic_element(self, call: Any, reduce: str) -> None:
        """``T.atomic_add(Y[i], x)`` (and ``atomic_max``, ``atomic_min``) on one element per lane: lanes of a
        T.Parallel that hit the same element all count (a scatter with accumulation, in the element's dtype,
        as the GPU's atomics), masked-off lanes and lanes past a global edge do nothing; races.py sees an
        atomic write, so other blocks may add beside it but not read it or store to it."""
        load = pointed_element(call.args[0])
        if load is None:
            raise Unsupported(f"{call.op.name} on {call.args[0]}")
        data = self.tensor_of(load.buffer)
        indices = [self.expr(i) for i in load.indices]
        flat_indices, values, _ = self.lanes_written(load.buffer, data, indices, self.expr(call.args[1]), self._mask)
        if load.buffer.data in self.races.watched and self.scopes[load.buffer.data] == "global":
            self.watch_write(load.buffer, data, flat_indices, values, atomic=True)
        if reduce == "sum":
            data.index_put_(tuple(flat_indices), values, accumulate=True)
            return
        flat = data.view(-1)
        position = _flat(data, flat_indices) if flat_indices else torch.zeros(0, dtype=torch.int64)
        flat.scatter_reduce_(0, position, values, reduce=reduce, include_self=True)

    def sixteen_bit_product(self, node: Any) -> torch.Tensor | None:
        """``x * y`` stored to a 16-bit fragment: the exact product (float64), else None."""
        value = node.value
        if not isinstance(value, self.tir.Mul) or self.scopes[node.buffer.data] != "local.fragment":
            return None
        dtype = torch_dtype(value.dtype) if str(value.dtype) != "bool" else None
        if dtype not in (torch.float16, torch.bfloat16):
            return None
        x, y = (self.as_typed(self.expr(e), dtype).double() for e in (value.a, value.b))
        return x * y

    def keep_exact(
        self, buffer: Any, data: torch.Tensor, flat_indices: list[torch.Tensor], exact: torch.Tensor
    ) -> None:
        """Remember the unrounded products next to the stored ones: a sum of them on the GPU is
        a chain of fused multiply-adds (see lanes.py). Any later write to the buffer voids them."""
        shadow = self.exact_values(buffer, data, writes_since=1)
        if shadow is None:
            shadow = data.to(torch.float64, copy=True)  # elements stored before keep their rounded value
        shadow.index_put_(tuple(flat_indices), exact)
        self.exact[buffer.data] = (shadow, _storage(data), data._version)

    def exact_values(self, buffer: Any, data: torch.Tensor, writes_since: int = 0) -> torch.Tensor | None:
        """The unrounded values of ``buffer``, if nothing but product stores wrote it since they
        were kept (``writes_since``: writes the caller has just made itself)."""
        kept = self.exact.get(buffer.data)
        if kept is None or kept[1] is not _storage(data) or kept[2] + writes_since != data._version:
            return None  # written since, or another block's allocation
        return kept[0]

    # A local or local.var buffer is per thread. Outside T.Parallel every thread holds the same
    # value, so one copy stands for all; inside a nest each iteration writes and reads its own
    # (``v = T.alloc_var(...)`` then ``v = v + tile[i, j]`` in ``for i in T.Parallel``).
    def is_private(self, buffer: Any, indices: list[Any], value: Any, mask: torch.Tensor | None) -> bool:
        if self.private and buffer.data in self.private:
            return True
        if not self.parallel_vars or self.scopes[buffer.data] not in ("local", "local.var"):
            return False
        return mask is not None or any(isinstance(x, torch.Tensor) and x.numel() > 1 for x in [*indices, value])

    def store_private(
        self, buffer: Any, data: torch.Tensor, indices: list[Any], value: Any, mask: torch.Tensor | None
    ) -> None:
        copies = self.private.get(buffer.data)
        if copies is None:  # every iteration starts from the value the threads held before the nest
            copies = data.reshape([1] * RANK + list(data.shape))
        value = self.as_tensor(value, data.dtype)
        index_tensors = [self.as_tensor(i) for i in indices]
        try:
            shapes = [i.shape for i in index_tensors] + [value.shape] + ([mask.shape] if mask is not None else [])
            lanes = torch.broadcast_shapes(copies.shape[:RANK], *shapes)
        except RuntimeError:
            raise Unsupported(
                f"the local variable `{buffer.name}` written by parallel loops of different extents"
            ) from None
        copies = copies.expand(list(lanes) + list(data.shape)).clone()
        lane_grids = [lane(n, axis) for axis, n in enumerate(lanes)]
        grids = torch.broadcast_tensors(*lane_grids, *index_tensors, value, *([mask] if mask is not None else []))
        keep = grids[-1].reshape(-1) if mask is not None else None

        def kept(grid: torch.Tensor) -> torch.Tensor:
            flat = grid.reshape(-1)
            return flat if keep is None else flat[keep]

        positions = [kept(g) for g in grids[: RANK + len(indices)]]
        self.check_bounds(buffer, positions[RANK:])
        copies.index_put_(tuple(positions), kept(grids[RANK + len(indices)]).to(data.dtype))
        self.private[buffer.data] = copies

    def load_private(self, buffer: Any, indices: list[Any]) -> torch.Tensor:
        copies = self.private[buffer.data]
        index_tensors = [self.as_tensor(i) for i in indices]
        lane_grids = [lane(n, axis) for axis, n in enumerate(copies.shape[:RANK])]
        grids = list(torch.broadcast_tensors(*lane_grids, *index_tensors))
        if self._mask is not None:  # lanes switched off may index anywhere; read a safe element
            *grids, mask = torch.broadcast_tensors(*grids, self._mask)
            grids = grids[:RANK] + [torch.where(mask, g, torch.zeros_like(g)) for g in grids[RANK:]]
        self.check_bounds(buffer, [g.reshape(-1) for g in grids[RANK:]])
        return copies[tuple(grids)]

    def end_private(self) -> None:
        """The nest is over: each thread keeps its own last value. Where every iteration left the
        same value that is the buffer's value; where they differ it is thread-dependent (NaN)."""
        for data_var, copies in self.private.items():
            data = self.buffers[data_var]
            flat = copies.reshape(-1, data.numel())
            first = flat[0]
            same = ((flat == first) | (flat != flat)).all(dim=0)  # NaN == NaN here
            if data.dtype.is_floating_point:
                first = torch.where(same, first, torch.full_like(first, float("nan")))
            data.view(-1).copy_(first)
        self.private.clear()

    def load(self, node: Any) -> Any:
        data = self.tensor_of(node.buffer)
        indices = [self.expr(i) for i in node.indices]
        if self.private and node.buffer.data in self.private:
            return self.load_private(node.buffer, indices)
        if self.scopes[node.buffer.data] == "local.fragment" and self.parallel_vars:
            self.check_lane_access(node)
        # a global buffer some launch writes: the races between blocks are watched on it (races.py)
        watched = node.buffer.data in self.races.watched and self.scopes[node.buffer.data] == "global"
        if not any(isinstance(i, torch.Tensor) for i in indices):
            position = tuple(int(i) for i in indices)
            if not self.scalar_in_bounds(node.buffer, position):
                return torch.zeros((), dtype=data.dtype)
            if watched:
                self.watch_read(node.buffer, data, [torch.tensor([p]) for p in position])
            return data[position].clone()  # a value, as the register the GPU loads it into: not a view
        grids = torch.broadcast_tensors(*[self.as_tensor(i) for i in indices])
        if self._mask is not None:
            # Lanes switched off by an if may index past the end; read a safe element there.
            *grids, mask = torch.broadcast_tensors(*grids, self._mask)
            grids = [torch.where(mask, g, torch.zeros_like(g)) for g in grids]
        inside = self.in_global_bounds(node.buffer, [g.reshape(-1) for g in grids]).reshape(grids[0].shape)
        if watched:
            read = inside if self._mask is None else inside & mask
            self.watch_read(node.buffer, data, [g[read] for g in grids])
        safe = [torch.where(inside, g, torch.zeros_like(g)) for g in grids]
        values = data[tuple(safe)]
        return torch.where(inside, values, torch.zeros((), dtype=values.dtype))

    def watch_read(self, buffer: Any, data: torch.Tensor, indices: list[torch.Tensor]) -> None:
        """Record that the current block read these elements of a global buffer (races.py)."""
        if buffer.data in self.races.watched and data.is_contiguous():
            flat = _flat(data, indices)
            self.races.read(buffer.data, data, buffer.name, list(data.shape), flat)

    def watch_write(
        self, buffer: Any, data: torch.Tensor, indices: list[torch.Tensor], values: torch.Tensor, atomic: bool = False
    ) -> None:
        """Record that the current block is about to write ``values`` to these elements (races.py)."""
        if buffer.data in self.races.watched and data.is_contiguous():
            flat = _flat(data, indices)
            before = data.reshape(-1)[flat]
            changed = (
                (before != values) & ~(torch.isnan(before) & torch.isnan(values))
                if before.is_floating_point()
                else before != values
            )
            self.races.write(buffer.data, data, buffer.name, list(data.shape), flat, changed, atomic)

    def shape_of(self, buffer: Any) -> list[int]:
        shape = self.shapes.get(buffer)
        if shape is None:
            shape = self.shapes[buffer] = [self.int_of(s) for s in buffer.shape]
        return shape

    def scalar_in_bounds(self, buffer: Any, position: tuple[int, ...]) -> bool:
        """``in_global_bounds`` for one element at plain-int indices, without building tensors."""
        shape = self.shape_of(buffer)
        inside = all(0 <= p < n for p, n in zip(position, shape))
        if not inside and self.scopes[buffer.data] != "global":
            self.check_bounds(buffer, [torch.tensor(p) for p in position])
        return inside

    def in_global_bounds(self, buffer: Any, indices: list[torch.Tensor]) -> torch.Tensor:
        """Which accesses are inside the buffer. TileLang's LegalizeSafeMemoryAccess pass guards
        global accesses (out-of-range loads read 0, stores are dropped), so for global buffers
        this is a mask; for fragments and shared memory an access outside is the learner's bug."""
        if self.scopes[buffer.data] != "global":
            self.check_bounds(buffer, indices)
        shape = self.shape_of(buffer)
        inside = torch.ones(indices[0].shape if indices else (), dtype=torch.bool)
        for index, extent in zip(indices, shape):
            inside = inside & (index >= 0) & (index < extent)
        return inside

    def check_bounds(self, buffer: Any, indices: list[torch.Tensor]) -> None:
        shape = self.shape_of(buffer)
        for axis, (index, extent) in enumerate(zip(indices, shape)):
            if index.numel() and (int(index.min()) < 0 or int(index.max()) >= extent):
                bad = int(index.max()) if int(index.max()) >= extent else int(index.min())
                kind = {"local.fragment": "fragment", "local.var": "local"}.get(self.scopes[buffer.data], "")
                kind = kind or self.scopes[buffer.data].split(".")[0]  # shared, shared.dyn, local
                raise SimulationError(
                    f"index {bad} is out of bounds for dimension {axis} of `{buffer.name}` (size {extent}): "
                    f"nothing guards a {kind} buffer's edge, so check this index, and the order of the indices, "
                    f"against its shape {shape}"
                )

    def provably_constant(self, expr: Any) -> bool:
        """True when TileLang can fold ``expr`` to a constant at compile time: every variable in
        it is a block index of a grid dimension of extent 1, and it reads nothing from memory (a
        value kept in a T.alloc_var or any buffer is known only at run time, and TileLang guards it)."""
        found: list[Any] = []
        kinds = (self.tir.Var, self.tir.BufferLoad)
        self.tir.stmt_functor.post_order_visit(expr, lambda n: found.append(n) if isinstance(n, kinds) else None)
        return all(isinstance(n, self.tir.Var) and self.block_extents.get(n) == 1 for n in found)

    def check_lane_access(self, node: Any) -> None:
        """A fragment element belongs to one thread: inside T.Parallel an iteration may read its
        own element (index = loop variable) or a broadcast one (no loop variable), not a neighbour's."""
        for index in node.indices:
            if isinstance(index, (self.tir.Add, self.tir.Sub)):
                a, b = index.a, index.b
                if (a in self.parallel_vars and isinstance(b, self.tir.IntImm)) or (
                    b in self.parallel_vars and isinstance(a, self.tir.IntImm)
                ):
                    raise SimulationError(
                        f"inside T.Parallel, `{node.buffer.name}[{', '.join(map(str, node.indices))}]` reads another "
                        "iteration's element of a fragment; each element lives in one thread's registers, so "
                        "copy the tile to shared memory first or restructure the loop"
                    )

    # ------------------------------------------------------------------ expressions
    def as_tensor(self, value: Any, dtype: torch.dtype | None = None) -> torch.Tensor:
        if isinstance(value, torch.Tensor):
            return value.reshape([1] * RANK) if value.dim() == 0 else value
        return torch.tensor(value, dtype=dtype).reshape([1] * RANK)

    def int_of(self, expr: Any) -> int:
        value = self.expr(expr)
        if isinstance(value, torch.Tensor):
            if value.numel() != 1:
                raise Unsupported(f"a loop bound or shape that varies across parallel iterations: {expr}")
            value = value.item()
        return int(value)

    def expr(self, node: Any) -> Any:  # noqa: C901  (one dispatch over TIR expression kinds)
        t = self.tir
        if isinstance(node, int | float):
            return node
        if isinstance(node, t.IntImm):
            return bool(node.value) if str(node.dtype) == "bool" else int(node.value)
        if isinstance(node, t.FloatImm):
            return torch.tensor(node.value, dtype=torch_dtype(node.dtype))
        if isinstance(node, t.Var):
            if node not in self.env:
                raise Unsupported(f"the free variable {node.name}")
            value = self.env[node]
            if value is THREAD_INDEX:
                raise Unsupported(THREAD_INDEX.what)
            return value
        if isinstance(node, t.BufferLoad):
            return self.load(node)
        if isinstance(node, t.Cast):
            return self.cast(self.expr(node.value), str(node.dtype))
        if isinstance(node, t.Add | t.Sub) and (fused := self.fused_multiply_add(node)) is not None:
            return fused
        op = self.binary_ops.get(type(node))
        if op is not None:
            return self.binary(op, node)
        if isinstance(node, t.Div):
            a, b = self.operands(node)
            if torch_dtype(node.dtype).is_floating_point:
                return self.round(torch.div(a, b), node.dtype)
            return torch.div(a, b, rounding_mode="trunc")
        if isinstance(node, t.FloorDiv):
            a, b = self.operands(node)
            return (
                torch.div(a, b, rounding_mode="floor")
                if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor)
                else a // b
            )
        if isinstance(node, t.FloorMod):
            a, b = self.operands(node)
            return torch.remainder(a, b) if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor) else a % b
        if isinstance(node, t.Mod):
            # T.truncmod, C's %: the remainder takes the dividend's sign (-1 % 7 is -1 on the GPU, 6 floored),
            # so `T.truncmod(n - 1000000, 7) >= 0` held here for every n and on the GPU for one in seven
            # (tests/attacks/truncated_mod.py)
            a, b = self.operands(node)
            if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
                return torch.fmod(a, b)
            if isinstance(a, int) and isinstance(b, int):
                return abs(a) % abs(b) * (1 if a >= 0 else -1)
            return math.fmod(a, b)
        if isinstance(node, t.Not):
            return torch.logical_not(self.as_tensor(self.expr(node.a)))
        if isinstance(node, t.Select):
            return self.select(self.expr(node.condition), node.true_value, node.false_value, node.dtype)
        if isinstance(node, t.Let):
            self.env[node.var] = owned(self.expr(node.value))
            return self.expr(node.body)
        if isinstance(node, t.Call):
            return self.call(node)
        if isinstance(node, t.StringImm):
            return node.value
        raise Unsupported(f"the expression {type(node).__name__}: {node}")

    def fused_multiply_add(self, node: Any) -> torch.Tensor | None:
        """``x * y + c`` (or ``- c``, ``c -``) in a 16-bit float, rounded once, as the GPU computes it:
        nvcc contracts the multiply and the add into one fused multiply-add (HFMA) by default."""
        t = self.tir
        dtype = torch_dtype(node.dtype) if str(node.dtype) != "bool" else None
        if dtype not in (torch.float16, torch.bfloat16):
            return None
        if isinstance(node.a, t.Mul) and node.a.dtype == node.dtype:
            product, other, product_sign, other_sign = node.a, node.b, 1.0, 1.0 if isinstance(node, t.Add) else -1.0
        elif isinstance(node.b, t.Mul) and node.b.dtype == node.dtype:
            product, other, product_sign, other_sign = node.b, node.a, 1.0 if isinstance(node, t.Add) else -1.0, 1.0
        else:
            return None
        x, y, c = (self.as_typed(self.expr(e), dtype).double() for e in (product.a, product.b, other))
        # The product of two 16-bit floats is exact in float64, and so (almost always) is the sum.
        return (product_sign * x * y + other_sign * c).to(dtype)

    def operands(self, node: Any) -> tuple[Any, Any]:
        a, b = self.expr(node.a), self.expr(node.b)
        dtype = torch_dtype(node.dtype) if str(node.dtype) != "bool" else None
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            a, b = self.as_typed(a, dtype), self.as_typed(b, dtype)
        return a, b

    def as_typed(self, value: Any, dtype: torch.dtype | None) -> torch.Tensor:
        tensor = self.as_tensor(value) if isinstance(value, torch.Tensor) else torch.tensor(value)
        if dtype is not None and tensor.dtype != dtype and tensor.dtype != torch.bool:
            tensor = tensor.to(dtype)
        return tensor

    def binary(self, op: Any, node: Any) -> Any:
        a, b = self.operands(node)
        if op in SIGNED_ARITHMETIC and str(node.dtype) in SIGNED_OVERFLOW_CHECKED:
            self.no_signed_overflow(op, a, b, str(node.dtype))
        if not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor):
            return fitted(PY_OPS[op](a, b), str(node.dtype))  # index arithmetic on plain ints
        operand_dtype = torch_dtype(node.a.dtype) if str(node.a.dtype) != "bool" else None
        if operand_dtype is not None and operand_dtype.is_floating_point:
            # Arithmetic in the operands' own dtype, rounded after the op (fp16 stays fp16).
            a, b = (self.converted(x, operand_dtype) for x in (a, b))
            if operand_dtype in (torch.float32, torch.float64) and op in (torch.maximum, torch.minimum):
                self.no_nan_against_a_number(a, b)
                return fitted(keep_unwritten(op(a, b), a, b), str(node.dtype))
            if op in COMPARISONS:
                self.no_nan_compared(a, b)
        return fitted(op(a, b), str(node.dtype))

    @staticmethod
    def converted(value: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """``value`` in ``dtype``, a float keeping the mark of memory nothing wrote (torch drops it)."""
        if value.dtype == dtype or not value.is_floating_point():
            return value.to(dtype)
        return keep_unwritten(value.to(dtype), value)

    def no_signed_overflow(self, op: Any, a: Any, b: Any, name: str) -> None:
        """Unsupported where a lane the mask keeps overflows a signed integer type in ``+``, ``-`` or ``*``. C and CUDA
        leave signed overflow undefined, and both TVM's simplifier and nvcc assume it never happens: TileLang's
        lowering folds `n + 2147483647 < n` to false, so a kernel that stored its sums where that held stored them
        here (the sum wraps) and zeros on the GPU (tests/attacks/signed_overflow.py). Unsigned types wrap on the GPU
        too (fitted), and are not checked."""
        low, high = integer_range(name) or (0, 0)
        what = (
            f"an overflow of {name} arithmetic (C leaves it undefined; TileLang and nvcc fold as if it never happened)"
        )
        if not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor):
            if isinstance(a, bool | int) and isinstance(b, bool | int) and not low <= PY_OPS[op](a, b) <= high:
                self.unsupported_in_kept_lanes(torch.tensor(True), what)
            return
        exact = op(self.as_tensor(a).to(torch.int64), self.as_tensor(b).to(torch.int64))
        self.unsupported_in_kept_lanes((exact < low) | (exact > high), what)

    def no_nan_compared(self, a: torch.Tensor, b: torch.Tensor) -> None:
        """Unsupported where a lane the mask keeps compares NaN. TileLang's lowering simplifies with the algebra of
        numbers, not of IEEE floats (x != x to false, x - x to 0): `T.if_then_else(x != x, sum, 0)` of an x that is
        NaN stored the sum here and, folded, zeros on the GPU (tests/attacks/nan_compared.py). What the GPU answers
        depends on what the lowering folded, so the simulator gives no verdict. A NaN read from memory nothing
        wrote (from_unwritten) is a bug either way: compared as torch compares it, the case fails."""
        nan = (torch.isnan(a) & ~from_unwritten(a)) | (torch.isnan(b) & ~from_unwritten(b))
        self.unsupported_in_kept_lanes(
            nan, "a comparison of NaN (TileLang's lowering may fold it as if NaN were a number)"
        )

    def no_nan_against_a_number(self, a: torch.Tensor, b: torch.Tensor) -> None:
        """Unsupported where a lane of T.max or T.min of fp32 or fp64 has NaN on one side only. CUDA's max and min
        of floats are fmaxf and fminf (PTX max.f32), which answer with the number, where torch.maximum answers NaN:
        T.max(NaN, x) != itself held here and not on the GPU (tests/attacks/nan_max.py). Answering with the number
        would hide the NaN the simulator fills memory nothing wrote with (a read of it is a bug the GPU shows with
        whatever that memory holds), so the simulator gives no verdict instead of either answer; for that NaN
        (from_unwritten) it answers NaN, and the case fails as the kernel's read of nothing deserves."""
        differs = (torch.isnan(a) ^ torch.isnan(b)) & ~(from_unwritten(a) | from_unwritten(b))
        self.unsupported_in_kept_lanes(
            differs, "T.max or T.min of NaN and a number (the GPU's fmaxf and fminf give the number)"
        )

    def unsupported_in_kept_lanes(self, lanes: torch.Tensor, what: str) -> None:
        """Unsupported(what) where any of ``lanes`` is one the current mask keeps (every lane without a mask, or
        where the mask has another shape)."""
        if self._mask is not None:
            try:
                lanes = lanes & self._mask
            except RuntimeError:  # lanes of another shape: every lane counts
                pass
        if bool(lanes.any()):
            raise Unsupported(what)

    def round(self, value: torch.Tensor, dtype: Any) -> torch.Tensor:
        return value.to(torch_dtype(dtype))

    def cast(self, value: Any, name: str) -> Any:
        """``T.cast(value, name)`` as the GPU computes it: a float to an integer type truncated toward zero and
        clamped to the type's range, NaN to 0 (CUDA's cvt.rzi saturates: x86, and so torch, gives the least
        integer instead, so `T.cast(x, int32) < 0` of an x past 2^31 chose the right answer here and zeros on
        the GPU: tests/attacks/saturating_cast.py); an integer to a narrower or unsigned one wrapped to its bits."""
        dtype = torch_dtype(name)
        bounds = integer_range(name)
        if name == "bool" and isinstance(value, torch.Tensor) and value.dtype.is_floating_point:
            self.no_nan_compared(value, value)  # a float's truth is a comparison with 0
        if isinstance(value, torch.Tensor):
            if bounds is not None and value.dtype.is_floating_point:
                return saturated(value, bounds).to(dtype)
            if bounds is not None and value.dtype != torch.bool:
                return wrapped(value.to(torch.int64), bounds).to(dtype)
            return self.converted(value, dtype)
        if dtype.is_floating_point:
            return torch.tensor(value, dtype=dtype)
        if bounds is not None:
            low, high = bounds
            return (int(value) - low) % (high - low + 1) + low
        return int(value)

    def select(self, condition: Any, true_node: Any, false_node: Any, dtype: Any) -> Any:
        if not isinstance(condition, torch.Tensor) or condition.numel() == 1:
            return self.expr(true_node) if bool(condition) else self.expr(false_node)
        with self.masked(condition):
            on = self.expr(true_node)
        with self.masked(~condition):
            off = self.expr(false_node)
        target = torch_dtype(dtype)
        return torch.where(condition, self.as_typed(on, target), self.as_typed(off, target))

    # ------------------------------------------------------------------ calls
    def call(self, node: Any) -> Any:
        name = node.op.name
        args = node.args
        if name in MATH_CALLS:
            value = self.as_typed(self.expr(args[0]), torch_dtype(node.dtype))
            return MATH_CALLS[name](value.to(torch.float32)).to(torch_dtype(node.dtype))
        if name == "tirx.if_then_else":
            return self.select(self.expr(args[0]), args[1], args[2], node.dtype)
        if name == "tl.infinity":
            return torch.tensor(float("inf"), dtype=torch_dtype(node.dtype))
        if name in BITWISE_CALLS:
            dtype = torch_dtype(node.dtype)
            a, b = (self.as_typed(self.expr(arg), dtype) for arg in args[:2])
            return fitted(BITWISE_CALLS[name](a, b), str(node.dtype))
        if name == "tirx.bitwise_not":
            return fitted(
                torch.bitwise_not(self.as_typed(self.expr(args[0]), torch_dtype(node.dtype))), str(node.dtype)
            )
        if name == "tirx.reinterpret":
            value = self.expr(args[0])
            value = value if isinstance(value, torch.Tensor) else torch.tensor(int(value))
            return reinterpret_bits(value, str(args[0].dtype), str(node.dtype))
        if name == "tirx.pow":
            base = self.as_typed(self.expr(args[0]), torch_dtype(node.dtype))
            return torch.pow(base, self.as_typed(self.expr(args[1]), torch_dtype(node.dtype)))
        raise Unsupported(f"the call {name}")

    def evaluate(self, value: Any) -> None:
        if isinstance(value, self.tir.Call):
            handler = HANDLERS.get(value.op.name)
            if handler is not None:
                handler(self, value)
                return
            if value.op.name in ("tl.launch_thread_idx",):
                return
            if value.op.name in ELEMENT_ATOMICS:
                self.atomic_element(value, ELEMENT_ATOMICS[value.op.name])
                return
            callee = str(getattr(value.args[0], "value", "")) if value.args else ""
            if value.op.name == "tirx.call_extern" and callee.startswith("debug_print"):
                return  # T.print: the GPU prints, the simulator computes; neither changes a value
            raise Unsupported(f"the tile op {value.op.name}")
        if isinstance(value, self.tir.IntImm):
            return
        raise Unsupported(f"the statement {value}")
