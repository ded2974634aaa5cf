"""Build: compile admitted TIR for one case, and the learner-facing sentences for what TileLang rejects.

No learner object passes through here: tracing is grader.trace's job, admission grader.processes.tracing's."""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.outcome import Cause, CauseKind
from grader.spec import Case, Kernel
from grader.tir import stmt_children

# Compile-only target when no GPU is present: Hopper, the course's reference machine.
COMPILE_ONLY_TARGET = {"kind": "cuda", "arch": "sm_90a"}
# Where no GPU runs the binary (a CPU check simulates the TIR; --device compile only builds), nvcc builds
# the device code unoptimized: the same front end, codegen and ptxas checks, so a kernel that fails to
# build still fails, without cicc's optimizer on unrolled loops (puzzle 08's scalar matmul_naive at
# odd_127x129x131: 75 s at the default -O3, 2.2 s at -O0). The CUDA source the grader reads (TMA stores,
# the static profile's own ptxas run) comes from TileLang's codegen, before nvcc, and does not change.
UNRUN_BUILD_FLAGS = ["-Xcicc", "-O0", "-Xptxas", "-O0"]
NVCC_HELP = 'No CUDA compiler (nvcc) was found. Install one with: pip install -e ".[nvcc]" (in the course\'s folder)'


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
    outputs: tuple[str, ...] = ()

    @classmethod
    def of(cls, kernel: Kernel) -> Signature:
        blocks = sorted({name for case in kernel.cases for name in case.params})
        return cls(
            kernel.function, tuple(t.name for t in kernel.inputs), tuple(blocks), tuple(t.name for t in kernel.outputs)
        )


class BuildFailed(Exception):
    """TileLang rejected the kernel. ``summary`` is for the learner, ``trace`` for --verbose. ``kind``: the
    cause's kind (a grader.outcome.CauseKind value): a build error unless the raiser knows better (no kernel
    of that name, a refusal at admission, ...); ``facts`` its facts."""

    def __init__(
        self,
        summary: str,
        location: str,
        trace: str,
        hint: str = "",
        details: tuple[str, ...] = (),
        kind: str = CauseKind.BUILD_ERROR,
        facts: dict[str, Any] | None = None,
    ):
        super().__init__(summary)
        self.summary = summary
        self.location = location
        self.trace = trace
        self.hint = hint
        self.details = details  # lines shown under the verdict: the generated CUDA line nvcc rejected, say
        self.kind = CauseKind(kind)
        self.facts = dict(facts or {})

    @property
    def cause(self) -> Cause:
        where = {"location": self.location} if self.location else {}
        return Cause(self.kind, {**where, **self.facts})


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


# What newcomers write for a dtype, and TileLang's name for it.
_DTYPE_NAMES = {
    "fp16": "float16",
    "half": "float16",
    "f16": "float16",
    "fp32": "float32",
    "f32": "float32",
    "float": "float32",
    "single": "float32",
    "bf16": "bfloat16",
    "fp64": "float64",
    "double": "float64",
    "int": "int32",
    "i32": "int32",
    "fp8": "float8_e4m3fn",
}
_DTYPE_HINT = (
    "Use a dtype TileLang names: T.float16, T.bfloat16, T.float32, T.int8, T.int32, ... (a string must be one of "
    "those names, 'float32'; float8 is T.float8_e4m3fn or T.float8_e5m2)."
)


def nvcc_errors(text: str) -> list[tuple[int, str]]:
    """(line of the generated .cu file, nvcc's message) for each error in a TileLang compile failure's text
    ("... Compilation error: ... tvm_kernels.cu(23): error: ..."), in order; [] if it holds none."""
    _, found, output = text.partition("Compilation error:")
    if not found:
        return []
    return [(int(m.group(1)), m.group(2).strip()) for m in re.finditer(r"\.cu\((\d+)\): error: (.*)", output)]


def generated_line(text: str, line: int) -> str:
    """Line ``line`` of the CUDA source TileLang prints before "Compilation error:", stripped ("" if absent)."""
    code = text.partition("Compilation error:")[0].splitlines()
    return code[line - 1].strip() if 0 < line <= len(code) else ""


