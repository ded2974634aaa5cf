"""A warm grader: one resident process per notebook or terminal session, with torch and TileLang already
imported (CUDA not initialised), from which every check's processes are forked instead of started cold.

``python -m grader.processes.warm SOCKET`` listens on a Unix socket. A request is one JSON line,
``{"argv": [...], "cwd": "...", "env": {...}}``: the grader's command line. For each one the server forks
a child that becomes ``python -m grader ARGV`` in its own session, its stdout and stderr the connection;
it answers ``warm pid=N`` first and ``\\0exit=CODE`` last. That child forks the judge, and the judge forks
the tracer (``WARM_ENV`` tells them to), so each is still a process of its own, started fresh for this
check, with what the cold path gives it: the tracer a scrubbed environment, its own session, limits and
only the descriptors it needs; the judge never imports the learner's file. The server itself never runs
learner code, holds no result, and exits when the process that started it closes its stdin (the notebook's
kernel, the ``--watch`` loop) or dies.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader import settings

WARM_ENV = settings.WARM  # set in a forked check: start the judge and the tracer by fork too
EXIT_MARK = b"\0exit="
MAX_REQUEST = 1 << 20


def preload() -> None:
    """What every check imports, imported once (no CUDA call: a CUDA context does not survive fork)."""
    os.environ.setdefault("TILELANG_PRINT_ON_COMPILATION", "0")
    # TileLang asks torch.cuda.is_available() at import. Through the CUDA runtime that initialises the
    # driver, and no forked check could use the GPU afterwards (on the H200 every warm judge died at its
    # first CUDA call); through NVML it leaves the driver alone.
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    import logging

    logging.getLogger("tilelang").setLevel(logging.WARNING)
    import pytest  # noqa: F401
    import tilelang  # noqa: F401
    import tilelang.language  # noqa: F401
    import torch  # noqa: F401

    import grader.frontends.cli  # noqa: F401
    import grader.pipeline.checks  # noqa: F401
    import grader.pipeline.compare  # noqa: F401
    import grader.pipeline.inputs  # noqa: F401
    import grader.pipeline.simulate  # noqa: F401
    import grader.processes.judge  # noqa: F401
    import grader.processes.tracer  # noqa: F401
    import grader.trace.frontend  # noqa: F401
    import grader.trace.tracer  # noqa: F401
    from grader.processes import sandbox

    sandbox.available()  # the trial sandbox, once for every check this server forks


_SOCKET_FOLDER = ""  # the server's socket lives here: a sandboxed tracer must not reach it


def serve(path: str) -> None:
    global _SOCKET_FOLDER
    _SOCKET_FOLDER = str(Path(path).resolve().parent)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(8)  # requests that come while it warms up wait in the backlog
    preload()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the children reap themselves
    try:
        while True:
            ready = select.select([listener, sys.stdin], [], [])[0]
            if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1024):
                return  # the session that started it is gone
            if listener in ready:
                connection, _ = listener.accept()
                _fork_check(listener, connection)
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            os.unlink(path)


def _fork_check(listener: socket.socket, connection: socket.socket) -> None:
    try:
        request = _read_request(connection)
    except (OSError, ValueError):
        connection.close()
        return
    if os.fork() == 0:
        code = 1
        try:
            listener.close()
            code = _run_check(connection, request)
        finally:
            os._exit(code)
    connection.close()


def _read_request(connection: socket.socket) -> dict[str, Any]:
    connection.settimeout(10)
    data = b""
    while b"\n" not in data and len(data) < MAX_REQUEST:
        chunk = connection.recv(65536)
        if not chunk:
            break
        data += chunk
    request = json.loads(data.partition(b"\n")[0])
    if not isinstance(request, dict) or not isinstance(request.get("argv"), list):
        raise ValueError("not a request")
    return request


def _run_check(connection: socket.socket, request: dict[str, Any]) -> int:
    """In the forked child: become ``python -m grader ARGV`` with the request's directory and environment."""
    os.setsid()  # its own process group: a timeout kills the check and everything it started
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    fd = connection.fileno()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    connection.close()
    sys.stdout = os.fdopen(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    sys.stderr = os.fdopen(2, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    sys.stdin = open(os.devnull)  # noqa: SIM115  (the check reads nothing)
    print(f"warm pid={os.getpid()}", flush=True)
    os.chdir(request.get("cwd") or "/")
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in (request.get("env") or {}).items()})
    os.environ[WARM_ENV] = "1"
    from grader.processes.sandbox import HIDE_ENV

    os.environ[HIDE_ENV] = os.pathsep.join(p for p in (os.environ.get(HIDE_ENV, ""), _SOCKET_FOLDER) if p)
    from grader.__main__ import main

    try:
        code = main([str(a) for a in request["argv"]])
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    sys.stdout.flush()
    sys.stderr.flush()
    os.write(1, EXIT_MARK + str(code).encode() + b"\n")
    return code


# ------------------------------------------------------------------------------------ the client


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
        self.process = subprocess.Popen(
            [sys.executable, "-m", "grader.processes.warm", self.path],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )

    def alive(self) -> bool:
        return self.process.poll() is None

    def run(self, argv: list[str], env: dict[str, str], cwd: str, timeout: float) -> WarmRun:
        """``python -m grader ARGV`` through the server: its output and exit code."""
        deadline = time.monotonic() + timeout
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
            client.sendall(json.dumps({"argv": argv, "env": env, "cwd": cwd}).encode() + b"\n")
            return _collect(client, deadline)
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


def _collect(client: socket.socket, deadline: float) -> WarmRun:
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


if __name__ == "__main__":
    serve(sys.argv[1])
