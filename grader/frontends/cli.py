"""`python -m grader [ID ...]`: the flags as a typed request, graded here by grader.frontends.grading.run (whose
docstring gives the exit codes).

A usage error (an unknown puzzle, kernel or case, a file Python cannot parse) is found from the files' text
(``ast``, never an import) before pytest, torch or any grading process starts, and said in one line.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import os
import signal
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from grader.discover import (
    CELL_END,
    chosen_kernels,
    course_root,
    declared_cases,
    normalize_id,
    puzzle_files,
    puzzle_id_of,
)
from grader.frontends import grading
from grader.frontends.grading import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from grader.i18n import hint_lines, tr
from grader.settings import CLI, OPTION, OPTIONS, GradeOptions, GradeRequest, hidden_cases_file
from grader.settings import parse_params as _parse_params


class UsageError(Exception):
    pass


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m grader",
        description="Grade TileLang puzzle kernels: build, run on fresh inputs, compare with torch.",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="puzzle ids such as 08 (default: every puzzle present)")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--solutions", action="store_true", help="grade solutions/ instead of puzzles/")
    source.add_argument("--file", type=Path, metavar="PATH", help="grade the kernels defined in PATH")
    for option in OPTIONS:
        if option.cli:
            option.add_to(p.add_argument, CLI)
    p.add_argument(
        "--hint",
        metavar="KERNEL",
        help="print a hint for KERNEL of the named puzzle instead of grading (level 1 says why; each level says more)",
    )
    p.add_argument(
        "--level",
        type=int,
        metavar="N",
        help="with --hint: the hint's tier, from 1 up to the last, closest to the answer",
    )
    p.add_argument(
        "--watch",
        action="store_true",
        help="stay running: regrade the file's changed kernels every time it is saved (one puzzle)",
    )
    return p


def targets(args: argparse.Namespace, root: Path) -> list[tuple[str, Path]]:
    """(puzzle id, file to grade) pairs, or UsageError with a sentence for the learner."""
    ids = []
    for text in args.ids:
        puzzle_id = normalize_id(text)
        if puzzle_id is None:
            raise UsageError(f"'{text}' is not a puzzle id: use a number such as 08")
        ids.append(puzzle_id)
    if args.memory_limit_gb < 0:
        raise UsageError("--memory-limit takes a number of GB, or 0 for no limit")
    if args.repeat < 1:
        raise UsageError("--repeat takes a number of repetitions, 1 or more")
    if args.repeat != OPTION["repeat"].default and not args.bench:
        raise UsageError("--repeat sets how often --bench times each figure: add --bench")
    if args.static and not args.profile:
        raise UsageError("--static goes with --profile KERNEL, e.g. python -m grader 08 --profile gemv --static")
    if args.profile and len(ids) != 1:
        raise UsageError(f"--profile wants one puzzle id, e.g. python -m grader 08 --profile {args.profile}")
    if args.block and not args.explain:
        raise UsageError("--block picks the block --explain shows: add --explain KERNEL")
    if args.explain and len(ids) != 1 and args.file is None:
        raise UsageError(f"--explain wants one puzzle id, e.g. python -m grader 08 --explain {args.explain}")
    if args.params:
        if not args.bench and not args.profile:
            raise UsageError("--param changes the block parameters of the timed cases: add --bench")
        parse_params(args.params)
    if args.save_failures is not None and args.save_failures.exists() and not args.save_failures.is_dir():
        raise UsageError(f"--save-failures wants a folder, and {args.save_failures} is a file")
    if args.file is not None:
        if not args.file.is_file():
            raise UsageError(f"there is no file {args.file}")
        reference = (root / "solutions").resolve()
        linked_in = args.file.resolve().is_relative_to(reference) and not args.file.absolute().is_relative_to(reference)
        if args.file.is_symlink() or linked_in:
            # A repository cloned for grading keeps its links: one could grade the course's reference, or a
            # classmate's file, under the learner's name.
            raise UsageError(f"{args.file} is a symbolic link (or lies behind one): grade the file itself")
        puzzle_id = ids[0] if ids else puzzle_id_of(args.file)
        if puzzle_id is None or len(ids) > 1:
            raise UsageError("with --file, name exactly one puzzle id, e.g. python -m grader 08 --file my_p08.py")
        return [(puzzle_id, args.file)]
    folder = root / ("solutions" if args.solutions else "puzzles")
    present = puzzle_files(folder)
    if not ids:
        if not present:
            raise UsageError(f"no puzzles found in {folder}")
        return sorted(present.items())
    missing = [i for i in ids if i not in present]
    if missing:
        known = ", ".join(sorted(present)) or "none"
        raise UsageError(f"no puzzle {', '.join(missing)} in {folder} (present: {known})")
    return [(i, present[i]) for i in ids]


def check_names(
    args: argparse.Namespace, chosen: list[tuple[str, Path]], root: Path, env: Mapping[str, str] | None = None
) -> None:
    """UsageError for a kernel (-k, --explain, --profile) or a case (--case) the puzzle does not have, and for a
    graded file Python cannot parse: read from the files' text with ``ast``, so it is said before any grading
    process starts (nothing is imported, least of all the graded file)."""
    if len(chosen) == 1 and not args.watch:
        syntax_error(chosen[0][1])
    specs = puzzle_files(root / "solutions")
    declared: dict[str, tuple[str, ...] | None] = {}
    for puzzle_id, _ in chosen:
        try:
            found = declared_cases(specs[puzzle_id].read_text()) if puzzle_id in specs else {}
        except (OSError, SyntaxError, ValueError):
            found = {}
        if not found:
            return  # the course's own file says nothing readable here: the grader says what it finds
        declared.update(found)
    kernels = list(declared)
    ids = ", ".join(puzzle_id for puzzle_id, _ in chosen)
    listed = ", ".join(kernels)
    for name in _names(args.kernels):
        if not chosen_kernels(kernels, name, args.kernels_exact):
            said = f"-k {name} --exact" if args.kernels_exact else f"-k {name}"
            raise UsageError(f"{said}: puzzle {ids} has no kernel of that name (its kernels: {listed})")
    for flag, value in (("--explain", args.explain), ("--profile", args.profile)):
        unknown = [name for name in _names(value) if name not in kernels]
        if unknown:
            raise UsageError(f"{flag} {', '.join(unknown)}: puzzle {ids} has no such kernel (its kernels: {listed})")
    selected = chosen_kernels(kernels, args.kernels, args.kernels_exact)
    if args.explain:
        selected = [k for k in selected if k == args.explain]
    if any(declared[k] is None for k in selected):
        return  # some case names are not literals in the course's file: the grader checks them
    for name in _names(args.cases):
        if name.startswith("hidden_") and hidden_cases_file(env) is not None:  # the grading run's environment
            continue
        if not any(name in (declared[k] or ()) for k in selected):
            shown = "; ".join(f"the cases of {k}: {', '.join(declared[k] or ())}" for k in selected[:3])
            raise UsageError(
                f"--case {name}: no case of that name in puzzle {ids}; {shown}" + ("; ..." if len(selected) > 3 else "")
            )


def syntax_error(path: Path) -> None:
    """UsageError naming the line where Python cannot read ``path``. A file made of notebook cells is left to
    the grader: a cell that does not parse costs only its own kernels there."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    if CELL_END in text:
        return
    try:
        ast.parse(text, filename=str(path))
    except SyntaxError as error:
        line = error.lineno or 0
        raise UsageError(
            f"{_shown(path)}:{line}: syntax error: {error.msg}. Python cannot read the file, so none of its "
            f"kernels can be graded: fix line {line} (a bracket left open on an earlier line shows up here too) "
            "and run the grader again"
        ) from None
    except ValueError as error:  # a NUL byte in the source
        raise UsageError(f"{_shown(path)}: Python cannot read the file: {error}") from None


