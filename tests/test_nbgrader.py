"""The real nbgrader 0.9.6 pipeline on a course of puzzle 02, simulated on the CPU.

One module-scoped course: ``python -m grader nbgrader-course``, ``nbgrader generate_assignment``,
nine submissions, ``nbgrader autograde`` (three processes at once on one SQLite gradebook, as the
README suggests for several GPUs), ``generate_feedback`` and ``export``; the tests then read the
scores from the exported CSV and from the gradebook, and the feedback's HTML.

Where a test is about a process (autograde: the judge's children, the sandbox, an attacker's
daemons, concurrent writers, what a refused command prints and its exit status) nbgrader runs as a
command; elsewhere (generate_assignment, generate_feedback, export) it runs in this process, as
nbgrader's own tests run it: the same application and config, without an interpreter's start and
imports (4 to 7 s of CPU) each time. The course and its release are built once (``released``) and
copied for the test that needs a course of its own.
"""

from __future__ import annotations

import contextlib
import copy
import csv
import fcntl
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import nbformat
import pytest

# The GPU machines' bundle may lack nbgrader (a dev extra): every test here runs `python -m nbgrader`.
pytest.importorskip("nbgrader", reason="nbgrader is not installed: pip install -e '.[dev]'")

from grader.course.sync import STUB_LINE, regions
from grader.nbgrader.course import BEGIN, END
from grader.pipeline.hidden import ENV, with_hidden_cases
from grader.settings import hidden_cases_file
from tests.test_hermetic import plant

# One worker runs this file (pytest --dist loadgroup): its module fixture grades a whole course once, and
# the tests that read that course must find it in their process. (Those tests are marked slow: conftest.py.)
pytestmark = pytest.mark.xdist_group("nbgrader")

ASSIGNMENT = "ps1"
NOTEBOOK = "p02_vector_add.ipynb"
KERNELS = ("add", "mul_relu", "add_fragments")
# Seconds per check. Each case's own code (tracing, simulating) gets 0.75 of it less 5 s, 40 s, where a simulated
# case of puzzle 02 takes a few (compiling has its own limit); the judge's whole run gets it once per kernel,
# 180 s, where a run with cold compiles took under 90 s on a loaded 2-CPU machine (the solutions are compiled
# before autograde). The hung kernel spins a CPU for those 40 s. tests/test_nbgrader_slurm.py grades with the
# same limit, with up to four autogrades at once.
CHECK_TIMEOUT = 60
GPU_CHECK_TIMEOUT = 90  # test_autograde_on_a_gpu_grades_every_case_there_by_default: cold compiles, nothing warmed
STAMPS = ("iopub.execute_input", "shell.execute_reply")
SECRET = "secret_seven_blocks"  # a hidden case's own name: must never reach a student
HIDDEN_CASES = {
    "cases": [
        {
            "puzzle": "02",
            "kernel": "add",
            "name": SECRET,
            "sizes": {"N": 777},
            "params": {"BLOCK": 128, "THREADS": 128},
            "seed": 424242,
            "simulate": True,
            "note": f"{SECRET}: seven blocks, a kernel that writes only five fails",
        }
    ]
}

# A kernel cell's solution (the source notebook's cell without nbgrader's markers), edited per student.
Edit = Callable[[str], str]


def solved(source: str) -> str:
    return source


def wrong_mul_relu(source: str) -> str:
    """Forgets the ReLU: negative products are stored."""
    assert "T.max(A[i] * B[i], 0)" in source
    return source.replace("T.max(A[i] * B[i], 0)", "A[i] * B[i]")


def wrong_and_shadows_check(source: str) -> str:
    """Wrong, and defines its own ``check`` that passes everything: the check cell must not call it."""
    return wrong_mul_relu(source) + "\n\n\ndef check(*args, **kwargs):\n    return None"


def renamed_add(source: str) -> str:
    """The solution with every name of its own changed: right, and the same admitted TIR but for the names."""
    for old, new in (
        ("as bx:", "as block:"),
        ("bx * BLOCK + t", "block * BLOCK + lane"),
        ("for t in", "for lane in"),
        ("i = block", "index = block"),
        ("if i < N:", "if index < N:"),
        ("C[i] = A[i] + B[i]", "C[index] = A[index] + B[index]"),
    ):
        assert old in source, old
        source = source.replace(old, new)
    return source


def raises_when_traced(source: str) -> str:
    """A name error inside the kernel body: TileLang's frontend raises when the grader traces it."""
    return source.replace("C[i] = A[i] + B[i]", "C[i] = A[i] + B[j]")


def raises_when_run(source: str) -> str:
    """The cell itself raises when it runs (a line left at its top level): that cell's kernel fails, the
    notebook goes on, and later checks leave the broken cell out."""
    return source + "\nprint(unfinished_helper())"


def never_returns(source: str) -> str:
    """A serial loop of 2^31 - 1 steps before the real work: the simulated kernel does not finish (on a
    GPU, a ``while`` on data would hang it the same way), so its check must give up at its timeout."""
    marker = "for t in T.Parallel(BLOCK):"
    assert marker in source
    spin = "for spin in T.serial(2147483647):\n            C[0] = A[0]\n        "
    return source.replace(marker, spin + marker, 1)


PATCHED_CHECK = """

import grader.frontends.notebook as _nb


def _always_passes(kernel, **kwargs):
    print(f"{kernel}: passed all 5 cases")


_nb.check = _always_passes
print("PASS mul_relu")
"""
BROKEN_CHECK = """

import grader.frontends.notebook as _nb


def _always_fails(kernel, **kwargs):
    raise RuntimeError("sabotaged")


_nb.check = _always_fails
"""


def wrong_and_patches_check(source: str) -> str:
    """Wrong, and patches grader.frontends.notebook.check (which every check cell imports) to print a pass."""
    return wrong_mul_relu(source) + PATCHED_CHECK


def right_and_breaks_check(source: str) -> str:
    """Right, and patches grader.frontends.notebook.check to raise: the judge's verdict, not the notebook's, counts."""
    return source + BROKEN_CHECK


def five_blocks_only(source: str) -> str:
    """Writes only the first five blocks: right on every public simulated case (odd_4097 has five blocks of
    1024), wrong on the hidden one (seven of 128)."""
    return source.replace("if i < N:", "if i < N and bx < 5:")


