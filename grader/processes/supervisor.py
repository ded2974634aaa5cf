"""Runs a puzzle's grading in child processes with a timeout, one verdict per case.

A hang or a crash costs the kernel it happened in: the case in flight is marked timed out or
crashed, the rest of that kernel's cases are not run, and a fresh child takes the next kernel.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
import time
import weakref
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import Any, Protocol

from grader.outcome import CaseResult, Cause, CauseKind, Status
from grader.processes.protocol import (
    COMPILING,
    EXPLAINING,
    GRADER_PHASES,
    PROFILING,
    RUNNING,
    SIMULATING,
    STARTING,
    Alive,
    CaseStart,
    Described,
    Done,
    Fatal,
    Message,
    Phase,
    Plan,
    Result,
    Timings,
    decode,
    encode,
)
from grader.settings import WARM, JudgeRequest

_RUNS: weakref.WeakSet[PuzzleRun] = weakref.WeakSet()  # every run with a judge that may be alive


def stop_all() -> None:
    """Stop every judge this process started and delete their temporary folders (Ctrl-C in the CLI)."""
    for run in list(_RUNS):
        run.close()


def oom_kills() -> int | None:
    """How many processes the kernel's out-of-memory killer has stopped since boot (Linux's /proc/vmstat,
    cgroup kills included), or None where the machine does not say."""
    try:
        with open("/proc/vmstat") as stats:
            for line in stats:
                name, _, value = line.partition(" ")
                if name == "oom_kill":
                    return int(value)
    except (OSError, ValueError):
        return None
    return None


def killed_reason(when: str, oom_before: int | None, oom_after: int | None) -> str:
    """Why the judge died of SIGKILL, from the out-of-memory killer's count before and after."""
    if oom_before is not None and oom_after is not None and oom_after > oom_before:
        return (
            f"the grading process was stopped {when} by the system's out-of-memory killer (the machine ran out of "
            "memory): look for a buffer or tensor far larger than the case needs"
        )
    if oom_before is not None and oom_after is not None:
        return (
            f"the grading process was killed (signal 9) {when}, and not by the out-of-memory killer: another "
            "program, a job time limit or a person stopped it. Run the grader again"
        )
    return (
        f"the grading process was killed (signal 9) {when}: by the system's out-of-memory killer or by another "
        "program (this machine does not say which). Run the grader again; if it happens again, look for a buffer "
        "or tensor far larger than the case needs"
    )


def timeout_reason(seconds: float, phase: str) -> tuple[str, str]:
    """(status, message) for a case the judge did not answer within ``seconds``, from what it was doing."""
    if phase == COMPILING:
        return Status.ERROR, (
            f"compiling this case took longer than the time limit ({seconds:g} s), which says nothing about the "
            "kernel's numbers: shorten what TileLang unrolls (a T.unroll, a long loop of constant length), or give "
            "it longer (raise --compile-timeout)"
        )
    if phase == STARTING:
        return Status.ERROR, (
            f"the grader's processes took longer than {seconds:g} s to start (importing torch and TileLang), which "
            "says nothing about the kernel: the machine is busy or slow; give it longer (raise --compile-timeout)"
        )
    if phase == PROFILING:
        return Status.ERROR, (
            f"profiling took longer than {seconds:g} s (the kernel and the course's own each run under Nsight "
            "Compute, which replays them many times): give it longer (raise --compile-timeout)"
        )
    if phase == EXPLAINING:
        return Status.TIMED_OUT, (
            f"explaining this case (simulating it again and recording one block) took longer than {seconds:g} s: "
            "give it longer (raise --timeout), or pick a smaller case or another block"
        )
    if phase == SIMULATING:
        return Status.TIMED_OUT, (
            f"simulating this case on the CPU took longer than {seconds:g} s: the kernel loops far longer than the "
            "sizes need, or never ends (look at each loop's bound); if the loops are right, give it longer "
            "(raise --timeout)"
        )
    if phase == RUNNING:
        return Status.TIMED_OUT, (
            f"the kernel ran on the GPU for more than {seconds:g} s: it hangs (look for a loop whose bound never "
            "ends, or one far longer than the sizes need)"
        )
    return Status.TIMED_OUT, (
        f"no answer within {seconds:g} s: the kernel hangs (look for a loop whose bound never ends, or one far "
        "longer than the sizes need), or compiling took too long (raise --timeout)"
    )


class Judge(Protocol):
    """What the supervisor needs of a started judge process (a multiprocessing.Process has all of it)."""

    @property
    def exitcode(self) -> int | None: ...

    def is_alive(self) -> bool: ...

    def kill(self) -> None: ...

    def join(self, timeout: float | None = None) -> None: ...


# How a judge is started: given the request (its scratch folder set), the started process and the supervisor's
# end of the pipe it speaks grader.processes.protocol on.
StartJudge = Callable[[JudgeRequest], tuple[Judge, Connection]]


