"""A picture per graded kernel: which elements of each global tensor one block of the reference reads and writes
(``python -m grader pictures``, notebooks/pictures/pNN_KERNEL.svg).

Each picture comes from the simulator's record of the reference kernel (solutions/), as ``--explain`` makes it
(grader.pipeline.explain.record), on the kernel's smallest simulated case (named at the top): block (0, ...)
and, where the grid has more than one block, the last block. A row of panels per block, a panel per global tensor
(inputs, then outputs): light cells were read, dark cells written. A 1-D tensor is a strip; a higher rank folds
its axes into rows and columns (``as_rows``); a panel longer than ``MAX_CELLS`` pools elements into cells, square
ones for a matrix (a cell is coloured when the block touched any of its elements; the title says how many a cell
holds). A workspace the kernel allocates in global memory is not drawn; a view of an argument is drawn on it.

The SVG text is written here, deterministic to the byte (no timestamps, no random ids), so that a change shows in
a diff. Each file names, in a comment, the hash of what it was drawn from (the kernel's source, the case, this
drawing's version): ``--check --fast`` compares only that, ``--check`` draws everything again and compares bytes.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import html
import json
import math
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from grader.course.notebooks import picture_name, pictures_folder
from grader.discover import course_root, load_module, load_puzzle, normalize_id, puzzle_files
from grader.pipeline.explain.record import Recorder

VERSION = 3  # the drawing's version: bump it when the SVG's layout changes, so that --check --fast sees it
STRIP = 12  # the height of a 1-D tensor's strip, in pixels
MAX_CELLS = 64  # a panel has at most this many cells a side (larger tensors pool elements into cells)
PANEL = 128  # a panel's longest side, in pixels (cells are whole pixels, 2 to 12 of them)
COLOURS = (("#9ecae1", "#08519c"), ("#fdae6b", "#a63603"))  # (read, written) for the first and the second block
EMPTY, FRAME, TEXT = "#f0f0f0", "#969696", "#252525"
HASH = re.compile(r"<!-- drawn from sha256:([0-9a-f]{64}) -->")


# ------------------------------------------------------------------------------------------ recording


@dataclass
class BlockAccess:
    """What one block touched in each global tensor: name -> boolean mask of the tensor's shape."""

    block: tuple[int, ...]
    reads: dict[str, torch.Tensor]
    writes: dict[str, torch.Tensor]


class AccessRecorder(Recorder):
    """The explain recorder, keeping only which global elements each wanted block read and wrote (no step
    list worth keeping, no tile values): every block still runs, as in the graded run."""

    def __init__(self, func: Any, tensors: dict[str, torch.Tensor], blocks: Sequence[tuple[int, ...]]):
        super().__init__(func, tensors, want=tuple(blocks[0]), keep=(0, sys.maxsize))
        self.wanted = {tuple(b) for b in blocks}
        self.access = {tuple(b): BlockAccess(tuple(b), {}, {}) for b in blocks}
        # each kernel argument's data -> (its name, its shape)
        self.arguments = {b.data: (b.name, tuple(tensors[b.name].shape)) for b in func.buffer_map.values()}

    def recording(self) -> bool:
        return bool(self.block_vars) and self.block() in self.wanted

    def touch(self, buffer: Any, scope: str, shape: list[int], mode: str, boxes=(), mask=None, count=0) -> None:
        if scope != "global" or mode not in ("read", "write") or buffer.data not in self.arguments:
            return  # drawn: the kernel's arguments only (no block-local buffer, no workspace; "zero" reads lie past
            # the tensor's edge)
        seen = torch.zeros(shape, dtype=torch.bool) if mask is None else mask.clone()
        for box in boxes:
            seen[tuple(slice(box[2 * i], box[2 * i + 1]) for i in range(len(shape)))] = True
        # a T.reshape or T.view of a kernel argument is another buffer over the same data: drawn as the argument
        name, tensor_shape = self.arguments[buffer.data]
        access = self.access[self.block()]
        masks = access.reads if mode == "read" else access.writes
        masks.setdefault(name, torch.zeros(tensor_shape, dtype=torch.bool))
        masks[name] |= on_tensor(seen, tensor_shape)

    def guess_line(self, node: Any, kind: str) -> int:
        return 0  # the picture has no steps to show, so no source lines to find

    def finish_touches(self, step: Any) -> None:
        self.pending = {}
        self.steps.clear()  # the steps themselves are not needed here


