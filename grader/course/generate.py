"""``python -m grader notebooks``: write (or, with --check, compare) the notebooks of every puzzle, in English
from the sources (grader.course.notebooks) or in a translation (grader.course.translations)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path

from grader.course.notebooks import puzzle_notebook, render
from grader.course.translations import translated_notebook
from grader.discover import course_root, normalize_id, puzzle_files


def expected_notebooks(folder: Path, ids: Sequence[str] = (), lang: str = "en") -> dict[str, str]:
    """File name -> text, for each puzzle module in ``folder`` (or only these ids), in ``lang``
    (another language than en: the prose from i18n/LANG/pNN.po, see grader/i18n/__init__.py)."""
    found = puzzle_files(folder)
    chosen = [i for i in sorted(found) if not ids or i in ids]
    if lang != "en":
        return {f"{found[i].stem}.ipynb": render(translated_notebook(found[i], i, lang)) for i in chosen}
    return {f"{found[i].stem}.ipynb": render(puzzle_notebook(found[i], i)) for i in chosen}


def stale_notebooks(expected: dict[str, str], out: Path, orphans: bool = True) -> list[str]:
    """Notebooks in ``out`` that are missing or differ from what the sources give (and, with
    ``orphans``, generated-looking notebooks whose source is gone)."""
    problems = []
    for name, text in expected.items():
        path = out / name
        if not path.is_file():
            problems.append(f"{path}: missing")
        elif path.read_text() != text:
            problems.append(f"{path}: stale (differs from its source)")
    generated = re.compile(r"^p\d\d_[a-z0-9_]+\.ipynb$")
    for path in sorted(out.glob("*.ipynb")) if orphans else []:
        if generated.match(path.name) and path.name not in expected:
            problems.append(f"{path}: has no puzzle source")
    return problems


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m grader notebooks",
        description="Write notebooks/pNN_name.ipynb from the puzzle sources (never edit the notebooks by hand).",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="only these puzzles (default: all)")
    p.add_argument("--solutions", action="store_true", help="build from solutions/ instead of puzzles/")
    p.add_argument("--out", type=Path, metavar="DIR", help="where the notebooks go (default: notebooks/)")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 naming each stale notebook")
    p.add_argument(
        "--lang",
        default="en",
        choices=("en", "zh_CN"),
        help="en (default), or a translation: its notebooks go to notebooks/LANG/ (see grader/i18n/__init__.py)",
    )
    return p


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(list(argv))
    root = course_root()
    ids = [normalize_id(i) or i for i in args.ids]
    folder = root / ("solutions" if args.solutions else "puzzles")
    out = args.out if args.out is not None else root / "notebooks" / ("" if args.lang == "en" else args.lang)
    expected = expected_notebooks(folder, ids, args.lang)
    if not expected:
        print(f"grader notebooks: no puzzle sources in {folder}" + (f" for {', '.join(ids)}" if ids else ""))
        return 2
    if args.check:
        problems = stale_notebooks(expected, out, orphans=not ids)
        for problem in problems:
            print(problem)
        if problems:
            again = (" --solutions" if args.solutions else "") + (f" --lang {args.lang}" if args.lang != "en" else "")
            print("regenerate them with: python -m grader notebooks" + again)
            return 1
        print(f"{len(expected)} notebook(s) in {out} match their sources")
        return 0
    out.mkdir(parents=True, exist_ok=True)
    written = 0
    for name, text in expected.items():
        path = out / name
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
            written += 1
    print(f"{len(expected)} notebook(s) in {out} ({written} written, {len(expected) - written} unchanged)")
    return 0
