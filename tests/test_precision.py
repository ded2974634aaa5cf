"""The fp16-sum measurements behind the README's "Sums kept in fp16" and puzzle 06's note: a sum split
over the threads as T.reduce_sum adds stays inside the fp16 tolerance, one serial fp16 chain does not."""

from __future__ import annotations

import torch

from scripts.precision_fp16_sums import gemv, ratio, row_sum_fp16, softmax


def _rows(n: int, seed: int) -> torch.Tensor:
    return torch.randn(64, n, generator=torch.Generator().manual_seed(seed)).half()


def test_the_emulated_thread_order_sums_every_element_once():
    values = torch.ones(3, 1000).half()
    assert row_sum_fp16(values, 128).tolist() == [1000.0] * 3
    assert row_sum_fp16(values, 1).tolist() == [1000.0] * 3


def test_softmax_with_an_fp16_reduce_sum_passes_and_one_fp16_chain_fails():
    for n in (129, 1000):
        x = _rows(n, n)
        ref = torch.softmax(x.double(), dim=-1)
        assert ratio(softmax(x, None), ref) < 0.5  # the fp32 kernel the puzzle teaches
        assert ratio(softmax(x, 128), ref) < 1.0  # fp16 exponentials and sum, threads then butterfly
        assert ratio(softmax(x, 1), ref) > 1.0  # one fp16 running sum along the row


def test_gemv_with_fp16_sums_fails_at_the_large_cases_length():
    a, b = _rows(4096, 1), _rows(4096, 2)[0]
    ref = a.double() @ b.double()
    assert ratio(gemv(a, b, None), ref) < 0.5
    assert ratio(gemv(a, b, 128), ref) > 1.0
