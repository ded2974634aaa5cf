"""A picture per graded kernel (grader/course/access_pictures.py): every kernel has one, right above its kernel cell
in both languages (a data URL of the stored SVG); a picture shows what the reference really reads and writes;
drawing is byte-stable."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import nbformat
import pytest
import torch

from grader.course import access_pictures as pictures
from grader.course.notebooks import PICTURE_CAPTION, picture_name, pictures_folder, puzzle_notebook
from grader.discover import graded_kernels, load_module, load_puzzle, puzzle_files
from grader.i18n import tr
from grader.pipeline.trace import kernel_function, trace_tir
from tests.conftest import ROOT

STUBS = puzzle_files(ROOT / "puzzles")
SOLUTIONS = puzzle_files(ROOT / "solutions")
KERNELS = [(i, k) for i in sorted(SOLUTIONS) for k in graded_kernels(SOLUTIONS[i].read_text())]


def recorded(puzzle_id: str, function: str):
    """(kernel, case, what block 0 and the last block touched) of a reference kernel on its picture's case."""
    kernel = load_puzzle(load_module(SOLUTIONS[puzzle_id])).kernel(function)
    case = pictures.smallest_case(kernel)
    tir = trace_tir(kernel_function(load_module(SOLUTIONS[puzzle_id]), kernel), kernel, case, SOLUTIONS[puzzle_id])
    return kernel, case, pictures.record(tir, kernel, case)


def _cells(cells) -> list[tuple[str, str, nbformat.NotebookNode]]:
    """(role, kernel, cell) of each cell."""
    return [(c.metadata["tilelang_course"]["role"], c.metadata["tilelang_course"].get("kernel", ""), c) for c in cells]


def test_every_graded_kernel_has_its_picture_and_no_picture_lacks_a_kernel():
    assert len(KERNELS) >= 30  # the ten puzzles' kernels, as puzzle() lists them
    expected = {picture_name(i, k) for i, k in KERNELS}
    stored = {p.name for p in pictures_folder().glob("*.svg")}
    assert stored == expected
    assert [s.name for s in pictures.subjects()] == [picture_name(i, k) for i, k in KERNELS]


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
@pytest.mark.parametrize("puzzle_id", sorted(STUBS))
def test_each_kernel_cell_has_its_picture_right_above_it(puzzle_id: str, lang: str):
    folder = ROOT / "notebooks" / ("" if lang == "en" else lang)
    notebook = nbformat.read(folder / f"{STUBS[puzzle_id].stem}.ipynb", as_version=4)
    cells = _cells(notebook.cells)
    kernels = [(index, kernel) for index, (role, kernel, _) in enumerate(cells) if role == "kernel"]
    assert [k for _, k in kernels] == graded_kernels(STUBS[puzzle_id].read_text())
    for index, kernel in kernels:
        role, above, cell = cells[index - 1]
        assert (role, above, cell.cell_type) == ("picture", kernel, "markdown")
        name = picture_name(puzzle_id, kernel)
        url = "data:image/svg+xml;base64," + base64.b64encode((pictures_folder() / name).read_bytes()).decode()
        caption = PICTURE_CAPTION if lang == "en" else tr(PICTURE_CAPTION, lang)
        assert cell.source == f"{caption}\n\n![p{puzzle_id} {kernel}]({url})"  # the stored SVG, byte for byte
        assert "attachments" not in cell  # JupyterLab draws no SVG attachment
    if lang != "en":  # the caption is translated, not left in English
        assert tr(PICTURE_CAPTION, lang) != PICTURE_CAPTION


def test_the_solved_notebook_has_the_same_pictures():
    solved = _cells(puzzle_notebook(SOLUTIONS["08"], "08").cells)
    stub = _cells(puzzle_notebook(STUBS["08"], "08").cells)
    assert [(r, k, c.source) for r, k, c in solved if r == "picture"] == [
        (r, k, c.source) for r, k, c in stub if r == "picture"
    ]
    assert len([r for r, *_ in solved if r == "picture"]) == len(graded_kernels(SOLUTIONS["08"].read_text()))


def test_a_module_with_no_pictures_gets_no_picture_cells(tmp_path: Path):
    source = tmp_path / "p01_copy.py"
    shutil.copy(STUBS["01"], source)
    roles = [c.metadata["tilelang_course"]["role"] for c in puzzle_notebook(source, "01", pictures=tmp_path).cells]
    assert "picture" not in roles and "kernel" in roles


