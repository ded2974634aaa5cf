"""Small matplotlib pictures for the notebooks. Each function draws one idea and returns the Figure.

matplotlib is imported inside each function, so importing this module costs nothing and needs no
display. The pictures are deliberately schematic: sizes are the learner's, times are a model.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# One palette for every picture: inside the tensor, past its edge, copies, math, wrong.
FULL = "#8fb8de"
TAIL = "#f4c27a"
PAST_EDGE = "#d9d9d9"
HATCH = "#7a5a2a"  # the hatching over the part of an edge tile past the tensor
COPY = "#6a9fd4"
MATH = "#e58e4a"
RIGHT = "#b9dfb0"
WRONG = "#d9534f"


# Fonts that draw Chinese, most common first (Linux, then macOS and Windows). matplotlib falls back from one font of
# the family list to the next glyph by glyph, so the Latin text keeps matplotlib's own font.
CJK_FONTS = (
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
    "Droid Sans Fallback",
    "PingFang SC",
    "Heiti SC",
    "Microsoft YaHei",
    "SimHei",
)


# The files of those fonts, for a font installed after matplotlib cached its list of fonts (it never looks again).
CJK_FILES = re.compile(
    r"notosanscjk|notosanssc|sourcehansans|wqy-|droidsansfallback|pingfang|stheiti|msyh|simhei", re.I
)
NO_CJK_FONT = (
    "The pictures are labelled in English: no font that draws Chinese is installed. Install Noto Sans CJK SC "
    "(Debian, Ubuntu: apt install fonts-noto-cjk), then restart the notebook's kernel."
)
_said: set[str] = set()


def cjk_font() -> str | None:
    """The first installed font of CJK_FONTS, or None."""
    return _installed_cjk_font()


@functools.cache
def _installed_cjk_font() -> str | None:
    from matplotlib import font_manager

    def first() -> str | None:
        installed = {font.name for font in font_manager.fontManager.ttflist}
        return next((name for name in CJK_FONTS if name in installed), None)

    found = first()
    if found is None:  # maybe installed after matplotlib's font cache was written: look at the font files once
        for path in font_manager.findSystemFonts():
            if CJK_FILES.search(Path(path).name):
                try:
                    font_manager.fontManager.addfont(path)
                except Exception:  # a file matplotlib cannot read is one font fewer, not a failed picture
                    continue
        found = first()
    return found


def _language() -> str:
    """The pictures' language: the notebook's (grader.i18n.current, set by ``%puzzle ID --lang``), where a font
    can draw it; English where it cannot, rather than boxes in place of the characters, with one line (once
    a session) that says which font to install."""
    from grader.i18n import current, tr

    lang = current()
    if lang == "en" or cjk_font():
        return lang
    if lang not in _said:
        _said.add(lang)
        print(tr(NO_CJK_FONT, lang))
    return "en"


def _say(text: str) -> str:
    """A title, axis label or legend entry in the pictures' language (i18n/LANG/grader.po)."""
    from grader.i18n import tr

    lang = _language()
    return text if lang == "en" else tr(text, lang)


def _figure(width: float, height: float, rows: int = 1, cols: int = 1, **kw: Any):
    """A figure outside pyplot's state machine, so a notebook shows it once: as the cell's value."""
    import io

    import matplotlib
    from matplotlib.figure import Figure

    font = cjk_font() if _language() != "en" else None
    if font and font not in matplotlib.rcParams["font.sans-serif"]:  # the Chinese glyphs' fallback, once
        fonts = list(matplotlib.rcParams["font.sans-serif"])
        matplotlib.rcParams["font.sans-serif"] = [*fonts[:1], font, *fonts[1:]]

    class _Picture(Figure):
        def _repr_png_(self) -> bytes:
            buffer = io.BytesIO()
            self.savefig(buffer, format="png", dpi=100)
            return buffer.getvalue()

    fig = _Picture(figsize=(width, height), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False, **kw)
    return fig, axes


# ------------------------------------------------------------------------------------ tiling


