"""Measure puzzle 08's kernels at several tilings on a GPU, to choose the bench cases' blocks.

python scripts/tune_p08.py            # on a CUDA GPU: correctness + median ms vs torch
python scripts/tune_p08.py --compile  # here, without a GPU: only check every variant compiles
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("TILELANG_PRINT_ON_COMPILATION", "0")

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402

from grader.build import COMPILE_ONLY_TARGET  # noqa: E402
from grader.discover import course_root, load_module  # noqa: E402


@tilelang.jit
def matmul_swizzled(
    A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 128, PANEL: int = 10
):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        C_tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.use_swizzle(panel_size=PANEL)
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)
            T.gemm(A_tile, B_tile, acc)
        T.copy(acc, C_tile)
        T.copy(C_tile, C[by * BLOCK_M, bx * BLOCK_N])
    return C


def variants(p08):
    gemm = []
    for size in (4096, 8192):
        s = {"M": size, "N": size, "K": size}
        for bm, bn, bk, st, th in (
            (128, 128, 32, 3, 128),
            (128, 128, 64, 3, 128),
            (128, 256, 64, 3, 256),
            (256, 128, 64, 3, 256),
            (128, 256, 64, 4, 256),
        ):
            gemm.append(
                ("pipelined", p08.matmul_pipelined, s, dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, STAGES=st, THREADS=th))
            )
        for bm, bn, bk, st, th in ((128, 256, 64, 3, 256), (256, 128, 64, 3, 256), (128, 256, 64, 4, 256)):
            gemm.append(
                ("swizzled", matmul_swizzled, s, dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, STAGES=st, THREADS=th))
            )
        gemm.append(("naive", p08.matmul_naive, s, dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)))
        gemm.append(("naive", p08.matmul_naive, s, dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32)))
    gemv = []
    s = {"M": 8192, "K": 8192}
    for bm, bk, th in ((64, 64, 128), (32, 128, 128), (16, 256, 128), (8, 512, 128), (16, 512, 256), (4, 1024, 128)):
        gemv.append(("gemv", p08.gemv, s, dict(BLOCK_M=bm, BLOCK_K=bk, THREADS=th)))
    return gemm + gemv


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--compile", action="store_true", help="compile for sm_90a only")
    args = parser.parse_args()
    p08 = load_module(course_root() / "solutions" / "p08_matrix.py")
    if args.compile:
        for name, fn, sizes, params in variants(p08):
            tilelang.compile(fn.get_tir(**sizes, **params).without_attr("tilelang_out_idx"), target=COMPILE_ONLY_TARGET)
            print("compiled", name, sizes, params, flush=True)
        return
    import torch

    from grader.bench import median_ms

    print(
        f"{'variant':10} {'size':>6} {'params':58} {'ms':>8} {'TFLOP/s':>8} {'GB/s':>7} "
        f"{'torch':>8} {'ratio':>6} {'err':>8}"
    )
    for name, fn, sizes, params in variants(p08):
        try:
            kernel = tilelang.compile(fn.get_tir(**sizes, **params).without_attr("tilelang_out_idx"), target="cuda")
        except Exception as error:  # report and go on: one bad tiling must not end the sweep
            print(f"{name:10} {sizes['M']:6} {str(params):58} compile failed: {str(error).splitlines()[-1][:80]}")
            continue
        gen = torch.Generator(device="cuda").manual_seed(1)
        sets = []
        for _ in range(3):
            a = torch.randn(sizes["M"], sizes["K"], device="cuda", generator=gen).half()
            b = torch.randn(
                *((sizes["K"], sizes["N"]) if "N" in sizes else (sizes["K"],)), device="cuda", generator=gen
            ).half()
            sets.append([a, b])
        out_shape = (sizes["M"], sizes["N"]) if "N" in sizes else (sizes["M"],)
        out = torch.full(out_shape, float("nan"), device="cuda", dtype=torch.float16)
        kernel(*sets[0], out)
        ref = sets[0][0].double() @ sets[0][1].double()
        err = ((out.double() - ref).abs().max() / ref.abs().max()).item()
        ours = median_ms(lambda s, k=kernel, o=out: k(*s, o), sets)
        theirs = median_ms(lambda s: s[0] @ s[1], sets)
        flops = 2.0 * sizes["M"] * sizes["K"] * sizes.get("N", 1)
        nbytes = 2.0 * (sizes["M"] * sizes["K"] + sizes["K"] * sizes.get("N", 1) + sizes["M"] * sizes.get("N", 1))
        print(
            f"{name:10} {sizes['M']:6} {str(params):58} {ours:8.4f} {flops / ours / 1e9:8.1f} "
            f"{nbytes / ours / 1e6:7.0f} "
            f"{theirs:8.4f} {theirs / ours:6.2f} {err:8.1e}",
            flush=True,
        )


if __name__ == "__main__":
    main()
