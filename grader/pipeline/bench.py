"""Bench: a passed case timed on the GPU (median over several fresh input sets, with CUDA events) against torch
and the roofline; and the bench cases as --bench --param runs them with the learner's block parameters."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import torch

from grader.outcome import Bench
from grader.pipeline.context import Context
from grader.pipeline.timing import INPUT_SETS, repeated_ms
from grader.spec import Case, Kernel, Puzzle

KERNEL, TORCH = "\0kernel", "\0torch"  # keys no baseline's name can take


def bench_case(ctx: Context, kernel: Kernel, case: Case, compiled: Any) -> Bench:
    """Time a passed case: the kernel, torch and the kernel's further baselines, ``ctx.repeat`` times each in
    turns; every figure is the median of the repetitions, with their min-max range beside it."""
    from grader.pipeline import gpu_state, roofline
    from grader.pipeline.execute import kernel_source
    from grader.pipeline.inputs import make_inputs, poisoned_outputs

    if ctx.limits is None:
        ctx.limits = roofline.measure(torch, torch.cuda.get_device_name())
    sets = [make_inputs(kernel, case, "cuda", ctx.seed_offset + 1000 * (i + 1)) for i in range(INPUT_SETS)]
    outputs = poisoned_outputs(kernel, case, "cuda")
    calls = {
        KERNEL: (lambda args: compiled(*args, *outputs), sets),
        TORCH: (lambda args: kernel.baseline(*args), sets),
    }
    for other in kernel.baselines:
        prepared = [list(other.prepare(*args)) if other.prepare else args for args in sets]
        calls[other.name] = (lambda args, call=other.call: call(*args), prepared)
    timed = repeated_ms(calls, ctx.repeat)
    del calls
    mine, theirs = timed.pop(KERNEL), timed.pop(TORCH)
    flops = kernel.flops(case.sizes) if kernel.flops else None
    moved = kernel.bytes_moved(case.sizes) if kernel.bytes_moved else None
    floor_ms, bound = roofline.floor(ctx.limits, flops, moved, roofline.tensor_cores(kernel_source(compiled)))
    return Bench(
        kernel_ms=mine.median,
        torch_ms=theirs.median,
        tflops=flops / mine.median / 1e9 if flops else None,
        gbps=moved / mine.median / 1e6 if moved else None,
        floor_ms=floor_ms,
        bound=bound,
        others={name: t.median for name, t in timed.items()},
        params=dict(case.params) if ctx.learner_params else {},
        limits=ctx.limits.describe(),
        repeats=len(mine.runs),
        kernel_range=(mine.low, mine.high),
        torch_range=(theirs.low, theirs.high),
        others_range={name: (t.low, t.high) for name, t in timed.items()},
        gpu=gpu_state.current(torch).to_dict(),
    )


def block_parameters(spec_module: Any, puzzle: Puzzle) -> dict[str, set[str]]:
    """Each kernel's block parameters: what its cases set, and the upper-case arguments of the
    course's own function (THREADS with a default, say)."""
    import inspect

    names: dict[str, set[str]] = {}
    for kernel in puzzle.kernels:
        found = {name for case in kernel.cases for name in case.params}
        function = getattr(getattr(spec_module, kernel.function, None), "func", None)
        if function is not None:
            tensors = {t.name for t in (*kernel.inputs, *kernel.outputs)}
            found |= {n for n in inspect.signature(function).parameters if n.isupper() and n not in tensors}
        names[kernel.function] = found
    return names


def bench_with_params(puzzle: Puzzle, params: dict[str, int], accepted: dict[str, set[str]]) -> Puzzle:
    """The puzzle as ``--bench --param`` times it: each kernel's bench cases only, with the learner's
    block parameters over the case's (those the kernel takes). The graded cases are not among them,
    so no grade ever comes from parameters the learner chose."""
    known = set().union(*accepted.values()) if accepted else set()
    unknown = sorted(set(params) - known)
    if unknown:
        raise ValueError(
            f"--param {', '.join(unknown)}: no kernel of puzzle {puzzle.id} takes it (block parameters: "
            f"{', '.join(sorted(known))})"
        )
    kernels = []
    for kernel in puzzle.kernels:
        mine = {k: v for k, v in params.items() if k in accepted.get(kernel.function, set())}
        cases = tuple(replace(c, params={**c.params, **mine}, simulate=False) for c in kernel.cases if c.bench)
        kernels.append(replace(kernel, cases=cases))
    return replace(puzzle, kernels=tuple(kernels))