def tiling(M: int, N: int, block_m: int, block_n: int, *, max_labels: int = 64):
    """The launch grid over an M x N output: one rectangle per block (its tile), tails shaded.

    For a vector, pass ``M = block_m = 1``. Block (bx, by) owns rows ``by * block_m ...`` and
    columns ``bx * block_n ...``, as in ``T.Kernel(T.ceildiv(N, block_n), T.ceildiv(M, block_m))``.
    The part of an edge tile that lies past the tensor is hatched: reads there give zeros and writes
    are dropped (``T.copy``), or need a guard (hand-written indexing).
    """
    from matplotlib.patches import Rectangle

    grid_m, grid_n = math.ceil(M / block_m), math.ceil(N / block_n)
    if grid_m * grid_n > 4096:
        raise ValueError(f"{grid_m * grid_n} tiles is too many to draw; pick a smaller example")
    span_m, span_n = grid_m * block_m, grid_n * block_n
    vector = M == 1 and block_m == 1
    width = 9.0 if vector else min(9.0, 2.5 + 6.0 * span_n / max(span_m, span_n))
    height = 1.6 if vector else min(7.0, 1.5 + 5.0 * span_m / max(span_m, span_n))
    fig, axes = _figure(width, height)
    ax = axes[0, 0]
    label = grid_m * grid_n <= max_labels
    for by in range(grid_m):
        for bx in range(grid_n):
            r0, c0 = by * block_m, bx * block_n
            tail = r0 + block_m > M or c0 + block_n > N
            tile = Rectangle((c0, r0), block_n, block_m, facecolor=TAIL if tail else FULL, edgecolor="white", lw=1.5)
            tile.set_gid("tile")
            ax.add_patch(tile)
            # The part past the edge is hatched over the tile's own colour, so an edge tile shows orange
            # whole, however thin the part of it inside the tensor (one element of 1024, say).
            if c0 + block_n > N:  # the columns past the edge
                past = Rectangle((N, r0), c0 + block_n - N, block_m, fill=False, hatch="//", lw=0, color=HATCH)
                past.set_gid("past_edge")
                ax.add_patch(past)
            if r0 + block_m > M:
                past = Rectangle(
                    (c0, M), min(block_n, N - c0), r0 + block_m - M, fill=False, hatch="//", lw=0, color=HATCH
                )
                past.set_gid("past_edge")
                ax.add_patch(past)
            if label:
                text = f"{bx}" if vector else f"({bx},{by})"
                inside_n, inside_m = min(c0 + block_n, N) - c0, min(r0 + block_m, M) - r0
                # the middle of the part inside the tensor, or of the tile when that part is too thin for text
                x = c0 + (inside_n if inside_n >= block_n / 4 else block_n) / 2
                y = r0 + (inside_m if inside_m >= block_m / 4 else block_m) / 2
                ax.text(x, y, text, ha="center", va="center", fontsize=8)
    ax.add_patch(Rectangle((0, 0), N, M, fill=False, edgecolor="black", lw=2))
    ax.set_xlim(0, span_n)
    ax.set_ylim(span_m, 0)  # row 0 at the top, as a matrix is written
    if vector:
        ax.set_yticks([])
        ax.set_title(_say(f"N = {N}, BLOCK = {block_n}: {grid_n} blocks, bx = 0 .. {grid_n - 1}"), fontsize=10)
    else:
        ax.set_aspect("equal")
        ax.set_ylabel(_say("row (by)"))
        ax.set_title(
            _say(f"{M} x {N}, tiles {block_m} x {block_n}: grid {grid_n} x {grid_m} = {grid_m * grid_n} blocks"),
            fontsize=10,
        )
    ax.set_xlabel(_say("column (bx)" if not vector else "element index"))
    tails = sum(1 for by in range(grid_m) for bx in range(grid_n) if (by + 1) * block_m > M or (bx + 1) * block_n > N)
    if tails:
        edge = _say(f"{tails} edge tile(s) in orange; hatched = the part past the edge")
        ax.set_title(f"{ax.get_title()}\n{edge}", fontsize=10)
    return fig


# ---------------------------------------------------------------------------------- pipeline


def _schedule(stages: int, steps: int, copy: float, compute: float) -> tuple[list, list]:
    """Start and end of each K step's copy and compute when ``stages`` buffers exist.

    One copy at a time and one compute at a time. Copy k needs a free buffer (compute k - stages
    done); compute k needs copy k and compute k - 1 done. stages = 1 makes everything serial.
    """
    copies, computes = [], []
    for k in range(steps):
        start = copies[-1][1] if copies else 0.0
        if k >= stages:
            start = max(start, computes[k - stages][1])
        copies.append((start, start + copy))
        begin = max(copies[k][1], computes[-1][1] if computes else 0.0)
        computes.append((begin, begin + compute))
    return copies, computes


