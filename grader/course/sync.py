"""Sync check: puzzles/ and solutions/ are identical outside TODO regions, and no stub holds
an answer; the kernel tables of the README and the learner guides list the puzzles' kernels.
``python -m grader.course.sync`` prints every problem, rewrites every stale kernel table, and exits 1
if there was either (so that CI fails on a table nobody regenerated).

A TODO region runs from a line ``# TODO begin...`` to a line ``# TODO end``. In a stub it may
hold only comments, blank lines and ``raise NotImplementedError(...)``.

A kernel table runs from the line ``<!-- kernels: begin ... -->`` to ``<!-- kernels: end -->`` in each
file of KERNEL_TABLES. Its header lines and each row's puzzle name are kept as written; the rows' ids and
kernel lists are the puzzles' (``Kernel(function=...)`` of each ``solutions/pNN_name.py``, in teaching
order), and a puzzle without a row gets one named by its title (translated for a Chinese page).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from grader.discover import REGION, course_root, graded_kernels, puzzle_files

# The pages with a kernel table, each with the language of its puzzle names.
KERNEL_TABLES = {
    "README.md": "en",
    "README.zh-CN.md": "zh_CN",
    "docs/learner.md": "en",
    "docs/zh_CN/learner.md": "zh_CN",
}
TABLE_BEGIN = "<!-- kernels: begin (written by python -m grader.course.sync from solutions/; edit the puzzles) -->"
TABLE_END = "<!-- kernels: end -->"
TABLE = re.compile(r"^<!-- kernels: begin[^\n]*-->\n(.*?)^<!-- kernels: end -->$", re.S | re.M)
ROW = re.compile(r"^\| (\d\d) \| ([^|]*?) \|")

STUB_LINE = re.compile(r"^\s*(#.*|raise NotImplementedError\(.*\)|)$")


def regions(text: str) -> list[str]:
    return REGION.findall(text)


def outside(text: str) -> str:
    """The text with each TODO region reduced to a marker, so two files can be compared."""
    return REGION.sub("# <TODO region>", text)


def check_pair(stub: Path, solution: Path) -> list[str]:
    problems = []
    stub_text, solution_text = stub.read_text(), solution.read_text()
    stub_regions, solution_regions = regions(stub_text), regions(solution_text)
    if len(stub_regions) != len(solution_regions):
        problems.append(
            f"{stub.name}: {len(stub_regions)} TODO regions in the stub, {len(solution_regions)} in the solution"
        )
    if not stub_regions:
        problems.append(f"{stub.name}: the stub has no TODO region")
    if outside(stub_text) != outside(solution_text):
        a, b = outside(stub_text).splitlines(), outside(solution_text).splitlines()
        line = next((i + 1 for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)) + 1)
        problems.append(
            f"{stub.name}: differs from the solution outside TODO regions (first at region-reduced line {line})"
        )
    for number, (region, answer) in enumerate(zip(stub_regions, solution_regions), 1):
        # The header says what the region asks for: nbgrader-course and the notebooks pair regions by it.
        if region.splitlines()[0].strip() != answer.splitlines()[0].strip():
            problems.append(
                f"{stub.name}: TODO region {number}'s header {region.splitlines()[0].strip()!r} differs from the "
                f"solution's {answer.splitlines()[0].strip()!r}"
            )
    for number, region in enumerate(stub_regions, 1):
        body = region.splitlines()[1:-1]
        code = [line.strip() for line in body if not STUB_LINE.match(line)]
        if code:
            problems.append(f"{stub.name}: TODO region {number} holds code, not only hints: {code[0]!r}")
        if not any("raise NotImplementedError" in line for line in body):
            problems.append(f"{stub.name}: TODO region {number} does not raise NotImplementedError")
    return problems


def check_course(root: Path) -> list[str]:
    stubs, solutions = puzzle_files(root / "puzzles"), puzzle_files(root / "solutions")
    problems = [f"puzzle {i}: in solutions/ but not in puzzles/" for i in sorted(set(solutions) - set(stubs))]
    problems += [f"puzzle {i}: in puzzles/ but not in solutions/" for i in sorted(set(stubs) - set(solutions))]
    for puzzle_id in sorted(set(stubs) & set(solutions)):
        problems += check_pair(stubs[puzzle_id], solutions[puzzle_id])
    return problems


def puzzle_title(text: str) -> str:
    """The ``title=`` of the module's ``Puzzle(...)``, read without importing it ("" if none)."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Puzzle":
            for keyword in node.keywords:
                if keyword.arg == "title" and isinstance(keyword.value, ast.Constant):
                    return str(keyword.value.value)
    return ""


