"""Compare: a kernel's output against the reference, returning reasons rather than a bool."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from grader.spec import Tolerance

SHOW_FIRST = 5


@dataclass
class Comparison:
    ok: bool
    total: int
    wrong: int
    never_written: int
    max_abs_error: float
    max_rel_error: float
    details: list[str] = field(default_factory=list)
    hint: str = ""


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
) -> Comparison:
    """Elementwise check of ``actual`` (any dtype) against ``expected`` (float64).

    NaN and Inf never pass. Elements still holding the poison (NaN) are counted as never
    written. ``tile`` gives the block size along each dimension (None: not tiled), used to
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
        )
    got = actual.detach().to(torch.float64)
    want = expected.detach().to(torch.float64)
    error = (got - want).abs()
    scale = want.pow(2).mean().sqrt().item() if want.numel() else 0.0
    allowed = tolerance.atol * scale + tolerance.rtol * want.abs()
    bad = ~(error <= allowed)  # NaN compares False, so NaN is bad
    bad |= ~torch.isfinite(got)
    nan = torch.isnan(got)
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
        never_written=int(nan.sum().item()),
        max_abs_error=max_abs,
        max_rel_error=max_rel,
    )
    if wrong == 0:
        return result
    shape = tuple(want.shape)
    result.details.append(f"{wrong} of {total} elements of {name} are wrong")
    first = torch.nonzero(bad.flatten()).flatten()[:SHOW_FIRST].tolist()
    for flat in first:
        where = ", ".join(str(i) for i in _index(flat, shape))
        result.details.append(
            f"{name}[{where}] = {_fmt(got.flatten()[flat].item())}, expected {_fmt(want.flatten()[flat].item())}"
        )
    tiles = _wrong_tiles(bad, tile)
    if tiles:
        result.details.append(tiles[0])
    result.hint = _hint(result, bad, tile, tiles[1] if tiles else False)
    return result


def _wrong_tiles(bad: torch.Tensor, tile: tuple[int | None, ...]) -> tuple[str, bool] | None:
    """Summarise wrong tiles; the bool says whether only partial (tail) tiles are wrong."""
    if not tile or len(tile) != bad.dim():
        return None
    sizes = [t if t else extent for t, extent in zip(tile, bad.shape)]
    grid = [math.ceil(extent / t) for extent, t in zip(bad.shape, sizes)]
    padded = torch.zeros([g * t for g, t in zip(grid, sizes)], dtype=torch.bool)
    padded[tuple(slice(0, e) for e in bad.shape)] = bad
    view_shape = []
    for g, t in zip(grid, sizes):
        view_shape += [g, t]
    per_tile = padded.reshape(view_shape)
    for axis in range(len(sizes) - 1, -1, -1):
        per_tile = per_tile.any(dim=2 * axis + 1)
    wrong_tiles = int(per_tile.sum().item())
    total_tiles = per_tile.numel()
    partial = torch.zeros_like(per_tile)
    for axis, (extent, t) in enumerate(zip(bad.shape, sizes)):
        if extent % t:
            index = [slice(None)] * len(sizes)
            index[axis] = -1
            partial[tuple(index)] = True
    only_tail = bool(partial.any()) and not bool((per_tile & ~partial).any())
    coords = torch.nonzero(per_tile).tolist()[:SHOW_FIRST]
    listed = ", ".join(str(c[0]) if len(c) == 1 else "(" + ", ".join(map(str, c)) + ")" for c in coords)
    more = "" if wrong_tiles <= SHOW_FIRST else ", ..."
    text = f"wrong tiles: {wrong_tiles} of {total_tiles} ({listed}{more}); tile = {'x'.join(map(str, sizes))}"
    return text, only_tail


def _hint(result: Comparison, bad: torch.Tensor, tile: tuple[int | None, ...], only_tail: bool) -> str:
    if result.never_written == result.total:
        return "Nothing was written to the output: is the final T.copy into it there, at the right offset?"
    if only_tail and result.never_written == result.wrong:
        return (
            "The partial tiles at the edge were never written: launch enough blocks to cover the "
            "output, T.ceildiv(size, BLOCK) rather than size // BLOCK."
        )
    if only_tail:
        return (
            "Only the partial tiles at the edge are wrong: the sizes are not multiples of the "
            "block, so every global read and write must be guarded (T.copy does this for you)."
        )
    if result.never_written:
        return (
            f"{result.never_written} elements are NaN: never written (the output starts as NaN), or "
            "computed from something never initialised. Check the grid covers the whole output "
            "(T.ceildiv), the store offsets, and that the accumulator is cleared."
        )
    if result.max_rel_error < 0.05 and not result.never_written:
        return (
            "The errors are small but larger than rounding allows: is a sum accumulated in "
            "float16? Accumulate in float32 and cast once at the end."
        )
    if result.wrong >= 0.9 * result.total:
        return (
            "Nearly every element is wrong: check the accumulator is cleared before the loop, "
            "accumulates in float32, and that tile offsets use the block index times the block size."
        )
    return "Some elements are wrong: compare the tile offsets and loop bounds with the spec."
