"""Messages that come from evidence (issue 25, items 6 and 9): each sentence a learner reads names what the
grader saw, and none claims what it did not see. Fast tests build the evidence by hand and call the code
that turns it into words; a few run `python -m grader` end to end on learner-style kernels in a copy of a
puzzle."""

from __future__ import annotations

import torch

from grader.compare import compare
from grader.spec import DEFAULT_TOLERANCES

FP16 = DEFAULT_TOLERANCES["float16"]


def values(shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64) * 30


# ------------------------------------------------------------------ compare: the pattern of wrong elements


def test_a_guard_one_short_is_not_blamed_on_the_grid():
    # `if i < N - 1` with a T.ceildiv grid: the last element of the partial last tile is never written,
    # the rest of that tile is. The grid is not short, so T.ceildiv is not the advice.
    want = values((1000,))
    got = want.to(torch.float16)
    got[-1] = float("nan")
    result = compare("C", got, want, FP16, tile=(256,))
    assert result.unwritten_end == (0, 1)
    assert result.hint.startswith("The last 1 element(s) of C were never written, though their block wrote")
    assert "`i < N - 1`" in result.hint
    assert "ceildiv" not in result.hint


def test_a_guard_one_short_on_whole_tiles_says_the_same():
    want = values((4096,))
    got = want.to(torch.float16)
    got[-1] = float("nan")
    assert "a guard or loop bound stops short" in compare("C", got, want, FP16, tile=(1024,)).hint


def test_a_short_guard_along_the_columns_names_the_dimension():
    want = values((40, 70))
    got = want.to(torch.float16)
    got[:, -2:] = float("nan")
    result = compare("C", got, want, FP16, tile=(32, 64))
    assert result.unwritten_end == (1, 2)
    assert result.hint.startswith("The last 2 element(s) of C along dimension 1 were never written")


def test_a_whole_partial_tile_unwritten_still_asks_for_ceildiv():
    want = values((1000,))
    got = want.to(torch.float16)
    got[768:] = float("nan")  # 1000 // 256 = 3 blocks: the fourth, partial tile never runs
    result = compare("C", got, want, FP16, tile=(256,))
    assert "T.ceildiv(size, BLOCK) rather than size // BLOCK" in result.hint


def test_an_unwritten_end_without_a_known_tile_does_not_guess_which_bound():
    want = values((100,))
    got = want.to(torch.float16)
    got[-3:] = float("nan")
    hint = compare("C", got, want, FP16).hint
    assert hint.startswith("The last 3 element(s) of C were never written and everything before them is right")
    assert "ceildiv" not in hint


def test_an_output_full_of_inf_is_an_overflow_not_a_small_error():
    want = values((256,))
    got = torch.full((256,), float("inf"), dtype=torch.float16)
    got[::2] = float("-inf")
    result = compare("C", got, want, FP16, tile=(128,))
    assert result.infinite == 256
    assert "small" not in result.hint and "rounding" not in result.hint
    assert result.hint.startswith("256 element(s) of C are infinite: a value grew past the largest its type holds")
    assert "65504 in float16" in result.hint


def test_a_few_infinite_elements_are_counted():
    want = values((256,))
    got = want.to(torch.float16)
    got[7] = float("inf")
    result = compare("C", got, want, FP16)
    assert result.infinite == 1 and result.hint.startswith("1 element(s) of C are infinite")


def test_when_every_tile_is_partial_the_edge_is_not_blamed():
    # N = 20 with BLOCK = 32: the one tile is partial, so "only the partial tiles are wrong" says nothing.
    want = values((20,))
    got = want.to(torch.float16)
    got[3] += 50
    result = compare("C", got, want, FP16, tile=(32,))
    assert "partial tiles" not in result.hint
    assert result.hint.startswith("Some elements are wrong")


def test_only_the_partial_tile_wrong_beside_right_whole_tiles_still_says_so():
    want = values((100,))
    got = want.to(torch.float16)
    got[97] += 50
    assert compare("C", got, want, FP16, tile=(32,)).hint.startswith("Only the partial tiles at the edge are wrong")
