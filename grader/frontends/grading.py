"""The one way a grading run starts: ``run(request)`` grades ``request.targets`` with ``request.options`` in this
process, pytest running the cases (grader.frontends.plugin).

The command line calls it in its own process (grader.frontends.cli). Every other front end (a notebook's check(),
bench(), profile() and explain(), ``--watch``, nbgrader's JudgeChecks, the shards and the Slurm task through
JudgeChecks) calls grader.processes.launch.grade, which runs this module's ``main`` in a hermetic child
(``python -I -m grader.frontends.grading``, the request as JSON on stdin) or in a check forked from a warm grader
(grader.frontends.warm_server), and reads back the results it streams on a descriptor of their own
(grader.processes.stream). The options reach the plugin as an object: pytest's argv holds only the files and the
plugin's own fixed settings, never an option.

Exit codes: 0 every case passed, 1 some case failed, 2 usage error, 3 no case failed but some were only compiled
(no CUDA GPU here), or, in a quick check (-k without --full, no GPU), left uncompiled: their numbers were not
checked.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from grader.processes import hermetic
from grader.settings import SANDBOX, GradeRequest

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNCHECKED = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # the shell's code for a program stopped by Ctrl-C (128 + SIGINT)

REQUEST_PLUGIN = "grader-request"  # the name the request registers under (grader.frontends.plugin reads it)


class RequestPlugin:
    """Carries the typed request, and the sink its results go to, to the plugin (grader.frontends.plugin), which
    sets ``unchecked`` as the grading ends: how many cases were only compiled or left uncompiled (exit code 3)."""

    __name__ = REQUEST_PLUGIN

    def __init__(self, request: GradeRequest, sink: Any = None) -> None:
        self.request, self.sink, self.unchecked = request, sink, 0


def pytest_args(request: GradeRequest) -> list[str]:
    """pytest's command line for ``request``: the files to collect and the plugin's fixed settings, no option."""
    paths = [Path(path) for _, path in request.targets]
    return [
        *(str(path) for path in paths),
        "-p",
        "grader.frontends.plugin",
        "-p",
        "no:cacheprovider",
        # Its cleanup runs gc.collect() five times: seconds in a warm check, whose process holds torch and TileLang
        # (grader.frontends.warm); a grading run raises nothing for it to report.
        "-p",
        "no:unraisableexception",
        "--noconftest",  # a conftest.py beside the graded file, in a parent or in $TMPDIR would run in this process
        # no assertion rewriting: nothing graded is a test module, and the warm server has the plugin imported already
        "--assert=plain",
        "--rootdir",
        str(paths[0].resolve().parent),
        "-c",
        str(Path(__file__).with_name("pytest.ini")),
        "-q",
        "--no-header",
        "--tb=no",
        "-rN",
        "--color=auto",
    ]


def run(request: GradeRequest, sink: Any = None) -> int:
    """Grade ``request`` here; each result goes to ``sink.result`` as it comes and the runs to ``sink.finished``
    (grader.processes.stream.Writer), and the verdict lines to the terminal unless ``request.options.quiet``."""
    import pytest

    if request.options.no_sandbox:
        os.environ[SANDBOX] = "off"  # read by the judge, which starts the tracer
    # Only the grader's own plugin and options: no installed plugin, no PYTEST_ADDOPTS or PYTEST_PLUGINS.
    os.environ.update(hermetic.environment(os.environ))
    carrier = RequestPlugin(request, sink)
    code = pytest.main(pytest_args(request), plugins=[carrier])
    if code == pytest.ExitCode.OK:
        return EXIT_UNCHECKED if carrier.unchecked else EXIT_OK
    if code == pytest.ExitCode.TESTS_FAILED:
        return EXIT_FAILED
    if code == pytest.ExitCode.NO_TESTS_COLLECTED:
        if carrier.unchecked:  # a quick check whose selected cases were all too large to simulate: none compiled
            return EXIT_UNCHECKED
        if not (request.options.kernels or request.options.cases):
            # with -k or --case the plugin said what matched nothing and which names exist
            print("grader: nothing to grade", file=sys.stderr)
        return EXIT_USAGE
    if code == pytest.ExitCode.USAGE_ERROR:
        return EXIT_USAGE
    return EXIT_FAILED


def serve(request: GradeRequest, results_fd: int) -> int:
    """``run`` with its results streamed on ``results_fd``, the exit code last (a stream without it was cut
    short). The descriptor is closed on return."""
    from grader.processes import stream

    os.set_inheritable(results_fd, False)  # no program this run starts holds it
    writer = stream.Writer(results_fd)
    try:
        code = run(request, writer)
        writer.send(stream.Exited(code))
        return code
    finally:
        os.close(results_fd)


def main() -> int:
    """The child's side of grader.processes.launch.grade: one JSON line on stdin, ``{"request": ...,
    "results_fd": N}``."""
    message = json.loads(sys.stdin.readline())
    return serve(GradeRequest.from_dict(message["request"]), int(message["results_fd"]))


if __name__ == "__main__":
    sys.exit(main())