def pipeline(stages: int, steps: int, *, copy: float = 1.0, compute: float = 0.8):
    """Copy versus compute of each K step over time, with 1 stage (top) and ``stages`` (bottom).

    A model, not a measurement: each K step copies its A and B tiles (``copy`` time units) and then
    multiplies them (``compute``). With one buffer the next copy waits for the multiply that reads
    the buffer; with ``stages`` buffers up to ``stages - 1`` copies run ahead of the math.
    """
    from matplotlib.patches import Patch, Rectangle

    if stages < 2:
        raise ValueError("compare against at least 2 stages")
    fig, axes = _figure(9.0, 3.6, rows=2, cols=1, sharex=True)
    ends = []
    for ax, n in zip(axes[:, 0], (1, stages)):
        copies, computes = _schedule(n, steps, copy, compute)
        for k, ((c0, c1), (m0, m1)) in enumerate(zip(copies, computes)):
            bar = Rectangle((c0, 1.1), c1 - c0, 0.8, facecolor=COPY, edgecolor="white")
            bar.set_gid("copy")
            ax.add_patch(bar)
            bar = Rectangle((m0, 0.1), m1 - m0, 0.8, facecolor=MATH, edgecolor="white")
            bar.set_gid("compute")
            ax.add_patch(bar)
            ax.text((c0 + c1) / 2, 1.5, str(k), ha="center", va="center", fontsize=7, color="white")
            ax.text((m0 + m1) / 2, 0.5, str(k), ha="center", va="center", fontsize=7, color="white")
        end = computes[-1][1]
        ends.append(end)
        ax.set_yticks([0.5, 1.5], [_say("math"), _say("copy")])
        ax.set_ylim(0, 2)
        label = "num_stages=1: copy, then math" if n == 1 else f"num_stages={n}: copies run ahead"
        ax.set_title(_say(f"{label} (total {end:.1f})"), fontsize=10, loc="left")
    axes[-1, 0].set_xlim(0, max(ends) * 1.02)
    axes[-1, 0].set_xlabel(_say(f"time (model: a copy takes {copy:g}, the math of one K step {compute:g})"))
    fig.legend(
        handles=[
            Patch(color=COPY, label=_say("copy tiles of step k")),
            Patch(color=MATH, label=_say("T.gemm of step k")),
        ],
        loc="outside upper right",
        ncols=2,
        fontsize=8,
    )
    return fig


# ----------------------------------------------------------------------------- mismatch map


def mismatch_map(tile_map: dict):
    """A heat map of the output's tiles after a failed check: wrong tiles red, right ones green.

    ``tile_map`` is the grader's ``{"output": name, "tile": [bm, bn] or [b], "wrong": rows}``, where
    ``wrong[i][j]`` is 1 when tile (row i, column j) holds a wrong element; a 1-D output has one row.
    When the grid is large the grader shrinks the map: ``"cell"`` then gives how many tiles along each
    axis one map cell stands for, and ``"grid"`` the full grid of tiles.
    """
    import numpy as np
    from matplotlib.colors import ListedColormap

    wrong = np.atleast_2d(np.asarray(tile_map["wrong"], dtype=int))
    tile = list(tile_map.get("tile") or [])
    cell = [int(c) for c in tile_map.get("cell") or []]
    rows, cols = wrong.shape
    fig, axes = _figure(min(9.0, 2.0 + 0.5 * cols), min(6.0, 1.4 + 0.5 * rows))
    ax = axes[0, 0]
    ax.imshow(wrong, cmap=ListedColormap([RIGHT, WRONG]), vmin=0, vmax=1, aspect="auto", interpolation="nearest")
    if rows * cols <= 400:
        for i in range(rows):
            for j in range(cols):
                ax.text(j, i, "x" if wrong[i, j] else "", ha="center", va="center", color="white", fontsize=9)
    size = " x ".join(str(t) for t in tile) if tile else "?"
    name = tile_map.get("output", "output")
    if any(c > 1 for c in cell):
        grid = " x ".join(str(g) for g in tile_map.get("grid") or [])
        title = "\n".join(
            [
                _say(f"{name}: {int(wrong.sum())} of {wrong.size} map cells hold wrong tiles"),
                _say(f"(grid of {grid} tiles of {size}; one cell = {' x '.join(map(str, cell))} tiles)"),
            ]
        )
    else:
        title = _say(f"{name}: {int(wrong.sum())} of {wrong.size} tiles wrong (tile = {size})")
    ax.set_title(title, fontsize=10)
    ax.set_xticks(range(cols))
    ax.set_yticks(range(rows))
    ax.set_xlabel(_say("tile column (bx)"))
    ax.set_ylabel(_say("tile row (by)") if rows > 1 else "")
    if rows == 1:
        ax.set_yticks([])
    return fig


