"""The bench's roofline and baselines, and --param: the arithmetic, the table, the case selection."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from grader.devices import fma_peak_tflops, tensor_peak_tflops
from grader.discover import course_root, load_module, load_puzzle
from grader.frontends import render as report
from grader.frontends.cli import UsageError, parse_params
from grader.outcome import Bench, CaseResult, Status
from grader.pipeline import roofline
from grader.pipeline.bench import bench_with_params, block_parameters
from tests.conftest import ROOT

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


H200_BOTH = roofline.Limits(copy_gbps=4000.0, tensor_tflops=1000.0, fma_tflops=50.0)


def test_a_kernel_on_the_cuda_cores_is_measured_against_the_fma_peak():
    # 1e11 flops: 0.1 ms at the Tensor Core peak, 2 ms at the FMA peak; 4 GB move in 1 ms
    assert roofline.floor(H200_BOTH, flops=1e11, bytes_moved=4e9, tensor_cores=True) == (pytest.approx(1.0), "memory")
    assert roofline.floor(H200_BOTH, flops=1e11, bytes_moved=4e9, tensor_cores=False) == (pytest.approx(2.0), "fma")
    # unknown source: the Tensor Core peak, as before
    assert roofline.floor(H200_BOTH, flops=1e11, bytes_moved=None, tensor_cores=None) == (pytest.approx(0.1), "compute")
    # no FMA peak known: the bandwidth alone, never the Tensor Core peak
    assert roofline.floor(H200, flops=1e15, bytes_moved=4e9, tensor_cores=False) == (pytest.approx(1.0), "memory")
    assert roofline.floor(H200, flops=1e15, bytes_moved=None, tensor_cores=False) == (None, "")
    assert "fp32 FMA peak 50 TFLOP/s" in H200_BOTH.describe() and "no fp32 FMA peak" in H200.describe()


@pytest.mark.parametrize(
    ("source", "tensor"),
    [
        ("tl::wgmma_ss<...>(A_shared, B_shared, acc);", True),
        ("tl::mma_sync<...>(A_frag, B_frag, acc);", True),
        ("acc[i] = acc[i] + ((float)A[k]) * ((float)B[k]);", False),
        ("", None),
    ],
    ids=["wgmma", "mma.sync", "fma", "no source"],
)
def test_the_tensor_cores_are_read_from_the_generated_code(source, tensor):
    assert roofline.tensor_cores(source) is tensor


def test_the_fma_peak_is_the_datasheet_figure_the_results_page_gives():
    text = (ROOT / "docs" / "results" / "datasheets.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| H200 SXM | FP32 on CUDA cores"))
    assert f"| {fma_peak_tflops('NVIDIA H200'):g} TFLOP/s |" in row
    assert fma_peak_tflops("NVIDIA H100 80GB HBM3") == 67.0
    assert fma_peak_tflops("NVIDIA H200 NVL") is None and fma_peak_tflops("NVIDIA H100 PCIe") is None
    assert fma_peak_tflops("Tesla T4") is None


def test_the_bench_passes_the_kernels_generated_code_to_the_floor():
    """bench_case decides the peak from the compiled kernel's source (the same reading --profile reports)."""
    import inspect

    from grader.pipeline import bench

    assert "roofline.tensor_cores(kernel_source(compiled))" in inspect.getsource(bench.bench_case)


def _benched(**extra) -> CaseResult:
    bench = Bench(kernel_ms=0.05, torch_ms=0.5, gbps=700.0, floor_ms=0.01, bound="memory", **extra)
    return CaseResult("10", "dequant_matmul", "decode", Status.PASSED, {"M": 16}, bench=bench)


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


def test_param_without_bench_is_a_usage_error(grade):  # cold: the command line's exit status and its stderr
    run = grade("02", "--solutions", "--param", "BLOCK=512")
    assert run.code == 2
    assert "add --bench" in run.err


def test_bench_with_params_runs_only_the_bench_case_at_those_parameters(warm_grade):
    run = warm_grade(
        "02", "--solutions", "-k", "add", "--exact", "--bench", "--param", "BLOCK=512", "--device", "compile"
    )
    assert run.code == 3, run.out[-2000:]  # nothing failed, and the case was only compiled
    cases = {r["case"] for r in run.doc["results"]}
    assert cases == {"large_2p27"}  # the bench case alone: no graded case ran with the learner's BLOCK


