"""The two prose markers of a puzzle module: ``# %% [deep-dive]`` (an optional section, collapsed and labelled)
and ``# %% [measured]`` (an experiment's answer folded under "What we measured"), in English and zh_CN, and
the main path's word count that leaves both out (grader/course/notebooks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.course.notebooks import main_path_sentences, main_path_words, prose_cells, puzzle_notebook, sentence_lengths
from grader.course.translations import puzzle_entries, translated_notebook, write_po
from grader.discover import puzzle_files
from grader.i18n import puzzle_catalogue_path
from tests.conftest import ROOT

TOY = '''"""Puzzle 99 · Sections: the title.

Spec words here.
"""

# %% [markdown]
# ## Main idea
#
# Main path prose.

# %% [markdown]
# Predict: how fast is it?

# %% [notebook]
# print("experiment")

# %% [measured]
# It ran at 1 ms.

# %% [deep-dive]
# ## Banks
#
# Optional words one two three.

# %% [notebook]
# print("inside the deep dive")

# %% [markdown]
# ### Still optional

# %% [markdown]
# ## Back on the path
#
# Closing words.
'''


def _module(root: Path, text: str = TOY) -> Path:
    source = root / "puzzles" / "p99_sections.py"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(text)
    return source


def _notebook_cells(tmp_path: Path, lang: str = "en"):
    source = _module(tmp_path)
    if lang == "en":
        return puzzle_notebook(source, "99").cells
    return translated_notebook(source, "99", lang, root=tmp_path).cells


def _info(cell) -> dict:
    return cell.metadata["tilelang_course"]


def test_a_deep_dive_runs_from_its_marker_to_the_next_level_two_heading(tmp_path: Path):
    cells = _notebook_cells(tmp_path)
    flagged = [c.source.splitlines()[0] for c in cells if _info(c).get("deep_dive")]
    assert flagged == ["## Deep dive (optional): Banks", 'print("inside the deep dive")', "### Still optional"]
    opening = next(c for c in cells if c.source.startswith("## Deep dive"))
    assert opening.metadata["jp-MarkdownHeadingCollapsed"] is True
    assert _info(opening)["role"] == "markdown"  # the role stays what it was
    closing = next(c for c in cells if c.source.startswith("## Back on the path"))
    assert "deep_dive" not in _info(closing) and "jp-MarkdownHeadingCollapsed" not in closing.metadata
    assert sum("jp-MarkdownHeadingCollapsed" in c.metadata for c in cells) == 1


def test_a_measured_cell_is_folded_under_what_we_measured(tmp_path: Path):
    cells = _notebook_cells(tmp_path)
    measured = [c for c in cells if _info(c).get("measured")]
    assert [c.source for c in measured] == [
        "<details><summary>What we measured</summary>\n\nIt ran at 1 ms.\n\n</details>"
    ]
    order = [c.source for c in cells]
    assert order.index('print("experiment")') == order.index(measured[0].source) - 1  # right after its run
    assert "deep_dive" not in _info(measured[0])


def test_the_catalogue_holds_the_prose_without_the_generated_labels(tmp_path: Path):
    source = _module(tmp_path)
    english = [e.msgid for e in puzzle_entries(source, "99")]
    assert "## Banks" in english and "It ran at 1 ms." in english
    assert not any("Deep dive" in text or "<details>" in text for text in english)
    assert len(prose_cells(source, "99")) == 7  # the spec and six markdown cells


def test_zh_cn_translates_the_labels_and_the_prose(tmp_path: Path):
    source = _module(tmp_path)
    translations = {"## Banks": "## 存储体", "It ran at 1 ms.": "它跑了 1 ms。"}
    entries = puzzle_entries(source, "99")
    for entry in entries:
        entry.msgstr = translations.get(entry.msgid, "")
    write_po(puzzle_catalogue_path("99", "zh_CN", tmp_path), entries, "zh_CN")
    cells = _notebook_cells(tmp_path, "zh_CN")
    sources = [c.source for c in cells]
    assert any(s.startswith("## 深入（可选）：存储体\n\n") for s in sources)  # then the untranslated paragraph
    assert "<details><summary>实测结果</summary>\n\n它跑了 1 ms。\n\n</details>" in sources
    english = _notebook_cells(tmp_path / "en")
    assert [c.id for c in cells] == [c.id for c in english]  # same cells, same ids
    assert [_info(c) for c in cells] == [_info(c) for c in english]


def test_main_path_words_leave_out_deep_dives_measured_cells_and_code(tmp_path: Path):
    source = _module(tmp_path)
    # spec "Puzzle 99 Sections: the title. Spec words here." (8), "Main idea Main path prose." (5),
    # "Predict: how fast is it?" (5), "Back on the path Closing words." (6): markup like # and · is no word
    assert main_path_words(source) == 8 + 5 + 5 + 6


def test_a_deep_dive_without_a_heading_is_an_authoring_error(tmp_path: Path):
    source = _module(tmp_path, '"""Puzzle 99 · Bad."""\n\n# %% [deep-dive]\n# No heading here.\n')
    with pytest.raises(ValueError, match="must start with a '## Title' heading"):
        puzzle_notebook(source, "99")


def test_puzzle_08_main_path_is_at_most_3500_words():
    """Issue 28, item 4: p08's main path is readable in one sitting; the rest goes into deep dives."""
    source = puzzle_files(ROOT / "puzzles")["08"]
    words = main_path_words(source)
    assert words <= 3500, (
        f"p08's main path is {words} words (limit 3,500): move the layouts, banks, rasterization and "
        "stream-K model into '# %% [deep-dive]' sections and experiment answers into '# %% [measured]' cells"
    )


def test_sentences_are_counted_as_a_reader_meets_them():
    text = (
        "A kernel reads A. Then it writes B with `T.copy`.\n\n- one item of a list with five words\n"
        "- another item\n\n| a | table | row | of | cells |\n\n```python\nx = 1  # code is not prose at all\n```"
    )
    # "A kernel reads A." 4, the next sentence 6, the first item 8; "another item" is a label (3 words or fewer)
    assert sentence_lengths(text) == [4, 6, 8]


@pytest.mark.parametrize("puzzle_id", sorted(puzzle_files(ROOT / "puzzles")))
def test_main_path_sentences_have_a_median_of_20_words_or_fewer(puzzle_id: str):
    """Issue 41 item 7: a learner reads short sentences (list items count as sentences of their own)."""
    lengths = sorted(main_path_sentences(puzzle_files(ROOT / "puzzles")[puzzle_id]))
    median = (lengths[(len(lengths) - 1) // 2] + lengths[len(lengths) // 2]) / 2
    assert median <= 20, f"p{puzzle_id}'s main-path sentences have a median of {median} words (at most 20)"
