"""The notebooks' helpers, which learners import as ``grader.nb``: ``%load_ext grader.nb``, ``%puzzle ID``,
``%%puzzle NAME``, check(), bench(), profile(), explain(), hint().

``%%puzzle NAME`` runs its cell as usual and remembers its source under NAME (a re-run replaces
it in place), so the remembered cells, in the order they first ran, are the learner's module.
``check("gemv")`` writes that module to a temporary file (never into the learner's folders), runs
``python -m grader ID --file TMP -k gemv --exact --json TMP.json`` in a child process with a time
limit, prints one verdict per case on stdout and a last line that says whether the kernel passed
(without a GPU: passed in simulation, or compiled), green or red. It does not raise, so Run All runs
every cell; under nbgrader the course's judge regrades every kernel after the notebook ran and scores
it (grader.nbgrader.judge). ``check(..., strict=True)`` raises :class:`CheckFailed` instead, for a
script that wants to stop at the first failure. Nothing goes to stderr: the
child's output is captured, and warnings and log records are held back while a check runs
(nbgrader gives a cell no points for any stderr output).

The remembered cells live on the magics object that IPython's shell holds, not in this module.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import logging
import os
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class

from grader import settings
from grader.discover import CELL_END, normalize_id
from grader.frontends import render
from grader.frontends.cells import cell_line, lines_in_cells
from grader.frontends.render import GREEN, PLAIN, RED
from grader.i18n import hint_lines, tr
from grader.outcome import CaseResult, Status
from grader.processes import launch

TIMEOUT_ENV = settings.CHECK_TIMEOUT  # seconds: the default limit of every check (slow machines)
# Set by the nbgrader config: check() only says it is deferred, and the judge grades every kernel after
# the notebook ran (grader.nbgrader.judge), so nothing the notebook does can change a score.
JUDGE_AFTER_ENV = settings.JUDGE_AFTER
# Checks run through this session's warm grader (grader.frontends.warm) unless this is "0": then each starts cold.
WARM_SWITCH_ENV = settings.WARM_GRADER
# ------------------------------------------------------------------------------- the magics


@magics_class
class PuzzleMagics(Magics):
    """``%puzzle ID`` says which puzzle this notebook is; ``%%puzzle NAME`` runs and records a cell."""

    def __init__(self, shell: Any):
        super().__init__(shell)
        self.puzzle_id = ""
        self.cells: dict[str, str] = {}
        self.failed: set[str] = set()  # cells whose last run raised: only their own kernel's check sees them
        self.warm: Any = None  # grader.frontends.warm.WarmGrader: this session's warm grader, started by %load_ext

    @line_magic("puzzle")
    def set_puzzle(self, line: str) -> None:
        words = line.split()
        if len(words) == 3 and words[1] == "--lang":  # a translated notebook: %puzzle 08 --lang zh_CN
            from grader.i18n import ENV, normalize

            os.environ[ENV] = normalize(words[2])  # the checks' grader processes inherit it
            line = words[0]
        puzzle_id = normalize_id(line)
        if puzzle_id is None:
            print(f"%puzzle wants a puzzle id such as 08, not {line.strip()!r}")
            return
        self.puzzle_id = puzzle_id

    @cell_magic("puzzle")
    def record(self, line: str, cell: str) -> None:
        name = line.strip() or f"cell{len(self.cells) + 1}"
        self.cells[name] = cell
        if self.shell.run_cell(cell).success:
            self.failed.discard(name)
        else:
            self.failed.add(name)

    def module_text(self, keep: str = "") -> tuple[str, list[tuple[int, str]]]:
        """The remembered cells as one module (see :func:`module_text`)."""
        return module_text(self.cells, self.failed, keep)


def module_text(cells: dict[str, str], failed: set[str], keep: str = "") -> tuple[str, list[tuple[int, str]]]:
    """The ``%%puzzle`` cells (name -> source, in first-run order) as one module, and where each starts:
    (first line, cell name).

    A cell whose last run raised is left out unless it is ``keep`` (the checked kernel's own cell,
    whose error the check then reports), so one broken cell costs only its own kernel's check. Each cell
    ends with a ``CELL_END`` line: the tracer runs the cells one by one, as a notebook does, so a cell
    that raises costs only the kernels it defines (grader.trace.learner.load_learner).
    """
    parts, starts, line = [], [], 1
    for name, source in cells.items():
        if name in failed and name != keep:
            continue
        text = source.rstrip("\n") + "\n"
        starts.append((line, name))
        parts.append(f"{text}\n{CELL_END}\n")
        line += text.count("\n") + 2
    return "".join(parts), starts


def load_ipython_extension(shell: Any) -> None:
    os.environ.setdefault("TILELANG_PRINT_ON_COMPILATION", "0")
    logging.getLogger("tilelang").setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", message="IProgress not found")  # tqdm, imported by TileLang
    shell.register_magics(PuzzleMagics)
    magics = shell.magics_manager.registry["PuzzleMagics"]
    if magics.warm is None and not os.environ.get(JUDGE_AFTER_ENV) and os.environ.get(WARM_SWITCH_ENV) != "0":
        import atexit

        from grader.frontends.warm import WarmGrader

        magics.warm = WarmGrader()  # it imports torch and TileLang while the learner reads the first cells
        atexit.register(magics.warm.stop)


def _magics() -> PuzzleMagics:
    from IPython import get_ipython

    shell = get_ipython()
    magics = shell.magics_manager.registry.get("PuzzleMagics") if shell is not None else None
    if magics is None:
        raise CheckFailed("run the notebook's setup cell first (%load_ext grader.nb)")
    if not magics.puzzle_id:
        raise CheckFailed("run the notebook's setup cell first (%puzzle ID is missing)")
    return magics


# ------------------------------------------------------------------------------ the results


@dataclass
class CheckResult:
    """What one check found: ``passed``, one printed line per case (and its details), the JSON."""

    kernel: str
    passed: bool
    summary: str
    lines: list[str] = field(default_factory=list)
    document: dict[str, Any] | None = None
    seconds: float = 0.0

    def cases(self) -> list[dict[str, Any]]:
        return [r for r in (self.document or {}).get("results", []) if r.get("kernel") == self.kernel]

    def __repr__(self) -> str:
        return f"CheckResult({self.kernel!r}, passed={self.passed})"

    def _ipython_display_(self) -> None:
        """The verdict is already printed: a check cell shows nothing more."""


class CheckFailed(Exception):
    """A check that did not pass; IPython shows it as one line, without a stack trace."""

    def __init__(self, summary: str, result: CheckResult | None = None):
        super().__init__(summary)
        self.result = result

    def _render_traceback_(self) -> list[str]:
        return [f"CheckFailed: {self}"]


# ------------------------------------------------------------------------------- running it


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Hold back anything this process would write to stderr while a check runs."""
    disabled = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(disabled)


