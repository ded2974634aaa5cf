"""nbgrader scores from the judge: an autograde preprocessor that grades every kernel of a notebook.

No student cell runs in ``nbgrader autograde``: the course's config leaves nbgrader's Execute out of the
autograde pipeline, because it would run the student's code as the grading user, next to the gradebook,
``submitted/``, the config and the hidden cases. :class:`JudgeChecks` instead builds the learner's
module from the notebook's ``%%puzzle`` cells (in notebook order, a cell repeated under one name
replacing the earlier one in place), grades it with ``python -m grader`` (whose judge never imports
that module, and whose tracer runs it in the sandbox, grader.processes.sandbox, with the course folder and
the hidden cases out of its sight), and sets each check cell's outputs from the verdict: the lines
``check()`` prints, and an error output when the kernel did not pass, which is how nbgrader scores a
test cell 0. The tracer runs the cells one after another, so a cell that raises costs only the kernels
it defines. Where the machine cannot make the sandbox it refuses to grade, unless the instructor said
``--JudgeChecks.no_sandbox=True`` (or ``TILELANG_COURSE_SANDBOX=off``, which ``autograde-shard(s)
--no-sandbox`` sets). Where no CUDA GPU is usable it refuses as well, unless told
``--JudgeChecks.device=cpu`` (or ``TILELANG_COURSE_DEVICE=cpu``, which ``--device cpu`` of
``autograde-shard(s)`` sets): then each check cell, the cell's metadata and the log say how many
cases ran on a GPU, were simulated on the CPU, or were only compiled (grader.verified).

Both refusals come before anyone is graded: the course's config makes :func:`before_autograde` nbgrader's
``Autograde.pre_convert_hook``, which says why in one paragraph (no traceback), puts nobody into the gradebook,
notes the refusal for ``autograde-status`` (grader.nbgrader.placement.record_refusal) and exits 2.

What each check cell's metadata records, under ``cell.metadata["tilelang_course"]["judge"]`` (the class report,
``python -m grader class-report``, reads it; nothing is run again)::

    {"passed": bool, "seconds": float, "kernels_in_run": int, "device": "cuda" | "cpu",
     "checked": {"gpu": int, "simulated": int, "compiled": int},      # grader.verified.counts
     "cases": [                                                        # one per case the kernel was graded on
        {"case": str,              # the results' name; hidden cases keep their hidden_N names
         "hidden": bool,
         "status": str,            # grader.outcome.Status's value
         "checked": str,           # "gpu" | "simulated" | "compiled" | "" (grader.verified)
         "cause": {"kind": str, "facts": {...}} | None,   # grader.outcome.Cause (CauseKind's value); None
                                   # for a hidden case (how it failed could tell its sizes)
         "wrong": int | None, "total": int | None,        # None for hidden cases
         "sizes": {name: int},     # {} for hidden cases
         "line": str,              # the first line of the case's feedback, as the learner reads it
         "bench": {"kernel_ms": float, "torch_ms": float, "floor_ms": float | None, "bound": str} | None},
        ...],
     "structure": {"sketch": [int, ...], "tokens": int, "case": str} | None}
                                   # grader.outcome.Structure of the kernel's admitted TIR at its first public
                                   # case (grader.pipeline.structure); None where it was not admitted
"""

from __future__ import annotations

import os
import stat
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, NoReturn

from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Enum, Float, Unicode

from grader import settings, verified
from grader.i18n import tr
from grader.nbgrader.records import case_record, check_cells, puzzle_cells
from grader.outcome import CaseResult, plain


def judged_outputs(lines: list[str], passed: bool, summary: str) -> list[NotebookNode]:
    outputs = [new_output("stream", name="stdout", text="\n".join(lines) + "\n")]
    if not passed:
        outputs.append(new_output("error", ename="CheckFailed", evalue=summary, traceback=[f"CheckFailed: {summary}"]))
    return outputs


NO_SANDBOX_HINT = "--JudgeChecks.no_sandbox=True to nbgrader autograde (--no-sandbox to autograde-shard(s))"
CPU_HINT = (
    f"--JudgeChecks.device=cpu to nbgrader autograde (--device cpu to autograde-shard(s), {settings.DEVICE}=cpu "
    "to the Slurm script)"
)


class Refused(RuntimeError):
    """This machine must not grade as told; ``why`` says it in a few words for autograde-status."""

    why = "refused"

    def __init__(self, message: str, why: str = ""):
        super().__init__(message)
        self.why = why or self.why


