"""The grader as a pytest plugin: one test item per (kernel, case) of each graded puzzle file.

Hooks, each with one job:
  pytest_addoption          the "grader" option group
  pytest_configure          markers p01..p10 and gpu; the run's state in config.stash, from the front end's
                            typed request (grader.frontends.grading) or from pytest's --grade flags
  pytest_pycollect_makemodule  a graded puzzle file becomes a PuzzleFile
  pytest_collection_finish  each puzzle's child process learns which cases were selected
  pytest_runtest_protocol   prints the verdict line of each case after it ran
  pytest_report_teststatus  hides pytest's own progress letters for graded cases
  pytest_terminal_summary   the bench table
  pytest_sessionfinish      the runs to the front end's sink; the JSON file (--json); child processes stopped
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from grader import verified
from grader.discover import chosen_kernels, course_root
from grader.frontends import render as report
from grader.frontends.grading import REQUEST_PLUGIN
from grader.i18n import tr
from grader.outcome import CaseResult, Status
from grader.processes.supervisor import PuzzleRun
from grader.settings import OPTIONS, PYTEST, GradeOptions, JudgeRequest, hidden_cases_file


@dataclass
class GradeState:
    """Everything the plugin keeps for one pytest session."""

    targets: dict[Path, str]  # file graded -> puzzle id
    spec_dir: Path
    options: GradeOptions  # the request's, or the --grade-* flags
    sink: Any = None  # where each result goes as it comes, and the runs at the end (grader.processes.stream.Writer)
    runs: dict[Path, PuzzleRun] = field(default_factory=dict)
    results: list[CaseResult] = field(default_factory=list)
    announced: set[tuple[str, str]] = field(default_factory=set)
    # An error printed in full (report.repeat_key) -> "kernel case" that printed it; a later case of the same
    # kernel that repeats one waits in ``folded``, and they print as one line (report.repeated_line)
    shown: dict[tuple[str, ...], str] = field(default_factory=dict)
    folded: list[CaseResult] = field(default_factory=list)
    # file graded -> (kernel, case) of each large case a narrowed check without a GPU did not compile (quick())
    not_compiled: dict[Path, list[tuple[str, str]]] = field(default_factory=dict)


STATE = pytest.StashKey[GradeState]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("grader", "tilelang-course grader")
    group.addoption(
        "--grade",
        action="append",
        default=[],
        metavar="ID=PATH",
        help="grade the kernels in PATH against puzzle ID (repeatable)",
    )
    for option in OPTIONS:  # the same table as python -m grader's flags (grader.settings)
        if option.pytest:
            option.add_to(group.addoption, PYTEST)


def pytest_configure(config: pytest.Config) -> None:
    for number in range(1, 11):
        config.addinivalue_line("markers", f"p{number:02d}: puzzle {number:02d}")
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skipped without one)")
    carrier = config.pluginmanager.get_plugin(REQUEST_PLUGIN)
    if carrier is not None:  # a front end's typed request (grader.frontends.grading.run)
        pairs = list(carrier.request.targets)
        options, sink = carrier.request.options, carrier.sink
    else:  # pytest --grade ID=PATH --grade-*: the same options, from pytest's own flags
        pairs = [entry.partition("=")[::2] for entry in config.getoption("grade", default=[]) or []]
        options, sink = GradeOptions.from_parsed(config, PYTEST), None
    targets = {Path(path).resolve(): puzzle_id for puzzle_id, path in pairs}
    try:
        options.block_params()
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    config.stash[STATE] = GradeState(targets, options.spec_dir or course_root() / "solutions", options, sink)


def _state(config: pytest.Config) -> GradeState | None:
    return config.stash.get(STATE, None)


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    # A plain folder, never a Package: pytest imports a package's __init__.py to look for setup_module, and the
    # graded file's folder is the learner's.
    state = _state(parent.config)
    if state is not None and state.targets:
        return pytest.Dir.from_parent(parent, path=path)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    # Claim the graded file before pytest's Python collector imports it as a test module: that
    # would load torch and TileLang into this process and break on a learner's syntax error.
    state = _state(parent.config)
    if state is not None and module_path.resolve() in state.targets:
        return PuzzleFile.from_parent(parent, path=module_path)
    return None


class PuzzleFile(pytest.File):
    def collect(self):
        state = _state(self.config)
        puzzle_id = state.targets[self.path.resolve()]
        spec_file = next(state.spec_dir.glob(f"p{puzzle_id}_*.py"), None)
        if spec_file is None:
            raise pytest.UsageError(f"there is no puzzle {puzzle_id} in {state.spec_dir}")
        options = state.options
        run = PuzzleRun(JudgeRequest(puzzle_id, str(spec_file), str(self.path), options))
        state.runs[self.path.resolve()] = run
        description = run.describe()
        if description is None:
            raise CollectError(f"could not load puzzle {puzzle_id}: {run.startup_problem}")
        cases = {n.strip() for n in options.cases.split(",") if n.strip()}
        names = [kernel["function"] for kernel in description["kernels"]]
        wanted = set(chosen_kernels(names, options.kernels, options.kernels_exact))
        quick = is_quick(options, run.mode)
        for kernel in description["kernels"]:
            if kernel["function"] not in wanted:
                continue
            for case in kernel["cases"]:
                if cases and case["name"] not in cases:
                    continue
                if quick and not cases and not case.get("simulate", True) and not case.get("unfit"):
                    state.not_compiled.setdefault(self.path.resolve(), []).append((kernel["function"], case["name"]))
                    continue
                item = CaseItem.from_parent(
                    self,
                    name=f"{kernel['function']}[{case['name']}]",
                    kernel=kernel["function"],
                    case=case["name"],
                    sizes=case["sizes"],
                )
                item.add_marker(f"p{puzzle_id}")
                yield item


def is_quick(options: GradeOptions, mode: str) -> bool:
    """A learner's narrowed check on a machine without a CUDA GPU (-k or --case, and the judge simulates): it
    simulates the small cases and leaves the cases too large to simulate uncompiled, so that their compiles do not
    hold the verdict back. A case named by --case is compiled (it was asked for); --full, a whole puzzle,
    --device compile, a GPU, a timing or profiling run, and an instructor's run with hidden cases compile every
    case."""
    narrowed = bool(options.kernels.strip() or options.cases.strip())
    timing = options.bench or bool(options.profile) or bool(options.params)
    return narrowed and not options.full and mode == "cpu" and not timing and hidden_cases_file() is None


def compile_all_command(puzzle_id: str, source: Path, options: GradeOptions) -> str:
    """The command that grades what a quick check graded, with the large cases compiled too (--full)."""
    import shlex

    words = ["python", "-m", "grader", puzzle_id]
    if source.resolve() != _puzzle_file(puzzle_id):
        words += ["--file", _shown(source)]
    if options.kernels:
        words += ["-k", options.kernels] + (["--exact"] if options.kernels_exact else [])
    if options.cases:
        words += ["--case", options.cases]
    if options.device != "auto":
        words += ["--device", options.device]
    if options.arch:
        words += ["--arch", options.arch]
    return " ".join(shlex.quote(word) for word in [*words, "--full"])


def _puzzle_file(puzzle_id: str) -> Path | None:
    found = next((course_root() / "puzzles").glob(f"p{puzzle_id}_*.py"), None)
    return found.resolve() if found is not None else None


class CollectError(Exception):
    pass


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A puzzle that cannot be loaded at all says why in one line (pytest's --tb=no hides it)."""
    if report.failed and "CollectError" in str(report.longrepr):
        message = str(report.longrepr).strip().splitlines()[-1].removeprefix("E").strip()
        print(tr(f"grader: {message.removeprefix('grader.frontends.plugin.CollectError: ')}"), file=sys.stderr)


