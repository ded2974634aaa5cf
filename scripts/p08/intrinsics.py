"""The intrinsics rung of puzzle 08: a GEMM written with TileLang's Tensor Core emitters instead of T.gemm.

T.gemm hides three steps that a hand-written kernel spells out: how the block's warps split the output
tile, how each warp moves its operands from shared memory into the Tensor Cores, and how the accumulator
goes back out. The emitters in ``tilelang.language`` (``T.TensorCoreIntrinEmitter`` for the warp-level
``mma.sync``, ``T.WGMMATensorCoreIntrinEmitter`` for Hopper's warpgroup ``wgmma``) turn those steps into
calls a kernel makes itself; this module writes the same GEMM (C = A B, fp16 in, fp32 accumulate, fp16
out, A row-major M x K, B row-major K x N) both ways.

    python scripts/p08/intrinsics.py --compile-only     # no GPU: compile for sm_90a, show the instructions
    python scripts/p08/intrinsics.py --json out.json    # on a GPU: check at 4096^3, time against matmul_tuned and torch
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("TILELANG_PRINT_ON_COMPILATION", "0")
ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a file: grader/ and solutions/ live at the repository root
    sys.path.insert(0, str(ROOT))

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402
from tilelang.layout import make_swizzled_layout, make_wgmma_swizzled_layout  # noqa: E402
from tilelang.utils.language import to_buffer_region  # noqa: E402

MMA_K = 16  # fp16 mma.sync is m16n8k16, and a wgmma step also takes 16 values of K


@tilelang.jit
def matmul_mma_sync(
    A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, WARPS_M: int = 2, WARPS_N: int = 4, STAGES: int = 4, PANEL: int = 10
):
    """Each of the WARPS_M x WARPS_N warps owns a (BLOCK_M / WARPS_M) x (BLOCK_N / WARPS_N) piece of the
    output tile; per 16-wide slice of K it loads its A and B pieces with ldmatrix and issues mma.sync."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)

    emitter = T.TensorCoreIntrinEmitter(
        a_dtype=T.float16,
        b_dtype=T.float16,
        accum_dtype=T.float32,
        a_transposed=False,
        b_transposed=False,  # B is K x N: ldmatrix loads it with .trans
        block_row_warps=WARPS_M,
        block_col_warps=WARPS_N,
        warp_row_tiles=BLOCK_M // WARPS_M,
        warp_col_tiles=BLOCK_N // WARPS_N,
        chunk=BLOCK_K,
    )
    # per thread: its share of one warp's A and B pieces for a K slice, and of the warp's output piece
    a_regs = emitter.warp_rows * emitter.local_size_a
    b_regs = emitter.warp_cols * emitter.local_size_b
    c_regs = emitter.warp_rows * emitter.warp_cols * emitter.local_size_out

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=32 * WARPS_M * WARPS_N) as (bx, by):
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        C_tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        a_frag = T.alloc_local((a_regs,), T.float16)
        b_frag = T.alloc_local((b_regs,), T.float16)
        acc = T.alloc_local((c_regs,), T.float32)
        acc_half = T.alloc_local((c_regs,), T.float16)
        # the layout T.gemm would pick: ldmatrix reads 8 rows of 16 bytes at once, so the rows' pieces are
        # permuted to fall in different banks
        T.annotate_layout({A_tile: make_swizzled_layout(A_tile), B_tile: make_swizzled_layout(B_tile)})
        T.use_swizzle(panel_size=PANEL)  # as matmul_tuned: neighbouring blocks share their A and B tiles in L2

        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)
            for kk in T.unroll(BLOCK_K // MMA_K):
                emitter.ldmatrix_a(a_frag, A_tile, kk)  # this warp's rows of A, 16 x 16 per ldmatrix.x4
                emitter.ldmatrix_b(b_frag, B_tile, kk)  # its columns of B, 16 x 16 per ldmatrix.x4.trans
                # one mma.sync pair (two m16n8k16) per 16 x 16 piece of the warp's output; unrolled, so that
                # the accumulator's indices are constants and it stays in registers
                for i in T.unroll(emitter.mma_num_inst_m):
                    for j in T.unroll(emitter.mma_num_inst_n):
                        emitter.mma_atom(a_frag, b_frag, acc, i, j, kk)

        for i in T.unroll(c_regs):
            acc_half[i] = T.cast(acc[i], T.float16)
        emitter.stmatrix(acc_half, C_tile)  # each thread writes its accumulator values where they belong
        T.copy(C_tile, C[by * BLOCK_M, bx * BLOCK_N])

    return C


@tilelang.jit
def matmul_wgmma(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, WARPGROUPS: int = 2, STAGES: int = 4, PANEL: int = 10):
    """Hopper: the block's WARPGROUPS warpgroups (4 warps, 128 threads each) split the output tile by columns;
    each multiplies the whole A tile by its columns of the B tile with wgmma, both read from shared memory
    through descriptors, 64 rows per instruction."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)

    emitter = T.WGMMATensorCoreIntrinEmitter(
        a_dtype=T.float16,
        b_dtype=T.float16,
        accum_dtype=T.float32,
        a_transposed=False,
        b_transposed=False,  # B is K x N: wgmma reads it N-major (the descriptor's transpose bit)
        block_row_warps=4,  # a warpgroup's 4 warps stack along M: 16 rows each, 64 per wgmma
        block_col_warps=WARPGROUPS,
        warp_row_tiles=BLOCK_M // 4,
        warp_col_tiles=BLOCK_N // WARPGROUPS,
        chunk=BLOCK_K,
    )

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=128 * WARPGROUPS) as (bx, by):
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        C_tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        # wgmma reads shared memory itself, through a descriptor that names the swizzle it was written with
        a_layout = make_wgmma_swizzled_layout(A_tile, continuity=BLOCK_K, k_major=True)
        b_layout = make_wgmma_swizzled_layout(B_tile, continuity=emitter.wgmma_inst_n, k_major=False)
        # the emitter builds the descriptors from these layouts (it returns itself: nothing to keep)
        _ = emitter._assign_a_shared_layout(a_layout)._assign_b_shared_layout(b_layout)
        T.annotate_layout({A_tile: a_layout, B_tile: b_layout, acc: emitter.make_mma_store_layout(acc)})
        T.use_swizzle(panel_size=PANEL)

        for k in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)
            # fence, arrive, the wgmma atoms, commit, wait. The first K step overwrites the accumulator
            # (wgmma's scale-d = 0) instead of a T.clear before the loop: under warp specialization TileLang
            # 0.1.15 guards that clear to the first consumer warpgroup only.
            emitter.wgmma(to_buffer_region(A_tile), to_buffer_region(B_tile), to_buffer_region(acc), clear_accum=k == 0)

        T.copy(acc, C_tile)
        T.copy(C_tile, C[by * BLOCK_M, bx * BLOCK_N])

    return C


# ------------------------------------------------------------------------------ the variants

SIZE = 4096  # the bench case of matmul_tuned: M = N = K
# matmul_tuned's bench block (tile, stages, rasterization panel), so that each variant differs from it only in
# how the tile is multiplied: T.gemm (wgmma, TileLang's own warp split) against each emitter written out
TUNED_BLOCK = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "STAGES": 4, "PANEL": 10}


@dataclass(frozen=True)
class Variant:
    name: str
    function: Any
    params: dict[str, int]
    expected: tuple[str, ...]  # each must appear in the generated CUDA
    absent: tuple[str, ...]  # none may: the other Tensor Core path

    def sizes(self, size: int = SIZE) -> dict[str, int]:
        return {"M": size, "N": size, "K": size, **self.params}


MMA_SYNC_MARKS = ("tl::ptx_ldmatrix_x4(", "tl::ptx_ldmatrix_x4_trans(", "tl::mma_sync<")
WGMMA_MARKS = ("tl::initialize_wgmma_descriptor<", "tl::warpgroup_arrive()", "tl::wgmma_ss<", "tl::warpgroup_wait<")

VARIANTS = (
    # 8 warps as 2 x 4, each owning a 64 x 64 piece of the 128 x 256 tile
    Variant(
        "matmul_mma_sync", matmul_mma_sync, {**TUNED_BLOCK, "WARPS_M": 2, "WARPS_N": 4}, MMA_SYNC_MARKS, ("wgmma",)
    ),
    # 2 warpgroups, each owning 128 of the 256 columns: T.gemm's own split for this tile
    Variant("matmul_wgmma", matmul_wgmma, {**TUNED_BLOCK, "WARPGROUPS": 2}, WGMMA_MARKS, ("mma_sync", "ldmatrix")),
)


# ------------------------------------------------------------------------------ without a GPU


def generated_source(variant: Variant, arch: str = "sm_90a", size: int = SIZE) -> str:
    """The CUDA source TileLang generates for ``variant`` on ``arch``; needs neither a GPU nor nvcc."""
    from tilelang import tvm

    tir = variant.function.get_tir(**variant.sizes(size))
    target = tvm.target.Target({"kind": "cuda", "arch": arch})
    with target, tvm.transform.PassContext(opt_level=3):
        return tilelang.lower(tir, target=target).kernel_source


def instruction_lines(source: str, marks: tuple[str, ...], width: int = 150) -> list[str]:
    """The source lines that hold one of ``marks``, stripped and cut to ``width`` characters, each once."""
    lines: list[str] = []
    for line in source.splitlines():
        text = line.strip()
        if any(mark in text for mark in marks) and text[:width] not in lines:
            lines.append(text[:width])
    return lines


def missing_marks(variant: Variant, source: str) -> list[str]:
    """What is wrong with ``source`` for this variant: expected instructions absent, the other path present."""
    problems = [f"no {mark}" for mark in variant.expected if mark not in source]
    return problems + [f"unexpected {mark}" for mark in variant.absent if mark in source]


PTX_OPCODES = ("ldmatrix.", "mma.sync.", "wgmma.")


def ptx_opcodes(source: str) -> dict[str, int]:
    """The Tensor Core and ldmatrix opcodes in the PTX nvcc makes of ``source`` for sm_90a, with how often
    each appears in the text (an unrolled loop counts once per copy). Needs nvcc, not a GPU."""
    from grader.pipeline.profile import ptxas

    counts: dict[str, int] = {}
    for line in ptxas.nvcc(source, "sm_90a", "ptx")[1].splitlines():
        words = line.strip().split()
        opcode = words[0] if words else ""
        if opcode.startswith(PTX_OPCODES):
            counts[opcode] = counts.get(opcode, 0) + 1
    return counts


def show_generated(with_ptx: bool = True, width: int = 150) -> int:
    """Compile every variant for sm_90a and print the generated lines that carry its Tensor Core work (and,
    with nvcc, the PTX opcodes they become); the number of variants whose code is not what they were written
    for."""
    failed = 0
    for variant in VARIANTS:
        source = generated_source(variant)
        problems = missing_marks(variant, source)
        failed += bool(problems)
        verdict = "FAILED: " + ", ".join(problems) if problems else "ok"
        print(f"{variant.name} {variant.params}, sm_90a: {verdict}")
        for line in instruction_lines(source, variant.expected, width):
            print("   ", line)
        if with_ptx:
            for opcode, count in ptx_opcodes(source).items():
                print(f"    PTX {opcode} x{count}")
    return failed


# ------------------------------------------------------------------------------ on a GPU


@dataclass
class Row:
    name: str
    params: dict[str, int]
    ok: bool
    error: str  # why it did not run or what compare said
    runs_ms: tuple[float, ...] = ()

    def figures(self, flops: float, torch_median: float | None) -> dict[str, Any]:
        import statistics

        out: dict[str, Any] = {"name": self.name, "params": self.params, "ok": self.ok, "error": self.error}
        if self.runs_ms:
            median = statistics.median(self.runs_ms)
            out.update(
                runs_ms=list(self.runs_ms),
                min_ms=min(self.runs_ms),
                median_ms=median,
                max_ms=max(self.runs_ms),
                tflops=flops / median / 1e9,
            )
            if torch_median:
                out["vs_torch"] = torch_median / median
        return out


def measure(repeats: int) -> dict[str, Any]:
    """Check each variant and matmul_tuned against the reference at SIZE^3 on the course's inputs, then time
    them and torch ``repeats`` times each, in turns (grader.pipeline.timing.repeated_ms)."""
    import torch

    from grader.discover import course_root, load_module, load_puzzle, puzzle_files
    from grader.pipeline import gpu_state
    from grader.pipeline.build import compile_tir
    from grader.pipeline.compare import compare
    from grader.pipeline.inputs import launch, make_inputs, poisoned_outputs, reference_outputs
    from grader.pipeline.timing import INPUT_SETS, repeated_ms
    from grader.pipeline.trace import jit_options, trace_tir
    from grader.spec import Case

    solutions = puzzle_files(course_root() / "solutions")["08"]
    module = load_module(solutions)
    spec = load_puzzle(module).kernel("matmul_tuned")  # same inputs, output, reference and tolerance
    bench = spec.case(f"large_{SIZE}")
    contenders = [("matmul_tuned", module.matmul_tuned, dict(bench.params), solutions)]
    contenders += [(v.name, v.function, v.params, Path(__file__)) for v in VARIANTS]

    rows: list[Row] = []
    calls: dict[str, Any] = {}
    for name, function, params, source in contenders:
        case = Case(bench.name, bench.sizes, params, bench.seed, bench=True)
        try:
            tir = trace_tir(function, spec, case, source)
            compiled = compile_tir(tir, "cuda", source, spec, jit_options(function))  # as the grader builds it
        except Exception as error:  # one variant that does not build must not end the run
            rows.append(Row(name, params, False, f"build failed: {str(error).splitlines()[0][:200]}"))
            continue
        inputs, outputs = make_inputs(spec, case, "cuda"), poisoned_outputs(spec, case, "cuda")
        try:
            launch(compiled, inputs, outputs)
        except Exception as error:  # e.g. a GPU with less shared memory per block than the H200's
            rows.append(Row(name, params, False, f"did not run: {str(error).splitlines()[0][:200]}"))
            continue
        verdicts = [
            compare(t.name, got, want.to(got.device), spec.tolerance_for(t.dtype))
            for t, got, want in zip(spec.outputs, outputs, reference_outputs(spec, inputs))
        ]
        ok = all(v.ok for v in verdicts)
        rows.append(Row(name, params, ok, "" if ok else "; ".join(str(v) for v in verdicts)[:300]))
        sets = [make_inputs(spec, case, "cuda", 1000 * (i + 1)) for i in range(INPUT_SETS)]
        calls[name] = (lambda args, c=compiled, o=outputs: c(*args, *o), sets)
    torch_sets = [make_inputs(spec, bench, "cuda", 1000 * (i + 1)) for i in range(INPUT_SETS)]
    calls["torch"] = (lambda args: spec.baseline(*args), torch_sets)
    timed = repeated_ms(calls, repeats)
    rows.append(Row("torch", {}, True, ""))
    for row in rows:
        if row.name in timed:
            row.runs_ms = timed[row.name].runs
    flops = spec.flops(bench.sizes)
    torch_median = timed["torch"].median
    return {
        "date": datetime.date.today().isoformat(),
        "device": torch.cuda.get_device_name(),
        "size": SIZE,
        "repeats": repeats,
        "gpu": gpu_state.current(torch).to_dict(),  # clocks, power and temperature at the end
        "tilelang": tilelang.__version__,
        "torch_version": torch.__version__,
        "rows": [row.figures(flops, torch_median) for row in rows],
    }


def print_figures(figures: dict[str, Any]) -> None:
    print(f"{figures['size']}^3 fp16, {figures['repeats']} repetitions (min / median / max ms)")
    for row in figures["rows"]:
        verdict = "ok " if row["ok"] else "BAD"
        if "median_ms" not in row:
            print(f"{row['name']:16} {verdict} {row['error']}")
            continue
        times = f"{row['min_ms']:.4f} / {row['median_ms']:.4f} / {row['max_ms']:.4f} ms"
        ratio = f"  {row['vs_torch']:.2f}x torch" if "vs_torch" in row else ""
        print(f"{row['name']:16} {verdict} {times}  {row['tflops']:6.1f} TFLOP/s{ratio}  {row['error']}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--compile-only", action="store_true", help="compile for sm_90a on the CPU; no GPU needed")
    parser.add_argument("--no-ptx", action="store_true", help="with --compile-only: skip nvcc (the PTX opcodes)")
    parser.add_argument("--repeats", type=int, default=7, help="timing repetitions per kernel (at least 5)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    logging.getLogger("tilelang").setLevel(logging.ERROR)
    if args.compile_only:
        return 1 if show_generated(with_ptx=not args.no_ptx) else 0

    import torch

    if not torch.cuda.is_available():
        print("no CUDA GPU here: run with --compile-only, or on the GPU machine")
        return 2
    figures = measure(max(5, args.repeats))
    print_figures(figures)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if all(row["ok"] for row in figures["rows"]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
