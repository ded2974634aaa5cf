"""Step 1, trace: a @tilelang.jit function and a case's sizes in, its TIR out.

The judge never runs this on a learner's file: the tracer process does (grader.trace, untrusted), and the
judge admits what it answers (grader.pipeline.admit). The judge and the course's own tools run it
in-process on trusted files only (the solutions, for a reference's shared memory or a notebook's experiment).
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from grader.outcome import CauseKind
from grader.pipeline.build import BuildFailed, NotImplementedYet, Signature, failure_of, function_end


class TracerGone(Exception):
    """The tracer gave no usable answer: ``status`` is the verdict (timed_out or error)."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status, self.message = status, message


# Where a module run cell by cell keeps, per name its failed cell defined, why that cell failed.
CELL_ERRORS = "__grader_cell_errors__"


def kernel_function(module: Any, kernel: Any, known: tuple[str, ...] = ()) -> Any:
    """The learner's @tilelang.jit function for ``kernel`` (anything with a ``function`` name), or a
    BuildFailed saying what is wrong. ``known`` names every kernel of the puzzle, so a jit function
    under another name can be pointed out as the likely renamed one."""
    from tilelang.jit import JITImpl

    failed = getattr(module, CELL_ERRORS, {}).get(kernel.function)
    if failed is not None:
        raise BuildFailed(failed[0], "", failed[1], kind=CauseKind.LOAD_ERROR)
    function = getattr(module, kernel.function, None)
    where = Path(getattr(module, "__file__", "the file")).name
    if function is None:
        others = [
            name
            for name, value in vars(module).items()
            if isinstance(value, JITImpl) and name not in known and not name.startswith("_")
        ]
        close = difflib.get_close_matches(kernel.function, others, n=1, cutoff=0.3)
        if close or len(others) == 1:
            found = (close or others)[0]
            raise BuildFailed(
                f"{where} has no kernel named `{kernel.function}`, but it has a @tilelang.jit function "
                f"`{found}`: rename it `{kernel.function}` (the grader finds kernels by the stub's names).",
                "",
                "",
                kind=CauseKind.MISSING_KERNEL,
                facts={"renamed": found},
            )
        raise BuildFailed(
            f"{where} has no kernel named `{kernel.function}`: keep the stub's function, with its name "
            f"and its @tilelang.jit decorator, and fill in its TODO.",
            "",
            "",
            kind=CauseKind.MISSING_KERNEL,
        )
    if not isinstance(function, JITImpl):
        raise BuildFailed(
            f"`{kernel.function}` is a plain Python function, not a @tilelang.jit kernel: the grader "
            "compiles your TileLang kernel and runs it on the GPU itself, so an answer computed in Python "
            "(with torch, say) does not count. Keep the stub's @tilelang.jit decorator and its T.Kernel body.",
            "",
            "",
            kind=CauseKind.NOT_A_KERNEL,
        )
    return function


def trace(function: Any, signature: Signature, arguments: dict[str, Any], source: Path) -> Any:
    """Run TileLang's frontend on the learner's function for these sizes and block parameters."""
    try:
        return function.get_tir(**arguments)
    except NotImplementedError as error:
        raise NotImplementedYet(str(error) or "not implemented yet") from error
    except Exception as error:
        raise failure_of(error, source, signature, function_end(function)) from error


def trace_tir(function: Any, kernel: Any, case: Any, source: Path) -> Any:
    """In-process tracing for the grader's own tests and scripts: trace, then admit the TIR as the
    judge does (through its JSON, every name the judge's; signature, shapes, no host calls)."""
    from tilelang import tvm

    from grader.pipeline.admit import admit, load_tir

    tir = trace(function, Signature.of(kernel), {**case.sizes, **case.params}, source)
    return admit(load_tir(tvm.ir.save_json(tir), kernel), kernel, case)


def jit_options(function: Any) -> dict[str, Any]:
    """The compile options the learner gave ``@tilelang.jit(...)`` (pass configs, nvcc flags), as plain
    data: the judge compiles the traced TIR itself and passes on the ones it allows."""
    options: dict[str, Any] = {}
    configs = getattr(function, "pass_configs", None)
    if configs:
        options["pass_configs"] = {str(getattr(k, "value", k)): v for k, v in dict(configs).items()}
    flags = getattr(function, "compile_flags", None)
    if flags:
        options["compile_flags"] = [flags] if isinstance(flags, str) else list(flags)
    return options
