"""Learner notebooks generated from the puzzle modules: ``python -m grader notebooks``.

A puzzle module is plain Python that doubles as a notebook. Its cells, in order:

* the module docstring: the first markdown cell (the spec; its first line becomes the title);
* ``# %% [markdown]`` then comment lines: a markdown cell (``# text`` gives ``text``, a lone ``#``
  a blank line), up to the next ``# %%`` marker or the first line of code;
* ``# %% [notebook]`` then commented-out code: a code cell that exists only in the notebook
  (pictures, experiments); the module never runs it;
* ``# %%`` or ``# %% title``: starts a code cell of the module. Code before the first marker is one
  code cell too, and a module without markers is cut at its graded kernels;
* ``# %% [bench]`` alone: the generated bench cell goes here (default: the notebook's end);
* ``# %% [deep-dive]`` then comment lines whose first is ``# ## Title``: a markdown cell that opens an
  optional section. It and every cell after it, up to the next markdown cell that starts with a ``## ``
  heading, form the deep dive: their metadata says ``"deep_dive": true``, the opening cell is collapsed
  in JupyterLab (``"jp-MarkdownHeadingCollapsed": true``) and its heading reads
  "## Deep dive (optional): Title". A learner can skip it; :func:`main_path_words` does not count it;
* ``# %% [measured]`` then comment lines: a markdown cell holding an experiment's measured answer, shown
  folded under "What we measured" (an HTML ``<details>``) so that the learner predicts first. It follows
  the experiment's ``# %% [notebook]`` cell; the markdown cell before that asks for the prediction.

Every code cell of the module is cut further so that each graded kernel (a ``Kernel(function=...)``
of ``puzzle()``) has a cell of its own, followed by a generated check cell. The notebook starts with
a generated setup cell and has one generated bench cell. The module's code cells start with
``%%puzzle NAME``, which runs them and remembers their source for ``check`` (see grader/frontends/notebook.py).

Every cell carries ``metadata["tilelang_course"] = {"role": ..., "kernel": ...}``, role one of
ROLES. Output is deterministic (cell ids are stable keys: see puzzle_notebook), so ``--check`` can compare bytes.
"""

from __future__ import annotations

import ast
import base64
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from grader.discover import course_root, graded_kernels

ROLES = ("spec", "markdown", "setup", "code", "kernel", "check", "bench", "extra", "picture")
MARKER = re.compile(r"^# %%(?P<rest>.*)$")
NAME = re.compile(r"[^a-z0-9_]+")
MARKDOWN_MARKS = {"[deep-dive]": "deep-dive", "[measured]": "measured"}
DEEP_DIVE_HEADING = "Deep dive (optional): {title}"  # a deep dive's heading, after "## "
MEASURED_LABEL = "What we measured"  # the summary line of a [measured] cell
# The sentence above each kernel's picture (grader.course.access_pictures draws them; grader.po translates it)
PICTURE_CAPTION = (
    "Which elements of each tensor the reference kernel reads (light) and writes (dark) on the small case named "
    "at the top: the first block in blue and, where there are more, the last block in orange."
)
BENCH_COMMENT = "# On a CUDA GPU: each kernel's large case timed against torch, as a table and a plot.\n"


@dataclass(frozen=True)
class SourceCell:
    """One cell read from a puzzle module, before it becomes a notebook cell.

    ``kind`` is "spec", "markdown", "extra" (notebook-only code), "code" (module code) or "bench"
    (where the bench cell goes);
    ``title`` is the text after ``# %%`` for code cells; ``kernel`` names the graded kernel a code
    cell defines, if any; ``mark`` is "deep-dive" or "measured" for a markdown cell so marked.
    """

    kind: str
    text: str
    title: str = ""
    kernel: str = ""
    mark: str = ""  # a markdown cell's marker: "deep-dive", "measured" or ""


# ------------------------------------------------------------------------------ reading a module


def _uncomment(line: str) -> str:
    if line.startswith("# "):
        return line[2:]
    return line[1:] if line.startswith("#") else line


