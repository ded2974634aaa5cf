"""The one renderer: what every front end prints for results (the CLI and pytest, a notebook's check(),
nbgrader's feedback), and the JSON document for machines.

Results carry facts as fields (grader.outcome.CaseResult: status, where the case ran, the arch); the
words come from here: the status labels, the "simulated on CPU: " and "compiled for sm_XX: " before a
message, a case's lines, a kernel's closing summary, the closing counts and the bench table. Each
sentence is built in English and translated by grader.i18n.tr, whose catalogue patterns match it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader import verified
from grader.devices import DEFAULT, PROFILES
from grader.i18n import text_columns, tr, wrap_wide
from grader.outcome import GOOD, CaseResult, Status

# A check cell's verdict line, coloured: JupyterLab and terminals colour stream output (the notebook front end)
GREEN, RED, PLAIN = "\x1b[32m", "\x1b[31m", "\x1b[0m"

LABELS = {
    Status.PASSED: "PASS",
    Status.COMPILED: "BUILT",
    Status.FAILED: "FAIL",
    Status.NOT_IMPLEMENTED: "TODO",
    Status.ERROR: "ERROR",
    Status.CRASHED: "CRASH",
    Status.TIMED_OUT: "HANG",
    Status.NOT_RUN: "SKIP",
    Status.SETUP: "SETUP",
    Status.UNSUPPORTED: "NOSIM",
    Status.NOT_APPLICABLE: "N/A",
}
DEFAULT_ARCH = PROFILES[DEFAULT].arch  # a result that names no arch (written before results carried it)


def label(status: str) -> str:
    """The five-column word a case's line starts with (PASS, FAIL, BUILT, ...); never translated."""
    return LABELS[Status(status)]


def message(result: CaseResult) -> str:
    """The case's verdict sentence in English: where it ran, where that is news, from its fields, then its
    message ("simulated on CPU: max abs err 0", "compiled for sm_90a: TileLang accepts it ...")."""
    if result.checked == verified.SIMULATED:
        return f"simulated on CPU: {result.message}"
    if result.status == Status.COMPILED and result.checked == verified.COMPILED:
        return f"compiled for {result.arch or DEFAULT_ARCH}: {result.message}"
    return result.message


def sizes_text(sizes: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in sizes.items())


@dataclass(frozen=True)
class Layout:
    """How a front end lays out a case's lines; the words are the same in each."""

    sizes: bool = True  # the sizes column (a terminal's; a notebook cell is narrower)
    width: int = 0  # wrap the message, details and hint between words at this many columns (0: never)
    elements: int = 0  # wrong elements listed per failed case (0: every one the grader gave)
    not_run: str = ""  # what a case that was not run says instead of its message ("": its message)
    # how to look inside a failed simulated case, from {puzzle}, {kernel}, {case} ("": not offered)
    see_inside: str = "python -m grader {puzzle} --explain {kernel} --case {case}"
    # how to compile the large cases a narrowed check left out, from {kernel} ("": the command the run reports)
    compile_all: str = ""


TERMINAL = Layout()
# JupyterLab breaks a longer output line wherever the cell's edge falls, inside a word, and nbgrader's
# feedback page scrolls sideways for it: a notebook's lines wrap at 100 columns.
NOTEBOOK = Layout(
    sizes=False,
    width=100,
    elements=3,
    not_run="not run (see above)",
    see_inside='explain("{kernel}", case="{case}")',
    compile_all='check("{kernel}", full=True)',
)
ELEMENT_LINE = re.compile(r"^\w+\[[^\]]*\] = ")  # "C[960] = nan, expected 1": one wrong element


def wrapped(head: str, text: str, width: int, indent: str = " " * 10) -> list[str]:
    """``head + text`` in lines of at most ``width`` columns broken between words (a word longer than a
    line stays whole), the later lines starting with ``indent``; one line where ``width`` is 0."""
    if not width:
        return [head + text]
    lines = wrap_wide(text, width - len(indent), first=width - len(head)) or [""]
    return [head + lines[0], *(indent + line for line in lines[1:])]


def same_verdict(one: CaseResult, other: CaseResult) -> bool:
    return (one.status, message(one), one.details) == (other.status, message(other), other.details)