# ------------------------------------------------------------------------- p05: row reduction


def row_reduction(block_m: int, block_n: int, column_tiles: int):
    """One block's row sums: column tiles added into a (block_m, block_n) fp32 partial, then one
    ``T.reduce_sum(dim=1)`` to block_m sums. Rectangles with gid "tile" are the column tiles."""
    from matplotlib.patches import FancyArrowPatch, Rectangle

    fig, axes = _figure(9.0, 2.6)
    ax = axes[0, 0]
    h = 1.0
    w = 0.9
    for k in range(column_tiles):
        tile = Rectangle((k * w, 0), w * 0.95, h, facecolor=FULL if k < column_tiles - 1 else TAIL, edgecolor="k")
        tile.set_gid("tile")
        ax.add_patch(tile)
        ax.text(k * w + w / 2, h / 2, f"k={k}", ha="center", va="center", fontsize=8)
    x = column_tiles * w + 0.8
    ax.add_patch(Rectangle((x, 0), w, h, facecolor=MATH, edgecolor="k"))
    ax.text(x + w / 2, h / 2, _say("partial") + "\nfp32", ha="center", va="center", fontsize=8)
    ax.add_patch(FancyArrowPatch((column_tiles * w, h / 2), (x, h / 2), arrowstyle="-|>", mutation_scale=12))
    ax.text((column_tiles * w + x) / 2, h + 0.1, _say("+= per element"), ha="center", fontsize=8)
    y = x + w + 0.8
    ax.add_patch(Rectangle((y, 0), 0.15, h, facecolor=RIGHT, edgecolor="k"))
    ax.add_patch(FancyArrowPatch((x + w, h / 2), (y, h / 2), arrowstyle="-|>", mutation_scale=12))
    ax.text((x + w + y) / 2, h + 0.1, "reduce_sum dim=1", ha="center", fontsize=8)
    ax.text(y + 0.3, h / 2, _say(f"{block_m} sums"), va="center", fontsize=8)
    ax.set_xlim(-0.1, y + 1.3)
    ax.set_ylim(h + 0.4, -0.2)
    ax.axis("off")
    ax.set_title(
        _say(
            f"one block: {block_m} rows, {column_tiles} column tiles of {block_n}; "
            "threads talk to each other only in the last step"
        ),
        fontsize=10,
    )
    return fig


# ------------------------------------------------------------------------ p06/p07: online max


