"""The shape of a kernel, for finding look-alike submissions: a sketch of its admitted TIR that renaming and
small edits barely move.

The admitted TIR, printed as TVMScript, is cut into tokens; every name the learner chose becomes a token for
what it names (a tensor of the signature, a buffer in shared memory, a fragment, a local, a loop variable, or
anything else), and each line starts with a token for its depth. By kind, not ``n0``, ``n1``, ... by first
appearance: a single unused local declared first renumbered every later name and took a copy from 1.0 to 0.68
(a red team's finding).
The sketch is a bottom-k MinHash of the set of 5-token shingles: the K smallest 63-bit hashes.
Two sketches estimate the Jaccard similarity of their shingle sets (exactly, where both sets are smaller
than K). Renaming changes nothing; swapping two independent statements or adding a loop that does nothing
changes only the shingles that cross them.
"""

from __future__ import annotations

import hashlib
import keyword
import re
from typing import Any

from grader.outcome import Structure

K = 128  # hashes kept per sketch
SHINGLE = 5  # tokens per shingle
HASH_BITS = 63

TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\S')
# Names the printer writes whatever the learner named things: Python's words and TVMScript's own
FIXED = frozenset(keyword.kwlist) | {"T", "tirx", "tvm", "script", "float", "int", "bool", "range"}
# Lines every kernel of a puzzle prints alike (the signature, the thread indices, the root block): left out,
# so that what two kernels share is what their authors wrote, not the frame TileLang puts around it
FRAME = re.compile(
    r"^(#|@T\.prim_func|def |\w+ = T\.match_buffer\(|\w+: T\.int32 = T\.launch_thread_idx\(|T\.reads\(|T\.writes\("
    r'|with T\.sblock\("tilelang_root"\):)'
)


# A loop of one step is its body, and a loop of none is nothing: a copy wrapped in either still reads as the copy
TRIVIAL_LOOP = re.compile(r"^for \w+ in (?:range|T\.serial)\(([01])\):$")


def tokens(text: str) -> list[str]:
    """The text's tokens, each of the learner's names as its kind (``kinds``), a depth token opening each line.
    Comment lines and the frame every kernel shares (FRAME) are left out, and so are statements that do
    nothing: ``pass``, a loop or branch with nothing in it, a loop of one step or none (TRIVIAL_LOOP; the
    first's body counts one level up, the second's not at all)."""
    out: list[str] = []
    named = kinds(text)
    open_loops: list[tuple[int, bool]] = []  # (indent, whether its body is left out) of trivial loops around
    for line in _without_empty_statements(text.splitlines()):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        while open_loops and open_loops[-1][0] >= indent:
            open_loops.pop()
        if not stripped or FRAME.match(stripped) or any(skipped for _, skipped in open_loops):
            continue
        trivial = TRIVIAL_LOOP.match(stripped)
        if trivial:
            open_loops.append((indent, trivial.group(1) == "0"))
            continue
        out.append(f"@{indent // 4 - len(open_loops)}")
        found = TOKEN.findall(stripped)
        for i, token in enumerate(found):
            out.append(_canonical(token, found, i, named))
    return out


def _without_empty_statements(lines: list[str]) -> list[str]:
    """The lines without ``pass`` (printed ``T.evaluate(0)``) and without the loops and branches left with no body."""
    kept = [line for line in lines if line.strip() != "T.evaluate(0)"]
    while True:
        opens_nothing = [
            i
            for i, line in enumerate(kept)
            if line.rstrip().endswith(":") and (i + 1 == len(kept) or _indent(kept[i + 1]) <= _indent(line))
        ]
        if not opens_nothing:
            return kept
        kept = [line for i, line in enumerate(kept) if i not in set(opens_nothing)]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


DECLARED = re.compile(r"^(\w+) = T\.(\w+)\((.*)$")
SCOPE = re.compile(r'scope="([a-z.]+)"')
LOOP = re.compile(r"^for (\w+) in ")


def kinds(text: str) -> dict[str, str]:
    """Each name the text declares -> the token it is written as: ``global`` for a tensor of the signature,
    ``shared``, ``fragment`` or ``local`` for a buffer the kernel allocates there, ``loop`` for a loop variable.
    A name declared nowhere (a let, a block's variable) is ``n``."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        stripped = line.strip()
        loop = LOOP.match(stripped)
        if loop:
            found.setdefault(loop.group(1), "loop")
            continue
        declared = DECLARED.match(stripped)
        if declared is None:
            continue
        name, call, rest = declared.groups()
        if call == "match_buffer":
            found.setdefault(name, "global")
        elif "alloc" in call or call == "decl_buffer":
            scope = SCOPE.search(rest)
            place = scope.group(1) if scope else "global"
            found.setdefault(name, "fragment" if "fragment" in place else place.split(".")[0])
    return found


def _canonical(token: str, found: list[str], i: int, named: dict[str, str]) -> str:
    """A token as the sketch sees it: a learner's name as its kind, anything else as printed."""
    if not (token[0].isalpha() or token[0] == "_") or token in FIXED:
        return token
    after_dot = i > 0 and found[i - 1] == "."  # T.copy, T.float16: the language's own
    keyword_argument = (
        (i + 1 < len(found) and found[i + 1] == "=" and (i + 2 >= len(found) or found[i + 2] != "="))
        and i > 0
        and found[i - 1] in "(,"
    )  # thread=, scope=: the call's own parameter names
    if after_dot or keyword_argument:
        return token
    return named.get(token, "n")


def _hash(shingle: tuple[str, ...]) -> int:
    digest = hashlib.blake2b("\x1f".join(shingle).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> (64 - HASH_BITS)


def sketch(text: str, case: str = "") -> Structure:
    """The bottom-K MinHash sketch of ``text``'s token shingles (sorted ints below 2**63)."""
    found = tokens(text)
    shingles = {tuple(found[i : i + SHINGLE]) for i in range(max(1, len(found) - SHINGLE + 1))} if found else set()
    hashes = sorted({_hash(s) for s in shingles})
    return Structure(hashes[:K], len(found), case)


def similarity(a: Structure, b: Structure) -> float:
    """The estimated Jaccard similarity of two sketches' shingle sets, 0 to 1: of the K smallest hashes of
    both together, the share that is in both. 0 where either is empty."""
    if not a.sketch or not b.sketch:
        return 0.0
    first, second = set(a.sketch), set(b.sketch)
    union = sorted(first | second)[:K]
    return sum(1 for h in union if h in first and h in second) / len(union)


def of_tir(tir: Any, case: str) -> Structure:
    """The sketch of an admitted TIR, printed as TVMScript."""
    return sketch(tir.script(), case)
