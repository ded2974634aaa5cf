"""The notebook pictures speak the notebook's language: Chinese titles, axis labels and legends under zh_CN
(from i18n/zh_CN/grader.po) where a font can draw them, English otherwise."""

from __future__ import annotations

import re
import warnings

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from grader import i18n  # noqa: E402
from grader.teaching import pictures  # noqa: E402

CJK = re.compile(r"[\u4e00-\u9fff]")


def _words(fig) -> list[str]:
    """Every title, axis label, tick label, legend entry and free text of a figure."""
    out = [t.get_text() for t in fig.texts]
    for ax in fig.axes:
        out += [ax.get_title(loc) for loc in ("left", "center", "right")]
        out += [ax.get_xlabel(), ax.get_ylabel(), *(t.get_text() for t in ax.texts)]
        out += [t.get_text() for t in ax.get_yticklabels()]
        if ax.get_legend():
            out += [t.get_text() for t in ax.get_legend().get_texts()]
    for legend in fig.legends:
        out += [t.get_text() for t in legend.get_texts()]
    return [w for w in out if w]


def _draw(fig) -> None:
    with warnings.catch_warnings():  # a stand-in font has no Chinese glyphs: matplotlib warns, and draws boxes
        warnings.simplefilter("ignore")
        fig._repr_png_()


@pytest.fixture
def chinese(monkeypatch):
    monkeypatch.setenv(i18n.ENV, "zh_CN")


def test_pictures_label_in_chinese_when_the_notebook_is_chinese(chinese, monkeypatch):
    monkeypatch.setattr(pictures, "cjk_font", lambda: "DejaVu Sans")  # stands in for an installed CJK font
    fig = pictures.pipeline(3, 6)
    words = _words(fig)
    _draw(fig)
    assert "时间（模型：一次拷贝用时 1，一个 K 步的计算用时 0.8）" in words
    assert "第 k 步的分块拷贝" in words and "计算" in words
    assert any(w.startswith("num_stages=3：拷贝提前进行（总计") for w in words), words
    for fig in (pictures.tiling(33, 127, 16, 64), pictures.waves(16, 5, 8), pictures.im2col(2, 3, 8)):
        words = _words(fig)
        labels = [ax.get_xlabel() for ax in fig.axes]
        labels += [ax.get_title(loc) for ax in fig.axes for loc in ("left", "center")]
        assert any(CJK.search(w) for w in labels if w), words
        english = [w for w in words if re.search(r"[A-Za-z]{3}", w) and not CJK.search(w)]
        assert not [w for w in english if " the " in w or " of " in w or " per " in w], english  # no English sentence


def test_pictures_stay_english_without_a_chinese_font_or_in_english(chinese, monkeypatch):
    monkeypatch.setattr(pictures, "cjk_font", lambda: None)
    assert not any(CJK.search(w) for w in _words(pictures.pipeline(3, 6)))
    monkeypatch.setenv(i18n.ENV, "en")
    monkeypatch.setattr(pictures, "cjk_font", lambda: "DejaVu Sans")
    words = _words(pictures.pipeline(3, 6))
    assert "copy tiles of step k" in words and not any(CJK.search(w) for w in words)


def test_without_a_chinese_font_one_line_says_which_font_to_install(chinese, monkeypatch, capsys):
    monkeypatch.setattr(pictures, "cjk_font", lambda: None)
    monkeypatch.setattr(pictures, "_said", set())
    pictures.tiling(33, 127, 16, 64)
    pictures.pipeline(3, 6)
    said = capsys.readouterr().out.splitlines()
    assert len(said) == 1 and "Noto Sans CJK SC" in said[0] and "fonts-noto-cjk" in said[0], said
    assert CJK.search(said[0])  # said in the notebook's language: its output cell can draw Chinese
    monkeypatch.setenv(i18n.ENV, "en")
    pictures.tiling(33, 127, 16, 64)
    assert capsys.readouterr().out == ""


def test_a_chinese_font_installed_after_matplotlibs_font_cache_is_found(monkeypatch):
    """matplotlib lists the fonts once and caches the list: a font installed later is found by its file."""
    from matplotlib import font_manager

    class Manager:
        ttflist: list = []

        def addfont(self, path):
            self.ttflist.append(font_manager.FontEntry(fname=path, name="Noto Sans CJK SC"))

    monkeypatch.setattr(font_manager, "fontManager", Manager())
    monkeypatch.setattr(font_manager, "findSystemFonts", lambda: ["/usr/share/fonts/NotoSansCJK-Regular.ttc"])
    pictures._installed_cjk_font.cache_clear()
    try:
        assert pictures.cjk_font() == "Noto Sans CJK SC"
    finally:
        pictures._installed_cjk_font.cache_clear()
    monkeypatch.setattr(font_manager, "fontManager", type("Empty", (), {"ttflist": []})())
    monkeypatch.setattr(font_manager, "findSystemFonts", lambda: ["/usr/share/fonts/DejaVuSans.ttf"])
    try:
        assert pictures.cjk_font() is None
    finally:
        pictures._installed_cjk_font.cache_clear()
