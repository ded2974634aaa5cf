"""The judge process: builds, runs, compares and benches one puzzle's kernels. It never imports the
learner's file: a tracer process (grader.trace) traces each case and the judge admits what comes back
(grader.processes.tracer) before compiling it.

It talks to the parent (grader.processes.supervisor) over a multiprocessing connection:
  child -> {"event": "described", ...}   the canonical kernels and cases, the device
  parent -> {"plan": [[kernel, [case, ...]], ...]}
  child -> {"event": "case_start", ...} then {"event": "result", "result": {...}} per case
  child -> {"event": "done"}
A CUDA fault poisons the process's context, so after one the child reports and exits; the
parent starts a fresh child for the next kernel.
"""

from __future__ import annotations

import logging
import os
import time
import traceback
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from grader import outcome, verified
from grader.devices import DEFAULT, PROFILES, Profile
from grader.outcome import Bench, CaseResult
from grader.pipeline.build import OUT_OF_MEMORY, out_of_memory
from grader.pipeline.hidden import SIMULATED
from grader.processes.warm import WARM_ENV
from grader.spec import Case, Kernel, Puzzle


@dataclass
class Device:
    mode: str  # "cuda": run on the GPU; "cpu": compile for the profile's arch and simulate; "compile": compile only
    name: str
    target: Any
    # the GPU generation graded for: its limits pick the cases' block parameters (Hopper's unless told)
    profile: Profile = field(default_factory=lambda: PROFILES[DEFAULT])
    problem: str = ""  # why this machine cannot grade at all (e.g. no nvcc)


@dataclass
class Context:
    puzzle: Puzzle
    source: Path
    device: Device
    bench: bool
    seed_offset: int
    save_failures: str = ""  # --save-failures DIR: where failed cases' tensors go
    spec_file: Path = Path()  # the trusted module the cases come from (solutions/ unless told)
    limits: Any = None  # grader.pipeline.roofline.Limits: measured at the first bench of the run
    learner_params: bool = False  # --param: the bench cases run with the learner's block parameters
    # The part of a case's input seed that comes from its admitted TIR (input_draw); set per case
    draw: int = 0
    # Off only in-process, to replay inputs recorded from the case's seed alone (scripts/crosscheck.py's)
    seed_from_tir: bool = True


def quiet_tilelang() -> None:
    """TileLang logs every compile at INFO on stderr; learners need none of it."""
    os.environ.setdefault("TILELANG_PRINT_ON_COMPILATION", "0")
    logging.getLogger("tilelang").setLevel(logging.WARNING)


def pick_device(requested: str, arch: str = "") -> Device:
    """The GPU if there is one (its own limits), else compile for ``arch`` (sm_90a unless asked) and
    simulate with that profile's limits. ``arch`` naming another GPU than this one grades for that one."""
    import torch

    from grader.devices import profile_named
    from grader.pipeline.build import NVCC_HELP

    wanted = profile_named(arch or DEFAULT)
    if requested in ("auto", "cuda") and torch.cuda.is_available():
        here = gpu_profile(torch)
        if not arch or here.name == wanted.name:
            return Device("cuda", torch.cuda.get_device_name(), "cuda", here)
        major, minor = torch.cuda.get_device_capability()
        if major * 10 + minor >= int(wanted.name.removeprefix("sm_")):
            # An older generation's lowering on this GPU: TileLang lowers for the named arch, and nvcc turns
            # that arch's PTX into this GPU's machine code (-gencode arch=compute_80,code=sm_90).
            target = {"kind": "cuda", "arch": wanted.arch, "code": [f"sm_{major}{minor}"]}
            name = f"{torch.cuda.get_device_name()}, running the {wanted.name} lowering"
            return Device("cuda", name, target, wanted)
        if requested == "cuda":
            return Device(
                "compile",
                torch.cuda.get_device_name(),
                "cuda",
                here,
                problem=f"--device cuda --arch {arch}: this GPU ({here.name}) cannot run code built for a newer one",
            )
    target = {"kind": "cuda", "arch": wanted.arch}
    mode, name = "compile", f"no CUDA GPU: compile-only for {wanted.arch}"
    if requested in ("auto", "cpu"):
        mode, name = "cpu", f"no CUDA GPU: compiled for {wanted.arch}, simulated on CPU"
        if arch and torch.cuda.is_available():
            name = f"--arch {arch}: compiled for {wanted.arch}, simulated on CPU (this GPU is older than {wanted.name})"
    if requested == "cuda":
        return Device(
            "compile",
            "no CUDA GPU",
            target,
            wanted,
            problem="--device cuda, but torch sees no CUDA GPU: install the CUDA build of torch that matches "
            "your driver, or leave out --device to compile and simulate on the CPU",
        )
    from tilelang import env

    nvcc = Path(env.CUDA_HOME or "/nonexistent") / "bin" / "nvcc"
    problem = "" if nvcc.exists() else NVCC_HELP
    return Device(mode, name, target, wanted, problem=problem)


