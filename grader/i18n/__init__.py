"""Translations of the course: gettext catalogues under ``i18n/LANG/`` and the one function that
translates what the grader says.

English stays the source of truth in ``puzzles/*.py``, ``puzzles/hints/*.json`` and the grader's
code. A translation lives in a catalogue (a ``.po`` file, read and written here with the standard
library only):

* ``i18n/LANG/pNN.po``: one entry per paragraph of each prose cell of puzzle NN's notebook
  (``msgctxt`` = the cell's id, e.g. ``p05-spec`` or ``p05-row_sum-md1``, ``msgid`` = the English
  paragraph) and one per hint tier (``msgctxt`` = ``hint:KERNEL:TIER``). ``python -m grader i18n
  update`` adds the new English, marks an entry whose English changed ``fuzzy`` (keeping the old
  translation and, as ``#| msgid``, the English it was made from) and drops what the sources no
  longer hold.
* ``i18n/LANG/grader.po``: the grader's sentences. A ``msgid`` is the English as the grader prints it,
  with ``{name}`` where the grader puts a value (a number, a tensor's name, TileLang's own words); the
  ``msgstr`` places the same names. :func:`tr` translates a printed line by finding the entry whose
  pattern matches all of it, and translates the values it captured the same way, so a sentence built
  from pieces is translated piece by piece. Nothing in the grader's JSON is translated.

The language is ``$TILELANG_COURSE_LANG`` (``zh_CN``; ``en`` for English), else the locale's
(``LC_ALL``, ``LC_MESSAGES``, ``LANG``). In English :func:`tr` returns its argument unchanged.
A missing or fuzzy translation falls back to the English.

``python -m grader i18n update [--lang zh_CN]`` refreshes the puzzle catalogues from the sources;
``python -m grader i18n check`` prints each entry that is missing, fuzzy, or whose inline code, math,
links or numbers differ from the English, and exits 1 if a puzzle named in ``i18n/LANG/complete.txt``
has one (tests/test_i18n.py runs the same checks).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grader import settings
from grader.discover import course_root, normalize_id, puzzle_files

ENV = settings.LANG
LANGS = ("zh_CN",)  # the translations there are; English is the source
BANNER = "> **此段尚未翻译 / not yet translated**"

# ------------------------------------------------------------------------------ the language


def normalize(value: str) -> str:
    """'zh_CN', 'zh-CN', 'zh_CN.UTF-8', 'zh' -> 'zh_CN'; anything else (en, C, POSIX, '') -> 'en'."""
    value = value.split(".")[0].split("@")[0].replace("-", "_").strip()
    return "zh_CN" if value.lower().startswith("zh") else "en"


def current() -> str:
    """The language the grader speaks: $TILELANG_COURSE_LANG if set, else the locale's."""
    chosen = os.environ.get(ENV, "").strip()
    if chosen:
        return normalize(chosen)
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(variable, "").strip()
        if value:
            return normalize(value)
    return "en"


def folder(lang: str, root: Path | None = None) -> Path:
    return (root or course_root()) / "i18n" / lang


# ------------------------------------------------------------------------------ .po files


@dataclass
class Entry:
    """One catalogue entry: a context, the English, its translation, and whether that is stale."""

    msgctxt: str
    msgid: str
    msgstr: str = ""
    fuzzy: bool = False
    previous: str = ""  # the English the fuzzy translation was made from
    notes: list[str] = field(default_factory=list)  # "#." lines: where the text comes from

    @property
    def key(self) -> tuple[str, str]:
        return self.msgctxt, self.msgid

    @property
    def done(self) -> bool:
        return bool(self.msgstr) and not self.fuzzy


