"""--save-failures: a failed case's tensors and facts in one file, and the command that grades it again."""

from __future__ import annotations

import platform
import shlex
from pathlib import Path
from typing import Any

from grader.spec import Case, Kernel


def replay_command(puzzle_id: str, source: Path, kernel: str, case: str, seed_offset: int, device: str) -> str:
    """The one command that grades this case alone, on the same inputs, on the same kind of device."""
    return (
        f"python -m grader {puzzle_id} --file {shlex.quote(str(source))} -k {kernel} --exact --case {case} "
        f"--seed-offset {seed_offset} --device {device}"
    )


def versions(device: str) -> dict[str, str]:
    import tilelang
    import torch

    return {
        "python": platform.python_version(),
        "torch": str(torch.__version__),
        "tilelang": str(getattr(tilelang, "__version__", "unknown")),
        "device": device,
    }


def save_failure(
    directory: Path,
    puzzle_id: str,
    source: Path,
    kernel: Kernel,
    case: Case,
    seed_offset: int,
    draw: int,
    device: tuple[str, str],
    tensors: dict[str, list[Any]],
) -> tuple[Path, str]:
    """Write ``directory/pNN_kernel_case.pt`` (a dict: inputs, expected, actual, seed, sizes, params,
    versions, replay) and return its path and the replay command. The inputs' seed is the case's plus
    the --seed-offset plus ``draw``, the part the judge draws from the kernel's TIR (the replay draws it
    again). ``device`` is (mode, name): mode "cpu" for a simulated case, "cuda" for one run on the GPU."""
    import torch

    mode, name = device
    command = replay_command(puzzle_id, source, kernel.function, case.name, seed_offset, mode)
    names = {
        "inputs": [t.name for t in kernel.inputs],
        "expected": [t.name for t in kernel.outputs],
        "actual": [t.name for t in kernel.outputs],
    }
    record = {
        "puzzle": puzzle_id,
        "kernel": kernel.function,
        "case": case.name,
        "file": str(source),
        "seed": case.seed + seed_offset + draw,
        "seed_offset": seed_offset,
        "sizes": dict(case.sizes),
        "params": dict(case.params),
        "versions": versions(name if mode == "cuda" else "simulated"),
        "replay": command,
        **{
            part: {n: x.detach().cpu().clone() for n, x in zip(names[part], tensors[part])}
            for part in ("inputs", "expected", "actual")
        },
    }
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"p{puzzle_id}_{kernel.function}_{case.name}.pt"
    torch.save(record, path)
    return path, command
