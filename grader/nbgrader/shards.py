"""Autograde a class in shards: on a Slurm cluster, on one host with several GPUs, and where it stands.

Three subcommands, all run from the course directory (or given ``--course DIR``):

``python -m grader autograde-shard ASSIGNMENT --shard I --shards N``
    grades shard I of N of the students in ``submitted/``, one ``nbgrader autograde --student S``
    process per student, each into ``logs/ASSIGNMENT/S.log``. Students the gradebook already holds
    as graded are skipped (``--regrade`` grades them again); every other student of the shard is
    graded with ``--force``, so a shard whose task was killed half-way can simply be run again. This
    is what each task of ``slurm/autograde.sbatch`` runs.
``python -m grader autograde-shards ASSIGNMENT --gpus 0,1,2``
    one host: one ``autograde-shard`` process per GPU, each with its own ``CUDA_VISIBLE_DEVICES``
    and shard, all at once (``--shards N`` instead runs N shards without pinning a GPU).
``python -m grader autograde-status ASSIGNMENT``
    each student's state, read from the gradebook: graded, failed (grading began and did not finish),
    not graded (the last autograde was refused: no GPU and no cpu option, or no sandbox), missing
    (submitted, not in the gradebook) or not submitted. Exit 0 when every submission is graded.

The split (:func:`shard_students`) depends only on the set of folder names in ``submitted/``: every
shard of one N, wherever it runs, sees the same split, and the N shards cover every student once.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from grader import settings, verified
from grader.i18n import tr
from grader.nbgrader.placement import (
    CPU_HINT,
    LOGS,  # DIR/logs/ASSIGNMENT/STUDENT.log, one per student, rewritten on each attempt
    clear_refusal,
    device_refusal,
    record_refusal,
    recorded_refusal,
)
from grader.outcome import plain
from grader.processes import hermetic

GRADED, FAILED, MISSING, NOT_SUBMITTED = "graded", "failed", "missing", "not submitted"
REFUSED = "not graded"  # submitted, not graded, and the last autograde was refused (placement.record_refusal)


def shard_students(students: Sequence[str], index: int, count: int) -> list[str]:
    """Shard ``index`` of ``count``: the names in sorted order, dealt round-robin.

    The same names give the same split whatever their order; the ``count`` shards together hold each
    name exactly once, and their sizes differ by at most one.
    """
    if count < 1:
        raise ValueError(f"the number of shards must be at least 1, not {count}")
    if not 0 <= index < count:
        raise ValueError(f"shard {index} does not exist: shards are numbered 0 to {count - 1}")
    return [name for position, name in enumerate(sorted(set(students))) if position % count == index]


def submitted_students(course: Path, assignment: str) -> list[str]:
    """Names of the folders in ``submitted/`` that hold this assignment, sorted."""
    folder = course / "submitted"
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / assignment).is_dir())


def log_path(course: Path, assignment: str, student: str) -> Path:
    return course / LOGS / assignment / f"{student}.log"


def shard_log(course: Path, assignment: str, index: int) -> Path:
    """A shard's own log, in a folder of its own: beside the students' logs, a student named shard-0 wrote over it."""
    return course / LOGS / assignment / "shards" / f"shard-{index}.log"


# ------------------------------------------------------------------------------- the gradebook


def db_url(course: Path) -> str:
    """The gradebook URL that ``nbgrader_config.py`` in ``course`` sets, as nbgrader itself reads it."""
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    # nbgrader runs in the course folder, so a config that names no root means that folder, not ours: an
    # empty config read from elsewhere would otherwise point at (and create) ./gradebook.db.
    if "root" not in config.CourseDirectory:
        config.CourseDirectory.root = str(course.resolve())
    return CourseDirectory(config=config).db_url


@dataclass
class StudentState:
    student: str
    state: str  # GRADED, FAILED, REFUSED, MISSING or NOT_SUBMITTED
    score: float | None = None
    max_score: float | None = None
    not_submitted: list[str] = field(default_factory=list)  # notebooks absent from submitted/ (scored 0)
    detail: str = ""
    # "pNN kernel" -> how many of its cases ran on a GPU, were simulated, were only compiled (grader.verified),
    # read from the autograded notebooks
    checked: dict[str, dict[str, int]] = field(default_factory=dict)


def judged_counts(path: Path) -> dict[str, dict[str, int]]:
    """The judge's counts in one autograded notebook, "pNN kernel" -> counts; {} where it has none."""
    import nbformat

    from grader.nbgrader.records import check_cells, judge_record

    try:
        notebook = nbformat.read(path, as_version=4)
    except (OSError, ValueError):
        return {}
    found = {}
    for cell, puzzle, kernel in check_cells(notebook):
        judge = judge_record(cell)
        if judge is not None and "checked" in judge:
            found[f"p{puzzle} {kernel}"] = {str(k): n for k, n in judge["checked"].items()}
    return found


