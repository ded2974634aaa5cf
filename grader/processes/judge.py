"""The judge process: drives the grading steps (grader.pipeline) over one puzzle's cases. It never imports the
learner's file: a tracer process (grader.trace) traces each case and the judge admits what comes back
(grader.pipeline.admit) before compiling it. It talks to the supervisor in the messages of
grader.processes.protocol: ``serve`` sets the process up (its output, its scratch folder, the sandbox policy,
the tracer), ``_load`` the device and the puzzle, ``_trace_and_build`` every case's TIR and compile, ``_grade``
one case's verdict.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import time
import traceback
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from grader import outcome
from grader.devices import DEFAULT, Device, Profile
from grader.outcome import CaseResult, Status
from grader.pipeline.across import Graded, add_pattern
from grader.pipeline.admit import Traced, admitted
from grader.pipeline.build import OUT_OF_MEMORY, out_of_memory
from grader.pipeline.context import Build, Context, result_for
from grader.pipeline.grade import grade_case
from grader.pipeline.hidden import is_hidden, public_view
from grader.processes.protocol import (
    COMPILING,
    EXPLAINING,
    PROFILING,
    RUNNING,
    SIMULATING,
    STARTING,
    TRACING,
    Alive,
    CaseStart,
    Channel,
    Described,
    Done,
    Fatal,
    Phase,
    Result,
    Timings,
)
from grader.settings import WARM, JudgeRequest, compile_jobs, hidden_cases_file
from grader.spec import Case, Kernel, Puzzle


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


def serve(conn: Any, sent: dict[str, Any]) -> None:
    """The judge process's entry: ``sent`` is a JudgeRequest.to_dict() from the supervisor."""
    started = time.perf_counter()
    request = JudgeRequest.from_dict(sent)
    capture_output()
    use_scratch(request.scratch)
    from grader.processes import reaper
    from grader.processes.sandbox import policy
    from grader.processes.tracing import Tracer

    reaper.become_subreaper()  # what the tracer forks ends up ours to kill where there is no sandbox
    supervisor = multiprocessing.parent_process()
    if supervisor is not None and supervisor.pid is not None:  # killed with it, this judge's tracer goes too
        reaper.die_with(supervisor.pid)
    isolation = policy(hidden_cases=hidden_cases_file() is not None)
    if isolation.refusal:
        Channel(conn).send(Fatal(isolation.refusal))
        return
    source = Path(request.kernel_file)
    # Start the tracer at once: its imports overlap with this process's own.
    tracer = Tracer(source, request.options.memory_limit_gb, confine=isolation.confine)
    # Unconfined, the tracer could write the compile cache: undo what it wrote. Confined it can write
    # nothing, and no undo may delete what another grader on this machine compiled meanwhile.
    guard = reaper.CacheGuard(None) if isolation.confine else reaper.CacheGuard.here()
    if not os.environ.get(WARM):
        tracer.start()  # at once: its imports overlap with this process's own (a warm one has none to do)
    try:
        _serve(conn, request, tracer, guard, started, isolation.note)
    finally:
        tracer.stop()
        guard.undo()


def _serve(conn: Any, request: JudgeRequest, tracer: Any, guard: Any, started: float, isolation: str) -> None:
    channel = Channel(conn)
    loaded = _load(channel, request, started)
    if loaded is None:
        return
    ctx, described = loaded
    described.isolation = isolation
    channel.send(described)
    plan = channel.recv_plan()
    if plan:
        channel.send(CaseStart(plan[0][0], plan[0][1][0]))
    work = [(ctx.puzzle.kernel(f), ctx.puzzle.kernel(f).case(name)) for f, names in plan for name in names]
    builds = _trace_and_build(channel, ctx, request, work, tracer, guard)
    graded: list[tuple[Kernel, Case, Build | None, CaseResult]] = []
    for number, (kernel, case) in enumerate(work):
        channel.send(CaseStart(kernel.function, case.name))
        build = builds.get((kernel.function, case.name))
        result = _grade(channel, ctx, kernel, case, build)
        add_pattern(_graded(case, build, result), [_graded(c, b, r) for k, c, b, r in graded if k is kernel])
        if ctx.profile and build is not None and build.tir is not None and case.bench:
            channel.send(Phase(PROFILING))
            result.profile = _profile(ctx, kernel, case, build)
        if not any(r.structure for k, _, _, r in graded if k is kernel):
            result.structure = _structure(case, build)
        graded.append((kernel, case, build, result))
        if ctx.explain and number == len(work) - 1:  # every verdict is known: explain the case they point to
            channel.send(Phase(EXPLAINING))
            result.explanation = _explain(ctx, graded)
        channel.send(Result(public_view(result)))
        if result.status == Status.CRASHED:
            conn.close()
            os._exit(3)
    channel.send(Done())
    conn.close()


