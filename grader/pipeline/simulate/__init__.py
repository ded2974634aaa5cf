"""A CPU simulator of TileLang kernels at tile level (see interp.py for the semantics)."""

from __future__ import annotations

import os
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
    contract: bool = False,
    approximate: int | None = None,
) -> None:
    """Run the kernel's TIR on CPU tensors, writing its outputs in place, with the shared memory
    limit of ``profile`` (a grader.devices.Profile; Hopper's by default). ``tma_stores``: the kernel's
    compiled CUDA stores shared tiles with TMA, whose 1-D stores write whole 16-byte units at a tail.
    ``reverse_blocks``: run each launch's blocks last to first (the grader alternates from case to case,
    so a result that depends on the blocks' order differs between cases; races.py names the race). ``contract``: a
    float32 multiply-add rounded once (Expressions.fused_multiply_add). ``approximate``: a key (an int) to move each
    result of a math function the GPU approximates by the ulps it may differ by (Interpreter.approximate)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)  # a loaded 2-core machine runs tiny ops far faster single-threaded
    try:
        limits = (
            {} if profile is None else {"shared_limit": profile.shared_per_block, "gpu": f"a block on {profile.label}"}
        )
        before = {name: whole(tensor).clone() for name, tensor in tensors.items()}
        limits["contract"] = contract
        limits["approximate"] = approximate
        first = Interpreter(tir, tensors, **limits, tma_stores=tma_stores, reverse_blocks=reverse_blocks)
        first.run()
        if first.integer_memory:
            again_with_integers_at_random(tir, tensors, before, limits, tma_stores, reverse_blocks)
    finally:
        torch.set_num_threads(previous)


UNDEFINED = (
    "an integer read from memory the kernel allocated and nothing wrote (a T.alloc_var without a value, or a "
    "local, fragment or shared buffer read before it is stored), which the GPU leaves undefined"
)


def whole(tensor: torch.Tensor) -> torch.Tensor:
    """All of ``tensor``'s storage, flat: an output is a view with guard bands around it (inputs.poisoned_outputs)."""
    return torch.as_strided(tensor, (tensor.untyped_storage().nbytes() // tensor.element_size(),), (1,), 0)


def again_with_integers_at_random(
    tir: Any,
    tensors: dict[str, torch.Tensor],
    before: dict[str, torch.Tensor],
    limits: dict[str, Any],
    tma_stores: bool,
    reverse_blocks: bool,
) -> None:
    """Run the kernel again on ``before`` (copies of the tensors' storage as the first run found them), with the
    integer and bool memory it allocates filled at random where the first run had 0 (unwritten.integer_fill), and
    raise Unsupported where anything differs: an error in one run alone, or any byte of any tensor (its guard bands
    included). The GPU leaves that memory undefined, so a kernel whose result depends on it is right or wrong there
    by chance (tests/attacks/uninitialised_int.py); the simulator can give it no verdict."""
    generator = torch.Generator()
    generator.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
    copies = {
        name: torch.as_strided(before[name], tensor.shape, tensor.stride(), tensor.storage_offset())
        for name, tensor in tensors.items()
    }
    try:
        Interpreter(
            tir, copies, **limits, tma_stores=tma_stores, reverse_blocks=reverse_blocks, integers=generator
        ).run()
    except (SimulationError, Unsupported) as error:
        raise Unsupported(f"{UNDEFINED} (with other values there: {error})") from None
    for name, tensor in tensors.items():
        if not torch.equal(whole(tensor).view(torch.uint8), before[name].view(torch.uint8)):
            raise Unsupported(UNDEFINED)
