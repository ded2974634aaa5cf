"""Learner objects, in the tracer process only: import the learner's file (grader.pipeline.trace traces it).

Everything here may be patched by the learner's own module (it runs in the same process), so nothing
here decides a verdict: it produces TIR and learner-facing sentences that the judge validates.
"""

from __future__ import annotations

import re
import traceback
from pathlib import Path
from typing import Any

from grader.pipeline.build import (
    OUT_OF_MEMORY,
    learner_location,
    out_of_memory,
    summarize,
)
from grader.pipeline.trace import CELL_ERRORS

DEFINED = re.compile(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)|^([A-Za-z_]\w*)\s*=", re.MULTILINE)


def load_learner(source: Path) -> tuple[Any, str, str]:
    """The learner's module, or a one-line reason it cannot be imported (and the trace)."""
    from grader.discover import CELL_END, load_module

    try:
        text = source.read_text()
        if f"\n{CELL_END}\n" in text:
            return load_cells(source, text.split(f"\n{CELL_END}\n")), "", ""
        return load_module(source), "", ""
    except SyntaxError as error:
        return (
            None,
            f"{source.name}:{error.lineno}: syntax error: {error.msg}. Python cannot read the file, so none of its "
            f"kernels can be graded: fix line {error.lineno} (a bracket left open on an earlier line shows up here "
            "too) and run the grader again.",
            traceback.format_exc(),
        )
    except Exception as error:
        where = learner_location(error, source) or source.name
        if out_of_memory(error):
            return None, f"{where}: importing the file {OUT_OF_MEMORY}", traceback.format_exc()
        return None, f"{where}: importing the file failed: {summarize(error)}", traceback.format_exc()


def load_cells(source: Path, cells: list[str]) -> Any:
    """A module built from notebook cells, run one cell after another in one namespace, as the notebook
    ran them: a cell that raises (a syntax error too) is recorded against the names it defines, and the
    rest go on, so it costs only its own kernels (``kernel_function`` reports it for them)."""
    import sys
    import types

    from grader.discover import module_name

    module = types.ModuleType(module_name(source))
    module.__file__ = str(source)
    sys.modules[module.__name__] = module  # TileLang's decorator reads each function's source through it
    errors: dict[str, tuple[str, str]] = {}
    line = 1
    for cell in cells:
        code = "\n" * (line - 1) + cell  # the cell at its own lines of the file: tracebacks and inspect agree
        line += cell.count("\n") + 2  # the cell, its newline and the CELL_END line
        try:
            exec(compile(code, str(source), "exec"), module.__dict__)
        except Exception as error:
            where = learner_location(error, source) or source.name
            if isinstance(error, SyntaxError):
                where = f"{source.name}:{error.lineno}"
            problem = (f"{where}: its cell raised when it ran: {summarize(error)}", traceback.format_exc())
            for match in DEFINED.finditer(cell):
                errors[match.group(1) or match.group(2)] = problem
    module.__dict__[CELL_ERRORS] = errors
    return module
