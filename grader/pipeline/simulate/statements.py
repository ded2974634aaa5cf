"""The interpreter's statements (grader.pipeline.simulate.interp): one method per TIR statement kind, found
through a table made once per class; loops, branches, the masks of T.Parallel's lanes, allocations and tile ops."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from grader.pipeline.shared_memory import shared_memory_plan
from grader.pipeline.simulate.faults import SimulationError, Unsupported
from grader.pipeline.simulate.tileops import HANDLERS
from grader.pipeline.simulate.unwritten import (
    integer_fill,
    unwritten_fill,
)
from grader.pipeline.simulate.values import (
    CONTRACTED_TYPES,
    THREAD_INDEX,
    integer_range,
    lane,
    owned,
    torch_dtype,
)
from grader.tir import ELEMENT_ATOMICS

REGISTERS = ("local", "local.var", "local.fragment")
CONTRACTED = tuple(torch_dtype(name) for name in CONTRACTED_TYPES)  # values.CONTRACTED_TYPES as torch dtypes


class Statements:
    """How the interpreter runs each kind of TIR statement (a mixin of Interpreter)."""

    # ------------------------------------------------------------------ statements
    def run(self) -> None:
        from grader.pipeline.simulate.races import RaceError

        try:
            self.stmt(self.func.body)
        except RaceError as error:
            raise SimulationError(str(error), race=error.race) from None

    # TIR statement kind -> the method that runs it (bound per class by values.dispatch_table)
    STATEMENT_KINDS = {
        "SeqStmt": "sequence", "SBlockRealize": "realize", "SBlock": "tir_block", "For": "loop", "Bind": "bind",
        "Evaluate": "evaluate_statement", "BufferStore": "store", "IfThenElse": "branch", "AttrStmt": "attribute",
        "AllocBuffer": "alloc_buffer", "DeclBuffer": "declare_buffer",
    }  # fmt: skip

    def stmt(self, node: Any) -> None:
        method = self.statement_methods.get(type(node)) or self.statement_methods.resolve(type(node))
        if method is None:
            raise Unsupported(f"the statement {type(node).__name__}")
        method(self, node)

    def sequence(self, node: Any) -> None:
        for child in node.seq:
            self.stmt(child)

    def realize(self, node: Any) -> None:
        self.stmt(node.block)

    def tir_block(self, node: Any) -> None:
        self.check_shared(node)
        self.allocate(node.alloc_buffers)
        self.stmt(node.body)

    def bind(self, node: Any) -> None:
        self.env[node.var] = owned(self.bind_value(node.value))

    def evaluate_statement(self, node: Any) -> None:
        self.evaluate(node.value)

    def attribute(self, node: Any) -> None:
        self.stmt(node.body)  # block swizzles and similar hints change order, not results

    def alloc_buffer(self, node: Any) -> None:
        self.allocate([node.buffer])
        if getattr(node, "body", None) is not None:
            self.stmt(node.body)

    def declare_buffer(self, node: Any) -> None:
        self.stmt(node.body)

    def allocate(self, buffers: Any) -> None:
        for buffer in buffers:
            shape = [self.int_of(s) for s in buffer.shape]
            dtype = torch_dtype(buffer.dtype)
            self.scopes[buffer.data] = buffer.scope()
            if self.contract and dtype in CONTRACTED and buffer.scope() in REGISTERS and not self.views_dtype:
                dtype = torch.float64  # a register holds a product unrounded until it is added (Interpreter.contract)
            self.thread_dependent.pop(buffer.data, None)
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
            if not self.parallel_vars:  # an outermost nest: the buffers its lanes may race on
                self.lane_watch.written = self.stored_in(node)
            axis = self.lanes.take()
            self.lane_watch.axes[axis] = (str(node.loop_var.name), start)  # for a race's message
            self.env[node.loop_var] = lane(extent, axis) + start
            self.parallel_vars.add(node.loop_var)
            try:
                self.stmt(node.body)
            finally:
                self.parallel_vars.discard(node.loop_var)
                self.lanes.release(axis)
            if not self.parallel_vars:
                self.end_private()
                self.lane_watch.end_nest()
        elif kind in (self.tir.ForKind.SERIAL, self.tir.ForKind.UNROLLED, self.tir.ForKind.VECTORIZED):
            for index in range(start, start + extent):
                self.env[node.loop_var] = index
                self.stmt(node.body)
        else:
            raise Unsupported(f"a loop of kind {kind}")

    def stored_in(self, node: Any) -> frozenset:
        """The data vars of the buffers some store inside ``node`` writes (found once per loop node)."""
        found = self.stores_by_loop.get(node)
        if found is None:
            stores: set[Any] = set()
            self.tir.stmt_functor.post_order_visit(
                node.body, lambda n: stores.add(n.buffer.data) if isinstance(n, self.tir.BufferStore) else None
            )
            found = self.stores_by_loop[node] = frozenset(stores)
        return found

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
