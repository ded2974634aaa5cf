"""The sandbox every process that runs submission code lives in: Linux namespaces, entered by the judge's
own code (no external tool), so that the tracer, started cold or forked warm, is confined the same way.

``enter(writable, hide, show)`` turns the calling process (single-threaded, e.g. just forked) into the first
process of new user, mount, PID, network, IPC and UTS namespaces, and returns there:

- its root is a new one that holds, read-only, only ``readable_paths(show)`` (the system's programs and
  libraries, a few /etc files, Python's folders, the course's grader package, the graded file); HOME, /tmp
  and /run are empty; only ``writable`` (and /dev/shm) is writable, one private tmpfs of limited size;
- ``hide`` is covered wherever a shown folder still holds it: a folder by an empty tmpfs, a file by
  ``/dev/null``;
- it gets a new session keyring and holds at most MAX_TASKS tasks;
- ``/proc`` shows only the sandbox's processes: no other process of the user can be seen, read or
  signalled (the judge's environment included);
- the network has no interface but a loopback that is down;
- the process keeps no capability, so it cannot undo any of this, and when it dies the kernel kills
  every process of the namespace: nothing a submission starts outlives it.

The caller's process stays outside as a waiter that exits with the sandboxed process's status, so the
judge kills one pid (the waiter) and the rest follows (``PR_SET_PDEATHSIG``).

Why not bubblewrap or ``unshare(1)``: they confine a program they exec, and the warm tracer is forked
from a judge that has already imported torch and TileLang, with no exec; one implementation serves both
paths, and a learner's ``pip install -e .`` brings everything it needs. ``python -m grader.processes.sandbox
WRITABLE [--hide PATH ...] -- COMMAND ...`` is the cold path's launcher.

Where the kernel refuses namespaces (Ubuntu's AppArmor restriction, macOS, some containers),
``available()`` says why; grader.processes.judge then grades a learner's own check unconfined with one line
saying so, and refuses an instructor's run unless told ``--no-sandbox`` (``policy``).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import re
import resource
import signal
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from grader import settings

# Set by `--no-sandbox` ("off") or by an instructor path that must not grade unconfined ("require").
ENV = settings.SANDBOX
# More paths the sandbox covers, os.pathsep-separated (nbgrader's JudgeChecks names the course folder).
HIDE_ENV = settings.SANDBOX_HIDE

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND = 32, 1024, 2048, 4096
MS_REC, MS_PRIVATE, MS_RELATIME, MS_STRICTATIME = 1 << 14, 1 << 18, 1 << 21, 1 << 24
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 24, 38
MNT_DETACH = 2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "ppc64le": 203}
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219, "ppc64le": 271}
KEYCTL_JOIN_SESSION_KEYRING = 1

# What the sandbox's root holds besides Python and its packages (readable_paths): the system's programs and
# libraries, and of /etc only what the loader, the C library and Python's startup read. Nothing else of the host
# (HOME, /tmp, /run, /var, /srv, /mnt, the course's solutions, tests and .git, other students' folders, sockets,
# the judge's compile cache) exists inside.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_PATHS = (
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
    "/etc/localtime", "/etc/alternatives", "/etc/os-release", "/etc/mime.types",
)  # fmt: skip
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
DEFAULT_TMPFS_BYTES = 512 * 2**20  # all the sandbox may write (its work folder and /dev/shm together)
# Tasks (processes and threads) a sandbox may hold at once: a tracer needs a few dozen threads (torch's pools scale
# with the cores); a fork bomb stops here instead of at the machine's limit, so a check graded beside it still runs.
MAX_TASKS = 1024
# Who root's sandbox runs as once its root is built ("nobody"): the kernel never applies RLIMIT_NPROC to root, so
# the cap on tasks needs another id; the user namespace maps it, so it owns nothing of the host.
UNPRIVILEGED = 65534


def tmpfs_bytes(memory_limit_gb: float) -> int:
    """What a sandbox may write: DEFAULT_TMPFS_BYTES, or less where --memory-limit is smaller (a tmpfs is memory)."""
    if memory_limit_gb > 0:
        return max(16 * 2**20, min(DEFAULT_TMPFS_BYTES, int(memory_limit_gb * 2**30)))
    return DEFAULT_TMPFS_BYTES


FAILED = 3  # the exit status of a launcher (or a forked tracer's waiter) that could not confine: never ran it


class Unavailable(OSError):
    """This machine will not make the namespaces; the message says which step failed and why."""


@dataclass(frozen=True)
class Policy:
    confine: bool  # start the tracer in the sandbox
    refusal: str = ""  # not empty: grade nothing, say this instead
    note: str = ""  # not empty: grade unconfined, and say this once


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


def _check(result: int, step: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise Unavailable(number, f"{step}: {os.strerror(number)}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def _flags(path: str) -> int:
    """The mount flags a read-only remount of ``path`` must keep: a user namespace may not drop
    nosuid, nodev, noexec or change the atime mode of a mount it inherited."""
    found = os.statvfs(path).f_flag
    flags = 0
    for st, ms in ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC)):
        if found & st:
            flags |= ms
    if found & os.ST_NOATIME:
        flags |= MS_NOATIME
    elif found & os.ST_RELATIME:
        flags |= MS_RELATIME
    else:
        flags |= MS_STRICTATIME
    if found & os.ST_NODIRATIME:
        flags |= MS_NODIRATIME
    return flags


def _inside(path: str, folders: list[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def readable_paths(show: list[Path] | tuple[Path, ...] = ()) -> list[str]:
    """The host paths the sandbox's root shows, read-only: SYSTEM_PATHS, ETC_PATHS, this interpreter's prefixes
    and every folder on its sys.path, except the course's root, of which only its grader package (the tracer's
    own code) is shown; plus ``show`` (the graded file). What does not exist is left out."""
    from grader.processes.hermetic import ROOT

    course = os.path.realpath(ROOT)
    found: list[str] = [*SYSTEM_PATHS, *ETC_PATHS, os.path.join(course, "grader")]
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        found.append(os.path.realpath(prefix))
    for entry in sys.path:
        if not entry or not os.path.isabs(entry):
            continue  # the current folder: the sandbox's own work folder, or nothing
        real = os.path.realpath(entry)
        if real == course or _inside(course, [real]) or _inside(real, [course]):
            continue  # the course's root or a folder above it: its solutions, tests and .git stay out
        found.append(real)
    found += [str(path) for path in show]
    return sorted({p for p in found if os.path.lexists(p)})


def enter(
    writable: Path,
    hide: list[Path] | tuple[Path, ...] = (),
    show: list[Path] | tuple[Path, ...] = (),
    tmpfs_bytes: int = DEFAULT_TMPFS_BYTES,
) -> None:
    """Confine this process (see the module's docstring). Returns in the sandboxed process; the caller's
    process waits outside and exits with its status. Raises Unavailable before forking if it cannot.
    ``show``: host files the sandbox may read besides readable_paths() (the graded file); ``tmpfs_bytes``:
    all it may write."""
    parent = os.getppid()  # the judge: the waiter dies with it (_wait_and_exit)
    readable = readable_paths()  # asked before the namespaces: sys.path and the prefixes are the judge's
    shown = {str(path): Path(path).read_bytes() for path in show}  # read with the caller's rights, then copied in
    libc = _libc()
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    uid, gid = os.getuid(), os.getgid()
    # Root runs its sandbox as UNPRIVILEGED, which must be able to read what is shown (a venv in a 0700 folder
    # is not: then root it stays, and task_cap() says the cap does not hold).
    mapper = _map_ids_from_outside(root_too=True) if uid == 0 and not private_paths(readable) else None
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    unshared = libc.unshare(flags) == 0
    problem = ctypes.get_errno()
    drop = mapper is not None and _finish_id_maps(*mapper, unshared)
    if not unshared:
        raise Unavailable(problem, f"unshare (a user namespace): {os.strerror(problem)}")
    if not drop:  # not root, or root where the helper could not map UNPRIVILEGED: this id alone, as itself
        try:
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"{uid} {uid} 1")
            _write("/proc/self/gid_map", f"{gid} {gid} 1")
        except OSError as error:
            raise Unavailable(error.errno or 1, f"the user namespace's id maps: {error.strerror}") from None
    # Learned before the fork: what the waiter cannot tell its parent once it has become a waiter.
    ready_read, ready_write = os.pipe()
    pid = os.fork()
    if pid:
        _wait_and_exit(pid, ready_read, ready_write, parent, libc)
    os.close(ready_read)
    try:
        _confine(libc, writable, hide, readable, shown, tmpfs_bytes, drop)
    except BaseException as error:  # the waiter says why and exits FAILED: never run unconfined
        os.write(ready_write, f"{error}".encode()[:4000] or b"failed")
        os._exit(FAILED)
    os.close(ready_write)


def _wait_and_exit(pid: int, ready_read: int, ready_write: int, parent: int, libc: ctypes.CDLL) -> None:
    """The process outside: wait for the sandboxed one, then leave with its status; killed with ``parent``.

    The judge kills the waiter when it is done with the tracer, but a judge killed itself (a notebook's check
    stopped at its limit or by the stop button, a warm check's group killed) kills nothing: the waiter, in a
    session of its own, would live on and the learner's code with it (a `while True` took a core until the
    machine restarted). So the waiter dies with its parent, and the sandboxed process with the waiter. Armed
    here, after unshare: a change of credentials clears the parent-death signal."""
    # Never raise here: this process is the waiter, and returning from enter() would run the tracer unconfined.
    # Failing or too late (the judge died first), the waiter leaves and the sandboxed process dies with it.
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0 or os.getppid() != parent:
        os._exit(FAILED)
    os.close(ready_write)
    problem = b""
    while chunk := os.read(ready_read, 4096):
        problem += chunk
    os.close(ready_read)
    if problem:
        with contextlib.suppress(OSError):
            os.write(2, b"sandbox: " + problem + b"\n")
    for fd in range(0, 1024):  # hold nothing the judge waits on (pipes, the reply descriptor)
        with contextlib.suppress(OSError):
            os.close(fd)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            os._exit(1)
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def _confine(
    libc: ctypes.CDLL,
    writable: Path,
    hide: list[Path] | tuple[Path, ...],
    readable: list[str],
    shown: dict[str, bytes],
    tmpfs_bytes: int,
    drop: bool,
) -> None:
    """In the first process of the new PID namespace: die with the waiter, then make a new root that holds only
    ``readable`` (read-only), copies of the ``shown`` files, an empty /tmp, HOME and /run, the work folder and
    /dev/shm on one tmpfs of ``tmpfs_bytes``, a few device files and a /proc of this namespace; then leave the
    host's root for it and, where ``drop``, become UNPRIVILEGED."""
    global _TASKS_CAPPED
    _check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    _new_session_keyring(libc)
    os.umask(0o022)  # the skeleton's folders must be searchable by UNPRIVILEGED
    # Counted per user in this user namespace: this sandbox's tasks only. The kernel does not apply it to root,
    # hence UNPRIVILEGED below.
    hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    cap = MAX_TASKS if hard == resource.RLIM_INFINITY else min(MAX_TASKS, hard)
    resource.setrlimit(resource.RLIMIT_NPROC, (cap, cap))
    _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "making the mounts private")
    work = os.path.realpath(writable)
    size = f"size={max(1, tmpfs_bytes // 2**20)}m,mode=0700".encode()
    _check(libc.mount(b"tmpfs", work.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, size), f"a tmpfs on {work}")
    root, scratch = os.path.join(work, "root"), os.path.join(work, "work")
    os.makedirs(root)
    os.makedirs(os.path.join(scratch, "shm"))
    for path in _outermost(_link(root, path) for path in readable):
        _place(libc, root, path, path, 0)
    for path in DEVICES:
        if os.path.exists(path):
            _place(libc, root, path, path, MS_NOSUID | MS_NOEXEC)
    for path, data in shown.items():  # a copy: the graded file need not be readable by UNPRIVILEGED on the host
        os.makedirs(os.path.dirname(root + path), exist_ok=True)
        with open(root + path, "wb") as handle:
            handle.write(data)
        os.chmod(root + path, 0o444)
    if drop:
        for folder in (scratch, os.path.join(scratch, "shm")):
            os.chown(folder, UNPRIVILEGED, UNPRIVILEGED)
    _place(libc, root, scratch, work, MS_NOSUID | MS_NODEV, writable=True)
    _place(libc, root, os.path.join(scratch, "shm"), "/dev/shm", MS_NOSUID | MS_NODEV | MS_NOEXEC, writable=True)
    for folder in ("/tmp", "/run", "/proc", os.environ.get("HOME") or "/tmp"):
        os.makedirs(root + folder, exist_ok=True)
    # A /proc of this PID namespace only, mounted while the host's /proc is still in view (the kernel lets a user
    # namespace mount a proc only where one is fully visible); where it refuses (a container that masks parts of
    # its /proc), an empty one: the other processes stay out of sight either way.
    proc = (root + "/proc").encode()
    if libc.mount(b"proc", proc, b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) != 0:
        _check(libc.mount(b"tmpfs", proc, b"tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, b"mode=0555"), "/proc")
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1")):
        os.symlink(target, os.path.join(root, "dev", name))
    os.symlink("/proc/self/fd/2", os.path.join(root, "dev", "stderr"))
    # The skeleton itself read-only: a bind of the new root onto itself, which pivot_root also needs (a mount point).
    _check(libc.mount(root.encode(), root.encode(), None, MS_BIND | MS_REC, None), "binding the new root")
    _check(
        libc.mount(None, root.encode(), None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, None),
        "making the new root read-only",
    )
    _pivot(libc, root)
    covered: list[str] = []
    for path in hide:  # whatever of them a shown folder still holds (the hidden cases are never shown)
        if os.path.lexists(path):
            _cover(libc, str(path), covered)
    _drop_capabilities(libc, UNPRIVILEGED if drop else None)
    _TASKS_CAPPED = drop or os.getuid() != 0
    os.chdir(work)


def _link(root: str, path: str) -> str:
    """A symbolic link is shown as the same link (/bin -> usr/bin); what it points to is shown in its stead."""
    if os.path.islink(path):
        inside = root + path
        if not os.path.lexists(inside):
            os.makedirs(os.path.dirname(inside), exist_ok=True)
            os.symlink(os.readlink(path), inside)
        return os.path.realpath(path)
    return path


def _outermost(paths: Iterable[str]) -> list[str]:
    """Each path once, leaving out those inside another (binding /usr already shows /usr/lib/os-release)."""
    kept: list[str] = []
    for path in sorted(set(paths)):
        if not _inside(path, kept):
            kept.append(path)
    return kept


def _place(libc: ctypes.CDLL, root: str, source: str, target: str, flags: int, writable: bool = False) -> None:
    """Bind ``source`` at ``target`` under ``root``: read-only unless ``writable``."""
    inside = root + target
    if os.path.isdir(source):
        os.makedirs(inside, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(inside), exist_ok=True)
        if not os.path.lexists(inside):
            with open(inside, "w"):
                pass
    # Recursive: in a user namespace the kernel refuses (EINVAL) to bind a folder without the mounts below it when
    # they are locked (on the H200 host, /usr/local/nvidia below /usr); _read_only then covers those mounts too.
    recursive = 0 if writable else MS_REC
    _check(libc.mount(source.encode(), inside.encode(), None, MS_BIND | recursive, None), f"showing {target}")
    if not writable:
        _read_only(libc, inside, flags)


def _read_only(libc: ctypes.CDLL, inside: str, flags: int) -> None:
    """``inside`` and every mount below it read-only, each keeping the flags a user namespace may not drop."""
    for point in [p for p in _mount_points() if p == inside or _inside(p, [inside])]:
        if os.statvfs(point).f_flag & os.ST_RDONLY:
            continue
        remount = MS_BIND | MS_REMOUNT | MS_RDONLY | _flags(point) | flags
        if libc.mount(None, point.encode(), None, remount, None) != 0:  # it will not go read-only: cover it
            _cover(libc, point, [])


def _mount_points() -> list[str]:
    """Every mount point of this mount namespace, parents before children (mountinfo's order)."""
    points = []
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            field = line.split()[4]  # mountinfo writes a space as \040, a tab as \011, ...
            points.append(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field))
    return points


def _pivot(libc: ctypes.CDLL, root: str) -> None:
    """Make ``root`` this namespace's / and let go of the host's: pivot_root(".", ".") stacks the old root on
    the new one, and a lazy unmount of "." then removes it (what container runtimes do)."""
    number = SYS_PIVOT_ROOT.get(os.uname().machine)
    if number is None:
        raise Unavailable(1, f"pivot_root: not known on {os.uname().machine}")
    os.chdir(root)
    _check(libc.syscall(number, b".", b"."), "pivot_root")
    _check(libc.umount2(b".", MNT_DETACH), "letting go of the host's root")
    os.chdir("/")


def _map_ids_from_outside(root_too: bool) -> tuple[int, int]:
    """Start a helper, outside the user namespace this process is about to make, that writes its id maps: the
    kernel lets only a writer with CAP_SETUID in the parent namespace map more than one id. Returns the pipe end
    that tells it to go and its pid (see _finish_id_maps)."""
    go_read, go_write = os.pipe()
    target = os.getpid()
    helper = os.fork()
    if helper == 0:
        code = 1
        try:
            os.close(go_write)
            if os.read(go_read, 1) == b"1":
                mapped = f"0 0 1\n{UNPRIVILEGED} {UNPRIVILEGED} 1\n" if root_too else ""
                _write(f"/proc/{target}/uid_map", mapped)
                _write(f"/proc/{target}/gid_map", mapped)
                code = 0
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(go_read)
    return go_write, helper


def _finish_id_maps(go: int, helper: int, unshared: bool) -> bool:
    """Tell the helper to write the maps (``unshared``) or to leave; True when it wrote them."""
    with contextlib.suppress(OSError):
        os.write(go, b"1" if unshared else b"0")
    os.close(go)
    _, status = os.waitpid(helper, 0)  # retried on EINTR by Python itself (PEP 475)
    return unshared and os.waitstatus_to_exitcode(status) == 0


def private_paths(paths: Iterable[str]) -> list[str]:
    """Those of ``paths`` that others may not read (a folder: read and search), so UNPRIVILEGED could not."""
    found = []
    for path in paths:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        wanted = 0o005 if os.path.isdir(path) else 0o004
        if mode & wanted != wanted:
            found.append(path)
    return found


def task_cap() -> str:
    """ "" where a sandbox made here holds at most MAX_TASKS (RLIMIT_NPROC, which the kernel applies to every user
    but root: root's sandbox runs as UNPRIVILEGED), else why not. Asked of the trial sandbox (available())."""
    available()
    return _TASK_CAP_PROBLEM


def _new_session_keyring(libc: ctypes.CDLL) -> None:
    """A new, empty session keyring: the user's stored keys and tokens stay out of reach. A kernel without
    keyrings (ENOSYS) has nothing to hide."""
    number = SYS_KEYCTL.get(os.uname().machine)
    if number is None or libc.syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None) >= 0:
        return
    problem = ctypes.get_errno()
    if problem not in (errno.ENOSYS, errno.EOPNOTSUPP):
        raise Unavailable(problem, f"a new session keyring: {os.strerror(problem)}")