# A student who has read the course's source and knows the grading machine's layout (the test gives the
# paths through TILELANG_ variables, which reach the tracer): the add cell stores zeros and, when it runs,
# attacks everything autograde has in reach; the mul_relu cell leaks the hidden cases into its error.
ATTACK_MARKER = "IVAN_DAEMON_STILL_HERE"
ATTACK_CELL = """

import os as _os
import pathlib as _pathlib
import signal as _signal
import sqlite3 as _sqlite3

_COURSE = _pathlib.Path(_os.environ.get("TILELANG_ATTACK_COURSE", "."))


def _attack():
    forged = '{"results": [{"puzzle": "02", "kernel": "add", "case": "even_4096", "status": "passed"}]}'
    for report in [*_pathlib.Path("/tmp").glob("tilelang-course-check-*/result.json"), *_COURSE.rglob("*.json")]:
        try:
            report.write_text(forged)
        except OSError:
            pass
    try:  # drop the judge from the pipeline for the next student
        with open(_COURSE / "nbgrader_config.py", "a") as config:
            config.write("\\nc.Autograde.autograde_preprocessors = ['nbgrader.preprocessors.SaveAutoGrades']\\n")
    except OSError:
        pass
    try:  # full marks for me, zero for the others
        db = _sqlite3.connect(str(_COURSE / "gradebook.db"), timeout=1)
        db.execute("update grade set manual_score = 1")
        db.commit()
    except Exception:
        pass
    for notebook in (_COURSE / "submitted").rglob("*.ipynb"):
        try:
            notebook.write_text(notebook.read_text().replace("A[i] + B[i]", "A[i] - B[i]"))
        except OSError:
            pass
    for cmdline in _pathlib.Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if b"grader" in cmdline.read_bytes() and int(cmdline.parent.name) != _os.getpid():
                _os.kill(int(cmdline.parent.name), _signal.SIGKILL)
        except (OSError, ValueError):
            pass


_attack()
if _os.fork() == 0:
    _os.setsid()
    if _os.fork() == 0:
        _os.execvp("sh", ["sh", "-c", "while true; do sleep 1; done # " + ATTACK_MARKER])
    _os._exit(0)
""".replace("ATTACK_MARKER", repr(ATTACK_MARKER))
LEAK_CELL = """

import glob as _glob
import os as _os
import time as _time

_hidden = _os.environ.get("TILELANG_ATTACK_HIDDEN", "")
_seen = _os.path.exists(_hidden)  # the sandbox's root does not hold the file at all
_course = _os.environ.get("TILELANG_ATTACK_COURSE", ".")
_tmp = _os.environ.get("TILELANG_ATTACK_TMP", "/tmp")  # the graders' $TMPDIR
# Graded while two other autogrades run: what of the classmates can be read, their modules, the judges' work
# folders and reports? Looked for for a few seconds, so that their checks are under way meanwhile.
_found = []
_until = _time.monotonic() + 5
while _time.monotonic() < _until and not _found:
    for _pattern in (
        _course + "/submitted/*/*/*.ipynb", _course + "/autograded/*/*/*", _course + "/gradebook.db",
        "/tmp/tilelang-course-*/*", "/tmp/tilelang-course-*/*/*", "/tmp/*/result.json",
        _tmp + "/tilelang-course-*/*", _tmp + "/tilelang-course-*/*/*", _tmp + "/*/result.json",
        _os.path.expanduser("~/.tilelang/cache/*"),
    ):
        for _path in _glob.glob(_pattern):
            if _path.startswith(_os.getcwd() + "/") or _path == _os.path.abspath(__file__):
                continue  # this check's own work folder and its own module
            try:
                with open(_path, "rb") as _handle:
                    _found.append(_path + "=" + _handle.read(200).decode(errors="replace"))
            except OSError:
                pass
    _time.sleep(0.5)
raise RuntimeError("LEAK " + (open(_hidden).read() if _hidden and _seen else "") + " READ " + repr(_found[:5]))
"""
# A plain code cell the attacker adds: autograde runs no student cell, so its marker never appears.
PLAIN_CELL = 'open(__import__("os").environ.get("TILELANG_ATTACK_RAN", "/dev/null"), "w").write("ran")'


def zeros_and_attacks(source: str) -> str:
    assert "C[i] = A[i] + B[i]" in source
    return source.replace("C[i] = A[i] + B[i]", "C[i] = A[i] * 0") + ATTACK_CELL


def wrong_and_leaks(source: str) -> str:
    return wrong_mul_relu(source) + LEAK_CELL


@dataclass(frozen=True)
class Student:
    name: str
    edits: dict[str, Edit]  # kernel -> edit of its solution; kernels left out keep the released stub
    expected: dict[str, int]  # kernel -> points its check must earn
    check_cells: str = ""  # what the student put into every check cell instead of check(...)


STUDENTS = (
    Student("alice_solutions", {k: solved for k in KERNELS}, {"add": 1, "mul_relu": 1, "add_fragments": 1}),
    Student("bob_untouched", {}, {"add": 0, "mul_relu": 0, "add_fragments": 0}),
    Student(
        "carol_partial",
        {"add": solved, "mul_relu": wrong_and_shadows_check},
        {"add": 1, "mul_relu": 0, "add_fragments": 0},
    ),
    Student(
        "dave_raises",
        {"add": raises_when_traced, "mul_relu": raises_when_run, "add_fragments": solved},
        {"add": 0, "mul_relu": 0, "add_fragments": 1},
    ),
    Student(
        "erin_hangs",
        {"add": never_returns, "mul_relu": solved, "add_fragments": solved},
        {"add": 0, "mul_relu": 1, "add_fragments": 1},
    ),
    Student(
        "frank_hidden",
        {"add": five_blocks_only, "mul_relu": solved, "add_fragments": solved},
        {"add": 0, "mul_relu": 1, "add_fragments": 1},
    ),
    Student(
        "gina_patches_check",
        {"add": solved, "mul_relu": wrong_and_patches_check},
        {"add": 1, "mul_relu": 0, "add_fragments": 0},
        check_cells='print("passed all cases")',
    ),
    Student(
        "hank_breaks_check",
        {"add": renamed_add, "mul_relu": right_and_breaks_check, "add_fragments": solved},
        {"add": 1, "mul_relu": 1, "add_fragments": 1},
    ),
)
ATTACKER = Student(
    "ivan_attacks",
    {"add": zeros_and_attacks, "mul_relu": wrong_and_leaks},
    {"add": 0, "mul_relu": 0, "add_fragments": 0},
)
STUDENTS = (*STUDENTS, ATTACKER)
HANGING = "erin_hangs"
# Student globs, one autograde process each; nbgrader grades a glob's students in name order. The attacker
# comes second in the shortest, so that the two other processes are still grading while his cells look for
# their files (test_the_attacker_changes_nothing_and_leaves_nothing checks that they were); the two others
# take about as long (the hung kernel's check timeout is in the first), so that two CPUs stay busy almost to
# the end; carol comes before gina, whose wrong mul_relu is carol's kernel, compiled once.
GROUPS = ("[abe]*", "[cfgh]*", "[di]*")
ATTACKER_GROUP = "[di]*"


def nbgrader(course: Path, *args: str) -> str:
    """``nbgrader ARGS`` run from ``course`` in this process, as nbgrader's own tests run it (its
    ``run_nbgrader``): the command's application, config files and options, without an interpreter's start
    and imports. Its log comes back; it must succeed and name no option nbgrader does not know. Only for
    commands whose test is not about a process: autograde runs as a command."""
    from jupyter_core.application import NoStart
    from nbgrader.apps.nbgraderapp import NbGraderApp

    # nbgrader_config.py may change the environment (it takes the hidden cases' variable out of it) and
    # nbgrader puts the course folder on sys.path: both are put back, as is the current folder.
    saved_env, saved_path, saved_cwd = dict(os.environ), list(sys.path), os.getcwd()
    log = io.StringIO()
    code: int | str | None = 0
    os.chdir(course)
    app = NbGraderApp.instance()
    try:
        # The application's log handler is made during initialize, on the sys.stderr of that moment.
        with contextlib.redirect_stderr(log), contextlib.redirect_stdout(log):
            try:
                app.initialize(list(args))
                app.start()
            except NoStart:  # how a subcommand that ran ends (jupyter_core)
                code = 0
            except SystemExit as stop:
                code = stop.code
    finally:
        app.reset()
        os.chdir(saved_cwd)
        sys.path[:] = saved_path
        os.environ.clear()
        os.environ.update(saved_env)
    said = log.getvalue()
    assert code in (0, None), f"nbgrader {' '.join(args)} exited {code}\n{said}"
    assert "not recognized" not in said, said  # every name in nbgrader_config.py is a real option
    return said


