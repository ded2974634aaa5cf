"""Runs a puzzle's grading in child processes with a timeout, one verdict per case.

A hang or a crash costs the kernel it happened in: the case in flight is marked timed out or
crashed, the rest of that kernel's cases are not run, and a fresh child takes the next kernel.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from typing import Any

from grader import outcome
from grader.outcome import CaseResult
from grader.warm import WARM_ENV

Plan = list[tuple[str, list[str]]]


class PuzzleRun:
    def __init__(self, request: dict[str, Any], timeout: float):
        self.request = {**request, "timeout": timeout}
        self.timeout = timeout
        self.description: dict[str, Any] | None = None
        self.device = ""
        self.mode = ""
        self.arch = ""  # what the judge compiled for (sm_90a, sm_80, ...), or the GPU profile it ran on
        self.isolation = ""  # "" when the graded file ran in the sandbox, else the sentence saying it did not
        self._pending: list[tuple[str, str]] = []
        self._results: dict[tuple[str, str], CaseResult] = {}
        self._stream: Iterator[CaseResult] | None = None
        self._process: Any = None
        self._conn: Any = None
        self.startup_problem = ""
        self.timings: dict[str, float] = {}
        self._fatal = ""
        self._died = False

    # ------------------------------------------------------------------ child process
    def _start(self) -> dict[str, Any] | None:
        # A warm check (grader.warm) forks the judge from its already-imported state; otherwise a fresh
        # interpreter. Either way the judge is a process of its own, and nothing in this one used CUDA.
        context = multiprocessing.get_context("fork" if os.environ.get(WARM_ENV) else "spawn")
        parent, child = context.Pipe()
        from grader.judge.worker import serve

        self._process = context.Process(target=serve, args=(child, self.request), daemon=True)
        self._process.start()
        child.close()
        self._conn = parent
        message = self._receive()
        if message is not None and message.get("event") == "fatal":
            self._fatal = message["message"]
            return None
        if message is None or message.get("event") != "described":
            return None  # the caller asks _death_reason why, which also stops the child
        return message

    def _receive(self) -> dict[str, Any] | None:
        """The child's next message; None if it died (self._died set) or stayed silent past the timeout."""
        self._died = False
        try:
            if not self._conn.poll(self.timeout):
                return None
            return self._conn.recv()
        except (EOFError, OSError):
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

    def close(self) -> None:
        self._stop()

    # ------------------------------------------------------------------ public
    def describe(self) -> dict[str, Any] | None:
        """Start the child and return the canonical puzzle description (kernels and cases)."""
        if self.description is None:
            message = self._start()
            if message is None:
                self.startup_problem = self._fatal or self._death_reason("while loading the puzzle")
                self._stop()
                return None
            self.description = message["puzzle"]
            self.device, self.mode, self.arch = message["device"], message["mode"], message.get("arch", "")
            self.timings = message.get("timings", {})
            self.isolation = message.get("isolation", "")
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
        plan: Plan = []
        for kernel, case in self._pending:
            if plan and plan[-1][0] == kernel:
                plan[-1][1].append(case)
            else:
                plan.append((kernel, [case]))
        return plan

    def _run(self) -> Iterator[CaseResult]:
        while self._pending:
            if self._conn is None and self._start() is None:
                reason = self._fatal or self._death_reason("while starting")
                yield from self._give_up(self._pending[0][0], self._pending[0], outcome.CRASHED, reason)
                continue
            self._conn.send({"plan": self._plan()})
            yield from self._drain()
        self._stop()

    def _drain(self) -> Iterator[CaseResult]:
        current: tuple[str, str] | None = None
        while True:
            message = self._receive()
            if message is None:
                in_flight = current or self._pending[0]
                alive = not self._died and self._process is not None and self._process.is_alive()
                if alive:
                    status = outcome.TIMED_OUT
                    reason = (
                        f"no answer within {self.timeout:g} s: the kernel hangs (look for a loop whose bound "
                        "never ends, or one far longer than the sizes need), or compiling took too long "
                        "(raise --timeout)"
                    )
                else:
                    status = outcome.CRASHED
                    reason = self._death_reason("while running this case")
                self._stop()
                yield from self._give_up(in_flight[0], in_flight, status, reason)
                return
            event = message["event"]
            if event == "alive":  # the judge is tracing: each answer from the tracer restarts the clock
                continue
            if event == "timings":  # where a run's seconds went before the first verdict (JSON: startup_seconds)
                self.timings.update(message.get("timings", {}))
                continue
            if event == "case_start":
                current = (message["kernel"], message["case"])
            elif event == "result":
                result = CaseResult.from_dict(message["result"])
                self._pending.remove((result.kernel, result.case))
                current = None
                yield result
                if result.status == outcome.CRASHED:
                    self._stop()
                    yield from self._give_up(
                        result.kernel,
                        None,
                        outcome.NOT_RUN,
                        f"not run: `{result.kernel}` crashed on case {result.case}",
                    )
                    return
            elif event == "done":
                # Everything is in hand: stop the child now rather than wait for its CUDA and
                # TileLang teardown, which costs seconds on a GPU machine.
                self._stop()
                return

    def _give_up(
        self, kernel: str, in_flight: tuple[str, str] | None, status: str, reason: str
    ) -> Iterator[CaseResult]:
        """Mark the case in flight with ``status`` and the rest of that kernel as not run."""
        puzzle = (self.description or {}).get("id", self.request.get("puzzle_id", ""))
        source = self.request.get("kernel_file", "")
        for key in [k for k in self._pending if k[0] == kernel]:
            self._pending.remove(key)
            if key == in_flight:
                yield CaseResult(puzzle, key[0], key[1], status, {}, reason, source)
            else:
                note = reason if reason.startswith("not run") else f"not run: {reason}"
                yield CaseResult(puzzle, key[0], key[1], outcome.NOT_RUN, {}, note, source)

    def _death_reason(self, when: str) -> str:
        code = self._process.exitcode if self._process is not None else None
        self._stop()
        if code is None:
            return f"the grading process gave no answer within {self.timeout:g} s {when} (raise --timeout)"
        if code == -9:
            return (
                f"the grading process was killed by signal 9 {when}: most often the system ran out of memory; "
                "look for a buffer or tensor far larger than the case needs"
            )
        if code < 0:
            return (
                f"the grading process was killed by signal {-code} {when}: TileLang, the compiler or the GPU driver "
                "crashed on this kernel; undo your last change to it and try again in smaller steps"
            )
        return (
            f"the grading process exited with code {code} {when}: something in the graded file ended the process "
            "(sys.exit, os._exit, quit); remove it, a puzzle file only defines functions"
        )
