import math

import torch

from grader.outcome import CauseKind
from grader.pipeline.compare import compare
from grader.spec import DEFAULT_TOLERANCES

FP16 = DEFAULT_TOLERANCES["float16"]


def reference(shape=(100, 70), seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64) * 30


def test_fp16_rounding_of_the_exact_answer_passes():
    want = reference()
    got = want.to(torch.float16)
    result = compare("C", got, want, FP16)
    assert result.ok and result.wrong == 0 and result.details == []
    assert 0 < result.max_abs_error < 0.05


def test_fp16_accumulation_sized_error_fails_with_precision_hint():
    want = reference()
    noise = torch.randn(want.shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    got = (want + noise * 0.005 * want.pow(2).mean().sqrt()).to(torch.float16)
    result = compare("C", got, want, FP16)
    assert not result.ok
    assert 0 < result.wrong < result.total
    assert "float16" in result.hint and "float32" in result.hint


def test_nan_and_inf_never_pass_and_unwritten_is_counted():
    want = reference((8, 8))
    got = want.clone().to(torch.float16)
    got[0, 0] = float("nan")
    got[7, 7] = float("inf")
    result = compare("C", got, want, FP16)
    assert not result.ok
    assert result.wrong == 2
    assert result.never_written == 1
    assert math.isinf(result.max_abs_error)
    assert "C[0, 0] = nan" in result.details[1]
    assert "C[7, 7] = inf" in result.details[2]


def test_wrong_count_and_first_indices_are_reported():
    want = reference((10, 10))
    got = want.clone()
    got[3, 4] += 100
    got[9, 0] -= 100
    result = compare("C", got, want, FP16)
    assert result.wrong == 2
    assert result.details[0] == "2 of 100 elements of C are wrong"
    assert result.details[1].startswith("C[3, 4] = ")
    assert result.details[2].startswith("C[9, 0] = ")


def test_only_tail_tiles_wrong_gets_the_tail_hint():
    want = reference((100, 70))
    got = want.clone()
    got[96:, :] = float("nan")  # rows past the last full 32-row tile were never written
    result = compare("C", got, want, FP16, tile=(32, 64))
    assert not result.ok
    assert "wrong tiles: 2 of 8 ((3, 0), (3, 1))" in " ".join(result.details)
    assert "partial tiles at the edge were never written" in result.hint
    assert "T.ceildiv" in result.hint


def test_wrong_values_in_the_tail_only_get_the_guard_hint():
    want = reference((100,))
    got = want.clone()
    got[96:] += 50  # computed, but wrongly, only in the partial last tile
    result = compare("C", got, want, FP16, tile=(32,))
    assert "wrong tiles: 1 of 4 (3)" in " ".join(result.details)
    assert "must be guarded" in result.hint


def test_nothing_written():
    want = reference((16,))
    got = torch.full((16,), float("nan"), dtype=torch.float16)
    result = compare("C", got, want, FP16, tile=(8,))
    assert result.never_written == 16
    assert "Nothing was written" in result.hint


def test_shape_mismatch_is_a_reason_not_an_exception():
    result = compare("C", torch.zeros(4, 5), reference((5, 4)), FP16)
    assert not result.ok
    assert "shape (4, 5), expected (5, 4)" in result.details[0]


def test_every_element_wrong():
    want = reference((64, 64))
    result = compare("C", -want, want, FP16, tile=(32, 32))
    assert result.wrong > 0.9 * result.total  # a few near-zero elements pass within atol
    assert "Nearly every element is wrong" in result.hint
    assert "wrong tiles: 4 of 4" in " ".join(result.details)


def test_all_zeros_against_real_values_says_the_result_never_reaches_the_output():
    want = reference((64,))
    result = compare("C", torch.zeros(64, dtype=torch.float16), want, FP16)
    assert result.hint.startswith("Every element of C is 0, whatever the inputs: the result never reaches")


def test_all_zeros_against_tiny_expected_values_is_an_underflow_not_a_missing_store():
    want = reference((64,)) * 1e-7  # products of 1e-4-sized inputs: below float16's smallest normal
    result = compare("C", torch.zeros(64, dtype=torch.float16), want, FP16)
    assert not result.ok
    assert "never reaches the output" not in result.hint
    assert result.hint.startswith("Every element of C is 0, and the expected values are tiny (the largest is ")
    assert "underflowed" in result.hint and "float32" in result.hint


def test_a_few_unwritten_elements_and_the_rest_right_say_never_written():
    want = reference((100,))
    got = want.clone()
    got[10:20] = float("nan")  # inside the grid, not at its edge
    result = compare("C", got, want, FP16, tile=(32,))
    assert result.hint.startswith("10 elements still hold the NaN the output starts as and the rest are right")
    assert "T.ceildiv" in result.hint


def test_nan_mixed_with_wrong_values_points_at_an_uninitialised_buffer():
    want = reference((100,))
    got = want.clone()
    got[10:20] = float("nan")
    got[50:60] += 100
    result = compare("C", got, want, FP16, tile=(32,))
    assert result.hint.startswith("10 elements are NaN and 10 others have wrong values")
    assert "T.clear" in result.hint


def test_wrong_values_without_nan_get_no_nan_hint():
    want = reference((100,))
    got = want.clone()
    got[10:20] += 100
    result = compare("C", got, want, FP16, tile=(32,))
    assert "NaN" not in result.hint
    assert result.hint.startswith("Some elements are wrong")


def test_a_nan_the_kernel_stored_is_told_from_the_poison():
    """The output starts as a NaN with its own bits (grader.pipeline.inputs.POISON_BITS): an element that still
    holds them was never written; a NaN the kernel computed and stored is not called unwritten."""
    from grader.pipeline.inputs import POISON_BITS, unwritten

    want = reference((16,))
    got = torch.empty(16, dtype=torch.float16)
    width, bits = POISON_BITS[torch.float16]
    got.view(width).fill_(bits)
    result = compare("C", got, want, FP16, tile=(8,), never_written=unwritten(got))
    assert result.never_written == 16 and result.hint.startswith("Nothing was written")
    got[:] = float("nan")  # stored by the kernel: the arithmetic's own NaN
    result = compare("C", got, want, FP16, tile=(8,), never_written=unwritten(got))
    assert result.never_written == 0 and result.nan == 16
    assert result.hint.startswith("Every element of C is NaN, and the kernel stored them")
    assert result.cause.kind == CauseKind.NAN_SPREAD
    got.view(width)[:8] = bits  # half never written, half stored NaN
    result = compare("C", got, want, FP16, tile=(8,), never_written=unwritten(got))
    assert (result.never_written, result.nan) == (8, 16)
