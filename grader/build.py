"""Build: compile admitted TIR for one case, and the learner-facing sentences for what TileLang rejects.

No learner object passes through here: tracing is grader.trace's job, admission grader.judge.traced's."""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.spec import Case, Kernel

# Compile-only target when no GPU is present: Hopper, the course's reference machine.
COMPILE_ONLY_TARGET = {"kind": "cuda", "arch": "sm_90a"}
NVCC_HELP = 'No CUDA compiler (nvcc) was found. Install one with: pip install "tilelang[nvcc]"'


OUT_OF_MEMORY = (
    "ran out of memory: when it traces, simulates or compiles, the grader caps its processes at --memory-limit GB "
    "(32 unless set); look for a buffer or tensor far larger than the case needs"
)


def out_of_memory(error: BaseException) -> bool:
    return isinstance(error, MemoryError) or "can't allocate memory" in str(error)


class NotImplementedYet(Exception):
    """The kernel still raises NotImplementedError: the TODO is not filled in."""


@dataclass(frozen=True)
class Signature:
    """What a learner-facing error needs to know of a kernel: its name, tensors and block parameters
    (plain data, so the tracer can get it without the puzzle's spec)."""

    function: str
    tensors: tuple[str, ...]
    blocks: tuple[str, ...]

    @classmethod
    def of(cls, kernel: Kernel) -> Signature:
        blocks = sorted({name for case in kernel.cases for name in case.params})
        return cls(kernel.function, tuple(t.name for t in kernel.inputs), tuple(blocks))


class BuildFailed(Exception):
    """TileLang rejected the kernel. ``summary`` is for the learner, ``trace`` for --verbose."""

    def __init__(self, summary: str, location: str, trace: str, hint: str = ""):
        super().__init__(summary)
        self.summary = summary
        self.location = location
        self.trace = trace
        self.hint = hint


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
    checks = [line for line in lines if "Check failed" in line and (" : " in line or " is false: " in line)]
    if checks:  # "Check failed: <condition> : <what went wrong>", or "... (<condition>) is false: <what>"
        check = checks[0]
        return check.split(" : ", 1)[1] if " : " in check else check.split(" is false: ", 1)[1]
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


def explain(error: BaseException, source: Path, signature: Signature | None = None) -> BuildFailed:
    """The learner-facing BuildFailed for an exception raised while tracing or compiling a kernel:
    one sentence, the learner's file:line, and what to try for the failures newcomers meet."""
    trace = traceback.format_exc()
    where = learner_location(error, source) or tvm_location(error)
    summary, hint = summarize(error), ""
    text = str(error)
    if signature is not None and isinstance(error, TypeError) and (argument := _argument_problem(text, signature)):
        return BuildFailed(argument, "", trace)
    if isinstance(error, AssertionError) and "to_buffer_region" in trace:
        summary = "T.copy cannot match the region it copies from with the region it copies to"
        hint = (
            "Give both sides of T.copy the same number of dimensions: a (BLOCK_M, BLOCK_N) tile is copied "
            "from A[row, col], one index per dimension of A, and a 1-D tile from a 1-D tensor."
        )
    elif "Expected `ir.PrimExpr` but got `tirx.Buffer`" in text:
        summary = "a whole buffer is used where one value belongs (an element holds one value, not a tile)"
        hint = "To move a whole tile use T.copy(tile, B[offset]); to use one element, index the buffer: tile[i]."
    elif "Cannot use and / or / not operator to Expr" in text:
        summary = "Python's max / min / and / or / not cannot decide on values only known when the kernel runs"
        hint = (
            "Write the test as nested ifs, pick values with T.if_then_else(cond, a, b), and use T.max / T.min "
            "rather than Python's max / min."
        )
    elif "Invalid reduce output shape" in text:
        hint = (
            "T.reduce_sum(src, dst, dim=d) (and reduce_max, ...) removes dimension d of src: dst has src's shape "
            "without it. dim=1 sums along each row, dim=0 down each column."
        )
    elif "T.gemm" in text and "shape check failed" in text:
        hint = (
            "T.gemm(A, B, C) multiplies an M x K tile by a K x N tile (or by an N x K one with transpose_B=True) "
            "into an M x N accumulator: check the shapes the tiles were allocated with."
        )
    elif "T.reshape/view shape check failed" in text:
        summary = "T.reshape was given a shape with a different number of elements than the buffer"
        hint = "T.reshape only renames the same memory: the new shape must hold exactly as many elements."
    elif match := re.search(r"StructuralEqual\(\)\(it->second.indices, indices\)\) is false: (\w+): (.*)", text):
        summary = (
            f"one T.Parallel loop uses the fragment `{match.group(1)}` at two different positions, {match.group(2)}"
        )
        hint = (
            "Inside a T.Parallel loop each iteration owns one element of a fragment and must index it the same "
            "way everywhere; to read a neighbour's element, copy the fragment to shared memory (T.alloc_shared) "
            "first."
        )
    elif "can not be inferred" in text or "cannot be inferred" in text:
        hint = (
            "TileLang could not decide how to spread a fragment over the threads: use it in a T.Parallel loop "
            "over its whole declared shape, or in a tile operation (T.copy, T.reduce_*, T.gemm), or declare it "
            "with T.alloc_shared."
        )
    elif re.search(r"Expected integer argument|dtype|data type", text, re.I):
        hint = (
            "An operation got a value of a dtype it does not take: convert it first with T.cast(value, T.int32) "
            "or T.cast(value, T.float32), and check the dtypes in the stub's T.Tensor and T.alloc_* lines."
        )
    elif learner_location(error, source) and not isinstance(error, AssertionError):
        hint = (
            f"Python stopped at that line of {source.name} while TileLang ran your kernel's body to build it: "
            "fix it there (--verbose shows the full trace)."
        )
    return BuildFailed(summary, where, trace, hint)