def _nvcc_failure(text: str, trace: str, where: str, signature: Signature | None) -> BuildFailed:
    errors = nvcc_errors(text)
    line, message = errors[0]
    kernel = f" for `{signature.function}`" if signature else ""
    summary = f"nvcc rejected the CUDA that TileLang generated{kernel}: {message}"
    code = generated_line(text, line)
    details = (f"generated CUDA, line {line}: {code[:200]}",) if code else ()
    overload = re.search(r'no instance of (?:overloaded )?function "(\w+)"', message)
    if overload:
        hint = (
            f"CUDA has no `{overload.group(1)}` for the types it was given: compute in float32 (T.cast the "
            "operands, then cast the result once when storing), or use the T.* function the puzzle names."
        )
    else:
        hint = (
            "TileLang accepted the kernel, but CUDA does not compile what it made of it: look at the operation on "
            "the generated line above (most often a math function or a conversion on a dtype CUDA lacks)."
        )
    return BuildFailed(summary, where, trace, hint, details)


def _cuda_type(match: re.Match, source: Path) -> str:
    """'file:line' of the first line of the learner's file that names the dtype CUDA has no type for."""
    dtype = re.sub(r"x\d+$", "", match.group(1))  # float8x2: a vector of float8
    try:
        lines = source.read_text().splitlines()
    except OSError:
        return ""
    pattern = re.compile(rf"""(['"]|\bT\.){re.escape(dtype)}\b""")
    return next((f"{source.name}:{n}" for n, text in enumerate(lines, 1) if pattern.search(text)), "")


def _in_learners_file(node: Any, source: Path) -> int:
    """The line of the learner's file a TIR statement was written on, or 0 (no span, or another file's)."""
    from tilelang.ir import get_stmt_span

    span = get_stmt_span(node)
    if span is None or span.source_name is None:
        return 0
    name = Path(str(span.source_name.name))
    try:
        same = name.resolve() == source.resolve() or name.name == source.name
    except OSError:
        same = False
    return int(span.line) if same else 0


@dataclass(frozen=True)
class ForeignRead:
    """A fragment read inside a T.Parallel loop at an element another thread holds."""

    buffer: str
    access: str  # "P[i, c]"
    index: str  # "c": the index that is none of the parallel loop's variables
    loop: str  # "(i, d)": the parallel loop's variables
    line: int  # in the learner's file, 0 when unknown


def foreign_fragment_reads(tir: Any, source: Path) -> list[ForeignRead]:
    """Fragment reads inside a T.Parallel loop whose index along some axis uses none of that loop's
    variables but a variable of a loop outside it (``acc[i, d] += P[i, c] * ...`` in ``T.Parallel(BLOCK_M, D)``
    under ``for c in T.serial(BLOCK_N)``): each iteration of the parallel loop runs on the thread that owns
    its elements, and the element it reads there belongs to another thread, so TileLang cannot lay the
    fragment out. In program order."""
    from tilelang import tvm

    found: list[ForeignRead] = []

    def scan(node: Any, parallel: list[Any], line: int) -> None:
        if isinstance(node, tvm.tirx.For) and node.kind == tvm.tirx.ForKind.PARALLEL:
            line = _in_learners_file(node, source) or line
            scan(node.body, parallel + [node.loop_var], line)
            return
        if isinstance(node, tvm.tirx.For):
            scan(node.body, [], _in_learners_file(node, source) or line)
            return
        if isinstance(node, tvm.tirx.BufferStore) and parallel:
            here = _in_learners_file(node, source) or line
            names = set(parallel)

            def load(expr: Any) -> None:
                if not isinstance(expr, tvm.tirx.BufferLoad) or str(expr.buffer.scope()) != "local.fragment":
                    return
                for index in expr.indices:
                    used = set(tvm.tirx.analysis.undefined_vars(index))
                    if used and not used & names:
                        indices = ", ".join(str(i) for i in expr.indices)
                        loop = "(" + ", ".join(v.name for v in parallel) + ")"
                        read = ForeignRead(expr.buffer.name, f"{expr.buffer.name}[{indices}]", str(index), loop, here)
                        found.append(read)
                        return

            tvm.tirx.stmt_functor.post_order_visit(node.value, load)
            return
        for child in stmt_children(node):
            scan(child, parallel, line)

    scan(tir.body, [], 0)
    return found


LAYOUT_FAILURES = ("CanProveEqual(abs(source->scale), 1)", "LayoutInference", "InferLayout")