def gpu_profile(torch: Any) -> Profile:
    """This machine's GPU as a profile: its own shared memory limit and SM count."""
    from grader.devices import PROFILES, profile_for_capability

    props = torch.cuda.get_device_properties(0)
    nearest = PROFILES.get(f"sm_{props.major}{props.minor}")
    shared = getattr(props, "shared_memory_per_block_optin", 0) or (nearest.shared_per_block if nearest else 48 * 1024)
    return profile_for_capability(props.major, props.minor, int(shared), props.multi_processor_count, props.name)


def limit_memory(device: Device, gigabytes: float) -> None:
    """Cap this process's address space (and that of the compilers it starts) where the OS allows.
    Not when it uses CUDA: the CUDA driver reserves far more virtual address space than it uses."""
    if device.mode == "cuda" or gigabytes <= 0:
        return
    try:
        import resource
    except ImportError:  # not a POSIX system: no limit
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = int(gigabytes * 2**30)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def use_scratch(folder: str) -> None:
    """Make ``folder`` (the supervisor's, which it deletes once this process is gone) where this process and
    what it starts put temporary files: TileLang's kernel sources, nvcc's intermediates. A judge that is
    killed (a timeout, Ctrl-C) then leaves nothing behind in /tmp."""
    if not folder:
        return
    import tempfile

    os.environ["TMPDIR"] = folder
    tempfile.tempdir = folder


def capture_output() -> None:
    """Send this process's stdout and stderr (fd 1 and 2) to /dev/null: whatever a kernel prints
    from the GPU (printf), and TileLang's and nvcc's noise, can never pass for a verdict line. Verdicts
    leave only through the supervisor's pipe."""
    sink = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        os.dup2(sink, fd)
    os.close(sink)


def serve(conn: Any, request: dict[str, Any]) -> None:
    started = time.perf_counter()
    capture_output()
    use_scratch(request.get("scratch", ""))
    from grader.pipeline.hidden import hidden_file
    from grader.processes import reaper
    from grader.processes.sandbox import policy
    from grader.processes.tracer import Tracer

    reaper.become_subreaper()  # what the tracer forks ends up ours to kill where there is no sandbox
    isolation = policy(hidden_cases=hidden_file() is not None)
    if isolation.refusal:
        conn.send({"event": "fatal", "message": isolation.refusal})
        return
    source = Path(request["kernel_file"])
    # Start the tracer at once: its imports overlap with this process's own.
    tracer = Tracer(source, request.get("memory_limit_gb", 0.0), confine=isolation.confine)
    # Unconfined, the tracer could write the compile cache: undo what it wrote. Confined it can write
    # nothing, and no undo may delete what another grader on this machine compiled meanwhile.
    guard = reaper.CacheGuard(None) if isolation.confine else reaper.CacheGuard.here()
    if not os.environ.get(WARM_ENV):
        tracer.start()  # at once: its imports overlap with this process's own (a warm one has none to do)
    try:
        _serve(conn, request, tracer, guard, started, isolation.note)
    finally:
        tracer.stop()
        guard.undo()


