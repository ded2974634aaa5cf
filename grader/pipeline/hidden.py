"""Hidden cases: extra graded cases that live only on the grading machine.

When the environment variable ``TILELANG_COURSE_HIDDEN_CASES`` names a JSON file, the grader's
child process appends that file's cases to the puzzle it grades, so ``python -m grader``, the
notebook checks and nbgrader's autograde all grade them. The file is never part of a released
notebook, and the cases are shown only as ``hidden_1``, ``hidden_2``, ... in every verdict::

    {
      "cases": [
        {"puzzle": "02", "kernel": "add", "sizes": {"N": 777}, "params": {"BLOCK": 128, "THREADS": 128},
         "seed": 90210, "simulate": true, "note": "for the instructor only, never shown"}
      ]
    }

``sizes`` must bind exactly the sizes the kernel's own cases bind; ``params`` are the block
parameters (defaults of the kernel apply to those left out); ``simulate`` true makes the CPU simulator
run the case where there is no GPU, false never (left out, the kernel's budget decides:
grader.budget); ``scales`` and ``for_gpus`` (block parameters
per GPU profile, e.g. ``{"sm_75": {"BLOCK_N": 64}}``) are as in :class:`Case`. A case whose block does not
fit a GPU's shared memory, with no ``for_gpus`` entry for it, counts as not applicable there.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from grader import settings
from grader.outcome import GOOD, CaseResult, Status
from grader.spec import Case, Kernel, Puzzle

ENV = settings.HIDDEN_CASES
PREFIX = "hidden_"
KEYS = {"puzzle", "kernel", "sizes", "params", "seed", "simulate", "scales", "note", "name", "for_gpus"}


class HiddenCasesError(ValueError):
    pass


def read_entries(path: Path) -> list[dict[str, Any]]:
    """The file's case entries, each checked for its keys and their types."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise HiddenCasesError(f"hidden cases file {path} cannot be read: {error}") from error
    entries = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise HiddenCasesError(f'hidden cases file {path}: expected an object {{"cases": [...]}}')
    for number, entry in enumerate(entries, 1):
        problem = _entry_problem(entry)
        if problem:
            raise HiddenCasesError(f"hidden cases file {path}, case {number}: {problem}")
    return entries


def _entry_problem(entry: Any) -> str:
    if not isinstance(entry, dict):
        return "each case is an object"
    unknown = sorted(set(entry) - KEYS)
    if unknown:
        return f"unknown keys {', '.join(unknown)}"
    for key, kind in (("puzzle", str), ("kernel", str), ("sizes", dict), ("seed", int)):
        if not isinstance(entry.get(key), kind):
            return f"'{key}' must be a {kind.__name__}"
    for key in ("params", "scales", "for_gpus"):
        if not isinstance(entry.get(key, {}), dict):
            return f"'{key}' must be an object"
    return ""


def hidden_cases(kernel: Kernel, entries: list[dict[str, Any]], puzzle_id: str) -> tuple[Case, ...]:
    """The entries for this kernel as Cases named hidden_1, hidden_2, ... (their own names stay secret)."""
    wanted = sorted(kernel.cases[0].sizes) if kernel.cases else None
    cases = []
    for entry in entries:
        if entry["puzzle"].zfill(2) != puzzle_id or entry["kernel"] != kernel.function:
            continue
        if wanted is not None and sorted(entry["sizes"]) != wanted:
            raise HiddenCasesError(
                f"a hidden case of {puzzle_id} {kernel.function} binds sizes {sorted(entry['sizes'])}, "
                f"the kernel needs {wanted}"
            )
        cases.append(
            Case(
                f"{PREFIX}{len(cases) + 1}",
                {k: int(v) for k, v in entry["sizes"].items()},
                dict(entry.get("params", {})),
                seed=int(entry["seed"]),
                simulate=bool(entry["simulate"]) if "simulate" in entry else None,
                scales={k: float(v) for k, v in entry.get("scales", {}).items()},
                for_gpus=dict(entry.get("for_gpus", {})),
            )
        )
    return tuple(cases)


def with_hidden_cases(puzzle: Puzzle, path: Path | None) -> Puzzle:
    """The puzzle with the hidden cases of ``path`` appended (None: no hidden cases; the processes read the
    path from the environment, grader.settings.hidden_cases_file)."""
    if path is None:
        return puzzle
    entries = read_entries(path)
    unknown = {e["kernel"] for e in entries if e["puzzle"].zfill(2) == puzzle.id} - {k.function for k in puzzle.kernels}
    if unknown:
        raise HiddenCasesError(f"hidden cases file {path} names kernels puzzle {puzzle.id} lacks: {sorted(unknown)}")
    from grader.budget import admitted

    kernels = tuple(
        admitted(dataclasses.replace(kernel, cases=kernel.cases + hidden_cases(kernel, entries, puzzle.id)))
        for kernel in puzzle.kernels
    )
    return dataclasses.replace(puzzle, kernels=kernels)


def is_hidden(case_name: str) -> bool:
    return case_name.startswith(PREFIX)


# A hidden case's verdicts a learner sees as they are: passing ones, and the simulator's "no verdict" (the rest are
# FAILED, public_view).
SHOWN_AS_THEMSELVES = (*GOOD, Status.UNSUPPORTED, Status.SETUP)


def public_view(result: CaseResult) -> CaseResult:
    """A hidden case's result as a learner may see it: the verdict, nothing that tells its sizes or data.

    Its message says only whether it passed; details, hint, trace, tile map, error counts, the cause and the time
    go; where it ran and the arch stay (fields: the renderer says "simulated on CPU: " or "compiled for sm_90a: "
    from them). Every way of not passing that the learner's code can choose (wrong numbers, an error, not
    implemented, a crash, a hang) reads as one, FAILED: the judge traces a hidden case at its real sizes, so a file
    that answered the tracer's job by a digit of M (an error for 0, "not implemented" for 1, the real trace for 2)
    read M=777 from three submissions' status tags, and from two more through the cause's kind (the red team,
    2026-12-05). What is left is whether it passed, and on the CPU whether the simulator gave a verdict.
    Other cases' results are returned unchanged.
    """
    if not is_hidden(result.case):
        return result
    status = result.status if result.status in SHOWN_AS_THEMSELVES else Status.FAILED
    verdict = {
        "passed": "passed",
        "compiled": "is accepted by TileLang (numbers need a GPU)",
        "not_applicable": "cannot run on this GPU (not applicable)",
    }.get(result.status, "did not pass")
    return dataclasses.replace(
        result,
        status=status,
        seconds=0.0,
        message=f"a hidden case {verdict} (its sizes and numbers are not shown)",
        sizes={},
        details=[],
        hint="",
        trace="",
        max_abs_error=None,
        max_rel_error=None,
        wrong=None,
        total=None,
        tile_map=None,
        saved="",
        bench=None,
        profile=None,
        explanation=None,
        cause=None,
        structure=None,
    )
