"""Authoring the translations: refresh the catalogues from the sources, check them, and build the
translated notebooks (``python -m grader i18n update|check``). The grader's runtime translation
(reading a catalogue, :func:`grader.i18n.tr`) is grader.i18n; this module only writes and checks.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.discover import course_root, normalize_id, puzzle_files
from grader.i18n import (
    LANGS,
    PLACEHOLDER,
    Entry,
    catalogue,
    folder,
    grader_catalogue_path,
    puzzle_catalogue_path,
    read_po,
    tr,
)

BANNER = "> **此段尚未翻译 / not yet translated**"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t").replace("\n", "\\n") + '"'


def _field(name: str, text: str, prefix: str = "") -> list[str]:
    """``name "..."``, split after each newline (the gettext tools' layout) when there is more than one line."""
    if "\n" not in text.rstrip("\n"):
        return [f"{prefix}{name} {_quote(text)}"]
    pieces = text.splitlines(keepends=True)
    return [f'{prefix}{name} ""', *(f"{prefix}{_quote(p)}" for p in pieces)]


HEADER = (
    'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Language: {lang}\\n"\n'
    '"X-Generated-By: python -m grader i18n update\\n"\n'
)


def write_po(path: Path, entries: Sequence[Entry], lang: str, comment: str = "") -> bool:
    """Write the catalogue (a header, then the entries in order); return whether the file changed."""
    lines = [f"# {line}".rstrip() for line in comment.splitlines()]
    lines.append(HEADER.format(lang=lang))
    for entry in entries:
        lines += [f"#. {note}" for note in entry.notes]
        if entry.fuzzy:
            lines.append("#, fuzzy")
            if entry.previous:
                lines += _field("msgid", entry.previous, prefix="#| ")
        lines += _field("msgctxt", entry.msgctxt)
        lines += _field("msgid", entry.msgid)
        lines += _field("msgstr", entry.msgstr)
        lines.append("")
    text = "\n".join(lines).rstrip("\n") + "\n"
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True


FENCE = re.compile(r"^\s*(```|~~~)")


def paragraphs(text: str) -> list[str]:
    """A markdown text cut at blank lines; a fenced code block stays whole (with its blank lines)."""
    out: list[str] = []
    block: list[str] = []
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        if not line.strip() and not fenced:
            if block:
                out.append("\n".join(block))
            block = []
        else:
            block.append(line)
    if block:
        out.append("\n".join(block))
    return out


def translatable(paragraph: str) -> bool:
    """Whether a paragraph has prose to translate: not only a fenced or indented code block, not only
    symbols."""
    lines = paragraph.splitlines()
    if FENCE.match(lines[0]) and FENCE.match(lines[-1]) and len(lines) > 1:
        return False
    if all(line.startswith(("    ", "\t")) for line in lines):
        return False
    return re.search(r"[A-Za-z]{2}", _strip_code(paragraph)) is not None


INLINE_CODE = re.compile(r"``[^`]+``|`[^`]+`")  # may run over a line break, as markdown allows


FENCED = re.compile(r"^\s*```.*?^\s*```", re.S | re.M)


MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.S)


LINK = re.compile(r"\]\(([^)\s]+)\)")


NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])")


def _strip_code(text: str) -> str:
    return MATH.sub(" ", INLINE_CODE.sub(" ", FENCED.sub(" ", text)))


def fixed_parts(text: str) -> dict[str, list[str]]:
    """What a translation must keep exactly as the English has it, each kind sorted: fenced code,
    inline code, math, link targets, and the numbers of the prose."""
    return {
        "code blocks": sorted(m.strip() for m in FENCED.findall(text)),
        "inline code": sorted(" ".join(c.split()) for c in INLINE_CODE.findall(FENCED.sub(" ", text))),
        "math": sorted(MATH.findall(INLINE_CODE.sub(" ", FENCED.sub(" ", text)))),
        "links": sorted(LINK.findall(text)),
        "numbers": sorted(NUMBER.findall(_strip_code(text))),
    }


