"""An nbgrader course directory built from the puzzles: ``python -m grader nbgrader-course DIR``.

It writes ``DIR/nbgrader_config.py`` and ``DIR/source/<assignment>/pNN_name.ipynb``, one notebook per
puzzle, built from ``solutions/`` by :func:`grader.course.notebooks.puzzle_notebook` and marked up for
nbgrader (cell metadata schema 3):

* a kernel cell is an autograded answer (``solution: true``): each TODO region's body is wrapped in
  ``### BEGIN SOLUTION`` / ``### END SOLUTION`` after the stub's hints, so ``nbgrader
  generate_assignment`` releases the hints and nbgrader's ``raise NotImplementedError()`` stub;
* the check cell after each kernel is a locked test cell worth POINTS_PER_KERNEL points: the judge
  (grader.nbgrader.judge) regrades the kernel after the notebook ran and gives the cell an error
  output when any case of it fails, so the marks are partial by kernel;
* every other cell is locked (read-only; autograde restores its source), except the notebook-only
  experiments, which stay editable;
* experiments and the bench cell are tagged ``skip-execution``: nbgrader's executor (nbclient) skips
  them, JupyterLab runs them as usual.

Grade ids carry the puzzle id: ``p08_gemv_solution``, ``p08_gemv_check``, ``p08_setup_01``...
Hidden cases (see grader/pipeline/hidden.py) are named in the config, never in a notebook.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from grader import settings
from grader.discover import REGION, course_root, normalize_id, puzzle_files
from grader.pipeline.hidden import read_entries

# An IPython option for the kernels nbgrader's Execute starts: check() only says it is deferred there.
DEFER_ARGUMENT = f"--IPKernelApp.exec_lines=import os; os.environ[{settings.JUDGE_AFTER!r}] = '1'"

POINTS_PER_KERNEL = 1
CHECK_TIMEOUT_S = int(settings.DEFAULT_JUDGE_TIMEOUT_S)  # JudgeChecks.timeout's default, compiles included
CELL_MARGIN_S = 60  # nbgrader's per-cell limit is the check's plus this, so the check's own limit fires first
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
UNLOCKED_ROLES = ("kernel", "extra")  # kernel cells are answers; experiments are the learner's to play with
# nbclient, which runs the notebooks for nbgrader, skips cells with this tag; JupyterLab runs them as usual.
SKIP_TAG = "skip-execution"
SKIPPED_ROLES = ("extra", "bench")  # experiments and timings: for the learner, not the grade
GRADE_ID = re.compile(r"[^a-zA-Z0-9_\-]+")


@dataclass(frozen=True)
class Course:
    """What one ``nbgrader-course`` run writes."""

    root: Path  # absolute
    assignment: str
    puzzle_ids: tuple[str, ...]
    hidden_cases: Path | None  # absolute; read on the grading machine only
    timeout: int  # seconds one check may take; nbgrader's per-cell limit is this plus CELL_MARGIN_S
    exchange: Path  # absolute
    course_id: str
    db_url: str | None = None  # a gradebook server's SQLAlchemy URL; None: SQLite in DIR/gradebook.db
    lang: str = "en"  # the notebooks' and the judge's language (grader/i18n/__init__.py); grade ids are the same in all


# ------------------------------------------------------------------------- solution regions


def stub_hints(stub_text: str) -> list[tuple[str, list[str]]]:
    """For each TODO region of a stub, in order: its ``# TODO begin`` line and its hint comments."""
    hints = []
    for region in REGION.findall(stub_text):
        lines = region.splitlines()
        kept = [line for line in lines[1:-1] if line.strip().startswith("#")]
        hints.append((lines[0].strip(), kept))
    return hints


def with_solution_markers(source: str, hints: Iterator[tuple[str, list[str]]]) -> str:
    """``source`` with each TODO region's body turned into the stub's hints then a solution block.

    ``hints`` yields, in file order, the stub's (begin line, hint lines) for each region met.
    """

    def mark(match: re.Match[str]) -> str:
        lines = match.group(0).splitlines()
        begin, body, end = lines[0], lines[1:-1], lines[-1]
        stub_begin, hint_lines = next(hints)
        if stub_begin != begin.strip():
            raise ValueError(f"the stub's TODO region {stub_begin!r} does not match the solution's {begin.strip()!r}")
        indent = re.match(r"[ \t]*", begin).group(0)
        return "\n".join([begin, *hint_lines, indent + BEGIN, *body, indent + END, end])

    return REGION.sub(mark, source)


