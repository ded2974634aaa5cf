"""The --explain view (grader.frontends.explain_view) renders hand-made records in text and HTML: a gemv block
whose copies read past the tensor's edge, a T.Parallel store with a mask, a gemm tile, a learner's hostile names."""

from __future__ import annotations

import base64
import html
import json
import re

import numpy as np
import pytest

from grader.frontends import explain_view
from grader.outcome import CaseResult, Explanation, Step, TileValues, Touch

M, K, BLOCK = 127, 129, 64  # gemv's odd case: A is 127x129, one block per 64 rows, K in tiles of 64


def packed(mask: np.ndarray) -> str:
    return base64.b64encode(np.packbits(mask.reshape(-1)).tobytes()).decode("ascii")


def copy_step(index: int, k: int) -> Step:
    """A[64:128, k*64:(k+1)*64] -> A_tile: rows past 126 and columns past 128 read as zero."""
    box = [BLOCK, 2 * BLOCK, k * BLOCK, (k + 1) * BLOCK]
    clipped = [BLOCK, M, k * BLOCK, min(K, (k + 1) * BLOCK)]
    inside = (clipped[1] - clipped[0]) * (clipped[3] - clipped[2])
    touches = [
        Touch("A", "global", [M, K], "read", boxes=[clipped], count=inside),
        Touch("A_tile", "shared", [BLOCK, BLOCK], "write", boxes=[[0, BLOCK, 0, BLOCK]], count=BLOCK * BLOCK),
    ]
    if inside < BLOCK * BLOCK:
        touches.insert(1, Touch("A", "global", [M, K], "zero", boxes=[box], count=BLOCK * BLOCK - inside))
    return Step(index, 42, "T.copy(A[bx * 64, k * 64], A_tile)", "copy", {"k": k}, touches)


def accumulate_step(index: int, k: int) -> Step:
    values = [[float(k + 1) * (i % 5 - 2) for i in range(BLOCK)]]
    tile = TileValues("acc", "local.fragment", [BLOCK], values, low=-2.0 * (k + 1), high=2.0 * (k + 1))
    touches = [
        Touch("A_tile", "shared", [BLOCK, BLOCK], "read", boxes=[[0, BLOCK, 0, BLOCK]], count=BLOCK * BLOCK),
        Touch("acc", "local.fragment", [BLOCK], "write", boxes=[[0, BLOCK]], count=BLOCK),
    ]
    return Step(index, 44, "acc[i] += A_tile[i, j] * x_tile[j]", "parallel", {"k": k}, touches, [tile])


def store_mask() -> np.ndarray:
    mask = np.zeros(M, dtype=bool)
    mask[BLOCK:M] = True
    return mask


def gemv_explanation() -> Explanation:
    """Block 1 of gemv on the 127x129 case: fill, three K steps (a copy, an accumulation), a masked store."""
    fill = Step(
        0,
        40,
        "T.clear(acc)",
        "fill",
        {},
        [Touch("acc", "local.fragment", [BLOCK], "write", boxes=[[0, BLOCK]], count=BLOCK)],
        [TileValues("acc", "local.fragment", [BLOCK], [[0.0] * BLOCK], low=0.0, high=0.0)],
    )
    steps = [fill]
    for k in range(3):
        steps += [copy_step(len(steps), k), accumulate_step(len(steps) + 1, k)]
    store = Step(
        len(steps),
        47,
        "y[bx * 64 + i] = acc[i]",
        "parallel",
        {},
        [
            Touch("acc", "local.fragment", [BLOCK], "read", boxes=[[0, BLOCK]], count=BLOCK),
            Touch("y", "global", [M], "write", mask=packed(store_mask()), count=int(store_mask().sum())),
        ],
    )
    steps.append(store)
    return Explanation(
        "gemv",
        "odd_127x129",
        [1, 0],
        [2, 1],
        steps,
        marked=store.index,
        why="y[64] was stored by block (1, 0) at line 47 (step 7) from acc[0]",
        target={"buffer": "y", "index": [64], "got": 1.5, "expected": 2.0},
    )


def gemm_explanation() -> Explanation:
    """One K step of a tiled matmul: the 128x128 accumulator pooled to 32x32 cells of 4x4 elements."""
    values = [[float(i - j) if (i + j) % 7 else None for j in range(32)] for i in range(32)]
    tile = TileValues("C_local", "local.fragment", [128, 128], values, cell=[4, 4], low=-31.0, high=31.0)
    touches = [
        Touch("A_shared", "shared", [128, 32], "read", boxes=[[0, 128, 0, 32]], count=128 * 32),
        Touch("B_shared", "shared", [32, 128], "read", boxes=[[0, 32, 0, 128]], count=32 * 128),
        Touch("C_local", "local.fragment", [128, 128], "write", boxes=[[0, 128, 0, 128]], count=128 * 128),
    ]
    gemm = Step(0, 61, "T.gemm(A_shared, B_shared, C_local)", "gemm", {"ko": 2}, touches, [tile])
    copy = Step(
        1,
        58,
        "T.copy(A[by * 128, ko * 32], A_shared)",
        "copy",
        {"ko": 3},
        [Touch("A", "global", [1024, 2048, 4], "read", boxes=[[128, 256, 96, 128, 0, 4]], count=128 * 32 * 4)],
    )
    return Explanation("matmul", "large", [0, 1], [8, 8], [gemm, copy])


