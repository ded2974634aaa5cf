"""The warm grader's server (``python -m grader.frontends.warm_server SOCKET``): imports what every check
needs once, then forks one child per typed request that grades it (grader.frontends.grading.serve;
grader.frontends.warm says how a check is isolated; WarmGrader there is the client)."""

from __future__ import annotations

import contextlib
import hmac
import importlib
import json
import os
import select
import signal
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

from grader.frontends.warm import EXIT_MARK, WARM_ENV
from grader.processes import reaper
from grader.settings import GradeRequest

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
    import grader.frontends.grading  # noqa: F401
    import grader.frontends.plugin  # noqa: F401
    import grader.pipeline.checks  # noqa: F401
    import grader.pipeline.compare  # noqa: F401
    import grader.pipeline.inputs  # noqa: F401
    import grader.pipeline.simulate  # noqa: F401
    import grader.processes.judge  # noqa: F401
    import grader.processes.tracing  # noqa: F401

    # The tracer's modules too, so a forked tracer starts with them loaded. By name: they are the untrusted
    # side (tests/test_architecture.py allows no static import of grader.trace outside it); importing them runs
    # no learner code.
    for untrusted in ("grader.trace.learner", "grader.trace.tracer"):
        importlib.import_module(untrusted)
    from grader.processes import sandbox

    sandbox.available()  # the trial sandbox, once for every check this server forks
    import gc

    # What is imported now lives as long as the server: the collector of each forked check need not walk it again
    # (torch's and TileLang's objects made every full collection of a check cost a large part of a second).
    gc.freeze()


_SOCKET_FOLDER = ""  # the server's socket lives here: a sandboxed tracer must not reach it


_SECRET = b""  # the first line of stdin: a request without it is dropped


def serve(path: str) -> None:
    global _SOCKET_FOLDER, _SECRET
    _SECRET = _read_line(sys.stdin.fileno()).strip()
    if len(_SECRET) < 32:
        return  # started without a secret: serve nobody
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


def _read_line(fd: int) -> bytes:
    """One line, a byte at a time: nothing past it may sit in a buffer that select() does not see."""
    line = b""
    while len(line) < 4096 and not line.endswith(b"\n"):
        byte = os.read(fd, 1)
        if not byte:
            break
        line += byte
    return line


def _fork_check(listener: socket.socket, connection: socket.socket) -> None:
    try:
        request, results_fd = _read_request(connection)
    except (OSError, ValueError, KeyError, TypeError):
        connection.close()
        return
    gone_with_the_server = reaper.death_link(os.getpid())
    if os.fork() == 0:
        code = 1
        try:
            # the check gets a session of its own (_run_check): it must still end with the server, which ends
            # with the front end that started it, or a killed kernel's check would grade on to its limit
            gone_with_the_server()
            listener.close()
            code = _run_check(connection, request, results_fd)
        finally:
            os._exit(code)
    connection.close()
    os.close(results_fd)


def _read_request(connection: socket.socket) -> tuple[dict[str, Any], int]:
    """The request and the results' descriptor that came with its first byte; ValueError (the descriptor
    closed) for anything else: no descriptor, a line that is not a request, a wrong secret."""
    connection.settimeout(10)
    data, fds, _, _ = socket.recv_fds(connection, 1, 4)
    results_fd = fds[0] if len(fds) == 1 else -1
    if results_fd < 0:
        for fd in fds:  # more than one: not our client's
            os.close(fd)
    try:
        if results_fd < 0:
            raise ValueError("no descriptor for the results")
        while b"\n" not in data and len(data) < MAX_REQUEST:
            chunk = connection.recv(65536)
            if not chunk:
                break
            data += chunk
        request = json.loads(data.partition(b"\n")[0])
        if not isinstance(request, dict) or not isinstance(request.get("grade"), dict):
            raise ValueError("not a request")
        if not hmac.compare_digest(str(request.get("secret", "")).encode(), _SECRET):
            raise ValueError("not from the front end that started this server")
        request["grade"] = GradeRequest.from_dict(request["grade"])
    except BaseException:
        if results_fd >= 0:
            os.close(results_fd)
        raise
    return request, results_fd


def _run_check(connection: socket.socket, request: dict[str, Any], results_fd: int) -> int:
    """In the forked child: grade the request (grader.frontends.grading.serve) in its directory and environment,
    the results on ``results_fd``, the output on the connection."""
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
    tempfile.tempdir = None  # the server's imports fixed it; this check's $TMPDIR is the request's
    from grader.processes.sandbox import HIDE_ENV

    os.environ[HIDE_ENV] = os.pathsep.join(p for p in (os.environ.get(HIDE_ENV, ""), _SOCKET_FOLDER) if p)
    from grader.frontends.grading import serve

    try:
        code = serve(request["grade"], results_fd)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    sys.stdout.flush()
    sys.stderr.flush()
    os.write(1, EXIT_MARK + str(code).encode() + b"\n")
    return code


if __name__ == "__main__":
    serve(sys.argv[1])
