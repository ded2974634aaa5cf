"""Value semantics of the CPU simulator against the CUDA TileLang generates: a scalar the kernel
reads is a value (a register), not a view of the buffer; local variables are per thread; aliases
made with T.reshape / T.view share memory; in-place tile ops see what they should; and the shared
memory of a block is counted as TileLang allocates it (one copy per pipeline stage)."""

import pytest
import tilelang
import tilelang.language as T
import torch

from grader.discover import course_root, load_module, load_puzzle, puzzle_files
from grader.pipeline.build import COMPILE_ONLY_TARGET
from grader.pipeline.shared_memory import shared_memory_plan
from grader.pipeline.simulate import SimulationError, simulate

LOG2E = 1.4426950408889634
BIND, VAR, SERIAL, PARALLEL = range(4)  # how the online softmax below keeps the old row max


def run(function, tensors: dict[str, torch.Tensor], **params):
    tir = function.get_tir(**params).without_attr("tilelang_out_idx")
    simulate(tir, tensors)
    return tensors


def inputs(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# ------------------------------------------------------------------ a saved scalar is a value


@tilelang.jit
def online_softmax(A, BLOCK_N: int, SAVE: int):
    """Softmax of each row, one row per block, walking the row in BLOCK_N tiles with a running
    max and a rescaled running sum; SAVE says how the old max is kept across the update."""
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float32)
    C = T.empty((M, N), T.float32)
    with T.Kernel(M, threads=32) as bx:
        tile = T.alloc_fragment((1, BLOCK_N), T.float32)
        row_max = T.alloc_fragment((1,), T.float32)
        tile_max = T.alloc_fragment((1,), T.float32)
        tile_sum = T.alloc_fragment((1,), T.float32)
        row_sum = T.alloc_fragment((1,), T.float32)
        scale = T.alloc_fragment((1,), T.float32)
        saved = T.alloc_var(T.float32)
        T.fill(row_max, -T.infinity(T.float32))
        T.clear(row_sum)
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[bx, k * BLOCK_N], tile)
            for i, j in T.Parallel(1, BLOCK_N):
                tile[i, j] = T.if_then_else(k * BLOCK_N + j < N, tile[i, j] * LOG2E, -T.infinity(T.float32))
            if SAVE == BIND:
                m_old = row_max[0]
                T.reduce_max(tile, row_max, dim=1, clear=False)
                scale[0] = T.exp2(m_old - row_max[0])
            elif SAVE == VAR:
                saved = row_max[0]
                T.reduce_max(tile, row_max, dim=1, clear=False)
                scale[0] = T.exp2(saved - row_max[0])
            elif SAVE == SERIAL:
                T.reduce_max(tile, tile_max, dim=1)
                for i in T.serial(1):
                    m_old = row_max[i]
                    row_max[i] = T.max(row_max[i], tile_max[i])
                    scale[i] = T.exp2(m_old - row_max[i])
            else:
                T.reduce_max(tile, tile_max, dim=1)
                for i in T.Parallel(1):
                    m_old = row_max[i]
                    row_max[i] = T.max(row_max[i], tile_max[i])
                    scale[i] = T.exp2(m_old - row_max[i])
            for i, j in T.Parallel(1, BLOCK_N):
                tile[i, j] = T.exp2(tile[i, j] - row_max[i])
            T.reduce_sum(tile, tile_sum, dim=1)
            row_sum[0] = row_sum[0] * scale[0] + tile_sum[0]
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[bx, k * BLOCK_N], tile)
            for i, j in T.Parallel(1, BLOCK_N):
                tile[i, j] = T.exp2(tile[i, j] * LOG2E - row_max[i]) / row_sum[i]
            T.copy(tile, C[bx, k * BLOCK_N])
    return C


@pytest.mark.parametrize("save", [BIND, VAR, SERIAL, PARALLEL], ids=["bind", "alloc_var", "serial", "parallel"])
def test_old_max_saved_before_an_in_place_reduce_keeps_its_value(save):
    # Rising rows: every tile raises the max, so a "saved" max that follows the buffer never
    # rescales the running sum and the sum comes out far too large.
    a = inputs(4, 40) + torch.linspace(0, 8, 40)
    out = run(online_softmax, {"A": a, "C": torch.full_like(a, float("nan"))}, M=4, N=40, BLOCK_N=16, SAVE=save)["C"]
    torch.testing.assert_close(out, torch.softmax(a.double(), dim=1).float(), rtol=1e-5, atol=1e-6)