def test_the_mask_decoder_reads_numpy_packbits():
    rng = np.random.default_rng(3)
    for shape in ([127], [5, 13], [2, 3, 7], [8]):
        mask = rng.random(shape) < 0.4
        decoded = explain_view.decode_mask(packed(mask), list(shape))
        assert decoded.shape == tuple(shape)
        assert (decoded == mask).all()


def test_text_lines_say_each_step_with_slices_masks_zeros_and_the_mark():
    lines = explain_view.text_lines(gemv_explanation(), lang="en")
    assert lines[0] == "gemv, case odd_127x129, block (1, 0) of grid (2, 1)"
    assert "y[64] was stored by block (1, 0)" in lines[1]
    assert lines[2].strip() == "first wrong element: y[64] = 1.5, expected 2"
    steps = [line for line in lines if re.match(r"(>> |   )step ", line)]
    assert len(steps) == 8
    assert steps[1] == (
        "   step 1  line 42  k=0  T.copy  A[64:127, 0:64], A[64:128, 0:64] (64 past the edge, read as zeros) -> A_tile"
    )
    # the one column inside the tensor is an index, not a slice
    assert "A[64:127, 128], A[64:128, 128:192] (4033 past the edge, read as zeros) -> A_tile" in steps[5]
    assert steps[-1] == ">> step 7  line 47  T.Parallel  acc -> y (63 elements)"
    whole = Touch("y", "global", [M], "write", mask=packed(np.ones(M, dtype=bool)), count=M)
    assert explain_view.touch_text(whole) == "y"  # a mask of every element: the name alone
    assert sum(line.startswith(">>") for line in lines) == 1
    assert "      | T.copy(A[bx * 64, k * 64], A_tile)" in lines  # each source line once per run of steps
    assert sum("| T.copy" in line for line in lines) == 3


def test_a_one_axis_grid_names_its_block_by_number():
    explanation = Explanation("gemv", "odd_127x129", [1], [2])
    assert explain_view.header_text(explanation, "en") == "gemv, case odd_127x129, block 1 of grid 2"


def test_the_page_has_one_section_per_step_and_opens_at_the_mark():
    explanation = gemv_explanation()
    page = explain_view.html_page(explanation, lang="en")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "http://" not in page and "https://" not in page and "src=" not in page  # nothing fetched
    sections = re.findall(r'<section class="step( marked)?" data-step="(\d+)"', page)
    assert [int(n) for _, n in sections] == list(range(len(explanation.steps)))
    assert [n for marked, n in sections if marked] == ["7"]
    assert 'value="7"' in page and "show(asked?+asked[1]:7)" in page  # or the step the address names (#step=N)
    assert page.count('<svg class="tensor"') == 2 * len(explanation.steps)  # A and y in every step
    assert "the wrong element came from here" in page
    why = "y[64] was stored by block (1, 0)"
    assert page.count(why) == 1 and page.index(why) < page.index('class="controls"')  # in view at every step
    assert 'class="mark"' in page and "show(7);" in page  # a button back to the marked step
    for word in ("read past the edge (zeros)", "written", "outside the tensor"):
        assert word in page  # the legend


def test_the_pictures_colour_reads_zeros_and_writes():
    explanation = gemv_explanation()
    pictures = explain_view.global_tensors(explanation)
    assert list(pictures) == ["A", "y"]
    picture = pictures["A"]
    assert picture.extent == [128, 192]  # grown to the farthest zero so the reads past the edge show
    tail = explanation.steps[5]
    svg = picture.svg([t for t in tail.touches if t.buffer == "A"], "A")
    assert f'fill="{explain_view.COLOURS["zero"]}"' in svg and f'fill="{explain_view.COLOURS["read"]}"' in svg
    read = svg.index('<rect x="128" y="64" width="1" height="63"')  # the read: column 128, rows 64..126
    assert read > svg.index(f'fill="{explain_view.COLOURS["zero"]}"')  # drawn over the zero box that spans it
    assert 'stroke-dasharray="4 2"' in svg  # the tensor's edge
    store = explanation.steps[-1]
    rects = pictures["y"].mask_rects(explain_view.decode_mask(store.touches[1].mask, [M]))
    assert rects == [(64, 0, 63, 1)]


