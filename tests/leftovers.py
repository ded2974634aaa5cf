"""The suite leaves nothing behind: no file in the checkout, nothing in $TMPDIR, no process.

Hooks for tests/conftest.py, run in the pytest process that starts xdist's workers (or the only one):

- at configure, the run gets a $TMPDIR of its own, so that what any test, grader, judge or notebook kernel
  leaves there can be told from what other programs on the machine write to the shared /tmp; the controller
  becomes a child subreaper (PR_SET_CHILD_SUBREAPER), so a process a test starts and orphans is reparented
  here instead of to init, where it could not be found;
- at the end of the session, after the workers are gone, the run fails (exit status 1) and says what was left:
  files in the checkout that ``git status --ignored`` did not list at the start, entries in the run's $TMPDIR
  other than pytest's own ``pytest-of-*``, and live processes still parented here.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PR_SET_CHILD_SUBREAPER = 36
# What a test run makes by design in the checkout: bytecode and the linters' and pytest's caches.
EXPECTED_IN_CHECKOUT = ("__pycache__/", ".pytest_cache/", ".ruff_cache/", ".hypothesis/", ".benchmarks/")
PROCESS_GRACE_S = 5.0  # a process that is exiting when the session ends gets this long to finish
WORKER = "workerinput"  # the attribute xdist gives a worker's config


def _controller(config: pytest.Config) -> bool:
    return not hasattr(config, WORKER)


def checkout_state() -> set[str]:
    """Every changed, untracked or ignored path of the checkout, as ``git status`` names it."""
    found = subprocess.run(
        ["git", "status", "--porcelain", "--ignored", "--untracked-files=all"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if found.returncode != 0:  # not a git checkout (an sdist): nothing to compare
        return set()
    return {line for line in found.stdout.splitlines() if not any(part in line for part in EXPECTED_IN_CHECKOUT)}


def children() -> dict[int, str]:
    """Live (not zombie) processes whose parent is this one: pid -> command line."""
    me, found = os.getpid(), {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            state, parent = stat.rsplit(")", 1)[1].split()[:2]
            if int(parent) != me or state in ("Z", "X"):
                continue
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, ValueError, IndexError):  # gone meanwhile
            continue
        found[int(entry.name)] = command[:200]
    return found


def reap() -> None:
    """Collect the exit status of every child that ended (orphans reparented here end as zombies)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def pytest_configure(config: pytest.Config) -> None:
    if not _controller(config) or getattr(config, "_leftovers", None) is not None:
        return
    own_tmp = tempfile.mkdtemp(prefix="t-")  # short: a Unix socket path (108 bytes) may be made under it
    config._leftovers = {"checkout": checkout_state(), "tmp": own_tmp, "outer_tmp": tempfile.gettempdir()}
    os.environ["TMPDIR"] = own_tmp  # inherited by the workers xdist starts after configure, and all they start
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: orphans go to init and are not seen
        pass


@pytest.hookimpl(trylast=True)  # after xdist's own sessionfinish has stopped the workers
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = getattr(session.config, "_leftovers", None)
    if state is None:
        return
    problems = []
    deadline = time.monotonic() + PROCESS_GRACE_S
    while True:
        reap()
        alive = children()
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    problems += [f"process {pid} still running: {command}" for pid, command in sorted(alive.items())]
    new_files = sorted(checkout_state() - state["checkout"])
    problems += [f"in the checkout: {line}" for line in new_files]
    own_tmp = Path(state["tmp"])
    left = sorted(p.name for p in own_tmp.iterdir() if not p.name.startswith("pytest-of-")) if own_tmp.exists() else []
    problems += [f"in $TMPDIR: {name}" for name in left]
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if problems:
        if reporter is not None:
            reporter.section("left behind by the test run", red=True)
            for line in problems:
                reporter.write_line(line)
            reporter.write_line(f"(the run's $TMPDIR, kept for a look: {own_tmp})")
        if session.exitstatus == 0:
            session.exitstatus = 1
        return
    shutil.rmtree(own_tmp, ignore_errors=True)  # pytest's own tmp_path folders went with it