def case_lines(
    result: CaseResult,
    verbose: bool = False,
    *,
    layout: Layout = TERMINAL,
    previous: CaseResult | None = None,
    longer: str = "",
) -> list[str]:
    """The lines one case prints: a verdict line, then details for anything but a pass (in the grader's
    language: grader.i18n.tr; the labels stay as they are). ``previous``: the case printed just before,
    whose failure this one may repeat ("the same as above"); ``longer``: what to say instead of "(raise
    --timeout)" where the limit is not the CLI's."""
    status = Status(result.status)
    text = message(result)
    if status == Status.NOT_RUN and layout.not_run:
        text = layout.not_run
    elif longer and status in (Status.TIMED_OUT, Status.ERROR):
        text = text.replace("(raise --timeout)", longer)
    same = previous is not None and status not in (*GOOD, Status.NOT_RUN) and same_verdict(previous, result)
    if same:
        text = "the same as above"
    head = f"  {label(status):5} {tr(result.case):22} " + (f"{sizes_text(result.sizes):26} " if layout.sizes else "")
    lines = [line.rstrip() for line in wrapped(head, tr(text), layout.width)]
    if status in (*GOOD, Status.NOT_RUN) or same:
        return lines
    details = result.details
    if layout.elements:
        elements = [d for d in details if ELEMENT_LINE.match(d)][: layout.elements]
        details = [d for d in details if not ELEMENT_LINE.match(d) or d in elements]
    indent = " " * 8
    for detail in details:
        lines += wrapped(indent, tr(detail), layout.width)
    for name, value in (("hint", result.hint), ("saved", result.saved), ("replay", result.replay)):
        if value:
            lines += wrapped(indent, tr(f"{name}: {value}"), layout.width)
    if layout.see_inside and status == Status.FAILED and result.checked == verified.SIMULATED:
        call = layout.see_inside.format(puzzle=result.puzzle, kernel=result.kernel, case=result.case)
        lines += wrapped(indent, tr(f"see inside: {call}"), layout.width)
    if verbose and result.trace:
        lines += [indent + line for line in result.trace.rstrip().splitlines()]
    return lines


def summary(kernel: str, cases: list[CaseResult], not_compiled: int = 0, compile_all: str = "") -> tuple[bool, str]:
    """Whether a kernel passed, and the line that says so (in English: the caller translates it).
    ``not_compiled``: the kernel's large cases a narrowed check without a GPU left out; a pass names them and
    ``compile_all``, how to compile them, so that a pass of the small cases never reads as a pass of them all."""
    passed, line = _summary(kernel, cases)
    if not_compiled and passed:
        line += "; " + not_compiled_text(not_compiled, compile_all)
    return passed, line


def not_compiled_text(count: int, compile_all: str) -> str:
    """The large cases a narrowed check without a GPU did not compile, and the command that compiles them."""
    return f"{count} large case(s) not compiled in this quick check: {compile_all} compiles them too"


def not_compiled_lines(runs: Iterable[dict[str, Any]]) -> list[str]:
    """The closing lines of a narrowed check without a GPU: per graded file, how many large cases were not
    compiled, and the command that does (from the JSON's ``runs``)."""
    return [
        not_compiled_text(len(run["not_compiled"]), run.get("compile_all", ""))
        for run in runs
        if run.get("not_compiled")
    ]