def _load(channel: Channel, request: JudgeRequest, started: float) -> tuple[Context, Described] | None:
    """TileLang, the device and the puzzle's spec (its hidden cases, the learner's bench parameters); None
    after a Fatal that says why the judge cannot grade."""
    quiet_tilelang()
    try:
        import tilelang  # noqa: F401  (timed on its own: it is most of a warm run)
    except ImportError as error:
        channel.send(Fatal(f"TileLang cannot be imported ({error}): run pip install -e . first"))
        return None
    import gc

    from grader.discover import load_module
    from grader.pipeline.shape import asked_of, course_puzzle, parse_block

    gc.freeze()  # torch's and TileLang's objects live as long as this process: no collection need walk them again
    imported = time.perf_counter()
    try:
        device = pick_device(request.options.device, request.options.arch)
    except ValueError as error:  # an --arch the course has no profile for
        channel.send(Fatal(str(error)))
        return None
    limit_memory(device, request.options.memory_limit_gb)
    device_ready = time.perf_counter()
    try:
        spec_module = load_module(Path(request.spec_file))
        puzzle = course_puzzle(spec_module, device.profile.name, hidden_cases_file())
    except Exception as error:  # the course's own file is broken: a maintainer's problem, said plainly
        channel.send(Fatal(f"the puzzle's spec {request.spec_file} cannot be loaded: {error!r}"))
        return None
    try:
        puzzle = asked_of(puzzle, spec_module, request.options)
        block = parse_block(request.options.block) if request.options.explain else None
    except ValueError as error:  # an option the puzzle cannot meet (--param, --profile, --explain, --block)
        channel.send(Fatal(str(error)))
        return None
    timings = {
        "import_torch_tilelang_s": imported - started,
        "device_s": device_ready - imported,
        "load_spec_s": time.perf_counter() - device_ready,
    }
    ctx = Context(
        puzzle,
        Path(request.kernel_file),
        device,
        request.options.bench,
        request.options.seed_offset,
        str(request.options.save_failures or ""),
        Path(request.spec_file),
        repeat=request.options.repeat,
        explain=request.options.explain,
        block=block,
        learner_params=bool(request.options.params),
        profile=profile_mode(request.options, device),
    )
    arch = device.profile.arch if device.mode != "cuda" else device.profile.name
    return ctx, Described(device.name, device.mode, _describe(puzzle), arch, timings)


def _explain(ctx: Context, graded: list[tuple[Kernel, Case, Build | None, CaseResult]]) -> outcome.Explanation:
    """The record of the case the verdicts point to: the first simulated case that failed, else the first
    simulated case (with --case, that case). Made from the admitted TIR on the CPU simulator, whatever the device;
    never changes a verdict."""
    from grader.pipeline.build import summarize
    from grader.pipeline.execute import kernel_source, reversed_blocks
    from grader.pipeline.explain import explain_case
    from grader.pipeline.grade import input_draw
    from grader.pipeline.inputs import make_inputs, poisoned_outputs

    simulated = [entry for entry in graded if entry[1].simulate] or graded[:1]
    failed = [entry for entry in simulated if entry[3].status != Status.PASSED]
    kernel, case, build, result = (failed or simulated)[0]
    if build is None or build.tir is None:
        return outcome.Explanation(
            kernel.function, case.name, [], [], problem="the kernel did not trace: " + result.message
        )
    try:
        compiled = build.compiled.result()
    except Exception:
        compiled = None  # the view needs only the TIR; the verdict says why it did not build
    seed = ctx.seed_offset + input_draw(ctx, build.tir, case)

    def fresh() -> tuple[list, list]:
        return make_inputs(kernel, case, "cpu", seed), poisoned_outputs(kernel, case, "cpu")

    try:
        return explain_case(
            build.tir,
            kernel,
            case,
            fresh,
            ctx.source.read_text(errors="replace"),
            ctx.block,
            profile=ctx.device.profile,
            tma_stores=compiled is not None and "tl::tma_store(" in kernel_source(compiled),
            reverse_blocks=reversed_blocks(kernel, case),
        )
    except Exception as error:  # a view that cannot be made must not cost the verdicts already sent
        return outcome.Explanation(kernel.function, case.name, [], [], problem=f"no view: {summarize(error)}")


