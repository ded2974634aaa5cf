"""Leave no learner process behind: the judge adopts the tracer's orphans and kills them.

A learner's module can fork, or start a daemon in its own session, and so outlive the tracer. The
judge makes itself a child subreaper (Linux), so every process the tracer leaves becomes the judge's
child when its parent dies; ``kill_strays`` kills each child outside the judge's own process group
(the compilers the judge starts stay in it) until none is left. Where the OS has no subreapers,
killing the tracer's process group is all that is done.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


PR_SET_PDEATHSIG = 1


def death_link(parent: int) -> Callable[[], None]:
    """What a child runs between fork and exec (subprocess's ``preexec_fn``) to be killed when ``parent`` (the
    thread that forked it) dies, and to leave at once if it already has. A grader, judge or tracer sits in a
    session of its own, so killing its starter's group (a notebook's check stopped at its limit) does not reach
    it. Resolved here, in the parent: the child of a process with threads (a Jupyter kernel) must import nothing.
    Linux only; elsewhere it does nothing."""
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return lambda: None

    def link() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return link


def die_with(parent: int) -> None:
    """death_link(parent), run now, by a process that has just started and imports freely (the judge, linked to
    its supervisor); a child forked from a process with threads calls a death_link made before the fork."""
    death_link(parent)()


def _children() -> list[tuple[int, int]]:
    """(pid, process group) of every child of this process, read from /proc."""
    me, found = os.getpid(), []
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = entry.read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()  # after "pid (comm) ": state ppid pgrp ...
        if int(fields[1]) == me:
            found.append((int(entry.parent.name), int(fields[2])))
    return found


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def kill_strays(rounds: int = 50) -> int:
    """Kill and reap every child outside this process's group; how many were killed."""
    if not Path("/proc/self/stat").exists():
        return 0
    own, killed = os.getpgrp(), 0
    for _ in range(rounds):
        strays = [(pid, group) for pid, group in _children() if group != own]
        if not strays:
            return killed
        for pid, group in strays:
            kill_group(group)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            killed += 1
        time.sleep(0.02)  # their own children are reparented to us now: look again
    return killed


class CacheGuard:
    """Undo what was written into TileLang's compile cache while learner code ran.

    The cache holds compiled host libraries that the judge loads: a learner's module could plant one
    under the key its own kernel will have. Every file created or changed between ``here()`` (taken
    before the tracer starts) and ``undo()`` (after it and its orphans are dead, before the judge
    compiles anything) is deleted, symbolic links (to folders too) included, so the judge only ever loads
    what it compiled itself or found there before. ``undo`` acts once.
    """

    def __init__(self, folder: Path | None):
        self.folder = folder
        self.before = self._snapshot()
        self.done = False

    @classmethod
    def here(cls) -> CacheGuard:
        folder = os.environ.get("TILELANG_CACHE_DIR") or str(Path.home() / ".tilelang" / "cache")
        return cls(Path(folder))

    def _snapshot(self) -> dict[str, tuple[int, int, int, int]]:
        """Every file and every symbolic link under the folder (a link to a folder included: os.walk lists
        it with the folders and does not follow it), stamped with what an edit changes: the change time
        too, which, unlike the modification time, no process can set back."""
        found: dict[str, tuple[int, int, int, int]] = {}
        if self.folder is None or not self.folder.is_dir():
            return found
        for root, folders, files in os.walk(self.folder):
            for name in [*files, *(f for f in folders if os.path.islink(os.path.join(root, f)))]:
                path = os.path.join(root, name)
                with contextlib.suppress(OSError):
                    info = os.lstat(path)
                    found[path] = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)
        return found

    def undo(self) -> list[str]:
        if self.done:
            return []
        self.done = True
        removed = []
        for path, stamp in self._snapshot().items():
            if self.before.get(path) != stamp:
                with contextlib.suppress(OSError):
                    os.unlink(path)
                    removed.append(path)
        return removed