def statuses(course: Path, assignment: str, url: str | None = None) -> dict[str, StudentState]:
    """Every student's state for ``assignment``: those with a folder in ``submitted/`` and those the
    gradebook knows. Graded means a submission in the gradebook whose every grade cell has a score
    and whose autograded notebooks are all on disk; a submission without that is failed, or not graded
    where the last autograde was refused (then so is a submission the gradebook lacks)."""
    from nbgrader.api import Gradebook, MissingEntry

    submitted = set(submitted_students(course, assignment))
    found: dict[str, StudentState] = {}
    with Gradebook(url or db_url(course)) as gradebook:
        try:
            notebooks = [n.name for n in gradebook.find_assignment(assignment).notebooks]
        except MissingEntry:
            notebooks = None
        known = {s.id for s in gradebook.students}
        for student in sorted(submitted | known):
            if notebooks is None:
                detail = f"the gradebook has no assignment {assignment} (run nbgrader generate_assignment)"
                state = MISSING if student in submitted else NOT_SUBMITTED
                found[student] = StudentState(student, state, detail=detail)
                continue
            try:
                submission = gradebook.find_submission(assignment, student)
            except MissingEntry:
                state = MISSING if student in submitted else NOT_SUBMITTED
                detail = "not in the gradebook" if student in submitted else "nothing in submitted/"
                found[student] = StudentState(student, state, detail=detail)
                continue
            absent = [n for n in notebooks if not (course / "submitted" / student / assignment / f"{n}.ipynb").exists()]
            unscored, unwritten, checked = [], [], {}
            for notebook in submission.notebooks:
                if any(g.auto_score is None and g.manual_score is None for g in notebook.grades):
                    unscored.append(notebook.name)
                autograded = course / "autograded" / student / assignment / f"{notebook.name}.ipynb"
                if notebook.name not in absent and not autograded.exists():
                    unwritten.append(notebook.name)
                elif notebook.name not in absent:
                    checked.update(judged_counts(autograded))
            state = StudentState(student, GRADED, submission.score, submission.max_score, absent, checked=checked)
            if unscored or unwritten:
                state.state = FAILED
                parts = [f"no score yet in {', '.join(unscored)}"] if unscored else []
                parts += [f"no autograded copy of {', '.join(unwritten)}"] if unwritten else []
                state.detail = "; ".join(parts)
            elif absent:
                state.detail = f"not submitted (0 points): {', '.join(absent)}"
            found[student] = state
    why = recorded_refusal(course, assignment)
    for state in found.values():
        if why and state.student in submitted and state.state in (FAILED, MISSING):
            state.state, state.detail = REFUSED, f"refused ({why})"
    return found


# ----------------------------------------------------------------------------------- one shard


def autograde_student(course: Path, assignment: str, student: str, shard: str) -> tuple[int, float]:
    """``nbgrader autograde ASSIGNMENT --student STUDENT --force`` with its output in the student's log."""
    log = log_path(course, assignment, student)
    log.parent.mkdir(parents=True, exist_ok=True)
    # Hermetic (grader.hermetic): nbgrader runs JudgeChecks, which decides the grade; the course folder it starts
    # in is found by nbgrader as its config folder, not put on sys.path.
    arguments = ["autograde", assignment, "--student", glob.escape(student), "--force"]
    command = hermetic.command("nbgrader", *arguments, cwd=str(course))
    started = time.monotonic()
    with open(log, "w") as handle:
        stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
        gpus = os.environ.get("CUDA_VISIBLE_DEVICES", "(unset)")
        handle.write(f"# {stamp} host {socket.gethostname()} shard {shard} CUDA_VISIBLE_DEVICES={gpus}\n")
        handle.write(f"# nbgrader {' '.join(arguments)} (hermetic: python -I)\n")
        handle.flush()
        environment = hermetic.environment(cwd=str(course))
        child = subprocess.Popen(command, cwd=course, env=environment, stdout=handle, stderr=subprocess.STDOUT)

        def stop(signum: int, _frame: object) -> None:  # Slurm's scancel or a Ctrl-C: stop the child too
            child.send_signal(signum)
            child.wait()
            sys.exit(128 + signum)

        previous = signal.signal(signal.SIGTERM, stop)
        try:
            code = child.wait()
        finally:
            signal.signal(signal.SIGTERM, previous)
        seconds = time.monotonic() - started
        handle.write(f"# exit {code} after {seconds:.1f} s\n")
    return code, seconds