def grader_status(course: Path, *options: str) -> tuple[int, str]:
    """``python -m grader autograde-status ASSIGNMENT`` of ``course``, through the command's own ``main``
    in this process: its exit status and what it printed."""
    from grader.__main__ import main

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["autograde-status", ASSIGNMENT, "--course", str(course), *options])
    return code, printed.getvalue()


def make_course(course: Path, *args: str) -> None:
    """``python -m grader nbgrader-course COURSE ARGS`` through its ``main``, in this process."""
    from grader.nbgrader.course import main

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        code = main([str(course), *args])
    assert code == 0, printed.getvalue()


class Warming:
    """Every case of the solutions of ``puzzle_ids`` (comma-separated) compiled into the run's compile cache,
    in the background from the start; ``wait()`` until they are. Then no check of an autograde spends its
    time limit on a cold compile of a right kernel, and concurrent autogrades do not each compile it.
    Compiled only (``--device compile``): a kernel compiled once is loaded by the judges' CPU runs, and
    simulating it here would prove nothing. One warm-up at a time per cache folder (a lock on the folder):
    the two files' courses (tests/test_nbgrader_slurm.py warms 01 and 02), run by two xdist workers at once,
    do not compile the same kernels side by side; the second starts when the first is done, and finds them
    cached."""

    def __init__(self, puzzle_ids: str):
        cache = Path(os.environ.get("TILELANG_CACHE_DIR") or Path.home() / ".tilelang" / "cache")
        cache.mkdir(parents=True, exist_ok=True)
        self.command = [sys.executable, "-m", "grader", *puzzle_ids.split(","), "--solutions", "--device", "compile"]
        self.command += ["--timeout", "600"]
        self.lock = os.open(cache, os.O_RDONLY)
        self.process: subprocess.Popen | None = None
        try:
            fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another warm-up is compiling: wait() waits for it, then starts this one
            return
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(
            self.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )

    def wait(self, timeout: float = 900) -> None:
        try:
            if self.process is None:
                fcntl.flock(self.lock, fcntl.LOCK_EX)
                self.start()
            self.process.wait(timeout=timeout)
        finally:
            if self.process is not None and self.process.poll() is None:  # past the timeout: it and its workers
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
            os.close(self.lock)  # and with it the lock


def solution_sources(source_notebook: Path) -> dict[str, str]:
    """Kernel -> its cell in the instructor's notebook, without nbgrader's solution markers."""
    notebook = nbformat.read(source_notebook, as_version=4)
    found = {}
    for cell in notebook.cells:
        info = cell.metadata.get("tilelang_course", {})
        if info.get("role") == "kernel":
            kept = [line for line in cell.source.splitlines() if line.strip() not in (BEGIN, END)]
            found[info["kernel"]] = "\n".join(kept)
    return found


def submission(release: nbformat.NotebookNode, solutions: dict[str, str], student: Student) -> nbformat.NotebookNode:
    notebook = copy.deepcopy(release)
    for cell in notebook.cells:
        kernel = cell.metadata.get("tilelang_course", {}).get("kernel", "")
        if cell.metadata.get("tilelang_course", {}).get("role") == "kernel" and kernel in student.edits:
            cell.source = student.edits[kernel](solutions[kernel])
        if cell.metadata.get("tilelang_course", {}).get("role") == "check" and student.check_cells:
            cell.source = student.check_cells
    if student is ATTACKER:
        notebook.cells.append(nbformat.v4.new_code_cell(PLAIN_CELL))
    return notebook


@dataclass
class Graded:
    course: Path
    grades: dict[str, float]  # student -> score, from the exported CSV
    max_score: float
    cells: dict[str, dict[str, float]]  # student -> grade id -> score, from the gradebook
    seconds: dict[str, float]  # step -> wall time
    untouched: dict[str, bool]  # what the attacker went for -> whether it is as it was before autograde
    attacker_daemons: list[int]  # processes of the attacker's still alive after autograde
    refused: subprocess.CompletedProcess  # autograde without --JudgeChecks.device=cpu, where torch sees no GPU


def fingerprint(paths: list[Path]) -> dict[str, bytes]:
    """Every file under ``paths``, by path, with its content."""
    found = {}
    for path in paths:
        for file in [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()):
            found[str(file)] = file.read_bytes()
    return found


def alive_with(marker: str) -> list[int]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker.encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


CPU = "--JudgeChecks.device=cpu"  # this machine has no GPU: grading on the CPU must be asked for


