"""Puzzle 09's tuning page (scripts/p09/tuning_page.py) is what its committed raw outputs give."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts" / "p09"))
import tuning_page  # noqa: E402

DATA = ROOT / "docs" / "results" / "data" / "h100-2026-12-06-eleventh"
PAGE = ROOT / "docs" / "results" / "p09-channels-last-tuning.md"
ARGS = ["--commit", "24428d2", "--date", "2026-12-06"]  # as DATA/README.txt says the page was written


def test_the_page_is_what_its_data_gives(capsys):
    assert tuning_page.main([str(DATA), str(PAGE), *ARGS, "--check"]) == 0, capsys.readouterr().out
    readme = (DATA / "README.txt").read_text()
    assert "scripts/p09/tuning_page.py" in readme and "24428d2" in readme


def test_the_page_reads_the_rounds_and_every_graded_run():
    text = tuning_page.page(DATA, "24428d2", "2026-12-06")
    assert "| course build (bench block) | 0.2287 | 0.2260 | 0.2346 | 0.62, 0.62, 0.60 |" in text
    assert "| staged, ws 128x256/256 swizzled out | 0.1555 | 0.1550 | 0.1563 | 0.91, 0.95, 0.88 |" in text
    assert "from 0.82-0.87x to\n0.88-0.95x cuDNN" in text and "1.25-1.28x as fast" in text
    assert "| call 6, 2 | `solutions/p09_conv1d.py` | 7 | 0.1569 | 10.0% | 547.4 | 0.1392 | 0.89x |" in text
    assert "| worst shared-memory bank conflict | none |" in text and "| Tensor Core pipe busy | 68% |" in text
    assert "| `tests/wrong/p09/channels_last_taps_warp_specialized.py` | 3 | 4 |" in text
    assert "| `tests/right/p09/conv1d_channels_last_serial_taps.py` | 0 | 7 |" in text
    assert "NVIDIA H100 80GB HBM3" in text.splitlines()[0]


def test_a_figure_changed_in_the_data_fails_the_check(tmp_path: Path, capsys):
    copy = tmp_path / "data" / DATA.name  # beside the page, as under docs/results/
    shutil.copytree(DATA, copy)
    assert tuning_page.main([str(copy), str(PAGE), *ARGS, "--check"]) == 0  # the copy alone changes nothing
    grade = copy / tuning_page.SOLUTION_BENCH
    grade.write_text(grade.read_text().replace("0.1569   10.0%", "0.1599   10.0%"))
    assert tuning_page.main([str(copy), str(PAGE), *ARGS, "--check"]) == 1
    assert "is not what" in capsys.readouterr().out


def test_a_graded_run_without_its_count_is_refused(tmp_path: Path):
    copy = tmp_path / "data" / DATA.name
    shutil.copytree(DATA, copy)
    grade = copy / tuning_page.GRADE
    grade.write_text(grade.read_text().replace("7 passed in 4.88s", ""))
    with pytest.raises(ValueError, match="passed"):
        tuning_page.page(copy, "24428d2", "2026-12-06")