def mismatches(english: str, translation: str) -> list[str]:
    """How a translation's code, math, links or numbers differ from the English (nothing: [])."""
    want, got = fixed_parts(english), fixed_parts(translation)
    out = []
    for kind in want:
        if want[kind] != got[kind]:  # as multisets: a number said twice in English is said twice here
            missing = list((Counter(want[kind]) - Counter(got[kind])).elements())
            extra = list((Counter(got[kind]) - Counter(want[kind])).elements())
            out.append(f"{kind} differ (English only: {missing or '-'}; translation only: {extra or '-'})")
    return out


def puzzle_entries(source: Path, puzzle_id: str) -> list[Entry]:
    """The entries the English sources give for one puzzle (msgstr empty), in notebook order:
    each prose cell's paragraphs, then each kernel's hint tiers."""
    from grader import hints
    from grader.course.notebooks import prose_cells

    entries: dict[tuple[str, str], Entry] = {}
    for cell_id, markdown in prose_cells(source, puzzle_id):  # before the deep-dive and [measured] labels
        for paragraph in paragraphs(markdown):
            if translatable(paragraph):
                entries.setdefault((cell_id, paragraph), Entry(cell_id, paragraph))
    root = source.parent.parent
    stubs = hints.load(puzzle_id, root)
    todo = hints.todo_comments(source.read_text())
    from grader.discover import graded_kernels

    for kernel in graded_kernels(source.read_text()):
        tiers = stubs.get(kernel) or ([todo[kernel][1]] if todo.get(kernel, ("", ""))[1] else [])
        for tier, text in enumerate(tiers, 1):
            context = f"hint:{kernel}:{tier}"
            entries.setdefault((context, text), Entry(context, text))
    return list(entries.values())


def _flat(text: str) -> str:
    """A paragraph with its whitespace collapsed: a reflowed paragraph renders, and reads, the same."""
    return " ".join(text.split())


def updated(fresh: Sequence[Entry], old: Sequence[Entry]) -> list[Entry]:
    """The fresh entries with the old translations carried over: the same (context, English) keeps its
    translation; an entry whose English changed takes the closest old translation of the same context
    (else of any context) as fuzzy, with the English it was made from. English that only changed its
    line breaks keeps its translation as it was."""
    by_key = {e.key: e for e in old if e.msgstr}
    reflowed = {(e.msgctxt, _flat(e.msgid)): e for e in old if e.msgstr}  # the same words, new line breaks
    fresh_keys = {e.key for e in fresh}
    unused = [e for e in old if e.msgstr and e.key not in fresh_keys]
    by_english: dict[str, Entry] = {}
    for entry in old:
        if entry.msgstr and entry.done:
            by_english.setdefault(entry.msgid, entry)
    out = []
    for entry in fresh:
        kept = by_key.get(entry.key) or reflowed.get((entry.msgctxt, _flat(entry.msgid)))
        new = Entry(entry.msgctxt, entry.msgid, notes=list(entry.notes))
        if kept is not None:
            new.msgstr, new.fuzzy, new.previous = kept.msgstr, kept.fuzzy, kept.previous
        elif entry.msgid in by_english:  # the same English moved to another cell
            new.msgstr = by_english[entry.msgid].msgstr
        else:
            same_cell = [e for e in unused if e.msgctxt == entry.msgctxt]
            pool = same_cell or unused
            cutoff = 0.5 if same_cell else 0.8
            close = difflib.get_close_matches(entry.msgid, [e.msgid for e in pool], n=1, cutoff=cutoff)
            if close:
                donor = next(e for e in pool if e.msgid == close[0])
                new.msgstr, new.fuzzy, new.previous = donor.msgstr, True, donor.previous or donor.msgid
                unused.remove(donor)
        out.append(new)
    return out