def _in_cells(explanation: Any, starts: list[tuple[int, str]], module_name: str) -> Any:
    """The record with the lines its sentences name moved from the module's numbers to the cells' (the steps' own
    lines are labelled by the view, given :func:`cell_line`)."""

    def step_line(match: re.Match) -> str:
        return f"line {cell_line(int(match.group(1)), starts)[0]}"

    why = re.sub(r"\bline (\d+)(?= \(step )", step_line, explanation.why)  # grader.pipeline.explain's labels
    return dataclasses.replace(
        explanation,
        why=lines_in_cells(why, starts, module_name),
        problem=lines_in_cells(explanation.problem, starts, module_name),
    )


def show_tile_map(cases: list[dict[str, Any]]) -> None:
    """A small heat map of the wrong tiles of the first failed case that has one (needs matplotlib)."""
    tile_map = next((c["tile_map"] for c in cases if c.get("status") == Status.FAILED and c.get("tile_map")), None)
    if tile_map is None:
        return
    try:
        import matplotlib.pyplot as plt

        from grader.teaching import pictures  # type: ignore[attr-defined]
    except ImportError:
        return
    drawn = pictures.mismatch_map(tile_map)
    figure = getattr(drawn, "figure", drawn) if drawn is not None else None
    if figure is None or not hasattr(figure, "savefig"):
        return
    from IPython.display import display

    display(figure)
    plt.close(figure)


def default_timeout() -> float:
    """A check's time limit: $TILELANG_COURSE_CHECK_TIMEOUT if set to a positive number, else 120 s."""
    try:
        value = float(os.environ.get(TIMEOUT_ENV, ""))
    except ValueError:
        return settings.DEFAULT_CHECK_TIMEOUT_S
    return value if value > 0 else settings.DEFAULT_CHECK_TIMEOUT_S


