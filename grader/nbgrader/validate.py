"""``nbgrader validate`` in the course: no student's notebook is run as the instructor (the course's config names
this kernel manager: ``c.Execute.kernel_manager_class``).

nbgrader validate runs every cell of a notebook in a Jupyter kernel of whoever runs it, unconfined: no sandbox, the
course's files, the gradebook, the hidden cases and the instructor's credentials in reach. Run by a student on his own
notebook (the Validate button of his own server) that is his own code as himself, which is fine. Run by the instructor
on a submission (``nbgrader validate submitted/mallory/ps1/*.ipynb``, or the Validate button of the instructor's own
server on a notebook under submitted/), it is the student's code as the instructor: a cell that reads the hidden cases,
rewrites the gradebook or plants a file in HOME ran (red team round 4; tests/test_attacks.py,
test_validate_runs_no_students_notebook_as_the_instructor). Autograde never runs a student's cell: its check cells are
graded by the sandboxed judge (grader.nbgrader.judge).

This kernel manager starts no kernel for a notebook in the course's folder outside its source/ and release/ folders
(submitted/, autograded/, feedback/ and the rest) or in the exchange, and says why; a notebook elsewhere (the
instructor's own, a student's own in his home) is validated as nbgrader does. A student's notebook that the instructor
copies somewhere else is his code again: grade it with autograde, or run it in a container of its own."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from jupyter_client import AsyncKernelManager

from grader.i18n import tr


class StudentNotebook(RuntimeError):
    """A notebook that is not the instructor's to run: a student's code would run as the instructor."""


def folder_refusal(folder: Path, config: Any) -> str:
    """Why a notebook in ``folder`` must not be run by the course's nbgrader (a sentence), or "" where it may: a
    folder of the course (CourseDirectory.root) outside its source and release folders, or of the exchange."""
    folder = folder.resolve()
    course = config.CourseDirectory.get("root")
    exchange = config.Exchange.get("root")
    mine = [config.CourseDirectory.get("source_directory") or "source"]
    mine.append(config.CourseDirectory.get("release_directory") or "release")
    refused = False
    if course:
        course = Path(course).resolve()
        refused = folder.is_relative_to(course) and not any(folder.is_relative_to(course / part) for part in mine)
    refused = refused or bool(exchange) and folder.is_relative_to(Path(exchange).resolve())
    if not refused:
        return ""
    return tr(
        f"nbgrader validate would run the notebook in {folder} as you, unconfined: a student's notebook is graded "
        "by nbgrader autograde, whose judge runs no student cell"
    )


class OwnNotebooksOnly(AsyncKernelManager):
    """Jupyter's kernel manager, except that it starts no kernel for a notebook that folder_refusal refuses (the
    notebook's folder: the cwd nbclient passes, else the folder nbgrader validate changed into)."""

    async def start_kernel(self, **kwargs: Any) -> None:
        refusal = folder_refusal(Path(kwargs.get("cwd") or os.getcwd()), self.config)
        if refusal:
            self.log.error(refusal)
            raise StudentNotebook(refusal)
        await super().start_kernel(**kwargs)