def _layout_failure(text: str, trace: str, source: Path, tir: Any) -> BuildFailed:
    """TileLang's layout inference gave up: name the fragment read that made it, with its line."""
    reads = foreign_fragment_reads(tir, source) if tir is not None else []
    if reads:
        read = reads[0]
        summary = (
            f"TileLang cannot lay out the fragment `{read.buffer}` over the threads: the T.Parallel loop over "
            f"{read.loop} reads `{read.access}`, whose index `{read.index}` is none of that loop's variables, so "
            f"each iteration needs elements of `{read.buffer}` that other threads hold"
        )
        where = f"{source.name}:{read.line}" if read.line else ""
        hint = (
            "A fragment's element lives in the registers of the one thread that owns it, and only the T.Parallel "
            f"iteration at that element can read it. A tile that every thread reads across, as `{read.buffer}` is "
            f"here, belongs in shared memory: allocate it with T.alloc_shared and fill it with T.copy (TileLang "
            "puts the barrier in)."
        )
        return BuildFailed(summary, where, trace, hint)
    summary = "TileLang's layout inference failed: it could not decide which thread holds each element of a fragment"
    hint = (
        "Use each fragment (T.alloc_fragment) only at the elements its T.Parallel iteration owns: index it by the "
        "parallel loop's own variables, the same way everywhere; a tile that threads read across (a serial "
        "loop's index, a neighbour's element) belongs in shared memory (T.alloc_shared)."
    )
    return BuildFailed(summary, "", trace, hint)


def _gemm_fragment_operands(tir: Any) -> list[str]:
    """Names of the fragments (registers) that some T.gemm reads as its A or B operand."""
    if tir is None:
        return []
    from tilelang import tvm

    from grader.tir import region_buffer

    found: list[str] = []

    def visit(node: Any) -> None:
        if isinstance(node, tvm.tirx.Call) and getattr(node.op, "name", "") == "tl.tileop.gemm":
            for arg in node.args[:2]:
                buffer = region_buffer(arg)
                if buffer is not None and str(buffer.scope()) == "local.fragment" and buffer.name not in found:
                    found.append(buffer.name)

    tvm.tirx.stmt_functor.post_order_visit(tir.body, visit)
    return found


def _line_naming(source: Path, *patterns: str) -> str:
    """``file:line`` of the first line of the learner's file that matches one of ``patterns``, tried in order."""
    try:
        lines = source.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    for pattern in patterns:
        for number, line in enumerate(lines, 1):
            if re.search(pattern, line.split("#")[0]):
                return f"{source.name}:{number}"
    return ""


def _layout_conflict(conflict: re.Match, trace: str, source: Path, tir: Any) -> BuildFailed:
    """TileLang's "Layout infer conflict between X and Y in T.Parallel loop": kept as TileLang says it, with the
    line that joins the two, and, where one of them is a T.gemm operand held in registers, the way around it."""
    first, second = conflict.group(1), conflict.group(2)
    said = conflict.group(0)
    either = f"(?:{re.escape(first)}|{re.escape(second)})"
    where = _line_naming(
        source,
        rf"T\.copy\(\s*{either}\b[^,]*,\s*{either}\b",
        rf"\b{re.escape(second)}\s*=\s*T\.alloc_fragment",
    )
    operand = next((n for n in (second, first) if n in _gemm_fragment_operands(tir)), None)
    summary = (
        f'TileLang could not give `{first}` and `{second}` one layout over the threads ("{said}"): a T.Parallel '
        "loop, or a T.copy, joins two fragments whose layouts were already fixed differently"
    )
    if operand is not None:
        hint = (
            f"`{operand}` is a fragment that T.gemm reads, so the MMA decides how its elements sit in the threads; at "
            "this case's tile and thread count that layout cannot line up with the other fragment's. Keep "
            f"`{operand}` in shared memory instead (`{operand} = T.alloc_shared(...)`): T.copy stores into it and "
            "T.gemm reads a shared operand at any tile size."
        )
    else:
        hint = (
            f"Move one of them through shared memory (T.alloc_shared), which has no thread layout: T.copy `{first}` "
            f"into a shared tile and read `{second}`'s values from there."
        )
    return BuildFailed(summary, where, trace, hint)