def run_shard(course: Path, assignment: str, index: int, count: int, regrade: bool = False) -> int:
    students = shard_students(submitted_students(course, assignment), index, count)
    shard = f"{index}/{count}"
    gpus = os.environ.get("CUDA_VISIBLE_DEVICES", "(unset)")
    print(f"shard {shard} of {assignment}, CUDA_VISIBLE_DEVICES={gpus}: {len(students)} student(s)", flush=True)
    before = statuses(course, assignment) if students and not regrade else {}
    failed = 0
    for student in students:
        if student in before and before[student].state == GRADED:
            print(f"  {plain(student)}: already graded ({before[student].score:g}), skipped", flush=True)
            continue
        code, seconds = autograde_student(course, assignment, student, shard)
        now = statuses(course, assignment)[student]
        if now.state == GRADED and code == 0:
            cases = verified.text(verified.total(now.checked.values()))
            print(f"  {plain(student)}: graded {now.score:g}/{now.max_score:g} in {seconds:.0f} s; {cases}", flush=True)
        else:
            failed += 1
            why = now.detail or f"nbgrader exited {code}"
            shown = plain(f"  {student}: FAILED ({why}; exit {code}): {log_path(course, assignment, student)}")
            print(shown, flush=True)
    print(f"shard {shard}: done, {failed} failed", flush=True)
    return 1 if failed else 0


# ----------------------------------------------------------------------- several shards, one host


def run_shards(course: Path, assignment: str, gpus: list[str] | None, count: int, regrade: bool) -> int:
    """One ``autograde-shard`` process per GPU (or ``count`` of them, unpinned), all at once."""
    slots = gpus if gpus else [None] * count
    shard_log(course, assignment, 0).parent.mkdir(parents=True, exist_ok=True)
    running = []
    for index, gpu in enumerate(slots):
        arguments = ["autograde-shard", assignment, "--course", str(course), "--shard", str(index)]
        arguments += ["--shards", str(len(slots))] + (["--regrade"] if regrade else [])
        command = hermetic.command("grader", *arguments)
        env = hermetic.environment({**os.environ, **({"CUDA_VISIBLE_DEVICES": gpu} if gpu is not None else {})})
        log = shard_log(course, assignment, index)
        with open(log, "w") as handle:
            running.append(
                (index, gpu, log, subprocess.Popen(command, env=env, stdout=handle, stderr=subprocess.STDOUT))
            )
        where = f" on GPU {gpu}" if gpu is not None else ""
        print(f"shard {index}/{len(slots)}{where}: {log}", flush=True)
    worst = 0
    for index, _gpu, log, process in running:
        code = process.wait()
        worst = max(worst, code)
        print(f"shard {index}/{len(slots)} exited {code}", flush=True)
        if code:
            print(log.read_text(), end="", flush=True)
    return show_status(course, assignment, as_json=False) if worst == 0 else worst


# ------------------------------------------------------------------------------------- status


def show_status(course: Path, assignment: str, as_json: bool) -> int:
    found = statuses(course, assignment)
    if as_json:
        print(json.dumps({name: asdict(state) for name, state in found.items()}, indent=1))
    else:
        off_gpu = 0
        for state in found.values():
            if state.state == REFUSED:  # not graded: refused (no GPU; say --JudgeChecks.device=cpu)
                print(f"{plain(state.student):<24} {tr(f'{state.state}: {state.detail}')}")
                continue
            score = "" if state.score is None else f"{state.score:g}/{state.max_score:g}"
            print(f"{plain(state.student):<24} {state.state:<14} {score:<9} {plain(state.detail)}".rstrip())
            if state.checked:
                print(f"    {verified.text(verified.total(state.checked.values()))}")
            # each kernel with a case that did not run on a GPU, by name
            elsewhere = {k: c for k, c in state.checked.items() if c.get(verified.GPU, 0) < sum(c.values())}
            off_gpu += bool(elsewhere)
            for kernel, checked in elsewhere.items():
                print(f"      {verified.line(kernel, checked)}")
        states = (GRADED, FAILED, REFUSED, MISSING, NOT_SUBMITTED)
        counts = {s: sum(1 for v in found.values() if v.state == s) for s in states}
        print(", ".join(f"{n} {s}" for s, n in counts.items() if n or s != REFUSED))
        if off_gpu:
            print(f"{off_gpu} student(s) have cases that did not run on a GPU (simulated on the CPU or only compiled)")
    return 0 if all(s.state in (GRADED, NOT_SUBMITTED) for s in found.values()) else 1


# ---------------------------------------------------------------------------------- arguments


def course_dir(args: argparse.Namespace) -> Path:
    course = (args.course or Path.cwd()).resolve()
    if not (course / "nbgrader_config.py").is_file():
        raise SystemExit(f"grader: no nbgrader_config.py in {course}: run from the course directory or give --course")
    return course


