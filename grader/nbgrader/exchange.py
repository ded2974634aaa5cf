"""``nbgrader collect`` that keeps a submission's symbolic links as links (the course's config names it:
``c.ExchangeFactory.collect``).

A student writes his own folder in the exchange's inbound/ (every student may), so it can hold links, and nbgrader's
collect copies it with ``shutil.copytree``, which follows them as the instructor: a link to the instructor's
source/ notebook arrived in submitted/ as that notebook (its kernel cells the solutions: full marks), a link to
the hidden cases file or the gradebook as their contents, and, where the course is group-shared, collect then
chmodded each linked file (the link's target) group-writable (tests/attacks/nbgrader_links.py). This collect copies
a link as a link and changes no mode through one; autograde then grades no submission that holds a link
(grader.nbgrader.judge.submission_links), which says which.

The rest of a submission's folder is the student's to write too, and nbgrader believed it (red team round 4,
tests/attacks/nbgrader_exchange.py):

- a hard link: with ``fs.protected_hardlinks`` off (the kernel's own default; systemd turns it on), a student may
  link any file of the exchange's filesystem, his to read or not, and collect copied its contents as the
  instructor. This collect copies no file that the submission's owner does not own or that has another name
  (a hard link), and collects no submission that holds one;
- the folder's name says whose it is (``nbgrader submit --student=alice`` names it so), and nbgrader's collect only
  warned when its owner was someone else, then filed it as alice's, replacing her own: this collect does not
  collect it (ExchangeCollect.check_owner, on by default; where every student's server runs as one Unix user, the
  owner tells nothing, and turning it off there collects as nbgrader does);
- the name and ``timestamp.txt`` say when it was handed in, and the late penalty is counted from them: this
  collect takes the time the kernel recorded when the folder or anything in it last changed (the latest
  ``ctime``, which no student can set back) where the student's own is earlier by more than
  ``timestamp_slack`` seconds (or later), and writes it in ``timestamp.txt``. A folder whose times were reset
  by a copy (the exchange moved to another disk) looks handed in at the copy: ``trust_timestamps = True``
  believes the student's timestamps, as nbgrader does."""

from __future__ import annotations

import datetime
import functools
import os
import shutil
import stat
from typing import Any

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import ignore_patterns, parse_utc
from traitlets import Bool, Float

from grader.outcome import plain

try:
    import pwd
except ImportError:  # Windows: no owners to compare
    pwd = None  # type: ignore[assignment]

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"  # nbgrader's parse_utc reads it


class RefusedFile(OSError):
    """A file of a submission that is not the student's own: another owner's, or one with another name."""


def owner_name(uid: int) -> str:
    """The user name of ``uid``, or a placeholder where there is none."""
    try:
        return pwd.getpwuid(uid).pw_name if pwd is not None else str(uid)
    except KeyError:
        return f"unknown id {uid}"


def foreign_files(folder: str) -> list[str]:
    """The files under ``folder`` (a student's inbound submission) that are not simply his: a regular file owned by
    anyone but the folder's owner, or with more than one name (a hard link; nbgrader's submit makes none).
    Symbolic links are the student's own files and are kept as links (autograde refuses them)."""
    owner = os.lstat(folder).st_uid
    found = []
    for where, folders, files in os.walk(folder):  # a linked folder is listed, not entered
        for name in files + folders:
            path = os.path.join(where, name)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                continue
            if info.st_uid != owner or (stat.S_ISREG(info.st_mode) and info.st_nlink > 1):
                found.append(os.path.relpath(path, folder))
            elif not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
                found.append(os.path.relpath(path, folder))  # a fifo, a device, a socket: nothing a student hands in
    return sorted(found)


def last_changed(folder: str) -> datetime.datetime:
    """When ``folder`` or anything in it last changed, as the kernel recorded it (the latest ctime, naive UTC)."""
    latest = os.lstat(folder).st_ctime
    for where, folders, files in os.walk(folder):
        for name in files + folders:
            latest = max(latest, os.lstat(os.path.join(where, name)).st_ctime)
    return datetime.datetime.fromtimestamp(latest, datetime.timezone.utc).replace(tzinfo=None)


def read_timestamp(folder: str) -> datetime.datetime | None:
    """The time in a submission's timestamp.txt (naive UTC, as nbgrader reads it), or None."""
    try:
        with open(os.path.join(folder, "timestamp.txt")) as handle:
            return parse_utc(handle.read().strip())
    except (OSError, ValueError, OverflowError):
        return None


def copy_own_file(src: str, dest: str, owner: int) -> str:
    """shutil.copy2 of one file of a submission whose folder ``owner`` owns, refusing, at the moment it is read, a
    file that is not his own (foreign_files): opened without following a link, and checked on what was opened."""
    handle = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1 or info.st_uid != owner:
            said = f"owner {owner_name(info.st_uid)}, {info.st_nlink} name(s)"
            raise RefusedFile(f"{src}: not the student's own file ({said})")
        with open(handle, "rb", closefd=False) as source, open(dest, "wb") as target:
            shutil.copyfileobj(source, target)
    finally:
        os.close(handle)
    shutil.copystat(src, dest, follow_symlinks=False)
    return dest


