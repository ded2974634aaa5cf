"""The tail every results-page script shares: write the page, or with --check say whether it is what its raw
outputs give (CI runs the check; a figure changed by hand in the page or in the data fails it)."""

from __future__ import annotations

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
