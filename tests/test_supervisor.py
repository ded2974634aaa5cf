"""The supervisor (grader.processes.supervisor) against scripted judges: every timeout and crash path of
PuzzleRun, each in a fraction of a second (a hang here costs the run's limit, TIMEOUT or COMPILE_TIMEOUT).

PuzzleRun takes how it starts a judge as a keyword (``start_judge``); here it starts a scripted stand-in that
speaks the real protocol (grader.processes.protocol) over a real pipe: it describes the puzzle, reads the plan,
then answers, stays silent past a time limit, dies with a signal or an exit code, sends garbage or a Fatal.
Most stand-ins run on a thread of this process (a kill ends their wait at once); a few run the same scripts in
a forked process, killed and reaped like the real judge, which shows the thread's stand-in behaves as a
process would. The real judge hanging for real is left to one test per front end: the CLI's in
tests/test_adversarial.py (and its GPU twin), the notebook's in tests/test_notebooks.py, nbgrader's in
tests/test_nbgrader.py; what a hang costs in wall seconds is tests/test_perf.py's, and that a hung learner's
processes all go is tests/test_attacks.py's. The judge's own side of a hang (a tracer that never answers) is
at the end.
"""

from __future__ import annotations

import inspect
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from grader.outcome import CaseResult, Status
from grader.processes import supervisor
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
    Message,
    Phase,
    Result,
    Timings,
    encode,
)
from grader.settings import GradeOptions, JudgeRequest

# The runs' limits: what a hang costs here. Short, yet long enough that a loaded machine's scheduling never makes
# an answer late (a stand-in answers within microseconds of being asked).
TIMEOUT = 0.2  # --timeout: the learner's code
COMPILE_TIMEOUT = 0.3  # --compile-timeout, apart from --timeout, so each sentence shows whose limit it names
KERNELS = {"add": ["first", "second"], "mul": ["only"], "relu": ["only"]}
EVERY_CASE = [(kernel, case) for kernel, cases in KERNELS.items() for case in cases]
PUZZLE = {
    "id": "02",
    "title": "a scripted puzzle",
    "kernels": [
        {"function": kernel, "title": kernel, "cases": [{"name": case, "sizes": {"N": 8}} for case in cases]}
        for kernel, cases in KERNELS.items()
    ],
}
FATAL = "TileLang cannot be imported (no module named 'tilelang'): run pip install -e . first"


class Killed(BaseException):
    """The supervisor killed the thread's judge (signal 9)."""


class Exited(BaseException):
    """The thread's judge ends with ``code`` (negative: killed by that signal)."""

    def __init__(self, code: int):
        self.code = code


class Host:
    """What a scripted judge does, on either stand-in: speak the protocol on its end of the pipe, and misbehave."""

    def __init__(self, conn: Any, request: JudgeRequest, number: int, plans: list):
        self.conn, self.request, self.number, self.plans = conn, request, number, plans  # number: 1, 2, ... per run

    def send(self, message: Message | Any) -> None:
        """A message of the protocol, encoded as the judge sends it; anything else as it is (garbage)."""
        self.conn.send(encode(message) if isinstance(message, Message) else message)

    def plan(self) -> list[tuple[str, list[str]]]:
        plan = Channel(self.conn).recv_plan()
        self.plans.append(plan)
        return plan

    def hang(self) -> None:
        raise NotImplementedError

    def sleep(self, seconds: float) -> None:
        raise NotImplementedError

    def die(self, code: int) -> None:
        raise NotImplementedError