def online_softmax(row: Sequence[float] | None = None, block: int = 8, *, seed: int = 0):
    """The online softmax on one row: the running max m after each tile (top) and the running
    sum l, rescaled by exp(m_old - m_new) whenever the max rises, against the exact sum (bottom)."""
    import numpy as np

    if row is None:
        rng = np.random.default_rng(seed)
        row = rng.normal(size=6 * block) + np.linspace(0, 3, 6 * block)
    x = np.asarray(row, dtype=float)
    tiles = math.ceil(len(x) / block)
    m, total = -math.inf, 0.0
    ms, ls, corrections = [], [], []
    for t in range(tiles):
        part = x[t * block : (t + 1) * block]
        new = max(m, float(part.max()))
        scale = math.exp(m - new) if m != -math.inf else 0.0
        total = total * scale + float(np.exp(part - new).sum())
        m = new
        ms.append(m)
        ls.append(total)
        corrections.append(scale)
    exact = float(np.exp(x - x.max()).sum())
    fig, axes = _figure(9.0, 4.4, rows=2, cols=1, sharex=True)
    top, bottom = axes[0, 0], axes[1, 0]
    top.plot(np.arange(len(x)), x, ".", color=COPY, label=_say("x (one row)"))
    edges = [t * block for t in range(tiles + 1)]
    top.step(edges, [ms[0]] + ms, where="pre", color=MATH, lw=2, label=_say("running max m after each tile"))
    for e in edges[1:-1]:
        top.axvline(e, color="0.85", lw=0.8)
    top.legend(fontsize=8, loc="upper left")
    top.set_title(_say("m only grows; every time it does, what was summed so far is rescaled"), fontsize=10)
    centers = [t * block + block - 1 for t in range(tiles)]
    bottom.plot(centers, ls, "o-", color=MATH, label=_say("running sum l = l * exp(m_old - m_new) + tile sum"))
    bottom.axhline(exact, color="k", ls="--", lw=1, label=_say(f"exact sum exp(x - max x) = {exact:.3f}"))
    for c, s, v in zip(centers, corrections, ls):
        if 0 < s < 1:
            bottom.annotate(f"x{s:.2f}", (c, v), textcoords="offset points", xytext=(0, 8), fontsize=7, ha="center")
    bottom.legend(fontsize=8, loc="lower right")
    bottom.set_xlabel(_say(f"column (tiles of {block})"))
    return fig


# ---------------------------------------------------------------------------------- p09: im2col


def im2col(channels: int, taps: int, length: int):
    """The im2col matrix of a 'same' 1-D convolution: row r = c * K + k, column t holds
    X[c, t + k - P]. Each cell shows the source position (c, t + k - P); grey cells are padding.
    The left panel is X itself with the same colours per channel."""
    import numpy as np
    from matplotlib.colors import ListedColormap

    pad = (taps - 1) // 2
    rows = channels * taps
    source = np.full((rows, length), -1.0)
    for c in range(channels):
        for k in range(taps):
            for t in range(length):
                s = t + k - pad
                if 0 <= s < length:
                    source[c * taps + k, t] = c
    fig, axes = _figure(9.0, 1.6 + 0.32 * rows, rows=1, cols=2, width_ratios=[1, 1.2])
    left, right = axes[0, 0], axes[0, 1]
    colors = ["#e0e0e0"] + [FULL, TAIL, RIGHT, MATH, "#c6a4dd", "#f2a2b4"][: max(channels, 1)]
    cmap = ListedColormap(colors)
    x = np.repeat(np.arange(channels)[:, None], length, axis=1).astype(float)
    left.imshow(x, cmap=cmap, vmin=-1, vmax=len(colors) - 2, aspect="auto")
    for c in range(channels):
        for t in range(length):
            left.text(t, c, str(t), ha="center", va="center", fontsize=7)
    left.set_title(_say(f"X: {channels} channels x L = {length}"), fontsize=10)
    left.set_yticks(range(channels))
    left.set_ylabel(_say("channel c"))
    left.set_xlabel("t")
    image = right.imshow(source, cmap=cmap, vmin=-1, vmax=len(colors) - 2, aspect="auto")
    image.set_gid("cols")
    for r in range(rows):
        c, k = divmod(r, taps)
        for t in range(length):
            s = t + k - pad
            right.text(t, r, str(s) if 0 <= s < length else "0", ha="center", va="center", fontsize=7)
    right.set_yticks(range(rows), [f"c{r // taps} k{r % taps}" for r in range(rows)], fontsize=7)
    right.set_xlabel(_say("output position t"))
    right.set_title(_say(f"cols: ({channels} x K = {rows}) x L; cell = source t of X (0 = padding)"), fontsize=10)
    return fig


# ------------------------------------------------------------------------------- p10: nibbles