# ---------------------------------------------------------------------------- cell metadata


def grade_id(*parts: str) -> str:
    return GRADE_ID.sub("_", "_".join(p for p in parts if p))


def nbgrader_meta(
    identifier: str, *, solution: bool = False, grade: bool = False, locked: bool = False, points: int = 0
) -> dict:
    meta = {"schema_version": 3, "grade": grade, "solution": solution, "locked": locked, "grade_id": identifier}
    if grade:
        meta["points"] = points
    return meta


CHECK_CALL = re.compile(r'^check\("(?P<kernel>[A-Za-z0-9_]+)"\)$')


def check_source(source: str, timeout: int) -> str:
    """The check call with the course's time limit (a hung kernel fails its check within it)."""
    match = CHECK_CALL.match(source.strip())
    if match is None:
        raise ValueError(f'a check cell holds {source!r}, not a single check("kernel") call')
    return "\n".join(
        [
            "from grader.nb import check  # the grader's check, even if a cell above defined another",
            "",
            f'check("{match.group("kernel")}", timeout={timeout})',
        ]
    )


def mark_cells(
    notebook: NotebookNode, puzzle_id: str, hints: list[tuple[str, list[str]]], timeout: int = CHECK_TIMEOUT_S
) -> NotebookNode:
    """Give every cell its nbgrader metadata; put solution markers into the TODO regions."""
    remaining = iter(hints)
    used: set[str] = set()
    for index, cell in enumerate(notebook.cells):
        info = cell.metadata.get("tilelang_course", {})
        role, kernel = info.get("role", "code"), info.get("kernel", "")
        has_todo = cell.cell_type == "code" and bool(REGION.search(cell.source))
        if role in SKIPPED_ROLES and not has_todo:
            cell.metadata["tags"] = sorted({*cell.metadata.get("tags", []), SKIP_TAG})
        if has_todo:
            cell.source = with_solution_markers(cell.source, remaining)
            meta = nbgrader_meta(grade_id(f"p{puzzle_id}", kernel or f"cell{index:02d}", "solution"), solution=True)
        elif role == "check":
            cell.source = check_source(cell.source, timeout)
            meta = nbgrader_meta(
                grade_id(f"p{puzzle_id}", kernel, "check"), grade=True, locked=True, points=POINTS_PER_KERNEL
            )
        elif role in UNLOCKED_ROLES:
            continue
        else:
            meta = nbgrader_meta(grade_id(f"p{puzzle_id}", role, f"{index:02d}"), locked=True)
        if meta["grade_id"] in used:
            raise ValueError(f"puzzle {puzzle_id}: two cells would have grade id {meta['grade_id']}")
        used.add(meta["grade_id"])
        cell.metadata["nbgrader"] = meta
    left = list(remaining)
    if left:
        raise ValueError(f"puzzle {puzzle_id}: {len(left)} TODO region(s) of the stub have no cell in the notebook")
    return notebook


def source_notebook(
    solution: Path, stub: Path, puzzle_id: str, timeout: int = CHECK_TIMEOUT_S, lang: str = "en"
) -> NotebookNode:
    """The instructor's notebook of one puzzle: the solutions inside nbgrader's solution markers.
    ``lang`` other than en: the translated notebook (grader.i18n), the same cells and grade ids."""
    from grader.course.notebooks import puzzle_notebook
    from grader.course.translations import translate_file_comments, translated_notebook

    notebook = puzzle_notebook(solution, puzzle_id) if lang == "en" else translated_notebook(solution, puzzle_id, lang)
    stub_text = stub.read_text() if lang == "en" else translate_file_comments(stub.read_text(), puzzle_id, lang)
    for cell in notebook.cells:  # nbgrader cuts at these words wherever they stand
        if any(word in cell.source for word in ("BEGIN SOLUTION", "END SOLUTION")):
            raise ValueError(f"{solution.name}: a cell already holds nbgrader's solution delimiters")
    notebook = mark_cells(notebook, puzzle_id, stub_hints(stub_text), timeout)
    nbformat.validate(notebook)
    return notebook


