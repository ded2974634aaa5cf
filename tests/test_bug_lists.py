"""Cases designed against the bugs the course warns about (issue 40 item 4).

tests/bugs/pNN.json lists, for every graded kernel of puzzle NN, the bugs its prose and hints warn about: each
one a ``warning`` quoted from the puzzle's file (its docstring, markdown and comments, ``puzzles/pNN_*.py``) or
its hints (``puzzles/hints/pNN_*.json``), and ``wrong``, the file under ``tests/wrong/pNN/`` that commits that
bug. The list is read here:

- every graded kernel has a list, and every warning is still in the course's text (the list follows the prose);
- every bug has its known-wrong kernel, about that kernel, that the simulated cases catch: it declares no
  SIMULATOR_MISSES, so tests/test_wrong_on_cpu.py fails it unless a case a CPU simulates (or every build)
  rejects it; a bug only a GPU case could catch cannot be listed until a small case shows it.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from grader.discover import load_module, load_puzzle, puzzle_files
from tests.conftest import ROOT
from tests.corpora import wrong_kernels
from tests.test_prose_facts import prose

PUZZLE_FILES = puzzle_files(ROOT / "puzzles")
WRONG = {(w.puzzle_id, w.path.stem): w for w in wrong_kernels(ROOT)}


def bug_list(puzzle_id: str) -> dict[str, list[dict[str, str]]]:
    path = ROOT / "tests" / "bugs" / f"p{puzzle_id}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _plain(text: str) -> str:
    """Lower case, markup dropped, every run of blanks one space (a quote or prose() of a file)."""
    return " ".join(text.replace("`", "").replace("*", "").split()).lower()


@cache
def course_text(puzzle_id: str) -> str:
    """What a learner reads of puzzle NN in English: its file (comment marks dropped, as tests/test_prose_facts.py
    reads it) and its hints, as one plain text."""
    source = PUZZLE_FILES[puzzle_id]
    hints = source.parent / "hints" / f"{source.stem}.json"
    tiers = [tier for kernel in json.loads(hints.read_text()).values() for tier in kernel.values()]
    return _plain(prose(source) + " " + " ".join(tiers))


def graded_kernels(puzzle_id: str) -> list[str]:
    return [k.function for k in load_puzzle(load_module(puzzle_files(ROOT / "solutions")[puzzle_id])).kernels]


BUGS = [
    pytest.param(puzzle_id, kernel, bug, id=f"p{puzzle_id}/{kernel}/{bug['wrong']}")
    for puzzle_id in sorted(PUZZLE_FILES)
    for kernel, bugs in bug_list(puzzle_id).items()
    for bug in bugs
]


@pytest.mark.parametrize("puzzle_id", sorted(PUZZLE_FILES))
def test_every_graded_kernel_has_its_bug_list(puzzle_id: str):
    listed = bug_list(puzzle_id)
    assert sorted(listed) == sorted(graded_kernels(puzzle_id)), f"tests/bugs/p{puzzle_id}.json"
    assert all(listed.values()), {kernel: bugs for kernel, bugs in listed.items() if not bugs}


@pytest.mark.parametrize(("puzzle_id", "kernel", "bug"), BUGS)
def test_each_listed_bug_is_warned_about_and_caught_by_a_simulated_case(puzzle_id: str, kernel: str, bug: dict):
    assert set(bug) == {"warning", "wrong"}, bug
    assert _plain(bug["warning"]) in course_text(puzzle_id), (
        f"not in {PUZZLE_FILES[puzzle_id].name} or its hints any more: {bug['warning']!r}"
    )
    wrong = WRONG.get((puzzle_id, bug["wrong"]))
    assert wrong is not None, f"no tests/wrong/p{puzzle_id}/{bug['wrong']}.py"
    assert wrong.kernel == kernel, f"{wrong.path.name} is about {wrong.kernel}"
    assert not wrong.simulator_misses, f"{wrong.path.name}: only a GPU case catches it ({wrong.simulator_misses})"


def test_the_bug_lists_name_only_existing_puzzles():
    names = {p.stem for p in (ROOT / "tests" / "bugs").glob("*.json")}
    assert names <= {f"p{puzzle_id}" for puzzle_id in PUZZLE_FILES}, names
    assert all(isinstance(json.loads(p.read_text()), dict) for p in Path(ROOT / "tests" / "bugs").glob("*.json"))
