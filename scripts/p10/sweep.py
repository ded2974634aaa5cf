"""Time puzzle 10's decode candidates on the GPU: python scripts/p10/sweep.py [--tokens 1] [--out DIR]

--tokens 16 (the default) times the Tensor-Core candidates at the 16-token decode case; --tokens 1 the one-token
case (issue 39's target, decode_1x8192x8192_g128), where the CUDA-core GEMV candidates join them.

Each configuration is compiled first in its own process (all at once, into TileLang's disk cache),
then timed here as grader/pipeline/bench.py times (median of CUDA events over three rotated input sets),
checked against the fp16 reference, and set beside torch's fp16 matmul on unquantized weights and
the bandwidth floor (the bytes at the measured copy bandwidth).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TOKENS = int(os.environ.get("P10_SWEEP_TOKENS", "16"))  # set from --tokens before the compiles fork
SIZES = {"M": TOKENS, "N": 8192, "K": 8192, "NG": 64}
BASE = {"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 128, "STAGES": 4, "THREADS": 128}
# G = 128 in the bench case, and a K tile must lie inside one group: BLOCK_K is at most 128.
CONFIGS = [
    ("reference", {**BASE}),
    ("decode_ws", {**BASE, "MAGIC": 1}),
    ("decode_wa", {**BASE}),  # puzzle 10's dequant_matmul_decode
    ("decode_wa", {**BASE, "STAGES": 6}),
    ("decode_wq", {**BASE}),
    ("decode_wq", {**BASE, "STAGES": 6}),
    ("decode_wq", {**BASE, "BLOCK_K": 64, "STAGES": 8}),
    ("decode_wq", {**BASE, "THREADS": 256}),
    ("decode_wq", {**BASE, "BLOCK_N": 128, "THREADS": 256}),
]
# (BLOCK_N, BLOCK_K, THREADS) of the GEMV candidates: 2-32 rows a block, 0.5-2 KiB of packed bytes a row a step
GEMV = ((8, 1024, 128), (16, 512, 128), (4, 2048, 128), (4, 1024, 128), (8, 512, 64), (4, 1024, 64), (16, 1024, 256))
DOT8 = ((8, 1024, 128), (16, 1024, 128), (8, 2048, 128), (4, 4096, 128), (16, 512, 64), (8, 1024, 64), (32, 1024, 256))
UNROLLED = ((8, 1024), (4, 1024), (8, 2048), (16, 512), (4, 2048))  # dot8 with its K loop unrolled
CP_ASYNC = ((8, 1024, 3), (8, 1024, 4), (4, 2048, 4), (16, 512, 4))  # staged by cp.async instead of TMA
ONE_TOKEN = [
    ("decode_wa", {**BASE}),  # the rung at one token: 15 of its 16 MMA rows are padding
    *(("decode_gemv", {"BLOCK_N": n, "BLOCK_K": k, "THREADS": t}) for n, k, t in GEMV),
    ("decode_gemv", {"BLOCK_N": 8, "BLOCK_K": 1024, "THREADS": 128, "FP32_MAGIC": 0}),
    ("decode_gemv_group", {"BLOCK_N": 32, "BLOCK_K": 128, "THREADS": 128}),
    *(("decode_gemv_dot8", {"BLOCK_N": n, "BLOCK_K": k, "THREADS": t}) for n, k, t in DOT8),
    ("decode_gemv_pipelined", {"BLOCK_N": 8, "BLOCK_K": 1024, "STAGES": 3, "THREADS": 128}),
    ("decode_gemv_pipelined", {"BLOCK_N": 8, "BLOCK_K": 1024, "STAGES": 4, "THREADS": 128}),
    ("decode_gemv_pipelined", {"BLOCK_N": 16, "BLOCK_K": 512, "STAGES": 3, "THREADS": 128}),
    *(("decode_gemv_dot8", {"BLOCK_N": n, "BLOCK_K": k, "THREADS": 128, "UNROLL": 1}) for n, k in UNROLLED),
    *(("decode_gemv_pipelined", {"BLOCK_N": n, "BLOCK_K": k, "STAGES": st, "TMA": 0}) for n, k, st in CP_ASYNC),
]
if TOKENS == 1:
    CONFIGS = ONE_TOKEN


def function(name):
    if name == "reference":
        from solutions.p10_dequant_matmul import dequant_matmul

        return dequant_matmul
    from scripts.p10 import candidates

    return getattr(candidates, name)


def compile_one(index: int) -> None:
    import tilelang

    name, params = CONFIGS[index]
    tilelang.compile(function(name).get_tir(**SIZES, **params))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "/tmp")))
    p.add_argument("--compile-one", type=int)
    p.add_argument("--tokens", type=int, choices=(1, 16), default=TOKENS)
    args = p.parse_args()
    if args.tokens != TOKENS:  # the configurations are chosen at import: start again with the env set
        os.environ["P10_SWEEP_TOKENS"] = str(args.tokens)
        os.execv(sys.executable, [sys.executable, __file__, *sys.argv[1:]])
    if args.compile_one is not None:
        compile_one(args.compile_one)
        return 0
    with ThreadPoolExecutor(8) as pool:  # each compile in its own process: the disk cache is shared
        codes = list(
            pool.map(
                lambda i: subprocess.run(
                    [sys.executable, __file__, "--compile-one", str(i)], capture_output=True, text=True
                ),
                range(len(CONFIGS)),
            )
        )
    import tilelang
    import torch

    from grader.pipeline import roofline
    from grader.pipeline.timing import median_ms
    from solutions.p10_dequant_matmul import dequant_matmul_reference, torch_dequantize

    limits = roofline.measure(torch, torch.cuda.get_device_name())
    gen = torch.Generator(device="cuda").manual_seed(10205)
    sets = []
    for _ in range(3):
        A = torch.randn(TOKENS, 8192, device="cuda", dtype=torch.float16, generator=gen)
        B = torch.randint(0, 256, (8192, 4096), device="cuda", dtype=torch.uint8, generator=gen)
        S = (0.5 + torch.rand(8192, 64, device="cuda", generator=gen)).to(torch.float16)
        sets.append([A, B, S])
    moved = sum(t.numel() * t.element_size() for t in sets[0]) + TOKENS * 8192 * 2
    floor_ms = moved / limits.copy_gbps / 1e6
    weights = [[A, torch_dequantize(B, S)] for A, B, S in sets]
    fp16_ms = median_ms(lambda a: a[0] @ a[1].T, weights)
    unpack_ms = median_ms(lambda a: a[0] @ torch_dequantize(a[1], a[2]).T, sets)
    expected = dequant_matmul_reference(*(t.double() if t.dtype == torch.float16 else t for t in sets[0])).half()
    rows = []
    print(limits.describe())
    print(
        f"floor {floor_ms * 1e3:.1f} us; torch fp16 on unquantized W {fp16_ms * 1e3:.1f} us; "
        f"unpack+matmul {unpack_ms * 1e3:.1f} us"
    )
    print(f"{'kernel':21} {'params':62} {'us':>7} {'GB/s':>6} {'roof':>5} {'vs fp16':>7} {'err':>7}")
    for (name, params), done in zip(CONFIGS, codes):
        row = {"kernel": name, "params": params}
        try:
            kernel = tilelang.compile(function(name).get_tir(**SIZES, **params))
            out = kernel(*sets[0])
            err = (out.float() - expected.float()).abs().max().item()
            ms = median_ms(lambda a, kernel=kernel: kernel(*a), sets)
            row.update(us=ms * 1e3, gbps=moved / ms / 1e6, roofline=100 * floor_ms / ms, vs_fp16=fp16_ms / ms, err=err)
            print(
                f"{name:21} {json.dumps(params):62} {ms * 1e3:7.1f} {moved / ms / 1e6:6.0f} "
                f"{100 * floor_ms / ms:4.0f}% "
                f"{fp16_ms / ms:6.2f}x {err:7.3f}",
                flush=True,
            )
        except Exception as error:  # noqa: BLE001  (a failed candidate is a row, not the end of the sweep)
            row["error"] = f"{error!r}"[:300] + (done.stderr[-300:] if done.returncode else "")
            print(f"{name:21} {json.dumps(params):62} failed: {row['error'][:200]}", flush=True)
        rows.append(row)
    (args.out / f"p10_sweep_m{TOKENS}.json").write_text(
        json.dumps(
            {
                "limits": limits.describe(),
                "floor_us": floor_ms * 1e3,
                "fp16_us": fp16_ms * 1e3,
                "unpack_us": unpack_ms * 1e3,
                "rows": rows,
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