class SandboxRefused(Refused):
    """This machine cannot make the sandbox, and the instructor did not say to grade unconfined."""

    why = "no sandbox; say --JudgeChecks.no_sandbox=True"


class DeviceRefused(Refused):
    """No CUDA GPU is usable here, and the instructor did not say to grade on the CPU."""

    why = "no GPU; say --JudgeChecks.device=cpu"


def before_autograde(assignment: str = "", student: str = "", notebooks: Any = None, **_: Any) -> None:
    """nbgrader's ``Autograde.pre_convert_hook`` (the course's config sets it): before nbgrader puts a submission
    into the gradebook, check that this machine may grade as told (the sandbox; a GPU, or the instructor's cpu).
    Where it may not: one paragraph on the log, nobody graded, the refusal noted for autograde-status, exit 2.
    nbgrader would print a caught exception's traceback per student; a SystemExit it lets through."""
    from traitlets.config import Application

    from grader.nbgrader.placement import clear_refusal

    if assignment in _ALLOWED:  # once per autograde: the next students find the same machine
        return
    app = Application.instance() if Application.initialized() else None
    judge = JudgeChecks(config=app.config) if app is not None else JudgeChecks()  # the command line's options too
    try:
        judge.sandbox_env()
        judge.grading_device()
    except Refused as error:
        refuse(error, judge.course(), assignment, getattr(app, "log", None))
    clear_refusal(judge.course(), assignment)
    _ALLOWED.add(assignment)


_ALLOWED: set[str] = set()  # the assignments before_autograde let this process grade


def refuse(error: Refused, course: Path, assignment: str, log: Any = None) -> NoReturn:
    """Say why in one paragraph, note it for autograde-status, and stop nbgrader with exit code 2."""
    from grader.nbgrader.placement import record_refusal

    record_refusal(course, assignment, error.why)
    said = f"{tr(str(error))} {tr('Nobody was graded.')}"
    if log is not None:
        log.error(said)
    else:
        print(said, file=sys.stderr)
    raise SystemExit(2)


def instructor_trait(name: str) -> Any:
    """The configurable trait of ``settings.INSTRUCTOR_OPTION[name]``: its default, choices and help."""
    option = settings.INSTRUCTOR_OPTION[name]
    if option.choices is not None:
        trait = Enum(option.choices, default_value=option.default, allow_none=option.default is None, help=option.help)
    else:
        trait = {float: Float, bool: Bool, str: Unicode}[option.type](option.default, help=option.help)
    return trait.tag(config=True)


class LinkedSubmission(RuntimeError):
    """A submission holds a symbolic or hard link: nbgrader would read through it as the grading user."""


def hard_linked(path: Path) -> bool:
    """A regular file with more than one name: a hard link, to a file anywhere on its filesystem (the gradebook,
    the hidden cases, source/). A tar made by hand keeps them (GNU tar recreates one whose target lies in the
    folder it extracts into: `tar xf` in the course's root reaches the gradebook); nbgrader makes none."""
    info = path.lstat()
    return stat.S_ISREG(info.st_mode) and info.st_nlink > 1


def submission_links(coursedir: Any, student: str, assignment: str) -> list[Path]:
    """The symbolic links in ``student``'s submission of ``assignment``: on the submission folder's own path
    below the instructor's part of nbgrader's directory structure, and anywhere under the folder; and the hard
    links under it (hard_linked).

    nbgrader follows them all as the grading user: it grades a linked notebook as this student's (the
    instructor's source/ notebook, a classmate's), and copies a linked file (the gradebook, the hidden cases)
    into autograded/, whence generate_feedback copies it to the feedback the student fetches. A git clone or a
    tar keeps links, so a submission can hold them (tests/attacks/nbgrader_links.py)."""
    from nbgrader.utils import full_split

    parts = full_split(coursedir.directory_structure)
    mine = next((i for i, part in enumerate(parts) if "{student_id}" in part or "{assignment_id}" in part), 0)
    fields = {"nbgrader_step": coursedir.submitted_directory, "student_id": student, "assignment_id": assignment}
    here = Path(coursedir.root, *(part.format(**fields) for part in parts[:mine]))
    found = []
    for part in parts[mine:]:
        here = here / part.format(**fields)
        if here.is_symlink():
            found.append(here)
    if found or not here.is_dir():
        return found
    for folder, folders, files in os.walk(here):  # a linked folder is listed, not entered
        found += [Path(folder, name) for name in [*folders, *files] if Path(folder, name).is_symlink()]
        found += [Path(folder, name) for name in files if hard_linked(Path(folder, name))]
    return sorted(found)