# TileLang's checks when it swizzles a shared tile for the Tensor Cores (src/layout/gemm_layouts.cc): the tile's
# rows ("stride") must come in eights and each row's length ("continuous") in whole 16-byte vectors times 2 or 8.
SWIZZLE_CHECK = re.compile(r"\b(stride|continuous)=(\d+)(?:, vector_size=(\d+))?")


def _shared_tiles_with(tir: Any, size: int) -> list[str]:
    """Names of the shared tiles whose last two dimensions include ``size``: the tile a swizzle check names."""
    if tir is None:
        return []
    from tilelang import tvm

    found: list[str] = []

    def visit(node: Any) -> None:
        buffers = getattr(node, "alloc_buffers", None) or []
        for buffer in buffers:
            dims = [int(d) for d in buffer.shape[-2:] if isinstance(d, tvm.tirx.IntImm)]
            if str(buffer.scope()).startswith("shared") and size in dims and buffer.name not in found:
                found.append(buffer.name)

    tvm.tirx.stmt_functor.post_order_visit(tir.body, visit)
    return found


def _swizzle_failure(check: re.Match, trace: str, source: Path, tir: Any) -> BuildFailed:
    """A shared tile TileLang must swizzle for the Tensor Cores has a size its swizzle cannot take (rows not in
    eights, or a row of 66 elements): TileLang's words kept, the tile and its line named, the sizes that work."""
    what, size = check.group(1), int(check.group(2))
    tiles = _shared_tiles_with(tir, size)
    tile = f"`{tiles[0]}`" if tiles else "a shared tile"
    where = _line_naming(source, rf"\b{re.escape(tiles[0])}\s*=\s*T\.alloc_shared") if tiles else ""
    said = check.group(0)
    if what == "stride":
        summary = (
            f'TileLang cannot swizzle {tile} for the Tensor Cores ("{said}"): it has {size} rows, and TileLang '
            "swizzles the tiles T.gemm reads in groups of 8 rows"
        )
    else:
        summary = (
            f'TileLang cannot swizzle {tile} for the Tensor Cores ("{said}"): its rows are {size} elements long, and '
            "TileLang swizzles the tiles T.gemm reads in 16-byte pieces across a row, which needs whole patterns of "
            "them (64 fp16 elements always work)"
        )
    hint = (
        "Give the shared tiles that T.gemm reads whole sizes: a multiple of 8 rows, and rows a multiple of 64 fp16 "
        "elements long where the tile allows. Round a halo up to such a size, not by the one or two elements it "
        "needs. Do not pad rows against bank conflicts: TileLang swizzles these tiles itself, which removes them."
    )
    return BuildFailed(summary, where, trace, hint)