def _argument_problem(text: str, kernel: Signature) -> str:
    """A sentence for a kernel whose parameters are not the stub's (the grader calls it by name)."""
    tensors, blocks = list(kernel.tensors), list(kernel.blocks)
    expected = f"{kernel.function}({', '.join(tensors + blocks)})"
    missing = re.search(r"missing a required argument: '(\w+)'", text)
    if missing and missing.group(1) in tensors:
        name = missing.group(1)
        return (
            f"`{kernel.function}` never declares its input `{name}` as a tensor: start the body as the stub does, "
            f"with `{name}: T.Tensor(...)`, and build the result with T.* operations inside T.Kernel (torch "
            "cannot run inside a kernel)."
        )
    if missing:
        return (
            f"`{kernel.function}` has a parameter `{missing.group(1)}` that the puzzle does not pass: the grader "
            f"calls {expected}. Keep the stub's parameter names."
        )
    unexpected = re.search(r"unexpected keyword argument '(\w+)'", text)
    if unexpected:
        return (
            f"`{kernel.function}` has no parameter `{unexpected.group(1)}`, which the puzzle passes: the grader "
            f"calls {expected}. Keep the stub's parameter names."
        )
    return ""


def check_signature(tir: Any, kernel: Kernel, case: Case | None = None) -> None:
    """The kernel's tensors are the puzzle's: same names in the same order, and for this case the same
    shapes and dtypes (the grader passes tensors of exactly those)."""
    buffers = [tir.buffer_map[param] for param in tir.params if param in tir.buffer_map]
    names = [buffer.name for buffer in buffers]
    expected = [t.name for t in kernel.inputs + kernel.outputs]
    if names != expected:
        raise BuildFailed(
            f"`{kernel.function}` has tensors ({', '.join(names)}); the puzzle expects inputs "
            f"({', '.join(t.name for t in kernel.inputs)}) and outputs "
            f"({', '.join(t.name for t in kernel.outputs)}) from T.empty, in that order.",
            "",
            "",
        )
    if case is None:
        return
    for buffer, tensor in zip(buffers, kernel.inputs + kernel.outputs):
        shape = tuple(int(s) if hasattr(s, "value") else s for s in buffer.shape)
        want = tensor.concrete_shape(case.sizes)
        declared = f"({', '.join(tensor.shape)}{',' if len(tensor.shape) == 1 else ''})"
        if all(isinstance(s, int) for s in shape) and shape != want:
            raise BuildFailed(
                f"`{kernel.function}` declares `{tensor.name}` with shape {shape}, but for this case the puzzle's "
                f"`{tensor.name}` is {want}: declare it as the stub does, with shape {declared}.",
                "",
                "",
            )
        if str(buffer.dtype) != tensor.dtype:
            raise BuildFailed(
                f"`{kernel.function}` declares `{tensor.name}` as {buffer.dtype}, but the puzzle's `{tensor.name}` "
                f"is {tensor.dtype}: declare it as the stub does (T.{tensor.dtype}) and convert inside the kernel "
                "with T.cast.",
                "",
                "",
            )


def compile_tir(
    tir: Any, target: Any, source: Path, kernel: Kernel | None = None, options: dict[str, Any] | None = None
) -> Any:
    import tilelang

    try:
        return tilelang.compile(tir, target=target, **(options or {}))
    except Exception as error:
        message = str(error)
        if "CUDA installation" in message or "nvcc" in message.lower() and "not found" in message.lower():
            raise BuildFailed(NVCC_HELP, "", traceback.format_exc()) from error
        raise explain(error, source, Signature.of(kernel) if kernel else None) from error