class LinkSafeCollect(ExchangeCollect):
    """nbgrader's default collect, except that links in a submission are copied as links, never followed; a
    submission that holds a file that is not its owner's, or whose owner is not the student it names, is not
    collected; and the time it was handed in is the exchange's, not the student's word (the module's docstring)."""

    timestamp_slack = Float(
        60.0,
        help="How many seconds a submission's own timestamp may differ from the time its folder last changed before "
        "collect records the latter instead (nbgrader submit writes the timestamp, then copies the files).",
    ).tag(config=True)
    trust_timestamps = Bool(
        False,
        help="Believe the timestamp a student's submission states, as nbgrader does: only where the exchange's "
        "folders were copied after they were handed in, which reset the times collect reads.",
    ).tag(config=True)

    def _path_to_record(self, path: str) -> dict[str, Any]:
        """nbgrader's record of an inbound folder, with the time it was handed in as the exchange recorded it, and
        ``refused``: why it is not collected (another owner than the student it names, a file not its owner's)."""
        record = super()._path_to_record(path)
        problems = []
        if os.path.islink(path):  # copytree would copy what it points at (the instructor's source/ folder)
            record["refused"] = "it is a symbolic link"
            self.log.error("Not collected: %s is a symbolic link", plain(path))
            return record
        # submitted/../ps1 would be COURSE/ps1 (glob's * skips names that start with a dot: a student id given by
        # --student could still be one)
        if record["username"] in ("", ".", "..") or os.sep in record["username"]:
            problems.append("its name is no student's")
        if self.check_owner and pwd is not None:
            owner = owner_name(os.lstat(path).st_uid)
            if owner != record["username"]:
                problems.append(f"it is owned by {owner}")
        foreign = foreign_files(path)
        if foreign:
            problems.append(
                "it holds files that are not its owner's or have other names (hard links): "
                + ", ".join(plain(name) for name in foreign)
            )
        if problems:
            record["refused"] = "; ".join(problems)
            self.log.error(
                "Not collected: %s claims to be %s's submission, but %s",
                plain(path),
                plain(record["username"]),
                record["refused"],
            )
            return record
        if self.trust_timestamps:
            return record
        stated, changed = read_timestamp(path), last_changed(path)
        slack = datetime.timedelta(seconds=self.timestamp_slack)
        if stated is None or abs(stated - changed) > slack or abs(record["timestamp"] - changed) > slack:
            said = f"{record['timestamp']} (timestamp.txt: {stated})"
            self.log.warning(
                "%s states it was handed in at %s; it last changed at %s, recorded", plain(path), plain(said), changed
            )
            record["timestamp"] = changed
        else:
            record["timestamp"] = stated
        self.__dict__.setdefault("_handed_in", {})[os.path.basename(path)] = record["timestamp"]
        return record

    def _sort_by_timestamp(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """nbgrader's newest first, of the records not refused; only where every one is refused, those (nbgrader
        takes the first of the list: copy_files then drops it). A refused record is never chosen over one that is
        not, whatever time it states (--before-duedate included)."""
        kept = [record for record in records if "refused" not in record]
        return super()._sort_by_timestamp(kept or records)

    def copy_files(self) -> None:
        """nbgrader's, for the submissions not refused: a refused one never replaces what was collected before."""
        self.src_records = [record for record in self.src_records if "refused" not in record]
        super().copy_files()

    def do_copy(self, src: str, dest: str, log: Any = None) -> None:
        """nbgrader's Exchange.do_copy (the size limit, the ignore, include and size globs, the group-shared
        modes) with ``symlinks=True``, no chmod through a link, no file that is not the folder owner's own
        (copy_own_file: checked again as it is read), and the time _path_to_record settled on in timestamp.txt."""
        if os.path.islink(src):  # copytree would copy what it points at
            self.log.error("Not collected: %s is a symbolic link", plain(src))
            return
        dir_size = self.get_size(src)  # nbgrader's own: links are not counted
        max_dir_size = self.coursedir.max_dir_size
        if dir_size > 1000 * max_dir_size:
            self.log.error("Directory size is too big")
            raise RuntimeError(f"Directory size is too big. Size is {dir_size}, maximum size is {1000 * max_dir_size}")
        ignore = ignore_patterns(
            exclude=self.coursedir.ignore,
            include=self.coursedir.include,
            max_file_size=self.coursedir.max_file_size,
            log=self.log,
        )
        owner = os.lstat(src).st_uid
        try:
            copy = functools.partial(copy_own_file, owner=owner)
            shutil.copytree(src, dest, symlinks=True, ignore=ignore, copy_function=copy)
        except shutil.Error as error:  # a file the student changed between the check and the copy
            shutil.rmtree(dest, ignore_errors=True)
            self.log.error("Not collected: %s: %s", plain(src), plain(str(error)))
            return
        handed_in = self.__dict__.get("_handed_in", {}).get(os.path.basename(src))
        if handed_in is not None:  # the student's where the exchange's times agree, else the exchange's
            with open(os.path.join(dest, "timestamp.txt"), "w") as handle:
                handle.write(handed_in.strftime(TIMESTAMP_FORMAT))
        if not self.coursedir.groupshared:
            return
        for folder, _, files in os.walk(dest):  # a linked folder is listed, not entered
            for path, wanted in [(folder, 0o2770)] + [(os.path.join(folder, name), 0o660) for name in files]:
                if os.path.islink(path):
                    continue
                mode = os.lstat(path).st_mode
                if mode & wanted != wanted:
                    try:
                        os.chmod(path, (mode | wanted) & (0o2777 if wanted == 0o2770 else 0o777))
                    except PermissionError:
                        self.log.warning("Could not update permissions of %s to make it groupshared", path)
