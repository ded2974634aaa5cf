"""The grader's own test data, read: the known-wrong kernels of tests/wrong/ and the concept kernels of
tests/concept/ and the right kernels of tests/right/. Each file declares what it is
about as module-level strings, so a corpus is data the tests iterate, not code the grader ships."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class WrongKernel:
    """A known-wrong kernel under tests/wrong/pNN/: the grader's own test data.

    Each file declares, as module-level strings, the kernel it is about (KERNEL), what rejects it
    (CAUGHT_BY: "compile", "gpu", or "generated_code": right as written, but TileLang's CUDA for it is wrong, which
    the CPU reads from that CUDA, grader.pipeline.miscompiles) and, optionally, why the simulator cannot
    (SIMULATOR_MISSES).
    """

    path: Path
    puzzle_id: str
    kernel: str
    caught_by: str
    simulator_misses: str


def declared(text: str, name: str) -> str:
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
                declared(text, "KERNEL"),
                declared(text, "CAUGHT_BY"),
                declared(text, "SIMULATOR_MISSES"),
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
        kernels = tuple(k for k in declared(text, "KERNELS").split(",") if k)
        found.append(
            ConceptKernel(path, declared(text, "PUZZLE"), kernels, declared(text, "WANTS"), declared(text, "INSTEAD"))
        )
    return found


@dataclass(frozen=True)
class RightKernel:
    """A correct kernel under tests/right/pNN/."""

    path: Path
    puzzle_id: str
    kernel: str
    false_alarm: str  # why the simulator fails it today ("" when it passes, as it should)
    miscompiled: str = ""  # why TileLang's GPU build of this correct kernel computes something else


def right_kernels(root: Path) -> list[RightKernel]:
    found = []
    for path in sorted((root / "tests" / "right").glob("p[0-9][0-9]/*.py")):
        text = path.read_text()
        found.append(
            RightKernel(
                path,
                path.parent.name[1:],
                declared(text, "KERNEL"),
                declared(text, "SIMULATOR_FALSE_ALARM"),
                declared(text, "TILELANG_MISCOMPILES"),
            )
        )
    return found
