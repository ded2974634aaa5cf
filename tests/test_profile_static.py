"""grader.pipeline.profile.static: the CPU half of ``--profile``, checked against numbers worked out by hand.

Each traffic test says where its numbers come from. Sources are TileLang's generated CUDA (``tilelang.lower``,
no nvcc); the tests that read ptxas need nvcc, as grader.teaching.experiments does.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import tilelang
import tilelang.language as T

from grader import devices
from grader.devices import PROFILES
from grader.discover import course_root, load_module, load_puzzle
from grader.pipeline.profile import FIGURES
from grader.pipeline.profile.ptxas import ptxas_usage
from grader.pipeline.profile.static import estimate, lowering, occupancy, traffic
from grader.pipeline.trace import jit_options, kernel_function, trace_tir

KIB = 1024


def _have_nvcc() -> bool:
    try:
        from tilelang.contrib import nvcc

        return bool(nvcc.get_nvcc_compiler())
    except Exception:
        return shutil.which("nvcc") is not None


needs_nvcc = pytest.mark.skipif(not _have_nvcc(), reason="needs nvcc to run ptxas")


def _solution(puzzle: str, function: str, case_name: str | None = None):
    """(admitted TIR, spec Kernel, Case, module) of a reference kernel; the bench case unless named."""
    path: Path = next((course_root() / "solutions").glob(f"p{puzzle}_*.py"))
    module = load_module(path)
    kernel = next(k for k in load_puzzle(module).kernels if k.function == function)
    case = next(c for c in kernel.cases if (c.name == case_name if case_name else c.bench))
    return trace_tir(kernel_function(module, kernel), kernel, case, path), kernel, case, module


def _source(tir, arch: str = "sm_90a", function=None) -> str:
    from tilelang import tvm

    target = tvm.target.Target({"kind": "cuda", "arch": arch})
    configs = (jit_options(function).get("pass_configs") or {}) if function is not None else {}
    with target, tvm.transform.PassContext(opt_level=3, config=configs):
        return tilelang.lower(tir, target=target).kernel_source


# ------------------------------------------------------------------------------------------ traffic


def test_copy_reads_and_writes_each_element_once():
    tir, _, case, _ = _solution("01", "copy_threads")
    n, block = case.sizes["N"], case.params["BLOCK"]
    counted = traffic(tir, case.sizes)
    # every element of A is loaded once and stored once into B, 2 bytes each (fp16)
    assert counted.loads_total == n * 2 and counted.stores_total == n * 2
    assert counted.bytes_total == 2 * n * 2
    assert counted.flops_total == 0
    assert counted.grid == (n // block,) and counted.blocks == n // block
    assert counted.threads == case.params["THREADS"]
    assert counted.bytes_per_block == 2 * block * 2


def test_vector_add_reads_two_writes_one_and_adds_once_per_element():
    tir, _, case, _ = _solution("02", "add")
    n = case.sizes["N"]
    counted = traffic(tir, case.sizes)
    assert counted.bytes_total == 3 * n * 2  # A and B read, C written, fp16
    assert counted.flops_total == n  # one add per element
    tir, _, case, _ = _solution("02", "mul_relu")
    assert traffic(tir, case.sizes).flops_total == 2 * n  # a multiply and a max per element


def test_gemv_reads_a_once_and_x_once_per_block():
    tir, kernel, case, _ = _solution("08", "gemv")
    m, k = case.sizes["M"], case.sizes["K"]
    blocks = m // case.params["BLOCK_M"]
    counted = traffic(tir, case.sizes)
    # A once (M x K), the whole vector x by every block (each walks all of K), C once; fp16
    assert counted.bytes_total == (m * k + blocks * k + m) * 2
    # a multiply per product and an add per product in T.reduce_sum: the problem's 2 M K
    assert counted.flops_total == 2 * m * k == kernel.flops(case.sizes)
    assert counted.blocks == blocks


def test_tiled_gemm_reads_a_row_panel_and_a_column_panel_per_block():
    tir, kernel, case, _ = _solution("08", "matmul_naive")
    m, n, k = (case.sizes[d] for d in "MNK")
    bm, bn = case.params["BLOCK_M"], case.params["BLOCK_N"]
    counted = traffic(tir, case.sizes)
    blocks = (m // bm) * (n // bn)
    # each block reads BLOCK_M x K of A and K x BLOCK_N of B and writes its BLOCK_M x BLOCK_N tile of C
    per_block = (bm * k + k * bn + bm * bn) * 2
    assert counted.blocks == blocks and counted.grid == (n // bn, m // bm)
    assert counted.bytes_per_block == per_block
    assert counted.bytes_total == blocks * per_block
    assert counted.flops_total == 2 * m * n * k == kernel.flops(case.sizes)


def test_an_8192_gemm_is_estimated_in_well_under_two_seconds():
    tir, _, case, _ = _solution("08", "matmul_tuned", "large_8192")
    start = time.perf_counter()
    counted = traffic(tir, case.sizes)
    took = time.perf_counter() - start
    assert counted.flops_total == 2 * 8192**3
    # 2048 blocks: 512 of them walked and scaled, every block reads the same amount, so the scale is exact
    assert counted.bytes_total == 2048 * (128 * 8192 + 8192 * 256 + 128 * 256) * 2
    assert took < 2.0, took


def test_cuda_core_gemm_counts_two_element_loads_and_an_fma_per_product():
    tir, _, case, _ = _solution("08", "matmul_cuda_cores")
    m, n, k = (case.sizes[d] for d in "MNK")
    counted = traffic(tir, case.sizes)
    # acc[i, j] += A[row, k] * B[k, col]: two fp16 loads and a mul and an add per (i, j, k)
    assert counted.loads_total == 2 * m * n * k * 2
    assert counted.flops_total == 2 * m * n * k
    assert counted.stores_total == m * n * 2


@tilelang.jit
def _prefix_tiles(A, BLOCK: int):
    """Block b sums tiles 0..b of A (a loop bound that depends on the block, as in causal attention)."""
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    C = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=128) as bx:
        tile = T.alloc_fragment((BLOCK,), T.float32)
        acc = T.alloc_fragment((BLOCK,), T.float32)
        T.clear(acc)
        for t in T.serial(bx + 1):
            T.copy(A[t * BLOCK], tile)
            for i in T.Parallel(BLOCK):
                acc[i] += tile[i]
        T.copy(acc, C[bx * BLOCK])
    return C


@tilelang.jit
def _causal_tiles(A, BLOCK: int):
    """The same sum with a fixed loop and an `if` on the step: the form a causal mask takes."""
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    C = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=128) as bx:
        tile = T.alloc_fragment((BLOCK,), T.float32)
        acc = T.alloc_fragment((BLOCK,), T.float32)
        T.clear(acc)
        for t in T.serial(T.ceildiv(N, BLOCK)):
            if t <= bx:
                T.copy(A[t * BLOCK], tile)
                for i in T.Parallel(BLOCK):
                    acc[i] += tile[i]
        T.copy(acc, C[bx * BLOCK])
    return C


@pytest.mark.parametrize("function", [_prefix_tiles, _causal_tiles], ids=["bound", "if"])
def test_a_block_dependent_loop_is_counted_block_by_block(function):
    # (p07's flash attention has no causal variant, so this kernel stands in for one.)
    block, tiles = 64, 8
    counted = traffic(function.get_tir(N=block * tiles, BLOCK=block))
    # block b reads b + 1 tiles: 1 + 2 + ... + 8 = 36 tiles of 64 fp32, adds once per element read,
    # and writes its own tile
    assert counted.loads_total == 36 * block * 4
    assert counted.flops_total == 36 * block
    assert counted.stores_total == tiles * block * 4


def test_a_long_block_dependent_loop_is_sampled_close_to_the_exact_count():
    block, tiles = 64, 64
    counted = traffic(_causal_tiles.get_tir(N=block * tiles, BLOCK=block))
    exact = tiles * (tiles + 1) // 2 * block * 4  # 2080 tiles read over all blocks
    # 64 steps per block, 16 of them walked and scaled: within a few per cent
    assert abs(counted.loads_total - exact) / exact < 0.05


def test_a_tail_block_is_clipped_to_the_tensor():
    tir, _, case, _ = _solution("08", "gemv", "tail_1000")
    counted = traffic(tir, case.sizes)
    block_m = case.params["BLOCK_M"]
    # the last block's rows past M = 1000 are not asked for (T.copy reads zeros there): A counts
    # M x K exactly; each of the ceil(M / BLOCK_M) blocks reads the whole vector, and C is written once
    blocks = -(-1000 // block_m)
    assert counted.bytes_total == (1000 * 1000 + blocks * 1000 + 1000) * 2


@tilelang.jit
def _column_sums_by_element(A, BLOCK: int):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float32)
    C = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(M, BLOCK), threads=128) as bx:
        for i, j in T.Parallel(BLOCK, N):
            T.atomic_add(C[j], A[bx * BLOCK + i, j])
    return C


@tilelang.jit
def _column_sums_by_tile(A, BLOCK: int):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float32)
    C = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(M, BLOCK), threads=128) as bx:
        tile = T.alloc_fragment((BLOCK, N), T.float32)
        sums = T.alloc_fragment((N,), T.float32)
        T.copy(A[bx * BLOCK, 0], tile)
        T.reduce_sum(tile, sums, dim=0)
        T.atomic_add(C[0], sums)
    return C


def test_atomic_adds_count_as_stores_and_one_add_each():
    m, n, block = 256, 64, 32
    blocks = m // block
    by_element = traffic(_column_sums_by_element.get_tir(M=m, N=n, BLOCK=block))
    # every element of A read once; one fp32 atomic (a store and an add) per element; the atomic's
    # target address is not a load
    assert (by_element.loads_total, by_element.stores_total) == (m * n * 4, m * n * 4)
    assert by_element.flops_total == m * n
    by_tile = traffic(_column_sums_by_tile.get_tir(M=m, N=n, BLOCK=block))
    # A read once; each block reduces BLOCK x N elements and adds its N sums to C atomically
    assert (by_tile.loads_total, by_tile.stores_total) == (m * n * 4, blocks * n * 4)
    assert by_tile.flops_total == m * n + blocks * n


# ------------------------------------------------------------------------------------------ occupancy


def test_occupancy_by_hand():
    hopper = PROFILES["sm_90"]
    # 256 threads x 128 registers: 32 K registers a block, two blocks fill the 64 K register file
    fit = occupancy(hopper, 256, 128, 0)
    assert (fit.blocks_per_sm, fit.limit, fit.occupancy_pct) == (2, "registers", 25.0)
    # 255 registers round up to 256 a thread (8192 a warp): 8 warps a SM, one block of 256 threads
    assert occupancy(hopper, 256, 255, 0).blocks_per_sm == 1
    # 128 threads x 24 registers: registers allow 85 warps, the SM holds 64: 16 blocks, all warps busy
    fit = occupancy(hopper, 128, 24, 0)
    assert (fit.blocks_per_sm, fit.limit, fit.occupancy_pct) == (16, "threads", 100.0)
    # 100 KiB of shared memory plus the 1 KiB reservation: two blocks in 228 KiB
    fit = occupancy(hopper, 128, 32, 100 * KIB)
    assert (fit.blocks_per_sm, fit.limit) == (2, "shared memory")
    # one warp a block on Turing: 16 blocks a SM at most, half of its 32 warps
    fit = occupancy(PROFILES["sm_75"], 32, 32, 0)
    assert (fit.blocks_per_sm, fit.limit, fit.occupancy_pct) == (16, "blocks per SM", 50.0)
    # a block that asks for more shared memory than an SM has does not fit
    assert occupancy(PROFILES["sm_86"], 128, 32, 120 * KIB).blocks_per_sm == 0


def test_profiles_carry_the_per_sm_limits_and_a_real_gpu_keeps_them():
    assert [(p.max_warps_per_sm, p.max_blocks_per_sm, p.shared_per_sm // KIB) for p in PROFILES.values()] == [
        (32, 16, 64),
        (64, 32, 164),
        (48, 16, 100),
        (48, 24, 100),
        (64, 32, 228),
    ]
    h200 = devices.profile_for_capability(9, 0, 227 * KIB, 132, "NVIDIA H200")
    assert (h200.dram_gbps, h200.tensor_tflops, h200.max_warps_per_sm) == (4800.0, 989.5, 64)
    a100 = devices.profile_for_capability(8, 0, 163 * KIB, 108, "NVIDIA A100-SXM4-80GB")
    assert (a100.name, a100.dram_gbps, a100.shared_per_sm) == ("sm_80", 2039.0, 164 * KIB)
    unknown = devices.profile_for_capability(12, 0, 99 * KIB, 84, "NVIDIA Something New")
    assert unknown.name == "sm_89" and unknown.dram_gbps == PROFILES["sm_89"].dram_gbps


# ------------------------------------------------------------------------------------------ lowering


def test_lowering_reads_hopper_and_ampere_gemms():
    tir, _, _, module = _solution("08", "matmul_tuned", "square_256")
    hopper = lowering(_source(tir, "sm_90a", module.matmul_tuned))
    assert (hopper["tensor_cores"], hopper["copies"], hopper["vector_bytes"]) == ("wgmma", "TMA", 16)
    tir, _, _, module = _solution("08", "matmul_pipelined", "square_256")
    ampere = lowering(_source(tir, "sm_80", module.matmul_pipelined))
    assert (ampere["tensor_cores"], ampere["copies"], ampere["ldmatrix"]) == ("mma.sync", "cp.async", True)
    assert ampere["vector_bytes"] == 16  # cp_async_gs<16>


def test_lowering_sees_how_wide_the_global_accesses_are():
    tir, _, _, _ = _solution("01", "copy_threads")
    copy = lowering(_source(tir))
    assert copy == {"tensor_cores": "none", "copies": "plain loads", "vector_bytes": 16, "ldmatrix": False}
    # matmul_naive loads its fragments straight from global memory: A two fp16 at a time (uint1),
    # B one fp16 at a time (the notebook's "B arrives two bytes at a time")
    tir, _, _, _ = _solution("08", "matmul_naive", "square_256")
    naive = lowering(_source(tir))
    assert naive["tensor_cores"] == "mma.sync" and naive["vector_bytes"] == 4


# ------------------------------------------------------------------------------------------ ptxas, estimate


@needs_nvcc
def test_ptxas_figures_equal_the_notebook_experiment():
    from grader.teaching import experiments

    tir, _, case, module = _solution("08", "gemv", "square_256")
    ours = ptxas_usage(_source(tir, "sm_90a", module.gemv), "sm_90a")
    theirs = experiments.resource_usage(module.gemv, **case.sizes, **case.params)
    assert ours["registers"] == theirs.registers > 0
    assert (ours["spill_stores"], ours["spill_loads"]) == (theirs.spill_stores, theirs.spill_loads)
    assert (ours["stack_frame"], ours["static_shared"]) == (theirs.stack_frame, theirs.static_shared)


@tilelang.jit
def _huge_tile(A, B, BLOCK: int, THREADS: int = 128):
    """A learner's slow GEMM: a 256 x 256 fp32 accumulator over 128 threads is 512 registers a thread."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, BLOCK), T.ceildiv(M, BLOCK), threads=THREADS) as (bx, by):
        acc = T.alloc_fragment((BLOCK, BLOCK), T.float32)
        T.clear(acc)
        for k in T.serial(K):
            for i, j in T.Parallel(BLOCK, BLOCK):
                acc[i, j] += T.cast(A[by * BLOCK + i, k], T.float32) * T.cast(B[k, bx * BLOCK + j], T.float32)
        T.copy(acc, C[by * BLOCK, bx * BLOCK])
    return C