class ThreadJudge(Host):
    """A judge on a thread of this process, and the handle the supervisor holds (supervisor.Judge): killing it
    ends its wait at once; its exit code is the one the script chose (-9 once killed)."""

    def __init__(self, script: Callable[[Host], None], request: JudgeRequest, number: int, plans: list):
        parent, child = multiprocessing.Pipe()
        super().__init__(child, request, number, plans)
        self.parent = parent
        self.scratch_seen = Path(request.scratch).is_dir()
        self._killed = threading.Event()
        self._waiting = threading.Event()  # in hang(): only a kill ends it
        self._code: int | None = None
        self._thread = threading.Thread(target=self._main, args=(script,), daemon=True)
        self._thread.start()

    def _main(self, script: Callable[[Host], None]) -> None:
        code = 0
        try:
            script(self)
        except Killed:
            code = -signal.SIGKILL
        except Exited as exited:
            code = exited.code
        except (BrokenPipeError, EOFError, OSError):  # the supervisor closed its end: as a real judge, it ends
            code = 1
        finally:
            self._code = code
            self.conn.close()  # what a process's exit does to its end of the pipe

    # the script's side
    def plan(self) -> list[tuple[str, list[str]]]:
        while not self.conn.poll(0.001):  # a kill ends the wait, as it would a process's
            if self._killed.is_set():
                raise Killed
        return super().plan()

    def hang(self) -> None:
        self._waiting.set()
        self._killed.wait()
        raise Killed

    def sleep(self, seconds: float) -> None:
        if self._killed.wait(seconds):
            raise Killed

    def die(self, code: int) -> None:
        raise Exited(code)

    # the supervisor's side (supervisor.Judge)
    @property
    def exitcode(self) -> int | None:
        return None if self._thread.is_alive() else self._code

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def kill(self) -> None:
        self._killed.set()

    def join(self, timeout: float | None = None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._thread.is_alive():
            if self._waiting.is_set() and not self._killed.is_set():
                return  # it waits for a kill: waiting out ``timeout`` would change nothing but the clock
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return
            self._thread.join(0.002 if left is None else min(0.002, left))


class ForkedHost(Host):
    """The same scripts in a forked process: a hang sleeps until the supervisor kills it, a death is real."""

    def hang(self) -> None:
        time.sleep(3600)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def die(self, code: int) -> None:
        if code < 0:
            if -code != signal.SIGKILL:  # not pytest's faulthandler: the signal's own death, silently
                signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
            time.sleep(3600)
        os._exit(code)


def _forked_main(script: Callable[[Host], None], conn: Any, request: JudgeRequest, number: int) -> None:
    script(ForkedHost(conn, request, number, []))
    conn.close()


class Judges:
    """A run's ``start_judge``: each call starts the next judge, on ``script`` (told which judge it is)."""

    def __init__(self, script: Callable[[Host], None], forked: bool = False):
        self.script, self.forked = script, forked
        self.started: list[Any] = []
        self.requests: list[JudgeRequest] = []
        self.plans: list[list[tuple[str, list[str]]]] = []  # what each thread judge was asked to grade

    def __call__(self, request: JudgeRequest) -> tuple[supervisor.Judge, Any]:
        self.requests.append(request)
        number = len(self.requests)
        if self.forked:
            context = multiprocessing.get_context("fork")
            parent, child = context.Pipe()
            process = context.Process(target=_forked_main, args=(self.script, child, request, number), daemon=True)
            process.start()
            child.close()
            self.started.append(process)
            return process, parent
        judge = ThreadJudge(self.script, request, number, self.plans)
        self.started.append(judge)
        return judge, judge.parent


def passed(kernel: str, case: str) -> CaseResult:
    return CaseResult("02", kernel, case, Status.PASSED, {"N": 8}, "max abs err 0", checked="simulated")


def grading(misbehave: Callable[[Host], None] | None = None, at: tuple[str, str] = ("add", "first")):
    """A judge's script: describe the puzzle, then grade the plan as the judge does (the first case announced at
    once, the trace's timings, then each case: its start, its verdict), every case passing; except that the run's
    first judge, at case ``at``, does ``misbehave``."""

    def script(host: Host) -> None:
        host.send(Described("a scripted judge", "cpu", PUZZLE, "sm_90a", {"device_s": 0.01}))
        plan = host.plan()
        host.send(CaseStart(plan[0][0], plan[0][1][0]))
        host.send(Timings({"trace_s": 0.25}))
        for kernel, cases in plan:
            for case in cases:
                host.send(CaseStart(kernel, case))
                if misbehave is not None and host.number == 1 and (kernel, case) == at:
                    misbehave(host)
                host.send(Result(passed(kernel, case)))
        host.send(Done())
        host.conn.close()

    return script


def each_judge(*scripts: Callable[[Host], None]) -> Callable[[Host], None]:
    """The run's first judge runs the first script, the second the second, ...; the last one every later judge."""
    return lambda host: scripts[min(host.number, len(scripts)) - 1](host)


def silent_in(phase: str) -> Callable[[Host], None]:
    def misbehave(host: Host) -> None:
        if phase:
            host.send(Phase(phase))
        host.hang()

    return misbehave


def dies(code: int) -> Callable[[Host], None]:
    return lambda host: host.die(code)


def run_of(judges: Judges, timeout: float = TIMEOUT, compile_timeout: float = COMPILE_TIMEOUT) -> supervisor.PuzzleRun:
    options = GradeOptions(timeout=timeout, compile_timeout=compile_timeout)
    return supervisor.PuzzleRun(JudgeRequest("02", "spec.py", "mine.py", options), start_judge=judges)


def graded(
    script: Callable[[Host], None], forked: bool = False, **limits: float
) -> tuple[dict[tuple[str, str], CaseResult], Judges]:
    """Every case of the scripted puzzle graded by judges on ``script``: (kernel, case) -> its result."""
    judges = Judges(script, forked)
    run = run_of(judges, **limits)
    try:
        assert run.describe() is not None, run.startup_problem
        run.set_plan(EVERY_CASE)
        results = {key: run.result(*key) for key in EVERY_CASE}
    finally:
        run.close()
    assert not any(Path(r.scratch).exists() for r in judges.requests)  # each judge's temporary folder went with it
    assert not any(judge.is_alive() for judge in judges.started)
    return results, judges


def statuses(results: dict[tuple[str, str], CaseResult]) -> list[str]:
    return [results[key].status for key in EVERY_CASE]


# ------------------------------------------------------------------ the seam


def test_a_run_starts_the_real_judge_and_nothing_a_request_says_changes_that():
    """The stand-ins reach PuzzleRun only as a keyword no front end passes: a request (the options, the graded
    file) cannot choose how the judge starts, so the sandbox and the hermetic start stay the judge's own."""
    parameter = inspect.signature(supervisor.PuzzleRun).parameters["start_judge"]
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.default is supervisor.start_judge
    assert supervisor.PuzzleRun(JudgeRequest("02", "spec.py", "mine.py"))._start_judge is supervisor.start_judge
    grader = Path(supervisor.__file__).parents[1]
    passing = [p for p in grader.rglob("*.py") if "start_judge=" in p.read_text()]
    assert passing == [], passing


def test_a_judge_that_answers_grades_every_case_in_one_process():
    results, judges = graded(grading())
    assert statuses(results) == [Status.PASSED] * 4
    assert len(judges.started) == 1
    assert judges.plans == [[("add", ["first", "second"]), ("mul", ["only"]), ("relu", ["only"])]]
    judge = judges.started[0]
    assert judge.scratch_seen  # its temporary folder was there while it ran (graded() checks it went after)
    assert judge.exitcode == 0  # it said Done and ended


def test_what_the_judge_says_at_its_start_and_its_timings_reach_the_run():
    judges = Judges(grading())
    run = run_of(judges)
    try:
        assert run.describe() == PUZZLE
        assert (run.device, run.mode, run.arch, run.isolation) == ("a scripted judge", "cpu", "sm_90a", "")
        run.set_plan(EVERY_CASE)
        assert run.result("add", "first").status == Status.PASSED
        assert run.timings == {"device_s": 0.01, "trace_s": 0.25}
    finally:
        run.close()


# ------------------------------------------------------------------ a judge that does not start


def hang_at_start(host: Host) -> None:
    host.hang()


def fatal_at_start(host: Host) -> None:
    host.send(Fatal(FATAL))


@pytest.mark.parametrize(
    ("script", "problem"),
    [
        (fatal_at_start, FATAL),
        (
            hang_at_start,
            f"the grader's processes took longer than {COMPILE_TIMEOUT:g} s to start (importing torch and TileLang), "
            "which says nothing about the kernel: the machine is busy or slow; give it longer "
            "(raise --compile-timeout)",
        ),
        (
            dies(7),
            "the grading process exited with code 7 while loading the puzzle: something in the graded file ended the "
            "process (sys.exit, os._exit, quit); remove it, a puzzle file only defines functions",
        ),
        (
            dies(-signal.SIGSEGV),
            "the grading process was killed by signal 11 while loading the puzzle: TileLang, the compiler or the GPU "
            "driver crashed on this kernel; undo your last change to it and try again in smaller steps",
        ),
        (lambda host: host.send({"event": "pass_everything"}), "the grading process exited with code 0"),
    ],
    ids=["fatal", "silent", "exit_7", "signal_11", "garbage"],
)
def test_a_judge_that_does_not_start_says_why(script, problem):
    judges = Judges(script)
    run = run_of(judges, timeout=30)  # the start has --compile-timeout, never --timeout
    started = time.monotonic()
    assert run.describe() is None
    assert run.startup_problem.startswith(problem), run.startup_problem
    assert time.monotonic() - started < 10
    assert not judges.started[0].is_alive() and not Path(judges.requests[0].scratch).exists()


# ------------------------------------------------------------------ a case past its time limit

HANGS = "(look for a loop whose bound never ends, or one far longer than the sizes need)"


@pytest.mark.parametrize(
    ("phase", "status", "says"),
    [
        (
            COMPILING,
            Status.ERROR,
            f"compiling this case took longer than the time limit ({COMPILE_TIMEOUT:g} s), which says nothing about "
            "the kernel's numbers: shorten what TileLang unrolls (a T.unroll, a long loop of constant length), or "
            "give it longer (raise --compile-timeout)",
        ),
        (
            STARTING,  # the tracer's start, within the judge
            Status.ERROR,
            f"the grader's processes took longer than {COMPILE_TIMEOUT:g} s to start (importing torch and TileLang)",
        ),
        (
            PROFILING,
            Status.ERROR,
            f"profiling took longer than {COMPILE_TIMEOUT:g} s (the kernel and the course's own each run under Nsight "
            "Compute, which replays them many times): give it longer (raise --compile-timeout)",
        ),
        (
            SIMULATING,
            Status.TIMED_OUT,
            f"simulating this case on the CPU took longer than {TIMEOUT:g} s: the kernel loops far longer than the "
            "sizes need, or never ends (look at each loop's bound); if the loops are right, give it longer "
            "(raise --timeout)",
        ),
        (RUNNING, Status.TIMED_OUT, f"the kernel ran on the GPU for more than {TIMEOUT:g} s: it hangs {HANGS}"),
        (
            EXPLAINING,
            Status.TIMED_OUT,
            f"explaining this case (simulating it again and recording one block) took longer than {TIMEOUT:g} s: "
            "give it longer (raise --timeout), or pick a smaller case or another block",
        ),
        (TRACING, Status.TIMED_OUT, f"no answer within {TIMEOUT:g} s: the kernel hangs {HANGS}, or compiling"),
        ("", Status.TIMED_OUT, f"no answer within {TIMEOUT:g} s: the kernel hangs {HANGS}, or compiling took"),
    ],
    ids=["compiling", "starting", "profiling", "simulating", "running", "explaining", "tracing", "no_phase"],
)
def test_a_silent_case_is_reported_for_what_it_was_doing(phase, status, says):
    """The case in flight gets the phase's sentence, under the phase's own limit. The grader's own work running
    long (an ERROR: it says nothing about the kernel) costs only its case; the learner's code running long costs
    the rest of its kernel. Either way a fresh judge grades what is left."""
    results, judges = graded(grading(silent_in(phase)))
    hung = results[("add", "first")]
    assert (hung.status, hung.kernel, hung.puzzle) == (status, "add", "02")
    assert hung.message.startswith(says), hung.message
    assert judges.started[0].exitcode == -signal.SIGKILL  # the supervisor killed it
    second = results[("add", "second")]
    assert statuses(results)[2:] == [Status.PASSED, Status.PASSED]
    if status == Status.ERROR:
        assert second.status == Status.PASSED
        assert judges.plans[1] == [("add", ["second"]), ("mul", ["only"]), ("relu", ["only"])]
    else:
        assert (second.status, second.message) == (Status.NOT_RUN, f"not run: {hung.message}")
        assert judges.plans[1] == [("mul", ["only"]), ("relu", ["only"])]
    assert len(judges.started) == 2


def test_each_phase_has_the_whole_of_its_own_limit():
    """A compile longer than --timeout but within --compile-timeout is no timeout, and the case's own time
    starts when its compile ends."""

    def compile_then_simulate(host: Host) -> None:
        host.send(Phase(COMPILING))
        host.sleep(2 * TIMEOUT)  # past --timeout since the case started: only the new phase's clock saves it
        host.send(Phase(SIMULATING))

    results, judges = graded(grading(compile_then_simulate), compile_timeout=10 * TIMEOUT)
    assert statuses(results) == [Status.PASSED] * 4 and len(judges.started) == 1


def test_each_answer_from_the_tracer_starts_the_clock_again():
    """Tracing many cases takes longer than --timeout in all; each case traced (Alive) restarts the clock."""

    def traces_slowly(host: Host) -> None:
        host.send(Phase(TRACING))
        for _ in range(3):
            host.sleep(TIMEOUT / 2)
            host.send(Alive())

    results, judges = graded(grading(traces_slowly))
    assert statuses(results) == [Status.PASSED] * 4 and len(judges.started) == 1


def test_a_compile_past_its_limit_costs_its_case_and_the_next_case_is_graded():
    """What tests/test_messages.py once proved with a 60 s sleep: a slow compile is not a hang."""
    results, _ = graded(grading(silent_in(COMPILING)), timeout=10 * COMPILE_TIMEOUT)
    assert "hangs" not in results[("add", "first")].message
    assert results[("add", "first")].message.endswith("(raise --compile-timeout)")
    assert statuses(results) == [Status.ERROR, Status.PASSED, Status.PASSED, Status.PASSED]


def test_a_hang_reads_in_a_notebook_with_the_limit_check_takes():
    results, _ = graded(grading(silent_in(SIMULATING)))
    from grader.frontends import render

    longer = "(give it longer: check('add', timeout=...))"  # in a notebook the limit is check()'s
    shown = " ".join(render.case_lines(results[("add", "first")], layout=render.NOTEBOOK, longer=longer))
    assert "check('add', timeout=...)" in shown and "--timeout" not in shown


# ------------------------------------------------------------------ a judge that dies


@pytest.mark.parametrize(
    ("code", "says"),
    [
        (
            7,
            "the grading process exited with code 7 while running this case: something in the graded file ended the "
            "process (sys.exit, os._exit, quit); remove it, a puzzle file only defines functions",
        ),
        (
            -signal.SIGSEGV,
            "the grading process was killed by signal 11 while running this case: TileLang, the compiler or the GPU "
            "driver crashed on this kernel; undo your last change to it and try again in smaller steps",
        ),
        (
            -signal.SIGKILL,
            "the grading process was killed (signal 9) while running this case, and not by the out-of-memory killer: "
            "another program, a job time limit or a person stopped it. Run the grader again",
        ),
    ],
    ids=["exit_7", "signal_11", "signal_9"],
)
@pytest.mark.parametrize("forked", [False, True], ids=["thread", "forked"])
def test_a_judge_that_dies_mid_case_costs_its_kernel(monkeypatch, code, says, forked):
    monkeypatch.setattr(supervisor, "oom_kills", lambda: 7)  # the out-of-memory killer killed nothing meanwhile
    results, judges = graded(grading(dies(code)), forked=forked)
    assert results[("add", "first")].status == Status.CRASHED
    assert results[("add", "first")].message == says
    assert results[("add", "second")].status == Status.NOT_RUN
    assert results[("add", "second")].message == f"not run: {says}"
    assert statuses(results)[2:] == [Status.PASSED, Status.PASSED]  # a fresh judge
    assert len(judges.started) == 2 and judges.started[0].exitcode == code


def test_a_judge_killed_by_the_out_of_memory_killer_says_so(monkeypatch):
    counts = iter([7, 8])  # the kill counted between the judge's start and its death
    monkeypatch.setattr(supervisor, "oom_kills", lambda: next(counts, 8))
    results, _ = graded(grading(dies(-signal.SIGKILL)))
    message = results[("add", "first")].message
    assert message.startswith(
        "the grading process was stopped while running this case by the system's out-of-memory killer (the machine "
        "ran out of memory): look for a buffer or tensor far larger than the case needs"
    ), message
    unknown = supervisor.killed_reason("now", None, None)  # where /proc/vmstat does not say
    assert "out-of-memory killer or by another program (this machine does not say which)" in unknown


def test_a_hang_in_a_forked_judge_is_killed_and_the_next_kernel_is_graded():
    """The thread stand-in's kill and join, done to a real process."""
    results, judges = graded(grading(silent_in(SIMULATING)), forked=True)
    assert statuses(results) == [Status.TIMED_OUT, Status.NOT_RUN, Status.PASSED, Status.PASSED]
    assert judges.started[0].exitcode == -signal.SIGKILL


def test_a_crash_the_judge_reports_costs_the_rest_of_its_kernel():
    """A CUDA fault poisons the judge: it sends the crashed verdict and exits; the supervisor starts another."""

    def reports_a_crash(host: Host) -> None:
        crashed = CaseResult("02", "add", "first", Status.CRASHED, {"N": 8}, "CUDA error: an illegal memory access")
        host.send(Result(crashed))
        host.die(3)

    results, judges = graded(grading(reports_a_crash))
    assert results[("add", "first")].message == "CUDA error: an illegal memory access"
    assert statuses(results) == [Status.CRASHED, Status.NOT_RUN, Status.PASSED, Status.PASSED]
    assert results[("add", "second")].message == "not run: `add` crashed on case first"
    assert len(judges.started) == 2


@pytest.mark.parametrize(
    "garbage",
    [{"event": "pass_everything"}, {"event": "result", "status": "passed"}, {"event": "case_start"}, ["done"]],
    ids=["unknown_event", "result_without_one", "case_start_without_a_case", "not_a_dict"],
)
def test_a_judge_that_sends_garbage_is_as_good_as_dead(garbage):
    """Whatever is not a message of the protocol (grader.processes.protocol.decode) costs the kernel as a crash
    would, and the next kernel still gets a fresh judge: it never escapes as an exception."""

    def sends(host: Host) -> None:
        host.send(garbage)
        host.hang()

    results, judges = graded(grading(sends))
    assert statuses(results) == [Status.CRASHED, Status.NOT_RUN, Status.PASSED, Status.PASSED]
    assert judges.started[0].exitcode == -signal.SIGKILL  # stopped, not left running


# ------------------------------------------------------------------ the next judge does not start


def crashes_on_add(host: Host) -> None:
    grading(dies(-signal.SIGSEGV))(host)


@pytest.mark.parametrize(
    ("second", "status", "says"),
    [
        (fatal_at_start, Status.CRASHED, FATAL),
        (hang_at_start, Status.ERROR, f"the grader's processes took longer than {COMPILE_TIMEOUT:g} s to start"),
        (dies(5), Status.CRASHED, "the grading process exited with code 5 while starting: something in the graded"),
    ],
    ids=["fatal", "silent", "exit_5"],
)
def test_a_judge_that_does_not_restart_costs_one_kernel_and_the_next_gets_another(second, status, says):
    """After `add` crashes, the judge started for `mul` gives no description: `mul` gets why, and a third
    judge grades `relu`."""
    results, judges = graded(each_judge(crashes_on_add, second, grading()))
    mul = results[("mul", "only")]
    assert mul.status == status and mul.message.startswith(says), mul.message
    assert statuses(results) == [Status.CRASHED, Status.NOT_RUN, status, Status.PASSED]
    assert len(judges.started) == 3 and judges.plans[-1] == [("relu", ["only"])]


# ------------------------------------------------------------------ stopping


def test_stop_all_kills_a_judge_and_deletes_its_folder():
    """Ctrl-C in the CLI (grader.frontends.cli): every judge this process started goes, and its temporary folder."""
    judges = Judges(grading())
    run = run_of(judges)
    assert run.describe() is not None  # the judge now waits for its plan
    judge, scratch = judges.started[0], Path(judges.requests[0].scratch)
    assert judge.is_alive() and scratch.is_dir()
    supervisor.stop_all()
    assert not judge.is_alive() and judge.exitcode == -signal.SIGKILL and not scratch.exists()


# ------------------------------------------------------------------ the judge's side: a tracer that never answers


def test_a_tracer_that_never_answers_names_the_learners_limit():
    """What the CLI's hang test once proved with a file that sleeps 20 s at import: the judge waits a little less
    than --timeout (so it, not the supervisor, says which kernel hung) and names --timeout itself."""
    from grader.pipeline.trace import TracerGone
    from grader.processes.tracing import Tracer

    read_end, write_end = os.pipe()
    tracer = Tracer(Path("mine.py"), 1.0)
    tracer.reply_fd, tracer.shown_limit = read_end, 20
    try:
        with pytest.raises(TracerGone) as gone:
            tracer._read(0.01, "while importing the file")
    finally:
        os.close(read_end)
        os.close(write_end)
    assert gone.value.status == "timed_out"
    assert str(gone.value.message) == (
        "no answer within 20 s while importing the file: the file's top level never finishes (a loop, a sleep or "
        "input() at import): a puzzle file only defines functions"
    )


def test_a_tracer_that_hangs_costs_the_rest_of_its_kernel_and_the_next_kernel_gets_a_fresh_one():
    from grader.pipeline.trace import TracerGone
    from grader.processes.judge import trace_all

    class Tracer:
        """The judge's side of a tracer whose first one hangs at import; a fresh one traces."""

        def __init__(self):
            self.process, self.starts, self.asked = None, 0, []

        def start(self):
            self.process, self.starts = object(), self.starts + 1

        def wait_ready(self, timeout):
            pass

        def wait_loaded(self, timeout):
            if self.starts == 1:
                raise TracerGone(Status.TIMED_OUT, "no answer within 20 s while importing the file: ...")
            return "", ""

        def ask(self, kernel, known, arguments, timeout):
            self.asked.append(kernel.function)
            return {"id": len(self.asked)}

        def stop(self):
            self.process = None

    kernels = {name: SimpleNamespace(function=name) for name in KERNELS}
    work = [(kernels[k], SimpleNamespace(name=c, sizes={"N": 8}, params={}, unfit=False)) for k, c in EVERY_CASE]
    ctx = SimpleNamespace(puzzle=SimpleNamespace(kernels=tuple(kernels.values())), source=Path("mine.py"))
    tracer, phases, alive = Tracer(), [], []
    traced = trace_all(ctx, work, tracer, 16.0, lambda: alive.append(1), phase=phases.append)
    first, second, mul, relu = (traced[key] for key in EVERY_CASE)
    assert first.error.status == Status.TIMED_OUT and first.error.message.startswith("no answer within 20 s")
    assert (second.error.status, second.error.message) == (Status.NOT_RUN, f"not run: {first.error.message}")
    assert (mul.reply, relu.reply) == ({"id": 1}, {"id": 2}) and tracer.asked == ["mul", "relu"]
    assert tracer.starts == 2 and phases == [STARTING, TRACING, STARTING, TRACING] and len(alive) == 3
