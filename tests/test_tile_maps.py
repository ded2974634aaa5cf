"""Where a failed case is wrong: the tile lines and map in text, the tile_map in JSON, and the report's
saved/replay lines; the memory limit's guard for CUDA."""

from __future__ import annotations

import resource

import torch

from grader.devices import Device
from grader.frontends import render as report
from grader.outcome import CaseResult, Status
from grader.pipeline.build import COMPILE_ONLY_TARGET
from grader.pipeline.compare import compare
from grader.processes.judge import limit_memory
from grader.spec import Tolerance

TOLERANCE = Tolerance(rtol=1e-3, atol=1e-3)


def test_a_2d_map_marks_wrong_and_right_tiles_row_by_row():
    want = torch.randn(127, 300, dtype=torch.float64)
    got = want.clone()
    got[64:, 256:] = float("nan")  # the bottom-right tile, partial both ways
    got[0, 0] += 1  # and one element of the top-left tile
    verdict = compare("C", got, want, TOLERANCE, (64, 64))
    assert "wrong tiles: 2 of 10 ((0, 0), (1, 4)); tile = 64x64" in verdict.details
    start = verdict.details.index("tile map (x wrong, . right; a row of marks per row of tiles):")
    assert verdict.details[start + 1 : start + 3] == ["  x....", "  ....x"]
    assert verdict.tile_map == {
        "tile": [64, 64],
        "grid": [2, 5],
        "cell": [1, 1],
        "wrong": [[1, 0, 0, 0, 0], [0, 0, 0, 0, 1]],
    }


def test_a_large_grid_is_merged_into_at_most_64_marks_per_axis():
    want = torch.randn(100_000, dtype=torch.float64)
    got = want.clone()
    got[-5:] = 0
    verdict = compare("C", got, want, TOLERANCE, (256,))
    assert verdict.tile_map["grid"] == [391] and verdict.tile_map["cell"] == [7]
    assert verdict.tile_map["wrong"] == [0] * 55 + [1]
    assert "tile map (x wrong, . right, each mark 7 tiles): " + "." * 55 + "x" in verdict.details


def test_a_3d_output_is_mapped_without_its_axes_of_one_tile():
    want = torch.randn(2, 100, 64, dtype=torch.float64)  # heads x queries x head dim, one block per head
    got = want.clone()
    got[1, 64:] = float("nan")  # head 1's second tile of queries
    verdict = compare("O", got, want, TOLERANCE, (1, 64, None))
    assert "wrong tiles: 1 of 4 ((1, 1, 0)); tile = 1x64x64" in verdict.details
    assert verdict.tile_map == {"tile": [1, 64], "grid": [2, 2], "cell": [1, 1], "wrong": [[0, 0], [0, 1]]}
    one_head = compare("O", got[1:], want[1:], TOLERANCE, (1, 64, None))
    assert one_head.tile_map["grid"] == [2] and one_head.tile_map["wrong"] == [0, 1]
    three_axes = compare("O", got, want, TOLERANCE, (1, 64, 32))  # three axes of several tiles: text only
    assert three_axes.tile_map is None and any(line.startswith("wrong tiles: 2 of 8") for line in three_axes.details)


def test_a_passing_comparison_has_no_map():
    want = torch.randn(100, dtype=torch.float64)
    assert compare("C", want.clone(), want, TOLERANCE, (64,)).tile_map is None


def test_report_prints_where_a_failure_was_saved_and_how_to_replay_it():
    result = CaseResult(
        "02", "add", "tail_1000", Status.FAILED, {"N": 1000}, "999 of 1000 output elements wrong",
        saved="/tmp/f/p02_add_tail_1000.pt", replay="python -m grader 02 --file x.py -k add --exact --case tail_1000",
        tile_map={"output": "C", "tile": [256], "grid": [4], "cell": [1], "wrong": [1, 1, 1, 1]},
    )  # fmt: skip
    lines = report.case_lines(result)
    assert lines[-2:] == [
        "        saved: /tmp/f/p02_add_tail_1000.pt",
        "        replay: python -m grader 02 --file x.py -k add --exact --case tail_1000",
    ]
    assert CaseResult.from_dict(result.to_dict()).tile_map == result.tile_map


def test_no_memory_limit_is_set_on_a_process_that_uses_cuda():
    before = resource.getrlimit(resource.RLIMIT_AS)
    limit_memory(Device("cuda", "gpu", "cuda"), 1.0)
    limit_memory(Device("cpu", "simulated", COMPILE_ONLY_TARGET), 0.0)  # 0: no limit
    assert resource.getrlimit(resource.RLIMIT_AS) == before