def profile_mode(options: Any, device: Device) -> str:
    """ "gpu" where there are counters to read, "static" where asked or there is no GPU, "" without --profile."""
    if not options.profile:
        return ""
    return "gpu" if device.mode == "cuda" and not options.static else "static"


def _trace_and_build(
    channel: Channel, ctx: Context, request: JudgeRequest, work: list[tuple[Kernel, Case]], tracer: Any, guard: Any
) -> dict[tuple[str, str], Build]:
    """Every case traced (the tracer is gone afterwards), admitted, and its compile started."""
    # Under the supervisor's own limits, so the judge, not the supervisor, says which kernel hung.
    tracer.shown_limit = request.options.timeout
    planned = time.perf_counter()
    traced = trace_all(
        ctx,
        work,
        tracer,
        0.8 * request.options.timeout,
        lambda: channel.send(Alive()),
        phase=lambda name: channel.send(Phase(name)),
        start_timeout=0.8 * request.options.compile_timeout,
    )
    tracer.stop()  # no learner process is alive from here on
    guard.undo()  # and nothing it wrote into the compile cache is loaded
    stopped = time.perf_counter()
    builds = {} if ctx.device.problem else start_builds(ctx, work, traced)
    timings = {
        "trace_s": stopped - planned,
        "admit_s": time.perf_counter() - stopped,
        "traced_cases": len(work),
        "tracer_asked": tracer.next_id,  # cases the tracer traced: the others came from a warm check's trace cache
    }
    channel.send(Timings(timings))
    return builds


def _graded(case: Case, build: Build | None, result: CaseResult) -> Graded:
    """A graded case as grader.pipeline.across reads it: the case, its TIR, its verdict."""
    return Graded(case, build.tir if build is not None else None, result)


def _structure(case: Case, build: Build | None) -> outcome.Structure | None:
    """The sketch of a public case's admitted TIR (the class report compares kernels by it); None for a hidden
    case, one whose TIR was not admitted, or where TVM could not print it."""
    from grader.pipeline.structure import of_tir

    if build is None or build.tir is None or is_hidden(case.name):
        return None
    try:
        return of_tir(build.tir, case.name)
    except Exception:  # never part of a verdict: no sketch rather than no result
        return None


def _grade(channel: Channel, ctx: Context, kernel: Kernel, case: Case, build: Build | None) -> CaseResult:
    """One case's verdict, whatever happens: a grader bug still gives the case one."""
    try:
        announce_phases(channel, ctx, case, build)
        return grade_case(ctx, kernel, case, build)
    except Exception as error:
        from grader.pipeline.build import summarize

        if out_of_memory(error):
            cause = outcome.Cause(outcome.CauseKind.OUT_OF_MEMORY)
            return result_for(ctx, kernel, case, Status.ERROR, OUT_OF_MEMORY, trace=traceback.format_exc(), cause=cause)
        message = (
            f"the grader hit an internal error on this case: {summarize(error)} (please report it; "
            "--verbose shows the trace)"
        )
        cause = outcome.Cause(outcome.CauseKind.INTERNAL_ERROR)
        return result_for(ctx, kernel, case, Status.ERROR, message, trace=traceback.format_exc(), cause=cause)