# ------------------------------------------------------------------------------ the config


def config_text(course: Course) -> str:
    """``nbgrader_config.py`` for the course. Every name below was checked against nbgrader 0.9.6."""
    hidden = course.hidden_cases or course.root / "hidden_cases.json"
    return f'''"""nbgrader configuration of the TileLang course, written by `python -m grader nbgrader-course`.

Run every nbgrader command from this folder. Autograding runs no student cell: the judge grades the
%%puzzle cells, and only in the grader's sandbox (Linux namespaces). Where this machine cannot make one,
autograde refuses unless told --JudgeChecks.no_sandbox=True. Where no CUDA GPU is usable it refuses too,
unless told --JudgeChecks.device=cpu. The Instructor guide says more: {course_root() / "docs" / "instructor.md"}
(the Security model: security.md beside it).
"""

import os
import sys
from pathlib import Path

try:
    from grader.nbgrader.sanitize import safe_html_config
except ImportError as missing:
    # An exception would only be logged, and nbgrader would go on with its default pipeline, which runs every
    # student cell as this user: stop instead (traitlets catches Exception, not SystemExit).
    raise SystemExit(
        f"nbgrader_config.py: the course's grader cannot be imported by {{sys.executable}} ({{missing}}); "
        "install it into the environment that runs nbgrader (pip install -e COURSE)"
    ) from None

c = get_config()  # noqa: F821 (nbgrader provides it)

ROOT = Path({str(course.root)!r})
c.CourseDirectory.root = str(ROOT)
c.CourseDirectory.course_id = {course.course_id!r}
{lang_lines(course)}{db_lines(course)}

# The exchange: where `nbgrader release_assignment` puts assignments and `collect` finds submissions.
# On a shared JupyterHub point this at a folder every user can write, e.g. /srv/nbgrader/exchange.
c.Exchange.root = {str(course.exchange)!r}
c.Exchange.path_includes_course = True
# A student writes his own folder of the exchange, links included; nbgrader's collect would copy what they point at
# as you (the source/ notebooks, the gradebook, the hidden cases). This one copies a link as a link, and autograde
# grades no submission that holds one.
c.ExchangeFactory.collect = "grader.nbgrader.exchange.LinkSafeCollect"

# The Execute settings below are for `nbgrader validate` and the formgrader's own runs of a notebook;
# autograde does not execute the student's notebook at all (the pipeline further down).
# `nbgrader validate` runs every cell as you, unconfined: this kernel manager runs none of a notebook in this
# folder outside source/ and release/ (a student's, under submitted/, autograded/, feedback/) or in the exchange.
c.Execute.kernel_manager_class = "grader.nbgrader.validate.OwnNotebooksOnly"
# Each cell may run this long. A check cell grades its kernel in a child process stopped after
# {course.timeout} s (the timeout= in the cell), so a hung kernel fails its check before this fires;
# it bounds every other cell (a learner's cell that never returns is interrupted, the rest run).
c.Execute.timeout = {course.timeout + CELL_MARGIN_S}
c.Execute.interrupt_on_timeout = True
c.Execute.raise_on_iopub_timeout = False
# The kernel must not forward output written straight to file descriptors 1 and 2 (TileLang, TVM
# and nvcc write there): a test cell with any stderr output scores 0.
# The second argument defers the check cells in the kernels autograde starts, and only there (not in
# a Jupyter server that loads this file): their outputs come from the judge (below).
c.Execute.extra_arguments = ["--IPKernelApp.capture_fd_output=False", {DEFER_ARGUMENT!r}]
# Experiments and the benchmark carry this tag: nbgrader does not run them (they grade nothing).
c.Execute.skip_cells_with_tag = {SKIP_TAG!r}
# A deleted check cell is put back and graded.
c.OverwriteCells.add_missing_cells = True

# Scores come from the judge, and no student cell runs here: nbgrader's Execute is not in the
# pipeline, since it would run the student's code as this user, beside the gradebook, submitted/ and
# this file. grader.nbgrader.judge.JudgeChecks grades the notebook's %%puzzle cells with
# `python -m grader` (its judge never imports them; its tracer runs them in the sandbox, where this
# folder and the hidden cases cannot be seen and nothing can be written) and sets each check cell's
# outputs, which nbgrader then scores. A patched or redefined check(), an edited check cell, a printed
# "PASS" or a daemon changes nothing.
c.JudgeChecks.timeout = {course.timeout}
# Where no CUDA GPU is usable autograde refuses to grade: on the CPU only the small cases are simulated and
# the others only compiled. To grade on the CPU anyway, uncomment (or pass --JudgeChecks.device=cpu):
# c.JudgeChecks.device = "cpu"
# On a GPU, time each kernel's bench case too, for the speed section of `python -m grader class-report`
# (each check then takes longer: raise c.JudgeChecks.timeout to match):
# c.JudgeChecks.bench = True
# Before the first submission enters the gradebook: may this machine grade as told (the sandbox; a GPU, or
# device=cpu)? If not, autograde says why in one paragraph, grades nobody and exits 2.
c.Autograde.pre_convert_hook = "grader.nbgrader.judge.before_autograde"
c.Autograde.autograde_preprocessors = [
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "grader.nbgrader.judge.JudgeChecks",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]

# A submission's markdown and outputs are the student's HTML. The feedback pages (`nbgrader
# generate_feedback`) and the formgrader show them cleaned: no script, event handler, frame, form or
# javascript: link; the feedback pages also forbid every script (grader/nbgrader/sanitize.py).
c.merge(safe_html_config())

# Hidden cases: graded on this machine only, never written into a notebook, and never in the
# environment of the notebook's kernel (the student's code runs there): the judge alone gets the
# file. An instructor's own setting of the environment variable wins.
HIDDEN_CASES = Path(os.environ.pop({settings.HIDDEN_CASES!r}, "") or {str(hidden)!r})
if HIDDEN_CASES.is_file():
    c.JudgeChecks.hidden_cases = str(HIDDEN_CASES)
'''


