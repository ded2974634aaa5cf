"""One view of an ``--explain`` record (grader.outcome.Explanation) for every front end.

``text_lines`` is the terminal's: a header, then one line per step (its line number, loop iterations, operation
and the buffers it read and wrote). ``html_page`` is a self-contained HTML document (inline CSS and a little
inline JavaScript, nothing fetched) that shows one step at a time with a slider, opening at the marked step: the
source line, the buffers touched, a picture of every global tensor with the elements the step read, wrote and read
past the edge as zero, and a heat map of each block-local tile it wrote. ``html_fragment`` is the same view as
one ``<div>`` for a notebook's output area: its CSS is scoped to the view and its script finds the view by id.
Without JavaScript (a notebook reopened untrusted, a viewer that strips scripts) every step is shown, one under
another. Every text taken from the record (names, source lines) is escaped: it comes from a learner's file.
"""

from __future__ import annotations

import base64
import html
import itertools
import json
import math
import secrets
from collections.abc import Callable

import numpy as np

from grader.i18n import current, tr
from grader.outcome import Explanation, Step, TileValues, Touch

OPS = {
    "copy": "T.copy",
    "fill": "T.fill",
    "reduce": "T.reduce",
    "gemm": "T.gemm",
    "cumsum": "T.cumsum",
    "atomic_add": "T.atomic_add",
    "parallel": "T.Parallel",
    "store": "store",
}
COLOURS = {"read": "#3b82f6", "write": "#f97316", "zero": "#a855f7"}
DRAWN = ("zero", "read", "write")  # a zero box spans the whole box asked for: the part inside shows as read
EARLIER = {"read": "#b3cbf5", "write": "#f9c9a1"}  # what earlier steps of the block read and wrote, pale
UNTOUCHED, OUTSIDE = "#e5e7eb", "#ffffff"
PICTURE_W, PICTURE_H = 420.0, 200.0  # a global tensor's picture fits this box (pixels)
MIN_SIDE = 12.0  # a one-row tensor is still this tall
MAX_ELEMENT_PX = 14.0  # a small tensor is not blown up past this many pixels an element
MAX_GRID = 256  # a mask is pooled to at most this many cells a side before it is drawn
MAX_RECTS = 3000  # boxes folded from higher ranks: past this, each box is drawn as its rows' span
BOXES_SHOWN = 3  # a touch with more boxes lists this many in text, then the count


# ------------------------------------------------------------------------------ reading the record


def decode_mask(mask: str, shape: list[int]) -> np.ndarray:
    """A Touch's ``mask``: base64 of packed bits (row-major, numpy.packbits' big-endian bit order) of the whole
    buffer, as a boolean array of ``shape``."""
    count = math.prod(shape) if shape else 1
    bits = np.unpackbits(np.frombuffer(base64.b64decode(mask), dtype=np.uint8))[:count]
    if bits.size < count:  # a short mask: the elements it does not reach were not touched
        bits = np.concatenate([bits, np.zeros(count - bits.size, dtype=np.uint8)])
    return bits.astype(bool).reshape(shape or [1])


def folded(shape: list[int]) -> tuple[int, int]:
    """(rows, columns) of a buffer drawn in 2-D: a 1-D buffer is one row, higher ranks fold leading axes into rows."""
    if not shape:
        return 1, 1
    if len(shape) == 1:
        return 1, max(1, shape[0])
    return max(1, math.prod(shape[:-1])), max(1, shape[-1])


def box_pairs(box: list[int]) -> list[tuple[int, int]]:
    return [(box[i], box[i + 1]) for i in range(0, len(box) - 1, 2)]


def _slice(lo: int, hi: int) -> str:
    return str(lo) if hi == lo + 1 else f"{lo}:{hi}"


def touch_text(touch: Touch, lang: str | None = None) -> str:
    """``A[64:128, 0:64]`` (boxes as slices; a box that is the whole buffer is its name), ``C (100 elements)``
    (a mask), one per box up to BOXES_SHOWN."""
    if touch.mask or not touch.boxes:
        whole = touch.count == (math.prod(touch.shape) if touch.shape else 1)
        return f"{touch.buffer} ({tr(f'{touch.count} elements', lang)})" if touch.count and not whole else touch.buffer
    shown = []
    for box in touch.boxes[:BOXES_SHOWN]:
        pairs = box_pairs(box)
        if [list(p) for p in pairs] == [[0, n] for n in touch.shape]:
            shown.append(touch.buffer)
        else:
            shown.append(f"{touch.buffer}[{', '.join(_slice(lo, hi) for lo, hi in pairs)}]")
    text = " + ".join(dict.fromkeys(shown))
    left = len(touch.boxes) - BOXES_SHOWN
    return text + (f" + {tr(f'{left} more boxes', lang)}" if left > 0 else "")