def _cover(libc: ctypes.CDLL, path: str, covered: list[str]) -> None:
    if os.path.islink(path) or not os.path.exists(path):
        path = os.path.realpath(path)
        if not os.path.exists(path):
            return
    if os.path.isdir(path):
        _check(libc.mount(b"tmpfs", path.encode(), b"tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, b"mode=0555"), path)
    else:
        _check(libc.mount(b"/dev/null", path.encode(), None, MS_BIND, None), f"covering {path}")
        libc.mount(None, path.encode(), None, MS_BIND | MS_REMOUNT | MS_RDONLY | _flags(path), None)
    covered.append(path)


def _drop_capabilities(libc: ctypes.CDLL, become: int | None) -> None:
    """No capability now or after an exec: nothing inside can remount, unhide or leave. ``become``: the user and
    group id to take on (root's sandbox), with no supplementary group."""
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    for capability in range(64):  # past the kernel's last capability prctl says EINVAL: harmless
        libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0)
    if become is not None:
        os.setgroups([])
        os.setresgid(become, become, become)
        waiter = os.getppid()
        os.setresuid(become, become, become)  # from 0 to another id: the kernel clears every capability set
        # ... and the parent-death signal, which must outlive this: armed again, then the waiter asked after
        _check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG) as another id")
        if os.getppid() != waiter:
            os._exit(FAILED)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    header, data = Header(0x20080522, 0), (Data * 2)()  # _LINUX_CAPABILITY_VERSION_3: two 32-bit words
    _check(libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")


# ---------------------------------------------------------------------------------- policy

_AVAILABLE: str | None = None  # "" when namespaces work here, else why not (asked once per process)
_TASK_CAP_PROBLEM = ""  # not empty: the trial sandbox could not cap its tasks, and why
_TASKS_CAPPED = False  # set inside a sandbox: it holds at most MAX_TASKS tasks
NOT_CAPPED = 4  # the trial sandbox's exit status when it is confined but its tasks are not capped


def available() -> str:
    """ "" when this machine can make the sandbox, else one sentence on why not. Tried in a child once."""
    global _AVAILABLE
    if _AVAILABLE is None:
        _AVAILABLE = _probe()
    return _AVAILABLE


def _probe() -> str:
    if not sys.platform.startswith("linux"):
        return f"{sys.platform} has no Linux namespaces"
    read_end, write_end = os.pipe()
    folder = tempfile.mkdtemp(prefix="tilelang-course-sandbox-")  # made and removed here: the trial never returns
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read_end)
            os.dup2(write_end, 2)  # where the waiter says why a step inside failed
            try:
                enter(Path(folder), ())
            except Unavailable as error:
                os.write(write_end, str(error).encode()[:2000])
                os._exit(1)
            code = 0 if _TASKS_CAPPED else NOT_CAPPED  # confined: nothing else to report
        finally:
            os._exit(code)
    os.close(write_end)
    problem = b""
    while chunk := os.read(read_end, 4096):
        problem += chunk
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    with contextlib.suppress(OSError):
        os.rmdir(folder)
    global _TASK_CAP_PROBLEM
    if os.waitstatus_to_exitcode(status) == NOT_CAPPED:
        private = private_paths(readable_paths())
        _TASK_CAP_PROBLEM = (
            f"root, and {private[0]} is not readable by others, so the sandbox cannot run as the id {UNPRIVILEGED}"
            if private
            else f"root, and the user namespace could not map the id {UNPRIVILEGED} to run as"
        )
        return ""
    if os.waitstatus_to_exitcode(status) == 0:
        return ""
    return problem.decode(errors="replace") or f"the trial sandbox ended with status {status}"