def lang_lines(course: Course) -> str:
    """The language the judge's verdicts and the notebooks' checks speak (English: nothing to set)."""
    if course.lang == "en":
        return ""
    return (
        "# The checks and the judge speak this language (grader/i18n/__init__.py); an instructor's own setting wins.\n"
        f"os.environ.setdefault({settings.LANG!r}, {course.lang!r})\n"
    )


def db_lines(course: Course) -> str:
    if course.db_url is None:
        return """# One SQLite gradebook. Several autograde processes may share it (SQLite lets one writer in at a
# time); give waiting writers room: the timeout below is sqlite3's busy timeout in seconds.
c.CourseDirectory.db_url = "sqlite:///" + str(ROOT / "gradebook.db") + "?timeout=120\""""
    return f"""# The gradebook is a database server that every autograde process reaches, on any machine (a
# cluster's jobs, several GPUs of one host). Keep a password out of this file: libpq reads ~/.pgpass.
c.CourseDirectory.db_url = {course.db_url!r}"""


SBATCH = "autograde.sbatch"


def sbatch_text(course: Course) -> str:
    """``DIR/slurm/autograde.sbatch``: one task of a job array grades one shard of the students."""
    return f"""#!/bin/bash
# Autograde one shard of the students in submitted/ per task of a Slurm job array (written by
# `python -m grader nbgrader-course`). From the course directory:
#
#   sbatch --array=0-9%4 slurm/{SBATCH} ps1        # 10 shards, at most 4 running at once
#   sbatch --array=3 slurm/{SBATCH} ps1 10         # shard 3 of those 10 again (name the count)
#   python -m grader autograde-status ps1           # graded, failed, missing
#
# Each task refuses to grade where its node cannot make the grader's sandbox (Linux user namespaces);
# {settings.SANDBOX}=off sbatch ... grades there anyway, with student code unconfined. It refuses
# too where no CUDA GPU is usable; {settings.DEVICE}=cpu sbatch ... grades on the CPU anyway (small
# cases simulated, the others only compiled: each student's log and autograde-status count them).
#
# Every task deals the submitted students into SHARDS shards the same way and grades its own, one
# `nbgrader autograde --student S --force` each, into the gradebook of nbgrader_config.py (a server
# for several machines: --db of nbgrader-course) and into logs/ASSIGNMENT/S.log. A student the
# gradebook already holds as graded is skipped, so a task run again finishes only what is left.
#
#SBATCH --job-name=autograde
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=4
#SBATCH --mem=32G
#SBATCH --chdir={course.root}
#SBATCH --output={course.root}/slurm/logs/%x-%A_%a.out
# Add what your cluster needs: --partition, --account, --time (a student takes about a minute per
# puzzle on an H200, plus the check timeout of {course.timeout} s for each kernel that hangs).

set -euo pipefail
ASSIGNMENT=${{1:?usage: sbatch --array=0-N slurm/{SBATCH} ASSIGNMENT [SHARDS]}}
if [ -n "${{2:-}}" ]; then
    SHARDS=$2
elif [ "${{SLURM_ARRAY_TASK_MIN:-}}" = 0 ] && [ "$((SLURM_ARRAY_TASK_MAX + 1))" = "${{SLURM_ARRAY_TASK_COUNT:-}}" ]
then
    SHARDS=$SLURM_ARRAY_TASK_COUNT  # a whole array 0..N: N+1 shards
else
    echo "this array is not 0..N: name the number of shards, e.g. sbatch --array=3 slurm/{SBATCH} $ASSIGNMENT 10" >&2
    exit 2
fi
# Load your site's modules (CUDA, a Python) here if the jobs need them.
PYTHON=${{{settings.PYTHON}:-{sys.executable}}}
echo "task $SLURM_ARRAY_TASK_ID of job $SLURM_ARRAY_JOB_ID on $(hostname): shard $SLURM_ARRAY_TASK_ID of $SHARDS," \\
    "CUDA_VISIBLE_DEVICES=${{CUDA_VISIBLE_DEVICES:-}}"
exec "$PYTHON" -m grader autograde-shard "$ASSIGNMENT" --course {shlex.quote(str(course.root))} \\
    --shard "$SLURM_ARRAY_TASK_ID" --shards "$SHARDS"
"""


