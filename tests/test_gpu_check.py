"""The GPU tier's runner (scripts/gpu_check.py): CI has no GPU, so it checks here what it can without one, that
every part names files, kernels and cases that exist, and that a part's run leaves a manifest of what ran."""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path

import pytest

from grader.discover import load_module, load_puzzle, puzzle_files
from scripts import gpu_check
from tests.conftest import ROOT


@cache  # the solutions are loaded once for every part's test
def bench_cases() -> dict[tuple[str, str], set[str]]:
    found = {}
    for puzzle_id, path in puzzle_files(ROOT / "solutions").items():
        for kernel in load_puzzle(load_module(path)).kernels:
            found[(puzzle_id, kernel.function)] = {case.name for case in kernel.cases}
    return found


@pytest.mark.parametrize("name", sorted(gpu_check.PARTS))
def test_each_part_names_what_exists(name: str, tmp_path: Path):
    cases = bench_cases()
    steps = gpu_check.PARTS[name].steps(tmp_path)
    assert steps and all(step.limit_s <= gpu_check.PART_LIMIT_S for step in steps)
    assert len({step.name for step in steps}) == len(steps)  # one log each
    for step in steps:
        argv = step.argv
        for arg in argv:
            if arg.startswith(("scripts/", "tests/", "solutions/")):
                assert (ROOT / arg.split("::")[0]).exists(), (step.name, arg)
        if "scripts/sweep.py" in argv:
            puzzle, kernel, case = [a for a in argv[argv.index("scripts/sweep.py") + 1 :] if not a.startswith("--")][:3]
            assert case in cases[(puzzle, kernel)], (step.name, puzzle, kernel, case)
            for variant in argv[argv.index(case) + 1 :]:
                json.loads(variant)


def test_the_corpora_part_grades_every_corpus_file(tmp_path: Path):
    steps = gpu_check.PARTS["corpora"].steps(tmp_path)
    files = sorted(p for kind in ("right", "wrong") for p in (ROOT / "tests" / kind).glob("p*/*.py"))
    graded = sorted(ROOT / arg for step in steps for arg in step.argv if arg.startswith("tests/"))
    assert graded == files


def test_a_part_leaves_a_manifest_of_each_steps_command_exit_and_seconds(tmp_path: Path, monkeypatch, capsys):
    def steps(out: Path) -> list[gpu_check.Step]:
        return [
            gpu_check.Step("ok", [sys.executable, "-c", "print('fine')"], 30),
            gpu_check.Step("fails", [sys.executable, "-c", "import sys; sys.exit(4)"], 30),
            gpu_check.Step("hangs", [sys.executable, "-c", "import time; time.sleep(60)"], 1),
        ]

    monkeypatch.setitem(gpu_check.PARTS, "demo", gpu_check.Part("a demonstration", steps))
    monkeypatch.setenv("OUT", str(tmp_path))
    assert gpu_check.main(["demo"]) == 1
    manifest = json.loads((tmp_path / "demo" / "manifest.json").read_text())
    assert (
        manifest["part"] == "demo" and manifest["command"] == "source .gpu/env.sh && python -m scripts.gpu_check demo"
    )
    assert len(manifest["commit"]) == 40 or manifest["commit"] == "unknown"
    assert [(s["name"], s["exit"]) for s in manifest["steps"]] == [("ok", 0), ("fails", 4), ("hangs", 124)]
    assert manifest["steps"][2]["seconds"] < 10
    assert (tmp_path / "demo" / "ok.txt").read_text() == "fine\n"
    assert "demo: 1 of 3 steps exited 0" in capsys.readouterr().out


def test_an_unknown_part_is_a_usage_error(capsys):
    assert gpu_check.main(["nope"]) == 2
    assert "no such part: nope" in capsys.readouterr().err
