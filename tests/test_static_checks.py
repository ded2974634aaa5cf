"""The never-cleared accumulator check: silent on every reference, loud on the no-clear kernels
(which can pass on a GPU whose leftover registers are zero)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from grader.discover import course_root, load_module, load_puzzle, puzzle_files, wrong_kernels
from grader.static_checks import never_initialized

ROOT = Path(__file__).resolve().parent.parent


def _tir(module, kernel):
    case = kernel.cases[0]
    return getattr(module, kernel.function).get_tir(**case.sizes, **case.params)


@pytest.mark.parametrize("puzzle_id", sorted(puzzle_files(ROOT / "solutions")))
def test_references_clear_what_they_accumulate(puzzle_id):
    module = load_module(puzzle_files(ROOT / "solutions")[puzzle_id])
    for kernel in load_puzzle(module).kernels:
        assert never_initialized(_tir(module, kernel)) == [], kernel.function


NO_CLEAR = [w for w in wrong_kernels(course_root()) if w.path.stem.endswith("no_clear")]


def test_there_are_no_clear_kernels_to_check():
    assert len(NO_CLEAR) >= 3


@pytest.mark.parametrize("wrong", NO_CLEAR, ids=lambda w: w.path.stem)
def test_no_clear_kernels_are_named(wrong):
    spec = load_puzzle(load_module(puzzle_files(ROOT / "solutions")[wrong.puzzle_id])).kernel(wrong.kernel)
    problems = never_initialized(_tir(load_module(wrong.path), spec))
    assert len(problems) == 1
    assert "before anything cleared it" in problems[0] and "T.clear(acc)" in problems[0]


def test_the_grader_says_what_to_fix():
    path = ROOT / "tests" / "wrong" / "p08" / "gemv_no_clear.py"
    run = subprocess.run(
        [sys.executable, "-m", "grader", "08", "--file", str(path), "-k", "gemv", "--case", "square_256"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "hint: the likely cause: T.reduce adds into `acc` before anything cleared it" in run.stdout
