"""Races between the lanes of one T.Parallel nest, on memory the block's threads share (shared and global).

The simulator runs a T.Parallel statement for every lane at once: all reads, then all writes. The GPU does not.
TileLang gives each thread its share of the iterations, runs a thread's share one iteration after another, and
orders nothing between threads inside the nest (its barriers go between statements, and between the unrolled
chunks of one thread's share). So a lane that reads an element another lane of the same nest writes gets the old
value or the new one depending on which ran first. A scan written as `s[i, j] = s[i, j] + s[i, j - d]` in one
T.Parallel was right here and wrong in every element on an H100, the same in three runs (the second chunk of each
thread's share read the first chunk's new values: tests/wrong/p05/row_sum_scan_without_barriers.py).

Each access inside a nest is recorded as (element, lane); when the outermost nest ends, an element that one lane
writes and another lane reads fails the case, naming both lanes. Two lanes writing one element are
Memory.no_lanes_disagree's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from grader.pipeline.simulate.faults import SimulationError

LANE_BITS = 20  # lane coordinates per axis below 2**20
ENCODED_AXES = 3  # lane ids pack the first three parallel axes into one int64


@dataclass
class Accesses:
    """One buffer's accesses in the current nest: flat element positions and the lane ids beside them."""

    name: str
    shape: list[int]
    reads: list[tuple[torch.Tensor, torch.Tensor]] = field(default_factory=list)
    writes: list[tuple[torch.Tensor, torch.Tensor]] = field(default_factory=list)


@dataclass
class LaneWatch:
    """The shared and global accesses of the T.Parallel nest being run, by buffer, of the buffers it stores to;
    ``axes``: each lane axis's loop variable name and first value, for the message."""

    buffers: dict[object, Accesses] = field(default_factory=dict)
    axes: dict[int, tuple[str, int]] = field(default_factory=dict)
    written: frozenset = frozenset()  # the buffers some store in the nest writes: the only ones recorded

    @staticmethod
    def lane_ids(shape: torch.Size) -> torch.Tensor | None:
        """An id per lane of a grid of this shape (RANK axes), the same for one lane in every access of the nest;
        None where the lanes do not fit the encoding (then the nest is not watched)."""
        if any(n > 1 for n in shape[ENCODED_AXES:]) or any(n >= 1 << LANE_BITS for n in shape):
            return None
        ids = torch.zeros(shape, dtype=torch.int64)
        for axis in range(ENCODED_AXES):
            if shape[axis] > 1:
                view = [1] * len(shape)
                view[axis] = shape[axis]
                ids = ids + (torch.arange(shape[axis], dtype=torch.int64) << (LANE_BITS * axis)).reshape(view)
        return ids

    def record(
        self, key: object, name: str, shape: list[int], positions: torch.Tensor, lanes: torch.Tensor, write: bool
    ) -> None:
        if positions.numel() == 0:
            return
        accesses = self.buffers.setdefault(key, Accesses(name, shape))
        (accesses.writes if write else accesses.reads).append((positions, lanes))

    def end_nest(self) -> None:
        """The outermost nest is over: fail on the first element one lane wrote and another read."""
        try:
            for accesses in self.buffers.values():
                self.check(accesses)
        finally:
            self.buffers.clear()
            self.axes.clear()
            self.written = frozenset()

    def check(self, accesses: Accesses) -> None:
        if not accesses.writes or not accesses.reads:
            return
        written = torch.cat([p for p, _ in accesses.writes])
        writers = torch.cat([lane for _, lane in accesses.writes])
        read = torch.cat([p for p, _ in accesses.reads])
        readers = torch.cat([lane for _, lane in accesses.reads])
        order = torch.argsort(written)
        written, writers = written[order], writers[order]
        # the lowest and highest lane writing each element: a reader that is not both is another lane
        unique, counts = torch.unique_consecutive(written, return_counts=True)
        group = torch.repeat_interleave(torch.arange(len(unique)), counts)
        low = torch.full(unique.shape, 1 << 62, dtype=torch.int64).scatter_reduce_(0, group, writers, "amin")
        high = torch.full(unique.shape, -1, dtype=torch.int64).scatter_reduce_(0, group, writers, "amax")
        slot = torch.searchsorted(unique, read).clamp(max=len(unique) - 1)
        hit = (unique[slot] == read) & ((low[slot] != readers) | (high[slot] != readers))
        if not bool(hit.any()):
            return
        k = int(hit.nonzero()[0])
        element, reader = int(read[k]), int(readers[k])
        writer = int(low[slot[k]]) if int(low[slot[k]]) != reader else int(high[slot[k]])
        raise SimulationError(self.sentence(accesses, element, writer, reader))

    def lane_text(self, lane: int) -> str:
        parts = []
        for axis, (name, start) in sorted(self.axes.items()):
            parts.append(f"{name} = {start + ((lane >> (LANE_BITS * axis)) & ((1 << LANE_BITS) - 1))}")
        return f"({', '.join(parts)})" if parts else "(another)"

    def sentence(self, accesses: Accesses, element: int, writer: int, reader: int) -> str:
        coords = torch.unravel_index(torch.tensor(element), accesses.shape) if accesses.shape else ()
        where = f"{accesses.name}[{', '.join(str(int(c)) for c in coords)}]"
        return (
            f"lanes of one T.Parallel race on `{where}`: lane {self.lane_text(writer)} writes it, lane "
            f"{self.lane_text(reader)} reads it, and the GPU orders neither. Read one buffer and write another, or "
            "split the step into two T.Parallel loops (TileLang puts a barrier between them)"
        )