def failure_of(
    error: BaseException, source: Path, signature: Signature | None = None, function_end: int = 0, tir: Any = None
) -> BuildFailed:
    """The learner-facing BuildFailed for an exception raised while tracing or compiling a kernel:
    one sentence, the learner's file:line, and what to try for the failures newcomers meet.
    ``function_end`` is the last line of the kernel's function, where a missing ``return`` belongs;
    ``tir``, the admitted TIR being compiled, where the failure is read from the program."""
    trace = traceback.format_exc()
    where = learner_location(error, source) or tvm_location(error)
    summary, hint = summarize(error), ""
    text = str(error)
    name = f"`{signature.function}`" if signature else "the kernel"
    if signature is not None and isinstance(error, TypeError) and (argument := _argument_problem(text, signature)):
        return BuildFailed(argument, "", trace)
    if nvcc_errors(text):
        return _nvcc_failure(text, trace, where, signature)
    if conflict := re.search(r"Layout infer conflict between (\w+) and (\w+) in T\.Parallel loop", text):
        return _layout_conflict(conflict, trace, source, tir)
    if "Check failed" in text and "gemm_layouts" in trace + text and (check := SWIZZLE_CHECK.search(text)):
        return _swizzle_failure(check, trace, source, tir)
    known = re.search(r"StructuralEqual\(\)\(it->second.indices, indices\)\) is false", text)  # said below
    layout = LAYOUT_FAILURES[0] in text or ("Check failed" in text and any(n in trace for n in LAYOUT_FAILURES[1:]))
    if layout and not known:
        return _layout_failure(text, trace, source, tir)
    if "Infinite while loop detected" in text:
        summary = (
            "a `while` loop whose condition is always true (`while True`) would never end, and TileLang refuses it"
        )
        hint = (
            "Give the loop a number of steps: for k in T.serial(n), with n the steps the sizes need. A T.While "
            "needs a condition that a value the loop changes makes false (a T.alloc_var), and a kernel has no break."
        )
    elif isinstance(error, TypeError) and (
        match := re.search(r"(list|tuple) indices must be integers or slices, not (\w+)", text)
    ):
        summary = (
            f"a Python {match.group(1)} is indexed by a kernel value ({match.group(2)}), which is known only when "
            "the kernel runs"
        )
        hint = (
            "Block and thread indices, loop variables of T.serial / T.Parallel, and range() over a size TileLang "
            "keeps symbolic are not Python ints: keep the values in a buffer (T.alloc_local, T.alloc_fragment) and "
            "index that, or pick with T.if_then_else; range() over a block parameter (a Python int) unrolls."
        )
    elif "Not all tensor allocated from `T.empty` are returned" in text:
        outputs = ", ".join(signature.outputs) if signature and signature.outputs else ""
        summary = f"{name} makes its output with T.empty but does not return it"
        hint = (
            f"End the kernel as the stub does, with `return {outputs}`."
            if outputs
            else ("End the kernel as the stub does, returning every tensor made with T.empty.")
        )
        where = where or (f"{source.name}:{function_end}" if function_end else "")
    elif match := re.search(r"Cannot convert type (\w+) to CUDA type", text):
        summary = f"CUDA has no type for the dtype `{match.group(1)}` used in {name}"
        hint = _DTYPE_HINT
        where = where or _cuda_type(match, source)
    elif isinstance(error, AssertionError) and "to_buffer_region" in trace:
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
    elif match := re.search(r"unknown dtype `([^`]+)`|module 'tilelang.language' has no attribute '(\w+)'", text):
        given = match.group(1) or match.group(2)
        known = _DTYPE_NAMES.get(given.lower())
        if match.group(1) or known:
            summary = f"`{given}` is not a dtype TileLang knows"
            hint = f"Write T.{known} (or the string '{known}')." if known else _DTYPE_HINT
        else:
            summary = f"TileLang has no `T.{given}`"
            hint = (
                "Check the spelling against the puzzle's text and the stub: TileLang's names are T.Kernel, "
                "T.Parallel, T.serial, T.copy, T.alloc_fragment, ... and the dtypes T.float16, T.float32, ..."
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
            kind=CauseKind.SIGNATURE,
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
                kind=CauseKind.SIGNATURE,
            )
        if str(buffer.dtype) != tensor.dtype:
            raise BuildFailed(
                f"`{kernel.function}` declares `{tensor.name}` as {buffer.dtype}, but the puzzle's `{tensor.name}` "
                f"is {tensor.dtype}: declare it as the stub does (T.{tensor.dtype}) and convert inside the kernel "
                "with T.cast.",
                "",
                "",
                kind=CauseKind.SIGNATURE,
            )


def compile_tir(
    tir: Any,
    target: Any,
    source: Path,
    kernel: Kernel | None = None,
    options: dict[str, Any] | None = None,
    runs: bool = True,
) -> Any:
    """``runs=False``: no GPU will launch the result, so its device code is built unoptimized (UNRUN_BUILD_FLAGS)."""
    import tilelang

    options = dict(options or {})
    if not runs:
        options["compile_flags"] = [*(options.get("compile_flags") or []), *UNRUN_BUILD_FLAGS]
    try:
        return tilelang.compile(tir, target=target, **options)
    except Exception as error:
        message = str(error)
        if "CUDA installation" in message or "nvcc" in message.lower() and "not found" in message.lower():
            raise BuildFailed(NVCC_HELP, "", traceback.format_exc(), kind=CauseKind.SETUP) from error
        raise failure_of(error, source, Signature.of(kernel) if kernel else None, tir=tir) from error


def function_end(function: Any) -> int:
    """The last line of a @tilelang.jit function's body in its file (0 if it cannot be read)."""
    code = getattr(getattr(getattr(function, "func", None), "orig_func", None), "__code__", None)
    try:
        return max((line for _, _, line in code.co_lines() if line), default=0) if code else 0
    except (AttributeError, TypeError):
        return 0
