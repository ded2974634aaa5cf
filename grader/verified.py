"""What a grading verified: per kernel, how many cases ran on a GPU, how many were simulated on the
CPU, and how many were only compiled (their numbers never compared with the reference).

The facts travel as fields: each case's ``checked`` (grader.outcome.CaseResult), and the counts below
in the JSON report's ``runs[]``, in each autograded check cell's metadata and in ``autograde-status``.
:func:`text` is the one place they become words, for every reader: the learner's closing line, a
check cell's output, the autograde log and ``autograde-status``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

GPU, SIMULATED, COMPILED = "gpu", "simulated", "compiled"
KINDS = (GPU, SIMULATED, COMPILED)
Counts = dict[str, int]


def _checked(case: Any) -> str:
    return str(case.get("checked", "") if isinstance(case, Mapping) else getattr(case, "checked", ""))


def _kernel(case: Any) -> str:
    return str(case.get("kernel", "") if isinstance(case, Mapping) else getattr(case, "kernel", ""))


def counts(cases: Iterable[Any]) -> Counts:
    """How many of ``cases`` (CaseResults or their JSON dicts) were checked each way."""
    found = dict.fromkeys(KINDS, 0)
    for case in cases:
        kind = _checked(case)
        if kind in found:
            found[kind] += 1
    return found


def per_kernel(cases: Iterable[Any]) -> dict[str, Counts]:
    """Kernel -> counts, the kernels in the order their first case comes."""
    grouped: dict[str, list[Any]] = {}
    for case in cases:
        grouped.setdefault(_kernel(case), []).append(case)
    return {kernel: counts(group) for kernel, group in grouped.items()}


def total(many: Iterable[Mapping[str, int]]) -> Counts:
    """The sum of several counts (a student's kernels, say)."""
    found = dict.fromkeys(KINDS, 0)
    for one in many:
        for kind in KINDS:
            found[kind] += int(one.get(kind, 0))
    return found


def unchecked(found: Mapping[str, int]) -> int:
    """Cases whose numbers nobody compared: compiled only."""
    return int(found.get(COMPILED, 0))


def text(found: Mapping[str, int]) -> str:
    """The counts in words: '2 case(s) on a GPU, 3 simulated on the CPU, 1 only compiled'."""
    gpu, simulated, compiled = (int(found.get(kind, 0)) for kind in KINDS)
    return f"{gpu} case(s) on a GPU, {simulated} simulated on the CPU, {compiled} only compiled"


def line(name: str, found: Mapping[str, int]) -> str:
    """One kernel's (or one student's) counts: 'add: 0 case(s) on a GPU, ...'."""
    return f"{name}: {text(found)}"
