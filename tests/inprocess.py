"""Grade a file's kernels inside the test process: trace, simulate on the CPU, compare, check concepts.

The CLI grades in a judge process that never imports the learner's file (a tracer does) and compiles
every case with nvcc; tests that only need the verdict of a simulated case use this instead (no
process start, no compile, the learner's file imported here), through the same judging functions and
the same admission gate (trace_tir admits the TIR as the judge does).
"""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path

from grader.devices import Device
from grader.discover import course_root, load_module, load_puzzle, puzzle_files
from grader.outcome import CaseResult, Status
from grader.pipeline.across import Graded, add_pattern
from grader.pipeline.build import COMPILE_ONLY_TARGET, BuildFailed, NotImplementedYet, compile_tir
from grader.pipeline.context import Build, Context
from grader.pipeline.grade import grade_case
from grader.pipeline.trace import jit_options, kernel_function, trace_tir
from grader.spec import Puzzle
from grader.trace.learner import load_learner


def spec(puzzle_id: str) -> Puzzle:
    return load_puzzle(load_module(puzzle_files(course_root() / "solutions")[puzzle_id]))


def grade_simulated(
    puzzle_id: str,
    source: Path,
    kernel_name: str,
    cases: list[str] | None = None,
    seed_offset: int = 0,
    seed_from_tir: bool = True,
    until_rejected: bool = False,
    compile_cuda: bool = False,
) -> list[CaseResult]:
    """Results for the kernel's simulated cases (or the named ones), as the child would give them; with
    ``until_rejected``, up to the first case that fails or errs (a test that needs one rejection); with
    ``compile_cuda``, each case is also built for sm_90a as the judge builds it, so that what is read from the
    generated CUDA (grader.pipeline.miscompiles, TMA stores) is read here too."""
    puzzle = spec(puzzle_id)
    module, problem, _ = load_learner(source)
    assert not problem, problem
    device = Device("cpu", "simulated", COMPILE_ONLY_TARGET)
    ctx = Context(puzzle, source, device, False, seed_offset, seed_from_tir=seed_from_tir)
    kernel = puzzle.kernel(kernel_name)
    chosen = [c for c in kernel.cases if (c.name in cases if cases else c.simulate)]
    results = []
    earlier: list[Graded] = []
    for case in chosen:
        compiled: Future = Future()
        tir = None
        try:
            known = tuple(k.function for k in puzzle.kernels)
            function = kernel_function(module, kernel, known)
            tir = trace_tir(function, kernel, case, source)
            built = None  # without compile_cuda nothing is compiled: the simulator runs the traced TIR
            if compile_cuda:  # with the decorator's pass configs, as the judge passes them on
                built = compile_tir(tir, COMPILE_ONLY_TARGET, source, kernel, jit_options(function), runs=False)
            compiled.set_result(built)
        except (BuildFailed, NotImplementedYet) as error:
            compiled.set_exception(error)
        graded = Graded(case, tir, grade_case(ctx, kernel, case, Build(tir, compiled)))
        add_pattern(graded, earlier)  # as the judge does: the verdicts before it may name the cause
        earlier.append(graded)
        results.append(graded.result)
        if until_rejected and graded.result.status in (Status.FAILED, Status.ERROR):
            break
    return results