HOW_TO_ENABLE = (
    "enable unprivileged user namespaces (Ubuntu 24.04: sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0; "
    "Debian and others: sudo sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces=10000; "
    "a container: run it with --security-opt seccomp=unconfined or grant it user namespaces), or grade on Linux"
)


def required(hidden_cases: bool) -> bool:
    """An instructor's run: hidden cases to grade, or a path that asked for it (nbgrader's JudgeChecks)."""
    return hidden_cases or os.environ.get(ENV, "") == "require"


def policy(hidden_cases: bool) -> Policy:
    """Confine the tracer where the machine can; else grade a learner's own check with a note, and
    refuse an instructor's run unless it said --no-sandbox."""
    if os.environ.get(ENV, "") == "off":
        return Policy(False, note="not isolated (--no-sandbox): the graded file ran with your own rights")
    problem = available()
    if not problem:
        return Policy(True)
    if required(hidden_cases):
        return Policy(
            False,
            refusal=f"refusing to grade: submission code would run unconfined, because this machine cannot make "
            f"a sandbox ({problem}). To fix it, {HOW_TO_ENABLE}. To grade anyway, unconfined, pass --no-sandbox.",
        )
    return Policy(
        False, note=f"not isolated: this machine cannot make a sandbox ({problem}); your file ran with your own rights"
    )


def hidden_paths() -> list[Path]:
    """What the sandbox covers besides the GPU: the hidden cases file and what HIDE_ENV names."""
    from grader.settings import hidden_cases_file

    paths = [Path(p) for p in os.environ.get(HIDE_ENV, "").split(os.pathsep) if p.strip()]
    hidden = hidden_cases_file()
    if hidden is not None:
        paths.append(hidden)
    return paths


def main(argv: list[str]) -> None:
    """``python -m grader.processes.sandbox WRITABLE [--hide PATH ...] [--show PATH ...] [--bytes N] -- COMMAND
    ...``: exec COMMAND confined."""
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1 :]

    def named(flag: str) -> list[str]:
        return [options[i + 1] for i, o in enumerate(options) if o == flag]

    writable, hide, show = Path(options[0]), [Path(p) for p in named("--hide")], [Path(p) for p in named("--show")]
    size = int(named("--bytes")[-1]) if named("--bytes") else DEFAULT_TMPFS_BYTES
    try:
        enter(writable, hide, show, size)
    except Unavailable as error:
        sys.stderr.write(f"sandbox: {error}\n")
        os._exit(FAILED)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