def update_puzzle(puzzle_id: str, lang: str, root: Path | None = None) -> tuple[Path, bool, list[Entry]]:
    """Refresh one puzzle's catalogue from its stub; return (path, whether it changed, its entries)."""
    root = root or course_root()
    source = puzzle_files(root / "puzzles")[puzzle_id]
    path = puzzle_catalogue_path(puzzle_id, lang, root)
    entries = updated(puzzle_entries(source, puzzle_id), read_po(path))
    comment = (
        f"Puzzle {puzzle_id} ({source.name}) in {lang}: msgctxt is the notebook cell's id (or hint:KERNEL:TIER),\n"
        "msgid one English paragraph. Refresh with: python -m grader i18n update"
    )
    return path, write_po(path, entries, lang, comment), entries


def pending(puzzle_id: str, lang: str, root: Path | None = None) -> list[str]:
    """What keeps a puzzle's catalogue from being complete and in sync: one line per entry that is
    missing from the file, untranslated, fuzzy, or whose code/math/numbers differ from the English."""
    root = root or course_root()
    source = puzzle_files(root / "puzzles")[puzzle_id]
    path = puzzle_catalogue_path(puzzle_id, lang, root)
    return entry_problems(puzzle_entries(source, puzzle_id), path, path.name) + comment_pending(puzzle_id, lang, root)


def entry_problems(entries: Sequence[Entry], path: Path, label: str) -> list[str]:
    """One line per English entry that the catalogue at ``path`` lacks, leaves untranslated or fuzzy, or whose
    translation differs from it in code, math or numbers; each line starts with ``label``."""
    have = {e.key: e for e in read_po(path)}
    out = []
    for entry in entries:
        found = have.get(entry.key)
        where = f"{label} [{entry.msgctxt}] {entry.msgid[:60]!r}"
        if found is None:
            out.append(f"{where}: not in the catalogue (run python -m grader i18n update)")
        elif not found.msgstr:
            out.append(f"{where}: not translated")
        elif found.fuzzy:
            out.append(f"{where}: fuzzy (the English changed since it was translated)")
        else:
            out += [f"{where}: {problem}" for problem in mismatches(entry.msgid, found.msgstr)]
    return out


def complete_list(lang: str, root: Path | None = None) -> list[str]:
    """The puzzles whose catalogues must be complete (i18n/LANG/complete.txt: one id a line, # comments)."""
    path = folder(lang, root) / "complete.txt"
    if not path.is_file():
        return []
    ids = []
    for line in path.read_text(encoding="utf-8").splitlines():
        word = line.split("#", 1)[0].strip()
        if word:
            ids.append(normalize_id(word) or word)
    return ids


def translate_markdown(text: str, context: str, entries: dict[tuple[str, str], Entry]) -> str:
    """A prose cell in the catalogue's language: each paragraph's translation, or the English under the
    banner where there is none (or it is fuzzy). Consecutive untranslated paragraphs share one banner."""
    out: list[str] = []
    untranslated = False
    for paragraph in paragraphs(text):
        entry = entries.get((context, paragraph))
        if not translatable(paragraph):
            out.append(paragraph)
            continue
        if entry is not None and entry.done:
            out.append(entry.msgstr)
            untranslated = False
        else:
            if not untranslated:
                out.append(BANNER)
            out.append(paragraph)
            untranslated = True
    return "\n\n".join(out)


def setup_source(puzzle_id: str, lang: str) -> str:
    """The setup cell of a translated notebook: the English one, with its comments translated and
    ``%puzzle ID --lang LANG`` so that the notebook's checks and hints speak the language."""
    from grader.course.notebooks import setup_source as english

    lines = []
    for line in english(puzzle_id).splitlines():
        if line.startswith("# "):
            lines.append(line)
        elif line.startswith("%puzzle "):
            lines.append(f"{line} --lang {lang}")
        else:
            lines.append(line)
    comment = [line[2:] for line in lines if line.startswith("# ")]
    said = tr(" ".join(comment), lang)
    if said == " ".join(comment):  # not translated: the English comment as it is
        return "\n".join(lines)
    code = [line for line in lines if not line.startswith("# ")]
    wrapped = ["# " + piece for piece in said.splitlines()]  # the translation breaks its own lines
    return "\n".join(wrapped + code)


