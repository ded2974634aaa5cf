"""Property tests of the reference solutions: for random sizes within each puzzle's stated bounds, the
kernel simulated on the CPU agrees with its torch reference.

The block parameters are those of the kernel's first simulated case; the sizes are drawn around them
(tails, single partial tiles, sizes below one tile) and obey the preconditions of the puzzle's docstring.
The simulator is called directly, no process is started, and the examples are few and derandomized so the
file takes about a minute on a 2-core machine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grader.discover import load_module, load_puzzle, puzzle_files
from grader.pipeline.compare import compare
from grader.pipeline.inputs import make_inputs, poisoned_outputs, reference_outputs
from grader.pipeline.simulate import simulate
from grader.spec import Case, Kernel
from tests.conftest import ROOT

Sizes = Callable[[st.DrawFn, Mapping[str, int]], dict[str, int]]


def _vector(draw: st.DrawFn, p: Mapping[str, int]) -> dict[str, int]:
    block = p.get("BLOCK", p.get("THREADS", 256))
    return {"N": draw(st.integers(1, 3 * block + 7))}


def _rows_cols(max_rows: int, max_cols: int) -> Sizes:
    return lambda draw, p: {"M": draw(st.integers(1, max_rows)), "N": draw(st.integers(1, max_cols))}


def _row_in_one_tile(draw: st.DrawFn, p: Mapping[str, int]) -> dict[str, int]:
    return {"M": draw(st.integers(1, 40)), "N": draw(st.integers(1, p["BLOCK_N"]))}  # N <= BLOCK_N


def _attention(draw: st.DrawFn, p: Mapping[str, int]) -> dict[str, int]:
    return {"M": draw(st.integers(1, 80)), "N": draw(st.integers(1, 140)), "D": 64}  # D is 64 in every case


def _heads_attention(draw: st.DrawFn, p: Mapping[str, int]) -> dict[str, int]:
    return {"H": draw(st.integers(1, 3)), **_attention(draw, p)}  # heads side by side (puzzle 08)


def _gemv(draw: st.DrawFn, p: Mapping[str, int]) -> dict[str, int]:
    return {"M": draw(st.integers(1, 150)), "K": draw(st.integers(1, 300))}


def _gemm(draw: st.DrawFn, p: Mapping[str, int]) -> dict[str, int]:
    return {"M": draw(st.integers(1, 140)), "N": draw(st.integers(1, 140)), "K": draw(st.integers(1, 140))}


def _conv1d(draw: st.DrawFn, p: Mapping[str, int]) -> dict[str, int]:
    # K odd; L > BLOCK_L so the grid has two blocks along L (see the puzzle's note on negative indices)
    return {"L": draw(st.integers(p["BLOCK_L"] + 1, 2 * p["BLOCK_L"] + 50)), "K": draw(st.sampled_from([1, 3, 5, 9]))}


def _conv_channels(draw: st.DrawFn, p: Mapping[str, int]) -> dict[str, int]:
    return {
        "C_in": draw(st.integers(1, 24)),
        "L": draw(st.integers(p["BLOCK_L"] + 1, p["BLOCK_L"] + 90)),
        "C_out": draw(st.integers(1, 70)),
        "K": draw(st.sampled_from([1, 3, 5, 7])),
    }


def _int4(with_m: bool) -> Sizes:
    def sizes(draw: st.DrawFn, p: Mapping[str, int]) -> dict[str, int]:
        groups = draw(st.integers(1, 3))
        group = p["BLOCK_K"] * draw(st.integers(1, 2))  # G is a multiple of BLOCK_K
        k = groups * group
        out = {"N": draw(st.integers(1, 100)), "K": k, "KH": k // 2, "NG": groups}
        return {"M": draw(st.integers(1, 80)), **out} if with_m else out

    return sizes


def _int4_gemv(draw: st.DrawFn, p: Mapping[str, int]) -> dict[str, int]:
    # dequant_gemv: K a multiple of BLOCK_K, G any multiple of 8 that divides K (a group may end inside a step)
    k = p["BLOCK_K"] * draw(st.integers(1, 2))
    group = draw(st.sampled_from([g for g in range(8, k + 1, 8) if k % g == 0]))
    n = draw(st.integers(1, 3 * p["BLOCK_N"] + 5))
    return {"M": draw(st.integers(1, 3)), "N": n, "K": k, "KH": k // 2, "NG": k // group}


SIZES: dict[str, Sizes] = {
    "copy_serial": _vector,
    "copy_threads": _vector,
    "copy_tiles": _vector,
    "add": _vector,
    "mul_relu": _vector,
    "add_fragments": _vector,
    "outer_add": _rows_cols(60, 200),
    "outer_add_fragments": _rows_cols(60, 200),
    "mul_relu_forward": _rows_cols(100, 150),
    "mul_relu_backward": _rows_cols(100, 150),
    "row_sum": _row_in_one_tile,
    "row_sum_tiled": _rows_cols(40, 600),
    "softmax": _row_in_one_tile,
    "softmax_online": _rows_cols(40, 400),
    "attention_two_pass": _attention,
    "flash_attention": _attention,
    "flash_attention_tensor_cores": _heads_attention,
    "flash_attention_causal": _heads_attention,  # M > N and M < N both drawn: the loop bound and the mask
    "gemv": _gemv,
    "matmul_cuda_cores": _gemm,
    "matmul_naive": _gemm,
    "matmul_shared": _gemm,
    "matmul_pipelined": _gemm,
    "matmul_tuned": _gemm,
    "matmul_streamk": _gemm,
    "conv1d_naive": _conv1d,
    "conv1d_channels": _conv_channels,
    "conv1d_im2col": _conv_channels,
    "conv1d_implicit": _conv_channels,
    "conv1d_channels_last": _conv_channels,
    "dequantize_int4": _int4(with_m=False),
    "dequant_matmul": _int4(with_m=True),
    "dequant_matmul_decode": _int4(with_m=True),
    "dequant_gemv": _int4_gemv,
}


@cache
def _solutions() -> dict[str, tuple[Any, Kernel]]:
    found = {}
    for path in puzzle_files(ROOT / "solutions").values():
        module = load_module(path)
        for kernel in load_puzzle(module).kernels:
            found[kernel.function] = (getattr(module, kernel.function), kernel)
    return found


def test_every_reference_kernel_has_a_size_strategy():
    assert set(_solutions()) == set(SIZES)


@pytest.mark.parametrize("name", sorted(SIZES))
@settings(max_examples=5, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_reference_kernels_agree_with_torch_at_random_sizes(name: str, data: st.DataObject):
    function, kernel = _solutions()[name]
    params = next(c for c in kernel.cases if c.simulate).params
    sizes = data.draw(st.composite(lambda draw: SIZES[name](draw, params))(), label="sizes")
    case = Case("property", sizes, params, seed=data.draw(st.integers(0, 2**31 - 1)))
    inputs = make_inputs(kernel, case, "cpu")
    outputs = poisoned_outputs(kernel, case, "cpu")
    simulate(
        function.get_tir(**sizes, **params).without_attr("tilelang_out_idx"),
        {t.name: x for t, x in zip(kernel.inputs + kernel.outputs, inputs + outputs)},
    )
    for spec, got, want in zip(kernel.outputs, outputs, reference_outputs(kernel, inputs)):
        verdict = compare(spec.name, got, want, kernel.tolerance_for(spec.dtype))
        assert verdict.ok, (name, sizes, verdict.details[:3])
