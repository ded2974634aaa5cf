"""The bench's roofline and baselines, and --param: the arithmetic, the table, the case selection."""

from __future__ import annotations

import pytest

from grader import outcome
from grader.devices import tensor_peak_tflops
from grader.discover import course_root, load_module, load_puzzle
from grader.frontends import render as report
from grader.frontends.cli import UsageError, parse_params
from grader.outcome import Bench, CaseResult
from grader.pipeline import roofline
from grader.pipeline.bench import bench_with_params, block_parameters

H200 = roofline.Limits(copy_gbps=4000.0, tensor_tflops=1000.0)


def test_the_floor_is_the_slower_of_moving_the_bytes_and_doing_the_flops():
    # 4 GB at 4000 GB/s is 1 ms; 1e12 flops at 1000 TFLOP/s is 1 ms: the larger sets the floor
    assert roofline.floor(H200, flops=None, bytes_moved=4e9) == (pytest.approx(1.0), "memory")
    assert roofline.floor(H200, flops=2e12, bytes_moved=4e9) == (pytest.approx(2.0), "compute")
    assert roofline.floor(H200, flops=1e11, bytes_moved=4e9) == (pytest.approx(1.0), "memory")
    assert roofline.floor(H200, flops=None, bytes_moved=None) == (None, "")


def test_a_gpu_without_a_known_peak_gets_the_bandwidth_floor_only():
    unknown = roofline.Limits(copy_gbps=1000.0, tensor_tflops=None)
    assert roofline.floor(unknown, flops=1e15, bytes_moved=1e9) == (pytest.approx(1.0), "memory")
    assert "bandwidth roofline only" in unknown.describe()


@pytest.mark.parametrize(
    ("board", "peak"),
    [
        ("NVIDIA H200", 989.5),
        ("NVIDIA H100 PCIe", 756.0),
        ("NVIDIA H100 80GB HBM3", 989.5),
        ("NVIDIA A100-SXM4-80GB", 312.0),
        ("NVIDIA L40S", 362.0),
        ("NVIDIA L4", 121.0),
        ("Tesla T4", 65.0),
        ("NVIDIA GeForce GTX 1080", None),
    ],
)
def test_the_peak_is_the_datasheet_figure_of_the_named_board(board, peak):
    assert tensor_peak_tflops(board) == peak


def _benched(**extra) -> CaseResult:
    bench = Bench(kernel_ms=0.05, torch_ms=0.5, gbps=700.0, floor_ms=0.01, bound="memory", **extra)
    return CaseResult("10", "dequant_matmul", "decode", outcome.PASSED, {"M": 16}, bench=bench)


def test_the_bench_table_gives_the_roofline_percent_and_every_baseline():
    lines = report.bench_lines([_benched(others={"torch fp16 on unquantized W": 0.04}, limits="copy 4,000 GB/s")])
    assert "20% mem" in lines[1]  # 0.01 ms floor over 0.05 ms
    assert "10.00x" in lines[1]  # torch 0.5 ms over 0.05 ms
    assert "vs torch fp16 on unquantized W: 0.0400 ms, 0.80x" in lines[2]
    assert lines[-1] == "limits on this GPU: copy 4,000 GB/s"


def test_the_table_says_when_the_learner_chose_the_parameters():
    lines = report.bench_lines([_benched(params={"BLOCK_N": 128, "STAGES": 4})])
    assert any("with your parameters BLOCK_N=128 STAGES=4" in line for line in lines)


def test_bench_json_round_trips_the_new_fields():
    result = _benched(others={"x": 1.0}, params={"BLOCK": 8})
    again = CaseResult.from_dict(result.to_dict())
    assert again.bench.others == {"x": 1.0} and again.bench.params == {"BLOCK": 8}
    assert again.bench.roofline_percent == pytest.approx(20.0)


def test_params_parse_as_upper_case_names_and_whole_numbers():
    assert parse_params(["BLOCK_N=128", "STAGES=4"]) == {"BLOCK_N": 128, "STAGES": 4}
    for bad in ("block_n=128", "BLOCK_N=1.5", "BLOCK_N", "=4"):
        with pytest.raises(UsageError):
            parse_params([bad])


def _puzzle(file: str):
    module = load_module(course_root() / "solutions" / file)
    return module, load_puzzle(module)


def test_learner_params_reach_only_the_bench_cases_of_kernels_that_take_them():
    module, puzzle = _puzzle("p10_dequant_matmul.py")
    benched = bench_with_params(puzzle, {"STAGES": 2}, block_parameters(module, puzzle))
    for kernel in benched.kernels:
        assert kernel.cases and all(c.bench and not c.simulate for c in kernel.cases)
    unpack, gemm = benched.kernel("dequantize_int4"), benched.kernel("dequant_matmul")
    assert "STAGES" not in unpack.cases[0].params  # dequantize_int4 has no STAGES
    assert gemm.cases[0].params["STAGES"] == 2
    assert {c.name for c in gemm.cases} == {c.name for c in puzzle.kernel("dequant_matmul").cases if c.bench}


def test_a_default_argument_of_the_course_kernel_is_a_block_parameter_but_a_tensor_is_not():
    module, puzzle = _puzzle("p02_vector_add.py")
    accepted = block_parameters(module, puzzle)
    assert {"BLOCK", "THREADS"} <= accepted["add"]
    assert "A" not in accepted["add"]
    with pytest.raises(ValueError, match="no kernel of puzzle 02 takes it"):
        bench_with_params(puzzle, {"STAGES": 3}, accepted)


def test_param_without_bench_is_a_usage_error(grade):
    run = grade("02", "--solutions", "--param", "BLOCK=512")
    assert run.code == 2
    assert "add --bench" in run.err


def test_bench_with_params_runs_only_the_bench_case_at_those_parameters(grade):
    run = grade("02", "--solutions", "-k", "add", "--exact", "--bench", "--param", "BLOCK=512", "--device", "compile")
    assert run.code == 3, run.out[-2000:]  # nothing failed, and the case was only compiled
    cases = {r["case"] for r in run.doc["results"]}
    assert cases == {"large_2p27"}  # the bench case alone: no graded case ran with the learner's BLOCK
