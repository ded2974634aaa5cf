"""Which thread holds which element of a fragment, and a 16-bit sum in the order the GPU adds.

A fp16 row sum rounds after every addition, so its result depends on the order of the
additions, and a kernel that accumulates in fp16 can land one element either side of the
tolerance. To agree with the GPU case by case, the simulator adds in TileLang 0.1.15's order
(src/backend/common/op/reduce.h, tl_templates/cuda/reduce.h):

1. each thread sums the elements it holds, in the order of its local slots; when the slots
   come in aligned pairs it keeps two partial sums (even and odd slots, one ``half2``) and adds
   them at the end;
2. the threads that share an output combine their partials with an XOR butterfly
   (``tl::AllReduce``: offsets width/2, width/4, ..., 1);
3. the result is added to the destination when ``clear=False``.

Which thread holds which element is TileLang's own layout inference, run on the same TIR for
sm_90a. A product stored to a fragment and then summed is added unrounded: nvcc contracts the
``__hmul2`` and the ``__hadd2`` into one fused multiply-add.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from grader.pipeline.build import COMPILE_ONLY_TARGET
from grader.tir import layout_annotations


@dataclass(frozen=True)
class Placement:
    """For every element of a buffer: the thread that holds it and its slot in that thread."""

    thread: torch.Tensor
    slot: torch.Tensor


def fragment_placements(func: Any) -> dict[str, Placement]:
    """Run TileLang's passes up to layout inference and place every fragment's elements.
    Empty when the passes fail: the caller then falls back to a pairwise order."""
    import tilelang  # noqa: F401  (registers TileLang's passes)
    from tilelang import tvm
    from tilelang.cuda.pipeline import CUDAPassPipelineBodyPrologue

    target = tvm.target.Target(COMPILE_ONLY_TARGET)
    try:
        with target:
            module = CUDAPassPipelineBodyPrologue(tvm.IRModule({"main": func}), target)
    except Exception:  # a layout TileLang cannot infer fails the compile check, not the simulation
        return {}
    layouts: dict[str, Any] = {}
    for _, function in module.functions.items():
        for buffer, layout in layout_annotations(function.body) if hasattr(function, "body") else ():
            layouts[str(buffer.name) if hasattr(buffer, "name") else str(buffer)] = layout
    placements = {}
    for name, layout in layouts.items():
        placement = _place(layout)
        if placement is not None:
            placements[name] = placement
    return placements


def _place(layout: Any) -> Placement | None:
    from tilelang.layout import Fragment

    if not isinstance(layout, Fragment):
        return None
    shape = [int(s) for s in layout.get_input_shape()]
    grids = torch.meshgrid(*[torch.arange(s) for s in shape], indexing="ij")
    env: dict[str, torch.Tensor | int] = {str(v): g for v, g in zip(layout.get_forward_vars(), grids)}
    env["_rep"] = 0  # a replicated fragment: every copy sums the same way; take the first
    try:
        thread = _evaluate(layout.thread, env)
        (slot,) = [_evaluate(e, env) for e in layout.get_forward_index()]
    except (KeyError, TypeError, ValueError):
        return None
    return Placement(
        torch.broadcast_to(torch.as_tensor(thread), shape), torch.broadcast_to(torch.as_tensor(slot), shape)
    )


def _evaluate(node: Any, env: dict[str, Any]) -> Any:
    """Integer index arithmetic of a layout expression, over torch index grids."""
    from tilelang import tvm

    t = tvm.tirx
    if isinstance(node, t.IntImm):
        return int(node.value)
    if isinstance(node, t.Var):
        return env[str(node.name)]
    ops = {
        t.Add: lambda a, b: a + b,
        t.Sub: lambda a, b: a - b,
        t.Mul: lambda a, b: a * b,
        t.FloorDiv: lambda a, b: a // b,
        t.FloorMod: lambda a, b: a % b,
    }
    for kind, op in ops.items():
        if isinstance(node, kind):
            return op(_evaluate(node.a, env), _evaluate(node.b, env))
    raise ValueError(f"layout expression {type(node).__name__}")


def gpu_order_sum(
    values: torch.Tensor, exact: torch.Tensor | None, placement: Placement, dim: int, dtype: torch.dtype
) -> torch.Tensor | None:
    """Sum ``values`` along ``dim`` in ``dtype`` the way the threads of ``placement`` do (see the
    module docstring). ``exact``: the same elements before rounding (products), or None.
    None when the placement is not one this model covers."""
    x = values.movedim(dim, -1)
    rows, length = x.shape[:-1], x.shape[-1]
    x = x.reshape(-1, length)
    thread = placement.thread.movedim(dim, -1).reshape(-1, length)
    slot = placement.slot.movedim(dim, -1).reshape(-1, length)
    key = thread * (int(slot.max()) + 1) + slot
    order = key.argsort(dim=-1)
    thread, slot, x = (t.gather(-1, order) for t in (thread, slot, x))
    terms = x.double() if exact is None else exact.movedim(dim, -1).reshape(-1, length).gather(-1, order)

    width = max(int((thread != thread.roll(1, dims=-1)).sum(dim=-1).max()), 1)  # threads per row
    if length % width or width & (width - 1):
        return None
    per_thread = length // width
    thread = thread.view(-1, width, per_thread)
    if not bool((thread == thread[..., :1]).all()):
        return None  # a thread holds elements of the row that are not next to each other in order
    slot = slot.view(-1, width, per_thread)
    terms = terms.view(-1, width, per_thread)

    paired = (
        per_thread % 2 == 0
        and bool((slot[..., 0::2] % 2 == 0).all())
        and bool((slot[..., 1::2] == slot[..., 0::2] + 1).all())
    )
    if paired:
        partial = (_chain(terms[..., 0::2], dtype).double() + _chain(terms[..., 1::2], dtype).double()).to(dtype)
    else:
        partial = _chain(terms, dtype)
    offset = width // 2
    lanes = torch.arange(width)
    while offset >= 1:
        partial = (partial.double() + partial[..., lanes ^ offset].double()).to(dtype)
        offset //= 2
    return partial[..., 0].reshape(rows)


def _chain(terms: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """One thread's running sum, starting from 0 and rounded to ``dtype`` after each term."""
    total = torch.zeros(terms.shape[:-1], dtype=dtype)
    for k in range(terms.shape[-1]):
        total = (total.double() + terms[..., k]).to(dtype)
    return total
