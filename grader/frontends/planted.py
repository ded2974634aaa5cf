"""check() and explain() on a kernel given as text, apart from the notebook's ``%%puzzle`` cells: the bugs a
notebook plants in a copy of a kernel to teach reading a failure (puzzle 03, "Reading a failure").

``check_source("03", "outer_add", SOURCE, case="odd_33x127")`` grades SOURCE, a whole module as text (its
imports and a kernel named ``outer_add``), and prints what check() prints for it; ``explain_source`` shows what
explain() shows. The lines a sentence names are SOURCE's own. Neither reads nor changes the cells that check()
grades, so the learner's kernels and their verdicts stay as they were, and a cell that calls only these prints
the same in a stub notebook and in its solved twin (tests/test_notebooks.py runs such a cell once, in the twin).
The session's warm grader (grader.frontends.warm, started by ``%load_ext grader.nb``) runs them when there is
one: it changes how soon the answer comes, never the answer.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from grader import settings
from grader.discover import normalize_id
from grader.frontends import notebook, render
from grader.i18n import tr
from grader.processes import launch

# A check of a planted kernel offers no "see inside" call: explain("outer_add") would show the learner's own kernel.
PLANTED = dataclasses.replace(render.NOTEBOOK, see_inside="")


def _warm() -> Any:
    """This IPython session's warm grader, or None (no IPython, no ``%load_ext grader.nb``, or it is off)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    magics = shell.magics_manager.registry.get("PuzzleMagics") if shell is not None else None
    return getattr(magics, "warm", None)


def _puzzle(puzzle: str) -> str:
    puzzle_id = normalize_id(puzzle)
    if puzzle_id is None:
        raise ValueError(f"a puzzle id such as 03, not {puzzle!r}")
    return puzzle_id


def _lines(puzzle_id: str):
    """A sentence's ``.../pNN_notebook.py:7`` as ``line 7`` (of the source given), the bare path as this notebook."""
    module_name = re.escape(f"p{puzzle_id}_notebook.py")
    path = r"[^\s()'\"`：，。；（）]*"

    def where(text: str) -> str:
        text = re.sub(rf"{path}{module_name}:(\d+)", lambda m: tr(f"line {m.group(1)}"), text)
        return re.sub(rf"{path}{module_name}", tr("this notebook"), text)

    return where


def check_source(
    puzzle: str, kernel: str, source: str, *, case: str | None = None, timeout: float | None = None
) -> notebook.CheckResult:
    """Grade ``kernel`` as ``source`` (a module's text) defines it, on ``case`` (default: its simulated cases),
    and print the verdict as check() does. It simulates on the CPU even where there is a GPU, so it says what
    the notebook's text quotes on every machine (a race, for one, only the simulator names). It never changes
    a grade."""
    puzzle_id = _puzzle(puzzle)
    limit = notebook.default_timeout() if timeout is None else timeout
    where = _lines(puzzle_id)
    with notebook.quiet():
        if not notebook.defines_kernel(source, kernel):
            result = notebook.CheckResult(kernel, False, tr(f"the source defines no function {kernel}"))
            print(result.summary)
            return result
        options = launch.check_options([kernel], limit, device="cpu", cases=case or "")
        run = launch.grade(puzzle_id, source, options, limit, warm=_warm())
        result = notebook.verdict(kernel, run, [], puzzle_id, limit, layout=PLANTED, where=where)
        notebook.print_verdict(result)
        notebook.show_tile_map(result.cases())
    return result


def explain_source(
    puzzle: str,
    kernel: str,
    source: str,
    *,
    case: str | None = None,
    block: int | str | tuple[int, ...] | None = None,
    timeout: float | None = None,
) -> notebook.ExplainResult:
    """explain() for ``kernel`` as ``source`` defines it: one block of one case, step by step on the CPU
    simulator, opening at the step the first wrong element came from. It never changes a grade."""
    puzzle_id = _puzzle(puzzle)
    limit = max(notebook.default_timeout(), settings.EXPLAIN_TIMEOUT_S) if timeout is None else timeout
    if not notebook.defines_kernel(source, kernel):
        print(tr(f"the source defines no function {kernel}"))
        return notebook.ExplainResult()
    where = _lines(puzzle_id)

    def record(explanation: Any) -> Any:
        return dataclasses.replace(explanation, why=where(explanation.why), problem=where(explanation.problem))

    return notebook.explain_module(
        puzzle_id, source, kernel, case, block, limit, warm=_warm(), where=where, record=record, layout=PLANTED
    )