def _serve(conn: Any, request: dict[str, Any], tracer: Any, guard: Any, started: float, isolation: str) -> None:
    quiet_tilelang()
    try:
        import tilelang  # noqa: F401  (timed on its own: it is most of a warm run)
    except ImportError as error:
        conn.send({"event": "fatal", "message": f"TileLang cannot be imported ({error}): run pip install -e . first"})
        return
    from grader.discover import load_module, load_puzzle
    from grader.pipeline.hidden import public_view, with_hidden_cases

    imported = time.perf_counter()
    try:
        device = pick_device(request.get("device", "auto"), request.get("arch", ""))
    except ValueError as error:  # an --arch the course has no profile for
        conn.send({"event": "fatal", "message": str(error)})
        return
    limit_memory(device, request.get("memory_limit_gb", 0.0))
    device_ready = time.perf_counter()
    try:
        spec_module = load_module(Path(request["spec_file"]))
        puzzle = with_hidden_cases(load_puzzle(spec_module)).on(device.profile.name)
    except Exception as error:  # the course's own file is broken: a maintainer's problem, said plainly
        conn.send(
            {"event": "fatal", "message": f"the puzzle's spec {request['spec_file']} cannot be loaded: {error!r}"}
        )
        return
    learner_params = request.get("params") or {}
    if learner_params:
        try:
            puzzle = bench_with_params(puzzle, learner_params, block_parameters(spec_module, puzzle))
        except ValueError as error:
            conn.send({"event": "fatal", "message": str(error)})
            return
    timings = {
        "import_torch_tilelang_s": imported - started,
        "device_s": device_ready - imported,
        "load_spec_s": time.perf_counter() - device_ready,
    }
    conn.send(
        {
            "event": "described",
            "device": device.name,
            "mode": device.mode,
            "arch": device.profile.arch if device.mode != "cuda" else device.profile.name,
            "puzzle": _describe(puzzle),
            "timings": timings,
            "isolation": isolation,  # "" when the tracer runs in the sandbox, else the sentence that says it does not
        }
    )
    plan = conn.recv()["plan"]
    if plan:
        conn.send({"event": "case_start", "kernel": plan[0][0], "case": plan[0][1][0]})
    ctx = Context(
        puzzle,
        Path(request["kernel_file"]),
        device,
        request.get("bench", False),
        request.get("seed_offset", 0),
        request.get("save_failures") or "",
        Path(request["spec_file"]),
        learner_params=bool(learner_params),
    )
    work = [(puzzle.kernel(function), puzzle.kernel(function).case(name)) for function, names in plan for name in names]
    case_timeout = float(request.get("timeout", 180.0))
    # Under the supervisor's own limit, so the judge, not the supervisor, says which kernel hung.
    trace_timeout = 0.8 * case_timeout
    tracer.shown_limit = case_timeout
    planned = time.perf_counter()
    traced = trace_all(ctx, work, tracer, trace_timeout, lambda: conn.send({"event": "alive"}))
    tracer.stop()  # no learner process is alive from here on
    guard.undo()  # and nothing it wrote into the compile cache is loaded
    stopped = time.perf_counter()
    builds = {} if device.problem else start_builds(ctx, work, traced)
    timings = {
        "trace_s": stopped - planned,
        "admit_s": time.perf_counter() - stopped,
        "traced_cases": len(work),
        "tracer_asked": tracer.next_id,  # cases the tracer traced: the others came from a warm check's trace cache
    }
    conn.send({"event": "timings", "timings": timings})
    for kernel, case in work:
        conn.send({"event": "case_start", "kernel": kernel.function, "case": case.name})
        try:
            announce_phases(conn, ctx, case, builds.get((kernel.function, case.name)))
            result = grade_case(ctx, kernel, case, builds.get((kernel.function, case.name)))
        except Exception as error:  # a grader bug must still give this case a verdict
            from grader.pipeline.build import summarize

            if out_of_memory(error):
                result = _result(ctx, kernel, case, outcome.ERROR, OUT_OF_MEMORY, trace=traceback.format_exc())
            else:
                result = _result(
                    ctx,
                    kernel,
                    case,
                    outcome.ERROR,
                    f"the grader hit an internal error on this case: {summarize(error)} (please report it; "
                    "--verbose shows the trace)",
                    trace=traceback.format_exc(),
                )
        conn.send({"event": "result", "result": public_view(result).to_dict()})
        if result.status == outcome.CRASHED:
            conn.close()
            os._exit(3)
    conn.send({"event": "done"})
    conn.close()


def announce_phases(conn: Any, ctx: Context, case: Case, build: Build | None) -> None:
    """Tell the supervisor where this case's time goes: waiting for its compile (announced only while it is
    not done), then simulating it on the CPU or running it on the GPU. A case past the time limit is then
    reported for what it was doing (a slow compile is not a hanging kernel)."""
    if build is None or ctx.device.problem:
        return
    if not build.compiled.done():
        conn.send({"event": "phase", "phase": "compiling"})
        wait([build.compiled])
    if ctx.device.mode == "cuda":
        conn.send({"event": "phase", "phase": "running"})
    elif ctx.device.mode == "cpu" and case.simulate:
        conn.send({"event": "phase", "phase": "simulating"})


def block_parameters(spec_module: Any, puzzle: Puzzle) -> dict[str, set[str]]:
    """Each kernel's block parameters: what its cases set, and the upper-case arguments of the
    course's own function (THREADS with a default, say)."""
    import inspect

    names: dict[str, set[str]] = {}
    for kernel in puzzle.kernels:
        found = {name for case in kernel.cases for name in case.params}
        function = getattr(getattr(spec_module, kernel.function, None), "func", None)
        if function is not None:
            tensors = {t.name for t in (*kernel.inputs, *kernel.outputs)}
            found |= {n for n in inspect.signature(function).parameters if n.isupper() and n not in tensors}
        names[kernel.function] = found
    return names