def _profile(ctx: Context, kernel: Kernel, case: Case, build: Build) -> outcome.ProfileReport | None:
    """The case's profile, whatever its verdict (which it never changes); None if the kernel did not build."""
    from grader.processes.profiler import profile_case

    try:
        compiled = build.compiled.result()
    except Exception:  # the verdict already says why it did not build
        return None
    try:
        return profile_case(ctx, kernel, case, build.tir, compiled, build.options or {})
    except Exception as error:
        from grader.pipeline.build import summarize

        return outcome.ProfileReport(ctx.profile, problem=f"the profile could not be made: {summarize(error)}")


def announce_phases(channel: Channel, ctx: Context, case: Case, build: Build | None) -> None:
    """Tell the supervisor where this case's time goes: waiting for its compile (announced only while it is
    not done), then simulating it on the CPU or running it on the GPU. A case past the time limit is then
    reported for what it was doing (a slow compile is not a hanging kernel)."""
    if build is None or ctx.device.problem:
        return
    if not build.compiled.done():
        channel.send(Phase(COMPILING))
        wait([build.compiled])
    if ctx.device.mode == "cuda":
        channel.send(Phase(RUNNING))
    elif ctx.device.mode == "cpu" and case.simulate:
        channel.send(Phase(SIMULATING))


def _describe(puzzle: Puzzle) -> dict[str, Any]:
    return {
        "id": puzzle.id,
        "title": puzzle.title,
        "kernels": [
            {
                "function": k.function,
                "title": k.title,
                "cases": [
                    {
                        "name": c.name,
                        "sizes": {} if is_hidden(c.name) else dict(c.sizes),  # a hidden case's sizes stay here
                        "params": dict(c.params),
                        "bench": c.bench,
                        "simulate": bool(c.simulate),  # where there is no GPU: simulated, or too large and compiled
                        "unfit": c.unfit,
                    }
                    for c in k.cases
                ],
            }
            for k in puzzle.kernels
        ],
    }


def trace_all(
    ctx: Context,
    work: list[tuple[Kernel, Case]],
    tracer: Any,
    timeout: float,
    alive: Any,
    phase: Any = lambda name: None,
    start_timeout: float | None = None,
) -> dict[tuple[str, str], Traced]:
    """Ask the tracer for every case's TIR: public cases first, hidden ones last (nothing the learner's
    code reads then reaches any output). A tracer that hangs or dies costs the kernel it was tracing;
    a fresh one takes the next kernel. A tracer's start is the grader's work (``phase("starting")``, under
    ``start_timeout``); importing the learner's file and tracing are the learner's (``phase("tracing")``)."""
    from grader.pipeline.build import BuildFailed
    from grader.pipeline.trace import TracerGone
    from grader.processes import trace_cache

    known = tuple(k.function for k in ctx.puzzle.kernels)
    warm = bool(os.environ.get(WARM)) and not any(c.name.startswith("hidden_") for _, c in work)
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
            traced[key] = Traced(error=TracerGone(Status.NOT_RUN, f"not run: {gone.message}"))
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
                phase(STARTING)
                tracer.wait_ready(start_timeout or timeout)
                phase(TRACING)
                loaded = tracer.wait_loaded(timeout)
            problem, trace = loaded
            if problem:
                traced[key] = Traced(error=BuildFailed(problem, "", trace, kind=outcome.CauseKind.LOAD_ERROR))
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


def start_builds(
    ctx: Context, work: list[tuple[Kernel, Case]], traced: dict[tuple[str, str], Traced]
) -> dict[tuple[str, str], Build]:
    """Compile every case at once on a thread pool (TileLang's lowering and nvcc release the
    GIL), so a cold run costs about the slowest compile rather than their sum."""
    from grader.pipeline.build import compile_tir

    pool = ThreadPoolExecutor(max_workers=max(1, min(len(work), compile_jobs())))
    builds: dict[tuple[str, str], Build] = {}
    for kernel, case in work:
        key = (kernel.function, case.name)
        if case.unfit:
            continue
        try:
            tir, options = admitted(kernel, case, traced[key])
            runs = ctx.device.mode == "cuda"
            compiled = pool.submit(compile_tir, tir, ctx.device.target, ctx.source, kernel, options, runs)
            builds[key] = Build(tir, compiled, options)
        except Exception as error:  # reported when the case's turn comes
            failed: Future = Future()
            failed.set_exception(error)
            builds[key] = Build(None, failed)
    pool.shutdown(wait=False)
    return builds