def _names(text: str) -> list[str]:
    return [name.strip() for name in (text or "").split(",") if name.strip()]


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def parse_params(texts: Sequence[str]) -> dict[str, int]:
    """``["BLOCK_N=128", "STAGES=4"]`` to a dict, or UsageError naming the one that is not NAME=INTEGER."""
    try:
        return _parse_params(texts)
    except ValueError as error:
        raise UsageError(str(error)) from None


def grade_options(args: argparse.Namespace) -> GradeOptions:
    """The CLI's flags as GradeOptions (--save-failures made absolute: the judge may not share our folder)."""
    options = GradeOptions.from_parsed(args, CLI)
    if args.solutions:  # the course's own kernels: every case compiled, the large ones too
        options = replace(options, full=True)
    if options.save_failures is not None:
        options = replace(options, save_failures=options.save_failures.resolve())
    return options


def grade_request(args: argparse.Namespace, chosen: list[tuple[str, Path]]) -> GradeRequest:
    """What the command line asks for, typed: grader.frontends.grading.run takes it as it is."""
    return GradeRequest(tuple((puzzle_id, str(path.resolve())) for puzzle_id, path in chosen), grade_options(args))


def request_of(argv: Sequence[str], env: Mapping[str, str] | None = None) -> GradeRequest:
    """``python -m grader ARGV``'s request, or UsageError: for a front end that holds a command line (the tests' warm
    runs), not a person (``--hint`` and ``--watch`` are the command line's own). ``env``: the grading run's
    environment, where a ``--case hidden_N`` is looked for (default: this process's, which the options' defaults,
    $TILELANG_COURSE_ARCH and $TILELANG_COURSE_DEVICE, are read from in either case)."""
    args = parser().parse_args(list(argv))
    chosen = targets(args, course_root())
    check_names(args, chosen, course_root(), env)
    return grade_request(args, chosen)


