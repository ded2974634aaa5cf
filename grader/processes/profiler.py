"""The profile of one case (``--profile KERNEL``): the learner's kernel and the course's own, side by side.

The judge calls ``profile_case`` after a case's verdict, which it never changes. Both kernels are described
statically (grader.pipeline.profile.static: their TIR, the CUDA TileLang generated, ptxas). On a GPU each is
then run once under Nsight Compute in a child process, ``python -m grader.processes.profiler JOB``: the child
loads the admitted TIR the judge saved (TVM's JSON; no learner Python anywhere), compiles it (TileLang's
cache makes that quick), draws the case's inputs, warms up, and launches it once between cudaProfilerStart
and Stop, which is all ``ncu --profile-from-start off`` measures.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from grader.outcome import ProfileReport
from grader.pipeline.context import Context
from grader.spec import Case, Kernel

WARMUP_LAUNCHES = 3
NCU_TIMEOUT_S = 600.0


def find_ncu() -> str | None:
    """Nsight Compute's command line: on PATH, else in the CUDA toolkit TileLang compiles with."""
    found = shutil.which("ncu")
    if found:
        return found
    try:
        from tilelang import env

        candidate = Path(env.CUDA_HOME or "/usr/local/cuda") / "bin" / "ncu"
    except Exception:
        candidate = Path("/usr/local/cuda/bin/ncu")
    return str(candidate) if candidate.exists() else None


def profile_case(
    ctx: Context, kernel: Kernel, case: Case, tir: Any, compiled: Any, options: dict[str, Any]
) -> ProfileReport:
    """The report for one case: static figures for both kernels, and on a GPU (unless ``ctx.profile`` is
    "static") Nsight Compute's, with what to try."""
    from grader.pipeline.profile import advice, static

    reference_tir, reference_compiled, reference_options = reference_build(ctx, kernel, case)
    profile = ctx.device.profile
    if ctx.device.mode == "cuda" and ctx.limits is None:  # this GPU's copy bandwidth, as the bench measures it
        import torch

        from grader.pipeline import roofline

        ctx.limits = roofline.measure(torch, torch.cuda.get_device_name())
    yours = static.estimate(tir, compiled.get_kernel_source(), kernel, case, profile, ctx.limits)
    theirs = static.estimate(reference_tir, reference_compiled.get_kernel_source(), kernel, case, profile, ctx.limits)
    for figures in (yours, theirs):  # what the grid is measured against (the counters say it again on a GPU)
        figures.setdefault("sm_count", profile.sm_count)
    mode, problem = "static", ""
    if ctx.profile == "gpu" and ctx.device.mode == "cuda":
        mode = "gpu"
        found, problem = counters(ctx, kernel, case, tir, options)
        yours.update(found)
        if not problem and not same_kernel(tir, options, reference_tir, reference_options):
            found, problem = counters(ctx, kernel, case, reference_tir, reference_options)
        theirs.update(found)  # the course's own kernel (solutions/, or kept as it was) is measured once
    lines = [line for line in (advice.comparison(yours, theirs),) if line] + advice.advise(yours, theirs)
    return ProfileReport(mode=mode, yours=yours, reference=theirs, advice=lines, problem=problem)


def same_kernel(tir: Any, options: dict[str, Any], other: Any, other_options: dict[str, Any]) -> bool:
    """Whether two admitted kernels are one program (the learner kept the course's kernel, or grades solutions/)."""
    from tilelang import tvm

    return (options or {}) == (other_options or {}) and bool(tvm.ir.structural_equal(tir, other))


def reference_build(ctx: Context, kernel: Kernel, case: Case) -> tuple[Any, Any, dict[str, Any]]:
    """The course's own kernel for this case (the trusted spec file), traced and compiled as the judge would."""
    from grader.discover import load_module
    from grader.pipeline.admit import admit_options
    from grader.pipeline.build import compile_tir
    from grader.pipeline.trace import jit_options, kernel_function, trace_tir

    function = kernel_function(load_module(ctx.spec_file), kernel)
    tir = trace_tir(function, kernel, case, ctx.spec_file)
    options = admit_options(jit_options(function), kernel)
    runs = ctx.device.mode == "cuda"
    return tir, compile_tir(tir, ctx.device.target, ctx.spec_file, kernel, options, runs), options


