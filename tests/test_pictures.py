"""The notebook pictures draw what they claim: one rectangle per tile, one bar per K step, etc."""

from __future__ import annotations

import math

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from grader.teaching import pictures  # noqa: E402


def _patches(fig, gid):
    return [p for ax in fig.axes for p in ax.patches if p.get_gid() == gid]


@pytest.mark.parametrize(
    "M, N, bm, bn",
    [(1000, 1000, 256, 256), (33, 127, 16, 64), (64, 64, 16, 64), (1, 1000, 1, 256), (1, 4096, 1, 1024)],
)
def test_tiling_draws_one_rectangle_per_block_and_marks_the_edge(M, N, bm, bn):
    fig = pictures.tiling(M, N, bm, bn)
    assert len(fig.axes) == 1
    tiles = _patches(fig, "tile")
    assert len(tiles) == math.ceil(M / bm) * math.ceil(N / bn)
    # Tiles cover the grid exactly: their areas add up to the rounded-up extent.
    assert sum(t.get_width() * t.get_height() for t in tiles) == math.ceil(M / bm) * bm * math.ceil(N / bn) * bn
    edge = _patches(fig, "past_edge")
    assert (len(edge) > 0) == (M % bm != 0 or N % bn != 0)
    past = sum(p.get_width() * p.get_height() for p in edge)
    assert past == math.ceil(M / bm) * bm * math.ceil(N / bn) * bn - M * N


def test_tiling_refuses_a_grid_too_large_to_read():
    with pytest.raises(ValueError):
        pictures.tiling(4096, 4096, 16, 16)


def test_pipeline_has_a_copy_and_a_gemm_bar_per_step_and_overlap_helps():
    fig = pictures.pipeline(3, 8)
    assert len(fig.axes) == 2
    for ax in fig.axes:
        assert sum(p.get_gid() == "copy" for p in ax.patches) == 8
        assert sum(p.get_gid() == "compute" for p in ax.patches) == 8
    serial, piped = (max(p.get_x() + p.get_width() for p in ax.patches) for ax in fig.axes)
    assert serial == pytest.approx(8 * (1.0 + 0.8))
    assert piped < serial
    # With copies slower than the math, the pipelined total is the copies plus one K step of math.
    assert piped == pytest.approx(8 * 1.0 + 0.8)


def test_pipeline_schedule_never_overwrites_a_buffer_still_being_read():
    for stages in (1, 2, 3, 4):
        copies, computes = pictures._schedule(stages, 10, 1.0, 1.5)
        for k in range(stages, 10):
            assert copies[k][0] >= computes[k - stages][1]
        for k in range(10):
            assert computes[k][0] >= copies[k][1]


def test_mismatch_map_colours_exactly_the_wrong_tiles():
    tile_map = {"output": "C", "tile": [64, 64], "wrong": [[0, 0, 1], [0, 0, 1], [1, 1, 1]]}
    fig = pictures.mismatch_map(tile_map)
    (ax,) = fig.axes
    (image,) = ax.images
    assert image.get_array().shape == (3, 3)
    assert int(image.get_array().sum()) == 5
    assert "5 of 9 tiles wrong" in ax.get_title()
    assert "64 x 64" in ax.get_title()


def test_mismatch_map_takes_a_one_dimensional_output():
    fig = pictures.mismatch_map({"output": "C", "tile": [64], "wrong": [0, 1]})
    (image,) = fig.axes[0].images
    assert image.get_array().shape == (1, 2)
    assert "1 of 2 tiles wrong (tile = 64)" in fig.axes[0].get_title()


def test_row_reduction_draws_each_column_tile():
    fig = pictures.row_reduction(8, 64, 5)
    assert len(_patches(fig, "tile")) == 5


def test_online_softmax_running_sum_ends_at_the_exact_sum():
    import numpy as np

    row = np.array([0.0, 1.0, -2.0, 3.0, 0.5, 5.0, 1.0, 2.0, -1.0])
    fig = pictures.online_softmax(row, block=4)
    assert len(fig.axes) == 2
    running = fig.axes[1].lines[0].get_ydata()
    assert len(running) == 3  # ceil(9 / 4) tiles
    assert running[-1] == pytest.approx(np.exp(row - row.max()).sum())


def test_im2col_matrix_has_c_times_k_rows_and_padding_at_the_ends():
    fig = pictures.im2col(2, 3, 8)
    right = fig.axes[1]
    (image,) = [im for im in right.images if im.get_gid() == "cols"]
    cols = image.get_array()
    assert cols.shape == (2 * 3, 8)
    # tap k = 0 of each channel reads t - 1: padding at t = 0; tap k = 2 reads t + 1: padding at t = 7
    assert cols[0, 0] == -1 and cols[2, 7] == -1 and cols[1, 0] == 0 and cols[4, 3] == 1


