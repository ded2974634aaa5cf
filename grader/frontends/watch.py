"""``python -m grader 08 --watch``: regrade a puzzle file's changed kernels every time it is saved.

One warm grader (grader.frontends.warm) serves the whole session, so a regrade costs tracing, the compile-cache
lookup and the run, not starting Python and importing torch and TileLang. A kernel counts as changed
when the text of its function changed (where it stands does not count: lines added to one kernel move the
others, and those are not regraded); a change to the code anywhere else in the file (imports, a helper macro,
not a comment or a blank line) regrades every kernel. Only the regraded kernels' verdicts are printed.
Ctrl-C stops it with one line and exit code 130.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path

from grader import settings
from grader.frontends.grading import EXIT_INTERRUPTED
from grader.i18n import tr

POLL_S = 0.3


def kernel_names(spec_file: Path) -> list[str]:
    """The graded kernels, read from the spec's text (no import: this process stays light)."""
    return re.findall(r'function="(\w+)"', spec_file.read_text())


def fingerprints(source: str, kernels: list[str]) -> dict[str, str]:
    """A digest per kernel of its function's text (decorators included), and one ("") of the code of everything
    else in the file. Neither depends on line numbers: the rest is digested as its syntax tree, in which each
    kernel is only its name, so a kernel that grows or shrinks moves the others without changing them."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        digest = hashlib.sha256(source.encode()).hexdigest()
        return {name: digest for name in ["", *kernels]}
    lines = source.splitlines(keepends=True)
    parts: dict[str, str] = {}
    rest: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in kernels:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            text = "".join(lines[first : node.end_lineno])
            parts[node.name] = hashlib.sha256(text.encode()).hexdigest()
            node = ast.Expr(ast.Constant(node.name))  # where it stands among the rest, not what it holds
        rest.append(node)
    code = ast.dump(ast.Module(body=rest, type_ignores=[]))  # no line numbers, comments or blank lines
    parts[""] = hashlib.sha256(code.encode()).hexdigest()
    return {name: parts.get(name, "") for name in ["", *kernels]}


def changed(before: dict[str, str], now: dict[str, str], kernels: list[str]) -> list[str]:
    if before.get("") != now.get(""):
        return list(kernels)
    return [k for k in kernels if before.get(k) != now.get(k)]


def watch(request: settings.GradeRequest, spec_file: Path, kernels: list[str]) -> int:
    """Grade the request's one file's ``kernels`` now and after every save, until Ctrl-C: each time the request
    with the changed kernels chosen, through grader.processes.launch.grade and one warm grader."""
    from grader.frontends.warm import WarmGrader

    ((_, graded),) = request.targets
    path = Path(graded)
    warm = None
    seen: dict[str, str] = {}
    stamp = None
    # A closed terminal (SIGHUP) or a kill (SIGTERM) ends the loop through `finally` like Ctrl-C does, so the
    # warm server this loop started, a process of its own session, and its folder go with it.
    for ended in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(ended, lambda number, _frame: sys.exit(128 + number))
    # Ctrl-C is how the loop ends: it must reach this thread whatever the process that started it had ignored or
    # blocked (both are inherited through fork and exec)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
    try:
        warm = WarmGrader()
        print(tr(f"watching {path} (Ctrl-C stops)"), flush=True)
        while True:
            try:
                now_stamp = path.stat().st_mtime_ns
            except OSError:
                now_stamp = None
            if now_stamp != stamp:
                stamp = now_stamp
                text = path.read_text() if now_stamp is not None else ""
                now = fingerprints(text, kernels)
                todo = changed(seen, now, kernels)
                seen = now
                if todo:
                    _regrade(warm, request, todo)
            time.sleep(POLL_S)
    except KeyboardInterrupt:  # Ctrl-C; a check under way was stopped with all it started (grader.frontends.warm)
        # the terminal echoed ^C without a newline: the line starts on a line of its own
        print(("\n" if sys.stdout.isatty() else "") + tr(f"stopped watching {path}"), flush=True)
        return EXIT_INTERRUPTED
    finally:
        if warm is not None:
            warm.stop()


def _regrade(warm: object, request: settings.GradeRequest, kernels: list[str]) -> None:
    from grader.processes import launch

    started = time.perf_counter()
    print(f"\n--- {time.strftime('%H:%M:%S')} grading {', '.join(kernels)}", flush=True)
    chosen = replace(request.options, kernels=",".join(kernels), kernels_exact=True, quiet=False)
    # the verdict lines as the grading run prints them (rendered there, once); the file graded where it is
    run = launch.grade_request(
        replace(request, options=chosen), 3600.0, env=dict(os.environ), cwd=Path.cwd(), warm=warm
    )
    sys.stdout.write(_verdict_lines(run.output))
    print(f"--- {time.perf_counter() - started:.1f} s", flush=True)


def _verdict_lines(output: str) -> str:
    """The grader's verdict lines without pytest's closing chatter."""
    keep = [line for line in output.splitlines() if not re.match(r"^(=+|-- Docs|\s*\S+\.py:\d+: \w*Warning)", line)]
    return "\n".join(keep).rstrip() + "\n"