@tilelang.jit
def saved_around_tile_ops(A, B, OP: int):
    """Saves ``tile[0, 0]`` in a scalar, changes the tile in place with one tile op, then writes
    the tile minus the saved value."""
    N = T.const("N")
    A: T.Tensor((N, N), T.float16)
    B: T.Tensor((N, N), T.float16)
    C = T.empty((N, N), T.float32)
    with T.Kernel(1, threads=128):
        a = T.alloc_shared((N, N), T.float16)
        b = T.alloc_shared((N, N), T.float16)
        acc = T.alloc_fragment((N, N), T.float32)
        work = T.alloc_shared((N, N), T.float32)
        out = T.alloc_fragment((N, N), T.float32)
        T.copy(A[0, 0], a)
        T.copy(B[0, 0], b)
        T.gemm(a, b, acc, clear_accum=True)
        T.copy(acc, work)
        first = work[0, 0]
        if OP == 0:
            T.gemm(a, b, acc)  # accumulates a second product into acc: clear_accum=False
            T.copy(acc, work)
        elif OP == 1:
            T.cumsum(work, dim=1, reverse=True)  # changes work[0, 0]: it becomes the row's total
        elif OP == 2:
            T.fill(work, 1.0)
        else:
            T.copy(acc, out)
            for i, j in T.Parallel(N, N):
                out[i, j] = out[i, j] * 3.0
            T.copy(out, work)
        for i, j in T.Parallel(N, N):
            out[i, j] = work[i, j] - first
        T.copy(out, C[0, 0])
    return C


@pytest.mark.parametrize("op", [0, 1, 2, 3], ids=["gemm_accumulate", "reverse_cumsum_in_place", "fill", "store"])
def test_scalar_saved_before_an_in_place_tile_op_keeps_its_value(op):
    a, b = inputs(32, 32, seed=1).half(), inputs(32, 32, seed=2).half()
    product = a.double() @ b.double()
    suffix_sums = product.flip(1).cumsum(dim=1).flip(1)
    after = [2 * product, suffix_sums, torch.ones_like(product), 3 * product][op]
    out = run(saved_around_tile_ops, {"A": a, "B": b, "C": torch.empty(32, 32)}, N=32, OP=op)["C"]
    torch.testing.assert_close(out.double(), after - product[0, 0], rtol=1e-5, atol=1e-4)


@tilelang.jit
def shift_left(A, SHIFT: int):
    """Moves a shared tile SHIFT elements to the left with a copy whose regions overlap."""
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    C = T.empty((N,), T.float32)
    with T.Kernel(1, threads=32):
        s = T.alloc_shared((2 * N,), T.float32)
        T.fill(s, 0.0)
        T.copy(A[0], s[0:N])
        T.copy(s[SHIFT : SHIFT + N], s[0:N])
        T.copy(s[0:N], C[0])
    return C


def test_copy_between_overlapping_regions_reads_before_it_writes():
    a = torch.arange(1.0, 17.0)
    out = run(shift_left, {"A": a, "C": torch.empty(16)}, N=16, SHIFT=4)["C"]
    assert out.tolist() == a[4:].tolist() + [0.0] * 4


# ------------------------------------------------------------------ local variables are per thread


@tilelang.jit
def row_sums_in_a_var(A, BLOCK_M: int):
    """Each iteration of the T.Parallel nest sums its own row in a local variable (a register)."""
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float32)
    C = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=32) as bx:
        tile = T.alloc_fragment((BLOCK_M, N), T.float32)
        out = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(A[bx * BLOCK_M, 0], tile)
        for i in T.Parallel(BLOCK_M):
            total = T.alloc_var(T.float32, init=0)
            for j in T.serial(N):
                if tile[i, j] > 0:
                    total = total + tile[i, j]
            out[i] = total
        T.copy(out, C[bx * BLOCK_M])
    return C


def test_local_var_inside_parallel_is_one_per_iteration():
    a = inputs(8, 12, seed=3)
    out = run(row_sums_in_a_var, {"A": a, "C": torch.full((8,), float("nan"))}, M=8, N=12, BLOCK_M=4)["C"]
    torch.testing.assert_close(out, a.clamp(min=0).sum(dim=1), rtol=1e-5, atol=1e-6)