def bench_with_params(puzzle: Puzzle, params: dict[str, int], accepted: dict[str, set[str]]) -> Puzzle:
    """The puzzle as ``--bench --param`` times it: each kernel's bench cases only, with the learner's
    block parameters over the case's (those the kernel takes). The graded cases are not among them,
    so no grade ever comes from parameters the learner chose."""
    known = set().union(*accepted.values()) if accepted else set()
    unknown = sorted(set(params) - known)
    if unknown:
        raise ValueError(
            f"--param {', '.join(unknown)}: no kernel of puzzle {puzzle.id} takes it (block parameters: "
            f"{', '.join(sorted(known))})"
        )
    kernels = []
    for kernel in puzzle.kernels:
        mine = {k: v for k, v in params.items() if k in accepted.get(kernel.function, set())}
        cases = tuple(replace(c, params={**c.params, **mine}, simulate=False) for c in kernel.cases if c.bench)
        kernels.append(replace(kernel, cases=cases))
    return replace(puzzle, kernels=tuple(kernels))


def _describe(puzzle: Puzzle) -> dict[str, Any]:
    return {
        "id": puzzle.id,
        "title": puzzle.title,
        "kernels": [
            {
                "function": k.function,
                "title": k.title,
                "cases": [
                    {"name": c.name, "sizes": dict(c.sizes), "params": dict(c.params), "bench": c.bench}
                    for c in k.cases
                ],
            }
            for k in puzzle.kernels
        ],
    }


def _result(ctx: Context, kernel: Kernel, case: Case, status: str, message: str, **extra: Any) -> CaseResult:
    return CaseResult(
        ctx.puzzle.id, kernel.function, case.name, status, dict(case.sizes), message, str(ctx.source), **extra
    )


@dataclass
class Build:
    tir: Any  # the admitted TIR (what the simulator runs), None if tracing or admission failed
    compiled: Future  # the compiled kernel, or the build error


@dataclass
class Traced:
    """What the tracer answered for one case: the reply, or the exception that stands for it."""

    reply: dict[str, Any] | None = None
    error: BaseException | None = None


def trace_all(
    ctx: Context, work: list[tuple[Kernel, Case]], tracer: Any, timeout: float, alive: Any
) -> dict[tuple[str, str], Traced]:
    """Ask the tracer for every case's TIR: public cases first, hidden ones last (nothing the learner's
    code reads then reaches any output). A tracer that hangs or dies costs the kernel it was tracing;
    a fresh one takes the next kernel."""
    from grader.pipeline.build import BuildFailed
    from grader.processes import trace_cache
    from grader.processes.tracer import TracerGone

    known = tuple(k.function for k in ctx.puzzle.kernels)
    warm = bool(os.environ.get(WARM_ENV)) and not any(c.name.startswith("hidden_") for _, c in work)
    order = sorted(work, key=lambda item: item[1].name.startswith("hidden_"))
    traced: dict[tuple[str, str], Traced] = {}
    given_up: dict[str, TracerGone] = {}
    loaded: tuple[str, str] | None = None
    for kernel, case in order:
        key = (kernel.function, case.name)
        if case.unfit:  # graded as not applicable without the learner's code
            continue
        if kernel.function in given_up:
            gone = given_up[kernel.function]
            traced[key] = Traced(error=TracerGone(outcome.NOT_RUN, f"not run: {gone.message}"))
            continue
        arguments = {**case.sizes, **case.params}
        cached = cache_key = None
        if warm:  # a warm check skips the tracer for a kernel whose file has not changed
            cache_key = trace_cache.key(ctx.source, kernel.function, known, arguments)
            cached = trace_cache.load(cache_key)
        if cached is not None:
            traced[key] = Traced(reply=cached)
            continue
        try:
            if tracer.process is None:
                tracer.start()
                loaded = None
            if loaded is None:
                loaded = tracer.wait_loaded(timeout)
            problem, trace = loaded
            if problem:
                traced[key] = Traced(error=BuildFailed(problem, "", trace))
                continue
            reply = tracer.ask(kernel, known, arguments, timeout)
            traced[key] = Traced(reply=reply)
            if cache_key is not None:
                trace_cache.store(cache_key, reply)
        except TracerGone as gone:
            traced[key] = Traced(error=gone)
            given_up[kernel.function] = gone
            tracer.stop()
        alive()
    return traced


