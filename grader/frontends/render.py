"""Report: per-case lines for a person, a bench table, and a JSON document for machines."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from grader import outcome
from grader.i18n import tr
from grader.outcome import CaseResult

LABELS = {
    outcome.PASSED: "PASS",
    outcome.COMPILED: "BUILT",
    outcome.FAILED: "FAIL",
    outcome.NOT_IMPLEMENTED: "TODO",
    outcome.ERROR: "ERROR",
    outcome.CRASHED: "CRASH",
    outcome.TIMED_OUT: "HANG",
    outcome.NOT_RUN: "SKIP",
    outcome.SETUP: "SETUP",
    outcome.UNSUPPORTED: "NOSIM",
    outcome.NOT_APPLICABLE: "N/A",
}


def sizes_text(sizes: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in sizes.items())


def case_lines(result: CaseResult, verbose: bool = False) -> list[str]:
    """The lines one case prints: a verdict line, then details for anything but a pass (in the grader's
    language: grader.i18n.tr; the labels stay as they are)."""
    label = LABELS.get(result.status, result.status)
    head = f"  {label:5} {result.case:22} {sizes_text(result.sizes):26} {tr(result.message)}"
    lines = [head.rstrip()]
    if result.status in (outcome.PASSED, outcome.COMPILED, outcome.NOT_APPLICABLE):
        return lines
    lines += [f"        {tr(detail)}" for detail in result.details]
    if result.hint:
        lines.append("        " + tr(f"hint: {result.hint}"))
    if result.saved:
        lines.append("        " + tr(f"saved: {result.saved}"))
    if result.replay:
        lines.append("        " + tr(f"replay: {result.replay}"))
    if verbose and result.trace:
        lines += ["        " + line for line in result.trace.rstrip().splitlines()]
    return lines


# Verdicts whose words repeat from case to case when the cause is the file or the kernel, not the case: a
# syntax error, a rejected kernel, a machine that cannot grade. Printed in full once, then folded.
FOLDED = (outcome.ERROR, outcome.SETUP)
FOLD_NAMES = 4  # case names listed on a folded line


def repeat_key(source: str, result: CaseResult) -> tuple[str, ...] | None:
    """What makes two cases' verdicts the same words (file, status, message, hint, details), or None for a
    verdict that is never folded."""
    if result.status not in FOLDED:
        return None
    return (source, result.status, result.message, result.hint, *result.details)


def repeated_line(results: list[CaseResult], first: str) -> str:
    """One line for cases whose verdict repeats ``first``'s ("kernel case") word for word."""
    label = LABELS.get(results[0].status, results[0].status)
    names = " ".join(r.case for r in results[:FOLD_NAMES]) + (" ..." if len(results) > FOLD_NAMES else "")
    more = " more" if first.startswith(f"{results[0].kernel} ") else ""  # the first was this kernel's own
    return f"  {label:5} " + tr(f"{len(results)}{more} case(s) ({names}): the same as {first} above")


def bench_lines(results: list[CaseResult]) -> list[str]:
    rows = [r for r in results if r.bench is not None]
    if not rows:
        return []
    name_width = max(len("kernel"), *(len(f"{r.puzzle} {r.kernel}") for r in rows))
    case_width = max(len("case"), *(len(r.case) for r in rows))
    lines = [
        f"{'kernel':{name_width}} {'case':{case_width}} {'ms':>9} {'TFLOP/s':>8} {'GB/s':>8} {'roofline':>12} "
        f"{'torch ms':>9} {'vs torch':>9}",
    ]
    for r in rows:
        b = r.bench
        tflops = f"{b.tflops:8.1f}" if b.tflops is not None else f"{'-':>8}"
        gbps = f"{b.gbps:8.0f}" if b.gbps is not None else f"{'-':>8}"
        percent = b.roofline_percent
        roof = f"{percent:5.0f}% {b.bound[:3]:>3}" if percent is not None else "-"
        name = f"{r.puzzle} {r.kernel}"
        lines.append(
            f"{name:{name_width}} {r.case:{case_width}} {b.kernel_ms:9.4f} {tflops} {gbps} {roof:>12} "
            f"{b.torch_ms:9.4f} {b.speedup:8.2f}x"
        )
        for other, ms in b.others.items():
            lines.append(f"{'':{name_width}} {'':{case_width}}   vs {other}: {ms:.4f} ms, {ms / b.kernel_ms:.2f}x")
        if b.params:
            lines.append(f"{'':{name_width}} {'':{case_width}}   with your parameters " + _params(b.params))
    lines.append("vs torch = torch time / kernel time (above 1.00x: faster than torch); median of CUDA-event timings")
    lines.append(
        "roofline = the shortest time the work allows / kernel time, bound by memory (mem: bytes at the copy "
        "bandwidth) or compute (com: flops at the Tensor Core peak)"
    )
    how = next((r.bench.limits for r in rows if r.bench.limits), "")
    if how:
        lines.append(f"limits on this GPU: {how}")
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