class JudgeChecks(NbGraderPreprocessor):
    """Set every check cell's outputs from the trusted grader's verdict on the notebook's kernels."""

    # Their names, defaults and help come from settings.INSTRUCTOR_OPTIONS (the shards' flags too).
    timeout = instructor_trait("timeout")
    hidden_cases = instructor_trait("hidden_cases")
    device = instructor_trait("device")
    no_sandbox = instructor_trait("no_sandbox")
    bench = instructor_trait("bench")

    def sandbox_env(self) -> dict[str, str]:
        """The grader's sandbox settings for this notebook, or SandboxRefused where it cannot make one."""
        from grader.discover import course_root
        from grader.processes import sandbox

        if self.no_sandbox or os.environ.get(sandbox.ENV) == "off":
            return {sandbox.ENV: "off"}
        problem = sandbox.available()
        if problem:
            refusal = sandbox.policy(hidden_cases=True).refusal
            raise SandboxRefused(refusal.replace(settings.OPTION["no_sandbox"].cli, NO_SANDBOX_HINT))
        # Out of the tracer's sight: the nbgrader course (gradebook, submitted/, source/, the config) and
        # the reference solutions; the hidden cases file is covered anyway.
        course = self.course()
        hide = [str(course), str(course_root() / "solutions"), os.environ.get(sandbox.HIDE_ENV, "")]
        return {sandbox.ENV: "require", sandbox.HIDE_ENV: os.pathsep.join(p for p in hide if p)}

    def course(self) -> Path:
        """The nbgrader course's folder (its config's CourseDirectory.root, else the folder nbgrader runs in)."""
        return Path(self.config.CourseDirectory.get("root") or os.getcwd()).resolve()

    def grading_device(self) -> str:
        """The grader's --device for these notebooks, or DeviceRefused where no GPU is usable and the
        instructor did not say cpu."""
        from grader.nbgrader.placement import device_refusal

        device = settings.grading_device(self.device)
        if device not in settings.GRADING_DEVICES:
            said, words = f"{settings.DEVICE}={device}", " or ".join(settings.GRADING_DEVICES)
            raise DeviceRefused(f"{said}: give {words}", f"{said}; give {words}")
        refusal = device_refusal(device, CPU_HINT)
        if refusal:
            raise DeviceRefused(refusal)
        return device

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        from grader.frontends.notebook import module_text

        self.refuse_links(resources)
        checks = check_cells(nb)
        if not checks:
            return nb, resources
        try:  # refused before anyone was graded by before_autograde, unless the config predates it
            self._sandbox = self.sandbox_env()  # before grading anything: refused, nothing is scored
            self._device = self.grading_device()
        except Refused as error:
            from grader.nbgrader.placement import record_refusal

            assignment = str(resources.get("nbgrader", {}).get("assignment", ""))
            if assignment:
                record_refusal(self.course(), assignment, error.why)
            raise
        cells = puzzle_cells(nb)
        # One grader run per distinct module: normally one per notebook.
        groups: dict[tuple[str, str], tuple[list[tuple[int, str]], list[tuple[NotebookNode, str]]]] = {}
        for cell, puzzle_id, kernel in checks:
            module, starts = module_text(cells, set(), keep=kernel)  # none ran here, so none is known to raise
            groups.setdefault((puzzle_id, module), (starts, []))[1].append((cell, kernel))
        for (puzzle_id, module), (starts, members) in groups.items():
            self._judge(puzzle_id, module, starts, members)
        return nb, resources

    def refuse_links(self, resources: dict[str, Any]) -> None:
        """Grade no submission that holds a symbolic link (submission_links): remove what nbgrader copied
        through the links into autograded/, and raise LinkedSubmission, so that nbgrader logs the student as
        not graded and removes this notebook's autograded copy (with the default --notebook, the whole
        autograded folder), which the student's feedback would be made from."""
        from nbgrader.coursedir import CourseDirectory

        info = resources.get("nbgrader", {})
        student, assignment = str(info.get("student", "")), str(info.get("assignment", ""))
        if not student or not assignment:
            return
        coursedir = CourseDirectory(config=self.config)
        links = submission_links(coursedir, student, assignment)
        if not links:
            return
        submitted = Path(coursedir.format_path(coursedir.submitted_directory, student, assignment))
        autograded = Path(coursedir.format_path(coursedir.autograded_directory, student, assignment))
        inside = [link for link in links if link.is_relative_to(submitted) and link != submitted]
        for copied in (
            [autograded / link.relative_to(submitted) for link in inside]
            if len(inside) == len(links)
            else [p for p in autograded.rglob("*") if p.suffix != ".ipynb"]
        ):  # a linked submission folder: every file copied from it came through the link
            if copied.is_file() or copied.is_symlink():
                copied.unlink()
        said = ", ".join(  # a file name is the student's text: no terminal escapes reach the log
            plain(str(link.relative_to(coursedir.root)) if link.is_relative_to(coursedir.root) else str(link))
            for link in links
        )
        raise LinkedSubmission(tr(f"{plain(student)}'s submission holds symbolic or hard links ({said}): not graded"))

    def case_count(self, puzzle_id: str, kernel: str) -> int | None:
        """How many cases the course's own spec (solutions/, plus the hidden cases) grades ``kernel`` on;
        None for a kernel the spec lacks (the grader's own verdict then says so)."""
        from grader.discover import course_root, load_module, load_puzzle, puzzle_files
        from grader.pipeline.hidden import with_hidden_cases

        specs = self.__dict__.setdefault("_specs", {})  # puzzle id -> its spec, loaded once per judge
        puzzle = specs.get(puzzle_id)
        if puzzle is None:
            puzzle = load_puzzle(load_module(puzzle_files(course_root() / "solutions")[puzzle_id]))
            if self.hidden_cases:
                puzzle = with_hidden_cases(puzzle, Path(self.hidden_cases))
            specs[puzzle_id] = puzzle
        found = [k for k in puzzle.kernels if k.function == kernel]
        return len(found[0].cases) if found else None

    def _judge(
        self, puzzle_id: str, module: str, starts: list[tuple[int, str]], members: list[tuple[NotebookNode, str]]
    ) -> None:
        from grader.frontends.notebook import defines_kernel, verdict
        from grader.processes.launch import GraderRun, check_options, grade

        defined = [k for _, k in members if defines_kernel(module, k)]
        env = {**self._sandbox, **({settings.HIDDEN_CASES: self.hidden_cases} if self.hidden_cases else {})}
        limit = self.timeout * len(defined)  # the whole run: each kernel its check's time
        started = time.perf_counter()
        run = (
            grade(
                puzzle_id,
                module,
                check_options(
                    defined,
                    limit,
                    device=self._device,
                    timeout=settings.case_timeout(self.timeout),  # a kernel's case: from its own check's time
                    # every case compiled, the large ones too (a learner's quick check leaves them out); timed
                    # where the instructor asked and a GPU grades (bench figures are a GPU's only)
                    full=True,
                    bench=self.bench and self._device == "cuda",
                ),
                limit,
                env_extra=env,
            )
            if defined
            else GraderRun(None, 1, "", 0.0)
        )
        seconds = time.perf_counter() - started
        for cell, kernel in members:
            records: list[dict[str, Any]] = []
            structure = None
            if kernel in defined:
                result = verdict(kernel, run, starts, puzzle_id, limit, self.case_count(puzzle_id, kernel))
                lines, passed, summary = result.lines, result.passed, result.summary
                checked = verified.counts(result.cases())
                cases = [CaseResult.from_dict(case) for case in result.cases()]
                records = [case_record(case, starts, puzzle_id) for case in cases]
                structure = next((asdict(case.structure) for case in cases if case.structure), None)
            else:
                summary = tr(f"{kernel}: no %%puzzle cell of this notebook defines it")
                lines, passed, checked = [summary], False, verified.counts([])
            said = tr(verified.line(kernel, checked))
            cell.outputs = judged_outputs([*lines[:-1], said, *lines[-1:]], passed, summary)
            # The submitted notebook's metadata is the student's: a string there made autograde fail for the run
            if not isinstance(cell.metadata.get("tilelang_course"), dict):
                cell.metadata["tilelang_course"] = {}
            cell.metadata["tilelang_course"]["judge"] = {
                "passed": passed,
                "seconds": round(seconds, 2),
                "kernels_in_run": len(defined),
                "device": self._device,
                "checked": checked,  # grader.verified's counts: gpu, simulated, compiled
                "cases": records,  # the schema is in this module's docstring
                "structure": structure,
            }
            self.log.info(
                "judge: p%s %s %s (%.1f s); %s",
                puzzle_id,
                kernel,
                "passed" if passed else "failed",
                seconds,
                verified.line(kernel, checked),
            )
