"""Sync check: puzzles/ and solutions/ are identical outside TODO regions, and no stub holds
an answer. ``python -m grader.course.sync`` prints every problem and exits 1 if there is one.

A TODO region runs from a line ``# TODO begin...`` to a line ``# TODO end``. In a stub it may
hold only comments, blank lines and ``raise NotImplementedError(...)``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from grader.discover import REGION, course_root, puzzle_files

STUB_LINE = re.compile(r"^\s*(#.*|raise NotImplementedError\(.*\)|)$")


def regions(text: str) -> list[str]:
    return REGION.findall(text)


def outside(text: str) -> str:
    """The text with each TODO region reduced to a marker, so two files can be compared."""
    return REGION.sub("# <TODO region>", text)


def check_pair(stub: Path, solution: Path) -> list[str]:
    problems = []
    stub_text, solution_text = stub.read_text(), solution.read_text()
    stub_regions, solution_regions = regions(stub_text), regions(solution_text)
    if len(stub_regions) != len(solution_regions):
        problems.append(
            f"{stub.name}: {len(stub_regions)} TODO regions in the stub, {len(solution_regions)} in the solution"
        )
    if not stub_regions:
        problems.append(f"{stub.name}: the stub has no TODO region")
    if outside(stub_text) != outside(solution_text):
        a, b = outside(stub_text).splitlines(), outside(solution_text).splitlines()
        line = next((i + 1 for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)) + 1)
        problems.append(
            f"{stub.name}: differs from the solution outside TODO regions (first at region-reduced line {line})"
        )
    for number, (region, answer) in enumerate(zip(stub_regions, solution_regions), 1):
        # The header says what the region asks for: nbgrader-course and the notebooks pair regions by it.
        if region.splitlines()[0].strip() != answer.splitlines()[0].strip():
            problems.append(
                f"{stub.name}: TODO region {number}'s header {region.splitlines()[0].strip()!r} differs from the "
                f"solution's {answer.splitlines()[0].strip()!r}"
            )
    for number, region in enumerate(stub_regions, 1):
        body = region.splitlines()[1:-1]
        code = [line.strip() for line in body if not STUB_LINE.match(line)]
        if code:
            problems.append(f"{stub.name}: TODO region {number} holds code, not only hints: {code[0]!r}")
        if not any("raise NotImplementedError" in line for line in body):
            problems.append(f"{stub.name}: TODO region {number} does not raise NotImplementedError")
    return problems


def check_course(root: Path) -> list[str]:
    stubs, solutions = puzzle_files(root / "puzzles"), puzzle_files(root / "solutions")
    problems = [f"puzzle {i}: in solutions/ but not in puzzles/" for i in sorted(set(solutions) - set(stubs))]
    problems += [f"puzzle {i}: in puzzles/ but not in solutions/" for i in sorted(set(stubs) - set(solutions))]
    for puzzle_id in sorted(set(stubs) & set(solutions)):
        problems += check_pair(stubs[puzzle_id], solutions[puzzle_id])
    return problems


def main() -> int:
    problems = check_course(course_root())
    for problem in problems:
        print(problem)
    print("puzzles/ and solutions/ are in sync" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