class CaseFailed(Exception):
    def __init__(self, result: CaseResult):
        super().__init__(report.message(result))
        self.result = result


class CaseItem(pytest.Item):
    def __init__(self, *, kernel: str, case: str, sizes: dict[str, int], **kwargs: Any):
        super().__init__(**kwargs)
        self.kernel, self.case, self.sizes = kernel, case, sizes
        self.result: CaseResult | None = None

    def runtest(self) -> None:
        run = _state(self.config).runs[self.path.resolve()]
        result = run.result(self.kernel, self.case)
        if not result.sizes:
            result.sizes = dict(self.sizes)
        self.result = result
        self.user_properties.append(("status", str(result.status)))  # for pytest_report_teststatus
        state = _state(self.config)
        state.results.append(result)
        if state.sink is not None:
            state.sink.result(result)
        # built but its numbers unchecked (too large to simulate, or a construct the simulator lacks): exit 3
        if result.status in (Status.COMPILED, Status.NOT_APPLICABLE, Status.UNSUPPORTED):
            pytest.skip(report.message(result))
        if result.status != Status.PASSED:
            raise CaseFailed(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailed):
            verbose = _state(self.config).options.verbose
            return "\n".join(report.case_lines(excinfo.value.result, verbose))
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.kernel}[{self.case}]"