def admitted(kernel: Kernel, case: Case, traced: Traced) -> tuple[Any, dict[str, Any]]:
    """The TIR and compile options of a traced case, through the judge's gate; raises the case's error."""
    from grader.pipeline.build import BuildFailed, NotImplementedYet
    from grader.processes.tracer import admit, admit_options, load_tir

    if traced.error is not None:
        raise traced.error
    reply = traced.reply or {}
    status = reply.get("status")
    if status == "not_implemented":
        raise NotImplementedYet("not implemented yet")
    if status == "failed":
        text = lambda name, limit=2000: str(reply.get(name) or "")[:limit]  # noqa: E731
        raise BuildFailed(text("summary", 600), text("location", 200), text("trace", 50000), text("hint", 600))
    if status != "traced":
        raise BuildFailed("the tracer gave an answer the grader does not understand", "", "")
    tir = admit(load_tir(reply.get("tir"), kernel), kernel, case)
    return tir, admit_options(reply.get("options"), kernel)


def start_builds(
    ctx: Context, work: list[tuple[Kernel, Case]], traced: dict[tuple[str, str], Traced]
) -> dict[tuple[str, str], Build]:
    """Compile every case at once on a thread pool (TileLang's lowering and nvcc release the
    GIL), so a cold run costs about the slowest compile rather than their sum."""
    from grader.pipeline.build import compile_tir

    pool = ThreadPoolExecutor(max_workers=max(1, min(len(work), os.cpu_count() or 1)))
    builds: dict[tuple[str, str], Build] = {}
    for kernel, case in work:
        key = (kernel.function, case.name)
        if case.unfit:
            continue
        try:
            tir, options = admitted(kernel, case, traced[key])
            builds[key] = Build(tir, pool.submit(compile_tir, tir, ctx.device.target, ctx.source, kernel, options))
        except Exception as error:  # reported when the case's turn comes
            failed: Future = Future()
            failed.set_exception(error)
            builds[key] = Build(None, failed)
    pool.shutdown(wait=False)
    return builds


def grade_case(ctx: Context, kernel: Kernel, case: Case, build: Build | None) -> CaseResult:
    """The pipeline for one case: (its build is already under way), run, compare, bench."""
    from grader.pipeline.build import BuildFailed, NotImplementedYet
    from grader.processes.tracer import TracerGone

    started = time.perf_counter()
    if case.unfit:
        return _result(
            ctx, kernel, case, outcome.NOT_APPLICABLE, f"not applicable on {ctx.device.profile.label}: {case.unfit}"
        )
    if ctx.device.problem or build is None:
        return _result(ctx, kernel, case, outcome.SETUP, ctx.device.problem)
    try:
        compiled = build.compiled.result()
    except TracerGone as gone:
        return _result(ctx, kernel, case, gone.status, gone.message)
    except NotImplementedYet:
        return _result(
            ctx,
            kernel,
            case,
            outcome.NOT_IMPLEMENTED,
            f"not implemented yet: fill in the TODO of `{kernel.function}` in {ctx.source.name}",
        )
    except BuildFailed as error:
        where = f" ({error.location})" if error.location else ""
        return _result(
            ctx,
            kernel,
            case,
            outcome.ERROR,
            error.summary + where,
            trace=error.trace,
            hint=error.hint,
            details=list(error.details),
        )
    from grader.pipeline.checks import empty_launch, floor_problems, never_initialized, reduce_restarts

    tensors = kernel.inputs + kernel.outputs
    # A grid with a zero extent launches nothing (on a GPU, an invalid launch): a FAIL that says why,
    # in every mode, and the kernel's other cases still run.
    if build.tir is not None and (empty := empty_launch(build.tir, case.sizes, case.params, tensors)):
        prefix = "simulated on CPU: " if ctx.device.mode == "cpu" and case.simulate else ""
        return _result(ctx, kernel, case, outcome.FAILED, prefix + empty, seconds=time.perf_counter() - started)
    # A block over the GPU's shared memory cannot launch: say so before trying (no CRASH, the kernel's other
    # cases still run), and in every mode, so compiling for a smaller GPU on the CPU finds it too.
    if build.tir is not None and (unfit := over_shared_limit(ctx, kernel, case, build.tir)) is not None:
        unfit.seconds = time.perf_counter() - started
        return unfit
    arch = ctx.device.profile.arch
    if ctx.device.mode == "compile":
        built = _result(
            ctx,
            kernel,
            case,
            outcome.COMPILED,
            f"compiled for {arch}: TileLang accepts it (numbers need a GPU)",
            seconds=time.perf_counter() - started,
        )
        return replace(built, checked=verified.COMPILED)
    if ctx.device.mode == "cpu" and not case.simulate:
        built = _result(
            ctx,
            kernel,
            case,
            outcome.COMPILED,
            f"compiled for {arch} (too large to simulate: numbers need a GPU)",
            seconds=time.perf_counter() - started,
        )
        return replace(built, checked=verified.COMPILED)
    drawn = replace(ctx, draw=input_draw(ctx, build.tir, case))
    if ctx.device.mode == "cpu":
        result = simulate_and_compare(drawn, kernel, case, build.tir, compiled)
        # a construct the simulator lacks: built, its numbers unchecked
        result.checked = verified.COMPILED if result.status == outcome.UNSUPPORTED else verified.SIMULATED
    else:
        result = run_and_compare(drawn, kernel, case, compiled)
        result.checked = verified.GPU
    result.seconds = time.perf_counter() - started
    # Accumulators nothing cleared can come out right by luck (zeroed registers): the cause, not luck.
    causes = never_initialized(build.tir)
    if result.status == outcome.FAILED:  # a count that rounds down explains a mismatch; it never makes one
        causes += floor_problems(build.tir, case.sizes, case.params, tensors) + reduce_restarts(build.tir)
    fail_by_tir(result, causes, "the numbers happen to be right, but ", cause=True)
    missed = [sentence for concept in kernel.concepts if (sentence := concept.check(build.tir))]
    fail_by_tir(result, [f"the puzzle wants {m}" for m in missed], "the numbers are right, but ", cause=False)
    if ctx.bench and case.bench and result.status == outcome.PASSED:
        result.bench = bench_case(ctx, kernel, case, compiled)
    return result


