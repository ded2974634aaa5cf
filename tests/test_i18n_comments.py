"""The comments of the zh_CN notebooks' code cells are translated, and nothing else in those cells changes
(grader.course.translations: comment_blocks, translate_comments, the catalogues i18n/zh_CN/comments/pNN.po)."""

from __future__ import annotations

import json
import re

import pytest

from grader.course import translations
from grader.course.generate import expected_notebooks
from grader.course.translations import comment_blocks, translate_comments, without_comments
from grader.discover import puzzle_files
from grader.i18n import Entry
from tests.conftest import ROOT

CJK = re.compile(r"[\u4e00-\u9fff]")
TOY = """x = T.alloc_fragment((4,), T.float32)  # the accumulator
    # TODO begin: add the two vectors
    # Copy both tiles in,
    # then add them.
    raise NotImplementedError("add")  # noqa: E501
    # TODO end
y = "# not a comment"
"""


def test_comment_blocks_group_lines_and_keep_markers_and_pragmas():
    blocks = comment_blocks(TOY)
    assert [(b.first, b.last, b.text, b.trailing, b.marker) for b in blocks] == [
        (0, 0, "the accumulator", True, ""),
        (1, 1, "add the two vectors", False, "TODO begin: "),
        (2, 3, "Copy both tiles in,\nthen add them.", False, ""),
    ]


def test_translating_comments_changes_only_the_comments():
    said = {
        "the accumulator": "累加器",
        "add the two vectors": "把两个向量相加",
        "Copy both tiles in,\nthen add them.": "拷入两个分块，再相加。",
    }
    entries = {("c", en): Entry("c", en, zh) for en, zh in said.items()}
    out = translate_comments(TOY, "c", entries)
    assert out.splitlines()[:4] == [
        "x = T.alloc_fragment((4,), T.float32)  # 累加器",
        "    # TODO begin: 把两个向量相加",
        "    # 拷入两个分块，再相加。",
        '    raise NotImplementedError("add")  # noqa: E501',
    ]
    assert without_comments(out) == without_comments(TOY)
    assert 'y = "# not a comment"' in out and "# TODO end" in out
    untranslated = {("c", "the accumulator"): Entry("c", "the accumulator", "累加器", fuzzy=True)}
    assert translate_comments(TOY, "c", untranslated) == TOY  # a fuzzy translation is not used


@pytest.mark.parametrize("puzzle_id", sorted(puzzle_files(ROOT / "puzzles")))
def test_zh_cn_code_cells_are_the_english_code_with_translated_comments(puzzle_id: str):
    name = f"{puzzle_files(ROOT / 'puzzles')[puzzle_id].stem}.ipynb"
    english = json.loads(expected_notebooks(ROOT / "puzzles", (puzzle_id,))[name])
    chinese = json.loads(expected_notebooks(ROOT / "puzzles", (puzzle_id,), "zh_CN")[name])
    pairs = [
        ("".join(a["source"]), "".join(b["source"]))
        for a, b in zip(english["cells"], chinese["cells"])
        if a["cell_type"] == "code" and a["metadata"]["tilelang_course"]["role"] != "setup"
    ]
    assert pairs
    for en, zh in pairs:
        assert without_comments(zh) == without_comments(en)
    if puzzle_id in translations.complete_list("zh_CN", ROOT):
        todo = [zh for en, zh in pairs if "# TODO begin" in en]
        assert todo, "a stub notebook has TODO regions"
        for zh in todo:
            title = re.search(r"# TODO begin: (.*)", zh).group(1)
            assert CJK.search(title), f"p{puzzle_id}: the TODO title is still English: {title}"
            body = [line for line in zh.splitlines() if line.strip().startswith("#") and "TODO" not in line]
            assert body and all(CJK.search(line) for line in body), f"p{puzzle_id}: an English comment: {body}"


def test_the_chinese_nbgrader_course_puts_the_translated_hints_above_the_solution():
    from grader.nbgrader.course import source_notebook

    puzzle_id = "09"
    stub, solution = puzzle_files(ROOT / "puzzles")[puzzle_id], puzzle_files(ROOT / "solutions")[puzzle_id]
    cells = [c.source for c in source_notebook(solution, stub, puzzle_id, lang="zh_CN").cells]
    marked = [source for source in cells if "### BEGIN SOLUTION" in source]
    assert marked
    for source in marked:
        hints = source.split("### BEGIN SOLUTION")[0].split("# TODO begin: ")[1]
        assert CJK.search(hints) and not re.search(r"# [A-Z][a-z]+ [a-z]+ [a-z]+", hints), hints