def run_through(warm: Any, argv: Sequence[str], timeout: float, *, env: dict[str, str], cwd: Path) -> Any:
    """``python -m grader ARGV`` graded as a front end grades (grader.processes.launch.grade_request), through the
    warm grader ``warm``: the check prints its verdict lines; a usage error comes back as the command line says
    it, exit code 2. For the scripts and tests that hold a command line (scripts/bench_grader.py, the tests'
    ``warm_grade``), not for a person (``--hint`` and ``--watch`` are the command line's own)."""
    from grader.processes import launch

    try:
        request = request_of(argv, env)
    except UsageError as error:
        return launch.GraderRun(None, EXIT_USAGE, tr(f"grader: {error}") + "\n", 0.0)
    return launch.grade_request(request, timeout, env=env, cwd=cwd, warm=warm)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.hint is not None or args.level is not None:
        return print_hint(args)
    try:
        chosen = targets(args, course_root())
        check_names(args, chosen, course_root())
    except UsageError as error:
        print(tr(f"grader: {error}"), file=sys.stderr)
        return EXIT_USAGE
    if args.watch:
        return watch(args, chosen)
    with stopped_by_ctrl_c(), json_on_stdout(args):
        return grading.run(grade_request(args, chosen))


@contextlib.contextmanager
def stopped_by_ctrl_c() -> Iterator[None]:
    """While grading, Ctrl-C stops the judges, deletes their temporary folders and exits with one line
    (no pytest banner, no traceback)."""

    error_fd = os.dup(2)  # the terminal itself: pytest may have fd 2 captured when Ctrl-C comes

    def stop(signum: int, frame: object) -> None:
        from grader.processes.supervisor import stop_all

        stop_all()
        sys.stdout.flush()
        line = tr("grader: stopped (Ctrl-C); the cases above were graded, the rest were not")
        os.write(error_fd, f"\n{line}\n".encode())
        os._exit(EXIT_INTERRUPTED)

    previous = signal.signal(signal.SIGINT, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        os.close(error_fd)


@contextlib.contextmanager
def json_on_stdout(args: argparse.Namespace) -> Iterator[None]:
    """``--json -``: the JSON document alone on stdout (for a pipe), the report on stderr."""
    if args.json is None or str(args.json) != "-":
        yield
        return
    with tempfile.TemporaryDirectory(prefix="tilelang-course-json-") as folder:
        args.json = Path(folder) / "results.json"
        try:
            with contextlib.redirect_stdout(sys.stderr):
                yield
        finally:
            if args.json.is_file():
                sys.stdout.write(args.json.read_text())
                sys.stdout.flush()
            args.json = Path("-")


def print_hint(args: argparse.Namespace) -> int:
    """``--hint KERNEL [--level N]``: one tier of a kernel's hints on stdout, or one line on stderr."""
    from grader.hints import HintError, get

    if args.hint is None:
        print(
            "grader: --level goes with --hint KERNEL, e.g. python -m grader 08 --hint gemv --level 2", file=sys.stderr
        )
        return EXIT_USAGE
    if len(args.ids) != 1:
        print(f"grader: --hint wants one puzzle id, e.g. python -m grader 08 --hint {args.hint}", file=sys.stderr)
        return EXIT_USAGE
    try:
        found = get(args.ids[0], args.hint, 1 if args.level is None else args.level)
    except HintError as error:
        print(tr(f"grader: {error}"), file=sys.stderr)
        return EXIT_USAGE
    more = f"python -m grader {found.puzzle_id} --hint {found.kernel} --level {{level}}"
    print("\n".join(hint_lines(found, more=more)))
    return EXIT_OK


def watch(args: argparse.Namespace, chosen: list[tuple[str, Path]]) -> int:
    from grader.frontends.watch import kernel_names, watch

    if len(chosen) != 1:
        print("grader: --watch follows one puzzle: name its id, e.g. python -m grader 08 --watch", file=sys.stderr)
        return EXIT_USAGE
    puzzle_id, path = chosen[0]
    spec = next((course_root() / "solutions").glob(f"p{puzzle_id}_*.py"))
    wanted = chosen_kernels(kernel_names(spec), args.kernels, args.kernels_exact)
    request = grade_request(args, chosen)
    # each save is a quick check of the file watched, --solutions' file too: large cases compile only with --full
    return watch(replace(request, options=replace(request.options, full=args.full)), spec, wanted)