def _summary(kernel: str, cases: list[CaseResult]) -> tuple[bool, str]:
    statuses = [Status(c.status) for c in cases]
    if not cases:
        return False, f"{kernel}: the grader gave no verdict"
    if all(s == Status.NOT_APPLICABLE for s in statuses):
        return False, f"{kernel}: no case can run on this GPU ({cases[0].message})"
    if all(s in (*GOOD, Status.UNSUPPORTED) for s in statuses):
        checked = verified.counts(cases)
        if Status.UNSUPPORTED in statuses and not checked[verified.GPU] + checked[verified.SIMULATED]:
            # no case's numbers were checked: nothing earned a pass here, and nothing failed
            return False, (
                f"{kernel}: not checked: the CPU simulator cannot run it "
                f"({cases[statuses.index(Status.UNSUPPORTED)].message}), and a GPU checks the numbers"
            )
        if Status.UNSUPPORTED in statuses:
            # Simulated on some cases, not on others: a kernel could take a construct the simulator lacks on the
            # very cases it gets wrong (a tail), so a case the course simulates and this one could not earns no pass.
            unchecked = cases[statuses.index(Status.UNSUPPORTED)]
            return False, (
                f"{kernel}: not checked on case {unchecked.case}: the CPU simulator cannot run it there "
                f"({unchecked.message}), though it ran {checked[verified.SIMULATED]} other case(s); "
                "a GPU checks the numbers"
            )
        built, simulated = checked[verified.COMPILED], checked[verified.SIMULATED]
        unfit = statuses.count(Status.NOT_APPLICABLE)
        also = f"; {unfit} not applicable on this GPU" if unfit else ""
        if built:
            arch = next((c.arch for c in cases if c.checked == verified.COMPILED and c.arch), DEFAULT_ARCH)
            return True, (
                f"{kernel}: passed ({simulated} case(s) simulated on the CPU, {built} only compiled for {arch}: "
                f"a GPU checks their numbers{also})"
            )
        if unfit:
            return True, f"{kernel}: passed all {len(cases) - unfit} cases this GPU can run ({unfit} not applicable)"
        return True, f"{kernel}: passed all {len(cases)} cases"
    if all(s == Status.NOT_IMPLEMENTED for s in statuses):
        return False, f"{kernel}: not implemented yet (fill in its TODO, run its cell, then this one)"
    for status, verb in ((Status.TIMED_OUT, "hangs"), (Status.CRASHED, "crashes")):
        if status in statuses:
            case = cases[statuses.index(status)].case
            return False, f"{kernel}: {verb} on case {case} (the cases after it were not run)"
    bad = sum(s not in GOOD for s in statuses)
    return False, f"{kernel}: {bad} of {len(cases)} cases did not pass (see above)"


def verified_lines(results: Iterable[CaseResult]) -> list[str]:
    """The closing lines where some case did not run on a GPU: each kernel's counts (grader.verified),
    and, where cases were only compiled, that their numbers were not checked."""
    by_puzzle: dict[str, list[CaseResult]] = {}
    for result in results:
        by_puzzle.setdefault(result.puzzle, []).append(result)
    found = {
        (f"{puzzle} {kernel}" if len(by_puzzle) > 1 else kernel): counts
        for puzzle, cases in by_puzzle.items()
        for kernel, counts in verified.per_kernel(cases).items()
    }
    totals = verified.total(found.values())
    if totals[verified.SIMULATED] + totals[verified.COMPILED] == 0:
        return []
    lines = ["Not every case ran on a GPU:"] + [f"  {verified.line(name, counts)}" for name, counts in found.items()]
    if verified.unchecked(totals):
        lines.append(
            f"{verified.unchecked(totals)} case(s) were only compiled: their numbers were not checked here. "
            "A CUDA GPU checks them."
        )
    return lines


# Verdicts whose words repeat from case to case when the cause is the file or the kernel, not the case: a
# syntax error, a rejected kernel, a machine that cannot grade. Printed in full once, then folded.
FOLDED = (Status.ERROR, Status.SETUP)
FOLD_NAMES = 4  # case names listed on a folded line


def repeat_key(source: str, result: CaseResult) -> tuple[str, ...] | None:
    """What makes two cases' verdicts the same words (file, status, message, hint, details), or None for a
    verdict that is never folded."""
    if result.status not in FOLDED:
        return None
    return (source, result.status, result.message, result.hint, *result.details)


def repeated_line(results: list[CaseResult], first: str) -> str:
    """One line for cases whose verdict repeats ``first``'s ("kernel case") word for word."""
    names = " ".join(r.case for r in results[:FOLD_NAMES]) + (" ..." if len(results) > FOLD_NAMES else "")
    more = " more" if first.startswith(f"{results[0].kernel} ") else ""  # the first was this kernel's own
    return f"  {label(results[0].status):5} " + tr(f"{len(results)}{more} case(s) ({names}): the same as {first} above")


def _range(pair: tuple[float, float] | None) -> str:
    return f" [{pair[0]:.4f}-{pair[1]:.4f}]" if pair else ""