def translated_notebook(source: Path, puzzle_id: str, lang: str, root: Path | None = None):
    """The notebook of one puzzle in ``lang``: the English notebook's cells, ids and metadata, with the
    prose from the catalogue and the setup cell's %puzzle line naming the language. Code cells other
    than the setup are the English notebook's with their comments translated (comments/pNN.po): the code
    itself is byte-identical. The deep-dive heading's label and the
    [measured] fold's summary come from grader.po."""
    from grader.course.notebooks import puzzle_notebook

    entries = catalogue(puzzle_catalogue_path(puzzle_id, lang, root))

    def prose(cell_id: str, markdown: str) -> str:
        return translate_markdown(markdown, cell_id, entries)

    def say(text: str) -> str:
        return tr(text, lang)

    notebook = puzzle_notebook(source, puzzle_id, prose=prose, say=say)
    for cell in notebook.cells:
        if cell.metadata.get("tilelang_course", {}).get("role") == "setup":
            cell.source = setup_source(puzzle_id, lang)
    translate_code_comments(notebook, puzzle_id, lang, root)
    notebook.metadata["tilelang_course"]["lang"] = lang
    return notebook


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m grader i18n", description="The course's translation catalogues.")
    p.add_argument("action", choices=("update", "check"), help="update: refresh i18n/LANG/pNN.po; check: report")
    p.add_argument("ids", nargs="*", metavar="ID", help="only these puzzles (default: all)")
    p.add_argument("--lang", default="zh_CN", choices=LANGS)
    return p


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(list(argv))
    root = course_root()
    found = puzzle_files(root / "puzzles")
    ids = [normalize_id(i) or i for i in args.ids] or sorted(found)
    unknown = [i for i in ids if i not in found]
    if unknown:
        print(f"grader i18n: no puzzle {', '.join(unknown)}")
        return 2
    if args.action == "update":
        for puzzle_id in ids:
            path, changed, entries = update_puzzle(puzzle_id, args.lang, root)
            done = sum(e.done for e in entries)
            fuzzy = sum(e.fuzzy for e in entries)
            state = "written" if changed else "unchanged"
            print(f"{path.relative_to(root)}: {done} of {len(entries)} translated, {fuzzy} fuzzy ({state})")
            path, changed, entries = update_comments(puzzle_id, args.lang, root)
            done, state = sum(e.done for e in entries), "written" if changed else "unchanged"
            print(f"{path.relative_to(root)}: {done} of {len(entries)} comments translated ({state})")
        return 0
    required = complete_list(args.lang, root)
    failed = False
    for puzzle_id in ids:
        problems = pending(puzzle_id, args.lang, root)
        must = puzzle_id in required
        label = "must be complete" if must else "may be incomplete"
        print(f"p{puzzle_id}.po ({label}): {len(problems)} problem(s)")
        for problem in problems if must else [p for p in problems if "differ" in p]:
            print(f"  {problem}")
        failed |= bool(problems) and must or any("differ" in p for p in problems)
    grader_problems = grader_catalogue_problems(args.lang, root)
    for problem in grader_problems:
        print(f"  {problem}")
    return 1 if failed or grader_problems else 0


def string_literals(folder: Path) -> list[str]:
    """Every string literal of the Python files directly in or under ``folder`` as it evaluates (adjacent literals
    joined), an f-string's values replaced by NUL."""
    import ast

    out = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.JoinedStr):
                out.append("".join(v.value if isinstance(v, ast.Constant) else "\x00" for v in node.values))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.append(node.value)
    return out


