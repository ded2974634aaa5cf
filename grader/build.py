"""Build: turn the learner's @tilelang.jit function into a compiled kernel for one case."""

from __future__ import annotations

import re
import traceback
from pathlib import Path
from typing import Any

from grader.spec import Case, Kernel

# Compile-only target when no GPU is present: Hopper, the course's reference machine.
COMPILE_ONLY_TARGET = {"kind": "cuda", "arch": "sm_90a"}
NVCC_HELP = 'No CUDA compiler (nvcc) was found. Install one with: pip install "tilelang[nvcc]"'


class NotImplementedYet(Exception):
    """The kernel still raises NotImplementedError: the TODO is not filled in."""


class BuildFailed(Exception):
    """TileLang rejected the kernel. ``summary`` is for the learner, ``trace`` for --verbose."""

    def __init__(self, summary: str, location: str, trace: str):
        super().__init__(summary)
        self.summary = summary
        self.location = location
        self.trace = trace


def kernel_function(module: Any, kernel: Kernel) -> Any:
    """The learner's @tilelang.jit function for ``kernel``, or a BuildFailed saying what is wrong."""
    from tilelang.jit import JITImpl

    function = getattr(module, kernel.function, None)
    where = getattr(module, "__file__", "the file")
    if function is None:
        raise BuildFailed(
            f"{Path(where).name} has no kernel named `{kernel.function}`: keep the name of the stub.",
            "",
            "",
        )
    if not isinstance(function, JITImpl):
        raise BuildFailed(
            f"`{kernel.function}` is not a @tilelang.jit function: the grader compiles and runs "
            "your TileLang kernel, so keep the @tilelang.jit decorator.",
            "",
            "",
        )
    return function


def learner_location(error: BaseException, source: Path) -> str:
    """'file:line' of the deepest traceback frame inside the learner's file, if any."""
    where = ""
    for frame in traceback.extract_tb(error.__traceback__):
        if Path(frame.filename).resolve() == source.resolve():
            where = f"{source.name}:{frame.lineno}"
    return where


def summarize(error: BaseException) -> str:
    """One line out of a TVM/TileLang error: the failed check's message, else its last
    meaningful line, shortened."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    cuda = [line for line in lines if "CUDA error" in line]
    if cuda:  # torch's CUDA errors end with advice about debug builds; the cause comes first
        return cuda[0]
    checks = [line for line in lines if line.startswith("Check failed") and " : " in line]
    if checks:  # "Check failed: <condition> : <what went wrong>"
        return checks[0].split(" : ", 1)[1]
    # Skip traceback frames and the source snippets TVM draws under an error ("18 | code", "^").
    meaningful = [
        line
        for line in lines
        if not line.startswith(("File ", "at ", "|", "-->", "^")) and not re.match(r"^\d+:? ", line)
    ]
    text = (meaningful or lines or [type(error).__name__])[-1]
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(error).__name__}: {text}" if type(error).__name__ not in text else text


def tvm_location(error: BaseException) -> str:
    """'file:line' from the '--> path:line:col' pointer TileLang puts under an error, if any."""
    match = re.search(r"--> (\S+?):(\d+)", str(error))
    return f"{Path(match.group(1)).name}:{match.group(2)}" if match else ""


def trace_tir(function: Any, kernel: Kernel, case: Case, source: Path) -> Any:
    """Run TileLang's frontend on the learner's function for this case's sizes and blocks."""
    try:
        tir = function.get_tir(**case.sizes, **case.params)
    except NotImplementedError as error:
        raise NotImplementedYet(str(error) or "not implemented yet") from error
    except Exception as error:
        where = learner_location(error, source) or tvm_location(error)
        raise BuildFailed(summarize(error), where, traceback.format_exc()) from error
    check_signature(tir, kernel)
    # Outputs are passed in (poisoned) by the grader instead of allocated by TileLang.
    return tir.without_attr("tilelang_out_idx")


def check_signature(tir: Any, kernel: Kernel) -> None:
    names = [tir.buffer_map[param].name for param in tir.params if param in tir.buffer_map]
    expected = [t.name for t in kernel.inputs + kernel.outputs]
    if names != expected:
        raise BuildFailed(
            f"`{kernel.function}` has tensors ({', '.join(names)}); the puzzle expects inputs "
            f"({', '.join(t.name for t in kernel.inputs)}) and outputs "
            f"({', '.join(t.name for t in kernel.outputs)}) from T.empty, in that order.",
            "",
            "",
        )


def compile_tir(tir: Any, target: Any, source: Path) -> Any:
    import tilelang

    try:
        return tilelang.compile(tir, target=target)
    except Exception as error:
        message = str(error)
        if "CUDA installation" in message or "nvcc" in message.lower() and "not found" in message.lower():
            raise BuildFailed(NVCC_HELP, "", traceback.format_exc()) from error
        where = learner_location(error, source) or tvm_location(error)
        raise BuildFailed(summarize(error), where, traceback.format_exc()) from error