# ---------------------------------------------------------------------------------- writing


def write_course(course: Course) -> list[Path]:
    """Write the config and the source notebooks; return the paths written."""
    root = course_root()
    stubs, solutions = puzzle_files(root / "puzzles"), puzzle_files(root / "solutions")
    folder = course.root / "source" / course.assignment
    folder.mkdir(parents=True, exist_ok=True)
    written = [course.root / "nbgrader_config.py"]
    written[0].write_text(config_text(course))
    slurm = course.root / "slurm"
    (slurm / "logs").mkdir(parents=True, exist_ok=True)  # sbatch writes the task logs there, and creates no folder
    (slurm / SBATCH).write_text(sbatch_text(course))
    (slurm / SBATCH).chmod(0o755)
    for puzzle_id in course.puzzle_ids:
        notebook = source_notebook(solutions[puzzle_id], stubs[puzzle_id], puzzle_id, course.timeout, course.lang)
        path = folder / f"{solutions[puzzle_id].stem}.ipynb"
        path.write_text(nbformat.writes(notebook) + "\n")
        written.append(path)
    return written


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m grader nbgrader-course",
        description="Write a ready nbgrader course directory: nbgrader_config.py and source/<assignment>/.",
    )
    p.add_argument("dir", type=Path, metavar="DIR", help="the course directory (created if missing)")
    p.add_argument("--assignment", default="ps1", metavar="NAME", help="the assignment's name (default ps1)")
    p.add_argument("--puzzles", default="", metavar="IDS", help="comma-separated puzzle ids (default: all)")
    p.add_argument(
        "--hidden-cases",
        type=Path,
        metavar="FILE",
        help="JSON file of hidden cases on the grading machine (default: DIR/hidden_cases.json when it exists)",
    )
    p.add_argument(
        "--timeout",
        type=int,
        default=CHECK_TIMEOUT_S,
        metavar="S",
        help=f"seconds one kernel's check may take, compiles included (default {CHECK_TIMEOUT_S}); "
        f"nbgrader stops any cell after S+{CELL_MARGIN_S}",
    )
    p.add_argument("--exchange", type=Path, metavar="DIR", help="the nbgrader exchange (default: DIR/exchange)")
    p.add_argument("--course-id", default="tilelang-course", metavar="ID", help="nbgrader's course id")
    p.add_argument(
        "--lang",
        default="en",
        choices=("en", "zh_CN"),
        help="the notebooks' language: en (default) or zh_CN (prose from i18n/zh_CN/, the same grade ids)",
    )
    p.add_argument(
        "--db",
        metavar="URL",
        help="the gradebook's SQLAlchemy URL, e.g. postgresql://grader@dbhost/tilelang (default: SQLite in "
        "DIR/gradebook.db, for one machine)",
    )
    return p


