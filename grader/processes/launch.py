"""How a front end starts a grading run: ``grade_request`` sends a typed request (settings.GradeRequest) to
grader.frontends.grading in a child process group with a time limit, cold and hermetic
(grader.processes.hermetic), or forked from a warm grader (grader.frontends.warm) when one is running, and reads
the typed results back as they come (grader.processes.stream). ``grade`` does that for a module's text. The
notebook's check()/bench()/profile()/explain(), the planted kernels' check_source(), ``--watch`` and nbgrader's
JudgeChecks (so the shards and the Slurm task) all start their runs here; the command line runs
grader.frontends.grading.run in its own process.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader import settings
from grader.discover import course_root
from grader.outcome import CaseResult
from grader.processes import hermetic, reaper, stream


@dataclass
class GraderRun:
    """One run's typed results (None: the run ended without a complete stream, so no verdict), what each graded
    file's run was, the exit code, the captured output and the wall time."""

    results: list[CaseResult] | None
    returncode: int | None  # None: stopped at the time limit
    output: str
    seconds: float
    runs: list[dict[str, Any]] = field(default_factory=list)  # grader.frontends.plugin's _runs, one per file

    @classmethod
    def from_document(cls, document: dict[str, Any], returncode: int | None, output: str, seconds: float) -> GraderRun:
        """A run from the grader's JSON report (``--json``): the inverse of ``document``."""
        results = [CaseResult.from_dict(result) for result in document.get("results", [])]
        return cls(results, returncode, output, seconds, list(document.get("runs", [])))

    @property
    def document(self) -> dict[str, Any] | None:
        """The results as the grader's JSON report holds them (``--json``), for what keeps that form (a
        notebook's CheckResult, nbgrader's records)."""
        if self.results is None:
            return None
        return {"runs": self.runs, "results": [result.to_dict() for result in self.results]}


def check_options(kernels: Sequence[str], limit: float, **fields: Any) -> settings.GradeOptions:
    """The options of a front end's check of ``kernels`` (by their whole names) within ``limit`` seconds: each
    case's own code gets settings.case_timeout(limit) and the grader prints no verdict lines (the front end renders
    the typed results) unless ``fields`` say otherwise; ``fields`` are GradeOptions' (device, full, bench, params,
    profile, static, explain, block, cases)."""
    fields.setdefault("timeout", settings.case_timeout(limit))
    fields.setdefault("quiet", True)  # the front end renders the results, once
    return settings.GradeOptions(kernels=",".join(kernels), kernels_exact=True, **fields)


def grade(
    puzzle_id: str,
    module: str,
    options: settings.GradeOptions,
    timeout: float,
    *,
    env_extra: dict[str, str] | None = None,
    warm: Any = None,
) -> GraderRun:
    """Grade the module text ``module`` as puzzle ``puzzle_id`` with ``options``: grade_request on a copy of it in
    a temporary folder of its own, which is also the run's current folder and $TMPDIR."""
    with tempfile.TemporaryDirectory(prefix="tilelang-course-check-") as folder:
        source = Path(folder) / f"p{puzzle_id}_notebook.py"
        source.write_text(module)
        request = settings.GradeRequest(((puzzle_id, str(source)),), options)
        env = {**os.environ, "TILELANG_PRINT_ON_COMPILATION": "0", "PYTHONWARNINGS": "ignore", **(env_extra or {})}
        env.pop("MPLBACKEND", None)
        # The grader's and its judges' temporary folders inside this one: a check killed at its limit leaves
        # nothing in the learner's $TMPDIR (the sandboxed tracer sees neither: it gets an empty /tmp).
        scratch = Path(folder) / "tmp"
        scratch.mkdir()
        return grade_request(
            request, timeout, env=env, cwd=Path(folder), scratch=scratch, warm=warm if not env_extra else None
        )


def grade_request(
    request: settings.GradeRequest,
    timeout: float,
    *,
    env: dict[str, str],
    cwd: Path,
    scratch: Path | None = None,
    warm: Any = None,
) -> GraderRun:
    """The one way a front end starts a grading run: grader.frontends.grading's ``main`` on ``request`` (typed; it
    crosses as JSON), in a child process group killed whole at ``timeout`` seconds; forked from ``warm`` (a
    grader.frontends.warm.WarmGrader) when it is running, else a fresh hermetic interpreter. The results come back
    typed, each as it is graded, on a pipe of their own (grader.processes.stream). ``env`` is made hermetic here;
    ``scratch``: the run's $TMPDIR (set after that, as the learner's $TMPDIR is one of the folders it keeps off the
    path)."""
    root = course_root()
    env = {**env, "PYTHONPATH": os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)}
    env = hermetic.environment(env, cwd=str(cwd))
    if scratch is not None:
        env["TMPDIR"] = str(scratch)
    read_end, write_end = os.pipe()
    reader = stream.Reader(read_end)
    started = time.perf_counter()
    try:
        if warm is not None and warm.alive():
            try:  # the server keeps its own copy: ours closes whatever happens
                answer = warm.run(request, env, str(cwd), timeout, write_end)
            finally:
                os.close(write_end)
            code, output = answer.returncode, answer.output
        else:
            code, output = _cold(request, env, cwd, timeout, write_end)  # it closes the write end
    except BaseException:
        reader.wait(timeout=1.0)  # interrupted (the stop button): no descriptor left open
        raise
    received = reader.wait()
    complete = code is not None and received.code is not None
    return GraderRun(received.results if complete else None, code, output, time.perf_counter() - started, received.runs)


def _cold(
    request: settings.GradeRequest, env: dict[str, str], cwd: Path, timeout: float, write_end: int
) -> tuple[int | None, str]:
    """A fresh hermetic interpreter runs the request; the pipe's write end is closed here once it holds it."""
    command = hermetic.command("grader.frontends.grading", env=env, cwd=str(cwd))
    message = json.dumps({"request": request.to_dict(), "results_fd": write_end}).encode() + b"\n"
    gone_with_the_front_end = reaper.death_link(os.getpid())
    try:
        child = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=(write_end,),
            start_new_session=True,
            # a session of its own (killed whole at the limit), and gone with the front end: a Jupyter kernel
            # restarted or an autograde stopped while it grades would otherwise leave it running to its end
            preexec_fn=gone_with_the_front_end,
        )
    finally:
        os.close(write_end)  # the child's copy is the only one: the stream ends when the run does
    try:
        output, _ = child.communicate(message, timeout=timeout)
        code: int | None = child.returncode
    except subprocess.TimeoutExpired:
        kill_group(child)
        try:  # bounded too: a process outside the group could hold the pipe open
            output, _ = child.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            output = b""
        code = None
    finally:
        if child.returncode is None:  # interrupted (the stop button): stop the grader and its workers
            kill_group(child)
            child.wait()
    return code, output.decode(errors="replace")


def kill_group(child: subprocess.Popen) -> None:
    """Kill the grader and every process it started (its own session); only while it is unreaped,
    so the group id cannot belong to anyone else."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