def _trim(lines: list[str]) -> str:
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return "\n".join(lines)


TERM = re.compile(r"^``[\w.]+``$")


def _definitions(lines: list[str]) -> list[str]:
    """A docstring's definition list (a line ````name```` and its indented text) as markdown bullets."""
    out: list[str] = []
    in_term = first = False
    for index, line in enumerate(lines):
        if TERM.match(line) and index + 1 < len(lines) and lines[index + 1].startswith("    "):
            out.append(f"- {line}:")
            in_term = first = True
        elif in_term and line.startswith("    ") and line.strip():
            if first:
                out[-1] += f" {line.strip()}"
                first = False
            else:
                out.append(f"  {line.strip()}")
        else:
            in_term = False
            out.append(line)
    return out


def _spec_text(docstring: str) -> str:
    """The docstring as markdown: its first line becomes the title, its definition list bullets."""
    first, _, rest = docstring.strip().partition("\n")
    body = "\n".join(_definitions(rest.rstrip().splitlines()))
    return f"# {first.strip()}\n{body}" if body.strip() else f"# {first.strip()}"


def _docstring_end(tree: ast.Module) -> int:
    """Number of lines the module docstring occupies (0 if there is none)."""
    if (
        tree.body
        and isinstance(tree.body[0], ast.Expr)
        and isinstance(getattr(tree.body[0], "value", None), ast.Constant)
    ):
        if isinstance(tree.body[0].value.value, str):
            return tree.body[0].end_lineno or 0
    return 0


def parse_cells(text: str) -> list[SourceCell]:
    """The module's cells in order: spec, then markdown / extra / code cells as marked.

    Code cells are not yet cut at kernels (see :func:`split_kernels`).
    """
    tree = ast.parse(text)
    docstring = ast.get_docstring(tree, clean=True)
    cells = [SourceCell("spec", _spec_text(docstring))] if docstring else []
    kind, title, mark, lines = "code", "", "", []

    def close() -> None:
        body = _trim(lines)
        if body:
            cells.append(SourceCell(kind, body, title, mark=mark))

    for line in text.splitlines()[_docstring_end(tree) :]:
        marker = MARKER.match(line)
        if marker:
            close()
            rest = marker.group("rest").strip()
            if rest == "[bench]":  # where the generated bench cell goes; what follows is code
                cells.append(SourceCell("bench", ""))
                rest = ""
            mark = MARKDOWN_MARKS.get(rest, "")
            kind = "markdown" if mark or rest == "[markdown]" else "extra" if rest == "[notebook]" else "code"
            title, lines = ("" if kind != "code" else rest), []
        elif kind in ("markdown", "extra"):
            if line.startswith("#") or not line.strip():
                lines.append(_uncomment(line))
            else:  # code without a marker ends a commented cell and starts a code cell
                close()
                kind, title, mark, lines = "code", "", "", [line]
        else:
            lines.append(line)
    close()
    return cells


def split_kernels(cell: SourceCell, kernels: Sequence[str]) -> list[SourceCell]:
    """Cut a module code cell so that each graded kernel's definition is a cell of its own.

    A kernel's cell starts at its first decorator, or at the comment lines right above it.
    """
    try:
        tree = ast.parse(cell.text)
    except SyntaxError:
        return [cell]
    lines = cell.text.splitlines()
    starts: list[tuple[int, int, str]] = []  # (first line, last line) 0-based, inclusive; kernel name
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in kernels:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
            while first > 0 and lines[first - 1].startswith("#"):
                first -= 1
            starts.append((first, (node.end_lineno or node.lineno) - 1, node.name))
    if not starts:
        return [cell]
    pieces: list[SourceCell] = []
    cursor = 0
    for first, last, name in starts:
        before = _trim(lines[cursor:first])
        if before:
            pieces.append(SourceCell("code", before, cell.title if not pieces else ""))
        title = cell.title if len(starts) == 1 and not before else ""
        pieces.append(SourceCell("code", _trim(lines[first : last + 1]), title, kernel=name))
        cursor = last + 1
    after = _trim(lines[cursor:])
    if after:
        pieces.append(SourceCell("code", after))
    return pieces