def input_draw(ctx: Context, tir: Any, case: Case) -> int:
    """The part of a case's input seed drawn from a hash of its admitted TIR. The case's own seed is in the
    course's files, so without this a file could draw the inputs while it is traced and bake the answers
    into its TIR as constants; with it, changing the TIR changes the inputs it is checked on, and the
    tracer is dead before they are drawn. The same file draws the same inputs on every run (and
    --seed-offset N another draw of them), so a failure replays."""
    import hashlib

    from tilelang import tvm

    if not ctx.seed_from_tir:
        return 0
    text = _program_text(tvm.ir.save_json(tir)) if tir is not None else ""
    digest = hashlib.sha256(f"{case.name}:{case.seed}:{text}".encode()).digest()
    return int.from_bytes(digest[:4], "little") % (2**30)


def _program_text(saved: str) -> str:
    """TVM's JSON of a TIR without its source spans: they hold the file's path and line numbers, so
    the same kernel in another checkout, or with a comment added, would otherwise draw other inputs
    and a saved failure would not replay there."""
    import json

    graph = json.loads(saved)
    for node in graph.get("nodes", []):
        if node.get("type") in ("ir.SourceName", "ir.Span"):
            node["data"] = None
    return json.dumps(graph, sort_keys=True)


def over_shared_limit(ctx: Context, kernel: Kernel, case: Case, tir: Any) -> CaseResult | None:
    """The case's verdict when its block asks for more shared memory than this GPU gives one block:
    the learner's failure if the course's own kernel fits at these block sizes, else not applicable."""
    from grader.pipeline.simulate.interp import shared_memory_plan

    profile = ctx.device.profile
    plan = shared_memory_plan(tir)
    if plan.total <= profile.shared_per_block:
        return None
    reference = reference_shared_memory(ctx, kernel, case)
    if reference is not None and reference > profile.shared_per_block:
        return _result(
            ctx,
            kernel,
            case,
            outcome.NOT_APPLICABLE,
            f"not applicable on {profile.label}: at this case's block sizes it needs {-(-reference // 1024)} KiB of "
            f"shared memory per block; this GPU has {profile.shared_kib} KiB",
        )
    return _result(
        ctx, kernel, case, outcome.FAILED, plan.too_much(profile.shared_per_block, f"a block on {profile.label}")
    )


def reference_shared_memory(ctx: Context, kernel: Kernel, case: Case) -> int | None:
    """Bytes of shared memory the course's own kernel (the trusted spec file) takes for this case."""
    from grader.discover import load_module
    from grader.pipeline.simulate.interp import shared_memory_plan
    from grader.trace.frontend import kernel_function, trace_tir

    try:
        module = load_module(ctx.spec_file)
        return shared_memory_plan(trace_tir(kernel_function(module, kernel), kernel, case, ctx.spec_file)).total
    except Exception:  # a spec without this kernel's body (a stub used as spec): no reference to weigh
        return None


def fail_by_tir(result: CaseResult, sentences: list[str], right_numbers: str, cause: bool) -> None:
    """Fail a ran case for what its TIR shows (a concept missed, an accumulator never cleared), even
    when its numbers are right. On a case that failed anyway, the first sentence replaces the generic
    hint when it is the ``cause`` of the mismatch; the others are listed."""
    if not sentences or result.status not in (outcome.PASSED, outcome.FAILED):
        return
    listed = sentences[1:]
    if result.status == outcome.PASSED:
        prefix = SIMULATED if result.message.startswith(SIMULATED) else ""  # the summary counts it
        result.status, result.message = outcome.FAILED, prefix + right_numbers + sentences[0]
    elif cause:
        result.hint = "the likely cause: " + sentences[0]
    else:
        listed = sentences
    result.details = result.details + [f"also: {s}" for s in listed]