def _unquote(text: str) -> str:
    body = text.strip()
    if not (body.startswith('"') and body.endswith('"')):
        raise ValueError(f"not a quoted string: {text!r}")
    out, i, body = [], 0, body[1:-1]
    escapes = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            out.append(escapes.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t").replace("\n", "\\n") + '"'


def _field(name: str, text: str, prefix: str = "") -> list[str]:
    """``name "..."``, split after each newline (the gettext tools' layout) when there is more than one line."""
    if "\n" not in text.rstrip("\n"):
        return [f"{prefix}{name} {_quote(text)}"]
    pieces = text.splitlines(keepends=True)
    return [f'{prefix}{name} ""', *(f"{prefix}{_quote(p)}" for p in pieces)]


def read_po(path: Path) -> list[Entry]:
    """The entries of a .po file (the header entry, msgid "", is left out)."""
    entries: list[Entry] = []
    if not path.is_file():
        return entries
    current: dict[str, str] = {}
    flags: set[str] = set()
    previous, notes = "", []
    last = ""

    def close() -> None:
        nonlocal current, flags, previous, notes, last
        if "msgid" in current and current["msgid"]:
            entries.append(
                Entry(
                    current.get("msgctxt", ""),
                    current["msgid"],
                    current.get("msgstr", ""),
                    "fuzzy" in flags,
                    previous,
                    notes,
                )
            )
        current, flags, previous, notes, last = {}, set(), "", [], ""

    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        try:
            if not stripped:
                close()
            elif stripped.startswith("#,"):
                if "msgid" in current:
                    close()
                flags |= {f.strip() for f in stripped[2:].split(",")}
            elif stripped.startswith("#|"):
                rest = stripped[2:].strip()
                if rest.startswith("msgid "):
                    previous = _unquote(rest[6:])
                elif rest.startswith('"'):
                    previous += _unquote(rest)
            elif stripped.startswith("#."):
                notes.append(stripped[2:].strip())
            elif stripped.startswith("#"):
                continue
            elif stripped.startswith('"'):
                current[last] += _unquote(stripped)
            else:
                name, _, value = stripped.partition(" ")
                if name not in ("msgctxt", "msgid", "msgstr"):
                    raise ValueError(f"unknown keyword {name!r}")
                if name in current or (name == "msgctxt" and "msgid" in current):
                    close()
                current[name], last = _unquote(value), name
        except (ValueError, KeyError) as error:
            raise ValueError(f"{path}:{number}: {error}") from None
    close()
    return entries


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


_CACHE: dict[Path, tuple[float, dict[tuple[str, str], Entry]]] = {}


def catalogue(path: Path) -> dict[tuple[str, str], Entry]:
    """(msgctxt, msgid) -> entry of a .po file, re-read when the file changes ({} when there is none)."""
    try:
        stamp = path.stat().st_mtime
    except OSError:
        return {}
    cached = _CACHE.get(path)
    if cached is None or cached[0] != stamp:
        cached = (stamp, {e.key: e for e in read_po(path)})
        _CACHE[path] = cached
    return cached[1]


# ------------------------------------------------------------------------------ prose paragraphs

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


# ------------------------------------------------------------------------------ a puzzle's catalogue


def puzzle_entries(source: Path, puzzle_id: str) -> list[Entry]:
    """The entries the English sources give for one puzzle (msgstr empty), in notebook order:
    each prose cell's paragraphs, then each kernel's hint tiers."""
    from grader import hints
    from grader.course.notebooks import puzzle_notebook

    entries: dict[tuple[str, str], Entry] = {}
    notebook = puzzle_notebook(source, puzzle_id)
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        for paragraph in paragraphs(cell.source):
            if translatable(paragraph):
                entries.setdefault((cell.id, paragraph), Entry(cell.id, paragraph))
    root = source.parent.parent
    stubs = hints.load(puzzle_id, root)
    todo = hints.todo_comments(source.read_text())
    from grader.course.notebooks import graded_kernels

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


def puzzle_catalogue_path(puzzle_id: str, lang: str, root: Path | None = None) -> Path:
    return folder(lang, root) / f"p{puzzle_id}.po"


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
    have = {e.key: e for e in read_po(path)}
    out = []
    for entry in puzzle_entries(source, puzzle_id):
        found = have.get(entry.key)
        where = f"{path.name} [{entry.msgctxt}] {entry.msgid[:60]!r}"
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


# ------------------------------------------------------------------------------ notebooks


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
    than the setup are byte-identical to the English notebook's."""
    from grader.course.notebooks import puzzle_notebook

    notebook = puzzle_notebook(source, puzzle_id)
    entries = catalogue(puzzle_catalogue_path(puzzle_id, lang, root))
    for cell in notebook.cells:
        role = cell.metadata.get("tilelang_course", {}).get("role")
        if cell.cell_type == "markdown":
            cell.source = translate_markdown(cell.source, cell.id, entries)
        elif role == "setup":
            cell.source = setup_source(puzzle_id, lang)
    notebook.metadata["tilelang_course"]["lang"] = lang
    return notebook


# ------------------------------------------------------------------------------ the grader's sentences

PLACEHOLDER = re.compile(r"\{(\w+)\}")
# Placeholders that stand for one word or number (no spaces): they cannot swallow the text around them.
WORDS = {"verb", "unit", "done", "count", "n", "wrong", "total", "kib", "limit", "line", "level", "levels", "last"}
WORDS |= {"unfit", "simulated", "built", "bad", "nan", "values", "left", "covered", "step", "dim", "axis", "code"}
WORDS |= {"signal", "seconds", "arch", "puzzle", "kernel", "case"}


@dataclass(frozen=True)
class Pattern:
    english: str
    translation: str
    regex: re.Pattern[str] | None  # None: an exact sentence
    names: tuple[str, ...]
    weight: int  # characters of fixed text: the most specific pattern is tried first

    @property
    def order(self) -> tuple[bool, int]:
        """Patterns that start with fixed text first ("simulated on CPU: {message}" before "{wrong} of
        {total} output elements wrong", which would swallow the prefix), then the most specific."""
        return self.english.startswith("{"), -self.weight


def _pattern(english: str, translation: str) -> Pattern:
    names = tuple(PLACEHOLDER.findall(english))
    if not names:
        return Pattern(english, translation, None, (), len(english))
    pieces = PLACEHOLDER.split(english)
    regex, seen = "", set()
    for index, piece in enumerate(pieces):
        if index % 2 == 0:
            regex += re.escape(piece)
        else:  # a name used twice must capture the same text twice
            capture = r"\S+" if piece in WORDS else ".*?"
            regex += f"(?P={piece})" if piece in seen else f"(?P<{piece}>{capture})"
            seen.add(piece)
    unique = tuple(dict.fromkeys(names))
    return Pattern(english, translation, re.compile(regex, re.S), unique, len(PLACEHOLDER.sub("", english)))


_PATTERNS: dict[tuple[Path, float], tuple[dict[str, str], list[Pattern]]] = {}


def grader_catalogue_path(lang: str, root: Path | None = None) -> Path:
    return folder(lang, root) / "grader.po"


def _patterns(lang: str) -> tuple[dict[str, str], list[Pattern]]:
    path = grader_catalogue_path(lang, course_root())
    try:
        stamp = path.stat().st_mtime
    except OSError:
        return {}, []
    key = (path, stamp)
    if key not in _PATTERNS:
        exact: dict[str, str] = {}
        patterns: list[Pattern] = []
        for entry in read_po(path):
            if not entry.done:
                continue
            if PLACEHOLDER.search(entry.msgid):
                patterns.append(_pattern(entry.msgid, entry.msgstr))
            else:
                exact[entry.msgid] = entry.msgstr
        patterns.sort(key=lambda p: p.order)
        _PATTERNS.clear()
        _PATTERNS[key] = (exact, patterns)
    return _PATTERNS[key]


def tr(text: str, lang: str | None = None, _depth: int = 0) -> str:
    """``text`` (one sentence or line the grader prints) in the grader's language; English unchanged.

    An exact catalogue entry wins; else the most specific pattern that matches the whole text, its
    captured values translated in turn. Text that nothing matches stays English. Leading spaces are kept.
    """
    lang = lang or current()
    if lang == "en" or not text or _depth > 6:
        return text
    try:
        return _translate(text, lang, _depth)
    except Exception:  # a broken catalogue must never cost a learner a verdict: say it in English
        return text


def _translate(text: str, lang: str, _depth: int) -> str:
    exact, patterns = _patterns(lang)
    if not exact and not patterns:
        return text
    body = text.lstrip(" ")
    indent = text[: len(text) - len(body)]
    if body in exact:
        return indent + exact[body]
    for pattern in patterns:
        if pattern.regex is None or len(body) < pattern.weight:
            continue
        match = pattern.regex.fullmatch(body)
        if match:
            values = {name: tr(match.group(name), lang, _depth + 1) for name in pattern.names}
            return indent + PLACEHOLDER.sub(lambda m, v=values: v.get(m.group(1), m.group(0)), pattern.translation)
    return text


def tr_lines(lines: Sequence[str], lang: str | None = None) -> list[str]:
    return [tr(line, lang) for line in lines]


def hint_text(puzzle_id: str, kernel: str, level: int, english: str, lang: str | None = None) -> str:
    """A hint tier's text in the language (its catalogue entry, unless missing or fuzzy)."""
    lang = lang or current()
    if lang == "en":
        return english
    entry = catalogue(puzzle_catalogue_path(puzzle_id, lang, course_root())).get((f"hint:{kernel}:{level}", english))
    return entry.msgstr if entry is not None and entry.done else english


def _columns(text: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrap_wide(text: str, width: int, first: int | None = None) -> list[str]:
    """``text`` in lines of at most ``width`` terminal columns (a CJK character takes two; the first line
    ``first`` columns if given). Lines break at spaces or between CJK characters, never inside a run of
    Latin letters, digits or code."""
    tokens = re.findall(r" +|[\x21-\x7e]+|.", text)
    lines, line = [], ""
    for token in tokens:
        if line and _columns(line + token.rstrip()) > (width if lines or first is None else first):
            lines.append(line.rstrip())
            line = ""
        if not line and token.isspace():
            continue
        line += token
    if line.strip():
        lines.append(line.rstrip())
    return lines


def hint_lines(found, more: str = "") -> list[str]:
    """A grader.hints.Hint as printed, in the grader's language (English: exactly Hint.lines)."""
    lang = current()
    if lang == "en":
        return found.lines(more=more)
    text = hint_text(found.puzzle_id, found.kernel, found.level, found.text, lang)
    english = found.lines(more=more)
    if text == found.text:  # no translation: the English paragraph, the rest translated
        return [tr(english[0], lang), *english[1:-1], tr(english[-1], lang)] if len(english) > 2 else english
    body = ["  " + line for line in wrap_wide(text, 98)]
    tail = [tr(english[-1], lang)] if english[-1].startswith(("more:", "that is the last")) else []
    return [tr(english[0], lang), *body, *tail]


# ------------------------------------------------------------------------------ the command


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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