def zero_text(touch: Touch, lang: str | None = None) -> str:
    """A read past the edge: the box asked for (or the buffer) and how many of its elements lay outside."""
    where = touch_text(touch, lang) if touch.boxes and not touch.mask else touch.buffer
    return f"{where} ({tr(f'{touch.count} past the edge, read as zeros', lang)})"


def op_name(step: Step) -> str:
    return OPS.get(step.op, step.op)


def loops_text(step: Step, joiner: str = "=") -> str:
    return "  ".join(f"{name}{joiner}{value}" for name, value in step.loops.items())


def start_position(explanation: Explanation) -> int:
    """The position in ``steps`` of the step the view opens at: the marked one, else the first."""
    for position, step in enumerate(explanation.steps):
        if step.index == explanation.marked:
            return position
    return explanation.marked if 0 <= explanation.marked < len(explanation.steps) else 0


def marked_position(explanation: Explanation) -> int:
    """The marked step's position, or -1 where nothing is marked."""
    return start_position(explanation) if explanation.marked >= 0 and explanation.steps else -1


def _vector(values: list[int]) -> str:
    """``1`` for a one-axis grid's block, ``(1, 0)`` for more axes."""
    return str(values[0]) if len(values) == 1 else "(" + ", ".join(str(v) for v in values) + ")"


def header_text(explanation: Explanation, lang: str | None = None) -> str:
    block, grid = _vector(explanation.block), _vector(explanation.grid)
    return tr(f"{explanation.kernel}, case {explanation.case}, block {block} of grid {grid}", lang)


def target_text(explanation: Explanation, lang: str | None = None) -> str:
    target = explanation.target
    if not target:
        return ""
    index = target.get("index", "")
    where = f"{target.get('buffer', '?')}[{', '.join(str(i) for i in index) if isinstance(index, list) else index}]"
    got, expected = _number(target.get("got")), _number(target.get("expected"))
    return tr(f"first wrong element: {where} = {got}, expected {expected}", lang)


def _number(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)  # a NaN or an infinity travels as its name ("nan", "inf": grader.pipeline.explain)


# Where a notebook's module is made of %%puzzle cells: a line of the module -> (its line in the cell, the cell's name)
Cells = Callable[[int], tuple[int, str]]


def line_label(line: int, lang: str | None = None, cells: Cells | None = None) -> tuple[int, str]:
    """A step's line as the learner numbers it, and its label: ``line 42`` of the kernel's file, or with ``cells``
    ``line 12 of cell %%puzzle gemv`` (a notebook, whose module's own numbers the learner never sees)."""
    if cells is None:
        return line, tr(f"line {line}", lang)
    number, name = cells(line)
    return number, tr(f"line {number} of cell %%puzzle {name}", lang)


# ------------------------------------------------------------------------------ text


def step_line(step: Step, lang: str | None = None) -> str:
    """``step 9  line 42  k=3  T.copy  A[64:128, 0:64] -> A_tile``: reads, then what it wrote; zeros said so."""
    reads = [touch_text(t, lang) for t in step.touches if t.mode == "read"]
    reads += [zero_text(t, lang) for t in step.touches if t.mode == "zero"]
    writes = [touch_text(t, lang) for t in step.touches if t.mode == "write"]
    parts = [tr(f"step {step.index}", lang)]
    if step.line:
        parts.append(tr(f"line {step.line}", lang))
    if step.loops:
        parts.append(loops_text(step))
    parts.append(op_name(step))
    moved = ", ".join(reads) + (" -> " if reads or writes else "") + ", ".join(writes)
    if moved:
        parts.append(moved.strip())
    return "  ".join(parts)