def test_a_folded_three_axis_box_draws_one_rectangle_per_leading_index():
    picture = explain_view.global_tensors(gemm_explanation())["A"]
    assert (picture.rows, picture.cols) == (1024 * 2048, 4)
    rects = picture.box_rects([128, 130, 96, 128, 0, 4])
    assert rects == [(0, 128 * 2048 + 96, 4, 32), (0, 129 * 2048 + 96, 4, 32)]


def test_a_mask_too_fine_to_draw_is_pooled_before_its_runs_are_merged():
    picture = explain_view.TensorPicture("x", [1024, 1024], [])
    mask = np.zeros((1024, 1024), dtype=bool)
    mask[:, ::2] = True  # every other column: 512 runs a row unpooled
    rects = picture.mask_rects(mask)
    assert rects == [(0, 0, 1024, 1024)]


def test_a_pooled_tile_says_what_a_cell_stands_for_and_holds_exact_values_on_hover():
    explanation = gemm_explanation()
    page = explain_view.html_page(explanation, lang="en")
    assert "a cell is 4×4 elements (shown: the largest in magnitude)" in page
    assert "<title>C_local[0:4, 4:8]: -1</title>" in page
    assert "<title>C_local[0:4, 0:4]: never written</title>" in page
    single = explain_view.tile_svg(gemv_explanation().steps[2].tiles[0])
    assert "<title>acc[3] = 1</title>" in single


def test_a_learners_names_and_source_lines_are_escaped():
    explanation = gemv_explanation()
    evil = '<script>alert("x")</script>'
    explanation.kernel = f"gemv{evil}"
    explanation.steps[1].source = f"T.copy(A, A_tile)  # {evil}"
    explanation.steps[1].touches[0].buffer = f"A{evil}"
    explanation.steps[2].tiles[0].buffer = f"acc{evil}"
    explanation.why = evil
    page = explain_view.html_page(explanation, lang="en")
    assert evil not in page
    assert html.escape(evil) in page
    assert page.count("<script>") == 1  # the view's own


@pytest.mark.parametrize("lang", ["zh_CN"])
def test_zh_cn_labels(lang):
    explanation = gemv_explanation()
    page = explain_view.html_page(explanation, lang=lang)
    assert '<html lang="zh-CN">' in page
    for english in ("the wrong element came from here", "read past the edge (zeros)", "outside the tensor"):
        assert english not in page
    assert "越界" in page and "上一步" in page and "下一步" in page
    lines = explain_view.text_lines(explanation, lang=lang)
    assert lines[0].startswith("gemv，用例 odd_127x129")
    assert any(line.startswith(">> 第 7 步") for line in lines)
    assert any("y (63 个元素)" in line for line in lines)


def test_a_record_with_a_problem_says_it_and_nothing_more():
    explanation = Explanation("gemv", "odd_127x129", [9, 0], [2, 1], problem="block (9, 0) is not in the grid (2, 1)")
    assert explain_view.text_lines(explanation, lang="en")[1] == "  block (9, 0) is not in the grid (2, 1)"
    page = explain_view.html_page(explanation, lang="en")
    assert "<section" not in page and "is not in the grid" in page


class FakeMagics:
    """What explain() needs of the notebook's %%puzzle cells."""

    puzzle_id, warm = "08", None

    def module_text(self, keep: str = "") -> tuple[str, list[tuple[int, str]]]:
        return "def gemv():\n    pass\n", [(1, "gemv")]


def grader_document(explained: bool) -> dict:
    """A grader JSON of gemv: a passed case, then a failed one (with its record when ``explained``)."""
    from grader.outcome import CaseResult

    passed = CaseResult("08", "gemv", "small", "passed", {"M": 64}, message="max abs err 0", checked="simulated")
    failed = CaseResult("08", "gemv", "odd_127x129", "failed", {"M": 127}, message="1 wrong", checked="simulated")
    large = CaseResult("08", "gemv", "large", "compiled", {"M": 8192}, message="too large", checked="compiled")
    if explained:  # the judge puts the record on the kernel's last result; it names its case
        large.explanation = gemv_explanation()
    return {"results": [passed.to_dict(), failed.to_dict(), large.to_dict()], "runs": []}


def streamed(document: dict) -> object:
    """A grading run whose results are ``document``'s, each sent through the stream's encoding as a check's are
    (grader.processes.stream), with exit code 1."""
    from grader.processes import launch, stream

    results = [stream.decode(stream.encode(stream.Graded(CaseResult.from_dict(r)))).result for r in document["results"]]
    return launch.GraderRun(results, 1, "", 0.1, document["runs"])


