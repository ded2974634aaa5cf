"""The run-notes pages (scripts/notes_page.py) are what their templates and raw outputs give, and the script
refuses a figure in the prose that no included output holds."""

from __future__ import annotations

import pytest

from scripts import notes_page
from tests.conftest import ROOT


def test_the_notes_pages_are_what_their_templates_and_data_give(capsys):
    templates = sorted(notes_page.TEMPLATES.glob("*.md.in"))
    assert {path.name for path in templates} >= {"p08-notes.md.in", "p08-flash-attention.md.in", "p09-p10-notes.md.in"}
    assert notes_page.main(["--check"]) == 0, capsys.readouterr().out


def _template(tmp_path, body: str) -> str:
    data = tmp_path / "data"
    data.mkdir()
    (data / "sweep.txt").write_text(
        "[11:11:11] : Warning: T.vectorized loop over `vec` with extent 2 is lowered as a serial loop\n"
        '{"BLOCK": 64}   ok    0.5231 ms   262.7 TFLOP/s  torch   0.2036 ms   0.39x\n'
        '{"BLOCK": 32}   ok    0.9824 ms   139.9 TFLOP/s  torch   0.2016 ms   0.21x\n'
        'best: {"BLOCK": 64}   ok    0.5231 ms   262.7 TFLOP/s  torch   0.2036 ms   0.39x\n'
    )
    (data / "raw.txt").write_text("one\ncopy bandwidth 2,975 GB/s, floor 11.8 us\nthree\n")
    return f"{{{{data {data.relative_to(tmp_path)}}}}}\n{body}"


def test_a_sweep_becomes_its_table_and_a_raw_range_its_lines(tmp_path):
    page = notes_page.render(_template(tmp_path, "At 0.5231 ms:\n{{sweep sweep.txt}}\n{{raw raw.txt 2-3}}\n"), tmp_path)
    assert "| **BLOCK 64** | **ok** | **0.5231** |" in page
    assert "| BLOCK 32 | ok | 0.9824 |" in page
    assert "Warning" not in page and page.count("0.5231") == 2  # the best: repeat is not a row
    assert "```text\ncopy bandwidth 2,975 GB/s, floor 11.8 us\nthree\n```" in page and "one" not in page


@pytest.mark.parametrize(
    ("body", "refusal"),
    [
        ("It took 0.52 ms.\n{{sweep sweep.txt}}\n", "line 2: 0.52"),  # rounded: 0.5231 does not hold 0.52
        ("The floor is 11.9 us.\n{{raw raw.txt}}\n", "line 2: 11.9"),
        ("{{table sweep.txt}}\n", "not a directive"),
        ("{{raw raw.txt 2-9}}\n", "has 3 lines"),
    ],
)
def test_a_figure_from_nowhere_or_an_unknown_directive_is_refused(tmp_path, body, refusal):
    with pytest.raises(ValueError, match=refusal):
        notes_page.render(_template(tmp_path, body), tmp_path)


def test_a_template_must_name_its_data_first():
    with pytest.raises(ValueError, match="first line"):
        notes_page.render("# a page\n", ROOT)
