"""Puzzle 07's experiment 4 page (scripts/p07/padded_page.py) is what its committed raw outputs give."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts" / "p07"))
import padded_page  # noqa: E402

DATA = ROOT / "docs" / "results" / "data" / "h100-2026-12-06-tenth"
PAGE = ROOT / "docs" / "results" / "p07-k-tile-padded.md"
ARGS = ["--commit", "ef14e27", "--date", "2026-12-06"]  # as DATA/README.txt says the page was written


def test_the_page_is_what_its_data_gives(capsys):
    assert padded_page.main([str(DATA), str(PAGE), *ARGS, "--check"]) == 0, capsys.readouterr().out
    readme = (DATA / "README.txt").read_text()
    assert "scripts/p07/padded_page.py" in readme and "ef14e27" in readme


def test_the_page_reads_each_turn_and_the_profile_rows():
    text = padded_page.page(DATA, "ef14e27", "2026-12-06")
    assert "| 1 | `flash_attention` (the course's) | 1.3990 | 3.7% | 12.3 | 18% fma |" in text
    assert "| 2 | `K_tile` padded to D + 2 | 0.6452 | 3.6% | 26.6 | 40% fma |" in text
    assert "2.16-2.17x as fast" in text  # 1.3990 / 0.6443 and 1.3922 / 0.6452
    assert "| worst shared-memory bank conflict | 2-way, Q_tile read | 16-way, K_tile read |" in text
    assert "| FMA pipe busy | 56% | 26% |" in text
    assert "NVIDIA H100 80GB HBM3" in text.splitlines()[0]


def test_a_figure_changed_in_the_data_fails_the_check(tmp_path: Path, capsys):
    copy = tmp_path / "data" / DATA.name  # beside the page, as under docs/results/
    shutil.copytree(DATA, copy)
    assert padded_page.main([str(copy), str(PAGE), *ARGS, "--check"]) == 0  # the copy alone changes nothing
    bench = copy / padded_page.BENCH
    bench.write_text(bench.read_text().replace("0.6443", "0.6999"))
    assert padded_page.main([str(copy), str(PAGE), *ARGS, "--check"]) == 1
    assert "is not what" in capsys.readouterr().out


def test_a_profile_without_the_rows_the_page_shows_is_refused(tmp_path: Path):
    copy = tmp_path / "data" / DATA.name  # beside the page, as under docs/results/
    shutil.copytree(DATA, copy)
    profile = copy / padded_page.PROFILE
    profile.write_text(profile.read_text().replace("FMA pipe busy", "FMA pipe"))
    with pytest.raises(ValueError, match="FMA pipe busy"):
        padded_page.page(copy, "ef14e27", "2026-12-06")
