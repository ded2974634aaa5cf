"""nbgrader scores from the judge: an autograde preprocessor that regrades every kernel of a notebook.

``nbgrader autograde`` executes a student's notebook in a kernel the student's code controls: a cell
can redefine or patch ``check``, print "PASS", or edit a check cell. So the course's config runs the
check cells deferred (they only say so) and lists :class:`JudgeChecks` right after nbgrader's Execute.
It rebuilds the learner's module from the notebook's ``%%puzzle`` cells exactly as ``check()`` would
(first-run order, a re-run replacing in place, a cell that raised left out of the other kernels'
modules), grades it with ``python -m grader`` (whose judge never imports that module), and sets each
check cell's outputs from the verdict: the lines ``check()`` prints, and an error output when the
kernel did not pass, which is how nbgrader scores a test cell 0. The hidden cases go to the grader
only, never into the notebook's kernel.
"""

from __future__ import annotations

import re
import time
from typing import Any

from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Float, Unicode

from grader.hidden import ENV as HIDDEN_ENV
from grader.i18n import tr

PUZZLE_CELL = re.compile(r"\A%%puzzle[ \t]*(?P<name>[^\n]*)\n?")
CHECK_ID = re.compile(r"^p(?P<puzzle>\d\d)_(?P<kernel>[A-Za-z0-9_]+)_check$")


def puzzle_cells(notebook: NotebookNode) -> tuple[dict[str, str], set[str]]:
    """The notebook's ``%%puzzle`` cells that ran, name -> source, and the names of those that raised."""
    cells: dict[str, str] = {}
    failed: set[str] = set()
    for cell in notebook.cells:
        if cell.cell_type != "code" or cell.get("execution_count") is None:
            continue
        match = PUZZLE_CELL.match(cell.source)
        if match is None:
            continue
        name = match.group("name").strip() or f"cell{len(cells) + 1}"
        cells[name] = cell.source[match.end() :]
        if any(output.get("output_type") == "error" for output in cell.get("outputs", [])):
            failed.add(name)
        else:
            failed.discard(name)
    return cells, failed


def check_cells(notebook: NotebookNode) -> list[tuple[NotebookNode, str, str]]:
    """(cell, puzzle id, kernel) of every graded check cell, read from nbgrader's grade id."""
    found = []
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        match = CHECK_ID.match(str(meta.get("grade_id", "")))
        if cell.cell_type == "code" and meta.get("grade") and match:
            found.append((cell, match.group("puzzle"), match.group("kernel")))
    return found


def judged_outputs(lines: list[str], passed: bool, summary: str) -> list[NotebookNode]:
    outputs = [new_output("stream", name="stdout", text="\n".join(lines) + "\n")]
    if not passed:
        outputs.append(new_output("error", ename="CheckFailed", evalue=summary, traceback=[f"CheckFailed: {summary}"]))
    return outputs


class JudgeChecks(NbGraderPreprocessor):
    """Set every check cell's outputs from the trusted grader's verdict on the notebook's kernels."""

    timeout = Float(240.0, help="seconds one kernel's check may take, compiles included").tag(config=True)
    hidden_cases = Unicode("", help="the hidden-cases file on the grading machine (given to the grader only)").tag(
        config=True
    )
    device = Unicode("auto", help="the grader's --device").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        from grader.nb import module_text

        checks = check_cells(nb)
        if not checks:
            return nb, resources
        cells, failed = puzzle_cells(nb)
        # One grader run per distinct module: normally one per notebook.
        groups: dict[tuple[str, str], tuple[list[tuple[int, str]], list[tuple[NotebookNode, str]]]] = {}
        for cell, puzzle_id, kernel in checks:
            module, starts = module_text(cells, failed, keep=kernel)
            groups.setdefault((puzzle_id, module), (starts, []))[1].append((cell, kernel))
        for (puzzle_id, module), (starts, members) in groups.items():
            self._judge(puzzle_id, module, starts, members)
        return nb, resources

    def _judge(
        self, puzzle_id: str, module: str, starts: list[tuple[int, str]], members: list[tuple[NotebookNode, str]]
    ) -> None:
        from grader.nb import GraderRun, _run_grader, defines_kernel, verdict

        defined = [k for _, k in members if defines_kernel(module, k)]
        env = {HIDDEN_ENV: self.hidden_cases} if self.hidden_cases else {}
        limit = self.timeout * len(defined)  # the whole run: each kernel its check's time
        started = time.perf_counter()
        run = (
            _run_grader(
                puzzle_id,
                module,
                defined,
                [],
                limit,
                self.device,
                case_timeout=max(5.0, 0.75 * self.timeout - 5.0),
                env_extra=env,
            )
            if defined
            else GraderRun(None, 1, "", 0.0)
        )
        seconds = time.perf_counter() - started
        for cell, kernel in members:
            if kernel in defined:
                result = verdict(kernel, run, starts, puzzle_id, limit)
                lines, passed, summary = result.lines, result.passed, result.summary
            else:
                summary = tr(f"{kernel}: no %%puzzle cell of this notebook defines it")
                lines, passed = [summary], False
            cell.outputs = judged_outputs(lines, passed, summary)
            cell.metadata.setdefault("tilelang_course", {})["judge"] = {
                "passed": passed,
                "seconds": round(seconds, 2),
                "kernels_in_run": len(defined),
            }
            self.log.info("judge: p%s %s %s (%.1f s)", puzzle_id, kernel, "passed" if passed else "failed", seconds)
