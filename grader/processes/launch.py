"""How a front end starts a grading run on a module's text: ``python -m grader`` on it in a child process
group with a time limit, cold and hermetic (grader.processes.hermetic), or forked from a warm grader
(grader.frontends.warm) when one is running. The notebook's check()/bench()/profile()/explain(), the planted
kernels' check_source() and nbgrader's JudgeChecks all start their runs here, and read the grader's JSON back.
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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from grader import settings
from grader.discover import course_root
from grader.processes import hermetic, reaper


@dataclass
class GraderRun:
    """One run's grader JSON (None: no readable report), exit code, captured output and wall time."""

    document: dict[str, Any] | None
    returncode: int | None  # None: stopped at the time limit
    output: str
    seconds: float


def check_options(kernels: Sequence[str], limit: float, **fields: Any) -> settings.GradeOptions:
    """The options of a front end's check of ``kernels`` (by their whole names) within ``limit`` seconds: each
    case's own code gets settings.case_timeout(limit) and the grader prints no verdict lines (the front end renders
    the results from the JSON) unless ``fields`` say otherwise; ``fields`` are
    GradeOptions' (device, full, bench, params, profile, static, explain, block, cases)."""
    fields.setdefault("timeout", settings.case_timeout(limit))
    fields.setdefault("quiet", True)  # the front end renders the JSON results, once
    return settings.GradeOptions(kernels=",".join(kernels), kernels_exact=True, **fields)


def run_grader(
    puzzle_id: str,
    module: str,
    options: settings.GradeOptions,
    timeout: float,
    *,
    env_extra: dict[str, str] | None = None,
    warm: Any = None,
) -> GraderRun:
    """``python -m grader`` on the module with ``options`` (typed; made into flags here and nowhere else), in a
    child process group killed whole at ``timeout`` seconds; forked from ``warm`` (a
    grader.frontends.warm.WarmGrader) when it is running, else a fresh interpreter. Where the report goes is this
    function's: a ``json`` in ``options`` is replaced."""
    root = course_root()
    with tempfile.TemporaryDirectory(prefix="tilelang-course-check-") as folder:
        source = Path(folder) / f"p{puzzle_id}_notebook.py"
        source.write_text(module)
        report = Path(folder) / "result.json"
        arguments = [puzzle_id, "--file", str(source), *replace(options, json=report).cli_argv()]
        env = {**os.environ, "TILELANG_PRINT_ON_COMPILATION": "0", "PYTHONWARNINGS": "ignore", **(env_extra or {})}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
        env.pop("MPLBACKEND", None)
        env = hermetic.environment(env, cwd=folder)
        command = hermetic.command("grader", *arguments, env=env, cwd=folder)
        # The grader's and its judges' temporary folders inside this one: a check killed at its limit leaves
        # nothing in the learner's $TMPDIR (the sandboxed tracer sees neither: it gets an empty /tmp). Set only
        # now: the learner's $TMPDIR is one of the folders the lines above keep off the grader's path.
        scratch = Path(folder) / "tmp"
        scratch.mkdir()
        env["TMPDIR"] = str(scratch)
        started = time.perf_counter()
        if warm is not None and warm.alive() and not env_extra:
            answer = warm.run(arguments, env, folder, timeout)
            document = read_json(report) if answer.returncode is not None else None
            return GraderRun(document, answer.returncode, answer.output, time.perf_counter() - started)
        gone_with_the_front_end = reaper.death_link(os.getpid())
        child = subprocess.Popen(
            command,
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            # a session of its own (killed whole at the limit), and gone with the front end: a Jupyter kernel
            # restarted or an autograde stopped while it grades would otherwise leave it running to its end
            preexec_fn=gone_with_the_front_end,
        )
        try:
            output, _ = child.communicate(timeout=timeout)
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
        document = read_json(report) if code is not None else None
        return GraderRun(document, code, output.decode(errors="replace"), time.perf_counter() - started)


def read_json(path: Path) -> dict[str, Any] | None:
    """The grader's JSON report, or None for none or a truncated one (the caller says no verdict came)."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def kill_group(child: subprocess.Popen) -> None:
    """Kill the grader and every process it started (its own session); only while it is unreaped,
    so the group id cannot belong to anyone else."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