def grader_catalogue_problems(lang: str, root: Path | None = None) -> list[str]:
    """grader.po: every entry translated, not fuzzy, keeping the English's placeholders, code and numbers,
    and still said by the grader (each fixed piece of the English occurs in grader/'s sources)."""
    root = root or course_root()
    path = grader_catalogue_path(lang, root)
    from grader.course.notebooks import setup_source

    said = [line[2:] for line in setup_source("01").splitlines() if line.startswith("# ")]
    literals = string_literals(root / "grader") + string_literals(root / "puzzles") + [" ".join(said)]
    sources = "\x01".join(literals)
    out = []
    for entry in read_po(path):
        where = f"{path.name} {entry.msgid[:60]!r}"
        if not entry.done:
            out.append(f"{where}: {'fuzzy' if entry.fuzzy else 'not translated'}")
            continue
        if sorted(PLACEHOLDER.findall(entry.msgid)) != sorted(PLACEHOLDER.findall(entry.msgstr)):
            out.append(f"{where}: the translation's {{placeholders}} differ from the English")
        plain = PLACEHOLDER.sub("\x00", entry.msgid)
        out += [f"{where}: {m}" for m in mismatches(plain, PLACEHOLDER.sub("\x00", entry.msgstr))]
        pieces = [p for p in plain.split("\x00") if " " in p.strip()]  # single words: too common to check
        missing = [p for p in pieces if p not in sources]
        if missing:
            out.append(f"{where}: the grader no longer says {missing[0]!r} (update or remove the entry)")
    return out


# ------------------------------------------------------------------------------ code comments
# The comments of a notebook's code cells are translated too; the code never is. Each comment block (consecutive
# full-line comments at one indentation) and each trailing comment is one entry of i18n/LANG/comments/pNN.po,
# msgctxt "CELL_ID:comment", msgid its English text without the "# ". A "# TODO begin: title" line keeps its
# marker and translates only the title. The notebook build swaps the comment text and nothing else.

COMMENT_CONTEXT = "{cell}:comment"
TODO_BEGIN = re.compile(r"^TODO begin:?\s*")
PRAGMA = re.compile(r"^(noqa|type:|fmt:|pragma|ruff:|TODO end)\b")


@dataclass
class CommentBlock:
    """One translatable comment of a code cell: lines first..last (0-based, inclusive) at ``column``."""

    first: int
    last: int
    column: int
    text: str  # the English, one line of it per comment line, without "# " (and without the TODO marker)
    trailing: bool = False  # after code on its line
    marker: str = ""  # "TODO begin: ", kept as it is


def _comment_tokens(source: str) -> list[tuple[int, int, str]] | None:
    """(line index, column, comment text without '#') for each comment of a cell, or None where the cell is
    not Python (a magic line) and tokenize gives up."""
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return [(t.start[0] - 1, t.start[1], t.string[1:]) for t in tokens if t.type == tokenize.COMMENT]


def comment_blocks(source: str) -> list[CommentBlock]:
    """The translatable comments of one code cell, in order."""
    lines = source.splitlines()
    blocks: list[CommentBlock] = []
    for row, column, raw in _comment_tokens(source) or []:
        text = raw[1:] if raw.startswith(" ") else raw
        trailing = bool(lines[row][:column].strip())
        if not re.search(r"[A-Za-z]", text) or PRAGMA.match(text):
            continue
        marker = TODO_BEGIN.match(text)
        if marker:
            blocks.append(CommentBlock(row, row, column, text[marker.end() :], marker=marker.group()))
            continue
        last = blocks[-1] if blocks else None
        if (
            not trailing
            and last is not None
            and not last.trailing
            and not last.marker
            and last.column == column
            and last.last == row - 1
        ):
            last.last, last.text = row, f"{last.text}\n{text}"
        else:
            blocks.append(CommentBlock(row, row, column, text, trailing=trailing))
    return blocks


def translate_comments(source: str, context: str, entries: dict[tuple[str, str], Entry]) -> str:
    """A code cell with each comment whose translation is done replaced by it; the code byte for byte."""
    lines = source.splitlines()
    for block in reversed(comment_blocks(source)):
        entry = entries.get((context, block.text))
        if entry is None or not entry.done:
            continue
        said = entry.msgstr.splitlines() or [""]
        if block.trailing:
            line = lines[block.first]
            lines[block.first] = f"{line[: block.column]}# {' '.join(s.strip() for s in said)}"
            continue
        indent = lines[block.first][: block.column]
        new = [f"{indent}# {block.marker if i == 0 else ''}{s}".rstrip() for i, s in enumerate(said)]
        lines[block.first : block.last + 1] = new
    return "\n".join(lines) + ("\n" if source.endswith("\n") else "")