def test_explain_in_a_notebook_records_the_first_failed_case_and_shows_the_view(monkeypatch, capsys):
    from grader.frontends import notebook
    from grader.processes import launch

    calls, shown = [], []

    def grade(puzzle_id, module, options, timeout, **_):
        calls.append((options.kernels, options.explain, options.block, options.cases, options.device))
        explained = bool(options.cases)
        return streamed(grader_document(explained))

    monkeypatch.setattr(notebook, "_magics", FakeMagics)
    monkeypatch.setattr(launch, "grade", grade)
    monkeypatch.setattr("IPython.display.display", shown.append)
    result = notebook.explain("gemv", block=(1, 0))
    first = ("gemv", "gemv", "1,0")
    assert calls == [(*first, "", "cpu"), (*first, "odd_127x129", "cpu")]  # every case, then the chosen one recorded
    assert result.case.case == "odd_127x129" and result.case.status == "failed" and result.explanation.marked == 7
    assert len(shown) == 1 and 'class="tl-explain"' in shown[0].data and "<script>" in shown[0].data
    assert "odd_127x129" in capsys.readouterr().out


def test_explain_in_a_notebook_says_why_there_is_no_view(monkeypatch, capsys):
    from grader.frontends import notebook
    from grader.processes import launch

    monkeypatch.setattr(notebook, "_magics", FakeMagics)
    monkeypatch.setattr(launch, "grade", lambda *a, **k: streamed(grader_document(False)))
    result = notebook.explain("gemv", case="small")
    assert result.explanation is None
    assert "explain: nothing to show for gemv: max abs err 0" in capsys.readouterr().out


def test_earlier_steps_show_pale_under_the_current_one():
    page = explain_view.html_page(gemv_explanation(), lang="en")
    sections = re.findall(r'<section class="step.*?</section>', page, re.S)
    pale = f'fill="{explain_view.EARLIER["read"]}"'
    assert pale not in sections[1]  # the first copy: nothing read before it
    assert pale in sections[3]  # the second copy: the first one's rows of A, pale
    assert 'figure class="idle"' in sections[0]  # T.clear touches no global tensor: its pictures are faded


def test_tiles_of_steps_not_opened_travel_as_data_for_the_script():
    """A page of 400 steps of 32x32 tiles would be megabytes of SVG: only the opening step's tiles are drawn."""
    explanation = gemv_explanation()
    page = explain_view.html_page(explanation, lang="en")
    sections = re.findall(r'<section class="step.*?</section>', page, re.S)
    assert "data-tile=" in sections[2] and "<rect" not in sections[2].split('class="tiles"')[1]
    data = json.loads(html.unescape(re.search(r'data-tile="([^"]*)"', sections[2]).group(1)))
    assert data["n"] == "acc" and data["v"][0][:3] == [-2.0, -1.0, 0.0] and data["c"] == [1, 1]
    opened = explain_view.html_page(gemm_explanation(), lang="en")  # it opens at step 0: drawn without the script
    assert "<title>C_local[0:4, 0:4]: never written</title>" in opened.split("</section>")[0]


class TwoCellMagics(FakeMagics):
    """gemv's cell starts at line 30 of the module check() writes: its line 47 is line 19 of the cell."""

    def module_text(self, keep: str = "") -> tuple[str, list[tuple[int, str]]]:
        return "import tilelang\n" * 29 + "def gemv():\n    pass\n", [(1, "setup"), (30, "gemv")]


def test_explain_in_a_notebook_names_the_lines_of_the_learners_cell_and_says_nan(monkeypatch, capsys, tmp_path):
    from grader.frontends import notebook
    from grader.processes import launch

    def grade(puzzle_id, module, options, timeout, **_):
        document = grader_document(bool(options.cases))
        if options.cases:  # a never-written element, as grader.pipeline.explain records it
            target = {"buffer": "y", "index": [64], "got": "nan", "expected": 2.0}
            document["results"][2]["explanation"]["target"] = target
        return streamed(document)  # as the notebook gets it: through the stream's encoding

    shown = []
    monkeypatch.setattr(notebook, "_magics", TwoCellMagics)
    monkeypatch.setattr(launch, "grade", grade)
    monkeypatch.setattr("IPython.display.display", shown.append)
    notebook.explain("gemv")
    page = html.unescape(shown[0].data)
    assert "first wrong element: y[64] = nan, expected 2" in page and "None" not in page
    assert "line 19 of cell %%puzzle gemv" in page and "line 47" not in page  # the store, in the learner's cell
    assert "at line 19 (step 7)" in page  # the sentence about it names the same line
    assert "  19 | y[bx * 64 + i] = acc[i]" in page
    capsys.readouterr()