def check(
    kernel: str, *, timeout: float | None = None, device: str = "auto", strict: bool = False, full: bool = False
) -> CheckResult:
    """Grade one kernel of the cells run so far; print a verdict per case and whether it passed.

    ``timeout`` bounds the whole check (compiles included) from when the grader starts it; the warm grader's
    one-time import of torch and TileLang after ``%load_ext`` is not counted. A kernel that hangs fails within it
    (default: :func:`default_timeout`). ``device`` is the grader's --device: auto (a GPU if there is
    one, else simulate on the CPU). ``strict`` raises CheckFailed when it did not pass. Without a GPU a check
    simulates the small cases and leaves the cases too large to simulate uncompiled (its last line counts them);
    ``full=True`` compiles them too.
    """
    with quiet():
        result = _check(kernel, default_timeout() if timeout is None else timeout, device, full)
    if strict and not result.passed:
        raise CheckFailed(result.summary, result)
    return result


def hint(kernel: str, level: int = 1, *, puzzle: str = "") -> None:
    """Print tier ``level`` of ``kernel``'s hints (1, the default, says why the kernel is built as it is;
    each level says more, the last names the expressions without being the code). ``puzzle`` defaults to this
    notebook's ``%puzzle``.
    An unknown kernel or a level past the last prints one line saying so; nothing raises."""
    from grader import hints

    try:
        puzzle_id = puzzle or _magics().puzzle_id
        found = hints.get(puzzle_id, kernel, level)
    except (hints.HintError, CheckFailed) as error:
        print(f"{RED}{tr(str(error))}{PLAIN}")
        return
    print("\n".join(hint_lines(found, more=f'hint("{kernel}", level={{level}})')))


def print_verdict(result: CheckResult) -> None:
    """The case lines, then the summary line in green (passed) or red."""
    lines = list(result.lines or [result.summary])
    colour = GREEN if result.passed else RED
    if lines and lines[-1] == result.summary:
        lines[-1] = f"{colour}{result.summary}{PLAIN}"
    print("\n".join(lines))


def _check(kernel: str, timeout: float, device: str, full: bool = False) -> CheckResult:
    if os.environ.get(JUDGE_AFTER_ENV):
        summary = tr(f"{kernel}: graded by the course's judge after the notebook has run (its verdict replaces this)")
        print(summary)
        return CheckResult(kernel, True, summary, [summary])
    magics = _magics()
    module, starts = magics.module_text(keep=kernel)
    if not defines_kernel(module, kernel):
        summary = tr(
            f"{kernel}: no cell defines it yet: run the cell that starts with %%puzzle {kernel}, then this one"
        )
        result = CheckResult(kernel, False, summary, [summary])
        print_verdict(result)
        return result
    options = launch.check_options([kernel], timeout, device=device, full=full)
    run = launch.grade(magics.puzzle_id, module, options, timeout, warm=magics.warm)
    result = verdict(kernel, run, starts, magics.puzzle_id, timeout)
    print_verdict(result)
    show_tile_map(result.cases())
    return result


def defines_kernel(module: str, kernel: str) -> bool:
    """Whether the module text holds a top-level ``def kernel(``."""
    return re.search(rf"^def {re.escape(kernel)}\(", module, re.M) is not None


