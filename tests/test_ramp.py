"""The ramp: no puzzle needs a construct that neither its own prose nor an earlier puzzle's introduced.

For each puzzle, the TileLang constructs its reference kernels use are read from the solution's source
(every ``T.name`` in a ``@tilelang.jit`` kernel or a ``@T.macro`` helper, and the keyword arguments
that change what a tile op does, such as ``transpose_B``); each must be named, as it is written, in the
prose of that puzzle (its spec and markdown cells) or of an earlier one. A cell that sends the learner
to a later puzzle for its constructs ("puzzle 08 explains", "(puzzle 08, ...)") introduces none of
them: issue 28 found puzzle 07 naming a warp policy and ``T.Pipelined`` in a list that puzzle 08 was
to explain. The frame every kernel is written in (puzzle 01's stub: ``T.Kernel``, ``T.const``, ...)
needs no introduction.
"""

from __future__ import annotations

import ast
import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

from grader.course.notebooks import parse_cells
from grader.discover import course_root, puzzle_files

ROOT = course_root()
SOLUTIONS = puzzle_files(ROOT / "solutions")

# Keyword arguments that change what a tile op computes or how it runs: a learner must have read of them.
KEYWORDS = {"transpose_A", "transpose_B", "clear_accum", "num_stages", "policy"}
# Data types are named like the constructs (T.float16) but are no construct to introduce.
DTYPE = re.compile(r"^u?int\d+$|^b?float\d+$|^float8_\w+$|^bool$")


# "puzzle 08 explains", "(puzzle 08, its section ...)": the cell defers to puzzle 08
DEFERS = re.compile(r"\bpuzzle (\d{2}),? (?:explains|covers|introduces|teaches)|\(puzzle (\d{2})[,)]")

# Gaps in puzzles whose prose never names a construct its kernels use; each entry must still be a gap
# (the test fails once the prose names it, so the entry goes).
KNOWN_GAPS: dict[str, set[str]] = {}


def _is_kernel(function: ast.FunctionDef) -> bool:
    names = (ast.unparse(decorator).split("(")[0] for decorator in function.decorator_list)
    return any(name in ("tilelang.jit", "T.macro") for name in names)


def constructs(source: str) -> set[str]:
    """``T.name`` (and ``T.Name.member`` as ``T.Name``) and the watched keywords used in the kernels."""
    used: set[str] = set()
    for function in ast.walk(ast.parse(source)):
        if not (isinstance(function, ast.FunctionDef) and _is_kernel(function)):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "T":
                if not DTYPE.match(node.attr):
                    used.add(f"T.{node.attr}")
            if isinstance(node, ast.Call) and ast.unparse(node.func).startswith("T."):
                used.update(k.arg for k in node.keywords if k.arg in KEYWORDS)
    return used


def introducing_cells(source: str, puzzle_id: str) -> list[str]:
    """The spec and markdown cells (what a learner reads) that introduce what they name: all but those
    that defer to a later puzzle."""
    texts = [cell.text for cell in parse_cells(source) if cell.kind in ("spec", "markdown")]
    return [text for text in texts if not any(int(a or b) > int(puzzle_id) for a, b in DEFERS.findall(text))]


def named(construct: str, text: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(construct)}(?!\w)", text) is not None


def unintroduced(solutions: dict[str, str], frame: set[str]) -> dict[str, set[str]]:
    """Puzzle id -> the constructs its kernels use that no introducing cell up to and including it names."""
    missing: dict[str, set[str]] = {}
    cells: list[str] = []
    for puzzle_id in sorted(solutions):
        cells += introducing_cells(solutions[puzzle_id], puzzle_id)
        gaps = {c for c in constructs(solutions[puzzle_id]) - frame if not any(named(c, text) for text in cells)}
        if gaps:
            missing[puzzle_id] = gaps
    return missing


def _read(path: Path | str) -> str:
    return Path(path).read_text(encoding="utf-8")


def _frame() -> set[str]:
    return constructs(_read(puzzle_files(ROOT / "puzzles")["01"]))


@cache
def _gaps() -> dict[str, set[str]]:
    return unintroduced(_solutions(), _frame())


def _solutions() -> dict[str, str]:
    return {puzzle_id: _read(path) for puzzle_id, path in SOLUTIONS.items()}


@pytest.mark.parametrize("puzzle_id", sorted(SOLUTIONS))
def test_every_construct_is_introduced_by_its_puzzle_or_an_earlier_one(puzzle_id):
    gaps = _gaps().get(puzzle_id, set())
    known = KNOWN_GAPS.get(puzzle_id, set())
    assert gaps <= known, f"puzzle {puzzle_id} uses {sorted(gaps - known)}, which no prose up to it introduces"
    assert gaps == known, f"puzzle {puzzle_id}'s prose now names {sorted(known - gaps)}: drop them from KNOWN_GAPS"


def test_the_tensor_core_flash_attention_at_puzzle_07_was_a_cliff():
    # The check catches what issue 28 found: the flash attention puzzle 07 had before it moved its Tensor
    # Core kernel to puzzle 08 (git e47b61b) used a warp policy and pipeline stages that only a list
    # deferring to puzzle 08 named.
    old = subprocess.run(
        ["git", "show", "e47b61b:solutions/p07_flash_attention.py"], cwd=ROOT, capture_output=True, text=True
    )
    if old.returncode != 0:
        pytest.skip("no git history here")
    gaps = unintroduced({**_solutions(), "07": old.stdout}, _frame())["07"]
    assert {"T.GemmWarpPolicy", "policy", "num_stages"} <= gaps, gaps