def start_judge(request: JudgeRequest) -> tuple[Judge, Connection]:
    """The judge as every front end starts it: grader.processes.judge.serve in a process of its own."""
    # A warm check (grader.frontends.warm) forks the judge from its already-imported state; otherwise a fresh
    # interpreter. Either way the judge is a process of its own, and nothing in this one used CUDA.
    context = multiprocessing.get_context("fork" if os.environ.get(WARM) else "spawn")
    parent, child = context.Pipe()
    from grader.processes.judge import serve

    # JudgeRequest.from_dict in the judge
    process = context.Process(target=serve, args=(child, request.to_dict()), daemon=True)
    process.start()
    child.close()
    return process, parent


class PuzzleRun:
    """One puzzle's grading, for one graded file: a judge process per kernel run, under the time limits.

    ``start_judge`` is how a judge is started: the real one unless a test passes a scripted stand-in
    (tests/test_supervisor.py). No option, environment variable or graded file can choose it: the front ends
    construct a run from a JudgeRequest alone."""

    def __init__(self, request: JudgeRequest, *, start_judge: StartJudge = start_judge):
        self.request = request
        self._start_judge = start_judge
        self.timeout = request.options.timeout
        self.compile_timeout = request.options.compile_timeout
        self.description: dict[str, Any] | None = None
        self.device = ""
        self.mode = ""
        self.arch = ""  # what the judge compiled for (sm_90a, sm_80, ...), or the GPU profile it ran on
        self.isolation = ""  # "" when the graded file ran in the sandbox, else the sentence saying it did not
        self._pending: list[tuple[str, str]] = []
        self._results: dict[tuple[str, str], CaseResult] = {}
        self._stream: Iterator[CaseResult] | None = None
        self._process: Judge | None = None
        self._conn: Connection | None = None
        self.startup_problem = ""
        self.timings: dict[str, float] = {}
        self._fatal = ""  # why the last judge started gave no description
        self._fatal_status = Status.CRASHED
        self._fatal_cause = Cause(CauseKind.CRASHED, {"where": "process"})
        self._died = False
        self._oom_at_start: int | None = None  # the out-of-memory killer's count when the judge started
        self._scratch = ""  # the judge's temporary folder (TMPDIR), deleted when it stops
        _RUNS.add(self)

    # ------------------------------------------------------------------ child process
    def _start(self, when: str) -> Described | None:
        """A fresh judge's description; None when it gave none, the judge stopped and ``self._fatal`` (with
        ``self._fatal_status``) saying why: its Fatal, its start past --compile-timeout, or how it died."""
        self._scratch = tempfile.mkdtemp(prefix="tilelang-course-judge-")
        self._oom_at_start = oom_kills()
        self._process, self._conn = self._start_judge(self.request.with_scratch(self._scratch))
        message = self._receive(self.compile_timeout)  # the judge's start: imports, the device, the spec
        if isinstance(message, Described):
            return message
        self._fatal_status = Status.CRASHED
        self._fatal_cause = Cause(CauseKind.CRASHED, {"where": "process"})
        if isinstance(message, Fatal):
            self._fatal = message.message
            self._fatal_cause = Cause(CauseKind.SETUP)
        elif message is None and not self._died:  # alive, and silent past the limit of the grader's own work
            self._fatal_status, self._fatal = timeout_reason(self.compile_timeout, STARTING)
            self._fatal_cause = Cause(CauseKind.TIMED_OUT, {"phase": STARTING})
        else:
            self._fatal = self._death_reason(when)
        self._stop()
        return None

    def _receive(self, timeout: float | None = None) -> Message | None:
        """The child's next message; None if it died (self._died set) or stayed silent past ``timeout``
        (the case's time limit unless given)."""
        self._died = False
        try:
            if not self._conn.poll(self.timeout if timeout is None else max(0.0, timeout)):
                return None
            return decode(self._conn.recv())
        except (EOFError, OSError, ValueError):  # ValueError: not a message of the protocol, as good as dead
            self._died = True
            if self._process is not None:
                self._process.join(timeout=5)  # let it finish dying so its exit code can be read
            return None

    def _stop(self) -> None:
        if self._process is not None:
            if self._process.is_alive():
                self._process.kill()
            self._process.join(timeout=10)
        if self._conn is not None:
            self._conn.close()
        self._process = self._conn = None
        if self._scratch:  # the judge is gone: what it (TileLang, nvcc) left in its temporary folder goes too
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = ""

    def close(self) -> None:
        self._stop()

    # ------------------------------------------------------------------ public
    def describe(self) -> dict[str, Any] | None:
        """Start the child and return the canonical puzzle description (kernels and cases)."""
        if self.description is None:
            message = self._start("while loading the puzzle")
            if message is None:
                self.startup_problem = self._fatal
                return None
            self.description = message.puzzle
            self.device, self.mode, self.arch = message.device, message.mode, message.arch
            self.timings = dict(message.timings)
            self.isolation = message.isolation
        return self.description

    def set_plan(self, cases: list[tuple[str, str]]) -> None:
        self._pending = list(cases)

    def result(self, kernel: str, case: str) -> CaseResult:
        key = (kernel, case)
        if key not in self._pending and key not in self._results:
            self._pending.append(key)
        if self._stream is None:
            self._stream = self._run()
        while key not in self._results:
            got = next(self._stream, None)
            if got is None:
                break
            self._results[(got.kernel, got.case)] = got
        return self._results.pop(key)

    # ------------------------------------------------------------------ the loop
    def _plan(self) -> Plan:
        plan: list[tuple[str, list[str]]] = []
        for kernel, case in self._pending:
            if plan and plan[-1][0] == kernel:
                plan[-1][1].append(case)
            else:
                plan.append((kernel, [case]))
        return Plan(plan)

    def _run(self) -> Iterator[CaseResult]:
        while self._pending:
            if self._conn is None and self._start("while starting") is None:
                in_flight = self._pending[0]
                yield from self._give_up(in_flight[0], in_flight, self._fatal_status, self._fatal, self._fatal_cause)
                continue
            self._conn.send(encode(self._plan()))
            yield from self._drain()
        self._stop()

    def _drain(self) -> Iterator[CaseResult]:
        current: tuple[str, str] | None = None
        phase = ""  # what the case in flight is doing, as the judge last said
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._receive(deadline - time.monotonic())
            if message is None:
                in_flight = current or self._pending[0]
                alive = not self._died and self._process is not None and self._process.is_alive()
                if alive:
                    status, reason = timeout_reason(self._limit(phase), phase)
                    cause = Cause(CauseKind.TIMED_OUT, {"phase": phase})  # "": before the judge named a phase
                else:
                    status, reason = Status.CRASHED, self._death_reason("while running this case")
                    cause = Cause(CauseKind.CRASHED, {"where": "process"})
                self._stop()
                if status == Status.ERROR:  # a slow compile costs its own case: the next ones get a fresh judge
                    self._pending.remove(in_flight)
                    puzzle = (self.description or {}).get("id", self.request.puzzle_id)
                    source = self.request.kernel_file
                    yield CaseResult(puzzle, *in_flight, status, {}, reason, source, cause=cause)
                    return
                yield from self._give_up(in_flight[0], in_flight, status, reason, cause)
                return
            if isinstance(message, Phase):  # each phase has the whole of its own limit
                phase = message.phase
                deadline = time.monotonic() + self._limit(phase)
                continue
            deadline = time.monotonic() + self._limit(phase)
            if isinstance(message, Alive):  # the judge is tracing: each answer from the tracer restarts the clock
                continue
            if isinstance(message, Timings):  # where a run's seconds went before the first verdict (JSON)
                self.timings.update(message.timings)
                continue
            if isinstance(message, CaseStart):
                current, phase = (message.kernel, message.case), ""
                deadline = time.monotonic() + self.timeout
            elif isinstance(message, Result):
                result = message.result
                self._pending.remove((result.kernel, result.case))
                current = None
                yield result
                if result.status == Status.CRASHED:
                    self._stop()
                    yield from self._give_up(
                        result.kernel,
                        None,
                        Status.NOT_RUN,
                        f"not run: `{result.kernel}` crashed on case {result.case}",
                        Cause(CauseKind.NOT_RUN),
                    )
                    return
            elif isinstance(message, Done):
                # Everything is in hand: stop the child now rather than wait for its CUDA and
                # TileLang teardown, which costs seconds on a GPU machine.
                self._stop()
                return

    def _limit(self, phase: str) -> float:
        """The seconds a phase may take: the grader's own work (starting, compiling) has --compile-timeout,
        the learner's code (tracing its Python, simulating, running) --timeout."""
        return self.compile_timeout if phase in GRADER_PHASES else self.timeout

    def _give_up(
        self, kernel: str, in_flight: tuple[str, str] | None, status: str, reason: str, cause: Cause
    ) -> Iterator[CaseResult]:
        """Mark the case in flight with ``status`` (and ``cause``) and the rest of that kernel as not run."""
        puzzle = (self.description or {}).get("id", self.request.puzzle_id)
        source = self.request.kernel_file
        for key in [k for k in self._pending if k[0] == kernel]:
            self._pending.remove(key)
            if key == in_flight:
                yield CaseResult(puzzle, key[0], key[1], status, {}, reason, source, cause=cause)
            else:
                note = reason if reason.startswith("not run") else f"not run: {reason}"
                not_run = Cause(CauseKind.NOT_RUN)
                yield CaseResult(puzzle, key[0], key[1], Status.NOT_RUN, {}, note, source, cause=not_run)

    def _death_reason(self, when: str) -> str:
        code = self._process.exitcode if self._process is not None else None
        self._stop()
        if code is None:
            return f"the grading process gave no answer within {self.timeout:g} s {when} (raise --timeout)"
        if code == -9:
            return killed_reason(when, self._oom_at_start, oom_kills())
        if code < 0:
            return (
                f"the grading process was killed by signal {-code} {when}: TileLang, the compiler or the GPU driver "
                "crashed on this kernel; undo your last change to it and try again in smaller steps"
            )
        return (
            f"the grading process exited with code {code} {when}: something in the graded file ended the process "
            "(sys.exit, os._exit, quit); remove it, a puzzle file only defines functions"
        )
