"""A CPU simulator of TileLang kernels at tile level (see interp.py for the semantics)."""

from __future__ import annotations

from typing import Any

import torch

from grader.pipeline.simulate.faults import SimulationError, Unsupported
from grader.pipeline.simulate.interp import Interpreter

__all__ = ["SimulationError", "Unsupported", "simulate"]


def simulate(
    tir: Any,
    tensors: dict[str, torch.Tensor],
    profile: Any = None,
    tma_stores: bool = False,
    reverse_blocks: bool = False,
) -> None:
    """Run the kernel's TIR on CPU tensors, writing its outputs in place, with the shared memory
    limit of ``profile`` (a grader.devices.Profile; Hopper's by default). ``tma_stores``: the kernel's
    compiled CUDA stores shared tiles with TMA, whose 1-D stores write whole 16-byte units at a tail.
    ``reverse_blocks``: run each launch's blocks last to first (the grader alternates from case to case,
    so a result that depends on the blocks' order differs between cases; races.py names the race)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)  # a loaded 2-core machine runs tiny ops far faster single-threaded
    try:
        limits = (
            {} if profile is None else {"shared_limit": profile.shared_per_block, "gpu": f"a block on {profile.label}"}
        )
        Interpreter(tir, tensors, **limits, tma_stores=tma_stores, reverse_blocks=reverse_blocks).run()
    finally:
        torch.set_num_threads(previous)