@tilelang.jit
def last_iteration_leaks(A):
    """Reads a local variable after the T.Parallel nest that wrote it: each thread holds its own
    last value, so the number depends on the thread."""
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    C = T.empty((N,), T.float32)
    with T.Kernel(1, threads=32):
        tile = T.alloc_fragment((N,), T.float32)
        v = T.alloc_var(T.float32)
        T.copy(A[0], tile)
        for i in T.Parallel(N):
            v = tile[i] * 2.0
            tile[i] = v
        for i in T.Parallel(N):
            tile[i] = tile[i] + v
        T.copy(tile, C[0])
    return C


def test_local_var_read_after_the_nest_that_wrote_it_per_iteration_is_not_a_value():
    out = run(last_iteration_leaks, {"A": torch.arange(4.0), "C": torch.zeros(4)}, N=4)["C"]
    assert torch.isnan(out).all()
    # The same kernel with every iteration writing the same value is well defined.
    out = run(last_iteration_leaks, {"A": torch.ones(4), "C": torch.zeros(4)}, N=4)["C"]
    assert out.tolist() == [4.0] * 4


# ------------------------------------------------------------------ aliases share memory


@tilelang.jit
def doubled_through_a_reshape(A, BLOCK: int, READ_ALIAS: bool = False):
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    C = T.empty((N,), T.float32)
    with T.Kernel(1, threads=32):
        s = T.alloc_shared((BLOCK,), T.float32)
        grid = T.reshape(s, (2, BLOCK // 2))
        T.copy(A[0], s)
        for i, j in T.Parallel(2, BLOCK // 2):
            grid[i, j] = grid[i, j] * 2.0 + (s[0] if READ_ALIAS else A[0])
        T.copy(s, C[0])
    return C


def test_writes_through_a_reshape_reach_the_original_buffer():
    a = torch.arange(1.0, 9.0)
    out = run(doubled_through_a_reshape, {"A": a, "C": torch.zeros(8)}, N=8, BLOCK=8)["C"]
    assert out.tolist() == (a * 2 + 1).tolist()
    # s[0] is grid[0, 0], which lane (0, 0) writes while the other lanes read it: a race through the alias
    with pytest.raises(SimulationError, match=r"race on `grid\[0, 0\]`: lane \(i = 0, j = 0\) writes it"):
        run(doubled_through_a_reshape, {"A": a, "C": torch.zeros(8)}, N=8, BLOCK=8, READ_ALIAS=True)


@tilelang.jit
def bits_through_a_view(A):
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    C = T.empty((N,), T.float32)
    with T.Kernel(1, threads=32):
        s = T.alloc_shared((N,), T.float32)
        bits = T.view(s, dtype=T.int32)
        T.copy(A[0], s)
        for i in T.Parallel(N):
            bits[i] = bits[i] + 1  # the next float up
        T.copy(s, C[0])
    return C


def test_a_view_with_another_dtype_reads_the_same_bytes():
    a = torch.tensor([1.0, -2.5, 3e-3, 1e20])
    out = run(bits_through_a_view, {"A": a, "C": torch.zeros(4)}, N=4)["C"]
    assert out.tolist() == (a.view(torch.int32) + 1).view(torch.float32).tolist()


# ------------------------------------------------------------------ shared memory as TileLang allocates it

ROOT = course_root()
MATRIX = load_module(puzzle_files(ROOT / "solutions")["08"])
TUNED = next(k for k in load_puzzle(MATRIX).kernels if k.function == "matmul_tuned")
TUNED_LARGE = next(c for c in TUNED.cases if c.name == "large_4096")


def tuned_tir(stages: int, sizes: dict[str, int] | None = None):
    params = {**TUNED_LARGE.params, "STAGES": stages}
    return MATRIX.matmul_tuned.get_tir(**(sizes or TUNED_LARGE.sizes), **params).without_attr("tilelang_out_idx")


def test_matmul_tuned_large_case_counts_one_copy_of_the_operand_tiles_per_stage():
    assert TUNED_LARGE.params == {
        "BLOCK_M": 128,
        "BLOCK_N": 256,
        "BLOCK_K": 64,
        "STAGES": 4,
        "THREADS": 256,
        "PANEL": 10,
    }
    plan = shared_memory_plan(tuned_tir(4))
    # A_tile 16 KiB + B_tile 32 KiB, four stages; C_tile (64 KiB) is only live after the loop.
    assert plan.total == 192 * 1024
    assert plan.staged == {"A_tile": (4, 16 * 1024), "B_tile": (4, 32 * 1024)}


@tilelang.jit
def staged_and_not(A, B, BM: int, BK: int, STAGES: int, STORE: bool):
    """Two operand tiles filled from global memory in the pipelined loop (one by T.copy, one by
    T.copy or a T.Parallel store) and one filled from a fragment (not staged)."""
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, BM), T.float16)
    C = T.empty((M, BM), T.float32)
    with T.Kernel(T.ceildiv(M, BM), threads=128) as bx:
        a_s = T.alloc_shared((BM, BK), T.float16)
        b_s = T.alloc_shared((BK, BM), T.float16)
        p_s = T.alloc_shared((BM, BK), T.float16)
        a_f = T.alloc_fragment((BM, BK), T.float16)
        acc = T.alloc_fragment((BM, BM), T.float32)
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K, BK), num_stages=STAGES):
            if STORE:
                for i, j in T.Parallel(BM, BK):
                    a_s[i, j] = A[bx * BM + i, k * BK + j]
            else:
                T.copy(A[bx * BM, k * BK], a_s)
            T.copy(B[k * BK, 0], b_s)
            T.copy(a_s, a_f)
            for i, j in T.Parallel(BM, BK):
                a_f[i, j] = a_f[i, j] * 2.0
            T.copy(a_f, p_s)
            T.gemm(p_s, b_s, acc)
        T.copy(acc, C[bx * BM, 0])
    return C