def common(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("assignment", metavar="ASSIGNMENT", help="the assignment's name, e.g. ps1")
    p.add_argument("--course", type=Path, metavar="DIR", help="the course directory (default: this folder)")
    return p


def sandbox_ready(no_sandbox: bool) -> bool:
    """Before grading anyone: the sandbox works here, or the instructor said to grade unconfined."""
    from grader.processes import sandbox

    if no_sandbox:
        os.environ[sandbox.ENV] = "off"  # inherited by every nbgrader autograde, read by JudgeChecks
        return True
    refusal = sandbox.policy(hidden_cases=True).refusal
    if refusal:
        print(f"grader: {refusal}", file=sys.stderr)
    return not refusal


def device_ready(device: str | None) -> bool:
    """Before grading anyone: a CUDA GPU is usable here, or the instructor said to grade on the CPU."""
    chosen = settings.grading_device(device)
    if chosen not in settings.GRADING_DEVICES:
        print(f"grader: {settings.DEVICE}={chosen}: give {' or '.join(settings.GRADING_DEVICES)}", file=sys.stderr)
        return False
    os.environ[settings.DEVICE] = chosen  # inherited by every nbgrader autograde, read by JudgeChecks
    refusal = device_refusal(chosen)
    if refusal:
        print(f"grader: {tr(refusal)} {tr('Nobody was graded.')}", file=sys.stderr)
    return not refusal


def ready(args: argparse.Namespace) -> bool:
    """sandbox_ready and device_ready; in a course folder, a refusal is noted for autograde-status
    (placement.record_refusal) and a go-ahead removes the note."""
    why = ""
    if not sandbox_ready(args.no_sandbox):
        why = "no sandbox; say --no-sandbox"
    elif not device_ready(args.device):
        chosen, words = settings.grading_device(args.device), " or ".join(settings.GRADING_DEVICES)
        why = (
            f"no GPU; say {CPU_HINT}"
            if chosen in settings.GRADING_DEVICES
            else f"{settings.DEVICE}={chosen}; give {words}"
        )
    course = (args.course or Path.cwd()).resolve()
    if (course / "nbgrader_config.py").is_file() and why:
        record_refusal(course, args.assignment, why)
    elif (course / "nbgrader_config.py").is_file():
        clear_refusal(course, args.assignment)
    return not why


def instructor_options(p: argparse.ArgumentParser) -> None:
    """The instructor's options the shards take (--no-sandbox, --device), from settings.INSTRUCTOR_OPTIONS: the
    same words and defaults as nbgrader's JudgeChecks traits, which each autograde they start reads."""
    for option in settings.INSTRUCTOR_OPTIONS:
        if option.flag:
            option.add_to(p.add_argument)


def shard_parser() -> argparse.ArgumentParser:
    p = common(argparse.ArgumentParser(prog="python -m grader autograde-shard", description=__doc__.split("\n")[0]))
    p.add_argument("--shard", type=int, required=True, metavar="I", help="this shard's number, 0 to N-1")
    p.add_argument("--shards", type=int, required=True, metavar="N", help="how many shards the students are dealt into")
    p.add_argument("--regrade", action="store_true", help="grade again the students already graded")
    instructor_options(p)
    return p


def shard_main(argv: Sequence[str]) -> int:
    p = shard_parser()
    args = p.parse_args(list(argv))
    try:
        shard_students([], args.shard, args.shards)
    except ValueError as error:
        p.error(str(error))
    if not ready(args):
        return 2
    return run_shard(course_dir(args), args.assignment, args.shard, args.shards, args.regrade)


def shards_parser() -> argparse.ArgumentParser:
    p = common(argparse.ArgumentParser(prog="python -m grader autograde-shards", description=__doc__.split("\n")[0]))
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--gpus", metavar="LIST", help="comma-separated GPU indices: one shard per GPU")
    which.add_argument("--shards", type=int, metavar="N", help="N shards at once, no GPU pinned (e.g. on a CPU)")
    p.add_argument("--regrade", action="store_true", help="grade again the students already graded")
    instructor_options(p)
    return p


def shards_main(argv: Sequence[str]) -> int:
    p = shards_parser()
    args = p.parse_args(list(argv))
    if not ready(args):
        return 2
    gpus = [g.strip() for g in args.gpus.split(",") if g.strip()] if args.gpus else None
    if (gpus is not None and not gpus) or (args.shards is not None and args.shards < 1):
        p.error("name at least one GPU or one shard")
    return run_shards(course_dir(args), args.assignment, gpus, args.shards or 0, args.regrade)


def status_main(argv: Sequence[str]) -> int:
    p = common(argparse.ArgumentParser(prog="python -m grader autograde-status", description=__doc__.split("\n")[0]))
    p.add_argument("--json", action="store_true", help="one JSON object: student -> state, score, detail")
    args = p.parse_args(list(argv))
    return show_status(course_dir(args), args.assignment, args.json)
