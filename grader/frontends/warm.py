"""A warm grader: one resident process per notebook or terminal session, with torch and TileLang already
imported (CUDA not initialised), from which every check's processes are forked instead of started cold.

``python -m grader.frontends.warm_server SOCKET`` (the server) listens on a Unix socket. A request is one JSON line,
``{"secret": "...", "grade": {...}, "cwd": "...", "env": {...}}``: a typed grading request (settings.GradeRequest,
as JSON), with the secret the client gave the server on its stdin (any other request is dropped unanswered), and
with the descriptor the results stream back on, passed on the line's first byte. For each one the server forks a
child that runs grader.frontends.grading.serve in its own session, its stdout and stderr the connection; it
answers ``warm pid=N`` first and ``\\0exit=CODE`` last. That child forks the judge, and the judge forks
the tracer (``WARM_ENV`` tells them to), so each is still a process of its own, started fresh for this
check, with what the cold path gives it: the tracer a scrubbed environment, its own session, limits and
only the descriptors it needs; the judge never imports the learner's file. The server itself never runs
learner code, holds no result, and exits when the process that started it closes its stdin (the notebook's
kernel, the ``--watch`` loop) or dies.

This module is the client a notebook or ``--watch`` holds (WarmGrader); grader.frontends.warm_server is the server.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from grader import settings
from grader.processes import hermetic

WARM_ENV = settings.WARM  # set in a forked check: start the judge and the tracer by fork too
EXIT_MARK = b"\0exit="


@dataclass
class WarmRun:
    returncode: int | None  # None: stopped at the time limit, or the check died
    output: str


class WarmGrader:
    """The server for this session: started once, asked for every check, stopped with the session."""

    def __init__(self) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="tilelang-course-warm-")
        self.path = str(Path(self.folder.name) / "grader.sock")
        from grader.discover import course_root

        root = course_root()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p)}
        env = hermetic.environment(env, cwd=self.folder.name)
        # The server runs a request only with this secret, which reaches it through its stdin: a process that can
        # connect to the socket (a sandbox that escaped its folder, another program of the user) cannot make it
        # grade anything, least of all with --no-sandbox.
        self.secret = secrets.token_hex(32)
        self.process = subprocess.Popen(
            hermetic.command("grader.frontends.warm_server", self.path, env=env, cwd=self.folder.name),
            cwd=self.folder.name,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        self.process.stdin.write(self.secret.encode() + b"\n")
        self.process.stdin.flush()

    def alive(self) -> bool:
        return self.process.poll() is None

    def run(
        self, request: settings.GradeRequest, env: dict[str, str], cwd: str, timeout: float, results_fd: int
    ) -> WarmRun:
        """``request`` graded through the server (grader.frontends.grading.serve), its results streamed on
        ``results_fd`` (passed to the server with the request; the caller keeps and closes its own copy): the
        run's output and exit code. ``timeout`` counts from the fork of the check: a request sent while the server
        still imports torch and TileLang waits for that in the backlog, bounded by the grader's start limit (a slow
        machine's cost, not the kernel's)."""
        deadline = time.monotonic() + settings.DEFAULT_COMPILE_TIMEOUT_S
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            while True:  # the server binds its socket at once; wait for that, not for its imports
                try:
                    client.connect(self.path)
                    break
                except (FileNotFoundError, ConnectionRefusedError):
                    if not self.alive() or time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            message = {"secret": self.secret, "grade": request.to_dict(), "env": env, "cwd": cwd}
            # the results' descriptor rides on the request's first byte (SCM_RIGHTS)
            data = json.dumps(message).encode() + b"\n"
            socket.send_fds(client, [data[:1]], [results_fd])
            client.sendall(data[1:])
            return _collect(client, deadline, timeout)
        finally:
            client.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.folder.cleanup()


def _collect(client: socket.socket, deadline: float, timeout: float) -> WarmRun:
    """The check's output until its exit mark; ``deadline`` bounds the wait for the fork, ``timeout`` the check."""
    data, pid = b"", 0
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([client], [], [], left)[0]:
                _kill(pid)
                return WarmRun(None, _text(data))
            chunk = client.recv(1 << 16)
            if not chunk:
                break
            data += chunk
            if not pid and b"\n" in data:
                first, _, rest = data.partition(b"\n")
                pid = int(first.removeprefix(b"warm pid=") or 0) if first.startswith(b"warm pid=") else -1
                data = rest
                deadline = time.monotonic() + timeout  # the learner's limit starts with the check itself
    except KeyboardInterrupt:  # the stop button: stop the check and everything it started
        _kill(pid)
        raise
    body, mark, tail = data.rpartition(EXIT_MARK)
    if not mark:
        return WarmRun(None, _text(data))
    return WarmRun(int(tail.strip() or 1), _text(body))


def _kill(pid: int) -> None:
    if pid > 0:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


def _text(data: bytes) -> str:
    return data.decode(errors="replace")
