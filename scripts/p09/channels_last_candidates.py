"""Puzzle 09's conv1d_channels_last against variants, at its bench case on the GPU (issue 39: >= 1.0x cuDNN).

    python scripts/p09/channels_last_candidates.py [--rounds 3] [--out DIR]

The bench case is C_in = C_out = 256, L = 131072, K = 5: a GEMM of M = L, N = C_out and a reduction 1280
deep, 20 steps of 64 channels per output tile. So short a reduction makes each tile's epilogue a large share
of its time, and the grid (L tiles fastest) walks all of X once per C_out tile. The variants each change one of
those: a store staged through shared memory (as matmul_tuned's), the C_out tiles of one window launched
together, and a 128 x 256 tile (all of C_out, two math warpgroups). Every round times the kernels and cuDNN
(the bench's baseline) taking turns, median of five repetitions over three input sets, as --bench does.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import tilelang
import tilelang.language as T
from tilelang.layout import make_swizzled_layout

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SIZES = {"C_in": 256, "L": 1 << 17, "C_out": 256, "K": 5}


@tilelang.jit
def channels_last_staged(X, W, BLOCK_O: int, BLOCK_L: int, BLOCK_C: int, STAGES: int = 2, THREADS: int = 128,
                         OUT_FASTEST: int = 0, SWIZZLED_OUT: int = 0):  # fmt: skip
    """The reference, but the output tile goes through shared memory (one TMA store), and with OUT_FASTEST
    the grid's first axis is the C_out tile, so that the blocks sharing a window of X run side by side. With
    SWIZZLED_OUT the output tile's layout is swizzled: the plain one, rows of 512 bytes, puts the 16-byte rows
    that stmatrix writes at once in the same four banks (8-way, python -m grader 09 --profile --static)."""
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((L, C_in), T.float16)
    W: T.Tensor((C_out, K, C_in), T.float16)
    Y = T.empty((L, C_out), T.float16)

    tiles = (T.ceildiv(L, BLOCK_L), T.ceildiv(C_out, BLOCK_O))
    grid = tiles[::-1] if OUT_FASTEST else tiles
    with T.Kernel(*grid, threads=THREADS) as (b0, b1):
        bx, by = (b1, b0) if OUT_FASTEST else (b0, b1)
        P = (K - 1) // 2
        STEPS = T.ceildiv(C_in, BLOCK_C)
        window = T.alloc_shared((BLOCK_L, BLOCK_C), T.float16)
        w_tap = T.alloc_shared((BLOCK_O, BLOCK_C), T.float16)
        Y_tile = T.alloc_shared((BLOCK_L, BLOCK_O), T.float16)
        acc = T.alloc_fragment((BLOCK_L, BLOCK_O), T.float32)
        if SWIZZLED_OUT:
            T.annotate_layout({Y_tile: make_swizzled_layout(Y_tile)})
        T.clear(acc)
        for s in T.Pipelined(K * STEPS, num_stages=STAGES):
            k = s // STEPS
            c0 = s % STEPS * BLOCK_C
            T.copy(X[bx * BLOCK_L + k - P, c0], window)
            T.copy(W[by * BLOCK_O : (by + 1) * BLOCK_O, k, c0 : c0 + BLOCK_C], w_tap)
            T.gemm(window, w_tap, acc, transpose_B=True)
        T.copy(acc, Y_tile)
        T.copy(Y_tile, Y[bx * BLOCK_L, by * BLOCK_O])

    return Y


def configs():
    """name -> (function, params, warp specialization on). The course's kernel turns it off (its decorator);
    tilelang.compile of a bare TIR leaves it on, so each variant says which it is."""
    from solutions.p09_conv1d import conv1d_channels_last

    bench = {"BLOCK_O": 128, "BLOCK_L": 128, "BLOCK_C": 64, "STAGES": 3, "THREADS": 128}
    wide = {**bench, "BLOCK_O": 256, "THREADS": 256}
    return {
        "course build (bench block)": (conv1d_channels_last, bench, False),
        "course build 128x256/256": (conv1d_channels_last, wide, False),
        "course build 128x256/256 4 stages": (conv1d_channels_last, {**wide, "STAGES": 4}, False),
        "staged 128x256/256": (channels_last_staged, wide, False),
        "reference, ws 128x256/256": (conv1d_channels_last, wide, True),
        "staged, ws 128x256/256": (channels_last_staged, wide, True),
        "staged, ws 128x256/256 4 stages": (channels_last_staged, {**wide, "STAGES": 4}, True),
        "staged, ws 128x256/256 C128 2 stages": (channels_last_staged, {**wide, "BLOCK_C": 128, "STAGES": 2}, True),
        "staged, ws 128x256/256 swizzled out": (channels_last_staged, {**wide, "SWIZZLED_OUT": 1}, True),
        "staged, ws 128x128/256 swizzled out": (
            channels_last_staged,
            {**bench, "THREADS": 256, "SWIZZLED_OUT": 1},
            True,
        ),
    }


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "/tmp")))
    args = p.parse_args()
    import torch

    from grader.pipeline.timing import repeated_ms
    from solutions.p09_conv1d import conv1d_channels_last_reference, torch_conv1d_channels_last

    gen = torch.Generator(device="cuda").manual_seed(9507)
    s = SIZES
    sets = [
        [
            torch.randn(s["L"], s["C_in"], device="cuda", dtype=torch.float16, generator=gen),
            (torch.randn(s["C_out"], s["K"], s["C_in"], device="cuda", generator=gen) / 36).half(),
        ]
        for _ in range(3)
    ]
    flops = 2.0 * s["C_out"] * s["C_in"] * s["K"] * s["L"]
    expected = conv1d_channels_last_reference(sets[0][0].float(), sets[0][1].float())
    runners = {"cuDNN (torch, channels-last)": lambda a: torch_conv1d_channels_last(*a)}
    errors = {}
    for name, (function, params, warp_specialized) in configs().items():
        off = {} if warp_specialized else {tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True}
        try:
            kernel = tilelang.compile(function.get_tir(**s, **params), pass_configs=off)
        except Exception as exc:  # a variant that does not build is a result, not a stop
            print(f"{name:36} does not build: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
            continue
        err = (kernel(*sets[0]).float() - expected).abs().max().item()
        errors[name] = err
        print(f"{name:36} max error {err:.4f}", flush=True)
        runners[name] = lambda a, k=kernel: k(*a)
    rounds = []
    for r in range(args.rounds):
        timed = repeated_ms({name: (run, sets) for name, run in runners.items()}, 5)
        base = timed["cuDNN (torch, channels-last)"].median
        row = {}
        print(f"round {r + 1}", flush=True)
        for name, t in timed.items():
            row[name] = {"runs_ms": list(t.runs), "tflops": flops / t.median / 1e9, "vs_cudnn": base / t.median}
            spread = f"({t.low:.4f}-{t.high:.4f})"
            rate = f"{flops / t.median / 1e9:6.1f} TFLOP/s {base / t.median:5.2f}x cuDNN"
            print(f"  {name:36} {t.median:.4f} ms {spread} {rate}")
        rounds.append(row)
    (args.out / "channels_last_candidates.json").write_text(
        json.dumps({"device": torch.cuda.get_device_name(), "errors": errors, "rounds": rounds}, indent=1)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