def counters(ctx: Context, kernel: Kernel, case: Case, tir: Any, options: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Nsight Compute's figures for ``tir`` run once on this case's inputs, or ({}, why not)."""
    from tilelang import tvm

    from grader.pipeline.profile.counters import NCU_ARGS, NO_NCU, combined, parse_raw_csv, problem_in

    ncu = find_ncu()
    if ncu is None:
        return {}, NO_NCU
    with tempfile.TemporaryDirectory(prefix="profile-") as folder:
        work = Path(folder)
        (work / "tir.json").write_text(tvm.ir.save_json(tir))
        job = {
            "tir": str(work / "tir.json"),
            "spec_file": str(ctx.spec_file),
            "source": str(ctx.source),
            "profile": ctx.device.profile.name,
            "kernel": kernel.function,
            "case": case.name,
            "sizes": dict(case.sizes),
            "params": dict(case.params),
            "options": options or {},
            "seed": ctx.seed_offset,
        }
        (work / "job.json").write_text(json.dumps(job))
        log = work / "ncu.csv"
        command = [ncu, *NCU_ARGS, "--log-file", str(log), sys.executable, "-m", "grader.processes.profiler"]
        try:
            ran = subprocess.run(
                [*command, str(work / "job.json")],
                capture_output=True,
                text=True,
                timeout=NCU_TIMEOUT_S,
                cwd=folder,  # `python -m` puts the working folder first on sys.path: this one holds only the job
                env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
            )
        except subprocess.TimeoutExpired:
            return {}, f"Nsight Compute did not finish within {NCU_TIMEOUT_S:g} s"
        text = log.read_text() if log.exists() else ""
        rows = parse_raw_csv(text)
        if not rows:
            said = problem_in(text + ran.stdout + ran.stderr)
            tail = (ran.stderr or ran.stdout).strip().splitlines()[-1:] or ["no output"]
            return {}, said or f"Nsight Compute measured no kernel (exit {ran.returncode}: {tail[0][:200]})"
        return combined(rows), ""


def run_job(path: str) -> None:
    """The child under ncu: compile the saved TIR, draw the inputs, launch once inside the profiled range."""
    import logging

    import torch

    from grader.discover import load_module, load_puzzle
    from grader.pipeline.build import compile_tir
    from grader.pipeline.inputs import make_inputs, poisoned_outputs

    os.environ.setdefault("TILELANG_PRINT_ON_COMPILATION", "0")  # as the judge: no compile logs
    logging.getLogger("tilelang").setLevel(logging.WARNING)
    job = json.loads(Path(path).read_text())
    puzzle = load_puzzle(load_module(Path(job["spec_file"]))).on(job["profile"])
    kernel = puzzle.kernel(job["kernel"])
    tir = admitted_tir(Path(job["tir"]).read_text(), kernel)
    case = replace(kernel.case(job["case"]), sizes=job["sizes"], params=job["params"])
    compiled = compile_tir(tir, "cuda", Path(job["source"]), kernel, job["options"])
    inputs = make_inputs(kernel, case, "cuda", job["seed"] + 1000)
    outputs = poisoned_outputs(kernel, case, "cuda")
    for _ in range(WARMUP_LAUNCHES):
        compiled(*inputs, *outputs)
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    compiled(*inputs, *outputs)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


def admitted_tir(text: str, kernel: Kernel) -> Any:
    """The admitted TIR the judge wrote for the profiling process, loaded again: its T.annotate_layout layouts need
    remaking after the JSON round trip, as on admission (grader.pipeline.admit.with_layouts_rebuilt)."""
    from tilelang import tvm

    from grader.pipeline.admit import with_layouts_rebuilt

    return with_layouts_rebuilt(tvm.ir.load_json(text), kernel)


if __name__ == "__main__":
    run_job(sys.argv[1])
