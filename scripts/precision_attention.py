"""How much of the fp16 bound does flash attention's arithmetic use, and which tolerance tells right
from wrong? (issue 40; the figures of docs/results/attention-precision.md)

Emulates puzzle 07's ``flash_attention`` on the CPU with torch, key tile by key tile as the kernel runs
(fp32 scores of fp16 inputs, ``exp2`` with the scale folded in, the running max, sum and accumulator
rescaled per tile), in four variants: all in fp32 (the course's kernel), P rounded to fp16 before P @ V
(right: the Tensor Core kernels of 08 must do it), the accumulator rounded to fp16 after every key, and
the row sum rounded to fp16 after every tile (both wrong). For each size it prints the worst element's
error over what the tolerance allows it (``atol * rms(ref) + rtol * |ref|``, rtol 2e-3) at the default
atol 1e-3 and at the attention atol 3e-3: the worst of 3 seeds for the right variants, the luckiest for
the wrong ones. Above 1.00 a case fails.

    python scripts/precision_attention.py        # about 30 s on 2 cores
"""

from __future__ import annotations

import math

import torch

ATOLS = (1e-3, 3e-3)
RTOL = 2e-3
SEEDS = 3
# (M, N, D, BLOCK_N): 07's cases (large_logits_70x150 without its x100 scale), then two more key counts
SIZES = [
    (50, 37, 64, 64),
    (40, 70, 32, 16),
    (70, 150, 64, 64),
    (128, 128, 64, 64),
    (1000, 1000, 64, 64),
    (127, 4099, 64, 64),
    (16384, 4096, 64, 64),
]
VARIANTS = {"fp32": {}, "fp16 P": {"p16": True}, "fp16 acc": {"acc16": True}, "fp16 sum": {"sum16": True}}
WRONG = ("fp16 acc", "fp16 sum")
ACC16_ROWS = 1024  # the per-key fp16 accumulator is slow to emulate: its worst element over these rows


def flash(q, k, v, block_n: int, p16=False, acc16=False, sum16=False) -> torch.Tensor:
    m, d = q.shape
    scale = math.log2(math.e) / math.sqrt(d)
    acc, row_sum, row_max = torch.zeros(m, d), torch.zeros(m), torch.full((m,), -math.inf)
    for j in range(0, k.shape[0], block_n):
        s = q.float() @ k[j : j + block_n].float().T
        prev, row_max = row_max, torch.maximum(row_max, s.amax(1))
        correction = torch.exp2(prev * scale - row_max * scale)
        p = torch.exp2(s * scale - row_max[:, None] * scale)
        row_sum = row_sum * correction + p.sum(1)
        if sum16:
            row_sum = row_sum.half().float()
        if p16:
            p = p.half().float()
        acc = acc * correction[:, None]
        tile = v[j : j + block_n].float()
        if acc16:
            acc = acc.half().float()
            for c in range(p.shape[1]):
                acc = (acc + p[:, c : c + 1] * tile[c]).half().float()
        else:
            acc = acc + p @ tile
    return (acc / row_sum[:, None]).half()


def ratios(got: torch.Tensor, want: torch.Tensor, rms: torch.Tensor) -> list[float]:
    err = (got.double() - want).abs()
    return [float((err / (atol * rms + RTOL * want.abs())).max()) for atol in ATOLS]


def main() -> None:
    torch.set_num_threads(2)
    print("worst error / tolerance at atol " + " and ".join(f"{a:g}" for a in ATOLS))
    print(f"{'M x N x D':>16} {'BLOCK_N':>7}  " + "  ".join(f"{name:>13}" for name in VARIANTS))
    for m, n, d, block_n in SIZES:
        worst = {name: None for name in VARIANTS}
        for seed in range(SEEDS):
            g = torch.Generator().manual_seed(seed)
            q, k, v = (torch.randn(rows, d, generator=g).half() for rows in (m, n, n))
            want = torch.softmax(q.double() @ k.double().T / math.sqrt(d), -1) @ v.double()
            rms = want.pow(2).mean().sqrt()
            for name, options in VARIANTS.items():
                rows = ACC16_ROWS if options.get("acc16") else m
                r = ratios(flash(q[:rows], k, v, block_n, **options), want[:rows], rms)
                pick = min if name in WRONG else max
                worst[name] = r if worst[name] is None else [pick(a, b) for a, b in zip(worst[name], r)]
        cells = "  ".join(f"{w[0]:6.2f}/{w[1]:6.2f}" for w in worst.values())
        print(f"{f'{m}x{n}x{d}':>16} {block_n:>7}  {cells}", flush=True)


if __name__ == "__main__":
    main()