def verdict(
    kernel: str,
    run: launch.GraderRun,
    starts: list[tuple[int, str]],
    puzzle_id: str,
    timeout: float,
    expected: int | None = None,
    layout: render.Layout = render.NOTEBOOK,
    where: Any = None,
) -> CheckResult:
    """One kernel's check from a grader run: its lines (as printed) and whether it passed. Used by
    check() and by the nbgrader judge (grader.nbgrader.judge), so both say the same. ``expected``: how
    many cases the trusted spec grades this kernel on; a run that reports fewer passes nothing. ``layout``:
    how the cases are laid out, ``where``: how a line names the file and its lines (default: the ``%%puzzle``
    cells that ``starts`` places; grader.frontends.planted gives its own for both)."""
    module_name = f"p{puzzle_id}_notebook.py"
    if where is None:

        def where(line: str) -> str:
            return lines_in_cells(line, starts, module_name)

    if run.returncode is None:
        summary = tr(
            f"{kernel}: HANG: no verdict within {timeout:g} s: the kernel never finished "
            f"(or compiling took longer: check({kernel!r}, timeout=...))"
        )
        return CheckResult(kernel, False, summary, [summary], None, run.seconds)
    if run.results is None:
        tail = [where(line) for line in run.output.strip().splitlines()[-5:]]
        summary = tr(f"{kernel}: the grader stopped without a verdict (exit code {run.returncode})")
        return CheckResult(kernel, False, summary, [summary, *tail], None, run.seconds)
    result = CheckResult(kernel, False, "", [], run.document, run.seconds)
    cases = [case for case in run.results if case.kernel == kernel]
    device_name = next((r.get("device", "") for r in run.runs), "")
    lines = [f"{kernel} — {device_name}" if device_name else kernel]
    if cases and all(c.status == Status.NOT_IMPLEMENTED for c in cases):
        cases_shown = [dataclasses.replace(cases[0], case=f"({len(cases)} cases)")]
    else:
        cases_shown = cases
    previous = None
    longer = f"(give it longer: check({kernel!r}, timeout=...))"  # a notebook's time limit is check()'s
    for case in cases_shown:
        shown = render.case_lines(case, layout=layout, previous=previous, longer=longer)
        lines += [where(line) for line in shown]
        previous = case
    skipped = [c for r in run.runs for c in r.get("not_compiled") or [] if c["kernel"] == kernel]
    compile_all = layout.compile_all.format(kernel=kernel)
    result.passed, result.summary = render.summary(kernel, cases, len(skipped), compile_all)
    if expected is not None and len(cases) < expected:  # a run cut short must not score what it skipped
        result.passed = False
        result.summary = f"{kernel}: the grader reported {len(cases)} of its {expected} cases; grade it again"
    result.summary = tr(result.summary)
    lines[0] = tr(lines[0])
    result.lines = lines + [result.summary]
    return result


# -------------------------------------------------------------------------------- benchmarks


@dataclass
class BenchRow:
    kernel: str
    case: str
    kernel_ms: float
    torch_ms: float
    tflops: float | None
    gbps: float | None
    roofline_percent: float | None = None  # the floor the hardware allows over the kernel's time
    bound: str = ""  # "memory" or "compute": which limit sets the floor
    others: dict[str, float] = field(default_factory=dict)  # further baselines: name -> ms


@dataclass
class BenchResult:
    """The timed rows (empty without a GPU) and the grader's JSON."""

    rows: list[BenchRow] = field(default_factory=list)
    document: dict[str, Any] | None = None

    def _ipython_display_(self) -> None:
        """The table and the plot are already shown."""


def param_texts(params: dict[str, int]) -> tuple[str, ...]:
    """Block parameters given as keywords (``BLOCK_N=128``) in GradeOptions' words: ``("BLOCK_N=128",)``."""
    return tuple(f"{name}={value}" for name, value in params.items())


def _gpu_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def bench(*kernels: str, timeout: float = settings.BENCH_TIMEOUT_S, device: str = "auto", **params: int) -> BenchResult:
    """Time each kernel's large case(s) against torch on the GPU and plot them; one line without a GPU.

    Keyword arguments are block parameters for the timed cases, e.g. ``bench("matmul_pipelined",
    BLOCK_N=128, STAGES=4)``: your kernel at your parameters (checked on that case first); the graded
    cases keep theirs."""
    with quiet():
        if device not in ("auto", "cuda") or not _gpu_available():
            print(tr("Benchmarks need a CUDA GPU: here the checks above compiled and simulated the kernels instead."))
            return BenchResult()
        magics = _magics()
        module, _ = magics.module_text()
        options = launch.check_options(kernels, timeout, device="cuda", bench=True, params=param_texts(params))
        run = launch.grade(magics.puzzle_id, module, options, timeout)
        if run.results is None:
            reason = f"no answer within {timeout:g} s" if run.returncode is None else "the grader stopped"
            print(f"bench: {reason}; run python -m grader {magics.puzzle_id} --bench for details")
            return BenchResult()
        rows = _bench_rows(run.results)
        for line in render.bench_lines(run.results):
            print(tr(line))
        missing = [k for k in kernels if k not in {r.kernel for r in rows}]
        if missing:
            print(f"not timed (their checks must pass first): {', '.join(missing)}")
        _plot(rows)
        return BenchResult(rows, run.document)


@dataclass
class ProfileResult:
    """The profiled case(s) as the grader's JSON holds them (``document``) and the printed lines."""

    lines: list[str] = field(default_factory=list)
    document: dict[str, Any] | None = None

    def _ipython_display_(self) -> None:
        """The lines are already printed."""


