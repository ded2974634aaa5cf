"""Write the results pages of run notes from templates and raw outputs, so that no figure in them is typed by hand.

A template (``docs/results/templates/NAME.md.in``, written to ``docs/results/NAME.md``) is the page's prose. Its
first line names the data folder, ``{{data docs/results/data/FOLDER}}``; after it, a line holding only

    {{sweep FILE}}         becomes the table of the scripts/sweep.py lines in FILE (the fastest row in bold)
    {{raw FILE}}           becomes FILE itself in a code block
    {{raw FILE FIRST-LAST}} becomes those lines of it (counted from 1, both included)

where FILE is relative to the data folder. Any other ``{{`` in a template is refused, and so is a figure with a
decimal point in the prose (``0.1650``, ``41.6``) that none of the page's included outputs holds: the prose may
quote its tables, never a number from elsewhere.

    python scripts/notes_page.py            # write every page
    python scripts/notes_page.py --check    # exit 1 if a page differs from what its template and data give
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for scripts.*, when run as python scripts/notes_page.py
from scripts.page_output import write_or_check  # noqa: E402
from scripts.sweep_page import sections, table  # noqa: E402

TEMPLATES = ROOT / "docs" / "results" / "templates"
PAGES = ROOT / "docs" / "results"
DATA_LINE = re.compile(r"^\{\{data (?P<folder>\S+)\}\}$")
DIRECTIVE = re.compile(r"^\{\{(?P<kind>sweep|raw) (?P<file>\S+)(?: (?P<first>\d+)-(?P<last>\d+))?\}\}$")
# TileLang's own warnings, printed between a sweep's lines (a vectorization it could not plan, and the like)
TOOL_WARNING = re.compile(r"^\[\d\d:\d\d:\d\d\] : Warning: ")
FIGURE = re.compile(r"(?<![\w.])\d[\d,]*\.\d+(?!\d|\.\d)")  # a version (0.1.15) is not a figure


def render(template: str, root: Path = ROOT) -> str:
    """The page a template gives; ValueError for a missing data line, an unknown directive or an empty sweep."""
    lines = template.splitlines()
    first = DATA_LINE.match(lines[0]) if lines else None
    if first is None:
        raise ValueError("a template's first line is {{data FOLDER}}")
    data = root / first["folder"]
    out: list[str] = []
    prose: list[tuple[int, str]] = []
    included: list[str] = []
    for number, line in enumerate(lines[1:], start=2):
        if "{{" not in line:
            out.append(line)
            prose.append((number, line))
            continue
        directive = DIRECTIVE.match(line.strip())
        if directive is None:
            raise ValueError(f"line {number}: not a directive this script knows: {line.strip()}")
        text = (data / directive["file"]).read_text()
        included.append(text)
        if directive["kind"] == "sweep":
            kept = "\n".join(row for row in text.splitlines() if not TOOL_WARNING.match(row))
            rows = [row for _heading, found in sections(kept, [directive["file"]]) for row in found]
            if not rows:
                raise ValueError(f"line {number}: {directive['file']} holds no sweep line")
            out += table(rows)
            continue
        chosen = text.splitlines()
        if directive["first"]:
            first_line, last_line = int(directive["first"]), int(directive["last"])
            if not 1 <= first_line <= last_line <= len(chosen):
                raise ValueError(f"line {number}: {directive['file']} has {len(chosen)} lines")
            chosen = chosen[first_line - 1 : last_line]
        out += ["```text", *chosen, "```"]
    held = set(FIGURE.findall("\n".join(included)))  # whole figures: 0.95 is not held by 0.954
    if stray := [f"line {n}: {figure}" for n, line in prose for figure in FIGURE.findall(line) if figure not in held]:
        raise ValueError(f"figures in the prose that no included output holds: {', '.join(stray)}")
    return "\n".join(out).rstrip("\n") + "\n"


def page_of(template: Path) -> Path:
    return PAGES / template.name.removesuffix(".in")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a page differs from what its data gives")
    args = parser.parse_args(argv)
    codes = [
        write_or_check(page_of(path), render(path.read_text()), path, "scripts/notes_page.py", args.check)
        for path in sorted(TEMPLATES.glob("*.md.in"))
    ]
    return max(codes, default=0)


if __name__ == "__main__":
    sys.exit(main())
