"""A CPU simulator of TileLang kernels at tile level (see interp.py for the semantics)."""

from __future__ import annotations

from typing import Any

import torch

from grader.simulate.interp import Interpreter, SimulationError, Unsupported

__all__ = ["SimulationError", "Unsupported", "simulate"]


def simulate(tir: Any, tensors: dict[str, torch.Tensor]) -> None:
    """Run the kernel's TIR on CPU tensors, writing its outputs in place."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)  # a loaded 2-core machine runs tiny ops far faster single-threaded
    try:
        Interpreter(tir, tensors).run()
    finally:
        torch.set_num_threads(previous)
