"""Pages written from raw block sweeps (scripts/sweep_page.py) are what their committed data gives."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import sweep_page  # noqa: E402

DATA = ROOT / "docs" / "results" / "data" / "h200-2026-12-03"
# The command in DATA/README.txt that wrote the page
P07_BLOCKS = [
    str(DATA / "p07-sweep.txt"),
    str(ROOT / "docs" / "results" / "p07-blocks.md"),
    "--title",
    "Puzzle 07's blocks on the H200, 2026-12-03",
    "--command",
    "bash scripts/p07/sweep_cuda_cores.sh",
    "--commit",
    "9031bb1",
    "--date",
    "2026-12-03",
]


# scripts/h200_experiments_p01_p06.sh (at 9031bb1) printed its sweeps without headings: these are its lines, in order
EXPERIMENTS = [
    "01 copy_threads large_2p27",
    "01 copy_serial large_2p27",
    "02 add large_2p27",
    "02 add_fragments large_2p27",
    "03 outer_add_fragments large_16384",
    "04 mul_relu_forward large_8192x16384",
    "04 mul_relu_backward large_8192x16384",
    "05 row_sum_tiled large_16384x8192",
    "06 softmax large_16384x8192",
    "06 softmax_online large_4096x32768",
]
P01_P06_EXPERIMENTS = [
    str(DATA / "experiments-p01-p06.txt"),
    str(ROOT / "docs" / "results" / "h200-experiments.md"),
    "--title",
    "The experiments of puzzles 01-06 on the H200, 2026-12-03",
    "--command",
    "bash scripts/h200_experiments_p01_p06.sh   # at 9031bb1",
    "--commit",
    "9031bb1",
    "--date",
    "2026-12-03",
    *(argument for heading in EXPERIMENTS for argument in ("--heading", heading)),
]


@pytest.mark.parametrize("args", [P07_BLOCKS, P01_P06_EXPERIMENTS], ids=["p07-blocks", "h200-experiments"])
def test_the_sweep_pages_are_what_their_data_gives(capsys, args):
    assert sweep_page.main([*args, "--check"]) == 0, capsys.readouterr().out
    assert f"docs/results/{Path(args[1]).name}" in (DATA / "README.txt").read_text()


def test_a_sweep_is_read_per_heading_without_its_best_repeat():
    raw = (
        "== 07 k case\n"
        '{"BLOCK": 64}    ok    1.5000 ms    11.9 TFLOP/s      4 GB/s  torch   0.0444 ms   0.03x\n'
        '{"BLOCK": 32}    ok    1.2500 ms    14.0 TFLOP/s      5 GB/s  torch   0.0440 ms   0.04x\n'
        'best: {"BLOCK": 32}    ok    1.2500 ms    14.0 TFLOP/s      5 GB/s  torch   0.0440 ms   0.04x\n'
    )
    ((heading, rows),) = sweep_page.sections(raw)
    assert heading == "07 k case" and [row["ms"] for row in rows] == ["1.5000", "1.2500"]
    text = sweep_page.page(raw, "T", "cmd", "abc1234", "2026-12-03")
    assert "| **BLOCK 32** | **ok** | **1.2500** | **14.0** | **5** |" in text and "| BLOCK 64 | ok | 1.5000 |" in text


def test_a_line_that_is_not_a_sweep_line_is_refused():
    with pytest.raises(ValueError, match="not a sweep line"):
        sweep_page.sections("== h\nTraceback (most recent call last):\n")
