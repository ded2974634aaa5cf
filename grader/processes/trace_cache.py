"""The judge's cache of traces, for warm checks (grader.frontends.warm) only: an unchanged kernel is not traced again.

A tracer's reply depends on the learner's file, the kernel, the case's arguments, TileLang and the grader's
tracing code; the key is a digest of all of them, read by the judge (the file's bytes, never imported).
A hit skips the tracer: no learner code runs for that case, and the reply still goes through ``admit``
like a fresh one. Cold runs (the CLI, nbgrader's judge) never read or write it, so a grade never rests
on it; a learner who edits it only changes their own interactive feedback.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

MAX_ENTRIES = 2000  # then the oldest half goes
KEPT = ("traced", "not_implemented")  # a failure is traced again: it may not happen twice (memory, time)


def folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tilelang-course" / "traces"


@functools.cache  # one judge process reads the tracing code once, not once per case
def _code_digest() -> str:
    """The tracing code's own text: a grader change makes every old entry miss."""
    here = Path(__file__).resolve().parents[1]  # the grader package
    parts = [here / "pipeline" / "build.py", here / "pipeline" / "trace.py", *sorted((here / "trace").glob("*.py"))]
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.read_bytes())
    return digest.hexdigest()


def key(source: Path, function: str, known: tuple[str, ...], arguments: dict[str, Any]) -> str:
    import tilelang

    digest = hashlib.sha256()
    for piece in (source.read_bytes(), function.encode(), json.dumps([known, arguments], sort_keys=True).encode()):
        digest.update(hashlib.sha256(piece).digest())
    digest.update(tilelang.__version__.encode())
    digest.update(_code_digest().encode())
    return digest.hexdigest()


def load(name: str) -> dict[str, Any] | None:
    try:
        reply = json.loads((folder() / f"{name}.json").read_text())
    except (OSError, ValueError):
        return None
    return reply if isinstance(reply, dict) and reply.get("status") in KEPT else None


def store(name: str, reply: dict[str, Any]) -> None:
    if reply.get("status") not in KEPT:
        return
    where = folder()
    try:
        where.mkdir(parents=True, exist_ok=True)
        entries = sorted(where.glob("*.json"), key=lambda p: p.stat().st_mtime)
        for old in entries[: len(entries) // 2] if len(entries) >= MAX_ENTRIES else []:
            old.unlink(missing_ok=True)
        temporary = where / f".{name}.{os.getpid()}"
        temporary.write_text(json.dumps({k: v for k, v in reply.items() if k != "id"}))
        temporary.replace(where / f"{name}.json")
    except OSError:  # a full or read-only disk costs only the speed-up
        pass
