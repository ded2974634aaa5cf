"""grader.teaching.experiments: resource usage read from a real sm_90a compile, and the accumulation demo."""

from __future__ import annotations

import shutil

import pytest

from grader.teaching import experiments


def _have_nvcc() -> bool:
    try:
        from tilelang.contrib import nvcc

        return bool(nvcc.get_nvcc_compiler())
    except Exception:
        return shutil.which("nvcc") is not None


@pytest.mark.skipif(not _have_nvcc(), reason="needs nvcc to compile for sm_90a")
def test_resource_usage_of_a_small_gemm_in_registers_and_in_shared_memory():
    from solutions import p08_matrix as ref

    sizes = {"M": 256, "N": 256, "K": 256, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}
    naive = experiments.resource_usage(ref.matmul_naive, **sizes)
    assert naive.label == "matmul_naive"
    assert naive.registers > 0
    assert naive.threads == 128
    assert naive.shared == 0  # every tile in registers
    assert naive.tensor_cores == "mma.sync"

    piped = experiments.resource_usage(ref.matmul_pipelined, "pipelined", **sizes, STAGES=3)
    assert piped.registers > 0
    # three stages of a 64 x 32 A tile and a 32 x 64 B tile, in fp16
    assert piped.dynamic_shared == 3 * (64 * 32 + 32 * 64) * 2
    # matmul_pipelined turns warp specialization off: the same 128 threads issue cp.async copies
    assert piped.tensor_cores == "wgmma" and piped.copies == "cp.async"
    assert piped.threads == 128
    text = experiments.table([naive, piped])
    assert "matmul_naive" in text and "pipelined" in text and "24.0" not in text.splitlines()[0]


def test_matmul_tuned_keeps_the_producer_warpgroup_the_pipelined_rung_turns_off():
    from solutions import p08_matrix as ref

    sizes = {"M": 512, "N": 512, "K": 512, "BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "STAGES": 3}
    tuned = experiments.resource_usage(ref.matmul_tuned, "tuned", **sizes, THREADS=256)
    assert tuned.copies == "TMA" and tuned.tensor_cores == "wgmma"
    assert tuned.threads == 384  # two math warpgroups and TileLang's producer


def test_ptxas_log_parsing():
    log = (
        "ptxas info    : Function properties for k\n"
        "    1088 bytes stack frame, 1564 bytes spill stores, 1572 bytes spill loads\n"
        "ptxas info    : Used 255 registers, used 1 barriers, 1024 bytes smem, 1088 bytes cumulative stack size\n"
    )
    numbers = experiments._ptxas_numbers(log)
    assert numbers == {
        "registers": 255,
        "spill_stores": 1564,
        "spill_loads": 1572,
        "stack_frame": 1088,
        "static_shared": 1024,
    }


def test_fp16_accumulator_error_grows_with_k_and_fp32_stays_at_one_rounding():
    errors = experiments.accumulation_errors(lengths=(64, 1024, 4096), rows=32)
    fp16, fp32, stored = errors["fp16 accumulator"], errors["fp32 accumulator"], errors["fp32, stored as fp16"]
    assert fp16[0] < fp16[1] < fp16[2]
    assert fp16[2] > 1e-3  # beyond the grader's fp16 atol (1e-3 of the rms of the result)
    assert max(fp32) < 1e-5
    assert max(stored) < 2.0**-11  # one rounding to fp16 at the end


@pytest.mark.skipif(not _have_nvcc(), reason="needs nvcc to compile for sm_90a")
def test_instruction_mix_sees_the_conversion_the_bit_trick_removes():
    """One K step of the decode case, per thread of the unpacking warpgroup: 64 x 128 weights over 128
    threads, 64 weights. The reference converts each nibble with an int-to-fp16 instruction; the fp16
    built from its bits (0x6400 | q) needs none, and unpacking into the MMA's registers loads each byte
    once instead of once per nibble."""
    from solutions.p10_dequant_matmul import dequant_matmul, dequant_matmul_decode

    sizes = {"M": 16, "N": 8192, "K": 8192, "NG": 64, "BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 128, "STAGES": 4}
    reference = experiments.instruction_mix(dequant_matmul, **sizes)
    registers = experiments.instruction_mix(dequant_matmul_decode, **sizes)
    assert reference["int to float"] == 64
    assert reference["shared loads"] >= 64
    assert registers["int to float"] == 0
    assert registers["shared loads"] < 40  # 32 byte pairs and the rows' scales
    assert registers["tensor core"] > 0 and reference["tensor core"] > 0