@needs_nvcc
def test_a_huge_per_thread_tile_spills_and_two_blocks_leave_the_gpu_idle():
    sizes = {"M": 512, "N": 256, "K": 64}
    tir = _huge_tile.get_tir(**sizes, BLOCK=256)
    problem = SimpleNamespace(bytes_moved=None, flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"])
    figures = estimate(tir, _source(tir), problem, SimpleNamespace(sizes=sizes), PROFILES["sm_90"])
    assert figures["registers"] == 255 and figures["spill_bytes"] > 0
    assert figures["grid"] == 2 and figures["waves"] < 0.05  # 2 blocks on 132 SMs
    assert figures["bound"] == "compute" and figures["compulsory_bytes"] is None


@needs_nvcc
def test_estimate_of_the_gemv_bench_case():
    tir, kernel, case, module = _solution("08", "gemv")
    hopper = PROFILES["sm_90"]
    figures = estimate(tir, _source(tir, "sm_90a", module.gemv), kernel, case, hopper)
    assert list(figures) == [f.key for f in FIGURES if f.source == "static"]
    m, k = case.sizes["M"], case.sizes["K"]
    compulsory = (m * k + k + m) * 2
    assert figures["compulsory_bytes"] == compulsory
    # a GEMV is memory-bound: 128 MiB at the H200's 4.8 TB/s against 134 MFLOP at 989 TFLOP/s
    assert figures["bound"] == "memory"
    assert figures["floor_us"] == pytest.approx(compulsory / 4800e9 * 1e6)
    assert figures["threads"] == case.params["THREADS"] and figures["grid"] == m // case.params["BLOCK_M"]
    assert figures["tensor_cores"] == "none" and figures["copies"] == "plain loads"
    assert figures["spill_bytes"] == 0 and figures["registers"] > 0
    fit = occupancy(hopper, figures["threads"], figures["registers"], figures["shared_bytes"])
    assert figures["blocks_per_sm"] == fit.blocks_per_sm > 0
    assert figures["waves"] == pytest.approx(figures["grid"] / (132 * fit.blocks_per_sm))
    # with a measured bandwidth instead of the datasheet's
    from grader.pipeline.roofline import Limits

    measured = estimate(tir, _source(tir, "sm_90a", module.gemv), kernel, case, hopper, Limits(4000.0, 989.5))
    assert measured["floor_us"] == pytest.approx(compulsory / 4000e9 * 1e6)


@needs_nvcc
def test_a_function_with_three_launches_is_described_by_its_main_kernel():
    """matmul_streamk launches a zeroing kernel, the GEMM and a fix-up kernel: the totals hold all three,
    the registers and threads are the GEMM's (ptxas reports the fix-up kernel first)."""
    tir, kernel, case, module = _solution("08", "matmul_streamk", "square_256")
    counted = traffic(tir, case.sizes)
    assert (counted.launches, counted.main_launch) == (3, 1)
    # 2 M N K, plus an add per element of the partial tiles summed with T.atomic_add; the segment
    # loop's steps differ, so it is sampled: a few per cent at most
    assert counted.flops_total == pytest.approx(2 * 256**3, rel=0.05)
    assert counted.flops_total >= 2 * 256**3
    source = _source(tir, "sm_90a", module.matmul_streamk)
    figures = estimate(tir, source, kernel, case, PROFILES["sm_90"])
    gemm = ptxas_usage(source, "sm_90a", "matmul_streamk_kernel_1")
    assert figures["registers"] == gemm["registers"]
    # TileLang adds a producer warpgroup to the GEMM's T.Kernel(threads=THREADS)
    assert figures["threads"] == case.params.get("THREADS", 128) + 128
    assert figures["grid"] == case.params["SMS"]


def test_ptxas_log_is_read_per_kernel():
    from grader.pipeline.profile.ptxas import ptxas_functions

    log = (
        "ptxas info    : Compiling entry function 'k_2' for 'sm_90a'\n"
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 40 registers, used 0 barriers\n"
        "ptxas info    : Compiling entry function 'k_1' for 'sm_90a'\n"
        "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
        "ptxas info    : Used 64 registers, used 4 barriers, 1024 bytes smem\n"
    )
    found = ptxas_functions(log)
    assert found["k_1"] == {
        "registers": 64,
        "spill_stores": 4,
        "spill_loads": 4,
        "stack_frame": 8,
        "static_shared": 1024,
    }
    assert found["k_2"]["registers"] == 40 and found["k_2"]["static_shared"] == 0


# ------------------------------------------------------------------------------------------ bank conflicts

KERNEL_HEAD = """extern "C" __global__ void __launch_bounds__(256, 1) k_kernel(half_t* __restrict__ K) {
  extern __shared__ __align__(1024) uchar buf_dyn_shmem[];
  void* K_tile = ((void*)((char*)buf_dyn_shmem + 0));
  void* F = ((void*)((char*)buf_dyn_shmem + 8192));
"""


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # 07's score loop as TileLang 0.1.15 prints it: a lane's 4 key rows of 64 fp16 are 512 bytes, so the 16
        # lanes' rows start 128 words apart, all in bank 0
        (
            "s = ((float)((half_t*)K_tile)[((((((int)threadIdx.x) & 15) * 256) + ((i_4 & 3) * 64)) + d)]);",
            (16, "K_tile read"),
        ),
        # rows padded to 66 fp16: the lanes 132 words apart, 4 banks on each time, two lanes in each bank used
        ("s = ((float)((half_t*)K_tile)[(((((int)threadIdx.x) & 15) * 264) + d)]);", (2, "K_tile read")),
        # consecutive fp32 words: one per bank
        ("((float*)F)[((int)threadIdx.x)] = s;", (1, "")),
        # fp32 words two apart: lanes 0 and 16 share bank 0 at different words
        ("((float*)F)[(((int)threadIdx.x) * 2)] = s;", (2, "F write")),
        # 16-byte stores of consecutive lanes, a quarter warp a pass: 128 bytes, every bank once
        ("*(uint4*)(((half_t*)K_tile) + (((int)threadIdx.x) * 8)) = *(uint4*)(K + (((int)threadIdx.x) * 8));", (1, "")),
        # every lane the same word: a broadcast, no conflict
        ("s = ((float)((half_t*)K_tile)[d]);", (1, "")),
        # stmatrix as 09's conv1d_channels_last writes its unswizzled 128 x 256 output tile: each lane gives one
        # 16-byte row, lanes 0-15 rows 512 bytes apart, so the 8 rows of a pass share banks 0-3: a write, 8-way
        (
            "tl::ptx_stmatrix_m8n8_x4((&(((half_t*)K_tile)[(((((int)threadIdx.x) & 15) * 256) + "
            "(((((int)threadIdx.x) & 31) >> 4) * 8))])), a, b, c, d);",
            (8, "K_tile write"),
        ),
        # ldmatrix rows of 64 bytes (a 32-column fp16 tile, unswizzled, as 08's row-major layout): the 8 rows of a
        # pass start in banks 0 and 16 by turns, four in each: a read, 4-way (08's "4-way conflict")
        ("tl::ptx_ldmatrix_x4((&(((half_t*)K_tile)[((((int)threadIdx.x) & 7) * 32)])), a);", (4, "K_tile read")),
    ],
)
def test_the_bank_conflict_estimate_reads_the_generated_index(line, expected):
    from grader.pipeline.profile.static import bank_conflicts

    assert bank_conflicts(KERNEL_HEAD + "  " + line + "\n}\n", threads=256) == expected
