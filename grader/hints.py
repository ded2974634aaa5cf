"""Tiered hints for the puzzles' kernels: ``hint("gemv")`` in a notebook, ``python -m grader 08 --hint gemv``.

The data format
---------------
Each puzzle ``puzzles/pNN_name.py`` has one hint file ``puzzles/hints/pNN_name.json``: a JSON object
that maps each graded kernel's name to an object mapping a tier (the strings "1", "2", ... with no
gaps) to one plain paragraph of text (no newlines, no markup)::

    {
      "gemv": {
        "1": "Why: the idea behind the kernel, or the trap it avoids, in a sentence or two.",
        "2": "How the pieces fit: which buffers, which loop, in what order.",
        "3": "Close to the answer: what each step computes, in words, still not the code."
      }
    }

Tier 1 adds what the screen does not: the stub's TODO comment already says what to build, so tier 1
says why (the idea, the trap), never restates the comment and holds no expression of the solution.
The hard kernels (the online softmax, attention, the tuned and stream-K GEMMs, the convolutions by
matrix multiply, the dequantizing GEMMs) have four tiers: the idea, the data layout (which buffers,
where they live, their shapes), the control flow (the loops, their order, what happens per step) and
the expressions (each one named and described, not written out). The others have three: why, how,
close. No kernel's tiers together quote more than a fifth of the solution's index and arithmetic
expressions, even with the variables renamed: the learner writes the code. tests/test_hints.py
checks all of this. Keys are kernel names exactly as in the puzzle's ``Kernel(function=...)``; a
translation keeps the same keys and tiers, one paragraph for one paragraph.

Nothing is read at import time and nothing is cached: every call reads the file it needs.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path

from grader.discover import course_root, normalize_id, puzzle_files

WIDTH = 100  # columns a printed hint wraps at


class HintError(Exception):
    """A hint that cannot be given: an unknown puzzle or kernel, a level out of range. One line."""


@dataclass(frozen=True)
class Hint:
    """One tier of one kernel's hints, and how many tiers that kernel has."""

    puzzle_id: str
    kernel: str
    level: int
    levels: int
    text: str

    def lines(self, more: str = "") -> list[str]:
        """The hint as printed: a heading line, the paragraph wrapped, and where the next tier is.

        ``more`` is how to ask for a tier, with ``{level}`` where its number goes.
        """
        head = f"hint {self.level} of {self.levels} for {self.kernel} (puzzle {self.puzzle_id}):"
        out = [
            head,
            *textwrap.wrap(self.text, WIDTH, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False),
        ]
        if self.level < self.levels and more:
            out.append(f"more: {more.format(level=self.level + 1)}")
        elif self.level == self.levels:
            out.append("that is the last hint: the rest is yours to write")
        return out


def hints_folder(root: Path | None = None) -> Path:
    return (root or course_root()) / "puzzles" / "hints"


def puzzle_file(puzzle_id: str, root: Path | None = None) -> Path:
    """The stub ``puzzles/pNN_name.py`` of a puzzle id ('8', '08', 'p08'), or HintError."""
    number = normalize_id(puzzle_id)
    stubs = puzzle_files((root or course_root()) / "puzzles")
    if number is None or number not in stubs:
        raise HintError(f"there is no puzzle {puzzle_id!r} (present: {', '.join(sorted(stubs)) or 'none'})")
    return stubs[number]


def hints_file(puzzle_id: str, root: Path | None = None) -> Path:
    return hints_folder(root) / f"{puzzle_file(puzzle_id, root).stem}.json"


def load(puzzle_id: str, root: Path | None = None) -> dict[str, list[str]]:
    """Kernel name -> its tiers' texts, tier 1 first, read from the puzzle's hint file ({} if none).

    A malformed file raises HintError naming the file and what is wrong.
    """
    path = hints_file(puzzle_id, root)
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise HintError(f"{path} is not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise HintError(f"{path}: the top level must be an object of kernel names")
    out: dict[str, list[str]] = {}
    for kernel, tiers in data.items():
        if not isinstance(tiers, dict) or not tiers:
            raise HintError(f"{path}: {kernel!r} must map tiers '1', '2', ... to paragraphs")
        expected = [str(n) for n in range(1, len(tiers) + 1)]
        if sorted(tiers, key=lambda t: (len(t), t)) != expected:
            raise HintError(f"{path}: {kernel!r} has tiers {sorted(tiers)}; they must be '1' to '{len(tiers)}'")
        texts = [tiers[t] for t in expected]
        if not all(isinstance(t, str) and t.strip() and "\n" not in t for t in texts):
            raise HintError(f"{path}: every tier of {kernel!r} must be one non-empty paragraph without newlines")
        out[kernel] = [" ".join(t.split()) for t in texts]
    return out


def todo_comments(text: str) -> dict[str, tuple[str, str]]:
    """Kernel name -> (title, paragraph) of each TODO region in a module's text: the title is what
    follows ``# TODO begin:``, the paragraph the region's other comment lines joined (the one hint of
    a kernel that has no hint file entry)."""
    import ast

    from grader.discover import REGION

    spans = [
        (n.lineno, n.end_lineno or n.lineno, n.name) for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)
    ]
    out: dict[str, tuple[str, str]] = {}
    for match in REGION.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        kernel = next((name for first, last, name in spans if first <= line <= last), "")
        first, *body = match.group(0).splitlines()[:-1]
        words = [b.strip()[1:].strip() for b in body if b.strip().startswith("#")]
        out[kernel] = (
            first.strip().removeprefix("# TODO begin").lstrip(":").strip(),
            " ".join(" ".join(words).split()),
        )
    return out


def kernels(puzzle_id: str, root: Path | None = None) -> list[str]:
    """The puzzle's graded kernels in teaching order (from its stub)."""
    from grader.discover import graded_kernels

    return graded_kernels(puzzle_file(puzzle_id, root).read_text())


def get(puzzle_id: str, kernel: str, level: int = 1, root: Path | None = None) -> Hint:
    """Tier ``level`` of ``kernel``'s hints, or HintError with one line for the learner."""
    number = normalize_id(puzzle_id) or puzzle_id
    names = kernels(number, root)
    if kernel not in names:
        raise HintError(f"puzzle {number} has no kernel {kernel!r}; its kernels: {', '.join(names)}")
    tiers = load(number, root).get(kernel)
    if not tiers:  # no hint file entry yet: the stub's TODO comment is the only tier
        comment = todo_comments(puzzle_file(number, root).read_text()).get(kernel, ("", ""))[1]
        if not comment:
            raise HintError(f"no hints are written for {kernel} yet")
        tiers = [comment]
    if not isinstance(level, int) or isinstance(level, bool) or level < 1:
        raise HintError(f"hint levels start at 1 ({kernel} has {len(tiers)}), not {level!r}")
    if level > len(tiers):
        raise HintError(
            f"{kernel} has {len(tiers)} hint levels, and level {level} is past the last; "
            f"level {len(tiers)} is the closest to the answer"
        )
    return Hint(number, kernel, level, len(tiers), tiers[level - 1])
