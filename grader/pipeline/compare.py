"""Compare: a kernel's output against the reference, returning reasons rather than a bool."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from grader.outcome import Cause, CauseKind
from grader.spec import Tolerance

SHOW_FIRST = 5
MAP_CELLS = 64  # a tile map has at most this many cells along an axis; larger grids are merged
MAP_ROWS_SHOWN = 16  # rows of a 2-D tile map printed as text


@dataclass
class Comparison:
    ok: bool
    total: int
    wrong: int
    never_written: int  # elements still holding the poison the output starts as
    max_abs_error: float
    max_rel_error: float
    details: list[str] = field(default_factory=list)
    infinite: int = 0  # elements that are +inf or -inf
    nan: int = 0  # NaN elements, never written or stored
    shape: tuple[int, ...] = ()
    # (axis, k): the wrong elements are exactly the last k positions along one axis, all still NaN
    unwritten_end: tuple[int, int] | None = None
    hint: str = ""
    cause: Cause | None = None  # the hint's cause, typed (None when every element is right)
    # Which tiles of the launch grid are wrong, for drawing: {"tile": [...], "wrong": [[0/1, ...]] or [0/1, ...],
    # "grid": tiles per axis, "cell": tiles per map cell along each axis (above 1 when merged)}
    tile_map: dict | None = None
    first_wrong: int | None = None  # the row-major flat index of the first wrong element (--explain starts there)


def _index(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for extent in reversed(shape):
        out.append(flat % extent)
        flat //= extent
    return tuple(reversed(out))


def _fmt(value: float) -> str:
    return f"{value:.5g}"


def compare(
    name: str,
    actual: torch.Tensor,
    expected: torch.Tensor,
    tolerance: Tolerance,
    tile: tuple[int | None, ...] = (),
    never_written: torch.Tensor | None = None,
) -> Comparison:
    """Elementwise check of ``actual`` (any dtype) against ``expected`` (float64).

    NaN and Inf never pass. Elements still holding the poison are counted as never written:
    ``never_written`` says which (grader.pipeline.inputs.unwritten, from the poison's bits), else every NaN is
    taken for one. ``tile`` gives the block size along each dimension (None: not tiled), used to
    say which tiles of the launch grid are wrong.
    """
    if tuple(actual.shape) != tuple(expected.shape):
        return Comparison(
            ok=False,
            total=expected.numel(),
            wrong=expected.numel(),
            never_written=0,
            max_abs_error=math.inf,
            max_rel_error=math.inf,
            details=[f"{name} has shape {tuple(actual.shape)}, expected {tuple(expected.shape)}"],
            hint="Check the shape given to T.empty for the output.",
            cause=Cause(
                CauseKind.WRONG_SHAPE,
                {"output": name, "shape": list(actual.shape), "expected": list(expected.shape)},
            ),
        )
    got = actual.detach().to(torch.float64)
    want = expected.detach().to(torch.float64)
    error = (got - want).abs()
    scale = want.pow(2).mean().sqrt().item() if want.numel() else 0.0
    allowed = tolerance.atol * scale + tolerance.rtol * want.abs()
    bad = ~(error <= allowed)  # NaN compares False, so NaN is bad
    bad |= ~torch.isfinite(got)
    nan = torch.isnan(got)
    never = nan if never_written is None else never_written.to(nan.device) & nan
    finite_error = torch.where(torch.isfinite(error), error, torch.zeros_like(error))
    max_abs = error.max().item() if error.numel() else 0.0
    rel = finite_error / want.abs().clamp_min(max(scale, 1e-30))
    max_rel = rel.max().item() if rel.numel() else 0.0
    if bad.any() and not torch.isfinite(error[bad]).all():
        max_abs = math.inf
    wrong = int(bad.sum().item())
    total = want.numel()
    result = Comparison(
        ok=wrong == 0,
        total=total,
        wrong=wrong,
        never_written=int(never.sum().item()),
        nan=int(nan.sum().item()),
        max_abs_error=max_abs,
        max_rel_error=max_rel,
        infinite=int(torch.isinf(got).sum().item()),
        shape=tuple(want.shape),
    )
    if wrong == 0:
        return result
    shape = tuple(want.shape)
    result.details.append(f"{wrong} of {total} elements of {name} are wrong")
    first = torch.nonzero(bad.flatten()).flatten()[:SHOW_FIRST].tolist()
    result.first_wrong = first[0]
    for flat in first:
        where = ", ".join(str(i) for i in _index(flat, shape))
        result.details.append(
            f"{name}[{where}] = {_fmt(got.flatten()[flat].item())}, expected {_fmt(want.flatten()[flat].item())}"
        )
    tiles = _wrong_tiles(bad, tile)
    if tiles:
        result.details += tiles.lines
        result.tile_map = tiles.tile_map
    if bool((got == 0).all()):
        largest = want.abs().max().item()
        if largest < TINY:
            result.hint, kind, facts = _underflow_hint(name, largest), CauseKind.UNDERFLOW, {"largest": largest}
        else:
            result.hint, kind, facts = _zero_hint(name), CauseKind.ZEROS, {}
    else:
        result.unwritten_end = _unwritten_end(bad, never)
        result.hint, kind, facts = _hint(name, actual.dtype, result, tile, tiles.only_tail if tiles else False)
        if not result.never_written and not result.infinite and not (tiles and tiles.only_tail):
            clamp = _clamp_hint(name, got, want, bad)
            if clamp is not None:
                result.hint, kind, facts = clamp
        if kind == CauseKind.WRONG_VALUES and not result.nan and not result.infinite:
            shifted = _constant_error(name, got, want, bad, allowed)
            if shifted is not None:
                result.hint, kind, facts = shifted
    where = {"tiles": tiles.facts} if tiles else {}
    result.cause = Cause(kind, {"output": name, **facts, **where})
    return result


CLAMP_MIN_WRONG = 4  # fewer wrong elements than this say too little to name a clamp


Said = tuple[str, CauseKind, dict]  # a hint, and its cause's kind and facts


def _clamp_hint(name: str, got: torch.Tensor, want: torch.Tensor, bad: torch.Tensor) -> Said | None:
    """A sentence when the wrong elements are exactly a clamp's, read from the values. With b the smallest
    expected value (a ReLU's 0; or the largest, for a clamp from above): every wrong element expected at b
    holds a value past it, the unclamped one (the clamp is missing); or every wrong one holds b where a
    value inside the range was expected (a clamp applied to an input or a partial result); or both at
    once (T.min where T.max belongs). None when the pattern does not hold."""
    if int(bad.sum().item()) < CLAMP_MIN_WRONG:
        return None
    expected, actual = want[bad], got[bad]
    for low in (True, False):
        bound = (want.min() if low else want.max()).item()
        beyond = actual < bound if low else actual > bound
        inside = expected > bound if low else expected < bound
        unclamped = (expected == bound) & beyond
        cut = (actual == bound) & inside
        b, op, other = _fmt(bound), "T.max" if low else "T.min", "T.min" if low else "T.max"
        side = {"bound": bound, "low": low}  # the clamp's bound, and whether it clamps from below
        if bool(unclamped.all()) and low and bound == 0:
            return (
                f"Every wrong element of {name} should be 0 and holds a negative value instead, while the others "
                "are right: the negative values were not clamped. Apply the ReLU, T.max(x, 0), to the result "
                "before storing it.",
                CauseKind.CLAMP,
                {**side, "pattern": "missing"},
            )
        if bool(unclamped.all()):
            return (
                f"Every wrong element of {name} should be {b} and holds a value past it instead, while the others "
                f"are right: the values past {b} were not clamped. Apply the clamp, {op}(x, {b}), to the result "
                "before storing it.",
                CauseKind.CLAMP,
                {**side, "pattern": "missing"},
            )
        if bool(cut.all()):
            return (
                f"Every wrong element of {name} holds {b} where a value past it was expected, while the others are "
                f"right: a clamp at {b} cuts values the result keeps. Clamp the final result once, not an input or a "
                "partial result (a product of two negatives is positive).",
                CauseKind.CLAMP,
                {**side, "pattern": "cut"},
            )
        if bool((unclamped | cut).all()) and bool(unclamped.any()) and bool(cut.any()):
            kept = ~bad & (want > bound if low else want < bound)  # right, and inside the range
            if bool((got[kept] == bound).all()):  # every value inside was cut (the right ones are near b): min for max
                return (
                    f"The wrong elements of {name} are clamped on the wrong side: those that should be {b} hold the "
                    f"value past it, and every one past {b} holds {b}. Use {op}(x, {b}), not {other}.",
                    CauseKind.CLAMP,
                    {**side, "pattern": "wrong_side"},
                )
            return (
                f"The wrong elements of {name} are a clamp's: some that should be {b} hold the value past it, some "
                f"that should be past {b} hold {b}. The clamp is applied to the wrong value (an input or a partial "
                "result): clamp the final result once, before storing it.",
                CauseKind.CLAMP,
                {**side, "pattern": "misplaced"},
            )
    return None


RUN_MIN = 4  # a run of fewer elements with one error says too little to name a shared term


def _constant_error(
    name: str, got: torch.Tensor, want: torch.Tensor, bad: torch.Tensor, allowed: torch.Tensor
) -> Said | None:
    """A sentence when most elements are wrong and the error (actual - expected) is the same, within the
    tolerance, along runs of g >= RUN_MIN elements of one axis (a whole row, or groups of g columns): a term that
    each run shares is wrong (a zero point, an offset, a bias, the value of another group) while the part that
    varies element by element is right. None when the pattern does not hold."""
    if got.dim() == 0 or int(bad.sum().item()) * 2 < bad.numel():
        return None
    error = got - want
    for axis in reversed(range(got.dim())):
        extent = got.shape[axis]
        if extent < 2 * RUN_MIN:
            continue
        step = (error.narrow(axis, 1, extent - 1) - error.narrow(axis, 0, extent - 1)).abs()
        slack = allowed.narrow(axis, 1, extent - 1) + allowed.narrow(axis, 0, extent - 1)
        jumps = ~(step <= slack)
        others = [d for d in range(got.dim()) if d != axis]
        where = (jumps.any(dim=others) if others else jumps).nonzero().flatten() + 1  # the runs' starts
        run = extent
        for start in where.tolist():
            run = math.gcd(run, start)
        if run < RUN_MIN:
            continue
        first = int(torch.nonzero(bad.flatten())[0].item())
        index = _index(first, tuple(got.shape))
        at = f"{name}[{', '.join(map(str, index))}]"
        off = _fmt(error.flatten()[first].item())
        return (
            f"The error is the same along runs of {run} elements of dimension {axis} of {name} ({at} is off by "
            f"{off}): the part of the formula that varies element by element is right, and a term each run shares is "
            "wrong (an offset, a zero point, a bias, a value of the wrong group).",
            CauseKind.SHIFTED,
            {"axis": axis, "run": run},
        )
    return None


def _unwritten_end(bad: torch.Tensor, nan: torch.Tensor) -> tuple[int, int] | None:
    """(axis, k) when the wrong elements are exactly the last k positions along one axis (every element
    there, nothing else) and all of them still hold the NaN the output starts as; else None."""
    if not bool((bad == nan).all()):
        return None
    for axis, extent in enumerate(bad.shape):
        others = [d for d in range(bad.dim()) if d != axis]
        along = bad.all(dim=others) if others else bad  # positions along the axis that are wrong everywhere
        anywhere = bad.any(dim=others) if others else bad
        k = int(along.sum().item())
        if 0 < k < extent and bool(along[extent - k :].all()) and not bool(anywhere[: extent - k].any()):
            return axis, k
    return None


# Values below this are "tiny": the product of two of them is under float16's smallest normal number
# (6.1e-05), so a 16-bit intermediate flushes them towards 0. An all-zero output is then more likely an
# underflow than a missing store.
TINY = torch.finfo(torch.float16).tiny ** 0.5


def _zero_hint(name: str) -> str:
    return (
        f"Every element of {name} is 0, whatever the inputs: the result never reaches the output. Check "
        f"that it is computed from the inputs and stored into {name} (T.copy from the result tile, or "
        f"{name}[...] = ...), not into a copy of it."
    )


def _underflow_hint(name: str, largest: float) -> str:
    return (
        f"Every element of {name} is 0, and the expected values are tiny (the largest is {_fmt(largest)}): "
        "they most likely underflowed to 0 on the way. float16 holds nothing below 6e-08 and loses "
        "precision below 6.1e-05: cast the inputs to float32 (T.cast) before multiplying or summing, and "
        "cast to float16 once, when storing."
    )


@dataclass
class TileSummary:
    lines: list[str]  # for the learner: the wrong tiles listed, then a map of wrong and right ones
    only_tail: bool  # only partial (edge) tiles are wrong
    tile_map: dict | None  # None when the grid has more than two axes of several tiles (not drawn)
    facts: dict  # for the cause: {"tile": sizes, "wrong": wrong tiles, "total": tiles}


def _wrong_tiles(bad: torch.Tensor, tile: tuple[int | None, ...]) -> TileSummary | None:
    """Which tiles of the launch grid hold a wrong element, and which are right."""
    if not tile or len(tile) != bad.dim():
        return None
    sizes = [t if t else extent for t, extent in zip(tile, bad.shape)]
    per_tile = _any_per_block(bad, sizes)
    wrong_tiles = int(per_tile.sum().item())
    total_tiles = per_tile.numel()
    partial = torch.zeros_like(per_tile)
    for axis, (extent, t) in enumerate(zip(bad.shape, sizes)):
        if extent % t:
            index = [slice(None)] * len(sizes)
            index[axis] = -1
            partial[tuple(index)] = True
    # Partial tiles alone are wrong while some whole tile is right (when every tile is partial, as for a size
    # below the block, that says nothing about the edge).
    only_tail = bool(partial.any()) and bool((~partial).any()) and not bool((per_tile & ~partial).any())
    coords = torch.nonzero(per_tile).tolist()[:SHOW_FIRST]
    listed = ", ".join(str(c[0]) if len(c) == 1 else "(" + ", ".join(map(str, c)) + ")" for c in coords)
    more = "" if wrong_tiles <= SHOW_FIRST else ", ..."
    text = f"wrong tiles: {wrong_tiles} of {total_tiles} ({listed}{more}); tile = {'x'.join(map(str, sizes))}"
    # A map has one or two axes. A grid of more has its axes of one tile left out of the map (an attention
    # output's head axis when there is one head, its untiled last axis); one still above two is not drawn.
    axes = list(range(per_tile.dim()))
    if len(axes) > 2:
        axes = [a for a in axes if per_tile.shape[a] > 1] or [axes[-1]]
    facts = {"tile": sizes, "wrong": wrong_tiles, "total": total_tiles}
    if len(axes) > 2:
        return TileSummary([text], only_tail, None, facts)
    drawn = per_tile.reshape([per_tile.shape[a] for a in axes])
    cells = [math.ceil(g / MAP_CELLS) for g in drawn.shape]
    shown = _any_per_block(drawn, cells) if any(c > 1 for c in cells) else drawn
    grid = list(drawn.shape)
    tile_map = {"tile": [sizes[a] for a in axes], "grid": grid, "cell": cells, "wrong": shown.int().tolist()}
    return TileSummary([text, *_map_lines(shown, cells)], only_tail, tile_map, facts)


def _any_per_block(flags: torch.Tensor, block: list[int]) -> torch.Tensor:
    """OR of ``flags`` over blocks of the given size (the last block along an axis may be partial)."""
    grid = [math.ceil(extent / b) for extent, b in zip(flags.shape, block)]
    padded = torch.zeros([g * b for g, b in zip(grid, block)], dtype=torch.bool)
    padded[tuple(slice(0, e) for e in flags.shape)] = flags
    view_shape = []
    for g, b in zip(grid, block):
        view_shape += [g, b]
    merged = padded.reshape(view_shape)
    for axis in range(len(block) - 1, -1, -1):
        merged = merged.any(dim=2 * axis + 1)
    return merged


def _map_lines(shown: torch.Tensor, cells: list[int]) -> list[str]:
    """The tile map as text: x for a wrong tile, . for a right one; rows of tiles top to bottom."""
    merged = f", each mark {'x'.join(map(str, cells))} tiles" if any(c > 1 for c in cells) else ""
    if shown.dim() == 1:
        return [f"tile map (x wrong, . right{merged}): " + "".join("x" if w else "." for w in shown.tolist())]
    if shown.dim() != 2:
        return []
    rows = ["  " + "".join("x" if w else "." for w in row) for row in shown.tolist()]
    more = [f"  ... {len(rows) - MAP_ROWS_SHOWN} more rows"] if len(rows) > MAP_ROWS_SHOWN else []
    return [f"tile map (x wrong, . right{merged}; a row of marks per row of tiles):", *rows[:MAP_ROWS_SHOWN], *more]


def _hint(name: str, dtype: torch.dtype, result: Comparison, tile: tuple[int | None, ...], only_tail: bool) -> Said:
    """The likely cause, read from the pattern of the wrong elements. The output starts filled with NaN,
    so NaN marks an element never written (or computed from an uninitialised buffer); a finite wrong
    value marks an element written with the wrong number; an infinite one, a value that overflowed."""
    never, values = result.never_written, result.wrong - result.never_written
    if never == result.total:
        return (
            "Nothing was written to the output: every element still holds the NaN it starts as. Is the final "
            "T.copy into it there, at the right offset?",
            CauseKind.NOTHING_WRITTEN,
            {},
        )
    if result.nan == result.total:
        return (
            f"Every element of {name} is NaN, and the kernel stored them: a NaN in the arithmetic reached every "
            "element (a buffer read before anything set it, 0 * inf, inf - inf, the exponent of a score the "
            "running max has not caught up with). --explain shows the step the first one came from.",
            CauseKind.NAN_SPREAD,
            {"nan": result.nan, "values": 0},
        )
    if result.infinite:
        kind = str(dtype).removeprefix("torch.")
        largest = f" ({torch.finfo(dtype).max:g} in {kind})" if dtype.is_floating_point else ""
        return (
            f"{result.infinite} element(s) of {name} are infinite: a value grew past the largest its type "
            f"holds{largest}, or was divided by 0. Compute in float32 (T.cast) and cast once when storing; "
            "check divisors and what goes into T.exp.",
            CauseKind.OVERFLOW,
            {"infinite": result.infinite},
        )
    if result.unwritten_end is not None:
        axis, k = result.unwritten_end
        extent, block = result.shape[axis], tile[axis] if axis < len(tile) else None
        last = extent - (extent - 1) // block * block if block else None  # the last tile's length on this axis
        where = f" along dimension {axis}" if len(result.shape) > 1 else ""
        end = {"axis": axis, "count": k}
        if last is not None and k < last:  # the block that owns them ran and wrote the rest of its tile
            return (
                f"The last {k} element(s) of {name}{where} were never written, though their block wrote the rest "
                "of its tile: a guard or loop bound stops short of the end (`i < N - 1` or `range(N - 1)` where "
                "`i < N` or `range(N)` is meant).",
                CauseKind.UNWRITTEN_END,
                {**end, "in_tile": True},
            )
        if last is None:
            return (
                f"The last {k} element(s) of {name}{where} were never written and everything before them is right: "
                "a guard, a loop bound or the number of blocks stops short of the end.",
                CauseKind.UNWRITTEN_END,
                {**end, "in_tile": False},
            )
    if only_tail and values == 0:
        return (
            "The partial tiles at the edge were never written: launch enough blocks to cover the "
            "output, T.ceildiv(size, BLOCK) rather than size // BLOCK.",
            CauseKind.UNCOVERED_TAIL,
            {},
        )
    if only_tail:
        return (
            "Only the partial tiles at the edge are wrong: the sizes are not multiples of the "
            "block, so every global read and write must be guarded (T.copy does this for you).",
            CauseKind.UNGUARDED_TAIL,
            {},
        )
    if never and values == 0:
        return (
            f"{never} elements still hold the NaN the output starts as and the rest are right: they were never "
            "written. Check that the grid covers the whole output (T.ceildiv) and the store offsets.",
            CauseKind.UNWRITTEN,
            {"count": never},
        )
    nan, values = result.nan, result.wrong - result.nan
    if nan:
        return (
            f"{nan} elements are NaN and {values} others have wrong values: NaN that spreads through the "
            "arithmetic comes from a buffer read before anything wrote it, or from 0 / 0 and inf - inf (a row "
            "of scores masked to minus infinity everywhere has no max and a sum of 0). Check that the "
            "accumulator is cleared (T.clear), every tile is loaded before it is used and every row keeps a "
            "score, then the offsets.",
            CauseKind.NAN_SPREAD,
            {"nan": nan, "values": values},
        )
    if result.max_rel_error < 0.05:
        return (
            "The errors are small but larger than rounding allows: is a sum accumulated in "
            "float16? Accumulate in float32 and cast once at the end.",
            CauseKind.IMPRECISE,
            {"max_rel_error": result.max_rel_error},
        )
    if result.wrong >= 0.9 * result.total:
        return (
            "Nearly every element is wrong: check the formula against the spec, that each element is "
            "computed from the inputs at its own index (tile offsets are the block index times the block "
            "size), and that any accumulator is cleared before its loop and is float32.",
            CauseKind.WRONG_VALUES,
            {"wrong": result.wrong, "total": result.total, "most": True},
        )
    return (
        "Some elements are wrong: compare the tile offsets and loop bounds with the spec.",
        CauseKind.WRONG_VALUES,
        {"wrong": result.wrong, "total": result.total, "most": False},
    )