def without_comments(source: str) -> list[str]:
    """A code cell's lines with every comment removed and comment-only lines dropped: what a translation
    of the comments must leave unchanged."""
    lines = source.splitlines()
    cut: dict[int, int] = {}
    for row, column, _ in _comment_tokens(source) or []:
        cut[row] = column
    out = []
    for row, line in enumerate(lines):
        kept = line[: cut[row]].rstrip() if row in cut else line
        if kept.strip() or row not in cut:
            out.append(kept)
    return out


def _code_cells(notebook):
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell.metadata.get("tilelang_course", {}).get("role") != "setup":
            yield cell


def comment_entries(source: Path, puzzle_id: str) -> list[Entry]:
    """The comment entries of one puzzle's stub notebook (msgstr empty), in notebook order."""
    from grader.course.notebooks import puzzle_notebook

    entries: dict[tuple[str, str], Entry] = {}
    for cell in _code_cells(puzzle_notebook(source, puzzle_id)):
        context = COMMENT_CONTEXT.format(cell=cell.id)
        for block in comment_blocks(cell.source):
            entries.setdefault((context, block.text), Entry(context, block.text))
    return list(entries.values())


def comment_catalogue_path(puzzle_id: str, lang: str, root: Path | None = None) -> Path:
    return folder(lang, root) / "comments" / f"p{puzzle_id}.po"


def update_comments(puzzle_id: str, lang: str, root: Path | None = None) -> tuple[Path, bool, list[Entry]]:
    """Refresh one puzzle's comment catalogue from its stub; return (path, whether it changed, its entries)."""
    root = root or course_root()
    source = puzzle_files(root / "puzzles")[puzzle_id]
    path = comment_catalogue_path(puzzle_id, lang, root)
    entries = updated(comment_entries(source, puzzle_id), read_po(path))
    note = (
        f"Puzzle {puzzle_id} ({source.name}) in {lang}, the comments of its notebook's code cells: msgctxt is\n"
        "CELL_ID:comment, msgid one comment block without its '# '; break the translation's lines as you like.\n"
        "Refresh with: python -m grader i18n update"
    )
    return path, write_po(path, entries, lang, note), entries


def comment_pending(puzzle_id: str, lang: str, root: Path | None = None) -> list[str]:
    """What keeps a puzzle's comment catalogue from being complete: one line per comment missing, untranslated,
    fuzzy, or whose numbers and code differ from the English."""
    root = root or course_root()
    source = puzzle_files(root / "puzzles")[puzzle_id]
    path = comment_catalogue_path(puzzle_id, lang, root)
    return entry_problems(comment_entries(source, puzzle_id), path, f"comments/{path.name}")


def translate_code_comments(notebook, puzzle_id: str, lang: str, root: Path | None = None) -> None:
    """Every code cell but the setup with its comments from the comment catalogue (in place)."""
    entries = catalogue(comment_catalogue_path(puzzle_id, lang, root))
    for cell in _code_cells(notebook):
        cell.source = translate_comments(cell.source, COMMENT_CONTEXT.format(cell=cell.id), entries)


def translate_file_comments(text: str, puzzle_id: str, lang: str, root: Path | None = None) -> str:
    """A whole puzzle file with each comment the catalogue translates (in any cell) replaced: what the nbgrader
    course in ``lang`` reads the stub's hint comments from, so they match its translated notebook's."""
    by_english = {e.msgid: e for e in read_po(comment_catalogue_path(puzzle_id, lang, root)) if e.done}
    return translate_comments(text, "", {("", english): entry for english, entry in by_english.items()})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