def pytest_collection_finish(session: pytest.Session) -> None:
    state = _state(session.config)
    if state is None:
        return
    chosen: dict[Path, list[tuple[str, str]]] = {}
    for item in session.items:
        if isinstance(item, CaseItem):
            chosen.setdefault(item.path.resolve(), []).append((item.kernel, item.case))
    for path, run in state.runs.items():
        run.set_plan(chosen.get(path, []))
    if not session.items and not state.not_compiled:
        for line in unmatched_lines(session.config, state):
            print(tr(line), file=sys.stderr)


def unmatched_lines(config: pytest.Config, state: GradeState) -> list[str]:
    """When -k or --case matched nothing: say so, and list the names that would have matched (public
    cases only), one line per puzzle."""
    options = state.options
    asked = [(flag, value) for flag, value in (("-k", options.kernels), ("--case", options.cases)) if value]
    if not asked:
        return []
    lines = []
    for run in state.runs.values():
        kernels = {
            k["function"]: [c["name"] for c in k["cases"] if not c["name"].startswith("hidden_")]
            for k in (run.description or {}).get("kernels", [])
        }
        if not kernels:
            continue
        matched = chosen_kernels(list(kernels), options.kernels, options.kernels_exact)
        said = " ".join(f"{flag} {value!r}" for flag, value in asked)
        puzzle = (run.description or {}).get("id", "")
        if not matched:
            names = f"its kernels: {', '.join(kernels)}"
        else:
            names = "; ".join(f"the cases of {k}: {', '.join(kernels[k])}" for k in matched[:3])
            names += "; ..." if len(matched) > 3 else ""
        lines.append(f"grader: nothing in puzzle {puzzle} matched {said}; {names}")
    return lines


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    if report.when == "call" and report.nodeid and _is_graded(report, config):
        if report.passed:
            return "passed", "", "PASSED"
        if report.skipped:
            status = dict(report.user_properties).get("status")
            return "skipped", "", {Status.NOT_APPLICABLE: "N/A", Status.UNSUPPORTED: "NOSIM"}.get(status, "BUILT")
        return "failed", "", "FAILED"
    return None


def _is_graded(report: pytest.TestReport, config: pytest.Config) -> bool:
    state = _state(config)
    return state is not None and any(str(path.name) in report.nodeid for path in state.targets)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    yield
    if isinstance(item, CaseItem) and item.result is not None and not _state(item.config).options.quiet:
        _print_case(item, nextitem)


def _print_case(item: CaseItem, nextitem: pytest.Item | None = None) -> None:
    """The case's lines; an error that repeats one printed in full above is held back, and the kernel's
    repeats print as one line before its next other verdict or after its last case."""
    state = _state(item.config)
    writer = item.config.pluginmanager.get_plugin("terminalreporter")
    if writer is None:
        return
    result = item.result
    key = report.repeat_key(str(item.path), result)
    if key is not None and key in state.shown:
        state.folded.append(result)
    else:
        _print_folded(item, writer)
        _announce(item, writer, result)
        colour = {"green": result.status == Status.PASSED, "yellow": result.status == Status.COMPILED}
        lines = report.case_lines(result, state.options.verbose)
        writer.write_line(lines[0], red=not any(colour.values()), **colour)
        for line in lines[1:]:
            writer.write_line(line)
        if key is not None:
            state.shown[key] = f"{result.kernel} {result.case}"
    if not (isinstance(nextitem, CaseItem) and nextitem.path == item.path and nextitem.kernel == item.kernel):
        _print_folded(item, writer)


def _print_folded(item: CaseItem, writer: Any) -> None:
    state = _state(item.config)
    if not state.folded:
        return
    first = state.folded[0]
    _announce(item, writer, first)
    printed = state.shown[report.repeat_key(str(item.path), first)]
    writer.write_line(report.repeated_line(state.folded, printed), red=True)
    state.folded = []


def _announce(item: CaseItem, writer: Any, result: CaseResult) -> None:
    """The puzzle's heading before its first line, the kernel's name before the kernel's first line."""
    state = _state(item.config)
    run = state.runs[item.path.resolve()]
    puzzle_key = (str(item.path), "")
    if puzzle_key not in state.announced:
        state.announced.add(puzzle_key)
        title = (run.description or {}).get("title", "")
        writer.write_line("")
        writer.write_line(tr(f"puzzle {result.puzzle} · {title} — {_shown(item.path)} — {run.device}"), bold=True)
        if run.isolation:
            writer.write_line(tr(run.isolation), yellow=True)
    kernel_key = (str(item.path), result.kernel)
    if kernel_key not in state.announced:
        state.announced.add(kernel_key)
        writer.write_line(f" {result.kernel}")


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