def profile(
    kernel: str, *, static: bool = False, timeout: float = settings.PROFILE_TIMEOUT_S, **params: int
) -> ProfileResult:
    """Why ``kernel`` takes its time: its bench case beside the course's own kernel. On a GPU from Nsight
    Compute's counters (``static=True``, or no GPU: an estimate from the kernel's TIR and ptxas), closing with
    what to try. Keyword arguments are block parameters, as for bench(). It never changes a grade."""
    with quiet():
        magics = _magics()
        module, _ = magics.module_text()
        options = launch.check_options([kernel], timeout, profile=kernel, static=static, params=param_texts(params))
        run = launch.grade(magics.puzzle_id, module, options, timeout)
        if run.results is None:
            reason = f"no answer within {timeout:g} s" if run.returncode is None else "the grader stopped"
            print(f"profile: {reason}; run python -m grader {magics.puzzle_id} --profile {kernel} for details")
            return ProfileResult()
        results = run.results
        lines = render.profile_lines(results)
        if not lines:
            said = next((r.message for r in results if r.message), "it did not build")
            print(tr(f"profile: nothing to profile for {kernel}: {said}"))
        for line in lines:
            print(tr(line))
        return ProfileResult(lines, run.document)


@dataclass
class ExplainResult:
    """The case the view shows (``case``: its CaseResult, whose ``explanation`` is the record) and the JSON."""

    case: CaseResult | None = None
    document: dict[str, Any] | None = None

    @property
    def explanation(self) -> Any:
        return self.case.explanation if self.case is not None else None

    def _ipython_display_(self) -> None:
        """The view is already shown."""


def explain(
    kernel: str,
    case: str | None = None,
    block: int | str | tuple[int, ...] | None = None,
    *,
    timeout: float | None = None,
) -> ExplainResult:
    """Step through one block of ``kernel`` in one case's simulation on the CPU: each tile operation in order,
    the source line, the buffers it read and wrote, pictures of the global tensors' elements it touched and the
    values of the tiles it wrote, with a slider. ``case`` defaults to the first failed simulated case, else the
    first simulated one; ``block`` (``1`` or ``(1, 0)``) defaults to the block that wrote the first wrong
    element, else the first block. It never changes a grade."""
    limit = max(default_timeout(), settings.EXPLAIN_TIMEOUT_S) if timeout is None else timeout
    with quiet():
        magics = _magics()
        module, starts = magics.module_text(keep=kernel)
        module_name = f"p{magics.puzzle_id}_notebook.py"
        if not defines_kernel(module, kernel):
            said = f"{kernel}: no cell defines it yet: run the cell that starts with %%puzzle {kernel}, then this one"
            print(tr(said))
            return ExplainResult()
    return explain_module(
        magics.puzzle_id,
        module,
        kernel,
        case,
        block,
        limit,
        warm=magics.warm,
        where=lambda text: lines_in_cells(text, starts, module_name),
        record=lambda explanation: _in_cells(explanation, starts, module_name),
        cells=lambda line: cell_line(line, starts),
    )


def explain_module(
    puzzle_id: str,
    module: str,
    kernel: str,
    case: str | None,
    block: int | str | tuple[int, ...] | None,
    limit: float,
    *,
    warm: Any = None,
    where: Any = None,
    record: Any = None,
    cells: Any = None,
    layout: render.Layout = render.NOTEBOOK,
) -> ExplainResult:
    """explain() on a module's text: run the grader with --explain, print the case's lines (as ``layout`` lays
    them out) and show the view. ``where`` rewrites a printed sentence's file and lines for the learner,
    ``record`` the record's, ``cells`` labels a step's line (grader.frontends.explain_view.line_label); by
    default they stay as the module has them."""
    from grader.frontends import explain_view

    where = where or (lambda text: text)
    with quiet():
        where_arg = ",".join(str(b) for b in block) if isinstance(block, (tuple, list)) else block
        block_text = "" if where_arg is None else str(where_arg)
        options = launch.check_options([kernel], limit, device="cpu", explain=kernel, block=block_text)
        run = launch.grade(puzzle_id, module, dataclasses.replace(options, cases=case or ""), limit, warm=warm)
        chosen = _explained_case(run.results, kernel, case)
        if chosen is not None and chosen.explanation is None and not case:
            # that run graded every case and recorded none: record the chosen one alone
            alone = dataclasses.replace(options, cases=chosen.case)
            run = launch.grade(puzzle_id, module, alone, limit, warm=warm)
            chosen = _explained_case(run.results, kernel, chosen.case)
        if run.results is None:
            reason = f"no answer within {limit:g} s" if run.returncode is None else "the grader stopped"
            print(tr(f"explain: {reason}; run python -m grader {puzzle_id} --explain {kernel} for details"))
            return ExplainResult()
        if chosen is None or chosen.explanation is None:
            said = chosen.message if chosen is not None else f"no simulated case of {kernel}"
            print(tr(f"explain: nothing to show for {kernel}: {where(said)}"))
            return ExplainResult(chosen, run.document)
        shown = render.case_lines(chosen, layout=layout)
        print("\n".join(tr(where(line)) for line in shown))
    from IPython.display import HTML, display

    shown_record = record(chosen.explanation) if record is not None else chosen.explanation
    display(HTML(explain_view.html_fragment(shown_record, cells=cells)))
    return ExplainResult(chosen, run.document)


