"""What every step of one run shares: the run's context, a case's build, and how a verdict is made."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.devices import Device
from grader.outcome import CaseResult
from grader.settings import OPTION
from grader.spec import Case, Kernel, Puzzle


@dataclass
class Context:
    puzzle: Puzzle
    source: Path
    device: Device
    bench: bool
    seed_offset: int
    save_failures: str = ""  # --save-failures DIR: where failed cases' tensors go
    spec_file: Path = Path()  # the trusted module the cases come from (solutions/ unless told)
    limits: Any = None  # grader.pipeline.roofline.Limits: measured at the first bench of the run
    repeat: int = OPTION["repeat"].default  # --repeat: repetitions of each bench figure
    explain: str = ""  # --explain: the kernel whose case is recorded block by block
    block: tuple[int, ...] | None = None  # --block: the block to record (None: where the first wrong element came from)
    learner_params: bool = False  # --param: the bench cases run with the learner's block parameters
    # The part of a case's input seed that comes from its admitted TIR (input_draw); set per case
    draw: int = 0
    # --profile: "gpu" (Nsight Compute's counters and the static estimate) or "static" (the estimate alone)
    profile: str = ""
    # Off only in-process, to replay inputs recorded from the case's seed alone (scripts/crosscheck.py's)
    seed_from_tir: bool = True


@dataclass
class Build:
    tir: Any  # the admitted TIR (what the simulator runs), None if tracing or admission failed
    compiled: Future  # the compiled kernel, or the build error
    options: dict[str, Any] | None = None  # the admitted compile options it was built with


def result_for(ctx: Context, kernel: Kernel, case: Case, status: str, message: str, **extra: Any) -> CaseResult:
    """A verdict on one case of this run, for the arch this run compiles for."""
    extra.setdefault("arch", ctx.device.profile.arch)
    return CaseResult(
        ctx.puzzle.id, kernel.function, case.name, status, dict(case.sizes), message, str(ctx.source), **extra
    )
