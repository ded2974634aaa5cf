"""Report: per-case lines for a person, a bench table, and a JSON document for machines."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from grader import outcome
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
    """The lines one case prints: a verdict line, then details for anything but a pass."""
    label = LABELS.get(result.status, result.status)
    head = f"  {label:5} {result.case:22} {sizes_text(result.sizes):26} {result.message}"
    lines = [head.rstrip()]
    if result.status in (outcome.PASSED, outcome.COMPILED, outcome.NOT_APPLICABLE):
        return lines
    lines += [f"        {detail}" for detail in result.details]
    if result.hint:
        lines.append(f"        hint: {result.hint}")
    if result.saved:
        lines.append(f"        saved: {result.saved}")
    if result.replay:
        lines.append(f"        replay: {result.replay}")
    if verbose and result.trace:
        lines += ["        " + line for line in result.trace.rstrip().splitlines()]
    return lines


def bench_lines(results: list[CaseResult]) -> list[str]:
    rows = [r for r in results if r.bench is not None]
    if not rows:
        return []
    name_width = max(len("kernel"), *(len(f"{r.puzzle} {r.kernel}") for r in rows))
    case_width = max(len("case"), *(len(r.case) for r in rows))
    lines = [
        f"{'kernel':{name_width}} {'case':{case_width}} {'ms':>9} {'TFLOP/s':>8} {'GB/s':>8} {'torch ms':>9} "
        f"{'vs torch':>9}",
    ]
    for r in rows:
        b = r.bench
        tflops = f"{b.tflops:8.1f}" if b.tflops is not None else f"{'-':>8}"
        gbps = f"{b.gbps:8.0f}" if b.gbps is not None else f"{'-':>8}"
        name = f"{r.puzzle} {r.kernel}"
        lines.append(
            f"{name:{name_width}} {r.case:{case_width}} {b.kernel_ms:9.4f} {tflops} {gbps} {b.torch_ms:9.4f} "
            f"{b.speedup:8.2f}x"
        )
    lines.append("vs torch = torch time / kernel time (above 1.00x: faster than torch); median of CUDA-event timings")
    return lines


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