def module_cells(text: str) -> list[SourceCell]:
    """Every cell of a puzzle module, with each graded kernel in a cell of its own."""
    kernels = graded_kernels(text)
    cells: list[SourceCell] = []
    for cell in parse_cells(text):
        cells += split_kernels(cell, kernels) if cell.kind == "code" else [cell]
    return cells


# -------------------------------------------------------------------------------- the notebook


def _slug(text: str) -> str:
    return NAME.sub("_", text.lower()).strip("_")[:40]


def cell_names(cells: Sequence[SourceCell]) -> list[str]:
    """The ``%%puzzle`` name of each module code cell ("" for other cells), unique in the notebook.

    A kernel's cell is named after the kernel, a titled cell after its title, the rest part1, part2...
    """
    taken = {c.kernel for c in cells if c.kernel}
    names, counter = [], 0
    for cell in cells:
        if cell.kind != "code":
            names.append("")
            continue
        if cell.kernel:
            names.append(cell.kernel)
            continue
        counter += 1
        base = _slug(cell.title) or f"part{counter}"
        name, suffix = base, 2
        while name in taken:
            name, suffix = f"{base}_{suffix}", suffix + 1
        taken.add(name)
        names.append(name)
    return names


def setup_source(puzzle_id: str) -> str:
    return "\n".join(
        [
            "# Run this cell first. Cells that start with %%puzzle run as usual and are also remembered,",
            "# so that check(...) can grade them: it writes them to a temporary module and runs the",
            "# grader on it in a separate process (a kernel that hangs only costs that check).",
            "%load_ext grader.nb",
            f"%puzzle {puzzle_id}",
            "from grader.nb import bench, check, explain, hint",
        ]
    )


def _same(text: str) -> str:
    return text


def picture_name(puzzle_id: str, kernel: str) -> str:
    """The file name of a kernel's picture in notebooks/pictures/ (grader.course.access_pictures)."""
    return f"p{puzzle_id}_{kernel}.svg"


def pictures_folder(root: Path | None = None) -> Path:
    return (root or course_root()) / "notebooks" / "pictures"


def picture_cell_text(puzzle_id: str, kernel: str, svg: bytes, say: Callable[[str], str] = _same) -> str:
    """A picture cell's markdown: the caption, then the picture as a data URL, so that the notebook shows it
    wherever it is copied (notebooks/zh_CN/, an nbgrader release, a temporary folder). Not a cell attachment:
    JupyterLab renders attachments of PNG, JPEG, GIF, BMP and WebP only, never SVG."""
    url = "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")
    return f"{say(PICTURE_CAPTION)}\n\n![p{puzzle_id} {kernel}]({url})"


def _metadata(role: str, kernel: str = "") -> dict:
    info = {"role": role, "kernel": kernel} if kernel else {"role": role}
    return {"tilelang_course": info}


def deep_dive_heading(markdown: str, say: Callable[[str], str] = _same) -> str:
    """The opening cell of a deep dive: its first ``## `` heading labelled, "## Deep dive (optional): Title"
    (``say`` translates DEEP_DIVE_HEADING)."""
    lines = markdown.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("## "):
            lines[index] = "## " + say(DEEP_DIVE_HEADING.format(title=line[3:].strip()))
            return "\n".join(lines)
    raise ValueError(f"a [deep-dive] cell must start with a '## Title' heading: {markdown[:60]!r}")


def measured_block(markdown: str, say: Callable[[str], str] = _same) -> str:
    """A [measured] cell: the markdown folded under a summary line (blank lines around it, so that
    Jupyter renders the markdown inside the HTML; ``say`` translates MEASURED_LABEL)."""
    return f"<details><summary>{say(MEASURED_LABEL)}</summary>\n\n{markdown}\n\n</details>"