def on_tensor(view: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    """Elements touched through a view (row-major over the same memory, as admit allows) as a mask of the
    tensor's own shape; a view as a wider or narrower type covers several elements of the tensor, or a part."""
    flat, count = view.reshape(-1), math.prod(shape)
    if flat.numel() < count:  # a wider type: each element of the view covers several of the tensor
        flat = flat.repeat_interleave(count // flat.numel())
    elif flat.numel() > count:  # a narrower type: an element of the tensor is touched where any part of it is
        flat = flat.reshape(count, -1).any(dim=1)
    return flat.reshape(shape)


def smallest_case(kernel: Any) -> Any:
    """The kernel's simulated, visible case with the fewest elements (its sizes' product; first on a tie),
    among those with no size below 4 where there are any."""
    from grader.pipeline.hidden import is_hidden

    cases = [c for c in kernel.cases if c.simulate and not is_hidden(c.name)]
    # a size of 1 to 3 (one row, three columns) draws a sliver: take such a case only when every case has one
    roomy = [c for c in cases if min(c.sizes.values(), default=0) >= 4] or cases
    return min(roomy, key=lambda c: math.prod(c.sizes.values()))


def record(tir: Any, kernel: Any, case: Any, blocks: Sequence[tuple[int, ...]] | None = None) -> list[BlockAccess]:
    """Simulate the kernel's TIR on the case and return what each of ``blocks`` touched (default: block 0 and,
    where there is more than one block, the last one)."""
    from grader.pipeline.explain import grid_of
    from grader.pipeline.inputs import make_inputs, poisoned_outputs

    grid = grid_of(tir)
    if blocks is None:
        last = tuple(n - 1 for n in grid)
        blocks = [tuple(0 for _ in grid)] + ([last] if any(last) else [])
    inputs, outputs = make_inputs(kernel, case, "cpu", 0), poisoned_outputs(kernel, case, "cpu")
    tensors = {t.name: x for t, x in zip(kernel.inputs + kernel.outputs, inputs + outputs)}
    previous = torch.get_num_threads()
    torch.set_num_threads(1)  # as the simulator runs: tiny ops are faster single-threaded on a loaded machine
    try:
        recorder = AccessRecorder(tir, tensors, blocks)
        recorder.run()
    finally:
        torch.set_num_threads(previous)
    for access in recorder.access.values():  # a tensor the block never touched is an empty panel
        for spec, x in zip(kernel.inputs + kernel.outputs, inputs + outputs):
            access.reads.setdefault(spec.name, torch.zeros(x.shape, dtype=torch.bool))
            access.writes.setdefault(spec.name, torch.zeros(x.shape, dtype=torch.bool))
    return [recorder.access[tuple(b)] for b in blocks]


# ------------------------------------------------------------------------------------------ drawing


def as_rows(mask: torch.Tensor) -> torch.Tensor:
    """A mask as the 2-D grid a panel shows: 1-D as one row; a higher rank split between two axes, those before
    the split folded into rows and those after it into columns, where the grid comes out closest to square
    (a 72 x 40 x 5 weight as 72 rows of 200, a 1 x 100 x 64 tensor as 100 rows of 64)."""
    if mask.dim() <= 1:
        return mask.reshape(1, -1)
    shape = list(mask.shape)
    splits = range(1, len(shape))
    split = min(splits, key=lambda k: abs(math.log(max(1, math.prod(shape[:k])) / max(1, math.prod(shape[k:])))))
    return mask.reshape(math.prod(shape[:split]), math.prod(shape[split:]))


def pooled(grid: torch.Tensor, cell: tuple[int, int]) -> torch.Tensor:
    """Each cell x cell patch as one cell: True where any element of the patch is."""
    rows, cols = grid.shape
    padded = torch.zeros(-(-rows // cell[0]) * cell[0], -(-cols // cell[1]) * cell[1], dtype=torch.bool)
    padded[:rows, :cols] = grid
    r, c = padded.shape[0] // cell[0], padded.shape[1] // cell[1]
    return padded.reshape(r, cell[0], c, cell[1]).any(dim=3).any(dim=1)


def pool_of(shape: Sequence[int]) -> tuple[int, int]:
    """How many elements a side a panel's cell holds: a strip's along it, a matrix's the same both ways (so that
    the panel keeps the matrix's shape)."""
    rows, cols = as_rows(torch.zeros(tuple(shape), dtype=torch.bool)).shape
    side = max(1, -(-max(rows, cols) // MAX_CELLS))
    return (1, side) if len(shape) <= 1 else (side, side)


def runs(row: list[bool]) -> list[tuple[int, int]]:
    """(start, length) of each run of True in a row."""
    out, start = [], None
    for index, value in enumerate([*row, False]):
        if value and start is None:
            start = index
        elif not value and start is not None:
            out.append((start, index - start))
            start = None
    return out


def _rects(grid: torch.Tensor, x: int, y: int, size: tuple[int, int], colour: str) -> list[str]:
    """A rectangle per run of True cells, runs of the same columns in consecutive rows merged into one."""
    boxes: list[list[int]] = []  # [row, start, length, rows]
    open_runs: dict[tuple[int, int], list[int]] = {}
    for r, row in enumerate(grid.tolist()):
        found = {}
        for start, length in runs(row):
            box = open_runs.get((start, length))
            if box is not None and box[0] + box[3] == r:
                box[3] += 1
            else:
                box = [r, start, length, 1]
                boxes.append(box)
            found[(start, length)] = box
        open_runs = found
    return [
        f'<rect x="{x + start * size[0]}" y="{y + r * size[1]}" width="{length * size[0]}" height="{rows * size[1]}" '
        f'fill="{colour}"/>'
        for r, start, length, rows in boxes
    ]


def _title(name: str, shape: Sequence[int], cell: tuple[int, int]) -> str:
    """The tensor's name and shape, and, where a cell holds several elements, how many ("▪ 4" or "▪ 3×3")."""
    text = f"{name} {'×'.join(str(n) for n in shape)}"
    if cell != (1, 1):
        text += f" (▪ {cell[1]})" if len(shape) <= 1 else f" (▪ {cell[0]}×{cell[1]})"
    return text


def svg(accesses: Sequence[BlockAccess], tensors: Sequence[tuple[str, Sequence[int]]], case: str, stamp: str) -> str:
    """The picture: the case's name on top, then a row of panels per block (its index at the left), a panel per
    tensor (its name and shape above it); ``stamp`` is the hash of what it was drawn from."""
    layouts = []
    for name, shape in tensors:
        cell = pool_of(shape)
        rows, cols = pooled(as_rows(torch.zeros(tuple(shape), dtype=torch.bool)), cell).shape
        side = max(2, min(12, PANEL // max(rows, cols)))
        size = (side, STRIP if len(shape) <= 1 else side)  # a cell's width and height in pixels
        layouts.append((name, shape, cell, rows, cols, size))
    label_width, gap, title_height = 64, 16, 36
    row_height = max(rows * size[1] for *_, rows, _, size in layouts)
    widths = [max(cols * size[0], 7 * len(_title(name, shape, cell))) for name, shape, cell, _, cols, size in layouts]
    width = label_width + sum(widths) + gap * len(widths)
    height = title_height + len(accesses) * (row_height + gap)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="11">',
        f"<!-- drawn from sha256:{stamp} -->",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="4" y="12" fill="{FRAME}">{html.escape(case)}</text>',
    ]
    x = label_width
    for (name, shape, cell, *_), panel_width in zip(layouts, widths):
        out.append(f'<text x="{x}" y="30" fill="{TEXT}">{html.escape(_title(name, shape, cell))}</text>')
        x += panel_width + gap
    for index, access in enumerate(accesses):
        y = title_height + index * (row_height + gap)
        read, written = COLOURS[index % len(COLOURS)]
        block = ", ".join(str(b) for b in access.block) + ("," if len(access.block) == 1 else "")
        out.append(f'<text x="4" y="{y + 12}" fill="{written}">({block})</text>')
        x = label_width
        for (name, shape, cell, rows, cols, size), panel_width in zip(layouts, widths):
            out += _rects(pooled(as_rows(torch.ones(tuple(shape), dtype=torch.bool)), cell), x, y, size, EMPTY)
            reads = pooled(as_rows(access.reads[name]), cell)
            writes = pooled(as_rows(access.writes[name]), cell)
            out += _rects(reads & ~writes, x, y, size, read)
            out += _rects(writes, x, y, size, written)
            out.append(
                f'<rect x="{x}" y="{y}" width="{cols * size[0]}" height="{rows * size[1]}" fill="none" '
                f'stroke="{FRAME}" stroke-width="1"/>'
            )
            x += panel_width + gap
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------------ per kernel


@dataclass(frozen=True)
class Subject:
    """One graded kernel as its picture is drawn: where its reference is, which case, and the hash of both."""

    puzzle_id: str
    kernel: Any
    case: Any
    module_path: Path

    @property
    def name(self) -> str:
        return picture_name(self.puzzle_id, self.kernel.function)

    def stamp(self) -> str:
        """sha256 of what the picture is drawn from: the kernel function's source in the reference, the case's
        sizes and parameters, the tensors' names, and VERSION."""
        text = self.module_path.read_text()
        source = next(
            (
                ast.get_source_segment(text, node) or ""
                for node in ast.parse(text).body
                if isinstance(node, ast.FunctionDef) and node.name == self.kernel.function
            ),
            "",
        )
        what = {
            "version": VERSION,
            "source": source,
            "case": [self.case.name, dict(self.case.sizes), {k: repr(v) for k, v in self.case.params.items()}],
            "tensors": [t.name for t in self.kernel.inputs + self.kernel.outputs],
        }
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()


def subjects(ids: Sequence[str] = (), root: Path | None = None) -> list[Subject]:
    """Every graded kernel of every puzzle (or of these ids), with its reference and its smallest case."""
    found = puzzle_files((root or course_root()) / "solutions")
    out = []
    for puzzle_id in sorted(found):
        if ids and puzzle_id not in ids:
            continue
        puzzle = load_puzzle(load_module(found[puzzle_id]))
        out += [Subject(puzzle_id, k, smallest_case(k), found[puzzle_id]) for k in puzzle.kernels]
    return out


def draw(subject: Subject) -> str:
    """The SVG text of a kernel's picture, drawn from a simulation of its reference."""
    from grader.pipeline.trace import kernel_function, trace_tir

    kernel, case, path = subject.kernel, subject.case, subject.module_path
    tir = trace_tir(kernel_function(load_module(path), kernel), kernel, case, path)
    accesses = record(tir, kernel, case)
    tensors = [(t.name, list(accesses[0].reads[t.name].shape)) for t in kernel.inputs + kernel.outputs]
    return svg(accesses, tensors, case.name, subject.stamp())


def stored_stamp(path: Path) -> str | None:
    match = HASH.search(path.read_text()) if path.is_file() else None
    return match.group(1) if match else None


# ------------------------------------------------------------------------------------------ command


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m grader pictures",
        description="Draw notebooks/pictures/pNN_KERNEL.svg: what the reference kernel's blocks read and write.",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="only these puzzles (default: all)")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 naming each stale picture")
    p.add_argument(
        "--fast",
        action="store_true",
        help="with --check: compare each picture's recorded hash of its inputs, without simulating",
    )
    p.add_argument("--out", type=Path, metavar="DIR", help="where the pictures go (default: notebooks/pictures/)")
    return p


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(list(argv))
    ids = [normalize_id(i) or i for i in args.ids]
    out = args.out if args.out is not None else pictures_folder()
    chosen = subjects(ids)
    if not chosen:
        print(f"grader pictures: no graded kernels for {', '.join(ids) or 'any puzzle'}")
        return 2
    started = time.perf_counter()
    problems, written = [], 0
    for subject in chosen:
        path = out / subject.name
        if args.check and args.fast:
            if stored_stamp(path) != subject.stamp():
                problems.append(f"{path}: {'missing' if not path.is_file() else 'stale (drawn from other inputs)'}")
            continue
        text = draw(subject)
        if args.check:
            if not path.is_file() or path.read_text() != text:
                problems.append(f"{path}: {'missing' if not path.is_file() else 'stale (differs when drawn again)'}")
        elif not path.is_file() or path.read_text() != text:
            out.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            written += 1
    known = {s.name for s in chosen}
    if args.check and not ids:
        orphans = [path for path in sorted(out.glob("p*.svg")) if path.name not in known]
        problems += [f"{path}: no graded kernel has this picture" for path in orphans]
    seconds = time.perf_counter() - started
    if args.check:
        for problem in problems:
            print(problem)
        if problems:
            print("draw them again with: python -m grader pictures" + (" " + " ".join(ids) if ids else ""))
            return 1
        print(f"{len(chosen)} picture(s) in {out} match their kernels ({seconds:.1f} s)")
        return 0
    print(f"{len(chosen)} picture(s) in {out} ({written} written, {len(chosen) - written} unchanged; {seconds:.1f} s)")
    return 0