def test_the_table_prints_each_figures_spread_and_marks_a_ratio_inside_the_noise():
    noisy = _benched(
        repeats=5,
        kernel_range=(0.045, 0.055),
        torch_range=(0.45, 0.55),
        others={"cuBLAS": 0.052},
        others_range={"cuBLAS": (0.050, 0.060)},
    )
    lines = report.bench_lines([noisy])
    assert "20.0%" in lines[1]  # (0.055 - 0.045) / 0.05
    assert "10.00x" in lines[1] and "10.00x~" not in lines[1]  # torch's range lies far above the kernel's
    assert "vs cuBLAS: 0.0520 ms [0.0500-0.0600], 1.04x~" in lines[2]  # 0.050-0.060 overlaps 0.045-0.055
    assert any("median of 5 repetition(s)" in line for line in lines)
    assert any(line.startswith("~ after a ratio") for line in lines)
    assert noisy.bench.spread_percent == pytest.approx(20.0)
    assert not noisy.bench.within_spread
    close = _benched(repeats=3, kernel_range=(0.049, 0.052), torch_range=(0.051, 0.06))
    assert close.bench.within_spread


def test_one_repetition_has_no_noise_legend_and_the_gpu_state_is_printed():
    single = _benched(repeats=1, kernel_range=(0.05, 0.05), torch_range=(0.5, 0.5))
    single.bench.gpu = {"sm_clock_mhz": 1755, "max_sm_clock_mhz": 1980, "power_limit_w": 700.0, "temperature_c": 41}
    lines = report.bench_lines([single])
    assert not any(line.startswith("~ after a ratio") for line in lines)
    assert lines[-1] == "GPU after each case: SM clock 1755-1755 MHz (max 1980), power limit 700 W, 41-41 C"


def test_the_ranges_and_gpu_state_survive_json():
    result = _benched(repeats=5, kernel_range=(0.04, 0.06), others_range={"x": (1.0, 1.2)}, gpu={"sm_clock_mhz": 1})
    again = CaseResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.bench.kernel_range == (0.04, 0.06) and again.bench.others_range == {"x": (1.0, 1.2)}
    assert again.bench.gpu == {"sm_clock_mhz": 1} and again.bench.repeats == 5


def test_repetitions_take_turns_so_a_drifting_clock_moves_every_figure_alike(monkeypatch):
    from grader.pipeline import timing

    order: list[str] = []

    def fake_median(call, sets, target_ms=timing.TARGET_MS):
        order.append(call())
        return float(len(order))

    monkeypatch.setattr(timing, "median_ms", fake_median)
    timed = timing.repeated_ms({"a": (lambda: "a", []), "b": (lambda: "b", [])}, 3)
    assert order == ["a", "b", "a", "b", "a", "b"]
    assert timed["a"].runs == (1.0, 3.0, 5.0) and timed["b"].median == 4.0
    assert (timed["a"].low, timed["a"].high) == (1.0, 5.0)


def test_without_nvml_the_gpu_state_is_empty_not_an_error(monkeypatch):
    from grader.pipeline import gpu_state

    monkeypatch.setattr(gpu_state, "_library", lambda: None)
    assert gpu_state.read("00000000:01:00.0") == gpu_state.GpuState()


@pytest.mark.parametrize("argv", [["08", "--repeat", "3"], ["08", "--bench", "--repeat", "0"]])
def test_repeat_is_refused_without_bench_or_below_one(argv):
    done = subprocess.run([sys.executable, "-m", "grader", *argv], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "--repeat" in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("puzzle", "function", "tensor"),
    [
        ("p07_flash_attention", "flash_attention", False),
        ("p07_flash_attention", "attention_two_pass", False),
        ("p08_matrix", "gemv", False),
        ("p08_matrix", "matmul_cuda_cores", False),
        ("p08_matrix", "matmul_naive", True),
        ("p08_matrix", "flash_attention_tensor_cores", True),
    ],
)
def test_the_course_kernels_on_the_cuda_cores_are_told_apart_by_their_generated_code(puzzle, function, tensor):
    """What the bench reads for each kernel: TileLang's CUDA for sm_90a (lowered on the CPU, no nvcc)."""
    from grader.teaching.experiments import kernel_source

    module = load_module(ROOT / "solutions" / f"{puzzle}.py")
    case = next(c for c in load_puzzle(module).kernel(function).cases if c.name in ("square_128", "square_256"))
    source = kernel_source(getattr(module, function), **case.sizes, **case.params)
    assert roofline.tensor_cores(source) is tensor