def _explained_case(results: list[CaseResult] | None, kernel: str, case: str | None) -> CaseResult | None:
    """The case to show: the one named, else the first with a record, else the first failed simulated case, else
    the first simulated case."""
    from grader import verified

    results = [r for r in results or [] if r.kernel == kernel]
    # the judge hands the record back on one of the kernel's results; it names the case it shows
    recorded = next((r.explanation for r in results if r.explanation is not None), None)
    if recorded is not None and (not case or recorded.case == case):
        holder = next((r for r in results if r.case == recorded.case), None)
        return dataclasses.replace(holder, explanation=recorded) if holder is not None else None
    if case:
        return next((r for r in results if r.case == case), None)
    ran = [r for r in results if r.checked == verified.SIMULATED]
    failed = [r for r in ran if r.status == Status.FAILED]
    return (failed or ran or [None])[0]


def _bench_rows(results: list[CaseResult]) -> list[BenchRow]:
    rows = []
    for r in results:
        b = r.bench
        if b:
            floor = b.floor_ms
            rows.append(
                BenchRow(
                    r.kernel,
                    r.case,
                    b.kernel_ms,
                    b.torch_ms,
                    b.tflops,
                    b.gbps,
                    100.0 * floor / b.kernel_ms if floor else None,
                    b.bound,
                    dict(b.others or {}),
                )
            )
    return rows


def _plot(rows: list[BenchRow]) -> None:
    """Bars of the learner's kernels next to torch, in TFLOP/s, GB/s or ms (whichever all rows have)."""
    if not rows:
        return
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        return
    if all(r.tflops is not None for r in rows):
        unit, ours = "TFLOP/s (higher is better)", [r.tflops for r in rows]
        theirs = [r.tflops * r.kernel_ms / r.torch_ms for r in rows]
    elif all(r.gbps is not None for r in rows):
        unit, ours = "GB/s (higher is better)", [r.gbps for r in rows]
        theirs = [r.gbps * r.kernel_ms / r.torch_ms for r in rows]
    else:
        unit, ours, theirs = "ms (lower is better)", [r.kernel_ms for r in rows], [r.torch_ms for r in rows]
    figure, axes = plt.subplots(figsize=(max(6.0, 1.4 * len(rows)), 3.5))
    positions = list(range(len(rows)))
    axes.bar([p - 0.2 for p in positions], ours, width=0.4, label="your kernel")
    axes.bar([p + 0.2 for p in positions], theirs, width=0.4, label="torch")
    axes.set_xticks(positions, [f"{r.kernel}\n{r.case}" for r in rows], fontsize=8)
    for position, row, mine, torch in zip(positions, rows, ours, theirs):
        ratio = row.torch_ms / row.kernel_ms
        axes.text(position, max(mine, torch) * 1.05, f"{ratio:.2f}x", ha="center", va="bottom", fontsize=8)
    axes.set_ylabel(unit)
    axes.set_title("your kernels against torch (labels: torch time / your time)", fontsize=10)
    values = [v for v in ours + theirs if v and v > 0]
    if values and max(values) > 50 * min(values):  # GEMV next to GEMM: a log scale shows both
        axes.set_yscale("log")
        axes.set_ylim(top=max(values) * 4)
    elif values:
        axes.set_ylim(top=max(values) * 1.2)
    axes.legend(loc="upper left", fontsize=8)
    figure.tight_layout()
    from IPython.display import display

    display(figure)
    plt.close(figure)