def _ratio(ms: float, range_: tuple[float, float] | None, kernel_ms: float, kernel_range) -> str:
    """A baseline's time over the kernel's, marked ~ where the two ranges overlap (the ratio is noise)."""
    overlap = bool(range_ and kernel_range and range_[0] <= kernel_range[1] and kernel_range[0] <= range_[1])
    return f"{ms / kernel_ms:.2f}x" + ("~" if overlap else "")


def gpu_state_line(rows: list[CaseResult]) -> str:
    """The clocks and power limit the bench ran under: the lowest SM clock any case ended at."""
    states = [r.bench.gpu for r in rows if r.bench and r.bench.gpu and r.bench.gpu.get("sm_clock_mhz")]
    if not states:
        return ""
    low = min(states, key=lambda g: g["sm_clock_mhz"])
    parts = [f"SM clock {min(g['sm_clock_mhz'] for g in states)}-{max(g['sm_clock_mhz'] for g in states)} MHz"]
    if low.get("max_sm_clock_mhz"):
        parts[0] += f" (max {low['max_sm_clock_mhz']})"
    if low.get("power_limit_w"):
        parts.append(f"power limit {low['power_limit_w']:.0f} W")
    temperatures = [g["temperature_c"] for g in states if g.get("temperature_c") is not None]
    if temperatures:
        parts.append(f"{min(temperatures)}-{max(temperatures)} C")
    return "GPU after each case: " + ", ".join(parts)


def bench_lines(results: list[CaseResult]) -> list[str]:
    rows = [r for r in results if r.bench is not None]
    if not rows:
        return []
    name_width = max(len("kernel"), *(len(f"{r.puzzle} {r.kernel}") for r in rows))
    case_width = max(len("case"), *(len(r.case) for r in rows))
    lines = [
        f"{'kernel':{name_width}} {'case':{case_width}} {'ms':>9} {'spread':>7} {'TFLOP/s':>8} {'GB/s':>8} "
        f"{'roofline':>12} {'torch ms':>9} {'spread':>7} {'vs torch':>9}",
    ]
    for r in rows:
        b = r.bench
        tflops = f"{b.tflops:8.1f}" if b.tflops is not None else f"{'-':>8}"
        gbps = f"{b.gbps:8.0f}" if b.gbps is not None else f"{'-':>8}"
        percent = b.roofline_percent
        roof = f"{percent:5.0f}% {b.bound[:3]:>3}" if percent is not None else "-"
        spread = f"{b.spread_percent:6.1f}%" if b.spread_percent is not None else f"{'-':>7}"
        torch_spread = (
            f"{100.0 * (b.torch_range[1] - b.torch_range[0]) / b.torch_ms:6.1f}%" if b.torch_range else f"{'-':>7}"
        )
        versus = _ratio(b.torch_ms, b.torch_range, b.kernel_ms, b.kernel_range)
        name = f"{r.puzzle} {r.kernel}"
        lines.append(
            f"{name:{name_width}} {r.case:{case_width}} {b.kernel_ms:9.4f} {spread} {tflops} {gbps} {roof:>12} "
            f"{b.torch_ms:9.4f} {torch_spread} {versus:>9}"
        )
        for other, ms in b.others.items():
            ratio = _ratio(ms, b.others_range.get(other), b.kernel_ms, b.kernel_range)
            lines.append(
                f"{'':{name_width}} {'':{case_width}}   vs {other}: {ms:.4f} ms{_range(b.others_range.get(other))}, "
                f"{ratio}"
            )
        if b.params:
            lines.append(f"{'':{name_width}} {'':{case_width}}   with your parameters " + _params(b.params))
    repeats = max(r.bench.repeats for r in rows)
    lines.append(
        "vs torch = torch time / kernel time (above 1.00x: faster than torch); each time is the median of "
        f"{repeats} repetition(s), each a median of CUDA-event timings; spread = (slowest - fastest) / median"
    )
    if any(r.bench.kernel_range and r.bench.repeats > 1 for r in rows):
        lines.append("~ after a ratio: the two times' ranges overlap, so which one is faster is within the noise")
    lines.append(
        "roofline = the shortest time the work allows / kernel time, bound by memory (mem: bytes at the copy "
        "bandwidth) or compute (com: flops at the Tensor Core peak; fma: at the CUDA cores' fp32 FMA peak, for a "
        "kernel without Tensor Core instructions)"
    )
    how = next((r.bench.limits for r in rows if r.bench.limits), "")
    if how:
        lines.append(f"limits on this GPU: {how}")
    state = gpu_state_line(rows)
    if state:
        lines.append(state)
    return lines