def kernel_table(body: str, puzzles: dict[str, Path], lang: str) -> str:
    """A kernel table's lines as the puzzles give them: ``body``'s header lines and puzzle names kept."""
    from grader.i18n import tr

    lines = [line for line in body.splitlines() if line.strip()]
    names = {m.group(1): m.group(2) for m in map(ROW.match, lines) if m}
    header = [line for line in lines if not ROW.match(line)]
    rows = []
    for puzzle_id, path in sorted(puzzles.items()):
        text = path.read_text()
        title = puzzle_title(text)
        name = names.get(puzzle_id) or (tr(title, lang) if lang != "en" else title.lower())
        rows.append(f"| {puzzle_id} | {name} | {', '.join(f'`{k}`' for k in graded_kernels(text))} |")
    return "\n" + "\n".join(header + rows) + "\n\n"  # blank lines around it: Markdown ends the comments there


def kernel_tables(root: Path) -> dict[Path, tuple[str, str]]:
    """Each page of KERNEL_TABLES -> (its text, its text with every kernel table as the puzzles give it);
    a page without a table gives a problem in table_problems, not an entry here."""
    puzzles = puzzle_files(root / "solutions")
    found = {}
    for name, lang in KERNEL_TABLES.items():
        path = root / name
        if not path.is_file():
            continue
        text = path.read_text()
        fresh = TABLE.sub(
            lambda m, lang=lang: f"{TABLE_BEGIN}\n{kernel_table(m.group(1), puzzles, lang)}{TABLE_END}",
            text,
        )
        found[path] = (text, fresh)
    return found


def table_problems(root: Path) -> list[str]:
    """A page of KERNEL_TABLES that is missing or has no kernel table, and every stale table."""
    tables = kernel_tables(root)
    problems = []
    for name in KERNEL_TABLES:
        path = root / name
        if path not in tables:
            problems.append(f"{name}: missing (it should hold a kernel table)")
        elif not TABLE.search(tables[path][0]):
            problems.append(f"{name}: has no kernel table between {TABLE_BEGIN!r} and {TABLE_END!r}")
        elif tables[path][0] != tables[path][1]:
            problems.append(f"{name}: its kernel table differs from the puzzles' kernels")
    return problems


def write_tables(root: Path) -> list[Path]:
    """Rewrite every stale kernel table from the puzzles; the pages written."""
    written = []
    for path, (text, fresh) in kernel_tables(root).items():
        if text != fresh:
            path.write_text(fresh)
            written.append(path)
    return written


def main() -> int:
    root = course_root()
    problems = check_course(root)
    for problem in problems:
        print(problem)
    print("puzzles/ and solutions/ are in sync" if not problems else f"{len(problems)} problem(s)")
    written = write_tables(root)
    for path in written:
        print(f"{path.relative_to(root)}: its kernel table was stale, rewritten from the puzzles (commit it)")
    others = table_problems(root)  # once rewritten, what is left: a page or its table missing
    for problem in others:
        print(problem)
    if not written and not others:
        print("the kernel tables list the puzzles' kernels")
    return 1 if problems or written or others else 0


if __name__ == "__main__":
    sys.exit(main())