def nibbles(packed: Sequence[int] = (0x3A, 0xF0, 0x81), scale: float = 0.5):
    """Bytes of B split into two 4-bit weights: bits 0-3 are column 2j, bits 4-7 column 2j + 1,
    each stored as q in 0..15 and meaning (q - 8) * scale. One rectangle per bit (gid "bit")."""
    from matplotlib.patches import Rectangle

    fig, axes = _figure(min(9.0, 1.0 + 3.0 * len(packed)), 2.2)
    ax = axes[0, 0]
    for j, byte in enumerate(packed):
        x0 = j * 9.5
        for b in range(8):  # draw bit 7 on the left, as a byte is written
            bit = (byte >> (7 - b)) & 1
            cell = Rectangle((x0 + b, 0), 1, 1, facecolor=TAIL if b < 4 else FULL, edgecolor="k")
            cell.set_gid("bit")
            ax.add_patch(cell)
            ax.text(x0 + b + 0.5, 0.5, str(bit), ha="center", va="center", fontsize=9)
        low, high = byte & 15, byte >> 4
        ax.text(x0 + 4, -0.35, f"B[n, {j}] = 0x{byte:02X}", ha="center", fontsize=9)
        ax.text(x0 + 2, 1.45, _say(f"col {2 * j + 1}: q={high}"), ha="center", fontsize=8)
        ax.text(x0 + 2, 1.85, f"w = {(high - 8) * scale:+g}", ha="center", fontsize=8)
        ax.text(x0 + 6, 1.45, _say(f"col {2 * j}: q={low}"), ha="center", fontsize=8)
        ax.text(x0 + 6, 1.85, f"w = {(low - 8) * scale:+g}", ha="center", fontsize=8)
    ax.set_xlim(-0.5, len(packed) * 9.5)
    ax.set_ylim(2.3, -0.7)
    ax.axis("off")
    ax.set_title(
        _say(
            f"high nibble (byte >> 4) & 15 -> column 2j+1, low nibble byte & 15 -> column 2j; w = (q - 8) * {scale:g}"
        ),
        fontsize=9,
    )
    return fig


# -------------------------------------------------------------------- p08: fp16 accumulation


def accumulation(errors: dict[str, Sequence[float]], lengths: Sequence[int]):
    """Relative error of a dot product against float64, per accumulator dtype, as K grows.

    ``errors`` maps a label to one error per entry of ``lengths`` (see
    ``grader.teaching.experiments.accumulation_errors``)."""
    fig, axes = _figure(7.0, 3.4)
    ax = axes[0, 0]
    for (label, values), color in zip(errors.items(), (WRONG, COPY, MATH, "k")):
        ax.loglog(lengths, [max(v, 1e-12) for v in values], "o-", color=color, label=label)
    ax.axhline(2.0**-11, color="0.5", ls=":", lw=1)
    ax.text(lengths[0], 2.0**-11 * 1.2, _say("one fp16 rounding (2^-11)"), fontsize=8, color="0.4")
    ax.set_xlabel(_say("K (length of the dot product)"))
    ax.set_ylabel(_say("relative error vs float64"))
    ax.legend(fontsize=8)
    ax.set_title(_say("the same fp16 products, summed in different accumulators"), fontsize=10)
    return fig


# ----------------------------------------------------------------- p08: block rasterization


def launch_order(grid_m: int, grid_n: int, panel: int | None) -> list[list[int]]:
    """order[by][bx]: when block (bx, by) is launched. ``panel=None`` is the plain row-major order
    (bx fastest); otherwise ``T.use_swizzle(panel_size=panel)``'s order (TileLang 0.1.15's
    rasterization2DRow): panels of ``panel`` tile rows, each walked column by column, every other
    panel in reverse."""
    order = [[0] * grid_n for _ in range(grid_m)]
    for linear in range(grid_m * grid_n):
        if panel is None:
            by, bx = divmod(linear, grid_n)
        else:
            size = panel * grid_n
            offset, index = linear % size, linear // size
            panels = math.ceil(grid_m * grid_n / size)
            stride = panel if index + 1 < panels else (grid_m * grid_n - index * size) // grid_n
            bx = grid_n - 1 - offset // stride if index & 1 else offset // stride
            by = offset % stride + index * panel
        order[by][bx] = linear
    return order