def _figure(value: Any, unit: str, translate: Callable[[str], str] = str) -> str:
    """One profile figure as a learner reads it; its words (a limiter, a stall reason) through ``translate``."""
    if value is None:
        return "-"
    if isinstance(value, list):  # stall reasons: [[reason, share %], ...]
        return ", ".join(f"{_stall(reason, translate)} {share:.0f}%" for reason, share in value)
    if isinstance(value, str):
        return translate(value)
    if unit == "%":
        return f"{value:.0f}%"
    if unit == "B":
        for suffix, size in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
            if abs(value) >= size:
                return f"{value / size:.2f} {suffix}"
        return f"{value:.0f} B"
    if unit == "us":
        return f"{value:,.1f} us"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    value = int(value)
    for suffix, size in (("G", 1e9), ("M", 1e6)):
        if abs(value) >= 10 * size:
            return f"{value / size:,.1f}{suffix}"
    return f"{value:,}"


def _stall(reason: str, translate: Callable[[str], str]) -> str:
    """A stall reason by Nsight Compute's name ("long scoreboard"); a catalogue translates the raw name."""
    said = translate(reason)
    return said if said != reason else reason.replace("_", " ")


def _padded(text: str, width: int) -> str:
    """``text`` and spaces to ``width`` terminal columns (a CJK character takes two)."""
    return text + " " * max(0, width - text_columns(text))


def profile_lines(results: list[CaseResult], translate: Callable[[str], str] = tr) -> list[str]:
    """Each profiled case: its figures beside the course kernel's, then what to try. The table's words (labels,
    headings, words among the values) are translated here, before the columns are padded to their display
    width; the other lines are whole sentences, for the caller's grader.i18n.tr."""
    from grader.pipeline.profile import FIGURES

    lines: list[str] = []
    for r in results:
        p = r.profile
        if p is None:
            continue
        how = (
            "Nsight Compute's counters and an estimate from the TIR"
            if p.mode == "gpu"
            else "an estimate from the TIR and ptxas (no counters)"
        )
        if r.status == Status.PASSED:
            lines.append(f"{r.puzzle} {r.kernel}, case {r.case}: {how}")
        else:  # one sentence, for the catalogue to match whole
            verdict = label(r.status).strip()
            lines.append(
                f"{r.puzzle} {r.kernel}, case {r.case} (its verdict: {verdict}; a profile never changes it): {how}"
            )
        shown = [f for f in FIGURES if f.key in p.yours or f.key in p.reference]
        labels = {f.key: translate(f.label) for f in shown}
        mine = {f.key: _figure(p.yours.get(f.key), f.unit, translate) for f in shown}
        theirs = {f.key: _figure(p.reference.get(f.key), f.unit, translate) for f in shown}
        yours = translate("yours")
        width = max((text_columns(text) for text in labels.values()), default=10)
        column = max(12, text_columns(yours), *(text_columns(text) for text in mine.values()))
        lines.append(f"  {'':{width}}  {_padded(yours, column)}  {translate('course kernel')}")
        for f in shown:
            lines.append(f"  {_padded(labels[f.key], width)}  {_padded(mine[f.key], column)}  {theirs[f.key]}")
        if p.problem:
            lines.append(f"  no counters: {p.problem}")
        for sentence in p.advice:
            lines.append(f"  - {sentence}")
    return lines


def _params(params: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items())


def to_json(results: list[CaseResult], runs: list[dict[str, Any]]) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    return {
        "format": "tilelang-course-grader/1",
        "runs": runs,
        "summary": counts,
        "results": [r.to_dict() for r in results],
    }


def _finite(value: Any) -> Any:
    """Strict JSON has no NaN or Infinity: write them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def write_json(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_finite(document), indent=2, allow_nan=False) + "\n")