EXPLAIN_FOLDER = "explain"  # where --explain writes its pages, under the folder the grader was started from


def explained_lines(result: CaseResult) -> list[str]:
    """--explain's steps as text, and the same view written as an HTML page whose path the last line names."""
    from grader.frontends import explain_view

    explanation = result.explanation
    lines = explain_view.text_lines(explanation)
    if explanation.steps:
        block = "_".join(str(b) for b in explanation.block)
        name = f"p{result.puzzle}_{explanation.kernel}_{explanation.case}_block{block}.html"
        path = Path(EXPLAIN_FOLDER) / re.sub(r"[^A-Za-z0-9_.-]", "_", name)
        path.parent.mkdir(exist_ok=True)
        path.write_text(explain_view.html_page(explanation), encoding="utf-8")
        lines.append(tr(f"the same view, step by step with pictures, in a browser: {path.resolve()}"))
    return lines


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = _state(config)
    if state is None or state.options.quiet:  # the front end renders the results itself
        return
    if not state.results:
        for line in report.not_compiled_lines(_runs(state)):  # a quick check that had only large cases to grade
            terminalreporter.write_line(tr(line), yellow=True)
        return
    lines = report.bench_lines(state.results)
    if lines:
        terminalreporter.write_sep("-", "bench")
        for line in lines:
            terminalreporter.write_line(tr(line))
    lines = report.profile_lines(state.results)
    if lines:
        terminalreporter.write_sep("-", "profile")
        for line in lines:
            terminalreporter.write_line(tr(line))
    for result in state.results:
        if result.explanation is not None:
            terminalreporter.write_sep("-", "explain")
            for line in explained_lines(result):
                terminalreporter.write_line(line)
    arch = next((run.arch for run in state.runs.values() if run.arch), "sm_90a")
    for line in report.verified_lines(state.results):
        terminalreporter.write_line(tr(line), yellow=True)
    for line in report.not_compiled_lines(_runs(state)):
        terminalreporter.write_line(tr(line), yellow=True)
    unfit = [r for r in state.results if r.status == Status.NOT_APPLICABLE]
    if unfit:
        terminalreporter.write_line(
            tr(
                f"{len(unfit)} case(s) cannot run on {arch} at any block sizes the course has: they count as not "
                "applicable, neither passed nor failed."
            )
        )


def unchecked_cases(config: pytest.Config) -> int:
    """How many selected cases had their numbers unchecked: only compiled, or left uncompiled by a quick check
    (the CLI's exit status 3 when nothing failed)."""
    state = _state(config)
    if state is None:
        return 0
    skipped = sum(len(cases) for cases in state.not_compiled.values())
    return verified.unchecked(verified.counts(state.results)) + skipped


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = _state(session.config)
    if state is None:
        return
    for run in state.runs.values():
        run.close()
    runs = _runs(state)
    carrier = session.config.pluginmanager.get_plugin(REQUEST_PLUGIN)
    if carrier is not None:
        carrier.unchecked = unchecked_cases(session.config)
    if state.sink is not None:
        state.sink.finished(runs)
    if state.options.json:
        report.write_json(Path(state.options.json), report.to_json(state.results, runs))


def _runs(state: GradeState) -> list[dict[str, Any]]:
    """The JSON's ``runs``: one entry per graded file."""
    runs = []
    for source, puzzle_id in state.targets.items():
        run = state.runs.get(source)
        skipped = state.not_compiled.get(source, [])
        runs.append(
            {
                "puzzle": puzzle_id,
                "file": str(source),
                "device": run.device if run else "",
                "startup_seconds": run.timings if run else {},
                "isolation": run.isolation if run else "",
                # kernel -> how many of its cases ran on a GPU, were simulated, were only compiled
                "checked": verified.per_kernel(r for r in state.results if Path(r.file).resolve() == source),
                # the large cases a quick check (is_quick) did not compile, and the command that compiles them
                "not_compiled": [{"kernel": kernel, "case": case} for kernel, case in skipped],
                "compile_all": compile_all_command(puzzle_id, source, state.options) if skipped else "",
            }
        )
    return runs