def test_copy_block_0_reads_exactly_the_elements_it_writes_and_the_last_block_others():
    kernel, case, (first, last) = recorded("01", "copy_threads")
    n, block = case.sizes["N"], case.params["BLOCK"]
    assert first.block == (0,) and last.block == (-(-n // block) - 1,)
    want = torch.zeros(n, dtype=torch.bool)
    want[:block] = True
    assert torch.equal(first.reads["A"], want) and torch.equal(first.writes["B"], want)
    assert not first.writes["A"].any() and not first.reads["B"].any()
    tail = torch.zeros(n, dtype=torch.bool)
    tail[last.block[0] * block :] = True
    assert torch.equal(last.reads["A"], tail) and torch.equal(last.writes["B"], tail)


def test_gemv_block_0_reads_a_row_band_of_a_and_all_of_x_and_writes_its_outputs():
    kernel, case, (first, last) = recorded("08", "gemv")
    m, k, rows = case.sizes["M"], case.sizes["K"], case.params["BLOCK_M"]
    band = torch.zeros(m, k, dtype=torch.bool)
    band[:rows] = True
    assert torch.equal(first.reads["A"], band)
    assert bool(first.reads["B"].all())  # x, every element
    assert torch.equal(first.writes["C"], torch.arange(m) < rows)
    start = last.block[0] * rows
    assert bool(last.reads["A"][start:].all()) and not last.reads["A"][:start].any()
    assert bool(last.reads["B"].all()) and torch.equal(last.writes["C"], torch.arange(m) >= start)


def test_a_view_of_an_argument_is_drawn_on_the_argument():
    # conv1d_implicit reads W through a T.reshape: block (0, 0) still reads W's first BLOCK_O output channels
    kernel, case, (first, _) = recorded("09", "conv1d_implicit")
    weights = first.reads["W"]
    assert bool(weights[: case.params["BLOCK_O"]].all()) and not weights[case.params["BLOCK_O"] :].any()


@pytest.mark.parametrize(("puzzle_id", "function"), [("01", "copy_threads"), ("08", "gemv")])
def test_drawing_again_gives_the_stored_bytes_twice(puzzle_id: str, function: str):
    subject = next(s for s in pictures.subjects([puzzle_id]) if s.kernel.function == function)
    first, second = pictures.draw(subject), pictures.draw(subject)
    assert first == second == (pictures_folder() / subject.name).read_text()
    assert "<svg" in first and first.count("<!-- drawn from sha256:") == 1


def test_the_fast_check_compares_the_recorded_hash_of_the_inputs(tmp_path: Path, capsys):
    shutil.copytree(pictures_folder(), tmp_path, dirs_exist_ok=True)
    assert pictures.main(["--check", "--fast", "--out", str(tmp_path)]) == 0
    stale = tmp_path / picture_name("08", "gemv")
    stale.write_text(pictures.HASH.sub("<!-- drawn from sha256:" + "0" * 64 + " -->", stale.read_text()))
    (tmp_path / "p99_gone.svg").write_text("<svg/>")
    assert pictures.main(["--check", "--fast", "--out", str(tmp_path)]) == 1
    said = capsys.readouterr().out
    assert f"{stale}: stale" in said and "p99_gone.svg: no graded kernel has this picture" in said


def test_a_picture_draws_1d_tensors_as_strips_splits_higher_ranks_near_square_and_pools_large_ones():
    assert pictures.as_rows(torch.ones(70, dtype=torch.bool)).shape == (1, 70)
    assert pictures.pool_of([1000]) == (1, 16) and pictures.pool_of([64]) == (1, 1)
    assert pictures.as_rows(torch.ones(72, 40, 5, dtype=torch.bool)).shape == (72, 200)
    assert pictures.as_rows(torch.ones(1, 100, 64, dtype=torch.bool)).shape == (100, 64)
    assert pictures.pool_of([127, 129]) == (3, 3) and pictures.pool_of([40, 32]) == (1, 1)
    grid = torch.zeros(4, 4, dtype=torch.bool)
    grid[3, 0] = True
    assert pictures.pooled(grid, (2, 2)).tolist() == [[False, False], [True, False]]
    assert pictures.runs([True, True, False, True]) == [(0, 2), (3, 1)]
