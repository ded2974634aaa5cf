"""The tail every results-page script shares: write the page, or with --check say whether it is what its raw
outputs give (CI runs the check; a figure changed by hand in the page or in the data fails it)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def write_or_check(page: Path, text: str, source: Path, script: str, check: bool) -> int:
    """Exit status: with ``check``, 0 when ``page`` holds ``text`` and 1 (saying so) when not; else write it, 0."""
    if check:
        if not page.exists() or page.read_text() != text:
            print(f"{page} is not what {source} gives: rerun {script} without --check")
            return 1
        return 0
    page.write_text(text)
    print(f"wrote {page}")
    return 0


def data_folder_main(argv: list[str] | None, doc: str, script: str, page: Callable[[Path, str, str], str]) -> int:
    """The whole command line of a page written from one data folder (scripts/p07/padded_page.py,
    scripts/p09/tuning_page.py): DATA_DIR PAGE.md --commit SHA --date YYYY-MM-DD [--check]."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("page", type=Path)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--date", required=True)
    parser.add_argument("--check", action="store_true", help="exit 1 if the page differs from what the data gives")
    args = parser.parse_args(argv)
    return write_or_check(args.page, page(args.data, args.commit, args.date), args.data, script, args.check)


def profile_columns(raw: str, wanted: list[str]) -> dict[str, tuple[str, str]]:
    """Row label -> (the graded kernel's value, the course kernel's), read from the two columns of a
    ``--profile`` table; ValueError naming the rows of ``wanted`` the table lacks."""
    lines = raw.splitlines()
    header = next(i for i, line in enumerate(lines) if line.strip().startswith("yours") and "course kernel" in line)
    yours, course = lines[header].index("yours"), lines[header].index("course kernel")
    rows = {}
    for line in lines[header + 1 :]:
        if not line.startswith("  ") or line.startswith("  -"):
            break
        rows[line[:yours].strip()] = (line[yours:course].strip(), line[course:].strip())
    if missing := [label for label in wanted if label not in rows]:
        raise ValueError(f"the profile lacks the rows {missing}")
    return rows
