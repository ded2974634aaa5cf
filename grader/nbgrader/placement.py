"""Where an instructor's grading runs: on a usable CUDA GPU, or on the CPU only when the instructor says so
(without a GPU the large cases are only compiled, so a kernel wrong on them would score)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from grader import settings

CPU_HINT = f"{settings.INSTRUCTOR_OPTION['device'].flag} cpu"  # the shards' words; JudgeChecks gives its own


def gpu_problem() -> str:
    """Why no CUDA GPU is usable here, as the judge would find it (torch, CUDA_VISIBLE_DEVICES); "" if one is."""
    try:
        import torch
    except ImportError as error:
        return f"torch cannot be imported ({error})"
    if torch.cuda.is_available():
        return ""
    pinned = os.environ.get("CUDA_VISIBLE_DEVICES")
    return "torch sees no CUDA GPU" if pinned is None else f"torch sees no CUDA GPU with CUDA_VISIBLE_DEVICES={pinned}"


def device_refusal(device: str, how: str = CPU_HINT) -> str:
    """Why an instructor's grading on ``device`` must not start ("" when it may): without a usable GPU
    only the small cases are simulated and the rest only compiled, so a wrong kernel can score."""
    if device == "cpu":
        return ""
    problem = gpu_problem()
    if not problem:
        return ""
    return (
        f"refusing to grade: no CUDA GPU is usable here ({problem}). Without one the small cases are simulated "
        f"on the CPU and the others only compiled, so a kernel wrong on a large case would score. To grade "
        f"on the CPU anyway, pass {how}."
    )


# ------------------------------------------------------------------------------ a refused autograde, on record

LOGS = "logs"  # DIR/logs/ASSIGNMENT/: each student's autograde log (grader.nbgrader.shards) and this record
REFUSED = "autograde-refused.json"


def refusal_path(course: Path, assignment: str) -> Path:
    return Path(course) / LOGS / assignment / REFUSED


def record_refusal(course: Path, assignment: str, why: str) -> None:
    """Note that an autograde of ``assignment`` was refused, and why in a few words ("no GPU; say
    --JudgeChecks.device=cpu"): autograde-status then says "not graded: refused (...)" of each submission that
    is not graded, not "failed". The next autograde that is allowed to grade removes the note."""
    path = refusal_path(course, assignment)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"why": why}) + "\n")
    except OSError:
        pass  # the refusal itself was said; only the status's wording is lost


def clear_refusal(course: Path, assignment: str) -> None:
    try:
        refusal_path(course, assignment).unlink(missing_ok=True)
    except OSError:
        pass


def recorded_refusal(course: Path, assignment: str) -> str:
    """Why the last autograde of ``assignment`` was refused, "" when it was not (or none was)."""
    try:
        return str(json.loads(refusal_path(course, assignment).read_text()).get("why", ""))
    except (OSError, ValueError, AttributeError):
        return ""
