"""What a grading run says back to the front end that started it (grader.processes.launch.grade), as types.

The run writes one JSON line per event on a pipe of its own, whose write end only the grading process holds (the
tracer closes every descriptor it did not open; the sandbox too): nothing the graded file prints can forge an
event, unlike on stdout. ``encode`` and ``decode`` are the only places that know the lines' keys. In order:

    Graded     a case's result, as soon as it has one
    Finished   what each graded file's run was (device, isolation, the cases a quick check left uncompiled)
    Exited     the run's exit code (grader.frontends.grading.run): the stream is complete

A stream without Exited was cut short (a crash, a kill at the time limit): the front end reports no verdict.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
from dataclasses import dataclass, field
from typing import Any

from grader.outcome import CaseResult


@dataclass
class Graded:
    result: CaseResult


@dataclass
class Finished:
    runs: list[dict[str, Any]]  # one per graded file: the keys of grader.frontends.plugin's _runs


@dataclass
class Exited:
    code: int


Event = Graded | Finished | Exited


def encode(event: Event) -> bytes:
    if isinstance(event, Graded):
        data: dict[str, Any] = {"event": "graded", "result": event.result.to_dict()}
    elif isinstance(event, Finished):
        data = {"event": "finished", "runs": event.runs}
    else:
        data = {"event": "exited", "code": event.code}
    return json.dumps(data).encode() + b"\n"


def decode(line: bytes) -> Event:
    data = json.loads(line)
    kind = data["event"]
    if kind == "graded":
        return Graded(CaseResult.from_dict(data["result"]))
    if kind == "finished":
        return Finished(list(data["runs"]))
    if kind == "exited":
        return Exited(int(data["code"]))
    raise ValueError(f"no event {kind!r}")


class Writer:
    """The grading process's end: every event written whole, in order."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def send(self, event: Event) -> None:
        data = encode(event)
        while data:
            data = data[os.write(self.fd, data) :]

    def result(self, result: CaseResult) -> None:
        self.send(Graded(result))

    def finished(self, runs: list[dict[str, Any]]) -> None:
        self.send(Finished(runs))


FRONT_END_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass
class Received:
    """What came back: the results in the order they came, the runs, and the exit code (None: cut short)."""

    results: list[CaseResult] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    code: int | None = None


class Reader:
    """The front end's end, read on a thread of its own while the front end waits for the process (a run's
    events can outgrow the pipe's buffer, and the process would block on a full pipe)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.received = Received()
        self._thread = threading.Thread(target=self._read, daemon=True)
        # The thread starts with Ctrl-C and the terminal's signals blocked (it inherits the mask it is started
        # under): the kernel then delivers them to the main thread, which the front end's handlers run on (--watch
        # once went on after a Ctrl-C that came while this thread was alive).
        held = signal.pthread_sigmask(signal.SIG_BLOCK, FRONT_END_SIGNALS)
        try:
            self._thread.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)

    def _read(self) -> None:
        buffer = b""
        with contextlib.suppress(OSError):
            while chunk := os.read(self.fd, 1 << 16):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    self._take(line)

    def _take(self, line: bytes) -> None:
        if self.received.code is not None:
            return  # nothing counts after the end
        try:
            event = decode(line)
        except (ValueError, KeyError, TypeError):
            return  # not an event: the stream stays incomplete unless an exit code follows
        if isinstance(event, Graded):
            self.received.results.append(event.result)
        elif isinstance(event, Finished):
            self.received.runs = event.runs
        else:
            self.received.code = event.code

    def wait(self, timeout: float = 10.0) -> Received:
        """Once the process has ended (every write end closed): what it sent. Bounded: a process outside the
        run's group could hold the write end open."""
        self._thread.join(timeout)
        with contextlib.suppress(OSError):
            os.close(self.fd)
        return self.received
