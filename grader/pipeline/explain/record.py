"""The simulator with a recorder attached: what one block did, step by step (``--explain``).

A step is one tile operation (``T.copy``, ``T.gemm``, ``T.reduce_*``, ``T.fill``, ...), one ``T.Parallel`` nest,
or one store outside any nest, as the block ran it, inside the serial and pipelined loops it sits in (unrolled:
each iteration's steps are steps of their own). Every block still runs, in the grader's order, so that what the
recorded block reads is what it would read in the graded run; only the wanted block is recorded.

What a step touched comes from the simulator itself: a tile operation's regions (TileLang marks each region
read, written or both), and the element indices a ``T.Parallel`` nest or a store loads and stores. A region or an
index past a global tensor's edge is recorded as read as zero (TileLang's guarded loads) or dropped.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from grader.outcome import Step, TileValues, Touch
from grader.pipeline.simulate.interp import Interpreter
from grader.pipeline.simulate.tileops import HANDLERS

MAX_STEPS = 400  # steps kept for the recorded block; the rest are counted, not kept
MAX_CELLS = 32  # a tile is shown with at most this many cells a side (larger ones are pooled)
OPS = {
    "tl.tileop.copy": "copy",
    "tl.tileop.fill": "fill",
    "tl.tileop.reduce": "reduce",
    "tl.tileop.gemm": "gemm",
    "tl.tileop.cumsum": "cumsum",
    "tl.tileop.atomicadd": "atomic_add",
}
READ, WRITE = 1, 2  # the access mask TileLang gives each T.region operand


def pack(mask: torch.Tensor) -> str:
    """A boolean tensor as packed bits (row-major, numpy's big-endian bit order) in base64."""
    bits = np.packbits(mask.reshape(-1).to(torch.uint8).numpy())
    return base64.b64encode(bits.tobytes()).decode("ascii")


def unpack(text: str, shape: list[int]) -> torch.Tensor:
    count = int(np.prod(shape)) if shape else 1
    bits = np.unpackbits(np.frombuffer(base64.b64decode(text), dtype=np.uint8))[:count]
    return torch.from_numpy(bits.astype(bool)).reshape(shape)


def tile_values(name: str, scope: str, data: torch.Tensor) -> TileValues:
    """A block-local buffer's values as a 2-D grid of at most MAX_CELLS a side (largest magnitude per patch)."""
    values = data.detach().to(torch.float64)
    shape = list(values.shape)
    grid = values.reshape(1, -1) if values.dim() <= 1 else values.reshape(-1, values.shape[-1])
    rows, cols = grid.shape
    cell = [max(1, -(-rows // MAX_CELLS)), max(1, -(-cols // MAX_CELLS))]
    if cell != [1, 1]:
        padded = torch.full((-(-rows // cell[0]) * cell[0], -(-cols // cell[1]) * cell[1]), float("nan"))
        padded[:rows, :cols] = grid
        patches = padded.reshape(padded.shape[0] // cell[0], cell[0], padded.shape[1] // cell[1], cell[1])
        patches = patches.permute(0, 2, 1, 3).reshape(padded.shape[0] // cell[0], padded.shape[1] // cell[1], -1)
        magnitude = torch.where(torch.isnan(patches), torch.full_like(patches, -1.0), patches.abs())
        grid = patches.gather(2, magnitude.argmax(dim=2, keepdim=True)).squeeze(2)
    finite = values[torch.isfinite(values)]
    shown = [[None if not np.isfinite(v) else float(v) for v in row] for row in grid.tolist()]
    return TileValues(
        name,
        scope,
        shape,
        shown,
        cell,
        low=float(finite.min()) if finite.numel() else None,
        high=float(finite.max()) if finite.numel() else None,
    )


def _bounding(mask: torch.Tensor) -> list[list[int]]:
    """The box around a mask's elements, [lo0, hi0, lo1, hi1, ...] (a step that touched a buffer both as a region
    and element by element is drawn as boxes)."""
    found = torch.nonzero(mask)
    if not found.numel():
        return []
    low, high = found.min(dim=0).values.tolist(), (found.max(dim=0).values + 1).tolist()
    return [[bound for lo, hi in zip(low, high) for bound in (lo, hi)]]


@dataclass
class Writer:
    """Who last wrote the element being looked for: the block, its step number, the line."""

    block: tuple[int, ...]
    step: int
    line: int


@dataclass
class Search:
    """The element to find the writer of: a global buffer's name and its row-major flat index."""

    buffer: str
    flat: int
    found: Writer | None = None
    grid: list[int] = field(default_factory=list)


class Recorder(Interpreter):
    """The interpreter, recording the steps of the block ``want`` (blockIdx as a tuple, x first), or, with
    ``search``, noting which block and step last wrote one global element."""

    def __init__(
        self,
        func: Any,
        tensors: dict[str, torch.Tensor],
        want: tuple[int, ...] | None = None,
        search: Search | None = None,
        source: list[str] | None = None,
        keep: tuple[int, int] = (0, MAX_STEPS),
        **limits: Any,
    ):
        super().__init__(func, tensors, **limits)
        self.want, self.search = want, search
        self.keep = keep  # the block's steps recorded: [first, last), at most MAX_STEPS of them
        self.source = source or []  # the kernel file's lines, for each step's text
        self.steps: list[Step] = []
        self.dropped = 0  # steps past MAX_STEPS
        self.step: Step | None = None  # the step being recorded
        self.step_number = 0  # steps of the current block so far (also when not recording)
        self.loops: list[tuple[str, int]] = []
        self.block_seen: tuple[int, ...] | None = None
        self.grid: list[int] = []
        self.written: dict[str, Any] = {}  # block-local buffers the current step wrote: name -> buffer
        self.pending: dict[tuple[str, str], dict[str, Any]] = {}  # what the current step touched so far

    # ------------------------------------------------------------------ where we are
    def block(self) -> tuple[int, ...]:
        return tuple(int(self.env[v]) for _, v in self.block_vars)

    def recording(self) -> bool:
        return self.want is not None and bool(self.block_vars) and self.block() == tuple(self.want)

    def line_of(self, node: Any) -> int:
        from tilelang.ir import get_stmt_span

        span = get_stmt_span(node)
        if span is None or span.source_name is None:
            return 0
        name = str(span.source_name.name)
        # a tile op TileLang's own Python emits (T.reduce_sum's body, say) carries the library's line
        return int(span.line) if "site-packages" not in name and "/tilelang/" not in name else 0

    # ------------------------------------------------------------------ steps
    def stmt(self, node: Any) -> None:
        t = self.tir
        step_kind = None
        if isinstance(node, t.Evaluate) and isinstance(node.value, t.Call) and node.value.op.name in OPS:
            step_kind = OPS[node.value.op.name]
        elif isinstance(node, t.For) and node.kind == t.ForKind.PARALLEL and not self.parallel_vars:
            step_kind = "parallel"
        elif isinstance(node, t.BufferStore) and not self.parallel_vars and self.step is None:
            step_kind = "store"
        if step_kind is None or (self.step is not None and step_kind == "store"):
            super().stmt(node)
            return
        if self.block_vars and self.block() != self.block_seen:
            self.block_seen, self.step_number = self.block(), 0
            self.grid = [self.block_extents[v] for _, v in self.block_vars]
        number = self.step_number
        self.step_number += 1
        if self.search is not None:
            self.search_step = (number, self.line_of(node))
        if not self.recording() or not self.keep[0] <= number < self.keep[1]:
            if self.recording():
                self.dropped += 1
            super().stmt(node)
            return
        line = self.line_of(node) or self.guess_line(node, step_kind)
        self.step = Step(
            index=number,
            line=line,
            source=self.source[line - 1].strip() if 0 < line <= len(self.source) else "",
            op=step_kind,
            loops=dict(self.loops),
        )
        self.written, self.pending = {}, {}
        try:
            super().stmt(node)
        finally:
            step, self.step = self.step, None
            self.finish_touches(step)
            for buffer in self.written.values():
                step.tiles.append(tile_values(buffer.name, self.scopes[buffer.data], self.tensor_of(buffer)))
            self.steps.append(step)

    def guess_line(self, node: Any, kind: str) -> int:
        """A step whose TIR carries no line of the kernel's file (a tile op written in TileLang's own Python, as
        T.reduce_max is): the first line after the previous step's that calls it, else the first in the file
        (a macro's body sits above the kernel that calls it)."""
        words = {"reduce": "T.reduce", "cumsum": "T.cumsum", "gemm": "T.gemm", "copy": "T.copy"}
        word = words.get(kind, "T.")
        if kind == "reduce":  # T.reduce_max, T.reduce_sum, ...: the reduction's name is its third argument
            word = f"T.reduce_{getattr(node.value.args[2], 'value', '')}"
        previous = self.steps[-1].line if self.steps else 0
        lines = list(range(previous + 1, len(self.source) + 1)) + list(range(1, previous + 1))
        for number in lines:
            text = self.source[number - 1]
            if word in text and not text.lstrip().startswith("#"):
                return number
        return 0

    def loop(self, node: Any) -> None:
        t = self.tir
        if node.kind not in (t.ForKind.SERIAL, t.ForKind.UNROLLED) or self.parallel_vars:
            super().loop(node)
            return
        start, extent = self.int_of(node.min), self.int_of(node.extent)
        name = str(node.loop_var.name)
        for index in range(start, start + extent):
            self.env[node.loop_var] = index
            self.loops.append((name, index))
            try:
                self.stmt(node.body)
            finally:
                self.loops.pop()

    # ------------------------------------------------------------------ what a step touched
    def evaluate(self, value: Any) -> None:
        if isinstance(value, self.tir.Call) and value.op.name in HANDLERS:
            if self.step is not None or self.search is not None:
                self.note_regions(value)
        super().evaluate(value)

    def note_regions(self, call: Any) -> None:
        # A reduce without clear and a gemm without clear_accum add to their destination: they read it too
        adds_to = None
        if call.op.name == "tl.tileop.reduce" and not bool(self.expr(call.args[4])):
            adds_to = call.args[1]
        elif call.op.name == "tl.tileop.gemm" and not bool(self.expr(call.args[9])):
            adds_to = call.args[2]
        for arg in call.args:
            if not (isinstance(arg, self.tir.Call) and arg.op.name == "tl.region"):
                continue
            load = arg.args[0]
            access = int(arg.args[1]) | (READ if arg.same_as(adds_to) else 0)
            base = [self.int_of(i) for i in load.indices]
            extents = [self.int_of(e) for e in arg.args[2:]]
            buffer = load.buffer
            shape = self.shape_of(buffer)
            if len(base) != len(shape):
                continue
            scope = self.scopes[buffer.data]
            box = [bound for b, e in zip(base, extents) for bound in (b, b + e)]
            clipped = [bound for b, e, n in zip(base, extents, shape) for bound in (max(0, b), min(n, b + e))]
            inside = int(np.prod([max(0, clipped[2 * i + 1] - clipped[2 * i]) for i in range(len(shape))]))
            outside = int(np.prod(extents)) - inside
            if access & WRITE and self.search is not None:
                self.check_search(buffer.name, shape, clipped=clipped)
            if self.step is None:
                continue
            if access & READ:
                self.touch(buffer, scope, shape, "read", boxes=[clipped], count=inside)
                if scope == "global" and outside > 0:
                    self.touch(buffer, scope, shape, "zero", boxes=[box], count=outside)
            if access & WRITE:
                self.touch(buffer, scope, shape, "write", boxes=[clipped], count=inside)

    def touch(self, buffer: Any, scope: str, shape: list[int], mode: str, boxes=(), mask=None, count=0) -> None:
        """Note that the step touched ``buffer``: element masks are OR-ed while the step runs and packed once at
        its end (``finish_touches``); boxes and counts add up."""
        key = (buffer.name, mode)
        entry = self.pending.get(key)
        if entry is None:
            entry = self.pending[key] = {"scope": scope, "shape": list(shape), "boxes": [], "mask": None, "count": 0}
        if mask is not None:
            entry["mask"] = mask if entry["mask"] is None else entry["mask"] | mask
        else:
            entry["boxes"] += [list(b) for b in boxes]
            entry["count"] += count
        if mode == "write" and scope != "global":
            self.written[buffer.name] = buffer

    def finish_touches(self, step: Step) -> None:
        for (name, mode), entry in self.pending.items():
            mask = entry["mask"]
            count = entry["count"] + (int(mask.sum()) if mask is not None else 0)
            packed = pack(mask) if mask is not None and not entry["boxes"] else ""
            boxes = entry["boxes"] if mask is None else entry["boxes"] + _bounding(mask) * bool(entry["boxes"])
            step.touches.append(Touch(name, entry["scope"], entry["shape"], mode, boxes, packed, count))
        self.pending = {}

    def element_mask(self, buffer: Any, indices: list[Any]) -> tuple[torch.Tensor, int]:
        """The elements ``indices`` (under the current if-mask) pick out of ``buffer``, and how many fall outside."""
        shape = self.shape_of(buffer)
        grids = [self.as_tensor(i) for i in indices]
        if self._mask is not None:
            grids.append(self._mask)
        grids = torch.broadcast_tensors(*grids)
        keep = grids[-1].reshape(-1).bool() if self._mask is not None else None
        flat = [g.reshape(-1).to(torch.int64) for g in grids[: len(indices)]]
        if keep is not None:
            flat = [f[keep] for f in flat]
        inside = torch.ones_like(flat[0], dtype=torch.bool) if flat else torch.ones(1, dtype=torch.bool)
        for f, n in zip(flat, shape):
            inside &= (f >= 0) & (f < n)
        mask = torch.zeros(shape, dtype=torch.bool)
        if flat:
            mask[tuple(f[inside] for f in flat)] = True
        return mask, int((~inside).sum())

    def load(self, node: Any) -> Any:
        if self.step is not None and node.buffer.data in self.scopes:
            buffer = node.buffer
            mask, outside = self.element_mask(buffer, [self.expr(i) for i in node.indices])
            scope, shape = self.scopes[buffer.data], self.shape_of(buffer)
            self.touch(buffer, scope, shape, "read", mask=mask)
            if outside and scope == "global":
                self.touch(buffer, scope, shape, "zero", count=outside)
        return super().load(node)

    def store(self, node: Any) -> None:
        buffer = node.buffer
        if (self.step is not None or self.search is not None) and buffer.data in self.scopes:
            mask, _ = self.element_mask(buffer, [self.expr(i) for i in node.indices])
            if self.search is not None:
                self.check_search(buffer.name, self.shape_of(buffer), mask=mask)
            if self.step is not None:
                self.touch(buffer, self.scopes[buffer.data], self.shape_of(buffer), "write", mask=mask)
        super().store(node)

    def check_search(self, name: str, shape: list[int], clipped: list[int] | None = None, mask=None) -> None:
        search = self.search
        if search is None or name != search.buffer or not self.block_vars:
            return
        position = np.unravel_index(search.flat, shape) if shape else ()
        if mask is not None:
            hit = bool(mask[tuple(int(p) for p in position)])
        else:
            hit = all(clipped[2 * i] <= int(p) < clipped[2 * i + 1] for i, p in enumerate(position))
        if hit:
            number, line = getattr(self, "search_step", (self.step_number, 0))
            search.found = Writer(self.block(), number, line)
            search.grid = [self.block_extents[v] for _, v in self.block_vars]
