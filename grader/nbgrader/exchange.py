"""``nbgrader collect`` that keeps a submission's symbolic links as links (the course's config names it:
``c.ExchangeFactory.collect``).

A student writes his own folder in the exchange's inbound/ (every student may), so it can hold links, and nbgrader's
collect copies it with ``shutil.copytree``, which follows them as the instructor: a link to the instructor's
source/ notebook arrived in submitted/ as that notebook (its kernel cells the solutions: full marks), a link to
the hidden cases file or the gradebook as their contents, and, where the course is group-shared, collect then
chmodded each linked file (the link's target) group-writable (tests/attacks/nbgrader_links.py). This collect copies
a link as a link and changes no mode through one; autograde then grades no submission that holds a link
(grader.nbgrader.judge.submission_links), which says which."""

from __future__ import annotations

import os
import shutil
from typing import Any

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import ignore_patterns


class LinkSafeCollect(ExchangeCollect):
    """nbgrader's default collect, except that links in a submission are copied as links, never followed."""

    def do_copy(self, src: str, dest: str, log: Any = None) -> None:
        """nbgrader's Exchange.do_copy (the size limit, the ignore, include and size globs, the group-shared
        modes) with ``symlinks=True``, and no chmod through a link."""
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
        shutil.copytree(src, dest, symlinks=True, ignore=ignore)
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