@tilelang.jit
def two_phases_in_one_loop(A, BLOCK: int):
    """Two shared tiles used one after the other inside one loop: live together for the loop."""
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    C = T.empty((N,), T.float32)
    with T.Kernel(1, threads=32):
        first = T.alloc_shared((BLOCK,), T.float32)
        second = T.alloc_shared((BLOCK,), T.float32)
        unused = T.alloc_shared((8192,), T.float32)  # noqa: F841  (never touched: not allocated)
        for k in T.serial(T.ceildiv(N, BLOCK)):
            T.copy(A[k * BLOCK], first)
            T.copy(first, C[k * BLOCK])
            T.copy(A[k * BLOCK], second)
            T.copy(second, C[k * BLOCK])
    return C


SHARED_CASES = {
    **{f"matmul_tuned_stages_{n}": (lambda n=n: tuned_tir(n)) for n in (1, 2, 3, 5)},
    "copy_staged": lambda: staged_and_not.get_tir(M=256, K=256, BM=64, BK=32, STAGES=3, STORE=False),
    "store_staged": lambda: staged_and_not.get_tir(M=256, K=256, BM=64, BK=32, STAGES=3, STORE=True),
    "two_phases": lambda: two_phases_in_one_loop.get_tir(N=8192, BLOCK=4096),
}


@pytest.mark.parametrize("name", sorted(SHARED_CASES))
def test_shared_memory_count_matches_what_tilelang_allocates(name):
    from tilelang import tvm

    tir = SHARED_CASES[name]().without_attr("tilelang_out_idx")
    with tvm.target.Target(COMPILE_ONLY_TARGET):
        lowered = tilelang.lower(tir, target=COMPILE_ONLY_TARGET)
    (allocated,) = [int(f.attrs["dyn_shared_memory_buf"]) for _, f in lowered.device_mod.functions.items()]
    assert shared_memory_plan(tir).total == allocated


def test_stages_that_push_a_block_over_the_limit_are_named():
    # 128 x 256 x 64 tiles: 48 KiB per stage. Four stages (192 KiB) fit; five (240 KiB) do not,
    # though one copy of every tile (112 KiB) would.
    sizes = {"M": 128, "N": 256, "K": 64}
    tensors = {"A": torch.zeros(128, 64, dtype=torch.float16), "B": torch.zeros(64, 256, dtype=torch.float16)}
    simulate(tuned_tir(4, sizes), {**tensors, "C": torch.zeros(128, 256, dtype=torch.float16)})
    with pytest.raises(SimulationError) as failure:
        simulate(tuned_tir(5, sizes), {**tensors, "C": torch.zeros(128, 256, dtype=torch.float16)})
    assert str(failure.value) == (
        "the block asks for 240 KiB of shared memory (T.Pipelined with num_stages=5 keeps 5 copies of `A_tile` "
        "and `B_tile`: 5 x 48 KiB); a Hopper block may use at most 227 KiB: use smaller tiles or fewer stages"
    )