def rasterization(grid_m: int, grid_n: int, panel: int, wave: int):
    """Which output tiles the first ``wave`` blocks compute, launched row by row (left) and in
    panels (right). The blocks of one wave read the A rows and B columns of their tiles: fewer
    distinct rows and columns means more of them are found in L2."""
    import numpy as np
    from matplotlib.colors import ListedColormap

    fig, axes = _figure(9.0, 0.6 + 4.2 * grid_m / max(grid_m, grid_n), rows=1, cols=2)
    for ax, p in zip(axes[0], (None, panel)):
        order = np.array(launch_order(grid_m, grid_n, p))
        first = order < wave
        ax.imshow(first, cmap=ListedColormap([PAST_EDGE, MATH]), vmin=0, vmax=1, interpolation="nearest")
        if grid_m * grid_n <= 256:
            for by in range(grid_m):
                for bx in range(grid_n):
                    ax.text(bx, by, str(order[by, bx]), ha="center", va="center", fontsize=6)
        rows, cols = int(first.any(axis=1).sum()), int(first.any(axis=0).sum())
        name = _say("row by row") if p is None else f"T.use_swizzle(panel_size={p})"
        first_blocks = _say(f"first {wave} blocks: {rows} A row-blocks, {cols} B column-blocks")
        ax.set_title(f"{name}\n{first_blocks}", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    return fig


# ------------------------------------------------------------------------------------ waves


def wave_schedule(tiles: int, sms: int, k_steps: int, stream_k: bool) -> list[list[tuple[int, int, int]]]:
    """Per SM, its pieces of work as (tile, first K step, steps), in the order it runs them.

    One tile per block (``stream_k=False``): SM s computes tiles s, s + sms, ... whole. Stream-K: the
    ``tiles // sms`` full waves as before, then the K steps of the ``tiles % sms`` tiles left are split
    into ``sms`` equal shares, one per SM, each share running on from one tile into the next."""
    waves = tiles // sms if stream_k else math.ceil(tiles / sms)
    plan: list[list[tuple[int, int, int]]] = [[] for _ in range(sms)]
    for s in range(sms):
        for w in range(waves):
            if w * sms + s < tiles:
                plan[s].append((w * sms + s, 0, k_steps))
    if stream_k:
        first, work = waves * sms, (tiles - waves * sms) * k_steps
        for s in range(sms):
            lo, hi = s * work // sms, (s + 1) * work // sms
            while lo < hi:
                tile, step = divmod(lo, k_steps)
                end = min(hi, (tile + 1) * k_steps)
                plan[s].append((first + tile, step, end - lo))
                lo = end
    return plan


def waves(tiles: int, sms: int, k_steps: int):
    """Time on each SM (a row) for one tile per block (top) and for stream-K (bottom). A model: every K
    step takes the same time, launches and the partial tiles' fix-up cost nothing."""
    from matplotlib.patches import Patch

    fig, axes = _figure(9.0, 5.4, rows=2, cols=1, sharex=True)
    ends = []
    for ax, stream_k in zip(axes[:, 0], (False, True)):
        plan = wave_schedule(tiles, sms, k_steps, stream_k)
        end = max(sum(steps for _, _, steps in pieces) for pieces in plan)
        ends.append(end)
        last_wave = (tiles // sms) * sms
        for s, pieces in enumerate(plan):
            at = 0
            for tile, _, steps in pieces:
                shared = stream_k and tile >= last_wave
                colour = (TAIL if tile % 2 else MATH) if shared else (FULL if tile // sms % 2 else COPY)
                ax.broken_barh([(at, steps)], (s, 0.9), facecolors=colour, gid="piece")
                at += steps
        busy = tiles * k_steps / (sms * end)
        name = "stream-K: the last wave split by K steps" if stream_k else "one tile per block"
        ax.set_title(_say(f"{name}: {end} K steps, the SMs busy {busy:.0%} of the time"), fontsize=10, loc="left")
        ax.set_ylim(sms, 0)
        ax.set_ylabel(_say(f"SM (of {sms})"))
    axes[-1, 0].set_xlim(0, max(ends) * 1.01)
    axes[-1, 0].set_xlabel(_say(f"time in K steps ({tiles} tiles of {k_steps} K steps each)"))
    fig.legend(
        handles=[
            Patch(color=COPY, label=_say("whole tiles, waves 1, 3, ...")),
            Patch(color=FULL, label=_say("whole tiles, waves 2, 4, ...")),
            Patch(color=MATH, label=_say("last wave, even tiles")),
            Patch(color=TAIL, label=_say("last wave, odd tiles")),
        ],
        loc="outside upper right",
        ncols=4,
        fontsize=8,
    )
    return fig