def simulate_and_compare(ctx: Context, kernel: Kernel, case: Case, tir: Any, compiled: Any = None) -> CaseResult:
    """The case on the CPU simulator; ``compiled`` (the kernel TileLang built for the profile) tells it how
    the GPU would store: its CUDA is the evidence for what the TIR alone does not say."""
    from grader.pipeline.compare import compare
    from grader.pipeline.inputs import changed_inputs, make_inputs, poisoned_outputs
    from grader.pipeline.simulate import SimulationError, Unsupported, simulate

    inputs = make_inputs(kernel, case, "cpu", ctx.seed_offset + ctx.draw)
    pristine = [x.clone() for x in inputs]
    outputs = poisoned_outputs(kernel, case, "cpu")
    tensors = {t.name: x for t, x in zip(kernel.inputs + kernel.outputs, inputs + outputs)}
    try:
        simulate(
            tir,
            tensors,
            ctx.device.profile,
            tma_stores="tl::tma_store(" in kernel_source(compiled),
            reverse_blocks=reversed_blocks(kernel, case),
        )
    except SimulationError as error:
        return _result(ctx, kernel, case, outcome.FAILED, f"simulated on CPU: {error}")
    except Unsupported as error:
        return _result(
            ctx,
            kernel,
            case,
            outcome.UNSUPPORTED,
            f"the CPU simulator does not support {error}; run on a GPU to check the numbers",
        )
    result = judge(ctx, kernel, case, pristine, outputs, compare)
    result.message = f"simulated on CPU: {result.message}"
    result = with_side_effects(result, changed_inputs(pristine, inputs, [t.name for t in kernel.inputs]))
    return keep_failure(ctx, kernel, case, result, pristine, outputs)


def reversed_blocks(kernel: Kernel, case: Case) -> bool:
    """Every other case runs its blocks last to first, so a result that depends on their order cannot
    pass every case (races the simulator names are caught in either order)."""
    names = [c.name for c in kernel.cases]
    return case.name in names and names.index(case.name) % 2 == 1


def kernel_source(compiled: Any) -> str:
    """The CUDA TileLang generated for a compiled kernel, or "" where there is none to read."""
    try:
        return str(compiled.get_kernel_source()) if compiled is not None else ""
    except Exception:  # a build that kept no source: the simulator assumes plain stores
        return ""


def with_side_effects(result: CaseResult, side_effects: list[str]) -> CaseResult:
    """Fail a result whose kernel wrote to an input or outside an output, saying so first."""
    if not side_effects:
        return result
    prefix = "simulated on CPU: " if result.message.startswith("simulated on CPU: ") else ""
    rest = result.message.removeprefix(prefix)
    result.status = outcome.FAILED
    result.message = prefix + (side_effects[0] if result.wrong == 0 else f"{rest}; {side_effects[0]}")
    result.details = side_effects + result.details
    result.hint = result.hint or (
        "A kernel may only store to its outputs (the tensors it returns), each index inside the output's shape: "
        "find the store to that tensor, or the index that runs past the end."
    )
    return result


WARP_SPECIALIZED_FAULT = (
    "An illegal instruction in a warp-specialized build (a producer warpgroup issuing TMA copies): "
    "TileLang 0.1.15 builds some correct kernels this way that fault on Hopper, puzzle 09's convolutions "
    "among them. Compile it with warp specialization off, as the stub's decorator does: "
    "@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})."
)


def crash_hint(message: str, source: str) -> str:
    """What to look at after a GPU crash, from the error and the CUDA TileLang generated."""
    if "illegal instruction" in message and "warpgroup_reg_alloc" in source:
        return WARP_SPECIALIZED_FAULT
    return "Look for an index past the end of a buffer, or a block needing more shared memory than the GPU has."


def _kernel_source(compiled: Any) -> str:
    try:
        return str(compiled.get_kernel_source())
    except Exception:  # noqa: BLE001 (a hint is not worth a second failure)
        return ""


