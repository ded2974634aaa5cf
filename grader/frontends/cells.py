"""Lines of the module a notebook's ``%%puzzle`` cells make, named as the notebook shows them: ``line 12 of cell
%%puzzle gemv`` for ``p08_notebook.py:57``. The notebook front end and nbgrader's records both say lines so; nothing
here needs IPython or nbgrader."""

from __future__ import annotations

import re

from grader.i18n import tr


def lines_in_cells(text: str, starts: list[tuple[int, str]], module_name: str) -> str:
    """Point ``p08_notebook.py:57`` at the notebook cell: ``line 12 of cell %%puzzle gemv``.

    Line numbers count the cell's ``%%puzzle`` line, as JupyterLab numbers the cell's lines.
    """

    def in_cell(match: re.Match) -> str:
        line, name = cell_line(int(match.group(1)), starts)
        return tr(f"line {line} of cell %%puzzle {name}")

    path = r"[^\s()'\"`：，。；（）]*"  # a path ends at a space, a bracket or a quote (full-width ones too)
    text = re.sub(rf"{path}{re.escape(module_name)}:(\d+)", in_cell, text)
    text = re.sub(r"(?<=fix )line (\d+)\b", in_cell, text)  # the syntax-error advice names a bare line
    return re.sub(rf"{path}{re.escape(module_name)}", tr("this notebook"), text)


def cell_line(line: int, starts: list[tuple[int, str]]) -> tuple[int, str]:
    """A line of the module that module_text() wrote -> (that line in its cell, counting the ``%%puzzle`` line as
    JupyterLab numbers a cell's lines, and the cell's name)."""
    first, name = max((s for s in starts if s[0] <= line), default=(1, "?"))
    return line - first + 2, name
