"""The interpreter's memory (grader.pipeline.simulate.interp): buffer stores and loads, each lane's private
registers inside T.Parallel, exact products kept for fused sums, bounds, and the race watch's reads and writes."""

from __future__ import annotations

import math
from typing import Any

import torch

from grader.pipeline.simulate.faults import SimulationError, Unsupported
from grader.pipeline.simulate.values import (
    RANK,
    SHARED_BY_THREADS,
    flat_positions,
    lane,
    storage_of,
    torch_dtype,
)
from grader.tir import pointed_element


class Memory:
    """How the interpreter reads and writes buffers (a mixin of Interpreter)."""

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
        if product is not None and self.contract and data.dtype == torch.float64:
            value = product  # a register of contract mode keeps the product unrounded (Interpreter.contract)
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
                if node.buffer.data in self.thread_dependent:  # one value for every thread again
                    where = [torch.tensor([p]) for p in position]
                    self.thread_dependent[node.buffer.data][flat_positions(data, where)] = False
                if node.buffer.data in self.races.watched and self.scopes[node.buffer.data] == "global":
                    where = [torch.tensor([p]) for p in position]
                    self.watch_write(node.buffer, data, where, torch.as_tensor(value, dtype=data.dtype).reshape(1))
                data[position] = value
            return
        flat_indices, values, lanes = self.lanes_written(node.buffer, data, indices, value, mask)
        self.watch_lanes(node.buffer, data, indices, write=True)
        if node.buffer.data in self.races.watched and self.scopes[node.buffer.data] == "global":
            self.watch_write(node.buffer, data, flat_indices, values)
        if self.scopes[node.buffer.data] in SHARED_BY_THREADS:
            self.no_lanes_disagree(data, flat_indices, values)
        if node.buffer.data in self.thread_dependent:
            self.thread_dependent[node.buffer.data][flat_positions(data, flat_indices)] = False
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
        position = flat_positions(data, flat_indices)
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
        position = flat_positions(data, flat_indices) if flat_indices else torch.zeros(0, dtype=torch.int64)
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
        self.exact[buffer.data] = (shadow, storage_of(data), data._version)

    def exact_values(self, buffer: Any, data: torch.Tensor, writes_since: int = 0) -> torch.Tensor | None:
        """The unrounded values of ``buffer``, if nothing but product stores wrote it since they
        were kept (``writes_since``: writes the caller has just made itself)."""
        kept = self.exact.get(buffer.data)
        if kept is None or kept[1] is not storage_of(data) or kept[2] + writes_since != data._version:
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
        same value that is the buffer's value; where they differ it is thread-dependent: NaN for a float, and for
        an integer (which has no NaN) an element that gives no verdict when read (no_thread_dependent_read). An
        integer used to take the first lane's value: a kernel that stored its sums where `v == 1`, after every
        lane had set `v = i + 1`, passed here and stored zeros on the GPU (tests/attacks/private_int_lane.py)."""
        for data_var, copies in self.private.items():
            data = self.buffers[data_var]
            flat = copies.reshape(-1, data.numel())
            first = flat[0]
            same = ((flat == first) | (flat != flat)).all(dim=0)  # NaN == NaN here
            if data.dtype.is_floating_point:
                first = torch.where(same, first, torch.full_like(first, float("nan")))
            elif not bool(same.all()):
                self.thread_dependent[data_var] = ~same
            else:
                self.thread_dependent.pop(data_var, None)
            data.view(-1).copy_(first)
        self.private.clear()

    def no_thread_dependent_read(self, buffer: Any, data: torch.Tensor, indices: list[torch.Tensor]) -> None:
        """Unsupported where a lane the mask keeps reads an integer element that each thread holds a different value
        of (end_private): which value the GPU reads depends on the thread, and the simulator has one copy."""
        varying = self.thread_dependent.get(buffer.data)
        if varying is None:
            return
        shape = torch.broadcast_tensors(*indices)[0].shape if indices else ()
        read = varying[flat_positions(data, [i.expand(shape) for i in indices])].reshape(shape)
        self.unsupported_in_kept_lanes(
            read,
            f"a read of {buffer.name}, an integer that the lanes of one T.Parallel left different (each thread keeps"
            " its own value on the GPU)",
        )

    def load(self, node: Any) -> Any:
        data = self.tensor_of(node.buffer)
        indices = [self.expr(i) for i in node.indices]
        if self.private and node.buffer.data in self.private:
            return self.load_private(node.buffer, indices)
        if self.scopes[node.buffer.data] == "local.fragment" and self.parallel_vars:
            self.check_lane_access(node)
        if self.thread_dependent and node.buffer.data in self.thread_dependent:
            self.no_thread_dependent_read(node.buffer, data, [self.as_tensor(i) for i in indices])
        # a global buffer some launch writes: the races between blocks are watched on it (races.py)
        watched = node.buffer.data in self.races.watched and self.scopes[node.buffer.data] == "global"
        self.watch_lanes(node.buffer, data, indices, write=False)
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

    def watch_lanes(self, buffer: Any, data: torch.Tensor, indices: list[Any], write: bool) -> None:
        """Inside a T.Parallel nest, record which lane reads or writes which element of shared or global memory, for
        the lanes the mask keeps and, in a global buffer, inside its edges (lane_races.py)."""
        if (
            buffer.data not in self.lane_watch.written  # a buffer the nest only reads cannot race in it
            or not self.parallel_vars
            or self.scopes[buffer.data] not in SHARED_BY_THREADS
            or not data.is_contiguous()
        ):
            return
        tensors = [self.as_tensor(i) for i in indices]
        mask = [self._mask] if self._mask is not None else []
        try:
            shape = torch.broadcast_shapes(
                *(self.env[v].shape for v in self.parallel_vars), *(t.shape for t in tensors + mask)
            )
        except RuntimeError:
            return
        lanes = self.lane_watch.lane_ids(shape) if len(shape) == RANK else None
        if lanes is None:
            return
        grids = [t.expand(shape) for t in tensors]
        keep = mask[0].expand(shape) if mask else torch.ones(shape, dtype=torch.bool)
        for grid, extent in zip(grids, self.shape_of(buffer)):
            keep = keep & (grid >= 0) & (grid < extent)
        positions = flat_positions(data, [g[keep] for g in grids]) if grids else torch.zeros(0, dtype=torch.int64)
        self.lane_watch.record(buffer.data, buffer.name, list(data.shape), positions, lanes[keep], write)

    def watch_read(self, buffer: Any, data: torch.Tensor, indices: list[torch.Tensor]) -> None:
        """Record that the current block read these elements of a global buffer (races.py)."""
        if buffer.data in self.races.watched and data.is_contiguous():
            flat = flat_positions(data, indices)
            again = not (self.parallel_vars and buffer.data in self.lane_watch.written)
            self.races.read(buffer.data, data, buffer.name, list(data.shape), flat, again)

    def watch_write(
        self, buffer: Any, data: torch.Tensor, indices: list[torch.Tensor], values: torch.Tensor, atomic: bool = False
    ) -> None:
        """Record that the current block is about to write ``values`` to these elements (races.py)."""
        if buffer.data in self.races.watched and data.is_contiguous():
            flat = flat_positions(data, indices)
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
