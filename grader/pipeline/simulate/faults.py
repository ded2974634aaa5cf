"""What the simulator raises, and the one constant both the interpreter and the tile ops need."""

from __future__ import annotations

from typing import Any

MMA_K = 16  # the K step of one Tensor Core instruction: T.gemm sums in slices this wide, rounding each


class SimulationError(Exception):
    """The kernel does something the GPU would not do correctly (learner's bug). ``race``: the two
    blocks and the element, when that something is a race between blocks (races.Race)."""

    def __init__(self, message: str, line: int | None = None, race: Any = None):
        super().__init__(message)
        self.line = line
        self.race = race


class Unsupported(Exception):
    """A construct the simulator does not implement (never a silent pass)."""
