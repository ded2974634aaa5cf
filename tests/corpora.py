"""The grader's own test data, read: the known-wrong kernels of tests/wrong/ and the concept kernels of
tests/concept/ (the right corpus, tests/right/, is read by tests/test_right.py). Each file declares what it is
about as module-level strings, so a corpus is data the tests iterate, not code the grader ships."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class WrongKernel:
    """A known-wrong kernel under tests/wrong/pNN/: the grader's own test data.

    Each file declares, as module-level strings, the kernel it is about (KERNEL), what rejects it
    (CAUGHT_BY: "compile" or "gpu") and, optionally, why the simulator cannot (SIMULATOR_MISSES).
    """

    path: Path
    puzzle_id: str
    kernel: str
    caught_by: str
    simulator_misses: str


def _declared(text: str, name: str) -> str:
    match = re.search(rf'^{name} = "(.*)"$', text, re.M)
    return match.group(1) if match else ""


def wrong_kernels(root: Path) -> list[WrongKernel]:
    found = []
    for path in sorted((root / "tests" / "wrong").glob("p[0-9][0-9]/*.py")):
        text = path.read_text()
        found.append(
            WrongKernel(
                path,
                path.parent.name[1:],
                _declared(text, "KERNEL"),
                _declared(text, "CAUGHT_BY"),
                _declared(text, "SIMULATOR_MISSES"),
            )
        )
    return found


@dataclass(frozen=True)
class ConceptKernel:
    """A kernel under tests/concept/ that computes the right numbers without the construct its puzzle
    teaches: the grader's own test data. It declares PUZZLE, KERNELS (comma-separated) and WANTS, a
    phrase the concept check's sentence must contain, and may declare INSTEAD, a phrase the sentence's
    "your kernel ..." part (what the kernel used in place of the construct) must contain."""

    path: Path
    puzzle_id: str
    kernels: tuple[str, ...]
    wants: str
    instead: str = ""


def concept_kernels(root: Path) -> list[ConceptKernel]:
    found = []
    for path in sorted((root / "tests" / "concept").glob("*.py")):
        text = path.read_text()
        kernels = tuple(k for k in _declared(text, "KERNELS").split(",") if k)
        found.append(
            ConceptKernel(
                path, _declared(text, "PUZZLE"), kernels, _declared(text, "WANTS"), _declared(text, "INSTEAD")
            )
        )
    return found
