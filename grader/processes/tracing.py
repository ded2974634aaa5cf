"""The judge's side of tracing: start the tracer, send it jobs, and admit only TIR that is safe to compile.

The tracer runs the learner's Python (grader.trace.tracer). This module gives it the least it needs
(no GPU, a scrubbed environment, a temporary working directory, limits on memory, file size and time,
its output captured where no verdict is read) and treats each reply as untrusted data: bounded in
size, parsed as JSON, its TVM node types on an allow-list, its names plain identifiers, no call to a
host function, options on an allow-list: grader.pipeline.admit is the one gate every traced kernel passes.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import linecache
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader import settings
from grader.discover import course_root
from grader.pipeline.admit import MAX_REPLY_BYTES
from grader.pipeline.build import Signature
from grader.pipeline.trace import TracerGone
from grader.processes import hermetic, reaper, sandbox
from grader.spec import Kernel

STARTING = "while starting"  # the tracer's own start, before any learner code runs
MAX_FILE_BYTES = 256 * 2**20  # what the tracer may write to any one file (its output included)

# Environment the tracer keeps; everything else (tokens, hidden-case paths, ...) is dropped.
KEPT_ENV = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LD_LIBRARY_PATH", "VIRTUAL_ENV", "CONDA_PREFIX")
KEPT_ENV_PREFIXES = ("LC_", "CUDA_HOME", "CUDA_PATH", "TVM_", "TILELANG_")
DROPPED_ENV_PREFIXES = (settings.PREFIX,)


def tracer_env(folder: Path) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if (name in KEPT_ENV or name.startswith(KEPT_ENV_PREFIXES)) and not name.startswith(DROPPED_ENV_PREFIXES)
    }
    paths = [str(course_root()), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env.update(
        CUDA_VISIBLE_DEVICES="",  # tracing needs no GPU
        PYTHONPATH=os.pathsep.join(paths),
        PYTHONDONTWRITEBYTECODE="1",
        TMPDIR=str(folder),
        # Its own compile cache in its private folder: TileLang makes its cache's folders at import, which the
        # sandbox's read-only filesystem refuses, and a tracer has nothing to compile or to take from the judge's.
        TILELANG_CACHE_DIR=str(Path(folder) / "tilelang-cache"),
        TILELANG_PRINT_ON_COMPILATION="0",
        PYTHONWARNINGS="ignore",
    )
    return env


def _limit_resources(memory_limit_gb: float) -> None:
    """Runs in the tracer between fork and exec: its own address-space and file-size limits."""
    import resource

    def lower(kind: int, value: int) -> None:
        soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(kind, (value, value))

    if memory_limit_gb > 0:
        lower(resource.RLIMIT_AS, int(memory_limit_gb * 2**30))
    lower(resource.RLIMIT_FSIZE, MAX_FILE_BYTES)


class ForkedTracer:
    """The tracer forked from a warm judge (grader.frontends.warm) rather than started as a new interpreter, with
    what the cold start gives it: its own session, the limits, a scrubbed environment, a temporary
    working directory, and no descriptor but its job pipe, its output file and its reply pipe. Its memory is the
    judge's: the puzzle's public cases and the course's spec module, which a learner's own copy of the course
    holds anyway. Where hidden cases are named, Tracer.start starts a fresh interpreter instead."""

    REPLY_FD = 3

    def __init__(self, pid: int, stdin: Any):
        self.pid, self.stdin, self.returncode = pid, stdin, None

    @classmethod
    def start(
        cls, source: Path, work: Path, reply_fd: int, output_fd: int, memory_limit_gb: float, hide: list[Path] | None
    ) -> ForkedTracer:
        """``hide`` not None: confined in the sandbox, which covers those paths (grader.processes.sandbox)."""
        jobs_read, jobs_write = os.pipe()
        gone_with_the_judge = reaper.death_link(os.getpid())  # resolved before the fork: the judge has threads
        pid = os.fork()
        if pid == 0:  # the tracer: never returns
            code = 1
            try:
                gone_with_the_judge()  # its own session: killing the judge's group would not reach it
                os.setsid()
                _limit_resources(memory_limit_gb)
                os.dup2(jobs_read, 0)
                os.dup2(output_fd, 1)
                os.dup2(output_fd, 2)
                os.dup2(reply_fd, cls.REPLY_FD)
                os.closerange(cls.REPLY_FD + 1, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536)
                if hide is not None:  # confined from here on; this process stays outside as the waiter
                    try:
                        sandbox.enter(work, hide, [source.resolve()], sandbox.tmpfs_bytes(memory_limit_gb))
                    except sandbox.Unavailable as error:
                        os.write(2, f"sandbox: {error}\n".encode())
                        code = sandbox.FAILED
                        raise
                # The judge's memory, copied by the fork, held the course's solutions as text: linecache had
                # solutions/pNN.py's lines (read for a traceback or an inspect), and a learner's file that wrote them
                # into its work folder and imported them traced the course's kernel as its own and PASSed its warm
                # check (tests/attacks/solution_from_memory.py). No source text of the judge's stays.
                linecache.clearcache()
                os.chdir(work)
                environment = tracer_env(work)
                os.environ.clear()
                os.environ.update(environment)
                sys.stdin = os.fdopen(0, "r", encoding="utf-8", closefd=False)
                sys.stdout = os.fdopen(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
                sys.stderr = os.fdopen(2, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
                # This child is the tracer from here on (confined, environment scrubbed): it runs what
                # `python -m grader.trace.tracer` runs on the cold path, named, not imported by this module.
                tracer = importlib.import_module("grader.trace.tracer")
                tracer.main([str(source.resolve()), str(cls.REPLY_FD)])
                code = 0
            finally:
                os._exit(code)
        os.close(jobs_read)
        return cls(pid, os.fdopen(jobs_write, "wb"))

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped already (kill_strays): it is gone, how is not known
                self.returncode = -signal.SIGKILL
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("tracer", timeout or 0)
            time.sleep(0.01)
        return self.returncode if self.returncode is not None else -9

    def kill(self) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)


@dataclass
class Tracer:
    """One tracer process for one learner file. ``ask`` sends a job and returns its reply."""

    source: Path
    memory_limit_gb: float
    folder: Any = None
    process: Any = None
    reply_fd: int = -1
    output: Any = None
    buffer: bytes = b""
    next_id: int = 0
    shown_limit: float = 0.0  # the --timeout a learner set, named in a hang's sentence (the wait is a bit less)
    confine: bool = True  # in the sandbox (grader.processes.sandbox); False only where the policy allows it unconfined

    def start(self) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="tilelang-course-trace-")
        work = Path(self.folder.name)
        read_end, write_end = os.pipe()
        self.output = tempfile.TemporaryFile()  # the tracer's stdout and stderr: never read as a verdict
        hide = sandbox.hidden_paths() if self.confine else None
        # Forked from a warm judge only where no hidden case is named: a fork holds the judge's memory, whose
        # puzzle lists every case with its sizes (and whose spec module is the course's own).
        if os.environ.get(settings.WARM) and settings.hidden_cases_file() is None:
            self.process = ForkedTracer.start(
                self.source, work, write_end, self.output.fileno(), self.memory_limit_gb, hide
            )
        else:
            gone_with_the_judge = reaper.death_link(os.getpid())
            command = [sys.executable, "-m", "grader.trace.tracer", str(self.source.resolve()), str(write_end)]
            if hide is not None:  # the launcher confines itself, then execs the tracer
                covered = [part for path in hide for part in ("--hide", str(path))]
                covered += ["--show", str(self.source.resolve())]
                covered += ["--bytes", str(sandbox.tmpfs_bytes(self.memory_limit_gb))]
                # The launcher runs outside the sandbox until it has entered it: hermetic, so no .pth of HOME's
                # user site, no sitecustomize and no PYTHON* variable runs there first.
                command = hermetic.command(
                    "grader.processes.sandbox", str(work), *covered, "--", *command, cwd=str(work)
                )
            self.process = subprocess.Popen(
                command,
                cwd=work,
                env=tracer_env(work),
                stdin=subprocess.PIPE,
                stdout=self.output,
                stderr=subprocess.STDOUT,
                pass_fds=(write_end,),
                start_new_session=True,  # one process group to kill, whatever it forks
                preexec_fn=lambda: (_limit_resources(self.memory_limit_gb), gone_with_the_judge()),
            )
        os.close(write_end)
        self.reply_fd = read_end

    def wait_ready(self, timeout: float) -> None:
        """Wait for the tracer's own start (the sandbox, importing TileLang), before any learner code runs: the
        grader's work, under its own limit, so a short --timeout still leaves a busy machine time to start."""
        message = self._read(timeout, STARTING)
        if message.get("event") != "ready":
            raise TracerGone("error", "the tracer gave an answer the grader does not understand")

    def wait_loaded(self, timeout: float) -> tuple[str, str]:
        """(problem, trace) of importing the learner's file: ("", "") when it imported."""
        message = self._read(timeout, "while importing the file")
        if message.get("event") != "loaded":
            raise TracerGone("error", "the tracer gave an answer the grader does not understand")
        return _text(message.get("problem")), _text(message.get("trace"))

    def ask(self, kernel: Kernel, known: tuple[str, ...], arguments: dict[str, Any], timeout: float) -> dict:
        self.next_id += 1
        signature = Signature.of(kernel)
        job = {
            "id": self.next_id,
            "function": signature.function,
            "known": list(known),
            "tensors": list(signature.tensors),
            "blocks": list(signature.blocks),
            "outputs": list(signature.outputs),
            "arguments": arguments,
        }
        try:
            self.process.stdin.write((json.dumps(job) + "\n").encode())
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # it died: _read says how
        reply = self._read(timeout, f"while tracing `{kernel.function}`")
        if reply.get("id") != self.next_id:
            raise TracerGone("error", "the tracer answered another question than the one asked")
        return reply

    def _read(self, timeout: float, when: str) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            ready = select.select([self.reply_fd], [], [], max(0.0, left))[0] if left > 0 else []
            if not ready and when == STARTING:
                raise TracerGone(
                    "error",
                    f"the process that reads your file did not start within {timeout:g} s (importing TileLang on a "
                    "busy machine), which says nothing about the file: give it longer (raise --compile-timeout)",
                )
            if not ready:
                cause = (
                    "the file's top level never finishes (a loop, a sleep or input() at import): a puzzle file "
                    "only defines functions"
                    if "importing" in when
                    else "TileLang runs the kernel's Python body to build it, and something there never ends "
                    "(a Python loop or a sleep)"
                )
                limit = self.shown_limit or timeout
                raise TracerGone("timed_out", f"no answer within {limit:g} s {when}: {cause}")
            chunk = os.read(self.reply_fd, 1 << 20)
            if not chunk:
                raise TracerGone("error", self._death(when))
            self.buffer += chunk
            if len(self.buffer) > MAX_REPLY_BYTES:
                raise TracerGone("error", "the traced kernel is far larger than any this puzzle needs")
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: JSON nested deeper than Python's stack (a forged reply)
            message = None
        if not isinstance(message, dict):
            raise TracerGone("error", "the tracer gave an answer the grader does not understand")
        return message

    def _death(self, when: str) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        if code == sandbox.FAILED:
            return f"the grader could not make its sandbox {when}: {self._said('sandbox: ') or 'no reason given'}"
        if code is not None and code < 0:
            return (
                f"the process that reads your file was killed by signal {-code} {when}: most often it ran out of "
                "memory (look for a buffer or tensor far larger than the case needs)"
            )
        return (
            f"the process that reads your file ended {when} (exit code {code}): something in the graded file "
            "ended it (sys.exit, os._exit, quit, closing a file descriptor); a puzzle file only defines functions"
        )

    def _said(self, prefix: str) -> str:
        """The last line of the tracer's output that starts with ``prefix``, without it."""
        if self.output is None:
            return ""
        self.output.seek(0)
        lines = [line for line in self.output.read()[-65536:].decode(errors="replace").splitlines() if line]
        found = [line.removeprefix(prefix) for line in lines if line.startswith(prefix)]
        return found[-1][:500] if found else ""

    def stop(self) -> None:
        """Kill the tracer, everything it started, and every orphan it left to this process."""
        if self.process is not None:
            reaper.kill_group(self.process.pid)
            self.process.kill()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            try:
                self.process.stdin.close()
            except OSError:
                pass
            reaper.kill_strays()
        if self.reply_fd >= 0:
            os.close(self.reply_fd)
        if self.output is not None:
            self.output.close()
        if self.folder is not None:
            self.folder.cleanup()
        self.process, self.reply_fd, self.output, self.folder, self.buffer = None, -1, None, None, b""


def _text(value: Any, limit: int = 20000) -> str:
    return value[:limit] if isinstance(value, str) else ""