def run_and_compare(ctx: Context, kernel: Kernel, case: Case, compiled: Any) -> CaseResult:
    from grader.pipeline.compare import compare
    from grader.pipeline.inputs import changed_inputs, launch, make_inputs, poisoned_outputs, writes_outside

    inputs = make_inputs(kernel, case, "cuda", ctx.seed_offset + ctx.draw)
    pristine = [x.clone() for x in inputs]
    outputs = poisoned_outputs(kernel, case, "cuda")
    try:
        launch(compiled, inputs, outputs)
    except Exception as error:  # an illegal address or a launch failure: the kernel's verdict
        from grader.pipeline.build import summarize

        return _result(
            ctx,
            kernel,
            case,
            outcome.CRASHED,
            f"the kernel crashed on the GPU: {summarize(error)}",
            hint=crash_hint(str(error), _kernel_source(compiled)),
            trace=traceback.format_exc(),
        )
    side_effects = changed_inputs(pristine, inputs, [t.name for t in kernel.inputs])
    side_effects += writes_outside(outputs, [t.name for t in kernel.outputs])
    result = with_side_effects(judge(ctx, kernel, case, pristine, outputs, compare), side_effects)
    return keep_failure(ctx, kernel, case, result, pristine, outputs)


def keep_failure(
    ctx: Context, kernel: Kernel, case: Case, result: CaseResult, inputs: list, outputs: list
) -> CaseResult:
    """With --save-failures, write a failed case's tensors and say how to replay it."""
    if not ctx.save_failures or result.status != outcome.FAILED:
        return result
    from grader.pipeline.failures import save_failure
    from grader.pipeline.inputs import reference_outputs

    expected = reference_outputs(kernel, inputs)
    path, command = save_failure(
        Path(ctx.save_failures),
        ctx.puzzle.id,
        ctx.source,
        kernel,
        case,
        ctx.seed_offset,
        ctx.draw,
        (ctx.device.mode, ctx.device.name),
        {"inputs": inputs, "expected": expected, "actual": outputs},
    )
    result.saved, result.replay = str(path), command
    return result


def judge(ctx: Context, kernel: Kernel, case: Case, inputs: list, outputs: list, compare: Any) -> CaseResult:
    """Compare every output with the float64 reference and fold the verdicts into one result."""
    from grader.pipeline.inputs import reference_outputs

    expected = reference_outputs(kernel, inputs)
    details: list[str] = []
    hint = ""
    tile_map = None
    wrong = total = 0
    max_abs = max_rel = 0.0
    for spec, got, want in zip(kernel.outputs, outputs, expected):
        tile = tuple(case.params.get(p) if p else None for p in kernel.tiles.get(spec.name, ()))
        verdict = compare(spec.name, got, want.to(got.device), kernel.tolerance_for(spec.dtype), tile)
        wrong += verdict.wrong
        total += verdict.total
        max_abs, max_rel = max(max_abs, verdict.max_abs_error), max(max_rel, verdict.max_rel_error)
        details += verdict.details
        hint = hint or verdict.hint
        if tile_map is None and verdict.tile_map is not None:
            tile_map = {"output": spec.name, **verdict.tile_map}
    status = outcome.PASSED if wrong == 0 else outcome.FAILED
    message = f"max abs err {max_abs:.3g}" if wrong == 0 else f"{wrong} of {total} output elements wrong"
    return _result(
        ctx,
        kernel,
        case,
        status,
        message,
        details=details,
        hint=hint,
        max_abs_error=max_abs,
        max_rel_error=max_rel,
        wrong=wrong,
        total=total,
        tile_map=tile_map,
    )


def bench_case(ctx: Context, kernel: Kernel, case: Case, compiled: Any) -> Bench:
    import torch

    from grader.pipeline import roofline
    from grader.pipeline.bench import INPUT_SETS, median_ms
    from grader.pipeline.inputs import make_inputs, poisoned_outputs

    if ctx.limits is None:
        ctx.limits = roofline.measure(torch, torch.cuda.get_device_name())
    sets = [make_inputs(kernel, case, "cuda", ctx.seed_offset + 1000 * (i + 1)) for i in range(INPUT_SETS)]
    outputs = poisoned_outputs(kernel, case, "cuda")
    ours = median_ms(lambda args: compiled(*args, *outputs), sets)
    theirs = median_ms(lambda args: kernel.baseline(*args), sets)
    others = {}
    for other in kernel.baselines:
        prepared = [list(other.prepare(*args)) if other.prepare else args for args in sets]
        others[other.name] = median_ms(lambda args, call=other.call: call(*args), prepared)
        del prepared
    flops = kernel.flops(case.sizes) if kernel.flops else None
    moved = kernel.bytes_moved(case.sizes) if kernel.bytes_moved else None
    floor_ms, bound = roofline.floor(ctx.limits, flops, moved)
    return Bench(
        kernel_ms=ours,
        torch_ms=theirs,
        tflops=flops / ours / 1e9 if flops else None,
        gbps=moved / ours / 1e6 if moved else None,
        floor_ms=floor_ms,
        bound=bound,
        others=others,
        params=dict(case.params) if ctx.learner_params else {},
        limits=ctx.limits.describe(),
    )