def _opens_section(cell: SourceCell) -> bool:
    """Whether a markdown cell ends a deep dive: it starts with a ``## `` heading and is no deep dive itself."""
    return cell.kind == "markdown" and cell.mark != "deep-dive" and cell.text.startswith("## ")


def main_path_cells(cells: Sequence[SourceCell]) -> list[SourceCell]:
    """The spec and markdown cells a learner reads on the main path: none inside a deep dive, no
    [measured] cell."""
    out, in_deep_dive = [], False
    for cell in cells:
        if cell.mark == "deep-dive":
            in_deep_dive = True
        elif _opens_section(cell):
            in_deep_dive = False
        if cell.kind in ("spec", "markdown") and not in_deep_dive and cell.mark != "measured":
            out.append(cell)
    return out


def markdown_words(markdown: str) -> int:
    """Words of prose in a markdown text: fenced code blocks and bare markup (``#``, ``-``, ``|``) do not count."""
    prose = re.sub(r"^\s*(```|~~~).*?^\s*\1", " ", markdown, flags=re.S | re.M)
    return sum(1 for token in prose.split() if re.search(r"\w", token))


def sentence_lengths(markdown: str) -> list[int]:
    """Words in each sentence of a markdown text (fenced code, tables and headings left out; a list item is a
    sentence of its own when it ends without a full stop). A sentence ends at '.', '?' or '!' before a space and a
    capital, a backquote, a parenthesis or a star; three words or fewer (a label, "Predict:") do not count."""
    prose = re.sub(r"^\s*(```|~~~).*?^\s*\1", " ", markdown, flags=re.S | re.M)
    kept = [line for line in prose.splitlines() if not line.lstrip().startswith(("|", "#"))]
    # each list item starts a new sentence, even where the item before it ends with ";" or ":"
    items = re.split(r"(?:^|\n)\s*(?:[-*]|\d+\.)\s+", "\n".join(kept))
    sentences = [
        sentence for item in items for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z`*(\d])", " ".join(item.split()))
    ]
    lengths = [sum(1 for token in s.split() if re.search(r"\w", token)) for s in sentences]
    return [n for n in lengths if n > 3]


def main_path_sentences(module_path: Path) -> list[int]:
    """The words in each sentence a learner reads on a puzzle's main path (see main_path_cells)."""
    cells = parse_cells(Path(module_path).read_text())
    return [n for cell in main_path_cells(cells) for n in sentence_lengths(cell.text)]


def main_path_words(module_path: Path) -> int:
    """How many words of prose a learner reads on a puzzle's main path: the spec docstring and the
    markdown cells outside deep dives and [measured] cells (code cells do not count)."""
    cells = parse_cells(Path(module_path).read_text())
    return sum(markdown_words(cell.text) for cell in main_path_cells(cells))


# A hook that gives each prose cell's markdown in another language: (cell id, English markdown) -> markdown.
Prose = Callable[[str, str], str]


def puzzle_notebook(
    source: Path,
    puzzle_id: str,
    prose: Prose | None = None,
    say: Callable[[str], str] = _same,
    pictures: Path | None = None,
) -> NotebookNode:
    """The notebook of one puzzle module: spec, setup, the module's cells with a check after each
    graded kernel, and a bench cell. Deterministic: the same source gives the same notebook.

    A kernel whose picture is in ``pictures`` (default: notebooks/pictures/) has it in a markdown cell right
    above its cell (role "picture"; ``python -m grader pictures`` draws them).

    ``prose`` (default: the English as it is) gives each markdown cell's text before the deep-dive
    heading and the [measured] fold are put around it; ``say`` translates their fixed words
    (see grader.course.translations.translated_notebook)."""
    text = source.read_text()
    cells = module_cells(text)
    kernels = graded_kernels(text)
    names = cell_names(cells)
    out: list[NotebookNode] = []
    # A cell's id is a key that survives edits elsewhere: code cells by their %%puzzle name, prose and
    # notebook-only cells by the code cell they follow and their place after it (translations and
    # links hold on to these, so inserting a cell renumbers at most its own section).
    section, counts = "intro", {}
    in_deep_dive = False

    def add(kind: str, body: str, role: str, kernel: str = "", name: str = "", mark: str = "") -> None:
        nonlocal section
        if role in ("spec", "setup", "bench"):
            key = role
        elif role == "picture":
            key = f"picture-{kernel}"
        elif role in ("kernel", "check", "code"):
            key = f"{role}-{name or kernel}"
            section = name or kernel
        else:
            counts[(section, role)] = counts.get((section, role), 0) + 1
            key = f"{section}-{'md' if role == 'markdown' else role}{counts[(section, role)]}"
        cell_id = re.sub(r"[^A-Za-z0-9_-]", "-", f"p{puzzle_id}-{key}")[:64]
        metadata = _metadata(role, kernel)
        if kind == "markdown" and role != "picture":  # a picture's caption is translated by say(), not prose
            body = prose(cell_id, body) if prose is not None else body
            if mark == "deep-dive":
                body = deep_dive_heading(body, say)
                metadata["jp-MarkdownHeadingCollapsed"] = True
            elif mark == "measured":
                body = measured_block(body, say)
                metadata["tilelang_course"]["measured"] = True
        if in_deep_dive:
            metadata["tilelang_course"]["deep_dive"] = True
        make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        cell = make(body, metadata=metadata)
        cell["id"] = cell_id
        out.append(cell)

    folder = pictures if pictures is not None else pictures_folder()
    rest = cells
    if cells and cells[0].kind == "spec":
        add("markdown", cells[0].text, "spec")
        rest, names = cells[1:], names[1:]
    add("code", setup_source(puzzle_id), "setup")
    bench = BENCH_COMMENT + f"bench({', '.join(json.dumps(k) for k in kernels)})"
    for cell, name in zip(rest, names):
        if cell.mark == "deep-dive":
            in_deep_dive = True
        elif _opens_section(cell):
            in_deep_dive = False
        if cell.kind == "bench":
            if kernels:
                add("code", bench, "bench")
        elif cell.kind in ("markdown", "spec"):
            add("markdown", cell.text, "markdown", mark=cell.mark)
        elif cell.kind == "extra":
            add("code", cell.text, "extra")
        else:
            if cell.kernel and (folder / picture_name(puzzle_id, cell.kernel)).is_file():
                svg = (folder / picture_name(puzzle_id, cell.kernel)).read_bytes()
                add("markdown", picture_cell_text(puzzle_id, cell.kernel, svg, say), "picture", cell.kernel)
            add("code", f"%%puzzle {name}\n{cell.text}", "kernel" if cell.kernel else "code", cell.kernel, name)
            if cell.kernel:
                add("code", f'check("{cell.kernel}")', "check", cell.kernel)
    in_deep_dive = False  # the generated bench cell at the end belongs to no deep dive
    if kernels and not any(c.kind == "bench" for c in cells):
        add("code", bench, "bench")
    notebook = nbformat.v4.new_notebook(
        cells=out,
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "tilelang_course": {"puzzle": puzzle_id, "generated_from": f"{source.parent.name}/{source.name}"},
        },
    )
    nbformat.validate(notebook)
    return notebook


def prose_cells(source: Path, puzzle_id: str) -> list[tuple[str, str]]:
    """(cell id, English markdown) of each prose cell, before any deep-dive heading or [measured] fold:
    the text a translation catalogue translates."""
    seen: list[tuple[str, str]] = []

    def record(cell_id: str, markdown: str) -> str:
        seen.append((cell_id, markdown))
        return markdown

    puzzle_notebook(source, puzzle_id, prose=record)
    return seen


def render(notebook: NotebookNode) -> str:
    """The notebook's file text: nbformat's JSON (sorted keys, indent 1) and a final newline."""
    return nbformat.writes(notebook) + "\n"
