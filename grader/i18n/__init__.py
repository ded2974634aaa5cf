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

Writing and checking the catalogues is grader.course.translations:
``python -m grader i18n update [--lang zh_CN]`` refreshes the puzzle catalogues from the sources;
``python -m grader i18n check`` prints each entry that is missing, fuzzy, or whose inline code, math,
links or numbers differ from the English, and exits 1 if a puzzle named in ``i18n/LANG/complete.txt``
has one (tests/test_i18n.py runs the same checks).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from grader import settings
from grader.discover import course_root

ENV = settings.LANG
LANGS = ("zh_CN",)  # the translations there are; English is the source

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


# ------------------------------------------------------------------------------ a puzzle's catalogue


def puzzle_catalogue_path(puzzle_id: str, lang: str, root: Path | None = None) -> Path:
    return folder(lang, root) / f"p{puzzle_id}.po"


# ------------------------------------------------------------------------------ notebooks


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
            # a value written as code (`{name}` in the English: a buffer's, a variable's name) stays as it is
            code = {name for name in pattern.names if f"`{{{name}}}`" in pattern.english}
            values = {
                name: match.group(name) if name in code else tr(match.group(name), lang, _depth + 1)
                for name in pattern.names
            }
            return indent + PLACEHOLDER.sub(lambda m, v=values: v.get(m.group(1), m.group(0)), pattern.translation)
    return text


def hint_text(puzzle_id: str, kernel: str, level: int, english: str, lang: str | None = None) -> str:
    """A hint tier's text in the language (its catalogue entry, unless missing or fuzzy)."""
    lang = lang or current()
    if lang == "en":
        return english
    entry = catalogue(puzzle_catalogue_path(puzzle_id, lang, course_root())).get((f"hint:{kernel}:{level}", english))
    return entry.msgstr if entry is not None and entry.done else english


def text_columns(text: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrap_wide(text: str, width: int, first: int | None = None) -> list[str]:
    """``text`` in lines of at most ``width`` terminal columns (a CJK character takes two; the first line
    ``first`` columns if given). Lines break at spaces or between CJK characters, never inside a run of
    Latin letters, digits or code."""
    tokens = re.findall(r" +|[\x21-\x7e]+|.", text)
    lines, line = [], ""
    for token in tokens:
        if line and text_columns(line + token.rstrip()) > (width if lines or first is None else first):
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
