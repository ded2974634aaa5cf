"""What a check cell's metadata keeps of each graded case for the class report (grader.nbgrader.class_report):
the schema is in grader.nbgrader.judge's docstring. Apart from the judge so that it needs neither nbgrader nor
IPython (the GPU machines' bundle has neither, and the class report's GPU test builds records with it), and so
does reading which cells of a notebook are its puzzle and check cells."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from grader.outcome import CaseResult

if TYPE_CHECKING:
    from nbformat import NotebookNode


def case_record(case: CaseResult, starts: list[tuple[int, str]], puzzle_id: str) -> dict[str, Any]:
    """One graded case as the check cell's metadata keeps it for the class report (the module docstring's
    schema). A hidden case's record tells no size: its sizes, counts and cause are left out (the
    judge's public view has already taken them from its message)."""
    from grader.frontends import render
    from grader.frontends.cells import lines_in_cells
    from grader.pipeline.hidden import is_hidden

    hidden = is_hidden(case.case)
    shown = render.case_lines(case, layout=replace(render.NOTEBOOK, width=0))
    line = lines_in_cells(shown[0].strip(), starts, f"p{puzzle_id}_notebook.py") if shown else ""
    bench = case.bench
    timed = {"kernel_ms": bench.kernel_ms, "torch_ms": bench.torch_ms, "floor_ms": bench.floor_ms} if bench else {}
    timed["bound"] = bench.bound if bench else ""
    return {
        "case": case.case,
        "hidden": hidden,
        "status": str(case.status),
        "checked": case.checked,
        "cause": {"kind": str(case.cause.kind), "facts": {} if hidden else case.cause.facts} if case.cause else None,
        "wrong": None if hidden else case.wrong,
        "total": None if hidden else case.total,
        "sizes": {} if hidden else dict(case.sizes),
        "line": line,
        "bench": timed if bench and not hidden else None,
    }


PUZZLE_CELL = re.compile(r"\A%%puzzle[ \t]*(?P<name>[^\n]*)\n?")
CHECK_ID = re.compile(r"^p(?P<puzzle>\d\d)_(?P<kernel>[A-Za-z0-9_]+)_check$")


def puzzle_cells(notebook: NotebookNode) -> dict[str, str]:
    """The notebook's ``%%puzzle`` cells, name -> source, in notebook order (nothing here ran them)."""
    cells: dict[str, str] = {}
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        match = PUZZLE_CELL.match(cell.source)
        if match is None:
            continue
        name = match.group("name").strip() or f"cell{len(cells) + 1}"
        cells[name] = cell.source[match.end() :]
    return cells


def check_cells(notebook: NotebookNode) -> list[tuple[NotebookNode, str, str]]:
    """(cell, puzzle id, kernel) of every graded check cell, read from nbgrader's grade id. A student's cell may
    carry any metadata: only the shapes nbgrader writes are read."""
    found = []
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader")
        if cell.cell_type != "code" or not isinstance(meta, Mapping) or meta.get("grade") is not True:
            continue
        match = CHECK_ID.match(str(meta.get("grade_id", "")))
        if match:
            found.append((cell, match.group("puzzle"), match.group("kernel")))
    return found


def judge_record(cell: NotebookNode) -> Mapping[str, Any] | None:
    """The judge's record on a check cell (grader.nbgrader.judge's docstring), or None where the cell has none of
    its shape: a student's cell may carry any metadata (an experiment cell's "tilelang_course": "x" once stopped
    every shard and autograde-status), so only a mapping is read, and its "checked", where it has one, must map
    names to ints (an older judge's record may lack keys: the readers take each key they need as optional)."""
    course = cell.metadata.get("tilelang_course")
    judge = course.get("judge") if isinstance(course, Mapping) else None
    if not isinstance(judge, Mapping):
        return None
    checked = judge.get("checked", {})
    if not isinstance(checked, Mapping) or not all(type(n) is int for n in checked.values()):
        return None
    return judge
