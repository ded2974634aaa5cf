"""Where an instructor's grading runs: on a usable CUDA GPU, or on the CPU only when the instructor says so
(without a GPU the large cases are only compiled, so a kernel wrong on them would score)."""

from __future__ import annotations

import os

from grader import settings

DEVICE_ENV = settings.DEVICE  # "cpu": grade without a GPU (set by --device cpu, read by JudgeChecks)


DEVICES = ("cuda", "cpu")


CPU_HINT = "--device cpu"


def gpu_problem() -> str:
    """Why no CUDA GPU is usable here, as the judge would find it (torch, CUDA_VISIBLE_DEVICES); "" if one is."""
    try:
        import torch
    except ImportError as error:
        return f"torch cannot be imported ({error})"
    if torch.cuda.is_available():
        return ""
    pinned = os.environ.get("CUDA_VISIBLE_DEVICES")
    return "torch sees no CUDA GPU" + (f" with CUDA_VISIBLE_DEVICES={pinned}" if pinned is not None else "")


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


def chosen_device(device: str | None) -> str:
    """``--device`` as given, else $TILELANG_COURSE_DEVICE, else cuda."""
    return device or os.environ.get(DEVICE_ENV, "") or "cuda"