# ------------------------------------------------------------------ memory nothing wrote


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_memory_nothing_wrote_is_told_from_a_computed_nan(dtype):
    """The simulator's fill NaN keeps its mark through conversions and the ops that answer a NaN of their own, so a
    kernel that reads it fails on its numbers (flash_attention_tensor_cores_scores_not_cleared), while a NaN the
    kernel computed, or made from bits of its own, stays one the GPU may answer otherwise (nan_max.py)."""
    from grader.pipeline.simulate.unwritten import forged_fill, from_unwritten, keep_unwritten, unwritten_fill

    fill = unwritten_fill([3], dtype)
    assert torch.isnan(fill).all() and from_unwritten(fill).all()
    for other in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        assert from_unwritten(keep_unwritten(fill.to(other), fill)).all(), other  # as the simulator converts
    assert not from_unwritten(torch.full([3], float("nan"), dtype=dtype)).any()
    assert not from_unwritten(torch.tensor([0.0, 1.0, -torch.inf], dtype=dtype)).any()
    kept = keep_unwritten(torch.maximum(fill, torch.ones(3, dtype=dtype)), fill)
    assert from_unwritten(kept).all()
    forged = forged_fill(fill)
    assert torch.isnan(forged).all() and not from_unwritten(forged).any()


# ------------------------------------------------------------------ math the GPU approximates


@tilelang.jit
def math_and_divisions(A, B):
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    B: T.Tensor((N,), T.float16)
    C = T.empty((3, N), T.float32)
    D = T.empty((N,), T.float16)
    with T.Kernel(1, threads=32):
        for i in T.Parallel(N):
            C[0, i] = T.exp(A[i])
            C[1, i] = T.sqrt(A[i])  # sqrt.rn.f32: torch's bits
            C[2, i] = A[i] / T.float32(3)  # div.rn.f32: torch's bits
            D[i] = B[i] / T.float16(3)  # __hdiv: rcp.approx.ftz.f32 times B[i], rounded to fp16
    return C, D


def test_the_approximate_run_moves_only_what_the_gpu_approximates_and_by_its_ulps():
    """The second run of a kernel with T.exp (grader.pipeline.execute.contracted_differently): each exp moved by 1 to 3
    ulps, an input that repeats moved the same way (the GPU's approximation is a function); the correctly rounded
    sqrt and float32 division as torch computes them; a float16 division rounded from a float32 quotient moved a
    little, so it changes only where that lies near a rounding boundary."""
    from grader.pipeline.execute import approximates

    a = torch.cat([torch.rand(64) * 8 + 0.5] * 2)
    b = (torch.rand(128) * 8 + 0.5).half()
    tir = math_and_divisions.get_tir(N=128).without_attr("tilelang_out_idx")
    assert approximates(tir)
    plain = {"A": a, "B": b, "C": torch.empty(3, 128), "D": torch.empty(128, dtype=torch.float16)}
    simulate(tir, plain)
    moved = {"A": a, "B": b, "C": torch.empty(3, 128), "D": torch.empty(128, dtype=torch.float16)}
    simulate(tir, moved, approximate=12345)
    steps = moved["C"][0].view(torch.int32) - plain["C"][0].view(torch.int32)
    assert bool(((steps != 0) & (steps.abs() <= 3)).all()), steps
    assert torch.equal(steps[:64], steps[64:])  # the same input, the same result
    assert torch.equal(moved["C"][1:], plain["C"][1:])
    fp16_steps = moved["D"].view(torch.int16) - plain["D"].view(torch.int16)
    assert bool((fp16_steps.abs() <= 1).all()) and int((fp16_steps != 0).sum()) < 32, fp16_steps


@tilelang.jit
def sigmoids(A):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    D = T.empty((N,), T.float32)
    with T.Kernel(1, threads=32):
        for i in T.Parallel(N):
            C[i] = T.sigmoid(A[i])
            D[i] = T.sigmoid(T.cast(A[i], T.float32))
    return C, D


def test_sigmoid_is_computed_as_tilelang_writes_it():
    """T.sigmoid is `1 / (1 + exp(0 - x))` in the CUDA TileLang writes, in the type's own arithmetic: in float16 three
    roundings (hexp, the add, the division), not torch's float32 sigmoid rounded once (tests/attacks/
    approximate_sigmoid.py)."""
    a = (torch.arange(256, dtype=torch.float32) / 64 - 2).half()
    out = run(sigmoids, {"A": a, "C": torch.empty(256, dtype=torch.float16), "D": torch.empty(256)}, N=256)
    steps = (1 / (1 + torch.exp(-a.float()).half()).float()).half()
    assert torch.equal(out["C"], steps)
    assert not torch.equal(out["C"], torch.sigmoid(a.float()).half())
    assert torch.equal(out["D"], 1 / (1 + torch.exp(-a.float())))