class UsageError(Exception):
    pass


def check_hidden_cases(path: Path, solutions: dict[str, Path]) -> None:
    """Every hidden case names a puzzle and one of its graded kernels (its sizes are checked at grading)."""
    from grader.discover import graded_kernels

    for number, entry in enumerate(read_entries(path), 1):
        puzzle_id = normalize_id(entry["puzzle"])
        if puzzle_id not in solutions:
            raise UsageError(f"{path}, case {number}: there is no puzzle {entry['puzzle']!r}")
        kernels = graded_kernels(solutions[puzzle_id].read_text())
        if entry["kernel"] not in kernels:
            raise UsageError(f"{path}, case {number}: puzzle {puzzle_id} has no kernel {entry['kernel']!r}")


def check_db_url(url: str) -> str | None:
    """A URL SQLAlchemy can parse, of a dialect it has; a note when its driver is not installed here
    (it may be on the grading machines only)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        dialect = make_url(url).get_dialect()
    except (ArgumentError, NoSuchModuleError, ValueError) as error:
        raise UsageError(f"--db {url!r} is not a database URL SQLAlchemy knows: {error}") from None
    try:
        dialect.import_dbapi()
    except ImportError as error:
        return (
            f"note: the database driver {dialect.driver} is not installed here ({error}); the grading machines need it"
        )
    return None


def course_from_args(args: argparse.Namespace) -> Course:
    available = puzzle_files(course_root() / "solutions")
    ids = []
    for text in (t for t in args.puzzles.split(",") if t.strip()):
        puzzle_id = normalize_id(text)
        if puzzle_id not in available:
            raise UsageError(f"'{text}' is not a puzzle of this course (present: {', '.join(sorted(available))})")
        ids.append(puzzle_id)
    if not re.fullmatch(r"[A-Za-z0-9_\-]+", args.assignment):
        raise UsageError("the assignment name may hold only letters, digits, '_' and '-'")
    if args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    if args.db is not None:
        check_db_url(args.db)
    hidden = args.hidden_cases.resolve() if args.hidden_cases else None
    if hidden is not None and hidden.is_file():  # a broken file is said now, not at grading time
        check_hidden_cases(hidden, available)
    root = args.dir.resolve()
    return Course(
        root=root,
        assignment=args.assignment,
        puzzle_ids=tuple(ids or sorted(available)),
        hidden_cases=hidden,
        timeout=args.timeout,
        exchange=(args.exchange or root / "exchange").resolve(),
        course_id=args.course_id,
        db_url=args.db,
        lang=args.lang,
    )


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(list(argv))
    try:
        course = course_from_args(args)
    except (UsageError, ValueError) as error:
        print(f"grader nbgrader-course: {error}", file=sys.stderr)
        return 2
    try:
        written = write_course(course)
    except ValueError as error:  # a puzzle module nbgrader's markup cannot be put on
        print(f"grader nbgrader-course: {error}", file=sys.stderr)
        return 1
    print(f"wrote {written[0]} and {len(written) - 1} notebook(s) in {course.root / 'source' / course.assignment}")
    if course.hidden_cases is not None and not course.hidden_cases.is_file():
        print(f"note: {course.hidden_cases} is not on this machine; the config uses it where it exists at grading")
    print(f"wrote {course.root / 'slurm' / SBATCH}: sbatch --array=0-N%K slurm/{SBATCH} {course.assignment}")
    note = check_db_url(course.db_url) if course.db_url else None
    if note:
        print(note)
    print(f"next: cd {course.root} && nbgrader generate_assignment {course.assignment}")
    return 0