def text_lines(explanation: Explanation, lang: str | None = None) -> list[str]:
    """The steps as plain text for a terminal: the header, the marked step's sentence and element, then one
    line per step (the marked one starts with ``>>``), each source line printed where the line changes."""
    lines = [header_text(explanation, lang)]
    if explanation.problem:
        return lines + ["  " + tr(explanation.problem, lang)]
    if explanation.why:
        lines.append("  " + tr(explanation.why, lang))
    if explanation.target:
        lines.append("  " + target_text(explanation, lang))
    marked = marked_position(explanation)
    previous_line = None
    for position, step in enumerate(explanation.steps):
        lines.append((">> " if position == marked else "   ") + step_line(step, lang))
        if step.source and step.line != previous_line:
            lines.append(f"{'':6}| {step.source}")
        previous_line = step.line
    if not explanation.steps:
        lines.append("  " + tr("no steps recorded", lang))
    if explanation.truncated:
        lines.append("  " + tr(f"only the first {len(explanation.steps)} steps are kept", lang))
    return lines


# ------------------------------------------------------------------------------ pictures of global tensors


class TensorPicture:
    """How one global tensor is drawn in every step: its folded extent (grown to the farthest box read past its
    edge, so zeros outside show), the SVG size, and the rectangles a step's touches cover."""

    def __init__(self, name: str, shape: list[int], touches: list[Touch]):
        self.name, self.shape = name, list(shape)
        extent = list(shape) or [1]
        for touch in touches:
            for box in touch.boxes:
                for axis, (_, hi) in enumerate(box_pairs(box)[: len(extent)]):
                    extent[axis] = max(extent[axis], hi)
        self.extent = extent
        self.rows, self.cols = folded(extent)
        scale = min(PICTURE_W / self.cols, PICTURE_H / self.rows, MAX_ELEMENT_PX)
        self.width = max(self.cols * scale, MIN_SIDE)
        self.height = max(self.rows * scale, MIN_SIDE)
        self.thin = scale < 2.0  # elements under 2 px: outline every mark so a single element still shows

    def box_rects(self, box: list[int]) -> list[tuple[float, float, float, float]]:
        """(x, y, w, h) in element units of one box, folded: one rectangle per leading index above two axes."""
        pairs = box_pairs(box)
        if len(pairs) != len(self.extent):
            return []
        pairs = [(max(0, lo), max(lo, hi)) for lo, hi in pairs]
        if len(pairs) == 1:
            (c0, c1) = pairs[0]
            return [(c0, 0, c1 - c0, 1)] if c1 > c0 else []
        (r0, r1), (c0, c1) = pairs[-2], pairs[-1]
        if r1 <= r0 or c1 <= c0:
            return []
        leading = pairs[:-2]
        combos = math.prod(hi - lo for lo, hi in leading) if leading else 1
        if combos == 0:
            return []
        stride = self.extent[-2]
        if combos > MAX_RECTS:  # draw the rows' span instead
            first = _ravel([lo for lo, _ in leading], self.extent[:-2]) * stride + r0
            last = _ravel([hi - 1 for _, hi in leading], self.extent[:-2]) * stride + r1
            return [(c0, first, c1 - c0, last - first)]
        rects = []
        for index in itertools.product(*(range(lo, hi) for lo, hi in leading)):
            base = _ravel(list(index), self.extent[:-2]) * stride
            rects.append((c0, base + r0, c1 - c0, r1 - r0))
        return rects

    @property
    def pooling(self) -> tuple[int, int]:
        """Rows and columns of elements per cell of the pooled grid (at most MAX_GRID cells a side)."""
        return -(-self.rows // MAX_GRID), -(-self.cols // MAX_GRID)

    def pooled(self, touch: Touch) -> np.ndarray:
        """The elements a touch covers as a boolean grid of pooled cells (a cell is set if any element is)."""
        fr, fc = self.pooling
        grid = np.zeros((-(-self.rows // fr), -(-self.cols // fc)), dtype=bool)
        if touch.mask:
            mask = decode_mask(touch.mask, touch.shape)
            grown = np.zeros(self.extent, dtype=bool)
            grown[tuple(slice(0, n) for n in mask.shape)] = mask
            padded = np.zeros((grid.shape[0] * fr, grid.shape[1] * fc), dtype=bool)
            padded[: self.rows, : self.cols] = grown.reshape(self.rows, self.cols)
            grid |= padded.reshape(grid.shape[0], fr, grid.shape[1], fc).any(axis=(1, 3))
        for box in touch.boxes:
            for x, y, w, h in self.box_rects(box):
                grid[int(y) // fr : -(-int(y + h) // fr), int(x) // fc : -(-int(x + w) // fc)] = True
        return grid

    def grid_rects(self, grid: np.ndarray) -> list[tuple[float, float, float, float]]:
        """Runs of set cells per row, consecutive rows with the same runs merged, in element units."""
        fr, fc = self.pooling
        runs_of_rows: list[tuple[tuple[int, int], ...]] = []
        for row in grid:
            edges = np.flatnonzero(np.diff(np.concatenate([[0], row.astype(np.int8), [0]])))
            runs_of_rows.append(tuple(zip(edges[::2].tolist(), edges[1::2].tolist())))
        rects = []
        row = 0
        for runs, group in itertools.groupby(runs_of_rows):
            height = len(list(group))
            for c0, c1 in runs:
                x0, x1 = c0 * fc, min(self.cols, c1 * fc)
                y0, y1 = row * fr, min(self.rows, (row + height) * fr)
                rects.append((x0, y0, x1 - x0, y1 - y0))
            row += height
        return rects

    def mask_rects(self, mask: np.ndarray) -> list[tuple[float, float, float, float]]:
        """A mask's runs of touched elements per row, rows with the same runs merged, pooled to MAX_GRID a side."""
        return self.grid_rects(self.pooled(Touch(self.name, "global", list(mask.shape), "read", mask=_pack(mask))))

    def svg(self, touches: list[Touch], title: str, earlier: dict[str, np.ndarray] | None = None) -> str:
        """The tensor with this step's touches: untouched grey, outside the tensor white (its edge dashed), what
        earlier steps read and wrote (``earlier``: pooled grids by mode) pale, then zeros, reads and writes in
        their colours (a write on top, the edge under them all)."""
        parts = [
            f'<svg class="tensor" width="{self.width:.0f}" height="{self.height:.0f}" '
            f'viewBox="0 0 {self.cols} {self.rows}" preserveAspectRatio="none" shape-rendering="crispEdges" '
            f'role="img" aria-label="{html.escape(title)}">',
            f'<rect x="0" y="0" width="{self.cols}" height="{self.rows}" fill="{OUTSIDE}"/>',
        ]
        if self.extent == (self.shape or [1]) or len(self.shape) <= 2:  # the tensor, unless folding tears it
            rows, cols = folded(self.shape)
            inside = [(0, 0, cols, rows)]
        else:
            inside = self.box_rects([b for n in self.shape for b in (0, n)])
        parts += [_rect(r, UNTOUCHED) for r in inside]
        if self.extent != (self.shape or [1]) and len(self.shape) <= 2:  # the tensor's edge, where zeros lie past it
            rows, cols = folded(self.shape)
            parts.append(
                f'<rect x="0" y="0" width="{cols}" height="{rows}" fill="none" stroke="#111827" '
                'stroke-width="1.5" stroke-dasharray="4 2" vector-effect="non-scaling-stroke"/>'
            )
        for mode, colour in EARLIER.items():
            if earlier is not None and mode in earlier:
                rects = self.grid_rects(earlier[mode])
                parts += [_rect(r, colour) for r in rects] if len(rects) <= MAX_RECTS else []
        outline = ' stroke-width="1" vector-effect="non-scaling-stroke"' if self.thin else ""
        for mode in DRAWN:
            for touch in (t for t in touches if t.mode == mode):
                rects = self.mask_rects(decode_mask(touch.mask, touch.shape)) if touch.mask else []
                for box in touch.boxes:
                    rects += self.box_rects(box)
                colour = COLOURS[mode]
                extra = f' stroke="{colour}"{outline}' if outline else ""
                parts += [_rect(r, colour, extra) for r in rects]
        parts.append("</svg>")
        return "".join(parts)


def _pack(mask: np.ndarray) -> str:
    return base64.b64encode(np.packbits(mask.reshape(-1)).tobytes()).decode("ascii")


def _ravel(index: list[int], shape: list[int]) -> int:
    flat = 0
    for i, n in zip(index, shape):
        flat = flat * n + i
    return flat


def _rect(r: tuple[float, float, float, float], fill: str, extra: str = "") -> str:
    x, y, w, h = r
    return f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" fill="{fill}"{extra}/>'


def global_tensors(explanation: Explanation) -> dict[str, TensorPicture]:
    """Every global tensor the block touched, in the order it first did, each with its picture's geometry."""
    touches: dict[str, list[Touch]] = {}
    for step in explanation.steps:
        for touch in step.touches:
            if touch.scope == "global":
                touches.setdefault(touch.buffer, []).append(touch)
    return {name: TensorPicture(name, found[0].shape, found) for name, found in touches.items()}


# ------------------------------------------------------------------------------ heat maps of tiles

TILE_W, TILE_H = 320.0, 240.0
ONE_ROW_H = 14.0  # a one-row tile's cells are this tall, however narrow
TILE_CELL_MIN, TILE_CELL_MAX = 4.0, 18.0


def heat_colour(value: float, low: float, high: float) -> str:
    """Blue (negative) through white to red (positive) where the values straddle zero, else white to teal."""
    if low < 0 < high:
        t = max(-1.0, min(1.0, value / max(-low, high)))
        if t >= 0:
            return _mix((255, 255, 255), (220, 38, 38), t)
        return _mix((255, 255, 255), (37, 99, 235), -t)
    span = high - low
    t = 0.5 if span <= 0 else max(0.0, min(1.0, (value - low) / span))
    return _mix((255, 255, 255), (13, 148, 136), t)


def _mix(a: tuple[int, int, int], b: tuple[int, int, int], t: float) -> str:
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(a, b))


def tile_svg(tile: TileValues, lang: str | None = None, static: bool = True) -> str:
    """A written tile as a heat map; each cell's title holds its exact value (or, pooled, its patch's value of
    largest magnitude) and the elements it stands for. ``static=False``: an empty picture whose ``data-tile``
    holds the values, drawn the same way by the page's script when its step is shown (a page of many steps
    stays small: a cell drawn in SVG takes a hundred bytes, a value in JSON ten)."""
    rows = len(tile.values)
    cols = max((len(r) for r in tile.values), default=0)
    if not rows or not cols:
        return ""
    known = [v for r in tile.values for v in r if v is not None and math.isfinite(v)]
    low = tile.low if tile.low is not None else min(known, default=0.0)
    high = tile.high if tile.high is not None else max(known, default=0.0)
    size = max(TILE_CELL_MIN, min(TILE_CELL_MAX, TILE_W / cols, TILE_H / rows))
    tall = max(size, ONE_ROW_H) if rows == 1 else size
    cr, cc = (tile.cell + [1, 1])[:2]
    frows, fcols = folded(tile.shape)
    opening = (
        f'<svg class="tile" width="{cols * size:.0f}" height="{rows * tall:.0f}" role="img" '
        f'aria-label="{html.escape(tile.buffer)}"'
    )
    if not static:
        shown = [[None if v is None or not math.isfinite(v) else float(f"{v:.6g}") for v in row] for row in tile.values]
        data = {"n": tile.buffer, "s": tile.shape, "c": [cr, cc], "f": [frows, fcols], "lo": low, "hi": high}
        data |= {"z": size, "t": tall, "w": tr("never written", lang), "v": shown}
        return f'{opening} data-tile="{html.escape(json.dumps(data, separators=(",", ":")))}"></svg>'
    parts = [opening + ">"]
    for i, row in enumerate(tile.values):
        for j, value in enumerate(row):
            r0, c0 = i * cr, j * cc
            r1, c1 = min(frows, r0 + cr), min(fcols, c0 + cc)
            where = _cell_index(tile.shape, r0, r1, c0, c1)
            if value is None or not math.isfinite(value):
                fill, said = "#9ca3af", tr("never written", lang)
            else:
                fill = heat_colour(value, low, high)
                said = f"{value:.6g}"
            label = f"{tile.buffer}{where} = {said}" if (cr, cc) == (1, 1) else f"{tile.buffer}{where}: {said}"
            parts.append(
                f'<rect x="{j * size:g}" y="{i * tall:g}" width="{size:g}" height="{tall:g}" fill="{fill}">'
                f"<title>{html.escape(label)}</title></rect>"
            )
    parts.append("</svg>")
    return "".join(parts)


def _cell_index(shape: list[int], r0: int, r1: int, c0: int, c1: int) -> str:
    cols = _slice(c0, c1)
    if len(shape) <= 1:
        return f"[{cols}]"
    return f"[{_slice(r0, r1)}, {cols}]" if len(shape) == 2 else f"[row {_slice(r0, r1)}, {cols}]"


def tile_caption(tile: TileValues, lang: str | None = None) -> str:
    shape = "×".join(str(n) for n in tile.shape) or "1"
    parts = [f"{tile.buffer} ({tile.scope}, {shape})"]
    if tile.low is not None and tile.high is not None:
        parts.append(tr(f"values {tile.low:.4g} to {tile.high:.4g}", lang))
    if list(tile.cell) != [1, 1]:
        cell = "×".join(str(n) for n in tile.cell)
        parts.append(tr(f"a cell is {cell} elements (shown: the largest in magnitude)", lang))
    if len(tile.shape) > 2:
        parts.append(tr("leading axes folded into rows", lang))
    return "; ".join(parts)


# ------------------------------------------------------------------------------ HTML

CSS = """
.tl-explain{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans CJK SC",sans-serif;font-size:14px;
 color:#111827;line-height:1.4;max-width:1100px}
.tl-explain h2{font-size:17px;margin:4px 0 6px}
.tl-explain h3{font-size:15px;margin:2px 0 4px}
.tl-explain .why{background:#fef3c7;border-left:4px solid #f59e0b;padding:6px 10px;margin:6px 0}
.tl-explain .note{color:#4b5563;margin:4px 0}
.tl-explain .controls{display:none;gap:8px;align-items:center;margin:8px 0;position:sticky;top:0;
 background:#fff;padding:4px 0;z-index:1}
.tl-explain.js .controls{display:flex}
.tl-explain .controls input[type=range]{flex:1;max-width:520px}
.tl-explain .controls button{font-size:14px;padding:2px 10px}
.tl-explain .controls button.mark{background:#fef3c7;border:1px solid #f59e0b}
.tl-explain .legend{display:flex;flex-wrap:wrap;gap:14px;margin:6px 0;color:#374151}
.tl-explain .legend span.key{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px;
 border:1px solid #9ca3af}
.tl-explain section.step{border-top:1px solid #d1d5db;padding:8px 0}
.tl-explain.js section.step{border-top:none}
.tl-explain section.marked h3{color:#b45309}
.tl-explain .badge{background:#f59e0b;color:#fff;border-radius:3px;padding:0 6px;margin-left:8px;font-size:12px}
.tl-explain pre.src{background:#f3f4f6;padding:6px 8px;margin:4px 0;overflow-x:auto;font-size:13px}
.tl-explain .io{margin:4px 0;font-family:ui-monospace,monospace;font-size:13px}
.tl-explain .io b{font-family:system-ui,sans-serif;font-weight:600}
.tl-explain .pictures,.tl-explain .tiles{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
.tl-explain figure{margin:4px 0}
.tl-explain figure.idle{opacity:.6}
.tl-explain figcaption{font-size:12px;color:#374151;max-width:420px}
.tl-explain svg.tensor{border:1px solid #9ca3af;display:block}
.tl-explain svg.tile{border:1px solid #9ca3af;display:block}
"""

SCRIPT = """(function(){
var root=document.getElementById(%(id)s);if(!root)return;root.classList.add("js");
var steps=root.querySelectorAll("section.step"),slider=root.querySelector("input.slider"),
label=root.querySelector(".where");
function esc(t){return String(t).replace(/&/g,"&amp;").replace(/</g,"&lt;").replace(/>/g,"&gt;");}
function cut(lo,hi){return hi===lo+1?String(lo):lo+":"+hi;}
function colour(v,lo,hi){var to,t;if(lo<0&&0<hi){t=Math.max(-1,Math.min(1,v/Math.max(-lo,hi)));
to=t>=0?[220,38,38]:[37,99,235];t=Math.abs(t);}else{var span=hi-lo;t=span<=0?0.5:Math.max(0,Math.min(1,(v-lo)/span));
to=[13,148,136];}return "rgb("+to.map(function(x){return Math.round(255+(x-255)*t);}).join(",")+")";}
function draw(svg){var d=JSON.parse(svg.getAttribute("data-tile")),out=[];svg.removeAttribute("data-tile");
d.v.forEach(function(row,i){row.forEach(function(v,j){var r0=i*d.c[0],c0=j*d.c[1],
r1=Math.min(d.f[0],r0+d.c[0]),c1=Math.min(d.f[1],c0+d.c[1]),at=d.s.length<=1?"["+cut(c0,c1)+"]":
(d.s.length==2?"["+cut(r0,r1)+", "+cut(c0,c1)+"]":"[row "+cut(r0,r1)+", "+cut(c0,c1)+"]"),
said=v===null?d.w:String(v),one=d.c[0]==1&&d.c[1]==1;
out.push('<rect x="'+j*d.z+'" y="'+i*d.t+'" width="'+d.z+'" height="'+d.t+'" fill="'+
(v===null?"#9ca3af":colour(v,d.lo,d.hi))+'"><title>'+esc(d.n+at+(one?" = ":": ")+said)+"</title></rect>");});});
svg.innerHTML=out.join("");}
function show(i){i=Math.max(0,Math.min(steps.length-1,i));
steps[i].querySelectorAll("svg[data-tile]").forEach(draw);
for(var k=0;k<steps.length;k++){steps[k].hidden=(k!==i);}
slider.value=i;label.textContent=steps[i].getAttribute("data-label");}
slider.addEventListener("input",function(){show(+slider.value);});
root.querySelector("button.prev").addEventListener("click",function(){show(+slider.value-1);});
root.querySelector("button.next").addEventListener("click",function(){show(+slider.value+1);});
var mark=root.querySelector("button.mark");if(mark)mark.addEventListener("click",function(){show(%(marked)d);});
root.addEventListener("keydown",function(e){if(e.target===slider)return;
if(e.key==="ArrowLeft")show(+slider.value-1);if(e.key==="ArrowRight")show(+slider.value+1);});
var asked=/step=(\\d+)/.exec(window.location.hash||"");show(asked?+asked[1]:%(start)d);})();"""


def _legend(lang: str | None) -> str:
    keys = [
        (COLOURS["read"], tr("read", lang)),
        (COLOURS["write"], tr("written", lang)),
        (COLOURS["zero"], tr("read past the edge (zeros)", lang)),
        (EARLIER["read"], tr("read by an earlier step", lang)),
        (EARLIER["write"], tr("written by an earlier step", lang)),
        (UNTOUCHED, tr("not touched yet", lang)),
        (OUTSIDE, tr("outside the tensor", lang)),
    ]
    items = "".join(f'<span><span class="key" style="background:{c}"></span>{html.escape(t)}</span>' for c, t in keys)
    scale = [
        (heat_colour(-1.0, -1.0, 1.0), tr("tiles: negative", lang)),
        ("#ffffff", tr("zero", lang)),
        (heat_colour(1.0, -1.0, 1.0), tr("positive", lang)),
        ("#9ca3af", tr("never written", lang)),
    ]
    tiles = "".join(f'<span><span class="key" style="background:{c}"></span>{html.escape(t)}</span>' for c, t in scale)
    return f'<div class="legend">{items}</div><div class="legend">{tiles}</div>'


def _io(step: Step, lang: str | None) -> str:
    rows = []
    for mode, word in (("read", "read"), ("zero", "read past the edge"), ("write", "wrote")):
        said = [(zero_text if mode == "zero" else touch_text)(t, lang) for t in step.touches if t.mode == mode]
        if said:
            rows.append(f"<div><b>{html.escape(tr(word, lang))}:</b> {html.escape(', '.join(said))}</div>")
    return f'<div class="io">{"".join(rows)}</div>' if rows else ""


def _step_section(
    step: Step,
    position: int,
    total: int,
    marked: bool,
    pictures: dict[str, TensorPicture],
    explanation: Explanation,
    lang: str | None,
    earlier: dict[str, dict[str, np.ndarray]] | None = None,
    static_tiles: bool = True,
    cells: Cells | None = None,
) -> str:
    heading = [tr(f"step {step.index}", lang)]
    number, label = line_label(step.line, lang, cells) if step.line else (0, "")
    if step.line:
        heading.append(label)
    if step.loops:
        heading.append(loops_text(step, " = "))
    heading.append(op_name(step))
    label = f"{position + 1} / {total}"
    badge = f'<span class="badge">{html.escape(tr("the wrong element came from here", lang))}</span>' if marked else ""
    out = [
        f'<section class="step{" marked" if marked else ""}" data-step="{position}" data-label="{html.escape(label)}">',
        f"<h3>{html.escape(' · '.join(heading))}{badge}</h3>",
    ]
    if step.source:
        shown = f"{number:>4} | " if step.line else ""
        out.append(f'<pre class="src">{html.escape(shown + step.source)}</pre>')
    out.append(_io(step, lang))
    figures = []
    for name, picture in pictures.items():
        touches = [t for t in step.touches if t.buffer == name and t.scope == "global"]
        counts = [
            tr(f"{word} {sum(t.count for t in touches if t.mode == mode)}", lang)
            for mode, word in (("read", "read"), ("write", "wrote"), ("zero", "zeros"))
            if any(t.mode == mode for t in touches)
        ]
        shape = "×".join(str(n) for n in picture.shape) or "1"
        caption = f"{name} ({shape})" + (": " + ", ".join(counts) if counts else "")
        drawn = picture.svg(touches, caption, (earlier or {}).get(name))
        idle = "" if touches else ' class="idle"'
        figures.append(f"<figure{idle}>{drawn}<figcaption>{html.escape(caption)}</figcaption></figure>")
    if figures:
        out.append(f'<div class="pictures">{"".join(figures)}</div>')
    tiles = [
        f"<figure>{tile_svg(tile, lang, static_tiles)}"
        f"<figcaption>{html.escape(tile_caption(tile, lang))}</figcaption></figure>"
        for tile in step.tiles
    ]
    if tiles:
        out.append(f'<div class="tiles">{"".join(tiles)}</div>')
    out.append("</section>")
    return "".join(out)


def html_fragment(
    explanation: Explanation, lang: str | None = None, view_id: str | None = None, cells: Cells | None = None
) -> str:
    """The view as one ``<div>`` (scoped CSS, a script that finds it by id) for a notebook's output area.
    ``cells``: the record's lines are a notebook's module's; each step is labelled with its cell and line there."""
    lang = lang or current()
    view_id = view_id or f"tl-explain-{secrets.token_hex(6)}"
    steps = explanation.steps
    start, marked = start_position(explanation), marked_position(explanation)
    out = [f"<style>{CSS}</style>", f'<div class="tl-explain" id="{view_id}" tabindex="0">']
    out.append(f"<h2>{html.escape(header_text(explanation, lang))}</h2>")
    if explanation.problem:
        out.append(f'<p class="note">{html.escape(tr(explanation.problem, lang))}</p></div>')
        return "".join(out)
    if explanation.target:
        out.append(f'<p class="note">{html.escape(target_text(explanation, lang))}</p>')
    if explanation.why:  # above the slider: it stays in view at every step
        out.append(f'<div class="why">{html.escape(tr(explanation.why, lang))}</div>')
    if explanation.truncated:
        out.append(f'<p class="note">{html.escape(tr(f"only the first {len(steps)} steps are kept", lang))}</p>')
    if not steps:
        out.append(f'<p class="note">{html.escape(tr("no steps recorded", lang))}</p></div>')
        return "".join(out)
    previous, following = html.escape(tr("previous", lang)), html.escape(tr("next", lang))
    back = html.escape(tr("the marked step", lang))
    out.append(
        '<div class="controls">'
        f'<button type="button" class="prev">◀ {previous}</button>'
        f'<input type="range" class="slider" min="0" max="{len(steps) - 1}" value="{start}" '
        f'aria-label="{html.escape(tr("step", lang))}" list="{view_id}-marks">'
        f'<datalist id="{view_id}-marks"><option value="{max(marked, 0)}"></option></datalist>'
        f'<button type="button" class="next">{following} ▶</button><span class="where"></span>'
        + (f'<button type="button" class="mark">{back}</button>' if marked >= 0 else "")
        + "</div>"
    )
    out.append(_legend(lang))
    pictures = global_tensors(explanation)
    earlier: dict[str, dict[str, np.ndarray]] = {}  # tensor -> mode -> pooled cells touched by the steps so far
    for position, step in enumerate(steps):
        static = position in (start, marked)  # the step the page opens at draws its tiles without the script
        out.append(
            _step_section(
                step, position, len(steps), position == marked, pictures, explanation, lang, earlier, static, cells
            )
        )
        for touch in step.touches:
            if touch.scope == "global" and touch.mode in EARLIER and touch.buffer in pictures:
                grid = pictures[touch.buffer].pooled(touch)
                seen = earlier.setdefault(touch.buffer, {})
                seen[touch.mode] = seen[touch.mode] | grid if touch.mode in seen else grid
    out.append("</div>")
    out.append(f"<script>{SCRIPT % {'id': _js_string(view_id), 'start': start, 'marked': max(marked, 0)}}</script>")
    return "".join(out)


def _js_string(text: str) -> str:
    """A JavaScript string literal that cannot close the script element."""
    return json.dumps(text).replace("<", "\\u003c").replace(">", "\\u003e")


def html_page(explanation: Explanation, lang: str | None = None) -> str:
    """The view as one self-contained HTML document (nothing fetched)."""
    lang = lang or current()
    title = html.escape(header_text(explanation, lang))
    return (
        f'<!DOCTYPE html>\n<html lang="{"zh-CN" if lang == "zh_CN" else "en"}"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{title}</title>'
        "<style>body{margin:16px;background:#fff}</style></head><body>"
        f"{html_fragment(explanation, lang, view_id='tl-explain')}</body></html>\n"
    )
