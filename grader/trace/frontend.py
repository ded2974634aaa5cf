"""Learner objects, in the tracer process only: import the learner's file, find its kernels, trace them.

Everything here may be patched by the learner's own module (it runs in the same process), so nothing
here decides a verdict: it produces TIR and learner-facing sentences that the judge validates.
"""

from __future__ import annotations

import difflib
import re
import traceback
from pathlib import Path
from typing import Any

from grader.pipeline.build import (
    OUT_OF_MEMORY,
    BuildFailed,
    NotImplementedYet,
    Signature,
    explain,
    function_end,
    learner_location,
    out_of_memory,
    summarize,
)

# Where a module run cell by cell keeps, per name its failed cell defined, why that cell failed.
CELL_ERRORS = "__grader_cell_errors__"
DEFINED = re.compile(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)|^([A-Za-z_]\w*)\s*=", re.MULTILINE)


def load_learner(source: Path) -> tuple[Any, str, str]:
    """The learner's module, or a one-line reason it cannot be imported (and the trace)."""
    from grader.discover import CELL_END, load_module

    try:
        text = source.read_text()
        if f"\n{CELL_END}\n" in text:
            return load_cells(source, text.split(f"\n{CELL_END}\n")), "", ""
        return load_module(source), "", ""
    except SyntaxError as error:
        return (
            None,
            f"{source.name}:{error.lineno}: syntax error: {error.msg}. Python cannot read the file, so none of its "
            f"kernels can be graded: fix line {error.lineno} (a bracket left open on an earlier line shows up here "
            "too) and run the grader again.",
            traceback.format_exc(),
        )
    except Exception as error:
        where = learner_location(error, source) or source.name
        if out_of_memory(error):
            return None, f"{where}: importing the file {OUT_OF_MEMORY}", traceback.format_exc()
        return None, f"{where}: importing the file failed: {summarize(error)}", traceback.format_exc()


def load_cells(source: Path, cells: list[str]) -> Any:
    """A module built from notebook cells, run one cell after another in one namespace, as the notebook
    ran them: a cell that raises (a syntax error too) is recorded against the names it defines, and the
    rest go on, so it costs only its own kernels (``kernel_function`` reports it for them)."""
    import sys
    import types

    from grader.discover import module_name

    module = types.ModuleType(module_name(source))
    module.__file__ = str(source)
    sys.modules[module.__name__] = module  # TileLang's decorator reads each function's source through it
    errors: dict[str, tuple[str, str]] = {}
    line = 1
    for cell in cells:
        code = "\n" * (line - 1) + cell  # the cell at its own lines of the file: tracebacks and inspect agree
        line += cell.count("\n") + 2  # the cell, its newline and the CELL_END line
        try:
            exec(compile(code, str(source), "exec"), module.__dict__)
        except Exception as error:
            where = learner_location(error, source) or source.name
            if isinstance(error, SyntaxError):
                where = f"{source.name}:{error.lineno}"
            problem = (f"{where}: its cell raised when it ran: {summarize(error)}", traceback.format_exc())
            for match in DEFINED.finditer(cell):
                errors[match.group(1) or match.group(2)] = problem
    module.__dict__[CELL_ERRORS] = errors
    return module


def kernel_function(module: Any, kernel: Any, known: tuple[str, ...] = ()) -> Any:
    """The learner's @tilelang.jit function for ``kernel`` (anything with a ``function`` name), or a
    BuildFailed saying what is wrong. ``known`` names every kernel of the puzzle, so a jit function
    under another name can be pointed out as the likely renamed one."""
    from tilelang.jit import JITImpl

    failed = getattr(module, CELL_ERRORS, {}).get(kernel.function)
    if failed is not None:
        raise BuildFailed(failed[0], "", failed[1])
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
            )
        raise BuildFailed(
            f"{where} has no kernel named `{kernel.function}`: keep the stub's function, with its name "
            f"and its @tilelang.jit decorator, and fill in its TODO.",
            "",
            "",
        )
    if not isinstance(function, JITImpl):
        raise BuildFailed(
            f"`{kernel.function}` is a plain Python function, not a @tilelang.jit kernel: the grader "
            "compiles your TileLang kernel and runs it on the GPU itself, so an answer computed in Python "
            "(with torch, say) does not count. Keep the stub's @tilelang.jit decorator and its T.Kernel body.",
            "",
            "",
        )
    return function


def trace(function: Any, signature: Signature, arguments: dict[str, Any], source: Path) -> Any:
    """Run TileLang's frontend on the learner's function for these sizes and block parameters."""
    try:
        return function.get_tir(**arguments)
    except NotImplementedError as error:
        raise NotImplementedYet(str(error) or "not implemented yet") from error
    except Exception as error:
        raise explain(error, source, signature, function_end(function)) from error


def trace_tir(function: Any, kernel: Any, case: Any, source: Path) -> Any:
    """In-process tracing for the grader's own tests and scripts: trace, then admit the TIR as the
    judge does (signature, shapes, no host calls)."""
    from grader.processes.tracer import admit

    tir = trace(function, Signature.of(kernel), {**case.sizes, **case.params}, source)
    return admit(tir, kernel, case)


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
