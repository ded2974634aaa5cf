"""Races between the blocks of one launch.

The simulator runs a launch's blocks one after another, so a block sees every write of the blocks
before it. A GPU runs them at the same time, in no set order, and a block may read an element before
or after another block changes it. This module keeps, per element of each global buffer the launch
writes, which block last changed it without an atomic, which block added to it atomically, and the
lowest and highest block that read it. Two blocks that touch one element, one of them changing it
without an atomic, are a race whatever order the GPU picks; so are a read and an atomic add from
different blocks (the reader sees some of the sum). Writes that leave an element as it was (two
blocks storing the same value) are no race: every order gives the same result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from grader.pipeline.simulate.faults import Unsupported
from grader.tir import written_element, written_region

NONE = -1


@dataclass
class Race:
    """Two blocks of one launch touch one element of ``buffer`` in an order-dependent way: ``first`` (in
    the simulator's order) did ``did_first`` to it, then ``second`` did ``did_second`` ("read", "store",
    "add": an atomic add)."""

    buffer: str
    element: tuple[int, ...]
    first: tuple[int, ...]  # blockIdx.x, .y, .z
    did_first: str
    second: tuple[int, ...]
    did_second: str
    axes: tuple[str, ...] = ()  # the kernel's names for them (bx, by)

    def sentence(self) -> str:
        element = ", ".join(map(str, self.element))
        verbs = {"read": "reads it", "store": "stores to it without an atomic", "add": "adds to it atomically"}
        one, other = _name(self.first, self.axes), _name(self.second, self.axes)
        if self.did_first == self.did_second == "store":
            how = f"blocks {one} and {other} both store to it, different values, without an atomic"
        else:
            how = f"block {one} {verbs[self.did_first]} and block {other} {verbs[self.did_second]}"
        return (
            f"two blocks of one launch race on `{self.buffer}[{element}]`: {how}. A GPU runs a launch's blocks "
            "at the same time, in no set order, so the result depends on which gets there first. Give each block "
            "its own elements, or add across blocks with T.atomic_add and read the sums in a later launch"
        )


def _name(block: tuple[int, ...], axes: tuple[str, ...]) -> str:
    if len(block) == 1:
        return str(block[0])
    if len(axes) == len(block):
        return "(" + ",".join(f"{a}={b}" for a, b in zip(axes, block)) + ")"  # no spaces: one word
    return "(" + ",".join(map(str, block)) + ")"


class Element:
    """The history of one buffer's elements in the current launch (flat, over the buffer's storage)."""

    def __init__(self, numel: int):
        self.writer = torch.full((numel,), NONE, dtype=torch.int64)
        self.adder = torch.full((numel,), NONE, dtype=torch.int64)
        self.first_reader = torch.full((numel,), NONE, dtype=torch.int64)
        self.last_reader = torch.full((numel,), NONE, dtype=torch.int64)


class RaceWatch:
    """Which global elements each block of the current launch touched; ``check_*`` raise Race."""

    def __init__(self, watched: set[Any]):
        self.watched = watched  # buffer data vars some launch writes (buffers only read cannot race)
        self.history: dict[Any, Element] = {}
        self.blocks: list[tuple[int, ...]] = []  # block number -> its blockIdx values
        self.numbers: dict[tuple[int, ...], int] = {}
        self.block = NONE
        self.axes: tuple[str, ...] = ()

    def new_launch(self) -> None:
        self.history.clear()
        self.blocks.clear()
        self.numbers.clear()
        self.block = NONE

    def enter_block(self, index: tuple[int, ...], axes: tuple[str, ...] = ()) -> None:
        self.axes = axes
        number = self.numbers.get(index)
        if number is None:
            number = self.numbers[index] = len(self.blocks)
            self.blocks.append(index)
        self.block = number

    def _element(self, data_var: Any, storage: torch.Tensor) -> Element | None:
        if self.block == NONE or data_var not in self.watched:
            return None
        element = self.history.get(data_var)
        if element is None:
            element = self.history[data_var] = Element(storage.numel())
        return element

    def _race(self, name: str, shape: list[int], flat: torch.Tensor, other: torch.Tensor, did: str, i_do: str) -> Race:
        """The first element of ``flat`` where ``other`` names another block, which ``did`` to it."""
        hit = int(torch.nonzero((other != NONE) & (other != self.block))[0, 0])
        coords = tuple(int(c) for c in torch.unravel_index(flat[hit], shape)) if shape else ()
        return Race(name, coords, self.blocks[int(other[hit])], did, self.blocks[self.block], i_do, self.axes)

    def _check(self, name: str, shape: list[int], flat: torch.Tensor, i_do: str, others: list) -> None:
        for other, did in others:
            if bool(((other != NONE) & (other != self.block)).any()):
                raise RaceError(self._race(name, shape, flat, other, did, i_do))

    def read(
        self, data_var: Any, storage: torch.Tensor, name: str, shape: list[int], flat: torch.Tensor, again: bool = True
    ) -> None:
        """``again``: an element this block stored earlier in the launch gives no verdict (read_back); False where
        the read is in the T.Parallel nest that stored it (lane_races.py judges those, lane by lane)."""
        element = self._element(data_var, storage)
        if element is None or flat.numel() == 0:
            return
        if again:
            self.read_back(name, shape, flat, element.writer[flat])
        self._check(name, shape, flat, "read", [(element.writer[flat], "store"), (element.adder[flat], "add")])
        first = element.first_reader[flat]
        element.first_reader[flat] = torch.where(first == NONE, self.block, first)
        element.last_reader[flat] = self.block

    def read_back(self, name: str, shape: list[int], flat: torch.Tensor, writer: torch.Tensor) -> None:
        """Unsupported where this block reads a global element it stored earlier in the launch. TileLang puts no
        barrier between a block's stores to global memory and its later loads, so the load sees the store only if
        the same thread made it, and which thread holds which element is TileLang's choice, not the simulator's:
        a softmax that divided C's rows by their sums after reading them back from C read NaN (the poison) on an
        H200 in 4 to 5 of its 7 cases, a different count each run; the simulator, which runs a block's statements
        one after another, had passed it (tests/wrong/p06/softmax_normalized_through_global.py)."""
        mine = writer == self.block
        if bool(mine.any()):
            hit = int(torch.nonzero(mine)[0, 0])
            element = ", ".join(str(int(c)) for c in torch.unravel_index(flat[hit], shape)) if shape else ""
            raise Unsupported(
                f"a read of `{name}[{element}]`, which this block stored earlier in the same launch (on the GPU no "
                "barrier orders a block's stores to global memory before its later loads: another thread's store "
                "may not have landed). Keep what the block needs again in a fragment or in shared memory"
            )

    def write(
        self,
        data_var: Any,
        storage: torch.Tensor,
        name: str,
        shape: list[int],
        flat: torch.Tensor,
        changed: torch.Tensor,
        atomic: bool = False,
    ) -> None:
        """``flat`` elements written; ``changed``: where the value differs from the element's before."""
        element = self._element(data_var, storage)
        if element is None or flat.numel() == 0:
            return
        touched = flat if atomic else flat[changed]
        if touched.numel() == 0:
            return
        first, last = element.first_reader[touched], element.last_reader[touched]
        other_reader = torch.where(first != self.block, first, last)
        others = [(element.writer[touched], "store"), (other_reader, "read")]
        if not atomic:
            others.append((element.adder[touched], "add"))
        self._check(name, shape, touched, "add" if atomic else "store", others)
        (element.adder if atomic else element.writer)[touched] = self.block


class RaceError(Exception):
    def __init__(self, race: Race):
        super().__init__(race.sentence())
        self.race = race


def written_globals(func: Any, tir: Any) -> set[Any]:
    """The data vars of global buffers the kernel writes: stores, tile-op regions marked as written (a
    ``tl.region``'s second argument is its access mask: 1 read, 2 write, 3 both), and the element a scalar
    atomic points at (``T.atomic_add(Y[i], x)``: a ``tl.access_ptr`` of a load, written with mask 2 or 3)."""
    found: set[Any] = set()

    def visit(node: Any) -> None:
        if isinstance(node, tir.BufferStore):
            found.add(node.buffer.data)
        elif written_region(node):
            found.add(node.args[0].buffer.data)
        elif (element := written_element(node)) is not None:
            found.add(element.buffer.data)

    tir.stmt_functor.post_order_visit(func.body, visit)
    return found