def test_nibbles_draws_eight_bits_per_byte_and_the_right_weights():
    fig = pictures.nibbles([0x3A, 0xF0], scale=0.5)
    bits = _patches(fig, "bit")
    assert len(bits) == 16
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "col 0: q=10" in texts and "col 1: q=3" in texts  # 0x3A: low nibble 0xA, high 0x3
    assert "w = +1" in texts and "w = -2.5" in texts


def test_accumulation_plots_one_line_per_accumulator():
    fig = pictures.accumulation({"fp16": [1e-4, 1e-3], "fp32": [1e-7, 2e-7]}, [64, 1024])
    assert len([line for line in fig.axes[0].lines if line.get_label() in ("fp16", "fp32")]) == 2


def test_pictures_render_to_png_for_the_notebook():
    png = pictures.tiling(64, 64, 16, 16)._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("grid_m, grid_n, panel", [(16, 16, 4), (10, 7, 3), (5, 12, 10)])
def test_launch_order_is_a_permutation_and_panels_stay_in_panel_rows(grid_m, grid_n, panel):
    for p in (None, panel):
        order = pictures.launch_order(grid_m, grid_n, p)
        assert sorted(v for row in order for v in row) == list(range(grid_m * grid_n))
    order = pictures.launch_order(grid_m, grid_n, panel)
    where = {order[by][bx]: (by, bx) for by in range(grid_m) for bx in range(grid_n)}
    first_panel_rows = min(panel, grid_m)
    assert {where[i][0] for i in range(first_panel_rows * grid_n)} == set(range(first_panel_rows))
    assert {where[i][1] for i in range(first_panel_rows)} == {0}  # down the first column first


def test_rasterization_touches_fewer_rows_and_columns_in_panels():
    fig = pictures.rasterization(32, 16, 10, 132)
    assert len(fig.axes) == 2
    plain, panels = (ax.get_title() for ax in fig.axes)
    assert "9 A row-blocks, 16 B column-blocks" in plain
    assert "10 A row-blocks, 14 B column-blocks" in panels


@pytest.mark.parametrize(
    "tiles, sms, k_steps", [(512, 132, 64), (2048, 132, 128), (16, 132, 8), (20, 7, 4), (14, 7, 1)]
)
def test_wave_schedule_covers_every_k_step_of_every_tile_once(tiles, sms, k_steps):
    for stream_k in (False, True):
        plan = pictures.wave_schedule(tiles, sms, k_steps, stream_k)
        covered = {}
        for pieces in plan:
            for tile, first, steps in pieces:
                for step in range(first, first + steps):
                    assert (tile, step) not in covered
                    covered[tile, step] = True
        assert len(covered) == tiles * k_steps
        loads = [sum(steps for _, _, steps in pieces) for pieces in plan]
        if stream_k:  # every SM within one K step of the others
            assert max(loads) - min(loads) <= 1
        else:
            assert max(loads) == math.ceil(tiles / sms) * k_steps


def test_waves_titles_give_the_model_run_lengths_at_4096():
    fig = pictures.waves(512, 132, 64)
    one, stream = (ax.get_title(loc="left") for ax in fig.axes)
    assert "256 K steps" in one and "97%" in one
    assert "249 K steps" in stream


def test_mismatch_map_reads_the_graders_shrunk_map():
    # What grader.pipeline.compare writes for a 64 x 64 grid shown as 16 x 16 cells of 4 x 4 tiles.
    wrong = [[0] * 16 for _ in range(16)]
    wrong[15] = [1] * 16
    tile_map = {"tile": [16, 16], "grid": [64, 64], "cell": [4, 4], "wrong": wrong}
    fig = pictures.mismatch_map(tile_map)
    title = fig.axes[0].get_title()
    assert "16 of 256 map cells" in title and "64 x 64 tiles of 16 x 16" in title and "4 x 4 tiles" in title


def test_mismatch_map_draws_what_the_grader_reports():
    import torch

    from grader.pipeline.compare import _wrong_tiles

    bad = torch.zeros(1000, dtype=torch.bool)
    bad[768:] = True  # the last, partial block of 256 was never launched
    summary = _wrong_tiles(bad, (256,))
    fig = pictures.mismatch_map(summary.tile_map)
    (image,) = fig.axes[0].images
    assert image.get_array().tolist() == [[0, 0, 0, 1]]
    assert "1 of 4 tiles wrong (tile = 256)" in fig.axes[0].get_title()
