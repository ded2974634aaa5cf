"""Step 0, shape: the trusted puzzle cut to what a run grades, before anything is traced.

The spec module's cases for this GPU, the instructor's hidden cases added, and then what the options ask: a
learner's block parameters on the bench cases (``--param``), only the bench cases of the profiled kernels
(``--profile``), only one kernel's public cases (``--explain``). Every refusal is a ValueError whose text the
judge sends as it is; nothing here reads the environment or prints.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from grader.spec import Puzzle


def course_puzzle(spec_module: Any, profile_name: str, hidden_cases: Path | None) -> Puzzle:
    """The spec module's puzzle on the GPU profile ``profile_name``, with the instructor's hidden cases."""
    from grader.discover import load_puzzle
    from grader.pipeline.hidden import with_hidden_cases

    return with_hidden_cases(load_puzzle(spec_module), hidden_cases).on(profile_name)


def asked_of(puzzle: Puzzle, spec_module: Any, options: Any) -> Puzzle:
    """``puzzle`` cut to what ``options`` (a settings.GradeOptions) ask; ValueError says why they cannot be met."""
    learner_params = options.block_params()  # the plugin refused any that does not parse
    if learner_params:
        from grader.pipeline.bench import bench_with_params, block_parameters  # torch: not before the tracer starts

        puzzle = bench_with_params(puzzle, learner_params, block_parameters(spec_module, puzzle))
    if options.profile:
        puzzle = profiled_only(puzzle, options.profile)
    if options.explain:
        puzzle = explained_only(puzzle, options.explain)
    return puzzle


def explained_only(puzzle: Puzzle, function: str) -> Puzzle:
    """The puzzle as --explain KERNEL grades it: that kernel's cases that are not hidden (a view of a hidden
    case would show its sizes and data)."""
    from grader.pipeline.hidden import is_hidden

    names = [k.function for k in puzzle.kernels]
    if function not in names:
        raise ValueError(
            f"--explain {function}: puzzle {puzzle.id} has no such kernel (its kernels: {', '.join(names)})"
        )
    kernel = puzzle.kernel(function)
    return replace(puzzle, kernels=(replace(kernel, cases=tuple(c for c in kernel.cases if not is_hidden(c.name))),))


def profiled_only(puzzle: Puzzle, functions: str) -> Puzzle:
    """The puzzle as --profile KERNEL[,KERNEL...] grades it: those kernels' bench cases, run but never simulated
    (they are the large ones; on a CPU they compile for the static estimate)."""
    names = [k.function for k in puzzle.kernels]
    wanted = [name.strip() for name in functions.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in names]
    if unknown:
        raise ValueError(
            f"--profile {', '.join(unknown)}: puzzle {puzzle.id} has no such kernel (its kernels: {', '.join(names)})"
        )
    kernels = []
    for name in wanted:
        kernel = puzzle.kernel(name)
        cases = tuple(replace(c, simulate=False) for c in kernel.cases if c.bench)
        if not cases:
            raise ValueError(f"--profile {name}: the kernel has no bench case to profile")
        kernels.append(replace(kernel, cases=cases))
    return replace(puzzle, kernels=tuple(kernels))


def parse_block(text: str) -> tuple[int, ...] | None:
    """--block "1" or "1,0": the blockIdx to show (x first); "" for the default."""
    if not text.strip():
        return None
    try:
        block = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise ValueError(
            f"--block {text}: give blockIdx as whole numbers, x first, e.g. --block 1 or --block 1,0"
        ) from None
    if not block or len(block) > 3 or min(block) < 0:
        raise ValueError(f"--block {text}: give one to three whole numbers, x first, e.g. --block 1")
    return block