def autograde_all(course: Path, env: dict[str, str]) -> dict[str, float]:
    """Three autograde processes at once, as on a machine with three GPUs; the wall time of each."""
    started = time.perf_counter()
    running = {}
    for number, glob in enumerate(GROUPS):
        log = course / f"autograde-{number}.log"
        command = [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--student", glob, CPU]
        with open(log, "w") as handle:
            child = subprocess.Popen(command, cwd=course, env=env, stdout=handle, stderr=subprocess.STDOUT)
            running[glob] = (child, log)
    seconds: dict[str, float] = {}
    while len(seconds) < len(running):
        for glob, (proc, _) in running.items():
            if glob not in seconds and proc.poll() is not None:
                seconds[glob] = time.perf_counter() - started
        assert time.perf_counter() - started < 900, "autograde took longer than 15 minutes"
        time.sleep(0.2)
    for glob, (proc, log) in running.items():
        output = log.read_text()
        assert proc.returncode == 0, f"autograde --student {glob} exited {proc.returncode}\n{output}"
        assert "not recognized" not in output, output
    return seconds


def course_options(hidden: Path) -> list[str]:
    """The module's course: puzzle 02, the hidden cases on the grading machine, CHECK_TIMEOUT per check."""
    options = ["--assignment", ASSIGNMENT, "--puzzles", "02", "--hidden-cases", str(hidden)]
    return [*options, "--timeout", str(CHECK_TIMEOUT)]


@dataclass(frozen=True)
class Released:
    """The module's course as ``nbgrader-course`` then ``nbgrader generate_assignment`` leave it, before any
    submission: ``course`` is the one ``graded`` grades; ``copy`` makes another of the same release."""

    course: Path
    hidden: Path  # the grading machine's hidden cases file, outside the course
    pristine: Path  # release/ and gradebook.db as generate_assignment left them
    seconds: dict[str, float]

    def copy(self, folder: Path) -> Path:
        """A course in ``folder`` as nbgrader-course and generate_assignment would leave it there: the config
        and source/ written for that folder, release/ and the gradebook (which holds no path) copied."""
        make_course(folder, *course_options(self.hidden))
        shutil.copytree(self.pristine / "release", folder / "release")
        shutil.copy2(self.pristine / "gradebook.db", folder / "gradebook.db")
        return folder


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Released:
    base = tmp_path_factory.mktemp("nbgrader")
    course = base / "course"
    hidden = base / "grading-machine" / "hidden_cases.json"
    hidden.parent.mkdir()
    hidden.write_text(json.dumps(HIDDEN_CASES))
    started = time.perf_counter()
    make_course(course, *course_options(hidden))
    nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    seconds = {"nbgrader-course, generate_assignment": time.perf_counter() - started}
    pristine = base / "released"
    shutil.copytree(course / "release", pristine / "release")
    shutil.copy2(course / "gradebook.db", pristine / "gradebook.db")
    return Released(course, hidden, pristine, seconds)


@pytest.fixture(scope="module")
def graded(released: Released) -> Graded:
    course, hidden, base = released.course, released.hidden, released.course.parent
    seconds: dict[str, float] = dict(released.seconds)
    # The solutions' kernels compile once, first (TileLang's cache), so that no check spends its time limit
    # on a cold compile while three autograde processes share the CPUs; meanwhile the submissions are
    # written and the refused autograde runs.
    started = time.perf_counter()
    warming = Warming("02")
    try:
        release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
        solutions = solution_sources(course / "source" / ASSIGNMENT / NOTEBOOK)
        for student in STUDENTS:
            folder = course / "submitted" / student.name / ASSIGNMENT
            folder.mkdir(parents=True)
            nbformat.write(submission(release, solutions, student), folder / NOTEBOOK)

        watched = {
            "submitted/": [course / "submitted"],
            "nbgrader_config.py": [course / "nbgrader_config.py"],
            "hidden cases": [hidden],
        }
        # Issue 36's plants, where a student can put them: beside his notebook (nbgrader copies every file of a
        # submission) and in the graders' $TMPDIR, which every local user can write. Each writes a marker if it runs.
        markers = base / "planted-ran"
        markers.mkdir()
        plant(course / "submitted" / ATTACKER.name / ASSIGNMENT, markers, "submitted")
        temporary = base / "tmpdir"
        plant(temporary, markers, "tmpdir")
        # only the plants: the graders' own temporary files come and go there
        watched["$TMPDIR"] = sorted(p for p in temporary.rglob("*") if p.is_file())
        before = {name: fingerprint(paths) for name, paths in watched.items()}
        ran = base / "plain-cell-ran"
        env = {
            **os.environ,
            "TILELANG_ATTACK_COURSE": str(course),
            "TILELANG_ATTACK_HIDDEN": str(hidden),
            "TILELANG_ATTACK_RAN": str(ran),
            "TILELANG_ATTACK_TMP": str(temporary),
            "TMPDIR": str(temporary),
        }
        # Without a usable GPU and without being told cpu, autograde grades nobody (the GPU hidden on a GPU host).
        refuse = [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--student", "alice_solutions"]
        no_gpu = {**env, "CUDA_VISIBLE_DEVICES": ""}
        no_gpu.pop("TILELANG_COURSE_DEVICE", None)
        refused = subprocess.run(refuse, cwd=course, env=no_gpu, capture_output=True, text=True, timeout=600)
    finally:
        warming.wait()
    seconds["compile the solutions (meanwhile: submissions, a refused autograde)"] = time.perf_counter() - started

    started = time.perf_counter()
    for key, value in autograde_all(course, env).items():
        seconds[f"autograde {key}"] = value
    seconds["autograde (all, in parallel)"] = time.perf_counter() - started
    untouched = {name: fingerprint(paths) == before[name] for name, paths in watched.items()}
    untouched["no student cell ran"] = not ran.exists()
    untouched["nothing planted ran"] = sorted(p.name for p in markers.iterdir()) == []
    daemons = alive_with(ATTACK_MARKER)

    started = time.perf_counter()
    nbgrader(course, "generate_feedback", ASSIGNMENT)
    seconds["generate_feedback"] = time.perf_counter() - started
    nbgrader(course, "export")

    with open(course / "grades.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    grades = {row["student_id"]: float(row["score"]) for row in rows if row["assignment"] == ASSIGNMENT}
    max_score = float(rows[0]["max_score"])
    from nbgrader.api import Gradebook

    cells: dict[str, dict[str, float]] = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student in STUDENTS:
            notebook = gradebook.find_submission_notebook(NOTEBOOK.removesuffix(".ipynb"), ASSIGNMENT, student.name)
            cells[student.name] = {grade.name: grade.score for grade in notebook.grades}
    print("\nnbgrader pipeline seconds:", json.dumps({k: round(v, 1) for k, v in seconds.items()}))
    print("scores:", json.dumps(grades))
    return Graded(course, grades, max_score, cells, seconds, untouched, daemons, refused)


def test_the_attacker_changes_nothing_and_leaves_nothing(graded: Graded):
    """ivan's cells attack the gradebook, the other submissions, the config, the reports and the graders;
    his scores, everyone else's (test_partial_credit_by_kernel), and every file are as the judge left them."""
    assert graded.untouched == dict.fromkeys(graded.untouched, True)
    assert graded.attacker_daemons == [], "a process the attacker started outlived autograde"
    ivan = graded.course / "autograded" / ATTACKER.name / ASSIGNMENT / NOTEBOOK
    leaked = check_output(ivan, "mul_relu")
    assert "LEAK" in leaked and SECRET not in leaked
    # graded beside two other autogrades: none of the classmates' modules, work folders or reports was readable
    assert "READ []" in leaked, leaked
    others = [graded.seconds[f"autograde {glob}"] for glob in GROUPS if glob != ATTACKER_GROUP]
    assert graded.seconds[f"autograde {ATTACKER_GROUP}"] < min(others), graded.seconds  # and they were grading
    for student in STUDENTS:
        assert student is ATTACKER or student.name not in leaked, leaked
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{graded.course / 'gradebook.db'}") as gradebook:
        for student in STUDENTS:
            notebook = gradebook.find_submission_notebook(NOTEBOOK.removesuffix(".ipynb"), ASSIGNMENT, student.name)
            assert [g.manual_score for g in notebook.grades] == [None] * len(notebook.grades), student.name


def test_autograde_refuses_without_a_gpu_unless_told_cpu(graded: Graded):
    """The fixture's first autograde had no usable GPU and no --JudgeChecks.device=cpu: nobody was graded."""
    output = graded.refused.stdout + graded.refused.stderr
    assert graded.refused.returncode != 0, output
    assert "refusing to grade: no CUDA GPU is usable here" in output and CPU in output, output
    assert "judge:" not in output  # no kernel was judged
    assert "Traceback" not in output, output  # one paragraph (test_a_refused_autograde_says_one_paragraph...)


def test_a_refused_autograde_says_one_paragraph_and_status_says_refused_not_failed(released: Released, tmp_path: Path):
    """On a machine without a GPU, the guide's plain `nbgrader autograde` grades nobody and says why in one
    paragraph, without a traceback; autograde-status then says why each student is not graded, not "failed".
    A config written before the check moved ahead of the gradebook (no pre_convert_hook) still gets that status.
    The course is a copy of the module's, as released (its own config and gradebook), with two submissions."""
    course = released.copy(tmp_path / "course")
    for name in ("alice", "bob"):
        (course / "submitted" / name / ASSIGNMENT).mkdir(parents=True)
        release = course / "release" / ASSIGNMENT / NOTEBOOK
        (course / "submitted" / name / ASSIGNMENT / NOTEBOOK).write_bytes(release.read_bytes())
    no_gpu = {k: v for k, v in os.environ.items() if k != "TILELANG_COURSE_DEVICE"} | {"CUDA_VISIBLE_DEVICES": ""}

    def autograde() -> str:
        done = subprocess.run(
            [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT],
            cwd=course,
            env=no_gpu,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode != 0, done.stdout + done.stderr
        return done.stdout + done.stderr

    def status() -> list[str]:
        code, printed = grader_status(course)
        assert code == 1, printed
        return printed.splitlines()

    output = autograde()
    assert "Traceback" not in output and "SAWarning" not in output, output
    said = [line for line in output.splitlines() if line.strip() and "Running pre-convert hook" not in line]
    assert len(said) == 1, output  # one paragraph
    assert "refusing to grade: no CUDA GPU is usable here" in said[0] and CPU in said[0], output
    assert said[0].endswith("Nobody was graded.") and not (course / "autograded").exists()
    refused = "not graded: refused (no GPU; say --JudgeChecks.device=cpu)"
    lines = status()
    assert [line.split()[0] for line in lines[:2]] == ["alice", "bob"], lines
    assert all(line.endswith(refused) for line in lines[:2]) and "failed" not in lines[0] + lines[1], lines
    assert lines[2] == "0 graded, 0 failed, 2 not graded, 0 missing, 0 not submitted", lines

    config = course / "nbgrader_config.py"
    config.write_text(config.read_text().replace("c.Autograde.pre_convert_hook", "# c.Autograde.pre_convert_hook"))
    (course / "logs" / ASSIGNMENT / "autograde-refused.json").unlink()
    assert "refusing to grade" in autograde()  # the judge refuses, after nbgrader put the students in the gradebook
    assert all(line.endswith(refused) for line in status()[:2])
    shards = [sys.executable, "-m", "grader", "autograde-shards", ASSIGNMENT, "--shards", "1", "--no-sandbox"]
    done = subprocess.run(shards, cwd=course, env=no_gpu, capture_output=True, text=True, timeout=600)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert all(line.endswith("not graded: refused (no GPU; say --device cpu)") for line in status()[:2])


def expected_counts(kernel: str) -> dict[str, int]:
    """How the judge checked a right kernel's cases on the CPU: the simulated ones (the hidden case is
    simulated too, for add) and the rest only compiled."""
    from grader.discover import load_module, load_puzzle, puzzle_files
    from tests.conftest import ROOT

    cases = load_puzzle(load_module(puzzle_files(ROOT / "solutions")["02"])).kernel(kernel).cases
    simulated = sum(bool(c.simulate) for c in cases) + (kernel == "add")
    return {"gpu": 0, "simulated": simulated, "compiled": len(cases) + (kernel == "add") - simulated}


def test_every_instructor_output_counts_how_each_kernel_was_checked(graded: Graded):
    from grader import verified

    alice = graded.course / "autograded" / "alice_solutions" / ASSIGNMENT / NOTEBOOK
    notebook = nbformat.read(alice, as_version=4)
    feedback = (graded.course / "feedback" / "alice_solutions" / ASSIGNMENT / "p02_vector_add.html").read_text()
    logs = "\n".join(p.read_text() for p in sorted(graded.course.glob("autograde-*.log")))
    for kernel in KERNELS:
        counts = expected_counts(kernel)
        assert counts["simulated"] >= 3 and counts["compiled"] == 2, counts  # odd_4097 among the simulated
        said = verified.line(kernel, counts)
        assert said in check_output(alice, kernel)  # the check cell: the gradebook's view and the feedback
        assert said in feedback
        assert f"judge: p02 {kernel} passed" in logs and said in logs  # the autograde log
        cell = next(
            c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == f"p02_{kernel}_check"
        )
        judge = cell.metadata["tilelang_course"]["judge"]
        assert judge["checked"] == counts and judge["device"] == "cpu"  # the facts, as fields
    _, status = grader_status(graded.course)
    assert f"      {verified.line('p02 add', expected_counts('add'))}" in status, status
    total = verified.total(expected_counts(k) for k in KERNELS)
    assert f"    {verified.text(total)}" in status.split("alice_solutions")[1], status
    assert "student(s) have cases that did not run on a GPU" in status.splitlines()[-1]
    _, as_json = grader_status(graded.course, "--json")
    states = json.loads(as_json)
    assert states["alice_solutions"]["checked"] == {f"p02 {k}": expected_counts(k) for k in KERNELS}


def judge_records(graded: Graded, student: str) -> dict[str, dict]:
    """Kernel -> what the judge recorded in its check cell's metadata (grader.nbgrader.judge's schema)."""
    notebook = nbformat.read(graded.course / "autograded" / student / ASSIGNMENT / NOTEBOOK, as_version=4)
    return {
        c.metadata["nbgrader"]["grade_id"].removeprefix("p02_").removesuffix("_check"): c.metadata["tilelang_course"][
            "judge"
        ]
        for c in notebook.cells
        if c.metadata.get("tilelang_course", {}).get("judge")
    }


def test_each_check_cell_records_its_cases_causes_and_structure(graded: Graded):
    """What the class report reads: a record per case with its typed cause, and the sketch of the kernel's TIR."""
    from grader.outcome import CauseKind, Status, Structure
    from grader.pipeline.structure import similarity

    alice, carol, bob = (judge_records(graded, s) for s in ("alice_solutions", "carol_partial", "bob_untouched"))
    frank, hank = judge_records(graded, "frank_hidden"), judge_records(graded, "hank_breaks_check")
    for kernel in KERNELS:
        cases = alice[kernel]["cases"]
        assert len(cases) == sum(expected_counts(kernel).values())
        assert {c["checked"] for c in cases} == {"simulated", "compiled"}
        for case in cases:
            assert set(case) == {
                "case",
                "hidden",
                "status",
                "checked",
                "cause",
                "wrong",
                "total",
                "sizes",
                "line",
                "bench",
            }
            assert case["bench"] is None  # nothing is timed on the CPU
            if case["status"] == Status.PASSED:
                assert case["cause"] is None and case["line"].startswith("PASS"), case
                assert case["wrong"] == (None if case["hidden"] else 0)
            else:  # too large to simulate
                assert case["status"] == Status.COMPILED
                assert case["cause"] == {"kind": CauseKind.COMPILE_ONLY, "facts": {"reason": "too_large"}}
        assert alice[kernel]["structure"]["case"] == cases[0]["case"]
    # carol forgot the ReLU: every simulated case names the missing clamp at 0
    failed = [c for c in carol["mul_relu"]["cases"] if c["status"] == Status.FAILED]
    assert failed and all(c["cause"]["kind"] == CauseKind.CLAMP for c in failed), failed
    assert all(c["cause"]["facts"]["pattern"] == "missing" and c["cause"]["facts"]["bound"] == 0 for c in failed)
    assert all(c["line"].startswith("FAIL") and c["wrong"] > 0 and c["sizes"] for c in failed)
    # the hidden case reads as failed, with no cause: how a case fails is the learner's to choose (public_view)
    assert {c["cause"]["kind"] for c in bob["add"]["cases"] if not c["hidden"]} == {CauseKind.NOT_IMPLEMENTED}
    assert [(c["status"], c["cause"]) for c in bob["add"]["cases"] if c["hidden"]] == [(Status.FAILED, None)]
    assert bob["add"]["structure"] is None  # a stub has no admitted TIR
    # frank's add fails only the hidden case: its record tells that it failed, not how (a file can choose how it
    # fails from the case's sizes: grader.pipeline.hidden.public_view), and nothing of its sizes
    (hidden,) = [c for c in frank["add"]["cases"] if c["hidden"]]
    assert hidden["case"].startswith("hidden_") and hidden["status"] == Status.FAILED
    assert hidden["sizes"] == {} and hidden["wrong"] is None and hidden["total"] is None
    assert hidden["cause"] is None
    assert "hidden case" in hidden["line"] and not any(ch.isdigit() for ch in hidden["line"].split("hidden case")[1])
    # hank's add is alice's with every name changed: the same sketch; carol's wrong mul_relu is not alice's
    sketch = {name: Structure(**records["add"]["structure"]) for name, records in (("alice", alice), ("hank", hank))}
    assert sketch["alice"].sketch == sketch["hank"].sketch and similarity(sketch["alice"], sketch["hank"]) == 1.0
    assert all(0 <= h < 2**63 for h in sketch["alice"].sketch) and sketch["alice"].sketch == sorted(
        sketch["alice"].sketch
    )
    wrong, right = Structure(**carol["mul_relu"]["structure"]), Structure(**alice["mul_relu"]["structure"])
    assert similarity(wrong, right) < 1.0


def test_class_report_reads_the_autograde(graded: Graded, tmp_path: Path):
    """``python -m grader class-report`` on the graded course: from the judge's records only, per kernel, who
    passed, the causes by kind, where the cases were checked, nobody ranked (graded on the CPU), no hidden case's
    name unless asked for, and no look-alikes flagged where students kept the reference's kernel."""
    from grader.__main__ import main
    from grader.outcome import CauseKind

    out = tmp_path / "report"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["class-report", ASSIGNMENT, "--course", str(graded.course), "--out", str(out)]) == 0
    report = json.loads((out / "class-report.json").read_text())
    page = (out / "class-report.html").read_text()
    assert report["students"] == sorted(s.name for s in STUDENTS) and report["not_graded"] == []
    kernels = {k["kernel"]: k for k in report["kernels"]}
    assert list(kernels) == list(KERNELS)
    for kernel, part in kernels.items():
        passing = sorted(s.name for s in STUDENTS if s.expected[kernel])
        assert (part["graded"], part["passed"]) == (len(STUDENTS), len(passing)), kernel
        failing = {s for c in part["causes"] for s in c["students"]}
        assert failing == {s.name for s in STUDENTS} - set(passing), kernel  # every failing student has a cause
        assert part["speed"]["ranked"] == [] and part["speed"]["cpu_not_ranked"] == sorted(report["students"])
        assert "alice_solutions" in part["checked"]["only_compiled"]  # its large cases were only compiled
        assert part["look_alikes"]["clusters"] == [], (kernel, part["look_alikes"])
    causes = {c["kind"]: c["students"] for c in kernels["add"]["causes"]}
    assert "bob_untouched" in causes[CauseKind.NOT_IMPLEMENTED] and "erin_hangs" in causes[CauseKind.TIMED_OUT]
    hidden = [c for c in kernels["add"]["cases"] if c["hidden"]]
    failing_add = sorted(s.name for s in STUDENTS if not s.expected["add"])
    assert [(c["case"], c["failed_students"]) for c in hidden] == [("hidden case", failing_add)]
    assert kernels["add"]["look_alikes"]["status"] == "too small"  # vector add has one natural form
    assert SECRET not in page and SECRET not in (out / "class-report.json").read_text()
    assert "<script" not in page and "<svg" not in page  # nothing timed on the CPU: no plot
    named = tmp_path / "named"
    with contextlib.redirect_stdout(printed):
        assert (
            main(
                ["class-report", ASSIGNMENT, "--course", str(graded.course), "--out", str(named), "--show-hidden-cases"]
            )
            == 0
        )
    assert SECRET in (named / "class-report.html").read_text()  # the instructor asked for the hidden cases' names


def test_release_holds_stubs_and_no_solution(graded: Graded):
    text = (graded.course / "release" / ASSIGNMENT / NOTEBOOK).read_text()
    assert BEGIN not in text and "BEGIN SOLUTION" not in text
    release = nbformat.read(graded.course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    kernel_cells = [c for c in release.cells if c.metadata.get("tilelang_course", {}).get("role") == "kernel"]
    assert len(kernel_cells) == len(KERNELS)
    for cell in kernel_cells:  # each TODO region holds the stub's hints and nbgrader's stub, nothing else
        for region in regions(cell.source):
            assert all(STUB_LINE.match(line) for line in region.splitlines()), region
            assert region.count("raise NotImplementedError()") == 1
    assert "Use T.max, not Python's max." in text  # the stub's hints survive
    for folder in ("source", "release"):
        assert SECRET not in (graded.course / folder / ASSIGNMENT / NOTEBOOK).read_text()
    checks = [c for c in release.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert [c.metadata.nbgrader.grade_id for c in checks] == [f"p02_{k}_check" for k in KERNELS]
    assert all(c.metadata.nbgrader.locked and c.metadata.nbgrader.points == 1 for c in checks)


def test_export_scores(graded: Graded):
    assert graded.max_score == len(KERNELS)
    expected = {s.name: float(sum(s.expected.values())) for s in STUDENTS}
    assert graded.grades == expected


@pytest.mark.parametrize("student", STUDENTS, ids=lambda s: s.name)
def test_partial_credit_by_kernel(graded: Graded, student: Student):
    checks = {k: graded.cells[student.name][f"p02_{k}_check"] for k in KERNELS}
    assert checks == {k: float(v) for k, v in student.expected.items()}


def cell_seconds(notebook_path: Path) -> dict[str, float]:
    """Grade id -> seconds the cell ran, from the timestamps nbclient records while nbgrader executes."""
    notebook = nbformat.read(notebook_path, as_version=4)
    found = {}
    for cell in notebook.cells:
        stamps = cell.metadata.get("execution", {})
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id and "iopub.execute_input" in stamps and "shell.execute_reply" in stamps:
            begin, end = (datetime.fromisoformat(stamps[k].replace("Z", "+00:00")) for k in STAMPS)
            found[grade_id] = (end - begin).total_seconds()
    return found


def judge_seconds(notebook_path: Path) -> dict[str, float]:
    """Grade id -> seconds the judge spent on the grader run that gave that check its verdict."""
    notebook = nbformat.read(notebook_path, as_version=4)
    return {
        c.metadata["nbgrader"]["grade_id"]: c.metadata["tilelang_course"]["judge"]["seconds"]
        for c in notebook.cells
        if c.metadata.get("tilelang_course", {}).get("judge")
    }


def test_hung_kernel_costs_one_check_timeout(graded: Graded):
    path = graded.course / "autograded" / HANGING / ASSIGNMENT / NOTEBOOK
    seconds = judge_seconds(path)
    assert set(seconds) == {f"p02_{k}_check" for k in KERNELS}
    # One grader run judges the three kernels: the hung one gives up at its case limit (it waited for it: no
    # sooner), the others still run. How far past the limit it ends is a speed, tests/test_perf.py's.
    assert CHECK_TIMEOUT * 0.5 < seconds["p02_add_check"]
    assert "HANG" in check_output(path, "add")
    assert "mul_relu: passed" in check_output(path, "mul_relu")
    # No student cell ran in autograde: nbclient recorded no execution.
    assert cell_seconds(path) == {}


def test_a_patched_check_or_an_edited_check_cell_changes_no_score(graded: Graded):
    gina = graded.course / "autograded" / "gina_patches_check" / ASSIGNMENT / NOTEBOOK
    assert "mul_relu: 3 of 5 cases did not pass" in check_output(gina, "mul_relu")  # the judge's verdict (odd_4097 too)
    assert "passed all cases" not in check_output(gina, "mul_relu")  # not what the edited check cell prints
    assert graded.cells["gina_patches_check"]["p02_mul_relu_check"] == 0.0
    hank = graded.course / "autograded" / "hank_breaks_check" / ASSIGNMENT / NOTEBOOK
    assert "sabotaged" not in check_output(hank, "mul_relu")
    assert graded.cells["hank_breaks_check"]["p02_mul_relu_check"] == 1.0


def test_feedback_names_no_hidden_case(graded: Graded):
    pages = {s.name: graded.course / "feedback" / s.name / ASSIGNMENT / "p02_vector_add.html" for s in STUDENTS}
    for name, page in pages.items():
        text = page.read_text()
        assert SECRET not in text and "seven blocks" not in text, name
    frank = check_output(graded.course / "autograded" / "frank_hidden" / ASSIGNMENT / NOTEBOOK, "add")
    assert "hidden_1" in frank and "a hidden case did not pass" in frank  # graded, under its public name only
    assert "777" not in frank and "of 7" not in frank  # neither its size nor its grid
    assert frank.count("image/png") == 0  # no tile map of it either


def check_output(notebook_path: Path, kernel: str) -> str:
    """Everything the check cell of ``kernel`` shows: its text outputs and the MIME types of the rest."""
    notebook = nbformat.read(notebook_path, as_version=4)
    cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == f"p02_{kernel}_check")
    parts = []
    for output in cell.outputs:
        parts += [output.get("text", ""), output.get("evalue", ""), *output.get("data", {}).keys()]
    return "\n".join(parts)


def test_experiments_and_bench_are_not_run(graded: Graded):
    notebook = nbformat.read(graded.course / "autograded" / "alice_solutions" / ASSIGNMENT / NOTEBOOK, as_version=4)
    skipped = [c for c in notebook.cells if c.metadata.get("tilelang_course", {}).get("role") in ("extra", "bench")]
    assert skipped and all("skip-execution" in c.metadata.get("tags", []) for c in skipped)
    assert all(not c.outputs and c.execution_count is None for c in skipped)


def test_hidden_cases_file_adds_cases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from grader.discover import load_module, load_puzzle, puzzle_files
    from tests.conftest import ROOT

    puzzle = load_puzzle(load_module(puzzle_files(ROOT / "solutions")["02"]))
    monkeypatch.delenv(ENV, raising=False)
    assert hidden_cases_file() is None and with_hidden_cases(puzzle, hidden_cases_file()) is puzzle
    path = tmp_path / "hidden.json"
    path.write_text(json.dumps(HIDDEN_CASES))
    monkeypatch.setenv(ENV, str(path))
    extended = with_hidden_cases(puzzle, hidden_cases_file())
    add = extended.kernel("add")
    assert [c.name for c in add.cases[-1:]] == ["hidden_1"] and add.cases[-1].sizes == {"N": 777}
    assert extended.kernel("mul_relu").cases == puzzle.kernel("mul_relu").cases
    path.write_text(json.dumps({"cases": [{"puzzle": "02", "kernel": "nope", "sizes": {"N": 1}, "seed": 1}]}))
    with pytest.raises(ValueError, match="nope"):
        with_hidden_cases(puzzle, path)


def test_config_names_are_nbgrader_options(tmp_path: Path):
    """Every option nbgrader_config.py sets is a trait of nbgrader 0.9.6 / ipykernel, with the value meant."""
    from ipykernel.kernelapp import IPKernelApp
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default import Exchange
    from nbgrader.preprocessors import Execute, OverwriteCells
    from traitlets.config.loader import PyFileConfigLoader

    from grader.nbgrader.course import CELL_MARGIN_S
    from grader.nbgrader.course import main as make_course

    course = tmp_path / "course"
    assert make_course([str(course), "--puzzles", "02", "--timeout", "45", "--assignment", "week1"]) == 0
    assert (course / "source" / "week1" / NOTEBOOK).is_file()
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    execute = Execute(config=config)
    assert execute.timeout == 45 + CELL_MARGIN_S and execute.interrupt_on_timeout
    assert execute.raise_on_iopub_timeout is False
    from grader.frontends.notebook import JUDGE_AFTER_ENV
    from grader.nbgrader.course import DEFER_ARGUMENT

    assert execute.extra_arguments == ["--IPKernelApp.capture_fd_output=False", DEFER_ARGUMENT]
    assert "exec_lines" in IPKernelApp.class_trait_names()
    assert JUDGE_AFTER_ENV not in os.environ  # loading the config (as a Jupyter server does) defers nothing
    assert "capture_fd_output" in IPKernelApp.class_trait_names()
    assert execute.skip_cells_with_tag == "skip-execution"
    # validate runs no student's notebook as you (nbconvert applies it when it runs a notebook, over nbgrader's
    # default: test_validate_runs_no_students_notebook_as_the_instructor in tests/test_attacks.py)
    assert config.Execute.kernel_manager_class == "grader.nbgrader.validate.OwnNotebooksOnly"
    assert OverwriteCells(config=config).add_missing_cells is True
    coursedir = CourseDirectory(config=config)
    assert coursedir.root == str(course) and coursedir.course_id == "tilelang-course"
    assert coursedir.db_url == f"sqlite:///{course / 'gradebook.db'}?timeout=120"
    exchange = Exchange(coursedir=coursedir, config=config)
    assert exchange.root == str(course / "exchange") and exchange.path_includes_course
    source = nbformat.read(course / "source" / "week1" / NOTEBOOK, as_version=4)
    assert any(c.source.endswith('\ncheck("add", timeout=45)') for c in source.cells)
    from grader.nbgrader.judge import JudgeChecks

    assert JudgeChecks(config=config).timeout == 45
    steps = list(config.Autograde.autograde_preprocessors)
    assert "nbgrader.preprocessors.Execute" not in steps  # no student cell runs as the grading user
    assert JudgeChecks(config=config).no_sandbox is False  # and the judge's tracer runs them only in the sandbox
    assert steps.index("grader.nbgrader.judge.JudgeChecks") < steps.index("nbgrader.preprocessors.SaveAutoGrades")
    from nbgrader.converters.base import BaseConverter

    from grader.nbgrader import judge

    hook = config.Autograde.pre_convert_hook  # refuses before nbgrader puts anyone into the gradebook
    assert BaseConverter._validate_pre_convert_hook(None, {"value": hook}) is judge.before_autograde
    text = (course / "nbgrader_config.py").read_text()
    guide = text.split("The Instructor guide says more: ", 1)[1].split()[0]  # the guide it names exists
    assert guide.endswith("docs/instructor.md") and Path(guide).is_file() and "README" not in text
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"cases": [{"puzzle": "02", "kernel": "sub", "sizes": {"N": 8}, "seed": 1}]}))
    assert make_course([str(course), "--puzzles", "02", "--hidden-cases", str(wrong)]) == 2
    assert make_course([str(course), "--puzzles", "42"]) == 2


def test_a_config_that_cannot_import_the_grader_stops_nbgrader(tmp_path: Path):
    """Where the grader cannot be imported (another environment, or a planted grader/ that shadows it), an
    exception in nbgrader_config.py would be logged and nbgrader would go on with its default autograde
    pipeline, whose Execute runs every student cell as the instructor (seen when the editable install was
    stale). The config stops the command instead."""
    from grader.nbgrader.course import main as make_course

    course = tmp_path / "course"
    assert make_course([str(course), "--puzzles", "02", "--assignment", "week1"]) == 0
    load = (
        "import sys; sys.modules['grader'] = None\n"  # `import grader` now raises ImportError
        "from traitlets.config.loader import PyFileConfigLoader\n"
        f"PyFileConfigLoader('nbgrader_config.py', path={str(course)!r}).load_config()\n"
        "print('loaded')\n"
    )
    done = subprocess.run([sys.executable, "-c", load], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "loaded" not in done.stdout, done.stdout + done.stderr
    assert "the course's grader cannot be imported" in done.stderr, done.stderr


def gpu_course(tmp_path: Path, names: tuple[str, ...], *course_options: str) -> tuple[Path, list, dict[str, str]]:
    """For the GPU tests: puzzle 02's course with the GPU check's limit (and ``course_options``), the named students'
    submissions in it, and the environment an instructor's nbgrader runs in (no device named: a GPU machine grades
    on its GPU)."""
    course = tmp_path / "course"
    command = [sys.executable, "-m", "grader", "nbgrader-course", str(course), "--assignment", ASSIGNMENT]
    command += ["--puzzles", "02", *course_options, "--timeout", str(GPU_CHECK_TIMEOUT)]
    subprocess.run(command, check=True, capture_output=True, text=True)
    nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    solutions = solution_sources(course / "source" / ASSIGNMENT / NOTEBOOK)
    chosen = [s for s in STUDENTS if s.name in names]
    for student in chosen:
        folder = course / "submitted" / student.name / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(submission(release, solutions, student), folder / NOTEBOOK)
    return course, chosen, {k: v for k, v in os.environ.items() if k != "TILELANG_COURSE_DEVICE"}


@pytest.mark.gpu
def test_class_report_after_a_gpu_autograde_ranks_who_passed(tmp_path: Path):
    """Issue 43 end to end on a GPU: the instructor's `nbgrader autograde --JudgeChecks.bench=True`, then
    `python -m grader class-report --name-students` in the course folder. Each kernel's speed section ranks the
    students whose kernel passed, from the bench figures the judge recorded on the GPU (torch's time beside
    each); carol's wrong mul_relu is not ranked, nothing is marked CPU-graded, and the page draws the ranking."""
    course, chosen, env = gpu_course(tmp_path, ("alice_solutions", "carol_partial", "hank_breaks_check"))
    autograde = [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--JudgeChecks.bench=True"]
    done = subprocess.run(autograde, cwd=course, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    report = [sys.executable, "-m", "grader", "class-report", ASSIGNMENT, "--name-students"]
    done = subprocess.run(report, cwd=course, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    out = course / "reports" / ASSIGNMENT
    document = json.loads((out / "class-report.json").read_text())
    speed = {part["kernel"]: part["speed"] for part in document["kernels"]}
    for kernel in ("add", "mul_relu"):
        passed = sorted(s.name for s in chosen if s.expected[kernel])
        ranked = speed[kernel]["ranked"]
        assert sorted(point["student"] for point in ranked) == passed, (kernel, speed[kernel])
        assert all(point["kernel_ms"] > 0 and point["torch_ms"] > 0 for point in ranked), ranked
        assert [point["rank"] for point in ranked] == list(range(1, len(passed) + 1))
        assert speed[kernel]["cpu_not_ranked"] == []
    page = (out / "class-report.html").read_text()
    assert "<svg" in page and "alice_solutions" in page


@pytest.mark.gpu
def test_autograde_on_a_gpu_grades_every_case_there_by_default(tmp_path: Path):
    """On a GPU machine the instructor's plain `nbgrader autograde` (no device option) runs every case on
    the GPU, hidden case included, and every output says so: the right student gets all points with every
    case counted on a GPU; a wrong one (frank's five blocks of seven) loses the hidden case's kernel."""
    from grader import verified

    hidden = tmp_path / "grading-machine" / "hidden_cases.json"
    hidden.parent.mkdir()
    hidden.write_text(json.dumps(HIDDEN_CASES))
    course, chosen, env = gpu_course(tmp_path, ("alice_solutions", "frank_hidden"), "--hidden-cases", str(hidden))
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT], cwd=course, env=env, capture_output=True, text=True
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    puzzle = with_hidden_cases(spec_02(), hidden)
    for student in chosen:
        notebook = nbformat.read(course / "autograded" / student.name / ASSIGNMENT / NOTEBOOK, as_version=4)
        for kernel in KERNELS:
            cell = next(
                c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == f"p02_{kernel}_check"
            )
            judge = cell.metadata["tilelang_course"]["judge"]
            cases = len(puzzle.kernel(kernel).cases)
            assert judge["device"] == "cuda" and judge["passed"] == bool(student.expected[kernel]), (kernel, judge)
            assert judge["checked"] == {"gpu": cases, "simulated": 0, "compiled": 0}, (kernel, judge)
            if student.name == "alice_solutions":
                assert verified.line(kernel, judge["checked"]) in check_output(notebook_path(course, student), kernel)
    assert "judge: p02 add passed" in log and "judge: p02 add failed" in log, log  # alice's, then frank's


def spec_02():
    from grader.discover import load_module, load_puzzle, puzzle_files
    from tests.conftest import ROOT

    return load_puzzle(load_module(puzzle_files(ROOT / "solutions")["02"]))


def notebook_path(course: Path, student: Student) -> Path:
    return course / "autograded" / student.name / ASSIGNMENT / NOTEBOOK
